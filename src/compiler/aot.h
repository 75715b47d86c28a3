/*
 * Modules compiled ahead of time (`ascc --emit=so`): one shared object
 * holding several specialisations of each kernel, described by the optional
 * asc_specs_v1 table (kernel_abi.h).  The runtime shows one kernel per name
 * and, at launch, picks the entry whose signature the arguments fit.
 * Nothing here compiles: a launch no entry fits is an error that lists the
 * signatures the module has.
 */
#ifndef ASC_AOT_H
#define ASC_AOT_H

#include "asc/asc.h"
#include "internal.h"
#include "kernel_abi.h"

typedef struct asc__aot asc__aot;

/* Groups the entries of md by kernel name and reads their signatures from
 * sd.  A table that does not describe md returns ascErrorInvalidModule
 * naming path. */
ascError_t asc__aot_create(asc__aot **out, const char *path,
                           const asc_module_desc *md,
                           const asc_kspecs_desc *sd);
void asc__aot_destroy(asc__aot *a);

int asc__aot_nkernels(const asc__aot *a);
/* Kernel i's name and parameter table (owned by a): tensors are generic
 * (their dtype and ndim select the entry), scalars as the source says. */
void asc__aot_kernel_info(const asc__aot *a, int i, ascKernelInfo *info);

/* The entry of kernel i the launch arguments fit: dtypes, ndims, layouts
 * (a contiguous entry needs contiguous tensors; a strided one takes any),
 * weak scalars, ConstExpr values, and overlapping tensors only for entries
 * compiled for them.  Several fits: the most specialised.  None:
 * ascErrorInvalidValue with the launch's signature and the module's. */
ascError_t asc__aot_select(const asc__aot *a, int i, void *const *args,
                           const asc_kernel_desc **desc);

#endif /* ASC_AOT_H */
