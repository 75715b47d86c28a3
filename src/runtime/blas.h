/*
 * asc_krt.gemm (blas.c): matrix products on a BLAS loaded at first use.
 */
#ifndef ASC_RUNTIME_BLAS_H
#define ASC_RUNTIME_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "asc/kernel_abi.h"

/* The service itself (asc_krt.gemm; kernel_abi.h says what it does). */
int asc__krt_gemm(asc_kctx *ctx, int32_t dtype, int64_t m, int64_t n,
                  int64_t k, const void *a, int64_t sa0, int64_t sa1,
                  const void *b, int64_t sb0, int64_t sb1, void *c,
                  int64_t sc0, int64_t sc1);

/* asc_krt.gemm_ab: c = alpha * (a @ b) + beta * c. */
int asc__krt_gemm_ab(asc_kctx *ctx, int32_t dtype, int64_t m, int64_t n,
                     int64_t k, double alpha, const void *a, int64_t sa0,
                     int64_t sa1, const void *b, int64_t sb0, int64_t sb1,
                     double beta, void *c, int64_t sc0, int64_t sc1);

/* asc_krt.linalg's ASC_KLINALG_DOTS (kernel_abi.h): m dot products of
 * vectors of n elements in one pass, on the team; needs no library. */
int asc__krt_dots(asc_kctx *ctx, int32_t dtype, int64_t m, int64_t n,
                  int32_t nops, void *const *data, const int64_t *strides);

/* asc_krt.linalg's ASC_KLINALG_GEMV2: a @ p and r @ a in one pass over
 * a, on the team; needs no library. */
int asc__krt_gemv2(asc_kctx *ctx, int32_t dtype, int64_t m, int64_t n,
                   int64_t flags, int32_t nops, void *const *data,
                   const int64_t *strides);

/* The library loaded (its path or soname), loading it on the first call;
 * NULL when none could be loaded. */
const char *asc__blas_library(void);

/* Takes (true) or gives back (false) the lock of a sequential OpenBLAS,
 * which takes one call at a time from the whole process (asc__blas's
 * one_at_a_time): LAPACK's calls into it (lapack.c) take it too. */
void asc__blas_one_lock(bool take);

#endif /* ASC_RUNTIME_BLAS_H */
