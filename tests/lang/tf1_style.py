"""A legacy TF1-style driver: flags via argparse, def main(_), %-formatting."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import argparse
import sys

FLAGS = None


def train(step, lr):
    loss = 1.0 / (step + 1)
    return loss * lr


def main(_):
    cluster = {"ps": ["localhost:2222"], "worker": ["localhost:2223", "localhost:2224"]}
    for job, tasks in sorted(cluster.items()):
        for i, addr in enumerate(tasks):
            print("/job:%s/task:%d -> %s" % (job, i, addr))
    for step in range(FLAGS.steps):
        loss = train(step, FLAGS.learning_rate)
        if step % 2 == 0:
            print("step %3d: loss = %.4f" % (step, loss))
    print("done after {} steps with lr={:.3f}".format(FLAGS.steps, FLAGS.learning_rate))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5, help="Number of steps.")
    parser.add_argument("--learning_rate", type=float, default=0.1)
    parser.add_argument("--job_name", type=str, default="", help="One of 'ps', 'worker'")
    FLAGS, unparsed = parser.parse_known_args()
    main([sys.argv[0]] + unparsed)
