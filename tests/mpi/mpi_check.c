/* Two ranks over Open MPI's ofi MTL on the uet provider (tests/mpi/mpi_test.sh):
 * point-to-point messages of 1 B, 4 KiB and 1 MiB each way and an
 * MPI_Allreduce, every byte checked. Exit status 0 only when all matched. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The byte at offset i of a message of `len` bytes from `rank`. */
static unsigned char Expected(int rank, size_t len, size_t i) {
  return (unsigned char)((i * 131u + len * 7u + (size_t)rank * 29u + 1u) & 0xffu);
}

static void Fill(unsigned char* buf, int rank, size_t len) {
  for (size_t i = 0; i < len; ++i) buf[i] = Expected(rank, len, i);
}

/* Mismatched bytes of a message received from `from` (the first one printed). */
static long Check(const unsigned char* buf, int from, size_t len, int me) {
  long bad = 0;
  for (size_t i = 0; i < len; ++i) {
    if (buf[i] != Expected(from, len, i)) {
      if (bad == 0) {
        fprintf(stderr, "rank %d: %zu-byte message from rank %d: byte %zu is 0x%02x, want 0x%02x\n",
                me, len, from, i, buf[i], Expected(from, len, i));
      }
      ++bad;
    }
  }
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "run with 2 ranks (got %d)\n", size);
    MPI_Finalize();
    return 2;
  }
  const int peer = 1 - rank;
  const size_t sizes[] = {1, 4096, 1 << 20};
  long bad = 0;
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    const size_t len = sizes[k];
    unsigned char* out = malloc(len);
    unsigned char* in = malloc(len);
    if (out == NULL || in == NULL) MPI_Abort(MPI_COMM_WORLD, 3);
    Fill(out, rank, len);
    memset(in, 0, len);
    /* Rank 0 sends first, then receives the reply; rank 1 the other way. */
    MPI_Status st;
    if (rank == 0) {
      MPI_Send(out, (int)len, MPI_BYTE, peer, (int)k, MPI_COMM_WORLD);
      MPI_Recv(in, (int)len, MPI_BYTE, peer, (int)k, MPI_COMM_WORLD, &st);
    } else {
      MPI_Recv(in, (int)len, MPI_BYTE, peer, (int)k, MPI_COMM_WORLD, &st);
      MPI_Send(out, (int)len, MPI_BYTE, peer, (int)k, MPI_COMM_WORLD);
    }
    int got = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != (int)len) {
      fprintf(stderr, "rank %d: message %zu: received %d bytes, want %zu\n", rank, k, got, len);
      ++bad;
    }
    bad += Check(in, peer, len, rank);
    free(out);
    free(in);
  }
  /* Allreduce of 1000 longs: element i of rank r is r * 1000003 + i. */
  enum { kCount = 1000 };
  long vin[kCount], vout[kCount];
  for (int i = 0; i < kCount; ++i) vin[i] = (long)rank * 1000003L + i;
  MPI_Allreduce(vin, vout, kCount, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < kCount; ++i) {
    const long want = 1000003L + 2L * i; /* ranks 0 and 1 */
    if (vout[i] != want) {
      if (bad == 0) fprintf(stderr, "rank %d: allreduce[%d] = %ld, want %ld\n", rank, i, vout[i], want);
      ++bad;
    }
  }
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_check: 2 ranks, 3 message sizes and an allreduce: %ld mismatches\n", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
