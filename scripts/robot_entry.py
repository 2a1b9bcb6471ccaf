"""A robot's entry for scripts/gen_sim_configs.py: what its simulated configurations need beyond the
URDF and the role map, as data (config/robots/README.md, "A robot's entry").

A published robot keeps its entry in `robot.yaml` beside its URDF; every key is optional and what is
left out is derived from the URDF and the role map:

    name: g1                  # config/sim/<name>/, tools/main-job.sh --robot <name> (default: the folder's name)
    urdf: g1_29dof.urdf       # the floating-base URDF (default: the folder's one *.urdf not ending _fixed.urdf)
    fixed_urdf: g1_29dof_fixed.urdf  # the arm scenarios' (default: <urdf stem>_fixed.urdf)
    roles: g1_29dof_roles.yaml       # the role map (default: <urdf stem>_roles.yaml)
    buses: {can0: [legs, waist], can1: [arms]}  # default {can0: [legs], can1: [waist, arms, other]}
    ft_frames: [left_foot_ft, right_foot_ft]    # default: the frame named *_ft on each foot
    imu: imu_in_pelvis        # default: the one frame named *imu* on the pelvis
    drives: {damping: 1.0}    # the actuators' viscous damping, N·m·s/rad, on every joint (default: none)

Bus groups: `legs` the moving joints from the pelvis to each foot (the role map's), `waist` those from
the pelvis to the torso, `arms` those from the torso to each hand, `other` every other moving joint
(a head, fingers). The joints are numbered bus by bus, group by group as listed, each group's joints
in the URDF's order; every moving joint must be on one bus. The F/T frames and the IMU are links on
fixed joints (frames): each F/T frame below its foot, the IMU rigidly on the pelvis (the drivers' base
IMU, drivers/README.md). `drives` is what the robot's actuators add that a URDF does not carry:
their viscous damping (back-EMF, gearbox), from the maker's own simulation model; the simulated
robot has it (simulation.drives, config/README.md). The format is YAML's flow subset (scalars, [lists], {maps}), read here
without python3-yaml."""
import os
import re

from propose_roles import MOVING, SIDES, Robot

KEYS = ("name", "urdf", "fixed_urdf", "roles", "buses", "ft_frames", "imu", "drives")
DRIVE_KEYS = ("damping",)
GROUPS = ("legs", "waist", "arms", "other")
DEFAULT_BUSES = {"can0": ["legs"], "can1": ["waist", "arms", "other"]}


class EntryError(SystemExit):
    pass


def parse_flow(text, where):
    """A YAML flow value (scalar, [list] or {map}, nested) -> str, list or dict."""
    tokens = re.findall(r"[\[\]{},:]|[^\[\]{},:\s][^\[\]{},:]*", text)
    tokens = [t.strip() for t in tokens]
    pos = [0]

    def take():
        if pos[0] >= len(tokens):
            raise EntryError("%s: the value %r ends early" % (where, text))
        pos[0] += 1
        return tokens[pos[0] - 1]

    def value():
        t = take()
        if t == "[":
            out = []
            while tokens[pos[0]:pos[0] + 1] != ["]"]:
                out.append(value())
                if take() == "]":
                    return out
            take()
            return out
        if t == "{":
            out = {}
            while tokens[pos[0]:pos[0] + 1] != ["}"]:
                key = take()
                if take() != ":":
                    raise EntryError("%s: expected `key: value` in %r" % (where, text))
                out[key] = value()
                if take() == "}":
                    return out
            take()
            return out
        if t in ("]", "}", ",", ":"):
            raise EntryError("%s: unexpected %r in %r" % (where, t, text))
        return t.strip("'\"")

    result = value()
    if pos[0] != len(tokens):
        raise EntryError("%s: unexpected text after the value in %r" % (where, text))
    return result


def read_mapping(path, allowed, indent=0):
    """The `key: value` lines at `indent` of a YAML file in the flow subset; an unknown key names
    file, line, key and the allowed keys."""
    out = {}
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
            if not line.strip() or len(line) - len(line.lstrip()) != indent:
                continue
            key, sep, rest = line.strip().partition(":")
            where = "%s:%d: %s" % (path, number, key)
            if not sep or (allowed and key not in allowed):
                raise EntryError("%s: unknown key (allowed: %s)" % (where, ", ".join(allowed)))
            out[key] = (parse_flow(rest.strip(), where) if rest.strip() else None, where)
    return out


def read_roles(path):
    """The role map's file -> {role: value} (its `roles:` section)."""
    return {k: v for k, (v, _) in read_mapping(path, (), indent=2).items()}


def group_joints(robot, roles):
    """{group: the moving joints in the group, in the URDF's order}."""
    def chain(top, link, what):
        path = robot.path(top, link)
        if path is None:
            raise EntryError("%s is not below %s (%s)" % (link, top, what))
        return {j for j in path if robot.joints[j]["type"] in MOVING}

    pelvis, torso = roles["pelvis"], roles["torso"]
    sets = {"legs": set(), "waist": chain(pelvis, torso, "the role map's torso and pelvis"), "arms": set()}
    for side in SIDES:
        sets["legs"] |= chain(pelvis, roles[side + "_leg"]["foot"], "the %s leg's foot" % side)
        sets["arms"] |= chain(torso, roles[side + "_arm"]["hand"], "the %s arm's hand" % side)
    order = [name for name in robot.joints if robot.joints[name]["type"] in MOVING]
    taken = set().union(*sets.values())
    sets["other"] = {j for j in order if j not in taken}
    return {g: [j for j in order if j in sets[g]] for g in GROUPS}


def frames_on(robot, link, pattern):
    """The massless frames (links on fixed joints, recursively) on `link` whose name matches."""
    out = []
    for joint in robot.children[link]:
        j = robot.joints[joint]
        if j["type"] == "fixed":
            if re.search(pattern, j["child"]):
                out.append(j["child"])
            out += frames_on(robot, j["child"], pattern)
    return out


def one_frame(robot, link, pattern, what, key):
    found = frames_on(robot, link, pattern)
    if len(found) != 1:
        raise EntryError("%s: %d frames named like %s on %s (%s): name it in robot.yaml's `%s`, or add "
                         "one (scripts/urdf_primitives.py --frame)" % (what, len(found), pattern, link,
                                                                        ", ".join(found) or "none", key))
    return found[0]


def load(folder, robots_root):
    """The entry of the robot in config/robots/`folder` (a robot.yaml there or none) -> the dict
    gen_sim_configs.py writes from (see robot_from)."""
    path = os.path.join(folder, "robot.yaml")
    raw = read_mapping(path, KEYS) if os.path.exists(path) else {}
    entry = {k: v for k, (v, _) in raw.items()}
    if "urdf" not in entry:
        urdfs = sorted(f for f in os.listdir(folder) if f.endswith(".urdf") and not f.endswith("_fixed.urdf"))
        if len(urdfs) != 1:
            raise EntryError("%s: %d floating-base URDFs (%s): name one in robot.yaml's `urdf`"
                             % (folder, len(urdfs), ", ".join(urdfs) or "none"))
        entry["urdf"] = urdfs[0]
    stem = entry["urdf"][:-len(".urdf")]
    entry.setdefault("name", os.path.basename(os.path.normpath(folder)))
    entry.setdefault("fixed_urdf", stem + "_fixed.urdf")
    entry.setdefault("roles", stem + "_roles.yaml")
    # Inside config/robots its paths are written relative to config/robots (the configurations name
    # ../robots/...); elsewhere as absolute paths, its CAN map beside its URDF.
    rel = os.path.relpath(os.path.abspath(folder), os.path.abspath(robots_root))
    if rel.startswith(".."):
        rel = os.path.abspath(folder)
    for key in ("urdf", "fixed_urdf", "roles"):
        if not os.path.exists(os.path.join(folder, entry[key])):
            raise EntryError("%s: `%s`: no %s in %s" % (path, key, entry[key], folder))
    if "drives" in entry:
        entry["drives"] = drives(entry["drives"], raw["drives"][1])
    return robot_from(entry, os.path.join(folder, entry["urdf"]), os.path.join(folder, entry["roles"]),
                      rel + "/", path)


def drives(value, where):
    """robot.yaml's `drives` -> {"damping": float}; a wrong key or value names the line."""
    if not isinstance(value, dict):
        raise EntryError("%s: expected a map {damping: N·m·s/rad}" % where)
    out = {}
    for key, v in value.items():
        if key not in DRIVE_KEYS:
            raise EntryError("%s: %s: unknown key (allowed: %s)" % (where, key, ", ".join(DRIVE_KEYS)))
        try:
            out[key] = float(v)
        except (TypeError, ValueError):
            out[key] = -1.0
        if not 0.0 <= out[key] <= 100.0:
            raise EntryError("%s: %s: %r is not a number in [0, 100]" % (where, key, v))
    return out


def robot_from(entry, urdf_path, roles_path, prefix, where):
    """The robot as gen_sim_configs.py writes it: joints in bus order with their bus, links and
    devices by what the configurations use them for."""
    robot, roles = Robot(urdf_path), read_roles(roles_path)
    groups = group_joints(robot, roles)
    buses = entry.get("buses") or DEFAULT_BUSES
    joints, bus_of = [], {}
    for bus, names in buses.items():
        for g in names:
            if g not in GROUPS:
                raise EntryError("%s: buses: %s: unknown group %r (allowed: %s)" % (where, bus, g, ", ".join(GROUPS)))
            for j in groups[g]:
                if j in bus_of:
                    raise EntryError("%s: buses: %s on %s and %s" % (where, j, bus_of[j], bus))
                bus_of[j] = bus
                joints.append(j)
    missing = [j for g in GROUPS for j in groups[g] if j not in bus_of]
    if missing:
        raise EntryError("%s: buses: no bus for %s (add their group to a bus)" % (where, ", ".join(missing)))
    feet = tuple(roles[s + "_leg"]["foot"] for s in SIDES)
    ft = entry.get("ft_frames") or [one_frame(robot, f, r"_ft$", "F/T frame", "ft_frames") for f in feet]
    imu = entry.get("imu") or one_frame(robot, roles["pelvis"], r"imu", "IMU frame", "imu")
    arm = roles["payload"]["arm"]
    stem = entry["urdf"][:-len(".urdf")]
    return dict(name=entry["name"], joints=joints, bus_of=bus_of, buses=list(buses), feet=feet,
                ft=tuple(ft), imu=imu, forearm=roles[arm + "_arm"]["forearm"], torso=roles["torso"],
                urdf=prefix + entry["urdf"], fixed_urdf=prefix + entry["fixed_urdf"],
                roles_file=roles_path, roles_name=prefix + entry["roles"], can_map=prefix + stem + "_can_map.csv",
                drives=entry.get("drives") or {})
