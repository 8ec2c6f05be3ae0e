#!/usr/bin/env bash
# A task killed in mid-step: every other partition aborts and the client's step fails
# within 2 s, naming the task. A restarted task is recognised by its new incarnation.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
wait_for "$WORK/ps.log" "serving on"
start_task w0 --cluster "$SPEC" --job worker --task 0
wait_for "$WORK/w0.log" "serving on"

cat >"$WORK/client.py" <<PY
import sys, time, tensorflow as tf
with tf.device("/job:ps/task:0"):
    v = tf.Variable(tf.ones([256, 256]), name="v")
with tf.device("/job:worker/task:0"):
    x = tf.random_uniform([1024, 1024])
    for i in range(200):
        x = tf.matmul(x, x) * 0.001
with tf.device("/job:ps/task:0"):
    y = tf.reduce_sum(x) + tf.reduce_sum(v)
with tf.Session("grpc://localhost:$W0") as sess:
    sess.run(tf.global_variables_initializer())
    print("running", flush=True)
    t = time.time()
    try:
        sess.run(y)
        print("finished?")
    except tf.errors.OpError as e:
        print("failed at %.3f" % time.time(), flush=True)
        print("%s after %.1f s: %s" % (type(e).__name__, time.time() - t, str(e).split("\n")[0]), flush=True)
PY
timeout 60 "$TFSH" "$WORK/client.py" >"$WORK/client.out" 2>&1 &
client=$!
wait_for "$WORK/client.out" running 30
kill -9 "$PID_ps"
killed=$(date +%s.%N)
wait_for "$WORK/client.out" "failed at" 30
took=$(python3 -c "print(int((float('$(grep -o 'failed at [0-9.]*' "$WORK/client.out" | cut -d' ' -f3)') - $killed) * 1000))")
wait $client
line=$(tail -1 "$WORK/client.out")
check "the step fails naming the killed task" "UnavailableError /job:ps/replica:0/task:0" \
  "$(echo "$line" | sed -E 's/^([A-Za-z]+) after [0-9.]+ s: (\/job:ps\/replica:0\/task:0).*/\1 \2/')"
check "within 2 s of the kill" "yes" "$([ "$took" -lt 2000 ] && echo yes || echo "no: $took ms ($line)")"

# A session that outlives a ps restart: its next step says the ps restarted.
start_task ps2 --cluster "$SPEC" --job ps --task 0
wait_for "$WORK/ps2.log" "serving on"
cat >"$WORK/long.py" <<PY
import os, time, tensorflow as tf
with tf.device("/job:ps/task:0"):
    v = tf.Variable(1.0, name="v")
sess = tf.Session("grpc://localhost:$W0")
sess.run(v.initializer)
print("first", sess.run(v), flush=True)
for _ in range(1500):
    if os.path.exists("$WORK/restarted"):
        break
    time.sleep(0.02)
try:
    sess.run(v)
except tf.errors.AbortedError as e:
    print("AbortedError:", str(e).split(" (incarnation")[0])
PY
timeout 60 "$TFSH" "$WORK/long.py" >"$WORK/long.out" 2>&1 &
long=$!
wait_for "$WORK/long.out" "first 1.0" 30
kill -9 "$PID_ps2"
wait "$PID_ps2" 2>/dev/null
start_task ps3 --cluster "$SPEC" --job ps --task 0
wait_for "$WORK/ps3.log" "serving on"
touch "$WORK/restarted"
wait $long
check "a restarted task is recognised by its incarnation" \
  "AbortedError: /job:ps/replica:0/task:0: /job:ps/replica:0/task:0 restarted" "$(tail -1 "$WORK/long.out")"

# The ps comes back on the same port: a new session works.
cat >"$WORK/again.py" <<PY
import tensorflow as tf
with tf.device("/job:ps/task:0"):
    v = tf.Variable(3.0, name="v")
    w = v * 2
sess = tf.Session("grpc://localhost:$W0")
sess.run(v.initializer)
print(sess.run(w))
PY
check "a new session works after the restart" "6.0" "$(timeout 30 "$TFSH" "$WORK/again.py" 2>&1 | tail -1)"
finish
