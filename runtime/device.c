#include "runtime/device.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/str.h"

void rt_devname_clear(rt_devname *d) {
  memset(d, 0, sizeof *d);
  d->replica = d->task = d->id = -1;
}

static bool parse_int(const char *s, int *out) {
  if (!*s) return false;
  long v = 0;
  for (const char *p = s; *p; p++) {
    if (!isdigit((unsigned char)*p)) return false;
    v = v * 10 + (*p - '0');
    if (v > 1000000) return false;
  }
  *out = (int)v;
  return true;
}

static bool parse_type_id(const char *type, const char *id, rt_devname *d) {
  size_t n = strlen(type);
  if (n == 0 || n >= sizeof d->type) return false;
  for (size_t i = 0; i < n; i++) {
    if (!isalpha((unsigned char)type[i]) && type[i] != '_') return false;
    d->type[i] = (char)toupper((unsigned char)type[i]);
  }
  d->type[n] = '\0';
  if (!id || !strcmp(id, "*")) {
    d->id = -1;
    return true;
  }
  return parse_int(id, &d->id);
}

int rt_devname_parse(const char *s, rt_devname *d, rt_status *st) {
  rt_devname_clear(d);
  char buf[256];
  if (strlen(s) >= sizeof buf)
    return rt_error(st, RT_INVALID_ARGUMENT, "device specification too long: '%.40s...'", s);
  strcpy(buf, s);
  char *save = NULL;   /* strtok_r: device names are parsed on many threads at once */
  for (char *part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
    char *c1 = strchr(part, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    bool ok = c1 != NULL;
    if (ok) *c1 = '\0';
    if (c2) *c2 = '\0';
    const char *key = part, *v1 = c1 ? c1 + 1 : NULL, *v2 = c2 ? c2 + 1 : NULL;
    if (!ok) {
    } else if (!strcmp(key, "job")) {
      ok = !c2 && *v1 && strlen(v1) < sizeof d->job;
      if (ok) strcpy(d->job, v1);
    } else if (!strcmp(key, "replica")) {
      ok = !c2 && parse_int(v1, &d->replica);
    } else if (!strcmp(key, "task")) {
      ok = !c2 && parse_int(v1, &d->task);
    } else if (!strcmp(key, "device")) {
      ok = parse_type_id(v1, v2, d);       /* device:CPU:0, device:GPU:*, device:CPU */
    } else {
      ok = !c2 && parse_type_id(key, v1, d); /* legacy /cpu:0, /gpu:1, CPU:0 */
    }
    if (!ok)
      return rt_error(st, RT_INVALID_ARGUMENT,
                      "Malformed device specification '%s': expected "
                      "/job:NAME/replica:N/task:N/device:TYPE:N (any part may be omitted)",
                      s);
  }
  return RT_OK;
}

char *rt_devname_str(const rt_devname *d, char *buf, size_t n) {
  size_t off = 0;
  if (n) buf[0] = '\0';
  if (d->job[0]) off = str_puts(buf, n, str_puts(buf, n, off, "/job:"), d->job);
  if (d->replica >= 0) off = str_put_int(buf, n, str_puts(buf, n, off, "/replica:"), d->replica);
  if (d->task >= 0) off = str_put_int(buf, n, str_puts(buf, n, off, "/task:"), d->task);
  if (d->type[0]) {
    off = str_puts(buf, n, str_puts(buf, n, off, "/device:"), d->type);
    if (d->id >= 0) str_put_int(buf, n, str_puts(buf, n, off, ":"), d->id);
    else str_puts(buf, n, off, ":*");
  }
  return buf;
}

char *rt_devname_task_str(const rt_devname *d, char *buf, size_t n) {
  rt_devname t = *d;
  t.type[0] = '\0';
  t.id = -1;
  return rt_devname_str(&t, buf, n);
}

void rt_devname_merge(rt_devname *base, const rt_devname *over) {
  if (over->job[0]) strcpy(base->job, over->job);
  if (over->replica >= 0) base->replica = over->replica;
  if (over->task >= 0) base->task = over->task;
  if (over->type[0]) {
    strcpy(base->type, over->type);
    base->id = over->id;
  } else if (over->id >= 0) {
    base->id = over->id;
  }
}

void rt_devname_fill(rt_devname *d, const rt_devname *dflt) {
  if (!d->job[0]) strcpy(d->job, dflt->job);
  if (d->replica < 0) d->replica = dflt->replica;
  if (d->task < 0) d->task = dflt->task;
  if (!d->type[0]) {
    strcpy(d->type, dflt->type);
    d->id = dflt->id;
  }
}

bool rt_devname_matches(const rt_devname *spec, const rt_devname *d) {
  if (spec->job[0] && strcmp(spec->job, d->job)) return false;
  if (spec->replica >= 0 && spec->replica != d->replica) return false;
  if (spec->task >= 0 && spec->task != d->task) return false;
  if (spec->type[0] && strcmp(spec->type, d->type)) return false;
  if (spec->id >= 0 && spec->id != d->id) return false;
  return true;
}

bool rt_devname_is_full(const rt_devname *d) {
  return d->job[0] && d->replica >= 0 && d->task >= 0 && d->type[0] && d->id >= 0;
}

/* ---- devices ------------------------------------------------------------------------ */

rt_device *rt_device_new(const char *full_name, rt_device_type type, uint64_t incarnation) {
  rt_device *d = xcalloc(1, sizeof *d);
  snprintf(d->name, sizeof d->name, "%s", full_name);
  if (rt_devname_parse(full_name, &d->dn, NULL)) rt_devname_clear(&d->dn);
  d->type = type;
  d->incarnation = incarnation;
  pthread_mutex_init(&d->res_mu, NULL);
  return d;
}

static void resource_free(rt_resource *r) {
  rt_tensor_unref(r->value);
  if (r->state_free) r->state_free(r->state);
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->mu);
  free(r->container);
  free(r->name);
  free(r);
}

void rt_device_free(rt_device *d) {
  if (!d) return;
  rt_device_clear_resources(d, NULL);
  pthread_mutex_destroy(&d->res_mu);
  free(d);
}

rt_resource *rt_device_resource(rt_device *d, const char *container, const char *name,
                                bool create) {
  pthread_mutex_lock(&d->res_mu);
  rt_resource *r = d->resources;
  while (r && (strcmp(r->container, container) || strcmp(r->name, name))) r = r->next;
  if (!r && create) {
    r = xcalloc(1, sizeof *r);
    r->container = xstrdup(container);
    r->name = xstrdup(name);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->next = d->resources;
    d->resources = r;
  }
  pthread_mutex_unlock(&d->res_mu);
  return r;
}

rt_resource *rt_device_resource_in(rt_device *d, const char *scope, const char *container,
                                   const char *name, bool create) {
  if (!scope || !*scope) return rt_device_resource(d, container, name, create);
  char buf[512];
  snprintf(buf, sizeof buf, "%s/%s", scope, container);
  return rt_device_resource(d, buf, name, create);
}

void rt_device_clear_scope(rt_device *d, const char *scope) {
  if (!scope || !*scope) return;
  size_t n = strlen(scope);
  pthread_mutex_lock(&d->res_mu);
  for (rt_resource **p = &d->resources; *p;) {
    if (!strncmp((*p)->container, scope, n) && (*p)->container[n] == '/') {
      rt_resource *r = *p;
      *p = r->next;
      resource_free(r);
    } else {
      p = &(*p)->next;
    }
  }
  pthread_mutex_unlock(&d->res_mu);
}

void rt_device_clear_resources(rt_device *d, const char *container) {
  pthread_mutex_lock(&d->res_mu);
  for (rt_resource **p = &d->resources; *p;) {
    if (!container || !strcmp((*p)->container, container)) {
      rt_resource *r = *p;
      *p = r->next;
      resource_free(r);
    } else {
      p = &(*p)->next;
    }
  }
  pthread_mutex_unlock(&d->res_mu);
}
