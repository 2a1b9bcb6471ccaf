#!/usr/bin/env bash
# Runs a test binary inside a stock Debian 12 kernel booted in QEMU (software emulation), where the
# can, can-raw, can-dev and vcan modules exist: heft's SocketCAN transport against a real kernel.
#
#   run_vcan_test.sh --binary PATH --cache DIR [--timeout S] [-- ARGS for the test binary]
#
# 1. Resolves linux-image-amd64 to the real linux-image-6.1.0-*-amd64 package, `apt-get download`s it
#    into DIR (once; a cached .deb is reused) and keeps vmlinuz and the CAN modules (with their
#    dependencies from each module's own `depends=`) in DIR/<package>_<version>/.
# 2. Builds an initramfs: busybox-static, /init, the modules, the test binary with every shared
#    library ldd lists and the dynamic loader.
# 3. Boots qemu-system-x86_64 -accel tcg; /init loads the modules, runs the binary, prints
#    "HEFT-QEMU-RESULT <exit code>" and powers off. This script prints the guest's output and exits
#    with the binary's result (1 if the marker never came: boot failure, crash, timeout).
# Exit 77 (ctest: skipped) only when qemu-system-x86_64 is not installed.
set -euo pipefail

BINARY="" CACHE="" TIMEOUT=200
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) BINARY=$2; shift 2 ;;
    --cache) CACHE=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --) shift; ARGS=("$@"); break ;;
    *) echo "run_vcan_test.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$BINARY" ] && [ -n "$CACHE" ] || { sed -n '5p' "$0" >&2; exit 2; }
[ -x "$BINARY" ] || { echo "run_vcan_test.sh: no executable '$BINARY'" >&2; exit 2; }

say() { printf '[qemu-vcan] %s\n' "$*"; }
die() { printf '[qemu-vcan] FAILED: %s\n' "$*" >&2; exit 1; }

# shellcheck source=../../qemu/guest.sh
source "$(dirname "$0")/../../qemu/guest.sh"
guest_require_qemu qemu-vcan

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
start=$(date +%s.%N)

# --- 1. The kernel package: resolve, download once, keep what the guest needs -------------------
guest_kernel "$CACHE" can can-raw can-dev vcan
PKG=$KPKG VER=$KVER
say "kernel $PKG $VER; modules: $(tr '\n' ' ' <"$KDIR/modules/order")"

# --- 2. The initramfs -----------------------------------------------------------------------------
WORK=$(mktemp -d "$CACHE/run.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/root"
guest_root "$ROOT"
cp "$BINARY" "$ROOT/heft/test"
guest_copy_libs "$ROOT" "$BINARY"
: >"$ROOT/heft/args"
for a in "${ARGS[@]}"; do printf '%s\n' "$a" >>"$ROOT/heft/args"; done
cat >"$ROOT/init" <<'EOF'
#!/bin/sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
for m in $(cat /modules/order); do
  insmod /modules/$m.ko || echo "HEFT-QEMU: insmod $m failed"
done
echo "HEFT-QEMU: kernel $(uname -r), modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
set --
while IFS= read -r a; do set -- "$@" "$a"; done </heft/args
/heft/test --gtest_color=no "$@"
echo "HEFT-QEMU-RESULT $?"
poweroff -f
EOF
chmod +x "$ROOT/init"
guest_pack "$ROOT" "$WORK/initrd.cpio"

# --- 3. Boot ------------------------------------------------------------------------------------
prepared=$(date +%s.%N)
say "booting under TCG (timeout ${TIMEOUT} s), initramfs $(du -m "$WORK/initrd.cpio" | cut -f1) MB"
rc=0
guest_boot "$WORK/console.log" "$TIMEOUT" "$WORK/initrd.cpio" -accel tcg -m 512 -smp 1 || rc=$?
finished=$(date +%s.%N)
tr -d '\r' <"$WORK/console.log" | sed 's/^/  | /'
result=$(tr -d '\r' <"$WORK/console.log" | sed -n 's/^HEFT-QEMU-RESULT \([0-9]*\)$/\1/p' | tail -1)
say "$(awk -v a="$start" -v b="$prepared" -v c="$finished" \
  'BEGIN {printf "prepare %.1f s, boot + test + power-off %.1f s", b - a, c - b}')"
[ "$rc" -eq 124 ] && die "the guest did not finish within ${TIMEOUT} s"
[ -n "$result" ] || die "no result line from the guest (qemu exit $rc): it did not boot or the test crashed"
[ "$result" -eq 0 ] || die "the test failed in the guest (exit $result)"
say "passed"
