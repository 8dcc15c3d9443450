#!/usr/bin/env bash
# Benchmark (not a test): the Open MPI sitting of issue 26. uet-mpi-bench
# (apps/mpi_bench_main.c: IMB's PingPong 64 B and 1 MiB, Allreduce 8 MiB,
# Alltoall 64 B and 1 MiB; IMB is not in Debian) through Open MPI's ofi MTL
# (`--mca pml cm --mca mtl ofi`) on `uet` and on the stock `tcp;ofi_rxm`, on
# this host, interleaved round by round, with no FI_UET_* variable set:
#
#   quiet-2    2 ranks
#   quiet-16   16 ranks (oversubscribed on a small machine, as in the issue)
#   busy-2     2 ranks beside UET_MPI_BUSY_PER_CORE (default 4) busy loops per core
#
#   scripts/bench-mpi.sh [ROUNDS]          (default 3)
#
# Environment:
#   UET_MPI_PROVIDERS="uet tcp;ofi_rxm"   libfabric providers compared
#   UET_MPI_CASES="quiet-2 quiet-16 busy-2"
#   UET_MPI_CAP_S=S      a figure's repetitions stop after S s (default 30): a
#                        run cut short says so (the goal: none when loaded)
#   UET_MPI_OUT=FILE.md  report (default bench-results/mpi.md)
#   UET_MPI_BUILD=DIR    the build holding provider/libuet-fi.so and
#                        apps/uet-mpi-bench (default build/release; built when missing)
#
# Each cell is the median of its rounds (us; MB/s for the 1 MiB ping-pong);
# "peak RSS of a rank": each rank runs under GNU time, a run's largest, median
# over the rounds. Any "quiet-N" or "busy-N" case runs N ranks (issue 29:
# UET_MPI_CASES="quiet-32 quiet-64").
# The busy loops are this script's own processes, stopped by their PIDs.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
providers=${UET_MPI_PROVIDERS:-uet tcp;ofi_rxm}
cases=${UET_MPI_CASES:-quiet-2 quiet-16 busy-2}
cap=${UET_MPI_CAP_S:-30}
out=${UET_MPI_OUT:-bench-results/mpi.md}
build=${UET_MPI_BUILD:-build/release}
per_core=${UET_MPI_BUSY_PER_CORE:-4}

command -v mpirun >/dev/null || { echo "bench-mpi: no mpirun (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 2; }
if [ ! -x "$build/apps/uet-mpi-bench" ] || [ ! -f "$build/provider/libuet-fi.so" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target uet-fi uet-mpi-bench >/dev/null
fi
bench=$(cd "$build/apps" && pwd)/uet-mpi-bench
prov_dir=$(cd "$build/provider" && pwd)

while read -r v; do unset "$v"; done < <(compgen -e | grep '^FI_UET_' || true)
unset FI_LOG_LEVEL FI_PROVIDER
export FI_PROVIDER_PATH=$prov_dir
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none

# shellcheck source=scripts/busy-loops.sh
. scripts/busy-loops.sh
trap stop_busy EXIT INT TERM

tmp=$(mktemp -d)
trap 'stop_busy; rm -rf "$tmp"' EXIT INT TERM
declare -A cell  # "case|provider|figure" -> values, space separated
declare -A cut   # "case|provider" -> runs cut short or failed

figures=("pingpong 64:us" "pingpong 1048576:us" "pingpong 1048576:MB/s" "allreduce 8388608:us"
         "alltoall 64:us" "alltoall 1048576:us")

run_one() {  # case provider
  local c=$1 p=$2 np=${1##*-} f=$tmp/run.out
  [ "${c%%-*}" = busy ] && start_busy "$per_core"
  local rc=0
  timeout -s TERM $((cap * 8 + 60)) mpirun -np "$np" --mca pml cm --mca mtl ofi \
    --mca mtl_ofi_provider_include "$p" /usr/bin/time -f 'bench-mpi-rss-kb %M' \
    "$bench" "$cap" >"$f" 2>&1 || rc=$?
  stop_busy
  if [ "$rc" -ne 0 ] || ! grep -q "data checked" "$f"; then
    echo "bench-mpi: $c $p failed (exit $rc):" >&2
    tail -5 "$f" >&2
    cut["$c|$p"]=$((${cut["$c|$p"]:-0} + 1))
    return
  fi
  grep -q "cut short" "$f" && cut["$c|$p"]=$((${cut["$c|$p"]:-0} + 1))
  # Peak RSS of each rank (GNU time around every rank): the run's largest.
  local rss
  rss=$(awk '$1 == "bench-mpi-rss-kb" && $2 > m {m = $2} END {if (m) print m}' "$f")
  [ -n "$rss" ] && cell["$c|$p|rss"]="${cell["$c|$p|rss"]:-} $rss"
  local fig name unit v
  for fig in "${figures[@]}"; do
    name=${fig%%:*} unit=${fig##*:}
    if [ "$unit" = MB/s ]; then
      v=$(sed -n -E "s/^$name: .*, ([0-9.]+) MB\/s.*/\1/p" "$f")
    else
      v=$(sed -n -E "s/^$name: ([0-9.]+) us.*/\1/p" "$f")
    fi
    [ -n "$v" ] && cell["$c|$p|$fig"]="${cell["$c|$p|$fig"]:-} $v"
  done
  echo "bench-mpi: $c $p: $(tr '\n' ';' <"$f" | sed 's/;/; /g')" >&2
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

for ((r = 1; r <= rounds; r++)); do
  for c in $cases; do
    for p in $providers; do run_one "$c" "$p"; done
  done
done

mkdir -p "$(dirname "$out")"
{
  echo "# uet Open MPI sitting: $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds rounds, $(nproc) CPUs"
  echo
  echo "- mpirun $(mpirun --version 2>/dev/null | head -1), pml cm, mtl ofi; uet from $prov_dir; no FI_UET_* set"
  echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg); busy cases: $per_core busy loops per core"
  echo "- medians of the rounds; a figure stops after $cap s of repetitions (\"cut\" counts runs cut short or failed)"
  echo
  for c in $cases; do
    echo "## $c"
    echo
    printf '| figure |'; for p in $providers; do printf ' %s |' "$p"; done; printf ' uet / %s |\n' "${providers##* }"
    printf '|---|'; for p in $providers; do printf -- '---|'; done; printf -- '---|\n'
    for fig in "${figures[@]}"; do
      printf '| %s %s |' "${fig%%:*}" "${fig##*:}"
      first="" last=""
      for p in $providers; do
        m=$(echo "${cell["$c|$p|$fig"]:-}" | median)
        printf ' %s |' "$m"
        [ -z "$first" ] && first=$m
        last=$m
      done
      if [ "$first" != "-" ] && [ "$last" != "-" ]; then
        printf ' %s |\n' "$(awk -v a="$first" -v b="$last" 'BEGIN {if (b > 0) printf "%.2fx", a / b; else print "-"}')"
      else
        printf ' - |\n'
      fi
    done
    printf '| peak RSS of a rank, MB |'
    for p in $providers; do
      m=$(echo "${cell["$c|$p|rss"]:-}" | median)
      [ "$m" = - ] && printf ' - |' || printf ' %s |' "$(awk -v k="$m" 'BEGIN {printf "%.1f", k / 1024}')"
    done
    printf ' |\n'
    printf '| runs cut short or failed |'; for p in $providers; do printf ' %s |' "${cut["$c|$p"]:-0}"; done; printf ' |\n'
    echo
  done
} | tee "$out"
