#!/usr/bin/env python3
"""Lists C++ functions longer than a limit (default 80 lines) in the given folders: a definition is a
line at the start of a line (or indented in a class) ending in `{` whose braces close later; lambdas
and classes are not counted. A rough check for reviews, not a parser.
  scripts/function_lengths.py [--limit N] [--allow PATH:NAME]... FOLDER...
--allow names a function that may stay long for now (its reason beside the ctest that passes it).
Exit 0 when nothing else is over the limit, 1 otherwise (ctest lint_function_length)."""
import os
import re
import sys

HEAD = re.compile(r"^(\s*)[\w:<>,~*&\s\[\]]+\([^;]*\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>]+)?\s*\{\s*$")
SKIP = re.compile(r"^\s*(if|for|while|switch|catch|else|do|namespace|struct|class|enum|union|return)\b")


LITERALS = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|//.*$")


def functions(path):
    # string and character literals and line comments blanked, so their braces do not count
    lines = [LITERALS.sub('""', l) for l in open(path, encoding="utf-8", errors="replace").read().split("\n")]
    i = 0
    while i < len(lines):
        line = lines[i]
        # a signature may span lines: join up to 6 lines back until a line ending in '{'
        if line.rstrip().endswith("{") and not SKIP.match(line) and "=" not in line.split("(")[0]:
            start = i
            sig = line
            j = i
            while not HEAD.match(sig) and j > 0 and i - j < 6 and not lines[j - 1].rstrip().endswith((";", "}", "{")):
                j -= 1
                sig = lines[j].rstrip() + " " + sig.strip()
            if HEAD.match(sig) and not SKIP.match(sig) and "[" not in sig.split("(")[0]:
                depth = 0
                for k in range(i, len(lines)):
                    depth += lines[k].count("{") - lines[k].count("}")
                    if depth <= 0:
                        name = re.search(r"([\w:~]+)\s*\(", sig)
                        yield (name.group(1) if name else "?"), j + 1, k - j + 1
                        i = k
                        break
        i += 1


def main():
    args = sys.argv[1:]
    limit = 80
    allowed = set()
    while args[:1] in (["--limit"], ["--allow"]):
        if args[0] == "--limit":
            limit = int(args[1])
        else:
            allowed.add(args[1])
        args = args[2:]
    found = 0
    for folder in args:
        for base, _, names in os.walk(folder):
            for n in sorted(names):
                if n.endswith((".cpp", ".hpp", ".cc", ".h")):
                    p = os.path.join(base, n)
                    for name, line, length in functions(p):
                        if length > limit:
                            rel = os.path.relpath(p)
                            if f"{rel}:{name}" in allowed:
                                print(f"{rel}:{line}: {name}: {length} lines (allowed)")
                                continue
                            print(f"{rel}:{line}: {name}: {length} lines (limit {limit})")
                            found += 1
    print(f"function length: {found} function(s) over {limit} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
