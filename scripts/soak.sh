#!/usr/bin/env bash
# Chaos soak of the uet provider (issue 28 item 3; spec-notes/provider.md
# "Chaos soak (issue 28)"):
#
#   scripts/soak.sh [MINUTES]        (default 5; decimals allowed)
#
# Builds a switch namespace (a bridge) and one namespace per rank, each rank a
# uet-soak process (apps/soak_main.cc) on its own fixed IP and FI_UET_PORT, all
# RDM, exchanging data-checked tagged sends, RMA writes with CQ data, RMA reads
# and fetching atomics with every other rank of its group: the "clear" group
# (no TSS) and the "tss" group (one shared key file, direct mode; a TSS process
# and a clear one cannot talk, so the groups are all-to-all each). Each
# incarnation draws its own in-stack impairment (FI_UET_IMPAIR_DROP/DUP/
# REORDER_PPM, the kernel here has no netem) or none. From the warm-up's end
# to 25 s before the end the script injects, at random and overlapping:
#   stop   SIGSTOP a rank for 1..15 s, then SIGCONT
#   kill   SIGKILL a rank, restart it at the same IP and port with the next
#          incarnation number 0.5..5 s later (2 in 3) or 1..4 s after the peer
#          timeout
#   link   its veth down for 1..5 s, then up
#   loss   nftables in its namespace: numgen random mod 100 < N drop, N 1..15,
#          input, output or both, for 3..15 s
#   flood  uet-inject --flood (forged new-PDC SYNs, JobID 0 or 7) from an
#          attacker namespace on the bridge at one rank, 5000..20000 pkt/s for
#          2..6 s
# At most two ranks are stopped, dead or cut at a time. Every action is logged
# (DIR/events.log, wall-clock ms). At the end scripts/soak-check.py checks the
# invariants on every record and prints the table; the exit status is its
# (0: all hold, 1: a violation) or 2 (set-up failure), 77 without root/nft.
#
# Environment:
#   SOAK_BUILD       build tree (default: <repo>/build): apps/uet-soak,
#                    apps/uet-inject, provider/libuet-fi.so
#   SOAK_RANKS       processes (default 9), SOAK_TSS_RANKS of them in the TSS
#                    group (default 4; the rest, at least 2, in the clear one)
#   SOAK_RATE        operations per second to each peer (default 20)
#   SOAK_LARGE_PCT  percentage of sends of 16..128 KiB (default 15)
#   SOAK_PEER_TIMEOUT_MS  FI_UET_PEER_TIMEOUT_MS of every rank (default 8000:
#                    below the 15 s stops, so some stops outlast it)
#   SOAK_SEED        seed of the chaos and impairments (default: random; printed)
#   SOAK_EVENTS      a fixed schedule instead of the random chaos (; or ,), e.g.
#                    "20 kill 3 1000; 21 stop 1 11000" (see the main loop)
#   SOAK_DIR         keep records and logs there (default: a temporary
#                    directory, removed unless the check fails)
#   SOAK_LOG_LEVEL   FI_LOG_LEVEL of the ranks (default warn; info adds each
#                    endpoint's PDS/SES counters at close to DIR/rR.log)
#
# Only what the script made is touched: its namespaces (soakPID-*), the
# addresses in them, the processes it started (by PID).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-5}
build=${SOAK_BUILD:-$here/build}
soak_bin=$build/apps/uet-soak
inject_bin=$build/apps/uet-inject
prov_dir=$build/provider
nranks=${SOAK_RANKS:-9}
ntss=${SOAK_TSS_RANKS:-4}
rate=${SOAK_RATE:-20}
peer_timeout=${SOAK_PEER_TIMEOUT_MS:-8000}
seed=${SOAK_SEED:-$(( (RANDOM << 15) | RANDOM ))}
RANDOM=$seed

[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (network namespaces)" >&2; exit 77; }
command -v nft >/dev/null || { echo "soak: needs nft" >&2; exit 77; }
for f in "$soak_bin" "$inject_bin" "$prov_dir/libuet-fi.so"; do
  [ -e "$f" ] || { echo "soak: $f missing (ninja -C $build uet-soak uet-inject uet-fi)" >&2; exit 2; }
done
[ "$ntss" -ge 0 ] && [ $((nranks - ntss)) -ge 2 ] && { [ "$ntss" -eq 0 ] || [ "$ntss" -ge 2 ]; } ||
  { echo "soak: SOAK_RANKS=$nranks SOAK_TSS_RANKS=$ntss: each group needs 2 ranks or none" >&2; exit 2; }

if [ -n "${SOAK_DIR:-}" ]; then dir=$SOAK_DIR; mkdir -p "$dir"; keep=1; else dir=$(mktemp -d /tmp/soak.XXXXXX); keep=0; fi
rm -f "$dir"/r*.json "$dir"/*.log "$dir"/config.json
ns=soak$$
sw=$ns-sw
atk=$ns-atk
made_ns=()
declare -a pid inc state until lossy loss_until
flood_pid=

ms() { date +%s%3N; }
rnd() { echo $(( $1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1) )); }  # rnd LO HI
event() { echo "$(ms) $*" >>"$dir/events.log"; }
# An action that cuts a rank off is logged at the time it was *issued*, with
# how long its command took (took=MS): under load `ip link set down` has taken
# seconds to return while the link was already down (soak N4, spec-notes
# provider.md), and the checker needs the earliest the rank may have gone
# silent. The actions that end a cut (cont, linkup, restart) are logged when
# their command has returned: the latest it may have lasted.
event_at() { local t=$1; shift; echo "$t $*" >>"$dir/events.log"; }
do_stop() {  # RANK MS
  local t; t=$(ms); kill -STOP "${pid[$1]}"; state[$1]=stopped; until[$1]=$((t + $2))
  event_at "$t" stop "$1" "${inc[$1]}" "$2" "took=$(( $(ms) - t ))"
}
do_kill() {  # RANK MS (until the restart)
  local t; t=$(ms); kill -KILL "${pid[$1]}"; wait "${pid[$1]}" 2>/dev/null
  state[$1]=dead; until[$1]=$((t + $2))
  event_at "$t" kill "$1" "${inc[$1]}" "$2" "took=$(( $(ms) - t ))"
}
do_link() {  # RANK MS
  local t; t=$(ms); ip -n "$ns-r$1" link set eth0 down; state[$1]=linkdown; until[$1]=$((t + $2))
  event_at "$t" linkdown "$1" "$2" "took=$(( $(ms) - t ))"
}
say() { echo "soak: $*"; }

cleanup() {
  local i
  for i in "${!pid[@]}"; do
    if [ -n "${pid[$i]}" ]; then kill -CONT "${pid[$i]}" 2>/dev/null; kill -KILL "${pid[$i]}" 2>/dev/null; fi
  done
  [ -n "$flood_pid" ] && kill -KILL "$flood_pid" 2>/dev/null
  wait 2>/dev/null
  for n in "${made_ns[@]}"; do ip netns del "$n" 2>/dev/null; done
  if [ "$keep" -eq 0 ] && [ "${soak_rc:-1}" -eq 0 ]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Addresses exist only inside the namespaces this script creates (10.77.0.0/24
# on its own bridge namespace): the ranks, and the flooder's namespace.
addr() { echo "10.77.0.$((10 + $1))"; }
atk_ip=10.77.0.250
port() { echo $((5200 + $1)); }
group_of() { [ "$1" -ge $((nranks - ntss)) ] && echo tss || echo clear; }

# ---- network: a bridge in $sw, a veth per rank, the attacker ----
ip netns add "$sw" && made_ns+=("$sw") || { echo "soak: cannot create namespaces" >&2; exit 77; }
ip -n "$sw" link add br0 type bridge && ip -n "$sw" link set br0 up || exit 2
attach() {  # attach NAMESPACE SWITCH_PORT IP
  ip netns add "$1" && made_ns+=("$1") &&
  ip -n "$1" link set lo up &&
  ip -n "$sw" link add "$2" type veth peer name eth0 netns "$1" &&
  ip -n "$sw" link set "$2" master br0 up &&
  ip -n "$1" addr add "$3/24" dev eth0 &&
  ip -n "$1" link set eth0 up
}
for ((i = 0; i < nranks; i++)); do
  attach "$ns-r$i" "r$i" "$(addr "$i")" || { echo "soak: namespace set-up failed" >&2; exit 2; }
  ip netns exec "$ns-r$i" nft -f - <<'EOF' || { echo "soak: nft in the namespace failed" >&2; exit 77; }
table inet soak {
  chain in { type filter hook input priority 0; policy accept; }
  chain out { type filter hook output priority 0; policy accept; }
}
EOF
done
attach "$atk" atk "$atk_ip" || exit 2

umask 077
printf 'uet-tss-keyfile 1\nsd  0x000101 42 direct\nkey 0x000101 0 current %s\n' \
  "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$dir/job.key"
chmod 600 "$dir/job.key"
umask 022

peers_of() {  # the --peers list of a group
  local g=$1 list="" i
  for ((i = 0; i < nranks; i++)); do
    [ "$(group_of "$i")" = "$g" ] && list+="${list:+,}$i=$(addr "$i"):$(port "$i")"
  done
  echo "$list"
}
peers_clear=$(peers_of clear)
peers_tss=$(peers_of tss)

duration_ms=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60000 }')
t0=$(ms)
end_at=$((t0 + duration_ms))
exit_at=$((end_at + peer_timeout + 12000))
warmup_ms=20000
chaos_from=$((t0 + warmup_ms))
chaos_to=$((end_at - 25000))
cat >"$dir/config.json" <<EOF
{"ranks": $nranks, "tss_ranks": $ntss, "rate": $rate, "peer_timeout_ms": $peer_timeout,
 "seed": $seed, "t0": $t0, "end_at": $end_at, "exit_at": $exit_at,
 "chaos_from": $chaos_from, "chaos_to": $chaos_to, "warmup_ms": $warmup_ms,
 "names": {$(for ((i = 0; i < nranks; i++)); do printf '%s"%d": "%s:%d"' "$([ $i -gt 0 ] && echo ,)" "$i" "$(addr $i)" "$(port $i)"; done)},
 "groups": {$(for ((i = 0; i < nranks; i++)); do printf '%s"%d": "%s"' "$([ $i -gt 0 ] && echo ,)" "$i" "$(group_of $i)"; done)}}
EOF

start_rank() {  # start_rank RANK: its next incarnation
  local r=$1 env=() peers drop=0 dup=0 reorder=0
  if [ "$(group_of "$r")" = tss ]; then
    env+=(FI_UET_TSS_KEY_FILE="$dir/job.key"); peers=$peers_tss
  else
    peers=$peers_clear
  fi
  if [ $((RANDOM % 2)) -eq 0 ]; then
    drop=$(rnd 0 3000); dup=$(rnd 0 3000); reorder=$(rnd 0 5000)
  fi
  env+=(FI_UET_IMPAIR_DROP_PPM=$drop FI_UET_IMPAIR_DUP_PPM=$dup FI_UET_IMPAIR_REORDER_PPM=$reorder
        FI_UET_IMPAIR_SEED=$(rnd 1 1000000))
  ip netns exec "$ns-r$r" env FI_PROVIDER_PATH="$prov_dir" FI_PROVIDER=uet FI_LOG_LEVEL="${SOAK_LOG_LEVEL:-warn}" \
    FI_UET_ADDR="$(addr "$r")" FI_UET_PORT="$(port "$r")" FI_UET_PEER_TIMEOUT_MS="$peer_timeout" \
    "${env[@]}" "$soak_bin" --rank "$r" --inc "${inc[$r]}" --peers "$peers" \
    --end-at "$end_at" --exit-at "$exit_at" --rate "$rate" --large-pct "${SOAK_LARGE_PCT:-15}" --seed "$(rnd 1 1000000000)" \
    --out "$dir/r$r.${inc[$r]}.json" >>"$dir/r$r.log" 2>&1 &
  pid[$r]=$!
  state[$r]=up
  event start "$r" "${inc[$r]}" "${pid[$r]}" "drop_ppm=$drop dup_ppm=$dup reorder_ppm=$reorder"
}

say "seed $seed, $nranks ranks ($ntss with TSS), $minutes min, peer timeout $peer_timeout ms, records in $dir"
for ((i = 0; i < nranks; i++)); do inc[$i]=0; lossy[$i]=0; start_rank "$i"; done

disrupted() {
  local n=0 i
  for ((i = 0; i < nranks; i++)); do [ "${state[$i]}" != up ] && n=$((n + 1)); done
  echo $n
}
pick_up_rank() {  # a rank that is up, or nothing
  local c=() i
  for ((i = 0; i < nranks; i++)); do [ "${state[$i]}" = up ] && c+=("$i"); done
  [ ${#c[@]} -gt 0 ] && echo "${c[$((RANDOM % ${#c[@]}))]}"
}
set_loss() {  # set_loss RANK PCT DIRECTION (0: off)
  local r=$1 pct=$2 dirn=$3 n=$ns-r$1
  ip netns exec "$n" nft flush chain inet soak in
  ip netns exec "$n" nft flush chain inet soak out
  [ "$pct" -eq 0 ] && return
  case $dirn in
    in|both) ip netns exec "$n" nft add rule inet soak in meta l4proto udp numgen random mod 100 \< "$pct" drop ;;
  esac
  case $dirn in
    out|both) ip netns exec "$n" nft add rule inet soak out meta l4proto udp numgen random mod 100 \< "$pct" drop ;;
  esac
}

crashes=0
next_event=$chaos_from
IFS=';,' read -r -a script_ev <<<"${SOAK_EVENTS:-}"
while :; do
  now=$(ms)
  for ((i = 0; i < nranks; i++)); do
    # Undo what is due.
    if [ "${state[$i]}" != up ] && [ "$now" -ge "${until[$i]}" ]; then
      case ${state[$i]} in
        stopped) kill -CONT "${pid[$i]}"; state[$i]=up; event cont "$i" ;;
        linkdown) t=$(ms); ip -n "$ns-r$i" link set eth0 up; state[$i]=up; event linkup "$i" "took=$(( $(ms) - t ))" ;;
        dead) inc[$i]=$((inc[$i] + 1)); start_rank "$i"; event restart "$i" "${inc[$i]}" ;;
      esac
    fi
    if [ "${lossy[$i]}" -eq 1 ] && [ "$now" -ge "${loss_until[$i]}" ]; then
      set_loss "$i" 0 none; lossy[$i]=0; event loss_off "$i"
    fi
    # A rank that ended on its own before exit-at crashed.
    if [ "${state[$i]}" != dead ] && [ "$now" -lt "$exit_at" ] && ! kill -0 "${pid[$i]}" 2>/dev/null; then
      wait "${pid[$i]}"; rc=$?
      event crash "$i" "${inc[$i]}" "rc=$rc"
      say "rank $i (incarnation ${inc[$i]}) exited with status $rc before the end: restarting it"
      crashes=$((crashes + 1))
      inc[$i]=$((inc[$i] + 1)); start_rank "$i"
    fi
  done
  if [ -n "$flood_pid" ] && ! kill -0 "$flood_pid" 2>/dev/null; then
    wait "$flood_pid"; event flood_end "rc=$?"; flood_pid=
  fi
  # SOAK_EVENTS: a fixed schedule instead of the random one (to replay a
  # failure): "SECONDS ACTION RANK [MS]; ..." with ACTION stop, kill (MS:
  # until the restart), link, loss (MS; 10 % both ways) or flood, SECONDS from
  # the start.
  if [ -n "${SOAK_EVENTS:-}" ]; then
    while [ ${#script_ev[@]} -gt 0 ]; do
      read -r at act r d <<<"${script_ev[0]}"
      [ "$now" -ge $((t0 + $(awk -v s="$at" 'BEGIN { printf "%d", s * 1000 }'))) ] || break
      script_ev=("${script_ev[@]:1}")
      d=${d:-5000}
      case $act in
        stop) do_stop "$r" "$d" ;;
        kill) do_kill "$r" "$d" ;;
        link) do_link "$r" "$d" ;;
        loss) set_loss "$r" 10 both; lossy[$r]=1; loss_until[$r]=$((now + d)); event loss "$r" 10 both "$d" ;;
        flood) ip netns exec "$atk" "$inject_bin" --flood 50000 "$(addr "$r")" "$(port "$r")" \
                 --from "$atk_ip" --sources 64 --job 0 --rate 10000 >>"$dir/flood.log" 2>&1 &
               flood_pid=$!; event flood "$r" "pps=10000 s=5 job=0" ;;
      esac
    done
  elif [ "$now" -ge "$next_event" ] && [ "$now" -lt "$chaos_to" ]; then
    next_event=$((now + $(rnd 1500 5000)))
    kind=$(( RANDOM % 100 ))
    r=$(pick_up_rank)
    if [ -n "$r" ] && [ "$kind" -lt 60 ] && [ "$(disrupted)" -ge 2 ]; then kind=70; fi
    if [ -z "$r" ]; then :
    elif [ "$kind" -lt 22 ]; then
      do_stop "$r" "$(rnd 1000 15000)"
    elif [ "$kind" -lt 40 ]; then
      # Mostly back before the peer timeout (pending operations move to a new
      # PDC with the new incarnation); a third of the time after it (they fail).
      if [ $((RANDOM % 3)) -eq 0 ]; then d=$(rnd $((peer_timeout + 1000)) $((peer_timeout + 4000)))
      else d=$(rnd 500 5000); fi
      do_kill "$r" "$d"
    elif [ "$kind" -lt 60 ]; then
      do_link "$r" "$(rnd 1000 5000)"
    elif [ "$kind" -lt 82 ]; then
      if [ "${lossy[$r]}" -eq 0 ]; then
        pct=$(rnd 1 15); d=$(rnd 3000 15000); dirs=(in out both); dirn=${dirs[$((RANDOM % 3))]}
        set_loss "$r" "$pct" "$dirn"; lossy[$r]=1; loss_until[$r]=$((now + d))
        event loss "$r" "$pct" "$dirn" "$d"
      fi
    elif [ -z "$flood_pid" ]; then
      pps=$(rnd 5000 20000); d=$(rnd 2 6); job=$([ $((RANDOM % 2)) -eq 0 ] && echo 0 || echo 7)
      ip netns exec "$atk" "$inject_bin" --flood $((pps * d)) "$(addr "$r")" "$(port "$r")" \
        --from "$atk_ip" --sources 64 --job "$job" --rate "$pps" >>"$dir/flood.log" 2>&1 &
      flood_pid=$!
      event flood "$r" "pps=$pps s=$d job=$job"
    fi
  fi
  # Done when every rank has left (they leave at exit-at by themselves).
  if [ "$now" -ge "$exit_at" ]; then
    alive=0
    for ((i = 0; i < nranks; i++)); do kill -0 "${pid[$i]}" 2>/dev/null && alive=$((alive + 1)); done
    [ "$alive" -eq 0 ] && [ -z "$flood_pid" ] && break
    if [ "$now" -ge $((exit_at + 30000)) ]; then
      for ((i = 0; i < nranks; i++)); do
        if kill -0 "${pid[$i]}" 2>/dev/null; then
          event hang_at_exit "$i" "${inc[$i]}"; say "rank $i did not leave by exit-at + 30 s: killed"
          kill -KILL "${pid[$i]}"
        fi
      done
      [ -n "$flood_pid" ] && kill -KILL "$flood_pid"
      wait; flood_pid=; break
    fi
  fi
  sleep 0.2
done
for ((i = 0; i < nranks; i++)); do wait "${pid[$i]}" 2>/dev/null; done
event done
say "traffic over after $(( ($(ms) - t0) / 1000 )) s; checking"
python3 "$here/scripts/soak-check.py" "$dir"
soak_rc=$?
[ "$soak_rc" -ne 0 ] && say "records kept in $dir"
exit "$soak_rc"
