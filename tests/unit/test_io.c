/* ops/io.c kernels called directly: SaveV2 then RestoreV2 round-trips float / int64 /
 * string tensors; missing keys, wrong dtypes and a damaged data file are errors naming the
 * file; ScalarSummary's bytes are the expected protobuf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/op.h"

static char dir[64];

static int run_kernel(rt_node *n, int nin, rt_tensor **in, int nout, rt_tensor **out, rt_status *st) {
  const rt_op_sig *sig = rt_op_find(n->op);
  assert_non_null(sig);
  rt_kernel_ctx c = {.node = n, .n_inputs = nin, .inputs = in, .n_outputs = nout, .outputs = out, .st = st};
  return sig->def->kernel[RT_DEV_CPU](&c);
}

static rt_tensor *strs(int n, const char *const *v) {
  rt_shape s = rt_shape_make(1, (int64_t[]){n});
  rt_tensor *t = rt_tensor_new(RT_STRING, &s);
  for (int i = 0; i < n; i++) rt_tensor_set_str(t, i, v[i], strlen(v[i]));
  return t;
}

static rt_node *node(const char *op, int n, const rt_dtype *types) {
  rt_node *nd = rt_node_new("n", op);
  rt_dtype *copy = malloc(sizeof(rt_dtype) * (size_t)(n ? n : 1));
  memcpy(copy, types, sizeof(rt_dtype) * (size_t)n);
  rt_attr_value v = {.kind = RT_ATTR_LIST_TYPE};
  v.list.n = n;
  v.list.v = copy;
  rt_node_set_attr(nd, "dtypes", &v);
  rt_node_set_int(nd, "N", n);
  return nd;
}

static int restore(const char *prefix, int n, const char *const *names, const rt_dtype *types, rt_tensor **out,
                   rt_status *st) {
  const char *empty[8] = {"", "", "", "", "", "", "", ""};
  rt_tensor *in[3] = {rt_tensor_scalar_str(prefix), strs(n, names), strs(n, empty)};
  rt_node *nd = node("RestoreV2", n, types);
  int rc = run_kernel(nd, 3, in, n, out, st);
  for (int i = 0; i < 3; i++) rt_tensor_unref(in[i]);
  rt_node_free(nd);
  return rc;
}

static void test_roundtrip(void **state) {
  char prefix[128];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt-1", dir);
  rt_shape s23 = rt_shape_make(2, (int64_t[]){2, 3});
  rt_tensor *w = rt_tensor_new(RT_FLOAT, &s23);
  for (int i = 0; i < 6; i++) ((float *)rt_tensor_data(w))[i] = (float)i * 1.5f;
  rt_tensor *b = rt_tensor_scalar_i64(42);
  rt_tensor *s = strs(2, (const char *[]){"hello", ""});
  const char *names[] = {"w", "b", "s"};
  rt_dtype types[] = {RT_FLOAT, RT_INT64, RT_STRING};
  rt_tensor *in[6] = {rt_tensor_scalar_str(prefix), strs(3, names), strs(3, (const char *[]){"", "", ""}), w, b, s};
  rt_node *nd = node("SaveV2", 3, types);
  rt_status st = {0};
  assert_int_equal(run_kernel(nd, 6, in, 0, NULL, &st), RT_OK);
  rt_node_free(nd);
  char path[256];
  snprintf(path, sizeof path, "%s.index", prefix);
  assert_int_equal(access(path, F_OK), 0);
  snprintf(path, sizeof path, "%s.data-00000-of-00001", prefix);
  assert_int_equal(access(path, F_OK), 0);

  rt_tensor *out[3] = {0};
  const char *want[] = {"s", "w", "b"};
  rt_dtype wt[] = {RT_STRING, RT_FLOAT, RT_INT64};
  assert_int_equal(restore(prefix, 3, want, wt, out, &st), RT_OK);
  assert_true(rt_shape_equal(&out[1]->shape, &s23));
  assert_memory_equal(rt_tensor_data(out[1]), rt_tensor_data(w), 24);
  assert_int_equal(rt_tensor_get_i64(out[2], 0), 42);
  assert_string_equal(((rt_str *)rt_tensor_data(out[0]))[0].ptr, "hello");
  assert_int_equal(((rt_str *)rt_tensor_data(out[0]))[1].len, 0);
  for (int i = 0; i < 3; i++) rt_tensor_unref(out[i]), out[i] = NULL;

  /* a key that is not there, a wrong dtype */
  st = (rt_status){0};
  assert_int_equal(restore(prefix, 1, (const char *[]){"v"}, (rt_dtype[]){RT_FLOAT}, out, &st), RT_NOT_FOUND);
  assert_non_null(strstr(st.msg, "Key v not found in checkpoint"));
  st = (rt_status){0};
  assert_int_equal(restore(prefix, 1, (const char *[]){"b"}, (rt_dtype[]){RT_FLOAT}, out, &st), RT_INVALID_ARGUMENT);

  /* one flipped byte in w's data */
  FILE *f = fopen(path, "r+b");
  fseek(f, 2, SEEK_SET);   /* w is written first */
  int c = fgetc(f);
  fseek(f, 2, SEEK_SET);
  fputc(c ^ 0x55, f);
  fclose(f);
  st = (rt_status){0};
  assert_int_equal(restore(prefix, 1, (const char *[]){"w"}, (rt_dtype[]){RT_FLOAT}, out, &st), RT_DATA_LOSS);
  assert_non_null(strstr(st.msg, "Checksum does not match"));
  assert_non_null(strstr(st.msg, path));

  /* no such checkpoint */
  snprintf(path, sizeof path, "%s/none", dir);
  st = (rt_status){0};
  assert_int_equal(restore(path, 1, (const char *[]){"w"}, (rt_dtype[]){RT_FLOAT}, out, &st), RT_NOT_FOUND);
  assert_non_null(strstr(st.msg, "none.index"));
  for (int i = 0; i < 6; i++) rt_tensor_unref(in[i]);
}

static void test_scalar_summary(void **state) {
  rt_tensor *in[2] = {rt_tensor_scalar_str("loss"), rt_tensor_scalar_f32(1.0f)};
  rt_node *nd = rt_node_new("n", "ScalarSummary");
  rt_tensor *out[1] = {0};
  rt_status st = {0};
  assert_int_equal(run_kernel(nd, 2, in, 1, out, &st), RT_OK);
  /* Summary{value{tag:"loss" simple_value:1.0}} */
  const unsigned char want[] = {0x0a, 0x0b, 0x0a, 0x04, 'l', 'o', 's', 's', 0x15, 0x00, 0x00, 0x80, 0x3f};
  const rt_str *s = rt_tensor_data(out[0]);
  assert_int_equal(s->len, sizeof want);
  assert_memory_equal(s->ptr, want, sizeof want);
  rt_tensor_unref(out[0]);
  rt_tensor_unref(in[0]);
  rt_tensor_unref(in[1]);
  rt_node_free(nd);
}

int main(void) {
  op_register_all();
  snprintf(dir, sizeof dir, "/tmp/tfsh_test_io.XXXXXX");
  if (!mkdtemp(dir)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roundtrip),
    cmocka_unit_test(test_scalar_summary),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) rc = rc ? rc : 1;
  return rc;
}
