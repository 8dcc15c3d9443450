#!/usr/bin/env bash
# Payload size from the path MTU (issue 20) between two fi_pingpong processes:
#
#   tests/provider/mtu_pingpong.sh PROVIDER_DIR
#
# 1. Peers with different payloads interoperate: on loopback the server sends
#    8824-byte payloads (FI_UET_PAYLOAD's largest) and the client 1024-byte
#    ones; rdm, every size both ways (-S all) with the data check (-c).
#    A receiver accepts whatever a peer may send, whatever it sends itself.
# 2. A 1500-byte veth between two network namespaces (where this shell may
#    create them; scripts/pingpong.sh says which form ran): both endpoints
#    choose 1324 from the MTU, and 1 MiB takes at most 800 first transmissions
#    per side (792 data packets and the rendezvous read request), counted from
#    the endpoints' close log (packets_sent less retransmissions).
# Exit 0 when every check passes; each failure is printed.
set -u
prov_dir=${1:?usage: mtu_pingpong.sh PROVIDER_DIR}
here=$(cd "$(dirname "$0")" && pwd)
pingpong="$here/../../scripts/pingpong.sh"
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
check() {  # check CONDITION-TEXT COMMAND...
  local what=$1
  shift
  if "$@"; then echo "mtu_pingpong: ok: $what"; else echo "mtu_pingpong: FAIL: $what"; fail=1; fi
}

# 1. Different payloads on either side.
UET_PINGPONG_LOOPBACK=1 \
  UET_PINGPONG_SERVER_ENV="FI_UET_PAYLOAD=8824 FI_LOG_LEVEL=info" \
  UET_PINGPONG_CLIENT_ENV="FI_UET_PAYLOAD=1024 FI_LOG_LEVEL=info" \
  "$pingpong" "$prov_dir" -e rdm -I 10 -S all -c >"$log" 2>&1
rc=$?
check "mixed payloads: fi_pingpong rdm -S all -c passed (exit $rc)" test "$rc" = 0
check "mixed payloads: the server sent 8824-byte payloads" \
  grep -q "payload 8824 B (FI_UET_PAYLOAD)" "$log"
check "mixed payloads: the client sent 1024-byte payloads" \
  grep -q "payload 1024 B (FI_UET_PAYLOAD)" "$log"
[ "$fail" = 0 ] || grep -vE "^libfabric:.*<info>" "$log" | tail -20

# 2. A 1500-byte veth.
UET_PINGPONG_SERVER_ENV="FI_LOG_LEVEL=info" UET_PINGPONG_CLIENT_ENV="FI_LOG_LEVEL=info" \
  "$pingpong" "$prov_dir" -e rdm -I 10 -S 1048576 -c >"$log" 2>&1
rc=$?
if ! grep -q "pingpong: two network namespaces" "$log"; then
  echo "mtu_pingpong: the veth part needs network namespaces (root): not run"
  exit "$fail"
fi
check "veth: fi_pingpong rdm 1 MiB passed (exit $rc)" test "$rc" = 0
n=$(grep -c "payload 1324 B (MTU 1500 of " "$log")
check "veth: both endpoints chose 1324 from the 1500-byte MTU ($n)" test "$n" = 2
# Per endpoint: first transmissions = packets_sent - retransmissions_*, over
# the 10 MiB each side sent.
while read -r port fresh; do
  check "veth: port $port sent $fresh first transmissions for 10 MiB (<= 8000)" \
    test "$fresh" -ge 7920 -a "$fresh" -le 8000
done < <(grep -o "endpoint port [0-9]* PDS:.*" "$log" | awk '{
  sent = 0; re = 0
  for (i = 4; i <= NF; i++) {
    split($i, kv, "=")
    if (kv[1] == "packets_sent") sent = kv[2]
    if (kv[1] ~ /^retransmissions_/) re += kv[2]
  }
  print $3, sent - re }')
[ "$fail" = 0 ] || grep -vE "^libfabric:.*<info>" "$log" | tail -20
exit "$fail"
