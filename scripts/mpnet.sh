#!/usr/bin/env bash
# A real two-path network in network namespaces, for the tests and the
# benchmark (issue 8): a sender, two routers joined by two equal links, a
# receiver, and optionally a second sender for 2->1 incast:
#
#        a ──ar/ra── r ══rs1/sr1══ s ──sb/bs── b
#        c ──cr/rc──┘  ══rs2/sr2══
#
# r and s forward and spread traffic over the two r==s links by ECMP routes
# (`nexthop via ... nexthop via ...`) hashed on the L4 5-tuple
# (fib_multipath_hash_policy=1, IPv4 and IPv6), so different UDP source ports
# take different links; b's answers come back over the same kind of ECMP
# routes in s. rp_filter is 0 everywhere (the two directions of one flow may
# take different links). Every link is a veth pair, MTU 1500.
#
# CLI:
#   scripts/mpnet.sh up [--sender2] [--gso] [--seed N]
#       Builds the network under the id UET_MPNET_ID (default: this script's
#       PID) and prints shell assignments describing it on stdout (eval them):
#       UET_MPNET_ID, MPNET_NS_{A,B,C,R,S} (namespace names),
#       MPNET_ADDR_{A,B,C} (IPv4), MPNET_ADDR6_{A,B,C} (IPv6), MPNET_SENDER2.
#       --sender2  also the second sender c, attached to r.
#       --gso      keep the veths' GSO; by default every veth has
#                  gso_max_segs 1, so that a UDP GSO batch (the provider sends
#                  them) is cut into packets where it leaves its host: every
#                  drop, CE mark, ECMP choice and counter is then per packet,
#                  as on a wire.
#       --seed N   net.ipv4.fib_multipath_hash_seed in r and s (used for IPv6
#                  too; default 1; 0: the kernel's random per-boot key): the
#                  same source ports take the same links on every run. Left
#                  alone, with a note, on kernels without it (< 6.11).
#       Refuses (exit 2) when a namespace of that id exists already; on a
#       failure it removes what it made.
#   scripts/mpnet.sh down
#       Stops the processes still inside the id's namespaces (by their PIDs,
#       from `ip netns pids`: TERM, then KILL after 2 s) and deletes the
#       namespaces (with them the veths, routes, nft tables and qdiscs).
#       Idempotent: no namespace left is not an error.
#   scripts/mpnet.sh info
#       The assignments `up` printed, for a network that is up.
#   scripts/mpnet.sh exec NODE CMD [ARG...]
#       Runs CMD in NODE's namespace (NODE: a b c r s).
#   scripts/mpnet.sh counters [LINK...]
#       One line per link: "LINK TX_PACKETS TX_BYTES", the transmit counters of
#       the sending end's veth (/sys/class/net/DEV/statistics); default rs1 rs2.
#   scripts/mpnet.sh impair LINK[,LINK...] KIND [ARGS]
#       Impairs the link in the named direction, at the sending end's egress
#       (LINK: ar ra cr rc rs1 sr1 rs2 sr2 sb bs, e.g. rs1 is r -> s over link 1;
#       sb is s -> b, the 2->1 incast bottleneck). One impairment of each kind
#       per link, the last one set wins; kinds combine:
#         drop PCT            drop PCT % of the packets at random (nftables
#                             numgen; PCT 0..100 with up to 2 decimals; 0 off)
#         mark PCT            set CE on PCT % of the ECN-capable (ECT) packets
#                             at random; not-ECT packets are left alone, as an
#                             RFC 3168 queue would (the provider sends ECT(0))
#         markrate MBYTES [BURST_KBYTES]
#                             set CE on the ECT packets beyond MBYTES MB/s
#                             (an nftables token bucket over all IP packets
#                             on the link, burst default max(64, MBYTES) KB): a
#                             stand-in for queue-depth marking, which this
#                             kernel cannot do (no red/fq_codel); 0 off
#         rate MBIT [LIMIT_BYTES]
#                             a bottleneck: tbf at MBIT Mbit/s (decimals
#                             allowed), queue LIMIT_BYTES (default max(64 KiB,
#                             1 ms at the rate)), excess dropped; 0 off
#         clear               every impairment of the link off
#       Drops and marks happen in an nftables postrouting chain, before the
#       tbf queue: a dropped packet never reaches the link's counters. No
#       delay, jitter or reordering: this kernel has no netem (nor red,
#       fq_codel or prio; tbf, htb and [pb]fifo exist); the provider's own
#       FI_UET_IMPAIR_* stage does those.
#   scripts/mpnet.sh show
#       Each router's and host's nft table and root qdiscs (for logs).
#
# Library: `source scripts/mpnet.sh` defines mpnet_up, mpnet_down, mpnet_info,
# mpnet_exec, mpnet_counters, mpnet_impair and mpnet_show, which run the CLI
# above as a child process (so its `set -e` holds whatever the caller's
# options); mpnet_up takes its id from UET_MPNET_ID or else the caller's $$,
# and sets and exports the variables `up` prints. Sourcing defines only these
# functions and _MPNET_SELF, and changes no shell option.
#
# Names: namespaces uetmp-ID-NODE, so parallel runs with different ids cannot
# collide. Veths are named after their peer (to-r, to-s1, ...) and created
# directly inside their namespaces, where those names are private. Addresses
# come from 198.18.0.0/15 (RFC 2544, benchmarking) and 2001:db8::/32
# (documentation) and exist only inside the namespaces:
#   a  198.18.1.1/24   2001:db8:1::1/64   (r: .254, ::fe)
#   c  198.18.3.1/24   2001:db8:3::1/64   (r: .254, ::fe)
#   b  198.18.2.1/24   2001:db8:2::1/64   (s: .254, ::fe)
#   link 1  r 198.18.101.1  s 198.18.101.2  (2001:db8:101::1, ::2)
#   link 2  r 198.18.102.1  s 198.18.102.2  (2001:db8:102::1, ::2)
# Every veth has a fixed, locally administered MAC (02:75:65:LINK:00:SIDE) and
# every neighbour entry is static (nud permanent; IPv6 addresses nodad): no
# ARP or neighbour discovery crosses a link, so the counters hold the test's
# packets (and at most a few IPv6 MLD reports right after `up`).
#
# Only the id's namespaces are ever deleted; processes are stopped by PID,
# never by name. A SIGKILLed `up` may leave its namespaces: `down` with the
# same UET_MPNET_ID removes them.

# ---- library (sourced) -----------------------------------------------------
_MPNET_SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
mpnet_up() {
  local vars
  vars=$(UET_MPNET_ID=${UET_MPNET_ID:-$$} "$_MPNET_SELF" up "$@") || return
  eval "$vars"
  export UET_MPNET_ID MPNET_NS_A MPNET_NS_B MPNET_NS_C MPNET_NS_R MPNET_NS_S \
    MPNET_ADDR_A MPNET_ADDR_B MPNET_ADDR_C MPNET_ADDR6_A MPNET_ADDR6_B MPNET_ADDR6_C MPNET_SENDER2
}
mpnet_down() { "$_MPNET_SELF" down; }
mpnet_info() { "$_MPNET_SELF" info; }
mpnet_exec() { "$_MPNET_SELF" exec "$@"; }
mpnet_counters() { "$_MPNET_SELF" counters "$@"; }
mpnet_impair() { "$_MPNET_SELF" impair "$@"; }
mpnet_show() { "$_MPNET_SELF" show; }
if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  return 0
fi

# ---- CLI ---------------------------------------------------------------------
# Process creation can be slow on a loaded machine (tens of ms each): the
# commands below are batched per namespace (ip -batch, one nft -f, one
# sysctl) and names come from variables, not $(...).
set -euo pipefail

usage() {
  echo "usage: $0 up [--sender2] [--gso] [--seed N] | down | info | show |" >&2
  echo "       exec NODE CMD... | counters [LINK...] | impair LINK[,LINK...] KIND [ARGS]" >&2
  exit 2
}
die() {
  echo "mpnet: $*" >&2
  exit 2
}
note() { echo "mpnet: $*" >&2; }

id=${UET_MPNET_ID:-}
[ -z "$id" ] || [[ "$id" =~ ^[A-Za-z0-9]{1,24}$ ]] || die "UET_MPNET_ID must be 1..24 letters or digits, not '$id'"
nodes=(a b c r s)
declare -A NS
set_names() {
  local n
  for n in "${nodes[@]}"; do NS[$n]=uetmp-$id-$n; done
}
set_names
need_id() { [ -n "$id" ] || die "UET_MPNET_ID is not set (the id \`up\` printed)"; }
ns_exists() { [ -e "/run/netns/${NS[$1]}" ]; }

# The links, by direction: "LINK NODE DEV PEER" (the sending end's node and
# veth, the receiving end's node).
links=(
  "ar a to-r r" "ra r to-a a" "cr c to-r r" "rc r to-c c"
  "rs1 r to-s1 s" "sr1 s to-r1 r" "rs2 r to-s2 s" "sr2 s to-r2 r"
  "sb s to-b b" "bs b to-s s"
)
# link_of LINK: sets node and dev.
link_of() {
  local e l peer
  for e in "${links[@]}"; do
    read -r l node dev peer <<<"$e"
    if [ "$l" = "$1" ]; then
      if ! ns_exists "$node" || ! ns_exists "$peer"; then
        die "link $1: namespace ${NS[$node]} or ${NS[$peer]} does not exist (not up, or no --sender2)"
      fi
      return 0
    fi
  done
  die "unknown link '$1' (ar ra cr rc rs1 sr1 rs2 sr2 sb bs)"
}

info() {
  local sender2=0 ns_c="" addr_c="" addr6_c=""
  if ns_exists c; then
    sender2=1 ns_c=${NS[c]} addr_c=198.18.3.1 addr6_c=2001:db8:3::1
  fi
  cat <<EOF
UET_MPNET_ID=$id
MPNET_NS_A=${NS[a]}
MPNET_NS_B=${NS[b]}
MPNET_NS_C=$ns_c
MPNET_NS_R=${NS[r]}
MPNET_NS_S=${NS[s]}
MPNET_ADDR_A=198.18.1.1
MPNET_ADDR_B=198.18.2.1
MPNET_ADDR_C=$addr_c
MPNET_ADDR6_A=2001:db8:1::1
MPNET_ADDR6_B=2001:db8:2::1
MPNET_ADDR6_C=$addr6_c
MPNET_SENDER2=$sender2
EOF
}

# ---- up ----
made=()
# shellcheck disable=SC2317  # invoked by the trap
up_failed() {
  local rc=$?
  trap - EXIT
  if ((rc != 0)); then
    note "up failed (exit $rc): removing ${made[*]:-nothing}"
    for n in "${made[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  fi
  exit "$rc"
}

declare -A cfg  # per node: the `ip -batch` lines for its namespace
veths=""        # `ip -batch` lines (host side) creating the veth pairs
# veth LINKNUM NODE1 DEV1 NODE2 DEV2: a veth pair between two namespaces, MTU
# 1500, MACs 02:75:65:LINKNUM:00:01 / :02, brought up by its nodes' batches.
veth() {
  veths+="link add $3 netns ${NS[$2]} address 02:75:65:$1:00:01 mtu 1500 type veth"
  veths+=" peer name $5 netns ${NS[$4]} address 02:75:65:$1:00:02 mtu 1500"$'\n'
  local segs=""
  ((gso)) || segs="gso_max_segs 1"
  cfg[$2]+="link set $3 $segs up"$'\n'
  cfg[$4]+="link set $5 $segs up"$'\n'
}
# addr NODE DEV IPV4/LEN IPV6/LEN
addr() { cfg[$1]+="addr add $3 dev $2"$'\n'"addr add $4 dev $2 nodad"$'\n'; }
# neigh NODE DEV IPV4 IPV6 MAC: static neighbour entries for both families.
neigh() {
  cfg[$1]+="neigh replace $3 lladdr $5 dev $2 nud permanent"$'\n'
  cfg[$1]+="neigh replace $4 lladdr $5 dev $2 nud permanent"$'\n'
}
route() { cfg[$1]+="route add ${*:2}"$'\n'; }

cmd_up() {
  sender2=0 gso=0 seed=1
  while (($#)); do
    case $1 in
      --sender2) sender2=1 ;;
      --gso) gso=1 ;;
      --seed)
        if [ $# -lt 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then die "--seed needs a number"; fi
        seed=$2
        shift
        ;;
      *) usage ;;
    esac
    shift
  done
  if [ -z "$id" ]; then
    id=$$
    set_names
  fi
  ((EUID == 0)) || die "up needs root (network namespaces)"
  local n
  for n in "${nodes[@]}"; do
    ! ns_exists "$n" || die "namespace ${NS[$n]} exists already: id $id is in use (down it, or another UET_MPNET_ID)"
  done
  local have_seed=0
  [ -e /proc/sys/net/ipv4/fib_multipath_hash_seed ] && have_seed=1
  ((have_seed)) || note "this kernel has no net.ipv4.fib_multipath_hash_seed: the ECMP hash key is random per boot"

  # Links (MAC byte 4 = link number): 01 a-r, 02 b-s, 03 c-r, 11 r-s #1, 12 r-s #2.
  local hosts=(a b)
  ((sender2)) && hosts+=(c)
  for n in "${hosts[@]}" r s; do cfg[$n]="link set lo up"$'\n'; done
  veth 01 a to-r r to-a
  veth 02 b to-s s to-b
  ((sender2)) && veth 03 c to-r r to-c
  veth 11 r to-s1 s to-r1
  veth 12 r to-s2 s to-r2

  addr a to-r 198.18.1.1/24 2001:db8:1::1/64
  addr r to-a 198.18.1.254/24 2001:db8:1::fe/64
  addr b to-s 198.18.2.1/24 2001:db8:2::1/64
  addr s to-b 198.18.2.254/24 2001:db8:2::fe/64
  addr r to-s1 198.18.101.1/24 2001:db8:101::1/64
  addr s to-r1 198.18.101.2/24 2001:db8:101::2/64
  addr r to-s2 198.18.102.1/24 2001:db8:102::1/64
  addr s to-r2 198.18.102.2/24 2001:db8:102::2/64
  neigh a to-r 198.18.1.254 2001:db8:1::fe 02:75:65:01:00:02
  neigh r to-a 198.18.1.1 2001:db8:1::1 02:75:65:01:00:01
  neigh b to-s 198.18.2.254 2001:db8:2::fe 02:75:65:02:00:02
  neigh s to-b 198.18.2.1 2001:db8:2::1 02:75:65:02:00:01
  neigh r to-s1 198.18.101.2 2001:db8:101::2 02:75:65:11:00:02
  neigh s to-r1 198.18.101.1 2001:db8:101::1 02:75:65:11:00:01
  neigh r to-s2 198.18.102.2 2001:db8:102::2 02:75:65:12:00:02
  neigh s to-r2 198.18.102.1 2001:db8:102::1 02:75:65:12:00:01
  # Hosts: everything through their router.
  route a default via 198.18.1.254
  route a ::/0 via 2001:db8:1::fe
  route b default via 198.18.2.254
  route b ::/0 via 2001:db8:2::fe
  if ((sender2)); then
    addr c to-r 198.18.3.1/24 2001:db8:3::1/64
    addr r to-c 198.18.3.254/24 2001:db8:3::fe/64
    neigh c to-r 198.18.3.254 2001:db8:3::fe 02:75:65:03:00:02
    neigh r to-c 198.18.3.1 2001:db8:3::1 02:75:65:03:00:01
    route c default via 198.18.3.254
    route c ::/0 via 2001:db8:3::fe
  fi
  # r: to b over both links; s: back to a (and c) over both links.
  route r 198.18.2.0/24 nexthop via 198.18.101.2 dev to-s1 nexthop via 198.18.102.2 dev to-s2
  route r 2001:db8:2::/64 nexthop via 2001:db8:101::2 dev to-s1 nexthop via 2001:db8:102::2 dev to-s2
  local x
  for x in 1 3; do
    ((x == 1 || sender2)) || continue
    route s "198.18.$x.0/24" nexthop via 198.18.101.1 dev to-r1 nexthop via 198.18.102.1 dev to-r2
    route s "2001:db8:$x::/64" nexthop via 2001:db8:101::1 dev to-r1 nexthop via 2001:db8:102::1 dev to-r2
  done

  trap up_failed EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  for n in "${hosts[@]}" r s; do
    ip netns add "${NS[$n]}"
    made+=("${NS[$n]}")
    # Before the veths exist: they take their settings from "default".
    local sys=(
      net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
      net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0
      net.ipv6.conf.all.accept_ra=0 net.ipv6.conf.default.accept_ra=0
      net.ipv6.conf.default.router_solicitations=0
    )
    if [ "$n" = r ] || [ "$n" = s ]; then
      sys+=(net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
        net.ipv4.fib_multipath_hash_policy=1 net.ipv6.fib_multipath_hash_policy=1)
      ((have_seed)) && sys+=("net.ipv4.fib_multipath_hash_seed=$seed")
    fi
    ip netns exec "${NS[$n]}" sysctl -qw "${sys[@]}"
  done
  ip -batch - <<<"$veths"
  for n in "${hosts[@]}" r s; do ip -n "${NS[$n]}" -batch - <<<"${cfg[$n]}"; done
  trap - EXIT INT TERM HUP
  local how="L4 hash"
  ((have_seed)) && how+=", seed $seed"
  ((gso)) || how+="; veth gso_max_segs 1"
  note "up: id $id: ${made[*]}; r and s spread over 2 links ($how)"
  info
}

# ---- down ----
cmd_down() {
  need_id
  local n p pids=() left=() removed=()
  for n in "${nodes[@]}"; do
    ns_exists "$n" || continue
    for p in $(ip netns pids "${NS[$n]}" 2>/dev/null); do pids+=("$p"); done
  done
  if ((${#pids[@]})); then
    note "down: stopping processes ${pids[*]} still in the namespaces"
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for _ in $(seq 1 20); do
      left=()
      for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
      ((${#left[@]})) || break
      sleep 0.1
    done
    ((${#left[@]} == 0)) || kill -KILL "${left[@]}" 2>/dev/null || true
  fi
  for n in "${nodes[@]}"; do
    ns_exists "$n" || continue
    ip netns del "${NS[$n]}"
    removed+=("${NS[$n]}")
  done
  note "down: id $id: removed ${removed[*]:-nothing (no namespace left)}"
}

# ---- counters ----
cmd_counters() {
  need_id
  (($#)) || set -- rs1 rs2
  # One `ip netns exec` per namespace (it mounts the namespace's own /sys).
  local l node dev n files=() vals=() i=0
  declare -A at  # link -> index of its tx_packets value in vals
  for n in "${nodes[@]}"; do
    files=()
    for l in "$@"; do
      link_of "$l"
      [ "$node" = "$n" ] || continue
      files+=("/sys/class/net/$dev/statistics/tx_packets" "/sys/class/net/$dev/statistics/tx_bytes")
      at[$l]=$i
      i=$((i + 2))
    done
    ((${#files[@]})) || continue
    mapfile -t -O "${#vals[@]}" vals < <(ip netns exec "${NS[$n]}" cat "${files[@]}")
    ((${#vals[@]} == i)) || die "counters: could not read ${files[*]} in ${NS[$n]}"
  done
  for l in "$@"; do echo "$l ${vals[${at[$l]}]} ${vals[${at[$l]} + 1]}"; done
}

# ---- impair ----
# Each namespace that has an impairment holds the table inet uet_mpnet: a
# postrouting chain `post` that sends each of the node's links (by oifname)
# through the chains LINK_drop, LINK_mark, LINK_markrate in that order (a
# dropped packet is neither marked nor counted by a markrate bucket), and a
# named limit mr_LINK for markrate. Setting a kind flushes and refills its
# chain in one nft transaction.
T="inet uet_mpnet"
# pct_bp PCT: percent (up to 2 decimals) in basis points (0..10000).
pct_bp() {
  [[ "$1" =~ ^([0-9]{1,3})(\.([0-9]{1,2}))?$ ]] || die "'$1' is not a percentage (0..100, up to 2 decimals)"
  local frac=${BASH_REMATCH[3]:-0}
  [ ${#frac} -eq 1 ] && frac=${frac}0
  bp=$((10#${BASH_REMATCH[1]} * 100 + 10#$frac))
  ((bp <= 10000)) || die "'$1' is over 100 %"
}

impair_one() {
  local l=$1 kind=$2 node dev
  shift 2
  link_of "$l"
  # The table, the node's per-link chains and the jumps to them (rebuilt
  # whole, so that this is idempotent).
  local e ll nn dd pp k nft="add table $T"$'\n'
  nft+="add chain $T post { type filter hook postrouting priority filter; policy accept; }"$'\n'
  nft+="flush chain $T post"$'\n'
  for e in "${links[@]}"; do
    read -r ll nn dd pp <<<"$e"
    if [ "$nn" != "$node" ] || ! ns_exists "$pp"; then continue; fi
    for k in drop mark markrate; do
      nft+="add chain $T ${ll}_$k"$'\n'"add rule $T post oifname \"$dd\" jump ${ll}_$k"$'\n'
    done
  done
  # flush KIND...: empty those chains of this link (markrate: and its limit).
  flush() {
    for k in "$@"; do
      nft+="flush chain $T ${l}_$k"$'\n'
      if [ "$k" = markrate ]; then
        # Created first so that the delete cannot fail; the idiom of nft(8).
        nft+="add limit $T mr_$l { rate 1 mbytes/second; }"$'\n'"delete limit $T mr_$l"$'\n'
      fi
    done
  }
  local bp tc_args=()
  case $kind in
    drop)
      [ $# -eq 1 ] || usage
      pct_bp "$1"
      flush drop
      local pick=""
      ((bp == 10000)) || pick="numgen random mod 10000 < $bp "
      ((bp == 0)) || nft+="add rule $T ${l}_drop ${pick}counter drop"$'\n'
      ;;
    mark)
      [ $# -eq 1 ] || usage
      pct_bp "$1"
      flush mark
      local pick=""
      ((bp == 10000)) || pick="numgen random mod 10000 < $bp"
      if ((bp > 0)); then
        nft+="add rule $T ${l}_mark ip ecn != not-ect $pick counter ip ecn set ce"$'\n'
        nft+="add rule $T ${l}_mark ip6 ecn != not-ect $pick counter ip6 ecn set ce"$'\n'
      fi
      ;;
    markrate)
      if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
      [[ "$1" =~ ^[0-9]+$ ]] || die "markrate: MBYTES must be a whole number of MB/s"
      local mb=$((10#$1))
      local burst=${2:-$((mb > 64 ? mb : 64))}
      [[ "$burst" =~ ^[1-9][0-9]*$ ]] || die "markrate: BURST_KBYTES must be a positive number"
      flush markrate
      if ((mb > 0)); then
        # One bucket for both families: it counts every IP packet on the
        # link; the mark goes on the ECT ones beyond the rate.
        nft+="add limit $T mr_$l { rate over $mb mbytes/second burst $burst kbytes; }"$'\n'
        nft+="add rule $T ${l}_markrate meta nfproto ipv4 limit name \"mr_$l\" ip ecn != not-ect counter ip ecn set ce"$'\n'
        nft+="add rule $T ${l}_markrate meta nfproto ipv6 limit name \"mr_$l\" ip6 ecn != not-ect counter ip6 ecn set ce"$'\n'
      fi
      ;;
    rate)
      if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
      [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "rate: MBIT must be a number"
      if [[ "$1" =~ ^0+(\.0+)?$ ]]; then
        tc_args=(del)
      else
        # Bucket: 100 us at the rate, at least 16 KiB (tbf needs a packet).
        # Queue: 1 ms at the rate, at least 64 KiB, or LIMIT_BYTES.
        local burst limit
        read -r burst limit < <(awk -v r="$1" 'BEGIN { B = r * 1e6 / 8
          b = B * 1e-4; q = B * 1e-3; printf "%d %d\n", b < 16384 ? 16384 : b, q < 65536 ? 65536 : q }')
        if [ $# -eq 2 ]; then
          if ! [[ "$2" =~ ^[0-9]+$ ]] || ((10#$2 < 1500)); then die "rate: LIMIT_BYTES must be a number >= 1500"; fi
          limit=$((10#$2))
        fi
        tc_args=(replace tbf rate "${1}mbit" burst "$burst" limit "$limit")
      fi
      ;;
    clear)
      [ $# -eq 0 ] || usage
      flush drop mark markrate
      tc_args=(del)
      ;;
    *) usage ;;
  esac
  ip netns exec "${NS[$node]}" nft -f - <<<"$nft"
  case ${tc_args[0]:-} in
    del) tc -n "${NS[$node]}" qdisc del dev "$dev" root 2>/dev/null || true ;;
    replace) tc -n "${NS[$node]}" qdisc replace dev "$dev" root "${tc_args[@]:1}" ;;
  esac
}

cmd_impair() {
  need_id
  [ $# -ge 2 ] || usage
  local ls l
  IFS=, read -r -a ls <<<"$1"
  shift
  for l in "${ls[@]}"; do impair_one "$l" "$@"; done
}

cmd_show() {
  need_id
  local n
  for n in "${nodes[@]}"; do
    ns_exists "$n" || continue
    echo "== ${NS[$n]}"
    ip netns exec "${NS[$n]}" nft list table "$T" 2>/dev/null || true
    tc -n "${NS[$n]}" qdisc show | grep -v noqueue || true
  done
}

(($#)) || usage
cmd=$1
shift
case $cmd in
  up) cmd_up "$@" ;;
  down)
    [ $# -eq 0 ] || usage
    cmd_down
    ;;
  info)
    need_id
    info
    ;;
  show) cmd_show ;;
  exec)
    need_id
    [ $# -ge 2 ] || usage
    case $1 in a | b | c | r | s) ;; *) die "unknown node '$1' (a b c r s)" ;; esac
    ns_exists "$1" || die "namespace ${NS[$1]} does not exist"
    ns=${NS[$1]}
    shift
    exec ip netns exec "$ns" "$@"
    ;;
  counters) cmd_counters "$@" ;;
  impair) cmd_impair "$@" ;;
  *) usage ;;
esac
