#!/usr/bin/env bash
# check_packages.sh BUILD_DIR SOURCE_DIR: builds heft's Debian packages from a built tree (cpack into
# a scratch directory), unpacks them into a scratch root and checks them as installed:
#   1. file names (heft_0.1.0-1_amd64.deb), control fields, conffiles, maintainer scripts;
#   2. layout: every path the unit and the installed configurations name exists in the root;
#   3. systemd-analyze verify --root (ExecStart must exist there) and security --offline with
#      exposure <= 1.5 on the installed unit, and the udev rule for /dev/cpu_dma_latency;
#   4. lintian (when installed): no error tags;
#   5. consumers of heft-dev: the C framework example with pkg-config heft-hal, a C++ project with
#      find_package(heft) → heft::hal, and the installed examples' project (find_package(heft) →
#      heft::estimator, the plugin's path) built and run: the estimator through TickInput, and a
#      framework hosting the installed plugin in its own 333 Hz loop; all from the scratch root only;
#   6. the installed heftd starts (--help) and defaults to the installed plugin;
#   7. as root with mount namespaces: dpkg install/reinstall/purge in a throwaway overlay
#      (install_in_namespace.sh): the user heft, the conffile kept, the unit not enabled.
# Exit 0 pass, 1 fail (every failed check is printed), 77 skipped (tree not configured for /usr).
set -uo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
WORK=$BUILD/package-check
ROOT=$WORK/root
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok:   $*"; }
need() { [ -e "$ROOT$1" ] && ok "$2: $1" || fail "$2 names $1, which no package installs"; }

# shellcheck source=usr_prefix.sh
source "$(dirname "$0")/usr_prefix.sh"
skip_unless_usr_prefix "$BUILD"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
release=$(sed -n 's/^HEFT_DEB_RELEASE:STRING=//p' "$BUILD/CMakeCache.txt")
arch=$(dpkg --print-architecture)

rm -rf "$WORK" && mkdir -p "$WORK/debs" "$ROOT"
echo "== cpack"
if ! cpack --config "$BUILD/CPackConfig.cmake" -B "$WORK/debs" >"$WORK/cpack.log" 2>&1; then
  cat "$WORK/cpack.log"
  echo "FAIL: cpack (are the packaged targets built? cmake --build --target heft_packaged_targets)"
  exit 1
fi
declare -A deb=([heft]="heft_${version}-${release}_${arch}.deb"
                [heft-tools]="heft-tools_${version}-${release}_${arch}.deb"
                [heft-dev]="heft-dev_${version}-${release}_${arch}.deb")
for p in heft heft-tools heft-dev; do
  f=$WORK/debs/${deb[$p]}
  if [ -f "$f" ]; then ok "package file ${deb[$p]}"; else fail "no ${deb[$p]} (cpack made: $(cd "$WORK/debs" && ls ./*.deb))"; continue; fi
  dpkg-deb -x "$f" "$ROOT"
  dpkg-deb -e "$f" "$WORK/control-$p"
  for field in Package Version Architecture Maintainer Section Priority Description; do
    [ -n "$(dpkg-deb -f "$f" "$field")" ] || fail "$p: no $field field"
  done
  dpkg-deb -f "$f" Maintainer | grep -qE '<[^@>]+@[^>]+>' || fail "$p: Maintainer has no email"
  [ "$(dpkg-deb -f "$f" Description | wc -l)" -ge 3 ] || fail "$p: Description has no long text"
  [ -f "$ROOT/usr/share/doc/$p/copyright" ] || fail "$p: no /usr/share/doc/$p/copyright"
done
[ -d "$WORK/control-heft" ] || { echo "FAIL: the heft package is missing; nothing more to check"; exit 1; }

echo "== control archive of heft"
depends=$(dpkg-deb -f "$WORK/debs/${deb[heft]}" Depends)
for lib in libc6 libstdc++6; do
  [[ "$depends" == *"$lib "* ]] && ok "heft Depends on $lib (computed)" || fail "heft Depends lacks $lib: $depends"
done
# The robot's service must not need MuJoCo once the simulated robot is its own program (heft-sim).
if [ -x "$ROOT/usr/bin/heft-sim" ]; then
  [[ "$depends" != *libmujoco* ]] && ok "heft does not depend on MuJoCo" || fail "heft depends on MuJoCo: $depends"
else
  echo "note: no heft-sim yet (the simulator is still inside heftd): heft's Depends include MuJoCo"
fi
grep -qx /etc/heft/heft.yaml "$WORK/control-heft/conffiles" && ok "conffile /etc/heft/heft.yaml" ||
  fail "/etc/heft/heft.yaml is not a conffile"
while read -r conf; do need "$conf" "conffiles"; done <"$WORK/control-heft/conffiles"
for s in postinst prerm postrm; do
  [ -x "$WORK/control-heft/$s" ] || fail "heft has no executable $s"
  sh -n "$WORK/control-heft/$s" || fail "$s: shell syntax"
  # A robot's service is never started, restarted or enabled by the package.
  if grep -vE '^\s*#' "$WORK/control-heft/$s" | grep -qE 'systemctl[^|;&]*(start|restart|enable)|deb-systemd-invoke[^|;&]*(start|restart)|deb-systemd-helper[^|;&]*enable'; then
    fail "$s starts or enables a unit"
  fi
done
grep -q 'systemd-sysusers heft.conf' "$WORK/control-heft/postinst" && grep -q 'adduser --system' "$WORK/control-heft/postinst" &&
  ok "postinst creates the user (sysusers, adduser fallback)" || fail "postinst does not create the user heft"
for s in postinst postrm; do
  grep -q 'daemon-reload' "$WORK/control-heft/$s" && ok "$s reloads systemd" || fail "$s: no daemon-reload"
done

echo "== layout (paths relative to the scratch root)"
unit=$ROOT/lib/systemd/system/heftd.service
[ -f "$unit" ] || unit=$ROOT/usr/lib/systemd/system/heftd.service
[ -f "$unit" ] && ok "unit ${unit#"$ROOT"}" || { fail "no heftd.service in the package"; unit=/dev/null; }
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
heftd_path=${exec_start%% *}
[ -x "$ROOT$heftd_path" ] && ok "ExecStart $heftd_path is executable" || fail "ExecStart $heftd_path not in the package"
config=$(sed -n 's/.*--config \([^ ]*\).*/\1/p' <<<"$exec_start")
need "$config" "ExecStart --config"
for t in $(sed -n 's/^\(WantedBy\|After\|Wants\)=//p' "$unit" | tr ' ' '\n' | grep '^robot-' | sort -u); do
  need "$(dirname "${unit#"$ROOT"}")/$t" "the unit's $t"
done
grep -q '^BindsTo=' "$unit" && fail "the unit binds to a target (walking stops must not stop heftd)"
grep -q '^StateDirectory=heft' "$unit" || fail "WorkingDirectory /var/lib/heft needs StateDirectory=heft"
grep -q '^RuntimeDirectory=heft' "$unit" || fail "/run/heft (command socket) needs RuntimeDirectory=heft"
grep -q '^RemoveIPC=no' "$unit" || fail "the framework input segment needs RemoveIPC=no"
grep -q '^RestartPreventExitStatus=78' "$unit" ||
  fail "a refused configuration (heftd exits 78) must not restart-loop: RestartPreventExitStatus=78"
need /usr/lib/sysusers.d/heft.conf "User=heft (sysusers)"
need /usr/lib/tmpfiles.d/heft.conf "/var/log/heft for heftd run by hand"
grep -qx 'd /var/log/heft 0755 heft heft -' "$ROOT/usr/lib/tmpfiles.d/heft.conf" 2>/dev/null &&
  ok "tmpfiles.d makes /var/log/heft, owned by heft" || fail "tmpfiles.d/heft.conf does not make /var/log/heft"
# Every input file an installed configuration names (urdf, parameters, plugin) exists in the root;
# outputs (telemetry, log_file, candump) go to /var/log/heft (LogsDirectory=heft; tmpfiles.d by hand).
for cfg in "$ROOT"/etc/heft/*.yaml "$ROOT"/usr/share/heft/sim/*.yaml; do
  [ -f "$cfg" ] || continue
  while read -r key path; do
    case $path in
      /*) need "$path" "${cfg#"$ROOT"} $key" ;;
      *) fail "${cfg#"$ROOT"} $key '$path' is relative (the installed configurations name absolute paths)" ;;
    esac
  done < <(sed -n 's/^[ -]*\(urdf\|parameters\|plugin\): *\([^ #]*\).*/\1 \2/p' "$cfg")
done
for cfg in "$ROOT"/etc/heft/*.yaml; do
  while read -r key path; do
    [[ "$path" == /var/log/heft/* ]] && ok "${cfg#"$ROOT"} $key in /var/log/heft (LogsDirectory=heft)" ||
      fail "${cfg#"$ROOT"} $key '$path' is not under /var/log/heft (LogsDirectory=heft)"
  # `key: PATH` or `key: {path: PATH, ...}` (telemetry and candump rotate: config/README.md).
  done < <(sed -n -e 's/^ *\(telemetry\|log_file\|candump\): *{ *path: *\([^ ,}#]*\).*/\1 \2/p' \
                  -e 's/^ *\(telemetry\|log_file\|candump\): *\([^ {#][^ #]*\).*/\1 \2/p' "$cfg")
done
[ -f "$ROOT/etc/heft/heft.yaml" ] || fail "no /etc/heft/heft.yaml"
if [ -x "$ROOT/usr/bin/heftd" ]; then
  plugin=$(strings -n 8 "$ROOT/usr/bin/heftd" | grep -x '/.*/heft_estimator_plugin\.so' | head -1)
  if [ -n "$plugin" ]; then need "$plugin" "heftd's default plugin"; else fail "heftd names no plugin path"; fi
fi

echo "== systemd-analyze (systemd $(systemctl --version | awk 'NR==1{print $2}'))"
# verify --root resolves ExecStart inside the root; the units it starts after (sysinit.target,
# ...) come from the host.
sysroot=$WORK/sysroot
cp -a "$ROOT" "$sysroot" && mkdir -p "$sysroot/usr/lib/systemd" && cp -a /usr/lib/systemd/system "$sysroot/usr/lib/systemd/"
out=$(SYSTEMD_LOG_LEVEL=info systemd-analyze verify --root="$sysroot" heftd.service 2>&1); rc=$?
[ -n "$out" ] && echo "$out"
if [ $rc -ne 0 ] || grep -qiE 'error|unknown|ignoring|warning|not executable' <<<"$out"; then
  fail "systemd-analyze verify --root of the installed unit"
else
  ok "systemd-analyze verify --root: installed unit"
fi
# And that verify does see a missing ExecStart (what makes the check above able to fail).
rm "$sysroot$heftd_path" 2>/dev/null
SYSTEMD_LOG_LEVEL=info systemd-analyze verify --root="$sysroot" heftd.service >/dev/null 2>&1 &&
  fail "systemd-analyze verify passes without heftd: it does not check ExecStart here"
exposure=$(systemd-analyze security --offline=yes --root="$ROOT" heftd.service 2>&1 | sed -n 's/.*Overall exposure level for heftd.service: \([0-9.]*\).*/\1/p')
if systemd-analyze security --offline=yes --root="$ROOT" --threshold=15 heftd.service >/dev/null 2>&1; then
  ok "systemd-analyze security exposure $exposure <= 1.5"
else
  fail "systemd-analyze security exposure ${exposure:-?} > 1.5"
fi
grep -qs 'KERNEL=="cpu_dma_latency", GROUP="heft"' "$ROOT"/lib/udev/rules.d/60-heft.rules "$ROOT"/usr/lib/udev/rules.d/60-heft.rules &&
  ok "udev rule: group heft may hold /dev/cpu_dma_latency" || fail "no udev rule 60-heft.rules for /dev/cpu_dma_latency"

echo "== lintian"
if command -v lintian >/dev/null; then
  lintian --display-info --pedantic "$WORK"/debs/*.deb 2>&1 | grep -v '^running with root' | tee "$WORK/lintian.txt"
  grep -q '^E:' "$WORK/lintian.txt" && fail "lintian errors" || ok "lintian: no errors"
else
  echo "note: lintian not installed, not run"
fi

echo "== consumers of heft-dev (scratch root only)"
mkdir -p "$WORK/c"
cflags=$(PKG_CONFIG_SYSROOT_DIR=$ROOT PKG_CONFIG_LIBDIR=$ROOT/usr/share/pkgconfig pkg-config --cflags heft-hal) &&
  [[ "$cflags" == *"-I$ROOT/usr/include"* ]] && ok "pkg-config heft-hal: $cflags" || fail "pkg-config heft-hal: '$cflags'"
if cc -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags "$ROOT/usr/share/doc/heft-dev/examples/framework_example.c" \
     -o "$WORK/c/framework_example" -lrt -lm; then
  # No heftd runs: the example must say so and exit 1 (it runs, and reads the installed layout).
  "$WORK/c/framework_example" --input heft_package_check_absent --seconds 0.1 >/dev/null 2>&1
  [ $? -eq 1 ] && ok "framework example builds from heft-dev and runs" || fail "framework example: unexpected exit status"
else
  fail "framework example does not build against heft-dev"
fi
if cmake -S "$SRC/tests/package/consumer" -B "$WORK/cxx" -DCMAKE_PREFIX_PATH="$ROOT/usr" \
     -DHEFT_EXPECTED_ROOT="$ROOT" -DCMAKE_BUILD_TYPE=Release >"$WORK/cxx.log" 2>&1 &&
   cmake --build "$WORK/cxx" >>"$WORK/cxx.log" 2>&1 && "$WORK/cxx/consumer"; then
  ok "C++ consumer: find_package(heft) → heft::hal"
else
  cat "$WORK/cxx.log"; fail "C++ consumer with find_package(heft)"
fi

# The installed examples' own CMake project (tools/examples/CMakeLists.txt), built against the root
# and run: heft::estimator through TickInput on the installed URDF, and the installed plugin hosted
# in the example framework's loop on the installed configuration (its paths moved into the root).
examples=$ROOT/usr/share/doc/heft-dev/examples
if cmake -S "$examples" -B "$WORK/examples" -DCMAKE_PREFIX_PATH="$ROOT/usr" -DCMAKE_BUILD_TYPE=Release \
     >"$WORK/examples.log" 2>&1 && cmake --build "$WORK/examples" -j1 >>"$WORK/examples.log" 2>&1; then
  heft_dir=$(sed -n 's/^heft_DIR:PATH=//p' "$WORK/examples/CMakeCache.txt")
  [[ "$heft_dir" == "$ROOT"/* ]] && ok "examples build from heft-dev (heft_DIR $heft_dir)" ||
    fail "the examples found heft in '$heft_dir', not in the root under test"
  if "$WORK/examples/heft-estimator-example" >"$WORK/estimator-example.txt" 2>&1; then
    ok "estimator example: $(tail -1 "$WORK/estimator-example.txt")"
  else
    cat "$WORK/estimator-example.txt"; fail "estimator example (heft::estimator through TickInput)"
  fi
  sed "s#^\( *urdf: *\)/#\1$ROOT/#" "$ROOT/etc/heft/heft.yaml" >"$WORK/examples/heft.yaml"
  if "$WORK/examples/heft-plugin-host-example" --config "$WORK/examples/heft.yaml" --seconds 3 \
       >"$WORK/plugin-host-example.txt" 2>&1; then
    ok "plugin host example: $(sed -n 2p "$WORK/plugin-host-example.txt")"
  else
    cat "$WORK/plugin-host-example.txt"; fail "plugin host example (the installed plugin in a framework's loop)"
  fi
else
  cat "$WORK/examples.log"; fail "the installed examples do not build against heft-dev"
fi

echo "== dpkg install, reinstall, purge (throwaway mount namespace)"
if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
  unshare -m --propagation private bash "$SRC/tests/package/install_in_namespace.sh" "$WORK" \
    "$WORK/debs/${deb[heft]}" "$WORK/debs/${deb[heft-dev]}" "$WORK/debs/${deb[heft-tools]}"
  rc=$?
  rm -rf "$WORK/ovl"
  case $rc in 0) ;; 77) echo "note: no overlay mounts here; dpkg install not checked" ;; *) fail "dpkg install checks" ;; esac
else
  echo "note: not root or no mount namespaces; dpkg install not checked"
fi

echo "== installed programs start"
if "$ROOT/usr/bin/heftd" --help | grep -q '^usage: heftd'; then ok "heftd --help"; else fail "installed heftd does not start"; fi
"$ROOT/usr/bin/heftctl" --help | grep -q '^usage: heftctl' && ok "heftctl --help" || fail "installed heftctl does not start"

echo "== contents"
for p in heft heft-tools heft-dev; do
  [ -f "$WORK/debs/${deb[$p]}" ] && { echo "-- ${deb[$p]}"; dpkg-deb -c "$WORK/debs/${deb[$p]}" | awk '$1 !~ /^d/ {print "   " $6}'; }
done
if [ $failures -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all package checks passed"
