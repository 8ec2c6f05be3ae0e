#!/usr/bin/env bash
# CURVE cluster keys with real processes: a ps and a worker started with
# TFSH_CLUSTER_KEY train a model for a client holding the key; a client without the key,
# or with another key, is refused at once with the reason and nothing runs; a task asked
# to listen on a non-loopback address without a key refuses to start.
. "$(dirname "$0")/lib.sh"
HOSTILE=${HOSTILE:-$(dirname "$TFSH")/hostile_client}
keygen() { if "$TFSH" keygen --help >/dev/null 2>&1; then "$TFSH" keygen "$1"; else "$HOSTILE" keygen "$1"; fi; }
keygen "$WORK/cluster.key" >/dev/null
keygen "$WORK/other.key" >/dev/null
check "key file mode 0600" "600" "$(stat -c %a "$WORK/cluster.key")"

read -r P0 W0 P1 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}"
export TFSH_CLUSTER_KEY=$WORK/cluster.key
start_task ps --cluster "$SPEC" --job ps --task 0
start_task w0 --cluster "$SPEC" --job worker --task 0

cat >"$WORK/train.py" <<PY
import tensorflow as tf
with tf.device("/job:ps/task:0"):
    w = tf.Variable(0.0, name="w")
    steps = tf.Variable(0, name="steps", dtype=tf.int64)
    bump = tf.assign_add(steps, 1)
with tf.device("/job:worker/task:0"):
    loss = tf.square(w - 3.0)
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
with tf.Session("grpc://localhost:$W0") as sess:
    import sys
    if sys.argv[1] == "init":
        sess.run(tf.global_variables_initializer())
    for i in range(int(sys.argv[2])):
        sess.run([train, bump])
    print("w=%.3f steps=%d" % tuple(sess.run([w, steps])))
PY
out=$(timeout 60 "$TFSH" "$WORK/train.py" init 20 2>&1 | tail -1)
check "training over the encrypted path" "w=3.000 steps=20" "$out"

t0=$(date +%s%N)
out=$(TFSH_CLUSTER_KEY= timeout 30 "$TFSH" "$WORK/train.py" run 5 2>&1)
ms=$((($(date +%s%N) - t0) / 1000000))
echo "$out" | tail -3
check "a client without the key is refused, with the reason" "yes" \
  "$(echo "$out" | grep -q 'refused the connection: cluster key mismatch or missing (TFSH_CLUSTER_KEY)' && echo yes)"
check "... quickly (under 5 s; took $ms ms)" "yes" "$([ "$ms" -lt 5000 ] && echo yes)"
out=$(TFSH_CLUSTER_KEY=$WORK/other.key timeout 30 "$TFSH" "$WORK/train.py" run 5 2>&1)
check "a client with another key is refused, with the reason" "yes" \
  "$(echo "$out" | grep -q 'refused the connection: cluster key mismatch or missing' && echo yes)"
out=$(TFSH_CLUSTER_KEY= timeout 30 "$HOSTILE" "tcp://127.0.0.1:$W0" 2>&1)
check "raw messages without the key reach nothing" "yes" \
  "$(echo "$out" | grep -q 'refused the connection' && echo yes)"
check "nothing ran for the refused clients" "w=3.000 steps=20" \
  "$(timeout 60 "$TFSH" "$WORK/train.py" run 0 2>&1 | tail -1)"

# non-loopback without a key: refused; with the key: serves
SPEC1="{\"worker\": [\"localhost:$P1\"]}"
out=$(TFSH_CLUSTER_KEY= timeout 10 "$TFSH" server --cluster "$SPEC1" --job worker --task 0 --bind 0.0.0.0 2>&1)
rc=$?
check "non-loopback bind without a key refuses to start" "yes" \
  "$([ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "$out" | grep -q "refusing to listen on tcp://0.0.0.0:$P1 without a cluster key" && echo yes)"
check "... and names the ways out" "yes" \
  "$(echo "$out" | grep -q 'tfsh keygen FILE.*--insecure' && echo yes)"
start_task w1 --cluster "$SPEC1" --job worker --task 0 --bind 0.0.0.0
cat >"$WORK/one.py" <<PY
import tensorflow as tf
with tf.Session("grpc://localhost:$P1") as sess:
    print(sess.run(tf.constant(1) + 1))
PY
check "non-loopback bind with the key serves key holders" "2" "$(timeout 30 "$TFSH" "$WORK/one.py" 2>&1 | tail -1)"
finish
