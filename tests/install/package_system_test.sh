#!/usr/bin/env bash
# The package really installed: dpkg -i, then fi_info -p uet finds the
# provider with no variable set, then dpkg --purge, leaving the machine as it
# was.
#
#   tests/install/package_system_test.sh DEB_DIR LIBFABRIC_PROVIDER_DIR
#
# It changes the machine's /usr, so it runs only
#   - as root (else exit 77, skipped, with the reason), and
#   - when neither the package libfabric-uet nor a libuet-fi.so of any other
#     origin is in LIBFABRIC_PROVIDER_DIR (dpkg -i would replace it and the
#     purge remove it: exit 77 with the reason);
# ctest runs it alone (RUN_SERIAL): while it is installed, every libfabric
# program on the machine sees provider uet. The trap purges the package on
# every exit path; the test then checks that the provider file, the man page
# and the package are gone and that LIBFABRIC_PROVIDER_DIR exists exactly when
# it existed before. dpkg -i does not install missing dependencies: the
# build's -dev packages pull in every runtime library the package depends on.
set -u
deb_dir=${1:?usage: package_system_test.sh DEB_DIR LIBFABRIC_PROVIDER_DIR}
fabric_dir=${2:?}
pkg=libfabric-uet
prov=$fabric_dir/libuet-fi.so
man=/usr/share/man/man7/fi_uet.7.gz
if [ "$(id -u)" -ne 0 ]; then
  echo "package_system_test: skipped: dpkg -i needs root; package_test.sh covers the package unpacked"
  exit 77
fi
# pkg_state: dpkg's state of the package (installed, config-files, ...), or
# not-installed when dpkg does not know it.
pkg_state() {
  local s
  s=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) || s=
  s=${s##* }
  echo "${s:-not-installed}"
}
if [ "$(pkg_state)" != not-installed ]; then
  echo "package_system_test: skipped: $pkg is on this machine ($(pkg_state)); not touching it"
  exit 77
fi
if [ -e "$prov" ]; then
  echo "package_system_test: skipped: $prov exists and is not from $pkg; not touching it"
  exit 77
fi
debs=("$deb_dir"/*.deb)
if [ ! -f "${debs[0]}" ]; then
  echo "package_system_test: FAIL: no .deb in $deb_dir (install.package_build)"
  exit 1
fi
had_dir=0
[ -d "$fabric_dir" ] && had_dir=1
tmp=$(mktemp -d)
installed=0
fail=0
check() {  # check TEXT COMMAND...
  local what=$1
  shift
  if "$@"; then echo "package_system_test: ok: $what"; else echo "package_system_test: FAIL: $what"; fail=1; fi
}
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if ((installed)); then
    dpkg --purge "$pkg" >"$tmp/purge" 2>&1 || { cat "$tmp/purge"; rc=1; }
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

installed=1
if ! dpkg -i "${debs[0]}" >"$tmp/install" 2>&1; then
  cat "$tmp/install"
  echo "package_system_test: FAIL: dpkg -i ${debs[0]}"
  exit 1
fi
check "dpkg -i ${debs[0]##*/}: $prov installed" test -f "$prov"
# Slim container images tell dpkg not to unpack man pages (path-exclude).
man_excluded=
while read -r pat; do
  # shellcheck disable=SC2053  # the pattern is a glob on purpose
  [[ "$man" == $pat ]] && man_excluded=$pat
done < <(sed -n 's/^path-exclude[= ]*//p' /etc/dpkg/dpkg.cfg /etc/dpkg/dpkg.cfg.d/* 2>/dev/null)
if [ -n "$man_excluded" ]; then
  echo "package_system_test: $man not checked: dpkg is told path-exclude $man_excluded here"
else
  check "dpkg -i: $man installed" test -f "$man"
fi

# No FI_PROVIDER_PATH, no FI_PROVIDER: libfabric's own provider directory.
env -u FI_PROVIDER_PATH -u FI_PROVIDER LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld" \
  fi_info -p uet >"$tmp/fi_info" 2>&1
rc=$?
check "fi_info -p uet with no variable set (exit $rc)" test "$rc" = 0
check "fi_info lists provider uet" grep -q "provider: uet" "$tmp/fi_info"
loaded=$(cat "$tmp"/ld.* 2>/dev/null | grep -o 'file=[^ ]*libuet-fi\.so .*dynamically loaded' | awk '{print $1}' | sort -u)
check "libfabric loaded $prov and no other libuet-fi.so (${loaded//$'\n'/ })" \
  test "$loaded" = "file=$prov"
[ "$fail" = 0 ] || tail -20 "$tmp/fi_info"

if ! dpkg --purge "$pkg" >"$tmp/purge" 2>&1; then
  cat "$tmp/purge"
  echo "package_system_test: FAIL: dpkg --purge $pkg"
  exit 1
fi
installed=0
check "dpkg --purge: $prov gone" test ! -e "$prov"
check "dpkg --purge: $man gone" test ! -e "$man"
check "dpkg --purge: $pkg not installed again ($(pkg_state))" test "$(pkg_state)" = not-installed
if ((had_dir)); then
  check "$fabric_dir still there, as before" test -d "$fabric_dir"
else
  check "$fabric_dir gone again, as before" test ! -e "$fabric_dir"
fi
exit "$fail"
