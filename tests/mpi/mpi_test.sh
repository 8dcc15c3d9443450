#!/usr/bin/env bash
# Open MPI over the uet provider, 2 ranks on this host, no FI_UET_* variable
# (ctest mpi.ofi_uet; spec-notes/provider.md "Ports"):
#   1. mpi_check (tests/mpi/mpi_check.c) through `--mca pml cm --mca mtl ofi
#      --mca mtl_ofi_provider_include uet`: messages of 1 B, 4 KiB and 1 MiB
#      each way and an MPI_Allreduce, every byte checked; both ranks must have
#      enabled a uet endpoint (the provider's info log), on different ports.
#   2. With FI_UET_PORT pinned, the second rank's endpoint cannot bind: the run
#      must fail, and what the user sees without FI_LOG_LEVEL must name the
#      port and FI_UET_PORT (not only "PML cm cannot be selected").
#
#   tests/mpi/mpi_test.sh PROVIDER_DIR MPI_CHECK_BINARY MPIRUN
#
# Runs as root in containers: --allow-run-as-root, --oversubscribe (2 cores),
# --bind-to none, btl self only (no shared-memory transport to set up; pml cm
# does not use BTLs for point-to-point) and the isolated launcher (no ssh).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PROVIDER_DIR MPI_CHECK_BINARY MPIRUN" >&2; exit 2; }
prov_dir=$(cd "$1" && pwd)
check=$2
mpirun=$3
if ! "$mpirun" --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  echo "mpi_test: $mpirun is not Open MPI (the test uses its ofi MTL): skipped"; exit 77
fi
while read -r v; do unset "$v"; done < <(compgen -e | grep '^FI_UET_' || true)
unset FI_LOG_LEVEL FI_LOG_PROV FI_LOG_SUBSYS FI_PROVIDER
export FI_PROVIDER_PATH=$prov_dir
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none
mpi=("$mpirun" -np 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include uet)

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# 1. No configuration: both ranks open a uet endpoint and the data arrives intact.
rc=0
FI_LOG_LEVEL=info FI_LOG_PROV=uet FI_LOG_SUBSYS=ep_ctrl \
  timeout -s TERM 60 "${mpi[@]}" -x FI_LOG_LEVEL -x FI_LOG_PROV -x FI_LOG_SUBSYS "$check" \
  >"$out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "mpi_check: .*: 0 mismatches" "$out"; then
  echo "mpi_test: FAIL: mpirun exited $rc" >&2
  grep -v "<info> variable" "$out" | tail -30 >&2
  exit 1
fi
ports=$(sed -n -E 's/.*uet: endpoint uet:\/\/[^ ]*:([0-9]+)\/[^ ]* enabled.*/\1/p' "$out" | sort -u)
if [ "$(echo "$ports" | grep -c .)" -ne 2 ]; then
  echo "mpi_test: FAIL: want two uet endpoints on two ports, the log shows: $(echo $ports)" >&2
  grep "uet:" "$out" | tail -10 >&2
  exit 1
fi
grep "mpi_check:" "$out"
echo "mpi_test: ranks on uet ports $(echo $ports)"

# 2. A pinned port taken by the other rank: a clear error on stderr.
port=$((20000 + RANDOM % 10000))
rc=0
FI_UET_PORT=$port timeout -s TERM 60 "${mpi[@]}" -x FI_UET_PORT "$check" >"$out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ]; then
  echo "mpi_test: FAIL: two ranks with FI_UET_PORT=$port both ran" >&2; exit 1
fi
if ! grep -q "uet: fi_enable: UDP port $port .* already in use.*FI_UET_PORT" "$out"; then
  echo "mpi_test: FAIL: FI_UET_PORT=$port taken, but the output does not say so:" >&2
  tail -20 "$out" >&2
  exit 1
fi
echo "mpi_test: FI_UET_PORT=$port pinned for 2 ranks fails with: $(grep -m1 'uet: fi_enable' "$out")"
echo "mpi_test: passed"
