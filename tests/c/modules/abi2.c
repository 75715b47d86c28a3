/*
 * A module built for ABI version 2 (before asc_krt.gemm): the runtime
 * still loads and runs it.  fill(x, v): x[i] = v, through a temporary
 * of version 2's alloc/release.  count(x): x[0] += 1 in every block, with
 * a flag bit that version 2 did not define (ASC_KERNEL_NOT_SPMD's since
 * version 5), which must not change how it runs.
 */
#include <string.h>

#include "asc/kernel_abi.h"

#define F32 11
#define I32 3

/* Block b fills x[b], x[b + blocks], ... */
static int fill_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *x = args[0];
  float v = *(const float *)args[1];
  float *t = ctx->rt->alloc(ctx, sizeof *t);
  (void)exc;
  if (t == NULL)
    return 0;
  *t = v;
  for (int64_t i = ctx->block_idx; i < x->shape[0]; i += ctx->block_num)
    memcpy((float *)x->data + i, t, sizeof *t);
  ctx->rt->release(ctx, t);
  return 0;
}

static int count_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *x = args[0];
  (void)ctx;
  (void)exc;
  __atomic_fetch_add((int32_t *)x->data, 1, __ATOMIC_RELAXED);
  return 0;
}

static const asc_kparam fill_params[] = {
    {"x", ASC_KPARAM_TENSOR, F32, 1},
    {"v", 0, F32, 0},
};

static const asc_kparam count_params[] = {{"x", ASC_KPARAM_TENSOR, I32, 1}};

static const asc_kernel_desc kernels[] = {
    {"fill", fill_entry, 2, fill_params, 0, 0, "abi2.py"},
    {"count", count_entry, 1, count_params, 1u << 1, 0, "abi2.py"},
};

__attribute__((visibility("default"))) const asc_module_desc asc_module_v1 = {
    2, sizeof kernels / sizeof kernels[0], kernels};
