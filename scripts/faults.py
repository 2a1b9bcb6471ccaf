#!/usr/bin/env python3
"""The fault matrix: every fault alone and one combination, in every scenario, on the
simulated robot (heft-sim: heftd's host, drivers and plugin in lockstep with MuJoCo; the faults
are in the CAN frames and the framework's input: config/README.md, "Simulated faults").

  scripts/faults.py --sim build/release/bin/heft-sim [--seconds 6] [--from 2] [--window 1]
                  [--scenarios a,b] [--families c,d] [--faults x,y] [--out table.md] [--work DIR]

Each cell runs `seconds` simulated seconds with the fault from `from` (2 s) for `window` (1 s) (the
clock step and the stale or garbage input on the floating robots take its base from the
framework's input instead of the IMU: with the IMU, the input carries only commands). Per cell:
heft-sim's exit (a crash or a hang fails), the handed π of every control tick (non-finite or not
physically consistent fails), every hold named (an unnamed hold fails), the reasons of the holds
during the fault, and when estimation resumed after the fault ended (none by the end fails).
--families: those scenarios run one representative cell per fault family (REPRESENTATIVES).
Prints a markdown table; exit 1 when a cell fails.
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrun  # noqa: E402

FROM = 2.0


def joint(scenario):
    """The joint the device faults hit: the estimated arm's elbow, or a knee of a standing robot."""
    return "left_knee" if scenario in simrun.FLOATING else "left_elbow"


def bus(scenario):
    return "can1" if scenario in simrun.FLOATING else "can0"


# One cell per fault family stands for it where a scenario runs only those (--families, CI): the
# heaviest loss, a silent required channel, bus-off (the supervisor's restart, the slowest
# resumption), a plausibility fault (the saturated foot cell on a standing robot: the one that
# moved the torso's mass; the stuck torque sensor on a fixed base), the framework's input garbage
# (the base from the input on a standing robot), and the combination.
REPRESENTATIVES = ("loss 20 %", "silent torque sensor", "bus-off", "torque sensor stuck",
                   "F/T saturated", "framework input garbage", "5 % loss + CRC storm")


def representative(scenario, name):
    if name.startswith("torque sensor stuck") and scenario in simrun.FLOATING:
        return False
    return name.startswith(REPRESENTATIVES)


def cells(scenario, w):
    """(name, faults, input_base, floating only) of every cell of the matrix."""
    to = FROM + w
    j, b = joint(scenario), bus(scenario)
    win = {"from": FROM, "to": to}
    return [
        ("loss 1 %", [dict(device="loss", probability=0.01, **win)], False, False),
        ("loss 5 %", [dict(device="loss", probability=0.05, **win)], False, False),
        ("loss 20 %", [dict(device="loss", probability=0.2, **win)], False, False),
        ("bursts (20 ms × 10, " + b + ")",
         [dict(device="burst", name=b, **{"from": FROM, "to": FROM + 0.02}, repeat=10,
               period=w / 10)], False, False),
        ("silent encoder (" + j + ")", [dict(device="encoder", name=j, **win)], False, False),
        ("silent torque sensor (" + j + ")", [dict(device="torque", name=j, **win)], False, False),
        ("silent F/T cell", [dict(device="ft", name="left_foot_ft", **win)], False, True),
        ("silent IMU", [dict(device="imu", **win)], False, True),
        ("CRC storm (torque frames)", [dict(device="crc", **win)], False, False),
        ("error-frame storm (" + b + ")", [dict(device="error_frames", name=b, **win)], False,
         False),
        ("bus-off (" + b + ")", [dict(device="bus_off", name=b, **win)], False, False),
        ("IMU saturated", [dict(device="imu_saturated", **win)], False, True),
        ("IMU attitude lost", [dict(device="imu_attitude", **win)], False, True),
        ("torque sensor stuck (" + j + ")", [dict(device="torque_stuck", name=j, **win)], False,
         False),
        ("F/T saturated (left foot)", [dict(device="ft_saturated", name="left_foot_ft", **win)],
         False, True),
        ("clock step +1 s", [dict(device="clock_step", step=1.0, **win)], True, False),
        ("clock step −1 s", [dict(device="clock_step", step=-1.0, **win)], True, False),
        ("framework input stale", [dict(device="input_stale", **win)], True, False),
        ("framework input garbage", [dict(device="input_garbage", **win)], True, False),
        ("5 % loss + CRC storm + silent torque sensor",
         [dict(device="loss", probability=0.05, **win), dict(device="crc", **win),
          dict(device="torque", name=j, **win)], False, False),
    ]


def run_cell(args, scenario, name, faults, input_base, work, index):
    cfg = os.path.join(work, f"{scenario}-{index}.yaml")
    tel = os.path.join(work, f"{scenario}-{index}.csv")
    log = os.path.join(work, f"{scenario}-{index}.log")
    base = input_base and scenario in simrun.FLOATING
    simrun.make_config(args.root, scenario, faults, cfg, input_base=base)
    start = time.monotonic()
    rc, void = simrun.run_sim(args.sim, cfg, tel, args.seconds, log,
                              timeout=60 + 30 * args.seconds)
    wall = time.monotonic() - start
    cell = {"scenario": scenario, "fault": name, "rc": rc, "void": void, "wall": wall,
            "base": base, "log": log}
    if rc == 0 and os.path.exists(tel):
        cell["v"] = simrun.read_telemetry(tel, window=(FROM, FROM + args.window))
    if not args.keep:
        for p in (cfg, tel) + (() if failures(cell) else (log,)):
            if os.path.exists(p):
                os.remove(p)
    return cell


def failures(c):
    """Why a cell fails (empty: it passes)."""
    why = []
    if c["void"]:
        return why  # MuJoCo reset the simulation: the controller's failure, not heft's (reported)
    if c["rc"] != 0:
        why.append(f"exit {c['rc']}")
        return why
    v = c.get("v")
    if v is None or v.rows == 0:
        return why + ["no telemetry"]
    if v.non_finite:
        why.append(f"{v.non_finite} non-finite hand-offs")
    if v.inconsistent:
        why.append(f"{v.inconsistent} inconsistent hand-offs")
    if v.unnamed_holds:
        why.append(f"{v.unnamed_holds} unnamed holds")
    if v.resumed_at is None:
        why.append("no resumption")
    return why


def row(c):
    v = c.get("v")
    fault = c["fault"] + (" (base from the input)" if c["base"] else "")
    if c["void"]:
        return f"| {c['scenario']} | {fault} | void (MuJoCo reset) | | | | |"
    if v is None:
        return f"| {c['scenario']} | {fault} | **exit {c['rc']}** | | | | |"
    held = "no hold"
    if v.held:
        held = "+".join(sorted(v.hold_reasons))
        if v.window_rows:
            held += f" ({100 * v.window_held / v.window_rows:.0f} %)"
    resumed = "**never**" if v.resumed_at is None else \
        f"{1e3 * (v.resumed_at - (FROM + c['window'])):.0f} ms" if v.held else "—"
    verdict = "ok" if not failures(c) else "**" + "; ".join(failures(c)) + "**"
    return (f"| {c['scenario']} | {fault} | {'0' if c['rc'] == 0 else c['rc']} | "
            f"{v.non_finite} / {v.inconsistent} of {v.rows} | {held} | {resumed} | {verdict} |")


def main():
    global FROM
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sim", required=True, help="the heft-sim program")
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--seconds", type=float, default=6.0, help="simulated seconds per cell")
    p.add_argument("--from", dest="start", type=float, default=FROM,
                   help="when each fault starts [s] (estimation runs from 0.5 s)")
    p.add_argument("--window", type=float, default=1.0, help="seconds each fault lasts")
    p.add_argument("--scenarios", default=",".join(simrun.SCENARIOS))
    p.add_argument("--faults", default="", help="comma-separated substrings of fault names")
    p.add_argument("--families", default="",
                   help="scenarios that run one representative cell per fault family only")
    p.add_argument("--out", default="", help="also write the table here")
    p.add_argument("--work", default="", help="keep configurations, telemetry and logs here")
    args = p.parse_args()
    FROM = args.start
    args.keep = bool(args.work)
    if args.seconds < FROM + args.window + 1.0:
        p.error(f"--seconds must leave at least 1 s after the fault ({FROM + args.window + 1:g})")
    work = args.work or tempfile.mkdtemp(prefix="heft-faults-")
    os.makedirs(work, exist_ok=True)
    wanted = [f for f in args.faults.split(",") if f]
    results = []
    index = 0
    for scenario in args.scenarios.split(","):
        if scenario not in simrun.SCENARIOS:
            p.error(f"unknown scenario {scenario}")
        for name, faults, input_base, floating_only in cells(scenario, args.window):
            if floating_only and scenario not in simrun.FLOATING:
                continue
            if wanted and not any(w in name for w in wanted):
                continue
            if scenario in args.families.split(",") and not representative(scenario, name):
                continue
            index += 1
            c = run_cell(args, scenario, name, faults, input_base, work, index)
            c["window"] = args.window
            results.append(c)
            print(f"[faults] {scenario}: {name}: {'; '.join(failures(c)) or 'ok'} "
                  f"({c['wall']:.1f} s)", file=sys.stderr, flush=True)
    lines = [f"Fault from {FROM:g} s for {args.window:g} s, {args.seconds:g} s per cell "
             "(lockstep). Bad hand-offs: non-finite / not physically consistent, of the control "
             "ticks; held: the hold reasons during the fault and its next 2 s (the share of the "
             "fault's ticks held); resumed: estimating again, after the fault's end.", "",
             "| scenario | fault | exit | bad hand-offs | held (reasons) | resumed | verdict |",
             "|---|---|---|---|---|---|---|"]
    lines += [row(c) for c in results]
    failed = [c for c in results if failures(c)]
    lines += ["", f"{len(results)} cells, {len(failed)} failed, "
              f"{sum(c['void'] for c in results)} void; "
              f"{sum(c['wall'] for c in results):.0f} s wall"]
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    for c in failed:
        print(f"[faults] FAILED {c['scenario']} / {c['fault']}: {'; '.join(failures(c))} "
              f"(log: {c['log']})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
