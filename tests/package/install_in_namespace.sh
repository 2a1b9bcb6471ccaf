#!/usr/bin/env bash
# install_in_namespace.sh WORK DEBS...: installs, upgrades, removes and purges heft with dpkg in a
# private mount namespace whose /etc, /usr and /var are overlays on the host's, discarded on exit:
# the host's files, users and dpkg database are never touched. Run by check_packages.sh (as root,
# inside `unshare -m`). Checks: postinst creates the user heft and /var/log/heft owned by it, the
# unit is installed but not enabled, the installed simulated robot runs an installed configuration
# from /, an operator's edit of the conffile survives a reinstall, purge removes /etc/heft.
set -u
WORK=$1; shift
fail=0
check() { if eval "$2"; then echo "ok:   install: $1"; else echo "FAIL: install: $1"; fail=1; fi; }
for d in etc usr var; do
  mkdir -p "$WORK/ovl/$d/up" "$WORK/ovl/$d/work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$WORK/ovl/$d/up,workdir=$WORK/ovl/$d/work" "/$d" || exit 77
done
if getent passwd heft >/dev/null; then echo "note: the host has a user heft; user creation not checked"; fi
dpkg -i "$@" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log"; echo "FAIL: dpkg -i"; exit 1; }
check "postinst created the user heft" "getent passwd heft >/dev/null && getent group heft >/dev/null"
# heftd run by hand as user heft (no systemd LogsDirectory=) opens /var/log/heft/heftd.log.
check "postinst made /var/log/heft, owned by heft" \
  "[ -d /var/log/heft ] && [ \"\$(stat -c %U:%G /var/log/heft)\" = heft:heft ]"
check "heftd.service not enabled" "[ ! -e /etc/systemd/system/robot-walking.target.wants/heftd.service ]"
check "dpkg lists /etc/heft/heft.yaml as conffile" "dpkg-query -W -f='\${Conffiles}' heft | grep -q /etc/heft/heft.yaml"
# The installed simulated robot on an installed configuration: the plugin from its installed path
# (heftd's default), the robot file from /usr/share/heft/robots. heft-sim once it exists.
sim=/usr/bin/heft-sim
[ -x $sim ] || sim=/usr/bin/heftd
if [ -f /usr/share/heft/sim/forearm-load.yaml ]; then
  (cd / && timeout 120 $sim --config /usr/share/heft/sim/forearm-load.yaml --duration 0.2 \
     --telemetry "$WORK/telemetry.csv") >"$WORK/sim.log" 2>&1
  check "$sim runs the installed forearm-load.yaml with the installed plugin" \
    "grep -q 'loaded from /usr/lib/.*/heft_estimator_plugin.so' '$WORK/sim.log' || { cat '$WORK/sim.log'; false; }"
fi
echo "# operator's edit" >>/etc/heft/heft.yaml
dpkg -i --force-confold "$1" >>"$WORK/dpkg.log" 2>&1
check "reinstall keeps the operator's heft.yaml" "tail -1 /etc/heft/heft.yaml | grep -q \"operator's edit\""
dpkg -r heft-tools heft-dev heft >>"$WORK/dpkg.log" 2>&1
dpkg -P heft-tools heft-dev heft >>"$WORK/dpkg.log" 2>&1
check "purge removes /etc/heft" "[ ! -e /etc/heft ]"
exit $fail
