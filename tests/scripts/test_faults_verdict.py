#!/usr/bin/env python3
"""The fault matrix's verdict (scripts/faults.py, scripts/simrun.py) on made-up telemetry: a cell must
fail on a crash, a non-finite or physically inconsistent hand-off, an unnamed hold and no
resumption after the fault, and pass a clean one. Fails (exit 1, "FAIL:") when a check lets one
of them through or flags the clean cell, or when a scenario of CI's matrix would run no cell, or two,
of a fault family."""

import importlib.util
import os
import sys
import tempfile

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
sys.path.insert(0, TOOLS)
import simrun  # noqa: E402

spec = importlib.util.spec_from_file_location("faults", os.path.join(TOOLS, "faults.py"))
faults = importlib.util.module_from_spec(spec)
spec.loader.exec_module(faults)

COLUMNS = ["t_ns", "stamp_ns", "state", "model", "tick_status", "hold_reason", "nis", "gamma",
           "consistent", "rate_limited", "calibration_progress", "compute_us"] + \
    ["torso_" + q for q in ["mass_kg", "hx_kg_m", "hy_kg_m", "hz_kg_m", "ixx_kg_m2", "ixy_kg_m2",
                            "ixz_kg_m2", "iyy_kg_m2", "iyz_kg_m2", "izz_kg_m2"]]
GOOD = "30,0.6,0,1.7,4,0,0,4,0,1"          # the reference torso's π, roughly
TRIANGLE = "30,0.6,0,1.7,1,0,0,1,0,3"      # Ixx + Iyy < Izz: no body has it
NAN = "nan,0.6,0,1.7,4,0,0,4,0,1"


def row(t, state, reason, pi):
    return f"{int(t * 1e9)},0,{state},full,updated,{reason},0,0,1,0,0,50,{pi}"


def verdict(rows):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(",".join(COLUMNS) + "\n" + "\n".join(rows) + "\n")
    v = simrun.read_telemetry(f.name, window=(1.0, 1.5))
    os.remove(f.name)
    return faults.failures({"void": False, "rc": 0, "v": v})


cases = [
    ("clean", [row(0.9, "estimating", "none", GOOD), row(1.2, "holding", "torques", GOOD),
               row(1.6, "estimating", "none", GOOD)], ""),
    ("non-finite", [row(0.9, "estimating", "none", NAN), row(1.6, "estimating", "none", GOOD)],
     "non-finite"),
    ("inconsistent", [row(0.9, "estimating", "none", TRIANGLE),
                      row(1.6, "estimating", "none", GOOD)], "inconsistent"),
    ("unnamed hold", [row(1.2, "holding", "none", GOOD), row(1.6, "estimating", "none", GOOD)],
     "unnamed"),
    ("no resumption", [row(1.2, "holding", "torques", GOOD),
                       row(1.6, "holding", "torques", GOOD)], "no resumption"),
]
failed = 0
for name, rows, expect in cases:
    why = "; ".join(verdict(rows))
    if (expect and expect not in why) or (not expect and why):
        print(f"FAIL: {name}: verdict '{why}', expected '{expect or 'ok'}'")
        failed += 1
crash = "; ".join(faults.failures({"void": False, "rc": -11, "v": None}))
if "exit -11" not in crash:
    print(f"FAIL: crash: verdict '{crash}'")
    failed += 1
# CI's matrix runs only the representatives on three scenarios (--families): every scenario must
# keep one cell of each family (a renamed cell would silently drop its family), and no more.
families = {"loss": "loss 20 %", "silent": "silent torque sensor", "bus": "bus-off",
            "plausibility": ("torque sensor stuck", "F/T saturated"),
            "clock and input": "framework input garbage", "combination": "5 % loss + CRC"}
for scenario in simrun.SCENARIOS:
    names = [n for n, _, _, floating_only in faults.cells(scenario, 0.3)
             if (not floating_only or scenario in simrun.FLOATING)
             and faults.representative(scenario, n)]
    for family, prefix in families.items():
        if sum(n.startswith(prefix) for n in names) != 1:
            print(f"FAIL: {scenario}: family {family}: representatives {names}")
            failed += 1
    if len(names) != len(families):
        print(f"FAIL: {scenario}: {len(names)} representatives for {len(families)} families")
        failed += 1
print(f"{len(cases) + 1} verdicts and the representatives of {len(simrun.SCENARIOS)} scenarios: "
      f"{failed} wrong")
sys.exit(1 if failed else 0)
