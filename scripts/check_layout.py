#!/usr/bin/env python3
"""heft's layout rule, run by ctest (label lint, tests/lint): one folder = one library = one namespace,
and includes in one direction.

Each library folder below may include heft headers only of the folders listed as its dependencies
(`#include "heft/<folder>/..."`), and opens no namespace but heft::<folder> (and namespaces nested in
it). Outside the library folders, tests/<folder>/ may open heft::<folder> too (the module it tests);
nothing else may open a library's namespace. Exit 0 clean, 1 with one line per finding."""
import os
import re
import sys

# folder -> the folders it may include, in the order they build (CMakeLists.txt).
LIBRARIES = {
    "hal": [],
    "config": ["hal"],
    "drivers": ["hal", "config"],
    "dynamics": ["hal"],
    "estimator": ["hal", "dynamics"],
    "plugin": ["hal", "config", "drivers", "dynamics", "estimator"],
    "recording": ["hal", "drivers"],
    "identification": ["hal", "config", "drivers", "dynamics", "recording"],
    "host": ["hal", "config", "drivers", "dynamics", "estimator", "plugin", "recording"],
    "sim": ["hal", "config", "drivers", "dynamics", "estimator", "plugin", "recording", "host"],
}
SOURCES = (".c", ".h", ".cc", ".cpp", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"heft/([a-z_]+)/')
NAMESPACE = re.compile(r"^\s*namespace\s+heft::([a-z_]+)")


def files_under(root, folder):
    for base, dirs, names in os.walk(os.path.join(root, folder)):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "build"]
        for name in sorted(names):
            if name.endswith(SOURCES):
                yield os.path.join(base, name)


def check(root):
    findings = []
    for folder in sorted(os.listdir(root)):
        if folder.startswith(".") or folder == "build" or not os.path.isdir(os.path.join(root, folder)):
            continue
        library = folder if folder in LIBRARIES else None
        for path in files_under(root, folder):
            rel = os.path.relpath(path, root)
            parts = rel.split(os.sep)
            own = library
            if folder == "tests" and len(parts) > 2 and parts[1] in LIBRARIES:
                own = parts[1]  # tests/<folder>/ tests that folder's library
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and library:
                        dep = m.group(1)
                        if dep != library and dep not in LIBRARIES[library]:
                            findings.append(f"{rel}:{number}: {library}/ includes heft/{dep}/ "
                                            f"(it may include: {', '.join(LIBRARIES[library]) or 'nothing'})")
                    m = NAMESPACE.match(line)
                    if m:
                        ns = m.group(1)
                        if library and ns != library:
                            findings.append(f"{rel}:{number}: namespace heft::{ns} in {library}/ "
                                            f"(its namespace is heft::{library})")
                        elif not library and ns in LIBRARIES and ns != own:
                            findings.append(f"{rel}:{number}: namespace heft::{ns} outside {ns}/")
    return findings


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    missing = [f for f in LIBRARIES if not os.path.isdir(os.path.join(root, f))]
    findings = check(root) + [f"{f}/: listed as a library but missing" for f in missing]
    for line in findings:
        print(line)
    if findings:
        print(f"layout: {len(findings)} finding(s)")
        return 1
    print(f"layout: {len(LIBRARIES)} libraries, includes one way, one namespace each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
