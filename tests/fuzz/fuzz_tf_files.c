/* libFuzzer target: the readers of TensorFlow's files. The first byte picks one: even, a
 * checkpoint .index (rt_bundle_index_parse: the LevelDB table, BundleHeaderProto and
 * BundleEntryProto through protobuf-c, or tfsh's first layout); odd, a binary GraphDef
 * (rt_graphdef_decode). A damaged file must give an error, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ops/ops.h"
#include "runtime/bundle.h"
#include "runtime/graphdef.h"

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
  } else {
    rt_graphdef gd;
    if (rt_graphdef_decode(data + 1, size - 1, "fuzz.pb", &gd, &st) == 0) rt_graphdef_free(&gd);
    else if (!st.code) abort();
  }
  return 0;
}
