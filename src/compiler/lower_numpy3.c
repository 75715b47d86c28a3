/*
 * Lowering of more functions of ASC_NUMPY_FUNCS (docs/arrays.md,
 * "Rounding, signs, differences and quantiles"), as types/infer_numpy3.c
 * types them: np.diff, np.percentile, np.quantile and np.median
 * (np.maximum.accumulate and np.minimum.accumulate are lower_create.c's
 * running sums).
 */
#include <math.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

static asc__irval iop(lstate *ls, int op, asc__irval a, asc__irval b) {
  return op2(ls, op, ascInt64, a, b);
}

/* ------------------------------------------------------------- np.diff */

/* A new array of in's differences along axis: out[.., i, ..] =
 * in[.., i + 1, ..] - in[.., i, ..] (!= of bools, as numpy), one element
 * fewer along the axis (none of none). */
static int32_t diff_once(lstate *ls, const asc__lview *in, int dt, int axis) {
  asc__irval shape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irval nxt[ASC_MAX_DIMS], x, y;
  asc__irblock *save;
  int32_t r;
  memcpy(shape, in->shape, sizeof(asc__irval) * (size_t)in->nd);
  shape[axis] = iop(ls, ASC_IR_MAX, iop(ls, ASC_IR_SUB, shape[axis], i64(1)),
                    i64(0));
  r = asc__lower_alloc_array(ls, dt, in->nd, shape);
  asc__lower_own_cstrides(ls, r, in->nd, cs);
  save = asc__lower_open_nest(ls, shape, in->nd, idx);
  memcpy(nxt, idx, sizeof(asc__irval) * (size_t)in->nd);
  nxt[axis] = iop(ls, ASC_IR_ADD, idx[axis], i64(1));
  x = asc__lower_load_at(ls, in, idx, in->nd);
  y = asc__lower_load_at(ls, in, nxt, in->nd);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, in->nd),
                      dt == ascBool ? op2(ls, ASC_IR_NE, dt, y, x)
                                    : op2(ls, ASC_IR_SUB, dt, y, x));
  ls->cur = save;
  return r;
}

/* np.diff(a, n, axis): n differences one after the other, as numpy
 * takes them (each rounded in a's dtype); n = 0 a copy. */
int32_t asc__lower_diff(lstate *ls, const asc__ast_expr *e) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int n = e->u.call.nrargs;
  int dt = ty(e)->dtype, axis;
  int64_t times = 1;
  asc__lview in;
  int32_t r = -1, prev;
  asc__lower_arg_view(ls, a[0], &in);
  axis = in.nd - 1;
  if (n > 1 && a[1] != NULL && a[1]->kind != ASC_EXPR_NONE)
    asc__expr_int_literal(a[1], &times);
  if (n > 2 && a[2] != NULL && a[2]->kind != ASC_EXPR_NONE)
    asc__numpy_const_axis(a[2], in.nd, &axis);
  if (times == 0)
    return asc__lower_c_copy(ls, &in);
  for (int64_t k = 0; k < times; k++) {
    prev = r;
    r = diff_once(ls, &in, dt, axis);
    if (prev >= 0)
      free_array(ls, prev);
    asc__lower_whole_tensor(ls, r, &in);
  }
  return r;
}

/* ------------------------------------------------- np.percentile, quantile */

/* One q of a quantile: numpy's 'linear' method on n sorted elements:
 * the virtual index (n - 1) * q, the two elements around it (both the
 * last from n - 1 on) and the weight of the upper one, as numpy's
 * _get_indexes and _get_gamma compute them. */
typedef struct qpoint {
  asc__irval prev, next, gamma;
} qpoint;

static qpoint qpoint_of(lstate *ls, asc__irval n, asc__irval q) {
  qpoint p;
  asc__irval last = iop(ls, ASC_IR_SUB, n, i64(1));
  asc__irval vi = op2(ls, ASC_IR_MUL, ascFloat64, conv(ls, last, ascFloat64),
                      q);
  asc__irval fl = conv(ls, vi, ascInt64); /* vi >= 0: the floor */
  asc__irval above = op2(ls, ASC_IR_GE, ascFloat64, vi,
                         conv(ls, last, ascFloat64));
  p.prev = sel(ls, above, last, fl);
  p.next = sel(ls, above, last, iop(ls, ASC_IR_ADD, fl, i64(1)));
  /* numpy's previous index is -1 there: gamma vi + 1 */
  p.gamma = op2(ls, ASC_IR_SUB, ascFloat64, vi,
                conv(ls, sel(ls, above, i64(-1), fl), ascFloat64));
  return p;
}

/* numpy's _lerp of the elements at p along axis of the sorted s (idx
 * the lane, its axis entry replaced), in cdt: a + (b - a) * t, or
 * b - (b - a) * (1 - t) from t = 0.5 on, b - a in a's dtype; NaN when
 * the lane's last element is (a NaN sorts last). */
static asc__irval lerp_at(lstate *ls, const asc__lview *s, int dt,
                          asc__irval *idx, int axis, asc__irval n,
                          const qpoint *p, int cdt) {
  asc__irval a, b, d, lo, hi, t, omt, v;
  idx[axis] = p->prev;
  a = asc__lower_load_at(ls, s, idx, s->nd);
  idx[axis] = p->next;
  b = asc__lower_load_at(ls, s, idx, s->nd);
  d = conv(ls, op2(ls, ASC_IR_SUB, dt, b, a), cdt);
  t = conv(ls, p->gamma, cdt);
  omt = conv(ls, op2(ls, ASC_IR_SUB, ascFloat64,
                     asc__irv_float(ascFloat64, 1.0), p->gamma), cdt);
  lo = op2(ls, ASC_IR_ADD, cdt, conv(ls, a, cdt),
           op2(ls, ASC_IR_MUL, cdt, d, t));
  hi = op2(ls, ASC_IR_SUB, cdt, conv(ls, b, cdt),
           op2(ls, ASC_IR_MUL, cdt, d, omt));
  v = sel(ls, op2(ls, ASC_IR_GE, ascFloat64, p->gamma,
                  asc__irv_float(ascFloat64, 0.5)), hi, lo);
  if (asc__dt_is_float(dt)) {
    asc__irval l;
    idx[axis] = iop(ls, ASC_IR_SUB, n, i64(1));
    l = asc__lower_load_at(ls, s, idx, s->nd);
    v = sel(ls, op2(ls, ASC_IR_NE, dt, l, l), conv(ls, l, cdt), v);
  }
  return v;
}

/* np.median's value of the lane at idx (its axis entry replaced) of the
 * sorted s, n elements along axis, in cdt: the middle element, or the
 * two middle ones' sum halved in cdt, as numpy's mean of them; NaN when
 * the lane's last element is (a NaN sorts last) or there is none (numpy
 * warns then). */
static asc__irval middle_at(lstate *ls, const asc__lview *s, int dt,
                            asc__irval *idx, int axis, asc__irval n,
                            int cdt) {
  asc__irval half, hi, lo, mid, cond;
  asc__irins *some;
  asc__irblock *save;
  int32_t res = newreg(ls, cdt, "median");
  mov(ls, res, conv(ls, asc__irv_float(ascFloat64, NAN), cdt));
  cond = iop(ls, ASC_IR_GT, n, i64(0));
  some = emit(ls, ASC_IR_IF, -1, 1);
  some->args[0] = cond;
  save = ls->cur;
  ls->cur = &some->body[0];
  half = iop(ls, ASC_IR_SHR, n, i64(1));
  idx[axis] = half;
  hi = conv(ls, asc__lower_load_at(ls, s, idx, s->nd), cdt);
  idx[axis] = iop(ls, ASC_IR_MAX, iop(ls, ASC_IR_SUB, half, i64(1)), i64(0));
  lo = conv(ls, asc__lower_load_at(ls, s, idx, s->nd), cdt);
  mid = op2(ls, ASC_IR_DIV, cdt, op2(ls, ASC_IR_ADD, cdt, hi, lo),
            conv(ls, i64(2), cdt));
  mid = sel(ls, iop(ls, ASC_IR_EQ, iop(ls, ASC_IR_AND, n, i64(1)), i64(1)),
            hi, mid);
  if (asc__dt_is_float(dt)) {
    asc__irval last;
    idx[axis] = iop(ls, ASC_IR_SUB, n, i64(1));
    last = conv(ls, asc__lower_load_at(ls, s, idx, s->nd), cdt);
    mid = sel(ls, op2(ls, ASC_IR_NE, cdt, last, last), last, mid);
  }
  mov(ls, res, mid);
  ls->cur = save;
  return asc__irv_reg(res);
}

/* np.percentile's / np.quantile's nq q's (disp: q a sequence, the
 * result's first axis) or np.median's middle (q NULL) of each lane of
 * in along axis (flat: of every element): a sorted C-order copy, then
 * each lane's value; into a new array (*res -1; keep: the reduced axes
 * kept of length 1) or the number *val. */
static void sorted_lanes(lstate *ls, const asc__ast_expr *e,
                         const asc__lview *in, bool flat, int axis,
                         bool keep, const asc__irval *q, int nq, bool disp,
                         int32_t *res, asc__irval *val) {
  int cdt = ty(e)->dtype, nd;
  int dt = ty(e->u.call.rargs[0])->dtype;
  asc__lview s;
  asc__irval n, lines[ASC_MAX_DIMS], lcs[ASC_MAX_DIMS];
  asc__irval idx[ASC_MAX_DIMS], oshape[ASC_MAX_DIMS + 1], lanes;
  asc__irblock *save;
  int32_t sorted, r = -1, one = -1;
  sorted = asc__lower_sorted_copy(ls, in, dt, flat, axis);
  asc__lower_whole_tensor(ls, sorted, &s);
  n = s.shape[axis];
  if (q != NULL)
    asc__lower_raise_if(ls, iop(ls, ASC_IR_EQ, n, i64(0)),
                        ASC_KEXC_INDEX_ERROR,
                        "index -1 is out of bounds for axis 0 with size 0",
                        i64(0), i64(0));
  nd = s.nd;
  memcpy(lines, s.shape, sizeof(asc__irval) * (size_t)nd);
  lines[axis] = i64(1);
  asc__lower_c_strides(ls, lines, nd, lcs);
  lanes = asc__lower_view_size(ls, &s);
  lanes = sel(ls, iop(ls, ASC_IR_EQ, n, i64(0)), i64(0),
              iop(ls, ASC_IR_FLOORDIV, lanes, iop(ls, ASC_IR_MAX, n, i64(1))));
  if (res != NULL) {
    /* q's axis, then a's but the reduced ones (kept of length 1 with
     * keepdims): the lanes in C order */
    int o = 0;
    if (disp)
      oshape[o++] = i64(nq);
    for (int j = 0; j < in->nd; j++)
      if (flat || j == axis) {
        if (keep)
          oshape[o++] = i64(1);
      } else {
        oshape[o++] = in->shape[j];
      }
    r = asc__lower_alloc_array(ls, cdt, o, oshape);
  } else {
    one = newreg(ls, cdt, q != NULL ? "quantile" : "median");
  }
  for (int k = 0; k < nq; k++) {
    qpoint p;
    if (q != NULL)
      p = qpoint_of(ls, n, q[k]);
    save = asc__lower_open_nest(ls, lines, nd, idx);
    {
      asc__irval at = asc__lower_dot_idx(ls, idx, lcs, nd);
      asc__irval v = q != NULL ? lerp_at(ls, &s, dt, idx, axis, n, &p, cdt)
                               : middle_at(ls, &s, dt, idx, axis, n, cdt);
      if (r >= 0)
        asc__lower_store_at(ls, r,
                            iop(ls, ASC_IR_ADD, at,
                                iop(ls, ASC_IR_MUL, i64(k), lanes)), v);
      else
        mov(ls, one, v);
    }
    ls->cur = save;
  }
  free_array(ls, sorted);
  if (res != NULL)
    *res = r;
  else
    *val = asc__irv_reg(one);
}

/* Argument i of call e: True written in place. */
static bool is_true(const asc__ast_expr *e, int i) {
  const asc__ast_expr *x = i < e->u.call.nrargs ? e->u.call.rargs[i] : NULL;
  return x != NULL && x->kind == ASC_EXPR_BOOL && x->u.bval;
}

/* Argument i of call e: none, or None written in place. */
static bool is_none(const asc__ast_expr *e, int i) {
  const asc__ast_expr *x = i < e->u.call.nrargs ? e->u.call.rargs[i] : NULL;
  return x == NULL || x->kind == ASC_EXPR_NONE;
}

/* np.percentile / np.quantile: q checked as numpy checks it, then
 * sorted_lanes'. */
static void quantile(lstate *ls, const asc__ast_expr *e, int32_t *res,
                     asc__irval *val) {
  asc__ast_expr *const *a = e->u.call.rargs;
  const asc__ast_expr *qx = a[1];
  bool pct = e->u.call.builtin->id == ASC_BI_NP_PERCENTILE;
  bool flat = is_none(e, 2), disp = qx->kind == ASC_EXPR_TUPLE;
  int nq = disp ? qx->u.tuple.n : 1, axis = 0;
  asc__lview in;
  asc__irval q[64], bad;
  asc__lower_arg_view(ls, a[0], &in);
  if (!flat)
    asc__numpy_const_axis(a[2], in.nd, &axis);
  for (int k = 0; k < nq; k++) {
    q[k] = conv(ls, asc__lower_expr(ls, disp ? qx->u.tuple.elts[k] : qx),
                ascFloat64);
    if (pct)
      q[k] = op2(ls, ASC_IR_DIV, ascFloat64, q[k],
                 asc__irv_float(ascFloat64, 100.0));
    /* 0 <= q <= 1, NaN outside */
    bad = op1(ls, ASC_IR_NOT, ascBool,
              op2(ls, ASC_IR_AND, ascBool,
                  op2(ls, ASC_IR_GE, ascFloat64, q[k],
                      asc__irv_float(ascFloat64, 0.0)),
                  op2(ls, ASC_IR_LE, ascFloat64, q[k],
                      asc__irv_float(ascFloat64, 1.0))));
    asc__lower_raise_if(ls, bad, ASC_KEXC_VALUE_ERROR,
                        pct ? "Percentiles must be in the range [0, 100]"
                            : "Quantiles must be in the range [0, 1]",
                        i64(0), i64(0));
  }
  sorted_lanes(ls, e, &in, flat, axis, is_true(e, 6), q, nq, disp, res, val);
}

/* np.median(a, axis, out, overwrite_input, keepdims): sorted_lanes' middle
 * of each lane (a is left as it is). */
static void median(lstate *ls, const asc__ast_expr *e, int32_t *res,
                   asc__irval *val) {
  bool flat = is_none(e, 1);
  int axis = 0;
  asc__lview in;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  if (!flat)
    asc__numpy_const_axis(e->u.call.rargs[1], in.nd, &axis);
  sorted_lanes(ls, e, &in, flat, axis, is_true(e, 4), NULL, 1, false, res,
               val);
}

/* np.percentile, np.quantile or np.median call e. */
static void lanes_call(lstate *ls, const asc__ast_expr *e, int32_t *res,
                       asc__irval *val) {
  if (e->u.call.builtin->id == ASC_BI_NP_MEDIAN)
    median(ls, e, res, val);
  else
    quantile(ls, e, res, val);
}

int32_t asc__lower_quantile(lstate *ls, const asc__ast_expr *e) {
  int32_t r;
  lanes_call(ls, e, &r, NULL);
  return r;
}

asc__irval asc__lower_quantile_value(lstate *ls, const asc__ast_expr *e) {
  asc__irval v;
  lanes_call(ls, e, NULL, &v);
  return v;
}
