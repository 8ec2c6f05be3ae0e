#!/usr/bin/env bash
# Comments that cannot be true: a file's header comment (its first /* ... */) that names a
# project path which does not exist (base/..., runtime/foo.h, shell/app/views.py.inc), and
# any comment in code that cites an issue number (the word issue and a number) of a tracker the
# repository does not carry: say the fact instead. Exit 1 and one line per finding.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
bad=0
code=$(git ls-files 'base/*' 'net/*' 'runtime/*' 'ops/*' 'shell/*' 'scripts/*' 'tests/*' |
       grep -E '\.(c|h|cu|cuh|inc|py|sh)$')
for f in $(echo "$code" | grep -E '\.(c|h|cu|cuh)$'); do
  # the header comment, when the file opens with one
  head=$(awk 'NR == 1 && !/^\/\*/ { exit } { print } /\*\// { exit }' "$f")
  for p in $(printf '%s\n' "$head" | grep -oE '(^|[^A-Za-z0-9_./-])(base|net|runtime|ops|shell|scripts|tests|man)/[A-Za-z0-9_./-]*[A-Za-z0-9_]' |
             sed 's@^[^a-z]@@' | sort -u); do
    case $p in *NAME*) continue ;; esac   # a pattern (ops/NAME.c), not a file
    [ -e "$p" ] && continue
    echo "comments: $f: its header names $p, which does not exist"
    bad=1
  done
done
# shellcheck disable=SC2086
hits=$(grep -nE '[Ii]ssues? [0-9]+' $code)
if [ -n "$hits" ]; then
  printf '%s\n' "$hits" | sed 's/^\([^:]*:[0-9]*\):.*/comments: \1: cites an issue number; say the fact instead/'
  bad=1
fi
if [ "$bad" = 0 ]; then echo "comments: ok"; fi
exit "$bad"
