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
#include <stdatomic.h>
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

/* Threads that race module handles: each launches kernel `put` of the
 * module published in *module (see TEST_RACE_TEXT), specialising it for a
 * rotating set of dtypes, until *stop.  Outcomes other than success and
 * the errors a racing unload or reset may give are counted in `bad`. */
#define TEST_RACE_TEXT                                                       \
  "import asc\n"                                                             \
  "@asc.kernel\n"                                                            \
  "def put(a, v):\n"                                                         \
  "    a[0] = v\n"

typedef struct test_racer {
  _Atomic(ascModule_t) *module;
  atomic_int *stop;
  int ok, refused, bad;
  ascError_t also_refused;  /* another expected refusal, or ascSuccess */
  char why[256];
  int64_t buf[8][4];    /* one slot per dtype, written by the kernels */
} test_racer;

static inline void test_racer_run(void *arg) {
  static const ascDataType dts[] = {ascInt32, ascInt64, ascFloat32,
                                    ascFloat64, ascInt16, ascUInt8};
  test_racer *r = arg;
  unsigned n = 0;

  while (!atomic_load(r->stop)) {
    ascModule_t m = atomic_load(r->module);
    ascKernel_t k;
    ascError_t e;
    int d = (int)(n++ % (sizeof dts / sizeof dts[0]));
    ascTensor t = test_tensor1(r->buf[d], dts[d], 1);
    ascScalar v;
    void *args[2] = {&t, &v};

    memset(&v, 0, sizeof v);
    v.dtype = ascInt64;
    v.weak = 1;
    v.value.i = 7;
    if (m == NULL) {
      struct timespec pause = {0, 100000};
      nanosleep(&pause, NULL);
      continue;
    }
    e = ascModuleGetKernel(&k, m, "put");
    if (e == ascSuccess)
      e = ascLaunchKernel(k, 1, args, NULL);
    if (e == ascSuccess)
      r->ok++;
    else if (e == ascErrorInvalidHandle || e == ascErrorNotPermitted ||
             e == r->also_refused)
      r->refused++;
    else if (r->bad++ == 0)
      snprintf(r->why, sizeof r->why, "%s: %s", ascGetErrorName(e),
               ascGetLastErrorMessage());
  }
}

/* Every test group resets the device at the end so workers are joined. */
static inline int test_teardown(void **state) {
  (void)state;
  return ascDeviceReset() == ascSuccess ? 0 : -1;
}

#endif
