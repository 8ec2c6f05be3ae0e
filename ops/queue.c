/* TF1's queues: FIFOQueueV2, RandomShuffleQueueV2 and PaddingFIFOQueueV2 keep tuples of
 * tensors in a resource of their device (a ps may hold one that workers feed and drain);
 * the enqueue, dequeue, close and size ops take the queue's handle, so the placer puts them
 * where the queue is. The V2 ops (what tf.FIFOQueue builds) pass a DT_RESOURCE handle, as
 * TF's do; TF's older ops (FIFOQueue, QueueEnqueue, ...) a Ref(string) holding the queue's
 * name, as TF 1.0's queues had. Both run the same kernels.
 *
 * Blocking: an enqueue into a full queue and a dequeue from an empty one wait on the
 * resource's condition variable in 50 ms slices, looking at the step's cancellation each
 * time (session close, Ctrl-C, a failed part elsewhere abort the step), so a waiting op
 * never hangs a worker. Closing a queue wakes every waiter: dequeues that can no longer be
 * satisfied fail with OutOfRange (TF's end of an epoch), enqueues with Cancelled when
 * close(cancel_pending_enqueues=True) asked for it. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/device.h"
#include "runtime/step.h"

#define QMAX 16   /* components per element */

enum { Q_FIFO, Q_RANDOM, Q_PADDING };

typedef struct queue {
  int kind;
  char name[160];                    /* as TF names it in errors: "_0_fifo_queue" */
  int ncomp;
  rt_dtype types[QMAX];
  int nshapes;                       /* 0: any shapes */
  rt_shape shapes[QMAX];
  int64_t capacity;                  /* < 0: unbounded */
  int64_t min_after_dequeue;
  uint64_t rng;                      /* RandomShuffleQueue's draws */
  rt_tensor ***items;                /* each an array of ncomp tensors */
  int64_t n, cap, head;
  bool closed, cancel_enqueues;
} queue;

static atomic_int queue_counter;

static void queue_free(void *p) {
  queue *q = p;
  if (!q) return;
  for (int64_t i = q->head; i < q->n; i++) {
    for (int k = 0; k < q->ncomp; k++) rt_tensor_unref(q->items[i][k]);
    free(q->items[i]);
  }
  free(q->items);
  free(q);
}

static const char *kind_name(int kind) {
  return kind == Q_RANDOM ? "RandomShuffleQueue" : kind == Q_PADDING ? "PaddingFIFOQueue" : "FIFOQueue";
}

static int64_t qsize(const queue *q) { return q->n - q->head; }

static uint64_t next_rand(queue *q) {   /* splitmix64 */
  uint64_t z = (q->rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void push(queue *q, rt_tensor **elem) {
  if (q->n == q->cap) {
    if (q->head) {
      memmove(q->items, q->items + q->head, (size_t)(q->n - q->head) * sizeof *q->items);
      q->n -= q->head;
      q->head = 0;
    }
    if (q->n == q->cap) {
      q->cap = q->cap ? 2 * q->cap : 16;
      q->items = xrealloc(q->items, (size_t)q->cap * sizeof *q->items);
    }
  }
  q->items[q->n++] = elem;
}

/* Take one element: the oldest, or (RandomShuffleQueue) one drawn at random. */
static rt_tensor **pop(queue *q) {
  if (q->kind == Q_RANDOM) {
    int64_t k = q->head + (int64_t)(next_rand(q) % (uint64_t)qsize(q));
    rt_tensor **t = q->items[k];
    q->items[k] = q->items[q->head];
    q->items[q->head] = t;
  }
  return q->items[q->head++];
}

/* The queue handle input i refers to (its resource, mu not held): a reference (TF's v1
 * ops) or a resource handle of this device (V2). */
static rt_resource *queue_of(rt_kernel_ctx *c, int i) {
  rt_resource *r = c->inputs[i]->ref;
  if (!r && c->inputs[i]->dtype == RT_RESOURCE) {
    r = op_resource_of(c, i, false, NULL);
    if (!r && c->st->code) return NULL;
  }
  if (!r || !r->state) rt_kernel_error(c, RT_INVALID_ARGUMENT, "input %d is not a queue handle", i);
  return r && r->state ? r : NULL;
}

static rt_resource *handle_of(rt_kernel_ctx *c) { return queue_of(c, 0); }

/* ---- the queue ops ------------------------------------------------------------------- */

static int queue_create(rt_kernel_ctx *c, int kind) {
  const char *shared = rt_node_string(c->node, "shared_name", "");
  rt_resource *r = rt_device_resource_in(c->device, c->scope, rt_node_string(c->node, "container", ""),
                                      shared[0] ? shared : c->node->name, true);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  int rc = RT_OK;
  pthread_mutex_lock(&r->mu);
  if (!r->state) {
    queue *q = xcalloc(1, sizeof *q);
    q->kind = kind;
    if (shared[0]) snprintf(q->name, sizeof q->name, "%s", shared);
    else snprintf(q->name, sizeof q->name, "_%d_%s", atomic_fetch_add(&queue_counter, 1), c->node->name);
    const rt_attr_value *t = rt_node_attr(c->node, "component_types");
    const rt_attr_value *s = rt_node_attr(c->node, "shapes");
    q->ncomp = t && t->kind == RT_ATTR_LIST_TYPE ? t->list.n : 0;
    if (q->ncomp < 1 || q->ncomp > QMAX) {
      free(q);
      pthread_mutex_unlock(&r->mu);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "a queue needs 1 to %d component types", QMAX);
    }
    memcpy(q->types, t->list.v, (size_t)q->ncomp * sizeof *q->types);
    if (s && s->kind == RT_ATTR_LIST_SHAPE && s->list.n) {
      if (s->list.n != q->ncomp) rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "shapes must have the same length as component_types");
      q->nshapes = s->list.n == q->ncomp ? q->ncomp : 0;
      memcpy(q->shapes, s->list.v, (size_t)q->nshapes * sizeof *q->shapes);
    }
    q->capacity = rt_node_int(c->node, "capacity", -1);
    q->min_after_dequeue = rt_node_int(c->node, "min_after_dequeue", 0);
    uint64_t seed = (uint64_t)rt_node_int(c->node, "seed", 0), seed2 = (uint64_t)rt_node_int(c->node, "seed2", 0);
    q->rng = seed || seed2 ? seed * 0x9e3779b97f4a7c15ULL ^ seed2 : (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)q;
    r->state = q;
    r->state_free = queue_free;
  }
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  rt_shape sc = rt_shape_scalar();
  bool resource = c->node->n_outputs > 0 && c->node->out_types[0] == RT_RESOURCE;
  rt_tensor *h = rt_tensor_new(resource ? RT_RESOURCE : RT_STRING, &sc);
  if (!h) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  if (resource) {   /* V2: a handle naming the queue's resource on this device */
    rt_handle hd = {c->device->name, r->container, r->name, kind_name(kind)};
    if (rt_handle_set(h, 0, &hd)) {
      rt_tensor_unref(h);
      return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    }
  } else {
    rt_tensor_set_str(h, 0, ((queue *)r->state)->name, strlen(((queue *)r->state)->name));
    h->ref = r;
  }
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = h;
  return RT_OK;
}
static int fifo_kernel(rt_kernel_ctx *c) { return queue_create(c, Q_FIFO); }
static int random_kernel(rt_kernel_ctx *c) { return queue_create(c, Q_RANDOM); }
static int padding_kernel(rt_kernel_ctx *c) { return queue_create(c, Q_PADDING); }

/* Whether shape s fits the queue's shape for component k (-1 dims match anything). */
static int check_shape(rt_kernel_ctx *c, queue *q, int k, const rt_shape *s) {
  if (!q->nshapes || q->shapes[k].ndims < 0) return RT_OK;
  const rt_shape *w = &q->shapes[k];
  bool ok = w->ndims == s->ndims;
  for (int d = 0; ok && d < s->ndims; d++) ok = w->dims[d] < 0 || w->dims[d] == s->dims[d];
  if (ok) return RT_OK;
  char a[64], b[64];
  return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Shape mismatch in tuple component %d. Expected %s, got %s", k,
                         op_shape_tf(w, a, sizeof a), op_shape_tf(s, b, sizeof b));
}

/* Row i (along axis 0) of t as a tensor of its own. */
static rt_tensor *row_of(const rt_tensor *t, int64_t i) {
  rt_shape s = {.ndims = t->shape.ndims - 1};
  for (int d = 1; d < t->shape.ndims; d++) s.dims[d - 1] = t->shape.dims[d];
  rt_tensor *o = rt_tensor_new(t->dtype, &s);
  if (!o) return NULL;
  int64_t m = rt_shape_numel(&s);
  if (t->dtype == RT_STRING) {
    const rt_str *e = (const rt_str *)rt_tensor_data((rt_tensor *)t) + i * m;
    for (int64_t j = 0; j < m; j++) rt_tensor_set_str(o, j, e[j].ptr ? e[j].ptr : "", e[j].len);
  } else {
    size_t es = rt_dtype_size(t->dtype);
    memcpy(rt_tensor_data(o), (const char *)rt_tensor_data((rt_tensor *)t) + (size_t)(i * m) * es, (size_t)m * es);
  }
  return o;
}

static int enqueue(rt_kernel_ctx *c, bool many) {
  rt_resource *r = handle_of(c);
  if (!r) return c->st->code;
  queue *q = r->state;
  int nc = c->n_inputs - 1;
  if (nc != q->ncomp)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s '%s' has %d components, the enqueue gives %d",
                           kind_name(q->kind), q->name, q->ncomp, nc);
  int64_t rows = 1;
  for (int k = 0; k < nc; k++) {
    rt_tensor *x = c->inputs[1 + k];
    if (x->dtype != q->types[k])
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Type mismatch in tuple component %d. Expected %s, got %s", k,
                             op_tf_type(q->types[k]), op_tf_type(x->dtype));
    if (many) {
      if (x->shape.ndims < 1)
        return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Shape mismatch in tuple component %d. Expected rank >= 1, got a scalar", k);
      if (k == 0) rows = x->shape.dims[0];
      else if (x->shape.dims[0] != rows)
        return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Shape mismatch in tuple component %d. Expected batch size %lld, got %lld", k,
                               (long long)rows, (long long)x->shape.dims[0]);
      rt_shape s = {.ndims = x->shape.ndims - 1};
      for (int d = 1; d < x->shape.ndims; d++) s.dims[d - 1] = x->shape.dims[d];
      int rc = check_shape(c, q, k, &s);
      if (rc) return rc;
    } else {
      int rc = check_shape(c, q, k, &x->shape);
      if (rc) return rc;
    }
  }
  int rc = RT_OK;
  for (int64_t i = 0; i < rows && !rc; i++) {
    rt_tensor **e = xcalloc(QMAX, sizeof *e);
    for (int k = 0; k < nc; k++)
      e[k] = many ? row_of(c->inputs[1 + k], i) : rt_tensor_copy(c->inputs[1 + k]);
    pthread_mutex_lock(&r->mu);
    for (;;) {
      if (q->closed) {
        rc = rt_kernel_error(c, RT_CANCELLED, "%s '%s' is closed.", kind_name(q->kind), q->name);
        break;
      }
      if (q->capacity < 0 || qsize(q) < q->capacity) break;
      if (!op_wait_a_bit(c, r)) {
        rc = rt_kernel_error(c, RT_CANCELLED, "Enqueue operation was cancelled");
        break;
      }
    }
    if (!rc) {
      push(q, e);
      e = NULL;
      pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    if (e) {
      for (int k = 0; k < nc; k++) rt_tensor_unref(e[k]);
      free(e);
    }
  }
  return rc;
}
static int enqueue_kernel(rt_kernel_ctx *c) { return enqueue(c, false); }
static int enqueue_many_kernel(rt_kernel_ctx *c) { return enqueue(c, true); }

/* Copy src (rank nd, dims sd) into dst (dims dd >= sd elementwise, zero-filled) at the
 * start of each axis: the padding of PaddingFIFOQueue. */
static void copy_padded(char *dst, const int64_t *dd, const char *src, const int64_t *sd, int nd, size_t es,
                        bool strings, rt_tensor *dt, int64_t dbase, const rt_str *ss) {
  if (nd == 0) {
    if (strings) rt_tensor_set_str(dt, dbase, ss->ptr ? ss->ptr : "", ss->len);
    else memcpy(dst, src, es);
    return;
  }
  int64_t dstride = 1, sstride = 1;
  for (int d = 1; d < nd; d++) dstride *= dd[d], sstride *= sd[d];
  for (int64_t i = 0; i < sd[0]; i++)
    copy_padded(dst + (size_t)(i * dstride) * es, dd + 1, src + (size_t)(i * sstride) * es, sd + 1, nd - 1, es, strings,
                dt, dbase + i * dstride, ss ? ss + i * sstride : NULL);
}

static int dequeue(rt_kernel_ctx *c, int mode /* 0 one, 1 many, 2 up to */) {
  rt_resource *r = handle_of(c);
  if (!r) return c->st->code;
  queue *q = r->state;
  int64_t want = 1;
  if (mode) {
    want = rt_tensor_get_i64(c->inputs[1], 0);
    if (want < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "requested %lld elements", (long long)want);
    if (mode == 1 && q->kind != Q_PADDING && q->nshapes == 0 && want > 0) {
      /* TF: DequeueMany needs every component's shape fully defined (not for padding) */
    }
  }
  int rc = RT_OK;
  int64_t got = 0;
  rt_tensor ***elems = xcalloc((size_t)want + 1, sizeof *elems);
  pthread_mutex_lock(&r->mu);
  while (got < want) {
    int64_t keep = q->kind == Q_RANDOM && !q->closed ? q->min_after_dequeue : 0;
    if (qsize(q) > keep) {
      elems[got++] = pop(q);
      pthread_cond_broadcast(&r->cv);
      continue;
    }
    if (q->closed) {
      if (mode == 2 && got > 0) break;
      rc = rt_kernel_error(c, RT_OUT_OF_RANGE, "%s '%s' is closed and has insufficient elements (requested %lld, current size %lld)",
                           kind_name(q->kind), q->name, (long long)want, (long long)(qsize(q) + got));
      break;
    }
    if (!op_wait_a_bit(c, r)) {
      rc = rt_kernel_error(c, RT_CANCELLED, "Dequeue operation was cancelled");
      break;
    }
  }
  if (rc) {   /* put back what was taken, in order */
    for (int64_t i = got - 1; i >= 0; i--) {
      if (q->head > 0) q->items[--q->head] = elems[i];
      else push(q, elems[i]);
    }
    got = 0;
  }
  pthread_mutex_unlock(&r->mu);
  for (int k = 0; !rc && k < q->ncomp; k++) {
    if (!mode) {
      rt_tensor_unref(c->outputs[k]);
      c->outputs[k] = rt_tensor_ref(elems[0][k]);
      continue;
    }
    /* stack along a new axis 0 (padding to the largest, for PaddingFIFOQueue) */
    rt_shape es = got ? elems[0][k]->shape : (q->nshapes ? q->shapes[k] : rt_shape_scalar());
    for (int64_t i = 1; i < got; i++) {
      const rt_shape *s = &elems[i][k]->shape;
      if (s->ndims != es.ndims) { rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "components of different ranks in one batch"); break; }
      for (int d = 0; d < s->ndims; d++) {
        if (s->dims[d] != es.dims[d] && q->kind != Q_PADDING) {
          rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Shape mismatch in tuple component %d: elements of different shapes need a PaddingFIFOQueue", k);
          break;
        }
        if (s->dims[d] > es.dims[d]) es.dims[d] = s->dims[d];
      }
      if (rc) break;
    }
    if (rc) break;
    for (int d = 0; d < es.ndims; d++) if (es.dims[d] < 0) es.dims[d] = 0;
    rt_shape os = {.ndims = es.ndims + 1};
    os.dims[0] = got;
    for (int d = 0; d < es.ndims; d++) os.dims[d + 1] = es.dims[d];
    rt_tensor *o = rt_kernel_output(c, k, q->types[k], &os);
    if (!o) { rc = c->st->code; break; }
    int64_t m = rt_shape_numel(&es);
    size_t esz = rt_dtype_size(q->types[k]);
    bool strings = q->types[k] == RT_STRING;
    if (!strings) memset(rt_tensor_data(o), 0, rt_tensor_nbytes(o));
    for (int64_t i = 0; i < got; i++) {
      rt_tensor *x = elems[i][k];
      if (rt_shape_equal(&x->shape, &es)) {
        if (strings) {
          const rt_str *e = rt_tensor_data(x);
          for (int64_t j = 0; j < m; j++) rt_tensor_set_str(o, i * m + j, e[j].ptr ? e[j].ptr : "", e[j].len);
        } else {
          memcpy((char *)rt_tensor_data(o) + (size_t)(i * m) * esz, rt_tensor_data(x), (size_t)m * esz);
        }
      } else {
        copy_padded((char *)rt_tensor_data(o) + (size_t)(i * m) * esz, es.dims, rt_tensor_data(x), x->shape.dims,
                    es.ndims, esz, strings, o, i * m, strings ? rt_tensor_data(x) : NULL);
      }
    }
  }
  for (int64_t i = 0; i < got; i++) {
    for (int k = 0; k < q->ncomp; k++) rt_tensor_unref(elems[i][k]);
    free(elems[i]);
  }
  free(elems);
  return rc;
}
static int dequeue_kernel(rt_kernel_ctx *c) { return dequeue(c, 0); }
static int dequeue_many_kernel(rt_kernel_ctx *c) { return dequeue(c, 1); }
static int dequeue_up_to_kernel(rt_kernel_ctx *c) { return dequeue(c, 2); }

static int close_kernel(rt_kernel_ctx *c) {
  rt_resource *r = handle_of(c);
  if (!r) return c->st->code;
  pthread_mutex_lock(&r->mu);
  queue *q = r->state;
  q->closed = true;
  if (rt_node_bool(c->node, "cancel_pending_enqueues", false)) q->cancel_enqueues = true;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  return RT_OK;
}

static int size_kernel(rt_kernel_ctx *c) {
  rt_resource *r = handle_of(c);
  if (!r) return c->st->code;
  pthread_mutex_lock(&r->mu);
  int64_t n = qsize(r->state);
  pthread_mutex_unlock(&r->mu);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_INT32, &sc);
  if (!o) return c->st->code;
  *(int32_t *)rt_tensor_data(o) = (int32_t)n;
  return RT_OK;
}

static int is_closed_kernel(rt_kernel_ctx *c) {
  rt_resource *r = handle_of(c);
  if (!r) return c->st->code;
  pthread_mutex_lock(&r->mu);
  bool v = ((queue *)r->state)->closed;
  pthread_mutex_unlock(&r->mu);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_BOOL, &sc);
  if (!o) return c->st->code;
  *(bool *)rt_tensor_data(o) = v;
  return RT_OK;
}

/* ---- shapes ----------------------------------------------------------------------------- */

static int handle_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

/* Outputs typed by component_types; shapes (when the op carries them, as the Python side
 * copies the queue's) with a batch axis for the many forms. */
static int dequeue_shape_impl(rt_shape_ctx *c, bool batch) {
  const rt_attr_value *t = rt_node_attr(c->node, "component_types");
  if (!t || t->kind != RT_ATTR_LIST_TYPE || t->list.n != c->n_outputs)
    return op_shape_error(c, 0, "a dequeue needs one component type per output");
  const rt_attr_value *s = rt_node_attr(c->node, "_shapes");
  int64_t n = -1;
  if (batch && c->in_values[1]) n = rt_tensor_get_i64(c->in_values[1], 0);
  if (batch && !strcmp(c->node->op, "QueueDequeueUpToV2")) n = -1;
  for (int i = 0; i < c->n_outputs; i++) {
    c->out_types[i] = ((rt_dtype *)t->list.v)[i];
    if (s && s->kind == RT_ATTR_LIST_SHAPE && s->list.n == c->n_outputs) {
      rt_shape e = ((rt_shape *)s->list.v)[i];
      if (e.ndims < 0 || !batch) {
        c->out_shapes[i] = batch && e.ndims < 0 ? rt_shape_unknown() : e;
        continue;
      }
      rt_shape o = {.ndims = e.ndims + 1};
      o.dims[0] = n;
      for (int d = 0; d < e.ndims; d++) o.dims[d + 1] = e.dims[d];
      c->out_shapes[i] = o;
    }
  }
  return RT_OK;
}
static int dequeue_shape(rt_shape_ctx *c) { return dequeue_shape_impl(c, false); }
static int dequeue_many_shape(rt_shape_ctx *c) { return dequeue_shape_impl(c, true); }

static int scalar_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

#define QUEUE_ATTRS \
  "component_types: list(type), shapes: list(shape) = [], capacity: int = -1, container: string = '', " \
  "shared_name: string = ''"

/* The queue ops, named NAME SFX, their handle of type H: TF's V2 ops pass a resource
 * handle, its older ones (no suffix) a Ref(string). */
#define QUEUE_OPS(SFX, H) \
  {.name = "FIFOQueue" SFX, .outputs = "handle: " H, .attrs = QUEUE_ATTRS, \
   .help = "A first-in first-out queue of tensor tuples, kept on its device.", .shape = handle_shape, \
   .kernel = {[RT_DEV_CPU] = fifo_kernel}, .flags = RT_OP_STATEFUL | RT_OP_SOURCE}, \
  {.name = "RandomShuffleQueue" SFX, .outputs = "handle: " H, \
   .attrs = QUEUE_ATTRS ", min_after_dequeue: int = 0, seed: int = 0, seed2: int = 0", \
   .help = "A queue that dequeues in random order, keeping min_after_dequeue elements to draw from.", \
   .shape = handle_shape, .kernel = {[RT_DEV_CPU] = random_kernel}, .flags = RT_OP_STATEFUL | RT_OP_SOURCE}, \
  {.name = "PaddingFIFOQueue" SFX, .outputs = "handle: " H, .attrs = QUEUE_ATTRS, \
   .help = "A FIFO queue whose dequeue_many pads components to the batch's largest shape.", \
   .shape = handle_shape, .kernel = {[RT_DEV_CPU] = padding_kernel}, .flags = RT_OP_STATEFUL | RT_OP_SOURCE}, \
  {.name = "QueueEnqueue" SFX, .inputs = "handle: " H ", components: N * Tcomponents", \
   .attrs = "N: int >= 1, Tcomponents: list(type), timeout_ms: int = -1", \
   .help = "Add one element (waits while the queue is full).", .kernel = {[RT_DEV_CPU] = enqueue_kernel}, \
   .flags = RT_OP_STATEFUL}, \
  {.name = "QueueEnqueueMany" SFX, .inputs = "handle: " H ", components: N * Tcomponents", \
   .attrs = "N: int >= 1, Tcomponents: list(type), timeout_ms: int = -1", \
   .help = "Add the rows of the components (axis 0) as elements.", .kernel = {[RT_DEV_CPU] = enqueue_many_kernel}, \
   .flags = RT_OP_STATEFUL}, \
  {.name = "QueueDequeue" SFX, .inputs = "handle: " H, .outputs = "components: N * component_types", \
   .attrs = "N: int >= 1, component_types: list(type), timeout_ms: int = -1, _shapes: list(shape) = []", \
   .help = "Take one element (waits while empty; OutOfRange once closed and empty).", .shape = dequeue_shape, \
   .kernel = {[RT_DEV_CPU] = dequeue_kernel}, .flags = RT_OP_STATEFUL}, \
  {.name = "QueueDequeueMany" SFX, .inputs = "handle: " H ", n: int32", .outputs = "components: N * component_types", \
   .attrs = "N: int >= 1, component_types: list(type), timeout_ms: int = -1, _shapes: list(shape) = []", \
   .help = "Take n elements, stacked along a new axis 0.", .shape = dequeue_many_shape, \
   .kernel = {[RT_DEV_CPU] = dequeue_many_kernel}, .flags = RT_OP_STATEFUL}, \
  {.name = "QueueDequeueUpTo" SFX, .inputs = "handle: " H ", n: int32", .outputs = "components: N * component_types", \
   .attrs = "N: int >= 1, component_types: list(type), timeout_ms: int = -1, _shapes: list(shape) = []", \
   .help = "Take n elements, or fewer once the queue is closed (the last, smaller batch).", \
   .shape = dequeue_many_shape, .kernel = {[RT_DEV_CPU] = dequeue_up_to_kernel}, .flags = RT_OP_STATEFUL}, \
  {.name = "QueueClose" SFX, .inputs = "handle: " H, .attrs = "cancel_pending_enqueues: bool = false", \
   .help = "Close the queue: no more enqueues; dequeues drain it, then fail with OutOfRange.", \
   .kernel = {[RT_DEV_CPU] = close_kernel}, .flags = RT_OP_STATEFUL}, \
  {.name = "QueueSize" SFX, .inputs = "handle: " H, .outputs = "size: int32", \
   .help = "How many elements the queue holds.", .shape = scalar_shape, .kernel = {[RT_DEV_CPU] = size_kernel}, \
   .flags = RT_OP_STATEFUL}, \
  {.name = "QueueIsClosed" SFX, .inputs = "handle: " H, .outputs = "is_closed: bool", \
   .help = "Whether the queue is closed.", .shape = scalar_shape, .kernel = {[RT_DEV_CPU] = is_closed_kernel}, \
   .flags = RT_OP_STATEFUL},

static const rt_op_def queue_ops[] = {QUEUE_OPS("V2", "resource")};
static const rt_op_def queue_v1_ops[] = {QUEUE_OPS("", "Ref(string)")};

void op_queue_register(void) {
  rt_op_register(queue_ops, OP_COUNT(queue_ops));
  rt_op_register(queue_v1_ops, OP_COUNT(queue_v1_ops));
}

/* For the readers (ops/reader.c): take the next element of the queue a handle names,
 * whose component 0 must be a string scalar (a file name), into a malloc'd string. */
int op_queue_take_string(rt_kernel_ctx *c, rt_tensor *handle, char **out) {
  (void)handle;
  rt_resource *r = queue_of(c, 1);
  if (!r) return c->st->code;
  queue *q = r->state;
  int rc = RT_OK;
  rt_tensor **e = NULL;
  pthread_mutex_lock(&r->mu);
  for (;;) {
    if (qsize(q) > (q->kind == Q_RANDOM && !q->closed ? q->min_after_dequeue : 0)) {
      e = pop(q);
      pthread_cond_broadcast(&r->cv);
      break;
    }
    if (q->closed) {
      rc = rt_kernel_error(c, RT_OUT_OF_RANGE, "%s '%s' is closed and has insufficient elements (requested 1, current size 0)",
                           kind_name(q->kind), q->name);
      break;
    }
    if (!op_wait_a_bit(c, r)) {
      rc = rt_kernel_error(c, RT_CANCELLED, "Dequeue operation was cancelled");
      break;
    }
  }
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  if (e[0]->dtype != RT_STRING || rt_tensor_numel(e[0]) != 1) {
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "a reader's queue must hold string scalars (file names)");
  } else {
    const rt_str *s = rt_tensor_data(e[0]);
    *out = xstrndup(s->ptr ? s->ptr : "", s->len);
  }
  for (int k = 0; k < q->ncomp; k++) rt_tensor_unref(e[k]);
  free(e);
  return rc;
}

/* ops_int.h */
bool op_wait_a_bit(rt_kernel_ctx *c, rt_resource *r) {
  if (c->step && atomic_load(&c->step->cancelled)) return false;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += 50 * 1000000L;
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  pthread_cond_timedwait(&r->cv, &r->mu, &ts);
  if (c->step && c->step->poll) {   /* without r->mu: the poll may take other locks */
    pthread_mutex_unlock(&r->mu);
    int out = c->step->poll(c->step);
    pthread_mutex_lock(&r->mu);
    if (out) return false;
  }
  return !(c->step && atomic_load(&c->step->cancelled));
}

