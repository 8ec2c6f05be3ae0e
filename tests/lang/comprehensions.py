# Comprehensions, unpacking, slicing.
print([x * y for x in range(3) for y in range(3) if x != y])
print({x % 3 for x in range(10)}, {k: k ** 2 for k in range(4)}, [[j for j in range(i)] for i in range(4)])
print(sum(x for x in range(5)), list(c.upper() for c in "ab"), sorted((v, k) for k, v in {"a": 2, "b": 1}.items()))
x = "global x"
print([x for x in range(3)], x)
pairs = [(1, "a"), (2, "b")]
print([n for n, _ in pairs], dict(pairs), {v: k for k, v in pairs})
a, *b = [1, 2, 3]
*c, d = (1, 2, 3)
e, (f, g), h = 1, [2, 3], 4
print(a, b, c, d, e, f, g, h)
i = j = k = 0
i += 1
print(i, j, k)
first, second = "xy"
print(first, second)
m, n = n, m = 1, 2
print(m, n)
s = list(range(10))
print(s[2:8:2], s[::-2], s[-3:], s[:-7], s[100:], s[-100:2], s[5:2], s[5:2:-1], s[::3])
t = tuple(s)
print(t[1::4], "hello world"[::-1], "hello"[1:-1])
s[::2] = ["e"] * 5
print(s)
print([*range(3), *"ab"], (*[1, 2], 3), {**{"a": 1}, "b": 2}, print(*[1, 2], sep="-"))
def pack(*a, **k):
    return a, k
args = (1, 2)
kw = {"z": 3}
print(pack(*args, 0, *args, y=1, **kw))
matrix = [[1, 2, 3], [4, 5, 6]]
print([list(r) for r in zip(*matrix)], [row[1] for row in matrix], matrix[1][::-1])
for idx, (p, q) in enumerate([(1, 2), (3, 4)]):
    print(idx, p, q)
print(list(map(lambda p: p[0] * p[1], [(2, 3), (4, 5)])), [y for y in [3, 1, 2] if y > 1])
