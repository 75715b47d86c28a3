/*
 * Arrays in kernels (docs/arrays.md): views and whole-array statements.
 *
 * A view (a[1:-1, j], a.T, a[None, :]) is never a copy and never an IR
 * value: it is an element offset, a shape and strides in elements over
 * the register of the tensor it views, computed where the view is made.
 * Every load and store through it is a load or store of that tensor, so
 * the passes see the accesses as they would see hand-written indexing.
 *
 * A whole-array statement (out[1:-1] = 0.5 * (v[:-2] + v[2:]), b *= 2)
 * becomes one loop nest over the target's shape, whatever the number of
 * operators: the expression is lowered once per element by the ordinary
 * expression lowering, with each array operand read at the element's
 * index (ls->ew).  Scalar parts of the expression are evaluated once,
 * before the loops, as numpy evaluates them.  Operands broadcast as in
 * numpy: an axis of size 1 has stride 0.
 */
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

static bool is_tensor(const asc__ast_expr *e) {
  asc__type *t = ty(e);
  return t && t->kind == ASC_TY_TENSOR;
}

static asc__irval sel(lstate *ls, asc__irval c, asc__irval a, asc__irval b) {
  int32_t d;
  asc__irins *i;
  if (c.kind == ASC_IRV_CONST)
    return c.c.i ? a : b;
  d = newreg(ls, vdt(ls, a), NULL);
  i = emit(ls, ASC_IR_SELECT, d, 3);
  i->args[0] = c;
  i->args[1] = a;
  i->args[2] = b;
  return asc__irv_reg(d);
}

static asc__irval i64(int64_t v) { return asc__irv_int(ascInt64, v); }

static asc__irval add(lstate *ls, asc__irval a, asc__irval b) {
  return op2(ls, ASC_IR_ADD, ascInt64, a, b);
}

static asc__irval mul(lstate *ls, asc__irval a, asc__irval b) {
  return op2(ls, ASC_IR_MUL, ascInt64, a, b);
}

static bool same_val(asc__irval a, asc__irval b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == ASC_IRV_CONST)
    return a.c.i == b.c.i;
  return a.kind == ASC_IRV_REG && a.reg == b.reg;
}

/* if (cond) raise kind(msg, a, b) */
static void raise_if(lstate *ls, asc__irval cond, int kind, const char *msg,
                     asc__irval a, asc__irval b) {
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

/* ---------------------------------------------------------------- views */

static void whole_tensor(lstate *ls, int32_t t, asc__lview *v) {
  memset(v, 0, sizeof *v);
  v->t = t;
  v->nd = ls->f->regs[t].ty.ndim;
  v->off = i64(0);
  for (int k = 0; k < v->nd; k++) {
    int32_t d = newreg(ls, ascInt64, NULL);
    asc__irins *i = emit(ls, ASC_IR_STRIDE, d, 1);
    i->args[0] = asc__irv_reg(t);
    i->aux = k;
    v->shape[k] = asc__lower_dim_of(ls, t, k);
    v->stride[k] = asc__irv_reg(d);
    v->src[k] = (int8_t)k;
  }
}

/* An integer index into an axis of size n: from the end when negative
 * (numpy), checked when boundscheck is on. */
static asc__irval axis_index(lstate *ls, const asc__ast_expr *x, asc__irval n,
                             int axis) {
  asc__irval v = conv(ls, asc__lower_expr(ls, x), ascInt64), given = v;
  int64_t lb;
  if (v.kind == ASC_IRV_CONST ? v.c.i < 0
                              : !(asc__lower_bound(ls, x, &lb) && lb >= 0))
    v = sel(ls, op2(ls, ASC_IR_LT, ascInt64, v, i64(0)), add(ls, v, n), v);
  if (ls->boundscheck)
    raise_if(ls,
             op2(ls, ASC_IR_OR, ascBool,
                 op2(ls, ASC_IR_LT, ascInt64, v, i64(0)),
                 op2(ls, ASC_IR_GE, ascInt64, v, n)),
             ASC_KEXC_INDEX_ERROR,
             asc__arena_printf(ls->c,
                               "index {} is out of bounds for axis %d with "
                               "size {}",
                               axis),
             given, n);
  return v;
}

/* Python's slice.indices(n): the first index and the length of
 * lo:hi:step over an axis of size n. */
static void slice_axis(lstate *ls, const asc__ast_expr *s, asc__irval n,
                       asc__irval *start, asc__irval *len,
                       asc__irval *step) {
  const asc__ast_expr *lo = s->u.slice.lower, *hi = s->u.slice.upper,
                      *st = s->u.slice.step;
  asc__irval pos, lo_clamp, hi_clamp, a, b, span, neg;
  if (lo && lo->kind == ASC_EXPR_NONE)
    lo = NULL;
  if (hi && hi->kind == ASC_EXPR_NONE)
    hi = NULL;
  if (st && st->kind == ASC_EXPR_NONE)
    st = NULL;
  *step = st ? conv(ls, asc__lower_expr(ls, st), ascInt64) : i64(1);
  raise_if(ls, op2(ls, ASC_IR_EQ, ascInt64, *step, i64(0)),
           ASC_KEXC_VALUE_ERROR, "slice step cannot be zero", i64(0),
           i64(0));
  pos = op2(ls, ASC_IR_GT, ascInt64, *step, i64(0));
  lo_clamp = sel(ls, pos, i64(0), i64(-1));
  hi_clamp = sel(ls, pos, n, add(ls, n, i64(-1)));
  if (lo == NULL) {
    a = sel(ls, pos, i64(0), add(ls, n, i64(-1)));
  } else {
    asc__irval x = conv(ls, asc__lower_expr(ls, lo), ascInt64);
    int64_t lb;
    if (x.kind == ASC_IRV_CONST ? x.c.i >= 0
                                : (asc__lower_bound(ls, lo, &lb) && lb >= 0))
      a = op2(ls, ASC_IR_MIN, ascInt64, x, hi_clamp);
    else
      a = sel(ls, op2(ls, ASC_IR_LT, ascInt64, x, i64(0)),
              op2(ls, ASC_IR_MAX, ascInt64, add(ls, x, n), lo_clamp),
              op2(ls, ASC_IR_MIN, ascInt64, x, hi_clamp));
  }
  if (hi == NULL) {
    b = sel(ls, pos, n, i64(-1));
  } else {
    asc__irval x = conv(ls, asc__lower_expr(ls, hi), ascInt64);
    b = sel(ls, op2(ls, ASC_IR_LT, ascInt64, x, i64(0)),
            op2(ls, ASC_IR_MAX, ascInt64, add(ls, x, n), lo_clamp),
            op2(ls, ASC_IR_MIN, ascInt64, x, hi_clamp));
  }
  /* len = max(0, ceil((b - a) / step)) */
  span = sel(ls, pos, op2(ls, ASC_IR_SUB, ascInt64, b, a),
             op2(ls, ASC_IR_SUB, ascInt64, a, b));
  neg = sel(ls, pos, *step, op1(ls, ASC_IR_NEG, ascInt64, *step));
  *len = op2(ls, ASC_IR_MAX, ascInt64, i64(0),
             op2(ls, ASC_IR_FLOORDIV, ascInt64,
                 add(ls, span, add(ls, neg, i64(-1))), neg));
  *start = a;
}

static const asc__lview *bound_view(lstate *ls, const asc__ast_expr *e) {
  if (e->kind != ASC_EXPR_NAME || e->u.name.sym == NULL)
    return NULL;
  return asc__lower_sym_view(ls, e->u.name.sym);
}

bool asc__lower_is_view(lstate *ls, const asc__ast_expr *e) {
  asc__type *t = ty(e);
  if (t == NULL || t->kind != ASC_TY_TENSOR)
    return false;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    return bound_view(ls, e) != NULL;
  case ASC_EXPR_SUBSCRIPT:
    return true;
  case ASC_EXPR_ATTR:
    return strcmp(e->u.attr.attr, "T") == 0;
  default:
    return false;
  }
}

void asc__lower_view(lstate *ls, const asc__ast_expr *e, asc__lview *v) {
  const asc__lview *b = bound_view(ls, e);
  if (b != NULL) {
    *v = *b;
    return;
  }
  if (e->kind == ASC_EXPR_ATTR && strcmp(e->u.attr.attr, "T") == 0) {
    asc__lview in;
    asc__lower_view(ls, e->u.attr.value, &in);
    *v = in;
    for (int k = 0; k < in.nd; k++) {
      v->shape[k] = in.shape[in.nd - 1 - k];
      v->stride[k] = in.stride[in.nd - 1 - k];
      v->src[k] = in.src[in.nd - 1 - k];
    }
    return;
  }
  if (e->kind == ASC_EXPR_SUBSCRIPT && is_tensor(e)) {
    const asc__ast_expr *ix = e->u.sub.index;
    const asc__ast_expr *const *elts =
        ix->kind == ASC_EXPR_TUPLE
            ? (const asc__ast_expr *const *)ix->u.tuple.elts
            : &ix;
    int n = ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.n : 1, axis = 0;
    asc__lview in;
    asc__lower_view(ls, e->u.sub.value, &in);
    memset(v, 0, sizeof *v);
    v->t = in.t;
    v->off = in.off;
    for (int i = 0; i < n; i++) {
      const asc__ast_expr *x = elts[i];
      if (x->kind == ASC_EXPR_NONE) { /* a new axis of size 1 */
        v->shape[v->nd] = i64(1);
        v->stride[v->nd] = i64(0);
        v->src[v->nd++] = -1;
        continue;
      }
      if (axis >= in.nd)
        asc__diag_fatal(ls->c, x->loc, "too many indices");
      if (x->kind == ASC_EXPR_SLICE) {
        asc__irval start, len, step;
        if (!x->u.slice.lower && !x->u.slice.upper && !x->u.slice.step) {
          v->shape[v->nd] = in.shape[axis]; /* ':' keeps the axis */
          v->stride[v->nd] = in.stride[axis];
          v->src[v->nd++] = in.src[axis];
        } else {
          slice_axis(ls, x, in.shape[axis], &start, &len, &step);
          v->off = add(ls, v->off, mul(ls, start, in.stride[axis]));
          v->shape[v->nd] = len;
          v->stride[v->nd] = mul(ls, in.stride[axis], step);
          v->src[v->nd++] = -1;
        }
      } else {
        asc__irval k = axis_index(ls, x, in.shape[axis], axis);
        v->off = add(ls, v->off, mul(ls, k, in.stride[axis]));
      }
      axis++;
    }
    for (; axis < in.nd; axis++) { /* the axes not named are whole */
      v->shape[v->nd] = in.shape[axis];
      v->stride[v->nd] = in.stride[axis];
      v->src[v->nd++] = in.src[axis];
    }
    return;
  }
  if (is_tensor(e)) {
    whole_tensor(ls, asc__lower_tensor_reg(ls, e), v);
    return;
  }
  asc__diag_fatal(ls->c, e->loc, "expected an array here");
}

asc__irval asc__lower_view_size(lstate *ls, const asc__lview *v) {
  asc__irval n = i64(1);
  for (int k = 0; k < v->nd; k++)
    n = mul(ls, n, v->shape[k]);
  return n;
}

/* The element offset of v[idx...] with one integer per axis. */
asc__irval asc__lower_view_offset(lstate *ls, const asc__lview *v,
                                  const asc__ast_expr *sub) {
  const asc__ast_expr *ix = sub->u.sub.index;
  const asc__ast_expr *const *elts =
      ix->kind == ASC_EXPR_TUPLE
          ? (const asc__ast_expr *const *)ix->u.tuple.elts
          : &ix;
  int n = ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.n : 1;
  asc__irval off = v->off;
  if (n != v->nd)
    asc__diag_fatal(ls->c, sub->loc, "expected %d indices", v->nd);
  for (int k = 0; k < n; k++)
    off = add(ls, off, mul(ls, axis_index(ls, elts[k], v->shape[k], k),
                           v->stride[k]));
  return off;
}

/* ------------------------------------------------- whole-array statements */

/* The array operands of expression e and its scalar parts, collected
 * before the loops (ls->ew is NULL then). */
static void collect(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e) {
  if (!is_tensor(e)) {
    asc__ewval *s;
    ew->scalars = asc__arena_grow(ls->c, ew->scalars, ew->nscalars,
                                  &ew->capscalars, sizeof *ew->scalars, 8);
    s = &ew->scalars[ew->nscalars++];
    s->e = e;
    s->v = asc__lower_expr(ls, e);
    return;
  }
  switch (e->kind) {
  case ASC_EXPR_BINARY:
    collect(ls, ew, e->u.binary.lhs);
    collect(ls, ew, e->u.binary.rhs);
    return;
  case ASC_EXPR_UNARY:
    collect(ls, ew, e->u.unary.operand);
    return;
  case ASC_EXPR_CALL:
    if (e->u.call.builtin && asc__builtin_is_elementwise(e)) {
      for (int k = 0; k < e->u.call.nrargs; k++)
        if (e->u.call.rargs[k])
          collect(ls, ew, e->u.call.rargs[k]);
      return;
    }
    break;
  case ASC_EXPR_NAME:
  case ASC_EXPR_SUBSCRIPT:
  case ASC_EXPR_ATTR: {
    asc__ewop *op;
    ew->ops = asc__arena_grow(ls->c, ew->ops, ew->nops, &ew->capops,
                              sizeof *ew->ops, 8);
    op = &ew->ops[ew->nops++];
    op->e = e;
    asc__lower_view(ls, e, &op->v);
    return;
  }
  default:
    break;
  }
  unsupported(ls, e->loc, "this array expression");
}

/* Broadcasts operand v against the loop shape: each of its axes is of
 * the shape's size (checked) or 1 (stride 0).  grow: the shape may take
 * the operand's size where it is 1 so far (no target). */
static void broadcast(lstate *ls, asc__lview *v, asc__irval *shape, int nd,
                      bool grow) {
  for (int k = 0; k < v->nd; k++) {
    int a = nd - v->nd + k;
    asc__irval s = v->shape[k], one, ok;
    if (s.kind == ASC_IRV_CONST && s.c.i == 1) {
      v->stride[k] = i64(0);
      continue;
    }
    if (grow)
      shape[a] = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, shape[a], i64(1)), s,
                     shape[a]);
    one = op2(ls, ASC_IR_EQ, ascInt64, s, i64(1));
    ok = op2(ls, ASC_IR_OR, ascBool, one,
             op2(ls, ASC_IR_EQ, ascInt64, s, shape[a]));
    raise_if(ls, op1(ls, ASC_IR_NOT, ascBool, ok), ASC_KEXC_VALUE_ERROR,
             asc__arena_printf(ls->c,
                               "operands could not be broadcast together: "
                               "size {} against size {} on axis %d",
                               a),
             s, shape[a]);
    v->stride[k] = sel(ls, one, i64(0), v->stride[k]);
  }
}

/* Are a and b the same elements in the same order? */
static bool same_view(const asc__lview *a, const asc__lview *b) {
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
static asc__irblock *open_nest(lstate *ls, const asc__irval *shape, int nd,
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

static asc__irval elem_offset(lstate *ls, const asc__lview *v,
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
    if (ew->ops[k].e == e) {
      const asc__lview *v = &ew->ops[k].v;
      asc__irval off = elem_offset(ls, v, ew->idx, ew->nd);
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
  asc__irblock *save = open_nest(ls, shape, dst->nd, idx);
  asc__ewctx *outer = ls->ew;
  int dt = ls->f->regs[dst->t].ty.dtype;
  asc__irins *st;
  ew->nd = dst->nd;
  ew->idx = idx;
  off = elem_offset(ls, dst, idx, dst->nd);
  ls->ew = ew;
  v = asc__lower_expr(ls, value);
  if (op >= 0) {
    int32_t d = newreg(ls, dt, NULL);
    /* loaded after the value's operands, which may be the target */
    asc__irins *ld = emit(ls, ASC_IR_LOAD, d, 2);
    asc__type *pt = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, dt),
                                    asc__ty_scalar(ls->c, vdt(ls, v)));
    int odt = asc__ty_concrete(ls->c, pt)->dtype;
    if (op == ASC_IR_DIV && !asc__dt_is_float(odt))
      odt = ascFloat64;
    ld->args[0] = asc__irv_reg(dst->t);
    ld->args[1] = off;
    v = op2(ls, op, odt, conv(ls, asc__irv_reg(d), odt), conv(ls, v, odt));
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
static void store_nest(lstate *ls, const asc__ast_expr *where,
                       asc__lview *dst, const asc__ast_expr *value, int op) {
  asc__ewctx ew;
  asc__irval shape[ASC_MAX_DIMS], same = asc__irv_int(ascBool, 1);
  asc__irval *own;
  memset(&ew, 0, sizeof ew);
  collect(ls, &ew, value);
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
    if (v->t == dst->t && !same_view(v, dst) &&
        !same_expr(ew.ops[k].e, where))
      asc__diag_fatal(ls->c, ew.ops[k].e->loc,
                      "this array expression reads the array it writes "
                      "through another view; numpy would copy it first, "
                      "which kernels do not do yet: write the result into "
                      "a separate array");
    for (int a = 0; a < v->nd; a++) {
      asc__irval s = v->shape[a], t = shape[dst->nd - v->nd + a];
      own[k * ASC_MAX_DIMS + a] = v->stride[a];
      if ((s.kind == ASC_IRV_CONST && s.c.i == 1) || same_val(s, t) ||
          (v->src[a] >= 0 && v->t == dst->t && v->src[a] == dst->src[a]))
        continue;
      same = op2(ls, ASC_IR_AND, ascBool, same,
                 op2(ls, ASC_IR_EQ, ascInt64, s, t));
    }
    broadcast(ls, v, shape, dst->nd, false);
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

bool asc__lower_array_assign(lstate *ls, const asc__ast_expr *target,
                             const asc__ast_expr *value) {
  asc__lview dst;
  asc__type *tt;
  if (target->kind != ASC_EXPR_SUBSCRIPT)
    return false;
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
  asc__lower_view(ls, target, &dst);
  store_nest(ls, target, &dst, value, op);
  return true;
}
