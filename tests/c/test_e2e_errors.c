/*
 * End to end: errors through the C API.  Compile errors carry
 * `file:line:col: error:` with the source line and a caret, honouring
 * ascCompileOptions.filename and firstLine; arguments that do not fit an
 * annotated kernel are ascErrorInvalidValue naming the parameter; unknown
 * kernels are ascErrorInvalidKernel; bounds checks raise IndexError.
 */
#include <stdlib.h>

#include "e2e.h"

static ascCompileOptions named(const char *file, int first) {
  ascCompileOptions o;
  memset(&o, 0, sizeof o);
  o.filename = file;
  o.firstLine = first;
  return o;
}

static void expect_in(const char *msg, const char *needle) {
  if (strstr(msg, needle) == NULL)
    fail_msg("'%s' not in message:\n%s", needle, msg);
}

static void test_syntax_error_at_load(void **state) {
  const char *text = "import asc\n"
                     "\n"
                     "@asc.kernel\n"
                     "def k(x):\n"
                     "    x[0] = 1 +\n";
  ascModule_t m = NULL;
  ascCompileOptions o = named("user/kernels.py", 40);
  const char *msg;
  (void)state;
  ASSERT_ERR(ascModuleLoadPython(&m, text, &o), ascErrorCompile);
  assert_null(m);
  msg = ascGetLastErrorMessage();
  expect_in(msg, "user/kernels.py:44:");
  expect_in(msg, ": error: ");
  expect_in(msg, "    x[0] = 1 +\n");
  expect_in(msg, "^");
  /* without options: "<string>" and lines from 1 */
  ASSERT_ERR(ascModuleLoadPython(&m, text, NULL), ascErrorCompile);
  expect_in(ascGetLastErrorMessage(), "<string>:5:");
}

/* A type error shows when the kernel is specialised, at launch. */
static void test_type_error_at_launch(void **state) {
  const char *text = "import asc\n"
                     "\n"
                     "@asc.kernel\n"
                     "def bad(x):\n"
                     "    n = x.shape[0]\n"
                     "    n = x[0]\n"
                     "    x[1] = n\n";
  ascModule_t m;
  ascCompileOptions o = named("typed.py", 10);
  float x[2] = {1, 2};
  ascTensor tx = e2e_t1(x, ascFloat32, 2);
  void *args[] = {&tx};
  const char *msg;
  (void)state;
  m = e2e_load_opts(text, &o);
  ASSERT_ERR(ascLaunchKernel(test_kernel(m, "bad"), 1, args, NULL),
             ascErrorCompile);
  msg = ascGetLastErrorMessage();
  expect_in(msg, "typed.py:15:9: error: ");
  expect_in(msg, "float32");
  expect_in(msg, "int64");
  expect_in(msg, "    n = x[0]\n");
  expect_in(msg, "        ^");
  expect_in(msg, "typed.py:14:5: note: ");
  /* the same arguments fail again with the same diagnostics */
  ASSERT_ERR(ascLaunchKernel(test_kernel(m, "bad"), 1, args, NULL),
             ascErrorCompile);
  expect_in(ascGetLastErrorMessage(), "typed.py:15:9: error: ");
  ASSERT_OK(ascModuleUnload(m));
}

/* A kernel whose parameters are all annotated is type-checked at load:
 * its type error fails ascModuleLoadPython.  The same body in a generic
 * kernel still loads (its types depend on the launch). */
static void test_annotated_type_error_at_load(void **state) {
  const char *text = "import asc\n"
                     "\n"
                     "@asc.kernel\n"
                     "def bad(x: asc.Tensor[asc.float32, 1]):\n"
                     "    n = x.shape[0]\n"
                     "    n = x[0]\n"
                     "    x[1] = n\n";
  const char *generic = "import asc\n"
                        "\n"
                        "@asc.kernel\n"
                        "def bad(x):\n"
                        "    n = x.shape[0]\n"
                        "    n = x[0]\n"
                        "    x[1] = n\n";
  ascModule_t m = NULL;
  ascCompileOptions o = named("typed.py", 10);
  const char *msg;
  (void)state;
  ASSERT_ERR(ascModuleLoadPython(&m, text, &o), ascErrorCompile);
  assert_null(m);
  msg = ascGetLastErrorMessage();
  expect_in(msg, "typed.py:15:9: error: ");
  expect_in(msg, "    n = x[0]\n");
  m = e2e_load_opts(generic, &o);
  ASSERT_OK(ascModuleUnload(m));
}

/* Text without @asc.kernel is an error, not an empty module. */
static void test_no_kernel_is_an_error(void **state) {
  const char *text = "import asc\n"
                     "\n"
                     "@asc.func\n"
                     "def helper(x):\n"
                     "    return x\n";
  ascModule_t m = NULL;
  ascCompileOptions o = named("helpers.py", 1);
  (void)state;
  ASSERT_ERR(ascModuleLoadPython(&m, text, &o), ascErrorCompile);
  assert_null(m);
  expect_in(ascGetLastErrorMessage(),
            "helpers.py:1:1: error: no @asc.kernel function in helpers.py");
  ASSERT_ERR(ascModuleLoadPython(&m, "", NULL), ascErrorCompile);
  expect_in(ascGetLastErrorMessage(), "no @asc.kernel function in <string>");
}

static const char annotated[] =
    "import asc\n"
    "\n"
    "@asc.func\n"
    "def twice(v):\n"
    "    return v * 2.0\n"
    "\n"
    "@asc.kernel\n"
    "def ann(x: asc.Tensor[asc.float32, 1], y: asc.Tensor[asc.float32, 1],\n"
    "        n: asc.int32, alpha: float):\n"
    "    for i in range(n):\n"
    "        y[i] = twice(x[i]) + alpha\n";

static void test_bad_arguments_name_the_parameter(void **state) {
  ascModule_t m;
  ascKernel_t k;
  ascKernelInfo info;
  float x[4] = {1, 2, 3, 4}, y[4];
  int32_t xi[4];
  int32_t n = 4;
  double alpha = 0.5;
  ascTensor tx = e2e_t1(x, ascFloat32, 4), ty = e2e_t1(y, ascFloat32, 4);
  ascTensor txi = e2e_t1(xi, ascInt32, 4), tx2 = e2e_t2(x, ascFloat32, 2, 2);
  void *good[] = {&tx, &ty, &n, &alpha};
  void *wrong_dtype[] = {&txi, &ty, &n, &alpha};
  void *wrong_ndim[] = {&tx, &tx2, &n, &alpha};
  void *missing[] = {&tx, &ty, NULL, &alpha};
  (void)state;
  m = e2e_load("ann.py", annotated);
  k = test_kernel(m, "ann");
  ASSERT_OK(ascKernelGetInfo(&info, k));
  assert_int_equal(info.numParams, 4);
  assert_string_equal(info.params[0].name, "x");
  assert_int_equal(info.params[0].isTensor, 1);
  assert_int_equal(info.params[0].dtype, ascFloat32);
  assert_int_equal(info.params[0].ndim, 1);
  assert_int_equal(info.params[0].generic, 0);
  assert_int_equal(info.params[2].isTensor, 0);
  assert_int_equal(info.params[2].dtype, ascInt32);
  assert_int_equal(info.params[3].dtype, ascFloat64);

  ASSERT_ERR(ascLaunchKernel(k, 1, wrong_dtype, NULL), ascErrorInvalidValue);
  expect_in(ascGetLastErrorMessage(), "'x'");
  ASSERT_ERR(ascLaunchKernel(k, 1, wrong_ndim, NULL), ascErrorInvalidValue);
  expect_in(ascGetLastErrorMessage(), "'y'");
  ASSERT_ERR(ascLaunchKernel(k, 1, missing, NULL), ascErrorInvalidValue);
  expect_in(ascGetLastErrorMessage(), "'n'");
  ASSERT_ERR(ascLaunchKernel(k, 1, NULL, NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascLaunchKernel(k, 0, good, NULL), ascErrorInvalidValue);
  /* none of the refused launches ran; the good one does */
  ASSERT_OK(ascLaunchKernel(k, 1, good, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int i = 0; i < 4; i++)
    assert_true(y[i] == x[i] * 2.0f + 0.5f);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_unknown_kernel(void **state) {
  ascModule_t m;
  ascKernel_t k = NULL;
  (void)state;
  m = e2e_load("ann.py", annotated);
  ASSERT_ERR(ascModuleGetKernel(&k, m, "no_such_kernel"),
             ascErrorInvalidKernel);
  expect_in(ascGetLastErrorMessage(), "no_such_kernel");
  /* a helper is not a kernel */
  ASSERT_ERR(ascModuleGetKernel(&k, m, "twice"), ascErrorInvalidKernel);
  ASSERT_OK(ascModuleUnload(m));
}

static const char bounds[] = "import asc\n"
                             "\n"
                             "@asc.kernel(boundscheck=True)\n"
                             "def checked(x, i):\n"
                             "    x[i] = 1.0\n"
                             "\n"
                             "@asc.kernel\n"
                             "def plain(x, i):\n"
                             "    x[i] = 2.0\n"
                             "\n"
                             "@asc.kernel(boundscheck=True)\n"
                             "def guarded(x, i, out):\n"
                             "    n = x.shape[0]\n"
                             "    out[0] = x[i] if i < n else -1.0\n"
                             "    out[1] = 1.0 if i < n and x[i] > 0 else 0.0\n"
                             "    out[2] = 1.0 if i >= n or x[i] > 0 else 0.0\n";

static void expect_index_error(ascModule_t m, const char *kernel,
                               const char *where) {
  double x[5] = {0};
  ascTensor tx = e2e_t1(x, ascFloat64, 5);
  ascScalar si = e2e_weak_int(5);
  void *args[] = {&tx, &si};
  ASSERT_ERR(e2e_run_err(m, kernel, args), ascErrorKernelException);
  expect_in(ascGetLastErrorMessage(), where);
  expect_in(ascGetLastErrorMessage(), "IndexError");
  si = e2e_weak_int(4);
  ASSERT_OK(e2e_run_err(m, kernel, args));
  assert_true(x[4] != 0);
}

static void test_bounds_checks(void **state) {
  ascModule_t m;
  ascCompileOptions o = named("bounds.py", 0);
  (void)state;
  m = e2e_load_opts(bounds, &o);
  expect_index_error(m, "checked", "bounds.py:5:");
  /* an access the condition rules out is not made (no IndexError) */
  {
    double x[3] = {1, 2, 3}, out[3];
    ascTensor tx = e2e_t1(x, ascFloat64, 3), to = e2e_t1(out, ascFloat64, 3);
    ascScalar si = e2e_weak_int(3);
    E2E_RUN(m, "guarded", &tx, &si, &to);
    assert_true(out[0] == -1.0);
    assert_true(out[1] == 0.0);
    assert_true(out[2] == 1.0);
    si = e2e_weak_int(1);
    E2E_RUN(m, "guarded", &tx, &si, &to);
    assert_true(out[0] == 2.0);
    assert_true(out[1] == 1.0);
    assert_true(out[2] == 1.0);
  }
  ASSERT_OK(ascModuleUnload(m));
  /* ascCompileOptions.boundsCheck turns checks on for every kernel */
  o.boundsCheck = 1;
  m = e2e_load_opts(bounds, &o);
  expect_index_error(m, "plain", "bounds.py:9:");
  ASSERT_OK(ascModuleUnload(m));
}

/* Kernel exceptions count lines from firstLine too. */
static void test_exception_lines_follow_first_line(void **state) {
  const char *text = "import asc\n"
                     "\n"
                     "@asc.kernel\n"
                     "def k(x, n):\n"
                     "    x[0] = 1.0\n"
                     "    if n > 1:\n"
                     "        raise RuntimeError(\"n > 1\")\n";
  ascCompileOptions o = named("lib/ops.py", 120);
  ascModule_t m;
  double x[1] = {0};
  ascTensor tx = e2e_t1(x, ascFloat64, 1);
  ascScalar sn = e2e_weak_int(2);
  void *args[] = {&tx, &sn};
  (void)state;
  m = e2e_load_opts(text, &o);
  ASSERT_ERR(e2e_run_err(m, "k", args), ascErrorKernelException);
  expect_in(ascGetLastErrorMessage(),
            "lib/ops.py:126: kernel 'k' raised RuntimeError: n > 1");
  assert_true(x[0] == 1.0);
  ASSERT_OK(ascModuleUnload(m));
}

static const char streams_text[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def fill(out, v):\n"
    "    b = asc.get_block_idx()\n"
    "    if v < 0:\n"
    "        raise ValueError(\"negative\")\n"
    "    out[b] = v * 100 + b * 10 + asc.get_block_num()\n";

/* Blocks see their index; a kernel exception is reported by its own
 * stream only, once, and the stream works again afterwards. */
static void test_blocks_and_per_stream_errors(void **state) {
  ascModule_t m;
  ascKernel_t k;
  ascStream_t s1, s2;
  int64_t a[5], b[5];
  ascTensor ta = e2e_t1(a, ascInt64, 5), tb = e2e_t1(b, ascInt64, 5);
  ascScalar bad = e2e_weak_int(-1), good = e2e_weak_int(3);
  void *args_bad[] = {&ta, &bad}, *args_good[] = {&tb, &good};
  (void)state;
  m = e2e_load("streams.py", streams_text);
  k = test_kernel(m, "fill");
  ASSERT_OK(ascStreamCreate(&s1));
  ASSERT_OK(ascStreamCreateWithFlags(&s2, ascStreamNonBlocking));
  for (int i = 0; i < 5; i++)
    a[i] = b[i] = -1;
  ASSERT_OK(ascLaunchKernel(k, 5, args_bad, s1));
  ASSERT_OK(ascLaunchKernel(k, 5, args_good, s2));
  ASSERT_OK(ascStreamSynchronize(s2));
  for (int i = 0; i < 5; i++)
    assert_int_equal(b[i], 300 + i * 10 + 5);
  ASSERT_ERR(ascStreamSynchronize(s1), ascErrorKernelException);
  expect_in(ascGetLastErrorMessage(),
            "streams.py:7: kernel 'fill' raised ValueError: negative");
  ASSERT_OK(ascStreamSynchronize(s1));
  for (int i = 0; i < 5; i++)
    assert_int_equal(a[i], -1);
  args_bad[1] = &good;
  ASSERT_OK(ascLaunchKernel(k, 5, args_bad, s1));
  ASSERT_OK(ascStreamSynchronize(s1));
  for (int i = 0; i < 5; i++)
    assert_int_equal(a[i], 300 + i * 10 + 5);
  ASSERT_OK(ascStreamDestroy(s1));
  ASSERT_OK(ascStreamDestroy(s2));
  ASSERT_OK(ascModuleUnload(m));
}

/* ascModuleLoadPythonFile: the path names the file in messages. */
static void test_load_from_file(void **state) {
  char path[512];
  FILE *fp;
  ascModule_t m;
  int64_t a[5];
  ascTensor ta = e2e_t1(a, ascInt64, 5);
  ascScalar bad = e2e_weak_int(-1), good = e2e_weak_int(1);
  void *args[] = {&ta, &good};
  (void)state;
  snprintf(path, sizeof path, "%s/e2e_streams_kernel.py", ASC_BINARY_DIR);
  fp = fopen(path, "w");
  assert_non_null(fp);
  fputs(streams_text, fp);
  fclose(fp);
  ASSERT_OK(ascModuleLoadPythonFile(&m, path, NULL));
  ASSERT_OK(e2e_run_err(m, "fill", args));
  assert_int_equal(a[0], 101);
  args[1] = &bad;
  ASSERT_ERR(e2e_run_err(m, "fill", args), ascErrorKernelException);
  expect_in(ascGetLastErrorMessage(), path);
  expect_in(ascGetLastErrorMessage(), "e2e_streams_kernel.py:7: kernel");
  ASSERT_OK(ascModuleUnload(m));
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_syntax_error_at_load),
      cmocka_unit_test(test_type_error_at_launch),
      cmocka_unit_test(test_annotated_type_error_at_load),
      cmocka_unit_test(test_no_kernel_is_an_error),
      cmocka_unit_test(test_bad_arguments_name_the_parameter),
      cmocka_unit_test(test_unknown_kernel),
      cmocka_unit_test(test_bounds_checks),
      cmocka_unit_test(test_exception_lines_follow_first_line),
      cmocka_unit_test(test_blocks_and_per_stream_errors),
      cmocka_unit_test(test_load_from_file),
  };
  return cmocka_run_group_tests_name("e2e_errors", tests, NULL, test_teardown);
}
