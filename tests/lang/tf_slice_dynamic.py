# tensor[...] with tensor bounds and tf.strided_slice with tensors in begin/end (the PTB
# reader slices at i * num_steps): the static shapes TF infers without the bounds' values
# (the rank, and the dimensions the masks decide) and the values. Expected output from TF.
import tensorflow as tf
x = tf.reshape(tf.range(24), [4, 6])
p = tf.placeholder(tf.int32, [])
for t in (x[0:p], x[p], x[:, p:p + 2], x[p:, None, ::2], x[..., p], x[p, 1:3],
          tf.strided_slice(x, [0, p], [4, p + 1]), x[1:p, 2]):
    print(t.get_shape())
with tf.Session() as s:
    print(s.run(x[p:, None, ::2], {p: 2}).tolist(), s.run(x[..., p], {p: 5}).tolist())
