#!/usr/bin/env bash
# A short fuzz run (tests/fuzz): each libFuzzer target for FUZZ_SECONDS (15) over its seed
# corpus. The targets need clang and its fuzzer runtime; they are built in a separate
# clang build (FUZZ_BUILD, default build-fuzz/ in the source tree, shared by every gcc
# build and guarded by a lock) and reused. Without clang or its fuzzer runtime this test
# says why and skips; so it does when the first build of the instrumented core does not
# finish within FUZZ_BUILD_SECONDS (420 s, enough for a clean clone's CI run to build and
# fuzz; it goes on where it stopped next time). A crash
# fails it, with the input saved and the command that reproduces it.
# Longer runs: tests/fuzz/README.md.
. "$(dirname "$0")/lib.sh"
SECS=${FUZZ_SECONDS:-15}
BUILD=${FUZZ_BUILD:-$TFSH_SRC/build-fuzz}
BUILD_SECS=${FUZZ_BUILD_SECONDS:-420}
TARGETS=(fuzz_net_header fuzz_codec fuzz_tf_files fuzz_tf_text_events)

if ! command -v clang >/dev/null; then
  echo "SKIP: clang is not installed, so the fuzz targets cannot be built (apt-get install clang libclang-rt-14-dev)"
  exit 77
fi
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' >"$WORK/probe.c"
if ! clang -fsanitize=fuzzer,address,undefined "$WORK/probe.c" -o "$WORK/probe" 2>"$WORK/probe.err"; then
  echo "SKIP: clang cannot link -fsanitize=fuzzer here (install libclang-rt-14-dev):"
  head -3 "$WORK/probe.err"
  exit 77
fi

mkdir -p "$BUILD"
(
  flock -w "$BUILD_SECS" 9 || exit 3
  if [ ! -f "$BUILD/build.ninja" ] && [ ! -f "$BUILD/Makefile" ]; then
    gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
    CC=clang cmake -S "$TFSH_SRC" -B "$BUILD" "${gen[@]}" -DTFSH_FUZZ=ON -DTFSH_CUDA=OFF \
      >"$WORK/configure.log" 2>&1 || exit 1
  fi
  timeout "$BUILD_SECS" cmake --build "$BUILD" --target "${TARGETS[@]}" >"$WORK/build.log" 2>&1
) 9>"$BUILD/.lock"
case $? in
  0) ;;
  3|124) echo "SKIP: the fuzz build in $BUILD did not finish within $BUILD_SECS s; it goes on from where it stopped next time"
     exit 77 ;;
  *) echo "FAIL configuring or building the fuzz targets in $BUILD:"
     cat "$WORK/configure.log" 2>/dev/null | tail -20
     grep -E "error|undefined" "$WORK/build.log" 2>/dev/null | head -20
     exit 1 ;;
esac

for t in "${TARGETS[@]}"; do
  bin=$BUILD/tests/fuzz/$t
  mkdir -p "$WORK/$t"
  # the working corpus (new inputs) first, the seeds read from the source tree
  "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$WORK/$t-" "$WORK/$t" "$TFSH_SRC/tests/fuzz/corpus/$t" >"$WORK/$t.log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$WORK/$t.log" | grep -o '[0-9]*$')
  if [ $rc -ne 0 ]; then
    mkdir -p "$BUILD/crashes"
    for a in "$WORK/$t"-*; do [ -e "$a" ] && cp "$a" "$BUILD/crashes/" && echo "saved $BUILD/crashes/$(basename "$a")"; done
    grep -E "ERROR|SUMMARY|#[0-9]+ 0x" "$WORK/$t.log" | head -20
    echo "reproduce: $bin $BUILD/crashes/<file>"
  fi
  check "$t: $SECS s, no crash (${runs:-?} inputs)" 0 "$rc"
done
finish
