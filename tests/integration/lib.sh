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
  local d
  for d in "$PORT_DIR"/*/; do
    [ -e "$d$$" ] && rm -f "$d$$" && rmdir "$d" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT

# N free TCP ports on 127.0.0.1. They come from below the kernel's ephemeral range
# (/proc/sys/net/ipv4/ip_local_port_range starts at 32768), so no outgoing connection of
# another test can take one between our check and the bind; each is reserved by an atomic
# mkdir under $PORT_DIR, holding a file named after this test's pid, until the test exits
# (a reservation whose test is gone is stale), so parallel tests never share a port.
PORT_DIR=${TMPDIR:-/tmp}/tfsh-test-ports
free_ports() {
  python3 - "$1" "$PORT_DIR" "$$" <<'PY'
import os, random, socket, sys, time
n, root, owner = int(sys.argv[1]), sys.argv[2], sys.argv[3]
os.makedirs(root, exist_ok=True)
def alive(pid):
    try:
        os.kill(int(pid), 0)
        return True
    except (OSError, ValueError):
        return False
got = []
while len(got) < n:
    port = random.randrange(20000, 32000)
    mark = os.path.join(root, str(port))
    try:
        os.mkdir(mark)
    except FileExistsError:
        try:
            owners = os.listdir(mark)   # empty for a moment while its test writes it
            if (owners and not any(alive(p) for p in owners)) or \
                    (not owners and time.time() - os.stat(mark).st_mtime > 60):
                for p in os.listdir(mark):
                    os.unlink(os.path.join(mark, p))
                os.rmdir(mark)
        except OSError:
            pass
        continue
    open(os.path.join(mark, owner), "w").close()
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        got.append(port)
    except OSError:
        os.unlink(os.path.join(mark, owner))
        os.rmdir(mark)
    finally:
        s.close()
print(" ".join(map(str, got)))
PY
}

# hold_port PORT: another process listens on 127.0.0.1:PORT until this test ends (killed
# by pid; it gives up by itself after 120 s), and nothing it inherits outlives it.
hold_port() {
  python3 -c "
import signal, socket
signal.alarm(120)
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $1)); s.listen(1)
print('bound', flush=True)
signal.pause()" >"$WORK/holder.log" 2>&1 </dev/null &
  PIDS+=($!)
  HOLDER=$!
  wait_for "$WORK/holder.log" bound
}

# start_task NAME ARGS...: `tfsh server ARGS` in the background, log in $WORK/NAME.log.
start_task() {
  local name=$1
  shift
  start_tfsh "$name" server "$@"
}

# start_tfsh NAME ARGS...: `tfsh ARGS` (a script, a server) in the background, log in
# $WORK/NAME.log, pid in PID_NAME, killed at exit.
start_tfsh() {
  local name=$1
  shift
  "$TFSH" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  eval "PID_$name=$!"
}

# wait_exit PID SECONDS: its exit status, or 124 after SECONDS (then killed).
wait_exit() {
  local i
  for ((i = 0; i < $2 * 50; i++)); do
    kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
    sleep 0.02
  done
  kill -9 "$1" 2>/dev/null
  return 124
}

# wait_for FILE PATTERN [SECONDS]: until FILE contains PATTERN (polls, bounded).
# fake_tf_master VAR EXCHANGE [DIE_AT]: a stand-in TensorFlow master replaying EXCHANGE
# (fake_tf_master.py, run by tfsh with python3-grpcio) on a free port, which goes in VAR,
# once it serves; stopped at exit. Skips the test (77) without grpcio.
fake_tf_master() {
  "$TFSH" -c "import grpc" 2>/dev/null || { echo "SKIP: no python3-grpcio for the fake TF master"; exit 77; }
  local port
  read -r port <<<"$(free_ports 1)"
  printf -v "$1" %s "$port"
  "$TFSH" "$TFSH_SRC/tests/integration/fake_tf_master.py" "$port" "$2" ${3:+"$3"} >"$WORK/master_$port.log" 2>&1 </dev/null &
  PIDS+=($!)
  wait_for "$WORK/master_$port.log" serving
}

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

# probe ARGS...: `tfsh probe ARGS` and its exit status, with the ms column as MS and runs
# of spaces squeezed (column widths follow the addresses), for word-for-word checks.
probe() {
  "$TFSH" probe "$@" >"$WORK/probe.out" 2>&1
  echo "exit $?" >>"$WORK/probe.out"
  sed -E 's/  +/ /g; s/ [0-9]+\.[0-9] / MS /' "$WORK/probe.out"
}
