# The re module: syntax, API and error messages, against CPython 3 (re_module.out is
# python3's output for this file).
import re


def show(label, f):
    try:
        r = f()
    except re.error as e:
        r = "error: %s | pos=%r lineno=%r colno=%r" % (e, e.pos, e.lineno, e.colno)
    except (IndexError, TypeError, ValueError) as e:
        r = "%s: %s" % (type(e).__name__, e)
    print(label, "->", repr(r))


def m(p, s, flags=0):
    x = re.search(p, s, flags)
    if x is None:
        return None
    return (x.span(), x.group(0), x.groups())


print("== literals, dot, classes")
for p, s in [("abc", "xxabcxx"), ("a.c", "a\nc abc"), ("[a-c]+", "xxbcaby"), ("[^a-c]+", "abcxyzab"),
             ("[]a]+", "x]a]b"), ("[a\\]]+", "x]a]b"), ("[\\d.-]+", "v1.2-3x"), ("[-a]+", "b-a-"),
             ("[a-]+", "b-a-"), ("[\\w\\s]+", "é ü!"), ("[é-ü]+", "aéöüz"), ("[\\x41-\\x43]+", "zABCD"),
             ("[\\u00e9]", "caf\u00e9"), ("\\x41\\u0042\\t", "AB\t"), ("\\0", "a\0"), ("\\101", "zA"),
             ("[\\101-\\103]+", "ABCD"), ("\\.\\*\\+\\?\\(\\)", "x.*+?()"), ("\\é", "é"), ("[.]", "a.b"),
             ("\\n\\r\\f\\v", "\n\r\f\v"), ("[\\b]", "a\bb"), ("a{", "a{"), ("a{x}", "a{x}"),
             ("a{,}", "aaa"), ("{", "{"), ("a}", "a}"), ("]", "]")]:
    show("search %r %r" % (p, s), lambda: m(p, s))

print("== escapes \\d \\w \\s \\b \\A \\Z")
for p, s in [("\\d+", "ab 123 x"), ("\\D+", "12ab3"), ("\\w+", "¡héllo wörld!"), ("\\W+", "ab, cd"),
             ("\\s+", "a \t\n b"), ("\\S+", "  xy  "), ("\\bfoo\\b", "a foo b"), ("\\bfoo\\b", "afoob"),
             ("\\Bo\\B", "foo"), ("\\Aab", "ab"), ("\\Aab", "cab"), ("ab\\Z", "ab\n"), ("ab$", "ab\n"),
             ("ab$", "ab\nx"), ("\\d+", "٣٤5"), ("\\w+", "日本語 テキスト"),
             ("\\w+", "Привет мир"), ("\\b\\w", "été à")]:
    show("search %r %r" % (p, s), lambda: m(p, s))

show("unicode spaces", lambda: re.search("\\s+", "a\u00a0\u3000\u2003b").span())

print("== anchors and flags")
show("^ multiline", lambda: re.findall("^\\w+", "one two\nthree\nfour", re.M))
show("^ no multiline", lambda: re.findall("^\\w+", "one two\nthree"))
show("$ multiline", lambda: re.findall("\\w+$", "one two\nthree\nfour", re.MULTILINE))
show("$ final newline", lambda: re.findall("\\w+$", "one\ntwo\n"))
show("dotall", lambda: re.match("a.b", "a\nb", re.S).group())
show("dotall long", lambda: re.match("a.b", "a\nb", re.DOTALL).group())
show("no dotall", lambda: re.match("a.b", "a\nb"))
show("ignorecase", lambda: re.findall("[a-c]+", "xABCaBx", re.I))
show("ignorecase literal", lambda: re.findall("hello", "Hello HELLO hello", re.IGNORECASE))
show("ignorecase unicode", lambda: re.findall("éa", "ÉA éa", re.I))
show("ignorecase cyrillic", lambda: re.findall("привет", "ПРИВЕТ", re.I))
show("ignorecase ascii", lambda: re.findall("é", "É", re.I | re.A))
show("ascii \\w", lambda: re.findall("\\w+", "héllo", re.ASCII))
show("unicode flag", lambda: re.findall("\\w+", "héllo", re.U))
show("verbose", lambda: re.match(r"""
    (\d+)   # number
    \s* [-] \s*   # dash
    (\d+)   # another
    """, "12 - 34", re.X).groups())
show("verbose class space", lambda: re.findall("[ ]a # x", " a", re.VERBOSE))
show("verbose escaped space", lambda: re.findall("a\\ b", "a b", re.X))
show("inline i", lambda: re.findall("(?i)abc", "ABC abc"))
show("inline m", lambda: re.findall("(?m)^x", "x\nx"))
show("inline s", lambda: re.match("(?s).+", "a\nb").group())
show("inline x", lambda: re.match("(?x) a b c # comment", "abc").group())
show("inline combined", lambda: re.findall("(?im)^A", "a\nA"))
show("two inline groups", lambda: re.findall("(?i)(?m)^a", "A\na"))
show("inline flags in pattern.flags", lambda: re.compile("(?i)x").flags)
show("scoped flags", lambda: re.findall("a(?i:b)c", "abc aBc abC"))
show("scoped off", lambda: re.findall("(?i)a(?-i:b)c", "ABC AbC"))
show("flags value", lambda: tuple(int(f) for f in (re.I, re.M, re.S, re.X, re.A, re.U, re.L, re.IGNORECASE | re.MULTILINE)))
show("pattern.flags", lambda: (re.compile("a").flags, re.compile("a", re.I).flags, re.compile(b"a").flags,
                               re.compile("a", re.A).flags))

print("== groups")
show("groups", lambda: re.match("(a)(b)?(c)", "ac").groups())
show("groups default", lambda: re.match("(a)(b)?(c)", "ac").groups("-"))
show("noncapturing", lambda: re.match("(?:a|b)+(c)", "abac").groups())
show("named", lambda: re.match("(?P<first>\\w+) (?P<last>\\w+)", "Jane Doe").groupdict())
show("named default", lambda: re.match("(?P<a>x)|(?P<b>y)", "y").groupdict(0))
show("named backref", lambda: re.findall("(?P<q>['\"]).*?(?P=q)", "'a' \"b\" 'c\""))
show("backref", lambda: re.search("(\\w)\\1", "abccd").group())
show("backref icase", lambda: re.search("(a)\\1", "aA", re.I).group())
show("backref 10", lambda: re.match("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10", "abcdefghijj").group())
show("backref unmatched", lambda: re.match("(a)?\\1b", "b"))
show("lookahead", lambda: re.findall("\\w+(?=,)", "a, b, c"))
show("negative lookahead", lambda: re.findall("\\b(?!un)\\w+", "undo redo unto do"))
show("lookbehind", lambda: re.findall("(?<=\\$)\\d+", "$10 20 $30"))
show("negative lookbehind", lambda: re.findall("(?<!\\$)\\b\\d+", "$10 20 $30"))
show("lookbehind backref", lambda: re.findall("(a)b(?<=\\1b)c", "abc abd"))
show("lookbehind \\b and $", lambda: [x.span() for x in re.finditer("(?<=a\\b)|(?<!a$)b", "a b ab\nb")])
show("lookahead captures", lambda: re.match("(?=(a+))a", "aaa").groups())
show("atomic", lambda: re.match("(?>a+)b", "aaab").group())
show("atomic no backtrack", lambda: re.match("(?>a+)a", "aaa"))
show("possessive", lambda: re.match("a++a", "aaa"))
show("comment group", lambda: re.match("a(?#comment)b", "ab").group())
show("nested", lambda: re.match("((a)(b(c)))", "abc").groups())
show("lastindex nested", lambda: (re.match("((a)b)", "ab").lastindex, re.match("(a)(b)", "ab").lastindex,
                                  re.match("(a)|(b)", "b").lastindex, re.match("a", "a").lastindex))
show("lastgroup", lambda: (re.match("(?P<x>a)(?P<y>b)", "ab").lastgroup, re.match("(?P<x>a)(b)", "ab").lastgroup))
show("alternation order", lambda: re.match("a|ab", "ab").group())
show("alternation empty", lambda: re.findall("a|", "ab"))
show("group repeated keeps last", lambda: re.match("(?:(a)|b)*", "ab").groups())
show("conditional", lambda: re.findall("(<)?(\\w+)(?(1)>|$)", "<a> b <c d"))
show("conditional named", lambda: [bool(re.match("(?P<q>')?x(?(q)')$", t)) for t in ("'x'", "x", "'x")])
show("conditional forward", lambda: re.match("(?(2)a|b)(c)", "bc").group())
show("group in loop", lambda: re.match("(\\w)+", "abc").group(1))

print("== quantifiers")
for p, s in [("a*", "aaa"), ("a+", "baaa"), ("a?", "aa"), ("a{2}", "aaaa"), ("a{2,}", "aaaaa"),
             ("a{,2}", "aaaa"), ("a{2,3}", "aaaa"), ("a*?", "aaa"), ("a+?", "aaa"), ("a??", "aa"),
             ("a{2,3}?", "aaaa"), ("<.*>", "<a><b>"), ("<.*?>", "<a><b>"), ("(a*)*", "b"),
             ("(a*)+", "b"), ("(a|b)*c", "ababc"), ("(a*)*b", "aab"), ("(?:a?)*?b", "ab"),
             ("(?:)*x", "x"), ("(a{0,2}){3}", "aaaaa"), ("x{0}", "x"), ("(ab){2}", "ababab"),
             ("(\\s*)*$", "  "), ("(a?)+?b", "aab")]:
    show("search %r %r" % (p, s), lambda: m(p, s))

print("== match, fullmatch, search with pos and endpos")
pat = re.compile("\\w+")
show("match pos", lambda: pat.match("ab cd", 3).group())
show("match endpos", lambda: pat.match("abcdef", 0, 3).group())
show("search pos", lambda: pat.search("ab cd ef", 2).span())
show("fullmatch", lambda: (re.fullmatch("a|ab", "ab").group(), re.fullmatch("a", "ab")))
show("fullmatch endpos", lambda: pat.fullmatch("abc def", 0, 3).group())
show("^ with pos", lambda: re.compile("^b").search("ab", 1))
show("$ with endpos", lambda: re.compile("b$").search("abc", 0, 2).span())
show("match attrs", lambda: (lambda x: (x.pos, x.endpos, x.string, x.re.pattern))(pat.search("ab cd", 1, 4)))
show("pos past end", lambda: pat.search("ab", 5))
show("empty string", lambda: (re.match("", "").span(), re.search("$", "abc").span(), re.findall("", "ab")))

print("== findall, finditer")
show("findall 0 groups", lambda: re.findall("\\d+", "a1b22c333"))
show("findall 1 group", lambda: re.findall("(\\d)\\d*", "a1b22c333"))
show("findall n groups", lambda: re.findall("(\\w)=(\\d)?", "a=1 b= c=3"))
show("findall tokenizer", lambda: re.findall(r"\w+|[^\w\s]", "Don't stop: 3.5 x!"))
show("finditer", lambda: [(x.span(), x.group()) for x in re.finditer("\\w+", "ab cd  ef")])
show("finditer empty", lambda: [x.span() for x in re.finditer("x*", "axxb")])
show("finditer pos", lambda: [x.group() for x in re.compile("\\d").finditer("1234", 1, 3)])

print("== sub, subn")
show("clean_str 1", lambda: re.sub(r"[^A-Za-z0-9(),!?\'\`]", " ", "Héllo, it's a \"test\" #1!"))
show("clean_str 2", lambda: re.sub(r"\'s", " \'s", "it's John's"))
show("clean_str 3", lambda: re.sub(r"\'ve", " \'ve", "I've"))
show("clean_str 4", lambda: re.sub(r"n\'t", " n\'t", "don't can't"))
show("clean_str 5", lambda: re.sub(r",", " , ", "a,b"))
show("clean_str 6", lambda: re.sub(r"\(", " \\( ", "f(x)"))
show("clean_str 7", lambda: re.sub(r"\?", " \\? ", "why?"))
show("clean_str 8", lambda: re.sub(r"\s{2,}", " ", "a  b     c d").strip().lower())
TOWER_NAME = "tower"
show("cifar10 tower", lambda: re.sub("%s_[0-9]*/" % TOWER_NAME, "", "tower_0/conv1/weights"))
show("cifar10 tower 2", lambda: re.sub("%s_[0-9]*/" % TOWER_NAME, "", "tower_12/local3/tower_3/x"))
show("sub group refs", lambda: re.sub("(\\w+)@(\\w+)", "\\2 at \\g<1>", "joe@home"))
show("sub named", lambda: re.sub("(?P<w>\\w+)", "<\\g<w>>", "a bc"))
show("sub \\g<0>", lambda: re.sub("\\d", "[\\g<0>]", "a1b2"))
show("sub escapes", lambda: re.sub("x", "\\n\\t\\\\", "axb"))
show("sub unknown punct escape", lambda: re.sub("x", "\\.", "axb"))
show("sub octal", lambda: re.sub("x", "\\101\\0", "x"))
show("sub unmatched group", lambda: re.sub("(a)|b", "[\\1]", "ab"))
show("sub count", lambda: re.sub("a", "b", "aaaa", 2))
show("sub count kw", lambda: re.sub("a", "b", "aaaa", count=1))
show("subn", lambda: re.subn("a", "b", "aaaa"))
show("sub callable", lambda: re.sub("\\d+", lambda x: str(int(x.group()) * 2), "a1 b22"))
show("sub empty matches", lambda: re.sub("x*", "-", "abxd"))
show("sub flags", lambda: re.sub("a", "x", "aAa", flags=re.I))
show("sub unicode", lambda: re.sub("ö", "oe", "Köln, Böblingen"))
show("sub \\g<2> too big", lambda: re.sub("(a)", "\\g<2>", "a"))
show("sub \\2 too big", lambda: re.sub("(a)", "\\2", "a"))
show("sub unknown name", lambda: re.sub("(a)", "\\g<nope>", "a"))
show("sub bad name", lambda: re.sub("(a)", "\\g<a-b>", "a"))
show("sub missing <", lambda: re.sub("(a)", "\\gx", "a"))
show("sub unterminated name", lambda: re.sub("(a)", "\\g<1", "a"))
show("sub empty name", lambda: re.sub("(a)", "\\g<>", "a"))
show("sub bad escape", lambda: re.sub("(a)", "\\q", "a"))
show("sub trailing backslash", lambda: re.sub("(a)", "x\\", "a"))
show("expand", lambda: re.match("(\\w+) (\\w+)", "ab cd").expand("\\2-\\1"))

print("== split")
show("split", lambda: re.split("\\W+", "Words, words, words."))
show("split groups", lambda: re.split("(\\W+)", "Words, words, words."))
show("split maxsplit", lambda: re.split("\\W+", "Words, words, words.", 1))
show("split maxsplit kw", lambda: re.split("\\W+", "a b c d", maxsplit=2))
show("split optional group", lambda: re.split("(a)|b", "xaybz"))
show("split empty matches", lambda: re.split("\\b", "ab cd"))
show("split x*", lambda: re.split("x*", "axbc"))
show("split start", lambda: re.split("[,;]", ",a;b,"))
show("split flags", lambda: re.split("a", "xAyaz", flags=re.I))

print("== escape, purge, compile")
show("escape", lambda: re.escape("a.b*c?d+e(f)[g]{h}|i^j$k\\l m-n#o&p~q_r:s/t'u\"v,w!x@y%z=é"))
show("escape roundtrip", lambda: re.match(re.escape("1+1=2?"), "1+1=2?").group())
show("escape bytes", lambda: re.escape(b"a.b c"))
show("purge", lambda: re.purge())
show("compile twice", lambda: re.compile("ab") == re.compile("ab"))
show("compile compiled", lambda: re.compile(re.compile("ab")).pattern)
show("compile compiled with flags", lambda: re.compile(re.compile("ab"), re.I))
show("compile bad type", lambda: re.compile(3))
show("pattern attrs", lambda: (lambda p: (p.pattern, p.groups, p.groupindex == {"a": 1, "b": 3}))(re.compile("(?P<a>x)(y)(?P<b>z)")))
show("pattern repr", lambda: (repr(re.compile("a\\d")), repr(re.compile("x", re.I | re.S)), repr(re.compile(b"x"))))
show("pattern methods", lambda: (re.compile("\\d").findall("a1b2"), re.compile("\\d").sub("#", "a1b2"),
                                 re.compile("\\d").split("a1b2"), re.compile("\\d").subn("#", "a1"),
                                 re.compile("(\\d)").search("ab3").group(1)))
show("re.compile match", lambda: re.compile("[a-z]+").match("tensorflow 1").group())

print("== Match object")
x = re.search("(?P<k>\\w+)=(?P<v>\\d+)?", "  key=")
show("repr", lambda: repr(x))
show("repr long", lambda: repr(re.match(".*", "x" * 80)))
show("repr unicode", lambda: repr(re.search("é+", "aéé")))
show("group()", lambda: x.group())
show("group(0, 1, 'v')", lambda: x.group(0, 1, "v"))
show("group('k')", lambda: x.group("k"))
show("group(3)", lambda: x.group(3))
show("group('zz')", lambda: x.group("zz"))
show("m[1] m['k']", lambda: (x[1], x["k"], x[0]))
show("start end span", lambda: (x.start(), x.end(), x.span(1), x.start("v"), x.end(2), x.span("v")))
show("groups groupdict", lambda: (x.groups(), x.groups(""), x.groupdict(), x.groupdict("?")))
show("string re pos", lambda: (x.string, x.re.pattern, x.pos, x.endpos))
show("lastindex lastgroup", lambda: (x.lastindex, x.lastgroup))
show("regs", lambda: x.regs)
show("truth", lambda: (bool(x), bool(re.match("", "")), re.match("a", "b") is None))
show("expand named", lambda: x.expand("\\g<k>!"))
show("unicode spans", lambda: (re.search("wörld", "héllo wörld").span(), re.search("🙂+", "a🙂🙂b").span()))
show("unicode group", lambda: re.match("(\\w+) (\\w+)", "日本 語").groups())

print("== bytes")
show("bytes findall", lambda: re.findall(b"\\w+", b"ab cd"))
show("bytes sub", lambda: re.sub(b"b+", b"-", b"abbbc"))
show("bytes sub template", lambda: re.sub(b"(b+)", b"[\\1]", b"abbbc"))
show("bytes split", lambda: re.split(b",", b"a,b"))
show("bytes group", lambda: re.match(b"(a)(b)", b"ab").groups())
show("bytes \\w ascii", lambda: re.findall(b"\\w+", "é a".encode("utf-8")))
show("bytes pattern on str", lambda: re.match(b"a", "a"))
show("str pattern on bytes", lambda: re.match("a", b"a"))
show("str template on bytes", lambda: re.sub(b"a", "x", b"a"))
show("bytes template on str", lambda: re.sub("a", b"x", "a"))
show("findall unicode groups", lambda: re.findall("(é)(.)?", "aébéc é"))

print("== errors")
for p in ["*", "a**", "a|*", "+a", "a{2}{3}", "a*??", "(a", "a)", "(?:a", "[a", "[a-", "[^", "[]",
          "\\q", "a\\", "[\\q]", "\\x1", "\\x", "\\u12", "[z-a]", "a{3,2}", "(?P<1a>x)", "(?P<a>x)(?P<a>y)",
          "(?P=nope)", "(?P<a>x)(?P=a", "(?P<a", "(?P<>x)", "(a)\\2", "(a\\1)", "(?<x)", "(?Px)", "(?",
          "(?z)", "a(?i)b", "(?i", "(?i-)", "\\8", "(?<=a+)b", "abc\n(", "x\n  [a", "^*", "\\b+",
          "(?P<a-b>x)", "\\400", "[\\400]", "(?#abc", "(a|b", "a{1,2}{3}", "(?-", "(?i-z:a)", "(?P",
          "(?(1)a|b|c)", "(?(x)a)", "(?(0)a)", "(?(a-b)a)", "(?(3)a)(b)", "(?-u:a)", "(?au)", "(?L)", "(?i-i:a)",
          "[a-\\", "(?\\d)", "[\\w-#]", "(?i", "(?<=(a)\\1)", "(?<!(?P<x>a)(?P=x))", "(?<=a*)"]:
    show("compile %r" % p, lambda: re.compile(p))


def _err(p):
    try:
        re.compile(p)
    except re.error as e:
        return e


e = _err("ab\ncd(")
print("error object", e.msg, repr(e.pattern), e.pos, e.lineno, e.colno, isinstance(e, Exception))
print("error args", e.args)
print("bad flags", re.compile("x", 0).flags)
try:
    re.compile("(a")
except Exception as err:
    print("caught as", type(err).__name__, err)

print("== every pattern of up to three characters: the same verdicts and positions")
alpha = "a()[]{}|*+?\\^$-:P<=!1,i"
pats = [""]
for n in range(3):
    pats = pats + [p + c for p in pats if len(p) == n for c in alpha]
counts = {}
for p in pats:
    try:
        r = re.compile(p)
        k = "ok %d groups" % r.groups
        r.findall("a(b)[c]{1}|x*+?^$-:P<=!1,i")
    except re.error as e:
        k = "%s @%r" % (e.msg, e.pos)
    counts[k] = counts.get(k, 0) + 1
for k in sorted(counts):
    print(counts[k], k)

print("== Unicode: \\w \\d \\s and IGNORECASE as sre defines them")
ALL = "".join(chr(c) for c in list(range(1, 0x30000, 13)) + list(range(1, 0x800)) if not 0xd800 <= c < 0xe000)
for p in ["\\w", "\\d", "\\s", "\\W", "[^\\w\\d]", "\\b", "(?a)\\w", "(?i)[a-z]", "(?i)[\u0400-\u04ff]",
          "(?i)[\u0100-\u05ff]", "(?i)[k]", "(?i)s", "(?i)\u03c3", "(?i)\u00b5", "(?i)(.)\\1", "(?ia)k"]:
    r = [x.start() for x in re.finditer(p, ALL)]
    print(len(p), len(r), sum(r))
folds = 0
for c in range(0x41, 0x600):
    if chr(c) not in "\\.^$*+?{}[]()|":
        folds += len(re.findall(chr(c), ALL, re.I)) * c
print("case classes", folds)

print("== pathological patterns terminate")
show("(a|a)* fails fast enough", lambda: re.match("(?:a|b)*c", "ab" * 2000))
show("nested empty loops", lambda: re.match("((a?)*)*$", "aaa").span())
show("long subject", lambda: len(re.findall("\\w+", "word " * 20000)))
show("long match", lambda: re.match("(?:ab)*", "ab" * 50000).end())
show("bytes compile error", lambda: re.compile(b"(?u)"))
show("isinstance", lambda: (isinstance(re.compile("a"), re.Pattern), isinstance(re.match("a", "a"), re.Match)))
show("long lazy", lambda: re.match(".*?x", "a" * 100000 + "x").end())
