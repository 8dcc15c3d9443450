# Sourced by the benchmarks that load the CPUs (bench-busy.sh, bench-mpi.sh):
# start_busy N_PER_CORE starts N busy loops per CPU, stop_busy stops them by
# their PIDs (this script's own processes only). The caller traps stop_busy.
busy_pids=()
stop_busy() {
  local p
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${busy_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  busy_pids=()
}
start_busy() {  # loops per core
  local n=$(($(nproc) * $1)) i
  for ((i = 0; i < n; i++)); do
    bash -c 'while :; do :; done' &
    busy_pids+=($!)
  done
}
