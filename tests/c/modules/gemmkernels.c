/*
 * Hand-written kernels for asc_krt.gemm (ABI 3) and asc_krt.gemm_ab
 * (ABI 6), and a module of ABI version 2 that the runtime must still load
 * and run.
 */
#include "asc/kernel_abi.h"

#define F32 11
#define I64 4

/* ---- gemm(a, b, c, status): c = a @ b through ctx->rt->gemm, every
 * block into its own c[block] (c is 3-D: blocks x m x n); status[block]
 * is what gemm returned.  Any dtype and layout: the runtime decides. */
static int gemm_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *a = args[0], *b = args[1], *c = args[2], *st = args[3];
  size_t es = a->dtype == F32 ? 4 : 8;
  char *cb = (char *)c->data + (size_t)(ctx->block_idx * c->strides[0]) * es;
  (void)exc;
  ((int64_t *)st->data)[ctx->block_idx] = ctx->rt->gemm(
      ctx, a->dtype, a->shape[0], b->shape[1], a->shape[1], a->data,
      a->strides[0], a->strides[1], b->data, b->strides[0], b->strides[1],
      cb, c->strides[1], c->strides[2]);
  return 0;
}

static const asc_kparam gemm_params[] = {
    {"a", ASC_KPARAM_TENSOR | ASC_KPARAM_GENERIC, 0, -1},
    {"b", ASC_KPARAM_TENSOR | ASC_KPARAM_GENERIC, 0, -1},
    {"c", ASC_KPARAM_TENSOR | ASC_KPARAM_GENERIC, 0, -1},
    {"status", ASC_KPARAM_TENSOR, I64, 1},
};

/* ---- gemm_ab(a, b, c, ab, status): c = ab[0] * a @ b + ab[1] * c
 * through ctx->rt->gemm_ab (c 2-D, one block); status[0] is what it
 * returned. */
static int gemm_ab_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const asc_ktensor *a = args[0], *b = args[1], *c = args[2], *ab = args[3];
  const asc_ktensor *st = args[4];
  const double *f = ab->data;
  (void)exc;
  ((int64_t *)st->data)[0] = ctx->rt->gemm_ab(
      ctx, a->dtype, a->shape[0], b->shape[1], a->shape[1], f[0], a->data,
      a->strides[0], a->strides[1], b->data, b->strides[0], b->strides[1],
      f[1], c->data, c->strides[0], c->strides[1]);
  return 0;
}

static const asc_kparam gemm_ab_params[] = {
    {"a", ASC_KPARAM_TENSOR | ASC_KPARAM_GENERIC, 0, -1},
    {"b", ASC_KPARAM_TENSOR | ASC_KPARAM_GENERIC, 0, -1},
    {"c", ASC_KPARAM_TENSOR | ASC_KPARAM_GENERIC, 0, -1},
    {"ab", ASC_KPARAM_TENSOR | ASC_KPARAM_GENERIC, 0, -1},
    {"status", ASC_KPARAM_TENSOR, I64, 1},
};

static const asc_kernel_desc kernels[] = {
    {"gemm", gemm_entry, 4, gemm_params, 0, 0, "gemmkernels.py"},
    {"gemm_ab", gemm_ab_entry, 5, gemm_ab_params, 0, 0, "gemmkernels.py"},
};

__attribute__((visibility("default"))) const asc_module_desc asc_module_v1 = {
    ASC_KABI_VERSION, 2, kernels};
