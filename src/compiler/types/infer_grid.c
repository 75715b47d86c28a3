/*
 * Types of numpy's grids (docs/arrays.md, "Grids"): np.mgrid[...] and
 * np.ogrid[...] (subscripts of the two objects, not calls), np.meshgrid
 * and np.indices(..., sparse=True).  lower_grid.c lowers them in the same
 * order.  A grid of several axes that numpy gives as a tuple of arrays
 * (np.ogrid, np.meshgrid, sparse np.indices) is a tuple type of arrays:
 * the kernel unpacks it (x, y = ...), indexes it with a constant
 * ([0]) or returns it (docs/architecture.md, "A numpy function whose
 * result is a tuple of arrays").
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

/* ------------------------------------------------- np.mgrid, np.ogrid */

/* One part of a slice of a grid (start, stop or step): a number, typed
 * int64 when an integer; false after an error.  *is_float is set for a
 * float, *is_complex for a complex step (a number of points). */
static bool grid_part(run *r, const char *name, asc__ast_expr *p,
                      bool step, bool *is_float, bool *is_complex) {
  asc__type *t;
  if (p == NULL)
    return true;
  t = asc__infer_expr(r, p);
  if (t == NULL || is_err(t))
    return false;
  t = asc__ty_find(t);
  if (t->kind != ASC_TY_SCALAR || t->dtype == ascBool ||
      (asc__dtype_is_complex(t->dtype) && !step)) {
    report(r, p->loc, "np.%s's slices take numbers (start:stop:step, a "
           "complex step a number of points), not %s", name, py_name(r, t));
    return false;
  }
  if (asc__dtype_is_complex(t->dtype))
    *is_complex = true;
  else if (!asc__ty_is_intlike(t))
    *is_float = true;
  else
    asc__infer_coerce(r, p, scalar(r, ascInt64), 0);
  return true;
}

/* np.mgrid[s0, s1, ...] and np.ogrid[...]: each index a slice with a
 * stop.  numpy's dtype: int64 when every start, stop and step is an
 * integer, float64 otherwise (a complex step counts points).  mgrid: one
 * array of shape (n, d0, d1, ...); ogrid: a tuple of n arrays of n axes
 * (each of extent 1 but its own); one slice, not in a tuple: the 1-D
 * array of either. */
asc__type *asc__infer_grid(run *r, asc__ast_expr *e) {
  const asc__builtin *b = e->u.sub.value->u.attr.builtin;
  asc__ast_expr *ix = e->u.sub.index, *one[1];
  asc__ast_expr **elts = one;
  bool is_float = false, is_complex = false, sparse = b->id == ASC_BI_NP_OGRID;
  ascDataType dt;
  int n = 1;
  if (ix->kind == ASC_EXPR_TUPLE) {
    elts = ix->u.tuple.elts;
    n = ix->u.tuple.n;
  } else {
    one[0] = ix;
  }
  if (n == 0 || n + 1 > ASC_MAX_DIMS) {
    report(r, ix->loc, "np.%s takes 1 to %d slices in kernels", b->name,
           ASC_MAX_DIMS - 1);
    return err(r);
  }
  for (int k = 0; k < n; k++) {
    asc__ast_expr *s = elts[k];
    if (s->kind != ASC_EXPR_SLICE || s->u.slice.ellipsis) {
      report(r, s->loc, "np.%s is indexed with slices in kernels "
             "(start:stop:step)", b->name);
      return err(r);
    }
    if (s->u.slice.upper == NULL) {
      report(r, s->loc, "np.%s's slices need a stop in kernels", b->name);
      return err(r);
    }
    if (!grid_part(r, b->name, s->u.slice.lower, false, &is_float,
                   &is_complex) ||
        !grid_part(r, b->name, s->u.slice.upper, false, &is_float,
                   &is_complex) ||
        !grid_part(r, b->name, s->u.slice.step, true, &is_float,
                   &is_complex))
      return err(r);
  }
  dt = is_float || is_complex ? ascFloat64 : ascInt64;
  if (ix->kind != ASC_EXPR_TUPLE)
    return asc__ty_tensor(r->in->c, dt, 1, true);
  if (!sparse)
    return asc__ty_tensor(r->in->c, dt, n + 1, true);
  {
    asc__type *el[ASC_MAX_DIMS];
    for (int k = 0; k < n; k++)
      el[k] = asc__ty_tensor(r->in->c, dt, n, true);
    return asc__ty_tuple(r->in->c, n, el);
  }
}

/* ----------------------------------------------------------- np.meshgrid */

static bool const_flag(run *r, asc__ast_expr *a, const char *what,
                       bool *v) {
  if (a == NULL || a->kind == ASC_EXPR_NONE)
    return true;
  if (a->kind != ASC_EXPR_BOOL) {
    report(r, a->loc, "%s is True or False written in place in kernels",
           what);
    return false;
  }
  *v = a->u.bval;
  asc__infer_expr(r, a);
  return true;
}

/* np.meshgrid(*xi, indexing='xy', sparse=False, copy=True): each array
 * flattened; a tuple of len(xi) new arrays of len(xi) axes, each of xi's
 * own dtype ('xy' swaps the first two axes). */
asc__type *asc__infer_meshgrid(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *el[ASC_MAX_DIMS];
  bool sparse = false, copy = true;
  int n = 0;
  for (int k = 0; k < 8; k++)
    if (k < e->u.call.nrargs && a[k] != NULL && a[k]->kind != ASC_EXPR_NONE)
      n = k + 1;
  for (int k = 0; k < n; k++) {
    asc__type *t;
    if (a[k] == NULL || a[k]->kind == ASC_EXPR_NONE) {
      report(r, e->loc, "np.meshgrid() in kernels takes arrays, not None");
      return err(r);
    }
    t = asc__infer_array_value(r, a[k]);
    PROPAGATE(t);
    t = asc__ty_find(t);
    if (t->kind != ASC_TY_TENSOR) {
      report(r, a[k]->loc, "np.meshgrid() in kernels takes arrays, not %s",
             py_name(r, t));
      return err(r);
    }
    el[k] = t;
  }
  if (n == 0) {
    report(r, e->loc, "np.meshgrid() in kernels takes 1 to 8 arrays (numpy "
           "gives an empty tuple for none)");
    return err(r);
  }
  if (e->u.call.nrargs > 8 && a[8] != NULL && a[8]->kind != ASC_EXPR_NONE) {
    if (a[8]->kind != ASC_EXPR_STR) {
      report(r, a[8]->loc, "np.meshgrid's indexing is 'xy' or 'ij' written "
             "in place in kernels");
      return err(r);
    }
    if (strcmp(a[8]->u.str.s, "xy") != 0 && strcmp(a[8]->u.str.s, "ij") != 0) {
      report(r, a[8]->loc, "Valid values for `indexing` are 'xy' and 'ij'.");
      return err(r);
    }
    asc__infer_expr(r, a[8]);
  }
  if ((e->u.call.nrargs > 9 &&
       !const_flag(r, a[9], "np.meshgrid's sparse", &sparse)) ||
      (e->u.call.nrargs > 10 &&
       !const_flag(r, a[10], "np.meshgrid's copy", &copy)))
    return err(r);
  for (int k = 0; k < n; k++)
    el[k] = asc__ty_tensor(r->in->c, el[k]->dtype, n, true);
  return asc__ty_tuple(r->in->c, n, el);
}

/* ------------------------------------------------ np.indices(sparse=True) */

/* The tuple of n int64 arrays of n axes of sparse np.indices. */
asc__type *asc__infer_sparse_indices(run *r, int n) {
  asc__type *el[ASC_MAX_DIMS];
  for (int k = 0; k < n; k++)
    el[k] = asc__ty_tensor(r->in->c, ascInt64, n, true);
  return asc__ty_tuple(r->in->c, n, el);
}
