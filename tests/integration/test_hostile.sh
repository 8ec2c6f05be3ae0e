#!/usr/bin/env bash
# Hostile messages against a real `tfsh server` (tests/fuzz/hostile_client.c): truncated
# headers, wrong types, huge counts and lengths, unknown versions, message types,
# sessions, graph handles and steps, frames over the size limit. Each gets an error reply
# (a readable PushTensor is answered with nothing, by design), and after each the server still answers GetStatus. The server runs with
# TFSH_MAX_MESSAGE_BYTES=1M, so the size cases are cheap.
. "$(dirname "$0")/lib.sh"
HOSTILE=${HOSTILE:-$(dirname "$TFSH")/hostile_client}
if [ ! -x "$HOSTILE" ]; then
  echo "FAIL hostile_client not built at $HOSTILE"
  exit 1
fi
read -r P0 <<<"$(free_ports 1)"
SPEC="{\"worker\": [\"localhost:$P0\"]}"
TFSH_MAX_MESSAGE_BYTES=1M start_task w0 --cluster "$SPEC" --job worker --task 0
timeout 120 "$HOSTILE" "tcp://127.0.0.1:$P0" 1M >"$WORK/hostile.out" 2>&1
rc=$?
cat "$WORK/hostile.out"
check "every hostile case answered as expected, server serving after each" "0" "$rc"
check "no case failed" "" "$(grep '^FAIL' "$WORK/hostile.out")"
check "the server process is still alive" "alive" "$(kill -0 "$PID_w0" 2>/dev/null && echo alive)"
finish
