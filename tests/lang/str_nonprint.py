# chr(0) is one NUL character; repr escapes what Python's does not print (C1 controls, NBSP,
# soft hyphen, separators, format and private-use characters). Output from python3.
s = chr(0)
print(len(s), repr(s), repr("a\x00b"), len("a\x00b"), ord(chr(0)), repr("\xa0\x07\n"), "x".join([chr(0), "y"]) == "\x00xy")
print(repr("caf\u00e9 \u00ad\u200b\u2028 \u3000x\ufeff \ue000 \u65e5\u672c \u00bf \u0394 \U0001F600"), repr(["\x85", "\u202f"]))
