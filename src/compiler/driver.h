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
#include "internal.h"
#include "kernel_abi.h"

typedef struct asc__pymodule asc__pymodule;
struct asc__cache;

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

/* The per-specialisation stages after the front end: infer types of kernel
 * `kernel` for `signature` (canonical text, e.g. "k(f32[2], i64=3)"; args
 * are the launch arguments it was computed from), lower, run the passes and
 * append the C translation unit to out.  Runs only when neither this
 * process nor the disk cache has the specialisation.  User errors return
 * ascErrorCompile with diagnostics. */
typedef ascError_t (*asc__pymodule_stages_fn)(void *ud, asc__pymodule *m,
                                              int kernel,
                                              const char *signature,
                                              void *const *args,
                                              asc__buf *out);

/* A module over text whose kernels (names, parameter tables; copied) are
 * already known, compiled by stages.  asc__pymodule_create builds one from
 * the front end's results; tests use it directly.  cache NULL means the
 * process's kernel cache. */
ascError_t asc__pymodule_create_with(asc__pymodule **out, const char *text,
                                     size_t len,
                                     const ascCompileOptions *opts,
                                     const ascKernelInfo *kernels,
                                     int nkernels,
                                     asc__pymodule_stages_fn stages,
                                     void *stages_ud,
                                     struct asc__cache *cache);

/* Whether two tensor arguments of a launch of k share memory (the data
 * they span overlaps). */
bool asc__args_overlap(const ascKernelInfo *k, void *const *args);

#endif /* ASC_DRIVER_H */
