/* String ops of TF1's input pipelines and text models, with TF's semantics and messages:
 *   StringJoin(inputs...)            element-wise concatenation (scalars broadcast)
 *   StringToNumber(s)                strtof/strtod/strtol of each string, whole or an error
 *   AsString(x)                      numbers and bools formatted as TF's printf spec
 *   StringLength(s)                  bytes or UTF-8 characters
 *   Substr(s, pos, len)              bytes or UTF-8 characters; a negative pos counts back
 *   StringStrip, StringLower, StringUpper   ASCII whitespace and case
 *   ReduceJoin(s, axes)              joins along axes, in the order given
 *   StringSplit(s, delimiter)        TF1's tf.string_split: any delimiter byte splits
 *   StringSplitV2(s, sep)            tf.strings.split: Python's str.split
 *   SparseToDense(indices, shape, values, default)
 * CPU only; none is differentiable. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

static const char *sdata(const rt_str *s) { return s->ptr ? s->ptr : ""; }

/* A growing byte buffer for building one output string. */
typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->p = xrealloc(b->p, b->cap);
  }
  if (n) memcpy(b->p + b->n, s, n);
  b->n += n;
}

/* ---- StringJoin ------------------------------------------------------------------------ */

static int string_join_shape(rt_shape_ctx *c) {
  rt_shape out = rt_shape_scalar();
  for (int i = 0; i < c->n_inputs; i++) {
    const rt_shape *s = &c->in_shapes[i];
    if (s->ndims == 0) continue;
    if (s->ndims < 0 || out.ndims == 0) {
      if (out.ndims == 0) out = *s;
      continue;
    }
    if (out.ndims < 0) {
      out = *s;
      continue;
    }
    if (s->ndims != out.ndims)
      return op_shape_error(c, 0, "Shapes must be equal rank, but are %d and %d", out.ndims, s->ndims);
    for (int d = 0; d < s->ndims; d++) {
      if (out.dims[d] >= 0 && s->dims[d] >= 0 && out.dims[d] != s->dims[d]) {
        char a[256], b[256];
        return op_shape_error(c, 0, "Dimension %d in both shapes must be equal, but are %lld and %lld. Shapes are %s and %s.",
                              d, (long long)out.dims[d], (long long)s->dims[d], op_shape_tf(&out, a, sizeof a),
                              op_shape_tf(s, b, sizeof b));
      }
      if (out.dims[d] < 0) out.dims[d] = s->dims[d];
    }
  }
  c->out_shapes[0] = out;
  return RT_OK;
}

static int string_join_kernel(rt_kernel_ctx *c) {
  const char *sep = rt_node_string(c->node, "separator", "");
  size_t sl = strlen(sep);
  rt_shape shape = rt_shape_scalar();
  for (int i = 0; i < c->n_inputs; i++) {
    const rt_shape *s = &c->inputs[i]->shape;
    if (s->ndims == 0) continue;
    if (shape.ndims && !rt_shape_equal(&shape, s)) {
      char a[256], b[256];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input shapes do not match: %s vs. %s", op_shape_tf(&shape, a, sizeof a),
                             op_shape_tf(s, b, sizeof b));
    }
    shape = *s;
  }
  rt_tensor *o = rt_kernel_output(c, 0, RT_STRING, &shape);
  if (!o) return c->st->code;
  sbuf b = {0};
  int rc = RT_OK;
  for (int64_t j = 0, n = rt_shape_numel(&shape); j < n && !rc; j++) {
    b.n = 0;
    for (int i = 0; i < c->n_inputs; i++) {
      const rt_str *s = (const rt_str *)rt_tensor_data(c->inputs[i]) + (c->inputs[i]->shape.ndims ? j : 0);
      if (i) sb_add(&b, sep, sl);
      sb_add(&b, sdata(s), s->len);
    }
    if (rt_tensor_set_str(o, j, b.p ? b.p : "", b.n) < 0) rc = rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  free(b.p);
  return rc;
}

/* ---- StringToNumber -------------------------------------------------------------------- */

/* s without its leading and trailing ASCII whitespace, NUL-terminated in buf (NULL when
 * the string holds a NUL or does not fit). */
static const char *trimmed(const rt_str *s, char *buf, size_t cap) {
  const char *p = sdata(s);
  size_t n = s->len;
  if (memchr(p, 0, n)) return NULL;
  while (n && isspace((unsigned char)*p)) p++, n--;
  while (n && isspace((unsigned char)p[n - 1])) n--;
  if (n >= cap) return NULL;
  memcpy(buf, p, n);
  buf[n] = 0;
  return buf;
}

static int string_to_number_kernel(rt_kernel_ctx *c) {
  const rt_tensor *in = c->inputs[0];
  rt_dtype t = rt_node_type(c->node, "out_type", RT_FLOAT);
  rt_tensor *o = rt_kernel_output(c, 0, t, &in->shape);
  if (!o) return c->st->code;
  const rt_str *s = rt_tensor_data(in);
  for (int64_t i = 0, n = rt_tensor_numel(in); i < n; i++) {
    char buf[512], *end = NULL;
    const char *v = trimmed(&s[i], buf, sizeof buf);
    bool ok = v && *v;
    if (ok) {
      errno = 0;
      if (t == RT_FLOAT) ((float *)rt_tensor_data(o))[i] = strtof(v, &end);    /* overflow: inf, as TF */
      else if (t == RT_DOUBLE) ((double *)rt_tensor_data(o))[i] = strtod(v, &end);
      else {
        long long x = strtoll(v, &end, 10);
        ok = errno != ERANGE && (t == RT_INT64 || (x >= INT32_MIN && x <= INT32_MAX));
        if (t == RT_INT64) ((int64_t *)rt_tensor_data(o))[i] = x;
        else ((int32_t *)rt_tensor_data(o))[i] = (int32_t)x;
      }
      ok = ok && end && !*end;
    }
    if (!ok)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "StringToNumberOp could not correctly convert string: %.*s",
                             (int)s[i].len, sdata(&s[i]));
  }
  return RT_OK;
}

/* ---- AsString -------------------------------------------------------------------------- */

static int as_string_kernel(rt_kernel_ctx *c) {
  const rt_tensor *in = c->inputs[0];
  rt_dtype t = in->dtype;
  int64_t precision = rt_node_int(c->node, "precision", -1), width = rt_node_int(c->node, "width", -1);
  bool sci = rt_node_bool(c->node, "scientific", false), shortest = rt_node_bool(c->node, "shortest", false);
  const char *fill = rt_node_string(c->node, "fill", "");
  bool is_float = t == RT_FLOAT || t == RT_DOUBLE;
  if (sci && shortest) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Cannot select both scientific and shortest notation");
  if (strlen(fill) > 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Fill string must be one or fewer characters");
  if (!is_float && (sci || shortest || precision > -1))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s not supported for datatype %s",
                           sci ? "scientific" : shortest ? "shortest" : "precision", op_tf_type(t));
  char fmt[64];
  int k = snprintf(fmt, sizeof fmt, "%%");
  if (*fill) {
    if (!strchr(" +-0#", *fill)) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Fill argument not supported: \"%s\"", fill);
    k += snprintf(fmt + k, sizeof fmt - (size_t)k, "%c", *fill);
  }
  if (width > -1) k += snprintf(fmt + k, sizeof fmt - (size_t)k, "%lld", (long long)width);
  if (precision > -1) k += snprintf(fmt + k, sizeof fmt - (size_t)k, ".%lld", (long long)precision);
  snprintf(fmt + k, sizeof fmt - (size_t)k, "%s", is_float ? (sci ? "e" : shortest ? "g" : "f") : "lld");
  rt_tensor *o = rt_kernel_output(c, 0, RT_STRING, &in->shape);
  if (!o) return c->st->code;
  const void *d = rt_tensor_data(in);
  for (int64_t i = 0, n = rt_tensor_numel(in); i < n; i++) {
    char buf[512];
    int len;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    switch (t) {
    case RT_FLOAT: len = snprintf(buf, sizeof buf, fmt, (double)((const float *)d)[i]); break;
    case RT_DOUBLE: len = snprintf(buf, sizeof buf, fmt, ((const double *)d)[i]); break;
    case RT_INT32: len = snprintf(buf, sizeof buf, fmt, (long long)((const int32_t *)d)[i]); break;
    case RT_INT64: len = snprintf(buf, sizeof buf, fmt, (long long)((const int64_t *)d)[i]); break;
    case RT_UINT8: len = snprintf(buf, sizeof buf, fmt, (long long)((const uint8_t *)d)[i]); break;
    case RT_BOOL: len = snprintf(buf, sizeof buf, "%s", ((const bool *)d)[i] ? "true" : "false"); break;
    default: return rt_kernel_error(c, RT_INVALID_ARGUMENT, "AsString: unsupported type %s", op_tf_type(t));
    }
#pragma GCC diagnostic pop
    if (len < 0 || (size_t)len >= sizeof buf) len = (int)strlen(buf);
    if (rt_tensor_set_str(o, i, buf, (size_t)len) < 0) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  return RT_OK;
}

/* ---- StringLength, Substr ------------------------------------------------------------- */

static bool utf8_unit(rt_kernel_ctx *c, const char *op, int *bad) {
  const char *u = rt_node_string(c->node, "unit", "BYTE");
  *bad = RT_OK;
  if (!strcmp(u, "BYTE")) return false;
  if (!strcmp(u, "UTF8_CHAR")) return true;
  *bad = rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: unit must be BYTE or UTF8_CHAR, not %s", op, u);
  return false;
}

static int64_t utf8_chars(const char *p, size_t n) {
  int64_t k = 0;
  for (size_t i = 0; i < n; i++) k += ((unsigned char)p[i] & 0xC0) != 0x80;
  return k;
}

/* The byte offset of character ch (0..chars) in p[0..n). */
static size_t utf8_offset(const char *p, size_t n, int64_t ch) {
  size_t i = 0;
  for (int64_t k = 0; i < n; i++)
    if (((unsigned char)p[i] & 0xC0) != 0x80 && k++ == ch) return i;
  return n;
}

static int string_length_kernel(rt_kernel_ctx *c) {
  int bad;
  bool chars = utf8_unit(c, "StringLength", &bad);
  if (bad) return bad;
  const rt_tensor *in = c->inputs[0];
  rt_tensor *o = rt_kernel_output(c, 0, RT_INT32, &in->shape);
  if (!o) return c->st->code;
  const rt_str *s = rt_tensor_data(in);
  int32_t *d = rt_tensor_data(o);
  for (int64_t i = 0, n = rt_tensor_numel(in); i < n; i++)
    d[i] = (int32_t)(chars ? utf8_chars(sdata(&s[i]), s[i].len) : (int64_t)s[i].len);
  return RT_OK;
}

static int64_t int_at(const rt_tensor *t, int64_t i) {
  int64_t k = t->shape.ndims ? i : 0;
  return t->dtype == RT_INT64 ? ((const int64_t *)rt_tensor_data(t))[k] : ((const int32_t *)rt_tensor_data(t))[k];
}

static int substr_kernel(rt_kernel_ctx *c) {
  int bad;
  bool chars = utf8_unit(c, "Substr", &bad);
  if (bad) return bad;
  const rt_tensor *in = c->inputs[0], *pos = c->inputs[1], *len = c->inputs[2];
  char a[256], b[256];
  if (!rt_shape_equal(&pos->shape, &len->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "pos and len should have the same shape, got: %s vs. %s",
                           op_shape_tf(&pos->shape, a, sizeof a), op_shape_tf(&len->shape, b, sizeof b));
  if (pos->shape.ndims && !rt_shape_equal(&pos->shape, &in->shape))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Substr: pos of shape %s with input of shape %s (tfsh takes a scalar pos "
                           "and len, or the input's shape)", op_shape_tf(&pos->shape, a, sizeof a),
                           op_shape_tf(&in->shape, b, sizeof b));
  rt_tensor *o = rt_kernel_output(c, 0, RT_STRING, &in->shape);
  if (!o) return c->st->code;
  const rt_str *s = rt_tensor_data(in);
  for (int64_t i = 0, n = rt_tensor_numel(in); i < n; i++) {
    const char *p = sdata(&s[i]);
    int64_t size = chars ? utf8_chars(p, s[i].len) : (int64_t)s[i].len;
    int64_t at = int_at(pos, i), l = int_at(len, i);
    if (llabs(at) > size)   /* TF's bounds: -size <= pos <= size */
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "pos %lld out of range for string b'%.*s' at index %lld", (long long)at,
                             (int)s[i].len, p, (long long)i);
    if (at < 0) at += size;
    int64_t end = l < 0 || l > size - at ? size : at + l;
    size_t from = chars ? utf8_offset(p, s[i].len, at) : (size_t)at;
    size_t to = chars ? utf8_offset(p, s[i].len, end) : (size_t)end;
    if (rt_tensor_set_str(o, i, p + from, to - from) < 0) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  return RT_OK;
}

/* ---- StringStrip, StringLower, StringUpper --------------------------------------------- */

enum { MAP_STRIP, MAP_LOWER, MAP_UPPER };

static int string_map(rt_kernel_ctx *c, int how) {
  const rt_tensor *in = c->inputs[0];
  rt_tensor *o = rt_kernel_output(c, 0, RT_STRING, &in->shape);
  if (!o) return c->st->code;
  const rt_str *s = rt_tensor_data(in);
  sbuf b = {0};
  for (int64_t i = 0, n = rt_tensor_numel(in); i < n; i++) {
    const char *p = sdata(&s[i]);
    size_t l = s[i].len;
    if (how == MAP_STRIP) {
      while (l && isspace((unsigned char)*p)) p++, l--;
      while (l && isspace((unsigned char)p[l - 1])) l--;
    } else {
      b.n = 0;
      sb_add(&b, p, l);
      for (size_t k = 0; k < l; k++) {
        unsigned char ch = (unsigned char)b.p[k];
        if (ch < 128) b.p[k] = (char)(how == MAP_LOWER ? tolower(ch) : toupper(ch));
      }
      p = b.p ? b.p : "";
    }
    if (rt_tensor_set_str(o, i, p, l) < 0) {
      free(b.p);
      return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  free(b.p);
  return RT_OK;
}

static int string_strip_kernel(rt_kernel_ctx *c) { return string_map(c, MAP_STRIP); }
static int string_lower_kernel(rt_kernel_ctx *c) { return string_map(c, MAP_LOWER); }
static int string_upper_kernel(rt_kernel_ctx *c) { return string_map(c, MAP_UPPER); }

/* ---- ReduceJoin ------------------------------------------------------------------------ */

/* The axes to reduce, in order, from input 1 (all, last first, when it is empty);
 * -1 after setting the error. */
static int reduce_axes(rt_kernel_ctx *c, int nd, int *axes) {
  const rt_tensor *r = c->inputs[1];
  int64_t n = rt_tensor_numel(r);
  bool seen[RT_MAX_DIMS] = {0};
  if (n == 0) {
    for (int i = 0; i < nd; i++) axes[i] = nd - 1 - i;
    return nd;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t a = int_at(r, i);
    if (a < -nd || a >= nd)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Invalid reduction dimension %lld for input with %d dimension(s)",
                             (long long)a, nd), -1;
    if (a < 0) a += nd;
    if (seen[a]) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Duplicate reduction dimension %lld", (long long)a), -1;
    seen[a] = true;
    axes[i] = (int)a;
  }
  return (int)n;
}

static int reduce_join_kernel(rt_kernel_ctx *c) {
  const rt_tensor *in = c->inputs[0];
  int nd = in->shape.ndims, axes[RT_MAX_DIMS];
  if (rt_tensor_numel(c->inputs[1]) > nd)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Invalid reduction dimensions: %lld for input with %d dimension(s)",
                           (long long)rt_tensor_numel(c->inputs[1]), nd);
  int na = reduce_axes(c, nd, axes);
  if (na < 0) return c->st->code;
  bool keep = rt_node_bool(c->node, "keep_dims", false), red[RT_MAX_DIMS] = {0};
  const char *sep = rt_node_string(c->node, "separator", "");
  for (int i = 0; i < na; i++) red[axes[i]] = true;
  int64_t stride[RT_MAX_DIMS];
  for (int d = nd - 1, s = 1; d >= 0; d--) stride[d] = s, s *= (int)in->shape.dims[d];
  rt_shape os = {.ndims = 0};
  int kept[RT_MAX_DIMS], nk = 0;
  for (int d = 0; d < nd; d++) {
    if (!red[d]) kept[nk++] = d, os.dims[os.ndims++] = in->shape.dims[d];
    else if (keep) os.dims[os.ndims++] = 1;
  }
  rt_tensor *o = rt_kernel_output(c, 0, RT_STRING, &os);
  if (!o) return c->st->code;
  const rt_str *s = rt_tensor_data(in);
  int64_t nred = 1;
  for (int i = 0; i < na; i++) nred *= in->shape.dims[axes[i]];
  sbuf b = {0};
  size_t sl = strlen(sep);
  for (int64_t j = 0, n = rt_shape_numel(&os); j < n; j++) {
    int64_t base = 0, rest = j;    /* the kept coordinates of output j, row-major */
    for (int k = nk - 1; k >= 0; k--) {
      int64_t dim = in->shape.dims[kept[k]];
      base += (rest % dim) * stride[kept[k]];
      rest /= dim;
    }
    b.n = 0;
    for (int64_t r = 0; r < nred; r++) {   /* the first listed axis varies fastest */
      int64_t off = base, q = r;
      for (int i = 0; i < na; i++) {
        int64_t dim = in->shape.dims[axes[i]];
        off += (q % dim) * stride[axes[i]];
        q /= dim;
      }
      if (r) sb_add(&b, sep, sl);
      sb_add(&b, sdata(&s[off]), s[off].len);
    }
    if (rt_tensor_set_str(o, j, b.p ? b.p : "", b.n) < 0) {
      free(b.p);
      return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  free(b.p);
  return RT_OK;
}

static int reduce_join_shape(rt_shape_ctx *c) {
  const rt_shape *in = &c->in_shapes[0];
  int64_t ax[RT_MAX_DIMS];
  int n;
  if (in->ndims < 0 || !op_const_ints(c, 1, ax, RT_MAX_DIMS, &n)) return RT_OK;
  bool keep = rt_node_bool(c->node, "keep_dims", false), red[RT_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + in->ndims : ax[i];
    if (a < 0 || a >= in->ndims) return RT_OK;   /* the kernel says why */
    red[a] = true;
  }
  if (!n)
    for (int d = 0; d < in->ndims; d++) red[d] = true;
  rt_shape os = {.ndims = 0};
  for (int d = 0; d < in->ndims; d++)
    if (!red[d]) os.dims[os.ndims++] = in->dims[d];
    else if (keep) os.dims[os.ndims++] = 1;
  c->out_shapes[0] = os;
  return RT_OK;
}

/* ---- StringSplit, StringSplitV2 -------------------------------------------------------- */

typedef struct tokens {
  int64_t *ix;           /* pairs (row, column) */
  rt_str *v;             /* views into the input */
  int64_t n, cap, maxcol;
} tokens;

static void tok_add(tokens *t, int64_t row, int64_t col, const char *p, size_t len) {
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 16;
    t->ix = xrealloc(t->ix, (size_t)t->cap * 2 * sizeof *t->ix);
    t->v = xrealloc(t->v, (size_t)t->cap * sizeof *t->v);
  }
  t->ix[2 * t->n] = row, t->ix[2 * t->n + 1] = col;
  t->v[t->n++] = (rt_str){.len = len, .ptr = (char *)p};
  if (col + 1 > t->maxcol) t->maxcol = col + 1;
}

static int split_outputs(rt_kernel_ctx *c, tokens *t, int64_t rows) {
  rt_shape is = {.ndims = 2, .dims = {t->n, 2}}, vs = {.ndims = 1, .dims = {t->n}}, ss = {.ndims = 1, .dims = {2}};
  rt_tensor *io = rt_kernel_output(c, 0, RT_INT64, &is);
  rt_tensor *vo = io ? rt_kernel_output(c, 1, RT_STRING, &vs) : NULL;
  rt_tensor *so = vo ? rt_kernel_output(c, 2, RT_INT64, &ss) : NULL;
  int rc = so ? RT_OK : c->st->code;
  if (!rc) {
    if (t->n) memcpy(rt_tensor_data(io), t->ix, (size_t)t->n * 2 * sizeof *t->ix);
    for (int64_t i = 0; i < t->n && !rc; i++)
      if (rt_tensor_set_str(vo, i, t->v[i].ptr, t->v[i].len) < 0) rc = rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    int64_t *sd = rt_tensor_data(so);
    sd[0] = rows, sd[1] = t->maxcol;
  }
  free(t->ix);
  free(t->v);
  return rc;
}

static int split_input(rt_kernel_ctx *c, const char *op) {
  const rt_tensor *in = c->inputs[0], *d = c->inputs[1];
  char a[256];
  if (in->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: input must be a vector, got shape: %s", op,
                           op_shape_tf(&in->shape, a, sizeof a));
  if (d->shape.ndims != 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: delimiter must be a scalar, got shape: %s", op,
                           op_shape_tf(&d->shape, a, sizeof a));
  return RT_OK;
}

static int string_split_kernel(rt_kernel_ctx *c) {
  int rc = split_input(c, "StringSplit");
  if (rc) return rc;
  const rt_tensor *in = c->inputs[0];
  const rt_str *dl = rt_tensor_data(c->inputs[1]);
  bool skip = rt_node_bool(c->node, "skip_empty", true);
  tokens t = {0};
  const rt_str *s = rt_tensor_data(in);
  int64_t rows = in->shape.dims[0];
  for (int64_t r = 0; r < rows; r++) {
    const char *p = sdata(&s[r]);
    size_t n = s[r].len;
    int64_t col = 0;
    if (!dl->len) {   /* no delimiter: each byte is a token */
      for (size_t i = 0; i < n; i++) tok_add(&t, r, col++, p + i, 1);
      continue;
    }
    size_t from = 0;
    for (size_t i = 0; n && i <= n; i++) {   /* an empty string has no tokens */
      if (i < n && !memchr(sdata(dl), p[i], dl->len)) continue;
      if (i > from || !skip) tok_add(&t, r, col++, p + from, i - from);
      from = i + 1;
    }
  }
  return split_outputs(c, &t, rows);
}

static int string_split_v2_kernel(rt_kernel_ctx *c) {
  int rc = split_input(c, "StringSplitV2");
  if (rc) return rc;
  const rt_tensor *in = c->inputs[0];
  const rt_str *sep = rt_tensor_data(c->inputs[1]);
  int64_t maxsplit = rt_node_int(c->node, "maxsplit", -1);
  tokens t = {0};
  const rt_str *s = rt_tensor_data(in);
  int64_t rows = in->shape.dims[0];
  for (int64_t r = 0; r < rows; r++) {
    const char *p = sdata(&s[r]);
    size_t n = s[r].len, i = 0;
    int64_t col = 0;
    if (!sep->len) {   /* runs of whitespace, none empty (Python's str.split()) */
      while (i < n) {
        while (i < n && isspace((unsigned char)p[i])) i++;
        if (i == n) break;
        size_t from = i;
        if (maxsplit >= 0 && col == maxsplit) {
          size_t e = n;
          while (e > from && isspace((unsigned char)p[e - 1])) e--;
          tok_add(&t, r, col++, p + from, e - from);
          break;
        }
        while (i < n && !isspace((unsigned char)p[i])) i++;
        tok_add(&t, r, col++, p + from, i - from);
      }
      continue;
    }
    const char *sp = sdata(sep);
    size_t from = 0;
    for (;;) {
      const char *hit = NULL;
      if (maxsplit < 0 || col < maxsplit)
        for (size_t k = from; k + sep->len <= n && !hit; k++)
          if (!memcmp(p + k, sp, sep->len)) hit = p + k;
      if (!hit) {
        tok_add(&t, r, col++, p + from, n - from);
        break;
      }
      tok_add(&t, r, col++, p + from, (size_t)(hit - p) - from);
      from = (size_t)(hit - p) + sep->len;
    }
  }
  return split_outputs(c, &t, rows);
}

static int split_shape(rt_shape_ctx *c) {
  if (c->in_shapes[0].ndims >= 0 && c->in_shapes[0].ndims != 1) return op_rank_error(c, 1, c->in_shapes[0].ndims);
  if (c->in_shapes[1].ndims > 0) return op_rank_error(c, 0, c->in_shapes[1].ndims);
  c->out_shapes[0] = (rt_shape){.ndims = 2, .dims = {-1, 2}};
  c->out_shapes[1] = (rt_shape){.ndims = 1, .dims = {-1}};
  c->out_shapes[2] = (rt_shape){.ndims = 1, .dims = {2}};
  return RT_OK;
}

/* ---- SparseToDense --------------------------------------------------------------------- */

static void index_str(const rt_tensor *ix, int64_t i, int nd, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < nd && k < cap; d++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? "," : "", (long long)int_at(ix, i * nd + d));
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

static int sparse_to_dense_kernel(rt_kernel_ctx *c) {
  const rt_tensor *ix = c->inputs[0], *shp = c->inputs[1], *vals = c->inputs[2], *dflt = c->inputs[3];
  char a[256], b[256];
  if (ix->shape.ndims > 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "sparse_indices should be a scalar, vector, or matrix, got shape %s",
                           op_shape_tf(&ix->shape, a, sizeof a));
  if (shp->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "output_shape should be a vector, got shape %s",
                           op_shape_tf(&shp->shape, a, sizeof a));
  int64_t n = ix->shape.ndims ? ix->shape.dims[0] : 1;
  int nd = ix->shape.ndims == 2 ? (int)ix->shape.dims[1] : 1;
  int64_t nv = rt_tensor_numel(vals);
  if (vals->shape.ndims > 1 || (vals->shape.ndims == 1 && nv != n))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "sparse_values has incorrect shape %s, should be [] or [%lld]",
                           op_shape_tf(&vals->shape, a, sizeof a), (long long)n);
  if (dflt->shape.ndims != 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "default_value should be a scalar, got shape %s",
                           op_shape_tf(&dflt->shape, a, sizeof a));
  rt_shape os = {.ndims = (int)rt_tensor_numel(shp)};
  if (os.ndims > RT_MAX_DIMS)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "SparseToDense: output of rank %d (tfsh has at most %d dims)", os.ndims, RT_MAX_DIMS);
  if (os.ndims != nd)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "sparse_indices has %d columns but output_shape has %d dimensions", nd, os.ndims);
  for (int d = 0; d < os.ndims; d++) {
    os.dims[d] = int_at(shp, d);
    if (os.dims[d] < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "output_shape has a negative dimension %lld", (long long)os.dims[d]);
  }
  bool validate = rt_node_bool(c->node, "validate_indices", true);
  int64_t prev = -1;
  for (int64_t i = 0; i < n; i++) {   /* bounds always (never write outside); order if asked */
    int64_t off = 0;
    bool in = true;
    for (int d = 0; d < nd; d++) {
      int64_t v = int_at(ix, i * nd + d);
      in = in && v >= 0 && v < os.dims[d];
      off = off * os.dims[d] + v;
    }
    if (!in) {
      index_str(ix, i, nd, a, sizeof a);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices[%lld] = %s is out of bounds: need 0 <= index < %s", (long long)i, a,
                             op_shape_tf(&os, b, sizeof b));
    }
    if (validate && off <= prev) {
      index_str(ix, i, nd, a, sizeof a);
      if (off == prev) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices[%lld] = %s is repeated", (long long)i, a);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "indices[%lld] = %s is out of order. Many sparse ops require sorted indices.\n"
                             "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n", (long long)i, a);
    }
    prev = off;
  }
  rt_dtype t = vals->dtype;
  rt_tensor *o = rt_kernel_output(c, 0, t, &os);
  if (!o) return c->st->code;
  int64_t total = rt_tensor_numel(o);
  size_t w = rt_dtype_size(t);
  bool str = rt_dtype_is_str(t);
  const rt_str *ds = str ? rt_tensor_data(dflt) : NULL;
  for (int64_t j = 0; j < total; j++) {
    if (!str) memcpy((char *)rt_tensor_data(o) + j * (int64_t)w, rt_tensor_data(dflt), w);
    else if (rt_tensor_set_str(o, j, sdata(ds), ds->len) < 0) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off = off * os.dims[d] + int_at(ix, i * nd + d);
    int64_t k = vals->shape.ndims ? i : 0;
    if (!str) memcpy((char *)rt_tensor_data(o) + off * (int64_t)w, (const char *)rt_tensor_data(vals) + k * (int64_t)w, w);
    else {
      const rt_str *v = (const rt_str *)rt_tensor_data(vals) + k;
      if (rt_tensor_set_str(o, off, sdata(v), v->len) < 0) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  return RT_OK;
}

static int sparse_to_dense_shape(rt_shape_ctx *c) {
  c->out_types[0] = c->in_types[2];
  int64_t dims[RT_MAX_DIMS];
  int n;
  if (op_const_ints(c, 1, dims, RT_MAX_DIMS, &n)) c->out_shapes[0] = rt_shape_make(n, dims);
  else if (c->in_shapes[1].ndims == 1 && c->in_shapes[1].dims[0] >= 0 && c->in_shapes[1].dims[0] <= RT_MAX_DIMS) {
    rt_shape s = {.ndims = (int)c->in_shapes[1].dims[0]};
    for (int d = 0; d < s.ndims; d++) s.dims[d] = -1;
    c->out_shapes[0] = s;
  }
  return RT_OK;
}

static int same_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

#define UNIT "unit: string = 'BYTE'"

static const rt_op_def string_ops[] = {
  {.name = "StringJoin", .inputs = "inputs: N * string", .outputs = "output: string",
   .attrs = "N: int >= 1, separator: string = ''",
   .help = "Element-wise concatenation of strings (scalars broadcast), separator between.",
   .shape = string_join_shape, .kernel = {[RT_DEV_CPU] = string_join_kernel}, .grad = op_no_grad},
  {.name = "StringToNumber", .inputs = "string_tensor: string", .outputs = "output: out_type",
   .attrs = "out_type: {float, double, int32, int64} = float",
   .help = "Each string parsed as a number (surrounding whitespace allowed), or an error.",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = string_to_number_kernel}, .grad = op_no_grad},
  {.name = "AsString", .inputs = "input: T", .outputs = "output: string",
   .attrs = "T: {float, double, int32, int64, uint8, bool}, precision: int = -1, scientific: bool = false, "
            "shortest: bool = false, width: int = -1, fill: string = ''",
   .help = "Each element formatted as a string (printf %f/%e/%g for floats, %d for ints).",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = as_string_kernel}, .grad = op_no_grad},
  {.name = "StringLength", .inputs = "input: string", .outputs = "output: int32", .attrs = UNIT,
   .help = "The length of each string in bytes or UTF-8 characters.",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = string_length_kernel}, .grad = op_no_grad},
  {.name = "Substr", .inputs = "input: string, pos: T, len: T", .outputs = "output: string",
   .attrs = "T: {int32, int64}, " UNIT,
   .help = "Substrings [pos, pos+len) of each string (a negative pos counts from the end).",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = substr_kernel}, .grad = op_no_grad},
  {.name = "StringStrip", .inputs = "input: string", .outputs = "output: string",
   .help = "Each string without leading and trailing whitespace.",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = string_strip_kernel}, .grad = op_no_grad},
  {.name = "StringLower", .inputs = "input: string", .outputs = "output: string", .attrs = "encoding: string = ''",
   .help = "Each string with ASCII letters in lower case.",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = string_lower_kernel}, .grad = op_no_grad},
  {.name = "StringUpper", .inputs = "input: string", .outputs = "output: string", .attrs = "encoding: string = ''",
   .help = "Each string with ASCII letters in upper case.",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = string_upper_kernel}, .grad = op_no_grad},
  {.name = "ReduceJoin", .inputs = "inputs: string, reduction_indices: int32", .outputs = "output: string",
   .attrs = "keep_dims: bool = false, separator: string = ''",
   .help = "Strings joined along the given axes, in the order given (all axes when empty).",
   .shape = reduce_join_shape, .kernel = {[RT_DEV_CPU] = reduce_join_kernel}, .grad = op_no_grad},
  {.name = "StringSplit", .inputs = "input: string, delimiter: string",
   .outputs = "indices: int64, values: string, shape: int64", .attrs = "skip_empty: bool = true",
   .help = "TF1's string_split: tokens between any of the delimiter's bytes, as a sparse tensor.",
   .shape = split_shape, .kernel = {[RT_DEV_CPU] = string_split_kernel}, .grad = op_no_grad},
  {.name = "StringSplitV2", .inputs = "input: string, sep: string",
   .outputs = "indices: int64, values: string, shape: int64", .attrs = "maxsplit: int = -1",
   .help = "Python's str.split of each string (whitespace runs when sep is empty), as a sparse tensor.",
   .shape = split_shape, .kernel = {[RT_DEV_CPU] = string_split_v2_kernel}, .grad = op_no_grad},
  {.name = "SparseToDense", .inputs = "sparse_indices: Tindices, output_shape: Tindices, sparse_values: T, default_value: T",
   .outputs = "dense: T", .attrs = "validate_indices: bool = true, T: type, Tindices: {int32, int64}",
   .help = "A dense tensor of default_value with sparse_values at sparse_indices.",
   .shape = sparse_to_dense_shape, .kernel = {[RT_DEV_CPU] = sparse_to_dense_kernel}, .grad = op_no_grad},
};

void op_strings_register(void) { rt_op_register(string_ops, OP_COUNT(string_ops)); }
