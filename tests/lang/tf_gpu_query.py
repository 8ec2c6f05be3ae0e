# tf.test.is_gpu_available() and tf.test.gpu_device_name(), as legacy scripts ask before
# choosing a device: False and '' where there is no GPU (here: CUDA_VISIBLE_DEVICES hides
# any, so that a machine with one prints the same).
# Expected output: real TensorFlow's (tensorflow-cpu) (scripts/tf_oracle/run.sh --write).
import os

os.environ["CUDA_VISIBLE_DEVICES"] = ""
import tensorflow as tf

print(tf.test.is_gpu_available())
print(tf.test.is_gpu_available(cuda_only=True))
print(tf.test.is_gpu_available(True, (3, 5)))
print(repr(tf.test.gpu_device_name()))
if tf.test.gpu_device_name():
    print("Default GPU Device: {}".format(tf.test.gpu_device_name()))
else:
    print("Please install GPU version of TF")
device = tf.test.gpu_device_name() or "/cpu:0"
with tf.device(device):
    x = tf.constant([1.0, 2.0]) * 2
with tf.Session() as sess:
    print(device, sess.run(x))
