#!/usr/bin/env bash
# What a legacy TF1 script imports beside tensorflow is the real thing (the language is
# CPython): numpy, the standard library, matplotlib (plt.show() writes a PNG beside the
# script), scipy, PIL, pandas, sklearn, and the tensorflow.python.* paths legacy code
# imports. Expected values are python3's (the same libraries, Debian's).
. "$(dirname "$0")/lib.sh"
for m in matplotlib scipy PIL pandas sklearn; do
  /usr/bin/python3 -c "import $m" 2>/dev/null || { echo "skipped: python3-$m is not installed (scripts/setup.sh)"; exit 77; }
done
cd "$WORK" || exit 2
cat >world.py <<'PY'
import csv, copy, gzip, io, itertools, logging, pickle, struct, subprocess, sys
import numpy as np
import scipy.special
import pandas as pd
from PIL import Image
from sklearn.linear_model import LinearRegression
import matplotlib.pyplot as plt
import tensorflow as tf
from tensorflow.python.framework import ops
from tensorflow.python.client import timeline
from tensorflow.examples.tutorials.mnist import input_data

print("numpy", np.__version__.split(".")[0], np.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]])).tolist())
print("concatenate", np.concatenate([np.eye(2), np.zeros((1, 2))]).shape, np.linspace(0, 1, 5).tolist())
blob = pickle.dumps({"w": np.arange(3)})
print("pickle", pickle.loads(blob)["w"].tolist())
print("gzip", gzip.decompress(gzip.compress(b"idx")), struct.unpack(">I", b"\x00\x00\x08\x03")[0])
print("itertools", list(itertools.islice(itertools.count(5), 3)), copy.deepcopy([[1]]))
buf = io.StringIO()
csv.writer(buf).writerow([1, "a"])
print("csv", buf.getvalue().strip())
print("scipy", round(float(scipy.special.expit(0.0)), 3))
print("pandas", pd.DataFrame({"a": [1, 2]}).a.sum())
print("PIL", Image.new("RGB", (3, 2)).size)
print("sklearn", LinearRegression().fit([[0.0], [1.0]], [1.0, 3.0]).coef_.round(3).tolist())
r = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True)
print("subprocess", r.stdout.strip())
print("tf paths", ops.get_default_graph() is tf.get_default_graph(), callable(timeline.Timeline),
      callable(input_data.read_data_sets))
with tf.Session() as sess:
    print("fetch", type(sess.run(tf.constant(1.5))).__name__, sess.run(tf.constant(np.eye(2)) * 2).dtype)
plt.plot([1, 2, 3], [3, 1, 2])
plt.waitforbuttonpress()   # headless: returns at once
plt.show()
logging.getLogger("x").warning("done")
PY
out=$(timeout 60 "$TFSH" world.py 2>err.txt)
want=$(timeout 60 /usr/bin/python3 - <<'PY'
import numpy as np
print("numpy", np.__version__.split(".")[0], [[0.5, 0.0], [0.0, 0.25]])
print("concatenate", (3, 2), [0.0, 0.25, 0.5, 0.75, 1.0])
print("pickle", [0, 1, 2])
print("gzip", b"idx", 2051)
print("itertools", [5, 6, 7], [[1]])
print("csv", "1,a")
print("scipy", 0.5)
print("pandas", 3)
print("PIL", (3, 2))
print("sklearn", [2.0])
print("subprocess", 42)
print("tf paths", True, True, True)
print("fetch", "float32", "float64")
PY
)
check "the real libraries, as python3 runs them" "$want" "$out"
check "plt.show() writes the figure beside the script" "tfsh: figure written to $PWD/world_fig1.png" \
  "$(grep '^tfsh: figure' err.txt)"
check "... a PNG" "89504e47" "$(head -c 4 world_fig1.png | od -An -tx1 | tr -d ' \n')"
check "logging is Python's" "done" "$(tail -1 err.txt)"
# Fetches are numpy arrays over the tensor's own buffer (no copy), never aliasing a variable.
cat >fetch.py <<'PY'
import numpy as np
import tensorflow as tf
x = tf.placeholder(tf.float32, [256, 256])
y = x * 2.0
v = tf.Variable(tf.ones([3]))
with tf.Session() as s:
    s.run(v.initializer)
    a = s.run(v)
    a[0] = 7.0
    r = s.run(y, {x: np.ones((256, 256), np.float32)})
    print(s.run(v).tolist(), a.tolist(), r.flags.owndata, r.flags.writeable, float(r.sum()))
PY
check "fetches: a view of the step's buffer; a variable's value is a copy" \
  "[1.0, 1.0, 1.0] [7.0, 1.0, 1.0] False True 131072.0" "$(timeout 60 "$TFSH" fetch.py 2>&1)"
MPLBACKEND=agg timeout 60 "$TFSH" -c 'import matplotlib; print(matplotlib.get_backend())' >backend.txt 2>&1
check "a user's MPLBACKEND wins" "agg" "$(cat backend.txt)"
finish
