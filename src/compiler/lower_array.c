/*
 * Arrays in kernels (docs/arrays.md): whole-array statements.  Views are
 * in lower_view.c, the arrays a kernel creates in lower_create.c, masks
 * and integer-array indices in lower_mask.c, reductions in
 * lower_reduce.c.
 *
 * A whole-array statement (out[1:-1] = 0.5 * (v[:-2] + v[2:]), b *= 2)
 * becomes one loop nest over the target's shape, whatever the number of
 * operators: the expression is lowered once per element by the ordinary
 * expression lowering, with each array operand read at the element's
 * index (ls->ew).  Scalar parts of the expression are evaluated once,
 * before the loops, as numpy evaluates them.  Operands broadcast as in
 * numpy: an axis of size 1 has stride 0.
 */
#include <stdint.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"


/* if (cond) raise kind(msg, a, b) */
void asc__lower_raise_if(lstate *ls, asc__irval cond, int kind,
                         const char *msg, asc__irval a, asc__irval b) {
  asc__irins *i, *r;
  asc__irblock *save = ls->cur;
  if (cond.kind == ASC_IRV_CONST && cond.c.i == 0)
    return;
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = cond;
  ls->cur = &i->body[0];
  r = emit(ls, ASC_IR_RAISE, -1, 2);
  r->aux = kind;
  r->str = msg;
  r->args[0] = a;
  r->args[1] = b;
  ls->cur = save;
}

/* ------------------------------------------------- whole-array statements */


/* The constant axis of a reduction call, normalised, or -1 (-2 for a
 * tuple of axes: call_axes). */
static int call_axis(const asc__ast_expr *call, int nd, bool *keep) {
  const asc__ast_expr *a =
      call->u.call.nrargs > 1 ? call->u.call.rargs[1] : NULL;
  const asc__builtin *b = call->u.call.builtin;
  int64_t k;
  int ki = b->id == ASC_BI_NP_SUM || b->id == ASC_BI_NP_PROD ||
                   b->id == ASC_BI_NP_MEAN
               ? 4
           : b->id == ASC_BI_NP_VAR || b->id == ASC_BI_NP_STD ? 5
                                                               : 3;
  *keep = call->u.call.nrargs > ki && call->u.call.rargs[ki] != NULL &&
          call->u.call.rargs[ki]->kind == ASC_EXPR_BOOL &&
          call->u.call.rargs[ki]->u.bval;
  if (a == NULL || a->kind == ASC_EXPR_NONE)
    return -1;
  if (a->kind == ASC_EXPR_TUPLE)
    return -2;
  if (a->kind == ASC_EXPR_INT)
    k = (int64_t)a->u.ival;
  else
    k = -(int64_t)a->u.unary.operand->u.ival;
  return (int)(k < 0 ? k + nd : k);
}

/* The axes a reduction call reduces, a bit each: its axis, or the tuple
 * of axes of var and std (checked by the typing: constants in bounds,
 * none twice), or all of them when it has no axis. */
static unsigned call_axes(const asc__ast_expr *call, int nd, bool *keep) {
  int k = call_axis(call, nd, keep);
  const asc__ast_expr *t = call->u.call.rargs[1];
  unsigned m = 0;
  if (k != -2)
    return k < 0 ? ASC_LOWER_ALL_AXES : 1u << k;
  for (int i = 0; i < t->u.tuple.n; i++) {
    int64_t v = 0;
    asc__expr_int_literal(t->u.tuple.elts[i], &v);
    m |= 1u << (v < 0 ? v + nd : v);
  }
  return m;
}

/* Whether reduction call e, when part of a larger expression of a nest
 * that allows it (ew->rows), is computed once per row of that nest instead of
 * being made first: a float reduction along the last axis with
 * keepdims=True (softmax's e / e.sum(axis=-1, keepdims=True), a layer
 * norm's x - x.mean(axis=-1, keepdims=True)).  Its value is the same
 * for every element of a row, so the row's loop computes it before its
 * innermost loop runs along the row, which is then still in cache: one
 * pass over memory instead of two, and no temporary.  The reduction runs
 * the same loop in the same order as when made first: the same bits. */
bool asc__lower_row_axis_reduction(const asc__ast_expr *e, bool *keep) {
  const asc__type *t = ty(e), *at;
  int nd;
  if (e->kind != ASC_EXPR_CALL || e->u.call.builtin == NULL ||
      e->u.call.callee != NULL ||
      !asc__builtin_is_reduction(e->u.call.builtin->id) ||
      e->u.call.builtin->id == ASC_BI_NP_DOT || t == NULL ||
      t->kind != ASC_TY_TENSOR || !asc__dt_is_float(t->dtype))
    return false;
  at = ty(e->u.call.rargs[0]);
  if (at == NULL || at->kind != ASC_TY_TENSOR || at->ndim < 1)
    return false;
  nd = at->ndim;
  return call_axis(e, nd, keep) == nd - 1;
}

bool asc__lower_row_reduction(const asc__ast_expr *e) {
  bool keep;
  return asc__lower_row_axis_reduction(e, &keep) && keep;
}

static bool full_slice(const asc__ast_expr *x) {
  return x->kind == ASC_EXPR_SLICE && !x->u.slice.ellipsis &&
         x->u.slice.lower == NULL && x->u.slice.upper == NULL &&
         x->u.slice.step == NULL;
}

/* -k written as a literal */
static bool int_lit(const asc__ast_expr *x, int64_t k) {
  if (x == NULL)
    return false;
  if (k < 0)
    return x->kind == ASC_EXPR_UNARY && x->u.unary.op == ASC_UN_NEG &&
           int_lit(x->u.unary.operand, -k);
  return x->kind == ASC_EXPR_INT && (int64_t)x->u.ival == k;
}

const asc__ast_expr *asc__lower_expand_last(const asc__ast_expr *e) {
  const asc__ast_expr *v, *ix;
  const asc__type *vt;
  if (e->kind == ASC_EXPR_SUBSCRIPT) {
    int n, d;
    v = e->u.sub.value;
    ix = e->u.sub.index;
    vt = ty(v);
    if (vt == NULL || vt->kind != ASC_TY_TENSOR || ix->kind != ASC_EXPR_TUPLE)
      return NULL;
    n = ix->u.tuple.n;
    d = (int)vt->ndim;
    if (n < 2 || ix->u.tuple.elts[n - 1]->kind != ASC_EXPR_NONE)
      return NULL;
    if (n == 2 && ix->u.tuple.elts[0]->kind == ASC_EXPR_SLICE &&
        ix->u.tuple.elts[0]->u.slice.ellipsis)
      return v; /* r[..., None] */
    if (n - 1 != d)
      return NULL;
    for (int k = 0; k < n - 1; k++)
      if (!full_slice(ix->u.tuple.elts[k]))
        return NULL;
    return v; /* r[:, None], r[:, :, None] */
  }
  if (e->kind == ASC_EXPR_CALL && e->u.call.builtin != NULL &&
      e->u.call.callee == NULL &&
      e->u.call.builtin->id == ASC_BI_NP_RESHAPE && e->u.call.nrargs >= 2) {
    /* r.reshape(-1, 1) or r.reshape((-1, 1)) of a 1-D r */
    asc__ast_expr *const *a = e->u.call.rargs;
    v = a[0];
    vt = ty(v);
    if (vt == NULL || vt->kind != ASC_TY_TENSOR || vt->ndim != 1)
      return NULL;
    if (a[1]->kind == ASC_EXPR_TUPLE && a[1]->u.tuple.n == 2 &&
        (e->u.call.nrargs < 3 || a[2] == NULL) &&
        int_lit(a[1]->u.tuple.elts[0], -1) && int_lit(a[1]->u.tuple.elts[1], 1))
      return v;
    if (e->u.call.nrargs >= 3 && int_lit(a[1], -1) && int_lit(a[2], 1) &&
        (e->u.call.nrargs < 4 || a[3] == NULL))
      return v;
  }
  return NULL;
}

/* When e is r expanded over a last axis of size 1 (asc__lower_expand_last)
 * with r a float reduction along the last axis without keepdims, or a
 * name whose definition fused to one: that reduction, which then reads
 * as with keepdims=True. */
static const asc__ast_expr *expanded_reduction(lstate *ls,
                                               const asc__ast_expr *e) {
  const asc__ast_expr *r = asc__lower_expand_last(e), *f;
  bool keep;
  if (r == NULL)
    return NULL;
  while ((f = asc__lower_fused(ls, r)) != NULL)
    r = f;
  return asc__lower_row_axis_reduction(r, &keep) && !keep ? r : NULL;
}

static bool row_reduction(const asc__ewctx *ew, const asc__ast_expr *e) {
  return ew->rows && asc__lower_row_reduction(e);
}

/* A new operand of ew for array expression e (its view still to fill). */
asc__ewop *asc__lower_push_op(lstate *ls, asc__ewctx *ew,
                              const asc__ast_expr *e) {
  asc__ewop *op;
  ew->ops = asc__arena_grow(ls->c, ew->ops, ew->nops, &ew->capops,
                            sizeof *ew->ops, 8);
  op = &ew->ops[ew->nops++];
  memset(op, 0, sizeof *op);
  op->e = e;
  return op;
}

/* ravel (when not a view), flatten, cumsum, outer: a new array. */
bool asc__lower_makes_array(asc__builtin_id id) {
  return id == ASC_BI_NP_RAVEL || id == ASC_BI_NP_FLATTEN ||
         id == ASC_BI_NP_CUMSUM || id == ASC_BI_NP_CUMPROD ||
         id == ASC_BI_NP_OUTER ||
         asc__builtin_is_numpy_func(id);
}

/* a @ b, np.dot(a, b) or np.matmul(a, b) whose result is an array. */
bool asc__lower_is_matmul(const asc__ast_expr *e) {
  if (!is_tensor(e))
    return false;
  if (e->kind == ASC_EXPR_BINARY)
    return e->u.binary.op == ASC_BIN_MATMUL;
  return e->kind == ASC_EXPR_CALL && e->u.call.builtin != NULL &&
         e->u.call.callee == NULL &&
         e->u.call.builtin->id == ASC_BI_NP_DOT;
}

static void collect_in(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e,
                       bool nested);

/* The array operands of expression e and its scalar parts, collected
 * before the loops (ls->ew is NULL then). */
void asc__lower_collect(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e) {
  collect_in(ls, ew, e, false);
}

/* Reduction call along an axis as an operand of ew read by expression
 * e (the call itself, or the call expanded over a last axis: then it has
 * keepdims=True's shape): an operand whose elements are loops; row:
 * computed once per row of the nest. */
static void push_reduction(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e,
                           const asc__ast_expr *call, bool row, bool expand) {
  const asc__ast_expr *arg = call->u.call.rargs[0];
  asc__ewred *red = asc__arena_alloc(ls->c, sizeof *red);
  asc__ewop *op;
  int nd;
  memset(red, 0, sizeof *red);
  red->call = call;
  red->nd = ty(arg)->ndim;
  red->axes = call_axes(call, red->nd, &red->keep);
  red->keep = red->keep || expand;
  red->row = row;
  collect_in(ls, &red->sub, arg, true);
  asc__lower_broadcast_ops(ls, &red->sub, red->shape, red->nd);
  for (int k = 0; k < red->nd && red->axes != ASC_LOWER_ALL_AXES; k++)
    if (red->axes >> k & 1u)
      asc__lower_empty_check(ls, call->u.call.builtin->id, red->shape[k]);
  op = asc__lower_push_op(ls, ew, e);
  op->red = red;
  op->v.t = -1;
  op->v.off = i64(0);
  nd = 0;
  for (int k = 0; k < red->nd; k++) {
    bool reduced = red->axes >> k & 1u;
    if (reduced && !red->keep)
      continue;
    op->v.shape[nd] = reduced ? i64(1) : red->shape[k];
    op->v.stride[nd] = i64(1);
    op->v.src[nd++] = -1;
  }
  op->v.nd = nd;
}

/* asc__lower_collect() of e, a part of a larger expression when nested. */
static void collect_in(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e,
                       bool nested) {
  const asc__ast_expr *fused, *red;
  while ((fused = asc__lower_fused(ls, e)) != NULL)
    e = fused; /* computed here, element by element (lower_fuse.c) */
  if (nested && ew->rows && (red = expanded_reduction(ls, e)) != NULL) {
    /* m[:, None] of m = x.max(axis=-1): once per row, as keepdims=True */
    push_reduction(ls, ew, e, red, true, true);
    return;
  }
  if (!is_tensor(e)) {
    asc__ewval *s;
    ew->scalars = asc__arena_grow(ls->c, ew->scalars, ew->nscalars,
                                  &ew->capscalars, sizeof *ew->scalars, 8);
    s = &ew->scalars[ew->nscalars++];
    s->e = e;
    s->v = asc__lower_expr(ls, e);
    return;
  }
  if (e->kind == ASC_EXPR_CALL && asc__lower_is_view(ls, e)) {
    asc__lower_view(ls, e,
                    &asc__lower_push_op(ls, ew, e)->v); /* a.reshape(...) */
    return;
  }
  if (asc__lower_is_fancy(e) && ty(e->u.sub.index)->dtype != ascBool) {
    asc__lower_collect_gather(ls, ew, e); /* read in place */
    return;
  }
  if (asc__lower_is_matmul(e) || asc__lower_is_fancy(e) ||
      (e->kind == ASC_EXPR_CALL && e->u.call.builtin &&
       e->u.call.callee == NULL &&
       (asc__builtin_is_creation(e->u.call.builtin->id) ||
        asc__lower_makes_array(e->u.call.builtin->id) ||
        (nested && asc__builtin_is_reduction(e->u.call.builtin->id) &&
         !row_reduction(ew, e))))) {
    /* a @ b or np.arange(n) inside an expression: made first, then read.
     * So is a reduction along an axis that is part of a larger expression
     * (x - x.mean(axis=0), e / e.sum(axis=1, keepdims=True)): inline, each
     * of its elements would be a loop run again for every element it is
     * broadcast to (a (4000, 4000) z-score made 4000 times the work). Made
     * first, it is one pass and a result smaller than its operand by the
     * reduced axis; and its operand is read before the statement writes,
     * as numpy reads it. */
    int32_t mark = ls->f->nregs;
    int32_t t = asc__lower_make_array(ls, e);
    asc__lower_whole_tensor(ls, t, &asc__lower_push_op(ls, ew, e)->v);
    if (asc__lower_is_made_temp(ls, t, mark)) {
      /* a new array no name holds (np.asarray(a) may be a itself, which
       * this is not): released after the statement */
      ls->temps = asc__arena_grow(ls->c, ls->temps, ls->ntemps,
                                  &ls->captemps, sizeof *ls->temps, 8);
      ls->temp_blocks =
          asc__arena_grow(ls->c, ls->temp_blocks, ls->ntemps, &ls->captemps2,
                          sizeof *ls->temp_blocks, 8);
      ls->temp_blocks[ls->ntemps] = ls->cur;
      ls->temps[ls->ntemps++] = t;
    }
    return;
  }
  switch (e->kind) {
  case ASC_EXPR_BINARY:
    collect_in(ls, ew, e->u.binary.lhs, true);
    collect_in(ls, ew, e->u.binary.rhs, true);
    return;
  case ASC_EXPR_UNARY:
    collect_in(ls, ew, e->u.unary.operand, true);
    return;
  case ASC_EXPR_COMPARE:
    collect_in(ls, ew, e->u.cmp.operands[0], true);
    collect_in(ls, ew, e->u.cmp.operands[1], true);
    return;
  case ASC_EXPR_CALL:
    if (e->u.call.builtin &&
        asc__builtin_is_reduction(e->u.call.builtin->id)) {
      push_reduction(ls, ew, e, e, nested && row_reduction(ew, e), false);
      return;
    }
    if (e->u.call.builtin && asc__builtin_is_elementwise(e)) {
      for (int k = 0; k < e->u.call.nrargs; k++)
        if (e->u.call.rargs[k])
          collect_in(ls, ew, e->u.call.rargs[k], true);
      return;
    }
    if (e->u.call.builtin == NULL && e->u.call.callee != NULL) {
      /* a helper's array: its body runs here, before the loops */
      asc__irval t = asc__lower_inline_helper(ls, e, NULL);
      asc__lower_whole_tensor(ls, t.reg, &asc__lower_push_op(ls, ew, e)->v);
      return;
    }
    break;
  case ASC_EXPR_NAME:
  case ASC_EXPR_SUBSCRIPT:
  case ASC_EXPR_ATTR:
    asc__lower_view(ls, e, &asc__lower_push_op(ls, ew, e)->v);
    return;
  default:
    break;
  }
  unsupported(ls, e->loc, "this array expression");
}

/* The instruction of the current block that last wrote reg, found
 * within its last 64 instructions, or NULL. */
static const asc__irins *def_here(lstate *ls, int32_t reg) {
  int n = 0;
  for (const asc__irins *i = ls->cur->last; i != NULL && n < 64;
       i = i->prev, n++)
    if (i->dst == reg)
      return i;
  return NULL;
}

/* Are sizes a and b equal?  The same value, or two `dim` of one tensor's
 * axis read in this block with no write of the tensor after either (a
 * statement that reads one array twice, np.multiply(z, z, z): each view
 * reads its sizes anew). */
static bool same_size(lstate *ls, asc__irval a, asc__irval b) {
  const asc__irins *da, *db;
  int seen = 0;
  if (same_val(a, b))
    return true;
  if (a.kind != ASC_IRV_REG || b.kind != ASC_IRV_REG)
    return false;
  da = def_here(ls, a.reg);
  db = def_here(ls, b.reg);
  if (da == NULL || db == NULL || da->op != ASC_IR_DIM ||
      db->op != ASC_IR_DIM || da->aux != db->aux ||
      !same_val(da->args[0], db->args[0]) ||
      da->args[0].kind != ASC_IRV_REG)
    return false;
  /* the tensor register is not written after the earlier of the two
   * (both are in this block, so the walk meets them) */
  for (const asc__irins *i = ls->cur->last; i != NULL; i = i->prev) {
    if (i == da || i == db) {
      if (seen++ > 0)
        return true;
      continue;
    }
    if (i->dst == da->args[0].reg)
      return false;
  }
  return false;
}

/* Broadcasts operand v against the loop shape: each of its axes is of
 * the shape's size (checked) or 1 (stride 0).  grow: the shape may take
 * the operand's size where it is 1 so far (no target). */
void asc__lower_broadcast(lstate *ls, asc__lview *v, asc__irval *shape, int nd,
                          bool grow) {
  for (int k = 0; k < v->nd; k++) {
    int a = nd - v->nd + k;
    asc__irval s = v->shape[k], one, ok;
    if (s.kind == ASC_IRV_CONST && s.c.i == 1) {
      v->stride[k] = i64(0);
      continue;
    }
    if (grow && shape[a].kind == ASC_IRV_CONST && shape[a].c.i == 1) {
      shape[a] = s; /* the first operand of this size: it sets it */
      continue;
    }
    if (same_size(ls, s, shape[a]))
      continue;
    if (grow)
      shape[a] = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, shape[a], i64(1)), s,
                     shape[a]);
    one = op2(ls, ASC_IR_EQ, ascInt64, s, i64(1));
    ok = op2(ls, ASC_IR_OR, ascBool, one,
             op2(ls, ASC_IR_EQ, ascInt64, s, shape[a]));
    asc__lower_raise_if(ls, op1(ls, ASC_IR_NOT, ascBool, ok),
                        ASC_KEXC_VALUE_ERROR,
                        asc__arena_printf(ls->c,
                                          "operands could not be broadcast "
                                          "together: size {} against size {} "
                                          "on axis %d", a), s, shape[a]);
    v->stride[k] = sel(ls, one, i64(0), v->stride[k]);
  }
}

/* The broadcast shape of ew's operands, aligned right in nd axes, into
 * shape[] (numpy's error where two sizes differ and neither is 1).  The
 * operands keep their strides. */
static void broadcast_shape(lstate *ls, const asc__ewctx *ew,
                            asc__irval *shape, int nd) {
  for (int k = 0; k < nd; k++)
    shape[k] = i64(1);
  for (int k = 0; k < ew->nops; k++) {
    asc__lview v = ew->ops[k].v; /* a copy: only the shape is wanted */
    asc__lower_broadcast(ls, &v, shape, nd, true);
  }
}

/* Broadcasts every operand of ew into the shape of all of them, computed
 * into shape[0..nd): an axis of size 1 reads with stride 0.  The shape is
 * known only after the last operand, so each operand's strides are set
 * against the final shape, not against the sizes seen so far (the first
 * operand of (3, 1) + (3, 3) sets axis 1 to its own size, which only the
 * second operand raises to 3). */
void asc__lower_broadcast_ops(lstate *ls, asc__ewctx *ew, asc__irval *shape,
                              int nd) {
  broadcast_shape(ls, ew, shape, nd);
  for (int k = 0; k < ew->nops; k++) {
    asc__lview *v = &ew->ops[k].v;
    for (int q = 0; q < v->nd; q++) {
      asc__irval s = v->shape[q];
      if (s.kind == ASC_IRV_CONST && s.c.i == 1)
        v->stride[q] = i64(0);
      else if (!same_size(ls, s, shape[nd - v->nd + q])) /* checked above */
        v->stride[q] = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, s, i64(1)),
                           i64(0), v->stride[q]);
    }
  }
}

asc__irval asc__lower_own_strides(lstate *ls, asc__ewctx *ew,
                                  const asc__irval *shape, int nd) {
  asc__irval same = asc__irv_int(ascBool, 1);
  for (int k = 0; k < ew->nops; k++) {
    asc__lview *v = &ew->ops[k].v;
    for (int q = 0; q < v->nd; q++) {
      asc__irval s = v->shape[q], t = shape[nd - v->nd + q];
      if (s.kind == ASC_IRV_CONST && s.c.i == 1)
        v->stride[q] = i64(0);
      else if (!same_size(ls, s, t))
        same = op2(ls, ASC_IR_AND, ascBool, same,
                   op2(ls, ASC_IR_EQ, ascInt64, s, t));
    }
  }
  return same;
}

/* Are a and b the same elements in the same order? */
bool asc__lower_same_view(const asc__lview *a, const asc__lview *b) {
  if (a->t != b->t || a->nd != b->nd || !same_val(a->off, b->off))
    return false;
  for (int k = 0; k < a->nd; k++) {
    if (a->src[k] >= 0 && a->src[k] == b->src[k])
      continue;
    if (!same_val(a->shape[k], b->shape[k]) ||
        !same_val(a->stride[k], b->stride[k]))
      return false;
  }
  return true;
}

/* Are a and b the same expression, written the same way, with no calls?
 * Within one statement they then denote the same view. */
static bool same_expr(const asc__ast_expr *a, const asc__ast_expr *b) {
  if (a == NULL || b == NULL)
    return a == b;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case ASC_EXPR_NAME:
    return a->u.name.sym != NULL && a->u.name.sym == b->u.name.sym;
  case ASC_EXPR_INT:
    return a->u.ival == b->u.ival;
  case ASC_EXPR_BOOL:
    return a->u.bval == b->u.bval;
  case ASC_EXPR_NONE:
    return true;
  case ASC_EXPR_SLICE:
    return same_expr(a->u.slice.lower, b->u.slice.lower) &&
           same_expr(a->u.slice.upper, b->u.slice.upper) &&
           same_expr(a->u.slice.step, b->u.slice.step);
  case ASC_EXPR_TUPLE:
    if (a->u.tuple.n != b->u.tuple.n)
      return false;
    for (int k = 0; k < a->u.tuple.n; k++)
      if (!same_expr(a->u.tuple.elts[k], b->u.tuple.elts[k]))
        return false;
    return true;
  case ASC_EXPR_SUBSCRIPT:
    return same_expr(a->u.sub.value, b->u.sub.value) &&
           same_expr(a->u.sub.index, b->u.sub.index);
  case ASC_EXPR_ATTR:
    return strcmp(a->u.attr.attr, b->u.attr.attr) == 0 &&
           same_expr(a->u.attr.value, b->u.attr.value);
  case ASC_EXPR_UNARY:
    return a->u.unary.op == b->u.unary.op &&
           same_expr(a->u.unary.operand, b->u.unary.operand);
  case ASC_EXPR_BINARY:
    return a->u.binary.op == b->u.binary.op &&
           same_expr(a->u.binary.lhs, b->u.binary.lhs) &&
           same_expr(a->u.binary.rhs, b->u.binary.rhs);
  case ASC_EXPR_COMPARE: /* the masks of x[y > lo] * y[y > lo] */
    if (a->u.cmp.n != b->u.cmp.n)
      return false;
    for (int k = 0; k < a->u.cmp.n; k++)
      if (a->u.cmp.ops[k] != b->u.cmp.ops[k])
        return false;
    for (int k = 0; k <= a->u.cmp.n; k++)
      if (!same_expr(a->u.cmp.operands[k], b->u.cmp.operands[k]))
        return false;
    return true;
  default:
    return false;
  }
}

bool asc__lower_same_expr(const asc__ast_expr *a, const asc__ast_expr *b) {
  return same_expr(a, b);
}

/* Opens the loop nest over shape[0..nd); returns the innermost body's
 * enclosing block to restore. */
asc__irblock *asc__lower_open_nest(lstate *ls, const asc__irval *shape, int nd,
                                   asc__irval *idx) {
  asc__irblock *save = ls->cur;
  for (int k = 0; k < nd; k++) {
    int32_t r = newreg(ls, ascInt64, "ax");
    asc__irins *f = emit(ls, ASC_IR_FOR, r, 3);
    f->args[0] = i64(0);
    f->args[1] = shape[k];
    f->args[2] = i64(1);
    ls->cur = &f->body[0];
    idx[k] = asc__irv_reg(r);
  }
  return save;
}

asc__irval asc__lower_elem_offset(lstate *ls, const asc__lview *v,
                                  const asc__irval *idx, int nd) {
  asc__irval off = v->off;
  for (int k = 0; k < v->nd; k++)
    off = add(ls, off, mul(ls, idx[nd - v->nd + k], v->stride[k]));
  return off;
}

bool asc__lower_ew_lookup(lstate *ls, const asc__ast_expr *e,
                          asc__irval *out) {
  asc__ewctx *ew = ls->ew;
  for (int k = 0; k < ew->nscalars; k++)
    if (ew->scalars[k].e == e) {
      *out = ew->scalars[k].v;
      return true;
    }
  for (int k = 0; k < ew->nops; k++)
    if (ew->ops[k].e == e && ew->ops[k].red != NULL) {
      asc__ewred *red = ew->ops[k].red;
      const asc__lview *v = &ew->ops[k].v;
      asc__irval fixed[ASC_MAX_DIMS];
      for (int j = 0, q = 0; j < red->nd; j++) {
        int r;
        bool reduced = red->axes >> j & 1u;
        if (reduced) {
          fixed[j] = i64(0);
          if (!red->keep)
            continue;
        }
        r = q++;
        fixed[j] = reduced
                       ? i64(0)
                       : mul(ls, ew->idx[ew->nd - v->nd + r], v->stride[r]);
      }
      *out = asc__lower_reduce_loops(ls, red->call, &red->sub, red->shape,
                                     red->nd, fixed, red->axes);
      return true;
    } else if (ew->ops[k].e == e && ew->ops[k].gat != NULL) {
      *out = asc__lower_gather_elem(ls, &ew->ops[k], ew->idx, ew->nd);
      return true;
    } else if (ew->ops[k].e == e) {
      const asc__lview *v = &ew->ops[k].v;
      asc__irval off = asc__lower_elem_offset(ls, v, ew->idx, ew->nd);
      int32_t d = newreg(ls, ls->f->regs[v->t].ty.dtype, NULL);
      asc__irins *i = emit(ls, ASC_IR_LOAD, d, 2);
      i->args[0] = asc__irv_reg(v->t);
      i->args[1] = off;
      *out = asc__irv_reg(d);
      return true;
    }
  return false;
}

/* dst[...] = value, or dst[...] op= value (op >= 0): one loop nest. */
/* The nest of a whole-array statement with the operands' strides as they
 * are in ew. */
static void emit_nest(lstate *ls, asc__ewctx *ew, const asc__lview *dst,
                      const asc__irval *shape, const asc__ast_expr *value,
                      int op) {
  asc__irval idx[ASC_MAX_DIMS], v, off;
  asc__ewctx *outer = ls->ew;
  int dt = ls->f->regs[dst->t].ty.dtype;
  int nrow = 0, nsc = ew->nscalars;
  asc__irblock *save;
  asc__irins *st;
  for (int k = 0; k < ew->nops; k++)
    nrow += ew->ops[k].red != NULL && ew->ops[k].red->row;
  ew->nd = dst->nd;
  ew->idx = idx;
  if (nrow > 0 && dst->nd > 0) {
    /* the rows' reductions, between the outer loops and the innermost:
     * read as numbers by the elements of the row (asc__lower_ew_lookup
     * finds a scalar first) */
    save = asc__lower_open_nest(ls, shape, dst->nd - 1, idx);
    ls->ew = ew;
    for (int k = 0; k < ew->nops; k++)
      if (ew->ops[k].red != NULL && ew->ops[k].red->row) {
        asc__ewval *s;
        asc__irval r;
        ASC_CHECK(ls->c, asc__lower_ew_lookup(ls, ew->ops[k].e, &r));
        ew->scalars = asc__arena_grow(ls->c, ew->scalars, ew->nscalars,
                                      &ew->capscalars, sizeof *ew->scalars,
                                      8);
        s = &ew->scalars[ew->nscalars++];
        s->e = ew->ops[k].e;
        s->v = r;
      }
    asc__lower_open_nest(ls, shape + dst->nd - 1, 1, idx + dst->nd - 1);
  } else {
    save = asc__lower_open_nest(ls, shape, dst->nd, idx);
  }
  off = asc__lower_elem_offset(ls, dst, idx, dst->nd);
  ls->ew = ew;
  v = asc__lower_expr(ls, value);
  if (op >= 0) {
    int32_t d = newreg(ls, dt, NULL);
    /* loaded after the value's operands, which may be the target */
    asc__irins *ld = emit(ls, ASC_IR_LOAD, d, 2);
    asc__type *pt = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, dt),
                                    asc__ty_scalar(ls->c, vdt(ls, v)));
    int odt = asc__ty_concrete(ls->c, pt)->dtype;
    if (op == ASC_IR_DIV && !asc__dt_is_float(odt) &&
        !asc__dt_is_complex(odt))
      odt = ascFloat64;
    ld->args[0] = asc__irv_reg(dst->t);
    ld->args[1] = off;
    v = op == ASC_IR_DIV
            ? asc__lower_div(ls, odt, conv(ls, asc__irv_reg(d), odt),
                             conv(ls, v, odt), true)
            : op2(ls, op, odt, conv(ls, asc__irv_reg(d), odt),
                  conv(ls, v, odt));
  }
  v = conv(ls, v, dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(dst->t);
  st->args[1] = off;
  st->args[2] = v;
  ew->nscalars = nsc;
  ls->ew = outer;
  ls->cur = save;
}

/* dst[...] = value, or dst[...] op= value (op >= 0): one loop nest.  When
 * an operand may broadcast at run time, the nest is made twice: with the
 * operands' own strides when every axis has the target's size (the usual
 * case, where contiguous operands keep unit strides the C compiler can
 * vectorise), and with stride 0 on axes of size 1 otherwise. */
static bool overlaps(const asc__ewctx *ew, const asc__lview *dst,
                     const asc__ast_expr *where) {
  for (int k = 0; k < ew->nops; k++) {
    const asc__lview *v = &ew->ops[k].v;
    if (v->t == dst->t && !asc__lower_same_view(v, dst) &&
        !same_expr(ew->ops[k].e, where))
      return true;
    if (asc__lower_op_reads_within(&ew->ops[k], dst->t))
      return true;
  }
  return false;
}

static void store_nest_ew(lstate *ls, asc__lview *dst,
                          const asc__ast_expr *value, int op,
                          asc__ewctx *ewp);
static void copy_from(lstate *ls, const asc__ast_expr *where,
                      asc__lview *dst, const asc__ast_expr *value,
                      int32_t tmp, int op);

static void store_nest_ew(lstate *ls, asc__lview *dst,
                          const asc__ast_expr *value, int op,
                          asc__ewctx *ewp) {
  asc__ewctx ew = *ewp;
  asc__irval shape[ASC_MAX_DIMS], same = asc__irv_int(ascBool, 1);
  asc__irval *own;
  for (int k = 0; k < dst->nd; k++)
    shape[k] = dst->shape[k];
  own = asc__arena_alloc(ls->c, sizeof *own * ASC_MAX_DIMS *
                                    ((size_t)ew.nops + 1));
  for (int k = 0; k < ew.nops; k++) {
    asc__lview *v = &ew.ops[k].v;
    if (v->nd > dst->nd)
      asc__diag_fatal(ls->c, ew.ops[k].e->loc,
                      "cannot broadcast a %d-dimensional array into a "
                      "%d-dimensional one",
                      v->nd, dst->nd);
    for (int a = 0; a < v->nd; a++) {
      asc__irval s = v->shape[a], t = shape[dst->nd - v->nd + a];
      own[k * ASC_MAX_DIMS + a] = v->stride[a];
      if ((s.kind == ASC_IRV_CONST && s.c.i == 1) || same_val(s, t) ||
          (v->src[a] >= 0 && v->t == dst->t && v->src[a] == dst->src[a]))
        continue;
      same = op2(ls, ASC_IR_AND, ascBool, same,
                 op2(ls, ASC_IR_EQ, ascInt64, s, t));
    }
    asc__lower_broadcast(ls, v, shape, dst->nd, false);
    for (int a = 0; a < v->nd; a++)
      if (v->shape[a].kind == ASC_IRV_CONST && v->shape[a].c.i == 1)
        own[k * ASC_MAX_DIMS + a] = v->stride[a]; /* 0 in both nests */
  }
  if (same.kind == ASC_IRV_CONST && same.c.i) {
    emit_nest(ls, &ew, dst, shape, value, op);
  } else {
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    asc__irblock *save = ls->cur;
    i->args[0] = same;
    ls->cur = &i->body[1];
    emit_nest(ls, &ew, dst, shape, value, op);
    for (int k = 0; k < ew.nops; k++)
      for (int a = 0; a < ew.ops[k].v.nd; a++)
        ew.ops[k].v.stride[a] = own[k * ASC_MAX_DIMS + a];
    ls->cur = &i->body[0];
    emit_nest(ls, &ew, dst, shape, value, op);
    ls->cur = save;
  }
}

void asc__lower_store_nest(lstate *ls, const asc__ast_expr *where,
                           asc__lview *dst, const asc__ast_expr *value,
                           int op) {
  asc__ewctx ew;
  memset(&ew, 0, sizeof ew);
  ew.rows = true; /* stored by emit_nest */
  asc__lower_collect(ls, &ew, value);
  if (is_tensor(value) && overlaps(&ew, dst, where)) {
    /* numpy's copy on overlap: the value into a new array first */
    int32_t tmp = asc__lower_materialize_ew(ls, value, &ew);
    asc__irins *fr;
    copy_from(ls, where, dst, value, tmp, op);
    fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
    fr->args[0] = asc__irv_reg(tmp);
    return;
  }
  store_nest_ew(ls, dst, value, op, &ew);
}

bool asc__lower_array_assign(lstate *ls, const asc__ast_expr *target,
                             const asc__ast_expr *value) {
  asc__lview dst;
  asc__type *tt;
  if (target->kind != ASC_EXPR_SUBSCRIPT)
    return false;
  if (asc__lower_is_fancy(target)) {
    asc__lower_fancy_store(ls, target, value, -1);
    return true;
  }
  tt = ty(target->u.sub.value);
  if (tt == NULL || tt->kind != ASC_TY_TENSOR ||
      !asc__infer_index_is_view(target->u.sub.index, tt->ndim))
    return false;
  asc__lower_view(ls, target, &dst);
  asc__lower_store_nest(ls, target, &dst, value, -1);
  return true;
}

bool asc__lower_array_aug(lstate *ls, const asc__ast_expr *target,
                          const asc__ast_expr *value, int op) {
  asc__lview dst;
  if (!is_tensor(target))
    return false;
  if (asc__lower_is_fancy(target)) {
    asc__lower_fancy_store(ls, target, value, op);
    return true;
  }
  asc__lower_view(ls, target, &dst);
  asc__lower_store_nest(ls, target, &dst, value, op);
  return true;
}

/* A new array holding array expression e (whose operands ew holds):
 * numpy's broadcast shape, then one loop nest. */
int32_t asc__lower_materialize_ew(lstate *ls, const asc__ast_expr *e,
                                  asc__ewctx *ew) {
  asc__type *t = ty(e);
  asc__irval shape[ASC_MAX_DIMS];
  asc__lview w;
  int32_t r;
  broadcast_shape(ls, ew, shape, t->ndim);
  r = asc__lower_alloc_array(ls, t->dtype, t->ndim, shape);
  asc__lower_whole_tensor(ls, r, &w);
  for (int k = 0; k < t->ndim; k++)
    w.shape[k] = shape[k]; /* as allocated: no check against itself */
  store_nest_ew(ls, &w, e, -1, ew);
  return r;
}

/* dst[...] (op)= tmp, where tmp holds value (of value's type). */
static void copy_from(lstate *ls, const asc__ast_expr *where,
                      asc__lview *dst, const asc__ast_expr *value,
                      int32_t tmp, int op) {
  asc__lower_store_nest(ls, where, dst, asc__lower_tmp_name(ls, value, tmp),
                        op);
}

const asc__ast_expr *asc__lower_tmp_name(lstate *ls,
                                         const asc__ast_expr *value,
                                         int32_t tmp) {
  asc__sym *s = asc__arena_alloc(ls->c, sizeof *s);
  asc__ast_expr *x = asc__arena_alloc(ls->c, sizeof *x);
  memset(s, 0, sizeof *s);
  memset(x, 0, sizeof *x);
  s->kind = ASC_SYM_LOCAL;
  s->name = "copy";
  s->loc = value->loc;
  s->type = value->type;
  x->kind = ASC_EXPR_NAME;
  x->loc = value->loc;
  x->type = value->type;
  x->u.name.id = "copy";
  x->u.name.sym = s;
  asc__lower_bind(ls, s, tmp);
  return x;
}
