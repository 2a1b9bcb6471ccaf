#!/usr/bin/env python3
"""scripts/gen_sim_configs.py against the committed configurations, and robot entries
(scripts/robot_entry.py) on made-up robots. Fails (FAIL:) if a committed file under config/sim/ (or
config/heft.yaml, a generated robot's role map or CAN map) differs from what the generator writes for
every robot (--all), if a committed config/sim/ file is one the generator no longer writes (stale),
if a robot folder with only its URDF and role map does not get the derived buses, F/T frames and IMU,
or if a bad robot.yaml (unknown key, unknown bus group, a joint on no bus, no IMU frame) is not
refused with its file, line or key named.
Usage: test_gen_sim_configs.py ROOT"""
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
SCRIPT = os.path.join(ROOT, "scripts", "gen_sim_configs.py")
CONFIG = os.path.join(ROOT, "config")
failed = 0


def check(name, ok, detail=""):
    global failed
    print(("ok: " if ok else "FAIL: ") + name + ("" if ok else "\n" + detail))
    failed += not ok


def generate(out, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEFT_SIM_")}  # the committed defaults
    return subprocess.run([sys.executable, SCRIPT, "--out", out, *args], capture_output=True, text=True, env=env)


def files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


with tempfile.TemporaryDirectory() as work:
    out = os.path.join(work, "config")
    p = generate(out, "--all")
    check("--all runs", p.returncode == 0, p.stderr)
    written = files(out)
    differ = [f for f in written if not os.path.exists(os.path.join(CONFIG, f)) or
              not filecmp.cmp(os.path.join(out, f), os.path.join(CONFIG, f), shallow=False)]
    check("every generated file is committed as generated (%d files)" % len(written), not differ,
          "differ or missing (run python3 scripts/gen_sim_configs.py --all): " + ", ".join(differ))
    stale = [os.path.join("sim", f) for f in files(os.path.join(CONFIG, "sim"))
             if os.path.join("sim", f) not in written]
    check("every committed config/sim file is generated", not stale, "not generated: " + ", ".join(stale))

    # A robot folder with only its URDF and role map (the G1's): buses, F/T frames and IMU derived.
    robot = os.path.join(work, "robots", "biped")
    os.makedirs(robot)
    g1 = os.path.join(CONFIG, "robots", "unitree_g1")
    for f in ("g1_29dof.urdf", "g1_29dof_fixed.urdf", "g1_29dof_roles.yaml"):
        shutil.copy(os.path.join(g1, f), robot)
    p = generate(os.path.join(work, "derived"), "--robot-dir", robot)
    can = os.path.join(robot, "g1_29dof_can_map.csv")  # a robot outside config/robots: beside its URDF
    text = open(can).read() if os.path.exists(can) else ""
    check("a folder without robot.yaml: legs on can0, waist and arms on can1, derived devices",
          p.returncode == 0 and "joint,left_hip_pitch_joint,can0,0" in text and
          "joint,right_ankle_roll_joint,can0,11" in text and "joint,waist_yaw_joint,can1,12" in text and
          "ft,left_foot_ft,can0,0x300" in text and "ft,right_foot_ft,can1,0x310" in text and
          "imu,imu_in_pelvis,can0,0x400" in text, p.stderr + text)
    walk = os.path.join(work, "derived", "sim", "biped", "walk.yaml")
    check("its configurations in sim/<folder name>", os.path.exists(walk), p.stderr)

    def refused(body, *want):
        with open(os.path.join(robot, "robot.yaml"), "w") as f:
            f.write(body)
        p = generate(os.path.join(work, "bad"), "--robot-dir", robot)
        return p.returncode != 0 and all(w in p.stderr for w in want), p.stderr

    ok, err = refused("name: biped\nbusses: {can0: [legs]}\n", "robot.yaml:2: busses", "allowed: name")
    check("an unknown key is refused with file, line and the allowed keys", ok, err)
    ok, err = refused("buses: {can0: [legs, feet], can1: [arms]}\n", "unknown group 'feet'")
    check("an unknown bus group is refused", ok, err)
    ok, err = refused("buses: {can0: [legs], can1: [arms]}\n", "no bus for waist_yaw_joint")
    check("a joint on no bus is refused, named", ok, err)
    ok, err = refused("imu: \nbuses: {can0: [legs], can1: [waist, arms]}\n")
    check("an empty key still derives (imu: the pelvis's frame)", not ok, err)
    os.remove(os.path.join(robot, "robot.yaml"))
    with open(os.path.join(robot, "g1_29dof.urdf")) as f:
        urdf = f.read()
    with open(os.path.join(robot, "g1_29dof.urdf"), "w") as f:
        f.write(urdf.replace("imu_in_pelvis", "sensor_in_pelvis"))
    p = generate(os.path.join(work, "bad"), "--robot-dir", robot)
    check("no IMU frame on the pelvis is refused, named", p.returncode != 0 and "IMU frame" in p.stderr and
          "pelvis" in p.stderr, p.stderr)
sys.exit(1 if failed else 0)
