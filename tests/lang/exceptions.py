# try/except/else/finally, raise, assert, custom exceptions.
def risky(n):
    if n == 0:
        raise ValueError("zero")
    if n == 1:
        raise KeyError("one")
    return n
for n in range(3):
    try:
        r = risky(n)
    except ValueError as e:
        print("ValueError", e)
    except (KeyError, IndexError) as e:
        print("lookup", repr(e), str(e))
    else:
        print("ok", r)
    finally:
        print("finally", n)
def f():
    try:
        return "from try"
    finally:
        print("cleanup")
print(f())
def g():
    for i in range(3):
        try:
            if i == 1:
                continue
            if i == 2:
                break
        finally:
            print("fin", i)
    return i
print(g())
try:
    assert 1 == 2, "math is broken"
except AssertionError as e:
    print("assert:", e)
try:
    assert False
except AssertionError as e:
    print("bare assert:", repr(e))
class MyError(Exception):
    def __init__(self, code):
        super().__init__("code %d" % code)
        self.code = code
try:
    raise MyError(42)
except Exception as e:
    print(type(e).__name__, e, e.code, e.args, isinstance(e, MyError))
try:
    try:
        1 / 0
    except ZeroDivisionError:
        raise
except ZeroDivisionError as e:
    print("reraised:", e)
try:
    raise RuntimeError
except RuntimeError as e:
    print("class raise:", repr(e), e.args)
try:
    {}["missing"]
except KeyError as e:
    print("KeyError", e)
try:
    [][1]
except IndexError as e:
    print(e)
try:
    int("abc")
except ValueError as e:
    print(e)
try:
    None.foo
except AttributeError as e:
    print(e)
try:
    "a" + 1
except TypeError as e:
    print(e)
try:
    1 + "a"
except TypeError as e:
    print(e)
try:
    len(5)
except TypeError as e:
    print(e)
try:
    a, b = [1, 2, 3]
except ValueError as e:
    print(e)
try:
    a, b, c = [1]
except ValueError as e:
    print(e)
try:
    raise NotImplementedError("later")
except RuntimeError as e:
    print("NotImplementedError is a RuntimeError:", e)
try:
    raise StopIteration
except StopIteration:
    print("stop")
try:
    import no_such_module_xyz
except ImportError as e:
    print(e)
e = None
try:
    raise ValueError("v")
except ValueError as err:
    e = err
print(type(e).__name__, e)
def nested():
    try:
        raise TypeError("inner")
    except TypeError:
        raise ValueError("outer")
try:
    nested()
except ValueError as e:
    print("got", e)
try:
    x = 1 / 0
except:
    print("bare except")
try:
    pass
except Exception:
    pass
else:
    print("else runs")
print(issubclass(KeyError, LookupError), issubclass(ZeroDivisionError, ArithmeticError), issubclass(KeyboardInterrupt, Exception))
