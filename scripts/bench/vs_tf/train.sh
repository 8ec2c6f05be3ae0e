#!/usr/bin/env bash
# Workloads 3 and 4: between-graph training (train.py: 1 ps + 2 workers, 784-100-10 MLP,
# batch 100, Adam, MonitoredTrainingSession), tfsh vs TensorFlow 1.x (compat.v1, gRPC), REPS
# paired repetitions alternating who goes first. The figure: the chief's training time per
# 1000 global steps (first step to last). Targets: async tfsh >= 2x faster than TF,
# sync (SyncReplicasOptimizer) >= 1.5x.
#   scripts/bench/vs_tf/train.sh [async|sync (async)] [STEPS (1000)]
set -eu
. "$(dirname "$0")/lib.sh"
MODE=${1:-async}
STEPS=${2:-1000}
SYNC=0; TARGET=2; NUM=3
[ "$MODE" = sync ] && SYNC=1 TARGET=1.5 NUM=4
echo "== $NUM. $MODE between-graph MLP training, 1 ps + 2 workers, until global step $STEPS"
for ((rep = 1; rep <= REPS; rep++)); do
  for impl in $(impls_for $rep); do
    read -r P W0 W1 <<<"$(free_ports 3)"
    args=(--ps_hosts "localhost:$P" --worker_hosts "localhost:$W0,localhost:$W1" --steps "$STEPS" --sync $SYNC)
    start "$WORK/$impl.ps.log" $impl "$BENCH/train.py" "${args[@]}" --job_name ps
    ps=$LAST
    wait_line "$WORK/$impl.ps.log" ready $ps
    start "$WORK/$impl.w0.log" $impl "$BENCH/train.py" "${args[@]}" --job_name worker --task_index 0
    w0=$LAST
    wait_line "$WORK/$impl.w0.log" "graph built" $w0
    start "$WORK/$impl.w1.log" $impl "$BENCH/train.py" "${args[@]}" --job_name worker --task_index 1
    w1=$LAST
    # The figure is printed inside the session; TF1's chief with SyncReplicasOptimizer then
    # spends MonitoredSession's 120 s stop grace period closing (its queue runner blocked),
    # so each process gets 10 s to exit once the figure is out, and is killed after that.
    wait_line "$WORK/$impl.w0.log" per1000_s $w0 300 || { echo "$impl chief failed"; exit 1; }
    stop $w0 10
    rc0=$RC
    stop $w1 10     # with SyncReplicasOptimizer the last one may wait for a token forever
    rc1=$RC
    kill $ps 2>/dev/null || true; wait $ps 2>/dev/null || true
    eval "${impl}_$rep=$(field per1000_s "$WORK/$impl.w0.log")"
    echo "  rep $rep $impl: $(field per1000_s "$WORK/$impl.w0.log") s per 1000 global steps, last batch loss" \
         "$(field last_loss "$WORK/$impl.w0.log"); $(grep -h 'local steps' "$WORK/$impl.w0.log" "$WORK/$impl.w1.log" |
         sed 's/ in .*//' | tr '\n' ';') exit $rc0/$rc1"
  done
done
python3 - "$MODE" "$NUM" "$TARGET" $(for ((r = 1; r <= REPS; r++)); do eval "echo \$tfsh_$r \$tf_$r"; done) <<'PY'
import sys
mode, num, target = sys.argv[1], sys.argv[2], float(sys.argv[3])
v = list(map(float, sys.argv[4:]))
tfsh, tf = min(v[0::2]), min(v[1::2])
ok = tf / tfsh >= target
print("  best: tfsh %.2f s, TF %.2f s per 1000 global steps: tfsh/TF = %.2f, tfsh %.2fx faster (target >= %gx): %s" % (
    tfsh, tf, tfsh / tf, tf / tfsh, target, "MET" if ok else "MISSED"))
print("SUMMARY train_%s | %.2f s | %.2f s | %.2f | | >=%gx faster | %s" % (
    mode, tfsh, tf, tfsh / tf, target, "MET" if ok else "MISSED"))
PY
