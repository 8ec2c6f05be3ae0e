a = b @ c | d & e ^ ~f << 2 >> 1 // 3
x = a if b else c
print(*a, **b)
del a[0]
