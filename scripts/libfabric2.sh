#!/usr/bin/env bash
# Build a libfabric 2.x release into a private prefix, build the uet provider against it,
# and run that libfabric's own tools with -p uet beside -p tcp (issue 27):
#   1. libfabric <tag> (providers tcp, udp, rxm only) -> $LF2_ROOT/<tag>/prefix
#   2. libuet-fi.so built against it (a separate cmake build dir: build/lf2-<tag>)
#   3. fi_info -p uet; fi_pingpong -p uet|tcp -e rdm|msg|dgram -c on 127.0.0.1
#   4. upstream fabtests of the same tag (scripts/fabtests.sh --libfabric PREFIX),
#      uet and tcp side by side, and a table of pass/fail counts
# Not run in CI (CI cannot fetch libfabric). Steps 1 and 2 are skipped when done before.
#
# Usage: scripts/libfabric2.sh [options] [fabtests-name-regex]
#   --src PATH      libfabric source: a (bare) git repository of ofiwg/libfabric, or an
#                   unpacked libfabric tree (then give --tag for the cache name).
#                   Default: $LF2_SRC, else /work/.mirror/ofiwg+libfabric/repo
#   --tag TAG       release tag to build (default: the newest v2.x.y tag, no rc)
#   --root DIR      cache root (default: $LF2_ROOT, else $HOME/.cache/uet-lf2)
#   --build DIR     uet build dir (default: build/lf2-<tag>)
#   --steps LIST    comma-separated subset of libfabric,uet,pingpong,fabtests (default all)
#   --providers L   providers to compare (default uet,tcp)
#   --timeout S     per-run limit in seconds (default 60)
# The regex is passed to scripts/fabtests.sh (select fabtests by command line).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
src=${LF2_SRC:-/work/.mirror/ofiwg+libfabric/repo}
tag=""
root=${LF2_ROOT:-$HOME/.cache/uet-lf2}
build=""
steps=libfabric,uet,pingpong,fabtests
providers=uet,tcp
limit=60
filter=""

while [ $# -gt 0 ]; do
  case "$1" in
    --src) src=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --root) root=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --providers) providers=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) filter=$1; shift ;;
  esac
done

log() { echo "libfabric2.sh: $*" >&2; }
want() { [[ ",$steps," == *",$1,"* ]]; }

is_git=0
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then is_git=1; fi
if [ -z "$tag" ]; then
  [ "$is_git" = 1 ] || { log "--src $src is not a git repository: give --tag"; exit 2; }
  tag=$(git -C "$src" tag -l 'v2.*' | grep -E '^v2\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1)
  [ -n "$tag" ] || { log "no v2.x.y tag in $src"; exit 1; }
fi
dir=$root/$tag
prefix=$dir/prefix
build=${build:-$repo/build/lf2-$tag}
mkdir -p "$dir"
log "libfabric $tag, prefix $prefix, uet build $build"

# ---- 1. libfabric -----------------------------------------------------------------------
if want libfabric && [ ! -f "$prefix/.built" ]; then
  need=()
  for p in autoconf automake libtool make gcc; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    log "missing build tools: ${need[*]} (apt-get install ${need[*]})"; exit 1
  fi
  rm -rf "$dir/src"; mkdir -p "$dir/src"
  if [ "$is_git" = 1 ]; then
    log "source: git archive $tag from $src"
    git -C "$src" archive "$tag" | tar -x -C "$dir/src"
  else
    cp -a "$src/." "$dir/src/"
  fi
  log "building libfabric (log: $dir/libfabric.log)"
  if ! ( cd "$dir/src" && ./autogen.sh \
         && ./configure --prefix="$prefix" --enable-only --enable-tcp --enable-udp \
              --enable-rxm --enable-shm=no --disable-verbs --disable-efa \
              --disable-psm3 --disable-usnic --disable-opx --enable-debug=no \
         && make -j"$(nproc)" && make install ) > "$dir/libfabric.log" 2>&1; then
    tail -n 30 "$dir/libfabric.log"; log "libfabric build failed"; exit 1
  fi
  touch "$prefix/.built"
fi
[ -x "$prefix/bin/fi_info" ] || { log "no $prefix/bin/fi_info: run step libfabric"; exit 1; }
export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ---- 2. uet against it ------------------------------------------------------------------
if want uet; then
  if [ ! -f "$build/build.ninja" ]; then
    log "configuring $build (PKG_CONFIG_PATH=$prefix/lib/pkgconfig)"
    PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
      cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DUET_BUILD_TESTS=OFF -DUET_WERROR=ON > "$dir/uet-cmake.log" 2>&1 \
      || { tail -n 30 "$dir/uet-cmake.log"; log "cmake failed"; exit 1; }
  fi
  log "building uet-fi against libfabric $tag (log: $dir/uet-build.log)"
  ninja -C "$build" uet-fi > "$dir/uet-build.log" 2>&1 \
    || { grep -E 'error|warning' "$dir/uet-build.log" | head -n 40; log "uet build failed"; exit 1; }
fi
want pingpong || want fabtests || exit 0
so=$build/provider/libuet-fi.so
[ -f "$so" ] || { log "no $so: run step uet"; exit 1; }
prov_path=$(dirname "$so")
# The provider must have been linked against this libfabric, not the system one.
deps=$(ldd "$so")  # not piped into grep -q: pipefail would see ldd's SIGPIPE
if [[ "$deps" != *"libfabric.so.1 => $prefix/lib/"* ]]; then
  log "warning: $so does not resolve libfabric from $prefix:"; grep libfabric <<< "$deps" >&2
fi

# ---- 3. fi_info and fi_pingpong ---------------------------------------------------------
IFS=, read -r -a provs <<< "$providers"
summary=$dir/summary.tsv  # the fi_info/fi_pingpong rows of the last pingpong step
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$summary"; log "$1 $2: $3"; }

if want pingpong; then
  : > "$summary"
  logs=$dir/logs; mkdir -p "$logs"
  if FI_PROVIDER_PATH=$prov_path timeout 30 "$prefix/bin/fi_info" -p uet \
       > "$logs/fi_info-uet.log" 2>&1; then
    record "fi_info -p uet" uet "pass ($(grep -c '^provider:' "$logs/fi_info-uet.log") infos)"
  else
    record "fi_info -p uet" uet "fail"
  fi
  for prov in "${provs[@]}"; do
    for ep in rdm msg dgram; do
      slog=$logs/pingpong-$prov-$ep.server.log clog=$logs/pingpong-$prov-$ep.client.log
      env FI_PROVIDER_PATH="$prov_path" timeout -k 5 "$limit" \
        "$prefix/bin/fi_pingpong" -p "$prov" -e "$ep" -c -I 1000 -S 1024 > "$slog" 2>&1 &
      spid=$!
      sleep 1
      set +e
      env FI_PROVIDER_PATH="$prov_path" FI_UET_PORT=0 timeout -k 5 "$limit" \
        "$prefix/bin/fi_pingpong" -p "$prov" -e "$ep" -c -I 1000 -S 1024 127.0.0.1 \
        > "$clog" 2>&1
      crc=$?
      if [ $crc -ne 0 ]; then sleep 2; kill -TERM "$spid" 2>/dev/null; fi
      wait "$spid"; src_rc=$?
      set -e
      if [ $crc = 0 ] && [ $src_rc = 0 ]; then res=pass
      elif [ $src_rc = 61 ] || [ $crc = 61 ]; then res="not supported (-FI_ENODATA)"
      else res="fail (rc $src_rc/$crc)"; fi
      record "fi_pingpong -e $ep -c" "$prov" "$res"
    done
  done
fi

# ---- 4. fabtests ------------------------------------------------------------------------
if want fabtests; then
  args=(--libfabric "$prefix" --work "$dir/fabtests" --providers "$providers"
        --timeout "$limit" --no-deps --provider-path "$prov_path")
  [ "$is_git" = 1 ] && args+=(--src "$src")
  [ "$is_git" = 1 ] || args+=(--src "$dir/src")
  [ -n "$filter" ] && args+=("$filter")
  FABTESTS_TAG=$tag "$repo/scripts/fabtests.sh" "${args[@]}" | tee "$dir/fabtests.md"
fi

# ---- table ------------------------------------------------------------------------------
if [ -s "$summary" ]; then
  echo
  echo "libfabric $tag ($prefix), uet $(git -C "$repo" rev-parse --short HEAD 2>/dev/null)"
  echo
  echo "| check | provider | result |"
  echo "|---|---|---|"
  awk -F'\t' '{ printf "| `%s` | %s | %s |\n", $1, $2, $3 }' "$summary"
fi
