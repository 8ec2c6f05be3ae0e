for i in range(3):
    if i % 2 == 0:
        continue
    elif i > 5:
        break
    else:
        pass
while False:
    x = 1
