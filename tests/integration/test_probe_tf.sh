#!/usr/bin/env bash
# tfsh probe against real TensorFlow servers (TF_PYTHON: a Python with tensorflow; skipped
# without): 1 ps + 2 workers all answer; with worker 1 stopped, probe names it within 2 s;
# a port another program holds is named; specs that disagree show as another task.
. "$(dirname "$0")/lib.sh"
PY=${TF_PYTHON:-}
[ -n "$PY" ] && "$PY" -c "import tensorflow" 2>/dev/null || { echo "SKIP: set TF_PYTHON to a Python with TensorFlow"; exit 77; }
read -r P0 W0 W1 W2 <<<"$(free_ports 4)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
tf_task() {   # tf_task NAME JOB INDEX
  "$PY" "$TFSH_SRC/tests/integration/tf_server.py" "$SPEC" "$2" "$3" >"$WORK/$1.log" 2>&1 </dev/null &
  PIDS+=($!)
  eval "PID_$1=$!"
}
tf_task ps ps 0
tf_task w0 worker 0
tf_task w1 worker 1
for t in ps w0 w1; do wait_for "$WORK/$t.log" serving 90; done
check "all three answer" \
"task address state ms devices / what answered
/job:ps/replica:0/task:0 localhost:$P0 answers MS CPU:0
/job:worker/replica:0/task:0 localhost:$W0 answers MS CPU:0
/job:worker/replica:0/task:1 localhost:$W1 answers MS CPU:0
verdict: all 3 tasks answer as themselves; CreateSession would find every one
exit 0" "$(probe "$SPEC")"

check "a spec that swaps the workers" \
"task address state ms devices / what answered
/job:worker/replica:0/task:0 localhost:$W1 other task MS as /job:worker/replica:0/task:1: CPU:0
/job:worker/replica:0/task:1 localhost:$W0 other task MS as /job:worker/replica:0/task:0: CPU:0
verdict: 2 addresses of the spec answer as another task: the cluster's processes were not all given this spec
 /job:worker/replica:0/task:0 (localhost:$W1): answers as /job:worker/replica:0/task:1; that server was given another task_index or spec: restart it with job_name='worker', task_index=0, or fix the spec
 /job:worker/replica:0/task:1 (localhost:$W0): answers as /job:worker/replica:0/task:0; that server was given another task_index or spec: restart it with job_name='worker', task_index=1, or fix the spec
exit 1" "$(probe --worker_hosts "localhost:$W1,localhost:$W0")"

kill -KILL "$PID_w1"
wait "$PID_w1" 2>/dev/null
hold_port "$W2"
start=$(date +%s%N)
out=$(probe "{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\", \"localhost:$W2\"]}")
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "a stopped worker and a port held by another program" \
"task address state ms devices / what answered
/job:ps/replica:0/task:0 localhost:$P0 answers MS CPU:0
/job:worker/replica:0/task:0 localhost:$W0 answers MS CPU:0
/job:worker/replica:0/task:1 localhost:$W1 refused MS nothing listens on the port
/job:worker/replica:0/task:2 localhost:$W2 silent MS accepts connections but GetStatus had no answer
verdict: CreateSession would wait for ever for /job:worker/replica:0/task:1, /job:worker/replica:0/task:2
 /job:worker/replica:0/task:1 (localhost:$W1): refused, nothing listens on the port; the task never started or has died: start it, tf.train.Server(cluster, job_name='worker', task_index=1)
 /job:worker/replica:0/task:2 (localhost:$W2): silent, accepts connections but GetStatus had no answer; a server that accepts but does not answer: a stuck or overloaded task, or another program on the port
exit 1" "$out"
check "within 2 s" "ok" "$([ "$ms" -lt 2000 ] && echo ok || echo "took $ms ms")"
finish
