#!/usr/bin/env python3
"""List C function definitions longer than a limit (default 80 lines).

Usage: scripts/long-functions.py [--limit N] [PATH ...]   (default PATH: src)

A definition starts at a line at column 0 with a '(' whose header ends in
'{' (the layout clang-format gives the tree); its length runs from that
line to the closing '}' at column 0, both included.  A function whose preceding comment
says why it is long is still listed, marked "(reason above)" when the
comment block right above it contains the word "long".  Exit status 0.
"""
import os
import re
import sys

def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        head = line and not line[0].isspace() and "(" in line \
            and not line.startswith(("#", "/*", " *", "}", "struct", "enum", "union", "typedef")) \
            and "=" not in line.split("(")[0]
        if not head:
            i += 1
            continue
        # the header runs to the first line ending in '{' (a definition) or ';'
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")) and "}" not in lines[j] \
                and j - i < 20:
            j += 1
        if j >= len(lines) or not lines[j].rstrip().endswith("{"):
            i = j + 1
            continue
        start = i
        end = j + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        m = re.search(r"(\w+)\s*\(", " ".join(lines[start:j + 1]))
        name = m.group(1) if m else "?"
        # a reason in the comment block right above the header
        k = start - 1
        reason = False
        while k >= 0 and (lines[k].startswith((" *", "/*")) or lines[k].endswith("*/")):
            if re.search(r"\blong\b", lines[k]):
                reason = True
            k -= 1
        yield name, start + 1, end - start + 1, reason
        i = end + 1

def main(argv):
    limit = 80
    paths = []
    it = iter(argv)
    for a in it:
        if a == "--limit":
            limit = int(next(it))
        else:
            paths.append(a)
    if not paths:
        paths = ["src"]
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in names if n.endswith(".c")]
        else:
            files.append(p)
    rows = []
    for path in sorted(files):
        for name, line, length, reason in functions(path):
            if length > limit:
                rows.append((length, path, line, name, reason))
    for length, path, line, name, reason in sorted(rows, reverse=True):
        print(f"{length:5d}  {path}:{line}  {name}{'  (reason above)' if reason else ''}")
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
