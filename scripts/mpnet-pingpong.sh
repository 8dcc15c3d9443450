# Library (source it) for fi_pingpong runs through the `uet` provider on the
# two-path network of scripts/mpnet.sh, shared by tests/net/multipath_test.sh
# and scripts/bench-multipath.sh. The caller sets:
#   prov_dir  folder holding libuet-fi.so
#   tmp       a scratch folder (logs: $tmp/LABEL.{server,client})
#   pids      an array; every process started is appended (the caller's trap
#             stops them by PID)
#   fail MSG  a function that reports and exits
# and has eval'd `scripts/mpnet.sh up` (MPNET_NS_*, MPNET_ADDR_*). EV sockets
# are pinned (FI_UET_EV_PORT_BASE: 47000 on the clients, 46000 + 100 per port
# step on b's servers), so the same EVs take the same links on every run.
# The provider logs its PDS counters at info level when an endpoint closes:
# counter/retx read them.

# pp_start LABEL CLIENT_NODE(a|c) UET_PORT EVS SIZE ITERS [VAR=VALUE...]
# Starts a fi_pingpong server in b (on UDP port UET_PORT) and, once it
# listens, its client in CLIENT_NODE, both in the background; logs go to
# $tmp/LABEL.{server,client}.
pp_start() {
  local label=$1 node=$2 port=$3 evs=$4 size=$5 iters=$6
  shift 6
  local oob=$((41000 + RANDOM % 8000)) ns addr
  local env=(env FI_PROVIDER_PATH="$prov_dir" FI_PROVIDER=uet FI_LOG_LEVEL=info FI_LOG_PROV=uet
    FI_UET_EV_COUNT="$evs" FI_UET_EV_WIDEN=0 FI_UET_PORT="$port" "$@")
  # Each server in b its own EV port range.
  ip netns exec "$MPNET_NS_B" "${env[@]}" FI_UET_ADDR="$MPNET_ADDR_B" \
    FI_UET_EV_PORT_BASE=$((46000 + 100 * (port - 4793))) \
    timeout 90 fi_pingpong -p uet -e rdm -B "$oob" -S "$size" -I "$iters" -c \
    >"$tmp/$label.server" 2>&1 &
  pids+=($!)
  eval "$label"_server=$!
  for _ in $(seq 1 100); do
    ip netns exec "$MPNET_NS_B" ss -Hltn "sport = :$oob" | grep -q . && break
    sleep 0.1
  done
  if [ "$node" = a ]; then ns=$MPNET_NS_A addr=$MPNET_ADDR_A; else ns=$MPNET_NS_C addr=$MPNET_ADDR_C; fi
  ip netns exec "$ns" "${env[@]}" FI_UET_ADDR="$addr" FI_UET_EV_PORT_BASE=47000 \
    timeout 90 fi_pingpong -p uet -e rdm -P "$oob" -S "$size" -I "$iters" -c "$MPNET_ADDR_B" \
    >"$tmp/$label.client" 2>&1 &
  pids+=($!)
  eval "$label"_client=$!
}

# pp_wait LABEL: waits for both sides; fails the test unless both exit 0.
pp_wait() {
  local label=$1 rc=0 s c
  s=$(eval echo "\$${label}_server")
  c=$(eval echo "\$${label}_client")
  wait "$c" || rc=$?
  wait "$s" || rc=$((rc ? rc : $?))
  if [ "$rc" -ne 0 ]; then
    grep -v "<info>" "$tmp/$label.client" "$tmp/$label.server" >&2 || true
    fail "$label: fi_pingpong exited $rc"
  fi
}

# mbps LABEL: fi_pingpong's MB/sec for the run.
mbps() { awk '$1 ~ /^[0-9.]+[kmg]?$/ && NF >= 7 {print $6; exit}' "$tmp/$1.client"; }

# counter LABEL NAME: the PDS counter NAME summed over both sides (0 if absent).
counter() {
  cat "$tmp/$1.client" "$tmp/$1.server" | grep -o " PDS:.*" | tr ' ' '\n' |
    awk -F= -v n="$2" '$1 == n {s += $2} END {print s + 0}'
}
# retx LABEL: "TOTAL (T timeout, F fast)"
retx() {
  local t f
  t=$(counter "$1" retransmissions_timeout) f=$(counter "$1" retransmissions_fast)
  echo "$((t + f)) ($t timeout, $f fast)"
}

