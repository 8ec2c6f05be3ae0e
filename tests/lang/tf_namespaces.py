# TF 1.15's namespaces: every name of a function tfsh has (tf.random.*, tf.math.*,
# tf.linalg.*, tf.compat.v1.*, ...) is that function; expected output from real TensorFlow
# (scripts/tf_oracle/run.sh --write).
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
import tensorflow as tf2
from tensorflow.compat.v1 import random as tfr
from tensorflow.examples.tutorials.mnist import mnist

print(tf is tf2.compat.v1, tf.executing_eagerly())
print(tf.random.truncated_normal([2]).shape, tfr.uniform([3, 1]).shape)
print(tf.random.normal([1, 2]).dtype, tf.random.uniform([2], maxval=5, dtype=tf.int32).dtype)
print(tf.dtypes.float32, tf.dtypes.as_dtype("int64"), tf.dtypes.int32 == tf.int32)
pairs = [
    ("random.normal", "random_normal"), ("random.uniform", "random_uniform"),
    ("random.set_random_seed", "set_random_seed"), ("math.log", "log"),
    ("math.reduce_sum", "reduce_sum"), ("math.argmax", "argmax"), ("math.exp", "exp"),
    ("math.sqrt", "sqrt"), ("math.equal", "equal"), ("math.maximum", "maximum"),
    ("linalg.matmul", "matmul"), ("nn.relu", "nn.relu"), ("math.sigmoid", "sigmoid"),
    ("math.tanh", "tanh"), ("dtypes.cast", "cast"), ("math.add_n", "add_n"),
    ("compat.v1.reduce_mean", "reduce_mean"), ("compat.v1.random.normal", "random_normal"),
    ("initializers.glorot_uniform", "glorot_uniform_initializer"),
    ("math.in_top_k", "nn.in_top_k"), ("math.softplus", "nn.softplus"),
]


def get(path):
    o = tf
    for p in path.split("."):
        o = getattr(o, p)
    return o


for a, b in pairs:
    print(a, "is", b, get(a) is get(b))
for ns in ["random", "linalg", "math", "dtypes", "data", "image", "strings", "sparse",
           "saved_model", "graph_util", "test", "keras", "keras.layers",
           "compat.v1.random", "compat.v1.linalg", "io", "nn", "train", "summary", "layers",
           "losses", "metrics", "initializers", "errors", "debugging", "bitwise", "signal"]:
    print(ns, type(get(ns)).__name__ in ("module", "_Namespace", "TFModuleWrapper", "KerasLazyLoader"))
x = tf.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])
logits = mnist.inference(x, 8, 4)
print(mnist.NUM_CLASSES, logits.shape, [v.name for v in tf.trainable_variables()])
labels = tf.placeholder(tf.int32, [None])
print(mnist.loss(logits, labels).shape, mnist.evaluation(logits, labels).dtype)
print(mnist.training(mnist.loss(logits, labels), 0.1).type)
print(tf.compat.as_text("abc"), tf.data.AUTOTUNE, tf.errors.ABORTED)
