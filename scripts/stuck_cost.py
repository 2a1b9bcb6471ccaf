#!/usr/bin/env python3
"""What a stuck torque sensor costs before the drivers flag it.

  scripts/stuck_cost.py --sim build/release/bin/heft-sim [--scenarios dumbbell-curl,walk]

The drivers flag a torque sensor stuck at one value after drivers.torque_stuck_ms (50 ms) of its
joint moving; until then its frames are valid and the estimator takes them. Per scenario, two
lockstep runs that are identical up to the fault (same seed): one with the sensor of
scripts/faults.py's joint stuck from FROM, one without. Over the ticks from FROM to the first held
tick (the detection): the filter's updates and gated ticks, the largest NIS, and the estimate's
departure from the run without the fault at the detection: the handed mass, the raw EKF mass, and
the NEES against the simulated truth (heft-sim's <link>_nees column: eᵀP⁻¹e with the hand-off's
covariance), whose square root moves by at most the departure's length in the covariance's
metric; and that length itself, √(δᵀP⁻¹δ) of the handed π's departure δ with the hand-off's
covariance P at about the detection (a run without the fault ending there, its last settled
estimate persisted: host.persistence). The figures: docs/reliability.md, "The stuck torque
sensor's first 50 ms".
"""

import argparse
import csv
import math
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faults  # noqa: E402
import simrun  # noqa: E402

FROM, SECONDS = 2.0, 3.0
QUANTITIES = ["mass_kg", "hx_kg_m", "hy_kg_m", "hz_kg_m", "ixx_kg_m2", "ixy_kg_m2", "ixz_kg_m2",
              "iyy_kg_m2", "iyz_kg_m2", "izz_kg_m2"]


def persisted(path):
    """(π, covariance 10x10) of the first link of a persisted estimate (host/src/persistence.cpp)."""
    with open(path) as f:
        text = f.read()
    pi = [float(x) for x in re.search(r"parameters: \[([^\]]*)\]", text).group(1).split(",")]
    c = [float(x) for x in re.search(r"covariance: \[([^\]]*)\]", text).group(1).split(",")]
    return pi, [c[10 * i:10 * i + 10] for i in range(10)]


def mahalanobis(d, P):
    """√(dᵀ P⁻¹ d) by Cholesky (P symmetric positive definite)."""
    n = len(d)
    L = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = P[i][j] - sum(L[i][k] * L[j][k] for k in range(j))
            L[i][j] = math.sqrt(s) if i == j else s / L[j][j]
    y = []
    for i in range(n):
        y.append((d[i] - sum(L[i][k] * y[k] for k in range(i))) / L[i][i])
    return math.sqrt(sum(v * v for v in y))


def rows(path):
    """The telemetry's rows, its rotated files (host.telemetry max_bytes: .N oldest) first."""
    rotated = sorted((p for p in os.listdir(os.path.dirname(path) or ".")
                      if p.startswith(os.path.basename(path) + ".") and p.rsplit(".", 1)[1].isdigit()),
                     key=lambda p: -int(p.rsplit(".", 1)[1]))
    out = []
    for name in rotated + [os.path.basename(path)]:
        link = read_rows(os.path.join(os.path.dirname(path), name), out)
    return link, out


def read_rows(path, out):
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        col = {n: i for i, n in enumerate(header)}
        link = next(n[:-len("_nees")] for n in header if n.endswith("_nees"))
        for row in r:
            if len(row) != len(header):
                continue
            out.append({"t": int(row[col["t_ns"]]) * 1e-9, "state": row[col["state"]],
                        "status": row[col["tick_status"]], "nis": float(row[col["nis"]]),
                        "gamma": float(row[col["gamma"]]),
                        "m": float(row[col[link + "_mass_kg"]]),
                        "pi": [float(row[col[link + "_" + q]]) for q in QUANTITIES],
                        "m_est": float(row[col[link + "_est_mass_kg"]]),
                        "nees": float(row[col[link + "_nees"]])})
        return link


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sim", required=True)
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--scenarios", default="dumbbell-curl,walk")
    p.add_argument("--work", default="")
    args = p.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="heft-stuck-")
    os.makedirs(work, exist_ok=True)
    print("| scenario (joint) | flagged after | updates / gated before it | largest NIS (gate γ) | handed "
          "mass, departure | raw EKF mass, departure | √NEES without → with the fault | departure "
          "of the handed π, √(δᵀP⁻¹δ) |")
    print("|---|---|---|---|---|---|---|---|")
    for scenario in args.scenarios.split(","):
        j = faults.joint(scenario)
        runs = {}
        for name, fl in (("clean", []), ("stuck", [{"device": "torque_stuck", "name": j,
                                                    "from": FROM, "to": FROM + 1.0}])):
            cfg, tel, log = (os.path.join(work, f"{scenario}-{name}.{e}")
                             for e in ("yaml", "csv", "log"))
            for old in os.listdir(work):  # a previous run's rotated telemetry
                if old.startswith(os.path.basename(tel)):
                    os.remove(os.path.join(work, old))
            simrun.make_config(args.root, scenario, fl, cfg)
            rc, void = simrun.run_sim(args.sim, cfg, tel, SECONDS, log, timeout=300)
            if rc != 0 or void:
                sys.exit(f"stuck_cost: {scenario} {name}: exit {rc}, void {void} (log: {log})")
            runs[name] = rows(tel)
        # The hand-off's covariance at the detection: a run without the fault that ends there,
        # its last settled estimate persisted on the stop (host.persistence; the persister looks
        # every 100 ms of wall time, so the file's π is matched to its telemetry row).
        link, clean = runs["clean"]
        detect = next((i for i, r in enumerate(runs["stuck"][1]) if r["t"] >= FROM and
                       r["state"] == "holding"), None)
        cov = None
        if detect is not None:
            pfile = os.path.join(work, f"{scenario}-estimate.yaml")
            if os.path.exists(pfile):
                os.remove(pfile)  # else the run would start from it
            cfg, tel, log = (os.path.join(work, f"{scenario}-cov.{e}") for e in ("yaml", "csv", "log"))
            simrun.make_config(args.root, scenario, [], cfg,
                               extra_host=[f"persistence: {{file: {pfile}, interval: 1}}"])
            rc, _ = simrun.run_sim(args.sim, cfg, tel, runs["stuck"][1][detect]["t"], log,
                                   timeout=300)
            cov = persisted(pfile) if rc == 0 and os.path.exists(pfile) else None
        _, stuck = runs["stuck"]
        if detect is None:
            print(f"| {scenario} ({j}) | never | | | | | | |")
            continue
        first = next(i for i, r in enumerate(stuck) if r["t"] >= FROM)
        span = stuck[first:detect]
        upd = sum(r["status"] in ("updated", "released") for r in span)
        gated = sum(r["status"] == "gated" for r in span)
        last, ref = stuck[detect - 1], clean[detect - 1]
        dep = "—"
        if cov is not None:
            pi_p, P = cov
            at = min(clean, key=lambda r: max(abs(a - b) for a, b in zip(r["pi"], pi_p)))
            d = [a - b for a, b in zip(last["pi"], ref["pi"])]
            dep = (f"{mahalanobis(d, P):.3f} (σ_m {1e3 * math.sqrt(P[0][0]):.0f} g, P of "
                   f"t = {at['t']:.2f} s)")
        assert abs(last["t"] - ref["t"]) < 1e-6, "the runs' ticks differ"
        print(f"| {scenario} ({j}; {link}) | {1e3 * (stuck[detect]['t'] - FROM):.0f} ms | "
              f"{upd} / {gated} of {len(span)} | {max(r['nis'] for r in span):.1f} "
              f"({max(r['gamma'] for r in span):.1f}) | "
              f"{last['m']:.4f} kg, {1e3 * (last['m'] - ref['m']):+.2f} g | "
              f"{last['m_est']:.4f} kg, {1e3 * (last['m_est'] - ref['m_est']):+.2f} g | "
              f"{math.sqrt(ref['nees']):.3f} → {math.sqrt(last['nees']):.3f} | {dep} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
