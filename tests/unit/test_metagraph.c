/* MetaGraphs and the ops of TF-written graphs, called directly: a MetaGraphDef and a
 * VariableDef round-trip through runtime/metagraph.c; rt_pb_check says where damaged wire
 * format breaks (nested messages' offsets from the start of the file); the error names the
 * file; BroadcastGradientArgs and GatherV2 give TF's answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/metagraph.h"
#include "runtime/op.h"

static void test_metagraph_roundtrip(void **state) {
  (void)state;
  unsigned char graph[] = {0x0a, 0x08, 0x0a, 0x01, 'a', 0x12, 0x03, 'N', 'o', 'O'};   /* node {name: "a" op: "NoO"} */
  char *nodes[] = {"a", "x:0"}, *bytes[] = {"\x01\x00\x02", ""}, *tags[] = {"serve"};
  size_t lens[] = {3, 0};
  int64_t ints[] = {-5, 7};
  double floats[] = {0.5};
  rt_mg_collection coll[] = {
    {.key = "train_op", .kind = RT_MG_NODES, .n = 2, .v = nodes, .len = (size_t[]){1, 3}},
    {.key = "blobs", .kind = RT_MG_BYTES, .n = 2, .v = bytes, .len = lens},
    {.key = "ints", .kind = RT_MG_INT64, .n = 2, .i = ints},
    {.key = "floats", .kind = RT_MG_FLOAT, .n = 1, .f = floats},
  };
  rt_metagraph mg = {.graph_def = graph, .graph_def_len = sizeof graph, .has_saver = true,
                     .filename_tensor_name = "save/Const:0", .save_tensor_name = "save/control_dependency:0",
                     .restore_op_name = "save/restore_all", .max_to_keep = 3, .version = 2, .keep_hours = 10000,
                     .meta_graph_version = "v1.15.5", .tensorflow_version = "1.15.5", .n_tags = 1, .tags = tags,
                     .n_coll = 4, .coll = coll};
  unsigned char *out;
  size_t n;
  rt_status st = {0};
  assert_int_equal(rt_metagraph_encode(&mg, &out, &n, &st), RT_OK);
  rt_metagraph back;
  assert_int_equal(rt_metagraph_decode(out, n, "m.meta", &back, &st), RT_OK);
  assert_int_equal(back.graph_def_len, sizeof graph);
  assert_memory_equal(back.graph_def, graph, sizeof graph);
  assert_true(back.has_saver);
  assert_string_equal(back.filename_tensor_name, "save/Const:0");
  assert_string_equal(back.restore_op_name, "save/restore_all");
  assert_int_equal(back.max_to_keep, 3);
  assert_int_equal(back.version, 2);
  assert_string_equal(back.tensorflow_version, "1.15.5");
  assert_int_equal(back.n_tags, 1);
  assert_string_equal(back.tags[0], "serve");
  assert_int_equal(back.n_coll, 4);
  assert_string_equal(back.coll[0].key, "train_op");
  assert_int_equal(back.coll[0].kind, RT_MG_NODES);
  assert_string_equal(back.coll[0].v[1], "x:0");
  assert_int_equal(back.coll[1].kind, RT_MG_BYTES);
  assert_int_equal(back.coll[1].len[0], 3);
  assert_memory_equal(back.coll[1].v[0], "\x01\x00\x02", 3);
  assert_int_equal(back.coll[1].len[1], 0);
  assert_int_equal(back.coll[2].i[0], -5);
  assert_int_equal(back.coll[2].i[1], 7);
  assert_true(back.coll[3].f[0] == 0.5);
  rt_metagraph_clear(&back);
  free(out);
}

static void test_variable_def(void **state) {
  (void)state;
  rt_variable_def v = {"w:0", "w/initial_value:0", "w/Assign", "w/read:0", false, true}, back;
  unsigned char *out;
  size_t n;
  rt_status st = {0};
  assert_int_equal(rt_variable_def_encode(&v, &out, &n, &st), RT_OK);
  assert_int_equal(rt_variable_def_decode(out, n, "v", &back, &st), RT_OK);
  assert_string_equal(back.variable_name, "w:0");
  assert_string_equal(back.initial_value_name, "w/initial_value:0");
  assert_string_equal(back.initializer_name, "w/Assign");
  assert_string_equal(back.snapshot_name, "w/read:0");
  assert_true(back.trainable);
  assert_false(back.is_resource);
  rt_variable_def_clear(&back);
  free(out);
  assert_int_equal(rt_variable_def_decode((const unsigned char *)"\x0a\x09w:0", 5, "f.meta: collection variables", &back, &st),
                   RT_DATA_LOSS);
  assert_string_equal(st.msg, "f.meta: collection variables: not a VariableDef (damaged at offset 0: a length past the end)");
}

static void test_pb_check(void **state) {
  (void)state;
  size_t off = 99;
  const char *why = NULL;
  assert_true(rt_pb_check((const unsigned char *)"\x80", 1, RT_PB_GRAPH_DEF, &off, &why));
  assert_int_equal(off, 0);
  assert_string_equal(why, "a field's key runs past the end");
  assert_true(rt_pb_check((const unsigned char *)"\x18\x01\x2b", 3, RT_PB_GRAPH_DEF, &off, &why));
  assert_int_equal(off, 2);
  assert_string_equal(why, "an unknown wire type");
  assert_true(rt_pb_check((const unsigned char *)"\x00\x01", 2, RT_PB_GRAPH_DEF, &off, &why));
  assert_string_equal(why, "a field numbered 0");
  assert_true(rt_pb_check((const unsigned char *)"\x08\x01", 2, RT_PB_GRAPH_DEF, &off, &why));   /* node as a number */
  assert_string_equal(why, "a field of the wrong wire type");
  /* MetaGraphDef.graph_def (at 0) > GraphDef.node (at 2) > NodeDef.name (at 4): its length 9 runs past */
  const unsigned char nested[] = {0x12, 0x05, 0x0a, 0x03, 0x0a, 0x09, 'a'};
  assert_true(rt_pb_check(nested, sizeof nested, RT_PB_META_GRAPH_DEF, &off, &why));
  assert_int_equal(off, 4);
  assert_string_equal(why, "a length past the end");
  rt_metagraph mg;
  rt_status st = {0};
  assert_int_equal(rt_metagraph_decode(nested, sizeof nested, "dir/model.meta", &mg, &st), RT_DATA_LOSS);
  assert_string_equal(st.msg, "dir/model.meta: not a MetaGraphDef (damaged at offset 4: a length past the end)");
  /* well-formed protobuf that is not this message: offset 0 */
  assert_false(rt_pb_check((const unsigned char *)"\x0a\x00", 2, RT_PB_GRAPH_DEF, &off, &why));
}

static rt_tensor *ints(rt_dtype t, int n, const int64_t *v) {
  rt_shape s = rt_shape_make(1, (int64_t[]){n});
  rt_tensor *x = rt_tensor_new(t, &s);
  for (int i = 0; i < n; i++)
    if (t == RT_INT32) ((int32_t *)rt_tensor_data(x))[i] = (int32_t)v[i];
    else ((int64_t *)rt_tensor_data(x))[i] = v[i];
  return x;
}

static int run(rt_node *n, int nin, rt_tensor **in, int nout, rt_tensor **out, rt_status *st) {
  const rt_op_sig *sig = rt_op_find(n->op);
  assert_non_null(sig);
  rt_kernel_ctx c = {.node = n, .n_inputs = nin, .inputs = in, .n_outputs = nout, .outputs = out, .st = st};
  return sig->def->kernel[RT_DEV_CPU](&c);
}

/* r0, r1 of BroadcastGradientArgs(a, b) as "0,2|1" */
static void bga(int na, const int64_t *a, int nb, const int64_t *b, const char *want) {
  rt_node *n = rt_node_new("bga", "BroadcastGradientArgs");
  rt_tensor *in[2] = {ints(RT_INT32, na, a), ints(RT_INT32, nb, b)}, *out[2] = {NULL, NULL};
  rt_status st = {0};
  assert_int_equal(run(n, 2, in, 2, out, &st), RT_OK);
  char got[64] = "";
  size_t at = 0;
  for (int o = 0; o < 2; o++) {
    for (int64_t i = 0; i < rt_tensor_numel(out[o]); i++)
      at += (size_t)snprintf(got + at, sizeof got - at, "%s%d", i ? "," : "", ((int32_t *)rt_tensor_data(out[o]))[i]);
    if (!o) at += (size_t)snprintf(got + at, sizeof got - at, "|");
  }
  assert_string_equal(got, want);
  for (int i = 0; i < 2; i++) rt_tensor_unref(in[i]), rt_tensor_unref(out[i]);
  rt_node_free(n);
}

static void test_broadcast_gradient_args(void **state) {
  (void)state;
  bga(2, (int64_t[]){2, 3}, 1, (int64_t[]){3}, "|0");
  bga(3, (int64_t[]){2, 1, 3}, 2, (int64_t[]){4, 1}, "1|0,2");
  bga(2, (int64_t[]){1, 1}, 2, (int64_t[]){1, 1}, "0,1|0,1");
  bga(0, NULL, 2, (int64_t[]){2, 2}, "0,1|");
  rt_node *n = rt_node_new("bga", "BroadcastGradientArgs");
  rt_tensor *in[2] = {ints(RT_INT32, 2, (int64_t[]){2, 3}), ints(RT_INT32, 1, (int64_t[]){4})}, *out[2] = {NULL, NULL};
  rt_status st = {0};
  assert_int_equal(run(n, 2, in, 2, out, &st), RT_INVALID_ARGUMENT);
  assert_non_null(strstr(st.msg, "Incompatible shapes: [2,3] vs. [4]"));
  for (int i = 0; i < 2; i++) rt_tensor_unref(in[i]), rt_tensor_unref(out[i]);
  rt_node_free(n);
}

static void test_gather_v2(void **state) {
  (void)state;
  rt_shape ps = rt_shape_make(2, (int64_t[]){2, 3});
  rt_tensor *p = rt_tensor_new(RT_FLOAT, &ps);
  for (int i = 0; i < 6; i++) ((float *)rt_tensor_data(p))[i] = (float)i;   /* [[0 1 2] [3 4 5]] */
  rt_shape ss = rt_shape_scalar();
  rt_tensor *axis = rt_tensor_new(RT_INT32, &ss);
  ((int32_t *)rt_tensor_data(axis))[0] = -1;
  rt_tensor *in[3] = {p, ints(RT_INT64, 3, (int64_t[]){2, 0, 2}), axis}, *out[1] = {NULL};
  rt_node *n = rt_node_new("g", "GatherV2");
  rt_status st = {0};
  assert_int_equal(run(n, 3, in, 1, out, &st), RT_OK);
  assert_int_equal(out[0]->shape.ndims, 2);
  assert_int_equal(out[0]->shape.dims[1], 3);
  const float want[] = {2, 0, 2, 5, 3, 5};
  assert_memory_equal(rt_tensor_data(out[0]), want, sizeof want);
  rt_tensor_unref(out[0]);
  out[0] = NULL;
  ((int32_t *)rt_tensor_data(axis))[0] = 0;
  assert_int_equal(run(n, 3, in, 1, out, &st), RT_INVALID_ARGUMENT);
  assert_non_null(strstr(st.msg, "indices[0] = 2 is not in [0, 2)"));
  for (int i = 0; i < 3; i++) rt_tensor_unref(in[i]);
  rt_tensor_unref(out[0]);
  rt_node_free(n);
}

int main(void) {
  op_register_all();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_metagraph_roundtrip),
    cmocka_unit_test(test_variable_def),
    cmocka_unit_test(test_pb_check),
    cmocka_unit_test(test_broadcast_gradient_args),
    cmocka_unit_test(test_gather_v2),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
