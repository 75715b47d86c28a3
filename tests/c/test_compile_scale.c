/*
 * Compile time in libasc itself: a kernel of 50,000 statements goes
 * through the front end, the passes and emit (every one of them near-linear;
 * bench/compile_scaling.sh measures how fast), and the compile budget
 * ASC_COMPILE_TIMEOUT_MS stops a compilation that takes too long with a
 * clear error.  The ctest TIMEOUT of this executable is only a hang guard.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc/asc.h"
#include "compiler/front/frontend.h"
#include "compiler/compile.h"
#include "compiler/types/types.h"
#include "jit/jit.h"

/* `n` statements `a[i % 4] += 1.0`, as in the report that found CSE
 * quadratic, and `x<j> = ...` with a fresh variable each: both once took
 * minutes at 20k-50k lines. */
static char *kernel_text(int n, size_t *len) {
  asc__buf b;
  asc__buf_init(&b);
  asc__buf_puts(&b, "import asc\n\n@asc.kernel\n"
                    "def k(a: asc.Tensor[asc.float64, 1], i: asc.int64):\n");
  for (int j = 0; j < n; j++) {
    if (j % 2 == 0)
      asc__buf_puts(&b, "    a[i % 4] += 1.0\n");
    else
      asc__buf_printf(&b, "    x%d = a[%d] * 2.0 + i\n    a[%d] = x%d\n", j,
                      j % 4, (j + 1) % 4, j);
  }
  assert_false(b.oom);
  *len = b.len;
  return b.data;
}

typedef struct result {
  bool ok;
  asc__buf c_text;
  asc__buf diag;
} result;

/* Front end to C text, as the driver does for one specialisation; deadline
 * 0 keeps the context's own (the default), 1 makes the budget already
 * spent once the front end is done. */
static void compile(const char *text, size_t len, int deadline, result *r) {
  asc__cctx c;
  jmp_buf jb;
  volatile bool ok = false;
  asc__buf_init(&r->c_text);
  asc__buf_init(&r->diag);
  asc__cctx_init(&c, "big.py", text, len, 1);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__ast_module *m = asc__frontend(&c, NULL, 0);
    asc__ast_func *k = asc__module_func(m, "k");
    asc__sig *sig = asc__sig_parse(&c, "k(f64[1], i64)");
    ASC_CHECK(&c, k != NULL && sig != NULL);
    if (deadline == 1)
      c.deadline_ns = 1;
    asc__compile_in in = {.module = m, .kernel = k, .sig = sig,
                          .stop = ASC_STOP_C};
    ok = asc__compile_kernel(&c, &in, NULL, &r->c_text);
  }
  r->ok = ok && c.fail == ASC_FAIL_NONE && c.nerrors == 0;
  asc__buf_puts(&r->diag, asc__buf_str(&c.diag));
  asc__cctx_free(&c);
}

static void result_free(result *r) {
  asc__buf_free(&r->c_text);
  asc__buf_free(&r->diag);
}

static void test_50k_statements_compile(void **state) {
  size_t len;
  char *text = kernel_text(50000, &len);
  result r;
  (void)state;
  unsetenv("ASC_COMPILE_TIMEOUT_MS");
  compile(text, len, 0, &r);
  if (!r.ok)
    print_error("%s\n", asc__buf_str(&r.diag));
  assert_true(r.ok);
  /* the last statement made it into the C, with its source line */
  assert_non_null(strstr(asc__buf_str(&r.c_text), "/* line 75002: a[i % 4] += 1.0"));
  result_free(&r);
  free(text);
}

static void test_budget_spent_in_pipeline(void **state) {
  size_t len;
  char *text = kernel_text(200, &len);
  result r;
  (void)state;
  unsetenv("ASC_COMPILE_TIMEOUT_MS");
  compile(text, len, 1, &r);
  assert_false(r.ok);
  assert_non_null(strstr(asc__buf_str(&r.diag),
                         "big.py: error: compiling took longer than its "
                         "budget of 60000 ms (ASC_COMPILE_TIMEOUT_MS); "
                         "stopped in infer"));
  result_free(&r);
  free(text);
}

/* Through the public API: a tiny budget on a large kernel is a compile
 * error with the message, not a crash or a hang (ASan checks for leaks). */
static void test_budget_public_api(void **state) {
  size_t len;
  char *text = kernel_text(20000, &len);
  ascModule_t mod = NULL;
  ascError_t err;
  (void)state;
  setenv("ASC_COMPILE_TIMEOUT_MS", "1", 1);
  err = ascModuleLoadPython(&mod, text, NULL);
  unsetenv("ASC_COMPILE_TIMEOUT_MS");
  assert_int_equal(err, ascErrorCompile);
  assert_null(mod);
  assert_non_null(strstr(ascGetLastErrorMessage(),
                         "budget of 1 ms (ASC_COMPILE_TIMEOUT_MS)"));
  free(text);
}

/* The jit reads ASC_COMPILE_TIMEOUT_MS into the options (values that are
 * not a positive number of milliseconds keep the default, as
 * ASC_CC_TIMEOUT_MS does), and the context takes its budget from them. */
static void test_budget_env_values(void **state) {
  static const struct {
    const char *v;
    uint64_t ms;
  } cases[] = {{"250", 250}, {"0", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
               {"-5", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
               {"12x", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
               {"", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
               {"99999999999999999999999", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
               {"999999999999", 86400000u}};
  (void)state;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    asc__compile_opts o;
    asc__cctx c;
    setenv("ASC_COMPILE_TIMEOUT_MS", cases[k].v, 1);
    asc__jit_compile_opts(&o, 0, 0);
    if (o.timeout_ms != cases[k].ms)
      print_error("ASC_COMPILE_TIMEOUT_MS=%s\n", cases[k].v);
    assert_int_equal(o.timeout_ms, cases[k].ms);
    asc__cctx_init(&c, "x.py", "", 0, 1);
    asc__cctx_set_opts(&c, &o);
    assert_int_equal(c.budget_ms, cases[k].ms);
    asc__cctx_free(&c);
  }
  unsetenv("ASC_COMPILE_TIMEOUT_MS");
}

/* The compiler reads no environment: a context has the default budget
 * whatever ASC_COMPILE_TIMEOUT_MS says, until it is given options. */
static void test_budget_not_from_env(void **state) {
  asc__cctx c;
  (void)state;
  setenv("ASC_COMPILE_TIMEOUT_MS", "250", 1);
  asc__cctx_init(&c, "x.py", "", 0, 1);
  unsetenv("ASC_COMPILE_TIMEOUT_MS");
  assert_int_equal(c.budget_ms, ASC_COMPILE_DEFAULT_TIMEOUT_MS);
  assert_int_equal(c.opts.timeout_ms, ASC_COMPILE_DEFAULT_TIMEOUT_MS);
  asc__cctx_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_50k_statements_compile),
      cmocka_unit_test(test_budget_spent_in_pipeline),
      cmocka_unit_test(test_budget_public_api),
      cmocka_unit_test(test_budget_env_values),
      cmocka_unit_test(test_budget_not_from_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
