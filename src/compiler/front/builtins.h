/*
 * Every name a kernel may use without defining it: Python builtins (range,
 * min, float, ValueError ...), the asc module (parallel_for, atomics, dtypes
 * ...) and the math module.  One X-macro list gives the stable enum ids and
 * the table; a name present in several namespaces (sqrt in asc and math,
 * min in Python and asc) is one entry with a namespace mask, so asc.sqrt and
 * math.sqrt resolve to the same id.
 */
#ifndef ASC_BUILTINS_H
#define ASC_BUILTINS_H

#include <stdbool.h>
#include <stdint.h>

#include "asc/asc.h"

typedef enum asc__namespace {
  ASC_NS_PY = 1,    /* bare names: range, min, max, abs, float, ValueError */
  ASC_NS_ASC = 2,   /* asc.X (or the alias of `import pyasc as asc`) */
  ASC_NS_MATH = 4,  /* math.X */
  ASC_NS_NP = 8,    /* np.X (import numpy as np): the numpy names of the
                     * math builtins, constants and dtypes, looked up
                     * through asc__builtin_lookup's alias table */
  ASC_NS_CMATH = 16 /* cmath.X (import cmath): Python's cmath, through an
                     * alias table as numpy's */
} asc__namespace;

typedef enum asc__builtin_kind {
  ASC_BK_FUNC,      /* callable */
  ASC_BK_DTYPE,     /* a scalar type: annotation, dtype argument, and a cast
                     * when called with one argument (asc.float32(x)) */
  ASC_BK_TYPE,      /* a type constructor used in annotations only
                     * (asc.Tensor[asc.float32, 2], asc.ConstExpr[int]) */
  ASC_BK_CONST,     /* a value: math.pi, math.inf */
  ASC_BK_EXC,       /* an exception class: raise/except */
  ASC_BK_DECORATOR  /* asc.kernel, asc.jit, asc.func */
} asc__builtin_kind;

#define ASC_NS_AM (ASC_NS_ASC | ASC_NS_MATH)
#define ASC_NS_PA (ASC_NS_PY | ASC_NS_ASC)
#define ASC_NS_ALL (ASC_NS_PY | ASC_NS_ASC | ASC_NS_MATH)

/* The numpy functions of infer_numpy.c and lower_numpy.c, one row each
 * (docs/architecture.md, "A new numpy function"): np.NAME (or
 * np.SUB.NAME when the name is "SUB.NAME"), its arguments as in
 * ASC_BUILTINS.  The first argument takes an array (a tuple of arrays
 * for the stacks), and so do the second of the ufuncs' outer and
 * np.average's weights: a kernel parameter passed there is an array
 * parameter (params.c).  np.meshgrid takes up to 8 arrays (*xi: the
 * names "*0" ... cannot be keywords).  np.mgrid and np.ogrid are
 * subscripted, not called (types/infer_grid.c). */
#define ASC_NUMPY_FUNCS(X)                                                     \
  X(NP_ROLL, "roll", 0, ASC_BK_FUNC, 2, 3, "a,shift,axis")                     \
  X(NP_TILE, "tile", 0, ASC_BK_FUNC, 2, 2, "A,reps")                           \
  X(NP_REPEAT, "repeat", 0, ASC_BK_FUNC, 2, 3, "a,repeats,axis")               \
  X(NP_CONCATENATE, "concatenate", 0, ASC_BK_FUNC, 1, 2, "arrays,axis")        \
  X(NP_STACK, "stack", 0, ASC_BK_FUNC, 1, 2, "arrays,axis")                    \
  X(NP_HSTACK, "hstack", 0, ASC_BK_FUNC, 1, 1, "tup")                          \
  X(NP_VSTACK, "vstack", 0, ASC_BK_FUNC, 1, 1, "tup")                          \
  X(NP_COLUMN_STACK, "column_stack", 0, ASC_BK_FUNC, 1, 1, "tup")              \
  X(NP_TRIU, "triu", 0, ASC_BK_FUNC, 1, 2, "m,k")                              \
  X(NP_TRIL, "tril", 0, ASC_BK_FUNC, 1, 2, "m,k")                              \
  X(NP_ADD_OUTER, "add.outer", 0, ASC_BK_FUNC, 2, 2, "A,B")                    \
  X(NP_SUBTRACT_OUTER, "subtract.outer", 0, ASC_BK_FUNC, 2, 2, "A,B")          \
  X(NP_MULTIPLY_OUTER, "multiply.outer", 0, ASC_BK_FUNC, 2, 2, "A,B")          \
  X(NP_AVERAGE, "average", 0, ASC_BK_FUNC, 1, 5,                               \
    "a,axis,weights,returned,keepdims")                                        \
  X(NP_BINCOUNT, "bincount", 0, ASC_BK_FUNC, 1, 3, "x,weights,minlength")      \
  X(NP_SEARCHSORTED, "searchsorted", 0, ASC_BK_FUNC, 2, 4,                     \
    "a,v,side,sorter")                                                         \
  X(NP_DIGITIZE, "digitize", 0, ASC_BK_FUNC, 2, 3, "x,bins,right")             \
  X(NP_COV, "cov", 0, ASC_BK_FUNC, 1, 8,                                       \
    "m,y,rowvar,bias,ddof,fweights,aweights,dtype")                            \
  X(NP_CORRCOEF, "corrcoef", 0, ASC_BK_FUNC, 1, 6,                             \
    "x,y,rowvar,bias,ddof,dtype")                                              \
  X(NP_INDICES, "indices", 0, ASC_BK_FUNC, 1, 3, "dimensions,dtype,sparse")    \
  X(NP_SORT, "sort", 0, ASC_BK_FUNC, 1, 4, "a,axis,kind,order")               \
  X(NP_ARGSORT, "argsort", 0, ASC_BK_FUNC, 1, 4, "a,axis,kind,order")          \
  X(NP_MEDIAN, "median", 0, ASC_BK_FUNC, 1, 5,                                 \
    "a,axis,out,overwrite_input,keepdims")                                     \
  /* rewritten while resolving into the functions above (front/rewrite.c, \
   * asc__rewrite_numpy_more) */                                           \
  X(NP_COUNT_NONZERO, "count_nonzero", 0, ASC_BK_FUNC, 1, 3,                   \
    "a,axis,keepdims")                                                         \
  X(NP_ISCLOSE, "isclose", 0, ASC_BK_FUNC, 2, 5, "a,b,rtol,atol,equal_nan")    \
  X(NP_ALLCLOSE, "allclose", 0, ASC_BK_FUNC, 2, 5, "a,b,rtol,atol,equal_nan")  \
  X(NP_PTP, "ptp", 0, ASC_BK_FUNC, 1, 4, "a,axis,out,keepdims")                \
  X(NP_NANSUM, "nansum", 0, ASC_BK_FUNC, 1, 5, "a,axis,dtype,out,keepdims")    \
  X(NP_NANPROD, "nanprod", 0, ASC_BK_FUNC, 1, 5, "a,axis,dtype,out,keepdims")  \
  X(NP_NANMEAN, "nanmean", 0, ASC_BK_FUNC, 1, 5, "a,axis,dtype,out,keepdims")  \
  X(NP_CROSS, "cross", 0, ASC_BK_FUNC, 2, 2, "a,b")                            \
  X(NP_EXPAND_DIMS, "expand_dims", 0, ASC_BK_FUNC, 2, 2, "a,axis")             \
  X(NP_FLATNONZERO, "flatnonzero", 0, ASC_BK_FUNC, 1, 1, "a")                   \
  X(NP_ARRAY, "array", 0, ASC_BK_FUNC, 1, 2, "object,dtype")                   \
  X(NP_ASARRAY, "asarray", 0, ASC_BK_FUNC, 1, 2, "a,dtype")                    \
  X(NP_MESHGRID, "meshgrid", 0, ASC_BK_FUNC, 0, 11,                            \
    "*0,*1,*2,*3,*4,*5,*6,*7,indexing,sparse,copy")                            \
  X(NP_HISTOGRAM, "histogram", 0, ASC_BK_FUNC, 1, 5,                           \
    "a,bins,range,density,weights")                                            \
  X(NP_HISTOGRAM_BIN_EDGES, "histogram_bin_edges", 0, ASC_BK_FUNC, 1, 4,       \
    "a,bins,range,weights")                                                    \
  X(NP_UNIQUE, "unique", 0, ASC_BK_FUNC, 1, 7,                                 \
    "ar,return_index,return_inverse,return_counts,axis,equal_nan,sorted")      \
  X(NP_MGRID, "mgrid", 0, ASC_BK_TYPE, 0, 0, "")                               \
  X(NP_OGRID, "ogrid", 0, ASC_BK_TYPE, 0, 0, "")                               \
  X(NP_TRACE, "trace", 0, ASC_BK_FUNC, 1, 2, "a,offset")                      \
  X(NP_DIAG, "diag", 0, ASC_BK_FUNC, 1, 2, "v,k")                              \
  X(NP_DIFF, "diff", 0, ASC_BK_FUNC, 1, 5, "a,n,axis,prepend,append")         \
  X(NP_MAXIMUM_ACCUMULATE, "maximum.accumulate", 0, ASC_BK_FUNC, 1, 2,         \
    "array,axis")                                                              \
  X(NP_MINIMUM_ACCUMULATE, "minimum.accumulate", 0, ASC_BK_FUNC, 1, 2,         \
    "array,axis")                                                              \
  X(NP_PERCENTILE, "percentile", 0, ASC_BK_FUNC, 2, 7,                         \
    "a,q,axis,out,overwrite_input,method,keepdims")                            \
  X(NP_QUANTILE, "quantile", 0, ASC_BK_FUNC, 2, 7,                             \
    "a,q,axis,out,overwrite_input,method,keepdims")                            \
  /* np.linalg on LAPACK (types/infer_linalg.c, lower_linalg.c) */              \
  X(NP_LINALG_INV, "linalg.inv", 0, ASC_BK_FUNC, 1, 1, "a")                    \
  X(NP_LINALG_SOLVE, "linalg.solve", 0, ASC_BK_FUNC, 2, 2, "a,b")              \
  X(NP_LINALG_CHOLESKY, "linalg.cholesky", 0, ASC_BK_FUNC, 1, 2, "a,upper")    \
  X(NP_LINALG_DET, "linalg.det", 0, ASC_BK_FUNC, 1, 1, "a")                    \
  X(NP_LINALG_SLOGDET, "linalg.slogdet", 0, ASC_BK_FUNC, 1, 1, "a")            \
  X(NP_LINALG_EIGH, "linalg.eigh", 0, ASC_BK_FUNC, 1, 2, "a,UPLO")             \
  X(NP_LINALG_EIGVALSH, "linalg.eigvalsh", 0, ASC_BK_FUNC, 1, 2, "a,UPLO")    \
  X(NP_LINALG_SVD, "linalg.svd", 0, ASC_BK_FUNC, 1, 4,                         \
    "a,full_matrices,compute_uv,hermitian")                                    \
  X(NP_LINALG_QR, "linalg.qr", 0, ASC_BK_FUNC, 1, 2, "a,mode")                \
  X(NP_LINALG_LSTSQ, "linalg.lstsq", 0, ASC_BK_FUNC, 2, 3, "a,b,rcond")

/* X(ID, "name", namespaces, kind, min_args, max_args (-1: any), "params")
 * params names the parameters for keyword arguments, comma-separated. */
#define ASC_BUILTINS(X)                                                        \
  /* loops and parallelism */                                                  \
  X(RANGE, "range", ASC_NS_PY, ASC_BK_FUNC, 1, 3, "start,stop,step")           \
  X(PRANGE, "prange", ASC_NS_ASC, ASC_BK_FUNC, 1, 3, "start,stop,step")        \
  X(STATIC_RANGE, "static_range", ASC_NS_ASC, ASC_BK_FUNC, 1, 3,               \
    "start,stop,step")                                                         \
  X(PARALLEL_FOR, "parallel_for", ASC_NS_ASC, ASC_BK_FUNC, 2, 2, "n,body")     \
  X(GET_BLOCK_IDX, "get_block_idx", ASC_NS_ASC, ASC_BK_FUNC, 0, 0, "")         \
  X(GET_BLOCK_NUM, "get_block_num", ASC_NS_ASC, ASC_BK_FUNC, 0, 0, "")         \
  /* synchronisation */                                                        \
  X(BARRIER, "barrier", ASC_NS_ASC, ASC_BK_FUNC, 0, 0, "")                     \
  X(CRITICAL, "critical", ASC_NS_ASC, ASC_BK_FUNC, 0, 0, "")                   \
  X(ATOMIC_ADD, "atomic_add", ASC_NS_ASC, ASC_BK_FUNC, 3, 3, "ary,idx,val")    \
  X(ATOMIC_SUB, "atomic_sub", ASC_NS_ASC, ASC_BK_FUNC, 3, 3, "ary,idx,val")    \
  X(ATOMIC_MIN, "atomic_min", ASC_NS_ASC, ASC_BK_FUNC, 3, 3, "ary,idx,val")    \
  X(ATOMIC_MAX, "atomic_max", ASC_NS_ASC, ASC_BK_FUNC, 3, 3, "ary,idx,val")    \
  X(ATOMIC_CAS, "atomic_cas", ASC_NS_ASC, ASC_BK_FUNC, 4, 4,                   \
    "ary,idx,expected,desired")                                                \
  X(ATOMIC_EXCHANGE, "atomic_exchange", ASC_NS_ASC, ASC_BK_FUNC, 3, 3,         \
    "ary,idx,val")                                                             \
  X(LOCK_ARRAY, "lock_array", ASC_NS_ASC, ASC_BK_FUNC, 1, 1, "n")              \
  X(LOCK, "lock", ASC_NS_ASC, ASC_BK_FUNC, 2, 2, "locks,idx")                  \
  X(UNLOCK, "unlock", ASC_NS_ASC, ASC_BK_FUNC, 2, 2, "locks,idx")              \
  /* scratch memory */                                                         \
  X(LOCAL_ARRAY, "local_array", ASC_NS_ASC, ASC_BK_FUNC, 2, 2, "shape,dtype")  \
  X(SHARED_ARRAY, "shared_array", ASC_NS_ASC, ASC_BK_FUNC, 2, 2,               \
    "shape,dtype")                                                             \
  /* Python builtins */                                                        \
  X(MIN, "min", ASC_NS_PA, ASC_BK_FUNC, 2, -1, "")                             \
  X(MAX, "max", ASC_NS_PA, ASC_BK_FUNC, 2, -1, "")                             \
  X(ABS, "abs", ASC_NS_PA, ASC_BK_FUNC, 1, 1, "x")                             \
  X(LEN, "len", ASC_NS_PY, ASC_BK_FUNC, 1, 1, "obj")                           \
  X(FLOAT, "float", ASC_NS_PY, ASC_BK_FUNC, 1, 1, "x")                         \
  X(INT, "int", ASC_NS_PY, ASC_BK_FUNC, 1, 1, "x")                             \
  X(BOOL, "bool", ASC_NS_PY, ASC_BK_FUNC, 1, 1, "x")                           \
  /* math (asc.X and math.X) */                                                \
  X(SIN, "sin", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                             \
  X(COS, "cos", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                             \
  X(TAN, "tan", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                             \
  X(ASIN, "asin", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(ACOS, "acos", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(ATAN, "atan", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(ATAN2, "atan2", ASC_NS_AM, ASC_BK_FUNC, 2, 2, "y,x")                       \
  X(SINH, "sinh", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(COSH, "cosh", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(TANH, "tanh", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(EXP, "exp", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                             \
  X(EXP2, "exp2", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(EXPM1, "expm1", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                         \
  X(LOG, "log", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                             \
  X(LOG2, "log2", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(LOG10, "log10", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                         \
  X(LOG1P, "log1p", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                         \
  X(SQRT, "sqrt", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(POW, "pow", ASC_NS_ALL, ASC_BK_FUNC, 2, 2, "x,y")                          \
  X(FLOOR, "floor", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                         \
  X(CEIL, "ceil", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(TRUNC, "trunc", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                         \
  X(FABS, "fabs", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(ERF, "erf", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                             \
  X(ERFC, "erfc", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                           \
  X(GAMMA, "gamma", ASC_NS_MATH, ASC_BK_FUNC, 1, 1, "x")                       \
  X(LGAMMA, "lgamma", ASC_NS_MATH, ASC_BK_FUNC, 1, 1, "x")                     \
  X(HYPOT, "hypot", ASC_NS_AM, ASC_BK_FUNC, 2, 2, "x,y")                       \
  X(FMOD, "fmod", ASC_NS_AM, ASC_BK_FUNC, 2, 2, "x,y")                         \
  X(COPYSIGN, "copysign", ASC_NS_AM, ASC_BK_FUNC, 2, 2, "x,y")                 \
  X(ISNAN, "isnan", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                         \
  X(ISINF, "isinf", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                         \
  X(ISFINITE, "isfinite", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                   \
  /* rewritten while resolving (front/rewrite.c, math_isclose) */              \
  X(MATH_ISCLOSE, "isclose", ASC_NS_MATH, ASC_BK_FUNC, 2, 4,                   \
    "a,b,rel_tol,abs_tol")                                                     \
  /* math constants */                                                         \
  X(PI, "pi", ASC_NS_AM, ASC_BK_CONST, 0, 0, "")                               \
  X(E, "e", ASC_NS_AM, ASC_BK_CONST, 0, 0, "")                                 \
  X(INF, "inf", ASC_NS_AM, ASC_BK_CONST, 0, 0, "")                             \
  X(NAN, "nan", ASC_NS_AM, ASC_BK_CONST, 0, 0, "")                             \
  /* scalar types: annotations, dtype arguments, casts */                      \
  X(DT_BOOL, "bool_", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                     \
  X(DT_INT8, "int8", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                      \
  X(DT_INT16, "int16", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                    \
  X(DT_INT32, "int32", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                    \
  X(DT_INT64, "int64", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                    \
  X(DT_UINT8, "uint8", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                    \
  X(DT_UINT16, "uint16", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                  \
  X(DT_UINT32, "uint32", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                  \
  X(DT_UINT64, "uint64", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                  \
  X(DT_FLOAT16, "float16", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                \
  X(DT_BFLOAT16, "bfloat16", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")              \
  X(DT_FLOAT32, "float32", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                \
  X(DT_FLOAT64, "float64", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")                \
  /* type constructors (annotations) */                                        \
  X(TENSOR, "Tensor", ASC_NS_ASC, ASC_BK_TYPE, 0, 0, "")                       \
  X(CONSTEXPR, "ConstExpr", ASC_NS_ASC, ASC_BK_TYPE, 0, 0, "")                 \
  /* exception classes */                                                      \
  X(EXCEPTION, "Exception", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")                \
  X(VALUE_ERROR, "ValueError", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")             \
  X(INDEX_ERROR, "IndexError", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")             \
  X(ZERO_DIVISION_ERROR, "ZeroDivisionError", ASC_NS_PY, ASC_BK_EXC, 0, 1,     \
    "msg")                                                                     \
  X(ASSERTION_ERROR, "AssertionError", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")     \
  X(RUNTIME_ERROR, "RuntimeError", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")         \
  X(ARITHMETIC_ERROR, "ArithmeticError", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")   \
  X(OVERFLOW_ERROR, "OverflowError", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")       \
  X(TYPE_ERROR, "TypeError", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")               \
  X(MEMORY_ERROR, "MemoryError", ASC_NS_PY, ASC_BK_EXC, 0, 1, "msg")           \
  X(NOT_IMPLEMENTED_ERROR, "NotImplementedError", ASC_NS_PY, ASC_BK_EXC, 0, 1, \
    "msg")                                                                     \
  /* numpy reductions (np.X only, and the array methods a.X()) */            \
  X(NP_SUM, "sum", 0, ASC_BK_FUNC, 1, 5, "a,axis,dtype,out,keepdims")       \
  X(NP_PROD, "prod", 0, ASC_BK_FUNC, 1, 5, "a,axis,dtype,out,keepdims")     \
  X(NP_MIN, "min", 0, ASC_BK_FUNC, 1, 4, "a,axis,out,keepdims")             \
  X(NP_MAX, "max", 0, ASC_BK_FUNC, 1, 4, "a,axis,out,keepdims")             \
  X(NP_MEAN, "mean", 0, ASC_BK_FUNC, 1, 5, "a,axis,dtype,out,keepdims")     \
  X(NP_VAR, "var", 0, ASC_BK_FUNC, 1, 6, "a,axis,dtype,out,ddof,keepdims")  \
  X(NP_STD, "std", 0, ASC_BK_FUNC, 1, 6, "a,axis,dtype,out,ddof,keepdims")  \
  X(NP_ANY, "any", 0, ASC_BK_FUNC, 1, 4, "a,axis,out,keepdims")             \
  X(NP_ALL, "all", 0, ASC_BK_FUNC, 1, 4, "a,axis,out,keepdims")             \
  X(NP_ARGMIN, "argmin", 0, ASC_BK_FUNC, 1, 4, "a,axis,out,keepdims")       \
  X(NP_ARGMAX, "argmax", 0, ASC_BK_FUNC, 1, 4, "a,axis,out,keepdims")       \
  X(NP_DOT, "dot", 0, ASC_BK_FUNC, 2, 3, "a,b,out")                         \
  X(NP_WHERE, "where", 0, ASC_BK_FUNC, 3, 3, "condition,x,y")               \
  X(NP_CLIP, "clip", 0, ASC_BK_FUNC, 1, 3, "a,a_min|min,a_max|max")         \
  /* arrays a kernel creates (np.X; copy, astype and fill also as methods) */ \
  X(NP_COPY, "copy", 0, ASC_BK_FUNC, 1, 1, "a")                             \
  X(NP_ASTYPE, "astype", 0, ASC_BK_FUNC, 2, 2, "a,dtype")                   \
  X(NP_FILL, "fill", 0, ASC_BK_FUNC, 2, 2, "a,value")                       \
  X(NP_RESHAPE, "reshape", 0, ASC_BK_FUNC, 2, 9, "a,newshape")              \
  X(NP_EMPTY, "empty", 0, ASC_BK_FUNC, 1, 2, "shape,dtype")                 \
  X(NP_ZEROS, "zeros", 0, ASC_BK_FUNC, 1, 2, "shape,dtype")                 \
  X(NP_ONES, "ones", 0, ASC_BK_FUNC, 1, 2, "shape,dtype")                   \
  X(NP_FULL, "full", 0, ASC_BK_FUNC, 2, 3, "shape,fill_value,dtype")        \
  X(NP_EMPTY_LIKE, "empty_like", 0, ASC_BK_FUNC, 1, 2, "prototype,dtype")   \
  X(NP_ZEROS_LIKE, "zeros_like", 0, ASC_BK_FUNC, 1, 2, "a,dtype")           \
  X(NP_ONES_LIKE, "ones_like", 0, ASC_BK_FUNC, 1, 2, "a,dtype")             \
  X(NP_FULL_LIKE, "full_like", 0, ASC_BK_FUNC, 2, 3, "a,fill_value,dtype")  \
  X(NP_ARANGE, "arange", 0, ASC_BK_FUNC, 1, 4, "start,stop,step,dtype")     \
  X(NP_LINSPACE, "linspace", 0, ASC_BK_FUNC, 2, 5,                          \
    "start,stop,num,endpoint,dtype")                                          \
  X(NP_EYE, "eye", 0, ASC_BK_FUNC, 1, 4, "N,M,k,dtype")                     \
  X(NP_IDENTITY, "identity", 0, ASC_BK_FUNC, 1, 2, "n,dtype")               \
  /* views and copies of an array's elements; cumsum, outer, linalg.norm */  \
  X(NP_TRANSPOSE, "transpose", 0, ASC_BK_FUNC, 1, 9, "a,axes")              \
  X(NP_SWAPAXES, "swapaxes", 0, ASC_BK_FUNC, 3, 3, "a,axis1,axis2")         \
  X(NP_RAVEL, "ravel", 0, ASC_BK_FUNC, 1, 1, "a")                           \
  X(NP_FLATTEN, "flatten", 0, ASC_BK_FUNC, 1, 1, "a")                       \
  X(NP_CUMPROD, "cumprod", 0, ASC_BK_FUNC, 1, 4, "a,axis,dtype,out")        \
  X(NP_CUMSUM, "cumsum", 0, ASC_BK_FUNC, 1, 4, "a,axis,dtype,out")          \
  X(NP_OUTER, "outer", 0, ASC_BK_FUNC, 2, 3, "a,b,out")                     \
  X(NP_NORM, "norm", 0, ASC_BK_FUNC, 1, 4, "x,ord,axis,keepdims")           \
  X(NP_FLIP, "flip", 0, ASC_BK_FUNC, 1, 2, "m,axis")                        \
  X(NP_FLIPUD, "flipud", 0, ASC_BK_FUNC, 1, 1, "m")                         \
  X(NP_FLIPLR, "fliplr", 0, ASC_BK_FUNC, 1, 1, "m")                         \
  X(NP_ROT90, "rot90", 0, ASC_BK_FUNC, 1, 3, "m,k,axes")                    \
  X(NP_MOVEAXIS, "moveaxis", 0, ASC_BK_FUNC, 3, 3, "a,source,destination") \
  /* np.UF.outer(A, B)'s left operand: A viewed with B.ndim new trailing   \
   * axes of size 1 (front/rewrite_ufunc.c; no source names it) */          \
  X(NP_OUTER_LEFT, "outer:left", 0, ASC_BK_FUNC, 2, 2, "a,b")               \
  /* np.einsum's operand k with nd subscripts (its number of axes checked) \
   * and the diagonal of a 2-D operand k with subscript letter c (rewrite_ \
   * einsum.c) */                                                           \
  X(NP_EINSUM_OPERAND, "einsum:operand", 0, ASC_BK_FUNC, 3, 3, "a,nd,k")    \
  X(NP_EINSUM_DIAG, "einsum:diagonal", 0, ASC_BK_FUNC, 3, 3, "a,k,c")       \
  /* complex numbers (docs/arrays.md) */                                      \
  X(DT_COMPLEX64, "complex64", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")          \
  X(DT_COMPLEX128, "complex128", ASC_NS_ASC, ASC_BK_DTYPE, 1, 1, "x")        \
  X(COMPLEX, "complex", ASC_NS_PY, ASC_BK_FUNC, 1, 2, "real,imag")           \
  X(NP_CONJ, "conj", 0, ASC_BK_FUNC, 1, 1, "x")                             \
  X(NP_ANGLE, "angle", 0, ASC_BK_FUNC, 1, 2, "z,deg")                       \
  X(NP_REAL, "real", 0, ASC_BK_FUNC, 1, 1, "val")                           \
  X(NP_IMAG, "imag", 0, ASC_BK_FUNC, 1, 1, "val")                           \
  /* numpy only (np.cbrt) */                                                  \
  X(NP_CBRT, "cbrt", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "x")                     \
  X(NP_SIGN, "sign", 0, ASC_BK_FUNC, 1, 1, "x")                             \
  X(NP_HEAVISIDE, "heaviside", 0, ASC_BK_FUNC, 2, 2, "x1,x2")               \
  X(NP_FMAX, "fmax", 0, ASC_BK_FUNC, 2, 2, "x1,x2")                         \
  X(NP_FMIN, "fmin", 0, ASC_BK_FUNC, 2, 2, "x1,x2")                         \
  X(NP_LOGADDEXP, "logaddexp", 0, ASC_BK_FUNC, 2, 2, "x1,x2")               \
  X(NP_RECIPROCAL, "reciprocal", 0, ASC_BK_FUNC, 1, 1, "x")                 \
  X(NP_ROUND, "round", 0, ASC_BK_FUNC, 1, 2, "a,decimals")                  \
  /* cmath.X and, of reals, math.X (the others are the math builtins of    \
   * that name; np.arcsinh, np.arccosh, np.arctanh are these of reals) */   \
  X(ASINH, "asinh", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "z")                      \
  X(ACOSH, "acosh", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "z")                      \
  X(ATANH, "atanh", ASC_NS_AM, ASC_BK_FUNC, 1, 1, "z")                      \
  X(CM_PHASE, "phase", 0, ASC_BK_FUNC, 1, 1, "z")                           \
  X(CM_POLAR, "polar", 0, ASC_BK_FUNC, 1, 1, "z")                           \
  X(CM_RECT, "rect", 0, ASC_BK_FUNC, 2, 2, "r,phi")                         \
  X(CM_INFJ, "infj", 0, ASC_BK_CONST, 0, 0, "")                             \
  X(CM_NANJ, "nanj", 0, ASC_BK_CONST, 0, 0, "")                             \
  /* numpy functions typed in types/infer_numpy.c and lowered in          \
   * lower_numpy.c (ASC_NUMPY_FUNCS above) */                                \
  ASC_NUMPY_FUNCS(X)                                                         \
  /* decorators */                                                             \
  X(KERNEL, "kernel", ASC_NS_ASC, ASC_BK_DECORATOR, 0, 3,                      \
    "debug,boundscheck,fastmath")                                              \
  X(JIT, "jit", ASC_NS_ASC, ASC_BK_DECORATOR, 0, 3,                            \
    "debug,boundscheck,fastmath")                                              \
  X(FUNC, "func", ASC_NS_ASC, ASC_BK_DECORATOR, 0, 1, "fastmath")

typedef enum asc__builtin_id {
  ASC_BI_NONE = 0,
#define X(id, name, ns, kind, mn, mx, params) ASC_BI_##id,
  ASC_BUILTINS(X)
#undef X
  ASC_BI_COUNT
} asc__builtin_id;

typedef struct asc__builtin {
  asc__builtin_id id;
  const char *name;
  unsigned ns;              /* mask of asc__namespace */
  asc__builtin_kind kind;
  int8_t min_args;
  int8_t max_args;          /* -1: any number >= min_args */
  const char *params;       /* "x,y": names for keyword arguments */
} asc__builtin;

/* The builtin called `name` in namespace ns (one ASC_NS_* bit); NULL when
 * there is none.  asc.bool is an alias of asc.bool_. */
const asc__builtin *asc__builtin_lookup(asc__namespace ns, const char *name);
/* The numpy reduction an array method names (a.sum(), a.max()), or NULL. */
const asc__builtin *asc__builtin_method(const char *name);
/* Does id make a new array (np.zeros, a.copy() ...)? */
static inline bool asc__builtin_is_creation(asc__builtin_id id) {
  return id >= ASC_BI_NP_COPY && id <= ASC_BI_NP_IDENTITY &&
         id != ASC_BI_NP_FILL && id != ASC_BI_NP_RESHAPE;
}
/* Is id one of the numpy reductions (NP_SUM .. NP_ARGMAX)? */
static inline bool asc__builtin_is_reduction(asc__builtin_id id) {
  return id >= ASC_BI_NP_SUM && id <= ASC_BI_NP_ARGMAX;
}
/* The ids of ASC_NUMPY_FUNCS: ASC_BI_NP_ROLL up to ASC_NUMPY_FUNCS_END. */
#define ASC_NUMPY_ONE(...) +1
#define ASC_NUMPY_FUNCS_END (ASC_BI_NP_ROLL + (0 ASC_NUMPY_FUNCS(ASC_NUMPY_ONE)))
/* Is id one of the np.linalg functions of ASC_NUMPY_FUNCS? */
static inline bool asc__builtin_is_linalg(asc__builtin_id id) {
  return id >= ASC_BI_NP_LINALG_INV && id <= ASC_BI_NP_LINALG_LSTSQ;
}
/* Is id one of ASC_NUMPY_FUNCS? */
static inline bool asc__builtin_is_numpy_func(asc__builtin_id id) {
  return id >= ASC_BI_NP_ROLL && id < ASC_NUMPY_FUNCS_END;
}
/* The numpy function np.sub.name (sub: "linalg", "add" ...), or NULL. */
const asc__builtin *asc__builtin_numpy_sub(const char *sub, const char *name);
/* Is np.sub a namespace of numpy functions (np.linalg, np.add ...)? */
bool asc__builtin_is_numpy_sub(const char *sub);
/* The entry of id; NULL for ASC_BI_NONE or out of range. */
const asc__builtin *asc__builtin_get(asc__builtin_id id);
/* ASC_BK_DTYPE: the scalar type; ascDataTypeCount for other builtins. */
ascDataType asc__builtin_dtype(const asc__builtin *b);
/* ASC_BK_CONST: the value (math.pi ...); 0 for other builtins. */
double asc__builtin_value(const asc__builtin *b);
/* Index of parameter `name` of b, or -1. */
int asc__builtin_param_index(const asc__builtin *b, const char *name);

/* The numpy names kernels accept (np.sqrt, np.arcsin, np.float32 ...),
 * comma-separated, for diagnostics. */
extern const char asc__numpy_names[];
/* The same for cmath. */
extern const char asc__cmath_names[];

#endif /* ASC_BUILTINS_H */
