/*
 * Arrays in kernels (docs/arrays.md): whole-array statements.  Views are
 * in lower_view.c.
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


/* The constant axis of a reduction call, normalised, or -1. */
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
  if (a->kind == ASC_EXPR_INT)
    k = (int64_t)a->u.ival;
  else
    k = -(int64_t)a->u.unary.operand->u.ival;
  return (int)(k < 0 ? k + nd : k);
}

static int32_t materialize(lstate *ls, const asc__ast_expr *e);

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
static bool makes_array(asc__builtin_id id) {
  return id == ASC_BI_NP_RAVEL || id == ASC_BI_NP_FLATTEN ||
         id == ASC_BI_NP_CUMSUM || id == ASC_BI_NP_OUTER;
}

/* a @ b, np.dot(a, b) or np.matmul(a, b) whose result is an array. */
static bool is_matmul(const asc__ast_expr *e) {
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

/* asc__lower_collect() of e, a part of a larger expression when nested. */
static void collect_in(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e,
                       bool nested) {
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
  if (is_matmul(e) || asc__lower_is_fancy(e) ||
      (e->kind == ASC_EXPR_CALL && e->u.call.builtin &&
       e->u.call.callee == NULL &&
       (asc__builtin_is_creation(e->u.call.builtin->id) ||
        makes_array(e->u.call.builtin->id) ||
        (nested && asc__builtin_is_reduction(e->u.call.builtin->id))))) {
    /* a @ b or np.arange(n) inside an expression: made first, then read.
     * So is a reduction along an axis that is part of a larger expression
     * (x - x.mean(axis=0), e / e.sum(axis=1, keepdims=True)): inline, each
     * of its elements would be a loop run again for every element it is
     * broadcast to (a (4000, 4000) z-score made 4000 times the work). Made
     * first, it is one pass and a result smaller than its operand by the
     * reduced axis; and its operand is read before the statement writes,
     * as numpy reads it. */
    int32_t t = materialize(ls, e);
    asc__lower_whole_tensor(ls, t, &asc__lower_push_op(ls, ew, e)->v);
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
      /* along an axis: an operand whose elements are loops */
      const asc__ast_expr *arg = e->u.call.rargs[0];
      asc__ewred *red = asc__arena_alloc(ls->c, sizeof *red);
      asc__ewop *op;
      int nd;
      memset(red, 0, sizeof *red);
      red->call = e;
      red->nd = ty(arg)->ndim;
      red->axis = call_axis(e, red->nd, &red->keep);
      collect_in(ls, &red->sub, arg, true);
      asc__lower_broadcast_ops(ls, &red->sub, red->shape, red->nd);
      if (red->axis >= 0)
        asc__lower_empty_check(ls, e->u.call.builtin->id,
                               red->shape[red->axis]);
      op = asc__lower_push_op(ls, ew, e);
      op->red = red;
      op->v.t = -1;
      op->v.off = i64(0);
      nd = 0;
      for (int k = 0; k < red->nd; k++) {
        if (k == red->axis && !red->keep)
          continue;
        op->v.shape[nd] = k == red->axis ? i64(1) : red->shape[k];
        op->v.stride[nd] = i64(1);
        op->v.src[nd++] = -1;
      }
      op->v.nd = nd;
      return;
    }
    if (e->u.call.builtin && asc__builtin_is_elementwise(e)) {
      for (int k = 0; k < e->u.call.nrargs; k++)
        if (e->u.call.rargs[k])
          collect_in(ls, ew, e->u.call.rargs[k], true);
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
    if (same_val(s, shape[a]))
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
      else if (!same_val(s, shape[nd - v->nd + q])) /* checked above */
        v->stride[q] = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, s, i64(1)),
                           i64(0), v->stride[q]);
    }
  }
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
  default:
    return false;
  }
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
        if (j == red->axis) {
          fixed[j] = i64(0);
          if (!red->keep)
            continue;
        }
        r = q++;
        fixed[j] = j == red->axis
                       ? i64(0)
                       : mul(ls, ew->idx[ew->nd - v->nd + r], v->stride[r]);
      }
      *out = asc__lower_reduce_loops(ls, e, &red->sub, red->shape, red->nd,
                                     fixed, red->axis);
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
  asc__irblock *save = asc__lower_open_nest(ls, shape, dst->nd, idx);
  asc__ewctx *outer = ls->ew;
  int dt = ls->f->regs[dst->t].ty.dtype;
  asc__irins *st;
  ew->nd = dst->nd;
  ew->idx = idx;
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
    if (ew->ops[k].red != NULL)
      for (int q = 0; q < ew->ops[k].red->sub.nops; q++)
        if (ew->ops[k].red->sub.ops[q].v.t == dst->t)
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

static void store_nest(lstate *ls, const asc__ast_expr *where,
                       asc__lview *dst, const asc__ast_expr *value, int op) {
  asc__ewctx ew;
  memset(&ew, 0, sizeof ew);
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
  store_nest(ls, target, &dst, value, -1);
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
  store_nest(ls, target, &dst, value, op);
  return true;
}


/* ------------------------------------------- arrays the kernel creates */

/* A new array register (contiguous, 64-byte aligned). */
static int32_t heap_reg(lstate *ls, int dt, int nd, const char *hint) {
  asc__irtype it;
  memset(&it, 0, sizeof it);
  it.kind = ASC_IRK_TENSOR;
  it.dtype = (uint8_t)dt;
  it.ndim = (uint8_t)nd;
  it.flags = ASC_IRT_CONTIG | ASC_IRT_ALIGN64;
  return asc__ir_reg(ls->c, ls->f, it, hint);
}

int32_t asc__lower_alloc_array(lstate *ls, int dt, int nd,
                               const asc__irval *shape) {
  int32_t t = heap_reg(ls, dt, nd, "new");
  asc__irval ext[ASC_MAX_DIMS];
  asc__irins *i;
  for (int k = 0; k < nd; k++) /* before the instruction: conv may emit */
    ext[k] = conv(ls, shape[k], ascInt64);
  i = emit(ls, ASC_IR_NEW_ARRAY, t, nd);
  for (int k = 0; k < nd; k++)
    i->args[k] = ext[k];
  return t;
}

int32_t asc__lower_scalar_array(lstate *ls, int dt, asc__irval v) {
  int32_t t = asc__lower_alloc_array(ls, dt, 0, NULL);
  asc__irins *st;
  v = conv(ls, v, dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = i64(0);
  st->args[2] = v;
  return t;
}

/* t[...] = v */
static void fill(lstate *ls, int32_t t, asc__irval v) {
  asc__lview w;
  asc__irval idx[ASC_MAX_DIMS], off;
  asc__irblock *save;
  asc__irins *st;
  int dt = ls->f->regs[t].ty.dtype;
  v = conv(ls, v, dt);
  asc__lower_whole_tensor(ls, t, &w);
  save = asc__lower_open_nest(ls, w.shape, w.nd, idx);
  off = asc__lower_elem_offset(ls, &w, idx, w.nd);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = off;
  st->args[2] = v;
  ls->cur = save;
}

/* np.eye: element [i, j] of 2-D t is 1 where j - i == k, else 0, in one
 * pass (no separate diagonal loop over a zeroed array). */
static void eye_fill(lstate *ls, int32_t t, asc__irval k) {
  asc__lview w;
  asc__irval idx[2], off, v;
  asc__irblock *save;
  asc__irins *st;
  int dt = ls->f->regs[t].ty.dtype;
  asc__lower_whole_tensor(ls, t, &w);
  save = asc__lower_open_nest(ls, w.shape, 2, idx);
  off = asc__lower_elem_offset(ls, &w, idx, 2);
  v = conv(ls,
           op2(ls, ASC_IR_EQ, ascInt64,
               op2(ls, ASC_IR_SUB, ascInt64, idx[1], idx[0]), k),
           dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = off;
  st->args[2] = v;
  ls->cur = save;
}

/* The extents of a shape argument: n, (n, m) or a.shape. */
static void shape_vals(lstate *ls, const asc__ast_expr *s, int nd,
                       asc__irval *shape) {
  asc__type *t = ty(s);
  if (t != NULL && t->kind == ASC_TY_TUPLE) {
    asc__lower_agg(ls, s, t, shape);
    for (int k = 0; k < nd; k++)
      shape[k] = conv(ls, shape[k], ascInt64);
  } else {
    shape[0] = conv(ls, asc__lower_expr(ls, s), ascInt64);
  }
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

static asc__irval flt(lstate *ls, const asc__ast_expr *e) {
  return conv(ls, asc__lower_expr(ls, e), ascFloat64);
}

/* np.arange(start, stop, step): numpy's length, ceil((stop - start) /
 * step), and start + i * step. */
static int32_t arange(lstate *ls, const asc__ast_expr *e, int dt) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int na = e->u.call.nrargs;
  bool one = na < 2 || a[1] == NULL;
  bool fl = asc__dt_is_float(dt);
  int wt = fl ? ascFloat64 : ascInt64;
  asc__irval start = one ? asc__irv_int(ascInt64, 0) : asc__lower_expr(ls, a[0]);
  asc__irval stop = asc__lower_expr(ls, one ? a[0] : a[1]);
  asc__irval step = na > 2 && a[2] ? asc__lower_expr(ls, a[2])
                                   : asc__irv_int(ascInt64, 1);
  asc__irval n, idx[1], v;
  asc__irblock *save;
  asc__irins *st;
  int32_t r;
  start = conv(ls, start, wt);
  stop = conv(ls, stop, wt);
  step = conv(ls, step, wt);
  asc__lower_raise_if(ls,
                      op2(ls, ASC_IR_EQ, wt, step,
                          fl ? asc__irv_float(ascFloat64, 0.0) : i64(0)),
                      ASC_KEXC_ZERO_DIVISION_ERROR, "arange: the step is zero",
                      i64(0), i64(0));
  if (fl) {
    asc__irval q = op2(ls, ASC_IR_DIV, ascFloat64,
                       op2(ls, ASC_IR_SUB, ascFloat64, stop, start), step);
    int32_t c = newreg(ls, ascFloat64, NULL);
    asc__irins *ci = emit(ls, ASC_IR_CALL, c, 1);
    ci->aux = ASC_INTR_CEIL;
    ci->args[0] = q;
    asc__lower_raise_if(ls,
                        op1(ls, ASC_IR_NOT, ascBool,
                            op2(ls, ASC_IR_LT, ascFloat64, asc__irv_reg(c),
                                asc__irv_float(ascFloat64, 9.2e18))),
                        ASC_KEXC_VALUE_ERROR,
                        "arange: the length is not finite", i64(0), i64(0));
    n = conv(ls, asc__irv_reg(c), ascInt64);
  } else {
    /* ceil(d / s) == -((-d) // s) with Python's floor division */
    asc__irval d = op2(ls, ASC_IR_SUB, ascInt64, stop, start);
    n = op1(ls, ASC_IR_NEG, ascInt64,
            op2(ls, ASC_IR_FLOORDIV, ascInt64,
                op1(ls, ASC_IR_NEG, ascInt64, d), step));
  }
  n = op2(ls, ASC_IR_MAX, ascInt64, n, i64(0));
  r = asc__lower_alloc_array(ls, dt, 1, &n);
  save = asc__lower_open_nest(ls, &n, 1, idx);
  v = op2(ls, ASC_IR_ADD, wt, start,
          op2(ls, ASC_IR_MUL, wt, conv(ls, idx[0], wt), step));
  v = conv(ls, v, dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(r);
  st->args[1] = idx[0];
  st->args[2] = v;
  ls->cur = save;
  return r;
}

/* np.linspace(start, stop, num=50, endpoint=True): start + i * step,
 * and stop itself last when endpoint (numpy's). */
static int32_t linspace(lstate *ls, const asc__ast_expr *e, int dt) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int na = e->u.call.nrargs;
  asc__irval start = flt(ls, a[0]), stop = flt(ls, a[1]);
  asc__irval num = na > 2 && a[2] ? conv(ls, asc__lower_expr(ls, a[2]),
                                         ascInt64)
                                  : i64(50);
  asc__irval endp = na > 3 && a[3] ? truthy(ls, asc__lower_expr(ls, a[3]))
                                   : asc__irv_int(ascBool, 1);
  asc__irval div, step, idx[1], v, last;
  asc__irblock *save;
  asc__irins *st, *ifi;
  int32_t r;
  asc__lower_raise_if(ls, op2(ls, ASC_IR_LT, ascInt64, num, i64(0)),
                      ASC_KEXC_VALUE_ERROR,
                      "Number of samples, {}, must be non-negative.", num,
                      i64(0));
  div = sel(ls, endp, op2(ls, ASC_IR_SUB, ascInt64, num, i64(1)), num);
  step = op2(ls, ASC_IR_DIV, ascFloat64,
             op2(ls, ASC_IR_SUB, ascFloat64, stop, start),
             conv(ls, op2(ls, ASC_IR_MAX, ascInt64, div, i64(1)),
                  ascFloat64));
  r = asc__lower_alloc_array(ls, dt, 1, &num);
  save = asc__lower_open_nest(ls, &num, 1, idx);
  v = op2(ls, ASC_IR_ADD, ascFloat64, start,
          op2(ls, ASC_IR_MUL, ascFloat64, conv(ls, idx[0], ascFloat64),
              step));
  v = conv(ls, v, dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(r);
  st->args[1] = idx[0];
  st->args[2] = v;
  ls->cur = save;
  last = op2(ls, ASC_IR_AND, ascBool, endp,
             op2(ls, ASC_IR_GT, ascInt64, num, i64(1)));
  ifi = emit(ls, ASC_IR_IF, -1, 1);
  ifi->args[0] = last;
  save = ls->cur;
  ls->cur = &ifi->body[0];
  v = conv(ls, stop, dt);
  last = op2(ls, ASC_IR_SUB, ascInt64, num, i64(1));
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(r);
  st->args[1] = last;
  st->args[2] = v;
  ls->cur = save;
  return r;
}

static bool is_small_float(int dt);

/* The operands of a matrix product. */
static void product_operands(const asc__ast_expr *e, const asc__ast_expr **x,
                             const asc__ast_expr **y) {
  if (e->kind == ASC_EXPR_BINARY) {
    *x = e->u.binary.lhs;
    *y = e->u.binary.rhs;
  } else {
    *x = e->u.call.rargs[0];
    *y = e->u.call.rargs[1];
  }
}

/* x @ y with x and y 1-D or 2-D, not both 1-D: a new array, each element
 * a sum over the shared axis in C order (small floats summed in float64,
 * as the reductions are; docs/arrays.md). */
static int32_t matmul(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *x, *y;
  asc__lview A, B;
  asc__irval shape[2], idx[2], pidx[1], ia[2], ib[2], k, kb, v;
  asc__irblock *psave, *outer;
  asc__irins *st;
  int dt = ty(e)->dtype, nd = ty(e)->ndim;
  int adt = is_small_float(dt) ? ascFloat64 : dt;
  int32_t r, acc, la, lb;
  product_operands(e, &x, &y);
  asc__lower_view(ls, x, &A);
  asc__lower_view(ls, y, &B);
  k = A.shape[A.nd - 1];
  kb = B.shape[0];
  asc__lower_raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, k, kb),
                      ASC_KEXC_VALUE_ERROR,
                      "matmul: Input operand 1 has a mismatch in its core "
                      "dimension 0, with gufunc signature "
                      "(n?,k),(k,m?)->(n?,m?) (size {} is different from {})",
                      kb, k);
  nd = 0;
  if (A.nd == 2)
    shape[nd++] = A.shape[0];
  if (B.nd == 2)
    shape[nd++] = B.shape[1];
  r = asc__lower_alloc_array(ls, dt, nd, shape);
  outer = ls->cur;
  if ((dt == ascFloat32 || dt == ascFloat64) &&
      ls->f->regs[A.t].ty.dtype == dt && ls->f->regs[B.t].ty.dtype == dt) {
    /* the runtime's BLAS first (asc_krt.gemm); the loops below only when
     * it did nothing (docs/arrays.md) */
    int32_t status = newreg(ls, ascInt32, "mm.blas");
    asc__irins *g = emit(ls, ASC_IR_GEMM, status, 14), *ifi;
    asc__irval one = i64(1), cond;
    g->args[0] = asc__irv_reg(r);
    g->args[1] = asc__irv_reg(A.t);
    g->args[2] = A.off;
    g->args[3] = A.nd == 2 ? A.stride[0] : i64(0);
    g->args[4] = A.stride[A.nd - 1];
    g->args[5] = asc__irv_reg(B.t);
    g->args[6] = B.off;
    g->args[7] = B.stride[0];
    g->args[8] = B.nd == 2 ? B.stride[1] : one;
    g->args[9] = A.nd == 2 ? A.shape[0] : one;
    g->args[10] = B.nd == 2 ? B.shape[1] : one;
    g->args[11] = k;
    g->args[12] = B.nd == 2 ? B.shape[1] : one;
    g->args[13] = one;
    cond = op2(ls, ASC_IR_NE, ascInt32, asc__irv_reg(status),
               asc__irv_int(ascInt32, 0));
    ifi = emit(ls, ASC_IR_IF, -1, 1);
    ifi->args[0] = cond;
    ls->cur = &ifi->body[0];
  }
  (void)asc__lower_open_nest(ls, shape, nd, idx);
  acc = newreg(ls, adt, "mm.acc");
  mov(ls, acc, conv(ls, i64(0), adt));
  psave = asc__lower_open_nest(ls, &k, 1, pidx);
  if (A.nd == 2) {
    ia[0] = idx[0];
    ia[1] = pidx[0];
  } else {
    ia[0] = pidx[0];
  }
  ib[0] = pidx[0];
  if (B.nd == 2)
    ib[1] = idx[nd - 1];
  {
    asc__irval oa = asc__lower_elem_offset(ls, &A, ia, A.nd);
    asc__irval ob = asc__lower_elem_offset(ls, &B, ib, B.nd);
    asc__irins *l;
    la = newreg(ls, ls->f->regs[A.t].ty.dtype, NULL);
    l = emit(ls, ASC_IR_LOAD, la, 2);
    l->args[0] = asc__irv_reg(A.t);
    l->args[1] = oa;
    lb = newreg(ls, ls->f->regs[B.t].ty.dtype, NULL);
    l = emit(ls, ASC_IR_LOAD, lb, 2);
    l->args[0] = asc__irv_reg(B.t);
    l->args[1] = ob;
  }
  mov(ls, acc,
      op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
          op2(ls, ASC_IR_MUL, adt, conv(ls, asc__irv_reg(la), adt),
              conv(ls, asc__irv_reg(lb), adt))));
  ls->cur = psave;
  v = conv(ls, asc__irv_reg(acc), dt);
  {
    asc__lview w;
    asc__irval off;
    asc__lower_whole_tensor(ls, r, &w);
    off = asc__lower_elem_offset(ls, &w, idx, nd);
    st = emit(ls, ASC_IR_STORE, -1, 3);
    st->args[0] = asc__irv_reg(r);
    st->args[1] = off;
    st->args[2] = v;
  }
  ls->cur = outer;
  return r;
}

asc__irval asc__lower_dot(lstate *ls, const asc__ast_expr *e) {
  /* np.dot(x, y) of two vectors, as the reduction lowers it */
  asc__ast_expr *call = asc__arena_alloc(ls->c, sizeof *call);
  asc__ast_expr **args = asc__arena_alloc(ls->c, sizeof *args * 2);
  *call = *e;
  call->kind = ASC_EXPR_CALL;
  memset(&call->u, 0, sizeof call->u);
  args[0] = e->u.binary.lhs;
  args[1] = e->u.binary.rhs;
  call->u.call.args = args;
  call->u.call.nargs = 2;
  call->u.call.rargs = args;
  call->u.call.nrargs = 2;
  call->u.call.builtin = asc__builtin_get(ASC_BI_NP_DOT);
  if (is_tensor(e))
    return asc__irv_reg(matmul(ls, e));
  return asc__lower_reduce(ls, call);
}

/* The C-order offsets of an array of shape[0..nd). */
void asc__lower_c_strides(lstate *ls, const asc__irval *shape, int nd,
                          asc__irval *cs) {
  asc__irval run = i64(1);
  for (int k = nd - 1; k >= 0; k--) {
    cs[k] = run;
    run = mul(ls, run, shape[k]);
  }
}

asc__irval asc__lower_load_at(lstate *ls, const asc__lview *v,
                              const asc__irval *idx, int nd) {
  asc__irval off = asc__lower_elem_offset(ls, v, idx, nd);
  int32_t d = newreg(ls, ls->f->regs[v->t].ty.dtype, NULL);
  asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
  l->args[0] = asc__irv_reg(v->t);
  l->args[1] = off;
  return asc__irv_reg(d);
}

void asc__lower_store_at(lstate *ls, int32_t t, asc__irval off, asc__irval v) {
  asc__irins *st;
  v = conv(ls, v, ls->f->regs[t].ty.dtype); /* before the store */
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = off;
  st->args[2] = v;
}

asc__irval asc__lower_dot_idx(lstate *ls, const asc__irval *idx,
                              const asc__irval *cs, int nd) {
  asc__irval off = i64(0);
  for (int k = 0; k < nd; k++)
    off = add(ls, off, mul(ls, idx[k], cs[k]));
  return off;
}

/* The start of np.cumsum's running sum in dt: -0.0 for floating point,
 * the identity of IEEE addition (-0.0 + x is x for every x, where 0.0 +
 * -0.0 is 0.0), so the first sum is the first element exactly, as numpy
 * stores it; a complex start is -0.0 in both parts. */
static asc__irval cumsum_start(lstate *ls, int dt) {
  if (asc__dt_is_complex(dt))
    return asc__lower_cmplx(ls, dt, asc__irv_float(ascFloat64, -0.0),
                            asc__irv_float(ascFloat64, -0.0));
  if (asc__dt_is_float(dt))
    return asc__irv_float(dt, -0.0);
  return conv(ls, i64(0), dt);
}

/* A new 1-D array of dt holding the elements of view in in C order
 * (ravel's copy, flatten); with running sums when sum (np.cumsum). */
static int32_t flat_copy(lstate *ls, const asc__lview *in, int dt,
                         bool sum) {
  asc__irval n = asc__lower_view_size(ls, in), idx[ASC_MAX_DIMS];
  asc__irval cs[ASC_MAX_DIMS], x;
  asc__irblock *save;
  int32_t r = asc__lower_alloc_array(ls, dt, 1, &n), acc = -1;
  asc__lower_c_strides(ls, in->shape, in->nd, cs);
  if (sum) {
    acc = newreg(ls, dt, "cumsum");
    mov(ls, acc, cumsum_start(ls, dt));
  }
  save = asc__lower_open_nest(ls, in->shape, in->nd, idx);
  x = conv(ls, asc__lower_load_at(ls, in, idx, in->nd), dt);
  if (sum) {
    mov(ls, acc, op2(ls, ASC_IR_ADD, dt, asc__irv_reg(acc), x));
    x = asc__irv_reg(acc);
  }
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, in->nd), x);
  ls->cur = save;
  return r;
}

/* np.cumsum(a, axis=None) / a.cumsum(axis=k): running sums in the
 * result's dtype, in order along the axis (numpy's order: exact for
 * integers, the same rounding for floats). */
static int32_t cumsum(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *ax = e->u.call.nrargs > 1 ? e->u.call.rargs[1] : NULL;
  int dt = ty(e)->dtype, axis;
  asc__lview in;
  asc__irval oshape[ASC_MAX_DIMS], oidx[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irval cs[ASC_MAX_DIMS], iidx[1], x;
  asc__irblock *save;
  int32_t r, acc;
  int64_t k;
  memset(oshape, 0, sizeof oshape); /* gcc -O3 cannot see it filled */
  asc__lower_view(ls, e->u.call.rargs[0], &in);
  if (ax == NULL || ax->kind == ASC_EXPR_NONE || in.nd == 1)
    return flat_copy(ls, &in, dt, true);
  k = ax->kind == ASC_EXPR_INT ? (int64_t)ax->u.ival
                               : -(int64_t)ax->u.unary.operand->u.ival;
  axis = (int)(k < 0 ? k + in.nd : k);
  r = asc__lower_alloc_array(ls, dt, in.nd, in.shape);
  asc__lower_c_strides(ls, in.shape, in.nd, cs);
  for (int j = 0, q = 0; j < in.nd; j++)
    if (j != axis)
      oshape[q++] = in.shape[j];
  save = asc__lower_open_nest(ls, oshape, in.nd - 1, oidx);
  acc = newreg(ls, dt, "cumsum");
  mov(ls, acc, cumsum_start(ls, dt));
  asc__lower_open_nest(ls, &in.shape[axis], 1, iidx);
  for (int j = 0, q = 0; j < in.nd; j++)
    idx[j] = j == axis ? iidx[0] : oidx[q++];
  x = conv(ls, asc__lower_load_at(ls, &in, idx, in.nd), dt);
  mov(ls, acc, op2(ls, ASC_IR_ADD, dt, asc__irv_reg(acc), x));
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, in.nd),
                      asc__irv_reg(acc));
  ls->cur = save;
  return r;
}

/* np.outer(a, b) of 1-D arrays: out[i, j] = a[i] * b[j] in the
 * promoted dtype. */
static int32_t outer(lstate *ls, const asc__ast_expr *e) {
  asc__lview A, B;
  asc__irval shape[2], idx[2], cs[2], x, y;
  asc__irblock *save;
  int dt = ty(e)->dtype;
  int32_t r;
  asc__lower_view(ls, e->u.call.rargs[0], &A);
  asc__lower_view(ls, e->u.call.rargs[1], &B);
  shape[0] = A.shape[0];
  shape[1] = B.shape[0];
  r = asc__lower_alloc_array(ls, dt, 2, shape);
  asc__lower_c_strides(ls, shape, 2, cs);
  save = asc__lower_open_nest(ls, shape, 2, idx);
  x = conv(ls, asc__lower_load_at(ls, &A, idx, 1), dt);
  y = conv(ls, asc__lower_load_at(ls, &B, idx + 1, 1), dt);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, 2),
                      op2(ls, ASC_IR_MUL, dt, x, y));
  ls->cur = save;
  return r;
}

/* A new array holding e: a creation call or an array expression. */
static int32_t materialize(lstate *ls, const asc__ast_expr *e) {
  asc__type *t = ty(e);
  const asc__builtin *b =
      e->kind == ASC_EXPR_CALL ? e->u.call.builtin : NULL;
  asc__ast_expr *const *a = b ? e->u.call.rargs : NULL;
  asc__irval shape[ASC_MAX_DIMS], v = i64(0);
  asc__lview src;
  asc__ewctx ew;
  int32_t r;
  int dt = t->dtype, nd = t->ndim;
  if (is_matmul(e))
    return matmul(ls, e);
  if (asc__lower_is_fancy(e))
    return asc__lower_gather(ls, e);
  if (b != NULL && e->u.call.callee == NULL) {
    switch (b->id) {
    case ASC_BI_NP_RAVEL:
    case ASC_BI_NP_FLATTEN:
      asc__lower_view(ls, a[0], &src);
      return flat_copy(ls, &src, dt, false);
    case ASC_BI_NP_CUMSUM:
      return cumsum(ls, e);
    case ASC_BI_NP_OUTER:
      return outer(ls, e);
    default:
      break;
    }
  }
  if (b == NULL || !asc__builtin_is_creation(b->id)) {
    memset(&ew, 0, sizeof ew);
    asc__lower_collect(ls, &ew, e);
    return asc__lower_materialize_ew(ls, e, &ew);
  }
  switch (b->id) {
  case ASC_BI_NP_ARANGE:
    return arange(ls, e, dt);
  case ASC_BI_NP_LINSPACE:
    return linspace(ls, e, dt);
  case ASC_BI_NP_EMPTY:
  case ASC_BI_NP_ZEROS:
  case ASC_BI_NP_ONES:
  case ASC_BI_NP_FULL:
    shape_vals(ls, a[0], nd, shape);
    if (b->id == ASC_BI_NP_FULL)
      v = asc__lower_expr(ls, a[1]);
    break;
  case ASC_BI_NP_EYE:
  case ASC_BI_NP_IDENTITY:
    shape[0] = conv(ls, asc__lower_expr(ls, a[0]), ascInt64);
    shape[1] = b->id == ASC_BI_NP_EYE && a[1] != NULL &&
                       a[1]->kind != ASC_EXPR_NONE
                   ? conv(ls, asc__lower_expr(ls, a[1]), ascInt64)
                   : shape[0];
    if (b->id == ASC_BI_NP_EYE && a[2] != NULL)
      v = conv(ls, asc__lower_expr(ls, a[2]), ascInt64);
    break;
  default: /* *_like, copy, astype: the shape of an array */
    asc__lower_view(ls, a[0], &src);
    for (int k = 0; k < nd; k++)
      shape[k] = src.shape[k];
    if (b->id == ASC_BI_NP_FULL_LIKE)
      v = asc__lower_expr(ls, a[1]);
    break;
  }
  r = asc__lower_alloc_array(ls, dt, nd, shape);
  switch (b->id) {
  case ASC_BI_NP_ZEROS:
  case ASC_BI_NP_ZEROS_LIKE:
    fill(ls, r, i64(0));
    break;
  case ASC_BI_NP_ONES:
  case ASC_BI_NP_ONES_LIKE:
    fill(ls, r, i64(1));
    break;
  case ASC_BI_NP_FULL:
  case ASC_BI_NP_FULL_LIKE:
    fill(ls, r, v);
    break;
  case ASC_BI_NP_EYE:
  case ASC_BI_NP_IDENTITY:
    eye_fill(ls, r, v);
    break;
  case ASC_BI_NP_COPY:
  case ASC_BI_NP_ASTYPE: {
    asc__lview w;
    asc__lower_whole_tensor(ls, r, &w);
    store_nest(ls, NULL, &w, a[0], -1);
    break;
  }
  default: /* empty: as it comes */
    break;
  }
  return r;
}

/* dst[...] (op)= tmp, where tmp holds value (of value's type). */
static void copy_from(lstate *ls, const asc__ast_expr *where,
                      asc__lview *dst, const asc__ast_expr *value,
                      int32_t tmp, int op) {
  /* a name only the lowering knows, bound to tmp, stands for value */
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
  store_nest(ls, where, dst, x, op);
}

static bool is_new_array(lstate *ls, const asc__ast_expr *e) {
  const asc__builtin *b;
  if (!is_tensor(e))
    return false;
  switch (e->kind) {
  case ASC_EXPR_BINARY:
  case ASC_EXPR_UNARY:
  case ASC_EXPR_COMPARE:
    return true;
  case ASC_EXPR_SUBSCRIPT:
    return asc__lower_is_fancy(e);
  case ASC_EXPR_CALL:
    b = e->u.call.builtin;
    return b != NULL && e->u.call.callee == NULL &&
           (asc__builtin_is_creation(b->id) ||
            asc__builtin_is_reduction(b->id) || b->id == ASC_BI_NP_DOT ||
            (makes_array(b->id) && !asc__lower_is_view(ls, e)) ||
            asc__builtin_is_elementwise(e));
  default:
    return false;
  }
}

/* The register of the name target binds to arrays the kernel creates:
 * one per name, so that every use of the name, in loops too, reads the
 * array it holds now. */
static int32_t name_reg(lstate *ls, const asc__ast_expr *target,
                        const asc__type *t) {
  const asc__sym *s = target->u.name.sym;
  int32_t r = asc__lower_lookup(ls, s);
  if (r >= 0) {
    for (int k = 0; k < ls->narr; k++)
      if (ls->arr_regs[k] == r) {
        if (ls->arr_pfors[k] != ls->pfors)
          asc__diag_fatal(ls->c, target->loc,
                          "'%s' holds an array made outside this parallel "
                          "loop; an array made in each iteration needs a "
                          "name of its own",
                          s->name);
        return r;
      }
    asc__diag_fatal(ls->c, target->loc,
                    "'%s' names %s here; a name that holds a new array "
                    "the kernel makes cannot also name another array (use "
                    "another name, or write into it: %s[...] = ...)",
                    s->name,
                    ls->f->regs[r].param ? "a parameter's array"
                                         : "another array",
                    s->name);
  }
  if (asc__lower_sym_view(ls, s) != NULL)
    asc__diag_fatal(ls->c, target->loc,
                    "'%s' names a view here; a name that holds a new "
                    "array the kernel makes cannot also name a view (use "
                    "another name)",
                    s->name);
  r = heap_reg(ls, t->dtype, t->ndim, s->name);
  ls->arr_regs = asc__arena_grow(ls->c, ls->arr_regs, ls->narr, &ls->caparr,
                                 sizeof *ls->arr_regs, 8);
  ls->arr_pfors = asc__arena_grow(ls->c, ls->arr_pfors, ls->narr,
                                  &ls->caparr2, sizeof *ls->arr_pfors, 8);
  ls->arr_regs[ls->narr] = r;
  ls->arr_pfors[ls->narr] = ls->pfors;
  ls->narr++;
  asc__lower_bind(ls, s, r);
  return r;
}

int32_t asc__lower_result_array(lstate *ls, const asc__ast_expr *e,
                                const int32_t *taken, int ntaken) {
  if (e->kind == ASC_EXPR_NAME && e->u.name.sym != NULL) {
    int32_t r = asc__lower_lookup(ls, e->u.name.sym);
    bool dup = false;
    for (int k = 0; k < ntaken; k++)
      dup |= taken[k] == r;
    for (int k = 0; k < ls->narr && r >= 0 && !dup; k++)
      if (ls->arr_regs[k] == r)
        return r; /* the array the name holds now, handed over */
  }
  return materialize(ls, e);
}

int32_t asc__lower_materialize(lstate *ls, const asc__ast_expr *e) {
  return is_new_array(ls, e) ? materialize(ls, e) : -1;
}

bool asc__lower_new_array(lstate *ls, const asc__ast_expr *target,
                          const asc__ast_expr *value) {
  int32_t tmp, r;
  asc__irins *i;
  if (value == NULL || !is_new_array(ls, value))
    return false;
  tmp = materialize(ls, value);
  r = name_reg(ls, target, ty(value));
  if (!asc__irt_eq(ls->f->regs[r].ty, ls->f->regs[tmp].ty))
    asc__diag_fatal(ls->c, value->loc,
                    "this array's type differs from the one '%s' held "
                    "before",
                    target->u.name.sym->name);
  i = emit(ls, ASC_IR_SET_ARRAY, r, 1);
  i->args[0] = asc__irv_reg(tmp);
  return true;
}

void asc__lower_fill(lstate *ls, const asc__ast_expr *call) {
  asc__lview dst;
  asc__lower_view(ls, call->u.call.rargs[0], &dst);
  store_nest(ls, call->u.call.rargs[0], &dst, call->u.call.rargs[1], -1);
}

