/*
 * Test harness for generated modules: IR text -> passes -> C -> cc ->
 * dlopen, and a fake runtime whose parallel_for runs the body serially in
 * small chunks (so chunk boundaries are exercised) on "thread" 0;
 * harness_call_threaded runs them on HARNESS_TEAM real threads instead.
 *
 * Tests only: the library runs the C compiler through its own driver.
 */
#ifndef ASC_KERNEL_HARNESS_H
#define ASC_KERNEL_HARNESS_H

#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/cctx.h"
#include "compiler/emit_c.h"
#include "compiler/ir/ir.h"
#include "asc/kernel_abi.h"
#include "compiler/passes/passes.h"

extern char **environ;

#define HARNESS_CHUNK 7
#define HARNESS_TEAM 4

static inline int harness_parallel_for(asc_kctx *ctx, int64_t n,
                                       int64_t min_chunk, asc_kbody body,
                                       void *env, asc_kexc *exc) {
  (void)ctx;
  (void)min_chunk;
  for (int64_t lo = 0; lo < n; lo += HARNESS_CHUNK) {
    int64_t hi = lo + HARNESS_CHUNK < n ? lo + HARNESS_CHUNK : n;
    if (body(env, lo, hi, (int32_t)((lo / HARNESS_CHUNK) % HARNESS_TEAM),
             exc) != 0)
      return 1;
  }
  return 0;
}
static inline int32_t harness_team_size(asc_kctx *ctx) {
  (void)ctx;
  return HARNESS_TEAM;
}
static inline int harness_barrier(asc_kctx *ctx) {
  (void)ctx;
  return 0;
}
/* critical sections entered minus exited (test-only state) */
static int harness_crit_depth;
static inline void harness_crit_enter(asc_kctx *ctx) {
  (void)ctx;
  harness_crit_depth++;
}
static inline void harness_crit_exit(asc_kctx *ctx) {
  (void)ctx;
  harness_crit_depth--;
}
static inline int harness_cancelled(asc_kctx *ctx) {
  (void)ctx;
  return 0;
}

/* Temporaries: every one a call allocated is freed when it returns
 * (harness_tmp_end), as the runtime gives them back when a block ends. */
#define HARNESS_TMP_MAX 1024
static void *harness_tmp[HARNESS_TMP_MAX];
static int harness_ntmp;
static pthread_mutex_t harness_tmp_mu = PTHREAD_MUTEX_INITIALIZER;
static inline void *harness_alloc(asc_kctx *ctx, uint64_t bytes) {
  void *p = NULL;
  (void)ctx;
  pthread_mutex_lock(&harness_tmp_mu);
  if (harness_ntmp < HARNESS_TMP_MAX &&
      posix_memalign(&p, 64, bytes ? (size_t)bytes : 1) == 0)
    harness_tmp[harness_ntmp++] = p;
  pthread_mutex_unlock(&harness_tmp_mu);
  return p;
}
static inline void harness_release(asc_kctx *ctx, void *p) {
  (void)ctx;
  pthread_mutex_lock(&harness_tmp_mu);
  for (int i = 0; i < harness_ntmp; i++)
    if (harness_tmp[i] == p) {
      free(p);
      harness_tmp[i] = harness_tmp[--harness_ntmp];
      break;
    }
  pthread_mutex_unlock(&harness_tmp_mu);
}
/* A kept temporary leaves the list: the caller frees it (free()). */
static inline void *harness_keep(asc_kctx *ctx, void *p) {
  void *kept = NULL;
  (void)ctx;
  pthread_mutex_lock(&harness_tmp_mu);
  for (int i = 0; i < harness_ntmp; i++)
    if (harness_tmp[i] == p) {
      kept = p;
      harness_tmp[i] = harness_tmp[--harness_ntmp];
      break;
    }
  pthread_mutex_unlock(&harness_tmp_mu);
  return kept;
}
static inline void harness_tmp_end(void) {
  for (int i = 0; i < harness_ntmp; i++)
    free(harness_tmp[i]);
  harness_ntmp = 0;
}

/* No BLAS here: the generated code computes matrix products itself. */
static inline int harness_gemm(asc_kctx *ctx, int32_t dt, int64_t m,
                               int64_t n, int64_t k, const void *a,
                               int64_t sa0, int64_t sa1, const void *b,
                               int64_t sb0, int64_t sb1, void *c,
                               int64_t sc0, int64_t sc1) {
  (void)ctx, (void)dt, (void)m, (void)n, (void)k, (void)a, (void)sa0;
  (void)sa1, (void)b, (void)sb0, (void)sb1, (void)c, (void)sc0, (void)sc1;
  return 1;
}

static inline int harness_gemm_ab(asc_kctx *ctx, int32_t dt, int64_t m,
                                  int64_t n, int64_t k, double alpha,
                                  const void *a, int64_t sa0, int64_t sa1,
                                  const void *b, int64_t sb0, int64_t sb1,
                                  double beta, void *c, int64_t sc0,
                                  int64_t sc1) {
  (void)alpha, (void)beta;
  return harness_gemm(ctx, dt, m, n, k, a, sa0, sa1, b, sb0, sb1, c, sc0,
                      sc1);
}

static const asc_krt harness_rt = {
    ASC_KABI_VERSION, harness_parallel_for, harness_team_size,
    harness_barrier,  harness_crit_enter,   harness_crit_exit,
    harness_cancelled, harness_alloc,       harness_release,
    harness_keep, harness_gemm, NULL, harness_gemm_ab, NULL};

typedef struct harness_mod {
  void *so;
  const asc_module_desc *desc;
  char c_path[512];
  char so_path[512];
} harness_mod;

static inline int harness_run_cc(const char *c_path, const char *so_path) {
  const char *cc = getenv("ASC_CC") ? getenv("ASC_CC") : "cc";
  /* generated C must also be warning-free C */
  char *argv[] = {(char *)cc,      "-O2",         "-std=gnu11",
                  "-Wall",         "-Wextra",     "-Werror",
                  "-fexcess-precision=standard",  "-shared",
                  "-fPIC",         "-o",          (char *)so_path,
                  (char *)c_path,  "-lm",         NULL};
  pid_t pid;
  int st;
  if (posix_spawnp(&pid, cc, NULL, NULL, argv, environ) != 0)
    return -1;
  if (waitpid(pid, &st, 0) < 0)
    return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

typedef struct harness_job {
  const char *ir;
  const char *passes;  /* NULL: standard pipeline; "" none */
  uint64_t passes_off; /* rows the standard pipeline leaves out */
  asc__buf *out;
} harness_job;

static inline int harness_guarded(asc__cctx *c, const harness_job *j) {
  jmp_buf jb;
  c->catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__irmodule *m = asc__ir_parse(c, j->ir, strlen(j->ir));
    asc__compile_opts o;
    asc__compile_opts_init(&o);
    o.verify = true;
    o.only = j->passes;
    o.code.passes_off = j->passes_off;
    asc__cctx_set_opts(c, &o);
    if (j->passes == NULL || j->passes[0] != '\0')
      asc__ir_pipeline(c, m);
    asc__emit_module(c, m, NULL, j->out);
    return 0;
  }
  return 1;
}

/* Writes C text to a fresh file, compiles and loads it; 0 on success. */
static inline int harness_load_c(harness_mod *hm, const char *ctext) {
  static int counter;
  FILE *fp;
  char dir[400];
  snprintf(dir, sizeof dir, "%s/test-emit", ASC_BINARY_DIR);
  mkdir(dir, 0700);
  snprintf(hm->c_path, sizeof hm->c_path, "%s/k%d_%d.c", dir, (int)getpid(),
           counter);
  snprintf(hm->so_path, sizeof hm->so_path, "%s/k%d_%d.so", dir,
           (int)getpid(), counter++);
  fp = fopen(hm->c_path, "w");
  if (fp == NULL)
    return -1;
  fputs(ctext, fp);
  fclose(fp);
  if (harness_run_cc(hm->c_path, hm->so_path) != 0) {
    fprintf(stderr, "cc failed on %s\n", hm->c_path);
    return -1;
  }
  hm->so = dlopen(hm->so_path, RTLD_NOW | RTLD_LOCAL);
  if (hm->so == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return -1;
  }
  hm->desc = (const asc_module_desc *)dlsym(hm->so, ASC_MODULE_SYMBOL);
  return hm->desc ? 0 : -1;
}

/* Compiles IR text to a loaded module, the pipeline leaving out the rows
 * of passes_off (asc__pass_bits); returns 0 on success, printing the
 * diagnostics or the C path on failure. */
static inline int harness_load_off(harness_mod *hm, const char *ir,
                                   const char *passes, uint64_t passes_off) {
  asc__cctx c;
  asc__buf out;
  harness_job j;
  int rc;

  memset(hm, 0, sizeof *hm);
  asc__cctx_init(&c, "test.ir", ir, strlen(ir), 1);
  asc__buf_init(&out);
  j.ir = ir;
  j.passes = passes;
  j.passes_off = passes_off;
  j.out = &out;
  rc = harness_guarded(&c, &j);
  if (rc != 0) {
    fprintf(stderr, "%s", asc__buf_str(&c.diag));
    asc__buf_free(&out);
    asc__cctx_free(&c);
    return -1;
  }
  rc = harness_load_c(hm, asc__buf_str(&out));
  asc__buf_free(&out);
  asc__cctx_free(&c);
  return rc;
}

/* harness_load_off with every pass switched on. */
static inline int harness_load(harness_mod *hm, const char *ir,
                               const char *passes) {
  return harness_load_off(hm, ir, passes, 0);
}

static inline void harness_unload(harness_mod *hm) {
  if (hm->so)
    dlclose(hm->so);
  hm->so = NULL;
}

/* Runs kernel k of the module with args; returns the entry's result. */
static inline int harness_call(const harness_mod *hm, uint32_t k,
                               void *const *args, asc_kexc *exc) {
  asc_kctx ctx;
  static _Alignas(64) unsigned char shared[1 << 16];
  memset(&ctx, 0, sizeof ctx);
  ctx.block_num = 1;
  ctx.rt = &harness_rt;
  ctx.shared = shared;
  memset(exc, 0, sizeof *exc);
  {
    int rc = hm->desc->kernels[k].entry(&ctx, args, exc);
    harness_tmp_end();
    return rc;
  }
}

/* The threaded runtime: HARNESS_TEAM threads take chunks of
 * HARNESS_CHUNK iterations from a shared counter until none is left. */
typedef struct harness_tjob {
  asc_kbody body;
  void *env;
  int64_t n;
  int64_t next;            /* first unclaimed iteration (atomic) */
  int failed;              /* atomic */
  asc_kexc *exc;
  pthread_mutex_t mu;      /* guards *exc */
} harness_tjob;

typedef struct harness_tworker {
  harness_tjob *job;
  int32_t tid;
} harness_tworker;

static inline void *harness_tworker_main(void *arg) {
  harness_tworker *w = (harness_tworker *)arg;
  harness_tjob *j = w->job;
  asc_kexc mine;
  for (;;) {
    int64_t lo = __atomic_fetch_add(&j->next, HARNESS_CHUNK, __ATOMIC_RELAXED);
    int64_t hi = lo + HARNESS_CHUNK < j->n ? lo + HARNESS_CHUNK : j->n;
    if (lo >= j->n || __atomic_load_n(&j->failed, __ATOMIC_RELAXED))
      break;
    memset(&mine, 0, sizeof mine);
    if (j->body(j->env, lo, hi, w->tid, &mine) != 0) {
      pthread_mutex_lock(&j->mu);
      if (!j->failed)
        *j->exc = mine;
      __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
      pthread_mutex_unlock(&j->mu);
      break;
    }
  }
  return NULL;
}

static inline int harness_parallel_for_threads(asc_kctx *ctx, int64_t n,
                                               int64_t min_chunk,
                                               asc_kbody body, void *env,
                                               asc_kexc *exc) {
  harness_tjob j;
  harness_tworker w[HARNESS_TEAM];
  pthread_t th[HARNESS_TEAM];
  int started = 0;
  (void)ctx;
  (void)min_chunk;
  memset(&j, 0, sizeof j);
  j.body = body;
  j.env = env;
  j.n = n;
  j.exc = exc;
  pthread_mutex_init(&j.mu, NULL);
  for (int k = 0; k < HARNESS_TEAM; k++) {
    w[k].job = &j;
    w[k].tid = k;
    if (pthread_create(&th[k], NULL, harness_tworker_main, &w[k]) != 0)
      break;
    started++;
  }
  if (started == 0)
    (void)harness_tworker_main(&w[0]);
  for (int k = 0; k < started; k++)
    pthread_join(th[k], NULL);
  pthread_mutex_destroy(&j.mu);
  return j.failed;
}

static const asc_krt harness_rt_threads = {
    ASC_KABI_VERSION, harness_parallel_for_threads, harness_team_size,
    harness_barrier,  harness_crit_enter,           harness_crit_exit,
    harness_cancelled, harness_alloc,               harness_release,
    harness_keep, harness_gemm, NULL, harness_gemm_ab, NULL};

/* harness_call with parallel loops on HARNESS_TEAM threads. */
static inline int harness_call_threaded(const harness_mod *hm, uint32_t k,
                                        void *const *args, asc_kexc *exc) {
  asc_kctx ctx;
  static _Alignas(64) unsigned char shared[1 << 16];
  memset(&ctx, 0, sizeof ctx);
  ctx.block_num = 1;
  ctx.rt = &harness_rt_threads;
  ctx.shared = shared;
  memset(exc, 0, sizeof *exc);
  {
    int rc = hm->desc->kernels[k].entry(&ctx, args, exc);
    harness_tmp_end();
    return rc;
  }
}

static inline asc_ktensor harness_tensor(void *data, int32_t dtype,
                                         int32_t ndim, const int64_t *shape,
                                         const int64_t *strides) {
  asc_ktensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  t.ndim = ndim;
  for (int32_t k = 0; k < ndim; k++) {
    t.shape[k] = shape[k];
    t.strides[k] = strides[k];
  }
  return t;
}

#endif /* ASC_KERNEL_HARNESS_H */
