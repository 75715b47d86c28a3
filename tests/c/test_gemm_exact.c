/*
 * asc_gemm_exact_f32/f64 (src/compiler/gemm_kernel.h, the text generated
 * kernels carry for a recognised naive matrix product) against the naive
 * i-j-p loop, bit for bit: shapes around the tile and cache-block edges,
 * every layout (row- and column-major, strided, reversed, broadcast
 * inputs, a c whose elements alias), accumulate or not, signed zeros,
 * infinities, NaNs, subnormals and overflow; teams of one to three
 * threads, inside a parallel loop (no parallel_for), no scratch memory
 * (the naive fallback), and a stopped launch.
 *
 * This file is compiled with -ffp-contract=off, as kernels are, so the
 * reference rounds each product and sum; test_gemm_exact_native is the
 * same file at -O3 -march=native (the vector width kernels get here).
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* in the order generated C has them (emit_c.c) */
#include "asc/kernel_abi.h"
#include "compiler/emit_helpers.h"
#define ASC_NEED_GEMM_EXACT 1
#include "compiler/gemm_kernel.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define TEST_SANITIZED 1
#else
#define TEST_SANITIZED 0
#endif

/* ---- a stand-in runtime: a team of pthreads, counted allocations ---- */

static int team_threads = 1;  /* team_size */
static int alloc_fails;       /* alloc returns NULL */
static int pfor_calls, nalloc, nrelease;
static int32_t stop_flag;

typedef struct {
  int64_t lo, hi;
  int32_t tid;
  asc_kbody body;
  void *env;
  asc_kexc exc;
  int64_t r;
} share;

static void *run_share(void *p) {
  share *s = p;
  s->r = s->lo < s->hi ? s->body(s->env, s->lo, s->hi, s->tid, &s->exc) : 0;
  return NULL;
}

/* Thread t runs [n t / T, n (t + 1) / T); the lowest raising share wins. */
static int fake_pfor(asc_kctx *ctx, int64_t n, int64_t min_chunk,
                     asc_kbody body, void *env, asc_kexc *exc) {
  share sh[8];
  pthread_t th[8];
  int t = team_threads;
  (void)ctx;
  assert_true(min_chunk >= 1);
  assert_true(n >= 1 && n <= t);
  __atomic_add_fetch(&pfor_calls, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < t; i++) {
    memset(&sh[i], 0, sizeof sh[i]);
    sh[i].lo = n * i / t;
    sh[i].hi = n * (i + 1) / t;
    sh[i].tid = i;
    sh[i].body = body;
    sh[i].env = env;
    if (i > 0)
      assert_int_equal(pthread_create(&th[i], NULL, run_share, &sh[i]), 0);
  }
  run_share(&sh[0]);
  for (int i = 1; i < t; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < t; i++)
    if (sh[i].r != 0) {
      assert_true(sh[i].r >= sh[i].lo + 1 && sh[i].r <= sh[i].hi);
      *exc = sh[i].exc;
      return 1;
    }
  return 0;
}
static int32_t fake_team(asc_kctx *ctx) {
  (void)ctx;
  return team_threads;
}
static void *fake_alloc(asc_kctx *ctx, uint64_t bytes) {
  void *p;
  (void)ctx;
  if (alloc_fails)
    return NULL;
  p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  assert_non_null(p);
  __atomic_add_fetch(&nalloc, 1, __ATOMIC_RELAXED);
  return p;
}
static void fake_release(asc_kctx *ctx, void *p) {
  (void)ctx;
  if (p != NULL)
    __atomic_add_fetch(&nrelease, 1, __ATOMIC_RELAXED);
  free(p);
}

static asc_krt rt = {.parallel_for = fake_pfor,
                     .team_size = fake_team,
                     .alloc = fake_alloc,
                     .release = fake_release};
static asc_kctx kctx = {.rt = &rt, .stop = &stop_flag};

/* ---- operands ---- */

static uint64_t rng = 88172645463325252u;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Mostly small integers over powers of two (sums round often), and with
 * special > 0 sometimes a signed zero, an infinity, a NaN, a subnormal or
 * a huge value (products overflow). */
static double value(int special) {
  uint64_t r = next();
  if (special && r % 16 == 0) {
    switch ((r >> 8) % 8) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return NAN;
    case 5: return 1e-310;
    case 6: return -3e-40;
    default: return (r >> 12) % 2 ? 1e200 : 3e38;
    }
  }
  return (double)((int64_t)(r >> 20) % 2001 - 1000) / 64.0 +
         (double)((r >> 40) % 7) / 3.0;
}

/* A rows x cols view in a buffer of its own, layout L: 0 row-major,
 * 1 column-major, 2 every third element of rows padded to 3 cols + 5,
 * 3 rows and columns reversed (negative strides), 4 a broadcast row
 * (row stride 0), 5 a broadcast column (column stride 0). */
typedef struct view {
  char *buf;
  size_t bytes;
  int64_t off, s0, s1;
} view;

static view make_view(size_t es, int64_t rows, int64_t cols, int L,
                      int special) {
  view v;
  int64_t r = rows > 0 ? rows : 1, c = cols > 0 ? cols : 1, total;
  memset(&v, 0, sizeof v);
  switch (L) {
  case 0: v.s0 = c; v.s1 = 1; total = r * c; break;
  case 1: v.s0 = 1; v.s1 = r; total = r * c; break;
  case 2: v.s0 = 3 * c + 5; v.s1 = 3; total = r * (3 * c + 5); break;
  case 3:
    v.s0 = -c; v.s1 = -1; total = r * c; v.off = total - 1;
    break;
  case 4: v.s0 = 0; v.s1 = 1; total = c; break;
  default: v.s0 = 1; v.s1 = 0; total = r; break;
  }
  v.bytes = (size_t)total * es;
  v.buf = malloc(v.bytes);
  assert_non_null(v.buf);
  for (int64_t i = 0; i < total; i++) {
    double x = value(special);
    if (es == 4) {
      float f = (float)x;
      memcpy(v.buf + (size_t)i * es, &f, 4);
    } else {
      memcpy(v.buf + (size_t)i * es, &x, 8);
    }
  }
  return v;
}

/* The order every element must keep, as generated code writes the loop:
 * gcc would vectorise the products of the in-order sum apart from the
 * additions (which under -ffp-contract=fast then stay unfused); kernels
 * keep it scalar with this empty asm (ASC_SEQ_SUM, emit_helpers.h). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define SEQ_SUM(v) __asm__("" : "+x"(v))
#else
#define SEQ_SUM(v) ((void)0)
#endif
#define NAIVE(T, S)                                                           \
  static void naive_##S(int64_t m, int64_t n, int64_t k, const T *a,         \
                        int64_t sa0, int64_t sa1, const T *b, int64_t sb0,   \
                        int64_t sb1, T *c, int64_t sc0, int64_t sc1,         \
                        int accumulate) {                                     \
    for (int64_t i = 0; i < m; i++)                                           \
      for (int64_t j = 0; j < n; j++) {                                       \
        T acc = accumulate ? c[i * sc0 + j * sc1] : (T)0;                     \
        for (int64_t p = 0; p < k; p++) {                                     \
          acc = acc + a[i * sa0 + p * sa1] * b[p * sb0 + j * sb1];            \
          SEQ_SUM(acc);                                                       \
        }                                                                     \
        c[i * sc0 + j * sc1] = acc;                                           \
      }                                                                       \
  }
NAIVE(float, f32)
NAIVE(double, f64)

/* Equal bits, or both NaN (which NaN an operation returns when both
 * operands are NaN depends on the operand order the C compiler picks, in
 * the naive loop as here). */
static int same(const char *x, const char *y, size_t es) {
  if (memcmp(x, y, es) == 0)
    return 1;
  if (es == 4) {
    float f, g;
    memcpy(&f, x, 4);
    memcpy(&g, y, 4);
    return isnan(f) && isnan(g);
  } else {
    double f, g;
    memcpy(&f, x, 8);
    memcpy(&g, y, 8);
    return isnan(f) && isnan(g);
  }
}

static int64_t ncases, nfast;

/* One product, both ways, every byte of c's buffer compared (nothing
 * outside the view may change). */
static void check(int dbl, int64_t m, int64_t n, int64_t k, int La, int Lb,
                  int Lc, int accumulate, int in_pfor, int special) {
  size_t es = dbl ? 8 : 4;
  view a = make_view(es, m, k, La, special);
  view b = make_view(es, k, n, Lb, special);
  view c = make_view(es, m, n, Lc, special);
  char *ref = malloc(c.bytes);
  asc_kexc exc;
  int rc, calls = pfor_calls;
  assert_non_null(ref);
  memcpy(ref, c.buf, c.bytes);
  memset(&exc, 0, sizeof exc);
  nalloc = nrelease = 0;
  if (dbl) {
    naive_f64(m, n, k, (const double *)a.buf + a.off, a.s0, a.s1,
              (const double *)b.buf + b.off, b.s0, b.s1,
              (double *)ref + c.off, c.s0, c.s1, accumulate);
    rc = asc_gemm_exact_f64(&kctx, &exc, in_pfor, m, n, k,
                            (const double *)a.buf + a.off, a.s0, a.s1,
                            (const double *)b.buf + b.off, b.s0, b.s1,
                            (double *)c.buf + c.off, c.s0, c.s1, accumulate);
  } else {
    naive_f32(m, n, k, (const float *)a.buf + a.off, a.s0, a.s1,
              (const float *)b.buf + b.off, b.s0, b.s1,
              (float *)ref + c.off, c.s0, c.s1, accumulate);
    rc = asc_gemm_exact_f32(&kctx, &exc, in_pfor, m, n, k,
                            (const float *)a.buf + a.off, a.s0, a.s1,
                            (const float *)b.buf + b.off, b.s0, b.s1,
                            (float *)c.buf + c.off, c.s0, c.s1, accumulate);
  }
  assert_int_equal(rc, 0);
  assert_int_equal(nalloc, nrelease);
  if (in_pfor || team_threads == 1)
    assert_int_equal(pfor_calls, calls);
  if (nalloc > 0)
    nfast++;
  for (size_t o = 0; o < c.bytes; o += es)
    if (!same(c.buf + o, ref + o, es)) {
      double got, want;
      if (dbl) {
        memcpy(&got, c.buf + o, 8);
        memcpy(&want, ref + o, 8);
      } else {
        float g, w;
        memcpy(&g, c.buf + o, 4);
        memcpy(&w, ref + o, 4);
        got = g;
        want = w;
      }
      fail_msg("%s m=%lld n=%lld k=%lld layouts a%d b%d c%d accumulate=%d "
               "team=%d in_pfor=%d: element %zu is %a, the naive loop "
               "gives %a",
               dbl ? "f64" : "f32", (long long)m, (long long)n,
               (long long)k, La, Lb, Lc, accumulate, team_threads, in_pfor,
               o / es, got, want);
    }
  ncases++;
  free(ref);
  free(a.buf);
  free(b.buf);
  free(c.buf);
}

static const int64_t sizes[] = {0, 1, 2, 5, 7, 31, 33, 64, 100, 257};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Every (m, n, k) of the size list, row-major, both dtypes, with and
 * without accumulate, on one thread and on two (special values in half). */
static void test_all_shapes(void **state) {
  (void)state;
  for (int dbl = 0; dbl < 2; dbl++)
    for (int im = 0; im < NSIZES; im++)
      for (int in = 0; in < NSIZES; in++)
        for (int ik = 0; ik < NSIZES; ik++) {
          int64_t m = sizes[im], n = sizes[in], k = sizes[ik];
          /* the largest third of the shapes only in plain builds */
          if (TEST_SANITIZED && m * n * k > 64 * 64 * 64)
            continue;
          team_threads = (im + in + ik) % 2 ? 2 : 1;
          check(dbl, m, n, k, 0, 0, 0, (im + ik) % 2, 0, (in + ik) % 2);
        }
  team_threads = 1;
  assert_true(nfast > 0);
}

/* Random shapes from the list in random layouts of a, b and c, teams of
 * one to three, inside a parallel loop or not. */
static void test_layouts(void **state) {
  int cases = TEST_SANITIZED ? 300 : 1500;
  (void)state;
  for (int t = 0; t < cases; t++) {
    uint64_t r = next();
    int64_t m = sizes[r % NSIZES], n = sizes[(r >> 4) % NSIZES],
            k = sizes[(r >> 8) % NSIZES];
    int La = (int)((r >> 12) % 6), Lb = (int)((r >> 16) % 6),
        Lc = (int)((r >> 20) % 4);
    if (TEST_SANITIZED && m * n * k > 100 * 100 * 100)
      continue;
    team_threads = 1 + (int)((r >> 24) % 3);
    check((int)((r >> 28) % 2), m, n, k, La, Lb, Lc, (int)((r >> 30) % 2),
          (int)((r >> 32) % 4 == 0), (int)((r >> 34) % 2));
  }
  team_threads = 1;
}

/* Past every cache block on every vector width (KC up to 512, MC up to
 * 512 rows, NC up to 4096 columns), and shapes one off the tile. */
static void test_block_edges(void **state) {
  static const int64_t shapes[][3] = {
      {3, 5, 1540}, {520, 40, 130}, {7, 4100, 3},  {13, 2050, 9},
      {8, 48, 128}, {16, 96, 129},  {7, 47, 127},  {37, 65, 513},
      {6, 16, 384}, {18, 48, 1},    {1, 4097, 2},  {513, 3, 2},
      {9, 25, 769}, {24, 24, 24}};
  (void)state;
  for (int dbl = 0; dbl < 2; dbl++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int acc = 0; acc < 2; acc++) {
        team_threads = 1 + (int)(s % 3);
        check(dbl, shapes[s][0], shapes[s][1], shapes[s][2],
              (int)(s % 4), (int)((s + acc) % 4), (int)((s + dbl) % 4), acc,
              0, 1);
      }
  team_threads = 1;
}

/* A c whose elements alias (a broadcast row or column) keeps the naive
 * order, element by element, last write winning. */
static void test_aliased_c(void **state) {
  (void)state;
  for (int dbl = 0; dbl < 2; dbl++)
    for (int L = 4; L < 6; L++)
      for (int acc = 0; acc < 2; acc++) {
        team_threads = 2;
        nfast = 0;
        check(dbl, 33, 40, 17, 0, 0, L, acc, 0, 0);
        assert_int_equal(nfast, 0);
      }
  team_threads = 1;
}

/* Signed zeros: with accumulate off every sum starts from +0.0, so
 * products of -0.0 give +0.0; accumulating onto -0.0 keeps -0.0. */
static void test_signed_zeros(void **state) {
  float a[7 * 3], b[3 * 40], c[7 * 40];
  asc_kexc exc;
  (void)state;
  for (int i = 0; i < 7 * 3; i++)
    a[i] = -0.0f;
  for (int i = 0; i < 3 * 40; i++)
    b[i] = (float)(i % 5);
  for (int i = 0; i < 7 * 40; i++)
    c[i] = -0.0f;
  assert_int_equal(asc_gemm_exact_f32(&kctx, &exc, 0, 7, 40, 3, a, 3, 1, b,
                                      40, 1, c, 40, 1, 1),
                   0);
  for (int i = 0; i < 7 * 40; i++)
    assert_true(c[i] == 0.0f && signbit(c[i]));
  assert_int_equal(asc_gemm_exact_f32(&kctx, &exc, 0, 7, 40, 3, a, 3, 1, b,
                                      40, 1, c, 40, 1, 0),
                   0);
  for (int i = 0; i < 7 * 40; i++)
    assert_true(c[i] == 0.0f && !signbit(c[i]));
  /* k == 0: +0.0 without accumulate, c untouched with it */
  for (int i = 0; i < 7 * 40; i++)
    c[i] = -0.0f;
  assert_int_equal(asc_gemm_exact_f32(&kctx, &exc, 0, 7, 40, 0, a, 3, 1, b,
                                      40, 1, c, 40, 1, 1),
                   0);
  assert_true(signbit(c[0]) && signbit(c[7 * 40 - 1]));
  assert_int_equal(asc_gemm_exact_f32(&kctx, &exc, 0, 7, 40, 0, a, 3, 1, b,
                                      40, 1, c, 40, 1, 0),
                   0);
  assert_true(!signbit(c[0]) && !signbit(c[7 * 40 - 1]) && c[5] == 0.0f);
}

/* No scratch memory: the same bits from the naive loop. */
static void test_no_memory(void **state) {
  (void)state;
  alloc_fails = 1;
  for (int dbl = 0; dbl < 2; dbl++)
    for (int t = 1; t <= 2; t++) {
      team_threads = t;
      nfast = 0;
      check(dbl, 70, 45, 150, 1, 3, 2, dbl, 0, 1);
      assert_int_equal(nfast, 0);
    }
  alloc_fails = 0;
  team_threads = 1;
}

/* A stopped launch: the product ends early with the cancellation in exc
 * and its scratch memory given back; serially and over a team. */
static void test_stopped(void **state) {
  static float a[64 * 64], b[64 * 64], c[64 * 64];
  static double ad[600 * 300], bd[300 * 64], cd[600 * 64];
  (void)state;
  stop_flag = 1;
  for (int t = 1; t <= 3; t++) {
    asc_kexc exc;
    memset(&exc, 0, sizeof exc);
    team_threads = t;
    nalloc = nrelease = 0;
    assert_int_not_equal(asc_gemm_exact_f32(&kctx, &exc, t == 3, 64, 64, 64,
                                            a, 64, 1, b, 64, 1, c, 64, 1,
                                            0),
                         0);
    assert_int_equal(exc.kind, ASC_KEXC_CANCELLED);
    assert_string_equal(exc.msg, "launch stopped");
    assert_int_equal(nalloc, nrelease);
    memset(&exc, 0, sizeof exc);
    assert_int_not_equal(asc_gemm_exact_f64(&kctx, &exc, 0, 600, 64, 300,
                                            ad, 300, 1, bd, 64, 1, cd, 64,
                                            1, 1),
                         0);
    assert_int_equal(exc.kind, ASC_KEXC_CANCELLED);
    assert_int_equal(nalloc, nrelease);
  }
  stop_flag = 0;
  team_threads = 1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_shapes),   cmocka_unit_test(test_layouts),
      cmocka_unit_test(test_block_edges),  cmocka_unit_test(test_aliased_c),
      cmocka_unit_test(test_signed_zeros), cmocka_unit_test(test_no_memory),
      cmocka_unit_test(test_stopped),
  };
  int r = cmocka_run_group_tests(tests, NULL, NULL);
  printf("%lld products compared, vector width %d bytes\n",
         (long long)ncases, ASC_GK_VB);
  return r;
}
