# TF's own client training a small tf.keras model in graph mode (TF_USE_LEGACY_KERAS=1) on
# the session TARGET: Keras's fit runs callables (MakeCallable, RunCallable). Run by TF's Python
# (test_tf_peer.sh, on a TF cluster and on a tfsh one).   tf_client_keras.py TARGET
import sys
import numpy as np
import tensorflow as tf
target = sys.argv[1]
sess = tf.Session(target)
tf.keras.backend.set_session(sess)
np.random.seed(0)
x = np.random.rand(64, 4).astype(np.float32)
y = (x.sum(1, keepdims=True) > 2).astype(np.float32)
m = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,), kernel_initializer="ones"),
                         tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")])
m.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="binary_crossentropy")
h = m.fit(x, y, epochs=3, batch_size=16, verbose=0, shuffle=False)
print("loss", ["%.5f" % l for l in h.history["loss"]])
