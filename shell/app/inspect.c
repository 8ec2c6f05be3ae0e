/* tfsh inspect FILE [--cluster SPEC] and %inspect: a legacy job's graph seen without
 * TensorFlow and without a cluster. Reads a binary GraphDef or a MetaGraph
 * (runtime/graphdef.c, runtime/metagraph.c), adds its nodes to a graph as import_graph_def
 * would, places it on the cluster's devices as a master would (rt_placement_compute, the
 * device fields replica_device_setter wrote honoured) and prints the devices it asks for,
 * the %placement and %partitions tables (shell/app/views.c), and what would fail: nodes of
 * ops tfsh does not have (and those that need them), and devices the cluster lacks. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops.h"
#include "runtime/cluster.h"
#include "runtime/device.h"
#include "runtime/graphdef.h"
#include "runtime/metagraph.h"
#include "runtime/pbmsg.h"
#include "runtime/op.h"
#include "shell/app/cmd.h"
#include "shell/app/repl.h"
#include "shell/app/views.h"

static const char inspect_usage[] =
    "usage: tfsh inspect FILE [--cluster SPEC]\n"
    "  FILE            a GraphDef (.pb or .pbtxt, write_graph) or a MetaGraph (.meta, binary or text)\n"
    "  --cluster SPEC  the cluster to place it on: job counts (ps=2 worker=2, {\"ps\": 2}), a\n"
    "                  ClusterSpec's JSON ({\"ps\": [\"h:p\", ...], ...}) or ps|h:p;h:p,worker|h:p;\n"
    "                  default: the jobs and tasks the graph's device fields name\n"
    "Prints the devices the graph asks for, where each node would run (the client is\n"
    "/job:worker/task:0 when there is one), the per-device partitions with their Send/Recv\n"
    "edges and bytes, and what would fail: ops tfsh does not have, devices the cluster lacks.\n"
    "Exit 0 when nothing would fail, 1 when something would, 2 when FILE or SPEC cannot be read.\n";

typedef struct job_count {
  char name[64];
  int tasks;
} job_count;

typedef struct cluster_jobs {
  int n;
  job_count j[64];
} cluster_jobs;

static void jobs_add(cluster_jobs *c, const char *job, int task) {
  for (int i = 0; i < c->n; i++)
    if (!strcmp(c->j[i].name, job)) {
      if (task + 1 > c->j[i].tasks) c->j[i].tasks = task + 1;
      return;
    }
  if (c->n == 64) return;
  snprintf(c->j[c->n].name, sizeof c->j[c->n].name, "%s", job);
  c->j[c->n++].tasks = task + 1;
}

static int jobs_cmp(const void *a, const void *b) { return strcmp(((const job_count *)a)->name, ((const job_count *)b)->name); }

/* "ps=2 worker=2", "ps=2,worker=2" or {"ps": 2, "worker": 2}: true when text is that form
 * (st set when a count is out of range). */
static bool parse_counts(const char *text, cluster_jobs *c, rt_status *st) {
  char buf[1024];
  size_t k = 0;
  for (const char *p = text; *p && k < sizeof buf - 1; p++)
    if (*p != '"') buf[k++] = *p == '{' || *p == '}' || *p == ',' ? ' ' : *p == ':' ? '=' : *p;
  buf[k] = '\0';
  int n = 0;
  char *save = NULL;
  for (char *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
    char *eq = strchr(w, '='), *v, *end = NULL;
    if (!eq) return false;
    *eq = '\0';
    v = eq[1] ? eq + 1 : strtok_r(NULL, " \t\n", &save);
    if (!v) return false;
    long k = strtol(v, &end, 10);
    if (*end || end == v || !rt_cluster_valid_job(w)) return false;
    if (k < 1 || k > 1024) {
      rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: job %s has %ld tasks (1 to 1024)", w, k);
      return true;
    }
    jobs_add(c, w, (int)k - 1);
    n++;
  }
  return n > 0;
}

static void first_problem(void *ctx, const char *msg) {
  rt_status *st = ctx;
  if (!st->code) rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: %s", msg);
}

static int parse_spec(const char *text, cluster_jobs *c, rt_status *st) {
  if (parse_counts(text, c, st)) return st->code;
  c->n = 0;
  rt_cluster *cl = rt_cluster_parse_each(text, first_problem, st);
  if (cl) {
    for (int i = 0; i < cl->n; i++) jobs_add(c, cl->tasks[i].job, cl->tasks[i].index);
    rt_cluster_free(cl);
  }
  if (!st->code && !c->n) rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: no tasks");
  return st->code;
}

static unsigned char *read_file(const char *path, size_t *n, rt_status *st) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    rt_error(st, RT_NOT_FOUND, "%s: %s", path, strerror(errno));
    return NULL;
  }
  char *all = NULL;
  size_t cap = 0, len = 0, got;
  do {
    if (cap - len < 65536) all = xrealloc(all, cap = cap ? 2 * cap : 65536);
    got = fread(all + len, 1, cap - len, f);
    len += got;
  } while (got > 0);
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(all);
    rt_error(st, RT_DATA_LOSS, "%s: read error", path);
    return NULL;
  }
  *n = len;
  return (unsigned char *)all;
}

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

/* The file's GraphDef nodes; *what says which kind it was. */
static int load(const char *path, rt_graphdef *gd, char *what, size_t wn, rt_status *st) {
  size_t n = 0;
  unsigned char *data = read_file(path, &n, st);
  if (!data) return st->code;
  bool text = rt_pb_looks_text(data, n), meta = ends_with(path, ".meta");
  if (text) {   /* text format: a GraphDef (.pbtxt, "node {" first) or a MetaGraph; read as binary */
    size_t k = 0;
    while (k < n && isspace(data[k])) k++;
    bool graph = n - k >= 4 && (!strncmp((char *)data + k, "node", 4) || !strncmp((char *)data + k, "versions", 8) ||
                                !strncmp((char *)data + k, "library", 7));
    meta = !graph;
    unsigned char *bin = NULL;
    size_t bn = 0;
    int trc = rt_pb_text_to_binary(rt_pb_find(graph ? "tensorflow.GraphDef" : "tensorflow.MetaGraphDef"),
                                   (const char *)data, n, path, &bin, &bn, st);
    free(data);
    if (trc) return trc;
    data = bin, n = bn;
  }
  rt_metagraph mg;
  int rc;
  if (!meta) {
    rc = rt_graphdef_decode(data, n, path, gd, st);
    if (!rc && gd->n > 0) {
      snprintf(what, wn, "a GraphDef (producer %d)", gd->producer);
      free(data);
      return RT_OK;
    }
    if (!rc) rt_graphdef_free(gd);
    rt_status ms = {0};
    if (rt_metagraph_decode(data, n, path, &mg, &ms) || !mg.graph_def) {   /* not a MetaGraph either */
      if (!ms.code) rt_metagraph_clear(&mg);
      free(data);
      return rc ? rc : rt_error(st, RT_INVALID_ARGUMENT, "%s: a GraphDef without nodes", path);
    }
    *st = (rt_status){0};
  } else if ((rc = rt_metagraph_decode(data, n, path, &mg, st))) {
    free(data);
    return rc;
  }
  free(data);
  if (mg.tensorflow_version[0]) snprintf(what, wn, "a MetaGraph (TensorFlow %s)", mg.tensorflow_version);
  else snprintf(what, wn, "a MetaGraph");
  rc = mg.graph_def ? rt_graphdef_decode(mg.graph_def, mg.graph_def_len, path, gd, st)
                    : rt_error(st, RT_INVALID_ARGUMENT, "%s: a MetaGraph without a graph", path);
  rt_metagraph_clear(&mg);
  return rc;
}

/* A failure line, kept for the end. */
typedef struct fails {
  int n;
  char **line;
} fails;

static void fail_add(fails *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_add(fails *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  if (!s) return;
  f->line = xrealloc(f->line, (size_t)(f->n + 1) * sizeof *f->line);
  f->line[f->n++] = s;
}

/* "a, b, c, ... (N)" of up to 4 names */
static void name_list(char **names, int n, char *buf, size_t bn) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && i < 4 && at < bn; i++) at += (size_t)snprintf(buf + at, bn - at, "%s%s", i ? ", " : "", names[i]);
  if (n > 4 && at < bn) snprintf(buf + at, bn - at, ", ...");
}

typedef struct dev_req {
  char *dev;
  int n;
  char **nodes;
} dev_req;

static dev_req *req_find(dev_req **r, int *n, const char *dev) {
  for (int i = 0; i < *n; i++)
    if (!strcmp((*r)[i].dev, dev)) return &(*r)[i];
  *r = xrealloc(*r, (size_t)(*n + 1) * sizeof **r);
  (*r)[*n] = (dev_req){xstrdup(dev), 0, NULL};
  return &(*r)[(*n)++];
}

static int req_cmp(const void *a, const void *b) { return strcmp(((const dev_req *)a)->dev, ((const dev_req *)b)->dev); }

/* The devices of reqs that exist nowhere in the cluster (parsed, n_devs), each a line of fl;
 * true when there is one (placement then goes as with allow_soft_placement). */
static bool unknown_devices(const dev_req *reqs, int n_reqs, const rt_devname *parsed, int n_devs, fails *fl) {
  bool soft = false;
  for (int i = 0; i < n_reqs; i++) {
    if (!reqs[i].dev[0]) continue;
    rt_devname d;
    rt_status ds = {0};
    bool found = false;
    if (rt_devname_parse(reqs[i].dev, &d, &ds) == 0)
      for (int k = 0; k < n_devs && !found; k++) found = rt_devname_matches(&d, &parsed[k]);
    if (found) continue;
    char names[400];
    name_list(reqs[i].nodes, reqs[i].n, names, sizeof names);
    if (ds.code) fail_add(fl, "device '%s' (%d node%s: %s): %s", reqs[i].dev, reqs[i].n, reqs[i].n == 1 ? "" : "s", names, ds.msg);
    else fail_add(fl, "device '%s' (%d node%s: %s): no such device in the cluster", reqs[i].dev, reqs[i].n, reqs[i].n == 1 ? "" : "s", names);
    soft = true;
  }
  return soft;
}

/* The nodes of gd (in order), as import_graph_def adds them; those that cannot be, and all
 * that need them, left out, each a line of fl. file_op[id]: node id's op as the file names it. */
static rt_graph *import_nodes(const rt_graphdef *gd, const int *order, const char **file_op, fails *fl) {
  rt_graph *g = rt_graph_new();
  char **left = xcalloc((size_t)gd->n + 1, sizeof *left);
  int n_left = 0;
  for (int i = 0; i < gd->n; i++) {
    rt_node *src = gd->nodes[order[i]];
    bool needs_missing = false;
    for (int k = 0; k < src->n_inputs && !needs_missing; k++) {
      char nm[512];
      int oi;
      const char *in = src->inputs[k];
      if (rt_tensor_name_parse(in[0] == '^' ? in + 1 : in, nm, sizeof nm, &oi) && !rt_graph_find(g, nm)) needs_missing = true;
    }
    if (needs_missing) {
      left[n_left++] = src->name;
      continue;
    }
    const char *op = rt_graphdef_op(src->op);
    const rt_op_sig *sig = rt_op_find(op);
    if (!sig) {
      fail_add(fl, "node '%s': op %s, which tfsh does not have", src->name, src->op);
      continue;
    }
    rt_node *x = rt_node_clone(src);
    free(x->op);
    x->op = xstrdup(op);
    rt_graphdef_fit_attrs(x, sig);
    const rt_attr_value *cls = rt_node_attr(x, "_class");   /* colocation with a node left out: dropped */
    if (cls && cls->kind == RT_ATTR_LIST_STRING)
      for (int j = 0; j < cls->list.n; j++) {
        const char *s = ((char **)cls->list.v)[j];
        if (!strncmp(s, "loc:@", 5) && !rt_graph_find(g, s + 5)) {
          rt_node_set_strings(x, "_class", 0, NULL);
          break;
        }
      }
    rt_status as = {0};
    int id = g->n_nodes;
    if (rt_graph_add(g, x, &as)) fail_add(fl, "node '%s': %s", src->name, as.msg);
    else file_op[id] = src->op;
  }
  if (n_left) {
    char names[400];
    name_list(left, n_left, names, sizeof names);
    fail_add(fl, "%d node%s that need%s them left out: %s", n_left, n_left == 1 ? "" : "s", n_left == 1 ? "s" : "", names);
  }
  free(left);
  return g;
}

int sh_inspect(const char *path, const char *spec, rt_status *st) {
  op_register_all();
  cluster_jobs jobs = {0};
  if (spec && parse_spec(spec, &jobs, st)) return -1;
  rt_graphdef gd;
  char what[200];
  if (load(path, &gd, what, sizeof what, st)) return -1;
  int *order = rt_graphdef_order(&gd, st);
  if (!order) {
    rt_graphdef_free(&gd);
    return -1;
  }
  fails fl = {0};
  /* the devices asked for, as written */
  dev_req *reqs = NULL;
  int n_reqs = 0;
  for (int i = 0; i < gd.n; i++) {
    const rt_node *x = gd.nodes[i];
    dev_req *r = req_find(&reqs, &n_reqs, x->device ? x->device : "");
    r->nodes = xrealloc(r->nodes, (size_t)(r->n + 1) * sizeof *r->nodes);
    r->nodes[r->n++] = x->name;
    rt_devname d;
    rt_status ig = {0};
    if (!spec && x->device && !rt_devname_parse(x->device, &d, &ig) && d.job[0]) jobs_add(&jobs, d.job, d.task < 0 ? 0 : d.task);
  }
  qsort(reqs, (size_t)n_reqs, sizeof *reqs, req_cmp);
  if (!jobs.n) jobs_add(&jobs, "localhost", 0);
  qsort(jobs.j, (size_t)jobs.n, sizeof *jobs.j, jobs_cmp);
  int n_devs = 0;
  for (int i = 0; i < jobs.n; i++) n_devs += jobs.j[i].tasks;
  char **devs = xcalloc((size_t)n_devs + 1, sizeof *devs);
  rt_devname *parsed = xcalloc((size_t)n_devs + 1, sizeof *parsed);
  n_devs = 0;
  char dflt[200] = "";
  for (int i = 0; i < jobs.n; i++)
    for (int t = 0; t < jobs.j[i].tasks; t++) {
      char buf[200];
      snprintf(buf, sizeof buf, "/job:%s/replica:0/task:%d/device:CPU:0", jobs.j[i].name, t);
      rt_status ig = {0};
      rt_devname_parse(buf, &parsed[n_devs], &ig);
      devs[n_devs++] = xstrdup(buf);
      if (!strcmp(jobs.j[i].name, "worker") && t == 0) snprintf(dflt, sizeof dflt, "%s", buf);
    }
  if (!dflt[0]) snprintf(dflt, sizeof dflt, "%s", devs[0]);

  printf("%s: %s, %d node%s\n", path, what, gd.n, gd.n == 1 ? "" : "s");
  printf("devices the graph asks for:\n");
  int w = 6;
  for (int i = 0; i < n_reqs; i++)
    if ((int)strlen(reqs[i].dev) > w) w = (int)strlen(reqs[i].dev);
  for (int i = 0; i < n_reqs; i++)
    printf("  %-*s  %d node%s\n", w, reqs[i].dev[0] ? reqs[i].dev : "(none)", reqs[i].n, reqs[i].n == 1 ? "" : "s");
  printf("cluster (%s):", spec ? "--cluster" : "the jobs the graph names");
  for (int i = 0; i < jobs.n; i++) printf(" %s=%d", jobs.j[i].name, jobs.j[i].tasks);
  printf(", one CPU each; the client: %s\n", dflt);

  /* devices that exist nowhere in the cluster */
  bool soft = unknown_devices(reqs, n_reqs, parsed, n_devs, &fl);

  /* the nodes, as import_graph_def adds them; those that cannot be, and all that need them, left out */
  const char **file_op = xcalloc((size_t)gd.n + 1, sizeof *file_op);   /* per node of g: the op as the file names it */
  rt_graph *g = import_nodes(&gd, order, file_op, &fl);

  rt_place_opts po = {.soft = soft, .default_device = dflt};
  rt_placement p;
  rt_status ps = {0};
  int rc = rt_placement_compute(g, NULL, (const char *const *)devs, n_devs, &po, NULL, NULL, &p, &ps);
  printf("\nplacement%s:\n", soft ? " (as with allow_soft_placement, for the devices the cluster lacks)" : "");
  if (rc) {
    printf("(none)\n");
    fail_add(&fl, "placement: %s", ps.msg);
  } else {
    for (int i = 0; i < p.n_nodes; i++) {   /* the op as the file names it (AddV2, not tfsh's Add) */
      const rt_node *x = rt_graph_find(g, p.nodes[i].name);
      if (x && file_op[x->id] && strcmp(file_op[x->id], p.nodes[i].op)) {
        free(p.nodes[i].op);
        p.nodes[i].op = xstrdup(file_op[x->id]);
      }
    }
    sh_print_placement(&p);
    printf("\npartitions:\n");
    sh_print_partitions(&p);
    rt_placement_clear(&p);
  }
  printf("\nwould fail:%s\n", fl.n ? "" : " nothing");
  for (int i = 0; i < fl.n; i++) printf("  %s\n", fl.line[i]);
  fflush(stdout);
  int out = fl.n ? 1 : 0;
  for (int i = 0; i < fl.n; i++) free(fl.line[i]);
  free(fl.line);
  for (int i = 0; i < n_reqs; i++) free(reqs[i].dev), free(reqs[i].nodes);
  free(reqs);
  for (int i = 0; i < n_devs; i++) free(devs[i]);
  free(devs);
  free(parsed);
  free(file_op);
  rt_graph_free(g);
  free(order);
  rt_graphdef_free(&gd);
  return out;
}

/* "FILE [--cluster SPEC]" as words; false on a usage error. */
static bool inspect_args(int argc, char **argv, const char **file, const char **spec) {
  *file = *spec = NULL;
  for (int i = 0; i < argc; i++) {
    const char *v = sh_cmd_opt(argc, argv, &i, "--cluster");
    if (v) *spec = v;
    else if (argv[i][0] == '-' && argv[i][1]) return false;
    else if (*file) return false;
    else *file = argv[i];
  }
  return *file != NULL;
}

int sh_inspect_main(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    fputs(inspect_usage, stdout);
    return 0;
  }
  const char *file, *spec;
  if (!inspect_args(argc - 1, argv + 1, &file, &spec)) {
    fputs(inspect_usage, stderr);
    return 2;
  }
  rt_status st = {0};
  int rc = sh_inspect(file, spec, &st);
  if (rc < 0) {
    fflush(stdout);
    fprintf(stderr, "tfsh inspect: %s\n", st.msg);
    return 2;
  }
  return rc;
}

/* %inspect FILE [--cluster SPEC] */
static int magic_inspect(const char *args) {
  char *copy = xstrdup(args ? args : ""), *words[64], *save = NULL;
  int n = 0;
  for (char *w = strtok_r(copy, " \t", &save); w && n < 64; w = strtok_r(NULL, " \t", &save)) words[n++] = w;
  const char *file, *spec;
  int rc = 0;
  const char *cl = args ? strstr(args, "--cluster") : NULL;
  if (cl) {   /* the spec is the rest of the line: %inspect F --cluster ps=2 worker=1 */
    const char *v = cl + 9;
    v += strspn(v, " \t=");
    free(copy);
    copy = xstrndup(args, (size_t)(cl - args));
    n = 0;
    save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w && n < 62; w = strtok_r(NULL, " \t", &save)) words[n++] = w;
    words[n++] = "--cluster";
    words[n++] = (char *)v;
  }
  if (!inspect_args(n, words, &file, &spec)) {
    fputs(inspect_usage, stdout);
  } else {
    rt_status st = {0};
    if (sh_inspect(file, spec, &st) < 0) {
      fflush(stdout);
      fprintf(stderr, "%%inspect: %s\n", st.msg);
    }
  }
  fflush(stdout);
  free(copy);
  return rc;
}

void sh_inspect_init(void) {
  sh_magic_register("inspect", magic_inspect, "%inspect FILE [--cluster SPEC]: a GraphDef's or MetaGraph's devices, placement, partitions, what would fail");
}
