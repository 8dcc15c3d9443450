#!/usr/bin/env bash
# Plots scripts/bench.sh's data: one PNG with two panels, one-way latency
# (usec/xfer) against message size and MB/s against message size, both log
# axes, one line per provider/endpoint and setup (solid: veth between two
# namespaces, dashed: loopback).
#
#   scripts/plot-bench.sh DATA.tsv OUT.png
#
# DATA.tsv: bench.sh's rows "mode provider ep size lat_us MBps cpu_us" (tab
# separated, '#' comments). Needs gnuplot with the pngcairo terminal: installs
# gnuplot-nox with apt-get when gnuplot is missing (root, or sudo). Creates
# OUT.png and a temporary directory (removed on exit). Exit status non-zero
# when gnuplot is missing and cannot be installed or fails.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 DATA.tsv OUT.png" >&2
  exit 2
fi
data=$1
png=$2
[ -s "$data" ] || { echo "plot-bench: no data in $data" >&2; exit 1; }

if ! command -v gnuplot >/dev/null; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "plot-bench: installing gnuplot-nox" >&2
  "${sudo[@]}" apt-get update -qq >&2 || true
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    gnuplot-nox >&2 || { echo "plot-bench: cannot install gnuplot" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One gnuplot data block per series (provider/ep/mode), in first-seen order.
awk -F'\t' -v dir="$tmp" '
  /^#/ || NF < 6 || $5 !~ /^[0-9.]+$/ || $5 + 0 <= 0 || $6 !~ /^[0-9.]+$/ { next }
  {
    s = $2 "/" $3 "/" $1
    pe = $2 "/" $3
    if (!(pe in color)) color[pe] = ++ncolor
    if (!(s in idx)) { idx[s] = n++; name[idx[s]] = s; mode[idx[s]] = $1; col[idx[s]] = color[pe] }
    rows[idx[s]] = rows[idx[s]] $4 "\t" $5 "\t" $6 "\n"
  }
  END {
    f = dir "/series.dat"
    for (i = 0; i < n; i++) { printf "# %s\n%s\n\n", name[i], rows[i] > f }
    t = dir "/titles"
    for (i = 0; i < n; i++) printf "%s %s %s\n", name[i], (mode[i] == "loopback") ? 2 : 1, col[i] > t
  }' "$data"
[ -s "$tmp/titles" ] || { echo "plot-bench: no plottable rows in $data" >&2; exit 1; }

# One plot clause per series: colour per provider/ep, dash per setup.
plot_cmd() {  # column of series.dat to plot
  local i=0 name dash col sep=""
  printf 'plot '
  while read -r name dash col; do
    printf '%s"%s" index %d using 1:%d with linespoints lc %d dt %d pt 7 ps 0.8 title "%s"' \
      "$sep" "$tmp/series.dat" "$i" "$1" "$col" "$dash" "$name"
    sep=", "
    i=$((i + 1))
  done <"$tmp/titles"
  echo
}

cat >"$tmp/plot.gp" <<EOF
set terminal pngcairo size 1300,560 font ",10" noenhanced
set output "$png"
set datafile separator "\t"
set logscale xy
set xrange [40:1.6e6]
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top left font ",8"
set xlabel "message size (bytes)"
set xtics ("64" 64, "256" 256, "1K" 1024, "4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576)
set multiplot layout 1,2 title "fi_pingpong (libfabric 1.17): solid veth between namespaces, dashed loopback"
set ylabel "one-way latency (usec/xfer)"
$(plot_cmd 2)
set ylabel "MB/s (both directions)"
$(plot_cmd 3)
unset multiplot
EOF
gnuplot "$tmp/plot.gp"
echo "plot-bench: wrote $png" >&2
