#!/usr/bin/env python3
"""No robot's names in the simulator's or the report's code, run by ctest (label lint, tests/lint):
the scenarios, controllers and excitation take every link and joint of the robot from its role map
(simulation.roles, sim/include/heft/sim/roles.hpp), and heft-report takes each run's estimated link
and task error from the run (tools/report/task.cpp), so that any robot runs and is reported from
its configuration.

Usage: check_robot_names.py ROOT [FOLDER ...]. The names are every link and joint of the URDFs in
ROOT/config/robots (and below it); the code is every C++ source under ROOT/FOLDER (default: sim). A
string literal in
the code is a finding when it is one of those names ("torso") or contains one that has an
underscore in it ("left_elbow_error_rad"): a name of one robot in code. Words that are names of
heft's own vocabulary as well as links (ALLOWED, each with why) are left alone, and so is a line
that ends with `// role key` (a key of the role map itself, "pelvis", which the reference
humanoid's link shares). Exit 0 clean, 1 with one line per finding (file:line: the literal and the
name)."""
import os
import re
import sys
import xml.etree.ElementTree as ET

SOURCES = (".c", ".h", ".cc", ".cpp", ".hpp")
# A link or joint name that is also a word of heft's own: not a finding.
ALLOWED = {
    "imu": "a device kind of simulation.faults and the deviations' draw of the base IMU",
    "floating_base": "the configuration's key robot.floating_base (heft-report reads the runs' "
                     "configurations), a root joint's name in some URDFs",
}
# A C++ string literal (no raw strings in sim/); escaped quotes kept inside.
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def robot_names(root):
    names = set()
    for base, _, files in os.walk(os.path.join(root, "config", "robots")):
        for name in sorted(files):
            if not name.endswith(".urdf"):
                continue
            tree = ET.parse(os.path.join(base, name))
            for element in tree.getroot():
                if element.tag in ("link", "joint") and element.get("name"):
                    names.add(element.get("name"))
    return {n for n in names if n not in ALLOWED}


def findings(root, names, folder="sim"):
    with_underscore = sorted((n for n in names if "_" in n), key=len, reverse=True)
    out = []
    for base, dirs, files in os.walk(os.path.join(root, folder)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if line.rstrip().endswith("// role key"):
                        continue
                    for literal in LITERAL.findall(line):
                        hit = literal if literal in names else next(
                            (n for n in with_underscore if n in literal), None)
                        if hit:
                            out.append('%s:%d: "%s" names the robot\'s "%s" (take it from the role '
                                       'map, sim/include/heft/sim/roles.hpp, or the run)'
                                       % (os.path.relpath(path, root), number, literal, hit))
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__.split("\n\n")[1])
        return 2
    root = sys.argv[1]
    folders = sys.argv[2:] or ["sim"]
    for folder in folders:
        if not os.path.isdir(os.path.join(root, folder)):
            print("check_robot_names: no folder %s under %s" % (folder, root))
            return 2
    names = robot_names(root)
    if not names:
        print("check_robot_names: no URDF under %s/config/robots" % root)
        return 1
    found = [f for folder in folders for f in findings(root, names, folder)]
    for f in found:
        print(f)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
