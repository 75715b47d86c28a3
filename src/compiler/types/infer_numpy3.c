/*
 * Types of more functions of ASC_NUMPY_FUNCS (docs/arrays.md,
 * "Rounding, signs, differences and quantiles"): np.diff,
 * np.maximum.accumulate and np.minimum.accumulate, np.percentile,
 * np.quantile and np.median.
 * lower_numpy3.c lowers them.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

static bool given(const asc__ast_expr *call, int i) {
  return i < call->u.call.nrargs && call->u.call.rargs[i] != NULL &&
         call->u.call.rargs[i]->kind != ASC_EXPR_NONE;
}

/* np.diff(a, n=1, axis=-1): a's dtype and number of axes (bools give
 * bools: numpy's difference of bools is !=); n an integer written in
 * place, not negative; prepend and append not yet. */
asc__type *asc__infer_diff(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  int64_t n = 1;
  int axis;
  PROPAGATE(t);
  if (t->ndim == 0) {
    report(r, a[0]->loc, "diff requires input that is at least one "
           "dimensional");
    return err(r);
  }
  if (given(e, 1)) {
    if (!asc__expr_int_literal(a[1], &n)) {
      report(r, a[1]->loc, "np.diff's n is an integer written in place in "
             "kernels");
      return err(r);
    }
    if (n < 0) {
      report(r, a[1]->loc, "order must be non-negative but got %lld",
             (long long)n);
      return err(r);
    }
    asc__infer_settype(r, a[1], scalar(r, ascInt64));
  }
  if (given(e, 2) && !asc__infer_numpy_axis(r, e, a[2], t->ndim, &axis))
    return err(r);
  for (int i = 3; i < 5; i++)
    if (given(e, i)) {
      report(r, a[i]->loc, "np.diff's %s is not supported in kernels yet",
             i == 3 ? "prepend" : "append");
      return err(r);
    }
  return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, t->ndim, false);
}

/* np.maximum.accumulate(array, axis=0) and np.minimum.accumulate: the
 * array's dtype and shape; axis an integer constant. */
asc__type *asc__infer_accumulate(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  int axis;
  PROPAGATE(t);
  if (t->ndim == 0) {
    report(r, a[0]->loc, "cannot accumulate on a scalar");
    return err(r);
  }
  if (asc__dtype_is_complex(t->dtype)) {
    report(r, a[0]->loc, "np.%s of complex arrays is not supported in "
           "kernels", e->u.call.builtin->name);
    return err(r);
  }
  if (given(e, 1) && !asc__infer_numpy_axis(r, e, a[1], t->ndim, &axis))
    return err(r);
  return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, t->ndim, false);
}

/* Argument i of call e (what names it), if given: True or False written
 * in place into *val (left as it is when not given); false after an
 * error. */
static bool bool_arg(run *r, asc__ast_expr *e, int i, const char *what,
                     bool *val) {
  asc__ast_expr *x;
  if (!given(e, i))
    return true;
  x = e->u.call.rargs[i];
  if (x->kind != ASC_EXPR_BOOL) {
    report(r, x->loc, "np.%s's %s is True or False written in place in "
           "kernels", e->u.call.builtin->name, what);
    return false;
  }
  *val = x->u.bval;
  asc__infer_expr(r, x);
  return true;
}

/* The q of np.percentile / np.quantile call e: a number, or a tuple or
 * list of numbers written in place (*nq its length, else -1); false
 * after an error.  *weak: q a Python number (numpy's weak q keeps a
 * float32 a's dtype). */
static bool quantile_q(run *r, asc__ast_expr *e, int *nq, bool *weak) {
  asc__ast_expr *q = e->u.call.rargs[1];
  bool disp = q->kind == ASC_EXPR_TUPLE;
  int n = disp ? q->u.tuple.n : 1;
  *nq = disp ? n : -1;
  *weak = !disp;
  for (int k = 0; k < n; k++) {
    asc__ast_expr *x = disp ? q->u.tuple.elts[k] : q;
    asc__type *t = asc__infer_expr(r, x);
    if (t == NULL || is_err(t))
      return false;
    t = asc__ty_find(t);
    if (t->kind != ASC_TY_SCALAR || asc__dtype_is_complex(t->dtype) ||
        t->dtype == ascBool) {
      report(r, x->loc, "np.%s's q is a number or a tuple or list of "
             "numbers written in place in kernels, not %s",
             e->u.call.builtin->name, tn(r, t));
      return false;
    }
    if (!t->weak)
      *weak = false;
    asc__infer_coerce(r, x, scalar(r, ascFloat64), 0);
  }
  if (disp && (n < 1 || n > 64)) {
    report(r, q->loc, "np.%s's q names 1 to 64 numbers in kernels",
           e->u.call.builtin->name);
    return false;
  }
  if (disp)
    asc__infer_expr(r, q);
  return true;
}

/* np.percentile(a, q, axis=None, keepdims=False) and np.quantile:
 * numpy's default method ('linear'); a number for a number q of every
 * element, else an array of q's length first, then a's axes but the
 * reduced one (kept of length 1 with keepdims).  float64, or a float a's
 * dtype for a Python number q, as numpy's. */
asc__type *asc__infer_quantile(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  const char *name = e->u.call.builtin->name;
  int nq, axis = -1, nd;
  bool weak, keep = false;
  ascDataType rdt;
  PROPAGATE(t);
  if (asc__dtype_is_complex(t->dtype)) {
    report(r, a[0]->loc, "a must be an array of real numbers");
    return err(r);
  }
  if (t->dtype == ascBool) {
    report(r, a[0]->loc, "np.%s of bools is not supported (numpy: "
           "boolean subtract)", name);
    return err(r);
  }
  if (!quantile_q(r, e, &nq, &weak))
    return err(r);
  if (given(e, 2) && !asc__infer_numpy_axis(r, e, a[2], t->ndim, &axis))
    return err(r);
  for (int i = 3; i < 5; i++)
    if (given(e, i)) {
      report(r, a[i]->loc, "np.%s's %s is not supported in kernels", name,
             i == 3 ? "out" : "overwrite_input");
      return err(r);
    }
  if (given(e, 5) && (a[5]->kind != ASC_EXPR_STR ||
                      strcmp(a[5]->u.str.s, "linear") != 0)) {
    report(r, a[5]->loc, "np.%s's method is 'linear' (numpy's default) "
           "in kernels", name);
    return err(r);
  }
  if (!bool_arg(r, e, 6, "keepdims", &keep))
    return err(r);
  rdt = asc__dtype_is_float(t->dtype) && weak ? (ascDataType)t->dtype
                                              : ascFloat64;
  nd = keep ? t->ndim : axis >= 0 ? t->ndim - 1 : 0;
  if (nq >= 0)
    nd++;
  if (nd == 0)
    return scalar(r, rdt);
  return asc__ty_tensor(r->in->c, rdt, nd, false);
}

/* np.median(a, axis=None, out=None, overwrite_input=False,
 * keepdims=False): a's float dtype (float64 for integers and bools, as
 * numpy's mean); a number of every element, else an array of a's axes
 * but the reduced one (kept of length 1 with keepdims).  overwrite_input
 * True or False (a is left as it is, which numpy allows); complex arrays
 * and out not yet. */
asc__type *asc__infer_median(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  int axis = -1, nd;
  bool keep = false, over = false;
  ascDataType rdt;
  PROPAGATE(t);
  if (asc__dtype_is_complex(t->dtype)) {
    report(r, a[0]->loc, "np.median of complex arrays is not supported in "
           "kernels yet");
    return err(r);
  }
  if (given(e, 1) && !asc__infer_numpy_axis(r, e, a[1], t->ndim, &axis))
    return err(r);
  if (given(e, 2)) {
    report(r, a[2]->loc, "np.median's out is not supported in kernels");
    return err(r);
  }
  if (!bool_arg(r, e, 3, "overwrite_input", &over) ||
      !bool_arg(r, e, 4, "keepdims", &keep))
    return err(r);
  rdt = asc__dtype_is_float(t->dtype) ? (ascDataType)t->dtype : ascFloat64;
  nd = keep ? t->ndim : axis >= 0 ? t->ndim - 1 : 0;
  if (nd == 0)
    return scalar(r, rdt);
  return asc__ty_tensor(r->in->c, rdt, nd, false);
}
