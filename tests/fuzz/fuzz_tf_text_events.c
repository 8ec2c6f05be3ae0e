/* libFuzzer target: the readers of TensorFlow's text files and event files. The first byte
 * picks one: even, an event file (rt_record_next over the TFRecord framing, each record
 * unpacked as a tensorflow.Event and its Summary printed in text format); odd, a GraphDef
 * in text format (rt_pb_text_parse, then printed back and parsed again: what the printer
 * writes must read back). A damaged file must give an error, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/pbmsg.h"
#include "runtime/proto/event.pb-c.h"
#include "runtime/records.h"

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
    const ProtobufCMessageDescriptor *d = rt_pb_find("tensorflow.GraphDef");
    ProtobufCMessage *m;
    if (rt_pb_text_parse(d, (const char *)data + 1, size - 1, "fuzz.pbtxt", &m, &st) == 0) {
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
