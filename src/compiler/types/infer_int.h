/*
 * Shared by the files of type inference (infer.c: the solver;
 * infer_stmt.c: statements; infer_expr.c: expressions; infer_call.c:
 * calls; infer_numpy.c: the numpy functions of ASC_NUMPY_FUNCS;
 * infer_grid.c and infer_stats.c: grids and histograms) and by nothing
 * else.
 */
#ifndef ASC_INFER_INT_H
#define ASC_INFER_INT_H

#include <stdarg.h>
#include <stdio.h>

#include "compiler/types/infer.h"

/* The solver's state for one local: its current type and where it came
 * from. */
typedef struct cell {
  asc__type *t;          /* NULL: nothing assigned yet (the bottom) */
  bool declared;         /* an annotation or a parameter fixed it */
  bool has_first;
  asc__loc first_loc;    /* first assignment seen */
  asc__loc origin_loc;   /* the assignment that gave t its current value */
} cell;

typedef struct frame {
  asc__ast_func *fn;
  cell *cells;           /* one per fn->locals */
  cell ret;              /* the value returned */
  struct frame *next;
} frame;

typedef struct inst {
  asc__tinst pub;
  asc__type **args;
  int32_t nargs;
  asc__type *ret;        /* solved return type */
  bool busy;             /* being solved (a cycle is a resolver bug) */
  bool checked;
  struct inst *all_next;
} inst;

typedef struct typed_fn {  /* helpers whose original tree is taken */
  const asc__ast_func *fn;
  struct typed_fn *next;
} typed_fn;

typedef struct infer {
  asc__cctx *c;
  asc__ast_module *mod;
  const asc__sig *sig;
  asc__typed *out;
  inst *insts;
  typed_fn *taken;
  int nest;
  int32_t ncalls_cap;
} infer;

typedef struct run {
  infer *in;
  asc__ast_func *fn;
  struct run *up;        /* the run of the caller (a closure reads the
                          * cells of the function around it there) */
  frame *frames;
  frame *cur;            /* innermost function being walked */
  bool check;
  bool changed;
  /* check pass: every expression typed, to turn weak types into their
   * defaults once parents have coerced them */
  asc__ast_expr **typed;
  int32_t ntyped, captyped;
  /* an elementwise builtin call being typed: its tensor arguments count
   * as scalars of their dtype; ew_ndim is the most axes among them */
  bool ew;
  int32_t ew_ndim;
} run;

/* ------------------------------------------------------------ reporting */

static inline void report(run *r, asc__loc loc, const char *fmt, ...)
    ASC_PRINTF(3, 4);
static inline void report(run *r, asc__loc loc, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  if (!r->check)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  asc__diag_error(r->in->c, loc, "%s", msg);
}

static inline void note(run *r, asc__loc loc, const char *fmt, ...)
    ASC_PRINTF(3, 4);
static inline void note(run *r, asc__loc loc, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  if (!r->check)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  asc__diag_note(r->in->c, loc, "%s", msg);
}

static inline const char *tn(run *r, asc__type *t) {
  return asc__ty_name(r->in->c, t);
}

/* As the source spells it: a weak scalar is Python's `int` / `float`. */
static inline const char *py_name(run *r, asc__type *t) {
  t = asc__ty_find(t);
  if (t != NULL && t->kind == ASC_TY_SCALAR && t->weak)
    return asc__dtype_is_float(t->dtype) ? "float" : "int";
  return tn(r, t);
}

/* ------------------------------------------------------------- helpers */

static inline asc__type *err(run *r) { return asc__ty_error(r->in->c); }
static inline asc__type *scalar(run *r, ascDataType dt) {
  return asc__ty_scalar(r->in->c, dt);
}
static inline asc__type *weak(run *r, ascDataType dt) {
  return asc__ty_weak(r->in->c, dt);
}

static inline bool is_err(asc__type *t) {
  t = asc__ty_find(t);
  return t != NULL && t->kind == ASC_TY_ERROR;
}

static inline bool is_kind(asc__type *t, asc__tkind k) {
  t = asc__ty_find(t);
  return t != NULL && t->kind == k;
}

/* An unknown (bottom) or poisoned operand makes the result unknown or
 * poisoned without a further message. */
#define PROPAGATE(t)                                                          \
  do {                                                                        \
    if ((t) == NULL)                                                          \
      return NULL;                                                            \
    if (is_err(t))                                                            \
      return err(r);                                                          \
  } while (0)

/* ------------------------------------------------------------- infer.c */

/* Compile-time constant integer expressions: literals, module constants,
 * ConstExpr parameters, arithmetic of those. */
bool asc__infer_is_const_int(run *r, const asc__ast_expr *e, int depth);
frame *asc__infer_frame_for(run *r, asc__ast_func *fn);
/* The cell of local or parameter s in its function's frame. */
cell *asc__infer_cell(run *r, asc__sym *s);
/* The solver's widening of cur by a newly assigned nw. */
asc__type *asc__infer_widen(run *r, asc__type *cur, asc__type *nw,
                            int depth);
/* Equal types (NULL and the error type compare by identity). */
bool asc__infer_same(asc__type *a, asc__type *b);
bool asc__infer_fits(run *r, asc__type *s, asc__type *t, bool declared,
                     int depth);
/* Whether e, a Python int meeting integer type t, is computed at run
 * time and may not fit t. */
bool asc__infer_runtime_int(const asc__ast_expr *e, asc__type *t);
void asc__infer_coerce(run *r, asc__ast_expr *e, asc__type *t, int depth);
asc__type *asc__infer_assign_cell(run *r, asc__sym *sym, asc__loc loc,
                                  asc__type *s, asc__ast_expr *value);
/* The type an annotation denotes; *constexpr set for ConstExpr[...]. */
asc__type *asc__infer_annotation_type(run *r, asc__ast_expr *a,
                                      bool *constexpr);
asc__type *asc__infer_struct_type(run *r, asc__ast_class *cls);
/* e's value as a magnitude and a sign when e is an integer literal (maybe
 * negated); false otherwise. */
bool asc__infer_int_literal(const asc__ast_expr *e, uint64_t *mag,
                            bool *neg);
/* Whether the integer -mag (neg) or mag is a value of dt. */
bool asc__infer_literal_fits(uint64_t mag, bool neg, ascDataType dt);
/* The instance of helper fn for these argument types, solved. */
inst *asc__infer_instantiate(run *r, asc__ast_func *fn, asc__type **args,
                             int32_t nargs, asc__loc loc);

/* -------------------------------------------------------- infer_comp.c */

/* Unrolls comprehension e (kind COMP, or unrolled for an earlier run) into
 * the tuple of its elements or their sum; false after reporting why its
 * iterable has no static length. */
bool asc__infer_unroll(run *r, asc__ast_expr *e);

/* -------------------------------------------------------- infer_stmt.c */

void asc__infer_block(run *r, asc__ast_block *b);

/* -------------------------------------------------------- infer_expr.c */

asc__type *asc__infer_expr(run *r, asc__ast_expr *e);
void asc__infer_settype(run *r, asc__ast_expr *e, asc__type *t);
bool asc__infer_is_neg_int_literal(const asc__ast_expr *e);
/* The type of a @ b. */
asc__type *asc__infer_matmul(run *r, asc__type *a, asc__type *b,
                             asc__ast_expr *e);
asc__type *asc__infer_arith_promote(run *r, asc__type *a, asc__type *b);
/* The type of `a op b`; elems: a and b are elements of array operands. */
asc__type *asc__infer_binop(run *r, asc__binop op, asc__type *a,
                            asc__type *b, asc__ast_expr *e, bool elems);
/* Reports a condition of type t that is not a scalar; false then. */
bool asc__infer_check_truth(run *r, asc__type *t, asc__ast_expr *e);
void asc__infer_check_tensor_index(run *r, asc__type *tt, asc__ast_expr *ix,
                                   asc__loc loc);
/* The type of x[ix] when ix is a mask or gather array; NULL otherwise. */
asc__type *asc__infer_fancy_index(run *r, asc__type *vt, asc__ast_expr *ix);
/* The type of e where an array is wanted (a 0-d array parameter is its
 * array there). */
asc__type *asc__infer_array_value(run *r, asc__ast_expr *e);
/* Is e `a.flat` (indexed by one integer: an element in C order)? */
bool asc__infer_is_flat(const asc__ast_expr *e);

/* -------------------------------------------------------- infer_call.c */

/* The type of call expression e (a builtin, helper or struct class). */
asc__type *asc__infer_call(run *r, asc__ast_expr *e);

/* ------------------------------------------------------- infer_numpy.c */

/* The type of a call of an ASC_NUMPY_FUNCS function. */
asc__type *asc__infer_numpy(run *r, asc__ast_expr *e);
/* Argument i of numpy call e, an array: its type, NULL (unknown yet) or
 * an error naming the function. */
asc__type *asc__infer_numpy_array_arg(run *r, asc__ast_expr *e, int i);
/* Axis a of call e, an integer constant, of an array of nd axes:
 * normalised into *axis; false after numpy's AxisError. */
bool asc__infer_numpy_axis(run *r, const asc__ast_expr *call,
                           asc__ast_expr *a, int nd, int *axis);
/* ------------------------------------------------------ infer_linalg.c */
/* The np.linalg functions of ASC_NUMPY_FUNCS. */
asc__type *asc__infer_linalg(run *r, asc__ast_expr *e);
/* np.array, np.asarray (infer_comp.c). */
asc__type *asc__infer_np_array(run *r, asc__ast_expr *e);
/* The dtype a dtype argument names (asc.float32, float, x.dtype); false
 * after reporting. */
bool asc__infer_dtype_arg(run *r, asc__ast_expr *a, ascDataType *dt);

/* -------------------------------------------------------- infer_grid.c */

/* np.mgrid[...] / np.ogrid[...] (e the subscript). */
asc__type *asc__infer_grid(run *r, asc__ast_expr *e);
/* np.meshgrid(...). */
asc__type *asc__infer_meshgrid(run *r, asc__ast_expr *e);
/* np.indices(dims, sparse=True) of n dimensions. */
asc__type *asc__infer_sparse_indices(run *r, int n);

/* -------------------------------------------------------- infer_axes.c */

/* A reduction's constant axis argument a of an array of nd axes,
 * normalised; -1 when there is none (None or left out), -2 after an
 * error. */
int asc__infer_reduction_axis(run *r, asc__ast_expr *a, int32_t nd);
/* var's and std's tuple of axes t of an array of nd axes, checked as
 * numpy does; *count: how many.  The first axis, or -2 after an error. */
int asc__infer_tuple_axes(run *r, asc__ast_expr *t, int32_t nd, int *count);

/* ------------------------------------------------------- infer_stats.c */

/* np.histogram(...) and np.histogram_bin_edges(...). */
asc__type *asc__infer_histogram(run *r, asc__ast_expr *e);
/* np.unique(...). */
asc__type *asc__infer_unique(run *r, asc__ast_expr *e);

/* ------------------------------------------------------ infer_numpy2.c */

/* np.trace(a, offset). */
asc__type *asc__infer_trace(run *r, asc__ast_expr *e);
/* np.diag(v, k). */
asc__type *asc__infer_diag(run *r, asc__ast_expr *e);

/* --------------------------------------------------- infer_ufunc_more.c */

/* np.sign, np.reciprocal, np.round of an element of type t. */
asc__type *asc__infer_ufunc_more(run *r, asc__ast_expr *e, asc__type *t);
/* np.angle's deg, when given: True or False; false after reporting. */
bool asc__infer_angle_deg(run *r, asc__ast_expr *e);

/* ------------------------------------------------------ infer_numpy3.c */

/* np.diff(a, n, axis). */
asc__type *asc__infer_diff(run *r, asc__ast_expr *e);
/* np.maximum.accumulate(array, axis), np.minimum.accumulate. */
asc__type *asc__infer_accumulate(run *r, asc__ast_expr *e);
/* np.percentile(a, q, axis, ..., keepdims), np.quantile. */
asc__type *asc__infer_quantile(run *r, asc__ast_expr *e);
/* np.median(a, axis, out, overwrite_input, keepdims). */
asc__type *asc__infer_median(run *r, asc__ast_expr *e);

#endif /* ASC_INFER_INT_H */
