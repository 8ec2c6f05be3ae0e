/* Threads for the language: the global interpreter lock and the _thread module (threads,
 * locks) that threading.py.inc and queue.py.inc are written on.
 *
 * The interpreter's objects (reference counts, dicts, the free lists) are not
 * thread-safe; one lock, the GIL, is held by whichever thread interprets. A thread lets
 * go of it around anything that blocks (sess.run, time.sleep, a lock's acquire, I/O) and
 * every few milliseconds when another thread waits for it: a waiter that has waited 5 ms
 * sets sh_gil_drop_request, which the evaluator looks at in loops and calls and answers
 * with sh_gil_yield. Each thread has its own interpreter state (the frames, the pending
 * exception: _Thread_local in eval.c, class.c, value.c). Until the first thread starts,
 * all of this costs nothing: acquire and release return at once. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"

volatile int sh_gil_drop_request;
static bool threads_on;
static pthread_mutex_t gil_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gil_cv = PTHREAD_COND_INITIALIZER, switch_cv = PTHREAD_COND_INITIALIZER;
static bool gil_locked;
static int gil_waiters;
static uint64_t gil_switches;
static _Thread_local bool not_main;

bool sh_is_main_thread(void) { return !not_main; }

static void deadline_in(struct timespec *ts, long ms) {
  clock_gettime(CLOCK_REALTIME, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) ts->tv_sec++, ts->tv_nsec -= 1000000000L;
}

static void take_locked(void) {   /* gil_mu held */
  gil_waiters++;
  while (gil_locked) {
    struct timespec ts;
    deadline_in(&ts, 5);
    if (pthread_cond_timedwait(&gil_cv, &gil_mu, &ts) == ETIMEDOUT && gil_locked) sh_gil_drop_request = 1;
  }
  gil_waiters--;
  gil_locked = true;
  gil_switches++;
  sh_gil_drop_request = 0;
  pthread_cond_broadcast(&switch_cv);
}

void sh_gil_acquire(void) {
  if (!threads_on) return;
  pthread_mutex_lock(&gil_mu);
  take_locked();
  pthread_mutex_unlock(&gil_mu);
}

void sh_gil_release(void) {
  if (!threads_on) return;
  pthread_mutex_lock(&gil_mu);
  gil_locked = false;
  pthread_cond_signal(&gil_cv);
  pthread_mutex_unlock(&gil_mu);
}

/* Asked to let another thread run: hand the lock over and wait until one has taken it. */
void sh_gil_yield(void) {
  if (!threads_on) { sh_gil_drop_request = 0; return; }
  pthread_mutex_lock(&gil_mu);
  uint64_t s = gil_switches;
  gil_locked = false;
  pthread_cond_signal(&gil_cv);
  while (gil_switches == s && gil_waiters > 0) pthread_cond_wait(&switch_cv, &gil_mu);
  take_locked();
  pthread_mutex_unlock(&gil_mu);
}

/* ---- locks ------------------------------------------------------------------------------ */
typedef struct sh_lock {
  sh_obj head;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool locked;
} sh_lock;

static sh_type lock_type;

static sh_obj *lock_new(void) {
  sh_lock *l = sh_new(&lock_type);
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  return &l->head;
}

static void lock_destroy(sh_obj *o) {
  sh_lock *l = (sh_lock *)o;
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
}

/* 1 taken, 0 not (timeout or not blocking), -1 KeyboardInterrupt */
static int lock_take(sh_lock *l, bool blocking, double timeout) {
  pthread_mutex_lock(&l->mu);
  if (!l->locked) {
    l->locked = true;
    pthread_mutex_unlock(&l->mu);
    return 1;
  }
  if (!blocking) {
    pthread_mutex_unlock(&l->mu);
    return 0;
  }
  sh_gil_release();
  struct timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  double end_s = end.tv_sec + end.tv_nsec * 1e-9 + timeout;
  int got = 0;
  for (;;) {
    if (!l->locked) { l->locked = true; got = 1; break; }
    if (!not_main && sh_interrupted) { got = -1; break; }   /* Ctrl-C reaches the main thread */
    long slice = 50;
    if (timeout >= 0) {
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      double left = end_s - (now.tv_sec + now.tv_nsec * 1e-9);
      if (left <= 0) break;
      if (left * 1000 < slice) slice = (long)(left * 1000) + 1;
    }
    struct timespec ts;
    deadline_in(&ts, slice);
    pthread_cond_timedwait(&l->cv, &l->mu, &ts);
  }
  pthread_mutex_unlock(&l->mu);
  sh_gil_acquire();
  if (got < 0) return sh_check_interrupt() < 0 ? -1 : 0;
  return got;
}

static sh_obj *lock_acquire(ARGS) {
  sh_obj *bo = NULL, *to = NULL;
  if (sh_parse_args("acquire", argc, argv, kw, "|blocking timeout", &bo, &to) < 0) return NULL;
  int blocking = bo ? sh_truth(bo) : 1;
  double timeout = -1;
  if (blocking < 0 || (to && to != SH_NONE && sh_as_double(to, &timeout) < 0)) return NULL;
  if (!blocking && timeout != -1) return sh_raise(sh_ValueError, "can't specify a timeout for a non-blocking call");
  if (timeout < 0 && timeout != -1) return sh_raise(sh_ValueError, "timeout value must be a non-negative number");
  int r = lock_take((sh_lock *)self, blocking, timeout);
  return r < 0 ? NULL : sh_bool(r);
}

static sh_obj *lock_release(ARGS) {
  sh_lock *l = (sh_lock *)self;
  pthread_mutex_lock(&l->mu);
  bool was = l->locked;
  l->locked = false;
  pthread_cond_signal(&l->cv);
  pthread_mutex_unlock(&l->mu);
  if (!was) return sh_raise(sh_RuntimeError, "release unlocked lock");
  return sh_none();
}

static sh_obj *lock_locked(ARGS) {
  sh_lock *l = (sh_lock *)self;
  pthread_mutex_lock(&l->mu);
  bool v = l->locked;
  pthread_mutex_unlock(&l->mu);
  return sh_bool(v);
}

static sh_obj *lock_enter(sh_obj *self) {
  if (lock_take((sh_lock *)self, true, -1) < 0) return NULL;
  return sh_incref(self);
}

static int lock_exit(sh_obj *self, sh_obj *exc) {
  sh_obj *r = lock_release(self, 0, NULL, NULL);
  if (!r) return -1;
  sh_decref(r);
  return 0;
}

static sh_obj *lock_repr(sh_obj *self) {
  return sh_strf("<%s _thread.lock object at %p>", ((sh_lock *)self)->locked ? "locked" : "unlocked", (void *)self);
}

static sh_obj *lock_enter_m(ARGS) { return lock_enter(self); }
static sh_obj *lock_exit_m(ARGS) { return lock_release(self, 0, NULL, NULL); }

static const sh_method lock_methods[] = {
  {"__enter__", lock_enter_m, "__enter__()", "acquire()"},
  {"__exit__", lock_exit_m, "__exit__(*exc)", "release()"},
  {"acquire", lock_acquire, "acquire(blocking=True, timeout=-1)", "Take the lock; False when it timed out."},
  {"release", lock_release, "release()", "Let go of the lock (any thread may)."},
  {"locked", lock_locked, "locked()", "Whether the lock is taken."},
  {NULL}};

static sh_type lock_type = {SH_TYPE_HEAD, .name = "lock", .size = sizeof(sh_lock),
  .destroy = lock_destroy, .repr = lock_repr, .methods = lock_methods, .enter = lock_enter,
  .exit = lock_exit, .help = "A lock: acquire/release, with a timeout, usable in `with`."};

/* ---- threads ---------------------------------------------------------------------------- */
typedef struct boot {
  sh_obj *fn, *args, *kw;
} boot;

static void *thread_main(void *arg) {
  boot *b = arg;
  not_main = true;
  sh_gil_acquire();
  sh_obj *r = sh_call(b->fn, (int)SH_TUPLE_N(b->args), SH_TUPLE_ITEMS(b->args), b->kw);
  if (r) sh_decref(r);
  else if (sh_err_matches(sh_SystemExit)) sh_err_clear();
  else {
    sh_obj *exc = sh_err_fetch();
    sh_screen_clear(false);
    fprintf(stderr, "Unhandled exception in thread started by ");
    sh_fprint(stderr, b->fn, true);
    fprintf(stderr, "\n");
    sh_exc_print(stderr, exc);
    sh_decref(exc);
  }
  sh_decref(b->fn);
  sh_decref(b->args);
  sh_decref(b->kw);
  free(b);
  sh_gil_release();
  return NULL;
}

static sh_obj *t_start(ARGS) {
  sh_obj *fn, *args, *kwargs = NULL;
  if (sh_parse_args("start_new_thread", argc, argv, kw, "function args |kwargs", &fn, &args, &kwargs) < 0) return NULL;
  if (args->type != &sh_tuple_type) return sh_raise(sh_TypeError, "2nd arg must be a tuple");
  if (kwargs == SH_NONE) kwargs = NULL;
  if (kwargs && kwargs->type != &sh_dict_type) return sh_raise(sh_TypeError, "optional 3rd arg must be a dictionary");
  boot *b = xcalloc(1, sizeof *b);
  b->fn = sh_incref(fn);
  b->args = sh_incref(args);
  b->kw = sh_incref(kwargs);
  if (!threads_on) {   /* this thread holds the lock from now on */
    gil_locked = true;
    threads_on = true;
  }
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 64u << 20);   /* deep recursion, as the main thread may */
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_t tid;
  int rc = pthread_create(&tid, &at, thread_main, b);
  pthread_attr_destroy(&at);
  if (rc) {
    sh_decref(b->fn);
    sh_decref(b->args);
    sh_decref(b->kw);
    free(b);
    return sh_raise(sh_RuntimeError, "can't start new thread: %s", strerror(rc));
  }
  return sh_int((int64_t)(uintptr_t)tid);
}

static sh_obj *t_allocate_lock(ARGS) { NARGS("allocate_lock", 0, 0); return lock_new(); }
static sh_obj *t_get_ident(ARGS) { return sh_int((int64_t)(uintptr_t)pthread_self()); }
static sh_obj *t_print_exc(ARGS) {
  NARGS("_print_exc", 1, 1);
  sh_screen_clear(false);
  sh_exc_print(stderr, argv[0]);
  return sh_none();
}
static sh_obj *t_is_main(ARGS) { return sh_bool(!not_main); }

static const sh_method thread_funcs[] = {
  {"start_new_thread", t_start, "start_new_thread(function, args, kwargs=None)", "Run function(*args, **kwargs) on a new thread."},
  {"allocate_lock", t_allocate_lock, "allocate_lock()", "A new lock."},
  {"get_ident", t_get_ident, "get_ident()", "This thread's identifier."},
  {"_print_exc", t_print_exc, "_print_exc(exc)", "Print an exception with its traceback to stderr."},
  {"_is_main", t_is_main, "_is_main()", "Whether this is the main thread."},
  {NULL}};

sh_obj *sh_mod_thread_init(void) {
  sh_obj *m = sh_module_new("_thread");
  sh_module_add_funcs(m, thread_funcs);
  sh_module_add(m, "LockType", sh_incref((sh_obj *)&lock_type));
  return m;
}
