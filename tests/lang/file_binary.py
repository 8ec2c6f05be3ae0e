# Files opened in binary mode read and write bytes, as Python's
import os, tempfile
d = tempfile.mkdtemp()
p = os.path.join(d, "b.bin")
with open(p, "wb") as f:
    print(f.write(b"\x00\x01ab\xff\n2nd"))
data = open(p, "rb").read()
print(type(data).__name__, len(data), data)
print(open(p, "rb").readline(), [type(x).__name__ for x in open(p, "rb")])
with open(p, "w") as f:
    f.write("h\u00e9llo")
print(repr(open(p).read()), open(p, "rb").read())
for mode, v in (("w", b"x"), ("wb", 3)):
    try:
        open(p, mode).write(v)
    except TypeError as e:
        print("TypeError:", e)
os.remove(p)
os.rmdir(d)
