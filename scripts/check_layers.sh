#!/usr/bin/env bash
# The layers hold (../README.md, "What is inside"; each folder's README.md): every #include
# "..." of the project, followed through headers, stays inside what its folder may use.
#   base/     the C library only          net/      base, net
#   runtime/  base, net, runtime          ops/      base, runtime, ops
#   shell/    base, runtime, ops, shell — never net
# Inside shell/ the rooms go one way: py <- np <- tf <- app (a room includes only rooms
# below it); py is the embedded interpreter, whose public headers are value.h and lang.h.
# tests/ and scripts/ may include anything. Exit 1 and one line per violation, naming the
# file, the header it reaches and the chain of includes.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

# Exceptions, each "FILE HEADER" (HEADER reached from FILE, directly or through other
# headers), with the issue that ends it. None today: keep it that way.
allow=()

# May FILE (a path) include HEADER (a path)? Prints nothing when it may, else the rule.
rule() {
  local f=$1 h=$2 fl hl
  fl=${f%%/*}; hl=${h%%/*}
  case $fl in
    tests|scripts) return ;;
    base) [ "$hl" = base ] || echo "base/ includes nothing of the project" ;;
    net) case $hl in base|net) ;; *) echo "net/ includes nothing above it" ;; esac ;;
    runtime) case $hl in base|net|runtime) ;; *) echo "runtime/ never includes $hl/" ;; esac ;;
    ops) case $hl in base|runtime|ops) ;; *) echo "ops/ never includes $hl/" ;; esac ;;
    shell)
      case $hl in
        base|runtime|ops) ;;
        net) echo "shell/ never includes net/ (it asks the runtime through typed calls)" ;;
        shell)
          local fr hr
          fr=$(echo "$f" | cut -d/ -f2); hr=$(echo "$h" | cut -d/ -f2)
          local order="py np tf app" fi=0 hi=0 i=0
          for r in $order; do i=$((i + 1)); [ "$r" = "$fr" ] && fi=$i; [ "$r" = "$hr" ] && hi=$i; done
          [ "$fi" -gt 0 ] && [ "$hi" -gt "$fi" ] &&
            echo "shell/$fr includes the room above it, shell/$hr (rooms: py <- np <- tf <- app)" ;;
        *) echo "shell/ never includes $hl/" ;;
      esac ;;
  esac
}

# Direct project includes of a file (paths relative to the root).
includes() { sed -n 's@^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z]*/[^"]*\)".*@\1@p' "$1"; }

# allowed FILE HEADER FIRST: an entry "F H" (F may be a glob) allows FILE to reach H, and
# everything FILE reaches through H.
allowed() {
  local e ef eh
  for e in "${allow[@]}"; do
    ef=${e%% *}; eh=${e#* }
    # shellcheck disable=SC2053
    [[ $1 == $ef ]] && { [ "$eh" = "$2" ] || [ "$eh" = "$3" ]; } && return 0
  done
  return 1
}

bad=0
files=$(git ls-files 'base/*' 'net/*' 'runtime/*' 'ops/*' 'shell/*' | grep -E '\.(c|h|cu|cuh)$')
for f in $files; do
  # walk the include graph from f, breadth first, remembering how each header was reached
  declare -A via=() first=()
  queue=("$f")
  while [ ${#queue[@]} -gt 0 ]; do
    cur=${queue[0]}; queue=("${queue[@]:1}")
    [ -f "$cur" ] || continue
    for h in $(includes "$cur"); do
      [ -n "${via[$h]:-}" ] && continue
      if [ "$cur" = "$f" ]; then via[$h]="$f"; first[$h]=$h
      else via[$h]="${via[$cur]} -> $cur"; first[$h]=${first[$cur]}; fi
      queue+=("$h")
      why=$(rule "$f" "$h")
      if [ -n "$why" ] && ! allowed "$f" "$h" "${first[$h]}"; then
        echo "layers: ${via[$h]} -> $h: $why"
        bad=1
      fi
    done
  done
  unset via first
done
if [ "$bad" = 0 ]; then echo "layers: ok"; fi
exit "$bad"
