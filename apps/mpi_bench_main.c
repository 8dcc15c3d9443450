/* uet-mpi-bench: the Open MPI figures issue 26 compares (IMB is not in
 * Debian), for scripts/bench-mpi.sh. Not a test: a benchmark run by hand.
 *
 *   mpirun -np N uet-mpi-bench [SECONDS_CAP [FIGURES]]
 *
 * FIGURES: a comma list of pingpong64, pingpong1m, allreduce8m, alltoall64,
 * alltoall1m (default: all).
 *
 * Rank 0 prints one line per figure, IMB's way (time per operation, averaged
 * over the timed repetitions after warm-up, the slowest rank's for
 * collectives):
 *   pingpong BYTES: T us one way, M MB/s      (ranks 0 and 1; the others wait)
 *   allreduce BYTES: T us                      (MPI_SUM of doubles)
 *   alltoall BYTES: T us                       (BYTES to every rank)
 * and "cut short" when a figure ran past SECONDS_CAP (default 60 s) of
 * repetitions: what a loaded machine must not do. Data is checked once per
 * figure (pingpong: the last message; allreduce: the sum); a mismatch prints
 * "MISMATCH" and the exit status is 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size, g_bad;
static double g_cap_s = 60.0;

/* Repetitions for a message of `bytes`: IMB-like, fewer for large ones. */
static int Reps(size_t bytes) {
  if (bytes <= 4096) return 1000;
  if (bytes <= (1u << 20)) return 100;
  return 20;
}

/* True when rank 0 says the cap passed (all ranks agree). */
static int CapPassed(double start) {
  int passed = g_rank == 0 && MPI_Wtime() - start > g_cap_s;
  MPI_Bcast(&passed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return passed;
}

static void PingPong(size_t bytes) {
  unsigned char* buf = malloc(bytes ? bytes : 1);
  const int reps = Reps(bytes), warm = reps / 10 + 1;
  double t0 = 0;
  int done = 0, cut = 0;
  const double start = MPI_Wtime();
  for (int i = 0; i < warm + reps; ++i) {
    if (i == warm) t0 = MPI_Wtime();
    if (g_rank == 0) {
      memset(buf, (unsigned char)i, bytes);
      MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (bytes && (buf[0] != (unsigned char)(i + 1) || buf[bytes - 1] != (unsigned char)(i + 1))) {
        ++g_bad;
      }
    } else if (g_rank == 1) {
      MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (bytes) memset(buf, (unsigned char)(i + 1), bytes);
      MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
    if (i >= warm) ++done;
    if ((i & 15) == 15 && CapPassed(start)) {
      cut = 1;
      break;
    }
  }
  const double us = done ? (MPI_Wtime() - t0) * 1e6 / (2.0 * done) : 0;
  if (g_rank == 0) {
    printf("pingpong %zu: %.2f us one way, %.1f MB/s%s\n", bytes, us, us > 0 ? bytes / us : 0,
           cut ? " (cut short)" : "");
  }
  free(buf);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Runs op(arg) warm-up and `reps` timed times on every rank (the timed part
 * after a barrier), stopping early past the cap (*cut = 1). Returns, at rank
 * 0, the slowest rank's us per operation. */
static double TimeCollective(int reps, void (*op)(void*), void* arg, int* cut) {
  const int warm = reps / 10 + 1;
  double t0 = 0;
  int done = 0;
  *cut = 0;
  const double start = MPI_Wtime();
  for (int i = 0; i < warm + reps; ++i) {
    if (i == warm) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    op(arg);
    if (i >= warm) ++done;
    if ((i & 3) == 3 && CapPassed(start)) {
      *cut = 1;
      break;
    }
  }
  double us = done ? (MPI_Wtime() - t0) * 1e6 / done : 0, worst = 0;
  MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return worst;
}

struct Buffers {
  void* in;
  void* out;
  size_t count;
};

static void AllreduceOp(void* arg) {
  const struct Buffers* b = arg;
  MPI_Allreduce(b->in, b->out, (int)b->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void AlltoallOp(void* arg) {
  const struct Buffers* b = arg;
  MPI_Alltoall(b->in, (int)b->count, MPI_BYTE, b->out, (int)b->count, MPI_BYTE, MPI_COMM_WORLD);
}

static void Allreduce(size_t bytes) {
  const size_t n = bytes / sizeof(double);
  double* in = malloc(n * sizeof(double));
  double* out = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; ++i) in[i] = (double)(g_rank + 1);
  struct Buffers b = {in, out, n};
  int cut = 0;
  const double us = TimeCollective(Reps(bytes), AllreduceOp, &b, &cut);
  const double want = g_size * (g_size + 1) / 2.0;
  if (n && (out[0] != want || out[n - 1] != want)) ++g_bad;
  if (g_rank == 0) printf("allreduce %zu: %.1f us%s\n", bytes, us, cut ? " (cut short)" : "");
  free(in);
  free(out);
}

static void Alltoall(size_t bytes) {
  unsigned char* in = malloc(bytes * g_size);
  unsigned char* out = malloc(bytes * g_size);
  for (int r = 0; r < g_size; ++r) memset(in + (size_t)r * bytes, (unsigned char)(g_rank * 7 + r), bytes);
  struct Buffers b = {in, out, bytes};
  int cut = 0;
  const double us = TimeCollective(Reps(bytes * g_size), AlltoallOp, &b, &cut);
  for (int r = 0; r < g_size && bytes; ++r) {
    if (out[(size_t)r * bytes] != (unsigned char)(r * 7 + g_rank)) ++g_bad;
  }
  if (g_rank == 0) printf("alltoall %zu: %.1f us%s\n", bytes, us, cut ? " (cut short)" : "");
  free(in);
  free(out);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc > 1) g_cap_s = atof(argv[1]);
  if (g_size < 2) {
    if (g_rank == 0) fprintf(stderr, "uet-mpi-bench: run with at least 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  const char* only = argc > 2 ? argv[2] : "pingpong64,pingpong1m,allreduce8m,alltoall64,alltoall1m";
  if (strstr(only, "pingpong64")) PingPong(64);
  if (strstr(only, "pingpong1m")) PingPong((size_t)1 << 20);
  if (strstr(only, "allreduce8m")) Allreduce((size_t)8 << 20);
  if (strstr(only, "alltoall64")) Alltoall(64);
  if (strstr(only, "alltoall1m")) Alltoall((size_t)1 << 20);
  int bad = 0;
  MPI_Reduce(&g_bad, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%s\n", bad ? "MISMATCH" : "data checked");
  MPI_Finalize();
  return bad ? 1 : 0;
}
