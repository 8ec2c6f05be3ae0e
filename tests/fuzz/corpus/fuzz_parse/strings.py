a = 'x' "y"
b = f"{a!r:>10} {1+2}"
c = '%s %d' % (a, 3)
d = '{}'.format(r'\n')
e = b'bytes'
