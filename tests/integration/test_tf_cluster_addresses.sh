#!/usr/bin/env bash
# tf.train.ClusterSpec takes any address string, as TF's does; a Server checks them when it
# starts and fails with TF's error classes and words (InvalidArgumentError for an address
# without a port, UnknownError "Could not start gRPC server" for a port another process
# holds), tfsh's words about the task and the fix kept after them. The lines compared are
# what real TensorFlow printed for the same script (tfsh's own words cut off with " (").
. "$(dirname "$0")/lib.sh"
read -r P0 P1 <<<"$(free_ports 2)"
hold_port "$P1"

cat >"$WORK/addr.py" <<PY
import tensorflow as tf
c = tf.train.ClusterSpec({"job": ["host:port"], "w": ["localhost"]})
print(c.as_dict(), c.job_tasks("job"), c.task_address("w", 0), c.num_tasks("job"))
cases = [({"local": ["localhost"]}, "local"),
         ({"local": ["localhost:port"]}, "local"),
         ({"local": ["localhost:$P0"], "w": ["nohost"]}, "local"),
         ({"local": ["localhost:$P1"]}, "local")]
for spec, job in cases:
    try:
        tf.train.Server(tf.train.ClusterSpec(spec), job_name=job, task_index=0)
        print("started")
    except tf.errors.OpError as e:
        print(type(e).__name__, isinstance(e, tf.errors.InvalidArgumentError),
              isinstance(e, tf.errors.UnknownError), str(e).split(" (tfsh: ")[0].split(": /job:")[0])
        print("  tfsh:", str(e))
PY
timeout 60 "$TFSH" "$WORK/addr.py" >"$WORK/addr.out" 2>&1
check "TF's classes and words (real TF printed these)" \
"{'job': ['host:port'], 'w': ['localhost']} ['host:port'] localhost 1
InvalidArgumentError True False Could not parse port for local server from \"localhost\".
InvalidArgumentError True False Could not parse port for local server from \"localhost:port\".
InvalidArgumentError True False Could not interpret \"nohost\" as a host-port pair.
UnknownError False True Could not start gRPC server" "$(grep -v '^  tfsh:' "$WORK/addr.out")"
check "tfsh's words: the task without a port" \
  "  tfsh: Could not parse port for local server from \"localhost\". (tfsh: this task, /job:local/task:0, has address 'localhost' in the cluster spec; expected \"host:port\")" \
  "$(grep '^  tfsh:' "$WORK/addr.out" | sed -n 1p)"
check "tfsh's words: another task's address" \
  "  tfsh: Could not interpret \"nohost\" as a host-port pair. (tfsh: /job:w/task:0 has address 'nohost' in the cluster spec; expected \"host:port\")" \
  "$(grep '^  tfsh:' "$WORK/addr.out" | sed -n 3p)"
check "tfsh's words: the port taken" \
  "  tfsh: Could not start gRPC server: /job:local/replica:0/task:0: cannot listen on tcp://127.0.0.1:$P1: address already in use (another process holds $P1: stop it, or give this task another port in the cluster spec)" \
  "$(grep '^  tfsh:' "$WORK/addr.out" | sed -n 4p)"
finish
