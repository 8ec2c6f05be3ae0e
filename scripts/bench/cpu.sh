#!/usr/bin/env bash
# The CPU benchmarks in one command: the CPU (model, instruction set, the CPUs this process
# may use, and whether two threads of plain arithmetic really run twice as fast as one,
# which tells a busy or shared core), the kernel set and threads tfsh chose (`tfsh
# server`'s CPU line), then, in the same run: MatMul 256/1024/2048/4096 through sess.run
# against raw BLIS sgemm (same kernel set; tfsh's threads and one thread, the best kept),
# raw oneDNN sgemm on its own threads where tfsh's tiles run it (AVX-512), and TensorFlow; the CNN cases (cnn.sh) and the LSTM cases (rnn.sh); and MatMul 2048 and
# the CNN training step again under `taskset -c 0`, default threads against one thread.
#   scripts/bench/cpu.sh [ROUNDS]   (alternating rounds, best kept; default 3)
# Environment: TFSH (default build/tfsh), SGEMM_BENCH (default sgemm_bench beside TFSH),
# TF_PYTHON (default /root/tfvenv/bin/python; the TF columns are skipped without it).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
sgemm=${SGEMM_BENCH:-$(dirname "$tfsh")/sgemm_bench}
py=${TF_PYTHON:-/root/tfvenv/bin/python}
rounds=${1:-3}
bench=$root/scripts/bench
[ -x "$tfsh" ] && [ -x "$sgemm" ] || { echo "cpu.sh: build tfsh and sgemm_bench first" >&2; exit 77; }
have_tf=0
[ -x "$py" ] && "$py" -c "import tensorflow" 2>/dev/null && have_tf=1
tf_run() { "$py" "$root/scripts/tf_oracle/shim.py" "$@" 2>/dev/null; }

echo "== CPU"
echo "model:  $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
flags=$(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2-)
isa=""
for f in sse4_2 avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni avx512_bf16 \
         avx512_fp16 amx_tile amx_bf16 amx_int8; do
  [[ " $flags " == *" $f "* ]] && isa+=" $f"
done
echo "ISA:   $isa"
quota=""
if [ -r /sys/fs/cgroup/cpu.max ]; then quota=$(cat /sys/fs/cgroup/cpu.max)
elif [ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
  quota="$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"
fi
echo "usable: $(nproc) of $(nproc --all) CPUs (affinity $(taskset -pc $$ 2>/dev/null | sed 's/.*: //'))," \
     "cgroup quota ${quota:-none}, SLURM_CPUS_PER_TASK ${SLURM_CPUS_PER_TASK:-unset}"
spin() { awk 'BEGIN { for (i = 0; i < 2e7; i++) s += i * 0.5; print s > "/dev/null" }'; }
t0=$(date +%s.%N); spin; t1=$(date +%s.%N); spin & spin; wait; t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { r = 2 * (b - a) / (c - b);
  printf "two threads of plain arithmetic: %.2fx one (%s)\n", r,
         (r > 1.8) ? "two free cores" : "a core is busy or shared" }'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== tfsh's choice"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
"$tfsh" server --cluster "{\"worker\": [\"localhost:$port\"]}" --job worker --task 0 >"$log" 2>&1 &
pid=$!
for _ in $(seq 250); do grep -q "serving on" "$log" && break; sleep 0.02; done
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
grep '^tfsh: CPU' "$log" | sed 's/^tfsh: //'
dnnl=0
grep -q "oneDNN's sgemm" "$log" && dnnl=1
rm -f "$log"
threads=$("$sgemm" 64 0 1 | awk '{print $3}')

# best FILE KEY: the smallest third field of "BEST KEY SECONDS" lines in FILE
best() { awk -v k="$2" '$1 == "BEST" && $2 == k && (m == "" || $3 < m) {m = $3} END {print m}' "$1"; }
# gbest FILE N THREADS [onednn]: the largest GFLOP/s of sgemm_bench's BLIS lines (or its
# oneDNN lines) for N on THREADS
gbest() {
  awk -v n="$2" -v t="$3" -v d="${4:-}" '$1 == "sgemm" && $2 == n && $3 == t && \
    (($4 == "onednn") == (d == "onednn")) && $5 > m {m = $5} END {print m + 0}' "$1"
}

echo "== MatMul n x n x n float32 through sess.run, GFLOP/s; best of $rounds alternating rounds"
sizes="256 1024 2048 4096"
a=$(mktemp) b=$(mktemp) r=$(mktemp)
for _ in $(seq "$rounds"); do
  for n in $sizes; do
    "$sgemm" "$n" "$threads" 5 >>"$r"
    [ "$threads" = 1 ] || "$sgemm" "$n" 1 3 >>"$r"
    # where tfsh's tiles run oneDNN's sgemm, raw oneDNN on its own threads too
    [ "$dnnl" = 1 ] && "$sgemm" "$n" "$threads" 5 dnnl >>"$r" 2>/dev/null
  done
  "$tfsh" "$bench/matmul.py" $sizes >>"$a"
  [ "$have_tf" = 1 ] && tf_run "$bench/matmul.py" $sizes >>"$b"
done
printf "| n | raw BLIS %s threads | raw BLIS 1 thread | raw oneDNN %s threads | tfsh | tfsh/best raw BLIS | tfsh/oneDNN | TF | TF/tfsh |\n" "$threads" "$threads"
echo "|---|---|---|---|---|---|---|---|---|"
for n in $sizes; do
  g=$(gbest "$r" "$n" "$threads") g1=$(gbest "$r" "$n" 1) gd=$(gbest "$r" "$n" "$threads" onednn)
  ta=$(best "$a" "matmul_$n") tb=$(best "$b" "matmul_$n")
  awk -v n="$n" -v g="$g" -v g1="$g1" -v gd="$gd" -v ta="$ta" -v tb="$tb" 'BEGIN {
    f = 2 * n * n * n / 1e9; ga = ta ? f / ta : 0; gb = tb ? f / tb : 0; raw = g > g1 ? g : g1
    printf "| %d | %.1f | %.1f | %s | %.1f | %.2f | %s | %s | %s |\n", n, g, g1,
           (gd > 0 ? sprintf("%.1f", gd) : "-"), ga, raw ? ga / raw : 0,
           (gd > 0 ? sprintf("%.2f", ga / gd) : "-"), gb ? sprintf("%.1f", gb) : "-",
           gb ? sprintf("%.2f", ga / gb) : "-" }'
done
rm -f "$a" "$b" "$r"

echo "== CNN and LSTM (cnn.sh, rnn.sh)"
if [ "$have_tf" = 1 ]; then
  TFSH=$tfsh TF_PYTHON=$py bash "$bench/cnn.sh" 10 "$rounds"
  TFSH=$tfsh TF_PYTHON=$py bash "$bench/rnn.sh" 100 "$rounds"
else
  echo "(no TensorFlow at $py: tfsh alone)"
  "$tfsh" "$bench/cnn.py" 10 | awk '$1 == "BEST" { printf "%-13s batch 128: tfsh %7.1f ms\n", $2, $3 * 1e3 }'
  "$tfsh" "$bench/rnn.py" 100 | awk '$1 == "BEST" { printf "%-13s LSTM(64): tfsh %7.1f ms\n", $2, $3 * 1e3 }'
fi

echo "== under taskset -c 0: default threads against one thread (target: default <= 1.1x one)"
a=$(mktemp) o=$(mktemp) b=$(mktemp) r=$(mktemp)
for _ in $(seq "$rounds"); do
  taskset -c 0 "$tfsh" "$bench/matmul.py" 2048 >>"$a"
  taskset -c 0 "$tfsh" "$bench/cnn.py" 5 layers_train >>"$a"
  BLIS_NUM_THREADS=1 taskset -c 0 "$tfsh" "$bench/matmul.py" 2048 >>"$o"
  BLIS_NUM_THREADS=1 taskset -c 0 "$tfsh" "$bench/cnn.py" 5 layers_train >>"$o"
  taskset -c 0 "$sgemm" 2048 1 3 >>"$r"
  taskset -c 0 "$sgemm" 2048 2 3 >>"$r"
  if [ "$have_tf" = 1 ]; then
    taskset -c 0 "$py" "$root/scripts/tf_oracle/shim.py" "$bench/matmul.py" 2048 2>/dev/null >>"$b"
    taskset -c 0 "$py" "$root/scripts/tf_oracle/shim.py" "$bench/cnn.py" 5 layers_train 2>/dev/null >>"$b"
  fi
done
for k in matmul_2048 layers_train; do
  awk -v k="$k" -v d="$(best "$a" "$k")" -v one="$(best "$o" "$k")" -v tf="$(best "$b" "$k")" 'BEGIN {
    printf "%-13s tfsh default %8.2f ms, tfsh 1 thread %8.2f ms, default/one %.2f%s\n", k,
           d * 1e3, one * 1e3, one ? d / one : 0, tf ? sprintf(", TF %.2f ms, TF/tfsh %.2f", tf * 1e3, tf / d) : "" }'
done
echo "raw BLIS 2048 pinned to one CPU: 1 thread $(gbest "$r" 2048 1) GFLOP/s, 2 threads $(gbest "$r" 2048 2) GFLOP/s (what a thread count from the host's cores costs)"
rm -f "$a" "$o" "$b" "$r"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
