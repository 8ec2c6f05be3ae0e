# Lexing: strings, numbers, continuation, comments.
a = 'single' "double" '''triple
quoted''' """also
triple"""
print(a)
print(r"raw\n\t", "esc\n\tx\\y\'z\"", "\x41\u00e9\101")
print("adjacent" ' concat' f" {1 + 1}")
b = 1 + \
    2
print(b)
c = (1,
     2,   # comment inside brackets
     3)
print(c)
print([
    1, 2,
    3,
])
print(1e-10, .5, 1., 0x1F, 0o17, 0b101, 1_000_000, 1_0.5e1_0, 3.14e+2)
print(10, -3, +4, ~5, 2**-1, -2**2)
x = 10; y = 20; print(x + y)
print(f"{x}+{y}={x + y:>5}|{x!r}|{'q'!r}|{x:08.3f}|{x:x}|{255:#x}|{y:^7}|")
print(f"{3.14159:.2f} {1234567.891:,.2f} {0.25:.1%} {1e-7:g} {12:b} {'s':<4}|")
name = "world"
print(f"hello {name.upper()} {len(name)} {[1, 2][1]} {{literal}}")
width = 8
print(f"[{name:>{width}}]")
print(f"{x=}")
print("tab\there", 'it''s')
print("""line1
line2""".splitlines())
print('unicode: é ü 日本', len('日本'), '日本'[1])
