/*
 * Cooperative cancellation (docs/streams.md, "Cancellation"): endless
 * kernels (a while loop, a long counted loop, a long loop of short loops,
 * a long parallel loop) are
 * stopped by ascStreamCancel from another thread and by a stream's kernel
 * timeout; the stream reports the stop once, skips the work queued behind
 * it, and then works again; an except clause never catches the stop but
 * finally bodies run; ascDeviceReset stops endless kernels instead of
 * waiting for them.  Each endless kernel would hang these tests without
 * cancellation (the ctest timeout then fails them).
 */
#include <stdlib.h>
#include <time.h>
#include <uv.h>

#include "e2e.h"

static const char kernels[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def spin(flag):\n"
    "    asc.atomic_add(flag, 0, 1)\n"
    "    n = 0\n"
    "    while True:\n"
    "        n += 1\n"
    "        if n < 0:\n"
    "            flag[1] = n\n"
    "\n"
    "@asc.kernel\n"
    "def longfor(flag, out):\n"
    "    asc.atomic_add(flag, 0, 1)\n"
    "    s = 0.0\n"
    "    for i in range(flag.shape[0] * 1000000000000000):\n"
    "        s = s * 0.5 + 1.0\n"
    "    out[0] = s\n"
    "\n"
    "@asc.kernel\n"
    "def nested(flag, out):\n"
    "    asc.atomic_add(flag, 0, 1)\n"
    "    s = 0.0\n"
    "    for i in range(flag.shape[0] * 1000000000000000):\n"
    "        for j in range(flag.shape[0] - 1):\n"
    "            for k in range(flag.shape[0] - 2):\n"
    "                s = s * 0.5 + 1.0\n"
    "    out[0] = s\n"
    "\n"
    "@asc.kernel\n"
    "def middle(flag, out):\n"
    "    asc.atomic_add(flag, 0, 1)\n"
    "    s = 0.0\n"
    "    for i in range(flag.shape[0] - 2):\n"
    "        for j in range(flag.shape[0] * 1000000000000000):\n"
    "            for k in range(flag.shape[0] - 2):\n"
    "                s = s * 0.5 + 1.0\n"
    "    out[0] = s\n"
    "\n"
    "@asc.kernel\n"
    "def longpar(flag, out):\n"
    "    asc.atomic_add(flag, 0, 1)\n"
    "    for i in asc.prange(flag.shape[0] * 1000000000000000):\n"
    "        out[i % 4] = out[i % 4] * 0.5 + 1.0\n"
    "\n"
    "@asc.kernel\n"
    "def guarded(flag):\n"
    "    asc.atomic_add(flag, 0, 1)\n"
    "    try:\n"
    "        n = 0\n"
    "        while True:\n"
    "            n += 1\n"
    "            if n < 0:\n"
    "                flag[1] = n\n"
    "    except Exception:\n"
    "        flag[2] = 1\n"
    "    finally:\n"
    "        flag[3] = 1\n"
    "\n"
    "@asc.kernel\n"
    "def mark(flag):\n"
    "    flag[0] = flag[0] + 1\n";

static ascModule_t mod;

static int setup(void **state) {
  (void)state;
  mod = e2e_load("cancel.py", kernels);
  return 0;
}

static double now_ms(void) { return (double)uv_hrtime() / 1e6; }

typedef struct canceller {
  ascStream_t stream;
  int64_t *started;   /* the kernel's flag[0] */
  double at_ms;       /* when the cancel was sent */
  ascError_t err;
} canceller;

/* Waits until the kernel has started, lets it run 100 ms, cancels. */
static void cancel_main(void *arg) {
  canceller *c = arg;
  struct timespec pause = {0, 100000000};
  test_wait_count(c->started, 1, -1);
  nanosleep(&pause, NULL);
  c->at_ms = now_ms();
  c->err = ascStreamCancel(c->stream);
}

static void expect_in(const char *msg, const char *needle) {
  if (strstr(msg, needle) == NULL)
    fail_msg("'%s' not in message:\n%s", needle, msg);
}

/* The stream works again after reporting a stop: mark runs once. */
static void expect_usable(ascStream_t s) {
  int64_t m[1] = {0};
  ascTensor tm = e2e_t1(m, ascInt64, 1);
  void *a[] = {&tm};
  ASSERT_OK(ascLaunchKernel(test_kernel(mod, "mark"), 1, a, s));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(m[0], 1);
}

/* Launches kernel `name` (flag, out) over `blocks` blocks on s, queues mark behind it,
 * cancels from another thread, and checks what the stream reports. */
static void cancel_from_thread(const char *name, unsigned blocks) {
  ascStream_t s;
  int64_t flag[4] = {0, 0, 0, 0}, skipped[1] = {0};
  double out[4] = {0, 0, 0, 0}, t_done;
  ascTensor tf = e2e_t1(flag, ascInt64, 4), to = e2e_t1(out, ascFloat64, 4);
  ascTensor ts = e2e_t1(skipped, ascInt64, 1);
  void *a[] = {&tf, &to}, *am[] = {&ts};
  canceller c = {NULL, flag, 0, ascErrorInternal};
  uv_thread_t th;

  ASSERT_OK(ascStreamCreate(&s));
  c.stream = s;
  ASSERT_OK(ascLaunchKernel(test_kernel(mod, name), blocks, a, s));
  ASSERT_OK(ascLaunchKernel(test_kernel(mod, "mark"), 1, am, s));
  assert_int_equal(uv_thread_create(&th, cancel_main, &c), 0);
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorCancelled);
  t_done = now_ms();
  uv_thread_join(&th);
  ASSERT_OK(c.err);
  expect_in(ascGetLastErrorMessage(), "cancelled");
  print_message("%s: stopped %.1f ms after ascStreamCancel\n", name,
                t_done - c.at_ms);
  assert_true(t_done - c.at_ms < 2000.0);
  assert_int_equal(skipped[0], 0);   /* queued work was skipped */
  assert_true(flag[0] >= 1);
  /* reported once */
  ASSERT_OK(ascStreamSynchronize(s));
  expect_usable(s);
  ASSERT_OK(ascStreamDestroy(s));
}

static void test_cancel_while_loop(void **state) {
  (void)state;
  cancel_from_thread("spin", 1);
}

static void test_cancel_long_for_loop(void **state) {
  (void)state;
  cancel_from_thread("longfor", 1);
}

/* A long loop of short loops: the outer loop polls between chunks. */
static void test_cancel_nested_loops(void **state) {
  (void)state;
  cancel_from_thread("nested", 1);
}

/* A short outer loop around a long loop of short loops: the middle loop
 * counts the work of the loops it holds and polls between chunks of it
 * (docs/abi.md). */
static void test_cancel_long_middle_loop(void **state) {
  (void)state;
  cancel_from_thread("middle", 1);
}

static void test_cancel_parallel_loop(void **state) {
  (void)state;
  cancel_from_thread("longpar", 1);
}

/* Several blocks, more than can run at once: the running ones stop, the
 * others never start. */
static void test_cancel_many_blocks(void **state) {
  (void)state;
  cancel_from_thread("spin", 64);
}

static void test_cancel_skips_except_runs_finally(void **state) {
  (void)state;
  int64_t flag[4] = {0, 0, 0, 0};
  ascTensor tf = e2e_t1(flag, ascInt64, 4);
  void *a[] = {&tf};
  canceller c = {NULL, flag, 0, ascErrorInternal};
  uv_thread_t th;

  ASSERT_OK(ascLaunchKernel(test_kernel(mod, "guarded"), 1, a, NULL));
  assert_int_equal(uv_thread_create(&th, cancel_main, &c), 0);
  ASSERT_ERR(ascStreamSynchronize(NULL), ascErrorCancelled);
  uv_thread_join(&th);
  assert_int_equal(flag[2], 0);   /* except Exception did not catch it */
  assert_int_equal(flag[3], 1);   /* finally ran */
  expect_usable(NULL);
}

static void test_timeout(void **state) {
  ascStream_t s;
  unsigned ms = 99;
  int64_t flag[4] = {0, 0, 0, 0};
  double out[4] = {0, 0, 0, 0}, t0, took;
  ascTensor tf = e2e_t1(flag, ascInt64, 4), to = e2e_t1(out, ascFloat64, 4);
  void *a[] = {&tf, &to};
  (void)state;

  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascStreamGetKernelTimeout(&ms, s));
  assert_int_equal(ms, 0);
  ASSERT_ERR(ascStreamGetKernelTimeout(NULL, s), ascErrorInvalidValue);
  ASSERT_OK(ascStreamSetKernelTimeout(s, 100));
  ASSERT_OK(ascStreamGetKernelTimeout(&ms, s));
  assert_int_equal(ms, 100);

  for (int k = 0; k < 2; k++) {
    const char *name = k == 0 ? "spin" : "longfor";
    flag[0] = 0;
    t0 = now_ms();
    ASSERT_OK(ascLaunchKernel(test_kernel(mod, name), 1, a, s));
    ASSERT_ERR(ascStreamSynchronize(s), ascErrorLaunchTimeout);
    took = now_ms() - t0;
    expect_in(ascGetLastErrorMessage(), "timeout of 100 ms");
    print_message("%s: timeout of 100 ms reported after %.1f ms\n", name,
                  took);
    assert_true(took >= 99.0);
    assert_true(took < 5000.0);
    ASSERT_OK(ascStreamSynchronize(s));
    /* short kernels are not affected */
    expect_usable(s);
  }
  ASSERT_OK(ascStreamSetKernelTimeout(s, 0));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascStreamSetKernelTimeout(s, 1), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamGetKernelTimeout(&ms, s), ascErrorInvalidHandle);
}

static void test_cancel_idle_and_handles(void **state) {
  ascStream_t s;
  ascEvent_t e;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascStreamCancel(s));   /* nothing pending: nothing to report */
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascStreamCancel(NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascStreamCancel(s), ascErrorInvalidHandle);
  ASSERT_ERR(ascStreamSynchronizeTimeout(s, 1), ascErrorInvalidHandle);
  ASSERT_OK(ascEventCreate(&e));
  ASSERT_ERR(ascStreamCancel((ascStream_t)(void *)e), ascErrorInvalidHandle);
  ASSERT_OK(ascEventDestroy(e));
}

/* A bounded wait returns NotReady at its deadline, without running the
 * kernel itself, and keeps the stream's state. */
static void test_synchronize_timeout(void **state) {
  ascStream_t s;
  int64_t flag[4] = {0, 0, 0, 0};
  ascTensor tf = e2e_t1(flag, ascInt64, 4);
  void *a[] = {&tf};
  double t0, took;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascStreamSynchronizeTimeout(s, 10));
  ASSERT_OK(ascLaunchKernel(test_kernel(mod, "spin"), 1, a, s));
  t0 = now_ms();
  ASSERT_ERR(ascStreamSynchronizeTimeout(s, 50), ascErrorNotReady);
  took = now_ms() - t0;
  assert_true(took >= 49.0);
  assert_true(took < 2000.0);
  ASSERT_OK(ascStreamCancel(s));
  ASSERT_ERR(ascStreamSynchronizeTimeout(s, 5000), ascErrorCancelled);
  ASSERT_OK(ascStreamSynchronizeTimeout(s, 0));
  ASSERT_OK(ascStreamDestroy(s));
}

/* Last: the reset drops the module. */
static void test_reset_stops_endless_kernels(void **state) {
  ascStream_t s;
  int64_t f1[4] = {0, 0, 0, 0}, f2[4] = {0, 0, 0, 0};
  ascTensor t1 = e2e_t1(f1, ascInt64, 4), t2 = e2e_t1(f2, ascInt64, 4);
  void *a1[] = {&t1}, *a2[] = {&t2};
  double t0;
  (void)state;
  /* non-blocking: the default stream's launch does not wait for it */
  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  ASSERT_OK(ascLaunchKernel(test_kernel(mod, "spin"), 1, a1, s));
  ASSERT_OK(ascLaunchKernel(test_kernel(mod, "spin"), 1, a2, NULL));
  test_wait_count(f1, 1, -1);
  test_wait_count(f2, 1, -1);
  t0 = now_ms();
  ASSERT_OK(ascDeviceReset());
  print_message("ascDeviceReset returned after %.1f ms\n", now_ms() - t0);
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorInvalidHandle);
  ASSERT_OK(ascStreamSynchronize(NULL));
  mod = NULL;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cancel_idle_and_handles),
      cmocka_unit_test(test_cancel_while_loop),
      cmocka_unit_test(test_cancel_long_for_loop),
      cmocka_unit_test(test_cancel_nested_loops),
      cmocka_unit_test(test_cancel_long_middle_loop),
      cmocka_unit_test(test_cancel_parallel_loop),
      cmocka_unit_test(test_cancel_many_blocks),
      cmocka_unit_test(test_cancel_skips_except_runs_finally),
      cmocka_unit_test(test_synchronize_timeout),
      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_reset_stops_endless_kernels),
  };
  return cmocka_run_group_tests(tests, setup, test_teardown);
}
