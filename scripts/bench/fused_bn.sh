#!/usr/bin/env bash
# tfsh vs TensorFlow 1.x on batch normalization's training step, fused (FusedBatchNormV3 and
# its gradient) and composite (the unfused ops): scripts/bench/fused_bn.py under both, in the
# same run; prints the four best times per sess.run.
#   scripts/bench/fused_bn.sh [NxHxWxC]      (default 32x32x32x64)
# Environment: TFSH (default build/tfsh), TF_PYTHON (default /root/tfvenv/bin/python).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
py=${TF_PYTHON:-/root/tfvenv/bin/python}
shape=${1:-32x32x32x64}
[ -x "$py" ] || { echo "fused_bn.sh: no TensorFlow python at $py (set TF_PYTHON)" >&2; exit 77; }
a=$("$tfsh" "$root/scripts/bench/fused_bn.py" "$shape" | sed -n 's/^BEST //p')
b=$("$py" "$root/scripts/tf_oracle/shim.py" "$root/scripts/bench/fused_bn.py" "$shape" 2>/dev/null | sed -n 's/^BEST //p')
[ -n "$a" ] && [ -n "$b" ] || { echo "fused_bn.sh: a run failed (tfsh '$a', TF '$b')" >&2; exit 1; }
printf '%s\n' "$a" | sed 's/^/tfsh /'
printf '%s\n' "$b" | sed 's/^/TF   /'
printf '%s\n%s\n' "$a" "$b" | awk -v shape="$shape" '{ t[NR] = $2 } END {
  printf "batch norm step on %s (ms): tfsh fused %.2f composite %.2f (composite/fused %.2f); TF fused %.2f composite %.2f\n",
         shape, t[1] * 1e3, t[2] * 1e3, t[2] / t[1], t[3] * 1e3, t[4] * 1e3 }'
