/* Messages: a msgpack header map in the first ZeroMQ frame, then raw payload frames.
 *
 *   frame 0   header: map {"v": 1, "t": "RunStep", "id": 7, ...fields}
 *   frame 1.. payload: raw bytes (tensor contents), sent and received without copies
 *
 * net_msg builds an outgoing message; net_in is a received one whose header has been
 * validated (every length and count checked against the frame and the limits) before
 * msgpack_unpack ever saw it. net/PROTOCOL.md is the wire spec. */
#ifndef TFSH_NET_MSG_H
#define TFSH_NET_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "base/status.h"

#define NET_VERSION 1
#define NET_TYPE_MAX 31  /* longest message type name "t" */

/* What a received message may contain. Anything over a limit is refused before any
 * allocation sized from the wire. */
typedef struct net_limits {
  size_t max_header;    /* bytes in the header frame */
  size_t max_frames;    /* payload frames per message */
  size_t max_frame;     /* bytes in one payload frame (also ZMQ_MAXMSGSIZE) */
  uint32_t max_count;   /* elements of one header array or map */
  uint32_t max_str;     /* bytes of one header str or bin */
  int max_depth;        /* nesting of header arrays and maps (at most 32) */
} net_limits;

/* 1 MiB header, 1024 frames, 4 GiB frames, 1 Mi elements, 1 MiB strings, depth 16. */
void net_limits_default(net_limits *l);

/* ---- payload frames ---------------------------------------------------------------- */

/* Who frees a payload given to net_msg_frame: called once, with (data, arg), possibly from
 * a ZeroMQ I/O thread, when the bytes have been sent or the message is dropped. The same
 * signature as rt_buffer's free_fn. */
typedef void (*net_free_fn)(void *data, void *arg);

/* A received payload frame, reference-counted, so a tensor can wrap its bytes after the
 * message is freed:  buf->data = net_frame_data(f); buf->free_fn = net_frame_release;
 * buf->free_arg = net_frame_ref(f);
 * Alignment is ZeroMQ's: large frames are 8-byte aligned, small ones (< 8 KiB) may sit at
 * any address; check net_frame_aligned() and copy when a kernel needs more. */
typedef struct net_frame net_frame;

void *net_frame_data(const net_frame *f);
size_t net_frame_size(const net_frame *f);
bool net_frame_aligned(const net_frame *f, size_t align);
net_frame *net_frame_ref(net_frame *f);
void net_frame_unref(net_frame *f);
void net_frame_release(void *data, void *frame);  /* net_free_fn: unrefs frame */

/* ---- building ---------------------------------------------------------------------- */

typedef struct net_msg net_msg;

/* A message of type t with "v" and "t" written; "id" is filled in when it is sent. */
net_msg *net_msg_new(const char *type);
void net_msg_free(net_msg *m);   /* frees unsent payloads through their free_fn */

void net_msg_int(net_msg *m, const char *key, int64_t v);
void net_msg_uint(net_msg *m, const char *key, uint64_t v);
void net_msg_float(net_msg *m, const char *key, double v);
void net_msg_bool(net_msg *m, const char *key, bool v);
void net_msg_nil(net_msg *m, const char *key);
void net_msg_str(net_msg *m, const char *key, const char *s);   /* NULL writes nil */
void net_msg_strn(net_msg *m, const char *key, const char *s, size_t len);
void net_msg_bin(net_msg *m, const char *key, const void *p, size_t len);
/* Write key and return the packer: the caller packs exactly one value (an array, a map,
 * anything), e.g.  msgpack_packer *pk = net_msg_field(m, "shape");
 *                  msgpack_pack_array(pk, 2); msgpack_pack_int64(pk, 3); ... */
msgpack_packer *net_msg_field(net_msg *m, const char *key);

/* Attach a payload frame without copying: data must stay valid until free_fn(data, arg)
 * is called (free_fn may be NULL for static data). Frames keep their order. */
void net_msg_frame(net_msg *m, void *data, size_t len, net_free_fn free_fn, void *arg);
void net_msg_frame_copy(net_msg *m, const void *data, size_t len);
/* Forward a received frame: takes a new reference, no copy. */
void net_msg_frame_fwd(net_msg *m, net_frame *f);

const char *net_msg_type(const net_msg *m);
size_t net_msg_nframes(const net_msg *m);

/* ---- reading ----------------------------------------------------------------------- */

typedef struct net_in net_in;

/* Validate and unpack a header (frames are attached by the socket layer). Errors:
 * RT_INVALID_ARGUMENT "malformed header: ...", RT_RESOURCE_EXHAUSTED
 * "message over limits: ...", RT_UNIMPLEMENTED "unsupported protocol version ...".
 * On error *id_out (if not NULL) holds the request id when it could be read, else 0. */
net_in *net_in_parse(const void *header, size_t len, const net_limits *lim,
                     uint64_t *id_out, rt_status *st);
void net_in_free(net_in *m);

const char *net_in_type(const net_in *m);   /* NUL-terminated, at most NET_TYPE_MAX */
uint64_t net_in_id(const net_in *m);
const msgpack_object *net_in_header(const net_in *m);   /* the whole map */
size_t net_in_nframes(const net_in *m);
net_frame *net_in_frame(const net_in *m, size_t i);     /* borrowed; ref it to keep it */

/* Field getters: RT_INVALID_ARGUMENT with "TYPE: missing field \"key\"" or
 * "TYPE: field \"key\" is str, expected int". Strings and bins point into the header
 * frame and live as long as the message; they are not NUL-terminated. */
bool net_has(const net_in *m, const char *key);   /* present and not nil */
const msgpack_object *net_get(const net_in *m, const char *key);  /* NULL if absent */
int net_get_int(const net_in *m, const char *key, int64_t *out, rt_status *st);
int net_get_uint(const net_in *m, const char *key, uint64_t *out, rt_status *st);
int net_get_float(const net_in *m, const char *key, double *out, rt_status *st);
int net_get_bool(const net_in *m, const char *key, bool *out, rt_status *st);
int net_get_str(const net_in *m, const char *key, const char **p, size_t *len,
                rt_status *st);
int net_get_bin(const net_in *m, const char *key, const void **p, size_t *len,
                rt_status *st);
int net_get_array(const net_in *m, const char *key, const msgpack_object_array **out,
                  rt_status *st);
int net_get_map(const net_in *m, const char *key, const msgpack_object_map **out,
                rt_status *st);

/* The same checks on any object (inside arrays and maps); what names it in errors,
 * e.g. "RunStep: feeds[2].name". net_obj_key looks a str key up in a map (NULL if
 * absent or o is not a map). */
const msgpack_object *net_obj_key(const msgpack_object *o, const char *key);
const char *net_obj_kind(const msgpack_object *o);  /* "nil" "bool" "uint" "int" ... */
int net_obj_int(const msgpack_object *o, const char *what, int64_t *out, rt_status *st);
int net_obj_uint(const msgpack_object *o, const char *what, uint64_t *out, rt_status *st);
int net_obj_float(const msgpack_object *o, const char *what, double *out, rt_status *st);
int net_obj_bool(const msgpack_object *o, const char *what, bool *out, rt_status *st);
int net_obj_str(const msgpack_object *o, const char *what, const char **p, size_t *len,
                rt_status *st);
int net_obj_bin(const msgpack_object *o, const char *what, const void **p, size_t *len,
                rt_status *st);
int net_obj_array(const msgpack_object *o, const char *what,
                  const msgpack_object_array **out, rt_status *st);
int net_obj_map(const msgpack_object *o, const char *what, const msgpack_object_map **out,
                rt_status *st);

#endif
