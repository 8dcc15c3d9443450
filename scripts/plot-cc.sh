#!/usr/bin/env bash
# Plots uet-cc-trace's time series (tests/sim/cc_trace_main.cc): one PNG per
# TSV, four panels over virtual time: congestion window per flow, RCCC credit
# per flow (only for rccc and nscc+rccc), the bottleneck queue (us at the
# path's rate; for multipath the longest path), and bytes into the receiver
# per flow (Gb/s, mean over 10 samples).
#
#   scripts/plot-cc.sh TRACE.tsv [OUT.png]    (default: TRACE.png)
#   scripts/plot-cc.sh DIR                    (every DIR/*.tsv -> DIR/*.png)
#
# Needs gnuplot with the pngcairo terminal: installs gnuplot-nox with apt-get
# when gnuplot is missing (root, or sudo). Exit status non-zero when gnuplot is
# missing and cannot be installed, or fails.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 TRACE.tsv [OUT.png] | $0 DIR" >&2
  exit 2
fi

if ! command -v gnuplot >/dev/null; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "plot-cc: installing gnuplot-nox" >&2
  "${sudo[@]}" apt-get update -qq >&2 || true
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    gnuplot-nox >&2 || { echo "plot-cc: cannot install gnuplot" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plot_one() {  # TSV PNG
  local tsv=$1 png=$2 name flows has_credit panels
  [ -s "$tsv" ] || { echo "plot-cc: no data in $tsv" >&2; return 1; }
  name=$(basename "$tsv" .tsv)
  # 4 leading columns, then cwnd/credit/inflight/gbps per flow.
  flows=$(( ($(head -1 "$tsv" | tr '\t' '\n' | wc -l) - 4) / 4 ))
  [ "$flows" -ge 1 ] || { echo "plot-cc: $tsv has no flow columns" >&2; return 1; }
  has_credit=$(awk -F'\t' 'NR > 1 && $6 != "nan" { print 1; exit }' "$tsv")
  # Goodput per flow as the mean over the last 10 samples (1 us samples hold
  # 0-3 packets): t, then one column per flow.
  awk -F'\t' -v flows="$flows" -v n=10 'NR > 1 {
      k = (NR - 2) % n
      line = $1
      for (i = 0; i < flows; i++) {
        v = $(8 + 4 * i); sum[i] += v - ring[i, k]; ring[i, k] = v
        line = line "\t" sprintf("%.2f", sum[i] / n)
      }
      print line
    }' "$tsv" >"$tmp/gbps.dat"
  panels=3
  [ -n "$has_credit" ] && panels=4
  gnuplot <<GP
set terminal pngcairo size 900,$((panels * 220 + 60)) font ",9" noenhanced
set output "$png"
set datafile separator "\t"
set datafile missing "nan"
set grid lc rgb "#dddddd"
set key outside right top font ",8"
set lmargin 10
set rmargin 14
set multiplot layout $panels,1 title "$name: $flows flows (uet-cc-trace, virtual time)"
set ylabel "window (KB)"
set yrange [0:*]
plot for [i=0:$((flows - 1))] "$tsv" using 1:(column(5 + 4*i) / 1000) with lines lw 1 title sprintf("flow %d", i)
if ($([ -n "$has_credit" ] && echo 1 || echo 0)) {
  set ylabel "credit (KB)"
  set yrange [*:*]
  plot for [i=0:$((flows - 1))] "$tsv" using 1:(column(6 + 4*i) / 1000) with lines lw 1 title sprintf("flow %d", i)
}
set ylabel "queue (us)"
set yrange [0:*]
plot "$tsv" using 1:3 with lines lw 1 lc rgb "#b03030" title "queue"
set ylabel "into receiver (Gb/s, 10-sample mean)"
set xlabel "time (us)"
plot for [i=0:$((flows - 1))] "$tmp/gbps.dat" using 1:(column(2 + i)) with lines lw 1 title sprintf("flow %d", i)
unset multiplot
GP
  echo "plot-cc: $png"
}

if [ -d "$1" ]; then
  shopt -s nullglob
  files=("$1"/*.tsv)
  [ ${#files[@]} -gt 0 ] || { echo "plot-cc: no .tsv in $1" >&2; exit 1; }
  for f in "${files[@]}"; do plot_one "$f" "${f%.tsv}.png"; done
else
  plot_one "$1" "${2:-${1%.tsv}.png}"
fi
