# The uint8 dtype: numpy arrays, feeding and fetching, Cast, DecodeRaw, constants.
# tf_uint8.out is TF's output.
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

a = np.array([[0, 7, 200], [255, 1, 128]], dtype=np.uint8)
print(repr(a))
print(a)
print(a.dtype, a.shape, a[1, 0], a[0])
print(repr(a.astype(np.float32)))
b = a.tobytes()
print(b, a[1].tobytes())
print(repr(np.frombuffer(b, dtype=np.uint8)))
print(tf.uint8, tf.uint8.is_integer, tf.uint8.size, tf.as_dtype("uint8"))

p = tf.placeholder(tf.uint8, [None, 3])
f = tf.cast(p, tf.float32) * (1.0 / 255)
r = tf.reshape(tf.transpose(p), [-1])
c = tf.constant([1, 2, 250], dtype=tf.uint8, name="c")
print(p, f, r, c)
x = tf.constant([-1.5, 0.7, 255.9, 256.0, 300.0, -300.0, 1e10], tf.float32)
i = tf.constant([-1, 255, 256, 300, -300], tf.int32)
raw = tf.constant([b"\x01\x02\x03\x04", b"\xff\x00\x00\x80"])
d8 = tf.decode_raw(raw, tf.uint8)
d32 = tf.decode_raw(raw, tf.int32)
dbe = tf.io.decode_raw(raw, tf.int32, little_endian=False)
print(d8, d32)
with tf.Session() as s:
    print(repr(s.run(f, {p: a})))
    print(repr(s.run(r, {p: a})))
    print(s.run([p, r], {p: a}))   # a fed tensor fetched is the fed value
    print(repr(s.run(tf.concat([c, c], 0))))
    print(repr(s.run(tf.gather(c, [2, 0]))))
    print(repr(s.run(tf.stack([c, c])[:, 1:])))
    print(repr(s.run(tf.cast(x, tf.uint8))))
    print(repr(s.run(tf.cast(i, tf.uint8))))
    print(repr(s.run(tf.cast(c, tf.int64))))
    print(repr(s.run(d8)))
    print(repr(s.run(d32)))
    print(repr(s.run(dbe)))
    print(repr(s.run(tf.decode_raw(tf.constant(b"\x00\x00\x80\x3f"), tf.float32))))
    print(s.run(tf.decode_raw(tf.constant([b"", b""]), tf.float32)).shape)
    v = s.run(c)
    print(type(v[0]).__name__, v.dtype, v[2] + 0)
    for bad in ([b"\x01\x02\x03\x04", b"\xff"], [b"\x01\x02\x03"]):
        try:
            s.run(tf.decode_raw(tf.constant(bad), tf.int32))
        except tf.errors.InvalidArgumentError as e:
            print("InvalidArgumentError:", [l for l in e.message.splitlines() if "DecodeRaw " in l][0].strip())
