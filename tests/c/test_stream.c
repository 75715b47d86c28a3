/*
 * Streams: creation, flags and priorities, ordering within and across
 * streams (events, the legacy default stream), destroy with queued work,
 * concurrent host threads, and every entry point with NULL, invalid and
 * destroyed handles.
 */
#include <signal.h>
#include <stdlib.h>
#include <uv.h>

#include "runtime/stream.h"
#include "subproc.h"
#include "testutil.h"

static void test_create_destroy(void **state) {
  ascStream_t s, s2;
  int least = 99, greatest = 99;
  (void)state;
  ASSERT_ERR(ascStreamCreate(NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascStreamCreateWithFlags(NULL, 0), ascErrorInvalidValue);
  ASSERT_ERR(ascStreamCreateWithFlags(&s, 0x100), ascErrorInvalidValue);
  ASSERT_ERR(ascStreamCreateWithPriority(NULL, 0, 0), ascErrorInvalidValue);
  ASSERT_OK(ascDeviceGetStreamPriorityRange(&least, &greatest));
  assert_int_equal(least, 0);
  assert_true(greatest < least);
  ASSERT_OK(ascDeviceGetStreamPriorityRange(NULL, NULL));
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascStreamCreateWithPriority(&s2, ascStreamNonBlocking, -100));
  ASSERT_OK(ascStreamQuery(s));
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascStreamSynchronize(NULL));
  ASSERT_OK(ascStreamQuery(NULL));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascStreamDestroy(s2));
  /* destroyed handles */
  ASSERT_ERR(ascStreamDestroy(s), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamQuery(s), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamDestroy(NULL), ascErrorInvalidHandle);
}

static void test_invalid_handles(void **state) {
  ascEvent_t e;
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascEventCreate(&e));
  s = (ascStream_t)(void *)e;   /* an event is not a stream */
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamQuery(s), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamDestroy(s), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamWaitEvent(s, e, 0), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventRecord(e, s), ascErrorInvalidHandle);
  ASSERT_ERR(ascLaunchHostFunc(s, (ascHostFn_t)free, NULL),
             ascErrorInvalidHandle);
  ASSERT_ERR(ascMemsetAsync(&e, 0, 1, s), ascErrorInvalidHandle);
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_ERR(ascStreamWaitEvent(s, NULL, 0), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamWaitEvent(s, e, 1), ascErrorInvalidValue);
  ASSERT_OK(ascStreamWaitEvent(s, e, 0));   /* never recorded: no-op */
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascStreamWaitEvent(s, e, 0), ascErrorInvalidHandle);
  ASSERT_OK(ascEventDestroy(e));
}

static int ncores(void) {
  ascDeviceProp p;
  ASSERT_OK(ascGetDeviceProperties(&p, 0));
  return p.cores;
}

/* A chain of affine updates spread over N streams, ordered by events:
 * the result equals the sequential fold exactly. */
static void test_event_chain_across_streams(void **state) {
  enum { NS = 4, M = 200, LEN = 513 };
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "affine");
  ascStream_t s[NS];
  ascEvent_t ev[NS];
  int64_t x[LEN], want = 0, mul[M], add[M];
  ascTensor tx = test_tensor1(x, ascInt64, LEN);
  (void)state;
  for (int i = 0; i < NS; i++) {
    ASSERT_OK(ascStreamCreateWithPriority(&s[i], ascStreamNonBlocking,
                                          -(i % 3)));
    ASSERT_OK(ascEventCreateWithFlags(&ev[i], ascEventDisableTiming));
  }
  memset(x, 0, sizeof x);
  for (int j = 0; j < M; j++) {
    int cur = j % NS, prev = (j + NS - 1) % NS;
    void *args[] = {&tx, &mul[j], &add[j]};
    mul[j] = j % 3 == 0 ? -1 : 1;   /* order matters, values stay small */
    add[j] = j;
    want = want * mul[j] + add[j];
    if (j > 0)
      ASSERT_OK(ascStreamWaitEvent(s[cur], ev[prev], 0));
    ASSERT_OK(ascLaunchKernel(k, (uint32_t)(1 + j % 3), args, s[cur]));
    ASSERT_OK(ascEventRecord(ev[cur], s[cur]));
  }
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i < LEN; i++)
    assert_int_equal(x[i], want);
  for (int i = 0; i < NS; i++) {
    ASSERT_OK(ascStreamDestroy(s[i]));
    ASSERT_OK(ascEventDestroy(ev[i]));
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* N independent streams with M in-order launches each. */
static void test_independent_streams(void **state) {
  enum { NS = 6, M = 300 };
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "append");
  ascStream_t s[NS];
  int32_t log[NS][M + 1];
  (void)state;
  memset(log, 0, sizeof log);
  for (int i = 0; i < NS; i++)
    ASSERT_OK(ascStreamCreate(&s[i]));
  for (int j = 0; j < M; j++)
    for (int i = 0; i < NS; i++) {
      ascTensor t = test_tensor1(log[i], ascInt32, M + 1);
      int32_t v = j * 10 + i;
      void *args[] = {&t, &v};
      ASSERT_OK(ascLaunchKernel(k, 1, args, s[i]));
    }
  for (int i = 0; i < NS; i++) {
    ASSERT_OK(ascStreamSynchronize(s[i]));
    assert_int_equal(log[i][0], M);
    for (int j = 0; j < M; j++)
      assert_int_equal(log[i][1 + j], j * 10 + i);
    ASSERT_OK(ascStreamDestroy(s[i]));
  }
  ASSERT_OK(ascModuleUnload(m));
}

static void test_destroy_while_busy(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy"), ka = test_kernel(m, "append");
  int32_t log[4] = {0}, us = 20000, v = 5;
  ascTensor t = test_tensor1(log, ascInt32, 4);
  void *sargs[] = {&us}, *aargs[] = {&t, &v};
  (void)state;
  for (int rep = 0; rep < 5; rep++) {
    ascStream_t s;
    log[0] = 0;
    ASSERT_OK(ascStreamCreate(&s));
    ASSERT_OK(ascLaunchKernel(ks, 3, sargs, s));
    ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s));
    ASSERT_OK(ascStreamDestroy(s));   /* work completes, then released */
    ASSERT_ERR(ascLaunchKernel(ka, 1, aargs, s), ascErrorInvalidHandle);
    ASSERT_OK(ascDeviceSynchronize());
    assert_int_equal(log[0], 1);
    assert_int_equal(log[1], 5);
  }
  ASSERT_OK(ascModuleUnload(m));
}

typedef struct thread_arg {
  ascKernel_t k;
  int64_t x[64];
  int n;
  int failures;
} thread_arg;

static void launcher(void *p) {
  thread_arg *a = p;
  ascStream_t s;
  ascTensor t = test_tensor1(a->x, ascInt64, 64);
  int64_t mul = 1, add = 1;
  void *args[] = {&t, &mul, &add};
  if (ascStreamCreate(&s) != ascSuccess) {
    a->failures++;
    return;
  }
  for (int i = 0; i < a->n; i++)
    if (ascLaunchKernel(a->k, 1 + (uint32_t)(i % 2), args, s) != ascSuccess)
      a->failures++;
  if (ascStreamSynchronize(s) != ascSuccess)
    a->failures++;
  if (ascStreamDestroy(s) != ascSuccess)
    a->failures++;
}

static void test_four_host_threads(void **state) {
  ascModule_t m = test_load_kernels();
  thread_arg args[4];
  uv_thread_t th[4];
  (void)state;
  for (int i = 0; i < 4; i++) {
    memset(&args[i], 0, sizeof args[i]);
    args[i].k = test_kernel(m, "affine");
    args[i].n = TEST_SCALE(5000);
    assert_int_equal(uv_thread_create(&th[i], launcher, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    uv_thread_join(&th[i]);
    assert_int_equal(args[i].failures, 0);
    for (int j = 0; j < 64; j++)
      assert_int_equal(args[i].x[j], args[i].n);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* The legacy default stream: work on NULL waits for blocking streams and
 * blocking streams wait for NULL; non-blocking streams wait for nobody. */
static void test_default_stream_semantics(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy"), ka = test_kernel(m, "append");
  int32_t log[8], us = 30000, v1 = 1, v2 = 2;
  ascTensor t = test_tensor1(log, ascInt32, 8);
  void *sargs[] = {&us}, *a1[] = {&t, &v1}, *a2[] = {&t, &v2};
  ascStream_t b, nb;
  (void)state;
  ASSERT_OK(ascStreamCreate(&b));
  ASSERT_OK(ascStreamCreateWithFlags(&nb, ascStreamNonBlocking));

  memset(log, 0, sizeof log);
  ASSERT_OK(ascLaunchKernel(ks, 1, sargs, b));
  ASSERT_OK(ascLaunchKernel(ka, 1, a1, b));
  ASSERT_OK(ascLaunchKernel(ka, 1, a2, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(log[0], 2);
  assert_int_equal(log[1], 1);
  assert_int_equal(log[2], 2);

  memset(log, 0, sizeof log);
  ASSERT_OK(ascLaunchKernel(ks, 1, sargs, NULL));
  ASSERT_OK(ascLaunchKernel(ka, 1, a1, NULL));
  ASSERT_OK(ascLaunchKernel(ka, 1, a2, b));
  ASSERT_OK(ascStreamSynchronize(b));
  assert_int_equal(log[0], 2);
  assert_int_equal(log[1], 1);
  assert_int_equal(log[2], 2);

  /* the synchronous-copy hook waits for NULL and blocking streams */
  {
    int32_t us2 = 20000;
    void *s2[] = {&us2};
    memset(log, 0, sizeof log);
    ASSERT_OK(ascLaunchKernel(ks, 1, s2, b));
    ASSERT_OK(ascLaunchKernel(ka, 1, a1, b));
    ASSERT_OK(ascStreamQuery(nb));
    {
      asc__device *dev;
      ASSERT_OK(asc__current_device(&dev));
      ASSERT_OK(asc__default_stream_wait(dev));
    }
    assert_int_equal(log[0], 1);
  }

  /* a non-blocking stream runs past a busy default stream (given a
   * second worker to run on) */
  if (ncores() >= 2) {
    int32_t flag = 0, nlog[4] = {0};
    ascTensor nt = test_tensor1(nlog, ascInt32, 4),
              ft = test_tensor1(&flag, ascInt32, 1);
    void *g[] = {&ft}, *a3[] = {&nt, &v1};
    ASSERT_OK(ascLaunchKernel(test_kernel(m, "gate"), 1, g, NULL));
    ASSERT_OK(ascLaunchKernel(ka, 1, a3, nb));
    ASSERT_OK(ascStreamSynchronize(nb));   /* would hang if nb waited */
    assert_int_equal(nlog[0], 1);
    ASSERT_ERR(ascStreamQuery(NULL), ascErrorNotReady);
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    ASSERT_OK(ascDeviceSynchronize());
  }
  ASSERT_OK(ascStreamDestroy(b));
  ASSERT_OK(ascStreamDestroy(nb));
  ASSERT_OK(ascModuleUnload(m));
}

/* The default stream skips its look at the blocking streams while none
 * lives: a destroyed blocking stream with queued work still counts until
 * that work has run, and one created later counts at once. */
static void test_default_stream_after_destroy(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy"), ka = test_kernel(m, "append");
  int32_t log[8], us = 30000, v1 = 1, v2 = 2;
  ascTensor t = test_tensor1(log, ascInt32, 8);
  void *sargs[] = {&us}, *a1[] = {&t, &v1}, *a2[] = {&t, &v2};
  ascStream_t b;
  (void)state;

  for (int round = 0; round < 2; round++) {
    memset(log, 0, sizeof log);
    ASSERT_OK(ascStreamCreate(&b));
    ASSERT_OK(ascLaunchKernel(ks, 1, sargs, b));
    ASSERT_OK(ascLaunchKernel(ka, 1, a1, b));
    ASSERT_OK(ascStreamDestroy(b));   /* its work still queued */
    ASSERT_OK(ascLaunchKernel(ka, 1, a2, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    assert_int_equal(log[0], 2);
    assert_int_equal(log[1], 1);
    assert_int_equal(log[2], 2);
    /* b drained and left: the default stream runs alone again */
    ASSERT_OK(ascLaunchKernel(ka, 1, a2, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    assert_int_equal(log[0], 3);
  }
  ASSERT_OK(ascModuleUnload(m));
}

static void test_query_and_reset(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy");
  int32_t us = 200000;
  void *sargs[] = {&us};
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascLaunchKernel(ks, 1, sargs, s));
  ASSERT_ERR(ascStreamQuery(s), ascErrorNotReady);
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascStreamQuery(s));
  /* reset with work queued: waits, then everything is gone */
  ASSERT_OK(ascLaunchKernel(ks, 4, sargs, s));
  ASSERT_OK(ascDeviceReset());
  ASSERT_ERR(ascStreamQuery(s), ascErrorInvalidHandle);
  ASSERT_ERR(ascModuleUnload(m), ascErrorInvalidHandle);
  /* and the device works again */
  m = test_load_kernels();
  ks = test_kernel(m, "sleepy");
  us = 1;
  ASSERT_OK(ascLaunchKernel(ks, 4, sargs, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascModuleUnload(m));
}

typedef struct cb_probe {
  int32_t *log;
  int calls;
  int32_t seen[8];
  ascError_t status[8];
  uv_mutex_t lock;   /* taken inside the callback, as a pool would */
} cb_probe;

static void order_cb(void *ud, ascError_t status) {
  cb_probe *p = ud;
  uv_mutex_lock(&p->lock);
  if (p->calls < 8) {
    p->seen[p->calls] = p->log[0];
    p->status[p->calls] = status;
  }
  p->calls++;
  uv_mutex_unlock(&p->lock);
}

/* The internal stream-ordered callback (the hook for ascFreeAsync): in
 * order, never skipped, told the stream's error status. */
static void test_internal_callbacks(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ka = test_kernel(m, "append"), kr = test_kernel(m, "raise_block");
  int32_t log[8] = {0}, v = 1, kind = 2;
  int64_t mask = 1;
  ascTensor t = test_tensor1(log, ascInt32, 8);
  void *aargs[] = {&t, &v}, *rargs[] = {&kind, &mask};
  asc__stream *st;
  ascStream_t s;
  cb_probe p;
  (void)state;
  memset(&p, 0, sizeof p);
  p.log = log;
  assert_int_equal(uv_mutex_init(&p.lock), 0);
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(asc__stream_resolve(s, &st));
  ASSERT_OK(asc__stream_enqueue_callback(st, order_cb, &p));
  ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s));
  ASSERT_OK(asc__stream_enqueue_callback(st, order_cb, &p));
  ASSERT_OK(ascLaunchKernel(kr, 1, rargs, s));
  ASSERT_OK(asc__stream_enqueue_callback(st, order_cb, &p));
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorKernelException);
  assert_int_equal(p.calls, 3);
  assert_int_equal(p.seen[0], 0);
  assert_int_equal(p.seen[1], 1);
  assert_int_equal(p.status[1], ascSuccess);
  assert_int_equal(p.status[2], ascErrorKernelException);
  for (int i = 0; i < 2000; i++)
    ASSERT_OK(asc__stream_enqueue_callback(st, order_cb, &p));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(p.calls, 2003);
  ASSERT_OK(ascStreamDestroy(s));
  uv_mutex_destroy(&p.lock);
  ASSERT_OK(ascModuleUnload(m));
}

/* Threads that use streams, events, stream-ordered pool memory and
 * synchronous copies while the main thread resets the device: every
 * call either works or fails with an error (the reset refused it, the
 * handle died, its work was cancelled); none touches memory the reset
 * freed (the worker pool, the pools' blocks: checked under ASan and
 * TSan).  Copies go between the threads' own host buffers: a pool
 * block may be freed by a reset at any moment, and writing to it after
 * that would be the program's own use after free. */
enum { RESET_RACERS = 3, RESET_BYTES = 1 << 16 };

typedef struct reset_racer {
  atomic_int *stop;
  int id;
  int calls, ok, bad;
  char why[160];
  char buf[2][RESET_BYTES];
} reset_racer;

/* Counts r's call that returned e: an error a reset may cause is fine. */
static void racer_note(reset_racer *r, const char *call, ascError_t e) {
  r->calls++;
  switch (e) {
  case ascSuccess:
    r->ok++;
    return;
  case ascErrorNotPermitted:   /* the reset was running */
  case ascErrorInvalidHandle:  /* the reset destroyed the handle */
  case ascErrorCancelled:      /* the reset stopped the queued work */
  case ascErrorNotReady:       /* ascStreamQuery */
  case ascErrorInvalidValue:   /* ascFreeAsync of a block the reset freed */
    return;
  default:
    if (r->bad++ == 0)
      snprintf(r->why, sizeof r->why, "%s -> %s: %s", call,
               ascGetErrorName(e), ascGetLastErrorMessage());
  }
}

#define RACE(r, call) racer_note((r), #call, (call))

static void reset_racer_main(void *arg) {
  reset_racer *r = arg;

  while (!atomic_load(r->stop)) {
    ascStream_t s = NULL, mine = NULL;
    ascEvent_t e = NULL;
    void *p = NULL, *q = NULL;

    if (r->id != 0) {
      RACE(r, ascStreamCreate(&mine));
      s = mine;
    }
    RACE(r, ascEventCreate(&e));
    RACE(r, ascMallocAsync(&p, RESET_BYTES, s));
    RACE(r, ascMemsetAsync(r->buf[0], r->id, RESET_BYTES, s));
    RACE(r, ascEventRecord(e, s));
    /* Freed with the memset still queued: an allocation of its size on
     * another stream takes it with an internal dependency (the pools
     * lock dropped while the wait is queued). */
    if (p != NULL)
      RACE(r, ascFreeAsync(p, s));
    RACE(r, ascMallocAsync(&q, RESET_BYTES, NULL));
    RACE(r, ascMemcpyAsync(r->buf[1], r->buf[0], RESET_BYTES,
                           ascMemcpyDefault, NULL));
    if (q != NULL)
      RACE(r, ascFreeAsync(q, NULL));
    RACE(r, ascStreamWaitEvent(NULL, e, 0));
    RACE(r, ascEventSynchronize(e));
    RACE(r, ascEventQuery(e));
    RACE(r, ascStreamQuery(s));
    RACE(r, ascStreamSynchronize(s));
    RACE(r, ascMemset(r->buf[1], r->id, RESET_BYTES));
    if (r->id == 0)
      RACE(r, ascDeviceSynchronize());
    RACE(r, ascEventDestroy(e));
    if (mine != NULL)
      RACE(r, ascStreamDestroy(mine));
  }
}

static void test_reset_races_stream_calls(void **state) {
  static reset_racer r[RESET_RACERS];
  atomic_int stop = 0;
  uv_thread_t th[RESET_RACERS];
  uint64_t t0 = uv_hrtime();
  int rounds = 0, ok = 0, calls = 0;
  (void)state;
  memset(r, 0, sizeof r);
  for (int i = 0; i < RESET_RACERS; i++) {
    r[i].stop = &stop;
    r[i].id = i;
    assert_int_equal(uv_thread_create(&th[i], reset_racer_main, &r[i]), 0);
  }
  /* Bounded: at most 3 seconds whatever the machine. */
  while (rounds < 100 && uv_hrtime() - t0 < 3000000000u) {
    struct timespec pause = {0, 200000L * (rounds % 8)};
    nanosleep(&pause, NULL);
    ASSERT_OK(ascDeviceReset());
    rounds++;
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < RESET_RACERS; i++) {
    uv_thread_join(&th[i]);
    if (r[i].bad > 0)
      fail_msg("thread %d: %d unexpected errors, first %s", i, r[i].bad,
               r[i].why);
    ok += r[i].ok;
    calls += r[i].calls;
  }
  print_message("%d resets, %d calls, %d succeeded\n", rounds, calls, ok);
  assert_true(ok > 0);
}

/* fork() while a kernel runs on a blocking stream (run in a child
 * process of the test, which forks: see test_fork_while_kernel_runs).
 * The forked process prints its own lines on the same stdout. */
static int child_fork(void) {
  ascModule_t m = NULL;
  ascKernel_t kg = NULL, ka = NULL;
  static int32_t flag[1];
  int64_t x[64], mul = 2, add = 1;
  ascTensor tf = test_tensor1(flag, ascInt32, 1);
  ascTensor tx = test_tensor1(x, ascInt64, 64);
  void *gargs[] = {&tf}, *aargs[] = {&tx, &mul, &add};
  ascStream_t s = NULL;
  struct timespec pause = {0, 20000000};
  pid_t pid;

  if (ascModuleLoad(&m, TEST_MODULE("testkernels")) != ascSuccess ||
      ascModuleGetKernel(&kg, m, "gate") != ascSuccess ||
      ascModuleGetKernel(&ka, m, "affine") != ascSuccess ||
      ascStreamCreate(&s) != ascSuccess ||
      ascLaunchKernel(kg, 1, gargs, s) != ascSuccess)
    return 2;
  nanosleep(&pause, NULL);   /* the gate kernel is running by now */
  printf("before=%s\n", ascGetErrorName(ascStreamQuery(s)));
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    /* The forked child: the default stream (legacy: it waits for the
     * blocking stream s), then s itself, then the whole device. */
    int bad = 0;
    for (int i = 0; i < 64; i++)
      x[i] = i;
    printf("c_launch=%s\n",
           ascGetErrorName(ascLaunchKernel(ka, 1, aargs, NULL)));
    printf("c_sync_default=%s\n",
           ascGetErrorName(ascStreamSynchronize(NULL)));
    for (int i = 0; i < 64; i++)
      bad += x[i] != 2 * i + 1;
    printf("c_wrong=%d\n", bad);
    /* The gate kernel does not run in the child: s reports it once. */
    printf("c_sync_s=%s\n", ascGetErrorName(ascStreamSynchronize(s)));
    printf("c_relaunch_s=%s\n",
           ascGetErrorName(ascLaunchKernel(ka, 1, aargs, s)));
    printf("c_resync_s=%s\n", ascGetErrorName(ascStreamSynchronize(s)));
    printf("c_device_sync=%s\n", ascGetErrorName(ascDeviceSynchronize()));
    printf("c_unload=%s\n", ascGetErrorName(ascModuleUnload(m)));
    fflush(stdout);
    _exit(0);
  }
  if (pid < 0)
    return 3;
  subproc_wait_forked(pid);
  __atomic_store_n(&flag[0], 1, __ATOMIC_RELEASE);
  printf("parent_sync=%s\n", ascGetErrorName(ascStreamSynchronize(s)));
  printf("parent_unload=%s\n", ascGetErrorName(ascModuleUnload(m)));
  return 0;
}

/* The child of a fork() made while a kernel ran gets a working runtime:
 * the work it inherited is reported cancelled once, on its stream; new
 * work runs.  The parent is unaffected.  (subproc_run_forking: the TSan
 * options of a forking process.) */
static void test_fork_while_kernel_runs(void **state) {
  char out[SUBPROC_OUT_MAX], buf[64];
  (void)state;
  assert_int_equal(subproc_run_forking("fork", out, sizeof out), 0);
  print_message("%s", out);
  assert_string_equal(subproc_get(out, "before", buf, sizeof buf),
                      "ascErrorNotReady");
  assert_string_equal(subproc_get(out, "child", buf, sizeof buf), "0");
  assert_string_equal(subproc_get(out, "c_launch", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "c_sync_default", buf, sizeof buf),
                      "ascSuccess");
  assert_int_equal(subproc_get_ll(out, "c_wrong"), 0);
  assert_string_equal(subproc_get(out, "c_sync_s", buf, sizeof buf),
                      "ascErrorCancelled");
  assert_string_equal(subproc_get(out, "c_relaunch_s", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "c_resync_s", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "c_device_sync", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "c_unload", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "parent_sync", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "parent_unload", buf, sizeof buf),
                      "ascSuccess");
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_create_destroy, test_teardown),
      cmocka_unit_test_teardown(test_invalid_handles, test_teardown),
      cmocka_unit_test_teardown(test_event_chain_across_streams,
                                test_teardown),
      cmocka_unit_test_teardown(test_independent_streams, test_teardown),
      cmocka_unit_test_teardown(test_destroy_while_busy, test_teardown),
      cmocka_unit_test_teardown(test_four_host_threads, test_teardown),
      cmocka_unit_test_teardown(test_default_stream_semantics,
                                test_teardown),
      cmocka_unit_test_teardown(test_default_stream_after_destroy,
                                test_teardown),
      cmocka_unit_test_teardown(test_query_and_reset, test_teardown),
      cmocka_unit_test_teardown(test_internal_callbacks, test_teardown),
      cmocka_unit_test_teardown(test_reset_races_stream_calls,
                                test_teardown),
      cmocka_unit_test_teardown(test_fork_while_kernel_runs, test_teardown),
  };
  if (argc >= 3 && strcmp(argv[1], "--child") == 0)
    return strcmp(argv[2], "fork") == 0 ? child_fork() : 2;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
