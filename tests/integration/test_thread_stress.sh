#!/usr/bin/env bash
# Threads under stress, the patterns TF1 programs live by (also run by scripts/stress.sh,
# and under TSan by scripts/test --tsan): a Coordinator stopping QueueRunners that block on
# a full queue while consumers block on an empty one; Ctrl-C during a step while queue
# threads run (only the main thread's step ends, the session and the threads live on); a
# task killed while its peers' threads send (every thread fails fast, naming the task).
. "$(dirname "$0")/lib.sh"
D=$TFSH_SRC/tests/integration
check "Coordinator stop while QueueRunners block (20 rounds)" \
  "rounds 20 consumers [('OutOfRange', 40)] in time True" "$(timeout 120 "$TFSH" "$D/coord_stop.py" 20 2>&1)"

start_tfsh ctrlc "$D/ctrl_c_queues.py"
wait_for "$WORK/ctrlc.log" blocking 30
# Ctrl-C until the step is interrupted: the first may land before sess.run blocks (then the
# script's own try still sees KeyboardInterrupt there, or it raises before: both are fine).
for _ in $(seq 100); do
  grep -q interrupted "$WORK/ctrlc.log" && break
  kill -INT "$PID_ctrlc" 2>/dev/null
  sleep 0.05
done
wait_exit "$PID_ctrlc" 30
check "Ctrl-C during a step with queue threads alive: exit" 0 $?
check "Ctrl-C: only the main thread's step ends" "blocking
interrupted
next step True threads alive 3
stopped 0" "$(cat "$WORK/ctrlc.log")"

read -r W0 W1 <<<"$(free_ports 2)"
SPEC="{\"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
start_task w0 --cluster "$SPEC" --job worker --task 0
start_task w1 --cluster "$SPEC" --job worker --task 1
wait_for "$WORK/w0.log" "serving on"
wait_for "$WORK/w1.log" "serving on"
start_tfsh sender "$D/kill_while_sending.py" "grpc://localhost:$W0" 4 "$WORK/killed_at"
wait_for "$WORK/sender.log" running 60
python3 -c "import time; print(time.time())" >"$WORK/killed_at.tmp"
kill -9 "$PID_w1"
mv "$WORK/killed_at.tmp" "$WORK/killed_at"
wait_exit "$PID_sender" 60
check "a task killed while peers' threads send: exit" 0 $?
check "every thread fails fast, naming the task" "running
hung 0
errors [('UnavailableError', True)]
within 2 s True" "$(cat "$WORK/sender.log")"
check "task 0 lives on" 0 "$(kill -0 "$PID_w0" 2>/dev/null; echo $?)"

# The same where task 0 reads a pushed tensor from task 1's shared-memory outbox only after
# task 1 died (a test delay before the read): the step fails naming task 1, not task 0.
read -r V0 V1 <<<"$(free_ports 2)"
SPEC="{\"worker\": [\"localhost:$V0\", \"localhost:$V1\"]}"
TFSH_TEST_SHM_DELAY_MS=300 start_task v0 --cluster "$SPEC" --job worker --task 0
start_task v1 --cluster "$SPEC" --job worker --task 1
wait_for "$WORK/v0.log" "serving on"
wait_for "$WORK/v1.log" "serving on"
start_tfsh late "$D/kill_while_sending.py" "grpc://localhost:$V0" 2
wait_for "$WORK/late.log" running 60
kill -9 "$PID_v1"
wait_exit "$PID_late" 60
check "a push read after its sender died: the step names the sender" "running
hung 0
errors [('UnavailableError', True)]" "$(head -3 "$WORK/late.log")"
finish
