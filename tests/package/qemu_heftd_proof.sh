#!/usr/bin/env bash
# The proof: the service as the Debian package installs it, in Debian 12's stock kernel
# (QEMU), on vcan, fed the simulator's candump log through the kernel's CAN sockets, with a
# framework stand-in that only sends `walking` and reads the shared-memory hand-off.
#
#   qemu_heftd_proof.sh (--deb FILE.deb ... | --cpack BUILD_DIR) --standin PROG --simulator PROG
#                       --source DIR --work DIR --cache DIR [--target interim|final] [options]
#
# Host side (nothing here runs in the guest's service):
#  1. The package(s): given, or `cpack -G DEB` in BUILD_DIR; `dpkg-deb -x` of each into the guest
#     root. heftd, its plugin and /etc/heft come from there, nowhere else.
#  2. The candump log: the simulator (SIMULATOR --config SIM.yaml --duration SECONDS, lockstep)
#     writes it into WORK (simulation.candump). SIM.yaml is --sim-config with its paths made
#     absolute, its host section removed and `candump:` set; `shipped` derives it from the
#     package's /etc/heft/heft.yaml (backend simulated + a simulation section), so the simulated
#     robot has exactly the shipped configuration's devices.
#  3. The guest's /etc/heft/heft.yaml (--guest-config):
#       shipped              the package's file; only bus names change: can0 → vcan0, can1 → vcan1
#       socketcan-copy:PATH  a simulator config of the package (PATH in the unpacked package, else
#                            on the host) made a socketcan one: backend socketcan, simulation
#                            section removed, urdf at the installed /etc/heft/robots, and
#                            wait_for_walking: false with --no-walking-wait; then the bus names
#     The hand-off goes to shared memory through heftd's command line (--shm NAME; the config's
#     host.shm name when it has one), so the configuration needs no edit for it. The script prints
#     the diff between the package's file and what the guest runs.
#  4. The initramfs: busybox, the CAN modules, the unpacked package(s), the shared libraries the
#     unpacked heftd, plugin(s) and the other guest programs need (ldd, copied from the host),
#     canplayer (can-utils) and ip (iproute2) from the host, the stand-in, the log.
#  5. Boot (--accel tcg -icount shift=0,sleep=off -smp 1 -m 1024 by default; kernel argument
#     mitigations=off). /init: modules, vcan0/vcan1 (mtu 72, up),
#     `heftd --config /etc/heft/heft.yaml --shm NAME --allow-root` (root in the guest), the
#     stand-in, then the replay in real time:
#     can_replay (--player can_replay, default: the log parsed first, one sendmmsg per instant) or
#     `canplayer -I frames.log vcan0=can0 vcan1=can1` (--player canplayer), the stand-in's verdict,
#     SIGTERM to heftd (its summary: lost samples, stale events, frames per bus), power off.
#
# Time in the guest. Plain TCG on this 2-core, shared machine runs the guest at 3-9 % of real
# time: the replay falls behind and heftd's 3 ms driver timeout makes every channel stale, so the
# proof cannot pass that way (measured: 2-5 k frames/s against the log's 58 k). With -icount
# shift=0 the guest's clock is its instruction count (1 ns per instruction: a single 1 GIPS CPU)
# and sleep=off skips idle time: every timing in the guest - the replay's schedule, heftd's 1 kHz
# and 333 Hz loops, the configuration's timeouts - runs on that one clock, whatever the host's load,
# so the proof says "heftd as shipped keeps up on a 1 GIPS single-core machine" (lost samples,
# stale events and the replay's lateness are printed to show it). icount needs -smp 1 here (with
# -smp 2 the kernel stops at bringing up the second CPU). On a host where KVM works,
# `--accel kvm --icount off --smp 2` gives wall-clock real time (nested KVM does not boot here).
#  6. Prints the console and a summary (boot time, replay rate, heftd's counters, the stand-in's
#     result line) and exits 0 only when the stand-in passed and heftd ran and stopped cleanly.
#
# Targets (each option below overrides its target's value):
#   interim  fixed-base dumbbell-curl log (config/sim/dumbbell-curl.yaml), guest config
#            socketcan-copy:/usr/share/heft/sim/dumbbell-curl.yaml with --no-walking-wait (heftd
#            does not read the framework input segment yet), left_forearm 6.94 kg from t = 0.
#   final    standing-curl log from the simulated robot of the shipped configuration, guest config
#            shipped, left_forearm 6.94 kg from t = 3 s, the input segment required (walking must
#            reach heftd), and no simulator in the service's process (no libmujoco in heftd).
# Options: --scenario NAME --seconds S --sim-config FILE|shipped --guest-config MODE
#          --no-walking-wait --link NAME --mass KG --tolerance F --load-at S --require-input
#          --no-sim-in-service --accel tcg|kvm --icount SHIFT|off --smp N --memory MB --timeout S
#          --max-missed N --input NAME (framework input segment; default heft_input)
#          --player can_replay|canplayer --replayer PROG --kernel-args "ARGS"
# Exit 77 (ctest: skipped) only when qemu-system-x86_64 is not installed, or when --cpack's build
# tree is not configured for /usr (its packages would install /usr/local/bin/heftd: bash
# tools/heft package, or cmake --preset release, configures one that is).
set -euo pipefail

TARGET=interim
DEBS=() CPACK_DIR="" STANDIN="" REPLAYER="" SIMULATOR="" SOURCE="" WORK="" CACHE=""
declare -A OPT=()
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) DEBS+=("$2"); shift 2 ;;
    --cpack) CPACK_DIR=$2; shift 2 ;;
    --standin) STANDIN=$2; shift 2 ;;
    --replayer) REPLAYER=$2; shift 2 ;;
    --simulator) SIMULATOR=$2; shift 2 ;;
    --source) SOURCE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --target) TARGET=$2; shift 2 ;;
    --no-walking-wait | --require-input | --no-sim-in-service) OPT[${1#--}]=1; shift ;;
    --scenario | --seconds | --sim-config | --guest-config | --link | --mass | --tolerance | \
      --load-at | --accel | --smp | --memory | --timeout | --max-missed | --player | --kernel-args | \
      --icount | --input)
      OPT[${1#--}]=$2; shift 2 ;;
    *) echo "qemu_heftd_proof.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
usage() { sed -n '6,7p' "$0" >&2; exit 2; }
[ -n "$STANDIN" ] && [ -n "$SIMULATOR" ] && [ -n "$SOURCE" ] && [ -n "$WORK" ] && [ -n "$CACHE" ] || usage
[ ${#DEBS[@]} -gt 0 ] || [ -n "$CPACK_DIR" ] || usage

say() { printf '[qemu-proof] %s\n' "$*"; }
die() { printf '[qemu-proof] FAILED: %s\n' "$*" >&2; exit 1; }
# shellcheck source=../qemu/guest.sh
source "$(dirname "$0")/../qemu/guest.sh"
guest_require_qemu qemu-proof
# shellcheck source=usr_prefix.sh
source "$(dirname "$0")/usr_prefix.sh"
if [ -n "$CPACK_DIR" ]; then skip_unless_usr_prefix "$CPACK_DIR"; fi

# The target's values, then the options.
case "$TARGET" in
  interim)
    declare -A P=([scenario]=dumbbell-curl [seconds]=4 [sim-config]="$SOURCE/config/sim/dumbbell-curl.yaml"
      [guest-config]=socketcan-copy:/usr/share/heft/sim/dumbbell-curl.yaml [no-walking-wait]=1
      [link]=left_forearm [mass]=6.94 [load-at]=0 [require-input]=0 [no-sim-in-service]=0) ;;
  final)
    declare -A P=([scenario]=standing-curl [seconds]=8 [sim-config]=shipped [guest-config]=shipped
      [no-walking-wait]=0 [link]=left_forearm [mass]=6.94 [load-at]=3 [require-input]=1
      [no-sim-in-service]=1) ;;
  *) die "--target must be interim or final, not '$TARGET'" ;;
esac
P[tolerance]=0.05 P[accel]=tcg P[smp]=1 P[memory]=1024 P[timeout]=300 P[max-missed]=0
P[player]=can_replay P[kernel-args]=mitigations=off P[icount]=0 P[input]=heft_input
for k in "${!OPT[@]}"; do P[$k]=${OPT[$k]}; done

for tool in canplayer ip; do command -v "$tool" >/dev/null || die "'$tool' is missing (can-utils, iproute2)"; done
CANPLAYER=$(command -v canplayer) IP=$(command -v ip)
[ -x "$STANDIN" ] || die "no stand-in '$STANDIN'"
case "${P[player]}" in
  canplayer) ;;
  can_replay) [ -x "$REPLAYER" ] || die "--player can_replay needs --replayer PROG" ;;
  *) die "--player must be can_replay or canplayer" ;;
esac
[ -x "$SIMULATOR" ] || die "no simulator '$SIMULATOR'"
if [ "${P[accel]}" = kvm ] && ! [ -w /dev/kvm ]; then die "--accel kvm: /dev/kvm is not usable here"; fi

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
SOURCE=$(cd "$SOURCE" && pwd)
rm -rf "$WORK/root" "$WORK/deb" "$WORK"/*.log "$WORK"/*.yaml "$WORK/initrd.cpio"
ROOT="$WORK/root"
start=$(date +%s.%N)

# --- 1. The package(s) ----------------------------------------------------------------------------
if [ -n "$CPACK_DIR" ]; then
  say "cpack -G DEB in $CPACK_DIR"
  (cd "$CPACK_DIR" && cpack -G DEB -B "$WORK/deb" >"$WORK/cpack.log" 2>&1) ||
    { cat "$WORK/cpack.log"; die "cpack failed"; }
  mapfile -t DEBS < <(ls "$WORK"/deb/*.deb)
  [ ${#DEBS[@]} -gt 0 ] || die "cpack made no .deb (see $WORK/cpack.log)"
fi
guest_kernel "$CACHE" can can-raw can-dev vcan
guest_root "$ROOT"
for deb in "${DEBS[@]}"; do
  [ -f "$deb" ] || die "no package '$deb'"
  say "unpacking $(basename "$deb"): $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"
  dpkg-deb -x "$deb" "$ROOT"
done
HEFTD=$ROOT/usr/bin/heftd
[ -x "$HEFTD" ] || die "the package(s) install no /usr/bin/heftd"
mapfile -t PLUGINS < <(find "$ROOT/usr/lib" -name '*.so*' -path '*heft*' -type f)
[ ${#PLUGINS[@]} -gt 0 ] || die "the package(s) install no heft plugin under /usr/lib"
[ -f "$ROOT/etc/heft/heft.yaml" ] || die "the package(s) install no /etc/heft/heft.yaml"
if ldd "$HEFTD" | grep -q libmujoco; then
  SIM_IN_SERVICE="yes (heftd links $(ldd "$HEFTD" | awk '/libmujoco/ {print $1}'))"
  [ "${P[no-sim-in-service]}" = 1 ] && die "simulator code in the service's process: $SIM_IN_SERVICE"
else
  SIM_IN_SERVICE=no
fi

# --- 2. The candump log ---------------------------------------------------------------------------
SIM_YAML=$WORK/simulator.yaml
absolute_paths() { # DIR: robot.urdf / robot.parameters relative to DIR made absolute
  sed -E "s#^(  (urdf|parameters): )([^/ ][^ ]*)\$#\\1$1/\\3#"
}
without_section() { # NAME: the YAML without that top-level section
  awk -v s="$1:" '$0 ~ "^[^ #]" {skip = (index($0, s) == 1)} !skip'
}
if [ "${P[sim-config]}" = shipped ]; then
  # The installed configuration names installed paths (/usr/share/heft/robots/...): on the host
  # they are under the unpacked root.
  without_section host <"$ROOT/etc/heft/heft.yaml" | absolute_paths "$ROOT/etc/heft" |
    sed -E -e 's/^backend: .*/backend: simulated/' -e "s#^(  (urdf|parameters): )/usr/#\\1$ROOT/usr/#" >"$SIM_YAML"
  printf 'simulation:\n  scenario: %s\n  lockstep: true\n  roles:\n' "${P[scenario]}" >>"$SIM_YAML"
  # The reference humanoid's role map (installed beside its URDF), under simulation.roles.
  sed -n -E 's/^(  [a-z_]+: .*)$/  \1/p' "$ROOT/usr/share/heft/robots/heft_humanoid_roles.yaml" >>"$SIM_YAML"
else
  [ -f "${P[sim-config]}" ] || die "no simulator configuration '${P[sim-config]}'"
  without_section host <"${P[sim-config]}" |
    absolute_paths "$(cd "$(dirname "${P[sim-config]}")" && pwd)" |
    sed -E "s/^  scenario: .*/  scenario: ${P[scenario]}/" >"$SIM_YAML"
fi
sed -i -E '/^  candump: /d' "$SIM_YAML"
sed -i -E "s#^simulation:.*#simulation:\n  candump: $WORK/frames.log#" "$SIM_YAML"
say "simulator: $SIMULATOR, scenario ${P[scenario]}, ${P[seconds]} s (lockstep)"
"$SIMULATOR" --config "$SIM_YAML" --duration "${P[seconds]}" >"$WORK/simulator.log" 2>&1 ||
  { cat "$WORK/simulator.log"; die "the simulator failed"; }
[ -s "$WORK/frames.log" ] || die "the simulator wrote no candump log"
FRAMES=$(wc -l <"$WORK/frames.log")
SPAN=$(awk -F'[()]' 'NR == 1 {a = $2} {b = $2} END {printf "%.3f", b - a}' "$WORK/frames.log")
BUSES=$(awk '{print $2}' "$WORK/frames.log" | sort -u | tr '\n' ' ')
say "candump log: $FRAMES frames over $SPAN s on $BUSES($(awk -v n="$FRAMES" -v s="$SPAN" 'BEGIN {printf "%.0f", n / s}') frames/s)"
MAP=""
for bus in $BUSES; do MAP="$MAP v$bus=$bus"; done

# --- 3. The guest's configuration -----------------------------------------------------------------
GUEST_YAML=$WORK/guest-heft.yaml
case "${P[guest-config]}" in
  shipped) ORIGINAL=$ROOT/etc/heft/heft.yaml; cp "$ORIGINAL" "$GUEST_YAML" ;;
  socketcan-copy:*)
    ORIGINAL=${P[guest-config]#socketcan-copy:}
    [ -f "$ROOT$ORIGINAL" ] && ORIGINAL=$ROOT$ORIGINAL
    [ -f "$ORIGINAL" ] || die "no configuration '${P[guest-config]#socketcan-copy:}' in the package or on the host"
    without_section simulation <"$ORIGINAL" |
      sed -E -e 's/^backend: .*/backend: socketcan/' \
        -e 's#^(  urdf: )(\.\./)*robots/#\1/etc/heft/robots/#' >"$GUEST_YAML"
    ;;
  *) die "--guest-config must be shipped or socketcan-copy:PATH" ;;
esac
if [ "${P[no-walking-wait]}" = 1 ]; then
  sed -i -E 's/^(  wait_for_walking: )true/\1false/' "$GUEST_YAML"
fi
rename_buses() { sed -E 's/(^|[^[:alnum:]_])(can[0-9]+)([^[:alnum:]_]|$)/\1v\2\3/g'; }
renamed=$(diff "$GUEST_YAML" <(rename_buses <"$GUEST_YAML") | grep -c '^>' || true)
rename_buses <"$GUEST_YAML" >"$GUEST_YAML.tmp" && mv "$GUEST_YAML.tmp" "$GUEST_YAML"
SHM=$(sed -n -E 's/^  shm: *([^ #]+).*/\1/p' "$GUEST_YAML")
SHM=${SHM:-heft_handoff}
say "guest /etc/heft/heft.yaml: the package's ${ORIGINAL#"$ROOT"}, bus names can<n> → vcan<n> on" \
  "$renamed lines, other changes:$(diff -q <(rename_buses <"$ORIGINAL") "$GUEST_YAML" >/dev/null && echo ' none')"
diff <(rename_buses <"$ORIGINAL") "$GUEST_YAML" | sed 's/^/  ~ /' || true
say "hand-off in shared memory: /dev/shm/$SHM (heftd --shm $SHM)"
cp "$GUEST_YAML" "$ROOT/etc/heft/heft.yaml"

# --- 4. The initramfs -----------------------------------------------------------------------------
mkdir -p "$ROOT/usr/bin" "$ROOT/usr/sbin" "$ROOT/var/log/heft" "$ROOT/run"
cp "$CANPLAYER" "$ROOT/usr/bin/canplayer"
cp "$IP" "$ROOT/usr/sbin/ip"
cp "$STANDIN" "$ROOT/heft/standin"
[ -n "$REPLAYER" ] && cp "$REPLAYER" "$ROOT/heft/can_replay"
cp "$WORK/frames.log" "$ROOT/heft/frames.log"
guest_copy_libs "$ROOT" "$HEFTD" "${PLUGINS[@]}" "$ROOT/usr/bin/canplayer" "$ROOT/usr/sbin/ip" "$ROOT/heft/standin" ${REPLAYER:+"$ROOT/heft/can_replay"}
STANDIN_ARGS="--handoff $SHM --input ${P[input]} --link ${P[link]} --mass ${P[mass]} --tolerance ${P[tolerance]}"
STANDIN_ARGS="$STANDIN_ARGS --load-at ${P[load-at]} --start-file /run/heft-replay-start"
STANDIN_ARGS="$STANDIN_ARGS --done-file /run/heft-replay-done --priority 70 --max-missed ${P[max-missed]}"
[ "${P[require-input]}" = 1 ] && STANDIN_ARGS="$STANDIN_ARGS --require-input"
cat >"$ROOT/heft/params" <<EOF
SHM=$SHM
MAP="$MAP"
PLAYER=${P[player]}
FRAMES=$FRAMES
STANDIN_ARGS="$STANDIN_ARGS --timeout $(awk -v s="$SPAN" 'BEGIN {printf "%.0f", 3 * s + 60}')"
EOF
cat >"$ROOT/init" <<'EOF'
#!/bin/sh
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/usr/bin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/shm /run /tmp /var/lib/heft /var/log/heft
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# What heftd.service's RuntimeDirectory=, StateDirectory= and LogsDirectory= give it under systemd.
mkdir -p /run/heft
up() { cut -d' ' -f1 /proc/uptime; }
. /heft/params
echo "HEFT-PROOF-BOOT $(up) kernel $(uname -r) cpus $(grep -c ^processor /proc/cpuinfo)"
for m in $(cat /modules/order); do insmod /modules/$m.ko || echo "HEFT-QEMU: insmod $m failed"; done
for pair in $MAP; do
  dev=${pair%%=*}
  /usr/sbin/ip link add dev $dev type vcan && /usr/sbin/ip link set $dev mtu 72 && /usr/sbin/ip link set $dev up ||
    echo "HEFT-QEMU: cannot create $dev"
done
# The proof's init runs everything as root: heftd is told that this is meant (--allow-root).
/usr/bin/heftd --config /etc/heft/heft.yaml --shm $SHM --allow-root >/heft/heftd.out 2>&1 &
HEFTD=$!
/heft/standin $STANDIN_ARGS >/heft/standin.out 2>&1 &
STANDIN=$!
n=0
while [ ! -e /dev/shm/$SHM ] && [ $n -lt 600 ] && kill -0 $HEFTD 2>/dev/null; do
  sleep 0.1; n=$((n + 1))
done
sleep 1
echo "HEFT-PROOF: heftd up at $(up) s; replaying $FRAMES frames ($MAP)"
t0=$(up)
if [ "$PLAYER" = canplayer ]; then
  touch /run/heft-replay-start
  /usr/bin/canplayer -I /heft/frames.log $MAP
else # creates the start file at its first frame, after parsing the log
  /heft/can_replay -I /heft/frames.log -S /run/heft-replay-start $MAP
fi
cp_rc=$?
t1=$(up)
touch /run/heft-replay-done
wait $STANDIN
rc=$?
kill -TERM $HEFTD 2>/dev/null
wait $HEFTD
heftd_rc=$?
echo "HEFT-PROOF-REPLAY player=$PLAYER frames=$FRAMES start=$t0 end=$t1 player_rc=$cp_rc heftd_rc=$heftd_rc"
for pair in $MAP; do
  dev=${pair%%=*}
  echo "HEFT-PROOF-LINK $dev $(/usr/sbin/ip -s link show $dev | tr -s ' \n' ' ')"
done
sed 's/^/heftd   | /' /heft/heftd.out
sed 's/^/standin | /' /heft/standin.out
[ -f /var/log/heft/telemetry.csv ] && echo "HEFT-PROOF: telemetry $(wc -l </var/log/heft/telemetry.csv) lines"
[ $heftd_rc -eq 0 ] || [ $rc -ne 0 ] || rc=3
echo "HEFT-QEMU-RESULT $rc"
poweroff -f
EOF
chmod +x "$ROOT/init"
guest_pack "$ROOT" "$WORK/initrd.cpio"

# --- 5. Boot --------------------------------------------------------------------------------------
ACCEL_ARGS=(-accel "${P[accel]}")
[ "${P[accel]}" = kvm ] && ACCEL_ARGS+=(-cpu host)
if [ "${P[accel]}" = tcg ] && [ "${P[icount]}" != off ]; then
  ACCEL_ARGS+=(-icount "shift=${P[icount]},sleep=off")
fi
prepared=$(date +%s.%N)
say "booting $KPKG $KVER under ${P[accel]} (-smp ${P[smp]} -m ${P[memory]}, timeout ${P[timeout]} s), initramfs $(du -m "$WORK/initrd.cpio" | cut -f1) MB"
rc=0
GUEST_APPEND=${P[kernel-args]} guest_boot "$WORK/console.log" "${P[timeout]}" "$WORK/initrd.cpio" "${ACCEL_ARGS[@]}" \
  -smp "${P[smp]}" -m "${P[memory]}" || rc=$?
finished=$(date +%s.%N)
tr -d '\r' <"$WORK/console.log" >"$WORK/guest.log"
sed 's/^/  | /' "$WORK/guest.log"

# --- 6. Summary -----------------------------------------------------------------------------------
field() { sed -n "s/^$1 .*\\b$2=\\([^ ]*\\).*/\\1/p" "$WORK/guest.log" | tail -1; }
result=$(sed -n 's/^HEFT-QEMU-RESULT \([0-9]*\)$/\1/p' "$WORK/guest.log" | tail -1)
boot=$(grep -o 'HEFT-PROOF-BOOT [0-9.]*' "$WORK/guest.log" | cut -d' ' -f2)
t0=$(field HEFT-PROOF-REPLAY start) t1=$(field HEFT-PROOF-REPLAY end)
say "prepare $(awk -v a="$start" -v b="$prepared" 'BEGIN {printf "%.1f", b - a}') s;" \
  "boot + proof + power-off $(awk -v a="$prepared" -v b="$finished" 'BEGIN {printf "%.1f", b - a}') s;" \
  "guest /init reached at ${boot:-?} s of guest uptime"
if [ -n "$t0" ] && [ -n "$t1" ]; then
  say "replay (guest clock, log parsing included): $FRAMES frames, log span $SPAN s, $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') s" \
    "= $(awk -v a="$t0" -v b="$t1" -v n="$FRAMES" 'BEGIN {printf "%.0f", n / (b - a)}') frames/s" \
    "($(awk -v a="$t0" -v b="$t1" -v s="$SPAN" 'BEGIN {printf "%.2f", s / (b - a)}')× real time)"
fi
say "heftd: $(grep -c '^heftd   | .*estimator: .* → ' "$WORK/guest.log" || true) estimator state changes;" \
  "to holding $(grep -c '^heftd   | .*estimator: .* → holding' "$WORK/guest.log" || true) times"
grep -E '^heftd   \| .*(drivers: |bus v?can|channels: |control tick|wake-up|hand-off .*: m =)' \
  "$WORK/guest.log" | sed 's/^heftd   | \[[^]]*\] \[heftd\] \[[a-z]*\] /[qemu-proof] heftd: /' || true
grep '^HEFT-PROOF-LINK' "$WORK/guest.log" | sed 's/^/[qemu-proof] /' || true
grep -o '^REPLAY .*' "$WORK/guest.log" | sed 's/^/[qemu-proof] can_replay: /' || true
say "simulator code in the service's process: $SIM_IN_SERVICE"
proof=$(grep -o 'HEFT-PROOF-RESULT.*' "$WORK/guest.log" | tail -1 || true)
say "${proof:-no stand-in result}"
[ "$rc" -eq 124 ] && die "the guest did not finish within ${P[timeout]} s"
[ -n "$result" ] || die "no result line from the guest (qemu exit $rc): it did not boot or /init failed"
[ "$result" -eq 3 ] && die "heftd did not stop cleanly (see its log above)"
[ "$result" -eq 0 ] || die "the proof failed in the guest (stand-in exit $result)"
say "passed"
