# Generator corner cases around their stacks (shell/lang/fiber.c): exceptions raised inside
# a generator, generators abandoned before exhaustion, nested and recursive generators, and
# generators under threads (the GIL may change threads while one runs on its own stack).
import threading


def failing(n):
    for i in range(n):
        if i == 2:
            raise KeyError("at %d" % i)
        yield i


g = failing(5)
got = []
try:
    for v in g:
        got.append(v)
except KeyError as e:
    print("KeyError", e, got)
print(next(g, "exhausted"), list(g))
try:
    list(10 // (x - 3) for x in range(5))
except ZeroDivisionError as e:
    print("ZeroDivisionError:", e)


def stops():
    yield 1
    raise StopIteration


try:
    list(stops())
except RuntimeError as e:
    print("RuntimeError:", e)


def guarded(log, tag):
    try:
        yield tag + "1"
        yield tag + "2"
    except GeneratorExit:
        log.append(tag + " exit")
        raise
    finally:
        log.append(tag + " finally")


# abandoned: dropped, closed, or dropped by an exception in the consumer
log = []
g = guarded(log, "a")
next(g)
del g
g = guarded(log, "b")
next(g)
g.close()
g.close()
print(next(g, "closed"), log)
log = []
try:
    for v in guarded(log, "c"):
        raise ValueError(v)
except ValueError as e:
    print("ValueError:", e, log)

# many generators abandoned half way: each frees its stack and frame (none left behind)
log = []
for i in range(3000):
    g = guarded(log, "")
    next(g)
    h = (x * x for x in range(100))
    next(h)
print(len(log), log[:2])


def self_next():
    yield next(me)


me = self_next()
try:
    next(me)
except ValueError as e:
    print("ValueError:", e)


# nested: generators feeding generators, and recursion through yield from
def evens(it):
    for x in it:
        if x % 2 == 0:
            yield x


def pairs(it):
    it = iter(it)
    for a in it:
        yield a, next(it, None)


print(list(pairs(evens(x * 3 for x in range(12)))))


def walk(tree, depth=0):
    if isinstance(tree, list):
        for t in tree:
            yield from walk(t, depth + 1)
    else:
        yield tree, depth


print(list(walk([1, [2, [3, [4]], 5], [[6]]])))


def deep(n):
    if n:
        yield from deep(n - 1)
    yield n


print(sum(deep(200)), sum(sum(x for x in range(i)) for i in range(50)))


def recurse(n):
    return 0 if n == 0 else 1 + recurse(n - 1)


def deep_inside():
    yield recurse(600)


print(next(deep_inside()))

# threads: each sums through its own generators while the GIL moves between them
results = {}


def work(k):
    total = 0
    for _ in range(20):
        total += sum(x * k for x in range(2000))
    results[k] = total


ts = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sorted(results.items()))

# one generator started in the main thread, continued in another, finished here
shared = (x * x for x in range(10))
first = [next(shared), next(shared)]
middle = []
t = threading.Thread(target=lambda: middle.extend([next(shared), next(shared), next(shared)]))
t.start()
t.join()
print(first, middle, list(shared))


# bodies of nested for/if around one yield (every generator expression's) run without a
# stack of their own: the same semantics
def one():
    yield 5


def maybe(c):
    if c:
        yield "yes"


def grid(n):
    for i in range(n):
        if i % 2:
            for j in range(i):
                if j != 1:
                    yield i, j


print(list(one()), list(maybe(True)), list(maybe(False)), list(grid(6)))
print(list((a, b) for a, b in [(1, 2), (3, 4)] if a > 1), list(x for x in [] if x), list(x for x in [1] if False))
print([list(y for y in range(x)) for x in range(4)], list(c for w in ['ab', '', 'c'] for c in w))
g = (x for x in range(5))
print(next(g), next(g))
g.close()
print(next(g, "closed"), list(g))
g = grid(4)
print(next(g))
del g
try:
    list(len(w) for w in ['ab', 3])
except TypeError as e:
    print("TypeError:", e)
try:
    list(x for x in 5)
except TypeError as e:
    print("TypeError:", e)
try:
    list(x for x in [1] for y in x)
except TypeError as e:
    print("TypeError:", e)
k = 10
print(list(x + k for x in range(3)), sum(x for x in range(100) if x % 7 == 0))
it = iter([1, 2, 3, 4])
print(list(x * y for x in it for y in it))
