#!/usr/bin/env python3
"""Propose a humanoid's role map (simulation.roles, config/README.md "The role map") from its URDF,
by its kinematic tree with every joint at zero, and name what could not be decided.

    python3 scripts/propose_roles.py ROBOT.urdf [--payload-arm left|right] > ROBOT_roles.yaml

How each role is found (world axes: x forward, z up, y to the robot's left; a joint "about ±y"
turns about it within 25°, as heft-sim requires of the role map's pitch joints):
- pelvis: the root link (the child of a `floating` joint from a dummy root, MuJoCo's idiom).
- Links on fixed joints are merged into their parent, as the simulator does: only moving links
  (the pelvis and every child of a revolute, continuous or prismatic joint) take a role.
- legs: of the moving leaves below the pelvis in the lower half of the height from the lowest one
  up to the pelvis, the lowest on each side (y > 0 left, y < 0 right); the foot is that leaf; the hip pitch, knee and ankle pitch are the first, second and last joints
  on the chain from the pelvis that turn about ±y.
- hands: the other leaves, each side's (|y| > 1 cm) merged into their last common link (a palm
  above its fingers); torso: the last link the two hands share.
- arms: on the chain from the torso to the hand, the shoulder roll is the first joint about ±x
  with a joint about ±y after it, the elbow the first such, the forearm the elbow's moving child.
- payload: the left arm unless --payload-arm says otherwise.
A role that cannot be decided is written empty with a comment saying why, and the exit status is 1
(heft-sim refuses an empty name); 0 when every role was decided. Review the proposal either way:
it proposes by geometry, it cannot know what the robot's makers meant."""
import argparse
import math
import sys
import xml.etree.ElementTree as ET

MOVING = ("revolute", "continuous", "prismatic")
SIDES = ("left", "right")


def rpy_matrix(r, p, y):
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr]]


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def apply(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


def numbers(text, default):
    return [float(x) for x in text.split()] if text else list(default)


class Robot:
    """The URDF's tree, every link's pose and every joint's axis in world axes at the zero pose."""

    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.links = [l.get("name") for l in root.findall("link")]
        self.joints = {}
        for j in root.findall("joint"):
            origin = j.find("origin")
            axis = j.find("axis")
            self.joints[j.get("name")] = dict(
                type=j.get("type"), parent=j.find("parent").get("link"), child=j.find("child").get("link"),
                xyz=numbers(origin.get("xyz") if origin is not None else None, (0, 0, 0)),
                rpy=numbers(origin.get("rpy") if origin is not None else None, (0, 0, 0)),
                axis=numbers(axis.get("xyz") if axis is not None else None, (1, 0, 0)))
        self.parent_joint = {j["child"]: name for name, j in self.joints.items()}
        roots = [l for l in self.links if l not in self.parent_joint]
        if len(roots) != 1:
            raise SystemExit("%s: %d root links (%s); a URDF has one" % (path, len(roots), ", ".join(roots)))
        self.root = roots[0]
        self.children = {l: [] for l in self.links}
        for name, j in self.joints.items():
            self.children[j["parent"]].append(name)
        self.pose = {}  # link -> (R, p)
        self.axis = {}  # joint -> world axis
        self._place(self.root, [[1, 0, 0], [0, 1, 0], [0, 0, 1]], [0.0, 0.0, 0.0])

    def _place(self, link, R, p):
        self.pose[link] = (R, p)
        for name in self.children[link]:
            j = self.joints[name]
            Rc = matmul(R, rpy_matrix(*j["rpy"]))
            pc = [p[i] + apply(R, j["xyz"])[i] for i in range(3)]
            self.axis[name] = apply(Rc, j["axis"])
            self._place(j["child"], Rc, pc)

    def moving(self, link, pelvis):
        return link == pelvis or (link in self.parent_joint and
                                  self.joints[self.parent_joint[link]]["type"] in MOVING)

    def body(self, link, pelvis):
        """The moving link a link is merged into."""
        while not self.moving(link, pelvis) and link in self.parent_joint:
            link = self.joints[self.parent_joint[link]]["parent"]
        return link

    def path(self, top, link):
        """The joints from link `top` down to `link` (top first); None when not below it."""
        out = []
        while link != top:
            if link not in self.parent_joint:
                return None
            out.append(self.parent_joint[link])
            link = self.joints[self.parent_joint[link]]["parent"]
        return out[::-1]

    def ancestors(self, link):
        out = [link]
        while link in self.parent_joint:
            link = self.joints[self.parent_joint[link]]["parent"]
            out.append(link)
        return out


def common(robot, links):
    """The last link every one of `links` is below (or is)."""
    chains = [robot.ancestors(l) for l in links]
    for link in chains[0]:
        if all(link in c for c in chains[1:]):
            return link
    return None


def about(robot, joint, axis):
    """The joint turns about ±world axis `axis` (0 x, 1 y)."""
    j = robot.joints[joint]
    return j["type"] in MOVING and abs(robot.axis[joint][axis]) > 0.9


def propose(robot, payload_arm):
    roles, undecided = {}, {}
    pelvis = robot.root
    if robot.children[pelvis] and len(robot.children[pelvis]) == 1 and \
            robot.joints[robot.children[pelvis][0]]["type"] == "floating":
        pelvis = robot.joints[robot.children[pelvis][0]]["child"]
    roles["pelvis"] = pelvis
    below = [l for l in robot.links if robot.path(pelvis, l) is not None and l != pelvis]
    moving = [l for l in below if robot.moving(l, pelvis)]
    # A leaf: a moving link that is no other moving link's moving parent.
    parents = {robot.body(robot.joints[robot.parent_joint[l]]["parent"], pelvis) for l in moving}
    leaves = [l for l in moving if l not in parents]
    z = lambda l: robot.pose[l][1][2]
    y = lambda l: robot.pose[l][1][1]
    # A foot: a leaf in the lower half of the height from the lowest leaf up to the pelvis (hanging
    # hands end higher), the lowest such on its side.
    low = min((z(l) for l in leaves), default=0.0)
    high = 0.5 * (low + z(pelvis))
    feet = {}
    for side, sign in zip(SIDES, (1, -1)):
        candidates = sorted((l for l in leaves if sign * y(l) > 0.01 and z(l) < high), key=z)
        if candidates:
            feet[side] = candidates[0]
    for side in SIDES:
        key = side + "_leg"
        if side not in feet:
            undecided[key] = "no moving leaf on the %s (y %s 0) in the lower half below the pelvis" % (
                side, ">" if side == "left" else "<")
            continue
        foot = feet[side]
        chain = robot.path(pelvis, foot)
        pitch = [j for j in chain if about(robot, j, 1)]
        leg = {"foot": foot}
        if len(pitch) < 3:
            undecided[key] = "the chain from %s to %s has %d joint(s) about the lateral axis (%s), not 3" % (
                pelvis, foot, len(pitch), ", ".join(pitch) or "none")
        else:
            leg.update(hip_pitch=pitch[0], knee=pitch[1], ankle_pitch=pitch[-1])
            if len(pitch) > 3:
                leg["note"] = "%d pitch joints on the leg (%s): the knee taken as the second" % (
                    len(pitch), ", ".join(pitch))
        roles[key] = leg
    hands = {}
    others = [l for l in leaves if l not in feet.values()]
    for side, sign in zip(SIDES, (1, -1)):
        mine = [l for l in others if sign * y(l) > 0.01]
        if mine:
            hands[side] = robot.body(common(robot, mine), pelvis)
    torso = common(robot, list(hands.values())) if len(hands) == 2 else None
    if torso is None:
        undecided["torso"] = "no two hands (moving leaves other than the feet, one on each side)"
    else:
        roles["torso"] = robot.body(torso, pelvis)
    for side in SIDES:
        key = side + "_arm"
        if side not in hands or torso is None:
            undecided[key] = "no %s hand found" % side
            continue
        hand = hands[side]
        chain = robot.path(roles["torso"], hand) or []
        pairs = [(r, e) for i, r in enumerate(chain) if about(robot, r, 0)
                 for e in chain[i + 1:] if about(robot, e, 1)]
        if not pairs:
            undecided[key] = ("the chain from %s to %s (%s) has no joint about the forward axis (the "
                              "shoulder roll) with one about the lateral axis after it (the elbow)"
                              % (roles["torso"], hand, ", ".join(chain)))
            continue
        roll, elbow = pairs[0]
        roles[key] = dict(shoulder_roll=roll, elbow=elbow, forearm=robot.joints[elbow]["child"], hand=hand)
    roles["payload"] = {"arm": payload_arm}
    return roles, undecided


def yaml_lines(roles, undecided):
    out = []
    for key in ("pelvis", "torso"):
        if key in roles:
            out.append("  %s: %s" % (key, roles[key]))
        else:
            out.append("  %s: ''  # undecided: %s" % (key, undecided[key]))
    fields = {"leg": ("hip_pitch", "knee", "ankle_pitch", "foot"),
              "arm": ("shoulder_roll", "elbow", "forearm", "hand")}
    for part in ("leg", "arm"):
        for side in SIDES:
            key = "%s_%s" % (side, part)
            if key in undecided:
                out.append("  %s: {%s}  # undecided: %s" % (
                    key, ", ".join("%s: ''" % f for f in fields[part]), undecided[key]))
                continue
            r = roles[key]
            line = "  %s: {%s}" % (key, ", ".join("%s: %s" % (f, r[f]) for f in fields[part]))
            if "note" in r:
                line += "  # " + r["note"]
            out.append(line)
    out.append("  payload: {arm: %s}" % roles["payload"]["arm"])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("urdf")
    parser.add_argument("--payload-arm", choices=SIDES, default="left",
                        help="the arm whose forearm carries the arm scenarios' payload (default left)")
    args = parser.parse_args()
    roles, undecided = propose(Robot(args.urdf), args.payload_arm)
    print("# Role map proposed by scripts/propose_roles.py from %s (simulation.roles, config/README.md)."
          % args.urdf.split("/")[-1])
    print("roles:")
    print("\n".join(yaml_lines(roles, undecided)))
    for key, why in undecided.items():
        print("propose_roles: %s undecided: %s" % (key, why), file=sys.stderr)
    return 1 if undecided else 0


if __name__ == "__main__":
    sys.exit(main())
