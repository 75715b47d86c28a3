/*
 * A kernel's parameter table (ascKernelParamInfo, what ascKernelGetInfo
 * reports and how ascLaunchKernel reads args) from its resolved tree.
 *
 *   x: asc.float32                scalar float32, the bare value
 *   x: int / float / bool         scalar int64 / float64 / bool, bare value
 *   n: asc.ConstExpr[int]         scalar int64, compile-time constant
 *   n: asc.ConstExpr              generic constant (an ascScalar)
 *   t: asc.Tensor[asc.f32, 2]     tensor of that dtype and ndim
 *   t  (unannotated)              generic: a tensor when the kernel (or a
 *                                 helper it passes t to, or a nested
 *                                 function or lambda) indexes it, reads
 *                                 t.shape / t.ndim / t.strides / t.size /
 *                                 t.dtype, or passes it as the array of an
 *                                 atomic or to len(); otherwise a scalar
 *                                 (ascScalar)
 *
 * Annotations the kernel language does not know are left to type inference
 * to report; here they make the parameter generic.
 */
#ifndef ASC_KPARAMS_H
#define ASC_KPARAMS_H

#include "asc/asc.h"
#include "ast.h"
#include "cctx.h"

/* Fills out[0 .. fn->nparams) (names point into c's arena).  May unwind
 * through c on allocation failure. */
void asc__kernel_params(asc__cctx *c, const asc__ast_func *fn,
                        ascKernelParamInfo *out);

#endif /* ASC_KPARAMS_H */
