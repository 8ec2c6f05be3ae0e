# A class defined in a function: its methods (and their inner functions and
# comprehensions) see the function's variables through the class body (was a crash).
def f(a):
    b = a * 2
    class C(object):
        y = b
        def m(self):
            def g():
                return a + b
            return g()
        def n(self):
            return [a + i for i in range(2)]
    return C
c = f(1)
print(c().m(), c.y, c().n())
class D(object):
    def k(self):
        z = 3
        class E(object):
            def w(self):
                return z
        return E().w()
print(D().k())
