#!/usr/bin/env bash
# The interactive shell under a real pseudo-terminal (tmux): multi-line blocks, Tab
# completion, `name?`, magics, Ctrl-C during a long loop, history across restarts, Ctrl-D.
# Synchronizes by polling the screen (bounded), never by sleeping a fixed time.
set -u
: "${TFSH:?set TFSH to the tfsh binary}"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; exit 77; }

work=$(mktemp -d)
sock="$work/tmux1.sock"
session=repl
export XDG_STATE_HOME="$work/state"
cleanup() {
  for s in "$work"/tmux*.sock; do tmux -S "$s" kill-server 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fails=0

start() {
  tmux -S "$sock" new-session -d -s "$session" -x 120 -y 50 \
    "env XDG_STATE_HOME='$XDG_STATE_HOME' HOME='$work' '$TFSH'; echo __EXITED__ \$?; sleep 60"
  wait_for '>>>' || { echo "FAIL: no prompt"; screen; exit 1; }
}
screen() { tmux -S "$sock" capture-pane -t "$session" -p -S -200; }
# wait_for TEXT [-x]: poll the screen for TEXT (-x: a whole line), up to ~10 s.
wait_for() {
  for _ in $(seq 1 200); do
    screen | grep -qF ${2:-} -- "$1" && return 0
    tmux -S "$sock" has-session -t "$session" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
send() { tmux -S "$sock" send-keys -t "$session" "$@"; }
# Wait until the shell is back at an empty prompt (its last non-empty line is ">>>" after
# `marker` appeared), so keys typed next are not typed ahead of a line still running.
wait_prompt_after() {
  for _ in $(seq 1 200); do
    screen | grep -qF -- "$1" && [ "$(screen | grep -v '^$' | tail -1)" = ">>>" ] && return 0
    sleep 0.05
  done
  return 1
}
check() {   # check NAME TEXT [-x]: TEXT must appear on the screen (-x: as a whole line)
  if wait_for "$2" "${3:-}"; then echo "ok: $1"; else echo "FAIL: $1 (no '$2')"; screen; fails=$((fails + 1)); fi
}

# ~/.editrc is read: a key bound to a string types it
printf 'bind -s ^T "print(1234 * 2)"\n' >"$work/.editrc"
start
send C-t Enter
check "~/.editrc is honoured" '2468' -x
send 'def double(x):' Enter
check "continuation prompt" '...'
send '    return x * 2' Enter Enter
send 'double(21)' Enter
check "multi-line block" '42' -x
send 'values = [1,' Enter '2, 3]' Enter 'sum(values)' Enter
check "open bracket continues" '6' -x
send 'import math' Enter
wait_prompt_after 'import math'
send 'math.sqr' Tab
check "attribute completion" 'math.sqrt'
send '(81)' Enter
check "completed call runs" '9.0' -x
wait_prompt_after '9.0'
send 'dou' Tab
check "name completion" '>>> double'
send C-u "mets = {'loss': 1, 'lr': 2}" Enter
wait_prompt_after "mets = {'loss': 1, 'lr': 2}"   # a Tab typed ahead of the prompt is not completion
send "mets['lo" Tab
check "key completion" ">>> mets['loss"
send C-u "open('$work/sta" Tab
check "file completion" ">>> open('$work/state/"
send C-u 'len?' Enter
check "name? help" 'Return the number of items in a container.'
send '%who' Enter
check "%who" 'double'
send 'import tensorflow as tf' Enter
wait_prompt_after 'import tensorflow as tf'   # nothing typed ahead of a slow import
send 'c = tf.train.ClusterSpec({"ps": ["localhost:1"], "worker": ["localhost:2", "localhost:3"]})' Enter
wait_prompt_after '"localhost:3"]})'
send 'tf.device("/job:w' Tab
check "device string completion: jobs" '>>> tf.device("/job:worker'
send '/task:1/' Tab
check "device string completion: tasks of the cluster" '>>> tf.device("/job:worker/task:1/device:CPU:0'
send C-u
send 'while True: pass' Enter
wait_for 'while True: pass'
send C-c
check "Ctrl-C interrupts a loop" 'KeyboardInterrupt'
send 'print("still" + " alive")' Enter
check "shell survives Ctrl-C" 'still alive' -x
send '1/0' Enter
check "errors print a traceback" 'ZeroDivisionError: division by zero'
send 'marker_for_history = 7' Enter
wait_prompt_after 'marker_for_history = 7'
send C-d
check "Ctrl-D exits 0" '__EXITED__ 0'
tmux -S "$sock" kill-server

# A fresh tmux server on its own socket: the first one may still be exiting, and a client
# that reaches a dying server reports "server exited unexpectedly".
sock="$work/tmux2.sock"
start
send Up
check "history across restarts" '>>> marker_for_history = 7'
send C-u C-d
check "second session exits" '__EXITED__ 0'

# piped stdin: statements run like python, no prompt, no escape codes
out=$(printf 'x = 6\nif x:\n    print(x * 7)\n' | "$TFSH" 2>&1)
if [ "$out" = "42" ]; then echo "ok: piped stdin"; else echo "FAIL: piped stdin: '$out'"; fails=$((fails + 1)); fi
if printf 'x = 1\n' | "$TFSH" | grep -q $'\e'; then echo "FAIL: escape codes on a pipe"; fails=$((fails + 1)); fi

[ "$fails" = 0 ] && echo "all REPL checks passed"
exit $((fails > 0))
