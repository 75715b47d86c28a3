/*
 * Views of arrays in kernels (docs/arrays.md).
 *
 * A view (a[1:-1, j], a.T, a[None, :]) is never a copy and never an IR
 * value: it is an element offset, a shape and strides in elements over
 * the register of the tensor it views, computed where the view is made.
 * Every load and store through it is a load or store of that tensor, so
 * the passes see the accesses as they would see hand-written indexing.
 */
#include <stdint.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

void asc__lower_whole_tensor(lstate *ls, int32_t t, asc__lview *v) {
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
    asc__lower_raise_if(ls,
                        op2(ls, ASC_IR_OR, ascBool,
                            op2(ls, ASC_IR_LT, ascInt64, v, i64(0)),
                            op2(ls, ASC_IR_GE, ascInt64, v, n)),
                        ASC_KEXC_INDEX_ERROR,
                        asc__arena_printf(ls->c,
                                          "index {} is out of bounds for axis "
                                          "%d with size {}", axis), given, n);
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
  asc__lower_raise_if(ls, op2(ls, ASC_IR_EQ, ascInt64, *step, i64(0)),
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
    return !asc__lower_is_fancy(e) && !asc__lower_is_made_subscript(e);
  case ASC_EXPR_ATTR:
    return strcmp(e->u.attr.attr, "T") == 0;
  case ASC_EXPR_CALL:
    if (e->u.call.builtin == NULL || e->u.call.callee != NULL)
      return false;
    switch (e->u.call.builtin->id) {
    case ASC_BI_NP_RESHAPE:
    case ASC_BI_NP_TRANSPOSE:
    case ASC_BI_NP_SWAPAXES:
    case ASC_BI_NP_MOVEAXIS:
    case ASC_BI_NP_FLIP:
    case ASC_BI_NP_FLIPUD:
    case ASC_BI_NP_FLIPLR:
    case ASC_BI_NP_ROT90:
    case ASC_BI_NP_OUTER_LEFT:
    case ASC_BI_NP_EINSUM_OPERAND:
    case ASC_BI_NP_EINSUM_DIAG:
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

int32_t asc__lower_c_copy(lstate *ls, const asc__lview *in) {
  asc__irval cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  int32_t r = asc__lower_alloc_array(ls, ls->f->regs[in->t].ty.dtype, in->nd,
                                     in->shape);
  asc__irblock *save;
  asc__lower_own_cstrides(ls, r, in->nd, cs);
  save = asc__lower_open_nest(ls, in->shape, in->nd, idx);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, in->nd),
                      asc__lower_load_at(ls, in, idx, in->nd));
  ls->cur = save;
  return r;
}

/* a.reshape(...): the same elements under a new C-order shape.  A
 * transposed view (axes out of their order) is copied first, as numpy
 * copies it; otherwise, like numba, kernels reshape contiguous arrays
 * only (numpy would copy the others): a run-time check raises
 * ValueError. */
static void reshape_view(lstate *ls, const asc__ast_expr *e, asc__lview *v) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int na = e->u.call.nrargs, nd = ty(e)->ndim, unknown = -1;
  asc__irval shape[ASC_MAX_DIMS], size, known = i64(1), ok, expect;
  asc__lview in;
  while (na > 1 && a[na - 1] == NULL) /* the unused parameter slots */
    na--;
  asc__lower_view(ls, a[0], &in);
  if (in.permuted && !e->u.call.set_shape) /* x.shape = n: never a copy */
    asc__lower_whole_tensor(ls, asc__lower_c_copy(ls, &in), &in);
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
    asc__lower_raise_if(ls, op2(ls, ASC_IR_EQ, ascInt64, known, i64(0)),
                        ASC_KEXC_VALUE_ERROR,
                        "cannot reshape array of size {} into a shape with an "
                        "unknown dimension and a zero one", size, i64(0));
    shape[unknown] = op2(ls, ASC_IR_FLOORDIV, ascInt64, size, known);
    known = mul(ls, known, shape[unknown]);
  }
  asc__lower_raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, known, size),
                      ASC_KEXC_VALUE_ERROR,
                      "cannot reshape array of size {} into a shape of size {}",
                      size, known);
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
  asc__lower_raise_if(ls, op1(ls, ASC_IR_NOT, ascBool, ok),
                      ASC_KEXC_VALUE_ERROR,
                      e->u.call.set_shape
                          ? "Incompatible shape for in-place modification. "
                            "Use `.reshape()` to make a copy with the "
                            "desired shape."
                          : "reshape: kernels reshape contiguous arrays "
                            "only, as numba (copy it first: "
                            "a.copy().reshape(...))",
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

/* v reversed along axis j: it starts at the last element of the axis. */
static void flip_axis(lstate *ls, asc__lview *v, int j) {
  v->off = add(ls, v->off,
               mul(ls,
                   op2(ls, ASC_IR_MAX, ascInt64, i64(0),
                       op2(ls, ASC_IR_SUB, ascInt64, v->shape[j], i64(1))),
                   v->stride[j]));
  v->stride[j] = op1(ls, ASC_IR_NEG, ascInt64, v->stride[j]);
  v->src[j] = -1;
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
    case ASC_BI_NP_SWAPAXES:
    case ASC_BI_NP_MOVEAXIS:
      asc__lower_view(ls, e->u.call.rargs[0], &in);
      if (!asc__transpose_axes(e, in.nd, perm, &bad))
        asc__diag_fatal(ls->c, bad->loc, "transpose: bad axes");
      *v = in;
      for (int k = 0; k < in.nd; k++) {
        v->shape[k] = in.shape[perm[k]];
        v->stride[k] = in.stride[perm[k]];
        v->src[k] = in.src[perm[k]];
        v->permuted |= perm[k] != k;
      }
      return;
    case ASC_BI_NP_FLIP: /* the axes reversed: from the last element */
    case ASC_BI_NP_FLIPUD:
    case ASC_BI_NP_FLIPLR: {
      bool axes[ASC_MAX_DIMS];
      asc__lower_view(ls, e->u.call.rargs[0], &in);
      if (!asc__flip_axes(e, in.nd, axes, &bad))
        asc__diag_fatal(ls->c, bad->loc, "flip: bad axis");
      *v = in;
      for (int k = 0; k < in.nd; k++)
        if (axes[k])
          flip_axis(ls, v, k);
      return;
    }
    case ASC_BI_NP_ROT90: { /* numpy's flips and a swap of the two axes */
      int k, a0, a1;
      const char *why;
      asc__lower_view(ls, e->u.call.rargs[0], &in);
      if (!asc__rot90_plan(e, in.nd, &k, &a0, &a1, &why, &bad))
        asc__diag_fatal(ls->c, bad->loc, "%s", why);
      *v = in;
      if (k == 0)
        return;
      if (k == 2 || k == 3) /* k == 3: the transpose of m flipped along a0 */
        flip_axis(ls, v, a0);
      if (k == 1 || k == 2)
        flip_axis(ls, v, a1);
      if (k != 2) {
        asc__irval s = v->shape[a0], st = v->stride[a0];
        int8_t src = v->src[a0];
        v->shape[a0] = v->shape[a1];
        v->stride[a0] = v->stride[a1];
        v->src[a0] = v->src[a1];
        v->shape[a1] = s;
        v->stride[a1] = st;
        v->src[a1] = src;
        v->permuted = true;
      }
      return;
    }
    case ASC_BI_NP_OUTER_LEFT: { /* B.ndim new axes of size 1 at the end */
      int nb = ty(e->u.call.rargs[1])->ndim;
      asc__lower_view(ls, e->u.call.rargs[0], v);
      for (int k = v->nd; k < v->nd + nb; k++) {
        v->shape[k] = i64(1);
        v->stride[k] = i64(0);
        v->src[k] = -1;
      }
      v->nd += nb;
      return;
    }
    case ASC_BI_NP_EINSUM_OPERAND: /* checked when typed */
      asc__lower_view(ls, e->u.call.rargs[0], v);
      return;
    case ASC_BI_NP_EINSUM_DIAG: { /* a[i, i]: one axis, both strides */
      asc__lower_view(ls, e->u.call.rargs[0], &in);
      asc__lower_raise_if(
          ls, op2(ls, ASC_IR_NE, ascInt64, in.shape[0], in.shape[1]),
          ASC_KEXC_VALUE_ERROR,
          asc__arena_printf(ls->c,
                            "dimensions in operand %d for collapsing index "
                            "'%c' don't match ({} != {})",
                            (int)e->u.call.rargs[1]->u.ival,
                            (char)e->u.call.rargs[2]->u.ival),
          in.shape[0], in.shape[1]);
      memset(v, 0, sizeof *v);
      v->t = in.t;
      v->off = in.off;
      v->nd = 1;
      v->shape[0] = in.shape[0];
      v->stride[0] = add(ls, in.stride[0], in.stride[1]);
      v->src[0] = -1;
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
    v->permuted |= in.nd > 1;
    return;
  }
  if (e->kind == ASC_EXPR_SUBSCRIPT && is_tensor(e) &&
      !asc__lower_is_fancy(e)) {
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
    asc__lower_whole_tensor(ls, asc__lower_tensor_reg(ls, e), v);
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
