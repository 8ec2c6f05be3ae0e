# numpy item and slice assignment (basic indexing, broadcast of scalars and trailing
# axes, copy on write); expected output from real numpy.
import numpy as np
a = np.zeros([2, 3])
a[0, 1] = 5.0
a[1] = [1, 2, 3]
print(a)
a[:, 1] = 1.0
print(a)
b = a
a[-1, ::2] = [7, 8]
print(b)
c = np.arange(12).reshape([3, 4])
c[1:, 2] = 9
print(c)
try:
    c[0] = [1, 2]
except ValueError as e:
    print("ValueError:", e)
try:
    c[5, 0] = 1
except IndexError as e:
    print("IndexError:", e)
d = np.ones([2, 2, 3], dtype=np.float32)
try:
    d[0] = np.ones([3, 2])
except ValueError as e:
    print("ValueError:", e)
d[1, :, :] = np.array([1, 2, 3])
print(d)
