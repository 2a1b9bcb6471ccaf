#!/usr/bin/env python3
"""A link's inertia about its centre of mass against the truth, over time, for several runs.

  scripts/shape_prior_figure.py --link torso --out docs/torso-inertia-prior.png \\
      --title "step-in-place (URDF robot)" LABEL=RUN.csv [LABEL=RUN.csv ...]

Each RUN.csv is heft-sim telemetry (--telemetry). Per row, the handed estimate's inertia about its
own CoM, I_c = I_o - m S(c)^T S(c), is compared with the truth's: relative Frobenius error
|I_c - I_c,true| / |I_c,true|, in %. The figure of docs/estimator.md, "The inertia states at the
centre of mass", is this script on three runs of config/sim/step-in-place.yaml (the loose prior,
the rigid prior at the link origin, the rigid prior at the CoM). Prints each run's mean over its
last quarter while estimating (the figures quoted there).
"""

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile

NAMES = ["mass_kg", "hx_kg_m", "hy_kg_m", "hz_kg_m", "ixx_kg_m2", "ixy_kg_m2", "ixz_kg_m2",
         "iyy_kg_m2", "iyz_kg_m2", "izz_kg_m2"]


def inertia_about_com(p):
    m = p[0]
    c = [p[1] / m, p[2] / m, p[3] / m]
    i_o = [[p[4], p[5], p[6]], [p[5], p[7], p[8]], [p[6], p[8], p[9]]]
    cc = sum(v * v for v in c)
    return [[i_o[r][k] - m * ((cc if r == k else 0.0) - c[r] * c[k]) for k in range(3)]
            for r in range(3)]


def frobenius(a):
    return math.sqrt(sum(v * v for row in a for v in row))


def errors(path, link):
    """(t in s, inertia-about-CoM error in %, estimating) per row of one telemetry file."""
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        col = {n: i for i, n in enumerate(header)}
        try:
            handed = [col[f"{link}_{n}"] for n in NAMES]
            truth = [col[f"{link}_true_{n}"] for n in NAMES]
            t_ns, state = col["t_ns"], col["state"]
        except KeyError as e:
            sys.exit(f"shape_prior_figure: {path} has no column {e} (is '{link}' estimated?)")
        out = []
        for r in rows:
            est = inertia_about_com([float(r[i]) for i in handed])
            tru = inertia_about_com([float(r[i]) for i in truth])
            diff = [[est[a][b] - tru[a][b] for b in range(3)] for a in range(3)]
            out.append((int(r[t_ns]) * 1e-9, 100.0 * frobenius(diff) / frobenius(tru),
                        r[state] == "estimating"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--link", required=True)
    ap.add_argument("--out", required=True, help="the PNG to write")
    ap.add_argument("--title", default="")
    ap.add_argument("runs", nargs="+", metavar="LABEL=RUN.csv")
    args = ap.parse_args()
    colours = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"]
    with tempfile.TemporaryDirectory() as tmp:
        plots = []
        for k, spec in enumerate(args.runs):
            label, sep, path = spec.partition("=")
            if not sep:
                sys.exit(f"shape_prior_figure: '{spec}' is not LABEL=RUN.csv")
            rows = errors(path, args.link)
            est = [e for _, e, on in rows if on]
            settled = est[len(est) * 3 // 4:]
            mean = sum(settled) / len(settled) if settled else float("nan")
            print(f"{label}: inertia about the CoM, last quarter while estimating: {mean:.1f} %")
            data = os.path.join(tmp, f"{k}.dat")
            with open(data, "w") as f:
                for t, e, _ in rows:
                    f.write(f"{t:.4f} {e:.4f}\n")
            plots.append(f"'{data}' using 1:2 with lines lw 2 lc rgb '{colours[k % 4]}' "
                         f"title '{label} ({mean:.1f} %)'")
        script = "\n".join([
            "set terminal pngcairo noenhanced size 900,420 font ',10'",
            f"set output '{os.path.abspath(args.out)}'",
            f"set title '{args.title}: the handed {args.link} inertia about its CoM'",
            "set xlabel 'time [s]'",
            "set ylabel 'error to the truth [%] (log)'",
            "set logscale y",
            "set grid",
            "set key bottom right",
            "plot " + ", ".join(plots),
        ])
        subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    main()
