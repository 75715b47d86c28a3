/*
 * numpy's ufunc methods, rewritten during name resolution into what
 * kernels already compile (docs/arrays.md "ufunc methods"):
 *
 *   np.add.reduce(a, axis=0)         np.sum(a, axis=0)   (prod, max, min,
 *                                    all, any for multiply, maximum,
 *                                    minimum, logical_and, logical_or)
 *   np.add.accumulate(a, axis=0)     np.cumsum(a, axis=0)
 *
 * np.maximum.accumulate and np.minimum.accumulate are builtins of their
 * own (numpy keeps the dtype, where np.cumsum widens integers).
 *   np.UF.outer(A, B)                np.UF(<A with B.ndim new axes>, B)
 *
 * numpy's reduce and accumulate default to axis 0 (not None as np.sum
 * does), so the rewrite always names the axis.  The outer product is
 * the ufunc itself on A viewed with trailing axes of size 1 (np.UF(A[...,
 * None, None], B) for a 2-D B), so every binary ufunc kernels take has
 * its outer with the ufunc's own dtype rules and errors; add, subtract
 * and multiply keep their own builtins (lower_numpy.c).
 */
#include <stdio.h>
#include <string.h>

#include "compiler/front/resolve_int.h"

static const struct {
  const char *ufunc, *reduce, *accumulate;
} methods[] = {
    {"add", "sum", "cumsum"},
    {"multiply", "prod", "cumprod"},
    {"maximum", "max", NULL},
    {"minimum", "min", NULL},
    {"logical_and", "all", NULL},
    {"logical_or", "any", NULL},
};

/* e's func is np.UF.METHOD: UF and METHOD, else false. */
static bool ufunc_method(resolver *r, const asc__ast_expr *e,
                         const asc__ast_expr **np, const char **uf,
                         const char **method) {
  const asc__ast_expr *f = e->u.call.func, *u;
  const asc__sym *s;
  if (f->kind != ASC_EXPR_ATTR || f->u.attr.value->kind != ASC_EXPR_ATTR)
    return false;
  u = f->u.attr.value;
  if (u->u.attr.value->kind != ASC_EXPR_NAME)
    return false;
  if (strcmp(f->u.attr.attr, "reduce") != 0 &&
      strcmp(f->u.attr.attr, "accumulate") != 0 &&
      strcmp(f->u.attr.attr, "outer") != 0)
    return false;
  s = asc__resolve_lookup(r, u->u.attr.value->u.name.id);
  if (s == NULL || s->kind != ASC_SYM_MODULE || s->u.module != ASC_NS_NP)
    return false;
  *np = u->u.attr.value;
  *uf = u->u.attr.attr;
  *method = f->u.attr.attr;
  return true;
}

asc__ast_expr *asc__rewrite_np_attr(resolver *r, const asc__ast_expr *np,
                                    const char *name, asc__loc loc) {
  asc__ast_expr *f = asc__rewrite_node(r, ASC_EXPR_ATTR, loc, 2);
  asc__ast_expr *m = asc__rewrite_node(r, ASC_EXPR_NAME, np->loc, 1);
  *m = *np;
  f->u.attr.value = m;
  f->u.attr.attr = name;
  f->u.attr.attr_loc = loc;
  return f;
}

/* reduce(array, axis=0, dtype=None, out=None, keepdims=False, ...) and
 * accumulate(array, axis=0, dtype=None, out=None): the array, the axis
 * (written or a literal 0) and keepdims, or false after an error. */
static bool reduce_args(resolver *r, asc__ast_expr *e, const char *what,
                        bool keep_ok, asc__ast_expr **a, asc__ast_expr **axis,
                        asc__ast_expr **keep) {
  *a = e->u.call.nargs > 0 ? e->u.call.args[0] : NULL;
  *axis = e->u.call.nargs > 1 ? e->u.call.args[1] : NULL;
  *keep = NULL;
  if (e->u.call.nargs > 2) {
    asc__diag_error(r->c, e->u.call.args[2]->loc, "%s takes the array and "
                    "the axis as positional arguments in kernels", what);
    return false;
  }
  for (int i = 0; i < e->u.call.nkws; i++) {
    asc__ast_keyword *k = &e->u.call.kws[i];
    if (strcmp(k->name, "axis") == 0 && *axis == NULL) {
      *axis = k->value;
    } else if (strcmp(k->name, "array") == 0 && *a == NULL) {
      *a = k->value;
    } else if (keep_ok && strcmp(k->name, "keepdims") == 0) {
      *keep = k->value;
    } else {
      asc__diag_error(r->c, k->loc, "%s in kernels takes array, axis%s "
                      "('%s' is not supported)", what,
                      keep_ok ? " and keepdims" : "", k->name);
      return false;
    }
  }
  if (*a == NULL) {
    asc__diag_error(r->c, e->loc, "%s() missing required argument 'array'",
                    what);
    return false;
  }
  if (*axis == NULL) {
    *axis = asc__rewrite_node(r, ASC_EXPR_INT, e->loc, 1); /* numpy's default: 0 */
    (*axis)->u.ival = 0;
  }
  return true;
}

/* e becomes np.NAME(a, axis=axis[, keepdims=keep]). */
static void to_reduction(resolver *r, asc__ast_expr *e,
                         const asc__ast_expr *np, const char *name,
                         asc__ast_expr *a, asc__ast_expr *axis,
                         asc__ast_expr *keep) {
  asc__ast_expr **args = asc__arena_alloc(r->c, sizeof *args);
  asc__ast_keyword *kws = asc__arena_alloc(r->c, 2 * sizeof *kws);
  memset(kws, 0, 2 * sizeof *kws);
  args[0] = a;
  kws[0].name = "axis";
  kws[0].value = axis;
  kws[0].loc = axis->loc;
  if (keep != NULL) {
    kws[1].name = "keepdims";
    kws[1].value = keep;
    kws[1].loc = keep->loc;
  }
  e->u.call.func = asc__rewrite_np_attr(r, np, name, e->loc);
  e->u.call.args = args;
  e->u.call.nargs = 1;
  e->u.call.kws = kws;
  e->u.call.nkws = keep != NULL ? 2 : 1;
}

/* e becomes np.UF(<A viewed with B.ndim trailing axes of size 1>, B). */
static void to_outer(resolver *r, asc__ast_expr *e, const asc__ast_expr *np,
                     const char *uf) {
  asc__ast_expr *a, *b, *left, **largs, **args;
  if (e->u.call.nargs != 2 || e->u.call.nkws != 0) {
    asc__diag_error(r->c, e->loc, "np.%s.outer takes two arrays in kernels",
                    uf);
    return;
  }
  a = e->u.call.args[0];
  b = e->u.call.args[1];
  left = asc__rewrite_node(r, ASC_EXPR_CALL, a->loc,
              (a->depth > b->depth ? a->depth : b->depth) + 1);
  largs = asc__arena_alloc(r->c, 2 * sizeof *largs);
  largs[0] = a;
  largs[1] = b; /* its number of axes only: resolved as e's argument */
  left->u.call.func = asc__rewrite_np_attr(r, np, "outer", a->loc);
  left->u.call.args = largs;
  left->u.call.nargs = 2;
  left->u.call.rargs = largs;
  left->u.call.nrargs = 2;
  left->u.call.builtin = asc__builtin_get(ASC_BI_NP_OUTER_LEFT);
  args = asc__arena_alloc(r->c, 2 * sizeof *args);
  args[0] = left;
  args[1] = b;
  e->u.call.func = asc__rewrite_np_attr(r, np, uf, e->loc);
  e->u.call.args = args;
  e->u.call.nargs = 2;
  if (e->depth <= left->depth)
    e->depth = left->depth + 1;
}

/* np.deg2rad(x) (np.radians, math.radians) is x * (pi / 180) and
 * np.rad2deg(x) (np.degrees, math.degrees) x * (180 / pi), as numpy and
 * CPython compute them: the constant a
 * Python float, so float32 stays float32 and integers give float64. */
static bool angle_units(resolver *r, asc__ast_expr *e) {
  const asc__ast_expr *f = e->u.call.func;
  const asc__sym *s;
  asc__ast_expr *x, *k;
  bool to_rad;
  if (f->kind != ASC_EXPR_ATTR || f->u.attr.value->kind != ASC_EXPR_NAME)
    return false;
  to_rad = strcmp(f->u.attr.attr, "deg2rad") == 0 ||
           strcmp(f->u.attr.attr, "radians") == 0;
  if (!to_rad && strcmp(f->u.attr.attr, "rad2deg") != 0 &&
      strcmp(f->u.attr.attr, "degrees") != 0)
    return false;
  s = asc__resolve_lookup(r, f->u.attr.value->u.name.id);
  /* math.degrees and math.radians too: CPython's are the same product */
  if (s == NULL || s->kind != ASC_SYM_MODULE ||
      (s->u.module != ASC_NS_NP &&
       !(s->u.module == ASC_NS_MATH && strchr(f->u.attr.attr, '2') == NULL)))
    return false;
  if (e->u.call.nargs != 1 || e->u.call.nkws != 0) {
    asc__diag_error(r->c, e->loc, "%s.%s takes 1 positional argument in "
                    "kernels", s->u.module == ASC_NS_NP ? "np" : "math",
                    f->u.attr.attr);
    return true;
  }
  x = e->u.call.args[0];
  k = asc__rewrite_node(r, ASC_EXPR_FLOAT, e->loc, 1);
  k->u.fval = to_rad ? 3.141592653589793 / 180.0 : 180.0 / 3.141592653589793;
  e->kind = ASC_EXPR_BINARY;
  memset(&e->u, 0, sizeof e->u);
  e->u.binary.op = ASC_BIN_MUL;
  e->u.binary.lhs = x;
  e->u.binary.rhs = k;
  if (e->depth <= x->depth)
    e->depth = x->depth + 1;
  asc__resolve_expr(r, e);
  return true;
}

bool asc__rewrite_ufunc_method(resolver *r, asc__ast_expr *e) {
  const asc__ast_expr *np;
  const char *uf, *method;
  asc__ast_expr *a, *axis, *keep;
  int i, n = (int)(sizeof methods / sizeof methods[0]);
  if (e->u.call.builtin != NULL &&
      (e->u.call.builtin->id == ASC_BI_NP_OUTER_LEFT ||
       e->u.call.builtin->id == ASC_BI_NP_EINSUM_OPERAND ||
       e->u.call.builtin->id == ASC_BI_NP_EINSUM_DIAG)) {
    /* made by a rewrite: its operand is resolved here, once */
    asc__resolve_expr(r, e->u.call.rargs[0]);
    return true;
  }
  if (asc__rewrite_einsum(r, e) || angle_units(r, e))
    return true;
  if (!ufunc_method(r, e, &np, &uf, &method))
    return false;
  if (strcmp(method, "outer") == 0) {
    if (strcmp(uf, "add") == 0 || strcmp(uf, "subtract") == 0 ||
        strcmp(uf, "multiply") == 0)
      return false; /* builtins of their own */
    to_outer(r, e, np, uf);
    asc__resolve_expr(r, e);
    return true;
  }
  if (method[0] == 'a' && (strcmp(uf, "maximum") == 0 ||
                           strcmp(uf, "minimum") == 0))
    return false; /* builtins of their own (lower_create.c) */
  for (i = 0; i < n; i++)
    if (strcmp(methods[i].ufunc, uf) == 0)
      break;
  if (i == n || (method[0] == 'a' && methods[i].accumulate == NULL)) {
    asc__diag_error(r->c, e->loc, "np.%s.%s is not supported in kernels "
                    "(reduce: add, multiply, maximum, minimum, logical_and, "
                    "logical_or; accumulate: add, multiply, maximum, minimum; "
                    "outer: the "
                    "binary ufuncs)", uf, method);
    return true;
  }
  {
    char what[64];
    bool red = method[0] == 'r';
    snprintf(what, sizeof what, "np.%s.%s", uf, method);
    if (!reduce_args(r, e, what, red, &a, &axis, &keep))
      return true;
    to_reduction(r, e, np, red ? methods[i].reduce : methods[i].accumulate,
                 a, axis, keep);
  }
  asc__resolve_expr(r, e);
  return true;
}
