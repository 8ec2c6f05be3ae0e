#!/usr/bin/env python3
"""Write shell/tf/api_v1.py.inc: the names of TF 1.x's API (tf.compat.v1 of the real
TensorFlow this runs under), so that tfsh binds every name TF gives a function it has, and
a name it lacks fails with "not implemented in tfsh" rather than an AttributeError.

Run under the oracle's TensorFlow, never by the build:
    /root/tfvenv/bin/python scripts/tf_oracle/api_names.py > shell/tf/api_v1.py.inc

Table, one line each (paths relative to tf):
    @PATH              a module (namespace)
    K PATH PATH ...    one object and every name it has; K is f (function), c (class),
                       o (any other object)
    = PATH VALUE       a plain constant (int, str or None), as Python writes it
Modules raw_ops, flags, app.flags and logging are not listed (tfsh has its own).
"""
import os
import sys
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.util import tf_decorator  # noqa: E402

SKIP = {"raw_ops", "compat.v1", "compat.v2", "flags", "app.flags", "logging"}
groups, order, mods = {}, [], []


def is_module(o):
    return isinstance(o, types.ModuleType) or type(o).__name__ == "KerasLazyLoader"


def walk(mod, path, depth):
    for n in sorted(dir(mod)):
        if n.startswith("_"):
            continue
        try:
            o = getattr(mod, n)
        except Exception:
            continue
        p = (path + "." if path else "") + n
        if p in SKIP:
            continue
        if is_module(o):
            name = getattr(o, "__name__", "") or ""
            if depth > 4 or not (name.startswith(("tensorflow", "tf_keras", "keras"))
                                 or type(o).__name__ == "KerasLazyLoader"):
                continue
            mods.append(p)
            walk(o, p, depth + 1)
            continue
        if o is None or isinstance(o, (int, str)) and not isinstance(o, bool):
            key = ("=", p)
        else:
            try:   # TF 2's dispatch and deprecation wrappers: group by what they wrap
                key = id(tf_decorator.unwrap(o)[1]) if callable(o) else id(o)
            except Exception:
                key = id(o)
        if key not in groups:
            groups[key] = (o, [])
            order.append(key)
        groups[key][1].append(p)


walk(tf, "", 0)
# TF 1.15 names that TF 2's compat.v1 no longer has (tf.estimator left TF in 2.16)
mods.append("estimator")
for n in ("Estimator", "EstimatorSpec", "RunConfig", "TrainSpec", "EvalSpec", "ModeKeys",
          "train_and_evaluate", "LinearClassifier", "LinearRegressor", "DNNClassifier",
          "DNNRegressor", "DNNLinearCombinedClassifier", "BaselineClassifier", "Exporter",
          "LatestExporter", "FinalExporter", "SessionRunHook"):
    groups[("x", n)] = (type if n[0].isupper() else len, ["estimator." + n])
    order.append(("x", n))
mods.append("estimator.inputs")
for n in ("numpy_input_fn", "pandas_input_fn"):
    groups[("x", n)] = (len, ["estimator.inputs." + n])
    order.append(("x", n))
out = sys.stdout
out.write('R"PY(\n')
for m in mods:
    out.write("@%s\n" % m)
for k in order:
    o, paths = groups[k]
    if isinstance(k, tuple) and k[0] == "=":
        last = paths[0].split(".")[-1]
        if any(w in last for w in ("VERSION", "COMPILER", "CXX", "MONOLITHIC")):
            continue   # tfsh says it is TF 1.15.5
        if isinstance(o, str) and ("\n" in o or ")PY" in o):
            continue
        out.write("= %s %r\n" % (paths[0], o))
        continue
    kind = "c" if isinstance(o, type) else "f" if callable(o) else "o"
    out.write("%s %s\n" % (kind, " ".join(paths)))
out.write(')PY"\n')
