#!/usr/bin/env bash
# One allocation policy (base/alloc.h): bookkeeping is allocated with xmalloc / xcalloc /
# xrealloc / xstrdup / xstrndup / xasprintf, which abort with a message when memory runs out;
# a raw malloc, calloc, realloc, strdup or strndup is allowed only where the list below says
# why (a tensor-sized allocation whose failure becomes RESOURCE_EXHAUSTED, the allocators
# themselves, code outside tfsh's binary). Exit 1 and one line per raw call elsewhere, naming
# file:line. TFSH_ALLOC_EXTRA="FILE..." checks more files too (paths from the caller's
# directory, named and matched against the list as given: the test of this script plants
# violations that way).
set -u
here=$PWD
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

# Each entry "GLOB|TEXT|why": a raw call on a line of a file matching GLOB that contains
# TEXT is allowed (TEXT "*": anywhere in the file). Keep TEXT short and unique to the line.
allow=(
  "base/*|*|base/ is the allocator: the x* helpers are made of these calls"
  "tests/*|*|tests and fuzzers: a test may allocate as it likes"
  "scripts/bench/*|*|benchmarks, not part of tfsh"
  "runtime/gpu/alloc.c|*|the GPU allocator: its blocks' failure is the device's OOM status"
  "runtime/exec_cf.c|int *stack = calloc(|in rt_cf_run, which another change is rewriting; checked"
  "runtime/tensor.c|char *p = malloc(|a string tensor's element: tensor data, checked"
  "ops/cpu/array.c|= calloc((size_t)n + 1|InvertPermutation's scratch, input-sized, checked"
  "ops/cpu/conv.c|char *y = malloc(|a pool-fused Conv2D's unpooled output, output-sized, checked"
  "ops/cpu/conv.c|(tmp = malloc(biasb|the workspace filter gradient's bias partials, checked"
  "ops/cpu/conv.c|float *dx = malloc(|the workspace filter gradient's dy on its slow path, checked"
  "ops/cpu/nn.c|cls = malloc(|a row per batch element, input-sized, checked"
  "ops/cpu/nn.c|part = malloc(|BiasAddGrad's partial sums, input-sized / 1024, checked"
  "ops/cpu/random.c|int64_t *perm = malloc(|RandomShuffle's permutation, input-sized, checked"
  "ops/cpu/reduce.c|ACC *acc = malloc(|the accumulators, output-sized, checked"
  "ops/cpu/reduce.c|(acc = malloc(|the row runs' partial sums, input-sized / 1024, checked"
  "ops/fused_bn.c|(2 * l.ch + 1)|per-channel statistics, input-sized, checked"
  "ops/conv3d.c|? malloc((size_t)elems|the 3-D convolutions' im2col, transposed filter and filter-gradient partials: RESOURCE_EXHAUSTED"
  "net/lane.c|(rx->head = malloc(|a received header, wire-sized: refused with RESOURCE_EXHAUSTED"
  "ops/io.c|unsigned char *buf = malloc(|a whole file's contents (ReadFile), checked"
  "ops/io.c|unsigned char *raw = malloc(|EncodePng's rows, image-sized, checked"
  "ops/io.c|unsigned char *z = malloc(|EncodePng's deflate buffer, image-sized, checked"
  "ops/io.c|unsigned char *px = malloc(|an image summary's pixels, image-sized, checked"
  "ops/nn.c|topk_item *it = malloc(|TopK's row, input-sized, checked"
  "ops/ctc.c|scratch = malloc(|CTCLoss's forward-backward tables, input-sized, checked"
  "ops/ctc.c|b->kids = malloc(|a beam's children, one per class, checked"
  "ops/ctc.c|beam **br = malloc(|the beam search's leaves, beam_width of them, checked"
  "ops/tensor_array.c|= realloc(a->|a TensorArray's slots: its size is a tensor's value, checked"
  "runtime/bundle.c|*|a checkpoint's index and data: sizes and counts from the file, checked"
  "runtime/codec.c|v->list.v = |an attr's list or raw tensor bytes: sizes from the wire, checked"
  "runtime/graphdef.c|= malloc(|a serialized GraphDef or TensorProto: holds tensor data, checked"
  "runtime/metagraph.c|unsigned char *b = malloc(total|a serialized MetaGraphDef: holds the GraphDef, checked"
  "net/grpc.c|c->resp = malloc(|a gRPC reply: its size comes from the wire, checked"
  "shell/tf/data.c|unsigned char *raw = malloc(|a whole (gunzipped) data file, checked"
)

allowed() {   # allowed FILE LINE-TEXT
  local e g t
  for e in "${allow[@]}"; do
    g=${e%%|*}; t=${e#*|}; t=${t%%|*}
    # shellcheck disable=SC2053
    [[ $1 == $g ]] || continue
    [ "$t" = "*" ] && return 0
    [[ $2 == *"$t"* ]] && return 0
  done
  return 1
}

bad=0
check_file() {   # check_file NAME PATH
  local hit n text code call
  while IFS= read -r hit; do
    n=${hit%%:*}; text=${hit#*:}
    # a word in a comment ("may malloc() state") is not a call
    code=$(printf '%s' "$text" | sed -e 's@/\*.*\*/@@g' -e 's@/\*.*@@' -e 's@//.*@@')
    call=$(printf '%s' "$code" | grep -oE '\b(malloc|calloc|realloc|strdup|strndup)\(' | head -1)
    [ -n "$call" ] || continue
    allowed "$1" "$text" && continue
    echo "alloc: $1:$n: raw ${call%(}() outside the allowlist: use base/alloc.h's x${call%(}(), or add a line with the reason to scripts/check_alloc.sh"
    bad=1
  done < <(grep -nE '\b(malloc|calloc|realloc|strdup|strndup)\(' "$2")
}
for f in $(git ls-files 'base/*' 'net/*' 'runtime/*' 'ops/*' 'shell/*' 'scripts/*' 'tests/*' |
           grep -E '\.(c|h|cu|cuh)$'); do
  [ -f "$f" ] && check_file "$f" "$f"
done
for f in ${TFSH_ALLOC_EXTRA:-}; do
  p=$f; [[ $f == /* ]] || p=$here/$f
  check_file "$f" "$p"
done
if [ "$bad" = 0 ]; then echo "alloc: ok"; fi
exit "$bad"
