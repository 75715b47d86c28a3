/*
 * asc_krt.gemm: matrix products of kernels on a BLAS found at run time.
 *
 * libasc does not link a BLAS.  The first product has jit/blas.c dlopen()
 * one (the serial OpenBLAS of Debian's libopenblas0-serial first;
 * ASC_BLAS_LIB names another) with cblas_sgemm/dgemm/sgemv/dgemv.  When
 * none loads, or ASC_BLAS=0, gemm returns nonzero and the generated code
 * runs its own loops, so kernels run the same with or without the
 * library.  gemm_ab adds BLAS's alpha and beta (c = alpha * a @ b +
 * beta * c), so that `alpha * A @ B + beta * C` stored into C is one call.
 *
 * No oversubscription: the library runs single-threaded
 * (openblas_set_num_threads(1) / bli_thread_set_num_threads(1) on a
 * threaded build, which jit/blas.c prefers), and the product is split
 * into one slab of rows
 * (or columns) per thread of the launching block's team, each slab one
 * serial BLAS call, through parallel_for.  Inside a parallel loop's body
 * parallel_for runs on the calling thread alone, so a product per
 * iteration is one serial call per iteration.  docs/decisions.md.
 */
#define _GNU_SOURCE
#include "runtime/blas.h"
#include "runtime/scheduler.h"
#include "jit/driver.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "asc/asc.h"

/* CBLAS's enums (cblas.h); the values are fixed by the standard. */
enum { CBLAS_ROW_MAJOR = 101 };
enum { CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
enum { CBLAS_LOWER = 122 };

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double,
                         const double *, int, const double *, int, double,
                         double *, int);
typedef void (*ssyrk_fn)(int, int, int, int, int, float, const float *, int,
                         float, float *, int);
typedef void (*dsyrk_fn)(int, int, int, int, int, double, const double *,
                         int, double, double *, int);
typedef void (*sgemv_fn)(int, int, int, int, float, const float *, int,
                         const float *, int, float, float *, int);
typedef void (*dgemv_fn)(int, int, int, int, double, const double *, int,
                         const double *, int, double, double *, int);

/* The library's functions, typed (jit/blas.c loads them). */
static struct {
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  sgemv_fn sgemv;
  dgemv_fn dgemv;
  ssyrk_fn ssyrk;   /* NULL when the library lacks them */
  dsyrk_fn dsyrk;
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static bool lib_ok;
/* A sequential OpenBLAS is not safe to call from two threads at once
 * (asc__blas.one_at_a_time): its calls take this lock, and a product is
 * not split into slabs. */
static bool one_at_a_time;
static pthread_mutex_t one_lock = PTHREAD_MUTEX_INITIALIZER;

/* lapack.c's calls into the same sequential library take the same lock. */
void asc__blas_one_lock(bool take) {
  if (take)
    pthread_mutex_lock(&one_lock);
  else
    pthread_mutex_unlock(&one_lock);
}

static void bind_lib(void) {
  const asc__blas *b = asc__jit_blas();
  if (b == NULL)
    return;
  lib.sgemm = (sgemm_fn)b->sgemm;
  lib.dgemm = (dgemm_fn)b->dgemm;
  lib.sgemv = (sgemv_fn)b->sgemv;
  lib.dgemv = (dgemv_fn)b->dgemv;
  lib.ssyrk = (ssyrk_fn)b->ssyrk;
  lib.dsyrk = (dsyrk_fn)b->dsyrk;
  one_at_a_time = b->one_at_a_time != 0;
  lib_ok = true;
}

const char *asc__blas_library(void) {
  const asc__blas *b = asc__jit_blas();
  return b != NULL ? b->name : NULL;
}

static bool enabled(void) {
  const char *v = getenv("ASC_BLAS");
  if (v != NULL && (strcmp(v, "0") == 0 || strcmp(v, "off") == 0))
    return false;
  pthread_once(&lib_once, bind_lib);
  return lib_ok;
}

/* How BLAS reads a rows x cols operand with strides s0, s1 (elements):
 * row-major as is (trans 0) or as the transpose of a row-major matrix
 * (trans 1), with leading dimension *ld.  False: neither (a negative or
 * overlapping stride, a leading dimension past int); the caller copies. */
static bool layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1,
                   int *trans, int64_t *ld) {
  if ((s1 == 1 || cols <= 1) && (rows <= 1 || s0 >= (cols > 1 ? cols : 1))) {
    *trans = 0;
    *ld = rows <= 1 ? (cols > 1 ? cols : 1) : s0;
  } else if ((s0 == 1 || rows <= 1) &&
             (cols <= 1 || s1 >= (rows > 1 ? rows : 1))) {
    *trans = 1;
    *ld = cols <= 1 ? (rows > 1 ? rows : 1) : s1;
  } else {
    return false;
  }
  return *ld <= INT32_MAX;
}

/* A C-order copy of a strided rows x cols operand. */
static void *pack(asc_kctx *ctx, int32_t dt, const void *x, int64_t rows,
                  int64_t cols, int64_t s0, int64_t s1) {
  size_t es = dt == ascFloat32 ? 4 : 8;
  uint64_t nb;
  char *p;
  if (__builtin_mul_overflow((uint64_t)rows, (uint64_t)cols, &nb) ||
      __builtin_mul_overflow(nb, (uint64_t)es, &nb))
    return NULL;
  p = ctx->rt->alloc(ctx, nb);
  if (p == NULL)
    return NULL;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      if (dt == ascFloat32)
        ((float *)p)[i * cols + j] = ((const float *)x)[i * s0 + j * s1];
      else
        ((double *)p)[i * cols + j] = ((const double *)x)[i * s0 + j * s1];
    }
  return p;
}

typedef struct job {
  int32_t dt;
  double alpha, beta;
  int64_t m, n, k;
  const char *a, *b;
  char *c;
  int ta, tb;
  int64_t lda, ldb, ldc;
  int64_t sa_row, sb_col;   /* element steps of a's row i, b's column j */
  bool rows;                /* slabs of rows of c (else of columns) */
  bool sym;                 /* b is a's transpose: c = a @ a.T (syrk) */
  bool skinny;              /* few rows of c, b large: skinny() streams b */
  bool dotrows;             /* a matrix times a vector: dotrows() */
  int64_t nslab;
  size_t es;
} job;

static void call(const job *g, int64_t r0, int64_t r1, int64_t c0,
                 int64_t c1);
static void run_blas(const job *g, int64_t r0, int64_t r1, int64_t c0,
                     int64_t c1);

/* The widest of this file's vector loops the CPU runs: the AVX-512
 * ones, the AVX2 + FMA ones, or the plain C ones. */
enum { ISA_ANY, ISA_AVX2, ISA_AVX512 };

static inline int vector_isa(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx512f"))
    return ISA_AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return ISA_AVX2;
#endif
  return ISA_ANY;
}

/* ----------------------------------------------- a product of few rows */

/* c = alpha * a @ b + beta * c where c has a few rows (a batch of eight
 * inputs through a layer's weights, NPBench's mlp) and b is large: the
 * product reads each element of b once and does a few multiply-adds with
 * it, so its speed is the speed b streams from memory.  A BLAS packs b
 * into panels first (a (8, 30000) @ (30000, 10000) float32 sgemm, the
 * column halves on two threads, moved 12 GB/s where the machine's STREAM
 * triad moves 26).  Here b's rows are read eight at a time, each one
 * contiguous stream across the slab's columns, and each row of c takes
 * the eight into its running sums in one pass of fused multiply-adds;
 * c's block (at most SKINNY_BLOCK bytes) stays in L2.  Each element of
 * c sums SKINNY_KB products at a time in order, one rounding per
 * multiply-add, and adds those sums in order (the BLAS's kind of order;
 * the same on any number of threads). */
enum { SKINNY_ROW_BYTES = 32, SKINNY_KU = 8, SKINNY_JT = 64, SKINNY_KB = 256 };
#define SKINNY_BLOCK ((int64_t)128 << 10)
#define SKINNY_MIN_BYTES ((int64_t)16 << 20)

#define SKINNY(T, NAME, ATTR)                                                \
  ATTR static void NAME(const job *g, void *tv, int64_t nb, int64_t r0,      \
                        int64_t r1, int64_t c0, int64_t c1) {                \
    T *restrict t = tv;                                                      \
    int64_t m = r1 - r0, kn = g->k, ldb = g->ldb, ldc = g->ldc;              \
    int64_t si = g->ta ? 1 : g->lda, sk = g->ta ? g->lda : 1;                \
    const T *a = (const T *)g->a + r0 * si, *b = (const T *)g->b;            \
    T *c = (T *)g->c + r0 * ldc, alpha = (T)g->alpha, beta = (T)g->beta;     \
    for (int64_t j0 = c0; j0 < c1; j0 += nb) {                               \
      int64_t j1 = c1 - j0 < nb ? c1 : j0 + nb, w = j1 - j0;                 \
      for (int64_t k0 = 0; k0 < kn; k0 += SKINNY_KB) {                       \
        int64_t k1 = kn - k0 < SKINNY_KB ? kn : k0 + SKINNY_KB, kk = k0;     \
        memset(t, 0, (size_t)(m * w) * sizeof(T));                           \
        for (; kk + SKINNY_KU <= k1; kk += SKINNY_KU) {                      \
          const T *restrict b0 = b + kk * ldb + j0, *restrict b1 = b0 + ldb; \
          const T *restrict b2 = b1 + ldb, *restrict b3 = b2 + ldb;          \
          const T *restrict b4 = b3 + ldb, *restrict b5 = b4 + ldb;          \
          const T *restrict b6 = b5 + ldb, *restrict b7 = b6 + ldb;          \
          for (int64_t jt = 0; jt < w; jt += SKINNY_JT) {                    \
            int64_t je = w - jt < SKINNY_JT ? w : jt + SKINNY_JT;            \
            for (int64_t i = 0; i < m; i++) {                                \
              const T *ai = a + i * si + kk * sk;                            \
              T x0 = ai[0], x1 = ai[sk], x2 = ai[2 * sk], x3 = ai[3 * sk];   \
              T x4 = ai[4 * sk], x5 = ai[5 * sk], x6 = ai[6 * sk];           \
              T x7 = ai[7 * sk], *restrict ti = t + i * w;                   \
              for (int64_t j = jt; j < je; j++)                              \
                ti[j] = ti[j] + x0 * b0[j] + x1 * b1[j] + x2 * b2[j] +       \
                        x3 * b3[j] + x4 * b4[j] + x5 * b5[j] + x6 * b6[j] +  \
                        x7 * b7[j];                                          \
            }                                                                \
          }                                                                  \
        }                                                                    \
        for (; kk < k1; kk++) {                                              \
          const T *restrict bk = b + kk * ldb + j0;                          \
          for (int64_t i = 0; i < m; i++) {                                  \
            T x = a[i * si + kk * sk], *restrict ti = t + i * w;             \
            for (int64_t j = 0; j < w; j++)                                  \
              ti[j] = ti[j] + x * bk[j];                                     \
          }                                                                  \
        }                                                                    \
        for (int64_t i = 0; i < m; i++) {                                    \
          T *restrict ci = c + i * ldc + j0, *restrict ti = t + i * w;       \
          if (k0 > 0)                                                        \
            for (int64_t j = 0; j < w; j++)                                  \
              ci[j] = ci[j] + alpha * ti[j];                                 \
          else if (beta == 0)                                                \
            for (int64_t j = 0; j < w; j++)                                  \
              ci[j] = alpha * ti[j];                                         \
          else                                                               \
            for (int64_t j = 0; j < w; j++)                                  \
              ci[j] = beta * ci[j] + alpha * ti[j];                          \
        }                                                                    \
      }                                                                      \
    }                                                                        \
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SKINNY_AVX 1
SKINNY(float, skinny_f_avx512, __attribute__((target("avx512f,fma"))))
SKINNY(double, skinny_d_avx512, __attribute__((target("avx512f,fma"))))
SKINNY(float, skinny_f_avx2, __attribute__((target("avx2,fma"))))
SKINNY(double, skinny_d_avx2, __attribute__((target("avx2,fma"))))
#endif
SKINNY(float, skinny_f_any, )
SKINNY(double, skinny_d_any, )

static void skinny(const job *g, int64_t r0, int64_t r1, int64_t c0,
                   int64_t c1) {
  bool f = g->dt == ascFloat32;
  int64_t m = r1 - r0, nb = SKINNY_BLOCK / (m * (int64_t)g->es);
  void *t;
  if (m <= 0 || c1 <= c0)
    return;
  nb = nb < SKINNY_JT ? SKINNY_JT : nb / SKINNY_JT * SKINNY_JT;
  if (nb > c1 - c0)
    nb = c1 - c0;
  t = aligned_alloc(64, ((size_t)(m * nb) * g->es + 63) / 64 * 64);
  if (t == NULL) {
    /* no room for the block's sums: the BLAS, which needs none */
    run_blas(g, r0, r1, c0, c1);
    return;
  }
#ifdef SKINNY_AVX
  int isa = vector_isa();
  if (isa == ISA_AVX512)
    (f ? skinny_f_avx512 : skinny_d_avx512)(g, t, nb, r0, r1, c0, c1);
  else if (isa == ISA_AVX2)
    (f ? skinny_f_avx2 : skinny_d_avx2)(g, t, nb, r0, r1, c0, c1);
  else
#endif
    (f ? skinny_f_any : skinny_d_any)(g, t, nb, r0, r1, c0, c1);
  free(t);
}

/* ------------------------------------------ a matrix times a vector */

/* y[i * incy] = alpha * (row i of m) . v + beta * y[i * incy] for the
 * rows i < rows of m (k contiguous elements each, ldm apart) and a
 * contiguous v: the product a @ x of a C-order a, or x @ b.T.  The
 * product reads each element of m once, so its speed is the speed m
 * streams from memory: four rows at a time share each load of v, and
 * each row sums in DOTROWS_LANES lanes (one vector register of float64
 * under AVX-512, two under AVX2, the same lanes and order everywhere),
 * folded pairwise, then the tail past the last whole group of lanes.
 * (3000 x 3000 float64 on two threads of the 2-core EPYC: 2.43-2.56 ms
 * against 2.78-2.94 for Debian's OpenBLAS dgemv.) */
enum { DOTROWS_LANES = 8 };

/* GCC's vector extension: eight lanes, whatever registers hold them */
typedef double dotrows_vd __attribute__((vector_size(8 * sizeof(double))));
typedef float dotrows_vf __attribute__((vector_size(8 * sizeof(float))));

#define DOTROWS_LD(V, p)                                                     \
  __extension__({                                                            \
    V x_;                                                                    \
    memcpy(&x_, (p), sizeof x_);                                             \
    x_;                                                                      \
  })
#define DOTROWS_FOLD(s)                                                      \
  (((s)[0] + (s)[1]) + ((s)[2] + (s)[3])) +                                  \
      (((s)[4] + (s)[5]) + ((s)[6] + (s)[7]))
#define DOTROWS(T, V, NAME, ATTR)                                            \
  ATTR static void NAME(int64_t rows, int64_t k, T alpha, const T *m,       \
                        int64_t ldm, const T *v, T beta, T *y,               \
                        int64_t incy) {                                      \
    enum { L = DOTROWS_LANES };                                              \
    int64_t kl = k / L * L, i = 0;                                           \
    T r[4];                                                                  \
    for (; i < rows; i += 4) {                                               \
      int64_t nr = rows - i < 4 ? rows - i : 4;                              \
      const T *m0 = m + i * ldm;                                             \
      if (nr == 4) {                                                         \
        const T *m1 = m0 + ldm, *m2 = m1 + ldm, *m3 = m2 + ldm;              \
        V s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};                            \
        for (int64_t j = 0; j < kl; j += L) {                                \
          V x = DOTROWS_LD(V, v + j);                                        \
          s0 += DOTROWS_LD(V, m0 + j) * x;                                   \
          s1 += DOTROWS_LD(V, m1 + j) * x;                                   \
          s2 += DOTROWS_LD(V, m2 + j) * x;                                   \
          s3 += DOTROWS_LD(V, m3 + j) * x;                                   \
        }                                                                    \
        r[0] = DOTROWS_FOLD(s0);                                             \
        r[1] = DOTROWS_FOLD(s1);                                             \
        r[2] = DOTROWS_FOLD(s2);                                             \
        r[3] = DOTROWS_FOLD(s3);                                             \
      } else {                                                               \
        /* the last rows one at a time, in the same lanes */                 \
        for (int64_t q = 0; q < nr; q++) {                                   \
          const T *mq = m0 + q * ldm;                                        \
          V s = {0};                                                         \
          for (int64_t j = 0; j < kl; j += L)                                \
            s += DOTROWS_LD(V, mq + j) * DOTROWS_LD(V, v + j);               \
          r[q] = DOTROWS_FOLD(s);                                            \
        }                                                                    \
      }                                                                      \
      for (int64_t q = 0; q < nr; q++) {                                     \
        const T *mq = m0 + q * ldm;                                          \
        T t = r[q], *yq = y + (i + q) * incy;                                \
        for (int64_t j = kl; j < k; j++)                                     \
          t += mq[j] * v[j];                                                 \
        *yq = beta == 0 ? alpha * t : alpha * t + beta * *yq;                \
      }                                                                      \
    }                                                                        \
  }
_Static_assert(DOTROWS_LANES == 8, "DOTROWS folds eight lanes");
#ifdef SKINNY_AVX
DOTROWS(float, dotrows_vf, dotrows_f_avx512,
        __attribute__((target("avx512f,fma"))))
DOTROWS(double, dotrows_vd, dotrows_d_avx512,
        __attribute__((target("avx512f,fma"))))
DOTROWS(float, dotrows_vf, dotrows_f_avx2, __attribute__((target("avx2,fma"))))
DOTROWS(double, dotrows_vd, dotrows_d_avx2, __attribute__((target("avx2,fma"))))
#endif
DOTROWS(float, dotrows_vf, dotrows_f_any, )
DOTROWS(double, dotrows_vd, dotrows_d_any, )

static void dotrows(const job *g, int64_t rows, const void *m, int64_t ldm,
                    const void *v, void *y, int64_t incy) {
  const float *mf = m, *vf = v;
  const double *md = m, *vd = v;
  float af = (float)g->alpha, bf = (float)g->beta;
  double ad = g->alpha, bd = g->beta;
  bool f = g->dt == ascFloat32;
#ifdef SKINNY_AVX
  int isa = vector_isa();
  if (isa == ISA_AVX512) {
    if (f)
      dotrows_f_avx512(rows, g->k, af, mf, ldm, vf, bf, y, incy);
    else
      dotrows_d_avx512(rows, g->k, ad, md, ldm, vd, bd, y, incy);
    return;
  }
  if (isa == ISA_AVX2) {
    if (f)
      dotrows_f_avx2(rows, g->k, af, mf, ldm, vf, bf, y, incy);
    else
      dotrows_d_avx2(rows, g->k, ad, md, ldm, vd, bd, y, incy);
    return;
  }
#endif
  if (f)
    dotrows_f_any(rows, g->k, af, mf, ldm, vf, bf, y, incy);
  else
    dotrows_d_any(rows, g->k, ad, md, ldm, vd, bd, y, incy);
}

/* Does c = a @ b go to dotrows()?  A column c = a @ x with a's rows
 * and x contiguous, or a row c = x @ b.T with x and b.T's rows
 * contiguous. */
static bool dotrows_fits(const job *g) {
  return (g->n == 1 && !g->ta && (g->tb || g->ldb == 1)) ||
         (g->m == 1 && g->n > 1 && g->tb && (!g->ta || g->k <= 1));
}

/* c[r0:r1, c0:c1] of a product dotrows_fits() took. */
static void dotrows_part(const job *g, int64_t r0, int64_t r1, int64_t c0,
                         int64_t c1) {
  if (g->n == 1)
    dotrows(g, r1 - r0, g->a + (size_t)(r0 * g->sa_row) * g->es, g->lda,
            g->b, g->c + (size_t)(r0 * g->ldc) * g->es, g->ldc);
  else
    dotrows(g, c1 - c0, g->b + (size_t)(c0 * g->sb_col) * g->es, g->ldb,
            g->a, g->c + (size_t)c0 * g->es, 1);
}

/* c[r0:r1, c0:c1]: skinny(), dotrows() or one serial BLAS call. */
static void run(const job *g, int64_t r0, int64_t r1, int64_t c0,
                int64_t c1) {
  if (g->skinny)
    skinny(g, r0, r1, c0, c1);
  else if (g->dotrows)
    dotrows_part(g, r0, r1, c0, c1);
  else
    run_blas(g, r0, r1, c0, c1);
}

/* Does c = a @ b go to skinny()?  c of 2 rows or more, a column of c
 * at most SKINNY_ROW_BYTES (8 float32 or 4 float64 rows), b's rows
 * contiguous, and b past SKINNY_MIN_BYTES (a b that stays in the caches
 * goes to the BLAS, whose blocked product is faster there).  Each
 * element of b takes one multiply-add per row of c, from the L1 cache:
 * past 32 bytes of rows the loop, not the memory, set its speed (a
 * (16, 8000) @ (8000, 6000) float64 product took 48-56 ms here, numpy's
 * BLAS 26-32; 8 rows, 28-33 against 24-29; 4 rows, 19-21 against 24-27). */
static bool skinny_fits(const job *g) {
  return g->m >= 2 && g->m * (int64_t)g->es <= SKINNY_ROW_BYTES &&
         !g->tb && !g->sym &&
         g->k >= SKINNY_KU &&
         g->k * g->n * (int64_t)g->es >= SKINNY_MIN_BYTES;
}

/* One serial BLAS call on c[r0:r1, c0:c1]. */
static void run_blas(const job *g, int64_t r0, int64_t r1, int64_t c0,
                     int64_t c1) {
  if (!one_at_a_time) {
    call(g, r0, r1, c0, c1);
    return;
  }
  pthread_mutex_lock(&one_lock);
  call(g, r0, r1, c0, c1);
  pthread_mutex_unlock(&one_lock);
}

static void call(const job *g, int64_t r0, int64_t r1, int64_t c0,
                 int64_t c1) {
  int m = (int)(r1 - r0), n = (int)(c1 - c0), k = (int)g->k;
  const char *a = g->a + (size_t)(r0 * g->sa_row) * g->es;
  const char *b = g->b + (size_t)(c0 * g->sb_col) * g->es;
  char *c = g->c + (size_t)(r0 * g->ldc + c0) * g->es;
  int ta = g->ta ? CBLAS_TRANS : CBLAS_NO_TRANS;
  int tb = g->tb ? CBLAS_TRANS : CBLAS_NO_TRANS;
  if (m == 0 || n == 0)
    return;
  if (n == 1) {
    /* c[:, j] = a @ b[:, j]: a gemv over a (m x k), b's column strided */
    int incb = (int)(g->tb ? 1 : g->ldb);
    int incc = (int)g->ldc;
    if (g->dt == ascFloat32)
      lib.sgemv(CBLAS_ROW_MAJOR, ta, g->ta ? k : m, g->ta ? m : k,
                (float)g->alpha, (const float *)a, (int)g->lda,
                (const float *)b, incb, (float)g->beta, (float *)c, incc);
    else
      lib.dgemv(CBLAS_ROW_MAJOR, ta, g->ta ? k : m, g->ta ? m : k, g->alpha,
                (const double *)a, (int)g->lda, (const double *)b, incb,
                g->beta, (double *)c, incc);
    return;
  }
  if (m == 1) {
    /* c[i, :] = b^T @ a[i, :]: a gemv over b (k x n) transposed */
    int inca = (int)(g->ta ? g->lda : 1);
    int tbt = g->tb ? CBLAS_NO_TRANS : CBLAS_TRANS;
    if (g->dt == ascFloat32)
      lib.sgemv(CBLAS_ROW_MAJOR, tbt, g->tb ? n : k, g->tb ? k : n,
                (float)g->alpha, (const float *)b, (int)g->ldb,
                (const float *)a, inca, (float)g->beta, (float *)c, 1);
    else
      lib.dgemv(CBLAS_ROW_MAJOR, tbt, g->tb ? n : k, g->tb ? k : n, g->alpha,
                (const double *)b, (int)g->ldb, (const double *)a, inca,
                g->beta, (double *)c, 1);
    return;
  }
  if (g->dt == ascFloat32)
    lib.sgemm(CBLAS_ROW_MAJOR, ta, tb, m, n, k, (float)g->alpha,
              (const float *)a, (int)g->lda, (const float *)b, (int)g->ldb,
              (float)g->beta, (float *)c, (int)g->ldc);
  else
    lib.dgemm(CBLAS_ROW_MAJOR, ta, tb, m, n, k, g->alpha, (const double *)a,
              (int)g->lda, (const double *)b, (int)g->ldb, g->beta,
              (double *)c, (int)g->ldc);
}

/* Slab s of nslab: [lo, hi) of len, the cuts at multiples of 16 where
 * the slabs are long enough (whole register blocks per slab). */
static void slab(int64_t len, int64_t nslab, int64_t s, int64_t *lo,
                 int64_t *hi) {
  int64_t q = len >= 16 * nslab ? 16 : 1;
  int64_t units = (len + q - 1) / q;
  *lo = units * s / nslab * q;
  *hi = units * (s + 1) / nslab * q;
  if (*lo > len)
    *lo = len;
  if (*hi > len)
    *hi = len;
}

/* c = alpha * a @ a.T is symmetric: numpy computes one triangle (syrk)
 * and copies it to the other, half the multiply-adds of a gemm, and so
 * do we.  Slab [x0, x1) of c's rows is the product of its rows left of
 * the diagonal block (a gemm), the diagonal block's lower triangle (a
 * syrk), then the mirror of both into the upper triangle: columns
 * [x0, x1) of rows [0, x1), which no other slab reads or writes. */
static void sym_slab(const job *g, int64_t x0, int64_t x1) {
  enum { T = 32 };
  int nb = (int)(x1 - x0), k = (int)g->k;
  const char *a = g->a + (size_t)(x0 * g->sa_row) * g->es;
  char *c = g->c + (size_t)(x0 * g->ldc + x0) * g->es;
  int tr = g->ta ? CBLAS_TRANS : CBLAS_NO_TRANS;
  if (nb <= 0)
    return;
  if (x0 > 0)
    run(g, x0, x1, 0, x0);
  if (one_at_a_time)
    pthread_mutex_lock(&one_lock);
  if (g->dt == ascFloat32)
    lib.ssyrk(CBLAS_ROW_MAJOR, CBLAS_LOWER, tr, nb, k, (float)g->alpha,
              (const float *)a, (int)g->lda, 0.0f, (float *)c, (int)g->ldc);
  else
    lib.dsyrk(CBLAS_ROW_MAJOR, CBLAS_LOWER, tr, nb, k, g->alpha,
              (const double *)a, (int)g->lda, 0.0, (double *)c, (int)g->ldc);
  if (one_at_a_time)
    pthread_mutex_unlock(&one_lock);
  /* in tiles, so that the column writes reuse their cache lines */
  for (int64_t i0 = x0; i0 < x1; i0 += T) {
    int64_t i1 = i0 + T < x1 ? i0 + T : x1;
    for (int64_t j0 = 0; j0 < i1; j0 += T)
      for (int64_t i = i0; i < i1; i++)
        for (int64_t j = j0; j < j0 + T && j < i; j++) {
          if (g->dt == ascFloat32) {
            float *f = (float *)g->c;
            f[j * g->ldc + i] = f[i * g->ldc + j];
          } else {
            double *d = (double *)g->c;
            d[j * g->ldc + i] = d[i * g->ldc + j];
          }
        }
  }
}

/* The rows of sym slab s of nslab: slab s ends at len * sqrt((s+1) /
 * nslab), so that each holds about the same share of the triangle; at
 * multiples of 16 where the slabs are long enough. */
static void sym_cut(int64_t len, int64_t nslab, int64_t s, int64_t *lo,
                    int64_t *hi) {
  int64_t q = len >= 16 * nslab ? 16 : 1, cut[2];
  for (int e = 0; e < 2; e++) {
    double f = sqrt((double)(s + e) / (double)nslab) * (double)len;
    int64_t x = (int64_t)(f / (double)q + 0.5) * q;
    cut[e] = s + e == nslab || x > len ? len : x;
  }
  *lo = cut[0];
  *hi = cut[1];
}

static int64_t body(void *env, int64_t lo, int64_t hi, int32_t tid,
                    asc_kexc *exc) {
  const job *g = env;
  (void)tid;
  (void)exc;
  for (int64_t s = lo; s < hi; s++) {
    int64_t x0, x1;
    if (g->sym) {
      sym_cut(g->m, g->nslab, s, &x0, &x1);
      sym_slab(g, x0, x1);
    } else if (g->rows) {
      slab(g->m, g->nslab, s, &x0, &x1);
      run(g, x0, x1, 0, g->n);
    } else {
      slab(g->n, g->nslab, s, &x0, &x1);
      run(g, 0, g->m, x0, x1);
    }
  }
  return 0;
}

/* Below this many multiply-adds one thread does the product: a slab
 * per thread costs a parallel loop's start (microseconds).  A
 * matrix-vector product reads each element of the matrix once, bound by
 * memory, and gains from the second thread sooner: a 500x500 float64
 * gemv took 0.048 ms on one thread and 0.021 ms on two (numpy 0.041),
 * where a 48x48x48 gemm took 0.0086 ms on two, more than on one. */
#define PARALLEL_MIN_FMA ((int64_t)1 << 18)
#define GEMV_PARALLEL_MIN_FMA ((int64_t)1 << 16)

/* A dot product (m = n = 1, np.dot of two vectors; the compiler calls
 * for 1,024 elements and more): from DOT_PARALLEL_MIN each thread of the
 * team takes a slab of at least DOT_SLAB_MIN elements, and the slabs'
 * sums are added in order. */
#define DOT_PARALLEL_MIN ((int64_t)1 << 16)
#define DOT_SLAB_MIN ((int64_t)1 << 15)
#define DOT_MAX_SLABS 64

typedef struct dotjob {
  const job *g;
  int64_t nslab;
  double part[DOT_MAX_SLABS];
} dotjob;

static int64_t dot_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                        asc_kexc *exc) {
  dotjob *d = env;
  const job *g = d->g;
  (void)tid;
  (void)exc;
  for (int64_t s = lo; s < hi; s++) {
    job gs = *g;
    float f = 0.0f;
    int64_t x0, x1;
    slab(g->k, d->nslab, s, &x0, &x1);
    gs.k = x1 - x0;
    gs.alpha = 1.0;
    gs.beta = 0.0;
    /* a is 1 x k: along k a step of 1 (as is) or lda (transposed);
     * b is k x 1: ldb (as is) or 1 */
    gs.a = g->a + (size_t)(x0 * (g->ta ? g->lda : 1)) * g->es;
    gs.b = g->b + (size_t)(x0 * (g->tb ? 1 : g->ldb)) * g->es;
    gs.c = g->dt == ascFloat32 ? (char *)&f : (char *)&d->part[s];
    if (gs.k > 0)
      run(&gs, 0, 1, 0, 1);
    if (g->dt == ascFloat32)
      d->part[s] = f;
  }
  return 0;
}

/* c = alpha * (the slabs' dot products, added in order) + beta * c. */
static int dot_parallel(asc_kctx *ctx, const job *g, int32_t team) {
  dotjob d;
  asc_kexc exc;
  double sum = 0.0;
  float sumf = 0.0f;
  int64_t n = g->k / DOT_SLAB_MIN;
  d.g = g;
  d.nslab = n < team ? n : team;
  if (d.nslab > DOT_MAX_SLABS)
    d.nslab = DOT_MAX_SLABS;
  if (ctx->rt->parallel_for(ctx, d.nslab, 1, dot_body, &d, &exc) != 0)
    return 1;
  for (int64_t s = 0; s < d.nslab; s++) {
    sum += d.part[s];
    sumf += (float)d.part[s];
  }
  if (g->dt == ascFloat32) {
    float *c = (float *)g->c;
    *c = (float)g->alpha * sumf + (g->beta != 0.0 ? (float)g->beta * *c : 0.0f);
  } else {
    double *c = (double *)g->c;
    *c = g->alpha * sum + (g->beta != 0.0 ? g->beta * *c : 0.0);
  }
  return 0;
}

/* The bytes [*lo, *hi) that a rows x cols operand at x with strides s0,
 * s1 (elements of es bytes) spans; false when it has no element. */
static bool span(const void *x, int64_t rows, int64_t cols, int64_t s0,
                 int64_t s1, size_t es, uintptr_t *lo, uintptr_t *hi) {
  int64_t a = 0, b = 0;
  if (rows <= 0 || cols <= 0)
    return false;
  if (s0 < 0)
    a += (rows - 1) * s0;
  else
    b += (rows - 1) * s0;
  if (s1 < 0)
    a += (cols - 1) * s1;
  else
    b += (cols - 1) * s1;
  *lo = (uintptr_t)x + (uintptr_t)(a * (int64_t)es);
  *hi = (uintptr_t)x + (uintptr_t)((b + 1) * (int64_t)es);
  return true;
}

/* May c's elements share memory with x's? */
static bool may_overlap(const void *c, int64_t m, int64_t n, int64_t sc0,
                        int64_t sc1, const void *x, int64_t rows,
                        int64_t cols, int64_t s0, int64_t s1, size_t es) {
  uintptr_t cl, ch, xl, xh;
  if (!span(c, m, n, sc0, sc1, es, &cl, &ch) ||
      !span(x, rows, cols, s0, s1, es, &xl, &xh))
    return false;
  return cl < xh && xl < ch;
}

int asc__krt_gemm(asc_kctx *ctx, int32_t dt, int64_t m, int64_t n, int64_t k,
                  const void *a, int64_t sa0, int64_t sa1, const void *b,
                  int64_t sb0, int64_t sb1, void *c, int64_t sc0,
                  int64_t sc1) {
  return asc__krt_gemm_ab(ctx, dt, m, n, k, 1.0, a, sa0, sa1, b, sb0, sb1,
                          0.0, c, sc0, sc1);
}

int asc__krt_gemm_ab(asc_kctx *ctx, int32_t dt, int64_t m, int64_t n,
                     int64_t k, double alpha, const void *a, int64_t sa0,
                     int64_t sa1, const void *b, int64_t sb0, int64_t sb1,
                     double beta, void *c, int64_t sc0, int64_t sc1) {
  job g;
  void *pa = NULL, *pb = NULL;
  int32_t team;
  int r = 0;

  if ((dt != ascFloat32 && dt != ascFloat64) || m < 0 || n < 0 || k < 0 ||
      m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || !enabled())
    return 1;
  if (m == 0 || n == 0)
    return 0;
  /* c: rows of n contiguous elements (the arrays kernels make) */
  if (!((sc1 == 1 || n <= 1) && (m <= 1 || sc0 >= (n > 1 ? n : 1))))
    return 1;
  memset(&g, 0, sizeof g);
  g.dt = dt;
  g.es = dt == ascFloat32 ? 4 : 8;
  if (may_overlap(c, m, n, sc0, sc1, a, m, k, sa0, sa1, g.es) ||
      may_overlap(c, m, n, sc0, sc1, b, k, n, sb0, sb1, g.es))
    return 1;
  g.alpha = alpha;
  g.beta = beta;
  g.m = m;
  g.n = n;
  g.k = k;
  g.ldc = m <= 1 ? (n > 1 ? n : 1) : sc0;
  if (n <= 1 && m > 1) {
    /* a column: gemv writes it with increment ldc */
    g.ldc = sc0;
  }
  g.c = c;
  if (k == 0) {
    /* an empty sum: c = beta * c (zeros when beta is 0, c not read) */
    for (int64_t i = 0; i < m; i++) {
      char *row = g.c + (size_t)(i * g.ldc) * g.es;
      if (beta == 0.0) {
        memset(row, 0, (size_t)n * g.es);
        continue;
      }
      for (int64_t j = 0; j < n; j++) {
        if (dt == ascFloat32)
          ((float *)row)[j] *= (float)beta;
        else
          ((double *)row)[j] *= beta;
      }
    }
    return 0;
  }
  if (g.ldc > INT32_MAX || g.ldc < 1)
    return 1;
  /* a @ a.T: b is a's own elements, transposed, and c is written whole */
  g.sym = a == b && sb0 == sa1 && sb1 == sa0 && m == n && m > 1 &&
          beta == 0.0 && lib.dsyrk != NULL;
  if (!layout(m, k, sa0, sa1, &g.ta, &g.lda)) {
    pa = pack(ctx, dt, a, m, k, sa0, sa1);
    if (pa == NULL)
      return 1;
    a = pa;
    sa0 = k;
    sa1 = 1;
    (void)layout(m, k, sa0, sa1, &g.ta, &g.lda);
  }
  if (g.sym) {
    b = a;
    sb0 = sa1;
    sb1 = sa0;
  }
  if (!layout(k, n, sb0, sb1, &g.tb, &g.ldb)) {
    pb = pack(ctx, dt, b, k, n, sb0, sb1);
    if (pb == NULL) {
      ctx->rt->release(ctx, pa);
      return 1;
    }
    b = pb;
    sb0 = n;
    sb1 = 1;
    (void)layout(k, n, sb0, sb1, &g.tb, &g.ldb);
  }
  g.a = a;
  g.b = b;
  /* a's row i starts at i * lda (as is) or i (transposed); b's column j
   * at j (as is) or j * ldb (transposed) */
  g.sa_row = g.ta ? 1 : g.lda;
  g.sb_col = g.tb ? g.ldb : 1;
  team = ctx->rt->team_size(ctx);
  if (m == 1 && n == 1 && team > 1 && !one_at_a_time &&
      k >= DOT_PARALLEL_MIN) {
    r = dot_parallel(ctx, &g, team);
    ctx->rt->release(ctx, pb);
    ctx->rt->release(ctx, pa);
    return r;
  }
  g.skinny = skinny_fits(&g);
  g.dotrows = !g.skinny && !g.sym && dotrows_fits(&g);
  g.rows = m >= n && !g.skinny;
  g.nslab = 1;
  if (team > 1 && (!one_at_a_time || g.skinny || g.dotrows) &&
      m * n / (g.sym ? 2 : 1) >
          (m == 1 || n == 1 ? GEMV_PARALLEL_MIN_FMA : PARALLEL_MIN_FMA) / k) {
    int64_t len = g.rows ? m : n;
    g.nslab = len < team ? len : team;
  }
  if (g.nslab <= 1 && g.sym) {
    sym_slab(&g, 0, m);
  } else if (g.nslab <= 1) {
    run(&g, 0, m, 0, n);
  } else {
    asc_kexc exc;
    r = ctx->rt->parallel_for(ctx, g.nslab, 1, body, &g, &exc);
    /* only a stop of the launch ends it early: the generated code's
     * loops then finish the product, and its next poll stops */
  }
  ctx->rt->release(ctx, pb);
  ctx->rt->release(ctx, pa);
  return r != 0;
}

/* ------------------------------------------------ several dot products */

/* asc_krt.linalg's ASC_KLINALG_DOTS: the m dot products of a statement
 * (np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y))) in one pass
 * over their vectors, where separate calls would read x and y once per
 * product.  The index range is cut into blocks that stay in L1 while
 * every pair takes its turn; each pair sums a block in eight lanes; the
 * team takes slabs as dot_parallel does, their sums added in order. */
enum { DOTS_MAX = 8, DOTS_BLOCK = 512 };

typedef struct dotsjob {
  int32_t dt;
  bool avx2;   /* the CPU runs the AVX2 + FMA block */
  int64_t m, n, nslab;
  const char *x[2 * DOTS_MAX];
  int64_t s[2 * DOTS_MAX];
  double part[DOT_MAX_SLABS][DOTS_MAX];
} dotsjob;

/* A block's dot product in sixteen lanes (a float32 one in sixteen
 * float32 lanes): enough independent sums for the adds' latency with
 * AVX2 or AVX-512, compiled for those where the CPU has them. */
#define DOT_BLOCK(T, NAME, ATTR)                                             \
  ATTR static T NAME(const T *x, int64_t sx, const T *y, int64_t sy,         \
                     int64_t len) {                                          \
    T r[16] = {0}, t = 0, h[8];                                              \
    int64_t i = 0;                                                           \
    if (sx == 1 && sy == 1) {                                                \
      for (; i + 16 <= len; i += 16)                                         \
        for (int l = 0; l < 16; l++)                                         \
          r[l] += x[i + l] * y[i + l];                                       \
    } else {                                                                 \
      for (; i + 16 <= len; i += 16)                                         \
        for (int l = 0; l < 16; l++)                                         \
          r[l] += x[(i + l) * sx] * y[(i + l) * sy];                         \
    }                                                                        \
    for (; i < len; i++)                                                     \
      t += x[i * sx] * y[i * sy];                                            \
    for (int l = 0; l < 8; l++)                                              \
      h[l] = r[l] + r[l + 8];                                                \
    return ((h[0] + h[4]) + (h[2] + h[6])) + ((h[1] + h[5]) + (h[3] + h[7])) \
           + t;                                                              \
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DOTS_AVX2 1
DOT_BLOCK(float, dot_block_f_avx2, __attribute__((target("avx2,fma"))))
DOT_BLOCK(double, dot_block_d_avx2, __attribute__((target("avx2,fma"))))
#endif
DOT_BLOCK(float, dot_block_f_any, )
DOT_BLOCK(double, dot_block_d_any, )

typedef float (*dot_block_f_fn)(const float *, int64_t, const float *,
                                int64_t, int64_t);
typedef double (*dot_block_d_fn)(const double *, int64_t, const double *,
                                 int64_t, int64_t);

static void dots_range(const dotsjob *d, int64_t lo, int64_t hi,
                       double *out) {
  float accf[DOTS_MAX] = {0};
  double accd[DOTS_MAX] = {0};
  dot_block_f_fn dot_block_f = dot_block_f_any;
  dot_block_d_fn dot_block_d = dot_block_d_any;
#ifdef DOTS_AVX2
  if (d->avx2) {
    dot_block_f = dot_block_f_avx2;
    dot_block_d = dot_block_d_avx2;
  }
#endif
  for (int64_t b = lo; b < hi; b += DOTS_BLOCK) {
    int64_t len = hi - b < DOTS_BLOCK ? hi - b : DOTS_BLOCK;
    for (int64_t p = 0; p < d->m; p++) {
      int64_t sx = d->s[2 * p], sy = d->s[2 * p + 1];
      if (d->dt == ascFloat32)
        accf[p] += dot_block_f((const float *)d->x[2 * p] + b * sx, sx,
                               (const float *)d->x[2 * p + 1] + b * sy, sy,
                               len);
      else
        accd[p] += dot_block_d((const double *)d->x[2 * p] + b * sx, sx,
                               (const double *)d->x[2 * p + 1] + b * sy, sy,
                               len);
    }
  }
  for (int64_t p = 0; p < d->m; p++)
    out[p] = d->dt == ascFloat32 ? (double)accf[p] : accd[p];
}

static int64_t dots_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                         asc_kexc *exc) {
  dotsjob *d = env;
  (void)tid;
  (void)exc;
  for (int64_t s = lo; s < hi; s++) {
    int64_t x0, x1;
    slab(d->n, d->nslab, s, &x0, &x1);
    dots_range(d, x0, x1, d->part[s]);
  }
  return 0;
}

int asc__krt_dots(asc_kctx *ctx, int32_t dtype, int64_t m, int64_t n,
                  int32_t nops, void *const *data, const int64_t *strides) {
  dotsjob d;
  int32_t team;
  if ((dtype != ascFloat32 && dtype != ascFloat64) || m < 1 ||
      m > DOTS_MAX || n < 0 || nops != 2 * m + 1 || data[2 * m] == NULL)
    return ASC_KLINALG_UNSUPPORTED;
  d.dt = dtype;
#ifdef DOTS_AVX2
  d.avx2 = vector_isa() >= ISA_AVX2;
#else
  d.avx2 = false;
#endif
  d.m = m;
  d.n = n;
  for (int64_t k = 0; k < 2 * m; k++) {
    /* a step so large that the offsets could overflow: not this call */
    if (data[k] == NULL ||
        (n > 0 && (strides[2 * k] > INT64_MAX / n ||
                   strides[2 * k] < -(INT64_MAX / n))))
      return ASC_KLINALG_UNSUPPORTED;
    d.x[k] = data[k];
    d.s[k] = strides[2 * k];
  }
  team = ctx->rt->team_size(ctx);
  d.nslab = n / DOT_SLAB_MIN;
  if (d.nslab > team)
    d.nslab = team;
  if (d.nslab > DOT_MAX_SLABS)
    d.nslab = DOT_MAX_SLABS;
  if (d.nslab <= 1 || n < DOT_PARALLEL_MIN) {
    d.nslab = 1;
    dots_range(&d, 0, n, d.part[0]);
  } else {
    asc_kexc exc;
    if (ctx->rt->parallel_for(ctx, d.nslab, 1, dots_body, &d, &exc) != 0)
      return ASC_KLINALG_UNSUPPORTED; /* stopped: the loops finish it */
  }
  for (int64_t p = 0; p < m; p++) {
    double sum = 0.0;
    float sumf = 0.0f;
    for (int64_t s = 0; s < d.nslab; s++) {
      sum += d.part[s][p];
      sumf += (float)d.part[s][p];
    }
    if (dtype == ascFloat32)
      ((float *)data[2 * m])[p] = sumf;
    else
      ((double *)data[2 * m])[p] = sum;
  }
  return ASC_KLINALG_OK;
}

/* ------------------------------------- a @ p and r @ a: one pass over a */

/* asc_krt.linalg's ASC_KLINALG_GEMV2: q = a @ p and s = r @ a, where two
 * matrix-vector calls would read a twice (BiCG's step).  Each thread
 * takes a slab of a's rows, four rows at a time and their columns in
 * blocks that stay in L1: the rows' dot products with p (dot_block), and
 * r[i] * a[i, :] of the four added into the slab's part of s.  The parts
 * are added in slab order.  Chained (ASC_KGEMV2_CHAIN, `(a @ p) @ a`)
 * r is q itself: the four rows' dot products are made over all their
 * columns first, then the rows, read again from L2 rather than memory,
 * are added with those weights. */
enum { GEMV2_BLOCK = 512 };

typedef struct gemv2job {
  int32_t dt;
  bool avx2, add_q, chain;
  int64_t m, n, lda, sp, sr, sq, nslab;
  const char *a, *p, *r;
  char *q;
  char *part;   /* nslab rows of n: slab s's share of s */
} gemv2job;

#define AXPY4(T, NAME, ATTR)                                                 \
  ATTR static void NAME(T *restrict s, const T *a0, const T *a1,             \
                        const T *a2, const T *a3, T r0, T r1, T r2, T r3,    \
                        int64_t len) {                                       \
    int64_t j = 0;                                                           \
    for (; j + 16 <= len; j += 16)                                           \
      for (int l = 0; l < 16; l++)                                           \
        s[j + l] += ((r0 * a0[j + l] + r1 * a1[j + l]) + r2 * a2[j + l]) +   \
                    r3 * a3[j + l];                                          \
    for (; j < len; j++)                                                     \
      s[j] += ((r0 * a0[j] + r1 * a1[j]) + r2 * a2[j]) + r3 * a3[j];         \
  }
#ifdef DOTS_AVX2
AXPY4(float, axpy4_f_avx2, __attribute__((target("avx2,fma"))))
AXPY4(double, axpy4_d_avx2, __attribute__((target("avx2,fma"))))
#endif
AXPY4(float, axpy4_f_any, )
AXPY4(double, axpy4_d_any, )

/* What both sweeps start with: the block functions for the CPU, the
 * operands, the slab's part of s zeroed. */
#define GEMV2_START(T, SUF)                                                  \
  T (*dot)(const T *, int64_t, const T *, int64_t, int64_t) =                \
      dot_block_##SUF##_any;                                                 \
  void (*axpy)(T *restrict, const T *, const T *, const T *, const T *, T,   \
               T, T, T, int64_t) = axpy4_##SUF##_any;                        \
  const T *a = (const T *)g->a, *p = (const T *)g->p;                        \
  T *q = (T *)g->q;                                                          \
  GEMV2_FAST(SUF)                                                            \
  for (int64_t j = 0; j < g->n; j++)                                         \
    part[j] = 0;

#define GEMV2_ROWS(T, SUF)                                                   \
  static void gemv2_rows_##SUF(const gemv2job *g, int64_t lo, int64_t hi,    \
                               T *part) {                                    \
    GEMV2_START(T, SUF)                                                      \
    const T *r = (const T *)g->r;                                            \
    T zero = 0;                                                              \
    for (int64_t i = lo; i < hi; i += 4) {                                   \
      int64_t rows = hi - i < 4 ? hi - i : 4;                                \
      const T *ar[4];                                                        \
      T rr[4], acc[4] = {0, 0, 0, 0};                                        \
      for (int64_t k = 0; k < 4; k++) {                                      \
        /* a short group repeats its last row with a zero weight */         \
        int64_t ik = i + (k < rows ? k : rows - 1);                          \
        ar[k] = a + ik * g->lda;                                             \
        rr[k] = k < rows ? r[ik * g->sr] : zero;                             \
      }                                                                      \
      for (int64_t j0 = 0; j0 < g->n; j0 += GEMV2_BLOCK) {                   \
        int64_t len = g->n - j0 < GEMV2_BLOCK ? g->n - j0 : GEMV2_BLOCK;     \
        for (int64_t k = 0; k < rows; k++)                                   \
          acc[k] += dot(ar[k] + j0, 1, p + j0 * g->sp, g->sp, len);          \
        axpy(part + j0, ar[0] + j0, ar[1] + j0, ar[2] + j0, ar[3] + j0,      \
             rr[0], rr[1], rr[2], rr[3], len);                               \
      }                                                                      \
      for (int64_t k = 0; k < rows; k++)                                     \
        q[(i + k) * g->sq] = g->add_q ? q[(i + k) * g->sq] + acc[k] : acc[k];\
    }                                                                        \
  }
/* Chained, r is q: a group's rows are added with their weights in the
 * sweep over the columns that makes the next group's dot products, so
 * the memory streams in while the added rows are read back from L2. */
#define GEMV2_CHAIN(T, SUF)                                                  \
  static void gemv2_chain_##SUF(const gemv2job *g, int64_t lo, int64_t hi,   \
                                T *part) {                                   \
    GEMV2_START(T, SUF)                                                      \
    const T *pr[4] = {a, a, a, a};                                           \
    T prr[4] = {0, 0, 0, 0};                                                 \
    bool prev = false;                                                       \
    for (int64_t i = lo;; i += 4) {                                          \
      int64_t rows = i >= hi ? 0 : hi - i < 4 ? hi - i : 4;                  \
      const T *ar[4];                                                        \
      T acc[4] = {0, 0, 0, 0};                                               \
      for (int64_t k = 0; k < 4 && rows > 0; k++)                            \
        ar[k] = a + (i + (k < rows ? k : rows - 1)) * g->lda;                \
      for (int64_t j0 = 0; j0 < g->n; j0 += GEMV2_BLOCK) {                   \
        int64_t len = g->n - j0 < GEMV2_BLOCK ? g->n - j0 : GEMV2_BLOCK;     \
        for (int64_t k = 0; k < rows; k++)                                   \
          acc[k] += dot(ar[k] + j0, 1, p + j0 * g->sp, g->sp, len);          \
        if (prev)                                                            \
          axpy(part + j0, pr[0] + j0, pr[1] + j0, pr[2] + j0, pr[3] + j0,    \
               prr[0], prr[1], prr[2], prr[3], len);                         \
      }                                                                      \
      if (rows == 0)                                                         \
        break;                                                               \
      for (int64_t k = 0; k < 4; k++) {                                      \
        /* a short group repeats its last row with a zero weight */         \
        pr[k] = ar[k];                                                       \
        prr[k] = k < rows ? acc[k] : 0;                                      \
        if (k < rows)                                                        \
          q[(i + k) * g->sq] =                                               \
              g->add_q ? q[(i + k) * g->sq] + acc[k] : acc[k];               \
      }                                                                      \
      prev = true;                                                           \
    }                                                                        \
  }
#ifdef DOTS_AVX2
#define GEMV2_FAST(SUF)                                                      \
  if (g->avx2) {                                                             \
    dot = dot_block_##SUF##_avx2;                                            \
    axpy = axpy4_##SUF##_avx2;                                               \
  }
#else
#define GEMV2_FAST(SUF)
#endif
GEMV2_ROWS(float, f)
GEMV2_ROWS(double, d)
GEMV2_CHAIN(float, f)
GEMV2_CHAIN(double, d)

static int64_t gemv2_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                          asc_kexc *exc) {
  gemv2job *g = env;
  size_t es = g->dt == ascFloat32 ? 4 : 8;
  (void)tid;
  (void)exc;
  for (int64_t s = lo; s < hi; s++) {
    int64_t x0, x1;
    void *part = g->part + (size_t)s * (size_t)g->n * es;
    slab(g->m, g->nslab, s, &x0, &x1);
    if (g->dt == ascFloat32)
      (g->chain ? gemv2_chain_f : gemv2_rows_f)(g, x0, x1, part);
    else
      (g->chain ? gemv2_chain_d : gemv2_rows_d)(g, x0, x1, part);
  }
  return 0;
}

int asc__krt_gemv2(asc_kctx *ctx, int32_t dtype, int64_t m, int64_t n,
                   int64_t flags, int32_t nops, void *const *data,
                   const int64_t *strides) {
  gemv2job g;
  size_t es = dtype == ascFloat32 ? 4 : 8;
  uint64_t nb;
  int32_t team;
  int rc = ASC_KLINALG_OK;
  bool add_q = (flags & ASC_KGEMV2_ADD_Q) != 0;
  bool add_s = (flags & ASC_KGEMV2_ADD_S) != 0;
  bool chain = (flags & ASC_KGEMV2_CHAIN) != 0;
  /* the operands' extents: a m x n, p n, r m, q m, s n */
  const int64_t rows[5] = {m, n, m, m, n}, cols[5] = {n, 1, 1, 1, 1};
  if ((dtype != ascFloat32 && dtype != ascFloat64) || nops != 5 || m < 0 ||
      n < 0 ||
      (flags & ~(int64_t)(ASC_KGEMV2_ADD_Q | ASC_KGEMV2_ADD_S |
                          ASC_KGEMV2_CHAIN)) ||
      strides[1] != 1 || strides[0] < n || data[3] == NULL ||
      data[4] == NULL)
    return ASC_KLINALG_UNSUPPORTED;
  /* an output that shares memory with another operand: the caller's own
   * statements, in their order (a chain's r is not read) */
  for (int o = 3; o < 5; o++)
    for (int x = 0; x < 5; x++)
      if (x != o && !(chain && x == 2) && may_overlap(data[o], rows[o], 1, strides[2 * o], 0,
                                data[x], rows[x], cols[x], strides[2 * x],
                                x == 0 ? strides[1] : 0, es))
        return ASC_KLINALG_UNSUPPORTED;
  if (m == 0 || n == 0) {
    /* r @ a of no rows is zeros; a @ p of no columns too */
    for (int64_t j = 0; j < n && !add_s; j++)
      memset((char *)data[4] + (size_t)(j * strides[8]) * es, 0, es);
    for (int64_t i = 0; i < m && !add_q; i++)
      memset((char *)data[3] + (size_t)(i * strides[6]) * es, 0, es);
    return ASC_KLINALG_OK;
  }
  memset(&g, 0, sizeof g);
  g.dt = dtype;
#ifdef DOTS_AVX2
  g.avx2 = vector_isa() >= ISA_AVX2;
#endif
  g.m = m;
  g.n = n;
  g.a = data[0];
  g.lda = strides[0];
  g.p = data[1];
  g.sp = strides[2];
  g.r = data[2];
  g.sr = strides[4];
  g.q = data[3];
  g.sq = strides[6];
  g.add_q = add_q;
  g.chain = chain;
  team = ctx->rt->team_size(ctx);
  g.nslab = 1;
  if (team > 1 && m * n >= GEMV_PARALLEL_MIN_FMA)
    g.nslab = m < team ? m : team;
  if (g.nslab > DOT_MAX_SLABS)
    g.nslab = DOT_MAX_SLABS;
  if (__builtin_mul_overflow((uint64_t)g.nslab, (uint64_t)n, &nb) ||
      __builtin_mul_overflow(nb, (uint64_t)es, &nb))
    return ASC_KLINALG_UNSUPPORTED;
  g.part = ctx->rt->alloc(ctx, nb);
  if (g.part == NULL)
    return ASC_KLINALG_NO_MEMORY;
  if (g.nslab == 1) {
    (void)gemv2_body(&g, 0, 1, 0, NULL);
  } else {
    asc_kexc exc;
    if (ctx->rt->parallel_for(ctx, g.nslab, 1, gemv2_body, &g, &exc) != 0)
      rc = ASC_KLINALG_UNSUPPORTED; /* stopped: the products' own paths */
  }
  if (rc == ASC_KLINALG_OK) {
    /* s: the slabs' parts in order */
    for (int64_t j = 0; j < n; j++) {
      if (dtype == ascFloat32) {
        const float *pt = (const float *)g.part;
        float v = pt[j];
        for (int64_t s = 1; s < g.nslab; s++)
          v += pt[s * n + j];
        float *o = (float *)data[4] + j * strides[8];
        *o = add_s ? *o + v : v;
      } else {
        const double *pt = (const double *)g.part;
        double v = pt[j];
        for (int64_t s = 1; s < g.nslab; s++)
          v += pt[s * n + j];
        double *o = (double *)data[4] + j * strides[8];
        *o = add_s ? *o + v : v;
      }
    }
  }
  ctx->rt->release(ctx, g.part);
  return rc;
}
