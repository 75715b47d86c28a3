/*
 * Lowering of the numpy functions of ASC_NUMPY_FUNCS (front/builtins.h):
 * one function per family, in the order of the list, as
 * types/infer_numpy.c types them (docs/architecture.md, "A new numpy
 * function").  Each makes a new contiguous array (lower_array.c's
 * materialize calls asc__lower_numpy) and fills it with loops over its
 * arguments' views, so that arguments that are views (a[::2], a.T) are
 * read where they are, and an argument that is an expression (a + 1) is
 * made first.  What numpy checks from the values (shapes that must
 * match, repeats that must not be negative) is checked at run time
 * before the new array is made, raising numpy's exception and message.
 */
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"


static asc__irval iop(lstate *ls, int op, asc__irval a, asc__irval b) {
  return op2(ls, op, ascInt64, a, b);
}

static bool given(const asc__ast_expr *call, int i) {
  return i < call->u.call.nrargs && call->u.call.rargs[i] != NULL &&
         call->u.call.rargs[i]->kind != ASC_EXPR_NONE;
}

void asc__lower_arg_view(lstate *ls, const asc__ast_expr *e, asc__lview *v) {
  int32_t t = asc__lower_materialize(ls, e);
  if (t >= 0)
    asc__lower_whole_tensor(ls, t, v);
  else
    asc__lower_view(ls, e, v);
}

/* v with a new axis of size n and stride 0 at position k. */
static void insert_axis(asc__lview *v, int k, asc__irval n) {
  for (int j = v->nd; j > k; j--) {
    v->shape[j] = v->shape[j - 1];
    v->stride[j] = v->stride[j - 1];
    v->src[j] = v->src[j - 1];
  }
  v->shape[k] = n;
  v->stride[k] = i64(0);
  v->src[k] = -1;
  v->nd++;
}

/* x mod n for an axis of size n, in [0, n) (0 when n is 0). */
static asc__irval mod_len(lstate *ls, asc__irval x, asc__irval n) {
  return iop(ls, ASC_IR_MOD, x, iop(ls, ASC_IR_MAX, n, i64(1)));
}

/* i + m wrapped into [0, n), for i and m in [0, n). */
static asc__irval wrap_add(lstate *ls, asc__irval i, asc__irval m,
                           asc__irval n) {
  asc__irval s = iop(ls, ASC_IR_ADD, i, m);
  return sel(ls, iop(ls, ASC_IR_GE, s, n), iop(ls, ASC_IR_SUB, s, n), s);
}

static asc__irval int_arg(lstate *ls, const asc__ast_expr *e) {
  return conv(ls, asc__lower_expr(ls, e), ascInt64);
}

/* numpy's ValueError for a negative count where the result would have
 * elements. */
static void negative_check(lstate *ls, asc__irval cond) {
  asc__lower_raise_if(ls, cond, ASC_KEXC_VALUE_ERROR,
                      "negative dimensions are not allowed", i64(0), i64(0));
}

/* ------------------------------------------------------------- np.roll */

/* out[(i + shift) mod n] = a[i] along each rolled axis (every element in
 * C order when axis is None), each axis's shifts summed first. */
static int32_t roll(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *sh = e->u.call.rargs[1];
  const asc__ast_expr *ax = given(e, 2) ? e->u.call.rargs[2] : NULL;
  int dt = ty(e)->dtype, nsh, nax, n;
  asc__lview in;
  asc__irval m[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], didx[ASC_MAX_DIMS];
  asc__irval cs[ASC_MAX_DIMS], total = i64(0), size = i64(0), x, off;
  asc__irblock *save;
  bool flat = ax == NULL;
  int32_t r;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  nsh = sh->kind == ASC_EXPR_TUPLE ? sh->u.tuple.n : 1;
  nax = ax != NULL && ax->kind == ASC_EXPR_TUPLE ? ax->u.tuple.n : 1;
  n = nsh > nax ? nsh : nax;
  for (int k = 0; k < in.nd; k++)
    m[k] = i64(0);
  for (int j = 0; j < n; j++) {
    const asc__ast_expr *s =
        sh->kind == ASC_EXPR_TUPLE ? sh->u.tuple.elts[nsh == 1 ? 0 : j] : sh;
    asc__irval v = int_arg(ls, s);
    int k;
    if (flat) {
      total = iop(ls, ASC_IR_ADD, total, v);
      continue;
    }
    asc__numpy_const_axis(ax->kind == ASC_EXPR_TUPLE
                              ? ax->u.tuple.elts[nax == 1 ? 0 : j]
                              : ax,
                          in.nd, &k);
    m[k] = iop(ls, ASC_IR_ADD, m[k], v);
  }
  if (flat) {
    size = asc__lower_view_size(ls, &in);
    total = mod_len(ls, total, size);
  } else {
    for (int k = 0; k < in.nd; k++)
      m[k] = mod_len(ls, m[k], in.shape[k]);
  }
  r = asc__lower_alloc_array(ls, dt, in.nd, in.shape);
  asc__lower_own_cstrides(ls, r, in.nd, cs);
  save = asc__lower_open_nest(ls, in.shape, in.nd, idx);
  x = asc__lower_load_at(ls, &in, idx, in.nd);
  if (flat) {
    off = wrap_add(ls, asc__lower_dot_idx(ls, idx, cs, in.nd), total, size);
  } else {
    for (int k = 0; k < in.nd; k++)
      didx[k] = wrap_add(ls, idx[k], m[k], in.shape[k]);
    off = asc__lower_dot_idx(ls, didx, cs, in.nd);
  }
  asc__lower_store_at(ls, r, off, x);
  ls->cur = save;
  return r;
}

/* ------------------------------------------------------------- np.tile */

/* A with axes of size 1 put in front up to the length of reps (and reps
 * with 1s in front up to A's axes); out[t * n + i] = A[i] for each
 * repetition t of each axis of size n. */
static int32_t tile(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *reps = e->u.call.rargs[1];
  int dt = ty(e)->dtype, nd = ty(e)->ndim, nr;
  asc__lview in;
  asc__irval rep[ASC_MAX_DIMS], oshape[ASC_MAX_DIMS], loops[2 * ASC_MAX_DIMS];
  asc__irval idx[2 * ASC_MAX_DIMS], oidx[ASC_MAX_DIMS], iidx[ASC_MAX_DIMS];
  asc__irval cs[ASC_MAX_DIMS], neg = asc__irv_int(ascBool, 0), x;
  asc__irblock *save;
  int32_t r;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  nr = reps->kind == ASC_EXPR_TUPLE ? reps->u.tuple.n : 1;
  for (int k = 0; k < nd; k++)
    rep[k] = i64(1);
  for (int j = 0; j < nr; j++)
    rep[nd - nr + j] = int_arg(
        ls, reps->kind == ASC_EXPR_TUPLE ? reps->u.tuple.elts[j] : reps);
  while (in.nd < nd)
    insert_axis(&in, 0, i64(1));
  for (int k = 0; k < nd; k++) {
    oshape[k] = iop(ls, ASC_IR_MUL, in.shape[k], rep[k]);
    loops[2 * k] = rep[k];
    loops[2 * k + 1] = in.shape[k];
    neg = op2(ls, ASC_IR_OR, ascBool, neg,
              iop(ls, ASC_IR_LT, rep[k], i64(0)));
  }
  /* numpy repeats a non-empty A, which refuses a negative count; an
   * empty one it only reshapes */
  negative_check(ls,
                 op2(ls, ASC_IR_AND, ascBool, neg,
                     iop(ls, ASC_IR_GT, asc__lower_view_size(ls, &in),
                         i64(0))));
  for (int k = 0; k < nd; k++)
    negative_check(ls, iop(ls, ASC_IR_LT, oshape[k], i64(0)));
  r = asc__lower_alloc_array(ls, dt, nd, oshape);
  asc__lower_own_cstrides(ls, r, nd, cs);
  save = asc__lower_open_nest(ls, loops, 2 * nd, idx);
  for (int k = 0; k < nd; k++) {
    oidx[k] = iop(ls, ASC_IR_ADD,
                  iop(ls, ASC_IR_MUL, idx[2 * k], in.shape[k]),
                  idx[2 * k + 1]);
    iidx[k] = idx[2 * k + 1];
  }
  x = asc__lower_load_at(ls, &in, iidx, nd);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, oidx, cs, nd), x);
  ls->cur = save;
  return r;
}

/* ----------------------------------------------------------- np.repeat */

/* out[i * repeats + j] = a[i] for j < repeats along the axis (every
 * element in C order when axis is None). */
static int32_t repeat(lstate *ls, const asc__ast_expr *e) {
  int dt = ty(e)->dtype, axis = -1;
  asc__lview in;
  asc__irval rep, len, loops[ASC_MAX_DIMS + 1], idx[ASC_MAX_DIMS + 1];
  asc__irval oshape[ASC_MAX_DIMS], oidx[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], x;
  asc__irblock *save;
  int32_t r;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  rep = int_arg(ls, e->u.call.rargs[1]);
  if (given(e, 2))
    asc__numpy_const_axis(e->u.call.rargs[2], in.nd, &axis);
  /* numpy refuses a negative count only where there is something to
   * repeat along the axis */
  len = axis < 0 ? asc__lower_view_size(ls, &in) : in.shape[axis];
  negative_check(ls, op2(ls, ASC_IR_AND, ascBool,
                         iop(ls, ASC_IR_LT, rep, i64(0)),
                         iop(ls, ASC_IR_GT, len, i64(0))));
  rep = iop(ls, ASC_IR_MAX, rep, i64(0));
  if (axis < 0) {
    oshape[0] = iop(ls, ASC_IR_MUL, len, rep);
    r = asc__lower_alloc_array(ls, dt, 1, oshape);
    asc__lower_c_strides(ls, in.shape, in.nd, cs);
    memcpy(loops, in.shape, sizeof(asc__irval) * (size_t)in.nd);
    loops[in.nd] = rep;
    save = asc__lower_open_nest(ls, loops, in.nd + 1, idx);
    x = asc__lower_load_at(ls, &in, idx, in.nd);
    asc__lower_store_at(
        ls, r,
        iop(ls, ASC_IR_ADD,
            iop(ls, ASC_IR_MUL, asc__lower_dot_idx(ls, idx, cs, in.nd), rep),
            idx[in.nd]),
        x);
    ls->cur = save;
    return r;
  }
  /* the repetitions right inside the loop of the axis: stores in order */
  for (int k = 0; k < in.nd; k++)
    oshape[k] = k == axis ? iop(ls, ASC_IR_MUL, in.shape[k], rep)
                          : in.shape[k];
  r = asc__lower_alloc_array(ls, dt, in.nd, oshape);
  asc__lower_own_cstrides(ls, r, in.nd, cs);
  for (int k = 0, q = 0; k <= in.nd; k++)
    loops[k] = k == axis + 1 ? rep : in.shape[q++];
  save = asc__lower_open_nest(ls, loops, in.nd + 1, idx);
  for (int k = 0; k < in.nd; k++)
    oidx[k] = idx[k <= axis ? k : k + 1];
  x = asc__lower_load_at(ls, &in, oidx, in.nd);
  oidx[axis] = iop(ls, ASC_IR_ADD, iop(ls, ASC_IR_MUL, oidx[axis], rep),
                   idx[axis + 1]);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, oidx, cs, in.nd), x);
  ls->cur = save;
  return r;
}

/* ------------------------------------------ np.concatenate and stacks */

/* The arrays of a stack, each with the axes numpy's atleast_1d /
 * atleast_2d, column_stack's columns or stack's new axis give it, and
 * the axis they are joined along (-1: concatenate's None, every array
 * flattened). */
static int stack_views(lstate *ls, const asc__ast_expr *e, asc__lview *v) {
  asc__builtin_id id = e->u.call.builtin->id;
  const asc__ast_expr *tup = e->u.call.rargs[0];
  int n = tup->u.tuple.n, nd = ty(e)->ndim, axis = 0;
  for (int j = 0; j < n; j++)
    asc__lower_arg_view(ls, tup->u.tuple.elts[j], &v[j]);
  switch (id) {
  case ASC_BI_NP_CONCATENATE:
    if (e->u.call.nrargs > 1 && e->u.call.rargs[1] != NULL) {
      if (e->u.call.rargs[1]->kind == ASC_EXPR_NONE)
        return -1;
      asc__numpy_const_axis(e->u.call.rargs[1], nd, &axis);
    }
    return axis;
  case ASC_BI_NP_STACK:
  case ASC_BI_NP_ARRAY: /* np.array of arrays: stacked along a new axis 0 */
  case ASC_BI_NP_ASARRAY:
    if (id == ASC_BI_NP_STACK && given(e, 1))
      asc__numpy_const_axis(e->u.call.rargs[1], nd, &axis);
    for (int j = 0; j < n; j++)
      insert_axis(&v[j], axis, i64(1));
    return axis;
  case ASC_BI_NP_HSTACK:
    for (int j = 0; j < n; j++)
      if (v[j].nd == 0)
        insert_axis(&v[j], 0, i64(1));
    return nd == 1 ? 0 : 1;
  case ASC_BI_NP_VSTACK:
    for (int j = 0; j < n; j++)
      while (v[j].nd < 2)
        insert_axis(&v[j], 0, i64(1));
    return 0;
  default: /* column_stack: a 1-D array is a column */
    for (int j = 0; j < n; j++)
      while (v[j].nd < 2)
        insert_axis(&v[j], v[j].nd, i64(1));
    return 1;
  }
}

/* np.stack, and np.array of arrays: every axis of the arrays must
 * match. */
static bool joins_new_axis(const asc__ast_expr *e) {
  asc__builtin_id id = e->u.call.builtin->id;
  return id == ASC_BI_NP_STACK || id == ASC_BI_NP_ARRAY ||
         id == ASC_BI_NP_ASARRAY;
}

/* The arrays one after another along the axis (in C order each when
 * axis is None), their other axes checked equal first. */
int32_t asc__lower_stack(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *tup = e->u.call.rargs[0];
  int n = tup->u.tuple.n, dt = ty(e)->dtype, axis, nd;
  asc__lview *v = asc__arena_alloc(ls->c, sizeof *v * (size_t)n);
  asc__irval oshape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irval start = i64(0);
  int32_t r;
  axis = stack_views(ls, e, v);
  nd = v[0].nd;
  if (axis < 0) {
    oshape[0] = i64(0);
    for (int j = 0; j < n; j++)
      oshape[0] = iop(ls, ASC_IR_ADD, oshape[0],
                      asc__lower_view_size(ls, &v[j]));
  } else {
    for (int k = 0; k < nd; k++)
      oshape[k] = v[0].shape[k];
    for (int j = 1; j < n; j++) {
      for (int k = 0; k < nd; k++) {
        const char *msg;
        if (k == axis && !joins_new_axis(e))
          continue;
        msg = joins_new_axis(e)
                  ? "all input arrays must have the same shape"
                  : asc__arena_printf(
                        ls->c,
                        "all the input array dimensions except for the "
                        "concatenation axis must match exactly, but along "
                        "dimension %d, the array at index 0 has size {} and "
                        "the array at index %d has size {}",
                        k, j);
        asc__lower_raise_if(ls, iop(ls, ASC_IR_NE, v[0].shape[k],
                                    v[j].shape[k]),
                            ASC_KEXC_VALUE_ERROR, msg, v[0].shape[k],
                            v[j].shape[k]);
      }
      oshape[axis] = iop(ls, ASC_IR_ADD, oshape[axis], v[j].shape[axis]);
    }
  }
  r = asc__lower_alloc_array(ls, dt, axis < 0 ? 1 : nd, oshape);
  if (axis >= 0)
    asc__lower_own_cstrides(ls, r, nd, cs);
  for (int j = 0; j < n; j++) {
    asc__irblock *save;
    asc__irval x, off;
    if (axis < 0)
      asc__lower_c_strides(ls, v[j].shape, v[j].nd, cs);
    save = asc__lower_open_nest(ls, v[j].shape, v[j].nd, idx);
    x = asc__lower_load_at(ls, &v[j], idx, v[j].nd);
    if (axis < 0) {
      off = iop(ls, ASC_IR_ADD, start,
                asc__lower_dot_idx(ls, idx, cs, v[j].nd));
    } else {
      asc__irval at = idx[axis];
      idx[axis] = iop(ls, ASC_IR_ADD, at, start);
      off = asc__lower_dot_idx(ls, idx, cs, nd);
    }
    asc__lower_store_at(ls, r, off, x);
    ls->cur = save;
    start = iop(ls, ASC_IR_ADD, start,
                axis < 0 ? asc__lower_view_size(ls, &v[j])
                         : v[j].shape[axis]);
  }
  return r;
}

/* ----------------------------------------------------- np.triu, tril */

/* m[..., i, j] where j - i >= k (triu) or <= k (tril), else 0; a 1-D m
 * is read as the (n, n) array whose rows are m. */
static int32_t tri(lstate *ls, const asc__ast_expr *e) {
  int dt = ty(e)->dtype, nd;
  bool upper = e->u.call.builtin->id == ASC_BI_NP_TRIU;
  asc__lview in;
  asc__irval k = given(e, 1) ? int_arg(ls, e->u.call.rargs[1]) : i64(0);
  asc__irval cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], x, d, keep;
  asc__irblock *save;
  int32_t r;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  if (in.nd == 1)
    insert_axis(&in, 0, in.shape[0]);
  nd = in.nd;
  r = asc__lower_alloc_array(ls, dt, nd, in.shape);
  asc__lower_own_cstrides(ls, r, nd, cs);
  save = asc__lower_open_nest(ls, in.shape, nd, idx);
  x = asc__lower_load_at(ls, &in, idx, nd);
  d = iop(ls, ASC_IR_SUB, idx[nd - 1], idx[nd - 2]);
  keep = iop(ls, upper ? ASC_IR_GE : ASC_IR_LE, d, k);
  x = sel(ls, keep, x, conv(ls, i64(0), dt));
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, nd), x);
  ls->cur = save;
  return r;
}

/* --------------------------------- np.add.outer, subtract, multiply */

/* out[i..., j...] = A[i...] op B[j...] in the result's dtype. */
static int32_t ufunc_outer(lstate *ls, const asc__ast_expr *e) {
  asc__builtin_id id = e->u.call.builtin->id;
  int dt = ty(e)->dtype, op = id == ASC_BI_NP_ADD_OUTER        ? ASC_IR_ADD
                              : id == ASC_BI_NP_SUBTRACT_OUTER ? ASC_IR_SUB
                                                               : ASC_IR_MUL;
  asc__lview A, B;
  asc__irval shape[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], x, y;
  asc__irblock *save;
  int32_t r;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &A);
  asc__lower_arg_view(ls, e->u.call.rargs[1], &B);
  for (int k = 0; k < A.nd; k++)
    shape[k] = A.shape[k];
  for (int k = 0; k < B.nd; k++)
    shape[A.nd + k] = B.shape[k];
  r = asc__lower_alloc_array(ls, dt, A.nd + B.nd, shape);
  asc__lower_own_cstrides(ls, r, A.nd + B.nd, cs);
  save = asc__lower_open_nest(ls, shape, A.nd + B.nd, idx);
  x = conv(ls, asc__lower_load_at(ls, &A, idx, A.nd), dt);
  y = conv(ls, asc__lower_load_at(ls, &B, idx + A.nd, B.nd), dt);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, A.nd + B.nd),
                      op2(ls, op, dt, x, y));
  ls->cur = save;
  return r;
}

/* ---------------------------------------------------------- np.average */

/* The type the sums of np.average run in: float64 (complex128) for the
 * narrower floats, rounded once at the end, as np.mean in kernels. */
static int average_acc(int rdt) {
  if (asc__dt_is_complex(rdt))
    return ascComplex128;
  return asc__dt_is_float(rdt) ? ascFloat64 : rdt;
}

static asc__irval zero_of(lstate *ls, int dt) {
  if (asc__dt_is_complex(dt))
    return asc__lower_cmplx(ls, dt, asc__irv_float(ascFloat64, 0.0),
                            asc__irv_float(ascFloat64, 0.0));
  return conv(ls, i64(0), dt);
}

/* numpy's checks of the weights' shape against a's, at run time (the
 * numbers of axes typing checked). */
static void average_weights_check(lstate *ls, const asc__lview *A,
                                  const asc__lview *W, int axis) {
  asc__irval differ = asc__irv_int(ascBool, 0);
  if (W->nd != A->nd) { /* 1-D weights along the axis */
    asc__lower_raise_if(ls, iop(ls, ASC_IR_NE, W->shape[0],
                                A->shape[axis]),
                        ASC_KEXC_VALUE_ERROR,
                        "Length of weights not compatible with specified "
                        "axis.", i64(0), i64(0));
    return;
  }
  for (int k = 0; k < A->nd; k++)
    differ = op2(ls, ASC_IR_OR, ascBool, differ,
                 iop(ls, ASC_IR_NE, A->shape[k], W->shape[k]));
  if (axis < 0)
    asc__lower_raise_if(ls, differ, ASC_KEXC_TYPE_ERROR,
                        "Axis must be specified when shapes of a and "
                        "weights differ.", i64(0), i64(0));
  else if (A->nd == 1) /* numpy then compares the length with the axis */
    asc__lower_raise_if(ls, differ, ASC_KEXC_VALUE_ERROR,
                        "Length of weights not compatible with specified "
                        "axis.", i64(0), i64(0));
  else
    asc__lower_raise_if(ls, differ, ASC_KEXC_TYPE_ERROR,
                        "1D weights expected when shapes of a and weights "
                        "differ.", i64(0), i64(0));
}

/* sum(a * w) / sum(w), or sum(a) / n without weights, along the axis
 * (every element when axis < 0); a zero sum of weights is numpy's
 * ZeroDivisionError.  The result in *val (axis < 0) or a new array. */
static int32_t average(lstate *ls, const asc__ast_expr *e, asc__irval *val) {
  const asc__ast_expr *ax = given(e, 1) ? e->u.call.rargs[1] : NULL;
  bool weighted = given(e, 2);
  asc__type *rt = ty(e);
  int rdt = rt->dtype, adt = average_acc(rdt), axis = -1, ond;
  asc__lview A, W;
  asc__irval oshape[ASC_MAX_DIMS], oidx[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irval cs[ASC_MAX_DIMS], iidx[1], x, num, den;
  asc__irblock *save, *obody;
  int32_t r = -1, s1, s2;
  memset(oshape, 0, sizeof oshape);
  asc__lower_arg_view(ls, e->u.call.rargs[0], &A);
  if (ax != NULL)
    asc__numpy_const_axis(ax, A.nd, &axis);
  if (weighted) {
    asc__lower_arg_view(ls, e->u.call.rargs[2], &W);
    average_weights_check(ls, &A, &W, axis);
  }
  ond = axis < 0 ? 0 : A.nd - 1;
  for (int j = 0, q = 0; j < A.nd && axis >= 0; j++)
    if (j != axis)
      oshape[q++] = A.shape[j];
  if (axis >= 0) {
    r = asc__lower_alloc_array(ls, rdt, ond, oshape);
    asc__lower_own_cstrides(ls, r, ond, cs);
  }
  save = asc__lower_open_nest(ls, oshape, ond, oidx);
  obody = ls->cur;
  s1 = newreg(ls, adt, "avg_num");
  s2 = newreg(ls, adt, "avg_den");
  mov(ls, s1, zero_of(ls, adt));
  mov(ls, s2, zero_of(ls, adt));
  if (axis < 0) {
    asc__lower_open_nest(ls, A.shape, A.nd, idx);
  } else {
    asc__lower_open_nest(ls, &A.shape[axis], 1, iidx);
    for (int j = 0, q = 0; j < A.nd; j++)
      idx[j] = j == axis ? iidx[0] : oidx[q++];
  }
  x = conv(ls, asc__lower_load_at(ls, &A, idx, A.nd), adt);
  if (weighted) {
    asc__irval w = conv(ls, W.nd == A.nd
                                ? asc__lower_load_at(ls, &W, idx, A.nd)
                                : asc__lower_load_at(ls, &W, &idx[axis], 1),
                        adt);
    x = op2(ls, ASC_IR_MUL, adt, x, w);
    mov(ls, s2, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(s2), w));
  }
  mov(ls, s1, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(s1), x));
  ls->cur = obody; /* after the summing loop */
  if (weighted) {
    den = asc__irv_reg(s2);
    asc__lower_raise_if(ls, op2(ls, ASC_IR_EQ, adt, den, zero_of(ls, adt)),
                        ASC_KEXC_ZERO_DIVISION_ERROR,
                        "Weights sum to zero, can't be normalized", i64(0),
                        i64(0));
  } else {
    den = conv(ls, axis < 0 ? asc__lower_view_size(ls, &A) : A.shape[axis],
               adt);
  }
  num = conv(ls, asc__lower_div(ls, adt, asc__irv_reg(s1), den, true), rdt);
  if (axis < 0)
    *val = num;
  else
    asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, oidx, cs, ond), num);
  ls->cur = save;
  return r;
}

/* ------------------------------------------------------ np.bincount */

/* out[x[i]] += 1 (or weights[i]), out as long as the largest x plus
 * one, and minlength at least; numpy's ValueErrors first, in numpy's
 * order. */
static int32_t bincount(lstate *ls, const asc__ast_expr *e) {
  bool weighted = given(e, 1);
  int dt = ty(e)->dtype;
  asc__lview x, w, out;
  asc__irval ml = given(e, 2) ? int_arg(ls, e->u.call.rargs[2]) : i64(0);
  asc__irval i[1], v, len, one;
  asc__irblock *save;
  int32_t hi, lo, r;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &x);
  if (weighted)
    asc__lower_arg_view(ls, e->u.call.rargs[1], &w);
  asc__lower_raise_if(ls, iop(ls, ASC_IR_LT, ml, i64(0)),
                      ASC_KEXC_VALUE_ERROR, "'minlength' must not be negative",
                      i64(0), i64(0));
  hi = newreg(ls, ascInt64, "bc_hi");
  lo = newreg(ls, ascInt64, "bc_lo");
  mov(ls, hi, i64(-1));
  mov(ls, lo, i64(0));
  save = asc__lower_open_nest(ls, x.shape, 1, i);
  v = conv(ls, asc__lower_load_at(ls, &x, i, 1), ascInt64);
  mov(ls, hi, iop(ls, ASC_IR_MAX, asc__irv_reg(hi), v));
  mov(ls, lo, iop(ls, ASC_IR_MIN, asc__irv_reg(lo), v));
  ls->cur = save;
  asc__lower_raise_if(ls, iop(ls, ASC_IR_LT, asc__irv_reg(lo), i64(0)),
                      ASC_KEXC_VALUE_ERROR,
                      "'list' argument must have no negative elements",
                      i64(0), i64(0));
  if (weighted)
    asc__lower_raise_if(ls, iop(ls, ASC_IR_NE, w.shape[0], x.shape[0]),
                        ASC_KEXC_VALUE_ERROR,
                        "The weights and list don't have the same length.",
                        i64(0), i64(0));
  len = iop(ls, ASC_IR_MAX, iop(ls, ASC_IR_ADD, asc__irv_reg(hi), i64(1)),
            ml);
  r = asc__lower_alloc_array(ls, dt, 1, &len);
  asc__lower_whole_tensor(ls, r, &out);
  save = asc__lower_open_nest(ls, &len, 1, i);
  asc__lower_store_at(ls, r, i[0], conv(ls, i64(0), dt));
  ls->cur = save;
  save = asc__lower_open_nest(ls, x.shape, 1, i);
  one = weighted ? conv(ls, asc__lower_load_at(ls, &w, i, 1), dt)
                 : conv(ls, i64(1), dt);
  v = conv(ls, asc__lower_load_at(ls, &x, i, 1), ascInt64);
  asc__lower_store_at(ls, r, v,
                      op2(ls, ASC_IR_ADD, dt,
                          asc__lower_load_at(ls, &out, &v, 1), one));
  ls->cur = save;
  return r;
}

/* ------------------------------------- np.searchsorted, np.digitize */

/* a < b as numpy sorts: a NaN after every number. */
static asc__irval sort_lt(lstate *ls, int dt, asc__irval a, asc__irval b) {
  asc__irval lt = op2(ls, ASC_IR_LT, dt, a, b);
  if (!asc__dt_is_float(dt))
    return lt;
  return op2(ls, ASC_IR_OR, ascBool, lt,
             op2(ls, ASC_IR_AND, ascBool, op2(ls, ASC_IR_NE, dt, b, b),
                 op2(ls, ASC_IR_EQ, dt, a, a)));
}

/* How many elements of the sorted 1-D b go before x (x compared in dt):
 * those < x (left) or <= x (right, !(x < b[i])), by binary search. */
static asc__irval search(lstate *ls, const asc__lview *b, asc__irval x,
                         int dt, bool right) {
  int32_t lo = newreg(ls, ascInt64, "ss_lo"), n = newreg(ls, ascInt64, "ss_n");
  asc__irblock *save;
  asc__irval half, mid, y, go;
  mov(ls, lo, i64(0));
  mov(ls, n, b->shape[0]);
  save = open_loop(ls);
  break_if(ls, iop(ls, ASC_IR_LE, asc__irv_reg(n), i64(0)));
  half = iop(ls, ASC_IR_SHR, asc__irv_reg(n), i64(1));
  mid = iop(ls, ASC_IR_ADD, asc__irv_reg(lo), half);
  y = conv(ls, asc__lower_load_at(ls, b, &mid, 1), dt);
  go = right ? op1(ls, ASC_IR_NOT, ascBool, sort_lt(ls, dt, x, y))
             : sort_lt(ls, dt, y, x);
  mov(ls, lo, sel(ls, go, iop(ls, ASC_IR_ADD, mid, i64(1)),
                  asc__irv_reg(lo)));
  mov(ls, n, sel(ls, go, iop(ls, ASC_IR_SUB, iop(ls, ASC_IR_SUB,
                                                 asc__irv_reg(n), half),
                             i64(1)),
                 half));
  ls->cur = save;
  return asc__irv_reg(lo);
}

/* Is b, 1-D, in increasing order (every b[i] <= b[i + 1], as numpy's
 * digitize asks first), in dt? */
static asc__irval increasing(lstate *ls, const asc__lview *b, int dt,
                             bool decreasing) {
  int32_t ok = newreg(ls, ascBool, "mono");
  asc__irval n = iop(ls, ASC_IR_MAX, iop(ls, ASC_IR_SUB, b->shape[0], i64(1)),
                     i64(0));
  asc__irval i[1], j, x, y;
  asc__irblock *save;
  mov(ls, ok, asc__irv_int(ascBool, 1));
  save = asc__lower_open_nest(ls, &n, 1, i);
  j = iop(ls, ASC_IR_ADD, i[0], i64(1));
  x = conv(ls, asc__lower_load_at(ls, b, i, 1), dt);
  y = conv(ls, asc__lower_load_at(ls, b, &j, 1), dt);
  mov(ls, ok, op2(ls, ASC_IR_AND, ascBool, asc__irv_reg(ok),
                  op2(ls, decreasing ? ASC_IR_GE : ASC_IR_LE, dt, x, y)));
  ls->cur = save;
  return asc__irv_reg(ok);
}

/* np.searchsorted(a, v, side) and np.digitize(x, bins, right): each
 * value's place in the sorted vector, compared in the dtype both
 * promote to.  digitize is searchsorted(bins, x, side='left' if right
 * else 'right') of increasing bins, and of decreasing ones
 * len(bins) - searchsorted(bins[::-1], x, side), as numpy computes it.
 * The result in *val (a number searched for) or a new array. */
static int32_t searchsorted(lstate *ls, const asc__ast_expr *e,
                            asc__irval *val) {
  bool dig = e->u.call.builtin->id == ASC_BI_NP_DIGITIZE, right;
  const asc__ast_expr *xe = e->u.call.rargs[dig ? 0 : 1];
  const asc__ast_expr *be = e->u.call.rargs[dig ? 1 : 0];
  asc__type *xt = ty(xe), *bt = ty(be);
  int dt = asc__ty_find(asc__ty_promote(
                            ls->c, asc__ty_scalar(ls->c, xt->dtype),
                            asc__ty_scalar(ls->c, bt->dtype)))->dtype;
  asc__lview b, sb, x;
  asc__irval dec = asc__irv_int(ascBool, 0), cs[ASC_MAX_DIMS];
  asc__irval idx[ASC_MAX_DIMS], xv, k;
  asc__irblock *save = NULL;
  int32_t r = -1;
  asc__lower_arg_view(ls, be, &b);
  if (dig) {
    right = !(given(e, 2) && e->u.call.rargs[2]->u.bval);
    /* numpy's order: increasing first, so equal bins are increasing */
    dec = op1(ls, ASC_IR_NOT, ascBool, increasing(ls, &b, dt, false));
    asc__lower_raise_if(
        ls,
        op2(ls, ASC_IR_AND, ascBool, dec,
            op1(ls, ASC_IR_NOT, ascBool, increasing(ls, &b, dt, true))),
        ASC_KEXC_VALUE_ERROR,
        "bins must be monotonically increasing or decreasing", i64(0),
        i64(0));
  } else {
    right = given(e, 2) && strcmp(e->u.call.rargs[2]->u.str.s, "right") == 0;
  }
  /* the bins searched: bins[::-1] where they decrease */
  sb = b;
  sb.off = sel(ls, dec,
               iop(ls, ASC_IR_ADD, b.off,
                   iop(ls, ASC_IR_MUL,
                       iop(ls, ASC_IR_SUB, b.shape[0], i64(1)), b.stride[0])),
               b.off);
  sb.stride[0] = sel(ls, dec, op1(ls, ASC_IR_NEG, ascInt64, b.stride[0]),
                     b.stride[0]);
  sb.src[0] = -1;
  if (xt->kind == ASC_TY_TENSOR) {
    asc__lower_arg_view(ls, xe, &x);
    r = asc__lower_alloc_array(ls, ascInt64, x.nd, x.shape);
    asc__lower_own_cstrides(ls, r, x.nd, cs);
    save = asc__lower_open_nest(ls, x.shape, x.nd, idx);
    xv = asc__lower_load_at(ls, &x, idx, x.nd);
  } else {
    xv = asc__lower_expr(ls, xe);
  }
  xv = conv(ls, xv, dt);
  k = search(ls, &sb, xv, dt, right);
  if (dig)
    k = sel(ls, dec, iop(ls, ASC_IR_SUB, b.shape[0], k), k);
  if (r < 0) {
    *val = k;
    return r;
  }
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, x.nd), k);
  ls->cur = save;
  return r;
}

/* ------------------------------------------------ np.cov, np.corrcoef */

/* m or y of np.cov as numpy's array(m, ndmin=2), transposed where
 * rowvar is False and m has two axes, or y more than one row (numpy's
 * rules; y's the extents decide at run time). */
static void cov_rows(lstate *ls, const asc__ast_expr *a, bool rowvar,
                     bool is_y, asc__lview *v) {
  asc__irval tr, s0, s1, d0, d1;
  bool two;
  asc__lower_arg_view(ls, a, v);
  two = v->nd == 2;
  if (!two)
    insert_axis(v, 0, i64(1));
  if (rowvar || (!is_y && !two))
    return;
  tr = is_y ? iop(ls, ASC_IR_NE, v->shape[0], i64(1))
            : asc__irv_int(ascBool, 1);
  s0 = v->shape[0], s1 = v->shape[1], d0 = v->stride[0], d1 = v->stride[1];
  v->shape[0] = sel(ls, tr, s1, s0);
  v->shape[1] = sel(ls, tr, s0, s1);
  v->stride[0] = sel(ls, tr, d1, d0);
  v->stride[1] = sel(ls, tr, d0, d1);
  v->src[0] = v->src[1] = -1;
}

/* The float intrinsic intr (SQRT) of float64 x. */
static asc__irval fintr(lstate *ls, int intr, asc__irval x) {
  return call1(ls, intr, ascFloat64, x);
}

/* numpy's np.clip(x, -1, 1) of a float64 (NaN stays NaN). */
static asc__irval clip1(lstate *ls, asc__irval x) {
  return op2(ls, ASC_IR_PMAX, ascFloat64,
             op2(ls, ASC_IR_PMIN, ascFloat64, x,
                 asc__irv_float(ascFloat64, 1.0)),
             asc__irv_float(ascFloat64, -1.0));
}

/* np.corrcoef's c[i, j] / d[i] / d[j], its real part (and imaginary
 * part) clipped to [-1, 1], as numpy computes it. */
static asc__irval corr_of(lstate *ls, int dt, asc__irval c, asc__irval di,
                          asc__irval dj) {
  c = asc__lower_div(ls, dt, asc__lower_div(ls, dt, c, conv(ls, di, dt), true),
                     conv(ls, dj, dt), true);
  if (!asc__dt_is_complex(dt))
    return clip1(ls, c);
  return asc__lower_cmplx(
      ls, dt, clip1(ls, asc__lower_cintr(ls, ASC_INTR_CREAL, c)),
      clip1(ls, asc__lower_cintr(ls, ASC_INTR_CIMAG, c)));
}

/* The rows of m (and y) less their means, in a new (nv, nobs) array
 * D, then c[i, j] = sum_k D[i, k] conj(D[j, k]) * (1 / (nobs - ddof))
 * as numpy's dot(X, X.T.conj()) * true_divide(1, fact), a fact <= 0
 * being 0 (numpy warns); for float32 and float64 the product is a BLAS
 * gemm, summed in its order, as numpy's dot.  np.corrcoef then divides by the square roots
 * of the diagonal, or for one 1-D x gives c / c. */
static int32_t cov(lstate *ls, const asc__ast_expr *e) {
  asc__ast_expr *const *a = e->u.call.rargs;
  bool corr = e->u.call.builtin->id == ASC_BI_NP_CORRCOEF;
  bool rowvar = !(given(e, 2) && !a[2]->u.bval);
  bool bias = given(e, 3) && a[3]->u.bval;
  int dt = ty(e)->dtype, nd = ty(e)->ndim;
  asc__lview X, Y, D, C;
  asc__irval ny = i64(0), nobs, shape[2], cs[2], idx[2], k[1], fact, rf;
  asc__irval zero = zero_of(ls, dt), x, ddof;
  asc__irblock *save, *body, *outer = NULL;
  int32_t d, r, acc, sd = -1;
  bool gemm;
  cov_rows(ls, a[0], rowvar, false, &X);
  nobs = X.shape[1];
  if (given(e, 1)) {
    cov_rows(ls, a[1], rowvar, true, &Y);
    /* numpy: no variable in m is a (0, 0) result, whatever y is */
    ny = sel(ls, iop(ls, ASC_IR_EQ, X.shape[0], i64(0)), i64(0), Y.shape[0]);
    asc__lower_raise_if(ls, op2(ls, ASC_IR_AND, ascBool,
                                iop(ls, ASC_IR_NE, Y.shape[1], nobs),
                                iop(ls, ASC_IR_NE, X.shape[0], i64(0))),
                        ASC_KEXC_VALUE_ERROR,
                        "all the input array dimensions except for the "
                        "concatenation axis must match exactly, but along "
                        "dimension 1, the array at index 0 has size {} and "
                        "the array at index 1 has size {}",
                        nobs, Y.shape[1]);
  }
  shape[0] = iop(ls, ASC_IR_ADD, X.shape[0], ny);
  shape[1] = nobs;
  d = asc__lower_alloc_array(ls, dt, 2, shape);
  asc__lower_own_cstrides(ls, d, 2, cs);
  asc__lower_whole_tensor(ls, d, &D);
  for (int j = 0; j < (given(e, 1) ? 2 : 1); j++) {
    asc__lview *v = j == 0 ? &X : &Y;
    asc__irval rows[2] = {j == 0 ? X.shape[0] : ny, nobs};
    save = asc__lower_open_nest(ls, rows, 2, idx);
    x = conv(ls, asc__lower_load_at(ls, v, idx, 2), dt);
    if (j == 1)
      idx[0] = iop(ls, ASC_IR_ADD, idx[0], X.shape[0]);
    asc__lower_store_at(ls, d, asc__lower_dot_idx(ls, idx, cs, 2), x);
    ls->cur = save;
  }
  /* each row less its mean */
  save = asc__lower_open_nest(ls, shape, 1, idx);
  body = ls->cur;
  acc = newreg(ls, dt, "cov_sum");
  mov(ls, acc, zero);
  asc__lower_open_nest(ls, &nobs, 1, k);
  idx[1] = k[0];
  mov(ls, acc, op2(ls, ASC_IR_ADD, dt, asc__irv_reg(acc),
                   asc__lower_load_at(ls, &D, idx, 2)));
  ls->cur = body;
  x = asc__lower_div(ls, dt, asc__irv_reg(acc), conv(ls, nobs, dt), true);
  asc__lower_open_nest(ls, &nobs, 1, k);
  idx[1] = k[0];
  asc__lower_store_at(ls, d, asc__lower_dot_idx(ls, idx, cs, 2),
                      op2(ls, ASC_IR_SUB, dt,
                          asc__lower_load_at(ls, &D, idx, 2), x));
  ls->cur = save;
  ddof = given(e, 4) ? int_arg(ls, a[4]) : i64(bias ? 0 : 1);
  fact = conv(ls, iop(ls, ASC_IR_SUB, nobs, ddof), ascFloat64);
  fact = sel(ls, op2(ls, ASC_IR_LE, ascFloat64, fact,
                     asc__irv_float(ascFloat64, 0.0)),
             asc__irv_float(ascFloat64, 0.0), fact);
  rf = conv(ls, op2(ls, ASC_IR_DIV, ascFloat64,
                    asc__irv_float(ascFloat64, 1.0), fact),
            dt);
  shape[1] = shape[0];
  r = asc__lower_alloc_array(ls, dt, nd, shape);
  asc__lower_own_cstrides(ls, r, nd, cs);
  asc__lower_whole_tensor(ls, r, &C);
  gemm = nd == 2 && (dt == ascFloat32 || dt == ascFloat64);
  if (gemm) {
    /* D @ D.T on the BLAS, as numpy's dot (transposed: a flag), then
     * each element times 1 / fact; the loops below only when the call
     * did nothing (no BLAS), and they leave the scaling to that pass */
    asc__lview Dt = D;
    asc__irins *g;
    Dt.shape[0] = D.shape[1], Dt.shape[1] = D.shape[0];
    Dt.stride[0] = D.stride[1], Dt.stride[1] = D.stride[0];
    Dt.src[0] = Dt.src[1] = -1;
    g = asc__lower_gemm(ls, r, i64(0), shape[1], i64(1), &D, &Dt,
                        asc__irv_float(ascFloat64, 1.0),
                        asc__irv_float(ascFloat64, 0.0),
                        asc__irv_int(ascBool, 1));
    outer = asc__lower_when_failed(ls, g);
  }
  save = asc__lower_open_nest(ls, shape, 2, idx);
  body = ls->cur;
  acc = newreg(ls, dt, "cov_dot");
  mov(ls, acc, zero);
  asc__lower_open_nest(ls, &nobs, 1, k);
  {
    asc__irval ik[2] = {idx[0], k[0]}, jk[2] = {idx[1], k[0]};
    asc__irval y = asc__lower_load_at(ls, &D, jk, 2);
    if (asc__dt_is_complex(dt))
      y = asc__lower_cintr(ls, ASC_INTR_CONJ, y);
    mov(ls, acc, op2(ls, ASC_IR_ADD, dt, asc__irv_reg(acc),
                     op2(ls, ASC_IR_MUL, dt,
                         asc__lower_load_at(ls, &D, ik, 2), y)));
  }
  ls->cur = body;
  x = asc__irv_reg(acc);
  if (!gemm)
    x = op2(ls, ASC_IR_MUL, dt, x, rf);
  if (corr && nd == 0)
    x = asc__lower_div(ls, dt, x, x, true);
  asc__lower_store_at(
      ls, r, nd == 0 ? i64(0) : asc__lower_dot_idx(ls, idx, cs, 2), x);
  ls->cur = save;
  if (gemm) {
    ls->cur = outer;
    save = asc__lower_open_nest(ls, shape, 2, idx);
    asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, 2),
                        op2(ls, ASC_IR_MUL, dt,
                            asc__lower_load_at(ls, &C, idx, 2), rf));
    ls->cur = save;
  }
  free_array(ls, d);
  if (!corr || nd == 0)
    return r;
  /* the square roots of the diagonal's real parts, then each element
   * divided by those of its row and column */
  sd = asc__lower_alloc_array(ls, ascFloat64, 1, shape);
  save = asc__lower_open_nest(ls, shape, 1, idx);
  idx[1] = idx[0];
  x = asc__lower_load_at(ls, &C, idx, 2);
  if (asc__dt_is_complex(dt))
    x = asc__lower_cintr(ls, ASC_INTR_CREAL, x);
  asc__lower_store_at(ls, sd, idx[0], fintr(ls, ASC_INTR_SQRT, x));
  ls->cur = save;
  asc__lower_whole_tensor(ls, sd, &D);
  save = asc__lower_open_nest(ls, shape, 2, idx);
  x = corr_of(ls, dt, asc__lower_load_at(ls, &C, idx, 2),
              asc__lower_load_at(ls, &D, &idx[0], 1),
              asc__lower_load_at(ls, &D, &idx[1], 1));
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, 2), x);
  ls->cur = save;
  free_array(ls, sd);
  return r;
}

/* ---------------------------------------------------------- np.indices */

/* out[k, i0, ..., in-1] = ik, the extents the dimensions' values (a
 * negative one numpy's ValueError). */
static int32_t indices(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *dims = e->u.call.rargs[0];
  int nd = ty(e)->ndim, n = nd - 1;
  asc__irval shape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irblock *save;
  int32_t r;
  shape[0] = i64(n);
  if (dims->kind == ASC_EXPR_TUPLE) {
    for (int k = 0; k < n; k++)
      shape[k + 1] = int_arg(ls, dims->u.tuple.elts[k]);
  } else {
    asc__lower_agg(ls, dims, ty(dims), &shape[1]);
    for (int k = 0; k < n; k++)
      shape[k + 1] = conv(ls, shape[k + 1], ascInt64);
  }
  for (int k = 0; k < n; k++)
    negative_check(ls, iop(ls, ASC_IR_LT, shape[k + 1], i64(0)));
  r = asc__lower_alloc_array(ls, ascInt64, nd, shape);
  if (n == 0)
    return r; /* np.indices(()): no element */
  asc__lower_own_cstrides(ls, r, nd, cs);
  save = asc__lower_open_nest(ls, shape, nd, idx);
  {
    /* idx[1 + idx[0]]: the index of the axis the first index names */
    asc__irval v = idx[1];
    for (int k = 1; k < n; k++)
      v = sel(ls, iop(ls, ASC_IR_EQ, idx[0], i64(k)), idx[k + 1], v);
    asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, nd), v);
  }
  ls->cur = save;
  return r;
}

/* ------------------------------------------------------------- np.sort */

/* What a heap sort compares: the elements themselves (key NULL), in dt,
 * or, for argsort, the elements of key the int64 elements index, equal
 * ones by index (numpy's stable order). */
typedef struct sorter {
  int dt;
  const asc__lview *key;
} sorter;

static asc__irval heap_lt(lstate *ls, const sorter *s, asc__irval x,
                          asc__irval y) {
  asc__irval kx, ky;
  if (s->key == NULL)
    return sort_lt(ls, s->dt, x, y);
  kx = asc__lower_load_at(ls, s->key, &x, 1);
  ky = asc__lower_load_at(ls, s->key, &y, 1);
  return op2(ls, ASC_IR_OR, ascBool, sort_lt(ls, s->dt, kx, ky),
             op2(ls, ASC_IR_AND, ascBool,
                 op1(ls, ASC_IR_NOT, ascBool, sort_lt(ls, s->dt, ky, kx)),
                 iop(ls, ASC_IR_LT, x, y)));
}

/* Moves the element at root of the max-heap of the n elements v[0..n)
 * down until it is not less than its children (sort_lt's order). */
static void sift_down(lstate *ls, const asc__lview *v, const sorter *srt,
                      asc__irval start, asc__irval n) {
  int32_t root = newreg(ls, ascInt64, "heap_root");
  asc__irblock *save;
  asc__irval child, c1, x, y, pick, cv, rv, rt;
  mov(ls, root, start);
  save = open_loop(ls);
  child = iop(ls, ASC_IR_ADD, iop(ls, ASC_IR_MUL, asc__irv_reg(root), i64(2)),
              i64(1));
  break_if(ls, iop(ls, ASC_IR_GE, child, n));
  /* the right child, clamped inside the heap so that its load is */
  c1 = iop(ls, ASC_IR_ADD, child, i64(1));
  x = asc__lower_load_at(ls, v, &child, 1);
  {
    asc__irval c1in = iop(ls, ASC_IR_MIN, c1, iop(ls, ASC_IR_SUB, n, i64(1)));
    y = asc__lower_load_at(ls, v, &c1in, 1);
  }
  pick = op2(ls, ASC_IR_AND, ascBool, iop(ls, ASC_IR_LT, c1, n),
             heap_lt(ls, srt, x, y));
  child = sel(ls, pick, c1, child);
  cv = sel(ls, pick, y, x);
  rt = asc__irv_reg(root);
  rv = asc__lower_load_at(ls, v, &rt, 1);
  break_if(ls, op1(ls, ASC_IR_NOT, ascBool, heap_lt(ls, srt, rv, cv)));
  asc__lower_store_at(ls, v->t, asc__lower_elem_offset(ls, v, &rt, 1), cv);
  asc__lower_store_at(ls, v->t, asc__lower_elem_offset(ls, v, &child, 1), rv);
  mov(ls, root, child);
  ls->cur = save;
}

/* Sorts the n elements of v in place (heapsort: no scratch memory, n log n
 * comparisons at worst), NaNs last as numpy's. */
static void heap_sort(lstate *ls, const asc__lview *v, const sorter *srt) {
  asc__irval n = v->shape[0], half = iop(ls, ASC_IR_SHR, n, i64(1)), k[1];
  asc__irval zero = i64(0), last, a0, al;
  asc__irblock *save;
  save = asc__lower_open_nest(ls, &half, 1, k);
  sift_down(ls, v, srt,
            iop(ls, ASC_IR_SUB, iop(ls, ASC_IR_SUB, half, i64(1)), k[0]), n);
  ls->cur = save;
  last = iop(ls, ASC_IR_MAX, iop(ls, ASC_IR_SUB, n, i64(1)), i64(0));
  save = asc__lower_open_nest(ls, &last, 1, k);
  last = iop(ls, ASC_IR_SUB, iop(ls, ASC_IR_SUB, n, i64(1)), k[0]);
  a0 = asc__lower_load_at(ls, v, &zero, 1);
  al = asc__lower_load_at(ls, v, &last, 1);
  asc__lower_store_at(ls, v->t, asc__lower_elem_offset(ls, v, &zero, 1), al);
  asc__lower_store_at(ls, v->t, asc__lower_elem_offset(ls, v, &last, 1), a0);
  sift_down(ls, v, srt, zero, last);
  ls->cur = save;
}

/* A new C-order copy of view in (flattened when flat), its shape and
 * strides into shape and cs. */
static int32_t c_copy(lstate *ls, const asc__lview *in, int dt, bool flat,
                      asc__irval *shape, asc__irval *cs) {
  int nd = flat ? 1 : in->nd;
  asc__irval ics[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], x;
  asc__irblock *save;
  int32_t r;
  if (flat)
    shape[0] = asc__lower_view_size(ls, in);
  else
    memcpy(shape, in->shape, sizeof(asc__irval) * (size_t)nd);
  r = asc__lower_alloc_array(ls, dt, nd, shape);
  asc__lower_own_cstrides(ls, r, nd, cs);
  asc__lower_c_strides(ls, in->shape, in->nd, ics);
  save = asc__lower_open_nest(ls, in->shape, in->nd, idx);
  x = asc__lower_load_at(ls, in, idx, in->nd);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, flat ? ics : cs,
                                                 in->nd),
                      x);
  ls->cur = save;
  return r;
}

/* Each line along the axis of array r (C order, shape and cs) sorted
 * in place; key: argsort's keys, of r's shape. */
static void sort_lines(lstate *ls, int32_t r, int nd, int axis,
                       const asc__irval *shape, const asc__irval *cs,
                       int dt, const asc__lview *key) {
  asc__lview line, kline;
  asc__irval lines[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irblock *save;
  sorter srt = {dt, NULL};
  memcpy(lines, shape, sizeof(asc__irval) * (size_t)nd);
  lines[axis] = i64(1);
  memset(&line, 0, sizeof line);
  line.t = r;
  line.nd = 1;
  line.shape[0] = shape[axis];
  line.stride[0] = cs[axis];
  line.src[0] = -1;
  save = asc__lower_open_nest(ls, lines, nd, idx);
  line.off = asc__lower_dot_idx(ls, idx, cs, nd);
  if (key != NULL) {
    kline = *key;
    kline.nd = 1;
    kline.off = asc__lower_elem_offset(ls, key, idx, nd);
    kline.shape[0] = key->shape[axis];
    kline.stride[0] = key->stride[axis];
    kline.src[0] = -1;
    srt.key = &kline;
  }
  heap_sort(ls, &line, &srt);
  ls->cur = save;
}

int32_t asc__lower_sorted_copy(lstate *ls, const asc__lview *in, int dt,
                               bool flat, int axis) {
  asc__irval shape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS];
  int32_t r = c_copy(ls, in, dt, flat, shape, cs);
  sort_lines(ls, r, flat ? 1 : in->nd, axis, shape, cs, dt, NULL);
  return r;
}

/* np.sort(a, axis): along the axis (every element for axis=None). */
static int32_t sort(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *ax = e->u.call.nrargs > 1 ? e->u.call.rargs[1] : NULL;
  bool flat = ax != NULL && ax->kind == ASC_EXPR_NONE;
  asc__lview in;
  int axis;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  axis = flat ? 0 : in.nd - 1;
  if (!flat && ax != NULL)
    asc__numpy_const_axis(ax, in.nd, &axis);
  return asc__lower_sorted_copy(ls, &in, ty(e)->dtype, flat, axis);
}

/* np.argsort(a, axis): each line's indices along the axis, ordered by
 * the elements they index (equal ones by index); every element in C
 * order, of a C-order copy, for axis=None. */
static int32_t argsort(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *ax = e->u.call.nrargs > 1 ? e->u.call.rargs[1] : NULL;
  bool flat = ax != NULL && ax->kind == ASC_EXPR_NONE;
  int dt = ty(e->u.call.rargs[0])->dtype, axis, nd;
  asc__lview in, key;
  asc__irval shape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irblock *save;
  int32_t r, copy = -1;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  axis = flat ? 0 : in.nd - 1;
  if (!flat && ax != NULL)
    asc__numpy_const_axis(ax, in.nd, &axis);
  if (flat) {
    copy = c_copy(ls, &in, dt, true, shape, cs);
    asc__lower_whole_tensor(ls, copy, &key);
  } else {
    key = in;
    memcpy(shape, in.shape, sizeof(asc__irval) * (size_t)in.nd);
  }
  nd = key.nd;
  r = asc__lower_alloc_array(ls, ascInt64, nd, shape);
  asc__lower_own_cstrides(ls, r, nd, cs);
  save = asc__lower_open_nest(ls, shape, nd, idx);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, nd), idx[axis]);
  ls->cur = save;
  sort_lines(ls, r, nd, axis, shape, cs, dt, &key);
  if (copy >= 0)
    free_array(ls, copy);
  return r;
}

/* np.average(a) and the others whose result is a number. */
asc__irval asc__lower_numpy_value(lstate *ls, const asc__ast_expr *e) {
  asc__irval v = i64(0);
  switch (e->u.call.builtin->id) {
  case ASC_BI_NP_AVERAGE:
    average(ls, e, &v);
    return v;
  case ASC_BI_NP_SEARCHSORTED:
  case ASC_BI_NP_DIGITIZE:
    searchsorted(ls, e, &v);
    return v;
  case ASC_BI_NP_TRACE:
    return asc__lower_trace(ls, e);
  case ASC_BI_NP_PERCENTILE:
  case ASC_BI_NP_QUANTILE:
  case ASC_BI_NP_MEDIAN:
    return asc__lower_quantile_value(ls, e);
  default:
    if (asc__builtin_is_linalg(e->u.call.builtin->id))
      return asc__lower_linalg_value(ls, e);
    unsupported(ls, e->loc, "this numpy function as a number");
  }
}

/* ------------------------------------------------------------ dispatch */

int32_t asc__lower_numpy(lstate *ls, const asc__ast_expr *e) {
  switch (e->u.call.builtin->id) {
  case ASC_BI_NP_ROLL:
    return roll(ls, e);
  case ASC_BI_NP_TILE:
    return tile(ls, e);
  case ASC_BI_NP_REPEAT:
    return repeat(ls, e);
  case ASC_BI_NP_CONCATENATE:
  case ASC_BI_NP_STACK:
  case ASC_BI_NP_HSTACK:
  case ASC_BI_NP_VSTACK:
  case ASC_BI_NP_COLUMN_STACK:
    return asc__lower_stack(ls, e);
  case ASC_BI_NP_TRIU:
  case ASC_BI_NP_TRIL:
    return tri(ls, e);
  case ASC_BI_NP_ADD_OUTER:
  case ASC_BI_NP_SUBTRACT_OUTER:
  case ASC_BI_NP_MULTIPLY_OUTER:
    return ufunc_outer(ls, e);
  case ASC_BI_NP_AVERAGE:
    return average(ls, e, NULL);
  case ASC_BI_NP_BINCOUNT:
    return bincount(ls, e);
  case ASC_BI_NP_SEARCHSORTED:
  case ASC_BI_NP_DIGITIZE:
    return searchsorted(ls, e, NULL);
  case ASC_BI_NP_COV:
  case ASC_BI_NP_CORRCOEF:
    return cov(ls, e);
  case ASC_BI_NP_INDICES:
    return indices(ls, e);
  case ASC_BI_NP_SORT:
    return sort(ls, e);
  case ASC_BI_NP_ARGSORT:
    return argsort(ls, e);
  case ASC_BI_NP_ARRAY:
  case ASC_BI_NP_ASARRAY:
    return asc__lower_np_array(ls, e);
  case ASC_BI_NP_HISTOGRAM_BIN_EDGES: {
    int32_t r;
    asc__lower_histogram(ls, e, &r);
    return r;
  }
  case ASC_BI_NP_UNIQUE: {
    int32_t r;
    asc__lower_unique(ls, e, &r);
    return r;
  }
  case ASC_BI_NP_DIAG:
    return asc__lower_diag(ls, e);
  case ASC_BI_NP_DIFF:
    return asc__lower_diff(ls, e);
  case ASC_BI_NP_PERCENTILE:
  case ASC_BI_NP_QUANTILE:
  case ASC_BI_NP_MEDIAN:
    return asc__lower_quantile(ls, e);
  default:
    if (asc__builtin_is_linalg(e->u.call.builtin->id))
      return asc__lower_linalg(ls, e);
    unsupported(ls, e->loc, "this numpy function");
  }
}

void asc__lower_numpy_tuple(lstate *ls, const asc__ast_expr *e,
                            asc__irval *vals) {
  int n = ty(e)->n;
  int32_t *regs = asc__arena_alloc(ls->c, sizeof *regs * ((size_t)n + 1));
  switch (e->u.call.builtin->id) {
  case ASC_BI_NP_MESHGRID:
    asc__lower_meshgrid(ls, e, regs);
    break;
  case ASC_BI_NP_INDICES:
    asc__lower_sparse_indices(ls, e, regs);
    break;
  case ASC_BI_NP_HISTOGRAM:
    asc__lower_histogram(ls, e, regs);
    break;
  case ASC_BI_NP_UNIQUE:
    asc__lower_unique(ls, e, regs);
    break;
  default:
    if (asc__builtin_is_linalg(e->u.call.builtin->id)) {
      asc__lower_linalg_tuple(ls, e, vals);
      return;
    }
    unsupported(ls, e->loc, "this numpy function as a tuple of arrays");
  }
  for (int k = 0; k < n; k++)
    vals[k] = asc__irv_reg(regs[k]);
}
