#!/usr/bin/env python3
"""scripts/check_robot_names.py on a made-up tree (one URDF, one simulator source, one report source):
clean, then one finding of each kind. Fails (FAIL:) if the checker passes a link's or joint's name
in a string literal, whole or inside a longer one, in sim/ or in a folder named on its command line
(tools/report), or if it flags code that names no link of the robot, a word of heft's own (imu) or
a line marked `// role key`."""
import os
import subprocess
import sys
import tempfile

CHECKER = sys.argv[1]
URDF = """<robot name="r">
  <link name="trunk"/><link name="imu"/><link name="l_shank"/>
  <joint name="l_knee_joint" type="revolute"><parent link="trunk"/><child link="l_shank"/></joint>
</robot>
"""


def run(source, report="", folders=()):
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "config", "robots"))
        os.makedirs(os.path.join(root, "sim", "src"))
        os.makedirs(os.path.join(root, "tools", "report"))
        with open(os.path.join(root, "config", "robots", "r.urdf"), "w") as f:
            f.write(URDF)
        with open(os.path.join(root, "sim", "src", "a.cpp"), "w") as f:
            f.write(source)
        with open(os.path.join(root, "tools", "report", "b.cpp"), "w") as f:
            f.write(report)
        p = subprocess.run([sys.executable, CHECKER, root, *folders], capture_output=True, text=True)
        return p.returncode, p.stdout


failed = 0
cases = [
    ("clean", 'auto e = roles.knee + "_error_rad";\nf("trunk height");\nkind("imu");\n', 0, ""),
    ("a link", 'x = body("trunk");\n', 1, 'sim/src/a.cpp:1: "trunk" names the robot\'s "trunk"'),
    ("a joint inside a literal", 'y = 0;\ns = "l_knee_joint_error_rad";\n', 1,
     'sim/src/a.cpp:2: "l_knee_joint_error_rad" names the robot\'s "l_knee_joint"'),
    ("a role key", 'constexpr const char* kTrunk = "trunk";  // role key\n', 0, ""),
]
# (name, simulator source, report source, folders, exit code, finding)
cases = [(n, s, "", (), c, f) for n, s, c, f in cases] + [
    ("the report, not asked for", "", 'm = Measure(t, "l_shank", "x");\n', (), 0, ""),
    ("the report, asked for", "", 'm = Measure(t, "l_shank", "x");\n', ("sim", "tools/report"), 1,
     'tools/report/b.cpp:1: "l_shank" names the robot\'s "l_shank"'),
    ("the report, clean", "", 'm = Measure(t, task.link, task.error);\n', ("sim", "tools/report"), 0,
     ""),
]
for name, source, report, folders, code, needle in cases:
    rc, out = run(source, report, folders)
    if rc != code or needle not in out:
        print(f"FAIL: {name}: exit {rc} (wanted {code}), output:\n{out}")
        failed += 1
    else:
        print(f"ok: {name}")
sys.exit(1 if failed else 0)
