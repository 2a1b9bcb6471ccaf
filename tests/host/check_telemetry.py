#!/usr/bin/env python3
"""The telemetry CSV as a data tool reads it: heft-sim writes one (dumbbell curl, lockstep), and
Python's csv module loads it by its header's names (no pandas needed; pandas.read_csv reads the
same file the same way). Checks every column's type from its name (integer nanoseconds, names of
enumerations, floats with their unit in the name), time strictly increasing by the 3 ms control
period, and that a second run rotates the first file to .1 with the header on top of both.

Fails if a column has no unit and is not a documented unitless or enumeration column, a time is
not an integer, an enumeration is written as a number, time goes back, or a file lacks its header.

usage: check_telemetry.py HEFT_SIM CONFIG_DIR

The files go into a fresh temporary directory (TMPDIR: under ctest the tree's test folder).
"""
import csv
import os
import subprocess
import sys
import tempfile

ENUMS = {
    "state": {"inactive", "wait_for_walking", "calibrating_bias", "estimating", "holding"},
    "model": {"none", "full_wrench", "torque_null_space"},
    "tick_status": {"calibrating", "updated", "gated", "released", "rejected_numeric",
                    "invalid_input"},
}
HOLD_REASONS = {"encoders", "torques", "base", "history", "non_finite"}
UNITLESS = {"nis", "gamma", "calibration_progress"}  # documented as dimensionless (and L_nees, L_mh_nees)
FLAGS = {"consistent", "rate_limited"}               # 0 or 1
UNITS = ("_ns", "_us", "_kg", "_kg_m", "_kg_m2", "_m", "_rad")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(heft_sim, cfg, csv_path, duration):
    r = subprocess.run([heft_sim, "--config", cfg, "--duration", str(duration), "--telemetry",
                        csv_path], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        fail("heft-sim exited %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))


def check(path, duration):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail(path + ": no rows")
    names = list(rows[0].keys())
    for n in names:
        if n not in ENUMS and n != "hold_reason" and n not in UNITLESS and n not in FLAGS \
                and not n.endswith(UNITS) and not n.endswith("_nees"):
            fail("%s: column %s has no unit suffix and is not a documented unitless column" %
                 (path, n))
    last = None
    for i, row in enumerate(rows, start=2):
        where = "%s:%d" % (path, i)
        for n in ("t_ns", "stamp_ns"):
            if not row[n].lstrip("-").isdigit():
                fail("%s: %s=%r is not an integer number of nanoseconds" % (where, n, row[n]))
        t = int(row["t_ns"])
        if last is not None and t - last != 3_000_000:
            fail("%s: t_ns %d after %d (not one 3 ms control period later)" % (where, t, last))
        last = t
        if int(row["stamp_ns"]) > t:
            fail(where + ": the sample's stamp is after the tick")
        for n, allowed in ENUMS.items():
            if row[n] not in allowed:
                fail("%s: %s=%r is not one of %s" % (where, n, row[n], sorted(allowed)))
        reasons = row["hold_reason"].split("+")
        if row["hold_reason"] != "none" and not set(reasons) <= HOLD_REASONS:
            fail("%s: hold_reason=%r" % (where, row["hold_reason"]))
        if (row["state"] == "holding") != (row["hold_reason"] != "none"):
            fail("%s: state %s with hold_reason %s" % (where, row["state"], row["hold_reason"]))
        for n in FLAGS:
            if row[n] not in ("0", "1"):
                fail("%s: %s=%r is not 0 or 1" % (where, n, row[n]))
        for n in names:
            if n in ENUMS or n in FLAGS or n in ("hold_reason", "t_ns", "stamp_ns"):
                continue
            try:
                float(row[n])
            except ValueError:
                fail("%s: %s=%r is not a number" % (where, n, row[n]))
    expected = int(duration / 0.003)
    if abs(len(rows) - expected) > 2:
        fail("%s: %d rows, expected %d (one per 3 ms)" % (path, len(rows), expected))
    masses = [float(r["left_forearm_mass_kg"]) for r in rows]
    truth = [float(r["left_forearm_true_mass_kg"]) for r in rows]
    print("%s: %d rows, %d columns; t_ns %d .. %d; handed forearm mass %.3f kg (truth %.3f)" %
          (path, len(rows), len(names), int(rows[0]["t_ns"]), last, masses[-1], truth[-1]))
    return names


def main():
    heft_sim, config_dir = sys.argv[1:3]
    out = tempfile.mkdtemp(prefix="telemetry_py-")
    # The shipped configuration as it is: the telemetry's path is given on the command line.
    cfg = os.path.join(config_dir, "sim", "dumbbell-curl.yaml")
    path = os.path.join(out, "telemetry_py.csv")
    run(heft_sim, cfg, path, 1.5)
    first = check(path, 1.5)
    run(heft_sim, cfg, path, 0.9)  # heft-sim starts a new file; the previous run becomes .1
    if check(path, 0.9) != first or check(path + ".1", 1.5) != first:
        fail("the two runs' files have different headers")
    print("OK")


if __name__ == "__main__":
    main()
