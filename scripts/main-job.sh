#!/usr/bin/env bash
# README command 1: installs what the project needs, builds the `uet` libfabric
# provider (libuet-fi.so) and runs fi_pingpong -p uet between two "hosts": two
# network namespaces joined by a veth pair (loopback where namespaces are not
# permitted, said so), with the data check on, then prints a result table.
#
# Runs every endpoint type the provider offers: RDM (reliable, over PDS
# RUD/ROD), MSG (connected: passive endpoint, connect/accept) and DGRAM (one
# unreliable UUD packet per message), untagged and tagged, every size.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUET_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$(nproc)" --target uet-fi
prov_dir=build/release/provider

echo "== fi_info -p uet"
FI_PROVIDER_PATH="$PWD/$prov_dir" fi_info -p uet

results=()
run() {
  local name=$1
  shift
  local env=()
  [[ "$name" == *IPv6* ]] && env=(UET_PINGPONG_IPV6=1)
  echo
  echo "== fi_pingpong -p uet $*"
  local log
  log=$(mktemp)
  if env "${env[@]}" scripts/pingpong.sh "$prov_dir" "$@" 2>&1 | grep -v '^libfabric' | tee "$log"; then
    status=ok
  else
    status=FAILED
  fi
  # The client's rows: bytes, usec/xfer and MB/sec at 64 B, 4 KiB and 1 MiB.
  local row
  row=$(awk '/^--- client/{c=1} /^--- server/{c=0} c && ($1=="64"||$1=="4k"||$1=="1m"){printf "%s %s us %s MB/s; ", $1, $7, $6}' "$log")
  results+=("$(printf '%-22s %-7s %s' "$name" "$status" "$row")")
  rm -f "$log"
}
run "rdm" -e rdm -I 100 -S all -c
run "rdm tagged" -e rdm -m tagged -I 100 -S all -c
run "msg" -e msg -I 100 -S all -c
run "msg tagged" -e msg -m tagged -I 100 -S all -c
run "dgram" -e dgram -I 100 -S all -c
run "rdm IPv6" -e rdm -I 100 -S all -c

echo
echo "== result (client side: size, one-way latency, MB/s both directions)"
for r in "${results[@]}"; do echo "$r"; done
for r in "${results[@]}"; do [[ "$r" == *FAILED* ]] && exit 1; done
exit 0
