/* libFuzzer target: the readers of TensorFlow's text files and event files. The first byte
 * picks one: even, an event file (rt_record_next over the TFRecord framing, each record
 * unpacked as a tensorflow.Event and its Summary printed in text format); 1 mod 4, a
 * GraphDef in text format, 3 mod 4, a MetaGraphDef in text format (rt_pb_text_parse, then
 * printed back and parsed again: what the printer writes must read back; a MetaGraph's
 * binary form then read as import_meta_graph reads it, its GraphDef decoded). A damaged
 * file must give an error, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "runtime/graphdef.h"
#include "runtime/metagraph.h"
#include "runtime/pbmsg.h"
#include "runtime/proto/event.pb-c.h"
#include "runtime/records.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  op_register_all();
  return 0;
}

/* A MetaGraph's binary form as import_meta_graph takes it: its GraphDef too. */
static void meta_binary(const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  unsigned char *b = malloc(n ? n : 1);
  if (!b) return;
  protobuf_c_message_pack(m, b);
  (void)rt_pb_looks_text(b, n);
  rt_status st = {0};
  rt_metagraph mg;
  if (rt_metagraph_decode(b, n, "fuzz.meta", &mg, &st) == 0) {
    rt_graphdef gd;
    if (mg.graph_def && rt_graphdef_decode(mg.graph_def, mg.graph_def_len, "fuzz.meta", &gd, &st) == 0) rt_graphdef_free(&gd);
    rt_metagraph_clear(&mg);
  } else if (!st.code) {
    abort();
  }
  free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  rt_status st = {0};
  if (data[0] % 2 == 0) {
    size_t off = 0;
    const unsigned char *rec;
    size_t len;
    int rc;
    while ((rc = rt_record_next(data + 1, size - 1, &off, "fuzz.tfevents", &rec, &len, &st)) > 0) {
      Tensorflow__Event *ev = tensorflow__event__unpack(NULL, len, rec);
      if (!ev) continue;
      bytes_buf b = {0};
      rt_pb_text_print(&ev->base, 0, &b);
      free(b.p);
      tensorflow__event__free_unpacked(ev, NULL);
    }
    if (rc < 0 && !st.code) abort();   /* a failure must say why */
  } else {
    bool meta = data[0] % 4 == 3;
    const ProtobufCMessageDescriptor *d = rt_pb_find(meta ? "tensorflow.MetaGraphDef" : "tensorflow.GraphDef");
    ProtobufCMessage *m;
    (void)rt_pb_looks_text(data + 1, size - 1);
    if (rt_pb_text_parse(d, (const char *)data + 1, size - 1, "fuzz.pbtxt", &m, &st) == 0) {
      if (meta) meta_binary(m);
      bytes_buf b = {0};
      rt_pb_text_print(m, 0, &b);
      ProtobufCMessage *back;
      rt_status st2 = {0};
      if (!b.oom && rt_pb_text_parse(d, (const char *)b.p, b.n, "printed", &back, &st2) != 0) abort();
      if (!b.oom) protobuf_c_message_free_unpacked(back, NULL);
      free(b.p);
      protobuf_c_message_free_unpacked(m, NULL);
    } else if (!st.code) {
      abort();
    }
  }
  return 0;
}
