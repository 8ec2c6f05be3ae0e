#!/usr/bin/env bash
# A local cluster from the shell: the tfsh module (scripts, -c) and the magics (the
# interactive shell, driven on a pseudo-terminal): up, list, kill, restart, logs, attach,
# down; a task that cannot come up is named; children die with the shell.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
export HOME=$WORK XDG_RUNTIME_DIR=$WORK
unset XDG_STATE_HOME

cat >"$WORK/ops.py" <<PY
import os, tfsh, tensorflow as tf
spec = tf.train.ClusterSpec($SPEC)
tfsh.cluster_up(spec)
print("tasks", [(t["task"], t["state"]) for t in tfsh.tasks()])
open("$WORK/pids", "w").write(" ".join(str(t["pid"]) for t in tfsh.tasks()))
with tf.device("/job:ps/task:0"):
    v = tf.Variable(5.0, name="v")
with tf.Session(tfsh.target("worker/0")) as sess:
    sess.run(v.initializer)
    sess.run(v.assign_add(1.0))
tfsh.kill("worker:1")
print("after kill", tfsh.tasks()[2]["state"])
tfsh.restart("/job:worker/task:1")
print("after restart", tfsh.tasks()[2]["state"], tfsh.tasks()[2]["pid"] > 0)
print("log", tfsh.logs("ps", 1).strip().split(" serving")[0])
print("attach", [(r[0], r[2].split(" ")[0]) for r in tfsh.attach($SPEC, quiet=True)])
with tf.Session(tfsh.target("/job:worker/task:1")) as sess:
    print("ps state kept", sess.run(v))
tfsh.down("ps")
print("after down", tfsh.tasks()[0]["state"])
print("attach", [(r[0], r[2].split(" ")[0]) for r in tfsh.attach($SPEC, quiet=True)])
try:
    tfsh.kill("chief/0")
except ValueError as e:
    print(e)
PY
out=$(timeout 60 "$TFSH" "$WORK/ops.py" 2>&1)
echo "$out" | grep -q "^cluster up: 3 tasks, logs in $WORK/tfsh-" || { echo "$out"; }
check "up: every task running" \
  "tasks [('/job:ps/task:0', 'running'), ('/job:worker/task:0', 'running'), ('/job:worker/task:1', 'running')]" \
  "$(echo "$out" | grep '^tasks')"
check "kill: SIGKILL" "after kill killed(KILL)" "$(echo "$out" | grep '^after kill')"
check "restart: running again" "after restart running True" "$(echo "$out" | grep '^after restart')"
check "logs: the task's own output" "log tfsh: /job:ps/replica:0/task:0" "$(echo "$out" | grep '^log')"
check "attach: every task answers" \
  "attach [('/job:ps/task:0', 'up'), ('/job:worker/task:0', 'up'), ('/job:worker/task:1', 'up')]" \
  "$(echo "$out" | grep '^attach' | head -1)"
check "variables on the ps outlive a restarted worker" "ps state kept 6.0" "$(echo "$out" | grep '^ps state')"
check "down: SIGTERM, exits 0" "after down exited(0)" "$(echo "$out" | grep '^after down')"
check "attach: a stopped task does not answer" \
  "attach [('/job:ps/task:0', 'no'), ('/job:worker/task:0', 'up'), ('/job:worker/task:1', 'up')]" \
  "$(echo "$out" | grep '^attach' | tail -1)"
check "an unknown task names the tasks" \
  "no task 'chief/0' in the cluster; its tasks are: /job:ps/task:0, /job:worker/task:0, /job:worker/task:1 (write ps/0, worker:1 or /job:ps/task:0)" \
  "$(echo "$out" | tail -1)"
alive=0
for p in $(cat "$WORK/pids"); do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
check "the script's exit stops its tasks" "0" "$alive"
check "and removes their logs" "no" "$(ls -d "$WORK"/tfsh-* 2>/dev/null | head -1 | grep -q . && echo yes || echo no)"

# A task that cannot come up (its port is held): named, with its last log line.
hold_port "$W1"
start=$(date +%s%N)
line=$(timeout 30 "$TFSH" -c "import tfsh; tfsh.cluster_up('$SPEC')" 2>&1 | tail -1)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "a task that does not come up is named" \
  "RuntimeError: cluster up: /job:worker/task:1 (localhost:$W1) did not come up: it exited(1): tfsh server: /job:worker/replica:0/task:1: cannot listen on tcp://127.0.0.1:$W1: address already in use (another process holds $W1: stop it, or give this task another port in the cluster spec)" \
  "$(echo "$line" | sed 's/ (log: [^)]*)$//')"
check "and said promptly" "yes" "$([ "$ms" -lt 5000 ] && echo yes || echo "no ($ms ms)")"
kill "$HOLDER"; wait "$HOLDER" 2>/dev/null

# The shell killed outright: its tasks follow (PR_SET_PDEATHSIG).
"$TFSH" -c "
import os, time, tfsh
tfsh.cluster_up('$SPEC')
open('$WORK/pids2', 'w').write(' '.join(str(t['pid']) for t in tfsh.tasks()))
print('up', flush=True)
for _ in range(600): time.sleep(0.1)" >"$WORK/orphan.log" 2>&1 &
shell=$!
PIDS+=($shell)
wait_for "$WORK/orphan.log" "^up" 30
kill -9 "$shell"
wait "$shell" 2>/dev/null
gone=no
for _ in $(seq 250); do
  alive=0
  for p in $(cat "$WORK/pids2"); do kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ] && alive=1; done
  [ $alive = 0 ] && { gone=yes; break; }
  sleep 0.02
done
check "tasks die with a killed shell" "yes" "$gone"

# The magics, typed at the interactive prompt.
read -r Q0 Q1 <<<"$(free_ports 2)"
out=$(TFSH_CLUSTER_UP_TIMEOUT=60 timeout 200 python3 "$TFSH_SRC/tests/integration/pty_drive.py" "$TFSH" \
  "%cluster up {\"ps\": [\"localhost:$Q0\"], \"worker\": [\"localhost:$Q1\"]}" \
  "%cluster" "%logs ps 1" "%kill worker:0" "%cluster" "%restart worker:0" "%down all" "%cluster attach localhost:$Q0" 2>&1)
check "%cluster up" "cluster up: 2 tasks, logs in $WORK/tfsh-" "$(echo "$out" | grep -o "^cluster up: 2 tasks, logs in $WORK/tfsh-")"
check "%cluster lists the tasks running" "/job:ps/task:0 /job:worker/task:0" \
  "$(echo "$out" | grep -E "^/job:(ps|worker)/task:0 +localhost:[0-9]+ +[0-9]+ +running +[0-9.]+s$" | head -2 | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"
check "%logs" "tfsh: /job:ps/replica:0/task:0 serving on tcp://127.0.0.1:$Q0" "$(echo "$out" | grep "serving on" | head -1)"
check "%kill" "/job:worker/task:0: killed(KILL)" "$(echo "$out" | grep "^/job:worker/task:0: killed" | head -1)"
check "%cluster shows the killed task" "yes" "$(echo "$out" | grep -qE "^/job:worker/task:0 +localhost:$Q1 +[0-9]+ +killed\(KILL\) +-$" && echo yes || echo no)"
check "%restart" "yes" "$(echo "$out" | grep -qE "^/job:worker/task:0: running \(pid [0-9]+\)$" && echo yes || echo no)"
check "%down all" "/job:ps/task:0: exited(0) /job:worker/task:0: exited(0)" \
  "$(echo "$out" | grep -E "^/job:(ps|worker)/task:0: exited" | tr '\n' ' ' | sed 's/ $//')"
check "%cluster attach host:port of a stopped cluster" "yes" \
  "$(echo "$out" | grep -qE "^/job:ps/task:0 +localhost:$Q0 +no answer$" && echo yes || echo no)"
[ $FAILS -gt 0 ] && { echo "--- what the shell wrote:"; echo "$out"; }
finish
