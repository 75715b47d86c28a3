/*
 * Hand-written kernels that follow the kernel ABI (docs/abi.md), as the
 * compiler would generate them.  Used by the runtime tests.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "asc/kernel_abi.h"

#define F32 11
#define F64 12
#define I32 3
#define I64 4

#define TENSOR(n, dt, nd) {n, ASC_KPARAM_TENSOR, dt, nd}
#define SCALAR(n, dt) {n, 0, dt, 0}

static const char FILE_NAME[] = "testkernels.py";

static void kraise(asc_kexc *exc, int kind, int line, const char *msg) {
  exc->kind = kind;
  exc->line = line;
  snprintf(exc->msg, sizeof exc->msg, "%s", msg);
}

/* ---- empty(): does nothing; with a team, an empty parallel loop. */
static int64_t empty_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                          asc_kexc *exc) {
  (void)env; (void)lo; (void)hi; (void)tid; (void)exc;
  return 0;
}

static int empty_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  (void)ctx; (void)args; (void)exc;
  return 0;
}

static int empty_pf_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  (void)args;
  return ctx->rt->parallel_for(ctx, ctx->rt->team_size(ctx), 1, empty_body,
                               NULL, exc);
}

/* ---- vadd(a, b, c): c = a + b over float32 vectors, split by block and
 * then by parallel loop. */
typedef struct vadd_env {
  const float *a, *b;
  float *c;
  int64_t base;
} vadd_env;

static int64_t vadd_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                         asc_kexc *exc) {
  vadd_env *e = env;
  (void)tid; (void)exc;
  for (int64_t i = lo; i < hi; i++)
    e->c[e->base + i] = e->a[e->base + i] + e->b[e->base + i];
  return 0;
}

static int vadd_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *a = args[0], *b = args[1], *c = args[2];
  int64_t n = a->shape[0];
  int64_t per = (n + ctx->block_num - 1) / ctx->block_num;
  int64_t lo = per * ctx->block_idx, hi = lo + per;
  vadd_env e = {a->data, b->data, c->data, lo};
  if (hi > n)
    hi = n;
  if (lo >= hi)
    return 0;
  return ctx->rt->parallel_for(ctx, hi - lo, 16, vadd_body, &e, exc);
}

/* ---- raise_at(x, at): parallel loop over x; iteration `at` raises
 * ValueError at line 42.  x[i] = 1 for iterations that ran. */
typedef struct raise_env {
  int32_t *x;
  int64_t at;
} raise_env;

static int64_t raise_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                          asc_kexc *exc) {
  raise_env *e = env;
  (void)tid;
  for (int64_t i = lo; i < hi; i++) {
    if (i == e->at || (e->at < 0 && i % 7 == 3)) {
      char m[64];
      snprintf(m, sizeof m, "bad value at %lld", (long long)i);
      kraise(exc, ASC_KEXC_VALUE_ERROR, 42, m);
      return i + 1;
    }
    e->x[i] = 1;
  }
  return 0;
}

static int raise_at_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *x = args[0];
  raise_env e = {x->data, *(const int64_t *)args[1]};
  return ctx->rt->parallel_for(ctx, x->shape[0], 1, raise_body, &e, exc);
}

/* ---- raise_block(kind, mask): blocks whose bit is set in mask raise
 * exception `kind` at line 100 + block index. */
static int raise_block_entry(asc_kctx *ctx, void *const *args,
                             asc_kexc *exc) {
  int32_t kind = *(const int32_t *)args[0];
  int64_t mask = *(const int64_t *)args[1];
  if (ctx->block_idx < 63 && (mask >> ctx->block_idx) & 1) {
    char m[64];
    snprintf(m, sizeof m, "block %u failed", ctx->block_idx);
    kraise(exc, kind, 100 + (int)ctx->block_idx, m);
    return 1;
  }
  return 0;
}

/* ---- prefix(x, y): uses barriers.  Block b writes x[b] = b + 1, waits
 * for all blocks, then y[b] = x[0] + ... + x[b]; waits again and block 0
 * checks nobody is early. */
static int prefix_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *x = args[0], *y = args[1];
  int64_t *xs = x->data, *ys = y->data, s = 0;
  uint32_t b = ctx->block_idx;
  xs[b] = b + 1;
  if (ctx->rt->barrier(ctx))
    return 0;
  for (uint32_t i = 0; i <= b; i++)
    s += __atomic_load_n(&xs[i], __ATOMIC_RELAXED);
  ys[b] = s;
  if (ctx->rt->barrier(ctx))
    return 0;
  xs[b] = 0;
  if (ctx->rt->barrier(ctx))
    return 0;
  if (b == 0 && ctx->block_num > 1 && __atomic_load_n(&xs[1], __ATOMIC_RELAXED) != 0) {
    kraise(exc, ASC_KEXC_RUNTIME_ERROR, 7, "barrier let a block through");
    return 1;
  }
  return 0;
}

/* ---- barrier_raise(): block 1 raises before the barrier; the others
 * wait at it and must be released. */
static int barrier_raise_entry(asc_kctx *ctx, void *const *args,
                               asc_kexc *exc) {
  (void)args;
  if (ctx->block_idx == 1) {
    kraise(exc, ASC_KEXC_ASSERTION_ERROR, 9, "block 1 gives up");
    return 1;
  }
  if (ctx->rt->barrier(ctx))
    return 0;
  return 0;
}

/* ---- misuse(where): calls barrier inside a parallel loop (where=1) or
 * without the kernel flag (kernel misuse_noflag); must fail, not hang. */
static int64_t misuse_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                           asc_kexc *exc) {
  asc_kctx *ctx = env;
  (void)lo; (void)hi; (void)tid; (void)exc;
  ctx->rt->barrier(ctx);
  return 0;
}

static int misuse_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  (void)args;
  if (ctx->rt->parallel_for(ctx, 64, 1, misuse_body, ctx, exc))
    return 1;
  return 0;
}

static int misuse_noflag_entry(asc_kctx *ctx, void *const *args,
                               asc_kexc *exc) {
  (void)args; (void)exc;
  ctx->rt->barrier(ctx);
  return 0;
}

/* ---- reduce(x, out): out[block] = sum of x, with per-thread partials. */
typedef struct reduce_env {
  const double *x;
  double part[256];
} reduce_env;

static int64_t reduce_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                           asc_kexc *exc) {
  reduce_env *e = env;
  (void)exc;
  for (int64_t i = lo; i < hi; i++)
    e->part[tid] += e->x[i];
  return 0;
}

static int reduce_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *x = args[0], *out = args[1];
  reduce_env e;
  double s = 0;
  int32_t t = ctx->rt->team_size(ctx);
  memset(&e, 0, sizeof e);
  e.x = x->data;
  if (t > 256) {
    kraise(exc, ASC_KEXC_RUNTIME_ERROR, 1, "team too large");
    return 1;
  }
  if (ctx->rt->parallel_for(ctx, x->shape[0], 8, reduce_body, &e, exc))
    return 1;
  for (int i = 0; i < t; i++)
    s += e.part[i];
  ((double *)out->data)[ctx->block_idx] = s;
  return 0;
}

/* ---- whoami(out): out[b*4+0] = team size, out[b*4+1] = distinct tids
 * seen in a parallel loop, out[b*4+2] = block_num, out[b*4+3] = 1. */
typedef struct who_env {
  int seen[256];
} who_env;

static int64_t who_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                        asc_kexc *exc) {
  who_env *e = env;
  struct timespec ts = {0, 20000};
  (void)exc; (void)lo; (void)hi;
  if (tid >= 0 && tid < 256)
    __atomic_store_n(&e->seen[tid], 1, __ATOMIC_RELAXED);
  nanosleep(&ts, NULL);
  return 0;
}

static int whoami_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *out = args[0];
  int32_t *o = (int32_t *)out->data + 4 * ctx->block_idx;
  int32_t t = ctx->rt->team_size(ctx), n = 0;
  who_env e;
  memset(&e, 0, sizeof e);
  if (ctx->rt->parallel_for(ctx, (int64_t)t * 64, 1, who_body, &e, exc))
    return 1;
  for (int i = 0; i < 256; i++)
    n += e.seen[i];
  if (e.seen[0] == 0 && t > 0 && n == 0)
    n = -1;
  for (int i = t; i < 256; i++)
    if (e.seen[i])
      n = -1000;   /* tid out of range */
  o[0] = t;
  o[1] = n;
  o[2] = (int32_t)ctx->block_num;
  o[3] = 1;
  return 0;
}

/* ---- sleepy(us): every block sleeps us microseconds. */
static int sleepy_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  int32_t us = *(const int32_t *)args[0];
  struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
  (void)ctx; (void)exc;
  nanosleep(&ts, NULL);
  return 0;
}

/* ---- gate(flag): waits until flag[0] becomes non-zero (set by the test
 * from the host), so a stream stays busy exactly as long as a test needs. */
static int gate_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *f = args[0];
  int32_t *flag = f->data;
  struct timespec ts = {0, 50000};
  (void)ctx; (void)exc;
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0)
    nanosleep(&ts, NULL);
  return 0;
}

/* Waits until *flag is set, for about 5 s at most; false if it never is. */
static bool wait_flag(const int64_t *flag) {
  struct timespec ts = {0, 20000}, t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - t0.tv_sec > 5)
      return false;
    nanosleep(&ts, NULL);
  }
  return true;
}

/* ---- hold(state): counts itself in state[0], then waits until state[1]
 * is set (by release), for about 5 s at most: then raises RuntimeError. */
static int hold_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *t = args[0];
  int64_t *st = t->data;
  (void)ctx;
  __atomic_fetch_add(&st[0], 1, __ATOMIC_ACQ_REL);
  if (!wait_flag(&st[1])) {
    kraise(exc, ASC_KEXC_RUNTIME_ERROR, 7, "hold: never released");
    return 1;
  }
  return 0;
}

/* ---- release(state, tid): sets state[1]; tid[0] = the running thread's
 * id. */
static int release_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *t = args[0], *tid = args[1];
  (void)ctx; (void)exc;
  *(int64_t *)tid->data = (int64_t)syscall(SYS_gettid);
  __atomic_store_n(&((int64_t *)t->data)[1], 1, __ATOMIC_RELEASE);
  return 0;
}

/* ---- rendezvous(state): a parallel loop of two iterations that wait for
 * each other (state[0] counts arrivals), so two threads must be in it at
 * once; after about 5 s alone an iteration raises RuntimeError. */
static int64_t rendezvous_body(void *env, int64_t lo, int64_t hi,
                               int32_t tid, asc_kexc *exc) {
  int64_t *st = env;
  struct timespec ts = {0, 20000}, t0, now;
  (void)tid;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int64_t i = lo; i < hi; i++) {
    __atomic_fetch_add(&st[0], 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&st[0], __ATOMIC_ACQUIRE) < 2) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (now.tv_sec - t0.tv_sec > 5) {
        kraise(exc, ASC_KEXC_RUNTIME_ERROR, 9, "rendezvous: alone");
        return i + 1;
      }
      nanosleep(&ts, NULL);
    }
  }
  return 0;
}

static int rendezvous_entry(asc_kctx *ctx, void *const *args,
                            asc_kexc *exc) {
  const asc_ktensor *t = args[0];
  return ctx->rt->parallel_for(ctx, 2, 1, rendezvous_body, t->data, exc);
}

/* ---- late_rendezvous(state): state[3] = the leading thread's id; waits
 * until state[2] is set (about 5 s at most), then runs rendezvous's loop
 * on state[0]. */
static int late_rendezvous_entry(asc_kctx *ctx, void *const *args,
                                 asc_kexc *exc) {
  const asc_ktensor *t = args[0];
  int64_t *st = t->data;
  __atomic_store_n(&st[3], (int64_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
  if (!wait_flag(&st[2])) {
    kraise(exc, ASC_KEXC_RUNTIME_ERROR, 10, "late_rendezvous: never let go");
    return 1;
  }
  return ctx->rt->parallel_for(ctx, 2, 1, rendezvous_body, st, exc);
}

/* ---- affine(x, mul, add): x[i] = x[i] * mul + add, one block, parallel
 * loop.  Order of launches changes the result. */
typedef struct affine_env {
  int64_t *x;
  int64_t mul, add;
} affine_env;

static int64_t affine_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                           asc_kexc *exc) {
  affine_env *e = env;
  (void)tid; (void)exc;
  for (int64_t i = lo; i < hi; i++)
    e->x[i] = e->x[i] * e->mul + e->add;
  return 0;
}

static int affine_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *x = args[0];
  affine_env e = {x->data, *(const int64_t *)args[1],
                  *(const int64_t *)args[2]};
  int64_t n = x->shape[0];
  int64_t per = (n + ctx->block_num - 1) / ctx->block_num;
  int64_t lo = per * ctx->block_idx;
  if (lo >= n)
    return 0;
  e.x += lo;
  return ctx->rt->parallel_for(ctx, lo + per > n ? n - lo : per, 4,
                               affine_body, &e, exc);
}

/* ---- append(log, v): log[0] counts entries, log[1 + k] = v. */
static int append_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *log = args[0];
  int32_t *l = log->data;
  (void)exc;
  if (ctx->block_idx == 0) {
    int32_t k = l[0]++;
    if (k + 1 < log->shape[0])
      l[1 + k] = *(const int32_t *)args[1];
  }
  return 0;
}

/* ---- critical(c, n): parallel loop of n iterations, each adds 1 to c[0]
 * inside the critical section; also counts blocks. */
typedef struct crit_env {
  asc_kctx *ctx;
  int64_t *c;
} crit_env;

static int64_t crit_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                         asc_kexc *exc) {
  crit_env *e = env;
  (void)tid; (void)exc;
  for (int64_t i = lo; i < hi; i++) {
    e->ctx->rt->critical_enter(e->ctx);
    e->c[0]++;
    e->ctx->rt->critical_exit(e->ctx);
  }
  return 0;
}

static int critical_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *c = args[0];
  crit_env e = {ctx, c->data};
  return ctx->rt->parallel_for(ctx, *(const int64_t *)args[1], 1, crit_body,
                               &e, exc);
}

/* ---- generic(t, s): a generic tensor and a generic scalar; writes the
 * scalar's value (as int64) into t[0] when t is int64. */
static int generic_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *t = args[0];
  const asc_kscalar *s = args[1];
  (void)exc;
  if (ctx->block_idx == 0 && t->dtype == I64 && t->ndim >= 1 &&
      t->shape[0] > 0)
    ((int64_t *)t->data)[0] = s->value.i;
  return 0;
}

/* ---- shared(out): writes block index into shared scratch, reads back. */
static int shared_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *out = args[0];
  uint32_t *sh = ctx->shared;
  (void)exc;
  if (sh == NULL || ((uintptr_t)sh & 63) != 0)
    return 0;
  for (int i = 0; i < 1024; i++)
    sh[i] = ctx->block_idx;
  ((int32_t *)out->data)[ctx->block_idx] = (int32_t)sh[1023] + 1;
  return 0;
}

/* ---- once(out), flagged ASC_KERNEL_NOT_SPMD: counts its runs in out[0]
 * and records block_idx, block_num and its team's size. */
static int once_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  int64_t *out = ((const asc_ktensor *)args[0])->data;
  (void)exc;
  __atomic_fetch_add(&out[0], 1, __ATOMIC_RELAXED);
  out[1] = ctx->block_idx;
  out[2] = ctx->block_num;
  out[3] = ctx->rt->team_size(ctx);
  return 0;
}

static const asc_kparam vadd_params[] = {
    TENSOR("a", F32, 1), TENSOR("b", F32, 1), TENSOR("c", F32, 1)};
static const asc_kparam raise_params[] = {TENSOR("x", I32, 1),
                                          SCALAR("at", I64)};
static const asc_kparam raise_block_params[] = {SCALAR("kind", I32),
                                                SCALAR("mask", I64)};
static const asc_kparam prefix_params[] = {TENSOR("x", I64, 1),
                                           TENSOR("y", I64, 1)};
static const asc_kparam reduce_params[] = {TENSOR("x", F64, 1),
                                           TENSOR("out", F64, 1)};
static const asc_kparam who_params[] = {TENSOR("out", I32, 1)};
static const asc_kparam sleepy_params[] = {SCALAR("us", I32)};
static const asc_kparam affine_params[] = {
    TENSOR("x", I64, 1), SCALAR("mul", I64), SCALAR("add", I64)};
static const asc_kparam gate_params[] = {TENSOR("flag", I32, 1)};
static const asc_kparam hold_params[] = {TENSOR("state", I64, 1)};
static const asc_kparam release_params[] = {TENSOR("state", I64, 1),
                                            TENSOR("tid", I64, 1)};
static const asc_kparam append_params[] = {TENSOR("log", I32, 1),
                                           SCALAR("v", I32)};
static const asc_kparam critical_params[] = {TENSOR("c", I64, 1),
                                             SCALAR("n", I64)};
static const asc_kparam generic_params[] = {
    {"t", ASC_KPARAM_TENSOR | ASC_KPARAM_GENERIC, 0, -1},
    {"s", ASC_KPARAM_GENERIC, 0, 0}};
static const asc_kparam shared_params[] = {TENSOR("out", I32, 1)};
static const asc_kparam once_params[] = {TENSOR("out", I64, 1)};

#define K(name, entry, params, flags, shared)                                \
  {name, entry, sizeof(params) / sizeof(params[0]), params, flags, shared,   \
   FILE_NAME}

static const asc_kernel_desc kernels[] = {
    {"empty", empty_entry, 0, NULL, 0, 0, FILE_NAME},
    {"empty_pf", empty_pf_entry, 0, NULL, 0, 0, FILE_NAME},
    K("vadd", vadd_entry, vadd_params, 0, 0),
    K("raise_at", raise_at_entry, raise_params, 0, 0),
    K("raise_block", raise_block_entry, raise_block_params, 0, 0),
    K("prefix", prefix_entry, prefix_params, ASC_KERNEL_USES_BARRIER, 0),
    {"barrier_raise", barrier_raise_entry, 0, NULL, ASC_KERNEL_USES_BARRIER,
     0, FILE_NAME},
    {"misuse", misuse_entry, 0, NULL, ASC_KERNEL_USES_BARRIER, 0, FILE_NAME},
    {"misuse_noflag", misuse_noflag_entry, 0, NULL, 0, 0, FILE_NAME},
    K("reduce", reduce_entry, reduce_params, 0, 0),
    K("whoami", whoami_entry, who_params, 0, 0),
    K("sleepy", sleepy_entry, sleepy_params, 0, 0),
    K("affine", affine_entry, affine_params, 0, 0),
    K("gate", gate_entry, gate_params, 0, 0),
    K("hold", hold_entry, hold_params, 0, 0),
    K("release", release_entry, release_params, 0, 0),
    K("rendezvous", rendezvous_entry, hold_params, 0, 0),
    K("late_rendezvous", late_rendezvous_entry, hold_params, 0, 0),
    K("append", append_entry, append_params, 0, 0),
    K("critical", critical_entry, critical_params, 0, 0),
    K("generic", generic_entry, generic_params, 0, 0),
    K("shared", shared_entry, shared_params, 0, 4096),
    K("once", once_entry, once_params, ASC_KERNEL_NOT_SPMD, 0),
};

__attribute__((visibility("default"))) const asc_module_desc asc_module_v1 = {
    ASC_KABI_VERSION, sizeof kernels / sizeof kernels[0], kernels};
