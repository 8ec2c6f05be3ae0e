# Saver.save into a directory that does not exist yet makes it, as TF's SaveV2 does (one
# level, TF's CreateDir: two missing levels are TF's ValueError); the checkpoint state
# file goes beside the checkpoint, and restore reads it back.
# Expected output: real TensorFlow's (scripts/tf_oracle/run.sh --write).
import os
import shutil
import tempfile

import tensorflow as tf

root = tempfile.mkdtemp()
try:
    v = tf.Variable([1.0, 2.0], name="v")
    step = tf.Variable(0, name="global_step", trainable=False)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, os.path.join(root, "ckpt", "model.ckpt"))
        print(os.path.relpath(path, root))
        print(sorted(os.listdir(os.path.join(root, "ckpt"))))
        path = saver.save(sess, os.path.join(root, "train_logs", "model"), global_step=7)
        print(os.path.relpath(path, root))
        print(os.path.relpath(tf.train.latest_checkpoint(os.path.join(root, "train_logs")), root))
        sess.run(v.assign([5.0, 6.0]))
        saver.restore(sess, path)
        print(sess.run(v))
        try:
            saver.save(sess, os.path.join(root, "a", "b", "model"))
        except ValueError as e:
            print("ValueError:", str(e).replace(root, "ROOT"))
        print(sorted(os.listdir(root)))
finally:
    shutil.rmtree(root)
