#!/usr/bin/env python3
"""scripts/check_robot_names.py on a made-up tree (one URDF, one simulator source): clean, then one
finding of each kind. Fails (FAIL:) if the checker passes a link's or joint's name in a string
literal, whole or inside a longer one, or if it flags code that names no link of the robot, a word
of heft's own (imu) or a line marked `// role key`."""
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


def run(source):
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "config", "robots"))
        os.makedirs(os.path.join(root, "sim", "src"))
        with open(os.path.join(root, "config", "robots", "r.urdf"), "w") as f:
            f.write(URDF)
        with open(os.path.join(root, "sim", "src", "a.cpp"), "w") as f:
            f.write(source)
        p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
        return p.returncode, p.stdout


failed = 0
cases = [
    ("clean", 'auto e = roles.knee + "_error_rad";\nf("trunk height");\nkind("imu");\n', 0, ""),
    ("a link", 'x = body("trunk");\n', 1, 'sim/src/a.cpp:1: "trunk" names the robot\'s "trunk"'),
    ("a joint inside a literal", 'y = 0;\ns = "l_knee_joint_error_rad";\n', 1,
     'sim/src/a.cpp:2: "l_knee_joint_error_rad" names the robot\'s "l_knee_joint"'),
    ("a role key", 'constexpr const char* kTrunk = "trunk";  // role key\n', 0, ""),
]
for name, source, code, needle in cases:
    rc, out = run(source)
    if rc != code or needle not in out:
        print(f"FAIL: {name}: exit {rc} (wanted {code}), output:\n{out}")
        failed += 1
    else:
        print(f"ok: {name}")
sys.exit(1 if failed else 0)
