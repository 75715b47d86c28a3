/*
 * Placeholder until the compiler pipeline lands: every entry point reports
 * that Python kernels cannot be compiled yet.
 */
#include "driver.h"
#include "internal.h"

ascError_t asc__pymodule_create(asc__pymodule **out, const char *text,
                                size_t len, const ascCompileOptions *opts) {
  ASC_UNUSED(text);
  ASC_UNUSED(len);
  ASC_UNUSED(opts);
  if (out != NULL)
    *out = NULL;
  return asc__error(ascErrorUnsupported,
                    "the Python kernel compiler is not built in");
}

void asc__pymodule_destroy(asc__pymodule *m) { ASC_UNUSED(m); }

int asc__pymodule_nkernels(const asc__pymodule *m) {
  ASC_UNUSED(m);
  return 0;
}

ascError_t asc__pymodule_kernel_info(const asc__pymodule *m, int i,
                                     ascKernelInfo *info) {
  ASC_UNUSED(m);
  ASC_UNUSED(info);
  return asc__error(ascErrorInvalidKernel, "no kernel %d", i);
}

ascError_t asc__pymodule_specialize(asc__pymodule *m, int i,
                                    void *const *args,
                                    const asc_kernel_desc **desc) {
  ASC_UNUSED(m);
  ASC_UNUSED(args);
  ASC_UNUSED(desc);
  return asc__error(ascErrorUnsupported, "no kernel %d", i);
}
