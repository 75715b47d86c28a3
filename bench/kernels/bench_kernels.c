/*
 * Kernels for the benchmarks, written against the kernel ABI
 * (docs/abi.md) as generated code would be.
 */
#include "asc/kernel_abi.h"

static int64_t nop_body(void *env, int64_t lo, int64_t hi, int32_t tid,
                        asc_kexc *exc) {
  (void)env; (void)lo; (void)hi; (void)tid; (void)exc;
  return 0;
}

/* empty(): nothing at all. */
static int empty_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  (void)ctx; (void)args; (void)exc;
  return 0;
}

/* empty_team(): an empty parallel loop with one iteration per team
 * thread, so every core takes part (the OpenMP `parallel for` analogue). */
static int empty_team_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  (void)args;
  return ctx->rt->parallel_for(ctx, ctx->rt->team_size(ctx), 1, nop_body,
                               0, exc);
}

/* empty_args(a, b, c, s): nothing, with the arguments a launch of a
 * small array kernel checks: three float32 vectors and a generic scalar. */
static const asc_kparam empty_args_params[] = {
    {"a", ASC_KPARAM_TENSOR, 11, 1},
    {"b", ASC_KPARAM_TENSOR, 11, 1},
    {"c", ASC_KPARAM_TENSOR, 11, 1},
    {"s", ASC_KPARAM_GENERIC, 0, 0}};

static const asc_kernel_desc kernels[] = {
    {"empty", empty_entry, 0, 0, 0, 0, "bench_kernels.py"},
    {"empty_team", empty_team_entry, 0, 0, 0, 0, "bench_kernels.py"},
    {"empty_args", empty_entry, 4, empty_args_params, 0, 0,
     "bench_kernels.py"},
};

__attribute__((visibility("default"))) const asc_module_desc asc_module_v1 = {
    ASC_KABI_VERSION, 3, kernels};
