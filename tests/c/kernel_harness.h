/*
 * Test harness for generated modules: IR text -> passes -> C -> cc ->
 * dlopen, and a fake runtime whose parallel_for runs the body serially in
 * small chunks (so chunk boundaries are exercised) on "thread" 0.
 *
 * Tests only: the library runs the C compiler through its own driver.
 */
#ifndef ASC_KERNEL_HARNESS_H
#define ASC_KERNEL_HARNESS_H

#include <dlfcn.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cctx.h"
#include "emit_c.h"
#include "ir.h"
#include "kernel_abi.h"
#include "passes/passes.h"

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

static const asc_krt harness_rt = {
    ASC_KABI_VERSION, harness_parallel_for, harness_team_size,
    harness_barrier,  harness_crit_enter,   harness_crit_exit,
    harness_cancelled};

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
  asc__buf *out;
} harness_job;

static inline int harness_guarded(asc__cctx *c, const harness_job *j) {
  jmp_buf jb;
  c->catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__irmodule *m = asc__ir_parse(c, j->ir, strlen(j->ir));
    asc__pipeline_opts o;
    memset(&o, 0, sizeof o);
    o.verify = true;
    o.only = j->passes;
    if (j->passes == NULL || j->passes[0] != '\0')
      asc__ir_pipeline(c, m, &o);
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

/* Compiles IR text to a loaded module; returns 0 on success, printing the
 * diagnostics or the C path on failure. */
static inline int harness_load(harness_mod *hm, const char *ir,
                               const char *passes) {
  asc__cctx c;
  asc__buf out;
  harness_job j;
  int rc;

  memset(hm, 0, sizeof *hm);
  asc__cctx_init(&c, "test.ir", ir, strlen(ir), 1);
  asc__buf_init(&out);
  j.ir = ir;
  j.passes = passes;
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
  return hm->desc->kernels[k].entry(&ctx, args, exc);
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
