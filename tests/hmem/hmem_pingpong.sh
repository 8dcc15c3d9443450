#!/usr/bin/env bash
# uet-hmem-pingpong between two processes on loopback (spec-notes/hmem.md).
#   hmem_pingpong.sh APP PROVIDER_DIR FAKE_CUDA_DIR   the matrix against the mock driver:
#       device<->device, host<->device, device<->host, tagged device<->device,
#       sizes 0 B .. 4 MiB around the packet, sync and chunk limits, -c
#   hmem_pingpong.sh APP PROVIDER_DIR none            no CUDA: -m cuda fails saying why,
#                                                     host<->host still works
# Mock-driver runs prove the plumbing between two processes, not GPU speed.
set -uo pipefail
app=$1
export FI_PROVIDER_PATH=$2
fake=$3
sizes=0,1,64,1324,1325,65536,65537,524289,1m,4m
port=$((40000 + RANDOM % 20000))
fail=0

run() {  # run SERVER_MEM CLIENT_MEM [ARGS...]
  local smem=$1 cmem=$2
  shift 2
  port=$((port + 1))
  timeout 120 "$app" -m "$smem" -B $port -s 127.0.0.1 >/tmp/hmem_pp_server.$$ 2>&1 &
  local spid=$!
  timeout 120 "$app" -m "$cmem" -P $port -s 127.0.0.1 "$@" 127.0.0.1
  local crc=$?
  wait $spid
  local src=$?
  if [[ $crc -ne 0 || $src -ne 0 ]]; then
    echo "FAIL: server -m $smem, client -m $cmem $* (client $crc, server $src); server said:"
    cat /tmp/hmem_pp_server.$$
    fail=1
  else
    echo "ok: server -m $smem, client -m $cmem $*"
  fi
  rm -f /tmp/hmem_pp_server.$$
}

if [[ $fake == none ]]; then
  out=$("$app" -m cuda -s 127.0.0.1 127.0.0.1 2>&1)
  rc=$?
  echo "$out"
  if [[ $rc -eq 0 || $out != *"-m cuda"* ]]; then
    echo "FAIL: -m cuda without a CUDA driver should fail and say why"
    fail=1
  fi
  run host host -S $sizes -I 2 -w 1 -c
  exit $fail
fi

export LD_LIBRARY_PATH=$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
run cuda cuda -S $sizes -I 2 -w 1 -c
run cuda host -S $sizes -I 2 -w 1 -c
run host cuda -S $sizes -I 2 -w 1 -c
run cuda cuda -S $sizes -I 2 -w 1 -c -m tagged
exit $fail
