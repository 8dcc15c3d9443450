#!/usr/bin/env bash
# Benchmark (not a test): fi_pingpong with the `uet` provider and the stock
# libfabric 1.17 providers a user would pick instead on Ethernet, same machine,
# same run, on loopback and across two network namespaces joined by a veth pair
# (scripts/pingpong.sh does each run):
#
#   uet rdm (defaults: up to 16 EVs, widened on congestion, TSS off) |
#   uet@1ev rdm (FI_UET_EV_COUNT=1) | uet@spray rdm (FI_UET_EV_WIDEN=0: all 16
#   EVs from the first packet, the default before session 17; not in the
#   default list) |
#   uet@tss rdm (TSS on: a fresh direct-mode key file shared by both sides) |
#   udp dgram (the latency reference) | udp;ofi_rxd rdm | tcp;ofi_rxm rdm |
#   net rdm (`fi_info -p net` in 1.17 offers rdm and msg; rdm is net's own,
#   not net;ofi_rxm)
#
# at 64 B, 4 KiB, 64 KiB, 1 MiB and 16 MiB (udp dgram: 64 B only, its
# max_msg_size is 1472 B; the other cells say n/a). A provider written
# NAME@VARIANT runs provider NAME with the variant's environment (1ev, spray,
# tss).
#
#   scripts/bench.sh [N]       N measured runs per cell (default 5)
#
# Method. fi_pingpong has no warm-up: connection setup (rxm's TCP connect,
# rxd's and uet's first exchange, 5-300 ms) lands inside its timed loop. So each
# cell (mode, provider, size) runs one warm-up run (discarded), then N pairs of
# runs, one with I_lo = I/10 and one with I iterations; with T the total time
# of a run (usec/xfer x 2 x iterations),
#   latency (usec/xfer, one way) = (median T_I - median T_lo) / (2 (I - I_lo))
#   MB/s = size / latency   (fi_pingpong's MB/sec: bytes moved both ways / time)
#   CPU-us per transfer = (median C_I - median C_lo) / (2 (I - I_lo)), C = user +
#   sys CPU seconds of both fi_pingpong processes (/usr/bin/time via pingpong.sh)
# so the setup cost and the process start-up cost cancel. fi_pingpong spins on
# its CQ, so CPU per transfer is about twice the latency for a provider without
# threads of its own. The report also gives fi_pingpong's own numbers for the
# I-iteration runs (medians, setup included), comparable with older runs.
# Iterations I per size: 64 B 10000, 4 KiB 5000, 64 KiB 1000, 1 MiB 100,
# 16 MiB 10. CPU-us per MiB = CPU-us per transfer / the size in MiB.
#
# Targets (issue 20; setup-subtracted numbers, each mode), PASS/MISS:
#   uet rdm 64 B latency <= net rdm's and <= 1.3x udp dgram's;
#   uet rdm 1 MiB and 16 MiB MB/s >= 1.2x net rdm's (and >= 1.0x tcp;ofi_rxm's);
#   uet rdm CPU-us per MiB at 1 MiB and 16 MiB <= tcp;ofi_rxm's;
#   uet@tss rdm 1 MiB and 16 MiB MB/s >= 0.6x uet rdm's.
#
# Output: a markdown report (default bench-results/bench.md), printed too; next
# to it NAME.tsv (one row per cell: mode provider ep size latency MB/s CPU-us)
# and NAME.png (latency and MB/s against size, log axes; scripts/plot-bench.sh,
# gnuplot, installed with apt-get when missing; when plotting fails it says so
# and the report stands). A cell whose runs all fail says "failed" and the
# reason goes to stderr; the bench goes on. A cell that failed some runs uses
# the others (counted in the report).
#
# Time: 2 modes x 31 cells x (1 + 2N) runs = 434 fi_pingpong runs with N=3,
# each about 0.7 s of start-up plus its transfers (0.1-1 s on an idle machine,
# at most UET_BENCH_MAX_RUN_S): about 12 minutes with N=3 on an idle 2-core
# machine, twice that with the default N=5 (N=1: 260 s at load 3-4). The
# start-up is fi_pingpong's own, one process after the other: ~0.2 s of
# library constructors (Debian's libinfinipath calibrates its cycle counter
# with ~330 usleep calls) before the server listens and again before the
# client connects, then ~0.1 s of provider initialisation in each (the verbs
# provider reads /proc/kallsyms); pingpong.sh adds ~20 ms (namespaces, the
# 10 ms polls for the server's port). The two fi_pingpong processes each spin
# on a core, so other load on the machine shows in the numbers (the report
# records the load average); bench on a quiet machine.
#
# Environment:
#   UET_BENCH_OUT=FILE.md       report path (default bench-results/bench.md)
#   UET_BENCH_PROV_DIR=DIR      use this libuet-fi.so directory; else the script
#                               builds build/release (cmake, Ninja, target uet-fi)
#   UET_BENCH_MODES="loopback veth"   which setups (default both; veth needs
#                               root and `ip netns`, else only loopback, said so)
#   UET_BENCH_PROVIDERS="uet:rdm udp:dgram ..."  provider:ep list (default above)
#   UET_BENCH_SIZES="64:10000 4096:5000 65536:1000 1048576:100 16777216:10"  size:iterations
#   UET_BENCH_TIMEOUT=S         timeout per fi_pingpong run (default 60)
#   UET_BENCH_MAX_RUN_S=S       cap on a run's transfer time (default 5): when
#                               the warm-up shows that I iterations would take
#                               longer (a slow provider, a loaded machine), the
#                               cell uses fewer (the report lists them)
#   UET_BENCH_CPUS="S C"        pin server and client (UET_PINGPONG_CPUS), e.g.
#                               "0 1"; default: not pinned
#   UET_BENCH_NICE=N            nice level of both processes (UET_PINGPONG_NICE),
#                               e.g. -10 on a machine busy with other work;
#                               default: unchanged
#   UET_BENCH_DEADLINE_S=S      cells not started S seconds after the first say
#                               "not run (deadline)" (default: no deadline), so
#                               that a run with a hard time limit still writes its
#                               report; providers are measured in list order, each
#                               in every setup, so the deadline cuts the last ones
#   UET_BENCH_PLOT=0            no plot (scripts/plot-bench.sh installs gnuplot
#                               with apt-get, which an offline machine cannot)
#   UET_BENCH_REV=TEXT          the source revision for the report where this is
#                               not a git checkout (default: git rev-parse)
#   UET_PINGPONG_FI_PINGPONG, UET_PINGPONG_TIME  which fi_pingpong and GNU time
#                               pingpong.sh runs (default: from PATH); the report
#                               names the fi_pingpong and the libfabric.so.1 it loads
# The caller's UET_PINGPONG_* and FI_UET_IMPAIR_* variables are cleared: no loss,
# no impairment, IPv4.
#
# Creates: the report, .tsv and .png; temporary files (removed on exit);
# through scripts/pingpong.sh two namespaces and two processes per run, which
# it removes itself. Exit status 0 when the report was written (even with
# failed cells or missed targets), 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."

reps=${1:-5}
if ! [[ "$reps" =~ ^[0-9]+$ ]] || ((reps < 1)); then
  echo "usage: $0 [N >= 1]" >&2
  exit 2
fi
out_md=${UET_BENCH_OUT:-bench-results/bench.md}
out_base=${out_md%.md}
out_tsv=$out_base.tsv
out_png=$out_base.png
mkdir -p "$(dirname "$out_md")"
tmo=${UET_BENCH_TIMEOUT:-60}
read -r -a modes <<<"${UET_BENCH_MODES:-loopback veth}"
read -r -a providers <<<"${UET_BENCH_PROVIDERS:-uet:rdm uet@1ev:rdm uet@tss:rdm udp:dgram udp;ofi_rxd:rdm tcp;ofi_rxm:rdm net:rdm}"
read -r -a sizes <<<"${UET_BENCH_SIZES:-64:10000 4096:5000 65536:1000 1048576:100 16777216:10}"

unset UET_PINGPONG_LOOPBACK UET_PINGPONG_PROV UET_PINGPONG_IPV6 UET_PINGPONG_LOSS_PCT \
  UET_PINGPONG_LOSS_PORTS UET_PINGPONG_TIMEOUT UET_PINGPONG_CPUS UET_PINGPONG_NICE
[ -z "${UET_BENCH_CPUS:-}" ] || export UET_PINGPONG_CPUS=$UET_BENCH_CPUS
[ -z "${UET_BENCH_NICE:-}" ] || export UET_PINGPONG_NICE=$UET_BENCH_NICE
max_run_s=${UET_BENCH_MAX_RUN_S:-5}
while IFS= read -r v; do
  if [[ "$v" == FI_UET_IMPAIR_* ]]; then unset "$v"; fi
done < <(compgen -e)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${UET_BENCH_PROV_DIR:-}" ]; then
  prov_dir=$UET_BENCH_PROV_DIR
else
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build/release --target uet-fi >/dev/null
  prov_dir=build/release/provider
fi
[ -f "$prov_dir/libuet-fi.so" ] || { echo "bench: no $prov_dir/libuet-fi.so" >&2; exit 2; }

pp_bin=$(type -P "${UET_PINGPONG_FI_PINGPONG:-fi_pingpong}") ||
  { echo "bench: no ${UET_PINGPONG_FI_PINGPONG:-fi_pingpong} (apt-get install libfabric-bin)" >&2; exit 2; }
pp_lib=$({ ldd "$pp_bin" 2>/dev/null || true; } | awk '$1 == "libfabric.so.1" {print $3}')

# veth needs namespaces and a veth pair; pingpong.sh would fall back to
# loopback silently (a kernel without veth: it fails every veth run).
have_ns=0 ns_why="needs root and ip netns"
probe_ns="uet-bench-probe-$$"
if [ "$(id -u)" -eq 0 ] && ip netns add "$probe_ns" 2>/dev/null; then
  if err=$(ip -n "$probe_ns" link add "uetpa$$" type veth peer name "uetpb$$" 2>&1); then
    have_ns=1
  else
    ns_why="ip netns works, a veth pair cannot be made: ${err%%$'\n'*}"
  fi
  ip netns del "$probe_ns"
fi
notes=()
if ((!have_ns)); then
  kept=()
  for m in "${modes[@]}"; do [ "$m" = veth ] || kept+=("$m"); done
  ((${#kept[@]} == ${#modes[@]})) || notes+=("veth skipped: network namespaces with a veth pair not possible here ($ns_why)")
  modes=("${kept[@]}")
fi
((${#modes[@]})) || { echo "bench: no mode to run" >&2; exit 2; }

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
human_size() {
  case $1 in
    1048576) echo "1 MiB" ;; 65536) echo "64 KiB" ;; 4096) echo "4 KiB" ;;
    *) if (($1 >= 1048576 && $1 % 1048576 == 0)); then echo "$(($1 / 1048576)) MiB";
       elif (($1 >= 1024 && $1 % 1024 == 0)); then echo "$(($1 / 1024)) KiB"; else echo "$1 B"; fi ;;
  esac
}

# One fi_pingpong run: sets r_lat r_mbps (client row) r_cpu (both processes'
# user+sys seconds, empty without /usr/bin/time); returns 1 with r_why set.
# The uet@tss variant's key file: one direct-mode secure domain, both sides.
printf 'uet-tss-keyfile 1\nsd  0x000101 42 direct\nkey 0x000101 0 current %s\n' \
  "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$tmp/bench.key"
chmod 600 "$tmp/bench.key"

# NAME@VARIANT: the environment of a variant (both processes).
variant_env() {
  case $1 in
    *@1ev) echo "FI_UET_EV_COUNT=1" ;;
    *@spray) echo "FI_UET_EV_WIDEN=0" ;;
    *@tss) echo "FI_UET_TSS_KEY_FILE=$tmp/bench.key" ;;
    *@*) echo "bench: unknown variant in $1 (known: 1ev, spray, tss)" >&2; exit 2 ;;
  esac
}

r_lat='' r_mbps='' r_cpu='' r_why=''
run_pp() {
  local mode=$1 prov=${2%@*} ep=$3 size=$4 iters=$5 log=$tmp/run.log rc=0 lb= venv
  [ "$mode" = loopback ] && lb=1
  venv=$(variant_env "$2")
  env $venv UET_PINGPONG_PROV="$prov" UET_PINGPONG_LOOPBACK="$lb" UET_PINGPONG_TIMEOUT="$tmo" \
    scripts/pingpong.sh "$prov_dir" -e "$ep" -I "$iters" -S "$size" >"$log" 2>&1 || rc=$?
  local row
  row=$(awk '/^--- client/ {c = 1} /^--- server/ {c = 0} c && $1 ~ /^[0-9]/ {print $6, $7; exit}' "$log")
  r_cpu=$(awk '/^pingpong: cpu / {s += $4 + $5; n++} END {if (n == 2) print s}' "$log")
  r_why=
  if [ "$mode" = veth ] && ! grep -q '^pingpong: two network namespaces' "$log"; then
    r_why="not run across namespaces"
  elif ((rc != 0)) || [ -z "$row" ]; then
    r_why="exit $rc: $(grep -vE '^(pingpong: (two|loopback|cpu)|bytes|--- |[0-9])' "$log" | tr '\n' ' ' | cut -c1-400)"
  fi
  if [ -n "$r_why" ]; then
    echo "bench: $prov -e $ep $mode $size B x$iters failed: $r_why" >&2
    return 1
  fi
  read -r r_mbps r_lat <<<"$row"
}

declare -A lat mbps cpu raw_lat raw_mbps nfail reduced
start_s=$SECONDS
deadline=${UET_BENCH_DEADLINE_S:-}
[[ -z "$deadline" || "$deadline" =~ ^[0-9]+$ ]] || { echo "bench: UET_BENCH_DEADLINE_S must be seconds" >&2; exit 2; }
late=0
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: modes ${modes[*]}; ${#providers[@]} providers; sizes ${sizes[*]}; N=$reps; provider dir $prov_dir; $pp_bin (${pp_lib:-libfabric.so.1 unknown})" >&2
# Provider by provider, both setups of one provider in turn (so a deadline
# leaves out the last providers of the list, in every setup alike).
for pe in "${providers[@]}"; do
  prov=${pe%:*}
  ep=${pe##*:}
  for mode in "${modes[@]}"; do
    for s in "${sizes[@]}"; do
      size=${s%%:*}
      ihi=${s##*:}
      ilo=$((ihi / 10))
      ((ilo >= 1)) || ilo=1
      ((ihi > ilo)) || ihi=$((ilo + 1))
      k="$mode|$pe|$size"
      if [ "$prov" = udp ] && [ "$ep" = dgram ] && ((size > 1472)); then
        lat[$k]=n/a
        continue
      fi
      if [ -n "$deadline" ] && ((SECONDS - start_s >= deadline)); then
        lat[$k]=late
        late=$((late + 1))
        continue
      fi
      echo "bench: [$((SECONDS - start_s)) s] $mode $prov -e $ep ${size} B (I=$ihi, I_lo=$ilo)" >&2
      fails=0
      # Warm-up, discarded; it also caps I (UET_BENCH_MAX_RUN_S).
      if run_pp "$mode" "$prov" "$ep" "$size" "$ilo"; then
        cap=$(awk -v l="$r_lat" -v m="$max_run_s" 'BEGIN {c = (l > 0) ? int(m * 1e6 / (2 * l)) : 0; print c}')
        if ((cap > 0 && cap < ihi)); then
          ihi=$((cap < 20 ? 20 : cap))
          ilo=$((ihi / 10 < 1 ? 1 : ihi / 10))
          reduced[$k]=$ihi
          echo "bench:   (slow: I reduced to $ihi, I_lo $ilo)" >&2
        fi
      else
        fails=$((fails + 1))
      fi
      tlo=() thi=() clo=() chi=() rl=() rb=()
      for ((i = 1; i <= reps; i++)); do
        if run_pp "$mode" "$prov" "$ep" "$size" "$ilo"; then
          tlo+=("$(awk -v l="$r_lat" -v n="$ilo" 'BEGIN {print l * 2 * n}')")
          [ -z "$r_cpu" ] || clo+=("$r_cpu")
        else
          fails=$((fails + 1))
        fi
        if run_pp "$mode" "$prov" "$ep" "$size" "$ihi"; then
          thi+=("$(awk -v l="$r_lat" -v n="$ihi" 'BEGIN {print l * 2 * n}')")
          [ -z "$r_cpu" ] || chi+=("$r_cpu")
          rl+=("$r_lat")
          rb+=("$r_mbps")
        else
          fails=$((fails + 1))
        fi
        # Nothing works (the warm-up and the first pair failed): skip the rest.
        if ((i == 1 && fails == 3)); then break; fi
      done
      nfail[$k]=$fails
      if ((${#tlo[@]} == 0 || ${#thi[@]} == 0)); then
        lat[$k]=failed
        echo "bench: $mode $prov -e $ep $size B: failed (see above)" >&2
        continue
      fi
      mlo=$(printf '%s\n' "${tlo[@]}" | median)
      mhi=$(printf '%s\n' "${thi[@]}" | median)
      # Not positive: the setup's run-to-run spread swamped the transfers.
      lat[$k]=$(awk -v a="$mhi" -v b="$mlo" -v d="$((ihi - ilo))" \
        'BEGIN {l = (a - b) / (2 * d); if (l > 0) printf "%.3f", l; else print "noisy"}')
      mbps[$k]=$(awk -v s="$size" -v l="${lat[$k]}" 'BEGIN {if (l > 0) printf "%.2f", s / l; else print "?"}')
      if ((${#clo[@]} && ${#chi[@]})); then
        cpu[$k]=$(awk -v a="$(printf '%s\n' "${chi[@]}" | median)" -v b="$(printf '%s\n' "${clo[@]}" | median)" \
          -v d="$((ihi - ilo))" 'BEGIN {c = (a - b) * 1e6 / (2 * d); if (c >= 0) printf "%.2f", c; else print "noisy"}')
      fi
      raw_lat[$k]=$(printf '%s\n' "${rl[@]}" | median)
      raw_mbps[$k]=$(printf '%s\n' "${rb[@]}" | median)
      echo "bench:   -> ${lat[$k]} usec/xfer, ${mbps[$k]} MB/s, ${cpu[$k]:-?} CPU-us/xfer (fi_pingpong: ${raw_lat[$k]} usec/xfer, ${raw_mbps[$k]} MB/s)" >&2
    done
  done
done
elapsed=$((SECONDS - start_s))
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -n "${UET_BENCH_REV:-}" ]; then
  rev=$UET_BENCH_REV
elif rev="git $(git rev-parse --short HEAD 2>/dev/null)"; then
  git diff --quiet HEAD -- provider 2>/dev/null || rev+=", provider/ modified"
else
  rev="revision unknown: not a git checkout"
fi

fmt_num() { awk -v x="$1" 'BEGIN {if (x !~ /^-?[0-9.]+$/) print (x == "" ? "?" : x); else if (x + 0 >= 100) printf "%.0f", x; else if (x + 0 >= 10) printf "%.1f", x; else printf "%.2f", x}'; }
cell() {  # what kind
  local k=$1 what=$2 v=${lat[$1]:-failed}
  case $v in n/a | failed) echo "$v"; return ;; late) echo "not run (deadline)"; return ;; esac
  case $what in
    main) if [ "$v" = noisy ]; then echo "noisy (setup spread > transfer time)"; return; fi
      echo "$(fmt_num "$v") us, $(fmt_num "${mbps[$k]}") MB/s" ;;
    cpu) if [ -n "${cpu[$k]:-}" ]; then fmt_num "${cpu[$k]}"; else echo "?"; fi ;;
    cpumib) if [[ "${cpu[$k]:-}" =~ ^[0-9.]+$ ]]; then
        fmt_num "$(awk -v c="${cpu[$k]}" -v s="${k##*|}" 'BEGIN {print c * 1048576 / s}')"
      else echo "?"; fi ;;
    raw) echo "$(fmt_num "${raw_lat[$k]}") us, $(fmt_num "${raw_mbps[$k]}") MB/s" ;;
  esac
}
table() {  # mode what
  local mode=$1 what=$2 line pe s
  line="| provider | ep |"
  for s in "${sizes[@]}"; do line+=" $(human_size "${s%%:*}") |"; done
  echo "$line"
  line="|---|---|"
  for _ in "${sizes[@]}"; do line+="---|"; done
  echo "$line"
  for pe in "${providers[@]}"; do
    line="| ${pe%:*} | ${pe##*:} |"
    for s in "${sizes[@]}"; do line+=" $(cell "$mode|$pe|${s%%:*}" "$what") |"; done
    echo "$line"
  done
}
# ratio a/b and PASS when (op) holds against limit; "n/a" when a number is missing.
target_row() {  # name mode uet_key ref_key field op limit unit
  local name=$1 mode=$2 ku=$3 kr=$4 field=$5 op=$6 limit=$7 unit=$8 a b
  if [ "$field" = lat ]; then a=${lat[$ku]-not run}; b=${lat[$kr]-not run}; else a=${mbps[$ku]-${lat[$ku]-not run}}; b=${mbps[$kr]-${lat[$kr]-not run}}; fi
  if ! [[ "$a" =~ ^[0-9.]+$ && "$b" =~ ^[0-9.]+$ ]] || awk -v b="$b" 'BEGIN {exit !(b <= 0)}'; then
    [[ "$a" =~ ^[0-9.]+$ ]] && a="$(fmt_num "$a") $unit"
    [[ "$b" =~ ^[0-9.]+$ ]] && b="$(fmt_num "$b") $unit"
    echo "| $name | $mode | $a | $b | - | n/a |"
    return
  fi
  awk -v n="$name" -v m="$mode" -v a="$a" -v b="$b" -v op="$op" -v lim="$limit" -v u="$unit" 'BEGIN {
    r = a / b; ok = (op == "le") ? (r <= lim) : (r >= lim)
    printf "| %s | %s | %.2f %s | %.2f %s | %.2fx | %s |\n", n, m, a, u, b, u, r, ok ? "PASS" : "MISS" }'
}

cpu_row() {  # name mode uet_key ref_key: CPU per transfer, lower is better
  local a=${cpu[$3]:-} b=${cpu[$4]:-}
  if ! [[ "$a" =~ ^[0-9.]+$ && "$b" =~ ^[0-9.]+$ ]] || awk -v b="$b" 'BEGIN {exit !(b <= 0)}'; then
    echo "| $1 | $2 | ${a:-not run} | ${b:-not run} | - | n/a |"
    return
  fi
  awk -v n="$1" -v m="$2" -v a="$a" -v b="$b" -v s="${3##*|}" 'BEGIN {
    r = a / b; printf "| %s | %s | %.0f CPU-us/MiB | %.0f CPU-us/MiB | %.2fx | %s |\n", n, m,
      a * 1048576 / s, b * 1048576 / s, r, (r <= 1.0) ? "PASS" : "MISS" }'
}

{
  echo "# uet benchmark: fi_pingpong, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- host: $(uname -sr), $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)); load average $load_start at the start, $load_end at the end; ${elapsed} s"
  echo "- $(fi_info --version | tr '\n' ' ' | sed 's/ *$//'); uet from $prov_dir ($rev)"
  echo "- fi_pingpong: $pp_bin, loading ${pp_lib:-an unknown libfabric.so.1 (no ldd)}"
  echo "- N = $reps runs per cell after one warm-up run; iterations I per size: ${sizes[*]} (size:I), I_lo = I/10"
  echo "- latency: one-way usec/xfer; MB/s = size / latency (fi_pingpong's MB/sec, both directions); both with connection setup and start-up subtracted: (median T(I) - median T(I_lo)) / (2 (I - I_lo))"
  echo "- CPU: user + sys of both fi_pingpong processes per transfer (CPU-us), same subtraction; fi_pingpong busy-polls its CQs"
  echo "- processes pinned (server, client CPUs): ${UET_BENCH_CPUS:-no}; nice: ${UET_BENCH_NICE:-unchanged}"
  for n in "${notes[@]}"; do echo "- $n"; done
  ((late == 0)) || echo "- deadline: $late cells not started within UET_BENCH_DEADLINE_S=$deadline s (\"not run (deadline)\")"
  for mode in "${modes[@]}"; do
    echo
    if [ "$mode" = veth ]; then
      echo "## veth: two network namespaces (198.18.0.1 <-> 198.18.0.2)"
    else
      echo "## loopback: two processes on 127.0.0.1"
    fi
    echo
    echo "Latency and MB/s (setup subtracted, median of $reps):"
    echo
    table "$mode" main
    echo
    echo "CPU-us per transfer (both processes, setup subtracted):"
    echo
    table "$mode" cpu
    echo
    echo "CPU-us per MiB moved (both processes; the row above / the size in MiB):"
    echo
    table "$mode" cpumib
    echo
    echo "As fi_pingpong prints them for the I-iteration runs (median of $reps, connection setup included):"
    echo
    table "$mode" raw
    failed_runs=""
    for pe in "${providers[@]}"; do
      for s in "${sizes[@]}"; do
        f=${nfail[$mode|$pe|${s%%:*}]:-0}
        ((f == 0)) || failed_runs+=" ${pe%:*} ${pe##*:} $(human_size "${s%%:*}"): $f;"
      done
    done
    fewer=""
    for pe in "${providers[@]}"; do
      for s in "${sizes[@]}"; do
        f=${reduced[$mode|$pe|${s%%:*}]:-}
        [ -z "$f" ] || fewer+=" ${pe%:*} ${pe##*:} $(human_size "${s%%:*}"): I=$f;"
      done
    done
    if [ -n "$fewer" ]; then
      echo
      echo "Fewer iterations (UET_BENCH_MAX_RUN_S=$max_run_s):$fewer"
    fi
    if [ -n "$failed_runs" ]; then
      echo
      echo "Failed runs (of $((1 + 2 * reps)) per cell, warm-up included):$failed_runs"
    fi
  done
  echo
  echo "## Targets"
  echo
  echo "| target | mode | uet rdm | reference | ratio | result |"
  echo "|---|---|---|---|---|---|"
  for mode in "${modes[@]}"; do
    target_row "64 B latency <= net rdm" "$mode" "$mode|uet:rdm|64" "$mode|net:rdm|64" lat le 1.0 us
    target_row "64 B latency <= 1.3x udp dgram" "$mode" "$mode|uet:rdm|64" "$mode|udp:dgram|64" lat le 1.3 us
    for sz in 1048576 16777216; do
      hs=$(human_size $sz)
      target_row "$hs MB/s >= 1.2x net rdm" "$mode" "$mode|uet:rdm|$sz" "$mode|net:rdm|$sz" mbps ge 1.2 MB/s
      target_row "$hs MB/s >= 1.0x tcp;ofi_rxm" "$mode" "$mode|uet:rdm|$sz" "$mode|tcp;ofi_rxm:rdm|$sz" mbps ge 1.0 MB/s
      cpu_row "$hs CPU-us/MiB <= tcp;ofi_rxm" "$mode" "$mode|uet:rdm|$sz" "$mode|tcp;ofi_rxm:rdm|$sz"
      target_row "$hs uet@tss MB/s >= 0.6x uet" "$mode" "$mode|uet@tss:rdm|$sz" "$mode|uet:rdm|$sz" mbps ge 0.6 MB/s
    done
  done
} >"$out_md"

{
  printf '# mode\tprovider\tep\tsize\tlat_us\tMBps\tcpu_us\n'
  for mode in "${modes[@]}"; do
    for pe in "${providers[@]}"; do
      for s in "${sizes[@]}"; do
        k="$mode|$pe|${s%%:*}"
        [[ "${lat[$k]:-failed}" =~ ^[0-9.]+$ && "${mbps[$k]}" =~ ^[0-9.]+$ ]] || continue
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "${pe%:*}" "${pe##*:}" "${s%%:*}" "${lat[$k]}" \
          "${mbps[$k]}" "${cpu[$k]:-?}"
      done
    done
  done
} >"$out_tsv"

cat "$out_md"
echo
if [ "${UET_BENCH_PLOT:-1}" = 0 ]; then
  echo "bench: no plot (UET_BENCH_PLOT=0); report $out_md, data $out_tsv"
elif scripts/plot-bench.sh "$out_tsv" "$out_png" >&2; then
  echo "bench: report $out_md, data $out_tsv, plot $out_png"
else
  echo "bench: plotting failed (see above); report $out_md, data $out_tsv"
fi
