/*
 * asc_krt.gemm (ABI 3, src/runtime/blas.c): products of float32 and
 * float64 matrices of every layout the service meets (row-major,
 * transposed, strided, reversed), empty and 1-wide shapes, one block and
 * several, against a naive product; the ASC_BLAS=0 switch and the dtypes
 * it leaves to the caller; the OpenBLAS kernels chosen for the CPU; and
 * a module of ABI version 2 that still loads and runs.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>

#include "testutil.h"
#include "runtime/blas.h"

/* An m x n operand in a buffer of its own, in layout L:
 * 0 row-major, 1 column-major (a transpose), 2 every other element of a
 * row-major matrix twice as wide, 3 row-major with its columns reversed. */
typedef struct mat {
  void *buf;
  ascTensor t;
} mat;

static double val(int64_t i, int64_t j, int salt) {
  return (double)((i * 7 + j * 13 + salt * 5) % 17) / 8.0 - 1.0;
}

static mat make(ascDataType dt, int64_t m, int64_t n, int L, int salt) {
  mat x;
  size_t es = dt == ascFloat32 ? 4 : 8;
  int64_t w = L == 2 ? 2 * n : n, total = (m > 0 ? m : 1) * (w > 0 ? w : 1);
  memset(&x, 0, sizeof x);
  x.buf = calloc((size_t)total, es);
  assert_non_null(x.buf);
  x.t.dtype = dt;
  x.t.ndim = 2;
  x.t.shape[0] = m;
  x.t.shape[1] = n;
  switch (L) {
  case 0:
    x.t.strides[0] = n;
    x.t.strides[1] = 1;
    break;
  case 1:
    x.t.strides[0] = 1;
    x.t.strides[1] = m;
    break;
  case 2:
    x.t.strides[0] = 2 * n;
    x.t.strides[1] = 2;
    break;
  default:
    x.t.strides[0] = n;
    x.t.strides[1] = -1;
    break;
  }
  x.t.data = (char *)x.buf + (L == 3 && n > 0 ? (size_t)(n - 1) * es : 0);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      int64_t o = i * x.t.strides[0] + j * x.t.strides[1];
      if (dt == ascFloat32)
        ((float *)x.t.data)[o] = (float)val(i, j, salt);
      else
        ((double *)x.t.data)[o] = val(i, j, salt);
    }
  return x;
}

static double at(const ascTensor *t, int64_t i, int64_t j) {
  int64_t o = i * t->strides[0] + j * t->strides[1];
  return t->dtype == ascFloat32 ? ((const float *)t->data)[o]
                                : ((const double *)t->data)[o];
}

/* Launches gemm on blocks blocks; returns the status of block 0 (all
 * must agree) and checks every block's c against the naive product when
 * that status is 0. */
static int64_t run_gemm(ascKernel_t k, ascDataType dt, int64_t m, int64_t n,
                        int64_t kk, int La, int Lb, uint32_t blocks) {
  mat a = make(dt, m, kk, La, 1), b = make(dt, kk, n, Lb, 2);
  size_t es = dt == ascFloat32 ? 4 : 8;
  int64_t cn = (int64_t)blocks * (m > 0 ? m : 1) * (n > 0 ? n : 1);
  void *cbuf = malloc((size_t)cn * es);
  int64_t st[8];
  ascTensor c, s = test_tensor1(st, ascInt64, 8);
  void *args[] = {&a.t, &b.t, &c, &s};
  ascStream_t str;
  assert_non_null(cbuf);
  for (int64_t i = 0; i < cn; i++) {
    if (dt == ascFloat32)
      ((float *)cbuf)[i] = 1234.0f;
    else
      ((double *)cbuf)[i] = 1234.0;
  }
  memset(&c, 0, sizeof c);
  c.data = cbuf;
  c.dtype = dt;
  c.ndim = 3;
  c.shape[0] = blocks;
  c.shape[1] = m;
  c.shape[2] = n;
  c.strides[2] = 1;
  c.strides[1] = n;
  c.strides[0] = m * n;
  for (int i = 0; i < 8; i++)
    st[i] = -1;
  ASSERT_OK(ascStreamCreate(&str));
  ASSERT_OK(ascLaunchKernel(k, blocks, args, str));
  ASSERT_OK(ascStreamSynchronize(str));
  ASSERT_OK(ascStreamDestroy(str));
  for (uint32_t q = 0; q < blocks; q++)
    assert_int_equal(st[q], st[0]);
  if (st[0] == 0) {
    for (uint32_t q = 0; q < blocks; q++) {
      ascTensor cq = c;
      cq.data = (char *)cbuf + (size_t)(q * m * n) * es;
      cq.strides[0] = n;
      cq.strides[1] = 1;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double want = 0, got = at(&cq, i, j);
          for (int64_t p = 0; p < kk; p++)
            want += at(&a.t, i, p) * at(&b.t, p, j);
          if (fabs(got - want) > (dt == ascFloat32 ? 1e-4 : 1e-12) *
                                     (double)(kk + 1))
            fail_msg("%s %lldx%lldx%lld layouts %d,%d block %u: c[%lld,%lld]"
                     " = %g, want %g",
                     dt == ascFloat32 ? "f32" : "f64", (long long)m,
                     (long long)kk, (long long)n, La, Lb, q, (long long)i,
                     (long long)j, got, want);
        }
    }
  } else if (m > 0 && n > 0) {
    /* not done: c untouched, for the caller's loops */
    assert_true(at(&(ascTensor){.data = cbuf, .dtype = dt, .ndim = 2,
                                .strides = {1, 1}},
                   0, 0) == 1234.0);
  }
  free(cbuf);
  free(a.buf);
  free(b.buf);
  return st[0];
}

static ascKernel_t load_gemm(ascModule_t *m) {
  ASSERT_OK(ascModuleLoad(m, TEST_MODULE("gemmkernels")));
  return test_kernel(*m, "gemm");
}

/* Many products at once, from every block's team: Debian's sequential
 * OpenBLAS (no USE_LOCKING) gave wrong elements now and then here, which
 * is why the threaded build is loaded first and a sequential one is
 * called one product at a time (jit/blas.c, docs/decisions.md). */
static void test_gemm_concurrent_calls(void **state) {
  ascModule_t m;
  ascKernel_t k = load_gemm(&m);
  int64_t want = asc__blas_library() != NULL ? 0 : 1;
  (void)state;
  unsetenv("ASC_BLAS");
  for (int rep = 0; rep < 40; rep++)
    assert_int_equal(run_gemm(k, rep % 2 ? ascFloat64 : ascFloat32, 130, 90,
                              70, rep % 4 == 0 ? 0 : 1, 1, 4),
                     want);
  ASSERT_OK(ascModuleUnload(m));
}

/* An OpenBLAS loaded for the products runs the kernels of the CPU's
 * vector units: Debian 12's picked its SSE3 ones (Prescott) on CPUs whose
 * model it does not know, 3-4x slower (jit/blas.c), and the variable that
 * corrects it is not left in the environment. */
static void test_openblas_kernels_fit_the_cpu(void **state) {
  const char *name, *want = NULL, *got;
  void *h;
  const char *(*corename)(void);
  (void)state;
  unsetenv("OPENBLAS_CORETYPE");
  name = asc__blas_library();
  if (name == NULL || strstr(name, "openblas") == NULL) {
    print_message("no OpenBLAS loaded (%s): nothing to check\n",
                  name ? name : "none");
    return;
  }
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    want = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    want = "Haswell";
  else if (__builtin_cpu_supports("avx"))
    want = "SandyBridge";
  h = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(h);
  *(void **)&corename = dlsym(h, "openblas_get_corename");
  assert_non_null(corename);
  got = corename();
  print_message("OpenBLAS %s: kernels %s\n", name, got);
  if (want != NULL)
    assert_string_equal(got, want);
  assert_null(getenv("OPENBLAS_CORETYPE"));
  dlclose(h);
}

static void test_gemm_layouts_and_shapes(void **state) {
  static const int64_t shapes[][3] = {{5, 7, 4},   {0, 3, 4},  {3, 0, 4},
                                      {3, 4, 0},   {1, 9, 6},  {6, 9, 1},
                                      {1, 5, 1},   {37, 53, 29},
                                      {130, 70, 90}, {2, 300, 700}};
  ascModule_t m;
  ascKernel_t k = load_gemm(&m);
  int64_t want = asc__blas_library() != NULL ? 0 : 1;
  (void)state;
  unsetenv("ASC_BLAS");
  print_message("BLAS: %s\n", asc__blas_library() ? asc__blas_library()
                                                  : "(none: status 1)");
  for (int d = 0; d < 2; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
      for (int La = 0; La < 4; La++)
        for (int Lb = 0; Lb < 4; Lb++) {
          int64_t r = run_gemm(k, d ? ascFloat64 : ascFloat32, shapes[s][0],
                               shapes[s][2], shapes[s][1], La, Lb,
                               (La + Lb) % 3 == 0 ? 3 : 1);
          if (r != want)
            fail_msg("%lldx%lldx%lld layouts %d,%d: status %lld, want %lld",
                     (long long)shapes[s][0], (long long)shapes[s][1],
                     (long long)shapes[s][2], La, Lb, (long long)r,
                     (long long)want);
        }
  ASSERT_OK(ascModuleUnload(m));
}

static void test_gemm_declines(void **state) {
  ascModule_t m;
  ascKernel_t k = load_gemm(&m);
  (void)state;
  /* the run-time switch: nothing done, c untouched */
  setenv("ASC_BLAS", "0", 1);
  assert_int_equal(run_gemm(k, ascFloat32, 20, 30, 40, 0, 1, 2), 1);
  assert_int_equal(run_gemm(k, ascFloat64, 20, 30, 40, 0, 0, 1), 1);
  unsetenv("ASC_BLAS");
  /* other dtypes are the caller's */
  {
    int64_t a[6] = {1, 2, 3, 4, 5, 6}, c[4] = {7, 7, 7, 7}, st[1] = {-1};
    ascTensor ta, tb, tc, ts = test_tensor1(st, ascInt64, 1);
    void *args[] = {&ta, &tb, &tc, &ts};
    ascStream_t s;
    memset(&ta, 0, sizeof ta);
    ta.data = a;
    ta.dtype = ascInt64;
    ta.ndim = 2;
    ta.shape[0] = 2;
    ta.shape[1] = 3;
    ta.strides[0] = 3;
    ta.strides[1] = 1;
    tb = ta;
    tb.shape[0] = 3;
    tb.shape[1] = 2;
    tb.strides[0] = 2;
    tc = ta;
    tc.data = c;
    tc.ndim = 3;
    tc.shape[0] = 1;
    tc.shape[1] = 2;
    tc.shape[2] = 2;
    tc.strides[0] = 4;
    tc.strides[1] = 2;
    tc.strides[2] = 1;
    ASSERT_OK(ascStreamCreate(&s));
    ASSERT_OK(ascLaunchKernel(k, 1, args, s));
    ASSERT_OK(ascStreamSynchronize(s));
    ASSERT_OK(ascStreamDestroy(s));
    assert_int_equal(st[0], 1);
    assert_int_equal(c[0], 7);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* gemm_ab on one block: c (m x n, C order, every element c0) = alpha *
 * a @ b + beta * c; returns the status and checks c when it is 0. */
static int64_t run_gemm_ab(ascKernel_t k, int64_t m, int64_t n, int64_t kk,
                           double alpha, double beta, double c0) {
  mat a = make(ascFloat64, m, kk, 0, 1), b = make(ascFloat64, kk, n, 1, 2);
  double *cb = malloc((size_t)(m * n + 1) * sizeof *cb), ab[2] = {alpha, beta};
  int64_t st[1] = {-1};
  ascTensor c, tab = test_tensor1(ab, ascFloat64, 2),
               ts = test_tensor1(st, ascInt64, 1);
  void *args[] = {&a.t, &b.t, &c, &tab, &ts};
  ascStream_t s;
  assert_non_null(cb);
  for (int64_t i = 0; i < m * n; i++)
    cb[i] = c0;
  memset(&c, 0, sizeof c);
  c.data = cb;
  c.dtype = ascFloat64;
  c.ndim = 2;
  c.shape[0] = m;
  c.shape[1] = n;
  c.strides[0] = n;
  c.strides[1] = 1;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascLaunchKernel(k, 1, args, s));
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascStreamDestroy(s));
  if (st[0] == 0)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double sum = 0, want, got = cb[i * n + j];
        for (int64_t p = 0; p < kk; p++)
          sum += at(&a.t, i, p) * at(&b.t, p, j);
        /* beta 0: c is not read (a nan in it is gone) */
        want = alpha * sum + (beta == 0.0 ? 0.0 : beta * c0);
        if (fabs(got - want) > 1e-12 * (double)(kk + 1))
          fail_msg("%lldx%lldx%lld alpha %g beta %g: c[%lld,%lld] = %g, "
                   "want %g",
                   (long long)m, (long long)kk, (long long)n, alpha, beta,
                   (long long)i, (long long)j, got, want);
      }
  free(cb);
  free(a.buf);
  free(b.buf);
  return st[0];
}

static void test_gemm_ab(void **state) {
  static const int64_t shapes[][3] = {{5, 7, 4}, {3, 0, 4}, {1, 9, 6},
                                      {6, 9, 1}, {130, 70, 90}};
  ascModule_t m;
  ascKernel_t k;
  int64_t want = asc__blas_library() != NULL ? 0 : 1;
  (void)state;
  unsetenv("ASC_BLAS");
  ASSERT_OK(ascModuleLoad(&m, TEST_MODULE("gemmkernels")));
  k = test_kernel(m, "gemm_ab");
  for (size_t q = 0; q < sizeof shapes / sizeof *shapes; q++) {
    assert_int_equal(run_gemm_ab(k, shapes[q][0], shapes[q][2], shapes[q][1],
                                 1.5, -0.5, 2.0),
                     want);
    assert_int_equal(run_gemm_ab(k, shapes[q][0], shapes[q][2], shapes[q][1],
                                 1.0, 0.0, NAN),
                     want);
  }
  /* c sharing memory with a or b: nothing done, c untouched */
  {
    double buf[36], ab[2] = {1.0, 1.0};
    int64_t st[1] = {-1};
    ascTensor x, y, ts = test_tensor1(st, ascInt64, 1),
                    tab = test_tensor1(ab, ascFloat64, 2);
    void *args[] = {&x, &y, &x, &tab, &ts};
    ascStream_t s;
    for (int i = 0; i < 36; i++)
      buf[i] = i;
    memset(&x, 0, sizeof x);
    x.data = buf;
    x.dtype = ascFloat64;
    x.ndim = 2;
    x.shape[0] = x.shape[1] = 3;
    x.strides[0] = 3;
    x.strides[1] = 1;
    y = x;
    y.data = buf + 18;
    ASSERT_OK(ascStreamCreate(&s));
    ASSERT_OK(ascLaunchKernel(k, 1, args, s)); /* c is a */
    ASSERT_OK(ascStreamSynchronize(s));
    assert_int_equal(st[0], 1);
    args[0] = &y;
    args[1] = &x; /* c is b */
    st[0] = -1;
    ASSERT_OK(ascLaunchKernel(k, 1, args, s));
    ASSERT_OK(ascStreamSynchronize(s));
    assert_int_equal(st[0], 1);
    /* c: rows 1.. of a 4 x 3 array whose rows 0..2 are a */
    {
      ascTensor c = x;
      void *args2[] = {&x, &y, &c, &tab, &ts};
      c.data = buf + 3;
      st[0] = -1;
      ASSERT_OK(ascLaunchKernel(k, 1, args2, s));
      ASSERT_OK(ascStreamSynchronize(s));
      assert_int_equal(st[0], 1);
      /* disjoint: done (when there is a BLAS) */
      c.data = buf + 9;
      st[0] = -1;
      ASSERT_OK(ascLaunchKernel(k, 1, args2, s));
      ASSERT_OK(ascStreamSynchronize(s));
      assert_int_equal(st[0], asc__blas_library() != NULL ? 0 : 1);
    }
    ASSERT_OK(ascStreamDestroy(s));
    for (int i = 0; i < 9; i++)
      assert_true(buf[i] == i);
  }
  ASSERT_OK(ascModuleUnload(m));
}

static void test_abi2_module_runs(void **state) {
  ascModule_t m;
  ascKernel_t k;
  float x[5] = {0};
  float v = 2.5f;
  ascTensor t = test_tensor1(x, ascFloat32, 5);
  void *args[] = {&t, &v};
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascModuleLoad(&m, TEST_MODULE("abi2")));
  k = test_kernel(m, "fill");
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascLaunchKernel(k, 2, args, s));
  ASSERT_OK(ascStreamSynchronize(s));
  ASSERT_OK(ascStreamDestroy(s));
  for (int i = 0; i < 5; i++)
    assert_true(x[i] == 2.5f);
  ASSERT_OK(ascModuleUnload(m));
}

/* Version 2 did not define the flag bit ASC_KERNEL_NOT_SPMD has since
 * version 5: a version-2 kernel carrying it still runs once per block. */
static void test_abi2_flag_bit_ignored(void **state) {
  ascModule_t m;
  ascKernel_t k;
  int32_t x = 0;
  ascTensor t = test_tensor1(&x, ascInt32, 1);
  void *args[] = {&t};
  (void)state;
  ASSERT_OK(ascModuleLoad(&m, TEST_MODULE("abi2")));
  k = test_kernel(m, "count");
  ASSERT_OK(ascLaunchKernel(k, 4, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(x, 4);
  ASSERT_OK(ascModuleUnload(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_gemm_layouts_and_shapes, test_teardown),
      cmocka_unit_test_teardown(test_gemm_concurrent_calls, test_teardown),
      cmocka_unit_test_teardown(test_openblas_kernels_fit_the_cpu,
                                test_teardown),
      cmocka_unit_test_teardown(test_gemm_declines, test_teardown),
      cmocka_unit_test_teardown(test_gemm_ab, test_teardown),
      cmocka_unit_test_teardown(test_abi2_module_runs, test_teardown),
      cmocka_unit_test_teardown(test_abi2_flag_bit_ignored, test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
