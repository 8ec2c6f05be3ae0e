/* libFuzzer target: net_in_parse, the header decoder every received message goes
 * through, then the typed getters over whatever it accepted. Built by
 * tests/fuzz/CMakeLists.txt (clang, -DTFSH_FUZZ=ON); see tests/fuzz/README.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/msg.h"

static void walk(const msgpack_object *o, int depth) {
  rt_status st;
  int64_t i;
  uint64_t u;
  double f;
  bool b;
  const char *s;
  const void *p;
  size_t n;
  const msgpack_object_array *a;
  const msgpack_object_map *m;
  (void)net_obj_kind(o);
  net_obj_int(o, "x", &i, &st);
  net_obj_uint(o, "x", &u, &st);
  net_obj_float(o, "x", &f, &st);
  net_obj_bool(o, "x", &b, &st);
  if (!net_obj_str(o, "x", &s, &n, &st) && n) (void)(s[0] + s[n - 1]);
  if (!net_obj_bin(o, "x", &p, &n, &st) && n) (void)((const char *)p)[n - 1];
  if (depth > 32) return;
  if (!net_obj_array(o, "x", &a, &st))
    for (uint32_t k = 0; k < a->size; k++) walk(&a->ptr[k], depth + 1);
  if (!net_obj_map(o, "x", &m, &st))
    for (uint32_t k = 0; k < m->size; k++) {
      walk(&m->ptr[k].key, depth + 1);
      walk(&m->ptr[k].val, depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* small limits half the time, so the limit paths are reached too */
  net_limits small = {.max_header = 4096, .max_frames = 4, .max_frame = 4096,
                      .max_count = 16, .max_str = 64, .max_depth = 4};
  const net_limits *lim = size && (data[size - 1] & 1) ? &small : NULL;
  rt_status st;
  uint64_t id;
  net_in *in = net_in_parse(data, size, lim, &id, &st);
  if (!in) return 0;
  const char *t = net_in_type(in);
  if (strlen(t) == 0 || strlen(t) > NET_TYPE_MAX) abort();
  if (net_in_id(in) != id) abort();
  walk(net_in_header(in), 0);
  static const char *keys[] = {"v", "t", "id", "session", "graph", "feeds", "x"};
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
    int64_t i;
    uint64_t u;
    const char *s;
    size_t n;
    const msgpack_object_array *a;
    (void)net_has(in, keys[k]);
    net_get_int(in, keys[k], &i, &st);
    net_get_uint(in, keys[k], &u, &st);
    net_get_str(in, keys[k], &s, &n, &st);
    net_get_array(in, keys[k], &a, &st);
  }
  if (net_in_nframes(in) != 0 || net_in_frame(in, 0)) abort();
  net_in_free(in);
  return 0;
}
