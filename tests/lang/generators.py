# Generators: yield, yield from, next(), close on destruction (finally runs).
def count(n):
    i = 0
    while i < n:
        yield i
        i += 1

def batches(data, size):
    """Yield successive batches."""
    for start in range(0, len(data), size):
        yield data[start:start + size]

def with_finally():
    try:
        yield 1
        yield 2
    finally:
        print("cleanup ran")

def delegate():
    yield "a"
    yield from count(3)
    yield from ["x", "y"]
    return

print(list(count(5)), sum(count(10)), [b for b in batches(list(range(7)), 3)])
g = count(2)
print(next(g), next(g), next(g, "end"))
for v in with_finally():
    print("got", v)
    break
print(list(delegate()))
gen = with_finally()
print(next(gen))
del gen
print("after del")
def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b
f = fib()
print([next(f) for _ in range(10)])
print(type(f).__name__)
def bad():
    yield 1
    raise ValueError("inside generator")
try:
    for x in bad():
        print(x)
except ValueError as e:
    print("caught", e)
def pairs():
    for i in range(3):
        x = yield i
print(list(pairs()), dict(zip("ab", count(2))), sorted(count(3), reverse=True))
def outer_gen():
    for v in count(3):
        yield v * 10
print(list(outer_gen()), list(map(str, count(3))))
