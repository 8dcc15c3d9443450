#!/usr/bin/env bash
# Benchmark (not a test): 64 B fi_pingpong latency where a user's job shares the
# CPUs (issue 26 "Oversubscribed"), for `uet` and the stock providers in the
# same sitting, interleaved round by round, on loopback:
#
#   quiet    nothing else running;
#   busy     UET_BUSY_PER_CORE (default 4) busy loops per core beside the pair;
#   pinned   both fi_pingpong processes pinned to CPU 0 (issue 18's case),
#            nothing else running.
#
#   scripts/bench-busy.sh [ROUNDS]          (default 5)
#
# Environment:
#   UET_BUSY_DIRS="label=DIR ..."  uet builds to compare (default: uet=build/release/provider,
#                                  built when missing); each runs as provider uet
#   UET_BUSY_STOCK="tcp;ofi_rxm net"  stock providers (rdm) beside them
#   UET_BUSY_CASES="quiet busy pinned"
#   UET_BUSY_ITERS=N                iterations per run (default 2000; busy: N/4)
#   UET_BUSY_OUT=FILE.md            report (default bench-results/busy.md)
#
# Each cell is the median of its rounds of fi_pingpong's client usec/xfer
# (setup included: with -I 2000 at 64 B it is a few percent on a quiet machine,
# far less than the effects measured here). A run that fails or times out
# (UET_PINGPONG_TIMEOUT, default here 60 s) counts as failed and is listed.
# The busy loops are this script's own processes, stopped by their PIDs.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-5}
cases=${UET_BUSY_CASES:-quiet busy pinned}
stock=${UET_BUSY_STOCK:-tcp;ofi_rxm net}
iters=${UET_BUSY_ITERS:-2000}
per_core=${UET_BUSY_PER_CORE:-4}
out=${UET_BUSY_OUT:-bench-results/busy.md}
dirs=${UET_BUSY_DIRS:-uet=build/release/provider}
export UET_PINGPONG_TIMEOUT=${UET_PINGPONG_TIMEOUT:-60}
export UET_PINGPONG_LOOPBACK=1

if [ "$dirs" = "uet=build/release/provider" ] && [ ! -f build/release/provider/libuet-fi.so ]; then
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build/release --target uet-fi >/dev/null
fi

# shellcheck source=scripts/busy-loops.sh
. scripts/busy-loops.sh
trap stop_busy EXIT INT TERM

# One run: prints usec/xfer or "failed".
run_one() {  # label provider_dir provider case
  local dir=$2 prov=$3 case=$4 n=$iters
  local -a env=(UET_PINGPONG_PROV="$prov")
  [ "$case" = busy ] && n=$((iters / 4))
  [ "$case" = pinned ] && env+=(UET_PINGPONG_CPUS="0 0")
  local outp
  if outp=$(env "${env[@]}" scripts/pingpong.sh "$dir" -e rdm -S 64 -I "$n" 2>&1); then
    awk '/^bytes/ {getline; print $7; exit}' <<<"$outp"
  else
    echo failed
  fi
}

declare -A results
labels=()
for d in $dirs; do labels+=("${d%%=*}"); done
for s in $stock; do labels+=("$s"); done

for case in $cases; do
  [ "$case" = busy ] && start_busy "$per_core"
  for ((r = 1; r <= rounds; r++)); do
    for d in $dirs; do
      v=$(run_one "${d%%=*}" "${d#*=}" uet "$case")
      results["$case|${d%%=*}"]+="$v "
    done
    for s in $stock; do
      v=$(run_one "$s" build/release/provider "$s" "$case")
      results["$case|$s"]+="$v "
    done
    echo "bench-busy: $case round $r/$rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  done
  stop_busy
done

median() {
  tr ' ' '\n' | awk '/^[0-9.]+$/' | sort -g |
    awk '{a[NR]=$1} END {if (NR==0) print "failed"; else if (NR%2) print a[(NR+1)/2]; else printf "%.2f\n", (a[NR/2]+a[NR/2+1])/2}'
}

mkdir -p "$(dirname "$out")"
{
  echo "# 64 B fi_pingpong rdm latency, loopback, shared CPUs ($(date -u +%FT%TZ))"
  echo
  echo "$(nproc) CPUs; busy = $per_core busy loops per core; pinned = both processes on CPU 0;"
  echo "$rounds rounds interleaved; median client usec/xfer (one way), setup included; iterations $iters (busy: $((iters / 4)))."
  echo
  printf '| case |'
  for l in "${labels[@]}"; do printf ' %s |' "$l"; done
  printf ' %s / %s |\n' "${labels[0]}" "$(echo "$stock" | awk '{print $1}')"
  printf '|---|'
  for _ in "${labels[@]}"; do printf -- '---|'; done
  printf -- '---|\n'
  first_stock=$(echo "$stock" | awk '{print $1}')
  for case in $cases; do
    printf '| %s |' "$case"
    for l in "${labels[@]}"; do
      m=$(echo "${results["$case|$l"]:-}" | median)
      fails=$(echo "${results["$case|$l"]:-}" | tr ' ' '\n' | awk '/failed/ {n++} END {print n+0}')
      printf ' %s%s |' "$m" "$([ "$fails" -gt 0 ] && echo " ($fails failed)")"
    done
    a=$(echo "${results["$case|${labels[0]}"]:-}" | median)
    b=$(echo "${results["$case|$first_stock"]:-}" | median)
    if [[ "$a" =~ ^[0-9.]+$ && "$b" =~ ^[0-9.]+$ ]]; then
      awk -v a="$a" -v b="$b" 'BEGIN {printf " %.2fx |\n", a / b}'
    else
      printf ' n/a |\n'
    fi
  done
  echo
  echo "Raw (usec/xfer per round):"
  for case in $cases; do
    for l in "${labels[@]}"; do echo "- $case $l: ${results["$case|$l"]:-}"; done
  done
} | tee "$out"
