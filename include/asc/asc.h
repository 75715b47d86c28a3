/*
 * libasc — Python-written compute kernels on the cores of this machine.
 *
 * A CUDA-runtime-style C API: every function returns an ascError_t (except
 * the few that return a name or a size), handles are opaque, out-parameters
 * come first.  See docs/ for the execution model (docs/streams.md), the
 * kernel ABI (docs/abi.md), the kernel language and docs/architecture.md
 * for how a kernel travels from text to launch.
 *
 * Conventions that hold for every function below:
 *
 * Errors.  A failing call returns its code, records it as the calling
 * thread's last error (ascGetLastError) with a message
 * (ascGetLastErrorMessage), and changes none of its out-parameters unless
 * it says otherwise.  NULL, invalid and destroyed handles give
 * ascErrorInvalidHandle, never a crash.  Errors of queued work (a kernel
 * that raised, a failed copy) belong to the stream they ran on and are
 * returned by that stream's next synchronising call.
 *
 * Threads.  Every function may be called from any host thread at the same
 * time as any other, on the same or different handles, except where a group
 * below says otherwise: destroying a handle while another thread still
 * passes it to a call is the caller's race (the other call then returns
 * ascErrorInvalidHandle or works on the object as it was; it never
 * crashes).  ascDeviceReset waits for the calls on modules, kernels,
 * streams, events and memory that other threads are inside and refuses
 * new ones while it runs; a pointer into memory the reset freed is the
 * caller's to stop using, as after ascFree.
 * The current device (ascSetDevice) and the last error are per thread.
 * Inside a host function (ascLaunchHostFunc) blocking calls return
 * ascErrorNotPermitted.
 *
 * Ownership.  The library copies what it keeps: strings, option structs and
 * argument arrays passed in are the caller's again when the call returns.
 * Pointers the library hands out (names, messages, kernel info) stay valid
 * for the lifetime stated next to the function.
 *
 * ABI and versions.  ASC_VERSION_MAJOR.MINOR.PATCH (asc/version.h,
 * ascGetVersion); the shared object's SONAME carries the major version.
 * Within one major version a release may add functions, enum values
 * (error codes included: treat unknown codes as failures) and fields taken
 * from a struct's reserved space; it never removes or reorders a function,
 * field or enum value, nor changes a struct's size.  Structs that may grow
 * end in `reserved` space that callers must zero ({0} initialisation does);
 * a field added there reads as 0 from older callers and 0 always means
 * "the default".  ascTensor and ascScalar are fixed: they are the kernel
 * ABI (docs/abi.md).  While the major version is 0, minor releases may
 * break this rule, and say so in their notes.
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

/* ---------------------------------------------------------------- errors
 * Thread-safe; the last error and its message are per thread. */

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
  X(ascErrorCache, 18, "kernel cache unusable")                              \
  X(ascErrorCancelled, 19, "work cancelled")                                  \
  X(ascErrorLaunchTimeout, 20, "kernel ran past its timeout")                 \
  X(ascErrorCommunication, 21, "communication failed")

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

/* ------------------------------------------------------------ data types
 * Plain values; the functions here are pure and thread-safe. */

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
  ascComplex64,   /* two float32: real, imaginary (C99 float _Complex) */
  ascComplex128,  /* two float64 (C99 double _Complex) */
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

/* What a kernel returns (`return x` in a Python kernel, docs/abi.md):
 * one per returned value, passed after the arguments, as args[numParams
 * + k] of ascLaunchKernel.  Written when the launch runs: read it after
 * synchronising.  A returned array's data is device memory that the caller
 * owns and frees with ascFree. */
typedef enum ascResultKind {
  ascResultNone = 0,    /* the kernel returned no value (or raised) */
  ascResultScalar = 1,  /* scalar holds it (weak is 0) */
  ascResultTensor = 2   /* tensor holds it: a new C-contiguous array */
} ascResultKind;

typedef struct ascResult {
  int32_t kind;         /* ascResultKind */
  int32_t reserved;
  ascScalar scalar;
  ascTensor tensor;
} ascResult;

/* Size in bytes of one element; 0 for an invalid type. */
ASC_API size_t ascDataTypeSize(ascDataType dtype);
/* "float32", ... ; NULL for an invalid type. */
ASC_API const char *ascDataTypeName(ascDataType dtype);

/* --------------------------------------------------------------- devices
 * A device is the set of cores hwloc finds in the process's allowed cpuset
 * (one device today).  Thread-safe; ascSetDevice changes the calling
 * thread's current device only.  Other calls may race ascDeviceReset: they
 * finish before it, or fail (see ascDeviceReset). */

/* Filled by ascGetDeviceProperties. */
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
  uint8_t reserved[256];  /* room to grow; zeroed by the library */
} ascDeviceProp;

/* Initialise the runtime; implicit in every other call.  flags must be 0. */
ASC_API ascError_t ascInit(unsigned int flags);
/* Number of devices (1 when any core is usable). */
ASC_API ascError_t ascGetDeviceCount(int *count);
/* Current device of the calling host thread (default 0). */
ASC_API ascError_t ascSetDevice(int device);
ASC_API ascError_t ascGetDevice(int *device);
/* Cores, NUMA nodes, cache sizes, SIMD width and memory of a device. */
ASC_API ascError_t ascGetDeviceProperties(ascDeviceProp *prop, int device);
/* Waits for the work queued on every stream of the current device before
 * the call; returns the first pending stream error, as a synchronising
 * call on that stream would. */
ASC_API ascError_t ascDeviceSynchronize(void);
/* Waits for all work, destroys every stream, event, pool, module and
 * allocation of the current device, and returns it to its first state.
 * Calls on modules, kernels, streams, events and memory that other threads
 * are inside finish first; those that start during the reset return
 * ascErrorNotPermitted, and so does a second concurrent reset; afterwards
 * the old handles give ascErrorInvalidHandle (docs/streams.md, "Module
 * lifetime and threads"). */
ASC_API ascError_t ascDeviceReset(void);
/* Free and total bytes of the device's memory (host memory on this
 * device). */
ASC_API ascError_t ascMemGetInfo(size_t *free, size_t *total);

/* Tracing (docs/tracing.md).  ascProfilerStart records a timeline of
 * streams, launches, blocks, copies, host functions, events, pool
 * allocations and compiles; ascProfilerStop writes it to path as Chrome
 * trace-event JSON (also written at ascDeviceReset and at normal process
 * exit).  $ASC_TRACE=path starts one at initialisation.  Start while a
 * trace runs, or stop while none does, returns ascErrorNotPermitted; an
 * unwritable path (a symbolic link, FIFO or device there included:
 * docs/files.md), ascErrorInvalidValue. */
ASC_API ascError_t ascProfilerStart(const char *path);
ASC_API ascError_t ascProfilerStop(void);

/* ---------------------------------------------------------- opaque handles
 * Handles are checked on every call: a destroyed or foreign handle gives
 * ascErrorInvalidHandle.  NULL is the default stream where a stream is
 * taken. */

typedef struct ascStream_st *ascStream_t;
typedef struct ascEvent_st *ascEvent_t;
typedef struct ascMemPool_st *ascMemPool_t;
typedef struct ascModule_st *ascModule_t;
typedef struct ascKernel_st *ascKernel_t;

/* ---------------------------------------------------------------- memory
 * Device memory is host memory on this device, so host and device pointers
 * mix freely and every ascMemcpyKind copies the same way.  Thread-safe.
 * The synchronous calls wait for nothing queued: order them against
 * streams yourself (or use the Async forms). */

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
/* Allocates size bytes of device memory (NUMA-local to the device). */
ASC_API ascError_t ascMalloc(void **devPtr, size_t size);
/* Frees memory from ascMalloc; other pointers give ascErrorInvalidValue. */
ASC_API ascError_t ascFree(void *devPtr);
/* Copies count bytes now; the ranges must not overlap. */
ASC_API ascError_t ascMemcpy(void *dst, const void *src, size_t count,
                             ascMemcpyKind kind);
/* Sets count bytes to (unsigned char)value now. */
ASC_API ascError_t ascMemset(void *devPtr, int value, size_t count);
/* As ascMemcpy / ascMemset, queued on stream: the memory must stay valid
 * until the stream reaches the copy. */
ASC_API ascError_t ascMemcpyAsync(void *dst, const void *src, size_t count,
                                  ascMemcpyKind kind, ascStream_t stream);
ASC_API ascError_t ascMemsetAsync(void *devPtr, int value, size_t count,
                                  ascStream_t stream);

/* ------------------------------------------------------- stream-ordered pools
 * As CUDA's: memory allocated and freed in stream order from jemalloc
 * arenas (docs/pools.md).  Thread-safe; a pool may be used from several
 * streams and threads at once.  Destroying a pool frees what is left in
 * it once the work queued before the call has run. */

/* Copied by ascMemPoolCreate.  Zero-initialise: new fields come from
 * reserved and 0 means their default. */
typedef struct ascMemPoolProps {
  int numaNode;      /* -1: any node */
  size_t alignment;  /* 0: 64; else a power of two >= 64 */
  size_t maxSize;    /* 0: unlimited */
  uint8_t reserved[64];
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

/* Allocates from the device's default pool (ascDeviceGetDefaultMemPool),
 * usable by work queued on stream after this call. */
ASC_API ascError_t ascMallocAsync(void **devPtr, size_t size,
                                  ascStream_t stream);
/* Returns memory from any pool to it once stream reaches this point. */
ASC_API ascError_t ascFreeAsync(void *devPtr, ascStream_t stream);
ASC_API ascError_t ascMallocFromPoolAsync(void **devPtr, size_t size,
                                          ascMemPool_t pool,
                                          ascStream_t stream);
/* props is required, as in CUDA's cudaMemPoolCreate (NULL:
 * ascErrorInvalidValue); zero-initialised props give the defaults. */
ASC_API ascError_t ascMemPoolCreate(ascMemPool_t *pool,
                                    const ascMemPoolProps *props);
ASC_API ascError_t ascMemPoolDestroy(ascMemPool_t pool);
/* value points to an int or a uint64_t, as ascMemPoolAttr says. */
ASC_API ascError_t ascMemPoolSetAttribute(ascMemPool_t pool,
                                          ascMemPoolAttr attr, void *value);
ASC_API ascError_t ascMemPoolGetAttribute(ascMemPool_t pool,
                                          ascMemPoolAttr attr, void *value);
/* Releases cached memory until at most minBytesToKeep stay reserved. */
ASC_API ascError_t ascMemPoolTrimTo(ascMemPool_t pool, size_t minBytesToKeep);
/* The pool ascMallocAsync uses; it lives as long as the device. */
ASC_API ascError_t ascDeviceGetDefaultMemPool(ascMemPool_t *pool, int device);

/* --------------------------------------------------------------- streams
 * In-order queues of work (docs/streams.md).  Thread-safe: several threads
 * may queue on one stream; the order between them is the order their calls
 * took the stream's lock.  The NULL (default) stream synchronises with
 * blocking streams as in CUDA's legacy default stream. */

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
/* Work already queued still runs; the handle is invalid at once. */
ASC_API ascError_t ascStreamDestroy(ascStream_t stream);
/* Waits for everything queued on stream; returns its pending error (a
 * kernel exception, ...) and clears it, so the stream is usable again. */
ASC_API ascError_t ascStreamSynchronize(ascStream_t stream);
/* ascSuccess when all queued work is done, else ascErrorNotReady. */
ASC_API ascError_t ascStreamQuery(ascStream_t stream);
/* As ascStreamSynchronize, but waits at most timeoutMs milliseconds:
 * ascErrorNotReady (and the pending error kept) if the work queued at the
 * call has not finished by then. */
ASC_API ascError_t ascStreamSynchronizeTimeout(ascStream_t stream,
                                               unsigned int timeoutMs);
/* Cooperative cancellation (docs/streams.md): stops the running launch of
 * the stream at its next poll and skips the work queued on it; the stream
 * reports ascErrorCancelled at its next synchronising call, then works
 * again.  Does not wait.  A stream with nothing pending is left as is. */
ASC_API ascError_t ascStreamCancel(ascStream_t stream);
/* Per-launch timeout of the stream's launches, in milliseconds from the
 * moment a launch starts running; 0 (the default, or
 * $ASC_KERNEL_TIMEOUT_MS for new streams) means none.  A launch past it
 * is stopped as by ascStreamCancel and reported as ascErrorLaunchTimeout. */
ASC_API ascError_t ascStreamSetKernelTimeout(ascStream_t stream,
                                             unsigned int timeoutMs);
ASC_API ascError_t ascStreamGetKernelTimeout(unsigned int *timeoutMs,
                                             ascStream_t stream);
/* Work queued on stream after this call waits for event's last record.
 * flags must be 0. */
ASC_API ascError_t ascStreamWaitEvent(ascStream_t stream, ascEvent_t event,
                                      unsigned int flags);

typedef void (*ascHostFn_t)(void *userData);
/* Runs fn(userData) in stream order on the runtime's host-callback thread,
 * never on a worker.  Inside fn, blocking libasc calls return
 * ascErrorNotPermitted. */
ASC_API ascError_t ascLaunchHostFunc(ascStream_t stream, ascHostFn_t fn,
                                     void *userData);

/* ---------------------------------------------------------------- events
 * Markers in a stream: for ordering across streams and for timing.
 * Thread-safe.  An event recorded after a failed kernel carries the
 * stream's error to those waiting for it. */

enum {
  ascEventDefault = 0,
  ascEventBlockingSync = 1,
  ascEventDisableTiming = 2
};

ASC_API ascError_t ascEventCreate(ascEvent_t *event);
ASC_API ascError_t ascEventCreateWithFlags(ascEvent_t *event,
                                           unsigned int flags);
ASC_API ascError_t ascEventDestroy(ascEvent_t event);
/* Captures the work queued on stream so far; re-recording replaces the
 * capture. */
ASC_API ascError_t ascEventRecord(ascEvent_t event, ascStream_t stream);
/* ascSuccess when the captured work is done, else ascErrorNotReady. */
ASC_API ascError_t ascEventQuery(ascEvent_t event);
ASC_API ascError_t ascEventSynchronize(ascEvent_t event);
/* Milliseconds between two completed records (uv_hrtime clock);
 * ascErrorInvalidHandle for events created with ascEventDisableTiming. */
ASC_API ascError_t ascEventElapsedTime(float *ms, ascEvent_t start,
                                       ascEvent_t end);

/* ------------------------------------------------------ modules and kernels
 * Thread-safe: several threads may load, look up and launch at once; the
 * first launch of a new specialisation compiles it once while others
 * asking for it wait.  Text, file names and option structs are copied
 * (opts->globals included); kernel handles stay valid until their module
 * is unloaded. */

/* A frozen module-level constant passed by the caller (Python bindings pass
 * the values of referenced globals).  Part of the cache key. */
typedef struct ascGlobalValue {
  const char *name;
  ascScalar value;
} ascGlobalValue;

/* Floating-point permissions of a kernel (numba's fastmath flags), one
 * bit each; docs/fastmath.md says exactly what each permits.  0 is the
 * deterministic default: IEEE semantics, Python's order of operations. */
#define ASC_FASTMATH_CONTRACT 0x01u /* fuse a * b + c into one fma */
#define ASC_FASTMATH_REASSOC 0x02u  /* reassociate (vectorised float sums) */
#define ASC_FASTMATH_NNAN 0x04u     /* assume no NaN operands or results */
#define ASC_FASTMATH_NINF 0x08u     /* assume no infinities */
#define ASC_FASTMATH_NSZ 0x10u      /* ignore the sign of zero */
#define ASC_FASTMATH_ARCP 0x20u     /* x / y may become x * (1 / y) */
#define ASC_FASTMATH_AFN 0x40u      /* approximate math functions */
#define ASC_FASTMATH_ALL 0x7fu      /* fastmath=True */

/* Zero-initialise: new fields come from reserved and 0 means their
 * default. */
typedef struct ascCompileOptions {
  const char *filename;   /* for diagnostics; default "<string>" */
  int firstLine;          /* line number of the text's first line; 0 = 1 */
  int debug;              /* keep asserts, -O1 -g */
  int boundsCheck;        /* IndexError on out-of-bounds tensor access */
  int optLevel;           /* 0..3; 0 = default (3) */
  const ascGlobalValue *globals;
  int numGlobals;
  /* ASC_FASTMATH_* bits for kernels whose decorator does not say
   * fastmath=; 0: none.  Other bits are rejected (ascErrorInvalidValue). */
  unsigned fastmath;
  uint8_t reserved[60];
} ascCompileOptions;

/* Load a module compiled ahead of time (ascc --emit=so): no compiler is
 * needed.  A launch whose arguments fit none of the module's signatures
 * returns ascErrorInvalidValue listing them (docs/abi.md). */
ASC_API ascError_t ascModuleLoad(ascModule_t *module, const char *path);
/* Compile Python kernel text (cached on disk).  opts may be NULL.  Compile
 * errors return ascErrorCompile, diagnostics in ascGetLastErrorMessage(). */
ASC_API ascError_t ascModuleLoadPython(ascModule_t *module, const char *text,
                                       const ascCompileOptions *opts);
/* As ascModuleLoadPython, reading the text from path (the file name goes
 * into diagnostics unless opts->filename says otherwise). */
ASC_API ascError_t ascModuleLoadPythonFile(ascModule_t *module,
                                           const char *path,
                                           const ascCompileOptions *opts);
/* Marks the module dead (later calls with it or its kernels return
 * ascErrorInvalidHandle), waits for the calls of other threads that are
 * using it and for its queued launches, then unloads it.  Inside a host
 * function it returns ascErrorNotPermitted if it would have to wait. */
ASC_API ascError_t ascModuleUnload(ascModule_t module);
/* ascErrorInvalidKernel when the module has no kernel of that name. */
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
  int numberAsArray;  /* tensors: used only in whole-array arithmetic, so
                       * a number may be passed as a 0-d array
                       * (docs/arrays.md); the Python binding does so */
  int useLine;        /* unannotated scalars of Python kernels: the source
                       * line where the kernel first uses it (0 unknown),
                       * for the error an array argument gets; -1 when
                       * the kernel never reads it (the Python binding
                       * then passes a non-number argument as the
                       * integer 0) */
  uint8_t reserved[20];
} ascKernelParamInfo;

/* Pointers stay valid while the module is loaded. */
typedef struct ascKernelInfo {
  const char *name;
  int numParams;
  const ascKernelParamInfo *params;
  int numResults;     /* values the kernel returns: ascResult pointers
                       * follow the numParams arguments in args */
  uint8_t reserved[28];
} ascKernelInfo;

/* The kernel's name and parameter table. */
ASC_API ascError_t ascKernelGetInfo(ascKernelInfo *info, ascKernel_t kernel);

/* Queues blockDim blocks of kernel on stream (docs/streams.md); returns
 * once the launch is queued (a new specialisation is compiled first).
 * Each block runs the kernel once, reading asc.get_block_idx() and
 * get_block_num() to pick its share of the work (SPMD).  A kernel that
 * reads neither runs once whatever blockDim is, with the cores blockDim
 * blocks would have had: the answer of a one-block launch (docs/abi.md).
 * args[i] points to the i-th argument: an ascTensor for tensor parameters,
 * an ascScalar for generic scalar parameters, the value itself (of the
 * annotated type) for annotated scalar parameters.  args is copied during
 * the call.  blockDim 0 is rejected. */
ASC_API ascError_t ascLaunchKernel(ascKernel_t kernel, uint32_t blockDim,
                                   void **args, ascStream_t stream);

/* ascLaunchKernelSync flags. */
enum {
  ascLaunchJoin = 0,     /* the calling thread joins the launch's team */
  ascLaunchHandOff = 1   /* the workers run it; the caller sleeps at once */
};

/* Runs blockDim blocks of kernel and returns when they are done, for
 * callers that need the result at once, such as a framework's operators
 * (docs/plugins.md).  The launch goes on the calling thread's own stream
 * (non-blocking, created on first use, destroyed when the thread exits),
 * so launches from several threads run side by side and the call returns
 * this launch's own outcome: a kernel's exception as
 * ascErrorKernelException with its message.  It is ordered after nothing
 * queued on other streams: the arguments must be ready.  With
 * ascLaunchJoin the calling thread works as a synchronising thread does
 * (docs/streams.md, "The waiting thread lends itself"): it runs the
 * blocks no worker has taken yet and joins the parallel loops of the
 * launch, and the idle worker pinned to its core parks meanwhile, so a
 * caller from a framework's thread pool adds no thread to the cores.
 * ascLaunchHandOff leaves all the work to the workers.  Other flags are
 * rejected (ascErrorInvalidValue). */
ASC_API ascError_t ascLaunchKernelSync(ascKernel_t kernel, uint32_t blockDim,
                                       void **args, unsigned int flags);

/* ascLaunchKernel on stream, then ascStreamSynchronize(stream), in one
 * call that returns what the two would.  When stream is idle and the
 * launch has one block (a kernel that never reads its block index has
 * one whatever blockDim is), the calling thread runs it at once instead
 * of handing it to the pool (the workers still join its parallel loops):
 * a synchronous call pays no trip through the pool (docs/streams.md). */
ASC_API ascError_t ascLaunchKernelAndSynchronize(ascKernel_t kernel,
                                                 uint32_t blockDim,
                                                 void **args,
                                                 ascStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* ASC_ASC_H */
