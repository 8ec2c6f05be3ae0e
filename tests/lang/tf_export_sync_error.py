# A graph with SyncReplicasOptimizer's accumulators (tfsh's own _AccumApply/_AccumTake/_Token*
# ops, which have no TensorFlow form): tf.train.export_meta_graph refuses it naming the node,
# while Saver.save still writes its .meta, which tfsh imports again. tfsh-only (TF would
# write ConditionalAccumulator ops); output written by hand.
import os
import shutil
import tempfile
import tensorflow as tf

d = tempfile.mkdtemp()
gs = tf.train.get_or_create_global_step()
w = tf.Variable([1.0, 2.0], name="w")
loss = tf.reduce_sum(tf.square(w))
opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1,
                                     total_num_replicas=1)
train_op = opt.minimize(loss, global_step=gs)
try:
    tf.train.export_meta_graph(os.path.join(d, "sync.meta"))
except ValueError as e:
    print("ValueError:", e)
saver = tf.train.Saver()
try:
    saver.export_meta_graph(os.path.join(d, "sync.meta"))
except ValueError as e:
    print("ValueError:", str(e)[:60])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    path = saver.save(sess, os.path.join(d, "model.ckpt"))
print(sorted(os.listdir(d)))
with tf.Graph().as_default() as g:
    s = tf.train.import_meta_graph(path + ".meta")
    print(sorted(set(op.type for op in g.get_operations() if op.type.startswith("_"))))
    with tf.Session() as sess:
        s.restore(sess, path)
        print(sess.run("w:0"))
shutil.rmtree(d)
