# Built-in types and their methods.
s = "  Hello, World  "
print(s.strip(), s.lstrip(), s.rstrip(), s.lower(), s.upper())
print("a,b,,c".split(","), "a b  c ".split(), "a,b,c".split(",", 1), "a,b,c".rsplit(",", 1))
print("-".join(["x", "y", "z"]), "abc".replace("b", "B"), "aaa".replace("a", "b", 2))
print("hello".startswith("he"), "hello".endswith(("lo", "x")), "hello".find("l"), "hello".rfind("l"), "hello".find("z"))
print("hello".count("l"), "42".isdigit(), "4a".isdigit(), "abc".isalpha(), "7".zfill(3), "-7".zfill(4))
print("ab".ljust(5, "*"), "ab".rjust(5), "ab".center(6, "-"), "x".center(4), "title case".title(), "cap it".capitalize())
print("a\nb\r\nc".splitlines(), "k=v=w".partition("="), "k=v=w".rpartition("="))
print("abc"[1], "abc"[-1], "abcdef"[1:4], "abcdef"[::2], "abcdef"[::-1], "abc" * 3, "x" in "xyz")
l = [3, 1, 2]
l.append(4); l.extend([5, 6]); l.insert(0, 0)
print(l, l.pop(), l.pop(0), l.index(2), l.count(1))
l.remove(1); l.sort(); print(l); l.reverse(); print(l)
l2 = l.copy(); l2.clear(); print(l, l2)
print([1, 2] + [3], [0] * 3, [1, [2, 3]], len([1, 2]), [1, 2, 3][-2:], [1, 2] == [1, 2], [1, 2] < [1, 3])
m = [[1, 2], [3, 4]]
m[0][1] = 9
print(m, m[1][0])
nums = list(range(10))
nums[2:5] = ["a"]
print(nums)
t = (1, 2, 3)
print(t, t[0], t[1:], len(t), (1,), (), t.index(2), t.count(1), t + (4,), tuple([1, 2]))
d = {"b": 1, "a": 2}
d["c"] = 3
print(d, list(d.keys()), list(d.values()), list(d.items()), len(d), "a" in d)
print(d.get("a"), d.get("z"), d.get("z", 0), d.pop("b"), d, d.setdefault("q", []), d)
d.update({"a": 10}, e=5)
print(d, dict(x=1, y=2), dict([("k", "v")]), {**d, "new": 1})
print(d.keys(), d.values(), d.items())
st = {3, 1, 2}
st.add(2); st.add(4)
print(sorted(st), len(st), 1 in st, {1, 2} | {3}, {1, 2} & {2, 3}, {1, 2} - {2}, {1, 2} ^ {2, 3}, set())
print(set([1, 1, 2]) == {1, 2}, {1, 2} <= {1, 2, 3})
print(list(range(3)), list(range(1, 10, 3)), range(5), len(range(0, 10, 2)), range(10)[2], 5 in range(10))
print(int("42"), int("-7"), int(3.9), int("ff", 16), int("0x1f", 0), float("1.5"), float(3), float("inf"), str(12), str(1.5), bool(0), bool("x"))
print(abs(-3), abs(-2.5), round(1.23456, 3), round(7), round(0.5), round(1.5), round(2.5), round(-1.5), divmod(7, 2), divmod(-7, 2), pow(2, 10), pow(2, 10, 100))
print(repr("a'b"), repr('a"b'), repr("a'b\"c"), repr(1.0), repr([1.5, "x"]), str(None), repr(None))
print(0.1, 0.2 + 0.1, 1/3, 2/3, 1e22, 1e-5, 123.456, 100.0, 1.5e300, -0.0, float("nan"), 5e-324)
print(chr(65), ord("A"), hex(255), oct(8), bin(5), hash(1) == hash(1.0), isinstance(True, int))
print(type(1).__name__, type("").__name__, type([]).__name__, type(None).__name__, type(len).__name__, type(type).__name__)
print(isinstance(1, (str, int)), isinstance("s", str), issubclass(bool, int), callable(len), callable(1))
print(list(enumerate("ab", 1)), list(zip([1, 2], [3, 4], [5, 6])), list(reversed([1, 2, 3])), list(reversed(range(3))))
print(any([0, 1]), all([1, 0]), all([]), any([]))
it = iter([1, 2])
print(next(it), next(it), next(it, "done"))
print(getattr("x", "upper")(), hasattr([], "append"), hasattr([], "nope"), getattr(1, "nope", "dflt"))
print(7 // 2, -7 // 2, 7 % 3, -7 % 3, 7.5 // 2, 7.5 % 2, 2 ** 0.5, 10 / 4, 1 << 4, 256 >> 2, 6 & 3, 6 | 3, 6 ^ 3)
print(True + True, 3 * "ab", [1] * 2, 1 == True, 5 != 5.0)
x = 5
x -= 1; x *= 3; x //= 2; x **= 2; x %= 7
print(x)
s = "a"
s += "b"
print(s)
lst = [1]
alias = lst
lst += [2]
print(alias)
print(sorted({"b": 1, "a": 2}), sorted("cab"), min("bca"), "%s" % [1, 2])
print(format(3.14159, ".3f"), format(42, "05d"), format("s", ">3"), "{:.2e}".format(12345.678), "{:>+8.2f}".format(3.14159))
print("%d%%" % 50, "%5s|%-5s|" % ("a", "b"), "%.3s" % "abcdef", "%03d" % 7, "%+d" % 5, "%e" % 12345.678, "%g" % 0.00001, "%g" % 123456789.0, "%(a)s-%(b)d" % {"a": "x", "b": 2}, "%c" % 65, "%i" % 3.9, "%X" % 255, "%#x" % 255, "%#o" % 8)
print("{0}{1}{0}".format("a", "b"), "{x[0]}".format(x=[9]), "{:*^9}".format("mid"), "{!r}".format("q"), "{0:{1}}".format(3, 4))
