/* Tensor descriptors (base/tensor.c). */
#ifndef ASC_BASE_TENSOR_H
#define ASC_BASE_TENSOR_H

#include "base/base.h"

/* The short name of a dtype, as signatures and the IR's text spell it:
 * "f32", "bf16", "i64", "u8", "bool", "c64"; "?" for an invalid one. */
const char *asc__dtype_short(ascDataType dt);

/* The bytes a tensor's elements span around its data pointer: offsets
 * [*lo, *hi) (0, 0 when some extent is 0), computed with overflow checks.
 * False, with the reason in why, when the descriptor cannot describe
 * memory: an invalid dtype, ndim outside 0..ASC_MAX_DIMS, a negative
 * extent, or a shape x stride x item size that does not fit in a ptrdiff_t
 * (no object is larger).  Every size derived from a descriptor is
 * validated through this before it is multiplied anywhere else. */
bool asc__tensor_extent(const ascTensor *t, int64_t *lo, int64_t *hi,
                        char *why, size_t whylen);

#endif /* ASC_BASE_TENSOR_H */
