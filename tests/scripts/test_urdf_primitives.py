#!/usr/bin/env python3
"""scripts/urdf_primitives.py on a made-up two-link URDF with a binary STL mesh: fails (FAIL:) if a
visual survives, a kept link's mesh collision is not the box of the mesh's vertices (shifted by
the collision's origin), another link's collision is not dropped, the foot's contact spheres do not
become the one box spanning them, a foot published as one mesh does not become its vertices' box (or
is refused without --meshes), or the floating joint or the added frame is missing or wrong.
Usage: test_urdf_primitives.py ROOT"""
import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SCRIPT = os.path.join(sys.argv[1], "scripts", "urdf_primitives.py")
URDF = """<robot name="r">
  <mujoco><compiler meshdir="meshes"/></mujoco>
  <link name="trunk">
    <visual><geometry><mesh filename="meshes/trunk.STL"/></geometry></visual>
    <collision><origin xyz="0 0 0.1" rpy="0 0 0"/><geometry><mesh filename="meshes/trunk.STL"/></geometry></collision>
  </link>
  <link name="shank">
    <collision><geometry><mesh filename="meshes/trunk.STL"/></geometry></collision>
  </link>
  <link name="foot">
    <collision><origin xyz="-0.05 0.02 -0.03"/><geometry><sphere radius="0.005"/></geometry></collision>
    <collision><origin xyz="0.12 -0.03 -0.03"/><geometry><sphere radius="0.005"/></geometry></collision>
  </link>
  <joint name="knee" type="revolute"><parent link="trunk"/><child link="shank"/><axis xyz="0 1 0"/></joint>
  <joint name="ankle" type="revolute"><parent link="shank"/><child link="foot"/><axis xyz="0 1 0"/></joint>
</robot>
"""


def stl(path, triangles):
    with open(path, "wb") as f:
        f.write(b"\0" * 80 + struct.pack("<I", len(triangles)))
        for t in triangles:
            f.write(struct.pack("<3f", 0, 0, 1))
            for v in t:
                f.write(struct.pack("<3f", *v))
            f.write(b"\0\0")


def near(text, want):
    return all(abs(float(a) - b) < 1e-6 for a, b in zip(text.split(), want))


failed = 0


def check(name, ok, detail=""):
    global failed
    print(("ok: " if ok else "FAIL: ") + name + ("" if ok else "\n" + detail))
    failed += not ok


with tempfile.TemporaryDirectory() as d:
    os.makedirs(os.path.join(d, "meshes"))
    stl(os.path.join(d, "meshes", "trunk.STL"), [[(-0.1, -0.2, 0.0), (0.3, 0.1, 0.05), (0.0, 0.0, 0.4)]])
    with open(os.path.join(d, "in.urdf"), "w") as f:
        f.write(URDF)
    out = os.path.join(d, "out.urdf")
    p = subprocess.run([sys.executable, SCRIPT, os.path.join(d, "in.urdf"), out, "--meshes",
                        os.path.join(d, "meshes"), "--keep-collisions", "trunk", "--sole", "foot",
                        "--floating", "--frame", "foot_ft,foot,0.035,0,-0.035"], capture_output=True, text=True)
    check("runs", p.returncode == 0, p.stderr)
    text = open(out).read()
    root = ET.fromstring(text[text.index("<robot"):])
    check("no visual, no mujoco element", root.find(".//visual") is None and root.find("mujoco") is None)
    trunk = root.find("link[@name='trunk']/collision")
    check("the trunk's mesh is its vertices' box", trunk is not None and
          near(trunk.find("geometry/box").get("size"), (0.4, 0.3, 0.4)) and
          near(trunk.find("origin").get("xyz"), (0.1, -0.05, 0.3)), text)
    check("the shank's collision dropped", root.find("link[@name='shank']/collision") is None, text)
    soles = root.findall("link[@name='foot']/collision")
    check("the foot's spheres become one box", len(soles) == 1 and
          near(soles[0].find("geometry/box").get("size"), (0.18, 0.06, 0.01)) and
          near(soles[0].find("origin").get("xyz"), (0.035, -0.005, -0.03)), text)
    floating = root.find("joint[@type='floating']")
    check("a floating joint from base_root to the trunk", floating is not None and
          floating.find("parent").get("link") == "base_root" and floating.find("child").get("link") == "trunk")
    frame = root.find("joint[@name='foot_ft_joint']")
    check("the frame on the foot", frame is not None and frame.find("parent").get("link") == "foot" and
          near(frame.find("origin").get("xyz"), (0.035, 0, -0.035)))

    # A foot published as one mesh (Unitree's H1_2): with --sole and --meshes its sole is the box of the
    # mesh's vertices, shifted by the collision's origin; without the meshes it is refused, named.
    with open(os.path.join(d, "mesh_foot.urdf"), "w") as f:
        f.write(URDF.replace('<collision><origin xyz="-0.05 0.02 -0.03"/><geometry><sphere radius="0.005"/></geometry></collision>',
                             '<collision><origin xyz="0 0 -0.05"/><geometry><mesh filename="meshes/trunk.STL"/></geometry></collision>')
                .replace('<collision><origin xyz="0.12 -0.03 -0.03"/><geometry><sphere radius="0.005"/></geometry></collision>', ""))
    p = subprocess.run([sys.executable, SCRIPT, os.path.join(d, "mesh_foot.urdf"), out, "--meshes",
                        os.path.join(d, "meshes"), "--sole", "foot"], capture_output=True, text=True)
    text = open(out).read()
    soles = ET.fromstring(text[text.index("<robot"):]).findall("link[@name='foot']/collision")
    check("a mesh foot becomes its vertices' box", p.returncode == 0 and len(soles) == 1 and
          near(soles[0].find("geometry/box").get("size"), (0.4, 0.3, 0.4)) and
          near(soles[0].find("origin").get("xyz"), (0.1, -0.05, 0.15)), p.stderr + text)
    p = subprocess.run([sys.executable, SCRIPT, os.path.join(d, "mesh_foot.urdf"), out, "--sole", "foot"],
                       capture_output=True, text=True)
    check("a mesh foot without --meshes is refused, named", p.returncode != 0 and "--sole foot" in p.stderr, p.stderr)
sys.exit(1 if failed else 0)
