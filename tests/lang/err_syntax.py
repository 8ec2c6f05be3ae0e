x = 1
if x:
    y = (1 +
         2))
print(y)
