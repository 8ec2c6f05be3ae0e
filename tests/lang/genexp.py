# Generator expressions are lazy generators with a scope of their own, as in Python.
def f(i):
    print("made", i)
    return i
g = (f(i) for i in range(3))
print("before", type(g).__name__)
print(next(g))
print(list(g))
g = (i * i for i in range(4))
print(next(g), next(g), list(g))
print(next(t for t in ['a', 'bb', 'ccc'] if len(t) > 1), sum(x for x in range(5)))
print(next((t for t in []), 'none'), sorted(x % 3 for x in range(6)), ''.join(c.upper() for c in 'ab'))
print(dict((k, v) for k, v in [('a', 1)]), tuple(x for x in 'xy'), any(x > 2 for x in [1, 3]))
def h(n):
    k = 10
    return list(x + k + y for x in range(n) if x % 2 for y in (1, 2))
print(h(5))
x = 'outer'
print(list(x for x in 'ab'), x)
class C:
    vals = [1, 2]
    doubled = list(v * 2 for v in vals)
print(C.doubled)
try:
    (1 / 0 for _ in [1])
    print("not evaluated yet")
    list(1 / 0 for _ in [1])
except ZeroDivisionError as e:
    print("ZeroDivisionError:", e)
