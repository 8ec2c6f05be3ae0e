/* The dispatch tables against the documents that list them again, so that neither drifts:
 * the messages a task's server answers (runtime/messages.h) against net/PROTOCOL.md's
 * "Message index" (name, service, thread, summary) and the lists atop runtime/master.c and
 * runtime/worker.c; tfsh's subcommands (shell/app/cmd.h) against man/tfsh.1's SYNOPSIS.
 * The documents are read as they stand (TFSH_SRC: the source tree) rather than generated
 * from the tables: a generator would be one more program to run and keep in step, while
 * this checks the same agreement and leaves each list beside its hand-written prose. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/messages.h"
#include "shell/app/cmd.h"

#define MAX_NAMES 64
#define NAME_MAX_LEN 64

typedef struct names {
  int n;
  char at[MAX_NAMES][NAME_MAX_LEN];
} names;

static void add_name(names *l, const char *p, size_t len) {
  assert_true(l->n < MAX_NAMES && len < NAME_MAX_LEN);
  snprintf(l->at[l->n++], NAME_MAX_LEN, "%.*s", (int)len, p);
}

/* A file of the source tree, NUL-terminated, malloc'd. */
static char *read_src(const char *rel) {
  const char *src = getenv("TFSH_SRC");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", src ? src : ".", rel);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s (set TFSH_SRC to the source tree)", path);
  char *text = sh_cmd_read_all(f);
  fclose(f);
  return text;
}

static int count_rows(const rt_message *t) {
  int n = 0;
  while (t[n].name) n++;
  return n;
}

static const rt_message *find_row(const rt_message *t, const char *name) {
  for (; t->name; t++)
    if (!strcmp(t->name, name)) return t;
  return NULL;
}

/* What doc lists against a table's names: every name listed is a row, every row is
 * listed, once each when once. */
static void same_names(const char *doc, const names *listed, const char *const *rows, int n_rows, bool once) {
  for (int i = 0; i < listed->n; i++) {
    int r = 0;
    while (r < n_rows && strcmp(rows[r], listed->at[i])) r++;
    if (r == n_rows) fail_msg("%s lists '%s', which the table has no row for", doc, listed->at[i]);
  }
  for (int r = 0; r < n_rows; r++) {
    int seen = 0;
    for (int i = 0; i < listed->n; i++) seen += !strcmp(rows[r], listed->at[i]);
    if (!seen) fail_msg("%s does not list '%s', a row of the table", doc, rows[r]);
    if (once && seen > 1) fail_msg("%s lists '%s' %d times", doc, rows[r], seen);
  }
}

static void same_messages(const char *doc, const names *listed, const rt_message *t) {
  const char *rows[MAX_NAMES];
  int n = count_rows(t);
  assert_true(n <= MAX_NAMES);
  for (int i = 0; i < n; i++) rows[i] = t[i].name;
  same_names(doc, listed, rows, n, true);
}

/* Each row has its own service's handler, a one-line summary that fits a table cell, and
 * a name no other row has; the net server can take every I/O-thread row inline. */
static void test_rows(void **state) {
  (void)state;
  int io = 0;
  const rt_message *tables[] = {rt_master_messages, rt_worker_messages};
  for (int k = 0; k < 2; k++)
    for (const rt_message *r = tables[k]; r->name; r++) {
      if (k == 0 ? !r->master || r->worker : !r->worker || r->master)
        fail_msg("'%s': a row of the %s table needs its handler and no other", r->name, k ? "worker" : "master");
      if (!r->summary || !r->summary[0] || strpbrk(r->summary, "|\n"))
        fail_msg("'%s': its summary is one line without '|'", r->name);
      if (find_row(tables[k], r->name) != r || find_row(tables[1 - k], r->name))
        fail_msg("'%s' has two rows", r->name);
      io += r->io_thread;
    }
  if (io > NET_SERVER_MAX_INLINE)
    fail_msg("%d rows on the I/O thread; net_server_inline takes %d", io, NET_SERVER_MAX_INLINE);
}

/* The rows of the table under heading (before the next heading), past its header row
 * and separator. */
static char *index_rows(char *doc, const char *heading) {
  char *h = strstr(doc, heading);
  if (!h) fail_msg("net/PROTOCOL.md has no '%s'", heading);
  char *p = strstr(h + 1, "\n|"), *next = strstr(h + 1, "\n#");
  if (!p || (next && next < p) || !(p = strchr(p + 1, '\n')) || !(p = strchr(p + 1, '\n')))
    fail_msg("net/PROTOCOL.md: no table under '%s'", heading);
  return p + 1;
}

/* "| `RunStep` | master | handler | one step ... |": its cells, in place (5: more than 4). */
static int split_row(char *line, char *cell[4]) {
  int n = 0;
  char *p = line + 1;
  for (char *bar; (bar = strchr(p, '|')); p = bar + 1, n++) {
    if (n == 4) return 5;
    *bar = '\0';
    while (*p == ' ') p++;
    for (char *e = bar; e > p && e[-1] == ' ';) *--e = '\0';
    cell[n] = p;
  }
  return n;
}

static void test_protocol_index(void **state) {
  (void)state;
  char *doc = read_src("net/PROTOCOL.md");
  names master = {0}, worker = {0};
  char *line = index_rows(doc, "\n### Message index\n");
  for (char *next; *line == '|'; line = next) {
    next = strchr(line, '\n');
    if (!next) fail_msg("net/PROTOCOL.md ends inside the message index");
    *next++ = '\0';
    char *cell[4], row[512];
    snprintf(row, sizeof row, "%s", line);
    size_t len = 0;
    if (split_row(line, cell) != 4 || (len = strlen(cell[0])) < 3 || cell[0][0] != '`' || cell[0][len - 1] != '`' ||
        (strcmp(cell[1], "master") && strcmp(cell[1], "worker")))
      fail_msg("net/PROTOCOL.md's message index: '%s' is not | `NAME` | master or worker | THREAD | SUMMARY |", row);
    bool is_master = !strcmp(cell[1], "master");
    names *l = is_master ? &master : &worker;
    add_name(l, cell[0] + 1, len - 2);
    const char *name = l->at[l->n - 1];
    const rt_message *r = find_row(is_master ? rt_master_messages : rt_worker_messages, name);
    if (!r) continue;   /* same_messages names it */
    const char *thread = r->io_thread ? "I/O" : "handler";
    if (strcmp(cell[2], thread)) fail_msg("%s: net/PROTOCOL.md says thread '%s', its row '%s'", name, cell[2], thread);
    if (strcmp(cell[3], r->summary))
      fail_msg("%s: net/PROTOCOL.md's summary\n  %s\nis not its row's\n  %s", name, cell[3], r->summary);
  }
  same_messages("net/PROTOCOL.md's message index (master)", &master, rt_master_messages);
  same_messages("net/PROTOCOL.md's message index (worker)", &worker, rt_worker_messages);
  free(doc);
}

/* The list in a file's first comment: lines " *   Name {fields} -> {reply}". */
static void test_header_lists(void **state) {
  (void)state;
  struct { const char *file; const rt_message *t; } srcs[] = {
      {"runtime/master.c", rt_master_messages}, {"runtime/worker.c", rt_worker_messages}};
  for (int k = 0; k < 2; k++) {
    char *text = read_src(srcs[k].file);
    char *end = strstr(text, "*/");
    assert_non_null(end);
    *end = '\0';
    names listed = {0};
    for (char *p = strstr(text, "\n *   "); p; p = strstr(p, "\n *   ")) {
      p += 6;
      size_t len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
      if (len && *p >= 'A' && *p <= 'Z') add_name(&listed, p, len);
    }
    char doc[128];
    snprintf(doc, sizeof doc, "the comment atop %s", srcs[k].file);
    same_messages(doc, &listed, srcs[k].t);
    free(text);
  }
}

/* Each subcommand in a SYNOPSIS line ".B tfsh NAME ...", and no other NAME there but
 * options ("\-\-help"). */
static void test_man_synopsis(void **state) {
  (void)state;
  char *man = read_src("man/tfsh.1");
  char *syn = strstr(man, "\n.SH SYNOPSIS\n");
  assert_non_null(syn);
  char *end = strstr(syn + 1, "\n.SH ");
  if (end) *end = '\0';
  names listed = {0};
  for (char *p = strstr(syn, "\n.B tfsh "); p; p = strstr(p, "\n.B tfsh ")) {
    p += 9;
    char word[NAME_MAX_LEN];
    size_t n = 0;
    for (; *p && *p != ' ' && *p != '\n' && n + 1 < sizeof word; p++)
      if (*p != '\\') word[n++] = *p;   /* roff's "\-" is "-" */
    word[n] = '\0';
    if (strncmp(word, "--", 2)) add_name(&listed, word, n);
  }
  const char *rows[MAX_NAMES];
  int n = 0;
  for (const sh_subcommand *c = sh_subcommands; c->name; c++) {
    assert_true(n < MAX_NAMES);
    rows[n++] = c->name;
  }
  same_names("man/tfsh.1's SYNOPSIS", &listed, rows, n, false);
  free(man);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows),
      cmocka_unit_test(test_protocol_index),
      cmocka_unit_test(test_header_lists),
      cmocka_unit_test(test_man_synopsis),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
