try:
    raise ValueError('x')
except ValueError as e:
    print(e)
finally:
    pass
assert 1 is not None, 'no'
