#!/usr/bin/env bash
# Runs fi_pingpong (Debian's libfabric-bin 1.17) with the `uet` provider (or
# another one) between two "hosts": two network namespaces joined by a veth pair
# when this shell may create them (root), else two processes on loopback (said
# so in the output).
#
#   scripts/pingpong.sh PROVIDER_DIR [fi_pingpong options...]
#
# PROVIDER_DIR holds libuet-fi.so (FI_PROVIDER_PATH). The options go to both
# sides unchanged (default: -e rdm -I 100 -S all -c); the client also gets the
# server's address. `-e rdm`, `-e dgram` and `-e msg` need nothing else from
# this script (fi_pingpong exchanges the endpoint names, or the passive
# endpoint's name for msg, over its own TCP socket).
#
# Environment:
#   UET_PINGPONG_LOOPBACK=1   loopback form even where namespaces are possible
#                             (no port pinned: the first endpoint takes 4793 when
#                             free, the other an ephemeral port, as users run it);
#                             unset, empty or 0: namespaces when possible.
#   UET_PINGPONG_PROV=NAME    provider for -p (default uet), e.g. "tcp;ofi_rxm",
#                             "udp;ofi_rxd", "udp", "net": same setup, to compare.
#   UET_PINGPONG_IPV6=1       IPv6 (unset, empty or 0: IPv4): the namespaces get
#                             2001:db8:1::1/64 (server) and 2001:db8:1::2/64
#                             (client) with `nodad`, loopback uses ::1;
#                             FI_UET_ADDR is set to them and fi_pingpong gets -6
#                             (its out-of-band TCP socket is IPv4 unless -6; the
#                             client's argument is the server's IPv6 address;
#                             fi_pingpong passes no node/service to fi_getinfo,
#                             so the provider's source address is FI_UET_ADDR).
#   UET_PINGPONG_LOSS_PCT=N   0..100: both namespaces get an nftables table
#                             `inet uet_pingpong` dropping N % of incoming UDP at
#                             random (numgen random mod 100 < N), with counters
#                             `seen` and `dropped`, printed at the end: the
#                             server's for UET_PINGPONG_LOSS_PORTS, the client's
#                             for every UDP port (its ports are ephemeral for
#                             msg; fi_pingpong's own socket is TCP). Both
#                             directions lose packets, ACKs included (both veths
#                             get gso_max_segs 1 so that UDP GSO batches are
#                             dropped per packet, not per batch). Needs namespaces:
#                             with loopback it says so and exits 2. A lost dgram
#                             packet hangs fi_pingpong until the timeout.
#   UET_PINGPONG_LOSS_PORTS   UDP destination ports the server-side loss applies
#                             to, a port or a range "A-B" (default 4793, the UET
#                             port, for uet; 1-65535 for other providers, whose
#                             ports are ephemeral).
#   UET_PINGPONG_SERVER_ENV="VAR=value ..."  extra environment for the server
#   UET_PINGPONG_CLIENT_ENV="VAR=value ..."  and for the client only (e.g. a
#                             different FI_UET_TSS_KEY_FILE); space-separated.
#   UET_PINGPONG_DURING="CMD" run CMD (bash -c) while the transfer runs, started
#                             right after the client, in the namespace that
#                             UET_PINGPONG_DURING_NS names (on the host with
#                             loopback); its output is shown as "--- during";
#                             the script waits for it. CMD's environment has
#                             UET_PINGPONG_SERVER_ADDR, UET_PINGPONG_CLIENT_ADDR
#                             (the fi_pingpong processes' addresses),
#                             UET_PINGPONG_SERVER_NS, UET_PINGPONG_CLIENT_NS
#                             (namespace names, empty on loopback) and, with a
#                             third namespace, UET_PINGPONG_THIRD_NS,
#                             UET_PINGPONG_THIRD_ADDR, UET_PINGPONG_THIRD_DEV
#                             (its veth).
#   UET_PINGPONG_DURING_NS=client|server|third
#                             where CMD runs (default client). `third`: a third
#                             namespace uet-c-PID, an attacker beside the
#                             server: its own veth pair to the server's
#                             namespace (uetvsPID there, 198.18.1.1/24 or
#                             2001:db8:2::1/64; uetvtPID in the third,
#                             198.18.1.2/24 or 2001:db8:2::2/64), a route to the
#                             client/server subnet through the server's
#                             namespace, and the client's address as a /32
#                             (/128) on its loopback, so that CMD can send with
#                             the client's source address (bind it) or with its
#                             own. With IPv4 the server's namespace gets
#                             rp_filter 0 (all, default, uetvsPID): a spoofed
#                             client source arrives on the "wrong" interface: the
#                             kernel's reverse-path check would drop it before
#                             any socket saw it, which a real attacker on the
#                             client's path would not meet. No forwarding: the
#                             third namespace reaches the server only. Needs
#                             namespaces (exit 2 on loopback); the capture
#                             (UET_PINGPONG_CAPTURE) does not see its traffic.
#   UET_PINGPONG_CAPTURE=FILE with namespaces: tcpdump writes the UDP packets on
#                             the server's veth to FILE (pcap) during the run.
#   UET_PINGPONG_TIMEOUT=S    each fi_pingpong runs under `timeout S` (default 120).
#   UET_PINGPONG_CPUS="S C"   pin the server to CPU list S and the client to C
#                             (taskset -c), e.g. "0 1": keeps the two spinning
#                             processes off one core on a loaded machine.
#   UET_PINGPONG_NICE=N       run both fi_pingpong processes at nice N (-20..19).
#   UET_PINGPONG_FI_PINGPONG=PATH  the fi_pingpong to run (default: fi_pingpong
#                             from PATH), e.g. one unpacked into a private prefix
#                             (scripts/device-bench.sh); LD_LIBRARY_PATH and the
#                             rest of the environment reach it also inside the
#                             namespaces (`ip netns exec` and `env` keep them).
#   UET_PINGPONG_TIME=PATH    GNU time for the CPU seconds (default /usr/bin/time,
#                             else `time` from PATH; none: no "cpu" lines).
#   FI_UET_IMPAIR_DROP_PPM, FI_UET_IMPAIR_DUP_PPM, FI_UET_IMPAIR_REORDER_PPM,
#   FI_UET_IMPAIR_SEED (and any other FI_UET_IMPAIR_*): the provider's in-stack
#                             impairment; passed explicitly (env ...) to both
#                             fi_pingpong processes, also inside the namespaces,
#                             and listed in the output. With uet, both sides also
#                             get FI_LOG_LEVEL=info FI_LOG_SUBSYS=ep_data, so
#                             each endpoint logs its I/O counters when it closes;
#                             the script prints those lines and fails (exit 1)
#                             when no datagram was dropped, duplicated or
#                             reordered: an impairment that did not happen
#                             tested nothing.
#
# Output: both sides' fi_pingpong output ("--- client ...", "--- server"), then
# "pingpong: cpu client|server USER SYS" (CPU seconds of that fi_pingpong
# process, from GNU time, when installed), "pingpong: nft seen P dropped D"
# with loss, and "pingpong: client exit C, server exit S".
#
# Creates: two namespaces uet-a-PID / uet-b-PID (this shell's PID) with a veth
# pair uetvaPID / uetvbPID and, with loss, the nft table inside uet-a-PID; with
# UET_PINGPONG_DURING_NS=third also uet-c-PID and the veth pair uetvsPID /
# uetvtPID; a temporary directory; the two fi_pingpong processes (and CMD).
# All are removed on every exit path (normal, failure, timeout, INT/TERM/HUP)
# by the trap: processes by their own PIDs (each fi_pingpong runs under
# `timeout`, which passes the signal on to it), namespaces (and with them the
# veth pairs and the nft table) by the names it chose. A SIGKILL of this
# script leaves the namespaces; the fi_pingpong processes still end at their
# timeout.
#
# Exit status: the client's non-zero exit status (124: timed out), else the
# server's, else 1 when a side did not print its result table, else 0;
# 2 for a usage error (bad variable, loss without namespaces).
set -euo pipefail

die() {
  echo "pingpong: $*" >&2
  exit 2
}

[ $# -ge 1 ] || die "usage: $0 PROVIDER_DIR [fi_pingpong options...]"
prov_dir=$(cd "$1" && pwd) || die "no directory $1"
shift
prov=${UET_PINGPONG_PROV:-uet}
opts=("$@")
((${#opts[@]})) || opts=(-e rdm -I 100 -S all -c)
ipv6=${UET_PINGPONG_IPV6:-}
if [ "$ipv6" = 0 ]; then ipv6=; fi
loopback=${UET_PINGPONG_LOOPBACK:-}
if [ "$loopback" = 0 ]; then loopback=; fi
loss=${UET_PINGPONG_LOSS_PCT:-}
tmo=${UET_PINGPONG_TIMEOUT:-120}
pin_a=()
pin_b=()
if [ -n "${UET_PINGPONG_CPUS:-}" ]; then
  read -r cpus_a cpus_b extra <<<"$UET_PINGPONG_CPUS"
  if [ -z "${cpus_b:-}" ] || [ -n "${extra:-}" ] || ! [[ "$cpus_a$cpus_b" =~ ^[0-9,-]+$ ]]; then
    die "UET_PINGPONG_CPUS must be two CPU lists, server then client, e.g. \"0 1\""
  fi
  pin_a=(taskset -c "$cpus_a")
  pin_b=(taskset -c "$cpus_b")
fi
prio=()
if [ -n "${UET_PINGPONG_NICE:-}" ]; then
  [[ "$UET_PINGPONG_NICE" =~ ^-?[0-9]+$ ]] || die "UET_PINGPONG_NICE must be a number"
  prio=(nice -n "$UET_PINGPONG_NICE")
fi
if ! [[ "$tmo" =~ ^[0-9]+$ ]] || ((tmo == 0)); then
  die "UET_PINGPONG_TIMEOUT must be a positive number of seconds"
fi
if [ -n "$loss" ]; then
  if ! [[ "$loss" =~ ^[0-9]+$ ]] || ((loss > 100)); then die "UET_PINGPONG_LOSS_PCT must be 0..100"; fi
  if [ "$prov" = uet ]; then loss_ports=${UET_PINGPONG_LOSS_PORTS:-4793}; else loss_ports=${UET_PINGPONG_LOSS_PORTS:-1-65535}; fi
  [[ "$loss_ports" =~ ^[0-9]+(-[0-9]+)?$ ]] || die "UET_PINGPONG_LOSS_PORTS must be PORT or A-B"
  [ -z "$loopback" ] || die "loss (UET_PINGPONG_LOSS_PCT) needs the two namespaces; not supported with UET_PINGPONG_LOOPBACK"
  command -v nft >/dev/null || die "loss needs nft (apt-get install nftables)"
fi

# In-stack impairment parameters of the provider, passed on explicitly.
impair_env=()
while IFS= read -r v; do
  if [[ "$v" == FI_UET_IMPAIR_* ]]; then impair_env+=("$v=${!v}"); fi
done < <(compgen -e)
if ((${#impair_env[@]})) && [ "$prov" = uet ]; then
  impair_env+=(FI_LOG_LEVEL=info FI_LOG_SUBSYS=ep_data)
fi
read -r -a server_env <<<"${UET_PINGPONG_SERVER_ENV:-}"
read -r -a client_env <<<"${UET_PINGPONG_CLIENT_ENV:-}"
for v in "${server_env[@]}" "${client_env[@]}"; do
  [[ "$v" == *=* ]] || die "UET_PINGPONG_SERVER_ENV / _CLIENT_ENV: '$v' is not VAR=value"
done
during_ns=${UET_PINGPONG_DURING_NS:-client}
case "$during_ns" in
  client | server | third) ;;
  *) die "UET_PINGPONG_DURING_NS must be client, server or third" ;;
esac
capture=${UET_PINGPONG_CAPTURE:-}
if [ -n "$capture" ]; then
  command -v tcpdump >/dev/null || die "UET_PINGPONG_CAPTURE needs tcpdump (apt-get install tcpdump)"
fi

# Addresses from 198.18.0.0/15 (RFC 2544, network benchmarking) and
# 2001:db8::/32 (documentation), used only inside the namespaces created here.
# The third namespace's link to the server: 198.18.1.0/24, 2001:db8:2::/64.
if [ -n "$ipv6" ]; then
  addr_a=2001:db8:1::1
  addr_b=2001:db8:1::2
  net_ab=2001:db8:1::/64
  addr_s=2001:db8:2::1
  addr_c=2001:db8:2::2
  plen=64
  host_plen=128
  lo_addr=::1
else
  addr_a=198.18.0.1
  addr_b=198.18.0.2
  net_ab=198.18.0.0/24
  addr_s=198.18.1.1
  addr_c=198.18.1.2
  plen=24
  host_plen=32
  lo_addr=127.0.0.1
fi
ns_a="uet-a-$$"
ns_b="uet-b-$$"
ns_c="uet-c-$$"
veth_a="uetva$$"
veth_b="uetvb$$"
veth_s="uetvs$$"
veth_c="uetvt$$"
oob_port=$((47592 + $$ % 1000))
pids=()
made_ns=0
made_ns_c=0
capture_pid=
nft_done=1
shown=0
out=$(mktemp -d)

nft_report() {
  ((nft_done)) && return 0
  nft_done=1
  local seen dropped ns side
  for side in server client; do
    ns=$ns_a
    [ "$side" = client ] && ns=$ns_b
    seen=$(ip netns exec "$ns" nft list counter inet uet_pingpong seen 2>/dev/null | awk '/packets/ {print $2}') || true
    dropped=$(ip netns exec "$ns" nft list counter inet uet_pingpong dropped 2>/dev/null | awk '/packets/ {print $2}') || true
    echo "pingpong: nft $side seen ${seen:-?} dropped ${dropped:-?} (incoming UDP, $loss % asked)"
  done
}

# nft_loss NAMESPACE PORTS: drop $loss % of the UDP to PORTS arriving there.
nft_loss() {
  ip netns exec "$1" nft -f - <<EOF
table inet uet_pingpong {
  counter seen { }
  counter dropped { }
  chain input {
    type filter hook input priority filter; policy accept;
    udp dport $2 counter name seen
    udp dport $2 numgen random mod 100 < $loss counter name dropped drop
  }
}
EOF
}

show() {
  ((shown)) && return 0
  shown=1
  echo "--- client (fi_pingpong -p $prov ${opts[*]} ${client_extra[*]} $server_ip)"
  cat "$out/client" 2>/dev/null || true
  echo "--- server"
  cat "$out/server" 2>/dev/null || true
  local side
  for side in client server; do
    if [ -s "$out/$side.cpu" ]; then
      echo "pingpong: cpu $side $(tail -n 1 "$out/$side.cpu") (user sys seconds)"
    fi
  done
}

# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if ((${#pids[@]})); then
    show
    echo "pingpong: interrupted, fi_pingpong processes ${pids[*]} stopped"
  fi
  if ((made_ns)); then
    nft_report
    ip netns del "$ns_a" 2>/dev/null || true
    ip netns del "$ns_b" 2>/dev/null || true
  fi
  if ((made_ns_c)); then ip netns del "$ns_c" 2>/dev/null || true; fi
  rm -rf "$out"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# add_third_ns: the third namespace beside the server (UET_PINGPONG_DURING_NS=third).
add_third_ns() {
  ip netns add "$ns_c"
  made_ns_c=1
  ip link add "$veth_s" netns "$ns_a" type veth peer name "$veth_c" netns "$ns_c"
  ip -n "$ns_c" link set lo up
  if [ -n "$ipv6" ]; then
    for ns in "$ns_a" "$ns_c"; do ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0; done
    ip -n "$ns_a" addr add "$addr_s/$plen" dev "$veth_s" nodad
    ip -n "$ns_c" addr add "$addr_c/$plen" dev "$veth_c" nodad
    ip -n "$ns_c" addr add "$addr_b/$host_plen" dev lo nodad
  else
    ip -n "$ns_a" addr add "$addr_s/$plen" dev "$veth_s"
    ip -n "$ns_c" addr add "$addr_c/$plen" dev "$veth_c"
    ip -n "$ns_c" addr add "$addr_b/$host_plen" dev lo
    # ARP from the third namespace asks with its own link address, never with
    # the client's (which it holds on lo).
    ip netns exec "$ns_c" sysctl -qw net.ipv4.conf.all.arp_announce=2
    # The effective rp_filter of an interface is max(all, interface).
    ip netns exec "$ns_a" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
      net.ipv4.conf.default.rp_filter=0 "net.ipv4.conf.$veth_s.rp_filter=0"
  fi
  ip -n "$ns_a" link set "$veth_s" up
  ip -n "$ns_c" link set "$veth_c" up
  ip -n "$ns_c" route add "$net_ab" via "$addr_s"
  local rp="; rp_filter 0 in $ns_a"
  [ -z "$ipv6" ] || rp=
  echo "pingpong: third network namespace ($ns_c $addr_c, also holding $addr_b on lo <-> $ns_a $addr_s, veth$rp)"
}

run_a=()
run_b=()
run_c=()
client_extra=()
server_ip=
client_ip=
if [ -z "$loopback" ] && [ "$(id -u)" -eq 0 ] && ip netns add "$ns_a" 2>/dev/null; then
  made_ns=1
  ip netns add "$ns_b"
  ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b"
  if [ -n "$ipv6" ]; then
    for ns in "$ns_a" "$ns_b"; do ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0; done
    ip -n "$ns_a" addr add "$addr_a/$plen" dev "$veth_a" nodad
    ip -n "$ns_b" addr add "$addr_b/$plen" dev "$veth_b" nodad
  else
    ip -n "$ns_a" addr add "$addr_a/$plen" dev "$veth_a"
    ip -n "$ns_b" addr add "$addr_b/$plen" dev "$veth_b"
  fi
  for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
  ip -n "$ns_a" link set "$veth_a" up
  ip -n "$ns_b" link set "$veth_b" up
  run_a=(ip netns exec "$ns_a" env FI_UET_ADDR="$addr_a" "${impair_env[@]}" "${server_env[@]}")
  run_b=(ip netns exec "$ns_b" env FI_UET_ADDR="$addr_b" "${impair_env[@]}" "${client_env[@]}")
  server_ip=$addr_a
  client_ip=$addr_b
  echo "pingpong: two network namespaces ($ns_a $addr_a <-> $ns_b $addr_b, veth)"
  if [ "$during_ns" = third ]; then
    add_third_ns
    run_c=(ip netns exec "$ns_c" env UET_PINGPONG_THIRD_NS="$ns_c" UET_PINGPONG_THIRD_ADDR="$addr_c"
      UET_PINGPONG_THIRD_DEV="$veth_c")
  fi
  if [ -n "$loss" ]; then
    # The provider sends UDP GSO batches; across veth a batch stays one skb up
    # to the receiving socket, so nft would drop whole batches. One segment per
    # skb on both sides: the loss is per packet.
    ip -n "$ns_a" link set "$veth_a" gso_max_segs 1
    ip -n "$ns_b" link set "$veth_b" gso_max_segs 1
    nft_done=0
    nft_loss "$ns_a" "$loss_ports"
    nft_loss "$ns_b" 1-65535
    echo "pingpong: nft tables inet uet_pingpong drop $loss % of incoming UDP in $ns_a (port $loss_ports) and $ns_b (every port)"
  fi
else
  if [ -n "$loss" ]; then
    die "network namespaces not permitted here: loss (UET_PINGPONG_LOSS_PCT) is not supported on loopback"
  fi
  if [ "$during_ns" = third ]; then
    die "UET_PINGPONG_DURING_NS=third needs network namespaces (root, not UET_PINGPONG_LOOPBACK)"
  fi
  # One host, no FI_UET_PORT: each endpoint takes 4793 when free, else an
  # ephemeral port (spec-notes/provider.md "Ports"). Pinning 4793 here made the
  # run fail whenever a parallel test's endpoint held it.
  run_a=(env FI_UET_ADDR="$lo_addr" "${impair_env[@]}" "${server_env[@]}")
  run_b=(env FI_UET_ADDR="$lo_addr" "${impair_env[@]}" "${client_env[@]}")
  server_ip=$lo_addr
  client_ip=$lo_addr
  if [ -n "$loopback" ]; then
    echo "pingpong: loopback ($lo_addr, UET_PINGPONG_LOOPBACK set)"
  else
    echo "pingpong: network namespaces not permitted here: running on loopback ($lo_addr)"
  fi
fi
((${#impair_env[@]})) && echo "pingpong: in-stack impairment ${impair_env[*]} (both sides)"

if [ -n "$ipv6" ]; then
  have6=0
  for o in "${opts[@]}"; do [ "$o" = -6 ] && have6=1; done
  ((have6)) || client_extra+=(-6)
fi

# Each side: [nice] [taskset] `timeout` (all exec, so the PID kept is timeout's;
# it passes a TERM on to its process group) around GNU time (CPU seconds, when
# installed) around fi_pingpong.
fi_pingpong=${UET_PINGPONG_FI_PINGPONG:-fi_pingpong}
time_bin=${UET_PINGPONG_TIME:-/usr/bin/time}
[ -x "$time_bin" ] || time_bin=$(type -P time || true)
cpu_a=()
cpu_b=()
if [ -n "$time_bin" ]; then
  cpu_a=("$time_bin" -q -f '%U %S' -o "$out/server.cpu")
  cpu_b=("$time_bin" -q -f '%U %S' -o "$out/client.cpu")
fi

# listening PID PORT: a TCP socket listens on PORT in PID's network namespace:
# /proc/PID/net/tcp{,6} has a line with local port PORT in state 0A (LISTEN).
# One grep, cheap enough to poll every 10 ms (bash's `read` takes ~100 ms on a
# 50-line table: it reads /proc byte by byte), and only once PID is in its
# namespace (`ip netns exec` has switched), never the host's table before that.
listening() {
  local hex
  printf -v hex '%04X' "$2"
  if ((made_ns)) && [[ /proc/$1/ns/net -ef /proc/$$/ns/net ]]; then return 1; fi
  grep -qsE "^ *[0-9]+: [0-9A-F]+:$hex [0-9A-F]+:[0-9A-F]+ 0A " "/proc/$1/net/tcp" "/proc/$1/net/tcp6"
}

if [ -n "$capture" ]; then
  ((made_ns)) || die "UET_PINGPONG_CAPTURE needs the two namespaces"
  "${run_a[@]}" tcpdump -i "$veth_a" -U -s 0 -w "$capture" udp >"$out/tcpdump" 2>&1 &
  pids+=("$!")
  capture_pid=$!
  # tcpdump says "listening on" once its socket is open; give it a moment more
  # to attach its filter before the first packet.
  for _ in $(seq 1 50); do
    grep -q "listening on" "$out/tcpdump" 2>/dev/null && break
    sleep 0.1
  done
  sleep 0.5
fi

export FI_PROVIDER_PATH="$prov_dir"
"${run_a[@]}" "${prio[@]}" "${pin_a[@]}" timeout "$tmo" "${cpu_a[@]}" "$fi_pingpong" -p "$prov" -B "$oob_port" "${opts[@]}" \
  "${client_extra[@]}" >"$out/server" 2>&1 &
server=$!
pids+=("$server")
# The server listens on its out-of-band TCP port before the client connects
# (fi_pingpong's client connects once, no retry): 1000 looks, 10 s or more.
for _ in $(seq 1 1000); do
  kill -0 "$server" 2>/dev/null || break
  listening "$server" "$oob_port" && break
  sleep 0.01
done
rc_client=0
"${run_b[@]}" "${prio[@]}" "${pin_b[@]}" timeout "$tmo" "${cpu_b[@]}" "$fi_pingpong" -p "$prov" -P "$oob_port" "${opts[@]}" \
  "${client_extra[@]}" "$server_ip" >"$out/client" 2>&1 &
client=$!
pids+=("$client")
during_pid=
if [ -n "${UET_PINGPONG_DURING:-}" ]; then
  case "$during_ns" in
    client) run_d=("${run_b[@]}") ;;
    server) run_d=("${run_a[@]}") ;;
    third) run_d=("${run_c[@]}") ;;
  esac
  ns_names=("" "")
  ((made_ns)) && ns_names=("$ns_a" "$ns_b")
  "${run_d[@]}" env UET_PINGPONG_SERVER_ADDR="$server_ip" UET_PINGPONG_CLIENT_ADDR="$client_ip" \
    UET_PINGPONG_SERVER_NS="${ns_names[0]}" UET_PINGPONG_CLIENT_NS="${ns_names[1]}" \
    bash -c "$UET_PINGPONG_DURING" >"$out/during" 2>&1 &
  during_pid=$!
  pids+=("$during_pid")
fi
wait "$client" || rc_client=$?
if [ -n "$during_pid" ]; then
  wait "$during_pid" || echo "pingpong: the UET_PINGPONG_DURING command failed ($?)"
  echo "--- during"
  cat "$out/during"
fi
pids=("$server" ${capture_pid:+"$capture_pid"})
# The server ends with the client; if the client failed it may wait for ever.
# 1000 looks 10 ms apart (300 after a failed client): 10 s (3 s) or more.
grace=1000
((rc_client == 0)) || grace=300
for _ in $(seq 1 "$grace"); do
  kill -0 "$server" 2>/dev/null || break
  sleep 0.01
done
kill "$server" 2>/dev/null || true
rc_server=0
wait "$server" || rc_server=$?
if [ -n "${capture_pid:-}" ]; then
  kill "$capture_pid" 2>/dev/null || true  # TERM: tcpdump writes what it has and exits
  wait "$capture_pid" 2>/dev/null || true
  echo "pingpong: capture $capture ($(grep -o '[0-9]* packets captured' "$out/tcpdump" || echo '? packets'))"
fi
pids=()
show
((made_ns)) && nft_report
echo "pingpong: client exit $rc_client, server exit $rc_server"
((rc_client == 0)) || exit "$rc_client"
((rc_server == 0)) || exit "$rc_server"
# fi_pingpong exits 0 on some failures (a bad -S): ask for its result header too.
if ! grep -q '^bytes' "$out/client" || ! grep -q '^bytes' "$out/server"; then
  echo "pingpong: a side printed no result table" >&2
  exit 1
fi
if ((${#impair_env[@]})) && [ "$prov" = uet ]; then
  # "... impairment dropped D duplicated U reordered R" per closed endpoint.
  impaired=$(cat "$out/client" "$out/server" | grep -o 'impairment dropped [0-9]* duplicated [0-9]* reordered [0-9]*' |
    awk '{ n += $3 + $5 + $7 } END { print n + 0 }')
  echo "pingpong: in-stack impairment touched $impaired datagrams (both sides, all endpoints)"
  if ((impaired == 0)); then
    echo "pingpong: impairment was asked for but no endpoint reported an impaired datagram" >&2
    exit 1
  fi
fi
exit 0
