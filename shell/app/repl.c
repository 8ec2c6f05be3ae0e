/* The interactive shell on libedit: prompts, multi-line input decided by the parser
 * ("did it fail at end of input?", as Lua's REPL asks), history, Tab completion,
 * `name?` help, magics, and Ctrl-C. */
#define _GNU_SOURCE
#include "base/alloc.h"
#include "base/dl.h"
#include "shell/app/repl.h"
#include <patchlevel.h>

#include <ctype.h>
#include <errno.h>
#include <histedit.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "shell/py/lang.h"

volatile sig_atomic_t sh_interrupted;

static EditLine *el;
static History *hist;

/* libedit, loaded when the REPL starts (base/dl.h): scripts and -c never map it. */
#define EDIT_FNS(X) \
  X(el_init) X(el_end) X(el_set) X(el_gets) X(el_reset) X(el_line) X(el_insertstr) \
  X(el_source) X(history_init) X(history_end) X(history)
static struct {
#define FIELD(f) __typeof__(f) *f;
  EDIT_FNS(FIELD)
#undef FIELD
} L;

static void edit_load(void) {
#define NAME(f) #f,
#define ADDR(f) (void *)&L.f,
  static const char *const names[] = {EDIT_FNS(NAME)};
  void *const slots[] = {EDIT_FNS(ADDR)};
#undef NAME
#undef ADDR
  dl_require(TFSH_EDIT_SONAME, "libedit2", names, slots, sizeof names / sizeof *names);
}
static char hist_path[4096];
static bool continuation, idle;

int sh_repl_idle(void) { return idle; }
static bool running;   /* sh_repl_run has started */
bool sh_repl_running(void) { return running; }

/* ---- magics ------------------------------------------------------------------------------ */
typedef struct magic { char name[32]; sh_magic_fn fn; const char *help; } magic;
static magic magics[64];
static int nmagics;

void sh_magic_register(const char *name, sh_magic_fn fn, const char *help) {
  for (int i = 0; i < nmagics; i++)
    if (!strcmp(magics[i].name, name)) { magics[i].fn = fn; magics[i].help = help; return; }
  if (nmagics == 64) return;
  snprintf(magics[nmagics].name, sizeof magics[nmagics].name, "%s", name);
  magics[nmagics].fn = fn;
  magics[nmagics].help = help;
  nmagics++;
}

static int magic_help(const char *args) {
  printf("Magics (shell commands; the language itself is Python):\n");
  for (int i = 0; i < nmagics; i++) printf("  %%%-12s %s\n", magics[i].name, magics[i].help);
  printf("  name?         signature and help of name (e.g. len?, tf.matmul?)\n"
         "Tab completes names and attributes; Ctrl-C interrupts; Ctrl-D exits.\n");
  return 0;
}

static int magic_who(const char *args) {
  sh_obj *g = sh_main_globals(), *k, *v, *names = sh_list_new(0);
  for (int64_t p = 0; sh_dict_next(g, &p, &k, &v);) {
    const char *n = sh_str_cstr(k);
    if (n[0] == '_' || PyModule_Check(v)) continue;
    sh_list_append(names, k);
  }
  sh_obj *sorted = sh_call_method(names, "sort", 0, NULL, NULL);
  sh_decref(sorted);
  if (SH_LIST_N(names) == 0) printf("Interactive namespace is empty.\n");
  for (int64_t i = 0; i < SH_LIST_N(names); i++)
    printf("%s%s", sh_str_cstr(SH_LIST_ITEMS(names)[i]), i + 1 < SH_LIST_N(names) ? "\t" : "\n");
  sh_decref(names);
  return 0;
}

static int magic_run(const char *args) {
  if (!*args) { sh_raise(sh_TypeError, "usage: %%run FILE [ARGS...]"); return -1; }
  char *copy = xstrdup(args), *save = NULL, *argvv[64];
  int n = 0;
  for (char *t = strtok_r(copy, " \t", &save); t && n < 63; t = strtok_r(NULL, " \t", &save)) argvv[n++] = t;
  sh_sys_set_argv(n, argvv);
  int rc = sh_exec_file(argvv[0], NULL);
  free(copy);
  return rc;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_time(double s) {
  if (s >= 1) printf("%.3g s", s);
  else if (s >= 1e-3) printf("%.3g ms", s * 1e3);
  else if (s >= 1e-6) printf("%.3g us", s * 1e6);
  else printf("%.3g ns", s * 1e9);
}

/* %timeit STMT: loops grow by 10 until a run takes 0.2 s, then the best of 5 runs. */
static int magic_timeit(const char *args) {
  sh_obj *c = sh_compile(args, "<timeit>");
  if (!c) return -1;
  long loops = 1;
  double t = 0;
  for (;;) {
    double t0 = now_s();
    for (long i = 0; i < loops; i++)
      if (sh_run_code(c, sh_main_globals()) < 0) { SH_DECREF(c); return -1; }
    t = now_s() - t0;
    if (t >= 0.2 || loops >= 100000000) break;
    loops *= 10;
  }
  double best = t;
  for (int r = 1; r < 5; r++) {
    double t0 = now_s();
    for (long i = 0; i < loops; i++)
      if (sh_run_code(c, sh_main_globals()) < 0) { SH_DECREF(c); return -1; }
    double d = now_s() - t0;
    if (d < best) best = d;
  }
  SH_DECREF(c);
  printf("%ld loop%s, best of 5: ", loops, loops == 1 ? "" : "s");
  print_time(best / loops);
  printf(" per loop\n");
  return 0;
}

static void builtin_magics(void) {
  sh_magic_register("help", magic_help, "list the magics");
  sh_magic_register("who", magic_who, "names defined in the session");
  sh_magic_register("run", magic_run, "%run FILE [ARGS]: run a script in the session");
  sh_magic_register("timeit", magic_timeit, "%timeit STMT: time a statement");
}

static int run_magic(const char *line) {
  const char *p = line + 1;
  size_t n = strcspn(p, " \t");
  const char *args = p + n;
  while (*args == ' ' || *args == '\t') args++;
  char name[32];
  snprintf(name, sizeof name, "%.*s", (int)n, p);
  for (int i = 0; i < nmagics; i++)
    if (!strcmp(magics[i].name, name)) {
      char *a = xstrdup(args);
      size_t len = strlen(a);
      while (len && isspace((unsigned char)a[len - 1])) a[--len] = 0;
      int rc = magics[i].fn(a);
      free(a);
      fflush(stdout);
      return rc;
    }
  fprintf(stderr, "UsageError: Line magic function `%%%s` not found. Try %%help.\n", name);
  return 0;
}

/* ---- evaluating name chains (completion, name?) ------------------------------------------ */
/* Look up a pure dotted chain "a.b.c" (never calls anything but attribute lookups). */
static sh_obj *lookup_chain(const char *chain, size_t n) {
  char buf[512];
  if (n >= sizeof buf || n == 0) return NULL;
  memcpy(buf, chain, n);
  buf[n] = 0;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)buf[i]) && buf[i] != '_' && buf[i] != '.') return NULL;
  char *save = NULL, *part = strtok_r(buf, ".", &save);
  if (!part || isdigit((unsigned char)part[0])) return NULL;
  sh_obj *o = sh_dict_get_str(sh_main_globals(), part);
  if (!o) o = sh_dict_get_str(sh_builtins_dict(), part);
  if (!o) return NULL;
  sh_incref(o);
  while ((part = strtok_r(NULL, ".", &save))) {
    sh_obj *next = sh_getattr_opt(o, part);
    sh_decref(o);
    if (!next) { sh_err_clear(); return NULL; }
    o = next;
  }
  return o;
}

static bool show_help(const char *line) {
  const char *s = line;
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) n--;
  if (n < 2 || s[n - 1] != '?') return false;
  size_t m = n - 1;
  if (m && s[m - 1] == '?') m--;
  sh_obj *o = lookup_chain(s, m);
  if (!o) {
    bool chain = true;
    for (size_t i = 0; i < m; i++) chain &= isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.';
    if (!chain) return false;
    printf("Object `%.*s` not found.\n", (int)m, s);
    return true;
  }
  char *d = sh_describe(o);
  printf("%s\n", d);
  free(d);
  sh_decref(o);
  return true;
}

/* ---- completion --------------------------------------------------------------------------- */
static const char *const keywords[] = {"and", "as", "assert", "break", "class", "continue",
  "def", "del", "elif", "else", "except", "False", "finally", "for", "from", "global", "if",
  "import", "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return",
  "True", "try", "while", "with", NULL};

static void add_matches(sh_obj *out, sh_obj *names, const char *prefix, size_t plen) {
  sh_obj *it = sh_iter(names), *x;
  if (!it) { sh_err_clear(); return; }
  while ((x = sh_next(it))) {
    if (sh_is_str(x) && !strncmp(sh_str_cstr(x), prefix, plen) &&
        (prefix[0] == '_' || sh_str_cstr(x)[0] != '_'))
      sh_set_add(out, x);
    sh_decref(x);
  }
  sh_decref(it);
  sh_err_clear();
}

static sh_completer_fn completers[16];
static int ncompleters;

void sh_completer_register(sh_completer_fn fn) {
  if (ncompleters < 16) completers[ncompleters++] = fn;
}

static unsigned char offer(EditLine *e, sh_obj *list, size_t wlen);

/* Inside a string literal: after `name[` a mapping's str keys (d['lo<Tab> -> 'loss'), else
 * file names (open('da<Tab>), as Python's glob finds them. True when it was a string. */
static bool complete_in_string(EditLine *e, const LineInfo *li, unsigned char *rc) {
  const char *q = NULL;
  char quote = 0;
  for (const char *p = li->buffer; p < li->cursor; p++)
    if (!quote && (*p == '\'' || *p == '"')) quote = *p, q = p;
    else if (quote && *p == quote) quote = 0;
  if (!quote) return false;
  size_t plen = (size_t)(li->cursor - q - 1);
  char prefix[1024];
  snprintf(prefix, sizeof prefix, "%.*s", (int)plen, q + 1);
  sh_obj *list = NULL;
  const char *chain_end = q > li->buffer && q[-1] == '[' ? q - 1 : NULL;
  if (chain_end) {   /* a mapping's keys */
    const char *cs = chain_end;
    while (cs > li->buffer && (isalnum((unsigned char)cs[-1]) || cs[-1] == '_' || cs[-1] == '.')) cs--;
    sh_obj *o = lookup_chain(cs, (size_t)(chain_end - cs));
    sh_obj *keys = o ? sh_call_method(o, "keys", 0, NULL, NULL) : NULL;
    if (keys) {
      sh_obj *m = sh_set_new();
      add_matches(m, keys, prefix, plen);
      list = sh_sequence_to_list(m);
      sh_decref(m);
    }
    sh_decref(keys);
    sh_decref(o);
  } else {           /* file names: glob(prefix*), directories with a trailing '/' */
    sh_obj *g = sh_dict_new();
    sh_obj *pre = sh_str(prefix);
    if (g && pre && sh_dict_set_str(g, "p", pre) == 0)
      list = sh_eval_string("[f + ('/' if __import__('os').path.isdir(f) else '') for f in "
                            "__import__('glob').glob(__import__('glob').escape(p) + '*')]", "<complete>", g);
    sh_decref(pre);
    sh_decref(g);
  }
  sh_err_clear();
  if (!list) {
    *rc = CC_REFRESH_BEEP;
    return true;
  }
  sh_decref(sh_call_method(list, "sort", 0, NULL, NULL));
  sh_err_clear();
  *rc = offer(e, list, plen);
  sh_decref(list);
  return true;
}

/* Insert the longest common prefix of the candidates, or list them. */
static unsigned char offer(EditLine *e, sh_obj *list, size_t wlen) {
  int64_t n = SH_LIST_N(list);
  if (n == 0) return CC_REFRESH_BEEP;
  const char *first = sh_str_cstr(SH_LIST_ITEMS(list)[0]);
  size_t common = strlen(first);
  for (int64_t i = 1; i < n; i++) {
    const char *s = sh_str_cstr(SH_LIST_ITEMS(list)[i]);
    size_t k = 0;
    while (k < common && s[k] == first[k]) k++;
    common = k;
  }
  if (common > wlen) {
    char ins[256];
    snprintf(ins, sizeof ins, "%.*s", (int)(common - wlen), first + wlen);
    L.el_insertstr(e, ins);
    return CC_REFRESH;
  }
  if (n == 1) return CC_REFRESH;
  fputc('\n', stdout);
  int col = 0;
  for (int64_t i = 0; i < n; i++) {
    const char *s = sh_str_cstr(SH_LIST_ITEMS(list)[i]);
    if (col + (int)strlen(s) + 2 > 80 && col) { fputc('\n', stdout); col = 0; }
    col += printf("%s  ", s);
  }
  fputc('\n', stdout);
  fflush(stdout);
  return CC_REDISPLAY;
}

static unsigned char complete(EditLine *e, int ch) {
  const LineInfo *li = L.el_line(e);
  size_t cursor = li->cursor - li->buffer;
  if (ncompleters) {
    char *line = xstrndup(li->buffer, cursor);
    for (int i = 0; i < ncompleters; i++) {
      size_t ws = cursor;
      sh_obj *cands = completers[i](line, cursor, &ws);
      if (!cands) { sh_err_clear(); continue; }
      sh_obj *list = sh_sequence_to_list(cands);
      sh_decref(cands);
      if (!list) { sh_err_clear(); continue; }
      sh_decref(sh_call_method(list, "sort", 0, NULL, NULL));
      sh_err_clear();
      unsigned char rc = offer(e, list, ws <= cursor ? cursor - ws : 0);
      sh_decref(list);
      free(line);
      return rc;
    }
    free(line);
  }
  unsigned char in_str;
  if (complete_in_string(e, li, &in_str)) return in_str;
  const char *end = li->cursor, *start = end;
  while (start > li->buffer && (isalnum((unsigned char)start[-1]) || start[-1] == '_' || start[-1] == '.')) start--;
  const char *dot = NULL;
  for (const char *p = start; p < end; p++) if (*p == '.') dot = p;
  const char *word = dot ? dot + 1 : start;
  size_t wlen = end - word;
  char prefix[256];
  snprintf(prefix, sizeof prefix, "%.*s", (int)wlen, word);
  sh_obj *matches = sh_set_new();
  if (dot) {
    sh_obj *o = lookup_chain(start, dot - start);
    if (o) {
      sh_obj *names = sh_dir(o);
      if (names) { add_matches(matches, names, prefix, wlen); sh_decref(names); }
      sh_decref(o);
    }
  } else if (li->buffer[0] == '%' && start == li->buffer + 1) {
    for (int i = 0; i < nmagics; i++)
      if (!strncmp(magics[i].name, prefix, wlen)) { sh_obj *s = sh_str(magics[i].name); sh_set_add(matches, s); sh_decref(s); }
  } else {
    add_matches(matches, sh_main_globals(), prefix, wlen);
    add_matches(matches, sh_builtins_dict(), prefix, wlen);
    for (int i = 0; keywords[i]; i++)
      if (!strncmp(keywords[i], prefix, wlen)) { sh_obj *s = sh_str(keywords[i]); sh_set_add(matches, s); sh_decref(s); }
  }
  sh_obj *list = sh_sequence_to_list(matches);
  sh_decref(matches);
  sh_decref(sh_call_method(list, "sort", 0, NULL, NULL));
  sh_err_clear();
  unsigned char rc = offer(e, list, wlen);
  sh_decref(list);
  return rc;
}

/* ---- input --------------------------------------------------------------------------------- */
static char *prompt_fn(EditLine *e) { return continuation ? "... " : ">>> "; }

/* Idle hooks and watched descriptors, served while the prompt waits. */
static struct { void (*fn)(void); int interval_ms; double next; } idle_hooks[8];
static int nidle_hooks;
static struct { int fd; void (*on_ready)(int); } watched[8];
static int nwatched;

void sh_repl_add_idle_hook(void (*fn)(void), int interval_ms) {
  if (nidle_hooks == 8 || interval_ms <= 0) return;
  idle_hooks[nidle_hooks].fn = fn;
  idle_hooks[nidle_hooks].interval_ms = interval_ms;
  idle_hooks[nidle_hooks].next = 0;
  nidle_hooks++;
}

void sh_repl_watch_fd(int fd, void (*on_ready)(int fd)) {
  if (nwatched == 8) return;
  watched[nwatched].fd = fd;
  watched[nwatched].on_ready = on_ready;
  nwatched++;
}

static double now_s(void);

/* Wait until stdin is readable, serving hooks and watched descriptors meanwhile.
 * Returns -1 when interrupted by a signal. */
static int wait_for_input(void) {
  if (!nidle_hooks && !nwatched) return 0;
  for (;;) {
    struct pollfd fds[9] = {{.fd = STDIN_FILENO, .events = POLLIN}};
    for (int i = 0; i < nwatched; i++) fds[i + 1] = (struct pollfd){.fd = watched[i].fd, .events = POLLIN};
    double now = now_s(), wake = -1;
    for (int i = 0; i < nidle_hooks; i++) {
      if (idle_hooks[i].next <= now) { idle_hooks[i].fn(); idle_hooks[i].next = now + idle_hooks[i].interval_ms / 1e3; }
      if (wake < 0 || idle_hooks[i].next < wake) wake = idle_hooks[i].next;
    }
    int timeout = wake < 0 ? -1 : (int)((wake - now_s()) * 1e3) + 1;
    sh_gil_release();   /* threads run while the prompt waits */
    int r = poll(fds, nwatched + 1, timeout);
    sh_gil_acquire();
    if (r < 0) { if (errno == EINTR && sh_interrupted) return -1; continue; }
    for (int i = 0; i < nwatched; i++) if (fds[i + 1].revents) watched[i].on_ready(watched[i].fd);
    if (fds[0].revents) return 0;
  }
}

/* Read one character ourselves so that Ctrl-C (EINTR) ends el_gets. */
static int getc_fn(EditLine *e, wchar_t *wc) {
  unsigned char buf[4];
  int n = 0, need = 1;
  if (wait_for_input() < 0) return -1;
  while (n < need) {
    sh_gil_release();   /* threads run while the prompt waits */
    ssize_t r = read(STDIN_FILENO, buf + n, 1);
    sh_gil_acquire();
    if (r < 0 && errno == EINTR) {
      if (sh_interrupted) return -1;
      continue;
    }
    if (r <= 0) return r == 0 ? 0 : -1;
    if (n == 0) need = buf[0] >= 0xF0 ? 4 : buf[0] >= 0xE0 ? 3 : buf[0] >= 0xC0 ? 2 : 1;
    n++;
  }
  wchar_t c = buf[0];
  if (need > 1) {
    c = buf[0] & (0x7F >> need);
    for (int i = 1; i < need; i++) c = c << 6 | (buf[i] & 63);
  }
  *wc = c;
  return 1;
}

/* Ctrl-C: the flag the runtime's waits poll (it cancels a step), then CPython's own
 * handler, which raises KeyboardInterrupt in the main thread. */
static void (*python_sigint)(int);
static void on_sigint(int sig) {
  sh_interrupted = 1;
  if (python_sigint) python_sigint(sig);
}

void sh_install_sigint(void) {
  /* Python's handler even where SIGINT came ignored (a job started with & by a script):
   * Ctrl-C and kill -INT end a tfsh script, as they end the cluster it started. */
  sh_obj *g = sh_dict_new();
  /* _signal, the C module: signal.py imports enum, ~4 ms of every start */
  if (g && sh_exec_string("import _signal\n_signal.signal(_signal.SIGINT, _signal.default_int_handler)\n",
                          "<tfsh sigint>", g) < 0)
    sh_err_clear();
  sh_decref(g);
  struct sigaction sa = {0}, old;
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);   /* no SA_RESTART: a blocking read() returns EINTR */
  if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN &&
      old.sa_handler != on_sigint)
    python_sigint = old.sa_handler;
}

static void history_setup(void) {
  const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  if (state && *state) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tfsh", state);
    mkdir(state, 0700);
    mkdir(dir, 0700);
    snprintf(hist_path, sizeof hist_path, "%s/history", dir);
  } else if (home) {
    snprintf(hist_path, sizeof hist_path, "%s/.tfsh_history", home);
  }
  HistEvent ev;
  hist = L.history_init();
  L.history(hist, &ev, H_SETSIZE, 2000);
  L.history(hist, &ev, H_SETUNIQUE, 1);
  if (hist_path[0]) L.history(hist, &ev, H_LOAD, hist_path);
}

static void history_add(const char *entry) {
  HistEvent ev;
  char *e = xstrdup(entry);
  size_t n = strlen(e);
  while (n && (e[n - 1] == '\n' || e[n - 1] == ' ')) e[--n] = 0;
  if (n) {
    L.history(hist, &ev, H_ENTER, e);
    if (hist_path[0]) L.history(hist, &ev, H_SAVE, hist_path);
  }
  free(e);
}

/* Does this input open a block (so that a blank line ends it)? */
static bool opens_block(const char *src) {
  size_t n = strcspn(src, "\n");
  const char *hash = memchr(src, '#', n);
  if (hash) n = hash - src;
  while (n && isspace((unsigned char)src[n - 1])) n--;
  return (n && src[n - 1] == ':') || src[0] == '@';
}

void sh_print_async(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (idle && el && isatty(STDOUT_FILENO)) {
    fputs("\r\033[K", stdout);
    vprintf(fmt, ap);
    fflush(stdout);
    L.el_set(el, EL_REFRESH);
  } else {
    vprintf(fmt, ap);
    fflush(stdout);
  }
  va_end(ap);
}

int sh_repl_run(void) {
  running = true;
  builtin_magics();
  sh_install_sigint();

  edit_load();
  el = L.el_init("tfsh", stdin, stdout, stderr);
  L.el_set(el, EL_PROMPT, prompt_fn);
  L.el_set(el, EL_EDITOR, "emacs");
  L.el_set(el, EL_SIGNAL, 0);
  L.el_set(el, EL_GETCFN, getc_fn);
  history_setup();
  L.el_set(el, EL_HIST, L.history, hist);
  L.el_set(el, EL_ADDFN, "tfsh-complete", "Complete a name or attribute", complete);
  L.el_set(el, EL_BIND, "^I", "tfsh-complete", NULL);
  L.el_source(el, NULL);   /* ~/.editrc */

  printf("tfsh %s (Python %s, TensorFlow 1.x's distributed runtime). %%help for help, Ctrl-D exits.\n",
         TFSH_VERSION, PY_VERSION);
  sh_buf buf = {0};
  int status = 0;
  for (;;) {
    continuation = buf.len > 0;
    int count = 0;
    sh_screen_clear(true);
    idle = true;
    const char *line = L.el_gets(el, &count);
    idle = false;
    if (!line) {
      if (sh_interrupted) {
        sh_interrupted = 0;
        printf("\nKeyboardInterrupt\n");
        fflush(stdout);
        sh_buf_free(&buf);
        L.el_reset(el);
        continue;
      }
      printf("\n");
      break;
    }
    sh_interrupted = 0;
    if (!buf.len) {
      char *s = xstrdup(line + strspn(line, " \t"));
      size_t n = strlen(s);
      while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
      bool handled = true;
      if (!*s) {}
      else if (*s == '%') {
        history_add(s);
        if (run_magic(s) < 0) {
          if (sh_err_matches(sh_SystemExit)) { status = sh_report_error(); free(s); goto out; }
          sh_report_error();
        }
      } else if (show_help(s)) history_add(s);
      else handled = false;
      free(s);
      if (handled) continue;
    }
    sh_buf_puts(&buf, line);
    if (line[0] && line[strlen(line) - 1] != '\n') sh_buf_putc(&buf, '\n');
    /* Read more while the parser says the input ended early; a blank line ends a block
     * (as in python) but not an open bracket or string. */
    bool blank = strspn(line, " \t\r\n") == strlen(line);
    bool block = opens_block(buf.data);
    if ((!blank || !block) && sh_source_incomplete(buf.data)) continue;
    if (!blank && block) continue;
    while (buf.len && isspace((unsigned char)buf.data[buf.len - 1])) buf.data[--buf.len] = 0;
    sh_buf_putc(&buf, '\n');   /* drop the blank line that ended a block */
    history_add(buf.data);
    int rc = sh_exec_interactive(buf.data);
    sh_buf_free(&buf);
    fflush(stdout);
    if (rc < 0) {
      if (sh_err_matches(sh_SystemExit)) { status = sh_report_error(); goto out; }
      sh_report_error();
    }
  }
out:
  sh_buf_free(&buf);
  L.el_end(el);
  L.history_end(hist);
  el = NULL;
  return status;
}
