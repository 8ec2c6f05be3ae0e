#!/usr/bin/env bash
# The live view under a real pseudo-terminal (tmux): during a long step on two
# tasks the screen shows a line per device with a bar, ops done / total and bytes; the
# script's own prints stay readable above it; the step folds into a one-line summary; a
# piped run prints no escape codes; %live off turns it off. Polls the screen (bounded).
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; exit 77; }
read -r P0 W0 <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
start_task w0 --cluster "$SPEC" --job worker --task 0
sock="$WORK/tmux.sock"
trap 'tmux -S "$sock" kill-server 2>/dev/null; cleanup' EXIT

# A step of a few seconds: chains of big matmuls on the worker, then the ps, then the worker.
cat >"$WORK/long.py" <<PY
import time
import tensorflow as tf
n = 800
# how fast is one matmul here? size the chain so that the step takes about 4 s
tf._views_magic("live", "off")
with tf.Graph().as_default():
    y = tf.random_normal([n, n], seed=1) * 0.01
    for i in range(10):
        y = tf.matmul(y, y) + 1.0
    with tf.Session() as probe:
        probe.run(y)
        t0 = time.time()
        probe.run(y)
        per = (time.time() - t0) / 10
k = int(4.0 / 3 / max(per, 1e-4)) + 1
# a probe slowed by other load sizes the chain short: at least 120 matmuls of 800^3 (over a
# second at any speed this machine has shown), at most 1200
k = min(max(k, 40), 400)
x = tf.random_normal([n, n], seed=1) * 0.01
for i in range(3 * k):
    with tf.device("/job:%s/task:0" % ("ps" if (i // k) % 2 else "worker")):
        x = tf.matmul(x, x) + 1.0
with tf.device("/job:worker/task:0"):
    total = tf.reduce_sum(x)
sess = tf.Session("grpc://localhost:$W0")
tf._views_magic("live", "on")
print("script says hello before the step")
t0 = time.time()
sess.run(total)
print("step done:", time.time() - t0 > 0.5)
print("script says bye")
PY

screen() { tmux -S "$sock" capture-pane -t live -p -S -100; }
wait_screen() {   # wait_screen PATTERN [TRIES]: grep -E the screen, 0.05 s apart
  local i
  for ((i = 0; i < ${2:-400}; i++)); do
    screen | grep -qE -- "$1" && return 0
    sleep 0.05
  done
  return 1
}

tmux -S "$sock" new-session -d -s live -x 160 -y 40 \
  "env -u NO_COLOR TERM=xterm '$TFSH' '$WORK/long.py'; echo __EXITED__ \$?; sleep 60"
ok=0
wait_screen '^/job:worker/replica:0/task:0/device:CPU:0 \[[#.]{20}\] +[0-9]+/[0-9]+ ' 600 && ok=1
snap=$(screen)
[ $ok = 1 ] || { echo "screen:"; echo "$snap"; }
check "a live line for the worker's device" "1" "$ok"
check "a live line for the ps's device" "1" \
  "$(echo "$snap" | grep -cE '^/job:ps/replica:0/task:0/device:CPU:0 +\[[#.]{20}\] +[0-9]+/[0-9]+ .*sent .* recv ')"
check "the script's print stays above the live lines" "1" \
  "$(echo "$snap" | grep -c '^script says hello before the step$')"
wait_screen '__EXITED__' 1200
snap=$(screen)
check "the step ran" "1" "$(echo "$snap" | grep -c '^step done: True$')"
check "folded into a one-line summary" "1" \
  "$(echo "$snap" | grep -cE '^step [0-9.]+ s: 2 devices, [0-9]+/[0-9]+ ops, sent .*, recv ')"
check "no live lines left after the step" "0" "$(echo "$snap" | grep -cE '^/job:.*\[[#.]{20}\]')"
check "prints after the step are readable" "1" "$(echo "$snap" | grep -c '^script says bye$')"
check "exit status" "1" "$(echo "$snap" | grep -c '__EXITED__ 0')"

# The same script piped: nothing live, no escape codes.
timeout 120 "$TFSH" "$WORK/long.py" >"$WORK/piped.txt" 2>&1
check "piped: no escape codes" "0" "$(grep -c $'\033' "$WORK/piped.txt")"
check "piped: no live lines or summary" "0" "$(grep -cE '^/job:|^step [0-9.]+ s:' "$WORK/piped.txt")"
# NO_COLOR on a terminal: no live view either.
tmux -S "$sock" new-session -d -s nocolor -x 160 -y 40 \
  "env NO_COLOR=1 TERM=xterm '$TFSH' '$WORK/long.py'; echo __EXITED__ \$?; sleep 60"
for ((i = 0; i < 1200; i++)); do
  tmux -S "$sock" capture-pane -t nocolor -p | grep -q __EXITED__ && break
  sleep 0.05
done
nc=$(tmux -S "$sock" capture-pane -t nocolor -p -S -100)
check "NO_COLOR: the step ran" "1" "$(echo "$nc" | grep -c '^step done: True$')"
check "NO_COLOR: no live lines or summary" "0" "$(echo "$nc" | grep -cE '^/job:|^step [0-9.]+ s:')"
# A loop of short steps: between steps, a line with the step count and steps/s and a line
# per device with its busy share; the script's prints stay readable; when the loop ends,
# one summary line. The loop runs until the test has seen its lines (a file appears), 30 s
# at most, then prints while they are on the screen. (What the view costs is measured by scripts/bench/live_view_bench.sh.)
cat >"$WORK/loop.py" <<PY
import os, time
import tensorflow as tf
with tf.device("/job:ps/task:0"):
    a = tf.Variable(tf.random_normal([200, 200], seed=1))
with tf.device("/job:worker/task:0"):
    b = tf.reduce_sum(tf.matmul(a, a))
sess = tf.Session("grpc://localhost:$W0")
sess.run(tf.global_variables_initializer())
t0 = time.time()
while not os.path.exists("$WORK/seen") and time.time() - t0 < 30:
    sess.run(b)
for i in range(10):   # the loop's lines are on the screen: a print goes above them
    sess.run(b)
    if i == 4:
        print("loop says hello", flush=True)
print("loop over:", os.path.exists("$WORK/seen"))
PY
# tfsh starts once the pane is there (a key press): output in a new pane's first
# milliseconds can land before tmux has settled it, which moves the cursor under the view.
tmux -S "$sock" new-session -d -s loop -x 160 -y 40 \
  "read _; env -u NO_COLOR TERM=xterm '$TFSH' '$WORK/loop.py'; echo __EXITED__ \$?; sleep 60"
tmux -S "$sock" send-keys -t loop Enter
lscreen() { tmux -S "$sock" capture-pane -t loop -p -S -100; }
seen=0
for ((i = 0; i < 600; i++)); do
  snap=$(lscreen)
  if echo "$snap" | grep -qE '^loop: step [0-9]+  [0-9.]+ steps/s' &&
     echo "$snap" | grep -qE '^/job:ps/replica:0/task:0/device:CPU:0 +\[[#.]{20}\] busy +[0-9]+%' &&
     echo "$snap" | grep -qE '^/job:worker/replica:0/task:0/device:CPU:0 +\[[#.]{20}\] busy +[0-9]+%'; then
    seen=1
    break
  fi
  sleep 0.05
done
touch "$WORK/seen"
[ $seen = 1 ] || { echo "screen:"; echo "$snap"; }
check "loop: steps/s and a busy line per device between steps" "1" "$seen"
for ((i = 0; i < 600; i++)); do lscreen | grep -q __EXITED__ && break; sleep 0.05; done
snap=$(lscreen)
check "loop: the script's print is readable" "1" "$(echo "$snap" | grep -c '^loop says hello$')"
check "loop: ran until the lines were seen" "1" "$(echo "$snap" | grep -c '^loop over: True$')"
check "loop: no loop lines left" "0" "$(echo "$snap" | grep -cE '^loop: step|busy +[0-9]+%  [0-9]+ ops/step')"
check "loop: one summary line" "1" \
  "$(echo "$snap" | grep -cE '^loop: [0-9]+ steps in [0-9.]+ s, [0-9.]+ steps/s; busy /job:(ps|worker)/task:0/CPU:0 [0-9]+%, /job:(ps|worker)/task:0/CPU:0 [0-9]+%$')"
finish
