#!/usr/bin/env python3
"""The simulated robot on standard actuators: heft-sim's forearm-load scenario (the left forearm's
mass a sine, then a square wave, between 1.5 and 7.5 kg) run three times, the joints on heft's
encoders and torque sensors, on MIT-mode actuators whose torque comes from their current
(torque_constant 0.1 N·m/A, gear 10, 12-bit current over ±40 A: 0.02 N·m per code), and on CiA 402
drives (two TPDOs each). Fails if a run rejects a frame, ends with a channel not ok, or if its
estimate of the forearm's mass does not track the load: its RMSE against the simulator's truth must
be under a quarter of the nominal model's (the URDF's 1.5 kg held throughout). Prints each run's
RMSE beside the others.

    sim_standard_actuators.py HEFT_SIM CONFIG_DIR

The runs' files go to a fresh temporary folder (tempfile: TMPDIR, the tests' folder under ctest).
"""
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HEFT_SIM, CONFIG_DIR = sys.argv[1:3]
WORK = tempfile.mkdtemp(prefix="heft-sim-standard-")
SOURCE = os.path.join(CONFIG_DIR, "sim", "forearm-load.yaml")
JOINT = re.compile(r"    - \{name: (\w+), bus: (\w+), node: (\d+)\}")


def mit(m):
    return ("    - {name: %s, bus: %s, device: mit, motor_id: %d, p_max: 12.5, v_max: 20, t_max: 40, "
            "torque_constant: 0.1, gear_ratio: 10}" % (m.group(1), m.group(2), int(m.group(3)) + 1))


def cia402(m):
    node = int(m.group(3)) + 1
    return ("    - {name: %s, bus: %s, device: cia402, node: %d, tpdos: [{cob_id: 0x%X, map: "
            "[statusword, position]}, {cob_id: 0x%X, map: [velocity, torque]}], counts_per_rev: "
            "524288, gear_ratio: 100, rated_torque: 0.5}" % (m.group(1), m.group(2), node,
                                                            0x180 + node, 0x280 + node))


def run(name, rewrite):
    with open(SOURCE) as f:
        text = f.read().replace("../robots", os.path.join(CONFIG_DIR, "robots"))
    if rewrite:
        text, n = JOINT.subn(rewrite, text)
        assert n == 29, "%d joints rewritten" % n
    config = os.path.join(WORK, name + ".yaml")
    with open(config, "w") as f:
        f.write(text)
    telemetry = os.path.join(WORK, name + ".csv")
    p = subprocess.run([HEFT_SIM, "--config", config, "--telemetry", telemetry], cwd=WORK,
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        print("FAIL: %s: heft-sim exit %d\n%s" % (name, p.returncode, p.stderr[-2000:]))
        return None
    with open(os.path.join(WORK, name + ".summary.json")) as f:
        summary = json.load(f)
    rows = list(csv.DictReader(open(telemetry)))
    truth = [float(r["left_forearm_true_mass_kg"]) for r in rows]
    est = [float(r["left_forearm_est_mass_kg"]) for r in rows]
    rmse = math.sqrt(sum((e - t) ** 2 for e, t in zip(est, truth)) / len(rows))
    nominal = math.sqrt(sum((1.5 - t) ** 2 for t in truth) / len(rows))
    return summary, rmse, nominal


failed = 0
results = {}
for name, rewrite in (("heft", None), ("mit", mit), ("cia402", cia402)):
    r = run(name, rewrite)
    if r is None:
        failed += 1
        continue
    summary, rmse, nominal = r
    results[name] = rmse
    print("%-6s forearm mass RMSE %.3f kg (nominal model %.3f kg), frames rejected %d, channels "
          "not ok %d" % (name, rmse, nominal, summary["drivers"]["rejected"],
                          summary["channels"]["not_ok"]))
    if summary["drivers"]["rejected"] or summary["channels"]["not_ok"]:
        print("FAIL: %s: frames rejected or channels not ok" % name)
        failed += 1
    if not rmse < 0.25 * nominal:
        print("FAIL: %s: the estimate does not track the load (RMSE %.3f kg, nominal %.3f kg)"
              % (name, rmse, nominal))
        failed += 1
sys.exit(1 if failed else 0)
