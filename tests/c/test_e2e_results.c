/*
 * End to end: kernels that return values (docs/abi.md, "Results").  The
 * results follow the arguments in ascLaunchKernel's args as ascResult
 * pointers; a returned array is device memory the caller frees with
 * ascFree; a launch that raises returns nothing and leaks nothing.
 */
#include <stdlib.h>

#include "e2e.h"

static const char *text =
    "import asc\n"
    "import numpy as np\n"
    "\n"
    "@asc.kernel\n"
    "def pair(a):\n"
    "    out = np.empty_like(a)\n"
    "    for i in range(a.shape[0]):\n"
    "        out[i] = 2.0 * a[i]\n"
    "    return out, a.sum()\n"
    "\n"
    "@asc.kernel\n"
    "def first_negative(a):\n"
    "    for i in range(a.shape[0]):\n"
    "        if a[i] < 0:\n"
    "            return i\n"
    "    return -1\n"
    "\n"
    "@asc.kernel\n"
    "def fails_late(a, z: int):\n"
    "    out = np.zeros(a.shape[0] * 500)\n"
    "    return out, 1 // z\n"
    "\n"
    "@asc.kernel\n"
    "def nothing(a):\n"
    "    a[0] = 1.0\n"
    "\n"
    "@asc.kernel\n"
    "def rotated(a):\n"
    "    return a.sum() * 1j\n"
    "\n"
    "@asc.kernel\n"
    "def mine(a):\n"
    "    return a[asc.get_block_idx()]\n";

static ascKernel_t kernel(ascModule_t m, const char *name) {
  ascKernel_t k;
  ASSERT_OK(ascModuleGetKernel(&k, m, name));
  return k;
}

static void test_info_counts_results(void **state) {
  ascModule_t m = e2e_load("results.py", text);
  ascKernelInfo info;
  (void)state;
  ASSERT_OK(ascKernelGetInfo(&info, kernel(m, "pair")));
  assert_int_equal(info.numParams, 1);
  assert_int_equal(info.numResults, 2);
  ASSERT_OK(ascKernelGetInfo(&info, kernel(m, "first_negative")));
  assert_int_equal(info.numResults, 1);
  ASSERT_OK(ascKernelGetInfo(&info, kernel(m, "nothing")));
  assert_int_equal(info.numResults, 0);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_array_and_scalar(void **state) {
  ascModule_t m = e2e_load("results.py", text);
  double a[5] = {1, 2, 3, 4, 5};
  ascTensor ta = e2e_t1(a, ascFloat64, 5);
  ascResult r[2];
  void *args[] = {&ta, &r[0], &r[1]};
  const double *out;
  (void)state;
  memset(r, 0xab, sizeof r); /* the launch clears them */
  ASSERT_OK(ascLaunchKernel(kernel(m, "pair"), 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(r[0].kind, ascResultTensor);
  assert_int_equal(r[0].tensor.dtype, ascFloat64);
  assert_int_equal(r[0].tensor.ndim, 1);
  assert_int_equal(r[0].tensor.shape[0], 5);
  assert_int_equal(r[0].tensor.strides[0], 1);
  out = r[0].tensor.data;
  for (int i = 0; i < 5; i++)
    assert_true(out[i] == 2.0 * a[i]);
  assert_int_equal(r[1].kind, ascResultScalar);
  assert_int_equal(r[1].scalar.dtype, ascFloat64);
  assert_true(r[1].scalar.value.f == 15.0);
  /* device memory the caller owns */
  ASSERT_OK(ascFree(r[0].tensor.data));
  ASSERT_ERR(ascFree(r[0].tensor.data), ascErrorInvalidValue);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_return_inside_a_loop(void **state) {
  ascModule_t m = e2e_load("results.py", text);
  double a[4] = {1, 2, -3, -4}, b[2] = {1, 2};
  ascTensor ta = e2e_t1(a, ascFloat64, 4), tb = e2e_t1(b, ascFloat64, 2);
  ascResult r;
  void *args[] = {&ta, &r};
  (void)state;
  ASSERT_OK(ascLaunchKernel(kernel(m, "first_negative"), 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(r.kind, ascResultScalar);
  assert_int_equal(r.scalar.dtype, ascInt64);
  assert_int_equal(r.scalar.value.i, 2);
  args[0] = &tb;
  ASSERT_OK(ascLaunchKernel(kernel(m, "first_negative"), 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(r.scalar.value.i, -1);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_misuse(void **state) {
  ascModule_t m = e2e_load("results.py", text);
  double a[2] = {1, 2};
  ascTensor ta = e2e_t1(a, ascFloat64, 2);
  ascResult r[2];
  void *args[] = {&ta, &r[0], NULL};
  (void)state;
  ASSERT_ERR(ascLaunchKernel(kernel(m, "pair"), 1, args, NULL),
             ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "ascResult"));
  /* an SPMD kernel's blocks would each return a value */
  args[1] = &r[1];
  ASSERT_ERR(ascLaunchKernel(kernel(m, "mine"), 2, args, NULL),
             ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "one block"));
  ASSERT_OK(ascModuleUnload(m));
}

/* A kernel that never reads its block index runs as one block whatever
 * blockDim says (docs/abi.md), so it returns its value from any launch. */
static void test_not_spmd_returns_from_any_launch(void **state) {
  ascModule_t m = e2e_load("results.py", text);
  double a[2] = {1, 2};
  ascTensor ta = e2e_t1(a, ascFloat64, 2);
  ascResult r[2];
  void *args[] = {&ta, &r[0], &r[1]};
  (void)state;
  ASSERT_OK(ascLaunchKernel(kernel(m, "pair"), 4, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(r[0].kind, ascResultTensor);
  assert_int_equal(r[1].kind, ascResultScalar);
  assert_true(r[1].scalar.value.f == 3.0);
  assert_true(((double *)r[0].tensor.data)[1] == 4.0);
  ASSERT_OK(ascFree(r[0].tensor.data));
  ASSERT_OK(ascModuleUnload(m));
}

/* A complex number, which ascScalar cannot hold, comes as a 0-d array. */
static void test_complex_number_as_0d_array(void **state) {
  ascModule_t m = e2e_load("results.py", text);
  double a[3] = {1, 2, 4};
  ascTensor ta = e2e_t1(a, ascFloat64, 3);
  ascResult r;
  void *args[] = {&ta, &r};
  const double *z;
  (void)state;
  ASSERT_OK(ascLaunchKernel(kernel(m, "rotated"), 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(r.kind, ascResultTensor);
  assert_int_equal(r.tensor.dtype, ascComplex128);
  assert_int_equal(r.tensor.ndim, 0);
  z = r.tensor.data;
  assert_true(z[0] == 0.0 && z[1] == 7.0);
  ASSERT_OK(ascFree(r.tensor.data));
  ASSERT_OK(ascModuleUnload(m));
}

/* The first value is handed over before the second raises: the runtime
 * takes it back (and frees it), so the caller sees no result. */
static void test_a_raising_launch_returns_nothing(void **state) {
  ascModule_t m = e2e_load("results.py", text);
  double a[2] = {1, 2};
  ascTensor ta = e2e_t1(a, ascFloat64, 2);
  int64_t z = 0;
  ascResult r[2];
  void *args[] = {&ta, &z, &r[0], &r[1]};
  (void)state;
  for (int i = 0; i < 20; i++) {
    ASSERT_ERR(e2e_run_err(m, "fails_late", args), ascErrorKernelException);
    assert_int_equal(r[0].kind, ascResultNone);
    assert_int_equal(r[1].kind, ascResultNone);
  }
  z = 2;
  ASSERT_OK(e2e_run_err(m, "fails_late", args));
  assert_int_equal(r[0].kind, ascResultTensor);
  assert_int_equal(r[0].tensor.shape[0], 1000);
  assert_int_equal(r[1].scalar.value.i, 0);
  ASSERT_OK(ascFree(r[0].tensor.data));
  ASSERT_OK(ascModuleUnload(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_info_counts_results),
      cmocka_unit_test(test_array_and_scalar),
      cmocka_unit_test(test_return_inside_a_loop),
      cmocka_unit_test(test_misuse),
      cmocka_unit_test(test_not_spmd_returns_from_any_launch),
      cmocka_unit_test(test_a_raising_launch_returns_nothing),
      cmocka_unit_test(test_complex_number_as_0d_array),
  };
  return cmocka_run_group_tests_name("e2e_results", tests, NULL,
                                     test_teardown);
}
