# Shared by the integration tests: free ports, tasks started in the background and killed
# by pid at exit, bounded waits that poll a condition (never a bare sleep).
set -u
TFSH=${TFSH:?set TFSH to the tfsh binary}
TFSH_SRC=${TFSH_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
WORK=$(mktemp -d)
PIDS=()
FAILS=0
CHECKS=0
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.02; done
    kill -KILL "$p" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# N free TCP ports on 127.0.0.1 (bound and released by the kernel's port-0 allocator).
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# start_task NAME ARGS...: `tfsh server ARGS` in the background, log in $WORK/NAME.log.
start_task() {
  local name=$1
  shift
  "$TFSH" server "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  eval "PID_$name=$!"
}

# wait_for FILE PATTERN [SECONDS]: until FILE contains PATTERN (polls, bounded).
wait_for() {
  local file=$1 pat=$2 secs=${3:-10} i
  for ((i = 0; i < secs * 50; i++)); do
    grep -q -- "$pat" "$file" 2>/dev/null && return 0
    sleep 0.02
  done
  echo "timed out waiting for '$pat' in $file:" >&2
  cat "$file" >&2
  return 1
}

check() {   # check NAME EXPECTED ACTUAL
  CHECKS=$((CHECKS + 1))
  if [ "$2" == "$3" ]; then
    echo "ok   $1"
  else
    echo "FAIL $1"
    echo "  expected: $2"
    echo "  actual:   $3"
    FAILS=$((FAILS + 1))
  fi
}

finish() {
  echo "$((CHECKS - FAILS)) passed, $FAILS failed"
  exit $((FAILS > 0))
}
