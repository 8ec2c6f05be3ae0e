#!/usr/bin/env bash
# A network partition in mid-step (the link between two hosts taken down, in network
# namespaces): the step fails within 2 s naming the task cut off; once the link is back, a
# new session works. The step waits on an empty queue on the ps, so it is certainly still
# running when the link goes down (a step of fixed length could end first on a busy host). Skipped, saying why, where network namespaces cannot be made.
. "$(dirname "$0")/lib.sh"
ns=tfshp$$
A=${ns}a B=${ns}b
if ! ip netns add "$A" 2>/dev/null; then
  echo "SKIP: cannot create network namespaces here (needs root and ip netns)"
  exit 77
fi
ip netns add "$B"
cleanup_ns() { ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null; }
trap 'cleanup; cleanup_ns' EXIT
ip link add "${ns}va" type veth peer name "${ns}vb"
ip link set "${ns}va" netns "$A"
ip link set "${ns}vb" netns "$B"
ip -n "$A" addr add 10.123.7.1/24 dev "${ns}va"
ip -n "$B" addr add 10.123.7.2/24 dev "${ns}vb"
for n in "$A" "$B"; do ip -n "$n" link set lo up; done
ip -n "$A" link set "${ns}va" up
ip -n "$B" link set "${ns}vb" up

SPEC='{"ps": ["10.123.7.1:2222"], "worker": ["10.123.7.2:2222"]}'
ip netns exec "$A" "$TFSH" server --cluster "$SPEC" --job ps --task 0 --insecure >"$WORK/ps.log" 2>&1 &
PIDS+=($!)
ip netns exec "$B" "$TFSH" server --cluster "$SPEC" --job worker --task 0 --insecure >"$WORK/w.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/ps.log" "serving on"
wait_for "$WORK/w.log" "serving on"

cat >"$WORK/client.py" <<'PY'
import sys, time, tensorflow as tf
with tf.device("/job:ps/task:0"):
    v = tf.Variable(tf.ones([64, 64]), name="v")
    q = tf.FIFOQueue(1, tf.float32, shapes=[], name="gate")
with tf.device("/job:worker/task:0"):
    x = tf.random_uniform([256, 256])
    for i in range(20):
        x = tf.matmul(x, x) * 0.001
with tf.device("/job:ps/task:0"):
    y = tf.reduce_sum(x) + tf.reduce_sum(v) + q.dequeue()
with tf.Session("grpc://10.123.7.2:2222") as sess:
    sess.run(tf.global_variables_initializer())
    if sys.argv[1] == "long":
        sess.run(q.enqueue(1.0))
        sess.run(y)   # the step prepared and registered everywhere
        print("running", flush=True)
        try:
            sess.run(y)   # the gate is empty: this step waits on the ps until the cut
            print("finished?")
        except tf.errors.OpError as e:
            print("failed at %.3f" % time.time(), flush=True)
            print(type(e).__name__, str(e).split(": ")[0])
    else:
        print("healed:", sess.run(tf.reduce_sum(v)))
PY
ip netns exec "$B" timeout 60 "$TFSH" "$WORK/client.py" long >"$WORK/client.out" 2>&1 &
client=$!
wait_for "$WORK/client.out" running 30
ip -n "$A" link set "${ns}va" down
cut=$(date +%s.%N)
wait_for "$WORK/client.out" "failed at" 30
wait $client
failed=$(grep -o 'failed at [0-9.]*' "$WORK/client.out" | cut -d' ' -f3)
ms=$(python3 -c "print(int((float('$failed') - $cut) * 1000))")
check "the step fails naming the task cut off" "UnavailableError /job:ps/replica:0/task:0" "$(tail -1 "$WORK/client.out")"
check "within 2 s of the cut" "yes" "$([ "$ms" -lt 2000 ] && echo yes || echo "no: $ms ms")"
ip -n "$A" link set "${ns}va" up
check "once healed, a new session works" "healed: 4096.0" \
  "$(ip netns exec "$B" timeout 30 "$TFSH" "$WORK/client.py" heal 2>&1 | tail -1)"
finish
