#!/usr/bin/env bash
# Install every Debian package tfsh needs to build, test and run. Idempotent:
# packages already present are left alone, and apt is only touched when one is missing.
#   scripts/setup.sh          what building and running need
#   scripts/setup.sh --test   also the daemons only the tests start (sshd, Slurm, munge);
#                             best effort: a test whose daemon is missing says it skipped
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config
  libedit-dev        # line editing for the shell
  libzmq3-dev        # ZeroMQ: every message between master, workers and clients
  libmsgpack-dev     # msgpack-c: message headers on the wire
  libblis-openmp-dev # BLIS: GEMM for MatMul (OpenMP build: both cores)
  libdnnl-dev        # oneDNN: float convolutions (loaded on first use; ops/cpu/onednn.h)
  libjansson-dev     # JSON: TF_CONFIG, json module, Chrome traces
  libmimalloc-dev    # mimalloc: tfsh's allocator (graphs of many small nodes; CMakeLists.txt)
  zlib1g-dev         # gzip'd IDX datasets
  libprotobuf-c-dev protobuf-c-compiler   # TensorFlow's files: GraphDef, MetaGraph, checkpoints, events
  libcmocka-dev      # unit tests
  libgrpc-dev        # gRPC's C core: tfsh probe speaks TF's own gRPC (loaded on first use)
  python3-grpcio     # stand-ins for TF's gRPC servers in the tests (recorded replies)
  tmux               # pseudo-terminal tests of the shell
  python3            # generates and checks expected outputs in the tests
  libpython3-dev python3-numpy   # the language: CPython embedded, and its numpy
  python3-six python3-matplotlib python3-scipy python3-pil python3-pandas python3-sklearn
                     # what legacy TF1 scripts import beside tensorflow (plots, data preparation)
  iproute2           # network namespaces for multi-host tests
  clang libclang-rt-14-dev libomp-dev   # libFuzzer: the short fuzz run of the test suite
  dataset-fashion-mnist
)

test_pkgs=(
  openssh-server openssh-client   # a real sshd in a namespace for %cluster up --hosts (test_ssh_real)
  slurmctld slurmd slurm-client munge   # a real one-node Slurm for --slurm (test_slurm_real)
)

SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
updated=
install() {   # install PACKAGE... that are missing
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]}" >&2
  [ -n "$updated" ] || { $SUDO apt-get update -qq; updated=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
install "${pkgs[@]}"
if [ "${1:-}" = --test ]; then
  install "${test_pkgs[@]}" || echo "setup: the test daemons could not be installed; their tests will skip" >&2
fi
