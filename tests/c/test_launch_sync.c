/*
 * ascLaunchKernelSync: the calling thread's own stream (launches of two
 * threads run side by side, each call returns its own error), the caller
 * taking part in its launch (ascLaunchJoin) or not (ascLaunchHandOff),
 * bad flags and handles, host functions, and a device reset in between.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include "runtime/stream.h"
#include "testutil.h"

#define PLUG_MODULE TEST_MODULE("plugkernels")

static ascModule_t load_plug(void) {
  ascModule_t m = NULL;
  ASSERT_OK(ascModuleLoad(&m, PLUG_MODULE));
  return m;
}

static int64_t self_tid(void) { return (int64_t)syscall(SYS_gettid); }

static void test_teardown_reset(void **state) {
  (void)state;
  (void)ascDeviceReset();
}

static int teardown(void **state) {
  test_teardown_reset(state);
  return 0;
}

/* Blocks and loop chunks run on the calling thread with ascLaunchJoin
 * (it takes what no worker has taken: seen within some tries), and never
 * with ascLaunchHandOff. */
static void test_join_runs_on_caller(void **state) {
  ascModule_t m = load_plug();
  ascKernel_t tids = test_kernel(m, "tids"), loop = test_kernel(m, "loop_tids");
  enum { N = 64 };
  int64_t out[N], me = self_tid();
  ascTensor t = test_tensor1(out, ascInt64, N);
  void *args[] = {&t};
  int joined_blocks = 0, joined_loops = 0, handed = 0;
  (void)state;

  for (int round = 0; round < 50 && !(joined_blocks && joined_loops);
       round++) {
    memset(out, 0, sizeof out);
    ASSERT_OK(ascLaunchKernelSync(tids, N, args, ascLaunchJoin));
    for (int i = 0; i < N; i++) {
      assert_true(out[i] != 0);
      joined_blocks |= out[i] == me;
    }
    memset(out, 0, sizeof out);
    ASSERT_OK(ascLaunchKernelSync(loop, 1, args, ascLaunchJoin));
    for (int i = 0; i < N; i++)
      joined_loops |= out[i] == me;
  }
  assert_true(joined_blocks);
  assert_true(joined_loops);

  for (int round = 0; round < 20; round++) {
    memset(out, 0, sizeof out);
    ASSERT_OK(ascLaunchKernelSync(tids, N, args, ascLaunchHandOff));
    for (int i = 0; i < N; i++) {
      assert_true(out[i] != 0);
      handed |= out[i] == me;
    }
    memset(out, 0, sizeof out);
    ASSERT_OK(ascLaunchKernelSync(loop, 1, args, ascLaunchHandOff));
    for (int i = 0; i < N; i++)
      handed |= out[i] == me;
  }
  assert_int_equal(handed, 0);
  ASSERT_OK(ascModuleUnload(m));
}

typedef struct waiter {
  ascKernel_t wait_flag;
  int32_t *flag;
  ascError_t err;
  unsigned flags;
} waiter;

static void wait_thread(void *p) {
  waiter *w = p;
  ascTensor t = test_tensor1(w->flag, ascInt32, 1);
  void *args[] = {&t};
  w->err = ascLaunchKernelSync(w->wait_flag, 1, args, w->flags);
}

/* A launch of another thread waits for a flag that this thread's launch
 * sets: on one stream the two would queue one behind the other (the
 * waiting kernel gives up after 20 s and the test fails). */
static void test_threads_side_by_side(void **state) {
  ascModule_t m = load_plug();
  ascKernel_t set = test_kernel(m, "set_flag");
  int32_t flag = 0;
  ascTensor t = test_tensor1(&flag, ascInt32, 1);
  void *args[] = {&t};
  (void)state;

  for (unsigned mode = 0; mode < 2; mode++) {
    waiter w = {test_kernel(m, "wait_flag"), &flag, ascErrorUnsupported, mode};
    uv_thread_t th;
    flag = 0;
    assert_int_equal(uv_thread_create(&th, wait_thread, &w), 0);
    /* let the other thread's launch start first */
    usleep(20000);
    ASSERT_OK(ascLaunchKernelSync(set, 1, args, mode));
    assert_int_equal(uv_thread_join(&th), 0);
    assert_int_equal(w.err, ascSuccess);
    assert_int_equal(flag, 1);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* A kernel's exception is this call's error, with its message; the next
 * call on the thread works (the thread's stream reported it). */
static void test_kernel_error_returned(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "raise_at");
  int32_t x[32];
  int64_t at = 5, never = 1000;
  ascTensor t = test_tensor1(x, ascInt32, 32);
  void *bad[] = {&t, &at}, *good[] = {&t, &never};
  (void)state;

  for (unsigned mode = 0; mode < 2; mode++) {
    ASSERT_ERR(ascLaunchKernelSync(k, 1, bad, mode), ascErrorKernelException);
    assert_non_null(strstr(ascGetLastErrorMessage(), "ValueError"));
    assert_non_null(strstr(ascGetLastErrorMessage(), "bad value at 5"));
    assert_non_null(strstr(ascGetLastErrorMessage(), "testkernels.py"));
    ASSERT_OK(ascLaunchKernelSync(k, 1, good, mode));
    for (int i = 0; i < 32; i++)
      assert_int_equal(x[i], 1);
  }
  /* other streams never see it */
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascModuleUnload(m));
}

static void try_sync_launch(void *ud) {
  void **p = ud;
  *(ascError_t *)p[1] = ascLaunchKernelSync(p[0], 1, NULL, 0);
}

static void test_bad_calls(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t empty = test_kernel(m, "empty"), vadd = test_kernel(m, "vadd");
  ascError_t in_host = ascSuccess;
  void *ud[] = {empty, &in_host};
  (void)state;

  ASSERT_ERR(ascLaunchKernelSync(NULL, 1, NULL, 0), ascErrorInvalidHandle);
  ASSERT_ERR(ascLaunchKernelSync(empty, 0, NULL, 0), ascErrorInvalidValue);
  ASSERT_ERR(ascLaunchKernelSync(empty, 1, NULL, 2), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "flags"));
  ASSERT_ERR(ascLaunchKernelSync(vadd, 1, NULL, 0), ascErrorInvalidValue);
  ASSERT_OK(ascLaunchKernelSync(empty, 1, NULL, ascLaunchHandOff));
  /* a host function may not wait */
  ASSERT_OK(ascLaunchHostFunc(NULL, try_sync_launch, ud));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(in_host, ascErrorNotPermitted);
  ASSERT_OK(ascModuleUnload(m));
}

/* A reset destroys the thread's stream; the next call makes another and
 * never touches the old handle (its record may serve a new stream). */
static void test_after_reset(void **state) {
  (void)state;
  for (int round = 0; round < 3; round++) {
    ascModule_t m = test_load_kernels();
    ascKernel_t empty = test_kernel(m, "empty");
    ascStream_t other;
    ASSERT_OK(ascLaunchKernelSync(empty, 1, NULL, ascLaunchJoin));
    ASSERT_OK(ascLaunchKernelSync(empty, 1, NULL, ascLaunchHandOff));
    ASSERT_OK(ascDeviceReset());
    /* likely the retired record of the thread's stream */
    ASSERT_OK(ascStreamCreate(&other));
    m = test_load_kernels();
    empty = test_kernel(m, "empty");
    ASSERT_OK(ascLaunchKernelSync(empty, 1, NULL, 0));
    ASSERT_OK(ascStreamQuery(other));
    ASSERT_OK(ascStreamDestroy(other));
    ASSERT_OK(ascDeviceReset());
  }
}

static void exiting_thread(void *p) {
  ascKernel_t k = p;
  (void)ascLaunchKernelSync(k, 1, NULL, 0);
}

static int live_streams(void) {
  asc__rt *rt;
  int n = 0;
  ASSERT_OK(asc__rt_current(&rt));
  uv_mutex_lock(&rt->lock);
  for (asc__stream *st = rt->streams; st != NULL; st = st->live_next)
    n++;
  uv_mutex_unlock(&rt->lock);
  return n;
}

/* Threads that come and go each make a stream and take it with them. */
static void test_thread_exit(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t empty = test_kernel(m, "empty");
  int before;
  (void)state;
  ASSERT_OK(ascDeviceSynchronize());
  before = live_streams();
  for (int i = 0; i < TEST_SCALE(200); i++) {
    uv_thread_t th;
    assert_int_equal(uv_thread_create(&th, exiting_thread, empty), 0);
    assert_int_equal(uv_thread_join(&th), 0);
  }
  assert_int_equal(live_streams(), before);
  /* this thread's stays until it exits */
  ASSERT_OK(ascLaunchKernelSync(empty, 1, NULL, 0));
  assert_int_equal(live_streams(), before + 1);
  ASSERT_OK(ascModuleUnload(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_join_runs_on_caller, teardown),
      cmocka_unit_test_teardown(test_threads_side_by_side, teardown),
      cmocka_unit_test_teardown(test_kernel_error_returned, teardown),
      cmocka_unit_test_teardown(test_bad_calls, teardown),
      cmocka_unit_test_teardown(test_after_reset, teardown),
      cmocka_unit_test_teardown(test_thread_exit, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
