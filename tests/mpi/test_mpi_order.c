/*
 * Stream order with kernels (a kernel writes the buffer, an allreduce
 * reduces it, a kernel reads it; nothing synchronised in between), order
 * across streams through events, an MPI error on one rank reaching its
 * stream without hanging the others, and communicator misuse.
 */
#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "mpitest.h"

#define TEST_MODULE(name) ASC_TEST_MODULE_DIR "/" name ".so"

static int rank, size;

static ascTensor tensor1(void *data, ascDataType dt, int64_t n) {
  ascTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dt;
  t.ndim = 1;
  t.shape[0] = n;
  t.strides[0] = 1;
  return t;
}

enum { N = 4096 };

/* x = 0*x + (rank+1) on s (behind a sleeping kernel, so the allreduce is
 * queued long before its data exist); allreduce sum in place;
 * x = 2*x + 0.  Every element: 2 * size(size+1)/2. */
static void test_same_stream(ascKernel_t affine, ascKernel_t sleepy,
                             ascComm_t comm) {
  int64_t *x = calloc(N, sizeof *x), zero = 0, add = rank + 1, two = 2;
  int32_t us = 20000;
  ascTensor t = tensor1(x, ascInt64, N);
  void *sl[] = {&us}, *set[] = {&t, &zero, &add}, *dbl[] = {&t, &two, &zero};
  ascStream_t s;

  OK(ascStreamCreate(&s));
  OK(ascLaunchKernel(sleepy, 1, sl, s));
  OK(ascLaunchKernel(affine, 4, set, s));
  OK(ascAllReduce(x, x, N, ascInt64, ascRedSum, comm, s));
  OK(ascLaunchKernel(affine, 4, dbl, s));
  OK(ascStreamSynchronize(s));
  for (int i = 0; i < N; i++)
    CHECK(x[i] == (int64_t)size * (size + 1), "x[%d] = %lld", i,
          (long long)x[i]);
  OK(ascStreamDestroy(s));
  free(x);
}

/* Kernel on a; event; allreduce on b after it; event; kernel on a after
 * that. */
static void test_across_streams(ascKernel_t affine, ascKernel_t sleepy,
                                ascComm_t comm) {
  int64_t *x = calloc(N, sizeof *x), zero = 0, add = rank + 1, three = 3;
  int32_t us = 20000;
  ascTensor t = tensor1(x, ascInt64, N);
  void *sl[] = {&us}, *set[] = {&t, &zero, &add}, *tri[] = {&t, &three, &zero};
  ascStream_t a, b;
  ascEvent_t written, reduced;

  OK(ascStreamCreateWithFlags(&a, ascStreamNonBlocking));
  OK(ascStreamCreateWithFlags(&b, ascStreamNonBlocking));
  OK(ascEventCreate(&written));
  OK(ascEventCreate(&reduced));
  OK(ascLaunchKernel(sleepy, 1, sl, a));
  OK(ascLaunchKernel(affine, 2, set, a));
  OK(ascEventRecord(written, a));
  OK(ascStreamWaitEvent(b, written, 0));
  OK(ascAllReduce(x, x, N, ascInt64, ascRedMax, comm, b));
  OK(ascEventRecord(reduced, b));
  OK(ascStreamWaitEvent(a, reduced, 0));
  OK(ascLaunchKernel(affine, 2, tri, a));
  OK(ascEventSynchronize(reduced));
  OK(ascStreamSynchronize(a));
  for (int i = 0; i < N; i++)
    CHECK(x[i] == 3 * (int64_t)size, "x[%d] = %lld", i, (long long)x[i]);
  OK(ascEventDestroy(written));
  OK(ascEventDestroy(reduced));
  OK(ascStreamDestroy(a));
  OK(ascStreamDestroy(b));
  free(x);
}

/* Rank 1 receives fewer elements than rank 0 sends: MPI reports a
 * truncation on rank 1, whose stream reports it; rank 0 completes; both
 * go on with a collective afterwards (nothing hangs). */
static void test_error_on_one_rank(ascComm_t comm) {
  double buf[16] = {0}, one = 1, sum = 0;
  ascStream_t s;

  OK(ascStreamCreate(&s));
  if (rank == 0) {
    OK(ascSend(buf, 16, ascFloat64, 1, comm, s));
    OK(ascStreamSynchronize(s));
  } else if (rank == 1) {
    OK(ascRecv(buf, 4, ascFloat64, 0, comm, s));
    ERR(ascStreamSynchronize(s), ascErrorCommunication);
    CHECK(strstr(ascGetLastErrorMessage(), "ascRecv: MPI failed") != NULL,
          "message: %s", ascGetLastErrorMessage());
    CHECK(strstr(ascGetLastErrorMessage(), "truncat") != NULL,
          "message: %s", ascGetLastErrorMessage());
    OK(ascStreamSynchronize(s));   /* reported once */
  }
  OK(ascAllReduce(&one, &sum, 1, ascFloat64, ascRedSum, comm, s));
  OK(ascStreamSynchronize(s));
  CHECK(sum == size, "sum %g", sum);
  OK(ascStreamDestroy(s));
}

/* Allreduces run as blocking MPI on a thread that may block: a host
 * thread waiting in libasc, else the progress thread.  Here nobody
 * waits in libasc (ascStreamQuery and nanosleep only), so the progress
 * thread must run them; a larger one sits between them in the
 * communicator's order, on another stream (posted, MPI_Iallreduce, when
 * ASC_MPI_BLOCKING_MAX is below its size: test_mpi_order_posted_np2). */
static void test_no_waiter(ascComm_t comm) {
  enum { BIG = 20000 };   /* 80 KB of float32 */
  static float big[BIG];
  double small[3] = {1, 2, 3}, last = 0;
  ascStream_t s, t;
  struct timespec nap = {0, 1000000};
  int polls = 0;

  for (int i = 0; i < BIG; i++)
    big[i] = (float)(rank + i % 5);
  OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  OK(ascStreamCreateWithFlags(&t, ascStreamNonBlocking));
  OK(ascAllReduce(small, small, 3, ascFloat64, ascRedSum, comm, s));
  OK(ascAllReduce(big, big, BIG, ascFloat32, ascRedSum, comm, t));
  OK(ascAllReduce(&small[2], &last, 1, ascFloat64, ascRedMax, comm, s));
  while (ascStreamQuery(s) == ascErrorNotReady ||
         ascStreamQuery(t) == ascErrorNotReady) {
    CHECK(++polls < 20000, "no progress without a waiter");
    nanosleep(&nap, NULL);
  }
  for (int i = 0; i < 3; i++)
    CHECK(small[i] == (i + 1) * (double)size, "small[%d] = %g", i,
          small[i]);
  CHECK(last == 3.0 * size, "last %g", last);
  for (int i = 0; i < BIG; i++)
    CHECK(big[i] == (float)(size * (size - 1) / 2 + size * (i % 5)),
          "big[%d] = %g", i, (double)big[i]);
  OK(ascStreamSynchronize(s));
  OK(ascStreamSynchronize(t));
  OK(ascStreamDestroy(s));
  OK(ascStreamDestroy(t));
}

static void nap20ms(void *ud) {
  struct timespec t = {0, 20000000};
  (void)ud;
  nanosleep(&t, NULL);
}

/* A host thread synchronising one stream must not block in another
 * stream's small allreduce: here rank 1 enters the allreduce only after
 * a message that rank 0 sends (on a second communicator) after its
 * synchronisation returns.  A waiter that ran rank 0's allreduce would
 * deadlock. */
static void test_waiter_only_its_stream(ascComm_t comm) {
  ascComm_t c2;
  ascStream_t s1, s2;
  ascEvent_t got;
  double one = 1, sum = 0, x = 0;

  OK(ascCommInitFromMPI(&c2, MPI_COMM_WORLD));
  OK(ascStreamCreateWithFlags(&s1, ascStreamNonBlocking));
  OK(ascStreamCreateWithFlags(&s2, ascStreamNonBlocking));
  OK(ascEventCreate(&got));
  if (rank == 1) {
    OK(ascRecv(&x, 1, ascFloat64, 0, c2, s1));
    OK(ascEventRecord(got, s1));
    OK(ascStreamWaitEvent(s2, got, 0));
  }
  OK(ascAllReduce(&one, &sum, 1, ascFloat64, ascRedSum, comm, s2));
  if (rank == 0) {
    x = 42;
    OK(ascLaunchHostFunc(s1, nap20ms, NULL));
    OK(ascStreamSynchronize(s1));   /* while the allreduce is ready */
    OK(ascSend(&x, 1, ascFloat64, 1, c2, s1));
  }
  OK(ascStreamSynchronize(s2));
  OK(ascStreamSynchronize(s1));
  CHECK(sum == size, "sum %g", sum);
  if (rank == 1)
    CHECK(x == 42, "x %g", x);
  OK(ascEventDestroy(got));
  OK(ascStreamDestroy(s1));
  OK(ascStreamDestroy(s2));
  OK(ascCommDestroy(c2));
}

/* A kernel exception before a collective: the collective still runs
 * (peers would wait for it forever otherwise); the stream reports the
 * kernel's error. */
static void test_kernel_error_still_runs(ascKernel_t raise_at,
                                         ascComm_t comm) {
  int32_t x[8];
  int64_t at = rank == 0 ? 3 : 100;
  ascTensor t = tensor1(x, ascInt32, 8);
  void *ra[] = {&t, &at};
  double one = 1, sum = 0;
  ascStream_t s;

  OK(ascStreamCreate(&s));
  OK(ascLaunchKernel(raise_at, 1, ra, s));
  OK(ascAllReduce(&one, &sum, 1, ascFloat64, ascRedSum, comm, s));
  if (rank == 0)
    ERR(ascStreamSynchronize(s), ascErrorKernelException);
  else
    OK(ascStreamSynchronize(s));
  CHECK(sum == size, "sum %g", sum);
  OK(ascStreamDestroy(s));
}

static void test_misuse(ascComm_t comm) {
  double a[4] = {0}, b[4];
  ascComm_t dead;
  ascStream_t gone;
  int r;

  ERR(ascCommInitFromMPI(NULL, MPI_COMM_WORLD), ascErrorInvalidValue);
  ERR(ascCommInitFromMPI(&dead, MPI_COMM_NULL), ascErrorInvalidValue);
  ERR(ascCommRank(NULL, &r), ascErrorInvalidHandle);
  ERR(ascCommSize(comm, NULL), ascErrorInvalidValue);
  ERR(ascAllReduce(a, b, 4, ascFloat64, ascRedSum, NULL, NULL),
      ascErrorInvalidHandle);
  ERR(ascAllReduce(a, b, 4, ascDataTypeCount, ascRedSum, comm, NULL),
      ascErrorInvalidValue);
  ERR(ascAllReduce(a, b, 4, (ascDataType)-1, ascRedSum, comm, NULL),
      ascErrorInvalidValue);
  ERR(ascAllReduce(a, b, 4, ascFloat64, ascRedOpCount, comm, NULL),
      ascErrorInvalidValue);
  ERR(ascAllReduce(a, b, (size_t)INT_MAX + 1, ascFloat64, ascRedSum, comm,
                   NULL), ascErrorInvalidValue);
  CHECK(strstr(ascGetLastErrorMessage(), "INT_MAX") != NULL, "%s",
        ascGetLastErrorMessage());
  ERR(ascAllReduce(NULL, b, 4, ascFloat64, ascRedSum, comm, NULL),
      ascErrorInvalidValue);
  ERR(ascAllGather(a, NULL, 4, ascFloat64, comm, NULL), ascErrorInvalidValue);
  ERR(ascReduce(a, b, 4, ascFloat64, ascRedSum, size, comm, NULL),
      ascErrorInvalidValue);
  ERR(ascBroadcast(a, b, 4, ascFloat64, -1, comm, NULL), ascErrorInvalidValue);
  ERR(ascSend(a, 4, ascFloat64, size, comm, NULL), ascErrorInvalidValue);
  ERR(ascRecv(NULL, 4, ascFloat64, 0, comm, NULL), ascErrorInvalidValue);
  ERR(ascGroupEnd(), ascErrorNotPermitted);
  OK(ascGroupStart());
  ERR(ascGroupStart(), ascErrorNotPermitted);
  ERR(ascAllReduce(a, b, 4, ascFloat64, ascRedSum, comm, NULL),
      ascErrorNotPermitted);
  OK(ascGroupEnd());

  /* A dead stream: the operation is refused, and the position it took on
   * the communicator does not hold up the next ones. */
  OK(ascStreamCreate(&gone));
  OK(ascStreamDestroy(gone));
  ERR(ascAllReduce(a, b, 4, ascFloat64, ascRedSum, comm, gone),
      ascErrorInvalidHandle);
  a[0] = 1;
  OK(ascAllReduce(a, b, 1, ascFloat64, ascRedSum, comm, NULL));
  OK(ascStreamSynchronize(NULL));
  CHECK(b[0] == size, "b[0] %g", b[0]);

  /* A destroyed communicator. */
  OK(ascCommInitFromMPI(&dead, MPI_COMM_WORLD));
  OK(ascCommDestroy(dead));
  ERR(ascCommDestroy(dead), ascErrorInvalidHandle);
  ERR(ascCommRank(dead, &r), ascErrorInvalidHandle);
  ERR(ascAllReduce(a, b, 1, ascFloat64, ascRedSum, dead, NULL),
      ascErrorInvalidHandle);
  CHECK(strstr(ascGetLastErrorMessage(), "destroyed") != NULL, "%s",
        ascGetLastErrorMessage());
}

/* ascCommDestroy waits for the operations queued on it. */
static void test_destroy_waits(ascKernel_t sleepy) {
  ascComm_t c;
  ascStream_t s;
  int32_t us = 30000;
  void *sl[] = {&us};
  double one = 1, sum = 0;

  OK(ascCommInitFromMPI(&c, MPI_COMM_WORLD));
  OK(ascStreamCreate(&s));
  OK(ascLaunchKernel(sleepy, 1, sl, s));
  OK(ascAllReduce(&one, &sum, 1, ascFloat64, ascRedSum, c, s));
  OK(ascCommDestroy(c));
  CHECK(sum == size, "destroy returned before the allreduce: sum %g", sum);
  OK(ascStreamSynchronize(s));
  OK(ascStreamDestroy(s));
}

/* ASC_MPI_DELAY_US (read by ascCommInitFromMPI): a posted exchange
 * completes on its stream no earlier than the emulated latency after it
 * was posted, and delivers the right data; another stream's kernel runs
 * meanwhile (its result is there when the exchange completes).  Only the
 * lower bound of the time is checked: a loaded machine may be slower. */
static void test_emulated_latency(ascKernel_t affine) {
  enum { M = 1024, DELAY_US = 40000 };
  double *out = malloc(M * sizeof *out), *in = malloc(M * sizeof *in);
  int64_t *x = calloc(N, sizeof *x), zero = 0, seven = 7;
  ascTensor t = tensor1(x, ascInt64, N);
  void *set[] = {&t, &zero, &seven};
  ascComm_t c;
  ascStream_t s, k;
  struct timespec t0, t1;
  double ms;
  char us[32];
  const char *saved = getenv("ASC_MPI_DELAY_US");

  snprintf(us, sizeof us, "%d", DELAY_US);
  setenv("ASC_MPI_DELAY_US", us, 1);
  OK(ascCommInitFromMPI(&c, MPI_COMM_WORLD));
  if (saved != NULL)
    setenv("ASC_MPI_DELAY_US", saved, 1);
  else
    unsetenv("ASC_MPI_DELAY_US");
  for (int i = 0; i < M; i++) {
    out[i] = rank * 1000.0 + i;
    in[i] = -1;
  }
  OK(ascStreamCreate(&s));
  OK(ascStreamCreate(&k));
  MPI_Barrier(MPI_COMM_WORLD);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  OK(ascGroupStart());
  OK(ascSend(out, M, ascFloat64, (rank + 1) % size, c, s));
  OK(ascRecv(in, M, ascFloat64, (rank + size - 1) % size, c, s));
  OK(ascGroupEnd());
  OK(ascLaunchKernel(affine, 4, set, k));
  OK(ascStreamSynchronize(s));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  OK(ascStreamSynchronize(k));
  ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
       (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
  CHECK(ms >= DELAY_US / 1000.0, "the exchange took %.2f ms, under the "
        "emulated %d us", ms, DELAY_US);
  for (int i = 0; i < M; i++)
    CHECK(in[i] == ((rank + size - 1) % size) * 1000.0 + i, "in[%d] = %g", i,
          in[i]);
  for (int i = 0; i < N; i++)
    CHECK(x[i] == 7, "x[%d] = %lld", i, (long long)x[i]);
  OK(ascStreamDestroy(s));
  OK(ascStreamDestroy(k));
  OK(ascCommDestroy(c));
  free(out);
  free(in);
  free(x);
}

int main(int argc, char **argv) {
  ascComm_t comm;
  ascModule_t m;
  ascKernel_t affine, sleepy, raise_at;

  test_init(&argc, &argv);
  OK(ascCommInitFromMPI(&comm, MPI_COMM_WORLD));
  OK(ascCommRank(comm, &rank));
  OK(ascCommSize(comm, &size));
  OK(ascModuleLoad(&m, TEST_MODULE("testkernels")));
  OK(ascModuleGetKernel(&affine, m, "affine"));
  OK(ascModuleGetKernel(&sleepy, m, "sleepy"));
  OK(ascModuleGetKernel(&raise_at, m, "raise_at"));
  test_same_stream(affine, sleepy, comm);
  test_across_streams(affine, sleepy, comm);
  test_error_on_one_rank(comm);
  test_no_waiter(comm);
  test_waiter_only_its_stream(comm);
  test_kernel_error_still_runs(raise_at, comm);
  test_misuse(comm);
  test_destroy_waits(sleepy);
  test_emulated_latency(affine);
  OK(ascCommDestroy(comm));
  OK(ascModuleUnload(m));
  OK(ascDeviceReset());
  if (rank == 0)
    printf("test_mpi_order: %d ranks ok\n", size);
  MPI_Finalize();
  return 0;
}
