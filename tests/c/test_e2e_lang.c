/*
 * End to end: every non-parallel construct of the kernel language
 * (DESIGN.md section 5), from Python text (tests/c/e2e/lang.py) through
 * ascModuleLoadPython and ascLaunchKernel, checked against references
 * computed here in C.
 *
 * Math functions: float64 results must be within 1 ulp of glibc's double
 * function, float32 results within 1 ulp of glibc's float function
 * (sinf, ...); floor, ceil, trunc, fabs, fmod and copysign exactly.
 *
 * Negative indices: a constant negative index counts from the end
 * (x[-1, -1] is the last element), as in Python; an index computed at run
 * time is used as it is (a negative one is out of bounds).
 */
#include <float.h>
#include <limits.h>
#include <stdlib.h>

#include "e2e.h"

static ascModule_t lang;
static char *lang_text;

static int setup(void **state) {
  ascCompileOptions o;
  (void)state;
  lang_text = e2e_read_source("lang.py");
  memset(&o, 0, sizeof o);
  o.filename = "lang.py";
  if (ascModuleLoadPython(&lang, lang_text, &o) != ascSuccess) {
    fprintf(stderr, "%s\n", ascGetLastErrorMessage());
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  ascModuleUnload(lang);
  free(lang_text);
  return test_teardown(state);
}

static void fill_i64(int64_t *p, int n, int64_t v) {
  for (int i = 0; i < n; i++)
    p[i] = v;
}

/* ------------------------------------------------------------ statements */

static void test_assign_unpack_shape(void **state) {
  int64_t x[15], out[12];
  ascTensor tx = e2e_t2(x, ascInt64, 3, 5), to = e2e_t1(out, ascInt64, 12);
  (void)state;
  for (int i = 0; i < 15; i++)
    x[i] = 100 + i;
  fill_i64(out, 12, -1);
  E2E_RUN(lang, "k_assign", &tx, &to);
  int64_t ref[12] = {3, 5, 2, 14, 34, 15, 3, x[1 * 5 + 2], x[14], x[10],
                     305, 2};
  e2e_eq_i64(out, ref, 12, "k_assign");
}

static int64_t ipow(int64_t a, int64_t e) {
  uint64_t r = 1, x = (uint64_t)a;
  for (; e; e >>= 1) {
    if (e & 1)
      r *= x;
    x *= x;
  }
  return (int64_t)r;
}

static void test_augmented_assignment(void **state) {
  const int64_t ns[] = {5, -13, 0, 1000};
  (void)state;
  for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
    int64_t n = ns[c], out[12], ref[12], a;
    double fo[4], fref[4], f, q, m;
    ascTensor to = e2e_t1(out, ascInt64, 12), tf = e2e_t1(fo, ascFloat64, 4);
    ascScalar sn = e2e_weak_int(n);
    fill_i64(out, 12, -1);
    E2E_RUN(lang, "k_aug", &to, &tf, &sn);
    a = n + 3;
    ref[0] = a;
    ref[1] = a -= 10;
    ref[2] = a *= -7;
    ref[3] = a = e2e_floordiv(a, 4);
    ref[4] = a = e2e_mod(a, -5);
    ref[5] = a = ipow(a, 3);
    ref[6] = a = (int64_t)((uint64_t)a << 2);
    ref[7] = a >>= 1;
    ref[8] = a &= 0xff;
    ref[9] = a |= 0x100;
    ref[10] = a ^= 0x5;
    ref[11] = (5 + n) * 2;
    f = 1.5 * (double)n / 4 - 0.25;
    fref[0] = f;
    e2e_fdivmod(f, 0.5, &q, &m);
    fref[1] = f = q;
    e2e_fdivmod(f, 0.75, &q, &m);
    fref[2] = f = m;
    fref[3] = pow(f, 2.0);
    e2e_eq_i64(out, ref, 12, "k_aug");
    e2e_eq_f64(fo, fref, 4, "k_aug float");
  }
}

static void test_if_elif_else(void **state) {
  int64_t x[7] = {-5, 0, 3, 9, 10, 1000, -1}, out[7];
  ascTensor tx = e2e_t1(x, ascInt64, 7), to = e2e_t1(out, ascInt64, 7);
  (void)state;
  fill_i64(out, 7, 77);
  E2E_RUN(lang, "k_branch", &tx, &to);
  int64_t ref[7] = {-1, 0, 1, 1, 2, 2, -1};
  e2e_eq_i64(out, ref, 7, "k_branch");
}

/* Python's range(lo, hi, st) folded with `acc = acc * mul + i`. */
static void py_range(int64_t lo, int64_t hi, int64_t st, int64_t mul,
                     int64_t *count, int64_t *acc) {
  *count = 0;
  *acc = 0;
  for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
    (*count)++;
    *acc = *acc * mul + i;
  }
}

static void test_range_forms(void **state) {
  const int64_t cases[][3] = {{2, 11, 3}, {-5, 5, 2},  {5, 2, 1},
                              {0, 0, 1},  {-3, 7, 20}, {10, -4, -3},
                              {0, 6, 1}};
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int64_t a = cases[c][0], b = cases[c][1], s = cases[c][2];
    int64_t out[13], ref[13], cnt, acc;
    ascTensor to = e2e_t1(out, ascInt64, 13);
    ascScalar sa = e2e_weak_int(a), sb = e2e_weak_int(b), ss = e2e_weak_int(s);
    fill_i64(out, 13, -99);
    E2E_RUN(lang, "k_ranges", &to, &sa, &sb, &ss);
    ref[0] = b > 0 ? b : 0;
    ref[1] = b > 0 ? b * (b - 1) / 2 : 0;
    py_range(a, b, 1, 1, &ref[2], &acc);
    ref[3] = 0;
    for (int64_t i = a; i < b; i++)
      ref[3] += i * 3;
    py_range(a, b, s, 7, &ref[4], &ref[5]);
    py_range(b, a, -s, 7, &ref[6], &ref[7]);
    py_range(b, a, -1, 5, &ref[8], &ref[9]);
    py_range(10, 0, -3, 3, &cnt, &acc);
    ref[10] = cnt;
    ref[11] = acc;
    ref[12] = b > a ? b - 1 : -1; /* the loop variable keeps its last value */
    for (int i = 0; i < 13; i++)
      if (out[i] != ref[i])
        fail_msg("k_ranges(a=%lld, b=%lld, s=%lld): out[%d] = %lld, "
                 "expected %lld",
                 (long long)a, (long long)b, (long long)s, i,
                 (long long)out[i], (long long)ref[i]);
  }
}

static void test_while_break_continue(void **state) {
  const int64_t ns[] = {0, 1, 10, 30, 8};
  (void)state;
  for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
    int64_t n = ns[c], out[5], ref[5], i = 0, t = 0, k = 0, cnt = 0;
    ascTensor to = e2e_t1(out, ascInt64, 5);
    ascScalar sn = e2e_weak_int(n);
    E2E_RUN(lang, "k_loops", &to, &sn);
    while (i < n) {
      i++;
      if (i % 3 == 0)
        continue;
      if (i > 20)
        break;
      t += i;
    }
    for (;;) {
      k++;
      if (k * k > n)
        break;
    }
    for (int64_t a = 0; a < n; a++)
      for (int64_t b = 0; b < n; b++) {
        if (b > a)
          break;
        if ((a + b) % 2 == 1)
          continue;
        cnt++;
      }
    ref[0] = i;
    ref[1] = t;
    ref[2] = k;
    ref[3] = cnt;
    ref[4] = n > 7 ? 7 : -1;
    e2e_eq_i64(out, ref, 5, "k_loops");
  }
}

static void test_early_return_and_pass(void **state) {
  const int64_t in[3][2] = {{1, 0}, {0, 3}, {0, 50}};
  const int64_t ref[3][3] = {{1, -1, -1}, {2, 3, -1}, {2, 9, 99}};
  (void)state;
  for (int c = 0; c < 3; c++) {
    int64_t x[2] = {in[c][0], in[c][1]}, out[3] = {-1, -1, -1};
    ascTensor tx = e2e_t1(x, ascInt64, 2), to = e2e_t1(out, ascInt64, 3);
    E2E_RUN(lang, "k_early", &tx, &to);
    e2e_eq_i64(out, ref[c], 3, "k_early");
  }
}

static void test_try_except_finally(void **state) {
  (void)state;
  for (int64_t mode = 0; mode <= 6; mode++) {
    int64_t out[12], ref[12];
    ascTensor to = e2e_t1(out, ascInt64, 12);
    ascScalar sm = e2e_weak_int(mode);
    fill_i64(out, 12, -7);
    fill_i64(ref, 12, -7);
    E2E_RUN(lang, "k_exc", &to, &sm);
    ref[0] = mode == 0 ? 1 : mode <= 2 || mode == 4 ? 2 : mode == 3 ? 3 : 10;
    ref[1] = 100;
    if (mode == 0) {
      ref[2] = 102;
      ref[3] = 103;
      ref[4] = 104;
      ref[5] = 106;
    } else if (mode == 1) {
      ref[2] = 103;
      ref[3] = 105;
      ref[4] = 106;
    } else {
      ref[2] = 101;
      ref[3] = 103;
      ref[4] = 104;
      ref[5] = 106;
    }
    ref[10] = mode == 5 ? 1 : 2;
    for (int i = 0; i < 12; i++)
      if (out[i] != ref[i])
        fail_msg("k_exc(mode=%lld): out[%d] = %lld, expected %lld",
                 (long long)mode, i, (long long)out[i], (long long)ref[i]);
  }
}

static void test_finally_on_continue_break_return(void **state) {
  const int64_t ref[2][12] = {{0, -1, 20, 30, 1, 1, 1, 1, 1, 1, 1, 1},
                              {0, -1, 20, -1, 1, 1, 1, 1, 1, -1, 1, -1}};
  (void)state;
  for (int64_t mode = 0; mode <= 1; mode++) {
    int64_t out[12];
    ascTensor to = e2e_t1(out, ascInt64, 12);
    ascScalar sm = e2e_weak_int(mode);
    fill_i64(out, 12, -1);
    E2E_RUN(lang, "k_fin", &to, &sm);
    e2e_eq_i64(out, ref[mode], 12, mode ? "k_fin(1)" : "k_fin(0)");
  }
}

static void test_exceptions_from_helpers_and_division(void **state) {
  const int64_t bs[] = {0, 2, -2};
  const int64_t ref[3][3] = {{-100, -200, -300}, {3, 3, 1}, {-4, -4, -1}};
  (void)state;
  for (int c = 0; c < 3; c++) {
    int64_t out[3] = {9, 9, 9};
    ascTensor to = e2e_t1(out, ascInt64, 3);
    ascScalar sb = e2e_weak_int(bs[c]);
    E2E_RUN(lang, "k_helper_exc", &to, &sb);
    e2e_eq_i64(out, ref[c], 3, "k_helper_exc");
  }
}

/* An uncaught exception: the synchronising call reports it with the
 * kernel, class, file:line and message; the stream works again after. */
static void expect_raise(const char *kernel, int64_t arg, int64_t out0,
                         const char *cls, const char *needle,
                         const char *msg) {
  int64_t out[3] = {-1, -1, -1};
  ascTensor to = e2e_t1(out, ascInt64, 3);
  ascScalar s = e2e_weak_int(arg);
  void *args[] = {&to, &s};
  char where[64], head[160], def[64];
  const char *got;
  snprintf(def, sizeof def, "def %s(", kernel);
  ASSERT_ERR(e2e_run_err(lang, kernel, args), ascErrorKernelException);
  got = ascGetLastErrorMessage();
  snprintf(where, sizeof where, "lang.py:%d:",
           e2e_line_of(lang_text, def, needle));
  snprintf(head, sizeof head, "kernel '%s' raised %s", kernel, cls);
  if (strstr(got, where) == NULL || strstr(got, head) == NULL ||
      (msg != NULL && strstr(got, msg) == NULL))
    fail_msg("message '%s' lacks '%s' / '%s' / '%s'", got, where, head,
             msg ? msg : "");
  assert_int_equal(out[0], out0); /* work before the raise is done */
  assert_int_equal(out[2], -1);
}

static void test_uncaught_exceptions(void **state) {
  int64_t out[3] = {-1, -1, -1};
  ascTensor to = e2e_t1(out, ascInt64, 3);
  ascScalar s = e2e_weak_int(2);
  (void)state;
  expect_raise("k_zdiv", 0, 1, "ZeroDivisionError", "out[1] = 7 // b", NULL);
  E2E_RUN(lang, "k_zdiv", &to, &s); /* the stream is usable again */
  assert_int_equal(out[1], 3);
  assert_int_equal(out[2], 3);
  expect_raise("k_raise", 5, 5, "ValueError", "raise ValueError(\"n is too big",
               "n is too big");
  expect_raise("k_assert", 200, -1, "AssertionError",
               "assert n < 100, \"n too large\"", "n too large");
  fill_i64(out, 3, -1);
  E2E_RUN(lang, "k_assert", &to, &s);
  assert_int_equal(out[0], 2);
}

static void test_helper_calls(void **state) {
  int64_t x[6] = {-5, -1, 0, 2, 3, 9}, out[6], ref[6];
  ascTensor tx = e2e_t1(x, ascInt64, 6), to = e2e_t1(out, ascInt64, 6);
  (void)state;
  E2E_RUN(lang, "k_helpers", &tx, &to);
  for (int64_t i = 0; i < 6; i++) {
    int64_t v = x[i], cl = v < -2 ? -2 : v > 3 ? 3 : v;
    ref[i] = v * v + i * (i + 1) / 2 + cl * 1000;
  }
  e2e_eq_i64(out, ref, 6, "k_helpers");
}

static void test_struct_class(void **state) {
  double out[4] = {0, 0, 0, 0};
  const double ref[4] = {2.5, 2.0, 25.0, -10.0};
  ascTensor to = e2e_t1(out, ascFloat64, 4);
  (void)state;
  E2E_RUN(lang, "k_struct", &to);
  e2e_eq_f64(out, ref, 4, "k_struct");
}

static void test_logic_and_conditional_expressions(void **state) {
  const int64_t cases[][2] = {{7, 2}, {7, 0}, {0, 5}, {-3, 4},
                              {12, 10}, {5, 5}, {0, 0}, {3, -2}};
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int64_t a = cases[c][0], b = cases[c][1], out[12], ref[12];
    ascTensor to = e2e_t1(out, ascInt64, 12);
    ascScalar sa = e2e_weak_int(a), sb = e2e_weak_int(b);
    fill_i64(out, 12, -9);
    E2E_RUN(lang, "k_logic", &to, &sa, &sb);
    ref[0] = b != 0 && e2e_floordiv(a, b) > 2;
    ref[1] = b == 0 || e2e_floordiv(a, b) > 2;
    ref[2] = b == 0 ? 0 : e2e_floordiv(a, b);
    ref[3] = !(a < b);
    ref[4] = 0 <= a && a < b && b <= 10;
    ref[5] = a < b && b > 0;
    ref[6] = a ? b : a;
    ref[7] = a ? a : b;
    ref[8] = (a > 0) != (b > 0);
    ref[9] = 2;
    ref[10] = (a == b) + (a != b) * 2;
    ref[11] = !a;
    for (int i = 0; i < 12; i++)
      if (out[i] != ref[i])
        fail_msg("k_logic(%lld, %lld): out[%d] = %lld, expected %lld",
                 (long long)a, (long long)b, i, (long long)out[i],
                 (long long)ref[i]);
  }
}

static void test_min_max_abs(void **state) {
  const int64_t ia[][2] = {{3, -4}, {-7, -2}, {5, 5}};
  const double fa[][2] = {{1.5, -0.25}, {-3.0, 2.0}, {0.5, 0.5}};
  (void)state;
  for (int c = 0; c < 3; c++) {
    int64_t a = ia[c][0], b = ia[c][1], out[5], ref[5];
    double x = fa[c][0], y = fa[c][1], fo[5], fref[5];
    ascTensor to = e2e_t1(out, ascInt64, 5), tf = e2e_t1(fo, ascFloat64, 5);
    ascScalar sa = e2e_weak_int(a), sb = e2e_weak_int(b),
              sx = e2e_weak_float(x), sy = e2e_weak_float(y);
    E2E_RUN(lang, "k_minmax", &to, &tf, &sa, &sb, &sx, &sy);
    ref[0] = a < b ? a : b;
    ref[1] = a > b ? a : b;
    ref[2] = ref[0] < -3 ? ref[0] : -3;
    ref[3] = a > 2 ? a : 2;
    ref[3] = b > ref[3] ? b : ref[3];
    ref[4] = a < 0 ? -a : a;
    fref[0] = y < x ? y : x;
    fref[1] = y > x ? y : x;
    fref[2] = fabs(x);
    fref[3] = (double)a < x ? (double)a : x;
    fref[4] = (double)b > y ? (double)b : y;
    e2e_eq_i64(out, ref, 5, "k_minmax int");
    e2e_eq_f64(fo, fref, 5, "k_minmax float");
  }
}

/* ------------------------------------------------------------------ math */

#define NMATH 30
#define NX 8
static const double math_x[NX] = {-3.5, -1.25, -0.5, 0.0, 0.3, 1.0, 2.75, 3.5};

static void test_math_float64_vs_libm(void **state) {
  double y[NX * NMATH];
  ascTensor tx = e2e_t1((void *)math_x, ascFloat64, NX),
            ty = e2e_t2(y, ascFloat64, NX, NMATH);
  (void)state;
  E2E_RUN(lang, "k_math", &tx, &ty);
  for (int i = 0; i < NX; i++) {
    double v = math_x[i], r[NMATH];
    r[0] = sin(v);
    r[1] = cos(v);
    r[2] = tan(v);
    r[3] = exp(v);
    r[4] = log(fabs(v) + 1.0);
    r[5] = sqrt(fabs(v));
    r[6] = tanh(v);
    r[7] = pow(fabs(v), 1.5);
    r[8] = floor(v);
    r[9] = ceil(v);
    r[10] = erf(v);
    r[11] = atan2(v, 0.5);
    r[12] = hypot(v, 3.0);
    r[13] = log2(fabs(v) + 1.0);
    r[14] = log10(fabs(v) + 1.0);
    r[15] = expm1(v);
    r[16] = log1p(fabs(v));
    r[17] = sinh(v);
    r[18] = cosh(v);
    r[19] = erfc(v);
    r[20] = atan(v);
    r[21] = asin(v / 4.0);
    r[22] = acos(v / 4.0);
    r[23] = fmod(v, 0.75);
    r[24] = copysign(1.5, v);
    r[25] = fabs(v);
    r[26] = exp2(v);
    r[27] = floor(v);
    r[28] = trunc(v);
    r[29] = ceil(v);
    for (int f = 0; f < NMATH; f++) {
      int exact = f == 8 || f == 9 || f >= 23;
      uint64_t d = e2e_ulp64(y[i * NMATH + f], r[f]);
      if (d > (exact ? 0u : 1u))
        fail_msg("k_math function %d at x=%g: got %.17g, libm %.17g "
                 "(%llu ulp)",
                 f, v, y[i * NMATH + f], r[f], (unsigned long long)d);
    }
  }
}

static void test_math_float32_vs_libm(void **state) {
  float x[NX], y[NX * 10];
  ascTensor tx = e2e_t1(x, ascFloat32, NX), ty = e2e_t2(y, ascFloat32, NX, 10);
  (void)state;
  for (int i = 0; i < NX; i++)
    x[i] = (float)math_x[i];
  E2E_RUN(lang, "k_math32", &tx, &ty);
  for (int i = 0; i < NX; i++) {
    float v = x[i], r[10];
    r[0] = sinf(v);
    r[1] = cosf(v);
    r[2] = expf(v);
    r[3] = logf(fabsf(v) + 1.0f);
    r[4] = sqrtf(fabsf(v));
    r[5] = tanhf(v);
    r[6] = erff(v);
    r[7] = powf(fabsf(v), 1.5f);
    r[8] = floorf(v);
    r[9] = ceilf(v);
    for (int f = 0; f < 10; f++) {
      uint32_t d = e2e_ulp32(y[i * 10 + f], r[f]);
      if (d > (f >= 8 ? 0u : 1u))
        fail_msg("k_math32 function %d at x=%g: got %.9g, libm %.9g "
                 "(%u ulp)",
                 f, (double)v, (double)y[i * 10 + f], (double)r[f], d);
    }
  }
}

/* math.* raise as CPython's math module does: ValueError ("math domain
 * error") for a NaN from non-NaN arguments or an infinity from finite ones,
 * OverflowError ("math range error") where the function overflows (exp,
 * cosh, pow, ...); asc.* functions never raise (numpy). */
static void test_math_domain_errors(void **state) {
  static const struct {
    int fn;
    double x, y, r;
    int code; /* 0: r; 1: ValueError; 2: OverflowError */
  } cases[] = {
      {0, 4.0, 0, 2.0, 0},        {0, -1.0, 0, 0, 1},
      {0, NAN, 0, NAN, 0},        {0, -0.0, 0, -0.0, 0},
      {1, 0.0, 0, 0, 1},          {1, -1.0, 0, 0, 1},
      {1, INFINITY, 0, INFINITY, 0}, {2, 1000.0, 0, 0, 2},
      {2, -INFINITY, 0, 0.0, 0},  {2, INFINITY, 0, INFINITY, 0},
      {3, INFINITY, 0, 0, 1},     {3, 0.5, 0, 0.479425538604203, 0},
      {4, 0.0, -1.0, 0, 1},       {4, 10.0, 400.0, 0, 2},
      {4, -8.0, 1.0 / 3, 0, 1},   {4, 2.0, 10.0, 1024.0, 0},
      {5, 1.0, 0.0, 0, 1},        {5, INFINITY, 1.0, 0, 1},
      {5, 7.5, 2.0, 1.5, 0},      {6, 1.5e308, 1.5e308, INFINITY, 0},
      {7, -1.0, 0, NAN, 0},       {8, 2.0, 0, 0, 1},
      {9, -1.0, 0, 0, 1},         {9, -2.0, 0, 0, 1},
      {10, 1000.0, 0, 0, 2},      {10, 0.0, 0, 1.0, 0},
  };
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double out[2] = {-777, -777};
    ascTensor to = e2e_t1(out, ascFloat64, 2);
    ascScalar fn = e2e_weak_int(cases[c].fn), x = e2e_weak_float(cases[c].x),
              y = e2e_weak_float(cases[c].y);
    E2E_RUN(lang, "k_domain", &to, &fn, &x, &y);
    if (out[1] != cases[c].code ||
        (cases[c].code == 0 && e2e_ulp64(out[0], cases[c].r) > 1) ||
        (cases[c].code != 0 && out[0] != -777))
      fail_msg("k_domain function %d (%g, %g): result %g, code %g; "
               "expected %g, code %d",
               cases[c].fn, cases[c].x, cases[c].y, out[0], out[1],
               cases[c].r, cases[c].code);
  }
}

/* ----------------------------------------------------------------- casts */

static void test_casts(void **state) {
  enum { N = 11 };
  /* the last: just above halfway between two float16 values; rounding
   * through float32 first would give the lower one */
  const double x[N] = {2.7, -2.7, 0.5, -0.5, 1e9, -1e9, 3.0, 0.0, 65519.0,
                       1e-8, 1.0 + 0x1p-11 + 0x1p-40};
  int32_t oi[N];
  _Float16 oh[N];
  int64_t o64[N * 6];
  ascTensor tx = e2e_t1((void *)x, ascFloat64, N),
            ti = e2e_t1(oi, ascInt32, N), th = e2e_t1(oh, ascFloat16, N),
            t64 = e2e_t2(o64, ascInt64, N, 6);
  (void)state;
  E2E_RUN(lang, "k_casts", &tx, &ti, &th, &t64);
  for (int i = 0; i < N; i++) {
    int64_t t = (int64_t)x[i];
    _Float16 h = (_Float16)x[i];
    int64_t r[6] = {t,
                    (uint8_t)(uint64_t)(t + 300),
                    (int8_t)(uint8_t)(uint64_t)(t + 200),
                    x[i] != 0,
                    (int16_t)(uint16_t)(uint64_t)(t * 10000),
                    (int64_t)((double)i * 2.5)};
    if (oi[i] != (int32_t)t)
      fail_msg("asc.int32(%g) = %d, expected %d", x[i], oi[i], (int32_t)t);
    if (memcmp(&oh[i], &h, 2) != 0)
      fail_msg("asc.float16(%g) = %g, expected %g", x[i], (double)oh[i],
               (double)h);
    for (int k = 0; k < 6; k++)
      if (o64[i * 6 + k] != r[k])
        fail_msg("k_casts x=%g column %d: got %lld, expected %lld", x[i], k,
                 (long long)o64[i * 6 + k], (long long)r[k]);
  }
}

static void test_cast_errors(void **state) {
  const double vs[] = {NAN, 1e30, -3e9, 7.9, -2.5};
  const int64_t ref[] = {-1, -2, -2, 7, -2};
  (void)state;
  for (int c = 0; c < 5; c++) {
    int64_t out[1] = {99};
    ascTensor to = e2e_t1(out, ascInt64, 1);
    ascScalar sv = e2e_weak_float(vs[c]);
    E2E_RUN(lang, "k_castexc", &to, &sv);
    if (out[0] != ref[c])
      fail_msg("k_castexc(%g) = %lld, expected %lld", vs[c],
               (long long)out[0], (long long)ref[c]);
  }
}

/* ------------------------------------------------------- // % and ** */

static void divmod_int(ascDataType dt, int64_t lo, int64_t hi) {
  int64_t as[64], bs[64];
  int n = 0;
  const int64_t av[] = {7, -7, 6, -6, 0};
  const int64_t bv[] = {2, -2, 3, -3, 1, -1};
  size_t sz = ascDataTypeSize(dt);
  unsigned char a[64 * 8], b[64 * 8], q[64 * 8], r[64 * 8];
  ascTensor ta, tb, tq, tr;
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 6; j++) {
      as[n] = av[i];
      bs[n++] = bv[j];
    }
  as[n] = lo, bs[n++] = -1;
  as[n] = lo, bs[n++] = 1;
  as[n] = lo, bs[n++] = 2;
  as[n] = lo, bs[n++] = 7;
  as[n] = hi, bs[n++] = -1;
  as[n] = hi, bs[n++] = -7;
  as[n] = hi, bs[n++] = lo;
  for (int i = 0; i < n; i++) {
    memcpy(a + i * sz, &as[i], sz); /* little-endian truncation */
    memcpy(b + i * sz, &bs[i], sz);
  }
  ta = e2e_t1(a, dt, n);
  tb = e2e_t1(b, dt, n);
  tq = e2e_t1(q, dt, n);
  tr = e2e_t1(r, dt, n);
  E2E_RUN(lang, "k_divmod", &ta, &tb, &tq, &tr);
  for (int i = 0; i < n; i++) {
    int64_t gq = 0, gr = 0, eq, er;
    memcpy(&gq, q + i * sz, sz);
    memcpy(&gr, r + i * sz, sz);
    /* sign-extend */
    gq = (int64_t)((uint64_t)gq << (64 - 8 * sz)) >> (64 - 8 * sz);
    gr = (int64_t)((uint64_t)gr << (64 - 8 * sz)) >> (64 - 8 * sz);
    eq = e2e_floordiv(as[i], bs[i]);
    er = e2e_mod(as[i], bs[i]);
    /* fixed width: INT_MIN // -1 wraps to INT_MIN */
    eq = (int64_t)((uint64_t)eq << (64 - 8 * sz)) >> (64 - 8 * sz);
    if (gq != eq || gr != er)
      fail_msg("%s: %lld // %lld = %lld, %% = %lld; expected %lld, %lld",
               ascDataTypeName(dt), (long long)as[i], (long long)bs[i],
               (long long)gq, (long long)gr, (long long)eq, (long long)er);
  }
}

static void test_floordiv_mod_ints(void **state) {
  (void)state;
  divmod_int(ascInt64, INT64_MIN, INT64_MAX);
  divmod_int(ascInt32, INT32_MIN, INT32_MAX);
  divmod_int(ascInt8, INT8_MIN, INT8_MAX);
}

/* Float // and %: Python's results; a zero divisor gives what numpy gives
 * (a / b for //, nan for %), docs/ir.md. */
static void divmod_float(ascDataType dt) {
  double as[80], bs[80];
  int n = 0;
  const double av[] = {7.5, -7.5, 6.0, -6.0, 0.0, -0.0, 1e300, 0.1};
  const double bv[] = {2.0, -2.0, 0.3, -0.3, INFINITY, -INFINITY};
  double a64[80], b64[80], q64[80], r64[80];
  float a32[80], b32[80], q32[80], r32[80];
  int f32 = dt == ascFloat32;
  ascTensor ta, tb, tq, tr;
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 6; j++) {
      as[n] = av[i];
      bs[n++] = bv[j];
    }
  as[n] = 1.0, bs[n++] = 0.0;
  as[n] = -1.0, bs[n++] = 0.0;
  as[n] = 0.0, bs[n++] = 0.0;
  as[n] = 1.0, bs[n++] = -0.0;
  for (int i = 0; i < n; i++) {
    if (f32) {
      a32[i] = (float)as[i];
      b32[i] = (float)bs[i];
      as[i] = a32[i];
      bs[i] = b32[i];
    } else {
      a64[i] = as[i];
      b64[i] = bs[i];
    }
  }
  ta = e2e_t1(f32 ? (void *)a32 : a64, dt, n);
  tb = e2e_t1(f32 ? (void *)b32 : b64, dt, n);
  tq = e2e_t1(f32 ? (void *)q32 : q64, dt, n);
  tr = e2e_t1(f32 ? (void *)r32 : r64, dt, n);
  E2E_RUN(lang, "k_divmod", &ta, &tb, &tq, &tr);
  for (int i = 0; i < n; i++) {
    double eq, er, gq = f32 ? q32[i] : q64[i], gr = f32 ? r32[i] : r64[i];
    uint64_t bq, br, beq, ber;
    if (bs[i] == 0) {
      eq = as[i] / bs[i];
      er = NAN;
    } else {
      e2e_fdivmod(as[i], bs[i], &eq, &er);
    }
    if (f32) {
      eq = (float)eq;
      er = (float)er;
    }
    memcpy(&bq, &gq, 8);
    memcpy(&br, &gr, 8);
    memcpy(&beq, &eq, 8);
    memcpy(&ber, &er, 8);
    if (!((bq == beq || (isnan(gq) && isnan(eq))) &&
          (br == ber || (isnan(gr) && isnan(er)))))
      fail_msg("%s: %g // %g = %g, %% = %g; expected %g, %g",
               ascDataTypeName(dt), as[i], bs[i], gq, gr, eq, er);
  }
}

static void test_floordiv_mod_floats(void **state) {
  (void)state;
  divmod_float(ascFloat64);
  divmod_float(ascFloat32);
}

static void test_power(void **state) {
  const int64_t ia[][2] = {{3, 4}, {-2, 3}, {0, 0}, {5, 1}, {-1, 7},
                           {2, 62}, {7, 0}, {10, 18}, {3, 40}};
  const double fa[][2] = {{2, 0.5}, {-2, 3}, {0, 0}, {4, -0.5},
                          {1.5, 2.5}, {10, -3}, {2, 0.1}};
  int64_t a[9], b[9], p[9];
  double fa_[7], fb[7], fp[7];
  ascTensor ta = e2e_t1(a, ascInt64, 9), tb = e2e_t1(b, ascInt64, 9),
            tp = e2e_t1(p, ascInt64, 9);
  ascTensor tfa = e2e_t1(fa_, ascFloat64, 7), tfb = e2e_t1(fb, ascFloat64, 7),
            tfp = e2e_t1(fp, ascFloat64, 7);
  (void)state;
  for (int i = 0; i < 9; i++) {
    a[i] = ia[i][0];
    b[i] = ia[i][1];
  }
  for (int i = 0; i < 7; i++) {
    fa_[i] = fa[i][0];
    fb[i] = fa[i][1];
  }
  E2E_RUN(lang, "k_pow", &ta, &tb, &tp);
  for (int i = 0; i < 9; i++)
    if (p[i] != ipow(a[i], b[i])) /* 3 ** 40 wraps in int64, as numpy */
      fail_msg("%lld ** %lld = %lld, expected %lld", (long long)a[i],
               (long long)b[i], (long long)p[i], (long long)ipow(a[i], b[i]));
  E2E_RUN(lang, "k_pow", &tfa, &tfb, &tfp);
  for (int i = 0; i < 7; i++)
    if (e2e_ulp64(fp[i], pow(fa_[i], fb[i])) > 1)
      fail_msg("%g ** %g = %.17g, expected %.17g", fa_[i], fb[i], fp[i],
               pow(fa_[i], fb[i]));
}

static void test_power_literals(void **state) {
  const int64_t ns[] = {3, 12};
  (void)state;
  for (int c = 0; c < 2; c++) {
    int64_t n = ns[c], out[6];
    double fo[4];
    ascTensor to = e2e_t1(out, ascInt64, 6), tf = e2e_t1(fo, ascFloat64, 4);
    ascScalar sn = e2e_weak_int(n);
    int64_t ref[6] = {81, -8, n * n, ipow(2, n), 1,
                      n >= 10 ? ipow(2, n - 10) : -1};
    double fref[4] = {pow(2.0, 0.5), 0.5, pow((double)n, 0.5),
                      pow(4.0, (double)-n)};
    E2E_RUN(lang, "k_pow_lit", &to, &tf, &sn);
    e2e_eq_i64(out, ref, 6, "k_pow_lit");
    for (int i = 0; i < 4; i++)
      if (e2e_ulp64(fo[i], fref[i]) > 1)
        fail_msg("k_pow_lit fo[%d] = %.17g, expected %.17g", i, fo[i],
                 fref[i]);
  }
}

/* ----------------------------------------------------------- comparisons */

static void check_cmp(const uint8_t *o, int i, double a, double b) {
  const int ref[7] = {a == b, a != b, a < b, a <= b, a > b, a >= b, !(a < b)};
  for (int k = 0; k < 7; k++)
    if (o[i * 7 + k] != ref[k])
      fail_msg("comparison %d of %g and %g: got %d, expected %d", k, a, b,
               o[i * 7 + k], ref[k]);
}

static void test_comparisons_and_bool(void **state) {
  double fa[6] = {1.0, 2.0, -0.0, NAN, 3.0, INFINITY};
  double fb[6] = {2.0, 1.0, 0.0, 1.0, NAN, INFINITY};
  int64_t ia[6] = {1, 5, -3, 0, INT64_MIN, 7};
  int64_t ib[6] = {2, 5, -4, 0, INT64_MAX, -7};
  uint8_t o[6 * 7];
  ascTensor tfa = e2e_t1(fa, ascFloat64, 6), tfb = e2e_t1(fb, ascFloat64, 6);
  ascTensor tia = e2e_t1(ia, ascInt64, 6), tib = e2e_t1(ib, ascInt64, 6);
  ascTensor to = e2e_t2(o, ascBool, 6, 7);
  (void)state;
  E2E_RUN(lang, "k_cmp", &tfa, &tfb, &to);
  for (int i = 0; i < 6; i++)
    check_cmp(o, i, fa[i], fb[i]);
  E2E_RUN(lang, "k_cmp", &tia, &tib, &to);
  for (int i = 0; i < 6; i++) {
    const int ref[7] = {ia[i] == ib[i], ia[i] != ib[i], ia[i] < ib[i],
                        ia[i] <= ib[i], ia[i] > ib[i], ia[i] >= ib[i],
                        !(ia[i] < ib[i])};
    for (int k = 0; k < 7; k++)
      if (o[i * 7 + k] != ref[k])
        fail_msg("int comparison %d of %lld and %lld: got %d", k,
                 (long long)ia[i], (long long)ib[i], o[i * 7 + k]);
  }
  /* int64 with float64: compared as float64 */
  ia[4] = 3;
  E2E_RUN(lang, "k_cmp", &tia, &tfb, &to);
  for (int i = 0; i < 6; i++)
    check_cmp(o, i, (double)ia[i], fb[i]);
}

/* ------------------------------------------- constants and parameters */

static void test_frozen_constants_and_globals(void **state) {
  int64_t out[4];
  ascTensor to = e2e_t1(out, ascInt64, 4);
  ascGlobalValue g[2];
  ascCompileOptions o;
  ascModule_t m2;
  const int64_t ref[4] = {4, 12, 16, 10}, ref2[4] = {8, 40, 64, 36};
  (void)state;
  E2E_RUN(lang, "k_const", &to);
  e2e_eq_i64(out, ref, 4, "k_const");
  memset(&o, 0, sizeof o);
  o.filename = "lang.py";
  g[0].name = "TILE";
  g[0].value = e2e_weak_int(8);
  g[1].name = "SCALE";
  g[1].value = e2e_weak_int(5);
  o.globals = g;
  o.numGlobals = 2;
  m2 = e2e_load_opts(lang_text, &o);
  E2E_RUN(m2, "k_const", &to);
  e2e_eq_i64(out, ref2, 4, "k_const with TILE=8, SCALE=5");
  ASSERT_OK(ascModuleUnload(m2));
  E2E_RUN(lang, "k_const", &to); /* the first module is unchanged */
  e2e_eq_i64(out, ref, 4, "k_const again");
}

static void test_constexpr_parameter(void **state) {
  const int64_t ns[] = {5, 9, 1};
  (void)state;
  for (int c = 0; c < 3; c++) {
    int64_t n = ns[c], out[2], s = 0;
    ascTensor to = e2e_t1(out, ascInt64, 2);
    E2E_RUN(lang, "k_constexpr", &to, &n);
    for (int64_t i = 0; i < n; i++)
      s += (n - 1 - i) * (n - 1 - i) * (i + 1);
    assert_int_equal(out[0], s);
    assert_int_equal(out[1], n);
  }
}

/* alpha: asc.float32 is passed as a bare float; beta (unannotated) as a
 * weak ascScalar, so with float32 tensors everything is float32 (one
 * rounding per operation, no contraction into fma). */
static void test_annotated_and_weak_scalars(void **state) {
  enum { N = 64 };
  float x[N], y[N], alpha = 0.3f;
  double beta = 0.1;
  int differs64 = 0, differsfma = 0;
  ascTensor tx = e2e_t1(x, ascFloat32, N), ty = e2e_t1(y, ascFloat32, N);
  ascScalar sb = e2e_weak_float(beta);
  (void)state;
  for (int i = 0; i < N; i++)
    x[i] = (float)i * 0.37f + 0.011f;
  E2E_RUN(lang, "k_scalars", &tx, &ty, &alpha, &sb);
  for (int i = 0; i < N; i++) {
    volatile float p = x[i] * (float)beta;
    float ref = p + alpha;
    differs64 += ref != (float)((double)x[i] * beta + (double)alpha);
    differsfma += ref != fmaf(x[i], (float)beta, alpha);
    if (memcmp(&y[i], &ref, 4) != 0)
      fail_msg("y[%d] = %.9g, expected the float32 result %.9g (fma: %.9g, "
               "float64: %.9g)",
               i, (double)y[i], (double)ref,
               (double)fmaf(x[i], (float)beta, alpha),
               (double)(float)((double)x[i] * beta + (double)alpha));
  }
  /* the inputs tell the three ways of computing apart */
  assert_true(differs64 > 0);
  assert_true(differsfma > 0);
}

/* ------------------------------------------------ scratch and unrolling */

static void test_local_array_2d(void **state) {
  int32_t x[6] = {1, 2, 3, 4, 5, 6};
  int64_t out[2] = {0, 0};
  ascTensor tx = e2e_t1(x, ascInt32, 6), to = e2e_t1(out, ascInt64, 2);
  (void)state;
  E2E_RUN(lang, "k_local2d", &tx, &to);
  assert_int_equal(out[0], 6);
  assert_int_equal(out[1], 30);
}

static void test_static_range(void **state) {
  double x[4] = {0.5, -1.25, 3.0, 0.1}, out[5], ref[5], s = 0.0;
  ascTensor tx = e2e_t1(x, ascFloat64, 4), to = e2e_t1(out, ascFloat64, 5);
  (void)state;
  E2E_RUN(lang, "k_static", &tx, &to);
  for (int k = 0; k < 4; k++) {
    s += x[k] * (k + 1);
    ref[1 + k] = x[k] * 4 - k;
  }
  ref[0] = s;
  e2e_eq_f64(out, ref, 5, "k_static");
}

static void test_helper_keywords_and_defaults(void **state) {
  double out[5] = {0};
  const double ref[5] = {3.5, 5.0, 2.0, 8.0, 15.25};
  ascTensor to = e2e_t1(out, ascFloat64, 5);
  (void)state;
  E2E_RUN(lang, "k_helper_forms", &to);
  e2e_eq_f64(out, ref, 5, "k_helper_forms");
}

static void test_helper_returning_a_struct(void **state) {
  double out[1] = {0};
  ascTensor to = e2e_t1(out, ascFloat64, 1);
  (void)state;
  E2E_RUN(lang, "k_struct_result", &to);
  assert_true(out[0] == 26.25);
}

static void test_range_step_zero_raises(void **state) {
  int64_t out[1] = {-1};
  ascTensor to = e2e_t1(out, ascInt64, 1);
  ascScalar s = e2e_weak_int(0);
  void *args[] = {&to, &s};
  (void)state;
  ASSERT_ERR(e2e_run_err(lang, "k_step", args), ascErrorKernelException);
  if (strstr(ascGetLastErrorMessage(), "ValueError") == NULL)
    fail_msg("message: %s", ascGetLastErrorMessage());
  s = e2e_weak_int(3);
  E2E_RUN(lang, "k_step", &to, &s);
  assert_int_equal(out[0], 4);
}

/* A loop (parallelised or not) reports the exception of the lowest
 * raising iteration, after every iteration below it has run. */
static void test_exception_in_loop_is_the_first(void **state) {
  enum { N = 5000 };
  int64_t *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  ascTensor tx = e2e_t1(x, ascInt64, N), ty = e2e_t1(y, ascInt64, N);
  void *args[] = {&tx, &ty};
  char where[64];
  (void)state;
  assert_non_null(x);
  assert_non_null(y);
  for (int i = 0; i < N; i++) {
    x[i] = i % 7 + 1;
    y[i] = -1;
  }
  x[3001] = 0;
  x[4500] = 0;
  ASSERT_ERR(e2e_run_err(lang, "k_divloop", args), ascErrorKernelException);
  snprintf(where, sizeof where, "lang.py:%d: kernel 'k_divloop' raised "
           "ZeroDivisionError",
           e2e_line_of(lang_text, "def k_divloop(", "y[i] = 100 // x[i]"));
  if (strstr(ascGetLastErrorMessage(), where) == NULL)
    fail_msg("'%s' not in '%s'", where, ascGetLastErrorMessage());
  for (int i = 0; i < 3001; i++)
    if (y[i] != 100 / x[i])
      fail_msg("y[%d] = %lld: iterations below the raising one must run", i,
               (long long)y[i]);
  free(x);
  free(y);
}

/* Comments and messages with C-significant characters reach C escaped:
 * the kernel compiles and the message comes back byte for byte. */
static void test_source_text_is_escaped(void **state) {
  int64_t out[1] = {0};
  ascTensor to = e2e_t1(out, ascInt64, 1);
  ascScalar n = e2e_weak_int(1);
  void *args[] = {&to, &n};
  const char *want = "ValueError: q\"uote */ back\\slash\ttab \xc3\xa9 ??" "= %s %n";
  (void)state;
  ASSERT_ERR(e2e_run_err(lang, "k_msg", args), ascErrorKernelException);
  if (strstr(ascGetLastErrorMessage(), want) == NULL)
    fail_msg("'%s' not in '%s'", want, ascGetLastErrorMessage());
  assert_int_equal(out[0], 1);
}

/* Parameter tables of Python kernels: unannotated parameters are generic,
 * tensors when the kernel uses them as tensors. */
static void test_kernel_info(void **state) {
  ascKernelInfo info;
  (void)state;
  ASSERT_OK(ascKernelGetInfo(&info, test_kernel(lang, "k_aug")));
  assert_string_equal(info.name, "k_aug");
  assert_int_equal(info.numParams, 3);
  assert_string_equal(info.params[0].name, "out");
  assert_int_equal(info.params[0].isTensor, 1);
  assert_int_equal(info.params[0].generic, 1);
  assert_int_equal(info.params[0].dtype, ascDataTypeCount);
  assert_int_equal(info.params[0].ndim, -1);
  assert_string_equal(info.params[2].name, "n");
  assert_int_equal(info.params[2].isTensor, 0);
  assert_int_equal(info.params[2].generic, 1);
  assert_int_equal(info.params[2].isConstExpr, 0);
  ASSERT_OK(ascKernelGetInfo(&info, test_kernel(lang, "k_constexpr")));
  assert_int_equal(info.params[1].isConstExpr, 1);
  assert_int_equal(info.params[1].isTensor, 0);
  assert_int_equal(info.params[1].dtype, ascInt64);
  ASSERT_OK(ascKernelGetInfo(&info, test_kernel(lang, "k_scalars")));
  assert_int_equal(info.params[2].dtype, ascFloat32);
  assert_int_equal(info.params[2].generic, 0);
  assert_int_equal(info.params[3].generic, 1);
}

static void test_helper_returning_from_its_loop(void **state) {
  int64_t x[6] = {3, 9, 7, 1, 7, 0}, out[2] = {-9, -9};
  ascTensor tx = e2e_t1(x, ascInt64, 6), to = e2e_t1(out, ascInt64, 2);
  (void)state;
  E2E_RUN(lang, "k_helper_loop_return", &tx, &to);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], -1);
}

/* With int64 arguments, then with weak (Python int) ones. */
static void test_helper_returning_a_tuple(void **state) {
  ascScalar args[2][2] = {
      {e2e_strong_int(ascInt64, -17), e2e_strong_int(ascInt64, 5)},
      {e2e_weak_int(-17), e2e_weak_int(5)}};
  (void)state;
  for (int c = 0; c < 2; c++) {
    int64_t out[3] = {0, 0, 0};
    ascTensor to = e2e_t1(out, ascInt64, 3);
    E2E_RUN(lang, "k_tuple_result", &to, &args[c][0], &args[c][1]);
    assert_int_equal(out[0], -4);
    assert_int_equal(out[1], 3);
    assert_int_equal(out[2], e2e_floordiv(5, -17) * 10 + e2e_mod(5, -17));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernel_info),
      cmocka_unit_test(test_assign_unpack_shape),
      cmocka_unit_test(test_augmented_assignment),
      cmocka_unit_test(test_if_elif_else),
      cmocka_unit_test(test_range_forms),
      cmocka_unit_test(test_while_break_continue),
      cmocka_unit_test(test_early_return_and_pass),
      cmocka_unit_test(test_try_except_finally),
      cmocka_unit_test(test_finally_on_continue_break_return),
      cmocka_unit_test(test_exceptions_from_helpers_and_division),
      cmocka_unit_test(test_uncaught_exceptions),
      cmocka_unit_test(test_helper_calls),
      cmocka_unit_test(test_struct_class),
      cmocka_unit_test(test_logic_and_conditional_expressions),
      cmocka_unit_test(test_min_max_abs),
      cmocka_unit_test(test_math_float64_vs_libm),
      cmocka_unit_test(test_math_float32_vs_libm),
      cmocka_unit_test(test_math_domain_errors),
      cmocka_unit_test(test_casts),
      cmocka_unit_test(test_cast_errors),
      cmocka_unit_test(test_floordiv_mod_ints),
      cmocka_unit_test(test_floordiv_mod_floats),
      cmocka_unit_test(test_power),
      cmocka_unit_test(test_power_literals),
      cmocka_unit_test(test_comparisons_and_bool),
      cmocka_unit_test(test_frozen_constants_and_globals),
      cmocka_unit_test(test_constexpr_parameter),
      cmocka_unit_test(test_annotated_and_weak_scalars),
      cmocka_unit_test(test_local_array_2d),
      cmocka_unit_test(test_static_range),
      cmocka_unit_test(test_helper_keywords_and_defaults),
      cmocka_unit_test(test_helper_returning_a_struct),
      cmocka_unit_test(test_helper_returning_from_its_loop),
      cmocka_unit_test(test_helper_returning_a_tuple),
      cmocka_unit_test(test_range_step_zero_raises),
      cmocka_unit_test(test_exception_in_loop_is_the_first),
      cmocka_unit_test(test_source_text_is_escaped),
  };
  return cmocka_run_group_tests_name("e2e_lang", tests, setup, teardown);
}
