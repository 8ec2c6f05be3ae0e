/* Any of tfsh's protocol-buffer messages (the .proto files in runtime/proto/ through protobuf-c), by
 * name, and protobuf's text format for them, both ways, driven by protobuf-c's
 * descriptors: TF 1.x's graph.pbtxt (tf.train.write_graph(as_text=True), text_format) in
 * and out. The printer writes what Python's text_format.MessageToString writes (fields in
 * number order, two-space indents, floats as Python prints them, bytes octal-escaped).
 * The parser accepts what TF's parsers accept (`:` optional before a message, `{}` or
 * `<>`, `[a, b]` lists, `#` comments, adjacent strings joined, enum names or numbers);
 * fields this project's messages do not declare are skipped. */
#ifndef TFSH_PBMSG_H
#define TFSH_PBMSG_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/bytes.h"
#include "base/status.h"

/* The descriptor of a message by its full name ("tensorflow.GraphDef",
 * "tensorflow.Summary.Value"), or NULL. */
const ProtobufCMessageDescriptor *rt_pb_find(const char *full_name);

/* Append m in text format to out (indent: spaces before each line). */
void rt_pb_text_print(const ProtobufCMessage *m, int indent, bytes_buf *out);

/* Parse text (n bytes) as a message of type d. Errors are INVALID_ARGUMENT and name the
 * place: "WHAT:LINE:COL: ..." (lines and columns from 1), or "LINE:COL : ..." as Python's
 * text_format says it when what is NULL. *out is freed with protobuf_c_message_free_unpacked
 * (m, NULL). */
int rt_pb_text_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t n, const char *what,
                     ProtobufCMessage **out, rt_status *st);

/* Do the first bytes of a file look like text format (printable ASCII and white space) rather
 * than a binary message (whose tags and lengths are control bytes)? */
bool rt_pb_looks_text(const void *p, size_t n);

/* Text format to a binary message of type d (*out malloc'd, *n its length); errors as
 * rt_pb_text_parse's. */
int rt_pb_text_to_binary(const ProtobufCMessageDescriptor *d, const char *text, size_t n, const char *what,
                         unsigned char **out, size_t *out_n, rt_status *st);

/* Python's repr of a float or double (shortest digits that read back the same value of
 * that width: 0.1 as a float is 0.1, not 0.10000000149011612). */
void rt_pb_float_repr(double v, int is_float, char *buf, size_t n);

/* Building and walking messages field by field (shell/tf/pbobj.c, the parser). */
ProtobufCMessage *rt_pb_new(const ProtobufCMessageDescriptor *d);   /* initialised */
const ProtobufCFieldDescriptor *rt_pb_field(const ProtobufCMessageDescriptor *d, const char *name);
size_t rt_pb_elem_size(ProtobufCType t);
/* Is a non-repeated field set (a non-default proto3 scalar, a message, a oneof's member)? */
bool rt_pb_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f);
/* Where the next value of f goes: a new zeroed element of a repeated field, or the field
 * (a oneof's case set, its previous member freed). */
void *rt_pb_slot(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f);
/* Set (or append to) a string or bytes field with a copy of p. */
void rt_pb_set_bytes(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const void *p, size_t n);

#endif
