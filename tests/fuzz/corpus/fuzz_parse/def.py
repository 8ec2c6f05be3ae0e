def f(a, b=2, *args, **kw):
    """doc"""
    return lambda x: a + x

class C(object):
    def m(self):
        return self
