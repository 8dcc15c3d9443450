#!/usr/bin/env bash
# Build upstream fabtests v1.17.0 against the system libfabric (Debian 12: libfabric-dev
# 1.17) and run it with -p uet, and for comparison -p tcp and -p udp in the same run,
# server and client on one host (127.0.0.1). Prints a result table:
#   test | provider | pass / fail / not supported / timeout | seconds
# Not run in CI (too slow; needs the fabtests source). Issue 18, part 4.
#
# Usage: scripts/fabtests.sh [options] [test-name-regex]
#   --src PATH       fabtests source: a directory (the fabtests/ folder or a libfabric tree
#                    holding one), a tarball (.tar.gz/.tar.bz2/.tar.xz of either), or a bare
#                    git repository of ofiwg/libfabric (tag $FABTESTS_TAG is archived).
#                    Default: $FABTESTS_SRC, else /work/.mirror/ofiwg+libfabric/repo.
#   --work DIR       build/output folder (default: build/fabtests, or $FABTESTS_WORK)
#   --providers LIST comma-separated (default: uet,tcp,udp, or $FABTESTS_PROVIDERS)
#   --timeout S      per-test wall-clock limit in seconds (default 60, or $FABTESTS_TIMEOUT)
#   --repeat N       run each test N times (default 1)
#   --no-deps        do not apt-get install autoconf/automake/libtool
#   --provider-path  FI_PROVIDER_PATH for uet (default: build/release/provider)
#   --libfabric DIR  build and run against the libfabric installed in prefix DIR instead of
#                    the system one (scripts/libfabric2.sh: libfabric 2.x, FABTESTS_TAG v2.x)
# The optional regex selects tests by their command line (grep -E).
set -u -o pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
tag=${FABTESTS_TAG:-v1.17.0}
src=${FABTESTS_SRC:-/work/.mirror/ofiwg+libfabric/repo}
work=${FABTESTS_WORK:-$repo/build/fabtests}
providers=${FABTESTS_PROVIDERS:-uet,tcp,udp}
limit=${FABTESTS_TIMEOUT:-60}
repeat=1
deps=1
prov_path=${FI_PROVIDER_PATH:-$repo/build/release/provider}
filter=""
lf_prefix=""

while [ $# -gt 0 ]; do
  case "$1" in
    --src) src=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --providers) providers=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-deps) deps=0; shift ;;
    --provider-path) prov_path=$2; shift 2 ;;
    --libfabric) lf_prefix=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) filter=$1; shift ;;
  esac
done

log() { echo "fabtests.sh: $*" >&2; }

# ---- tools ------------------------------------------------------------------------------
if [ "$deps" = 1 ]; then
  need=()
  for p in autoconf automake libtool libfabric-dev libfabric-bin make gcc; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
    log "installing ${need[*]}"
    $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq "${need[@]}" || exit 1
  fi
fi

lf_configure=()
if [ -n "$lf_prefix" ]; then
  [ -f "$lf_prefix/include/rdma/fabric.h" ] || { log "no libfabric in $lf_prefix"; exit 1; }
  lf_configure=(--with-libfabric="$lf_prefix")
  export LD_LIBRARY_PATH=$lf_prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

# ---- source -----------------------------------------------------------------------------
mkdir -p "$work"
ftsrc=$work/src/fabtests
inst=$work/install
if [ ! -x "$inst/bin/fi_rdm_pingpong" ]; then
  rm -rf "$work/src"; mkdir -p "$work/src"
  if [ -d "$src" ] && git -C "$src" rev-parse --is-bare-repository >/dev/null 2>&1 \
       && git -C "$src" rev-parse -q --verify "$tag^{commit}" >/dev/null; then
    log "source: git archive $tag fabtests from $src"
    git -C "$src" archive "$tag" fabtests | tar -x -C "$work/src" || exit 1
  elif [ -d "$src/fabtests" ]; then cp -a "$src/fabtests" "$work/src/"
  elif [ -f "$src/configure.ac" ] && grep -q fabtests "$src/configure.ac"; then
    cp -a "$src" "$ftsrc"
  elif [ -f "$src" ]; then
    log "source: tarball $src"
    tar -xf "$src" -C "$work/src" || exit 1
    d=$(find "$work/src" -maxdepth 3 -name configure.ac -path '*fabtests*' | head -n 1)
    [ -n "$d" ] || { log "no fabtests/configure.ac in $src"; exit 1; }
    [ "$(dirname "$d")" = "$ftsrc" ] || mv "$(dirname "$d")" "$ftsrc"
  else
    log "no fabtests source at '$src' (give --src or FABTESTS_SRC: a libfabric git"
    log "repository, a fabtests/libfabric directory, or a fabtests-1.17.0 tarball)"
    exit 1
  fi
  log "building fabtests into $inst (log: $work/build.log)"
  ( cd "$ftsrc" && { [ -x configure ] || ./autogen.sh; } \
      && ./configure --prefix="$inst" "${lf_configure[@]}" \
      && make -j"$(nproc)" && make install ) > "$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log"; log "build failed"; exit 1; }
fi
bin=$inst/bin

# ---- tests ------------------------------------------------------------------------------
# Client/server tests: the list of issue 18 first, then fabtests' functional set and the
# short/standard performance sets (runfabtests.sh -t functional,short,standard), minus
# duplicates. "U " marks a single-process unit test (GOOD_ADDR/SERVER_ADDR substituted).
tests=(
  "fi_rdm_tagged_peek"
  "fi_cm_data"
  "fi_dgram_waitset"
  "fi_rdm_atomic -o all -I 1000"
  "fi_rdm_pingpong -e rdm -S all -v"
  "fi_msg_pingpong -S all -v"
  "fi_recv_cancel -e rdm -V"
  "fi_rdm_rma_event"
  "fi_rdm_shared_av"
  "fi_shared_ctx"
  "fi_dgram_pingpong -k"
  "U fi_av_test -g GOOD_ADDR -n 1 -s SERVER_ADDR -e rdm"
  "U fi_av_test -g GOOD_ADDR -n 1 -s SERVER_ADDR -e dgram"
  "U fi_getinfo_test -s SERVER_ADDR GOOD_ADDR"
  "U fi_dom_test -n 2"
  "U fi_eq_test"
  "U fi_cq_test"
  "U fi_mr_test"
  "U fi_cntr_test"
  "fi_av_xfer -e rdm"
  "fi_av_xfer -e dgram"
  "fi_cq_data -e msg"
  "fi_cq_data -e rdm"
  "fi_cq_data -e dgram"
  "fi_dgram"
  "fi_msg"
  "fi_msg_epoll"
  "fi_msg_sockets"
  "fi_poll -t queue"
  "fi_poll -t counter"
  "fi_rdm"
  "fi_rdm_rma_trigger"
  "fi_shared_ctx -e msg"
  "fi_shared_ctx -e dgram"
  "fi_scalable_ep"
  "fi_multi_mr -e rdm -V"
  "fi_multi_ep -e rdm -v"
  "fi_unexpected_msg -e rdm -I 10"
  "fi_msg_inject -A inject -v"
  "fi_bw -e rdm -v -T 1"
  "fi_rdm_multi_client -C 10 -I 5"
  "fi_msg_pingpong -I 5 -v"
  "fi_msg_bw -I 5 -v"
  "fi_rma_bw -e msg -o write -I 5"
  "fi_rma_bw -e rdm -o write -I 5"
  "fi_rma_bw -e rdm -o read -I 5"
  "fi_rma_bw -e rdm -o writedata -I 5"
  "fi_rdm_cntr_pingpong -I 5"
  "fi_multi_recv -e rdm -I 5"
  "fi_multi_recv -e msg -I 5"
  "fi_rdm_tagged_pingpong -I 5 -v"
  "fi_rdm_tagged_bw -I 5 -v"
  "fi_dgram_pingpong -I 5"
  "fi_rdm_pingpong -k -v"
  # fabtests 2.x (issue 27): fi_msg_inject became fi_inject_test, fi_bw fi_flood; and a few
  # 2.x functional-set variants. Absent from 1.17's fabtests where the program is.
  "fi_inject_test -A inject -v"
  "fi_inject_test -A inj_complete -v"
  "fi_flood -e rdm -v -T 1"
  "fi_flood -e msg -v -T 1"
  "fi_cq_data -e rdm -o writedata"
  "fi_unexpected_msg -e msg -I 10 -v"
  "fi_multi_ep -e msg -v"
  "fi_rdm_bw -I 5 -v"
  "fi_rma_pingpong -e rdm -o write -I 5"
)

addr=127.0.0.1
FI_ENODATA=61
FI_ENOSYS=38
out=$work/logs; mkdir -p "$out"; rm -f "$out"/*.log
results=$work/results.tsv; : > "$results"

# run_one PROV "TEST" -> prints "result seconds"
run_one() {
  local prov=$1 t=$2 tag=$3 s_env="" c_env="" s_rc c_rc start end res
  local slog=$out/$tag.server.log clog=$out/$tag.client.log
  if [ "$prov" = uet ]; then
    s_env="FI_PROVIDER_PATH=$prov_path"
    c_env="FI_PROVIDER_PATH=$prov_path"  # no FI_UET_*: both take the default port rule
  fi
  start=$(date +%s.%N)
  local prog=${t#U }; prog=${prog%% *}
  if [ ! -x "$bin/$prog" ]; then  # e.g. fi_poll, fi_dgram_waitset: gone in 2.0
    printf 'absent\t0.0\t-\t-\n'; return
  fi
  if [ "${t:0:2}" = "U " ]; then
    local cmd=${t:2}; cmd=${cmd//GOOD_ADDR/$addr}; cmd=${cmd//SERVER_ADDR/$addr}
    # shellcheck disable=SC2086
    env $s_env timeout -k 5 "$limit" $bin/$cmd -p "$prov" > "$slog" 2>&1
    s_rc=$?; c_rc=0; : > "$clog"
  else
    # shellcheck disable=SC2086
    env $s_env timeout -k 5 "$limit" $bin/$t -p "$prov" -s $addr > "$slog" 2>&1 &
    local spid=$!
    sleep 1
    # shellcheck disable=SC2086
    env $c_env timeout -k 5 "$limit" $bin/$t -p "$prov" -s $addr $addr > "$clog" 2>&1
    c_rc=$?
    # A client that failed leaves the server waiting: give it a moment, then stop it.
    if [ $c_rc -ne 0 ]; then
      for _ in 1 2 3; do kill -0 $spid 2>/dev/null || break; sleep 1; done
      kill -0 $spid 2>/dev/null && kill -TERM $spid 2>/dev/null
    fi
    wait $spid; s_rc=$?
  fi
  end=$(date +%s.%N)
  if [ $s_rc = 124 ] || [ $c_rc = 124 ] || [ $s_rc = 137 ] || [ $c_rc = 137 ]; then
    res=timeout
  elif [ $s_rc = 0 ] && [ $c_rc = 0 ]; then
    res=pass
  elif [ $s_rc = $FI_ENODATA ] || [ $s_rc = $FI_ENOSYS ] \
       || [ $c_rc = $FI_ENODATA ] || [ $c_rc = $FI_ENOSYS ]; then
    res="not supported"
  elif grep -q "display this help output" "$slog" && grep -q "display this help output" "$clog"; then
    res=absent  # this release's program lacks an option of the line (a 2.x variant on 1.17)
  else
    res=fail
  fi
  printf '%s\t%s\t%s\t%s\n' "$res" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" "$s_rc" "$c_rc"
}

IFS=, read -r -a provs <<< "$providers"
log "providers ${provs[*]}, limit ${limit}s per test, logs in $out"
n=0
for t in "${tests[@]}"; do
  if [ -n "$filter" ] && ! grep -Eq -- "$filter" <<< "$t"; then continue; fi
  n=$((n + 1))
  for r in $(seq 1 "$repeat"); do
    for prov in "${provs[@]}"; do
      name=${t#U }
      tagname=$(printf '%03d-%s-%s-%s' $n "$(tr -c 'A-Za-z0-9_\n-' _ <<< "$name")" "$prov" "$r")
      IFS=$'\t' read -r res secs src cr <<< "$(run_one "$prov" "$t" "$tagname")"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$prov" "$res" "$secs" "$src" "$cr" >> "$results"
      printf '%-48s %-4s %-14s %6ss  (rc %s/%s)\n' "$name" "$prov" "$res" "$secs" "$src" "$cr" >&2
    done
  done
done

# ---- table ------------------------------------------------------------------------------
echo
echo "fabtests $tag, $(date -u +%Y-%m-%d), uet $(git -C "$repo" rev-parse --short HEAD 2>/dev/null)," \
     "limit ${limit}s, server and client on $addr"
echo
printf '| test |'; for p in "${provs[@]}"; do printf ' %s |' "$p"; done; echo
printf '|---|'; for _ in "${provs[@]}"; do printf -- '---|'; done; echo
awk -F'\t' -v provs="$providers" '
  BEGIN { np = split(provs, P, ",") }
  { key = $1; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    cell[key, $2] = (cell[key, $2] == "" ? "" : cell[key, $2] "; ") $3 " " $4 "s"
    if ($3 != "absent") count[$2, $3]++ }
  END {
    for (i = 1; i <= n; i++) {
      printf "| `%s` |", order[i]
      for (j = 1; j <= np; j++) printf " %s |", cell[order[i], P[j]]
      printf "\n"
    }
    printf "\n"
    for (j = 1; j <= np; j++)
      printf "%s: %d pass, %d fail, %d not supported, %d timeout\n", P[j],
        count[P[j], "pass"], count[P[j], "fail"], count[P[j], "not supported"],
        count[P[j], "timeout"]
  }' "$results"
