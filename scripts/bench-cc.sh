#!/usr/bin/env bash
# Congestion-control bench in the simulator (virtual time, deterministic): runs
# uet-cc-trace (tests/sim/cc_trace_main.cc) for every scenario and controller,
# prints one table, writes each run's time series (TSV) and, through
# scripts/plot-cc.sh, one PNG per run into OUT. spec-notes/cc-bench.md explains
# the scenarios and the columns. Not a test: nothing is asserted.
#
#   scripts/bench-cc.sh [OUT]            (default OUT: /tmp/uet-bench-cc)
#
# Environment: BUILD (build directory with tests/sim/uet-cc-trace, default
# build; built with -j1 if missing), SCENARIOS, CCS (space-separated lists to
# narrow the run), SEED (default 1), NOPLOT=1 (tables and TSV only).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/uet-bench-cc}
build=${BUILD:-$repo/build}
scenarios=${SCENARIOS:-incast8 incast32 joinleave multipath multipath-oblivious multipath-1ev}
ccs=${CCS:-fixed nscc rccc nscc+rccc}
seed=${SEED:-1}
trace=$build/tests/sim/uet-cc-trace
if [ ! -x "$trace" ]; then
  echo "bench-cc: building uet-cc-trace in $build" >&2
  cmake --build "$build" -j1 --target uet-cc-trace >&2
fi
mkdir -p "$out"
table=$out/summary.txt  # not .tsv: plot-cc.sh plots every .tsv in OUT
first=--header
: >"$table"
for s in $scenarios; do
  for c in $ccs; do
    # A run that loses messages still gets its row (delivered = NOT-ALL).
    "$trace" --scenario="$s" --cc="$c" --seed="$seed" --out="$out" $first >>"$table" || true
    first=
  done
done

# The table: util = steady-state utilisation of the receiver's port, to-finish =
# bytes / (port capacity x last completion), queue delay at the bottleneck
# (multipath: the longest path's backlog), bad = congested path's share.
awk -F'\t' '
  NR == 1 { next }
  {
    if (!hdr++) {
      printf "%-20s %-10s %5s %6s %9s %6s %9s %9s %6s %6s %10s %s\n", "scenario", "cc", "flows",
        "util", "to-finish", "jain", "qmean_us", "qp99_us", "retx", "bad", "finish_us", "delivered"
    }
    printf "%-20s %-10s %5s %6s %9s %6s %9s %9s %6s %6s %10s %s\n", $1, $2, $3, $4, $5, $6, $7, $8,
      $9, $13, $12, $14
  }' "$table"
echo "bench-cc: table in $table, traces in $out/*.tsv" >&2
if [ "${NOPLOT:-0}" != 1 ]; then
  "$repo/scripts/plot-cc.sh" "$out" >&2
fi
