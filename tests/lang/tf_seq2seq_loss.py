# tf.contrib.seq2seq.sequence_loss (hunkim's lab-12-2 char-seq RNN uses it) against a numpy
# reference of its definition, for each averaging; the shapes as TF documents them.
import numpy as np
import tensorflow as tf
rng = np.random.RandomState(0)
lg = rng.randn(2, 3, 4).astype(np.float32)
tg = np.array([[0, 1, 3], [2, 2, 1]], np.int32)
w = np.array([[1, 1, 0], [1, 0.5, 1]], np.float32)
def ref(avg_t, avg_b):
    p = np.exp(lg - lg.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    ce = -np.log(np.take_along_axis(p, tg[..., None], -1)[..., 0]) * w
    if avg_t and avg_b: return ce.sum() / (w.sum() + 1e-12)
    if avg_t: return ce.sum(1) / (w.sum(1) + 1e-12)
    if avg_b: return ce.sum(0) / (w.sum(0) + 1e-12)
    return ce
with tf.Session() as s:
    for at, ab in ((True, True), (True, False), (False, True), (False, False)):
        got = s.run(tf.contrib.seq2seq.sequence_loss(lg, tg, w, average_across_timesteps=at, average_across_batch=ab))
        print(at, ab, np.allclose(got, ref(at, ab), rtol=1e-5, atol=1e-6), np.shape(got))
