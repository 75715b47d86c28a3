/*
 * The kernel ABI: what a compiled module exports and what the runtime hands
 * each block.  docs/abi.md explains it in prose.
 *
 * This header is the single source of the ABI.  It is public: a module
 * written by hand for ascModuleLoad includes it (#include <asc/kernel_abi.h>).
 * The runtime includes it too, and the compiler embeds it verbatim (at
 * build time) at the top of every C file it generates, so it must stay
 * self-contained: only <stdint.h> and <stddef.h>, no libasc headers, no
 * libc beyond those.
 */
#ifndef ASC_KERNEL_ABI_H
#define ASC_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Version 2 added asc_krt.alloc/release and ASC_KEXC_MEMORY_ERROR;
 * version 3 added asc_krt.keep and asc_krt.gemm, and result parameters
 * (ASC_KPARAM_RESULT, asc_kresult); version 4 asc_krt.cache_bytes;
 * version 5 the kernel flag ASC_KERNEL_NOT_SPMD; version 6 asc_krt.gemm_ab;
 * version 7 asc_krt.linalg and ASC_KEXC_LINALG_ERROR.  The runtime still
 * loads modules of versions 1 to 6, which use none of what came later. */
#define ASC_KABI_VERSION 7
#define ASC_KABI_MIN_VERSION 1
#define ASC_KMAX_DIMS 8

/* Same layout as ascTensor in asc.h (checked by a static assertion in the
 * runtime). */
typedef struct asc_ktensor {
  void *data;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[ASC_KMAX_DIMS];
  int64_t strides[ASC_KMAX_DIMS];
} asc_ktensor;

/* Same layout as ascScalar in asc.h. */
typedef struct asc_kscalar {
  int32_t dtype;
  int32_t weak;
  union {
    int64_t i;
    uint64_t u;
    double f;
  } value;
} asc_kscalar;

/* ABI 3.  What a kernel returns: one per returned value (a tuple returns
 * one per element), passed as the trailing ASC_KPARAM_RESULT parameters.
 * Same layout as ascResult in asc.h.  The runtime sets kind to
 * ASC_KRESULT_NONE when the launch is queued; a `return v` sets it. */
enum {
  ASC_KRESULT_NONE = 0,
  ASC_KRESULT_SCALAR = 1,
  ASC_KRESULT_TENSOR = 2
};

typedef struct asc_kresult {
  int32_t kind;
  int32_t reserved;
  asc_kscalar scalar;   /* dtype, weak 0, value */
  asc_ktensor tensor;   /* data: from keep(), freed by the caller (ascFree) */
} asc_kresult;

/* Exception kinds; the Python class of the same name. */
enum {
  ASC_KEXC_NONE = 0,
  ASC_KEXC_EXCEPTION,
  ASC_KEXC_VALUE_ERROR,
  ASC_KEXC_INDEX_ERROR,
  ASC_KEXC_ZERO_DIVISION_ERROR,
  ASC_KEXC_ASSERTION_ERROR,
  ASC_KEXC_RUNTIME_ERROR,
  ASC_KEXC_OVERFLOW_ERROR,
  ASC_KEXC_ARITHMETIC_ERROR,
  ASC_KEXC_TYPE_ERROR,
  ASC_KEXC_MEMORY_ERROR,   /* ABI 2: an array created in a kernel */
  ASC_KEXC_LINALG_ERROR,   /* ABI 7: numpy.linalg.LinAlgError, a ValueError */
  ASC_KEXC_COUNT
};

/* Not a Python class: the kind a generated poll raises when it finds the
 * launch stopped (*ctx->stop != 0).  No except clause matches it; finally
 * bodies run as it unwinds. */
#define ASC_KEXC_CANCELLED 31

#define ASC_KEXC_MSG_MAX 256

/* An exception in flight inside a kernel. */
typedef struct asc_kexc {
  int32_t kind;
  int32_t line;                 /* Python source line of the raise */
  char msg[ASC_KEXC_MSG_MAX];   /* NUL-terminated */
} asc_kexc;

typedef struct asc_kctx asc_kctx;

/* The body of a parallel loop: runs iterations [lo, hi) of a loop of n
 * iterations numbered 0..n-1 (the generated code maps them to the user's
 * range), on team thread tid (0 <= tid < team size).  Returns 0, or, when an
 * iteration raised and did not catch, the (0-based) index of that iteration
 * plus one, with the exception stored in *exc. */
typedef int64_t (*asc_kbody)(void *env, int64_t lo, int64_t hi, int32_t tid,
                             asc_kexc *exc);

/* Services of the runtime, called by generated code through ctx->rt. */
typedef struct asc_krt {
  uint32_t abi_version;
  /* Runs body over 0..n-1 split over the block's team in guided chunks of
   * at least min_chunk iterations, then joins.  Returns 0, or 1 when an
   * iteration raised: *exc then holds the exception of the lowest raising
   * iteration index (chunks are handed out in increasing order and no
   * chunk above the lowest raising index is started afterwards, so this is
   * deterministic). */
  int (*parallel_for)(asc_kctx *ctx, int64_t n, int64_t min_chunk,
                      asc_kbody body, void *env, asc_kexc *exc);
  /* Threads in the calling block's team (>= 1). */
  int32_t (*team_size)(asc_kctx *ctx);
  /* Waits until every block of the launch has arrived.  Returns 0, or
   * nonzero when another block raised, and the launch is being abandoned
   * (the caller then returns at once). */
  int (*barrier)(asc_kctx *ctx);
  /* One lock per launch, for `with asc.critical():`. */
  void (*critical_enter)(asc_kctx *ctx);
  void (*critical_exit)(asc_kctx *ctx);
  /* Nonzero once some block of the launch raised: long loops may poll it. */
  int (*cancelled)(asc_kctx *ctx);
  /* ABI 2.  A temporary of at least bytes bytes (bytes may be 0),
   * 64-byte aligned, for arrays a kernel creates (np.empty ...); NULL when
   * memory is exhausted.  Any thread of the block's team may call it.
   * Every temporary of a block is given back when the block ends, however
   * it ends; release gives one back sooner (NULL is ignored), so that a
   * loop creating an array per iteration reuses the same memory. */
  void *(*alloc)(asc_kctx *ctx, uint64_t bytes);
  void (*release)(asc_kctx *ctx, void *p);
  /* ABI 3.  p, from alloc and not released, outlives the block: it leaves
   * the block's temporaries and becomes device memory of the launching
   * device, which the caller of the launch frees with ascFree (a returned
   * array).  Returns p, or NULL when p is not such a temporary or the
   * runtime cannot record it (p then stays a temporary). */
  void *(*keep)(asc_kctx *ctx, void *p);
  /* ABI 3.  c[i*sc0 + j*sc1] = sum over p < k of a[i*sa0 + p*sa1] *
   * b[p*sb0 + j*sb1], for i < m, j < n (strides in elements, dtype
   * ascFloat32 or ascFloat64), by the BLAS the runtime found, split over
   * the block's team.  Returns 0 when done; nonzero when it did nothing
   * (no BLAS, ASC_BLAS=0, another dtype, a layout it does not take):
   * the caller then computes c itself.  c must not overlap a or b. */
  int (*gemm)(asc_kctx *ctx, int32_t dtype, int64_t m, int64_t n, int64_t k,
              const void *a, int64_t sa0, int64_t sa1, const void *b,
              int64_t sb0, int64_t sb1, void *c, int64_t sc0, int64_t sc1);
  /* ABI 4.  The size in bytes of the launching device's level-th data
   * cache (1, 2 or 3) as hwloc reports it (L1, L2: per core; L3: one
   * whole cache, which several cores share), 0 when unknown. */
  int64_t (*cache_bytes)(asc_kctx *ctx, int32_t level);
  /* ABI 6.  c = alpha * (a @ b) + beta * c, as gemm otherwise; with beta
   * 0, c is not read (BLAS's rule).  c may be any array: when its
   * elements may share memory with a's or b's it returns nonzero and does
   * nothing, as it does for what gemm does not take. */
  int (*gemm_ab)(asc_kctx *ctx, int32_t dtype, int64_t m, int64_t n,
                 int64_t k, double alpha, const void *a, int64_t sa0,
                 int64_t sa1, const void *b, int64_t sb0, int64_t sb1,
                 double beta, void *c, int64_t sc0, int64_t sc1);
  /* ABI 7.  The np.linalg operation op (ASC_KLINALG_*, below) on LAPACK,
   * for dtype ascFloat32, ascFloat64, ascComplex64 or ascComplex128.
   * Operand i is data[i], a matrix with strides strides[2i], strides[2i
   * + 1] (elements; a vector uses the first, a number neither); operand
   * 0 is the input, read only, the others are written, and no two share
   * memory.  m, n, k are the extents the operation names.  Returns
   * ASC_KLINALG_OK, or what stopped it, having written nothing then
   * except where the operation says so. */
  int (*linalg)(asc_kctx *ctx, int32_t op, int32_t dtype, int64_t m,
                int64_t n, int64_t k, int32_t nops, void *const *data,
                const int64_t *strides);
} asc_krt;

/* ABI 7.  asc_krt.linalg's operations: operands after the input a. */
enum {
  ASC_KLINALG_INV = 1,   /* a (n x n); x = inv(a) (n x n) */
  ASC_KLINALG_SOLVE,     /* a (n x n), b (n x k); x (n x k): a @ x = b */
  ASC_KLINALG_CHOLESKY,  /* a (n x n); l (n x n): lower, a = l @ l^H,
                            zeros above the diagonal */
  ASC_KLINALG_SLOGDET,   /* a (n x n); sign (a's dtype), logabsdet (its
                            real dtype); a singular a: 0 and -inf, OK */
  ASC_KLINALG_DET,       /* a (n x n); det (a's dtype), numpy's
                            sign * exp(logabsdet); singular: 0, OK */
  ASC_KLINALG_EIGH,      /* a (n x n), its lower triangle; w (n, real
                            dtype, ascending), v (n x n, columns);
                            without v (nops 2, or data[2] NULL) the
                            values only */
  ASC_KLINALG_SVD,       /* a (m x n); s (min(m, n), real dtype,
                            descending), u, vh: (m x m), (n x n) when k
                            is 1, else (m x min), (min x n); without u
                            and vh (nops 2) the values only */
  ASC_KLINALG_QR,        /* a (m x n); q (m x min(m, n)), r (min x n):
                            numpy's qr(a, mode='reduced') */
  ASC_KLINALG_LSTSQ,     /* a (m x n), b (m x k); x (n x k), resid (k,
                            real: the squared norms of b's columns less
                            a @ x where m > n, else zeros), rank (an
                            int64), s (min(m, n), real): numpy's lstsq
                            with rcond eps * max(m, n) */
  ASC_KLINALG_DOTS,      /* no LAPACK: m (1..8) dot products of float32
                            or float64 vectors of n elements, in one pass
                            over them.  Operands 2i and 2i + 1 (i < m) are
                            pair i, each with its step in its first
                            stride, all read only (an operand may appear
                            in several pairs); operand 2m, the input
                            being the first, holds the m results
                            (contiguous).  The dtype's arithmetic, in the
                            call's own order (blocked, in lanes, the
                            team's slabs added in order) */
  ASC_KLINALG_GEMV2,     /* no LAPACK: a (m x n, float32 or float64, its
                            rows contiguous), p (n), r (m), all read;
                            q (m) = a @ p and s (n) = r @ a, written, in
                            one pass over a (the team's slabs of rows,
                            their parts of s added in order).  k: flags
                            ASC_KGEMV2_ADD_Q (q += a @ p) and _ADD_S;
                            with ASC_KGEMV2_CHAIN, s = q @ a (r is not
                            read: `(a @ p) @ a`, each row's q[i] made
                            before its r[i] * a[i, :] is added, while
                            the row is in cache);
                            _UNSUPPORTED, nothing written, when q or s
                            shares memory with another operand */
  ASC_KLINALG_COUNT
};

/* ASC_KLINALG_GEMV2's k: add the products into q, s (else set them);
 * CHAIN: s = q @ a, the r operand unread. */
enum { ASC_KGEMV2_ADD_Q = 1, ASC_KGEMV2_ADD_S = 2, ASC_KGEMV2_CHAIN = 4 };

/* ABI 7.  What asc_krt.linalg returns. */
enum {
  ASC_KLINALG_OK = 0,
  ASC_KLINALG_SINGULAR,      /* numpy: LinAlgError "Singular matrix" */
  ASC_KLINALG_NOT_PD,        /* "Matrix is not positive definite" */
  ASC_KLINALG_NO_CONVERGE,   /* "Eigenvalues did not converge", "SVD
                                did not converge" */
  ASC_KLINALG_NO_LAPACK,     /* no LAPACK could be loaded */
  ASC_KLINALG_NO_MEMORY,     /* its work arrays could not be allocated */
  ASC_KLINALG_UNSUPPORTED    /* an op, dtype or extent it does not take */
};

/* What the runtime hands each block. */
struct asc_kctx {
  uint32_t block_idx;
  uint32_t block_num;
  const asc_krt *rt;
  void *team;     /* runtime-private */
  void *launch;   /* runtime-private */
  void *shared;   /* this block's shared_bytes of scratch, 64-byte aligned */
  /* Non-zero once the launch is stopped (ascStreamCancel, its timeout,
   * ascDeviceReset).  Generated code reads it with a relaxed atomic load
   * at loop back-edges and then raises ASC_KEXC_CANCELLED. */
  const int32_t *stop;
};

/* Runs one block.  args[i] points to the i-th argument, laid out as the
 * kernel's parameter table says (asc_ktensor, asc_kscalar for generic
 * scalars, or the scalar value).  Returns 0, or nonzero after storing an
 * uncaught exception in *exc. */
typedef int (*asc_kentry)(asc_kctx *ctx, void *const *args, asc_kexc *exc);

enum {
  ASC_KPARAM_TENSOR = 1 << 0,
  ASC_KPARAM_GENERIC = 1 << 1,   /* dtype/ndim taken from the descriptor */
  ASC_KPARAM_CONSTEXPR = 1 << 2,
  /* ABI 3: not an argument but a value the kernel returns; args[i] is the
   * caller's asc_kresult, written by the kernel (not copied at launch).
   * Result parameters follow every other parameter. */
  ASC_KPARAM_RESULT = 1 << 3
};

typedef struct asc_kparam {
  const char *name;
  uint32_t flags;
  int32_t dtype;   /* ascDataType; ignored when generic */
  int32_t ndim;    /* tensors; -1 when generic */
} asc_kparam;

enum {
  ASC_KERNEL_USES_BARRIER = 1 << 0, /* all blocks must be resident */
  /* ABI 5.  The kernel never reads block_idx or block_num, so its blocks
   * would all do the same work: a launch of any blockDim runs it once, as
   * one block whose team has the threads those blocks would have had.
   * Ignored in modules of earlier versions, which run as SPMD code. */
  ASC_KERNEL_NOT_SPMD = 1 << 1
};

typedef struct asc_kernel_desc {
  const char *name;
  asc_kentry entry;
  uint32_t nparams;
  const asc_kparam *params;
  uint32_t flags;
  uint64_t shared_bytes;  /* per block */
  const char *file;       /* Python source file, for messages */
} asc_kernel_desc;

typedef struct asc_module_desc {
  uint32_t abi_version;   /* ASC_KABI_VERSION */
  uint32_t nkernels;
  const asc_kernel_desc *kernels;
} asc_module_desc;

/* Every module exports exactly this symbol. */
#define ASC_MODULE_SYMBOL "asc_module_v1"

/* Optional, in modules written by `ascc --emit=so`: what each entry of
 * asc_module_v1.kernels was specialised for, in the same order.  Entries
 * may then share a kernel name: the runtime shows one kernel per name and
 * runs the entry whose signature the launch arguments fit, never
 * compiling. */
enum {
  ASC_KSPEC_MAY_ALIAS = 1 << 0   /* compiled for overlapping tensors */
};

typedef struct asc_kspec {
  /* Canonical signature text, "k(f32[2], f32[1:s], int, i64=3)" (the
   * syntax of `ascc --signature`, docs/types.md). */
  const char *signature;
  uint32_t flags;
} asc_kspec;

typedef struct asc_kspecs_desc {
  uint32_t abi_version;   /* ASC_KABI_VERSION */
  uint32_t nkernels;      /* == asc_module_v1.nkernels */
  const asc_kspec *specs;
} asc_kspecs_desc;

#define ASC_SPECS_SYMBOL "asc_specs_v1"

#endif /* ASC_KERNEL_ABI_H */
