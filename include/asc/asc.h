/*
 * libasc — Python-written compute kernels on the cores of this machine.
 *
 * A CUDA-runtime-style C API: every function returns an ascError_t, handles
 * are opaque, out-parameters come first.  See docs/ for the execution model,
 * the kernel ABI and the kernel language.
 */
#ifndef ASC_ASC_H
#define ASC_ASC_H

#include <stddef.h>
#include <stdint.h>

#include "asc/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ASC_BUILDING_LIBRARY)
#define ASC_API __attribute__((visibility("default")))
#else
#define ASC_API
#endif

/* ---------------------------------------------------------------- errors */

/* X(enum name, value, message).  One list generates the enum,
 * ascGetErrorName and ascGetErrorString. */
#define ASC_ERROR_MAP(X)                                                      \
  X(ascSuccess, 0, "no error")                                                \
  X(ascErrorInvalidValue, 1, "invalid argument")                              \
  X(ascErrorOutOfMemory, 2, "out of memory")                                  \
  X(ascErrorNotInitialized, 3, "runtime not initialized")                     \
  X(ascErrorInvalidHandle, 4, "invalid or destroyed handle")                  \
  X(ascErrorNotReady, 5, "work not complete")                                 \
  X(ascErrorNotPermitted, 6, "operation not permitted here")                  \
  X(ascErrorCompile, 7, "kernel compilation failed")                          \
  X(ascErrorKernelException, 8, "kernel raised an exception")                 \
  X(ascErrorLaunchFailure, 9, "kernel launch failed")                         \
  X(ascErrorFileNotFound, 10, "file not found")                               \
  X(ascErrorUnsupported, 11, "operation not supported")                       \
  X(ascErrorTimeout, 12, "timed out")                                         \
  X(ascErrorInternal, 13, "internal error")                                   \
  X(ascErrorInvalidDevice, 14, "invalid device ordinal")                      \
  X(ascErrorNoDevice, 15, "no usable cores")                                  \
  X(ascErrorInvalidKernel, 16, "kernel not found in module")                  \
  X(ascErrorInvalidModule, 17, "not a valid libasc module")                   \
  X(ascErrorCache, 18, "kernel cache unusable")

typedef enum ascError {
#define ASC_ERROR_ENUM_(name, value, msg) name = value,
  ASC_ERROR_MAP(ASC_ERROR_ENUM_)
#undef ASC_ERROR_ENUM_
} ascError_t;

/* "ascErrorInvalidValue"; "unrecognized error code" for unknown codes. */
ASC_API const char *ascGetErrorName(ascError_t error);
/* "invalid argument"; "unrecognized error code" for unknown codes. */
ASC_API const char *ascGetErrorString(ascError_t error);
/* The last error of the calling thread; resets it to ascSuccess. */
ASC_API ascError_t ascGetLastError(void);
/* The last error of the calling thread, left in place. */
ASC_API ascError_t ascPeekAtLastError(void);
/* Detailed text of this thread's last failure ("" if none): compile
 * diagnostics, kernel exceptions with file:line, bad-argument explanations.
 * Stable until the next failing call on this thread. */
ASC_API const char *ascGetLastErrorMessage(void);

/* major * 10000 + minor * 100 + patch */
ASC_API ascError_t ascGetVersion(int *version);

/* ------------------------------------------------------------ data types */

typedef enum ascDataType {
  ascBool = 0,
  ascInt8,
  ascInt16,
  ascInt32,
  ascInt64,
  ascUInt8,
  ascUInt16,
  ascUInt32,
  ascUInt64,
  ascFloat16,
  ascBFloat16,
  ascFloat32,
  ascFloat64,
  ascDataTypeCount
} ascDataType;

#define ASC_MAX_DIMS 8

/* Tensor argument descriptor.  strides are in elements and may be negative. */
typedef struct ascTensor {
  void *data;
  ascDataType dtype;
  int32_t ndim;
  int64_t shape[ASC_MAX_DIMS];
  int64_t strides[ASC_MAX_DIMS];
} ascTensor;

/* Descriptor for a scalar argument of an unannotated (generic) scalar
 * parameter.  weak != 0 marks a Python literal-like value that takes the type
 * of what it meets (dtype then says only bool, int or float:
 * ascBool, ascInt64 or ascFloat64). */
typedef struct ascScalar {
  ascDataType dtype;
  int32_t weak;
  union {
    int64_t i;
    uint64_t u;
    double f;
  } value;
} ascScalar;

/* Size in bytes of one element; 0 for an invalid type. */
ASC_API size_t ascDataTypeSize(ascDataType dtype);
/* "float32", ... ; NULL for an invalid type. */
ASC_API const char *ascDataTypeName(ascDataType dtype);

/* --------------------------------------------------------------- devices */

typedef struct ascDeviceProp {
  char name[256];
  int cores;              /* usable cores = worker threads */
  int numaNodes;
  int sockets;
  size_t l1CacheSize;     /* data cache, bytes, per core */
  size_t l2CacheSize;
  size_t l3CacheSize;     /* per package or shared slice */
  int simdWidth;          /* widest vector register, bytes */
  size_t totalGlobalMem;  /* bytes */
  int firstCore;          /* OS index of the first usable PU */
} ascDeviceProp;

/* Initialise the runtime; implicit in every other call.  flags must be 0. */
ASC_API ascError_t ascInit(unsigned int flags);
ASC_API ascError_t ascGetDeviceCount(int *count);
/* Current device of the calling host thread (default 0). */
ASC_API ascError_t ascSetDevice(int device);
ASC_API ascError_t ascGetDevice(int *device);
ASC_API ascError_t ascGetDeviceProperties(ascDeviceProp *prop, int device);
ASC_API ascError_t ascDeviceSynchronize(void);
/* Waits for all work, destroys every stream, event, pool, module and
 * allocation of the current device, and returns it to its first state. */
ASC_API ascError_t ascDeviceReset(void);
ASC_API ascError_t ascMemGetInfo(size_t *free, size_t *total);

/* ---------------------------------------------------------- opaque handles */

typedef struct ascStream_st *ascStream_t;
typedef struct ascEvent_st *ascEvent_t;
typedef struct ascMemPool_st *ascMemPool_t;
typedef struct ascModule_st *ascModule_t;
typedef struct ascKernel_st *ascKernel_t;

/* ---------------------------------------------------------------- memory */

typedef enum ascMemcpyKind {
  ascMemcpyHostToHost = 0,
  ascMemcpyHostToDevice = 1,
  ascMemcpyDeviceToHost = 2,
  ascMemcpyDeviceToDevice = 3,
  ascMemcpyDefault = 4
} ascMemcpyKind;

/* Blocks are 64-byte aligned, page aligned from ASC_PAGE_ALIGN_MIN bytes up.
 * ascMalloc(&p, 0) stores NULL and succeeds; ascFree(NULL) succeeds. */
#define ASC_PAGE_ALIGN_MIN ((size_t)1 << 16)
ASC_API ascError_t ascMalloc(void **devPtr, size_t size);
ASC_API ascError_t ascFree(void *devPtr);
ASC_API ascError_t ascMemcpy(void *dst, const void *src, size_t count,
                             ascMemcpyKind kind);
ASC_API ascError_t ascMemset(void *devPtr, int value, size_t count);
ASC_API ascError_t ascMemcpyAsync(void *dst, const void *src, size_t count,
                                  ascMemcpyKind kind, ascStream_t stream);
ASC_API ascError_t ascMemsetAsync(void *devPtr, int value, size_t count,
                                  ascStream_t stream);

/* ------------------------------------------------------- stream-ordered pools */

typedef struct ascMemPoolProps {
  int numaNode;      /* -1: any node */
  size_t alignment;  /* 0: 64; else a power of two >= 64 */
  size_t maxSize;    /* 0: unlimited */
} ascMemPoolProps;

typedef enum ascMemPoolAttr {
  ascMemPoolReuseFollowEventDependencies = 1, /* int */
  ascMemPoolReuseAllowOpportunistic = 2,      /* int */
  ascMemPoolReuseAllowInternalDependencies = 3, /* int */
  ascMemPoolAttrReleaseThreshold = 4,         /* uint64_t */
  ascMemPoolAttrReservedMemCurrent = 5,       /* uint64_t, read only */
  ascMemPoolAttrReservedMemHigh = 6,          /* uint64_t, set to 0 resets */
  ascMemPoolAttrUsedMemCurrent = 7,           /* uint64_t, read only */
  ascMemPoolAttrUsedMemHigh = 8               /* uint64_t, set to 0 resets */
} ascMemPoolAttr;

ASC_API ascError_t ascMallocAsync(void **devPtr, size_t size,
                                  ascStream_t stream);
ASC_API ascError_t ascFreeAsync(void *devPtr, ascStream_t stream);
ASC_API ascError_t ascMallocFromPoolAsync(void **devPtr, size_t size,
                                          ascMemPool_t pool,
                                          ascStream_t stream);
ASC_API ascError_t ascMemPoolCreate(ascMemPool_t *pool,
                                    const ascMemPoolProps *props);
ASC_API ascError_t ascMemPoolDestroy(ascMemPool_t pool);
ASC_API ascError_t ascMemPoolSetAttribute(ascMemPool_t pool,
                                          ascMemPoolAttr attr, void *value);
ASC_API ascError_t ascMemPoolGetAttribute(ascMemPool_t pool,
                                          ascMemPoolAttr attr, void *value);
ASC_API ascError_t ascMemPoolTrimTo(ascMemPool_t pool, size_t minBytesToKeep);
ASC_API ascError_t ascDeviceGetDefaultMemPool(ascMemPool_t *pool, int device);

/* --------------------------------------------------------------- streams */

enum { ascStreamDefault = 0, ascStreamNonBlocking = 1 };

ASC_API ascError_t ascStreamCreate(ascStream_t *stream);
ASC_API ascError_t ascStreamCreateWithFlags(ascStream_t *stream,
                                            unsigned int flags);
/* Lower numbers are higher priorities, as in CUDA. */
ASC_API ascError_t ascStreamCreateWithPriority(ascStream_t *stream,
                                               unsigned int flags,
                                               int priority);
ASC_API ascError_t ascDeviceGetStreamPriorityRange(int *leastPriority,
                                                   int *greatestPriority);
ASC_API ascError_t ascStreamDestroy(ascStream_t stream);
ASC_API ascError_t ascStreamSynchronize(ascStream_t stream);
ASC_API ascError_t ascStreamQuery(ascStream_t stream);
ASC_API ascError_t ascStreamWaitEvent(ascStream_t stream, ascEvent_t event,
                                      unsigned int flags);

typedef void (*ascHostFn_t)(void *userData);
/* Runs fn(userData) in stream order on the runtime's host-callback thread,
 * never on a worker.  Inside fn, blocking libasc calls return
 * ascErrorNotPermitted. */
ASC_API ascError_t ascLaunchHostFunc(ascStream_t stream, ascHostFn_t fn,
                                     void *userData);

/* ---------------------------------------------------------------- events */

enum {
  ascEventDefault = 0,
  ascEventBlockingSync = 1,
  ascEventDisableTiming = 2
};

ASC_API ascError_t ascEventCreate(ascEvent_t *event);
ASC_API ascError_t ascEventCreateWithFlags(ascEvent_t *event,
                                           unsigned int flags);
ASC_API ascError_t ascEventDestroy(ascEvent_t event);
ASC_API ascError_t ascEventRecord(ascEvent_t event, ascStream_t stream);
ASC_API ascError_t ascEventQuery(ascEvent_t event);
ASC_API ascError_t ascEventSynchronize(ascEvent_t event);
ASC_API ascError_t ascEventElapsedTime(float *ms, ascEvent_t start,
                                       ascEvent_t end);

/* ------------------------------------------------------ modules and kernels */

/* A frozen module-level constant passed by the caller (Python bindings pass
 * the values of referenced globals).  Part of the cache key. */
typedef struct ascGlobalValue {
  const char *name;
  ascScalar value;
} ascGlobalValue;

typedef struct ascCompileOptions {
  const char *filename;   /* for diagnostics; default "<string>" */
  int firstLine;          /* line number of the text's first line; 0 = 1 */
  int debug;              /* keep asserts, -O1 -g */
  int boundsCheck;        /* IndexError on out-of-bounds tensor access */
  int optLevel;           /* 0..3; 0 = default (3) */
  const ascGlobalValue *globals;
  int numGlobals;
} ascCompileOptions;

/* Load a module compiled ahead of time (ascc --emit=so). */
ASC_API ascError_t ascModuleLoad(ascModule_t *module, const char *path);
/* Compile Python kernel text (cached on disk).  opts may be NULL.  Compile
 * errors return ascErrorCompile, diagnostics in ascGetLastErrorMessage(). */
ASC_API ascError_t ascModuleLoadPython(ascModule_t *module, const char *text,
                                       const ascCompileOptions *opts);
ASC_API ascError_t ascModuleLoadPythonFile(ascModule_t *module,
                                           const char *path,
                                           const ascCompileOptions *opts);
ASC_API ascError_t ascModuleUnload(ascModule_t module);
ASC_API ascError_t ascModuleGetKernel(ascKernel_t *kernel, ascModule_t module,
                                      const char *name);

typedef struct ascKernelParamInfo {
  const char *name;
  int isTensor;
  ascDataType dtype;  /* ascDataTypeCount when generic */
  int ndim;           /* tensors: -1 when generic */
  int generic;        /* specialised from the descriptor at launch */
  int isConstExpr;    /* compile-time constant (scalars) */
  int isWritten;      /* tensors: the kernel may store through it, so the
                       * memory must be writable (1 when unknown) */
} ascKernelParamInfo;

/* Pointers stay valid while the module is loaded. */
typedef struct ascKernelInfo {
  const char *name;
  int numParams;
  const ascKernelParamInfo *params;
} ascKernelInfo;

ASC_API ascError_t ascKernelGetInfo(ascKernelInfo *info, ascKernel_t kernel);

/* args[i] points to the i-th argument: an ascTensor for tensor parameters,
 * an ascScalar for generic scalar parameters, the value itself (of the
 * annotated type) for annotated scalar parameters.  args is copied during
 * the call.  blockDim 0 is rejected. */
ASC_API ascError_t ascLaunchKernel(ascKernel_t kernel, uint32_t blockDim,
                                   void **args, ascStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* ASC_ASC_H */
