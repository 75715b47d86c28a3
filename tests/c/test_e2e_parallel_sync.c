/*
 * End to end, Python text -> kernel -> launch: atomics on every numeric
 * dtype family, barriers across blocks, critical sections, lock arrays and
 * per-block shared arrays, each checked exactly against a reference
 * computed here.
 */
#include "e2e_parallel_util.h"

#define FILE_SYNC "e2p_sync.py"

static const char sync_py[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def histogram(x, bins_i, bins_f):\n"
    "    for i in asc.prange(x.shape[0]):\n"
    "        asc.atomic_add(bins_i, x[i], 1)\n"
    "        asc.atomic_add(bins_f, x[i], 1.0)\n"
    "\n"
    /* acc[0..7] counters, ret[k, i] the old value the i-th iteration saw */
    "@asc.kernel\n"
    "def atomics(acc, vals, incs, ret):\n"
    "    for i in asc.prange(vals.shape[0]):\n"
    "        ret[6, i] = asc.atomic_add(acc, 7, incs[i])\n"
    "        ret[0, i] = asc.atomic_add(acc, 0, 3)\n"
    "        ret[1, i] = asc.atomic_sub(acc, 1, 2)\n"
    "        ret[2, i] = asc.atomic_max(acc, 2, vals[i])\n"
    "        ret[3, i] = asc.atomic_min(acc, 3, vals[i])\n"
    "        ret[4, i] = asc.atomic_exchange(acc, 4, vals[i])\n"
    "        guess = acc[6]\n"
    "        while True:\n"
    "            old = asc.atomic_cas(acc, 5, guess, guess + 1)\n"
    "            if old == guess:\n"
    "                break\n"
    "            guess = old\n"
    "        ret[5, i] = guess\n"
    "\n"
    "@asc.kernel\n"
    "def block_scan(x, partial, out):\n"
    "    b = asc.get_block_idx()\n"
    "    nb = asc.get_block_num()\n"
    "    n = x.shape[0]\n"
    "    chunk = (n + nb - 1) // nb\n"
    "    lo = min(b * chunk, n)\n"
    "    hi = min(lo + chunk, n)\n"
    "    s = 0\n"
    "    for i in range(lo, hi):\n"
    "        s += x[i]\n"
    "        out[i] = s\n"
    "    partial[b] = s\n"
    "    asc.barrier()\n"
    "    off = 0\n"
    "    for j in range(b):\n"
    "        off += partial[j]\n"
    "    for i in range(lo, hi):\n"
    "        out[i] += off\n"
    "\n"
    "@asc.kernel\n"
    "def critical(counter, total, x):\n"
    "    asc.get_block_idx()  # SPMD: each block adds every element\n"
    "    for i in asc.prange(x.shape[0]):\n"
    "        with asc.critical():\n"
    "            counter[0] = counter[0] + 1\n"
    "            total[0] = total[0] + x[i]\n"
    "\n"
    "@asc.kernel\n"
    "def locked(locks, count, total, x):\n"
    "    asc.get_block_idx()  # SPMD: each block adds every element\n"
    "    nl = locks.shape[0]\n"
    "    for i in asc.prange(x.shape[0]):\n"
    "        j = i % nl\n"
    "        asc.lock(locks, j)\n"
    "        count[j] = count[j] + 1\n"
    "        total[j] = total[j] + x[i]\n"
    "        asc.unlock(locks, j)\n"
    "\n"
    "@asc.kernel\n"
    "def block_locked(count, total, x):\n"
    "    locks = asc.lock_array(16)\n"
    "    r = asc.get_block_idx() * 16\n"
    "    for i in asc.prange(x.shape[0]):\n"
    "        j = i % 16\n"
    "        asc.lock(locks, j)\n"
    "        count[r + j] = count[r + j] + 1\n"
    "        total[r + j] = total[r + j] + x[i]\n"
    "        asc.unlock(locks, j)\n"
    "\n"
    "@asc.kernel\n"
    "def shared(x, out, rev):\n"
    "    b = asc.get_block_idx()\n"
    "    buf = asc.shared_array(256, asc.int64)\n"
    "    for i in asc.prange(256):\n"
    "        buf[i] = x[b * 256 + i] * 2 + b\n"
    "    for i in asc.prange(256):\n"
    "        rev[b * 256 + i] = buf[255 - i]\n"
    "    s = 0\n"
    "    for i in range(256):\n"
    "        s += buf[i] * (i + 1)\n"
    "    out[b] = s\n";

/* ------------------------------------------------------------- atomics */

static void test_histogram(void **state) {
  enum { N = 1000000, NB = 256 };
  int64_t *x = e2p_alloc(N, 8);
  int32_t bi[NB] = {0}, want[NB] = {0};
  float bf[NB] = {0};
  ascModule_t m = e2p_load(sync_py, FILE_SYNC, 0);
  ascKernel_t k = e2p_kernel(m, "histogram");
  ascTensor tx = e2p_t1(x, ascInt64, N), ti = e2p_t1(bi, ascInt32, NB),
            tf = e2p_t1(bf, ascFloat32, NB);
  void *args[] = {&tx, &ti, &tf};
  uint32_t seed = 7;
  (void)state;
  for (int i = 0; i < N; i++) {
    seed = seed * 1664525u + 1013904223u;
    /* skewed: bin 3 takes about a quarter of the values */
    x[i] = (seed >> 30) == 0 ? 3 : (seed >> 12) % NB;
    want[x[i]]++;
  }
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int b = 0; b < NB; b++) {
    if (bi[b] != want[b] || bf[b] != (float)want[b])
      fail_msg("bin %d: int32 %d, float32 %.1f, want %d", b, bi[b],
               (double)bf[b], want[b]);
  }
  free(x);
  ASSERT_OK(ascModuleUnload(m));
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Values travel through double: every value used here is an integer below
 * 2^24, exact in each dtype. */
static double get(const void *p, ascDataType dt, size_t i) {
  switch (dt) {
  case ascInt32: return ((const int32_t *)p)[i];
  case ascInt64: return (double)((const int64_t *)p)[i];
  case ascUInt32: return ((const uint32_t *)p)[i];
  case ascFloat32: return ((const float *)p)[i];
  default: return ((const double *)p)[i];
  }
}

static void set(void *p, ascDataType dt, size_t i, double v) {
  switch (dt) {
  case ascInt32: ((int32_t *)p)[i] = (int32_t)v; break;
  case ascInt64: ((int64_t *)p)[i] = (int64_t)v; break;
  case ascUInt32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case ascFloat32: ((float *)p)[i] = (float)v; break;
  default: ((double *)p)[i] = v; break;
  }
}

/* atomic_add/sub/max/min/exchange/cas on int32, int64, uint32, float32 and
 * float64, all returning the old value:
 *  - add 3 (and sub 2) from n iterations: the old values are a permutation
 *    of start + 3k (start - 2k), the final value start + 3n (start - 2n);
 *  - exchange: the old values and the final value are a permutation of the
 *    initial value and all n values written;
 *  - max/min: final = the extreme of all values; each old value is the
 *    initial value or one of the others' values, never beyond the final;
 *  - a compare-and-swap increment loop: each iteration's successful guess
 *    is a distinct 0..n-1, final n. */
static void test_atomics_each_dtype(void **state) {
  static const ascDataType dts[] = {ascInt32, ascInt64, ascUInt32, ascFloat32,
                                    ascFloat64};
  enum { N = 4000, NACC = 8 };
  ascModule_t m = e2p_load(sync_py, FILE_SYNC, 0);
  ascKernel_t k = e2p_kernel(m, "atomics");
  (void)state;
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    ascDataType dt = dts[d];
    size_t es = ascDataTypeSize(dt);
    unsigned char acc[NACC * 8];
    void *vals = e2p_alloc(N, es), *incs = e2p_alloc(N, es),
         *ret = e2p_alloc(7 * N, es);
    double *seen = e2p_alloc(N + 1, sizeof *seen);
    double init_max = 1000, init_min = 100000, init_x = 77777, vmax = 0,
           vmin = 1e9;
    double start_sub = 2.0 * N + 5;
    ascTensor ta = e2p_t1(acc, dt, NACC), tv = e2p_t1(vals, dt, N),
              tn = e2p_t1(incs, dt, N),
              tr = e2p_tensor(ret, dt, 2, (int64_t)7, (int64_t)N);
    void *args[] = {&ta, &tv, &tn, &tr};
    const char *dn = ascDataTypeName(dt);

    set(acc, dt, 0, 0);
    set(acc, dt, 1, start_sub);
    set(acc, dt, 2, init_max);
    set(acc, dt, 3, init_min);
    set(acc, dt, 4, init_x);
    set(acc, dt, 5, 0);
    set(acc, dt, 6, 0);
    set(acc, dt, 7, 0);
    for (int i = 0; i < N; i++) {
      double v = (double)((i * 7919) % 60013 + 10);
      set(vals, dt, (size_t)i, v);
      set(incs, dt, (size_t)i, (double)(i % 13 + 1));
      vmax = v > vmax ? v : vmax;
      vmin = v < vmin ? v : vmin;
    }
    ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));

    /* add, sub and cas: permutations of arithmetic sequences */
    for (int op = 0; op < 6; op += 1) {
      double first, stepv;
      if (op == 0) {
        first = 0, stepv = 3;
      } else if (op == 1) {
        first = start_sub - 2.0 * (N - 1), stepv = 2;
      } else if (op == 5) {
        first = 0, stepv = 1;
      } else {
        continue;
      }
      for (int i = 0; i < N; i++)
        seen[i] = get(ret, dt, (size_t)op * N + (size_t)i);
      qsort(seen, N, sizeof *seen, cmp_d);
      for (int i = 0; i < N; i++)
        if (seen[i] != first + stepv * i)
          fail_msg("%s op %d: sorted old values [%d] = %.1f, want %.1f", dn,
                   op, i, seen[i], first + stepv * i);
    }
    if (get(acc, dt, 0) != 3.0 * N || get(acc, dt, 1) != 5 ||
        get(acc, dt, 5) != N)
      fail_msg("%s: add %.1f sub %.1f cas %.1f", dn, get(acc, dt, 0),
               get(acc, dt, 1), get(acc, dt, 5));
    /* add of different amounts: ordered by the old values they saw, the
     * iterations form one serial order, each old value the previous one
     * plus the previous iteration's amount (prefix sums of a permutation) */
    {
      double(*seq)[2] = e2p_alloc(N, sizeof *seq), sum = 0;
      for (int i = 0; i < N; i++) {
        seq[i][0] = get(ret, dt, 6 * (size_t)N + (size_t)i);
        seq[i][1] = get(incs, dt, (size_t)i);
        sum += seq[i][1];
      }
      qsort(seq, N, sizeof *seq, cmp_d); /* by old value (first member) */
      for (int j = 0; j < N; j++) {
        double want = j == 0 ? 0 : seq[j - 1][0] + seq[j - 1][1];
        if (seq[j][0] != want)
          fail_msg("%s add: %d-th old value %.1f, want %.1f", dn, j,
                   seq[j][0], want);
      }
      if (get(acc, dt, 7) != sum)
        fail_msg("%s add: final %.1f, want %.1f", dn, get(acc, dt, 7), sum);
      free(seq);
    }
    /* max / min */
    if (get(acc, dt, 2) != vmax || get(acc, dt, 3) != vmin)
      fail_msg("%s: max %.1f (want %.1f) min %.1f (want %.1f)", dn,
               get(acc, dt, 2), vmax, get(acc, dt, 3), vmin);
    for (int i = 0; i < N; i++) {
      double omax = get(ret, dt, 2 * (size_t)N + (size_t)i),
             omin = get(ret, dt, 3 * (size_t)N + (size_t)i);
      int okmax = omax == init_max, okmin = omin == init_min;
      for (int j = 0; j < N && !(okmax && okmin); j++) {
        if (j == i)
          continue;
        okmax |= omax == get(vals, dt, (size_t)j);
        okmin |= omin == get(vals, dt, (size_t)j);
      }
      if (!okmax || !okmin || omax > vmax || omin < vmin)
        fail_msg("%s iteration %d: max saw %.1f, min saw %.1f", dn, i, omax,
                 omin);
    }
    /* exchange: old values + final = initial + all values */
    {
      double *want = e2p_alloc(N + 1, sizeof *want);
      for (int i = 0; i < N; i++) {
        seen[i] = get(ret, dt, 4 * (size_t)N + (size_t)i);
        want[i] = get(vals, dt, (size_t)i);
      }
      seen[N] = get(acc, dt, 4);
      want[N] = init_x;
      qsort(seen, N + 1, sizeof *seen, cmp_d);
      qsort(want, N + 1, sizeof *want, cmp_d);
      for (int i = 0; i <= N; i++)
        if (seen[i] != want[i])
          fail_msg("%s exchange: sorted [%d] = %.1f, want %.1f", dn, i,
                   seen[i], want[i]);
      free(want);
    }
    free(vals);
    free(incs);
    free(ret);
    free(seen);
  }
  ASSERT_OK(ascModuleUnload(m));
}

/* -------------------------------------------------------------- barrier */

/* Each block scans its slice, publishes its total, waits at the barrier,
 * then adds the totals of the blocks before it. */
static void test_barrier_block_scan(void **state) {
  enum { N = 100003 };
  int nc = e2p_cores();
  uint32_t dims[] = {1, 2, (uint32_t)nc};
  int64_t *x = e2p_alloc(N, 8), *out = e2p_alloc(N, 8);
  ascModule_t m = e2p_load(sync_py, FILE_SYNC, 0);
  ascKernel_t k = e2p_kernel(m, "block_scan");
  (void)state;
  for (int i = 0; i < N; i++)
    x[i] = (int64_t)((i * 31) % 1000) - 400;
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    uint32_t bd = dims[d];
    int64_t *partial = e2p_alloc(bd, 8), s = 0;
    ascTensor tx = e2p_t1(x, ascInt64, N), tp = e2p_t1(partial, ascInt64, bd),
              to = e2p_t1(out, ascInt64, N);
    void *args[] = {&tx, &tp, &to};
    if (bd > (uint32_t)nc)
      continue;
    memset(out, 0, N * sizeof *out);
    ASSERT_OK(ascLaunchKernel(k, bd, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (int i = 0; i < N; i++) {
      s += x[i];
      if (out[i] != s)
        fail_msg("blockDim %u: out[%d] = %lld, want %lld", bd, i,
                 (long long)out[i], (long long)s);
    }
    free(partial);
  }
  free(x);
  free(out);
  ASSERT_OK(ascModuleUnload(m));
}

/* More blocks than cores cannot all be resident: refused at launch with a
 * clear error, nothing hangs, and the stream works afterwards. */
static void test_barrier_too_many_blocks(void **state) {
  enum { N = 1000 };
  int nc = e2p_cores();
  uint32_t bd = (uint32_t)nc + 1;
  int64_t *x = e2p_alloc(N, 8), *out = e2p_alloc(N, 8),
          *partial = e2p_alloc(bd, 8);
  ascModule_t m = e2p_load(sync_py, FILE_SYNC, 0);
  ascKernel_t k = e2p_kernel(m, "block_scan");
  ascTensor tx = e2p_t1(x, ascInt64, N), tp = e2p_t1(partial, ascInt64, bd),
            to = e2p_t1(out, ascInt64, N);
  void *args[] = {&tx, &tp, &to};
  char want[128];
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  for (int i = 0; i < N; i++)
    x[i] = 1;
  ASSERT_ERR(ascLaunchKernel(k, bd, args, s), ascErrorLaunchFailure);
  assert_non_null(strstr(ascGetLastErrorMessage(), "asc.barrier()"));
  snprintf(want, sizeof want, "all %u blocks must run at once", bd);
  if (strstr(ascGetLastErrorMessage(), want) == NULL)
    fail_msg("message '%s' lacks '%s'", ascGetLastErrorMessage(), want);
  ASSERT_OK(ascStreamSynchronize(s));
  tp.shape[0] = 1;
  ASSERT_OK(ascLaunchKernel(k, 1, args, s));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(out[N - 1], N);
  ASSERT_OK(ascStreamDestroy(s));
  free(x);
  free(out);
  free(partial);
  ASSERT_OK(ascModuleUnload(m));
}

/* ------------------------------------------------- critical and locks */

/* A plain read-modify-write of shared counters inside
 * `with asc.critical():`, by every thread of several blocks (one lock per
 * launch). */
static void test_critical_section(void **state) {
  enum { N = 200000 };
  static const uint32_t dims[] = {1, 3};
  int64_t *x = e2p_alloc(N, 8), want = 0;
  ascModule_t m = e2p_load(sync_py, FILE_SYNC, 0);
  ascKernel_t k = e2p_kernel(m, "critical");
  (void)state;
  for (int i = 0; i < N; i++) {
    x[i] = i % 1000;
    want += x[i];
  }
  for (size_t d = 0; d < 2; d++) {
    int64_t counter = 0, total = 0;
    ascTensor tc = e2p_t1(&counter, ascInt64, 1),
              tt = e2p_t1(&total, ascInt64, 1), tx = e2p_t1(x, ascInt64, N);
    void *args[] = {&tc, &tt, &tx};
    ASSERT_OK(ascLaunchKernel(k, dims[d], args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    assert_int_equal(counter, (int64_t)N * dims[d]);
    assert_int_equal(total, want * dims[d]);
  }
  free(x);
  ASSERT_OK(ascModuleUnload(m));
}

/* asc.lock(locks, j) / asc.unlock(locks, j) on an int32 tensor of locks
 * (zero = free) guarding plain updates of count[j] and total[j]. */
static void test_lock_array(void **state) {
  enum { N = 200000, NL = 16 };
  int32_t locks[NL] = {0};
  int64_t count[NL] = {0}, *x = e2p_alloc(N, 8), wc[NL] = {0};
  double total[NL] = {0}, wt[NL] = {0};
  ascModule_t m = e2p_load(sync_py, FILE_SYNC, 0);
  ascKernel_t k = e2p_kernel(m, "locked");
  ascTensor tl = e2p_t1(locks, ascInt32, NL), tc = e2p_t1(count, ascInt64, NL),
            tt = e2p_t1(total, ascFloat64, NL), tx = e2p_t1(x, ascInt64, N);
  void *args[] = {&tl, &tc, &tt, &tx};
  (void)state;
  for (int i = 0; i < N; i++) {
    x[i] = (i * 13) % 4096;
    wc[i % NL]++;
    wt[i % NL] += (double)x[i];
  }
  ASSERT_OK(ascLaunchKernel(k, 2, args, NULL));
  ASSERT_OK(ascStreamSynchronize(NULL));
  for (int j = 0; j < NL; j++) {
    assert_int_equal(locks[j], 0);
    assert_int_equal(count[j], 2 * wc[j]);
    if (total[j] != 2 * wt[j])
      fail_msg("total[%d] = %.1f, want %.1f", j, total[j], 2 * wt[j]);
  }
  free(x);
  ASSERT_OK(ascModuleUnload(m));
}

/* asc.lock_array(16): each block's own 16 locks, created unlocked, guard
 * plain updates of that block's row of count and total by the block's
 * threads (blockDim 1: one block with every core). */
static void test_lock_array_builtin(void **state) {
  enum { N = 200000, NL = 16, MAXB = 3 };
  static const uint32_t dims[] = {1, 3};
  int64_t *x = e2p_alloc(N, 8), wc[NL] = {0};
  double wt[NL] = {0};
  ascModule_t m = e2p_load(sync_py, FILE_SYNC, 0);
  ascKernel_t k = e2p_kernel(m, "block_locked");
  (void)state;
  for (int i = 0; i < N; i++) {
    x[i] = (i * 29) % 5000;
    wc[i % NL]++;
    wt[i % NL] += (double)x[i];
  }
  for (size_t d = 0; d < 2; d++) {
    int64_t count[MAXB * NL] = {0};
    double total[MAXB * NL] = {0};
    ascTensor tc = e2p_t1(count, ascInt64, MAXB * NL),
              tt = e2p_t1(total, ascFloat64, MAXB * NL),
              tx = e2p_t1(x, ascInt64, N);
    void *args[] = {&tc, &tt, &tx};
    ASSERT_OK(ascLaunchKernel(k, dims[d], args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (uint32_t b = 0; b < dims[d]; b++)
      for (int j = 0; j < NL; j++) {
        assert_int_equal(count[b * NL + j], wc[j]);
        if (total[b * NL + j] != wt[j])
          fail_msg("blockDim %u: total[%u][%d] = %.1f, want %.1f", dims[d],
                   b, j, total[b * NL + j], wt[j]);
      }
  }
  free(x);
  ASSERT_OK(ascModuleUnload(m));
}

/* ------------------------------------------------------- shared arrays */

/* asc.shared_array: one buffer per block, filled by the block's team in a
 * parallel loop, read back by the team (reversed) and by the block's own
 * thread after the loop's join. */
static void test_shared_array(void **state) {
  enum { BD = 5, S = 256 };
  int64_t x[BD * S], out[BD], rev[BD * S];
  ascModule_t m = e2p_load(sync_py, FILE_SYNC, 0);
  ascKernel_t k = e2p_kernel(m, "shared");
  ascTensor tx = e2p_t1(x, ascInt64, BD * S), to = e2p_t1(out, ascInt64, BD),
            tr = e2p_t1(rev, ascInt64, BD * S);
  void *args[] = {&tx, &to, &tr};
  (void)state;
  for (int i = 0; i < BD * S; i++)
    x[i] = (i * 17) % 301 - 150;
  for (int rep = 0; rep < 3; rep++) {
    memset(out, 0, sizeof out);
    memset(rev, 0, sizeof rev);
    ASSERT_OK(ascLaunchKernel(k, BD, args, NULL));
    ASSERT_OK(ascStreamSynchronize(NULL));
    for (int b = 0; b < BD; b++) {
      int64_t s = 0;
      for (int i = 0; i < S; i++) {
        int64_t buf_i = x[b * S + i] * 2 + b;
        s += buf_i * (i + 1);
        if (rev[b * S + (S - 1 - i)] != buf_i)
          fail_msg("block %d: rev[%d] = %lld, want %lld", b, S - 1 - i,
                   (long long)rev[b * S + (S - 1 - i)], (long long)buf_i);
      }
      if (out[b] != s)
        fail_msg("block %d: out = %lld, want %lld", b, (long long)out[b],
                 (long long)s);
    }
  }
  ASSERT_OK(ascModuleUnload(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_histogram),
      cmocka_unit_test(test_atomics_each_dtype),
      cmocka_unit_test(test_barrier_block_scan),
      cmocka_unit_test(test_barrier_too_many_blocks),
      cmocka_unit_test(test_critical_section),
      cmocka_unit_test(test_lock_array),
      cmocka_unit_test(test_lock_array_builtin),
      cmocka_unit_test(test_shared_array),
  };
  return cmocka_run_group_tests(tests, NULL, test_teardown);
}
