# numpy string arrays: str arrays ('<U'), bytes arrays ('|S'), and TF's fetched strings
# (object arrays of bytes) kept apart.
# np_strings.out: real numpy/TF output, numpy 2's scalar reprs np.str_('a') / np.bytes_(b'a')
# written as numpy 1.x does ('a' / b'a').
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

a = np.array(['a', 'bc'])
print(a, repr(a), a.dtype, a.shape, a.dtype.kind, a.dtype.itemsize, a.dtype.name)
print(a[0], repr(a[0]), repr(a[-1]), a.tolist(), list(a), [x + '!' for x in a])
b = np.array([b'a'])
print(b, repr(b), b.dtype, repr(b[0]), b.tolist(), b.dtype.kind, b.dtype.name)
c = np.array([['x', 'yy'], ['zzz', '']])
print(c, repr(c), c.dtype, c[1], repr(c[1, 0]), repr(c[:, 1]), repr(c.T), repr(c.reshape(4)))
print(repr(a[:1]), repr(a[[1, 0]]), repr(a[a == 'a']), repr(a.copy()), repr(c.flatten()))
z = np.array('abc')
print(z, repr(z), z.dtype, z.shape)
print(repr(np.array([], dtype=str)), repr(np.array([''])), repr(np.array([b''])))
print(repr(np.array(["it's", 'say "hi"', 'tab\t', 'é'])))
print(repr(np.array(['abc', 'd'], dtype='U2')), repr(np.array(['a'], dtype=str)), repr(np.array([b'ab'], dtype='S1')))
print(repr(np.array([1, 22], dtype=str)), repr(np.array(['x'], dtype=bytes)))
# astype
print(repr(a.astype(bytes)), repr(a.astype('S')), repr(b.astype(str)), repr(a.astype(str)))
print(repr(np.array([1, 2]).astype(str)), repr(np.array([1.5, 2]).astype(str)),
      repr(np.array([1.5, 0.1], dtype=np.float32).astype(str)), repr(np.array([True]).astype(str)))
print(repr(np.array(['1', '22']).astype(int)), repr(np.array(['1.5']).astype(float)),
      repr(np.array([b'7']).astype(np.int32)))
# comparisons
print(a == 'a', a != 'a', 'a' == a, a == ['a', 'x'], a < 'b', a >= 'b', a == np.array(['a', 'bc']))
print(b == b'a', c == 'yy', 'a' in a, 'q' in a, (a == 'bc').any(), a.dtype == 'U2', a.dtype == b.dtype)
try:
    np.array(['1', 'x']).astype(int)
except ValueError as e:
    print('ValueError:', e)

# TF: fetched strings are object arrays of bytes; a str array feeds a tf.string placeholder
p = tf.placeholder(tf.string, [None])
j = tf.identity(p)
with tf.Session() as sess:
    r = sess.run(j, {p: a})
    print(r, repr(r), r.dtype, repr(r[0]), r.tolist())
    r2 = sess.run(j, {p: np.array(['é', 'x'])})
    print(repr(r2), r2[0].decode('utf-8'))
    s = sess.run(tf.constant('abc'))
    print(repr(s), type(s).__name__)
    r3 = sess.run(tf.constant(np.array([['p', 'q']])))
    print(repr(r3), r3.shape)
    c = tf.constant(a)
    q = tf.placeholder(a.dtype, [2])
    print(c.dtype, q.dtype)
    r = sess.run(c)
    print(repr(r), r == b'a', r == 'a', repr(r.astype(str)), repr(r.astype(bytes)), r.dtype, str(r.dtype), repr(r.dtype))
    print(sess.run(tf.identity(q), {q: ['x', 'y']}), sess.run(tf.identity(q), {q: np.array([b'x', b'y'])}))
for row in np.array([['a', 'b'], ['c', 'd']]):
    print(repr(row), row[0])
# numpy's layout: line wrapping, summaries, escapes
w = np.array(['word%d' % i for i in range(40)])
print(w)
print(repr(w))
print(np.array(['x%d' % i for i in range(2000)]))
print(repr(np.array([['é' * 3, 'ab'], ['c', "q'"]])), repr(np.array(['a\nb', 'é\x01'])), repr(np.array([b'\xff', b'a\nb'])))
# object arrays of str stay str
o = np.array(['a', 'bc'], dtype=object)
print(o, repr(o), o.dtype, repr(o[0]), o.tolist(), o == 'a', repr(o.astype(str)), repr(o[:1]))
print(repr(np.array(['a']).astype(object)), repr(np.array([b'x'], dtype=object)))
