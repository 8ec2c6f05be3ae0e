#!/usr/bin/env bash
# The Kubernetes example (scripts/examples/k8s/tfsh-cluster.yaml): its objects are the
# shape the man page describes (a headless Service, one StatefulSet per job whose
# replicas match the cluster spec), and the container's script, run here as pod
# worker-1 would run it (with a stand-in tfsh that prints what it was given), builds a
# TF_CONFIG that `tfsh lint` accepts and that names that pod's task.
. "$(dirname "$0")/lib.sh"
yaml=$TFSH_SRC/scripts/examples/k8s/tfsh-cluster.yaml
shape=$(python3 - "$yaml" <<'PY' 2>&1
import json, re, sys
try:
    import yaml
except ImportError:
    print("skip: no PyYAML")
    sys.exit()
docs = list(yaml.safe_load_all(open(sys.argv[1])))
svc = [d for d in docs if d["kind"] == "Service"][0]
sets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "StatefulSet"}
scripts = {j: re.sub(r"#.*", "", s["spec"]["template"]["spec"]["containers"][0]["args"][0]) for j, s in sets.items()}
script = scripts["ps"]
cluster = json.loads(re.search(r"CLUSTER='(.*)'", script).group(1))
print("headless" if svc["spec"]["clusterIP"] == "None" else "not headless",
      sorted(sets), {j: sets[j]["spec"]["replicas"] for j in sorted(sets)},
      {j: len(cluster[j]) for j in sorted(cluster)},
      all(s["spec"]["serviceName"] == svc["metadata"]["name"] for s in sets.values()),
      len(set(scripts.values())) == 1)
PY
)
if [ "$shape" != "skip: no PyYAML" ]; then
  check "a headless Service, one StatefulSet per job, replicas as in the spec, one script" \
    "headless ['ps', 'worker'] {'ps': 1, 'worker': 2} {'ps': 1, 'worker': 2} True True" "$shape"
fi
mkdir -p "$WORK/bin"
cat >"$WORK/bin/tfsh" <<'SH'
#!/bin/sh
printf '%s\n' "$TF_CONFIG" >"$OUT/tf_config"
printf '%s\n' "$*" >"$OUT/args"
SH
chmod +x "$WORK/bin/tfsh"
sed -n '/# BEGIN task script/,/# END task script/p' "$yaml" | sed 's/^ *//' | head -6 >"$WORK/task.sh"
OUT=$WORK HOSTNAME=worker-1 JOB=worker PATH=$WORK/bin:$PATH sh "$WORK/task.sh"
check "worker-1's TF_CONFIG" \
  '{"cluster": {"ps": ["ps-0.tfsh:2222"], "worker": ["worker-0.tfsh:2222", "worker-1.tfsh:2222"]}, "task": {"type": "worker", "index": 1}}' \
  "$(cat "$WORK/tf_config")"
check "the server it starts" "server --bind 0.0.0.0 --cluster-key /etc/tfsh/cluster.key" "$(cat "$WORK/args")"
lint=$(TF_CONFIG=$(cat "$WORK/tf_config") "$TFSH" lint --tf-config 2>&1)
check "tfsh lint finds nothing wrong but the pod names, which resolve only in the cluster" "3 0" \
  "$(echo "$lint" | grep -c "does not resolve") $(echo "$lint" | grep -vc "does not resolve")"
finish
