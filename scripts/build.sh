#!/usr/bin/env bash
# Configure (once) and build tfsh into build/ (or $TFSH_BUILD). Quiet unless it fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TFSH_BUILD:-$root/build}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTFSH_WERROR=ON ${TFSH_CMAKE_ARGS:-} >"$build.log" 2>&1 ||
    { cat "$build.log" >&2; exit 1; }
fi
cmake --build "$build" -j "$(nproc)" >"$build.log" 2>&1 || { tail -50 "$build.log" >&2; exit 1; }
