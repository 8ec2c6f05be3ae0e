# numpy boolean masks of rank > 1 (read and assign) and dtype.type / kind / itemsize,
# as legacy scripts use them (expected output from numpy through the oracle)
import numpy as np

a = np.arange(24).reshape(2, 3, 4)
m2 = (a.sum(axis=2) % 2) == 0
print(m2)
print(a[m2])
print(a[m2].shape)
m3 = a % 5 == 0
print(a[m3])
print(a[a > 20])
f = np.arange(6, dtype=np.float32).reshape(2, 3)
f[f > 2.5] = -1.0
print(f)
g = np.zeros((2, 3, 2), dtype=np.int32)
g[np.array([[True, False, True], [False, True, False]])] = np.array([7, 8], dtype=np.int32)
print(g)
g[np.array([[True, False, False], [False, False, True]])] = np.array([[1, 2], [3, 4]], dtype=np.int32)
print(g)
try:
    print(a[np.ones((3, 3), dtype=bool)])
except IndexError as e:
    print("IndexError:", e)
try:
    f[f < 0] = np.array([1.0, 2.0])
except ValueError as e:
    print("ValueError:", e)
for x in [a, f, np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.uint8), np.array([True]), np.float64(2.5)]:
    print(x.dtype, x.dtype.type is getattr(np, str(x.dtype) if str(x.dtype) != "bool" else "bool_"),
          x.dtype.kind, x.dtype.itemsize)
print(f.dtype.type(3.5), isinstance(f.dtype.type(3.5), np.float32), a.dtype.type.__name__)
