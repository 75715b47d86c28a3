/* ---- exact GEMM (docs/optimizer.md, "Exact GEMM micro-kernel") ----
 * asc_gemm_exact_f32/f64: the naive i-j-p matrix product, each c[i, j]
 * summed in Python's order (acc = acc + a[i, p] * b[p, j] for p = 0, 1,
 * ..., each product and sum rounded as the kernel's floating-point mode
 * rounds `acc + x * y`), at the speed of a register-blocked kernel.  Only
 * the interleaving of different elements changes: a tile of MR x NR
 * elements keeps its accumulators in vector registers while p runs in
 * order, and when p is cut into blocks of KC the partial sums go to c and
 * come back unchanged (a float store and load are exact).  The emitter
 * writes this text into a module's C after emit_helpers.h only when a
 * function of the module calls it, preceded by
 * `#define ASC_NEED_GEMM_EXACT 1` (emit_c.c, needs_gemm_exact);
 * tests/c/test_gemm_exact.c includes it directly.  Needs only the kernel
 * ABI (asc_kctx, asc_krt, asc_kexc) and GCC/clang vector extensions. */
#ifdef ASC_NEED_GEMM_EXACT
#ifndef ASC_GEMM_KERNEL_H
#define ASC_GEMM_KERNEL_H
#include <stdint.h>
#include <string.h>

/* Vector width in bytes: one register of the widest unit -march names. */
#if defined(__AVX512F__)
#define ASC_GK_VB 64
#elif defined(__AVX__)
#define ASC_GK_VB 32
#else
#define ASC_GK_VB 16
#endif
/* A tile is ASC_GK_MR rows by ASC_GK_NV vectors: MR x NV accumulators, NV
 * vectors of b and one broadcast a live in registers: 6 x 4 takes 29 of
 * AVX-512's 32, 6 x 2 15 of the 16 that SSE and AVX2 have.
 * Cache blocks, in bytes: the packed b micro-panel (KC x NR) that the
 * tiles of one column block reuse stays in L1 (ASC_GK_L1: KC = 128 on
 * AVX-512, at most ASC_GK_KC_MAX), the packed a block (MC x KC) in L2
 * (256 KiB), the packed b block (KC x NC) in L3 (2 MiB).  Measured on
 * Zen 4 (docs/optimizer.md, "Exact GEMM micro-kernel"). */
#ifndef ASC_GK_MR
#if defined(__AVX512F__)
#define ASC_GK_MR 6
#define ASC_GK_NV 4
#define ASC_GK_L1 32768
#else
#define ASC_GK_MR 6
#define ASC_GK_NV 2
#define ASC_GK_L1 24576
#endif
#endif
#ifndef ASC_GK_L1
#define ASC_GK_L1 24576
#endif
#define ASC_GK_KC_MAX 512
#define ASC_GK_L2 262144
#define ASC_GK_L3 2097152
/* The fallback's running sum stays one scalar chain, each step rounded as
 * the tile's lanes round (fused under -ffp-contract=fast): gcc would
 * otherwise vectorise the products apart from the in-order additions,
 * which then stay unfused (ASC_SEQ_SUM in emit_helpers.h, the same). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__ASSOCIATIVE_MATH__)
#define ASC_GK_SEQ(v) __asm__("" : "+x"(v))
#else
#define ASC_GK_SEQ(v) ((void)0)
#endif
/* Up to this many multiply-adds the plain loop is as fast as packing or
 * faster (one thread, AVX-512: 4 x 4 x 4 0.07 against 0.25 us, 8 x 8 x 8
 * about 0.5 us either way, 16 x 16 x 16 2.2 against 0.7 packed). */
#ifndef ASC_GK_TINY
#define ASC_GK_TINY 512
#endif
/* Below this many multiply-adds one thread does the product. */
#define ASC_GK_PARALLEL_MIN ((int64_t)1 << 18)

static inline int asc_gk_stopped(asc_kctx *ctx) {
  return ctx->stop != NULL &&
         __builtin_expect(__atomic_load_n(ctx->stop, __ATOMIC_RELAXED), 0);
}
static inline void asc_gk_raise_stop(asc_kexc *exc) {
  static const char msg[] = "launch stopped";
  exc->kind = ASC_KEXC_CANCELLED;
  exc->line = 0;
  memcpy(exc->msg, msg, sizeof msg);
}
/* No two (i, j) of an m x n view with strides s0, s1 share an element:
 * the smaller stride's run (ext * |s|) fits inside one step of the larger.
 * Sufficient, not necessary: a view it refuses runs the naive loop. */
static inline int asc_gk_distinct(int64_t m, int64_t n, int64_t s0,
                                  int64_t s1) {
  uint64_t x = s0 < 0 ? 0 - (uint64_t)s0 : (uint64_t)s0;
  uint64_t y = s1 < 0 ? 0 - (uint64_t)s1 : (uint64_t)s1;
  uint64_t nx = (uint64_t)m, ny = (uint64_t)n;
  if (nx <= 1 || ny <= 1)
    return (nx <= 1 || x != 0) && (ny <= 1 || y != 0);
  if (x > y) {
    uint64_t t = x; x = y; y = t;
    t = nx; nx = ny; ny = t;
  }
  return x != 0 && y / x >= nx;
}

/* ASC_GK_DEFINE(T, S): the functions of element type T, names ending S.
 *   asc_gk_uk_S     the micro-kernel: one MR x NR tile of c (row stride
 *                   ldc, unit column stride), kc steps of packed a
 *                   (kc x MR, MR values per step) and b (kc x NR);
 *                   init: the tile starts from c, else from +0.0
 *   asc_gk_naive_S  the plain loop, for views it cannot pack
 *   asc_gk_serial_S rows [i0, i1) x columns [j0, j1) in this thread
 */
#define ASC_GK_DEFINE(T, S)                                                   \
  typedef T asc_gkv_##S __attribute__((vector_size(ASC_GK_VB)));              \
  enum { ASC_GK_VL_##S = ASC_GK_VB / (int)sizeof(T),                          \
         ASC_GK_NR_##S = ASC_GK_NV * (ASC_GK_VB / (int)sizeof(T)) };         \
  static inline void asc_gk_uk_##S(int64_t kc, const T *ap, const T *bp,     \
                                   T *c, int64_t ldc, int init) {             \
    typedef asc_gkv_##S V;                                                    \
    enum { MR = ASC_GK_MR, NV = ASC_GK_NV, VL = ASC_GK_VL_##S };              \
    V acc[ASC_GK_MR][ASC_GK_NV], b[ASC_GK_NV];                                \
    _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++)                     \
      _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) {                  \
        if (init)                                                             \
          memcpy(&acc[r][v], c + r * ldc + v * VL, sizeof(V));                \
        else                                                                  \
          acc[r][v] = (V){0};                                                 \
      }                                                                       \
    for (int64_t p = 0; p < kc; p++) {                                        \
      _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)                    \
        memcpy(&b[v], bp + v * VL, sizeof(V));                                \
      _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++) {                 \
        T x = ap[r];                                                          \
        _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)                  \
          acc[r][v] = acc[r][v] + x * b[v];                                   \
      }                                                                       \
      ap += MR;                                                               \
      bp += NV * VL;                                                          \
    }                                                                         \
    _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++)                     \
      _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)                    \
        memcpy(c + r * ldc + v * VL, &acc[r][v], sizeof(V));                  \
  }                                                                           \
  static inline void asc_gk_naive_##S(                                        \
      int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k,              \
      const T *a, int64_t sa0, int64_t sa1, const T *b, int64_t sb0,          \
      int64_t sb1, T *c, int64_t sc0, int64_t sc1, int accumulate) {          \
    for (int64_t i = i0; i < i1; i++)                                         \
      for (int64_t j = j0; j < j1; j++) {                                     \
        T acc = accumulate ? c[i * sc0 + j * sc1] : (T)0;                     \
        for (int64_t p = 0; p < k; p++) {                                     \
          acc = acc + a[i * sa0 + p * sa1] * b[p * sb0 + j * sb1];            \
          ASC_GK_SEQ(acc);                                                    \
        }                                                                     \
        c[i * sc0 + j * sc1] = acc;                                           \
      }                                                                       \
  }                                                                           \
  /* Returns 0, or 1 when the launch stopped (exc set) or, with nothing   */  \
  /* done yet, 2 when no scratch memory was to be had. */                     \
  static inline int asc_gk_serial_##S(                                        \
      asc_kctx *ctx, asc_kexc *exc, int64_t i0, int64_t i1, int64_t j0,       \
      int64_t j1, int64_t k, const T *a, int64_t sa0, int64_t sa1,            \
      const T *b, int64_t sb0, int64_t sb1, T *c, int64_t sc0, int64_t sc1,   \
      int accumulate) {                                                       \
    enum { MR = ASC_GK_MR, NR = ASC_GK_NR_##S };                              \
    const int64_t m = i1 - i0, n = j1 - j0;                                   \
    int64_t kcb = ASC_GK_L1 / (NR * (int64_t)sizeof(T));                      \
    kcb = kcb < ASC_GK_KC_MAX ? kcb : ASC_GK_KC_MAX;                          \
    int64_t mcb, ncb, kcx, mcx, ncx, pao;                                     \
    T *pa, *pb;                                                               \
    T tile[ASC_GK_MR * ASC_GK_NR_##S] __attribute__((aligned(64)));           \
    if (m <= 0 || n <= 0)                                                     \
      return 0;                                                               \
    if (k <= 0) {                                                             \
      if (!accumulate)                                                        \
        for (int64_t i = i0; i < i1; i++)                                     \
          for (int64_t j = j0; j < j1; j++)                                   \
            c[i * sc0 + j * sc1] = (T)0;                                      \
      return 0;                                                               \
    }                                                                         \
    mcb = ASC_GK_L2 / (kcb * (int64_t)sizeof(T)) / MR * MR;                   \
    ncb = ASC_GK_L3 / (kcb * (int64_t)sizeof(T)) / NR * NR;                   \
    /* blocks of even size: 514 rows are 258 + 256, not 510 + 4 */           \
    if (m > mcb) {                                                            \
      int64_t nb = (m + mcb - 1) / mcb;                                       \
      mcb = ((m + nb - 1) / nb + MR - 1) / MR * MR;                           \
    }                                                                         \
    if (n > ncb) {                                                            \
      int64_t nb = (n + ncb - 1) / ncb;                                       \
      ncb = ((n + nb - 1) / nb + NR - 1) / NR * NR;                           \
    }                                                                         \
    kcx = k < kcb ? k : kcb;                                                  \
    mcx = m < mcb ? (m + MR - 1) / MR * MR : mcb;                             \
    ncx = n < ncb ? (n + NR - 1) / NR * NR : ncb;                             \
    /* b's block starts 64-byte aligned, as alloc's memory */                \
    pao = (mcx * kcx + 63) / 64 * 64;                                         \
    pa = (T *)ctx->rt->alloc(ctx, (uint64_t)(pao + ncx * kcx) * sizeof(T));   \
    if (pa == NULL)                                                           \
      return 2;                                                               \
    pb = pa + pao;                                                            \
    for (int64_t jc = 0; jc < n; jc += ncb) {                                 \
      const int64_t nc = n - jc < ncb ? n - jc : ncb;                         \
      for (int64_t pc = 0; pc < k; pc += kcb) {                               \
        const int64_t kc = k - pc < kcb ? k - pc : kcb;                       \
        const int init = accumulate || pc > 0;                                \
        if (asc_gk_stopped(ctx)) {                                            \
          ctx->rt->release(ctx, pa);                                          \
          asc_gk_raise_stop(exc);                                             \
          return 1;                                                           \
        }                                                                     \
        /* b[pc:pc+kc, jc:jc+nc] as micro-panels of NR columns, each kc  */  \
        /* steps of NR values, zero past n */                                 \
        for (int64_t jr = 0; jr < nc; jr += NR) {                             \
          const int64_t nr = nc - jr < NR ? nc - jr : NR;                     \
          T *d = pb + jr * kc;                                                \
          const T *s = b + pc * sb0 + (j0 + jc + jr) * sb1;                   \
          for (int64_t p = 0; p < kc; p++, d += NR, s += sb0) {               \
            int64_t q = 0;                                                    \
            if (sb1 == 1)                                                     \
              for (; q < nr; q++)                                             \
                d[q] = s[q];                                                  \
            else                                                              \
              for (; q < nr; q++)                                             \
                d[q] = s[q * sb1];                                            \
            for (; q < NR; q++)                                               \
              d[q] = (T)0;                                                    \
          }                                                                   \
        }                                                                     \
        for (int64_t ic = 0; ic < m; ic += mcb) {                             \
          const int64_t mc = m - ic < mcb ? m - ic : mcb;                     \
          /* a[ic:ic+mc, pc:pc+kc] as micro-panels of MR rows */              \
          for (int64_t ir = 0; ir < mc; ir += MR) {                           \
            const int64_t mr = mc - ir < MR ? mc - ir : MR;                   \
            T *d = pa + ir * kc;                                              \
            const T *s = a + (i0 + ic + ir) * sa0 + pc * sa1;                 \
            for (int64_t p = 0; p < kc; p++, d += MR, s += sa1) {             \
              int64_t r = 0;                                                  \
              for (; r < mr; r++)                                             \
                d[r] = s[r * sa0];                                            \
              for (; r < MR; r++)                                             \
                d[r] = (T)0;                                                  \
            }                                                                 \
          }                                                                   \
          for (int64_t jr = 0; jr < nc; jr += NR) {                           \
            const int64_t nr = nc - jr < NR ? nc - jr : NR;                   \
            for (int64_t ir = 0; ir < mc; ir += MR) {                         \
              const int64_t mr = mc - ir < MR ? mc - ir : MR;                 \
              T *ct = c + (i0 + ic + ir) * sc0 + (j0 + jc + jr) * sc1;        \
              if (mr == MR && nr == NR && sc1 == 1) {                         \
                asc_gk_uk_##S(kc, pa + ir * kc, pb + jr * kc, ct, sc0, init); \
                continue;                                                     \
              }                                                               \
              if (init)                                                       \
                for (int64_t r = 0; r < mr; r++)                              \
                  for (int64_t q = 0; q < nr; q++)                            \
                    tile[r * NR + q] = ct[r * sc0 + q * sc1];                 \
              asc_gk_uk_##S(kc, pa + ir * kc, pb + jr * kc, tile, NR, init);  \
              for (int64_t r = 0; r < mr; r++)                                \
                for (int64_t q = 0; q < nr; q++)                              \
                  ct[r * sc0 + q * sc1] = tile[r * NR + q];                   \
            }                                                                 \
          }                                                                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
    ctx->rt->release(ctx, pa);                                                \
    return 0;                                                                 \
  }
ASC_GK_DEFINE(float, f32)
ASC_GK_DEFINE(double, f64)

/* One slab of rows (or columns) per thread of the team, cut at multiples
 * of the tile, each packing what it reads. */
typedef struct asc_gk_job {
  asc_kctx *ctx;
  int dbl, rows;
  int64_t nslab, m, n, k;
  const void *a, *b;
  void *c;
  int64_t sa0, sa1, sb0, sb1, sc0, sc1;
  int accumulate;
} asc_gk_job;

static inline void asc_gk_slab(int64_t len, int64_t nslab, int64_t s,
                               int64_t q, int64_t *lo, int64_t *hi) {
  int64_t units = (len + q - 1) / q;
  *lo = units * s / nslab * q;
  *hi = units * (s + 1) / nslab * q;
  if (*lo > len)
    *lo = len;
  if (*hi > len)
    *hi = len;
}

/* Rows [i0, i1) x columns [j0, j1): packed, or the naive loop when there
 * is no scratch memory.  0, or 1 with exc set. */
static inline int asc_gk_part(const asc_gk_job *g, asc_kexc *exc,
                              int64_t i0, int64_t i1, int64_t j0,
                              int64_t j1) {
  int r;
  if (g->dbl) {
    r = asc_gk_serial_f64(g->ctx, exc, i0, i1, j0, j1, g->k, g->a, g->sa0,
                          g->sa1, g->b, g->sb0, g->sb1, g->c, g->sc0,
                          g->sc1, g->accumulate);
    if (r == 2)
      asc_gk_naive_f64(i0, i1, j0, j1, g->k, g->a, g->sa0, g->sa1, g->b,
                       g->sb0, g->sb1, g->c, g->sc0, g->sc1, g->accumulate);
  } else {
    r = asc_gk_serial_f32(g->ctx, exc, i0, i1, j0, j1, g->k, g->a, g->sa0,
                          g->sa1, g->b, g->sb0, g->sb1, g->c, g->sc0,
                          g->sc1, g->accumulate);
    if (r == 2)
      asc_gk_naive_f32(i0, i1, j0, j1, g->k, g->a, g->sa0, g->sa1, g->b,
                       g->sb0, g->sb1, g->c, g->sc0, g->sc1, g->accumulate);
  }
  return r == 1;
}

static inline int64_t asc_gk_body(void *env, int64_t lo, int64_t hi,
                                  int32_t tid, asc_kexc *exc) {
  const asc_gk_job *g = env;
  (void)tid;
  for (int64_t s = lo; s < hi; s++) {
    int64_t x0, x1;
    int r;
    if (g->rows) {
      asc_gk_slab(g->m, g->nslab, s, ASC_GK_MR, &x0, &x1);
      r = asc_gk_part(g, exc, x0, x1, 0, g->n);
    } else {
      asc_gk_slab(g->n, g->nslab, s,
                  g->dbl ? ASC_GK_NR_f64 : ASC_GK_NR_f32, &x0, &x1);
      r = asc_gk_part(g, exc, 0, g->m, x0, x1);
    }
    if (r)
      return s + 1;
  }
  return 0;
}

static inline int asc_gk_run(asc_kctx *ctx, asc_kexc *exc, int in_pfor,
                             asc_gk_job *g) {
  int32_t team;
  int64_t q;
  if (g->m <= 0 || g->n <= 0)
    return 0;
  if (g->k < 0)
    g->k = 0;
  /* c's elements must be distinct for any order but the naive one */
  if (!asc_gk_distinct(g->m, g->n, g->sc0, g->sc1) ||
      (g->m <= ASC_GK_TINY && g->n <= ASC_GK_TINY && g->k <= ASC_GK_TINY &&
       g->m * g->n * g->k <= ASC_GK_TINY)) {
    if (g->dbl)
      asc_gk_naive_f64(0, g->m, 0, g->n, g->k, g->a, g->sa0, g->sa1, g->b,
                       g->sb0, g->sb1, g->c, g->sc0, g->sc1, g->accumulate);
    else
      asc_gk_naive_f32(0, g->m, 0, g->n, g->k, g->a, g->sa0, g->sa1, g->b,
                       g->sb0, g->sb1, g->c, g->sc0, g->sc1, g->accumulate);
    return 0;
  }
  g->ctx = ctx;
  g->rows = g->m >= g->n;
  g->nslab = 1;
  team = in_pfor ? 1 : ctx->rt->team_size(ctx);
  q = g->rows ? ASC_GK_MR : g->dbl ? ASC_GK_NR_f64 : ASC_GK_NR_f32;
  if (team > 1 && g->m * g->n > ASC_GK_PARALLEL_MIN / (g->k > 0 ? g->k : 1)) {
    int64_t units = ((g->rows ? g->m : g->n) + q - 1) / q;
    g->nslab = units < team ? units : team;
  }
  if (g->nslab <= 1)
    return asc_gk_part(g, exc, 0, g->m, 0, g->n);
  return ctx->rt->parallel_for(ctx, g->nslab, 1, asc_gk_body, g, exc) != 0;
}

/* c[i*sc0 + j*sc1] for 0 <= i < m, 0 <= j < n:
 *   acc = accumulate ? c[i,j] : 0 (positive zero);
 *   for p = 0 .. k-1: acc = acc + a[i*sa0 + p*sa1] * b[p*sb0 + j*sb1];
 *   c[i,j] = acc
 * rows split over the launching block's team with ctx->rt->parallel_for when
 * called outside a parallel-loop body (in_pfor == 0), serially in the
 * calling thread when in_pfor != 0. Returns 0, or nonzero when the team
 * raised (exc is then set; e.g. the launch was cancelled). Strides in
 * elements, any sign; c must not overlap a or b (the caller guarantees). */
__attribute__((unused)) static int asc_gemm_exact_f32(
    asc_kctx *ctx, asc_kexc *exc, int in_pfor, int64_t m, int64_t n,
    int64_t k, const float *a, int64_t sa0, int64_t sa1, const float *b,
    int64_t sb0, int64_t sb1, float *c, int64_t sc0, int64_t sc1,
    int accumulate) {
  asc_gk_job g = {NULL, 0, 0, 0, m, n, k, a, b, c,
                  sa0, sa1, sb0, sb1, sc0, sc1, accumulate};
  return asc_gk_run(ctx, exc, in_pfor, &g);
}
__attribute__((unused)) static int asc_gemm_exact_f64(
    asc_kctx *ctx, asc_kexc *exc, int in_pfor, int64_t m, int64_t n,
    int64_t k, const double *a, int64_t sa0, int64_t sa1, const double *b,
    int64_t sb0, int64_t sb1, double *c, int64_t sc0, int64_t sc1,
    int accumulate) {
  asc_gk_job g = {NULL, 1, 0, 0, m, n, k, a, b, c,
                  sa0, sa1, sb0, sb1, sc0, sc1, accumulate};
  return asc_gk_run(ctx, exc, in_pfor, &g);
}
#endif /* ASC_GEMM_KERNEL_H */
#endif /* ASC_NEED_GEMM_EXACT */
