#!/usr/bin/env bash
# Slurm. tf.distribute.cluster_resolver.SlurmClusterResolver (and its tf.contrib name) on
# faked Slurm environments prints what real TensorFlow printed for the same script
# (slurm/resolver.out, from TF 2.21). Then `srun tfsh server --slurm` and `%cluster up
# --slurm`: this host has no Slurm, so slurm/fake/ puts stand-ins for salloc, srun,
# scancel and squeue on PATH that emulate a one-node allocation here (localhost), with the
# environment real srun gives each task. They test tfsh's side (what it runs, what it
# reads back, that %down and the shell's exit release the allocation), not Slurm.
. "$(dirname "$0")/lib.sh"
export HOME=$WORK XDG_RUNTIME_DIR=$WORK
here=$TFSH_SRC/tests/integration/slurm

out=$(timeout 60 "$TFSH" "$here/resolver.py" 2>&1)
check "SlurmClusterResolver answers as TF's does" "$(cat "$here/resolver.out")" "$out"
check "its tf.contrib name" "True" "$(timeout 20 "$TFSH" -c "
import tensorflow as tf
print(tf.contrib.cluster_resolver.SlurmClusterResolver is tf.distribute.cluster_resolver.SlurmClusterResolver)")"

export FAKE_SLURM_DIR=$WORK/slurm PATH=$here/fake:$PATH
mkdir -p "$FAKE_SLURM_DIR"
read -r P <<<"$(free_ports 1)"

# srun inside an allocation: three tasks form a cluster from Slurm's environment, and a
# client trains a step on it.
jid=$(salloc --no-shell --ntasks=3 2>&1 | grep -o '[0-9]*$')
srun --jobid="$jid" --ntasks=3 --label "$TFSH" server --slurm ps=1 worker=2 --port-base "$P" >"$WORK/srun.log" 2>&1 &
srun_pid=$!
PIDS+=($srun_pid)
for r in 0 1 2; do wait_for "$WORK/srun.log" "^$r: tfsh: .* serving on" 30 || break; done
check "srun: rank 0 is the ps" \
  "0: tfsh: slurm job $jid rank 0 of 3 on localhost: /job:ps/task:0; cluster ps/0=localhost:$P worker/0=localhost:$((P + 1)) worker/1=localhost:$((P + 2))" \
  "$(grep '^0: tfsh: slurm' "$WORK/srun.log")"
check "srun: rank 2 is worker 1" "2: tfsh: /job:worker/replica:0/task:1 serving on tcp://127.0.0.1:$((P + 2))" \
  "$(grep '^2: tfsh: .*serving' "$WORK/srun.log")"
cat >"$WORK/train.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec({"ps": ["localhost:$P"], "worker": ["localhost:$((P + 1))", "localhost:$((P + 2))"]})
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
    w = tf.Variable(1.0)
    loss = tf.square(w * 3.0 - 6.0)
    step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
with tf.Session("grpc://localhost:$((P + 1))") as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(step)
    print("trained %.2f" % sess.run(w), w.device)
PY
check "a step trains on the srun cluster" "trained 1.18 /job:ps/task:0" "$(timeout 60 "$TFSH" "$WORK/train.py" 2>&1 | tail -1)"
scancel "$jid"
wait_exit "$srun_pid" 10 >/dev/null
check "scancel ends the step" "0" "$(grep -c serving <(ps -o args= -p "$srun_pid" 2>/dev/null))"

# A rank Slurm placed otherwise than the resolver's layout (srun --distribution=cyclic)
check "a cyclic distribution is refused with the fix" \
  "tfsh server --slurm: Slurm runs rank 1 on nodeB as its local task 0, but the cluster spec (TF's SlurmClusterResolver layout) puts rank 1 at nodeA:8889, local task 1: run srun with --distribution=block (its default)" \
  "$(env SLURM_PROCID=1 SLURM_LOCALID=0 SLURMD_NODENAME=nodeB SLURM_STEP_NUM_TASKS=4 SLURM_STEP_NODELIST=nodeA,nodeB \
      SLURM_STEP_TASKS_PER_NODE='2(x2)' timeout 10 "$TFSH" server --slurm 2>&1)"
check "a malformed node list" "tfsh server --slurm: Invalid hostlist format \"node[01-\": '[' without ']'" \
  "$(env SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_JOB_NODELIST='node[01-' SLURM_TASKS_PER_NODE=1 timeout 10 "$TFSH" server --slurm 2>&1)"

# %cluster up --slurm at the prompt: salloc, srun, the job id and node per task, %down
# releases the allocation.
read -r Q <<<"$(free_ports 1)"
out=$(TFSH_CLUSTER_UP_TIMEOUT=60 timeout 120 python3 "$TFSH_SRC/tests/integration/pty_drive.py" "$TFSH" \
  "%cluster up --slurm ps=1 worker=2 --partition debug --time 0:10:00 --port-base $Q" "%cluster" "%logs worker/1 2" \
  "%kill ps/0" "%down" 2>&1)
job=$(echo "$out" | grep -o '^cluster up: 3 tasks in slurm job [0-9]*' | grep -o '[0-9]*$')
check "%cluster up --slurm" "yes" "$([ -n "$job" ] && echo yes || echo no)"
check "salloc got the partition and time" "--no-shell --job-name=tfsh --ntasks=3 --partition=debug --time=0:10:00" \
  "$(tail -1 "$FAKE_SLURM_DIR/salloc.args")"
check "the ClusterSpec line" "cluster = tf.train.ClusterSpec({\"ps\": [\"localhost:$Q\"], \"worker\": [\"localhost:$((Q + 1))\", \"localhost:$((Q + 2))\"]})" \
  "$(echo "$out" | grep '^cluster = ')"
check "%cluster shows the Slurm job" "yes" "$(echo "$out" | grep -q "^slurm job $job (srun pid [0-9]*; %down releases it)$" && echo yes || echo no)"
check "%cluster shows each task's node" "3" "$(echo "$out" | grep -cE "^/job:(ps|worker)/task:[01] +localhost:[0-9]+ +localhost +[0-9]+ +running")"
check "%logs: the task's own lines" "tfsh: /job:worker/replica:0/task:1 serving on tcp://127.0.0.1:$((Q + 2))" \
  "$(echo "$out" | grep -A3 '^>>> %logs' | grep serving)"
check "%kill of one task says why not" "yes" "$(echo "$out" | grep -q '^RuntimeError: the tasks run as one Slurm job step' && echo yes || echo no)"
check "%down releases the allocation" "slurm job $job released (scancel)" "$(echo "$out" | grep '^slurm job .* released')"
check "squeue shows no job" "0" "$(squeue | tail -n +2 | wc -l)"

# A script that ends without %down releases its allocation too; a refused allocation and
# a host without Slurm are said plainly.
out=$(timeout 60 "$TFSH" -c "
import tfsh
tfsh.cluster_up('--slurm worker=2 --port-base $Q')
print('up', len(tfsh.tasks()))" 2>&1)
check "the script's cluster came up" "up 2" "$(echo "$out" | grep '^up')"
check "and its exit released the allocation" "0" "$(squeue | tail -n +2 | wc -l)"
check "a refused allocation" \
  "RuntimeError: cluster up --slurm: salloc gave no allocation: salloc: error: Job submit/allocate failed: Requested node configuration is not available" \
  "$(FAKE_SLURM_DENY=1 timeout 30 "$TFSH" -c "import tfsh; tfsh.cluster_up('--slurm ps=1')" 2>&1 | tail -1)"
check "no Slurm here" \
  "RuntimeError: %cluster up --slurm runs Slurm's salloc, srun and scancel, and salloc is not on PATH (run it on a Slurm login node, or inside an allocation use srun tfsh server --slurm)" \
  "$(mkdir -p "$WORK/nopath" && PATH=$WORK/nopath "$(command -v timeout)" 30 "$TFSH" -c "import tfsh; tfsh.cluster_up('--slurm ps=1')" 2>&1 | tail -1)"
[ $FAILS -gt 0 ] && { echo "--- what the shell wrote:"; echo "$out"; }
finish
