#!/usr/bin/env bash
# The main job, given the Release build tree. It grows with the project: today it runs the most
# complete end-to-end thing heft can do (see README, "What the main job runs today").
set -euo pipefail
BUILD=${1:?usage: main-job.sh BUILD_DIR}
cd "$(dirname "$0")/.."
step() { printf '\n\033[1m[heft] %s\033[0m\n' "$*"; }
step "1/3 dynamics core against MuJoCo on the reference humanoid (RNEA, mass matrix, contact term)"
"$BUILD/tests/dynamics/test_dynamics_mujoco" --gtest_brief=1 | grep -E '\[ heft \]|PASSED|FAILED'
step "2/3 the estimator on the reference humanoid carrying loads it does not know"
"$BUILD/tests/filter/test_filter_estimation" --gtest_brief=1 | grep -E '\[ heft \]|PASSED|FAILED'
step "3/3 timings (Google Benchmark, medians of 3)"
"$BUILD/tests/dynamics/bench_dynamics" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  2>/dev/null | grep -E 'median'
"$BUILD/tests/filter/bench_filter" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  2>/dev/null | grep -E 'median'
