# numpy.random as legacy scripts use it: the numbers numpy 1.x/2.x draws for the same seed
# (MT19937, 53-bit doubles, polar Gaussians, masked bounded ints, legacy shuffles).
import numpy as np
r = np.random.RandomState(0)
print(r.rand(3), r.randn(3), r.randint(0, 10, 5), r.permutation(6))
np.random.seed(42)
print(np.random.rand(2, 2))
print(np.random.randn(3))
print(np.random.uniform(-1, 1, size=(2, 3)))
print(np.random.normal(5.0, 2.0, 4))
print(np.random.randint(5), np.random.randint(3, 9), np.random.randint(-100, 100, size=(2, 2)))
a = np.arange(10)
np.random.shuffle(a)
print(a)
l = [1, 2, 3, 4, 5]
np.random.shuffle(l)
print(l)
print(np.random.permutation(np.arange(12).reshape(4, 3)))
print(np.random.choice(10, 5), np.random.choice([1.5, 2.5, 3.5], size=4), np.random.choice(8, 4, replace=False))
print(np.random.choice(5, 6, p=[0.1, 0.0, 0.3, 0.6, 0.0]))
print(np.random.random_sample(), np.random.random((2,)), np.random.rand())
print(np.random.randint(0, 2**40, size=3))
x_data = np.random.rand(100).astype(np.float32)
print(x_data.dtype, x_data.shape, x_data[:3])
