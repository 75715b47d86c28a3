/*
 * Helpers shared by the runtime tests: loading the hand-written test
 * modules, building tensor descriptors, scaling stress loops down under
 * sanitizers.
 */
#ifndef ASC_TESTUTIL_H
#define ASC_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "asc/asc.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define TEST_SANITIZED 1
#else
#define TEST_SANITIZED 0
#endif

/* Stress loop sizes: full in plain builds, smaller under sanitizers. */
#define TEST_SCALE(n) (TEST_SANITIZED ? (n) / 10 : (n))

#define TEST_MODULE(name) ASC_TEST_MODULE_DIR "/" name ".so"

#define ASSERT_OK(expr)                                                      \
  do {                                                                       \
    ascError_t e_ = (expr);                                                  \
    if (e_ != ascSuccess)                                                    \
      fail_msg("%s -> %s: %s", #expr, ascGetErrorName(e_),                   \
               ascGetLastErrorMessage());                                    \
  } while (0)

#define ASSERT_ERR(expr, code)                                               \
  do {                                                                       \
    ascError_t e_ = (expr);                                                  \
    if (e_ != (code))                                                        \
      fail_msg("%s -> %s, expected %s (%s)", #expr, ascGetErrorName(e_),     \
               ascGetErrorName(code), ascGetLastErrorMessage());             \
  } while (0)

static inline ascTensor test_tensor1(void *data, ascDataType dt, int64_t n) {
  ascTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dt;
  t.ndim = 1;
  t.shape[0] = n;
  t.strides[0] = 1;
  return t;
}

static inline ascModule_t test_load_kernels(void) {
  ascModule_t m = NULL;
  ASSERT_OK(ascModuleLoad(&m, TEST_MODULE("testkernels")));
  return m;
}

static inline ascKernel_t test_kernel(ascModule_t m, const char *name) {
  ascKernel_t k = NULL;
  ASSERT_OK(ascModuleGetKernel(&k, m, name));
  return k;
}

/* Polls the counter a kernel raises (atomically) every millisecond until
 * it reaches want or ms milliseconds have passed (ms < 0: no limit), and
 * returns its last value. */
static inline int64_t test_wait_count(const int64_t *count, int64_t want,
                                      int ms) {
  struct timespec pause = {0, 1000000};
  int64_t v;
  for (int i = 0; (v = __atomic_load_n(count, __ATOMIC_ACQUIRE)) < want &&
                  (ms < 0 || i < ms);
       i++)
    nanosleep(&pause, NULL);
  return v;
}

/* Every test group resets the device at the end so workers are joined. */
static inline int test_teardown(void **state) {
  (void)state;
  return ascDeviceReset() == ascSuccess ? 0 : -1;
}

#endif
