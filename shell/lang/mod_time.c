/* The time module. */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "shell/lang/interp.h"


static double clock_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static sh_obj *t_time(ARGS) { return sh_float(clock_s(CLOCK_REALTIME)); }
static sh_obj *t_monotonic(ARGS) { return sh_float(clock_s(CLOCK_MONOTONIC)); }
static sh_obj *t_process_time(ARGS) { return sh_float(clock_s(CLOCK_PROCESS_CPUTIME_ID)); }
static sh_obj *t_time_ns(ARGS) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return sh_int((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* Sleep in slices so Ctrl-C interrupts promptly. */
static sh_obj *t_sleep(ARGS) {
  double s;
  if (argc != 1) return sh_raise(sh_TypeError, "sleep() takes exactly one argument (%d given)", argc);
  if (sh_as_double(argv[0], &s) < 0) return NULL;
  if (s < 0) return sh_raise(sh_ValueError, "sleep length must be non-negative");
  double end = clock_s(CLOCK_MONOTONIC) + s;
  for (;;) {
    if (sh_check_interrupt() < 0) return NULL;
    double left = end - clock_s(CLOCK_MONOTONIC);
    if (left <= 0) break;
    if (left > 0.05) left = 0.05;
    struct timespec ts = {(time_t)left, (long)((left - (time_t)left) * 1e9)};
    sh_gil_release();   /* other threads run meanwhile */
    nanosleep(&ts, NULL);
    sh_gil_acquire();
  }
  return sh_none();
}

static sh_obj *t_strftime(ARGS) {
  if (argc < 1 || argc > 2) return sh_raise(sh_TypeError, "strftime() takes 1 or 2 arguments");
  const char *fmt = sh_as_cstr(argv[0]);
  if (!fmt) return NULL;
  time_t now = time(NULL);
  struct tm tm;
  if (argc == 2) {
    sh_obj *t = argv[1];
    if (t->type != &sh_tuple_type || SH_TUPLE_N(t) < 6) return sh_raise(sh_TypeError, "strftime(): expected a time tuple");
    int64_t v[9] = {0};
    for (int i = 0; i < 9 && i < SH_TUPLE_N(t); i++) if (sh_as_int(SH_TUPLE_ITEMS(t)[i], &v[i]) < 0) return NULL;
    tm = (struct tm){.tm_year = (int)v[0] - 1900, .tm_mon = (int)v[1] - 1, .tm_mday = (int)v[2],
                     .tm_hour = (int)v[3], .tm_min = (int)v[4], .tm_sec = (int)v[5],
                     .tm_wday = ((int)v[6] + 1) % 7, .tm_yday = (int)v[7] - 1, .tm_isdst = -1};
  } else localtime_r(&now, &tm);
  char buf[512];
  size_t n = strftime(buf, sizeof buf, fmt, &tm);
  return sh_strn(buf, n);
}

static sh_obj *tm_tuple(struct tm *tm) {
  return sh_tuple_of(9, sh_int(tm->tm_year + 1900), sh_int(tm->tm_mon + 1), sh_int(tm->tm_mday),
                     sh_int(tm->tm_hour), sh_int(tm->tm_min), sh_int(tm->tm_sec),
                     sh_int((tm->tm_wday + 6) % 7), sh_int(tm->tm_yday + 1), sh_int(tm->tm_isdst));
}
static sh_obj *t_localtime(ARGS) {
  time_t t = time(NULL);
  double d;
  if (argc && argv[0] != SH_NONE) { if (sh_as_double(argv[0], &d) < 0) return NULL; t = (time_t)d; }
  struct tm tm;
  localtime_r(&t, &tm);
  return tm_tuple(&tm);
}
static sh_obj *t_gmtime(ARGS) {
  time_t t = time(NULL);
  double d;
  if (argc && argv[0] != SH_NONE) { if (sh_as_double(argv[0], &d) < 0) return NULL; t = (time_t)d; }
  struct tm tm;
  gmtime_r(&t, &tm);
  return tm_tuple(&tm);
}

static const sh_method time_funcs[] = {
  {"time", t_time, "time()", "Seconds since the epoch, as a float."},
  {"time_ns", t_time_ns, "time_ns()", "Nanoseconds since the epoch."},
  {"sleep", t_sleep, "sleep(seconds)", "Sleep (Ctrl-C interrupts)."},
  {"perf_counter", t_monotonic, "perf_counter()", "A monotonic clock for timing, in seconds."},
  {"monotonic", t_monotonic, "monotonic()", "A monotonic clock, in seconds."},
  {"process_time", t_process_time, "process_time()", "CPU time of this process."},
  {"strftime", t_strftime, "strftime(format[, tuple])", "Format a time (now by default)."},
  {"localtime", t_localtime, "localtime([secs])", "A local time tuple."},
  {"gmtime", t_gmtime, "gmtime([secs])", "A UTC time tuple."},
  {NULL}};

sh_obj *sh_mod_time_init(void) {
  sh_obj *m = sh_module_new("time");
  sh_module_add_funcs(m, time_funcs);
  sh_module_add(m, "__doc__", sh_str("Time access and conversions."));
  return m;
}
