# Functions: defaults, keyword-only, *args, **kwargs, closures, lambda, recursion.
def f(a, b=2, *args, c, d=4, **kwargs):
    return (a, b, args, c, d, sorted(kwargs.items()))
print(f(1, c=3))
print(f(1, 5, 6, 7, c=3, e=9, d=0))
print(f(*[1, 2, 3], **{"c": 10, "z": 1}))
def g(*, key=None):
    return key
print(g(key="k"), g())
def outer():
    x = 1
    def middle():
        def inner():
            return x + 1
        return inner()
    x = 10
    return middle()
print(outer())
def counter():
    count = 0
    def inc(step=1):
        nonlocal count
        count += step
        return count
    return inc
c = counter()
c(); c(5)
print(c())
adders = [lambda x, n=n: x + n for n in range(3)]
print([a(10) for a in adders])
sq = lambda x: x * x
print(sq(7), (lambda: "no args")())
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)
print(fact(20))
def doc():
    """A docstring."""
    return doc.__doc__
print(doc(), doc.__name__)
def noret():
    pass
print(noret())
def multi():
    return 1, 2, 3
a, b, c = multi()
print(a, b, c)
print(list(map(lambda x: x * 2, [1, 2, 3])), list(filter(None, [0, 1, 2, 0])))
print(sorted([(2, "b"), (1, "z"), (2, "a")]), sorted(["bb", "a", "ccc"], key=len, reverse=True))
print(max([3, 1, 2]), min(3, 1, 2), max("abc", key=ord), min([], default=0), sum([1, 2, 3], 10))
def kw_only_missing(*, x):
    return x
try:
    kw_only_missing()
except TypeError as e:
    print(e)
try:
    f()
except TypeError as e:
    print(e)
try:
    fact(1, 2)
except TypeError as e:
    print(e)
try:
    g(1)
except TypeError as e:
    print(e)
try:
    fact(m=1)
except TypeError as e:
    print(e)
