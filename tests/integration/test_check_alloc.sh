#!/usr/bin/env bash
# scripts/check_alloc.sh fails on a raw allocation outside its allowlist and names its
# file:line; a word in a comment and an allowed line pass (planted files, TFSH_ALLOC_EXTRA).
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/runtime" "$WORK/ops"
cat >"$WORK/runtime/planted.c" <<'C'
/* a kernel may malloc() its state: a comment, not a call */
static char *name_of(const char *s) {
  return strdup(s);
}
C
cat >"$WORK/ops/fused_bn.c" <<'C'
  float *a = malloc(sizeof(float) * (size_t)(2 * l.ch + 1));
  int *n = calloc(1, sizeof *n);
C
out=$(cd "$WORK" && TFSH_ALLOC_EXTRA="runtime/planted.c ops/fused_bn.c" bash "$TFSH_SRC/scripts/check_alloc.sh")
rc=$?
check "the planted raw calls fail the check" "1" "$rc"
check "each is named by file:line; the comment and the allowed line are not" \
"alloc: runtime/planted.c:3: raw strdup() outside the allowlist: use base/alloc.h's xstrdup(), or add a line with the reason to scripts/check_alloc.sh
alloc: ops/fused_bn.c:2: raw calloc() outside the allowlist: use base/alloc.h's xcalloc(), or add a line with the reason to scripts/check_alloc.sh" "$out"
check "the tree itself passes" "alloc: ok" "$(bash "$TFSH_SRC/scripts/check_alloc.sh")"
finish
