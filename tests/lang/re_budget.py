# A pattern that backtracks exponentially (CPython hangs on it) ends with re.error, not a
# hang; the expected output is written by hand for that line.
import re
try:
    re.match(r"(a+)+b", "a" * 40)
    print("matched")
except re.error as e:
    print("re.error:", str(e).split(";")[0])
print(re.match(r"(a+)+b", "aaab").group())
