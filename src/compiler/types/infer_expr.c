/*
 * Type inference of expressions: operators (Python's and numpy's rules),
 * indexing and slicing, names, attributes, comparisons and integer
 * literal arithmetic.  Calls are in infer_call.c; infer.c holds the
 * solver.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

/* ------------------------------------------------------------ operators */

bool asc__infer_is_neg_int_literal(const asc__ast_expr *e) {
  return e != NULL && e->kind == ASC_EXPR_UNARY &&
         e->u.unary.op == ASC_UN_NEG &&
         e->u.unary.operand->kind == ASC_EXPR_INT &&
         e->u.unary.operand->u.ival != 0;
}

static const char *op_name(asc__binop op) { return asc__binop_str(op); }

/* a @ b, np.dot(a, b), np.matmul(a, b): numpy's shapes in the promoted
 * dtype.  A vector times a vector is a scalar; operands of more than two
 * axes are stacks of matrices whose leading axes broadcast (matmul's
 * rule, docs/arrays.md "N-D matrix products").  np.dot of a right
 * operand of more than two axes sums over another axis than matmul
 * does: a compile error. */
asc__type *asc__infer_matmul(run *r, asc__type *a, asc__type *b,
                             asc__ast_expr *e) {
  asc__type *p;
  int nd, ba, bb;
  if (a->kind != ASC_TY_TENSOR || b->kind != ASC_TY_TENSOR ||
      a->ndim < 1 || b->ndim < 1) {
    report(r, e->loc, "matrix products in kernels take arrays of 1 or "
           "more axes, not %s and %s", tn(r, a), tn(r, b));
    return err(r);
  }
  if (b->ndim > 2 && e->kind == ASC_EXPR_CALL &&
      e->u.call.func->kind == ASC_EXPR_ATTR &&
      strcmp(e->u.call.func->u.attr.attr, "dot") == 0) {
    report(r, e->loc, "np.dot of a right operand of more than 2 axes "
           "(%s) is not supported in kernels: it sums over another axis "
           "than np.matmul (use np.matmul or @)", tn(r, b));
    return err(r);
  }
  p = asc__ty_find(asc__infer_arith_promote(r, scalar(r, a->dtype),
                                            scalar(r, b->dtype)));
  ba = a->ndim > 2 ? a->ndim - 2 : 0;
  bb = b->ndim > 2 ? b->ndim - 2 : 0;
  nd = (ba > bb ? ba : bb) + (a->ndim >= 2) + (b->ndim >= 2);
  if (nd == 0)
    return scalar(r, p->dtype);
  return asc__ty_tensor(r->in->c, p->dtype, nd, true);
}

asc__type *asc__infer_arith_promote(run *r, asc__type *a, asc__type *b) {
  asc__type *p = asc__ty_promote(r->in->c, a, b);
  /* Python: True + True == 2. */
  if (p != NULL && p->dtype == ascBool)
    return weak(r, ascInt64);
  return p;
}

/* numpy's operators on two bool operands, one of them an array: + is or,
 * * is and, - raises TypeError (as unary - does), / gives float64 and
 * //, %, **, <<, >> work in int8.  Scalars keep Python's bool arithmetic
 * (True + True == 2). */
static asc__type *bool_array_op(run *r, asc__binop op, asc__ast_expr *e) {
  switch (op) {
  case ASC_BIN_ADD:
  case ASC_BIN_MUL:
  case ASC_BIN_BITAND:
  case ASC_BIN_BITOR:
  case ASC_BIN_BITXOR:
    return scalar(r, ascBool);
  case ASC_BIN_SUB:
    report(r, e->loc, "numpy boolean subtract, the `-` operator, is not "
           "supported, use the bitwise_xor, the `^` operator, or the "
           "logical_xor function instead");
    return err(r);
  case ASC_BIN_DIV:
    return scalar(r, ascFloat64);
  default:
    return scalar(r, ascInt8);
  }
}

/* The type of `a op b`; elems: a and b are the elements of array
 * operands (numpy's rules where they differ from Python's). */
asc__type *asc__infer_binop(run *r, asc__binop op, asc__type *a,
                            asc__type *b, asc__ast_expr *e, bool elems) {
  asc__type *p;
  if (op == ASC_BIN_MATMUL) {
    PROPAGATE(a);
    PROPAGATE(b);
    return asc__infer_matmul(r, asc__ty_find(a), asc__ty_find(b), e);
  }
  PROPAGATE(a);
  PROPAGATE(b);
  a = asc__ty_find(a);
  b = asc__ty_find(b);
  if ((a->kind == ASC_TY_TENSOR || b->kind == ASC_TY_TENSOR) &&
      (a->kind == ASC_TY_TENSOR || a->kind == ASC_TY_SCALAR) &&
      (b->kind == ASC_TY_TENSOR || b->kind == ASC_TY_SCALAR)) {
    /* numpy: elementwise, in the promoted dtype of the elements (an
     * array's elements are strong; a Python scalar stays weak) */
    int32_t nd = a->kind == ASC_TY_TENSOR ? a->ndim : 0;
    asc__type *ea = a->kind == ASC_TY_TENSOR ? scalar(r, a->dtype) : a;
    asc__type *eb = b->kind == ASC_TY_TENSOR ? scalar(r, b->dtype) : b;
    asc__type *el;
    if (b->kind == ASC_TY_TENSOR && b->ndim > nd)
      nd = b->ndim;
    if (e->kind == ASC_EXPR_BINARY) {
      /* a literal past int64 is a Python int, not a uint64 array: with
       * an array of signed integers numpy raises OverflowError (it does
       * not go to float64 as a uint64 array would) */
      const asc__ast_expr *lit =
          e->u.binary.lhs->kind == ASC_EXPR_INT ? e->u.binary.lhs
          : e->u.binary.rhs->kind == ASC_EXPR_INT ? e->u.binary.rhs : NULL;
      asc__type *arr = lit == e->u.binary.lhs ? b : a;
      if (lit != NULL && lit->u.ival > (uint64_t)INT64_MAX &&
          arr->kind == ASC_TY_TENSOR && asc__dtype_is_signed(arr->dtype)) {
        report(r, lit->loc, "integer literal %llu does not fit in %s",
               (unsigned long long)lit->u.ival, asc__dtype_long(arr->dtype));
        return err(r);
      }
    }
    if (ea->dtype == ascBool && eb->dtype == ascBool)
      el = bool_array_op(r, op, e);
    else
      el = asc__infer_binop(r, op, ea, eb, e, true);
    PROPAGATE(el);
    el = asc__ty_find(el);
    /* a Python int or float operand takes the elements' type, and an
     * integer literal must be a value of it (numpy's OverflowError) */
    if (r->check && !el->weak) {
      if (a->kind == ASC_TY_SCALAR && a->weak)
        asc__infer_coerce(r, e->u.binary.lhs, el, 0);
      if (b->kind == ASC_TY_SCALAR && b->weak)
        asc__infer_coerce(r, e->u.binary.rhs, el, 0);
    }
    return asc__ty_tensor(r->in->c, el->dtype, nd, true);
  }
  if (a->kind != ASC_TY_SCALAR || b->kind != ASC_TY_SCALAR) {
    report(r, e->loc, "unsupported operand types for %s: %s and %s",
           op_name(op), tn(r, a), tn(r, b));
    return err(r);
  }
  if ((asc__dtype_is_complex(a->dtype) || asc__dtype_is_complex(b->dtype)) &&
      (op == ASC_BIN_FLOORDIV || op == ASC_BIN_MOD)) {
    report(r, e->loc, "unsupported operand types for %s: %s and %s (complex "
           "numbers have no floor division or remainder, as in Python)",
           op_name(op), tn(r, a), tn(r, b));
    return err(r);
  }
  switch (op) {
  case ASC_BIN_ADD:
  case ASC_BIN_SUB:
  case ASC_BIN_MUL:
  case ASC_BIN_FLOORDIV:
  case ASC_BIN_MOD:
    return asc__infer_arith_promote(r, a, b);
  case ASC_BIN_DIV:
    p = asc__infer_arith_promote(r, a, b);
    if (asc__dtype_is_float(p->dtype) || asc__dtype_is_complex(p->dtype))
      return p;
    return p->weak ? weak(r, ascFloat64) : scalar(r, ascFloat64);
  case ASC_BIN_POW:
    p = asc__infer_arith_promote(r, a, b);
    if (!asc__dtype_is_float(p->dtype) && !asc__dtype_is_complex(p->dtype) &&
        asc__infer_is_neg_int_literal(e->u.binary.rhs)) {
      report(r, e->u.binary.rhs->loc,
             "integer power with a negative exponent (%s ** %s): make the "
             "base a float",
             tn(r, a), tn(r, b));
      return err(r);
    }
    return p;
  case ASC_BIN_LSHIFT:
  case ASC_BIN_RSHIFT:
  case ASC_BIN_BITAND:
  case ASC_BIN_BITOR:
  case ASC_BIN_BITXOR: {
    bool shift = op == ASC_BIN_LSHIFT || op == ASC_BIN_RSHIFT;
    /* numpy shifts bool array elements as integers; Python's scalar
     * bools are not shifted here */
    if (!asc__ty_is_intlike(a) || !asc__ty_is_intlike(b) ||
        (shift && !elems &&
         (a->dtype == ascBool || b->dtype == ascBool))) {
      report(r, e->loc, "unsupported operand types for %s: %s and %s",
             op_name(op), tn(r, a), tn(r, b));
      return err(r);
    }
    p = asc__ty_promote(r->in->c, a, b);
    if (!asc__ty_is_intlike(p)) {
      /* uint64 with a signed type: no integer type holds both */
      report(r, e->loc, "unsupported operand types for %s: %s and %s (no "
             "integer type holds both, and numpy raises TypeError too: "
             "convert one, e.g. asc.int64(x))",
             op_name(op), tn(r, a), tn(r, b));
      return err(r);
    }
    return p;
  }
  case ASC_BIN_MATMUL: /* reported above */
    break;
  }
  return err(r);
}

bool asc__infer_check_truth(run *r, asc__type *t, asc__ast_expr *e) {
  t = asc__ty_find(t);
  if (t == NULL || is_err(t) || t->kind == ASC_TY_SCALAR)
    return true;
  report(r, e->loc, "a condition must be a scalar, not %s%s", tn(r, t),
         t->kind == ASC_TY_TENSOR
             ? " (numpy: the truth value of an array is ambiguous; use "
               "np.any(...) or np.all(...))"
             : "");
  return false;
}

/* ------------------------------------------------------------- indexing */

/* Checks the indices of t[...] (or an atomic's idx) against a tensor of
 * type tt; ix is the index expression (a Tuple for several). */
void asc__infer_check_tensor_index(run *r, asc__type *tt, asc__ast_expr *ix,
                                   asc__loc loc) {
  asc__ast_expr *one[1];
  asc__ast_expr **elts = one;
  int n = 1;
  if (ix->kind == ASC_EXPR_TUPLE) {
    elts = ix->u.tuple.elts;
    n = ix->u.tuple.n;
  } else {
    one[0] = ix;
  }
  for (int i = 0; i < n; i++) {
    asc__type *it;
    if (elts[i]->kind == ASC_EXPR_SLICE) {
      report(r, elts[i]->loc, "slicing a tensor is not supported");
      continue;
    }
    it = asc__ty_find(asc__infer_expr(r, elts[i]));
    if (it != NULL && it->kind == ASC_TY_TENSOR && n > 1) {
      report(r, elts[i]->loc, "kernels take an index array or a boolean "
             "mask only as the whole index (a[idx], a[mask]), not together "
             "with other indices");
    } else if (it != NULL && !is_err(it) &&
        (!asc__ty_is_intlike(it) || it->dtype == ascBool)) {
      report(r, elts[i]->loc, "a tensor index must be an integer, not %s",
             tn(r, it));
    } else if (it != NULL && it->weak) {
      asc__infer_coerce(r, elts[i], scalar(r, ascInt64), 0);
    }
  }
  if (ix->kind == ASC_EXPR_TUPLE && r->check)
    asc__infer_settype(r, ix, asc__ty_shape(r->in->c, n));
  if (n != tt->ndim) {
    report(r, loc, "%s indexed with %d %s; it needs %d", tn(r, tt), n,
           n == 1 ? "index" : "indices", (int)tt->ndim);
  }
}

/* Is ix (a subscript's index) numpy basic indexing that selects a view
 * rather than one element: a slice, None, or fewer integers than axes? */
bool asc__infer_index_is_view(const asc__ast_expr *ix, int32_t ndim) {
  int n = ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.n : 1;
  for (int i = 0; i < n; i++) {
    const asc__ast_expr *x =
        ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.elts[i] : ix;
    if (x->kind == ASC_EXPR_SLICE || x->kind == ASC_EXPR_NONE)
      return true;
  }
  return n < ndim;
}

/* Types the parts of t[ix] that select a view (numpy basic indexing:
 * integers, start:stop:step slices, None for a new axis; axes not named
 * are whole) and returns the view's type. */
static asc__type *view_index(run *r, asc__type *tt, asc__ast_expr *ix,
                             asc__loc loc) {
  asc__ast_expr *one[1] = {ix};
  asc__ast_expr **elts = ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.elts : one;
  int n = ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.n : 1;
  int32_t used = 0, out = 0;
  bool bad = false, ellipsis = false;
  for (int i = 0; i < n; i++) {
    asc__ast_expr *x = elts[i];
    asc__ast_expr *parts[3] = {x, NULL, NULL};
    int np_ = 1;
    if (x->kind == ASC_EXPR_SLICE && x->u.slice.ellipsis) {
      if (ellipsis) {
        report(r, x->loc, "an index can only have a single ellipsis "
               "('...')");
        bad = true;
      }
      ellipsis = true;
      continue;
    }
    if (x->kind == ASC_EXPR_NONE) {
      out++;
      if (r->check)
        asc__infer_settype(r, x, asc__ty_none(r->in->c));
      continue;
    }
    if (x->kind == ASC_EXPR_SLICE) {
      parts[0] = x->u.slice.lower;
      parts[1] = x->u.slice.upper;
      parts[2] = x->u.slice.step;
      np_ = 3;
      out++;
    }
    used++;
    for (int k = 0; k < np_; k++) {
      asc__type *it;
      if (parts[k] == NULL)
        continue;
      it = asc__ty_find(asc__infer_expr(r, parts[k]));
      if (it != NULL && np_ == 3 && it->kind == ASC_TY_NONE)
        continue; /* a[None:n] */
      if (it != NULL && np_ == 1 && it->kind == ASC_TY_TENSOR) {
        report(r, parts[k]->loc, "kernels take an index array or a "
               "boolean mask only as the whole index (a[idx], a[mask]), "
               "not together with other indices");
        bad = true;
        continue;
      }
      if (it != NULL && !is_err(it) &&
          (!asc__ty_is_intlike(it) || it->dtype == ascBool)) {
        report(r, parts[k]->loc, "%s must be an integer, not %s",
               np_ == 3 ? "a slice bound" : "a tensor index", tn(r, it));
        bad = true;
      } else if (it != NULL && it->weak) {
        asc__infer_coerce(r, parts[k], scalar(r, ascInt64), 0);
      }
    }
  }
  if (ix->kind == ASC_EXPR_TUPLE && r->check)
    asc__infer_settype(r, ix, asc__ty_shape(r->in->c, n));
  if (used > tt->ndim) {
    report(r, loc, "too many indices for %s: %d given, it has %d %s",
           tn(r, tt), (int)used, (int)tt->ndim,
           tt->ndim == 1 ? "axis" : "axes");
    return err(r);
  }
  if (bad)
    return err(r);
  return asc__ty_tensor(r->in->c, tt->dtype, out + (tt->ndim - used), false);
}

/* x[m] with m a bool array (a mask: the elements where m is true, in C
 * order) or an integer array (a gather along the first axis): the
 * result's type; NULL when ix is not an array (docs/arrays.md). */
/* x[i, j, ...] with k >= 2 integer arrays for x's first k axes: numpy's
 * gather of x[i[p], j[p], ...], of shape broadcast(i, j, ...) +
 * x.shape[k:]; the tuple is typed an int64 array of the broadcast rank.
 * NULL when the elements are not all integer arrays. */
static asc__type *index_arrays(run *r, asc__type *vt, asc__ast_expr *ix) {
  int32_t ni = 0, nd;
  int n = ix->u.tuple.n;
  if (n < 2 || n > vt->ndim)
    return NULL;
  for (int q = 0; q < n; q++) {
    asc__type *it;
    asc__ast_expr *x = ix->u.tuple.elts[q];
    if (x->kind == ASC_EXPR_SLICE || x->kind == ASC_EXPR_NONE ||
        x->kind == ASC_EXPR_INT)
      return NULL;
    it = asc__infer_expr(r, x);
    if (it == NULL)
      return NULL;
    if (is_err(it))
      return it;
    it = asc__ty_find(it);
    if (it->kind != ASC_TY_TENSOR || !asc__dtype_is_int(it->dtype))
      return NULL;
    if (it->ndim > ni)
      ni = it->ndim;
  }
  nd = ni + vt->ndim - n;
  if (nd > ASC_MAX_DIMS) {
    report(r, ix->loc, "this gather would have %d axes; kernels take %d",
           (int)nd, ASC_MAX_DIMS);
    return err(r);
  }
  if (r->check)
    asc__infer_settype(r, ix, asc__ty_tensor(r->in->c, ascInt64, ni, false));
  return asc__ty_tensor(r->in->c, vt->dtype, nd, true);
}

/* The type of vt[ix] where ix is a boolean array or index arrays: a new
 * array in C order (asc__lower_gather), so contiguous: `z = z[keep]`
 * fits a contiguous z, a parameter's included. */
asc__type *asc__infer_fancy_index(run *r, asc__type *vt,
                                  asc__ast_expr *ix) {
  asc__type *it;
  int32_t nd;
  if (ix->kind == ASC_EXPR_TUPLE)
    return index_arrays(r, vt, ix);
  if (ix->kind == ASC_EXPR_SLICE ||
      ix->kind == ASC_EXPR_NONE || ix->kind == ASC_EXPR_INT ||
      vt->ndim < 1)
    return NULL;
  it = asc__infer_expr(r, ix);
  if (it == NULL)
    return NULL;
  if (is_err(it))
    return it;
  it = asc__ty_find(it);
  if (it->kind != ASC_TY_TENSOR)
    return NULL;
  if (it->dtype == ascBool) {
    if (it->ndim != vt->ndim) {
      report(r, ix->loc, "a boolean index in kernels has the array's "
             "number of axes (%d), not %d", (int)vt->ndim, (int)it->ndim);
      return err(r);
    }
    return asc__ty_tensor(r->in->c, vt->dtype, 1, true);
  }
  if (asc__dtype_is_float(it->dtype)) {
    report(r, ix->loc, "arrays used as indices must be of integer (or "
           "boolean) type, not %s", tn(r, it));
    return err(r);
  }
  nd = it->ndim + vt->ndim - 1;
  if (nd > ASC_MAX_DIMS) {
    report(r, ix->loc, "this gather would have %d axes; kernels take %d",
           (int)nd, ASC_MAX_DIMS);
    return err(r);
  }
  return asc__ty_tensor(r->in->c, vt->dtype, nd, true);
}

/* The type of e where an array is wanted (subscripted, or assigned
 * through): a 0-d array parameter is its array there (out[()] = v,
 * out[...] = v), although its name elsewhere reads as its one element. */
asc__type *asc__infer_array_value(run *r, asc__ast_expr *e) {
  asc__type *t = asc__infer_expr(r, e), *ct;
  if (e->kind != ASC_EXPR_NAME || e->u.name.sym == NULL ||
      e->u.name.sym->kind != ASC_SYM_PARAM || !is_kind(t, ASC_TY_SCALAR))
    return t;
  ct = asc__ty_find(asc__infer_cell(r, e->u.name.sym)->t);
  if (ct == NULL || ct->kind != ASC_TY_TENSOR || ct->ndim != 0)
    return t;
  if (r->check)
    e->type = ct;
  return ct;
}

/* a.flat[i]: the element i of a in C order (numpy's flat iterator
 * indexed by one integer), read or written. */
static asc__type *flat_index(run *r, asc__ast_expr *e) {
  asc__ast_expr *ix = e->u.sub.index;
  asc__type *vt = asc__infer_expr(r, e->u.sub.value->u.attr.value), *it;
  PROPAGATE(vt);
  vt = asc__ty_find(vt);
  if (vt->kind != ASC_TY_TENSOR) {
    report(r, e->u.sub.value->u.attr.attr_loc, "%s has no attribute "
           "'flat'", tn(r, vt));
    return err(r);
  }
  it = ix->kind == ASC_EXPR_SLICE || ix->kind == ASC_EXPR_TUPLE
           ? NULL
           : asc__infer_expr(r, ix);
  if (it != NULL && is_err(it))
    return it;
  if (it == NULL || !asc__ty_is_intlike(asc__ty_find(it)) ||
      asc__ty_find(it)->dtype == ascBool) {
    report(r, ix->loc, "kernels index a.flat with one integer (a.flat[i], "
           "a.flat[i] = v); for slices or index arrays of the flattened "
           "array use a.ravel()[...] (a copy unless a is contiguous)");
    return err(r);
  }
  asc__infer_coerce(r, ix, scalar(r, ascInt64), 0);
  return scalar(r, vt->dtype);
}

bool asc__infer_is_flat(const asc__ast_expr *e) {
  return e->kind == ASC_EXPR_ATTR && e->u.attr.builtin == NULL &&
         strcmp(e->u.attr.attr, "flat") == 0;
}

static asc__type *subscript(run *r, asc__ast_expr *e) {
  asc__type *vt;
  asc__ast_expr *ix = e->u.sub.index;
  if (asc__infer_is_flat(e->u.sub.value))
    return flat_index(r, e);
  if (e->u.sub.value->kind == ASC_EXPR_ATTR &&
      e->u.sub.value->u.attr.builtin != NULL &&
      (e->u.sub.value->u.attr.builtin->id == ASC_BI_NP_MGRID ||
       e->u.sub.value->u.attr.builtin->id == ASC_BI_NP_OGRID))
    return asc__infer_grid(r, e);
  vt = asc__infer_array_value(r, e->u.sub.value);
  PROPAGATE(vt);
  vt = asc__ty_find(vt);
  if (vt->kind == ASC_TY_TENSOR) {
    asc__type *ft = asc__infer_fancy_index(r, vt, ix);
    if (ft != NULL)
      return ft;
    if (asc__infer_index_is_view(ix, vt->ndim))
      return view_index(r, vt, ix, e->loc);
    asc__infer_check_tensor_index(r, vt, ix, e->loc);
    return scalar(r, vt->dtype);
  }
  if (vt->kind == ASC_TY_TUPLE) {
    asc__type *it = asc__infer_expr(r, ix);
    PROPAGATE(it);
    if (!asc__ty_is_intlike(it)) {
      report(r, ix->loc, "a tuple index must be an integer, not %s",
             tn(r, it));
      return err(r);
    }
    asc__infer_coerce(r, ix, scalar(r, ascInt64), 0);
    if (ix->kind == ASC_EXPR_INT ||
        (asc__infer_is_neg_int_literal(ix))) {
      int64_t k = ix->kind == ASC_EXPR_INT
                      ? (int64_t)(ix->u.ival > INT32_MAX ? INT32_MAX
                                                         : ix->u.ival)
                      : -(int64_t)(ix->u.unary.operand->u.ival > INT32_MAX
                                       ? INT32_MAX
                                       : ix->u.unary.operand->u.ival);
      if (k < 0)
        k += vt->n;
      if (k < 0 || k >= vt->n) {
        report(r, ix->loc, "tuple index out of range: %s has %d elements",
               tn(r, vt), (int)vt->n);
        return err(r);
      }
      return vt->elems[k];
    }
    for (int32_t i = 0; i < vt->n; i++)
      if (!asc__infer_same(vt->elems[i], vt->elems[0]) ||
          is_kind(vt->elems[i], ASC_TY_TENSOR)) {
        report(r, ix->loc,
               "a %s can only be indexed with a constant (its elements "
               "differ in type; to index values at run time, keep them in "
               "an array: np.array([...]))", tn(r, vt));
        return err(r);
      }
    if (vt->n == 0) {
      report(r, ix->loc, "tuple index out of range: the tuple is empty");
      return err(r);
    }
    return vt->elems[0];
  }
  report(r, e->loc, "%s is not subscriptable", tn(r, vt));
  return err(r);
}

static asc__type *attribute(run *r, asc__ast_expr *e) {
  const asc__builtin *b = e->u.attr.builtin;
  asc__type *vt;
  const char *a = e->u.attr.attr;
  if (b != NULL) {
    if (b->kind == ASC_BK_CONST)
      return weak(r, ascFloat64);
    if (b->id == ASC_BI_NP_MGRID || b->id == ASC_BI_NP_OGRID) {
      report(r, e->loc, "np.%s is indexed with slices in kernels "
             "(np.%s[0:n, 0:m])", b->name, b->name);
      return err(r);
    }
    if (b->kind == ASC_BK_DTYPE)
      return asc__ty_dtype(r->in->c, asc__builtin_dtype(b));
    report(r, e->loc, "'%s' is not a value", b->name);
    return err(r);
  }
  vt = asc__infer_expr(r, e->u.attr.value);
  PROPAGATE(vt);
  vt = asc__ty_find(vt);
  if (vt->kind == ASC_TY_TENSOR) {
    if (strcmp(a, "shape") == 0)
      return asc__ty_shape(r->in->c, vt->ndim);
    if (strcmp(a, "ndim") == 0)
      return weak(r, ascInt64);
    if (strcmp(a, "size") == 0)
      return scalar(r, ascInt64);
    if (strcmp(a, "T") == 0)
      return asc__ty_tensor(r->in->c, vt->dtype, vt->ndim, false);
    if (strcmp(a, "flat") == 0) {
      report(r, e->u.attr.attr_loc, "kernels read a.flat indexed by one "
             "integer (a.flat[i], a.flat[i] = v) or in a loop (for v in "
             "a.flat); for the flattened array itself use a.ravel()");
      return err(r);
    }
    if (strcmp(a, "dtype") == 0) /* known when the kernel is compiled */
      return asc__ty_dtype(r->in->c, (ascDataType)vt->dtype);
    if (strcmp(a, "real") == 0 || strcmp(a, "imag") == 0) {
      /* numpy's a.real is a view (writable for complex a); kernels have
       * the function form, a new array, for reading */
      report(r, e->u.attr.attr_loc, "'.%s' of an array (%s) is not "
             "supported in kernels yet; np.%s(a) gives it as a new array",
             a, tn(r, vt), a);
      return err(r);
    }
  } else if (vt->kind == ASC_TY_STRUCT) {
    for (int32_t i = 0; i < vt->n; i++)
      if (strcmp(vt->fields[i].name, a) == 0)
        return vt->fields[i].type;
  } else if (vt->kind == ASC_TY_SCALAR &&
             asc__dtype_is_complex(vt->dtype) &&
             (strcmp(a, "real") == 0 || strcmp(a, "imag") == 0)) {
    /* z.real, z.imag: the component's float type (a Python complex's
     * parts are Python floats) */
    return vt->weak ? weak(r, ascFloat64)
                    : scalar(r, vt->dtype == ascComplex64 ? ascFloat32
                                                          : ascFloat64);
  } else if (vt->kind == ASC_TY_SCALAR && vt->dtype != ascBool &&
             (strcmp(a, "real") == 0 || strcmp(a, "imag") == 0)) {
    /* x.real of a real number is x, x.imag 0, of x's type (numpy's and
     * Python's: (2.5).real, np.float32(1).imag) */
    return vt;
  }
  report(r, e->u.attr.attr_loc, "%s has no attribute '%s'", tn(r, vt), a);
  return err(r);
}

static asc__type *name(run *r, asc__ast_expr *e) {
  asc__sym *s = e->u.name.sym;
  if (s == NULL) {
    report(r, e->loc, "'%s' is not defined", e->u.name.id);
    return err(r);
  }
  switch (s->kind) {
  case ASC_SYM_PARAM: {
    /* a 0-d array (a scalar passed to an array parameter) reads as its
     * one element */
    asc__type *t = asc__ty_find(asc__infer_cell(r, s)->t);
    if (t != NULL && t->kind == ASC_TY_TENSOR && t->ndim == 0)
      return scalar(r, t->dtype);
    return asc__infer_cell(r, s)->t;
  }
  case ASC_SYM_LOCAL:
    return asc__infer_cell(r, s)->t;
  case ASC_SYM_CONST: {
    const ascScalar *v = &s->u.cnst->folded;
    if (v->dtype == ascBool)
      return scalar(r, ascBool);
    if (v->weak)
      return weak(r, v->dtype);
    return scalar(r, v->dtype);
  }
  case ASC_SYM_EXC_VAR:
    return asc__ty_str(r->in->c);
  case ASC_SYM_BUILTIN:
    if (s->u.builtin->kind == ASC_BK_CONST)
      return weak(r, ascFloat64);
    if (s->u.builtin->kind == ASC_BK_DTYPE)
      return asc__ty_dtype(r->in->c, asc__builtin_dtype(s->u.builtin));
    report(r, e->loc, "'%s' is not a value", s->name);
    return err(r);
  case ASC_SYM_FUNC:
    report(r, e->loc,
           "a function is not a value (only parallel_for takes one)");
    return err(r);
  default:
    report(r, e->loc, "'%s' is not a value", s->name);
    return err(r);
  }
}

/* ---------------------------------------------------------- expressions */

/* The weak operand x of a comparison done in type p: numpy 2 compares a
 * Python int with an integer of any type by value (uint8 < 300 is True,
 * uint8 == -1 is False), so an int that p may not hold keeps its own
 * type (int64, or uint64 for a literal above int64's range) and the
 * comparison is done in one that holds both (lower_compare). */
static void compare_coerce(run *r, asc__ast_expr *x, asc__type *p) {
  asc__type *xt = asc__ty_find(x->type);
  uint64_t mag;
  bool neg;
  p = asc__ty_find(p);
  if (xt != NULL && xt->kind == ASC_TY_SCALAR && xt->weak &&
      asc__ty_is_intlike(xt) && asc__ty_is_intlike(p) &&
      p->dtype != ascBool) {
    if (asc__infer_int_literal(x, &mag, &neg)
            ? !asc__infer_literal_fits(mag, neg, p->dtype)
            : asc__infer_runtime_int(x, p))
      return;
  }
  asc__infer_coerce(r, x, p, 0);
}

/* a < b with an array operand: elementwise, a bool array (numpy); one
 * comparison, not a chain. */
static asc__type *array_compare(run *r, asc__ast_expr *e, asc__type *a,
                                asc__type *b) {
  int32_t nd = 0;
  asc__type *ea, *eb, *p;
  a = asc__ty_find(a);
  b = asc__ty_find(b);
  if (e->u.cmp.n != 1 || e->u.cmp.ops[0] == ASC_CMP_IS ||
      e->u.cmp.ops[0] == ASC_CMP_ISNOT ||
      (a->kind != ASC_TY_TENSOR && a->kind != ASC_TY_SCALAR) ||
      (b->kind != ASC_TY_TENSOR && b->kind != ASC_TY_SCALAR)) {
    report(r, e->loc, "cannot compare %s and %s%s", tn(r, a), tn(r, b),
           e->u.cmp.n != 1 ? " in a chain (compare arrays one pair at a "
                             "time)"
                           : "");
    return err(r);
  }
  ea = a->kind == ASC_TY_TENSOR ? scalar(r, a->dtype) : a;
  eb = b->kind == ASC_TY_TENSOR ? scalar(r, b->dtype) : b;
  if ((asc__dtype_is_complex(ea->dtype) || asc__dtype_is_complex(eb->dtype)) &&
      e->u.cmp.ops[0] != ASC_CMP_EQ && e->u.cmp.ops[0] != ASC_CMP_NE) {
    report(r, e->loc, "complex numbers have no order: '%s' between %s and "
           "%s (as in Python; compare abs(z) or z.real)",
           asc__cmpop_str(e->u.cmp.ops[0]), tn(r, a), tn(r, b));
    return err(r);
  }
  if (a->kind == ASC_TY_TENSOR)
    nd = a->ndim;
  if (b->kind == ASC_TY_TENSOR && b->ndim > nd)
    nd = b->ndim;
  p = asc__ty_promote(r->in->c, ea, eb);
  if (p != NULL && r->check) {
    p = asc__ty_find(p);
    if (a->kind == ASC_TY_SCALAR && a->weak)
      compare_coerce(r, e->u.cmp.operands[0], scalar(r, p->dtype));
    if (b->kind == ASC_TY_SCALAR && b->weak)
      compare_coerce(r, e->u.cmp.operands[1], scalar(r, p->dtype));
  }
  return asc__ty_tensor(r->in->c, ascBool, nd, true);
}

static asc__type *compare(run *r, asc__ast_expr *e) {
  asc__type *prev = asc__infer_expr(r, e->u.cmp.operands[0]);
  bool unknown = prev == NULL, bad = false;
  if (e->u.cmp.n >= 1 && prev != NULL && !is_err(prev)) {
    asc__type *second = asc__infer_expr(r, e->u.cmp.operands[1]);
    if (second != NULL && !is_err(second) &&
        (is_kind(prev, ASC_TY_TENSOR) || is_kind(second, ASC_TY_TENSOR)))
      return array_compare(r, e, prev, second);
  }
  for (int i = 0; i < e->u.cmp.n; i++) {
    asc__ast_expr *lhs = e->u.cmp.operands[i], *rhs = e->u.cmp.operands[i + 1];
    asc__type *t = asc__infer_expr(r, rhs);
    asc__cmpop op = e->u.cmp.ops[i];
    if (t == NULL || prev == NULL) {
      unknown = true;
    } else if (is_err(t) || is_err(prev)) {
      bad = true;
    } else if (op == ASC_CMP_IS || op == ASC_CMP_ISNOT) {
      if (!is_kind(t, ASC_TY_NONE) && !is_kind(prev, ASC_TY_NONE)) {
        report(r, e->loc, "'%s' only compares with None",
               asc__cmpop_str(op));
        bad = true;
      }
    } else if (is_kind(t, ASC_TY_DTYPE) || is_kind(prev, ASC_TY_DTYPE)) {
      report(r, e->loc, "comparing dtypes is not supported in kernels yet "
             "(a kernel is compiled for each dtype passed: branch before the "
             "call, or pass the choice as a parameter)");
      bad = true;
    } else if (!is_kind(t, ASC_TY_SCALAR) || !is_kind(prev, ASC_TY_SCALAR)) {
      report(r, e->loc, "cannot compare %s and %s with %s", tn(r, prev),
             tn(r, t), asc__cmpop_str(op));
      bad = true;
    } else if (op != ASC_CMP_EQ && op != ASC_CMP_NE &&
               (asc__dtype_is_complex(asc__ty_find(t)->dtype) ||
                asc__dtype_is_complex(asc__ty_find(prev)->dtype))) {
      report(r, e->loc, "complex numbers have no order: '%s' between %s and "
             "%s (as in Python; compare abs(z) or z.real)",
             asc__cmpop_str(op), tn(r, prev), tn(r, t));
      bad = true;
    } else {
      asc__type *p = asc__ty_promote(r->in->c, prev, t);
      if (p->weak)
        p = scalar(r, p->dtype);
      compare_coerce(r, lhs, p);
      compare_coerce(r, rhs, p);
    }
    prev = t;
  }
  if (bad)
    return err(r);
  return unknown ? NULL : scalar(r, ascBool);
}

/* ------------------------------------------ integer literal expressions */

typedef __int128 wide; /* gnu11: Python ints of up to 127 bits */

/* op applied to the Python ints x and y, when the result is an int:
 * 1 with *v set, 0 when it is not folded (a division by zero, a negative
 * exponent or shift: left to run time as before; `/` gives a float), -1
 * when the value does not fit in 127 bits. */
static int fold_int_op(asc__binop op, wide x, wide y, wide *v) {
  const wide max = (wide)(((unsigned __int128)1 << 127) - 1), min = -max - 1;
  switch (op) {
  case ASC_BIN_ADD: return __builtin_add_overflow(x, y, v) ? -1 : 1;
  case ASC_BIN_SUB: return __builtin_sub_overflow(x, y, v) ? -1 : 1;
  case ASC_BIN_MUL: return __builtin_mul_overflow(x, y, v) ? -1 : 1;
  case ASC_BIN_FLOORDIV:
  case ASC_BIN_MOD: {
    wide q, m;
    if (y == 0)
      return 0;
    if (x == min && y == -1)
      return op == ASC_BIN_MOD ? (*v = 0, 1) : -1;
    q = x / y;
    m = x % y;
    if (m != 0 && (m < 0) != (y < 0)) {
      q--;
      m += y;
    }
    *v = op == ASC_BIN_MOD ? m : q;
    return 1;
  }
  case ASC_BIN_POW: {
    wide p = 1, b = x;
    if (y < 0)
      return 0; /* a float in Python */
    while (y > 0) {
      if ((y & 1) && __builtin_mul_overflow(p, b, &p))
        return -1;
      y >>= 1;
      if (y > 0 && __builtin_mul_overflow(b, b, &b))
        return -1; /* |x| >= 2, and x**2 is a factor of what is left */
    }
    *v = p;
    return 1;
  }
  case ASC_BIN_LSHIFT:
    if (y < 0)
      return 0;
    if (x == 0) {
      *v = 0;
      return 1;
    }
    if (y > 126 || x > (max >> y) || x < (min >> y))
      return -1;
    *v = (wide)((unsigned __int128)x << y);
    return 1;
  case ASC_BIN_RSHIFT:
    if (y < 0)
      return 0;
    *v = y > 126 ? (x < 0 ? -1 : 0) : x >> y;
    return 1;
  case ASC_BIN_BITAND: *v = x & y; return 1;
  case ASC_BIN_BITOR: *v = x | y; return 1;
  case ASC_BIN_BITXOR: *v = x ^ y; return 1;
  default: return 0;
  }
}

/* The value of an expression made of integer literals only: 1 with *v,
 * 0 when e is not one (or is left to run time), -1 on overflow. */
static int int_literal_value(const asc__ast_expr *e, wide *v, int depth) {
  wide x, y;
  int a, b;
  if (depth > ASC_MAX_NESTING)
    return 0;
  switch (e->kind) {
  case ASC_EXPR_INT:
    *v = (wide)e->u.ival;
    return 1;
  case ASC_EXPR_UNARY:
    a = int_literal_value(e->u.unary.operand, &x, depth + 1);
    if (a <= 0)
      return a;
    switch (e->u.unary.op) {
    case ASC_UN_NEG: *v = -x; return 1; /* |x| < 2**127 */
    case ASC_UN_POS: *v = x; return 1;
    case ASC_UN_INVERT: *v = ~x; return 1;
    default: return 0;
    }
  case ASC_EXPR_BINARY:
    a = int_literal_value(e->u.binary.lhs, &x, depth + 1);
    if (a == 0)
      return 0;
    b = int_literal_value(e->u.binary.rhs, &y, depth + 1);
    if (b == 0)
      return 0;
    if (a < 0 || b < 0)
      return -1;
    return fold_int_op(e->u.binary.op, x, y, v);
  default:
    return 0;
  }
}

/* An expression of integer literals only (100000 * 100000, -(2 ** 10),
 * (100000 ** 2) ** 2) is computed before it is typed, exactly as Python
 * computes it, and becomes the literal of its value (the node is
 * rewritten): it is then one weak int whose value must fit the type it
 * gets, instead of operands that fit and an operation that wraps.  1
 * when e was rewritten, 0 when it is not such an expression, -1 when its
 * value is one no literal can have (outside int64 and uint64). */
static int fold_int_literals(run *r, asc__ast_expr *e) {
  wide v;
  int ok;
  if (e->kind == ASC_EXPR_UNARY && e->u.unary.op == ASC_UN_NEG &&
      e->u.unary.operand->kind == ASC_EXPR_INT &&
      e->u.unary.operand->u.ival > (uint64_t)INT64_MAX + 1) {
    /* -9223372036854775809: below int64, and negating it as a uint64
     * would wrap */
    report(r, e->loc, "integer literal too large: the value of this "
           "expression of integer literals fits neither int64 nor uint64 "
           "(Python computes it exactly)");
    return -1;
  }
  if (e->kind == ASC_EXPR_INT ||
      (e->kind == ASC_EXPR_UNARY && e->u.unary.op == ASC_UN_NEG &&
       e->u.unary.operand->kind == ASC_EXPR_INT))
    return 0; /* 5 and -5 are literals already */
  ok = int_literal_value(e, &v, 0);
  if (ok == 0)
    return 0;
  if (ok < 0 || v < (wide)INT64_MIN || v > (wide)UINT64_MAX) {
    report(r, e->loc, "integer literal too large: the value of this "
           "expression of integer literals fits neither int64 nor uint64 "
           "(Python computes it exactly)");
    return -1;
  }
  if (v >= 0) {
    e->kind = ASC_EXPR_INT;
    e->u.ival = (uint64_t)v;
    e->depth = 1;
  } else {
    /* -|v|: the operand is one of e's own children, rewritten.  The AST
     * belongs to the module and outlives this run's arena, which must
     * not hold any of its nodes. */
    asc__ast_expr *n = e->kind == ASC_EXPR_BINARY ? e->u.binary.lhs
                                                  : e->u.unary.operand;
    memset(n, 0, sizeof *n);
    n->kind = ASC_EXPR_INT;
    n->loc = e->loc;
    n->depth = 1;
    n->u.ival = (uint64_t)-v;
    e->kind = ASC_EXPR_UNARY;
    e->u.unary.op = ASC_UN_NEG;
    e->u.unary.operand = n;
    e->depth = 2;
  }
  return 1;
}

static asc__type *expr_inner(run *r, asc__ast_expr *e) {
  asc__type *a, *b;
  if (e->comp != NULL && !asc__infer_unroll(r, e))
    return err(r);
  if (e->kind == ASC_EXPR_UNARY || e->kind == ASC_EXPR_BINARY) {
    int f = fold_int_literals(r, e);
    if (f < 0)
      return err(r);
  }
  switch (e->kind) {
  case ASC_EXPR_NAME:
    return name(r, e);
  case ASC_EXPR_INT:
    if (e->u.ival > (uint64_t)INT64_MAX)
      return scalar(r, ascUInt64);
    return weak(r, ascInt64);
  case ASC_EXPR_FLOAT:
    return weak(r, e->imag ? ascComplex128 : ascFloat64);
  case ASC_EXPR_BOOL:
    return scalar(r, ascBool);
  case ASC_EXPR_NONE:
    return asc__ty_none(r->in->c);
  case ASC_EXPR_STR:
    return asc__ty_str(r->in->c);
  case ASC_EXPR_TUPLE: {
    asc__type **el = asc__arena_alloc(
        r->in->c, sizeof *el * (size_t)(e->u.tuple.n + 1));
    bool unknown = false;
    for (int i = 0; i < e->u.tuple.n; i++) {
      el[i] = asc__infer_expr(r, e->u.tuple.elts[i]);
      if (el[i] == NULL)
        unknown = true;
    }
    return unknown ? NULL : asc__ty_tuple(r->in->c, e->u.tuple.n, el);
  }
  case ASC_EXPR_ATTR:
    return attribute(r, e);
  case ASC_EXPR_SUBSCRIPT:
    return subscript(r, e);
  case ASC_EXPR_SLICE:
    report(r, e->loc, "slices are not supported");
    return err(r);
  case ASC_EXPR_CALL:
    return asc__infer_call(r, e);
  case ASC_EXPR_UNARY:
    if (e->u.unary.op == ASC_UN_NEG &&
        e->u.unary.operand->kind == ASC_EXPR_INT &&
        e->u.unary.operand->u.ival == (uint64_t)INT64_MAX + 1) {
      /* -9223372036854775808 is INT64_MIN, a (weak) int64 like Python's
       * -2**63, although 9223372036854775808 alone is a uint64 */
      a = weak(r, ascInt64);
      if (r->check)
        asc__infer_settype(r, e->u.unary.operand, a);
      return a;
    }
    a = asc__infer_expr(r, e->u.unary.operand);
    PROPAGATE(a);
    if (e->u.unary.op == ASC_UN_NOT) {
      asc__infer_check_truth(r, a, e->u.unary.operand);
      return scalar(r, ascBool);
    }
    if (is_kind(a, ASC_TY_TENSOR)) {
      asc__type *at = asc__ty_find(a);
      if (e->u.unary.op == ASC_UN_INVERT &&
          asc__dtype_is_float(at->dtype)) {
        report(r, e->loc, "bad operand type for unary ~: %s", tn(r, at));
        return err(r);
      }
      /* numpy: TypeError for a bool array (~ is its logical not) */
      if (e->u.unary.op == ASC_UN_NEG && at->dtype == ascBool) {
        report(r, e->loc, "the numpy boolean negative, the `-` operator, "
               "is not supported, use the `~` operator or the logical_not "
               "function instead");
        return err(r);
      }
      if (e->u.unary.op == ASC_UN_POS && at->dtype == ascBool) {
        report(r, e->loc, "numpy has no unary + (np.positive) for a bool "
               "array (%s); use it as it is, or convert it: "
               "x.astype(np.int8)", tn(r, at));
        return err(r);
      }
      return asc__ty_tensor(r->in->c, at->dtype, at->ndim, true);
    }
    if (!is_kind(a, ASC_TY_SCALAR) ||
        (e->u.unary.op == ASC_UN_INVERT &&
         (!asc__ty_is_intlike(a) || asc__ty_find(a)->dtype == ascBool))) {
      report(r, e->loc, "bad operand type for unary %s: %s",
             asc__unop_str(e->u.unary.op), tn(r, a));
      return err(r);
    }
    return asc__ty_find(a)->dtype == ascBool ? weak(r, ascInt64) : a;
  case ASC_EXPR_BINARY: {
    asc__type *t;
    a = asc__infer_expr(r, e->u.binary.lhs);
    b = asc__infer_expr(r, e->u.binary.rhs);
    t = asc__infer_binop(r, e->u.binary.op, a, b, e, false);
    /* a weak operand takes the type the operation is done in */
    if (r->check && is_kind(t, ASC_TY_SCALAR) && !asc__ty_find(t)->weak) {
      asc__infer_coerce(r, e->u.binary.lhs, t, 0);
      asc__infer_coerce(r, e->u.binary.rhs, t, 0);
    }
    return t;
  }
  case ASC_EXPR_BOOLOP:
    a = asc__infer_expr(r, e->u.boolop.lhs);
    b = asc__infer_expr(r, e->u.boolop.rhs);
    PROPAGATE(a);
    PROPAGATE(b);
    if (!asc__infer_check_truth(r, a, e->u.boolop.lhs) ||
        !asc__infer_check_truth(r, b, e->u.boolop.rhs))
      return err(r);
    {
      asc__type *t = asc__ty_promote(r->in->c, a, b);
      if (r->check && !t->weak) {
        asc__infer_coerce(r, e->u.boolop.lhs, t, 0);
        asc__infer_coerce(r, e->u.boolop.rhs, t, 0);
      }
      return t;
    }
  case ASC_EXPR_COMPARE:
    return compare(r, e);
  case ASC_EXPR_IFEXP: {
    asc__type *c = asc__infer_expr(r, e->u.ifexp.cond), *j;
    a = asc__infer_expr(r, e->u.ifexp.then);
    b = asc__infer_expr(r, e->u.ifexp.orelse);
    if (c != NULL)
      asc__infer_check_truth(r, c, e->u.ifexp.cond);
    PROPAGATE(a);
    PROPAGATE(b);
    j = asc__ty_join(r->in->c, a, b);
    if (j == NULL) {
      report(r, e->loc,
             "the branches of a conditional expression have types %s and %s",
             tn(r, a), tn(r, b));
      return err(r);
    }
    if (r->check && is_kind(j, ASC_TY_SCALAR) && !asc__ty_find(j)->weak) {
      asc__infer_coerce(r, e->u.ifexp.then, j, 0);
      asc__infer_coerce(r, e->u.ifexp.orelse, j, 0);
    }
    return j;
  }
  case ASC_EXPR_LAMBDA:
    report(r, e->loc, "a lambda can only be a parallel_for body");
    return err(r);
  case ASC_EXPR_COMP: /* unrolled above */
  case ASC_EXPR_COUNT:
    break;
  }
  report(r, e->loc, "unsupported expression");
  return err(r);
}

/* Writes e's type slot in the check pass and remembers e, so that its
 * type is made concrete at the end. */
void asc__infer_settype(run *r, asc__ast_expr *e, asc__type *t) {
  if (!r->check || e == NULL)
    return;
  e->type = t;
  r->typed = asc__arena_grow(r->in->c, r->typed, r->ntyped, &r->captyped,
                             sizeof *r->typed, 256);
  r->typed[r->ntyped++] = e;
}

asc__type *asc__infer_expr(run *r, asc__ast_expr *e) {
  asc__type *t;
  if (e == NULL)
    return NULL;
  t = expr_inner(r, e);
  if (r->check) {
    if (t == NULL) {
      report(r, e->loc, "cannot infer the type of this expression");
      t = err(r);
    }
    asc__infer_settype(r, e, t);
  }
  return t;
}
