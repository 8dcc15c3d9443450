#!/usr/bin/env bash
# scripts/bench.sh on the lent device machine (issue 20): 16 cores, offline, an
# image that is not Debian and has no libfabric, perhaps no iproute2 or GNU time.
#
#   scripts/device-bench.sh --prepare DIR [BUILD_DIR]   here (Debian 12, network)
#   scripts/device-bench.sh DIR [N]                     there, in the checkout's root
#
# --prepare fills DIR (a folder git ignores, carried to the machine):
#   DIR/bundle/libuet-fi.so  BUILD_DIR's provider (default build/release), stripped
#                            of debug info; copied again on every --prepare
#   DIR/debs/*.deb           Debian 12's libfabric 1.17 and its libraries
#                            (DEVICE_FABRIC_DEBS, scripts/device-lib.sh) and what
#                            bench.sh and pingpong.sh call that the image may lack:
#                            iproute2 (`ip`) and time (GNU time), with their
#                            libraries (TOOL_DEBS below); downloaded once, reused
#   DIR/REVISION             the checkout's git revision (the copy on the machine
#                            is no git checkout)
#
# DIR [N], on the machine: unpacks DIR/debs into a private prefix under /tmp
# (removed at the end); fi_pingpong and fi_info always from it; `ip` and GNU time
# from the image when they work there, else from it; on LD_LIBRARY_PATH only
# libfabric.so.1 (always the carried 1.17) and the libraries the loader finds
# nowhere on the image or finds too old there (`ldd` says which), never libc,
# libstdc++ or libgcc_s: the image's own are newer. Then records the machine
# (CPUs, model, kernel, load, memory, where each binary and library comes from)
# and runs scripts/bench.sh N (default 3) with the provider from DIR/bundle.
# Results in $OUT (default ./device-bench-results): bench.md (the report; its
# notes say whether veth ran or why not), bench.tsv, bench.log (bench.sh's
# progress, one line per cell), device-bench.log (this script's output),
# machine.md. Exit 0 when bench.sh wrote its report, 2 when a prerequisite is
# missing (the message says which).
#
# Environment (run):
#   DEVICE_BENCH_DEADLINE_S=S   bench.sh's UET_BENCH_DEADLINE_S (default 270): the
#                               cells not started by then say "not run (deadline)",
#                               so the report is written inside the call's limit
#   DEVICE_BENCH_TOOLS=auto|carried  carried: the carried `ip` and GNU time even
#                               where the image has its own (a rehearsal here)
#   DEVICE_BENCH_CMD="CMD"      run CMD (bash -c) instead of bench.sh, with the
#                               same environment (a diagnostic; its output only)
#   DEVICE_BENCH_LIBS=fill|all  all: every carried library directory on
#                               LD_LIBRARY_PATH (as device-run.sh does), not only
#                               what the image lacks (a rehearsal here: nothing
#                               but libc, libm, libstdc++, libgcc_s from the host)
#   UET_BENCH_MODES, UET_BENCH_PROVIDERS, UET_BENCH_SIZES, UET_BENCH_TIMEOUT and
#   the other UET_BENCH_* of bench.sh are passed on; defaults here: providers in
#   the order the targets need them (uet, net, tcp;ofi_rxm, udp dgram, uet@tss,
#   uet@1ev, udp;ofi_rxd: a deadline cuts the last), UET_BENCH_TIMEOUT=20.
set -uo pipefail

die() { echo "device-bench: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/device-lib.sh
. "$here/scripts/device-lib.sh" || die "cannot read $here/scripts/device-lib.sh"

# bench.sh's and pingpong.sh's external commands beyond coreutils, grep, sed,
# awk: ip (iproute2: namespaces, veth) and GNU time (CPU seconds). ip's
# libraries as `ldd /bin/ip` lists them on Debian 12 (ss, which needs more, is
# not used; nft, sysctl, taskset, tcpdump only with options bench.sh never sets).
TOOL_DEBS=(iproute2 libbpf1 libelf1 libmnl0 libbsd0 libmd0 libcap2 zlib1g time)

if [[ ${1:-} == --prepare ]]; then
  [[ $# -ge 2 && $# -le 3 ]] || die "usage: $0 --prepare DIR [BUILD_DIR]"
  dir=$2
  build=${3:-$here/build/release}
  so=$build/provider/libuet-fi.so
  [[ -f $so ]] || so=$build/libuet-fi.so
  [[ -f $so ]] || die "no libuet-fi.so under $build (cmake --build $build --target uet-fi)"
  mkdir -p "$dir/bundle" || die "cannot create $dir"
  cp "$so" "$dir/bundle/libuet-fi.so" || die "cannot copy $so"
  strip --strip-debug "$dir/bundle/libuet-fi.so" || die "cannot strip $dir/bundle/libuet-fi.so"
  device_fetch_debs "$dir/debs" "${DEVICE_FABRIC_DEBS[@]}" "${TOOL_DEBS[@]}" ||
    die "cannot fetch the packages into $dir/debs"
  rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null) || rev="?"
  git -C "$here" diff --quiet HEAD -- provider 2>/dev/null || rev+=", provider/ modified"
  echo "git $rev, built $(date -u -r "$so" '+%F %H:%M UTC')" >"$dir/REVISION"
  echo "device-bench: $dir: libuet-fi.so from $so ($(cat "$dir/REVISION")), $(ls "$dir/debs" | wc -l) packages; $(du -sh "$dir" | cut -f1) in all"
  exit 0
fi

# ---------------------------------------------------------------- on the machine
[[ $# -ge 1 && $# -le 2 && ${1:-} != -* ]] || die "usage: $0 DIR [N]   or   $0 --prepare DIR [BUILD_DIR]"
DIR=$(cd "$1" 2>/dev/null && pwd) || die "no directory $1"
reps=${2:-3}
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "N must be a positive number"
OUT=${OUT:-$PWD/device-bench-results}
mkdir -p "$OUT" || die "cannot create $OUT"
exec > >(tee "$OUT/device-bench.log") 2>&1
tee_pid=$!
PREFIX=
# On every exit: the prefix removed, and the log complete before the call returns.
# shellcheck disable=SC2317  # invoked by the trap
finish() {
  [[ -z $PREFIX ]] || rm -rf "$PREFIX"
  exec >&- 2>&-
  wait "$tee_pid" 2>/dev/null
}
trap finish EXIT

# ---- prerequisites ----
[[ -f $DIR/bundle/libuet-fi.so ]] || die "prerequisite missing: $DIR/bundle/libuet-fi.so (run --prepare here first)"
missing=$(device_missing_debs "$DIR/debs" "${DEVICE_FABRIC_DEBS[@]}" "${TOOL_DEBS[@]}")
[[ -z $missing ]] || die "prerequisite missing: $DIR/debs has no .deb for ${missing//$'\n'/ }"
lacking=()
for c in awk grep sed mktemp od tr chmod env cut sort nproc uname cat tail seq sleep timeout id; do
  command -v "$c" >/dev/null || lacking+=("$c")
done
command -v dpkg >/dev/null || { command -v ar >/dev/null && command -v tar >/dev/null; } ||
  lacking+=("dpkg (or ar and tar)")
((${#lacking[@]} == 0)) || die "prerequisite missing on this machine: ${lacking[*]}"
if ! command -v ldd >/dev/null; then  # glibc's ldd is a script around this
  loader=/lib64/ld-linux-x86-64.so.2
  [[ -x $loader ]] || die "prerequisite missing on this machine: ldd (and no $loader)"
  ldd() { LD_TRACE_LOADED_OBJECTS=1 "$loader" "$@"; }
fi

# ---- unpack into a private prefix ----
PREFIX=$(mktemp -d /tmp/uet-bench-prefix.XXXXXX) || die "mktemp failed"
for d in "$DIR"/debs/*.deb; do
  p=$(basename "$d")
  p=${p%%_*}
  root=$PREFIX/tools
  [[ " ${DEVICE_FABRIC_DEBS[*]} " == *" $p "* ]] && root=$PREFIX/fabric
  device_unpack_deb "$d" "$root" || die "cannot unpack $d"
done
device_postinst "$PREFIX/fabric" || die "cannot complete the unpacked packages under $PREFIX/fabric"
mkdir -p "$PREFIX/bin" "$PREFIX/lib"
carried() {  # carried NAME: the unpacked file NAME (a program or a library)
  local d
  for d in "$PREFIX"/{fabric,tools}/{usr/bin,usr/sbin,bin,sbin,usr/lib/x86_64-linux-gnu,lib/x86_64-linux-gnu}; do
    [[ -e $d/$1 ]] && { echo "$d/$1"; return 0; }
  done
  return 1
}
for p in fi_pingpong fi_info; do
  f=$(carried "$p") || die "the packages hold no $p"
  ln -s "$f" "$PREFIX/bin/$p"
done

# ip and GNU time: the image's when they do what the scripts ask, else carried.
tools_from=${DEVICE_BENCH_TOOLS:-auto}
[[ $tools_from == auto || $tools_from == carried ]] || die "DEVICE_BENCH_TOOLS must be auto or carried"
declare -A tool_src
sys_ip=$(type -P ip)
if [[ $tools_from == auto && -n $sys_ip ]] && "$sys_ip" netns list >/dev/null 2>&1; then
  tool_src[ip]="the image's $sys_ip"
else
  ln -s "$(carried ip)" "$PREFIX/bin/ip" || die "the packages hold no ip"
  why="the image has no ip"
  [[ -n $sys_ip ]] && why="the image's $sys_ip cannot run \`ip netns list\`"
  [[ $tools_from == carried ]] && why="DEVICE_BENCH_TOOLS=carried"
  tool_src[ip]="carried (Debian 12 iproute2; $why)"
fi
if [[ $tools_from == auto && -x /usr/bin/time ]] && /usr/bin/time -q -f '%U %S' -o /dev/null true 2>/dev/null; then
  time_bin=/usr/bin/time
  tool_src[time]="the image's /usr/bin/time"
else
  time_bin=$(carried time) || die "the packages hold no GNU time"
  why="the image has no working /usr/bin/time"
  [[ $tools_from == carried ]] && why="DEVICE_BENCH_TOOLS=carried"
  tool_src[time]="carried (Debian 12 time; $why)"
fi
export PATH=$PREFIX/bin:$PATH
export UET_PINGPONG_FI_PINGPONG=$PREFIX/bin/fi_pingpong UET_PINGPONG_TIME=$time_bin
bins=("$PREFIX/bin/fi_pingpong" "$PREFIX/bin/fi_info" "$DIR/bundle/libuet-fi.so" "$time_bin")
[[ -L $PREFIX/bin/ip ]] && bins+=("$PREFIX/bin/ip")

# ---- libraries ----
libs_mode=${DEVICE_BENCH_LIBS:-fill}
case $libs_mode in
  all)
    for d in "$PREFIX"/{fabric,tools}/{usr/lib,lib}/x86_64-linux-gnu; do
      [[ -d $d ]] && LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    done
    ;;
  fill)
    # lacking BIN: the libraries BIN's loader finds nowhere, or finds without a
    # symbol version BIN needs (too old), with LD_LIBRARY_PATH as it stands.
    lacking() {
      ldd "$1" 2>&1 | awk '
        / => not found/ {print $1}
        /version .* not found/ {n = split($2, a, "/"); sub(/:$/, "", a[n]); print a[n]}' | sort -u
    }
    ln -s "$(carried libfabric.so.1)" "$PREFIX/lib/libfabric.so.1" || die "the packages hold no libfabric.so.1"
    LD_LIBRARY_PATH=$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
    for round in 1 2 3 4 5 6; do
      added=0
      for b in "${bins[@]}"; do
        for name in $(lacking "$b"); do
          case $name in libc.so* | libm.so* | libstdc++* | libgcc_s* | ld-linux*)
            die "$b needs a newer $name than this image has: $(ldd "$b" 2>&1 | grep -m1 "$name")" ;;
          esac
          [[ -e $PREFIX/lib/$name ]] && die "$b: the carried $name does not do either: $(ldd "$b" 2>&1 | grep -m1 "$name")"
          f=$(carried "$name") || die "$b needs $name, which neither this image nor the packages hold"
          ln -s "$f" "$PREFIX/lib/$name"
          added=1
        done
      done
      ((added)) || break
      ((round < 6)) || die "libraries still lacking after $round rounds"
    done
    ;;
  *) die "DEVICE_BENCH_LIBS must be fill or all" ;;
esac
export LD_LIBRARY_PATH
export FI_PROVIDER_PATH=$DIR/bundle
for b in "${bins[@]}"; do
  bad=$(ldd "$b" 2>&1 | grep "not found")
  [[ -z $bad ]] || die "$b: libraries not found: $bad"
done
fi_info -p uet >/dev/null 2>&1 ||
  die "libfabric does not load the uet provider from $FI_PROVIDER_PATH: $(FI_LOG_LEVEL=warn fi_info -p uet 2>&1 | tail -3)"

echo "device-bench: prefix $PREFIX ready after $SECONDS s"

# ---- the machine, and where each program and library comes from ----
{
  echo "# The machine (scripts/device-bench.sh, $(date -u '+%F %H:%M UTC'))"
  echo
  echo "- $( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-?}") || echo "os-release: none"); kernel $(uname -r)"
  echo "- CPUs: $(nproc) ($(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}' ||
    awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- memory: $(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  # The fixed cost of every fi_pingpong process, which bench.sh's subtraction
  # removes but which sets how long the bench takes: the libraries' constructors
  # (libinfinipath calibrates its cycle counter with ~330 usleep(125) calls),
  # then fi_getinfo's provider initialisation (verbs reads /proc/kallsyms).
  t0=$EPOCHREALTIME; fi_info --version >/dev/null; t1=$EPOCHREALTIME
  fi_info -p tcp >/dev/null 2>&1; t2=$EPOCHREALTIME
  echo "- start-up of one libfabric process: $(awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {printf "%.0f ms to main() (fi_info --version), %.0f ms with fi_getinfo (fi_info -p tcp)", (b - a) * 1000, (c - b) * 1000}')"
  echo "- provider: $DIR/bundle/libuet-fi.so ($(cat "$DIR/REVISION" 2>/dev/null || echo "no REVISION"))"
  echo "- libfabric: $(fi_info --version | tr '\n' ' ')"
  echo "- ip: ${tool_src[ip]}; GNU time: ${tool_src[time]}"
  echo "- libraries: DEVICE_BENCH_LIBS=$libs_mode; LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  [[ $libs_mode == fill ]] && echo "- carried libraries on the loader path: $(cd "$PREFIX/lib" && ls | tr '\n' ' ')"
  echo
  echo "Where each program's libraries resolve (ldd; \"carried\": under $PREFIX):"
  echo
  for b in "${bins[@]}"; do
    ldd "$b" 2>/dev/null | awk -v p="$PREFIX/" -v b="$b" '
      $2 == "=>" && $3 ~ /^\// { if (index($3, p) == 1) c = c " " $1; else s = s " " $1 }
      END { printf "- %s: carried:%s; the image'"'"'s:%s\n", b, c ? c : " none", s ? s : " none" }'
  done
  echo
  echo "type -a fi_pingpong: $(type -a fi_pingpong | tr '\n' ';')"
} >"$OUT/machine.md"
pp_lib=$(ldd "$UET_PINGPONG_FI_PINGPONG" | awk '$1 == "libfabric.so.1" {print $3}')
echo "- fi_pingpong $UET_PINGPONG_FI_PINGPONG -> $(readlink -f "$UET_PINGPONG_FI_PINGPONG") loads $pp_lib -> $(readlink -f "$pp_lib")" >>"$OUT/machine.md"
cat "$OUT/machine.md"

# ---- the bench ----
export UET_BENCH_PROV_DIR=$DIR/bundle UET_BENCH_OUT=$OUT/bench.md UET_BENCH_PLOT=0
export UET_BENCH_DEADLINE_S=${DEVICE_BENCH_DEADLINE_S:-270}
UET_BENCH_REV=$(cat "$DIR/REVISION" 2>/dev/null || echo "revision unknown: no $DIR/REVISION")
export UET_BENCH_REV
export UET_BENCH_TIMEOUT=${UET_BENCH_TIMEOUT:-20}
export UET_BENCH_PROVIDERS=${UET_BENCH_PROVIDERS:-uet:rdm net:rdm tcp;ofi_rxm:rdm udp:dgram uet@tss:rdm uet@1ev:rdm udp;ofi_rxd:rdm}
echo "device-bench: scripts/bench.sh $reps (deadline ${UET_BENCH_DEADLINE_S} s; progress in $OUT/bench.log)"
t0=$SECONDS
cd "$here" || die "cannot enter $here"
if [[ -n ${DEVICE_BENCH_CMD:-} ]]; then
  # A prepared diagnostic instead of the bench, in the same environment
  # (the private prefix, fi_pingpong, FI_PROVIDER_PATH); its own output.
  echo "device-bench: DEVICE_BENCH_CMD: $DEVICE_BENCH_CMD"
  bash -c "$DEVICE_BENCH_CMD"
  echo "device-bench: DEVICE_BENCH_CMD exit $? after $((SECONDS - t0)) s"
  exit 0
fi
scripts/bench.sh "$reps" 2>"$OUT/bench.log"
rc=$?
echo "device-bench: bench.sh exit $rc after $((SECONDS - t0)) s"
[[ -f $OUT/bench.md ]] || die "bench.sh wrote no report (exit $rc): see $OUT/bench.log"
veth_cells=$(awk '$1 == "veth"' "$OUT/bench.tsv" 2>/dev/null | wc -l)
if ((veth_cells > 0)); then
  echo "device-bench: veth: run ($veth_cells cells measured across two network namespaces joined by a veth pair)"
elif grep -q '^- veth skipped' "$OUT/bench.md"; then
  echo "device-bench: veth: not run: $(grep -m1 '^- veth skipped' "$OUT/bench.md")"
else
  echo "device-bench: veth: no cell measured (not in UET_BENCH_MODES, failed, or past the deadline: see bench.md)"
fi
exit 0
