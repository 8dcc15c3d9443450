#!/usr/bin/env bash
# Builds the Debian package (cpack -G DEB) of a build tree into OUT_DIR, for
# package_test.sh and package_system_test.sh (the ctest fixture uet_deb).
#
#   tests/install/package_build.sh BUILD_DIR OUT_DIR
#
# OUT_DIR is emptied first and holds exactly one .deb afterwards (CPack's
# staging tree is removed; package_test.sh checks the dependencies that
# dpkg-shlibdeps gave). Fails, naming the missing tool, without cpack
# (cmake), dpkg-deb (dpkg) or dpkg-shlibdeps (dpkg-dev): a package without its
# dependencies is no package (scripts/install-deps.sh installs them).
set -u
build=${1:?usage: package_build.sh BUILD_DIR OUT_DIR}
out=${2:?usage: package_build.sh BUILD_DIR OUT_DIR}
missing=()
for tool in cpack:cmake dpkg-deb:dpkg dpkg-shlibdeps:dpkg-dev; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool%%:*} (apt-get install ${tool#*:})")
done
if ((${#missing[@]})); then
  echo "package_build: FAIL: missing ${missing[*]}; scripts/install-deps.sh installs them"
  exit 1
fi
rm -rf "$out"
mkdir -p "$out"
log=$out/cpack.log
if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >"$log" 2>&1; then
  cat "$log"
  echo "package_build: FAIL: cpack -G DEB --config $build/CPackConfig.cmake"
  exit 1
fi
rm -rf "$out/_CPack_Packages"
debs=("$out"/*.deb)
if [ "${#debs[@]}" != 1 ] || [ ! -f "${debs[0]}" ]; then
  cat "$log"
  echo "package_build: FAIL: expected one .deb in $out, found: ${debs[*]}"
  exit 1
fi
echo "package_build: ok: ${debs[0]} ($(stat -c %s "${debs[0]}") bytes)"
