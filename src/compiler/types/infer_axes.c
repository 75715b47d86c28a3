/*
 * The axis= argument of numpy's reductions (docs/arrays.md, "Reductions
 * and comparisons"): one constant axis, or for sum, mean, var and std
 * a tuple of them, normalised against the array's number of axes.  And
 * the axes of the view calls, read from the call as written (integer
 * constants): np.transpose / a.transpose, np.swapaxes / a.swapaxes,
 * np.moveaxis, np.flip / flipud / fliplr and np.rot90, for the type
 * rules (infer_call.c, view_call) and the lowering (lower_view.c).
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

bool asc__rot90_plan(const asc__ast_expr *call, int nd, int *k, int *a0,
                     int *a1, const char **why, const asc__ast_expr **bad) {
  const asc__ast_expr *kk = call->u.call.nrargs > 1 ? call->u.call.rargs[1]
                                                    : NULL;
  const asc__ast_expr *ax = call->u.call.nrargs > 2 ? call->u.call.rargs[2]
                                                    : NULL;
  int64_t v = 1, x[2] = {0, 1};
  *bad = call->u.call.rargs[0];
  if (kk != NULL && kk->kind != ASC_EXPR_NONE &&
      !asc__expr_int_literal(kk, &v)) {
    *bad = kk;
    *why = "np.rot90's k is an integer constant in kernels";
    return false;
  }
  if (ax != NULL && ax->kind != ASC_EXPR_NONE) {
    *bad = ax;
    if (ax->kind != ASC_EXPR_TUPLE) {
      *why = "np.rot90's axes is a tuple of two integer constants in kernels";
      return false;
    }
    if (ax->u.tuple.n != 2) {
      *why = "len(axes) must be 2.";
      return false;
    }
    for (int i = 0; i < 2; i++)
      if (!asc__expr_int_literal(ax->u.tuple.elts[i], &x[i])) {
        *why = "np.rot90's axes is a tuple of two integer constants in "
               "kernels";
        return false;
      }
  }
  if (x[0] == x[1] || x[0] - x[1] == nd || x[1] - x[0] == nd) {
    *why = "Axes must be different.";
    return false;
  }
  if (x[0] >= nd || x[0] < -nd || x[1] >= nd || x[1] < -nd) {
    *why = "Axes out of range for the array's number of dimensions.";
    return false;
  }
  *k = (int)(((v % 4) + 4) % 4);
  *a0 = (int)(x[0] < 0 ? x[0] + nd : x[0]);
  *a1 = (int)(x[1] < 0 ? x[1] + nd : x[1]);
  return true;
}

/* Axis e of an array of nd axes: an integer constant in [-nd, nd), *v
 * counted from the start; false otherwise. */
static bool const_axis(const asc__ast_expr *e, int nd, int64_t *v) {
  if (!asc__expr_int_literal(e, v) || *v < -nd || *v >= nd)
    return false;
  if (*v < 0)
    *v += nd;
  return true;
}

bool asc__flip_axes(const asc__ast_expr *call, int nd, bool *axes,
                    const asc__ast_expr **bad) {
  asc__ast_expr *a = call->u.call.nrargs > 1 ? call->u.call.rargs[1] : NULL;
  asc__ast_expr *const *ax = &a;
  int n = 1;
  asc__builtin_id id = call->u.call.builtin->id;
  if (id == ASC_BI_NP_FLIPUD || id == ASC_BI_NP_FLIPLR) {
    int k = id == ASC_BI_NP_FLIPLR; /* numpy: m[::-1] and m[:, ::-1] */
    for (int j = 0; j < nd; j++)
      axes[j] = j == k;
    *bad = call->u.call.rargs[0];
    return k < nd;
  }
  for (int k = 0; k < nd; k++)
    axes[k] = a == NULL || a->kind == ASC_EXPR_NONE;
  *bad = a;
  if (a == NULL || a->kind == ASC_EXPR_NONE)
    return true;
  if (a->kind == ASC_EXPR_TUPLE) {
    ax = a->u.tuple.elts;
    n = a->u.tuple.n;
  }
  for (int i = 0; i < n; i++) {
    int64_t v;
    *bad = ax[i];
    if (!const_axis(ax[i], nd, &v) || axes[v])
      return false;
    axes[v] = true;
  }
  return true;
}

bool asc__transpose_axes(const asc__ast_expr *call, int nd, int *perm,
                         const asc__ast_expr **bad) {
  asc__ast_expr *const *a = call->u.call.rargs;
  asc__ast_expr *const *ax;
  int na = call->u.call.nrargs, n;
  bool seen[ASC_MAX_DIMS] = {false};
  if (call->u.call.builtin->id == ASC_BI_NP_SWAPAXES ||
      call->u.call.builtin->id == ASC_BI_NP_MOVEAXIS) {
    /* np.swapaxes(a, i, j): the two exchanged; np.moveaxis(a, s, d):
     * axis s taken out and put back at d, the others in order */
    int64_t v[2];
    for (int k = 0; k < 2; k++) {
      *bad = a[k + 1];
      if (na < 3 || !const_axis(a[k + 1], nd, &v[k]))
        return false;
    }
    if (call->u.call.builtin->id == ASC_BI_NP_SWAPAXES) {
      for (int k = 0; k < nd; k++)
        perm[k] = k == v[0] ? (int)v[1] : k == v[1] ? (int)v[0] : k;
    } else {
      for (int k = 0, o = 0; k < nd; k++) {
        if (o == v[0])
          o++;
        perm[k] = k == v[1] ? (int)v[0] : o++;
      }
    }
    return true;
  }
  while (na > 1 && a[na - 1] == NULL) /* the unused parameter slots */
    na--;
  *bad = call;
  if (na == 1 || (na == 2 && a[1]->kind == ASC_EXPR_NONE)) {
    for (int k = 0; k < nd; k++)
      perm[k] = nd - 1 - k;
    return true;
  }
  if (na == 2 && a[1]->kind == ASC_EXPR_TUPLE) {
    ax = a[1]->u.tuple.elts;
    n = a[1]->u.tuple.n;
  } else {
    ax = a + 1;
    n = na - 1;
  }
  if (n != nd)
    return false;
  for (int k = 0; k < n; k++) {
    int64_t v;
    *bad = ax[k];
    if (!const_axis(ax[k], nd, &v) || seen[v])
      return false;
    seen[v] = true;
    perm[k] = (int)v;
  }
  return true;
}
