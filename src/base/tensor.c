/*
 * Data types and tensor descriptors: element sizes and names, and the
 * checked extent of a descriptor, which every layer validates with
 * before it multiplies a size.
 */
#include <stdio.h>

#include "base/base.h"

static const char *const short_names[ascDataTypeCount] = {
    "bool", "i8",  "i16", "i32",  "i64", "u8",  "u16",
    "u32",  "u64", "f16", "bf16", "f32", "f64", "c64", "c128"};

const char *asc__dtype_short(ascDataType dt) {
  return (unsigned)dt < ascDataTypeCount ? short_names[dt] : "?";
}

size_t ascDataTypeSize(ascDataType t) {
  static const unsigned char sizes[ascDataTypeCount] = {1, 1, 2, 4, 8, 1, 2,
                                                        4, 8, 2, 2, 4, 8, 8, 16};
  return (unsigned)t < ascDataTypeCount ? sizes[t] : 0;
}

bool asc__tensor_extent(const ascTensor *t, int64_t *lo, int64_t *hi,
                        char *why, size_t whylen) {
  int64_t es = (int64_t)ascDataTypeSize(t->dtype), neg = 0, pos = 0;
  bool empty = false;

  *lo = *hi = 0;
  if (es == 0) {
    snprintf(why, whylen, "tensor has invalid dtype %d", (int)t->dtype);
    return false;
  }
  if (t->ndim < 0 || t->ndim > ASC_MAX_DIMS) {
    snprintf(why, whylen, "tensor has invalid ndim %d (0..%d)", (int)t->ndim,
             ASC_MAX_DIMS);
    return false;
  }
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] < 0) {
      snprintf(why, whylen, "shape[%d] is negative (%lld)", d,
               (long long)t->shape[d]);
      return false;
    }
    empty |= t->shape[d] == 0;
  }
  for (int d = 0; d < t->ndim && !empty; d++) {
    int64_t reach;
    /* (shape - 1) * stride elements from the first element, each way */
    if (__builtin_mul_overflow(t->shape[d] - 1, t->strides[d], &reach) ||
        __builtin_add_overflow(reach < 0 ? neg : pos, reach,
                               reach < 0 ? &neg : &pos)) {
      snprintf(why, whylen,
               "shape[%d] x strides[%d] (%lld x %lld elements) overflows", d,
               d, (long long)t->shape[d], (long long)t->strides[d]);
      return false;
    }
  }
  if (empty)
    return true;
  /* bytes: [neg * es, (pos + 1) * es), and the span must fit a ptrdiff_t */
  {
    int64_t span;
    if (__builtin_mul_overflow(neg, es, lo) ||
        __builtin_add_overflow(pos, 1, &pos) ||
        __builtin_mul_overflow(pos, es, hi) ||
        __builtin_sub_overflow(*hi, *lo, &span) || span > PTRDIFF_MAX) {
      *lo = *hi = 0;
      snprintf(why, whylen,
               "the tensor spans more bytes than an object can hold");
      return false;
    }
  }
  return true;
}

const char *ascDataTypeName(ascDataType t) {
  static const char *const names[ascDataTypeCount] = {
      "bool",   "int8",   "int16",   "int32",    "int64",   "uint8", "uint16",
      "uint32", "uint64", "float16", "bfloat16", "float32", "float64",
      "complex64", "complex128"};
  return (unsigned)t < ascDataTypeCount ? names[t] : NULL;
}
