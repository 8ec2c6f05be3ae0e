# Statements: if/elif/else, loops, break/continue/else, pass, del, global.
for i in range(10):
    if i % 2 == 0:
        continue
    elif i == 7:
        break
    else:
        print("odd", i)
else:
    print("never")
n = 0
while n < 3:
    n += 1
else:
    print("while else", n)
for x in []:
    pass
else:
    print("empty for else")
counter = 0
def bump():
    global counter
    counter += 1
bump(); bump()
print(counter)
d = {"a": 1, "b": 2}
del d["a"]
print(d)
lst = [0, 1, 2, 3, 4, 5]
del lst[1:3]
print(lst)
del lst[::2]
print(lst)
z = 5
del z
try:
    print(z)
except NameError as e:
    print("NameError:", e)
for k in {"x": 1, "y": 2}:
    print(k)
for k, v in {"x": 1, "y": 2}.items():
    print(k, v)
for a, b in zip([1, 2, 3], "abc"):
    print(a, b)
for ch in "hi":
    print(ch)
for t in (1, 2):
    print(t)
for i in range(10, 0, -3):
    print(i)
i = 0
while True:
    i += 1
    if i > 4:
        break
print(i)
x = 3 if i > 2 else 4
print(x)
print(1 < 2 < 3, 1 < 2 > 3, 1 == 1.0, 2 in [1, 2], 3 not in [1, 2], None is None, [] is not [])
print(not 0, 0 or "a", 1 and 2, [] or {}, "" and 1)
if __name__ == "__main__":
    print("main")
...
