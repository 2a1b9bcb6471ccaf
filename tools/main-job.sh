#!/usr/bin/env bash
# The main job, given the Release build tree. It grows with the project: today it runs the most
# complete end-to-end thing heft can do (see README, "The main job").
set -euo pipefail
BUILD=${1:?usage: main-job.sh BUILD_DIR}
cd "$(dirname "$0")/.."
echo "[heft] main job: the hal state buffer under real threads (the service does not exist yet)"
ctest --test-dir "$BUILD" -L unit --output-on-failure
