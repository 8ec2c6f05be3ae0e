#!/usr/bin/env bash
# Soak: CLIENTS client sessions x STEPS steps against one ps task: the ps's memory
# stays flat, no descriptor leaks, no step lost. A separate command, not part of the suite:
#   scripts/soak.sh [CLIENTS] [STEPS]        (default 4 x 20000)
set -euo pipefail
. "$(dirname "$0")/ports.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
TFSH=${TFSH:-$root/build/tfsh}
clients=${1:-4}
steps=${2:-20000}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
read -r P W <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P\"], \"worker\": [\"localhost:$W\"]}"
"$TFSH" server --cluster "$SPEC" --job ps --task 0 >"$work/ps.log" 2>&1 &
ps_pid=$!
pids+=($ps_pid)
"$TFSH" server --cluster "$SPEC" --job worker --task 0 >"$work/w.log" 2>&1 &
pids+=($!)
for _ in $(seq 500); do grep -q "serving on" "$work/ps.log" "$work/w.log" 2>/dev/null && break; sleep 0.02; done

cat >"$work/client.py" <<PY
import sys, tensorflow as tf
with tf.device("/job:ps/task:0"):
    counter = tf.Variable(0, dtype=tf.int64, name="counter")
    bump = tf.assign_add(counter, 1)
with tf.Session("grpc://localhost:$W") as sess:
    if sys.argv[1] == "init":
        sess.run(counter.initializer)
    else:
        for i in range(int(sys.argv[1])):
            sess.run(bump)
        print(sess.run(counter))
PY
"$TFSH" "$work/client.py" init
mem() { awk '/VmRSS/ {print $2}' /proc/$ps_pid/status; }
fds() { ls /proc/$ps_pid/fd | wc -l; }
warm=$((steps / 10))
# warm-up with every client at once: handler threads, connections and buffer caches fill
for c in $(seq "$clients"); do "$TFSH" "$work/client.py" $warm >/dev/null & done
wait $(jobs -p | tail -n "$clients")
rss0=$(mem); fd0=$(fds); t0=$(date +%s.%N)
for c in $(seq "$clients"); do "$TFSH" "$work/client.py" "$steps" >"$work/c$c.out" 2>&1 & done
wait $(jobs -p | tail -n "$clients")
t1=$(date +%s.%N)
rss1=$(mem); fd1=$(fds)
final=$(echo 'import tensorflow as tf
with tf.device("/job:ps/task:0"):
    c = tf.Variable(0, dtype=tf.int64, name="counter")
print(tf.Session("grpc://localhost:'"$W"'").run(c))' | "$TFSH")
want=$((clients * steps + clients * warm))
echo "steps: $((clients * steps)) in $(python3 -c "print('%.1f' % ($t1 - $t0))") s ($(python3 -c "print('%.0f' % ($clients * $steps / ($t1 - $t0)))") steps/s)"
echo "counter: $final (expected $want)"
echo "ps RSS: $rss0 kB -> $rss1 kB; descriptors: $fd0 -> $fd1"
[ "$final" = "$want" ] && [ "$fd1" -le $((fd0 + 2)) ] && [ "$rss1" -le $((rss0 + 20480)) ] && echo "soak: ok" && exit 0
echo "soak: FAILED"
exit 1
