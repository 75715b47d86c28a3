/*
 * Lowering of numpy's histograms (docs/arrays.md, "Histograms"), as
 * types/infer_stats.c types them: np.histogram (a tuple of two new
 * arrays, asc__lower_array_tuple), np.histogram_bin_edges and
 * np.unique.  The bins
 * are numpy's: equal bins between the range's ends (a's least and
 * greatest element by default) with numpy's edges and its index
 * arithmetic, or the edges of an array; every bin half-open but the
 * last, which holds its right edge.
 */
#include <math.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

static asc__irval f64(double v) { return asc__irv_float(ascFloat64, v); }

static bool given(const asc__ast_expr *call, int i) {
  return i < call->u.call.nrargs && call->u.call.rargs[i] != NULL &&
         call->u.call.rargs[i]->kind != ASC_EXPR_NONE;
}

static asc__irval isfinite_f64(lstate *ls, asc__irval x) {
  return call1(ls, ASC_INTR_ISFINITE, ascBool, x);
}

static void value_error(lstate *ls, asc__irval cond, const char *msg) {
  asc__lower_raise_if(ls, cond, ASC_KEXC_VALUE_ERROR, msg, i64(0), i64(0));
}

static asc__irval load1(lstate *ls, int32_t t, asc__irval i) {
  asc__lview v;
  asc__lower_whole_tensor(ls, t, &v);
  return asc__lower_load_at(ls, &v, &i, 1);
}

/* A new 1-D array of n zeros of dt. */
static int32_t zeros(lstate *ls, int dt, asc__irval n) {
  asc__irval idx[1];
  int32_t r = asc__lower_alloc_array(ls, dt, 1, &n);
  asc__irblock *save = asc__lower_open_nest(ls, &n, 1, idx);
  asc__lower_store_at(ls, r, idx[0], i64(0));
  ls->cur = save;
  return r;
}

/* The ends of equal bins in *lo and *hi (float64): range's, checked as
 * numpy's, or a's least and greatest element (0 and 1 without any), a
 * half apart where they are equal. */
static void outer_edges(lstate *ls, const asc__ast_expr *e,
                        const asc__lview *A, int cdt, asc__irval *lo,
                        asc__irval *hi) {
  asc__irval l, h;
  if (given(e, 2)) {
    const asc__ast_expr *rg = e->u.call.rargs[2];
    l = conv(ls, asc__lower_expr(ls, rg->u.tuple.elts[0]), ascFloat64);
    h = conv(ls, asc__lower_expr(ls, rg->u.tuple.elts[1]), ascFloat64);
    value_error(ls, op2(ls, ASC_IR_GT, ascFloat64, l, h),
                "max must be larger than min in range parameter.");
    value_error(ls,
                op1(ls, ASC_IR_NOT, ascBool,
                    op2(ls, ASC_IR_AND, ascBool, isfinite_f64(ls, l),
                        isfinite_f64(ls, h))),
                "supplied range is not finite");
  } else {
    /* a's least and greatest element, in a's float dtype (numpy's
     * a.min() and a.max()) */
    int32_t mn = newreg(ls, cdt, "hist_lo");
    int32_t mx = newreg(ls, cdt, "hist_hi");
    int32_t nan = newreg(ls, ascBool, "hist_nan");
    asc__irval idx[ASC_MAX_DIMS], x, size = asc__lower_view_size(ls, A);
    asc__irblock *save;
    mov(ls, mn, conv(ls, f64(INFINITY), cdt));
    mov(ls, mx, conv(ls, f64(-INFINITY), cdt));
    mov(ls, nan, asc__irv_int(ascBool, 0));
    save = asc__lower_open_nest(ls, A->shape, A->nd, idx);
    x = conv(ls, asc__lower_load_at(ls, A, idx, A->nd), cdt);
    mov(ls, mn, op2(ls, ASC_IR_MIN, cdt, asc__irv_reg(mn), x));
    mov(ls, mx, op2(ls, ASC_IR_MAX, cdt, asc__irv_reg(mx), x));
    mov(ls, nan, op2(ls, ASC_IR_OR, ascBool, asc__irv_reg(nan),
                     op2(ls, ASC_IR_NE, cdt, x, x)));
    ls->cur = save;
    value_error(ls, asc__irv_reg(nan),
                "autodetected range of [nan, nan] is not finite");
    {
      asc__irval none = op2(ls, ASC_IR_EQ, ascInt64, size, i64(0));
      l = sel(ls, none, conv(ls, f64(0.0), cdt), asc__irv_reg(mn));
      h = sel(ls, none, conv(ls, f64(1.0), cdt), asc__irv_reg(mx));
    }
    value_error(ls,
                op1(ls, ASC_IR_NOT, ascBool,
                    op2(ls, ASC_IR_AND, ascBool,
                        isfinite_f64(ls, conv(ls, l, ascFloat64)),
                        isfinite_f64(ls, conv(ls, h, ascFloat64)))),
                "autodetected range is not finite");
  }
  {
    asc__irval same = op2(ls, ASC_IR_EQ, cdt, l, h);
    asc__irval half = conv(ls, f64(0.5), cdt);
    *lo = sel(ls, same, op2(ls, ASC_IR_SUB, cdt, l, half), l);
    *hi = sel(ls, same, op2(ls, ASC_IR_ADD, cdt, h, half), h);
  }
}

/* numpy's linspace(lo, hi, nb + 1) of dt: i * ((hi - lo) / nb) + lo in
 * cdt (lo's and hi's dtype), the last edge hi; numpy's ValueError where
 * two edges are not increasing. */
static int32_t equal_edges(lstate *ls, int dt, int cdt, asc__irval nb,
                           asc__irval lo, asc__irval hi, asc__irval empty) {
  asc__irval n = op2(ls, ASC_IR_ADD, ascInt64, nb, i64(1)), idx[1], v;
  asc__irval step = op2(ls, ASC_IR_DIV, cdt, op2(ls, ASC_IR_SUB, cdt, hi, lo),
                        conv(ls, nb, cdt));
  int32_t r = asc__lower_alloc_array(ls, dt, 1, &n), flat;
  asc__irblock *save = asc__lower_open_nest(ls, &n, 1, idx);
  v = op2(ls, ASC_IR_ADD, cdt,
          op2(ls, ASC_IR_MUL, cdt, conv(ls, idx[0], cdt), step), lo);
  v = conv(ls, sel(ls, op2(ls, ASC_IR_EQ, ascInt64, idx[0], nb), hi, v), dt);
  if (cdt != ascFloat64) {
    /* no element: numpy's ends are the Python ints 0 and 1, whose
     * linspace is float64 */
    asc__irval u = op2(ls, ASC_IR_MUL, ascFloat64, conv(ls, idx[0], ascFloat64),
                       op2(ls, ASC_IR_DIV, ascFloat64, f64(1.0),
                           conv(ls, nb, ascFloat64)));
    u = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, idx[0], nb), f64(1.0), u);
    v = sel(ls, empty, conv(ls, u, dt), v);
  }
  asc__lower_store_at(ls, r, idx[0], v);
  ls->cur = save;
  flat = newreg(ls, ascBool, "hist_flat");
  mov(ls, flat, asc__irv_int(ascBool, 0));
  save = asc__lower_open_nest(ls, &nb, 1, idx);
  mov(ls, flat, op2(ls, ASC_IR_OR, ascBool, asc__irv_reg(flat),
                    op2(ls, ASC_IR_GE, dt, load1(ls, r, idx[0]),
                        load1(ls, r, op2(ls, ASC_IR_ADD, ascInt64, idx[0],
                                         i64(1))))));
  ls->cur = save;
  asc__lower_raise_if(ls, asc__irv_reg(flat), ASC_KEXC_VALUE_ERROR,
                      "Too many bins for data range. Cannot create {} "
                      "finite-sized bins.",
                      nb, i64(0));
  return r;
}

/* The bin of x (in the edges' dtype dt) among nb equal bins, as numpy
 * computes it: ((x - lo) / (hi - lo)) * nb truncated (x - lo in dt, the
 * rest in cdt, lo's and hi's dtype, where it is float64), the last edge
 * in the last bin, then one bin down or up where the edges array says x
 * lies there; -1 outside [lo, hi] (and for NaN). */
static asc__irval equal_bin(lstate *ls, int dt, int cdt, asc__irval x,
                            asc__irval nb, asc__irval lo, asc__irval hi,
                            int32_t edges) {
  int ddt = cdt == ascFloat64 ? ascFloat64 : dt;
  asc__irval lo_e = conv(ls, lo, dt), hi_e = conv(ls, hi, dt);
  asc__irval denom = conv(ls, op2(ls, ASC_IR_SUB, cdt, hi, lo), ddt);
  asc__irval keep = op2(ls, ASC_IR_AND, ascBool,
                        op2(ls, ASC_IR_GE, dt, x, lo_e),
                        op2(ls, ASC_IR_LE, dt, x, hi_e));
  asc__irval f = op2(ls, ASC_IR_MUL, ddt,
                     op2(ls, ASC_IR_DIV, ddt,
                         conv(ls, op2(ls, ASC_IR_SUB, dt, x, lo_e), ddt),
                         denom),
                     conv(ls, nb, ddt));
  asc__irval last = op2(ls, ASC_IR_SUB, ascInt64, nb, i64(1));
  asc__irval i = conv(ls, sel(ls, keep, f, conv(ls, i64(0), ddt)), ascInt64);
  asc__irval down, up, ip1;
  i = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, i, nb), last, i);
  i = op2(ls, ASC_IR_MIN, ascInt64, op2(ls, ASC_IR_MAX, ascInt64, i, i64(0)),
          last);
  down = op2(ls, ASC_IR_LT, dt, x, load1(ls, edges, i));
  ip1 = op2(ls, ASC_IR_ADD, ascInt64, i, i64(1));
  up = op2(ls, ASC_IR_AND, ascBool,
           op2(ls, ASC_IR_GE, dt, x, load1(ls, edges, ip1)),
           op2(ls, ASC_IR_NE, ascInt64, i, last));
  i = sel(ls, down, op2(ls, ASC_IR_SUB, ascInt64, i, i64(1)),
          sel(ls, up, ip1, i));
  return sel(ls, keep, i, i64(-1));
}

/* The bin of x among the edges E (nb + 1 of them, increasing), compared
 * in ct: the last edge at most x's is its bin (searchsorted 'right'
 * less one), the last edge itself in the last bin; -1 outside. */
static asc__irval edges_bin(lstate *ls, int ct, asc__irval x,
                            const asc__lview *E, asc__irval nb) {
  int32_t lo = newreg(ls, ascInt64, "bin_lo"), hi = newreg(ls, ascInt64,
                                                           "bin_hi");
  asc__irval ne = op2(ls, ASC_IR_ADD, ascInt64, nb, i64(1)), mid, at, last;
  asc__irins *loop, *brk;
  asc__irblock *save = ls->cur;
  x = conv(ls, x, ct);
  mov(ls, lo, i64(0));
  mov(ls, hi, ne);
  /* lo: the number of edges <= x (binary search) */
  loop = emit(ls, ASC_IR_LOOP, -1, 0);
  ls->cur = &loop->body[0];
  mid = op2(ls, ASC_IR_GE, ascInt64, asc__irv_reg(lo), asc__irv_reg(hi));
  brk = emit(ls, ASC_IR_IF, -1, 1);
  brk->args[0] = mid;
  ls->cur = &brk->body[0];
  emit(ls, ASC_IR_BREAK, -1, 0);
  ls->cur = &loop->body[0];
  mid = op2(ls, ASC_IR_SHR, ascInt64,
            op2(ls, ASC_IR_ADD, ascInt64, asc__irv_reg(lo), asc__irv_reg(hi)),
            i64(1));
  at = conv(ls, asc__lower_load_at(ls, E, &mid, 1), ct);
  {
    asc__irval le = op2(ls, ASC_IR_LE, ct, at, x);
    mov(ls, lo, sel(ls, le, op2(ls, ASC_IR_ADD, ascInt64, mid, i64(1)),
                    asc__irv_reg(lo)));
    mov(ls, hi, sel(ls, le, asc__irv_reg(hi), mid));
  }
  ls->cur = save;
  last = conv(ls, asc__lower_load_at(ls, E, &nb, 1), ct);
  {
    asc__irval b = op2(ls, ASC_IR_SUB, ascInt64, asc__irv_reg(lo), i64(1));
    asc__irval on_last = op2(ls, ASC_IR_AND, ascBool,
                             op2(ls, ASC_IR_EQ, ct, x, last),
                             op2(ls, ASC_IR_GT, ascInt64, nb, i64(0)));
    b = sel(ls, on_last, op2(ls, ASC_IR_SUB, ascInt64, nb, i64(1)), b);
    return sel(ls, op2(ls, ASC_IR_LT, ascInt64, b, nb), b, i64(-1));
  }
}

void asc__lower_histogram(lstate *ls, const asc__ast_expr *e, int32_t *regs) {
  asc__ast_expr *const *a = e->u.call.rargs;
  bool edges_only = e->u.call.builtin->id == ASC_BI_NP_HISTOGRAM_BIN_EDGES;
  int wi = edges_only ? 3 : 4;
  asc__type *rt = ty(e);
  int edt = edges_only ? rt->dtype : asc__ty_find(rt->elems[1])->dtype;
  int hdt = edges_only ? ascInt64 : asc__ty_find(rt->elems[0])->dtype;
  bool weighted = given(e, wi);
  bool density = !edges_only && given(e, 3) && a[3]->u.bval;
  bool bins_array = given(e, 1) && ty(a[1])->kind == ASC_TY_TENSOR;
  asc__lview A, W, E;
  asc__irval nb, lo = f64(0.0), hi = f64(1.0), idx[ASC_MAX_DIMS], x, b, w, b_ok;
  asc__irins *some, *in;
  int adt = ty(a[0])->dtype, ct = edt;
  /* the dtype of the ends: a's float one for its own least and greatest
   * element, float64 for a range's Python numbers or an integer a */
  int cdt = !given(e, 2) && asc__dt_is_float(adt) ? adt : ascFloat64;
  int acc_dt, ndt;
  int32_t edges, acc;
  asc__irblock *save;
  asc__lower_arg_view(ls, a[0], &A);
  if (bins_array) {
    asc__type *p = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, adt),
                                   asc__ty_scalar(ls->c, edt));
    asc__irval k[1], ne;
    ct = p ? asc__ty_concrete(ls->c, p)->dtype : ascFloat64;
    asc__lower_arg_view(ls, a[1], &E);
    ne = E.shape[0];
    nb = op2(ls, ASC_IR_MAX, ascInt64, op2(ls, ASC_IR_SUB, ascInt64, ne,
                                           i64(1)), i64(0));
    /* numpy's check, then the edges copied */
    save = asc__lower_open_nest(ls, &nb, 1, k);
    {
      asc__irval k1 = op2(ls, ASC_IR_ADD, ascInt64, k[0], i64(1));
      value_error(ls,
                  op2(ls, ASC_IR_GT, edt, asc__lower_load_at(ls, &E, k, 1),
                      asc__lower_load_at(ls, &E, &k1, 1)),
                  "`bins` must increase monotonically, when an array");
    }
    ls->cur = save;
    edges = asc__lower_alloc_array(ls, edt, 1, &ne);
    save = asc__lower_open_nest(ls, &ne, 1, k);
    asc__lower_store_at(ls, edges, k[0], asc__lower_load_at(ls, &E, k, 1));
    ls->cur = save;
  } else {
    nb = given(e, 1) ? conv(ls, asc__lower_expr(ls, a[1]), ascInt64)
                     : i64(10);
    value_error(ls, op2(ls, ASC_IR_LT, ascInt64, nb, i64(1)),
                "`bins` must be positive, when an integer");
    outer_edges(ls, e, &A, cdt, &lo, &hi);
    edges = equal_edges(ls, edt, cdt, nb, lo, hi,
                        op2(ls, ASC_IR_EQ, ascInt64,
                            asc__lower_view_size(ls, &A), i64(0)));
  }
  if (edges_only) {
    regs[0] = edges;
    return;
  }
  if (weighted) {
    asc__lower_arg_view(ls, a[wi], &W);
    for (int k = 0; k < A.nd; k++)
      value_error(ls, op2(ls, ASC_IR_NE, ascInt64, A.shape[k], W.shape[k]),
                  "weights should have the same shape as a.");
  }
  /* counts in int64; sums of weights in float64 (complex128), as
   * numpy's bincount, cast to the weights' dtype once at the end */
  ndt = weighted ? (int)ty(a[wi])->dtype : ascInt64;
  acc_dt = !weighted ? ascInt64
           : asc__dt_is_complex(ndt) ? ascComplex128 : ascFloat64;
  acc = zeros(ls, acc_dt, nb);
  w = op2(ls, ASC_IR_GT, ascInt64, nb, i64(0));
  some = emit(ls, ASC_IR_IF, -1, 1); /* no bin (bins=[]): nothing to count */
  some->args[0] = w;
  save = ls->cur;
  ls->cur = &some->body[0];
  asc__lower_open_nest(ls, A.shape, A.nd, idx);
  x = asc__lower_load_at(ls, &A, idx, A.nd);
  b = bins_array ? edges_bin(ls, ct, x, &E, nb)
                 : equal_bin(ls, edt, cdt, conv(ls, x, edt), nb, lo, hi,
                             edges);
  w = weighted ? conv(ls, asc__lower_load_at(ls, &W, idx, A.nd), acc_dt)
               : i64(1);
  b_ok = op2(ls, ASC_IR_GE, ascInt64, b, i64(0));
  in = emit(ls, ASC_IR_IF, -1, 1);
  in->args[0] = b_ok;
  ls->cur = &in->body[0];
  asc__lower_store_at(ls, acc, b,
                      op2(ls, ASC_IR_ADD, acc_dt, load1(ls, acc, b),
                          conv(ls, w, acc_dt)));
  ls->cur = save;
  if (density) {
    /* numpy: n / diff(edges) (float64) / n.sum() */
    int32_t sum = newreg(ls, ndt, "hist_sum");
    asc__irval k[1], k1, db, nv;
    regs[0] = asc__lower_alloc_array(ls, hdt, 1, &nb);
    mov(ls, sum, conv(ls, i64(0), ndt));
    save = asc__lower_open_nest(ls, &nb, 1, k);
    mov(ls, sum, op2(ls, ASC_IR_ADD, ndt, asc__irv_reg(sum),
                     conv(ls, load1(ls, acc, k[0]), ndt)));
    ls->cur = save;
    save = asc__lower_open_nest(ls, &nb, 1, k);
    k1 = op2(ls, ASC_IR_ADD, ascInt64, k[0], i64(1));
    db = op2(ls, ASC_IR_SUB, ascFloat64,
             conv(ls, load1(ls, edges, k1), ascFloat64),
             conv(ls, load1(ls, edges, k[0]), ascFloat64));
    nv = conv(ls, conv(ls, load1(ls, acc, k[0]), ndt), hdt);
    nv = asc__lower_div(ls, hdt, asc__lower_div(ls, hdt, nv, conv(ls, db, hdt),
                                                true),
                        conv(ls, asc__irv_reg(sum), hdt), true);
    asc__lower_store_at(ls, regs[0], k[0], nv);
    ls->cur = save;
  } else if (acc_dt != hdt) {
    asc__irval k[1];
    regs[0] = asc__lower_alloc_array(ls, hdt, 1, &nb);
    save = asc__lower_open_nest(ls, &nb, 1, k);
    asc__lower_store_at(ls, regs[0], k[0], load1(ls, acc, k[0]));
    ls->cur = save;
  } else {
    regs[0] = acc;
    regs[1] = edges;
    return;
  }
  in = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
  in->args[0] = asc__irv_reg(acc);
  regs[1] = edges;
}

/* ----------------------------------------------------------- np.unique */

/* The sorted elements (a flat sorted copy), a new value where one differs
 * from the one before (NaNs, sorted last, all one value with equal_nan):
 * one pass counts the values, a second copies them and their counts. */
void asc__lower_unique(lstate *ls, const asc__ast_expr *e, int32_t *regs) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int dt = ty(a[0])->dtype;
  bool counts = given(e, 3) && a[3]->u.bval;
  bool equal_nan = !given(e, 5) || a[5]->u.bval;
  asc__lview in;
  asc__irval n, k[1], x, y, is_new, nv;
  asc__irblock *save, *body;
  int32_t s, nu = newreg(ls, ascInt64, "unique_n");
  int32_t j = newreg(ls, ascInt64, "unique_at");
  asc__irins *i;
  asc__lower_arg_view(ls, a[0], &in);
  s = asc__lower_sorted_copy(ls, &in, dt, true, 0);
  n = asc__lower_view_size(ls, &in);
  mov(ls, nu, i64(0));
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      nv = asc__irv_reg(nu);
      regs[0] = asc__lower_alloc_array(ls, dt, 1, &nv);
      if (counts)
        regs[1] = asc__lower_alloc_array(ls, ascInt64, 1, &nv);
      mov(ls, j, i64(-1));
    }
    save = asc__lower_open_nest(ls, &n, 1, k);
    x = load1(ls, s, k[0]);
    y = load1(ls, s, op2(ls, ASC_IR_MAX, ascInt64,
                         op2(ls, ASC_IR_SUB, ascInt64, k[0], i64(1)), i64(0)));
    is_new = op2(ls, ASC_IR_NE, dt, x, y);
    if (equal_nan && asc__dt_is_float(dt))
      is_new = op2(ls, ASC_IR_AND, ascBool, is_new,
                   op2(ls, ASC_IR_OR, ascBool, op2(ls, ASC_IR_EQ, dt, x, x),
                       op2(ls, ASC_IR_EQ, dt, y, y)));
    is_new = op2(ls, ASC_IR_OR, ascBool, is_new,
                 op2(ls, ASC_IR_EQ, ascInt64, k[0], i64(0)));
    if (pass == 0) {
      mov(ls, nu, op2(ls, ASC_IR_ADD, ascInt64, asc__irv_reg(nu),
                      conv(ls, is_new, ascInt64)));
      ls->cur = save;
      continue;
    }
    mov(ls, j, op2(ls, ASC_IR_ADD, ascInt64, asc__irv_reg(j),
                   conv(ls, is_new, ascInt64)));
    body = ls->cur;
    i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = is_new;
    ls->cur = &i->body[0];
    asc__lower_store_at(ls, regs[0], asc__irv_reg(j), x);
    if (counts)
      asc__lower_store_at(ls, regs[1], asc__irv_reg(j), i64(0));
    ls->cur = body;
    if (counts)
      asc__lower_store_at(ls, regs[1], asc__irv_reg(j),
                          op2(ls, ASC_IR_ADD, ascInt64,
                              load1(ls, regs[1], asc__irv_reg(j)), i64(1)));
    ls->cur = save;
  }
  i = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
  i->args[0] = asc__irv_reg(s);
}
