# shellcheck shell=bash
# The QEMU guest the qemu-labelled tests share (sourced, not run): Debian 12's stock kernel with its
# CAN modules, booted with a busybox initramfs. Used by tests/drivers/qemu/run_vcan_test.sh (the
# SocketCAN transport against a real kernel) and tests/package/qemu_heftd_proof.sh (the installed
# service on vcan).
#
# The caller defines say() and die() (its own message prefix) before calling these:
#   guest_require_qemu TAG         sets QEMU and BUSYBOX; exits 77 (ctest: skipped) when
#                                  qemu-system-x86_64 is missing, dies on a missing host tool
#   guest_kernel CACHE MODULE...   sets KPKG, KVER, KDIR: vmlinuz and the modules (with their
#                                  dependencies, decompressed, in load order: KDIR/modules/order)
#   guest_root ROOT                busybox, the modules, /proc /sys /dev /tmp in a new root
#   guest_copy_libs ROOT FILE...   every shared library ldd lists for FILE, and the loader, at
#                                  the paths FILE was linked against
#   guest_pack ROOT OUT            the root as a newc cpio initramfs
#   guest_boot OUT.log TIMEOUT INITRD [qemu options...]
#                                  boots KDIR/vmlinuz, the console into OUT.log; returns qemu's
#                                  exit status (124: timeout). Kernel command line: GUEST_APPEND
#                                  after 'console=ttyS0 panic=-1 quiet'

guest_require_qemu() { # TAG
  QEMU=$(command -v qemu-system-x86_64 || true)
  if [ -z "$QEMU" ]; then
    echo "[$1] SKIPPED: qemu-system-x86_64 is not installed (bash tools/heft setup installs" \
      "qemu-system-x86)" >&2
    exit 77
  fi
  BUSYBOX=/bin/busybox
  [ -x "$BUSYBOX" ] || die "no $BUSYBOX (install busybox-static)"
  if ldd "$BUSYBOX" >/dev/null 2>&1; then die "$BUSYBOX is dynamically linked (install busybox-static)"; fi
  local tool
  for tool in dpkg-deb cpio ldd apt-get apt-cache flock; do
    command -v "$tool" >/dev/null || die "'$tool' is missing (bash tools/heft setup)"
  done
}

# --- The kernel package: resolve, download once, keep what the guest needs ---------------------
guest_resolve_package() { # prints "name version" of the kernel image linux-image-amd64 depends on
  local pkg
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9].*-amd64$/ {print $2; exit}')
  [ -n "$pkg" ] || return 1
  printf '%s %s\n' "$pkg" "$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')"
}

guest_kernel() { # CACHE MODULE...
  local cache=$1
  shift
  mkdir -p "$cache"
  cache=$(cd "$cache" && pwd)
  # Two tests may prepare the same cache at once (ctest -j): one prepares, the other waits.
  exec {guest_lock}>"$cache/.lock"
  flock "$guest_lock"
  if ! read -r KPKG KVER < <(guest_resolve_package); then
    local cached base
    cached=$(ls "$cache"/linux-image-*-amd64_*_amd64.deb 2>/dev/null | tail -1 || true)
    if [ -z "$cached" ] && [ "$(id -u)" -eq 0 ]; then
      say "apt knows no linux-image-amd64: apt-get update"
      apt-get update -q >/dev/null
      read -r KPKG KVER < <(guest_resolve_package) || die "apt cannot resolve linux-image-amd64"
    elif [ -n "$cached" ]; then
      base=$(basename "$cached" .deb)
      KPKG=${base%%_*} KVER=${base#*_}
      KVER=${KVER%_amd64}
      say "apt cannot resolve linux-image-amd64; using the cached $base"
    else
      die "apt cannot resolve linux-image-amd64 (run apt-get update as root)"
    fi
  fi
  [ -n "${KVER:-}" ] && [ "$KVER" != "(none)" ] || die "no installable version of $KPKG"
  local deb="$cache/${KPKG}_${KVER/:/%3a}_amd64.deb"
  KDIR="$cache/${KPKG}_${KVER}"
  if [ ! -f "$KDIR/ready" ] || [ "$(cat "$KDIR/modules/wanted" 2>/dev/null)" != "$*" ]; then
    if [ ! -f "$deb" ]; then
      say "downloading $KPKG $KVER"
      rm -f "$cache"/linux-image-*.deb
      (cd "$cache" && apt-get download -q -o APT::Sandbox::User=root "$KPKG=$KVER" >/dev/null) ||
        die "apt-get download $KPKG=$KVER failed"
      [ -f "$deb" ] || deb=$(ls "$cache"/"${KPKG}"_*_amd64.deb | head -1)
    fi
    say "unpacking $(basename "$deb")"
    rm -rf "$cache"/linux-image-*/ "$cache/unpack" "$KDIR.tmp"
    dpkg-deb -x "$deb" "$cache/unpack"
    mkdir -p "$KDIR.tmp/modules"
    cp "$cache"/unpack/boot/vmlinuz-* "$KDIR.tmp/vmlinuz"
    local moddir
    moddir=$(ls -d "$cache"/unpack/lib/modules/*/)
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
      local name=$1 file dep done_name
      for done_name in "${order[@]}"; do [ "$done_name" = "$name" ] && return 0; done
      if grep -qE "/${name//[-_]/[-_]}\.ko$" "$moddir/modules.builtin" 2>/dev/null; then return 0; fi
      file=$(find_module "$name")
      [ -n "$file" ] || die "module $name not in $KPKG"
      for dep in $(modinfo_depends "$file"); do visit "$dep"; done
      case "$file" in # busybox insmod loads plain ELF modules: decompress here
        *.ko.xz) xz -dc "$file" >"$KDIR.tmp/modules/$name.ko" ;;
        *.ko.zst) zstd -dc "$file" >"$KDIR.tmp/modules/$name.ko" ;;
        *.ko.gz) gzip -dc "$file" >"$KDIR.tmp/modules/$name.ko" ;;
        *) cp "$file" "$KDIR.tmp/modules/$name.ko" ;;
      esac
      order+=("$name")
    }
    local m
    for m in "$@"; do visit "$m"; done
    printf '%s\n' "${order[@]}" >"$KDIR.tmp/modules/order"
    printf '%s' "$*" >"$KDIR.tmp/modules/wanted"
    rm -rf "$cache/unpack"
    touch "$KDIR.tmp/ready"
    rm -rf "$KDIR"
    mv "$KDIR.tmp" "$KDIR"
  fi
  flock -u "$guest_lock"
  exec {guest_lock}>&-
}

# --- The initramfs --------------------------------------------------------------------------------
guest_root() { # ROOT
  mkdir -p "$1"/{bin,dev,proc,sys,tmp,heft,modules}
  cp "$BUSYBOX" "$1/bin/busybox"
  ln -sf busybox "$1/bin/sh"
  cp "$KDIR"/modules/* "$1/modules/"
}

guest_copy_libs() { # ROOT FILE...: every shared library and the loader, at their linked paths
  local root=$1 file lib
  shift
  for file in "$@"; do
    ldd "$file" >/dev/null 2>&1 || continue # static, or not an ELF object
    ldd "$file" | grep -q 'not found' && die "$file: $(ldd "$file" | grep 'not found' | head -1)"
    ldd "$file" | awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}' | while read -r lib; do
      [ -e "$root$lib" ] && continue
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done
  done
}

guest_pack() { # ROOT OUT
  (cd "$1" && find . | cpio -o -H newc --quiet) >"$2"
}

# --- Boot -----------------------------------------------------------------------------------------
guest_boot() { # OUT.log TIMEOUT INITRD [qemu options...]
  local log=$1 timeout_s=$2 initrd=$3 rc=0
  shift 3
  timeout -k 5 "$timeout_s" "$QEMU" -nographic -no-reboot -nic none "$@" \
    -kernel "$KDIR/vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 quiet${GUEST_APPEND:+ $GUEST_APPEND}" </dev/null >"$log" 2>&1 || rc=$?
  return $rc
}
