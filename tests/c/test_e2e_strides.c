/*
 * End to end: tensors that are not contiguous.  Transposed views,
 * every-other-element views, reversed views (negative stride, data pointer
 * at the last element), empty and one-element tensors must give exactly
 * what the contiguous path gives, and a strided output must leave the
 * elements between its own untouched.
 */
#include <stdlib.h>

#include "e2e.h"

static ascModule_t mod;

static int setup(void **state) {
  (void)state;
  return e2e_group_setup(&mod, "strides.py");
}

static int teardown(void **state) { return e2e_group_teardown(mod, state); }

static ascTensor view1(double *data, int64_t n, int64_t stride) {
  ascTensor t = e2e_t1(data, ascFloat64, n);
  t.strides[0] = stride;
  return t;
}

static ascTensor view2(double *data, int64_t r, int64_t c, int64_t sr,
                       int64_t sc) {
  ascTensor t = e2e_t2(data, ascFloat64, r, c);
  t.strides[0] = sr;
  t.strides[1] = sc;
  return t;
}

#define SENTINEL -12345.5

static void test_transposed_view(void **state) {
  enum { R = 5, C = 7 };
  double base[R * C], tcopy[C * R], b[C * R], c1[C * R], c2[C * R];
  ascTensor tv = view2(base, C, R, 1, C); /* base transposed: C x R */
  ascTensor tc = e2e_t2(tcopy, ascFloat64, C, R);
  ascTensor tb = e2e_t2(b, ascFloat64, C, R);
  ascTensor t1 = e2e_t2(c1, ascFloat64, C, R), t2 = e2e_t2(c2, ascFloat64, C, R);
  (void)state;
  for (int i = 0; i < R * C; i++) {
    base[i] = i * 0.5 - 3;
    b[i] = 100 + i;
  }
  for (int i = 0; i < C; i++)
    for (int j = 0; j < R; j++)
      tcopy[i * R + j] = base[j * C + i];
  E2E_RUN(mod, "add2", &tv, &tb, &t1);
  E2E_RUN(mod, "add2", &tc, &tb, &t2);
  for (int i = 0; i < C * R; i++) {
    double ref = tcopy[i] * 3 + b[i];
    if (c1[i] != ref || c2[i] != ref)
      fail_msg("add2[%d]: transposed %g, contiguous %g, expected %g", i,
               c1[i], c2[i], ref);
  }
  /* a transposed output too */
  for (int i = 0; i < R * C; i++)
    c1[i] = SENTINEL;
  t1 = view2(c1, C, R, 1, C);
  E2E_RUN(mod, "add2", &tc, &tb, &t1);
  for (int i = 0; i < C; i++)
    for (int j = 0; j < R; j++)
      if (c1[j * C + i] != c2[i * R + j])
        fail_msg("transposed output (%d, %d): %g, expected %g", i, j,
                 c1[j * C + i], c2[i * R + j]);
}

static void test_every_other_element(void **state) {
  enum { N = 37 };
  double x[2 * N], y[N], out[3 * N], ref[N];
  ascTensor tx = view1(x, N, 2), ty = e2e_t1(y, ascFloat64, N),
            to = view1(out, N, 3);
  ascScalar alpha = e2e_weak_float(1.5);
  (void)state;
  for (int i = 0; i < 2 * N; i++)
    x[i] = i % 2 ? 1e9 : i * 0.25;
  for (int i = 0; i < N; i++) {
    y[i] = -i;
    ref[i] = 1.5 * x[2 * i] + y[i];
  }
  for (int i = 0; i < 3 * N; i++)
    out[i] = SENTINEL;
  E2E_RUN(mod, "axpy", &tx, &ty, &to, &alpha);
  for (int i = 0; i < 3 * N; i++) {
    double want = i % 3 ? SENTINEL : ref[i / 3];
    if (out[i] != want)
      fail_msg("out buffer[%d] = %g, expected %g", i, out[i], want);
  }
  /* the same through the prefix sum (a loop-carried dependency) */
  for (int i = 0; i < 3 * N; i++)
    out[i] = SENTINEL;
  E2E_RUN(mod, "prefix", &tx, &to);
  {
    double s = 0;
    for (int i = 0; i < N; i++) {
      s += x[2 * i];
      if (out[3 * i] != s || out[3 * i + 1] != SENTINEL)
        fail_msg("prefix[%d] = %g, expected %g", i, out[3 * i], s);
    }
  }
}

static void test_reversed_view(void **state) {
  enum { N = 29 };
  double x[N], y[N], out[N], outc[N], xr[N];
  ascTensor tx = view1(&x[N - 1], N, -1); /* x reversed */
  ascTensor ty = e2e_t1(y, ascFloat64, N);
  ascTensor to = view1(&out[N - 1], N, -1);
  ascTensor txc = e2e_t1(xr, ascFloat64, N), toc = e2e_t1(outc, ascFloat64, N);
  ascScalar alpha = e2e_weak_float(-2.0);
  (void)state;
  for (int i = 0; i < N; i++) {
    x[i] = i * i - 10.0;
    y[i] = i * 0.125;
  }
  for (int i = 0; i < N; i++)
    xr[i] = x[N - 1 - i];
  E2E_RUN(mod, "axpy", &tx, &ty, &to, &alpha);
  E2E_RUN(mod, "axpy", &txc, &ty, &toc, &alpha);
  for (int i = 0; i < N; i++) {
    double ref = -2.0 * xr[i] + y[i];
    if (out[N - 1 - i] != ref || outc[i] != ref)
      fail_msg("reversed axpy[%d]: %g, contiguous %g, expected %g", i,
               out[N - 1 - i], outc[i], ref);
  }
  E2E_RUN(mod, "prefix", &tx, &to);
  {
    double s = 0;
    for (int i = 0; i < N; i++) {
      s += xr[i];
      assert_true(out[N - 1 - i] == s);
    }
  }
  /* rows reversed, every other column: a 2-D view with a negative and a
   * non-unit stride */
  {
    enum { R = 4, C = 10 };
    double a[R * C], b2[R * (C / 2)], c2[R * (C / 2)];
    ascTensor ta = view2(&a[(R - 1) * C], R, C / 2, -C, 2);
    ascTensor tb = e2e_t2(b2, ascFloat64, R, C / 2),
              tc = e2e_t2(c2, ascFloat64, R, C / 2);
    for (int i = 0; i < R * C; i++)
      a[i] = i;
    for (int i = 0; i < R * (C / 2); i++)
      b2[i] = 0.5 * i;
    E2E_RUN(mod, "add2", &ta, &tb, &tc);
    for (int i = 0; i < R; i++)
      for (int j = 0; j < C / 2; j++) {
        double ref = a[(R - 1 - i) * C + 2 * j] * 3 + b2[i * (C / 2) + j];
        if (c2[i * (C / 2) + j] != ref)
          fail_msg("flipped rows (%d, %d): %g, expected %g", i, j,
                   c2[i * (C / 2) + j], ref);
      }
  }
}

static void test_empty_tensors(void **state) {
  double out[2] = {SENTINEL, SENTINEL}, c[1] = {SENTINEL};
  ascTensor tx = e2e_t1(NULL, ascFloat64, 0), to = e2e_t1(out, ascFloat64, 2);
  ascTensor ta = e2e_t2(NULL, ascFloat64, 0, 5),
            tb = e2e_t2(NULL, ascFloat64, 0, 5);
  ascTensor tc = e2e_t2(c, ascFloat64, 0, 5);
  ascTensor tz = e2e_t2(NULL, ascFloat64, 3, 0);
  (void)state;
  E2E_RUN(mod, "total", &tx, &to);
  assert_true(out[0] == 0.0);
  assert_true(out[1] == 0.0);
  E2E_RUN(mod, "add2", &ta, &tb, &tc);
  E2E_RUN(mod, "add2", &tz, &tz, &tz);
  assert_true(c[0] == SENTINEL);
  /* an empty view with odd strides is contiguous too */
  tx.strides[0] = -5;
  out[0] = out[1] = SENTINEL;
  E2E_RUN(mod, "total", &tx, &to);
  assert_true(out[0] == 0.0);
}

static void test_one_element_tensors(void **state) {
  double x[8] = {4.5}, y[1] = {0.25}, out[8], tot[2];
  ascTensor tx = view1(x, 1, 7), ty = view1(y, 1, -3), to = view1(out, 1, 5);
  ascTensor ttot = e2e_t1(tot, ascFloat64, 2);
  ascScalar alpha = e2e_weak_float(2.0);
  (void)state;
  for (int i = 0; i < 8; i++)
    out[i] = SENTINEL;
  E2E_RUN(mod, "axpy", &tx, &ty, &to, &alpha);
  assert_true(out[0] == 9.25);
  for (int i = 1; i < 8; i++)
    assert_true(out[i] == SENTINEL);
  E2E_RUN(mod, "total", &tx, &ttot);
  assert_true(tot[0] == 4.5);
  assert_true(tot[1] == 1.0);
  /* 1 x N with a meaningless row stride, and N x 1 */
  {
    double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0}, c[6], d[6];
    ascTensor ta = view2(a, 1, 6, 999, 1), tb = view2(b, 1, 6, -4, 1),
              tc = e2e_t2(c, ascFloat64, 1, 6);
    ascTensor tan = view2(a, 6, 1, 1, 42), tbn = e2e_t2(b, ascFloat64, 6, 1),
              tdn = view2(d, 6, 1, 1, -1);
    E2E_RUN(mod, "add2", &ta, &tb, &tc);
    E2E_RUN(mod, "add2", &tan, &tbn, &tdn);
    for (int i = 0; i < 6; i++) {
      assert_true(c[i] == a[i] * 3);
      assert_true(d[i] == a[i] * 3);
    }
  }
}

/* An output that overlaps an input, shifted by one element: the kernel's
 * loop runs in order, so each element sees the one written before it.  The
 * launcher may also refuse the launch (docs/decisions.md); it must never
 * compute with restrict-based assumptions that do not hold. */
static void test_overlapping_arguments(void **state) {
  enum { N = 200 };
  double buf[N + 1];
  ascTensor tx = e2e_t1(buf, ascFloat64, N), ty = e2e_t1(buf + 1, ascFloat64, N);
  void *args[] = {&tx, &ty};
  ascError_t err;
  (void)state;
  for (int i = 0; i <= N; i++)
    buf[i] = 0;
  err = ascLaunchKernel(test_kernel(mod, "shift"), 1, args, NULL);
  if (err == ascErrorInvalidValue)
    return; /* refused, with a message */
  ASSERT_OK(err);
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int i = 0; i <= N; i++)
    if (buf[i] != i)
      fail_msg("buf[%d] = %g, expected %d (the serial loop's result)", i,
               buf[i], i);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_transposed_view),
      cmocka_unit_test(test_every_other_element),
      cmocka_unit_test(test_reversed_view),
      cmocka_unit_test(test_empty_tensors),
      cmocka_unit_test(test_one_element_tensors),
      cmocka_unit_test(test_overlapping_arguments),
  };
  return cmocka_run_group_tests_name("e2e_strides", tests, setup, teardown);
}
