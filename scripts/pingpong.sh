#!/usr/bin/env bash
# Runs fi_pingpong (Debian's libfabric-bin) with the `uet` provider between two
# "hosts": two network namespaces joined by a veth pair when this shell may
# create them (root), else two processes on loopback (said so in the output).
#
#   scripts/pingpong.sh PROVIDER_DIR [fi_pingpong options...]
#
# PROVIDER_DIR holds libuet-fi.so (FI_PROVIDER_PATH). Options go to both sides
# (default: -e rdm -I 100 -S all -c). Every process and namespace it creates is
# removed on exit, by PID and by the names it chose (with this shell's PID).
# UET_PINGPONG_LOOPBACK=1 forces the loopback form; UET_PINGPONG_PROV names
# another provider (e.g. "tcp;ofi_rxm") to compare with, same setup.
# Exit status: 0 when both sides exit 0 and each printed its result table.
set -euo pipefail
prov_dir=$(cd "$1" && pwd)
prov=${UET_PINGPONG_PROV:-uet}
shift
opts=("$@")
((${#opts[@]})) || opts=(-e rdm -I 100 -S all -c)

# Addresses from 198.18.0.0/15 (RFC 2544, network benchmarking), used only
# inside the namespaces this script creates.
addr_a=198.18.0.1
addr_b=198.18.0.2
ns_a="uet-a-$$"
ns_b="uet-b-$$"
veth_a="uetva$$"
veth_b="uetvb$$"
oob_port=$((47592 + $$ % 1000))
pids=()
made_ns=0
out=$(mktemp -d)

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if ((made_ns)); then
    ip netns del "$ns_a" 2>/dev/null || true
    ip netns del "$ns_b" 2>/dev/null || true
  fi
  rm -rf "$out"
}
trap cleanup EXIT

run_a=()
run_b=()
server_ip=
if [ -z "${UET_PINGPONG_LOOPBACK:-}" ] && [ "$(id -u)" -eq 0 ] && ip netns add "$ns_a" 2>/dev/null; then
  made_ns=1
  ip netns add "$ns_b"
  ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b"
  ip -n "$ns_a" addr add "$addr_a/24" dev "$veth_a"
  ip -n "$ns_b" addr add "$addr_b/24" dev "$veth_b"
  for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
  ip -n "$ns_a" link set "$veth_a" up
  ip -n "$ns_b" link set "$veth_b" up
  run_a=(ip netns exec "$ns_a" env FI_UET_ADDR="$addr_a")
  run_b=(ip netns exec "$ns_b" env FI_UET_ADDR="$addr_b")
  server_ip=$addr_a
  echo "pingpong: two network namespaces ($ns_a $addr_a <-> $ns_b $addr_b, veth)"
else
  # One host: the server keeps the UET port, the client takes an ephemeral one.
  run_a=(env FI_UET_ADDR=127.0.0.1 FI_UET_PORT=4793)
  run_b=(env FI_UET_ADDR=127.0.0.1 FI_UET_PORT=0)
  server_ip=127.0.0.1
  echo "pingpong: network namespaces not permitted here: running on loopback"
fi

export FI_PROVIDER_PATH="$prov_dir"
"${run_a[@]}" timeout 120 fi_pingpong -p "$prov" -B "$oob_port" "${opts[@]}" >"$out/server" 2>&1 &
pids+=($!)
server=$!
# The server listens on its out-of-band TCP port before the client connects.
for _ in $(seq 1 50); do
  if "${run_a[@]}" sh -c "ss -ltn 2>/dev/null | grep -q ':$oob_port '"; then break; fi
  sleep 0.1
done
rc_client=0
"${run_b[@]}" timeout 120 fi_pingpong -p "$prov" -P "$oob_port" "${opts[@]}" "$server_ip" \
  >"$out/client" 2>&1 || rc_client=$?
# The server ends with the client; if the client failed it may wait for ever.
for _ in $(seq 1 100); do
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
kill "$server" 2>/dev/null || true
rc_server=0
wait "$server" || rc_server=$?
pids=()
echo "--- client (fi_pingpong ${opts[*]} $server_ip)"
cat "$out/client"
echo "--- server"
cat "$out/server"
echo "pingpong: client exit $rc_client, server exit $rc_server"
# fi_pingpong exits 0 on some failures (a bad -S): ask for its result header too.
grep -q '^bytes' "$out/client" && grep -q '^bytes' "$out/server" &&
  ((rc_client == 0 && rc_server == 0))
