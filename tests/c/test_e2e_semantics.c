/*
 * End to end: defined results where C leaves them undefined or the front
 * end once disagreed with Python (issue 13): literal typing of INT64_MIN,
 * old Mac line endings, NUL bytes in raise messages, kernels built with
 * clang, shifts by any count, NFKC identifiers, the order of plain-range
 * float sums, and local storage that cannot fit a worker's stack; and the
 * fastmath option that relaxes the float rules per module.
 */
#include <limits.h>
#include <stddef.h>
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

/* --------------------------------------------------------- identifiers */

/* Identifiers are NFKC-normalised as Python does (PEP 3131): full-width
 * x is x, the fi ligature is "fi", e + U+0301 is the precomposed e-acute;
 * each pair below is one variable. */
static void test_identifiers_nfkc(void **state) {
  static const char text[] =
      "import asc\n"
      "\n"
      "@asc.kernel\n"
      "def k(b):\n"
      "    \xef\xbd\x98 = 5\n"                       /* full-width x */
      "    x += 1\n"
      "    b[0] = \xef\xbd\x98\n"
      "    \xef\xac\x81le = 2\n"                     /* U+FB01 fi */
      "    b[1] = file\n"
      "    e\xcc\x81t\xc3\xa9 = 3\n"                 /* e U+0301, e-acute */
      "    b[2] = \xc3\xa9te\xcc\x81 * 10\n"
      "    for \xe2\x85\xb0 in range(2):\n"          /* U+2170 small roman i */
      "        b[3 + i] = i + 7\n";
  int64_t b[5] = {0, 0, 0, 0, 0};
  ascTensor tb = e2e_t1(b, ascInt64, 5);
  ascModule_t m;
  (void)state;
  m = load(text);
  E2E_RUN(m, "k", &tb);
  assert_int_equal(b[0], 6);
  assert_int_equal(b[1], 2);
  assert_int_equal(b[2], 30);
  assert_int_equal(b[3], 7);
  assert_int_equal(b[4], 8);
  ascModuleUnload(m);
}

/* ------------------------------------------------------- stack limits */

/* A kernel with n local arrays of 256 KiB, each written and read. */
static char *arrays_kernel(int n) {
  size_t cap = 512 + (size_t)n * 200;
  char *t = malloc(cap);
  size_t k;
  assert_non_null(t);
  k = (size_t)snprintf(t, cap, "import asc\n\n@asc.kernel\n"
                                "def many(out):\n    s = 0.0\n");
  for (int a = 0; a < n; a++)
    k += (size_t)snprintf(t + k, cap - k,
                          "    a%d = asc.local_array(65536, asc.float32)\n"
                          "    for i in range(65536):\n"
                          "        a%d[i] = i * %d.0\n"
                          "    s += a%d[65535 - %d]\n",
                          a, a, a + 1, a, a);
  snprintf(t + k, cap - k, "    out[0] = s\n");
  return t;
}

/* 40 local arrays of 256 KiB (each under the per-array limit) once
 * overflowed a worker's 8 MiB stack; now the kernel fails to compile at
 * the array that crosses the 4 MiB total (docs/abi.md).  16 of them, the
 * most that fit, run correctly. */
static void test_local_arrays_past_the_stack(void **state) {
  char *big = arrays_kernel(40), *fits = arrays_kernel(16);
  float out[1] = {0};
  ascTensor to = e2e_t1(out, ascFloat32, 1);
  void *args[] = {&to};
  ascModule_t m = NULL;
  ascCompileOptions o;
  ascError_t err;
  double want = 0;
  (void)state;
  memset(&o, 0, sizeof o);
  o.filename = "sem.py";
  err = ascModuleLoadPython(&m, big, &o);
  if (err == ascSuccess) {
    ascKernel_t k = test_kernel(m, "many");
    err = ascLaunchKernel(k, 1, args, NULL);
    if (err == ascSuccess)
      err = ascStreamSynchronize(NULL);
    ascModuleUnload(m);
  }
  if (err != ascErrorCompile ||
      strstr(ascGetLastErrorMessage(), "sem.py:70:") == NULL ||
      strstr(ascGetLastErrorMessage(), "local arrays take 4456448 bytes") ==
          NULL)
    fail_msg("40 x 256 KiB: %s: %s", ascGetErrorName(err),
             ascGetLastErrorMessage());
  m = load(fits);
  E2E_RUN(m, "many", &to);
  for (int a = 0; a < 16; a++) /* integers below 2**24: exact */
    want += (65535.0 - a) * (a + 1);
  assert_true(out[0] == (float)want);
  ascModuleUnload(m);
  free(big);
  free(fits);
}

/* -------------------------------------------------------------- shifts */

static const char shift_py[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def shifts(a, n, l, r):\n"
    "    for i in range(a.shape[0]):\n"
    "        l[i] = a[i] << n[i]\n"
    "        r[i] = a[i] >> n[i]\n"
    "\n"
    "@asc.kernel\n"
    "def shift_consts(a, l, r):\n"
    "    for i in range(a.shape[0]):\n"
    "        l[3 * i] = a[i] << 3\n"
    "        l[3 * i + 1] = a[i] << 70\n"
    "        l[3 * i + 2] = a[i] << 0\n"
    "        r[3 * i] = a[i] >> 3\n"
    "        r[3 * i + 1] = a[i] >> 70\n"
    "        r[3 * i + 2] = a[i] >> 0\n"
    "\n"
    "@asc.kernel\n"
    "def shift_neg(a, n, l):\n"
    "    l[0] = 1\n"
    "    l[1] = a[0] << n\n"
    "    l[2] = 2\n";

/* numpy's result for an element of `bits` bits (signed or not), as int64
 * (the value, sign-extended or zero-extended). */
static int64_t wrap_to(uint64_t v, int bits, int sgn) {
  if (bits == 64)
    return (int64_t)v;
  v &= ((uint64_t)1 << bits) - 1;
  if (sgn && (v >> (bits - 1)) & 1)
    v |= ~(((uint64_t)1 << bits) - 1);
  return (int64_t)v;
}

static int64_t ref_shl(int64_t a, int64_t n, int bits, int sgn) {
  return n >= bits ? 0 : wrap_to((uint64_t)a << n, bits, sgn);
}

static int64_t ref_shr(int64_t a, int64_t n, int bits, int sgn) {
  if (n >= bits)
    return sgn && a < 0 ? -1 : 0;
  if (sgn)
    return a < 0 ? ~(~a >> n) : a >> n;
  return (int64_t)((uint64_t)a >> n);
}

static void put(void *p, int64_t i, int size, int64_t v) {
  switch (size) {
  case 1: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case 2: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case 4: ((uint32_t *)p)[i] = (uint32_t)v; break;
  default: ((uint64_t *)p)[i] = (uint64_t)v; break;
  }
}

static int64_t get(const void *p, int64_t i, int size, int sgn) {
  uint64_t v;
  switch (size) {
  case 1: v = ((const uint8_t *)p)[i]; break;
  case 2: v = ((const uint16_t *)p)[i]; break;
  case 4: v = ((const uint32_t *)p)[i]; break;
  default: v = ((const uint64_t *)p)[i]; break;
  }
  return wrap_to(v, size * 8, sgn);
}

/* a << n and a >> n for every count 0 .. width + 9 (numpy: 0 past the
 * width on the left, the sign fill on the right) and constant counts in
 * and past the width; the C must be free of undefined behaviour
 * (scripts/test.sh runs this under -fsanitize=undefined). */
static void test_shifts_past_the_width(void **state) {
  static const struct { ascDataType dt; int size, sgn; } types[] = {
      {ascInt8, 1, 1},  {ascInt16, 2, 1}, {ascInt32, 4, 1},
      {ascInt64, 8, 1}, {ascUInt8, 1, 0}, {ascUInt32, 4, 0},
      {ascUInt64, 8, 0}};
  static const int64_t vals[] = {0, 1, -1, 3, -3, 5, -128, 127, 0x55,
                                 -0x5555, 0x7fffffff, INT64_MIN, INT64_MAX,
                                 -123456789012345};
  enum { NV = sizeof vals / sizeof vals[0] };
  ascModule_t m;
  (void)state;
  m = load(shift_py);
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    int size = types[t].size, sgn = types[t].sgn, bits = size * 8;
    int64_t n = (int64_t)NV * (bits + 10);
    void *a = calloc((size_t)n, 8), *c = calloc((size_t)n, 8),
         *l = calloc((size_t)n * 3, 8), *r = calloc((size_t)n * 3, 8);
    ascTensor ta = e2e_t1(a, types[t].dt, n), tc = e2e_t1(c, types[t].dt, n);
    ascTensor tl = e2e_t1(l, types[t].dt, n), tr = e2e_t1(r, types[t].dt, n);
    ascTensor tl3 = e2e_t1(l, types[t].dt, 3 * n),
              tr3 = e2e_t1(r, types[t].dt, 3 * n);
    int64_t k = 0;
    assert_true(a && c && l && r);
    for (int v = 0; v < NV; v++)
      for (int s = 0; s < bits + 10; s++, k++) {
        put(a, k, size, vals[v]);
        put(c, k, size, s);
      }
    E2E_RUN(m, "shifts", &ta, &tc, &tl, &tr);
    for (k = 0; k < n; k++) {
      int64_t av = get(a, k, size, sgn), cv = get(c, k, size, sgn);
      int64_t wl = ref_shl(av, cv, bits, sgn), wr = ref_shr(av, cv, bits, sgn);
      if (get(l, k, size, sgn) != wl || get(r, k, size, sgn) != wr)
        fail_msg("dtype %d: %lld << %lld = %lld (want %lld), >> = %lld "
                 "(want %lld)", (int)t, (long long)av,
                 (long long)cv, (long long)get(l, k, size, sgn),
                 (long long)wl, (long long)get(r, k, size, sgn),
                 (long long)wr);
    }
    E2E_RUN(m, "shift_consts", &ta, &tl3, &tr3);
    for (k = 0; k < n; k++) {
      int64_t av = get(a, k, size, sgn);
      static const int cnt[3] = {3, 70, 0};
      for (int q = 0; q < 3; q++)
        if (get(l, 3 * k + q, size, sgn) != ref_shl(av, cnt[q], bits, sgn) ||
            get(r, 3 * k + q, size, sgn) != ref_shr(av, cnt[q], bits, sgn))
          fail_msg("dtype %d: %lld shifted by the constant %d", (int)t,
                   (long long)av, cnt[q]);
    }
    free(a);
    free(c);
    free(l);
    free(r);
  }
  ascModuleUnload(m);
}

/* A negative count raises ValueError("negative shift count"), as Python
 * does (numpy gives 0; Python's rule wins for kernels). */
static void test_negative_shift_count_raises(void **state) {
  int64_t a[1] = {5}, l[3] = {0, 0, 0};
  ascTensor ta = e2e_t1(a, ascInt64, 1), tl = e2e_t1(l, ascInt64, 3);
  ascScalar neg = e2e_weak_int(-1), ok = e2e_weak_int(2);
  void *args[] = {&ta, &neg, &tl};
  ascModule_t m;
  (void)state;
  m = load(shift_py);
  ASSERT_ERR(e2e_run_err(m, "shift_neg", args), ascErrorKernelException);
  if (strstr(ascGetLastErrorMessage(), "ValueError: negative shift count") ==
      NULL)
    fail_msg("'%s'", ascGetLastErrorMessage());
  assert_int_equal(l[0], 1);
  assert_int_equal(l[2], 0);
  E2E_RUN(m, "shift_neg", &ta, &ok, &tl);
  assert_int_equal(l[1], 20);
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

/* fastmath came out of the reserved space: the struct's size and every
 * other field's offset are what callers built before it was added have. */
_Static_assert(offsetof(ascCompileOptions, fastmath) ==
                       offsetof(ascCompileOptions, numGlobals) + sizeof(int) &&
                   offsetof(ascCompileOptions, reserved) +
                           sizeof(((ascCompileOptions *)0)->reserved) ==
                       offsetof(ascCompileOptions, numGlobals) + sizeof(int) +
                           64,
               "ascCompileOptions.fastmath must take reserved space");

/* ascCompileOptions.fastmath: the module's floating-point mode for kernels
 * whose decorator does not say; the sum above reassociates under reassoc
 * (vector lanes, per-thread parts), a * b + c fuses under contract, and
 * bits that name no flag are rejected. */
static void test_fastmath_option(void **state) {
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
      "def madd(a, b, c, out):\n"
      "    for i in range(a.shape[0]):\n"
      "        out[i] = a[i] * b[i] + c[i]\n"
      "\n"
      "@asc.kernel(fastmath=False)\n"
      "def madd_strict(a, b, c, out):\n"
      "    for i in range(a.shape[0]):\n"
      "        out[i] = a[i] * b[i] + c[i]\n";
  enum { N = 200001, M = 19 };
  double *x = malloc(N * sizeof *x), out[1];
  double a[M], b[M], c[M], r[M], fused = 0.0;
  ascTensor tx = e2e_t1(x, ascFloat64, N), to = e2e_t1(out, ascFloat64, 1);
  ascTensor ta = e2e_t1(a, ascFloat64, M), tb = e2e_t1(b, ascFloat64, M);
  ascTensor tc = e2e_t1(c, ascFloat64, M), tr = e2e_t1(r, ascFloat64, M);
  ascCompileOptions o;
  ascModule_t m = NULL;
  (void)state;
  assert_non_null(x);
  for (int i = 0; i < N; i++)
    x[i] = i == 0 ? 1e16 : i == N - 1 ? -1e16 : 1.0;
  for (int i = 0; i < M; i++) {
    a[i] = 1 + 0x1p-27; /* a * b = 1 - 2^-54, which rounds to 1 */
    b[i] = 1 - 0x1p-27;
    c[i] = -1.0;
  }
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("fma"))
    fused = -0x1p-54;
#endif

  memset(&o, 0, sizeof o);
  o.filename = "sem.py";
  o.fastmath = 0x80u;
  ASSERT_ERR(ascModuleLoadPython(&m, text, &o), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "ASC_FASTMATH"));
  o.fastmath = ASC_FASTMATH_ALL + 1u;
  ASSERT_ERR(ascModuleLoadPython(&m, text, &o), ascErrorInvalidValue);

  o.fastmath = 0;                 /* the default: deterministic */
  m = e2e_load_opts(text, &o);
  E2E_RUN(m, "fsum", &tx, &to);
  assert_true(out[0] == 0.0);
  E2E_RUN(m, "madd", &ta, &tb, &tc, &tr);
  for (int i = 0; i < M; i++)
    assert_true(r[i] == 0.0);
  ascModuleUnload(m);

  o.fastmath = ASC_FASTMATH_REASSOC;
  m = e2e_load_opts(text, &o);
  E2E_RUN(m, "fsum", &tx, &to);
  if (out[0] == 0.0 || out[0] > N)
    fail_msg("fsum under reassoc gave %.17g: not reassociated", out[0]);
  E2E_RUN(m, "madd", &ta, &tb, &tc, &tr);
  for (int i = 0; i < M; i++)
    assert_true(r[i] == 0.0);     /* reassoc does not contract */
  ascModuleUnload(m);

  o.fastmath = ASC_FASTMATH_CONTRACT;
  m = e2e_load_opts(text, &o);
  E2E_RUN(m, "fsum", &tx, &to);
  assert_true(out[0] == 0.0);     /* contract does not reassociate */
  E2E_RUN(m, "madd", &ta, &tb, &tc, &tr);
  for (int i = 0; i < M; i++)
    if (r[i] != fused)
      fail_msg("madd under contract: r[%d] = %a, want %a", i, r[i], fused);
  E2E_RUN(m, "madd_strict", &ta, &tb, &tc, &tr); /* the decorator wins */
  for (int i = 0; i < M; i++)
    assert_true(r[i] == 0.0);
  ascModuleUnload(m);
  free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int64_min_literal),
      cmocka_unit_test(test_cr_only_line_endings),
      cmocka_unit_test(test_raise_message_with_nul),
      cmocka_unit_test(test_clang_builds_kernels),
      cmocka_unit_test(test_plain_range_float_sum_is_sequential),
      cmocka_unit_test(test_fastmath_option),
      cmocka_unit_test(test_shifts_past_the_width),
      cmocka_unit_test(test_negative_shift_count_raises),
      cmocka_unit_test(test_local_arrays_past_the_stack),
      cmocka_unit_test(test_identifiers_nfkc),
  };
  return cmocka_run_group_tests(tests, NULL, test_teardown);
}
