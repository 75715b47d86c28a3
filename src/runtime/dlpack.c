/*
 * DLPack tensors in and out of libasc (include/asc/dlpack.h,
 * docs/plugins.md).  A conversion in borrows the producer's memory; a
 * conversion out wraps libasc's descriptor in a managed tensor whose
 * deleter hands the memory back through the caller's release function.
 */
#include <string.h>

#include "asc/dlpack.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/tensor.h"

/* The libasc dtype of a DLPack dtype; ascDataTypeCount if none. */
static ascDataType dtype_from_dl(DLDataType d) {
  static const struct {
    uint8_t code, bits;
    ascDataType t;
  } map[] = {
      {kDLInt, 8, ascInt8},          {kDLInt, 16, ascInt16},
      {kDLInt, 32, ascInt32},        {kDLInt, 64, ascInt64},
      {kDLUInt, 8, ascUInt8},        {kDLUInt, 16, ascUInt16},
      {kDLUInt, 32, ascUInt32},      {kDLUInt, 64, ascUInt64},
      {kDLFloat, 16, ascFloat16},    {kDLFloat, 32, ascFloat32},
      {kDLFloat, 64, ascFloat64},    {kDLBfloat, 16, ascBFloat16},
      {kDLComplex, 64, ascComplex64}, {kDLComplex, 128, ascComplex128},
      {kDLBool, 8, ascBool},
  };
  if (d.lanes != 1)
    return ascDataTypeCount;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].code == d.code && map[i].bits == d.bits)
      return map[i].t;
  return ascDataTypeCount;
}

static DLDataType dtype_to_dl(ascDataType t) {
  static const uint8_t codes[ascDataTypeCount] = {
      [ascBool] = kDLBool,        [ascInt8] = kDLInt,
      [ascInt16] = kDLInt,        [ascInt32] = kDLInt,
      [ascInt64] = kDLInt,        [ascUInt8] = kDLUInt,
      [ascUInt16] = kDLUInt,      [ascUInt32] = kDLUInt,
      [ascUInt64] = kDLUInt,      [ascFloat16] = kDLFloat,
      [ascBFloat16] = kDLBfloat,  [ascFloat32] = kDLFloat,
      [ascFloat64] = kDLFloat,    [ascComplex64] = kDLComplex,
      [ascComplex128] = kDLComplex};
  DLDataType d;
  d.code = codes[t];
  d.bits = (uint8_t)(ascDataTypeSize(t) * 8);
  d.lanes = 1;
  return d;
}

/* Memory the cores can address. */
static bool host_device(int type) {
  return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost ||
         type == kDLCUDAManaged;
}

ascError_t ascTensorFromDLTensor(ascTensor *tensor, const DLTensor *dl) {
  ascTensor t;
  char why[160];
  int64_t lo, hi, acc = 1;

  if (tensor == NULL || dl == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascTensorFromDLTensor: tensor or dl is NULL");
  if (!host_device((int)dl->device.device_type))
    return asc__error(ascErrorUnsupported,
                      "DLPack tensor lives on device type %d; libasc needs "
                      "memory the CPU can address (kDLCPU)",
                      (int)dl->device.device_type);
  memset(&t, 0, sizeof t);
  t.dtype = dtype_from_dl(dl->dtype);
  if (t.dtype == ascDataTypeCount)
    return asc__error(ascErrorUnsupported,
                      "DLPack dtype (code %u, %u bits, %u lanes) is not a "
                      "libasc dtype",
                      (unsigned)dl->dtype.code, (unsigned)dl->dtype.bits,
                      (unsigned)dl->dtype.lanes);
  if (dl->ndim < 0 || dl->ndim > ASC_MAX_DIMS)
    return asc__error(ascErrorInvalidValue,
                      "DLPack tensor has %d dimensions; libasc takes 0..%d",
                      (int)dl->ndim, ASC_MAX_DIMS);
  if (dl->ndim > 0 && dl->shape == NULL)
    return asc__error(ascErrorInvalidValue,
                      "DLPack tensor has %d dimensions and no shape",
                      (int)dl->ndim);
  t.ndim = dl->ndim;
  for (int d = t.ndim - 1; d >= 0; d--) {
    t.shape[d] = dl->shape[d];
    if (dl->strides != NULL) {
      t.strides[d] = dl->strides[d];
    } else {
      t.strides[d] = acc;
      /* only the products are checked here: the extent check below
       * rejects what does not fit in memory */
      if (dl->shape[d] > 0 && __builtin_mul_overflow(acc, dl->shape[d], &acc))
        acc = INT64_MAX;
    }
  }
  if (!asc__tensor_extent(&t, &lo, &hi, why, sizeof why))
    return asc__error(ascErrorInvalidValue, "DLPack tensor: %s", why);
  if (dl->data == NULL && hi != lo)
    return asc__error(ascErrorInvalidValue,
                      "DLPack tensor has elements and a NULL data pointer");
  t.data = dl->data == NULL ? NULL : (char *)dl->data + dl->byte_offset;
  *tensor = t;
  return ascSuccess;
}

ascError_t ascTensorFromDLManagedTensor(ascTensor *tensor,
                                        const DLManagedTensor *m) {
  if (m == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascTensorFromDLManagedTensor: m is NULL");
  return ascTensorFromDLTensor(tensor, &m->dl_tensor);
}

ascError_t ascTensorFromDLManagedTensorVersioned(
    ascTensor *tensor, int *readOnly, const DLManagedTensorVersioned *m) {
  ascError_t err;

  if (m == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascTensorFromDLManagedTensorVersioned: m is NULL");
  if (m->version.major != 1)
    return asc__error(ascErrorUnsupported,
                      "DLPack tensor of major version %u; libasc reads "
                      "version 1",
                      (unsigned)m->version.major);
  err = ascTensorFromDLTensor(tensor, &m->dl_tensor);
  if (err == ascSuccess && readOnly != NULL)
    *readOnly = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return err;
}

ascError_t ascDLPackCheckWritable(ascKernel_t kernel, int param,
                                  int readOnly) {
  ascKernelInfo info;
  ascError_t err;

  memset(&info, 0, sizeof info);
  err = ascKernelGetInfo(&info, kernel);
  if (err != ascSuccess)
    return err;
  if (param < 0 || param >= info.numParams)
    return asc__error(ascErrorInvalidValue,
                      "kernel '%s' has no parameter #%d (it has %d)",
                      info.name, param, info.numParams);
  if (readOnly && info.params[param].isTensor &&
      info.params[param].isWritten)
    return asc__error(ascErrorInvalidValue,
                      "kernel '%s': parameter '%s' is written by the "
                      "kernel, but its DLPack tensor is read-only",
                      info.name, info.params[param].name);
  return ascSuccess;
}

/* ------------------------------------------------------------- export */

/* A managed tensor and the shape, strides and release it owns: one
 * allocation, freed by the deleter. */
typedef struct {
  union {
    DLManagedTensorVersioned v;
    DLManagedTensor u;
  } m;
  int64_t shape[ASC_MAX_DIMS];
  int64_t strides[ASC_MAX_DIMS];
  void (*release)(void *ctx);
  void *ctx;
} export_box;

static void box_free(export_box *b) {
  void (*release)(void *) = b->release;
  void *ctx = b->ctx;
  asc__free(b);
  if (release != NULL)
    release(ctx);
}

static void delete_versioned(DLManagedTensorVersioned *m) {
  if (m != NULL)
    box_free(m->manager_ctx);
}

static void delete_unversioned(DLManagedTensor *m) {
  if (m != NULL)
    box_free(m->manager_ctx);
}

/* A box for t, its shape and strides copied, for an export into *out;
 * NULL with the error recorded. */
static export_box *box_new(const void *out, const ascTensor *t,
                           void (*release)(void *), void *ctx) {
  char why[160];
  int64_t lo, hi;
  export_box *b;

  if (out == NULL) {
    (void)asc__error(ascErrorInvalidValue, "DLPack export: out is NULL");
    return NULL;
  }
  if (t == NULL) {
    (void)asc__error(ascErrorInvalidValue, "DLPack export: tensor is NULL");
    return NULL;
  }
  if (!asc__tensor_extent(t, &lo, &hi, why, sizeof why)) {
    (void)asc__error(ascErrorInvalidValue, "DLPack export: %s", why);
    return NULL;
  }
  if (t->data == NULL && hi != lo) {
    (void)asc__error(ascErrorInvalidValue,
                     "DLPack export: tensor has elements and no data");
    return NULL;
  }
  b = asc__calloc(1, sizeof *b);
  if (b == NULL) {
    (void)asc__error(ascErrorOutOfMemory, "DLPack export: out of memory");
    return NULL;
  }
  for (int d = 0; d < t->ndim; d++) {
    b->shape[d] = t->shape[d];
    b->strides[d] = t->strides[d];
  }
  b->release = release;
  b->ctx = ctx;
  return b;
}

/* dl describes t through b's copies of its shape and strides. */
static void fill_dl(DLTensor *dl, const ascTensor *t, export_box *b) {
  dl->data = t->data;
  dl->device.device_type = kDLCPU;
  dl->device.device_id = 0;
  dl->ndim = t->ndim;
  dl->dtype = dtype_to_dl(t->dtype);
  dl->shape = b->shape;
  dl->strides = b->strides;
  dl->byte_offset = 0;
}

ascError_t ascTensorToDLManagedTensorVersioned(DLManagedTensorVersioned **out,
                                               const ascTensor *t,
                                               uint64_t flags,
                                               void (*release)(void *ctx),
                                               void *ctx) {
  export_box *b = box_new(out, t, release, ctx);

  if (b == NULL)
    return ascPeekAtLastError();
  fill_dl(&b->m.v.dl_tensor, t, b);
  b->m.v.version.major = DLPACK_MAJOR_VERSION;
  b->m.v.version.minor = DLPACK_MINOR_VERSION;
  b->m.v.manager_ctx = b;
  b->m.v.deleter = delete_versioned;
  b->m.v.flags = flags;
  *out = &b->m.v;
  return ascSuccess;
}

ascError_t ascTensorToDLManagedTensor(DLManagedTensor **out,
                                      const ascTensor *t,
                                      void (*release)(void *ctx), void *ctx) {
  export_box *b = box_new(out, t, release, ctx);

  if (b == NULL)
    return ascPeekAtLastError();
  fill_dl(&b->m.u.dl_tensor, t, b);
  b->m.u.manager_ctx = b;
  b->m.u.deleter = delete_unversioned;
  *out = &b->m.u;
  return ascSuccess;
}

/* ------------------------------------------------- deleters in order */

static void run_versioned_deleter(void *p) {
  DLManagedTensorVersioned *m = p;
  if (m->deleter != NULL)
    m->deleter(m);
}

static void run_unversioned_deleter(void *p) {
  DLManagedTensor *m = p;
  if (m->deleter != NULL)
    m->deleter(m);
}

ascError_t ascDLPackDeleteAsync(DLManagedTensorVersioned *m,
                                ascStream_t stream) {
  if (m == NULL)
    return asc__error(ascErrorInvalidValue, "ascDLPackDeleteAsync: m is NULL");
  return ascLaunchHostFunc(stream, run_versioned_deleter, m);
}

ascError_t ascDLPackDeleteAsyncUnversioned(DLManagedTensor *m,
                                           ascStream_t stream) {
  if (m == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascDLPackDeleteAsyncUnversioned: m is NULL");
  return ascLaunchHostFunc(stream, run_unversioned_deleter, m);
}
