/* A stand-in for the runtime around asc_gemm_exact_f32/f64
 * (src/compiler/gemm_kernel.h), for bench/gemm_exact.py: a team of
 * ASC_GK_THREADS pthreads (fresh per call, as the bench times whole
 * calls) whose parallel_for gives each thread an equal share of 0..n-1,
 * and alloc/release on aligned_alloc/free.  Built by the bench with
 * cc -O3 -march=native -ffp-contract=off, the flags kernels get. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "asc/kernel_abi.h"
#define ASC_NEED_GEMM_EXACT 1
#include "gemm_kernel.h"

typedef struct {
  int64_t n, lo, hi;
  int32_t tid;
  asc_kbody body;
  void *env;
  asc_kexc exc;
  int64_t r;
} share;

static int nthreads = 1;

static void *run_share(void *p) {
  share *s = p;
  s->r = s->body(s->env, s->lo, s->hi, s->tid, &s->exc);
  return NULL;
}

static int pfor(asc_kctx *ctx, int64_t n, int64_t min_chunk, asc_kbody body,
                void *env, asc_kexc *exc) {
  share sh[64];
  pthread_t th[64];
  int t = nthreads, rc = 0;
  (void)ctx;
  (void)min_chunk;
  for (int i = 0; i < t; i++) {
    sh[i] = (share){n, n * i / t, n * (i + 1) / t, i, body, env, {0}, 0};
    if (i > 0)
      pthread_create(&th[i], NULL, run_share, &sh[i]);
  }
  run_share(&sh[0]);
  for (int i = 1; i < t; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < t; i++)
    if (sh[i].r != 0 && rc == 0) {
      *exc = sh[i].exc;
      rc = 1;
    }
  return rc;
}
static int32_t team(asc_kctx *ctx) {
  (void)ctx;
  return nthreads;
}
static void *alloc64(asc_kctx *ctx, uint64_t bytes) {
  (void)ctx;
  return aligned_alloc(64, (bytes + 63) / 64 * 64);
}
static void release(asc_kctx *ctx, void *p) {
  (void)ctx;
  free(p);
}

static asc_krt rt;
static asc_kctx kctx;

static void setup(int threads) {
  nthreads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
  rt.parallel_for = pfor;
  rt.team_size = team;
  rt.alloc = alloc64;
  rt.release = release;
  kctx.rt = &rt;
}

int gk_f32(int threads, int64_t m, int64_t n, int64_t k, const float *a,
           const float *b, float *c);
int gk_f32(int threads, int64_t m, int64_t n, int64_t k, const float *a,
           const float *b, float *c) {
  asc_kexc exc;
  setup(threads);
  return asc_gemm_exact_f32(&kctx, &exc, 0, m, n, k, a, k, 1, b, n, 1, c, n,
                            1, 0);
}
int gk_f64(int threads, int64_t m, int64_t n, int64_t k, const double *a,
           const double *b, double *c);
int gk_f64(int threads, int64_t m, int64_t n, int64_t k, const double *a,
           const double *b, double *c) {
  asc_kexc exc;
  setup(threads);
  return asc_gemm_exact_f64(&kctx, &exc, 0, m, n, k, a, k, 1, b, n, 1, c, n,
                            1, 0);
}
/* The naive i-j-p loop, the order the product must keep. */
void naive_f32(int64_t m, int64_t n, int64_t k, const float *a,
               const float *b, float *c);
void naive_f32(int64_t m, int64_t n, int64_t k, const float *a,
               const float *b, float *c) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0;
      for (int64_t p = 0; p < k; p++)
        acc = acc + a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
}
void naive_f64(int64_t m, int64_t n, int64_t k, const double *a,
               const double *b, double *c);
void naive_f64(int64_t m, int64_t n, int64_t k, const double *a,
               const double *b, double *c) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t p = 0; p < k; p++)
        acc = acc + a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
}
