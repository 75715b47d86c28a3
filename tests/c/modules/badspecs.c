/*
 * A module whose asc_specs_v1 table (kernel_abi.h) does not describe its
 * kernels: the second entry's signature has the wrong parameter count.
 * ascModuleLoad must refuse it with ascErrorInvalidModule.
 */
#include "asc/kernel_abi.h"

static int entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  (void)ctx;
  (void)args;
  (void)exc;
  return 0;
}

static const asc_kparam params[] = {
    {"x", ASC_KPARAM_TENSOR, 11 /* ascFloat32 */, 1},
};

static const asc_kernel_desc kernels[] = {
    {"k", entry, 1, params, 0, 0, "badspecs.py"},
    {"k", entry, 1, params, 0, 0, "badspecs.py"},
};

__attribute__((visibility("default")))
const asc_module_desc asc_module_v1 = {ASC_KABI_VERSION, 2, kernels};

static const asc_kspec specs[] = {
    {"k(f32[1])", 0},
    {"k(f32[1], i64)", 0},
};

__attribute__((visibility("default")))
const asc_kspecs_desc asc_specs_v1 = {ASC_KABI_VERSION, 2, specs};
