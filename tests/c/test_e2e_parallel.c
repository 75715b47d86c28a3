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
    "        c[i] = a[i] * 2 + 1\n"
    "\n"
    "@asc.kernel\n"
    "def repeated(a, c, reps: asc.int64):\n"
    "    for r in range(reps):\n"
    "        for i in asc.prange(a.shape[0]):\n"
    "            c[i] = c[i] + a[i]\n"
    "\n"
    "@asc.kernel\n"
    "def hists(x, h, g):\n"
    "    for i in asc.prange(x.shape[0]):\n"
    "        asc.atomic_add(h, x[i], 1)\n"
    "        g[x[i]] += 2\n"
    "\n"
    "import numpy as np\n"
    "\n"
    "@asc.kernel\n"
    "def temps(a, out):\n"
    "    b = asc.get_block_idx()\n"
    "    w = np.arange(a.shape[1]) * 1.0\n"
    "    for i in asc.prange(a.shape[0]):\n"
    "        t = np.empty(a.shape[1])\n"
    "        t[:] = a[i] * 2.0\n"
    "        u = t + w\n"
    "        out[b, i] = u.sum()\n"
    "\n"
    "@asc.func\n"
    "def which():\n"
    "    return asc.get_block_idx()\n"
    "\n"
    "@asc.kernel\n"
    "def accumulate(a, out):\n"
    "    for i in asc.prange(a.shape[0]):\n"
    "        out[i] += a[i]\n"
    "\n"
    "@asc.kernel\n"
    "def accumulate_spmd(a, out):\n"
    "    b = which()\n"
    "    for i in asc.prange(a.shape[0]):\n"
    "        asc.atomic_add(out, i, a[i])\n";

/* ------------------------------------------------------ blocks and teams */

/* Atomic adds and h[x[i]] += v into small arrays (the privatize pass:
 * per-worker copies merged after the loop) with 1, 2 and 7 blocks: exact
 * counts, and no race under TSan.  The kernel never reads its block index,
 * so it runs once whatever the block count (docs/abi.md). */
static void test_privatized_histograms(void **state) {
  static const uint32_t dims[] = {1, 2, 7};
  enum { N = 20000, BINS = 64 };
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "hists");
  int64_t *x = e2p_alloc(N, 8), *h = e2p_alloc(BINS, 8);
  int32_t *g = e2p_alloc(BINS, 4);
  int64_t want[BINS] = {0};
  (void)state;
  for (int i = 0; i < N; i++) {
    x[i] = (int64_t)((i * 7919u + (unsigned)i / 3) % BINS);
    want[x[i]]++;
  }
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    ascTensor tx = e2p_t1(x, ascInt64, N), th = e2p_t1(h, ascInt64, BINS),
              tg = e2p_t1(g, ascInt32, BINS);
    void *args[] = {&tx, &th, &tg};
    for (int b = 0; b < BINS; b++) {
      h[b] = 1;
      g[b] = 0;
    }
    ASSERT_OK(ascLaunchKernel(k, dims[d], args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (int b = 0; b < BINS; b++) {
      assert_int_equal(h[b], 1 + want[b]);
      assert_int_equal(g[b], 2 * want[b]);
    }
  }
  free(x);
  free(h);
  free(g);
  ASSERT_OK(ascModuleUnload(m));
}

/* Arrays made in each iteration of a parallel loop, by every thread of
 * several blocks' teams (asc_krt.alloc/release), and one made per block:
 * the sums are exact, and ASan/TSan see no bad access or race on the
 * teams' free lists. */
static void test_temporaries_in_parallel_loops(void **state) {
  static const uint32_t dims[] = {1, 3, 9};
  enum { R = 500, C = 37 };
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "temps");
  double *a = e2p_alloc(R * C, 8), *out = e2p_alloc(9 * R, 8);
  (void)state;
  for (int i = 0; i < R * C; i++)
    a[i] = (double)(i % 11);
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    ascTensor ta, to;
    void *args[] = {&ta, &to};
    memset(&ta, 0, sizeof ta);
    memset(&to, 0, sizeof to);
    ta.data = a;
    ta.dtype = ascFloat64;
    ta.ndim = 2;
    ta.shape[0] = R;
    ta.shape[1] = C;
    ta.strides[0] = C;
    ta.strides[1] = 1;
    to = ta;
    to.data = out;
    to.shape[0] = dims[d];
    to.shape[1] = R;
    to.strides[0] = R;
    for (int i = 0; i < 9 * R; i++)
      out[i] = -1;
    ASSERT_OK(ascLaunchKernel(k, dims[d], args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (uint32_t b = 0; b < dims[d]; b++)
      for (int i = 0; i < R; i++) {
        double want = 0;
        for (int j = 0; j < C; j++)
          want += a[i * C + j] * 2.0 + j;
        if (out[b * R + i] != want)
          fail_msg("blockDim %u: block %u row %d: %g, want %g", dims[d], b,
                   i, out[b * R + i], want);
      }
  }
  free(a);
  free(out);
  ASSERT_OK(ascModuleUnload(m));
}

/* out[i] += a[i] in a prange: a kernel that never reads its block index
 * gives the one-block answer with 1, 4 or 16 blocks (it ran once per
 * block, adding a[i] blockDim times); one that reads it, even through a
 * helper and without using the value, is SPMD code and runs per block. */
static void test_prange_kernel_is_not_spmd(void **state) {
  static const uint32_t dims[] = {1, 4, 16};
  enum { N = 65536 };
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "accumulate"),
              ks = e2p_kernel(m, "accumulate_spmd");
  float *a = e2p_alloc(N, 4), *out = e2p_alloc(N, 4);
  (void)state;
  for (int i = 0; i < N; i++)
    a[i] = (float)(i % 97);
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    for (int spmd = 0; spmd < 2; spmd++) {
      ascTensor ta = e2p_t1(a, ascFloat32, N), to = e2p_t1(out, ascFloat32, N);
      void *args[] = {&ta, &to};
      float times = spmd ? (float)dims[d] : 1.0f;
      int wrong = 0;
      for (int i = 0; i < N; i++)
        out[i] = 1.0f;
      ASSERT_OK(ascLaunchKernel(spmd ? ks : k, dims[d], args, NULL));
      ASSERT_OK(ascStreamSynchronize(NULL));
      for (int i = 0; i < N; i++)
        wrong += out[i] != 1.0f + times * a[i];
      if (wrong != 0)
        fail_msg("%s with %u blocks: %d of %d elements wrong (out[1] = %g)",
                 spmd ? "accumulate_spmd" : "accumulate", dims[d], wrong, N,
                 (double)out[1]);
    }
  }
  free(a);
  free(out);
  ASSERT_OK(ascModuleUnload(m));
}

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

/* A parallel loop inside a serial loop whose trip count is known only at
 * run time: the serial loop is emitted twice (as written, and in polled
 * chunks when long), and both copies call the one parallel body. */
static void test_prange_in_serial_loop(void **state) {
  ascModule_t m = e2p_load(loops_py, FILE_LOOPS, 0);
  ascKernel_t k = e2p_kernel(m, "repeated");
  const int64_t n = 1000, reps_list[] = {0, 3, 64, 65, 200};
  (void)state;
  for (size_t r = 0; r < sizeof reps_list / sizeof reps_list[0]; r++) {
    int64_t reps = reps_list[r];
    double *a = e2p_alloc((size_t)n, 8), *c = e2p_alloc((size_t)n, 8);
    ascTensor ta = e2p_t1(a, ascFloat64, n), tc = e2p_t1(c, ascFloat64, n);
    void *args[] = {&ta, &tc, &reps};
    for (int64_t i = 0; i < n; i++) {
      a[i] = (double)(i % 17);
      c[i] = 1.0;
    }
    ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (int64_t i = 0; i < n; i++)
      if (c[i] != 1.0 + (double)reps * a[i])
        fail_msg("reps %lld: c[%lld] = %g, want %g", (long long)reps,
                 (long long)i, c[i], 1.0 + (double)reps * a[i]);
    free(a);
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

/* ----------------------------------------- automatic parallelisation */

#define FILE_AUTO "e2p_auto.py"

static const char auto_py[] =
    "import pyasc as asc\n"
    "\n"
    "@asc.kernel\n"
    "def conv2d(input, weight, output):\n"
    "    batch, in_channels, in_height, in_width = input.shape\n"
    "    out_channels, in_channels, kernel_height, kernel_width = weight.shape\n"
    "    out_height = in_height - kernel_height + 1\n"
    "    out_width = in_width - kernel_width + 1\n"
    "    for b in range(batch):\n"
    "        for oc in range(out_channels):\n"
    "            for oh in range(out_height):\n"
    "                for ow in range(out_width):\n"
    "                    sum = 0.0\n"
    "                    for ic in range(in_channels):\n"
    "                        for kh in range(kernel_height):\n"
    "                            for kw in range(kernel_width):\n"
    "                                sum += input[b, ic, oh + kh, ow + kw] * "
    "weight[oc, ic, kh, kw]\n"
    "                    output[b, oc, oh, ow] = sum\n"
    "\n"
    "@asc.kernel\n"
    "def prefix(a, out):\n"
    "    s = 0\n"
    "    for i in range(a.shape[0]):\n"
    "        s += a[i]\n"
    "        out[i] = s\n"
    "\n"
    "@asc.kernel\n"
    "def shift(a, b):\n"
    "    for i in range(a.shape[0] - 1):\n"
    "        b[i + 1] = a[i] + 1\n";

/* The seed conv2d against a double-precision reference.  The kernel sums
 * 144 float32 products in order, so |got - ref| <= 144 * FLT_EPSILON *
 * sum |x * w| (the classic bound for a recursive sum of 144 terms, with
 * room for a fused multiply-add). */
static void test_auto_conv2d(void **state) {
  enum { B = 1, C = 16, H = 64, W = 64, OC = 32, K = 3 };
  enum { OH = H - K + 1, OW = W - K + 1 };
  float *in = e2p_alloc(B * C * H * W, 4), *w = e2p_alloc(OC * C * K * K, 4);
  float *out = e2p_alloc(B * OC * OH * OW, 4);
  ascModule_t m = e2p_load(auto_py, FILE_AUTO, 0);
  ascKernel_t k = e2p_kernel(m, "conv2d");
  ascTensor ti = e2p_tensor(in, ascFloat32, 4, (int64_t)B, (int64_t)C,
                            (int64_t)H, (int64_t)W),
            tw = e2p_tensor(w, ascFloat32, 4, (int64_t)OC, (int64_t)C,
                            (int64_t)K, (int64_t)K),
            to = e2p_tensor(out, ascFloat32, 4, (int64_t)B, (int64_t)OC,
                            (int64_t)OH, (int64_t)OW);
  void *args[] = {&ti, &tw, &to};
  uint32_t seed = 12345;
  (void)state;
  for (int i = 0; i < B * C * H * W; i++) {
    seed = seed * 1664525u + 1013904223u;
    in[i] = (float)((int32_t)(seed >> 8) % 2001) / 1000.0f;
  }
  for (int i = 0; i < OC * C * K * K; i++) {
    seed = seed * 1664525u + 1013904223u;
    w[i] = (float)((int32_t)(seed >> 8) % 1999 - 999) / 997.0f;
  }
  for (int i = 0; i < B * OC * OH * OW; i++)
    out[i] = NAN;
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int oc = 0; oc < OC; oc++)
    for (int oh = 0; oh < OH; oh++)
      for (int ow = 0; ow < OW; ow++) {
        double ref = 0, mag = 0;
        float got = out[(oc * OH + oh) * OW + ow];
        for (int ic = 0; ic < C; ic++)
          for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++) {
              double p = (double)in[(ic * H + oh + kh) * W + ow + kw] *
                         (double)w[((oc * C + ic) * K + kh) * K + kw];
              ref += p;
              mag += fabs(p);
            }
        if (!(fabs((double)got - ref) <= C * K * K * FLT_EPSILON * mag))
          fail_msg("output[0, %d, %d, %d] = %.9g, reference %.9g", oc, oh, ow,
                   (double)got, ref);
      }
  free(in);
  free(w);
  free(out);
  ASSERT_OK(ascModuleUnload(m));
}

/* A carried dependence keeps the loop serial: the result is the exact
 * running sum. */
static void test_auto_prefix_sum_stays_serial(void **state) {
  enum { N = 1000000 };
  int64_t *a = e2p_alloc(N, 8), *out = e2p_alloc(N, 8);
  ascModule_t m = e2p_load(auto_py, FILE_AUTO, 0);
  ascKernel_t k = e2p_kernel(m, "prefix");
  ascTensor ta = e2p_t1(a, ascInt64, N), to = e2p_t1(out, ascInt64, N);
  void *args[] = {&ta, &to};
  int64_t s = 0;
  (void)state;
  for (int i = 0; i < N; i++)
    a[i] = ((int64_t)i * 7919) % 1000 - 500;
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int i = 0; i < N; i++) {
    s += a[i];
    if (out[i] != s)
      fail_msg("out[%d] = %lld, want %lld", i, (long long)out[i],
               (long long)s);
  }
  free(a);
  free(out);
  ASSERT_OK(ascModuleUnload(m));
}

/* b[i + 1] = a[i] + 1 has independent iterations for distinct a and b and
 * is parallelised.  Passed the same array twice, the serial (Python)
 * result is a running chain: x[i] = x[0] + i.  docs/parallelize.md leaves
 * overlap between tensor arguments to the launcher, which must then run a
 * build without restrict and without automatic parallelisation. */
static void test_auto_aliased_arguments(void **state) {
  enum { N = 1000000 };
  int64_t *x = e2p_alloc(N, 8), *y = e2p_alloc(N, 8);
  ascModule_t m = e2p_load(auto_py, FILE_AUTO, 0);
  ascKernel_t k = e2p_kernel(m, "shift");
  ascTensor tx = e2p_t1(x, ascInt64, N), ty = e2p_t1(y, ascInt64, N);
  void *distinct[] = {&tx, &ty}, *same[] = {&tx, &tx};
  (void)state;
  for (int i = 0; i < N; i++)
    x[i] = 3 * (int64_t)i;
  /* distinct arrays: the parallel result */
  ASSERT_OK(ascLaunchKernel(k, 1, distinct, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int i = 1; i < N; i++)
    if (y[i] != x[i - 1] + 1)
      fail_msg("distinct: b[%d] = %lld, want %lld", i, (long long)y[i],
               (long long)(x[i - 1] + 1));
  /* the same array as input and output: the serial result */
  ASSERT_OK(ascLaunchKernel(k, 1, same, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  {
    int bad = -1;
    int64_t got = 0;
    for (int i = 0; i < N && bad < 0; i++)
      if (x[i] != (int64_t)i)
        bad = i, got = x[i];
    free(x);
    free(y);
    ASSERT_OK(ascModuleUnload(m));
    if (bad >= 0)
      fail_msg("aliased: x[%d] = %lld, want %d (x[0] + %d)", bad,
               (long long)got, bad, bad);
  }
}

/* ------------------------------------------------ wavefront (time tiling) */

#define FILE_WAVE "e2p_wave.py"

static const char wave_py[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def jacobi(A, B, T: int):\n"
    "    n = A.shape[0]\n"
    "    for t in range(T):\n"
    "        for i in range(1, n - 1):\n"
    "            for j in range(1, n - 1):\n"
    "                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + "
    "A[i + 1, j] + A[i - 1, j])\n"
    "        for i in range(1, n - 1):\n"
    "            for j in range(1, n - 1):\n"
    "                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + "
    "B[i + 1, j] + B[i - 1, j])\n";

static void ref_jacobi_sweep(const double *a, double *b, int n) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      b[i * n + j] = 0.2 * ((((a[i * n + j] + a[i * n + j - 1]) +
                              a[i * n + j + 1]) + a[(i + 1) * n + j]) +
                            a[(i - 1) * n + j]);
}

/* Jacobi's two sweeps in a time loop run as a wavefront (passes/
 * wavefront.c); a small cache budget (ASC_WF_BUDGET, added to whatever
 * ASC_CFLAGS the sanitizer builds set) forces chunks of 8 sweeps over
 * blocks of rows on every team thread, so that the sanitizers see the
 * schedule.  The result is the plain loops' bit for bit. */
static void test_wavefront_jacobi(void **state) {
  enum { N = 203, T = 7 };
  double *a = e2p_alloc(N * N, 8), *b = e2p_alloc(N * N, 8);
  double *ra = e2p_alloc(N * N, 8), *rb = e2p_alloc(N * N, 8);
  const char *saved = getenv("ASC_CFLAGS");
  char *flags = malloc((saved ? strlen(saved) : 0) + 64);
  ascModule_t m;
  ascKernel_t k;
  ascTensor ta = e2p_tensor(a, ascFloat64, 2, (int64_t)N, (int64_t)N),
            tb = e2p_tensor(b, ascFloat64, 2, (int64_t)N, (int64_t)N);
  int64_t steps = T;
  void *args[] = {&ta, &tb, &steps};
  uint32_t seed = 99;
  (void)state;
  assert_non_null(flags);
  for (int i = 0; i < N * N; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = ra[i] = (double)(seed >> 8) / 16777216.0;
    b[i] = rb[i] = 0.5;
  }
  /* 12 rows of A and B: chunks of 12 - 1 - 3 = 8 sweeps at radius 1 */
  sprintf(flags, "%s -DASC_WF_BUDGET=%d", saved ? saved : "", 12 * 2 * N * 8);
  setenv("ASC_CFLAGS", flags, 1);
  m = e2p_load(wave_py, FILE_WAVE, 0);
  k = e2p_kernel(m, "jacobi");
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  if (saved)
    setenv("ASC_CFLAGS", saved, 1);
  else
    unsetenv("ASC_CFLAGS");
  for (int t = 0; t < T; t++) {
    ref_jacobi_sweep(ra, rb, N);
    ref_jacobi_sweep(rb, ra, N);
  }
  for (int i = 0; i < N * N; i++)
    if (memcmp(&a[i], &ra[i], 8) != 0 || memcmp(&b[i], &rb[i], 8) != 0)
      fail_msg("element %d: A %.17g B %.17g, want %.17g %.17g", i, a[i],
               b[i], ra[i], rb[i]);
  free(flags);
  free(a);
  free(b);
  free(ra);
  free(rb);
  ASSERT_OK(ascModuleUnload(m));
}

/* ------------------------------------------------------------ reductions */

#define FILE_RED "e2p_reduce.py"

static const char reduce_py[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def dot(a, b, out):\n"
    "    s = 0\n"
    "    for i in asc.prange(a.shape[0]):\n"
    "        s += a[i] * b[i]\n"
    "    out[0] = s\n"
    "\n"
    "@asc.kernel\n"
    "def dot_auto(a, b, out):\n"
    "    s = 0\n"
    "    for i in range(a.shape[0]):\n"
    "        s += a[i] * b[i]\n"
    "    out[0] = s\n"
    "\n"
    "@asc.kernel\n"
    "def product(a, out):\n"
    "    p = 1\n"
    "    for i in asc.prange(a.shape[0]):\n"
    "        p *= a[i]\n"
    "    out[0] = p\n"
    "\n"
    "@asc.kernel\n"
    "def minmax(a, out):\n"
    "    lo = a[0]\n"
    "    hi = a[0]\n"
    "    for i in asc.prange(a.shape[0]):\n"
    "        lo = min(lo, a[i])\n"
    "        hi = max(hi, a[i])\n"
    "    out[0] = lo\n"
    "    out[1] = hi\n"
    "\n"
    "@asc.kernel\n"
    "def minmax_auto(a, out):\n"
    "    lo = a[0]\n"
    "    hi = a[0]\n"
    "    for i in range(a.shape[0]):\n"
    "        lo = min(lo, a[i])\n"
    "        hi = max(hi, a[i])\n"
    "    out[0] = lo\n"
    "    out[1] = hi\n";

enum { RN = 1000000 };

static void run2(ascKernel_t k, void *a, void *b, void *out, ascDataType dt,
                 int64_t n, int64_t nout) {
  ascTensor ta = e2p_t1(a, dt, n), tb = e2p_t1(b, dt, n),
            to = e2p_t1(out, dt, nout);
  void *args3[] = {&ta, &tb, &to}, *args2[] = {&ta, &to};
  ASSERT_OK(ascLaunchKernel(k, 1, b != NULL ? args3 : args2, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
}

static void test_reduce_dot_int64(void **state) {
  int64_t *a = e2p_alloc(RN, 8), *b = e2p_alloc(RN, 8), got = 0, want = 0;
  ascModule_t m = e2p_load(reduce_py, FILE_RED, 0);
  const char *names[] = {"dot", "dot_auto"};
  (void)state;
  for (int i = 0; i < RN; i++) {
    a[i] = (int64_t)((i * 2654435761u) % 200001) - 100000;
    b[i] = (int64_t)(i % 1009) - 504;
    want += a[i] * b[i];
  }
  for (int j = 0; j < 2; j++) {
    run2(e2p_kernel(m, names[j]), a, b, &got, ascInt64, RN, 1);
    if (got != want)
      fail_msg("%s: %lld, want %lld", names[j], (long long)got,
               (long long)want);
  }
  free(a);
  free(b);
  ASSERT_OK(ascModuleUnload(m));
}

/* float64: (1) terms that are exact multiples of 2^-20 whose every partial
 * sum stays below 2^32: any summation order is exact, so the result must
 * equal the reference bit for bit; (2) general terms: within n * DBL_EPSILON
 * * sum |a_i b_i| of the exact sum (a bound for any order of summation),
 * and bitwise identical across two runs (the split depends on the team
 * size only, docs/parallelize.md). */
static void test_reduce_dot_float64(void **state) {
  double *a = e2p_alloc(RN, 8), *b = e2p_alloc(RN, 8), got = 0, again = 0;
  long double want = 0, mag = 0;
  ascModule_t m = e2p_load(reduce_py, FILE_RED, 0);
  const char *names[] = {"dot", "dot_auto"};
  uint64_t seed = 99;
  (void)state;
  for (int i = 0; i < RN; i++) {
    a[i] = (double)((i * 37) % 1024 - 512) / 1024.0;
    b[i] = (double)((i * 11) % 2048 - 1000) / 1024.0;
    want += (long double)a[i] * b[i];
  }
  for (int j = 0; j < 2; j++) {
    run2(e2p_kernel(m, names[j]), a, b, &got, ascFloat64, RN, 1);
    if (got != (double)want)
      fail_msg("%s exact terms: %.17g, want %.17g", names[j], got,
               (double)want);
  }
  want = 0;
  for (int i = 0; i < RN; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    a[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.3;
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = ((double)(seed >> 11) / 9007199254740992.0) * 1e3;
    want += (long double)a[i] * b[i];
    mag += fabsl((long double)a[i] * b[i]);
  }
  for (int j = 0; j < 2; j++) {
    ascKernel_t k = e2p_kernel(m, names[j]);
    run2(k, a, b, &got, ascFloat64, RN, 1);
    if (!(fabsl((long double)got - want) <= (long double)RN * DBL_EPSILON * mag))
      fail_msg("%s: %.17g, exact %.17Lg", names[j], got, want);
    run2(k, a, b, &again, ascFloat64, RN, 1);
    if (memcmp(&got, &again, sizeof got) != 0)
      fail_msg("%s not deterministic: %.17g then %.17g", names[j], got,
               again);
  }
  free(a);
  free(b);
  ASSERT_OK(ascModuleUnload(m));
}

/* s *= ...: int64 with factors 1, -1 and 2 (exact, no overflow); float64
 * with powers of two (exact in any order). */
static void test_reduce_product(void **state) {
  enum { N = 100000 };
  int64_t *ai = e2p_alloc(N, 8), goti = 0, wanti = 1;
  double *af = e2p_alloc(N, 8), gotf = 0, wantf = 1;
  ascModule_t m = e2p_load(reduce_py, FILE_RED, 0);
  ascKernel_t k = e2p_kernel(m, "product");
  (void)state;
  for (int i = 0; i < N; i++) {
    ai[i] = i % 5003 == 0 ? 2 : i % 7919 == 0 ? -1 : 1;
    wanti *= ai[i];
    af[i] = i % 3001 == 0 ? 2.0 : i % 4001 == 0 ? 0.5 : i % 9973 == 0 ? -1.0
                                                                       : 1.0;
    wantf *= af[i];
  }
  run2(k, ai, NULL, &goti, ascInt64, N, 1);
  if (goti != wanti)
    fail_msg("int64 product %lld, want %lld", (long long)goti,
             (long long)wanti);
  run2(k, af, NULL, &gotf, ascFloat64, N, 1);
  if (gotf != wantf)
    fail_msg("float64 product %.17g, want %.17g", gotf, wantf);
  free(ai);
  free(af);
  ASSERT_OK(ascModuleUnload(m));
}

/* s = min(s, ...), s = max(s, ...), int64 and float64, extremes placed
 * first, last and in the middle. */
static void check_min_max(const char *name) {
  int64_t *ai = e2p_alloc(RN, 8), oi[2];
  double *af = e2p_alloc(RN, 8), of[2];
  ascModule_t m = e2p_load(reduce_py, FILE_RED, 0);
  static const int64_t at[][2] = {{0, RN - 1}, {RN - 1, 0}, {777, 500001}};
  ascKernel_t k = e2p_kernel(m, name);
  for (size_t c = 0; c < sizeof at / sizeof at[0]; c++) {
    for (int i = 0; i < RN; i++) {
      ai[i] = (int64_t)((i * 2654435761u) % 1000000) - 500000;
      af[i] = (double)ai[i] * 0.25;
    }
    ai[at[c][0]] = -7000000;
    ai[at[c][1]] = 9000000;
    af[at[c][0]] = -1e300;
    af[at[c][1]] = 3e200;
    run2(k, ai, NULL, oi, ascInt64, RN, 2);
    if (oi[0] != -7000000 || oi[1] != 9000000)
      fail_msg("%s int64 case %zu: min %lld max %lld", name, c,
               (long long)oi[0], (long long)oi[1]);
    run2(k, af, NULL, of, ascFloat64, RN, 2);
    if (of[0] != -1e300 || of[1] != 3e200)
      fail_msg("%s float64 case %zu: min %g max %g", name, c, of[0], of[1]);
  }
  free(ai);
  free(af);
  ASSERT_OK(ascModuleUnload(m));
}

/* in an asc.prange loop */
static void test_reduce_min_max_prange(void **state) {
  (void)state;
  check_min_max("minmax");
}

/* in a plain range loop: the int64 one is parallelised, the float64 one
 * stays serial (docs/parallelize.md, "Reductions and their order") */
static void test_reduce_min_max_auto(void **state) {
  (void)state;
  check_min_max("minmax_auto");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_block_index_and_count),
      cmocka_unit_test(test_prange_kernel_is_not_spmd),
      cmocka_unit_test(test_temporaries_in_parallel_loops),
      cmocka_unit_test(test_privatized_histograms),
      cmocka_unit_test(test_team_share_of_cores),
      cmocka_unit_test(test_parallel_for_lambda),
      cmocka_unit_test(test_prange_in_serial_loop),
      cmocka_unit_test(test_parallel_for_nested_def),
      cmocka_unit_test(test_prange_steps),
      cmocka_unit_test(test_auto_conv2d),
      cmocka_unit_test(test_auto_prefix_sum_stays_serial),
      cmocka_unit_test(test_auto_aliased_arguments),
      cmocka_unit_test(test_wavefront_jacobi),
      cmocka_unit_test(test_reduce_dot_int64),
      cmocka_unit_test(test_reduce_dot_float64),
      cmocka_unit_test(test_reduce_product),
      cmocka_unit_test(test_reduce_min_max_prange),
      cmocka_unit_test(test_reduce_min_max_auto),
  };
  return cmocka_run_group_tests(tests, NULL, test_teardown);
}
