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

QEMU=$(command -v qemu-system-x86_64 || true)
if [ -z "$QEMU" ]; then
  echo "[qemu-vcan] SKIPPED: qemu-system-x86_64 is not installed (bash tools/heft setup installs" \
    "qemu-system-x86)" >&2
  exit 77
fi
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || die "no $BUSYBOX (install busybox-static)"
if ldd "$BUSYBOX" >/dev/null 2>&1; then die "$BUSYBOX is dynamically linked (install busybox-static)"; fi
for tool in dpkg-deb cpio ldd apt-get apt-cache; do
  command -v "$tool" >/dev/null || die "'$tool' is missing (bash tools/heft setup)"
done

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
start=$(date +%s.%N)

# --- 1. The kernel package: resolve, download once, keep what the guest needs -------------------
resolve_package() { # prints "name version" of the kernel image linux-image-amd64 depends on
  local pkg
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9].*-amd64$/ {print $2; exit}')
  [ -n "$pkg" ] || return 1
  printf '%s %s\n' "$pkg" "$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')"
}
if ! read -r PKG VER < <(resolve_package); then
  cached=$(ls "$CACHE"/linux-image-*-amd64_*_amd64.deb 2>/dev/null | tail -1 || true)
  if [ -z "$cached" ] && [ "$(id -u)" -eq 0 ]; then
    say "apt knows no linux-image-amd64: apt-get update"
    apt-get update -q >/dev/null
    read -r PKG VER < <(resolve_package) || die "apt cannot resolve linux-image-amd64"
  elif [ -n "$cached" ]; then
    base=$(basename "$cached" .deb)
    PKG=${base%%_*} VER=${base#*_}; VER=${VER%_amd64}
    say "apt cannot resolve linux-image-amd64; using the cached $base"
  else
    die "apt cannot resolve linux-image-amd64 (run apt-get update as root)"
  fi
fi
[ -n "${VER:-}" ] && [ "$VER" != "(none)" ] || die "no installable version of $PKG"
DEB="$CACHE/${PKG}_${VER/:/%3a}_amd64.deb"
KDIR="$CACHE/${PKG}_${VER}"
if [ ! -f "$KDIR/ready" ]; then
  if [ ! -f "$DEB" ]; then
    say "downloading $PKG $VER"
    rm -f "$CACHE"/linux-image-*.deb
    (cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "$PKG=$VER" >/dev/null) ||
      die "apt-get download $PKG=$VER failed"
    [ -f "$DEB" ] || DEB=$(ls "$CACHE"/"${PKG}"_*_amd64.deb | head -1)
  fi
  say "unpacking $(basename "$DEB")"
  rm -rf "$CACHE"/linux-image-*/ "$CACHE/unpack"
  dpkg-deb -x "$DEB" "$CACHE/unpack"
  mkdir -p "$KDIR.tmp/modules"
  cp "$CACHE"/unpack/boot/vmlinuz-* "$KDIR.tmp/vmlinuz"
  moddir=$(ls -d "$CACHE"/unpack/lib/modules/*/)
  # Module file by module name (names use '-' or '_' interchangeably).
  find_module() { find "$moddir/kernel" -name "$1.ko*" -o -name "${1//-/_}.ko*" -o -name "${1//_/-}.ko*" | head -1; }
  modinfo_depends() { # depends= of a (possibly compressed) module
    case "$1" in
      *.ko.xz) xz -dc "$1" ;;
      *.ko.zst) zstd -dc "$1" ;;
      *.ko.gz) gzip -dc "$1" ;;
      *) cat "$1" ;;
    esac | tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '
  }
  order=()
  visit() { # depth first: dependencies before the module
    local name=$1 file dep
    for done_name in "${order[@]}"; do [ "$done_name" = "$name" ] && return 0; done
    if grep -qE "/${name//[-_]/[-_]}\.ko$" "$moddir/modules.builtin" 2>/dev/null; then return 0; fi
    file=$(find_module "$name")
    [ -n "$file" ] || die "module $name not in $PKG"
    for dep in $(modinfo_depends "$file"); do visit "$dep"; done
    case "$file" in # busybox insmod loads plain ELF modules: decompress here
      *.ko.xz) xz -dc "$file" >"$KDIR.tmp/modules/$name.ko" ;;
      *.ko.zst) zstd -dc "$file" >"$KDIR.tmp/modules/$name.ko" ;;
      *.ko.gz) gzip -dc "$file" >"$KDIR.tmp/modules/$name.ko" ;;
      *) cp "$file" "$KDIR.tmp/modules/$name.ko" ;;
    esac
    order+=("$name")
  }
  for m in can can-raw can-dev vcan; do visit "$m"; done
  printf '%s\n' "${order[@]}" >"$KDIR.tmp/modules/order"
  rm -rf "$CACHE/unpack"
  touch "$KDIR.tmp/ready"
  mv "$KDIR.tmp" "$KDIR"
fi
say "kernel $PKG $VER; modules: $(tr '\n' ' ' <"$KDIR/modules/order")"

# --- 2. The initramfs -----------------------------------------------------------------------------
WORK=$(mktemp -d "$CACHE/run.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/root"
mkdir -p "$ROOT"/{bin,dev,proc,sys,tmp,heft,modules}
cp "$BUSYBOX" "$ROOT/bin/busybox"
ln -s busybox "$ROOT/bin/sh"
cp "$KDIR"/modules/* "$ROOT/modules/"
cp "$BINARY" "$ROOT/heft/test"
# Every shared library and the loader, at the paths the binary was linked against.
ldd "$BINARY" | awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}' | while read -r lib; do
  mkdir -p "$ROOT$(dirname "$lib")"
  cp -L "$lib" "$ROOT$lib"
done
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
(cd "$ROOT" && find . | cpio -o -H newc --quiet) >"$WORK/initrd.cpio"

# --- 3. Boot ------------------------------------------------------------------------------------
prepared=$(date +%s.%N)
say "booting under TCG (timeout ${TIMEOUT} s), initramfs $(du -m "$WORK/initrd.cpio" | cut -f1) MB"
rc=0
timeout -k 5 "$TIMEOUT" "$QEMU" -accel tcg -m 512 -smp 1 -nographic -no-reboot -nic none \
  -kernel "$KDIR/vmlinuz" -initrd "$WORK/initrd.cpio" \
  -append 'console=ttyS0 panic=-1 quiet' </dev/null >"$WORK/console.log" 2>&1 || rc=$?
finished=$(date +%s.%N)
tr -d '\r' <"$WORK/console.log" | sed 's/^/  | /'
result=$(tr -d '\r' <"$WORK/console.log" | sed -n 's/^HEFT-QEMU-RESULT \([0-9]*\)$/\1/p' | tail -1)
say "$(awk -v a="$start" -v b="$prepared" -v c="$finished" \
  'BEGIN {printf "prepare %.1f s, boot + test + power-off %.1f s", b - a, c - b}')"
[ "$rc" -eq 124 ] && die "the guest did not finish within ${TIMEOUT} s"
[ -n "$result" ] || die "no result line from the guest (qemu exit $rc): it did not boot or the test crashed"
[ "$result" -eq 0 ] || die "the test failed in the guest (exit $result)"
say "passed"
