/*
 * Events: creation flags, record/query/synchronize, elapsed time, errors
 * carried from one stream to another, NULL/invalid/destroyed handles.
 */
#include <stdlib.h>

#include "testutil.h"

static void test_create_destroy(void **state) {
  ascEvent_t e;
  (void)state;
  ASSERT_ERR(ascEventCreate(NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascEventCreateWithFlags(NULL, 0), ascErrorInvalidValue);
  ASSERT_ERR(ascEventCreateWithFlags(&e, 0x80), ascErrorInvalidValue);
  ASSERT_OK(ascEventCreateWithFlags(
      &e, ascEventBlockingSync | ascEventDisableTiming));
  ASSERT_OK(ascEventDestroy(e));
  ASSERT_ERR(ascEventDestroy(e), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventDestroy(NULL), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventQuery(e), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventSynchronize(e), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventRecord(e, NULL), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamWaitEvent(NULL, e, 0), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventElapsedTime(&(float){0}, e, e), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventQuery(NULL), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventSynchronize(NULL), ascErrorInvalidHandle);
  ASSERT_ERR(ascEventRecord(NULL, NULL), ascErrorInvalidHandle);
  {
    ascStream_t s;
    float ms;
    ASSERT_OK(ascStreamCreate(&s));
    ASSERT_ERR(ascEventRecord((ascEvent_t)(void *)s, s),
               ascErrorInvalidHandle);
    ASSERT_ERR(ascEventElapsedTime(&ms, (ascEvent_t)(void *)s, NULL),
               ascErrorInvalidHandle);
    ASSERT_OK(ascStreamDestroy(s));
  }
}

static void test_record_query_sync(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy");
  int32_t us = 200000;
  void *args[] = {&us};
  ascEvent_t e, eb;
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascEventCreate(&e));
  ASSERT_OK(ascEventCreateWithFlags(&eb, ascEventBlockingSync));
  ASSERT_OK(ascEventQuery(e));          /* never recorded */
  ASSERT_OK(ascEventSynchronize(e));
  ASSERT_OK(ascLaunchKernel(ks, 1, args, s));
  ASSERT_OK(ascEventRecord(e, s));
  ASSERT_OK(ascEventRecord(eb, s));
  ASSERT_ERR(ascEventQuery(e), ascErrorNotReady);
  ASSERT_OK(ascEventSynchronize(eb));
  ASSERT_OK(ascEventSynchronize(e));
  ASSERT_OK(ascEventQuery(e));
  /* re-record on the default stream */
  ASSERT_OK(ascEventRecord(e, NULL));
  ASSERT_OK(ascEventSynchronize(e));
  /* destroy with a record pending */
  ASSERT_OK(ascLaunchKernel(ks, 1, args, s));
  ASSERT_OK(ascEventRecord(e, s));
  ASSERT_OK(ascEventDestroy(e));
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascEventDestroy(eb));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascEventRecord(e, NULL), ascErrorInvalidHandle);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_elapsed(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy");
  int32_t us = 200000;   /* wide enough that a loaded host still sees it run */
  void *args[] = {&us};
  ascEvent_t a, b, nt, never;
  ascStream_t s;
  float ms = -1;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascEventCreate(&a));
  ASSERT_OK(ascEventCreate(&b));
  ASSERT_OK(ascEventCreate(&never));
  ASSERT_OK(ascEventCreateWithFlags(&nt, ascEventDisableTiming));
  ASSERT_OK(ascEventRecord(a, s));
  ASSERT_OK(ascLaunchKernel(ks, 1, args, s));
  ASSERT_OK(ascEventRecord(b, s));
  ASSERT_OK(ascEventRecord(nt, s));
  ASSERT_ERR(ascEventElapsedTime(&ms, a, b), ascErrorNotReady);
  ASSERT_OK(ascEventSynchronize(b));
  ASSERT_OK(ascEventElapsedTime(&ms, a, b));
  assert_true(ms >= 190.0f && ms < 5000.0f);
  ASSERT_OK(ascEventElapsedTime(&ms, b, a));
  assert_true(ms <= -190.0f);
  ASSERT_ERR(ascEventElapsedTime(NULL, a, b), ascErrorInvalidValue);
  ASSERT_ERR(ascEventElapsedTime(&ms, a, nt), ascErrorInvalidValue);
  ASSERT_ERR(ascEventElapsedTime(&ms, a, never), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "never recorded"));
  ASSERT_ERR(ascEventElapsedTime(&ms, NULL, b), ascErrorInvalidHandle);
  ASSERT_OK(ascEventDestroy(a));
  ASSERT_ERR(ascEventElapsedTime(&ms, a, b), ascErrorInvalidHandle);
  ASSERT_OK(ascEventDestroy(b));
  ASSERT_OK(ascEventDestroy(nt));
  ASSERT_OK(ascEventDestroy(never));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
}

/* An exception travels through an event: the event reports it, the
 * waiting stream skips its work and reports it too. */
static void test_error_through_event(void **state) {
  static const char want[] =
      "testkernels.py:101: kernel 'raise_block' raised OverflowError: block "
      "1 failed";
  ascModule_t m = test_load_kernels();
  ascKernel_t kr = test_kernel(m, "raise_block"),
              ka = test_kernel(m, "append");
  int32_t kind = 7;
  int64_t mask = 2;
  int32_t log[4] = {0}, v = 1;
  ascTensor t = test_tensor1(log, ascInt32, 4);
  void *rargs[] = {&kind, &mask}, *aargs[] = {&t, &v};
  ascStream_t s1, s2;
  ascEvent_t e;
  (void)state;
  ASSERT_OK(ascStreamCreateWithFlags(&s1, ascStreamNonBlocking));
  ASSERT_OK(ascStreamCreateWithFlags(&s2, ascStreamNonBlocking));
  ASSERT_OK(ascEventCreate(&e));
  ASSERT_OK(ascLaunchKernel(kr, 4, rargs, s1));
  ASSERT_OK(ascEventRecord(e, s1));
  ASSERT_OK(ascStreamWaitEvent(s2, e, 0));
  ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s2));
  ASSERT_ERR(ascEventSynchronize(e), ascErrorKernelException);
  assert_string_equal(ascGetLastErrorMessage(), want);
  ASSERT_OK(ascStreamSynchronize(s1));   /* reported through the event */
  ASSERT_ERR(ascStreamSynchronize(s2), ascErrorKernelException);
  assert_string_equal(ascGetLastErrorMessage(), want);
  assert_int_equal(log[0], 0);
  /* both streams work again */
  ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s2));
  ASSERT_OK(ascStreamSynchronize(s2));
  ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s1));
  ASSERT_OK(ascDeviceSynchronize());
  assert_int_equal(log[0], 2);
  ASSERT_OK(ascEventDestroy(e));
  ASSERT_OK(ascStreamDestroy(s1));
  ASSERT_OK(ascStreamDestroy(s2));
  ASSERT_OK(ascModuleUnload(m));
}

/* An event recorded last on a stream: once it shows done the stream is
 * idle.  The record is counted complete before its fence shows
 * signalled, so a waiter spinning on the event never sees the stream
 * still pending (the window is a few instructions wide: many rounds). */
static void test_done_event_leaves_stream_idle(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ka = test_kernel(m, "append");
  int32_t log[4] = {0}, v = 1;
  ascTensor t = test_tensor1(log, ascInt32, 4);
  void *aargs[] = {&t, &v};
  ascStream_t s;
  ascEvent_t e;
  int busy = 0;
  (void)state;
  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  ASSERT_OK(ascEventCreateWithFlags(&e, ascEventDisableTiming));
  for (int i = 0; i < 20000; i++) {
    ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s));
    ASSERT_OK(ascEventRecord(e, s));
    ASSERT_OK(ascEventSynchronize(e));
    if (ascStreamQuery(s) != ascSuccess)
      busy++;
    ASSERT_OK(ascEventQuery(e));
  }
  assert_int_equal(busy, 0);
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(log[0], 20000);
  ASSERT_OK(ascEventDestroy(e));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_create_destroy, test_teardown),
      cmocka_unit_test_teardown(test_record_query_sync, test_teardown),
      cmocka_unit_test_teardown(test_elapsed, test_teardown),
      cmocka_unit_test_teardown(test_error_through_event, test_teardown),
      cmocka_unit_test_teardown(test_done_event_leaves_stream_idle,
                                test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
