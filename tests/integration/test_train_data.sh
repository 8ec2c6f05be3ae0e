#!/usr/bin/env bash
# The legacy MNIST input path: input_data.read_data_sets on small IDX files made here
# (splits, scaling, one-hot, next_batch's per-epoch shuffling, seeding), and bad input —
# a missing directory or file, a wrong magic number, a truncated or corrupt file — giving
# an error that names the file. Real Fashion-MNIST is checked when installed.
set -u
: "${TFSH:?set TFSH to the tfsh binary}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
expect() {   # expect NAME WANT GOT
  if [ "$2" = "$3" ]; then ok "$1"; else fail "$1"; echo "  want: $2"; echo "  got:  $3"; fi
}

# IDX files: 20 training images 2x3 whose pixels are all 10*i (label i % 10), 10 test images.
mk() {   # mk DIR N_TRAIN N_TEST
  mkdir -p "$1"
  python3 - "$1" "$2" "$3" <<'PY'
import gzip, struct, sys
d, ntr, nte = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def write(name, magic, dims, payload):
    with gzip.open(d + "/" + name, "wb") as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", x) for x in dims) + payload)
for split, n in (("train", ntr), ("t10k", nte)):
    write(split + "-images-idx3-ubyte.gz", 2051, (n, 2, 3), bytes(bytearray((10 * i) % 256 for i in range(n) for _ in range(6))))
    write(split + "-labels-idx1-ubyte.gz", 2049, (n,), bytes(bytearray(i % 10 for i in range(n))))
PY
}
mk "$work/good" 20 10

cat > "$work/sets.tfs" <<'PY'
import sys
import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data
d = sys.argv[1]


def ids(x):
    return [int(round(r[0].item() * 255 / 10)) for r in x]



m = input_data.read_data_sets(d, one_hot=True, validation_size=5, seed=3)
print(m.train.num_examples, m.validation.num_examples, m.test.num_examples)
print(m.train.images.shape, m.train.images.dtype == np.float32, m.train.labels.shape, m.train.labels.dtype == np.float32)
print(["%.4f" % r[0].item() for r in m.validation.images])
print("%.4f" % m.train.images[0][0].item(), m.train.labels[0].tolist())
seen = []
for i in range(5):
    x, y = m.train.next_batch(4)
    got = ids(x)
    assert [int(l.argmax()) for l in y] == [k % 10 for k in got]
    seen.append(got)
print("epochs", m.train.epochs_completed)
print("first epoch covers 5..19 once:", sorted(sum(seen, [])[:15]) == list(range(5, 20)))
x, y = m.train.next_batch(11)
print("wrap batch", x.shape[0], m.train.epochs_completed)
flat = sum(seen, [])
print("order changes between epochs:", flat[15:20] != flat[0:5])
m2 = input_data.read_data_sets(d, one_hot=False, validation_size=5, seed=3)
again = [ids(m2.train.next_batch(4)[0]) for _ in range(5)]
print("same seed, same batches:", again == seen, m2.train.labels.dtype == np.int64, m2.train.labels[:3].tolist())
plain = input_data.read_data_sets(d, validation_size=0, seed=1)
xs = plain.train.next_batch(20, shuffle=False)[0]
print("shuffle=False keeps order:", ids(xs) == list(range(20)))
nr = input_data.read_data_sets(d, reshape=False, validation_size=0)
print(nr.train.images.shape)
try:
    input_data.read_data_sets(d, validation_size=21)
except ValueError as e:
    print("ValueError:", e)
PY
got=$("$TFSH" "$work/sets.tfs" "$work/good" 2>&1)
want="Extracting $work/good/train-images-idx3-ubyte.gz
Extracting $work/good/train-labels-idx1-ubyte.gz
Extracting $work/good/t10k-images-idx3-ubyte.gz
Extracting $work/good/t10k-labels-idx1-ubyte.gz
15 5 10
(15, 6) True (15, 10) True
['0.0000', '0.0392', '0.0784', '0.1176', '0.1569']
0.1961 [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
epochs 1
first epoch covers 5..19 once: True
wrap batch 11 2
order changes between epochs: True"
expect "splits, scaling, one-hot, batches" "$want" "$(printf '%s\n' "$got" | head -12)"
expect "seeded, sparse labels, shuffle=False, reshape=False, validation_size" \
  "same seed, same batches: True True [5, 6, 7]
shuffle=False keeps order: True
(20, 2, 3, 1)
ValueError: Validation size should be between 0 and 20. Received: 21." \
  "$(printf '%s\n' "$got" | grep -v '^Extracting' | tail -4)"

# unseeded sets draw a seed below 2**52; the shuffle's seed arithmetic must not overflow
# (it did for 3 seeds in 4: next_batch raised OverflowError)
expect "any seed up to 2**52, and unseeded sets, shuffle for several epochs" "ok" \
  "$("$TFSH" -c 'import sys
from tensorflow.examples.tutorials.mnist import input_data
for seed in [2 ** 52 - 1, None, None, None]:
    m = input_data.read_data_sets(sys.argv[1], validation_size=5, seed=seed)
    for i in range(12):
        m.train.next_batch(4)
print("ok")' "$work/good" 2>&1 | tail -1)"

# bad input: each error names the file (or directory) and what is wrong
err() {   # err DIR -> the last line of stderr of read_data_sets(DIR)
  "$TFSH" -c 'import sys
from tensorflow.examples.tutorials.mnist import input_data
input_data.read_data_sets(sys.argv[1])' "$1" 2>&1 >/dev/null | tail -1
}
expect "missing directory" \
  "FileNotFoundError: read_data_sets: no such directory: '$work/none' (tfsh never downloads: Debian's dataset-fashion-mnist installs Fashion-MNIST under /usr/share/datasets/fashion-mnist)" \
  "$(err "$work/none")"
mkdir -p "$work/nolabels"; cp "$work/good/train-images-idx3-ubyte.gz" "$work/nolabels/"
expect "missing file" \
  "FileNotFoundError: [Errno 2] No such file or directory: '$work/nolabels/train-labels-idx1-ubyte.gz' (tfsh never downloads: put the MNIST IDX files there, e.g. Debian's dataset-fashion-mnist installs Fashion-MNIST under /usr/share/datasets/fashion-mnist)" \
  "$(err "$work/nolabels")"
cp -r "$work/good" "$work/magic"; cp "$work/good/train-labels-idx1-ubyte.gz" "$work/magic/train-images-idx3-ubyte.gz"
expect "wrong magic number" \
  "ValueError: Invalid magic number 2049 in MNIST image file: $work/magic/train-images-idx3-ubyte.gz" \
  "$(err "$work/magic")"
cp -r "$work/good" "$work/trunc"
gzip -dc "$work/good/t10k-images-idx3-ubyte.gz" | head -c 40 | gzip > "$work/trunc/t10k-images-idx3-ubyte.gz"
expect "truncated file" \
  "ValueError: truncated MNIST images file $work/trunc/t10k-images-idx3-ubyte.gz: 24 of 60 data bytes (10 images)" \
  "$(err "$work/trunc")"
cp -r "$work/good" "$work/corrupt"
mk "$work/big" 3000 10
cp "$work/big/train-images-idx3-ubyte.gz" "$work/corrupt/train-images-idx3-ubyte.gz"
size=$(stat -c %s "$work/corrupt/train-images-idx3-ubyte.gz")
printf '\377\377\377\377\377\377\377\377' | dd of="$work/corrupt/train-images-idx3-ubyte.gz" bs=1 seek=$((size / 2)) conv=notrunc status=none
got=$(err "$work/corrupt")
case "$got" in
  "ValueError: corrupt gzip data in MNIST images file $work/corrupt/train-images-idx3-ubyte.gz: "*) ok "corrupt gzip" ;;
  *) fail "corrupt gzip"; echo "  got: $got" ;;
esac
# uncompressed IDX files are read too
mkdir -p "$work/plain"
for f in "$work/good"/*.gz; do gzip -dc "$f" > "$work/plain/$(basename "$f" .gz)"; done
expect "uncompressed files" "15 5 10" \
  "$("$TFSH" -c 'import sys
from tensorflow.examples.tutorials.mnist import input_data
m = input_data.read_data_sets(sys.argv[1], validation_size=5)
print(m.train.num_examples, m.validation.num_examples, m.test.num_examples)' "$work/plain" | tail -1)"

# the real data set, when installed
real=/usr/share/datasets/fashion-mnist
if [ -f "$real/train-images-idx3-ubyte.gz" ]; then
  expect "Fashion-MNIST" "55000 5000 10000 (55000, 784) (10000, 10) 1.0 0.0 9" \
    "$("$TFSH" -c 'from tensorflow.examples.tutorials.mnist import input_data
m = input_data.read_data_sets("'"$real"'", one_hot=True)
print(m.train.num_examples, m.validation.num_examples, m.test.num_examples, m.train.images.shape, m.test.labels.shape, m.train.images.max().item(), m.train.images.min().item(), m.test.labels[0].argmax())' | tail -1)"
fi
exit $((fails > 0))
