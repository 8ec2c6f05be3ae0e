#!/usr/bin/env bash
# %cluster up --hosts against a real sshd: OpenSSH's sshd runs in a network namespace of
# its own (a second "host", joined to this one by a veth pair; its 10.124.x address exists
# only there and on the veth), with a host key and a user key generated into $WORK. A real
# ssh (a wrapper on PATH adds -F with a generated ssh_config: the key, no known_hosts) logs
# in as root, starts tfsh there; a step trains from this namespace; %down ends the remote
# tasks. Skipped, saying why, where namespaces or sshd are not available here.
. "$(dirname "$0")/lib.sh"
export HOME=$WORK XDG_RUNTIME_DIR=$WORK
NS=tfshssh$$
VETH=tsh$$
ns_cleanup() { ip netns del "$NS" 2>/dev/null; ip link del "$VETH" 2>/dev/null; }
trap 'cleanup; ns_cleanup' EXIT
skip() { echo "SKIP: $*"; exit 77; }
[ -x /usr/sbin/sshd ] || skip "no /usr/sbin/sshd (apt-get install openssh-server)"
REAL_SSH=$(command -v ssh) || skip "no ssh client (apt-get install openssh-client)"
command -v ssh-keygen >/dev/null || skip "no ssh-keygen"
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces; sshd logs in as root)"
err=$(ip netns add "$NS" 2>&1) || skip "network namespaces are not permitted here (ip netns add: $err)"
HOST=10.124.$(($$ % 250)).2
ME=10.124.$(($$ % 250)).1
set -e
ip link add "$VETH" type veth peer name eth0 netns "$NS"
ip addr add "$ME/24" dev "$VETH"
ip link set "$VETH" up
ip -n "$NS" addr add "$HOST/24" dev eth0
ip -n "$NS" link set eth0 up
ip -n "$NS" link set lo up
set +e

ssh-keygen -q -t ed25519 -N '' -f "$WORK/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$WORK/user_key"
cp "$WORK/user_key.pub" "$WORK/authorized_keys"
mkdir -p /run/sshd   # sshd's privilege separation directory
cat >"$WORK/sshd_config" <<CONF
ListenAddress $HOST
Port 22
HostKey $WORK/host_key
AuthorizedKeysFile $WORK/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $WORK/sshd.pid
CONF
ip netns exec "$NS" /usr/sbin/sshd -D -e -f "$WORK/sshd_config" >"$WORK/sshd.log" 2>&1 &
PIDS+=($!)
SSHD=$!
wait_for "$WORK/sshd.log" "Server listening on $HOST" 10 >/dev/null 2>&1 ||
  skip "sshd did not start: $(tail -3 "$WORK/sshd.log" | tr '\n' ' ')"

cat >"$WORK/ssh_config" <<CONF
Host *
  IdentityFile $WORK/user_key
  IdentitiesOnly yes
  User root
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  GlobalKnownHostsFile /dev/null
  LogLevel ERROR
CONF
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexec %s -F %s "$@"\n' "$REAL_SSH" "$WORK/ssh_config" >"$WORK/bin/ssh"
chmod +x "$WORK/bin/ssh"
export PATH=$WORK/bin:$PATH
check "real ssh logs in to the namespace" "$HOST" \
  "$(timeout 20 ssh -o BatchMode=yes "$HOST" "ip -o -4 addr show dev eth0" 2>&1 | grep -o "$HOST")"

# non-loopback addresses need a cluster key: it travels on each ssh's stdin
"$TFSH" keygen "$WORK/cluster.key" >/dev/null 2>&1 || { echo "tfsh keygen failed"; exit 1; }
export TFSH_CLUSTER_KEY=$WORK/cluster.key TFSH_SSH_CONNECT_TIMEOUT=10
P=2222
out=$(timeout 90 "$TFSH" -c "
import tfsh, tensorflow as tf
spec = tfsh.cluster_up('--hosts $HOST ps=1 worker=1 --port-base $P --tfsh $(readlink -f "$TFSH")')
print('nodes', [(t['task'], t['address']) for t in tfsh.tasks()])
cluster = tf.train.ClusterSpec(spec)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device='/job:worker/task:0')):
    w = tf.Variable(1.0)
    loss = tf.square(w * 3.0 - 6.0)
    step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
with tf.Session(tfsh.target('worker/0')) as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(step)
    print('trained %.2f' % sess.run(w), w.device)
print('log', [l for l in tfsh.logs('ps/0', 4).split(chr(10)) if 'serving' in l])
tfsh.down()
print('down')
" 2>&1)
check "the tasks are on the sshd's host" "nodes [('/job:ps/task:0', '$HOST:$P'), ('/job:worker/task:0', '$HOST:$((P + 1))')]" \
  "$(echo "$out" | grep '^nodes')"
check "a step trains on the cluster over real ssh" "trained 1.18 /job:ps/task:0" "$(echo "$out" | grep '^trained')"
check "the remote task's log comes back" "log ['tfsh: /job:ps/replica:0/task:0 serving on tcp://$HOST:$P']" \
  "$(echo "$out" | grep '^log \[')"
check "%down returns" "down" "$(echo "$out" | grep '^down$')"
# the remote tasks are children of sshd in the namespace: none is left once %down returns
# (bounded poll: sshd reaps its session a moment after the channel closes)
left=1
for _ in $(seq 250); do
  left=$(pgrep -P "$SSHD" | wc -l)
  [ "$left" = 0 ] && ! pgrep -f "server --cluster .*$HOST:$P" >/dev/null && break
  sleep 0.02
done
check "no remote task or ssh session left" "0 none" \
  "$left $(pgrep -f "server --cluster .*$HOST:$P" >/dev/null && echo some || echo none)"
[ $FAILS -gt 0 ] && { echo "--- what the shell wrote:"; echo "$out"; echo "--- sshd:"; tail -20 "$WORK/sshd.log"; }
finish
