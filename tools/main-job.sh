#!/usr/bin/env bash
# The main job: the procedure a team follows on a new robot, on the simulated robot (heft-sim: the
# whole service — heftd's host, threads, drivers and plugin — on a MuJoCo humanoid):
#   1. record an exciting motion with the service (scenario excite: squats, sway, steps in place,
#      waist and arms moving; host.recording → excite.heftrec);
#   2. identify the robot from it (heft-identify, SDP + friction and sensor offsets and gains) → identified.yaml / .urdf;
#   3. start the service with robot.parameters: identified.yaml; the robot stands (holds) still,
#      unloaded, while the estimator calibrates; the payload arrives after (simulation.load_after);
#   4. run the scenarios, with and without adaptation, and compare the URDF's and the identified
#      nominal model with calibration off and on; the baseline KF, the robot without foot F/T
#      cells, and the extras (no gating, rate limits, real time);
# then the report (Markdown + PNG figures, heft-report) and its summary: OUT_DIR/report.md, and
# OUT_DIR/results.md (the figures page: commit, date, machine, this command, the report's tables
# and targets) with OUT_DIR/README-summary.md (the README's summary block).
#   tools/main-job.sh BUILD_DIR [OUT_DIR] [--short] [--seed S] [--ideal] [--oracle] [--robot R]
#                     [--estimator 'KEY: VALUE']... [--publish]
# --short: a 30 s recording, each run capped at 8 simulated seconds after the load arrives, only the
#   runs the report's checked targets read (the procedure's combination; no rate-limit sweep, no
#   real-time run), and those targets enforced (what CI runs). Without it every scenario runs its full length in all four.
# --seed S: the simulated robot deviates from its URDF (simulation.deviations: {preset: default,
#   seed: S}; friction, sensor offsets and gains, bodies off their URDF); the default is seed 1.
# --ideal: the simulated robot is its URDF exactly (the paper's setting).
# --oracle (not with --ideal; a diagnostic): the deviated robot's truth replaces the identified model as
#   the nominal one (scripts/truth_parameters.py on heft-sim's truth file), so the runs show what the
#   estimator reaches when the identification is perfect; the identification still runs and is
#   reported.
# --robot R: reference (the default: config/sim/, config/robots/heft_humanoid.urdf) or any robot with
#   configurations in config/sim/R/ (scripts/gen_sim_configs.py --robot R writes them: compact, the
#   second humanoid; g1, Unitree's G1). The robot's URDF is the one its excite.yaml names, its
#   floating link the role map's pelvis (simulation.roles); the report takes each run's estimated
#   link and task error from the run. A robot without standing-curl configurations leaves those
#   runs out of the full job.
# --estimator 'KEY: VALUE' (repeatable; not with --publish; a diagnostic): every run's configuration
#   gets the line `KEY: VALUE` under estimator: (an opt-in such as 'consider_gain: true'; a key the
#   configurations set already is refused by heft-sim as a duplicate), so the job measures it
#   against the shipped configuration's figures; the figures page names it in the command.
# --publish (not with --short): also write the figures page into the source tree, docs/results.md,
#   and replace README.md's summary (between its lines <!-- heft-report:summary --> and
#   <!-- /heft-report:summary -->). Without it the job writes nothing outside OUT_DIR.
set -euo pipefail
usage() {
  echo "usage: main-job.sh BUILD_DIR [OUT_DIR] [--short] [--seed S] [--ideal] [--oracle] [--robot NAME]" \
    "[--estimator 'KEY: VALUE']... [--publish]" >&2
  exit 2
}
COMMAND="bash tools/main-job.sh$(printf ' %q' "$@")" # as typed: the figures page names it
BUILD=${1:-}
[ -n "$BUILD" ] || usage
shift
OUT=$(dirname "$0")/../build/report
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  OUT=$1
  shift
fi
SHORT=
SEED=1
PRESET=default
ORACLE=
ROBOT=reference
PUBLISH=
ESTIMATOR_KEYS=()
while [ $# -gt 0 ]; do
  case $1 in
    --short) SHORT=1 ;;
    --seed)
      [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] || usage
      SEED=$2
      PRESET=default
      shift
      ;;
    --ideal) PRESET=ideal ;;
    --oracle) ORACLE=1 ;;
    --publish) PUBLISH=1 ;;
    --estimator)
      [ $# -ge 2 ] && [[ $2 =~ ^[a-z_]+:\ [A-Za-z0-9_.,:{}\ -]+$ ]] || usage
      ESTIMATOR_KEYS+=("$2")
      shift
      ;;
    --robot)
      [ $# -ge 2 ] && [[ $2 =~ ^[A-Za-z0-9_-]+$ ]] || usage
      ROBOT=$2
      shift
      ;;
    *) usage ;;
  esac
  shift
done
if [ -n "$PUBLISH" ] && [ -n "$SHORT" ]; then
  echo "main-job.sh: --publish writes the full job's figures into the source tree; the short job never does" >&2
  exit 2
fi
if [ -n "$PUBLISH" ] && ! { grep -qx '<!-- heft-report:summary -->' "$(dirname "$0")/../README.md" &&
  grep -qx '<!-- /heft-report:summary -->' "$(dirname "$0")/../README.md"; }; then
  echo "main-job.sh: --publish: README.md has no lines <!-- heft-report:summary --> and" \
    "<!-- /heft-report:summary --> to put the summary between" >&2
  exit 2
fi
if [ -n "$PUBLISH" ] && [ ${#ESTIMATOR_KEYS[@]} -gt 0 ]; then
  echo "main-job.sh: --publish writes the shipped configuration's figures; --estimator is a diagnostic" >&2
  exit 2
fi
if [ -n "$ORACLE" ] && [ "$PRESET" = ideal ]; then
  echo "main-job.sh: --oracle needs the deviated robot (not --ideal): the ideal robot's truth is its URDF" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# The figures page is headed by the source tree's commit as the job starts (and whether it had
# uncommitted changes then): what the job ran, even if the tree moves on while it runs.
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$COMMIT" != unknown ] &&
  [ -n "$(GIT_OPTIONAL_LOCKS=0 git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  COMMIT="$COMMIT + uncommitted changes"
fi
CFGDIR=config/sim
[ "$ROBOT" = reference ] || CFGDIR=config/sim/$ROBOT
if [ ! -f "$CFGDIR/excite.yaml" ]; then
  echo "main-job.sh: --robot $ROBOT: no $CFGDIR/excite.yaml (scripts/gen_sim_configs.py --robot" \
    "$ROBOT writes a robot's configurations); robots here: reference" \
    "$(find config/sim -mindepth 2 -name excite.yaml -printf '%h\n' | xargs -rn1 basename | sort | tr '\n' ' ')" >&2
  exit 2
fi
# The robot's floating-base URDF (the one the recording runs on) and its floating link, the role
# map's pelvis: both from its configurations.
URDF=$(sed -n 's|^  urdf: \(.*\)|\1|p' "$CFGDIR/excite.yaml" | head -1)
URDF=$(realpath -m --relative-to=. "$CFGDIR/$URDF")
PELVIS=$(sed -n 's|^    pelvis: \([A-Za-z0-9_.-]*\).*|\1|p' "$CFGDIR/excite.yaml" | head -1)
if [ ! -f "$URDF" ] || [ -z "$PELVIS" ]; then
  echo "main-job.sh: $CFGDIR/excite.yaml names no URDF that exists ($URDF) or no role map's pelvis" \
    "(simulation.roles.pelvis)" >&2
  exit 2
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HEFT_SIM="$BUILD/bin/heft-sim"
HEFT_IDENTIFY="$BUILD/tools/identify/heft-identify"
[ -x "$HEFT_IDENTIFY" ] || HEFT_IDENTIFY="$BUILD/bin/heft-identify"

# simulation.deviations: the simulated robot deviating from its URDF (default) or the URDF exactly.
if [ "$PRESET" = ideal ]; then
  CONFIG_EDITS=("s|^  scenario: .*|&\n  deviations: {preset: ideal}|")
else
  CONFIG_EDITS=("s|^  scenario: .*|&\n  deviations: {preset: default, seed: $SEED}|")
fi
# --estimator: each KEY: VALUE as the first line under estimator: (the pattern admits no sed
# metacharacter).
for kv in "${ESTIMATOR_KEYS[@]}"; do CONFIG_EDITS+=("s|^estimator:\$|&\n  $kv|"); done

# The payload arrives this long after the start: the estimator calibrates on the still, unloaded
# robot first (calibration.window 1 s after the walking signal: 0 s fixed base, 0.5 s floating).
LOAD_AFTER=3
# Runs capped at 8 simulated seconds after the load in --short; the real-time run at 6 s.
DURATION=()
CHECK=()
IDENT_DURATION=(duration_scale 1 60) # the excite recording: 60 s
if [ -n "$SHORT" ]; then
  DURATION=(--duration $((LOAD_AFTER + 8)))
  CHECK=(--check)
  IDENT_DURATION=(duration_scale 0.5 30) # 30 s: at 20 s the SDP's result was not consistent
fi
step() { printf '\n\033[1m[heft] %s\033[0m\n' "$*"; }

# One run: configuration (config/sim/CFG.yaml), label, and sed edits applied to it. Extra heft-sim
# arguments for the next run only: RUN_ARGS=(...). Every run gets the deviations and load_after.
RUN_ARGS=()
run() {
  local config=$1 label=$2
  shift 2
  local cfg="$OUT/$config-$label.yaml"
  sed "s|urdf: \(\.\./\)*robots|urdf: $ROOT/config/robots|" "$CFGDIR/$config.yaml" >"$cfg"
  for edit in "${CONFIG_EDITS[@]}" "$@"; do sed -i "$edit" "$cfg"; done
  local t0=$SECONDS
  if ! "$HEFT_SIM" --config "$cfg" --telemetry "$OUT/$config-$label.csv" "${DURATION[@]}" \
    "${RUN_ARGS[@]}" >"$OUT/$config-$label.log" 2>&1; then
    # A run MuJoCo found unstable is void (its summary says when): the job goes on and the report
    # names it, with its checked target missed. The recording is not optional: without it there is
    # nothing to identify.
    if grep -q '"unstable_at":[0-9]' "$OUT/$config-$label.summary.json" 2>/dev/null; then
      local why
      why=$(grep -o 'MuJoCo found the simulation unstable at t = [0-9.]* s' \
        "$OUT/$config-$label.log" | head -1)
      if [ "$label" = record ]; then
        echo "the recording is void: $why (the controller could not hold this robot through the" \
          "exciting motion), so there is nothing to identify; its log: $OUT/$config-$label.log" >&2
        grep -E 'simulated robot: (pelvis|commanded)' "$OUT/$config-$label.log" | cut -c1-300 >&2
        exit 1
      fi
      printf '  %-19s %-11s %3ss  void: %s (%s)\n' "$config" "$label" $((SECONDS - t0)) \
        "$why" "$OUT/$config-$label.log"
      RUN_ARGS=()
      return 0
    fi
    echo "heft-sim failed on $config ($label); its log:" >&2
    tail -20 "$OUT/$config-$label.log" >&2
    exit 1
  fi
  printf '  %-19s %-11s %3ss  %s\n' "$config" "$label" $((SECONDS - t0)) \
    "$(grep -o 'stopped after.*' "$OUT/$config-$label.log" | head -1)"
  RUN_ARGS=()
}

# Edits. The load's arrival (every scenario but standing-curl, which has its own: 3 s).
LOAD="s|^  scenario: \(.*\)|&\n  load_after: $LOAD_AFTER|"
CAL_ON='s/  calibration: {enabled: false/  calibration: {enabled: true/'
NO_ADAPT='s/  adaptation: true/  adaptation: false/'
# robot.parameters: the identified model (the fixed-base robot's file has no floating pelvis).
IDENT_FLOAT="s|^  floating_base: true|&\n  parameters: $OUT/identified.yaml|"
IDENT_FIXED="s|^  floating_base: false|&\n  parameters: $OUT/identified-fixed.yaml|"
IDENT=("$IDENT_FLOAT" "$IDENT_FIXED")
PROCEDURE=("$LOAD" "${IDENT[@]}" "$CAL_ON")
# The baseline KF filters π itself: its initial spread and random walk are set in π's units (a
# rigid link's shape prior and its pull, in θ, are the EKF's: left out).
KF=('/^  initial_sigma: /d' '/^  prior_time_constant: /d' "/^  # The torso's shape is the model's/d"
  's/  filter: ekf/  filter: kf/'
  's/  process_noise: \[.*\]/  process_noise: [0.05, 0.001, 0.001, 0.001, 0.05, 0.01, 0.01, 0.05, 0.01, 0.05]/'
  's/^  links: \[\(.*\)\]/  links: [\1]\n  initial_sigma: [1.0, 0.05, 0.05, 0.05, 0.5, 0.1, 0.1, 0.5, 0.1, 0.5]/')

DESCRIBED="simulation.deviations: {preset: $PRESET$([ "$PRESET" = ideal ] || echo ", seed: $SEED")}"
step "1. the exciting motion, recorded by the service (heft-sim scenario excite, host.recording); robot: $DESCRIBED"
RUN_ARGS=(--duration "${IDENT_DURATION[2]}") # its whole length, not the scenarios' cap
run excite record "s|^  scenario: excite|&\n  ${IDENT_DURATION[0]}: ${IDENT_DURATION[1]}|" \
  "s|^host:|host:\n  recording: {path: $OUT/excite.heftrec}|"
grep -o 'recording: .*' "$OUT/excite-record.log" | tail -1 | sed 's/^/  /'

step "2. heft-identify on the recording: SDP (physically consistent) on the full-sensing rows + friction and the sensors' offsets and gains"
# The SDP fits the full-sensing rows (joint torques and the feet's wrenches; the null-space rows
# left it worse than the URDF and inconsistent on this recording) and is pulled toward the URDF
# by heft-identify's default, 1e3 per plausible size squared (docs/identification.md, "The pull
# toward the URDF").
# What the robot has where the data see it: each joint's friction, each torque sensor's offset and
# gain, each F/T cell's offsets. Without the sensors' terms their offsets go into the bodies' first
# moments (the fit 8× the ideal robot's, the arm's handed covariance 10× more overconfident;
# docs/imperfect-robot.md, "Sensor terms in the procedure").
t0=$SECONDS
rc=0
"$HEFT_IDENTIFY" --urdf "$URDF" --friction --offsets --gains --ft-offsets --methods wls,sdp --sdp-rows wls \
  --out-yaml "$OUT/identified.yaml" --out-urdf "$OUT/identified.urdf" "$OUT/excite.heftrec" \
  >"$OUT/identify.log" 2>&1 || rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
  echo "heft-identify failed (exit $rc); its log:" >&2
  tail -20 "$OUT/identify.log" >&2
  exit 1
fi
[ $rc -eq 3 ] && echo "  heft-identify: a method failed; the best finished result was written (identify.log)"
printf '  %ss: ' $((SECONDS - t0))
grep -A4 'Torque-prediction RMSE' "$OUT/identify.log" | tail -3 | tr -s ' ' | paste -sd ';' | sed 's/;/; /g'
# Its fit on the rows whose joint slides and on the held ones (static friction no model predicts).
grep "^Fit by the joints' speed" "$OUT/identify.log" | sed 's/^/  /'
if ! grep -q '^  physically_consistent: true' "$OUT/identified.yaml"; then
  echo "heft-identify's parameters are not physically consistent: heft would refuse them" \
    "(identify.log says which method and why)" >&2
  exit 1
fi
if [ -n "$ORACLE" ]; then
  python3 scripts/truth_parameters.py "$OUT/excite-record.truth.yaml" "$OUT/identified.yaml"
  echo "  --oracle: the simulated robot's truth replaces the identified model as the nominal one"
fi
# The fixed-base robot (the arm scenarios) has no floating pelvis (the role map's) among its moving
# links.
awk -v pelvis="$PELVIS:" '/^[^ #]/ { links = ($1 == "links:") }
     links && /^  [A-Za-z0-9_.-]+:/ { skip = ($1 == pelvis) } /^[^ #]/ { skip = 0 } !skip' \
  "$OUT/identified.yaml" >"$OUT/identified-fixed.yaml"

step "3-4. the service with the identified model, calibrating on the still robot; the payload after ${LOAD_AFTER} s"
echo "  MuJoCo → CAN frames → drivers → state buffer → plugin (333 Hz) → hand-off → controller"
i=0
for scenario in forearm-load dumbbell-curl torso-load step-in-place walk; do
  i=$((i + 1))
  echo "[$i/5] $scenario: adaptive (identified, calibrated), nominal (no adaptation), baseline KF"
  run "$scenario" adaptive "${PROCEDURE[@]}"
  # --short runs only what a checked target reads: the nominal run where Table II's reduction is
  # checked (forearm-load, torso-load) or no harm is (step-in-place, walk), the KF where its
  # inconsistency is (walk, Fig. 3).
  [ -n "$SHORT" ] && [ "$scenario" = dumbbell-curl ] ||
    run "$scenario" nominal "${PROCEDURE[@]}" "$NO_ADAPT"
  [ -n "$SHORT" ] && [ "$scenario" != walk ] || run "$scenario" kf "${PROCEDURE[@]}" "${KF[@]}"
  if [ -z "$SHORT" ] && [[ $scenario =~ ^(forearm-load|dumbbell-curl|torso-load)$ ]]; then
    echo "      the other nominal-model / calibration combinations"
    run "$scenario" urdf "$LOAD"
    run "$scenario" urdf-cal "$LOAD" "$CAL_ON"
    run "$scenario" ident "$LOAD" "${IDENT[@]}"
  fi
done
echo "[noft] the robot without foot F/T cells (null-space measurement, calibrated in its null space)"
run torso-load-noft adaptive "${PROCEDURE[@]}"
if [ -z "$SHORT" ] && [ -f "$CFGDIR/standing-curl.yaml" ]; then
  run standing-curl adaptive "${IDENT[@]}"
  run standing-curl nominal "${IDENT[@]}" "$NO_ADAPT"
  run standing-curl-noft adaptive "${IDENT[@]}"
fi
# Joints from the framework's joint-state segment (docs/framework.md): heft-sim's stand-in framework
# writes the simulated sensors' readings there, no joint frames go on the buses; the F/T cells and
# the IMU stay on CAN. Beside the CAN path's adaptive runs, checked on the same targets.
FRAMEWORK=('s|^\(    - {name: [A-Za-z0-9_]*\), bus: [A-Za-z0-9]*, node: [0-9]*}|\1}|'
  's|^drivers:|&\n  joints_from: framework|')
echo "[framework] forearm-load and torso-load with the joints from the framework (the procedure's runs)"
run forearm-load framework "${PROCEDURE[@]}" "${FRAMEWORK[@]}"
run torso-load framework "${PROCEDURE[@]}" "${FRAMEWORK[@]}"
# Every joint on an MIT-mode actuator whose torque comes from its current (docs/standard-actuators.md):
# tests/drivers/sim_standard_actuators.py's device line (motor id = node + 1, 0.1 N·m/A, gear 10,
# v_max 20 rad/s), its current range t_max sized to the joint (the URDF's effort limit ÷ K_t·N:
# 40 A would clip a standing robot's knees); the F/T cells and the IMU stay heft's CAN devices.
# Beside the CAN path's adaptive runs; heft-report's targets for them come from the conversion's
# uncertainty (docs/standard-actuators.md, "The main job on MIT actuators").
mit_edit() { # the sed script that puts every joint line of CONFIG on an MIT actuator
  awk 'FNR == NR {
         if (match($0, /<joint [^>]*name="[^"]*"/)) {
           joint = substr($0, RSTART, RLENGTH); sub(/.*name="/, "", joint); sub(/"$/, "", joint)
         }
         if (joint != "" && match($0, /effort="[0-9.eE+-]*"/)) effort[joint] = substr($0, RSTART + 8, RLENGTH - 9)
         next
       }
       /^    - \{name: [A-Za-z0-9_]*, bus: [A-Za-z0-9]*, node: [0-9]*\}$/ {
         line = $0; sub(/^    - \{name: /, "", line); split(line, f, /[,}] *(bus: |node: )?/)
         if (!(f[1] in effort) || effort[f[1]] + 0 <= 0) { print "no effort limit for " f[1] > "/dev/stderr"; exit 1 }
         printf "s|^    - {name: %s, bus: %s, node: %s}$|    - {name: %s, bus: %s, device: mit, motor_id: %d, p_max: 12.5, v_max: 20, t_max: %s, torque_constant: 0.1, gear_ratio: 10}|;", f[1], f[2], f[3], f[1], f[2], f[3] + 1, effort[f[1]]
       }' "$URDF" "$1"
}
echo "[mit] forearm-load and torso-load on MIT-mode actuators, torque from current (the procedure's runs)"
for scenario in forearm-load torso-load; do
  MIT=$(mit_edit "$CFGDIR/$scenario.yaml")
  run "$scenario" mit "${PROCEDURE[@]}" "$MIT"
done
NO_GATE='s/  gating: {enabled: true/  gating: {enabled: false/'
echo "[extra] stepping without gating (Fig. 8; the procedure's run, against step-in-place's adaptive one)"
# With gating: step-in-place's adaptive run above (the procedure's); without: the same, gating off.
run step-in-place nogate "${PROCEDURE[@]}" "$NO_GATE"
if [ -z "$SHORT" ]; then # reported, not checked: the full job only
  echo "[extra] forearm-load with the hand-off rate-limited at 3 kg/s (the paper's hardware cap) and 60 kg/s"
  run forearm-load rl3 "${PROCEDURE[@]}" 's/  rate_limits: {.*}/  rate_limits: {mass: 3, first_moment: 0.75, inertia: 0.1875}/'
  run forearm-load rl60 "${PROCEDURE[@]}" 's/  rate_limits: {.*}/  rate_limits: {mass: 60, first_moment: 15, inertia: 3.75}/'
  echo "[extra] dumbbell-curl in real time (absolute-time sleeps, SCHED_FIFO if allowed): wake-up jitter"
  RUN_ARGS=(--realtime --duration 6)
  run dumbbell-curl realtime "${PROCEDURE[@]}"
fi

step "report"
# report.md; results.md and the README's summary in OUT, and with --publish in the source tree.
PUBLISHED=()
[ -z "$PUBLISH" ] || PUBLISHED=(--readme "$ROOT/README.md")
"$BUILD/bin/heft-report" "$OUT" "${CHECK[@]}" --results "$OUT/results.md" \
  --summary "$OUT/README-summary.md" --commit "$COMMIT" --command "$COMMAND" "${PUBLISHED[@]}"
if [ -n "$PUBLISH" ]; then
  cp "$OUT/results.md" "$ROOT/docs/results.md"
  echo "published: $ROOT/docs/results.md and README.md's summary"
fi
