/*
 * Types of the diagonal functions of ASC_NUMPY_FUNCS (docs/arrays.md,
 * "Diagonals and flips"): np.trace and np.diag.  lower_numpy2.c lowers
 * them.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

static bool given(const asc__ast_expr *call, int i) {
  return i < call->u.call.nrargs && call->u.call.rargs[i] != NULL &&
         call->u.call.rargs[i]->kind != ASC_EXPR_NONE;
}

/* Argument i of call e (its name what), when given, an integer number
 * (typed int64); false after an error. */
static bool int_arg(run *r, asc__ast_expr *e, int i, const char *fn,
                    const char *what) {
  asc__ast_expr *a;
  asc__type *t;
  if (!given(e, i))
    return true;
  a = e->u.call.rargs[i];
  t = asc__infer_expr(r, a);
  if (t == NULL || is_err(t))
    return t != NULL;
  t = asc__ty_find(t);
  if (!asc__ty_is_intlike(t) || t->kind != ASC_TY_SCALAR) {
    report(r, a->loc, "%s's %s must be an integer, not %s", fn, what,
           py_name(r, t));
    return false;
  }
  asc__infer_coerce(r, a, scalar(r, ascInt64), 0);
  return true;
}

/* numpy's dtype of a sum: bools and integers narrower than 64 bits in
 * int64 (uint64 for the unsigned), others their own. */
static ascDataType sum_dtype(ascDataType dt) {
  switch (dt) {
  case ascBool:
  case ascInt8:
  case ascInt16:
  case ascInt32:
    return ascInt64;
  case ascUInt8:
  case ascUInt16:
  case ascUInt32:
    return ascUInt64;
  default:
    return dt;
  }
}

/* np.trace(a, offset=0): the sum of a 2-D a's diagonal offset above the
 * main one (below it when negative), in numpy's sum dtype. */
asc__type *asc__infer_trace(run *r, asc__ast_expr *e) {
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  PROPAGATE(t);
  if (t->ndim < 2) {
    report(r, e->u.call.rargs[0]->loc,
           "diag requires an array of at least two dimensions");
    return err(r);
  }
  if (t->ndim > 2) {
    report(r, e->u.call.rargs[0]->loc, "np.trace of an array of %d "
           "dimensions is not supported in kernels yet (2-D is)",
           (int)t->ndim);
    return err(r);
  }
  if (!int_arg(r, e, 1, "np.trace", "offset"))
    return err(r);
  return scalar(r, sum_dtype((ascDataType)t->dtype));
}

/* np.diag(v, k=0): of a 1-D v the square array with v on its diagonal
 * k, of a 2-D v a new 1-D array of its diagonal k; v's dtype. */
asc__type *asc__infer_diag(run *r, asc__ast_expr *e) {
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  PROPAGATE(t);
  if (t->ndim != 1 && t->ndim != 2) {
    report(r, e->u.call.rargs[0]->loc, "Input must be 1- or 2-d.");
    return err(r);
  }
  if (!int_arg(r, e, 1, "np.diag", "k"))
    return err(r);
  return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, 3 - t->ndim, false);
}
