# Generator expressions vs list comprehensions (issue 16): run under tfsh and python3 by
# scripts/bench/genexp.sh. Prints one line per case: NAME GEN_SECONDS LIST_SECONDS, each
# the best of several runs. def_while: a generator function that yields from a while loop
# against the same loop appending to a list.
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
big = list(range(n))


def f(x):
    return x + 1


def count(n):          # runs on a stack of its own (a while loop is not a flat body)
    i = 0
    while i < n:
        yield i
        i += 1


def count_list(n):
    out = []
    i = 0
    while i < n:
        out.append(i)
        i += 1
    return out


def best(fn):
    b = None
    for _ in range(5):
        t = time.perf_counter()
        fn()
        t = time.perf_counter() - t
        if b is None or t < b:
            b = t
    return b


cases = [
    ("sum_squares", lambda: sum(x * x for x in range(n)), lambda: sum([x * x for x in range(n)])),
    ("list_call", lambda: list(f(x) for x in big), lambda: list([f(x) for x in big])),
    ("filter_any", lambda: any(x < 0 for x in big), lambda: any([x < 0 for x in big])),
    ("def_while", lambda: sum(count(n)), lambda: sum(count_list(n))),
    ("many_small", lambda: [sum(x for x in range(5)) for _ in range(n // 10)],
     lambda: [sum([x for x in range(5)]) for _ in range(n // 10)]),
]
for name, gen, lst in cases:
    assert gen() == lst()
    print(name, "%.6f" % best(gen), "%.6f" % best(lst))
