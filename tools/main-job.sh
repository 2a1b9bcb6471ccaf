#!/usr/bin/env bash
# The main job: heft-sim — the whole service (heftd's host, threads, drivers and plugin) on the
# simulated robot — through every scenario, with and without adaptation, then the report (Markdown
# + PNG figures) and its summary.
#   tools/main-job.sh BUILD_DIR [OUT_DIR] [--short]
# --short: each run capped at 8 simulated seconds and the report's checked targets enforced
# (what CI runs). Without it every scenario runs its full length.
set -euo pipefail
BUILD=${1:?usage: main-job.sh BUILD_DIR [OUT_DIR] [--short]}
OUT=${2:-$(dirname "$0")/../build/report}
SHORT=${3:-}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HEFT_SIM="$BUILD/bin/heft-sim"
DURATION=()
CHECK=()
if [ "$SHORT" = "--short" ]; then DURATION=(--duration 8); CHECK=(--check); fi
step() { printf '\n\033[1m[heft] %s\033[0m\n' "$*"; }

# One run: scenario, label, and sed edits applied to the scenario's configuration. Extra heft-sim
# arguments for the next run only: RUN_ARGS=(...).
RUN_ARGS=()
run() {
  local scenario=$1 label=$2; shift 2
  local cfg="$OUT/$scenario-$label.yaml"
  sed "s|urdf: ../robots|urdf: $ROOT/config/robots|" "config/sim/$scenario.yaml" > "$cfg"
  for edit in "$@"; do sed -i "$edit" "$cfg"; done
  local t0=$SECONDS
  if ! "$HEFT_SIM" --config "$cfg" --telemetry "$OUT/$scenario-$label.csv" "${DURATION[@]}" "${RUN_ARGS[@]}" > "$OUT/$scenario-$label.log" 2>&1; then
    echo "heft-sim failed on $scenario ($label); its log:" >&2
    tail -20 "$OUT/$scenario-$label.log" >&2
    exit 1
  fi
  printf '  %-14s %-9s %3ss  %s\n' "$scenario" "$label" $((SECONDS - t0)) \
    "$(grep -o 'stopped after.*' "$OUT/$scenario-$label.log" | head -1)"
  RUN_ARGS=()
}

# The baseline KF filters π itself: its initial spread and random walk are set in π's units.
KF=('s/  filter: ekf/  filter: kf/'
  's/  process_noise: \[.*\]/  process_noise: [0.05, 0.001, 0.001, 0.001, 0.05, 0.01, 0.01, 0.05, 0.01, 0.05]/'
  's/^  links: \[\(.*\)\]/  links: [\1]\n  initial_sigma: [1.0, 0.05, 0.05, 0.05, 0.5, 0.1, 0.1, 0.5, 0.1, 0.5]/')

step "heft-sim, the service on the simulated robot: MuJoCo → CAN frames → drivers → state buffer → plugin (333 Hz) → hand-off → controller"
i=0
for scenario in forearm-load dumbbell-curl torso-load step-in-place walk; do
  i=$((i + 1))
  echo "[$i/5] $scenario: adaptive, nominal (no adaptation), baseline KF"
  run "$scenario" adaptive
  run "$scenario" nominal 's/  adaptation: true/  adaptation: false/'
  run "$scenario" kf "${KF[@]}"
done
echo "[extra] stepping without gating (Fig. 8)"
run step-in-place nogate 's/  gating: {enabled: true/  gating: {enabled: false/'
echo "[extra] forearm-load with the hand-off rate-limited at 3 kg/s (the paper's hardware cap) and 60 kg/s"
run forearm-load rl3 's/  rate_limits: {.*}/  rate_limits: {mass: 3, first_moment: 0.75, inertia: 0.1875}/'
run forearm-load rl60 's/  rate_limits: {.*}/  rate_limits: {mass: 60, first_moment: 15, inertia: 3.75}/'
echo "[extra] dumbbell-curl in real time (absolute-time sleeps, SCHED_FIFO if allowed): wake-up jitter"
RUN_ARGS=(--realtime --duration 6)
run dumbbell-curl realtime

step "report"
"$BUILD/bin/heft-report" "$OUT" "${CHECK[@]}"
