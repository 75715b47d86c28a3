/*
 * External ops (runtime/extern_op.h): the stream waits for them without
 * holding a worker, they complete from another thread, they never skip,
 * and their errors reach synchronising calls and events like kernel
 * errors.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <uv.h>

#include "runtime/extern_op.h"
#include "testutil.h"

typedef struct xprobe {
  atomic_int started;
  ascError_t status;          /* what start saw */
  asc__extern *op;            /* completed later by the test */
  int32_t seen_log0;          /* log[0] when start ran */
  int32_t *log;
  ascError_t complete_err;    /* for complete_now */
} xprobe;

static void park(void *ud, asc__extern *op, ascError_t status) {
  xprobe *p = ud;
  p->status = status;
  p->seen_log0 = p->log != NULL ? p->log[0] : 0;
  p->op = op;
  atomic_store(&p->started, 1);
}

static void complete_now(void *ud, asc__extern *op, ascError_t status) {
  xprobe *p = ud;
  p->status = status;
  atomic_fetch_add(&p->started, 1);
  asc__extern_complete(op, p->complete_err,
                       p->complete_err ? "peer said no" : NULL);
}

typedef struct completer {
  xprobe *p;
  ascError_t err;
} completer;

static void complete_later(void *arg) {
  completer *c = arg;
  struct timespec ms = {0, 200000000}; /* the host queries meanwhile */
  while (!atomic_load(&c->p->started))
    nanosleep(&ms, NULL);
  nanosleep(&ms, NULL);
  asc__extern_complete(c->p->op, c->err, c->err ? "MPI_ERR_TRUNCATE: x" : NULL);
}

/* append(1); extern; append(2): the second kernel waits for the op,
 * which another thread completes while the host is synchronising. */
static void test_orders_kernels(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ka = test_kernel(m, "append");
  int32_t log[8] = {0}, one = 1, two = 2;
  ascTensor t = test_tensor1(log, ascInt32, 8);
  void *a1[] = {&t, &one}, *a2[] = {&t, &two};
  xprobe p;
  completer c;
  uv_thread_t th;
  ascStream_t s;
  (void)state;

  memset(&p, 0, sizeof p);
  p.log = log;
  c.p = &p;
  c.err = ascSuccess;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascLaunchKernel(ka, 1, a1, s));
  ASSERT_OK(asc__stream_enqueue_extern(s, park, &p));
  ASSERT_OK(ascLaunchKernel(ka, 1, a2, s));
  assert_int_equal(uv_thread_create(&th, complete_later, &c), 0);
  assert_int_equal(ascStreamQuery(s), ascErrorNotReady);
  ASSERT_OK(ascStreamSynchronize(s));
  uv_thread_join(&th);
  assert_int_equal(p.status, ascSuccess);
  assert_int_equal(p.seen_log0, 1);   /* started after the first kernel */
  assert_int_equal(log[0], 2);
  assert_int_equal(log[1], 1);
  assert_int_equal(log[2], 2);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
}

/* An error given at completion is the stream's error, with its message;
 * a record after it carries it to another stream; the kernel after it
 * is skipped. */
static void test_error_reaches_stream_and_events(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ka = test_kernel(m, "append");
  int32_t log[8] = {0}, one = 1;
  ascTensor t = test_tensor1(log, ascInt32, 8);
  void *a1[] = {&t, &one};
  xprobe p;
  completer c;
  uv_thread_t th;
  ascStream_t s, s2;
  ascEvent_t e;
  (void)state;

  memset(&p, 0, sizeof p);
  c.p = &p;
  c.err = ascErrorInternal;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascStreamCreate(&s2));
  ASSERT_OK(ascEventCreate(&e));
  ASSERT_OK(asc__stream_enqueue_extern(s, park, &p));
  ASSERT_OK(ascLaunchKernel(ka, 1, a1, s));
  ASSERT_OK(ascEventRecord(e, s));
  ASSERT_OK(ascStreamWaitEvent(s2, e, 0));
  assert_int_equal(uv_thread_create(&th, complete_later, &c), 0);
  ASSERT_ERR(ascStreamSynchronize(s2), ascErrorInternal);
  assert_non_null(strstr(ascGetLastErrorMessage(), "MPI_ERR_TRUNCATE"));
  uv_thread_join(&th);
  assert_int_equal(log[0], 0);        /* skipped */
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorInternal);
  ASSERT_OK(ascStreamSynchronize(s));  /* reported once */
  ASSERT_OK(ascEventDestroy(e));
  ASSERT_OK(ascStreamDestroy(s2));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
}

/* An op after a failed kernel still starts, and sees the error. */
static void test_never_skipped(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t kr = test_kernel(m, "raise_at");
  int32_t x[16];
  int64_t at = 5;
  ascTensor t = test_tensor1(x, ascInt32, 16);
  void *ra[] = {&t, &at};
  xprobe p;
  ascStream_t s;
  (void)state;

  memset(&p, 0, sizeof p);
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascLaunchKernel(kr, 1, ra, s));
  ASSERT_OK(asc__stream_enqueue_extern(s, complete_now, &p));
  ASSERT_OK(asc__stream_enqueue_extern(s, complete_now, &p));
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorKernelException);
  assert_int_equal(atomic_load(&p.started), 2);
  assert_int_equal(p.status, ascErrorKernelException);
  /* Inline completion with an error, on the default stream. */
  p.complete_err = ascErrorTimeout;
  ASSERT_OK(asc__stream_enqueue_extern(NULL, complete_now, &p));
  ASSERT_ERR(ascDeviceSynchronize(), ascErrorTimeout);
  assert_non_null(strstr(ascGetLastErrorMessage(), "peer said no"));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
}

/* Bad arguments: start never runs. */
static void test_bad_arguments(void **state) {
  xprobe p;
  ascStream_t s;
  (void)state;

  memset(&p, 0, sizeof p);
  ASSERT_ERR(asc__stream_enqueue_extern(NULL, NULL, &p), ascErrorInvalidValue);
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(asc__stream_enqueue_extern(s, complete_now, &p),
             ascErrorInvalidHandle);
  assert_int_equal(atomic_load(&p.started), 0);
}

/* The wait hook: a host thread waiting in ascStreamSynchronize polls
 * the component itself; here the hook completes the parked op on its
 * third call, on the waiting thread, with nobody else to complete it. */
static xprobe *hook_probe;
static atomic_int hook_calls;
static uv_thread_t hook_thread;
static atomic_int hook_wrong_thread;

static ascStream_t hook_stream;

static int poll_hook(bool may_block, ascStream_t stream) {
  uv_thread_t self = uv_thread_self();
  /* ascStreamSynchronize(s): no deadline, a wait for s */
  if (!may_block || stream != hook_stream)
    atomic_store(&hook_wrong_thread, 1);
  if (!uv_thread_equal(&self, &hook_thread))
    atomic_store(&hook_wrong_thread, 1);
  if (hook_probe == NULL || !atomic_load(&hook_probe->started))
    return ASC__EXTERN_IDLE;
  if (atomic_fetch_add(&hook_calls, 1) + 1 < 3)
    return ASC__EXTERN_BUSY;
  asc__extern_complete(hook_probe->op, ascSuccess, NULL);
  hook_probe = NULL;
  return ASC__EXTERN_PROGRESS;
}

static void test_waiter_drives(void **state) {
  xprobe p = {0};
  ascStream_t s;
  (void)state;

  hook_thread = uv_thread_self();
  assert_int_equal(ascStreamCreate(&s), ascSuccess);
  hook_stream = s;
  hook_probe = &p;
  asc__extern_set_poll(poll_hook);
  assert_int_equal(asc__stream_enqueue_extern(s, park, &p), ascSuccess);
  assert_int_equal(ascStreamSynchronize(s), ascSuccess);
  asc__extern_set_poll(NULL);
  assert_int_equal(atomic_load(&hook_calls), 3);
  assert_int_equal(atomic_load(&hook_wrong_thread), 0);
  assert_int_equal(ascStreamDestroy(s), ascSuccess);
}

/* A transfer longer than the drive window (1 ms): while the hook says
 * the waited stream's own work is in flight (ASC__EXTERN_BUSY_STREAM),
 * the waiter goes on polling past 1 ms and completes the op itself (the
 * hook completes at its first call after 1.5 ms), instead of parking
 * until another thread (the backup here, at 300 ms) completes it.  With
 * plain ASC__EXTERN_BUSY the hook never completes: the waiter must stop
 * calling it after about 1 ms, long before the backup. */
static xprobe *long_probe;
static atomic_int long_done;      /* 1: the hook completed, 2: the backup */
static uint64_t long_t0, long_last;
static int long_busy;             /* what the hook says meanwhile */

static int long_hook(bool may_block, ascStream_t stream) {
  uint64_t now = uv_hrtime();
  int expect = 0;
  (void)may_block;
  (void)stream;
  if (long_probe == NULL || !atomic_load(&long_probe->started) ||
      atomic_load(&long_done) != 0)
    return ASC__EXTERN_IDLE;
  if (long_t0 == 0)
    long_t0 = now;
  long_last = now;
  if (long_busy == ASC__EXTERN_BUSY || now - long_t0 < 1500000u)
    return long_busy;
  if (!atomic_compare_exchange_strong(&long_done, &expect, 1))
    return ASC__EXTERN_IDLE;
  asc__extern_complete(long_probe->op, ascSuccess, NULL);
  return ASC__EXTERN_PROGRESS;
}

static void long_backup(void *arg) {
  xprobe *p = arg;
  int expect = 0;
  for (int i = 0; i < 30 && atomic_load(&long_done) == 0; i++) {
    struct timespec ms = {0, 10000000};
    nanosleep(&ms, NULL);
  }
  if (atomic_compare_exchange_strong(&long_done, &expect, 2))
    asc__extern_complete(p->op, ascSuccess, NULL);
}

static int run_long(int busy) {
  xprobe p = {0};
  ascStream_t s;
  uv_thread_t backup;

  long_probe = &p;
  long_busy = busy;
  long_t0 = long_last = 0;
  atomic_store(&long_done, 0);
  assert_int_equal(ascStreamCreate(&s), ascSuccess);
  asc__extern_set_poll(long_hook);
  assert_int_equal(asc__stream_enqueue_extern(s, park, &p), ascSuccess);
  assert_int_equal(uv_thread_create(&backup, long_backup, &p), 0);
  assert_int_equal(ascStreamSynchronize(s), ascSuccess);
  assert_int_equal(uv_thread_join(&backup), 0);
  asc__extern_set_poll(NULL);
  long_probe = NULL;
  assert_int_equal(ascStreamDestroy(s), ascSuccess);
  return atomic_load(&long_done);
}

static void test_waiter_drives_own_stream_longer(void **state) {
  (void)state;
  /* The stream's own work in flight: the waiter completes it. */
  assert_int_equal(run_long(ASC__EXTERN_BUSY_STREAM), 1);
  /* Other work in flight: the waiter stops polling after about 1 ms
   * (100 ms leaves room for a loaded machine), and the backup completes
   * the op at 300 ms. */
  assert_int_equal(run_long(ASC__EXTERN_BUSY), 2);
  assert_true(long_last - long_t0 < 100000000u);
}

/* Counts its starts and checks that start n saw the kernels queued
 * before it: (n + 99) / 100 of them (test_fast_path_boundaries). */
typedef struct orderprobe {
  atomic_int n;
  atomic_int misordered;
  const int32_t *log;
} orderprobe;

static void count_in_order(void *ud, asc__extern *op, ascError_t status) {
  orderprobe *p = ud;
  int n = atomic_fetch_add(&p->n, 1);
  if (status != ascSuccess || p->log[0] != (n + 99) / 100)
    atomic_fetch_add(&p->misordered, 1);
  asc__extern_complete(op, ascSuccess, NULL);
}

/* The enqueue's fast path (an idle stream, the spare record) and where
 * it must give way to the general one: an op on a blocking stream still
 * waits for the legacy default stream's earlier work, one on a
 * non-blocking stream does not; ops queued one at a time, reusing the
 * spare record, each start once, in order with kernels. */
static void test_fast_path_boundaries(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ka = test_kernel(m, "append");
  int32_t log[8] = {0}, one = 1;
  ascTensor t = test_tensor1(log, ascInt32, 8);
  void *a1[] = {&t, &one};
  xprobe held, after_default, free_running;
  orderprobe each;
  ascStream_t blocking, nonblocking;
  (void)state;

  memset(&held, 0, sizeof held);
  memset(&after_default, 0, sizeof after_default);
  memset(&free_running, 0, sizeof free_running);
  memset(&each, 0, sizeof each);
  each.log = log;
  ASSERT_OK(ascStreamCreate(&blocking));
  ASSERT_OK(ascStreamCreateWithFlags(&nonblocking, ascStreamNonBlocking));
  /* One op each first: its completion leaves the stream a spare record,
   * which the fast path needs. */
  ASSERT_OK(asc__stream_enqueue_extern(blocking, complete_now, &free_running));
  ASSERT_OK(asc__stream_enqueue_extern(nonblocking, complete_now,
                                       &free_running));
  ASSERT_OK(ascStreamSynchronize(blocking));
  ASSERT_OK(ascStreamSynchronize(nonblocking));
  assert_int_equal(atomic_load(&free_running.started), 2);
  ASSERT_OK(asc__stream_enqueue_extern(NULL, park, &held));
  assert_int_equal(atomic_load(&held.started), 1);
  ASSERT_OK(asc__stream_enqueue_extern(blocking, complete_now,
                                       &after_default));
  ASSERT_OK(asc__stream_enqueue_extern(nonblocking, complete_now,
                                       &free_running));
  /* Read first, asserted once the default stream is released (a failed
   * assertion with it held would hang the teardown's synchronisation). */
  int ran = atomic_load(&free_running.started);
  int early = atomic_load(&after_default.started);
  asc__extern_complete(held.op, ascSuccess, NULL);
  assert_int_equal(ran, 3);
  assert_int_equal(early, 0);
  ASSERT_OK(ascStreamSynchronize(blocking));
  assert_int_equal(atomic_load(&after_default.started), 1);

  for (int i = 0; i < 1000; i++) {
    ASSERT_OK(asc__stream_enqueue_extern(nonblocking, count_in_order, &each));
    if (i % 100 == 0)
      ASSERT_OK(ascLaunchKernel(ka, 1, a1, nonblocking));
    if (i % 3 == 0)
      ASSERT_OK(ascStreamSynchronize(nonblocking));
  }
  ASSERT_OK(ascStreamSynchronize(nonblocking));
  assert_int_equal(atomic_load(&each.n), 1000);
  assert_int_equal(atomic_load(&each.misordered), 0);
  assert_int_equal(log[0], 10);
  for (int i = 1; i < 8; i++)
    assert_int_equal(log[i], 1);
  ASSERT_OK(ascStreamDestroy(nonblocking));
  ASSERT_OK(ascStreamDestroy(blocking));
  ASSERT_OK(ascModuleUnload(m));
}

/* The cancel hook (extern_op.h): ascStreamCancel of a stream whose head
 * is an external op calls it with the stream's handle, after the
 * stream's error is set; the component gives the op up (completes it)
 * and the waiting thread gets control back.  ascDeviceReset calls it for
 * every stream, so an op that never completes no longer holds the reset. */
static xprobe *cancel_probe;
static _Atomic(ascStream_t) cancel_seen;
static atomic_int cancel_calls, cancel_every_calls;

static void cancel_give_up(ascStream_t stream, bool every) {
  asc__extern *op = cancel_probe != NULL ? cancel_probe->op : NULL;
  atomic_store(&cancel_seen, stream);
  atomic_fetch_add(every ? &cancel_every_calls : &cancel_calls, 1);
  if (op != NULL && (every || stream != NULL)) {
    cancel_probe->op = NULL;
    asc__extern_complete(op, ascErrorCommunication, "given up");
  }
}

static void cancel_later(void *arg) {
  struct timespec ms = {0, 100000000};
  nanosleep(&ms, NULL);
  (void)ascStreamCancel(arg);
}

static void test_cancel_hook(void **state) {
  xprobe p;
  ascStream_t s;
  uv_thread_t th;
  (void)state;

  memset(&p, 0, sizeof p);
  cancel_probe = &p;
  asc__extern_set_cancel(cancel_give_up);
  ASSERT_OK(ascStreamCreate(&s));
  /* Nothing external at the head: the hook is not called. */
  ASSERT_OK(ascStreamCancel(s));
  assert_int_equal(atomic_load(&cancel_calls), 0);
  ASSERT_OK(asc__stream_enqueue_extern(s, park, &p));
  assert_int_equal(uv_thread_create(&th, cancel_later, s), 0);
  /* Before the hook, this waited forever: nothing completes the op. */
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorCancelled);
  assert_non_null(strstr(ascGetLastErrorMessage(), "ascStreamCancel"));
  uv_thread_join(&th);
  assert_int_equal(atomic_load(&cancel_calls), 1);
  assert_ptr_equal(atomic_load(&cancel_seen), s);
  ASSERT_OK(ascStreamSynchronize(s));   /* works again */

  /* A device reset gives up the op of any stream. */
  atomic_store(&p.started, 0);
  ASSERT_OK(asc__stream_enqueue_extern(NULL, park, &p));
  assert_int_equal(atomic_load(&p.started), 1);
  ASSERT_OK(ascDeviceReset());
  assert_int_equal(atomic_load(&cancel_every_calls), 1);
  assert_null(p.op);
  asc__extern_set_cancel(NULL);
  cancel_probe = NULL;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_fast_path_boundaries, test_teardown),
      cmocka_unit_test_teardown(test_orders_kernels, test_teardown),
      cmocka_unit_test_teardown(test_cancel_hook, test_teardown),
      cmocka_unit_test_teardown(test_error_reaches_stream_and_events,
                                test_teardown),
      cmocka_unit_test_teardown(test_never_skipped, test_teardown),
      cmocka_unit_test_teardown(test_bad_arguments, test_teardown),
      cmocka_unit_test_teardown(test_waiter_drives, test_teardown),
      cmocka_unit_test_teardown(test_waiter_drives_own_stream_longer,
                                test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
