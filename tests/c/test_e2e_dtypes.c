/*
 * End to end: every dtype through one generic kernel, and what the
 * language promises about integer widths and promotion (docs/types.md):
 *
 * - integer arithmetic is fixed-width and wraps modulo 2^bits, as numpy
 *   does (int8 100 * 2 + 1 is -55; int32 and int64 too);
 * - float16 and bfloat16 round to their type after every operation (round
 *   to nearest even);
 * - a weak scalar (Python float) takes the tensor's type: x * 0.1 with a
 *   float32 x is a float32 product with 0.1 rounded to float32; a strong
 *   float64 scalar makes the product float64, which a float32 tensor does
 *   not accept implicitly (a compile error at launch).
 */
#include <float.h>
#include <limits.h>
#include <stdlib.h>

#include "e2e.h"

static ascModule_t mod;

static int setup(void **state) {
  (void)state;
  return e2e_group_setup(&mod, "dtypes.py");
}

static int teardown(void **state) { return e2e_group_teardown(mod, state); }

/* float -> float16 with one rounding (a volatile store always rounds). */
static _Float16 f2h(float f) {
  volatile _Float16 h = (_Float16)f;
  return h;
}

static int is_signed_int(ascDataType dt) {
  return dt >= ascInt8 && dt <= ascInt64;
}

/* The low `size` bytes of v, sign- or zero-extended. */
static int64_t narrow_int(uint64_t v, size_t size, int sign) {
  unsigned sh = (unsigned)(64 - 8 * size);
  if (size == 8)
    return (int64_t)v;
  v = (v << sh);
  return sign ? (int64_t)v >> sh : (int64_t)(v >> sh);
}

static void test_affine_every_integer_dtype(void **state) {
  const int64_t vals[] = {0,   1,         -1,          2,
                          3,   100,       -100,        127,
                          -128, 200,      1 << 14,     1 << 30,
                          INT32_MAX,      INT64_MAX,   INT64_MIN,
                          12345678901LL};
  enum { N = sizeof vals / sizeof vals[0] };
  (void)state;
  for (ascDataType dt = ascInt8; dt <= ascUInt64; dt++) {
    size_t sz = ascDataTypeSize(dt);
    unsigned char x[N * 8], y[N * 8];
    ascTensor tx = e2e_t1(x, dt, N), ty = e2e_t1(y, dt, N);
    int sign = is_signed_int(dt);
    for (int i = 0; i < N; i++)
      memcpy(x + i * sz, &vals[i], sz);
    memset(y, 0xee, sizeof y);
    E2E_RUN(mod, "affine", &tx, &ty);
    for (int i = 0; i < N; i++) {
      uint64_t xi = 0, yi = 0;
      int64_t got, want;
      memcpy(&xi, x + i * sz, sz);
      memcpy(&yi, y + i * sz, sz);
      got = narrow_int(yi, sz, sign);
      want = narrow_int(xi * 2 + 1, sz, sign);
      if (got != want)
        fail_msg("%s: %lld * 2 + 1 = %lld, expected %lld (wrapping)",
                 ascDataTypeName(dt), (long long)narrow_int(xi, sz, sign),
                 (long long)got, (long long)want);
    }
  }
}

static const float fvals[] = {0.0f,     1.0f,   -1.0f,  0.5f,
                              1e-3f,    3.14159f, -2.5f, 1000.25f,
                              65504.0f, 1e30f,  -0.0f,  0.1f};
#define NF (int)(sizeof fvals / sizeof fvals[0])

static void test_affine_every_float_dtype(void **state) {
  float x32[NF], y32[NF];
  double x64[NF], y64[NF];
  _Float16 xh[NF], yh[NF];
  uint16_t xb[NF], yb[NF];
  ascTensor a, b;
  (void)state;
  for (int i = 0; i < NF; i++) {
    x32[i] = fvals[i];
    x64[i] = (double)fvals[i] / 3.0;
    xh[i] = f2h(fvals[i]);
    xb[i] = e2e_f2bf(fvals[i]);
  }
  a = e2e_t1(x32, ascFloat32, NF), b = e2e_t1(y32, ascFloat32, NF);
  E2E_RUN(mod, "affine", &a, &b);
  a = e2e_t1(x64, ascFloat64, NF), b = e2e_t1(y64, ascFloat64, NF);
  E2E_RUN(mod, "affine", &a, &b);
  a = e2e_t1(xh, ascFloat16, NF), b = e2e_t1(yh, ascFloat16, NF);
  E2E_RUN(mod, "affine", &a, &b);
  a = e2e_t1(xb, ascBFloat16, NF), b = e2e_t1(yb, ascBFloat16, NF);
  E2E_RUN(mod, "affine", &a, &b);
  for (int i = 0; i < NF; i++) {
    volatile float p32 = x32[i] * 2.0f;
    float r32 = p32 + 1.0f;
    double r64 = x64[i] * 2.0 + 1.0;
    _Float16 rh = f2h((float)f2h((float)xh[i] * 2.0f) + 1.0f);
    uint16_t rb = e2e_f2bf(e2e_bf2f(e2e_f2bf(e2e_bf2f(xb[i]) * 2.0f)) + 1.0f);
    if (memcmp(&y32[i], &r32, 4) != 0)
      fail_msg("float32 %g: got %.9g, expected %.9g", (double)x32[i],
               (double)y32[i], (double)r32);
    if (memcmp(&y64[i], &r64, 8) != 0)
      fail_msg("float64 %g: got %.17g, expected %.17g", x64[i], y64[i], r64);
    if (memcmp(&yh[i], &rh, 2) != 0)
      fail_msg("float16 %g: got %g, expected %g", (double)xh[i],
               (double)yh[i], (double)rh);
    if (yb[i] != rb)
      fail_msg("bfloat16 %g: got %g (0x%04x), expected %g (0x%04x)",
               (double)e2e_bf2f(xb[i]), (double)e2e_bf2f(yb[i]), yb[i],
               (double)e2e_bf2f(rb), rb);
  }
}

static void test_bool(void **state) {
  uint8_t x[4] = {0, 0, 1, 1}, z[4] = {0, 1, 0, 1}, y[4];
  int64_t n[4];
  ascTensor tx = e2e_t1(x, ascBool, 4), tz = e2e_t1(z, ascBool, 4),
            ty = e2e_t1(y, ascBool, 4), tn = e2e_t1(n, ascInt64, 4);
  (void)state;
  memset(y, 0x55, sizeof y);
  E2E_RUN(mod, "bools", &tx, &tz, &ty, &tn);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(y[i], x[i] ^ z[i]);
    assert_int_equal(n[i], x[i] + z[i] * 2); /* bool + bool is an int */
  }
}

/* Small integer types wrap through every operation, as numpy. */
static void small_ops(ascDataType dt) {
  const int64_t vals[] = {0, 1, -1, 5, -5, 100, -100, 127, -128, 17, 255, 16};
  enum { N = sizeof vals / sizeof vals[0] };
  size_t sz = ascDataTypeSize(dt);
  int sign = is_signed_int(dt);
  unsigned char x[N * 8], out[N * 6 * 8];
  ascTensor tx = e2e_t1(x, dt, N), to = e2e_t2(out, dt, N, 6);
  for (int i = 0; i < N; i++)
    memcpy(x + i * sz, &vals[i], sz);
  E2E_RUN(mod, "small_ops", &tx, &to);
  for (int i = 0; i < N; i++) {
    uint64_t xr = 0;
    int64_t v, ref[6];
    memcpy(&xr, x + i * sz, sz);
    v = narrow_int(xr, sz, sign);
    ref[0] = narrow_int((uint64_t)v * (uint64_t)v, sz, sign);
    ref[1] = narrow_int(0 - (uint64_t)v, sz, sign);
    ref[2] = narrow_int((uint64_t)v - 100, sz, sign);
    ref[3] = narrow_int((uint64_t)v + 100, sz, sign);
    ref[4] = sign ? e2e_floordiv(v, 3) : (int64_t)((uint64_t)v / 3);
    ref[5] = sign ? e2e_mod(v, 3) : (int64_t)((uint64_t)v % 3);
    for (int k = 0; k < 6; k++) {
      uint64_t g = 0;
      memcpy(&g, out + (i * 6 + k) * sz, sz);
      if (narrow_int(g, sz, sign) != ref[k])
        fail_msg("%s x=%lld op %d: got %lld, expected %lld",
                 ascDataTypeName(dt), (long long)v, k,
                 (long long)narrow_int(g, sz, sign), (long long)ref[k]);
    }
  }
}

static void test_small_int_wraparound(void **state) {
  (void)state;
  small_ops(ascInt8);
  small_ops(ascUInt8);
  small_ops(ascInt16);
  small_ops(ascUInt16);
}

/* int32 and int64 wrap like the small types: x + 1 > x is False at the
 * maximum (it must not be folded to True as C's signed overflow would
 * allow). */
static void test_wide_int_wraparound(void **state) {
  int32_t x32[3] = {INT32_MAX, 0, -1};
  int64_t x64[3] = {INT64_MAX, 0, -1};
  uint8_t out[3];
  ascTensor t32 = e2e_t1(x32, ascInt32, 3), t64 = e2e_t1(x64, ascInt64, 3),
            to = e2e_t1(out, ascBool, 3);
  (void)state;
  E2E_RUN(mod, "wrap_compare", &t32, &to);
  assert_int_equal(out[0], 0);
  assert_int_equal(out[1], 1);
  assert_int_equal(out[2], 1);
  E2E_RUN(mod, "wrap_compare", &t64, &to);
  assert_int_equal(out[0], 0);
  assert_int_equal(out[1], 1);
  assert_int_equal(out[2], 1);
}

static void test_mixed_promotion(void **state) {
  int8_t a8[3] = {-100, 127, -128};
  uint8_t b8[3] = {200, 255, 0};
  int16_t c16[3];
  uint16_t abf[3];
  _Float16 bh[3];
  float c32[3];
  uint32_t au[2] = {4000000000u, 7};
  int32_t bi[2] = {-5, INT32_MIN};
  int64_t c64[2];
  const float fv[3] = {1.5f, 3.0e4f, -0.1f};
  ascTensor ta, tb, tc;
  (void)state;
  ta = e2e_t1(a8, ascInt8, 3), tb = e2e_t1(b8, ascUInt8, 3);
  tc = e2e_t1(c16, ascInt16, 3);
  E2E_RUN(mod, "mixed", &ta, &tb, &tc); /* int8 + uint8 -> int16 */
  for (int i = 0; i < 3; i++)
    assert_int_equal(c16[i], a8[i] + b8[i]);
  for (int i = 0; i < 3; i++) {
    abf[i] = e2e_f2bf(fv[i]);
    bh[i] = f2h(fv[i] / 3.0f);
  }
  ta = e2e_t1(abf, ascBFloat16, 3), tb = e2e_t1(bh, ascFloat16, 3);
  tc = e2e_t1(c32, ascFloat32, 3);
  E2E_RUN(mod, "mixed", &ta, &tb, &tc); /* bfloat16 + float16 -> float32 */
  for (int i = 0; i < 3; i++) {
    float r = e2e_bf2f(abf[i]) + (float)bh[i];
    if (memcmp(&c32[i], &r, 4) != 0)
      fail_msg("bf16 + f16: got %.9g, expected %.9g", (double)c32[i],
               (double)r);
  }
  ta = e2e_t1(au, ascUInt32, 2), tb = e2e_t1(bi, ascInt32, 2);
  tc = e2e_t1(c64, ascInt64, 2);
  E2E_RUN(mod, "mixed", &ta, &tb, &tc); /* uint32 + int32 -> int64 */
  for (int i = 0; i < 2; i++)
    assert_int_equal(c64[i], (int64_t)au[i] + bi[i]);
}

static void test_weak_scalar_takes_tensor_type(void **state) {
  enum { N = 16 };
  float x32[N], y32[N];
  _Float16 xh[N], yh[N];
  uint16_t xb[N], yb[N];
  int32_t xi[N];
  double yd[N];
  ascScalar s = e2e_weak_float(0.1), strong = e2e_strong_float(ascFloat32, 0.1);
  ascTensor a, b;
  int differs = 0;
  (void)state;
  for (int i = 0; i < N; i++) {
    x32[i] = (float)i * 1.37f + 0.3f;
    xh[i] = f2h(x32[i]);
    xb[i] = e2e_f2bf(x32[i]);
    xi[i] = i * 1000003 - 7;
  }
  a = e2e_t1(x32, ascFloat32, N), b = e2e_t1(y32, ascFloat32, N);
  E2E_RUN(mod, "scale", &a, &b, &s);
  for (int i = 0; i < N; i++) {
    float r = x32[i] * 0.1f;
    differs += r != (float)((double)x32[i] * 0.1);
    if (memcmp(&y32[i], &r, 4) != 0)
      fail_msg("float32 * weak 0.1: got %.9g, expected %.9g", (double)y32[i],
               (double)r);
  }
  assert_true(differs > 0); /* float64 arithmetic would be seen */
  memset(y32, 0, sizeof y32);
  E2E_RUN(mod, "scale", &a, &b, &strong); /* a float32 scalar: same */
  for (int i = 0; i < N; i++) {
    float r = x32[i] * 0.1f;
    assert_memory_equal(&y32[i], &r, 4);
  }
  a = e2e_t1(xh, ascFloat16, N), b = e2e_t1(yh, ascFloat16, N);
  E2E_RUN(mod, "scale", &a, &b, &s);
  for (int i = 0; i < N; i++) {
    _Float16 r = f2h((float)xh[i] * (float)f2h(0.1f));
    if (memcmp(&yh[i], &r, 2) != 0)
      fail_msg("float16 * weak 0.1: got %g, expected %g", (double)yh[i],
               (double)r);
  }
  a = e2e_t1(xb, ascBFloat16, N), b = e2e_t1(yb, ascBFloat16, N);
  E2E_RUN(mod, "scale", &a, &b, &s);
  for (int i = 0; i < N; i++) {
    uint16_t r = e2e_f2bf(e2e_bf2f(xb[i]) * e2e_bf2f(e2e_f2bf(0.1f)));
    if (yb[i] != r)
      fail_msg("bfloat16 * weak 0.1: got 0x%04x, expected 0x%04x", yb[i], r);
  }
  /* int32 * weak float is float64 */
  a = e2e_t1(xi, ascInt32, N), b = e2e_t1(yd, ascFloat64, N);
  E2E_RUN(mod, "scale", &a, &b, &s);
  for (int i = 0; i < N; i++) {
    double r = (double)xi[i] * 0.1;
    assert_memory_equal(&yd[i], &r, 8);
  }
}

static void test_strong_float64_scalar_is_not_weak(void **state) {
  float x[2] = {1, 2}, y[2];
  ascScalar s = e2e_strong_float(ascFloat64, 0.1);
  ascTensor a = e2e_t1(x, ascFloat32, 2), b = e2e_t1(y, ascFloat32, 2);
  void *args[] = {&a, &b, &s};
  (void)state;
  /* float32 * float64 is float64, converted on the store into float32
   * like numpy's item assignment */
  ASSERT_OK(ascLaunchKernel(test_kernel(mod, "scale"), 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int i = 0; i < 2; i++)
    assert_true(y[i] == (float)((double)x[i] * 0.1));
}

/* Annotated scalars are passed as the bare value of their size. */
static void test_annotated_scalars_of_every_size(void **state) {
  double y[7];
  _Float16 a = (_Float16)1.5f;
  uint16_t b = e2e_f2bf(-2.25f);
  int8_t c = -7;
  uint16_t d = 65535;
  uint8_t e = 1;
  double f = 1e300;
  uint64_t g = (uint64_t)1 << 53;
  ascTensor ty = e2e_t1(y, ascFloat64, 7);
  const double ref[7] = {1.5, -2.25, -7, 65535, 1, 1e300, 9007199254740992.0};
  (void)state;
  E2E_RUN(mod, "raw_scalars", &ty, &a, &b, &c, &d, &e, &f, &g);
  e2e_eq_f64(y, ref, 7, "raw_scalars");
}

/* Strong scalar descriptors keep their dtype: int8 * int16 is int16 and
 * float16 * float16 rounds to float16. */
static void test_strong_scalar_descriptors(void **state) {
  int8_t x8[4] = {100, -100, 7, -128};
  int16_t y16[4];
  _Float16 xh[3] = {(_Float16)1.5f, (_Float16)-3.0f, (_Float16)1000.0f}, yh[3];
  ascScalar s16 = e2e_strong_int(ascInt16, -300);
  ascScalar sh = e2e_strong_float(ascFloat16, 0.1);
  ascTensor a = e2e_t1(x8, ascInt8, 4), b = e2e_t1(y16, ascInt16, 4);
  (void)state;
  E2E_RUN(mod, "scale", &a, &b, &s16);
  for (int i = 0; i < 4; i++)
    assert_int_equal(y16[i], (int16_t)(uint16_t)(uint32_t)(x8[i] * -300));
  a = e2e_t1(xh, ascFloat16, 3), b = e2e_t1(yh, ascFloat16, 3);
  E2E_RUN(mod, "scale", &a, &b, &sh);
  for (int i = 0; i < 3; i++) {
    _Float16 r = f2h((float)xh[i] * (float)f2h(0.1f));
    if (memcmp(&yh[i], &r, 2) != 0)
      fail_msg("float16 * float16 0.1: got %g, expected %g", (double)yh[i],
               (double)r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_affine_every_integer_dtype),
      cmocka_unit_test(test_affine_every_float_dtype),
      cmocka_unit_test(test_bool),
      cmocka_unit_test(test_small_int_wraparound),
      cmocka_unit_test(test_wide_int_wraparound),
      cmocka_unit_test(test_mixed_promotion),
      cmocka_unit_test(test_weak_scalar_takes_tensor_type),
      cmocka_unit_test(test_strong_float64_scalar_is_not_weak),
      cmocka_unit_test(test_annotated_scalars_of_every_size),
      cmocka_unit_test(test_strong_scalar_descriptors),
  };
  return cmocka_run_group_tests_name("e2e_dtypes", tests, setup, teardown);
}
