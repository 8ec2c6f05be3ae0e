#!/usr/bin/env python3
"""rawstr.py IN OUT: turn a GNU raw string literal file (R"PY( ... )PY") into an ordinary
C string literal, for clang, which has no raw string literals in C. Only the fuzz build
(tests/fuzz/CMakeLists.txt) uses it; gcc compiles the originals."""
import sys

src = open(sys.argv[1], encoding="utf-8").read()
start, end = src.index('R"PY(') + 5, src.rindex(')PY"')
body = src[start:end]
out = []
for line in body.split("\n"):
    esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("?", "\\?")
    out.append('"' + esc + '\\n"')
out[-1] = out[-1][:-3] + '"'   # the last line has no newline after it
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(out) + "\n")
