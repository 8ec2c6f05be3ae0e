# SlurmClusterResolver on faked Slurm environments. resolver.out is what real TensorFlow
# (2.21, tf.distribute.cluster_resolver.SlurmClusterResolver) printed for this script:
#   python3 tests/integration/slurm/resolver.py > tests/integration/slurm/resolver.out
# test_slurm.sh runs it under tfsh and expects the same lines.
import os, json
import tensorflow as tf
R = tf.distribute.cluster_resolver.SlurmClusterResolver


def run(label, env, **kw):
    for k in [k for k in os.environ if k.startswith("SLURM_") or k == "CUDA_VISIBLE_DEVICES"]:
        del os.environ[k]
    os.environ.update(env)
    try:
        r = R(**kw)
        spec = r.cluster_spec().as_dict()
        print(label, "=>", json.dumps(spec, sort_keys=True), r.task_type, r.task_id, r.master(),
              "CVD=%s" % os.environ.get("CUDA_VISIBLE_DEVICES"))
    except Exception as e:
        print(label, "=>", type(e).__name__, e)


base = {"SLURM_STEP_NUM_TASKS": "3", "SLURM_STEP_NODELIST": "node[01-02]",
        "SLURM_STEP_TASKS_PER_NODE": "2,1", "CUDA_VISIBLE_DEVICES": "0,1"}
for r in range(3):
    run("A rank %d" % r, dict(base, SLURM_PROCID=str(r)), jobs={"ps": 1, "worker": 2})
env = {"SLURM_STEP_NUM_TASKS": "6", "SLURM_STEP_NODELIST": "n[1-3]", "SLURM_STEP_TASKS_PER_NODE": "2(x3)"}
for r in [0, 3, 5]:
    run("B rank %d" % r, dict(env, SLURM_PROCID=str(r)), port_base=2222, gpus_per_node=4, gpus_per_task=2)
env = {"SLURM_STEP_NUM_TASKS": "4", "SLURM_STEP_NODELIST": "zeta,alpha", "CUDA_VISIBLE_DEVICES": "0,1,2,3"}
for r in [0, 1, 2, 3]:
    run("C rank %d" % r, dict(env, SLURM_PROCID=str(r)), jobs={"worker": 3, "chief": 1}, tasks_per_node=2)
for r in [1, 2]:
    run("D rank %d" % r, {"SLURM_PROCID": str(r), "CUDA_VISIBLE_DEVICES": "7"}, jobs={"ps": 1, "worker": 2},
        tasks_per_node={"h2": 1, "h1": 2}, gpus_per_node=2, gpus_per_task=1, auto_set_gpu=False)
run("E too many gpus", dict(base, SLURM_PROCID="0"), jobs={"ps": 1, "worker": 2}, gpus_per_task=2)
run("F tasks mismatch", dict(base, SLURM_PROCID="0"), jobs={"ps": 1, "worker": 3})
run("G no procid", {}, jobs={"ps": 1})
run("H worker default", dict(base, SLURM_PROCID="1"))
