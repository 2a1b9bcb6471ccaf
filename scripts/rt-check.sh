#!/usr/bin/env bash
# scripts/rt-check.sh BUILD_DIR [SECONDS]: heft's control-thread wake-up lateness beside cyclictest's,
# on this machine, at the same priority (SCHED_FIFO 80, host.realtime.priority) and period (3 ms),
# each with and without the CPU latency request (/dev/cpu_dma_latency held at 0). Four runs of
# SECONDS (default 30), interleaved: cyclictest (request 0), heft (request 0), cyclictest
# (--laptop: no request), heft (host.realtime.cpu_dma_latency_us: -1). heft is heft-sim in real time
# on the dumbbell curl (config/sim/dumbbell-curl.yaml): the host's own driver and control threads
# (schedule.cpp, the code heftd runs) with the simulator's stepper thread beside them.
# Prints one Markdown table (µs; overruns: wake-ups later than one 3 ms period); the logs stay in
# BUILD_DIR/rt-check. Run as root (or with LimitRTPRIO/RLIMIT_MEMLOCK and rw on the device).
set -euo pipefail
BUILD=$(cd "$1" && pwd)
RUN_S=${2:-30}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=$BUILD/rt-check
mkdir -p "$OUT"
command -v cyclictest >/dev/null || { echo "rt-check: no cyclictest (Debian package rt-tests; tools/heft setup)" >&2; exit 1; }
[ -x "$BUILD/bin/heft-sim" ] || { echo "rt-check: no $BUILD/bin/heft-sim (build it first)" >&2; exit 1; }

# cyclictest's histogram (1 µs bins up to 100 ms) → "p50 p99 p99.9 max overruns samples".
cyclic() { # label extra-args...
  local label=$1
  shift
  cyclictest -q -m -p 80 -t 1 -i 3000 -D "${RUN_S}s" -h 100000 "$@" >"$OUT/cyclictest-$label.txt"
  awk '/^[0-9]+ +[0-9]+/ {bin[n] = $1 + 0; cnt[n] = $2 + 0; total += $2; if ($1 > 3000) over += $2; n++}
       /^# Histogram Overflows:/ {over += $4; total += $4; ovf = $4}
       /^# Max Latencies:/ {max = $4 + 0}
       END {
         split("0.5 0.99 0.999", q, " ")
         for (j = 1; j <= 3; j++) {
           c = 0; v[j] = max
           for (i = 0; i < n; i++) { c += cnt[i]; if (c >= q[j] * total) { v[j] = bin[i]; break } }
         }
         printf "%.0f %.0f %.0f %.0f %d %d\n", v[1], v[2], v[3], max, over, total
       }' "$OUT/cyclictest-$label.txt"
}

# heft-sim in real time; its summary line → the same six numbers.
heft() { # label cpu_dma_latency_us
  local label=$1 cfg=$OUT/dumbbell-$1.yaml
  sed -e "s|urdf: ../robots|urdf: $ROOT/config/robots|" \
    -e "s|realtime: {priority: 80, lock_memory: true}|realtime: {priority: 80, lock_memory: true, cpu_dma_latency_us: $2}|" \
    config/sim/dumbbell-curl.yaml >"$cfg"
  grep -q "cpu_dma_latency_us: $2" "$cfg" || { echo "rt-check: dumbbell-curl.yaml's host.realtime changed" >&2; exit 1; }
  "$BUILD/bin/heft-sim" --config "$cfg" --realtime --duration "$RUN_S" >"$OUT/heft-$label.log" 2>&1
  sed -n 's/.*control wake-up lateness: median \([0-9.]*\) µs, 99th \([0-9.]*\) µs, 99.9th \([0-9.]*\) µs, worst \([0-9.]*\) µs over \([0-9]*\) ticks; overruns \([0-9]*\).*/\1 \2 \3 \4 \6 \5/p' \
    "$OUT/heft-$label.log" | awk '{printf "%.0f %.0f %.0f %.0f %d %d\n", $1, $2, $3, $4, $5, $6}'
}

row() { # name "p50 p99 p999 max overruns samples"
  read -r a b c d e f <<<"$2"
  [ -n "${f:-}" ] || { echo "rt-check: no figures for $1 (see $OUT)" >&2; exit 1; }
  printf '| %-44s | %6s | %6s | %6s | %6s | %8s | %7s |\n' "$1" "$a" "$b" "$c" "$d" "$e" "$f"
}

echo "rt-check: $(uname -r), $(nproc) CPU(s), $(date -u +%Y-%m-%dT%H:%MZ); 4 runs of $RUN_S s (logs: $OUT)" >&2
c0=$(cyclic request0)
h0=$(heft request0 0)
cn=$(cyclic none --laptop)
hn=$(heft none -1)
echo "| wake-up lateness, 3 ms period, SCHED_FIFO 80 (µs) |    p50 |    p99 |  p99.9 |    max | overruns | samples |"
echo "|----------------------------------------------|-------:|-------:|-------:|-------:|---------:|--------:|"
row "cyclictest, /dev/cpu_dma_latency held at 0" "$c0"
row "heft control thread, held at 0 (default)" "$h0"
row "cyclictest --laptop (no latency request)" "$cn"
row "heft control thread, cpu_dma_latency_us: -1" "$hn"
