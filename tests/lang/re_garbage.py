# 3000 random patterns made of regex metacharacters: each compiles or raises re.error (or
# the IndexError/ValueError CPython raises too), and runs; nothing crashes or hangs.
import re
import random
random.seed(11)
alpha = list("ab()[]{}*+?|^$\\.-,:=!<>P0123dDwWsSbBAZxuge#")
for i in range(3000):
    p = "".join(random.choice(alpha) for _ in range(random.randint(1, 14)))
    try:
        r = re.compile(p)
        r.findall("ab(a)bb \u00e9 123 xx{2}")
        r.sub("\\g<0>", "aab")
    except (re.error, IndexError, ValueError):
        pass
print("done")
