#!/usr/bin/env bash
# Measurement (issue 29): fi_av_insert of N addresses (default 100,000)
# through the uet provider, time and resident memory, every address read back
# with fi_av_lookup (scripts/av-insert-scale.c). Needs the libfabric headers.
#
#   scripts/av-insert-scale.sh PROVIDER_DIR [N]
# PROVIDER_DIR holds libuet-fi.so. Numbers: spec-notes/pds.md "Scale model".
set -euo pipefail
lib=$(cd "$1" && pwd)
n=${2:-100000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
cc -O2 -Wall -Werror -o "$dir/av-insert-scale" "$here/av-insert-scale.c" $(pkg-config --cflags --libs libfabric)
FI_PROVIDER_PATH="$lib" FI_PROVIDER=uet FI_UET_ADDR=${FI_UET_ADDR:-127.0.0.1} \
  /usr/bin/time -f "peak RSS %M KiB, %e s" "$dir/av-insert-scale" "$n"
