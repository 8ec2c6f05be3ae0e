#!/usr/bin/env bash
# A message over gRPC's limit (2^31 - 1 bytes, TF's too) on TF's MasterService, between a
# tfsh client (TFSH_PEER=tf) and `tfsh server --grpc`: a fetch of 2 GiB + 4 B is refused
# before the step computes it (its static shape says so), and a feed as big by the client
# before it copies it, each at once with a clear
# ResourceExhaustedError (not after gRPC has carried 2 GiB, nor a crash or a hang), and the
# session runs on. Needs about 2.2 GB of memory per process (skipped with less free).
. "$(dirname "$0")/lib.sh"
avail=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo)
[ "${avail:-0}" -ge 6 ] || { echo "SKIP: $avail GiB of memory available; this test wants 6"; exit 77; }
read -r T G <<<"$(free_ports 2)"
start_task w --cluster "{\"worker\": [\"localhost:$T\"]}" --job worker --task 0 --grpc "localhost:$G"
wait_for "$WORK/w.log" "serving on\|cannot load gRPC"
grep -q "cannot load gRPC" "$WORK/w.log" && { echo "SKIP: $(grep -o 'cannot load gRPC.*' "$WORK/w.log")"; exit 77; }
cat >"$WORK/big.py" <<'PY'
import sys
import time
import numpy as np
import tensorflow as tf
z = tf.zeros([2**29 + 1], name="z")
p = tf.placeholder(tf.float32, name="p")
with tf.Session(sys.argv[1]) as sess:
    # the fetch is sized from its static shape before the step runs; the feed before it is
    # copied
    for fetch, feed, limit in ((z, None, 2), (tf.size(p), {p: np.zeros(2**29 + 1, np.float32)}, 2)):
        t = time.time()
        try:
            sess.run(fetch, feed)
            print("it went")
        except tf.errors.ResourceExhaustedError as e:
            took = time.time() - t
            print("ResourceExhaustedError:", e.message, "(in %s)" % ("< %d s" % limit if took < limit else "%.1f s" % took))
    print("then", sess.run(tf.constant(6) * 7))
PY
check "fetch and feed over the limit, each refused at once; the session runs on" \
  "ResourceExhaustedError: RunStep's fetches hold 2147483652 bytes, more than the 2147483647 one gRPC message carries (TensorFlow's limit too): fetch less at a time (a slice, or over several steps) (in < 2 s)
ResourceExhaustedError: RunStep's feeds hold 2147483652 bytes, more than the 2147483647 one gRPC message carries (TensorFlow's limit too): feed less at a time (over several steps) (in < 2 s)
then 42" "$(TFSH_PEER=tf timeout 120 "$TFSH" "$WORK/big.py" "grpc://localhost:$G" 2>&1)"
finish
