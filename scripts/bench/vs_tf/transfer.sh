#!/usr/bin/env bash
# Workload 2: a 64 MiB float32 variable on task 0 consumed on task 1, tfsh vs TensorFlow 1.x
# (compat.v1, gRPC), REPS paired repetitions alternating who goes first, each with raw
# ZeroMQ tcp throughput (net_bench, 64 MiB REQ/REP) measured in the same repetition.
# Targets: tfsh >= 0.7x raw, >= 3x TF.   scripts/bench/vs_tf/transfer.sh [STEPS (10)]
set -eu
. "$(dirname "$0")/lib.sh"
STEPS=${1:-10}
echo "== 2. 64 MiB worker -> worker (variable on task 0, consumed on task 1 = client's task), best step of $STEPS"
for ((rep = 1; rep <= REPS; rep++)); do
  for impl in $(impls_for $rep); do
    read -r A B <<<"$(free_ports 2)"
    start "$WORK/$impl.0.log" $impl "$BENCH/transfer.py" --hosts "localhost:$A,localhost:$B" --task 0
    t0=$LAST
    wait_line "$WORK/$impl.0.log" ready $t0
    run_bounded 300 "$WORK/$impl.1.log" $impl "$BENCH/transfer.py" --hosts "localhost:$A,localhost:$B" --task 1 --steps "$STEPS"
    kill $t0 2>/dev/null || true; wait $t0 2>/dev/null || true
    eval "${impl}_$rep='$(field moved_s "$WORK/$impl.1.log") $(field stay_s "$WORK/$impl.1.log")'"
  done
  eval "raw_$rep=$(raw_mbps 10)"
  eval "echo \"  rep $rep: tfsh step/no-transfer step \$tfsh_$rep s  TF \$tf_$rep s  raw zmq tcp \$raw_$rep MB/s\""
done
python3 - $(for ((r = 1; r <= REPS; r++)); do eval "echo \$tfsh_$r \$tf_$r \$raw_$r"; done) <<'PY'
import sys
v = list(map(float, sys.argv[1:]))
mb = 64 * 1048576 / 1e6
tfsh_s, tfsh_stay, tf_s, tf_stay = min(v[0::5]), min(v[1::5]), min(v[2::5]), min(v[3::5])
raw = max(v[4::5])
tfsh, tf = mb / tfsh_s, mb / tf_s
print("  best step: tfsh %.1f ms (%.1f ms without the transfer), TF %.1f ms (%.1f ms without)" % (
    tfsh_s * 1e3, tfsh_stay * 1e3, tf_s * 1e3, tf_stay * 1e3))
print("  tfsh %.0f MB/s, TF %.0f MB/s, raw zmq tcp %.0f MB/s (whole step, 64 MiB / step time)" % (tfsh, tf, raw))
print("  tfsh/raw = %.2f (target >= 0.7): %s" % (tfsh / raw, "MET" if tfsh / raw >= 0.7 else "MISSED"))
print("  tfsh/TF  = %.2f (target >= 3): %s" % (tfsh / tf, "MET" if tfsh / tf >= 3 else "MISSED"))
print("SUMMARY transfer | %.0f MB/s | %.0f MB/s | %.2f | raw %.0f MB/s: %.2fx raw | >=0.7x raw, >=3x TF | %s" % (
    tfsh, tf, tfsh / tf, raw, tfsh / raw, "MET" if tfsh / raw >= 0.7 and tfsh / tf >= 3 else "MISSED"))
PY
