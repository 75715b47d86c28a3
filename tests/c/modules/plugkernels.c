/*
 * Hand-written kernels for the tests of launches made on behalf of a
 * framework (test_launch_sync.c, test_launch_here.c): which thread ran
 * what, two kernels that meet through a flag, one that holds its thread
 * until released and one until the launch is stopped.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "asc/kernel_abi.h"

#define I32 3
#define I64 4

#define TENSOR(n, dt, nd) {n, ASC_KPARAM_TENSOR, dt, nd}

static const char FILE_NAME[] = "plugkernels.py";

static int64_t self_tid(void) { return (int64_t)syscall(SYS_gettid); }

static void pause_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

/* ---- tids(out): block b writes the id of the thread running it into
 * out[b], after a pause that lets other threads reach the launch. */
static int tids_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *out = args[0];
  (void)exc;
  pause_us(50);
  if (ctx->block_idx < (uint32_t)out->shape[0])
    ((int64_t *)out->data)[ctx->block_idx] = self_tid();
  return 0;
}

/* ---- loop_tids(out): one parallel loop over out; iteration i writes the
 * id of the thread running it into out[i]. */
static int64_t loop_tids_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                              asc_kexc *exc) {
  int64_t *o = env;
  (void)tid; (void)exc;
  for (int64_t i = lo; i < hi; i++) {
    pause_us(20);
    o[i] = self_tid();
  }
  return 0;
}

static int loop_tids_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *out = args[0];
  return ctx->rt->parallel_for(ctx, out->shape[0], 1, loop_tids_body,
                               out->data, exc);
}

/* ---- wait_flag(flag): waits until flag[0] != 0; after 20 s raises
 * RuntimeError at line 30 (so a test that would hang fails instead). */
static int wait_flag_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *f = args[0];
  int32_t *flag = f->data;
  (void)ctx;
  for (int i = 0; i < 400000; i++) {
    if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0)
      return 0;
    pause_us(50);
  }
  exc->kind = ASC_KEXC_RUNTIME_ERROR;
  exc->line = 30;
  snprintf(exc->msg, sizeof exc->msg, "flag never set");
  return 1;
}

/* ---- held(state): counts itself in state[0], then waits until state[1]
 * != 0; after 20 s raises RuntimeError at line 40. */
static int held_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *t = args[0];
  int64_t *st = t->data;
  (void)ctx;
  __atomic_fetch_add(&st[0], 1, __ATOMIC_ACQ_REL);
  for (int i = 0; i < 400000; i++) {
    if (__atomic_load_n(&st[1], __ATOMIC_ACQUIRE) != 0)
      return 0;
    pause_us(50);
  }
  exc->kind = ASC_KEXC_RUNTIME_ERROR;
  exc->line = 40;
  snprintf(exc->msg, sizeof exc->msg, "never released");
  return 1;
}

/* ---- spin(state): counts itself in state[0], then polls the launch's
 * stop flag, as generated loops do, until it is stopped. */
static int spin_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *t = args[0];
  __atomic_fetch_add(&((int64_t *)t->data)[0], 1, __ATOMIC_ACQ_REL);
  while (__atomic_load_n(ctx->stop, __ATOMIC_RELAXED) == 0)
    pause_us(20);
  exc->kind = ASC_KEXC_CANCELLED;
  exc->line = 50;
  snprintf(exc->msg, sizeof exc->msg, "launch stopped");
  return 1;
}

/* ---- set_flag(flag): flag[0] = 1. */
static int set_flag_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *f = args[0];
  (void)ctx; (void)exc;
  __atomic_store_n((int32_t *)f->data, 1, __ATOMIC_RELEASE);
  return 0;
}

static const asc_kparam i64_params[] = {TENSOR("out", I64, 1)};
static const asc_kparam flag_params[] = {TENSOR("flag", I32, 1)};

#define K(name, entry, params)                                               \
  {name, entry, sizeof(params) / sizeof(params[0]), params, 0, 0, FILE_NAME}

static const asc_kernel_desc kernels[] = {
    K("tids", tids_entry, i64_params),
    K("loop_tids", loop_tids_entry, i64_params),
    K("wait_flag", wait_flag_entry, flag_params),
    K("set_flag", set_flag_entry, flag_params),
    K("held", held_entry, i64_params),
    K("spin", spin_entry, i64_params),
};

__attribute__((visibility("default"))) const asc_module_desc asc_module_v1 = {
    ASC_KABI_VERSION, sizeof kernels / sizeof kernels[0], kernels};
