#!/usr/bin/env bash
# The whole FI_HMEM (CUDA) GPU run, in one call, on a bare offline GPU machine
# (README "GPU buffers", spec-notes/hmem.md "What is owed on a GPU").
#
#   scripts/device-run.sh [BUILD_DIR] [DEB_DIR] [NCCL_DIR]  run (defaults: build/rel,
#                                                      .device-debs, no aws-ofi-nccl step)
#   scripts/device-run.sh --fetch-debs [DEB_DIR]       here: download the runtime .debs
#   scripts/device-run.sh --bundle BUILD_DIR OUT_DIR   here: the three files the run needs,
#                                                      stripped of debug info (small to carry)
#
# BUILD_DIR is a build tree (provider/libuet-fi.so, tests/hmem/uet_prov_hmem_test,
# apps/uet-hmem-pingpong) or a --bundle folder. DEB_DIR holds Debian 12's
# libfabric 1.17 and what it and the provider load (DEVICE_FABRIC_DEBS in
# scripts/device-lib.sh); they are unpacked with dpkg -x into a private
# prefix, never over /. The mock CUDA
# driver of the build tree is never put on the loader path: the tests are
# told to fail, not skip, unless a real GPU answers (UET_HMEM_REQUIRE_GPU=1).
#
# Steps: prerequisites (build files, packages, a GPU and its driver) -> unpack
# -> every library resolved -> the hmem gtests -> uet-hmem-pingpong matrix over
# loopback (device<->device, host<->device, device<->host, tagged
# device<->device; every size 0 B..64 MiB, data check) -> benchmark (host<->host
# vs device<->device: 64 B, 4 KiB and 64 KiB latency, 1 MiB and 16 MiB MB/s;
# two processes, one process, and MPS where the image has it) -> the CUDA
# handoff probe (where a small message's time goes).
# Results under $OUT (default ./device-results): summary.md, gtest.xml,
# gtest.log, pingpong.log, bench.md, bench.log. Exit 0 only if all passed;
# 2 when a prerequisite is missing (the message says which).
# DEVICE_RUN_MOCK=BUILD/tests/hmem/fakecuda rehearses every step here without a
# GPU, against the mock driver (~30 s; its numbers are not GPU numbers).
set -uo pipefail

die() { echo "device-run: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
# DEVICE_FABRIC_DEBS and the device_* helpers: beside this script, or in the
# checkout when the script was copied into a carried folder.
lib=$(dirname "$0")/device-lib.sh
[[ -f $lib ]] || lib=$here/scripts/device-lib.sh
# shellcheck source=scripts/device-lib.sh
. "$lib" || die "cannot read $lib"
DEBS=("${DEVICE_FABRIC_DEBS[@]}")

if [[ ${1:-} == --fetch-debs ]]; then
  dir=${2:-$here/.device-debs}
  device_fetch_debs "$dir" "${DEBS[@]}" || die "cannot fetch the packages into $dir"
  ls -1 "$dir"/*.deb
  exit 0
fi

find_file() {  # find_file DIR NAME: the file in a build tree or a flat bundle
  local f
  for f in "$1/$2" "$1/provider/$2" "$1/tests/hmem/$2" "$1/apps/$2"; do
    [[ -f $f ]] && { echo "$f"; return 0; }
  done
  return 1
}
ARTEFACTS=(libuet-fi.so uet_prov_hmem_test uet-hmem-pingpong cuda-handoff-probe)

if [[ ${1:-} == --bundle ]]; then
  [[ $# -eq 3 ]] || die "usage: $0 --bundle BUILD_DIR OUT_DIR"
  mkdir -p "$3" || die "cannot create $3"
  for a in "${ARTEFACTS[@]}"; do
    f=$(find_file "$2" "$a") || die "no $a under $2 (build it: cmake --build $2 --target uet-fi uet_prov_hmem_test uet-hmem-pingpong)"
    cp "$f" "$3/$a" && strip --strip-debug "$3/$a" || die "cannot copy $f"
  done
  du -sh "$3"
  exit 0
fi

BUILD=${1:-$here/build/rel}
DEBDIR=${2:-$here/.device-debs}
# Optional: aws-ofi-nccl's functional tests over uet (issue 21). NCCL_DIR holds
# plugin/libnccl-net.so (built against Debian's libfabric 1.17, SENDRECV
# protocol), tests/{nccl_connection,...} (patched: cudaSetDevice(local_rank %
# device_count), data checks on CUDA buffers too) and ompi-debs/*.deb (Open MPI
# 4.1's runtime, unpacked into the same private prefix and relocated with
# OPAL_PREFIX). See spec-notes/hmem.md "aws-ofi-nccl" for how it was built.
NCCL_DIR=${3:-}
# DEVICE_RUN_STEPS: which steps run (default all; e.g. "nccl" to rehearse one).
STEPS=" ${DEVICE_RUN_STEPS:-gtests matrix bench nccl} "
step() { [[ $STEPS == *" $1 "* ]]; }
OUT=${OUT:-$PWD/device-results}

# ---- prerequisites: what is here first, then the GPU ----
declare -A path
for a in "${ARTEFACTS[@]}"; do
  path[$a]=$(find_file "$BUILD" "$a") ||
    die "prerequisite missing: $a not found in $BUILD (a build tree or a --bundle folder)"
done
shopt -s nullglob
debs=("$DEBDIR"/*.deb)
[[ ${#debs[@]} -gt 0 ]] || die "prerequisite missing: no .deb in $DEBDIR (fetch them with $0 --fetch-debs)"
missing_debs=$(device_missing_debs "$DEBDIR" "${DEBS[@]}")
[[ -z $missing_debs ]] || die "prerequisite missing: $DEBDIR has no .deb for ${missing_debs//$'\n'/ }"
command -v dpkg >/dev/null || { command -v ar >/dev/null && command -v tar >/dev/null; } ||
  die "prerequisite missing: neither dpkg nor ar+tar to unpack the packages"
echo "device-run: build files and ${#debs[@]} packages present"

# DEVICE_RUN_MOCK=<build>/tests/hmem/fakecuda: a rehearsal of this script
# without a GPU (every step against the mock driver; nothing it measures is a
# GPU result, and the summary says so).
mock=${DEVICE_RUN_MOCK:-}
gpu=""
if [[ -n $mock ]]; then
  [[ -e $mock/libcuda.so.1 ]] || die "DEVICE_RUN_MOCK=$mock has no libcuda.so.1"
  gpu="none: REHEARSAL against the mock CUDA driver ($mock), not a GPU run"
elif command -v nvidia-smi >/dev/null 2>&1; then
  gpu=$(nvidia-smi -L 2>/dev/null | head -1)
fi
if [[ -z $mock && -z $gpu && ! -e /dev/nvidia0 ]]; then
  die "no GPU: nvidia-smi lists none and /dev/nvidia0 does not exist; this run needs an NVIDIA GPU and its driver (the CI runs the mock-driver tests instead: ctest -L mock-driver)"
fi
libcuda=$( { ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}'; } )
extra_lib_dir=""
[[ -n $mock ]] && { libcuda=$mock/libcuda.so.1; extra_lib_dir=$mock; }
if [[ -z $libcuda ]]; then
  IFS=: read -r -a ld_dirs <<<"${LD_LIBRARY_PATH:-}"
  for d in "${ld_dirs[@]}" /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 \
           /usr/local/cuda/compat; do
    [[ -n $d && -e $d/libcuda.so.1 ]] && { libcuda=$d/libcuda.so.1; extra_lib_dir=$d; break; }
  done
fi
[[ -n $libcuda ]] || die "no GPU driver library: libcuda.so.1 is not on the loader path (GPU: ${gpu:-/dev/nvidia0})"
if [[ -z $mock ]]; then
  case $libcuda in *fakecuda*) die "the mock driver ($libcuda) is on the loader path: remove it";; esac
fi
echo "device-run: GPU: ${gpu:-/dev/nvidia0}; driver library $libcuda"
mkdir -p "$OUT" || die "cannot create $OUT"

# ---- unpack into a private prefix ----
PREFIX=$(mktemp -d /tmp/uet-device-prefix.XXXXXX) || die "mktemp failed"
unpack_deb() {  # unpack_deb DEB: its files under $PREFIX
  device_unpack_deb "$1" "$PREFIX" || die "cannot unpack $1"
}
for d in "${debs[@]}"; do unpack_deb "$d"; done
device_postinst "$PREFIX" || die "cannot complete the unpacked packages under $PREFIX"
LIBS=$PREFIX/usr/lib/x86_64-linux-gnu:$PREFIX/lib/x86_64-linux-gnu${extra_lib_dir:+:$extra_lib_dir}
export LD_LIBRARY_PATH=$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PREFIX/usr/bin:$PATH
export FI_PROVIDER_PATH=$(dirname "${path[libuet-fi.so]}")
[[ -z $mock ]] && export UET_HMEM_REQUIRE_GPU=1
for a in "${ARTEFACTS[@]}"; do
  missing=$(ldd "${path[$a]}" 2>&1 | grep "not found" || true)
  [[ -z $missing ]] || die "$a: libraries not found after unpacking: $missing"
done
fi_info -p uet >/dev/null 2>&1 || die "libfabric does not load the uet provider (FI_PROVIDER_PATH=$FI_PROVIDER_PATH; FI_LOG_LEVEL=warn says why)"
echo "device-run: prefix $PREFIX; libfabric $(fi_info --version 2>/dev/null | awk '/libfabric:/{print $2}') loads uet"

fail=0
{
  echo "# FI_HMEM device run"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- GPU: ${gpu:-/dev/nvidia0}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    sed 's/^/- nvidia-smi: /'
  echo "- kernel: $(uname -r); CPUs: $(nproc)"
  echo
  echo "fi_info -v -p uet, its NIC part (fi_info->nic):"
  echo
  echo '```'
  fi_text=$(fi_info -v -p uet 2>&1)
  awk '/^    nic:/ {on = 1} on && /^---/ {exit} on' <<<"$fi_text" | head -24
  grep -q '^    nic:' <<<"$fi_text" || echo "(no nic: fi_info->nic is NULL)"
  echo '```'
  echo
} >"$OUT/summary.md"

# ---- the hmem gtests, against the real driver ----
if step gtests; then
echo "device-run: gtests"
# SMALL_COPY_MODES: FI_UET_HMEM_SMALL_COPY values the gtests run under (sync:
# cuMemcpyDtoH/HtoD, the default; async: asynchronous copy + event polled).
: >"$OUT/gtest.log"
for mode in ${SMALL_COPY_MODES:-sync}; do
  t0=$SECONDS
  xml=()
  [[ $mode == "${SMALL_COPY_MODES%% *}" || -z ${SMALL_COPY_MODES:-} ]] && xml=(--gtest_output=xml:"$OUT/gtest.xml")
  echo "### FI_UET_HMEM_SMALL_COPY=$mode" >>"$OUT/gtest.log"
  if FI_UET_HMEM_SMALL_COPY=$mode timeout 200 "${path[uet_prov_hmem_test]}" "${xml[@]}" \
      >>"$OUT/gtest.log" 2>&1; then
    result=passed
  else
    result="FAILED (exit $?)"
    fail=1
  fi
  echo "- gtests (uet_prov_hmem_test, ${mock:+MOCK driver}${mock:-real driver}, FI_UET_HMEM_SMALL_COPY=$mode): $result in $((SECONDS - t0)) s; $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/gtest.log" | tail -3 | tr '\n' ' ')" >>"$OUT/summary.md"
done
fi

# ---- ping-pong over loopback ----
port=$((30000 + RANDOM % 20000))
# Each run has a time limit (PP_TIMEOUT seconds): the device tool gives a call
# 10 minutes, and a stuck run must not take the others' results with it.
PP_TIMEOUT=90
pingpong() {  # pingpong SERVER_MEM CLIENT_MEM ARGS...: one run, output appended to $log
  local smem=$1 cmem=$2
  shift 2
  port=$((port + 1))
  echo "### server -m $smem, client -m $cmem: $*${FI_UET_HMEM_SMALL_COPY:+ (FI_UET_HMEM_SMALL_COPY=$FI_UET_HMEM_SMALL_COPY)}" >>"$log"
  timeout $PP_TIMEOUT "${path[uet-hmem-pingpong]}" -p uet -e rdm -m "$smem" -B $port -s 127.0.0.1 "$@" \
    >>"$log.server" 2>&1 &
  local spid=$!
  timeout $PP_TIMEOUT "${path[uet-hmem-pingpong]}" -p uet -e rdm -m "$cmem" -P $port -s 127.0.0.1 "$@" \
    127.0.0.1 >>"$log" 2>&1
  local crc=$?
  wait $spid
  local src=$?
  echo "(client exit $crc, server exit $src)" >>"$log"
  [[ $crc -eq 0 && $src -eq 0 ]]
}

if step matrix; then
echo "device-run: ping-pong matrix (FI_UET_HMEM_SMALL_COPY=${MATRIX_SMALL_COPY:-sync})"
export FI_UET_HMEM_SMALL_COPY=${MATRIX_SMALL_COPY:-sync}
log=$OUT/pingpong.log
: >"$log"
{
  echo
  echo "## Ping-pong matrix (uet-hmem-pingpong -S all -c, loopback, FI_UET_HMEM_SMALL_COPY=$FI_UET_HMEM_SMALL_COPY)"
  echo
  echo "| client | server | mode | result |"
  echo "|---|---|---|---|"
} >>"$OUT/summary.md"
for pair in "cuda cuda" "host cuda" "cuda host" "cuda cuda tagged"; do
  set -- $pair
  extra=()
  [[ ${3:-} == tagged ]] && extra=(-m tagged)
  if pingpong "$2" "$1" -S all -I 5 -w 1 -c "${extra[@]}"; then r=pass; else r=FAIL; fail=1; fi
  echo "| $1 | $2 | ${3:-msg} | $r |" >>"$OUT/summary.md"
done
cat "$log.server" >>"$log" 2>/dev/null && rm -f "$log.server"
unset FI_UET_HMEM_SMALL_COPY
fi

# ---- where the time goes: CUDA copies taking turns, no network ----
# cuda-handoff-probe: one 64 B HtoD+DtoH per turn, the turn passed through a
# pipe between two threads of one process (one CUDA context) or two processes
# (two contexts time-sliced on the one GPU), as uet-hmem-pingpong's two
# processes do over loopback (spec-notes/hmem.md "Where the time goes").
if step bench; then
echo "device-run: handoff probe"
log=$OUT/bench.log
: >"$log"
probe() {  # probe ARGS...: appended to $log and to $probe_md
  local out
  out=$(timeout 60 "${path[cuda-handoff-probe]}" "$@" 2>&1) || fail=1
  echo "$out" >>"$log"
  echo "$out" | sed 's/^/    /' >>"$probe_md"
}
probe_md=$(mktemp)
for size in ${PROBE_SIZES-64 4096}; do
  for mode in alone threads procs; do
    probe -n 2000 -s $size $mode
    probe -n 2000 -s $size -a $mode
  done
done

# MPS (nvidia-cuda-mps-control, if the driver image has it): the two
# processes' copies in one shared GPU context, no time-slicing. A user-space
# daemon with private pipe and log folders, stopped at the end; the GPU's
# settings are not touched.
mps_dir=""
mps_start() {
  command -v nvidia-cuda-mps-control >/dev/null 2>&1 || return 1
  mps_dir=$(mktemp -d /tmp/uet-mps.XXXXXX)
  export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  timeout 20 nvidia-cuda-mps-control -d || { unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; return 1; }
  sleep 1
}
mps_stop() {
  [[ -n $mps_dir ]] || return 0
  echo quit | timeout 20 nvidia-cuda-mps-control >/dev/null 2>&1
  sleep 1
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  mps_dir=""
}
trap mps_stop EXIT

# ---- benchmark: host<->host vs device<->device ----
echo "device-run: benchmark"
PP_TIMEOUT=60
# -L: server and client as two threads of one process (one CUDA context).
pingpong_loop() {  # pingpong_loop MEM ARGS...
  local mem=$1
  shift
  port=$((port + 1))
  echo "### one process (-L), -m $mem: $*${FI_UET_HMEM_SMALL_COPY:+ (FI_UET_HMEM_SMALL_COPY=$FI_UET_HMEM_SMALL_COPY)}" >>"$log"
  timeout $PP_TIMEOUT "${path[uet-hmem-pingpong]}" -L -p uet -e rdm -m "$mem" -B $port "$@" >>"$log" 2>&1
  local rc=$?
  echo "(exit $rc)" >>"$log"
  [[ $rc -eq 0 ]]
}
declare -A iters=([64]=2000 [4096]=2000 [65536]=500 [1048576]=100 [16777216]=20)
sizes=(64 4096 65536 1048576 16777216)
# BENCH_SIZES: the sizes measured (others print "-"); BENCH_ROWS: "procs"
# (two processes) and/or "loop" (one process); BENCH_MPS=0: no MPS rows;
# BENCH_RECV_PIPELINE_OFF=1: one more cuda<->cuda row with
# FI_UET_HMEM_RECV_PIPELINE=0 (receive copies only at the completion: before
# and after on the same card, same run).
measured=" ${BENCH_SIZES:-${sizes[*]}} "
rows=" ${BENCH_ROWS:-procs loop} "
{
  echo "# FI_HMEM benchmark: uet-hmem-pingpong over loopback, $(date -u +%F)"
  echo
  echo "usec = half a round trip; MB/s = size / usec (one way). GPU: ${gpu:-?}."
  echo "Two processes unless the row says one process (-L: two threads, one CUDA context);"
  echo "MPS: two processes through nvidia-cuda-mps-control. FI_UET_HMEM_TIMING=1 on device rows"
  echo "(its per-call totals are in bench.log)."
  echo
  echo "| memory | 64 B usec | 4 KiB usec | 64 KiB usec | 1 MiB MB/s | 16 MiB MB/s |"
  echo "|---|---|---|---|---|---|"
} >"$OUT/bench.md"
bench_row() {  # bench_row LABEL MEM loop|procs
  local label=$1 mem=$2 how=$3 row="| $1 |" size usec ok
  for size in "${sizes[@]}"; do
    if [[ $measured != *" $size "* ]]; then
      row+=" - |"
      continue
    fi
    if [[ $how == loop ]]; then
      pingpong_loop "$mem" -S $size -I ${iters[$size]} -w $((iters[$size] / 10)); ok=$?
    else
      pingpong "$mem" "$mem" -S $size -I ${iters[$size]} -w $((iters[$size] / 10)); ok=$?
      cat "$log.server" >>"$log" 2>/dev/null; rm -f "$log.server"
    fi
    if [[ $ok -eq 0 ]]; then
      usec=$(awk -v s=$size '$1 == s {print $7}' "$log" | tail -1)
      if [[ $size -le 65536 ]]; then
        row+=" $usec |"
      else
        row+=" $(awk -v s=$size -v u="$usec" 'BEGIN {printf "%.0f", s / u}') |"
      fi
    else
      row+=" FAIL |"
      fail=1
    fi
  done
  echo "$row" >>"$OUT/bench.md"
}
export FI_UET_HMEM_TIMING=1
for round in $(seq 1 "${BENCH_ROUNDS:-2}"); do
  if [[ $rows == *" procs "* ]]; then
    bench_row "host<->host" host procs
    bench_row "cuda<->cuda" cuda procs
    if [[ -n ${BENCH_RECV_PIPELINE_OFF:-} ]]; then
      FI_UET_HMEM_RECV_PIPELINE=0 bench_row "cuda<->cuda, RECV_PIPELINE=0" cuda procs
    fi
  fi
  if [[ $rows == *" loop "* ]]; then
    bench_row "host<->host, one process" host loop
    bench_row "cuda<->cuda, one process" cuda loop
  fi
  if [[ -n ${BENCH_ASYNC:-} ]]; then
    export FI_UET_HMEM_SMALL_COPY=async
    bench_row "cuda<->cuda, SMALL_COPY=async" cuda procs
    bench_row "cuda<->cuda, one process, SMALL_COPY=async" cuda loop
    unset FI_UET_HMEM_SMALL_COPY
  fi
done
if [[ ${BENCH_MPS:-1} != 0 ]] && mps_start; then
  probe -n 2000 -s 64 procs
  probe -n 2000 -s 64 -a procs
  bench_row "cuda<->cuda, MPS" cuda procs
  if [[ -n ${BENCH_ASYNC:-} ]]; then
    export FI_UET_HMEM_SMALL_COPY=async
    bench_row "cuda<->cuda, MPS, SMALL_COPY=async" cuda procs
    unset FI_UET_HMEM_SMALL_COPY
  fi
  bench_row "host<->host, MPS running" host procs
  mps_stop
  mps_note="MPS rows: nvidia-cuda-mps-control found and started."
else
  mps_note="MPS: nvidia-cuda-mps-control not found or did not start; no MPS rows."
fi
unset FI_UET_HMEM_TIMING
{
  echo
  echo "$mps_note"
  echo
  echo "cuda-handoff-probe (CUDA copies taking turns, no network; us per turn = per half round trip):"
  echo
  cat "$probe_md"
  echo
  echo "FI_UET_HMEM_TIMING at 64 B, device rows (one process per run and size: the totals are that run's):"
  echo
  awk '/^### / {on = ($0 ~ /cuda/ && $0 ~ /-S 64 /); if (on) print "    " $0} on && /^uet: FI_HMEM timing/ {print "    " $0}' "$log"
} >>"$OUT/bench.md"
rm -f "$probe_md"
{ echo; cat "$OUT/bench.md"; } >>"$OUT/summary.md"
fi
# ---- aws-ofi-nccl functional tests over uet (optional: NCCL_DIR) ----
if [[ -n $NCCL_DIR ]] && step nccl; then
  echo "device-run: aws-ofi-nccl functional tests"
  nlog=$OUT/nccl.log
  : >"$nlog"
  {
    echo
    echo "## aws-ofi-nccl functional tests over uet (2 MPI ranks, one GPU, SENDRECV)"
    echo
    echo "| test | result | seconds |"
    echo "|---|---|---|"
  } >>"$OUT/summary.md"
  ok_unpack=1
  for d in "$NCCL_DIR"/ompi-debs/*.deb; do (unpack_deb "$d") || ok_unpack=0; done
  export OPAL_PREFIX=$PREFIX/usr OPAL_SYSCONFDIR=$PREFIX/etc/openmpi
  export PMIX_INSTALL_PREFIX=$PREFIX/usr/lib/x86_64-linux-gnu/pmix2
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export PMIX_MCA_pcompress_base_silence_warning=1
  # Two ranks on one host: each endpoint its own UDP port (issue 18 makes this
  # the default; until then FI_UET_PORT=0 asks for an ephemeral one).
  export FI_UET_PORT=0
  nccl_ld=$NCCL_DIR/plugin:$PREFIX/usr/lib/x86_64-linux-gnu/openmpi/lib:$LD_LIBRARY_PATH
  for t in nccl_connection nccl_message_transfer ring reuse_listen_comm inflight_close; do
    if [[ $ok_unpack -eq 0 || ! -x $NCCL_DIR/tests/$t ]]; then
      echo "| $t | not run (missing files) | |" >>"$OUT/summary.md"; fail=1; continue
    fi
    if (( SECONDS > ${NCCL_DEADLINE:-330} )); then
      echo "| $t | not run (out of time: the call's limit) | |" >>"$OUT/summary.md"; continue
    fi
    echo "### $t" >>"$nlog"
    t0=$SECONDS
    LD_LIBRARY_PATH=$nccl_ld FI_PROVIDER=uet OFI_NCCL_PROTOCOL=SENDRECV \
      timeout 60 "$PREFIX/usr/bin/orterun" --mca plm isolated --mca btl self,vader --mca pml ob1 \
      -x LD_LIBRARY_PATH -x FI_PROVIDER -x FI_PROVIDER_PATH -x OFI_NCCL_PROTOCOL -x FI_UET_PORT \
      -np 2 "$NCCL_DIR/tests/$t" >>"$nlog" 2>&1
    rc=$?
    echo "(exit $rc)" >>"$nlog"
    [[ $rc -eq 0 ]] && r=pass || { r="FAIL (exit $rc)"; fail=1; }
    echo "| $t | $r | $((SECONDS - t0)) |" >>"$OUT/summary.md"
  done
fi

rm -rf "$PREFIX"
echo "device-run: $([[ $fail -eq 0 ]] && echo all passed || echo FAILURES): results in $OUT"
cat "$OUT/summary.md"
exit $fail
