/*
 * C emission: IR text -> passes -> C -> cc -> dlopen -> call, checking the
 * results against Python semantics.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kernel_harness.h"

static void test_vadd(void **state) {
  static const char ir[] =
      "kernel @vadd(%a: tensor<f32,1,contig>, %b: tensor<f32,1,contig>, "
      "%c: tensor<f32,1,contig>) {\n"
      "  %n:i64 = dim %a, 0 @3\n"
      "  pfor %i:i64 = 0, %n, 1 @4 {\n"
      "    %sa:i64 = stride %a, 0\n"
      "    %oa:i64 = mul %i, %sa\n"
      "    %x:f32 = load %a, %oa\n"
      "    %y:f32 = load %b, %oa\n"
      "    %z:f32 = add %x, %y\n"
      "    store %c, %oa, %z\n"
      "  }\n"
      "}\n";
  harness_mod hm;
  float a[100], b[100], c[100];
  int64_t shape[1] = {100}, st[1] = {1};
  asc_ktensor ta, tb, tc;
  void *args[3];
  asc_kexc exc;
  (void)state;
  for (int i = 0; i < 100; i++) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i;
    c[i] = -1;
  }
  ta = harness_tensor(a, ascFloat32, 1, shape, st);
  tb = harness_tensor(b, ascFloat32, 1, shape, st);
  tc = harness_tensor(c, ascFloat32, 1, shape, st);
  args[0] = &ta;
  args[1] = &tb;
  args[2] = &tc;
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_equal(hm.desc->abi_version, ASC_KABI_VERSION);
  assert_int_equal(hm.desc->nkernels, 1);
  assert_string_equal(hm.desc->kernels[0].name, "vadd");
  assert_int_equal(hm.desc->kernels[0].nparams, 3);
  assert_int_equal(hm.desc->kernels[0].params[0].flags, ASC_KPARAM_TENSOR);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int i = 0; i < 100; i++)
    assert_true(c[i] == 1.5f * (float)i);
  harness_unload(&hm);
}

/* A strided 2-D copy with a negative stride on the outer axis. */
static void test_strided_negative(void **state) {
  static const char ir[] =
      "kernel @flip(%a: tensor<i32,2>, %c: tensor<i32,2>) {\n"
      "  %n0:i64 = dim %a, 0\n"
      "  %n1:i64 = dim %a, 1\n"
      "  for %i:i64 = 0, %n0, 1 {\n"
      "    for %j:i64 = 0, %n1, 1 {\n"
      "      %s0:i64 = stride %a, 0\n"
      "      %s1:i64 = stride %a, 1\n"
      "      %p:i64 = mul %i, %s0\n"
      "      %q:i64 = mul %j, %s1\n"
      "      %o:i64 = add %p, %q\n"
      "      %v:i32 = load %a, %o\n"
      "      %t0:i64 = stride %c, 0\n"
      "      %t1:i64 = stride %c, 1\n"
      "      %u:i64 = mul %i, %t0\n"
      "      %w:i64 = mul %j, %t1\n"
      "      %oc:i64 = add %u, %w\n"
      "      store %c, %oc, %v\n"
      "    }\n"
      "  }\n"
      "}\n";
  harness_mod hm;
  int32_t a[4 * 6], c[3 * 2];
  /* a viewed as rows 3,2,1 (negative stride), every other column */
  int64_t sa[2] = {3, 2}, ta_st[2] = {-6, 2};
  int64_t sc[2] = {3, 2}, tc_st[2] = {2, 1};
  asc_ktensor ta, tc;
  void *args[2];
  asc_kexc exc;
  (void)state;
  for (int i = 0; i < 24; i++)
    a[i] = i;
  memset(c, 0, sizeof c);
  ta = harness_tensor(&a[3 * 6], ascInt32, 2, sa, ta_st);
  tc = harness_tensor(c, ascInt32, 2, sc, tc_st);
  args[0] = &ta;
  args[1] = &tc;
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      assert_int_equal(c[i * 2 + j], a[(3 - i) * 6 + 2 * j]);
  harness_unload(&hm);
}

static int64_t py_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    q--;
  return q;
}

/* Float /, // and % by zero follow IEEE as numpy does (no
 * ZeroDivisionError): a / 0 and a // 0 are inf with the signs' sign (nan
 * for 0 and nan), a % 0 is nan; the folder agrees with the C helpers. */
static void test_float_division_by_zero(void **state) {
  static const char ir[] =
      "kernel @dz(%a: tensor<f64,1,contig>, %b: tensor<f64,1,contig>, "
      "%o: tensor<f64,2,contig>, %g: tensor<f32,1,contig>) {\n"
      "  %n:i64 = dim %a, 0\n"
      "  %so:i64 = stride %o, 0\n"
      "  for %i:i64 = 0, %n, 1 {\n"
      "    %x:f64 = load %a, %i\n"
      "    %y:f64 = load %b, %i\n"
      "    %q:f64 = div %x, %y\n"
      "    %f:f64 = floordiv %x, %y\n"
      "    %m:f64 = mod %x, %y\n"
      "    %r:i64 = mul %i, %so\n"
      "    store %o, %r, %q\n"
      "    %r1:i64 = add %r, 1\n"
      "    store %o, %r1, %f\n"
      "    %r2:i64 = add %r, 2\n"
      "    store %o, %r2, %m\n"
      "  }\n"
      "  %c1:f32 = floordiv -3.0, 0.0\n"
      "  store %g, 0, %c1\n"
      "  %c2:f32 = mod 3.0, 0.0\n"
      "  store %g, 1, %c2\n"
      "  %c3:f32 = div 3.0, -0.0\n"
      "  store %g, 2, %c3\n"
      "}\n";
  enum { N = 6 };
  double a[N] = {1.0, -1.0, 0.0, INFINITY, NAN, 2.5};
  double b[N] = {0.0, 0.0, 0.0, 0.0, 0.0, -0.0};
  double want[N][2] = {{INFINITY, INFINITY}, {-INFINITY, -INFINITY},
                       {NAN, NAN},           {INFINITY, INFINITY},
                       {NAN, NAN},           {-INFINITY, -INFINITY}};
  double o[N * 3];
  float g[3] = {0, 0, 0};
  int64_t sa[1] = {N}, so[2] = {N, 3}, sto[2] = {3, 1}, sg[1] = {3},
          st[1] = {1};
  asc_ktensor ta, tb, to, tg;
  void *args[4] = {&ta, &tb, &to, &tg};
  harness_mod hm;
  asc_kexc exc;
  (void)state;
  ta = harness_tensor(a, ascFloat64, 1, sa, st);
  tb = harness_tensor(b, ascFloat64, 1, sa, st);
  to = harness_tensor(o, ascFloat64, 2, so, sto);
  tg = harness_tensor(g, ascFloat32, 1, sg, st);
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int k = 0; k < N; k++) {
    for (int j = 0; j < 2; j++) {
      double got = o[k * 3 + j], w = want[k][j];
      if (isnan(w))
        assert_true(isnan(got));
      else
        assert_true(got == w);
    }
    assert_true(isnan(o[k * 3 + 2]));
  }
  assert_true(g[0] == -INFINITY);
  assert_true(isnan(g[1]));
  assert_true(g[2] == -INFINITY);
  harness_unload(&hm);
}

static void test_floordiv_mod(void **state) {
  static const char ir[] =
      "kernel @dm(%a: tensor<i64,1,contig>, %b: tensor<i64,1,contig>, "
      "%q: tensor<i64,1,contig>, %r: tensor<i64,1,contig>, "
      "%fa: tensor<f64,1,contig>, %fb: tensor<f64,1,contig>, "
      "%fq: tensor<f64,1,contig>, %fr: tensor<f64,1,contig>) {\n"
      "  %n:i64 = dim %a, 0\n"
      "  for %i:i64 = 0, %n, 1 {\n"
      "    %x:i64 = load %a, %i\n"
      "    %y:i64 = load %b, %i\n"
      "    %d:i64 = floordiv %x, %y\n"
      "    %m:i64 = mod %x, %y\n"
      "    store %q, %i, %d\n"
      "    store %r, %i, %m\n"
      "    %fx:f64 = load %fa, %i\n"
      "    %fy:f64 = load %fb, %i\n"
      "    %fd:f64 = floordiv %fx, %fy\n"
      "    %fm:f64 = mod %fx, %fy\n"
      "    store %fq, %i, %fd\n"
      "    store %fr, %i, %fm\n"
      "  }\n"
      "}\n";
  int64_t a[8] = {7, -7, 7, -7, 6, -6, INT64_MIN, 0};
  int64_t b[8] = {2, 2, -2, -2, 3, -3, -1, 5};
  int64_t q[8], r[8];
  double fa[8] = {7.5, -7.5, 7.5, -7.5, 6, -6, 0.0, -0.0};
  double fb[8] = {2, 2, -2, -2, 3, -3, -1, 5};
  double fq[8], fr[8];
  /* Python: 7.5//2=3 %=1.5; -7.5//2=-4 %=0.5; 7.5//-2=-4 %=-0.5;
   * -7.5//-2=3 %=-1.5; 6//3=2 %=0; -6//-3=2 %=-0.0; 0.0//-1=-0.0 %=-0.0;
   * -0.0//5=-0.0 %=0.0 */
  double eq[8] = {3, -4, -4, 3, 2, 2, -0.0, -0.0};
  double er[8] = {1.5, 0.5, -0.5, -1.5, 0, -0.0, -0.0, 0.0};
  int64_t shape[1] = {8}, st[1] = {1};
  asc_ktensor t[8];
  void *args[8];
  void *ptr[8] = {a, b, q, r, fa, fb, fq, fr};
  harness_mod hm;
  asc_kexc exc;
  (void)state;
  for (int k = 0; k < 8; k++) {
    t[k] = harness_tensor(ptr[k], k < 4 ? ascInt64 : ascFloat64, 1, shape,
                          st);
    args[k] = &t[k];
  }
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int k = 0; k < 6; k++) {
    assert_int_equal(q[k], py_floordiv(a[k], b[k]));
    assert_int_equal(r[k], a[k] - py_floordiv(a[k], b[k]) * b[k]);
  }
  assert_int_equal(q[6], INT64_MIN); /* wraps: no trap */
  assert_int_equal(r[6], 0);
  assert_int_equal(q[7], 0);
  assert_int_equal(r[7], 0);
  for (int k = 0; k < 8; k++) {
    assert_true(fq[k] == eq[k]);
    assert_true(signbit(fq[k]) == signbit(eq[k]));
    assert_true(fr[k] == er[k]);
    assert_true(signbit(fr[k]) == signbit(er[k]));
  }
  harness_unload(&hm);
}

static void test_zero_division_raises(void **state) {
  static const char ir[] =
      "kernel @zd(%a: tensor<i32,1,contig>, %d: i32) {\n"
      "  %x:i32 = load %a, 0 @5\n"
      "  %y:i32 = floordiv %x, %d @6\n"
      "  store %a, 0, %y @7\n"
      "}\n";
  harness_mod hm;
  int32_t a[1] = {10}, d = 0;
  int64_t shape[1] = {1}, st[1] = {1};
  asc_ktensor ta = harness_tensor(a, ascInt32, 1, shape, st);
  void *args[2] = {&ta, &d};
  asc_kexc exc;
  (void)state;
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_ZERO_DIVISION_ERROR);
  assert_int_equal(exc.line, 6);
  assert_string_equal(exc.msg, "integer division or modulo by zero");
  assert_int_equal(a[0], 10);
  d = -3;
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(a[0], -4);
  harness_unload(&hm);
}

/* In a parallel body: the exception comes back through the body's return
 * value and parallel_for. */
static void test_raise_in_parallel_body(void **state) {
  static const char ir[] =
      "kernel @pz(%a: tensor<i64,1,contig>) {\n"
      "  %n:i64 = dim %a, 0\n"
      "  pfor %i:i64 = 0, %n, 1 @3 {\n"
      "    %x:i64 = load %a, %i @4\n"
      "    %y:i64 = mod 100, %x @5\n"
      "    store %a, %i, %y\n"
      "  }\n"
      "}\n";
  harness_mod hm;
  int64_t a[20];
  int64_t shape[1] = {20}, st[1] = {1};
  asc_ktensor ta = harness_tensor(a, ascInt64, 1, shape, st);
  void *args[1] = {&ta};
  asc_kexc exc;
  (void)state;
  for (int i = 0; i < 20; i++)
    a[i] = i == 11 ? 0 : 7;
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_ZERO_DIVISION_ERROR);
  assert_int_equal(exc.line, 5);
  assert_int_equal(a[10], 2);
  harness_unload(&hm);
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void test_f16_bf16(void **state) {
  static const char ir[] =
      "kernel @cv(%a: tensor<f32,1,contig>, %h: tensor<f16,1,contig>, "
      "%b: tensor<bf16,1,contig>, %ha: tensor<f32,1,contig>, "
      "%ba: tensor<f32,1,contig>) {\n"
      "  %n:i64 = dim %a, 0\n"
      "  for %i:i64 = 0, %n, 1 {\n"
      "    %x:f32 = load %a, %i\n"
      "    %xh:f16 = cast %x\n"
      "    %xb:bf16 = cast %x\n"
      "    store %h, %i, %xh\n"
      "    store %b, %i, %xb\n"
      "    %s:bf16 = add %xb, %xb\n"
      "    %yh:f32 = cast %xh\n"
      "    %yb:f32 = cast %s\n"
      "    store %ha, %i, %yh\n"
      "    store %ba, %i, %yb\n"
      "  }\n"
      "}\n";
  harness_mod hm;
  enum { N = 7 };
  float a[N] = {1.0f,
                1.0f + 0x1p-8f,         /* bf16 tie -> even (1.0) */
                1.0f + 3 * 0x1p-8f,     /* bf16 tie -> even (1 + 2^-6) */
                1.0f + 0x1p-11f,        /* f16 tie -> even (1.0) */
                65520.0f,               /* f16 overflow -> inf */
                NAN, -2.5f};
  _Float16 h[N];
  uint16_t b[N];
  float ha[N], ba[N];
  int64_t shape[1] = {N}, st[1] = {1};
  asc_ktensor t[5];
  void *ptr[5] = {a, h, b, ha, ba};
  int dts[5] = {ascFloat32, ascFloat16, ascBFloat16, ascFloat32, ascFloat32};
  void *args[5];
  asc_kexc exc;
  (void)state;
  for (int k = 0; k < 5; k++) {
    t[k] = harness_tensor(ptr[k], dts[k], 1, shape, st);
    args[k] = &t[k];
  }
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(b[0], 0x3f80);
  assert_int_equal(b[1], 0x3f80);
  assert_int_equal(b[2], 0x3f82);
  assert_true((b[5] & 0x7f80) == 0x7f80 && (b[5] & 0x7f) != 0); /* NaN */
  assert_int_equal(b[6], 0xc020);
  assert_true(ha[0] == 1.0f);
  assert_true(ha[3] == 1.0f);
  assert_true(isinf(ha[4]));
  assert_true(isnan(ha[5]));
  assert_true(ha[6] == -2.5f);
  assert_true(ba[2] == 2 * bits_f32(0x3f820000u));
  assert_true(isnan(ba[5]));
  assert_true(ba[6] == -5.0f);
  harness_unload(&hm);
}

static void test_try_except(void **state) {
  static const char ir[] =
      "kernel @te(%o: tensor<i32,1,contig>, %k: i32) {\n"
      "  try {\n"
      "    %c:bool = eq %k, 1\n"
      "    if %c {\n"
      "      raise ValueError \"bad \\\"value\\\" */ here\" @4\n"
      "    }\n"
      "    %c2:bool = eq %k, 2\n"
      "    if %c2 {\n"
      "      raise IndexError \"out of range\" @8\n"
      "    }\n"
      "    %c3:bool = eq %k, 3\n"
      "    if %c3 {\n"
      "      %z:i32 = floordiv %k, 0 @12\n"
      "      store %o, 2, %z\n"
      "    }\n"
      "    store %o, 0, 1\n"
      "  } except(ValueError, ArithmeticError) {\n"
      "    store %o, 0, 42\n"
      "  } finally {\n"
      "    store %o, 1, 7\n"
      "  }\n"
      "}\n";
  harness_mod hm;
  int32_t o[3], k;
  int64_t shape[1] = {3}, st[1] = {1};
  asc_ktensor to = harness_tensor(o, ascInt32, 1, shape, st);
  void *args[2] = {&to, &k};
  asc_kexc exc;
  (void)state;
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  for (k = 0; k < 4; k++) {
    int rc;
    memset(o, 0, sizeof o);
    rc = harness_call(&hm, 0, args, &exc);
    assert_int_equal(o[1], 7); /* finally runs on every path */
    if (k == 2) {
      assert_int_not_equal(rc, 0);
      assert_int_equal(exc.kind, ASC_KEXC_INDEX_ERROR);
      assert_int_equal(exc.line, 8);
      assert_string_equal(exc.msg, "out of range");
    } else {
      assert_int_equal(rc, 0);
      assert_int_equal(o[0], k == 0 ? 1 : 42);
    }
  }
  harness_unload(&hm);
}

static void test_reduction(void **state) {
  static const char ir[] =
      "kernel @sum(%a: tensor<f64,1,contig>, %o: tensor<f64,1,contig>) {\n"
      "  %s:f64 = mov 0.0\n"
      "  %m:f64 = mov -inf\n"
      "  %n:i64 = dim %a, 0\n"
      "  pfor %i:i64 = 0, %n, 1 reduce(add %s, max %m) {\n"
      "    %x:f64 = load %a, %i\n"
      "    %s:f64 = add %s, %x\n"
      "    %m:f64 = max %m, %x\n"
      "  }\n"
      "  store %o, 0, %s\n"
      "  store %o, 1, %m\n"
      "}\n";
  harness_mod hm;
  enum { N = 1000 };
  static double a[N];
  double o[2];
  int64_t shape[1] = {N}, st[1] = {1}, s2[1] = {2};
  asc_ktensor ta = harness_tensor(a, ascFloat64, 1, shape, st);
  asc_ktensor to = harness_tensor(o, ascFloat64, 1, s2, st);
  void *args[2] = {&ta, &to};
  asc_kexc exc;
  (void)state;
  for (int i = 0; i < N; i++)
    a[i] = (double)((i * 37) % 101);
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  {
    double want = 0;
    for (int i = 0; i < N; i++)
      want += a[i];
    assert_true(o[0] == want);
    assert_true(o[1] == 100.0);
  }
  harness_unload(&hm);
}

static void test_local_array_and_unroll(void **state) {
  static const char ir[] =
      "kernel @la(%o: tensor<i64,1,contig>) {\n"
      "  %buf:tensor<i64,2,contig> = local_array [4, 8]\n"
      "  for %i:i64 = 0, 4, 1 unroll {\n"
      "    for %j:i64 = 0, 8, 1 {\n"
      "      %s0:i64 = stride %buf, 0\n"
      "      %r:i64 = mul %i, %s0\n"
      "      %off:i64 = add %r, %j\n"
      "      %v:i64 = mul %i, %j\n"
      "      store %buf, %off, %v\n"
      "    }\n"
      "  }\n"
      "  %t:i64 = mov 0\n"
      "  %n:i64 = dim %buf, 0\n"
      "  %m:i64 = dim %buf, 1\n"
      "  %tot:i64 = mul %n, %m\n"
      "  for %k:i64 = 0, %tot, 1 {\n"
      "    %x:i64 = load %buf, %k\n"
      "    %t:i64 = add %t, %x\n"
      "  }\n"
      "  store %o, 0, %t\n"
      "}\n";
  harness_mod hm;
  int64_t o[1];
  int64_t shape[1] = {1}, st[1] = {1};
  asc_ktensor to = harness_tensor(o, ascInt64, 1, shape, st);
  void *args[1] = {&to};
  asc_kexc exc;
  (void)state;
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(o[0], (0 + 1 + 2 + 3) * 28);
  harness_unload(&hm);
}

static void test_float_to_int_and_pow(void **state) {
  static const char ir[] =
      "kernel @fi(%x: f64, %o: tensor<i64,1,contig>) {\n"
      "  %i:i64 = cast %x @2\n"
      "  %p:i64 = pow %i, 3\n"
      "  store %o, 0, %p\n"
      "}\n";
  harness_mod hm;
  double x;
  int64_t o[1];
  int64_t shape[1] = {1}, st[1] = {1};
  asc_ktensor to = harness_tensor(o, ascInt64, 1, shape, st);
  void *args[2] = {&x, &to};
  asc_kexc exc;
  (void)state;
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  x = -2.7;
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(o[0], -8);
  x = NAN;
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_VALUE_ERROR);
  x = 1e300;
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_OVERFLOW_ERROR);
  harness_unload(&hm);
}

/* break / raise leaving try-finally and critical regions */
static void test_finally_and_critical(void **state) {
  char path[600];
  FILE *fp;
  static char ir[4096];
  size_t n;
  harness_mod hm;
  int32_t a[2], k;
  int64_t shape[1] = {2}, st[1] = {1};
  asc_ktensor ta = harness_tensor(a, ascInt32, 1, shape, st);
  void *args[2] = {&ta, &k};
  asc_kexc exc;
  (void)state;
  snprintf(path, sizeof path, "%s/tests/golden/passes/pipeline/try_finally.ir",
           ASC_SOURCE_DIR);
  fp = fopen(path, "rb");
  assert_non_null(fp);
  n = fread(ir, 1, sizeof ir - 1, fp);
  fclose(fp);
  ir[n] = 0;
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  /* n=0: ten iterations, each runs the finally */
  k = 0;
  memset(a, 0, sizeof a);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(a[0], 1);
  assert_int_equal(a[1], 0);
  /* n=2: ValueError in the critical section: lock released, finally runs,
   * not caught by except(IndexError) */
  k = 2;
  memset(a, 0, sizeof a);
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_VALUE_ERROR);
  assert_string_equal(exc.msg, "two");
  assert_int_equal(a[0], 1);
  assert_int_equal(harness_crit_depth, 0);
  /* n=7: break runs the finally, which raises IndexError: caught */
  k = 7;
  memset(a, 0, sizeof a);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(a[0], 0);
  assert_int_equal(a[1], 2);
  assert_int_equal(harness_crit_depth, 0);
  harness_unload(&hm);
}

/* Per-bin locks around a read-modify-write of two arrays, on real
 * threads: every update is counted (acquire on lock, release on unlock). */
static void test_lock_array(void **state) {
  static const char ir[] =
      "kernel @bins(%x: tensor<i64,1,contig>, %cnt: tensor<i64,1,contig>, "
      "%sum: tensor<i64,1,contig>, %locks: tensor<i32,1,contig>) {\n"
      "  %n:i64 = dim %x, 0 @3\n"
      "  %nb:i64 = dim %cnt, 0 @3\n"
      "  pfor %i:i64 = 0, %n, 1 @4 {\n"
      "    %v:i64 = load %x, %i @5\n"
      "    %b:i64 = mod %v, %nb @5\n"
      "    lock %locks, %b @6\n"
      "    %c:i64 = load %cnt, %b @7\n"
      "    %c1:i64 = add %c, 1 @7\n"
      "    store %cnt, %b, %c1 @7\n"
      "    %s:i64 = load %sum, %b @8\n"
      "    %s1:i64 = add %s, %v @8\n"
      "    store %sum, %b, %s1 @8\n"
      "    unlock %locks, %b @9\n"
      "  }\n"
      "}\n";
  enum { N = 200000, NB = 3 };
  static int64_t x[N];
  int64_t cnt[NB] = {0}, sum[NB] = {0}, want_cnt[NB] = {0}, want_sum[NB] = {0};
  int32_t locks[NB] = {0};
  int64_t sx[1] = {N}, sb[1] = {NB}, st[1] = {1};
  asc_ktensor tx, tc, ts, tl;
  void *args[4] = {&tx, &tc, &ts, &tl};
  asc_kexc exc;
  harness_mod hm;
  (void)state;
  for (int i = 0; i < N; i++) {
    x[i] = (int64_t)((i * 7919) % 1009);
    want_cnt[x[i] % NB]++;
    want_sum[x[i] % NB] += x[i];
  }
  tx = harness_tensor(x, ascInt64, 1, sx, st);
  tc = harness_tensor(cnt, ascInt64, 1, sb, st);
  ts = harness_tensor(sum, ascInt64, 1, sb, st);
  tl = harness_tensor(locks, ascInt32, 1, sb, st);
  assert_int_equal(harness_load(&hm, ir, NULL), 0);
  assert_int_equal(harness_call_threaded(&hm, 0, args, &exc), 0);
  for (int b = 0; b < NB; b++) {
    assert_int_equal(cnt[b], want_cnt[b]);
    assert_int_equal(sum[b], want_sum[b]);
    assert_int_equal(locks[b], 0);
  }
  harness_unload(&hm);
}

/* gemm_exact (a recognised matrix product, passes/gemmrec.c): at the top
 * level, and per iteration inside a parallel body (in_pfor), on strided
 * sub-rectangles with offsets; the result is the triple loop's, bit for
 * bit (f64 only: the f32 product is emitted unused without a warning). */
static void test_gemm_exact(void **state) {
  static const char ir[] =
      "kernel @g(%a: tensor<f64,2>, %b: tensor<f64,2>, %c: tensor<f64,2>, "
      "%d: tensor<f64,3>) {\n"
      "  %sa0:i64 = stride %a, 0\n"
      "  %sa1:i64 = stride %a, 1\n"
      "  %sb0:i64 = stride %b, 0\n"
      "  %sb1:i64 = stride %b, 1\n"
      "  %sc0:i64 = stride %c, 0\n"
      "  %sc1:i64 = stride %c, 1\n"
      "  %oc:i64 = add %sc0, %sc1\n"
      "  gemm_exact %c, %oc, %sc0, %sc1, %a, 1, %sa0, %sa1, %b, 0, %sb0, "
      "%sb1, 5, 6, 7, 0 @3\n"
      "  %sd0:i64 = stride %d, 0\n"
      "  %sd1:i64 = stride %d, 1\n"
      "  %sd2:i64 = stride %d, 2\n"
      "  pfor %q:i64 = 0, 3, 1 @4 {\n"
      "    %od:i64 = mul %q, %sd0\n"
      "    %ob:i64 = mul %q, %sb1\n"
      "    gemm_exact %d, %od, %sd1, %sd2, %a, 0, %sa0, %sa1, %b, %ob, "
      "%sb0, %sb1, 4, 2, 8, 1 @5\n"
      "  }\n"
      "}\n";
  harness_mod hm;
  double a[8 * 9], b[9 * 8], c[7 * 9], d[3 * 4 * 2], c0[7 * 9], d0[3 * 4 * 2];
  int64_t sha[2] = {8, 9}, sta[2] = {9, 1};
  int64_t shb[2] = {9, 8}, stb[2] = {1, 9};   /* column-major b */
  int64_t shc[2] = {7, 9}, stc[2] = {9, 1};
  int64_t shd[3] = {3, 4, 2}, std_[3] = {8, 2, 1};
  asc_ktensor ta, tb, tc, td;
  void *args[4];
  asc_kexc exc;
  (void)state;
  for (int i = 0; i < 72; i++) {
    a[i] = (double)((i * 37) % 23) / 7.0 - 1.5;
    b[i] = (double)((i * 19) % 29) / 3.0 - 4.25;
  }
  for (int i = 0; i < 63; i++)
    c[i] = c0[i] = -2.0;
  for (int i = 0; i < 24; i++)
    d[i] = d0[i] = (double)i / 8.0;
  /* references: the loops' order of operations */
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 6; j++) {
      double acc = 0.0;
      for (int p = 0; p < 7; p++)
        acc = acc + a[1 + i * 9 + p] * b[p + j * 9];
      c0[10 + i * 9 + j] = acc;
    }
  for (int q = 0; q < 3; q++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 2; j++) {
        double acc = d0[q * 8 + i * 2 + j];
        for (int p = 0; p < 8; p++)
          acc = acc + a[i * 9 + p] * b[q * 9 + p + j * 9];
        d0[q * 8 + i * 2 + j] = acc;
      }
  ta = harness_tensor(a, ascFloat64, 2, sha, sta);
  tb = harness_tensor(b, ascFloat64, 2, shb, stb);
  tc = harness_tensor(c, ascFloat64, 2, shc, stc);
  td = harness_tensor(d, ascFloat64, 3, shd, std_);
  args[0] = &ta;
  args[1] = &tb;
  args[2] = &tc;
  args[3] = &td;
  assert_int_equal(harness_load(&hm, ir, ""), 0);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int i = 0; i < 63; i++)
    assert_memory_equal(&c[i], &c0[i], sizeof c[i]);
  for (int i = 0; i < 24; i++)
    assert_memory_equal(&d[i], &d0[i], sizeof d[i]);
  harness_unload(&hm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vadd),
      cmocka_unit_test(test_strided_negative),
      cmocka_unit_test(test_floordiv_mod),
      cmocka_unit_test(test_float_division_by_zero),
      cmocka_unit_test(test_zero_division_raises),
      cmocka_unit_test(test_raise_in_parallel_body),
      cmocka_unit_test(test_f16_bf16),
      cmocka_unit_test(test_try_except),
      cmocka_unit_test(test_reduction),
      cmocka_unit_test(test_local_array_and_unroll),
      cmocka_unit_test(test_float_to_int_and_pow),
      cmocka_unit_test(test_finally_and_critical),
      cmocka_unit_test(test_lock_array),
      cmocka_unit_test(test_gemm_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
