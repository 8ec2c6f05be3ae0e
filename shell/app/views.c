/* Views: what the cluster does, seen from the shell. They observe runs (the tf
 * room's run observer, set by tf_views_init) and ask the runtime through typed calls
 * (runtime/views.h, rt_session_progress): no wire message is built or read here.
 *
 *  - Session.run(options=RunOptions(trace_level=FULL_TRACE) / output_partition_graphs=True,
 *    run_metadata=...) fills run_metadata.step_stats / .partition_graphs (the records are
 *    shell/app/views.py.inc's classes, built from the lists made here);
 *  - the live view: while a step runs on a terminal, one line per device with a bar of ops
 *    done, the op running now, elapsed time, bytes sent and received (the master's
 *    progress, polled every 150 ms without blocking; nothing is drawn for steps shorter
 *    than 200 ms, so tight loops cost a clock read per 50 ms tick);
 *  - magics: %live, %trace, %placement, %partitions, %dot, %tasks, %top (%cluster is
 *    shell/app/cluster.c's).
 *
 * A session on a TensorFlow master (TFSH_PEER=tf) is seen through TF's RunMetadata: steps
 * keep their partition graphs for the placement magics once a view is wanted, the live
 * view has no progress during a step and its summary comes from a trace.
 *
 * Output that is not a terminal, NO_COLOR or TERM=dumb: plain text, no escape codes, no
 * live view. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "runtime/cluster.h"
#include "runtime/partition.h"
#include "runtime/session.h"
#include "runtime/trace.h"
#include "runtime/views.h"
#include "shell/app/repl.h"
#include "shell/app/views.h"
#include "shell/py/lang.h"
#include "shell/tf/tf.h"


static const char views_src[] =
#include "shell/app/views.py.inc"
;
#include "shell/app/views.frozen.h"   /* views_frozen[]: generated, CMakeLists.txt */

/* ---- small helpers ------------------------------------------------------------------- */

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static bool fancy_terminal(void) {
  const char *term = getenv("TERM");
  return isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && !(term && !strcmp(term, "dumb"));
}

/* The same, asked once a second at most (every sess.run asks). */
static bool fancy_terminal_cached(void) {
  static int64_t when;
  static bool v;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  int64_t now = (int64_t)ts.tv_sec;
  if (!when || now != when) {
    when = now;
    v = fancy_terminal();
  }
  return v;
}

static int term_width(void) {
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
  return 80;
}

static void human_bytes(int64_t b, char *buf, size_t n) {
  if (b < 1024) snprintf(buf, n, "%lld B", (long long)b);
  else if (b < 1024 * 1024) snprintf(buf, n, "%.1f KiB", b / 1024.0);
  else if (b < 1024LL * 1024 * 1024) snprintf(buf, n, "%.1f MiB", b / (1024.0 * 1024));
  else snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
}

static sh_obj *tf_mod(void) { return sh_import("tensorflow"); }

/* Call tensorflow.<fn>(args...) (steals the args). */
static sh_obj *call_tf(const char *fn, int argc, sh_obj **argv) {
  sh_obj *tf = tf_mod(), *f = tf ? sh_getattr(tf, fn) : NULL, *r = NULL;
  if (f) r = sh_call(f, argc, argv, NULL);
  for (int i = 0; i < argc; i++) sh_decref(argv[i]);
  sh_decref(f);
  sh_decref(tf);
  return r;
}

static sh_obj *shape_list(const rt_shape *s) {
  if (s->ndims < 0) return sh_none();
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < s->ndims; i++) sh_list_append_steal(l, sh_int(s->dims[i]));
  return l;
}

static void shape_text(rt_dtype t, const rt_shape *s, char *buf, size_t n) {
  char sh[128];
  rt_shape_str(s, sh, sizeof sh);
  snprintf(buf, n, "%s%s", rt_dtype_name(t), sh);
}

/* ---- graphs as node dicts (GraphDef) ---------------------------------------------------- */

static sh_obj *attr_obj(const rt_attr_value *v) {
  switch (v->kind) {
    case RT_ATTR_INT: return sh_int(v->i);
    case RT_ATTR_FLOAT: return sh_float(v->f);
    case RT_ATTR_BOOL: return sh_bool(v->b);
    case RT_ATTR_STRING: return sh_str(v->s ? v->s : "");
    case RT_ATTR_TYPE: return sh_int(v->type);
    case RT_ATTR_SHAPE: return shape_list(&v->shape);
    case RT_ATTR_RAW: return sh_strn((const char *)v->list.v, (size_t)v->list.n);
    case RT_ATTR_TENSOR: {
      sh_obj *vals = NULL, *arr = np_result(rt_tensor_ref(v->tensor));
      sh_obj *flat = arr ? sh_call_method(arr, "flatten", 0, NULL, NULL) : NULL;
      vals = flat ? sh_call_method(flat, "tolist", 0, NULL, NULL) : NULL;
      sh_decref(arr);
      sh_decref(flat);
      if (!vals) {
        sh_err_clear();
        vals = sh_list_new(0);
      }
      return sh_tuple_of(3, sh_int(v->tensor->dtype), shape_list(&v->tensor->shape), vals);
    }
    default: break;
  }
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < v->list.n; i++) {
    sh_obj *e = NULL;
    switch (v->kind) {
      case RT_ATTR_LIST_INT: e = sh_int(((int64_t *)v->list.v)[i]); break;
      case RT_ATTR_LIST_FLOAT: e = sh_float(((double *)v->list.v)[i]); break;
      case RT_ATTR_LIST_STRING: e = sh_str(((char **)v->list.v)[i]); break;
      case RT_ATTR_LIST_TYPE: e = sh_int(((rt_dtype *)v->list.v)[i]); break;
      case RT_ATTR_LIST_SHAPE: e = shape_list(&((rt_shape *)v->list.v)[i]); break;
      default: e = sh_none(); break;
    }
    sh_list_append_steal(l, e);
  }
  return l;
}

static sh_obj *node_dict(const rt_node *n, bool assigned) {
  sh_obj *d = sh_dict_new(), *v;
  sh_dict_set_str(d, "name", v = sh_str(n->name)), sh_decref(v);
  sh_dict_set_str(d, "op", v = sh_str(n->op)), sh_decref(v);
  sh_obj *ins = sh_list_new(0);
  for (int k = 0; k < n->n_inputs; k++) {   /* TF1 writes "x" for "x:0" */
    size_t len = strlen(n->inputs[k]);
    bool zero = len > 2 && !strcmp(n->inputs[k] + len - 2, ":0");
    sh_list_append_steal(ins, sh_strn(n->inputs[k], zero ? len - 2 : len));
  }
  sh_dict_set_str(d, "input", ins), sh_decref(ins);
  const char *dev = assigned && n->assigned ? n->assigned : n->device ? n->device : "";
  sh_dict_set_str(d, "device", v = sh_str(dev)), sh_decref(v);
  sh_obj *attrs = sh_dict_new();
  for (int a = 0; a < n->n_attrs; a++) {
    if (n->attrs[a].name[0] == '_' && !strcmp(n->attrs[a].name, "_device_reason")) continue;
    sh_obj *val = attr_obj(&n->attrs[a].value);
    sh_obj *kv = sh_tuple_of(2, sh_str(rt_attr_kind_name(n->attrs[a].value.kind)), val);
    sh_dict_set_str(attrs, n->attrs[a].name, kv);
    sh_decref(kv);
  }
  sh_dict_set_str(d, "attr", attrs), sh_decref(attrs);
  return d;
}

static sh_obj *graph_nodes(const rt_graph *g, bool assigned) {
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < g->n_nodes; i++) sh_list_append_steal(l, node_dict(g->nodes[i], assigned));
  return l;
}

/* _views_nodes(graph) -> [node dict] of a tf.Graph (as built: requested devices). */
static sh_obj *f_views_nodes(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *g;
  if (sh_parse_args("_views_nodes", argc, argv, kw, "graph", &g) < 0) return NULL;
  if (Py_TYPE(g) != (PyTypeObject *)&tf_graph_type) return sh_raise(sh_TypeError, "expected a tf.Graph, got %s", sh_type_name(g));
  return graph_nodes(tf_rt((tf_graph *)g), false);
}

/* ---- step stats -> lists ------------------------------------------------------------- */

static sh_obj *step_stats_list(const rt_step_stats *s) {
  sh_obj *devs = sh_list_new(0);
  for (int i = 0; i < s->n; i++) {
    const rt_dev_stats *d = s->dev[i];
    sh_obj *dd = sh_dict_new(), *v, *nodes = sh_list_new(0);
    sh_dict_set_str(dd, "device", v = sh_str(d->device)), sh_decref(v);
    for (int k = 0; k < d->n; k++) {
      const rt_node_stats *n = &d->nodes[k];
      sh_obj *nd = sh_dict_new(), *outs = sh_list_new(0);
      sh_dict_set_str(nd, "node_name", v = sh_str(n->node_name ? n->node_name : "")), sh_decref(v);
      sh_dict_set_str(nd, "timeline_label", v = sh_str(n->timeline_label ? n->timeline_label : "")), sh_decref(v);
      sh_dict_set_str(nd, "all_start_micros", v = sh_int(n->all_start_micros)), sh_decref(v);
      sh_dict_set_str(nd, "op_start_rel_micros", v = sh_int(n->op_start_rel_micros)), sh_decref(v);
      sh_dict_set_str(nd, "op_end_rel_micros", v = sh_int(n->op_end_rel_micros)), sh_decref(v);
      sh_dict_set_str(nd, "all_end_rel_micros", v = sh_int(n->all_end_rel_micros)), sh_decref(v);
      sh_dict_set_str(nd, "thread_id", v = sh_int(n->thread_id)), sh_decref(v);
      for (int o = 0; o < n->n_outputs; o++)
        sh_list_append_steal(outs, sh_tuple_of(4, sh_int(n->outputs[o].dtype), shape_list(&n->outputs[o].shape),
                                               sh_int(n->outputs[o].bytes), sh_bool(n->outputs[o].alloc)));
      sh_dict_set_str(nd, "output", outs), sh_decref(outs);
      sh_list_append_steal(nodes, nd);
    }
    sh_dict_set_str(dd, "node_stats", nodes), sh_decref(nodes);
    sh_list_append_steal(devs, dd);
  }
  return devs;
}

/* ---- the live view ------------------------------------------------------------------- */

enum { LIVE_OFF, LIVE_ON, LIVE_KEEP };

typedef struct live_dev {
  char device[200];
  int done, total;
  char op[160];
  int64_t sent, recv;
  int busy, samples;        /* over the current loop, for the busy share */
  bool running;
} live_dev;

static struct {
  int mode;
  bool trace_all;           /* %trace on: every run is traced */
  /* this run */
  rt_session *s;
  int64_t t0;
  int drawn;                /* lines on the screen now */
  int64_t last_poll, last_draw;
  bool shown;
  int n;
  live_dev d[64];
  /* loops: runs that follow each other within a second */
  int64_t loop_start, last_end;
  int loop_steps;
  /* the view of a loop of short steps: each device's busy time since the loop began (from
   * RunStep's "busy"), drawn between steps a few times a second and folded into a summary
   * line when the loop is over */
  rt_busy acc[RT_MAX_BUSY];
  int n_acc;
  int64_t loop_drawn_at;
  bool loop_shown;
  /* a session on a TensorFlow master, which has no live progress: its last step was shown
   * (long), so its next is traced (FULL_TRACE) for the summary's devices, ops and bytes */
  const rt_session *tf_long;
} L = {.mode = LIVE_ON};

static live_dev *live_find(const char *dev) {
  for (int i = 0; i < L.n; i++)
    if (!strcmp(L.d[i].device, dev)) return &L.d[i];
  if (L.n == 64) return NULL;
  live_dev *d = &L.d[L.n++];
  memset(d, 0, sizeof *d);
  snprintf(d->device, sizeof d->device, "%s", dev);
  return d;
}

static void live_erase(void) {
  if (L.drawn > 0) {
    printf("\033[%dA\r\033[J", L.drawn);
    fflush(stdout);
  }
  L.drawn = 0;
}

static double loop_rate(void) {
  int64_t span = now_us() - L.loop_start;
  return L.loop_steps >= 2 && span > 0 ? L.loop_steps * 1e6 / (double)span : 0;
}

/* ---- loops of short steps ---- */

static void loop_add_busy(const rt_busy *b, int n) {
  for (int i = 0; i < n; i++) {
    int k = 0;
    while (k < L.n_acc && strcmp(L.acc[k].device, b[i].device)) k++;
    if (k == L.n_acc) {
      if (L.n_acc == RT_MAX_BUSY) continue;
      L.acc[L.n_acc++] = (rt_busy){.us = 0};
      snprintf(L.acc[k].device, sizeof L.acc[k].device, "%s", b[i].device);
    }
    L.acc[k].us += b[i].us;
    L.acc[k].ops = b[i].ops;
  }
}

/* A device's share of the loop's wall time spent running kernels, in percent. */
static int loop_busy_pct(const rt_busy *b) {
  int64_t span = L.last_end - L.loop_start;
  int64_t pct = span > 0 ? b->us * 100 / span : 0;
  return pct > 100 ? 100 : (int)pct;
}

/* "/job:worker/replica:0/task:0/device:CPU:0" -> "/job:worker/task:0/CPU:0" */
static void short_device(const char *dev, char *out, size_t n) {
  char buf[200];
  snprintf(buf, sizeof buf, "%s", dev);
  char *p;
  if ((p = strstr(buf, "/replica:0"))) memmove(p, p + 10, strlen(p + 10) + 1);
  if ((p = strstr(buf, "device:"))) memmove(p, p + 7, strlen(p + 7) + 1);
  snprintf(out, n, "%s", buf);
}

/* The loop's lines: steps so far and steps/s, then a line per device with its busy share. */
static void loop_draw(void) {
  live_erase();
  int width = term_width() - 1, name_w = 0;
  for (int i = 0; i < L.n_acc; i++)
    if ((int)strlen(L.acc[i].device) > name_w) name_w = (int)strlen(L.acc[i].device);
  double span = (L.last_end - L.loop_start) / 1e6;
  char line[1024];
  snprintf(line, sizeof line, "loop: step %d  %.1f steps/s  %.1f ms/step", L.loop_steps + 1,
           span > 0 ? (L.loop_steps + 1) / span : 0, span > 0 ? span * 1e3 / (L.loop_steps + 1) : 0);
  if ((int)strlen(line) > width) line[width] = '\0';
  printf("\r\033[K%s\n", line);
  for (int i = 0; i < L.n_acc; i++) {
    int pct = loop_busy_pct(&L.acc[i]), fill = pct * 20 / 100;
    char bar[32];
    for (int k = 0; k < 20; k++) bar[k] = k < fill ? '#' : '.';
    bar[20] = '\0';
    snprintf(line, sizeof line, "%-*s [%s] busy %3d%%  %d ops/step", name_w, L.acc[i].device, bar, pct,
             L.acc[i].ops);
    if ((int)strlen(line) > width) line[width] = '\0';
    printf("\r\033[K%s\n", line);
  }
  L.drawn = 1 + L.n_acc;
  L.loop_drawn_at = now_us();
  L.loop_shown = true;
  fflush(stdout);
}

/* The loop is over (or the program prints, or goes idle): its lines go; a loop that was
 * shown leaves one summary line. */
static void loop_fold(bool summary) {
  live_erase();
  if (!summary || !L.loop_shown) return;
  L.loop_shown = false;
  double span = (L.last_end - L.loop_start) / 1e6;
  char line[2048];
  int off = snprintf(line, sizeof line, "loop: %d steps in %.2f s, %.1f steps/s", L.loop_steps + 1, span,
                     span > 0 ? (L.loop_steps + 1) / span : 0);
  for (int i = 0; i < L.n_acc && off < (int)sizeof line - 256; i++) {
    char dev[200];
    short_device(L.acc[i].device, dev, sizeof dev);
    off += snprintf(line + off, sizeof line - off, "%s %s %d%%", i ? "," : "; busy", dev, loop_busy_pct(&L.acc[i]));
  }
  printf("%s\n", line);
  fflush(stdout);
  L.last_end = 0;   /* a step from now on starts a new loop */
}

/* sh_screen_hook: before the interpreter writes, and when it goes idle. */
static void live_screen_hook(bool idle) {
  if (L.drawn > 0 || (idle && L.loop_shown)) loop_fold(idle);
}

/* One device line, cut to the terminal's width. */
static void live_line(const live_dev *d, int name_w, double secs, bool final, char *out, size_t n) {
  int width = term_width() - 1;
  char bar[32], sent[32], recv[32], busy[32] = "";
  int bw = 20, fill = d->total > 0 ? (int)((int64_t)d->done * bw / d->total) : 0;
  if (final) fill = bw;
  for (int i = 0; i < bw; i++) bar[i] = i < fill ? '#' : '.';
  bar[bw] = '\0';
  human_bytes(d->sent, sent, sizeof sent);
  human_bytes(d->recv, recv, sizeof recv);
  if (L.loop_steps >= 2 && d->samples > 0) snprintf(busy, sizeof busy, "  busy %d%%", d->busy * 100 / d->samples);
  char buf[1024];
  snprintf(buf, sizeof buf, "%-*s [%s] %5d/%-5d %-24.24s %6.1fs  sent %s  recv %s%s", name_w, d->device, bar,
           final ? d->total : d->done, d->total, final ? "" : d->op, secs, sent, recv, busy);
  if ((int)strlen(buf) > width && width > 0) buf[width] = '\0';
  snprintf(out, n, "%s", buf);
}

static void live_draw(bool final) {
  double secs = (now_us() - L.t0) / 1e6;
  int name_w = 0;
  for (int i = 0; i < L.n; i++)
    if ((int)strlen(L.d[i].device) > name_w) name_w = (int)strlen(L.d[i].device);
  live_erase();
  char line[1024];
  int lines = 0;
  if (L.loop_steps >= 2) {
    snprintf(line, sizeof line, "step %d of this loop  %.1f steps/s", L.loop_steps + 1, loop_rate());
    printf("\r\033[K%s\n", line);
    lines++;
  }
  for (int i = 0; i < L.n; i++) {
    live_line(&L.d[i], name_w, secs, final, line, sizeof line);
    printf("\r\033[K%s\n", line);
    lines++;
  }
  if (!L.n) {
    printf("\r\033[Kstep running  %.1fs\n", secs);
    lines++;
  }
  L.drawn = lines;
  fflush(stdout);
}

static int live_tick(void *arg, int64_t elapsed_ms) {
  if (elapsed_ms < 200) return 0;
  int64_t now = now_us();
  if (now - L.last_poll >= 150000) {
    L.last_poll = now;
    rt_progress p;
    bool fresh = false;
    rt_status st;
    if (!rt_session_progress(L.s, &p, &fresh, &st) && fresh) {
      for (int i = 0; i < L.n; i++) L.d[i].running = false;
      for (int i = 0; i < p.n; i++) {
        live_dev *d = live_find(p.dev[i].device);
        if (!d) continue;
        d->done = p.dev[i].done;
        d->total = p.dev[i].total;
        d->sent = p.dev[i].sent;
        d->recv = p.dev[i].recv;
        d->running = true;
        snprintf(d->op, sizeof d->op, "%s", p.dev[i].op);
      }
      for (int i = 0; i < L.n; i++) {
        L.d[i].samples++;
        if (L.d[i].running && !strstr(L.d[i].op, "/_recv_") && L.d[i].done < L.d[i].total) L.d[i].busy++;
        if (!L.d[i].running && L.d[i].total) L.d[i].done = L.d[i].total;   /* its part finished */
      }
    }
  }
  if (now - L.last_draw >= 150000) {
    L.last_draw = now;
    L.shown = true;
    live_draw(false);
  }
  return 0;
}

static bool live_begin(rt_session *s) {
  int64_t now = now_us();
  bool on = L.mode != LIVE_OFF && fancy_terminal_cached();
  if (!on) {   /* steps the view does not show are not part of its loops either */
    L.last_end = 0;
    return false;
  }
  if (L.last_end && now - L.last_end < 1000000) {
    L.loop_steps++;
  } else {
    loop_fold(true);   /* the loop before this step is over */
    L.loop_steps = 0;
    L.loop_start = now;
    L.n = 0;   /* a new loop: forget the devices' busy counts */
    L.n_acc = 0;
    L.loop_shown = false;
  }
  L.s = s;
  if (rt_session_on_tf(s)) L.n = 0;   /* no live progress from TF: "step running", then its trace */
  L.t0 = now;
  L.shown = false;
  L.last_poll = L.last_draw = 0;
  for (int i = 0; i < L.n; i++) L.d[i].done = L.d[i].sent = L.d[i].recv = 0, L.d[i].op[0] = '\0';
  return true;
}

/* A TF master's step: devices, ops and bytes from its step stats (FULL_TRACE). Each
 * device's ops are its NodeExecStats but _SOURCE; the bytes its RecvTensor records, whose
 * label names the sender ("[16B] [0.5Mb/s] edge_4_w/read from /job:ps/... to /job:worker/..."). */
static void live_from_step_stats(const rt_step_stats *ss) {
  L.n = 0;
  for (int i = 0; i < ss->n; i++) {
    live_dev *d = live_find(ss->dev[i]->device);
    for (int k = 0; d && k < ss->dev[i]->n; k++) {
      const rt_node_stats *n = &ss->dev[i]->nodes[k];
      const char *label = n->timeline_label ? n->timeline_label : "", *from = strstr(label, " from ");
      if (n->node_name && !strcmp(n->node_name, "RecvTensor")) {
        int64_t b = n->n_outputs ? n->outputs[0].bytes : 0;
        d->recv += b;
        char dev[200] = "";
        if (from) sscanf(from + 6, "%199s", dev);
        live_dev *sender = dev[0] ? live_find(dev) : NULL;
        if (sender) sender->sent += b;
      } else if (n->node_name && strcmp(n->node_name, "_SOURCE")) {
        d->done++, d->total++;
      }
    }
  }
}

static void live_end(bool used, bool ok, const rt_busy *busy, int n_busy, const rt_session *s,
                     const rt_step_stats *tf_stats) {
  if (!used) return;
  bool on_tf = rt_session_on_tf(s);
  if (on_tf) {
    L.n = 0;
    if (tf_stats) live_from_step_stats(tf_stats);
  }
  L.last_end = now_us();
  loop_add_busy(busy, n_busy);
  if (on_tf) L.tf_long = L.shown ? s : NULL;
  if (!L.shown) {   /* a short step: in a loop, the loop's lines a few times a second */
    if (ok && L.loop_steps >= 2 && L.last_end - L.loop_drawn_at >= 250000) loop_draw();
    return;
  }
  double secs = (L.last_end - L.t0) / 1e6;
  if (L.mode == LIVE_KEEP) {
    live_draw(ok);
    L.drawn = 0;   /* stays on the screen */
  } else {
    live_erase();
  }
  int ops = 0, total = 0;
  int64_t sent = 0, recv = 0;
  for (int i = 0; i < L.n; i++) {
    ops += ok ? L.d[i].total : L.d[i].done;
    total += L.d[i].total;
    sent += L.d[i].sent;
    recv += L.d[i].recv;
  }
  char s1[32], s2[32], rate[64] = "";
  human_bytes(sent, s1, sizeof s1);
  human_bytes(recv, s2, sizeof s2);
  if (L.loop_steps >= 2) snprintf(rate, sizeof rate, "  %.1f steps/s", loop_rate());
  if (on_tf && !L.n)   /* TF's master said nothing of its devices (the step was not traced) */
    printf("%s %.2f s on a TensorFlow master (the next long step is traced for its devices)%s\n",
           ok ? "step" : "step failed after", secs, rate);
  else if (L.loop_steps < 2 || L.mode == LIVE_KEEP || secs >= 1.0 || on_tf)   /* TF's: no busy shares for a loop */
    printf("%s %.2f s: %d device%s, %d/%d ops, sent %s, recv %s%s\n", ok ? "step" : "step failed after", secs, L.n,
           L.n == 1 ? "" : "s", ops, total, s1, s2, rate);
  else if (ok)
    loop_draw();
  fflush(stdout);
}

/* ---- Session.run with options / run_metadata / the live view -------------------------- */

static sh_obj *opt_attr(sh_obj *o, const char *name) {
  if (!o || o == SH_NONE) return NULL;
  sh_obj *v = sh_getattr_opt(o, name);
  if (v == SH_NONE) { sh_decref(v); return NULL; }
  return v;
}

/* What one run needs from before to after: where the runtime puts its results. */
typedef struct run_seen {
  int64_t level;
  bool live;
  rt_step_stats stats;
  rt_partition *pgs;
  int n_pgs;
  rt_busy busy[RT_MAX_BUSY];
  int n_busy;
  rt_session *s;
  bool live_trace;          /* traced for the live view's summary only (a TF master's) */
} run_seen;

static bool views_wanted;   /* a view magic has been used: TF masters' steps keep their placement */

static void note_session(sh_obj *sess);

static void *views_before_run(sh_obj *sess, rt_session *s, sh_obj *options, rt_session_views *v) {
  run_seen *r = xcalloc(1, sizeof *r);
  sh_obj *o;
  note_session(sess);
  if ((o = opt_attr(options, "trace_level"))) { sh_as_int(o, &r->level); sh_decref(o); }
  if (L.trace_all && r->level == 0) r->level = 3;
  if ((o = opt_attr(options, "output_partition_graphs"))) { v->output_partition_graphs = sh_truth(o) > 0; sh_decref(o); }
  sh_err_clear();
  v->trace_level = (int)r->level;
  if (r->level > 0) v->step_stats = &r->stats;
  if (v->output_partition_graphs) {
    v->partition_graphs = &r->pgs;
    v->n_partition_graphs = &r->n_pgs;
  }
  r->s = s;
  bool on_tf = rt_session_on_tf(s);
  v->note_placement = on_tf && (views_wanted || sh_repl_running());
  r->live = live_begin(s);
  if (r->live && on_tf && L.tf_long == s && r->level == 0) {
    r->live_trace = true;
    v->trace_level = 3;
    v->step_stats = &r->stats;
  }
  if (r->live) {
    v->tick = live_tick;
    v->tick_arg = NULL;
    v->busy = r->busy;   /* for the busy shares if this step turns out to be part of a loop */
    v->n_busy = &r->n_busy;
  }
  return r;
}

static void views_after_run(void *seen, int rc, const rt_session_views *v, sh_obj *meta) {
  run_seen *r = seen;
  live_end(r->live, rc == RT_OK, r->busy, r->n_busy, r->s, rc == RT_OK && (r->live_trace || r->level > 0) ? &r->stats : NULL);
  if (!rc && r->level > 0) {
    sh_obj *ss = call_tf("_views_step_stats", 1, (sh_obj *[]){step_stats_list(&r->stats)});
    if (ss) {
      sh_obj *tf = tf_mod(), *last = tf ? sh_getattr(tf, "_views_last") : NULL;
      if (last) sh_dict_set_str(last, "step_stats", ss);
      sh_decref(last);
      sh_decref(tf);
      if (meta && meta != SH_NONE) sh_setattr(meta, "step_stats", ss);
      sh_decref(ss);
    }
  }
  if (!rc && v->output_partition_graphs && meta && meta != SH_NONE) {
    sh_obj *l = sh_list_new(0);
    for (int i = 0; i < r->n_pgs; i++) {
      sh_obj *gd = call_tf("_views_graph_def", 1, (sh_obj *[]){graph_nodes(r->pgs[i].g, true)});
      if (gd) sh_list_append_steal(l, gd);
    }
    sh_setattr(meta, "partition_graphs", l);
    sh_decref(l);
  }
  if (sh_err_occurred()) sh_err_clear();   /* metadata is best effort; the run's result stands */
  rt_step_stats_clear(&r->stats);
  rt_partitions_free(r->pgs, r->n_pgs);
  free(r);
}

/* ---- which session the magics look at ------------------------------------------------ */

static sh_obj *last_sess;   /* weak: forgotten when the session object goes away */

static void note_session(sh_obj *sess) { last_sess = sess; }
static void forget_session(sh_obj *sess) {
  if (last_sess == sess) last_sess = NULL;
}

static rt_session *magic_session(tf_graph **g) {
  sh_obj *s = tf_default_session();
  if (!s) s = last_sess;
  rt_session *rs = s ? tf_session_rt(s, g) : NULL;
  views_wanted = true;
  if (!rs) sh_raise(sh_RuntimeError, "no open session: create a tf.Session and run something first");
  return rs;
}

/* Words of a magic's arguments, each a Python expression or a name in the graph, turned
 * into fetch (tensor) or target (op) names. */
typedef struct names {
  int nx, nt;
  char *x[64], *t[64];
} names;

static void names_free(names *n) {
  for (int i = 0; i < n->nx; i++) free(n->x[i]);
  for (int i = 0; i < n->nt; i++) free(n->t[i]);
}

static int parse_fetches(const char *args, tf_graph *g, names *out) {
  memset(out, 0, sizeof *out);
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", args ? args : "");
  for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
    if (out->nx >= 64 || out->nt >= 64) break;
    if (rt_graph_find(tf_rt(g), w)) {
      out->t[out->nt++] = xstrdup(w);
      continue;
    }
    if (strchr(w, ':')) {
      rt_node *n;
      int idx;
      rt_status st;
      if (!rt_graph_output(tf_rt(g), w, &n, &idx, &st)) {
        out->x[out->nx++] = xstrdup(w);
        continue;
      }
    }
    sh_obj *v = sh_eval_string(w, "<magic>", sh_main_globals());
    if (!v) return -1;
    sh_obj *o = tf_variable_check(v) ? tf_variable_value(v) : v;
    char nm[400];
    if (Py_TYPE(o) == (PyTypeObject *)&tf_tensor_type) out->x[out->nx++] = xstrdup(tf_tensor_name((tf_tensor *)o, nm, sizeof nm));
    else if (Py_TYPE(o) == (PyTypeObject *)&tf_op_type) out->t[out->nt++] = xstrdup(tf_op_node((tf_op *)o)->name);
    else {
      sh_decref(v);
      sh_raise(sh_TypeError, "%s is a %s, not a tensor or an operation", w, sh_type_name(o));
      return -1;
    }
    sh_decref(v);
  }
  return 0;
}

/* Ask the master where the graph (what the fetches need) goes. */
static int placement(const char *args, rt_placement *p) {
  tf_graph *g = NULL;
  rt_session *s = magic_session(&g);
  if (!s) return -1;
  names nm;
  if (parse_fetches(args, g, &nm) < 0) return -1;
  rt_status st = {0};
  int rc = rt_session_placement(s, 0, NULL, nm.nx, (const char *const *)nm.x, nm.nt, (const char *const *)nm.t, p, &st);
  names_free(&nm);
  if (rc) {
    tf_raise_status(&st);
    return -1;
  }
  return 0;
}

/* ---- %placement ---------------------------------------------------------------------- */

void sh_print_placement(const rt_placement *p) {
  int w[4] = {4, 2, 9, 8};
  for (int i = 0; i < p->n_nodes; i++) {
    const char *f[4] = {p->nodes[i].name, p->nodes[i].op, p->nodes[i].requested, p->nodes[i].assigned};
    for (int k = 0; k < 4; k++)
      if ((int)strlen(f[k]) > w[k]) w[k] = (int)strlen(f[k]);
  }
  printf("%-*s  %-*s  %-*s  %-*s  %s\n", w[0], "node", w[1], "op", w[2], "requested", w[3], "assigned", "reason");
  for (int i = 0; i < p->n_nodes; i++) {
    const rt_placed_node *n = &p->nodes[i];
    printf("%-*s  %-*s  %-*s  %-*s  %s\n", w[0], n->name, w[1], n->op, w[2], n->requested[0] ? n->requested : "-", w[3],
           n->assigned, n->reason);
  }
  fflush(stdout);
}

static int magic_placement(const char *args) {
  rt_placement p;
  if (placement(args, &p) < 0) return -1;
  sh_print_placement(&p);
  rt_placement_clear(&p);
  return 0;
}

/* ---- %partitions --------------------------------------------------------------------- */

static void task_of(const char *dev, char *buf, size_t n) {
  snprintf(buf, n, "%s", dev);
  char *d = strstr(buf, "/device:");
  if (d) *d = '\0';
}

/* An edge's tensor ("float32(2, 2)", "control") and its size ("16 B", "? B"). */
static void edge_text(const rt_placed_edge *e, char *desc, size_t n, char *sz, size_t zn) {
  int64_t b;
  if (e->control) {
    snprintf(desc, n, "control");
    b = 4;
  } else {
    shape_text(e->dtype, &e->shape, desc, n);
    int64_t el = rt_shape_numel(&e->shape);
    b = el >= 0 && e->dtype != RT_STRING ? el * (int64_t)rt_dtype_size(e->dtype) : -1;
  }
  if (b >= 0) human_bytes(b, sz, zn);
  else snprintf(sz, zn, "? B");
}

void sh_print_partitions(const rt_placement *p) {
  char last_task[256] = "";
  for (int i = 0; i < p->n_parts; i++) {
    const char *dev = p->parts[i].name;
    const rt_graph *g = p->parts[i].g;
    char task[256];
    task_of(dev, task, sizeof task);
    if (strcmp(task, last_task)) {
      printf("%s\n", task);
      snprintf(last_task, sizeof last_task, "%s", task);
    }
    int sends = 0, recvs = 0;
    for (int k = 0; k < g->n_nodes; k++) {
      sends += !strcmp(g->nodes[k]->op, "_Send");
      recvs += !strcmp(g->nodes[k]->op, "_Recv");
    }
    printf("  %s: %d nodes (%d ops, %d _Send, %d _Recv)\n", dev, g->n_nodes, g->n_nodes - sends - recvs, sends, recvs);
    for (int k = 0; k < p->n_edges; k++) {
      const rt_placed_edge *e = &p->edges[k];
      bool out = !strcmp(e->from, dev), in = !strcmp(e->to, dev);
      if (!out && !in) continue;
      char desc[160], sz[32];
      edge_text(e, desc, sizeof desc, sz, sizeof sz);
      printf("    %s %-24s %s %s  %s  %s\n", out ? "send" : "recv", e->tensor, out ? "->" : "<-", out ? e->to : e->from,
             desc, sz);
    }
  }
  if (!p->n_parts) printf("(nothing to run)\n");
  fflush(stdout);
}

static int magic_partitions(const char *args) {
  rt_placement p;
  if (placement(args, &p) < 0) return -1;
  sh_print_partitions(&p);
  rt_placement_clear(&p);
  return 0;
}

/* ---- %dot ---------------------------------------------------------------------------- */

static const char *const palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                      "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd"};

static void dot_id(FILE *f, uint32_t part, const char *name) {
  fprintf(f, "\"p%u:", part);
  for (const char *c = name; *c; c++) {
    if (*c == '"' || *c == '\\') fputc('\\', f);
    fputc(*c, f);
  }
  fputc('"', f);
}

static int write_dot(const rt_placement *p, FILE *f) {
  fprintf(f, "digraph tfsh {\n  compound=true;\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n");
  char tasks[64][256];
  int nt = 0;
  for (int i = 0; i < p->n_parts; i++) {
    char task[256];
    task_of(p->parts[i].name, task, sizeof task);
    bool seen = false;
    for (int t = 0; t < nt; t++) seen |= !strcmp(tasks[t], task);
    if (!seen && nt < 64) snprintf(tasks[nt++], sizeof tasks[0], "%s", task);
  }
  for (int t = 0; t < nt; t++) {
    fprintf(f, "  subgraph cluster_task%d {\n    label=\"%s\";\n    style=rounded;\n    color=\"#555555\";\n", t, tasks[t]);
    for (int i = 0; i < p->n_parts; i++) {
      const char *dev = p->parts[i].name;
      char task[256];
      task_of(dev, task, sizeof task);
      if (strcmp(task, tasks[t])) continue;
      const char *col = palette[i % (int)(sizeof palette / sizeof *palette)];
      fprintf(f, "    subgraph cluster_dev%d {\n      label=\"%s\";\n      style=filled;\n      color=\"%s\";\n      fillcolor=\"%s40\";\n", i,
              strstr(dev, "/device:") ? strstr(dev, "/device:") + 1 : dev, col, col);
      const rt_graph *g = p->parts[i].g;
      for (int k = 0; k < g->n_nodes; k++) {
        const rt_node *nd = g->nodes[k];
        fprintf(f, "      ");
        dot_id(f, (uint32_t)i, nd->name);
        fprintf(f, " [label=\"%s\\n%s\", fillcolor=\"%s\"%s];\n", nd->name, nd->op, col,
                !strcmp(nd->op, "_Send") || !strcmp(nd->op, "_Recv") ? ", shape=cds" : "");
      }
      fprintf(f, "    }\n");
    }
    fprintf(f, "  }\n");
  }
  /* edges inside each partition */
  for (int i = 0; i < p->n_parts; i++) {
    const rt_graph *g = p->parts[i].g;
    for (int k = 0; k < g->n_nodes; k++) {
      const rt_node *nd = g->nodes[k];
      for (int j = 0; j < nd->n_inputs; j++) {
        const char *src = nd->inputs[j];
        bool ctl = src[0] == '^';
        char node[300];
        int idx;
        if (!rt_tensor_name_parse(src, node, sizeof node, &idx)) continue;
        fprintf(f, "  ");
        dot_id(f, (uint32_t)i, node);
        fprintf(f, " -> ");
        dot_id(f, (uint32_t)i, nd->name);
        fprintf(f, "%s;\n", ctl ? " [style=dotted]" : "");
      }
    }
  }
  /* Send -> Recv across partitions: dashed, with the tensor and its size */
  for (int k = 0; k < p->n_edges; k++) {
    const rt_placed_edge *e = &p->edges[k];
    char desc[160], sz[32];
    edge_text(e, desc, sizeof desc, sz, sizeof sz);
    /* the receiving partition's _Recv for this tensor */
    for (int i = 0; i < p->n_parts; i++) {
      if (strcmp(p->parts[i].name, e->to)) continue;
      int si = 0;
      for (int q = 0; q < p->n_parts; q++)
        if (!strcmp(p->parts[q].name, e->from)) si = q;
      const rt_graph *g = p->parts[i].g;
      /* the pair's rendezvous key: the tensor (tfsh's), or as TF names it ("edge_4_w/read") */
      const rt_node *sn = rt_graph_find(p->parts[si].g, e->send);
      const char *key = sn ? rt_node_string(sn, "tensor_name", e->tensor) : e->tensor;
      for (int j = 0; j < g->n_nodes; j++) {
        const rt_node *nd = g->nodes[j];
        const char *tn = rt_node_string(nd, "tensor_name", "");
        if (strcmp(nd->op, "_Recv") || (strcmp(tn, e->tensor) && strcmp(tn, key))) continue;
        fprintf(f, "  ");
        dot_id(f, (uint32_t)si, e->send);
        fprintf(f, " -> ");
        dot_id(f, (uint32_t)i, nd->name);
        fprintf(f, " [style=dashed, color=\"#d62728\", label=\"%s\\n%s\"];\n", desc, sz);
      }
    }
  }
  fprintf(f, "}\n");
  return 0;
}

static int magic_dot(const char *args) {
  char path[1024] = "";
  const char *rest = args;
  while (*rest == ' ') rest++;
  int i = 0;
  while (*rest && *rest != ' ' && i < 1023) path[i++] = *rest++;
  path[i] = '\0';
  if (!path[0]) {
    sh_raise(sh_ValueError, "usage: %%dot FILE[.dot|.gv|.svg|.png] [fetch ...]");
    return -1;
  }
  const char *ext = strrchr(path, '.');
  bool image = ext && (!strcmp(ext, ".svg") || !strcmp(ext, ".png"));
  if (image && system("command -v dot >/dev/null 2>&1") != 0) {
    sh_raise(sh_RuntimeError, "Graphviz's dot is not installed: write a .dot file instead (%%dot graph.dot)");
    return -1;
  }
  rt_placement p;
  if (placement(rest, &p) < 0) return -1;
  char dotpath[1100];
  snprintf(dotpath, sizeof dotpath, image ? "%s.dot" : "%s", path);
  FILE *f = fopen(dotpath, "w");
  if (!f) {
    rt_placement_clear(&p);
    sh_raise(sh_OSError, "%s: %s", dotpath, strerror(errno));
    return -1;
  }
  write_dot(&p, f);
  fclose(f);
  rt_placement_clear(&p);
  if (image) {
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "dot -T%s -o '%s' '%s'", ext + 1, path, dotpath);
    int rc = system(cmd);
    unlink(dotpath);
    if (rc != 0) {
      sh_raise(sh_RuntimeError, "dot failed (exit %d) making %s", rc, path);
      return -1;
    }
  }
  printf("wrote %s\n", path);
  fflush(stdout);
  return 0;
}

/* ---- %live, %trace ------------------------------------------------------------------- */

static int magic_live(const char *args) {
  while (*args == ' ') args++;
  if (!strcmp(args, "on")) L.mode = LIVE_ON;
  else if (!strcmp(args, "off")) L.mode = LIVE_OFF;
  else if (!strcmp(args, "keep")) L.mode = LIVE_KEEP;
  else if (*args) {
    sh_raise(sh_ValueError, "usage: %%live on|off|keep");
    return -1;
  }
  printf("live view: %s%s\n", L.mode == LIVE_OFF ? "off" : L.mode == LIVE_ON ? "on" : "keep",
         fancy_terminal() ? "" : " (inactive: output is not an interactive terminal, or NO_COLOR is set)");
  fflush(stdout);
  return 0;
}

static int magic_trace(const char *args) {
  while (*args == ' ') args++;
  if (!strcmp(args, "on") || !strcmp(args, "off")) {
    L.trace_all = !strcmp(args, "on");
    printf("tracing every run: %s\n", L.trace_all ? "on" : "off");
    fflush(stdout);
    return 0;
  }
  if (!*args) {
    sh_raise(sh_ValueError, "usage: %%trace FILE (Chrome trace JSON of the last traced step) | %%trace on|off");
    return -1;
  }
  sh_obj *r = call_tf("_views_write_trace", 1, (sh_obj *[]){sh_str(args)});
  if (!r) return -1;
  printf("wrote %s (%lld devices; open it in https://ui.perfetto.dev or chrome://tracing)\n", args,
         (long long)(sh_is_int(r) ? sh_int_value(r) : 0));
  sh_decref(r);
  fflush(stdout);
  return 0;
}

/* ---- %cluster and %top --------------------------------------------------------------- */

typedef struct task_view {
  char task[160], addr[256];
  bool up;
  uint64_t incarnation;
  char devices[512];
  char cpu_note[400];        /* its CPU, instruction set, kernel set and threads */
  char gpu_note[300];        /* a build with CUDA and no GPU here: why, said once */
  int64_t heard_us;          /* monotonic time of the last answer, 0: never */
  uint64_t runs, prev_runs;
  int64_t busy_us, prev_busy;
  int64_t rss;
  char last_error[256];
  char gpu_memory[512];      /* its GPUs' memory in use and peak, "" without one */
} task_view;

static task_view tasks[64];
static int n_tasks;

static task_view *task_find(const char *task) {
  for (int i = 0; i < n_tasks; i++)
    if (!strcmp(tasks[i].task, task)) return &tasks[i];
  if (n_tasks == 64) return NULL;
  task_view *t = &tasks[n_tasks++];
  memset(t, 0, sizeof *t);
  snprintf(t->task, sizeof t->task, "%s", task);
  return t;
}

/* The tasks of the cluster of the master at endpoint, each asked for its status and load
 * (1 s at most), into the table. */
static int cluster_poll(const char *endpoint, rt_status *st) {
  rt_cluster_status cs;
  if (rt_cluster_status_get(endpoint, 1000, &cs, st)) return st->code;
  for (int i = 0; i < cs.n; i++) {
    const rt_task_status *r = &cs.tasks[i];
    task_view *t = task_find(r->task);
    if (!t) continue;
    snprintf(t->addr, sizeof t->addr, "%s", r->addr);
    t->up = r->connected;
    if (!r->connected) continue;
    t->heard_us = r->answered_us;
    t->incarnation = r->incarnation;
    if (r->has_devices) {
      t->devices[0] = '\0';
      size_t off = 0;
      for (int k = 0; k < r->n_devices && off < sizeof t->devices; k++) {
        const char *name = r->devices[k], *short_name = strstr(name, "/device:") ? strstr(name, "/device:") + 8 : name;
        off += (size_t)snprintf(t->devices + off, sizeof t->devices - off, "%s%s", off ? " " : "", short_name);
        if (r->descs && r->descs[k][0] && off < sizeof t->devices)
          off += (size_t)snprintf(t->devices + off, sizeof t->devices - off, " (%s)", r->descs[k]);
      }
      snprintf(t->gpu_note, sizeof t->gpu_note, "%s", r->gpu_note);
      snprintf(t->cpu_note, sizeof t->cpu_note, "%s", r->cpu_note);
    }
    if (r->has_load) {
      t->prev_runs = t->runs;
      t->prev_busy = t->busy_us;
      t->runs = r->runs;
      t->busy_us = r->busy_us;
      t->rss = r->rss_bytes;
      snprintf(t->gpu_memory, sizeof t->gpu_memory, "%s", r->gpu_memory);
      snprintf(t->last_error, sizeof t->last_error, "%s", r->last_error);
    }
  }
  rt_cluster_status_clear(&cs);
  return RT_OK;
}

static const char *cluster_endpoint(const char *args, char *buf, size_t n) {
  while (*args == ' ') args++;
  if (*args) {
    rt_endpoint(args, buf, n);
    return buf;
  }
  tf_graph *g;
  rt_session *s = magic_session(&g);
  if (!s) return NULL;
  snprintf(buf, n, "%s", rt_session_endpoint(s));
  return buf;
}

static int magic_cluster(const char *args) {
  char ep[300];
  if (!cluster_endpoint(args, ep, sizeof ep)) return -1;
  rt_status st = {0};
  if (cluster_poll(ep, &st)) {
    tf_raise_status(&st);
    return -1;
  }
  int w = 4, aw = 7, dw = 7;
  for (int i = 0; i < n_tasks; i++) {
    if ((int)strlen(tasks[i].task) > w) w = (int)strlen(tasks[i].task);
    if ((int)strlen(tasks[i].addr) > aw) aw = (int)strlen(tasks[i].addr);
    if ((int)strlen(tasks[i].devices) > dw) dw = (int)strlen(tasks[i].devices);
  }
  printf("%-*s  %-*s  %-5s  %-16s  %-*s  %s\n", w, "task", aw, "address", "state", "incarnation", dw, "devices", "last heard from");
  int64_t now = now_us();
  for (int i = 0; i < n_tasks; i++) {
    task_view *t = &tasks[i];
    char heard[64], inc[32];
    if (t->heard_us) snprintf(heard, sizeof heard, "%.1f s ago", (now - t->heard_us) / 1e6);
    else snprintf(heard, sizeof heard, "never");
    if (t->incarnation) snprintf(inc, sizeof inc, "%016llx", (unsigned long long)t->incarnation);
    else snprintf(inc, sizeof inc, "-");
    printf("%-*s  %-*s  %-5s  %-16s  %-*s  %s\n", w, t->task, aw, t->addr, t->up ? "up" : "down", inc, dw,
           t->devices[0] ? t->devices : "-", heard);
  }
  for (int i = 0; i < n_tasks; i++) {
    if (tasks[i].up && tasks[i].cpu_note[0]) printf("%s: %s\n", tasks[i].task, tasks[i].cpu_note);
    if (tasks[i].up && tasks[i].gpu_note[0]) printf("%s: %s\n", tasks[i].task, tasks[i].gpu_note);
  }
  fflush(stdout);
  return 0;
}

/* Prints the table (and a line per task with GPUs); returns the lines printed. */
static int top_print(bool fancy, double dt) {
  int w = 4;
  for (int i = 0; i < n_tasks; i++)
    if ((int)strlen(tasks[i].task) > w) w = (int)strlen(tasks[i].task);
  int width = fancy ? term_width() - 1 : 1 << 20;
  char line[1024];
  snprintf(line, sizeof line, "%-*s  %-5s  %8s  %6s  %10s  %s", w, "task", "state", "steps/s", "busy", "memory", "last error");
  printf("%s%.*s\n", fancy ? "\r\033[K" : "", width, line);
  for (int i = 0; i < n_tasks; i++) {
    task_view *t = &tasks[i];
    char mem[32];
    human_bytes(t->rss, mem, sizeof mem);
    double rate = dt > 0 ? (double)(t->runs - t->prev_runs) / dt : 0;
    double busy = dt > 0 ? (double)(t->busy_us - t->prev_busy) / (dt * 1e6) * 100 : 0;
    if (busy > 100) busy = 100;
    snprintf(line, sizeof line, "%-*s  %-5s  %8.1f  %5.0f%%  %10s  %s", w, t->task, t->up ? "up" : "down", rate, busy,
             t->up ? mem : "-", t->last_error[0] ? t->last_error : "-");
    printf("%s%.*s\n", fancy ? "\r\033[K" : "", width, line);
  }
  int lines = n_tasks + 1;
  for (int i = 0; i < n_tasks; i++)
    if (tasks[i].up && tasks[i].gpu_memory[0]) {
      snprintf(line, sizeof line, "%s: %s", tasks[i].task, tasks[i].gpu_memory);
      printf("%s%.*s\n", fancy ? "\r\033[K" : "", width, line);
      lines++;
    }
  return lines;
}

static int magic_top(const char *args) {
  char ep[300];
  if (!cluster_endpoint(args, ep, sizeof ep)) return -1;
  rt_status st = {0};
  bool fancy = fancy_terminal() && isatty(STDIN_FILENO);
  int64_t t_prev = now_us();
  if (cluster_poll(ep, &st)) {
    tf_raise_status(&st);
    return -1;
  }
  struct termios old, raw;
  if (fancy && tcgetattr(STDIN_FILENO, &old) == 0) {
    raw = old;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  } else {
    fancy = false;
  }
  int lines = 0;
  for (;;) {
    struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
    int r = poll(&pfd, 1, 1000);
    int64_t now = now_us();
    double dt = (now - t_prev) / 1e6;
    t_prev = now;
    cluster_poll(ep, &st);
    if (fancy && lines) printf("\033[%dA", lines);
    lines = top_print(fancy, dt);
    if (fancy) printf("\r\033[K(any key stops)");
    fflush(stdout);
    if (!fancy || r > 0 || sh_interrupted) break;
  }
  if (fancy) {
    char c;
    while (read(STDIN_FILENO, &c, 1) == 1) {}
    tcsetattr(STDIN_FILENO, TCSANOW, &old);
    printf("\r\033[K");
    fflush(stdout);
  }
  sh_interrupted = 0;
  return 0;
}

/* ---- registration -------------------------------------------------------------------- */

typedef struct magic_row {
  const char *name;
  sh_magic_fn fn;
  const char *help;
} magic_row;

static const magic_row magic_rows[] = {
  {"live", magic_live, "%live on|off|keep: per-device progress while a step runs"},
  {"trace", magic_trace, "%trace FILE: Chrome trace of the last traced step; %trace on|off"},
  {"placement", magic_placement, "%placement [fetch ...]: node, op, requested/assigned device, reason"},
  {"partitions", magic_partitions, "%partitions [fetch ...]: each task's and device's fragment, Send/Recv edges"},
  {"dot", magic_dot, "%dot FILE [fetch ...]: the placed, partitioned graph as DOT (.svg/.png via Graphviz)"},
  {"tasks", magic_cluster, "%tasks [target]: tasks, address, state, incarnation, devices, last heard from"},
  {"top", magic_top, "%top [target]: per task steps/s, busy share, memory, last error (a key stops)"},
  {NULL, NULL, NULL},
};


/* _views_magic(name, args=""): run a view magic from a script (tests, notebooks). */
static sh_obj *f_views_magic(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name, *args = NULL;
  if (sh_parse_args("_views_magic", argc, argv, kw, "name |args", &name, &args) < 0) return NULL;
  const char *n = sh_as_cstr(name), *a = args ? sh_as_cstr(args) : "";
  if (!n || !a) return NULL;
  for (const magic_row *m = magic_rows; m->name; m++)
    if (!strcmp(m->name, n)) return m->fn(a) < 0 ? NULL : sh_none();
  return sh_raise(sh_ValueError, "no view magic %%%s", n);
}

static const sh_method views_funcs[] = {
  {"_views_nodes", f_views_nodes, "_views_nodes(graph)", "The graph's nodes as dicts (internal)."},
  {"_views_magic", f_views_magic, "_views_magic(name, args='')", "Run a view magic (%placement, ...) from a script."},
  {NULL},
};

/* RunMetadata records, GraphDef, timeline into the tf module (after the saver's prelude). */
static void views_module_built(sh_obj *tf) {
  sh_screen_hook = live_screen_hook;   /* the interpreter clears the live lines before it writes */
  sh_module_add_funcs(tf, views_funcs);
  sh_obj *dict = sh_module_dict(tf);
  if (sh_exec_frozen(views_frozen, sizeof views_frozen, views_src, "<tensorflow.views>", dict) < 0) {
    sh_report_error();
    return;
  }
  /* Graph.as_graph_def(): a method written in Python */
  sh_obj *f = sh_dict_get_str(dict, "_views_as_graph_def");
  sh_obj *nm = sh_intern("as_graph_def");
  if (f && sh_type_ready(&tf_graph_type) == 0 && sh_class_lookup(&tf_graph_type, nm) == NULL)
    sh_type_add(&tf_graph_type, sh_str_cstr(nm), f);
  sh_decref(nm);
  /* tensorflow.python.client.timeline */
  sh_obj *python = sh_module_new("tensorflow.python"), *client = sh_module_new("tensorflow.python.client");
  sh_obj *timeline = sh_module_new("tensorflow.python.client.timeline");
  static const char *const tl_names[][2] = {{"_Timeline", "Timeline"}, {"AllocationMaximum", "AllocationMaximum"},
                                             {"StepStatsAnalysis", "StepStatsAnalysis"}};
  for (size_t i = 0; i < sizeof tl_names / sizeof tl_names[0]; i++) {
    sh_obj *x = sh_dict_get_str(dict, tl_names[i][0]);
    if (x) sh_module_add(timeline, tl_names[i][1], sh_incref(x));
  }
  sh_module_add_sub(client, "timeline", timeline);
  sh_module_add_sub(python, "client", client);
  sh_module_add_sub(tf, "python", python);
}

static const tf_run_observer views_observer = {
  .before_run = views_before_run,
  .after_run = views_after_run,
  .session_gone = forget_session,
  .module_built = views_module_built,
};

void tf_views_init(void) {
  tf_set_run_observer(&views_observer);
  for (const magic_row *m = magic_rows; m->name; m++) sh_magic_register(m->name, m->fn, m->help);
}
