#!/usr/bin/env bash
# A real one-node Slurm: munged and Debian's slurmctld and slurmd, started here with a
# generated munge key and slurm.conf (this host the only node, declared with 8 CPUs whatever
# it has (config_overrides) so three tasks fit on a small machine; state, spool, pid files and
# the munge socket under $WORK; no cgroups: proctrack/linuxproc, task/none). Then
# `srun -n 3 tfsh server --slurm` forms a cluster that trains a step, and `%cluster up
# --slurm` + `%down` (and a script's exit) leave no job behind (squeue shows none). The
# stand-in version of these, with tfsh's side in detail, is test_slurm.sh. Skipped, saying
# why, where a daemon cannot start here (not root, no Slurm installed, container limits).
. "$(dirname "$0")/lib.sh"
export HOME=$WORK XDG_RUNTIME_DIR=$WORK
skip() { echo "SKIP: $*"; exit 77; }
DAEMONS=()
daemons_down() {   # slurmd, slurmctld, munged: SIGTERM, up to 10 s each to finish, then lib's cleanup
  local p
  for p in "${DAEMONS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${DAEMONS[@]}"; do wait_exit "$p" 10 >/dev/null 2>&1; done
}
trap 'daemons_down; cleanup' EXIT
[ "$(id -u)" = 0 ] || skip "needs root (slurmd runs tasks as their user; SlurmUser=root)"
for d in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd; do
  [ -x $d ] || skip "no $d (apt-get install munge slurmctld slurmd slurm-client)"
done
for c in srun salloc scancel squeue sinfo; do command -v $c >/dev/null || skip "no $c (apt-get install slurm-client)"; done
NODE=$(hostname -s)
read -r CTLD_PORT SLURMD_PORT P Q <<<"$(free_ports 4)"

# munge: a key of our own, its socket under $WORK
dd if=/dev/urandom of="$WORK/munge.key" bs=1024 count=1 status=none
chmod 0400 "$WORK/munge.key"
/usr/sbin/munged -F --force --key-file="$WORK/munge.key" --socket="$WORK/munge.sock" \
  --pid-file="$WORK/munged.pid" --seed-file="$WORK/munged.seed" --log-file="$WORK/munged.log" \
  >"$WORK/munged.out" 2>&1 &
PIDS+=($!)
MUNGED=$!
DAEMONS=($MUNGED)
for _ in $(seq 500); do [ -S "$WORK/munge.sock" ] && break; kill -0 $MUNGED 2>/dev/null || break; sleep 0.02; done
[ -S "$WORK/munge.sock" ] || skip "munged did not start: $(cat "$WORK/munged.out" "$WORK/munged.log" 2>/dev/null | tail -3 | tr '\n' ' ')"

mkdir -p "$WORK/state" "$WORK/spool"
export SLURM_CONF=$WORK/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=tfshtest
SlurmctldHost=$NODE
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$WORK/munge.sock
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmdParameters=config_overrides
NodeName=$NODE CPUs=8 RealMemory=500 State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$WORK/slurmctld.out" 2>&1 &
PIDS+=($!)
CTLD=$!
/usr/sbin/slurmd -D -f "$SLURM_CONF" >"$WORK/slurmd.out" 2>&1 &
PIDS+=($!)
SLURMD=$!
DAEMONS=($SLURMD $CTLD $MUNGED)
why() { echo "$(tail -3 "$WORK/slurmctld.out" "$WORK/slurmctld.log" "$WORK/slurmd.out" "$WORK/slurmd.log" 2>/dev/null | grep -v '^==>' | tr '\n' ' ')"; }
state=
for _ in $(seq 1500); do   # up to 30 s
  kill -0 $CTLD 2>/dev/null || skip "slurmctld did not start: $(why)"
  kill -0 $SLURMD 2>/dev/null || skip "slurmd did not start: $(why)"
  state=$(timeout 5 sinfo -h -n "$NODE" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.02
done
[ "$state" = idle ] || skip "the node did not come up idle within 30 s (sinfo: '$state'): $(why)"
check "the node is idle" "idle" "$state"

# srun: three tasks form a cluster from Slurm's environment, and a client trains a step.
srun -n 3 --immediate=20 --label -J tfsh-srun "$TFSH" server --slurm ps=1 worker=2 --port-base "$P" >"$WORK/srun.log" 2>&1 &
SRUN=$!
PIDS+=($SRUN)
for r in 0 1 2; do wait_for "$WORK/srun.log" "^$r: tfsh: .* serving on" 30 || break; done
jid=$(timeout 5 squeue -h -n tfsh-srun -o %i)
check "srun: rank 0 is the ps" \
  "0: tfsh: slurm job $jid rank 0 of 3 on $NODE: /job:ps/task:0; cluster ps/0=$NODE:$P worker/0=$NODE:$((P + 1)) worker/1=$NODE:$((P + 2))" \
  "$(grep '^0: tfsh: slurm' "$WORK/srun.log")"
cat >"$WORK/train.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec({"ps": ["$NODE:$P"], "worker": ["$NODE:$((P + 1))", "$NODE:$((P + 2))"]})
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
    w = tf.Variable(1.0)
    loss = tf.square(w * 3.0 - 6.0)
    step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
with tf.Session("grpc://$NODE:$((P + 1))") as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(step)
    print("trained %.2f" % sess.run(w), w.device)
PY
check "a step trains on the srun cluster" "trained 1.18 /job:ps/task:0" "$(timeout 60 "$TFSH" "$WORK/train.py" 2>&1 | tail -1)"
[ -n "$jid" ] && scancel "$jid"
wait_exit "$SRUN" 20 >/dev/null
check "scancel ends the job step" "gone" "$(kill -0 "$SRUN" 2>/dev/null && echo running || echo gone)"
for _ in $(seq 500); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.02; done
check "and the job" "" "$(squeue -h 2>&1)"

# %cluster up --slurm at the prompt, %down releases the allocation
out=$(TFSH_CLUSTER_UP_TIMEOUT=60 timeout 120 python3 "$TFSH_SRC/tests/integration/pty_drive.py" "$TFSH" \
  "%cluster up --slurm ps=1 worker=2 --partition debug --time 0:10:00 --port-base $Q" "%cluster" "%down" 2>&1)
job=$(echo "$out" | grep -o '^cluster up: 3 tasks in slurm job [0-9]*' | grep -o '[0-9]*$')
check "%cluster up --slurm" "yes" "$([ -n "$job" ] && echo yes || echo no)"
check "%cluster shows each task on the node" "3" \
  "$(echo "$out" | grep -cE "^/job:(ps|worker)/task:[01] +$NODE:[0-9]+ +$NODE +[0-9]+ +running")"
check "%down releases the allocation" "slurm job $job released (scancel)" "$(echo "$out" | grep '^slurm job .* released')"
for _ in $(seq 500); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.02; done
check "squeue shows no job after %down" "" "$(squeue -h 2>&1)"

# a script that ends without %down releases its allocation too
out2=$(TFSH_CLUSTER_UP_TIMEOUT=60 timeout 90 "$TFSH" -c "
import tfsh
tfsh.cluster_up('--slurm worker=2 --port-base $Q')
print('up', len(tfsh.tasks()))" 2>&1)
check "a script's cluster came up" "up 2" "$(echo "$out2" | grep '^up')"
for _ in $(seq 500); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.02; done
check "squeue shows no job after the script's exit" "" "$(squeue -h 2>&1)"
[ $FAILS -gt 0 ] && { echo "--- srun:"; cat "$WORK/srun.log"; echo "--- the shell wrote:"; echo "$out"; echo "$out2"; echo "--- slurmctld:"; tail -15 "$WORK/slurmctld.log"; echo "--- slurmd:"; tail -15 "$WORK/slurmd.log"; }
finish
