# tensorflow.python.client.timeline: the Chrome trace JSON that Timeline makes of
# a StepStats, as TF's does: processes "Allocators", "DEVICE Compute" and "DEVICE Tensors",
# ops in non-overlapping lanes (tid) per device, flow events (ph "s"/"t") for the dataflow
# between lanes and devices, and with show_memory the tensors' lifetimes and snapshots and
# each allocator's memory counter. The StepStats is fixed (tests/fixtures/tf/timeline/,
# scripts/tf_oracle/make_timeline_fixture.py); the expected output is TF's for it
# (scripts/tf_oracle/run.sh --write).
import os
import tensorflow as tf
from tensorflow.python.client import timeline

here = os.path.dirname(os.path.abspath(__file__))
rm = tf.RunMetadata()
with open(os.path.join(here, "..", "fixtures", "tf", "timeline", "run_metadata.pb"), "rb") as f:
    rm.ParseFromString(f.read())
print(timeline.Timeline(rm.step_stats).generate_chrome_trace_format(show_dataflow=True, show_memory=True))
print(timeline.Timeline(rm.step_stats).generate_chrome_trace_format())
print(timeline.Timeline(rm.step_stats).generate_chrome_trace_format(show_dataflow=False))
analysis = timeline.Timeline(rm.step_stats).analyze_step_stats(show_memory=True)
for name in sorted(analysis.allocator_maximums):
    m = analysis.allocator_maximums[name]
    print(name, m.timestamp, m.num_bytes, sorted(m.tensors))
print(analysis.chrome_trace.format_to_string()[:120])
