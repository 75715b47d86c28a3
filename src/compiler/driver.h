/*
 * The compiler as the runtime sees it.  A module loaded from Python text
 * (ascModuleLoadPython) owns one asc__pymodule: the parsed and resolved
 * source, the kernels' parameter tables, and the specialisations compiled so
 * far (signature -> loaded shared object), looked up by hash at launch.
 *
 * Pipeline per specialisation (driver.c):
 *   text -> lex/parse/resolve (once per module) -> infer types for the
 *   signature -> lower to IR -> passes -> emit C -> cache lookup / cc ->
 *   dlopen -> asc_kernel_desc
 */
#ifndef ASC_DRIVER_H
#define ASC_DRIVER_H

#include "asc/asc.h"
#include "kernel_abi.h"

typedef struct asc__pymodule asc__pymodule;

/* Parses and resolves text.  Compile errors return ascErrorCompile with the
 * diagnostics as the thread's last error message. */
ascError_t asc__pymodule_create(asc__pymodule **out, const char *text,
                                size_t len, const ascCompileOptions *opts);
/* Unloads every specialisation.  The caller guarantees no launch of the
 * module is still running. */
void asc__pymodule_destroy(asc__pymodule *m);

int asc__pymodule_nkernels(const asc__pymodule *m);
/* Kernel i's name and parameter table (owned by m). */
ascError_t asc__pymodule_kernel_info(const asc__pymodule *m, int i,
                                     ascKernelInfo *info);

/* The entry of kernel i specialised for these launch arguments (args as in
 * ascLaunchKernel), compiled on first use, then found by a hash lookup that
 * does not touch the source.  Thread-safe; two threads asking for the same
 * new signature compile it once.  Arguments that fit no specialisation
 * return ascErrorInvalidValue naming the parameter. */
ascError_t asc__pymodule_specialize(asc__pymodule *m, int i,
                                    void *const *args,
                                    const asc_kernel_desc **desc);

#endif /* ASC_DRIVER_H */
