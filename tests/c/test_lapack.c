/*
 * asc_krt.linalg (ABI 7, src/runtime/lapack.c) called as generated code
 * calls it, with a runtime table whose temporaries are counted: inv,
 * solve and det of float64 and complex128 matrices read through strides
 * (a transpose) and written to strided outputs, against the definition
 * (a @ x == b); cholesky's zeros above the diagonal; the statuses of a
 * singular and of a not positive definite matrix; eigh's values and
 * vectors; qr and svd of matrices that are not square; empty matrices
 * without the library; the work arrays all given
 * back, also when one cannot be had (nothing written then).
 */
#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "testutil.h"
#include "runtime/lapack.h"

static int live;         /* temporaries not given back */
static int fail_alloc;   /* the next alloc fails */

static void *t_alloc(asc_kctx *ctx, uint64_t bytes) {
  (void)ctx;
  if (fail_alloc) {
    fail_alloc = 0;
    return NULL;
  }
  live++;
  return malloc(bytes ? bytes : 1);
}

static void t_release(asc_kctx *ctx, void *p) {
  (void)ctx;
  if (p != NULL) {
    live--;
    free(p);
  }
}

static int32_t t_team_size(asc_kctx *ctx) {
  (void)ctx;
  return 1;
}

static asc_krt rt;
static asc_kctx ctx;

static int setup(void **state) {
  (void)state;
  memset(&rt, 0, sizeof rt);
  rt.abi_version = ASC_KABI_VERSION;
  rt.alloc = t_alloc;
  rt.release = t_release;
  rt.linalg = asc__krt_linalg;
  rt.team_size = t_team_size;
  ctx.rt = &rt;
  live = 0;
  return 0;
}

/* a[i][j] of a well-conditioned n x n matrix, stored transposed (column
 * major: strides 1, n) so the service reads it through strides. */
static double aval(int i, int j) {
  return (i == j ? 4.0 : 0.0) + (double)((i * 3 + j * 5) % 7) / 7.0 - 0.4;
}

static void test_inv_solve_det_f64(void **state) {
  enum { N = 5 };
  double a[N * N], x[N * N * 2], b[N], s[N], d;
  (void)state;
  for (int i = 0; i < N; i++) {
    b[i] = i + 1.0;
    for (int j = 0; j < N; j++)
      a[i + j * N] = aval(i, j);   /* a's (i, j) at strides (1, N) */
  }
  {
    /* inv into every other column of a N x 2N array */
    void *data[2] = {a, x};
    int64_t st[4] = {1, N, 2 * N, 2};
    assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_INV, ascFloat64, N, N,
                                     0, 2, data, st),
                     ASC_KLINALG_OK);
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        double acc = 0;
        for (int k = 0; k < N; k++)
          acc += aval(i, k) * x[k * 2 * N + j * 2];
        assert_true(fabs(acc - (i == j)) < 1e-12);
      }
  }
  {
    void *data[3] = {a, b, s};
    int64_t st[6] = {1, N, 1, 0, 1, 0};
    assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_SOLVE, ascFloat64, N,
                                     N, 1, 3, data, st),
                     ASC_KLINALG_OK);
    for (int i = 0; i < N; i++) {
      double acc = 0;
      for (int k = 0; k < N; k++)
        acc += aval(i, k) * s[k];
      assert_true(fabs(acc - b[i]) < 1e-12);
    }
  }
  {
    /* det(a) = prod of the eigenvalues; check against inv: det(a) *
     * det(inv(a)) == 1 */
    double d2;
    void *data[2] = {a, &d}, *data2[2] = {x, &d2};
    int64_t st[4] = {1, N, 0, 0}, st2[4] = {2 * N, 2, 0, 0};
    assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_DET, ascFloat64, N, N,
                                     0, 2, data, st),
                     ASC_KLINALG_OK);
    assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_DET, ascFloat64, N, N,
                                     0, 2, data2, st2),
                     ASC_KLINALG_OK);
    assert_true(fabs(d * d2 - 1.0) < 1e-12);
    assert_true(d > 1.0);
  }
  assert_int_equal(live, 0);
}

static void test_complex_solve(void **state) {
  enum { N = 4, K = 2 };
  double complex a[N * N], b[N * K], x[N * K];
  void *data[3] = {a, b, x};
  int64_t st[6] = {N, 1, K, 1, K, 1};
  (void)state;
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      a[i * N + j] = aval(i, j) + I * aval(j, i) * 0.5;
    for (int k = 0; k < K; k++)
      b[i * K + k] = (i + 1) - I * k;
  }
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_SOLVE, ascComplex128, N,
                                   N, K, 3, data, st),
                   ASC_KLINALG_OK);
  for (int i = 0; i < N; i++)
    for (int k = 0; k < K; k++) {
      double complex acc = 0;
      for (int j = 0; j < N; j++)
        acc += a[i * N + j] * x[j * K + k];
      assert_true(cabs(acc - b[i * K + k]) < 1e-12);
    }
  assert_int_equal(live, 0);
}

static void test_statuses(void **state) {
  double z[9] = {1, 2, 3, 2, 4, 6, 0, 1, 1}, out[9], d = 7;
  double neg[4] = {-1, 0, 0, -1};
  void *data[2] = {z, out};
  int64_t st[4] = {3, 1, 3, 1};
  (void)state;
  for (int i = 0; i < 9; i++)
    out[i] = -5;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_INV, ascFloat64, 3, 3, 0,
                                   2, data, st),
                   ASC_KLINALG_SINGULAR);
  for (int i = 0; i < 9; i++)
    assert_true(out[i] == -5);   /* nothing written */
  data[1] = &d;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_DET, ascFloat64, 3, 3, 0,
                                   2, data, st),
                   ASC_KLINALG_OK);
  assert_true(d == 0.0);   /* numpy: a singular matrix's det is 0 */
  data[0] = neg;
  data[1] = out;
  st[0] = 2, st[2] = 2;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_CHOLESKY, ascFloat64, 2,
                                   2, 0, 2, data, st),
                   ASC_KLINALG_NOT_PD);
  /* what it does not take */
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_INV, ascInt32, 2, 2, 0,
                                   2, data, st),
                   ASC_KLINALG_UNSUPPORTED);
  assert_int_equal(asc__krt_linalg(&ctx, 99, ascFloat64, 2, 2, 0, 2, data,
                                   st),
                   ASC_KLINALG_UNSUPPORTED);
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_SOLVE, ascFloat64, 2, 2,
                                   1, 2, data, st),
                   ASC_KLINALG_UNSUPPORTED);   /* solve takes 3 operands */
  /* no work array: nothing written, nothing leaked */
  data[0] = z;
  st[0] = 3, st[2] = 3;
  fail_alloc = 1;
  out[0] = -5;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_INV, ascFloat64, 3, 3, 0,
                                   2, data, st),
                   ASC_KLINALG_NO_MEMORY);
  assert_true(out[0] == -5);
  assert_int_equal(live, 0);
}

static void test_cholesky_and_eigh_f32(void **state) {
  enum { N = 3 };
  /* symmetric positive definite; the upper triangle holds junk that the
   * routines must not read (numpy reads the lower one) */
  float a[N * N] = {4, 99, 99, 2, 5, 99, 1, 0.5f, 3};
  float l[N * N], w[N], v[N * N];
  void *data[3] = {a, l, NULL};
  int64_t st[6] = {N, 1, N, 1, N, 1};
  (void)state;
  memset(l, 0x7f, sizeof l);
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_CHOLESKY, ascFloat32, N,
                                   N, 0, 2, data, st),
                   ASC_KLINALG_OK);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0, want = i >= j ? a[i * N + j] : a[j * N + i];
      if (j > i)
        assert_true(l[i * N + j] == 0.0f);
      for (int k = 0; k < N; k++)
        acc += l[i * N + k] * l[j * N + k];
      assert_true(fabsf(acc - want) < 1e-5f);
    }
  data[1] = w;
  data[2] = v;
  st[2] = 1, st[3] = 0;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_EIGH, ascFloat32, N, N,
                                   0, 3, data, st),
                   ASC_KLINALG_OK);
  assert_true(w[0] <= w[1] && w[1] <= w[2]);
  for (int j = 0; j < N; j++)   /* a v[:, j] == w[j] v[:, j] */
    for (int i = 0; i < N; i++) {
      float acc = 0;
      for (int k = 0; k < N; k++)
        acc += (i >= k ? a[i * N + k] : a[k * N + i]) * v[k * N + j];
      assert_true(fabsf(acc - w[j] * v[i * N + j]) < 1e-4f);
    }
  assert_int_equal(live, 0);
}

/* qr of a 4 x 2 matrix (q @ r == a, q's columns orthonormal, r upper);
 * svd of a 2 x 3 one (u s vh == a), and svd's identities of an empty
 * matrix. */
static void test_qr_svd(void **state) {
  double a[8] = {1, 2, 3, 4, 5, 6, 7, 9}, q[8], r[4] = {7, 7, 7, 7};
  double b[6] = {1, 2, 3, 4, 5, 7}, s[2], u[4], vh[9], eye[9];
  void *data[4] = {a, q, r, NULL};
  int64_t st[8] = {2, 1, 2, 1, 2, 1, 0, 0};
  (void)state;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_QR, ascFloat64, 4, 2, 0,
                                   3, data, st),
                   ASC_KLINALG_OK);
  assert_true(r[2] == 0.0);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++)
      assert_true(fabs(q[i * 2] * r[j] + q[i * 2 + 1] * r[2 + j] -
                       a[i * 2 + j]) < 1e-12);
  assert_true(fabs(q[0] * q[1] + q[2] * q[3] + q[4] * q[5] + q[6] * q[7]) <
              1e-12);
  data[0] = b, data[1] = s, data[2] = u, data[3] = vh;
  st[0] = 3, st[2] = 1, st[3] = 0, st[4] = 2, st[6] = 3, st[7] = 1;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_SVD, ascFloat64, 2, 3, 1,
                                   4, data, st),
                   ASC_KLINALG_OK);
  assert_true(s[0] >= s[1] && s[1] > 0);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      double acc = 0;
      for (int k = 0; k < 2; k++)
        acc += u[i * 2 + k] * s[k] * vh[k * 3 + j];
      assert_true(fabs(acc - b[i * 3 + j]) < 1e-12);
    }
  /* empty: u (0 x 0) and vh (3 x 3), vh the identity */
  memset(eye, 0x55, sizeof eye);
  data[3] = eye;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_SVD, ascFloat64, 0, 3, 1,
                                   4, data, st),
                   ASC_KLINALG_OK);
  for (int i = 0; i < 9; i++)
    assert_true(eye[i] == (i % 4 == 0 ? 1.0 : 0.0));
  assert_int_equal(live, 0);
}

/* lstsq of a tall 3 x 2 matrix: x from the normal equations, the
 * squared residual, the rank, two singular values. */
static void test_lstsq(void **state) {
  double a[6] = {1, 0, 0, 1, 1, 1}, b[3] = {1, 2, 4}, x[2], res = -1, s[2];
  int64_t rank = -1;
  void *data[6] = {a, b, x, &res, &rank, s};
  int64_t st[12] = {2, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0};
  (void)state;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_LSTSQ, ascFloat64, 3, 2,
                                   1, 6, data, st),
                   ASC_KLINALG_OK);
  assert_true(fabs(x[0] - 4.0 / 3) < 1e-12 && fabs(x[1] - 7.0 / 3) < 1e-12);
  assert_true(fabs(res - 1.0 / 3) < 1e-12);
  assert_int_equal(rank, 2);
  assert_true(fabs(s[0] - sqrt(3.0)) < 1e-12 && fabs(s[1] - 1.0) < 1e-12);
  assert_int_equal(live, 0);
}

static void test_empty(void **state) {
  double d = 0, sign = 0, logabs = 5;
  void *data[3] = {NULL, &d, NULL};
  int64_t st[6] = {0};
  (void)state;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_DET, ascFloat64, 0, 0, 0,
                                   2, data, st),
                   ASC_KLINALG_OK);
  assert_true(d == 1.0);   /* numpy's det of a 0 x 0 matrix */
  data[1] = &sign;
  data[2] = &logabs;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_SLOGDET, ascFloat64, 0, 0,
                                   0, 3, data, st),
                   ASC_KLINALG_OK);
  assert_true(sign == 1.0 && logabs == 0.0);
  assert_int_equal(live, 0);
}

/* ASC_KLINALG_DOTS and _GEMV2, which need no LAPACK: against their
 * definitions (strided and reversed operands, a row group short of four),
 * and the statuses of what they do not take. */
static void test_dots_and_gemv2(void **state) {
  enum { N = 1000, M = 7, K = 37 };
  static double x[2 * N], y[N], res[3];
  static double a[M * 40], p[K], r[M], q[M], s[K];
  void *data[7];
  int64_t st[14] = {0};
  (void)state;
  for (int i = 0; i < 2 * N; i++)
    x[i] = (double)(i % 13) - 6.0;
  for (int i = 0; i < N; i++)
    y[i] = (double)(i % 7) * 0.5 - 1.0;
  /* x[::2] . y, y . y, x[::-1][:N] . y */
  data[0] = x, st[0] = 2;
  data[1] = y, st[2] = 1;
  data[2] = y, st[4] = 1;
  data[3] = y, st[6] = 1;
  data[4] = x + 2 * N - 1, st[8] = -1;
  data[5] = y, st[10] = 1;
  data[6] = res, st[12] = 1;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_DOTS, ascFloat64, 3, N,
                                   0, 7, data, st),
                   ASC_KLINALG_OK);
  {
    double w0 = 0, w1 = 0, w2 = 0;
    for (int i = 0; i < N; i++) {
      w0 += x[2 * i] * y[i];
      w1 += y[i] * y[i];
      w2 += x[2 * N - 1 - i] * y[i];
    }
    assert_true(fabs(res[0] - w0) < 1e-9 && fabs(res[1] - w1) < 1e-9 &&
                fabs(res[2] - w2) < 1e-9);
  }
  /* what it does not take */
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_DOTS, ascFloat64, 3, N,
                                   0, 5, data, st),
                   ASC_KLINALG_UNSUPPORTED);
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_DOTS, ascFloat64, 9, N,
                                   0, 19, data, st),
                   ASC_KLINALG_UNSUPPORTED);
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_DOTS, ascInt64, 3, N, 0,
                                   7, data, st),
                   ASC_KLINALG_UNSUPPORTED);

  /* q = a @ p, s = r @ a; a's rows 40 apart (a view of 37 columns) */
  for (int i = 0; i < M * 40; i++)
    a[i] = (double)((i * 7) % 11) - 5.0;
  for (int j = 0; j < K; j++)
    p[j] = (double)(j % 5) - 2.0;
  for (int i = 0; i < M; i++)
    r[i] = (double)i - 3.0;
  memset(st, 0, sizeof st);
  data[0] = a, st[0] = 40, st[1] = 1;
  data[1] = p, st[2] = 1;
  data[2] = r + M - 1, st[4] = -1;   /* r[::-1] */
  data[3] = q, st[6] = 1;
  data[4] = s, st[8] = 1;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_GEMV2, ascFloat64, M, K,
                                   0, 5, data, st),
                   ASC_KLINALG_OK);
  for (int i = 0; i < M; i++) {
    double w = 0;
    for (int j = 0; j < K; j++)
      w += a[i * 40 + j] * p[j];
    assert_true(fabs(q[i] - w) < 1e-9);
  }
  for (int j = 0; j < K; j++) {
    double w = 0;
    for (int i = 0; i < M; i++)
      w += r[M - 1 - i] * a[i * 40 + j];
    assert_true(fabs(s[j] - w) < 1e-9);
  }
  assert_int_equal(live, 0);
  /* its work array cannot be had: nothing written, nothing kept */
  q[0] = 99.0;
  s[0] = 99.0;
  fail_alloc = 1;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_GEMV2, ascFloat64, M, K,
                                   0, 5, data, st),
                   ASC_KLINALG_NO_MEMORY);
  assert_true(q[0] == 99.0 && s[0] == 99.0);
  assert_int_equal(live, 0);
  /* columns not contiguous: the products' own paths */
  st[1] = 2;
  assert_int_equal(asc__krt_linalg(&ctx, ASC_KLINALG_GEMV2, ascFloat64, M, K,
                                   0, 5, data, st),
                   ASC_KLINALG_UNSUPPORTED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_inv_solve_det_f64, setup),
      cmocka_unit_test_setup(test_complex_solve, setup),
      cmocka_unit_test_setup(test_statuses, setup),
      cmocka_unit_test_setup(test_cholesky_and_eigh_f32, setup),
      cmocka_unit_test_setup(test_qr_svd, setup),
      cmocka_unit_test_setup(test_lstsq, setup),
      cmocka_unit_test_setup(test_empty, setup),
      cmocka_unit_test_setup(test_dots_and_gemv2, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
