# Gradients written in Python: tf.RegisterGradient with Graph.gradient_override_map (guided
# backprop's relu, a py_func's gradient, a clipped Identity), gen_nn_ops inside one, and
# what goes wrong (a second registration, too few gradients, an error inside). Expected
# output from real TF through scripts/tf_oracle.
import numpy as np
import tensorflow as tf
from tensorflow.python.framework import ops
from tensorflow.python.ops import gen_nn_ops


@ops.RegisterGradient("GuidedRelu")
def _guided_relu(op, grad):
    return tf.where(0. < grad, gen_nn_ops.relu_grad(grad, op.outputs[0]), tf.zeros_like(grad))


@tf.RegisterGradient("DoubleIt")
def _double(op, grad):
    return grad * 2.0


@tf.RegisterGradient("ClipIt")
def _clip(op, grad):
    return tf.clip_by_value(grad, -0.5, 0.5)


@tf.RegisterGradient("TooFew")
def _too_few(op, grad):
    return [grad, grad]


@tf.RegisterGradient("Boom")
def _boom(op, grad):
    raise RuntimeError("boom in %s" % op.type)


tf.NotDifferentiable("SomethingOfMine")
g = tf.get_default_graph()
x = tf.constant(np.array([[-1.0, 2.0, 3.0, -4.0]], np.float32))
w = tf.constant(np.array([[1.0], [-1.0], [2.0], [1.0]], np.float32))
with g.gradient_override_map({"Relu": "GuidedRelu"}):
    h = tf.nn.relu(x * tf.constant([[1.0, 1.0, -1.0, -1.0]]))
plain = tf.nn.relu(x)
y = tf.matmul(h, w) + tf.reduce_sum(plain)
with g.gradient_override_map({"PyFunc": "DoubleIt", "Identity": "ClipIt"}):
    p = tf.py_func(lambda v: (v * 3.0).astype(np.float32), [x], tf.float32)
    c = tf.identity(x * 4.0)
print(h.op.get_attr("_gradient_op_type"), p.op.get_attr("_gradient_op_type"))   # bytes, as TF's
grads = tf.gradients([y], [x])[0]
gp = tf.gradients(p, x)[0]
gc = tf.gradients(c, x)[0]
with tf.Session() as s:
    print(s.run(grads).tolist())
    print(s.run(gp).tolist(), s.run(gc).tolist())
try:
    tf.RegisterGradient("GuidedRelu")(_guided_relu)
except KeyError as e:
    print("KeyError")
try:
    tf.RegisterGradient("Relu")(_guided_relu)
except KeyError as e:
    print("KeyError")
for name in ("TooFew", "Boom"):
    with g.gradient_override_map({"Relu": name}):
        r = tf.nn.relu(x)
    try:
        tf.gradients(r, x)
        print("no error")
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, str(e) if name == "Boom" else "")
