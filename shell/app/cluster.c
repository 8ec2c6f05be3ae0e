/* A local cluster from the shell: one `tfsh server` child per task (fork + exec of
 * /proc/self/exe, never a bare fork: the process has ZeroMQ and BLIS threads), each task's
 * output in a log file; listing, stopping, killing, restarting tasks and reading their
 * logs; attaching to a running cluster. The same operations are magics (%cluster, %down,
 * %kill, %restart, %logs: interactive shell) and functions of the `tfsh` module
 * (tfsh.cluster_up(spec), ...: scripts, `tfsh -c`, piped stdin). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "runtime/cluster.h"
#include "runtime/graph.h"
#include "runtime/launch.h"
#include "runtime/session.h"
#include "shell/app/cmd.h"
#include "shell/py/lang.h"
#include "shell/app/repl.h"

enum { T_RUNNING, T_EXITED, T_KILLED, T_FAILED };   /* FAILED: never came up */

typedef struct ctask {
  char job[64];
  int index;
  char addr[256];
  char log[4200];
  pid_t pid;
  int state, code;            /* exit status, or signal number when killed */
  double started, ended;
  int label;                  /* >= 0: its lines in the shared log are "label: ..." (srun --label) */
  bool shared;                /* pid is the launcher of every task (srun), not the task's own */
  char node[256];             /* where it runs, when not here (Slurm, ssh) */
  int in_fd;                  /* ssh: its standard input; closing it stops the task */
} ctask;

/* How the cluster was launched: here, through Slurm (one srun for every task, an allocation
 * released by %down), or over ssh (one ssh per task). */
enum { L_LOCAL, L_SLURM, L_SSH };
static int launch_mode;
static ctask launcher;          /* Slurm: srun */
static char slurm_job[32];      /* the allocation, until released */

static ctask *tasks;
static int ntasks;
static char *spec_json;         /* the spec every child gets, canonical JSON */
static char logdir[4096];
static rt_cluster *attached;    /* %cluster attach: the spec last attached to */
static bool atexit_done;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void task_name(const ctask *t, char *buf, size_t n) {
  snprintf(buf, n, "/job:%s/task:%d", t->job, t->index);
}

/* ---- children ------------------------------------------------------------------------ */

/* Reap t if it has ended (no wait). */
static void poll_task(ctask *t) {
  if (t->shared) {   /* the launcher's state is every task's */
    if (t->state != T_RUNNING) return;
    poll_task(&launcher);
    if (launcher.state != T_RUNNING) t->state = launcher.state, t->code = launcher.code, t->ended = launcher.ended;
    return;
  }
  if (t->state != T_RUNNING || t->pid <= 0) return;
  int ws;
  pid_t r = waitpid(t->pid, &ws, WNOHANG);
  if (r == t->pid) {
    t->ended = now_s();
    if (WIFSIGNALED(ws)) t->state = T_KILLED, t->code = WTERMSIG(ws);
    else t->state = T_EXITED, t->code = WEXITSTATUS(ws);
  } else if (r < 0 && errno == ECHILD) {
    t->state = T_EXITED, t->code = -1, t->ended = now_s();
  }
}

static void poll_all(void) {
  for (int i = 0; i < ntasks; i++) poll_task(&tasks[i]);
}

static const char *state_str(const ctask *t, char *buf, size_t n) {
  switch (t->state) {
  case T_RUNNING: snprintf(buf, n, "running"); break;
  case T_EXITED: snprintf(buf, n, "exited(%d)", t->code); break;
  case T_KILLED: snprintf(buf, n, "killed(%s)", sigabbrev_np(t->code) ? sigabbrev_np(t->code) : "?"); break;
  default: snprintf(buf, n, "failed"); break;
  }
  return buf;
}

static int ensure_logdir(char *err, size_t errn) {
  if (logdir[0]) return 0;
  const char *base = getenv("XDG_RUNTIME_DIR");
  struct stat sb;
  if (!base || !*base || stat(base, &sb) || !S_ISDIR(sb.st_mode) || access(base, W_OK)) base = "/tmp";
  snprintf(logdir, sizeof logdir, "%s/tfsh-%d", base, (int)getpid());
  if (mkdir(logdir, 0700) && errno != EEXIST) {
    snprintf(err, errn, "cannot create the log directory %s: %s", logdir, strerror(errno));
    logdir[0] = 0;
    return -1;
  }
  return 0;
}

/* Start argv[0] (a path, or a name found on PATH) as t: fork, then in the child only system
 * calls until exec. Output to t's log (truncated first when fresh); with in_pipe, t->in_fd
 * is the write end of its standard input. */
static int spawn_argv(ctask *t, const char *path, char *const *argv, bool fresh, bool in_pipe, char *err, size_t errn) {
  int fd = open(t->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (fresh ? O_TRUNC : 0), 0600);
  if (fd < 0) {
    snprintf(err, errn, "cannot open %s: %s", t->log, strerror(errno));
    return -1;
  }
  int in[2] = {-1, -1};
  if (in_pipe ? pipe2(in, O_CLOEXEC) : (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    snprintf(err, errn, "cannot open a pipe: %s", strerror(errno));
    close(fd);
    return -1;
  }
  pid_t parent = getpid();
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);                          /* Ctrl-C at the prompt is not for the tasks */
    prctl(PR_SET_PDEATHSIG, SIGTERM);       /* the shell died: so does the task */
    if (getppid() != parent) _exit(127);
    dup2(in[0], 0);
    dup2(fd, 1);
    dup2(fd, 2);
    close_range(3, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (strchr(path, '/')) execv(path, argv);
    else execvp(path, argv);
    dprintf(2, "tfsh: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int e = errno;
  close(fd);
  close(in[0]);
  if (pid < 0) {
    if (in[1] >= 0) close(in[1]);
    snprintf(err, errn, "fork: %s", strerror(e));
    return -1;
  }
  t->in_fd = in[1];
  t->pid = pid;
  t->state = T_RUNNING;
  t->code = 0;
  t->started = now_s();
  t->ended = 0;
  return 0;
}

/* A local task: `tfsh server` of this very binary. */
static int spawn(ctask *t, char *err, size_t errn) {
  char jobarg[80], taskarg[32];
  snprintf(jobarg, sizeof jobarg, "%s", t->job);
  snprintf(taskarg, sizeof taskarg, "%d", t->index);
  char *argv[] = {"tfsh", "server", "--cluster", spec_json, "--job", jobarg, "--task", taskarg, NULL};
  return spawn_argv(t, "/proc/self/exe", argv, false, false, err, errn);
}

static off_t file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) ? 0 : sb.st_size;
}

/* The part of a log line that is t's: all of it, or (a shared log, srun --label) what
 * follows "  R: " for t's rank R; NULL for another task's line. */
static char *line_of(const ctask *t, char *line) {
  if (t->label < 0) return line;
  char *p = line;
  while (*p == ' ') p++;
  char *end;
  long r = strtol(p, &end, 10);
  if (end == p || r != t->label || end[0] != ':') return NULL;
  return end[1] == ' ' ? end + 2 : end + 1;
}

/* Does t's log, from offset on, contain needle? */
static bool log_has(const ctask *t, off_t from, const char *needle) {
  FILE *f = fopen(t->log, "r");
  if (!f) return false;
  fseeko(f, from, SEEK_SET);
  char line[4096], *mine;
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) found = (mine = line_of(t, line)) && strstr(mine, needle);
  fclose(f);
  return found;
}

/* The last non-empty line of t's log after offset from (for error messages). */
static void log_last_line(const ctask *t, off_t from, char *buf, size_t n) {
  buf[0] = 0;
  FILE *f = fopen(t->log, "r");
  if (!f) return;
  fseeko(f, from, SEEK_SET);
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    char *mine = line_of(t, line);
    if (!mine) continue;
    size_t len = strlen(mine);
    while (len && (mine[len - 1] == '\n' || mine[len - 1] == '\r')) mine[--len] = 0;
    if (len) snprintf(buf, n, "%s", mine);
  }
  fclose(f);
}

/* SIGTERM, wait up to grace_ms, then SIGKILL. */
static void stop_task(ctask *t, int sig, int grace_ms) {
  if (t->shared) {
    stop_task(&launcher, sig, grace_ms);
    poll_task(t);
    return;
  }
  poll_task(t);
  if (t->state != T_RUNNING) return;
  if (t->in_fd > 0 && sig == SIGTERM) close(t->in_fd), t->in_fd = -1;   /* ssh: EOF ends the remote task */
  else kill(t->pid, sig);
  double end = now_s() + grace_ms / 1e3;
  while (t->state == T_RUNNING && now_s() < end) {
    nap_ms(5);
    poll_task(t);
  }
  if (t->state == T_RUNNING) {
    kill(t->pid, SIGKILL);
    int ws;
    if (waitpid(t->pid, &ws, 0) == t->pid) {
      t->ended = now_s();
      if (WIFSIGNALED(ws)) t->state = T_KILLED, t->code = WTERMSIG(ws);
      else t->state = T_EXITED, t->code = WEXITSTATUS(ws);
    }
  }
}

/* Wait until every task in want[] prints "serving on" (bounded). On failure err names the
 * first task that did not come up and why. */
static int wait_up(int *want, const off_t *from, int n, double timeout_s, char *err, size_t errn) {
  double end = now_s() + timeout_s;
  bool *up = xcalloc((size_t)n + 1, sizeof *up);
  int left = n, rc = 0;
  while (left > 0) {
    for (int k = 0; k < n; k++) {
      if (up[k]) continue;
      ctask *t = &tasks[want[k]];
      if (log_has(t, from[k], "serving on")) { up[k] = true; left--; continue; }
      poll_task(t);
      if (t->state != T_RUNNING) {
        char name[128], st[64], last[1024];
        task_name(t, name, sizeof name);
        log_last_line(t, from[k], last, sizeof last);
        snprintf(err, errn, "%s (%s) did not come up: it %s%s%s (log: %s)", name, t->addr,
                 state_str(t, st, sizeof st), last[0] ? ": " : "", last, t->log);
        t->state = t->state == T_RUNNING ? T_FAILED : t->state;
        rc = -1;
        goto out;
      }
    }
    if (!left) break;
    if (now_s() > end) {
      for (int k = 0; k < n; k++)
        if (!up[k]) {
          ctask *t = &tasks[want[k]];
          char name[128];
          task_name(t, name, sizeof name);
          snprintf(err, errn, "%s (%s) did not say \"serving on\" within %.3g s (log: %s)", name, t->addr,
                   timeout_s, t->log);
          break;
        }
      rc = -1;
      goto out;
    }
    if (sh_interrupted) {
      snprintf(err, errn, "interrupted while waiting for the tasks to come up");
      rc = -1;
      goto out;
    }
    nap_ms(5);
  }
out:
  free(up);
  return rc;
}

static void release_slurm(void);
static void release_slurm_as(bool verbose);

static void stop_all(int grace_ms) {
  for (int i = 0; i < ntasks; i++) {
    poll_task(&tasks[i]);
    if (tasks[i].shared) continue;
    if (tasks[i].in_fd > 0) close(tasks[i].in_fd), tasks[i].in_fd = -1;   /* ssh: EOF stops it */
    else if (tasks[i].state == T_RUNNING) kill(tasks[i].pid, SIGTERM);
  }
  for (int i = 0; i < ntasks; i++) stop_task(&tasks[i], SIGTERM, grace_ms);
  if (launcher.pid > 0) stop_task(&launcher, SIGTERM, grace_ms);
}

/* At exit: stop the tasks, and remove their logs unless TFSH_KEEP_LOGS is set. */
static void at_exit(void) {
  if (atexit_done) return;
  atexit_done = true;
  stop_all(2000);
  release_slurm();
  const char *keep = getenv("TFSH_KEEP_LOGS");
  if (logdir[0] && !(keep && *keep && strcmp(keep, "0"))) {
    for (int i = 0; i < ntasks; i++) unlink(tasks[i].log);
    rmdir(logdir);
  }
}

/* ---- the operations (shared by magics and the tfsh module) -------------------------- */

/* The spec as canonical JSON {"job": {"index": "addr"}}, in the spec's task order; with
 * lists, {"job": ["addr", ...]} (the line a user pastes into tf.train.ClusterSpec(...)) for
 * every job without gaps. */
static char *cluster_json_as(const rt_cluster *c, bool lists) {
  sh_buf b = {0};
  sh_buf_putc(&b, '{');
  for (int i = 0; i < c->n; i++) {
    bool seen = false;
    for (int k = 0; k < i; k++) seen |= !strcmp(c->tasks[k].job, c->tasks[i].job);
    if (seen) continue;
    int n = rt_cluster_num_tasks(c, c->tasks[i].job);
    bool dense = lists;
    for (int k = 0; k < n && dense; k++) dense = rt_cluster_find(c, c->tasks[i].job, k) != NULL;
    sh_buf_printf(&b, "%s\"%s\": %c", b.len > 1 ? ", " : "", c->tasks[i].job, dense ? '[' : '{');
    for (int k = 0; dense && k < n; k++)
      sh_buf_printf(&b, "%s\"%s\"", k ? ", " : "", rt_cluster_find(c, c->tasks[i].job, k)->addr);
    bool first = true;
    for (int k = i; !dense && k < c->n; k++)
      if (!strcmp(c->tasks[k].job, c->tasks[i].job)) {
        sh_buf_printf(&b, "%s\"%d\": \"%s\"", first ? "" : ", ", c->tasks[k].index, c->tasks[k].addr);
        first = false;
      }
    sh_buf_putc(&b, dense ? ']' : '}');
  }
  sh_buf_putc(&b, '}');
  char *s = xstrndup(b.data, b.len);
  sh_buf_free(&b);
  return s;
}

static char *cluster_json(const rt_cluster *c) { return cluster_json_as(c, false); }

static int ctask_cmp(const void *a, const void *b) {
  const ctask *x = a, *y = b;
  int c = strcmp(x->job, y->job);
  return c ? c : x->index - y->index;
}

static int running_count(void) {
  int n = 0;
  poll_all();
  for (int i = 0; i < ntasks; i++) n += tasks[i].state == T_RUNNING;
  return n;
}

/* %cluster up's words: flags (--slurm, --hosts H, ...) anywhere, the rest the SPEC (a
 * JSON object is one word, spaces and all). */
typedef struct up_opts {
  bool slurm, insecure;
  char hosts[1024], partition[128], time[64], ssh_user[64], tfsh[1024];
  int port_base;               /* 0: chosen */
  char spec[8192];
} up_opts;

static int parse_up_args(const char *args, up_opts *o) {
  memset(o, 0, sizeof *o);
  size_t off = 0;
  const char *p = args;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (!*p) break;
    const char *w = p;
    if (*p == '{') {   /* a JSON object: to its closing brace */
      int depth = 0;
      bool str = false;
      for (; *p; p++) {
        if (str) { if (*p == '\\' && p[1]) p++; else if (*p == '"') str = false; continue; }
        if (*p == '"') str = true;
        else if (*p == '{') depth++;
        else if (*p == '}' && --depth == 0) { p++; break; }
      }
    } else {
      while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
    }
    size_t len = (size_t)(p - w);
    if (len > 2 && w[0] == '-' && w[1] == '-') {
      char flag[64];
      snprintf(flag, sizeof flag, "%.*s", (int)(len < 63 ? len : 63), w);
      if (!strcmp(flag, "--slurm")) { o->slurm = true; continue; }
      if (!strcmp(flag, "--insecure")) { o->insecure = true; continue; }
      char *dst = NULL;
      size_t dn = 0;
      if (!strcmp(flag, "--hosts")) dst = o->hosts, dn = sizeof o->hosts;
      else if (!strcmp(flag, "--partition")) dst = o->partition, dn = sizeof o->partition;
      else if (!strcmp(flag, "--time")) dst = o->time, dn = sizeof o->time;
      else if (!strcmp(flag, "--user")) dst = o->ssh_user, dn = sizeof o->ssh_user;
      else if (!strcmp(flag, "--tfsh")) dst = o->tfsh, dn = sizeof o->tfsh;
      else if (strcmp(flag, "--port-base")) {
        sh_raise(sh_ValueError, "%%cluster up: unknown option %s (options: --slurm [--partition P] [--time T], "
                 "--hosts H1,H2 [--user U] [--tfsh PATH] [--insecure], --port-base N)", flag);
        return -1;
      }
      while (*p == ' ' || *p == '\t') p++;
      const char *v = p;
      while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
      if (p == v) { sh_raise(sh_ValueError, "%%cluster up: %s needs a value", flag); return -1; }
      if (dst) {
        snprintf(dst, dn, "%.*s", (int)(p - v), v);
      } else {
        char *end;
        long b = strtol(v, &end, 10);
        if (end != p || b < 1 || b > 65000) {
          sh_raise(sh_ValueError, "%%cluster up: --port-base must be a port number, not '%.*s'", (int)(p - v), v);
          return -1;
        }
        o->port_base = (int)b;
      }
      continue;
    }
    if (off + len + 2 >= sizeof o->spec) { sh_raise(sh_ValueError, "%%cluster up: the spec is too long"); return -1; }
    off += (size_t)snprintf(o->spec + off, sizeof o->spec - off, "%s%.*s", off ? " " : "", (int)len, w);
  }
  return 0;
}

static const char up_usage[] =
  "usage: %cluster up SPEC, where SPEC is one of\n"
  "  ps=1 worker=2                                  task counts: free ports on this host\n"
  "  {\"ps\": 1, \"worker\": 2}                         the same as JSON\n"
  "  {\"ps\": [\"localhost:2222\"], \"worker\": [...]}    addresses (TF's ClusterSpec)\n"
  "  ps|localhost:2222,worker|localhost:2223;...    addresses, the legacy form\n"
  "  --slurm ps=1 worker=2 [--partition P] [--time T]   through Slurm (salloc, srun)\n"
  "  --hosts h1,h2 ps=1 worker=2                    over ssh, tasks round-robin on the hosts";

static void tasks_from(const rt_cluster *c) {
  free(spec_json);
  spec_json = cluster_json(c);
  free(tasks);
  ntasks = c->n;
  tasks = xcalloc((size_t)ntasks, sizeof *tasks);
  for (int i = 0; i < c->n; i++) {
    ctask *t = &tasks[i];
    snprintf(t->job, sizeof t->job, "%s", c->tasks[i].job);
    t->index = c->tasks[i].index;
    snprintf(t->addr, sizeof t->addr, "%s", c->tasks[i].addr);
    t->state = T_FAILED;
    t->label = -1;
    t->in_fd = -1;
  }
  qsort(tasks, (size_t)ntasks, sizeof *tasks, ctask_cmp);
  launch_mode = L_LOCAL;
}

/* Start every task on this host and wait until each serves; err says why not. */
static int up_local(double timeout_s, char *err, size_t errn) {
  int *want = xcalloc((size_t)ntasks, sizeof *want);
  off_t *from = xcalloc((size_t)ntasks, sizeof *from);
  int rc = 0;
  for (int i = 0; i < ntasks; i++) {
    ctask *t = &tasks[i];
    snprintf(t->log, sizeof t->log, "%s/%s-%d.log", logdir, t->job, t->index);
    unlink(t->log);
    from[i] = 0;
    want[i] = i;
    if (spawn(t, err, errn)) { rc = -1; break; }
  }
  if (!rc) rc = wait_up(want, from, ntasks, timeout_s, err, errn);
  free(want);
  free(from);
  if (rc) stop_all(1000);
  return rc;
}

static void print_up(const char *how) {
  printf("cluster up: %d task%s%s, logs in %s\n", ntasks, ntasks == 1 ? "" : "s", how, logdir);
  for (int i = 0; i < ntasks; i++) {
    char name[128];
    task_name(&tasks[i], name, sizeof name);
    printf("  %-24s %-22s pid %d\n", name, tasks[i].addr, (int)tasks[i].pid);
  }
}

static void print_spec_line(void) {
  rt_status st = {0};
  rt_cluster *c = rt_cluster_parse(spec_json, &st);
  if (!c) return;
  char *l = cluster_json_as(c, true);
  printf("cluster = tf.train.ClusterSpec(%s)\n", l);
  free(l);
  rt_cluster_free(c);
}

static int up_slurm(const rt_job_counts *counts, const up_opts *o, double timeout_s);
static int up_ssh(const rt_job_counts *counts, const up_opts *o, double timeout_s);

static int op_up(const char *args, double timeout_s) {
  up_opts o;
  if (parse_up_args(args, &o)) return -1;
  if (!o.spec[0]) {
    sh_raise(sh_ValueError, "%s", up_usage);
    return -1;
  }
  rt_status st = {0};
  rt_job_counts counts;
  int is_counts = rt_job_counts_parse(o.spec, &counts, &st);
  if (is_counts < 0) { sh_raise(sh_ValueError, "%s", st.msg); return -1; }
  if ((o.slurm || o.hosts[0]) && !is_counts) {
    sh_raise(sh_ValueError, "%%cluster up %s: give task counts (ps=1 worker=2): %s chooses the addresses",
             o.slurm ? "--slurm" : "--hosts", o.slurm ? "Slurm" : "tfsh");
    return -1;
  }
  if (o.slurm && o.hosts[0]) {
    sh_raise(sh_ValueError, "%%cluster up: --slurm and --hosts do not go together (Slurm chooses the hosts)");
    return -1;
  }
  rt_cluster *c = is_counts ? NULL : rt_cluster_parse(o.spec, &st);
  if (!is_counts && !c) { sh_raise(sh_ValueError, "%s", st.msg); return -1; }
  int nrun = running_count();
  if (nrun) {
    rt_cluster_free(c);
    sh_raise(sh_RuntimeError, "a cluster is already up (%d task%s running): %%down all first", nrun,
             nrun == 1 ? "" : "s");
    return -1;
  }
  char err[2048];
  if (ensure_logdir(err, sizeof err)) {
    rt_cluster_free(c);
    sh_raise(sh_OSError, "%s", err);
    return -1;
  }
  if (!atexit_done) { static bool reg; if (!reg) { atexit(at_exit); reg = true; } }
  if (o.slurm) return up_slurm(&counts, &o, timeout_s);
  if (o.hosts[0]) return up_ssh(&counts, &o, timeout_s);
  int rc = -1;
  /* ports chosen here may be taken by someone else before the task binds: choose again */
  for (int attempt = 0; attempt < (is_counts ? 3 : 1); attempt++) {
    if (is_counts) {
      rt_cluster_free(c);
      if (!(c = rt_cluster_on_free_ports(&counts, "localhost", &st))) {
        sh_raise(sh_OSError, "%s", st.msg);
        return -1;
      }
    }
    tasks_from(c);
    rc = up_local(timeout_s, err, sizeof err);
    if (!rc || !strstr(err, "already in use")) break;
  }
  rt_cluster_free(c);
  if (rc) {
    sh_raise(sh_RuntimeError, "cluster up: %s", err);
    return -1;
  }
  print_up("");
  if (is_counts) print_spec_line();
  fflush(stdout);
  return 0;
}

/* "ps/0", "/job:ps/task:0", "/job:ps/replica:0/task:0", "worker:1", "ps" (one task). */
static ctask *find_task(const char *spec) {
  char job[64] = "";
  int index = -1;
  const char *s = spec;
  while (*s == ' ') s++;
  if (!strncmp(s, "/job:", 5)) {
    s += 5;
    size_t n = strcspn(s, "/");
    snprintf(job, sizeof job, "%.*s", (int)n, s);
    const char *tk = strstr(s, "/task:");
    if (tk) index = atoi(tk + 6);
  } else {
    size_t n = strcspn(s, "/:");
    snprintf(job, sizeof job, "%.*s", (int)n, s);
    if (s[n]) {
      char *end;
      long v = strtol(s + n + 1, &end, 10);
      if (end != s + n + 1 && !*end) index = (int)v;
      else index = -2;
    }
  }
  if (index == -1) {   /* a bare job with one task */
    int cnt = 0, at = -1;
    for (int i = 0; i < ntasks; i++)
      if (!strcmp(tasks[i].job, job)) cnt++, at = i;
    if (cnt == 1) return &tasks[at];
  }
  for (int i = 0; i < ntasks; i++)
    if (!strcmp(tasks[i].job, job) && tasks[i].index == index) return &tasks[i];
  sh_buf b = {0};
  for (int i = 0; i < ntasks; i++) {
    char name[128];
    task_name(&tasks[i], name, sizeof name);
    sh_buf_printf(&b, "%s%s", i ? ", " : "", name);
  }
  if (!ntasks)
    sh_raise(sh_ValueError, "no task '%s': no cluster is up (%%cluster up SPEC starts one)", spec);
  else
    sh_raise(sh_ValueError, "no task '%s' in the cluster; its tasks are: %s (write ps/0, worker:1 or /job:ps/task:0)",
             spec, b.data);
  sh_buf_free(&b);
  return NULL;
}

static void fmt_uptime(double s, char *buf, size_t n) {
  if (s < 60) snprintf(buf, n, "%.1fs", s);
  else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
  else snprintf(buf, n, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

static void probe_report(const rt_cluster *c);

static int op_list(void) {
  poll_all();
  if (!ntasks) {
    if (attached) {
      printf("attached (no tasks started by this shell):\n");
      probe_report(attached);
      return 0;
    }
    printf("no cluster: %%cluster up SPEC starts one, %%cluster attach SPEC|host:port attaches\n");
    return 0;
  }
  bool remote = launch_mode != L_LOCAL;
  if (launch_mode == L_SLURM)
    printf("slurm job %s (srun pid %d; %%down releases it)\n", slurm_job[0] ? slurm_job : "(released)", (int)launcher.pid);
  if (launch_mode == L_SSH) printf("over ssh (PID: the local ssh)\n");
  printf("%-24s %-22s %s%-8s %-14s %s\n", "TASK", "ADDRESS", remote ? "NODE         " : "", "PID", "STATE", "UPTIME");
  double now = now_s();
  for (int i = 0; i < ntasks; i++) {
    ctask *t = &tasks[i];
    char name[128], st[64], up[32], node[300] = "";
    task_name(t, name, sizeof name);
    if (t->state == T_RUNNING) fmt_uptime(now - t->started, up, sizeof up);
    else snprintf(up, sizeof up, "-");
    if (remote) snprintf(node, sizeof node, "%-12s ", t->node);
    printf("%-24s %-22s %s%-8d %-14s %s\n", name, t->addr, node, (int)t->pid, state_str(t, st, sizeof st), up);
  }
  printf("logs: %s\n", logdir);
  fflush(stdout);
  return 0;
}

static void say_state(ctask *t) {   /* "/job:ps/task:0: exited(0)" */
  char name[128], st[64];
  task_name(t, name, sizeof name);
  printf("%s: %s\n", name, state_str(t, st, sizeof st));
}

/* Slurm runs every task in one job step: one cannot be stopped alone. */
static bool refuse_shared(const ctask *t) {
  if (!t->shared) return false;
  sh_raise(sh_RuntimeError, "the tasks run as one Slurm job step (srun): %%down all stops them and releases the "
           "allocation; one task cannot be stopped or restarted alone");
  return true;
}

/* Stop one task with sig (waiting up to ms) and say its state. */
static int stop_one(const char *which, int sig, int ms) {
  ctask *t = find_task(which ? which : "");
  if (!t || refuse_shared(t)) return -1;
  stop_task(t, sig, ms);
  say_state(t);
  fflush(stdout);
  return 0;
}

static int op_down(const char *which) {
  poll_all();
  if (!which || !*which || !strcmp(which, "all")) {
    if (!ntasks) { printf("no cluster\n"); return 0; }
    stop_all(3000);
    for (int i = 0; i < ntasks; i++) say_state(&tasks[i]);
    if (launch_mode == L_SLURM && slurm_job[0]) release_slurm_as(true);
    fflush(stdout);
    return 0;
  }
  return stop_one(which, SIGTERM, 3000);
}

static int op_kill(const char *which) { return stop_one(which, SIGKILL, 2000); }

static int op_restart(const char *which, double timeout_s) {
  ctask *t = find_task(which ? which : "");
  if (!t || refuse_shared(t)) return -1;
  if (launch_mode == L_SSH) {
    sh_raise(sh_RuntimeError, "%%restart of a task started over ssh is not supported: %%down all, then %%cluster up");
    return -1;
  }
  stop_task(t, SIGTERM, 3000);
  char err[2048], name[128];
  task_name(t, name, sizeof name);
  FILE *f = fopen(t->log, "a");
  if (f) { fprintf(f, "---- %%restart %s ----\n", name); fclose(f); }
  off_t from = file_size(t->log);
  int want = (int)(t - tasks);
  if (spawn(t, err, sizeof err) || wait_up(&want, &from, 1, timeout_s, err, sizeof err)) {
    stop_task(t, SIGTERM, 1000);
    sh_raise(sh_RuntimeError, "restart: %s", err);
    return -1;
  }
  printf("%s: running (pid %d)\n", name, (int)t->pid);
  fflush(stdout);
  return 0;
}

static sh_obj *read_tail(ctask *t, int64_t n) {
  FILE *f = fopen(t->log, "r");
  if (!f) return sh_raise(sh_OSError, "cannot read %s: %s", t->log, strerror(errno));
  sh_buf all = {0};
  if (t->label < 0) {
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) sh_buf_put(&all, chunk, got);
  } else {   /* a shared log: t's lines, without their label */
    char line[8192], *mine;
    while (fgets(line, sizeof line, f))
      if ((mine = line_of(t, line))) sh_buf_puts(&all, mine);
  }
  fclose(f);
  size_t end = all.len, start = end;
  if (end && all.data[end - 1] == '\n') start--;
  int64_t lines = 0;
  while (start > 0) {
    if (all.data[start - 1] == '\n' && ++lines == n) break;
    start--;
  }
  if (n <= 0) start = end;
  sh_obj *s = sh_strn(all.data ? all.data + start : "", end - start);
  sh_buf_free(&all);
  return s;
}

static int op_logs(const char *args) {
  char which[256] = "";
  int64_t n = 20;
  if (sscanf(args, "%255s %ld", which, &n) < 1) {
    sh_raise(sh_ValueError, "usage: %%logs TASK [N]");
    return -1;
  }
  ctask *t = find_task(which);
  if (!t) return -1;
  sh_obj *s = read_tail(t, n);
  if (!s) return -1;
  fputs(sh_str_cstr(s), stdout);
  fflush(stdout);
  sh_decref(s);
  return 0;
}

/* ---- attach: ask tasks for their status ---------------------------------------------- */

typedef struct probe {
  char addr[256];
  char filter[160];        /* "" : every task of the target's cluster */
  int timeout_ms;
  int rc;
  rt_status st;
  double secs;
  volatile int stop;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
} probe;

static void *probe_timer(void *arg) {
  probe *p = arg;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  /* the master's own bound + 0.2 s: a master that does not answer at all is given up on
   * before the session's "waiting for the master" report (1.5 s) */
  long ns = ts.tv_nsec + (long)(p->timeout_ms % 1000) * 1000000L + 200000000L;
  ts.tv_sec += p->timeout_ms / 1000 + ns / 1000000000L;
  ts.tv_nsec = ns % 1000000000L;
  pthread_mutex_lock(&p->mu);
  while (!p->done)
    if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) == ETIMEDOUT) break;
  if (!p->done) p->stop = 1;
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* CreateSession against addr, limited to filter: the master there asks those tasks for
 * their status (GetStatus), and checks that their cluster specs agree. */
static void *probe_run(void *arg) {
  probe *p = arg;
  pthread_t timer;
  pthread_create(&timer, NULL, probe_timer, p);
  rt_graph *g = rt_graph_new();
  const char *filters[1] = {p->filter};
  rt_session_config cfg = {.operation_timeout_ms = p->timeout_ms, .n_device_filters = p->filter[0] ? 1 : 0,
                           .device_filters = filters, .n_cpus = 1, .interrupt = &p->stop};
  double t0 = now_s();
  rt_session *s = rt_session_new(p->addr, g, &cfg, &p->st);
  p->secs = now_s() - t0;
  p->rc = s ? 0 : (p->st.code ? p->st.code : RT_UNKNOWN);
  if (!s && p->stop) rt_error(&p->st, RT_DEADLINE_EXCEEDED, "no answer within %d ms", p->timeout_ms);
  rt_session_free(s);
  rt_graph_free(g);
  pthread_mutex_lock(&p->mu);
  p->done = true;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(timer, NULL);
  return NULL;
}

static void run_probes(probe *ps, int n) {
  pthread_t *th = xcalloc((size_t)n + 1, sizeof *th);
  for (int i = 0; i < n; i++) {
    pthread_mutex_init(&ps[i].mu, NULL);
    pthread_cond_init(&ps[i].cv, NULL);
    pthread_create(&th[i], NULL, probe_run, &ps[i]);
  }
  for (int i = 0; i < n; i++) {
    pthread_join(th[i], NULL);
    pthread_mutex_destroy(&ps[i].mu);
    pthread_cond_destroy(&ps[i].cv);
  }
  free(th);
}

static int probe_timeout_ms(void) {
  const char *e = getenv("TFSH_ATTACH_TIMEOUT_MS");
  int v = e ? atoi(e) : 0;
  return v > 0 ? v : 1200;
}

/* One line per task: does it answer? Returns how many answered. */
static int probe_cluster(const rt_cluster *c, sh_obj *out_list) {
  probe *ps = xcalloc((size_t)c->n + 1, sizeof *ps);
  for (int i = 0; i < c->n; i++) {
    snprintf(ps[i].addr, sizeof ps[i].addr, "%s", c->tasks[i].addr);
    snprintf(ps[i].filter, sizeof ps[i].filter, "/job:%s/task:%d", c->tasks[i].job, c->tasks[i].index);
    ps[i].timeout_ms = probe_timeout_ms();
  }
  run_probes(ps, c->n);
  int up = 0;
  for (int i = 0; i < c->n; i++) {
    char name[160], state[1200];
    snprintf(name, sizeof name, "/job:%s/task:%d", c->tasks[i].job, c->tasks[i].index);
    if (!ps[i].rc) snprintf(state, sizeof state, "up (%.0f ms)", ps[i].secs * 1e3), up++;
    else if (ps[i].st.code == RT_DEADLINE_EXCEEDED || ps[i].st.code == RT_UNAVAILABLE)
      snprintf(state, sizeof state, "no answer");   /* silent, or gone since we last talked */
    else snprintf(state, sizeof state, "error: %s", ps[i].st.msg);
    sh_obj *row = sh_tuple_of(3, sh_str(name), sh_str(c->tasks[i].addr), sh_str(state));
    sh_list_append_steal(out_list, row);
  }
  free(ps);
  return up;
}

static void print_rows(sh_obj *rows) {
  printf("%-28s %-22s %s\n", "TASK", "ADDRESS", "STATUS");
  for (int64_t i = 0; i < SH_LIST_N(rows); i++) {
    sh_obj *r = SH_LIST_ITEMS(rows)[i];
    printf("%-28s %-22s %s\n", sh_str_cstr(SH_TUPLE_ITEMS(r)[0]), sh_str_cstr(SH_TUPLE_ITEMS(r)[1]),
           sh_str_cstr(SH_TUPLE_ITEMS(r)[2]));
  }
  fflush(stdout);
}

static void probe_report(const rt_cluster *c) {
  sh_obj *rows = sh_list_new(0);
  int up = probe_cluster(c, rows);
  print_rows(rows);
  printf("%d of %d task%s answer\n", up, c->n, c->n == 1 ? "" : "s");
  fflush(stdout);
  sh_decref(rows);
}

/* A spec, or one "host:port" (the cluster it belongs to when this shell knows it). */
static sh_obj *op_attach(const char *arg, bool print) {
  while (*arg == ' ') arg++;
  if (!*arg) return sh_raise(sh_ValueError, "usage: %%cluster attach SPEC|host:port");
  rt_status st = {0};
  rt_cluster *c = NULL;
  bool single = *arg != '{' && !strchr(arg, '|');
  if (!single) {
    if (!(c = rt_cluster_parse(arg, &st))) return sh_raise(sh_ValueError, "%s", st.msg);
  } else {
    const rt_cluster *known[2] = {attached, NULL};
    rt_cluster *mine = NULL;
    if (spec_json) mine = rt_cluster_parse(spec_json, &st);
    known[1] = mine;
    for (int k = 0; k < 2 && !c; k++)
      for (int i = 0; known[k] && i < known[k]->n && !c; i++)
        if (!strcmp(known[k]->tasks[i].addr, arg)) c = rt_cluster_copy(known[k]);
    rt_cluster_free(mine);
  }
  sh_obj *rows = sh_list_new(0);
  if (c) {
    int up = probe_cluster(c, rows);
    rt_cluster_free(attached);
    attached = c;
    if (print) {
      print_rows(rows);
      printf("%d of %d task%s answer\n", up, c->n, c->n == 1 ? "" : "s");
      fflush(stdout);
    }
    return rows;
  }
  /* An address alone: its master answers for every task of its own cluster. */
  probe p = {.timeout_ms = probe_timeout_ms()};
  snprintf(p.addr, sizeof p.addr, "%s", arg);
  run_probes(&p, 1);
  char state[1400];
  if (!p.rc) snprintf(state, sizeof state, "up: it and every task of its cluster answer (%.0f ms)", p.secs * 1e3);
  else if (p.st.code == RT_DEADLINE_EXCEEDED && strstr(p.st.msg, "waiting for"))
    snprintf(state, sizeof state, "up, but %s", strstr(p.st.msg, "waiting for"));
  else if (p.st.code == RT_DEADLINE_EXCEEDED || p.st.code == RT_UNAVAILABLE)
    snprintf(state, sizeof state, "no answer");
  else snprintf(state, sizeof state, "error: %s", p.st.msg);
  sh_list_append_steal(rows, sh_tuple_of(3, sh_str("?"), sh_str(arg), sh_str(state)));
  if (print) {
    print_rows(rows);
    printf("(give the cluster spec to list every task)\n");
    fflush(stdout);
  }
  return rows;
}

/* ---- Slurm and ssh -------------------------------------------------------------------- */

/* name on PATH? (the path in buf) */
static bool on_path(const char *name, char *buf, size_t n) {
  const char *path = getenv("PATH");
  if (!path) return false;
  for (const char *p = path;;) {
    size_t l = strcspn(p, ":");
    snprintf(buf, n, "%.*s/%s", (int)l, l ? p : ".", name);
    if (!access(buf, X_OK)) return true;
    if (!p[l]) return false;
    p += l + 1;
  }
}

/* Run argv to its end (bounded; Ctrl-C stops waiting), stdout and stderr into out.
 * Returns its exit status, or -1 with err (could not run, or timed out: then killed). */
static int run_capture(char *const *argv, double timeout_s, sh_buf *out, char *err, size_t errn) {
  int p[2];
  if (pipe2(p, O_CLOEXEC)) { snprintf(err, errn, "pipe: %s", strerror(errno)); return -1; }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    /* A shell that dies while salloc still waits for its allocation takes salloc with it
     * (a pending allocation left behind would be granted to nobody). */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    dup2(p[1], 1);
    dup2(p[1], 2);
    close_range(3, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(argv[0], argv);
    dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(p[1]);
  if (pid < 0) { close(p[0]); snprintf(err, errn, "fork: %s", strerror(errno)); return -1; }
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  double end = now_s() + timeout_s;
  bool open_ = true;
  int rc = -1, ws;
  for (;;) {
    char buf[4096];
    ssize_t got;
    while (open_ && (got = read(p[0], buf, sizeof buf)) != 0) {
      if (got < 0) break;
      sh_buf_put(out, buf, (size_t)got);
    }
    if (open_ && got == 0) open_ = false;
    pid_t r = waitpid(pid, &ws, WNOHANG);
    if (r == pid && !open_) { rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws); break; }
    if (r == pid) open_ = false, rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    if (rc >= 0 && !open_) break;
    if (now_s() > end || sh_interrupted) {
      kill(pid, SIGTERM);
      nap_ms(200);
      kill(pid, SIGKILL);
      waitpid(pid, &ws, 0);
      snprintf(err, errn, "%s %s after %.0f s", argv[0], sh_interrupted ? "interrupted" : "gave no answer", timeout_s);
      rc = -2;
      break;
    }
    nap_ms(10);
  }
  close(p[0]);
  sh_buf_putc(out, 0);
  out->len--;
  return rc == -2 ? -1 : rc;
}

static void last_line_of(const char *text, char *buf, size_t n) {
  buf[0] = 0;
  const char *end = text + strlen(text);
  while (end > text && (end[-1] == '\n' || end[-1] == '\r')) end--;
  const char *start = end;
  while (start > text && start[-1] != '\n') start--;
  snprintf(buf, n, "%.*s", (int)(end - start), start);
}

static double env_seconds(const char *name, double dflt) {
  const char *e = getenv(name);
  double v = e ? atof(e) : 0;
  return v > 0 ? v : dflt;
}

/* scancel the allocation (bounded); says so when verbose. */
static void release_slurm_as(bool verbose) {
  if (!slurm_job[0]) return;
  char *argv[] = {"scancel", slurm_job, NULL}, err[512];
  sh_buf out = {0};
  int rc = run_capture(argv, env_seconds("TFSH_SLURM_TIMEOUT", 60), &out, err, sizeof err);
  if (verbose) {
    if (rc == 0) printf("slurm job %s released (scancel)\n", slurm_job);
    else printf("slurm job %s: scancel failed (%s): cancel it yourself\n", slurm_job, rc < 0 ? err : out.data);
  }
  sh_buf_free(&out);
  slurm_job[0] = 0;
}

static void release_slurm(void) { release_slurm_as(false); }

/* Slurm: salloc --no-shell for the allocation, one srun for every task (tfsh server --slurm,
 * which derives the cluster as SlurmClusterResolver does), output in one log labelled by
 * rank; the cluster the tasks derived is read back from that log. */
static int up_slurm(const rt_job_counts *counts, const up_opts *o, double timeout_s) {
  char path[4096], err[2048];
  static const char *const need[] = {"salloc", "srun", "scancel"};
  for (int i = 0; i < 3; i++)
    if (!on_path(need[i], path, sizeof path)) {
      sh_raise(sh_RuntimeError, "%%cluster up --slurm runs Slurm's salloc, srun and scancel, and %s is not on PATH "
               "(run it on a Slurm login node, or inside an allocation use srun tfsh server --slurm)", need[i]);
      return -1;
    }
  int n = rt_job_counts_total(counts);
  char ntasks_arg[32], part[200], tim[100];
  snprintf(ntasks_arg, sizeof ntasks_arg, "--ntasks=%d", n);
  snprintf(part, sizeof part, "--partition=%s", o->partition);
  snprintf(tim, sizeof tim, "--time=%s", o->time);
  char *sargv[8] = {"salloc", "--no-shell", "--job-name=tfsh", ntasks_arg};
  int k = 4;
  if (o->partition[0]) sargv[k++] = part;
  if (o->time[0]) sargv[k++] = tim;
  sargv[k] = NULL;
  printf("asking Slurm for %d task%s (salloc %s%s%s%s%s)...\n", n, n == 1 ? "" : "s", ntasks_arg,
         o->partition[0] ? " " : "", o->partition[0] ? part : "", o->time[0] ? " " : "", o->time[0] ? tim : "");
  fflush(stdout);
  sh_buf out = {0};
  int rc = run_capture(sargv, env_seconds("TFSH_SLURM_TIMEOUT", 300), &out, err, sizeof err);
  const char *at = out.data ? strstr(out.data, "job allocation ") : NULL;
  slurm_job[0] = 0;
  if (at) snprintf(slurm_job, sizeof slurm_job, "%ld", strtol(at + 15, NULL, 10));
  if (rc != 0 || !slurm_job[0]) {
    char last[1024];
    last_line_of(out.data ? out.data : "", last, sizeof last);
    sh_buf_free(&out);
    release_slurm();
    sh_raise(sh_RuntimeError, "cluster up --slurm: salloc %s: %s", rc < 0 ? "failed" : "gave no allocation",
             rc < 0 ? err : last[0] ? last : "(no output)");
    return -1;
  }
  sh_buf_free(&out);
  long id = atol(slurm_job);
  int base = o->port_base ? o->port_base : 20000 + (int)(id % 4000) * 10;   /* two jobs on a node differ */
  char exe[4096];
  ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[el > 0 ? el : 0] = 0;
  char jobid[64], nt[32], pb[32];
  snprintf(jobid, sizeof jobid, "--jobid=%s", slurm_job);
  snprintf(nt, sizeof nt, "--ntasks=%d", n);
  snprintf(pb, sizeof pb, "%d", base);
  char *argv[16 + RT_MAX_JOBS], words[RT_MAX_JOBS][80];
  k = 0;
  argv[k++] = "srun";
  argv[k++] = jobid;
  argv[k++] = nt;
  argv[k++] = "--label";
  argv[k++] = "--kill-on-bad-exit=1";
  argv[k++] = exe;
  argv[k++] = "server";
  argv[k++] = "--slurm";
  for (int j = 0; j < counts->n; j++) {
    snprintf(words[j], sizeof words[j], "%s=%d", counts->jobs[j].name, counts->jobs[j].count);
    argv[k++] = words[j];
  }
  argv[k++] = "--port-base";
  argv[k++] = pb;
  if (o->insecure) argv[k++] = "--insecure";
  argv[k] = NULL;
  memset(&launcher, 0, sizeof launcher);
  launcher.label = -1;
  launcher.in_fd = -1;
  snprintf(launcher.job, sizeof launcher.job, "srun");
  snprintf(launcher.log, sizeof launcher.log, "%s/slurm-%s.log", logdir, slurm_job);
  if (spawn_argv(&launcher, "srun", argv, true, false, err, sizeof err)) {
    release_slurm();
    sh_raise(sh_RuntimeError, "cluster up --slurm: %s", err);
    return -1;
  }
  /* the cluster, as the tasks derived it: "...; cluster ps/0=node01:20000 worker/0=..." */
  rt_cluster *c = NULL;
  double end = now_s() + timeout_s;
  while (!c) {
    FILE *f = fopen(launcher.log, "r");
    char line[8192];
    while (f && !c && fgets(line, sizeof line, f)) {
      char *cl = strstr(line, "; cluster ");
      if (!cl) continue;
      c = rt_cluster_new();
      for (char *save = NULL, *w = strtok_r(cl + 10, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
        char *slash = strchr(w, '/'), *eq = strchr(w, '=');
        if (!slash || !eq || eq < slash) continue;
        *slash = *eq = 0;
        rt_cluster_add(c, w, atoi(slash + 1), eq + 1);
      }
    }
    if (f) fclose(f);
    if (c) break;
    poll_task(&launcher);
    if (launcher.state != T_RUNNING || now_s() > end || sh_interrupted) {
      char last[1024], st[64];
      log_last_line(&launcher, 0, last, sizeof last);
      snprintf(err, sizeof err, "srun %s%s%s (log: %s)",
               launcher.state != T_RUNNING ? state_str(&launcher, st, sizeof st)
               : sh_interrupted ? "interrupted" : "started no task in time",
               last[0] ? ": " : "", last, launcher.log);
      stop_task(&launcher, SIGTERM, 2000);
      release_slurm();
      sh_raise(sh_RuntimeError, "cluster up --slurm: %s", err);
      return -1;
    }
    nap_ms(20);
  }
  tasks_from(c);
  rt_cluster_free(c);
  launch_mode = L_SLURM;
  /* ranks fill the jobs in name order (tasks_from sorted them so) */
  int *want = xcalloc((size_t)ntasks, sizeof *want);
  off_t *from = xcalloc((size_t)ntasks, sizeof *from);
  for (int i = 0; i < ntasks; i++) {
    ctask *t = &tasks[i];
    t->label = i;
    t->shared = true;
    t->pid = launcher.pid;
    t->state = T_RUNNING;
    t->started = launcher.started;
    snprintf(t->log, sizeof t->log, "%s", launcher.log);
    snprintf(t->node, sizeof t->node, "%.*s", (int)strcspn(t->addr, ":"), t->addr);
    want[i] = i;
  }
  rc = wait_up(want, from, ntasks, timeout_s, err, sizeof err);
  free(want);
  free(from);
  if (rc) {
    stop_all(2000);
    release_slurm();
    sh_raise(sh_RuntimeError, "cluster up --slurm: %s", err);
    return -1;
  }
  char how[64];
  snprintf(how, sizeof how, " in slurm job %s", slurm_job);
  print_up(how);
  print_spec_line();
  fflush(stdout);
  return 0;
}

static bool shell_safe(const char *s) {
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("._-:/@+,", *s)) return false;
  return true;
}

/* ssh: one `ssh HOST tfsh server ...` per task, round-robin over the hosts, ports from
 * --port-base (2222) on; its stdin stays open, and the task ends when it closes (%down, the
 * shell's exit or death). A cluster key travels on that stdin, never a command line. */
static int up_ssh(const rt_job_counts *counts, const up_opts *o, double timeout_s) {
  char path[4096], err[2048];
  if (!on_path("ssh", path, sizeof path)) {
    sh_raise(sh_RuntimeError, "%%cluster up --hosts runs ssh, and ssh is not on PATH");
    return -1;
  }
  char hosts[RT_MAX_JOBS * 8][256];
  int nh = 0;
  for (const char *p = o->hosts; *p && nh < (int)(sizeof hosts / sizeof *hosts);) {
    size_t l = strcspn(p, ",");
    if (l) snprintf(hosts[nh++], sizeof hosts[0], "%.*s", (int)l, p);
    p += l + (p[l] == ',');
  }
  for (int h = 0; h < nh; h++)
    if (!shell_safe(hosts[h]) || hosts[h][0] == '-') {
      sh_raise(sh_ValueError, "%%cluster up --hosts: '%s' is not a host name", hosts[h]);
      return -1;
    }
  if (!nh || (o->tfsh[0] && !shell_safe(o->tfsh)) || (o->ssh_user[0] && !shell_safe(o->ssh_user))) {
    sh_raise(sh_ValueError, "%%cluster up --hosts: give host names (h1,h2), and a plain --tfsh path and --user");
    return -1;
  }
  int base = o->port_base ? o->port_base : 2222, k = 0;
  rt_cluster *c = rt_cluster_new();
  for (int j = 0; j < counts->n; j++)
    for (int i = 0; i < counts->jobs[j].count; i++, k++) {
      char addr[300];
      snprintf(addr, sizeof addr, "%s:%d", hosts[k % nh], base + k);
      rt_cluster_add(c, counts->jobs[j].name, i, addr);
    }
  rt_status st = {0};
  if (base + k > 65535 || rt_cluster_check(c, &st)) {
    rt_cluster_free(c);
    sh_raise(sh_ValueError, "%%cluster up --hosts: %s", base + k > 65535 ? "ports past 65535: lower --port-base" : st.msg);
    return -1;
  }
  tasks_from(c);
  rt_cluster_free(c);
  launch_mode = L_SSH;
  /* the key, sent on each task's stdin */
  sh_buf key = {0};
  const char *kf = getenv("TFSH_CLUSTER_KEY");
  if (kf && *kf) {
    FILE *f = fopen(kf, "r");
    if (!f) {
      sh_raise(sh_OSError, "cannot read the cluster key %s: %s", kf, strerror(errno));
      return -1;
    }
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) sh_buf_put(&key, buf, got);
    fclose(f);
    while (key.len && key.data[key.len - 1] == '\n') key.len--;
    sh_buf_puts(&key, "\n\n");
  }
  int ct = (int)env_seconds("TFSH_SSH_CONNECT_TIMEOUT", 10);
  char cto[64];
  snprintf(cto, sizeof cto, "ConnectTimeout=%d", ct);
  const char *tfsh = o->tfsh[0] ? o->tfsh : "tfsh";
  int rc = 0;
  for (int i = 0; i < ntasks && !rc; i++) {
    ctask *t = &tasks[i];
    snprintf(t->node, sizeof t->node, "%.*s", (int)strcspn(t->addr, ":"), t->addr);
    snprintf(t->log, sizeof t->log, "%s/%s-%d.log", logdir, t->job, t->index);
    char *cmd = xasprintf(
      "echo \"tfsh-ssh: connected to $(hostname)\"; T=$(command -v %s) || { echo \"tfsh: %s is not found on "
      "$(hostname) (PATH=$PATH): install tfsh there, or give %%cluster up --tfsh PATH\" >&2; exit 127; }; "
      "exec \"$T\" server --cluster '%s' --job %s --task %d --watch-stdin%s%s",
      tfsh, tfsh, spec_json, t->job, t->index, key.len ? " --cluster-key -" : "", o->insecure ? " --insecure" : "");
    char *argv[12];
    int a = 0;
    argv[a++] = "ssh";
    argv[a++] = "-T";
    argv[a++] = "-o";
    argv[a++] = "BatchMode=yes";
    argv[a++] = "-o";
    argv[a++] = cto;
    if (o->ssh_user[0]) argv[a++] = "-l", argv[a++] = (char *)o->ssh_user;
    argv[a++] = t->node;
    argv[a++] = cmd;
    argv[a] = NULL;
    rc = spawn_argv(t, "ssh", argv, true, true, err, sizeof err);
    free(cmd);
    if (!rc && key.len) {
      void (*old)(int) = signal(SIGPIPE, SIG_IGN);
      if (write(t->in_fd, key.data, key.len) != (ssize_t)key.len) { /* it died: wait_up says why */ }
      signal(SIGPIPE, old);
    }
  }
  sh_buf_free(&key);
  /* first every host answers (within ssh's ConnectTimeout), then every task serves */
  double end = now_s() + ct + 2;
  for (int i = 0; i < ntasks && !rc; i++) {
    ctask *t = &tasks[i];
    while (!log_has(t, 0, "tfsh-ssh: connected")) {
      poll_task(t);
      char name[128], last[1024], stx[64];
      task_name(t, name, sizeof name);
      if (t->state != T_RUNNING) {
        log_last_line(t, 0, last, sizeof last);
        snprintf(err, sizeof err, "host %s: ssh %s%s%s, so %s did not start (log: %s)", t->node,
                 state_str(t, stx, sizeof stx), last[0] ? ": " : "", last, name, t->log);
        rc = -1;
        break;
      }
      if (now_s() > end || sh_interrupted) {
        snprintf(err, sizeof err, "host %s did not answer within %d s (ssh -o ConnectTimeout=%d), so %s did not start "
                 "(log: %s)", t->node, ct, ct, name, t->log);
        rc = -1;
        break;
      }
      nap_ms(10);
    }
  }
  if (!rc) {
    int *want = xcalloc((size_t)ntasks, sizeof *want);
    off_t *from = xcalloc((size_t)ntasks, sizeof *from);
    for (int i = 0; i < ntasks; i++) want[i] = i;
    rc = wait_up(want, from, ntasks, timeout_s, err, sizeof err);
    free(want);
    free(from);
  }
  if (rc) {
    stop_all(1000);
    sh_raise(sh_RuntimeError, "cluster up --hosts: %s", err);
    return -1;
  }
  print_up(" over ssh");
  print_spec_line();
  fflush(stdout);
  return 0;
}

/* ---- magics ---------------------------------------------------------------------------- */

static double up_timeout(void) {
  const char *e = getenv("TFSH_CLUSTER_UP_TIMEOUT");
  double v = e ? atof(e) : 0;
  return v > 0 ? v : 15;
}

static int magic_cluster(const char *args) {
  if (!*args) return op_list();
  size_t n = strcspn(args, " \t");
  const char *rest = args + n;
  while (*rest == ' ' || *rest == '\t') rest++;
  if (!strncmp(args, "up", n) && n == 2) return op_up(rest, up_timeout());
  if (!strncmp(args, "attach", n) && n == 6) {
    sh_obj *r = op_attach(rest, true);
    if (!r) return -1;
    sh_decref(r);
    return 0;
  }
  if (!strncmp(args, "down", n) && n == 4) return op_down(rest);
  if (!strncmp(args, "kill", n) && n == 4) return op_kill(rest);
  if (!strncmp(args, "restart", n) && n == 7) return op_restart(rest, up_timeout());
  if (!strncmp(args, "logs", n) && n == 4) return op_logs(rest);
  sh_raise(sh_ValueError, "usage: %%cluster [up SPEC | attach SPEC|host:port | down|kill|restart TASK | logs TASK [N]]");
  return -1;
}
static int magic_down(const char *args) { return op_down(args); }
static int magic_kill(const char *args) { return op_kill(args); }
static int magic_restart(const char *args) { return op_restart(args, up_timeout()); }
static int magic_logs(const char *args) { return op_logs(args); }

/* ---- the tfsh module -------------------------------------------------------------------- */

/* A spec argument: str, dict, or anything with as_dict() (tf.train.ClusterSpec). */
static char *spec_text(sh_obj *spec) {
  if (sh_is_str(spec)) return xstrdup(sh_str_cstr(spec));
  sh_obj *d = NULL;
  sh_obj *as = sh_getattr_opt(spec, "as_dict");
  if (as) {
    d = sh_call(as, 0, NULL, NULL);
    sh_decref(as);
    if (!d) return NULL;
  } else {
    d = sh_incref(spec);
  }
  sh_obj *json = sh_import("json");
  if (!json) { sh_decref(d); return NULL; }
  sh_obj *s = sh_call_method(json, "dumps", 1, &d, NULL);
  sh_decref(json);
  sh_decref(d);
  if (!s) return NULL;
  char *r = sh_is_str(s) ? xstrdup(sh_str_cstr(s)) : NULL;
  sh_decref(s);
  if (!r) sh_raise(sh_TypeError, "cluster spec: expected a str, a dict or a ClusterSpec");
  return r;
}

static const char *opt_str(sh_obj *o, const char *dflt) {
  return o && o != SH_NONE && sh_is_str(o) ? sh_str_cstr(o) : dflt;
}

static sh_obj *f_cluster_up(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *spec, *timeout = NULL;
  if (sh_parse_args("cluster_up", argc, argv, kw, "spec |timeout", &spec, &timeout) < 0) return NULL;
  double t = up_timeout();
  if (timeout && timeout != SH_NONE && sh_as_double(timeout, &t) < 0) return NULL;
  char *text = spec_text(spec);
  if (!text) return NULL;
  int rc = op_up(text, t);
  free(text);
  if (rc) return NULL;
  sh_obj *d = sh_dict_new();   /* {job: [addresses]}: what tf.train.ClusterSpec takes */
  for (int i = 0; i < ntasks; i++) {
    sh_obj *l = sh_dict_get_str(d, tasks[i].job);
    if (!l) {
      sh_dict_set_str(d, tasks[i].job, l = sh_list_new(0));
      sh_decref(l);
    }
    sh_list_append_steal(l, sh_str(tasks[i].addr));
  }
  return d;
}

static sh_obj *task_dict(ctask *t) {
  sh_obj *d = sh_dict_new(), *v;
  char name[128], st[64];
  task_name(t, name, sizeof name);
  sh_dict_set_str(d, "task", v = sh_str(name)); sh_decref(v);
  sh_dict_set_str(d, "job", v = sh_str(t->job)); sh_decref(v);
  sh_dict_set_str(d, "index", v = sh_int(t->index)); sh_decref(v);
  sh_dict_set_str(d, "address", v = sh_str(t->addr)); sh_decref(v);
  sh_dict_set_str(d, "pid", v = sh_int(t->pid)); sh_decref(v);
  sh_dict_set_str(d, "state", v = sh_str(state_str(t, st, sizeof st))); sh_decref(v);
  sh_dict_set_str(d, "uptime", v = sh_float(t->state == T_RUNNING ? now_s() - t->started : 0)); sh_decref(v);
  sh_dict_set_str(d, "log", v = sh_str(t->log)); sh_decref(v);
  return d;
}

static sh_obj *f_tasks(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("tasks", argc, argv, kw, "") < 0) return NULL;
  poll_all();
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < ntasks; i++) sh_list_append_steal(l, task_dict(&tasks[i]));
  return l;
}

static sh_obj *f_cluster(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("cluster", argc, argv, kw, "") < 0) return NULL;
  op_list();
  return sh_none();
}

static sh_obj *f_down(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *which = NULL;
  if (sh_parse_args("down", argc, argv, kw, "|task", &which) < 0) return NULL;
  return op_down(opt_str(which, "all")) ? NULL : sh_none();
}

static sh_obj *f_kill(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *which;
  if (sh_parse_args("kill", argc, argv, kw, "task", &which) < 0) return NULL;
  const char *w = sh_as_cstr(which);
  return !w || op_kill(w) ? NULL : sh_none();
}

static sh_obj *f_restart(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *which, *timeout = NULL;
  if (sh_parse_args("restart", argc, argv, kw, "task |timeout", &which, &timeout) < 0) return NULL;
  double t = up_timeout();
  if (timeout && timeout != SH_NONE && sh_as_double(timeout, &t) < 0) return NULL;
  const char *w = sh_as_cstr(which);
  return !w || op_restart(w, t) ? NULL : sh_none();
}

static sh_obj *f_logs(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *which, *n = NULL;
  if (sh_parse_args("logs", argc, argv, kw, "task |n", &which, &n) < 0) return NULL;
  int64_t lines = 20;
  if (n && n != SH_NONE && sh_as_int(n, &lines) < 0) return NULL;
  const char *w = sh_as_cstr(which);
  if (!w) return NULL;
  ctask *t = find_task(w);
  return t ? read_tail(t, lines) : NULL;
}

static sh_obj *f_attach(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *spec, *quiet = NULL;
  if (sh_parse_args("attach", argc, argv, kw, "spec |quiet", &spec, &quiet) < 0) return NULL;
  char *text = spec_text(spec);
  if (!text) return NULL;
  sh_obj *r = op_attach(text, !(quiet && sh_truth(quiet) > 0));
  free(text);
  return r;
}

static sh_obj *f_target(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *which;
  if (sh_parse_args("target", argc, argv, kw, "task", &which) < 0) return NULL;
  const char *w = sh_as_cstr(which);
  if (!w) return NULL;
  ctask *t = find_task(w);
  return t ? sh_strf("grpc://%s", t->addr) : NULL;
}

static const sh_method tfsh_funcs[] = {
  {"cluster_up", f_cluster_up, "cluster_up(spec, timeout=15)",
   "Start one `tfsh server` per task of spec (str, dict or ClusterSpec; 'ps=1 worker=2' or {'ps': 1, "
   "'worker': 2} picks free ports; '--slurm ps=1 worker=2', '--hosts h1,h2 ps=1 worker=2'); waits until each "
   "serves; returns the spec, {job: [addresses]}."},
  {"cluster", f_cluster, "cluster()", "Print the tasks started by this shell: address, pid, state, uptime."},
  {"tasks", f_tasks, "tasks()", "The tasks started by this shell, as a list of dicts."},
  {"down", f_down, "down(task='all')", "Stop a task (SIGTERM, then SIGKILL after 3 s), or all of them."},
  {"kill", f_kill, "kill(task)", "SIGKILL a task."},
  {"restart", f_restart, "restart(task, timeout=15)", "Stop and start a task again (same address)."},
  {"logs", f_logs, "logs(task, n=20)", "The last n lines of a task's log, as a str."},
  {"attach", f_attach, "attach(spec_or_address, quiet=False)",
   "Ask every task of a running cluster for its status; returns [(task, address, status)]."},
  {"target", f_target, "target(task)", "The session target of a task started by this shell ('grpc://host:port')."},
  {NULL},
};

static sh_obj *tfsh_module_init(void) {
  sh_obj *m = sh_module_new("tfsh");
  sh_module_add_funcs(m, tfsh_funcs);
  return m;
}

void sh_cluster_init(void) {
  sh_register_module("tfsh", tfsh_module_init);
  sh_magic_register("cluster", magic_cluster,
                    "%cluster [up SPEC | attach SPEC|host:port]: list, start or attach to a cluster;\n"
                    "                SPEC is one of (%cluster up prints the ClusterSpec it chose):\n"
                    "                  ps=1 worker=2                     task counts: free ports here\n"
                    "                  {\"ps\": 1, \"worker\": 2}            the same as JSON\n"
                    "                  {\"ps\": [\"localhost:2222\"], \"worker\": [\"localhost:2223\"]}\n"
                    "                  ps|localhost:2222,worker|localhost:2223;localhost:2224\n"
                    "                  --slurm ps=1 worker=2 [--partition P] [--time T]   (salloc + srun)\n"
                    "                  --hosts h1,h2 ps=1 worker=2 [--user U]   (ssh; tfsh on each host)");
  sh_magic_register("down", magic_down, "%down [TASK|all]: stop tasks (SIGTERM, SIGKILL after 3 s)");
  sh_magic_register("kill", magic_kill, "%kill TASK: SIGKILL a task (TASK: ps/0, worker:1, /job:ps/task:0)");
  sh_magic_register("restart", magic_restart, "%restart TASK: stop and start a task again");
  sh_magic_register("logs", magic_logs, "%logs TASK [N]: the last N lines (20) of a task's log");
}
