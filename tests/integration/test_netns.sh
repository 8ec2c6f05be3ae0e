#!/usr/bin/env bash
# Three hosts in network namespaces (1 ps + 2 workers), joined by a bridge in a fourth
# namespace; addresses 10.123.0.x/24 exist only inside the namespaces, so no traffic leaves
# them. The tasks talk over CURVE with a cluster key (non-loopback addresses need one).
# One client, on the first worker's host, runs towers on both workers against variables on
# the ps. Skipped, saying why, where `ip netns` is not permitted; namespaces deleted at exit.
. "$(dirname "$0")/lib.sh"
NS=tfsh$$
HOSTS=("$NS-h0" "$NS-h1" "$NS-h2")
SW="$NS-sw"
netns_cleanup() {
  for n in "${HOSTS[@]}" "$SW"; do ip netns del "$n" 2>/dev/null; done
}
trap 'cleanup; netns_cleanup' EXIT
if ! err=$(ip netns add "$SW" 2>&1); then
  echo "SKIP: network namespaces are not permitted here (ip netns add: $err)"
  exit 77
fi
set -e
ip -n "$SW" link add br0 type bridge
ip -n "$SW" link set br0 up
for i in 0 1 2; do
  ip netns add "${HOSTS[$i]}"
  ip -n "$SW" link add "s$i" type veth peer name eth0 netns "${HOSTS[$i]}"
  ip -n "$SW" link set "s$i" master br0 up
  ip -n "${HOSTS[$i]}" addr add "10.123.0.$((i + 1))/24" dev eth0
  ip -n "${HOSTS[$i]}" link set eth0 up
  ip -n "${HOSTS[$i]}" link set lo up
done
set +e
check "and the addresses are not on this host" "no" \
  "$(ip -o addr show | grep -q '10\.123\.0\.' && echo yes || echo no)"

PORT=2222
SPEC="{\"ps\": [\"10.123.0.1:$PORT\"], \"worker\": [\"10.123.0.2:$PORT\", \"10.123.0.3:$PORT\"]}"
KEY=$WORK/cluster.key
"$TFSH" keygen "$KEY" >/dev/null 2>&1 || { echo "tfsh keygen failed"; exit 1; }
export TFSH_CLUSTER_KEY=$KEY
in_ns() { local n=$1; shift; ip netns exec "$n" "$@"; }
task() {   # task NAME HOSTINDEX JOB INDEX
  # ip netns exec directly (not through a function): $! must be the task's own pid
  ip netns exec "${HOSTS[$2]}" "$TFSH" server --cluster "$SPEC" --job "$3" --task "$4" >"$WORK/$1.log" 2>&1 &
  PIDS+=($!)
}
task ps 0 ps 0
task w0 1 worker 0
task w1 2 worker 1
for t in ps w0 w1; do wait_for "$WORK/$t.log" "serving on" 20 || true; done
check "each task listens on its own host's address" \
  "tcp://10.123.0.1:$PORT tcp://10.123.0.2:$PORT tcp://10.123.0.3:$PORT" \
  "$(for t in ps w0 w1; do grep -o 'serving on .*' "$WORK/$t.log" | cut -d' ' -f3; done | tr '\n' ' ' | sed 's/ $//')"

cat >"$WORK/client.py" <<PY
import tensorflow as tf
with tf.device("/job:ps/task:0"):
    w = tf.Variable([1.0, 2.0, 3.0], name="w")
    count = tf.Variable(0, dtype=tf.int64, name="count")
outs = []
for i in range(2):
    with tf.device("/job:worker/task:%d" % i):
        outs.append(tf.reduce_sum(w * float(i + 1)))
with tf.device("/job:ps/task:0"):
    step = tf.group(tf.assign_add(w, tf.ones([3])), tf.assign_add(count, 1))
    total = tf.add_n(outs)
with tf.Session("grpc://10.123.0.2:$PORT") as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(20):
        sess.run(step)
    print("count", sess.run(count), "total", sess.run(total))
PY
check "a 3-host run" "count 20 total 198.0" "$(in_ns "${HOSTS[1]}" timeout 60 "$TFSH" "$WORK/client.py" 2>&1 | tail -1)"
unset TFSH_CLUSTER_KEY
check "a client without the key gets nothing" "refused" \
  "$(in_ns "${HOSTS[1]}" timeout 30 "$TFSH" -c "
import tensorflow as tf
try:
    with tf.Session('grpc://10.123.0.2:$PORT', config=tf.ConfigProto(operation_timeout_in_ms=3000)) as s:
        print(s.run(tf.constant(1)))
except tf.errors.OpError as e:
    print('refused')" 2>&1 | tail -1)"
finish
