b = b'ab\x00c\xff'
print(b, len(b), b[0], b[-1], b[1:3], list(b))
print(repr(b"it's"), b'a' + b'b', b'x' * 3, b'a' == b'a', b'a' == 'a', b'ab' < b'b')
print('héllo'.encode(), 'héllo'.encode('utf-8').decode('utf-8'), b'abc'.decode())
print({b'k': 1}[b'k'], hash(b'a') == hash(b'a'), b'b' in b'abc', 98 in b'abc')
print(bytes([65, 66]), bytes(3), bytes('hi', 'ascii'), b'a,b,c'.split(b','), b' x '.strip())
print(str(b'q'), b'%s' if False else b'', b'ab' 
      b'cd', rb'\n', type(b'').__name__, isinstance(b'', bytes), b'\x01'.hex())
print(b'abc'.startswith(b'ab'), b','.join([b'a', b'b']), b'hi'.upper())
try:
    b'\xff'.decode()
except UnicodeError as e:
    print('UnicodeError', e)
try:
    b'a' + 'b'
except TypeError as e:
    print(e)
# string tensors are not here (pure language); iteration and membership
for x in b'hi':
    print(x)
print(b'a-b-c'.replace(b'-', b'+'), b'aaa'.count(b'a'), b'abc'.find(b'c'), b'x\ty'.split())
print('abc'.encode('latin-1'), b'caf\xe9'.decode('latin-1'), 'é'.encode('ascii', 'replace'))
print(b'\xff\xfe'.decode('utf-8', 'replace'), b'a\xffb'.decode('utf-8', 'ignore'))
print(sorted([b'b', b'a', b'ab']), bool(b''), bool(b'x'), b'abc'[::-1], b'abcdef'[1:5:2])
print(b"n%d" % 3, b"%s-%s" % (b"a", b"b"), b"%05.1f" % 2.5)
