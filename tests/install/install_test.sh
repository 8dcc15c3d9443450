#!/usr/bin/env bash
# cmake --install puts the provider, its man page and the tools where
# cmake/install.cmake says, and nothing else; the installed provider works.
#
#   tests/install/install_test.sh BUILD_DIR PROVIDER_DIR BINDIR MANDIR TOOL...
#
# PROVIDER_DIR, BINDIR, MANDIR: the install destinations (UET_PROVIDER_DIR,
# CMAKE_INSTALL_BINDIR, CMAKE_INSTALL_MANDIR; relative to the prefix unless
# absolute); TOOL...: the programs installed into BINDIR.
#
# 1. DESTDIR=TMP cmake --install BUILD_DIR --prefix /opt/uet-install-test: the
#    files under TMP are exactly libuet-fi.so, fi_uet.7.gz and the tools (no
#    test binary, nothing else); none has an RPATH/RUNPATH (all they link is
#    in the system's library path).
# 2. The installed uet-decode decodes the sample capture.
# 3. fi_info -p uet and a loopback fi_pingpong -p uet -e rdm -c (both through
#    scripts/pingpong.sh, which runs server and client under their own PIDs
#    and stops them by those) with FI_PROVIDER_PATH at the installed provider
#    directory and nothing else.
# Everything goes into a temporary directory removed on exit. Exit 0 when
# every check passes; each failure is printed.
set -u
build=${1:?usage: install_test.sh BUILD_DIR PROVIDER_DIR BINDIR MANDIR TOOL...}
prov_rel=${2:?}
bin_rel=${3:?}
man_rel=${4:?}
shift 4
tools=("$@")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
prefix=/opt/uet-install-test
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check TEXT COMMAND...
  local what=$1
  shift
  if "$@"; then echo "install_test: ok: $what"; else echo "install_test: FAIL: $what"; fail=1; fi
}
under() {  # under DEST: where DEST lands below DESTDIR
  case "$1" in
    /*) echo "$tmp/root$1" ;;
    *) echo "$tmp/root$prefix/$1" ;;
  esac
}

# 1. Install.
if ! DESTDIR="$tmp/root" cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  echo "install_test: FAIL: cmake --install $build"
  exit 1
fi
cat "$tmp/install.log"
prov_dir=$(under "$prov_rel")
expected=("$prov_dir/libuet-fi.so" "$(under "$man_rel")/man7/fi_uet.7.gz")
for t in "${tools[@]}"; do expected+=("$(under "$bin_rel")/$t"); done
printf '%s\n' "${expected[@]}" | sort >"$tmp/expected"
find "$tmp/root" \( -type f -o -type l \) | sort >"$tmp/found"
check "the installed files are exactly the ${#expected[@]} expected ones" \
  cmp -s "$tmp/expected" "$tmp/found"
if ! cmp -s "$tmp/expected" "$tmp/found"; then
  echo "install_test: expected (-) against installed (+):"
  diff "$tmp/expected" "$tmp/found" | sed -n 's/^[<>]/&/p'
fi
rpaths=$(for f in "${expected[@]}"; do readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH'; done)
check "no installed file has an RPATH or RUNPATH${rpaths:+: $rpaths}" test -z "$rpaths"
check "fi_uet.7.gz is a man page" sh -c "gzip -dc '${expected[1]}' | grep -q '^\.TH \"fi_uet\" \"7\"'"

# 2. An installed tool runs.
decode=$(under "$bin_rel")/uet-decode
if [ -x "$decode" ]; then
  check "installed uet-decode decodes tests/data/sample.pcap" \
    sh -c "'$decode' '$src/tests/data/sample.pcap' >/dev/null"
fi

# 3. The installed provider, found through FI_PROVIDER_PATH only.
# LD_DEBUG=files: the dynamic loader names every file libfabric dlopens
# (libfabric 1.17 logs no provider path).
env -u FI_PROVIDER FI_PROVIDER_PATH="$prov_dir" LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld" \
  fi_info -p uet >"$tmp/fi_info" 2>&1
rc=$?
check "fi_info -p uet with FI_PROVIDER_PATH=<installed dir> (exit $rc)" test "$rc" = 0
check "fi_info lists provider uet" grep -q "provider: uet" "$tmp/fi_info"
loaded=$(cat "$tmp"/ld.* 2>/dev/null | grep -o 'file=[^ ]*libuet-fi\.so .*dynamically loaded' | awk '{print $1}' | sort -u)
check "libfabric loaded $prov_dir/libuet-fi.so and no other libuet-fi.so (${loaded//$'\n'/ })" \
  test "$loaded" = "file=$prov_dir/libuet-fi.so"
[ "$fail" = 0 ] || tail -20 "$tmp/fi_info"

UET_PINGPONG_LOOPBACK=1 "$src/scripts/pingpong.sh" "$prov_dir" -e rdm -I 10 -S all -c \
  >"$tmp/pingpong" 2>&1
rc=$?
check "fi_pingpong -p uet -e rdm -S all -c on loopback from the installed provider (exit $rc)" \
  test "$rc" = 0
if [ "$rc" = 0 ]; then
  grep -E '^pingpong:|^bytes|^1m ' "$tmp/pingpong"
else
  tail -30 "$tmp/pingpong"
fi
exit "$fail"
