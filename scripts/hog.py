#!/usr/bin/env python3
"""The control thread starved by a CPU hog on its core, measured in real time.

  scripts/hog.py --sim build/release/bin/heft-sim [--bursts 0.05,0.5] [--scenario dumbbell-curl]
               [--cpu 1] [--priority 90] [--work DIR]

heft-sim runs in real time (--realtime: heftd's host, schedule and real-time set-up on the clock,
not lockstep), with the driver thread on one CPU and the control thread alone on another
(host.realtime driver_cpus / control_cpus; the rest of heft-sim, MuJoCo included, pinned with the
driver thread by taskset). A hog process pinned to the control thread's CPU at a SCHED_FIFO
priority above the control thread's (host.realtime.priority 80) spins for each burst in turn, 3 s
apart, once the estimator is estimating. Nothing in heftd knows about the hog: what it notices, it
notices on its own.

Per burst, from the telemetry (one row per control tick; t_ns is CLOCK_MONOTONIC in real time, the
hog's clock too): the control ticks run during the burst (0: the thread was starved), the longest
gap between ticks, the filter updates after it on the sample the tick before had used (stamp_ns
unchanged: what catch-up ticks run back to back did), the hold reasons, and when estimation
resumed after the burst. Over the run: non-finite or inconsistent hand-offs and unnamed holds
(simrun's verdict), heftd's own account (its summary: overruns, late ticks, skipped periods, ticks
without a new driver sample) and what heft-handoff-reader, the controller's side, saw.
Prints a markdown table; exit 1 when a hand-off is bad, a hold unnamed, a burst did not starve
the thread (the measurement is void), heftd did not count the starvation, a sample was taken
twice, or estimation did not resume. Needs root (or RLIMIT_RTPRIO) for SCHED_FIFO. Not in CI:
real time on a shared CI machine cannot be trusted.
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrun  # noqa: E402

# The hog: pinned, SCHED_FIFO above the control thread, spinning; prints its CLOCK_MONOTONIC span.
HOG = """
import os, sys, time
cpu, prio, length = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
t0 = time.monotonic()
while time.monotonic() - t0 < length:
    pass
t1 = time.monotonic()
os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))  # the interpreter's exit: no hog
print(t0, t1, flush=True)
"""

PERIOD_NS = 3_000_000


def wait_for(path, text, proc, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        with open(path, errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.05)
    return False


def read_rows(tel):
    with open(tel, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        col = {n: i for i, n in enumerate(header)}
        return [(int(row[col["t_ns"]]), row[col["state"]], row[col["hold_reason"]],
                 row[col["stamp_ns"]], row[col["tick_status"]])
                for row in r if len(row) == len(header)]


def burst_figures(rows, start_ns, end_ns):
    """Ticks during the burst, longest gap, filter updates in the second after it on a sample
    the tick before used already (stamp_ns unchanged: one measurement taken twice), the hold
    reasons from the burst's start to the first estimating tick after it, and when that came."""
    during = sum(start_ns <= r[0] < end_ns for r in rows)
    gap, reused, reasons, resumed = 0, 0, set(), None
    for (t0, _, _, stamp0, _), (t1, state, reason, stamp1, status) in zip(rows, rows[1:]):
        if t1 < start_ns - PERIOD_NS or t0 > end_ns + 1_000_000_000:
            continue
        gap = max(gap, t1 - t0)
        if t1 >= end_ns and stamp1 == stamp0 and status in ("updated", "released"):
            reused += 1
        if state == "holding" and t1 >= start_ns and resumed is None:
            reasons.update(reason.split("+"))
        if resumed is None and t1 >= end_ns and state == "estimating":
            resumed = t1 - end_ns
    return during, gap, reused, reasons, resumed


def summary_figure(log_text, pattern):
    m = re.search(pattern, log_text)
    return m.group(1) if m else None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sim", required=True, help="the heft-sim program")
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--scenario", default="dumbbell-curl")
    p.add_argument("--bursts", default="0.05,0.5", help="hog burst lengths [s], 3 s apart")
    p.add_argument("--cpu", type=int, default=1, help="the control thread's (and the hog's) CPU")
    p.add_argument("--driver-cpu", type=int, default=0, help="the driver thread's and heft-sim's")
    p.add_argument("--priority", type=int, default=90, help="the hog's SCHED_FIFO priority")
    p.add_argument("--work", default="")
    args = p.parse_args()
    bursts = [float(b) for b in args.bursts.split(",") if b]
    work = args.work or tempfile.mkdtemp(prefix="heft-hog-")
    os.makedirs(work, exist_ok=True)
    cfg, tel, log, reader_log = (os.path.join(work, n)
                                 for n in ("hog.yaml", "hog.csv", "hog.log", "reader.log"))
    simrun.make_config(args.root, args.scenario, [], cfg, extra_host=["counters_period: 1"])
    with open(cfg) as f:
        text = f.read()
    rt = "realtime: {priority: 80, lock_memory: true}"
    if rt not in text:
        sys.exit(f"hog: {args.scenario}.yaml's host.realtime changed (expected `{rt}`)")
    text = text.replace(rt, f"realtime: {{priority: 80, lock_memory: true, driver_cpus: "
                            f"[{args.driver_cpu}], control_cpus: [{args.cpu}]}}")
    with open(cfg, "w") as f:
        f.write(text)
    first_at = 5.0  # s after the start: the dumbbell curl estimates from about 1 s
    seconds = first_at + 3.0 * len(bursts) + 2.0
    shm = f"heft_hog_{os.getpid()}"
    cmd = ["taskset", "-c", str(args.driver_cpu), args.sim, "--config", cfg, "--telemetry", tel,
           "--duration", str(seconds), "--realtime", "--shm", shm]
    # The whole-body controller's side: heft-handoff-reader (beside heft-sim) polls the shared
    # hand-off every 100 ms and prints each change of its state (live, stale, gone).
    reader_exe = os.path.join(os.path.dirname(args.sim), "heft-handoff-reader")
    reader = None
    spans = []
    with open(log, "w") as out, open(reader_log, "w") as rout:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        if not wait_for(log, "running:", proc, 60):
            proc.kill()
            sys.exit(f"hog: heft-sim did not start (log: {log})")
        if os.access(reader_exe, os.X_OK):
            reader = subprocess.Popen(["taskset", "-c", str(args.driver_cpu), reader_exe, shm],
                                      stdout=rout, stderr=subprocess.STDOUT)
        t_run = time.monotonic()
        for i, length in enumerate(bursts):
            time.sleep(max(0.0, t_run + first_at + 3.0 * i - time.monotonic()))
            hog = subprocess.run([sys.executable, "-c", HOG, str(args.cpu), str(args.priority),
                                  str(length)], capture_output=True, text=True, check=True)
            a, b = (float(x) for x in hog.stdout.split())
            spans.append((int(a * 1e9), int(b * 1e9)))
        rc = proc.wait(timeout=120)
        if reader:
            reader.terminate()
            reader.wait(timeout=10)
    with open(log, errors="replace") as f:
        log_text = f.read()
    v = simrun.read_telemetry(tel)
    rows = read_rows(tel)
    overruns = summary_figure(log_text, r"over \d+ ticks; overruns (\d+)")
    worst = summary_figure(log_text, r"control wake-up lateness:.*worst ([0-9.]+) µs")
    starved = summary_figure(log_text, r"control thread starved: (.*)")
    stalls = log_text.count("control thread: no tick for over")
    with open(reader_log, errors="replace") as f:
        reader_text = f.read()
    stale = reader_text.count(" stale\n")
    print(f"heft-sim --realtime, {args.scenario}, control thread on CPU {args.cpu} (SCHED_FIFO "
          f"80), hog on CPU {args.cpu} at SCHED_FIFO {args.priority}; exit {rc}.\n")
    print("| hog burst | ticks during it | longest gap | updates on a used sample after it | "
          "held (reasons) | estimating again after it |")
    print("|---|---|---|---|---|---|")
    problems = []
    for (a, b), length in zip(spans, bursts):
        during, gap, reused, reasons, resumed = burst_figures(rows, a, b)
        print(f"| {1e3 * length:.0f} ms (measured {1e-6 * (b - a):.0f} ms) | {during} | "
              f"{1e-6 * gap:.1f} ms | {reused} | {'+'.join(sorted(reasons)) or 'no hold'} | "
              f"{'**never**' if resumed is None else f'{1e-6 * resumed:.1f} ms'} |")
        if during > 0:
            problems.append(f"the {length:g} s burst did not starve the control thread (void)")
        if resumed is None:
            problems.append(f"estimation did not resume after the {length:g} s burst")
        if reused:
            problems.append(f"{reused} filter updates on a sample already used after the "
                            f"{length:g} s burst")
    print(f"\nhand-offs: {v.rows} control ticks, {v.non_finite} non-finite, {v.inconsistent} "
          f"inconsistent, {v.unnamed_holds} unnamed holds; heftd: overruns {overruns}, worst "
          f"wake-up {worst} µs, starved: {starved}; watchdog stall lines {stalls}; the hand-off "
          f"reader (every 100 ms) saw heftd stale {stale} times"
          f"{'' if reader else ' (no heft-handoff-reader beside heft-sim)'} (log: {log})")
    if rc != 0:
        problems.append(f"heft-sim exited {rc}")
    if v.non_finite or v.inconsistent or v.unnamed_holds:
        problems.append("a bad hand-off or an unnamed hold")
    if not overruns or int(overruns) < len(bursts):
        problems.append(f"heftd counted {overruns} overruns for {len(bursts)} bursts")
    for prob in problems:
        print(f"[hog] FAILED: {prob}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
