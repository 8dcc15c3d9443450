#!/usr/bin/env bash
# Multipath spraying and congestion through the `uet` provider on the two-path
# network of scripts/mpnet.sh (ctest net.multipath). fi_pingpong rdm with the
# data check (-c) from a (and c) to b. EV sockets on pinned ports
# (FI_UET_EV_PORT_BASE) and a fixed ECMP hash seed: the same EVs take the same
# links in every run, so runs can be compared.
#
#   1. Share. 16 EVs, 64 KiB x 300: link 1's share of the r -> s bytes, clean,
#      then with 30 % of link 1's packets CE-marked (its share falls by >= 10
#      points: marked EVs are set aside), then with 5 % of them dropped (falls
#      by >= 8 points: lost EVs are set aside); every run passes the data check.
#   2. Goodput. Every r <-> s link a 40 Mbit/s tbf bottleneck (1 MiB queue, no
#      drops; RTO floor 300 ms, below): 1 MiB messages, 32 EVs move >= 1.7 x
#      the MB/s of 1 EV.
#   4. Widening (FI_UET_EV_WIDEN, the default; runs between 1 and 2). Clean:
#      no widening without evidence (a loaded host's timeouts, three in a row,
#      are some), and without widening one link carries >= 98 %. Both links 30 % CE-marked: the
#      PDCs widen and each link carries >= 10 %.
#   3. Incast 2 -> 1. a and c send to b at once through s -> b limited to
#      40 Mbit/s (tbf) and CE-marked beyond 4 MB/s, NSCC: both pass the data
#      check and retransmit <= 5 % of the packets they send.
# Retransmissions and packets sent come from the provider's PDS counters,
# logged when the endpoint closes (FI_LOG_LEVEL=info). Measured values are in
# spec-notes/pds.md "Entropy and spraying".
#
#   tests/net/multipath_test.sh PROVIDER_DIR
#
# Needs root, ip, nft, tc, timeout and fi_pingpong: exits 77 (skipped) without
# them. Every process runs under `timeout`; the trap stops them by PID and
# takes the network down on every exit path.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PROVIDER_DIR" >&2; exit 2; }
prov_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
mpnet=$here/scripts/mpnet.sh
skip() { echo "multipath_test: SKIP: $*"; exit 77; }
((EUID == 0)) || skip "needs root for network namespaces"
for t in ip nft tc fi_pingpong timeout; do command -v "$t" >/dev/null || skip "needs $t"; done

export UET_MPNET_ID=mp$$
tmp=$(mktemp -d)
pids=()
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  timeout 30 "$mpnet" down >/dev/null 2>&1 || true
  rm -rf "$tmp"
  ((rc == 0)) && echo "multipath_test: all passed in ${SECONDS} s"
  exit "$rc"
}
trap cleanup EXIT INT TERM HUP
eval "$("$mpnet" up --sender2)"

fail() { echo "multipath_test: FAIL: $*" >&2; exit 1; }

# pp_start, pp_wait, mbps, counter, retx (they use prov_dir, tmp, pids, fail).
# shellcheck source=scripts/mpnet-pingpong.sh
source "$here/scripts/mpnet-pingpong.sh"

link_bytes() { "$mpnet" counters rs1 rs2 | awk '{printf "%s ", $3}'; }

# share LABEL [VAR=VALUE...]: one 16-EV run a -> b; prints link 1's share (%).
share() {
  local label=$1 before after
  shift
  read -r -a before <<<"$(link_bytes)"
  pp_start "$label" a 4793 16 65536 300 "$@"
  pp_wait "$label"
  read -r -a after <<<"$(link_bytes)"
  local d1=$((after[0] - before[0])) d2=$((after[1] - before[1]))
  echo $((100 * d1 / (d1 + d2)))
}

echo "== 1. share of a marked or lossy link"
clean=$(share clean)
"$mpnet" impair rs1 mark 30 >/dev/null
marked=$(share marked)
"$mpnet" impair rs1 clear >/dev/null
"$mpnet" impair rs1 drop 5 >/dev/null
lossy=$(share lossy)
"$mpnet" impair rs1 clear >/dev/null
echo "multipath_test: link 1 share: clean $clean %, 30 % marked $marked %, 5 % lost $lossy %" \
  "(retransmissions $(retx lossy))"
((marked <= clean - 10)) || fail "a CE-marked link kept its share ($marked % vs $clean % clean)"
((lossy <= clean - 8)) || fail "a lossy link kept its share ($lossy % vs $clean % clean)"

echo "== 4. widening (the default): one path until it congests"
clean_w=$(share widen_clean FI_UET_EV_WIDEN=1)
"$mpnet" impair rs1,rs2 mark 30 >/dev/null
marked_w=$(share widen_marked FI_UET_EV_WIDEN=1)
"$mpnet" impair rs1,rs2 clear >/dev/null
w_clean=$(counter widen_clean evs_widened) w_marked=$(counter widen_marked evs_widened)
echo "multipath_test: widening: link 1 share clean $clean_w % (widened $w_clean, retransmissions $(retx widen_clean), NACK resends $(counter widen_clean retransmissions_nack))," \
  "both links 30 % marked $marked_w % (widened $w_marked)"
# A loaded host's spurious timeouts are evidence too (three in a row widen):
# a clean path widens only with them, and stays on one link without them.
t_clean=$(counter widen_clean retransmissions_timeout)
s_clean=$(($(counter widen_clean retransmissions_fast) + $(counter widen_clean retransmissions_nack)))
((3 * w_clean <= t_clean + 3 * s_clean)) || fail "a clean path widened ($w_clean) without evidence"
((w_clean > 0 || clean_w <= 2 || clean_w >= 98)) || fail "a clean path sprayed (link 1 share $clean_w %)"
((w_marked >= 1)) || fail "marked paths did not widen"
((marked_w >= 10 && marked_w <= 90)) || fail "widened, yet one link carried it all ($marked_w %)"

echo "== 2. goodput over two 40 Mbit/s links"
"$mpnet" impair rs1,rs2,sr1,sr2 rate 40 1048576 >/dev/null
# The fixed window (512 KiB) queues ~100 ms at 5 MB/s, past any RTO learnt
# from the first packets: a floor of 300 ms keeps spurious timeouts out of a
# step that measures the paths (nothing is dropped here).
pp_start one a 4793 1 1048576 3 FI_UET_RTO_FLOOR_US=300000
pp_wait one
pp_start two a 4793 32 1048576 3 FI_UET_RTO_FLOOR_US=300000
pp_wait two
"$mpnet" impair rs1,rs2,sr1,sr2 clear >/dev/null
one=$(mbps one) two=$(mbps two)
echo "multipath_test: 1 EV $one MB/s, 32 EVs $two MB/s" \
  "(retransmissions $(retx one) / $(retx two))"
awk -v a="$one" -v b="$two" 'BEGIN {exit !(b >= 1.7 * a)}' ||
  fail "two paths gave $two MB/s, not >= 1.7 x one path's $one MB/s"

echo "== 3. incast a + c -> b through a 40 Mbit/s, CE-marking s -> b"
"$mpnet" impair sb rate 40 262144 >/dev/null
"$mpnet" impair sb markrate 4 >/dev/null
cc=(FI_UET_CC=nscc FI_UET_CC_LINK_MBPS=40 FI_UET_CC_BASE_RTT_US=1000)
pp_start ia a 4793 16 1048576 4 "${cc[@]}"
pp_start ic c 4794 16 1048576 4 "${cc[@]}"
pp_wait ia
pp_wait ic
for l in ia ic; do
  sent=$(counter "$l" packets_sent)
  r=$(($(counter "$l" retransmissions_timeout) + $(counter "$l" retransmissions_fast)))
  echo "multipath_test: incast $l: $(mbps "$l") MB/s, $r retransmissions of $sent packets"
  ((sent > 0)) || fail "incast $l: no PDS counters in the logs"
  ((r * 20 <= sent)) || fail "incast $l: retransmission storm ($r of $sent packets)"
done
