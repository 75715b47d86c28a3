/*
 * End to end, Python text -> kernel -> launch: exceptions raised inside and
 * outside parallel loops reach the stream as ascErrorKernelException with
 * "<file>:<line>: kernel '<name>' raised <Class>: <message>" (docs/abi.md);
 * the lowest raising iteration is the one reported; queued work after a
 * failure is skipped; try/except in and around parallel loops; assert;
 * bounds checks; integer division by zero.
 *
 * Messages of `raise` must be string literals (docs/types.md), so "which
 * iteration raised" is told by the class and message of different raise
 * statements rather than by formatting the index into the text.
 */
#include "e2e_parallel_util.h"

#define FILE_EXC "e2p_exc.py"

static const char exc_py[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def raise_in_loop(out, which: asc.int64, at: asc.int64):\n"
    "    for i in asc.prange(out.shape[0]):\n"
    "        if i == at:\n"
    "            if which == 0:\n"
    "                raise ValueError(\"bad value in loop\")\n"
    "            elif which == 1:\n"
    "                raise IndexError(\"bad index in loop\")\n"
    "            elif which == 2:\n"
    "                raise ZeroDivisionError(\"divided in loop\")\n"
    "            elif which == 3:\n"
    "                raise AssertionError(\"assertion in loop\")\n"
    "            elif which == 4:\n"
    "                raise RuntimeError(\"runtime in loop\")\n"
    "            else:\n"
    "                raise OverflowError(\"overflow in loop\")\n"
    "        out[i] = 1\n"
    "\n"
    "@asc.kernel\n"
    "def raise_outside(out, which: asc.int64):\n"
    "    out[0] = 1\n"
    "    if which == 0:\n"
    "        raise ValueError(\"bad value outside\")\n"
    "    elif which == 1:\n"
    "        raise IndexError(\"bad index outside\")\n"
    "    elif which == 2:\n"
    "        raise ZeroDivisionError(\"divided outside\")\n"
    "    elif which == 3:\n"
    "        raise AssertionError(\"assertion outside\")\n"
    "    elif which == 4:\n"
    "        raise RuntimeError(\"runtime outside\")\n"
    "    elif which == 5:\n"
    "        raise OverflowError(\"overflow outside\")\n"
    "    out[1] = 1\n"
    "\n"
    "@asc.kernel\n"
    "def many(done, first: asc.int64):\n"
    "    for i in asc.prange(done.shape[0]):\n"
    "        if i == first:\n"
    "            raise ValueError(\"the lowest raising iteration\")\n"
    "        if i > first:\n"
    "            raise RuntimeError(\"a higher iteration\")\n"
    "        done[i] = 1\n"
    "\n"
    "@asc.kernel\n"
    "def by_block(ran, first: asc.int64):\n"
    "    b = asc.get_block_idx()\n"
    "    if b == first:\n"
    "        raise ValueError(\"the lowest raising block\")\n"
    "    if b > first:\n"
    "        raise RuntimeError(\"a higher block\")\n"
    "    ran[b] = 1\n"
    "\n"
    "@asc.kernel\n"
    "def critical_raise(counter, n: asc.int64, at: asc.int64):\n"
    "    asc.get_block_idx()  # SPMD: each block counts to n\n"
    "    for i in asc.prange(n):\n"
    "        with asc.critical():\n"
    "            counter[0] = counter[0] + 1\n"
    "            if i == at:\n"
    "                raise ValueError(\"inside a critical section\")\n"
    "\n"
    "@asc.kernel\n"
    "def checked(x):\n"
    "    for i in asc.prange(x.shape[0]):\n"
    "        assert x[i] >= 0, \"negative element\"\n"
    "    assert x.shape[0] > 2, \"too short\"\n"
    "\n"
    "@asc.kernel\n"
    "def divide(a, d, out):\n"
    "    for i in asc.prange(a.shape[0]):\n"
    "        out[i] = a[i] // d[i]\n"
    "\n"
    "@asc.kernel\n"
    "def caught_inside(x, out):\n"
    "    for i in asc.prange(x.shape[0]):\n"
    "        try:\n"
    "            if x[i] < 0:\n"
    "                raise ValueError(\"negative\")\n"
    "            out[i] = 100 // x[i]\n"
    "        except ValueError:\n"
    "            out[i] = -1\n"
    "        except ZeroDivisionError:\n"
    "            out[i] = -2\n"
    "\n"
    "@asc.kernel\n"
    "def caught_outside(x, out, flag):\n"
    "    try:\n"
    "        for i in asc.prange(x.shape[0]):\n"
    "            if x[i] < 0:\n"
    "                raise IndexError(\"negative\")\n"
    "            out[i] = x[i]\n"
    "    except IndexError:\n"
    "        flag[0] = 1\n"
    "    flag[1] = 1\n"
    "\n"
    "@asc.kernel\n"
    "def def_body_raises(x, out, flag, catch: asc.int64):\n"
    "    def body(i):\n"
    "        if x[i] < 0:\n"
    "            raise OverflowError(\"negative in def body\")\n"
    "        out[i] = x[i]\n"
    "    if catch == 1:\n"
    "        try:\n"
    "            asc.parallel_for(x.shape[0], body)\n"
    "        except ArithmeticError:\n"
    "            flag[0] = 1\n"
    "    else:\n"
    "        asc.parallel_for(x.shape[0], body)\n"
    "    flag[1] = 1\n"
    "\n"
    "@asc.kernel(boundscheck=True)\n"
    "def gather_checked(x, idx, out):\n"
    "    for i in asc.prange(idx.shape[0]):\n"
    "        out[i] = x[idx[i]]\n"
    "\n"
    "@asc.kernel\n"
    "def gather(x, idx, out):\n"
    "    for i in asc.prange(idx.shape[0]):\n"
    "        out[i] = x[idx[i]]\n";

static const char *const classes[] = {"ValueError",     "IndexError",
                                      "ZeroDivisionError", "AssertionError",
                                      "RuntimeError",   "OverflowError"};

/* Each class from inside a parallel loop (iteration `at`) and from kernel
 * level, on its own stream; the stream works again once it has reported. */
static void test_each_class_in_and_out_of_loops(void **state) {
  enum { N = 100000 };
  static const char *const in_msgs[] = {
      "bad value in loop", "bad index in loop", "divided in loop",
      "assertion in loop", "runtime in loop",   "overflow in loop"};
  static const char *const out_msgs[] = {
      "bad value outside", "bad index outside", "divided outside",
      "assertion outside", "runtime outside",   "overflow outside"};
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t kin = e2p_kernel(m, "raise_in_loop"),
              kout = e2p_kernel(m, "raise_outside");
  int32_t *out = e2p_alloc(N, 4);
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  for (int64_t which = 0; which < 6; which++) {
    int64_t at = which * 9973 + 5;
    ascTensor t = e2p_t1(out, ascInt32, N);
    void *ain[] = {&t, &which, &at}, *aout[] = {&t, &which};
    char raise_text[64];
    memset(out, 0, N * sizeof *out);
    ASSERT_OK(ascLaunchKernel(kin, 1, ain, s));
    snprintf(raise_text, sizeof raise_text, "raise %s(\"%s\")",
             classes[which], in_msgs[which]);
    e2p_expect_exc(s, FILE_EXC, e2p_line(exc_py, raise_text),
                   "raise_in_loop", classes[which], in_msgs[which]);
    /* every iteration below the raising one ran */
    for (int64_t i = 0; i < at; i++)
      if (out[i] != 1)
        fail_msg("%s: iteration %lld below %lld did not run",
                 classes[which], (long long)i, (long long)at);
    assert_int_equal(out[at], 0);

    memset(out, 0, N * sizeof *out);
    ASSERT_OK(ascLaunchKernel(kout, 1, aout, s));
    snprintf(raise_text, sizeof raise_text, "raise %s(\"%s\")",
             classes[which], out_msgs[which]);
    e2p_expect_exc(s, FILE_EXC, e2p_line(exc_py, raise_text),
                   "raise_outside", classes[which], out_msgs[which]);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 0);
    /* reported, so the stream works again */
    which += 100;
    ASSERT_OK(ascLaunchKernel(kout, 1, aout, s));
    ASSERT_OK(ascStreamSynchronize(s));
    which -= 100;
    assert_int_equal(out[1], 1);
  }
  ASSERT_OK(ascStreamDestroy(s));
  free(out);
  ASSERT_OK(ascModuleUnload(m));
}

/* Every iteration from `first` on raises (all of them when first = 0): the
 * one reported is always the lowest, every iteration below it ran, the
 * launch ends, with one block or several (each block raises; the lowest
 * block is reported), and the stream is usable afterwards. */
static void test_many_raise_lowest_reported(void **state) {
  enum { N = 1000000 };
  static const int64_t firsts[] = {0, 1, 63, 64, 777, 500000, N - 1};
  static const uint32_t dims[] = {1, 4};
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t k = e2p_kernel(m, "many");
  int8_t *done = e2p_alloc(N, 1);
  int line = e2p_line(exc_py, "raise ValueError(\"the lowest raising");
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
    for (size_t f = 0; f < sizeof firsts / sizeof firsts[0]; f++)
      for (int rep = 0; rep < 3; rep++) {
        int64_t first = firsts[f];
        ascTensor t = e2p_t1(done, ascInt8, N);
        void *args[] = {&t, &first};
        memset(done, 0, N);
        ASSERT_OK(ascLaunchKernel(k, dims[d], args, s));
        e2p_expect_exc(s, FILE_EXC, line, "many", "ValueError",
                       "the lowest raising iteration");
        /* exactly one error: reported once, then the stream is clean */
        ASSERT_OK(ascStreamSynchronize(s));
        for (int64_t i = 0; i < first; i++)
          if (done[i] != 1)
            fail_msg("blockDim %u first %lld: iteration %lld did not run",
                     dims[d], (long long)first, (long long)i);
        assert_int_equal(done[first], 0);
      }
  {
    /* the stream still runs work: no iteration raises */
    int64_t first = N;
    ascTensor t = e2p_t1(done, ascInt8, N);
    void *args[] = {&t, &first};
    memset(done, 0, N);
    ASSERT_OK(ascLaunchKernel(k, 1, args, s));
    ASSERT_OK(ascStreamSynchronize(s));
    for (int64_t i = 0; i < N; i++)
      assert_int_equal(done[i], 1);
  }
  ASSERT_OK(ascStreamDestroy(s));
  free(done);
  ASSERT_OK(ascModuleUnload(m));
}

/* Blocks from `first` on raise (kernel level): the lowest raising block is
 * the one reported, every block below it ran; with more blocks than
 * cores too. */
static void test_many_blocks_raise_lowest_reported(void **state) {
  int nc = e2p_cores();
  uint32_t dims[] = {2, 8, (uint32_t)nc * 3 + 1, 200};
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t k = e2p_kernel(m, "by_block");
  int line = e2p_line(exc_py, "raise ValueError(\"the lowest raising block");
  (void)state;
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    uint32_t bd = dims[d];
    int8_t *ran = e2p_alloc(bd, 1);
    int64_t firsts[] = {0, 1, (int64_t)bd / 2, (int64_t)bd - 1};
    for (size_t f = 0; f < sizeof firsts / sizeof firsts[0]; f++) {
      int64_t first = firsts[f];
      ascTensor t = e2p_t1(ran, ascInt8, bd);
      void *args[] = {&t, &first};
      memset(ran, 0, bd);
      ASSERT_OK(ascLaunchKernel(k, bd, args, NULL));
      e2p_expect_exc(NULL, FILE_EXC, line, "by_block", "ValueError",
                     "the lowest raising block");
      ASSERT_OK(ascStreamSynchronize(NULL));
      for (int64_t b = 0; b < first; b++)
        if (ran[b] != 1)
          fail_msg("blockDim %u first %lld: block %lld did not run", bd,
                   (long long)first, (long long)b);
    }
    free(ran);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* An exception leaving `with asc.critical():` releases the lock: the
 * iterations below it still get in, the launch ends, and the next launch
 * (several blocks sharing the launch's lock) runs to completion. */
static void test_raise_inside_critical(void **state) {
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t k = e2p_kernel(m, "critical_raise");
  int64_t counter = 0, n = 20000, at = 12345;
  ascTensor t = e2p_t1(&counter, ascInt64, 1);
  void *args[] = {&t, &n, &at};
  (void)state;
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  e2p_expect_exc(NULL, FILE_EXC,
                 e2p_line(exc_py, "\"inside a critical section\""),
                 "critical_raise", "ValueError", "inside a critical section");
  if (counter < at + 1 || counter > n)
    fail_msg("counter %lld after the raise at %lld", (long long)counter,
             (long long)at);
  counter = 0;
  at = -1;
  ASSERT_OK(ascLaunchKernel(k, 3, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(counter, 3 * n);
  ASSERT_OK(ascModuleUnload(m));
}

/* Work queued behind a failing launch on its stream is skipped: a memset
 * and another kernel do not run; another stream is unaffected; once the
 * error is reported the same work runs. */
static void test_queued_work_skipped(void **state) {
  enum { N = 4096 };
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t kin = e2p_kernel(m, "raise_in_loop"),
              kc = e2p_kernel(m, "caught_inside");
  int32_t *out = e2p_alloc(N, 4), *buf = e2p_alloc(N, 4);
  int64_t *x = e2p_alloc(N, 8), *y = e2p_alloc(N, 8), *y2 = e2p_alloc(N, 8);
  int64_t which = 4, at = 10;
  ascTensor to = e2p_t1(out, ascInt32, N), tx = e2p_t1(x, ascInt64, N),
            ty = e2p_t1(y, ascInt64, N), ty2 = e2p_t1(y2, ascInt64, N);
  void *ain[] = {&to, &which, &at}, *ac[] = {&tx, &ty}, *ac2[] = {&tx, &ty2};
  ascStream_t s, other;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascStreamCreate(&other));
  for (int i = 0; i < N; i++) {
    x[i] = i + 1;
    buf[i] = 5;
  }
  ASSERT_OK(ascLaunchKernel(kin, 1, ain, s));
  ASSERT_OK(ascMemsetAsync(buf, 0, N * sizeof *buf, s));
  ASSERT_OK(ascLaunchKernel(kc, 1, ac, s));
  ASSERT_OK(ascLaunchKernel(kc, 1, ac2, other));
  e2p_expect_exc(s, FILE_EXC,
                 e2p_line(exc_py, "raise RuntimeError(\"runtime in loop\")"),
                 "raise_in_loop", "RuntimeError", "runtime in loop");
  ASSERT_OK(ascStreamSynchronize(other));
  for (int i = 0; i < N; i++) {
    if (buf[i] != 5 || y[i] != 0)
      fail_msg("work after the failure ran: buf[%d] = %d, y[%d] = %lld", i,
               buf[i], i, (long long)y[i]);
    assert_int_equal(y2[i], 100 / (i + 1));
  }
  /* after the report the same work runs */
  ASSERT_OK(ascMemsetAsync(buf, 0, N * sizeof *buf, s));
  ASSERT_OK(ascLaunchKernel(kc, 1, ac, s));
  ASSERT_OK(ascStreamSynchronize(s));
  for (int i = 0; i < N; i++) {
    assert_int_equal(buf[i], 0);
    assert_int_equal(y[i], 100 / (i + 1));
  }
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascStreamDestroy(other));
  free(out);
  free(buf);
  free(x);
  free(y);
  free(y2);
  ASSERT_OK(ascModuleUnload(m));
}

/* try/except inside the body catches the iteration's own exception (a
 * raise and an integer division by zero); a try around the prange catches
 * an exception escaping the loop (docs/ir.md), after which the kernel goes
 * on.  Iterations below the raising one ran. */
static void test_try_except(void **state) {
  enum { N = 100000, BAD = 4321 };
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t ki = e2p_kernel(m, "caught_inside"),
              ko = e2p_kernel(m, "caught_outside");
  int64_t *x = e2p_alloc(N, 8), *out = e2p_alloc(N, 8), flag[2] = {0, 0};
  ascTensor tx = e2p_t1(x, ascInt64, N), to = e2p_t1(out, ascInt64, N),
            tf = e2p_t1(flag, ascInt64, 2);
  void *ai[] = {&tx, &to}, *ao[] = {&tx, &to, &tf};
  (void)state;
  for (int i = 0; i < N; i++)
    x[i] = i % 7 == 3 ? -(int64_t)i : i % 11 == 0 ? 0 : i;
  ASSERT_OK(ascLaunchKernel(ki, 1, ai, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int i = 0; i < N; i++) {
    int64_t want = x[i] < 0 ? -1 : x[i] == 0 ? -2 : 100 / x[i];
    if (out[i] != want)
      fail_msg("caught inside: out[%d] = %lld, want %lld", i,
               (long long)out[i], (long long)want);
  }
  for (int i = 0; i < N; i++)
    x[i] = i == BAD || i == BAD + 1000 ? -1 : i;
  memset(out, 0, N * sizeof *out);
  ASSERT_OK(ascLaunchKernel(ko, 1, ao, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  assert_int_equal(flag[0], 1);
  assert_int_equal(flag[1], 1);
  for (int i = 0; i < BAD; i++)
    assert_int_equal(out[i], i);
  assert_int_equal(out[BAD], 0);
  free(x);
  free(out);
  ASSERT_OK(ascModuleUnload(m));
}

/* The same with asc.parallel_for and a nested def body: uncaught, the
 * exception reaches the stream from the def's line; caught by a try around
 * the parallel_for (ArithmeticError covers OverflowError), the kernel goes
 * on after the handler. */
static void test_parallel_for_def_raises(void **state) {
  enum { N = 50000, BAD = 30001 };
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t k = e2p_kernel(m, "def_body_raises");
  int64_t *x = e2p_alloc(N, 8), *out = e2p_alloc(N, 8), flag[2];
  int64_t catch = 0;
  ascTensor tx = e2p_t1(x, ascInt64, N), to = e2p_t1(out, ascInt64, N),
            tf = e2p_t1(flag, ascInt64, 2);
  void *args[] = {&tx, &to, &tf, &catch};
  (void)state;
  for (int i = 0; i < N; i++)
    x[i] = i >= BAD && i % 2 == 1 ? -1 : i;
  for (catch = 0; catch < 2; catch++) {
    memset(out, 0, N * sizeof *out);
    memset(flag, 0, sizeof flag);
    ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
    if (catch == 0) {
      e2p_expect_exc(NULL, FILE_EXC,
                     e2p_line(exc_py, "\"negative in def body\""),
                     "def_body_raises", "OverflowError",
                     "negative in def body");
      assert_int_equal(flag[1], 0);
    } else {
      ASSERT_OK(ascStreamSynchronize(NULL));
      assert_int_equal(flag[0], 1);
      assert_int_equal(flag[1], 1);
    }
    for (int i = 0; i < BAD; i++)
      assert_int_equal(out[i], i);
    assert_int_equal(out[BAD], 0);
  }
  free(x);
  free(out);
  ASSERT_OK(ascModuleUnload(m));
}

/* assert cond, msg -> AssertionError, from a loop body and kernel level. */
static void test_assert(void **state) {
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t k = e2p_kernel(m, "checked");
  int64_t x[5] = {1, 2, 3, 4, 5};
  ascTensor t = e2p_t1(x, ascInt64, 5);
  void *args[] = {&t};
  (void)state;
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  x[3] = -4;
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  e2p_expect_exc(NULL, FILE_EXC, e2p_line(exc_py, "\"negative element\""),
                 "checked", "AssertionError", "negative element");
  x[3] = 4;
  t.shape[0] = 2;
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  e2p_expect_exc(NULL, FILE_EXC, e2p_line(exc_py, "\"too short\""),
                 "checked", "AssertionError", "too short");
  ASSERT_OK(ascModuleUnload(m));
}

/* Integer // by zero in a parallel body: ZeroDivisionError with Python's
 * message, at the lowest zero divisor's iteration; int32 and int64. */
static void test_integer_division_by_zero(void **state) {
  enum { N = 200000 };
  static const ascDataType dts[] = {ascInt32, ascInt64};
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0);
  ascKernel_t k = e2p_kernel(m, "divide");
  int line = e2p_line(exc_py, "out[i] = a[i] // d[i]");
  (void)state;
  for (int d = 0; d < 2; d++) {
    ascDataType dt = dts[d];
    int64_t *a = e2p_alloc(N, 8), *dv = e2p_alloc(N, 8), *o = e2p_alloc(N, 8);
    ascTensor ta = e2p_t1(a, dt, N), td = e2p_t1(dv, dt, N),
              to = e2p_t1(o, dt, N);
    void *args[] = {&ta, &td, &to};
    for (int i = 0; i < N; i++) {
      if (dt == ascInt32) {
        ((int32_t *)a)[i] = -i;
        ((int32_t *)dv)[i] = i == 150001 || i == 190000 ? 0 : 7;
      } else {
        a[i] = -i;
        dv[i] = i == 150001 || i == 190000 ? 0 : 7;
      }
    }
    ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
    e2p_expect_exc(NULL, FILE_EXC, line, "divide", "ZeroDivisionError",
                   "integer division or modulo by zero");
    /* the iterations below ran, with Python's floor division */
    for (int i = 0; i < 150001; i++) {
      int64_t got = dt == ascInt32 ? ((int32_t *)o)[i] : o[i];
      int64_t want = -i / 7 - (i % 7 != 0);
      if (got != want)
        fail_msg("%s: out[%d] = %lld, want %lld", ascDataTypeName(dt), i,
                 (long long)got, (long long)want);
    }
    free(a);
    free(dv);
    free(o);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* Bounds checks, from the decorator (boundscheck=True) and from
 * ascCompileOptions.boundsCheck = 1: IndexError at the indexing line with
 * the index, the axis and its size, numpy's wording
 * ("index 12 is out of bounds for axis 0 with size 10"); negative variable
 * indices are out of bounds too.  In range, the result is the gather. */
static void test_bounds_check(void **state) {
  enum { NX = 10, NI = 1000 };
  ascModule_t m = e2p_load(exc_py, FILE_EXC, 0),
              mb = e2p_load(exc_py, "e2p_exc_bc.py", 1);
  struct {
    ascKernel_t k;
    const char *name, *file;
  } ks[] = {{e2p_kernel(m, "gather_checked"), "gather_checked", FILE_EXC},
            {e2p_kernel(mb, "gather"), "gather", "e2p_exc_bc.py"},
            {e2p_kernel(mb, "gather_checked"), "gather_checked",
             "e2p_exc_bc.py"}};
  int64_t bad[] = {12, NX, -NX - 1}; /* -1 .. -NX wrap, as in numpy */
  float x[NX], out[NI];
  int64_t idx[NI];
  (void)state;
  for (int i = 0; i < NX; i++)
    x[i] = (float)i * 1.5f;
  for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
    ascTensor tx = e2p_t1(x, ascFloat32, NX), ti = e2p_t1(idx, ascInt64, NI),
              to = e2p_t1(out, ascFloat32, NI);
    void *args[] = {&tx, &ti, &to};
    int line = e2p_line(exc_py, strcmp(ks[j].name, "gather") == 0
                                    ? "def gather(x"
                                    : "def gather_checked(x") +
               2;
    for (int i = 0; i < NI; i++)
      idx[i] = (i * 7) % NX;
    ASSERT_OK(ascLaunchKernel(ks[j].k, 1, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (int i = 0; i < NI; i++)
      assert_true(out[i] == x[idx[i]]);
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
      char msg[128];
      idx[700] = bad[b];
      idx[900] = 3 * NX;
      ASSERT_OK(ascLaunchKernel(ks[j].k, 1, args, NULL));
      snprintf(msg, sizeof msg,
               "index %lld is out of bounds for axis 0 with size %d",
               (long long)bad[b], NX);
      e2p_expect_exc(NULL, ks[j].file, line, ks[j].name, "IndexError", msg);
      idx[700] = 0;
      idx[900] = 0;
    }
  }
  ASSERT_OK(ascModuleUnload(m));
  ASSERT_OK(ascModuleUnload(mb));
}

/* ASC_BOUNDSCHECK=1 checks modules loaded while it is set, like the
 * compile option; without it the unchecked kernel does not raise. */
static void test_boundscheck_env(void **state) {
  enum { NX = 10, NI = 64 };
  float x[NX], out[NI];
  int64_t idx[NI];
  ascModule_t m;
  ascKernel_t k;
  ascTensor tx, ti, to;
  void *args[3];
  (void)state;
  for (int i = 0; i < NX; i++)
    x[i] = (float)i;
  for (int i = 0; i < NI; i++)
    idx[i] = i % NX;
  tx = e2p_t1(x, ascFloat32, NX);
  ti = e2p_t1(idx, ascInt64, NI);
  to = e2p_t1(out, ascFloat32, NI);
  args[0] = &tx;
  args[1] = &ti;
  args[2] = &to;
  setenv("ASC_BOUNDSCHECK", "1", 1);
  m = e2p_load(exc_py, "e2p_exc_env.py", 0);
  unsetenv("ASC_BOUNDSCHECK");
  k = e2p_kernel(m, "gather");
  idx[5] = NX + 2;
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  e2p_expect_exc(NULL, "e2p_exc_env.py",
                 e2p_line(exc_py, "def gather(x") + 2, "gather", "IndexError",
                 "index 12 is out of bounds for axis 0 with size 10");
  ASSERT_OK(ascModuleUnload(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_each_class_in_and_out_of_loops),
      cmocka_unit_test(test_boundscheck_env),
      cmocka_unit_test(test_many_raise_lowest_reported),
      cmocka_unit_test(test_many_blocks_raise_lowest_reported),
      cmocka_unit_test(test_raise_inside_critical),
      cmocka_unit_test(test_queued_work_skipped),
      cmocka_unit_test(test_try_except),
      cmocka_unit_test(test_parallel_for_def_raises),
      cmocka_unit_test(test_assert),
      cmocka_unit_test(test_integer_division_by_zero),
      cmocka_unit_test(test_bounds_check),
  };
  return cmocka_run_group_tests(tests, NULL, test_teardown);
}
