# Lookup tables as TF1 text pipelines use them: HashTable / StaticHashTable from tensors,
# index tables from a vocabulary file (with out-of-vocabulary buckets: FarmHash
# Fingerprint64, exact), reverse tables, MutableHashTable, tables_initializer, a Scaffold
# that initializes tables, and the messages of misuse; against TensorFlow.
import os
import tensorflow as tf

d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tfsh_lookup_%d" % os.getpid())
os.makedirs(d, exist_ok=True)
vocab = os.path.join(d, "vocab.txt")
with open(vocab, "w") as f:
    f.write("the\ncat\nsat\non\nmat\n")
cols = os.path.join(d, "cols.tsv")
with open(cols, "w") as f:
    f.write("a\t10\t0.5\nb\t20\t1.5\nc\t30\t2.5\n")

def err(f):
    try:
        f()
    except Exception as e:
        m = getattr(e, "message", str(e))
        ls = [l for l in m.splitlines() if l.strip() and not l.startswith(("Graph", "Detected", "  ", "Node:", "\t"))]
        print(type(e).__name__ + ":", (ls[0] if ls else m).replace(d, "DIR"))

s = tf.Session()
t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [1, 2, 3], value_dtype=tf.int64), -1)
print(t.key_dtype, t.value_dtype, t.name)
q = t.lookup(tf.constant([["a", "z"], ["c", "b"]]))
print(q.dtype, q.shape)
err(lambda: s.run(q))
s.run(tf.tables_initializer())
print(s.run(q), s.run(t.size()))
s.run(tf.tables_initializer())       # again: the same data, nothing changes
print(s.run(t.lookup(tf.constant("b"))))
try:
    t.lookup(tf.constant([1, 2]))
except TypeError:
    print("TypeError")

words = tf.constant(["the", "mat", "dog", "sat", "zebra", ""])
ids = tf.contrib.lookup.index_table_from_file(vocab)
oov = tf.contrib.lookup.index_table_from_file(vocab, num_oov_buckets=3)
small = tf.contrib.lookup.index_table_from_file(vocab, vocab_size=2, default_value=-7)
back = tf.contrib.lookup.index_to_string_table_from_file(vocab)
fromt = tf.contrib.lookup.index_table_from_tensor(tf.constant(["x", "y", "z"]), num_oov_buckets=1)
rev = tf.contrib.lookup.index_to_string_table_from_tensor(["p", "q"], default_value="?")
col = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(cols, tf.string, 0, tf.int64, 1, delimiter="\t"), 0)
colf = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(cols, tf.string, 0, tf.float32, 2, delimiter="\t"), -1.0)
voc = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(vocab, tf.string, -2, tf.int64, -1), 2)
s.run(tf.tables_initializer())
print(s.run(ids.lookup(words)))
print(s.run(oov.lookup(words)), s.run(oov.size()))
print(s.run(small.lookup(words)))
print(s.run(back.lookup(tf.constant([0, 4, 5, -1], tf.int64))))
print(s.run(fromt.lookup(tf.constant(["z", "x", "w"]))))
print(s.run(rev.lookup(tf.constant([1, 0, 2], tf.int64))))
print(s.run(col.lookup(tf.constant(["c", "a", "q"]))), s.run(colf.lookup(tf.constant(["b", "q"]))))
print(s.run(voc.lookup(words)))
print(s.run(tf.strings.to_hash_bucket_fast(words, 1000)))
sp = tf.string_split(["the cat", "sat on the mat now"])
print(s.run(ids.lookup(sp)))

m = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, -1.0)
ins = m.insert(tf.constant([3, 1], tf.int64), tf.constant([0.5, 1.5]))
print(s.run(m.lookup(tf.constant([1, 2, 3], tf.int64))), s.run(m.size()))
s.run(ins)
print(s.run(m.lookup(tf.constant([1, 2, 3], tf.int64))), s.run(m.size()))
s.run(m.insert(tf.constant([1], tf.int64), tf.constant([9.0])))
print(s.run(m.lookup(tf.constant([1, 2, 3], tf.int64))))

g = tf.Graph()
with g.as_default():
    dup = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]), -1)
    missing = tf.contrib.lookup.index_table_from_file(os.path.join(d, "nope.txt"))
    big = tf.contrib.lookup.index_table_from_file(vocab, vocab_size=9)
    with tf.Session() as s2:
        err(lambda: s2.run(dup.initializer))
        err(lambda: s2.run(missing.initializer))
        err(lambda: s2.run(big.initializer))
try:
    tf.contrib.lookup.index_table_from_file("")
except ValueError:
    print("ValueError")
err(lambda: tf.contrib.lookup.index_table_from_file(vocab, num_oov_buckets=-1))

# a MonitoredSession's Scaffold runs the table initializers
g = tf.Graph()
with g.as_default():
    table = tf.contrib.lookup.index_table_from_tensor(["x", "y"])
    found = table.lookup(tf.constant(["y", "x", "n"]))
    with tf.train.MonitoredSession() as ms:
        print(ms.run(found))

for f in (vocab, cols):
    os.remove(f)
os.rmdir(d)
