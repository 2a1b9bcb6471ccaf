#!/usr/bin/env bash
# Runs one libFuzzer harness for SECONDS on its seeds and a work corpus, then prints one summary
# line: executions, edges covered (cov:), features (ft:), corpus size and crashes. Exit status is
# libFuzzer's (non-zero on a crash, leak, UB report, timeout or out-of-memory input); the input
# that failed is kept in WORK_DIR/../artifacts/.
#   run.sh BINARY SEED_DIR WORK_DIR SECONDS [DICT]
# Limits (tests/fuzz/README.md): an input may take 10 s and 2 GB at most; more is a bug in heft.
set -uo pipefail
binary=$1 seeds=$2 work=$3 seconds=$4 dict=${5:-}
name=$(basename "$binary")
artifacts=$(dirname "$work")/artifacts
mkdir -p "$work" "$artifacts"
args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
      -artifact_prefix="$artifacts/$name-" -close_fd_mask=1)
[ -n "$dict" ] && args+=(-dict="$dict")
log=$(dirname "$work")/$name.log
stamp=$(dirname "$work")/$name.start
touch "$stamp"
# Leaks inside third-party libraries are suppressed (lsan.supp says which and why).
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# The work corpus first: libFuzzer writes new inputs into the first directory only.
"$binary" "${args[@]}" "$work" "$seeds" >"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
stats=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*/[^ ]*' | tail -1)
crashes=$(find "$artifacts" -name "$name-*" -newer "$stamp" 2>/dev/null | wc -l)
[ $rc -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1
printf '%-18s %10s execs  %s  crashes: %s\n' "$name" "${execs:-?}" "${stats:-cov: ?}" "$crashes"
if [ $rc -ne 0 ]; then
  echo "---- $name failed (exit $rc); the end of $log:"
  grep -v '^#[0-9]' "$log" | tail -40
  ls -1 "$artifacts"/"$name"-* 2>/dev/null
fi
exit $rc
