@staticmethod
def g(*, k=1):
    global z
    nonlocal_ = not k and k or None
    return (yield_ := 1)
