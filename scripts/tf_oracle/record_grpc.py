# Records what real TensorFlow servers answer over gRPC, for tests that run without TF
# (tests/data/tf_grpc/*.hex, one hex line each). Run with TensorFlow's Python:
#   $TF_PYTHON scripts/tf_oracle/record_grpc.py tests/data/tf_grpc
# It starts a cluster of 1 ps + 2 workers in this process, on free loopback ports, and
# calls WorkerService.GetStatus on each task with an empty request.
import os
import socket
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import grpc
import tensorflow.compat.v1 as tf


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


out = sys.argv[1]
spec = {"ps": ["localhost:%d" % free_port()],
        "worker": ["localhost:%d" % free_port(), "localhost:%d" % free_port()]}
servers = [tf.train.Server(tf.train.ClusterSpec(spec), job_name=job, task_index=i)
           for job in ("ps", "worker") for i in range(len(spec[job]))]
for job in ("ps", "worker"):
    for i, addr in enumerate(spec[job]):
        channel = grpc.insecure_channel(addr)
        status = channel.unary_unary("/tensorflow.WorkerService/GetStatus")
        reply = status(b"", timeout=10)
        with open(os.path.join(out, "get_status_%s_%d.hex" % (job, i)), "w") as f:
            f.write(reply.hex() + "\n")
        print("%s task %d: %d bytes" % (job, i, len(reply)))
with open(os.path.join(out, "VERSION"), "w") as f:
    f.write("TensorFlow %s, grpcio %s\n" % (tf.__version__, grpc.__version__))
