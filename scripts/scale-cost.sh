#!/usr/bin/env bash
# Measurement (not a test): instructions per packet as the peer count grows
# (spec-notes/pds.md "Scale model (issue 29)"). uet-scale-model's hub model
# (node 0 sends R rounds of one 256-byte message to each of its P peers, every
# PDC kept open) under callgrind; Ir of a 3-round run minus a 2-round run
# (engine creation, PDC setup and teardown cancel), divided by the packets of
# the extra round (P requests + P ACKs). Two figures: the whole simulation
# (engines, links, event loop), and the engines alone (the inclusive Ir of
# pds::Engine's entry points less what their upcalls into the simulator cost).
#
#   scripts/scale-cost.sh BUILD_DIR [PEERS...]      (default peers: 10 1000 4000)
set -euo pipefail
build=$(cd "$1" && pwd)
shift
peers=("$@")
[ ${#peers[@]} -gt 0 ] || peers=(10 1000 4000)
out=${UET_SCALE_COST_DIR:-$(mktemp -d)}
model="$build/tests/sim/uet-scale-model"
# Inclusive Ir of the functions whose names match $2 in callgrind file $1.
incl() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    awk -v re="$2" '$0 ~ re {gsub(",", "", $1); s += $1} END {print s + 0}'
}
run() {  # peers rounds -> "total_ir engine_ir packets"
  local f="$out/hub-$1-$2.cg"
  valgrind --tool=callgrind --callgrind-out-file="$f" "$model" hub --nodes=$(($1 + 1)) \
    --messages="$2" --payload=256 --max-pdcs=8192 --max-cccs=8192 --inflight=256 \
    --rest-ms=0 >"$out/hub-$1-$2.log" 2>&1
  local total engine upcalls packets
  total=$(awk '/^summary:/ {print $2}' "$f")
  # Engine entry points, inclusive; less the simulator work they call back into.
  engine=$(incl "$f" 'uet::pds::Engine::(OnPacket|OnTimer|Submit|NextDeadline)\(')
  upcalls=$(incl "$f" 'ScaleNode::(Send|OnRequest|OnSendComplete|OnSendFailed)\(')
  packets=$(awk '/ packets / {for (i = 1; i <= NF; ++i) if ($i == "packets") {gsub(",", "", $(i+1)); print $(i+1)}}' "$out/hub-$1-$2.log")
  echo "$total $((engine - upcalls)) $packets"
}
printf "%8s %14s %14s %10s\n" peers "Ir/packet all" "Ir/packet eng" packets
for p in "${peers[@]}"; do
  read -r t3 e3 k3 < <(run "$p" 3)
  read -r t2 e2 k2 < <(run "$p" 2)
  printf "%8s %14d %14d %10d\n" "$p" $(((t3 - t2) / (k3 - k2))) $(((e3 - e2) / (k3 - k2))) $((k3 - k2))
done
echo "callgrind files and logs: $out"
