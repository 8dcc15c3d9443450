#!/usr/bin/env bash
# Installs the Debian 12 packages the project builds, tests and runs with.
# Idempotent: apt is called only when a package is missing. Uses sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  dpkg-dev                          # dpkg-shlibdeps: the .deb's dependencies (cpack -G DEB; cpack is in cmake)
  clang libclang-rt-14-dev          # libFuzzer and the sanitizer runtimes
  libfabric-dev libfabric-bin       # provider API, fi_info / fi_pingpong
  liburing-dev libssl-dev libabsl-dev libpcap-dev
  libxdp-dev libbpf-dev             # the AF_XDP backend (FI_UET_IO_BACKEND=xdp; optional)
  libgtest-dev libgmock-dev
  iproute2                          # ip netns, veth, ss: the two-host main job
  nftables                          # packet loss inside a test namespace
  time                              # /usr/bin/time: CPU cost of fi_pingpong runs
  tcpdump                           # TSS test: no plaintext on the wire
  openmpi-bin libopenmpi-dev        # mpi.ofi_uet: 2 ranks over mtl ofi on uet
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
