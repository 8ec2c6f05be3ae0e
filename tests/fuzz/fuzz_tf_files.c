/* libFuzzer target: the readers of TensorFlow's files. The first byte picks one: even, a
 * checkpoint .index (rt_bundle_index_parse: the LevelDB table, BundleHeaderProto and
 * BundleEntryProto through protobuf-c, or tfsh's first layout); 1 mod 4, a binary GraphDef
 * (rt_graphdef_decode); 3 mod 4, a MetaGraphDef (rt_metagraph_decode, then its GraphDef
 * and every bytes collection's values as VariableDefs). A damaged file must give an error
 * that says where, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ops/ops.h"
#include "runtime/bundle.h"
#include "runtime/graphdef.h"
#include "runtime/metagraph.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  op_register_all();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  rt_status st = {0};
  if (data[0] % 2 == 0) {
    rt_bundle_index ix;
    if (rt_bundle_index_parse(data + 1, size - 1, "fuzz.index", &ix, &st) == 0) {
      for (int i = 0; i < ix.n; i++) (void)rt_bundle_find(&ix, ix.e[i].name);
      rt_bundle_index_free(&ix);
    } else if (!st.code) {
      abort();   /* a failure must say why */
    }
  } else if (data[0] % 4 == 1) {
    rt_graphdef gd;
    if (rt_graphdef_decode(data + 1, size - 1, "fuzz.pb", &gd, &st) == 0) rt_graphdef_free(&gd);
    else if (!st.code) abort();
  } else {
    rt_metagraph mg;
    if (rt_metagraph_decode(data + 1, size - 1, "fuzz.meta", &mg, &st)) {
      if (!st.code) abort();
      return 0;
    }
    rt_graphdef gd;
    if (mg.graph_def && rt_graphdef_decode(mg.graph_def, mg.graph_def_len, "fuzz.meta", &gd, &st) == 0) rt_graphdef_free(&gd);
    for (int i = 0; i < mg.n_coll; i++)
      for (int j = 0; mg.coll[i].kind == RT_MG_BYTES && j < mg.coll[i].n; j++) {
        rt_variable_def v;
        if (rt_variable_def_decode((const unsigned char *)mg.coll[i].v[j], mg.coll[i].len[j], "fuzz.meta", &v, &st) == 0)
          rt_variable_def_clear(&v);
      }
    unsigned char *out;
    size_t n;
    if (rt_metagraph_encode(&mg, &out, &n, &st) == 0) free(out);
    rt_metagraph_clear(&mg);
  }
  return 0;
}
