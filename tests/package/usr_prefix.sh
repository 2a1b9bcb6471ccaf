# shellcheck shell=bash
# Sourced by check_packages.sh and qemu_heftd_proof.sh. skip_unless_usr_prefix BUILD_DIR exits 77
# (ctest: skipped), saying why, when the build tree is not configured for /usr, the prefix heft's
# Debian packages are built with (its packages would install /usr/local/bin/heftd).
skip_unless_usr_prefix() {
  local prefix
  prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$1/CMakeCache.txt" 2>/dev/null || true)
  if [ "$prefix" != /usr ]; then
    echo "skipped: $1 has CMAKE_INSTALL_PREFIX=${prefix:-unknown}; Debian packages are built with /usr"
    echo "(bash tools/heft package, or cmake --preset release, which sets it)"
    exit 77
  fi
}
