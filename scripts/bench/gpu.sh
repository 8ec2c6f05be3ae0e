#!/usr/bin/env bash
# GPU benchmarks (scripts/bench/gpu.tfs): MatMul through sess.run vs raw cuBLAS sgemm, and
# host->device bandwidth vs raw cudaMemcpyAsync from pinned memory, in one process.
# Prints a markdown table; says "no GPU: ..." and exits 77 where there is none.
#   scripts/bench/gpu.sh [n=8192] [megabytes=256]     (TFSH: the binary, default build/tfsh)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
[ -x "$tfsh" ] || { echo "no tfsh binary at $tfsh (scripts/build.sh first)" >&2; exit 2; }
timeout 600 "$tfsh" "$root/scripts/bench/gpu.tfs" "${1:-8192}" "${2:-256}"
