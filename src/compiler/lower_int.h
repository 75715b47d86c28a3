/*
 * Shared by the files of lowering (lower.c: bindings, expressions, the
 * entry; lower_stmt.c: statements; lower_call.c: calls; lower_index.c:
 * index bounds; lower_view.c, lower_array.c, lower_create.c, lower_mask.c
 * and lower_reduce.c: arrays) and by nothing else.
 */
#ifndef ASC_LOWER_INT_H
#define ASC_LOWER_INT_H

#include "compiler/lower.h"
#include "compiler/types/types.h"

/* A view of a tensor register (lower_view.c): never an IR value. */
typedef struct asc__lview {
  int32_t t;                        /* the tensor viewed */
  int nd;
  asc__irval off;                   /* of the first element, in elements */
  asc__irval shape[ASC_MAX_DIMS];
  asc__irval stride[ASC_MAX_DIMS];  /* in elements */
  int8_t src[ASC_MAX_DIMS];         /* the axis of t whose size and stride
                                     * these are unchanged, or -1 */
  bool permuted;                    /* axes taken out of their order (a
                                     * transpose): a reshape copies */
} asc__lview;

/* A whole-array statement's loop body being lowered: its array operands
 * read at the loop indices, its scalar parts evaluated before the loops. */
struct asc__ewred;

typedef struct asc__ewop {
  const asc__ast_expr *e;
  asc__lview v;       /* strides 0 on broadcast axes */
  struct asc__ewred *red; /* a reduction along an axis (v.t is -1, and
                           * v.stride[k] is 1, or 0 where it broadcasts) */
  struct asc__ewgat *gat; /* a gather x[i] read in place (v.t is -1, the
                           * strides as for red) */
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
  bool rows;          /* the nest may compute a reduction along its last
                       * axis once per row (lower_array.c, row_reduction) */
} asc__ewctx;

/* A reduction along one axis inside a whole-array statement
 * (out[:] = a.sum(axis=1)): each element is a loop over that axis. */
typedef struct asc__ewred {
  const asc__ast_expr *call;
  asc__ewctx sub;                  /* the reduced expression's operands */
  asc__irval shape[ASC_MAX_DIMS];  /* the reduced expression's shape */
  int nd;
  unsigned axes; /* the reduced axes, a bit each (lower_array.c) */
  bool keep;
  bool row;           /* computed once per row of the nest, before its
                       * innermost loop */
} asc__ewred;

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

typedef struct asc__fuse asc__fuse; /* lower_fuse.c */

/* The dot products of a statement that one call computed. */
typedef struct asc__ldots {
  const struct asc__ast_expr *x[8], *y[8];
  const struct asc__ast_expr *at[8];   /* the product's own node */
  int32_t buf;
  int n;
  /* a @ p and r @ a over one matrix, made by one call before the
   * statement (lower_create.c, asc__lower_mv_pair_begin): the product
   * node mat[k] is the new array mat_r[k] */
  const struct asc__ast_expr *mat[2];
  int32_t mat_r[2];
  int nmat;
} asc__ldots;

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
  int loop_depth;        /* enclosing loops of the kernel's text, those
                          * around an inlined helper's call included */
  int pfors;             /* enclosing parallel loops */
  bool in_pbody;         /* lowering a parallel_for body function */
  bool boundscheck;
  int excepts;           /* enclosing except clauses (for a bare raise) */
  /* inlined helper: where `return v` goes */
  int32_t ret_reg;       /* a number's register, or an array's (its
                          * tensor register holds a copy of `v`) */
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
  asc__fuse *fuse;       /* definitions fused into their readers */
  int32_t *avars;        /* the registers of array variables
                          * (lower_rebind.c) */
  int navars, capavars;
  /* the values of `x = y` assignments that copy (asc__lower_alias_copy) */
  const asc__ast_expr **alias_copies;
  int nalias_copies, capalias_copies;
  /* Arrays made for the operands of the statement being lowered (a @ b
   * in a larger expression) and the blocks they were made in: released
   * after it (asc__lower_block), not kept until the launch ends, which a
   * statement in a loop would make one per iteration. */
  int32_t *temps;
  asc__irblock **temp_blocks;
  int ntemps, captemps, captemps2;
  /* The dot products of the statement being lowered that one call
   * computed (lower_reduce.c, asc__lower_dots_begin): pair k is
   * (dot_x[k], dot_y[k]), its result element k of dot_buf. */
  asc__ldots dots;
} lstate;

/* Fusion across statements (lower_fuse.c).  plan decides which
 * definitions of block b are fused into the statement that reads them
 * and returns a mark for end, called after the block; skip is true for a
 * fused definition (not lowered where it stands); fused gives the value
 * a name read element by element stands for (NULL: a name as usual);
 * make makes the array of a fused name read some other way (lookups
 * call it); note puts the plan's remark about statement st on first, its
 * first instruction. */
int asc__lower_fuse_plan(lstate *ls, const asc__ast_block *b);
bool asc__lower_fuse_skip(lstate *ls, const asc__ast_stmt *st);
const asc__ast_expr *asc__lower_fused(lstate *ls, const asc__ast_expr *e);
void asc__lower_fuse_make(lstate *ls, const asc__sym *s);
void asc__lower_fuse_end(lstate *ls, int mark);
void asc__lower_fuse_note(lstate *ls, const asc__ast_stmt *st,
                          asc__irins *first);

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

/* The intrinsic call intr (ASC_INTR_*) of a, of dtype dt. */
static inline asc__irval call1(lstate *ls, int intr, int dt, asc__irval a) {
  int32_t d = newreg(ls, dt, NULL);
  asc__irins *i = emit(ls, ASC_IR_CALL, d, 1);
  i->aux = intr;
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

/* Gives back array t, made by the lowering and read no more. */
static inline void free_array(lstate *ls, int32_t t) {
  asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
  fr->args[0] = asc__irv_reg(t);
}

bool asc__lower_is_made_temp(lstate *ls, int32_t t, int32_t mark);

/* Array t, when the lowering made it after register mark for an operand
 * (an expression such as np.conj(h[a]) read through a view) and nothing
 * holds it (asc__lower_is_made_temp), given back: the product that made
 * it reads it no more.  Without this an operand made inside a loop stayed
 * held until the launch ended, one more buffer each iteration. */
static inline void free_operand(lstate *ls, int32_t t, int32_t mark) {
  if (asc__lower_is_made_temp(ls, t, mark))
    free_array(ls, t);
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

static inline bool is_tensor(const asc__ast_expr *e) {
  asc__type *t = ty(e);
  return t && t->kind == ASC_TY_TENSOR;
}

/* int64 arithmetic of indices, offsets and extents */
static inline asc__irval i64(int64_t v) { return asc__irv_int(ascInt64, v); }

static inline asc__irval add(lstate *ls, asc__irval a, asc__irval b) {
  return op2(ls, ASC_IR_ADD, ascInt64, a, b);
}

static inline asc__irval mul(lstate *ls, asc__irval a, asc__irval b) {
  return op2(ls, ASC_IR_MUL, ascInt64, a, b);
}

/* Opens a FOR or PFOR (op) %r = lo, hi, step: ls->cur is its body.
 * Returns the loop; its dst is the induction register. */
static inline asc__irins *open_for(lstate *ls, int op, asc__irval lo,
                                   asc__irval hi, asc__irval step,
                                   const char *hint) {
  asc__irins *f = emit(ls, op, newreg(ls, ascInt64, hint), 3);
  f->args[0] = lo;
  f->args[1] = hi;
  f->args[2] = step;
  ls->cur = &f->body[0];
  return f;
}

/* Opens a LOOP (run until a break in its body): ls->cur is its body.
 * Returns the block to restore after it. */
static inline asc__irblock *open_loop(lstate *ls) {
  asc__irblock *save = ls->cur;
  ls->cur = &emit(ls, ASC_IR_LOOP, -1, 0)->body[0];
  return save;
}

/* Leaves the innermost loop when c (computed before the call) holds,
 * setting dst = v first when dst >= 0; ls->cur stays where it is. */
static inline void leave_if(lstate *ls, asc__irval c, int32_t dst,
                            asc__irval v) {
  asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
  asc__irblock *save = ls->cur;
  i->args[0] = c;
  ls->cur = &i->body[0];
  if (dst >= 0)
    mov(ls, dst, v);
  emit(ls, ASC_IR_BREAK, -1, 0);
  ls->cur = save;
}

static inline void break_if(lstate *ls, asc__irval c) {
  leave_if(ls, c, -1, i64(0));
}

static inline bool same_val(asc__irval a, asc__irval b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == ASC_IRV_CONST)
    return a.c.i == b.c.i;
  return a.kind == ASC_IRV_REG && a.reg == b.reg;
}

static inline bool is_small_float(int dt) {
  return dt == ascFloat16 || dt == ascBFloat16 || dt == ascFloat32;
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

/* The view a name is bound to, or NULL. */
const asc__lview *asc__lower_sym_view(lstate *ls, const asc__sym *s);
void asc__lower_bind_view(lstate *ls, const asc__sym *s, const asc__lview *v);
/* Ends the bindings made since ls->nmap was n. */
void asc__lower_unbind_to(lstate *ls, int n);
/* The register of scalar variable s, made on its first use. */
int32_t asc__lower_var_reg(lstate *ls, const asc__sym *s, asc__loc loc);
/* The register of p.x / shp[k] when the base is an aggregate variable;
 * -1 when it is not one. */
int32_t asc__lower_agg_member(lstate *ls, const asc__ast_expr *e);
/* The IR operator of binary operator op. */
int asc__lower_binop_ir(asc__binop op);
/* The ASC_KEXC_ kind of exception class b. */
int asc__lower_exc_kind(const asc__builtin *b);
/* After a loop inside an inlined helper: leaves the enclosing loop too
 * when a `return` in it ran. */
void asc__lower_after_helper_loop(lstate *ls);

/* --------------------------------------------------------- lower_stmt.c */

void asc__lower_block(lstate *ls, const asc__ast_block *b);

/* --------------------------------------------------------- lower_view.c */

/* Is tensor expression e a view (a name bound to one, t[1:], t.T)? */
bool asc__lower_is_view(lstate *ls, const asc__ast_expr *e);
bool asc__lower_is_contiguous(lstate *ls, const asc__ast_expr *e);
/* The view of tensor expression e (a whole tensor is one too). */
void asc__lower_view(lstate *ls, const asc__ast_expr *e, asc__lview *v);
asc__irval asc__lower_view_size(lstate *ls, const asc__lview *v);
/* The element offset of v[i, j, ...] (sub: the subscript). */
asc__irval asc__lower_view_offset(lstate *ls, const asc__lview *v,
                                  const asc__ast_expr *sub);
/* The view of all of tensor register t. */
void asc__lower_whole_tensor(lstate *ls, int32_t t, asc__lview *v);
/* A new C-order array holding a copy of view in. */
int32_t asc__lower_c_copy(lstate *ls, const asc__lview *in);

/* -------------------------------------------------------- lower_array.c */

/* Are a and b the same expression, written the same way, with no calls? */
bool asc__lower_same_expr(const asc__ast_expr *a, const asc__ast_expr *b);
/* Inside a whole-array statement: the value of e at the current element
 * when e is one of its operands or scalar parts. */
bool asc__lower_ew_lookup(lstate *ls, const asc__ast_expr *e,
                          asc__irval *out);
/* target[...] = value into a view: true when it was one. */
bool asc__lower_array_assign(lstate *ls, const asc__ast_expr *target,
                             const asc__ast_expr *value);
/* target op= value on an array: true when target is one. */
bool asc__lower_array_aug(lstate *ls, const asc__ast_expr *target,
                          const asc__ast_expr *value, int op);
/* if (cond) raise kind(msg, a, b) */
void asc__lower_raise_if(lstate *ls, asc__irval cond, int kind,
                         const char *msg, asc__irval a, asc__irval b);
/* A new operand of ew for array expression e (its view still to fill). */
asc__ewop *asc__lower_push_op(lstate *ls, asc__ewctx *ew,
                              const asc__ast_expr *e);
/* ravel (when not a view), flatten, cumsum, outer: a new array. */
bool asc__lower_makes_array(asc__builtin_id id);
/* A float reduction along the last axis with keepdims=True: inside a
 * larger expression stored by one loop nest it is computed once per row
 * of the nest, not made first. */
bool asc__lower_row_reduction(const asc__ast_expr *e);
/* A float reduction along the last axis, *keep: with keepdims=True. */
bool asc__lower_row_axis_reduction(const asc__ast_expr *e, bool *keep);
/* r when e is r expanded over a new last axis of size 1: r[:, None]
 * (a full slice per axis of r), r[..., None] (np.newaxis is None),
 * r.reshape(-1, 1) of a 1-D r; NULL otherwise.  Syntax only. */
const asc__ast_expr *asc__lower_expand_last(const asc__ast_expr *e);
/* a @ b, np.dot(a, b) or np.matmul(a, b) whose result is an array. */
bool asc__lower_is_matmul(const asc__ast_expr *e);
/* The array operands of expression e and its scalar parts, collected
 * before the loops (ls->ew is NULL then). */
void asc__lower_collect(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e);
/* Broadcasts operand v against the loop shape (grow: the shape may take
 * the operand's size where it is 1 so far). */
void asc__lower_broadcast(lstate *ls, asc__lview *v, asc__irval *shape, int nd,
                          bool grow);
/* Broadcasts every operand of ew into the shape of all of them, computed
 * into shape[0..nd). */
void asc__lower_broadcast_ops(lstate *ls, asc__ewctx *ew, asc__irval *shape,
                              int nd);
/* Are a and b the same elements in the same order? */
/* For ew, a copy of a context's operands made before
 * asc__lower_broadcast_ops broadcast them to shape[0..nd): stride 0 on
 * their constant size-1 axes, their own strides on the others; returns
 * when that is right (every other axis has shape's size), a bool. */
asc__irval asc__lower_own_strides(lstate *ls, asc__ewctx *ew,
                                  const asc__irval *shape, int nd);
bool asc__lower_same_view(const asc__lview *a, const asc__lview *b);
/* Opens the loop nest over shape[0..nd) (indices into idx); returns the
 * block to restore. */
asc__irblock *asc__lower_open_nest(lstate *ls, const asc__irval *shape, int nd,
                                   asc__irval *idx);
/* The element offset of v[idx[0], ..., idx[nd - 1]]. */
asc__irval asc__lower_elem_offset(lstate *ls, const asc__lview *v,
                                  const asc__irval *idx, int nd);
/* dst[...] = value, or dst[...] op= value (op >= 0): one loop nest.
 * where is the target as written (or NULL): value goes through a new
 * array first when it reads dst's tensor other than as where (numpy's
 * copy on overlap). */
void asc__lower_store_nest(lstate *ls, const asc__ast_expr *where,
                           asc__lview *dst, const asc__ast_expr *value,
                           int op);
/* A new array holding array expression e (whose operands ew holds). */
int32_t asc__lower_materialize_ew(lstate *ls, const asc__ast_expr *e,
                                  asc__ewctx *ew);
/* A name only the lowering knows, bound to the array tmp, that stands
 * for value (of value's type) as an operand. */
const asc__ast_expr *asc__lower_tmp_name(lstate *ls,
                                         const asc__ast_expr *value,
                                         int32_t tmp);

/* --------------------------------------------------------- lower_blas.c */

/* x is `s * a` or `a * s`, s a real number (a name or a literal) and a an
 * array of float dtype dt with 1 or 2 axes, x of dtype dt: true, with
 * *scale = s and *arr = a (a BLAS call's alpha scales a @ b). */
bool asc__lower_blas_peel(const asc__ast_expr *x, int dt,
                          const asc__ast_expr **scale,
                          const asc__ast_expr **arr);
/* numpy's ValueError when a product's shared axis has sizes ka and kb. */
void asc__lower_matmul_check(lstate *ls, asc__irval ka, asc__irval kb);
/* status = asc_krt.gemm_ab: c[coff + i*sc0 + j*sc1] = alpha * (a @ b) +
 * beta * c (a 1-D a is one row, a 1-D b one column) when cond holds, else
 * status 1.  Returns the gemm instruction (its dst: the status). */
asc__irins *asc__lower_gemm(lstate *ls, int32_t c, asc__irval coff,
                            asc__irval sc0, asc__irval sc1,
                            const asc__lview *a, const asc__lview *b,
                            asc__irval alpha, asc__irval beta,
                            asc__irval cond);
/* if (status of g != 0) { ... }: opens the block run when the call did
 * nothing (ls->cur is then inside it); returns the block to restore. */
asc__irblock *asc__lower_when_failed(lstate *ls, const asc__irins *g);
/* target[...] = value or target op= value as one BLAS call into target
 * (value a product, alpha * x @ y, plus beta * target when op < 0),
 * the general lowering behind it: true when lowered so. */
bool asc__lower_blas_store(lstate *ls, const asc__ast_expr *target,
                           const asc__ast_expr *value, int op);

/* ----------------------------------------------------- lower_matmul_nd.c */

/* x @ y (the product e) with an operand of more than two axes: a new
 * array, numpy's matmul of stacks of matrices. */
int32_t asc__lower_matmul_nd(lstate *ls, const asc__ast_expr *e,
                             const asc__ast_expr *x, const asc__ast_expr *y);

/* ------------------------------------------------------- lower_create.c */

/* name = value where value is a new array (np.zeros(n), a + b, a.copy()):
 * lowered and true, else false. */
bool asc__lower_new_array(lstate *ls, const asc__ast_expr *target,
                          const asc__ast_expr *value);
/* name target = the new array in register tmp, of type t (an element of
 * a tuple a numpy function returns). */
void asc__lower_bind_new_array(lstate *ls, const asc__ast_expr *target,
                               asc__type *t, int32_t tmp);
/* Does array expression e make a new array (a + b, np.zeros(n), x[m])? */
bool asc__lower_is_new_array(lstate *ls, const asc__ast_expr *e);
/* A new array holding e (np.arange(n), a + b) when e makes one, else
 * -1: np.arange(n)[::2] views it. */
int32_t asc__lower_materialize(lstate *ls, const asc__ast_expr *e);
/* A new array holding e: a creation call or an array expression. */
int32_t asc__lower_make_array(lstate *ls, const asc__ast_expr *e);
/* name target = the new array tmp, of the type its register says
 * (asc__lower_bind_new_array). */
void asc__lower_name_array(lstate *ls, const asc__ast_expr *target,
                           int32_t tmp);
/* Tuples of arrays (docs/architecture.md, "A numpy function whose result
 * is a tuple of arrays"): is e's type a tuple whose elements are all
 * arrays? */
bool asc__lower_is_array_tuple(const asc__ast_expr *e);
/* Is e np.mgrid[...] or np.ogrid[...]? */
bool asc__lower_is_grid(const asc__ast_expr *e);
/* Is e a subscript that makes a new array rather than a view: a grid,
 * or an element of a tuple of arrays (np.histogram(a)[0])? */
bool asc__lower_is_made_subscript(const asc__ast_expr *e);
/* The arrays of e, a tuple of arrays, into regs[0..n): new arrays, each
 * the caller's (name them, hand them over as results or free them). */
void asc__lower_array_tuple(lstate *ls, const asc__ast_expr *e,
                            int32_t *regs);
/* The register of an array the kernel makes and a name (or a helper's
 * result) holds: set_array gives its earlier array back. */
int32_t asc__lower_array_reg(lstate *ls, int dt, int nd, const char *hint);
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
/* A call np.dot(x, y) at e's place and with e's type (a scalar), made
 * for the reduction's lowering. */
/* Before statement value v is lowered: its dot products of vectors, when
 * two or more are the library's kind and nothing in v can change their
 * operands, as one pass over the vectors (ASC_KLINALG_DOTS); the dot
 * lowering then reads each result (ls->dots).  The caller saves and
 * puts back ls->dots around the statement. */
void asc__lower_dots_begin(lstate *ls, const asc__ast_expr *v);
/* May v be evaluated before the rest of its statement without changing
 * what the statement computes (lower_reduce.c)? */
bool asc__lower_harmless(const asc__ast_expr *v);
/* Before statement value v is lowered: a matrix-vector product a @ p and
 * a vector-matrix product r @ a over the same float matrix a, as one pass
 * over a (ASC_KLINALG_GEMV2; BiCG's `return r @ A, A @ p`); the product
 * lowering then takes each result (ls->dots.mat). */
void asc__lower_mv_pair_begin(lstate *ls, const asc__ast_expr *v);
/* Statements s and t are `x += a @ p` and `y += r @ a` (either order) of
 * one float matrix name a and vector names: emits one call that makes
 * both updates in one pass over a (ASC_KLINALG_GEMV2, accumulating) and
 * returns an IF whose body the caller fills with s and t themselves, run
 * when the call did nothing (the arrays overlap, shapes that broadcast);
 * NULL, emitting nothing, when they are not such a pair. */
asc__irins *asc__lower_mv_stmts(lstate *ls, const struct asc__ast_stmt *s,
                                const struct asc__ast_stmt *t);
const asc__ast_expr *asc__lower_dot_call(lstate *ls, const asc__ast_expr *at,
                                         const asc__ast_expr *x,
                                         const asc__ast_expr *y);
/* a.fill(v) */
void asc__lower_fill(lstate *ls, const asc__ast_expr *call);
/* A new array of dtype dt and shape[0..nd), its elements unset. */
int32_t asc__lower_alloc_array(lstate *ls, int dt, int nd,
                               const asc__irval *shape);
/* The C-order strides cs[0..nd) of an array of shape[0..nd). */
void asc__lower_c_strides(lstate *ls, const asc__irval *shape, int nd,
                          asc__irval *cs);
/* The same of the C-order array t the lowering made, read from t (the
 * form a nest storing into t is parallelised by). */
void asc__lower_own_cstrides(lstate *ls, int32_t t, int nd, asc__irval *cs);
/* The element v[idx[0], ..., idx[nd - 1]]. */
asc__irval asc__lower_load_at(lstate *ls, const asc__lview *v,
                              const asc__irval *idx, int nd);
/* Stores v, converted to t's dtype, at element offset off of t. */
void asc__lower_store_at(lstate *ls, int32_t t, asc__irval off, asc__irval v);
/* The element at element offset off of tensor t. */
asc__irval asc__lower_load_off(lstate *ls, int32_t t, asc__irval off);
/* The offset of idx[0..nd) under the strides cs (asc__lower_c_strides). */
asc__irval asc__lower_dot_idx(lstate *ls, const asc__irval *idx,
                              const asc__irval *cs, int nd);

/* ------------------------------------------------------- lower_rebind.c */

/* Makes the array variables of function fn (its parameters bound): the
 * names bound to a view at one assignment and to a new array at another. */
void asc__lower_array_vars(lstate *ls, const asc__ast_func *fn);
/* x = y where y is rebound in a loop or a branch and neither is written
 * into: x takes a copy of y's array (true), as numpy's x keeps it. */
bool asc__lower_alias_copy(lstate *ls, const asc__ast_expr *target,
                           const asc__ast_expr *value);
/* target = value where target is an array variable: lowered and true. */
bool asc__lower_array_var_assign(lstate *ls, const asc__ast_expr *target,
                                 const asc__ast_expr *value);
/* a, b = x, y with arrays on the right (Xi, Yi = Xi[I], Yi[I]): every
 * value first, then the names, as Python does; true when lowered. */
bool asc__lower_array_tuple_assign(lstate *ls, const asc__ast_expr *target,
                                   const asc__ast_expr *value);

/* --------------------------------------------------------- lower_mask.c */

/* Is x[m] a gather, or the target of a masked store or a scatter (m a
 * bool or integer array)? */
bool asc__lower_is_fancy(const asc__ast_expr *e);
/* x[m]: a new array. */
int32_t asc__lower_gather(lstate *ls, const asc__ast_expr *e);
/* A pfor over nch chunks of len elements of [0, n) (the chunked
 * selections, argmin/argmax of a long 1-D array): open makes ls->cur its
 * body, the body of another function, whose chunk is c and range [lo,
 * hi); close goes back to the block it was opened in. */
typedef struct asc__lchunks {
  asc__irblock *save;
  int excepts;
  asc__irval c, lo, hi;
} asc__lchunks;
void asc__lower_chunks_open(lstate *ls, asc__lchunks *k, asc__irval nch,
                            asc__irval len, asc__irval n, const char *hint);
void asc__lower_chunks_close(lstate *ls, const asc__lchunks *k);
/* x[i] with i an integer array as an operand of ew read element by
 * element: each element loads x at i's value, no new array.  The indices
 * are checked (numpy's IndexError) before the statement's loops. */
void asc__lower_collect_gather(lstate *ls, asc__ewctx *ew,
                               const asc__ast_expr *e);
/* The element of gather operand op at the statement's indices idx[0..nd). */
asc__irval asc__lower_gather_elem(lstate *ls, const asc__ewop *op,
                                  const asc__irval *idx, int nd);
/* Does operand op read tensor t through a reduction or a gather inside it? */
bool asc__lower_op_reads_within(const asc__ewop *op, int32_t t);
/* x[m] = value or x[m] op= value (op >= 0). */
void asc__lower_fancy_store(lstate *ls, const asc__ast_expr *target,
                            const asc__ast_expr *value, int op);

/* Is e a selection read by elements, f(a[m], b[m], ...) with f
 * elementwise and every array read through the same mask m of the
 * arrays' number of axes (x[m], x[m] * 2)?  Then *mask is m. */
bool asc__lower_select_form(const asc__ast_expr *e,
                            const asc__ast_expr **mask);
/* The operands of selection e (asc__lower_select_form) for a loop nest
 * over the mask's shape, computed into ms: the selected arrays' views
 * into sub (a[m] reads a), the mask's operands into mew.  Raises numpy's
 * IndexError where a selected array's shape is not the mask's. */
void asc__lower_select_operands(lstate *ls, const asc__ast_expr *e,
                                const asc__ast_expr *m, asc__ewctx *sub,
                                asc__ewctx *mew, asc__irval *ms);
/* Whether mask m (operands in mew) is true at idx[0..nd). */
asc__irval asc__lower_mask_at(lstate *ls, const asc__ast_expr *m,
                              asc__ewctx *mew, asc__irval *idx, int nd);

/* ------------------------------------------------------- lower_reduce.c */
/* Whether a selection with mask m reduced whole is one loop over the
 * mask, not made (ASC_FUSE_SELECT; by default a 1-D mask, whose loop is
 * chunked and vectorises; docs/optimizer.md "Selections"). */
bool asc__lower_select_fuses(const lstate *ls, const asc__ast_expr *m);

/* A reduction of all elements (np.sum(a), a.max(), np.dot(x, y)). */
asc__irval asc__lower_reduce(lstate *ls, const asc__ast_expr *e);
/* min, max, argmin and argmax of n elements raise numpy's ValueError
 * when n is 0 (before the loops of a statement, as numpy). */
void asc__lower_empty_check(lstate *ls, asc__builtin_id id, asc__irval n);
/* The value of reduction call over the elements of sub, of shape[0..nd):
 * along the axes k with bit k of axes set (ASC_LOWER_ALL_AXES: over all
 * the elements, no axis given), the others at the offsets fixed[]. */
#define ASC_LOWER_ALL_AXES (~0u)
asc__irval asc__lower_reduce_loops(lstate *ls, const asc__ast_expr *call,
                                   asc__ewctx *sub, const asc__irval *shape,
                                   int nd, const asc__irval *fixed,
                                   unsigned axes);

/* ----------------------------------------------------- lower_pairwise.c */

/* The term of a pairwise sum's element at column col of row row (i64
 * indices), of the sum's dtype; called once for each place the sum's loops
 * read an element. */
typedef asc__irval (*asc__pw_term)(lstate *ls, asc__irval row,
                                   asc__irval col, void *arg);
/* The sum of the terms of elements f in [0, n), of float dtype dt, added
 * in numpy's pairwise order (docs/arrays.md): element f is column
 * f % rowlen of row f / rowlen (the elements of several axes in C order,
 * rowlen the last one's extent), or column f of row 0 when rowlen is the
 * constant 0.  par: split over the team when n is large (a statement
 * outside loops).  The same bits either way. */
asc__irval asc__lower_pairwise(lstate *ls, int dt, asc__irval n,
                               asc__irval rowlen, bool par,
                               asc__pw_term term, void *arg);

/* -------------------------------------------------------- lower_numpy.c */

/* The view of array argument e: a view or a whole array where it is, an
 * expression (a + 1, np.arange(n)) made first. */
void asc__lower_arg_view(lstate *ls, const asc__ast_expr *e, asc__lview *v);
/* A new C-order copy of view in (flattened when flat), each line along
 * the axis sorted in place (heapsort, NaN last as numpy sorts). */
int32_t asc__lower_sorted_copy(lstate *ls, const asc__lview *in, int dt,
                               bool flat, int axis);
/* A new array holding the result of a call of an ASC_NUMPY_FUNCS
 * function (front/builtins.h). */
int32_t asc__lower_numpy(lstate *ls, const asc__ast_expr *e);
/* np.concatenate and the stacks (and np.array of arrays): a new array. */
int32_t asc__lower_stack(lstate *ls, const asc__ast_expr *e);
/* np.array, np.asarray (lower_list.c): a new array. */
int32_t asc__lower_np_array(lstate *ls, const asc__ast_expr *e);
/* The value of such a call whose result is a number (np.average(a)). */
asc__irval asc__lower_numpy_value(lstate *ls, const asc__ast_expr *e);
/* The elements of such a call whose result is a tuple (np.histogram,
 * np.meshgrid, sparse np.indices, np.linalg.eigh ...), into vals: a
 * number, or the register of a new array (asc__irv_reg). */
void asc__lower_numpy_tuple(lstate *ls, const asc__ast_expr *e,
                            asc__irval *vals);

/* ------------------------------------------------------- lower_linalg.c */

/* The np.linalg functions: a new array, a number, a tuple (as above). */
int32_t asc__lower_linalg(lstate *ls, const asc__ast_expr *e);
asc__irval asc__lower_linalg_value(lstate *ls, const asc__ast_expr *e);
void asc__lower_linalg_tuple(lstate *ls, const asc__ast_expr *e,
                             asc__irval *vals);

/* --------------------------------------------------------- lower_grid.c */

/* np.mgrid[...], np.ogrid[...] of one slice: a new array. */
int32_t asc__lower_grid(lstate *ls, const asc__ast_expr *e);
/* np.ogrid[...] of a tuple of slices: its arrays into regs. */
void asc__lower_grid_tuple(lstate *ls, const asc__ast_expr *e,
                           int32_t *regs);
/* np.meshgrid(...) into regs. */
void asc__lower_meshgrid(lstate *ls, const asc__ast_expr *e, int32_t *regs);
/* np.indices(dims, sparse=True) into regs. */
void asc__lower_sparse_indices(lstate *ls, const asc__ast_expr *e,
                               int32_t *regs);

/* -------------------------------------------------------- lower_stats.c */

/* np.histogram(...) into regs (hist, bin_edges); np.histogram_bin_edges
 * into regs[0]. */
void asc__lower_histogram(lstate *ls, const asc__ast_expr *e, int32_t *regs);
/* np.unique(...) into regs (the values, then the counts with
 * return_counts=True). */
void asc__lower_unique(lstate *ls, const asc__ast_expr *e, int32_t *regs);

/* --------------------------------------------------------- lower_call.c */

/* A helper call, inlined (lower_call.c explains how). */
asc__irval asc__lower_inline_helper(lstate *ls, const asc__ast_expr *e,
                                    asc__irval *agg);
/* A call of a builtin, an intrinsic or a helper. */
asc__irval asc__lower_call(lstate *ls, const asc__ast_expr *e);
/* np.sign, np.heaviside, np.fmax, np.fmin, np.logaddexp, np.reciprocal
 * (lower_ufunc_more.c) */
bool asc__lower_is_ufunc_more(asc__builtin_id id);
asc__irval asc__lower_ufunc_more(lstate *ls, const asc__ast_expr *e);
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

/* ------------------------------------------------------- lower_numpy2.c */

/* np.trace(a, offset): a number. */
asc__irval asc__lower_trace(lstate *ls, const asc__ast_expr *e);
/* np.diag(v, k): a new array. */
int32_t asc__lower_diag(lstate *ls, const asc__ast_expr *e);

/* ------------------------------------------------------- lower_numpy3.c */

/* np.diff(a, n, axis): a new array. */
int32_t asc__lower_diff(lstate *ls, const asc__ast_expr *e);
/* np.percentile, np.quantile, np.median: a new array, or a number (of a
 * number q, or the median, over every element without keepdims). */
int32_t asc__lower_quantile(lstate *ls, const asc__ast_expr *e);
asc__irval asc__lower_quantile_value(lstate *ls, const asc__ast_expr *e);

#endif /* ASC_LOWER_INT_H */
