#!/usr/bin/env python3
"""scripts/check_layout.py on a made-up tree: clean, then one finding of each kind. Fails (FAIL:) if
the checker passes an include against the direction, a foreign namespace in a library folder, or a
library's namespace opened outside its folder, or if it flags the clean tree."""
import os
import subprocess
import sys
import tempfile

CHECKER = sys.argv[1]
LIBS = ["hal", "config", "drivers", "dynamics", "estimator", "plugin", "recording", "identification", "host", "sim"]


def tree(root, extra):
    for lib in LIBS:
        os.makedirs(os.path.join(root, lib, "src"), exist_ok=True)
        with open(os.path.join(root, lib, "src", "a.cpp"), "w") as f:
            f.write(f'#include "heft/hal/x.hpp"\nnamespace heft::{lib} {{\n}}  // namespace heft::{lib}\n')
    os.makedirs(os.path.join(root, "tests", "estimator"), exist_ok=True)
    with open(os.path.join(root, "tests", "estimator", "t.cpp"), "w") as f:
        f.write('#include "heft/sim/x.hpp"\nnamespace heft::estimator::test {\n}\n')
    for path, text in extra.items():
        with open(os.path.join(root, path), "w") as f:
            f.write(text)


def run(extra):
    with tempfile.TemporaryDirectory() as root:
        tree(root, extra)
        p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
        return p.returncode, p.stdout


failed = 0
cases = [
    ("clean", {}, 0, "includes one way"),
    ("include upwards", {"estimator/src/b.cpp": '#include "heft/plugin/p.hpp"\n'}, 1,
     "estimator/src/b.cpp:1: estimator/ includes heft/plugin/"),
    ("foreign namespace", {"drivers/src/b.cpp": "namespace heft::hal {\n}\n"}, 1,
     "namespace heft::hal in drivers/"),
    ("library namespace outside", {"tests/estimator/u.cpp": "namespace heft::sim::test {\n}\n"}, 1,
     "namespace heft::sim outside sim/"),
]
for name, extra, code, needle in cases:
    rc, out = run(extra)
    if rc != code or needle not in out:
        print(f"FAIL: {name}: exit {rc} (wanted {code}), output:\n{out}")
        failed += 1
    else:
        print(f"ok: {name}")
print(f"{len(cases) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
