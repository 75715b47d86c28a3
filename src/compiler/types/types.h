/*
 * Kernel-language types, the promotion lattice and launch signatures.
 * docs/types.md is the prose version of this file.
 *
 *   scalar      a dtype (bool, int8..int64, uint8..uint64, float16, bfloat16,
 *               float32, float64), strong or weak.  Weak scalars are the
 *               types of Python literals and Python scalars (`1`, `2.5`,
 *               `n: int`): they take the type of the strong operand they
 *               meet.  Only two weak kinds exist, weak int (dtype ascInt64)
 *               and weak float (dtype ascFloat64); Python's bool has one
 *               width, so True/False are plain bool (as in JAX).
 *   tensor      Tensor[dtype, ndim], contiguous or strided
 *   tuple       fixed arity (t.shape is a tuple of ndim int64)
 *   none, str   `None` / the result of a call without value; string
 *               literals (exception messages only)
 *   struct      a class used as a struct of scalars
 *   func        a helper (@asc.func) or a parallel-loop body
 *   var         a type variable (union-find), bound by unification
 *   error       the type of an expression that already had an error: it
 *               unifies with everything so one mistake gives one message
 *
 * Every type lives in the compilation's arena.
 */
#ifndef ASC_TYPES_H
#define ASC_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "asc/asc.h"
#include "compiler/cctx.h"

/* ------------------------------------------------------------- dtypes */

bool asc__dtype_valid(ascDataType dt);
bool asc__dtype_is_float(ascDataType dt);    /* f16, bf16, f32, f64 */
bool asc__dtype_is_complex(ascDataType dt);  /* complex64, complex128 */
bool asc__dtype_is_int(ascDataType dt);      /* signed or unsigned, not bool */
bool asc__dtype_is_signed(ascDataType dt);   /* int8..int64 */
bool asc__dtype_is_unsigned(ascDataType dt); /* uint8..uint64 */
int asc__dtype_bits(ascDataType dt);         /* 1 for bool */
/* Short names ("f32"): asc__dtype_short, base/tensor.h. */
/* "float32", ...; "?" for an invalid dtype. */
const char *asc__dtype_long(ascDataType dt);
/* Accepts short and long names ("f32", "float32", "bool").  Python's
 * `int` and `float` are not dtypes; see asc__sig_parse. */
bool asc__dtype_from_name(const char *s, size_t n, ascDataType *dt);

/* ---------------------------------------------------------------- types */

typedef enum asc__tkind {
  ASC_TY_VAR = 0,
  ASC_TY_ERROR,
  ASC_TY_NONE,
  ASC_TY_STR,
  ASC_TY_SCALAR,
  ASC_TY_TENSOR,
  ASC_TY_TUPLE,
  ASC_TY_STRUCT,
  ASC_TY_FUNC,
  /* a dtype used as a value (dt = np.float32, a helper's dtype
   * parameter): a compile-time constant, no register; dtype says which */
  ASC_TY_DTYPE
} asc__tkind;

typedef struct asc__type asc__type;

typedef struct asc__field {
  const char *name;
  asc__type *type;
} asc__field;

struct asc__type {
  asc__tkind kind;
  ascDataType dtype;   /* SCALAR, DTYPE; TENSOR: element type */
  bool weak;           /* SCALAR: weak int (ascInt64) / weak float (ascFloat64) */
  bool contiguous;     /* TENSOR: row-major dense, from the launch signature */
  int32_t ndim;        /* TENSOR */
  int32_t n;           /* TUPLE: arity; STRUCT: fields; FUNC: params */
  asc__type **elems;   /* TUPLE: elements; FUNC: parameter types */
  asc__field *fields;  /* STRUCT */
  const char *name;    /* STRUCT: class name; FUNC: function name or NULL */
  asc__type *ret;      /* FUNC */
  asc__type *link;     /* VAR: what it was unified with; NULL while free */
  int32_t id;          /* VAR: a number for printing ('T3') */
};

/* A free variable; id only names it in dumps ('T3'). */
asc__type *asc__ty_var(asc__cctx *c, int32_t id);
asc__type *asc__ty_error(asc__cctx *c);
asc__type *asc__ty_none(asc__cctx *c);
asc__type *asc__ty_str(asc__cctx *c);
asc__type *asc__ty_dtype(asc__cctx *c, ascDataType dt);
asc__type *asc__ty_scalar(asc__cctx *c, ascDataType dt);
/* dt is ascInt64 (weak int) or ascFloat64 (weak float); ascBool gives
 * strong bool. */
asc__type *asc__ty_weak(asc__cctx *c, ascDataType dt);
asc__type *asc__ty_tensor(asc__cctx *c, ascDataType dt, int32_t ndim,
                          bool contiguous);
/* elems is copied. */
asc__type *asc__ty_tuple(asc__cctx *c, int32_t n, asc__type *const *elems);
/* A tuple of n int64: the type of t.shape. */
asc__type *asc__ty_shape(asc__cctx *c, int32_t n);
asc__type *asc__ty_struct(asc__cctx *c, const char *name, int32_t n,
                          const asc__field *fields);
asc__type *asc__ty_func(asc__cctx *c, const char *name, int32_t n,
                        asc__type *const *params, asc__type *ret);

/* The representative of t (follows and compresses variable links). */
asc__type *asc__ty_find(asc__type *t);

bool asc__ty_is_numeric(const asc__type *t);   /* scalar, strong or weak */
bool asc__ty_is_intlike(const asc__type *t);   /* bool, int, uint, weak int */
bool asc__ty_is_floatlike(const asc__type *t); /* float or weak float */

/* Structural equality after following links; two free variables are equal
 * only when they are the same variable.  ERROR equals everything. */
bool asc__ty_equal(asc__type *a, asc__type *b);

/* Unifies a and b: binds free variables (with an occurs check) and requires
 * everything else to match exactly -- no promotion.  Returns false, and
 * binds nothing further, on a mismatch. */
bool asc__ty_unify(asc__cctx *c, asc__type *a, asc__type *b);

/* The least upper bound of two scalars in the promotion lattice, or NULL
 * when a or b is not a scalar. */
asc__type *asc__ty_promote(asc__cctx *c, asc__type *a, asc__type *b);

/* The least upper bound of two types of the same shape: scalars promote,
 * tuples promote element by element, anything else must be equal.  A free
 * variable joins as the bottom element.  NULL when no join exists. */
asc__type *asc__ty_join(asc__cctx *c, asc__type *a, asc__type *b);

/* Weak types replaced by their defaults (weak int -> int64, weak float ->
 * float64), links removed.  NULL when a free variable is left. */
asc__type *asc__ty_concrete(asc__cctx *c, asc__type *t);

/* "float32", "weak int", "Tensor[float32, 2]", "Tensor[float32, 2, strided]",
 * "tuple[int64, int64]", "None", "str", "Point", "(int64) -> None", "T3". */
void asc__ty_print(asc__buf *b, asc__type *t);
/* The type as diagnostics name it: as asc__ty_print, but a weak scalar is
 * "a Python int literal" / "a Python float literal" ("Python int" inside a
 * tuple), never "weak int". */
const char *asc__ty_name(asc__cctx *c, asc__type *t);

/* ----------------------------------------------- the promotion lattice */

/* Lattice elements: every dtype, strong, plus weak int and weak float. */
typedef struct asc__num {
  ascDataType dtype;
  bool weak;
} asc__num;

/* Least upper bound (JAX's lattice, docs/types.md).  Always defined for
 * valid elements; a weak result means every way up passed through a weak
 * node (e.g. uint64 + int64 -> weak float, as in JAX). */
asc__num asc__num_promote(asc__num a, asc__num b);

/* ------------------------------------------------- launch signatures */

/* One parameter of a specialisation.  For tensors: dtype, ndim,
 * contiguous.  For scalars: dtype, weak (Python int/float: dtype ascInt64 /
 * ascFloat64), and, for ConstExpr parameters, the value (value.i for bool
 * and signed ints, value.u for unsigned ints, value.f for floats). */
typedef struct asc__sig_param {
  bool is_tensor;
  ascDataType dtype;
  int32_t ndim;
  bool contiguous;
  bool weak;
  bool is_constexpr;
  ascScalar value;
} asc__sig_param;

typedef struct asc__sig {
  const char *name;        /* kernel name; NULL when the text gave none */
  int32_t nparams;
  asc__sig_param *params;
} asc__sig;

/* Parses "conv2d(f32[4], f32[4:s], i64, float, u8=3)":
 *   f32[4]    float32 tensor of ndim 4, contiguous ([4:c] says it too)
 *   f32[4:s]  strided
 *   f32 i64   scalars; dtypes f16 bf16 f32 f64 c64 c128 i8 i16 i32 i64 u8 u16 u32
 *             u64 bool or their long names (float32, ...)
 *   int float weak scalars (Python int / float)
 *   T=v       a ConstExpr value: an integer, a float, True or False
 * The name may be left out: "(f32[1], f32[1])".  On a malformed string it
 * records one error (with a caret under the signature text) and returns
 * NULL; it never unwinds for bad input. */
asc__sig *asc__sig_parse(asc__cctx *c, const char *text);

/* The canonical text of sig, which asc__sig_parse reads back: short dtype
 * names, ":s" only for strided tensors, ConstExpr floats printed exactly
 * (%a).  Equal signatures give equal text, so the text is a cache key. */
void asc__sig_format(asc__buf *b, const asc__sig *sig);
bool asc__sig_equal(const asc__sig *a, const asc__sig *b);

/* The signature of a launch from ascLaunchKernel arguments and the
 * kernel's parameter table, into caller storage (out_params has room for
 * nparams entries), without allocating: the driver keys its
 * specialisation table with its text.  Generic tensors take dtype and ndim
 * from the descriptor, contiguity from the strides (size-1 dimensions and
 * empty tensors are contiguous whatever their strides); annotated tensors
 * match their annotation.  Generic scalars read an ascScalar; annotated
 * ones the bare value of the annotated dtype.  The arguments must have
 * passed the launch's checks (runtime/module.c), which are the only ones:
 * nothing here fails. */
void asc__sig_of_args(asc__sig *out, asc__sig_param *out_params,
                      const char *kernel_name,
                      const ascKernelParamInfo *params, int32_t nparams,
                      void *const *args);

/* The signature a kernel's annotations alone give (tensors contiguous),
 * into out (arena storage); false when some parameter is generic or a
 * ConstExpr, whose type or value only a launch can give. */
bool asc__sig_from_annotations(asc__cctx *c, const char *name,
                                const ascKernelParamInfo *params,
                                int32_t nparams, asc__sig *out);

/* The type a signature parameter gives a generic parameter. */
asc__type *asc__sig_param_type(asc__cctx *c, const asc__sig_param *p);

#endif /* ASC_TYPES_H */
