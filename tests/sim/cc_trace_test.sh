#!/usr/bin/env bash
# ctest sim.cc_trace: uet-cc-trace runs a short 8->1 incast under nscc+rccc and
# writes a TSV with the documented columns (4 + 4 per flow) and one row per
# sample; every row has the header's field count; the summary says all
# messages were delivered.
#   tests/sim/cc_trace_test.sh PATH/TO/uet-cc-trace
set -euo pipefail
trace=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
summary=$("$trace" --scenario=incast8 --cc=nscc+rccc --messages=40 --out="$out" --header)
echo "$summary"
tsv=$out/incast8-nscc+rccc.tsv
[ -s "$tsv" ] || { echo "FAIL: no $tsv" >&2; exit 1; }
head -1 "$tsv" | tr '\t' '\n' >"$out/cols"
for c in t_us queue_bytes queue_us rx_gbps cwnd_0 credit_0 inflight_0 gbps_0 cwnd_7 gbps_7; do
  grep -qx "$c" "$out/cols" || { echo "FAIL: column $c missing" >&2; exit 1; }
done
[ "$(wc -l <"$out/cols")" -eq 36 ] || { echo "FAIL: expected 36 columns" >&2; exit 1; }
rows=$(($(wc -l <"$tsv") - 1))
[ "$rows" -ge 50 ] || { echo "FAIL: only $rows samples" >&2; exit 1; }
awk -F'\t' 'NR == 1 { n = NF } NF != n { bad = 1 } END { exit bad }' "$tsv" ||
  { echo "FAIL: ragged rows" >&2; exit 1; }
# Some window and some credit were sampled (not all nan).
awk -F'\t' 'NR > 1 && $5 != "nan" && $6 != "nan" { ok = 1 } END { exit !ok }' "$tsv" ||
  { echo "FAIL: no window/credit samples" >&2; exit 1; }
echo "$summary" | tail -1 | grep -q $'\tall$' || { echo "FAIL: not all delivered" >&2; exit 1; }
echo "ok: $rows samples"
