#!/usr/bin/env bash
# Run public TF1-era scripts that use RNNs, tf.data, queue input pipelines and tf.test
# unchanged, under real TensorFlow (shim.py: compat.v1, v2 behaviour
# off, tf.contrib's old names) and under tfsh; one line per script and implementation:
# exit status, wall time, the last line matching the script's metric. RESULTS.md holds
# what this printed last and where each source comes from. Sources are never checked in:
# fetch them into SRC laid out as
#   SRC/aymeric/recurrent_network.py       aymericdamien/TensorFlow-Examples examples/3_NeuralNetworks/
#   SRC/aymeric/dynamic_rnn.py             (same)
#   SRC/aymeric/tensorflow_dataset_api.py  (same) examples/5_DataManagement/
#   SRC/aymeric/logistic_regression.py, neural_network_raw.py, convolutional_network_raw.py,
#     tensorboard_basic.py, tensorboard_advanced.py, save_restore_model.py   (same) 2_BasicModels/, 3_NeuralNetworks/, 4_Utils/
#   SRC/ptb/reader.py, SRC/ptb/reader_test.py   tensorflow/models tutorials/rnn/ptb/
#   SRC/reading/convert_to_records.py, fully_connected_reader.py, fully_connected_reader_queues.py,
#     fully_connected_preloaded_var.py
#                                          tensorflow/tensorflow tensorflow/examples/how_tos/reading_data/
# (a missing file is skipped). The readers read TFRecords make_reader_records.py writes
# (under TensorFlow) in the layout of convert_to_records.py. The MNIST scripts read /tmp/data/ (their default): link
# Fashion-MNIST's four files there ($DATA_DIR, default /usr/share/datasets/fashion-mnist);
# nothing is downloaded.
#   scripts/tf_oracle/legacy.sh SRC [NAME...]
# Logs: $OUT (default a new temporary directory). $TF_PYTHON, $TFSH as for run.sh; each run
# is bounded by $LIMIT seconds (default 900).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:?usage: legacy.sh SRC [NAME...]}" && pwd) || exit 2
shift
# shellcheck source=harness_env.sh
. "$here/harness_env.sh"
names=("$@")
sel() { [ ${#names[@]} -eq 0 ] && return 0; local n; for n in "${names[@]}"; do [ "$n" = "$1" ] && return 0; done; return 1; }

# one NAME FILE REGEX ARGS...: FILE under TF then tfsh, each in its own directory's copy of
# FILE's folder (scripts import their neighbours and some write files next to them)
one() {
  local name=$1 file=$src/$2 re=$3 impl t0 rc dir log metric
  shift 3
  [ -f "$file" ] || { echo "$name: no $file, skipped"; return; }
  for impl in tf tfsh; do
    dir=$(mktemp -d "$OUT/$name.$impl.XXXX")
    cp -r "$(dirname "$file")"/. "$dir"/
    log=$OUT/$name.$impl.log
    t0=$(date +%s.%N)
    if [ $impl = tf ]; then
      (cd "$dir" && exec timeout "$limit" "$py" "$here/shim.py" "$(basename "$file")" "$@") >"$log" 2>&1 </dev/null
    else
      (cd "$dir" && exec timeout "$limit" stdbuf -oL "$tfsh" "$(basename "$file")" "$@") >"$log" 2>&1 </dev/null
    fi
    rc=$?
    metric=$(grep -E -- "$re" "$log" | tail -1)
    [ $rc = 0 ] || metric="$metric | $(grep -E 'Error|error|Exception' "$log" | tail -1)"
    printf '%-24s %-5s exit %-3s %7.1fs  %s\n' "$name" "$impl" "$rc" "$(echo "$(date +%s.%N) - $t0" | bc)" "$metric"
  done
}

if [ ! -d /tmp/data ]; then
  mkdir -p /tmp/data && ln -sf "$data"/* /tmp/data/
fi
sel recurrent_network && one recurrent_network aymeric/recurrent_network.py 'Testing Accuracy|Minibatch'
sel dynamic_rnn && one dynamic_rnn aymeric/dynamic_rnn.py 'Testing Accuracy|Minibatch'
sel dataset_api && one dataset_api aymeric/tensorflow_dataset_api.py 'Step [0-9]+,'
sel ptb_reader_test && one ptb_reader_test ptb/reader_test.py '^Ran|^OK|FAILED'
# sweep 2 (RESULTS.md): scripts with their own step counts; save_restore_model reads
# MNIST_data/ beside itself, made here as a link to the data when missing
sel logistic_regression && one logistic_regression aymeric/logistic_regression.py 'Accuracy|Epoch'
sel neural_network_raw && one neural_network_raw aymeric/neural_network_raw.py 'Testing Accuracy|Step'
sel conv_raw && one conv_raw aymeric/convolutional_network_raw.py 'Testing Accuracy|Step'
sel tensorboard_basic && one tensorboard_basic aymeric/tensorboard_basic.py 'Accuracy|Epoch'
sel tensorboard_advanced && one tensorboard_advanced aymeric/tensorboard_advanced.py 'Accuracy|Epoch'
if sel save_restore_model && [ -f "$src/aymeric/save_restore_model.py" ]; then
  [ -e "$src/aymeric/MNIST_data" ] || ln -s "$data" "$src/aymeric/MNIST_data"
  one save_restore_model aymeric/save_restore_model.py 'Accuracy|Epoch'
fi
if sel fc_preloaded_var; then
  pre=$OUT/preloaded   # --train_dir: the data, and where the checkpoints and events go
  mkdir -p "$pre" && ln -sf "$data"/* "$pre"/
  one fc_preloaded_var reading/fully_connected_preloaded_var.py 'Step|Done' --train_dir="$pre"
fi
if sel convert_to_records || sel fc_reader || sel fc_reader_queues; then
  rec=$OUT/records
  mkdir -p "$rec" && ln -sf "$data"/* "$rec"/
  sel convert_to_records && one convert_to_records reading/convert_to_records.py 'Writing' --directory="$rec"
  # the readers' input, written by make_reader_records.py as convert_to_records.py would
  # (which stops under numpy 2: ndarray.tostring is gone)
  "$py" "$here/make_reader_records.py" "$rec" >/dev/null 2>&1 || echo "make_reader_records.py failed" >&2
  sel fc_reader && one fc_reader reading/fully_connected_reader.py 'Step|Done' --train_dir="$rec"
  sel fc_reader_queues && one fc_reader_queues reading/fully_connected_reader_queues.py 'Step|Done' --train_dir="$rec"
fi
exit 0
