# An uncaught error prints a traceback (outermost frame first) and exits 1.
def inner(x):
    return x / 0


def outer():
    print("before")
    return inner(1)


outer()
print("never")
