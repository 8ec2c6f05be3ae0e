#!/usr/bin/env bash
# Lazy generator expressions vs list comprehensions (issue 16), in tfsh and in python3 for
# reference, in the same run: scripts/bench/genexp.py under both. For each case prints the
# best time of the generator form, of the list-comprehension form, and their ratio gen/list
# (the target for tfsh is at most 1.5).
#   scripts/bench/genexp.sh [N]          (default 1000000 elements)
# Environment: TFSH (default build/tfsh), PYTHON (default python3).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
py=${PYTHON:-python3}
n=${1:-1000000}
script=$root/scripts/bench/genexp.py
a=$("$tfsh" "$script" "$n") || { echo "genexp.sh: tfsh run failed" >&2; exit 1; }
b=$("$py" "$script" "$n") || { echo "genexp.sh: $py run failed" >&2; exit 1; }
printf '%-12s %12s %12s %9s %12s %12s %9s\n' case tfsh_gen_ms tfsh_list_ms gen/list py_gen_ms py_list_ms gen/list
join <(echo "$a" | sort) <(echo "$b" | sort) | awk '{
  printf "%-12s %12.1f %12.1f %9.2f %12.1f %12.1f %9.2f\n", $1, $2 * 1e3, $3 * 1e3, $2 / $3, $4 * 1e3, $5 * 1e3, $4 / $5 }'
