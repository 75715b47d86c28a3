/*
 * End to end: defined results where C leaves them undefined or the front
 * end once disagreed with Python (issue 13): literal typing of INT64_MIN,
 * old Mac line endings, NUL bytes in raise messages, kernels built with
 * clang, shifts by any count, NFKC identifiers, the order of plain-range
 * float sums, and local storage that cannot fit a worker's stack.
 */
#include <limits.h>
#include <stdlib.h>

#include "e2e.h"

/* Compiles text as a module named sem.py. */
static ascModule_t load(const char *text) {
  return e2e_load("sem.py", text);
}

/* Compiling text fails with ascErrorCompile and a message containing
 * want. */
static void expect_compile_error(const char *text, const char *want) {
  ascModule_t m = NULL;
  ascCompileOptions o;
  memset(&o, 0, sizeof o);
  o.filename = "sem.py";
  ASSERT_ERR(ascModuleLoadPython(&m, text, &o), ascErrorCompile);
  if (strstr(ascGetLastErrorMessage(), want) == NULL)
    fail_msg("'%s' not in '%s'", want, ascGetLastErrorMessage());
}

/* ------------------------------------------------------------ literals */

/* -9223372036854775808 is INT64_MIN (an int64), as -2**63 is in Python;
 * 9223372036854775808 alone stays a uint64. */
static void test_int64_min_literal(void **state) {
  static const char text[] =
      "import asc\n"
      "\n"
      "@asc.kernel\n"
      "def k(b: asc.Tensor[asc.int64, 1]):\n"
      "    b[0] = -9223372036854775808\n"
      "    b[1] = 9223372036854775807\n"
      "    x = -9223372036854775808\n"
      "    b[2] = x + 1\n"
      "    b[3] = -9223372036854775808 // 2\n";
  int64_t b[4] = {0, 0, 0, 0};
  ascTensor tb = e2e_t1(b, ascInt64, 4);
  ascModule_t m;
  (void)state;
  m = load(text);
  E2E_RUN(m, "k", &tb);
  assert_true(b[0] == INT64_MIN);
  assert_true(b[1] == INT64_MAX);
  assert_true(b[2] == INT64_MIN + 1);
  assert_true(b[3] == INT64_MIN / 2);
  ascModuleUnload(m);
}

/* ---------------------------------------------------------- line ends */

/* A source file with "\r" line endings only compiles as Python reads it
 * (universal newlines), with lines counted at each "\r". */
static void test_cr_only_line_endings(void **state) {
  static const char text[] =
      "import asc\r"
      "\r"
      "@asc.kernel\r"
      "def k(b: asc.Tensor[asc.int64, 1]):\r"
      "    b[0] = 5\r"
      "    if b[0] == 5:\r"
      "        b[1] = 7\r";
  static const char bad[] =
      "import asc\r"
      "\r"
      "@asc.kernel\r"
      "def k(b: asc.Tensor[asc.int64, 1]):\r"
      "    b[0] = undefined_thing\r";
  int64_t b[2] = {0, 0};
  ascTensor tb = e2e_t1(b, ascInt64, 2);
  ascModule_t m;
  (void)state;
  m = load(text);
  E2E_RUN(m, "k", &tb);
  assert_int_equal(b[0], 5);
  assert_int_equal(b[1], 7);
  ascModuleUnload(m);
  expect_compile_error(bad, "sem.py:5:12:");
}

/* ------------------------------------------------------------ messages */

/* A NUL byte in a raise message comes back written as "\x00" (Python's
 * repr of it) with the text after it; it does not end the message. */
static void test_raise_message_with_nul(void **state) {
  static const char text[] =
      "import asc\n"
      "\n"
      "@asc.kernel\n"
      "def k(b: asc.Tensor[asc.int64, 1]):\n"
      "    b[0] = 1\n"
      "    raise ValueError(\"a\\x00b\\0c\")\n";
  int64_t b[1] = {0};
  ascTensor tb = e2e_t1(b, ascInt64, 1);
  void *args[] = {&tb};
  ascModule_t m;
  (void)state;
  m = load(text);
  ASSERT_ERR(e2e_run_err(m, "k", args), ascErrorKernelException);
  if (strstr(ascGetLastErrorMessage(), "ValueError: a\\x00b\\x00c") == NULL)
    fail_msg("message '%s' lacks 'a\\x00b\\x00c'", ascGetLastErrorMessage());
  assert_int_equal(b[0], 1);
  ascModuleUnload(m);
}

/* --------------------------------------------------------------- clang */

/* ASC_CC=clang (documented as supported) builds and runs kernels: the
 * float16 typedef no longer stops clang 14, which has no _Float16 on x86. */
static void test_clang_builds_kernels(void **state) {
  static const char text[] =
      "import asc\n"
      "\n"
      "@asc.kernel\n"
      "def k_clang(a: asc.Tensor[asc.float32, 1], n):\n"
      "    for i in range(n):\n"
      "        a[i] = a[i] * 2.0 + 1.0\n";
  float a[4] = {1, 2, 3, 4};
  ascTensor ta = e2e_t1(a, ascFloat32, 4);
  ascScalar n = e2e_weak_int(4);
  char *saved = getenv("ASC_CC") ? strdup(getenv("ASC_CC")) : NULL;
  ascModule_t m = NULL;
  ascCompileOptions o;
  ascError_t err;
  (void)state;
  memset(&o, 0, sizeof o);
  o.filename = "sem.py";
  setenv("ASC_CC", "clang", 1);
  err = ascModuleLoadPython(&m, text, &o);
  if (err == ascSuccess) {
    void *args[] = {&ta, &n};
    ascKernel_t k = NULL;
    err = ascModuleGetKernel(&k, m, "k_clang");
    if (err == ascSuccess)
      err = ascLaunchKernel(k, 1, args, NULL);
    if (err == ascSuccess)
      err = ascStreamSynchronize(NULL);
  }
  if (saved != NULL)
    setenv("ASC_CC", saved, 1);
  else
    unsetenv("ASC_CC");
  free(saved);
  if (err != ascSuccess)
    fail_msg("ASC_CC=clang: %s: %s", ascGetErrorName(err),
             ascGetLastErrorMessage());
  for (int i = 0; i < 4; i++)
    assert_true(a[i] == (float)(i + 1) * 2.0f + 1.0f);
  ascModuleUnload(m);
}

/* --------------------------------------------------- reduction order */

/* A plain range loop keeps Python's order of float additions (docs/
 * parallelize.md, "Reductions and their order"): 1e16, then ones, then
 * -1e16 sums to exactly 0 sequentially (each 1e16 + 1 rounds back to
 * 1e16), while partial sums per part give the ones back.  asc.prange
 * still reorders: with a team of two or more it differs from the
 * sequential sum, and it is the same on every run. */
static void test_plain_range_float_sum_is_sequential(void **state) {
  static const char text[] =
      "import asc\n"
      "\n"
      "@asc.kernel\n"
      "def fsum(x, out):\n"
      "    s = 0.0\n"
      "    for i in range(x.shape[0]):\n"
      "        s += x[i]\n"
      "    out[0] = s\n"
      "\n"
      "@asc.kernel\n"
      "def fsum_prange(x, out):\n"
      "    s = 0.0\n"
      "    for i in asc.prange(x.shape[0]):\n"
      "        s += x[i]\n"
      "    out[0] = s\n"
      "\n"
      "@asc.kernel\n"
      "def isum(x, out):\n"
      "    s = 0\n"
      "    for i in range(x.shape[0]):\n"
      "        s += x[i]\n"
      "    out[0] = s\n";
  enum { N = 200001 };
  double *x = malloc(N * sizeof *x), out[1], again[1], seq = 0;
  int64_t *xi = malloc(N * sizeof *xi), outi[1], seqi = 0;
  ascTensor tx = e2e_t1(x, ascFloat64, N), to = e2e_t1(out, ascFloat64, 1);
  ascTensor ta = e2e_t1(again, ascFloat64, 1);
  ascTensor txi = e2e_t1(xi, ascInt64, N), toi = e2e_t1(outi, ascInt64, 1);
  ascDeviceProp p;
  ascModule_t m;
  (void)state;
  assert_non_null(x);
  assert_non_null(xi);
  for (int i = 0; i < N; i++) {
    x[i] = i == 0 ? 1e16 : i == N - 1 ? -1e16 : 1.0;
    xi[i] = (int64_t)(i % 1000) * (i % 2 ? -1 : 1) + (i == 0 ? INT64_MAX / 2 : 0);
  }
  for (int i = 0; i < N; i++) {
    seq += x[i];
    seqi += xi[i];
  }
  assert_true(seq == 0.0); /* the data does what the comment says */
  m = load(text);
  E2E_RUN(m, "fsum", &tx, &to);
  if (memcmp(out, &seq, sizeof seq) != 0)
    fail_msg("plain range sum %.17g, sequential %.17g", out[0], seq);
  E2E_RUN(m, "isum", &txi, &toi);
  assert_true(outi[0] == seqi);
  ASSERT_OK(ascGetDeviceProperties(&p, 0));
  E2E_RUN(m, "fsum_prange", &tx, &to);
  E2E_RUN(m, "fsum_prange", &tx, &ta);
  assert_memory_equal(out, again, sizeof out);
  if (p.cores >= 2 && out[0] == seq)
    fail_msg("asc.prange on %d cores gave the sequential sum %.17g: not "
             "reordered", p.cores, out[0]);
  ascModuleUnload(m);
  free(x);
  free(xi);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int64_min_literal),
      cmocka_unit_test(test_cr_only_line_endings),
      cmocka_unit_test(test_raise_message_with_nul),
      cmocka_unit_test(test_clang_builds_kernels),
      cmocka_unit_test(test_plain_range_float_sum_is_sequential),
  };
  return cmocka_run_group_tests(tests, NULL, test_teardown);
}
