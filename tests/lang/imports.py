# Imports and the standard modules tfsh provides.
from __future__ import print_function, division
import sys
import os
import os.path
import math as m
from math import sqrt, pi as PI
import time, json
import random
from os.path import join, basename
print(sys.argv[0], type(sys.argv).__name__, sys.version_info[0], isinstance(sys.path, list))
sys.stdout.write("written\n")
sys.stdout.flush()
print("to stderr", file=sys.stderr) if False else None
print(m.sqrt(16), sqrt(2), round(PI, 5), m.floor(2.7), m.ceil(2.1), m.log(m.e), m.log(8, 2), m.exp(0), m.isnan(float("nan")))
print(m.sin(0), m.cos(0), m.fabs(-1), m.pow(2, 3), m.inf, -m.inf, m.factorial(10), m.gcd(12, 18), m.isclose(0.1 + 0.2, 0.3))
print(join("a", "b", "c.txt"), basename("/x/y/z.py"), os.path.dirname("/x/y/z.py"), os.path.splitext("f.tar.gz"), os.path.join("/abs", "/root"))
print(os.path.exists("/"), os.path.isdir("/"), os.path.exists("/no/such/path"), os.path.abspath("/a/b/../c"), os.path.expanduser("~x"))
os.environ["TFSH_TEST_VAR"] = "1"
print(os.getenv("NO_SUCH_VAR_XYZ"), os.getenv("NO_SUCH_VAR_XYZ", "dflt"), type(os.getpid()).__name__, "PATH" in os.environ)
t0 = time.time()
p0 = time.perf_counter()
time.sleep(0.01)
print(time.time() >= t0, time.perf_counter() - p0 >= 0.005, type(time.monotonic()).__name__, len(time.strftime("%Y-%m-%d")))
random.seed(42)
a = [random.random() for _ in range(3)]
random.seed(42)
b = [random.random() for _ in range(3)]
print(a == b, all(0 <= x < 1 for x in a), 1 <= random.randint(1, 6) <= 6, random.choice([7]), 2 <= random.uniform(2, 3) <= 3)
l = list(range(10))
random.shuffle(l)
print(sorted(l) == list(range(10)), type(random.gauss(0, 1)).__name__, len(random.sample(range(10), 3)))
d = {"b": [1, 2.5, None, True], "a": {"x": "y\n\u00e9"}, "n": -3}
s = json.dumps(d)
print(s)
print(json.dumps(d, sort_keys=True), json.dumps([1, "a"], indent=2), json.dumps({"k": 1}, indent=4))
print(json.dumps("plain"), json.dumps(1.0), json.dumps(1e100), json.dumps({"a": 1}, separators=(",", ":")))
print(json.loads(s) == d, json.loads('{"z": [1, 2, {"q": null}], "f": 0.5, "t": true}'))
try:
    json.loads("{bad")
except ValueError:
    print("bad json is a ValueError")
path = "/tmp/tfsh_lang_test_%d.json" % os.getpid()
with open(path, "w") as f:
    json.dump(d, f)
    f.write("\n")
with open(path) as f:
    print(json.load(f) == d)
with open(path, "w") as f:
    f.write("line one\nline two\n")
with open(path) as f:
    print(f.read())
with open(path) as f:
    print(f.readline(), f.readlines())
with open(path) as f:
    print([line.strip() for line in f])
os.remove(path)
print(os.path.exists(path))
dirp = "/tmp/tfsh_lang_dir_%d/a/b" % os.getpid()
os.makedirs(dirp)
os.makedirs(dirp, exist_ok=True)
print(os.path.isdir(dirp), os.listdir(os.path.dirname(dirp)))
os.rmdir(dirp)
os.rmdir(os.path.dirname(dirp))
os.rmdir(os.path.dirname(os.path.dirname(dirp)))
print(os.path.exists(os.path.dirname(os.path.dirname(dirp))))
exec("print('from exec', 6 * 7)")
g = {}
exec("x = 5\ny = x * 2", g)
print(g["y"], eval("1 + 2"))
