#!/usr/bin/env python3
"""Generate heft-sim's configurations for the simulated robot (config/sim/*.yaml), one per scenario.

The drivers section lists the robot's joints in the order the simulated robot addresses them (its
CAN node numbers), two buses, and the foot F/T cells for floating-base scenarios (and the base IMU,
see SIM_IMU below). Developers run this; the output is committed (ctest gen_sim_configs checks
that it is). Run from the repository root:
    python3 scripts/gen_sim_configs.py                   # the reference humanoid: config/sim/*.yaml
    python3 scripts/gen_sim_configs.py --robot compact   # the second humanoid: config/sim/compact/
    python3 scripts/gen_sim_configs.py --robot-dir config/robots/unitree_g1   # any robot's folder
    python3 scripts/gen_sim_configs.py --robot g1        # the same, by its entry's name
    python3 scripts/gen_sim_configs.py --all             # every robot
The two humanoids heft generates (scripts/gen_humanoid.py) have their entries here (HEFT_ROBOTS);
their role-map files are written from role_map(). Every other robot is a folder under
config/robots with its URDFs, its role map (scripts/propose_roles.py's proposal) and an optional
robot.yaml: its entry, the buses and devices where they are not the defaults derived from the URDF
and the role map (scripts/robot_entry.py; config/robots/README.md). Its configurations go to
config/sim/<name>/ and its CAN map beside its URDF. Every robot gets the reference robot's
estimator settings (tuned on the reference robot only), standing-curl.yaml and its -noft variant
(the shipped estimator settings on the simulated robot, on the robot's forearm); the service's own
configuration (config/heft.yaml) is the reference robot's only.
"""
import argparse
import os

import robot_entry

JOINTS = ("waist_yaw waist_roll waist_pitch left_shoulder_pitch left_shoulder_roll left_shoulder_yaw left_elbow "
          "left_wrist_yaw left_wrist_pitch left_wrist_roll right_shoulder_pitch right_shoulder_roll right_shoulder_yaw "
          "right_elbow right_wrist_yaw right_wrist_pitch right_wrist_roll left_hip_yaw left_hip_roll left_hip_pitch "
          "left_knee left_ankle_pitch left_ankle_roll right_hip_yaw right_hip_roll right_hip_pitch right_knee "
          "right_ankle_pitch right_ankle_roll").split()

CALIBRATION = []
for r in range(6):
    row = [0.0] * 6
    row[r] = 0.05 if r < 3 else 0.002
    row[(r + 1) % 6] = 0.001 if r < 3 else 0.00005
    CALIBRATION.append(row)

# process_alpha: the random walk of the log-Cholesky density α (per second). A load that keeps
# changing (the 1 Hz forearm sine, mass rate up to ~19 kg/s) needs it large; a load that steps and
# then holds is caught by the gate's release instead.
#
# rate_limits (mass kg/s, first moment kg·m/s, inertia kg·m²/s) and handoff_confidence: one hand-off
# policy for every scenario and the installed service (docs/handoff.md, "The hand-off policy"). A
# link's hand-off moves only when the data show a change (significant against the estimate's
# covariance; the nominal itself while the nominal's own error explains the estimate), so the limit
# no longer has to hold back the estimate's jitter; it bounds how fast a real change reaches the
# controller. Table I's loads and the dumbbell are instantaneous steps of 5-6 kg: 600 kg/s hands a
# 6 kg step on in 10 ms (about three control ticks); the first moment's and the inertia's limits are
# the mass's at a 0.3 m lever (h = m·c, I ≈ m·c²; the torso's CoM is 0.29 m above its waist joint,
# the forearm's load 0.25 m from the elbow), so that no one quantity binds long before the others
# (with the torso's at a 0.1 m lever, the first moment bound first and the delay, not the
# estimator, was most of torso-load's error: deviated seed 1, pelvis-height RMSE 0.0156 m against
# 0.0076). The paper's hardware cap, 3 kg/s, delays a 6 kg step by 2 s; the main job sweeps the
# limit on forearm-load to show the trade-off.
#
# walking_after (s): when the simulated robot reports "walking" and the estimator starts. The
# fixed-base arm scenarios carry their load from t = 0 and have no walking to wait for: the
# estimator runs from the start, as in the paper's simulations. The floating-base robot first
# settles on its feet.
LIMITS = (600.0, 180.0, 50.0)
#
# shape (the links' prior on their shape: centre of mass and inertia per unit mass;
# docs/estimator.md, "Where the data say nothing"): "payload" for a link whose load has a shape of
# its own (a tool or a dumbbell in the hand moves the forearm's centre of mass): the paper's loose
# prior (initial σ 0.3 on every θ, random walk 0.001/s), the data decide. "rigid" for a link whose
# loads change its mass but whose shape is the model's (a torso carrying a load at its mounting
# point): the mass stays free (initial σ 0.3 and the scenario's random walk on α), the shape gets a
# tight prior taken at the link's nominal centre of mass (estimator.parameter_frame: com): σ 0.01 on
# d, s (about 2 % of the inertia about the CoM) and 0.03 on t (a few mm of the CoM), almost no
# random walk (1e-6/s), and the prior's pull (prior_time_constant 2 s). In the link's own frame (the
# torso's CoM 0.29 m above its origin) the inertia about the CoM is a small difference of large
# terms that every θ moves: there even σ 0.003 on d, s left it 6 % off on step-in-place
# (docs/estimator.md, "The inertia states at the centre of mass"). Standing and walking excite a
# torso's centre-of-mass height and inertia only weakly; with the loose prior they drift 35-45 mm
# and 70-80 % over 20 s.
#
# The stiction band (estimator.stiction_band, docs/estimator.md, "Stiction") follows the shape too.
# A joint that holds still reads back, within ±F_c, the torque the controller commands from the
# handed estimate, so a held joint's row confirms whatever the estimate is. For a payload link that
# anchor is what kept the dumbbell 2.5-4 % low on the deviated robot: the band (on, the default)
# drops those rows. For a rigid torso the same anchor is, today, what holds its centre-of-mass
# height against the data's bias: with the band the torso's CoM drifts (on the deviated robot with
# the truth as its model, 3.4 -> 18.9 mm on torso-load), so the rigid configurations keep it off
# until that bias is cured. With the low-pass below (that cure) the band changes little either way:
# the short job's torso runs with it on, identified model, reference 0.8 / 2.4 / 1.1 -> 0.7 / 1.9 /
# 1.1 mm, seed 1 9.6 / 5.9 / 8.5 -> 9.9 / 6.2 / 9.3 mm (step / torso-load / walk); still off.
#
# The measurement's low-pass (estimator.measurement_lowpass, docs/estimator.md, "The measurement's
# low-pass") follows how the load changes: by steps (a load taken or set down, then held) or within
# a second. Between steps the low-pass removes the differenced accelerations' noise from the
# regressor, the errors-in-variables noise that pulled the torso's CoM height and inertia toward
# zero (the second humanoid's CoM 16.8 -> 1.8 mm on step-in-place at 5 Hz). With the estimate handed
# to the controller that noise also biases a forearm's CoM: the second humanoid's dumbbell ended
# with c_x 15.8 mm against the composite's 4.9 (7.8 with adaptation off, 7.6 with the hand-off
# slowed to 6 kg/s, 8.0 with a 5-sample difference), and at 5 Hz it ends at 4.8 mm. So the rigid
# torso and the dumbbell (loads that step and hold: load="steps" in SCENARIOS, LOWPASS) take it,
# whole jobs (dumbbell CoM at steady state): second humanoid 13.2 -> 1.5 mm (URDF robot) and 23.2 ->
# 8.7 mm (deviated), reference seed 1 12.0 -> 8.5 mm, reference ideal 1.6 -> 1.9 mm; 5 % reached
# after 0.10 -> 0.12-0.20 s. A payload whose mass varies within a second (forearm-load's 1 Hz sine)
# lags behind it (elbow RMSE 0.033 -> 0.17 rad at 5 Hz, 0.13 at 20 Hz, reference ideal): left off.
LOWPASS = {"steps": 5.0, "varies": 0.0}
SHAPES = {
    "payload": dict(sigma=None, process=0.001, prior=0.0, stiction_band=True),
    "rigid": dict(sigma=(0.01, 0.03), process=1e-6, prior=2.0, stiction_band=False, frame="com"),
}
SCENARIOS = {
    "forearm-load": dict(floating=False, links=["left_forearm"], process_alpha=2.0, limits=LIMITS, walking_after=0.0, load="varies"),
    "dumbbell-curl": dict(floating=False, links=["left_forearm"], process_alpha=0.001, limits=LIMITS, walking_after=0.0, load="steps"),
    "torso-load": dict(floating=True, links=["torso"], shape="rigid", process_alpha=0.01, limits=LIMITS, walking_after=0.5, load="steps"),
    "step-in-place": dict(floating=True, links=["torso"], shape="rigid", process_alpha=0.001, limits=LIMITS, walking_after=0.5, load="steps"),
    "walk": dict(floating=True, links=["torso"], shape="rigid", process_alpha=0.001, limits=LIMITS, walking_after=0.5, load="steps"),
    # The identification recording (tools/main-job.sh adds host.recording): squats, sway, steps in
    # place, waist and arms moving. The estimator runs on the torso meanwhile, as it would on a robot.
    "excite": dict(floating=True, links=["torso"], shape="rigid", process_alpha=0.001, limits=LIMITS, walking_after=0.5, load="steps"),
}

# The same humanoid without foot F/T cells (<scenario>-noft.yaml): the estimator takes its feet as
# contacts (estimator.contact_frames) and uses the null-space measurement (joint torques only). Its
# start-up calibration is the source scenario's: it averages the residual's part in the contacts'
# null space (docs/handoff.md, "Without foot F/T cells").
NOFT = ("torso-load", "standing-curl")
NOFT_CONTACTS = "  contact_frames: [%s, %s]"  # the role map's feet


# The floating-base robot's IMU (config/robots/heft_humanoid.urdf: the massless `imu` link on a fixed
# joint on the pelvis). With an IMU configured the drivers take the base state from its frames only;
# the simulator emits them and the host hands no other base state to the drivers, so a simulated
# floating-base scenario needs it (SIM_IMU, default on; HEFT_SIM_IMU=0 leaves it out, and heft-sim
# then refuses the floating scenarios). The robot's shipped config (config/heft.yaml) has it always.
# The noise of the base IMU's gyro and accelerometer and of the encoders' velocity, per 1 kHz sample
# (the simulated robot's defaults, docs/can-devices.md's LSBs): the estimator models the noise of
# the accelerations it differences from them (estimator.noise.gyro / accelerometer /
# joint_velocity). Without it the gyro's noise, differenced over 4 ms (0.7 rad/s²), times the
# robot's inertia, gates most ticks of a floating robot. The same noise also biases the estimate
# through the regressor; estimator.noise.acceleration_inflation (default 1, left so here) trades
# that against information (docs/estimator.md, "The acceleration noise's bias").
IMU_NOISE = "gyro: 0.002, accelerometer: 0.02, joint_velocity: 0.0005"
SIM_IMU = os.environ.get("HEFT_SIM_IMU", "1") == "1"
IMU = "  imu: {bus: %s, base_id: 0x400, frame: %s}"


# The simulated robot's deviations from the URDF heft is given (simulation.deviations,
# config/README.md): mass, CoM and inertia per body, friction per joint, sensor offsets, gains and
# biases, drawn from a seed. HEFT_SIM_DEVIATIONS=PRESET[:SEED] (e.g. "default" or "default:7")
# writes `deviations: {preset: PRESET, seed: SEED}` (seed 1 unless given) into every simulated
# configuration; unset, the key is left out and the simulated robot is exactly its URDF (what the
# committed configurations are). A scenario may override it with its own "deviations" entry in
# SCENARIOS.
def deviations_line(value):
    if not value:
        return []
    preset, _, seed = value.partition(":")
    if preset not in ("ideal", "default") or (seed and not seed.isdigit()):
        raise SystemExit("HEFT_SIM_DEVIATIONS=%r: expected ideal|default[:SEED]" % value)
    return ["  deviations: {preset: %s, seed: %s}" % (preset, seed or "1")]


SIM_DEVIATIONS = os.environ.get("HEFT_SIM_DEVIATIONS", "")


# The robot's estimator settings (config/heft.yaml). Under systemd heftd is started by
# robot-walking.target, so its start is the walking signal: no wait for a "walking" command.
SHIPPED_ESTIMATOR = [
    "estimator:",
    "  # The forearm (a tool or load in the hand). The torso can be estimated as well (up to four links)",
    "  # with its own, rigid prior (link_priors, config/README.md): standing, its centre of mass and",
    "  # inertia are barely excited. On standing-curl the forearm's mass then ends 5.8 % off (11 % with",
    "  # one prior for both links, 0.6 % alone; docs/estimator.md, \"Where the data say nothing\").",
    "  links: [left_forearm]", "  filter: ekf", "  measurement: auto",
    "  # The rows' low-pass (Hz; docs/estimator.md, \"The measurement's low-pass\"): against the",
    "  # differenced accelerations' noise, which biases the CoM of a load taken and held (standing-curl:",
    "  # 8.6 -> 2.5 mm). A load that changes within a second lags behind it: 0 (off) for one.",
    "  measurement_lowpass: 5",
    "  # gyro, accelerometer, joint_velocity: the sensors' noise per 1 kHz sample; the accelerations",
    "  # differenced from them enter the rows' covariance through M(q) (config/README.md; their",
    "  # acceleration_inflation: docs/estimator.md, \"The acceleration noise's bias\"). joint_torque_scale:",
    "  # the torque sensors' scale uncertainty (1 sigma, relative to the reading; config/README.md).",
    "  noise: {joint_torque: 1.0, joint_torque_scale: 0.01, base_force: 10.0, base_torque: 5.0, " + IMU_NOISE + "}",
    "  gating: {enabled: true, confidence: 0.999, release_after: 0.1, inflation: 10, open_for: 0.3}",
    "  # The hand-off policy (docs/handoff.md): a change the data show reaches the controller at",
    "  # these rates; the estimate's jitter and what the nominal's own error explains do not.",
    "  rate_limits: {mass: %g, first_moment: %g, inertia: %g}" % LIMITS,
    "  handoff_confidence: 0.999",
    "  # Start-up bias calibration (paper IV-B): the robot stands still, unloaded, for a second first.",
    "  calibration: {enabled: true, window: 1.0, max_speed: 0.2}",
    "  # heftd.service starts with robot-walking.target: that start is the walking signal",
    "  # (config/README.md, \"Walking, the service's start, and the commands\").",
    "  wait_for_walking: false"]


def drivers(floating, imu=False, ft=True):
    buses = R["buses"]
    out = ["drivers:", "  timeout_ms: 3", "  buses: [%s]" % ", ".join(buses), "  joints:"]
    for i, j in enumerate(R["joints"]):
        out.append("    - {name: %s, bus: %s, node: %d}" % (j, R["bus_of"][j], i))
    if floating and ft:
        out.append("  ft_cells:")
        for k in range(2):
            cal = ", ".join("%g" % v for row in CALIBRATION for v in row)
            out.append("    - frame: %s" % R["ft"][k])
            out.append("      bus: %s" % buses[k % len(buses)])
            out.append("      base_id: 0x%X" % (0x300 + 0x10 * k))
            out.append("      calibration: [%s]" % cal)
    if floating and imu:
        out.append(IMU % (buses[0], R["imu"]))
    return out


# The generated humanoids' role map (simulation.roles, config/README.md; sim/include/heft/sim/roles.hpp):
# which links and joints the scenarios, the balance and arm controllers and the excitation use. Both
# humanoids name them alike; this script writes it as the robot's role-map file beside its URDF
# (config/robots/<urdf>_roles.yaml: heft-scenario --roles, the scenarios' default robot, and what
# scripts/propose_roles.py must propose for it). Every robot's configurations carry the role map of
# its role-map file.
def role_map(indent):
    pad = " " * indent
    out = [pad + "pelvis: pelvis", pad + "torso: torso"]
    for side in ("left", "right"):
        out.append(pad + "%s_leg: {hip_pitch: %s_hip_pitch, knee: %s_knee, ankle_pitch: %s_ankle_pitch, foot: %s_foot}"
                   % ((side,) * 5))
    for side in ("left", "right"):
        out.append(pad + "%s_arm: {shoulder_roll: %s_shoulder_roll, elbow: %s_elbow, forearm: %s_forearm, hand: %s_hand}"
                   % ((side,) * 5))
    out.append(pad + "payload: {arm: left}")
    return out


def drives_section():
    """simulation.drives from the robot's entry (robot.yaml's `drives`); none for a robot without."""
    if not R["drives"]:
        return []
    return ["  # The robot's actuators beyond its URDF (robot.yaml's `drives`; config/README.md, simulation.drives).",
            "  drives: {%s}" % ", ".join("%s: %g" % kv for kv in sorted(R["drives"].items()))]


def roles_section():
    with open(R["roles_file"]) as f:
        roles = ["  " + l for l in f.read().splitlines() if l.startswith("  ")]
    return ["  # The robot's links and joints by role (config/README.md, simulation.roles); the robot's",
            "  # role-map file: config/robots/%s." % R["roles_name"], "  roles:"] + roles


def roles_file(urdf):
    return "\n".join(["# The %s's role map (simulation.roles, config/README.md). Generated by" % urdf,
                      "# scripts/gen_sim_configs.py; scripts/propose_roles.py proposes it from the URDF.",
                      "roles:"] + role_map(2) + [""])


# The robots heft generates (scripts/gen_humanoid.py): their entries (scripts/robot_entry.py) and the
# folder of their configurations under config/sim. Their joints are numbered as their CAN maps
# (config/robots/heft_*_can_map.csv): the waist and arms on can0, the legs on can1. Every other robot
# is a folder under config/robots with its URDF, role map and (optional) robot.yaml.
HEFT_ROBOTS = {
    "reference": (dict(name="reference", urdf="heft_humanoid.urdf", fixed_urdf="heft_humanoid_fixed.urdf",
                       roles="heft_humanoid_roles.yaml", buses={"can0": ["waist", "arms"], "can1": ["legs"]}), ""),
    "compact": (dict(name="compact", urdf="heft_compact.urdf", fixed_urdf="heft_compact_fixed.urdf",
                     roles="heft_compact_roles.yaml", buses={"can0": ["waist", "arms"], "can1": ["legs"]}), "compact"),
}
R = None  # the robot being written (scripts/robot_entry.py: robot_from)


def can_map():
    """The CAN identifier map of the drivers section (tools/heft-make-config's input)."""
    out = ["# The %s robot's CAN identifier map (tools/heft-make-config; README \"On your robot\")."
           % R["name"] + " Generated by scripts/gen_sim_configs.py.",
           "# kind,name,bus,id (joint: node; ft and imu: base identifier)"]
    for i, j in enumerate(R["joints"]):
        out.append("joint,%s,%s,%d" % (j, R["bus_of"][j], i))
    buses = R["buses"]
    out += ["ft,%s,%s,0x300" % (R["ft"][0], buses[0]), "ft,%s,%s,0x310" % (R["ft"][1], buses[1 % len(buses)]),
            "imu,%s,%s,0x400" % (R["imu"], buses[0]), ""]
    return "\n".join(out)


def robot_folders(robots):
    """The robots with a folder of their own under config/robots (name -> folder)."""
    out = {}
    for d in sorted(os.listdir(robots)):
        if os.path.isdir(os.path.join(robots, d)):
            out[robot_entry.load(os.path.join(robots, d), robots)["name"]] = os.path.join(robots, d)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robot", default="reference",
                        help="which robot's configurations to write: reference (the default), compact, or the "
                             "name of a robot with a folder under config/robots (its robot.yaml's name)")
    parser.add_argument("--robot-dir", help="the robot in this folder (its URDF, role map and robot.yaml)")
    parser.add_argument("--all", action="store_true", help="every robot")
    parser.add_argument("--out", help="write into this folder instead of config/ (as config/: sim/, robots/)")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    robots = os.path.join(here, "..", "config", "robots")
    out = args.out or os.path.join(here, "..", "config")
    if args.all:
        targets = [("heft", r) for r in HEFT_ROBOTS] + [("dir", d) for d in robot_folders(robots).values()]
    elif args.robot_dir:
        targets = [("dir", args.robot_dir)]
    elif args.robot in HEFT_ROBOTS:
        targets = [("heft", args.robot)]
    else:
        folders = robot_folders(robots)
        if args.robot not in folders:
            raise SystemExit("--robot %s: not reference, compact or a robot under config/robots (%s)"
                             % (args.robot, ", ".join(sorted(folders)) or "none"))
        targets = [("dir", folders[args.robot])]
    for kind, which in targets:
        write_robot(kind, which, robots, out)


def write_robot(kind, which, robots, out):
    """Every configuration of one robot: a generated humanoid's (kind "heft") or a robot folder's."""
    global R
    if kind == "heft":
        entry, folder = HEFT_ROBOTS[which]
        roles_path = os.path.join(out, "robots", entry["roles"])
        os.makedirs(os.path.dirname(roles_path), exist_ok=True)
        with open(roles_path, "w") as f:
            f.write(roles_file(entry["urdf"][:-len(".urdf")]))
        R = robot_entry.robot_from(entry, os.path.join(robots, entry["urdf"]), roles_path, "", which)
    else:
        R = robot_entry.load(which, robots)
        folder = R["name"]
    root = os.path.join(out, "sim", folder)
    up = "../" * (2 if folder else 1)  # from the configuration's folder to config/
    os.makedirs(root, exist_ok=True)
    if folder:
        path = os.path.join(out, "robots", R["can_map"])  # absolute: beside a robot outside config/robots
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(can_map())
    for name, s in SCENARIOS.items():
        write_scenario(root, up, name, s)
    if not folder:  # the service's own configuration: the reference robot's only
        write_service_config(root)
    write_standing_curl(root, up)


def write_scenario(root, up, name, s):
    """<name>.yaml (and <name>-noft.yaml for NOFT): heft-sim on the robot, scenario `name`."""
    lines = ["# heft-sim (the host on the simulated robot): scenario %s. Generated by scripts/gen_sim_configs.py." % name,
             "# Schema: config/README.md.", "backend: simulated", "robot:",
             "  urdf: %s" % urdf_ref(up, R["urdf"] if s["floating"] else R["fixed_urdf"]),
             "  floating_base: %s" % ("true" if s["floating"] else "false")]
    lines += drivers(s["floating"], imu=SIM_IMU)
    lines += ["estimator:", "  links: [%s]" % ", ".join(link(l) for l in s["links"]),
              "  filter: ekf", "  measurement: auto",
              "  noise: {joint_torque: 1.0, joint_torque_scale: 0.01, base_force: 10.0, base_torque: 5.0%s}"
              % (", " + IMU_NOISE if s["floating"] and SIM_IMU else ""),
              ] + estimator_prior(s) + [
              "  gating: {enabled: true, confidence: 0.999, release_after: 0.1, inflation: 10, open_for: 0.3}",
              "  # The hand-off policy, the installed service's (config/heft.yaml; docs/handoff.md).",
              "  rate_limits: {mass: %g, first_moment: %g, inertia: %g}" % s["limits"],
              "  handoff_confidence: 0.999",
              "  # The scenarios load the link from t = 0 and the simulated sensors carry no bias: no start-up",
              "  # calibration (the main job's procedure turns it on, with the load arriving after it).",
              "  calibration: {enabled: false, window: 1.0, max_speed: 0.3}",
              "  wait_for_walking: true",
              "simulation:", "  scenario: %s" % name, "  adaptation: true", "  lockstep: true",
              "  walking_after: %g" % s["walking_after"], "  seed: 1"]
    lines += deviations_line(s.get("deviations", SIM_DEVIATIONS))
    lines += drives_section()
    lines += roles_section()
    lines += ["host:", "  realtime: {priority: 80, lock_memory: true}", ""]
    with open(os.path.join(root, name + ".yaml"), "w") as f:
        f.write("\n".join(lines))
    if name in NOFT:
        write_noft(root, name, lines)


def urdf_ref(up, path):
    """A URDF as a configuration names it: relative to config/robots, or absolute (a robot elsewhere)."""
    return path if os.path.isabs(path) else "%srobots/%s" % (up, path)


def link(role):
    """A scenario's estimated link by role: the payload arm's forearm or the torso (the role map's)."""
    return {"left_forearm": R["forearm"], "torso": R["torso"]}[role]


def write_service_config(root):
    """config/heft.yaml: the reference robot on its real buses."""
    # The reference robot on its real buses: what the installed service reads (/etc/heft/heft.yaml).
    lines = ["# heftd on the reference robot's SocketCAN buses. Generated by scripts/gen_sim_configs.py.",
             "# Schema: config/README.md.", "backend: socketcan", "robot:", "  urdf: robots/heft_humanoid.urdf",
             "  floating_base: true"]
    lines += drivers(True, imu=True)
    lines += SHIPPED_ESTIMATOR
    lines += ["host:",
              "  # One CSV row per control tick, appended across restarts and rotated by size",
              "  # (config/README.md, \"Telemetry\": columns, units, file sizes).",
              "  telemetry: {path: /var/log/heft/telemetry.csv, max_bytes: 100000000, keep: 5}",
              "  log_file: /var/log/heft/heftd.log",
              "  # The drivers' and buses' counters in the log every 60 s (warning when something was lost).",
              "  counters_period: 60",
              "  # Every received CAN frame as a candump -l log, rotated (about 3 MB/s on this robot):",
              "  # candump: {path: /var/log/heft/frames.log, max_bytes: 100000000, keep: 5}",
              "  # Pin the driver and control threads to CPUs kept free for control on the robot, e.g.",
              "  # cpus: [2, 3] (they must exist on the machine; none: any CPU).",
              "  realtime: {priority: 80, lock_memory: true}", ""]
    with open(os.path.join(root, "..", "heft.yaml"), "w") as f:
        f.write("\n".join(lines))


def write_standing_curl(root, up):
    """standing-curl.yaml and its -noft variant: the shipped estimator settings on the simulated robot."""
    # The shipped configuration on the simulated robot: the operator's procedure (stand still and
    # unloaded while calibrating, then take a 5.44 kg dumbbell and curl it), with the robot's own
    # estimator settings, drivers and IMU. Its candump log is what the installed-package proof
    # replays into heftd through the kernel's CAN sockets.
    lines = ["# heft-sim: the shipped configuration (config/heft.yaml) on the simulated robot, scenario",
             "# standing-curl. Generated by scripts/gen_sim_configs.py. Schema: config/README.md.",
             "backend: simulated", "robot:", "  urdf: %s" % urdf_ref(up, R["urdf"]), "  floating_base: true"]
    lines += drivers(True, imu=True)
    lines += [line.replace("links: [left_forearm]", "links: [%s]" % link("left_forearm"))
              for line in SHIPPED_ESTIMATOR]
    lines += ["simulation:", "  scenario: standing-curl", "  adaptation: true", "  lockstep: true", "  seed: 1"]
    lines += deviations_line(SIM_DEVIATIONS)
    lines += drives_section()
    lines += roles_section()
    lines += ["host:", "  realtime: {priority: 80, lock_memory: true}", ""]
    with open(os.path.join(root, "standing-curl.yaml"), "w") as f:
        f.write("\n".join(lines))
    write_noft(root, "standing-curl", lines)


def estimator_prior(s):
    """initial_sigma, process_noise and prior_time_constant for the scenario's link shape (SHAPES)."""
    shape = SHAPES[s.get("shape", "payload")]
    lines = []
    if shape["sigma"] is not None:
        lines.append("  # The torso's shape is the model's: a tight prior on it, its mass free (scripts/gen_sim_configs.py).")
        inertia, com = shape["sigma"]
        lines.append("  initial_sigma: [0.3%s%s]" % ((", %g" % inertia) * 6, (", %g" % com) * 3))
    lines.append("  process_noise: [%g%s]" % (s["process_alpha"], (", %g" % shape["process"]) * 9))
    if shape["prior"] > 0.0:
        lines.append("  prior_time_constant: %g" % shape["prior"])
    if shape.get("frame"):
        lines.append("  parameter_frame: %s" % shape["frame"])
    if not shape["stiction_band"]:
        lines.append("  # No stiction band: held joints' rows taken as measured (scripts/gen_sim_configs.py, SHAPES).")
        lines.append("  stiction_band: false")
    lowpass = LOWPASS[s["load"]]
    if lowpass > 0.0:
        lines.append("  # The rows' low-pass against the accelerations' noise (scripts/gen_sim_configs.py: the measurement's low-pass).")
        lines.append("  measurement_lowpass: %g" % lowpass)
    return lines


def write_noft(root, name, lines):
    """<name>-noft.yaml: `lines` without the F/T cells, with the feet as contacts."""
    out, skip = [], False
    for line in lines:
        if line == "  ft_cells:":
            skip = True
            continue
        if skip and line.startswith("    "):
            continue
        skip = False
        if line.startswith("  # Start-up bias calibration"):
            out.append(line)
            line = "  # Without foot cells it averages the residual's part in the contacts' null space."
        out.append(line)
        if line.startswith("  measurement:"):
            out.append("  # No foot F/T cells: the feet are assumed in contact, their wrenches projected out.")
            out.append(NOFT_CONTACTS % R["feet"])
    at = next(i for i, line in enumerate(out) if "Generated by" in line) + 1
    out.insert(at, "# This variant: the robot without foot F/T cells (null-space measurement).")
    with open(os.path.join(root, name + "-noft.yaml"), "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
