/*
 * Host functions: stream order, the thread they run on, blocking calls
 * refused inside them, skipping after an error, invalid arguments.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <uv.h>

#include "runtime/scheduler.h"
#include "testutil.h"

typedef struct probe {
  int32_t *log;
  int32_t seen_log0;
  uv_thread_t main_thread;
  int on_main, on_worker;
  ascStream_t stream;
  ascEvent_t event;
  ascError_t sync_stream, sync_event, sync_device, reset, chained;
  atomic_int count;
  int order[64];
} probe;

static void record_state(void *ud) {
  probe *p = ud;
  uv_thread_t self = uv_thread_self();
  p->seen_log0 = p->log[0];
  p->on_main = uv_thread_equal(&self, &p->main_thread);
  p->on_worker = asc__on_worker();
}

static void count_cb(void *ud) {
  probe *p = ud;
  int n = atomic_fetch_add(&p->count, 1);
  if (n < 64)
    p->order[n] = n;
}

static void try_blocking(void *ud) {
  probe *p = ud;
  p->sync_stream = ascStreamSynchronize(p->stream);
  p->sync_event = ascEventSynchronize(p->event);
  p->sync_device = ascDeviceSynchronize();
  p->reset = ascDeviceReset();
  /* non-blocking calls are fine */
  p->chained = ascLaunchHostFunc(p->stream, count_cb, p);
}

static void test_order_and_thread(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ka = test_kernel(m, "append"), ks = test_kernel(m, "sleepy");
  int32_t log[8] = {0}, v = 3, us = 10000;
  ascTensor t = test_tensor1(log, ascInt32, 8);
  void *aargs[] = {&t, &v}, *sargs[] = {&us};
  probe p;
  ascStream_t s;
  (void)state;
  memset(&p, 0, sizeof p);
  p.log = log;
  p.main_thread = uv_thread_self();
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascLaunchKernel(ks, 1, sargs, s));
  ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s));
  ASSERT_OK(ascLaunchHostFunc(s, record_state, &p));
  for (int i = 0; i < 50; i++)
    ASSERT_OK(ascLaunchHostFunc(s, count_cb, &p));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(p.seen_log0, 1);   /* ran after the kernel */
  assert_int_equal(p.on_main, 0);
  assert_int_equal(p.on_worker, 0);
  assert_int_equal(atomic_load(&p.count), 50);
  for (int i = 0; i < 50; i++)
    assert_int_equal(p.order[i], i);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
}

static void test_blocking_calls_refused(void **state) {
  probe p;
  ascStream_t s;
  (void)state;
  memset(&p, 0, sizeof p);
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascEventCreate(&p.event));
  p.stream = s;
  ASSERT_OK(ascLaunchHostFunc(s, try_blocking, &p));
  ASSERT_OK(ascStreamSynchronize(s));
  /* the chained function was queued while the first one ran */
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(p.sync_stream, ascErrorNotPermitted);
  assert_int_equal(p.sync_event, ascErrorNotPermitted);
  assert_int_equal(p.sync_device, ascErrorNotPermitted);
  assert_int_equal(p.reset, ascErrorNotPermitted);
  assert_int_equal(p.chained, ascSuccess);
  assert_int_equal(atomic_load(&p.count), 1);
  ASSERT_OK(ascEventDestroy(p.event));
  ASSERT_OK(ascStreamDestroy(s));
}

static void test_skipped_after_error_and_args(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t kr = test_kernel(m, "raise_block");
  int32_t kind = 2;
  int64_t mask = 1;
  void *rargs[] = {&kind, &mask};
  probe p;
  ascStream_t s;
  (void)state;
  memset(&p, 0, sizeof p);
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_ERR(ascLaunchHostFunc(s, NULL, NULL), ascErrorInvalidValue);
  ASSERT_OK(ascLaunchKernel(kr, 1, rargs, s));
  ASSERT_OK(ascLaunchHostFunc(s, count_cb, &p));
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorKernelException);
  assert_int_equal(atomic_load(&p.count), 0);
  ASSERT_OK(ascLaunchHostFunc(s, count_cb, &p));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(atomic_load(&p.count), 1);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascLaunchHostFunc(s, count_cb, &p), ascErrorInvalidHandle);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_many_streams(void **state) {
  enum { NS = 8, M = 200 };
  ascStream_t s[NS];
  probe p;
  (void)state;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < NS; i++)
    ASSERT_OK(ascStreamCreateWithFlags(&s[i], ascStreamNonBlocking));
  for (int j = 0; j < M; j++)
    for (int i = 0; i < NS; i++)
      ASSERT_OK(ascLaunchHostFunc(s[i], count_cb, &p));
  ASSERT_OK(ascDeviceSynchronize());
  assert_int_equal(atomic_load(&p.count), NS * M);
  for (int i = 0; i < NS; i++)
    ASSERT_OK(ascStreamDestroy(s[i]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_order_and_thread, test_teardown),
      cmocka_unit_test_teardown(test_blocking_calls_refused, test_teardown),
      cmocka_unit_test_teardown(test_skipped_after_error_and_args,
                                test_teardown),
      cmocka_unit_test_teardown(test_many_streams, test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
