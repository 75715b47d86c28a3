/*
 * asc_krt.linalg: the np.linalg functions of kernels on LAPACK.
 *
 * libasc links no LAPACK: the first call has jit/lapack.c dlopen() one
 * (the OpenBLAS the BLAS came from; ASC_LAPACK_LIB names another).  Each
 * operation does what numpy's umath_linalg does, so results are numpy's
 * up to the LAPACK build: the input is copied into a column-major work
 * matrix (LAPACK's order), the routine numpy calls runs on it (gesv for
 * inv and solve, potrf for cholesky, getrf for det and slogdet, syevd or
 * heevd for eigh), and the result is copied out to the strides given.
 * Work arrays come from the block's temporaries (asc_krt.alloc) and go
 * back before it returns, on every path.  Empty matrices need no
 * library.  The call runs on the calling thread (the library set to one
 * thread, as for gemm): a kernel that solves in a parallel loop runs one
 * solve per iteration on each thread.
 */
#include "runtime/lapack.h"
#include "runtime/blas.h"
#include "jit/driver.h"

#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "asc/asc.h"

typedef void (*gesv_fn)(const int *n, const int *nrhs, void *a,
                        const int *lda, int *ipiv, void *b, const int *ldb,
                        int *info);
typedef void (*getrf_fn)(const int *m, const int *n, void *a, const int *lda,
                         int *ipiv, int *info);
/* the trailing size_t: gfortran's hidden length of a character argument */
typedef void (*getrs_fn)(const char *trans, const int *n, const int *nrhs,
                         const void *a, const int *lda, const int *ipiv,
                         void *b, const int *ldb, int *info, size_t);
typedef void (*potrf_fn)(const char *uplo, const int *n, void *a,
                         const int *lda, int *info, size_t);
typedef void (*syevd_fn)(const char *jobz, const char *uplo, const int *n,
                         void *a, const int *lda, void *w, void *work,
                         const int *lwork, int *iwork, const int *liwork,
                         int *info, size_t, size_t);
typedef void (*heevd_fn)(const char *jobz, const char *uplo, const int *n,
                         void *a, const int *lda, void *w, void *work,
                         const int *lwork, void *rwork, const int *lrwork,
                         int *iwork, const int *liwork, int *info, size_t,
                         size_t);

typedef void (*gesdd_fn)(const char *jobz, const int *m, const int *n,
                         void *a, const int *lda, void *s, void *u,
                         const int *ldu, void *vt, const int *ldvt,
                         void *work, const int *lwork, int *iwork, int *info,
                         size_t);
typedef void (*cgesdd_fn)(const char *jobz, const int *m, const int *n,
                          void *a, const int *lda, void *s, void *u,
                          const int *ldu, void *vt, const int *ldvt,
                          void *work, const int *lwork, void *rwork,
                          int *iwork, int *info, size_t);
typedef void (*geqrf_fn)(const int *m, const int *n, void *a, const int *lda,
                         void *tau, void *work, const int *lwork, int *info);
typedef void (*orgqr_fn)(const int *m, const int *n, const int *k, void *a,
                         const int *lda, const void *tau, void *work,
                         const int *lwork, int *info);

typedef void (*gelsd_fn)(const int *m, const int *n, const int *nrhs,
                         void *a, const int *lda, void *b, const int *ldb,
                         void *s, const void *rcond, int *rank, void *work,
                         const int *lwork, int *iwork, int *info);
typedef void (*cgelsd_fn)(const int *m, const int *n, const int *nrhs,
                          void *a, const int *lda, void *b, const int *ldb,
                          void *s, const void *rcond, int *rank, void *work,
                          const int *lwork, void *rwork, int *iwork,
                          int *info);


/* 0..3 for float32, float64, complex64, complex128; -1 otherwise. */
static int type_index(int32_t dt) {
  switch (dt) {
  case ascFloat32: return 0;
  case ascFloat64: return 1;
  case ascComplex64: return 2;
  case ascComplex128: return 3;
  default: return -1;
  }
}

static void put(char *d, const char *s, size_t es) {
  switch (es) {
  case 4: memcpy(d, s, 4); break;
  case 8: memcpy(d, s, 8); break;
  default: memcpy(d, s, 16); break;
  }
}

/* x[i*s0 + j*s1] (rows x cols) into the column-major w of leading
 * dimension ld. */
static void to_cols(char *w, int64_t ld, const char *x, int64_t rows,
                    int64_t cols, int64_t s0, int64_t s1, size_t es) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++)
      put(w + (size_t)(i + j * ld) * es, x + (i * s0 + j * s1) * (int64_t)es,
          es);
}

/* The reverse of to_cols. */
static void from_cols(char *x, int64_t rows, int64_t cols, int64_t s0,
                      int64_t s1, const char *w, int64_t ld, size_t es) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      put(x + (i * s0 + j * s1) * (int64_t)es, w + (size_t)(i + j * ld) * es,
          es);
}

/* Element (i, i) of the column-major n x n w = 1 (its real part). */
static void set_one(char *w, int64_t n, int64_t i, int ti) {
  char *p = w + (size_t)(i + i * n) * (ti == 0 ? 4 : ti == 3 ? 16 : 8);
  if (ti == 0 || ti == 2)
    *(float *)p = 1.0f;
  else
    *(double *)p = 1.0;
}

/* bytes = a * b * c, false on overflow. */
static bool bytes3(int64_t a, int64_t b, size_t c, uint64_t *bytes) {
  return !__builtin_mul_overflow((uint64_t)a, (uint64_t)b, bytes) &&
         !__builtin_mul_overflow(*bytes, (uint64_t)c, bytes);
}

typedef struct call {
  asc_kctx *ctx;
  const asc__lapack *L;
  int ti;
  size_t es, rs;    /* element size, its real part's */
  int m, n;       /* rows, columns (n x n for the square operations) */
  int k;          /* lstsq's right-hand sides */
  int32_t nops;
  void *const *data;
  const int64_t *st;
} call;

/* A sequential OpenBLAS takes one call at a time, BLAS and LAPACK
 * together (asc__lapack): the BLAS's lock. */
static void lock(const call *c) {
  if (c->L->one_at_a_time)
    asc__blas_one_lock(true);
}

static void unlock(const call *c) {
  if (c->L->one_at_a_time)
    asc__blas_one_lock(false);
}

/* Operand 0 (n x n) copied into the column-major buffer at w. */
static void input(const call *c, char *w) {
  to_cols(w, c->n, c->data[0], c->n, c->n, c->st[0], c->st[1], c->es);
}

/* ------------------------------------------------------- inv, solve */

/* From this many multiply-adds of the solve (n * n * nrhs) the team
 * shares it: the LU factors once (getrf), then each thread solves a slab
 * of the right-hand sides' columns (getrs), as numpy's threaded OpenBLAS
 * does; below, one gesv call. */
#define GESV_PARALLEL_MIN ((int64_t)1 << 20)

typedef struct getrs_job {
  const call *c;
  int n, nrhs, nslab;
  const char *lu;
  const int *ipiv;
  char *b;
  int bad;   /* a slab's info, which cannot be nonzero after getrf's 0 */
} getrs_job;

static int64_t getrs_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                          asc_kexc *exc) {
  getrs_job *j = env;
  int ld = j->n > 1 ? j->n : 1;
  (void)tid;
  (void)exc;
  for (int64_t s = lo; s < hi; s++) {
    int64_t c0 = j->nrhs * s / j->nslab, c1 = j->nrhs * (s + 1) / j->nslab;
    int k = (int)(c1 - c0), info = 0;
    ((getrs_fn)j->c->L->getrs[j->c->ti])("N", &j->n, &k, j->lu, &ld, j->ipiv,
                                         j->b + (size_t)c0 * (size_t)ld *
                                                    j->c->es,
                                         &ld, &info, 1);
    if (info != 0)
      j->bad = info;
  }
  return 0;
}

/* gesv's work on the team: getrf, then getrs in slabs of columns.  -1
 * when it does not apply (one thread, a library without getrs or that
 * takes one call at a time, a small system), else gesv's info. */
static int gesv_team(const call *c, char *w, char *b, int *ipiv,
                     int64_t nrhs) {
  int n = c->n, ld = n > 1 ? n : 1, info = 0;
  int32_t team = c->ctx->rt->team_size(c->ctx);
  getrs_job j;
  asc_kexc exc;
  if (team < 2 || c->L->one_at_a_time || c->L->getrs[c->ti] == NULL ||
      nrhs < 2 * (int64_t)team ||
      (int64_t)n * n * nrhs < GESV_PARALLEL_MIN)
    return -1;
  ((getrf_fn)c->L->getrf[c->ti])(&n, &n, w, &ld, ipiv, &info);
  if (info != 0)
    return info;
  j.c = c;
  j.n = n;
  j.nrhs = (int)nrhs;
  j.nslab = team;
  j.lu = w;
  j.ipiv = ipiv;
  j.b = b;
  j.bad = 0;
  if (c->ctx->rt->parallel_for(c->ctx, team, 1, getrs_body, &j, &exc) != 0)
    return -2; /* stopped: the operands again, and gesv's own call */
  return j.bad;
}

/* gesv's operands in the column-major buffer: a's copy at w, the
 * right-hand sides (the identity for inv, operand 1 for solve) at b. */
static void gesv_fill(const call *c, char *w, char *b, uint64_t bb,
                      bool inv, int64_t nrhs) {
  int n = c->n;
  input(c, w);
  if (inv) {
    memset(b, 0, bb);
    for (int64_t i = 0; i < n; i++)
      set_one(b, n, i, c->ti);
  } else {
    to_cols(b, n > 1 ? n : 1, c->data[1], n, nrhs, c->st[2], c->st[3],
            c->es);
  }
}

/* gesv on a's copy with b (n x nrhs): identity for inv, operand 1 for
 * solve; the solution to operand 1 (inv) or 2 (solve). */
static int gesv(const call *c, bool inv, int64_t nrhs) {
  int n = c->n, k = (int)nrhs, ld = n > 1 ? n : 1, info = 0;
  int out = inv ? 1 : 2;
  uint64_t ab, bb, pb;
  char *w;
  if (!bytes3(n, n, c->es, &ab) || !bytes3(n, nrhs, c->es, &bb) ||
      !bytes3(n, 1, sizeof(int), &pb))
    return ASC_KLINALG_UNSUPPORTED;
  ab = (ab + 63) & ~(uint64_t)63;
  bb = (bb + 63) & ~(uint64_t)63;
  w = c->ctx->rt->alloc(c->ctx, ab + bb + pb);
  if (w == NULL)
    return ASC_KLINALG_NO_MEMORY;
  gesv_fill(c, w, w + ab, bb, inv, nrhs);
  info = gesv_team(c, w, w + ab, (int *)(w + ab + bb), nrhs);
  if (info == -2)
    gesv_fill(c, w, w + ab, bb, inv, nrhs);
  if (info < 0) {
    info = 0;
    lock(c);
    ((gesv_fn)c->L->gesv[c->ti])(&n, &k, w, &ld, (int *)(w + ab + bb),
                                 w + ab, &ld, &info);
    unlock(c);
  }
  if (info == 0)
    from_cols(c->data[out], n, nrhs, c->st[2 * out], c->st[2 * out + 1],
              w + ab, ld, c->es);
  c->ctx->rt->release(c->ctx, w);
  return info > 0 ? ASC_KLINALG_SINGULAR
         : info < 0 ? ASC_KLINALG_UNSUPPORTED
                    : ASC_KLINALG_OK;
}

/* ---------------------------------------------------------- cholesky */

static int cholesky(const call *c) {
  int n = c->n, info = 0;
  uint64_t ab;
  char *w;
  if (!bytes3(n, n, c->es, &ab))
    return ASC_KLINALG_UNSUPPORTED;
  w = c->ctx->rt->alloc(c->ctx, ab);
  if (w == NULL)
    return ASC_KLINALG_NO_MEMORY;
  input(c, w);
  lock(c);
  ((potrf_fn)c->L->potrf[c->ti])("L", &n, w, &n, &info, 1);
  unlock(c);
  if (info == 0) {
    /* numpy's result: the lower factor, zeros above its diagonal */
    for (int64_t j = 1; j < n; j++)
      memset(w + (size_t)(j * n) * c->es, 0, (size_t)j * c->es);
    from_cols(c->data[1], n, n, c->st[2], c->st[3], w, n, c->es);
  }
  c->ctx->rt->release(c->ctx, w);
  return info > 0 ? ASC_KLINALG_NOT_PD
         : info < 0 ? ASC_KLINALG_UNSUPPORTED
                    : ASC_KLINALG_OK;
}

/* ---------------------------------------------------- det, slogdet */

/* numpy's slogdet of the LU factors in w (getrf's info, pivots piv):
 * the sign (a real or complex unit, 0 when singular) in sr, si and the
 * log of the modulus in *ld, accumulated as numpy does, in the dtype's
 * precision. */
static void slog(const call *c, const char *w, const int *piv, int info,
                 double *sr, double *si, double *ld) {
  int n = c->n;
  int flips = 0;
  if (info > 0) {
    *sr = *si = 0.0;
    *ld = -INFINITY;
    return;
  }
  for (int i = 0; i < n; i++)
    flips += piv[i] != i + 1;
  if (c->ti == 0) {
    float s = flips % 2 ? -1.0f : 1.0f, l = 0.0f;
    for (int i = 0; i < n; i++) {
      float d = ((const float *)w)[i + i * n];
      if (d < 0) {
        s = -s;
        d = -d;
      }
      l += logf(d);
    }
    *sr = s, *si = 0.0, *ld = l;
  } else if (c->ti == 1) {
    double s = flips % 2 ? -1.0 : 1.0, l = 0.0;
    for (int i = 0; i < n; i++) {
      double d = ((const double *)w)[i + i * n];
      if (d < 0) {
        s = -s;
        d = -d;
      }
      l += log(d);
    }
    *sr = s, *si = 0.0, *ld = l;
  } else if (c->ti == 2) {
    float re = flips % 2 ? -1.0f : 1.0f, im = 0.0f, l = 0.0f;
    for (int i = 0; i < n; i++) {
      const float *d = (const float *)w + 2 * (i + i * n);
      float a = hypotf(d[0], d[1]), er = d[0] / a, ei = d[1] / a;
      float nr = re * er - im * ei, ni = re * ei + im * er;
      re = nr, im = ni;
      l += logf(a);
    }
    *sr = re, *si = im, *ld = l;
  } else {
    double re = flips % 2 ? -1.0 : 1.0, im = 0.0, l = 0.0;
    for (int i = 0; i < n; i++) {
      const double *d = (const double *)w + 2 * (i + i * n);
      double a = hypot(d[0], d[1]), er = d[0] / a, ei = d[1] / a;
      double nr = re * er - im * ei, ni = re * ei + im * er;
      re = nr, im = ni;
      l += log(a);
    }
    *sr = re, *si = im, *ld = l;
  }
}

/* Stores the number re + i im of the dtype (its real part for a real
 * dtype; real: the real dtype whatever the matrix's) at p. */
static void store(const call *c, void *p, double re, double im, bool real) {
  bool single = c->ti == 0 || c->ti == 2;
  bool cplx = !real && c->ti >= 2;
  if (single) {
    ((float *)p)[0] = (float)re;
    if (cplx)
      ((float *)p)[1] = (float)im;
  } else {
    ((double *)p)[0] = re;
    if (cplx)
      ((double *)p)[1] = im;
  }
}

static int det(const call *c, bool logdet) {
  int n = c->n, info = 0;
  uint64_t ab, pb;
  double sr = 1.0, si = 0.0, ld = 0.0;
  char *w = NULL;
  if (n > 0) {
    if (!bytes3(n, n, c->es, &ab) || !bytes3(n, 1, sizeof(int), &pb))
      return ASC_KLINALG_UNSUPPORTED;
    ab = (ab + 63) & ~(uint64_t)63;
    w = c->ctx->rt->alloc(c->ctx, ab + pb);
    if (w == NULL)
      return ASC_KLINALG_NO_MEMORY;
    input(c, w);
    lock(c);
    ((getrf_fn)c->L->getrf[c->ti])(&n, &n, w, &n, (int *)(w + ab), &info);
    unlock(c);
    if (info < 0) {
      c->ctx->rt->release(c->ctx, w);
      return ASC_KLINALG_UNSUPPORTED;
    }
    slog(c, w, (const int *)(w + ab), info, &sr, &si, &ld);
    c->ctx->rt->release(c->ctx, w);
  }
  if (logdet) {
    store(c, c->data[1], sr, si, false);
    store(c, c->data[2], ld, 0.0, true);
  } else if (c->ti == 0 || c->ti == 2) {
    float e = expf((float)ld);
    store(c, c->data[1], (float)sr * e, (float)si * e, false);
  } else {
    double e = exp(ld);
    store(c, c->data[1], sr * e, si * e, false);
  }
  return ASC_KLINALG_OK;
}

/* -------------------------------------------------------------- eigh */

/* A work size a query wrote at p, a number of rs bytes. */
static double work_size(const void *p, size_t rs) {
  float f;
  double d;
  if (rs == 4) {
    memcpy(&f, p, sizeof f);
    return f;
  }
  memcpy(&d, p, sizeof d);
  return d;
}

/* syevd / heevd (numpy's eigh and eigvalsh), lower triangle: the values
 * to operand 1, the vectors (columns) to operand 2 unless its data is
 * NULL.  The work sizes from the routine's query (lwork -1). */
static int eigh(const call *c) {
  bool vec = c->nops >= 3 && c->data[2] != NULL, cplx = c->ti >= 2;
  const char *jobz = vec ? "V" : "N";
  int n = c->n, info = 0, lwork = -1, lrwork = -1, liwork = -1, iq = 0;
  double q[2] = {0, 0}, rq = 0;   /* the query's answers, any dtype */
  uint64_t ab, wb, kb, rb, ib;
  char *w;
  if (!bytes3(n, n, c->es, &ab))
    return ASC_KLINALG_UNSUPPORTED;
  lock(c);
  if (cplx)
    ((heevd_fn)c->L->syevd[c->ti])(jobz, "L", &n, NULL, &n, NULL, q, &lwork,
                                   &rq, &lrwork, &iq, &liwork, &info, 1, 1);
  else
    ((syevd_fn)c->L->syevd[c->ti])(jobz, "L", &n, NULL, &n, NULL, q, &lwork,
                                   &iq, &liwork, &info, 1, 1);
  unlock(c);
  if (info != 0)
    return ASC_KLINALG_UNSUPPORTED;
  /* the sizes come back as numbers of the routine's dtype */
  lwork = (int)work_size(q, c->rs);
  lrwork = cplx ? (int)work_size(&rq, c->rs) : 0;
  liwork = iq;
  if (lwork < 1)
    lwork = 1;
  if (lrwork < 1)
    lrwork = 1;
  if (liwork < 1)
    liwork = 1;
  ab = (ab + 63) & ~(uint64_t)63;
  wb = ((uint64_t)n * c->rs + 63) & ~(uint64_t)63;
  kb = ((uint64_t)lwork * c->es + 63) & ~(uint64_t)63;
  rb = ((uint64_t)lrwork * c->rs + 63) & ~(uint64_t)63;
  ib = (uint64_t)liwork * sizeof(int);
  w = c->ctx->rt->alloc(c->ctx, ab + wb + kb + rb + ib);
  if (w == NULL)
    return ASC_KLINALG_NO_MEMORY;
  input(c, w);
  lock(c);
  if (cplx)
    ((heevd_fn)c->L->syevd[c->ti])(jobz, "L", &n, w, &n, w + ab, w + ab + wb,
                                   &lwork, w + ab + wb + kb, &lrwork,
                                   (int *)(w + ab + wb + kb + rb), &liwork,
                                   &info, 1, 1);
  else
    ((syevd_fn)c->L->syevd[c->ti])(jobz, "L", &n, w, &n, w + ab, w + ab + wb,
                                   &lwork, (int *)(w + ab + wb + kb + rb),
                                   &liwork, &info, 1, 1);
  unlock(c);
  if (info == 0) {
    from_cols(c->data[1], n, 1, c->st[2], 0, w + ab, n, c->rs);
    if (vec)
      from_cols(c->data[2], n, n, c->st[4], c->st[5], w, n, c->es);
  }
  c->ctx->rt->release(c->ctx, w);
  return info > 0 ? ASC_KLINALG_NO_CONVERGE
         : info < 0 ? ASC_KLINALG_UNSUPPORTED
                    : ASC_KLINALG_OK;
}

/* --------------------------------------------------------------- svd */

/* Operand op, n x n, = the identity (numpy's u or vh of an empty
 * matrix). */
static void eye_out(const call *c, int op, int64_t n) {
  char one[16] = {0};
  set_one(one, 1, 0, c->ti);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      char *p = (char *)c->data[op] +
                (i * c->st[2 * op] + j * c->st[2 * op + 1]) * (int64_t)c->es;
      if (i == j)
        put(p, one, c->es);
      else
        memset(p, 0, c->es);
    }
}

/* 64-byte rounded sizes of a work area, the sum in *total; false on
 * overflow. */
static bool areas(uint64_t *sz, int n, uint64_t *total) {
  *total = 0;
  for (int i = 0; i < n; i++) {
    if (sz[i] > UINT64_MAX / 2)
      return false;
    sz[i] = (sz[i] + 63) & ~(uint64_t)63;
    *total += sz[i];
  }
  return true;
}

/* gesdd (numpy's svd): jobz 'A' (full), 'S' or 'N' (values only, nops
 * 2); s to operand 1, u and vh to 2 and 3. */
static int svd(const call *c, bool full) {
  bool uv = c->nops >= 4, cplx = c->ti >= 2;
  int m = c->m, n = c->n, mn = m < n ? m : n, mx = m < n ? n : m;
  int ucol = full ? m : mn, vrow = full ? n : mn;
  int lda = m, ldu = m, ldvt = vrow, lwork = -1, info = 0, iq = 0;
  const char *jobz = !uv ? "N" : full ? "A" : "S";
  double q[2] = {0, 0};
  uint64_t sz[7], total, lrwork;
  char *w, *pa, *ps, *pu, *pv, *pw, *pr;
  int *pi;
  /* cgesdd's rwork, as LAPACK documents it */
  uint64_t r1 = 5 * (uint64_t)mn * mn + 5 * (uint64_t)mn;
  uint64_t r2 = 2 * (uint64_t)mx * mn + 2 * (uint64_t)mn * mn + mn;
  lrwork = !uv ? 7 * (uint64_t)mn : r1 > r2 ? r1 : r2;
  lock(c);
  if (cplx)
    ((cgesdd_fn)c->L->gesdd[c->ti])(jobz, &m, &n, NULL, &lda, NULL, NULL,
                                    &ldu, NULL, &ldvt, q, &lwork, NULL, &iq,
                                    &info, 1);
  else
    ((gesdd_fn)c->L->gesdd[c->ti])(jobz, &m, &n, NULL, &lda, NULL, NULL,
                                   &ldu, NULL, &ldvt, q, &lwork, &iq, &info,
                                   1);
  unlock(c);
  if (info != 0)
    return ASC_KLINALG_UNSUPPORTED;
  lwork = (int)work_size(q, c->rs);
  if (lwork < 1)
    lwork = 1;
  sz[0] = (uint64_t)m * n * c->es;
  sz[1] = (uint64_t)mn * c->rs;
  sz[2] = uv ? (uint64_t)ldu * ucol * c->es : 0;
  sz[3] = uv ? (uint64_t)ldvt * n * c->es : 0;
  sz[4] = (uint64_t)lwork * c->es;
  sz[5] = cplx ? lrwork * c->rs : 0;
  sz[6] = 8 * (uint64_t)mn * sizeof(int);
  if (!areas(sz, 7, &total))
    return ASC_KLINALG_UNSUPPORTED;
  w = c->ctx->rt->alloc(c->ctx, total);
  if (w == NULL)
    return ASC_KLINALG_NO_MEMORY;
  pa = w, ps = pa + sz[0], pu = ps + sz[1], pv = pu + sz[2], pw = pv + sz[3];
  pr = pw + sz[4], pi = (int *)(pr + sz[5]);
  to_cols(pa, m, c->data[0], m, n, c->st[0], c->st[1], c->es);
  lock(c);
  if (cplx)
    ((cgesdd_fn)c->L->gesdd[c->ti])(jobz, &m, &n, pa, &lda, ps, pu, &ldu, pv,
                                    &ldvt, pw, &lwork, pr, pi, &info, 1);
  else
    ((gesdd_fn)c->L->gesdd[c->ti])(jobz, &m, &n, pa, &lda, ps, pu, &ldu, pv,
                                   &ldvt, pw, &lwork, pi, &info, 1);
  unlock(c);
  if (info == 0) {
    from_cols(c->data[1], mn, 1, c->st[2], 0, ps, mn, c->rs);
    if (uv) {
      from_cols(c->data[2], m, ucol, c->st[4], c->st[5], pu, ldu, c->es);
      from_cols(c->data[3], vrow, n, c->st[6], c->st[7], pv, ldvt, c->es);
    }
  }
  c->ctx->rt->release(c->ctx, w);
  return info > 0 ? ASC_KLINALG_NO_CONVERGE
         : info < 0 ? ASC_KLINALG_UNSUPPORTED
                    : ASC_KLINALG_OK;
}

/* ---------------------------------------------------------------- qr */

/* geqrf, then r = the upper triangle of its first min(m, n) rows and q =
 * orgqr / ungqr of its first min(m, n) columns (numpy's 'reduced'). */
static int qr(const call *c) {
  int m = c->m, n = c->n, mn = m < n ? m : n, lwork = -1, info = 0;
  double q1[2] = {0, 0}, q2[2] = {0, 0}, l1, l2;
  uint64_t sz[3], total;
  char *w, *pa, *pt, *pw;
  lock(c);
  ((geqrf_fn)c->L->geqrf[c->ti])(&m, &n, NULL, &m, NULL, q1, &lwork, &info);
  if (info == 0)
    ((orgqr_fn)c->L->orgqr[c->ti])(&m, &mn, &mn, NULL, &m, NULL, q2, &lwork,
                                   &info);
  unlock(c);
  if (info != 0)
    return ASC_KLINALG_UNSUPPORTED;
  l1 = work_size(q1, c->rs);
  l2 = work_size(q2, c->rs);
  lwork = (int)(l1 > l2 ? l1 : l2);
  if (lwork < 1)
    lwork = 1;
  sz[0] = (uint64_t)m * n * c->es;
  sz[1] = (uint64_t)mn * c->es;
  sz[2] = (uint64_t)lwork * c->es;
  if (!areas(sz, 3, &total))
    return ASC_KLINALG_UNSUPPORTED;
  w = c->ctx->rt->alloc(c->ctx, total);
  if (w == NULL)
    return ASC_KLINALG_NO_MEMORY;
  pa = w, pt = pa + sz[0], pw = pt + sz[1];
  to_cols(pa, m, c->data[0], m, n, c->st[0], c->st[1], c->es);
  lock(c);
  ((geqrf_fn)c->L->geqrf[c->ti])(&m, &n, pa, &m, pt, pw, &lwork, &info);
  unlock(c);
  if (info == 0) {
    for (int64_t i = 0; i < mn; i++)
      for (int64_t j = 0; j < n; j++) {
        char *p = (char *)c->data[2] +
                  (i * c->st[4] + j * c->st[5]) * (int64_t)c->es;
        if (j >= i)
          put(p, pa + (size_t)(i + j * m) * c->es, c->es);
        else
          memset(p, 0, c->es);
      }
    lock(c);
    ((orgqr_fn)c->L->orgqr[c->ti])(&m, &mn, &mn, pa, &m, pt, pw, &lwork,
                                   &info);
    unlock(c);
  }
  if (info == 0)
    from_cols(c->data[1], m, mn, c->st[2], c->st[3], pa, m, c->es);
  c->ctx->rt->release(c->ctx, w);
  return info != 0 ? ASC_KLINALG_UNSUPPORTED : ASC_KLINALG_OK;
}

/* ------------------------------------------------------------- lstsq */

/* |z|^2 of the element at p. */
static double abs2(const call *c, const char *p) {
  double re, im = 0;
  if (c->rs == 4) {
    float f[2] = {0, 0};
    memcpy(f, p, c->es);
    re = f[0], im = f[1];
  } else {
    double d[2] = {0, 0};
    memcpy(d, p, c->es);
    re = d[0], im = d[1];
  }
  return re * re + im * im;
}

/* x from gelsd's b (ldb rows; NULL: zeros, as numpy's for an empty a),
 * the residuals from its rows n..m-1, the rank. */
static void lstsq_out(const call *c, const char *b, int rank) {
  int m = c->m, n = c->n, ldb = m > n ? m : n;
  for (int64_t j = 0; j < c->k; j++) {
    double r = 0;
    char *p = (char *)c->data[3] + j * c->st[6] * (int64_t)c->rs;
    for (int64_t i = 0; i < n; i++) {
      char *xp = (char *)c->data[2] +
                 (i * c->st[4] + j * c->st[5]) * (int64_t)c->es;
      if (b != NULL)
        put(xp, b + (size_t)(i + j * ldb) * c->es, c->es);
      else
        memset(xp, 0, c->es);
    }
    for (int64_t i = n; i < m; i++)
      r += abs2(c, b != NULL ? b + (size_t)(i + j * ldb) * c->es
                             : (const char *)c->data[1] +
                                   (i * c->st[2] + j * c->st[3]) *
                                       (int64_t)c->es);
    if (c->rs == 4) {
      float f = (float)r;
      memcpy(p, &f, 4);
    } else {
      memcpy(p, &r, 8);
    }
  }
  *(int64_t *)c->data[4] = rank;
}

/* gelsd (numpy's lstsq) with rcond eps * max(m, n). */
static int lstsq(const call *c) {
  /* no right-hand side: one of zeros, as numpy gives LAPACK (the rank
   * and s are still computed) */
  int m = c->m, n = c->n, k = c->k > 0 ? c->k : 1, mn = m < n ? m : n;
  int lda = m, ldb = m > n ? m : n, lwork = -1, info = 0, rank = 0;
  int iq = 0;
  bool cplx = c->ti >= 2;
  double q[2] = {0, 0}, rq[2] = {0, 0};
  double dr = 2.220446049250313e-16 * (m > n ? m : n);
  float fr = 1.1920929e-07f * (float)(m > n ? m : n);
  const void *rcond = c->rs == 4 ? (const void *)&fr : (const void *)&dr;
  uint64_t sz[6], total;
  char *w, *pa, *pb, *ps, *pw, *pr;
  lock(c);
  if (cplx)
    ((cgelsd_fn)c->L->gelsd[c->ti])(&m, &n, &k, NULL, &lda, NULL, &ldb,
                                    NULL, rcond, &rank, q, &lwork, rq, &iq,
                                    &info);
  else
    ((gelsd_fn)c->L->gelsd[c->ti])(&m, &n, &k, NULL, &lda, NULL, &ldb, NULL,
                                   rcond, &rank, q, &lwork, &iq, &info);
  unlock(c);
  if (info != 0)
    return ASC_KLINALG_UNSUPPORTED;
  lwork = (int)work_size(q, c->rs);
  if (lwork < 1)
    lwork = 1;
  sz[0] = (uint64_t)m * n * c->es;
  sz[1] = (uint64_t)ldb * k * c->es;
  sz[2] = (uint64_t)mn * c->rs;
  sz[3] = (uint64_t)lwork * c->es;
  sz[4] = cplx ? (uint64_t)(work_size(rq, c->rs) + 1) * c->rs : 0;
  sz[5] = (uint64_t)(iq > 1 ? iq : 1) * sizeof(int);
  if (!areas(sz, 6, &total))
    return ASC_KLINALG_UNSUPPORTED;
  w = c->ctx->rt->alloc(c->ctx, total);
  if (w == NULL)
    return ASC_KLINALG_NO_MEMORY;
  pa = w, pb = pa + sz[0], ps = pb + sz[1], pw = ps + sz[2];
  pr = pw + sz[3];
  memset(pb, 0, sz[1]);
  to_cols(pa, m, c->data[0], m, n, c->st[0], c->st[1], c->es);
  to_cols(pb, ldb, c->data[1], m, c->k, c->st[2], c->st[3], c->es);
  lock(c);
  if (cplx)
    ((cgelsd_fn)c->L->gelsd[c->ti])(&m, &n, &k, pa, &lda, pb, &ldb, ps,
                                    rcond, &rank, pw, &lwork, pr,
                                    (int *)(pr + sz[4]), &info);
  else
    ((gelsd_fn)c->L->gelsd[c->ti])(&m, &n, &k, pa, &lda, pb, &ldb, ps, rcond,
                                   &rank, pw, &lwork, (int *)(pr + sz[4]),
                                   &info);
  unlock(c);
  if (info == 0) {
    lstsq_out(c, pb, rank);
    from_cols(c->data[5], mn, 1, c->st[10], 0, ps, mn, c->rs);
  }
  c->ctx->rt->release(c->ctx, w);
  return info > 0 ? ASC_KLINALG_NO_CONVERGE
         : info < 0 ? ASC_KLINALG_UNSUPPORTED
                    : ASC_KLINALG_OK;
}

/* ------------------------------------------------------------ service */

/* Operands each operation takes. */
static const int32_t nops_of[ASC_KLINALG_COUNT] = {
    [ASC_KLINALG_INV] = 2,     [ASC_KLINALG_SOLVE] = 3,
    [ASC_KLINALG_CHOLESKY] = 2, [ASC_KLINALG_SLOGDET] = 3,
    [ASC_KLINALG_DET] = 2,     [ASC_KLINALG_EIGH] = 2,
    [ASC_KLINALG_SVD] = 2,     [ASC_KLINALG_QR] = 3,
    [ASC_KLINALG_LSTSQ] = 6,
};

int asc__krt_linalg(asc_kctx *ctx, int32_t op, int32_t dtype, int64_t m,
                    int64_t n, int64_t k, int32_t nops, void *const *data,
                    const int64_t *strides) {
  call c;
  if (op == ASC_KLINALG_DOTS)
    return asc__krt_dots(ctx, dtype, m, n, nops, data, strides);
  if (op == ASC_KLINALG_GEMV2)
    return asc__krt_gemv2(ctx, dtype, m, n, k, nops, data, strides);
  memset(&c, 0, sizeof c);
  c.ti = type_index(dtype);
  if (c.ti < 0 || op <= 0 || op >= ASC_KLINALG_COUNT ||
      nops < nops_of[op] || n < 0 || n > INT32_MAX || k < 0 ||
      k > INT32_MAX || m < 0 || m > INT32_MAX)
    return ASC_KLINALG_UNSUPPORTED;
  if (op != ASC_KLINALG_SVD && op != ASC_KLINALG_QR &&
      op != ASC_KLINALG_LSTSQ)
    m = n;
  c.ctx = ctx;
  c.es = c.ti == 0 ? 4 : c.ti == 3 ? 16 : 8;
  c.rs = c.ti == 0 || c.ti == 2 ? 4 : 8;
  c.n = (int)n;
  c.m = (int)m;
  c.nops = nops;
  c.data = data;
  c.st = strides;
  /* empty matrices: numpy's answers, no library needed */
  if (op == ASC_KLINALG_SVD && (m == 0 || n == 0)) {
    if (nops >= 4 && k != 0) {
      eye_out(&c, 2, m);
      eye_out(&c, 3, n);
    }
    return ASC_KLINALG_OK;
  }
  if (op == ASC_KLINALG_QR && (m == 0 || n == 0))
    return ASC_KLINALG_OK;
  if (op == ASC_KLINALG_LSTSQ && (m == 0 || n == 0)) {
    c.k = (int)k;
    lstsq_out(&c, NULL, 0);
    return ASC_KLINALG_OK;
  }
  if (n == 0 || (op == ASC_KLINALG_SOLVE && k == 0)) {
    if (op == ASC_KLINALG_DET || op == ASC_KLINALG_SLOGDET)
      return det(&c, op == ASC_KLINALG_SLOGDET);
    return ASC_KLINALG_OK;
  }
  c.L = asc__jit_lapack();
  if (c.L == NULL)
    return ASC_KLINALG_NO_LAPACK;
  switch (op) {
  case ASC_KLINALG_INV:
    return gesv(&c, true, n);
  case ASC_KLINALG_SOLVE:
    return gesv(&c, false, k);
  case ASC_KLINALG_CHOLESKY:
    return cholesky(&c);
  case ASC_KLINALG_SLOGDET:
  case ASC_KLINALG_DET:
    return det(&c, op == ASC_KLINALG_SLOGDET);
  case ASC_KLINALG_SVD:
    return svd(&c, k != 0);
  case ASC_KLINALG_QR:
    return qr(&c);
  case ASC_KLINALG_LSTSQ:
    c.k = (int)k;
    return lstsq(&c);
  default:
    return eigh(&c);
  }
}

const char *asc__lapack_library(void) {
  const asc__lapack *L = asc__jit_lapack();
  return L != NULL ? L->name : NULL;
}
