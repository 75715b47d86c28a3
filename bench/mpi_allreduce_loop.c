/*
 * The library's own cost per small allreduce: a loop of ascAllReduce +
 * ascStreamSynchronize against a loop of MPI_Allreduce, back to back,
 * on the same 8 bytes, in the same run.  Prints, for each of five
 * rounds, ns per call of each and the difference; the last line is the
 * median round.  On one rank MPI_Allreduce is a copy, so the difference
 * is libasc's queue, stream and communicator bookkeeping, hot in the
 * caches (bench/mpi_allreduce measures it cold, between barriers).
 *
 *   mpirun -np 1 build/bench/mpi_allreduce_loop [calls]
 */
#include <stdio.h>
#include <stdlib.h>

#include "asc/asc_mpi.h"

#define ROUNDS 5

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

int main(int argc, char **argv) {
  int provided, rank;
  int n = argc > 1 ? atoi(argv[1]) : 200000;
  float in[2] = {1, 2}, out[2];
  double diff[ROUNDS];
  ascComm_t comm;
  ascStream_t s;

  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK(ascCommInitFromMPI(&comm, MPI_COMM_WORLD));
  CHECK(ascStreamCreate(&s));
  if (n < 1)
    n = 1;
  for (int r = 0; r < ROUNDS; r++) {
    double t0, t1, t2, t3;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
      MPI_Allreduce(in, out, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    t2 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
      CHECK(ascAllReduce(in, out, 2, ascFloat32, ascRedSum, comm, s));
      CHECK(ascStreamSynchronize(s));
    }
    t3 = MPI_Wtime();
    diff[r] = ((t3 - t2) - (t1 - t0)) / n * 1e9;
    if (rank == 0)
      printf("mpi %.1f ns asc %.1f ns diff %.1f ns\n", (t1 - t0) / n * 1e9,
             (t3 - t2) / n * 1e9, diff[r]);
  }
  qsort(diff, ROUNDS, sizeof *diff, cmp);
  if (rank == 0)
    printf("median diff %.1f ns per call\n", diff[ROUNDS / 2]);
  CHECK(ascStreamDestroy(s));
  CHECK(ascCommDestroy(comm));
  MPI_Finalize();
  return 0;
}
