#!/usr/bin/env bash
# Several uet endpoints on one host with no configuration (ctest
# net.ports_loopback, net.ports_netns; spec-notes/provider.md "Ports"):
# fi_pingpong (libfabric-bin) server and client on the same host, rdm, msg and
# dgram (rdm and msg also tagged), data check on, with no FI_UET_*
# variable set. The first endpoint takes UDP 4793, the other one falls back to
# an ephemeral port; fi_getname carries it to the peer.
#
#   tests/net/ports_test.sh loopback PROVIDER_DIR   on this host's addresses, plus
#                                                   rdm and msg over IPv6 ::1
#                                                   (FI_UET_ADDR=::1, still no port)
#   tests/net/ports_test.sh netns PROVIDER_DIR      inside a network namespace it
#                                                   creates (lo and a veth pair,
#                                                   198.18.77.1) and deletes
#
# In the namespace 4793 is free, so the checks are strict: the server's log
# shows port 4793 and the client's says it fell back to another port. On the
# host 4793 may be held by someone else; then both fall back, which is checked
# to work too. Processes are stopped by their own PIDs.
# netns exits 77 (skipped) only where namespaces cannot be created (not root,
# or no permission); loopback never skips.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 loopback|netns PROVIDER_DIR" >&2; exit 2; }
mode=$1
prov_dir=$(cd "$2" && pwd)
for t in fi_pingpong timeout ss; do
  command -v "$t" >/dev/null || { echo "ports_test: needs $t (libfabric-bin, iproute2)" >&2; exit 1; }
done

# No FI_UET_* variable reaches the endpoints (the point of the test).
while read -r v; do unset "$v"; done < <(compgen -e | grep '^FI_UET_' || true)
export FI_PROVIDER_PATH=$prov_dir FI_PROVIDER=uet
# The provider's port decisions are logged at info on ep_ctrl.
export FI_LOG_LEVEL=info FI_LOG_PROV=uet FI_LOG_SUBSYS=ep_ctrl

work=$(mktemp -d)
ns=""
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "$ns" ] && ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

in_ns=()
if [ "$mode" = netns ]; then
  command -v ip >/dev/null || { echo "ports_test: no ip(8): skipped"; exit 77; }
  ns=uetports$$
  if ! ip netns add "$ns" 2>"$work/ns.err"; then
    echo "ports_test: cannot create a network namespace ($(cat "$work/ns.err")): skipped"
    ns=""
    exit 77
  fi
  ip -n "$ns" link set lo up
  # A veth pair inside the namespace: the provider's default address is then
  # 198.18.77.1 (the first up, non-loopback IPv4 address), as on a real host.
  ip -n "$ns" link add v0 type veth peer name v1
  ip -n "$ns" addr add 198.18.77.1/24 dev v0
  ip -n "$ns" link set v0 up
  ip -n "$ns" link set v1 up
  in_ns=(ip netns exec "$ns")
elif [ "$mode" != loopback ]; then
  echo "usage: $0 loopback|netns PROVIDER_DIR" >&2; exit 2
fi

fail() {
  echo "ports_test: FAIL: $*" >&2
  for f in "$work"/*.log; do [ -e "$f" ] && { echo "--- $f" >&2; grep -v '<info> variable' "$f" | tail -15 >&2; }; done
  exit 1
}

# The UDP port in the provider's "enabled"/"listening" line of a log.
bound_port() {
  sed -n -E 's/.*uet: (endpoint|listening on) uet:\/\/(\[[^]]*\]|[0-9.]+):([0-9]+)\/.*/\3/p' "$1" | head -1
}

# run LABEL SERVER_ADDR [ENV...] -- FI_PINGPONG_ARGS...: one server + client pair.
run() {
  local label=$1 dest=$2 extra=() args=() oob server rc=0
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do extra+=("$1"); shift; done
  shift
  args=("$@")
  oob=$((42000 + RANDOM % 8000))
  local start=$SECONDS
  "${in_ns[@]}" env "${extra[@]}" timeout 30 fi_pingpong -p uet -B "$oob" "${args[@]}" \
    >"$work/$label.server.log" 2>&1 &
  server=$!
  pids+=("$server")
  for _ in $(seq 1 100); do
    "${in_ns[@]}" ss -Hltn "sport = :$oob" | grep -q . && break
    sleep 0.05
  done
  "${in_ns[@]}" env "${extra[@]}" timeout 30 fi_pingpong -p uet -P "$oob" "${args[@]}" "$dest" \
    >"$work/$label.client.log" 2>&1 || rc=$?
  wait "$server" || rc=$((rc ? rc : $?))
  [ "$rc" -eq 0 ] || fail "$label: fi_pingpong ${args[*]} exited $rc"
  grep -q "ret=-98\|Address already in use" "$work"/"$label".*.log && fail "$label: EADDRINUSE"
  local sp cp
  sp=$(bound_port "$work/$label.server.log")
  cp=$(bound_port "$work/$label.client.log")
  [ -n "$sp" ] && [ -n "$cp" ] || fail "$label: no bound port in the provider's log"
  [ "$sp" != "$cp" ] || fail "$label: server and client both on port $sp"
  if [ "$mode" = netns ] || [ "$sp" = 4793 ]; then
    [ "$sp" = 4793 ] || fail "$label: the first endpoint got port $sp, want 4793 (free here)"
    # MSG clients always bind an ephemeral port; RDM / DGRAM ones fell back.
    if [[ " ${args[*]} " != *" msg "* ]]; then
      grep -q "UDP port 4793 on .* is taken .*: using UDP port $cp" "$work/$label.client.log" ||
        fail "$label: the client's log does not say it fell back from 4793 to $cp"
    fi
  fi
  echo "ports_test: $mode $label: ok (server port $sp, client port $cp, $((SECONDS - start)) s)"
  rm -f "$work/$label".*.log
}

dest=127.0.0.1
[ "$mode" = netns ] && dest=198.18.77.1
# One size per run keeps each pair well under a second; together the runs
# cover one byte, a packet, a multi-packet message and a rendezvous one (dgram:
# every size up to one packet).
run rdm "$dest" -- -e rdm -I 5 -S 1048576 -c
run msg "$dest" -- -e msg -I 5 -S 65536 -c
run dgram "$dest" -- -e dgram -I 5 -S all -c
run rdm_tagged "$dest" -- -e rdm -m tagged -I 5 -S 1 -c
run msg_tagged "$dest" -- -e msg -m tagged -I 5 -S 4096 -c
if [ "$mode" = loopback ]; then
  # IPv6: the endpoints on ::1 (FI_UET_ADDR names the address, no port).
  run rdm_ipv6 ::1 FI_UET_ADDR=::1 -- -6 -e rdm -I 5 -S 65536 -c
  run msg_ipv6 ::1 FI_UET_ADDR=::1 -- -6 -e msg -I 5 -S 4096 -c
fi
echo "ports_test: $mode: all passed"
