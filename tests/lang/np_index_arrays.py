# numpy indexing by integer arrays and lists (rows gathered) and by boolean masks, as
# minibatch code does X[idx]; errors as numpy words them.
import numpy as np
X = np.arange(12).reshape(4, 3)
print(X[np.array([2, 0])])
print(X[[3, -1, 0]])
print(X[np.array([[0, 1], [2, 3]])].shape)
print(X[X[:, 0] > 3])
print(X[np.array([True, False, True, False])])
y = np.array([1.5, 2.5, 3.5])
print(y[[0, 0, 2]])
idx = np.random.RandomState(1).permutation(4)
print(X[idx])
try:
    X[np.array([5])]
except IndexError as e:
    print("IndexError:", e)
try:
    X[np.array([True, False])]
except IndexError as e:
    print("IndexError:", e)
