/*
 * Comprehensions, unrolled at compile time.  A kernel has no growable
 * lists: `[f(x) for x in it]`, `tuple(... for ...)` and `sum(...)` over
 * sequences whose length the signature fixes (a shape, a tuple, range()
 * with constant bounds, zip() and enumerate() of those) become the tuple
 * of their elements, or the sum of them, before they are typed.  Each
 * element is a copy of the comprehension's element expression with the
 * variables replaced by the values they take (the literal i of range(),
 * t[i] of a tuple t, the i-th expression of a tuple display).  A
 * condition (`if c`) is evaluated for each element with the variables
 * replaced, and must be a compile-time truth there.
 *
 * The node keeps its comprehension (asc__ast_expr.comp), so the next
 * signature or helper instance unrolls it again for its own types.
 */
#include <string.h>

#include "compiler/types/infer_int.h"

/* Elements a comprehension may produce: beyond this it is not a small
 * static sequence but a loop, and belongs in an array. */
#define MAX_COMP_ELEMS 4096
/* Names the clauses of one comprehension bind. */
#define MAX_COMP_VARS 64

typedef struct unroller {
  run *r;
  asc__ast_expr *comp;        /* the comprehension being unrolled */
  asc__sym *from[MAX_COMP_VARS];     /* variables bound so far ... */
  asc__ast_expr *to[MAX_COMP_VARS];  /* ... and their values */
  int nbound;
  asc__ast_expr **out;        /* the elements */
  int nout, capout;
  bool failed;
} unroller;

static asc__ast_expr *node(run *r, asc__expr_kind k, asc__loc loc) {
  asc__ast_expr *e = asc__arena_alloc(r->in->c, sizeof *e);
  e->kind = k;
  e->loc = loc;
  e->depth = 1;
  return e;
}

static asc__ast_expr *int_node(run *r, int64_t v, asc__loc loc) {
  asc__ast_expr *e = node(r, ASC_EXPR_INT, loc);
  e->u.ival = (uint64_t)(v < 0 ? -v : v);
  if (v < 0) {
    asc__ast_expr *n = node(r, ASC_EXPR_UNARY, loc);
    n->u.unary.op = ASC_UN_NEG;
    n->u.unary.operand = e;
    n->depth = 2;
    return n;
  }
  return e;
}

static asc__ast_expr *tuple_node(run *r, asc__ast_expr **elts, int n,
                                 asc__loc loc) {
  asc__ast_expr *e = node(r, ASC_EXPR_TUPLE, loc);
  int32_t d = 0;
  e->u.tuple.elts = elts;
  e->u.tuple.n = n;
  for (int i = 0; i < n; i++)
    d = elts[i]->depth > d ? elts[i]->depth : d;
  e->depth = d + 1;
  return e;
}

/* The value of a compile-time integer: literals, module constants,
 * ConstExpr parameters of the kernel, and + - * // % of those. */
static bool const_value(run *r, const asc__ast_expr *e, int64_t *v,
                        int depth) {
  int64_t a, b;
  if (e == NULL || depth > ASC_MAX_NESTING)
    return false;
  switch (e->kind) {
  case ASC_EXPR_INT:
    if (e->u.ival > (uint64_t)INT64_MAX)
      return false;
    *v = (int64_t)e->u.ival;
    return true;
  case ASC_EXPR_BOOL:
    *v = e->u.bval;
    return true;
  case ASC_EXPR_NAME: {
    const asc__sym *s = e->u.name.sym;
    if (s != NULL && s->kind == ASC_SYM_CONST &&
        !asc__dtype_is_float(s->u.cnst->folded.dtype)) {
      *v = s->u.cnst->folded.value.i;
      return true;
    }
    if (s != NULL && s->kind == ASC_SYM_PARAM &&
        s->owner == r->in->out->kernel && s->u.index >= 0 &&
        s->u.index < r->in->sig->nparams &&
        r->in->sig->params[s->u.index].is_constexpr &&
        !asc__dtype_is_float(r->in->sig->params[s->u.index].dtype)) {
      *v = r->in->sig->params[s->u.index].value.value.i;
      return true;
    }
    return false;
  }
  case ASC_EXPR_UNARY:
    if (!const_value(r, e->u.unary.operand, &a, depth + 1))
      return false;
    if (e->u.unary.op == ASC_UN_NEG && a != INT64_MIN)
      *v = -a;
    else if (e->u.unary.op == ASC_UN_POS)
      *v = a;
    else
      return false;
    return true;
  case ASC_EXPR_BINARY:
    if (!const_value(r, e->u.binary.lhs, &a, depth + 1) ||
        !const_value(r, e->u.binary.rhs, &b, depth + 1) ||
        a < -(1 << 30) || a > (1 << 30) || b < -(1 << 30) || b > (1 << 30))
      return false;
    switch (e->u.binary.op) {
    case ASC_BIN_ADD: *v = a + b; return true;
    case ASC_BIN_SUB: *v = a - b; return true;
    case ASC_BIN_MUL: *v = a * b; return true;
    case ASC_BIN_FLOORDIV:
    case ASC_BIN_MOD: {
      int64_t q, m;
      if (b == 0)
        return false;
      q = a / b;
      m = a % b;
      if (m != 0 && (m < 0) != (b < 0)) { /* Python floors */
        q--;
        m += b;
      }
      *v = e->u.binary.op == ASC_BIN_MOD ? m : q;
      return true;
    }
    default:
      return false;
    }
  case ASC_EXPR_IFEXP:
    if (!const_value(r, e->u.ifexp.cond, &a, depth + 1))
      return false;
    return const_value(r, a ? e->u.ifexp.then : e->u.ifexp.orelse, v,
                       depth + 1);
  default:
    return false;
  }
}

/* The truth of a comprehension's condition: comparisons, and, or, not of
 * compile-time integers (Python's short circuit: the side not reached
 * need not be constant).  False when it is not known at compile time. */
static bool const_truth(run *r, const asc__ast_expr *e, bool *v, int depth) {
  int64_t a, b;
  bool x;
  if (e == NULL || depth > ASC_MAX_NESTING)
    return false;
  switch (e->kind) {
  case ASC_EXPR_BOOLOP:
    if (!const_truth(r, e->u.boolop.lhs, &x, depth + 1))
      return false;
    if (x != e->u.boolop.is_and) {
      *v = x;
      return true;
    }
    return const_truth(r, e->u.boolop.rhs, v, depth + 1);
  case ASC_EXPR_UNARY:
    if (e->u.unary.op != ASC_UN_NOT)
      break;
    if (!const_truth(r, e->u.unary.operand, &x, depth + 1))
      return false;
    *v = !x;
    return true;
  case ASC_EXPR_COMPARE:
    if (!const_value(r, e->u.cmp.operands[0], &a, depth + 1))
      return false;
    for (int i = 0; i < e->u.cmp.n; i++) {
      if (!const_value(r, e->u.cmp.operands[i + 1], &b, depth + 1))
        return false;
      switch (e->u.cmp.ops[i]) {
      case ASC_CMP_EQ: x = a == b; break;
      case ASC_CMP_NE: x = a != b; break;
      case ASC_CMP_LT: x = a < b; break;
      case ASC_CMP_LE: x = a <= b; break;
      case ASC_CMP_GT: x = a > b; break;
      case ASC_CMP_GE: x = a >= b; break;
      default: return false;
      }
      if (!x) {
        *v = false;
        return true;
      }
      a = b;
    }
    *v = true;
    return true;
  default:
    break;
  }
  if (!const_value(r, e, &a, depth + 1))
    return false;
  *v = a != 0;
  return true;
}

static bool is_py_call(const asc__ast_expr *e, const char *name) {
  return e->kind == ASC_EXPR_CALL && e->u.call.builtin == NULL &&
         e->u.call.callee == NULL && e->u.call.cls == NULL &&
         e->u.call.func->kind == ASC_EXPR_NAME &&
         e->u.call.func->u.name.sym == NULL &&
         strcmp(e->u.call.func->u.name.id, name) == 0;
}

static bool is_range(const asc__ast_expr *e) {
  const asc__builtin *b =
      e->kind == ASC_EXPR_CALL ? e->u.call.builtin : NULL;
  return b != NULL && (b->id == ASC_BI_RANGE || b->id == ASC_BI_STATIC_RANGE);
}

static void fail(unroller *u, asc__loc loc, const char *why) {
  if (!u->failed)
    report(u->r, loc, "a comprehension in a kernel is unrolled at compile "
           "time, so it must run over a sequence of static length (a "
           "shape, a tuple, range() with constant bounds, zip() or "
           "enumerate() of those): %s", why);
  u->failed = true;
}

/* How many elements the iterable `it` (variables already replaced) has;
 * -1 after reporting why it has no static length. */
static int64_t length(unroller *u, asc__ast_expr *it) {
  run *r = u->r;
  asc__type *t;
  if (is_range(it)) {
    int64_t a[3] = {0, 0, 1}, n;
    int na = it->u.call.nargs;
    if (it->u.call.nkws > 0 || na < 1 || na > 3) {
      fail(u, it->loc, "range() takes 1 to 3 positional arguments here");
      return -1;
    }
    for (int i = 0; i < na; i++)
      if (!const_value(r, it->u.call.args[i], &a[na == 1 ? 1 : i], 0)) {
        fail(u, it->u.call.args[i]->loc, "this bound of range() is not a "
             "compile-time constant");
        return -1;
      }
    if (a[2] == 0) {
      fail(u, it->loc, "range() arg 3 must not be zero");
      return -1;
    }
    n = a[2] > 0 ? (a[1] - a[0] + a[2] - 1) / a[2]
                 : (a[0] - a[1] - a[2] - 1) / -a[2];
    return n < 0 ? 0 : n;
  }
  if (is_py_call(it, "zip") || is_py_call(it, "enumerate")) {
    bool en = it->u.call.func->u.name.id[0] == 'e';
    int64_t n = -1;
    if (en ? it->u.call.nargs < 1 || it->u.call.nargs > 2
           : it->u.call.nargs < 1) {
      fail(u, it->loc, en ? "enumerate() takes a sequence and an optional "
                            "start"
                          : "zip() takes one or more sequences");
      return -1;
    }
    for (int i = 0; i < (en ? 1 : it->u.call.nargs); i++) {
      int64_t m = length(u, it->u.call.args[i]);
      if (m < 0)
        return -1;
      n = n < 0 || m < n ? m : n;
    }
    return n;
  }
  if (it->kind == ASC_EXPR_TUPLE)
    return it->u.tuple.n;
  t = asc__ty_find(asc__infer_expr(r, it));
  if (t == NULL || t->kind == ASC_TY_ERROR) {
    u->failed = true;
    return -1;
  }
  if (t->kind == ASC_TY_TUPLE)
    return t->n;
  fail(u, it->loc, asc__arena_printf(r->in->c, "this is %s%s", tn(r, t),
       t->kind == ASC_TY_TENSOR ? ", whose length is known only at run time "
                                  "(write a loop, or np.* of the array)"
                                : ""));
  return -1;
}

/* The k-th element of it. */
static asc__ast_expr *element(unroller *u, asc__ast_expr *it, int64_t k) {
  run *r = u->r;
  asc__ast_expr *s;
  if (is_range(it)) {
    int64_t a[3] = {0, 0, 1};
    int na = it->u.call.nargs;
    for (int i = 0; i < na; i++)
      (void)const_value(r, it->u.call.args[i], &a[na == 1 ? 1 : i], 0);
    return int_node(r, a[0] + k * a[2], it->loc);
  }
  if (is_py_call(it, "zip")) {
    int n = it->u.call.nargs;
    asc__ast_expr **el = asc__arena_alloc(r->in->c, sizeof *el * (size_t)n);
    for (int i = 0; i < n; i++)
      el[i] = element(u, it->u.call.args[i], k);
    return tuple_node(r, el, n, it->loc);
  }
  if (is_py_call(it, "enumerate")) {
    asc__ast_expr **el = asc__arena_alloc(r->in->c, sizeof *el * 2);
    int64_t start = 0;
    if (it->u.call.nargs == 2 &&
        !const_value(r, it->u.call.args[1], &start, 0))
      fail(u, it->u.call.args[1]->loc, "enumerate()'s start is not a "
           "compile-time constant");
    el[0] = int_node(r, start + k, it->loc);
    el[1] = element(u, it->u.call.args[0], k);
    return tuple_node(r, el, 2, it->loc);
  }
  if (it->kind == ASC_EXPR_TUPLE)
    return it->u.tuple.elts[k];
  s = node(r, ASC_EXPR_SUBSCRIPT, it->loc);
  s->u.sub.value = it;
  s->u.sub.index = int_node(r, k, it->loc);
  s->depth = it->depth + 1;
  return s;
}

static void bind(unroller *u, asc__ast_expr *target, asc__ast_expr *v) {
  if (target->kind == ASC_EXPR_TUPLE) {
    int64_t n = v->kind == ASC_EXPR_TUPLE ? v->u.tuple.n : length(u, v);
    if (n < 0)
      return;
    if (n != target->u.tuple.n) {
      report(u->r, target->loc, "cannot unpack %lld values into %d names",
             (long long)n, target->u.tuple.n);
      u->failed = true;
      return;
    }
    for (int i = 0; i < target->u.tuple.n; i++)
      bind(u, target->u.tuple.elts[i], element(u, v, i));
    return;
  }
  if (u->nbound == MAX_COMP_VARS) {
    fail(u, target->loc, "it binds too many names");
    return;
  }
  u->from[u->nbound] = target->u.name.sym;
  u->to[u->nbound] = v;
  u->nbound++;
}

static void generate(unroller *u, int level);

static void clause(unroller *u, int level) {
  const asc__ast_comp *c = u->comp->comp;
  asc__ast_expr *it = asc__ast_clone_subst(u->r->in->c, c->fors[level].iter,
                                           u->from, u->to, u->nbound);
  int64_t n = length(u, it);
  int nb = u->nbound;
  for (int64_t k = 0; k < n && !u->failed; k++) {
    bool keep = true;
    bind(u, c->fors[level].target, element(u, it, k));
    if (c->fors[level].cond != NULL && !u->failed) {
      asc__ast_expr *cond = asc__ast_clone_subst(
          u->r->in->c, c->fors[level].cond, u->from, u->to, u->nbound);
      if (!const_truth(u->r, cond, &keep, 0)) {
        report(u->r, c->fors[level].cond->loc, "a comprehension in a "
               "kernel is unrolled at compile time, so its condition "
               "('if') must be known at compile time for each element (a "
               "comparison of the loop variables and constants); this one "
               "depends on run-time values (make the element `x if c else "
               "y`, or fill an array in a loop)");
        u->failed = true;
      }
    }
    if (keep)
      generate(u, level + 1);
    u->nbound = nb;
  }
}

static void generate(unroller *u, int level) {
  const asc__ast_comp *c = u->comp->comp;
  if (u->failed)
    return;
  if (level < c->nfors) {
    clause(u, level);
    return;
  }
  if (u->nout >= MAX_COMP_ELEMS) {
    fail(u, u->comp->loc, asc__arena_printf(u->r->in->c, "it has more than "
         "%d elements", MAX_COMP_ELEMS));
    return;
  }
  u->out = asc__arena_grow(u->r->in->c, u->out, u->nout, &u->capout,
                           sizeof *u->out, 8);
  u->out[u->nout++] = asc__ast_clone_subst(u->r->in->c, c->elt, u->from,
                                           u->to, u->nbound);
}

bool asc__infer_unroll(run *r, asc__ast_expr *e) {
  unroller u;
  if (e->comp->quiet) {
    /* left a comprehension when x is no tuple: the caller says so */
    asc__ast_expr *it = e->comp->fors[0].iter;
    asc__type *t = it->kind == ASC_EXPR_TUPLE ? NULL
                                              : asc__infer_expr(r, it);
    if (t != NULL && asc__ty_find(t)->kind != ASC_TY_TUPLE) {
      e->kind = ASC_EXPR_COMP;
      return true;
    }
  }
  memset(&u, 0, sizeof u);
  u.r = r;
  u.comp = e;
  generate(&u, 0);
  if (u.failed)
    return false;
  if (!e->comp->sum) {
    asc__ast_expr *t = tuple_node(r, u.out, u.nout, e->loc);
    e->kind = ASC_EXPR_TUPLE;
    e->u.tuple = t->u.tuple;
    e->u.tuple.list = e->comp->list;
    e->depth = t->depth;
    return true;
  }
  /* sum(): ((0 + x0) + x1) + ..., Python's order from its start value 0 */
  {
    asc__ast_expr *acc = int_node(r, 0, e->loc);
    for (int i = 0; i < u.nout; i++) {
      asc__ast_expr *b = i + 1 < u.nout ? node(r, ASC_EXPR_BINARY, e->loc)
                                        : e;
      b->kind = ASC_EXPR_BINARY;
      b->u.binary.op = ASC_BIN_ADD;
      b->u.binary.lhs = acc;
      b->u.binary.rhs = u.out[i];
      b->depth = (acc->depth > u.out[i]->depth ? acc->depth
                                                : u.out[i]->depth) + 1;
      acc = b;
    }
    if (u.nout == 0) {
      e->kind = ASC_EXPR_INT;
      e->u.ival = 0;
      e->depth = 1;
    }
  }
  return true;
}

/* ------------------------------------------------- np.array, np.asarray */

/* The dtype numpy gives an array made of numbers of type t: a Python int
 * is int64, a Python float float64, a Python complex complex128 (array
 * creation does not keep them weak). */
static asc__type *strong(run *r, asc__type *t) {
  return scalar(r, (ascDataType)asc__ty_find(t)->dtype);
}

static const char *const ARRAY_FORMS =
    "numbers, lists of numbers of one length, or arrays of one shape";

/* np.array(object, dtype=None), np.asarray(a, dtype=None): of an array, a
 * copy (as its dtype, or dtype); of a number, a 0-d array; of a list or
 * tuple written in place (or a comprehension): numbers make a 1-D array,
 * lists of numbers a 2-D one, arrays of one shape their stack. */
asc__type *asc__infer_np_array(run *r, asc__ast_expr *e) {
  asc__ast_expr *a = e->u.call.rargs[0], *d = e->u.call.rargs[1];
  const char *fn = e->u.call.builtin->name;
  ascDataType want = ascDataTypeCount;
  asc__type *t, *res = NULL;
  int nd = 1, m = -1;
  if (d != NULL && d->kind != ASC_EXPR_NONE) {
    if (!asc__infer_dtype_arg(r, d, &want))
      return err(r);
    asc__infer_settype(r, d, scalar(r, want));
  }
  t = asc__infer_expr(r, a);
  PROPAGATE(t);
  t = asc__ty_find(t);
  if (t->kind == ASC_TY_TENSOR || t->kind == ASC_TY_SCALAR)
    return asc__ty_tensor(r->in->c,
                          want != ascDataTypeCount ? want
                                                   : (ascDataType)t->dtype,
                          t->kind == ASC_TY_TENSOR ? t->ndim : 0, true);
  if (t->kind != ASC_TY_TUPLE || a->kind != ASC_EXPR_TUPLE) {
    report(r, a->loc, "np.%s() in kernels takes %s%s, not %s", fn,
           ARRAY_FORMS, t->kind == ASC_TY_TUPLE
                            ? " written in place (np.array(tuple(t)) for a "
                              "tuple t)"
                            : "",
           py_name(r, t));
    return err(r);
  }
  for (int k = 0; k < t->n; k++) {
    asc__type *x = asc__ty_find(t->elems[k]);
    asc__ast_expr *xe = a->u.tuple.elts[k];
    int xn = x->kind == ASC_TY_TUPLE ? x->n : -1;
    bool ok = x->kind == ASC_TY_SCALAR ||
              (x->kind == ASC_TY_TENSOR && x->ndim + 1 <= ASC_MAX_DIMS) ||
              (x->kind == ASC_TY_TUPLE && xe->kind == ASC_EXPR_TUPLE);
    int xd = x->kind == ASC_TY_SCALAR ? 1
             : x->kind == ASC_TY_TENSOR ? x->ndim + 1
                                        : 2;
    if (ok && k > 0 && (xd != nd || xn != m))
      ok = false;
    for (int j = 0; ok && x->kind == ASC_TY_TUPLE && j < x->n; j++)
      ok = asc__ty_find(x->elems[j])->kind == ASC_TY_SCALAR;
    if (!ok) {
      report(r, xe->loc, "np.%s() in kernels takes %s; element %d is %s%s",
             fn, ARRAY_FORMS, k, py_name(r, x),
             k > 0 ? " and does not match element 0" : "");
      return err(r);
    }
    nd = xd;
    m = xn;
    if (x->kind == ASC_TY_TUPLE)
      for (int j = 0; j < x->n; j++)
        res = res == NULL ? strong(r, x->elems[j])
                          : asc__ty_promote(r->in->c, res,
                                            strong(r, x->elems[j]));
    else
      res = res == NULL ? strong(r, x)
                        : asc__ty_promote(r->in->c, res, strong(r, x));
  }
  if (want == ascDataTypeCount)
    want = res != NULL ? (ascDataType)asc__ty_find(res)->dtype : ascFloat64;
  return asc__ty_tensor(r->in->c, want, nd, true);
}
