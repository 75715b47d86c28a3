/*
 * Types of the numpy functions of ASC_NUMPY_FUNCS (front/builtins.h): one
 * function per family, in the order of the list; lower_numpy.c lowers
 * them in the same order (docs/architecture.md, "A new numpy function").
 * Each checks its arguments as numpy would, and what numpy decides from
 * the values but a kernel must know when it is compiled (an axis, the
 * length of reps) is an integer constant, or a compile error at its
 * line.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

/* numpy's name of the function of call e, for messages: "np.roll". */
static const char *np_name(run *r, const asc__ast_expr *e) {
  return asc__arena_printf(r->in->c, "np.%s", e->u.call.builtin->name);
}

static bool given(const asc__ast_expr *call, int i) {
  return i < call->u.call.nrargs && call->u.call.rargs[i] != NULL &&
         call->u.call.rargs[i]->kind != ASC_EXPR_NONE;
}

/* Argument i, an array: its type, NULL (unknown yet) or an error. */
asc__type *asc__infer_numpy_array_arg(run *r, asc__ast_expr *e, int i) {
  asc__ast_expr *a = e->u.call.rargs[i];
  asc__type *t = asc__infer_expr(r, a);
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind != ASC_TY_TENSOR) {
    report(r, a->loc, "%s() in kernels takes an array here, not %s",
           np_name(r, e), py_name(r, t));
    return err(r);
  }
  return t;
}

/* An integer value a (a run-time number): typed int64; false after an
 * error. */
static bool int_value(run *r, const asc__ast_expr *call, asc__ast_expr *a,
                      const char *what) {
  asc__type *t = asc__infer_expr(r, a);
  if (t == NULL || is_err(t))
    return t != NULL;
  if (!asc__ty_is_intlike(t) || asc__ty_find(t)->kind != ASC_TY_SCALAR) {
    report(r, a->loc, "%s's %s must be an integer, not %s", np_name(r, call),
           what, py_name(r, t));
    return false;
  }
  asc__infer_coerce(r, a, scalar(r, ascInt64), 0);
  return true;
}

/* An integer, or a tuple of them written in place ((1, 2)): how many
 * (1 for one integer) in *n; false after an error. */
static bool ints_value(run *r, const asc__ast_expr *call, asc__ast_expr *a,
                       const char *what, int *n) {
  if (a->kind != ASC_EXPR_TUPLE) {
    *n = 1;
    return int_value(r, call, a, what);
  }
  *n = a->u.tuple.n;
  if (*n > ASC_MAX_DIMS) {
    report(r, a->loc, "%s's %s names at most %d values in kernels",
           np_name(r, call), what, ASC_MAX_DIMS);
    return false;
  }
  for (int k = 0; k < *n; k++)
    if (!int_value(r, call, a->u.tuple.elts[k], what))
      return false;
  asc__infer_expr(r, a);
  return true;
}

/* An axis written as an integer constant, of an array of nd axes:
 * normalised into *axis; false after an error (numpy's AxisError, at
 * compile time). */
static bool const_axis(run *r, const asc__ast_expr *call, asc__ast_expr *a,
                       int nd, int *axis) {
  uint64_t mag;
  bool neg;
  int64_t k;
  if (!asc__infer_int_literal(a, &mag, &neg) || mag > 64) {
    report(r, a->loc, "%s's axis must be an integer constant in kernels",
           np_name(r, call));
    return false;
  }
  k = neg ? -(int64_t)mag : (int64_t)mag;
  if (k < -nd || k >= nd) {
    report(r, a->loc, "axis %lld is out of bounds for array of dimension %d",
           (long long)k, nd);
    return false;
  }
  asc__infer_settype(r, a, scalar(r, ascInt64));
  *axis = (int)(k < 0 ? k + nd : k);
  return true;
}

bool asc__infer_numpy_axis(run *r, const asc__ast_expr *call,
                           asc__ast_expr *a, int nd, int *axis) {
  return const_axis(r, call, a, nd, axis);
}

bool asc__numpy_const_axis(const asc__ast_expr *a, int nd, int *axis) {
  uint64_t mag;
  bool neg;
  if (!asc__infer_int_literal(a, &mag, &neg) || mag > 64)
    return false;
  *axis = neg ? nd - (int)mag : (int)mag;
  return *axis >= 0 && *axis < nd;
}

static asc__type *new_array_of(run *r, ascDataType dt, int nd) {
  return asc__ty_tensor(r->in->c, dt, nd, false);
}

/* ------------------------------------------------------------- np.roll */

/* np.roll(a, shift, axis=None): shift an integer or a tuple of them,
 * axis None, an integer constant or a tuple of them; shift and axis
 * broadcast against each other as numpy's. */
static asc__type *roll(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  int nshift, naxis = 1, axis;
  PROPAGATE(t);
  if (!ints_value(r, e, a[1], "shift", &nshift))
    return err(r);
  if (given(e, 2)) {
    asc__ast_expr *ax = a[2];
    naxis = ax->kind == ASC_EXPR_TUPLE ? ax->u.tuple.n : 1;
    for (int k = 0; k < naxis; k++)
      if (!const_axis(r, e, ax->kind == ASC_EXPR_TUPLE ? ax->u.tuple.elts[k]
                                                       : ax,
                      t->ndim, &axis))
        return err(r);
    if (ax->kind == ASC_EXPR_TUPLE)
      asc__infer_expr(r, ax);
  }
  if (nshift != naxis && nshift != 1 && naxis != 1) {
    report(r, e->loc, "shape mismatch: objects cannot be broadcast to a "
           "single shape (np.roll's %d shifts and %d axes)", nshift, naxis);
    return err(r);
  }
  return new_array_of(r, (ascDataType)t->dtype, t->ndim);
}

/* ------------------------------------------------------------- np.tile */

/* np.tile(A, reps): reps an integer or a tuple of them written in place
 * (its length decides the result's number of axes). */
static asc__type *tile(run *r, asc__ast_expr *e) {
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  int n;
  PROPAGATE(t);
  if (!ints_value(r, e, e->u.call.rargs[1], "reps", &n))
    return err(r);
  return new_array_of(r, (ascDataType)t->dtype, n > t->ndim ? n : t->ndim);
}

/* ----------------------------------------------------------- np.repeat */

/* np.repeat(a, repeats, axis=None) with one number of repeats. */
static asc__type *repeat(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0), *u;
  int axis;
  PROPAGATE(t);
  u = asc__infer_expr(r, a[1]);
  PROPAGATE(u);
  if (asc__ty_find(u)->kind == ASC_TY_TENSOR || a[1]->kind == ASC_EXPR_TUPLE) {
    report(r, a[1]->loc, "np.repeat in kernels takes one number of repeats "
           "for every element (an array or tuple of repeats is not "
           "supported yet)");
    return err(r);
  }
  if (!int_value(r, e, a[1], "repeats"))
    return err(r);
  if (!given(e, 2))
    return new_array_of(r, (ascDataType)t->dtype, 1);
  if (!const_axis(r, e, a[2], t->ndim, &axis))
    return err(r);
  return new_array_of(r, (ascDataType)t->dtype, t->ndim);
}

/* ------------------------------------------ np.concatenate and stacks */

/* The number of axes input array k of a stack has once numpy's
 * atleast_1d / atleast_2d (and column_stack's column) made it so. */
int asc__numpy_stack_ndim(asc__builtin_id id, int nd) {
  switch (id) {
  case ASC_BI_NP_HSTACK:
    return nd < 1 ? 1 : nd;
  case ASC_BI_NP_VSTACK:
  case ASC_BI_NP_COLUMN_STACK:
    return nd < 2 ? 2 : nd;
  default:
    return nd;
  }
}

/* np.concatenate(arrays, axis=0), np.stack(arrays, axis=0),
 * np.hstack(tup), np.vstack(tup), np.column_stack(tup): the arrays a
 * tuple written in place. */
static asc__type *stack(run *r, asc__ast_expr *e) {
  asc__builtin_id id = e->u.call.builtin->id;
  asc__ast_expr *tup = e->u.call.rargs[0];
  asc__type *res = NULL;
  int nd = 0, axis;
  /* concatenate's axis=None flattens each array first, so their numbers
   * of axes may differ (numpy's ravel of each, 0-d arrays too) */
  bool flat = id == ASC_BI_NP_CONCATENATE && e->u.call.nrargs > 1 &&
              e->u.call.rargs[1] != NULL &&
              e->u.call.rargs[1]->kind == ASC_EXPR_NONE;
  if (tup->kind != ASC_EXPR_TUPLE) {
    report(r, tup->loc, "%s() in kernels takes a tuple of arrays written in "
           "place (%s((a, b)))", np_name(r, e), np_name(r, e));
    return err(r);
  }
  if (tup->u.tuple.n == 0) {
    report(r, tup->loc, "need at least one array to %s",
           id == ASC_BI_NP_STACK ? "stack" : "concatenate");
    return err(r);
  }
  for (int k = 0; k < tup->u.tuple.n; k++) {
    asc__ast_expr *x = tup->u.tuple.elts[k];
    asc__type *t = asc__infer_expr(r, x);
    int d;
    PROPAGATE(t);
    t = asc__ty_find(t);
    if (t->kind != ASC_TY_TENSOR) {
      report(r, x->loc, "%s() in kernels takes arrays, not %s",
             np_name(r, e), py_name(r, t));
      return err(r);
    }
    d = asc__numpy_stack_ndim(id, t->ndim);
    if (k == 0)
      nd = d;
    if (d == 0 && id == ASC_BI_NP_CONCATENATE && !flat) {
      report(r, x->loc, "zero-dimensional arrays cannot be concatenated");
      return err(r);
    }
    if (d != nd && !flat) {
      if (id == ASC_BI_NP_STACK)
        report(r, x->loc, "all input arrays must have the same shape (the "
               "array at index 0 has %d dimension(s) and the array at "
               "index %d has %d)", nd, k, d);
      else
        report(r, x->loc, "all the input arrays must have same number of "
               "dimensions, but the array at index 0 has %d dimension(s) "
               "and the array at index %d has %d dimension(s)", nd, k, d);
      return err(r);
    }
    /* the dtypes combine as the operands of + do (docs/types.md) */
    res = res == NULL ? scalar(r, (ascDataType)t->dtype)
                      : asc__ty_promote(r->in->c, res,
                                        scalar(r, (ascDataType)t->dtype));
  }
  asc__infer_expr(r, tup);
  res = asc__ty_find(res);
  if (id == ASC_BI_NP_STACK) {
    nd++;
    if (given(e, 1) && !const_axis(r, e, e->u.call.rargs[1], nd, &axis))
      return err(r);
  } else if (id == ASC_BI_NP_CONCATENATE && e->u.call.nrargs > 1 &&
             e->u.call.rargs[1] != NULL) {
    if (e->u.call.rargs[1]->kind == ASC_EXPR_NONE)
      nd = 1; /* the arrays flattened, one after another */
    else if (!const_axis(r, e, e->u.call.rargs[1], nd, &axis))
      return err(r);
  }
  if (nd > ASC_MAX_DIMS) {
    report(r, e->loc, "%s() would make an array of %d axes (kernels take "
           "at most %d)", np_name(r, e), nd, ASC_MAX_DIMS);
    return err(r);
  }
  return new_array_of(r, (ascDataType)res->dtype, nd);
}

/* ----------------------------------------------------- np.triu, tril */

/* np.triu(m, k=0), np.tril(m, k=0): of a 1-D m, the (n, n) array whose
 * rows are m, as numpy's. */
static asc__type *tri(run *r, asc__ast_expr *e) {
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  PROPAGATE(t);
  if (t->ndim == 0) {
    report(r, e->u.call.rargs[0]->loc, "%s() takes an array of at least one "
           "dimension, not %s", np_name(r, e), tn(r, t));
    return err(r);
  }
  if (given(e, 1) && !int_value(r, e, e->u.call.rargs[1], "k"))
    return err(r);
  return new_array_of(r, (ascDataType)t->dtype, t->ndim < 2 ? 2 : t->ndim);
}

/* --------------------------------- np.add.outer, subtract, multiply */

/* ufunc.outer(A, B): op(A[i..., None...], B[None..., j...]), of shape
 * A.shape + B.shape, in the promoted dtype. */
static asc__type *ufunc_outer(run *r, asc__ast_expr *e) {
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0), *u, *p;
  PROPAGATE(t);
  u = asc__infer_numpy_array_arg(r, e, 1);
  PROPAGATE(u);
  if (t->ndim + u->ndim > ASC_MAX_DIMS) {
    report(r, e->loc, "%s() would make an array of %d axes (kernels take "
           "at most %d)", np_name(r, e), (int)(t->ndim + u->ndim),
           ASC_MAX_DIMS);
    return err(r);
  }
  p = asc__ty_find(asc__ty_promote(r->in->c, scalar(r, (ascDataType)t->dtype),
                                   scalar(r, (ascDataType)u->dtype)));
  if (p->dtype == ascBool && e->u.call.builtin->id == ASC_BI_NP_SUBTRACT_OUTER) {
    report(r, e->loc, "numpy boolean subtract, the `-` operator, is not "
           "supported, use the bitwise_xor, the `^` operator, or the "
           "logical_xor function instead.");
    return err(r);
  }
  return new_array_of(r, (ascDataType)p->dtype, t->ndim + u->ndim);
}

/* ---------------------------------------------------------- np.average */

/* np.average(a, axis=None, weights=None): a number (axis None) or an
 * array without the axis; the dtype of np.mean without weights, else of
 * a and the weights (and float64 for integers), as numpy's result_type
 * (with the promotion of +, docs/types.md).  Weights of another number
 * of axes are 1-D along a given axis, numpy's TypeErrors otherwise. */
static asc__type *average(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0), *w = NULL, *p;
  int axis = -1;
  PROPAGATE(t);
  for (int i = 3; i < 5; i++)
    if (given(e, i) && a[i]->kind != ASC_EXPR_BOOL) {
      report(r, a[i]->loc, "np.average's %s is True or False in kernels",
             i == 3 ? "returned" : "keepdims");
      return err(r);
    } else if (given(e, i) && a[i]->u.bval) {
      report(r, a[i]->loc, "np.average(..., %s=True) is not supported in "
             "kernels yet", i == 3 ? "returned" : "keepdims");
      return err(r);
    }
  if (given(e, 1) && !const_axis(r, e, a[1], t->ndim, &axis))
    return err(r);
  if (given(e, 2)) {
    w = asc__infer_numpy_array_arg(r, e, 2);
    PROPAGATE(w);
    if (w->ndim != t->ndim && axis < 0) {
      report(r, a[2]->loc, "Axis must be specified when shapes of a and "
             "weights differ.");
      return err(r);
    }
    if (w->ndim != t->ndim && w->ndim != 1) {
      report(r, a[2]->loc, "1D weights expected when shapes of a and "
             "weights differ.");
      return err(r);
    }
  }
  p = scalar(r, (ascDataType)t->dtype);
  if (w != NULL)
    p = asc__ty_promote(r->in->c, p, scalar(r, (ascDataType)w->dtype));
  if (!asc__dtype_is_float(t->dtype) && !asc__dtype_is_complex(t->dtype))
    p = asc__ty_promote(r->in->c, p, scalar(r, ascFloat64));
  p = asc__ty_find(p);
  if (axis < 0)
    return p;
  return new_array_of(r, (ascDataType)p->dtype, t->ndim - 1);
}

/* ------------------------------------------------------ np.bincount */

/* numpy's TypeError where an array of dtype from cannot be cast safely
 * to dtype to (numpy's "safe" rule, as bincount casts its arguments). */
static void unsafe_cast(run *r, asc__loc loc, int from, int to) {
  report(r, loc, "Cannot cast array data from dtype('%s') to dtype('%s') "
         "according to the rule 'safe'", py_name(r, scalar(r, from)),
         py_name(r, scalar(r, to)));
}

/* A 1-D array argument i, numpy's ValueError for the others. */
static asc__type *vector_arg(run *r, asc__ast_expr *e, int i) {
  asc__type *t = asc__infer_numpy_array_arg(r, e, i);
  PROPAGATE(t);
  if (t->ndim != 1) {
    report(r, e->u.call.rargs[i]->loc, "%s", t->ndim == 0
           ? "object of too small depth for desired array"
           : "object too deep for desired array");
    return err(r);
  }
  return t;
}

/* np.bincount(x, weights=None, minlength=0): x 1-D of integers or
 * bools (numpy casts it to intp, refusing floats), the counts int64,
 * the sums of weights float64 (weights cast to float64, refusing
 * complex ones). */
static asc__type *bincount(run *r, asc__ast_expr *e) {
  asc__type *t = vector_arg(r, e, 0), *w;
  PROPAGATE(t);
  if (!asc__dtype_is_int(t->dtype) && t->dtype != ascBool) {
    unsafe_cast(r, e->u.call.rargs[0]->loc, t->dtype, ascInt64);
    return err(r);
  }
  if (given(e, 2) && !int_value(r, e, e->u.call.rargs[2], "minlength"))
    return err(r);
  if (!given(e, 1))
    return new_array_of(r, ascInt64, 1);
  w = vector_arg(r, e, 1);
  PROPAGATE(w);
  if (asc__dtype_is_complex(w->dtype)) {
    unsafe_cast(r, e->u.call.rargs[1]->loc, w->dtype, ascFloat64);
    return err(r);
  }
  return new_array_of(r, ascFloat64, 1);
}

/* ------------------------------------- np.searchsorted, np.digitize */

/* The values searched for, argument i: an array (the result an int64
 * array of its shape) or a number (an int64). */
static asc__type *search_values(run *r, asc__ast_expr *e, int i,
                                asc__type **res) {
  asc__ast_expr *a = e->u.call.rargs[i];
  asc__type *t = asc__infer_expr(r, a);
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind == ASC_TY_TENSOR) {
    *res = new_array_of(r, ascInt64, t->ndim);
    return t;
  }
  if (t->kind != ASC_TY_SCALAR) {
    report(r, a->loc, "%s() in kernels takes an array or a number here, "
           "not %s", np_name(r, e), py_name(r, t));
    return err(r);
  }
  *res = scalar(r, ascInt64);
  return t;
}

/* np.searchsorted(a, v, side='left', sorter=None): a 1-D, side a string
 * constant, no sorter yet. */
static asc__type *searchsorted(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = vector_arg(r, e, 0), *v, *res = NULL;
  PROPAGATE(t);
  v = search_values(r, e, 1, &res);
  PROPAGATE(v);
  if (given(e, 2)) {
    if (a[2]->kind != ASC_EXPR_STR) {
      report(r, a[2]->loc, "np.searchsorted's side is 'left' or 'right' "
             "written in place in kernels");
      return err(r);
    }
    if (strcmp(a[2]->u.str.s, "left") != 0 &&
        strcmp(a[2]->u.str.s, "right") != 0) {
      report(r, a[2]->loc, "search side must be 'left' or 'right' (got "
             "'%s')", a[2]->u.str.s);
      return err(r);
    }
  }
  if (given(e, 3)) {
    report(r, a[3]->loc, "np.searchsorted(..., sorter=...) is not "
           "supported in kernels yet (index with the sorted order first: "
           "np.searchsorted(a[sorter], v))");
    return err(r);
  }
  return res;
}

/* np.digitize(x, bins, right=False): bins 1-D, x not complex (numpy's
 * TypeError), right True or False. */
static asc__type *digitize(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *x, *b, *res = NULL;
  x = search_values(r, e, 0, &res);
  PROPAGATE(x);
  if (asc__dtype_is_complex(x->dtype)) {
    report(r, a[0]->loc, "x may not be complex");
    return err(r);
  }
  b = vector_arg(r, e, 1);
  PROPAGATE(b);
  if (given(e, 2) && a[2]->kind != ASC_EXPR_BOOL) {
    report(r, a[2]->loc, "np.digitize's right is True or False in kernels");
    return err(r);
  }
  return res;
}

/* ------------------------------------------------ np.cov, np.corrcoef */

/* np.cov(m, y=None, rowvar=True, bias=False, ddof=None) and
 * np.corrcoef(x, y=None, rowvar=True): m and y of one or two axes,
 * rowvar and bias True or False, ddof an integer; float64, complex128
 * for complex arrays (numpy's result_type with float64).  A 1-D m
 * without y gives a 0-d array, others 2-D (numpy's squeeze, which a
 * 2-D m of one row cannot have here: docs/arrays.md). */
static asc__type *cov(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  bool corr = e->u.call.builtin->id == ASC_BI_NP_CORRCOEF;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0), *u = NULL;
  int nparams = corr ? 6 : 8;
  PROPAGATE(t);
  if (t->ndim > 2) {
    report(r, a[0]->loc, "m has more than 2 dimensions");
    return err(r);
  }
  if (given(e, 1)) {
    u = asc__infer_numpy_array_arg(r, e, 1);
    PROPAGATE(u);
    if (u->ndim > 2) {
      report(r, a[1]->loc, "y has more than 2 dimensions");
      return err(r);
    }
  }
  for (int i = 2; i < 4; i++)
    if (given(e, i) && a[i]->kind != ASC_EXPR_BOOL) {
      report(r, a[i]->loc, "%s's %s is True or False in kernels",
             np_name(r, e), i == 2 ? "rowvar" : "bias");
      return err(r);
    }
  if (given(e, 4) && !int_value(r, e, a[4], "ddof"))
    return err(r);
  for (int i = corr ? 3 : 5; i < nparams; i++)
    if (given(e, i)) {
      report(r, a[i]->loc, "%s's %s is not supported in kernels yet",
             np_name(r, e), i == nparams - 1 ? "dtype"
                            : corr ? (i == 3 ? "bias" : "ddof")
                            : i == 5 ? "fweights" : "aweights");
      return err(r);
    }
  return new_array_of(r,
                      asc__dtype_is_complex(t->dtype) ||
                              (u != NULL && asc__dtype_is_complex(u->dtype))
                          ? ascComplex128
                          : ascFloat64,
                      t->ndim < 2 && u == NULL ? 0 : 2);
}

/* ---------------------------------------------------------- np.indices */

/* np.indices(dimensions): dimensions integers in a tuple written in
 * place or a tuple value (a.shape); the int64 array of shape
 * (len(dimensions),) + dimensions. */
static asc__type *indices(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t;
  int n;
  bool sparse = false;
  if (given(e, 1)) {
    report(r, a[1]->loc, "np.indices's dtype is not supported in kernels "
           "yet");
    return err(r);
  }
  if (given(e, 2)) {
    if (a[2]->kind != ASC_EXPR_BOOL) {
      report(r, a[2]->loc, "np.indices's sparse is True or False written "
             "in place in kernels");
      return err(r);
    }
    sparse = a[2]->u.bval;
    asc__infer_expr(r, a[2]);
  }
  if (a[0]->kind == ASC_EXPR_TUPLE) {
    if (!ints_value(r, e, a[0], "dimensions", &n))
      return err(r);
  } else {
    t = asc__infer_expr(r, a[0]);
    PROPAGATE(t);
    t = asc__ty_find(t);
    if (t->kind != ASC_TY_TUPLE) {
      report(r, a[0]->loc, "np.indices's dimensions is a tuple of integers "
             "in kernels, not %s", py_name(r, t));
      return err(r);
    }
    n = t->n;
    for (int k = 0; k < n; k++)
      if (!asc__ty_is_intlike(asc__ty_find(t->elems[k]))) {
        report(r, a[0]->loc, "np.indices's dimensions is a tuple of "
               "integers in kernels, not %s", py_name(r, t));
        return err(r);
      }
  }
  if (n + 1 > ASC_MAX_DIMS) {
    report(r, e->loc, "np.indices() would make an array of %d axes (kernels "
           "take at most %d)", n + 1, ASC_MAX_DIMS);
    return err(r);
  }
  if (sparse)
    return asc__infer_sparse_indices(r, n);
  return new_array_of(r, ascInt64, n + 1);
}

/* ------------------------------------------------------------- np.sort */

/* np.sort(a, axis=-1, kind=None) and np.argsort (int64 indices): axis
 * an integer constant or None (every element, 1-D); kind any of
 * numpy's names (the same values, equal ones in stable order); no order
 * (fields).  Complex arrays are not sorted yet (numpy's order of them is
 * by real, then imaginary part). */
static asc__type *sort(run *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__type *t = asc__infer_numpy_array_arg(r, e, 0);
  ascDataType rdt;
  int axis;
  PROPAGATE(t);
  rdt = e->u.call.builtin->id == ASC_BI_NP_ARGSORT ? ascInt64
                                                   : (ascDataType)t->dtype;
  if (asc__dtype_is_complex(t->dtype)) {
    report(r, a[0]->loc, "%s of complex arrays is not supported in "
           "kernels yet", np_name(r, e));
    return err(r);
  }
  if (given(e, 3)) {
    report(r, a[3]->loc, "%s's order is for structured arrays, which "
           "kernels do not have", np_name(r, e));
    return err(r);
  }
  if (given(e, 2) && a[2]->kind != ASC_EXPR_STR) {
    report(r, a[2]->loc, "%s's kind is a string written in place in "
           "kernels", np_name(r, e));
    return err(r);
  }
  if (given(e, 1)) {
    if (!const_axis(r, e, a[1], t->ndim, &axis))
      return err(r);
  } else if (e->u.call.nrargs > 1 && a[1] != NULL) {
    return new_array_of(r, rdt, 1); /* axis=None */
  } else if (t->ndim == 0) {
    report(r, a[0]->loc, "axis -1 is out of bounds for array of dimension 0");
    return err(r);
  }
  return new_array_of(r, rdt, t->ndim);
}

/* ------------------------------------------------------------ dispatch */

asc__type *asc__infer_numpy(run *r, asc__ast_expr *e) {
  switch (e->u.call.builtin->id) {
  case ASC_BI_NP_ROLL:
    return roll(r, e);
  case ASC_BI_NP_TILE:
    return tile(r, e);
  case ASC_BI_NP_REPEAT:
    return repeat(r, e);
  case ASC_BI_NP_CONCATENATE:
  case ASC_BI_NP_STACK:
  case ASC_BI_NP_HSTACK:
  case ASC_BI_NP_VSTACK:
  case ASC_BI_NP_COLUMN_STACK:
    return stack(r, e);
  case ASC_BI_NP_TRIU:
  case ASC_BI_NP_TRIL:
    return tri(r, e);
  case ASC_BI_NP_ADD_OUTER:
  case ASC_BI_NP_SUBTRACT_OUTER:
  case ASC_BI_NP_MULTIPLY_OUTER:
    return ufunc_outer(r, e);
  case ASC_BI_NP_AVERAGE:
    return average(r, e);
  case ASC_BI_NP_BINCOUNT:
    return bincount(r, e);
  case ASC_BI_NP_SEARCHSORTED:
    return searchsorted(r, e);
  case ASC_BI_NP_DIGITIZE:
    return digitize(r, e);
  case ASC_BI_NP_COV:
  case ASC_BI_NP_CORRCOEF:
    return cov(r, e);
  case ASC_BI_NP_INDICES:
    return indices(r, e);
  case ASC_BI_NP_SORT:
  case ASC_BI_NP_ARGSORT:
    return sort(r, e);
  case ASC_BI_NP_MEDIAN:
    return asc__infer_median(r, e);
  case ASC_BI_NP_ARRAY:
  case ASC_BI_NP_ASARRAY:
    return asc__infer_np_array(r, e);
  case ASC_BI_NP_MESHGRID:
    return asc__infer_meshgrid(r, e);
  case ASC_BI_NP_HISTOGRAM:
  case ASC_BI_NP_HISTOGRAM_BIN_EDGES:
    return asc__infer_histogram(r, e);
  case ASC_BI_NP_UNIQUE:
    return asc__infer_unique(r, e);
  case ASC_BI_NP_TRACE:
    return asc__infer_trace(r, e);
  case ASC_BI_NP_DIAG:
    return asc__infer_diag(r, e);
  case ASC_BI_NP_DIFF:
    return asc__infer_diff(r, e);
  case ASC_BI_NP_MAXIMUM_ACCUMULATE:
  case ASC_BI_NP_MINIMUM_ACCUMULATE:
    return asc__infer_accumulate(r, e);
  case ASC_BI_NP_PERCENTILE:
  case ASC_BI_NP_QUANTILE:
    return asc__infer_quantile(r, e);
  default:
    if (asc__builtin_is_linalg(e->u.call.builtin->id))
      return asc__infer_linalg(r, e);
    report(r, e->loc, "%s is not supported in kernels yet", np_name(r, e));
    return err(r);
  }
}
