#!/usr/bin/env bash
# Workload 1: tiny 2-task step, tfsh vs TensorFlow 1.x (compat.v1, gRPC), REPS paired
# repetitions alternating who goes first, each with the raw ZeroMQ tcp round trip
# (net_bench) measured in the same repetition. Targets: tfsh <= 3 raw round trips,
# tfsh <= 0.5x TF's time.   scripts/bench/vs_tf/step.sh [STEPS (1000)]
set -eu
. "$(dirname "$0")/lib.sh"
STEPS=${1:-1000}
echo "== 1. tiny 2-task step (x+=1 on task 0 -> x*2 on task 1, session on task 0's in-process master), best of 3 x $STEPS steps"
for ((rep = 1; rep <= REPS; rep++)); do
  for impl in $(impls_for $rep); do
    read -r A B <<<"$(free_ports 2)"
    start "$WORK/$impl.1.log" $impl "$BENCH/step.py" --hosts "localhost:$A,localhost:$B" --task 1
    t1=$LAST
    wait_line "$WORK/$impl.1.log" ready $t1
    run_bounded 300 "$WORK/$impl.0.log" $impl "$BENCH/step.py" --hosts "localhost:$A,localhost:$B" --task 0 --steps "$STEPS"
    kill $t1 2>/dev/null || true; wait $t1 2>/dev/null || true
    eval "${impl}_$rep=$(field step_us "$WORK/$impl.0.log")"
  done
  eval "raw_$rep=$(raw_rtt 5000)"
  eval "echo \"  rep $rep: tfsh \$tfsh_$rep us  TF \$tf_$rep us  raw zmq tcp RTT \$raw_$rep us\""
done
python3 - "$REPS" $(for ((r = 1; r <= REPS; r++)); do eval "echo \$tfsh_$r \$tf_$r \$raw_$r"; done) <<'PY'
import sys
n = int(sys.argv[1]); v = list(map(float, sys.argv[2:]))
tfsh, tf, raw = min(v[0::3]), min(v[1::3]), min(v[2::3])
rt = tfsh / raw
print("  best: tfsh %.1f us, TF %.1f us, raw RTT %.1f us" % (tfsh, tf, raw))
print("  tfsh = %.2f raw round trips (target <= 3): %s" % (rt, "MET" if rt <= 3 else "MISSED"))
print("  tfsh/TF = %.2f (target <= 0.5): %s" % (tfsh / tf, "MET" if tfsh / tf <= 0.5 else "MISSED"))
print("SUMMARY step | %.1f us | %.1f us | %.2f | raw RTT %.1f us: %.2f RTTs | <=3 RTT, <=0.5x TF | %s" % (
    tfsh, tf, tfsh / tf, raw, rt, "MET" if rt <= 3 and tfsh / tf <= 0.5 else "MISSED"))
PY
