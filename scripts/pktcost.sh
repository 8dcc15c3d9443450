#!/usr/bin/env bash
# Measurement (not a test): our instructions per MiB on the bulk path
# (spec-notes/provider.md "Per-packet cost (issue 26)"). fi_pingpong rdm 1 MiB
# on loopback, server native, client under callgrind; the client's Ir of an
# I=50 run minus an I=10 run (setup cancels), / 40 round trips, / 2 MiB moved
# per round trip (1 MiB each way).
#
#   scripts/pktcost.sh PROVIDER_DIR [VAR=value ...]
#
# PROVIDER_DIR holds libuet-fi.so. The VAR=value pairs go to both sides, e.g.
# FI_UET_ADDR=127.0.0.1 FI_UET_PAYLOAD=1324 (one EV, 1500-path payload).
# FI_UET_RTO_FLOOR_US defaults to 200000 here: the slowed client must not
# cause spurious resends. The totals move by 1-3 % between runs (batching
# depends on timing): alternate builds and run each several times. The
# callgrind files stay in $UET_PKTCOST_DIR (default a fresh mktemp -d) for
# callgrind_annotate.
set -euo pipefail
lib=$(cd "$1" && pwd)
shift
out=${UET_PKTCOST_DIR:-$(mktemp -d)}
run() {  # iterations -> client Ir
  local iter=$1 port=$((47600 + RANDOM % 300))
  env FI_PROVIDER_PATH="$lib" FI_PROVIDER=uet FI_UET_RTO_FLOOR_US=200000 "${@:2}" \
    fi_pingpong -p uet -e rdm -S 1048576 -I "$iter" -B "$port" >"$out/server$iter.log" 2>&1 &
  local server=$!
  sleep 0.5
  env FI_PROVIDER_PATH="$lib" FI_PROVIDER=uet FI_UET_RTO_FLOOR_US=200000 "${@:2}" \
    valgrind --tool=callgrind --callgrind-out-file="$out/client$iter.cg" \
    fi_pingpong -p uet -e rdm -S 1048576 -I "$iter" -P "$port" 127.0.0.1 \
    >"$out/client$iter.log" 2>&1
  wait "$server"
  awk '/^summary:/ {print $2}' "$out/client$iter.cg"
}
big=$(run 50 "$@")
small=$(run 10 "$@")
echo "client Ir per round trip: $(((big - small) / 40)), per MiB moved: $(((big - small) / 80))"
echo "callgrind files: $out/client50.cg, $out/client10.cg"
