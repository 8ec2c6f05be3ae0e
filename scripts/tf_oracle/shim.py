"""Run a TF1 program under real TensorFlow as TF 1.15 ran it: `import tensorflow as tf` is
tf.compat.v1 with v2 behaviour disabled, numpy prints as numpy 1.x did, and the tutorial
modules TF 1.15 shipped (tensorflow.examples.tutorials.mnist: input_data, mnist) exist.
Usage: python shim.py PROGRAM.py [ARGS...]  (see run.sh). Never used by the build or tests."""
import os
import runpy
import sys
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import numpy as np  # noqa: E402

if int(np.__version__.split(".")[0]) >= 2:
    np.set_printoptions(legacy="1.25")   # 1.0, not np.float32(1.0): numpy 1.14–1.26's printing
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.WARN)
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, here)
sys.modules["tensorflow"] = tf


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


import input_data  # noqa: E402  (this directory's own reader of IDX files)

mnist_src = os.path.join(root, "shell", "tf", "mnist_tutorial.py.inc")
mnist = _module("tensorflow.examples.tutorials.mnist.mnist")
with open(mnist_src) as f:
    src = f.read()
src = src[src.index('R"PY(') + 5:src.rindex(')PY"')]
exec(compile(src, mnist_src, "exec"), mnist.__dict__)
pkg = _module("tensorflow.examples.tutorials.mnist", input_data=input_data, mnist=mnist)
sys.modules["tensorflow.examples.tutorials.mnist.input_data"] = input_data
tut = _module("tensorflow.examples.tutorials", mnist=pkg)
tf.examples = _module("tensorflow.examples", tutorials=tut)

prog = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(prog))
os.chdir(os.path.dirname(os.path.abspath(prog)))
runpy.run_path(os.path.basename(prog), run_name="__main__")
