# A shim so that TF1 graph code runs unchanged on a TensorFlow 2 wheel: with this folder on
# PYTHONPATH, `import tensorflow as tf` gives tensorflow.compat.v1 with v2 behaviour
# disabled (graph mode, ref variables, tf.train.Server / MonitoredTrainingSession /
# SyncReplicasOptimizer), and `from tensorflow.examples.tutorials.mnist import input_data`
# gives a small numpy IDX reader (the TF2 wheels no longer ship that module).
# Used only by the side-by-side benchmarks (scripts/bench/vs_tf.sh); never by the build.
import importlib
import os
import sys

_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_shim = sys.modules.pop("tensorflow")
_real = importlib.import_module("tensorflow")
_v1 = _real.compat.v1
_v1.logging.set_verbosity(_v1.logging.ERROR)
_v1.disable_v2_behavior()

import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "tensorflow.examples.tutorials.mnist.input_data",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "_input_data.py"))
_input_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_input_data)

for _name in ("examples", "examples.tutorials", "examples.tutorials.mnist"):
    _m = type(sys)("tensorflow." + _name)
    _m.__path__ = []
    sys.modules["tensorflow." + _name] = _m
sys.modules["tensorflow.examples"].tutorials = sys.modules["tensorflow.examples.tutorials"]
sys.modules["tensorflow.examples.tutorials"].mnist = sys.modules["tensorflow.examples.tutorials.mnist"]
sys.modules["tensorflow.examples.tutorials.mnist"].input_data = _input_data
sys.modules["tensorflow.examples.tutorials.mnist.input_data"] = _input_data
sys.modules["tensorflow"] = _v1
