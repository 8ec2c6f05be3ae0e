class ClusterError(RuntimeError):
    pass


def connect(task):
    raise ClusterError("task %s never started" % task)


try:
    connect("/job:ps/task:0")
except ValueError:
    print("not caught here")
