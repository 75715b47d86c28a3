/*
 * Types of numpy's histograms (docs/arrays.md, "Histograms"):
 * np.histogram, whose result is a tuple of two arrays (the counts and
 * the bin edges), np.histogram_bin_edges and np.unique.  lower_stats.c
 * lowers them.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

static bool given(const asc__ast_expr *call, int i) {
  return i < call->u.call.nrargs && call->u.call.rargs[i] != NULL &&
         call->u.call.rargs[i]->kind != ASC_EXPR_NONE;
}

/* range=(lo, hi): two real numbers written in place. */
static bool hist_range(run *r, const char *fn, asc__ast_expr *a) {
  if (a->kind != ASC_EXPR_TUPLE || a->u.tuple.n != 2) {
    report(r, a->loc, "%s's range is a pair (lo, hi) written in place in "
           "kernels", fn);
    return false;
  }
  for (int k = 0; k < 2; k++) {
    asc__type *t = asc__infer_expr(r, a->u.tuple.elts[k]);
    if (t == NULL || is_err(t))
      return false;
    t = asc__ty_find(t);
    if (t->kind != ASC_TY_SCALAR || asc__dtype_is_complex(t->dtype)) {
      report(r, a->u.tuple.elts[k]->loc, "%s's range takes real numbers, "
             "not %s", fn, py_name(r, t));
      return false;
    }
  }
  asc__infer_expr(r, a);
  return true;
}

/* np.histogram(a, bins=10, range=None, density=None, weights=None):
 * a an array of real numbers (flattened); bins an integer (that many
 * equal bins between range, or a's least and greatest element) or a 1-D
 * array of edges; (hist, bin_edges).  The edges are float64 for an
 * integer a, a's dtype for a float one, the bins' own for an array of
 * them; hist int64, the weights' dtype with weights, float64 (complex128)
 * with density.  np.histogram_bin_edges(a, bins, range, weights): the
 * edges alone. */
asc__type *asc__infer_histogram(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  bool edges_only = e->u.call.builtin->id == ASC_BI_NP_HISTOGRAM_BIN_EDGES;
  const char *fn = edges_only ? "np.histogram_bin_edges" : "np.histogram";
  int wi = edges_only ? 3 : 4;
  asc__type *t = asc__infer_array_value(r, a[0]), *bt = NULL, *wt = NULL;
  asc__type *el[2];
  ascDataType edt, hdt = ascInt64;
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind != ASC_TY_TENSOR) {
    report(r, a[0]->loc, "%s() in kernels takes an array here, not %s", fn,
           py_name(r, t));
    return err(r);
  }
  if (asc__dtype_is_complex(t->dtype) || t->dtype == ascBool) {
    report(r, a[0]->loc, "%s of %s arrays is not supported in kernels",
           fn, asc__dtype_long(t->dtype));
    return err(r);
  }
  edt = asc__dtype_is_float(t->dtype) ? (ascDataType)t->dtype : ascFloat64;
  if (given(e, 1)) {
    if (a[1]->kind == ASC_EXPR_STR) {
      report(r, a[1]->loc, "%s's bins as a string (an estimator) is not "
             "supported in kernels yet", fn);
      return err(r);
    }
    bt = asc__infer_expr(r, a[1]);
    PROPAGATE(bt);
    bt = asc__ty_find(bt);
    if (bt->kind == ASC_TY_TENSOR) {
      if (bt->ndim != 1) {
        report(r, a[1]->loc, "`bins` must be 1d, when an array");
        return err(r);
      }
      if (asc__dtype_is_complex(bt->dtype) || bt->dtype == ascBool) {
        report(r, a[1]->loc, "%s's bins of %s is not supported in kernels",
               fn, asc__dtype_long(bt->dtype));
        return err(r);
      }
      edt = bt->dtype;
    } else if (bt->kind == ASC_TY_SCALAR && asc__ty_is_intlike(bt) &&
               bt->dtype != ascBool) {
      asc__infer_coerce(r, a[1], scalar(r, ascInt64), 0);
    } else {
      report(r, a[1]->loc, "`bins` must be an integer, a string, or an "
             "array");
      return err(r);
    }
  }
  if (given(e, 2) && !hist_range(r, fn, a[2]))
    return err(r);
  if (given(e, wi)) {
    wt = asc__infer_array_value(r, a[wi]);
    PROPAGATE(wt);
    wt = asc__ty_find(wt);
    if (wt->kind != ASC_TY_TENSOR) {
      report(r, a[wi]->loc, "%s's weights is an array in kernels, not %s",
             fn, py_name(r, wt));
      return err(r);
    }
    if (wt->ndim != t->ndim) {
      report(r, a[wi]->loc, "weights should have the same shape as a.");
      return err(r);
    }
    hdt = wt->dtype;
  }
  if (edges_only)
    return asc__ty_tensor(r->in->c, edt, 1, true);
  if (given(e, 3)) {
    if (a[3]->kind != ASC_EXPR_BOOL) {
      report(r, a[3]->loc, "np.histogram's density is True or False "
             "written in place in kernels");
      return err(r);
    }
    asc__infer_expr(r, a[3]);
    if (a[3]->u.bval)
      hdt = wt != NULL && asc__dtype_is_complex(wt->dtype) ? ascComplex128
                                                            : ascFloat64;
  }
  el[0] = asc__ty_tensor(r->in->c, hdt, 1, true);
  el[1] = asc__ty_tensor(r->in->c, edt, 1, true);
  return asc__ty_tuple(r->in->c, 2, el);
}

/* np.unique(ar, return_counts=False, equal_nan=True, sorted=True): the
 * sorted distinct elements of ar (flattened), 1-D of ar's dtype, and
 * with return_counts the int64 counts of each (a tuple).  return_index,
 * return_inverse and axis are not supported yet. */
asc__type *asc__infer_unique(run *r, asc__ast_expr *e) {
  static const char *const params[] = {"ar", "return_index",
                                       "return_inverse", "return_counts",
                                       "axis", "equal_nan", "sorted"};
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_array_value(r, a[0]), *el[2];
  bool counts = false;
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind != ASC_TY_TENSOR) {
    report(r, a[0]->loc, "np.unique() in kernels takes an array here, not "
           "%s", py_name(r, t));
    return err(r);
  }
  if (asc__dtype_is_complex(t->dtype)) {
    report(r, a[0]->loc, "np.unique of complex arrays is not supported in "
           "kernels yet");
    return err(r);
  }
  for (int i = 1; i < 7; i++) {
    if (!given(e, i))
      continue;
    if (i == 1 || i == 2 || i == 4) {
      if (a[i]->kind == ASC_EXPR_BOOL && !a[i]->u.bval && i != 4) {
        asc__infer_expr(r, a[i]);
        continue;
      }
      report(r, a[i]->loc, "np.unique's %s is not supported in kernels yet",
             params[i]);
      return err(r);
    }
    if (a[i]->kind != ASC_EXPR_BOOL) {
      report(r, a[i]->loc, "np.unique's %s is True or False written in "
             "place in kernels", params[i]);
      return err(r);
    }
    asc__infer_expr(r, a[i]);
    if (i == 3)
      counts = a[i]->u.bval;
  }
  el[0] = asc__ty_tensor(r->in->c, t->dtype, 1, true);
  if (!counts)
    return el[0];
  el[1] = asc__ty_tensor(r->in->c, ascInt64, 1, true);
  return asc__ty_tuple(r->in->c, 2, el);
}
