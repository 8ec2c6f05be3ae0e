#!/usr/bin/env bash
# tfsh lint: everything checkable before launch, one line per problem with its fix.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 <<<"$(free_ports 3)"
lint() { "$TFSH" lint "$@" 2>&1; echo "exit $?"; }

check "a good spec" "ok: 3 tasks in 2 jobs
exit 0" "$(lint "{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}")"
check "legacy form" "ok: 3 tasks in 2 jobs
exit 0" "$(lint "ps|localhost:$P0,worker|localhost:$W0;localhost:$W1")"
check "--ps_hosts/--worker_hosts" "ok: 3 tasks in 2 jobs
exit 0" "$(lint --ps_hosts "localhost:$P0" --worker_hosts "localhost:$W0,localhost:$W1")"
check "invalid JSON" "tfsh lint: cluster spec: invalid JSON at line 1 column 24: ']' expected near end of file
exit 1" "$(lint '{"ps": ["localhost:2222"')"
check "every problem, one line each" \
"tfsh lint: cluster spec: /job:worker/task:1 has address 'localhost'; expected \"host:port\"
tfsh lint: cluster spec: 'wo-rker' is not a valid job name (letters, digits and _)
tfsh lint: cluster spec: /job:ps/task:0 and /job:worker/task:2 both have address localhost:$P0; give each task its own host:port
tfsh lint: /job:worker/task:3: host 'nosuch.invalid' does not resolve (Name or service not known); fix the name, add it to /etc/hosts, or give an IP address
exit 1" \
  "$(lint "{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost\", \"localhost:$P0\", \"nosuch.invalid:$W1\"], \"wo-rker\": [\"localhost:1\"]}")"
check "one address through two names" \
"tfsh lint: /job:ps/task:0 (localhost:$P0) and /job:worker/task:0 (127.0.0.1:$P0) are the same address 127.0.0.1:$P0; give each task its own host:port
exit 1" "$(lint "ps|localhost:$P0,worker|127.0.0.1:$P0")"
check "port 0" "tfsh lint: /job:ps/task:0: address localhost:0 has port 0; give a fixed port (the other tasks must know it)
exit 1" "$(lint 'ps|localhost:0')"

# A local port another process holds.
hold_port "$W0"
check "a port in use on this machine" \
"tfsh lint: /job:worker/task:0: port $W0 on localhost (127.0.0.1) is already in use on this machine; stop the process that holds it, or give this task another port
exit 1" "$(lint "{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}")"
kill "$HOLDER"; wait "$HOLDER" 2>/dev/null

# TF_CONFIG: the task must be in its cluster.
CL="\"cluster\": {\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
check "TF_CONFIG ok" "ok: 3 tasks in 2 jobs
exit 0" "$(TF_CONFIG="{$CL, \"task\": {\"type\": \"worker\", \"index\": 1}}" lint --tf-config)"
check "TF_CONFIG task index out of range" \
"tfsh lint: TF_CONFIG: task index 2 is out of range for job 'worker', which has 2 tasks (0..1) (fix \"task\": {\"index\": ...})
exit 1" "$(TF_CONFIG="{$CL, \"task\": {\"type\": \"worker\", \"index\": 2}}" lint --tf-config)"
check "TF_CONFIG task type not a job" \
"tfsh lint: TF_CONFIG: task type 'wroker' is not a job of the cluster; its jobs are: ps, worker (fix \"task\": {\"type\": ...})
exit 1" "$(lint --tf-config "{$CL, \"task\": {\"type\": \"wroker\", \"index\": 0}}")"
check "TF_CONFIG without a cluster" \
"tfsh lint: TF_CONFIG: no \"cluster\" object; add \"cluster\": {\"worker\": [\"host:port\"], ...}
exit 1" "$(lint --tf-config '{"task": {"type": "worker", "index": 0}}')"
check "TF_CONFIG unset" "tfsh lint: --tf-config: TF_CONFIG is not set (or give the JSON after --tf-config)
exit 2" "$(env -u TF_CONFIG "$TFSH" lint --tf-config 2>&1; echo "exit $?")"
echo "{$CL, \"task\": {\"type\": \"ps\", \"index\": 0}}" >"$WORK/tf_config.json"
check "a file holding a TF_CONFIG" "ok: 3 tasks in 2 jobs
exit 0" "$(lint "$WORK/tf_config.json")"
finish
