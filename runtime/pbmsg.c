/* Messages by name and protobuf's text format: runtime/pbmsg.h. Everything goes through
 * protobuf-c's descriptors (field names, numbers, types, offsets), so one printer and one
 * parser serve every message in runtime/proto/. */
#include "runtime/pbmsg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/proto/bundle.pb-c.h"
#include "runtime/proto/event.pb-c.h"
#include "runtime/proto/graph.pb-c.h"
#include "runtime/proto/meta_graph.pb-c.h"
#include "runtime/proto/step_stats.pb-c.h"

/* ---- messages by name ------------------------------------------------------------------ */

static const ProtobufCMessageDescriptor *const roots[] = {
  &tensorflow__graph_def__descriptor,     &tensorflow__event__descriptor,
  &tensorflow__run_metadata__descriptor,  &tensorflow__meta_graph_def__descriptor,
  &tensorflow__bundle_entry_proto__descriptor, &tensorflow__bundle_header_proto__descriptor,
  &tensorflow__saver_def__descriptor,
};

/* Depth-first through the message-typed fields; seen bounds the walk (types recurse). */
static const ProtobufCMessageDescriptor *find_in(const ProtobufCMessageDescriptor *d, const char *name,
                                                 const ProtobufCMessageDescriptor **seen, int *n_seen) {
  for (int i = 0; i < *n_seen; i++)
    if (seen[i] == d) return NULL;
  if (*n_seen < 256) seen[(*n_seen)++] = d;
  if (!strcmp(d->name, name)) return d;
  for (unsigned i = 0; i < d->n_fields; i++)
    if (d->fields[i].type == PROTOBUF_C_TYPE_MESSAGE) {
      const ProtobufCMessageDescriptor *r = find_in(d->fields[i].descriptor, name, seen, n_seen);
      if (r) return r;
    }
  return NULL;
}

const ProtobufCMessageDescriptor *rt_pb_find(const char *full_name) {
  const ProtobufCMessageDescriptor *seen[256];
  int n_seen = 0;
  for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
    const ProtobufCMessageDescriptor *r = find_in(roots[i], full_name, seen, &n_seen);
    if (r) return r;
  }
  return NULL;
}

/* ---- field access ---------------------------------------------------------------------- */

size_t rt_pb_elem_size(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_ENUM:
    return 4;
  case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
    return 8;
  case PROTOBUF_C_TYPE_FLOAT: return sizeof(float);
  case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
  case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
  case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
  case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
  case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
  }
  return 8;
}

static bool is_oneof(const ProtobufCFieldDescriptor *f) { return (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0; }

/* Is a value of a non-repeated field there to print? */
bool rt_pb_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  const char *base = (const char *)m;
  const void *v = base + f->offset;
  if (is_oneof(f)) return *(const uint32_t *)(base + f->quantifier_offset) == f->id;
  if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset && f->type != PROTOBUF_C_TYPE_MESSAGE &&
      f->type != PROTOBUF_C_TYPE_STRING)
    return *(const protobuf_c_boolean *)(base + f->quantifier_offset);
  switch (f->type) {
  case PROTOBUF_C_TYPE_MESSAGE: return *(ProtobufCMessage *const *)v != NULL;
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)v;
    return s && s[0];
  }
  case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)v)->len > 0;
  case PROTOBUF_C_TYPE_FLOAT: return *(const float *)v != 0 || signbit(*(const float *)v);
  case PROTOBUF_C_TYPE_DOUBLE: return *(const double *)v != 0 || signbit(*(const double *)v);
  default: break;
  }
  unsigned char zero[8] = {0};
  return memcmp(v, zero, rt_pb_elem_size(f->type)) != 0;
}

/* ---- printing -------------------------------------------------------------------------- */

void rt_pb_float_repr(double v, int is_float, char *buf, size_t n) {
  if (isnan(v)) {
    snprintf(buf, n, "nan");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, n, v < 0 ? "-inf" : "inf");
    return;
  }
  char e[64];
  int prec = 1;
  for (; prec <= 17; prec++) {   /* shortest %e form that reads back the same value */
    snprintf(e, sizeof e, "%.*e", prec - 1, v);
    if (is_float ? strtof(e, NULL) == (float)v : strtod(e, NULL) == v) break;
  }
  /* digits and exponent of d.ddde+XX */
  char digits[32];
  int nd = 0, exp10;
  const char *p = e;
  bool neg = *p == '-';
  if (neg) p++;
  for (; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9') digits[nd++] = *p;
  exp10 = atoi(p + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = '\0';
  char out[64];
  size_t k = 0;
  if (neg) out[k++] = '-';
  if (exp10 >= -4 && exp10 < 16) {   /* Python's repr: fixed from 1e-4 up to 1e16 */
    if (exp10 < 0) {
      out[k++] = '0', out[k++] = '.';
      for (int i = -1; i > exp10; i--) out[k++] = '0';
      for (int i = 0; i < nd; i++) out[k++] = digits[i];
    } else {
      for (int i = 0; i <= exp10; i++) out[k++] = i < nd ? digits[i] : '0';
      out[k++] = '.';
      if (nd > exp10 + 1)
        for (int i = exp10 + 1; i < nd; i++) out[k++] = digits[i];
      else
        out[k++] = '0';
    }
    out[k] = '\0';
  } else {
    out[k++] = digits[0];
    if (nd > 1) {
      out[k++] = '.';
      for (int i = 1; i < nd; i++) out[k++] = digits[i];
    }
    snprintf(out + k, sizeof out - k, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
  }
  snprintf(buf, n, "%s", out);
}

static void put_str(bytes_buf *b, const char *s) { bytes_put(b, s, strlen(s)); }

static void put_indent(bytes_buf *b, int indent) {
  for (int i = 0; i < indent; i++) bytes_u8(b, ' ');
}

/* Python's text_format escaping of bytes (as_utf8=False): C escapes, the rest octal. */
static void put_quoted(bytes_buf *b, const unsigned char *s, size_t n) {
  bytes_u8(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned c = s[i];
    switch (c) {
    case '\n': put_str(b, "\\n"); break;
    case '\r': put_str(b, "\\r"); break;
    case '\t': put_str(b, "\\t"); break;
    case '"': put_str(b, "\\\""); break;
    case '\'': put_str(b, "\\'"); break;
    case '\\': put_str(b, "\\\\"); break;
    default:
      if (c < 32 || c >= 127) {
        char o[8];
        snprintf(o, sizeof o, "\\%03o", c);
        put_str(b, o);
      } else {
        bytes_u8(b, (unsigned char)c);
      }
    }
  }
  bytes_u8(b, '"');
}

static void print_value(const ProtobufCFieldDescriptor *f, const void *v, int indent, bytes_buf *b) {
  char num[64];
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    snprintf(num, sizeof num, "%d", *(const int32_t *)v);
    break;
  case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
    snprintf(num, sizeof num, "%u", *(const uint32_t *)v);
    break;
  case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    snprintf(num, sizeof num, "%lld", (long long)*(const int64_t *)v);
    break;
  case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
    snprintf(num, sizeof num, "%llu", (unsigned long long)*(const uint64_t *)v);
    break;
  case PROTOBUF_C_TYPE_FLOAT: rt_pb_float_repr(*(const float *)v, 1, num, sizeof num); break;
  case PROTOBUF_C_TYPE_DOUBLE: rt_pb_float_repr(*(const double *)v, 0, num, sizeof num); break;
  case PROTOBUF_C_TYPE_BOOL: snprintf(num, sizeof num, "%s", *(const protobuf_c_boolean *)v ? "true" : "false"); break;
  case PROTOBUF_C_TYPE_ENUM: {
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int32_t *)v);
    if (ev) snprintf(num, sizeof num, "%s", ev->name);
    else snprintf(num, sizeof num, "%d", *(const int32_t *)v);
    break;
  }
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)v;
    put_quoted(b, (const unsigned char *)(s ? s : ""), s ? strlen(s) : 0);
    return;
  }
  case PROTOBUF_C_TYPE_BYTES: {
    const ProtobufCBinaryData *bd = v;
    put_quoted(b, bd->data, bd->len);
    return;
  }
  case PROTOBUF_C_TYPE_MESSAGE:
    put_str(b, "{\n");
    rt_pb_text_print(*(ProtobufCMessage *const *)v, indent + 2, b);
    put_indent(b, indent);
    bytes_u8(b, '}');
    return;
  }
  put_str(b, num);
}

static void print_field(const ProtobufCFieldDescriptor *f, const void *v, int indent, bytes_buf *b) {
  put_indent(b, indent);
  put_str(b, f->name);
  put_str(b, f->type == PROTOBUF_C_TYPE_MESSAGE ? " " : ": ");
  print_value(f, v, indent, b);
  bytes_u8(b, '\n');
}

/* TF's map<string, V> fields are repeated entries of a message with string key = 1 and
 * value = 2 (tfsh's AttrEntry, CollectionEntry). */
static bool is_map_entry(const ProtobufCFieldDescriptor *f) {
  if (f->type != PROTOBUF_C_TYPE_MESSAGE) return false;
  const ProtobufCMessageDescriptor *d = f->descriptor;
  return d->n_fields == 2 && d->fields[0].id == 1 && d->fields[0].type == PROTOBUF_C_TYPE_STRING &&
         !strcmp(d->fields[0].name, "key") && d->fields[1].id == 2 && !strcmp(d->fields[1].name, "value");
}

static int entry_cmp(const void *a, const void *b) {
  const ProtobufCMessage *x = *(ProtobufCMessage *const *)a, *y = *(ProtobufCMessage *const *)b;
  const char *kx = *(char *const *)((const char *)x + x->descriptor->fields[0].offset);
  const char *ky = *(char *const *)((const char *)y + y->descriptor->fields[0].offset);
  return strcmp(kx ? kx : "", ky ? ky : "");
}

void rt_pb_text_print(const ProtobufCMessage *m, int indent, bytes_buf *out) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  /* in field-number order, as Python's text_format prints ListFields() */
  const ProtobufCFieldDescriptor *order[512];
  unsigned n = d->n_fields < 512 ? d->n_fields : 512;
  for (unsigned i = 0; i < n; i++) order[i] = &d->fields[i];
  for (unsigned i = 1; i < n; i++)
    for (unsigned j = i; j > 0 && order[j - 1]->id > order[j]->id; j--) {
      const ProtobufCFieldDescriptor *t = order[j];
      order[j] = order[j - 1], order[j - 1] = t;
    }
  for (unsigned i = 0; i < n; i++) {
    const ProtobufCFieldDescriptor *f = order[i];
    const char *base = (const char *)m;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t cnt = *(const size_t *)(base + f->quantifier_offset);
      const char *arr = *(char *const *)(base + f->offset);
      if (is_map_entry(f)) {   /* a map: Python's text_format prints it sorted by key */
        ProtobufCMessage **sorted = xmalloc((cnt ? cnt : 1) * sizeof *sorted);
        if (cnt) memcpy(sorted, arr, cnt * sizeof *sorted);
        qsort(sorted, cnt, sizeof *sorted, entry_cmp);
        for (size_t k = 0; k < cnt; k++) print_field(f, &sorted[k], indent, out);
        free(sorted);
      } else {
        for (size_t k = 0; k < cnt; k++) print_field(f, arr + k * rt_pb_elem_size(f->type), indent, out);
      }
    } else if (rt_pb_present(m, f)) {
      print_field(f, base + f->offset, indent, out);
    }
  }
}

/* ---- parsing --------------------------------------------------------------------------- */

typedef struct lexer {
  const char *s;
  size_t n, pos;
  int line, col;           /* of pos, from 1 */
  const char *what;
  rt_status *st;
  int depth;
} lexer;

static int lex_error(lexer *lx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lex_error(lexer *lx, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (lx->what) return rt_error(lx->st, RT_INVALID_ARGUMENT, "%s:%d:%d: %s", lx->what, lx->line, lx->col, msg);
  return rt_error(lx->st, RT_INVALID_ARGUMENT, "%d:%d : %s", lx->line, lx->col, msg);
}

static void advance(lexer *lx) {
  if (lx->s[lx->pos] == '\n') lx->line++, lx->col = 1;
  else lx->col++;
  lx->pos++;
}

static void skip_space(lexer *lx) {
  while (lx->pos < lx->n) {
    char c = lx->s[lx->pos];
    if (c == '#') {
      while (lx->pos < lx->n && lx->s[lx->pos] != '\n') advance(lx);
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      advance(lx);
    } else {
      break;
    }
  }
}

static int peek(lexer *lx) {
  skip_space(lx);
  return lx->pos < lx->n ? (unsigned char)lx->s[lx->pos] : -1;
}

static bool accept(lexer *lx, char c) {
  if (peek(lx) != c) return false;
  advance(lx);
  return true;
}

static bool ident_char(int c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* What is at the cursor, for an error ("end of input", or the token's first characters). */
static const char *near(lexer *lx, char *buf, size_t n) {
  if (peek(lx) < 0) return "end of input";
  size_t k = 0;
  buf[k++] = '"';
  for (size_t i = lx->pos; i < lx->n && k + 2 < n && k < 21; i++) {
    char c = lx->s[i];
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r') break;
    buf[k++] = c >= 32 && c < 127 ? c : '?';
  }
  buf[k++] = '"';
  buf[k] = '\0';
  return buf;
}

/* An identifier or a number-like token (letters, digits, '.', '+', '-', ...). */
static bool read_word(lexer *lx, char *buf, size_t n) {
  if (peek(lx) < 0) return false;
  size_t k = 0;
  while (lx->pos < lx->n) {
    char c = lx->s[lx->pos];
    if (!(ident_char((unsigned char)c, false) || c == '.' || c == '+' || c == '-')) break;
    if (k + 1 < n) buf[k++] = c;
    advance(lx);
  }
  buf[k] = '\0';
  return k > 0;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One or more adjacent quoted strings, C escapes decoded, into out. */
static int read_string(lexer *lx, bytes_buf *out) {
  int q = peek(lx);
  if (q != '"' && q != '\'') {
    char nb[32];
    return lex_error(lx, "expected a string, got %s", near(lx, nb, sizeof nb));
  }
  while ((q = peek(lx)) == '"' || q == '\'') {
    int line = lx->line, col = lx->col;
    advance(lx);
    for (;;) {
      if (lx->pos >= lx->n || lx->s[lx->pos] == '\n') {
        lx->line = line, lx->col = col;
        return lex_error(lx, "string not terminated");
      }
      unsigned char c = (unsigned char)lx->s[lx->pos];
      advance(lx);
      if (c == (unsigned char)q) break;
      if (c != '\\') {
        bytes_u8(out, c);
        continue;
      }
      if (lx->pos >= lx->n) return lex_error(lx, "string not terminated");
      c = (unsigned char)lx->s[lx->pos];
      advance(lx);
      switch (c) {
      case 'n': bytes_u8(out, '\n'); break;
      case 'r': bytes_u8(out, '\r'); break;
      case 't': bytes_u8(out, '\t'); break;
      case 'a': bytes_u8(out, '\a'); break;
      case 'b': bytes_u8(out, '\b'); break;
      case 'f': bytes_u8(out, '\f'); break;
      case 'v': bytes_u8(out, '\v'); break;
      case 'x': {
        int v = 0, k = 0;
        while (k < 2 && lx->pos < lx->n && hexval((unsigned char)lx->s[lx->pos]) >= 0)
          v = v * 16 + hexval((unsigned char)lx->s[lx->pos]), advance(lx), k++;
        if (!k) return lex_error(lx, "bad \\x escape in a string");
        bytes_u8(out, (unsigned)v);
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int v = c - '0', k = 1;
          while (k < 3 && lx->pos < lx->n && lx->s[lx->pos] >= '0' && lx->s[lx->pos] <= '7')
            v = v * 8 + (lx->s[lx->pos] - '0'), advance(lx), k++;
          if (v > 255) return lex_error(lx, "octal escape out of range in a string");
          bytes_u8(out, (unsigned)v);
        } else {
          bytes_u8(out, c);   /* \" \' \\ \? and the rest: the character itself */
        }
      }
    }
  }
  if (out->oom) return rt_error(lx->st, RT_RESOURCE_EXHAUSTED, "out of memory reading a string");
  return 0;
}

static int skip_value(lexer *lx);

/* Skip a message body up to and including its closing bracket. */
static int skip_body(lexer *lx, char close) {
  if (++lx->depth > 100) return lex_error(lx, "messages nested more than 100 deep");
  for (;;) {
    int c = peek(lx);
    if (c < 0) return lex_error(lx, "expected '%c', got end of input", close);
    if (c == close) {
      advance(lx);
      lx->depth--;
      return 0;
    }
    char w[128], nb[32];
    if (accept(lx, '[')) {   /* an extension or Any's [type/url] name */
      while (peek(lx) >= 0 && peek(lx) != ']') advance(lx);
      if (!accept(lx, ']')) return lex_error(lx, "expected ']', got end of input");
    } else if (!read_word(lx, w, sizeof w)) {
      return lex_error(lx, "expected a field name, got %s", near(lx, nb, sizeof nb));
    }
    if (skip_value(lx)) return -1;
    if (!accept(lx, ',')) accept(lx, ';');
  }
}

/* Skip `: scalar`, `: [..]`, or a message `{..}` / `<..>` (after the field name). */
static int skip_value(lexer *lx) {
  bool colon = accept(lx, ':');
  int c = peek(lx);
  char nb[32];
  if (c == '{' || c == '<') {
    advance(lx);
    return skip_body(lx, c == '{' ? '}' : '>');
  }
  if (!colon) return lex_error(lx, "expected ':', got %s", near(lx, nb, sizeof nb));
  if (accept(lx, '[')) {
    if (accept(lx, ']')) return 0;
    for (;;) {
      c = peek(lx);
      if (c == '{' || c == '<') {
        advance(lx);
        if (skip_body(lx, c == '{' ? '}' : '>')) return -1;
      } else if (c == '"' || c == '\'') {
        bytes_buf tmp = {0};
        int rc = read_string(lx, &tmp);
        free(tmp.p);
        if (rc) return rc;
      } else {
        char w[128];
        if (!read_word(lx, w, sizeof w)) return lex_error(lx, "expected a value, got %s", near(lx, nb, sizeof nb));
      }
      if (accept(lx, ']')) return 0;
      if (!accept(lx, ',')) return lex_error(lx, "expected ',' or ']', got %s", near(lx, nb, sizeof nb));
    }
  }
  if (c == '"' || c == '\'') {
    bytes_buf tmp = {0};
    int rc = read_string(lx, &tmp);
    free(tmp.p);
    return rc;
  }
  char w[128];
  if (!read_word(lx, w, sizeof w)) return lex_error(lx, "expected a value, got %s", near(lx, nb, sizeof nb));
  return 0;
}

const ProtobufCFieldDescriptor *rt_pb_field(const ProtobufCMessageDescriptor *d, const char *name) {
  for (unsigned i = 0; i < d->n_fields; i++)
    if (!strcmp(d->fields[i].name, name)) return &d->fields[i];
  return NULL;
}

ProtobufCMessage *rt_pb_new(const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = xcalloc(1, d->sizeof_message);
  d->message_init(m);
  return m;
}

/* Free what a oneof member holds (protobuf-c keeps a oneof's members in one union). */
static void clear_member(char *base, const ProtobufCFieldDescriptor *f) {
  void *v = base + f->offset;
  if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
    ProtobufCMessage *m = *(ProtobufCMessage **)v;
    if (m) protobuf_c_message_free_unpacked(m, NULL);
  } else if (f->type == PROTOBUF_C_TYPE_STRING) {
    char *s = *(char **)v;
    if (s && s != (const char *)f->default_value) free(s);
  } else if (f->type == PROTOBUF_C_TYPE_BYTES) {
    free(((ProtobufCBinaryData *)v)->data);
  }
  memset(v, 0, rt_pb_elem_size(f->type));
}

/* Where the next value of f goes: a fresh slot of a repeated field, or the field itself. */
void *rt_pb_slot(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  char *base = (char *)m;
  if (f->label == PROTOBUF_C_LABEL_REPEATED) {
    size_t *cnt = (size_t *)(base + f->quantifier_offset);
    char **arr = (char **)(base + f->offset);
    size_t es = rt_pb_elem_size(f->type);
    if (!(*cnt & (*cnt - 1)))   /* room for twice as many at each power of two: appends stay linear */
      *arr = xrealloc(*arr, (*cnt ? 2 * *cnt : 1) * es);
    memset(*arr + *cnt * es, 0, es);
    return *arr + (*cnt)++ * es;
  }
  if (is_oneof(f)) {
    uint32_t *c = (uint32_t *)(base + f->quantifier_offset);
    if (*c && *c != f->id)
      for (unsigned i = 0; i < m->descriptor->n_fields; i++)
        if (m->descriptor->fields[i].id == *c) clear_member(base, &m->descriptor->fields[i]);
    if (*c != f->id && f->type == PROTOBUF_C_TYPE_STRING) *(char **)(base + f->offset) = NULL;
    *c = f->id;
  } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset && f->type != PROTOBUF_C_TYPE_MESSAGE &&
             f->type != PROTOBUF_C_TYPE_STRING) {
    *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
  }
  return base + f->offset;
}

void rt_pb_set_bytes(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const void *p, size_t n) {
  bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
  if (!repeated && (!is_oneof(f) || *(const uint32_t *)((const char *)m + f->quantifier_offset) == f->id))
    clear_member((char *)m, f);
  void *v = rt_pb_slot(m, f);
  if (f->type == PROTOBUF_C_TYPE_STRING) {
    char *str = xmalloc(n + 1);
    if (n) memcpy(str, p, n);
    str[n] = '\0';
    *(char **)v = str;
  } else {
    ProtobufCBinaryData *bd = v;
    bd->data = n ? xmalloc(n) : NULL;
    if (n) memcpy(bd->data, p, n);
    bd->len = n;
  }
}

static int parse_body(lexer *lx, ProtobufCMessage *m, int close);

static bool parse_int(const char *w, bool is_signed, int64_t *out) {
  errno = 0;
  char *end;
  if (is_signed) {
    long long v = strtoll(w, &end, 0);
    *out = v;
  } else {
    if (w[0] == '-') return false;
    unsigned long long v = strtoull(w, &end, 0);
    *out = (int64_t)v;
  }
  return !errno && *end == '\0' && end != w;
}

static bool parse_double(const char *w, double *out) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", w);
  size_t k = strlen(buf);
  if (k > 1 && (buf[k - 1] == 'f' || buf[k - 1] == 'F') && strcasecmp(buf, "inf") && strcasecmp(buf, "-inf") &&
      strcasecmp(buf + (buf[0] == '-'), "inff") != 0)
    buf[k - 1] = '\0';
  const char *s = buf + (buf[0] == '-');
  if (!strcasecmp(s, "inf") || !strcasecmp(s, "infinity") || !strcasecmp(s, "inff")) {
    *out = buf[0] == '-' ? -INFINITY : INFINITY;
    return true;
  }
  if (!strcasecmp(s, "nan") || !strcasecmp(s, "nanf")) {
    *out = NAN;
    return true;
  }
  char *end;
  *out = strtod(buf, &end);
  return *end == '\0' && end != buf && (s[0] == '.' || (s[0] >= '0' && s[0] <= '9'));
}

/* One scalar value of f into slot v. */
static int parse_scalar(lexer *lx, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  char w[128], nb[32];
  int line = lx->line, col = lx->col;
  if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES) {
    bytes_buf s = {0};
    if (read_string(lx, &s)) {
      free(s.p);
      return -1;
    }
    if (f->type == PROTOBUF_C_TYPE_STRING && memchr(s.p ? (void *)s.p : (void *)"", 0, s.n)) {
      free(s.p);
      lx->line = line, lx->col = col;
      return lex_error(lx, "field \"%s\": a string holds a NUL byte", f->name);
    }
    rt_pb_set_bytes(m, f, s.p, s.n);
    free(s.p);
    return 0;
  }
  if (!read_word(lx, w, sizeof w)) return lex_error(lx, "expected a value for field \"%s\", got %s", f->name, near(lx, nb, sizeof nb));
  int64_t iv;
  double dv;
  bool ok = true;
  union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f;
    double d;
    protobuf_c_boolean b;
  } val = {0};
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    ok = parse_int(w, true, &iv) && iv >= INT32_MIN && iv <= INT32_MAX;
    val.i32 = (int32_t)iv;
    break;
  case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
    ok = parse_int(w, false, &iv) && (uint64_t)iv <= UINT32_MAX;
    val.u32 = (uint32_t)iv;
    break;
  case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    ok = parse_int(w, true, &iv);
    val.i64 = iv;
    break;
  case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
    ok = parse_int(w, false, &iv);
    val.u64 = (uint64_t)iv;
    break;
  case PROTOBUF_C_TYPE_FLOAT:
    ok = parse_double(w, &dv);
    val.f = (float)dv;
    break;
  case PROTOBUF_C_TYPE_DOUBLE:
    ok = parse_double(w, &dv);
    val.d = dv;
    break;
  case PROTOBUF_C_TYPE_BOOL:
    if (!strcmp(w, "true") || !strcmp(w, "True") || !strcmp(w, "t") || !strcmp(w, "1")) val.b = 1;
    else if (!strcmp(w, "false") || !strcmp(w, "False") || !strcmp(w, "f") || !strcmp(w, "0")) val.b = 0;
    else ok = false;
    break;
  case PROTOBUF_C_TYPE_ENUM: {
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, w);
    if (ev) val.i32 = ev->value;
    else if (parse_int(w, true, &iv) && iv >= INT32_MIN && iv <= INT32_MAX) val.i32 = (int32_t)iv;
    else {
      lx->line = line, lx->col = col;
      return lex_error(lx, "enum type \"%s\" has no value named %s", ((const ProtobufCEnumDescriptor *)f->descriptor)->name, w);
    }
    break;
  }
  default: ok = false;
  }
  if (!ok) {
    lx->line = line, lx->col = col;
    return lex_error(lx, "field \"%s\": not a valid %s: %s", f->name,
                     f->type == PROTOBUF_C_TYPE_FLOAT || f->type == PROTOBUF_C_TYPE_DOUBLE ? "number"
                     : f->type == PROTOBUF_C_TYPE_BOOL                                     ? "bool"
                                                                                          : "integer",
                     w);
  }
  memcpy(rt_pb_slot(m, f), &val, rt_pb_elem_size(f->type));
  return 0;
}

static int parse_message_value(lexer *lx, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  int c = peek(lx);
  char nb[32];
  if (c != '{' && c != '<') return lex_error(lx, "expected '{' for field \"%s\", got %s", f->name, near(lx, nb, sizeof nb));
  advance(lx);
  ProtobufCMessage **slot = rt_pb_slot(m, f);
  if (!*slot) *slot = rt_pb_new(f->descriptor);
  return parse_body(lx, *slot, c == '{' ? '}' : '>');
}

static int parse_field(lexer *lx, ProtobufCMessage *m) {
  char name[128], nb[32];
  int line = lx->line, col = lx->col;
  if (peek(lx) == '[') {   /* an extension: not in tfsh's messages */
    while (peek(lx) >= 0 && peek(lx) != ']') advance(lx);
    if (!accept(lx, ']')) return lex_error(lx, "expected ']', got end of input");
    return skip_value(lx);
  }
  if (!ident_char(peek(lx), true) || !read_word(lx, name, sizeof name))
    return lex_error(lx, "expected a field name, got %s", near(lx, nb, sizeof nb));
  const ProtobufCFieldDescriptor *f = rt_pb_field(m->descriptor, name);
  if (!f) return skip_value(lx);   /* a field tfsh's messages leave out */
  bool colon = accept(lx, ':');
  int c = peek(lx);
  if (f->type != PROTOBUF_C_TYPE_MESSAGE && (c == '{' || c == '<')) {
    if (f->type == PROTOBUF_C_TYPE_BYTES) {   /* kept as bytes here (GraphDef.library) */
      advance(lx);
      return skip_body(lx, c == '{' ? '}' : '>');
    }
    return lex_error(lx, "field \"%s\" is not a message, got %s", f->name, near(lx, nb, sizeof nb));
  }
  if (f->type != PROTOBUF_C_TYPE_MESSAGE && !colon) {
    lx->line = line, lx->col = col;
    return lex_error(lx, "expected ':' after field \"%s\"", f->name);
  }
  if (colon && accept(lx, '[')) {
    if (f->label != PROTOBUF_C_LABEL_REPEATED) return lex_error(lx, "field \"%s\" is not repeated: no [ ] list", f->name);
    if (accept(lx, ']')) return 0;
    for (;;) {
      if (f->type == PROTOBUF_C_TYPE_MESSAGE ? parse_message_value(lx, m, f) : parse_scalar(lx, m, f)) return -1;
      if (accept(lx, ']')) return 0;
      if (!accept(lx, ',')) return lex_error(lx, "expected ',' or ']', got %s", near(lx, nb, sizeof nb));
    }
  }
  if (f->type == PROTOBUF_C_TYPE_MESSAGE) return parse_message_value(lx, m, f);
  return parse_scalar(lx, m, f);
}

/* Fields up to close ('}' or '>'), or to the end of input (close 0). */
static int parse_body(lexer *lx, ProtobufCMessage *m, int close) {
  if (++lx->depth > 100) return lex_error(lx, "messages nested more than 100 deep");
  for (;;) {
    int c = peek(lx);
    if (c < 0) {
      if (close) return lex_error(lx, "expected '%c', got end of input", close);
      break;
    }
    if (close && c == close) {
      advance(lx);
      break;
    }
    if (parse_field(lx, m)) return -1;
    if (!accept(lx, ',')) accept(lx, ';');
  }
  lx->depth--;
  return 0;
}

int rt_pb_text_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t n, const char *what,
                     ProtobufCMessage **out, rt_status *st) {
  lexer lx = {.s = text, .n = n, .line = 1, .col = 1, .what = what, .st = st};
  ProtobufCMessage *m = rt_pb_new(d);
  if (parse_body(&lx, m, 0)) {
    protobuf_c_message_free_unpacked(m, NULL);
    *out = NULL;
    return -1;
  }
  *out = m;
  return 0;
}

bool rt_pb_looks_text(const void *p, size_t n) {
  const unsigned char *b = p;
  size_t k = 0, lim = n < 256 ? n : 256;
  while (k < lim && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r')) k++;
  if (k == lim || !(isalpha(b[k]) || b[k] == '#')) return false;
  for (; k < lim; k++)
    if ((b[k] < 0x20 && b[k] != '\t' && b[k] != '\n' && b[k] != '\r') || b[k] == 0x7f) return false;
  return true;
}

int rt_pb_text_to_binary(const ProtobufCMessageDescriptor *d, const char *text, size_t n, const char *what,
                         unsigned char **out, size_t *out_n, rt_status *st) {
  ProtobufCMessage *m;
  if (rt_pb_text_parse(d, text, n, what, &m, st)) return st->code;
  *out_n = protobuf_c_message_get_packed_size(m);
  *out = xmalloc(*out_n ? *out_n : 1);
  protobuf_c_message_pack(m, *out);
  protobuf_c_message_free_unpacked(m, NULL);
  return RT_OK;
}
