#!/usr/bin/env bash
# Slurm. tf.distribute.cluster_resolver.SlurmClusterResolver (and its tf.contrib name) on
# faked Slurm environments prints what real TensorFlow printed for the same script
# (slurm/resolver.out, from TF 2.21).
. "$(dirname "$0")/lib.sh"
export HOME=$WORK XDG_RUNTIME_DIR=$WORK
here=$TFSH_SRC/tests/integration/slurm

out=$(timeout 60 "$TFSH" "$here/resolver.py" 2>&1)
check "SlurmClusterResolver answers as TF's does" "$(cat "$here/resolver.out")" "$out"
check "its tf.contrib name" "True" "$(timeout 20 "$TFSH" -c "
import tensorflow as tf
print(tf.contrib.cluster_resolver.SlurmClusterResolver is tf.distribute.cluster_resolver.SlurmClusterResolver)")"
finish
