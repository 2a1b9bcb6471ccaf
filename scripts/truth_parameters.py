#!/usr/bin/env python3
"""The simulated robot's truth as a robot.parameters file: the oracle nominal model.

    truth_parameters.py TRUTH.yaml OUT.yaml

TRUTH.yaml is what heft-sim writes next to its telemetry for a deviated robot (<name>.truth.yaml:
every body's true pi, every joint's true friction). OUT.yaml holds them in the format
robot.parameters reads (links: <name>: {pi: [...]}; friction: <joint>: {fc, fv}). A diagnostic
for the simulated robot only (tools/main-job.sh --oracle): with it as the nominal model the
estimator runs as if the identification were perfect, which separates the identification's
errors from the estimator's. Standard library only (the truth file's layout is heft-sim's own).
"""
import re
import sys


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    section, body = None, None
    links, friction = [], []
    with open(argv[1], encoding="utf-8") as f:
        for line in f:
            if re.match(r"^[a-z_]+:", line):
                section = line.split(":")[0]
                continue
            if section == "bodies":
                m = re.match(r"^  ([A-Za-z0-9_]+):\s*$", line)
                if m:
                    body = m.group(1)
                m = re.match(r"^    pi: (\[.*\])\s*$", line)
                if m and body:
                    links.append("  %s:\n    pi: %s" % (body, m.group(1)))
            elif section == "joints":
                m = re.match(r"^  ([A-Za-z0-9_]+): \{coulomb: ([^,]+), viscous: ([^,}]+)", line)
                if m:
                    friction.append("  %s: {fc: %s, fv: %s}" % m.groups())
    if not links:
        sys.stderr.write("truth_parameters.py: %s: no bodies with pi (not a heft-sim truth file?)\n"
                         % argv[1])
        return 1
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write("# The simulated robot's truth (%s): a diagnostic nominal model, not an "
                "identification.\nlinks:\n" % argv[1])
        f.write("\n".join(links) + "\n")
        if friction:
            f.write("friction:  # tau = fc * tanh(v / 0.01) + fv * v\n" + "\n".join(friction) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
