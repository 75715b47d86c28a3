/*
 * The axis= argument of numpy's reductions (docs/arrays.md, "Reductions
 * and comparisons"): one constant axis, or for sum, mean, var and std
 * a tuple of them, normalised against the array's number of axes.
 */
#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

/* A constant axis argument (an int literal, maybe negated) of an array of
 * nd axes, normalised; -1 when there is no axis (None or left out), -2
 * after an error. */
int asc__infer_reduction_axis(run *r, asc__ast_expr *a, int32_t nd) {
  int64_t k;
  if (a == NULL || a->kind == ASC_EXPR_NONE)
    return -1;
  if (a->kind == ASC_EXPR_INT && a->u.ival < 64)
    k = (int64_t)a->u.ival;
  else if (asc__infer_is_neg_int_literal(a) &&
           a->u.unary.operand->u.ival < 64)
    k = -(int64_t)a->u.unary.operand->u.ival;
  else if (a->kind == ASC_EXPR_TUPLE) {
    report(r, a->loc, "a tuple of axes is supported for sum, prod, mean, "
           "min, max, any, all, var and std; reduce along one axis at a "
           "time here");
    return -2;
  } else if (a->kind == ASC_EXPR_NAME) {
    /* the axis decides the result's shape when the kernel is compiled;
     * a name's value is known only when it runs */
    report(r, a->loc, "axis must be an integer constant (or None) written "
           "in the call; '%s' is a variable (a helper's parameter is one "
           "too, whatever its default or argument)", a->u.name.id);
    return -2;
  } else {
    report(r, a->loc, "axis must be an integer constant (or None)");
    return -2;
  }
  if (k < -nd || k >= nd) {
    report(r, a->loc, "axis %lld is out of bounds for an array of "
           "dimension %d", (long long)k, (int)nd);
    return -2;
  }
  asc__infer_settype(r, a, scalar(r, ascInt64));
  return (int)(k < 0 ? k + nd : k);
}

/* The tuple of axes t of sum, mean, var or std over an array of nd
 * axes: each a constant in bounds, negative ones counted from the end,
 * none twice (numpy's rule).  The reduction lowers it as one loop nest
 * over those axes (lower_array.c, call_axes); *count: how many.  Returns
 * the first axis, or -2 after an error. */
int asc__infer_tuple_axes(run *r, asc__ast_expr *t, int32_t nd, int *count) {
  unsigned seen = 0;
  int first = -2;
  if (t->u.tuple.n < 1 || t->u.tuple.n > nd) {
    report(r, t->loc, "a tuple of axes of an array of dimension %d names "
           "1 to %d axes", (int)nd, (int)nd);
    return -2;
  }
  for (int k = 0; k < t->u.tuple.n; k++) {
    asc__ast_expr *x = t->u.tuple.elts[k];
    int ax = x->kind == ASC_EXPR_TUPLE ? -1 : asc__infer_reduction_axis(r, x, nd);
    if (ax == -2)
      return -2;
    if (ax < 0) {
      report(r, x->loc, "axis must be an integer constant");
      return -2;
    }
    if (seen >> ax & 1u) {
      report(r, t->loc, "duplicate value in 'axis'");
      return -2;
    }
    seen |= 1u << ax;
    if (first < 0)
      first = ax;
  }
  asc__infer_expr(r, t);
  *count = t->u.tuple.n;
  return first;
}
