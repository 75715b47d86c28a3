/*
 * Type inference (infer.h explains the method, docs/types.md the rules).
 *
 *   asc__infer_kernel
 *     run_function(kernel)          one run per function instance
 *       solve: walk the body until no cell widens
 *       check: walk once more, report, write the type slots
 *       helper calls -> asc__infer_instantiate(helper, argument types)
 *                       -> a nested run
 *
 * This file: frames and cells, the assignment rules, annotations, and the
 * runs.  The walk: statements in infer_stmt.c, expressions in
 * infer_expr.c, calls in infer_call.c.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

#define MAX_SOLVE_ITERS 64
#define MAX_HELPER_NEST 32

static asc__type *run_function(infer *in, run *up, asc__ast_func *fn,
                               inst *self, asc__type *const *args,
                               int32_t nargs, bool check);

/* Compile-time constant integer expressions: literals, module constants,
 * ConstExpr parameters, arithmetic of those. */
bool asc__infer_is_const_int(run *r, const asc__ast_expr *e, int depth) {
  if (e == NULL || depth > ASC_MAX_NESTING)
    return false;
  switch (e->kind) {
  case ASC_EXPR_INT:
  case ASC_EXPR_BOOL:
    return true;
  case ASC_EXPR_NAME: {
    const asc__sym *s = e->u.name.sym;
    if (s == NULL)
      return false;
    if (s->kind == ASC_SYM_CONST)
      return !asc__dtype_is_float(s->u.cnst->folded.dtype);
    if (s->kind == ASC_SYM_PARAM && s->owner == r->in->out->kernel &&
        s->u.index >= 0 && s->u.index < r->in->sig->nparams) {
      const asc__ast_param *p = &s->owner->params[s->u.index];
      const asc__sig_param *sp = &r->in->sig->params[s->u.index];
      const asc__builtin *b;
      if (sp->is_constexpr && !asc__dtype_is_float(sp->dtype))
        return true;
      /* n: asc.ConstExpr[int] */
      return p->annotation != NULL &&
             p->annotation->kind == ASC_EXPR_SUBSCRIPT &&
             (b = asc__expr_builtin(p->annotation->u.sub.value)) != NULL &&
             b->id == ASC_BI_CONSTEXPR;
    }
    return false;
  }
  case ASC_EXPR_UNARY:
    return asc__infer_is_const_int(r, e->u.unary.operand, depth + 1);
  case ASC_EXPR_BINARY:
    return e->u.binary.op != ASC_BIN_DIV &&
           asc__infer_is_const_int(r, e->u.binary.lhs, depth + 1) &&
           asc__infer_is_const_int(r, e->u.binary.rhs, depth + 1);
  case ASC_EXPR_ATTR: /* t.ndim */
    return e->u.attr.builtin == NULL && strcmp(e->u.attr.attr, "ndim") == 0;
  default:
    return false;
  }
}

/* ------------------------------------------------------------- frames */

frame *asc__infer_frame_for(run *r, asc__ast_func *fn) {
  frame *f;
  for (f = r->frames; f != NULL; f = f->next)
    if (f->fn == fn)
      return f;
  /* a nested helper's run reads the locals of the function around it
   * (a closure) in the caller's run */
  for (run *u = r->up; fn != r->fn && u != NULL; u = u->up)
    for (f = u->frames; f != NULL; f = f->next)
      if (f->fn == fn)
        return f;
  f = asc__arena_alloc(r->in->c, sizeof *f);
  f->fn = fn;
  f->cells = asc__arena_alloc(r->in->c, sizeof *f->cells *
                                            (size_t)(fn->nlocals + 1));
  f->next = r->frames;
  r->frames = f;
  return f;
}

static int local_index(const asc__sym *s) {
  const asc__ast_func *fn = s->owner;
  if (s->u.index >= 0 && s->u.index < fn->nlocals && fn->locals[s->u.index] == s)
    return s->u.index;
  for (int i = 0; i < fn->nlocals; i++)
    if (fn->locals[i] == s)
      return i;
  return -1;
}

cell *asc__infer_cell(run *r, asc__sym *s) {
  int i;
  ASC_CHECK(r->in->c, s != NULL && s->owner != NULL);
  while (s->prev != NULL && !s->split) /* one variable with its versions */
    s = s->prev;
  i = local_index(s);
  ASC_CHECK(r->in->c, i >= 0);
  return &asc__infer_frame_for(r, s->owner)->cells[i];
}

/* ------------------------------------------------------ the assignment rules */

/* Tensors of one dtype and rank, one contiguous and one strided. */
static bool same_array_but_layout(const asc__type *a, const asc__type *b) {
  return a->kind == ASC_TY_TENSOR && b->kind == ASC_TY_TENSOR &&
         a->dtype == b->dtype && a->ndim == b->ndim &&
         a->contiguous != b->contiguous;
}

/* The solver's widening: weak values give way to the first strong one;
 * a strong value never changes (a later conflicting assignment is
 * reported by the check pass). */

asc__type *asc__infer_widen(run *r, asc__type *cur, asc__type *nw,
                            int depth) {
  cur = asc__ty_find(cur);
  nw = asc__ty_find(nw);
  if (cur == NULL)
    return nw;
  if (nw == NULL || cur->kind == ASC_TY_ERROR || nw->kind == ASC_TY_ERROR ||
      depth > ASC_MAX_NESTING)
    return cur;
  if (cur->kind == ASC_TY_SCALAR && nw->kind == ASC_TY_SCALAR) {
    if (!cur->weak)
      return cur;
    if (!nw->weak)
      return nw;
    return asc__ty_promote(r->in->c, cur, nw);
  }
  /* A local bound to a view and to a new array (datacol = a[:, 0], then
   * datacol = np.zeros(n)) holds either: the union of the two layouts is
   * strided. */
  if (same_array_but_layout(cur, nw))
    return cur->contiguous ? nw : cur;
  if (cur->kind == ASC_TY_TUPLE && nw->kind == ASC_TY_TUPLE &&
      cur->n == nw->n) {
    asc__type *t = asc__ty_tuple(r->in->c, cur->n, cur->elems);
    for (int32_t i = 0; i < cur->n; i++)
      t->elems[i] =
          asc__infer_widen(r, cur->elems[i], nw->elems[i], depth + 1);
    return asc__ty_equal(t, cur) ? cur : t;
  }
  return cur;
}

bool asc__infer_same(asc__type *a, asc__type *b) {
  a = asc__ty_find(a);
  b = asc__ty_find(b);
  if (a == NULL || b == NULL)
    return a == b;
  if (a->kind == ASC_TY_ERROR || b->kind == ASC_TY_ERROR)
    return a->kind == b->kind;
  return asc__ty_equal(a, b);
}

/* Whether a value of type s may be stored where t is expected.  declared:
 * t comes from an annotation, a parameter, a tensor element or a struct
 * field, and a strong value that promotes to t without changing it
 * converts implicitly. */
bool asc__infer_fits(run *r, asc__type *s, asc__type *t, bool declared,
                     int depth) {
  s = asc__ty_find(s);
  t = asc__ty_find(t);
  if (s == NULL || t == NULL || is_err(s) || is_err(t))
    return true;
  if (depth > ASC_MAX_NESTING)
    return false;
  if (asc__ty_equal(s, t))
    return true;
  if (same_array_but_layout(s, t) && !t->contiguous && !declared)
    return true;
  if (s->kind == ASC_TY_SCALAR && t->kind == ASC_TY_SCALAR) {
    if (s->weak) {
      if (t->weak)
        return asc__infer_same(asc__ty_promote(r->in->c, s, t), t);
      if (asc__dtype_is_float(s->dtype))
        return asc__dtype_is_float(t->dtype);
      return t->dtype != ascBool;
    }
    if (!declared)
      return false;
    if (t->weak)
      t = scalar(r, t->dtype);
    return asc__infer_same(asc__ty_promote(r->in->c, s, t), t);
  }
  if (s->kind == ASC_TY_TUPLE && t->kind == ASC_TY_TUPLE && s->n == t->n) {
    for (int32_t i = 0; i < s->n; i++)
      if (!asc__infer_fits(r, s->elems[i], t->elems[i], declared, depth + 1))
        return false;
    return true;
  }
  return false;
}

/* Whether an integer literal of magnitude mag (negated when neg) is a
 * value of dt. */
static bool literal_fits(uint64_t mag, bool neg, ascDataType dt) {
  int bits;
  if (asc__dtype_is_float(dt) || mag == 0)
    return true;
  bits = asc__dtype_bits(dt);
  if (asc__dtype_is_unsigned(dt))
    return !neg && (bits == 64 || mag >> bits == 0);
  if (!asc__dtype_is_signed(dt))
    return mag <= 1 && !neg;
  return neg ? mag <= (uint64_t)1 << (bits - 1)
             : mag < (uint64_t)1 << (bits - 1);
}

bool asc__infer_int_literal(const asc__ast_expr *e, uint64_t *mag,
                            bool *neg) {
  if (e->kind == ASC_EXPR_INT) {
    *mag = e->u.ival;
    *neg = false;
    return true;
  }
  if (asc__infer_is_neg_int_literal(e)) {
    *mag = e->u.unary.operand->u.ival;
    *neg = true;
    return true;
  }
  return false;
}

bool asc__infer_literal_fits(uint64_t mag, bool neg, ascDataType dt) {
  return literal_fits(mag, neg, dt);
}

/* Is e, a Python int meeting integer type t, a value computed at run time
 * that t may not hold (numpy raises OverflowError for a Python int out of
 * t's bounds)?  int64 holds every such value. */
bool asc__infer_runtime_int(const asc__ast_expr *e, asc__type *t) {
  if (asc__dtype_is_float(t->dtype) || asc__dtype_is_complex(t->dtype) ||
      t->dtype == ascBool || t->dtype == ascInt64)
    return false;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    return e->u.name.sym != NULL && (e->u.name.sym->kind == ASC_SYM_LOCAL ||
                                     e->u.name.sym->kind == ASC_SYM_PARAM);
  case ASC_EXPR_UNARY:
    return !asc__infer_is_neg_int_literal(e);
  case ASC_EXPR_BINARY:
  case ASC_EXPR_CALL:
    return true;
  default:
    return false;
  }
}

/* Gives a weak expression the type of its context, down through the
 * operators that passed the weak type up; an integer literal must be a
 * value of the type it gets, and a Python int computed at run time is
 * checked when it runs (asc__infer_runtime_int). */
void asc__infer_coerce(run *r, asc__ast_expr *e, asc__type *t, int depth) {
  asc__type *et;
  t = asc__ty_find(t);
  if (!r->check || e == NULL || t == NULL || depth > ASC_MAX_NESTING)
    return;
  et = asc__ty_find(e->type);
  if (et == NULL || et->kind != ASC_TY_SCALAR || !et->weak ||
      t->kind != ASC_TY_SCALAR || t->weak)
    return;
  if (asc__dtype_is_float(et->dtype) && !asc__dtype_is_float(t->dtype))
    return;
  if (asc__dtype_is_complex(et->dtype) != asc__dtype_is_complex(t->dtype))
    return;
  /* Integer arithmetic stays integer when its value goes where a float is
   * wanted (out[0] = 1 // z with out a float array): Python and numpy
   * compute the int, raising ZeroDivisionError for a zero divisor, and
   * then convert it; the store or the float operation converts. */
  if (e->kind == ASC_EXPR_BINARY && !asc__dtype_is_float(et->dtype) &&
      asc__dtype_is_float(t->dtype))
    return;
  /* Likewise a run-time int meeting a narrower integer type: computed as
   * Python computes it (in int64), then converted with a range test, so
   * that u8 + (n - 1) raises for n = 300 as numpy does instead of
   * wrapping n in uint8. */
  if (!asc__dtype_is_float(et->dtype) && !asc__dtype_is_complex(et->dtype) &&
      asc__infer_runtime_int(e, t)) {
    e->fit = t;
    return;
  }
  if (e->kind == ASC_EXPR_NAME && e->u.name.sym != NULL &&
      e->u.name.sym->kind == ASC_SYM_CONST && t->dtype != ascBool &&
      !asc__dtype_is_float(et->dtype) && !asc__dtype_is_complex(et->dtype) &&
      !asc__dtype_is_float(t->dtype) && !asc__dtype_is_complex(t->dtype)) {
    /* a module constant is a literal of its value */
    const ascScalar *v = &e->u.name.sym->u.cnst->folded;
    bool neg = !asc__dtype_is_unsigned(v->dtype) && v->value.i < 0;
    uint64_t mag = neg ? 0 - v->value.u : v->value.u;
    if (!literal_fits(mag, neg, t->dtype))
      report(r, e->loc, "integer constant %s = %s%llu does not fit in %s",
             e->u.name.id, neg ? "-" : "", (unsigned long long)mag, tn(r, t));
  }
  /* A variable keeps its own type; the operation converts it. */
  if (e->kind == ASC_EXPR_NAME && e->u.name.sym != NULL &&
      (e->u.name.sym->kind == ASC_SYM_LOCAL ||
       e->u.name.sym->kind == ASC_SYM_PARAM))
    return;
  e->type = t;
  switch (e->kind) {
  case ASC_EXPR_INT:
    if (!literal_fits(e->u.ival, false, t->dtype))
      report(r, e->loc, "integer literal %llu does not fit in %s",
             (unsigned long long)e->u.ival, tn(r, t));
    break;
  case ASC_EXPR_UNARY:
    if (e->u.unary.op == ASC_UN_NEG &&
        e->u.unary.operand->kind == ASC_EXPR_INT) {
      /* -128 fits int8 although 128 does not */
      if (!literal_fits(e->u.unary.operand->u.ival, true, t->dtype))
        report(r, e->loc, "integer literal -%llu does not fit in %s",
               (unsigned long long)e->u.unary.operand->u.ival, tn(r, t));
      e->u.unary.operand->type = t;
      break;
    }
    asc__infer_coerce(r, e->u.unary.operand, t, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    if (e->u.binary.op != ASC_BIN_LSHIFT && e->u.binary.op != ASC_BIN_RSHIFT) {
      asc__infer_coerce(r, e->u.binary.lhs, t, depth + 1);
      asc__infer_coerce(r, e->u.binary.rhs, t, depth + 1);
    }
    break;
  case ASC_EXPR_BOOLOP:
    asc__infer_coerce(r, e->u.boolop.lhs, t, depth + 1);
    asc__infer_coerce(r, e->u.boolop.rhs, t, depth + 1);
    break;
  case ASC_EXPR_IFEXP:
    asc__infer_coerce(r, e->u.ifexp.then, t, depth + 1);
    asc__infer_coerce(r, e->u.ifexp.orelse, t, depth + 1);
    break;
  case ASC_EXPR_CALL:
    /* cmath computes in double whatever the result becomes */
    if (e->u.call.builtin != NULL && e->u.call.builtin->kind == ASC_BK_FUNC &&
        e->u.call.builtin->id != ASC_BI_LEN &&
        !asc__expr_via_cmath(e->u.call.func))
      for (int i = 0; i < e->u.call.nrargs; i++)
        asc__infer_coerce(r, e->u.call.rargs[i], t, depth + 1);
    break;
  default:
    break;
  }
}

/* Records a value of type s stored into the cell of sym. */
asc__type *asc__infer_assign_cell(run *r, asc__sym *sym, asc__loc loc,
                                  asc__type *s, asc__ast_expr *value) {
  cell *k = asc__infer_cell(r, sym);
  asc__type *held = asc__ty_find(k->t), *nw = asc__ty_find(s);
  if (sym->prev != NULL && !sym->split && held != NULL && nw != NULL &&
      (held->kind == ASC_TY_TENSOR || nw->kind == ASC_TY_TENSOR) &&
      !is_err(held) && !is_err(nw) && !asc__ty_equal(held, nw)) {
    /* a rebinding of the body to an array of another type, or from or
     * to an array: from here on a variable of its own */
    sym->split = true;
    r->changed = true;
    k = asc__infer_cell(r, sym);
  }
  if (!r->check) {
    if (!k->has_first) {
      k->has_first = true;
      k->first_loc = loc;
    }
    if (!k->declared) {
      asc__type *nt = asc__infer_widen(r, k->t, s, 0);
      if (!asc__infer_same(nt, k->t)) {
        k->t = nt;
        k->origin_loc = loc;
        r->changed = true;
      }
    }
    return k->t;
  }
  if (s != NULL && k->t != NULL &&
      !asc__infer_fits(r, s, k->t, k->declared, 0)) {
    report(r, value ? value->loc : loc,
           "cannot assign %s to '%s', which has type %s", tn(r, s), sym->name,
           tn(r, k->t));
    if (sym->kind == ASC_SYM_PARAM)
      note(r, k->origin_loc, "'%s' is a parameter of type %s", sym->name,
           tn(r, k->t));
    else if (k->declared)
      note(r, k->origin_loc, "'%s' declared here", sym->name);
    else if (k->origin_loc.line == k->first_loc.line &&
             k->origin_loc.col == k->first_loc.col)
      note(r, k->origin_loc, "'%s' first assigned here", sym->name);
    else
      note(r, k->origin_loc, "'%s' gets type %s here", sym->name,
           tn(r, k->t));
  } else if (value != NULL) {
    asc__infer_coerce(r, value, k->t, 0);
  }
  return k->t;
}

/* -------------------------------------------------------- annotations */


/* The type an annotation denotes; *constexpr set for ConstExpr[...]. */
asc__type *asc__infer_annotation_type(run *r, asc__ast_expr *a,
                                      bool *constexpr) {
  const asc__builtin *b = asc__expr_builtin(a);
  if (constexpr)
    *constexpr = false;
  if (a == NULL)
    return NULL;
  if (b != NULL) {
    if (b->kind == ASC_BK_DTYPE)
      return scalar(r, asc__builtin_dtype(b));
    if (b->id == ASC_BI_FLOAT)
      return weak(r, ascFloat64);
    if (b->id == ASC_BI_INT)
      return weak(r, ascInt64);
    if (b->id == ASC_BI_BOOL)
      return scalar(r, ascBool);
    if (b->id == ASC_BI_CONSTEXPR) {
      if (constexpr)
        *constexpr = true;
      return NULL; /* ConstExpr without a type: from the signature */
    }
    if (b->id == ASC_BI_TENSOR)
      return NULL; /* an array of any dtype and rank: the argument's */
  }
  if (a->kind == ASC_EXPR_NONE)
    return asc__ty_none(r->in->c);
  if (a->kind == ASC_EXPR_NAME && a->u.name.sym != NULL &&
      a->u.name.sym->kind == ASC_SYM_CLASS)
    return asc__infer_struct_type(r, a->u.name.sym->u.cls);
  if (a->kind == ASC_EXPR_SUBSCRIPT) {
    const asc__builtin *head = asc__expr_builtin(a->u.sub.value);
    asc__ast_expr *ix = a->u.sub.index;
    if (head != NULL && head->id == ASC_BI_CONSTEXPR) {
      asc__type *t = asc__infer_annotation_type(r, ix, NULL);
      if (constexpr)
        *constexpr = true;
      if (t != NULL && !is_err(t) && t->kind != ASC_TY_SCALAR) {
        report(r, ix->loc, "ConstExpr takes a scalar type, not %s", tn(r, t));
        return err(r);
      }
      return t;
    }
    if (head != NULL && head->id == ASC_BI_TENSOR) {
      asc__type *dt;
      asc__ast_expr *nd;
      if (ix->kind != ASC_EXPR_TUPLE || ix->u.tuple.n != 2) {
        report(r, ix->loc, "expected Tensor[dtype, ndim]");
        return err(r);
      }
      dt = asc__infer_annotation_type(r, ix->u.tuple.elts[0], NULL);
      nd = ix->u.tuple.elts[1];
      if (dt == NULL || dt->kind != ASC_TY_SCALAR || dt->weak) {
        report(r, ix->u.tuple.elts[0]->loc,
               "a tensor's element type must be a dtype such as asc.float32");
        return err(r);
      }
      if (nd->kind != ASC_EXPR_INT || nd->u.ival > ASC_MAX_DIMS) {
        report(r, nd->loc, "a tensor's ndim must be an integer from 0 to %d",
               ASC_MAX_DIMS);
        return err(r);
      }
      return asc__ty_tensor(r->in->c, dt->dtype, (int32_t)nd->u.ival, true);
    }
  }
  report(r, a->loc, "not a type annotation the kernel language knows");
  return err(r);
}

asc__type *asc__infer_struct_type(run *r, asc__ast_class *cls) {
  asc__field *fields;
  /* annotation_type is called for the fields below */
  if (cls->type != NULL)
    return cls->type;
  fields = asc__arena_alloc(r->in->c,
                            sizeof *fields * (size_t)(cls->nfields + 1));
  for (int i = 0; i < cls->nfields; i++) {
    asc__type *t =
        asc__infer_annotation_type(r, cls->fields[i].annotation, NULL);
    fields[i].name = cls->fields[i].name;
    if (t != NULL && !is_err(t) && t->kind != ASC_TY_SCALAR) {
      report(r, cls->fields[i].loc, "field '%s' of a struct must be a scalar",
             cls->fields[i].name);
      t = err(r);
    }
    fields[i].type = t ? t : err(r);
  }
  cls->type = asc__ty_struct(r->in->c, cls->name, cls->nfields, fields);
  return cls->type;
}

/* ------------------------------------------------------------ functions */

/* Writes the solved types of every frame of the run into the tree. */
static void finish(run *r) {
  asc__cctx *c = r->in->c;
  for (int32_t i = 0; i < r->ntyped; i++) {
    asc__ast_expr *e = r->typed[i];
    asc__type *t = asc__ty_concrete(c, e->type);
    e->type = t ? t : asc__ty_error(c);
  }
  for (frame *f = r->frames; f != NULL; f = f->next) {
    asc__ast_func *fn = f->fn;
    asc__type **ps = asc__arena_alloc(c, sizeof *ps *
                                             (size_t)(fn->nparams + 1));
    asc__type *ret;
    for (int i = 0; i < fn->nlocals; i++) {
      asc__sym *s = fn->locals[i];
      asc__type *t;
      if (s->owner != fn)
        continue;
      if (s->kind == ASC_SYM_EXC_VAR) {
        s->type = asc__ty_str(c);
        continue;
      }
      if (s->kind != ASC_SYM_PARAM && s->kind != ASC_SYM_LOCAL)
        continue;
      t = asc__ty_concrete(c, asc__infer_cell(r, s)->t);
      if (t == NULL) {
        if (asc__infer_cell(r, s)->has_first || s->kind == ASC_SYM_PARAM)
          report(r, s->loc, "cannot infer the type of '%s'", s->name);
        t = asc__ty_error(c);
      }
      s->type = t;
    }
    for (int i = 0; i < fn->nparams; i++)
      ps[i] = fn->params[i].sym && fn->params[i].sym->type
                  ? fn->params[i].sym->type
                  : asc__ty_error(c);
    ret = f->ret.t ? asc__ty_concrete(c, f->ret.t) : asc__ty_none(c);
    fn->type = asc__ty_func(c, fn->name, fn->nparams, ps,
                            ret ? ret : asc__ty_error(c));
  }
}

/* Seeds the parameter cells of fn (a helper instance) from argument
 * types; annotated parameters keep their annotation, and the argument must
 * fit it. */
static void seed_helper(run *r, frame *f, asc__type *const *args,
                        int32_t nargs) {
  asc__ast_func *fn = f->fn;
  for (int i = 0; i < fn->nparams && i < nargs; i++) {
    asc__ast_param *p = &fn->params[i];
    cell *k = asc__infer_cell(r, p->sym);
    k->origin_loc = p->loc;
    k->first_loc = p->loc;
    k->has_first = true;
    k->declared = true;
    if (p->annotation != NULL) {
      k->t = asc__infer_annotation_type(r, p->annotation, NULL);
      if (k->t == NULL || is_err(k->t))
        k->t = args[i];
      else if (k->t->kind == ASC_TY_TENSOR && is_kind(args[i], ASC_TY_TENSOR))
        /* an annotation names dtype and ndim; the layout is the argument's */
        k->t->contiguous = asc__ty_find(args[i])->contiguous;
    } else {
      k->t = args[i];
    }
  }
  if (fn->returns != NULL) {
    f->ret.t = asc__infer_annotation_type(r, fn->returns, NULL);
    f->ret.declared = true;
    f->ret.origin_loc = fn->returns->loc;
  }
}

/* Seeds the kernel's parameters from the signature and annotations. */
static bool seed_kernel(run *r, frame *f) {
  asc__ast_func *fn = f->fn;
  const asc__sig *sig = r->in->sig;
  bool ok = true;
  if (sig->nparams != fn->nparams) {
    report(r, fn->loc,
           "kernel '%s' takes %d parameters but the signature gives %d",
           fn->name, fn->nparams, (int)sig->nparams);
    return false;
  }
  for (int i = 0; i < fn->nparams; i++) {
    asc__ast_param *p = &fn->params[i];
    const asc__sig_param *sp = &sig->params[i];
    cell *k = asc__infer_cell(r, p->sym);
    asc__type *st = asc__sig_param_type(r->in->c, sp), *at = NULL;
    bool cx = false;
    k->origin_loc = p->loc;
    k->first_loc = p->loc;
    k->has_first = true;
    k->declared = true;
    if (p->annotation != NULL)
      at = asc__infer_annotation_type(r, p->annotation, &cx);
    if (at != NULL && is_err(at)) {
      k->t = at;
      ok = false;
      continue;
    }
    if (at == NULL) {
      k->t = st;
      if (!sp->is_tensor && asc__expr_builtin(p->annotation) != NULL &&
          asc__expr_builtin(p->annotation)->id == ASC_BI_TENSOR) {
        report(r, p->loc,
               "parameter '%s' is annotated asc.Tensor but the signature "
               "gives %s",
               p->name, py_name(r, st));
        ok = false;
      }
      if (cx && !sp->is_constexpr) {
        report(r, p->loc,
               "ConstExpr parameter '%s' needs a value in the signature "
               "(e.g. i64=16)",
               p->name);
        ok = false;
      }
      continue;
    }
    if (at->kind == ASC_TY_TENSOR) {
      if (!sp->is_tensor || sp->dtype != at->dtype || sp->ndim != at->ndim) {
        report(r, p->loc,
               "parameter '%s' is annotated %s but the signature gives %s",
               p->name, tn(r, at), tn(r, st));
        ok = false;
      }
      at->contiguous = sp->is_tensor ? sp->contiguous : true;
      k->t = at;
      continue;
    }
    /* scalars: the annotation decides; the signature must agree */
    if (sp->is_tensor || sp->dtype != at->dtype) {
      report(r, p->loc,
             "parameter '%s' is annotated %s but the signature gives %s",
             p->name, py_name(r, at), py_name(r, st));
      ok = false;
    }
    if (cx && !sp->is_constexpr) {
      report(r, p->loc,
             "ConstExpr parameter '%s' needs a value in the signature "
             "(e.g. i64=16)",
             p->name);
      ok = false;
    }
    k->t = at;
  }
  return ok;
}

/* Types one function instance: the kernel (self NULL) or a helper.
 * Returns the solved return type (NULL: unknown yet). */
static asc__type *run_function(infer *in, run *up, asc__ast_func *fn,
                               inst *self, asc__type *const *args,
                               int32_t nargs, bool check) {
  run r;
  frame *f;
  int iter;
  memset(&r, 0, sizeof r);
  r.in = in;
  r.fn = fn;
  r.up = up;
  f = asc__infer_frame_for(&r, fn);
  r.cur = f;
  if (self == NULL) {
    r.check = true; /* signature errors are reported once, now */
    if (!seed_kernel(&r, f))
      return NULL;
    r.check = false;
  } else {
    r.check = check; /* annotation errors are reported by the check run */
    seed_helper(&r, f, args, nargs);
    r.check = false;
  }
  for (iter = 0; iter < MAX_SOLVE_ITERS; iter++) {
    r.changed = false;
    asc__infer_block(&r, &fn->body);
    if (!r.changed)
      break;
  }
  if (iter == MAX_SOLVE_ITERS) {
    asc__diag_error(in->c, fn->loc,
                    "type inference of '%s' did not settle (internal limit)",
                    fn->name);
    return NULL;
  }
  if (!check)
    return f->ret.t ? f->ret.t : asc__ty_none(in->c);
  r.check = true;
  for (frame *g = r.frames; g != NULL; g = g->next)
    g->ret.has_first = false;
  asc__infer_block(&r, &fn->body);
  finish(&r);
  return f->ret.t ? f->ret.t : asc__ty_none(in->c);
}

static bool taken(infer *in, const asc__ast_func *fn) {
  for (typed_fn *t = in->taken; t != NULL; t = t->next)
    if (t->fn == fn)
      return true;
  return false;
}

inst *asc__infer_instantiate(run *r, asc__ast_func *fn, asc__type **args,
                             int32_t nargs, asc__loc loc) {
  infer *in = r->in;
  inst *it;
  for (it = in->insts; it != NULL; it = it->all_next) {
    int32_t i;
    if (it->pub.orig != fn || it->nargs != nargs)
      continue;
    for (i = 0; i < nargs; i++)
      if (!asc__infer_same(it->args[i], args[i]))
        break;
    if (i == nargs)
      break;
  }
  if (it == NULL) {
    it = asc__arena_alloc(in->c, sizeof *it);
    it->pub.orig = fn;
    it->pub.fn = fn;
    it->nargs = nargs;
    it->args = asc__arena_alloc(in->c, sizeof *it->args * (size_t)(nargs + 1));
    for (int32_t i = 0; i < nargs; i++)
      it->args[i] = args[i];
    it->pub.args = it->args;
    it->pub.nargs = nargs;
    it->all_next = in->insts;
    in->insts = it;
  }
  if (it->busy) {
    report(r, loc, "'%s' calls itself; recursion is not supported",
           fn->name);
    return NULL;
  }
  if (in->nest >= MAX_HELPER_NEST) {
    report(r, loc, "helpers nested more than %d calls deep", MAX_HELPER_NEST);
    return NULL;
  }
  if (it->ret == NULL || (r->check && !it->checked)) {
    bool check = r->check;
    it->busy = true;
    in->nest++;
    if (check) {
      /* The first checked instance of a helper is typed in place, the
       * others on a copy. */
      if (taken(in, fn)) {
        it->pub.fn = asc__ast_clone_func(in->c, fn);
      } else {
        typed_fn *tf = asc__arena_alloc(in->c, sizeof *tf);
        tf->fn = fn;
        tf->next = in->taken;
        in->taken = tf;
      }
    }
    it->ret = run_function(in, r, it->pub.fn, it, args, nargs, check);
    in->nest--;
    it->busy = false;
    if (check) {
      asc__tinst **tail = &in->out->helpers;
      it->checked = true;
      it->pub.type = it->pub.fn->type;
      while (*tail != NULL)
        tail = &(*tail)->next;
      *tail = &it->pub;
      in->out->nhelpers++;
    }
  }
  return it;
}

asc__typed *asc__infer_kernel(asc__cctx *c, asc__ast_module *m,
                              asc__ast_func *kernel, const asc__sig *sig) {
  infer in;
  int errors = c->nerrors;
  c->phase = "infer";
  memset(&in, 0, sizeof in);
  in.c = c;
  in.mod = m;
  in.sig = sig;
  in.out = asc__arena_alloc(c, sizeof *in.out);
  in.out->kernel = kernel;
  in.out->sig = sig;
  /* Slots may hold types of an earlier specialisation, from an arena
   * that is gone. */
  asc__ast_clear_types(kernel);
  if (m != NULL) {
    for (int i = 0; i < m->nclasses; i++)
      m->classes[i]->type = NULL;
    for (int i = 0; i < m->nfuncs; i++)
      asc__ast_clear_types(m->funcs[i]);
  }
  if (sig->name != NULL && strcmp(sig->name, kernel->name) != 0) {
    asc__diag_error(c, kernel->loc,
                    "the signature is for '%s', not for kernel '%s'",
                    sig->name, kernel->name);
    return NULL;
  }
  /* Solve (quietly) then check: one run does both for the kernel. */
  in.out->ret = run_function(&in, NULL, kernel, NULL, NULL, 0, true);
  return c->nerrors > errors ? NULL : in.out;
}

asc__tinst *asc__typed_callee(const asc__typed *t, const asc__ast_expr *call) {
  for (int32_t i = 0; t != NULL && i < t->ncalls; i++)
    if (t->calls[i].call == call)
      return t->calls[i].inst;
  return NULL;
}
