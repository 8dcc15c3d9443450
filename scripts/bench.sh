#!/usr/bin/env bash
# Benchmark: fi_pingpong with the `uet` provider and the stock libfabric
# providers a user would pick instead on Ethernet (tcp;ofi_rxm, udp;ofi_rxd),
# in the same run and the same two-host setup (scripts/pingpong.sh: two network
# namespaces over veth, or loopback). Reports medians of REPS runs and the ratio
# of each stock provider to uet (> 1: uet is better).
#
#   scripts/bench.sh [REPS]          (default 3)
#
# fi_pingpong has no warm-up: connection setup lands in the first size of a run.
# Each size therefore runs on its own with enough iterations to amortize it.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release --target uet-fi >/dev/null
prov_dir=build/release/provider

providers=("uet" "tcp;ofi_rxm" "udp;ofi_rxd")
# size:iterations
sizes=("64:2000" "4096:2000" "65536:500" "1048576:50")

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

declare -A lat bw
for p in "${providers[@]}"; do
  for s in "${sizes[@]}"; do
    size=${s%%:*}
    iters=${s##*:}
    lats=()
    bws=()
    for _ in $(seq 1 "$reps"); do
      line=$(UET_PINGPONG_PROV="$p" scripts/pingpong.sh "$prov_dir" -e rdm -I "$iters" -S "$size" 2>&1 |
             awk '/^--- client/{c=1} c && /^[0-9]/{print; exit}')
      if [ -z "$line" ]; then
        echo "bench: $p at $size bytes failed" >&2
        continue
      fi
      lats+=("$(echo "$line" | awk '{print $7}')")
      bws+=("$(echo "$line" | awk '{print $6}')")
    done
    lat[$p:$size]=$(printf '%s\n' "${lats[@]}" | median)
    bw[$p:$size]=$(printf '%s\n' "${bws[@]}" | median)
  done
done

echo
echo "fi_pingpong -e rdm, median of $reps runs: one-way latency (usec/xfer) | MB/s (both directions)"
printf '%-14s' "provider"
for s in "${sizes[@]}"; do printf '%22s' "${s%%:*} B"; done
echo
for p in "${providers[@]}"; do
  printf '%-14s' "$p"
  for s in "${sizes[@]}"; do
    k="$p:${s%%:*}"
    printf '%22s' "${lat[$k]} us | ${bw[$k]}"
  done
  echo
done
echo
echo "ratio stock / uet (latency: stock usec / uet usec; bandwidth: uet MB/s / stock MB/s)"
for p in "${providers[@]:1}"; do
  printf '%-14s' "$p"
  for s in "${sizes[@]}"; do
    size=${s%%:*}
    printf '%22s' "$(awk -v a="${lat[$p:$size]}" -v b="${lat[uet:$size]}" -v c="${bw[uet:$size]}" -v d="${bw[$p:$size]}" \
      'BEGIN {printf "%.2fx | %.2fx", (b > 0 ? a / b : 0), (d > 0 ? c / d : 0)}')"
  done
  echo
done
