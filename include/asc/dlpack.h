/*
 * libasc and DLPack: tensors exchanged with other frameworks (PyTorch,
 * JAX, numpy, ...) without copies.  For framework plugins written in C or
 * C++; docs/plugins.md is the guide.
 *
 * The DLPack types below follow the DLPack 1.x ABI
 * (DLManagedTensorVersioned) and the older DLManagedTensor.  A program
 * that includes a framework's own dlpack.h (ATen/dlpack.h,
 * dlpack/dlpack.h) includes it first: this header then uses its types and
 * declares none.
 *
 * Ownership.  Converting to an ascTensor borrows: the descriptor points
 * into the producer's memory, and the producer keeps that memory until
 * someone calls the managed tensor's deleter.  libasc never calls a
 * deleter by itself: the consumer calls it once, after the last launch
 * that reads or writes the tensor has finished (after a synchronising
 * call, or with ascDLPackDeleteAsync for queued work).  A conversion that
 * fails leaves the deleter to the caller too.
 *
 * Threads.  Every function here is thread-safe.
 */
#ifndef ASC_DLPACK_H
#define ASC_DLPACK_H

#include <stdint.h>

#include "asc/asc.h"

#if !defined(DLPACK_MAJOR_VERSION)
/* -------------------------------------------------- the DLPack 1.x ABI */
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U
} DLDataTypeCode;

typedef struct {
  uint8_t code;   /* DLDataTypeCode */
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;       /* in elements; NULL: compact row-major */
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif /* !DLPACK_MAJOR_VERSION */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------- DLPack -> ascTensor
 * Fill *tensor with a view of dl's memory (data + byte_offset, shape,
 * strides; NULL strides become row-major ones).  The tensor must live in
 * memory the cores can address (kDLCPU, kDLCUDAHost, kDLROCMHost,
 * kDLCUDAManaged), have a libasc dtype with one lane, at most
 * ASC_MAX_DIMS dimensions, non-negative extents and a span that fits in
 * memory; otherwise ascErrorInvalidValue (ascErrorUnsupported for a
 * device or a dtype libasc does not have) with the reason in
 * ascGetLastErrorMessage, and *tensor unchanged. */
ASC_API ascError_t ascTensorFromDLTensor(ascTensor *tensor,
                                         const DLTensor *dl);
/* As ascTensorFromDLTensor, on m->dl_tensor. */
ASC_API ascError_t ascTensorFromDLManagedTensor(ascTensor *tensor,
                                                const DLManagedTensor *m);
/* As ascTensorFromDLTensor, on m->dl_tensor, after checking that the
 * producer speaks DLPack major version 1 (otherwise ascErrorUnsupported:
 * the layout of the rest is unknown; DLPack says the consumer then calls
 * the deleter).  *readOnly (may be NULL) is set to 1 when the producer
 * marked the memory read-only (DLPACK_FLAG_BITMASK_READ_ONLY), else 0: a
 * kernel parameter the kernel writes (ascKernelParamInfo.isWritten) must
 * not receive it (ascDLPackCheckWritable). */
ASC_API ascError_t ascTensorFromDLManagedTensorVersioned(
    ascTensor *tensor, int *readOnly, const DLManagedTensorVersioned *m);

/* ascSuccess if argument param of kernel may receive memory whose
 * read-only flag is readOnly: ascErrorInvalidValue naming the parameter
 * when readOnly is set and the kernel may store through that parameter. */
ASC_API ascError_t ascDLPackCheckWritable(ascKernel_t kernel, int param,
                                          int readOnly);

/* ------------------------------------------------- ascTensor -> DLPack
 * A new managed tensor (*out) describing t's memory (device kDLCPU, 0;
 * shape and strides copied into the wrapper), for a framework to consume
 * (torch.from_dlpack, a capsule named "dltensor_versioned").  flags are
 * DLPACK_FLAG_BITMASK_* bits for the versioned form (READ_ONLY to forbid
 * writes).  Its deleter, which the consumer calls once, frees the wrapper
 * and then calls release(ctx) when release is not NULL: pass ascFree-like
 * cleanup there to hand over memory the caller owns (a kernel's returned
 * array).  On failure release is not called. */
ASC_API ascError_t ascTensorToDLManagedTensorVersioned(
    DLManagedTensorVersioned **out, const ascTensor *t, uint64_t flags,
    void (*release)(void *ctx), void *ctx);
/* The same as an unversioned DLManagedTensor ("dltensor" capsules). */
ASC_API ascError_t ascTensorToDLManagedTensor(DLManagedTensor **out,
                                              const ascTensor *t,
                                              void (*release)(void *ctx),
                                              void *ctx);

/* -------------------------------------------------- deleters, in order
 * Call m's deleter once the work queued on stream before this call has
 * finished (ascLaunchHostFunc: it runs on the runtime's host-callback
 * thread), so that asynchronous launches may use tensors borrowed from
 * m.  A NULL deleter is allowed (nothing is called).  On failure nothing
 * is queued and the deleter is the caller's to call. */
ASC_API ascError_t ascDLPackDeleteAsync(DLManagedTensorVersioned *m,
                                        ascStream_t stream);
ASC_API ascError_t ascDLPackDeleteAsyncUnversioned(DLManagedTensor *m,
                                                   ascStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* ASC_DLPACK_H */
