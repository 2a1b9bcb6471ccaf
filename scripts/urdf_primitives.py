#!/usr/bin/env python3
"""A published robot's URDF made ready for heft's simulator, each change said in the output's header:
visuals dropped, mesh collisions replaced by boxes fitted to the meshes, contact points on the feet
replaced by their sole box, optionally a floating joint from a dummy root (MuJoCo's idiom) and
massless frames for sensors the robot lacks (foot F/T cells). Masses, inertias, joints and limits
stay as published.

    python3 scripts/urdf_primitives.py IN.urdf OUT.urdf [--meshes DIR] [--keep-collisions LINK,...]
        [--sole LINK,...] [--floating] [--frame NAME,PARENT,X,Y,Z ...] [--source TEXT]

--meshes DIR        the meshes' folder (binary or ASCII STL): a mesh collision of a link listed in
                    --keep-collisions becomes the axis-aligned box of its vertices (in the link's
                    frame); every other collision is dropped (the simulator's contacts are the
                    soles on the floor; boxes fitted to neighbouring links would overlap).
--sole LINK,...     the link's collisions (spheres or boxes: its contact points; a mesh: the box of
                    its vertices, with --meshes) become one box spanning them: the sole heft-sim
                    measures (its bottom face, its half sizes).
--floating          a massless `base_root` joined to the root link by a `floating` joint.
--frame N,P,X,Y,Z   a massless link N on a fixed joint to P at (X, Y, Z), axes as P's.
--source TEXT       where IN.urdf comes from (written into the header)."""
import argparse
import os
import struct
import xml.etree.ElementTree as ET


def stl_vertices(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:5] == b"solid" and b"facet" in data[:1000]:
        out = []
        for line in data.decode(errors="replace").splitlines():
            parts = line.split()
            if parts and parts[0] == "vertex":
                out.append(tuple(float(x) for x in parts[1:4]))
        return out
    (count,) = struct.unpack_from("<I", data, 80)
    out = []
    for i in range(count):
        base = 84 + 50 * i + 12
        for k in range(3):
            out.append(struct.unpack_from("<3f", data, base + 12 * k))
    return out


def box_element(lo, hi):
    c = ET.Element("collision")
    ET.SubElement(c, "origin", xyz=" ".join("%.6g" % ((a + b) / 2) for a, b in zip(lo, hi)), rpy="0 0 0")
    g = ET.SubElement(c, "geometry")
    ET.SubElement(g, "box", size=" ".join("%.6g" % (b - a) for a, b in zip(lo, hi)))
    return c


def origin_of(element):
    o = element.find("origin")
    xyz = [float(x) for x in o.get("xyz", "0 0 0").split()] if o is not None else [0.0] * 3
    rpy = [float(x) for x in o.get("rpy", "0 0 0").split()] if o is not None else [0.0] * 3
    return xyz, rpy


def fitted_box(collision, meshes):
    """The box of a mesh collision's vertices in the link frame (the collision's origin without
    rotation only), or None."""
    mesh = collision.find("geometry/mesh")
    xyz, rpy = origin_of(collision)
    if mesh is None or any(abs(a) > 1e-9 for a in rpy) or not meshes:
        return None
    path = os.path.join(meshes, os.path.basename(mesh.get("filename")))
    if not os.path.exists(path):
        return None
    scale = [float(x) for x in mesh.get("scale", "1 1 1").split()]
    v = stl_vertices(path)
    lo = [min(p[i] for p in v) * scale[i] + xyz[i] for i in range(3)]
    hi = [max(p[i] for p in v) * scale[i] + xyz[i] for i in range(3)]
    return box_element(lo, hi)


def sole_box(link, meshes):
    """One box spanning the link's sphere and box collisions (unrotated) and the boxes fitted to its
    mesh collisions (a foot published as one mesh)."""
    lo, hi = [1e9] * 3, [-1e9] * 3
    for c in link.findall("collision"):
        c = fitted_box(c, meshes) if c.find("geometry/mesh") is not None else c
        if c is None:
            continue
        xyz, _ = origin_of(c)
        sphere, box = c.find("geometry/sphere"), c.find("geometry/box")
        if sphere is not None:
            half = [float(sphere.get("radius"))] * 3
        elif box is not None:
            half = [float(x) / 2 for x in box.get("size").split()]
        else:
            continue
        lo = [min(lo[i], xyz[i] - half[i]) for i in range(3)]
        hi = [max(hi[i], xyz[i] + half[i]) for i in range(3)]
    if lo[0] > hi[0]:
        raise SystemExit("--sole %s: the link has no sphere or box collision, nor a mesh found in "
                         "--meshes" % link.get("name"))
    return box_element(lo, hi)


def convert(args):
    tree = ET.parse(args.input)
    robot = tree.getroot()
    notes = []
    for m in robot.findall("mujoco"):
        robot.remove(m)
    keep = set(filter(None, args.keep_collisions.split(",")))
    soles = set(filter(None, args.sole.split(",")))
    fitted = dropped = 0
    for link in robot.findall("link"):
        for v in link.findall("visual"):
            link.remove(v)
        name = link.get("name")
        if name in soles:
            box = sole_box(link, args.meshes)
            meshed = link.find("collision/geometry/mesh") is not None
            for c in link.findall("collision"):
                link.remove(c)
            link.append(box)
            notes.append("%s: its contact points replaced by the box spanning them (the sole)%s" % (
                name, ", fitted to its mesh" if meshed else ""))
            continue
        for c in link.findall("collision"):
            box = fitted_box(c, args.meshes) if name in keep else None
            link.remove(c)
            if box is not None:
                link.append(box)
                fitted += 1
            else:
                dropped += 1
    notes.append("visuals dropped; %d mesh collision(s) replaced by the box of the mesh's vertices, "
                 "%d other collision(s) dropped" % (fitted, dropped))
    for spec in args.frame:
        name, parent, x, y, z = spec.split(",")
        ET.SubElement(robot, "link", name=name)
        j = ET.SubElement(robot, "joint", name=name + "_joint", type="fixed")
        ET.SubElement(j, "origin", xyz="%s %s %s" % (x, y, z), rpy="0 0 0")
        ET.SubElement(j, "parent", link=parent)
        ET.SubElement(j, "child", link=name)
        notes.append("added: massless frame %s on %s at (%s, %s, %s)" % (name, parent, x, y, z))
    if args.floating:
        children = {j.find("child").get("link") for j in robot.findall("joint")}
        root = next(l.get("name") for l in robot.findall("link") if l.get("name") not in children)
        robot.insert(0, ET.Element("link", name="base_root"))
        j = ET.Element("joint", name="floating_base", type="floating")
        ET.SubElement(j, "parent", link="base_root")
        ET.SubElement(j, "child", link=root)
        robot.insert(1, j)
        notes.append("added: a massless base_root joined to %s by a floating joint" % root)
    ET.indent(tree, space="  ")
    header = ["Converted by heft's scripts/urdf_primitives.py from %s" % (args.source or args.input),
              "(licence: LICENSE beside this file). Masses, inertias, joints and limits as published."]
    header += ["- " + n for n in notes]
    with open(args.output, "w") as f:
        f.write('<?xml version="1.0"?>\n<!--\n' + "\n".join(header) + "\n-->\n")
        f.write(ET.tostring(robot, encoding="unicode") + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--meshes", default="")
    parser.add_argument("--keep-collisions", default="")
    parser.add_argument("--sole", default="")
    parser.add_argument("--floating", action="store_true")
    parser.add_argument("--frame", action="append", default=[])
    parser.add_argument("--source", default="")
    convert(parser.parse_args())


if __name__ == "__main__":
    main()
