"""Runs heft-sim on a configuration of config/sim with faults and reads what it handed out.

Shared by scripts/faults.py (the fault matrix) and scripts/soak.py (the soak): the configuration with
simulation.faults added (and, on request, the floating base taken from the framework's input
instead of the IMU), one heft-sim run in lockstep, and the telemetry's verdict row by row: every
handed π finite and physically consistent (its pseudo-inertia positive definite), every hold with
a named reason, and when estimation resumed after a time.
"""

import csv
import math
import os
import re
import subprocess

SCENARIOS = ["forearm-load", "dumbbell-curl", "torso-load", "step-in-place", "walk"]
FLOATING = {"torso-load", "step-in-place", "walk"}


def fault_yaml(fault):
    """One simulation.faults entry as a YAML flow mapping."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in fault.items()) + "}"


def make_config(root, scenario, faults, path, input_base=False, extra_host=None):
    """Writes config/sim/<scenario>.yaml with `faults` to `path` (absolute robot paths).

    input_base: the floating base from the simulated framework's input segment, not drivers.imu.
    """
    src = os.path.join(root, "config", "sim", scenario + ".yaml")
    robots = os.path.join(root, "config", "robots")
    out = []
    with open(src) as f:
        lines = f.read().splitlines()
    for line in lines:
        line = line.replace("../robots/", robots + "/")
        if input_base and re.match(r"^  imu: ", line):
            continue
        out.append(line)
        if line == "simulation:" and faults:
            out.append("  faults:")
            out.extend("    - " + fault_yaml(x) for x in faults)
        if line == "host:":
            if input_base:
                out.append("  framework_input: {base: true}")
            for h in extra_host or []:
                out.append("  " + h)
    if "host:" not in lines:
        out.append("host:")
        if input_base:
            out.append("  framework_input: {base: true}")
        for h in extra_host or []:
            out.append("  " + h)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# The telemetry prints 9 significant digits: each number is off by up to 5e-9 of itself, an entry
# of the pseudo-inertia (a sum of up to three of them) by 1.5e-8 of the largest, and the matrix's
# eigenvalues by at most 4 entries' worth (Gershgorin). A π whose smallest eigenvalue is within
# that of 0 cannot be told from a consistent one at the telemetry's precision.
ROUNDING = 4 * 1.5e-8


def physically_consistent(p):
    """π = (m, h, I at the link origin): the pseudo-inertia [[½tr(I)1 − I, h], [hᵀ, m]] ≻ 0
    (to the telemetry's precision, ROUNDING)."""
    m, hx, hy, hz, ixx, ixy, ixz, iyy, iyz, izz = p
    tr = 0.5 * (ixx + iyy + izz)
    J = [[tr - ixx, -ixy, -ixz, hx], [-ixy, tr - iyy, -iyz, hy], [-ixz, -iyz, tr - izz, hz],
         [hx, hy, hz, m]]
    eps = ROUNDING * max(abs(x) for x in p)
    for i in range(4):
        J[i][i] += eps
    L = [[0.0] * 4 for _ in range(4)]
    for i in range(4):  # Cholesky: every pivot positive
        for j in range(i + 1):
            s = J[i][j] - sum(L[i][k] * L[j][k] for k in range(j))
            if i == j:
                if not s > 0.0:
                    return False
                L[i][i] = math.sqrt(s)
            else:
                L[i][j] = s / L[j][j]
    return True


class Verdict:
    """What the telemetry of one run says (rows at 333 Hz)."""

    def __init__(self):
        self.rows = 0
        self.non_finite = 0      # rows with a non-finite handed number
        self.inconsistent = 0    # rows whose handed π is not physically consistent
        self.unnamed_holds = 0   # rows holding with hold_reason none
        self.hold_reasons = set()  # named reasons of holds inside the watched window
        self.held = False        # held inside the watched window
        self.window_rows = 0     # rows inside the fault's window
        self.window_held = 0     # of which holding
        self.resumed_at = None   # first estimating row at or after the window's end [s]
        self.first_estimating = None
        self.last_t = 0.0
        self.compute_us = []     # per row (the soak's drift check)


def read_telemetry(path, window=None, keep_compute=False, verdict=None):
    """Reads a telemetry CSV. window = (from, to) in s: holds inside it and the resumption after."""
    v = verdict or Verdict()
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        col = {n: i for i, n in enumerate(header)}
        handed = [i for i, n in enumerate(header)
                  if re.search(r"_(mass_kg|h[xyz]_kg_m|i[xyz]{2}_kg_m2)$", n)
                  and "_est_" not in n and "_true_" not in n and "_sd_" not in n]
        links = [handed[k:k + 10] for k in range(0, len(handed), 10)]
        for row in reader:
            if len(row) != len(header):
                continue  # a row cut short by the end of the run
            add_row(v, row, col, links, window, keep_compute)
    return v


def add_row(v, row, col, links, window, keep_compute):
    t = int(row[col["t_ns"]]) * 1e-9
    state = row[col["state"]]
    reason = row[col["hold_reason"]]
    v.rows += 1
    v.last_t = t
    if keep_compute:
        v.compute_us.append(float(row[col["compute_us"]]))
    for idx in links:
        p = [float(row[i]) for i in idx]
        if not all(math.isfinite(x) for x in p):
            v.non_finite += 1
        elif not physically_consistent(p):
            v.inconsistent += 1
    in_window = window and window[0] <= t < window[1]
    if in_window:
        v.window_rows += 1
        v.window_held += state == "holding"
    if state == "holding":
        if reason == "none":
            v.unnamed_holds += 1
        if window and window[0] <= t < window[1] + 2.0:
            v.held = True
            v.hold_reasons.update(reason.split("+"))
    if state == "estimating":
        if v.first_estimating is None:
            v.first_estimating = t
        if window and v.resumed_at is None and t >= window[1]:
            v.resumed_at = t


def run_sim(exe, config, telemetry, duration, log, timeout, realtime=False):
    """heft-sim in lockstep (or real time); returns (exit code, void: MuJoCo reset the run)."""
    cmd = [exe, "--config", config, "--telemetry", telemetry, "--duration", str(duration),
           "--realtime" if realtime else "--lockstep"]
    with open(log, "w") as out:
        try:
            rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return "timeout", False
    with open(log, errors="replace") as f:
        void = "found the simulation unstable" in f.read()
    return rc, void
