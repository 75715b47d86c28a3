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
#include <math.h>
#include <stdint.h>
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

static bool is_fancy(const asc__ast_expr *e);
static int32_t gather(lstate *ls, const asc__ast_expr *e);
static void fancy_store(lstate *ls, const asc__ast_expr *target,
                        const asc__ast_expr *value, int op);

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
  asc__irval pos, lo_clamp, hi_clamp, a, b;
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
  if (step->kind == ASC_IRV_CONST && step->c.i > -(INT64_C(1) << 62) &&
      step->c.i < (INT64_C(1) << 62)) {
    /* len = max(0, ceil((b - a) / step)): max(0, b - a) once folded for a
     * step of 1 */
    asc__irval span = sel(ls, pos, op2(ls, ASC_IR_SUB, ascInt64, b, a),
                          op2(ls, ASC_IR_SUB, ascInt64, a, b));
    asc__irval neg = sel(ls, pos, *step, op1(ls, ASC_IR_NEG, ascInt64, *step));
    *len = op2(ls, ASC_IR_MAX, ascInt64, i64(0),
               op2(ls, ASC_IR_FLOORDIV, ascInt64,
                   add(ls, span, add(ls, neg, i64(-1))), neg));
  } else {
    /* len = max(0, (b - a - 1) // step + 1) for a positive step and
     * max(0, (b - a + 1) // step + 1) for a negative one: the same
     * ceil((b - a) / step), where nothing overflows whatever the step
     * (|b - a| <= n + 1); above, span + |step| - 1 wraps when |step| is
     * near 2**63, and so does -step of -2**63 */
    *len = op2(ls, ASC_IR_MAX, ascInt64, i64(0),
               add(ls,
                   op2(ls, ASC_IR_FLOORDIV, ascInt64,
                       add(ls, op2(ls, ASC_IR_SUB, ascInt64, b, a),
                           sel(ls, pos, i64(-1), i64(1))),
                       *step),
                   i64(1)));
  }
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
    return !is_fancy(e);
  case ASC_EXPR_ATTR:
    return strcmp(e->u.attr.attr, "T") == 0;
  case ASC_EXPR_CALL:
    if (e->u.call.builtin == NULL || e->u.call.callee != NULL)
      return false;
    switch (e->u.call.builtin->id) {
    case ASC_BI_NP_RESHAPE:
    case ASC_BI_NP_TRANSPOSE:
    case ASC_BI_NP_FLIP:
      return true;
    case ASC_BI_NP_RAVEL:
      return asc__lower_is_contiguous(ls, e->u.call.rargs[0]);
    default:
      return false;
    }
  default:
    return false;
  }
}

/* Is array expression e known, when compiling, to be C-contiguous: an
 * array the kernel made, whole, or a reshape or ravel view? */
bool asc__lower_is_contiguous(lstate *ls, const asc__ast_expr *e) {
  if (e->kind == ASC_EXPR_NAME && e->u.name.sym != NULL) {
    int32_t r;
    if (bound_view(ls, e) != NULL)
      return false;
    r = asc__lower_lookup(ls, e->u.name.sym);
    for (int k = 0; r >= 0 && k < ls->narr; k++)
      if (ls->arr_regs[k] == r)
        return true;
    return false;
  }
  if (e->kind == ASC_EXPR_CALL && e->u.call.builtin != NULL &&
      e->u.call.callee == NULL)
    return e->u.call.builtin->id == ASC_BI_NP_RESHAPE ||
           (e->u.call.builtin->id == ASC_BI_NP_RAVEL &&
            asc__lower_is_contiguous(ls, e->u.call.rargs[0]));
  return false;
}

/* a.reshape(...): the same elements under a new C-order shape.  Like
 * numba, kernels reshape contiguous arrays only (numpy would copy the
 * others): a run-time check raises ValueError otherwise. */
static void reshape_view(lstate *ls, const asc__ast_expr *e, asc__lview *v) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int na = e->u.call.nrargs, nd = ty(e)->ndim, unknown = -1;
  asc__irval shape[ASC_MAX_DIMS], size, known = i64(1), ok, expect;
  asc__lview in;
  while (na > 1 && a[na - 1] == NULL) /* the unused parameter slots */
    na--;
  asc__lower_view(ls, a[0], &in);
  if (na == 2) {
    asc__type *st = ty(a[1]);
    if (st != NULL && st->kind == ASC_TY_TUPLE) {
      asc__lower_agg(ls, a[1], st, shape);
    } else if (a[1]->kind == ASC_EXPR_TUPLE) {
      for (int k = 0; k < nd; k++)
        shape[k] = asc__lower_expr(ls, a[1]->u.tuple.elts[k]);
    } else {
      shape[0] = asc__lower_expr(ls, a[1]);
    }
  } else {
    for (int k = 0; k < nd; k++)
      shape[k] = asc__lower_expr(ls, a[k + 1]);
  }
  for (int k = 0; k < nd; k++) {
    shape[k] = conv(ls, shape[k], ascInt64);
    if (shape[k].kind == ASC_IRV_CONST && shape[k].c.i == -1) {
      if (unknown >= 0)
        asc__diag_fatal(ls->c, e->loc, "can only specify one unknown "
                        "dimension");
      unknown = k;
      continue;
    }
    known = mul(ls, known, shape[k]);
  }
  size = asc__lower_view_size(ls, &in);
  if (unknown >= 0) {
    raise_if(ls, op2(ls, ASC_IR_EQ, ascInt64, known, i64(0)),
             ASC_KEXC_VALUE_ERROR,
             "cannot reshape array of size {} into a shape with an unknown "
             "dimension and a zero one", size, i64(0));
    shape[unknown] = op2(ls, ASC_IR_FLOORDIV, ascInt64, size, known);
    known = mul(ls, known, shape[unknown]);
  }
  raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, known, size),
           ASC_KEXC_VALUE_ERROR,
           "cannot reshape array of size {} into a shape of size {}", size,
           known);
  /* C-contiguous: each axis longer than 1 steps over the inner ones */
  ok = asc__irv_int(ascBool, 1);
  expect = i64(1);
  for (int k = in.nd - 1; k >= 0; k--) {
    asc__irval one = op2(ls, ASC_IR_EQ, ascInt64, in.shape[k], i64(1));
    asc__irval good = op2(ls, ASC_IR_EQ, ascInt64, in.stride[k], expect);
    ok = op2(ls, ASC_IR_AND, ascBool, ok,
             op2(ls, ASC_IR_OR, ascBool, one, good));
    expect = mul(ls, expect, in.shape[k]);
  }
  raise_if(ls, op1(ls, ASC_IR_NOT, ascBool, ok), ASC_KEXC_VALUE_ERROR,
           "reshape: kernels reshape contiguous arrays only, as numba "
           "(copy it first: a.copy().reshape(...))",
           i64(0), i64(0));
  memset(v, 0, sizeof *v);
  v->t = in.t;
  v->off = in.off;
  v->nd = nd;
  expect = i64(1);
  for (int k = nd - 1; k >= 0; k--) {
    v->shape[k] = shape[k];
    v->stride[k] = expect;
    v->src[k] = -1;
    expect = mul(ls, expect, shape[k]);
  }
}

void asc__lower_view(lstate *ls, const asc__ast_expr *e, asc__lview *v) {
  const asc__lview *b = bound_view(ls, e);
  if (b != NULL) {
    *v = *b;
    return;
  }
  if (e->kind == ASC_EXPR_CALL && asc__lower_is_view(ls, e)) {
    asc__lview in;
    int perm[ASC_MAX_DIMS];
    const asc__ast_expr *bad;
    switch (e->u.call.builtin->id) {
    case ASC_BI_NP_TRANSPOSE: /* the axes permuted */
      asc__lower_view(ls, e->u.call.rargs[0], &in);
      if (!asc__transpose_axes(e, in.nd, perm, &bad))
        asc__diag_fatal(ls->c, bad->loc, "transpose: bad axes");
      *v = in;
      for (int k = 0; k < in.nd; k++) {
        v->shape[k] = in.shape[perm[k]];
        v->stride[k] = in.stride[perm[k]];
        v->src[k] = in.src[perm[k]];
      }
      return;
    case ASC_BI_NP_FLIP: { /* the axes reversed: from the last element */
      bool axes[ASC_MAX_DIMS];
      asc__lower_view(ls, e->u.call.rargs[0], &in);
      if (!asc__flip_axes(e, in.nd, axes, &bad))
        asc__diag_fatal(ls->c, bad->loc, "flip: bad axis");
      *v = in;
      for (int k = 0; k < in.nd; k++) {
        if (!axes[k])
          continue;
        v->off = add(ls, v->off,
                     mul(ls,
                         op2(ls, ASC_IR_MAX, ascInt64, i64(0),
                             op2(ls, ASC_IR_SUB, ascInt64, in.shape[k],
                                 i64(1))),
                         in.stride[k]));
        v->stride[k] = op1(ls, ASC_IR_NEG, ascInt64, in.stride[k]);
        v->src[k] = -1;
      }
      return;
    }
    case ASC_BI_NP_RAVEL: /* contiguous: one axis of unit stride */
      asc__lower_view(ls, e->u.call.rargs[0], &in);
      memset(v, 0, sizeof *v);
      v->t = in.t;
      v->off = in.off;
      v->nd = 1;
      v->shape[0] = asc__lower_view_size(ls, &in);
      v->stride[0] = i64(1);
      v->src[0] = -1;
      return;
    default:
      reshape_view(ls, e, v);
      return;
    }
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
  if (e->kind == ASC_EXPR_SUBSCRIPT && is_tensor(e) && !is_fancy(e)) {
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
      if (x->kind == ASC_EXPR_SLICE && x->u.slice.ellipsis) {
        /* the axes the other entries do not name */
        int named = 0;
        for (int q = 0; q < n; q++)
          if (elts[q]->kind != ASC_EXPR_NONE &&
              !(elts[q]->kind == ASC_EXPR_SLICE && elts[q]->u.slice.ellipsis))
            named++;
        for (int q = 0; q < in.nd - named && axis < in.nd; q++, axis++) {
          v->shape[v->nd] = in.shape[axis];
          v->stride[v->nd] = in.stride[axis];
          v->src[v->nd++] = in.src[axis];
        }
        continue;
      }
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

/* A reduction along one axis inside a whole-array statement
 * (out[:] = a.sum(axis=1)): each element is a loop over that axis. */
typedef struct asc__ewred {
  const asc__ast_expr *call;
  asc__ewctx sub;                  /* the reduced expression's operands */
  asc__irval shape[ASC_MAX_DIMS];  /* the reduced expression's shape */
  int nd;
  int axis;
  bool keep;
} asc__ewred;

static void broadcast_ops(lstate *ls, asc__ewctx *ew, asc__irval *shape,
                          int nd);
static void empty_check(lstate *ls, asc__builtin_id id, asc__irval n);
static asc__irval reduce_loops(lstate *ls, const asc__ast_expr *call,
                               asc__ewctx *sub, const asc__irval *shape,
                               int nd, const asc__irval *fixed, int axis);

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
static asc__ewop *push_op(lstate *ls, asc__ewctx *ew,
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
         id == ASC_BI_NP_CUMSUM || id == ASC_BI_NP_OUTER ||
         asc__builtin_is_numpy_func(id);
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
static void collect(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e) {
  collect_in(ls, ew, e, false);
}

/* collect() of e, a part of a larger expression when nested. */
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
    asc__lower_view(ls, e, &push_op(ls, ew, e)->v); /* a.reshape(...) */
    return;
  }
  if (is_matmul(e) || is_fancy(e) ||
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
    whole_tensor(ls, t, &push_op(ls, ew, e)->v);
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
      broadcast_ops(ls, &red->sub, red->shape, red->nd);
      if (red->axis >= 0)
        empty_check(ls, e->u.call.builtin->id, red->shape[red->axis]);
      op = push_op(ls, ew, e);
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
    asc__lower_view(ls, e, &push_op(ls, ew, e)->v);
    return;
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
    raise_if(ls, op1(ls, ASC_IR_NOT, ascBool, ok), ASC_KEXC_VALUE_ERROR,
             asc__arena_printf(ls->c,
                               "operands could not be broadcast together: "
                               "size {} against size {} on axis %d",
                               a),
             s, shape[a]);
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
    broadcast(ls, &v, shape, nd, true);
  }
}

/* Broadcasts every operand of ew into the shape of all of them, computed
 * into shape[0..nd): an axis of size 1 reads with stride 0.  The shape is
 * known only after the last operand, so each operand's strides are set
 * against the final shape, not against the sizes seen so far (the first
 * operand of (3, 1) + (3, 3) sets axis 1 to its own size, which only the
 * second operand raises to 3). */
static void broadcast_ops(lstate *ls, asc__ewctx *ew, asc__irval *shape,
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
      *out = reduce_loops(ls, e, &red->sub, red->shape, red->nd, fixed,
                          red->axis);
      return true;
    } else if (ew->ops[k].e == e) {
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
    if (v->t == dst->t && !same_view(v, dst) &&
        !same_expr(ew->ops[k].e, where))
      return true;
    if (ew->ops[k].red != NULL)
      for (int q = 0; q < ew->ops[k].red->sub.nops; q++)
        if (ew->ops[k].red->sub.ops[q].v.t == dst->t)
          return true;
  }
  return false;
}

static int32_t materialize_ew(lstate *ls, const asc__ast_expr *e,
                              asc__ewctx *ew);
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

static void store_nest(lstate *ls, const asc__ast_expr *where,
                       asc__lview *dst, const asc__ast_expr *value, int op) {
  asc__ewctx ew;
  memset(&ew, 0, sizeof ew);
  collect(ls, &ew, value);
  if (is_tensor(value) && overlaps(&ew, dst, where)) {
    /* numpy's copy on overlap: the value into a new array first */
    int32_t tmp = materialize_ew(ls, value, &ew);
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
  if (is_fancy(target)) {
    fancy_store(ls, target, value, -1);
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
  if (is_fancy(target)) {
    fancy_store(ls, target, value, op);
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

static int32_t new_array(lstate *ls, int dt, int nd,
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
  int32_t t = new_array(ls, dt, 0, NULL);
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
  whole_tensor(ls, t, &w);
  save = open_nest(ls, w.shape, w.nd, idx);
  off = elem_offset(ls, &w, idx, w.nd);
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
  whole_tensor(ls, t, &w);
  save = open_nest(ls, w.shape, 2, idx);
  off = elem_offset(ls, &w, idx, 2);
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
static int32_t materialize_ew(lstate *ls, const asc__ast_expr *e,
                              asc__ewctx *ew) {
  asc__type *t = ty(e);
  asc__irval shape[ASC_MAX_DIMS];
  asc__lview w;
  int32_t r;
  broadcast_shape(ls, ew, shape, t->ndim);
  r = new_array(ls, t->dtype, t->ndim, shape);
  whole_tensor(ls, r, &w);
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
  raise_if(ls,
           op2(ls, ASC_IR_EQ, wt, step,
               fl ? asc__irv_float(ascFloat64, 0.0) : i64(0)),
           ASC_KEXC_ZERO_DIVISION_ERROR, "arange: the step is zero", i64(0),
           i64(0));
  if (fl) {
    asc__irval q = op2(ls, ASC_IR_DIV, ascFloat64,
                       op2(ls, ASC_IR_SUB, ascFloat64, stop, start), step);
    int32_t c = newreg(ls, ascFloat64, NULL);
    asc__irins *ci = emit(ls, ASC_IR_CALL, c, 1);
    ci->aux = ASC_INTR_CEIL;
    ci->args[0] = q;
    raise_if(ls, op1(ls, ASC_IR_NOT, ascBool,
                     op2(ls, ASC_IR_LT, ascFloat64, asc__irv_reg(c),
                         asc__irv_float(ascFloat64, 9.2e18))),
             ASC_KEXC_VALUE_ERROR, "arange: the length is not finite",
             i64(0), i64(0));
    n = conv(ls, asc__irv_reg(c), ascInt64);
  } else {
    /* ceil(d / s) == -((-d) // s) with Python's floor division */
    asc__irval d = op2(ls, ASC_IR_SUB, ascInt64, stop, start);
    n = op1(ls, ASC_IR_NEG, ascInt64,
            op2(ls, ASC_IR_FLOORDIV, ascInt64,
                op1(ls, ASC_IR_NEG, ascInt64, d), step));
  }
  n = op2(ls, ASC_IR_MAX, ascInt64, n, i64(0));
  r = new_array(ls, dt, 1, &n);
  save = open_nest(ls, &n, 1, idx);
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
  raise_if(ls, op2(ls, ASC_IR_LT, ascInt64, num, i64(0)),
           ASC_KEXC_VALUE_ERROR, "Number of samples, {}, must be non-negative.",
           num, i64(0));
  div = sel(ls, endp, op2(ls, ASC_IR_SUB, ascInt64, num, i64(1)), num);
  step = op2(ls, ASC_IR_DIV, ascFloat64,
             op2(ls, ASC_IR_SUB, ascFloat64, stop, start),
             conv(ls, op2(ls, ASC_IR_MAX, ascInt64, div, i64(1)),
                  ascFloat64));
  r = new_array(ls, dt, 1, &num);
  save = open_nest(ls, &num, 1, idx);
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
  raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, k, kb), ASC_KEXC_VALUE_ERROR,
           "matmul: Input operand 1 has a mismatch in its core dimension "
           "0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {} is "
           "different from {})",
           kb, k);
  nd = 0;
  if (A.nd == 2)
    shape[nd++] = A.shape[0];
  if (B.nd == 2)
    shape[nd++] = B.shape[1];
  r = new_array(ls, dt, nd, shape);
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
  (void)open_nest(ls, shape, nd, idx);
  acc = newreg(ls, adt, "mm.acc");
  mov(ls, acc, conv(ls, i64(0), adt));
  psave = open_nest(ls, &k, 1, pidx);
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
    asc__irval oa = elem_offset(ls, &A, ia, A.nd);
    asc__irval ob = elem_offset(ls, &B, ib, B.nd);
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
    whole_tensor(ls, r, &w);
    off = elem_offset(ls, &w, idx, nd);
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
static void c_strides(lstate *ls, const asc__irval *shape, int nd,
                      asc__irval *cs) {
  asc__irval run = i64(1);
  for (int k = nd - 1; k >= 0; k--) {
    cs[k] = run;
    run = mul(ls, run, shape[k]);
  }
}

static asc__irval load_at(lstate *ls, const asc__lview *v,
                          const asc__irval *idx, int nd) {
  asc__irval off = elem_offset(ls, v, idx, nd);
  int32_t d = newreg(ls, ls->f->regs[v->t].ty.dtype, NULL);
  asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
  l->args[0] = asc__irv_reg(v->t);
  l->args[1] = off;
  return asc__irv_reg(d);
}

static void store_at(lstate *ls, int32_t t, asc__irval off, asc__irval v) {
  asc__irins *st;
  v = conv(ls, v, ls->f->regs[t].ty.dtype); /* before the store */
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = off;
  st->args[2] = v;
}

static asc__irval dot_idx(lstate *ls, const asc__irval *idx,
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
  int32_t r = new_array(ls, dt, 1, &n), acc = -1;
  c_strides(ls, in->shape, in->nd, cs);
  if (sum) {
    acc = newreg(ls, dt, "cumsum");
    mov(ls, acc, cumsum_start(ls, dt));
  }
  save = open_nest(ls, in->shape, in->nd, idx);
  x = conv(ls, load_at(ls, in, idx, in->nd), dt);
  if (sum) {
    mov(ls, acc, op2(ls, ASC_IR_ADD, dt, asc__irv_reg(acc), x));
    x = asc__irv_reg(acc);
  }
  store_at(ls, r, dot_idx(ls, idx, cs, in->nd), x);
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
  r = new_array(ls, dt, in.nd, in.shape);
  c_strides(ls, in.shape, in.nd, cs);
  for (int j = 0, q = 0; j < in.nd; j++)
    if (j != axis)
      oshape[q++] = in.shape[j];
  save = open_nest(ls, oshape, in.nd - 1, oidx);
  acc = newreg(ls, dt, "cumsum");
  mov(ls, acc, cumsum_start(ls, dt));
  open_nest(ls, &in.shape[axis], 1, iidx);
  for (int j = 0, q = 0; j < in.nd; j++)
    idx[j] = j == axis ? iidx[0] : oidx[q++];
  x = conv(ls, load_at(ls, &in, idx, in.nd), dt);
  mov(ls, acc, op2(ls, ASC_IR_ADD, dt, asc__irv_reg(acc), x));
  store_at(ls, r, dot_idx(ls, idx, cs, in.nd), asc__irv_reg(acc));
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
  r = new_array(ls, dt, 2, shape);
  c_strides(ls, shape, 2, cs);
  save = open_nest(ls, shape, 2, idx);
  x = conv(ls, load_at(ls, &A, idx, 1), dt);
  y = conv(ls, load_at(ls, &B, idx + 1, 1), dt);
  store_at(ls, r, dot_idx(ls, idx, cs, 2), op2(ls, ASC_IR_MUL, dt, x, y));
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
  if (is_fancy(e))
    return gather(ls, e);
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
      if (asc__builtin_is_numpy_func(b->id))
        return asc__lower_numpy(ls, e);
      break;
    }
  }
  if (b == NULL || !asc__builtin_is_creation(b->id)) {
    memset(&ew, 0, sizeof ew);
    collect(ls, &ew, e);
    return materialize_ew(ls, e, &ew);
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
  r = new_array(ls, dt, nd, shape);
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
    whole_tensor(ls, r, &w);
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
    return is_fancy(e);
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

/* ------------------------------- boolean masks and integer-array indices */

/* x[m] with m a bool or integer array (not a view: a gather, or the
 * target of a masked store or a scatter). */
static bool is_fancy(const asc__ast_expr *e) {
  const asc__ast_expr *ix;
  asc__type *t;
  if (e->kind != ASC_EXPR_SUBSCRIPT || !is_tensor(e->u.sub.value))
    return false;
  ix = e->u.sub.index;
  if (ix->kind == ASC_EXPR_TUPLE || ix->kind == ASC_EXPR_SLICE ||
      ix->kind == ASC_EXPR_NONE)
    return false;
  t = ty(ix);
  return t != NULL && t->kind == ASC_TY_TENSOR;
}

static bool is_mask(const asc__ast_expr *e) {
  return ty(e->u.sub.index)->dtype == ascBool;
}

/* The index array of x[m] as operands in ew, broadcast into shape[0..nd)
 * (its own shape, computed here).  A new array first when it reads the
 * array the statement writes (x, NULL for none) other than element by
 * element. */
static void index_operands(lstate *ls, const asc__ast_expr *m,
                           const asc__lview *x, asc__ewctx *ew,
                           asc__irval *shape) {
  int nd = ty(m)->ndim;
  bool ov = false;
  memset(ew, 0, sizeof *ew);
  collect(ls, ew, m);
  for (int k = 0; x != NULL && k < ew->nops; k++) {
    if (ew->ops[k].v.t == x->t && !same_view(&ew->ops[k].v, x))
      ov = true;
    if (ew->ops[k].red != NULL)
      for (int q = 0; q < ew->ops[k].red->sub.nops; q++)
        if (ew->ops[k].red->sub.ops[q].v.t == x->t)
          ov = true;
  }
  if (ov) {
    int32_t tmp = materialize_ew(ls, m, ew);
    memset(ew, 0, sizeof *ew);
    whole_tensor(ls, tmp, &push_op(ls, ew, m)->v);
  }
  broadcast_ops(ls, ew, shape, nd);
}

/* m's value at idx[0..nd) */
static asc__irval index_value(lstate *ls, const asc__ast_expr *m,
                              asc__ewctx *ew, asc__irval *idx, int nd) {
  asc__ewctx *outer = ls->ew;
  asc__irval v;
  ew->nd = nd;
  ew->idx = idx;
  ls->ew = ew;
  v = asc__lower_expr(ls, m);
  ls->ew = outer;
  return v;
}

/* A mask's shape must be the array's (numpy's IndexError). */
static void mask_shape_check(lstate *ls, const asc__lview *x,
                             const asc__irval *ms) {
  for (int k = 0; k < x->nd; k++)
    if (!same_val(ms[k], x->shape[k]))
      raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, ms[k], x->shape[k]),
               ASC_KEXC_INDEX_ERROR,
               asc__arena_printf(ls->c,
                                 "boolean index did not match indexed array "
                                 "along axis %d; size of axis is {} but size "
                                 "of corresponding boolean axis is {}",
                                 k),
               x->shape[k], ms[k]);
}

/* The number of true elements of mask m over x's shape. */
static asc__irval mask_count(lstate *ls, const asc__ast_expr *m,
                             asc__ewctx *ew, const asc__lview *x) {
  asc__irval idx[ASC_MAX_DIMS], b;
  asc__irblock *save;
  int32_t n = newreg(ls, ascInt64, "mask.n");
  mov(ls, n, i64(0));
  save = open_nest(ls, x->shape, x->nd, idx);
  b = truthy(ls, index_value(ls, m, ew, idx, x->nd));
  mov(ls, n, add(ls, asc__irv_reg(n), conv(ls, b, ascInt64)));
  ls->cur = save;
  return asc__irv_reg(n);
}

/* Opens `if (cond)`; returns the block to restore. */
static asc__irblock *open_if(lstate *ls, asc__irval cond) {
  asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
  asc__irblock *save = ls->cur;
  i->args[0] = cond;
  ls->cur = &i->body[0];
  return save;
}

/* An integer index k into an axis of size n, numpy's: negative from the
 * end; outside [-n, n) an IndexError, always (numpy raises for integer
 * array indices whatever the settings). */
static asc__irval wrap_checked(lstate *ls, asc__irval k, asc__irval n) {
  asc__irval w;
  k = conv(ls, k, ascInt64);
  w = sel(ls, op2(ls, ASC_IR_LT, ascInt64, k, i64(0)), add(ls, k, n), k);
  raise_if(ls,
           op2(ls, ASC_IR_OR, ascBool, op2(ls, ASC_IR_LT, ascInt64, w, i64(0)),
               op2(ls, ASC_IR_GE, ascInt64, w, n)),
           ASC_KEXC_INDEX_ERROR,
           "index {} is out of bounds for axis 0 with size {}", k, n);
  return w;
}

/* x[m]: a new array.  A mask gives the elements where it is true, in C
 * order (1-D); an integer array i gives x[i[p], ...] for each p, of
 * shape i.shape + x.shape[1:]. */
static int32_t gather(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *m = e->u.sub.index;
  asc__lview x;
  asc__ewctx ew;
  asc__irval ms[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], cs[ASC_MAX_DIMS];
  asc__irblock *save;
  int dt = ty(e)->dtype, nd = ty(e)->ndim;
  int32_t r;
  asc__lower_view(ls, e->u.sub.value, &x);
  index_operands(ls, m, NULL, &ew, ms);
  if (is_mask(e)) {
    asc__irval n, b;
    asc__irblock *isave;
    int32_t pos;
    mask_shape_check(ls, &x, ms);
    n = mask_count(ls, m, &ew, &x);
    r = new_array(ls, dt, 1, &n);
    pos = newreg(ls, ascInt64, "mask.i");
    mov(ls, pos, i64(0));
    save = open_nest(ls, x.shape, x.nd, idx);
    b = truthy(ls, index_value(ls, m, &ew, idx, x.nd));
    isave = open_if(ls, b);
    store_at(ls, r, asc__irv_reg(pos), load_at(ls, &x, idx, x.nd));
    mov(ls, pos, add(ls, asc__irv_reg(pos), i64(1)));
    ls->cur = isave;
    ls->cur = save;
    return r;
  } else {
    int ni = ty(m)->ndim;
    asc__irval shape[ASC_MAX_DIMS], k, off;
    for (int q = 0; q < ni; q++)
      shape[q] = ms[q];
    for (int q = 1; q < x.nd; q++)
      shape[ni + q - 1] = x.shape[q];
    r = new_array(ls, dt, nd, shape);
    c_strides(ls, shape, nd, cs);
    save = open_nest(ls, shape, nd, idx);
    k = wrap_checked(ls, index_value(ls, m, &ew, idx, ni), x.shape[0]);
    off = add(ls, x.off, mul(ls, k, x.stride[0]));
    for (int q = 1; q < x.nd; q++)
      off = add(ls, off, mul(ls, idx[ni + q - 1], x.stride[q]));
    {
      int32_t d = newreg(ls, ls->f->regs[x.t].ty.dtype, NULL);
      asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
      l->args[0] = asc__irv_reg(x.t);
      l->args[1] = off;
      store_at(ls, r, dot_idx(ls, idx, cs, nd), asc__irv_reg(d));
    }
    ls->cur = save;
    return r;
  }
}

/* The value of x[...] op= v for old element value old. */
static asc__irval combine(lstate *ls, int dt, asc__irval old, asc__irval v,
                          int op) {
  asc__type *pt;
  int odt;
  if (op < 0)
    return v;
  pt = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, dt),
                       asc__ty_scalar(ls->c, vdt(ls, v)));
  odt = asc__ty_concrete(ls->c, pt)->dtype;
  if (op == ASC_IR_DIV && !asc__dt_is_float(odt) &&
      !asc__dt_is_complex(odt))
    odt = ascFloat64;
  if (op == ASC_IR_DIV) /* numpy's complex division */
    return asc__lower_div(ls, odt, conv(ls, old, odt), conv(ls, v, odt),
                          true);
  return op2(ls, op, odt, conv(ls, old, odt), conv(ls, v, odt));
}

/* x[m] = value or x[m] op= value (op >= 0), m a mask or an integer
 * array: numpy's masked store and scatter. */
static void fancy_store(lstate *ls, const asc__ast_expr *target,
                        const asc__ast_expr *value, int op) {
  const asc__ast_expr *m = target->u.sub.index;
  asc__lview x, v;
  asc__ewctx ew;
  asc__irval ms[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], sv = i64(0);
  asc__irblock *save;
  int dt;
  int32_t tmp = -1;
  bool arr = is_tensor(value);
  asc__lower_view(ls, target->u.sub.value, &x);
  dt = ls->f->regs[x.t].ty.dtype;
  index_operands(ls, m, &x, &ew, ms);
  if (arr) {
    /* the values first, in a new array when they read x */
    asc__ewctx vew;
    memset(&vew, 0, sizeof vew);
    collect(ls, &vew, value);
    if (vew.nops == 1 && vew.ops[0].red == NULL && vew.ops[0].e == value &&
        vew.ops[0].v.t != x.t) {
      v = vew.ops[0].v;
    } else {
      tmp = materialize_ew(ls, value, &vew);
      whole_tensor(ls, tmp, &v);
    }
    if (v.nd == 0) { /* a 0-d array: its one element */
      sv = load_at(ls, &v, idx, 0);
      arr = false;
    }
  } else {
    sv = asc__lower_expr(ls, value);
  }
  if (is_mask(target)) {
    asc__irval b, n, cur;
    asc__irblock *isave;
    int32_t pos = -1;
    mask_shape_check(ls, &x, ms);
    if (arr) {
      /* numpy: as many values as true elements, or one */
      asc__irval one;
      n = mask_count(ls, m, &ew, &x);
      one = op2(ls, ASC_IR_EQ, ascInt64, v.shape[0], i64(1));
      raise_if(ls,
               op2(ls, ASC_IR_AND, ascBool, op1(ls, ASC_IR_NOT, ascBool, one),
                   op2(ls, ASC_IR_NE, ascInt64, v.shape[0], n)),
               ASC_KEXC_VALUE_ERROR,
               "NumPy boolean array indexing assignment cannot assign {} "
               "input values to the {} output values where the mask is true",
               v.shape[0], n);
      v.stride[0] = sel(ls, one, i64(0), v.stride[0]);
      pos = newreg(ls, ascInt64, "mask.i");
      mov(ls, pos, i64(0));
    }
    save = open_nest(ls, x.shape, x.nd, idx);
    b = truthy(ls, index_value(ls, m, &ew, idx, x.nd));
    isave = open_if(ls, b);
    if (arr) {
      asc__irval p = asc__irv_reg(pos);
      cur = load_at(ls, &v, &p, 1);
      mov(ls, pos, add(ls, asc__irv_reg(pos), i64(1)));
    } else {
      cur = sv;
    }
    {
      asc__irval off = elem_offset(ls, &x, idx, x.nd), old = i64(0);
      if (op >= 0) {
        int32_t d = newreg(ls, dt, NULL);
        asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
        l->args[0] = asc__irv_reg(x.t);
        l->args[1] = off;
        old = asc__irv_reg(d);
      }
      store_at(ls, x.t, off, combine(ls, dt, old, cur, op));
    }
    ls->cur = isave;
    ls->cur = save;
  } else {
    /* x[i[p], ...] = value[p, ...] over i.shape + x.shape[1:]; with op,
     * numpy's x[i] = x[i] op value: every new value first, then the
     * stores (a repeated index takes the last) */
    int ni = ty(m)->ndim, nd = ni + x.nd - 1;
    asc__irval shape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS];
    int32_t vals = -1;
    int passes = op >= 0 ? 2 : 1;
    for (int q = 0; q < ni; q++)
      shape[q] = ms[q];
    for (int q = 1; q < x.nd; q++)
      shape[ni + q - 1] = x.shape[q];
    if (arr) {
      if (v.nd > nd)
        asc__diag_fatal(ls->c, value->loc,
                        "cannot broadcast a %d-dimensional array into a "
                        "%d-dimensional one", v.nd, nd);
      broadcast(ls, &v, shape, nd, false);
    }
    if (op >= 0) {
      vals = new_array(ls, dt, nd, shape);
      c_strides(ls, shape, nd, cs);
    }
    for (int pass = 0; pass < passes; pass++) {
      asc__irval k, off, cur;
      save = open_nest(ls, shape, nd, idx);
      k = wrap_checked(ls, index_value(ls, m, &ew, idx, ni), x.shape[0]);
      off = add(ls, x.off, mul(ls, k, x.stride[0]));
      for (int q = 1; q < x.nd; q++)
        off = add(ls, off, mul(ls, idx[ni + q - 1], x.stride[q]));
      if (op >= 0 && pass == 1) {
        int32_t d = newreg(ls, dt, NULL);
        asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
        l->args[0] = asc__irv_reg(vals);
        l->args[1] = dot_idx(ls, idx, cs, nd);
        store_at(ls, x.t, off, asc__irv_reg(d));
        ls->cur = save;
        continue;
      }
      cur = arr ? load_at(ls, &v, idx, nd) : sv;
      if (op >= 0) {
        int32_t d = newreg(ls, dt, NULL);
        asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
        l->args[0] = asc__irv_reg(x.t);
        l->args[1] = off;
        store_at(ls, vals, dot_idx(ls, idx, cs, nd),
                 combine(ls, dt, asc__irv_reg(d), cur, op));
      } else {
        store_at(ls, x.t, off, cur);
      }
      ls->cur = save;
    }
    if (vals >= 0) {
      asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
      fr->args[0] = asc__irv_reg(vals);
    }
  }
  if (tmp >= 0) {
    asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
    fr->args[0] = asc__irv_reg(tmp);
  }
}

/* ----------------------------------------------------------- reductions */

static bool is_small_float(int dt) {
  return dt == ascFloat16 || dt == ascBFloat16 || dt == ascFloat32;
}

/* The identities of min and max: the largest and smallest value of dt. */
static asc__irval extreme(int dt, bool largest) {
  switch (dt) {
  case ascBool: return asc__irv_int(dt, largest);
  case ascInt8: return asc__irv_int(dt, largest ? INT8_MAX : INT8_MIN);
  case ascInt16: return asc__irv_int(dt, largest ? INT16_MAX : INT16_MIN);
  case ascInt32: return asc__irv_int(dt, largest ? INT32_MAX : INT32_MIN);
  case ascInt64: return asc__irv_int(dt, largest ? INT64_MAX : INT64_MIN);
  case ascUInt8: return asc__irv_int(dt, largest ? UINT8_MAX : 0);
  case ascUInt16: return asc__irv_int(dt, largest ? UINT16_MAX : 0);
  case ascUInt32: return asc__irv_int(dt, largest ? UINT32_MAX : 0);
  case ascUInt64: return asc__irv_int(dt, largest ? -1 : 0);
  default: return asc__irv_float(dt, largest ? HUGE_VAL : -HUGE_VAL);
  }
}

enum { PASS_SUM, PASS_PROD, PASS_MIN, PASS_MAX, PASS_ANY, PASS_ALL,
       PASS_ARGMIN, PASS_ARGMAX, PASS_SQDEV, PASS_CSQDEV };

/* The real or imaginary part of a complex128 value. */
static asc__irval cpart(lstate *ls, asc__irval z, bool imag) {
  int32_t d = newreg(ls, ascFloat64, NULL);
  asc__irins *i = emit(ls, ASC_IR_CALL, d, 1);
  i->aux = imag ? ASC_INTR_CIMAG : ASC_INTR_CREAL;
  i->args[0] = z;
  return asc__irv_reg(d);
}

/* One loop over the reduced axes (all when axis < 0, else that one, the
 * others at fixed[]), folding each element of the call's argument into
 * acc (and idx for arg*); center: PASS_SQDEV's mean. */
static void pass(lstate *ls, const asc__ast_expr *call, asc__ewctx *sub,
                 const asc__irval *shape, int nd, const asc__irval *fixed,
                 int axis, int kind, int32_t acc, int32_t idx,
                 asc__irval center) {
  asc__irval ix[ASC_MAX_DIMS], x;
  asc__irblock *save = ls->cur;
  asc__ewctx *outer = ls->ew;
  int adt = ls->f->regs[acc].ty.dtype;
  int32_t count = -1;
  if (idx >= 0) {
    count = newreg(ls, ascInt64, "red.i");
    mov(ls, count, i64(0));
  }
  for (int k = 0; k < nd; k++) {
    if (axis >= 0 && k != axis) {
      ix[k] = fixed[k];
      continue;
    }
    {
      int32_t r = newreg(ls, ascInt64, "red");
      asc__irins *f = emit(ls, ASC_IR_FOR, r, 3);
      f->args[0] = i64(0);
      f->args[1] = shape[k];
      f->args[2] = i64(1);
      ls->cur = &f->body[0];
      ix[k] = asc__irv_reg(r);
    }
  }
  sub->idx = ix;
  sub->nd = nd;
  ls->ew = sub;
  if (call->u.call.builtin->id == ASC_BI_NP_DOT) {
    asc__irval a = conv(ls, asc__lower_expr(ls, call->u.call.rargs[0]), adt);
    asc__irval b = conv(ls, asc__lower_expr(ls, call->u.call.rargs[1]), adt);
    x = op2(ls, ASC_IR_MUL, adt, a, b);
  } else {
    x = asc__lower_expr(ls, call->u.call.rargs[0]);
  }
  ls->ew = outer;
  switch (kind) {
  case PASS_SUM:
    mov(ls, acc, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc), conv(ls, x, adt)));
    break;
  case PASS_PROD:
    mov(ls, acc, op2(ls, ASC_IR_MUL, adt, asc__irv_reg(acc), conv(ls, x, adt)));
    break;
  case PASS_SQDEV: {
    asc__irval d = op2(ls, ASC_IR_SUB, adt, conv(ls, x, adt), center);
    mov(ls, acc, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
                     op2(ls, ASC_IR_MUL, adt, d, d)));
    break;
  }
  case PASS_CSQDEV: { /* |x - mean|^2 of a complex x, summed in float64 */
    asc__irval d = op2(ls, ASC_IR_SUB, ascComplex128,
                       conv(ls, x, ascComplex128), center);
    asc__irval re = cpart(ls, d, false), im = cpart(ls, d, true);
    mov(ls, acc, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
                     op2(ls, ASC_IR_ADD, adt, op2(ls, ASC_IR_MUL, adt, re, re),
                         op2(ls, ASC_IR_MUL, adt, im, im))));
    break;
  }
  case PASS_ANY:
    mov(ls, acc, op2(ls, ASC_IR_OR, ascBool, asc__irv_reg(acc), truthy(ls, x)));
    break;
  case PASS_ALL:
    mov(ls, acc, op2(ls, ASC_IR_AND, ascBool, asc__irv_reg(acc), truthy(ls, x)));
    break;
  default: { /* min, max, argmin, argmax: a NaN wins, the first one */
    bool lt = kind == PASS_MIN || kind == PASS_ARGMIN;
    asc__irval a = asc__irv_reg(acc), better;
    x = conv(ls, x, adt);
    if (idx < 0 && (adt == ascFloat32 || adt == ascFloat64)) {
      /* one instruction, which redlanes can spread over vector lanes */
      mov(ls, acc, op2(ls, lt ? ASC_IR_PMIN : ASC_IR_PMAX, adt, a, x));
      break;
    }
    better = op2(ls, lt ? ASC_IR_LT : ASC_IR_GT, adt, x, a);
    if (asc__dt_is_float(adt))
      better = op2(ls, ASC_IR_OR, ascBool, better,
                   op2(ls, ASC_IR_AND, ascBool,
                       op2(ls, ASC_IR_NE, adt, x, x),
                       op2(ls, ASC_IR_EQ, adt, a, a)));
    if (idx >= 0) {
      asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
      asc__irblock *here = ls->cur;
      i->args[0] = better;
      ls->cur = &i->body[0];
      mov(ls, acc, x);
      mov(ls, idx, asc__irv_reg(count));
      ls->cur = here;
      mov(ls, count, add(ls, asc__irv_reg(count), i64(1)));
    } else {
      mov(ls, acc, sel(ls, better, x, a));
    }
    break;
  }
  }
  ls->cur = save;
}

/* min, max, argmin and argmax of n elements raise numpy's ValueError
 * when n is 0.  Along an axis, numpy raises when that axis is empty even
 * if the result has no element, so the check comes before the statement's
 * loops, not inside them. */
static void empty_check(lstate *ls, asc__builtin_id id, asc__irval n) {
  bool arg_ = id == ASC_BI_NP_ARGMIN || id == ASC_BI_NP_ARGMAX;
  bool lt = id == ASC_BI_NP_MIN || id == ASC_BI_NP_ARGMIN;
  if (!arg_ && !lt && id != ASC_BI_NP_MAX)
    return;
  raise_if(ls, op2(ls, ASC_IR_EQ, ascInt64, n, i64(0)), ASC_KEXC_VALUE_ERROR,
           arg_ ? (lt ? "attempt to get argmin of an empty sequence"
                      : "attempt to get argmax of an empty sequence")
                : (lt ? "zero-size array to reduction operation minimum "
                        "which has no identity"
                      : "zero-size array to reduction operation maximum "
                        "which has no identity"),
           i64(0), i64(0));
}

static asc__irval reduce_loops(lstate *ls, const asc__ast_expr *call,
                               asc__ewctx *sub, const asc__irval *shape,
                               int nd, const asc__irval *fixed, int axis) {
  asc__builtin_id id = call->u.call.builtin->id;
  asc__type *ct = ty(call);
  int rt = ct->dtype, edt, adt;
  asc__irval n = i64(1);
  int32_t acc, idx = -1;
  const asc__ast_expr *arg = call->u.call.rargs[0];
  edt = ty(arg)->dtype;
  for (int k = 0; k < nd; k++)
    if (axis < 0 || k == axis)
      n = mul(ls, n, shape[k]);
  switch (id) {
  case ASC_BI_NP_SUM:
  case ASC_BI_NP_PROD:
  case ASC_BI_NP_MEAN:
  case ASC_BI_NP_VAR:
  case ASC_BI_NP_STD:
  case ASC_BI_NP_DOT:
    /* small floats are summed in float64 (docs/arrays.md); the mean of
     * complex values for var/std in complex128 */
    adt = (id == ASC_BI_NP_VAR || id == ASC_BI_NP_STD) &&
                  asc__dt_is_complex(edt)
              ? ascComplex128
          : is_small_float(rt) ? ascFloat64
                               : rt;
    acc = newreg(ls, adt, "red.acc");
    mov(ls, acc, id == ASC_BI_NP_PROD ? conv(ls, i64(1), adt)
                                      : conv(ls, i64(0), adt));
    pass(ls, call, sub, shape, nd, fixed, axis,
         id == ASC_BI_NP_PROD ? PASS_PROD : PASS_SUM, acc, -1, i64(0));
    if (id == ASC_BI_NP_SUM || id == ASC_BI_NP_PROD || id == ASC_BI_NP_DOT)
      return conv(ls, asc__irv_reg(acc), rt);
    {
      asc__irval nf = conv(ls, n, adt);
      asc__irval mean = op2(ls, ASC_IR_DIV, adt, asc__irv_reg(acc), nf);
      asc__irval ddof, var;
      int32_t ss;
      if (id == ASC_BI_NP_MEAN)
        return conv(ls, mean, rt);
      if (asc__dt_is_complex(adt)) { /* var of complex values is real */
        adt = ascFloat64;
        ss = newreg(ls, adt, "red.ss");
        mov(ls, ss, conv(ls, i64(0), adt));
        pass(ls, call, sub, shape, nd, fixed, axis, PASS_CSQDEV, ss, -1,
             mean);
      } else {
        ss = newreg(ls, adt, "red.ss");
        mov(ls, ss, conv(ls, i64(0), adt));
        pass(ls, call, sub, shape, nd, fixed, axis, PASS_SQDEV, ss, -1, mean);
      }
      ddof = call->u.call.nrargs > 4 && call->u.call.rargs[4] != NULL &&
                     call->u.call.rargs[4]->kind != ASC_EXPR_NONE
                 ? conv(ls, asc__lower_expr(ls, call->u.call.rargs[4]),
                        ascInt64)
                 : i64(0);
      /* numpy divides by max(n - ddof, 0): inf (or nan) for ddof >= n */
      var = op2(ls, ASC_IR_DIV, adt, asc__irv_reg(ss),
                conv(ls, op2(ls, ASC_IR_MAX, ascInt64,
                             op2(ls, ASC_IR_SUB, ascInt64, n, ddof), i64(0)),
                     adt));
      if (id == ASC_BI_NP_STD) {
        int32_t d = newreg(ls, adt, NULL);
        asc__irins *i = emit(ls, ASC_IR_CALL, d, 1);
        i->aux = ASC_INTR_SQRT;
        i->args[0] = var;
        var = asc__irv_reg(d);
      }
      return conv(ls, var, rt);
    }
  case ASC_BI_NP_ANY:
  case ASC_BI_NP_ALL:
    acc = newreg(ls, ascBool, "red.acc");
    mov(ls, acc, asc__irv_int(ascBool, id == ASC_BI_NP_ALL));
    pass(ls, call, sub, shape, nd, fixed, axis,
         id == ASC_BI_NP_ANY ? PASS_ANY : PASS_ALL, acc, -1, i64(0));
    return asc__irv_reg(acc);
  default: {
    bool arg_ = id == ASC_BI_NP_ARGMIN || id == ASC_BI_NP_ARGMAX;
    bool lt = id == ASC_BI_NP_MIN || id == ASC_BI_NP_ARGMIN;
    if (axis < 0) /* along an axis: checked once, before the statement */
      empty_check(ls, id, n);
    adt = edt;
    acc = newreg(ls, adt, "red.acc");
    mov(ls, acc, extreme(adt, lt));
    if (arg_) {
      idx = newreg(ls, ascInt64, "red.idx");
      mov(ls, idx, i64(0));
    }
    pass(ls, call, sub, shape, nd, fixed, axis,
         id == ASC_BI_NP_MIN      ? PASS_MIN
         : id == ASC_BI_NP_MAX    ? PASS_MAX
         : id == ASC_BI_NP_ARGMIN ? PASS_ARGMIN
                                  : PASS_ARGMAX,
         acc, idx, i64(0));
    return conv(ls, asc__irv_reg(arg_ ? idx : acc), rt);
  }
  }
}

asc__irval asc__lower_reduce(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *arg = e->u.call.rargs[0];
  asc__builtin_id id = e->u.call.builtin->id;
  asc__ewctx sub, *outer = ls->ew;
  asc__irval shape[ASC_MAX_DIMS], r;
  bool aligned = false;
  int nd;
  if (!is_tensor(arg)) { /* np.sum(3.0): of one element */
    asc__irval v = asc__lower_expr(ls, arg);
    int rt = scalar_dt(ls, e);
    switch (id) {
    case ASC_BI_NP_ANY:
    case ASC_BI_NP_ALL:
      return truthy(ls, v);
    case ASC_BI_NP_ARGMIN:
    case ASC_BI_NP_ARGMAX:
      return asc__irv_int(rt, 0);
    case ASC_BI_NP_VAR:
    case ASC_BI_NP_STD: {
      /* numpy's var of one element: (v - v)**2 / max(1 - ddof, 0): 0,
       * nan for a nan or infinite v, and nan (0/0) for ddof >= 1 */
      int adt = asc__dt_is_complex(scalar_dt(ls, arg)) ? ascComplex128
                                                        : ascFloat64;
      asc__irval x = conv(ls, v, adt), d = op2(ls, ASC_IR_SUB, adt, x, x);
      asc__irval ss, var;
      asc__irval ddof =
          e->u.call.nrargs > 4 && e->u.call.rargs[4] != NULL &&
                  e->u.call.rargs[4]->kind != ASC_EXPR_NONE
              ? conv(ls, asc__lower_expr(ls, e->u.call.rargs[4]), ascInt64)
              : i64(0);
      if (adt == ascComplex128) { /* |d|**2, real */
        asc__irval re = cpart(ls, d, false), im = cpart(ls, d, true);
        ss = op2(ls, ASC_IR_ADD, ascFloat64,
                 op2(ls, ASC_IR_MUL, ascFloat64, re, re),
                 op2(ls, ASC_IR_MUL, ascFloat64, im, im));
      } else {
        ss = op2(ls, ASC_IR_MUL, ascFloat64, d, d);
      }
      var = op2(ls, ASC_IR_DIV, ascFloat64, ss,
                conv(ls, op2(ls, ASC_IR_MAX, ascInt64,
                             op2(ls, ASC_IR_SUB, ascInt64, i64(1), ddof),
                             i64(0)),
                     ascFloat64));
      if (id == ASC_BI_NP_STD) {
        int32_t q = newreg(ls, ascFloat64, NULL);
        asc__irins *i = emit(ls, ASC_IR_CALL, q, 1);
        i->aux = ASC_INTR_SQRT;
        i->args[0] = var;
        var = asc__irv_reg(q);
      }
      return conv(ls, var, rt);
    }
    default:
      return conv(ls, v, rt);
    }
  }
  memset(&sub, 0, sizeof sub);
  ls->ew = NULL;
  collect(ls, &sub, arg);
  nd = ty(arg)->ndim;
  if (id == ASC_BI_NP_DOT) {
    collect(ls, &sub, e->u.call.rargs[1]);
    aligned = sub.nops == 2 && sub.ops[0].red == NULL &&
              sub.ops[1].red == NULL && sub.ops[0].v.nd == 1 &&
              sub.ops[1].v.nd == 1;
    if (aligned)
      raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, sub.ops[0].v.shape[0],
                       sub.ops[1].v.shape[0]),
               ASC_KEXC_VALUE_ERROR, "shapes ({},) and ({},) not aligned",
               sub.ops[0].v.shape[0], sub.ops[1].v.shape[0]);
  }
  if (aligned) /* numpy's dot does not broadcast: each vector keeps its
                * own stride */
    shape[0] = sub.ops[0].v.shape[0];
  else
    broadcast_ops(ls, &sub, shape, nd);
  r = reduce_loops(ls, e, &sub, shape, nd, NULL, -1);
  ls->ew = outer;
  return r;
}

/* ------------------------------------------- for lower_numpy.c's loops */

int32_t asc__lower_new_tensor(lstate *ls, int dt, int nd,
                              const asc__irval *shape) {
  return new_array(ls, dt, nd, shape);
}
void asc__lower_whole(lstate *ls, int32_t t, asc__lview *v) {
  whole_tensor(ls, t, v);
}
asc__irblock *asc__lower_open_nest(lstate *ls, const asc__irval *shape,
                                   int nd, asc__irval *idx) {
  return open_nest(ls, shape, nd, idx);
}
asc__irval asc__lower_load_at(lstate *ls, const asc__lview *v,
                              const asc__irval *idx, int nd) {
  return load_at(ls, v, idx, nd);
}
void asc__lower_store_at(lstate *ls, int32_t t, asc__irval off,
                         asc__irval v) {
  store_at(ls, t, off, v);
}
void asc__lower_c_strides(lstate *ls, const asc__irval *shape, int nd,
                          asc__irval *cs) {
  c_strides(ls, shape, nd, cs);
}
asc__irval asc__lower_dot_idx(lstate *ls, const asc__irval *idx,
                              const asc__irval *cs, int nd) {
  return dot_idx(ls, idx, cs, nd);
}
void asc__lower_raise_if(lstate *ls, asc__irval cond, int kind,
                         const char *msg, asc__irval a, asc__irval b) {
  raise_if(ls, cond, kind, msg, a, b);
}
