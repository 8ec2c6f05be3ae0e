#!/usr/bin/env bash
# Run TF's r1.15 MNIST tutorials and classic public TF1 distributed training scripts,
# unchanged, under real TensorFlow (shim.py: compat.v1, v2 behaviour off) and under tfsh,
# and print one line per script and implementation: exit status, wall time, the final
# metric the script prints. RESULTS.md holds what this printed last, and where each source
# comes from. Sources are never checked in: fetch them into a directory laid out as
#   SRC/tensorflow/mnist_deep.py              tensorflow/examples/tutorials/mnist/
#   SRC/tensorflow/fully_connected_feed.py    (same)
#   SRC/tensorflow/mnist_with_summaries.py    (same)
#   SRC/tensorflow/mnist_replica.py           tensorflow/tools/dist_test/python/
#   SRC/ischlag/example.py                    ischlag/distributed-tensorflow-example
#   SRC/tmulc18/ssgd.py                       tmulc18/Distributed-TensorFlow-Guide Synchronous-SGD/
#   SRC/tmulc18/DOWNPOUR.py                   (same) DOWNPOUR-Easy/
# (a missing file is skipped). Data: Fashion-MNIST in MNIST's format at $DATA_DIR (default
# /usr/share/datasets/fashion-mnist); nothing is downloaded.
#
#   scripts/tf_oracle/tutorials.sh SRC [NAME...]     NAME: deep feed summaries replica
#                                                    replica_sync ischlag ssgd downpour
# Logs: $OUT (default a new temporary directory). $TF_PYTHON, $TFSH as for run.sh.
# Each run is bounded ($LIMIT seconds, default 900); every process started is killed by pid.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:?usage: tutorials.sh SRC [NAME...]}" && pwd) || exit 2
shift
# shellcheck source=harness_env.sh
. "$here/harness_env.sh"
PIDS=()
# each pid is a timeout(1), which passes the TERM on to the program it runs
trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done' EXIT

# prog IMPL FILE ARGS...: the command line that runs FILE under IMPL (tf or tfsh)
prog() {
  local impl=$1 file=$2
  shift 2
  if [ "$impl" = tf ]; then echo "$py" "$here/shim.py" "$file" "$@"; else echo "$tfsh" "$file" "$@"; fi
}

# start IMPL LOG FILE ARGS...: in the background, in $rundir (a fresh directory when it is
# empty); pid in $last
rundir=
start() {
  local impl=$1 log=$2 file=$3
  shift 3
  local dir=$rundir
  [ -n "$dir" ] || dir=$(mktemp -d "$OUT/run.XXXX")
  # shellcheck disable=SC2046
  (cd "$dir" && exec timeout "$limit" $(prog "$impl" "$file" "$@")) >"$log" 2>&1 </dev/null &
  last=$!
  PIDS+=("$last")
}

# report NAME IMPL RC SECONDS LOG REGEX: one line, with the last line of LOG matching REGEX
report() {
  local metric
  metric=$(grep -E -- "$6" "$5" | tail -1)
  [ "$3" = 0 ] || [ "$3" = 0/0 ] || metric="$metric | $(grep -E 'Error|error|Exception' "$5" | tail -1)"
  printf '%-13s %-5s exit %-3s %7.1fs  %s\n' "$1" "$2" "$3" "$4" "$metric"
}

ports() { python3 -c "import random; print(*random.sample(range(20000, 32000), $1))"; }

# single NAME FILE REGEX ARGS...: one process
single() {
  local name=$1 file=$src/$2 re=$3 impl t0 rc
  shift 3
  [ -f "$file" ] || { echo "$name: no $file, skipped"; return; }
  for impl in tf tfsh; do
    t0=$(date +%s.%N)
    start "$impl" "$OUT/$name.$impl.log" "$file" "$@"
    wait "$last"
    rc=$?
    report "$name" "$impl" "$rc" "$(echo "$(date +%s.%N) - $t0" | bc)" "$OUT/$name.$impl.log" "$re"
  done
}

# cluster NAME FILE REGEX PS_ARGS -- W0_ARGS -- W1_ARGS: a ps and two workers, the ps
# killed once both workers are done; the time is worker 0's. The three share a working
# directory, as tasks started from one shell do: a relative logdir (DOWNPOUR's) is then the
# same directory for the chief's Python and for the ps's half of a sharded SaveV2.
cluster() {
  local name=$1 file=$src/$2 re=$3 impl t0 rc0 rc1 t1 ps w0 w1
  shift 3
  [ -f "$file" ] || { echo "$name: no $file, skipped"; return; }
  local -a pa=() a0=() a1=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do pa+=("$1"); shift; done
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do a0+=("$1"); shift; done
  shift
  a1=("$@")
  for impl in tf tfsh; do
    rundir=$(mktemp -d "$OUT/run.XXXX")
    start "$impl" "$OUT/$name.$impl.ps.log" "$file" "${pa[@]}"
    ps=$last
    t0=$(date +%s.%N)
    start "$impl" "$OUT/$name.$impl.log" "$file" "${a0[@]}"
    w0=$last
    start "$impl" "$OUT/$name.$impl.w1.log" "$file" "${a1[@]}"
    w1=$last
    wait "$w0"
    rc0=$?
    t1=$(date +%s.%N)
    wait "$w1"
    rc1=$?
    kill -TERM "$ps" 2>/dev/null   # timeout(1) passes it on to the ps
    wait "$ps" 2>/dev/null
    rundir=
    report "$name" "$impl" "$rc0/$rc1" "$(echo "$t1 - $t0" | bc)" "$OUT/$name.$impl.log" "$re"
  done
}

want() { [ $# -eq 0 ] && return 0; local n; for n in "${names[@]}"; do [ "$n" = "$1" ] && return 0; done; return 1; }
names=("$@")
sel() { [ ${#names[@]} -eq 0 ] || want "$1"; }

sel deep && single deep tensorflow/mnist_deep.py 'test accuracy|training accuracy' --data_dir="$data"
# fully_connected_feed.py: r1.15's takes --input_data_dir and --log_dir; the older one
# stored (11fe8ea) reads the data from --train_dir and writes its checkpoints there too,
# so it gets a directory of links to the data
if sel feed && [ -f "$src/tensorflow/fully_connected_feed.py" ]; then
  if grep -q input_data_dir "$src/tensorflow/fully_connected_feed.py"; then
    single feed tensorflow/fully_connected_feed.py 'Precision @ 1' --input_data_dir="$data" --log_dir="$OUT/feed_logs"
  else
    mkdir -p "$OUT/feed_data"
    ln -sf "$data"/* "$OUT/feed_data/"
    single feed tensorflow/fully_connected_feed.py 'Precision @ 1' --train_dir="$OUT/feed_data"
  fi
fi
# r1.15's takes --log_dir, the older one stored (0494f0f) --summaries_dir
if sel summaries && [ -f "$src/tensorflow/mnist_with_summaries.py" ]; then
  d=--log_dir
  grep -q summaries_dir "$src/tensorflow/mnist_with_summaries.py" && d=--summaries_dir
  single summaries tensorflow/mnist_with_summaries.py 'Accuracy at step' --data_dir="$data" "$d=$OUT/summ_logs"
fi

if sel replica || sel replica_sync; then
  # The stored copy of mnist_replica.py (commit 1024d00) has `    elif:` where r1.15 has a
  # blank line (a SyntaxError in any Python): that one line is repaired, in a copy.
  if grep -q '^    elif:$' "$src/tensorflow/mnist_replica.py" 2>/dev/null; then
    mkdir -p "$OUT/src/tensorflow"
    sed 's/^    elif:$//' "$src/tensorflow/mnist_replica.py" >"$OUT/src/tensorflow/mnist_replica.py"
    src_orig=$src src=$OUT/src
  fi
  for mode in replica replica_sync; do
    sel "$mode" || continue
    read -r p0 p1 p2 <<<"$(ports 3)"
    flags=(--data_dir="$data" --num_gpus=0 --ps_hosts="localhost:$p0" --worker_hosts="localhost:$p1,localhost:$p2")
    [ "$mode" = replica_sync ] && flags+=(--sync_replicas)
    cluster "$mode" tensorflow/mnist_replica.py 'validation cross entropy' \
      "${flags[@]}" --job_name=ps --task_index=0 -- "${flags[@]}" --job_name=worker --task_index=0 -- \
      "${flags[@]}" --job_name=worker --task_index=1
  done
  src=${src_orig:-$src}
fi

if sel ischlag; then
  read -r p0 _ <<<"$(ports 4)"
  ia=(--port "$p0" --data-path "$data" --training-epochs 1 --logdir "$OUT/ischlag_logs")
  DATA=$(dirname "$data") cluster ischlag ischlag/example.py 'Test-Accuracy|Final Cost' \
    "${ia[@]}" --job-name ps --task-index 0 --worker-host localhost localhost -- \
    "${ia[@]}" --job-name worker --task-index 0 --worker-host localhost localhost -- \
    "${ia[@]}" --job-name worker --task-index 1 --worker-host localhost localhost
fi

# tmulc18's scripts use the fixed ports 2222-2224 (and sleep a second a step)
sel ssgd && cluster ssgd tmulc18/ssgd.py 'step:|closed' --job_name=ps -- --job_name=worker --task_index=0 -- \
  --job_name=worker --task_index=1
sel downpour && cluster downpour tmulc18/DOWNPOUR.py 'global step|closed' --job_name=ps -- --job_name=worker \
  --task_index=0 -- --job_name=worker --task_index=1
exit 0
