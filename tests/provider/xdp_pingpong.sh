#!/usr/bin/env bash
# fi_pingpong over the AF_XDP backend between two network namespaces
# (scripts/pingpong.sh makes them): FI_UET_IO_BACKEND=xdp on both sides, with
# the provider's info log, and a check that both endpoints really ran on
# AF_XDP ("closed (xdp)") rather than the mmsg fallback.
#
#   tests/provider/xdp_pingpong.sh PROVIDER_DIR [fi_pingpong options...]
#
# Exit 77 (ctest SKIP_RETURN_CODE) where namespaces are not permitted or the
# provider fell back to mmsg, with the reason it logged.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
export FI_UET_IO_BACKEND=xdp FI_LOG_LEVEL=info FI_LOG_SUBSYS=ep_data
"$root/scripts/pingpong.sh" "$@" >"$out" 2>&1
rc=$?
# The result tables and our lines; the info log is long.
grep -E '^(bytes|[0-9]+[kmg]?[[:space:]]|pingpong:)|I/O backend|FI_UET_IO_BACKEND=xdp|closed \(|AF_XDP' "$out"
if grep -q 'running on loopback' "$out"; then
  echo "xdp_pingpong: SKIP: no network namespaces here (AF_XDP needs the veth pair)"
  exit 77
fi
if grep -q 'AF_XDP not available' "$out"; then
  echo "xdp_pingpong: SKIP: the provider fell back to mmsg (reason above)"
  exit 77
fi
((rc == 0)) || exit "$rc"
closed_xdp=$(grep -c 'closed (xdp)' "$out")
if ((closed_xdp < 2)); then
  echo "xdp_pingpong: expected both endpoints on xdp, found $closed_xdp 'closed (xdp)' lines" >&2
  exit 1
fi
echo "xdp_pingpong: both sides ran on AF_XDP ($closed_xdp endpoints)"
