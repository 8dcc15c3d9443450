#!/usr/bin/env bash
# TSS end to end through fi_pingpong between two network namespaces
# (scripts/pingpong.sh), as ctest provider.tss_pingpong:
#   1. Both hosts share a key file (direct mode): rdm -S all -c passes, and a
#      capture of the server's veth holds none of fi_pingpong's payload
#      pattern, while the same run without TSS shows it (so the check can
#      see plaintext when there is some).
#   2. The client has another key for the same SDI: its first send fails with a
#      CQ error saying TSS is on and the peer cannot authenticate, within the
#      retry limit (~2 s), never a hang; the server counted the refused packets.
#   3. While a TSS transfer runs, an injector in the client's namespace sends
#      the server the first 20000 datagrams of run 1b's capture again, plus a
#      copy of each with one byte flipped, three times over: the transfer passes its data
#      check, and the server's counters show the replays and forgeries refused.
#
#   4. uet-decode shows the capture of 1b as TSS packets (SDI, counter) and,
#      given the key file (-k), the PDS/SES headers inside every one.
#
#   tests/provider/tss_pingpong.sh PROVIDER_DIR UET_INJECT UET_DECODE
#
# Needs root (namespaces) and tcpdump; says so and exits 1 otherwise. Key files
# and captures live in a temporary directory removed on exit.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PROVIDER_DIR UET_INJECT UET_DECODE" >&2; exit 2; }
prov_dir=$1
inject=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
decode=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
here=$(cd "$(dirname "$0")/../.." && pwd)
pingpong=$here/scripts/pingpong.sh
[ "$(id -u)" -eq 0 ] || { echo "tss_pingpong: needs root for network namespaces" >&2; exit 1; }
command -v tcpdump >/dev/null || { echo "tss_pingpong: needs tcpdump" >&2; exit 1; }

tmp=$(mktemp -d)
trap '[ -n "${UET_TSS_KEEP:-}" ] || rm -rf "$tmp"' EXIT
umask 077

hex32() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
keyfile() {  # keyfile PATH: one direct-mode SD, SDI 0x000101, JobID 42
  printf 'uet-tss-keyfile 1\nsd  0x000101 42 direct\nkey 0x000101 0 current %s\n' "$(hex32)" >"$1"
  chmod 600 "$1"
}
keyfile "$tmp/shared.key"
keyfile "$tmp/other.key"

# fi_pingpong's -c payload cycles through this alphabet (libfabric pingpong.c).
pattern=abcdefghijklmnopqrstuvwxyz

echo "== 1a. without TSS: the capture shows the payload"
UET_PINGPONG_CAPTURE=$tmp/clear.pcap "$pingpong" "$prov_dir" -e rdm -I 100 -S 4096 -c
clear_hits=$(grep -a -c "$pattern" "$tmp/clear.pcap" || true)
echo "tss_pingpong: clear capture: $clear_hits packets with the pattern"
[ "$clear_hits" -gt 0 ] || { echo "tss_pingpong: FAIL: plaintext not visible without TSS: the check is blind" >&2; exit 1; }

echo "== 1b. TSS with a shared key: passes, nothing in clear"
# Without UDP GSO: a capture on the sending side (and across veth) would hold
# GSO batches as one frame of several datagrams, which step 4 cannot split.
out=$tmp/tss.out
FI_UET_GSO=0 FI_UET_TSS_KEY_FILE=$tmp/shared.key FI_LOG_LEVEL=info FI_LOG_SUBSYS=ep_data \
  UET_PINGPONG_CAPTURE=$tmp/tss.pcap "$pingpong" "$prov_dir" -e rdm -I 10 -S all -c | tee "$out" |
  grep -E '^pingpong:|TSS SDI'
tss_hits=$(grep -a -c "$pattern" "$tmp/tss.pcap" || true)
auth=$(grep -o 'in_auth_pkts=[0-9]*' "$out" | head -1 || true)
echo "tss_pingpong: TSS capture: $tss_hits packets with the pattern; server/client $auth"
[ "$tss_hits" -eq 0 ] || { echo "tss_pingpong: FAIL: payload pattern on the wire with TSS on" >&2; exit 1; }
[ -n "$auth" ] || { echo "tss_pingpong: FAIL: no authenticated packets counted" >&2; exit 1; }

echo "== 2. the client has another key: a CQ error naming TSS, no hang"
out=$tmp/wrong.out
rc=0
FI_UET_TSS_KEY_FILE=$tmp/shared.key FI_LOG_LEVEL=info FI_LOG_SUBSYS=ep_data \
  UET_PINGPONG_CLIENT_ENV="FI_UET_TSS_KEY_FILE=$tmp/other.key" UET_PINGPONG_TIMEOUT=30 \
  "$pingpong" "$prov_dir" -e rdm -I 10 -S 64 -c >"$out" 2>&1 || rc=$?
grep -E 'client exit|TSS is on|in_auth_fail_pkts' "$out" | cut -c1-300 || true
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "tss_pingpong: FAIL: client exit $rc (0: a keyless peer got through; 124: hang)" >&2
  exit 1
fi
grep -q 'TSS is on' "$out" || { echo "tss_pingpong: FAIL: the CQ error does not name TSS" >&2; exit 1; }
grep -q 'in_auth_fail_pkts=[1-9]' "$out" || { echo "tss_pingpong: FAIL: the server did not count auth failures" >&2; exit 1; }

echo "== 3. replayed and forged packets injected into a running transfer"
out=$tmp/inject.out
FI_UET_TSS_KEY_FILE=$tmp/shared.key FI_LOG_LEVEL=info FI_LOG_SUBSYS=ep_data \
  UET_PINGPONG_DURING="sleep 0.1; $inject $tmp/tss.pcap 198.18.0.1 4793 --only-to-port 4793 --max 20000 --flip --rounds 3" \
  "$pingpong" "$prov_dir" -e rdm -I 30000 -S 4096 -c >"$out" 2>&1 || {
  cat "$out"
  echo "tss_pingpong: FAIL: the transfer did not survive the injection" >&2
  exit 1
}
grep -E 'uet-inject|TSS SDI|client exit' "$out" | cut -c1-300
grep -q 'uet-inject: sent [1-9]' "$out" || { echo "tss_pingpong: FAIL: nothing injected" >&2; exit 1; }
server_tss=$(grep 'port 4793 TSS SDI' "$out" | tail -1)
for c in in_auth_fail_pkts 'in_(replay|late)_pkts'; do
  echo "$server_tss" | grep -Eq "$c=[1-9]" || { echo "tss_pingpong: FAIL: server counted no $c" >&2; exit 1; }
done

echo "== 4. uet-decode on the TSS capture, without and with the key file"
"$decode" "$tmp/tss.pcap" >"$tmp/enc.txt" 2>"$tmp/enc.err" || true
"$decode" -k "$tmp/shared.key" "$tmp/tss.pcap" >"$tmp/dec.txt" 2>"$tmp/dec.err" || true
head -2 "$tmp/enc.txt" | cut -c1-200
head -2 "$tmp/dec.txt" | cut -c1-200
total=$(wc -l <"$tmp/enc.txt")
enc=$(grep -c ' TSS .*encrypted=' "$tmp/enc.txt" || true)
dec=$(grep -c ' decrypted' "$tmp/dec.txt" || true)
notdec=$(grep -c 'not-decrypted' "$tmp/dec.txt" || true)
echo "tss_pingpong: uet-decode: $total packets, $enc shown as TSS; with -k $dec decrypted, $notdec not"
[ "$total" -gt 0 ] && [ "$enc" -eq "$total" ] || { echo "tss_pingpong: FAIL: uet-decode without a key" >&2; exit 1; }
[ "$dec" -eq "$total" ] && [ "$notdec" -eq 0 ] || { echo "tss_pingpong: FAIL: uet-decode -k did not decrypt every packet" >&2; exit 1; }
grep -q 'PDS' "$tmp/dec.txt" || { echo "tss_pingpong: FAIL: no PDS header shown after decryption" >&2; exit 1; }
echo "tss_pingpong: PASS"
