#!/usr/bin/env bash
# Do the simulated controllers hold the deviated robot? Each scenario of config/sim on the ideal
# robot and on simulation.deviations {preset: default, seed: S}, one heft-sim run each, its full
# length (excite: duration_scale 0.5, 30 s) or DURATION simulated seconds; one row per run (Markdown):
#   run: heft-sim's exit status (1: MuJoCo reset an unstable simulation: the run is void);
#   fell: the pelvis went below 60 % of its height (the scenarios' fall detection);
#   task RMSE: the arm scenarios' elbow error [rad] after its fade-in (a stalled elbow: ≈ amplitude/√2),
#   the floating ones' pelvis-height error [m]; walk progress: touchdowns and the pelvis's x [m].
#   scripts/sim-robustness.sh BUILD_DIR OUT_DIR [--duration S] [--seeds "ideal 1 2 …"]
#                           [--scenarios "forearm-load …"] [--jobs N]
set -euo pipefail
BUILD=${1:?usage: sim-robustness.sh BUILD_DIR OUT_DIR [--duration S] [--seeds LIST] [--scenarios LIST] [--jobs N]}
OUT=${2:?usage: sim-robustness.sh BUILD_DIR OUT_DIR ...}
shift 2
DURATION=0
SEEDS="ideal 1 2 3 4 5 6 7 8 9 10"
SCENARIOS="forearm-load dumbbell-curl torso-load step-in-place walk excite"
JOBS=1
while [ $# -gt 0 ]; do
  case $1 in
    --duration) DURATION=$2 ;;
    --seeds) SEEDS=$2 ;;
    --scenarios) SCENARIOS=$2 ;;
    --jobs) JOBS=$2 ;;
    *) echo "unknown argument $1" >&2 && exit 2 ;;
  esac
  shift 2
done
cd "$(dirname "$0")/.."
ROOT=$(pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HEFT_SIM=$(cd "$BUILD" && pwd)/bin/heft-sim

one() {
  local scenario=$1 seed=$2
  local cfg="$OUT/$scenario-$seed.yaml" deviations
  if [ "$seed" = ideal ]; then deviations="{preset: ideal}"; else deviations="{preset: default, seed: $seed}"; fi
  sed -e "s|urdf: ../robots|urdf: $ROOT/config/robots|" \
    -e "s|^  scenario: .*|&\n  deviations: $deviations|" "config/sim/$scenario.yaml" >"$cfg"
  [ "$scenario" != excite ] || sed -i "s|^  scenario: .*|&\n  duration_scale: 0.5|" "$cfg"
  local rc=0 duration=()
  [ "$DURATION" = 0 ] || duration=(--duration "$DURATION")
  "$HEFT_SIM" --config "$cfg" --telemetry "$OUT/$scenario-$seed.csv" "${duration[@]}" \
    >"$OUT/$scenario-$seed.log" 2>&1 || rc=$?
  echo "$rc" >"$OUT/$scenario-$seed.rc"
}
export -f one
export OUT ROOT HEFT_SIM DURATION
for scenario in $SCENARIOS; do
  for seed in $SEEDS; do echo "$scenario $seed"; done
done | xargs -P "$JOBS" -L 1 bash -c 'one "$0" "$1"'

python3 - "$OUT" "$SCENARIOS" "$SEEDS" <<'EOF'
import csv, math, re, sys
out, scenarios, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
print("| scenario | robot | run | fell | task RMSE | walk progress |")
print("|---|---|---|---|---|---|")
for sc in scenarios:
    for seed in seeds:
        base = f"{out}/{sc}-{seed}"
        rc = open(base + ".rc").read().strip()
        log = open(base + ".log").read()
        m = re.search(r"unstable at t = ([0-9.]+) s", log)
        run = "ok" if rc == "0" else (f"void at {m.group(1)} s" if m else f"exit {rc}")
        s = re.search(r"simulated robot: pelvis lowest ([-0-9.]+) m.*fell (yes|no); "
                      r"touchdowns (\d+); pelvis x ([-0-9.]+) m", log)
        fell = s.group(2) if s else "?"
        progress = f"{s.group(3)} steps, x {float(s.group(4)):+.3f} m" if s and sc in (
            "walk", "step-in-place") else ""
        col = "left_elbow_error_rad" if sc in ("forearm-load", "dumbbell-curl") else "pelvis_height_error_m"
        rmse = "?"
        try:
            with open(base + ".csv") as f:
                r = csv.reader(f)
                head = next(r)
                t, e = head.index("t_ns"), head.index(col)
                # the elbow after its 1.5 s fade-in; the pelvis over the whole run
                t0 = 2.0 if col.startswith("left_elbow") else 0.0
                vals = [float(row[e]) for row in r if float(row[t]) * 1e-9 >= t0]
                if vals:
                    rmse = f"{math.sqrt(sum(v * v for v in vals) / len(vals)):.4f}"
        except (OSError, ValueError, StopIteration):
            pass
        print(f"| {sc} | {seed} | {run} | {fell} | {rmse} | {progress} |")
EOF
