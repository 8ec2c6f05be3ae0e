/* The op registry. Each op is described once, as data (one table, many consumers): its
 * name, a TF-style signature, a shape function, kernels per device type,
 * a gradient builder and one line of help. Graph validation, the executor, `name?` help,
 * Tab completion and the wire codec all read the same row.
 *
 * Signature strings follow TF's REGISTER_OP:
 *   .inputs  = "a: T, b: T"               an input typed by attr T
 *              "x: float"                 a fixed dtype
 *              "values: N * T"            a list of N inputs of type T
 *              "ref: Ref(T)"              a reference input (variables, Assign)
 *   .outputs = "product: T", "output: num_split * T"
 *   .attrs   = "T: {float, double, int32, int64}, transpose_a: bool = false,
 *               N: int >= 1, value: tensor, dtype: type, shape: shape = ?,
 *               axis: list(int) = []"
 * Attr types: int, float, bool, string, type, shape, tensor, list(int), list(float),
 * list(string), list(type), list(shape); "{a, b}" restricts a type attr; "= v" is a default
 * ("?" for an unknown shape). */
#ifndef TFSH_OP_H
#define TFSH_OP_H

#include <pthread.h>
#include <stdbool.h>

#include "runtime/graph.h"
#include "base/status.h"
#include "runtime/tensor.h"

struct rt_device;
struct rt_step;

/* ---- shape functions -------------------------------------------------------------- */

typedef struct rt_shape_ctx {
  const rt_node *node;
  int n_inputs;                        /* data inputs */
  const rt_dtype *in_types;
  const rt_shape *in_shapes;
  const rt_tensor *const *in_values;   /* value of a Const input, else NULL */
  int n_outputs;
  rt_dtype *out_types;                 /* pre-filled from the signature */
  rt_shape *out_shapes;                /* pre-filled unknown; the function refines */
  rt_status *st;
  const struct rt_graph *g;            /* the graph (resource ops find their handle's maker) */
} rt_shape_ctx;

typedef int (*rt_shape_fn)(rt_shape_ctx *ctx);

/* ---- kernels ---------------------------------------------------------------------- */

typedef struct rt_kernel_ctx {
  const rt_node *node;
  int n_inputs;
  rt_tensor **inputs;        /* borrowed */
  int n_outputs;
  rt_tensor **outputs;       /* the kernel stores owned references */
  struct rt_device *device;
  struct rt_step *step;
  rt_status *st;
  rt_tensor **reuse;         /* the executor's: last step's outputs, recycled when unshared */
  void **state;              /* per node and executor: a kernel may allocate state here (random
                                generators' counters); the executor free()s it. NULL in tests
                                that call kernels directly. */
  pthread_mutex_t *state_mu; /* when *state is shared by the executors of a session (two run
                                signatures may run the node at once): held to read or move
                                it on (rt_kernel_state_lock); NULL when it is the executor's */
  const char *scope;         /* ConfigProto.isolate_session_state: the session's own resource
                                scope on this device (rt_device_resource_in); NULL: shared */
  uint64_t forward;          /* bit k: the executor lets input k become an output (no one
                                else holds it and this is its last use); see
                                rt_kernel_output_from */
  uint64_t forwarded;        /* bit k: input k did (set by rt_kernel_output_from) */
} rt_kernel_ctx;

static inline void rt_kernel_state_lock(rt_kernel_ctx *c) {
  if (c->state_mu) pthread_mutex_lock(c->state_mu);
}
static inline void rt_kernel_state_unlock(rt_kernel_ctx *c) {
  if (c->state_mu) pthread_mutex_unlock(c->state_mu);
}

typedef int (*rt_kernel_fn)(rt_kernel_ctx *ctx);

/* Allocate output i with the given dtype and shape (buffers may be reused across steps). */
rt_tensor *rt_kernel_output(rt_kernel_ctx *ctx, int i, rt_dtype t, const rt_shape *shape);
/* The same, but output i is the first input k of `inputs` (bit k) that the executor lets
 * go (ctx->forward) and that has this dtype and shape, as TF's
 * forward_input_or_allocate_output: the kernel then writes over that input, element j from
 * element j only (elementwise ops). Saves the allocation and keeps the step's working set in
 * cache. */
rt_tensor *rt_kernel_output_from(rt_kernel_ctx *ctx, int i, uint64_t inputs, rt_dtype t,
                                 const rt_shape *shape);
/* An error naming the node, as TF1 words it: "<message>\n\t [[node <name> (op: <op>)]]". */
int rt_kernel_error(rt_kernel_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- threads ------------------------------------------------------------------------
 *
 * One policy for the process, as TF1's global thread pools: intra-op threads are the
 * threads one kernel may use (its tiles on the pool, runtime/pool.h); inter-op threads,
 * how many kernels may run at once (each device's executor runs one op at a time, so this
 * caps several devices). Chosen by, first to last: ConfigProto's intra_op_parallelism_threads /
 * inter_op_parallelism_threads (or `tfsh server --intra-op-threads N`), process-wide: the
 * latest server or session of the process to set one wins (rt_threads_set); BLIS_NUM_THREADS or
 * OMP_NUM_THREADS (intra only); else intra = the CPUs this process may use (affinity
 * mask, cgroup quota, Slurm: runtime/cpus.h), divided among the tasks of the cluster that
 * share them (at least 1), inter = no cap. */
void rt_threads_set(int intra, int inter);          /* 0 leaves one as it is */
/* The default for task (job, index) of a cluster whose tasks_on_host share its host. */
void rt_threads_default(int tasks_on_host);
int rt_intra_threads(void);
/* The same, and why (len bytes of why): "BLIS_NUM_THREADS=4", "affinity 1 of 2 CPUs", ... */
int rt_intra_threads_why(char *why, size_t len);
/* The one line a task gives of its CPU, instruction set, kernel set and threads (GetStatus,
 * %tasks): ops/ sets the function (op_register_all); NULL until then. */
void rt_set_cpu_summary(const char *(*fn)(void));
const char *rt_cpu_summary(void);
int rt_inter_threads(void);                          /* 0: no cap */
/* Around a kernel: waits while inter-op threads are all busy; false (nothing to release)
 * when there is no cap. */
bool rt_inter_acquire(void);
void rt_inter_release(void);

/* ---- gradients -------------------------------------------------------------------- */

typedef struct rt_grad_ctx {
  struct rt_graph *g;
  const rt_node *node;        /* the forward node */
  const char *const *dy;      /* gradient tensor name per output, NULL if none flows */
  char **dx;                  /* to fill: malloc'd tensor name per data input, or NULL */
  const char *scope;          /* name prefix for new nodes, e.g. "gradients/MatMul_grad/" */
  rt_status *st;
  /* Inside a tf.while_loop's gradient loop (gradients_loop.c): each input of a new node goes
   * through remap (a forward value becomes its popped copy), and a new node without inputs
   * waits on pivot, so that it runs once per iteration. NULL elsewhere. */
  const char *(*remap)(void *arg, const char *tensor);
  void *remap_arg;
  const char *pivot;
} rt_grad_ctx;

typedef int (*rt_grad_fn)(rt_grad_ctx *ctx);

/* ---- the op description ----------------------------------------------------------- */

enum {
  RT_OP_STATEFUL = 1 << 0,   /* never constant-folded, never deduplicated */
  RT_OP_SOURCE = 1 << 1,     /* Const, Placeholder, Variable: no data inputs */
  RT_OP_INTERNAL = 1 << 2,   /* _Send, _Recv: not for users, not in completion */
  RT_OP_CLIENT = 1 << 3,     /* runs in the process whose interpreter built it (tf.data's
                                iterators): its attr "owner" is that process's token */
};

/* This process's token (random, positive, the same for its whole life): the "owner" of its
 * RT_OP_CLIENT nodes, so the master can place them here and a kernel elsewhere refuses. */
int64_t rt_process_token(void);

typedef struct rt_op_def {
  const char *name;
  const char *inputs;
  const char *outputs;
  const char *attrs;
  const char *help;
  rt_shape_fn shape;
  rt_kernel_fn kernel[RT_DEV_COUNT];
  rt_grad_fn grad;
  unsigned flags;
} rt_op_def;

/* Parsed signature (filled by the registry from the strings above). */
typedef struct rt_arg_sig {
  char name[32];
  rt_dtype fixed;        /* RT_INVALID unless a fixed dtype */
  char type_attr[32];    /* "T" when typed by an attr */
  char number_attr[32];  /* "N" for "N * T" lists */
  bool ref;
} rt_arg_sig;

typedef struct rt_attr_sig {
  char name[40];          /* TF's longest: ignore_longer_outputs_than_inputs (CTCLoss) */
  rt_attr_kind kind;
  bool has_default;
  rt_attr_value dflt;
  int n_allowed;          /* for type attrs restricted by {..} */
  rt_dtype allowed[8];
  bool has_min;
  int64_t min;
} rt_attr_sig;

typedef struct rt_op_sig {
  const rt_op_def *def;
  int n_in, n_out, n_attrs;
  rt_arg_sig in[16], out[16];
  rt_attr_sig attrs[24];
} rt_op_sig;

/* Kernels for another device type than an op's row gives (ops/gpu/'s table: one row per
 * op with a GPU kernel), added at registration, before any lookup. fn may be NULL: the op
 * is declared to have such a kernel (placement takes it into account) but this build has
 * none (a build without CUDA); running it then fails with "No kernel".
 * types: the dtypes the kernel takes, "ATTR=dt|dt;ATTR2=dt" ("T=float",
 * "SrcT=float|int32;DstT=float"); "" or NULL: any. The string must outlive the registry. */
void rt_op_add_kernel(const char *op, rt_device_type t, rt_kernel_fn fn, const char *types);
/* The kernel an executor on a device of type t runs; NULL if none. */
rt_kernel_fn rt_op_kernel(const rt_op_def *d, rt_device_type t);
/* Whether placement may put the op on a device of type t (any dtype). */
bool rt_op_has_kernel(const rt_op_def *d, rt_device_type t);
/* Whether node n, with its dtypes, may go to a device of type t. */
bool rt_node_has_kernel(const rt_node *n, rt_device_type t);
/* The dtypes constraint of op's kernel for t ("" when any or none). */
const char *rt_op_kernel_dtypes(const rt_op_def *d, rt_device_type t);
/* "CPU", "CPU GPU": the device types with a kernel for d, for help and tables. */
const char *rt_op_kernel_types(const rt_op_def *d, char *buf, size_t n);

/* Register a table of ops (each module of ops/ calls this from its init). A malformed
 * signature is a programmer error: reported on stderr and aborts at start-up. */
void rt_op_register(const rt_op_def *defs, int n);
const rt_op_sig *rt_op_find(const char *name);
/* Iterate registered ops (for help and completion): i from 0 until NULL. */
const rt_op_sig *rt_op_at(int i);
/* The runtime's own ops (_Send, _Recv). Idempotent; op_register_all calls it. */
void rt_op_init_internal(void);
/* Registering every op tfsh has is ops/'s job: op_register_all() in ops/ops.h. */

#endif
