# Reshape's shape function against a partly known input, as TF checks it when the graph is
# built: the known dims must divide the target (TF 2.21 says the same, in its newer node format).
import tensorflow as tf
x = tf.placeholder(tf.float32, [None, 2], name="x")
for shape in ([5], [6], [-1, 3]):
    try:
        print(tf.reshape(x, shape).shape)
    except ValueError as e:
        print("ValueError:", e)
