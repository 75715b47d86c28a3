/*
 * Kernel launch: blocks and teams, parallel loops, barriers, critical
 * sections, exceptions and per-stream errors, argument validation, and a
 * stress run of tiny launches.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static int ncores(void) {
  ascDeviceProp p;
  ASSERT_OK(ascGetDeviceProperties(&p, 0));
  return p.cores;
}

static void test_empty_blocks(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "empty"), kp = test_kernel(m, "empty_pf");
  uint32_t dims[] = {1, 2, 3, 7, 64, 1000, 10000};
  (void)state;
  for (size_t i = 0; i < (sizeof dims / sizeof dims[0]); i++) {
    ASSERT_OK(ascLaunchKernel(k, dims[i], NULL, NULL));
    ASSERT_OK(ascLaunchKernel(kp, dims[i], NULL, NULL));
  }
  ASSERT_OK(ascStreamSynchronize(NULL));
  ASSERT_OK(ascModuleUnload(m));
}

static void test_vadd(void **state) {
  enum { N = 100003 };
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "vadd");
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b),
        *c = malloc(N * sizeof *c);
  uint32_t dims[] = {1, 2, 3, 64, 5000};
  (void)state;
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = (float)(2 * i);
  }
  for (size_t d = 0; d < 5; d++) {
    ascTensor ta = test_tensor1(a, ascFloat32, N),
              tb = test_tensor1(b, ascFloat32, N),
              tc = test_tensor1(c, ascFloat32, N);
    void *args[] = {&ta, &tb, &tc};
    memset(c, 0, N * sizeof *c);
    ASSERT_OK(ascLaunchKernel(k, dims[d], args, NULL));
    /* args are copied during the call */
    memset(&ta, 0, sizeof ta);
    ASSERT_OK(ascDeviceSynchronize());
    for (int i = 0; i < N; i++)
      if (c[i] != (float)(3 * i))
        fail_msg("blockDim %u: c[%d] = %f", dims[d], i, (double)c[i]);
  }
  free(a);
  free(b);
  free(c);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_teams(void **state) {
  int nc = ncores();
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "whoami");
  uint32_t dims[] = {1, (uint32_t)nc, (uint32_t)nc * 4 + 1};
  (void)state;
  for (size_t d = 0; d < 3; d++) {
    int32_t *out = calloc(4 * dims[d], sizeof *out);
    ascTensor t = test_tensor1(out, ascInt32, 4 * dims[d]);
    void *args[] = {&t};
    int32_t resident = dims[d] < (uint32_t)nc ? (int32_t)dims[d] : nc;
    ASSERT_OK(ascLaunchKernel(k, dims[d], args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (uint32_t b = 0; b < dims[d]; b++) {
      assert_int_equal(out[4 * b + 3], 1);
      assert_int_equal(out[4 * b + 2], dims[d]);
      assert_int_equal(out[4 * b + 0], nc / resident);
      assert_true(out[4 * b + 1] >= 1);
      assert_true(out[4 * b + 1] <= out[4 * b + 0]);
    }
    free(out);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* A kernel flagged ASC_KERNEL_NOT_SPMD runs once whatever blockDim says,
 * as block 0 of 1, with the threads the blocks would have had together:
 * min(blockDim, cores) teams of cores / min(blockDim, cores). */
static void test_not_spmd_runs_once(void **state) {
  int nc = ncores();
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "once");
  uint32_t dims[] = {1, 2, 3, 4, 16, (uint32_t)nc, (uint32_t)nc * 4 + 1};
  (void)state;
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    int64_t out[4] = {0, -1, -1, -1};
    ascTensor t = test_tensor1(out, ascInt64, 4);
    void *args[] = {&t};
    int64_t resident = dims[d] < (uint32_t)nc ? (int64_t)dims[d] : nc;
    ASSERT_OK(ascLaunchKernel(k, dims[d], args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    if (out[0] != 1 || out[1] != 0 || out[2] != 1 ||
        out[3] != resident * (nc / resident))
      fail_msg("blockDim %u on %d cores: ran %lld times, block %lld of "
               "%lld, team %lld (want 1, 0 of 1, %lld)",
               dims[d], nc, (long long)out[0], (long long)out[1],
               (long long)out[2], (long long)out[3],
               (long long)(resident * (nc / resident)));
  }
  ASSERT_OK(ascModuleUnload(m));
}

static void test_reduce(void **state) {
  enum { N = 50000 };
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "reduce");
  double *x = malloc(N * sizeof *x), out[8];
  ascTensor tx = test_tensor1(x, ascFloat64, N),
            to = test_tensor1(out, ascFloat64, 8);
  void *args[] = {&tx, &to};
  (void)state;
  for (int i = 0; i < N; i++)
    x[i] = i % 100;
  for (int rep = 0; rep < 20; rep++) {
    for (uint32_t bd = 1; bd <= 8; bd *= 2) {
      memset(out, 0, sizeof out);
      ASSERT_OK(ascLaunchKernel(k, bd, args, NULL));
      ASSERT_OK(ascStreamSynchronize(NULL));
      for (uint32_t b = 0; b < bd; b++)
        assert_true(out[b] == 49.5 * N);
    }
  }
  free(x);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_critical_and_shared(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "critical"), ks = test_kernel(m, "shared");
  int64_t c = 0, n = 20000;
  int32_t out[16];
  ascTensor tc = test_tensor1(&c, ascInt64, 1),
            to = test_tensor1(out, ascInt32, 16);
  void *args[] = {&tc, &n}, *sargs[] = {&to};
  (void)state;
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascLaunchKernel(k, 3, args, NULL));
  memset(out, 0, sizeof out);
  ASSERT_OK(ascLaunchKernel(ks, 16, sargs, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(c, 4 * n);
  for (int b = 0; b < 16; b++)
    assert_int_equal(out[b], b + 1);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_loop_exception_deterministic(void **state) {
  enum { N = 100000 };
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "raise_at");
  int32_t *x = malloc(N * sizeof *x);
  ascTensor tx = test_tensor1(x, ascInt32, N);
  int64_t at;
  void *args[] = {&tx, &at};
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  for (int rep = 0; rep < 20; rep++) {
    at = rep % 2 ? 12345 : -1;
    memset(x, 0, N * sizeof *x);
    ASSERT_OK(ascLaunchKernel(k, 1, args, s));
    ASSERT_ERR(ascStreamSynchronize(s), ascErrorKernelException);
    if (at == 12345) {
      assert_string_equal(ascGetLastErrorMessage(),
                          "testkernels.py:42: kernel 'raise_at' raised "
                          "ValueError: bad value at 12345");
      for (int i = 0; i < 12345; i++)
        assert_int_equal(x[i], 1);
    } else {
      assert_string_equal(ascGetLastErrorMessage(),
                          "testkernels.py:42: kernel 'raise_at' raised "
                          "ValueError: bad value at 3");
    }
    /* reported once: the stream works again */
    ASSERT_OK(ascStreamSynchronize(s));
  }
  ASSERT_OK(ascStreamDestroy(s));
  free(x);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_block_exceptions(void **state) {
  static const char *const cls[] = {
      "", "Exception", "ValueError", "IndexError", "ZeroDivisionError",
      "AssertionError", "RuntimeError", "OverflowError", "ArithmeticError",
      "TypeError"};
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "raise_block"),
              ka = test_kernel(m, "append");
  int32_t kind;
  int64_t mask = (1 << 5) | (1 << 9) | (1 << 30);
  int32_t log[8] = {0}, v = 7;
  ascTensor tl = test_tensor1(log, ascInt32, 8);
  void *args[] = {&kind, &mask}, *aargs[] = {&tl, &v};
  char want[256];
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  for (kind = 1; kind <= 9; kind++) {
    ASSERT_OK(ascLaunchKernel(k, 40, args, s));
    /* queued after the failure: skipped, and launching still succeeds */
    ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s));
    ASSERT_ERR(ascStreamSynchronize(s), ascErrorKernelException);
    snprintf(want, sizeof want,
             "testkernels.py:105: kernel 'raise_block' raised %s: block 5 "
             "failed",
             cls[kind]);
    assert_string_equal(ascGetLastErrorMessage(), want);
    assert_int_equal(log[0], 0);
  }
  /* once reported, work runs again */
  ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(log[0], 1);
  assert_int_equal(log[1], 7);

  /* ascDeviceSynchronize reports (and clears) the first error */
  kind = 2;
  ASSERT_OK(ascLaunchKernel(k, 8, args, s));
  ASSERT_ERR(ascDeviceSynchronize(), ascErrorKernelException);
  assert_string_equal(ascGetLastErrorMessage(),
                      "testkernels.py:105: kernel 'raise_block' raised "
                      "ValueError: block 5 failed");
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
}

static void test_barrier(void **state) {
  int nc = ncores();
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "prefix"),
              kr = test_kernel(m, "barrier_raise");
  int64_t x[64], y[64];
  ascTensor tx = test_tensor1(x, ascInt64, 64),
            ty = test_tensor1(y, ascInt64, 64);
  void *args[] = {&tx, &ty};
  ascStream_t s[3];
  (void)state;
  for (int i = 0; i < 3; i++)
    ASSERT_OK(ascStreamCreateWithFlags(&s[i], ascStreamNonBlocking));
  for (int rep = 0; rep < 50; rep++) {
    uint32_t bd = (uint32_t)(1 + rep % nc);
    memset(y, 0, sizeof y);
    ASSERT_OK(ascLaunchKernel(k, bd, args, s[0]));
    ASSERT_OK(ascStreamSynchronize(s[0]));
    for (uint32_t b = 0; b < bd; b++)
      assert_int_equal(y[b], (int64_t)(b + 1) * (b + 2) / 2);
  }
  /* Barrier launches on several streams at once must not deadlock. */
  {
    int64_t xs[3][64], ys[3][64];
    for (int rep = 0; rep < 20; rep++) {
      for (int i = 0; i < 3; i++) {
        ascTensor a = test_tensor1(xs[i], ascInt64, 64),
                  b = test_tensor1(ys[i], ascInt64, 64);
        void *ar[] = {&a, &b};
        ASSERT_OK(ascLaunchKernel(k, (uint32_t)nc, ar, s[i]));
      }
      for (int i = 0; i < 3; i++)
        ASSERT_OK(ascStreamSynchronize(s[i]));
      for (int i = 0; i < 3; i++)
        for (int b = 0; b < nc; b++)
          assert_int_equal(ys[i][b], (int64_t)(b + 1) * (b + 2) / 2);
    }
  }
  /* Cannot be resident: refused at launch, nothing queued. */
  ASSERT_ERR(ascLaunchKernel(k, (uint32_t)nc + 1, args, s[0]),
             ascErrorLaunchFailure);
  assert_non_null(strstr(ascGetLastErrorMessage(), "barrier"));
  ASSERT_OK(ascStreamQuery(s[0]));
  /* A block that raises releases the blocks waiting at the barrier. */
  if (nc >= 2) {
    ASSERT_OK(ascLaunchKernel(kr, (uint32_t)nc, NULL, s[1]));
    ASSERT_ERR(ascStreamSynchronize(s[1]), ascErrorKernelException);
    assert_string_equal(ascGetLastErrorMessage(),
                        "testkernels.py:9: kernel 'barrier_raise' raised "
                        "AssertionError: block 1 gives up");
  }
  /* Misused barriers fail the launch instead of hanging. */
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "misuse"), 1, NULL, s[2]));
  ASSERT_ERR(ascStreamSynchronize(s[2]), ascErrorKernelException);
  assert_non_null(strstr(ascGetLastErrorMessage(), "inside a parallel loop"));
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "misuse_noflag"), 3, NULL, s[2]));
  ASSERT_ERR(ascStreamSynchronize(s[2]), ascErrorKernelException);
  assert_non_null(strstr(ascGetLastErrorMessage(), "not flagged"));
  for (int i = 0; i < 3; i++)
    ASSERT_OK(ascStreamDestroy(s[i]));
  ASSERT_OK(ascModuleUnload(m));
}

static void test_validation(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "vadd"), kg = test_kernel(m, "generic"),
              ka = test_kernel(m, "affine");
  float a[4] = {0};
  int64_t xi[4] = {0};
  ascTensor ta = test_tensor1(a, ascFloat32, 4), tb = ta, tc = ta;
  void *args[] = {&ta, &tb, &tc};
  ascScalar sc;
  ascTensor tg = test_tensor1(xi, ascInt64, 4);
  void *gargs[] = {&tg, &sc};
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));

  ASSERT_ERR(ascLaunchKernel(k, 1, NULL, s), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "args is NULL"));
  args[1] = NULL;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "parameter 'b'"));
  args[1] = &tb;
  tb.dtype = ascFloat64;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "parameter 'b'"));
  assert_non_null(strstr(ascGetLastErrorMessage(), "float32"));
  tb = ta;
  tc.ndim = 2;
  tc.shape[1] = 1;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "parameter 'c'"));
  tc.ndim = 9;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidValue);
  tc.ndim = -1;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidValue);
  tc = ta;
  tc.data = NULL;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "data is NULL"));
  tc.shape[0] = -3;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidValue);
  tc = ta;
  tc.dtype = (ascDataType)99;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "invalid dtype"));
  tc = ta;
  ASSERT_ERR(ascLaunchKernel(k, 0, args, s), ascErrorInvalidValue);
  /* an empty tensor may have NULL data */
  ta.data = tb.data = tc.data = NULL;
  ta.shape[0] = tb.shape[0] = tc.shape[0] = 0;
  ASSERT_OK(ascLaunchKernel(k, 1, args, s));

  /* generic parameters: any dtype/ndim; scalar descriptor checked */
  sc.dtype = ascInt64;
  sc.weak = 1;
  sc.value.i = 42;
  ASSERT_OK(ascLaunchKernel(kg, 1, gargs, s));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(xi[0], 42);
  sc.dtype = (ascDataType)-5;
  ASSERT_ERR(ascLaunchKernel(kg, 1, gargs, s), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "parameter 's'"));
  {
    ascTensor t3 = tg;
    t3.ndim = 3;
    t3.shape[1] = t3.shape[2] = 1;
    sc.dtype = ascFloat32;
    sc.weak = 0; /* a weak scalar is bool, int64 or float64 */
    gargs[0] = &t3;
    ASSERT_OK(ascLaunchKernel(kg, 2, gargs, s));
  }
  {
    int64_t mul = 1;
    void *aargs[] = {&tg, &mul, NULL};
    ASSERT_ERR(ascLaunchKernel(ka, 1, aargs, s), ascErrorInvalidValue);
    assert_non_null(strstr(ascGetLastErrorMessage(), "parameter 'add'"));
  }
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascStreamQuery(s));

  /* handles */
  ASSERT_ERR(ascLaunchKernel(NULL, 1, args, s), ascErrorInvalidHandle);
  ASSERT_ERR(ascLaunchKernel((ascKernel_t)(void *)s, 1, args, s),
             ascErrorInvalidHandle);
  ASSERT_ERR(ascLaunchKernel(k, 1, args, (ascStream_t)(void *)k),
             ascErrorInvalidHandle);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascLaunchKernel(k, 1, args, s), ascErrorInvalidHandle);
  ASSERT_OK(ascModuleUnload(m));
  ASSERT_ERR(ascLaunchKernel(k, 1, args, NULL), ascErrorInvalidHandle);
}

/* Descriptors whose byte size overflows are rejected before anything
 * multiplies their sizes (UBSan saw shape x itemsize overflow in the
 * driver), for hand-written and Python kernels alike. */
static const struct {
  int64_t shape0, stride0, shape1, stride1;
  const char *why;
} overflow_cases[] = {
    {INT64_MAX, 1, 1, 1, "spans more bytes"},          /* x itemsize */
    {INT64_MAX / 4 + 1, 1, 1, 1, "spans more bytes"},  /* x 4 bytes */
    {4, INT64_MAX, 1, 1, "overflows"},                 /* 3 x stride */
    {4, INT64_MIN, 1, 1, "overflows"},
    {3, INT64_MAX / 2, 2, INT64_MAX / 2, "overflows"}, /* sum of reaches */
    {-1, 1, 1, 1, "negative"},
};

static ascTensor overflow_tensor(ascTensor t, size_t i, int ndim) {
  t.ndim = ndim;
  t.shape[0] = overflow_cases[i].shape0;
  t.strides[0] = overflow_cases[i].stride0;
  t.shape[1] = overflow_cases[i].shape1;
  t.strides[1] = overflow_cases[i].stride1;
  return t;
}

static void expect_overflow(ascError_t e, size_t i, const char *param) {
  const char *msg = ascGetLastErrorMessage();
  assert_int_equal(e, ascErrorInvalidValue);
  if (strstr(msg, overflow_cases[i].why) == NULL ||
      strstr(msg, param) == NULL) {
    print_error("case %zu: '%s'\n", i, msg);
    fail();
  }
}

static void test_size_overflow_rejected(void **state) {
  ascModule_t m = test_load_kernels(), mp;
  ascKernel_t k = test_kernel(m, "vadd"), kp;
  float a[4] = {0};
  ascTensor ta = test_tensor1(a, ascFloat32, 4), tb;
  ascStream_t s;
  size_t n = sizeof overflow_cases / sizeof overflow_cases[0];
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  for (size_t i = 0; i < n; i++) {
    void *args[] = {&ta, &tb, &ta};
    if (overflow_cases[i].shape1 != 1)
      continue; /* vadd is 1-d */
    tb = overflow_tensor(ta, i, 1);
    expect_overflow(ascLaunchKernel(k, 1, args, s), i, "parameter 'b'");
  }
  /* a generic Python kernel: rejected at launch, before its signature
   * (and the driver's span arithmetic) is computed */
  ASSERT_OK(ascModuleLoadPython(&mp,
                                "import asc\n@asc.kernel\n"
                                "def g(x, y):\n    x[0] = y[0, 0]\n",
                                NULL));
  ASSERT_OK(ascModuleGetKernel(&kp, mp, "g"));
  for (size_t i = 0; i < n; i++) {
    void *gargs[] = {&ta, &tb};
    tb = overflow_tensor(ta, i, 2);
    expect_overflow(ascLaunchKernel(kp, 1, gargs, s), i, "parameter 'y'");
  }
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(mp));
  ASSERT_OK(ascModuleUnload(m));
}

/* The launch's checks are the only ones and the same for every kind of
 * module: a kernel from Python text gets the message a hand-written one
 * gets, for each fault (the driver and the signature builder below the
 * launch check nothing again). */
static const char door_text[] =
    "import asc\n@asc.kernel\n"
    "def k(a, b: asc.Tensor[asc.float32, 2], s, x: asc.float32):\n"
    "    a[0] = b[0, 0] + s + x\n";

static void expect_door(ascKernel_t k, void **args, const char *param,
                        const char *why) {
  const char *msg;
  char head[128];
  ascKernelInfo info;
  ASSERT_OK(ascKernelGetInfo(&info, k));
  ASSERT_ERR(ascLaunchKernel(k, 1, args, NULL), ascErrorInvalidValue);
  msg = ascGetLastErrorMessage();
  snprintf(head, sizeof head, "ascLaunchKernel: kernel '%s', parameter '%s'",
           info.name, param);
  if (strstr(msg, head) == NULL || strstr(msg, why) == NULL)
    fail_msg("'%s' lacks '%s' or '%s'", msg, head, why);
}

static void test_validation_one_door(void **state) {
  ascModule_t m, mo = test_load_kernels();
  ascKernel_t k, kg = test_kernel(mo, "generic");
  double a[4] = {0};
  float b[4] = {1, 2, 3, 4}, x = 1;
  ascTensor ta = test_tensor1(a, ascFloat64, 4), tb, t;
  ascScalar s = {ascInt64, 1, {.i = 2}}, sc;
  void *args[] = {&ta, &tb, &s, &x};
  int64_t xi[4] = {0};
  ascTensor tg = test_tensor1(xi, ascInt64, 4);
  void *gargs[] = {&tg, &sc};
  (void)state;
  tb = test_tensor1(b, ascFloat32, 4);
  tb.ndim = 2;
  tb.shape[0] = tb.shape[1] = 2;
  tb.strides[0] = 2;
  tb.strides[1] = 1;
  ASSERT_OK(ascModuleLoadPython(&m, door_text, NULL));
  ASSERT_OK(ascModuleGetKernel(&k, m, "k"));
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_true(a[0] == 4.0);

  args[0] = NULL;
  expect_door(k, args, "a", "argument pointer is NULL");
  args[0] = &t;
  t = ta;
  t.dtype = (ascDataType)99;
  expect_door(k, args, "a", "tensor has invalid dtype 99");
  t = ta;
  t.ndim = 9;
  expect_door(k, args, "a", "tensor has invalid ndim 9");
  t = ta;
  t.shape[0] = -1;
  expect_door(k, args, "a", "shape[0] is negative");
  t = ta;
  t.data = NULL;
  expect_door(k, args, "a", "tensor data is NULL but its size is not 0");
  args[0] = &ta;
  args[1] = &t;
  t = tb;
  t.dtype = ascFloat64;
  expect_door(k, args, "b", "expected a float32 tensor, got float64");
  t = tb;
  t.ndim = 1;
  expect_door(k, args, "b", "expected a 2-d tensor, got 1-d");
  args[1] = &tb;
  args[2] = &sc;
  sc = s;
  sc.dtype = (ascDataType)-1;
  expect_door(k, args, "s", "scalar descriptor has invalid dtype -1");
  /* what the signature builder checked alone before, now for every
   * module: an ascScalar holds no complex value, and a weak one is bool,
   * int64 or float64 (asc.h) */
  sc = s;
  sc.dtype = ascComplex64;
  expect_door(k, args, "s", "an ascScalar cannot hold a complex value");
  gargs[1] = &sc;
  expect_door(kg, gargs, "s", "an ascScalar cannot hold a complex value");
  sc = s;
  sc.dtype = ascInt32;
  expect_door(k, args, "s", "weak scalar descriptor has dtype int32");
  expect_door(kg, gargs, "s", "weak scalar descriptor has dtype int32");
  sc.weak = 0;
  ASSERT_OK(ascLaunchKernel(kg, 1, gargs, NULL));
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  ASSERT_OK(ascModuleUnload(m));
  ASSERT_OK(ascModuleUnload(mo));
}

static void test_many_tiny_launches(void **state) {
  const int n = TEST_SCALE(1000000);
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "affine");
  int64_t x = 0, mul = 1, add = 1;
  ascTensor tx = test_tensor1(&x, ascInt64, 1);
  void *args[] = {&tx, &mul, &add};
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  for (int i = 0; i < n; i++)
    ASSERT_OK(ascLaunchKernel(k, 1, args, s));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(x, n);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
}

static int64_t my_tid(void) { return (int64_t)syscall(SYS_gettid); }

enum { SYNC_STREAM, SYNC_EVENT, SYNC_DEVICE };

/* Every worker is held by a block of stream a; a launch on stream b can
 * then only run on the host thread that waits, which lends itself to the
 * pool (docs/streams.md): ascStreamSynchronize(b), ascEventSynchronize of
 * an event recorded on b, or ascDeviceSynchronize.  Without that, release
 * never runs, the held blocks time out and raise, and the checks fail. */
static void sync_runs_held_work(int how) {
  ascModule_t m = test_load_kernels();
  int n = ncores();
  int64_t st[2] = {0, 0}, tid = 0;
  ascTensor ts = test_tensor1(st, ascInt64, 2),
            tt = test_tensor1(&tid, ascInt64, 1);
  void *hargs[] = {&ts}, *rargs[] = {&ts, &tt};
  ascStream_t a, b;
  ascEvent_t ev;

  ASSERT_OK(ascStreamCreateWithFlags(&a, ascStreamNonBlocking));
  ASSERT_OK(ascStreamCreateWithFlags(&b, ascStreamNonBlocking));
  ASSERT_OK(ascEventCreate(&ev));
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "hold"), (unsigned)n, hargs, a));
  (void)test_wait_count(&st[0], n, -1);
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "release"), 1, rargs, b));
  ASSERT_OK(ascEventRecord(ev, b));
  if (how == SYNC_STREAM)
    ASSERT_OK(ascStreamSynchronize(b));
  else if (how == SYNC_EVENT)
    ASSERT_OK(ascEventSynchronize(ev));
  else
    ASSERT_OK(ascDeviceSynchronize());
  assert_int_equal(tid, my_tid());
  ASSERT_OK(ascStreamSynchronize(a));
  ASSERT_OK(ascEventDestroy(ev));
  ASSERT_OK(ascStreamDestroy(a));
  ASSERT_OK(ascStreamDestroy(b));
  ASSERT_OK(ascModuleUnload(m));
}

static void test_sync_runs_own_stream(void **state) {
  (void)state;
  sync_runs_held_work(SYNC_STREAM);
}

static void test_event_sync_runs_recording_stream(void **state) {
  (void)state;
  sync_runs_held_work(SYNC_EVENT);
}

static void test_device_sync_runs_any_stream(void **state) {
  (void)state;
  sync_runs_held_work(SYNC_DEVICE);
}

/* A waiting thread works only on what it waits for: with every worker
 * held, ascEventSynchronize runs the launch queued before the record and
 * returns; the launch queued after the record (which would wait for this
 * thread) stays queued for a worker. */
static void test_event_sync_skips_later_work(void **state) {
  ascModule_t m = test_load_kernels();
  int n = ncores();
  int64_t sx[2] = {0, 0}, sb[2] = {0, 0};
  ascTensor tx = test_tensor1(sx, ascInt64, 2), tb = test_tensor1(sb, ascInt64, 2);
  void *ax[] = {&tx}, *ab[] = {&tb};
  ascStream_t x, a;
  ascEvent_t e;
  (void)state;
  ASSERT_OK(ascStreamCreateWithFlags(&x, ascStreamNonBlocking));
  ASSERT_OK(ascStreamCreateWithFlags(&a, ascStreamNonBlocking));
  ASSERT_OK(ascEventCreate(&e));
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "hold"), (unsigned)n, ax, x));
  (void)test_wait_count(&sx[0], n, -1);
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "empty"), 1, NULL, a));
  ASSERT_OK(ascEventRecord(e, a));
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "hold"), 1, ab, a));
  ASSERT_OK(ascEventSynchronize(e));
  assert_int_equal(__atomic_load_n(&sb[0], __ATOMIC_ACQUIRE), 0);
  __atomic_store_n(&sx[1], 1, __ATOMIC_RELEASE);
  (void)test_wait_count(&sb[0], 1, -1);
  __atomic_store_n(&sb[1], 1, __ATOMIC_RELEASE);
  ASSERT_OK(ascStreamSynchronize(a));
  ASSERT_OK(ascStreamSynchronize(x));
  ASSERT_OK(ascEventDestroy(e));
  ASSERT_OK(ascStreamDestroy(x));
  ASSERT_OK(ascStreamDestroy(a));
  ASSERT_OK(ascModuleUnload(m));
}

/* A fork through an event: the worker finishing K1 starts both stream
 * a's next launch and stream b's waiting one.  Both hold until the other
 * has started, so they must run at the same time: the worker that keeps
 * one for itself must not count as free for the other (which wakes a
 * parked worker).  Workers are left to park first. */
static void test_fork_runs_both_branches(void **state) {
  ascModule_t m = test_load_kernels();
  int64_t st[2] = {0, 0};
  ascTensor ts = test_tensor1(st, ascInt64, 2);
  void *args[] = {&ts};
  ascStream_t a, b;
  ascEvent_t e;
  struct timespec settle = {0, 50000000};
  int want = ncores() >= 2 ? 2 : 1;
  (void)state;
  ASSERT_OK(ascStreamCreateWithFlags(&a, ascStreamNonBlocking));
  ASSERT_OK(ascStreamCreateWithFlags(&b, ascStreamNonBlocking));
  ASSERT_OK(ascEventCreateWithFlags(&e, ascEventDisableTiming));
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "empty"), 1, NULL, a));
  ASSERT_OK(ascStreamSynchronize(a));
  nanosleep(&settle, NULL);
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "empty"), 1, NULL, a));
  ASSERT_OK(ascEventRecord(e, a));
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "hold"), 1, args, a));
  ASSERT_OK(ascStreamWaitEvent(b, e, 0));
  ASSERT_OK(ascLaunchKernel(test_kernel(m, "hold"), 1, args, b));
  /* Not synchronising: this thread must not be the one that helps. */
  assert_int_equal(test_wait_count(&st[0], want, 3000), want);
  __atomic_store_n(&st[1], 1, __ATOMIC_RELEASE);
  ASSERT_OK(ascStreamSynchronize(a));
  ASSERT_OK(ascStreamSynchronize(b));
  ASSERT_OK(ascEventDestroy(e));
  ASSERT_OK(ascStreamDestroy(a));
  ASSERT_OK(ascStreamDestroy(b));
  ASSERT_OK(ascModuleUnload(m));
}

/* A host thread with a small stack never runs kernel code: blocks may
 * use as much stack as a worker's. */
typedef struct small_stack {
  ascError_t err;
  int64_t kernel_tid, host_tid;
} small_stack;

static void *small_stack_main(void *arg) {
  small_stack *r = arg;
  ascModule_t m;
  int64_t st[2] = {0, 0};
  ascTensor ts = test_tensor1(st, ascInt64, 2),
            tt = test_tensor1(&r->kernel_tid, ascInt64, 1);
  void *rargs[] = {&ts, &tt};
  ascKernel_t k;
  ascStream_t s;

  r->host_tid = my_tid();
  r->err = ascModuleLoad(&m, TEST_MODULE("testkernels"));
  if (r->err == ascSuccess)
    r->err = ascModuleGetKernel(&k, m, "release");
  if (r->err == ascSuccess)
    r->err = ascStreamCreateWithFlags(&s, ascStreamNonBlocking);
  for (int i = 0; i < 200 && r->err == ascSuccess; i++) {
    r->err = ascLaunchKernel(k, 1, rargs, s);
    if (r->err == ascSuccess)
      r->err = ascStreamSynchronize(s);
    if (r->kernel_tid == r->host_tid)
      break;
  }
  if (r->err == ascSuccess)
    r->err = ascStreamDestroy(s);
  if (r->err == ascSuccess)
    r->err = ascModuleUnload(m);
  return NULL;
}

static void test_small_stack_host(void **state) {
  pthread_attr_t attr;
  pthread_t th;
  small_stack r = {ascSuccess, 0, 0};
  (void)state;
  assert_int_equal(pthread_attr_init(&attr), 0);
  assert_int_equal(pthread_attr_setstacksize(&attr, (size_t)512 << 10), 0);
  assert_int_equal(pthread_create(&th, &attr, small_stack_main, &r), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  pthread_attr_destroy(&attr);
  assert_int_equal(r.err, ascSuccess);
  assert_true(r.kernel_tid != 0);
  assert_true(r.kernel_tid != r.host_tid);
}

static void test_memcpy_memset_async(void **state) {
  const size_t n = (size_t)9 << 20;
  unsigned char *a = malloc(n), *b = malloc(n);
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  for (size_t i = 0; i < n; i++)
    a[i] = (unsigned char)(i * 31);
  ASSERT_OK(ascMemsetAsync(b, 0x5a, n, s));
  ASSERT_OK(ascStreamSynchronize(s));
  for (size_t i = 0; i < n; i++)
    if (b[i] != 0x5a)
      fail_msg("memset b[%zu] = %d", i, b[i]);
  ASSERT_OK(ascMemcpyAsync(b, a, n, ascMemcpyDefault, s));
  ASSERT_OK(ascMemcpyAsync(b + 3, a, 100, ascMemcpyHostToHost, s));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_memory_equal(b + 103, a + 103, n - 103);
  assert_memory_equal(b + 3, a, 100);
  ASSERT_ERR(ascMemcpyAsync(NULL, a, 1, ascMemcpyDefault, s),
             ascErrorInvalidValue);
  ASSERT_ERR(ascMemcpyAsync(b, NULL, 1, ascMemcpyDefault, s),
             ascErrorInvalidValue);
  ASSERT_ERR(ascMemcpyAsync(b, a, 1, (ascMemcpyKind)9, s),
             ascErrorInvalidValue);
  ASSERT_ERR(ascMemsetAsync(NULL, 0, 1, s), ascErrorInvalidValue);
  ASSERT_OK(ascMemsetAsync(NULL, 0, 0, s));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascMemsetAsync(b, 0, 1, s), ascErrorInvalidHandle);
  ASSERT_ERR(ascMemcpyAsync(b, a, 1, ascMemcpyDefault, s),
             ascErrorInvalidHandle);
  free(a);
  free(b);
}

static void *racer_main(void *arg) {
  test_racer_run(arg);
  return NULL;
}

/* ascDeviceReset races threads that launch (and specialise) a Python
 * kernel on the default stream: the reset waits for the calls already
 * inside, calls that start meanwhile get ascErrorNotPermitted, calls with
 * handles the reset destroyed get ascErrorInvalidHandle; nothing crashes
 * (run under ASan and TSan). */
static void test_reset_races_launch(void **state) {
  enum { NTHREADS = 3 };
  _Atomic(ascModule_t) shared = NULL;
  atomic_int stop = 0;
  test_racer r[NTHREADS];
  pthread_t th[NTHREADS];
  uint64_t t0 = (uint64_t)time(NULL);
  int rounds = 0, ok = 0, refused = 0;
  (void)state;
  memset(r, 0, sizeof r);
  for (int i = 0; i < NTHREADS; i++) {
    r[i].module = &shared;
    r[i].stop = &stop;
    assert_int_equal(pthread_create(&th[i], NULL, racer_main, &r[i]), 0);
  }
  /* Bounded: a few seconds whatever the machine. */
  while (rounds < 100 && (uint64_t)time(NULL) - t0 < 3) {
    ascModule_t m;
    struct timespec pause = {0, 300000L * (rounds % 8)};
    ASSERT_OK(ascModuleLoadPython(&m, TEST_RACE_TEXT, NULL));
    atomic_store(&shared, m);
    nanosleep(&pause, NULL);
    ASSERT_OK(ascDeviceReset());
    rounds++;
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < NTHREADS; i++) {
    pthread_join(th[i], NULL);
    if (r[i].bad > 0)
      fail_msg("thread %d: %d unexpected errors, first %s", i, r[i].bad,
               r[i].why);
    ok += r[i].ok;
    refused += r[i].refused;
  }
  print_message("%d resets, %d launches queued, %d refused\n", rounds, ok,
                refused);
  assert_true(ok > 0);
  assert_true(refused > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_empty_blocks, test_teardown),
      cmocka_unit_test_teardown(test_vadd, test_teardown),
      cmocka_unit_test_teardown(test_teams, test_teardown),
      cmocka_unit_test_teardown(test_not_spmd_runs_once, test_teardown),
      cmocka_unit_test_teardown(test_reduce, test_teardown),
      cmocka_unit_test_teardown(test_critical_and_shared, test_teardown),
      cmocka_unit_test_teardown(test_loop_exception_deterministic,
                                test_teardown),
      cmocka_unit_test_teardown(test_block_exceptions, test_teardown),
      cmocka_unit_test_teardown(test_barrier, test_teardown),
      cmocka_unit_test_teardown(test_validation, test_teardown),
      cmocka_unit_test_teardown(test_size_overflow_rejected, test_teardown),
      cmocka_unit_test_teardown(test_validation_one_door, test_teardown),
      cmocka_unit_test_teardown(test_many_tiny_launches, test_teardown),
      cmocka_unit_test_teardown(test_memcpy_memset_async, test_teardown),
      cmocka_unit_test_teardown(test_sync_runs_own_stream, test_teardown),
      cmocka_unit_test_teardown(test_event_sync_runs_recording_stream,
                                test_teardown),
      cmocka_unit_test_teardown(test_device_sync_runs_any_stream,
                                test_teardown),
      cmocka_unit_test_teardown(test_small_stack_host, test_teardown),
      cmocka_unit_test_teardown(test_event_sync_skips_later_work,
                                test_teardown),
      cmocka_unit_test_teardown(test_fork_runs_both_branches, test_teardown),
      cmocka_unit_test_teardown(test_reset_races_launch, test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
