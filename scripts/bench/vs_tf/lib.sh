# Sourced by the tfsh-vs-TensorFlow benchmarks (scripts/bench/vs_tf/*.sh). Each workload is
# one script (*.py here) that runs unchanged under tfsh (`build/tfsh x.py`) and under
# python3 + real TensorFlow (the TF1 shim in scripts/bench/tf1/ on PYTHONPATH). Tasks are
# separate processes on 127.0.0.1; every one is killed by pid at exit; every wait is bounded.
#   TFSH      tfsh binary (default build/tfsh)    TF_PY  python3 with tensorflow (default:
#   REPS      paired repetitions (default 3)             scripts/bench/tf_venv.sh's venv)
. "$(dirname "${BASH_SOURCE[0]}")/../../ports.sh"
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BENCH=$SRC/scripts/bench/vs_tf
BUILD=${BUILD:-$SRC/build}
TFSH=${TFSH:-$BUILD/tfsh}
NET_BENCH=${NET_BENCH:-$BUILD/net_bench}
REPS=${REPS:-3}
TF_PY=${TF_PY:-$(bash "$SRC/scripts/bench/tf_venv.sh")}
WORK=$(mktemp -d /tmp/vs_tf.XXXXXX)
PIDS=()
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2} PYTHONDONTWRITEBYTECODE=1
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start LOG IMPL SCRIPT ARGS...: run a workload script under tfsh or tf in the background, output to LOG; pid in PIDS
# (and in $LAST). A simple command, so that $! is the program itself, not a subshell.
start() {
  local log=$1 impl=$2
  shift 2
  if [ "$impl" = tfsh ]; then
    "$TFSH" "$@" >"$log" 2>&1 &
  else
    PYTHONPATH=$SRC/scripts/bench/tf1 "$TF_PY" "$@" >"$log" 2>&1 &
  fi
  LAST=$!
  PIDS+=("$LAST")
}

# wait_line LOG PATTERN PID [SECONDS (120)]: poll LOG until PATTERN appears; fail at once if
# PID exits first, or after SECONDS.
wait_line() {
  local log=$1 pat=$2 pid=$3 secs=${4:-120} i
  for ((i = 0; i < secs * 50; i++)); do
    grep -q -- "$pat" "$log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { echo "process $pid exited before '$pat':" >&2; tail -n 20 "$log" >&2; return 1; }
    sleep 0.02
  done
  echo "timed out after ${secs}s waiting for '$pat' in $log" >&2
  tail -n 20 "$log" >&2
  return 1
}

# stop PID [SECONDS (10)]: wait for PID to exit by itself, at most SECONDS, then kill it.
# Sets RC to its exit status ("killed" when it had to be).
stop() {
  local pid=$1 secs=${2:-10} i
  RC=killed
  for ((i = 0; i < secs * 50; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      RC=0
      wait "$pid" 2>/dev/null || RC=$?
      return 0
    fi
    sleep 0.02
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# impls_for REP: the order of the pair in repetition REP (alternating who goes first).
impls_for() { if (($1 % 2)); then echo "tfsh tf"; else echo "tf tfsh"; fi; }

# raw_rtt / raw_mbps: raw ZeroMQ REQ/REP over tcp loopback (net_bench, built with tfsh).
raw_rtt() { "$NET_BENCH" "${1:-5000}" 1 | awk '/tcp loopback  round trip/ {print $6}'; }
raw_mbps() { "$NET_BENCH" 200 "${1:-10}" | awk '/tcp loopback  64 MiB/ {print $6}'; }

# field NAME LOG: the value after "NAME " on the last line of LOG that starts with it.
field() { awk -v k="$1" '$1 == k {v = $2} END {print v}' "$2"; }

# run_bounded SECONDS LOG IMPL SCRIPT ARGS...: run in the background, wait at most SECONDS
# for it to exit (killed after that); fails, with the log's tail, unless it exited 0.
run_bounded() {
  local secs=$1 log=$2
  shift 2
  start "$log" "$@"
  stop "$LAST" "$secs"
  [ "$RC" = 0 ] && return 0
  echo "$1 $(basename "$2") failed (exit $RC):" >&2
  tail -n 20 "$log" >&2
  return 1
}
