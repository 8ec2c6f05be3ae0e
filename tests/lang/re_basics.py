# The re module (shell/lang/mod_re.c + re.py.inc) against CPython 3 (the .out is python3's):
# the patterns of TF1 scripts (cifar10's tower names, text-CNN clean_str, tokenizers),
# groups, flags, lookarounds, backreferences, sub templates, split and findall rules,
# unicode text, and the messages of bad patterns.
import re
print(re.sub('%s_[0-9]*/' % 'tower', '', 'tower_0/conv1/weights'))
def clean_str(string):
    string = re.sub(r"[^A-Za-z0-9(),!?\'\`]", " ", string)
    string = re.sub(r"\'s", " \'s", string)
    string = re.sub(r"\'ve", " \'ve", string)
    string = re.sub(r"n\'t", " n\'t", string)
    string = re.sub(r",", " , ", string)
    string = re.sub(r"!", " ! ", string)
    string = re.sub(r"\(", " \( ", string)
    string = re.sub(r"\?", " \? ", string)
    string = re.sub(r"\s{2,}", " ", string)
    return string.strip().lower()
print(clean_str("It's a great movie, isn't it?! (Really) -- I've seen it..."))
print(re.findall(r"\w+|[^\w\s]", "Hello, wörld! 3.5 apples"))
print(re.split(r"\s+", " a  b c "), re.split(r"(,)", "a,b,,c"), re.split(r"x*", "axbc"), re.split(r"\b", "a b"))
m = re.match(r"(?P<key>\w+)=(?P<val>\d+)?", "abc=")
print(m, m.group(), m.groups(), m.groupdict(), m.span("key"), m.lastindex, m.lastgroup, m["key"])
print(re.sub(r"(\w)(\w*)", lambda m: m.group(1).upper() + m.group(2), "hello big world"))
print(re.sub(r"(?P<w>\w+)@(\w+)", r"\2 at \g<w> \g<0>\n", "me@host you@there"))
print(re.sub("x*", "-", "abxd"), re.subn("a", "b", "aaa", count=2), re.findall(r"(a)(b)?", "ab a"))
print(re.search(r"^b", "a\nb", re.M), re.search(r"^b", "a\nb"), re.search(r"a.b", "a\nb", re.S).span(), re.search("A", "xa", re.I).start())
print(re.fullmatch(r"\d+", "123"), re.fullmatch(r"\d+", "123a"), re.compile(r"\d+").match("x12", 1))
print(re.findall(r"(?i)[a-c]+", "xAbCd"), re.findall(r"a{2,3}", "aaaaaaa"), re.findall(r"a{2,3}?", "aaaaaaa"), re.findall(r"<.*?>", "<a><bb>"))
print(re.findall(r"(a*)*b", "aab"), re.match(r"(a|ab)(c|bcd)(d*)", "abcd").groups(), re.search(r"(\w+)\s\1", "hey hey you").group(1))
print(re.search(r"foo(?=bar)", "foobaz foobar").span(), re.search(r"foo(?!bar)", "foobar foobaz").span())
print(re.escape("a.b*c (d) é"), re.compile("a+b", re.I | re.M), re.compile(r"\d"))
print(re.search(r"$", "ab\n").span(), re.findall(r"$", "a\nb\n", re.M), re.search(r"\Aab\Z", "ab"))
print(re.sub(r"é+", "E", "cafééé"), re.search(r"[à-ü]+", "naïve café").group(), re.findall(r".", "aé"))
p = re.compile(r"""(\d+)  # number
                   \s*(\w+)  # unit""", re.X)
print(p.findall("3 kg, 10m"))
for bad in ["a**", "(ab", "[ab", "*a", "a{3,2}", r"\q", "(?P<1a>x)", "(?P=nope)", r"(a)\2", "a)", "(?<=a)b", "(?<=a+)b"]:
    try:
        re.compile(bad)
        print("compiled", bad)
    except re.error as e:
        print("error:", e, "|", e.pos)
try:
    re.sub("a", r"\g<x>", "a")
except (IndexError, re.error) as e:
    print(type(e).__name__, e)
print(re.sub(r"(a)|b", r"[\1]", "ab"), re.findall(r"\d+(?:\.\d+)?", "1.5 and 22"), re.split(",", "a,b,c", maxsplit=1))
print(re.findall(r"(?<=\$)\d+", "cost \$15 or \$7"), re.findall(r"(?<!a)b", "ab cb b"), re.sub(r"(?<=é)x", "Y", "éx ax"))
