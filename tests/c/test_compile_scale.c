/*
 * Compile time and memory in libasc itself: a kernel of 50,000 statements
 * goes through the front end, the passes and emit (every one of them
 * near-linear; bench/compile_scaling.sh measures how fast), memory grows
 * linearly with the number of whole-array statements, and the compile
 * budgets (ASC_COMPILE_TIMEOUT_MS, checked inside every pass too, and
 * ASC_COMPILE_MEMORY) stop a compilation with a clear error.  The ctest
 * TIMEOUT of this executable is only a hang guard.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "asc/asc.h"
#include "compiler/front/frontend.h"
#include "compiler/compile.h"
#include "compiler/emit_c.h"
#include "compiler/lower.h"
#include "compiler/passes/passes.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"
#include "jit/jit.h"
#include "subproc.h"
#include "testutil.h"

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

/* Whole-array statements on 1-D arrays: n x `t<k> = a * k.0 + b` and
 * `out += t<k>`, a loop nest and a new array each (the report that found
 * the passes quadratic in memory: 400 statements took 4.3 GB). */
static char *arrays_text(int n, size_t *len) {
  asc__buf b;
  asc__buf_init(&b);
  asc__buf_puts(&b, "import asc\nimport numpy as np\n\n@asc.kernel\n"
                    "def k(a: asc.Tensor[asc.float64, 1], "
                    "b: asc.Tensor[asc.float64, 1], "
                    "out: asc.Tensor[asc.float64, 1]):\n");
  for (int j = 0; j < n; j++)
    asc__buf_printf(&b, "    t%d = a * %d.0 + b\n    out += t%d\n", j, j, j);
  assert_false(b.oom);
  *len = b.len;
  return b.data;
}

#define ARRAYS_SIG "k(f64[1], f64[1], f64[1])"

/* The same on a 4-D array: n x `a += 1.0` or `a[...] = a * 2.0 + i`, a
 * nest of four loops each (5,000 of them once hit the 60 s budget). */
static char *arrays4_text(int n, size_t *len) {
  asc__buf b;
  asc__buf_init(&b);
  asc__buf_puts(&b, "import asc\n\n@asc.kernel\n"
                    "def k(a: asc.Tensor[asc.float64, 4], i: asc.int64):\n");
  for (int j = 0; j < n; j++)
    asc__buf_puts(&b, j % 2 == 0 ? "    a += 1.0\n"
                                 : "    a[...] = a * 2.0 + i\n");
  assert_false(b.oom);
  *len = b.len;
  return b.data;
}

#define ARRAYS4_SIG "k(f64[4], i64)"

typedef struct result {
  bool ok;
  asc__buf c_text;
  asc__buf diag;
} result;

/* Front end to C text, as the driver does for one specialisation, with
 * signature sig_text; deadline 0 keeps the context's own (the default), 1
 * makes the budget already spent once the front end is done; memory_bytes
 * is the memory budget (0: the default). */
static void compile_sig(const char *text, size_t len, const char *sig_text,
                        int deadline, uint64_t memory_bytes, result *r) {
  asc__cctx c;
  jmp_buf jb;
  volatile bool ok = false;
  asc__buf_init(&r->c_text);
  asc__buf_init(&r->diag);
  asc__cctx_init(&c, "big.py", text, len, 1);
  if (memory_bytes != 0) {
    asc__compile_opts o;
    asc__compile_opts_init(&o);
    o.memory_bytes = memory_bytes;
    asc__cctx_set_opts(&c, &o);
  }
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__ast_module *m = asc__frontend(&c, NULL, 0);
    asc__ast_func *k = asc__module_func(m, "k");
    asc__sig *sig = asc__sig_parse(&c, sig_text);
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

static void compile(const char *text, size_t len, int deadline, result *r) {
  compile_sig(text, len, "k(f64[1], i64)", deadline, 0, r);
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

/* Loads a large kernel through the public API with variable var set to
 * value: a compile error whose message holds want, not a crash or a hang
 * (ASan checks for leaks). */
static void check_public_api_budget(const char *var, const char *value,
                                    const char *want) {
  size_t len;
  char *text = kernel_text(20000, &len);
  ascModule_t mod = NULL;
  ascError_t err;
  setenv(var, value, 1);
  err = ascModuleLoadPython(&mod, text, NULL);
  unsetenv(var);
  if (err != ascErrorCompile)
    print_error("%s=%s: %s\n", var, value, ascGetLastErrorMessage());
  assert_int_equal(err, ascErrorCompile);
  assert_null(mod);
  assert_non_null(strstr(ascGetLastErrorMessage(), want));
  free(text);
}

/* Through the public API: a tiny budget on a large kernel is a compile
 * error with the message. */
static void test_budget_public_api(void **state) {
  (void)state;
  check_public_api_budget("ASC_COMPILE_TIMEOUT_MS", "1",
                          "budget of 1 ms (ASC_COMPILE_TIMEOUT_MS)");
}

/* The jit reads ASC_COMPILE_TIMEOUT_MS and ASC_COMPILE_MEMORY into the
 * options, and the context takes its budgets from them.  Times that are
 * not a positive number of milliseconds keep the default, as
 * ASC_CC_TIMEOUT_MS does; the memory takes bytes with the binary
 * suffixes, at least 1 MiB. */
static void test_budget_env_values(void **state) {
  static const struct {
    const char *var, *v;
    uint64_t want;
  } cases[] = {
      {"ASC_COMPILE_TIMEOUT_MS", "250", 250},
      {"ASC_COMPILE_TIMEOUT_MS", "0", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
      {"ASC_COMPILE_TIMEOUT_MS", "-5", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
      {"ASC_COMPILE_TIMEOUT_MS", "12x", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
      {"ASC_COMPILE_TIMEOUT_MS", "", ASC_COMPILE_DEFAULT_TIMEOUT_MS},
      {"ASC_COMPILE_TIMEOUT_MS", "99999999999999999999999",
       ASC_COMPILE_DEFAULT_TIMEOUT_MS},
      {"ASC_COMPILE_TIMEOUT_MS", "999999999999", 86400000u},
      {"ASC_COMPILE_MEMORY", "512M", 512ull << 20},
      {"ASC_COMPILE_MEMORY", "2G", 2ull << 30},
      {"ASC_COMPILE_MEMORY", "1048576", 1u << 20},
      {"ASC_COMPILE_MEMORY", "", ASC_COMPILE_DEFAULT_MEMORY},
      {"ASC_COMPILE_MEMORY", "1000", ASC_COMPILE_DEFAULT_MEMORY},
      {"ASC_COMPILE_MEMORY", "-1", ASC_COMPILE_DEFAULT_MEMORY}};
  (void)state;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    asc__compile_opts o;
    asc__cctx c;
    uint64_t got, ctx_got;
    setenv(cases[k].var, cases[k].v, 1);
    asc__jit_compile_opts(&o, 0, 0);
    asc__cctx_init(&c, "x.py", "", 0, 1);
    asc__cctx_set_opts(&c, &o);
    if (strcmp(cases[k].var, "ASC_COMPILE_MEMORY") == 0) {
      got = o.memory_bytes;
      ctx_got = c.mem_budget;
    } else {
      got = o.timeout_ms;
      ctx_got = c.budget_ms;
    }
    if (got != cases[k].want)
      print_error("%s=%s\n", cases[k].var, cases[k].v);
    assert_int_equal(got, cases[k].want);
    assert_int_equal(ctx_got, cases[k].want);
    asc__cctx_free(&c);
    unsetenv(cases[k].var);
  }
}

/* The compiler reads no environment: a context has the default budgets
 * whatever ASC_COMPILE_TIMEOUT_MS and ASC_COMPILE_MEMORY say, until it is
 * given options. */
static void test_budget_not_from_env(void **state) {
  asc__cctx c;
  (void)state;
  setenv("ASC_COMPILE_TIMEOUT_MS", "250", 1);
  setenv("ASC_COMPILE_MEMORY", "16M", 1);
  asc__cctx_init(&c, "x.py", "", 0, 1);
  unsetenv("ASC_COMPILE_TIMEOUT_MS");
  unsetenv("ASC_COMPILE_MEMORY");
  assert_int_equal(c.budget_ms, ASC_COMPILE_DEFAULT_TIMEOUT_MS);
  assert_int_equal(c.opts.timeout_ms, ASC_COMPILE_DEFAULT_TIMEOUT_MS);
  assert_int_equal(c.mem_budget, ASC_COMPILE_DEFAULT_MEMORY);
  assert_int_equal(c.opts.memory_bytes, ASC_COMPILE_DEFAULT_MEMORY);
  asc__cctx_free(&c);
}

/* ------------------------------------------- memory grows linearly */

/* The peak resident memory a compile of n whole-array statements may
 * take: linear in n (the compiler holds some 40-70 KiB a statement: IR,
 * notes, C text), with room to spare; sanitizers add shadow memory and
 * keep freed blocks in quarantine. */
static long arrays_bound_kb(int n) {
  long kb = 64L * 1024 + 160L * n;
  return TEST_SANITIZED ? 4 * kb : kb;
}

static int arrays_n(int ndim) {
  int n = ndim == 1 ? 2000 : 1000;
  return TEST_SANITIZED ? n / 4 : n;
}

/* The peak resident memory of this process image, KiB (VmHWM: unlike
 * getrusage's ru_maxrss it starts afresh at exec, not at the spawning
 * parent's peak); -1 when unknown. */
static long peak_rss_kb(void) {
  char line[256];
  long kb = -1;
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
      break;
  fclose(f);
  return kb;
}

/* In a fresh process, so that its peak resident memory is the compile's:
 * prints ok and maxrss_kb. */
static int child_arrays(int ndim) {
  int n = arrays_n(ndim);
  size_t len;
  char *text = ndim == 1 ? arrays_text(n, &len) : arrays4_text(n, &len);
  result r;
#if !TEST_SANITIZED
  /* A compiler that went quadratic again fails here with an allocation
   * error instead of taking the machine's memory (the report's 800
   * statements needed 16.6 GB).  Sanitizers reserve more address space
   * than this; the memory budget bounds the arenas there. */
  struct rlimit lim;
  lim.rlim_cur = lim.rlim_max = (rlim_t)4 << 30;
  if (setrlimit(RLIMIT_AS, &lim) != 0)
    printf("rlimit=failed\n");
#endif
  compile_sig(text, len, ndim == 1 ? ARRAYS_SIG : ARRAYS4_SIG, 0,
              (uint64_t)3 << 30, &r);
  printf("ok=%d\nn=%d\nmaxrss_kb=%ld\n", r.ok ? 1 : 0, n, peak_rss_kb());
  if (!r.ok)
    printf("diag=%.300s\n", asc__buf_str(&r.diag));
  result_free(&r);
  free(text);
  return 0;
}

static void check_arrays_memory(const char *mode, int ndim) {
  char out[SUBPROC_OUT_MAX];
  long kb, bound = arrays_bound_kb(arrays_n(ndim));
  int rc = subproc_run(mode, NULL, out, sizeof out);
  if (rc != 0 || subproc_get_ll(out, "ok") != 1)
    print_error("child output:\n%s\n", out);
  assert_int_equal(rc, 0);
  assert_int_equal(subproc_get_ll(out, "ok"), 1);
  kb = (long)subproc_get_ll(out, "maxrss_kb");
  if (kb > bound)
    print_error("%s: %ld KiB resident at the peak, bound %ld KiB\n", mode,
                kb, bound);
  assert_true(kb > 0 && kb <= bound);
  printf("%s: %ld KiB resident at the peak (bound %ld KiB)\n", mode, kb,
         bound);
}

static void test_arrays_memory_linear(void **state) {
  (void)state;
  check_arrays_memory("arrays1", 1);
}

static void test_arrays4_memory_linear(void **state) {
  (void)state;
  check_arrays_memory("arrays4", 4);
}

/* Arenas past the memory budget stop the compile with the error. */
static void test_memory_budget(void **state) {
  size_t len;
  char *text = arrays4_text(2000, &len);
  result r;
  (void)state;
  compile_sig(text, len, ARRAYS4_SIG, 0, (uint64_t)16 << 20, &r);
  if (r.ok || strstr(asc__buf_str(&r.diag), "budget of 16 MiB") == NULL)
    print_error("%s\n", asc__buf_str(&r.diag));
  assert_false(r.ok);
  assert_non_null(strstr(asc__buf_str(&r.diag),
                         "big.py: error: compiling needed more than its "
                         "memory budget of 16 MiB (ASC_COMPILE_MEMORY); "
                         "stopped in "));
  result_free(&r);
  free(text);
}

/* Through the public API: the jit gives ASC_COMPILE_MEMORY to the
 * compiler, and a kernel past it is a compile error with the message. */
static void test_memory_budget_public_api(void **state) {
  (void)state;
  check_public_api_budget("ASC_COMPILE_MEMORY", "1M",
                          "memory budget of 1 MiB (ASC_COMPILE_MEMORY)");
}

/* ----------------------------------- the time budget, inside passes */

/* The kernel of text lowered to IR, before any pass; unwinds to c's catch
 * point on an error. */
static asc__irfunc *lowered(asc__cctx *c, const char *sig_text) {
  asc__ast_module *m = asc__frontend(c, NULL, 0);
  asc__ast_func *k = asc__module_func(m, "k");
  asc__sig *sig = asc__sig_parse(c, sig_text);
  asc__typed *t;
  ASC_CHECK(c, k != NULL && sig != NULL);
  t = asc__infer_kernel(c, m, k, sig);
  ASC_CHECK(c, t != NULL);
  return asc__lower_kernel(c, t);
}

typedef void (*pass_fn)(asc__cctx *c, asc__irfunc *f);

/* Makes c a context for big.py's text with catch point jb and no
 * deadline yet; returns a buffer for the C text, on the heap so that it
 * outlives the frame an unwinding leaves. */
static asc__buf *start_unbounded(asc__cctx *c, jmp_buf *jb, const char *text,
                                 size_t len) {
  asc__buf *out = malloc(sizeof *out);
  assert_non_null(out);
  asc__buf_init(out);
  asc__cctx_init(c, "big.py", text, len, 1);
  c->catch_point = jb;
  c->deadline_ns = UINT64_MAX;
  return out;
}

/* Emits the IR module ir of text into out. */
static void emit(asc__cctx *c, asc__irmodule *ir, const char *text,
                 size_t len, asc__buf *out) {
  asc__emit_src src;
  memset(&src, 0, sizeof src);
  src.text = text;
  src.len = len;
  src.first_line = 1;
  asc__emit_module(c, ir, &src, out);
}

/* Runs pass (NULL: lowering; "emit": the pipeline, then emit) on the
 * arrays kernel with a budget that is spent when it starts, and checks
 * that it stopped itself, naming where. */
static void check_stops_inside(const char *name, pass_fn fn,
                               const char *text, size_t len) {
  asc__cctx c;
  jmp_buf jb;
  volatile bool returned = false;
  char want[128];
  asc__buf *out = start_unbounded(&c, &jb, text, len);
  if (setjmp(jb) == 0) {
    if (fn == NULL && strcmp(name, "lower") == 0) {
      asc__ast_module *m = asc__frontend(&c, NULL, 0);
      asc__typed *t = asc__infer_kernel(&c, m, asc__module_func(m, "k"),
                                        asc__sig_parse(&c, ARRAYS_SIG));
      ASC_CHECK(&c, t != NULL);
      c.deadline_ns = 1;
      asc__lower_kernel(&c, t);
    } else if (fn == NULL) {
      asc__irmodule *ir = asc__ir_module_new(&c);
      asc__ir_module_add(&c, ir, lowered(&c, ARRAYS_SIG));
      asc__ir_pipeline(&c, ir);
      c.deadline_ns = 1;
      emit(&c, ir, text, len, out);
    } else {
      asc__irfunc *f = lowered(&c, ARRAYS_SIG);
      c.deadline_ns = 1;
      fn(&c, f);
    }
    returned = true;
  }
  snprintf(want, sizeof want, "ms (ASC_COMPILE_TIMEOUT_MS); stopped in %s\n",
           name);
  if (returned || strstr(asc__buf_str(&c.diag), want) == NULL)
    print_error("%s: %s\n", name, asc__buf_str(&c.diag));
  assert_false(returned);
  assert_non_null(strstr(asc__buf_str(&c.diag), want));
  asc__cctx_free(&c);
  asc__buf_free(out);
  free(out);
}

/* Every pass, the lowering and emit look at the clock as they go (at
 * least every 1024 loops, nests or instructions): a budget spent when one
 * starts stops it, with no check between passes to help.  Every row of
 * the pass list, so a new pass is held to it too. */
static void test_budget_checked_inside_passes(void **state) {
  size_t len;
  char *text = arrays_text(1100, &len); /* 2200 loops, 6600 instructions */
  int n;
  const asc__pass *t = asc__pass_table(&n);
  (void)state;
  for (int k = 0; k < n; k++) {
    bool seen = false;
    for (int j = 0; j < k; j++)
      seen |= t[j].run == t[k].run;
    if (!seen)
      check_stops_inside(t[k].name, t[k].run, text, len);
  }
  check_stops_inside("lower", NULL, text, len);
  check_stops_inside("emit", NULL, text, len);
  free(text);
}

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A hang guard with a generous bound, not a timing test: passes and emit
 * that take seconds on a kernel stop soon after a budget of one second
 * that runs out inside them, not at the end of the pass that overran it.
 * The budget starts once the kernel is lowered, so that it runs out in
 * the passes however fast the front end is. */
static void test_budget_honoured_soon(void **state) {
  size_t len;
  char *text = arrays4_text(10000, &len);
  asc__cctx c;
  jmp_buf jb;
  volatile bool returned = false;
  volatile uint64_t start = 0;
  double secs;
  asc__buf *out = start_unbounded(&c, &jb, text, len);
  (void)state;
  if (setjmp(jb) == 0) {
    asc__irmodule *ir = asc__ir_module_new(&c);
    asc__ir_module_add(&c, ir, lowered(&c, ARRAYS4_SIG));
    start = mono_ns();
    c.budget_ms = 1000;
    c.deadline_ns = start + 1000000000u;
    asc__ir_pipeline(&c, ir);
    emit(&c, ir, text, len, out);
    returned = true;
  }
  secs = 1e-9 * (double)(mono_ns() - start);
  if (returned || secs >= 10.0)
    print_error("%.1f s: %s\n", secs, asc__buf_str(&c.diag));
  assert_false(returned);
  assert_non_null(strstr(asc__buf_str(&c.diag),
                         "budget of 1000 ms (ASC_COMPILE_TIMEOUT_MS)"));
  assert_true(secs < 10.0);
  asc__cctx_free(&c);
  asc__buf_free(out);
  free(out);
  free(text);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_50k_statements_compile),
      cmocka_unit_test(test_budget_spent_in_pipeline),
      cmocka_unit_test(test_budget_public_api),
      cmocka_unit_test(test_budget_env_values),
      cmocka_unit_test(test_budget_not_from_env),
      cmocka_unit_test(test_arrays_memory_linear),
      cmocka_unit_test(test_arrays4_memory_linear),
      cmocka_unit_test(test_memory_budget),
      cmocka_unit_test(test_memory_budget_public_api),
      cmocka_unit_test(test_budget_checked_inside_passes),
      cmocka_unit_test(test_budget_honoured_soon),
  };
  if (argc >= 3 && strcmp(argv[1], "--child") == 0) {
    if (strcmp(argv[2], "arrays1") == 0)
      return child_arrays(1);
    if (strcmp(argv[2], "arrays4") == 0)
      return child_arrays(4);
    return 2;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
