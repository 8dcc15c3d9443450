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
#   3. While a TSS transfer runs, a third namespace beside the server
#      (scripts/pingpong.sh UET_PINGPONG_DURING_NS=third: its own veth pair to
#      the server's namespace, which accepts spoofed sources) injects from
#      run 1b's capture (the client's datagrams, the first 15000):
#        a. the datagrams as captured, twice over, spoofed: from the client's
#           address and port (the third namespace holds the client's address
#           on its loopback), so the AAD matches and only the replay window
#           can refuse them;
#        b. crafted ones from its own address: a copy of each with one byte
#           flipped, and a forged copy whose TSC counter is ahead of anything
#           the client sent (passes the replay window, fails the tag).
#      It starts once the server has received traffic (the server knows the
#      client's SSI, so no replay can pass as new), sends 50000 datagrams/s
#      (60000 in all) and checks that the transfer still runs after it.
#      Expected: the transfer passes its data check; the server's
#      in_late_pkts + in_replay_pkts grew by at least the spoofed replays,
#      in_auth_fail_pkts by at least the forged copies, and its rejection
#      counters together by at least every injected datagram, each less what
#      the kernel dropped before the provider (UDP InErrors of the server's
#      namespace, tx_dropped of the third veth; must stay under 10 %). Late
#      spoofed replays prove that spoofed datagrams reached the provider.
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
# The server drops what it cannot authenticate, so to the client it is a silent
# peer: the error comes when FI_UET_PEER_TIMEOUT_MS (default 30 s) runs out.
# 512 B, above inject_size (256): fi_pingpong sends smaller messages with
# fi_inject and then reads only its receive CQ, so the failed inject's CQ error
# (on the transmit CQ) is never read and it waits for the pong forever, with
# any provider whose peer is silent.
out=$tmp/wrong.out
rc=0
FI_UET_TSS_KEY_FILE=$tmp/shared.key FI_LOG_LEVEL=info FI_LOG_SUBSYS=ep_data \
  UET_PINGPONG_CLIENT_ENV="FI_UET_TSS_KEY_FILE=$tmp/other.key FI_UET_PEER_TIMEOUT_MS=3000" UET_PINGPONG_TIMEOUT=30 \
  "$pingpong" "$prov_dir" -e rdm -I 10 -S 512 -c >"$out" 2>&1 || rc=$?
grep -E 'client exit|TSS is on|in_auth_fail_pkts' "$out" | cut -c1-300 || true
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "tss_pingpong: FAIL: client exit $rc (0: a keyless peer got through; 124: hang)" >&2
  exit 1
fi
grep -q 'TSS is on' "$out" || { echo "tss_pingpong: FAIL: the CQ error does not name TSS" >&2; exit 1; }
grep -q 'in_auth_fail_pkts=[1-9]' "$out" || { echo "tss_pingpong: FAIL: the server did not count auth failures" >&2; exit 1; }

echo "== 3. a third namespace injects replayed and forged packets into a running transfer"
# Run by pingpong.sh in the third namespace: inject.sh UET_INJECT CAPTURE.
cat >"$tmp/inject.sh" <<'EOF'
set -eu
inject=$1
capture=$2
server=$UET_PINGPONG_SERVER_ADDR
client=$UET_PINGPONG_CLIENT_ADDR
third=$UET_PINGPONG_THIRD_ADDR
# udp_stat NAME: a Udp counter of the server's namespace (/proc/net/snmp).
udp_stat() {
  ip netns exec "$UET_PINGPONG_SERVER_NS" awk -v name="$1" \
    '$1 == "Udp:" { if (!n) { for (i = 2; i <= NF; i++) col[$i] = i; n = 1 } else print $col[name] }' \
    /proc/net/snmp
}
tx_dropped() { cat "/sys/class/net/$UET_PINGPONG_THIRD_DEV/statistics/tx_dropped"; }
# Wait until the transfer runs: the server has opened the client's packets,
# so its replay window for the client's SSI is at the client's counters.
for _ in $(seq 1 300); do
  [ "$(udp_stat InDatagrams)" -ge 2000 ] && break
  sleep 0.1
done
echo "inject: server UDP InDatagrams $(udp_stat InDatagrams) at the start"
err0=$(udp_stat InErrors)
drop0=$(tx_dropped)
# a. spoofed replays; b. crafted from the third namespace's own address.
"$inject" "$capture" "$server" 4793 --only-from "$client" --max 15000 \
  --from "$client" --from-port 4793 --rounds 2 --rate 50000
"$inject" "$capture" "$server" 4793 --only-from "$client" --max 15000 \
  --from "$third" --no-replay --flip --forge --rate 50000
# While the server drains its socket: what arrives now is the transfer's own
# traffic (InDatagrams counts a datagram when it is queued to the socket).
a=$(udp_stat InDatagrams)
sleep 0.2
echo "inject: transfer datagrams after the injection: $(($(udp_stat InDatagrams) - a)) in 0.2 s"
err=$(($(udp_stat InErrors) - err0))
drop=$(($(tx_dropped) - drop0))
echo "inject: kernel drops $((err + drop)) (server UDP InErrors +$err, third veth tx_dropped +$drop)"
EOF
out=$tmp/inject.out
FI_UET_TSS_KEY_FILE=$tmp/shared.key FI_LOG_LEVEL=info FI_LOG_SUBSYS=ep_data \
  UET_PINGPONG_DURING_NS=third UET_PINGPONG_DURING="bash $tmp/inject.sh $inject $tmp/tss.pcap" \
  "$pingpong" "$prov_dir" -e rdm -I 40000 -S 4096 -c >"$out" 2>&1 || {
  cat "$out"
  echo "tss_pingpong: FAIL: the transfer did not survive the injection" >&2
  exit 1
}
grep -E '^pingpong: (two|third)|uet-inject|^inject:|TSS SDI|client exit' "$out" | cut -c1-300
fail3() {
  echo "tss_pingpong: FAIL: $*" >&2
  exit 1
}
# What each injector sent: "uet-inject: sent S datagrams (R replayed, F flipped,
# G forged) to IP:PORT from SRC:PORT"; sent SRC WHAT.
sent() { grep "^uet-inject: sent .* from $1\$" "$out" | grep -o "[0-9]* $2" | cut -d' ' -f1 || true; }
client_ip=$(sed -n 's/^pingpong: two network namespaces (.* <-> [^ ]* \([^ ]*\), veth)$/\1/p' "$out")
third_ip=$(sed -n 's/^pingpong: third network namespace ([^ ]* \([^ ]*\), .*/\1/p' "$out")
spoofed=$(sent "$client_ip:4793" replayed)
flipped=$(sent "$third_ip:0" flipped)
forged=$(sent "$third_ip:0" forged)
drops=$(sed -n 's/^inject: kernel drops \([0-9]*\) .*/\1/p' "$out")
after=$(sed -n 's/^inject: transfer datagrams after the injection: \([0-9]*\) .*/\1/p' "$out")
[ -n "$spoofed" ] && [ -n "$flipped" ] && [ -n "$forged" ] && [ -n "$drops" ] && [ -n "$after" ] ||
  fail3 "the injection did not report what it sent"
((spoofed > 0 && flipped > 0 && forged > 0)) || fail3 "nothing injected"
((after > 0)) ||
  fail3 "the transfer ended before the injection did: not injected into a running transfer"
injected=$((spoofed + flipped + forged))
((drops * 10 < injected)) ||
  fail3 "the kernel dropped $drops of $injected injected datagrams: the counts would say little"
# The server's counters, from its endpoint's close line (its part of the output).
server_tss=$(sed -n '/^--- server/,/^pingpong:/p' "$out" | grep 'port 4793 TSS SDI' | tail -1 || true)
[ -n "$server_tss" ] || fail3 "no TSS counters from the server"
# count NAME: the server's counter NAME (0 when not listed: the line lists the non-zero ones).
count() {
  echo "$server_tss" | awk -v name="$1" '
    { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) n += substr($i, length(name) + 2) }
    END { print n + 0 }'
}
late=$(($(count in_late_pkts) + $(count in_replay_pkts)))
auth_fail=$(count in_auth_fail_pkts)
refused=$((late + auth_fail + $(count in_invalid) + $(count in_invalid_sa) + $(count in_errored_pkts) +
  $(count in_rx_encryption_bypass_pkts)))
echo "tss_pingpong: injected $spoofed spoofed replays, $flipped flipped, $forged forged; the kernel dropped $drops"
echo "tss_pingpong: server refused $refused (>= $((injected - drops))): late+replay $late" \
  "(>= $((spoofed - drops))), auth_fail $auth_fail (>= $((forged - drops)))"
# Spoofed replays outnumber the flipped copies (the only other late ones), so
# this fails when the kernel kept the spoofed ones from the provider.
((late >= spoofed - drops)) ||
  fail3 "spoofed replays did not reach the server's replay check ($late late/replay < $spoofed - $drops)"
((auth_fail >= forged - drops)) ||
  fail3 "forged datagrams did not all fail authentication ($auth_fail < $forged - $drops)"
((refused >= injected - drops)) ||
  fail3 "the server refused $refused of $injected injected datagrams (kernel dropped $drops)"

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
