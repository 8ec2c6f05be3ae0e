#!/usr/bin/env bash
# The command line: --help, --version, -c, scripts with arguments, stdin, exit statuses.
set -u
: "${TFSH:?set TFSH to the tfsh binary}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
expect() {   # expect NAME WANT GOT
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1"; echo "  want: $2"; echo "  got:  $3"; fails=$((fails + 1)); fi
}

expect "--version" "tfsh $("$TFSH" --version | cut -d' ' -f2)" "$("$TFSH" --version)"
"$TFSH" --help | grep -q '^usage: tfsh' && echo "ok: --help" || { echo "FAIL: --help"; fails=$((fails + 1)); }
"$TFSH" --bogus >/dev/null 2>"$work/err"; rc=$?
expect "unknown option exits 2" 2 "$rc"
grep -q '^usage: tfsh' "$work/err" && echo "ok: usage on stderr" || { echo "FAIL: usage on stderr"; fails=$((fails + 1)); }

expect "-c with arguments" "['-c', 'a', 'b'] 3" "$("$TFSH" -c 'import sys; print(sys.argv, 1 + 2)' a b)"
printf 'import sys\nprint(sys.argv[1:])\n' > "$work/s.tfs"
expect "script argv" "['--flag=value', 'x']" "$("$TFSH" "$work/s.tfs" --flag=value x)"
"$TFSH" -c 'raise ValueError("boom")' 2>"$work/err"; rc=$?
expect "uncaught error exits 1" 1 "$rc"
expect "error message" "ValueError: boom" "$(tail -1 "$work/err")"
"$TFSH" -c 'import sys; sys.exit(4)'; expect "sys.exit status" 4 "$?"
"$TFSH" -c 'x = (' 2>"$work/err"; rc=$?
expect "syntax error exits 1" 1 "$rc"
expect "syntax error format" "SyntaxError: '(' was never closed" "$(tail -1 "$work/err")"
"$TFSH" "$work/missing.tfs" 2>/dev/null; expect "missing script exits 2" 2 "$?"
expect "stdin script" "3" "$(printf 'print(1 + 2)\n' | "$TFSH")"
expect "stdin with -" "3 ['-']" "$(printf 'import sys\nprint(1 + 2, sys.argv)\n' | "$TFSH" -)"

# ZeroMQ, BLIS and libedit are loaded on first use (base/dl.h): a script that opens no
# socket, multiplies nothing and reads no line maps none of them; a session maps the two.
maps='import re; print(sorted(set(re.findall(r"/(libzmq|libblis|libedit)\.so", open("/proc/self/maps").read()))))'
none="[]"   # sanitizer builds link BLIS (CMakeLists.txt): there it is mapped from the start
readelf -d "$TFSH" | grep -q 'NEEDED.*libblis' && none="['libblis']"
expect "-c maps no library it does not use" "$none" "$("$TFSH" -c "$maps")"
expect "import tensorflow maps none either" "$none" "$("$TFSH" -c "import tensorflow; $maps")"
expect "a MatMul maps BLIS and ZeroMQ" "['libblis', 'libzmq']" \
  "$("$TFSH" -c "import tensorflow as tf; tf.Session().run(tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]))); $maps")"
# the binary exports none of their names (a trampoline exported would catch the
# library's calls to itself)
expect "no trampoline exported" "" \
  "$(nm -D --defined-only "$TFSH" | awk '$3 ~ /^(zmq_|bli_|el_|history)/ {print $3}')"

# speed: a million-iteration loop stays well under a second
start=$(date +%s%N)
"$TFSH" -c 'x = 0
for i in range(1000000):
    x += i'
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$ms" -lt 1000 ]; then echo "ok: 1e6-iteration loop in ${ms} ms"; else echo "FAIL: loop took ${ms} ms"; fails=$((fails + 1)); fi
exit $((fails > 0))
