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

/* The view of array argument e: a view or a whole array where it is, an
 * expression (a + 1, np.arange(n)) made first. */
static void arg_view(lstate *ls, const asc__ast_expr *e, asc__lview *v) {
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
  arg_view(ls, e->u.call.rargs[0], &in);
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
  asc__lower_c_strides(ls, in.shape, in.nd, cs);
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
  arg_view(ls, e->u.call.rargs[0], &in);
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
  asc__lower_c_strides(ls, oshape, nd, cs);
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
  arg_view(ls, e->u.call.rargs[0], &in);
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
  asc__lower_c_strides(ls, oshape, in.nd, cs);
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
    arg_view(ls, tup->u.tuple.elts[j], &v[j]);
  switch (id) {
  case ASC_BI_NP_CONCATENATE:
    if (e->u.call.nrargs > 1 && e->u.call.rargs[1] != NULL) {
      if (e->u.call.rargs[1]->kind == ASC_EXPR_NONE)
        return -1;
      asc__numpy_const_axis(e->u.call.rargs[1], nd, &axis);
    }
    return axis;
  case ASC_BI_NP_STACK:
    if (given(e, 1))
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

/* The arrays one after another along the axis (in C order each when
 * axis is None), their other axes checked equal first. */
static int32_t stack(lstate *ls, const asc__ast_expr *e) {
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
        if (k == axis && e->u.call.builtin->id != ASC_BI_NP_STACK)
          continue;
        msg = e->u.call.builtin->id == ASC_BI_NP_STACK
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
    asc__lower_c_strides(ls, oshape, nd, cs);
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
  arg_view(ls, e->u.call.rargs[0], &in);
  if (in.nd == 1)
    insert_axis(&in, 0, in.shape[0]);
  nd = in.nd;
  r = asc__lower_alloc_array(ls, dt, nd, in.shape);
  asc__lower_c_strides(ls, in.shape, nd, cs);
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
  arg_view(ls, e->u.call.rargs[0], &A);
  arg_view(ls, e->u.call.rargs[1], &B);
  for (int k = 0; k < A.nd; k++)
    shape[k] = A.shape[k];
  for (int k = 0; k < B.nd; k++)
    shape[A.nd + k] = B.shape[k];
  r = asc__lower_alloc_array(ls, dt, A.nd + B.nd, shape);
  asc__lower_c_strides(ls, shape, A.nd + B.nd, cs);
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
  arg_view(ls, e->u.call.rargs[0], &A);
  if (ax != NULL)
    asc__numpy_const_axis(ax, A.nd, &axis);
  if (weighted) {
    arg_view(ls, e->u.call.rargs[2], &W);
    average_weights_check(ls, &A, &W, axis);
  }
  ond = axis < 0 ? 0 : A.nd - 1;
  for (int j = 0, q = 0; j < A.nd && axis >= 0; j++)
    if (j != axis)
      oshape[q++] = A.shape[j];
  if (axis >= 0) {
    r = asc__lower_alloc_array(ls, rdt, ond, oshape);
    asc__lower_c_strides(ls, oshape, ond, cs);
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

/* np.average(a) and the others whose result is a number. */
asc__irval asc__lower_numpy_value(lstate *ls, const asc__ast_expr *e) {
  asc__irval v = i64(0);
  if (e->u.call.builtin->id != ASC_BI_NP_AVERAGE)
    unsupported(ls, e->loc, "this numpy function as a number");
  average(ls, e, &v);
  return v;
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
    return stack(ls, e);
  case ASC_BI_NP_TRIU:
  case ASC_BI_NP_TRIL:
    return tri(ls, e);
  case ASC_BI_NP_ADD_OUTER:
  case ASC_BI_NP_SUBTRACT_OUTER:
  case ASC_BI_NP_MULTIPLY_OUTER:
    return ufunc_outer(ls, e);
  case ASC_BI_NP_AVERAGE:
    return average(ls, e, NULL);
  default:
    unsupported(ls, e->loc, "this numpy function");
  }
}
