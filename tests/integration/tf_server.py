# One task of a real TensorFlow cluster (TF's own gRPC server), for the tests that run
# beside TF (TF_PYTHON):  $TF_PYTHON tf_server.py SPEC_JSON JOB INDEX
# Prints "serving" when the server is up; gives up by itself after 120 s.
import json
import os
import sys
import threading

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow.compat.v1 as tf

server = tf.train.Server(tf.train.ClusterSpec(json.loads(sys.argv[1])), job_name=sys.argv[2],
                         task_index=int(sys.argv[3]))
print("serving", flush=True)
threading.Event().wait(120)
