/*
 * asc_krt.linalg (lapack.c): np.linalg on a LAPACK loaded at first use.
 */
#ifndef ASC_RUNTIME_LAPACK_H
#define ASC_RUNTIME_LAPACK_H

#include <stdint.h>

#include "asc/kernel_abi.h"

/* The service itself (asc_krt.linalg; kernel_abi.h says what it does). */
int asc__krt_linalg(asc_kctx *ctx, int32_t op, int32_t dtype, int64_t m,
                    int64_t n, int64_t k, int32_t nops, void *const *data,
                    const int64_t *strides);

/* The library loaded (its path or soname), loading it on the first call;
 * NULL when none could be loaded. */
const char *asc__lapack_library(void);

#endif /* ASC_RUNTIME_LAPACK_H */
