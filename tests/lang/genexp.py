# Generator expressions are iterators (next() works); tfsh computes their items at once.
g = (i * i for i in range(4))
print(next(g), next(g), list(g))
print(next(t for t in ['a', 'bb', 'ccc'] if len(t) > 1), sum(x for x in range(5)))
print(next((t for t in []), 'none'), sorted(x % 3 for x in range(6)), ''.join(c.upper() for c in 'ab'))
print(dict((k, v) for k, v in [('a', 1)]), tuple(x for x in 'xy'), any(x > 2 for x in [1, 3]))
