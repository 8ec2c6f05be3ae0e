/* The GPU device layer without a GPU: the caching allocator's bins over a malloc'd chunk
 * source (runtime/gpu/alloc.h), CUDA_VISIBLE_DEVICES's parsing, fake devices, and the
 * loading of cuBLAS and cuDNN. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/gpu/alloc.h"
#include "runtime/gpu/dl.h"
#include "runtime/gpu/gpu.h"

typedef struct source {
  int gets, puts;
  size_t sizes[16];
} source;

static void *src_get(void *arg, size_t n) {
  source *s = arg;
  if (s->gets < 16) s->sizes[s->gets] = n;
  s->gets++;
  return malloc(n);
}

static void src_put(void *arg, void *p) {
  ((source *)arg)->puts++;
  free(p);
}

static void test_reserve_once(void **state) {
  source s = {0};
  rt_chunk_source cs = {src_get, src_put, &s};
  rt_dev_alloc *a = rt_dev_alloc_new(1 << 20, false, &cs);
  char *p[8];
  for (int i = 0; i < 8; i++) assert_non_null(p[i] = rt_dev_alloc_get(a, 1000));
  assert_int_equal(s.gets, 1);                 /* one chunk: the whole limit */
  assert_int_equal(s.sizes[0], 1 << 20);
  assert_ptr_equal(p[1], p[0] + 1024);         /* rounded to 256 bytes, carved in order */
  rt_dev_alloc_stats st;
  rt_dev_alloc_stats_get(a, &st);
  assert_int_equal(st.in_use, 8 * 1024);
  /* best fit: freeing two neighbours merges them; a 2048-byte request takes that hole
   * rather than the big tail */
  rt_dev_alloc_put(a, p[3]);
  rt_dev_alloc_put(a, p[4]);
  assert_ptr_equal(rt_dev_alloc_get(a, 2048), p[3]);
  /* a hole too small is skipped */
  rt_dev_alloc_put(a, p[6]);
  char *q = rt_dev_alloc_get(a, 4096);
  assert_ptr_equal(q, p[7] + 1024);
  /* over the limit: NULL, no new chunk */
  assert_null(rt_dev_alloc_get(a, 2 << 20));
  assert_int_equal(s.gets, 1);
  rt_dev_alloc_stats_get(a, &st);
  assert_int_equal(st.peak, 7 * 1024 + 4096);   /* after p[6] went back */
  assert_int_equal(st.n_chunks, 1);
  rt_dev_alloc_free(a);
  assert_int_equal(s.puts, 1);
}

static void test_growth(void **state) {
  source s = {0};
  rt_chunk_source cs = {src_get, src_put, &s};
  rt_dev_alloc *a = rt_dev_alloc_new(8 << 20, true, &cs);
  void *x = rt_dev_alloc_get(a, 100);
  assert_int_equal(s.sizes[0], 1 << 20);       /* 1 MiB first */
  void *y = rt_dev_alloc_get(a, (1 << 20) + 1);
  assert_int_equal(s.gets, 2);
  assert_int_equal(s.sizes[1], 2 << 20);       /* then twice the last */
  void *z = rt_dev_alloc_get(a, 5 << 20);      /* 4 MiB would not hold it; 5 MiB is all left */
  assert_int_equal(s.gets, 3);
  assert_int_equal(s.sizes[2], 5 << 20);
  assert_null(rt_dev_alloc_get(a, 1 << 20));   /* the limit is reached */
  /* everything freed and merged: the same blocks come back, no new chunk */
  rt_dev_alloc_put(a, z);
  rt_dev_alloc_put(a, y);
  rt_dev_alloc_put(a, x);
  rt_dev_alloc_stats st;
  rt_dev_alloc_stats_get(a, &st);
  assert_int_equal(st.in_use, 0);
  assert_int_equal(st.reserved, 8 << 20);
  assert_ptr_equal(rt_dev_alloc_get(a, 5 << 20), z);
  assert_int_equal(s.gets, 3);
  rt_dev_alloc_free(a);
  assert_int_equal(s.puts, 3);
}

static void test_visible(void **state) {
  int o[16];
  assert_int_equal(rt_gpu_visible(NULL, 3, o, 16), 3);
  assert_int_equal(rt_gpu_visible("", 3, o, 16), 0);
  assert_int_equal(rt_gpu_visible("-1", 3, o, 16), 0);
  assert_int_equal(rt_gpu_visible("2,0", 3, o, 16), 2);
  assert_int_equal(o[0], 2);
  assert_int_equal(o[1], 0);
  assert_int_equal(rt_gpu_visible("1,7,0", 3, o, 16), 1);   /* stops at the bad entry */
  assert_int_equal(rt_gpu_visible("1,1", 3, o, 16), 1);
}

static void test_fake_devices(void **state) {
  setenv("TFSH_FAKE_GPUS", "3", 1);
  setenv("CUDA_VISIBLE_DEVICES", "2,1", 1);
  const rt_gpu_info *g;
  const char *note;
  assert_int_equal(rt_gpu_devices(&g, &note), 2);
  assert_string_equal(note, "");
  assert_int_equal(g[0].ordinal, 2);
  assert_int_equal(g[1].ordinal, 1);
  assert_true(g[0].fake);
  rt_gpu *dev;
  rt_status st = {0};
  assert_int_not_equal(rt_gpu_open(2, &dev, &st), RT_OK);
#if TFSH_HAVE_CUDA
  assert_string_equal(st.msg, "GPU:0 is a placement-only device (TFSH_FAKE_GPUS): it runs no kernels");
#else
  assert_string_equal(st.msg, "GPU:2: this tfsh was built without CUDA");
#endif
}

/* cuBLAS and cuDNN load on first use, every symbol resolved (a build with CUDA, on the
 * machine that built it, has them; a missing one would say so here). */
static void test_libraries(void **state) {
#if TFSH_HAVE_CUDA
  char why[300] = "";
  const rt_cublas *b = rt_cublas_lib(why, sizeof why);
  if (!b) print_error("cuBLAS: %s\n", why);
  assert_non_null(b);
  assert_non_null(b->cublasSgemm);
#if TFSH_HAVE_CUDNN
  const rt_cudnn *d = rt_cudnn_lib(why, sizeof why);
  if (!d) print_error("cuDNN: %s\n", why);
  assert_non_null(d);
  assert_non_null(d->cudnnPoolingBackward);
#endif
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_reserve_once), cmocka_unit_test(test_growth),
    cmocka_unit_test(test_visible), cmocka_unit_test(test_fake_devices), cmocka_unit_test(test_libraries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
