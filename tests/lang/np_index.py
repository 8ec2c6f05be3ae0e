# numpy's basic indexing: ints, slices, None and Ellipsis on any axis (expected output from numpy)
import numpy as np
a = np.arange(2 * 8 * 8 * 1).reshape(2, 8, 8, 1)
print(a[:, :4, :, 0].shape, a[:, :4, :, 0].sum())
print(a[:, 1, :3, 0])
print(a[0, :, 2].shape, a[..., 0].shape, a[:, None, 1].shape, a[None].shape, a[...].shape)
print(a[1, 2:4, ::3, 0])
print(a[1, ::-3, -1, 0])
print(a[0, 7:2:-2, 1:3, 0])
print(a[1, 3, 4, 0], a[-1, -1, -1, -1])
print(a[:, 5:5].shape, a[0, ..., 0].shape, a[..., 1:3, 0].shape)
b = np.arange(12.0).reshape(3, 4)
print(b[[2, 0], 1:3])
print(b[np.array([True, False, True]), ::2])
print(b[:, -1], b[1:, None, 0].shape)
for key in [(0, 0, 0, 0, 0), (Ellipsis, 0, Ellipsis), (0, 9), (0, slice(None), 1.5)]:
    try:
        a[key]
    except IndexError as e:
        print("IndexError:", e)
