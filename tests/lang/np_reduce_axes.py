# numpy reductions over several axes, std / var (ddof, keepdims), np.all / np.any; the
# output is numpy's (rounded: float32 sums may differ from numpy's pairwise order in the
# last digit).
import numpy as np
a = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
b = np.arange(12).reshape(3, 4)
print(np.round(a.mean(axis=(1, 2)), 5), np.round(a.sum(axis=(0, 2)), 4), b.sum(axis=(0, 1)), b.max(axis=(0,)),
      np.round(np.mean(a, axis=(0, -1)), 5))
print(np.round(a.std(), 5), np.round(a.std(axis=1), 5), np.round(np.std(b, axis=(0, 1)), 6), b.var(ddof=1),
      np.var(a, axis=(1, 2), keepdims=True).shape, np.round(b.std(axis=0, keepdims=True), 6))
print(np.prod(b + 1, axis=(0, 1)), b.min(axis=(1, 0)), (b > 5).any(axis=(0, 1)), a.std(axis=(0, 1, 2)).dtype,
      np.all(b >= 0), np.any(b > 11), np.all(b > 0, axis=1), b.std().dtype, b.var(axis=(0,)))
try:
    b.sum(axis=(0, 0))
except ValueError as e:
    print("ValueError:", e)
try:
    b.mean(axis=(0, 2))
except ValueError as e:
    print("ValueError:", e)
