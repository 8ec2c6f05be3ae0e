# tf.strings and the sparse helpers of TF1 text pipelines (ops/strings.c): values, shapes
# and the messages of bad input, against TensorFlow.
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

s = tf.Session()

def show(t):
    try:
        print(repr(s.run(t)))
    except tf.errors.InvalidArgumentError as e:
        # TF 2's message adds "Graph execution error" and a traceback; the line is TF1's
        lines = [l for l in e.message.splitlines() if l.strip() and not l.startswith(("Graph", "Detected", "  ", "Node:", "\t"))]
        print("InvalidArgumentError:", lines[0])

words = tf.constant(["abc", "de"])
show(tf.strings.substr(words, 5, 1))
show(tf.strings.substr(words, -1, 1))
show(tf.strings.substr(words, [0, 1], [2, 5]))
show(tf.substr(tf.constant([["hello", "world"]]), 1, 3))
show(tf.strings.substr(["abc", "abc", ""], 3, 1))
show(tf.strings.substr(["abcdef"], 1, -1))
show(tf.strings.substr(["h\xe9llo"], 1, 2, unit="UTF8_CHAR"))
show(tf.string_to_number(tf.constant(["1.5", " 2 ", "x"])))
show(tf.string_to_number(tf.constant(["1.5", " 2 ", "1e3", "inf", "-nan", "0x1A", "1e40"])))
show(tf.string_to_number(tf.constant(["12", "-3", "+5"]), out_type=tf.int32))
show(tf.string_to_number(tf.constant(["99999999999"]), out_type=tf.int32))
show(tf.strings.to_number(["0x1A"], tf.int64))
show(tf.string_to_number(["7.25"], tf.float64))
show(tf.as_string(tf.constant([1.5, 2.0])))
show(tf.as_string(tf.constant([1.5, 2.0]), precision=2))
show(tf.as_string(tf.constant([1.5, 2.0]), shortest=True))
show(tf.as_string(tf.constant([1.5e10, 2.0]), scientific=True))
show(tf.as_string(tf.constant([7, -3]), width=4, fill="0"))
show(tf.as_string(tf.constant([True, False])))
show(tf.as_string(tf.constant([7, -3], dtype=tf.int64)))
show(tf.as_string(tf.constant([1.0, float("nan"), float("inf")], tf.float64)))
show(tf.string_join([tf.constant(["a", "b"]), "x", tf.constant(["c", "d"])], separator="-"))
show(tf.strings.join(["x", "y"]))
try:
    tf.string_join([tf.constant(["a", "b"]), tf.constant(["c", "d", "e"])])
except ValueError as e:
    print("ValueError:", str(e).split(" for ")[0])
show(tf.strings.length(tf.constant(["h\xe9llo", ""])))
show(tf.strings.length(tf.constant(["h\xe9llo", ""]), unit="UTF8_CHAR"))
show(tf.strings.strip(tf.constant(["  a b \n", "\tc"])))
show(tf.strings.lower(tf.constant(["AbC", "\xc0B"])))
show(tf.strings.upper(tf.constant(["AbC", "\xe0b"])))
grid = tf.constant([["a", "b"], ["c", "d"]])
show(tf.reduce_join(grid, 0))
show(tf.reduce_join(grid, 1, separator=","))
show(tf.reduce_join(grid, keep_dims=True))
show(tf.reduce_join(grid))
show(tf.reduce_join(grid, [1, 0], separator=" "))
show(tf.reduce_join(grid, [0, 1], separator=" "))
show(tf.reduce_join(grid, separator=" "))
show(tf.strings.reduce_join(grid, -1, separator=" "))
print(tf.reduce_join(grid, 1).shape, tf.reduce_join(grid, 0, keep_dims=True).shape)

sp = tf.string_split(tf.constant(["a b  c", "", "dd"]))
print(type(sp).__name__, sp.dtype)
show(sp)
show(tf.string_split(tf.constant(["a,b,,c", "x"]), delimiter=",", skip_empty=False))
show(tf.string_split(tf.constant(["ab", "c"]), delimiter=""))
show(tf.string_split(["", "a  b"], skip_empty=False))
show(tf.strings.split(tf.constant(["a  b c", " x "])))
show(tf.strings.split(tf.constant(["a<>b<><>c", "x"]), sep="<>", maxsplit=1))
show(tf.strings.split(["", "a,,b"], sep=","))
try:
    tf.string_split(tf.constant([["a b"]]))
except ValueError as e:
    print("ValueError:", str(e).split(" for ")[0])

show(tf.sparse_tensor_to_dense(tf.string_split(tf.constant(["a b", "c d e"])), default_value=""))
show(tf.sparse.to_dense(tf.SparseTensor([[0, 1], [2, 0]], [3.0, 4.0], [3, 2])))
show(tf.sparse_to_dense([[0, 1], [2, 0]], [3, 2], [7, 8], default_value=-1))
show(tf.sparse_to_dense([1, 3], [5], 9))
show(tf.sparse_to_dense([[0, 5]], [3, 2], [7]))
show(tf.sparse_to_dense([[2, 0], [0, 1]], [3, 2], [7, 8]))
show(tf.sparse_to_dense([[1, 0], [1, 0]], [3, 2], [7, 8]))
show(tf.sparse_to_dense([[2, 0], [0, 1]], [3, 2], [7, 8], validate_indices=False))
show(tf.sparse_to_dense([[1, 0]], [3, 2], [7, 8]))

# a text pipeline: lines -> tokens -> dense ids through a tf.data map
lines = tf.data.Dataset.from_tensor_slices(["3 1 4", "1 5", "9 2 6 5"])
ds = lines.map(lambda l: tf.string_to_number(tf.string_split([l]).values, tf.int32))
nxt = tf.data.make_one_shot_iterator(ds).get_next()
for _ in range(3):
    print(s.run(nxt))
