# collections: what TF 1.x scripts use of it (ptb reader.py and char-rnn's utils.py count
# words or characters with Counter and sort its items); expected output from python3.
import collections
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple

data = "the cat and the hat and the bat".split()
counter = collections.Counter(data)
count_pairs = sorted(counter.items(), key=lambda x: (-x[1], x[0]))
words, _ = list(zip(*count_pairs))
print(words, dict(zip(words, range(len(words)))))
print(counter["the"], counter["dog"], "dog" in counter, len(counter))
print(counter.most_common(2))
c = Counter("abracadabra")
c.update("aab")
print(sorted(c.items()), sorted(c.elements())[:6], c == Counter(dict(c.items())))
print(Counter(), Counter(a=2))
d = defaultdict(list)
d["x"].append(1)
d["x"].append(2)
d["y"]
print(sorted(d.items()), len(d), "z" in d)
try:
    defaultdict()["k"]
except KeyError as e:
    print("KeyError", e)
o = OrderedDict()
o["b"] = 1
o["a"] = 2
print(list(o.keys()))
q = deque([1, 2, 3], maxlen=3)
q.append(4)
q.appendleft(0)
print(list(q), q.popleft(), q.pop(), len(q))
P = namedtuple("P", "x y")
p = P(1, y=2)
print(p, p.x, p.y, p[0], tuple(p), p._replace(x=5), p._asdict(), P._fields, P._make([3, 4]))
x, y = p
print(x + y, p == (1, 2))
