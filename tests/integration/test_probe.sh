#!/usr/bin/env bash
# tfsh probe: one row per task and the verdict, for each way a TF task can be missing: a
# port nobody listens on, a host that does not resolve, a port another program holds
# (silent, a tfsh server, a gRPC server without TF's WorkerService), a server that answers
# as another task, and answers that are not a GetStatusResponse. The answering servers are
# tests/integration/fake_tf_worker.py replaying the bytes real TF 2.21 servers sent
# (tests/data/tf_grpc); test_probe_tf.sh does the same against real TF servers.
. "$(dirname "$0")/lib.sh"
D=$TFSH_SRC/tests/data/tf_grpc
"$TFSH" -c "import grpc" 2>/dev/null || { echo "SKIP: no python3-grpcio for the fake TF servers"; exit 77; }
read -r P0 W0 W1 W2 W3 W4 W5 W6 <<<"$(free_ports 8)"
fake() {   # fake PORT MODE [HEX]
  "$TFSH" "$TFSH_SRC/tests/integration/fake_tf_worker.py" "$@" >"$WORK/fake_$1.log" 2>&1 </dev/null &
  PIDS+=($!)
  wait_for "$WORK/fake_$1.log" serving
}
fake "$P0" replay "$D/get_status_ps_0.hex"
fake "$W0" replay "$D/get_status_worker_0.hex"
fake "$W1" replay "$D/get_status_worker_1.hex"

check "every task answers" \
"task address state ms devices / what answered
/job:ps/replica:0/task:0 localhost:$P0 answers MS CPU:0
/job:worker/replica:0/task:0 localhost:$W0 answers MS CPU:0
/job:worker/replica:0/task:1 localhost:$W1 answers MS CPU:0
verdict: all 3 tasks answer as themselves; CreateSession would find every one
exit 0" "$(probe "{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}")"

check "a task that never started" \
"task address state ms devices / what answered
/job:ps/replica:0/task:0 localhost:$P0 answers MS CPU:0
/job:worker/replica:0/task:0 localhost:$W0 answers MS CPU:0
/job:worker/replica:0/task:1 localhost:$W2 refused MS nothing listens on the port
verdict: CreateSession would wait for ever for /job:worker/replica:0/task:1
 /job:worker/replica:0/task:1 (localhost:$W2): refused, nothing listens on the port; the task never started or has died: start it, tf.train.Server(cluster, job_name='worker', task_index=1)
exit 1" "$(probe "ps|localhost:$P0,worker|localhost:$W0;localhost:$W2")"

check "two workers swapped" \
"task address state ms devices / what answered
/job:worker/replica:0/task:0 localhost:$W1 other task MS as /job:worker/replica:0/task:1: CPU:0
/job:worker/replica:0/task:1 localhost:$W0 other task MS as /job:worker/replica:0/task:0: CPU:0
verdict: 2 addresses of the spec answer as another task: the cluster's processes were not all given this spec
 /job:worker/replica:0/task:0 (localhost:$W1): answers as /job:worker/replica:0/task:1; that server was given another task_index or spec: restart it with job_name='worker', task_index=0, or fix the spec
 /job:worker/replica:0/task:1 (localhost:$W0): answers as /job:worker/replica:0/task:0; that server was given another task_index or spec: restart it with job_name='worker', task_index=1, or fix the spec
exit 1" "$(probe --worker_hosts "localhost:$W1,localhost:$W0")"

# Ports held by something else: a silent listener, a tfsh server, a gRPC server without
# TF's service, one that answers garbage; and a host that does not resolve.
hold_port "$W2"
start_task zmq --cluster "{\"worker\": [\"localhost:$W3\"]}" --job worker --task 0
wait_for "$WORK/zmq.log" "serving on"
fake "$W4" nomethod
fake "$W5" garbage
start=$(date +%s%N)
out=$(probe --timeout 700 "{\"worker\": [\"localhost:$W2\", \"localhost:$W3\", \"localhost:$W4\", \"localhost:$W5\", \"nosuch.invalid:$W0\"]}")
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "ports other programs hold" \
"task address state ms devices / what answered
/job:worker/replica:0/task:0 localhost:$W2 silent MS accepts connections but GetStatus had no answer
/job:worker/replica:0/task:1 localhost:$W3 not gRPC MS a ZeroMQ peer: a tfsh server (attach with tfsh's own protocol), not a TF one
/job:worker/replica:0/task:2 localhost:$W4 not TF MS a gRPC server without TensorFlow's WorkerService.GetStatus (Method not found!)
/job:worker/replica:0/task:3 localhost:$W5 bad reply MS GetStatus answered with 3 bytes that are not a GetStatusResponse
/job:worker/replica:0/task:4 nosuch.invalid:$W0 no host MS host 'nosuch.invalid' does not resolve (Name or service not known)
verdict: CreateSession would wait for ever for /job:worker/replica:0/task:0, /job:worker/replica:0/task:1, /job:worker/replica:0/task:2, /job:worker/replica:0/task:3, /job:worker/replica:0/task:4
 /job:worker/replica:0/task:0 (localhost:$W2): silent, accepts connections but GetStatus had no answer; a server that accepts but does not answer: a stuck or overloaded task, or another program on the port
 /job:worker/replica:0/task:1 (localhost:$W3): not gRPC, a ZeroMQ peer: a tfsh server (attach with tfsh's own protocol), not a TF one; another program holds the port: fix this task's address in the spec, or stop what holds it
 /job:worker/replica:0/task:2 (localhost:$W4): not TF, a gRPC server without TensorFlow's WorkerService.GetStatus (Method not found!); another program holds the port: fix this task's address in the spec, or stop what holds it
 /job:worker/replica:0/task:3 (localhost:$W5): bad reply, GetStatus answered with 3 bytes that are not a GetStatusResponse; another program holds the port: fix this task's address in the spec, or stop what holds it
 /job:worker/replica:0/task:4 (nosuch.invalid:$W0): no host, host 'nosuch.invalid' does not resolve (Name or service not known); fix the host name in the spec
exit 1" "$out"
check "bounded by --timeout" "ok" "$([ "$ms" -lt 2500 ] && echo ok || echo "took $ms ms")"

check "a bad spec" "tfsh probe: cluster spec: invalid JSON at line 1 column 24: ']' expected near end of file
exit 2" "$(probe '{"ps": ["localhost:2222"')"
check "a bad timeout" "tfsh probe: --timeout wants milliseconds from 1 to 600000, not 'soon'
exit 2" "$(probe --timeout soon "ps|localhost:$P0")"
check "neither spec nor file" "tfsh probe: 'nofile' is neither a cluster spec nor a readable file
exit 2" "$(probe nofile)"
echo "{\"cluster\": {\"worker\": [\"localhost:$W0\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}" >"$WORK/tf_config.json"
check "a TF_CONFIG file" \
"task address state ms devices / what answered
/job:worker/replica:0/task:0 localhost:$W0 answers MS CPU:0
verdict: the task answers as itself; CreateSession would find it
exit 0" "$(probe "$WORK/tf_config.json")"

# the same from the shell: %probe
out=$(timeout 60 python3 "$TFSH_SRC/tests/integration/pty_drive.py" "$TFSH" \
  "%probe ps|localhost:$P0,worker|localhost:$W0;localhost:$W6 --timeout 500" "%probe" 2>&1 | tr -d '\r')
check "%probe: the rows" "yes" \
  "$(echo "$out" | grep -qE "^/job:worker/replica:0/task:1 +localhost:$W6 +refused " && echo yes || echo no)"
check "%probe alone: the usage" "yes" \
  "$(echo "$out" | grep -q '^%probe SPEC \[--timeout MS\]: give the cluster' && echo yes || echo no)"
[ "$FAILS" = 0 ] || echo "$out" | tail -20
finish
