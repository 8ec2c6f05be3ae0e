#!/usr/bin/env bash
# `tfsh -u FILE` is accepted as python -u, and PYTHONUNBUFFERED too: a run killed while it
# waits keeps what it printed before (tfsh's output is always unbuffered, to a file or a
# pipe as well as to a terminal), stdout and stderr both.
. "$(dirname "$0")/lib.sh"
cat >"$WORK/slow.py" <<'PY'
import sys, time
print("step 1 done", sys.argv[1:])
sys.stderr.write("a warning\n")
print("waiting", end="")
print(" for ever")
time.sleep(120)
PY
run_killed() {   # run_killed NAME ENV... -- ARGS...: start, wait for its line, SIGKILL it
  local name=$1
  shift
  env "$@" "$TFSH" ${TFSH_ARGS:-} "$WORK/slow.py" x >"$WORK/$name.log" 2>"$WORK/$name.err" </dev/null &
  local pid=$!
  PIDS+=($pid)
  wait_for "$WORK/$name.log" "for ever" 30
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
}
TFSH_ARGS=-u run_killed u TFSH_X=1
check "-u: the killed run kept its output" "step 1 done ['x']
waiting for ever" "$(cat "$WORK/u.log")"
check "-u: and its stderr" "a warning" "$(cat "$WORK/u.err")"
run_killed env PYTHONUNBUFFERED=1
check "PYTHONUNBUFFERED: the killed run kept its output" "step 1 done ['x']
waiting for ever" "$(cat "$WORK/env.log")"
run_killed plain TFSH_X=1
check "no flag: the killed run kept its output too" "step 1 done ['x']
waiting for ever" "$(cat "$WORK/plain.log")"
check "-u -c: sys.argv as python -u -c gives" "['-c', 'a']" "$("$TFSH" -u -c 'import sys; print(sys.argv)' a 2>&1)"
check "-u in --help" yes "$("$TFSH" --help | grep -q '^  -u  ' && echo yes)"
finish
