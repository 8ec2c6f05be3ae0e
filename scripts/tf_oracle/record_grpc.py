# Records what real TensorFlow servers say over gRPC, for tests that run without TF
# (tests/data/tf_grpc). Run with TensorFlow's Python:
#   $TF_PYTHON scripts/tf_oracle/record_grpc.py tests/data/tf_grpc [TFSH]
# 1. A cluster of 1 ps + 2 workers in this process, on free loopback ports: each task's
#    reply to WorkerService.GetStatus (get_status_JOB_I.hex, one hex line).
# 2. With TFSH: a whole tfsh-to-TF session. A proxy in front of a TF worker forwards every
#    call and writes it down while TFSH runs tests/integration/tf_peer_tiny.py through it
#    (TFSH_PEER=tf): session_exchange.txt (a call a line: method, request hex, status
#    code, reply hex or error text) and session_tiny.out (what tfsh printed).
# 3. With TFSH: the other way, TF's own client running tf_peer_tiny.py on `TFSH server
#    --grpc` through the proxy: client_exchange.txt and client_tiny.out. (Its answers are
#    exact small integers, so they replay byte for byte on any CPU.)
# 4. With TFSH and `views` after it (only this part then runs): tfsh's views on a TF master,
#    tests/integration/tf_peer_views.py run by TFSH on a TF worker of two CPU devices through
#    the proxy: views_exchange.txt and views_tiny.out (test_tf_views_replay.sh).
# 5. With TFSH and `devices` after it (only this part then runs): TF's client running
#    tests/integration/tf_client_devices.py (ListDevices, Reset) on a cluster of two
#    `TFSH server` tasks, the first with --grpc: devices_exchange.txt and devices_tiny.out
#    (test_tf_client_replay.sh; its devices' incarnations differ from run to run).
# 6. With TFSH and `callables` after it (only this part then runs): TF's client running
#    tests/integration/tf_client_callables.py (MakeCallable, RunCallable, ReleaseCallable,
#    as tf.keras's backend functions use them) on the same two-task cluster:
#    callables_exchange.txt and callables_tiny.out (test_tf_client_replay.sh).
import os
import socket
import subprocess
import sys
from concurrent import futures

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
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
part = sys.argv[3] if len(sys.argv) > 3 else ""
views_only = part in ("views", "devices", "callables")
spec = {"ps": ["localhost:%d" % free_port()],
        "worker": ["localhost:%d" % free_port(), "localhost:%d" % free_port()]}
servers = [] if views_only else [tf.train.Server(tf.train.ClusterSpec(spec), job_name=job, task_index=i)
                                  for job in ("ps", "worker") for i in range(len(spec[job]))]
for job in () if views_only else ("ps", "worker"):
    for i, addr in enumerate(spec[job]):
        channel = grpc.insecure_channel(addr)
        status = channel.unary_unary("/tensorflow.WorkerService/GetStatus")
        reply = status(b"", timeout=10)
        with open(os.path.join(out, "get_status_%s_%d.hex" % (job, i)), "w") as f:
            f.write(reply.hex() + "\n")
        print("%s task %d: %d bytes" % (job, i, len(reply)))
with open(os.path.join(out, "VERSION"), "a" if views_only else "w") as f:
    f.write(part + ": " if views_only else "")
    f.write("recorded by scripts/tf_oracle/record_grpc.py from TensorFlow %s (grpcio %s)\n" % (tf.__version__, grpc.__version__))


class Recorder(grpc.GenericRpcHandler):
    """A proxy in front of upstream that forwards every call and writes it down."""

    def __init__(self, upstream):
        self.upstream, self.log = grpc.insecure_channel(upstream), []

    def service(self, details):
        method, call = details.method, self.upstream.unary_unary(details.method)

        def handle(req, ctx):
            try:
                reply = call(req, timeout=60)
            except grpc.RpcError as e:
                self.log.append("%s %s %d %s" % (method, req.hex(), e.code().value[0],
                                                 e.details().replace("\n", "\\n")))
                ctx.abort(e.code(), e.details())
            self.log.append("%s %s 0 %s" % (method, req.hex(), reply.hex()))
            return reply
        return grpc.unary_unary_rpc_method_handler(handle)


def record(upstream, client, name, cwd=None):
    """Runs client (argv, with the proxy's target appended) through a recording proxy."""
    rec, port = Recorder(upstream), free_port()
    proxy = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[rec])
    proxy.add_insecure_port("127.0.0.1:%d" % port)
    proxy.start()
    run = subprocess.run(client + ["grpc://localhost:%d" % port], env=dict(os.environ, TFSH_PEER="tf"),
                         capture_output=True, text=True, timeout=120, cwd=cwd)
    proxy.stop(0)
    with open(os.path.join(out, name + "_tiny.out"), "w") as f:
        f.write(run.stdout)
    with open(os.path.join(out, name + "_exchange.txt"), "w") as f:
        f.write("\n".join(rec.log) + "\n")
    print("%s: %d calls recorded, client exit %d" % (name, len(rec.log), run.returncode))
    if run.returncode:
        sys.stderr.write(run.stderr)


def tfsh_cluster(tfsh, n):
    """n tasks of `tfsh server`, the first serving TF's MasterService: (processes, its port)."""
    tasks, grpc_port = [free_port() for _ in range(n)], free_port()
    spec = '{"worker": [%s]}' % ", ".join('"localhost:%d"' % p for p in tasks)
    procs = [subprocess.Popen([tfsh, "server", "--cluster", spec, "--job", "worker", "--task", str(i)] +
                              (["--grpc", "localhost:%d" % grpc_port] if i == 0 else []),
                              stdout=subprocess.PIPE, text=True) for i in range(n)]
    for p in procs:
        while "serving on" not in p.stdout.readline():
            pass
    return procs, grpc_port


if part in ("devices", "callables"):
    procs, grpc_port = tfsh_cluster(os.path.abspath(sys.argv[2]), 2)
    record("localhost:%d" % grpc_port, [sys.executable, os.path.join(root, "scripts/tf_oracle/shim.py"),
                                        os.path.join(root, "tests/integration/tf_client_%s.py" % part)], part)
    for p in procs:
        p.terminate()
elif part == "views":
    import tempfile
    tf_port = free_port()
    server = tf.train.Server(tf.train.ClusterSpec({"worker": ["localhost:%d" % tf_port]}), job_name="worker",
                             task_index=0, config=tf.ConfigProto(device_count={"CPU": 2}))
    with tempfile.TemporaryDirectory() as tmp:
        record("localhost:%d" % tf_port, [os.path.abspath(sys.argv[2]), os.path.join(root, "tests/integration/tf_peer_views.py"),
                                          "/job:worker/task:0/device:CPU:0", "/job:worker/task:0/device:CPU:1"],
               "views", cwd=tmp)
elif len(sys.argv) > 2:
    tfsh = sys.argv[2]
    tiny = os.path.join(root, "tests/integration/tf_peer_tiny.py")
    tf_port = free_port()
    server = tf.train.Server(tf.train.ClusterSpec({"worker": ["localhost:%d" % tf_port]}), job_name="worker",
                             task_index=0)
    record("localhost:%d" % tf_port, [tfsh, tiny], "session")
    procs, grpc_port = tfsh_cluster(tfsh, 1)
    record("localhost:%d" % grpc_port, [sys.executable, os.path.join(root, "scripts/tf_oracle/shim.py"), tiny],
           "client")
    procs[0].terminate()
