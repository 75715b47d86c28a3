/*
 * Type inference of statements: assignments (to names, tuples, array
 * elements and views, struct fields), loops, returns, raises and nested
 * function definitions.  Expressions are in infer_expr.c; infer.c holds
 * the solver.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

/* ----------------------------------------------------------- statements */

static void assign_target(run *r, asc__ast_expr *target, asc__type *t,
                          asc__ast_expr *value, asc__loc loc, int depth);

static void assign_tuple(run *r, asc__ast_expr *target, asc__type *t,
                         asc__ast_expr *value, asc__loc loc, int depth) {
  asc__type *tt = asc__ty_find(t);
  int n = target->u.tuple.n;
  if (tt == NULL || is_err(tt)) {
    for (int i = 0; i < n; i++)
      assign_target(r, target->u.tuple.elts[i], tt, NULL, loc, depth + 1);
    return;
  }
  if (tt->kind == ASC_TY_TENSOR && tt->ndim >= 1) {
    /* numpy iterates an array along its first axis: each name takes a
     * row (a view), or an element of a 1-D array; the count is checked
     * when the kernel runs (lower_stmt.c) */
    asc__type *row = tt->ndim == 1
                         ? scalar(r, tt->dtype)
                         : asc__ty_tensor(r->in->c, tt->dtype, tt->ndim - 1,
                                          tt->contiguous);
    for (int i = 0; i < n; i++)
      assign_target(r, target->u.tuple.elts[i], row, NULL, loc, depth + 1);
    if (r->check)
      asc__infer_settype(r, target, tt);
    return;
  }
  if (tt->kind != ASC_TY_TUPLE) {
    report(r, value ? value->loc : loc, "cannot unpack %s into %d names",
           tn(r, tt), n);
    return;
  }
  if (tt->n != n) {
    if (value != NULL && value->kind == ASC_EXPR_ATTR &&
        strcmp(value->u.attr.attr, "shape") == 0)
      report(r, target->loc,
             "cannot unpack the shape of a %d-dimensional tensor into %d "
             "names",
             (int)tt->n, n);
    else
      report(r, target->loc, "cannot unpack %s (%d values) into %d names",
             tn(r, tt), (int)tt->n, n);
    return;
  }
  for (int i = 0; i < n; i++)
    assign_target(r, target->u.tuple.elts[i], tt->elems[i],
                  value && value->kind == ASC_EXPR_TUPLE &&
                          value->u.tuple.n == n
                      ? value->u.tuple.elts[i]
                      : NULL,
                  loc, depth + 1);
  if (r->check)
    asc__infer_settype(r, target, tt);
}

/* target[...] = value where target[...] is a view of type vt: numpy's
 * setitem broadcasts value (a scalar or an array of no more axes) to the
 * view's shape and converts it to the element type like an item
 * assignment (docs/arrays.md). */
static void array_store(run *r, asc__ast_expr *target, asc__type *vt,
                        asc__type *t, asc__ast_expr *value, asc__loc loc) {
  asc__type *elem;
  if (vt == NULL || is_err(vt) || t == NULL || is_err(t))
    return;
  vt = asc__ty_find(vt);
  t = asc__ty_find(t);
  elem = scalar(r, vt->dtype);
  if ((t->kind == ASC_TY_TENSOR || t->kind == ASC_TY_SCALAR) &&
      asc__dtype_is_complex(t->dtype) && !asc__dtype_is_complex(vt->dtype)) {
    report(r, value ? value->loc : loc,
           "cannot store complex values (%s) into %s: numpy would drop the "
           "imaginary part with a ComplexWarning; store .real explicitly",
           tn(r, t), tn(r, vt));
    return;
  }
  if (t->kind == ASC_TY_TENSOR) {
    if (t->ndim > vt->ndim)
      report(r, value ? value->loc : loc,
             "cannot broadcast %s into %s: it has more axes", tn(r, t),
             tn(r, vt));
    return;
  }
  if (t->kind != ASC_TY_SCALAR) {
    report(r, value ? value->loc : loc, "cannot store %s into %s",
           tn(r, t), tn(r, vt));
    return;
  }
  (void)target;
  if (asc__infer_fits(r, t, elem, true, 0) && value != NULL)
    asc__infer_coerce(r, value, elem, 0);
}

static void assign_target(run *r, asc__ast_expr *target, asc__type *t,
                          asc__ast_expr *value, asc__loc loc, int depth) {
  if (depth > ASC_MAX_NESTING) {
    report(r, target->loc, "assignment target too deeply nested");
    return;
  }
  switch (target->kind) {
  case ASC_EXPR_NAME: {
    asc__sym *s = target->u.name.sym;
    asc__type *vt;
    if (s == NULL || (s->kind != ASC_SYM_LOCAL && s->kind != ASC_SYM_PARAM)) {
      report(r, target->loc, "cannot assign to '%s'", target->u.name.id);
      return;
    }
    if (t != NULL && (is_kind(t, ASC_TY_NONE) || is_kind(t, ASC_TY_STR) ||
                      is_kind(t, ASC_TY_FUNC))) {
      report(r, value ? value->loc : loc,
             "a variable cannot hold %s", tn(r, t));
      t = err(r);
    }
    vt = asc__infer_assign_cell(r, s, target->loc, t, value);
    if (r->check)
      asc__infer_settype(r, target, vt ? vt : err(r));
    return;
  }
  case ASC_EXPR_TUPLE:
    assign_tuple(r, target, t, value, loc, depth);
    return;
  case ASC_EXPR_SUBSCRIPT: {
    asc__type *tt, *elem;
    if (asc__infer_is_flat(target->u.sub.value)) {
      /* a.flat[i] = v: one element, as a[i, j] = v */
      if (is_err(asc__infer_expr(r, target)))
        return;
      tt = asc__infer_expr(r, target->u.sub.value->u.attr.value);
    } else {
      tt = asc__infer_array_value(r, target->u.sub.value);
    }
    if (tt == NULL || is_err(tt))
      return;
    tt = asc__ty_find(tt);
    if (tt->kind != ASC_TY_TENSOR) {
      report(r, target->loc, "cannot assign to an element of %s%s",
             tn(r, tt), tt->kind == ASC_TY_TUPLE
                            ? " (tuples and lists in kernels are values of "
                              "fixed length: keep values that change in an "
                              "array, np.empty(n) or asc.local_array)"
                            : "");
      return;
    }
    if (asc__infer_index_is_view(target->u.sub.index, tt->ndim) ||
        asc__infer_fancy_index(r, tt, target->u.sub.index) != NULL) {
      array_store(r, target, asc__infer_expr(r, target), t, value, loc);
      return;
    }
    if (!asc__infer_is_flat(target->u.sub.value))
      asc__infer_check_tensor_index(r, tt, target->u.sub.index,
                                    target->loc);
    elem = scalar(r, tt->dtype);
    if (r->check)
      asc__infer_settype(r, target, elem);
    if (t == NULL || is_err(t))
      return;
    if (is_kind(t, ASC_TY_SCALAR) &&
        asc__dtype_is_complex(asc__ty_find(t)->dtype) &&
        !asc__dtype_is_complex(tt->dtype)) {
      report(r, value ? value->loc : loc,
             "cannot store a complex value (%s) into an element of %s: "
             "numpy would drop the imaginary part with a ComplexWarning; "
             "store z.real (or abs(z)) explicitly",
             tn(r, t), tn(r, tt));
      return;
    }
    /* numpy's item assignment converts any real scalar to the element
     * type (float -> int truncates; docs/arrays.md) */
    if (is_kind(t, ASC_TY_SCALAR) && !asc__infer_fits(r, t, elem, true, 0))
      return;
    if (is_kind(t, ASC_TY_TENSOR))
      report(r, value ? value->loc : loc,
             "cannot store an array (%s) into one element of %s: index "
             "its operands, or assign to a slice (x[:] = ...)",
             tn(r, t), tn(r, tt));
    else if (!asc__infer_fits(r, t, elem, true, 0))
      report(r, value ? value->loc : loc,
             "cannot store %s into an element of %s%s%s%s", tn(r, t),
             tn(r, tt),
             is_kind(t, ASC_TY_SCALAR) ? " (convert it explicitly: asc." : "",
             is_kind(t, ASC_TY_SCALAR) ? asc__dtype_long(tt->dtype) : "",
             is_kind(t, ASC_TY_SCALAR) ? "(...))" : "");
    else if (value != NULL)
      asc__infer_coerce(r, value, elem, 0);
    return;
  }
  case ASC_EXPR_ATTR: {
    asc__type *st = asc__infer_expr(r, target->u.attr.value), *ft = NULL;
    if (st == NULL || is_err(st))
      return;
    st = asc__ty_find(st);
    if (st->kind == ASC_TY_STRUCT)
      for (int32_t i = 0; i < st->n; i++)
        if (strcmp(st->fields[i].name, target->u.attr.attr) == 0)
          ft = st->fields[i].type;
    if (ft == NULL) {
      report(r, target->u.attr.attr_loc, "cannot assign to '%s' of %s",
             target->u.attr.attr, tn(r, st));
      return;
    }
    if (r->check)
      asc__infer_settype(r, target, ft);
    if (t != NULL && !is_err(t) && !asc__infer_fits(r, t, ft, true, 0))
      report(r, value ? value->loc : loc,
             "cannot assign %s to field '%s', which has type %s", tn(r, t),
             target->u.attr.attr, tn(r, ft));
    else if (value != NULL)
      asc__infer_coerce(r, value, ft, 0);
    return;
  }
  default:
    report(r, target->loc, "cannot assign to this expression");
    return;
  }
}

/* The current value of an assignment target, for `x op= v`. */
static asc__type *target_value(run *r, asc__ast_expr *target) {
  if (target->kind == ASC_EXPR_NAME) {
    asc__sym *s = target->u.name.sym;
    if (s == NULL || (s->kind != ASC_SYM_LOCAL && s->kind != ASC_SYM_PARAM))
      return NULL;
    return asc__infer_cell(r, s)->t;
  }
  if (target->kind == ASC_EXPR_SUBSCRIPT &&
      asc__infer_is_flat(target->u.sub.value))
    return asc__infer_expr(r, target);
  if (target->kind == ASC_EXPR_SUBSCRIPT) {
    asc__type *tt =
        asc__ty_find(asc__infer_array_value(r, target->u.sub.value));
    if (tt != NULL && tt->kind == ASC_TY_TENSOR &&
        (asc__infer_index_is_view(target->u.sub.index, tt->ndim) ||
         asc__infer_fancy_index(r, tt, target->u.sub.index) != NULL))
      return asc__infer_expr(r, target);
    if (tt != NULL && tt->kind == ASC_TY_TENSOR)
      return scalar(r, tt->dtype);
    return tt;
  }
  return asc__infer_expr(r, target);
}

static void for_stmt(run *r, asc__ast_stmt *s) {
  asc__ast_expr *bounds[3] = {s->u.for_.start, s->u.for_.stop,
                              s->u.for_.step};
  asc__type *i64 = scalar(r, ascInt64);
  if (s->u.for_.over_array && s->u.for_.stop != NULL &&
      s->u.for_.stop->kind == ASC_EXPR_SUBSCRIPT &&
      s->u.for_.stop->u.sub.value->kind == ASC_EXPR_ATTR) {
    /* for x in t, t a tuple or list: read at a run-time index, so its
     * elements must be numbers of one type */
    asc__ast_expr *seq = s->u.for_.stop->u.sub.value->u.attr.value;
    asc__type *t = asc__ty_find(asc__infer_expr(r, seq));
    for (int k = 0; t != NULL && t->kind == ASC_TY_TUPLE && k < t->n; k++)
      if (asc__ty_find(t->elems[k])->kind != ASC_TY_SCALAR) {
        report(r, seq->loc, "a for loop over a tuple or list of %s is not "
               "supported in kernels yet (the loop reads it at a run-time "
               "index): use a comprehension, which is unrolled "
               "(sum(p.sum() for p in (a, b)), np.concatenate([p * 2 for "
               "p in (a, b)])), or write the body once for each element",
               tn(r, t->elems[k]));
        return;
      }
  }
  for (int i = 0; i < 3; i++) {
    asc__type *t;
    if (bounds[i] == NULL)
      continue;
    t = asc__infer_expr(r, bounds[i]);
    if (t == NULL || is_err(t))
      continue;
    if (!asc__ty_is_intlike(t) || asc__ty_find(t)->dtype == ascBool)
      report(r, bounds[i]->loc, "range bounds must be integers, not %s",
             tn(r, t));
    else if (s->u.for_.loop == ASC_BI_STATIC_RANGE &&
             !asc__infer_is_const_int(r, bounds[i], 0))
      report(r, bounds[i]->loc,
             "static_range bounds must be compile-time constants");
    else
      asc__infer_coerce(r, bounds[i], i64, 0);
  }
  if (r->check && s->u.for_.iter != NULL)
    asc__infer_settype(r, s->u.for_.iter, asc__ty_none(r->in->c));
  assign_target(r, s->u.for_.target, i64, NULL, s->loc, 0);
  asc__infer_block(r, &s->u.for_.body);
}

static void return_stmt(run *r, asc__ast_stmt *s) {
  frame *f = r->cur;
  asc__type *t = s->u.ret.value ? asc__infer_expr(r, s->u.ret.value)
                                : asc__ty_none(r->in->c);
  cell *k = &f->ret;
  if (f->fn->kind == ASC_FUNC_LAMBDA || f->fn->kind == ASC_FUNC_NESTED) {
    if (t != NULL && !is_err(t) && !is_kind(t, ASC_TY_NONE) &&
        f->fn->kind != ASC_FUNC_LAMBDA)
      report(r, s->u.ret.value->loc,
             "a parallel-loop body cannot return a value");
    return;
  }
  /* A kernel returns like a function: to its caller in Python (one block,
   * the value handed back through the launch's result slots). */
  if (!r->check) {
    if (!k->has_first) {
      k->has_first = true;
      k->first_loc = s->loc;
    }
    if (!k->declared) {
      asc__type *nt = asc__infer_widen(r, k->t, t, 0);
      if (!asc__infer_same(nt, k->t)) {
        k->t = nt;
        k->origin_loc = s->loc;
        r->changed = true;
      }
    }
    return;
  }
  if (t != NULL && k->t != NULL &&
      !asc__infer_fits(r, t, k->t, k->declared, 0)) {
    report(r, s->u.ret.value ? s->u.ret.value->loc : s->loc,
           "'%s' returns %s here but %s elsewhere", f->fn->name, tn(r, t),
           tn(r, k->t));
    note(r, k->origin_loc, k->declared ? "return type declared here"
                                       : "returns %s here",
         tn(r, k->t));
  } else if (s->u.ret.value != NULL) {
    asc__infer_coerce(r, s->u.ret.value, k->t, 0);
  }
}

static void raise_stmt(run *r, asc__ast_stmt *s) {
  asc__ast_expr *x = s->u.raise.exc;
  const asc__builtin *b;
  if (x == NULL)
    return;
  if (x->kind == ASC_EXPR_CALL && x->u.call.builtin != NULL &&
      x->u.call.builtin->kind == ASC_BK_EXC) {
    asc__ast_expr *msg = x->u.call.nrargs > 0 ? x->u.call.rargs[0] : NULL;
    if (msg != NULL) {
      asc__type *t = asc__infer_expr(r, msg);
      if (t != NULL && !is_err(t) && !is_kind(t, ASC_TY_STR))
        report(r, msg->loc, "an exception message must be a string, not %s",
               tn(r, t));
    }
    if (r->check)
      asc__infer_settype(r, x, asc__ty_none(r->in->c));
    return;
  }
  b = asc__expr_builtin(x);
  if (b != NULL && b->kind == ASC_BK_EXC) {
    if (r->check)
      asc__infer_settype(r, x, asc__ty_none(r->in->c));
    return;
  }
  report(r, x->loc, "only exception classes (ValueError, ...) can be raised");
}

/* numpy's kinds in the order its same_kind casting allows: bool,
 * unsigned, signed, float, complex. */
static int same_kind_rank(int dt) {
  if (dt == ascBool)
    return 0;
  if (asc__dtype_is_complex(dt))
    return 4;
  if (asc__dtype_is_float(dt))
    return 3;
  return dt == ascUInt8 || dt == ascUInt16 || dt == ascUInt32 ||
                 dt == ascUInt64
             ? 1
             : 2;
}

/* np.add(x, y, out) (rewritten out[...] = x + y): numpy casts the
 * ufunc's result into out by its same_kind rule, and raises its
 * UFuncTypeError otherwise; here a compile error with its message. */
static void ufunc_out_check(run *r, asc__ast_stmt *s, asc__type *t) {
  asc__ast_expr *tg = s->u.assign.targets[0];
  asc__type *ot, *rt = t ? asc__ty_find(t) : NULL;
  if (!r->check || rt == NULL || is_err(rt) ||
      (rt->kind != ASC_TY_TENSOR && rt->kind != ASC_TY_SCALAR) ||
      tg->kind != ASC_EXPR_SUBSCRIPT)
    return;
  ot = asc__ty_find(asc__infer_array_value(r, tg->u.sub.value));
  if (ot == NULL || is_err(ot) || ot->kind != ASC_TY_TENSOR)
    return;
  if (same_kind_rank(rt->dtype) > same_kind_rank(ot->dtype))
    report(r, s->loc, "Cannot cast ufunc '%s' output from dtype('%s') to "
           "dtype('%s') with casting rule 'same_kind'", s->u.assign.ufunc,
           asc__dtype_long(rt->dtype), asc__dtype_long(ot->dtype));
}

static void nested_def(run *r, asc__ast_func *fn) {
  frame *saved = r->cur;
  frame *f;
  if (fn->kind == ASC_FUNC_HELPER)
    return; /* a nested helper: typed at each call, as @asc.func is */
  f = asc__infer_frame_for(r, fn);
  for (int i = 0; i < fn->nparams; i++) {
    asc__ast_param *p = &fn->params[i];
    if (p->annotation != NULL) {
      cell *k = asc__infer_cell(r, p->sym);
      if (!k->declared) {
        k->t = asc__infer_annotation_type(r, p->annotation, NULL);
        k->declared = true;
        k->origin_loc = p->loc;
        r->changed = true;
      }
    }
  }
  if (r->check)
    for (int i = 0; i < fn->nparams; i++) {
      cell *k = asc__infer_cell(r, fn->params[i].sym);
      if (k->t == NULL) {
        report(r, fn->params[i].loc,
               "cannot infer the type of parameter '%s' of '%s' (a nested "
               "function must be a parallel_for body)",
               fn->params[i].name, fn->name);
        k->t = err(r);
      }
    }
  r->cur = f;
  asc__infer_block(r, &fn->body);
  r->cur = saved;
}

static void stmt(run *r, asc__ast_stmt *s) {
  asc__cctx_tick(r->in->c, "infer");
  switch (s->kind) {
  case ASC_STMT_EXPR:
    asc__infer_expr(r, s->u.expr.value);
    return;
  case ASC_STMT_ASSIGN: {
    asc__type *t = asc__infer_expr(r, s->u.assign.value);
    if (s->u.assign.ufunc != NULL)
      ufunc_out_check(r, s, t);
    for (int i = 0; i < s->u.assign.ntargets; i++)
      assign_target(r, s->u.assign.targets[i], t, s->u.assign.value, s->loc,
                    0);
    return;
  }
  case ASC_STMT_AUGASSIGN: {
    asc__type *cur = target_value(r, s->u.aug.target);
    asc__type *v = asc__infer_expr(r, s->u.aug.value);
    asc__type *t;
    asc__ast_expr fake;
    /* Type `target op value` as a binary node would be. */
    memset(&fake, 0, sizeof fake);
    fake.kind = ASC_EXPR_BINARY;
    fake.loc = s->loc;
    fake.u.binary.op = s->u.aug.op;
    fake.u.binary.lhs = s->u.aug.target;
    fake.u.binary.rhs = s->u.aug.value;
    t = asc__infer_binop(r, s->u.aug.op, cur, v, &fake, false);
    if (is_kind(cur, ASC_TY_TENSOR)) {
      /* in place: numpy's same_kind rule for the ufunc's output */
      asc__type *ct = asc__ty_find(cur), *rt = asc__ty_find(t);
      if (rt != NULL && !is_err(rt) &&
          ((asc__dtype_is_float(rt->dtype) &&
            !asc__dtype_is_float(ct->dtype)) ||
           (ct->dtype == ascBool && rt->dtype != ascBool)))
        report(r, s->loc,
               "cannot write the %s result of %s= into %s in place "
               "(numpy's same_kind rule): convert explicitly",
               asc__dtype_long(rt->dtype), asc__binop_str(s->u.aug.op),
               tn(r, ct));
      if (r->check)
        asc__infer_settype(r, s->u.aug.target, cur);
      return;
    }
    assign_target(r, s->u.aug.target, t, NULL, s->loc, 0);
    if (r->check && t != NULL && !is_err(t)) {
      asc__type *tt = asc__ty_find(s->u.aug.target->type);
      if (tt != NULL && tt->kind == ASC_TY_SCALAR)
        asc__infer_coerce(r, s->u.aug.value, tt, 0);
    }
    return;
  }
  case ASC_STMT_ANNASSIGN: {
    asc__ast_expr *tg = s->u.ann.target;
    asc__type *at = asc__infer_annotation_type(r, s->u.ann.annotation, NULL);
    if (tg->kind == ASC_EXPR_NAME && tg->u.name.sym != NULL &&
        (tg->u.name.sym->kind == ASC_SYM_LOCAL ||
         tg->u.name.sym->kind == ASC_SYM_PARAM)) {
      cell *k = asc__infer_cell(r, tg->u.name.sym);
      if (!k->declared && !r->check) {
        k->t = at;
        k->declared = true;
        k->origin_loc = s->loc;
        r->changed = true;
      } else if (r->check && at != NULL && k->t != NULL &&
                 !asc__infer_same(at, k->t)) {
        report(r, s->u.ann.annotation->loc,
               "'%s' is annotated %s here but has type %s",
               tg->u.name.id, tn(r, at), tn(r, k->t));
        note(r, k->origin_loc, "'%s' declared here", tg->u.name.id);
      }
    }
    if (s->u.ann.value != NULL) {
      asc__type *t = asc__infer_expr(r, s->u.ann.value);
      assign_target(r, tg, t, s->u.ann.value, s->loc, 0);
    } else if (r->check) {
      asc__infer_settype(r, tg, at);
    }
    return;
  }
  case ASC_STMT_IF: {
    asc__type *c = asc__infer_expr(r, s->u.if_.cond);
    asc__infer_check_truth(r, c, s->u.if_.cond);
    asc__infer_block(r, &s->u.if_.body);
    asc__infer_block(r, &s->u.if_.orelse);
    return;
  }
  case ASC_STMT_FOR:
    for_stmt(r, s);
    return;
  case ASC_STMT_WHILE: {
    asc__type *c = asc__infer_expr(r, s->u.while_.cond);
    asc__infer_check_truth(r, c, s->u.while_.cond);
    asc__infer_block(r, &s->u.while_.body);
    return;
  }
  case ASC_STMT_RETURN:
    return_stmt(r, s);
    return;
  case ASC_STMT_ASSERT: {
    asc__type *c = asc__infer_expr(r, s->u.assert_.test);
    asc__infer_check_truth(r, c, s->u.assert_.test);
    if (s->u.assert_.msg != NULL) {
      asc__type *m = asc__infer_expr(r, s->u.assert_.msg);
      if (m != NULL && !is_err(m) && !is_kind(m, ASC_TY_STR))
        report(r, s->u.assert_.msg->loc,
               "an assertion message must be a string, not %s", tn(r, m));
    }
    return;
  }
  case ASC_STMT_RAISE:
    raise_stmt(r, s);
    return;
  case ASC_STMT_TRY:
    asc__infer_block(r, &s->u.try_.body);
    for (int i = 0; i < s->u.try_.nhandlers; i++) {
      asc__ast_handler *h = &s->u.try_.handlers[i];
      if (r->check && h->type != NULL)
        asc__infer_settype(r, h->type, asc__ty_none(r->in->c));
      if (r->check && h->name_sym != NULL)
        h->name_sym->type = asc__ty_str(r->in->c);
      asc__infer_block(r, &h->body);
    }
    asc__infer_block(r, &s->u.try_.orelse);
    asc__infer_block(r, &s->u.try_.finalbody);
    return;
  case ASC_STMT_WITH: {
    asc__ast_expr *cx = s->u.with.ctx;
    if (cx->kind != ASC_EXPR_CALL || cx->u.call.builtin == NULL ||
        cx->u.call.builtin->id != ASC_BI_CRITICAL)
      report(r, cx->loc, "only 'with asc.critical():' is supported");
    else
      asc__infer_expr(r, cx);
    asc__infer_block(r, &s->u.with.body);
    return;
  }
  case ASC_STMT_FUNCDEF:
    nested_def(r, s->u.funcdef.fn);
    return;
  case ASC_STMT_BREAK:
  case ASC_STMT_CONTINUE:
  case ASC_STMT_PASS:
  case ASC_STMT_COUNT:
    return;
  }
}

void asc__infer_block(run *r, asc__ast_block *b) {
  for (int i = 0; i < b->n; i++)
    stmt(r, b->stmts[i]);
}
