# tf.while_loop and tf.cond as TF 1.x builds and runs them (Switch/Merge/Enter/Exit/
# NextIteration frames): names of the control-flow nodes, loop results, stateful branches
# that run only when taken, nested loops, loops in branches and branches in loops,
# tf.case, parallel_iterations, maximum_iterations. Expected output from real TF.
import tensorflow as tf

CF = ("Enter", "RefEnter", "Merge", "Switch", "RefSwitch", "LoopCond", "NextIteration", "Exit")


def show(ops):
    for op in ops:
        if op.type in CF or op.name.endswith("switch_t") or op.name.endswith("pred_id"):
            attrs = ""
            if op.type == "Enter":
                attrs = " %s %d" % (op.get_attr("is_constant"),
                                       op.get_attr("parallel_iterations"))
            print(op.name, op.type, [t.name for t in op.inputs], attrs)


g = tf.get_default_graph()
i0 = tf.constant(0, name="i0")
x = tf.constant(2.0, name="x")
n0 = len(g.get_operations())
r = tf.while_loop(lambda i, a: tf.less(i, 10), lambda i, a: (tf.add(i, 1), tf.multiply(a, x)),
                  [i0, tf.constant(1.0, name="one")])
show(g.get_operations()[n0:])
print([t.name for t in r])

p = tf.placeholder(tf.bool, name="p")
v = tf.Variable(1.0, name="v")
n0 = len(g.get_operations())
c = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.multiply(v, 3.0))
show(g.get_operations()[n0:])
print(c.name)

# a loop inside a loop, a cond inside a loop, a loop inside a cond
def outer_body(i, acc):
    inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + tf.cast(j, tf.float32)),
                          [tf.constant(0), tf.constant(0.0)])
    bonus = tf.cond(tf.equal(tf.mod(i, 2), 0), lambda: tf.constant(100.0), lambda: tf.constant(0.0))
    return i + 1, acc + inner[1] + bonus

nested = tf.while_loop(lambda i, acc: i < 5, outer_body, [tf.constant(0), tf.constant(0.0)])
q = tf.placeholder(tf.int32, name="q")
loop_in_cond = tf.cond(q > 0, lambda: tf.while_loop(lambda k: k < q * 3, lambda k: k + 2, [tf.constant(1)]),
                       lambda: tf.constant(-1))
case = tf.case([(tf.equal(q, 1), lambda: tf.constant(10)), (tf.equal(q, 2), lambda: tf.constant(20))],
               default=lambda: tf.constant(30))
par1 = tf.while_loop(lambda i, s: i < 100, lambda i, s: (i + 1, s + i), [tf.constant(0), tf.constant(0)],
                     parallel_iterations=1)
capped = tf.while_loop(lambda i: i < 1000, lambda i: i + 3, [tf.constant(0)], maximum_iterations=7)
single = tf.while_loop(lambda t: tf.reduce_sum(t) < 100.0, lambda t: t * 2.0, [tf.constant([1.0, 2.0])])

w = tf.Variable(0.0, name="w")
def bump(i):
    with tf.control_dependencies([tf.assign_add(w, 1.5)]):
        return i + 1
bumped = tf.while_loop(lambda i: i < 4, bump, [tf.constant(0)])

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(r))
    print(sess.run(c, {p: False}), sess.run(v))
    print(sess.run(c, {p: True}), sess.run(v))
    print(sess.run(c, {p: False}), sess.run(v))
    print(sess.run(nested))
    print(sess.run(loop_in_cond, {q: 4}), sess.run(loop_in_cond, {q: 0}))
    print(sess.run(case, {q: 1}), sess.run(case, {q: 2}), sess.run(case, {q: 5}))
    print(sess.run(par1), sess.run(capped), sess.run(single))
    print(sess.run(bumped), sess.run(w))

# gradients through tf.cond follow the branch taken
t = tf.placeholder(tf.bool, [])
xs = tf.constant([1.0, 2.0, 3.0, 4.0])
y = tf.cond(t, lambda: xs * 2.0, lambda: xs * xs)
gy = tf.gradients(tf.reduce_sum(y), xs)[0]
u = tf.Variable(3.0)
z = tf.cond(t, lambda: u * u, lambda: tf.constant(1.0))
gu = tf.gradients(z, u)[0]
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(gy, {t: True}), sess.run(gy, {t: False}), sess.run(gu, {t: True}), sess.run(gu, {t: False}))

# tf.group in branches; a stateful tf.cond inside a loop
a = tf.Variable(0.0)
b = tf.Variable(0.0)
grp = tf.cond(p, lambda: tf.group(tf.assign_add(a, 1.0), tf.assign_add(b, 2.0)), lambda: tf.group(tf.assign_sub(a, 5.0)))
print(grp.dtype)


def every_other(i):
    up = tf.cond(tf.equal(tf.mod(i, 2), 0), lambda: tf.assign_add(a, 10.0), lambda: tf.identity(a))
    with tf.control_dependencies([up]):
        return i + 1


alt = tf.while_loop(lambda i: i < 4, every_other, [tf.constant(0)])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(grp, {p: True})
    print(sess.run([a, b]))
    sess.run(grp, {p: False})
    print(sess.run([a, b]))
    print(sess.run(alt), sess.run(a))
