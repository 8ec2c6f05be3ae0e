#!/usr/bin/env bash
# %cluster up --hosts: tasks started over ssh. This host has no second machine for the
# test, so ssh/ssh (a stand-in put on PATH) runs each remote command here with sh -c; what
# is tested is tfsh's side: the command it sends, the tfsh found "there" (or the error
# when it is missing), logs, stopping on %down and on the shell's exit, a cluster key sent
# on stdin (never on a command line), and a host that does not answer named within the
# ssh ConnectTimeout.
. "$(dirname "$0")/lib.sh"
export HOME=$WORK XDG_RUNTIME_DIR=$WORK
mkdir -p "$WORK/bin"
ln -s "$TFSH" "$WORK/bin/tfsh"
export PATH=$TFSH_SRC/tests/integration/ssh:$WORK/bin:$PATH FAKE_SSH_LOG=$WORK/ssh.log TFSH_SSH_CONNECT_TIMEOUT=2
read -r P <<<"$(free_ports 1)"

# Up on two "hosts", a step trained through them, logs, down.
out=$(timeout 60 "$TFSH" -c "
import tfsh, tensorflow as tf
spec = tfsh.cluster_up('--hosts localhost,127.0.0.1 ps=1 worker=2 --port-base $P')
print('nodes', [(t['task'], t['address']) for t in tfsh.tasks()])
cluster = tf.train.ClusterSpec(spec)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device='/job:worker/task:1')):
    v = tf.Variable(1.0)
    inc = v.assign_add(2.0)
with tf.Session(tfsh.target('worker/1')) as sess:
    sess.run(tf.global_variables_initializer())
    print('step', sess.run(inc))
print('log', [l for l in tfsh.logs('worker/1', 4).split(chr(10)) if 'serving' in l])
tfsh.cluster()
tfsh.down()
print('attach', [r[2] for r in tfsh.attach(spec, quiet=True)])
" 2>&1)
check "tasks round-robin over the hosts, ports from --port-base" \
  "nodes [('/job:ps/task:0', 'localhost:$P'), ('/job:worker/task:0', '127.0.0.1:$((P + 1))'), ('/job:worker/task:1', 'localhost:$((P + 2))')]" \
  "$(echo "$out" | grep '^nodes')"
check "a step runs on the ssh cluster" "step 3.0" "$(echo "$out" | grep '^step')"
check "each task's log comes back" "log ['tfsh: /job:worker/replica:0/task:1 serving on tcp://127.0.0.1:$((P + 2))']" \
  "$(echo "$out" | grep '^log \[')"
check "%cluster shows the node" "yes" \
  "$(echo "$out" | grep -qE "^/job:worker/task:0 +127.0.0.1:$((P + 1)) +127.0.0.1 +[0-9]+ +running" && echo yes || echo no)"
check "ssh ran tfsh found on the host" "yes" \
  "$(grep -q "^127.0.0.1 .*T=\$(command -v tfsh).*exec \"\$T\" server --cluster '{\"ps\": {\"0\": \"localhost:$P\"}" "$WORK/ssh.log" && echo yes || echo no)"
check "down stops them" "attach ['no answer', 'no answer', 'no answer']" "$(echo "$out" | grep '^attach')"

# The shell's exit stops them (stdin closes, the remote server sees EOF).
timeout 60 "$TFSH" -c "import tfsh; tfsh.cluster_up('--hosts localhost ps=1 worker=1 --port-base $P')" >/dev/null 2>&1
check "the shell's exit stops them" "['no answer', 'no answer']" \
  "$(timeout 30 "$TFSH" -c "
import tfsh
print([r[2] for r in tfsh.attach({'ps': ['localhost:$P'], 'worker': ['localhost:$((P + 1))']}, quiet=True)])" 2>&1)"

# A cluster key reaches the tasks on their stdin, not on a command line.
"$TFSH" keygen "$WORK/cluster.key" >/dev/null
secret=$(grep -v '^#' "$WORK/cluster.key" | tail -1 | cut -c1-20)
: >"$WORK/ssh.log"
out=$(TFSH_CLUSTER_KEY=$WORK/cluster.key timeout 60 "$TFSH" -c "
import tfsh, tensorflow as tf
tfsh.cluster_up('--hosts localhost ps=1 worker=1 --port-base $P')
with tf.Session(tfsh.target('worker/0')) as sess:
    print('keyed', sess.run(tf.constant(2.0) * 3.0))
" 2>&1)
check "a keyed cluster over ssh" "keyed 6.0" "$(echo "$out" | grep '^keyed')"
check "the command line has no key" "yes" \
  "$(grep -q -- '--cluster-key -' "$WORK/ssh.log" && ! grep -qF -- "$secret" "$WORK/ssh.log" && echo yes || echo no)"

# tfsh missing on a host: said, with the host.
line=$(FAKE_SSH_BARE=127.0.0.1 timeout 60 "$TFSH" -c "import tfsh; tfsh.cluster_up('--hosts localhost,127.0.0.1 worker=2 --port-base $P')" 2>&1 | tail -1)
check "tfsh missing on a host" "yes" \
  "$(echo "$line" | grep -qE "^RuntimeError: cluster up --hosts: /job:worker/task:1 \(127.0.0.1:$((P + 1))\) did not come up: it exited\(127\): tfsh: tfsh is not found on .* \(PATH=/usr/bin:/bin\): install tfsh there, or give %cluster up --tfsh PATH" && echo yes || echo "no: $line")"

# A host that does not answer: named within the ssh ConnectTimeout (2 s here).
start=$(cut -d' ' -f1 /proc/uptime)
line=$(FAKE_SSH_DOWN=deadhost timeout 60 "$TFSH" -c "import tfsh; tfsh.cluster_up('--hosts localhost,deadhost worker=2 --port-base $P')" 2>&1 | tail -1)
secs=$(awk -v a="$start" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%d", b - a }')
check "an unreachable host is named" \
  "RuntimeError: cluster up --hosts: host deadhost did not answer within 2 s (ssh -o ConnectTimeout=2), so /job:worker/task:1 did not start" \
  "$(echo "$line" | sed 's/ (log: [^)]*)$//')"
check "within the timeout" "yes" "$([ "$secs" -lt 8 ] && echo yes || echo "no ($secs s)")"
check "no fake ssh left behind" "0" "$(pgrep -fc 'sleep 1000' || true)"
finish
