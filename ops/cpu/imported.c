/* CPU kernels of ops/imported.c: GatherV2, Where, StaticRegexFullMatch and BroadcastGradientArgs. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

int op_cpu_gather_v2(rt_kernel_ctx *c) {
  const rt_tensor *p = c->inputs[0], *ix = c->inputs[1];
  int64_t axis = rt_tensor_get_i64(c->inputs[2], 0);
  int nd = p->shape.ndims;
  if (axis < -nd || axis >= nd)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected axis in the range [%d, %d), but got %lld", -nd, nd, (long long)axis);
  if (axis < 0) axis += nd;
  if (nd - 1 + ix->shape.ndims > RT_MAX_DIMS) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Too many dimensions");
  rt_shape o = {.ndims = 0};
  int64_t outer = 1, inner = 1, rows = p->shape.dims[axis];
  for (int d = 0; d < axis; d++) o.dims[o.ndims++] = p->shape.dims[d], outer *= p->shape.dims[d];
  for (int d = 0; d < ix->shape.ndims; d++) o.dims[o.ndims++] = ix->shape.dims[d];
  for (int d = (int)axis + 1; d < nd; d++) o.dims[o.ndims++] = p->shape.dims[d], inner *= p->shape.dims[d];
  int64_t n = rt_tensor_numel(ix);
  for (int64_t i = 0; i < n; i++) {
    int64_t k = rt_tensor_get_i64(ix, i);
    if (k < 0 || k >= rows)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices[%lld] = %lld is not in [0, %lld)", (long long)i, (long long)k,
                             (long long)rows);
  }
  rt_tensor *y = rt_kernel_output(c, 0, p->dtype, &o);
  if (!y) return c->st->code;
  if (p->dtype == RT_STRING) {   /* element by element: each string owns its bytes */
    const rt_str *ps = rt_tensor_data(p);
    for (int64_t a = 0; a < outer; a++)
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < inner; j++) {
          const rt_str *e = &ps[(a * rows + rt_tensor_get_i64(ix, i)) * inner + j];
          if (rt_tensor_set_str(y, (a * n + i) * inner + j, e->ptr, e->len))
            return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
        }
    return RT_OK;
  }
  size_t es = rt_dtype_size(p->dtype), row = (size_t)inner * es;
  char *yd = rt_tensor_data(y);
  const char *pd = rt_tensor_data(p);
  for (int64_t a = 0; a < outer; a++)
    for (int64_t i = 0; i < n; i++)
      memcpy(yd + ((size_t)(a * n + i)) * row, pd + ((size_t)(a * rows + rt_tensor_get_i64(ix, i))) * row, row);
  return RT_OK;
}

/* TF's BCast: both shapes padded on the left with 1s; an input is summed over each axis
 * where its padded dim is 1 (every axis where all are 1 included). */
int op_cpu_broadcast_gradient_args(rt_kernel_ctx *c) {
  const rt_tensor *a = c->inputs[0], *b = c->inputs[1];
  int64_t na = rt_tensor_numel(a), nb = rt_tensor_numel(b), n = na > nb ? na : nb;
  if (a->shape.ndims != 1 || b->shape.ndims != 1 || n > 64)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "BroadcastGradientArgs takes two shape vectors");
  int64_t r[2][64], cnt[2] = {0, 0};
  for (int64_t k = 0; k < n; k++) {
    int64_t x = k < n - na ? 1 : rt_tensor_get_i64(a, k - (n - na));
    int64_t y = k < n - nb ? 1 : rt_tensor_get_i64(b, k - (n - nb));
    if (x != y && x != 1 && y != 1) {
      char sa[300] = "", sb[300] = "";
      size_t oa = 0, ob = 0;
      for (int64_t i = 0; i < na && oa < sizeof sa - 24; i++)
        oa += (size_t)snprintf(sa + oa, sizeof sa - oa, "%s%lld", i ? "," : "", (long long)rt_tensor_get_i64(a, i));
      for (int64_t i = 0; i < nb && ob < sizeof sb - 24; i++)
        ob += (size_t)snprintf(sb + ob, sizeof sb - ob, "%s%lld", i ? "," : "", (long long)rt_tensor_get_i64(b, i));
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Incompatible shapes: [%s] vs. [%s]", sa, sb);
    }
    if (x == 1) r[0][cnt[0]++] = k;
    if (y == 1) r[1][cnt[1]++] = k;
  }
  rt_dtype t = a->dtype;
  for (int o = 0; o < 2; o++) {
    rt_shape s = rt_shape_make(1, (int64_t[]){cnt[o]});
    rt_tensor *y = rt_kernel_output(c, o, t, &s);
    if (!y) return c->st->code;
    for (int64_t i = 0; i < cnt[o]; i++)
      if (t == RT_INT32) ((int32_t *)rt_tensor_data(y))[i] = (int32_t)r[o][i];
      else ((int64_t *)rt_tensor_data(y))[i] = r[o][i];
  }
  return RT_OK;
}

/* The coordinates of the true (non-zero) elements of x, in row-major order: [k, rank] int64. */
int op_cpu_where(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int64_t n = rt_tensor_numel(x), k = 0;
  int r = x->shape.ndims;
  if (x->dtype != RT_BOOL) return rt_kernel_error(c, RT_UNIMPLEMENTED, "Where: tfsh takes a bool condition only");
  const bool *v = rt_tensor_data(x);
  for (int64_t i = 0; i < n; i++) k += v[i];
  rt_shape o = rt_shape_make(2, (int64_t[]){k, r});
  rt_tensor *y = rt_kernel_output(c, 0, RT_INT64, &o);
  if (!y) return c->st->code;
  int64_t *yd = rt_tensor_data(y);
  for (int64_t i = 0, j = 0; i < n; i++) {
    if (!v[i]) continue;
    for (int64_t d = r - 1, rest = i; d >= 0; d--) {
      yd[j * r + d] = rest % x->shape.dims[d];
      rest /= x->shape.dims[d];
    }
    j++;
  }
  return RT_OK;
}

/* Whether each string matches the pattern attr whole (POSIX extended syntax, which covers
 * the patterns TF's own graphs hold: a sharded Saver's "^s3://.*"). */
int op_cpu_static_regex_full_match(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  const char *pat = rt_node_string(c->node, "pattern", "");
  char *full = xasprintf("^(%s)$", pat);
  regex_t re;
  int bad = regcomp(&re, full, REG_EXTENDED | REG_NOSUB);
  free(full);
  if (bad) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "StaticRegexFullMatch: invalid pattern %s", pat);
  rt_tensor *y = rt_kernel_output(c, 0, RT_BOOL, &x->shape);
  if (!y) return regfree(&re), c->st->code;
  const rt_str *s = rt_tensor_data(x);
  bool *out = rt_tensor_data(y);
  for (int64_t i = 0; i < rt_tensor_numel(x); i++)   /* strings with NULs match up to the first */
    out[i] = regexec(&re, s[i].ptr ? s[i].ptr : "", 0, NULL, 0) == 0;
  regfree(&re);
  return RT_OK;
}
