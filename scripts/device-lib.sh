# shellcheck shell=bash
# Sourced (not run) by scripts/device-run.sh and scripts/device-bench.sh: the
# Debian 12 packages the lent offline device machine lacks, fetched here with
# apt-get and unpacked there into a private prefix, never over /.

# libfabric 1.17 (fi_pingpong, fi_info) and what it and libuet-fi.so load.
# How the list was made (Debian 12): the packages owning what `ldd` lists for
# libuet-fi.so, fi_pingpong and fi_info, less libc6/libgcc-s1/libstdc++6 (the
# device machine's own are newer), checked by `apt-cache depends libfabric1`.
# shellcheck disable=SC2034  # used by the scripts that source this file
DEVICE_FABRIC_DEBS=(libfabric1 libfabric-bin ibverbs-providers libibverbs1 librdmacm1 libpsm2-2
                    libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libnuma1 libatomic1 liburing2
                    libabsl20220623 libssl3 libuuid1)

# device_fetch_debs DIR PKG...: DIR/PKG_*.deb for each PKG (apt-get download
# of the ones DIR does not hold yet: a rerun downloads nothing).
device_fetch_debs() {
  local dir=$1 p want=()
  shift
  mkdir -p "$dir" || return 1
  for p in "$@"; do
    compgen -G "$dir/${p}_*.deb" >/dev/null || want+=("$p")
  done
  ((${#want[@]} == 0)) || (cd "$dir" && apt-get download "${want[@]}") || {
    echo "apt-get download ${want[*]} failed" >&2
    return 1
  }
}

# device_missing_debs DIR PKG...: prints each PKG that has no DIR/PKG_*.deb.
device_missing_debs() {
  local dir=$1 p
  shift
  for p in "$@"; do
    compgen -G "$dir/${p}_*.deb" >/dev/null || echo "$p"
  done
}

# device_unpack_deb DEB DEST: the package's files under DEST (dpkg -x, else
# ar + tar where the image has no dpkg).
device_unpack_deb() {
  local deb=$1 dest=$2 member z=
  mkdir -p "$dest" || return 1
  if command -v dpkg >/dev/null; then
    dpkg -x "$deb" "$dest" || { echo "dpkg -x $deb failed" >&2; return 1; }
    return 0
  fi
  member=$(ar t "$deb" | grep '^data\.tar') || { echo "$deb has no data.tar" >&2; return 1; }
  case $member in
    *.xz) z=--xz ;; *.zst) z=--zstd ;; *.gz) z=--gzip ;;
  esac
  ar p "$deb" "$member" | tar -x $z -C "$dest" -f - || { echo "unpacking $deb failed" >&2; return 1; }
}

# device_postinst ROOT: what the unpacked packages' maintainer scripts do that
# the loader needs (dpkg -x runs none of them): libpsm-infinipath1's postinst
# makes the alternative libpsm_infinipath.so.1 (libfabric.so.1 needs it) point
# at /usr/lib/libpsm1/libpsm_infinipath.so.1.16.
device_postinst() {
  local f
  for f in "$1"/usr/lib/libpsm1/libpsm_infinipath.so.1.*; do
    [[ -e $f ]] || continue
    mkdir -p "$1/usr/lib/x86_64-linux-gnu" &&
      ln -sf "$f" "$1/usr/lib/x86_64-linux-gnu/libpsm_infinipath.so.1" || return 1
  done
}
