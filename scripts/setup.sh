#!/usr/bin/env bash
# Install every Debian package tfsh needs to build, test and run. Idempotent:
# packages already present are left alone, and apt is only touched when one is missing.
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config
  libedit-dev        # line editing for the shell
  libzmq3-dev        # ZeroMQ: every message between master, workers and clients
  libmsgpack-dev     # msgpack-c: message headers on the wire
  libblis-openmp-dev # BLIS: GEMM for MatMul (OpenMP build: both cores)
  libjansson-dev     # JSON: TF_CONFIG, json module, Chrome traces
  zlib1g-dev         # gzip'd IDX datasets
  libprotobuf-c-dev protobuf-c-compiler   # TensorFlow's files: GraphDef, MetaGraph, checkpoints, events
  libcmocka-dev      # unit tests
  tmux               # pseudo-terminal tests of the shell
  python3            # generates and checks expected outputs in the tests
  iproute2           # network namespaces for multi-host tests
  openssh-server openssh-client   # a real sshd in a namespace for %cluster up --hosts (test_ssh_real)
  slurmctld slurmd slurm-client munge   # a real one-node Slurm for --slurm (test_slurm_real)
  clang libclang-rt-14-dev libomp-dev   # libFuzzer: the short fuzz run of the test suite
  dataset-fashion-mnist
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
