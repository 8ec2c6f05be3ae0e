#!/usr/bin/env bash
# Both TF1 trainer shapes, unchanged but for the model (scripts/examples/dist_mlp_supervisor.tfs:
# tf.app.flags + Supervisor.managed_session; dist_mlp_mts.tfs: argparse +
# MonitoredTrainingSession + StopAtStepHook + checkpoint_dir), on 1 ps + 2 workers: an MLP on
# Fashion-MNIST read through input_data, 500 global steps of batch 100 (both workers share
# them). How the two workers interleave varies from run to run: at 300 steps 8 runs gave
# 0.766-0.818 (too close to the bar), at 500 steps 6 runs gave 0.816-0.825; the bar is 0.75. The
# issue's full size (2000 steps, >= 0.84) is scripts/bench/dist_train.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/need_fashion.sh"
for shape in supervisor mts; do
  read -r P W0 W1 <<<"$(free_ports 3)"
  script=$TFSH_SRC/scripts/examples/dist_mlp_$shape.tfs
  args=(--ps_hosts="localhost:$P" --worker_hosts="localhost:$W0,localhost:$W1" --train_steps=500
        --data_dir="$data" --print_every=50)
  if [ $shape = supervisor ]; then args+=(--logdir="$WORK/$shape"); else args+=(--checkpoint_dir="$WORK/$shape"); fi
  "$TFSH" "$script" --job_name=ps --task_index=0 "${args[@]}" >"$WORK/$shape-ps.log" 2>&1 &
  ps=$!
  PIDS+=($ps)
  "$TFSH" "$script" --job_name=worker --task_index=1 "${args[@]}" >"$WORK/$shape-w1.log" 2>&1 &
  w1=$!
  PIDS+=($w1)
  "$TFSH" "$script" --job_name=worker --task_index=0 "${args[@]}" >"$WORK/$shape-w0.log" 2>&1 &
  w0=$!
  PIDS+=($w0)
  rc0=0; rc1=0
  wait_exit $w0 120 || rc0=$?
  wait_exit $w1 60 || rc1=$?
  check "$shape: both workers finish" "0 0" "$rc0 $rc1"
  check "$shape: the ps is still in join()" "yes" "$(kill -0 $ps 2>/dev/null && echo yes)"
  check "$shape: both workers trained" "2" "$(cat "$WORK/$shape-w0.log" "$WORK/$shape-w1.log" | grep -c 'local steps, global step')"
  acc=$(sed -n 's/^test accuracy \([0-9.]*\)$/\1/p' "$WORK/$shape-w0.log")
  check "$shape: the chief's test accuracy >= 0.75 (got '$acc')" "yes" \
    "$([ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a >= 0.75) }' && echo yes)"
  check "$shape: a checkpoint at the last step" "yes" \
    "$(grep -qE 'model.ckpt-(500|501)"' "$WORK/$shape/checkpoint" 2>/dev/null && echo yes)"
  kill $ps
done
[ $FAILS -gt 0 ] && tail -n 12 "$WORK"/*.log
finish
