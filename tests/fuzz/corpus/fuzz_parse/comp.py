a = [x * 2 for x in range(10) if x % 3]
b = {k: v for k, v in zip('ab', [1, 2])}
c = {1, 2, 3}
d = a[1:5:2], a[::-1], a[-1]
