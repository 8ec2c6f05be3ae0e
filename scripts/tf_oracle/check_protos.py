#!/usr/bin/env python3
"""Check runtime/proto/*.proto (written for tfsh from TF's published field numbers) against
the descriptors of an installed TensorFlow: every field tfsh declares must have TF's number,
and a compatible wire type. Run with TF's Python: /root/tfvenv/bin/python3 THIS.
Exit 0 and "ok" when every field agrees; 77 when TensorFlow is not importable."""
import os
import re
import sys

try:
    from tensorflow.core.framework import (attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2,
                                           tensor_shape_pb2, tensor_slice_pb2, versions_pb2,
                                           summary_pb2, op_def_pb2, variable_pb2)
    try:
        from tensorflow.core.framework import histogram_pb2
    except Exception:  # older TF: HistogramProto lives in summary.proto
        histogram_pb2 = summary_pb2
    from tensorflow.core.protobuf import meta_graph_pb2, saver_pb2, tensor_bundle_pb2
    from tensorflow.core.util import event_pb2
    from tensorflow.core.framework import step_stats_pb2, tensor_description_pb2, allocation_description_pb2
    from tensorflow.core.protobuf import config_pb2
except Exception as e:  # noqa
    print("skip: TensorFlow not importable (%s)" % e)
    sys.exit(77)

mods = [attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2, tensor_shape_pb2, tensor_slice_pb2,
        versions_pb2, summary_pb2, histogram_pb2, op_def_pb2, variable_pb2, meta_graph_pb2, saver_pb2, tensor_bundle_pb2, event_pb2,
        step_stats_pb2, tensor_description_pb2, allocation_description_pb2, config_pb2]
tf = {}


def walk(d, prefix):
    tf[prefix + d.name] = d
    for n in d.nested_types:
        walk(n, prefix + d.name + ".")


def walk_file(fd, seen):
    if fd.name in seen:
        return
    seen.add(fd.name)
    for d in fd.message_types_by_name.values():
        walk(d, "")
    for dep in fd.dependencies:
        walk_file(dep, seen)


seen = set()
for m in mods:
    walk_file(m.DESCRIPTOR, seen)

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runtime", "proto")
bad = 0
checked = 0
for fn in sorted(os.listdir(root)):
    if not fn.endswith(".proto"):
        continue
    stack = []
    for line in open(os.path.join(root, fn)):
        line = line.split("//")[0].strip()
        m = re.match(r"(message|enum)\s+(\w+)\s*\{", line)
        if m:
            stack.append((m.group(1), m.group(2)))
            continue
        if line.startswith("oneof"):
            stack.append(("oneof", ""))
            continue
        if line == "}":
            stack.pop()
            continue
        m = re.match(r"(repeated\s+)?([\w.]+)\s+(\w+)\s*=\s*(\d+)", line)
        if m and stack and stack[-1][0] in ("message", "oneof"):
            msgs = [s[1] for s in stack if s[0] == "message"]
            name = ".".join(msgs)
            field, num = m.group(3), int(m.group(4))
            if name in ("AttrEntry", "CollectionEntry"):   # tfsh's names for TF's map entries
                continue
            d = tf.get(name)
            if d is None:
                print("%s: message %s: not in TensorFlow" % (fn, name))
                bad += 1
                continue
            f = d.fields_by_name.get(field)
            checked += 1
            if f is None:
                print("%s: %s.%s: no such field in TensorFlow" % (fn, name, field))
                bad += 1
            elif f.number != num:
                print("%s: %s.%s = %d, TensorFlow says %d" % (fn, name, field, num, f.number))
                bad += 1
            elif bool(m.group(1)) != (getattr(f, "is_repeated", None) if hasattr(f, "is_repeated") else f.label == f.LABEL_REPEATED):
                print("%s: %s.%s: repeated differs" % (fn, name, field))
                bad += 1
print("%s: %d fields checked against TensorFlow's descriptors, %d differ" % ("ok" if not bad else "FAIL", checked, bad))
sys.exit(1 if bad else 0)
