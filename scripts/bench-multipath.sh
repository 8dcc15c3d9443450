#!/usr/bin/env bash
# Benchmark (not a test) of multipath spraying and the congestion controllers
# through the `uet` provider on the real two-path network of scripts/mpnet.sh
# (the simulator's side is scripts/bench-cc.sh). fi_pingpong rdm with the data
# check, EV sockets on pinned ports (scripts/mpnet-pingpong.sh).
#
#   spray:  every r <-> s link a tbf bottleneck of RATE Mbit/s with a 256 KiB
#           queue, CE beyond ~90 % of the rate in whole MB/s (nftables `markrate`: this kernel
#           has no queue-depth marking); a -> b, 1 MiB x ITERS; rows
#           1 EV / 32 EVs x fixed / nscc / rccc / nscc+rccc.
#   incast: a and c -> b at once through s -> b limited the same way, 16 EVs,
#           per controller.
# Columns: MB/s (fi_pingpong's, per pair), retransmissions (timeout + fast,
# both sides, from the provider's PDS counters), packets sent, and the queue
# delay of the bottleneck queues: tc backlog sampled every 20 ms while the run
# lasts, as time at the link rate (mean and max over samples, all queues of
# the step). NSCC and RCCC are sized for the path: link = 2 x RATE (spray) or
# RATE (incast), base RTT 1 ms.
#
#   scripts/bench-multipath.sh PROVIDER_DIR [RATE_MBIT [ITERS]]
#       (defaults 40 and 4). Prints a markdown table; raw logs are removed.
#
# Needs root, ip, nft, tc, fi_pingpong. Takes the network down on exit.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 PROVIDER_DIR [RATE_MBIT [ITERS]]" >&2; exit 2; }
prov_dir=$(cd "$1" && pwd)
rate=${2:-40}
iters=${3:-4}
here=$(cd "$(dirname "$0")/.." && pwd)
mpnet=$here/scripts/mpnet.sh
((EUID == 0)) || { echo "bench-multipath: needs root (network namespaces)" >&2; exit 2; }
for t in ip nft tc fi_pingpong timeout; do
  command -v "$t" >/dev/null || { echo "bench-multipath: needs $t" >&2; exit 2; }
done

export UET_MPNET_ID=bm$$
tmp=$(mktemp -d)
pids=()
sampler=
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
  trap - EXIT INT TERM HUP
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  timeout 30 "$mpnet" down >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM HUP
fail() { echo "bench-multipath: $*" >&2; exit 1; }
# shellcheck source=scripts/mpnet-pingpong.sh
source "$here/scripts/mpnet-pingpong.sh"
eval "$("$mpnet" up --sender2)" >/dev/null

bytes_per_ms=$((rate * 1000 / 8))  # the link's rate in bytes per millisecond
# CE beyond ~90 % of the rate, in the whole MB/s markrate takes (at least 1).
mark_mbytes=$((rate * 9 / 80))
((mark_mbytes >= 1)) || mark_mbytes=1

# sample_start "NODE:DEV ...": appends "backlog_bytes" lines of every listed
# queue to $tmp/backlog every 20 ms until sample_stop.
sample_start() {
  : >"$tmp/backlog"
  (
    while :; do
      for q in $1; do
        ns_var=MPNET_NS_${q%%:*}
        ip netns exec "${!ns_var}" tc -s qdisc show dev "${q#*:}" |
          awk '/backlog/ {b = $2; sub(/b$/, "", b); if (b ~ /K$/) {sub(/K$/, "", b); b *= 1000}
                          if (b ~ /M$/) {sub(/M$/, "", b); b *= 1000000}; print b; exit}'
      done >>"$tmp/backlog"
      sleep 0.02
    done
  ) &
  sampler=$!
}
sample_stop() {
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  sampler=
  awk -v bpm="$bytes_per_ms" '{s += $1; if ($1 > m) m = $1; n++}
    END {if (n == 0) print "- / -"; else printf "%.1f / %.1f", s / n / bpm, m / bpm}' "$tmp/backlog"
}

cc_env() {  # cc_env CC LINK_MBPS
  [ "$1" = fixed ] && return
  echo "FI_UET_CC=$1 FI_UET_CC_LINK_MBPS=$2 FI_UET_CC_BASE_RTT_US=1000"
}

echo "## Two paths, r <-> s links at $rate Mbit/s each (256 KiB tbf queue, CE beyond ${mark_mbytes} MB/s), 1 MiB x $iters"
echo
echo "| EVs | controller | MB/s | retransmissions | packets sent | queue delay mean / max (ms) |"
echo "|---|---|---|---|---|---|"
"$mpnet" impair rs1,rs2,sr1,sr2 rate "$rate" 262144 >/dev/null
"$mpnet" impair rs1,rs2,sr1,sr2 markrate "$mark_mbytes" >/dev/null
for evs in 1 32; do
  for cc in fixed nscc rccc nscc+rccc; do
    label=s${evs}_${cc//+/_}
    # shellcheck disable=SC2046  # the words of cc_env are separate assignments
    sample_start "R:to-s1 R:to-s2"
    pp_start "$label" a 4793 "$evs" 1048576 "$iters" $(cc_env "$cc" $((2 * rate)))
    pp_wait "$label"
    q=$(sample_stop)
    echo "| $evs | $cc | $(mbps "$label") | $(retx "$label") | $(counter "$label" packets_sent) | $q |"
  done
done
"$mpnet" impair rs1,rs2,sr1,sr2 clear >/dev/null

echo
echo "## Incast a + c -> b, s -> b at $rate Mbit/s (256 KiB tbf queue, CE beyond ${mark_mbytes} MB/s), 16 EVs, 1 MiB x $iters each"
echo
echo "| controller | MB/s a / c | retransmissions a / c | packets sent a / c | queue delay mean / max (ms) |"
echo "|---|---|---|---|---|"
"$mpnet" impair sb rate "$rate" 262144 >/dev/null
"$mpnet" impair sb markrate "$mark_mbytes" >/dev/null
for cc in fixed nscc rccc nscc+rccc; do
  la=ia_${cc//+/_} lc=ic_${cc//+/_}
  sample_start "S:to-b"
  # shellcheck disable=SC2046
  pp_start "$la" a 4793 16 1048576 "$iters" $(cc_env "$cc" "$rate")
  # shellcheck disable=SC2046
  pp_start "$lc" c 4794 16 1048576 "$iters" $(cc_env "$cc" "$rate")
  pp_wait "$la"
  pp_wait "$lc"
  q=$(sample_stop)
  echo "| $cc | $(mbps "$la") / $(mbps "$lc") | $(retx "$la") / $(retx "$lc")" \
    "| $(counter "$la" packets_sent) / $(counter "$lc" packets_sent) | $q |"
done
