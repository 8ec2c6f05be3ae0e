#!/usr/bin/env bash
# Ctrl-C (SIGINT) during a long sess.run cancels the step — on the master and its workers,
# not only the client's wait — and the same session runs the next step at once.
. "$(dirname "$0")/lib.sh"
cat >"$WORK/long.py" <<'PY'
import time, tensorflow as tf
x = tf.random_uniform([512, 512])
for i in range(4000):   # seconds of work: far longer than the wait before Ctrl-C
    x = tf.matmul(x, x) * 0.001
small = tf.constant(2) * 21
with tf.Session() as sess:
    print("running", flush=True)
    try:
        sess.run(x)
        print("finished (too early)")
    except KeyboardInterrupt:
        t = time.time()
        print("interrupted", flush=True)
        print("next step:", sess.run(small), "after %s" % ("< 1 s" if time.time() - t < 1.0 else "%.1f s" % (time.time() - t)))
PY
timeout 60 "$TFSH" "$WORK/long.py" >"$WORK/out" 2>&1 &
pid=$!
PIDS+=($pid)
wait_for "$WORK/out" running 30
# let the step start (it runs for seconds), then interrupt (the script catches KeyboardInterrupt)
for _ in $(seq 20); do sleep 0.05; done
kill -INT $pid
wait $pid
check "the step is interrupted" "interrupted" "$(sed -n 2p "$WORK/out")"
check "the session runs the next step at once" "next step: 42 after < 1 s" "$(sed -n 3p "$WORK/out")"
finish
