/*
 * ascAllReduce against plain MPI_Allreduce on the same buffers, in the
 * same run: median time per call and bus bandwidth (NCCL's definition,
 * 2 (n-1)/n * bytes / time) for float32 sums from 8 B to 16 MiB.  Each
 * ascAllReduce sample is queue + ascStreamSynchronize, so it includes the
 * queuing, the post (MPI_Iallreduce) and the completion seen by the
 * waiting thread.  MPI_Iallreduce + MPI_Wait, timed too, is the floor
 * for any library that posts nonblocking collectives.  The three are
 * timed in a rotating order, and the asc result is checked.
 *
 *   mpirun -np 2 build/bench/mpi_allreduce [max_bytes] [reps]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc/asc_mpi.h"

#define CHECK(call)                                                          \
  do {                                                                       \
    ascError_t e_ = (call);                                                  \
    if (e_ != ascSuccess) {                                                  \
      fprintf(stderr, "%s failed: %s\n", #call, ascGetLastErrorMessage());   \
      MPI_Abort(MPI_COMM_WORLD, 1);                                          \
    }                                                                        \
  } while (0)

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median over ranks' slowest: every rank's sample i is reduced to the
 * maximum first (a collective finishes when its last rank does). */
static double median(double *t, int n) {
  MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  qsort(t, (size_t)n, sizeof *t, cmp);
  return t[n / 2];
}

int main(int argc, char **argv) {
  int provided, rank, size;
  size_t max_bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 16u << 20;
  int reps = argc > 2 ? atoi(argv[2]) : 20;
  ascComm_t comm;
  ascStream_t s;

  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(ascCommInitFromMPI(&comm, MPI_COMM_WORLD));
  CHECK(ascStreamCreate(&s));
  float *in = malloc(max_bytes), *out = malloc(max_bytes);
  double *ta = malloc(sizeof *ta * (size_t)reps);
  double *tm = malloc(sizeof *tm * (size_t)reps);
  double *ti = malloc(sizeof *ti * (size_t)reps);
  if (in == NULL || out == NULL || ta == NULL || tm == NULL || ti == NULL)
    MPI_Abort(MPI_COMM_WORLD, 1);
  for (size_t i = 0; i < max_bytes / sizeof *in; i++)
    in[i] = (float)(i % 7);
  if (rank == 0)
    printf("# %d ranks, float32 sum, median of %d (slowest rank each)\n"
           "%10s %12s %12s %12s %10s %10s %7s\n", size, reps, "bytes",
           "mpi_us", "impi_us", "asc_us", "mpi_GB/s", "asc_GB/s",
           "asc/mpi");
  for (size_t bytes = 8; bytes <= max_bytes; bytes *= 8) {
    size_t n = bytes / sizeof *in;
    /* warm both paths */
    MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(ascAllReduce(in, out, n, ascFloat32, ascRedSum, comm, s));
    CHECK(ascStreamSynchronize(s));
    for (int r = 0; r < reps; r++) {
      /* The three in turn, the order rotating from one sample to the
       * next: what a call leaves behind (MPI's queues, the caches) then
       * weighs on each column alike. */
      for (int k = 0; k < 3; k++) {
        int which = (r + k) % 3;
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (which == 0) {
          MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
          tm[r] = MPI_Wtime() - t0;
        } else if (which == 1) {
          MPI_Request rq;
          MPI_Iallreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                         &rq);
          MPI_Wait(&rq, MPI_STATUS_IGNORE);
          ti[r] = MPI_Wtime() - t0;
        } else {
          CHECK(ascAllReduce(in, out, n, ascFloat32, ascRedSum, comm, s));
          CHECK(ascStreamSynchronize(s));
          ta[r] = MPI_Wtime() - t0;
        }
      }
    }
    /* The last ascAllReduce's result (each rank's in[] is the same). */
    CHECK(ascAllReduce(in, out, n, ascFloat32, ascRedSum, comm, s));
    CHECK(ascStreamSynchronize(s));
    if (out[0] != in[0] * (float)size ||
        out[n - 1] != in[n - 1] * (float)size) {
      fprintf(stderr, "ascAllReduce: wrong sum at %zu bytes\n", bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double mm = median(tm, reps), mi = median(ti, reps);
    double ma = median(ta, reps);
    double bus = 2.0 * (size - 1) / size * (double)bytes;
    if (rank == 0)
      printf("%10zu %12.2f %12.2f %12.2f %10.3f %10.3f %7.2f\n", bytes,
             mm * 1e6, mi * 1e6, ma * 1e6, bus / mm / 1e9, bus / ma / 1e9,
             ma / mm);
  }
  CHECK(ascStreamDestroy(s));
  CHECK(ascCommDestroy(comm));
  free(in);
  free(out);
  free(ta);
  free(tm);
  free(ti);
  MPI_Finalize();
  return 0;
}
