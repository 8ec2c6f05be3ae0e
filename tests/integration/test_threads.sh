#!/usr/bin/env bash
# Kernel threads (man tfsh, THREADS): tasks of one host share the CPUs they may use by
# default, so a local cluster does not oversubscribe them; a task pinned to one CPU runs
# one; ConfigProto's figures (here the server flags) win; a bad figure is refused with the
# flag and the range. The CPU line says which kernels and threads, and why.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 S0 <<<"$(free_ports 4)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"127.0.0.1:$W1\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
start_task w1 --cluster "$SPEC" --job worker --task 1
wait_for "$WORK/ps.log" "serving on"
wait_for "$WORK/w1.log" "serving on"
cores=$(nproc)
share=$((cores / 3)); [ "$share" -ge 1 ] || share=1
plural=s; [ "$share" = 1 ] && plural=
want="tfsh: kernels use $share intra-op thread$plural; inter-op: no cap"
check "3 tasks on one host share its $cores cores" "$want" "$(grep "kernels use" "$WORK/ps.log")"
check "127.0.0.1 and localhost are one host" "$want" "$(grep "kernels use" "$WORK/w1.log")"

ONE="{\"worker\": [\"localhost:$S0\"]}"
start_task solo --cluster "$ONE" --job worker --task 0 --intra-op-threads 3 --inter-op-threads 2
wait_for "$WORK/solo.log" "serving on"
check "flags win" "tfsh: kernels use 3 intra-op threads; inter-op: 2" "$(grep "kernels use" "$WORK/solo.log")"

# The CPU line (op_cpu_summary): the kernel set and why, the threads and why.
check "the CPU line says why" "1" "$(grep -c "^tfsh: CPU .*, BLIS kernels .* (.*)\(, oneDNN.s sgemm for [^,]*\)\?, $share intra-op thread$plural (.*shared by 3 tasks on this host)$" "$WORK/ps.log")"
check "the flags' figure, and that they set it" "1" "$(grep -c "3 intra-op threads (intra_op_parallelism_threads 3)$" "$WORK/solo.log")"
# %tasks says the same line for each task it can reach.
cat >"$WORK/tasks.py" <<PY
import tensorflow as tf
with tf.Session("grpc://localhost:$S0") as s:
    tf._views_magic("tasks", "")
PY
check "%tasks: the task's CPU line" "1" \
  "$(timeout 60 "$TFSH" "$WORK/tasks.py" 2>&1 | grep -c "^/job:worker/replica:0/task:0: CPU .*, BLIS kernels .*, 3 intra-op threads (intra_op_parallelism_threads 3)$")"

# Pinned to one CPU (taskset, Slurm's binding, a cpuset): one thread, whatever the host has.
if command -v taskset >/dev/null; then
  read -r S1 <<<"$(free_ports 1)"
  PIN="{\"worker\": [\"localhost:$S1\"]}"
  taskset -c 0 "$TFSH" server --cluster "$PIN" --job worker --task 0 >"$WORK/pin.log" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/pin.log" "serving on"
  check "taskset -c 0: one thread" "tfsh: kernels use 1 intra-op thread; inter-op: no cap" "$(grep "kernels use" "$WORK/pin.log")"
  check "taskset -c 0: the affinity says why" "1" "$(grep -c "1 intra-op thread (affinity 1 of [0-9]* CPUs)$" "$WORK/pin.log")"
fi

out=$(timeout 10 "$TFSH" server --cluster "$ONE" --job worker --task 0 --intra-op-threads 0 2>&1)
check "a bad figure is refused" "tfsh server: --intra-op-threads must be a number from 1 to 4096, got '0'" "$out"

# A session's ConfigProto sets the process's figures, and a step still runs with them.
cat >"$WORK/cfg.py" <<'PY'
import tensorflow as tf
a = tf.random_normal([300, 300], seed=1)
cfg = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
with tf.Session(config=cfg) as s:
    print(s.run(tf.matmul(a, a)).shape)
PY
check "a step with ConfigProto's threads" "(300, 300)" "$(timeout 60 "$TFSH" "$WORK/cfg.py" 2>&1)"
finish
