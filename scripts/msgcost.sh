#!/usr/bin/env bash
# Measurement (not a test): our instructions and syscalls per 64 B message
# (spec-notes/provider.md "64 B per-message cost (session 17)"). Two endpoints
# in one thread play fi_pingpong's 64 B inject loop (scripts/msgcost-pingpong.c)
# under callgrind, N2 and N1 round trips; (Ir(N2) - Ir(N1)) / (N2 - N1) is the
# cost of one round trip (two messages, each sent, received and completed, and
# their ACKs, riding with the replies), setup cancelled. The same two runs
# under `strace -c -f` give the syscalls per round trip.
#
#   scripts/msgcost.sh PROVIDER_DIR [N1 N2] [VAR=value ...]
#
# PROVIDER_DIR holds libuet-fi.so. Defaults: N1=1000, N2=3000, FI_UET_ADDR=
# 127.0.0.1, an RTO floor of 1 s and a 1 ms ride window (callgrind slows the
# process ~50x: no timer may fire on the path). Counters, so a loaded machine
# changes nothing but the time it takes. Files stay in $UET_MSGCOST_DIR
# (default a fresh mktemp -d) for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=$(cd "$1" && pwd)
shift
n1=1000
n2=3000
if [[ $# -ge 2 && $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]]; then
  n1=$1
  n2=$2
  shift 2
fi
out=${UET_MSGCOST_DIR:-$(mktemp -d)}
mkdir -p "$out"
bin=$out/msgcost-pingpong
cc -O2 -Wall -Werror -o "$bin" scripts/msgcost-pingpong.c $(pkg-config --cflags --libs libfabric)
envs=(FI_PROVIDER_PATH="$lib" FI_UET_ADDR=127.0.0.1 FI_UET_RTO_FLOOR_US=1000000
      FI_UET_ACK_RIDE_US=1000 "$@")
ir() {
  env "${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" "$bin" "$1" \
    >"$out/cg.$1.log" 2>&1
  awk '/^summary:/ {print $2}' "$out/cg.$1"
}
calls() {  # strace -c: "% time  seconds  usecs/call  calls  [errors]  syscall"
  env "${envs[@]}" strace -f -c -o "$out/strace.$1" "$bin" "$1" >"$out/strace.$1.log" 2>&1
  awk '$NF == "total" {print $4}' "$out/strace.$1"
}
per() { awk -v a="$1" -v b="$2" -v n=$((n2 - n1)) 'BEGIN {printf "%.2f", (b - a) / n}'; }
i1=$(ir "$n1")
i2=$(ir "$n2")
s1=$(calls "$n1")
s2=$(calls "$n2")
grep -h "empty CQ reads" "$out/cg.$n2.log" || true
echo "Ir per round trip: $(per "$i1" "$i2") (per message: half), $n1 -> $n2 round trips"
# Syscalls depend on timing (a preempted run lets a held ACK leave alone, the
# standby thread polls by the clock): both the difference and the N2 run's
# own count per round trip (setup included: an upper bound) are printed.
echo "syscalls per round trip: $(per "$s1" "$s2") (difference), $(per 0 "$s2" | awk -v n=$((n2 - n1)) -v m="$n2" '{printf "%.2f", $1 * n / m}') (N2 run / N2)"
for sc in sendmmsg recvmmsg sendmsg recvmsg sendto recvfrom sched_yield futex; do
  a=$(awk -v s=$sc '$NF == s {print $4}' "$out/strace.$n1")
  b=$(awk -v s=$sc '$NF == s {print $4}' "$out/strace.$n2")
  if [[ -n "$a$b" ]]; then
    echo "  $sc: $(per "${a:-0}" "${b:-0}") (difference), $(awk -v b="${b:-0}" -v m="$n2" 'BEGIN {printf "%.2f", b / m}') (N2 run / N2)"
  fi
done
echo "files: $out (cg.$n1, cg.$n2 for callgrind_annotate)"
