#!/usr/bin/env python3
"""scripts/propose_roles.py on heft's two humanoids, Unitree's G1 and H1_2 (floating and fixed base) and on
variants of the reference. Fails (FAIL:) if a humanoid's proposal is not exactly its role-map file
(config/robots/<robot>_roles.yaml, what its simulated configurations use), if a robot without a
right leg or with no shoulder joint about the forward axis gets a proposal without saying what it could
not decide (exit 1, the role named), or if renamed links and joints are not followed.
Usage: test_propose_roles.py ROOT"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
SCRIPT = os.path.join(ROOT, "scripts", "propose_roles.py")
ROBOTS = os.path.join(ROOT, "config", "robots")
WORK = tempfile.TemporaryDirectory()  # the variants' URDFs, removed at exit


def propose(urdf, *args):
    p = subprocess.run([sys.executable, SCRIPT, urdf, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def body(text):
    return [l for l in text.splitlines() if l and not l.startswith("#")]


def variant(edit):
    with open(os.path.join(ROBOTS, "heft_humanoid.urdf")) as f:
        text = edit(f.read())
    path = os.path.join(WORK.name, "variant.urdf")
    with open(path, "w") as f:
        f.write(text)
    return path


failed = 0


def check(name, ok, detail):
    global failed
    if ok:
        print("ok: " + name)
    else:
        print("FAIL: %s\n%s" % (name, detail))
        failed += 1


for robot in ("heft_humanoid", "heft_compact"):
    with open(os.path.join(ROBOTS, robot + "_roles.yaml")) as f:
        want = body(f.read())
    for urdf in (robot + ".urdf", robot + "_fixed.urdf"):
        rc, out, err = propose(os.path.join(ROBOTS, urdf))
        check(urdf + " proposes its role-map file", rc == 0 and body(out) == want,
              "exit %d\n%s%s" % (rc, out, err))

# Unitree's G1 and H1_2 (published models, config/robots/unitree_*): their committed role maps are
# the proposals.
for folder, stem in (("unitree_g1", "g1_29dof"), ("unitree_h1_2", "h1_2_handless")):
    with open(os.path.join(ROBOTS, folder, stem + "_roles.yaml")) as f:
        want = body(f.read())
    for urdf in (stem + ".urdf", stem + "_fixed.urdf"):
        rc, out, err = propose(os.path.join(ROBOTS, folder, urdf))
        check(urdf + " proposes its role-map file", rc == 0 and body(out) == want,
              "exit %d\n%s%s" % (rc, out, err))

rc, out, _ = propose(os.path.join(ROBOTS, "heft_humanoid.urdf"), "--payload-arm", "right")
check("--payload-arm right", rc == 0 and "payload: {arm: right}" in out, out)


def no_right_leg(text):  # every link and joint of the right leg removed
    return re.sub(r'\s*<(link|joint) name="right_(hip|thigh|shin|knee|ankle|foot)[^>]*?(/>|>.*?</\1>)', "", text,
                  flags=re.S)


rc, out, err = propose(variant(no_right_leg))
check("no right leg: undecided, named", rc == 1 and "right_leg undecided" in err and
      "right_leg: {hip_pitch: ''" in out and "left_leg: {hip_pitch: left_hip_pitch" in out, out + err)


def rolls_about_z(text):
    return re.sub(r'(<joint name="(left|right)_shoulder_roll".*?<axis xyz=)"1 0 0"', r'\1"0 0 1"', text,
                  flags=re.S)


rc, out, err = propose(variant(rolls_about_z))
check("shoulder rolls about z: the arms undecided", rc == 1 and "left_arm undecided" in err and
      "(the shoulder roll)" in err and "right_arm: {shoulder_roll: ''" in out, out + err)


def renamed(text):
    return text.replace('"left_', '"port_').replace('"torso"', '"chest"').replace('_knee"', '_knee_joint"')


rc, out, err = propose(variant(renamed))
check("renamed links and joints followed", rc == 0 and "torso: chest" in out and
      "knee: port_knee_joint" in out and "hand: port_hand" in out, out + err)
sys.exit(1 if failed else 0)
