#!/usr/bin/env bash
# Workload 5: create + place + partition of a 25k / 50k / 100k-node chain over 2 tasks
# (graph.py), tfsh vs TensorFlow 1.x (compat.v1, gRPC). Figures per size: graph
# construction, first sess.run (place, partition, register, run), second sess.run (run
# only). Target: tfsh's construction + first run <= 0.5 s at 100k, and linear.
# REPS defaults to 1 here: TF's Python op construction alone takes ~1 minute for the three
# sizes on the 2-core VM.   scripts/bench/vs_tf/graph.sh [SIZES (25000,50000,100000)]
set -eu
REPS=${REPS:-1}
. "$(dirname "$0")/lib.sh"
SIZES=${1:-25000,50000,100000}
echo "== 5. create + place + partition + run a chain of N nodes over 2 tasks (blocks of 1000 alternating), sizes $SIZES"
for ((rep = 1; rep <= REPS; rep++)); do
  for impl in $(impls_for $rep); do
    read -r A B <<<"$(free_ports 2)"
    start "$WORK/$impl.1.log" $impl "$BENCH/graph.py" --hosts "localhost:$A,localhost:$B" --task 1
    t1=$LAST
    wait_line "$WORK/$impl.1.log" ready $t1
    run_bounded 400 "$WORK/$impl.0.log" $impl "$BENCH/graph.py" --hosts "localhost:$A,localhost:$B" --task 0 --sizes "$SIZES"
    kill $t1 2>/dev/null || true; wait $t1 2>/dev/null || true
    grep "^g[0-9]" "$WORK/$impl.0.log" | sed "s/^g/$impl $rep /" >>"$WORK/graph.txt"
    grep "^graph " "$WORK/$impl.0.log" | sed "s/^/  rep $rep $impl: /"
  done
done
python3 - "$WORK/graph.txt" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    impl, rep, nodes, build, first, second = line.split()
    k = (impl, int(nodes))
    v = (float(build) + float(first), float(build), float(first), float(second))
    rows[k] = min(rows.get(k, v), v)
sizes = sorted({n for _, n in rows})
print("  best of reps, seconds:      nodes   build   1st run  total   2nd run   total/node")
for impl in ("tfsh", "tf"):
    for n in sizes:
        t, b, f, s = rows[(impl, n)]
        print("  %-4s %22d %7.3f %8.3f %7.3f %8.3f   %6.2f us" % (impl, n, b, f, t, s, t / n * 1e6))
big = sizes[-1]
t_sh, t_tf = rows[("tfsh", big)][0], rows[("tf", big)][0]
lin = (t_sh / big) / (rows[("tfsh", sizes[0])][0] / sizes[0])
ok = t_sh <= 0.5 and lin <= 1.5
print("  tfsh at %d: %.3f s (target <= 0.5 s), per-node cost %.2fx that at %d (linear: ~1), tfsh/TF = %.3f: %s" % (
    big, t_sh, lin, sizes[0], t_sh / t_tf, "MET" if ok else "MISSED"))
print("SUMMARY graph_%dk | %.3f s | %.3f s | %.3f | per node %.2fx that at %dk | <=0.5 s, linear | %s" % (
    big // 1000, t_sh, t_tf, t_sh / t_tf, lin, sizes[0] // 1000, "MET" if ok else "MISSED"))
PY
