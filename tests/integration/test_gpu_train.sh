#!/usr/bin/env bash
# Training on a real GPU gives the CPU's results: an MLP (MatMul, BiasAdd, Relu, sparse
# cross-entropy, Adam on GPU:0) and a small CNN (cuDNN convolution and pooling) reach the
# same accuracy as device_count={'GPU': 0},
# with losses within 1e-3; a 2-task run with a CPU-only ps and a GPU worker too. Skipped
# (77) where there is no GPU. UNVERIFIED: written without a GPU to run it on.
# TFSH_GPU_TEST_SELF=1: run it with fake GPUs (CPU kernels) to check the test itself.
. "$(dirname "$0")/lib.sh"
if [ "${TFSH_GPU_TEST_SELF:-}" = 1 ]; then
  export TFSH_FAKE_GPUS=1
elif ! "$TFSH" -c 'import tensorflow as tf; tf._bench_gpu("sgemm", 64, 1)' >"$WORK/probe" 2>&1; then
  echo "skipped: $(tail -1 "$WORK/probe")"
  exit 77
fi

cat >"$WORK/train.py" <<'PY'
import sys
import numpy as np
import tensorflow as tf
gpus, model, target = int(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
rng = np.random.RandomState(3)
xs = rng.rand(256, 8, 8, 1).astype(np.float32)
f = xs.reshape(256, 64)
ys = (f[:, :32].sum(axis=1) > f[:, 32:].sum(axis=1)).astype(np.int64)
tf.set_random_seed(5)


def model_fn():
    global x, y, loss, acc, step
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int64, [None])
    if model == "cnn":
        k = tf.Variable(tf.truncated_normal([3, 3, 1, 4], stddev=0.3, seed=1))
        h = tf.nn.relu(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        flat = tf.reshape(h, [-1, 64])
    else:
        flat = tf.reshape(x, [-1, 64])
    w = tf.Variable(tf.truncated_normal([64, 16], stddev=0.2, seed=2))
    b = tf.Variable(tf.zeros([16]))
    v = tf.Variable(tf.truncated_normal([16, 2], stddev=0.2, seed=3))
    logits = tf.matmul(tf.nn.relu(tf.nn.bias_add(tf.matmul(flat, w), b)), v)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    step = tf.train.AdamOptimizer(0.01).minimize(loss)


if target:
    cluster = tf.train.ClusterSpec(eval(sys.argv[4]))
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
        model_fn()
else:
    model_fn()
cfg = tf.ConfigProto(device_count={"GPU": gpus}) if not target else None
with tf.Session(target, config=cfg) as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(200):
        l, _ = sess.run([loss, step], {x: xs, y: ys})
    print("%.6f %.4f" % (l, sess.run(acc, {x: xs, y: ys})))
PY
for m in mlp cnn; do
  cpu=$(timeout 120 "$TFSH" "$WORK/train.py" 0 $m 2>&1)
  [ $m = mlp ] && cpu_mlp=$cpu
  check "$m: the CPU run trains (loss, accuracy)" yes "$(echo "$cpu" | grep -qE '^[0-9.]+ 1\.0000$' && echo yes || echo "$cpu")"
  gpu=$(timeout 120 "$TFSH" "$WORK/train.py" 1 $m 2>&1)
  check "$m: GPU accuracy equals the CPU's" "$(echo "$cpu" | awk '{print $2}')" "$(echo "$gpu" | awk '{print $2}')"
  close=$(python3 -c "import sys; a, b = float('$(echo "$cpu" | awk '{print $1}')'), float('$(echo "$gpu" | awk '{print $1}')' or 'nan'); print(abs(a - b) <= 1e-3)" 2>&1)
  check "$m: GPU loss within 1e-3 of the CPU's ($cpu / $gpu)" True "$close"
done

read -r PS W0 <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$PS\"], \"worker\": [\"localhost:$W0\"]}"
CUDA_VISIBLE_DEVICES= start_task ps --cluster "$SPEC" --job ps --task 0
start_task w0 --cluster "$SPEC" --job worker --task 0
dist=$(timeout 180 "$TFSH" "$WORK/train.py" 1 mlp "grpc://localhost:$W0" "$SPEC" 2>&1)
check "2 tasks (CPU ps, GPU worker): the CPU's accuracy" "$(echo "$cpu_mlp" | awk '{print $2}')" \
  "$(echo "$dist" | tail -1 | awk '{print $2}')"
finish
