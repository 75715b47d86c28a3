/*
 * Modules compiled ahead of time: tests/c/aot/aot_kernels.py, built by
 * `ascc --emit=so` (two kernels, two signatures each) and `--emit=h` at
 * build time.  This process runs with ASC_CC=/bin/false, so any attempt
 * to compile would fail: every launch here runs code from the module.
 */
#include <stdlib.h>

#include "testutil.h"

#include "aot_kernels.h"

static ascModule_t load(void) {
  ascModule_t m = NULL;
  ASSERT_OK(ascModuleLoad(&m, ASC_AOT_MODULE));
  return m;
}

static void test_no_compiler(void **state) {
  (void)state;
  /* the guard the rest relies on */
  assert_string_equal(getenv("ASC_CC"), "/bin/false");
}

static void test_kernels(void **state) {
  ascModule_t m = load();
  ascKernel_t k;
  ascKernelInfo info;
  (void)state;
  ASSERT_OK(ascModuleGetKernel(&k, m, "vadd"));
  ASSERT_OK(ascKernelGetInfo(&info, k));
  assert_string_equal(info.name, "vadd");
  assert_int_equal(info.numParams, 3);
  /* tensors: the launch's dtype and ndim pick the specialisation */
  assert_int_equal(info.params[0].isTensor, 1);
  assert_int_equal(info.params[0].generic, 1);
  ASSERT_OK(ascModuleGetKernel(&k, m, "axpy"));
  ASSERT_OK(ascKernelGetInfo(&info, k));
  assert_int_equal(info.params[0].isTensor, 0);
  assert_int_equal(info.params[0].generic, 1);
  ASSERT_ERR(ascModuleGetKernel(&k, m, "scale"), ascErrorInvalidKernel);
  assert_non_null(strstr(ascGetLastErrorMessage(),
                         "no kernel 'scale'; its kernels: "));
  assert_non_null(strstr(ascGetLastErrorMessage(), "'vadd'"));
  assert_non_null(strstr(ascGetLastErrorMessage(), "'axpy'"));
  ASSERT_OK(ascModuleUnload(m));
}

static void test_vadd(void **state) {
  ascModule_t m = load();
  ascKernel_t k;
  float xf[8], yf[8], of[8];
  double xd[4] = {1, 2, 3, 4}, yd[4] = {0.5, 0.5, 0.5, 0.5}, od[4];
  ascTensor x, y, o;
  void *args[3] = {&x, &y, &o};
  (void)state;
  for (int i = 0; i < 8; i++) {
    xf[i] = (float)i;
    yf[i] = 10.0f * (float)i;
    of[i] = -1.0f;
  }
  ASSERT_OK(ascModuleGetKernel(&k, m, "vadd"));
  /* float32, contiguous: the any-layout specialisation takes it */
  x = test_tensor1(xf, ascFloat32, 8);
  y = test_tensor1(yf, ascFloat32, 8);
  o = test_tensor1(of, ascFloat32, 8);
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i < 8; i++)
    assert_true(of[i] == 11.0f * (float)i);
  /* float32, every other element */
  for (int i = 0; i < 8; i++)
    of[i] = -1.0f;
  x.shape[0] = y.shape[0] = o.shape[0] = 4;
  x.strides[0] = y.strides[0] = o.strides[0] = 2;
  ASSERT_OK(ascLaunchKernel(k, 2, args, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i < 8; i++)
    assert_true(of[i] == (i % 2 == 0 ? 11.0f * (float)i : -1.0f));
  /* float64, contiguous */
  x = test_tensor1(xd, ascFloat64, 4);
  y = test_tensor1(yd, ascFloat64, 4);
  o = test_tensor1(od, ascFloat64, 4);
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i < 4; i++)
    assert_true(od[i] == xd[i] + 0.5);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_axpy(void **state) {
  ascModule_t m = load();
  ascKernel_t k;
  int64_t xi[5] = {1, 2, 3, 4, 5}, yi[5] = {10, 20, 30, 40, 50};
  float xf[3] = {1, 2, 3}, yf[3] = {1, 1, 1};
  ascTensor x, y;
  ascScalar a;
  void *args[3] = {&a, &x, &y};
  (void)state;
  ASSERT_OK(ascModuleGetKernel(&k, m, "axpy"));
  memset(&a, 0, sizeof a);
  a.dtype = ascInt64;
  a.value.i = 3;
  x = test_tensor1(xi, ascInt64, 5);
  y = test_tensor1(yi, ascInt64, 5);
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i < 5; i++)
    assert_int_equal(yi[i], 3 * (i + 1) + 10 * (i + 1));
  a.dtype = ascFloat32;
  a.value.f = 0.5;
  x = test_tensor1(xf, ascFloat32, 3);
  y = test_tensor1(yf, ascFloat32, 3);
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i < 3; i++)
    assert_true(yf[i] == 0.5f * (float)(i + 1) + 1.0f);
  ASSERT_OK(ascModuleUnload(m));
}

/* Arguments no specialisation fits: an error listing what the module
 * has, never a compilation. */
static void test_no_fit(void **state) {
  ascModule_t m = load();
  ascKernel_t k;
  int32_t xi[4] = {0}, yi[4] = {0}, oi[4] = {0};
  double xd[8] = {0}, yd[8] = {0}, od[8] = {0};
  float f[8] = {0};
  ascTensor x, y, o;
  ascScalar a;
  void *args[3] = {&x, &y, &o};
  void *axpy_args[3] = {&a, &x, &y};
  const char *msg;
  (void)state;
  ASSERT_OK(ascModuleGetKernel(&k, m, "vadd"));
  x = test_tensor1(xi, ascInt32, 4);
  y = test_tensor1(yi, ascInt32, 4);
  o = test_tensor1(oi, ascInt32, 4);
  ASSERT_ERR(ascLaunchKernel(k, 1, args, NULL), ascErrorInvalidValue);
  msg = ascGetLastErrorMessage();
  assert_non_null(strstr(msg, "kernel 'vadd'"));
  assert_non_null(strstr(msg, "i32[1], i32[1], i32[1]"));
  assert_non_null(strstr(msg, "vadd(f32[1:s], f32[1:s], f32[1:s])"));
  assert_non_null(strstr(msg, "vadd(f64[1], f64[1], f64[1])"));
  /* the float64 specialisation is for contiguous arrays only */
  x = test_tensor1(xd, ascFloat64, 4);
  y = test_tensor1(yd, ascFloat64, 4);
  o = test_tensor1(od, ascFloat64, 4);
  x.strides[0] = 2;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, NULL), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "f64[1:s], f64[1]"));
  /* overlapping tensors need an 'aliased' specialisation */
  x = test_tensor1(f, ascFloat32, 8);
  y = x;
  o = x;
  ASSERT_ERR(ascLaunchKernel(k, 1, args, NULL), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "overlapping"));
  /* a weak scalar is not an int64 one */
  ASSERT_OK(ascModuleGetKernel(&k, m, "axpy"));
  memset(&a, 0, sizeof a);
  a.dtype = ascInt64;
  a.weak = 1;
  x = test_tensor1(xd, ascInt64, 2);
  y = test_tensor1(yd, ascInt64, 2);
  ASSERT_ERR(ascLaunchKernel(k, 1, axpy_args, NULL), ascErrorInvalidValue);
  msg = ascGetLastErrorMessage();
  assert_non_null(strstr(msg, "axpy(int, i64[1], i64[1])"));
  assert_non_null(strstr(msg, "axpy(i64, i64[1:s], i64[1:s])"));
  assert_non_null(strstr(msg, "axpy(f32, f32[1], f32[1])"));
  ASSERT_OK(ascModuleUnload(m));
}

/* The generated header: typed wrappers over the same module. */
static void test_header(void **state) {
  float xf[4] = {1, 2, 3, 4}, yf[4] = {4, 3, 2, 1}, of[4];
  int64_t xi[3] = {1, 2, 3}, yi[3] = {0, 0, 0};
  double xd[2] = {1, 2}, yd[2] = {1, 2}, od[2];
  ascTensor x = test_tensor1(xf, ascFloat32, 4);
  ascTensor y = test_tensor1(yf, ascFloat32, 4);
  ascTensor o = test_tensor1(of, ascFloat32, 4);
  (void)state;
  ASSERT_OK(asc_aot_kernels_load(ASC_AOT_MODULE));
  ASSERT_OK(asc_launch_vadd_f32(NULL, 1, &x, &y, &o));
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i < 4; i++)
    assert_true(of[i] == 5.0f);
  x = test_tensor1(xd, ascFloat64, 2);
  y = test_tensor1(yd, ascFloat64, 2);
  o = test_tensor1(od, ascFloat64, 2);
  ASSERT_OK(asc_launch_vadd_f64(NULL, 1, &x, &y, &o));
  ASSERT_OK(ascDeviceSynchronize());
  assert_true(od[0] == 2.0 && od[1] == 4.0);
  x = test_tensor1(xi, ascInt64, 3);
  y = test_tensor1(yi, ascInt64, 3);
  ASSERT_OK(asc_launch_axpy_i64(NULL, 1, 2, &x, &y));
  /* o is float64: the f32 wrapper's launch fits nothing */
  ASSERT_ERR(asc_launch_axpy_f32(NULL, 1, 1.0f, &o, &y),
             ascErrorInvalidValue);
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i < 3; i++)
    assert_int_equal(yi[i], 2 * (i + 1));
  ASSERT_OK(asc_aot_kernels_unload());
}

/* A specs table that does not describe the module's kernels. */
static void test_bad_specs_table(void **state) {
  ascModule_t m = NULL;
  (void)state;
  ASSERT_ERR(ascModuleLoad(&m, TEST_MODULE("badspecs")),
             ascErrorInvalidModule);
  assert_null(m);
  assert_non_null(strstr(ascGetLastErrorMessage(),
                         "malformed signature 'k(f32[1], i64)'"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_compiler), cmocka_unit_test(test_kernels),
      cmocka_unit_test(test_vadd),        cmocka_unit_test(test_axpy),
      cmocka_unit_test(test_no_fit),      cmocka_unit_test(test_header),
      cmocka_unit_test(test_bad_specs_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
