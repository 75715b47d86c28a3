/*
 * Cancelling MPI operations that cannot complete (docs/distributed.md,
 * "Cancellation"): rank 0 queues an allgather that the other ranks join
 * only much later, and an allreduce behind it.  ascStreamCancel from
 * another thread gives control back to the thread in
 * ascStreamSynchronize (ascErrorCancelled), the communicator is unusable
 * from then on (the allreduce behind, and new operations, fail with
 * ascErrorCommunication), the stream works again, and ascCommDestroy
 * returns.  Before, the synchronisation and the destroy waited forever.
 * The other ranks then join the allgather (so that MPI can finish rank
 * 0's abandoned one) and check its data.
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

enum { N = 64 };

static int rank, size;
static ascStream_t stream;

/* A minute, then every rank is ended: the old library hung here. */
static void *hang_guard(void *arg) {
  (void)arg;
  sleep(60);
  fprintf(stderr, "rank %d: test_mpi_cancel hung\n", rank);
  MPI_Abort(MPI_COMM_WORLD, 2);
  return NULL;
}

static void *canceller(void *arg) {
  struct timespec pause = {0, 300000000};
  (void)arg;
  nanosleep(&pause, NULL);
  OK(ascStreamCancel(stream));
  return NULL;
}

int main(int argc, char **argv) {
  static int32_t send[N], recv[64 * N];
  double one = 1, sum = 0;
  pthread_t guard, t;
  ascStream_t other;
  ascComm_t comm;

  test_init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rank = test_rank;
  CHECK(size <= 64, "at most 64 ranks, got %d", size);
  CHECK(pthread_create(&guard, NULL, hang_guard, NULL) == 0, "no thread");
  pthread_detach(guard);
  for (int i = 0; i < N; i++)
    send[i] = rank * 1000 + i;
  OK(ascCommInitFromMPI(&comm, MPI_COMM_WORLD));
  OK(ascStreamCreate(&stream));
  OK(ascStreamCreate(&other));

  if (rank == 0) {
    OK(ascAllGather(send, recv, N, ascInt32, comm, stream));
    OK(ascAllReduce(&one, &sum, 1, ascFloat64, ascRedSum, comm, stream));
    CHECK(pthread_create(&t, NULL, canceller, NULL) == 0, "no thread");
    ERR(ascStreamSynchronize(stream), ascErrorCancelled);
    CHECK(strstr(ascGetLastErrorMessage(), "ascStreamCancel") != NULL,
          "message: %s", ascGetLastErrorMessage());
    pthread_join(t, NULL);
    CHECK(sum == 0, "the allreduce behind the cancelled op ran: %g", sum);
    /* The stream works again; the communicator does not. */
    OK(ascStreamSynchronize(stream));
    ERR(ascAllReduce(&one, &sum, 1, ascFloat64, ascRedSum, comm, other),
        ascErrorCommunication);
    CHECK(strstr(ascGetLastErrorMessage(), "unusable") != NULL,
          "message: %s", ascGetLastErrorMessage());
    OK(ascStreamSynchronize(other));
    OK(ascCommDestroy(comm));
    printf("rank 0: cancelled; communicator unusable; destroyed\n");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) {
    /* Rank 0's allgather is still posted in MPI: this completes both. */
    OK(ascAllGather(send, recv, N, ascInt32, comm, stream));
    OK(ascStreamSynchronize(stream));
    for (int r = 0; r < size; r++)
      for (int i = 0; i < N; i++)
        CHECK(recv[r * N + i] == r * 1000 + i, "recv[%d] = %d", r * N + i,
              recv[r * N + i]);
    OK(ascCommDestroy(comm));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  OK(ascStreamDestroy(stream));
  OK(ascStreamDestroy(other));
  OK(ascDeviceReset());
  if (rank == 0)
    printf("test_mpi_cancel: %d ranks ok\n", size);
  MPI_Finalize();
  return 0;
}
