/* The C compiler driver: success, diagnostics, timeout, configuration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "jit/cc.h"
#include "runtime/runtime.h"

static char tmpdir[4096];

static int setup(void **state) {
  ASC_UNUSED(state);
  snprintf(tmpdir, sizeof tmpdir, "%s/test-tmp-cc-XXXXXX", ASC_BINARY_DIR);
  if (mkdtemp(tmpdir) == NULL)
    return -1;
  unsetenv("ASC_CC");
  unsetenv("ASC_CFLAGS");
  unsetenv("ASC_CC_TIMEOUT_MS");
  return 0;
}

static int teardown(void **state) {
  char *argv[] = {(char *)"rm", (char *)"-rf", tmpdir, NULL};
  asc__buf out;
  int st;
  ASC_UNUSED(state);
  asc__buf_init(&out);
  asc__run_process(argv, 10000, &out, &st);
  asc__buf_free(&out);
  return 0;
}

static void write_file(const char *path, const char *text, int mode) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  assert_int_equal(chmod(path, (mode_t)mode), 0);
}

static void test_build_and_call(void **state) {
  const asc__cc *cc;
  char *so = NULL;
  void *h;
  int (*add)(int, int);
  ASC_UNUSED(state);

  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  assert_non_null(asc__cc_path(cc));
  assert_non_null(strstr(asc__cc_identity(cc), asc__cc_path(cc)));
  assert_int_equal(asc__cc_build(cc, NULL, tmpdir, "add",
                                 "int add(int a, int b) { return a + b; }\n",
                                 40, &so),
                   ascSuccess);
  assert_non_null(so);
  h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  *(void **)&add = dlsym(h, "add");
  assert_non_null(add);
  assert_int_equal(add(2, 40), 42);
  dlclose(h);
  /* The generated C is removed on success. */
  {
    char c[4200];
    snprintf(c, sizeof c, "%s/add.c", tmpdir);
    assert_int_equal(access(c, F_OK), -1);
  }
  asc__free(so);
}

static void test_identity_once(void **state) {
  const asc__cc *a, *b;
  ASC_UNUSED(state);
  assert_int_equal(asc__cc_get(&a), ascSuccess);
  assert_int_equal(asc__cc_get(&b), ascSuccess);
  assert_ptr_equal(a, b);
  assert_ptr_equal(asc__cc_identity(a), asc__cc_identity(b));
  assert_true(strlen(asc__cc_cpu_features()) > 0);
  assert_ptr_equal(asc__cc_cpu_features(), asc__cc_cpu_features());
}

static void test_failure_keeps_file(void **state) {
  const asc__cc *cc;
  const char *bad = "int f(void) { return undeclared_thing; }\n";
  const char *msg, *kept;
  char path[4200];
  ASC_UNUSED(state);

  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  assert_int_equal(asc__cc_build(cc, NULL, tmpdir, "bad", bad, strlen(bad),
                                 NULL),
                   ascErrorInternal);
  msg = ascGetLastErrorMessage();
  snprintf(path, sizeof path, "%s/bad.c", tmpdir);
  kept = strstr(msg, path);
  assert_non_null(kept);
  assert_non_null(strstr(msg, "undeclared_thing"));
  assert_int_equal(access(path, R_OK), 0);
}

static void test_timeout(void **state) {
  const asc__cc *cc;
  char script[4200];
  uint64_t t0, ms;
  ASC_UNUSED(state);

  snprintf(script, sizeof script, "%s/slowcc", tmpdir);
  write_file(script,
             "#!/bin/sh\n"
             "case \"$1\" in --version) echo slowcc 1.0; exit 0;; esac\n"
             "sleep 30\n",
             0755);
  setenv("ASC_CC", script, 1);
  setenv("ASC_CC_TIMEOUT_MS", "300", 1);
  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  assert_non_null(strstr(asc__cc_identity(cc), "slowcc 1.0"));
  t0 = uv_hrtime();
  assert_int_equal(asc__cc_build(cc, NULL, tmpdir, "slow", "int x;\n", 7,
                                 NULL),
                   ascErrorTimeout);
  ms = (uv_hrtime() - t0) / 1000000;
  assert_true(ms < 5000);
  assert_non_null(strstr(ascGetLastErrorMessage(), "timed out"));
  assert_non_null(strstr(ascGetLastErrorMessage(), "slow.c"));
  unsetenv("ASC_CC");
  unsetenv("ASC_CC_TIMEOUT_MS");
}

static void test_missing_compiler(void **state) {
  const asc__cc *cc = (const asc__cc *)1;
  ASC_UNUSED(state);
  setenv("ASC_CC", "/nonexistent/dir/no-such-cc", 1);
  assert_int_equal(asc__cc_get(&cc), ascErrorInternal);
  assert_null(cc);
  assert_non_null(strstr(ascGetLastErrorMessage(), "no-such-cc"));
  setenv("ASC_CC", "no-such-cc-on-path-xyz", 1);
  assert_int_equal(asc__cc_get(&cc), ascErrorInternal);
  unsetenv("ASC_CC");
}

/* ASC_CC may name a wrapper followed by the compiler ("ccache gcc"). */
static void test_wrapper_words(void **state) {
  const asc__cc *cc;
  char wrapper[4200], spec[4300];
  char *so = NULL;
  ASC_UNUSED(state);

  snprintf(wrapper, sizeof wrapper, "%s/wrap", tmpdir);
  write_file(wrapper, "#!/bin/sh\nexec \"$@\"\n", 0755);
  snprintf(spec, sizeof spec, " %s  cc ", wrapper);
  setenv("ASC_CC", spec, 1);
  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  assert_string_equal(asc__cc_path(cc), wrapper);
  assert_int_equal(asc__cc_build(cc, NULL, tmpdir, "w", "int w;\n", 7, &so),
                   ascSuccess);
  assert_int_equal(access(so, R_OK), 0);
  asc__free(so);
  unsetenv("ASC_CC");
}

static void test_cflags_applied(void **state) {
  const asc__cc *cc;
  const char *src = "int v(void) { return ASC_TEST_VALUE; }\n";
  char *so = NULL;
  asc__buf flags;
  void *h;
  int (*v)(void);
  ASC_UNUSED(state);

  setenv("ASC_CFLAGS", "  -DASC_TEST_VALUE=42\t-O1 ", 1);
  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  asc__buf_init(&flags);
  asc__cc_flags(cc, NULL, &flags);
  assert_non_null(strstr(asc__buf_str(&flags), "-DASC_TEST_VALUE=42\n-O1\n"));
  assert_non_null(strstr(asc__buf_str(&flags), "-march=native"));
  assert_null(strstr(asc__buf_str(&flags), "fast-math"));
  asc__buf_free(&flags);
  assert_int_equal(asc__cc_build(cc, NULL, tmpdir, "v", src, strlen(src), &so),
                   ascSuccess);
  h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  *(void **)&v = dlsym(h, "v");
  assert_int_equal(v(), 42);
  dlclose(h);
  asc__free(so);
  unsetenv("ASC_CFLAGS");
}

/* SLEEF, where the compiler finds it, is a define and a library among
 * the flags (so part of the cache key); ASC_VECMATH=libm removes both
 * (docs/vecmath.md). */
static void test_vecmath_flags(void **state) {
  const asc__cc *cc;
  asc__buf f;
  bool on;
  ASC_UNUSED(state);
  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  asc__buf_init(&f);
  asc__cc_flags(cc, NULL, &f);
  on = strstr(asc__buf_str(&f), "-DASC_VECMATH_SLEEF=1\n") != NULL;
  assert_int_equal(on, strstr(asc__buf_str(&f), "/libsleef.so.3") != NULL);
#if defined(__x86_64__) && defined(__linux__)
  /* Debian's libsleef3 (scripts/setup.sh installs it) */
  if (access("/usr/lib/x86_64-linux-gnu/libsleef.so.3", R_OK) == 0 &&
      getenv("ASC_VECMATH") == NULL)
    assert_true(on);
#endif
  asc__buf_free(&f);
  setenv("ASC_VECMATH", "libm", 1);
  asc__buf_init(&f);
  asc__cc_flags(cc, NULL, &f);
  assert_null(strstr(asc__buf_str(&f), "ASC_VECMATH"));
  assert_null(strstr(asc__buf_str(&f), "libsleef"));
  asc__buf_free(&f);
  unsetenv("ASC_VECMATH");
}

/* The flags of a fastmath mask, one per line, for substring checks. */
static const char *fm_flags(const asc__cc *cc, unsigned mask, asc__buf *f) {
  asc__cc_opts o = {.opt_level = -1, .fastmath = mask};
  asc__buf_free(f);
  asc__buf_init(f);
  asc__cc_flags(cc, &o, f);
  return asc__buf_str(f);
}

/* Each ASC_FASTMATH_* bit maps to flags that grant it and nothing more
 * (docs/fastmath.md), after the deterministic defaults. */
static void test_fastmath_flags(void **state) {
  const asc__cc *cc;
  asc__buf f;
  const char *s, *off;
  const char *src =
      "int v(void) {\n"
      "#if defined(__ASSOCIATIVE_MATH__) || defined(__clang__)\n"
      "  int r = 1;\n"
      "#else\n"
      "  int r = 0;\n"
      "#endif\n"
      "#ifdef __FAST_MATH__\n"
      "  r |= 2;\n"
      "#endif\n"
      "#ifdef __FINITE_MATH_ONLY__\n"
      "  if (__FINITE_MATH_ONLY__) r |= 4;\n"
      "#endif\n"
      "  return r;\n"
      "}\n";
  ASC_UNUSED(state);
  unsetenv("ASC_CFLAGS");
  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  asc__buf_init(&f);

  s = fm_flags(cc, 0, &f);
  assert_null(strstr(s, "fast-math"));
  assert_null(strstr(s, "-ffp-contract=fast"));
  assert_null(strstr(s, "associative"));

  s = fm_flags(cc, ASC_FASTMATH_CONTRACT, &f);
  off = strstr(s, "-ffp-contract=off\n");
  assert_non_null(off);
  /* later wins: =fast must come after the default =off */
  assert_non_null(strstr(off, "-ffp-contract=fast\n"));
  assert_null(strstr(s, "associative"));
  assert_null(strstr(s, "finite"));

  s = fm_flags(cc, ASC_FASTMATH_REASSOC, &f);
  assert_non_null(strstr(s, "-fassociative-math\n"));
  assert_non_null(strstr(s, "-fno-signed-zeros\n"));
  assert_non_null(strstr(s, "-fno-trapping-math\n"));
  assert_null(strstr(s, "-ffp-contract=fast"));
  assert_null(strstr(s, "reciprocal"));

  s = fm_flags(cc, ASC_FASTMATH_NSZ, &f);
  assert_non_null(strstr(s, "-fno-signed-zeros\n"));
  assert_null(strstr(s, "associative"));
  s = fm_flags(cc, ASC_FASTMATH_ARCP, &f);
  assert_non_null(strstr(s, "-freciprocal-math\n"));

  /* nnan alone never becomes finite-math-only (that would add ninf) */
  s = fm_flags(cc, ASC_FASTMATH_NNAN, &f);
  assert_null(strstr(s, "-ffinite-math-only"));
  s = fm_flags(cc, ASC_FASTMATH_NNAN | ASC_FASTMATH_NINF, &f);
  assert_non_null(strstr(s, "-ffinite-math-only\n"));

  s = fm_flags(cc, ASC_FASTMATH_ALL, &f);
  assert_non_null(strstr(s, "-ffast-math\n"));
  assert_non_null(strstr(s, "-ffp-contract=fast\n"));

  /* bits outside ASC_FASTMATH_ALL are ignored here (the API rejects them) */
  s = fm_flags(cc, 0x80u, &f);
  assert_null(strstr(s, "fast-math"));
  asc__buf_free(&f);

  /* and the compiler honours them: the predefined macros say so */
  {
    const struct { unsigned mask; int want; } cases[] = {
        {0, 0},
        {ASC_FASTMATH_REASSOC, 1},
        {ASC_FASTMATH_NNAN | ASC_FASTMATH_NINF, 4},
        {ASC_FASTMATH_ALL, 7},
    };
    for (size_t i = 0; i < ASC_ARRAY_SIZE(cases); i++) {
      asc__cc_opts o = {.opt_level = -1, .fastmath = cases[i].mask};
      char name[16], *so = NULL;
      void *h;
      int (*v)(void);
      int got;
      snprintf(name, sizeof name, "fm%zu", i);
      assert_int_equal(asc__cc_build(cc, &o, tmpdir, name, src, strlen(src),
                                     &so),
                       ascSuccess);
      h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
      assert_non_null(h);
      *(void **)&v = dlsym(h, "v");
      got = v();
      /* clang defines no __ASSOCIATIVE_MATH__: bit 1 is taken as given */
      if (cases[i].mask == 0)
        got &= ~1;
      assert_int_equal(got, cases[i].want);
      dlclose(h);
      asc__free(so);
    }
  }
}

static void test_debug_flags(void **state) {
  asc__cc_opts o = {.opt_level = -1, .debug = 1};
  const asc__cc *cc;
  asc__buf f;
  ASC_UNUSED(state);
  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  asc__buf_init(&f);
  asc__cc_flags(cc, &o, &f);
  assert_non_null(strstr(asc__buf_str(&f), "-O1\n-g\n"));
  asc__buf_free(&f);
  o.debug = 0;
  o.opt_level = 2;
  asc__buf_init(&f);
  asc__cc_flags(cc, &o, &f);
  assert_non_null(strstr(asc__buf_str(&f), "-O2\n"));
  /* the default compiler here is gcc: float16 casts must round */
  if (strstr(asc__cc_identity(cc), "clang") == NULL)
    assert_non_null(strstr(asc__buf_str(&f), "-fexcess-precision=standard"));
  assert_null(strstr(asc__buf_str(&f), "-g\n"));
  /* a * b + c rounds twice, as in Python */
  assert_non_null(strstr(asc__buf_str(&f), "-ffp-contract=off\n"));
  /* int32/int64 wrap like the small integer types */
  assert_non_null(strstr(asc__buf_str(&f), "-fwrapv\n"));
  asc__buf_free(&f);
}

static void test_run_captures_both_streams(void **state) {
  char *argv[] = {(char *)"/bin/sh", (char *)"-c",
                  (char *)"echo out; echo err 1>&2; exit 3", NULL};
  asc__buf out;
  int st;
  ASC_UNUSED(state);
  asc__buf_init(&out);
  assert_int_equal(asc__run_process(argv, 10000, &out, &st), ascSuccess);
  assert_int_equal(st, 3);
  assert_string_equal(asc__buf_str(&out), "out\nerr\n");
  asc__buf_free(&out);
}

static void test_run_failures(void **state) {
  char *missing[] = {(char *)"/nonexistent/program", NULL};
  char notexec[4200];
  char *argv2[] = {notexec, NULL};
  asc__buf out;
  int st;
  ASC_UNUSED(state);

  asc__buf_init(&out);
  assert_int_equal(asc__run_process(missing, 10000, &out, &st),
                   ascErrorInternal);
  assert_non_null(strstr(ascGetLastErrorMessage(), "/nonexistent/program"));
  snprintf(notexec, sizeof notexec, "%s/notexec", tmpdir);
  write_file(notexec, "#!/bin/sh\necho no\n", 0644);
  assert_int_equal(asc__run_process(argv2, 10000, &out, &st),
                   ascErrorInternal);
  asc__buf_free(&out);
}

/* A grandchild that leaves the process group and keeps the output pipe
 * open does not keep the caller waiting. */
static void test_run_escaped_grandchild(void **state) {
  char *argv[] = {(char *)"/bin/sh", (char *)"-c",
                  (char *)"setsid sleep 4 & echo started", NULL};
  asc__buf out;
  uint64_t t0, ms;
  int st;
  ASC_UNUSED(state);

  asc__buf_init(&out);
  t0 = uv_hrtime();
  assert_int_equal(asc__run_process(argv, 10000, &out, &st), ascSuccess);
  ms = (uv_hrtime() - t0) / 1000000;
  assert_int_equal(st, 0);
  assert_non_null(strstr(asc__buf_str(&out), "started"));
  assert_true(ms < 3500);
  asc__buf_free(&out);
}

static bool fail_all(size_t size, void *ud) {
  ASC_UNUSED(size);
  ASC_UNUSED(ud);
  return true;
}

static void test_oom(void **state) {
  const asc__cc *cc;
  ascError_t e;
  ASC_UNUSED(state);
  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  asc__set_alloc_fail_hook(fail_all, NULL);
  e = asc__cc_build(cc, NULL, tmpdir, "oom", "int x;\n", 7, NULL);
  asc__set_alloc_fail_hook(NULL, NULL);
  assert_int_equal(e, ascErrorOutOfMemory);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_build_and_call),
      cmocka_unit_test(test_identity_once),
      cmocka_unit_test(test_failure_keeps_file),
      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_missing_compiler),
      cmocka_unit_test(test_wrapper_words),
      cmocka_unit_test(test_cflags_applied),
      cmocka_unit_test(test_debug_flags),
      cmocka_unit_test(test_fastmath_flags),
      cmocka_unit_test(test_run_captures_both_streams),
      cmocka_unit_test(test_run_failures),
      cmocka_unit_test(test_run_escaped_grandchild),
      cmocka_unit_test(test_oom),
      cmocka_unit_test(test_vecmath_flags),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
