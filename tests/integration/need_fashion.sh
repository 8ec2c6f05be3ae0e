# Sourced by the tests that train on Fashion-MNIST: sets data to its directory, or skips the
# test (ctest's code 77) saying what is missing.
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: no Fashion-MNIST under $data (apt install dataset-fashion-mnist)"
  exit 77
fi
