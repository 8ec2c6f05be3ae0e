#!/usr/bin/env bash
# The re module never hangs and never overflows the C stack: catastrophic backtracking
# raises re.error once a match's step budget is spent (CPython would run for hours), and
# long subjects match with the explicit backtrack stack. tests/lang/re_module covers the
# rest of re against python3.
. "$(dirname "$0")/lib.sh"
cat >"$WORK/budget.py" <<'PY'
import re, sys
try:
    re.match("(a|aa)*c", "a" * 60)
    print("matched")
except re.error as e:
    print("re.error:", e)
old = re._set_step_budget(1000)
try:
    re.search("(x+x+)+y", "x" * 30)
except re.error as e:
    print("re.error:", e)
print(re._set_step_budget(old))
print(re.match("(?:a|b)*", "ab" * 500000).end())
print(re.match("(a|b)*?$", "ab" * 200000).span(1))
print(len(re.findall(r"\w+", "word " * 200000)))
print(re.sub(r"\s{2,}", " ", "a  " * 300000)[:6])
try:
    re.compile("(" * 300 + ")" * 300)
except re.error as e:
    print("error:", e)
print(re.compile("(?:" * 100 + "(" * 100 + "a" + ")" * 200).match("a").span(100))
def gen():
    yield re.compile("(?:" * 198 + "(?=(b))" + "(b)" + ")" * 198).match("b").groups()
print(next(gen()))
PY
out=$(timeout 120 "$TFSH" "$WORK/budget.py" 2>&1)
rc=$?
check "the script ends by itself" 0 "$rc"
check "catastrophic backtracking raises, saying why" \
  "re.error: the pattern needs too many backtracking steps on this string (more than 100000000); '(a|aa)*c' backtracks catastrophically (nested or overlapping repeats such as (a+)+): rewrite it" \
  "$(echo "$out" | sed -n 1p)"
check "a lowered budget is spent sooner" \
  "re.error: the pattern needs too many backtracking steps on this string (more than 3000); '(x+x+)+y' backtracks catastrophically (nested or overlapping repeats such as (a+)+): rewrite it" \
  "$(echo "$out" | sed -n 2p)"
check "setting it back returns the lowered budget" 1000 "$(echo "$out" | sed -n 3p)"
check "a million-character greedy loop" 1000000 "$(echo "$out" | sed -n 4p)"
check "a lazy loop with a group over 400000 characters" "(399999, 400000)" "$(echo "$out" | sed -n 5p)"
check "findall over a megabyte" 200000 "$(echo "$out" | sed -n 6p)"
check "sub over 900000 characters" "a a a " "$(echo "$out" | sed -n 7p)"
check "too deep nesting is an error" "error: too many nested parentheses (more than 200) at position 200" "$(echo "$out" | sed -n 8p)"
check "200 nested groups work" "(0, 1)" "$(echo "$out" | sed -n 9p)"
check "deep nesting inside a generator (its own stack)" "('b', 'b')" "$(echo "$out" | sed -n 10p)"
finish
