#!/usr/bin/env bash
# The Debian package that package_build.sh made: its metadata, its files, its
# dependencies, and the provider unpacked from it working.
#
#   tests/install/package_test.sh DEB_DIR LIBFABRIC_PROVIDER_DIR VERSION LIBFABRIC_VERSION TOOL...
#
# LIBFABRIC_PROVIDER_DIR: where the system libfabric loads providers from
# (/usr/lib/x86_64-linux-gnu/libfabric on Debian 12); VERSION: the project's;
# LIBFABRIC_VERSION: pkg-config's version of the libfabric built against;
# TOOL...: the programs cmake --install puts into bin (uet-mpi-bench among
# them stays out of the package).
#
# 1. dpkg-deb -f: Package libfabric-uet, Version VERSION-1, this machine's
#    architecture; Depends names libfabric1 (>= LIBFABRIC_VERSION), liburing2,
#    libssl3, an abseil runtime package and no MPI package.
# 2. dpkg-deb -c: the files are exactly LIBFABRIC_PROVIDER_DIR/libuet-fi.so,
#    /usr/share/man/man7/fi_uet.7.gz and /usr/bin/TOOL (no test binary).
# 3. dpkg -x into a temporary root: every library each ELF file needs comes
#    from a package in Depends (the loader's path for it, dpkg -S); the man
#    page is one; FI_PROVIDER_PATH at the unpacked provider directory: fi_info
#    -p uet lists uet, loaded from there.
# Exit 0 when every check passes; each failure is printed. Changes nothing
# outside its temporary directory.
set -u
deb_dir=${1:?usage: package_test.sh DEB_DIR LIBFABRIC_PROVIDER_DIR VERSION LIBFABRIC_VERSION TOOL...}
fabric_dir=${2:?}
version=${3:?}
fabric_version=${4:?}
shift 4
tools=()
for t in "$@"; do [ "$t" = uet-mpi-bench ] || tools+=("$t"); done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check TEXT COMMAND...
  local what=$1
  shift
  if "$@"; then echo "package_test: ok: $what"; else echo "package_test: FAIL: $what"; fail=1; fi
}
PATH=$PATH:/usr/sbin:/sbin  # ldconfig, outside a user's PATH on Debian
for tool in dpkg-deb dpkg readelf ldconfig; do
  if ! command -v "$tool" >/dev/null; then
    echo "package_test: FAIL: $tool is missing (scripts/install-deps.sh)"
    exit 1
  fi
done
debs=("$deb_dir"/*.deb)
if [ ! -f "${debs[0]}" ]; then
  echo "package_test: FAIL: no .deb in $deb_dir (install.package_build)"
  exit 1
fi
deb=${debs[0]}

# 1. Metadata.
dpkg-deb -I "$deb"
field() { dpkg-deb -f "$deb" "$1"; }
check "Package: libfabric-uet ($(field Package))" test "$(field Package)" = libfabric-uet
check "Version: $version-1 ($(field Version))" test "$(field Version)" = "$version-1"
arch=$(dpkg --print-architecture)
check "Architecture: $arch ($(field Architecture))" test "$(field Architecture)" = "$arch"
# Depends as one package name per line (alternatives split too).
field Depends | tr ',|' '\n' | sed 's/([^)]*)//; s/^ *//; s/ *$//' | sort -u >"$tmp/depends"
for p in libfabric1 liburing2 libssl3 libc6 libstdc++6; do
  check "Depends names $p" grep -qx "$p" "$tmp/depends"
done
check "Depends asks for libfabric1 (>= $fabric_version), the libfabric built against" \
  sh -c "dpkg-deb -f '$deb' Depends | grep -qF 'libfabric1 (>= $fabric_version)'"
check "Depends names an abseil runtime package" grep -qE '^libabsl[0-9]+$' "$tmp/depends"
check "Depends names no MPI package" sh -c "! grep -qi mpi '$tmp/depends'"

# 2. Files.
{
  echo ".$fabric_dir/libuet-fi.so"
  echo ./usr/share/man/man7/fi_uet.7.gz
  for t in "${tools[@]}"; do echo "./usr/bin/$t"; done
} | sort >"$tmp/expected"
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sort >"$tmp/files"
check "the package's files are exactly the $(wc -l <"$tmp/expected") expected ones" \
  cmp -s "$tmp/expected" "$tmp/files"
cmp -s "$tmp/expected" "$tmp/files" || diff "$tmp/expected" "$tmp/files"

# 3. Unpacked.
dpkg -x "$deb" "$tmp/root"
# The libraries the package's files need, once each; for each, the loader's
# path (ldconfig), its real path and both sides of the /usr merge, asked of
# dpkg -S in one call (0.3 s a call).
sonames=$(while read -r f; do
  readelf -d "$tmp/root/${f#./}" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
done <"$tmp/files" | sort -u)
dep_fail=0
declare -A cand
paths=()
for so in $sonames; do
  path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64|x32|AArch64|64bit/ {print $NF; exit}')
  [ -n "$path" ] || path=$(ldconfig -p | awk -v so="$so" '$1 == so {print $NF; exit}')
  if [ -z "$path" ]; then
    check "$so (needed by the package's files) is on this machine" false
    dep_fail=1
    continue
  fi
  real=$(readlink -f "$path")
  cand[$so]="$path $real /usr$path ${path#/usr} /usr$real ${real#/usr}"
  read -r -a c <<<"${cand[$so]}"
  paths+=("${c[@]}")
done
((${#paths[@]})) && dpkg -S "${paths[@]}" >"$tmp/owners" 2>/dev/null
for so in "${!cand[@]}"; do
  owner=
  for p in ${cand[$so]}; do
    owner=$(awk -v p="$p" -F': ' '$2 == p {split($1, a, /[:,]/); print a[1]; exit}' "$tmp/owners")
    [ -z "$owner" ] || break
  done
  if [ -z "$owner" ]; then
    check "$so (${cand[$so]%% *}) belongs to an installed package" false
    dep_fail=1
  elif ! grep -qx "$owner" "$tmp/depends"; then
    check "$so (${cand[$so]%% *}) comes from $owner, which is in Depends" false
    dep_fail=1
  else
    echo "package_test: $so <- $owner"
  fi
done
check "every library the package's files need comes from a package in Depends" test "$dep_fail" = 0
check "fi_uet.7.gz is a man page" \
  sh -c "gzip -dc '$tmp/root/usr/share/man/man7/fi_uet.7.gz' | grep -q '^\.TH \"fi_uet\" \"7\"'"
prov_dir=$tmp/root$fabric_dir
env -u FI_PROVIDER FI_PROVIDER_PATH="$prov_dir" LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld" \
  fi_info -p uet >"$tmp/fi_info" 2>&1
rc=$?
check "fi_info -p uet with FI_PROVIDER_PATH at the unpacked package's $fabric_dir (exit $rc)" \
  test "$rc" = 0
check "fi_info lists provider uet" grep -q "provider: uet" "$tmp/fi_info"
loaded=$(cat "$tmp"/ld.* 2>/dev/null | grep -o 'file=[^ ]*libuet-fi\.so .*dynamically loaded' | awk '{print $1}' | sort -u)
check "libfabric loaded the unpacked libuet-fi.so and no other libuet-fi.so" \
  test "$loaded" = "file=$prov_dir/libuet-fi.so"
[ "$fail" = 0 ] || tail -20 "$tmp/fi_info"
exit "$fail"
