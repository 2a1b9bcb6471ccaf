#!/usr/bin/env bash
# scripts/truth_parameters.py (main-job.sh --oracle) end to end: heft-sim writes a deviated robot's
# truth, the tool turns it into a robot.parameters file, and heft-sim (the plugin's own loader)
# accepts it with every body and joint. Fails if the truth file's layout and the tool drift apart
# (no body, a missing joint's friction) or the file is not what robot.parameters reads.
# The configurations are edited through yaml-cpp (CONFIG_EDIT: tests/common's
# heft_test_config_edit), never as text.
#   truth_parameters.sh HEFT_SIM CONFIG_DIR SCRIPTS_DIR CONFIG_EDIT
set -euo pipefail
SIM=$1 CONFIG=$2 TOOLS=$3 EDIT=$4
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$EDIT" "$CONFIG/sim/torso-load.yaml" "$WORK/probe.yaml" \
  yaml simulation.deviations '{preset: default, seed: 4}'
"$SIM" --config "$WORK/probe.yaml" --telemetry "$WORK/probe.csv" --duration 0.02 >/dev/null 2>&1
python3 "$TOOLS/truth_parameters.py" "$WORK/probe.truth.yaml" "$WORK/truth-params.yaml"
bodies=$(grep -c '^    pi: \[' "$WORK/truth-params.yaml")
joints=$(grep -c '^  [a-z_]*: {fc: ' "$WORK/truth-params.yaml")
want_bodies=$(grep -c '^    pi: \[' "$WORK/probe.truth.yaml")
want_joints=$(grep -c '^  [a-z_]*: {coulomb: ' "$WORK/probe.truth.yaml")
echo "truth: $want_bodies bodies, $want_joints joints; parameters file: $bodies, $joints"
[ "$bodies" -gt 0 ] && [ "$bodies" = "$want_bodies" ] && [ "$joints" = "$want_joints" ]
# The floating robot: the file as written, pelvis included (main-job.sh's robot.parameters).
"$EDIT" "$WORK/probe.yaml" "$WORK/run.yaml" set robot.parameters "$WORK/truth-params.yaml"
"$SIM" --config "$WORK/run.yaml" --telemetry "$WORK/run.csv" --duration 0.02 >"$WORK/run.log" 2>&1 ||
  { cat "$WORK/run.log"; exit 1; }
grep -q "the identified friction of $want_joints joints fed forward" "$WORK/run.log" ||
  { echo "heft-sim did not take the file's friction:"; cat "$WORK/run.log"; exit 1; }
echo "heft-sim loaded it: $(grep -o 'the identified friction of [0-9]* joints fed forward' "$WORK/run.log")"
