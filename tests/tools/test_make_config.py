#!/usr/bin/env python3
"""tools/heft-make-config as a team meets it on a first robot: the reference robot's URDF and map, a
map with a header row, a URDF whose root is the pelvis (no floating joint) with an imu line, with
--fixed-base and with --floating-base, a map with two bad lines and the usage errors. Each case runs
the tool in a fresh temporary folder; a check that fails prints "FAIL: <case>: ..." and the run
exits 1. The last line: "N passed, M failed".

    test_make_config.py [HEFTD]

With heftd's path, every file the tool writes must also pass `heftd --config FILE --check` (the
round trip a team makes next); without it that check is left out, and said so."""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import yaml
except ImportError:  # python3-yaml is optional: the structure is then checked line by line
    yaml = None

SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = os.path.join(SOURCE, "tools", "heft-make-config")
URDF = os.path.join(SOURCE, "config", "robots", "heft_humanoid.urdf")
MAP = os.path.join(SOURCE, "config", "robots", "heft_humanoid_can_map.csv")
JOINTS = 29  # the reference robot's moving joints, each a line of its map
HEFTD = sys.argv[1] if len(sys.argv) > 1 else None

passed = failed = 0


def check(case, ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s: %s" % (case, what))


def run(*args, cwd):
    p = subprocess.run([sys.executable, TOOL] + list(args), cwd=cwd, capture_output=True, text=True,
                       timeout=30)
    return p.returncode, p.stdout, p.stderr


def heftd_check(case, tmp, name):
    """The written file through `heftd --check`: fails on any exit but 0 (the tool wrote a file
    heftd refuses, e.g. floating_base: false with drivers.imu)."""
    if HEFTD is None:
        return
    p = subprocess.run([HEFTD, "--config", os.path.join(tmp, name), "--check"], cwd=tmp,
                       capture_output=True, text=True, timeout=60)
    check(case, p.returncode == 0 and "configuration OK" in p.stdout + p.stderr,
          "heftd --check exit %d: %s" % (p.returncode, (p.stdout + p.stderr).strip()[-600:]))


def keys(text):
    """{'section.key': value} of the file's top-level sections and their direct keys (comments
    dropped): enough to check the structure without python3-yaml."""
    out, section = {}, None
    for line in text.splitlines():
        body = line.split("#", 1)[0].rstrip()
        if not body:
            continue
        if not line.startswith(" "):
            section = body.split(":", 1)[0]
            out[section] = body.split(":", 1)[1].strip()
        elif line.startswith("  ") and not line.startswith("   ") and ":" in body and section:
            k, v = body.strip().split(":", 1)
            out[section + "." + k] = v.strip()
    return out


def written(case, tmp, args, name="heft.yaml"):
    """Runs the tool with --out tmp/name; checks exit 0, a file that parses as YAML (or has the
    sections, without python3-yaml) and its final newline. Returns (text, keys) or (None, {})."""
    out = os.path.join(tmp, name)
    rc, _, err = run(*args, "--out", out, cwd=tmp)
    check(case, rc == 0, "exit %d, expected 0 (stderr: %s)" % (rc, err.strip()))
    if rc != 0 or not os.path.exists(out):
        return None, {}
    with open(out) as f:
        text = f.read()
    check(case, text.endswith("\n"), "the file does not end with a newline")
    k = keys(text)
    for section in ("backend", "robot", "drivers", "estimator"):
        check(case, section in k, "no top-level '%s:'" % section)
    if yaml is not None:
        try:
            doc = yaml.safe_load(text)
            check(case, isinstance(doc, dict) and doc.get("backend") == "socketcan"
                  and len(doc["drivers"]["joints"]) == JOINTS,
                  "the YAML has no backend: socketcan or not %d joints" % JOINTS)
            check(case, doc["robot"]["floating_base"] == (k.get("robot.floating_base") == "true"),
                  "the YAML's floating_base and the line's differ")
        except (yaml.YAMLError, KeyError, TypeError) as e:
            check(case, False, "not YAML: %s" % e)
    else:
        check(case, sum(l.startswith("    - {name: ") or l.startswith("    - name: ")
                        for l in text.splitlines()) == JOINTS,
              "not %d joint lines" % JOINTS)
    return text, k


def urdf_without_floating_joint(tmp):
    """A copy of the reference URDF whose root is the pelvis: the floating joint and its massless
    root link removed (as many robots' URDFs come)."""
    tree = ET.parse(URDF)
    robot = tree.getroot()
    joint = next(j for j in robot.iter("joint") if j.get("type") == "floating")
    parent = joint.find("parent").get("link")
    robot.remove(joint)
    robot.remove(next(l for l in robot.iter("link") if l.get("name") == parent))
    path = os.path.join(tmp, "pelvis_root.urdf")
    tree.write(path)
    return path


# The reference robot: fails if the tool refuses it, the file is not YAML (or lacks a section), has
# no final newline, or loses the floating base or the base IMU the reference map maps.
with tempfile.TemporaryDirectory() as tmp:
    case = "reference robot"
    text, k = written(case, tmp, ["--urdf", URDF, "--map", MAP, "--links", "torso"])
    reference = text
    check(case, k.get("robot.floating_base") == "true", "floating_base %r" % k.get("robot.floating_base"))
    check(case, k.get("drivers.imu", "").startswith("{bus: can0, base_id: 0x400"), "no drivers.imu")
    check(case, "host" not in k, "a host section (the base IMU is the base's source)")
    heftd_check(case, tmp, "heft.yaml")

# A header row (with a spreadsheet's byte-order mark, any case, spaces): fails if the header is taken
# as a device line (exit 1) or the file differs from the reference's beyond its first comment line.
with tempfile.TemporaryDirectory() as tmp:
    case = "header row"
    path = os.path.join(tmp, "map.csv")
    with open(MAP) as src, open(path, "w", encoding="utf-8-sig") as dst:
        dst.write("Kind, Name , BUS, Node ID\n" + src.read())
    text, _ = written(case, tmp, ["--urdf", URDF, "--map", path, "--links", "torso"])
    if text is not None and reference is not None:
        check(case, text.splitlines()[1:] == reference.splitlines()[1:],
              "the file differs from the reference robot's")

# No floating joint (the root is the pelvis) and an imu line: fails unless the base is floating and
# the IMU is written (the old tool wrote floating_base: false, which heftd --check refuses).
with tempfile.TemporaryDirectory() as tmp:
    case = "pelvis root, imu line"
    urdf = urdf_without_floating_joint(tmp)
    _, k = written(case, tmp, ["--urdf", urdf, "--map", MAP, "--links", "torso"])
    check(case, k.get("robot.floating_base") == "true", "floating_base %r" % k.get("robot.floating_base"))
    check(case, "drivers.imu" in k, "no drivers.imu")
    heftd_check(case, tmp, "heft.yaml")

    # --fixed-base: fails unless the base is fixed and the imu line left out (heftd refuses
    # drivers.imu on a fixed base).
    case = "pelvis root, --fixed-base"
    text, k = written(case, tmp, ["--urdf", urdf, "--map", MAP, "--links", "torso", "--fixed-base"],
                      "fixed.yaml")
    check(case, k.get("robot.floating_base") == "false", "floating_base %r" % k.get("robot.floating_base"))
    check(case, "drivers.imu" not in k, "drivers.imu written on a fixed base")
    heftd_check(case, tmp, "fixed.yaml")

    # --floating-base without an imu line: fails unless the base's motion comes from the
    # controller framework (host.framework_input.base), heftd's other base source.
    case = "pelvis root, no imu line, --floating-base"
    noimu = os.path.join(tmp, "noimu.csv")
    with open(MAP) as src, open(noimu, "w") as dst:
        dst.writelines(l for l in src if not l.startswith("imu,"))
    _, k = written(case, tmp, ["--urdf", urdf, "--map", noimu, "--links", "torso", "--floating-base"],
                   "framework.yaml")
    check(case, k.get("robot.floating_base") == "true", "floating_base %r" % k.get("robot.floating_base"))
    check(case, k.get("host.framework_input") == "{base: true}",
          "host.framework_input %r" % k.get("host.framework_input"))
    heftd_check(case, tmp, "framework.yaml")

    # No imu line, no option: the pelvis-rooted URDF is a fixed base (fails if it is not).
    case = "pelvis root, no imu line"
    _, k = written(case, tmp, ["--urdf", urdf, "--map", noimu, "--links", "torso"], "plain.yaml")
    check(case, k.get("robot.floating_base") == "false", "floating_base %r" % k.get("robot.floating_base"))
    heftd_check(case, tmp, "plain.yaml")

# Standard actuators: two joints as MIT-mode actuators on one bus (motor ids 1, 2) and one as a
# CiA 402 drive (node 5). Fails unless they are written with their device kinds, the file passes
# heftd --check, and a motor id used twice on a bus or a CiA 402 node 0 are named by line.
with tempfile.TemporaryDirectory() as tmp:
    case = "standard actuators"
    path = os.path.join(tmp, "map.csv")
    with open(MAP) as src:
        lines = src.read().splitlines()
    joint_rows = [i for i, l in enumerate(lines) if l.startswith("joint,")]
    first, second, third = joint_rows[:3]
    for i, kind, ident in ((first, "mit", 1), (second, "mit", 2), (third, "CiA402", 5)):
        _, name, bus, _ = lines[i].split(",")
        lines[i] = "%s,%s,%s,%d" % (kind, name, bus, ident)
    with open(path, "w") as dst:
        dst.write("\n".join(lines) + "\n")
    text, k = written(case, tmp, ["--urdf", URDF, "--map", path, "--links", "torso"])
    if text is not None:
        check(case, text.count("device: mit, motor_id: ") == 2, "not two MIT joints")
        check(case, "device: cia402" in text and "{cob_id: 0x185, map: [statusword, position]}" in text,
              "no CiA 402 joint with its TPDOs")
        heftd_check(case, tmp, "heft.yaml")
    case = "standard actuators, bad lines"
    bad = list(lines)
    bus = lines[second].split(",")[2]
    bad[second] = "mit,%s,%s,1" % (lines[second].split(",")[1], bus)
    bad[third] = "cia402,%s,%s,0" % (lines[third].split(",")[1], lines[third].split(",")[2])
    with open(path, "w") as dst:
        dst.write("\n".join(bad) + "\n")
    rc, out, err = run("--urdf", URDF, "--map", path, "--out", os.path.join(tmp, "bad.yaml"), cwd=tmp)
    check(case, rc == 1, "exit %d, expected 1" % rc)
    check(case, "map.csv:%d: MIT motor id 1 on %s is already line %d's" % (second + 1, bus, first + 1)
          in err, "the motor id clash not named: %r" % err)
    check(case, "map.csv:%d: node 0 is out of range 1..127" % (third + 1) in err,
          "node 0 not named: %r" % err)

# --fixed-base on a URDF with a floating joint: fails unless refused (exit 1) with the joint named
# (the model would float whatever the file says).
with tempfile.TemporaryDirectory() as tmp:
    case = "--fixed-base, floating joint"
    rc, out, err = run("--urdf", URDF, "--map", MAP, "--fixed-base", cwd=tmp)
    check(case, rc == 1 and "'floating_base' is floating" in err and not out,
          "exit %d, stderr %r" % (rc, err.strip()))

# Two bad lines (an unknown joint at line 5, a non-number at line 9): fails unless the exit is 1, both
# are named as map.csv:LINE, and no file is written.
with tempfile.TemporaryDirectory() as tmp:
    case = "two bad lines"
    with open(MAP) as f:
        lines = f.read().splitlines()
    lines[4] = lines[4].replace("waist_pitch", "waist_pich")
    lines[8] = lines[8].rsplit(",", 1)[0] + ",7O"  # a letter O for a zero
    with open(os.path.join(tmp, "map.csv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    rc, _, err = run("--urdf", URDF, "--map", "map.csv", "--out", "heft.yaml", cwd=tmp)
    check(case, rc == 1, "exit %d, expected 1" % rc)
    check(case, "map.csv:5: unknown joint 'waist_pich'" in err, "line 5 not named: %r" % err)
    check(case, "map.csv:9: '7O' is not a number" in err, "line 9 not named: %r" % err)
    check(case, not os.path.exists(os.path.join(tmp, "heft.yaml")), "a file written all the same")

# Usage: a missing --map, and both base options: fails unless the exit is 2 (not 1: nothing was read).
with tempfile.TemporaryDirectory() as tmp:
    for case, args in [("usage: no --map", ["--urdf", URDF]),
                       ("usage: both base options", ["--urdf", URDF, "--map", MAP, "--fixed-base",
                                                     "--floating-base"])]:
        rc, out, err = run(*args, cwd=tmp)
        check(case, rc == 2 and "usage:" in err and not out, "exit %d, stderr %r" % (rc, err.strip()))

if yaml is None:
    print("no python3-yaml: the files' structure checked line by line")
if HEFTD is None:
    print("no heftd given: the files were not checked with heftd --check")
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
