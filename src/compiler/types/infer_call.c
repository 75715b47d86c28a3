/*
 * Type inference of calls: builtins (dtype constructors, math, atomics,
 * scratch arrays, parallel loops), helper calls (one instance per argument
 * types) and struct constructors.  infer.c holds the solver; infer_int.h
 * what the files of inference share.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

/* ---------------------------------------------------------------- calls */

static asc__type *call_arg(run *r, asc__ast_expr *call, int i) {
  asc__ast_expr *a = i < call->u.call.nrargs ? call->u.call.rargs[i] : NULL;
  if (a == NULL)
    return NULL;
  return asc__infer_expr(r, a);
}

/* A parallel-loop body (lambda or nested def) taking the iteration index. */
static void loop_body(run *r, asc__ast_expr *arg) {
  asc__ast_func *fn = NULL;
  frame *saved;
  if (arg->kind == ASC_EXPR_LAMBDA)
    fn = arg->u.lambda.fn;
  else if (arg->kind == ASC_EXPR_NAME && arg->u.name.sym != NULL &&
           arg->u.name.sym->kind == ASC_SYM_FUNC &&
           arg->u.name.sym->u.func->kind == ASC_FUNC_NESTED)
    fn = arg->u.name.sym->u.func;
  if (fn == NULL) {
    report(r, arg->loc,
           "parallel_for's body must be a lambda or a nested def");
    return;
  }
  if (fn->nparams != 1) {
    report(r, fn->loc,
           "a parallel_for body takes one parameter (the index), not %d",
           fn->nparams);
    /* no further messages about its parameters */
    for (int i = 0; i < fn->nparams; i++)
      asc__infer_assign_cell(r, fn->params[i].sym, fn->params[i].loc, err(r),
                             NULL);
    return;
  }
  asc__infer_assign_cell(r, fn->params[0].sym, fn->params[0].loc,
                         scalar(r, ascInt64), NULL);
  if (r->check)
    asc__infer_settype(r, arg,
                       asc__ty_func(r->in->c, fn->name, 1,
                                    (asc__type *[]){scalar(r, ascInt64)},
                                    asc__ty_none(r->in->c)));
  if (arg->kind != ASC_EXPR_LAMBDA)
    return; /* walked at its def */
  saved = r->cur;
  r->cur = asc__infer_frame_for(r, fn);
  asc__infer_block(r, &fn->body);
  r->cur = saved;
}

/* ascDataType named by a dtype argument (asc.float32, float, int). */
bool asc__infer_dtype_arg(run *r, asc__ast_expr *a, ascDataType *dt) {
  const asc__builtin *b = asc__expr_builtin(a);
  if (b != NULL && b->kind == ASC_BK_DTYPE) {
    *dt = asc__builtin_dtype(b);
    return true;
  }
  if (b != NULL && (b->id == ASC_BI_FLOAT || b->id == ASC_BI_INT ||
                    b->id == ASC_BI_BOOL)) {
    *dt = b->id == ASC_BI_FLOAT ? ascFloat64
          : b->id == ASC_BI_INT ? ascInt64
                                : ascBool;
    return true;
  }
  if (a->kind == ASC_EXPR_ATTR && strcmp(a->u.attr.attr, "dtype") == 0) {
    /* dtype=x.dtype: the element type of array x */
    asc__type *t = asc__infer_expr(r, a->u.attr.value);
    if (t != NULL && !is_err(t) &&
        asc__ty_find(t)->kind == ASC_TY_TENSOR) {
      *dt = (ascDataType)asc__ty_find(t)->dtype;
      return true;
    }
  } else if (a->kind == ASC_EXPR_NAME) {
    /* a name holding a dtype (dt = np.float32, a helper's parameter
     * given one): the dtype is a constant of the instance being typed */
    asc__type *t = asc__ty_find(asc__infer_expr(r, a));
    if (t != NULL && t->kind == ASC_TY_DTYPE) {
      *dt = (ascDataType)t->dtype;
      return true;
    }
    if (t == NULL || is_err(t))
      return false;
  }
  report(r, a->loc, "expected a dtype such as asc.float32 or x.dtype");
  return false;
}

static asc__type *scratch_array(run *r, asc__ast_expr *e) {
  asc__ast_expr *shape = e->u.call.rargs[0], *dt = e->u.call.rargs[1];
  ascDataType d;
  int n = 1;
  bool ok = true;
  if (shape == NULL || dt == NULL)
    return err(r);
  if (shape->kind == ASC_EXPR_TUPLE) {
    n = shape->u.tuple.n;
    for (int i = 0; i < n; i++) {
      asc__type *t = asc__infer_expr(r, shape->u.tuple.elts[i]);
      if (!asc__infer_is_const_int(r, shape->u.tuple.elts[i], 0) ||
          (t != NULL && !is_err(t) && !asc__ty_is_intlike(t))) {
        report(r, shape->u.tuple.elts[i]->loc,
               "a scratch array's shape must be made of integer constants");
        ok = false;
      } else {
        asc__infer_coerce(r, shape->u.tuple.elts[i], scalar(r, ascInt64), 0);
      }
    }
    if (r->check)
      asc__infer_settype(r, shape, asc__ty_shape(r->in->c, n));
  } else {
    asc__type *t = asc__infer_expr(r, shape);
    if (!asc__infer_is_const_int(r, shape, 0) ||
        (t != NULL && !is_err(t) && !asc__ty_is_intlike(t))) {
      report(r, shape->loc,
             "a scratch array's shape must be an integer constant or a "
             "tuple of them");
      ok = false;
    } else {
      asc__infer_coerce(r, shape, scalar(r, ascInt64), 0);
    }
  }
  if (n < 1 || n > ASC_MAX_DIMS) {
    report(r, shape->loc, "a scratch array has 1 to %d dimensions",
           ASC_MAX_DIMS);
    ok = false;
  }
  if (!asc__infer_dtype_arg(r, dt, &d) || !ok)
    return err(r);
  if (r->check)
    asc__infer_settype(r, dt, scalar(r, d));
  return asc__ty_tensor(r->in->c, d, n, true);
}

static asc__type *need_scalar(run *r, asc__ast_expr *e, int i);

/* The number of axes a shape argument gives (np.zeros(n), np.zeros((n, m)),
 * np.zeros(a.shape)), its extents typed int64; -1 after an error. */
static int shape_arg(run *r, asc__ast_expr *shape) {
  asc__type *t;
  if (shape->kind == ASC_EXPR_TUPLE) {
    int n = shape->u.tuple.n;
    for (int i = 0; i < n; i++) {
      t = asc__infer_expr(r, shape->u.tuple.elts[i]);
      if (t == NULL || is_err(t))
        return -1;
      if (!asc__ty_is_intlike(t) || asc__ty_find(t)->dtype == ascBool) {
        report(r, shape->u.tuple.elts[i]->loc,
               "an array's extents are integers, not %s", tn(r, t));
        return -1;
      }
      asc__infer_coerce(r, shape->u.tuple.elts[i], scalar(r, ascInt64), 0);
    }
    if (r->check)
      asc__infer_settype(r, shape, asc__ty_shape(r->in->c, n));
    if (n < 1 || n > ASC_MAX_DIMS) {
      report(r, shape->loc, "an array created in a kernel has 1 to %d axes",
             ASC_MAX_DIMS);
      return -1;
    }
    return n;
  }
  t = asc__infer_expr(r, shape);
  if (t == NULL || is_err(t))
    return -1;
  t = asc__ty_find(t);
  if (t->kind == ASC_TY_TUPLE) {
    for (int i = 0; i < t->n; i++)
      if (!asc__ty_is_intlike(asc__ty_find(t->elems[i]))) {
        report(r, shape->loc, "an array's shape is a tuple of integers");
        return -1;
      }
    if (t->n < 1 || t->n > ASC_MAX_DIMS) {
      report(r, shape->loc, "an array created in a kernel has 1 to %d axes",
             ASC_MAX_DIMS);
      return -1;
    }
    return t->n;
  }
  if (t->kind == ASC_TY_SCALAR && asc__ty_is_intlike(t) &&
      t->dtype != ascBool) {
    asc__infer_coerce(r, shape, scalar(r, ascInt64), 0);
    return 1;
  }
  report(r, shape->loc,
         "an array's shape is an integer or a tuple of integers, not %s",
         tn(r, t));
  return -1;
}

/* The concrete dtype of scalar type t (a Python int is int64, a float
 * float64, as numpy takes them). */
static ascDataType concrete_dt(run *r, asc__type *t) {
  return (ascDataType)asc__ty_concrete(r->in->c, t)->dtype;
}

/* A Python int x that becomes a value of dtype d (np.full's fill value,
 * np.uint8(x)): numpy raises OverflowError when an integer d cannot hold
 * it (for a literal, a compile error here), where a strong integer
 * wraps and a float truncates. */
static void int_into(run *r, asc__ast_expr *x, ascDataType d) {
  asc__type *xt = asc__ty_find(x->type);
  if (r->check && xt != NULL && xt->kind == ASC_TY_SCALAR && xt->weak &&
      asc__ty_is_intlike(xt) && asc__dtype_is_int(d))
    asc__infer_coerce(r, x, scalar(r, d), 0);
}

/* np.empty/zeros/ones/full(_like), np.arange, np.linspace, np.copy,
 * a.astype(dt), a.fill(v): the types numpy gives them. */
static asc__type *creation(run *r, asc__ast_expr *e) {
  asc__builtin_id id = e->u.call.builtin->id;
  asc__ast_expr *const *a = e->u.call.rargs;
  int na = e->u.call.nrargs;
  asc__ast_expr *dta = NULL;
  ascDataType d = ascFloat64;
  asc__type *t = NULL, *u;
  int nd = 1;
  switch (id) {
  case ASC_BI_NP_EMPTY:
  case ASC_BI_NP_ZEROS:
  case ASC_BI_NP_ONES:
  case ASC_BI_NP_FULL:
    nd = shape_arg(r, a[0]);
    if (id == ASC_BI_NP_FULL) {
      t = need_scalar(r, e, 1);
      PROPAGATE(t);
      d = concrete_dt(r, t);
      dta = na > 2 ? a[2] : NULL;
    } else {
      dta = na > 1 ? a[1] : NULL;
    }
    break;
  case ASC_BI_NP_EMPTY_LIKE:
  case ASC_BI_NP_ZEROS_LIKE:
  case ASC_BI_NP_ONES_LIKE:
  case ASC_BI_NP_FULL_LIKE:
  case ASC_BI_NP_COPY:
  case ASC_BI_NP_ASTYPE:
  case ASC_BI_NP_FILL:
    t = call_arg(r, e, 0);
    PROPAGATE(t);
    t = asc__ty_find(t);
    if (t->kind != ASC_TY_TENSOR || t->ndim < 1) {
      report(r, a[0]->loc, "%s() takes an array, not %s",
             e->u.call.builtin->name, tn(r, t));
      return err(r);
    }
    nd = t->ndim;
    d = (ascDataType)t->dtype;
    if (id == ASC_BI_NP_FILL) {
      u = need_scalar(r, e, 1);
      PROPAGATE(u);
      /* numpy casts the value to the array's type, as item assignment */
      if (r->check && asc__ty_find(u)->kind == ASC_TY_SCALAR)
        asc__infer_coerce(r, a[1], scalar(r, d), 0);
      return asc__ty_none(r->in->c);
    }
    if (id == ASC_BI_NP_FULL_LIKE) {
      u = need_scalar(r, e, 1);
      PROPAGATE(u);
    }
    dta = id == ASC_BI_NP_FULL_LIKE ? (na > 2 ? a[2] : NULL)
          : id == ASC_BI_NP_COPY    ? NULL
                                    : (na > 1 ? a[1] : NULL);
    break;
  case ASC_BI_NP_ARANGE:
    t = NULL;
    for (int i = 0; i < 3 && i < na; i++) {
      if (a[i] == NULL)
        continue;
      u = need_scalar(r, e, i);
      PROPAGATE(u);
      if (asc__ty_find(u)->kind != ASC_TY_SCALAR) {
        report(r, a[i]->loc, "arange() takes numbers");
        return err(r);
      }
      t = t == NULL ? u : asc__ty_promote(r->in->c, t, u);
    }
    d = concrete_dt(r, t);
    if (d == ascBool)
      d = ascInt64;
    dta = na > 3 ? a[3] : NULL;
    break;
  case ASC_BI_NP_LINSPACE:
    for (int i = 0; i < 2; i++) {
      u = need_scalar(r, e, i);
      PROPAGATE(u);
      asc__infer_coerce(r, a[i], scalar(r, ascFloat64), 0);
    }
    if (na > 2 && a[2] != NULL) {
      u = need_scalar(r, e, 2);
      PROPAGATE(u);
      if (!asc__ty_is_intlike(u) || asc__ty_find(u)->dtype == ascBool) {
        report(r, a[2]->loc, "linspace's num is an integer");
        return err(r);
      }
      asc__infer_coerce(r, a[2], scalar(r, ascInt64), 0);
    }
    if (na > 3 && a[3] != NULL) {
      u = need_scalar(r, e, 3);
      PROPAGATE(u);
      asc__infer_coerce(r, a[3], scalar(r, ascBool), 0);
    }
    dta = na > 4 ? a[4] : NULL;
    break;
  case ASC_BI_NP_EYE:
  case ASC_BI_NP_IDENTITY:
    /* np.eye(N, M=None, k=0, dtype=float), np.identity(n, dtype=float):
     * 2-D, integer extents and diagonal offset */
    for (int i = 0; i < (id == ASC_BI_NP_EYE ? 3 : 1); i++) {
      if (i >= na || a[i] == NULL || a[i]->kind == ASC_EXPR_NONE)
        continue;
      u = need_scalar(r, e, i);
      PROPAGATE(u);
      if (!asc__ty_is_intlike(u) || asc__ty_find(u)->dtype == ascBool ||
          asc__ty_find(u)->kind != ASC_TY_SCALAR) {
        report(r, a[i]->loc, "%s()'s %s is an integer, not %s",
               e->u.call.builtin->name, i == 2 ? "k" : "size", tn(r, u));
        return err(r);
      }
      asc__infer_coerce(r, a[i], scalar(r, ascInt64), 0);
    }
    nd = 2;
    dta = id == ASC_BI_NP_EYE ? (na > 3 ? a[3] : NULL) : (na > 1 ? a[1] : NULL);
    break;
  default:
    return err(r);
  }
  if (nd < 0)
    return err(r);
  if (dta != NULL) {
    if (!asc__infer_dtype_arg(r, dta, &d))
      return err(r);
    if (r->check)
      asc__infer_settype(r, dta, scalar(r, d));
  }
  if (id == ASC_BI_NP_FULL || id == ASC_BI_NP_FULL_LIKE)
    int_into(r, a[1], d);
  return asc__ty_tensor(r->in->c, d, nd, true);
}

/* a.reshape(n, m), a.reshape((n, m)), np.reshape(a, shape): a view with
 * the new shape (one extent may be -1). */
static asc__type *reshape(run *r, asc__ast_expr *e) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int na = e->u.call.nrargs, nd;
  asc__type *t = call_arg(r, e, 0);
  while (na > 1 && a[na - 1] == NULL) /* the unused parameter slots */
    na--;
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind != ASC_TY_TENSOR || t->ndim < 1) {
    report(r, a[0]->loc, "reshape() takes an array, not %s", tn(r, t));
    return err(r);
  }
  if (na == 2) {
    nd = shape_arg(r, a[1]);
  } else {
    nd = na - 1;
    for (int i = 1; i < na; i++) {
      asc__type *u = asc__infer_expr(r, a[i]);
      PROPAGATE(u);
      if (!asc__ty_is_intlike(u) || asc__ty_find(u)->kind != ASC_TY_SCALAR) {
        report(r, a[i]->loc, "reshape's extents are integers, not %s",
               tn(r, u));
        return err(r);
      }
      asc__infer_coerce(r, a[i], scalar(r, ascInt64), 0);
    }
  }
  if (nd < 1)
    return err(r);
  return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, nd, false);
}

static asc__type *atomic(run *r, asc__ast_expr *e) {
  asc__type *at = call_arg(r, e, 0);
  int nvals = e->u.call.builtin->id == ASC_BI_ATOMIC_CAS ? 2 : 1;
  asc__type *elem;
  PROPAGATE(at);
  at = asc__ty_find(at);
  if (at->kind != ASC_TY_TENSOR) {
    report(r, e->u.call.rargs[0]->loc,
           "%s needs a tensor as its first argument, not %s",
           e->u.call.builtin->name, tn(r, at));
    return err(r);
  }
  elem = scalar(r, at->dtype);
  asc__infer_check_tensor_index(r, at, e->u.call.rargs[1],
                                e->u.call.rargs[1]->loc);
  for (int i = 0; i < nvals; i++) {
    asc__ast_expr *v = e->u.call.rargs[2 + i];
    asc__type *vt = asc__infer_expr(r, v);
    if (vt == NULL || is_err(vt))
      continue;
    if (!asc__infer_fits(r, vt, elem, true, 0))
      report(r, v->loc, "%s on %s: cannot convert %s to %s",
             e->u.call.builtin->name, tn(r, at), tn(r, vt), tn(r, elem));
    else
      asc__infer_coerce(r, v, elem, 0);
  }
  if ((e->u.call.builtin->id == ASC_BI_ATOMIC_SUB ||
       e->u.call.builtin->id == ASC_BI_ATOMIC_ADD) &&
      at->dtype == ascBool) {
    report(r, e->loc, "%s is not defined on bool tensors",
           e->u.call.builtin->name);
    return err(r);
  }
  return elem;
}

/* Unary float functions: a float keeps its type, an integer gives
 * float64, a weak int a weak float. */
static asc__type *floatify(run *r, asc__type *t) {
  t = asc__ty_find(t);
  if (asc__dtype_is_float(t->dtype))
    return t;
  return t->weak ? weak(r, ascFloat64) : scalar(r, ascFloat64);
}

/* The real type of a complex value's parts (and of abs(z), angle(z)). */
static asc__type *complex_part(run *r, asc__type *t) {
  t = asc__ty_find(t);
  if (t->weak)
    return weak(r, ascFloat64);
  return scalar(r, t->dtype == ascComplex64 ? ascFloat32 : ascFloat64);
}

/* abs, floor, ceil, trunc of a bool: Python's int for a scalar
 * (abs(True) == 1, math.floor(True) == 1), a bool for an array's elements
 * and for numpy's functions of a scalar (np.abs(True) is np.True_). */
static asc__type *bool_as_int(run *r, const asc__ast_expr *e, asc__type *t) {
  if (asc__ty_find(t)->dtype != ascBool || r->ew_ndim > 0 ||
      asc__expr_via_module(e->u.call.func, ASC_NS_NP))
    return t;
  return weak(r, ascInt64);
}

/* Whether x is a Python int: a weak integer scalar, or an integer literal
 * (one past int64 is typed uint64, not weak). */
static bool python_int(asc__ast_expr *x, asc__type *xt) {
  xt = xt ? asc__ty_find(xt) : NULL;
  uint64_t mag;
  bool neg;
  if (xt == NULL || xt->kind != ASC_TY_SCALAR || !asc__ty_is_intlike(xt) ||
      xt->dtype == ascBool)
    return false;
  return xt->weak || asc__infer_int_literal(x, &mag, &neg);
}

static asc__type *need_scalar(run *r, asc__ast_expr *e, int i) {
  asc__type *t = call_arg(r, e, i);
  if (t == NULL || is_err(t))
    return t;
  t = asc__ty_find(t);
  if (t->kind == ASC_TY_TENSOR && r->ew) {
    /* elementwise: typed as one element; the call's result has the
     * broadcast number of axes */
    if (t->ndim > r->ew_ndim)
      r->ew_ndim = t->ndim;
    return scalar(r, t->dtype);
  }
  if (t->kind != ASC_TY_SCALAR) {
    report(r, e->u.call.rargs[i]->loc, "%s() takes a scalar, not %s",
           e->u.call.builtin->name, tn(r, t));
    return err(r);
  }
  return t;
}

/* numpy's accumulator dtype of sum and prod: small integers and bools
 * widen to 64 bits. */
static ascDataType sum_dtype(ascDataType dt) {
  if (dt == ascBool || dt == ascInt8 || dt == ascInt16 || dt == ascInt32)
    return ascInt64;
  if (dt == ascUInt8 || dt == ascUInt16 || dt == ascUInt32)
    return ascUInt64;
  return dt;
}

/* np.sum(a), a.max(axis=1), np.dot(x, y) ... (docs/arrays.md). */
static asc__type *reduction(run *r, asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  asc__ast_expr *const *a = e->u.call.rargs;
  int n = e->u.call.nrargs;
  asc__type *t = call_arg(r, e, 0), *u;
  ascDataType dt, rt;
  int axis, keep = 0, naxes = 1;
  int32_t nd;
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind != ASC_TY_TENSOR && t->kind != ASC_TY_SCALAR) {
    report(r, a[0]->loc, "%s() takes an array, not %s", b->name, tn(r, t));
    return err(r);
  }
  if (t->kind == ASC_TY_SCALAR && t->weak)
    t = scalar(r, t->dtype);
  dt = t->dtype;
  nd = t->kind == ASC_TY_TENSOR ? t->ndim : 0;
  if (b->id == ASC_BI_NP_DOT) {
    u = call_arg(r, e, 1);
    PROPAGATE(u);
    u = asc__ty_find(u);
    if (n > 2 && a[2] != NULL && a[2]->kind != ASC_EXPR_NONE) {
      report(r, a[2]->loc, "dot(..., out=) is not supported in kernels");
      return err(r);
    }
    return asc__infer_matmul(r, t, u, e);
  }
  for (int i = 1; i < n; i++) {
    const char *pn = NULL;
    if (a[i] == NULL || a[i]->kind == ASC_EXPR_NONE)
      continue;
    {
      /* the parameter's name */
      const char *p = b->params;
      for (int j = 0; j < i && p; j++) {
        p = strchr(p, ',');
        if (p)
          p++;
      }
      pn = p;
    }
    if (pn && (strncmp(pn, "dtype", 5) == 0 || strncmp(pn, "out", 3) == 0)) {
      report(r, a[i]->loc, "%s(..., %.*s=) is not supported in kernels",
             b->name, strncmp(pn, "out", 3) == 0 ? 3 : 5, pn);
      return err(r);
    }
    if (pn && strncmp(pn, "keepdims", 8) == 0) {
      if (a[i]->kind != ASC_EXPR_BOOL) {
        report(r, a[i]->loc, "keepdims must be True or False");
        return err(r);
      }
      keep = a[i]->u.bval;
    }
    if (pn && strncmp(pn, "ddof", 4) == 0) {
      asc__type *dd = call_arg(r, e, i);
      PROPAGATE(dd);
      if (!asc__ty_is_intlike(dd) || asc__ty_find(dd)->dtype == ascBool) {
        report(r, a[i]->loc, "ddof must be an integer");
        return err(r);
      }
      asc__infer_coerce(r, a[i], scalar(r, ascInt64), 0);
    }
  }
  if (n > 1 && a[1] != NULL && a[1]->kind == ASC_EXPR_TUPLE &&
      (b->id == ASC_BI_NP_VAR || b->id == ASC_BI_NP_STD ||
       b->id == ASC_BI_NP_SUM || b->id == ASC_BI_NP_MEAN))
    axis = asc__infer_tuple_axes(r, a[1], nd, &naxes);
  else
    axis = asc__infer_reduction_axis(r, n > 1 ? a[1] : NULL, nd);
  if (axis == -2)
    return err(r);
  if (axis >= 0 && naxes == nd && !keep)
    axis = -1; /* every axis: a number, as numpy gives */
  if (asc__dtype_is_complex(dt) &&
      b->id != ASC_BI_NP_SUM && b->id != ASC_BI_NP_PROD &&
      b->id != ASC_BI_NP_MEAN && b->id != ASC_BI_NP_ANY &&
      b->id != ASC_BI_NP_ALL && b->id != ASC_BI_NP_DOT &&
      b->id != ASC_BI_NP_VAR && b->id != ASC_BI_NP_STD) {
    report(r, e->loc, "%s() of complex values is not supported in kernels "
           "(complex reductions: sum, prod, mean, var, std, any, all, dot)",
           b->name);
    return err(r);
  }
  switch (b->id) {
  case ASC_BI_NP_SUM:
  case ASC_BI_NP_PROD:
    rt = sum_dtype(dt);
    break;
  case ASC_BI_NP_MEAN:
    if (asc__dtype_is_complex(dt)) {
      rt = dt;
      break;
    }
    /* fall through */
  case ASC_BI_NP_VAR:
  case ASC_BI_NP_STD:
    /* of complex values: the mean of |x - mean|^2, real as in numpy */
    if (asc__dtype_is_complex(dt))
      rt = dt == ascComplex64 ? ascFloat32 : ascFloat64;
    else
      rt = asc__dtype_is_float(dt) ? dt : ascFloat64;
    break;
  case ASC_BI_NP_ANY:
  case ASC_BI_NP_ALL:
    rt = ascBool;
    break;
  case ASC_BI_NP_ARGMIN:
  case ASC_BI_NP_ARGMAX:
    rt = ascInt64;
    break;
  default:
    rt = dt;
    break;
  }
  if (axis < 0) {
    if (keep) {
      report(r, e->loc, "%s(..., keepdims=True) without an axis is not "
             "supported in kernels yet", b->name);
      return err(r);
    }
    return scalar(r, rt);
  }
  return asc__ty_tensor(r->in->c, rt, keep ? nd : nd - naxes, true);
}

/* a.transpose(...), np.transpose(a, axes): a view; a.ravel(),
 * np.ravel(a), a.flatten(): 1-D. */
static asc__type *view_call(run *r, asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  asc__type *t = call_arg(r, e, 0);
  int perm[ASC_MAX_DIMS];
  const asc__ast_expr *bad;
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind != ASC_TY_TENSOR) {
    report(r, e->u.call.rargs[0]->loc, "%s() takes an array, not %s",
           b->id == ASC_BI_NP_OUTER_LEFT ? "ufunc.outer"
           : b->id == ASC_BI_NP_EINSUM_OPERAND ? "np.einsum"
                                               : b->name,
           tn(r, t));
    return err(r);
  }
  if (b->id == ASC_BI_NP_EINSUM_OPERAND) { /* its subscripts, one per axis */
    int64_t nd = (int64_t)e->u.call.rargs[1]->u.ival;
    if (nd > t->ndim) {
      report(r, e->u.call.rargs[0]->loc, "einstein sum subscripts string "
             "contains too many subscripts for operand %d",
             (int)e->u.call.rargs[2]->u.ival);
      return err(r);
    }
    if (nd < t->ndim) {
      report(r, e->u.call.rargs[0]->loc, "operand has more dimensions than "
             "subscripts given in einstein sum, but no '...' ellipsis "
             "provided to broadcast the extra dimensions.");
      return err(r);
    }
    return t;
  }
  if (b->id == ASC_BI_NP_EINSUM_DIAG) /* of a 2-D operand */
    return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, 1, false);
  if (b->id == ASC_BI_NP_OUTER_LEFT) { /* np.UF.outer(A, B)'s A */
    asc__type *u = call_arg(r, e, 1);
    PROPAGATE(u);
    u = asc__ty_find(u);
    if (u->kind != ASC_TY_TENSOR || t->ndim + u->ndim > ASC_MAX_DIMS) {
      report(r, e->loc, "ufunc.outer in kernels takes two arrays of at most "
             "%d axes together, not %s and %s", ASC_MAX_DIMS, tn(r, t),
             tn(r, u));
      return err(r);
    }
    return asc__ty_tensor(r->in->c, (ascDataType)t->dtype,
                          t->ndim + u->ndim, false);
  }
  if (b->id == ASC_BI_NP_ROT90) {
    int k, a0, a1;
    const char *why;
    if (!asc__rot90_plan(e, t->ndim, &k, &a0, &a1, &why, &bad)) {
      report(r, bad->loc, "%s", why);
      return err(r);
    }
    return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, t->ndim, false);
  }
  if (b->id == ASC_BI_NP_FLIPUD || b->id == ASC_BI_NP_FLIPLR) {
    bool axes[ASC_MAX_DIMS];
    if (!asc__flip_axes(e, t->ndim, axes, &bad)) {
      report(r, bad->loc, "Input must be >= %d-d.",
             b->id == ASC_BI_NP_FLIPLR ? 2 : 1);
      return err(r);
    }
  }
  if (b->id == ASC_BI_NP_FLIP || b->id == ASC_BI_NP_FLIPUD ||
      b->id == ASC_BI_NP_FLIPLR) {
    bool axes[ASC_MAX_DIMS];
    if (!asc__flip_axes(e, t->ndim, axes, &bad)) {
      report(r, bad->loc, "flip's axis is None, an integer constant or a "
             "tuple of them, each one of the %d axes", (int)t->ndim);
      return err(r);
    }
    return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, t->ndim, false);
  }
  if (b->id == ASC_BI_NP_SWAPAXES || b->id == ASC_BI_NP_MOVEAXIS) {
    if (!asc__transpose_axes(e, t->ndim, perm, &bad)) {
      report(r, bad->loc, "%s's axes are integer constants, each one of "
             "the %d axes (-%d to %d)%s", b->name, (int)t->ndim,
             (int)t->ndim, (int)t->ndim - 1,
             b->id == ASC_BI_NP_MOVEAXIS ? " (one axis each: not yet "
                                           "sequences of them)" : "");
      return err(r);
    }
    return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, t->ndim, false);
  }
  if (b->id != ASC_BI_NP_TRANSPOSE)
    return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, 1, false);
  if (!asc__transpose_axes(e, t->ndim, perm, &bad)) {
    report(r, bad->loc, "transpose's axes must be a permutation of the "
           "%d axes, written as integer constants (a.transpose(1, 0), "
           "np.transpose(a, (1, 0)))", (int)t->ndim);
    return err(r);
  }
  return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, t->ndim, false);
}


/* np.cumsum(a, axis=None), a.cumsum(axis=k); np.outer(a, b) of 1-D
 * arrays. */
static asc__type *cumsum_outer(run *r, asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  asc__ast_expr *const *a = e->u.call.rargs;
  asc__type *t = call_arg(r, e, 0), *u;
  int axis;
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind != ASC_TY_TENSOR) {
    report(r, a[0]->loc, "%s() in kernels takes an array, not %s", b->name,
           tn(r, t));
    return err(r);
  }
  if (b->id == ASC_BI_NP_OUTER) {
    if (a[2] != NULL && a[2]->kind != ASC_EXPR_NONE) {
      report(r, a[2]->loc, "outer(..., out=) is not supported in kernels");
      return err(r);
    }
    u = call_arg(r, e, 1);
    PROPAGATE(u);
    u = asc__ty_find(u);
    if (u->kind != ASC_TY_TENSOR || t->ndim != 1 || u->ndim != 1) {
      report(r, e->loc, "np.outer in kernels takes two 1-D arrays, not %s "
             "and %s (ravel the others first: np.outer(a.ravel(), b))",
             tn(r, t), tn(r, u));
      return err(r);
    }
    t = asc__ty_find(asc__ty_promote(r->in->c, scalar(r, t->dtype),
                                     scalar(r, u->dtype)));
    return asc__ty_tensor(r->in->c, (ascDataType)t->dtype, 2, false);
  }
  for (int i = 2; i < 4; i++)
    if (a[i] != NULL && a[i]->kind != ASC_EXPR_NONE) {
      report(r, a[i]->loc, "%s(..., %s=) is not supported in kernels",
             b->name, i == 2 ? "dtype" : "out");
      return err(r);
    }
  axis = asc__infer_reduction_axis(r, a[1], t->ndim);
  if (axis == -2)
    return err(r);
  return asc__ty_tensor(r->in->c, sum_dtype((ascDataType)t->dtype),
                        axis < 0 ? 1 : t->ndim, false);
}

/* cmath.X: Python's cmath computes in double precision and returns a
 * Python complex (float for phase, a pair of floats for polar): a weak
 * complex128 / float64 whatever the argument's type (a real argument
 * too: cmath.sqrt(-1.0) is 1j). */
static asc__type *cmath_call(run *r, asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  asc__type *t = need_scalar(r, e, 0), *u, *el[2];
  PROPAGATE(t);
  switch (b->id) {
  case ASC_BI_ISNAN:
  case ASC_BI_ISINF:
  case ASC_BI_ISFINITE:
    return scalar(r, ascBool);
  case ASC_BI_CM_PHASE:
    return weak(r, ascFloat64);
  case ASC_BI_CM_POLAR:
    el[0] = el[1] = weak(r, ascFloat64);
    return asc__ty_tuple(r->in->c, 2, el);
  case ASC_BI_CM_RECT:
    u = need_scalar(r, e, 1);
    PROPAGATE(u);
    if (asc__dtype_is_complex(asc__ty_find(t)->dtype) ||
        asc__dtype_is_complex(asc__ty_find(u)->dtype)) {
      report(r, e->loc, "cmath.rect() takes real numbers, not %s",
             tn(r, asc__dtype_is_complex(asc__ty_find(t)->dtype) ? t : u));
      return err(r);
    }
    return weak(r, ascComplex128);
  default:
    return weak(r, ascComplex128);
  }
}

static asc__type *builtin_call_inner(run *r, asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  asc__type *t, *u;
  for (int i = 0; i < e->u.call.nrargs; i++)
    if (e->u.call.rargs[i] == NULL && i < b->min_args)
      return err(r); /* the resolver reported it */
  switch (b->kind) {
  case ASC_BK_DTYPE:
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    if (asc__dtype_is_complex(asc__ty_find(t)->dtype) &&
        !asc__dtype_is_complex(asc__builtin_dtype(b))) {
      report(r, e->loc, "cannot convert a complex number (%s) to %s: numpy "
             "would drop the imaginary part with a ComplexWarning; use "
             "z.real (or abs(z))",
             tn(r, t), asc__dtype_long(asc__builtin_dtype(b)));
      return err(r);
    }
    return scalar(r, asc__builtin_dtype(b));
  case ASC_BK_EXC:
    report(r, e->loc, "an exception can only be raised");
    return err(r);
  case ASC_BK_FUNC:
    break;
  default:
    report(r, e->loc, "'%s' cannot be called", b->name);
    return err(r);
  }
  if (asc__expr_via_cmath(e->u.call.func))
    return cmath_call(r, e);
  if (asc__builtin_is_reduction(b->id) || b->id == ASC_BI_NP_DOT)
    return reduction(r, e);
  if (asc__builtin_is_creation(b->id) || b->id == ASC_BI_NP_FILL)
    return creation(r, e);
  if (b->id == ASC_BI_NP_RESHAPE)
    return reshape(r, e);
  if (b->id == ASC_BI_NP_TRANSPOSE || b->id == ASC_BI_NP_RAVEL ||
      b->id == ASC_BI_NP_SWAPAXES || b->id == ASC_BI_NP_MOVEAXIS ||
      b->id == ASC_BI_NP_FLATTEN || b->id == ASC_BI_NP_FLIP ||
      b->id == ASC_BI_NP_FLIPUD || b->id == ASC_BI_NP_FLIPLR ||
      b->id == ASC_BI_NP_ROT90 || b->id == ASC_BI_NP_OUTER_LEFT || b->id == ASC_BI_NP_EINSUM_OPERAND ||
      b->id == ASC_BI_NP_EINSUM_DIAG)
    return view_call(r, e);
  if (b->id == ASC_BI_NP_CUMSUM || b->id == ASC_BI_NP_CUMPROD ||
      b->id == ASC_BI_NP_OUTER)
    return cumsum_outer(r, e);
  if (asc__builtin_is_numpy_func(b->id))
    return asc__infer_numpy(r, e);
  switch (b->id) {
  case ASC_BI_RANGE:
  case ASC_BI_PRANGE:
  case ASC_BI_STATIC_RANGE:
    report(r, e->loc, "%s() can only be the iterable of a for loop", b->name);
    return err(r);
  case ASC_BI_PARALLEL_FOR:
    t = call_arg(r, e, 0);
    if (t != NULL && !is_err(t) &&
        (!asc__ty_is_intlike(t) || asc__ty_find(t)->dtype == ascBool))
      report(r, e->u.call.rargs[0]->loc,
             "parallel_for's iteration count must be an integer, not %s",
             tn(r, t));
    else
      asc__infer_coerce(r, e->u.call.rargs[0], scalar(r, ascInt64), 0);
    loop_body(r, e->u.call.rargs[1]);
    return asc__ty_none(r->in->c);
  case ASC_BI_GET_BLOCK_IDX:
  case ASC_BI_GET_BLOCK_NUM:
    return scalar(r, ascInt64);
  case ASC_BI_BARRIER:
  case ASC_BI_CRITICAL:
    return asc__ty_none(r->in->c);
  case ASC_BI_ATOMIC_ADD:
  case ASC_BI_ATOMIC_SUB:
  case ASC_BI_ATOMIC_MIN:
  case ASC_BI_ATOMIC_MAX:
  case ASC_BI_ATOMIC_CAS:
  case ASC_BI_ATOMIC_EXCHANGE:
    return atomic(r, e);
  case ASC_BI_LOCK_ARRAY:
    t = call_arg(r, e, 0);
    PROPAGATE(t);
    if (!asc__ty_is_intlike(t) ||
        !asc__infer_is_const_int(r, e->u.call.rargs[0], 0)) {
      report(r, e->u.call.rargs[0]->loc,
             "lock_array's size must be an integer constant");
      return err(r);
    }
    asc__infer_coerce(r, e->u.call.rargs[0], scalar(r, ascInt64), 0);
    /* A lock array is a tensor of int32 lock words. */
    return asc__ty_tensor(r->in->c, ascInt32, 1, true);
  case ASC_BI_LOCK:
  case ASC_BI_UNLOCK:
    t = call_arg(r, e, 0);
    PROPAGATE(t);
    if (!is_kind(t, ASC_TY_TENSOR)) {
      report(r, e->u.call.rargs[0]->loc, "%s() needs a lock array, not %s",
             b->name, tn(r, t));
      return err(r);
    }
    asc__infer_check_tensor_index(r, asc__ty_find(t), e->u.call.rargs[1],
                                  e->u.call.rargs[1]->loc);
    return asc__ty_none(r->in->c);
  case ASC_BI_LOCAL_ARRAY:
  case ASC_BI_SHARED_ARRAY:
    return scratch_array(r, e);
  case ASC_BI_MIN:
  case ASC_BI_MAX:
    t = need_scalar(r, e, 0);
    for (int i = 1; i < e->u.call.nrargs; i++) {
      u = need_scalar(r, e, i);
      if (t == NULL || u == NULL) {
        t = NULL;
        continue;
      }
      if (is_err(t) || is_err(u)) {
        t = err(r);
        continue;
      }
      t = asc__ty_promote(r->in->c, t, u);
    }
    if (t != NULL && !is_err(t) && asc__dtype_is_complex(asc__ty_find(t)->dtype)) {
      report(r, e->loc, "complex numbers have no order: %s() of %s", b->name,
             tn(r, t));
      return err(r);
    }
    return t;
  case ASC_BI_ABS:
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    if (asc__dtype_is_complex(asc__ty_find(t)->dtype))
      return complex_part(r, t); /* |z| is real */
    return bool_as_int(r, e, t);
  case ASC_BI_COMPLEX:
    /* complex(re[, im]): a Python complex, weak as float() is */
    t = need_scalar(r, e, 0);
    u = e->u.call.nrargs > 1 ? need_scalar(r, e, 1) : t;
    PROPAGATE(t);
    PROPAGATE(u);
    if (asc__dtype_is_complex(asc__ty_find(t)->dtype) ||
        asc__dtype_is_complex(asc__ty_find(u)->dtype)) {
      report(r, e->loc, "complex() of a complex value: use it directly");
      return err(r);
    }
    return weak(r, ascComplex128);
  case ASC_BI_NP_CONJ:
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    return asc__ty_find(t)->dtype == ascBool ? weak(r, ascInt64) : t;
  case ASC_BI_NP_ANGLE:
  case ASC_BI_NP_REAL:
  case ASC_BI_NP_IMAG:
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    if (b->id == ASC_BI_NP_ANGLE && !asc__infer_angle_deg(r, e))
      return err(r);
    if (asc__dtype_is_complex(asc__ty_find(t)->dtype))
      return complex_part(r, t);
    if (b->id == ASC_BI_NP_ANGLE)
      return floatify(r, t);
    return t; /* np.real / np.imag of a real number: its type */
  case ASC_BI_LEN:
    t = call_arg(r, e, 0);
    PROPAGATE(t);
    t = asc__ty_find(t);
    if (t->kind == ASC_TY_TUPLE)
      return weak(r, ascInt64);
    if (t->kind == ASC_TY_TENSOR && t->ndim > 0)
      return scalar(r, ascInt64);
    report(r, e->loc, "len() of %s", tn(r, t));
    return err(r);
  case ASC_BI_FLOAT:
  case ASC_BI_INT:
    /* Python scalars are weak. */
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    return weak(r, b->id == ASC_BI_FLOAT ? ascFloat64 : ascInt64);
  case ASC_BI_BOOL:
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    return scalar(r, ascBool);
  case ASC_BI_ISNAN:
  case ASC_BI_ISINF:
  case ASC_BI_ISFINITE:
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    return scalar(r, ascBool);
  case ASC_BI_FLOOR:
  case ASC_BI_CEIL:
  case ASC_BI_TRUNC:
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    if (!asc__expr_via_asc(e->u.call.func)) /* math.floor returns a Python int */
      return asc__ty_is_floatlike(t) || !asc__ty_find(t)->weak
                 ? scalar(r, ascInt64)
                 : t;
    return bool_as_int(r, e, t);
  case ASC_BI_POW:
    t = need_scalar(r, e, 0);
    u = need_scalar(r, e, 1);
    PROPAGATE(t);
    PROPAGATE(u);
    if (e->u.call.func->kind == ASC_EXPR_ATTR && !asc__expr_via_asc(e->u.call.func))
      return floatify(r, asc__ty_promote(r->in->c, t, u)); /* math.pow */
    {
      asc__type *p = asc__infer_arith_promote(r, t, u);
      if (!asc__dtype_is_float(p->dtype) &&
          asc__infer_is_neg_int_literal(e->u.call.rargs[1])) {
        report(r, e->u.call.rargs[1]->loc,
               "integer power with a negative exponent: make the base a "
               "float");
        return err(r);
      }
      return p;
    }
  case ASC_BI_NP_WHERE:
  case ASC_BI_NP_CLIP: {
    /* np.where(c, x, y): c's truth chooses; np.clip(a, lo, hi) */
    asc__type *w;
    bool where = b->id == ASC_BI_NP_WHERE;
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    /* a clip bound left out (NULL) takes no part in the type */
    u = e->u.call.rargs[1] == NULL ? t : need_scalar(r, e, 1);
    w = e->u.call.rargs[2] == NULL ? t : need_scalar(r, e, 2);
    PROPAGATE(u);
    PROPAGATE(w);
    /* a choice, not arithmetic: bools stay bool, as in numpy */
    if (where)
      return asc__ty_promote(r->in->c, u, w);
    if (asc__dtype_is_complex(asc__ty_find(t)->dtype) ||
        asc__dtype_is_complex(asc__ty_find(u)->dtype) ||
        asc__dtype_is_complex(asc__ty_find(w)->dtype)) {
      report(r, e->loc, "complex numbers have no order: clip() of %s",
             tn(r, t));
      return err(r);
    }
    /* a Python int bound of an integer array takes no part in the type:
     * numpy 2 clips with it even past the dtype's range (np.clip(i64, 0,
     * 2**63) is int64; clip_bound checks the other end) */
    if (asc__ty_is_intlike(asc__ty_find(t)) && !asc__ty_find(t)->weak &&
        asc__ty_find(t)->dtype != ascBool) {
      if (u != t && python_int(e->u.call.rargs[1], u))
        u = t;
      if (w != t && python_int(e->u.call.rargs[2], w))
        w = t;
    }
    return asc__ty_promote(r->in->c, t, asc__ty_promote(r->in->c, u, w));
  }
  case ASC_BI_NP_SIGN:
  case ASC_BI_NP_RECIPROCAL:
  case ASC_BI_NP_ROUND:
    t = need_scalar(r, e, 0);
    PROPAGATE(t);
    return asc__infer_ufunc_more(r, e, t);
  case ASC_BI_ATAN2:
  case ASC_BI_HYPOT:
  case ASC_BI_FMOD:
  case ASC_BI_COPYSIGN:
  case ASC_BI_NP_FMAX:
  case ASC_BI_NP_FMIN:
  case ASC_BI_NP_HEAVISIDE:
  case ASC_BI_NP_LOGADDEXP:
    t = need_scalar(r, e, 0);
    u = need_scalar(r, e, 1);
    PROPAGATE(t);
    PROPAGATE(u);
    if (asc__dtype_is_complex(asc__ty_find(t)->dtype) ||
        asc__dtype_is_complex(asc__ty_find(u)->dtype)) {
      report(r, e->loc, "'%s' of complex numbers is not supported",
             b->name);
      return err(r);
    }
    /* fmax and fmin keep integers (and bools); heaviside and logaddexp
     * have float loops only */
    if (b->id == ASC_BI_NP_FMAX || b->id == ASC_BI_NP_FMIN)
      return asc__ty_promote(r->in->c, t, u);
    /* np.fmod of integers is numpy's integer fmod (math.fmod a float) */
    if (b->id == ASC_BI_FMOD && asc__expr_via_asc(e->u.call.func)) {
      u = asc__ty_promote(r->in->c, t, u);
      if (asc__ty_find(u)->dtype == ascBool)
        return scalar(r, ascInt8);
      if (asc__ty_is_intlike(u))
        return u;
    }
    return floatify(r, asc__ty_promote(r->in->c, t, u));
  default:
    /* sin, cos, exp, log, sqrt, erf, fabs, ... */
    if (b->min_args == 1 && b->max_args == 1) {
      t = need_scalar(r, e, 0);
      PROPAGATE(t);
      if (asc__dtype_is_complex(asc__ty_find(t)->dtype)) {
        switch (b->id) {
        case ASC_BI_SIN: case ASC_BI_COS: case ASC_BI_TAN:
        case ASC_BI_SINH: case ASC_BI_COSH: case ASC_BI_TANH:
        case ASC_BI_EXP: case ASC_BI_LOG: case ASC_BI_SQRT:
          return t;
        default:
          report(r, e->loc, "'%s' of a complex number (%s) is not "
                 "supported in kernels (complex: sin, cos, tan, sinh, "
                 "cosh, tanh, exp, log, sqrt, abs, angle)",
                 b->name, tn(r, t));
          return err(r);
        }
      }
      return floatify(r, t);
    }
    report(r, e->loc, "'%s' is not supported here", b->name);
    return err(r);
  }
}

/* Builtins whose weak arguments take the result's type. */
static bool args_follow_result(asc__builtin_id id) {
  switch (id) {
  case ASC_BI_MIN:
  case ASC_BI_MAX:
  case ASC_BI_ABS:
  case ASC_BI_POW:
  case ASC_BI_ATAN2:
  case ASC_BI_HYPOT:
  case ASC_BI_FMOD:
  case ASC_BI_COPYSIGN:
  case ASC_BI_FLOOR:
  case ASC_BI_CEIL:
  case ASC_BI_TRUNC:
  case ASC_BI_NP_CLIP:
  case ASC_BI_SIN: case ASC_BI_COS: case ASC_BI_TAN: case ASC_BI_ASIN:
  case ASC_BI_ACOS: case ASC_BI_ATAN: case ASC_BI_SINH: case ASC_BI_COSH:
  case ASC_BI_TANH: case ASC_BI_EXP: case ASC_BI_EXP2: case ASC_BI_EXPM1:
  case ASC_BI_LOG: case ASC_BI_LOG2: case ASC_BI_LOG10: case ASC_BI_LOG1P:
  case ASC_BI_SQRT: case ASC_BI_FABS: case ASC_BI_ERF: case ASC_BI_ERFC:
  case ASC_BI_NP_CBRT: case ASC_BI_ASINH: case ASC_BI_ACOSH:
  case ASC_BI_ATANH: case ASC_BI_NP_SIGN: case ASC_BI_NP_HEAVISIDE:
  case ASC_BI_NP_FMAX: case ASC_BI_NP_FMIN: case ASC_BI_NP_LOGADDEXP:
  case ASC_BI_NP_RECIPROCAL:
    return true;
  default:
    return false;
  }
}

/* Builtins that apply to each element of array arguments (numpy's
 * ufuncs); min and max only as np.minimum / np.maximum, since Python's
 * min(a, b) of arrays is an error. */
bool asc__builtin_is_elementwise(const asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  if (asc__expr_via_cmath(e->u.call.func))
    return false; /* cmath takes numbers, as in Python */
  switch (b->id) {
  case ASC_BI_MIN:
  case ASC_BI_MAX:
    return e->u.call.func->kind == ASC_EXPR_ATTR &&
           asc__expr_via_asc(e->u.call.func) &&
           e->u.call.func->u.attr.value->u.name.sym->u.module == ASC_NS_NP;
  case ASC_BI_ISNAN:
  case ASC_BI_ISINF:
  case ASC_BI_ISFINITE:
  case ASC_BI_NP_ROUND: /* its decimals is a number, not an element */
  case ASC_BI_NP_WHERE:
  case ASC_BI_NP_CLIP:
  case ASC_BI_NP_CONJ:  /* np.conj(a), np.real(a), ... of an array: */
  case ASC_BI_NP_REAL:  /* each element's (np.real and np.imag of an */
  case ASC_BI_NP_IMAG:  /* array are views in numpy; here new arrays, */
  case ASC_BI_NP_ANGLE: /* which reading cannot tell apart) */
    return true;
  default:
    /* np.float32(a) of an array converts each element (a.astype) */
    return b->kind == ASC_BK_DTYPE ||
           (b->kind == ASC_BK_FUNC && args_follow_result(b->id));
  }
}

/* np.clip's bound x of an integer result f: numpy lets a Python int below
 * f's range stand for no lower bound (and one above it for no upper
 * bound); a literal past the other end is an error.  Other bounds, and
 * those computed at run time, are checked when the kernel runs
 * (asc__lower_fit_int). */
static void clip_bound(run *r, asc__ast_expr *x, asc__type *f, bool upper) {
  uint64_t mag;
  bool neg;
  if (!asc__ty_is_intlike(f) || f->dtype == ascBool || !python_int(x, x->type)) {
    asc__infer_coerce(r, x, f, 0);
    return;
  }
  if (asc__infer_int_literal(x, &mag, &neg) &&
      !asc__infer_literal_fits(mag, neg, f->dtype) && neg == upper)
    asc__infer_coerce(r, x, f, 0); /* reports it */
}

/* The weak arguments of builtin call e that take its result's type f
 * (an array's elements for an elementwise call of arrays). */
static void follow_result(run *r, asc__ast_expr *e, asc__type *f) {
  asc__ast_expr **a = e->u.call.rargs;
  if (e->u.call.builtin->kind == ASC_BK_DTYPE) {
    int_into(r, a[0], f->dtype);
    return;
  }
  switch (e->u.call.builtin->id) {
  case ASC_BI_NP_WHERE:
    asc__infer_coerce(r, a[1], f, 0);
    asc__infer_coerce(r, a[2], f, 0);
    return;
  case ASC_BI_NP_CLIP:
    asc__infer_coerce(r, a[0], f, 0);
    if (a[1] != NULL)
      clip_bound(r, a[1], f, false);
    if (a[2] != NULL)
      clip_bound(r, a[2], f, true);
    return;
  default:
    if (args_follow_result(e->u.call.builtin->id))
      for (int i = 0; i < e->u.call.nrargs; i++)
        asc__infer_coerce(r, a[i], f, 0);
    return;
  }
}

static asc__type *builtin_call(run *r, asc__ast_expr *e) {
  bool save_ew = r->ew;
  int32_t save_nd = r->ew_ndim, nd;
  asc__type *t, *f;
  r->ew = asc__builtin_is_elementwise(e);
  r->ew_ndim = 0;
  t = builtin_call_inner(r, e);
  nd = r->ew_ndim;
  r->ew = save_ew;
  r->ew_ndim = save_nd;
  f = asc__ty_find(t);
  if (r->check && f != NULL && f->kind == ASC_TY_SCALAR && !f->weak)
    follow_result(r, e, f);
  if (nd > 0 && f != NULL && f->kind == ASC_TY_SCALAR)
    return asc__ty_tensor(r->in->c, f->dtype, nd, true);
  return t;
}


static asc__type *helper_call(run *r, asc__ast_expr *e) {
  asc__ast_func *fn = e->u.call.callee;
  int32_t n = e->u.call.nrargs;
  asc__type **args = asc__arena_alloc(r->in->c, sizeof *args * (size_t)(n + 1));
  bool unknown = false, bad = false;
  inst *in;
  for (int32_t i = 0; i < n; i++) {
    asc__ast_expr *a = e->u.call.rargs[i];
    if (a == NULL) {
      bad = true;
      continue;
    }
    args[i] = asc__infer_expr(r, a);
    if (args[i] == NULL)
      unknown = true;
    else if (is_err(args[i]))
      bad = true;
    else if (is_kind(args[i], ASC_TY_STR) || is_kind(args[i], ASC_TY_NONE)) {
      report(r, a->loc, "cannot pass %s to a helper", tn(r, args[i]));
      bad = true;
    }
  }
  if (bad)
    return err(r);
  if (unknown)
    return NULL;
  if (n != fn->nparams) {
    report(r, e->loc, "'%s' takes %d arguments, not %d", fn->name,
           fn->nparams, (int)n);
    return err(r);
  }
  /* Annotated parameters take arguments that convert to them, and an
   * instance is made for the annotated type, not the argument's. */
  for (int32_t i = 0; i < n; i++) {
    asc__type *at;
    if (fn->params[i].annotation == NULL)
      continue;
    at = asc__infer_annotation_type(r, fn->params[i].annotation, NULL);
    if (at == NULL || is_err(at))
      continue;
    if (at->kind == ASC_TY_TENSOR && is_kind(args[i], ASC_TY_TENSOR))
      at->contiguous = asc__ty_find(args[i])->contiguous;
    if (!asc__infer_fits(r, args[i], at, true, 0)) {
      report(r, e->u.call.rargs[i]->loc,
             "argument '%s' of '%s' is annotated %s; cannot pass %s",
             fn->params[i].name, fn->name, py_name(r, at), tn(r, args[i]));
      bad = true;
    }
    args[i] = at;
  }
  if (bad)
    return err(r);
  in = asc__infer_instantiate(r, fn, args, n, e->loc);
  if (in == NULL)
    return err(r);
  if (r->check) {
    infer *I = r->in;
    asc__typed *out = I->out;
    /* Annotated parameters convert the arguments. */
    for (int32_t i = 0; i < n; i++)
      asc__infer_coerce(r, e->u.call.rargs[i],
                        in->pub.type ? in->pub.type->elems[i] : NULL, 0);
    out->calls = asc__arena_grow(I->c, out->calls, out->ncalls,
                                 &I->ncalls_cap, sizeof *out->calls, 16);
    out->calls[out->ncalls].call = e;
    out->calls[out->ncalls].inst = &in->pub;
    out->ncalls++;
  }
  return in->ret;
}

static asc__type *struct_ctor(run *r, asc__ast_expr *e) {
  asc__type *st = asc__infer_struct_type(r, e->u.call.cls);
  asc__ast_class *cls = e->u.call.cls;
  bool unknown = false;
  if (e->u.call.nrargs > cls->nfields) {
    report(r, e->loc, "%s has %d fields, not %d", cls->name, cls->nfields,
           e->u.call.nrargs);
    return err(r);
  }
  for (int i = 0; i < cls->nfields; i++) {
    asc__ast_expr *a = i < e->u.call.nrargs ? e->u.call.rargs[i] : NULL;
    asc__type *at;
    if (a == NULL) {
      asc__ast_expr *def = cls->fields[i].def;
      if (def == NULL) {
        report(r, e->loc, "%s() is missing field '%s'", cls->name,
               cls->fields[i].name);
      } else if (r->check) {
        /* the default is typed where it is used */
        asc__type *dt = asc__infer_expr(r, def);
        if (!asc__infer_fits(r, dt, st->fields[i].type, true, 0))
          report(r, def->loc, "field '%s' of %s has type %s, not %s",
                 cls->fields[i].name, cls->name, tn(r, st->fields[i].type),
                 tn(r, dt));
        else
          asc__infer_coerce(r, def, st->fields[i].type, 0);
      }
      continue;
    }
    at = asc__infer_expr(r, a);
    if (at == NULL) {
      unknown = true;
      continue;
    }
    if (!asc__infer_fits(r, at, st->fields[i].type, true, 0))
      report(r, a->loc, "field '%s' of %s has type %s, not %s",
             cls->fields[i].name, cls->name, tn(r, st->fields[i].type),
             tn(r, at));
    else
      asc__infer_coerce(r, a, st->fields[i].type, 0);
  }
  return unknown ? NULL : st;
}

asc__type *asc__infer_call(run *r, asc__ast_expr *e) {
  /* comprehensions among the arguments become tuples before the rules
   * look at them, as if written in place */
  for (int i = 0; i < e->u.call.nargs; i++)
    if (e->u.call.args[i]->comp != NULL &&
        !asc__infer_unroll(r, e->u.call.args[i]))
      return err(r);
  for (int i = 0; i < e->u.call.nkws; i++)
    if (e->u.call.kws[i].value->comp != NULL &&
        !asc__infer_unroll(r, e->u.call.kws[i].value))
      return err(r);
  if (e->u.call.builtin != NULL)
    return builtin_call(r, e);
  if (e->u.call.callee != NULL)
    return helper_call(r, e);
  if (e->u.call.cls != NULL)
    return struct_ctor(r, e);
  report(r, e->loc, "only helpers (@asc.func), builtins and struct classes "
                    "can be called");
  return err(r);
}
