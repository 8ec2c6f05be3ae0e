#!/usr/bin/env bash
# GPUs without a GPU: TFSH_FAKE_GPUS=N gives each worker N fake GPU devices that place as
# GPUs (ops with a GPU kernel go to GPU:0, the rest to the CPU, _Send/_Recv pairs between
# them) and run the CPU kernels, so the numbers must equal a CPU-only run's. Checks %tasks,
# log_device_placement's lines, %placement's reasons, TF1's errors, device_count, and a
# 2-task cluster with a CPU-only ps and a (fake) GPU worker. A binary built with CUDA on a
# machine without a GPU says so once in %tasks and runs CPU-only.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/mlp.py" <<'PY'
import sys
import numpy as np
import tensorflow as tf
cfg = {}
if len(sys.argv) > 1:
    cfg["device_count"] = {"GPU": int(sys.argv[1])}
tf.set_random_seed(7)
x = tf.placeholder(tf.float32, [None, 4], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
w = tf.Variable(tf.truncated_normal([4, 8], stddev=0.5, seed=1), name="w")
b = tf.Variable(tf.zeros([8]), name="b")
v = tf.Variable(tf.truncated_normal([8, 3], stddev=0.5, seed=2), name="v")
h = tf.nn.relu(tf.matmul(x, w) + b)
logits = tf.matmul(h, v, name="logits")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, name="pred"), y), tf.float32), name="acc")
step = tf.train.AdamOptimizer(0.05).minimize(loss)
xs = np.array([[i % 3, (i * 7) % 5, (i * 3) % 4, 1.0] for i in range(30)], dtype=np.float32)
ys = np.array([i % 3 for i in range(30)], dtype=np.int64)
with tf.Session(config=tf.ConfigProto(log_device_placement=True, **cfg)) as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(40):
        l, _ = sess.run([loss, step], {x: xs, y: ys})
    print("loss %.6f acc %.4f" % (l, sess.run(acc, {x: xs, y: ys})))
    tf._views_magic("tasks", "")
    tf._views_magic("placement", "")
PY

# 1. Numbers: a fake GPU changes placement, never results.
cpu=$(timeout 60 "$TFSH" "$WORK/mlp.py" 0 2>"$WORK/cpu.err")   # no GPU, even where one exists
gpu=$(TFSH_FAKE_GPUS=2 timeout 60 "$TFSH" "$WORK/mlp.py" 2>"$WORK/gpu.err")
check "the fake-GPU run trains to the CPU run's loss and accuracy" \
  "$(echo "$cpu" | grep '^loss [0-9]')" "$(echo "$gpu" | grep '^loss [0-9]')"
check "the MLP learns" "acc 1.0000" "$(echo "$gpu" | grep '^loss [0-9]' | awk '{print $3, $4}')"
T=/job:localhost/replica:0/task:0
check "%tasks lists both fake GPUs with name and memory" \
  "CPU:0 GPU:0 (Fake GPU (placement only), 0.0 GiB) GPU:1 (Fake GPU (placement only), 0.0 GiB)" \
  "$(echo "$gpu" | grep "^$T " | sed 's/.*  \(CPU:0.*GiB)\)  .*/\1/')"
# %placement's row of node $1 in output $2: "DEVICE REASON" (name, op, request dropped)
row() { echo "$2" | grep -E "^$1 " | tr -s ' ' | cut -d' ' -f4-; }
check "MatMul goes to GPU:0 by default" "$T/device:GPU:0 default" "$(row logits "$gpu")"
check "ArgMax (no GPU kernel) stays on the CPU" "$T/device:CPU:0 default" "$(row pred "$gpu")"
check "a variable's Adam update goes with it" "$T/device:GPU:0 colocated with w" \
  "$(row Adam/update_w/ApplyAdam "$gpu")"
check "log_device_placement: TF1's line for MatMul" "logits: (MatMul): $T/device:GPU:0" \
  "$(grep -m1 '^logits: ' "$WORK/gpu.err")"
check "log_device_placement: TF1's line for ArgMax" "pred: (ArgMax): $T/device:CPU:0" \
  "$(grep -m1 '^pred: ' "$WORK/gpu.err")"

# 2. device_count={'GPU': 0}: no GPU device, everything on the CPU; CUDA_VISIBLE_DEVICES.
out=$(TFSH_FAKE_GPUS=2 timeout 60 "$TFSH" "$WORK/mlp.py" 0 2>/dev/null)
check "device_count GPU 0: MatMul on the CPU" "$T/device:CPU:0 default" "$(row logits "$out")"
check "device_count GPU 0: no GPU in %tasks" "CPU:0" "$(echo "$out" | grep "^$T " | awk '{print $5}')"
out=$(TFSH_FAKE_GPUS=2 CUDA_VISIBLE_DEVICES=1 timeout 60 "$TFSH" "$WORK/mlp.py" 1 2>/dev/null)
check "CUDA_VISIBLE_DEVICES=1 leaves one GPU" "CPU:0 GPU:0 (Fake GPU (placement only), 0.0 GiB)" \
  "$(echo "$out" | grep "^$T " | sed 's/.*  \(CPU:0.*GiB)\)  .*/\1/')"

out=$(TFSH_FAKE_GPUS=2 timeout 60 "$TFSH" -c '
import tensorflow as tf
srv = tf.train.Server.create_local_server(config=tf.ConfigProto(device_count={"GPU": 1}, gpu_options=tf.GPUOptions(allow_growth=True)))
with tf.Session(srv.target) as s:
    print(s.run(tf.constant([1.0, 2.0]) * 2))
    tf._views_magic("tasks", "")
' 2>&1)
check "tf.train.Server's device_count GPU 1: one GPU" "CPU:0 GPU:0 (Fake GPU (placement only), 0.0 GiB)" \
  "$(echo "$out" | grep "^/job:local/replica:0/task:0 " | sed 's/.*  \(CPU:0.*GiB)\)  .*/\1/')"

# 3. An explicit GPU request that cannot be honoured: TF1's error, or soft placement.
cat >"$WORK/explicit.py" <<'PY'
import tensorflow as tf
a = tf.constant([[1.0, 3.0], [4.0, 2.0]], name="a")
with tf.device("/gpu:0"):
    m = tf.argmax(a, 1, name="m")
    r = tf.nn.relu(a, name="r")
for soft in [False, True]:
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=soft)) as sess:
        try:
            print("soft" if soft else "hard", sess.run(m).tolist(), sess.run(r).tolist())
            tf._views_magic("placement", "")
        except tf.errors.OpError as e:
            print("soft" if soft else "hard", type(e).__name__, e.message)
PY
out=$(TFSH_FAKE_GPUS=1 timeout 60 "$TFSH" "$WORK/explicit.py" 2>&1)
check "no GPU kernel: TF1's error naming the node" \
  "hard InvalidArgumentError Cannot assign a device for operation 'm': Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices is available." \
  "$(echo "$out" | grep '^hard')"
check "soft placement runs it" "soft [1, 0] [[1.0, 3.0], [4.0, 2.0]]" "$(echo "$out" | grep '^soft')"
check "%placement says why" "$T/device:CPU:0 soft placement fallback from /device:GPU:0: no GPU kernel for ArgMax (m)" \
  "$(row m "$out")"
check "the Relu beside it is on the GPU" "$T/device:GPU:0 explicit /device:GPU:0" "$(row r "$out")"
out=$(CUDA_VISIBLE_DEVICES= timeout 60 "$TFSH" -c '
import tensorflow as tf
a = tf.constant([1.0, -1.0], name="a")
with tf.device("/gpu:0"):
    r = tf.nn.relu(a, name="r")
with tf.Session() as sess:
    try:
        sess.run(r)
    except tf.errors.OpError as e:
        print(type(e).__name__, e.message)
' 2>&1)
check "no GPU device: the devices that exist" \
  "InvalidArgumentError Cannot assign a device for operation 'r': Operation was explicitly assigned to /device:GPU:0 but available devices are [ $T/device:CPU:0 ]. Make sure the device specification refers to a valid device." \
  "$out"

# 4. A binary with CUDA and no GPU here: one line in %tasks, CPU-only, never an error.
notes=$(echo "$cpu" | grep -c "^$T: no GPU: .*; running CPU-only$")
built=$("$TFSH" -c 'import tensorflow as tf; tf._bench_gpu("sgemm", 64, 1)' 2>&1)
if ! echo "$built" | grep -q "built without CUDA" && [ ! -e /dev/nvidia0 ]; then
  check "a CUDA build without a GPU says so once in %tasks" 1 "$notes"
else
  check "no GPU note (no CUDA in this build, or a GPU here)" 0 "$notes"
fi

# 5. Two tasks: a CPU-only ps and a worker with a (fake) GPU; same numbers as all-CPU.
read -r PS W0 <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$PS\"], \"worker\": [\"localhost:$W0\"]}"
cat >"$WORK/dist.py" <<PY
import numpy as np
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, name="x")
    w = tf.Variable(tf.ones([3, 2]), name="w")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w, name="mm")), name="loss")
    step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
with tf.Session("grpc://localhost:$W0") as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(5):
        l, _ = sess.run([loss, step])
    print("loss %.6f" % l)
    tf._views_magic("placement", "")
PY
CUDA_VISIBLE_DEVICES= start_task ps --cluster "$SPEC" --job ps --task 0
TFSH_FAKE_GPUS=1 start_task w0 --cluster "$SPEC" --job worker --task 0
out=$(timeout 60 "$TFSH" "$WORK/dist.py" 2>&1)
check "2 tasks: MatMul on the worker's GPU" "/job:worker/replica:0/task:0/device:GPU:0" \
  "$(echo "$out" | grep -E '^mm ' | tr -s ' ' | cut -d' ' -f4)"
check "2 tasks: the variable on the ps's CPU" "/job:ps/replica:0/task:0/device:CPU:0" \
  "$(echo "$out" | grep -E '^w ' | tr -s ' ' | cut -d' ' -f4)"
ref=$(timeout 60 "$TFSH" -c "
import numpy as np
import tensorflow as tf
x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
w = tf.Variable(tf.ones([3, 2]))
loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
with tf.Session(config=tf.ConfigProto(device_count={'GPU': 0})) as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(5):
        l, _ = sess.run([loss, step])
    print('loss %.6f' % l)
" 2>&1)
check "2 tasks: the same loss as one CPU" "$ref" "$(echo "$out" | grep '^loss [0-9]')"
finish
