/*
 * Shared by the files of lowering (lower.c: expressions, statements, the
 * entry; lower_call.c: calls) and by nothing else.
 */
#ifndef ASC_LOWER_INT_H
#define ASC_LOWER_INT_H

#include "compiler/lower.h"
#include "compiler/types/types.h"

/* A view of a tensor register (lower_array.c): never an IR value. */
typedef struct asc__lview {
  int32_t t;                        /* the tensor viewed */
  int nd;
  asc__irval off;                   /* of the first element, in elements */
  asc__irval shape[ASC_MAX_DIMS];
  asc__irval stride[ASC_MAX_DIMS];  /* in elements */
  int8_t src[ASC_MAX_DIMS];         /* the axis of t whose size and stride
                                     * these are unchanged, or -1 */
} asc__lview;

/* A whole-array statement's loop body being lowered: its array operands
 * read at the loop indices, its scalar parts evaluated before the loops. */
struct asc__ewred;

typedef struct asc__ewop {
  const asc__ast_expr *e;
  asc__lview v;       /* strides 0 on broadcast axes */
  struct asc__ewred *red; /* a reduction along an axis (v.t is -1, and
                           * v.stride[k] is 1, or 0 where it broadcasts) */
} asc__ewop;

typedef struct asc__ewval {
  const asc__ast_expr *e;
  asc__irval v;
} asc__ewval;

typedef struct asc__ewctx {
  asc__ewop *ops;
  int nops, capops;
  asc__ewval *scalars;
  int nscalars, capscalars;
  asc__irval *idx;    /* the loop indices, one per axis of the nest */
  int nd;
} asc__ewctx;

typedef struct symreg {
  const asc__sym *sym;
  const asc__lview *view; /* a name bound to a view (reg is -1) */
  int32_t reg;        /* -1 for a ConstExpr parameter (cval) or an
                       * aggregate (elems) */
  asc__irval cval;
  int32_t *elems;     /* tuple / struct variables: one register each */
  int nelems;
  uint32_t bucket;    /* of sym, in lstate.heads */
  int32_t older;      /* the previous entry in that bucket, or -1 */
} symreg;

/* A range loop being lowered, innermost first (negative-index analysis). */
typedef struct lfor {
  const asc__ast_stmt *s;  /* or NULL: pvar, an asc.parallel_for index */
  const asc__sym *pvar;
  bool target_kept;      /* the body never assigns the loop variable */
  struct lfor *up;
} lfor;

typedef struct lstate {
  asc__cctx *c;
  const asc__typed *t;
  asc__irfunc *f;
  asc__irblock *cur;
  int32_t line;
  /* Bindings, newest last; a scope ends by unbind_to(its start).  heads
   * chains them by symbol, newest first, so a lookup visits what the
   * backwards scan of map would, for that symbol only. */
  symreg *map;
  int nmap, capmap;
  int32_t *heads;        /* per bucket: its newest entry, or -1 */
  uint32_t nheads;
  int loops;             /* enclosing loops (for break/continue) */
  int pfors;             /* enclosing parallel loops */
  bool in_pbody;         /* lowering a parallel_for body function */
  bool boundscheck;
  int excepts;           /* enclosing except clauses (for a bare raise) */
  /* inlined helper: where `return v` goes */
  int32_t ret_reg;
  int32_t ret_flag;      /* bool: a `return` inside a loop has run */
  int32_t *ret_elems;    /* or, returning a tuple or struct, its elements */
  asc__type *ret_type;
  int inline_depth;
  int helper_pfors;      /* pfors when the innermost inlined helper began */
  lfor *fors;            /* enclosing range loops, innermost first */
  int lb_depth;          /* lower_bound through single assignments */
  uint64_t local_bytes;  /* local arrays so far (LOCAL_TOTAL_MAX) */
  asc__ewctx *ew;        /* inside a whole-array statement's loop body */
  /* The registers of names bound to arrays the kernel creates, with the
   * parallel-loop depth each was first bound at. */
  int32_t *arr_regs;
  int *arr_pfors;
  int narr, caparr, caparr2;
} lstate;

static inline _Noreturn void unsupported(lstate *ls, asc__loc loc,
                                         const char *what) {
  asc__diag_fatal(ls->c, loc, "%s is not supported by the compiler yet",
                  what);
}

/* ------------------------------------------------------------- helpers */

static inline asc__type *ty(const asc__ast_expr *e) {
  return e->type ? asc__ty_find(e->type) : NULL;
}

static inline int scalar_dt(lstate *ls, const asc__ast_expr *e) {
  asc__type *t = ty(e);
  if (t != NULL && t->kind == ASC_TY_TENSOR && ls->ew != NULL)
    return t->dtype; /* one element of an array expression */
  if (t == NULL || t->kind != ASC_TY_SCALAR)
    asc__diag_fatal(ls->c, e->loc, "expected a scalar value here");
  return t->dtype;
}

static inline asc__irins *emit(lstate *ls, int op, int32_t dst, int nargs) {
  asc__irins *i = asc__ir_ins(ls->c, op, dst, nargs, ls->line);
  asc__ir_append(ls->cur, i);
  return i;
}

static inline int32_t newreg(lstate *ls, int dt, const char *hint) {
  return asc__ir_reg(ls->c, ls->f, asc__irt_scalar(dt), hint);
}

/* Operations on constants fold right away: shapes of local arrays and
 * indices such as t.shape[-1] must be constants before any pass runs. */
static inline asc__irval op2(lstate *ls, int op, int dt, asc__irval a,
                      asc__irval b) {
  int rdt = (asc__irop_flags(op) & ASC_OPF_CMP) ? ascBool : dt;
  asc__irval args[2] = {a, b}, r;
  int32_t d;
  asc__irins *i;
  /* bool arithmetic is logical: numpy's bool + and * on arrays, and what
   * Python's int result becomes when stored into a bool (b[i] += c[i]) */
  if (dt == ascBool)
    op = op == ASC_IR_ADD ? ASC_IR_OR
         : op == ASC_IR_MUL ? ASC_IR_AND
         : op == ASC_IR_SUB ? ASC_IR_XOR : op;
  if (asc__ir_eval(op, 0, rdt, asc__irv_dtype(ls->f, a), args, 2, &r))
    return r;
  d = newreg(ls, rdt, NULL);
  i = emit(ls, op, d, 2);
  i->args[0] = a;
  i->args[1] = b;
  return asc__irv_reg(d);
}

static inline asc__irval op1(lstate *ls, int op, int dt, asc__irval a) {
  asc__irval r;
  int32_t d;
  asc__irins *i;
  if (asc__ir_eval(op, 0, dt, asc__irv_dtype(ls->f, a), &a, 1, &r))
    return r;
  d = newreg(ls, dt, NULL);
  i = emit(ls, op, d, 1);
  i->args[0] = a;
  return asc__irv_reg(d);
}

/* `a if c else b` (both evaluated), of a's type; a constant c picks. */
static inline asc__irval sel(lstate *ls, asc__irval c, asc__irval a,
                             asc__irval b) {
  int32_t d;
  asc__irins *i;
  if (c.kind == ASC_IRV_CONST)
    return c.c.i ? a : b;
  d = newreg(ls, asc__irv_dtype(ls->f, a), NULL);
  i = emit(ls, ASC_IR_SELECT, d, 3);
  i->args[0] = c;
  i->args[1] = a;
  i->args[2] = b;
  return asc__irv_reg(d);
}

static inline void mov(lstate *ls, int32_t dst, asc__irval v) {
  asc__irins *i = emit(ls, ASC_IR_MOV, dst, 1);
  i->args[0] = v;
}

static inline int vdt(lstate *ls, asc__irval v) {
  return asc__irv_dtype(ls->f, v);
}

/* v converted to dt (constants at compile time when exact enough). */
static inline asc__irval conv(lstate *ls, asc__irval v, int dt) {
  int from = vdt(ls, v);
  asc__irval r;
  if (from == dt)
    return v;
  if (v.kind == ASC_IRV_CONST &&
      asc__ir_eval(ASC_IR_CAST, 0, dt, from, &v, 1, &r))
    return r;
  return op1(ls, ASC_IR_CAST, dt, v);
}

static inline asc__irval truthy(lstate *ls, asc__irval v) {
  int dt = vdt(ls, v);
  if (dt == ascBool)
    return v;
  return op2(ls, ASC_IR_NE, dt, v,
             asc__dt_is_float(dt) ? asc__irv_float(dt, 0.0)
                                  : asc__irv_int(dt, 0));
}

/* Tuples (t.shape, (a, b)) and struct objects live in one register per
 * element or field: a variable of such a type is a list of registers. */
static inline bool is_agg(asc__type *t) {
  return t && (t->kind == ASC_TY_TUPLE || t->kind == ASC_TY_STRUCT);
}

static inline int agg_n(asc__type *t) { return t->n; }

static inline asc__type *agg_elem(asc__type *t, int k) {
  return asc__ty_find(t->kind == ASC_TY_TUPLE ? t->elems[k]
                                              : t->fields[k].type);
}

/* -------------------------------------------------------------- lower.c */

/* The register symbol s is bound to, or -1. */
int32_t asc__lower_lookup(lstate *ls, const asc__sym *s);
/* Binds symbol s to register reg in the current scope. */
void asc__lower_bind(lstate *ls, const asc__sym *s, int32_t reg);
/* The register of tensor expression e. */
int32_t asc__lower_tensor_reg(lstate *ls, const asc__ast_expr *e);
/* Axis k's size of tensor register t. */
asc__irval asc__lower_dim_of(lstate *ls, int32_t t, int k);
/* Raises an exception of kind with msg here. */
void asc__lower_raise_here(lstate *ls, int kind, const char *msg);
/* A proved lower bound of the integer expression e in *lb (lower_index.c);
 * false when none can be proved. */
bool asc__lower_bound(lstate *ls, const asc__ast_expr *e, int64_t *lb);
asc__irval asc__lower_element_offset(lstate *ls, const asc__ast_expr *sub,
                                     int32_t *treg);
symreg *asc__lower_agg_sym(lstate *ls, const asc__sym *s, asc__loc loc);
void asc__lower_agg(lstate *ls, const asc__ast_expr *e, asc__type *want,
                    asc__irval *vals);
asc__irval asc__lower_expr(lstate *ls, const asc__ast_expr *e);
/* Python int v (an integer register or constant, docs/types.md) as a
 * value of integer type dt, raising numpy's OverflowError ("Python
 * integer 300 out of bounds for uint8") when dt cannot hold it.  clamp
 * > 0: a value below dt's range is its smallest value instead (np.clip's
 * lower bound); clamp < 0: one above is its largest (the upper bound). */
asc__irval asc__lower_fit_int(lstate *ls, asc__irval v, int dt, int clamp);
void asc__lower_block(lstate *ls, const asc__ast_block *b);

/* The view a name is bound to, or NULL. */
const asc__lview *asc__lower_sym_view(lstate *ls, const asc__sym *s);
void asc__lower_bind_view(lstate *ls, const asc__sym *s, const asc__lview *v);

/* -------------------------------------------------------- lower_array.c */

/* name = value where value is a new array (np.zeros(n), a + b, a.copy()):
 * lowered and true, else false. */
bool asc__lower_new_array(lstate *ls, const asc__ast_expr *target,
                          const asc__ast_expr *value);
/* A new array holding e (np.arange(n), a + b) when e makes one, else
 * -1: np.arange(n)[::2] views it. */
int32_t asc__lower_materialize(lstate *ls, const asc__ast_expr *e);
/* A new 0-d array of dtype dt holding v (a complex number a kernel
 * returns: the result slot's scalar has no complex value). */
int32_t asc__lower_scalar_array(lstate *ls, int dt, asc__irval v);
/* The array a kernel returns for e (docs/arrays.md): the array a name
 * holds when it is one the kernel made and not among taken (a tuple's
 * earlier values), else a new array holding a copy of e. */
int32_t asc__lower_result_array(lstate *ls, const asc__ast_expr *e,
                                const int32_t *taken, int ntaken);
/* x @ y of two vectors (a scalar): np.dot's sum. */
asc__irval asc__lower_dot(lstate *ls, const asc__ast_expr *e);
/* a.fill(v) */
void asc__lower_fill(lstate *ls, const asc__ast_expr *call);
/* Is tensor expression e a view (a name bound to one, t[1:], t.T)? */
bool asc__lower_is_view(lstate *ls, const asc__ast_expr *e);
bool asc__lower_is_contiguous(lstate *ls, const asc__ast_expr *e);
/* The view of tensor expression e (a whole tensor is one too). */
void asc__lower_view(lstate *ls, const asc__ast_expr *e, asc__lview *v);
asc__irval asc__lower_view_size(lstate *ls, const asc__lview *v);
/* The element offset of v[i, j, ...] (sub: the subscript). */
asc__irval asc__lower_view_offset(lstate *ls, const asc__lview *v,
                                  const asc__ast_expr *sub);
/* Inside a whole-array statement: the value of e at the current element
 * when e is one of its operands or scalar parts. */
bool asc__lower_ew_lookup(lstate *ls, const asc__ast_expr *e,
                          asc__irval *out);
/* A reduction of all elements (np.sum(a), a.max(), np.dot(x, y)). */
asc__irval asc__lower_reduce(lstate *ls, const asc__ast_expr *e);
/* target[...] = value into a view: true when it was one. */
bool asc__lower_array_assign(lstate *ls, const asc__ast_expr *target,
                             const asc__ast_expr *value);
/* target op= value on an array: true when target is one. */
bool asc__lower_array_aug(lstate *ls, const asc__ast_expr *target,
                          const asc__ast_expr *value, int op);

/* The loops of the numpy functions (lower_numpy.c) are built of these:
 * a new contiguous array; the view of a whole tensor; the loop nest over
 * shape (the block to return to after it); an element of a view at
 * indices idx (its last v->nd); a store converting to t's dtype; the
 * C-order strides of shape and the offset of idx in them; if (cond)
 * raise kind(msg with {} for a and b). */
int32_t asc__lower_new_tensor(lstate *ls, int dt, int nd,
                              const asc__irval *shape);
void asc__lower_whole(lstate *ls, int32_t t, asc__lview *v);
asc__irblock *asc__lower_open_nest(lstate *ls, const asc__irval *shape,
                                   int nd, asc__irval *idx);
asc__irval asc__lower_load_at(lstate *ls, const asc__lview *v,
                              const asc__irval *idx, int nd);
void asc__lower_store_at(lstate *ls, int32_t t, asc__irval off,
                         asc__irval v);
void asc__lower_c_strides(lstate *ls, const asc__irval *shape, int nd,
                          asc__irval *cs);
asc__irval asc__lower_dot_idx(lstate *ls, const asc__irval *idx,
                              const asc__irval *cs, int nd);
void asc__lower_raise_if(lstate *ls, asc__irval cond, int kind,
                         const char *msg, asc__irval a, asc__irval b);

/* -------------------------------------------------------- lower_numpy.c */

/* A new array holding the result of a call of an ASC_NUMPY_FUNCS
 * function (front/builtins.h). */
int32_t asc__lower_numpy(lstate *ls, const asc__ast_expr *e);
/* The value of such a call whose result is a number (np.average(a)). */
asc__irval asc__lower_numpy_value(lstate *ls, const asc__ast_expr *e);

/* --------------------------------------------------------- lower_call.c */

/* A helper call, inlined (lower_call.c explains how). */
asc__irval asc__lower_inline_helper(lstate *ls, const asc__ast_expr *e,
                                    asc__irval *agg);
/* A call of a builtin, an intrinsic or a helper. */
asc__irval asc__lower_call(lstate *ls, const asc__ast_expr *e);
/* A complex intrinsic (CREAL, CIMAG, CABS, CARG: real result; CONJ) of
 * the complex value v. */
asc__irval asc__lower_cintr(lstate *ls, int intr, asc__irval v);
/* a / b of dt (operands converted).  A complex division of array
 * elements (arrays) is numpy's (CDIV), of scalars CPython's (div). */
asc__irval asc__lower_div(lstate *ls, int dt, asc__irval a, asc__irval b,
                          bool arrays);
/* re + im*1j as a value of the complex dtype dt. */
asc__irval asc__lower_cmplx(lstate *ls, int dt, asc__irval re, asc__irval im);
/* cmath.polar(z): vals[0] = abs(z), vals[1] = phase(z) (float64). */
void asc__lower_cmath_polar(lstate *ls, const asc__ast_expr *e,
                            asc__irval *vals);

#endif /* ASC_LOWER_INT_H */
