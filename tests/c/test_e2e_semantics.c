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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int64_min_literal),
      cmocka_unit_test(test_cr_only_line_endings),
      cmocka_unit_test(test_raise_message_with_nul),
      cmocka_unit_test(test_clang_builds_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, test_teardown);
}
