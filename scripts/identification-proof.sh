#!/usr/bin/env bash
# Reproduces the figures of docs/identification.md, "Proof: simulated recordings": recordings of
# the perturbed reference humanoid (5 min of squats with sway and foot lifts for training;
# validation; two motions out of distribution), heft-identify with every method, and the residual
# figure (gnuplot).
#   bash scripts/identification-proof.sh [BUILD_DIR] [OUT_DIR] [MINUTES]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/release}
OUT=${2:-$BUILD/identify}
MINUTES=${3:-5}
cmake --build "$BUILD" -j 2 --target heft-identify-proof heft-identify-sim
mkdir -p "$OUT"
"$BUILD/tests/identification/heft-identify-sim" "$OUT" --minutes "$MINUTES"
# heft-identify's pipeline and report (friction on) plus what only this proof can check: the true
# parameters' row, the recovery of the truth, the residual per sample (tests/identification).
PROOF="$BUILD/tests/identification/heft-identify-proof"
common=(--urdf config/robots/heft_humanoid.urdf "$OUT/train.heftrec"
  --validate "$OUT/validation.heftrec" --validate "$OUT/ood_stepping.heftrec"
  --validate "$OUT/ood_reaching.heftrec" --truth-urdf "$OUT/truth.urdf")
/usr/bin/time -f "wall %e s, max RSS %M kB" "$PROOF" "${common[@]}" \
  --residual-csv "$OUT/residual.csv" 2>&1 | tee "$OUT/report.txt"
# The SDP on the full-sensing rows instead of the null-space rows.
"$PROOF" "${common[@]}" --methods wls,sdp --sdp-rows wls 2>&1 | tee "$OUT/report_sdp_wls.txt"
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal pngcairo size 900,500
set output "$OUT/residual.png"
set datafile separator ","
set key autotitle columnhead top right
set xlabel "time on the validation recording [s]"
set ylabel "joint-torque residual [N·m]"
set title "Residual of the nominal model: URDF vs identified (SDP), validation motion"
plot "$OUT/residual.csv" using 1:2 with lines lw 1 lc rgb "#c03030" title "URDF: |residual| (all joints)", \
     "" using 1:4 with lines lw 1 lc rgb "#3060c0" title "identified: |residual|", \
     "" using 1:3 with lines lw 2 lc rgb "#ff8080" title "URDF: mean over joints", \
     "" using 1:5 with lines lw 2 lc rgb "#80a0ff" title "identified: mean over joints"
GP
  echo "figure: $OUT/residual.png"
fi
