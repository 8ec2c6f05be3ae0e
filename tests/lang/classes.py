# Classes: __init__, methods, attributes, inheritance, dunders, class attributes.
class Hook(object):
    """A base hook."""
    calls = 0

    def begin(self):
        pass

    def after_run(self, ctx, values):
        Hook.calls += 1
        return values


class StopAtStep(Hook):
    def __init__(self, last_step=10):
        self.last_step = last_step
        self.seen = []

    def after_run(self, ctx, values):
        v = super().after_run(ctx, values)
        self.seen.append(v)
        return v >= self.last_step

    def __repr__(self):
        return "StopAtStep(%d)" % self.last_step


h = StopAtStep(3)
h.begin()
print(h, [h.after_run(None, i) for i in range(5)], h.seen, Hook.calls, h.calls)
print(isinstance(h, Hook), isinstance(h, StopAtStep), issubclass(StopAtStep, Hook), type(h).__name__)
print(Hook.__doc__, StopAtStep.__name__, hasattr(h, "last_step"), getattr(h, "nope", 0))
h.extra = "dynamic"
print(h.extra, sorted(vars(h)))


class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, o):
        return Vec(self.x + o.x, self.y + o.y)

    def __mul__(self, k):
        return Vec(self.x * k, self.y * k)

    def __rmul__(self, k):
        return self * k

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def __eq__(self, o):
        return isinstance(o, Vec) and (self.x, self.y) == (o.x, o.y)

    def __hash__(self):
        return hash((self.x, self.y))

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return (self.x, self.y)[i]

    def __iter__(self):
        return iter((self.x, self.y))

    def __str__(self):
        return "(%s, %s)" % (self.x, self.y)

    def __repr__(self):
        return "Vec(%r, %r)" % (self.x, self.y)

    def __lt__(self, o):
        return (self.x, self.y) < (o.x, o.y)

    def __call__(self, z):
        return self.x + self.y + z

    def __contains__(self, v):
        return v in (self.x, self.y)

    def __bool__(self):
        return bool(self.x or self.y)


a, b = Vec(1, 2), Vec(3, 4)
print(a + b, a * 2, 3 * a, -a, a == Vec(1, 2), a != b, len(a), a[1], list(a), str(a), repr(a))
print(sorted([b, a]), {a: "A"}[Vec(1, 2)], a(10), 2 in a, bool(Vec(0, 0)), max(a, b))
x, y = a
print(x, y)


class Counter:
    count = 0

    def __init__(self):
        Counter.count += 1
        self.id = Counter.count

    @staticmethod
    def describe():
        return "counts instances"

    @property
    def label(self):
        return "#%d" % self.id


c1, c2 = Counter(), Counter()
print(c1.id, c2.id, Counter.count, Counter.describe(), c2.label)


class Base:
    def __init__(self, name):
        self.name = name

    def greet(self):
        return "hello " + self.name + self.suffix()

    def suffix(self):
        return "!"


class Child(Base):
    def __init__(self, name, n):
        Base.__init__(self, name)
        self.n = n

    def suffix(self):
        return "?" * self.n


print(Child("bob", 3).greet(), Base("al").greet())


class Ctx:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        print("enter", self.name)
        return self.name.upper()

    def __exit__(self, exc_type, exc, tb):
        print("exit", self.name, exc_type.__name__ if exc_type else None)
        return exc_type is KeyError


with Ctx("a") as A, Ctx("b") as B:
    print("body", A, B)
with Ctx("swallow"):
    raise KeyError("k")
try:
    with Ctx("pass"):
        raise ValueError("v")
except ValueError as e:
    print("propagated", e)


def f():
    with Ctx("ret"):
        return "returned"


print(f())


class Config:
    scale = 3

    def __init__(self, v):
        self.v = v

    @classmethod
    def from_value(cls, v):
        return cls(v * cls.scale)


class BigConfig(Config):
    scale = 10


print(Config.from_value(2).v, BigConfig.from_value(2).v, type(BigConfig.from_value(1)).__name__)
