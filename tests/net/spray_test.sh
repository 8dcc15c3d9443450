#!/usr/bin/env bash
# Multipath spraying through the `uet` provider on the two-path network of
# scripts/mpnet.sh (ctest net.spray): fi_pingpong rdm with a data check from
# a to b, 64 KiB messages,
#   1. FI_UET_EV_COUNT=1 (single path): one r->s link carries the data;
#   2. FI_UET_EV_COUNT=16: both links carry a substantial share (>= 15 %);
# A marked or lossy link's share, goodput and incast: tests/net/multipath_test.sh.
# EV ports are pinned (FI_UET_EV_PORT_BASE, as there) and the ECMP hash seed is
# fixed, so the split is the same in every run: with ephemeral ports it was
# 34..63 % on link 1, and once 87 / 12 % (a CI failure of the 15 % bound).
# Link shares are r->s transmit bytes (scripts/mpnet.sh counters).
#
#   tests/net/spray_test.sh PROVIDER_DIR
#
# Needs root, ip, nft, tc and fi_pingpong: exits 77 (skipped) without them.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PROVIDER_DIR" >&2; exit 2; }
prov_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
mpnet=$here/scripts/mpnet.sh
[ "$(id -u)" -eq 0 ] || { echo "spray_test: needs root (network namespaces): skipped"; exit 77; }
for t in ip nft tc fi_pingpong timeout; do
  command -v "$t" >/dev/null || { echo "spray_test: needs $t: skipped"; exit 77; }
done

export UET_MPNET_ID=sp$$
eval "$("$mpnet" up)"
trap '"$mpnet" down >/dev/null 2>&1 || true' EXIT

# counters -> "BYTES1 BYTES2"
link_bytes() { "$mpnet" counters rs1 rs2 | awk '{printf "%s ", $3}'; }

# run EV_COUNT: one fi_pingpong exchange; prints "SHARE1 SHARE2" in percent of
# the r->s bytes it moved.
run() {
  local evs=$1 oob=$((41000 + RANDOM % 8000)) before after server rc=0
  read -r -a before <<<"$(link_bytes)"
  local env=(env FI_PROVIDER_PATH="$prov_dir" FI_PROVIDER=uet FI_UET_EV_COUNT="$evs" FI_UET_EV_WIDEN=0)
  ip netns exec "$MPNET_NS_B" "${env[@]}" FI_UET_ADDR="$MPNET_ADDR_B" FI_UET_EV_PORT_BASE=46000 \
    timeout 60 fi_pingpong -p uet -e rdm -B "$oob" -S 65536 -I 400 -c >/tmp/spray-$$.server 2>&1 &
  server=$!
  for _ in $(seq 1 100); do
    ip netns exec "$MPNET_NS_B" ss -Hltn "sport = :$oob" | grep -q . && break
    sleep 0.1
  done
  ip netns exec "$MPNET_NS_A" "${env[@]}" FI_UET_ADDR="$MPNET_ADDR_A" FI_UET_EV_PORT_BASE=47000 \
    timeout 60 fi_pingpong -p uet -e rdm -P "$oob" -S 65536 -I 400 -c "$MPNET_ADDR_B" \
    >/tmp/spray-$$.client 2>&1 || rc=$?
  wait "$server" || rc=$((rc ? rc : $?))
  if [ "$rc" -ne 0 ]; then
    echo "spray_test: FAIL: fi_pingpong with $evs EVs exited $rc" >&2
    cat /tmp/spray-$$.client /tmp/spray-$$.server >&2
    rm -f /tmp/spray-$$.*
    exit 1
  fi
  grep -E '^[0-9.]+k?[ ]' /tmp/spray-$$.client | head -1 >&2 || true
  rm -f /tmp/spray-$$.*
  read -r -a after <<<"$(link_bytes)"
  local d1=$((after[0] - before[0])) d2=$((after[1] - before[1]))
  echo "$((100 * d1 / (d1 + d2))) $((100 * d2 / (d1 + d2)))"
}

shares=$(mktemp)
trap 'rm -f "$shares"; "$mpnet" down >/dev/null 2>&1 || true' EXIT
# `run` writes the shares to a file, not through $(...): its `exit 1` then
# ends this script.
run 1 >"$shares"
read -r s1 s2 <"$shares"
echo "spray_test: 1 EV: link shares $s1 % / $s2 %"
if [ "$s1" -gt 5 ] && [ "$s2" -gt 5 ]; then
  echo "spray_test: FAIL: a single EV used both links" >&2; exit 1
fi

run 16 >"$shares"
read -r m1 m2 <"$shares"
echo "spray_test: 16 EVs: link shares $m1 % / $m2 %"
if [ "$m1" -lt 15 ] || [ "$m2" -lt 15 ]; then
  echo "spray_test: FAIL: spraying left a link nearly unused" >&2; exit 1
fi

echo "spray_test: PASS"
