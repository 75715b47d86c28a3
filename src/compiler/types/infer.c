/*
 * Type inference (infer.h explains the method, docs/types.md the rules).
 *
 *   asc__infer_kernel
 *     run_function(kernel)          one run per function instance
 *       solve: walk the body until no cell widens
 *       check: walk once more, report, write the type slots
 *       helper calls -> asc__infer_instantiate(helper, argument types)
 *                       -> a nested run
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

#define MAX_SOLVE_ITERS 64
#define MAX_HELPER_NEST 32

static asc__type *run_function(infer *in, asc__ast_func *fn, inst *self,
                               asc__type *const *args, int32_t nargs,
                               bool check);

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

static cell *cell_of(run *r, asc__sym *s) {
  int i;
  ASC_CHECK(r->in->c, s != NULL && s->owner != NULL);
  i = local_index(s);
  ASC_CHECK(r->in->c, i >= 0);
  return &asc__infer_frame_for(r, s->owner)->cells[i];
}

/* ------------------------------------------------------ the assignment rules */

/* The solver's widening: weak values give way to the first strong one;
 * a strong value never changes (a later conflicting assignment is
 * reported by the check pass). */
static asc__type *widen(run *r, asc__type *cur, asc__type *nw, int depth) {
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
  if (cur->kind == ASC_TY_TUPLE && nw->kind == ASC_TY_TUPLE &&
      cur->n == nw->n) {
    asc__type *t = asc__ty_tuple(r->in->c, cur->n, cur->elems);
    for (int32_t i = 0; i < cur->n; i++)
      t->elems[i] = widen(r, cur->elems[i], nw->elems[i], depth + 1);
    return asc__ty_equal(t, cur) ? cur : t;
  }
  return cur;
}

static bool same(asc__type *a, asc__type *b) {
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
  if (s->kind == ASC_TY_SCALAR && t->kind == ASC_TY_SCALAR) {
    if (s->weak) {
      if (t->weak)
        return same(asc__ty_promote(r->in->c, s, t), t);
      if (asc__dtype_is_float(s->dtype))
        return asc__dtype_is_float(t->dtype);
      return t->dtype != ascBool;
    }
    if (!declared)
      return false;
    if (t->weak)
      t = scalar(r, t->dtype);
    return same(asc__ty_promote(r->in->c, s, t), t);
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
static bool runtime_int(const asc__ast_expr *e, asc__type *t) {
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
 * checked when it runs (runtime_int). */
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
      runtime_int(e, t)) {
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
  cell *k = cell_of(r, sym);
  if (!r->check) {
    if (!k->has_first) {
      k->has_first = true;
      k->first_loc = loc;
    }
    if (!k->declared) {
      asc__type *nt = widen(r, k->t, s, 0);
      if (!same(nt, k->t)) {
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

/* ------------------------------------------------------------ operators */

bool asc__infer_is_neg_int_literal(const asc__ast_expr *e) {
  return e != NULL && e->kind == ASC_EXPR_UNARY &&
         e->u.unary.op == ASC_UN_NEG &&
         e->u.unary.operand->kind == ASC_EXPR_INT &&
         e->u.unary.operand->u.ival != 0;
}

static const char *op_name(asc__binop op) { return asc__binop_str(op); }

/* a @ b, np.dot(a, b), np.matmul(a, b) of 1-D and 2-D arrays: numpy's
 * shapes (a vector times a vector is a scalar) in the promoted dtype. */
asc__type *asc__infer_matmul(run *r, asc__type *a, asc__type *b,
                             asc__ast_expr *e) {
  asc__type *p;
  int nd;
  if (a->kind != ASC_TY_TENSOR || b->kind != ASC_TY_TENSOR ||
      a->ndim < 1 || a->ndim > 2 || b->ndim < 1 || b->ndim > 2) {
    report(r, e->loc, "matrix products in kernels take 1-D and 2-D arrays, "
           "not %s and %s", tn(r, a), tn(r, b));
    return err(r);
  }
  p = asc__ty_find(asc__infer_arith_promote(r, scalar(r, a->dtype),
                                            scalar(r, b->dtype)));
  nd = (a->ndim == 2) + (b->ndim == 2);
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
static asc__type *binop_type(run *r, asc__binop op, asc__type *a,
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
      el = binop_type(r, op, ea, eb, e, true);
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

static bool check_truth(run *r, asc__type *t, asc__ast_expr *e) {
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
static asc__type *fancy_index(run *r, asc__type *vt, asc__ast_expr *ix) {
  asc__type *it;
  int32_t nd;
  if (ix->kind == ASC_EXPR_TUPLE || ix->kind == ASC_EXPR_SLICE ||
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
    return asc__ty_tensor(r->in->c, vt->dtype, 1, false);
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
  return asc__ty_tensor(r->in->c, vt->dtype, nd, false);
}

/* The type of e where an array is wanted (subscripted, or assigned
 * through): a 0-d array parameter is its array there (out[()] = v,
 * out[...] = v), although its name elsewhere reads as its one element. */
static asc__type *array_value(run *r, asc__ast_expr *e) {
  asc__type *t = asc__infer_expr(r, e), *ct;
  if (e->kind != ASC_EXPR_NAME || e->u.name.sym == NULL ||
      e->u.name.sym->kind != ASC_SYM_PARAM || !is_kind(t, ASC_TY_SCALAR))
    return t;
  ct = asc__ty_find(cell_of(r, e->u.name.sym)->t);
  if (ct == NULL || ct->kind != ASC_TY_TENSOR || ct->ndim != 0)
    return t;
  if (r->check)
    e->type = ct;
  return ct;
}

static asc__type *subscript(run *r, asc__ast_expr *e) {
  asc__type *vt = array_value(r, e->u.sub.value);
  asc__ast_expr *ix = e->u.sub.index;
  PROPAGATE(vt);
  vt = asc__ty_find(vt);
  if (vt->kind == ASC_TY_TENSOR) {
    asc__type *ft = fancy_index(r, vt, ix);
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
    for (int32_t i = 1; i < vt->n; i++)
      if (!same(vt->elems[i], vt->elems[0])) {
        report(r, ix->loc,
               "a %s can only be indexed with a constant", tn(r, vt));
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
    if (strcmp(a, "dtype") == 0) {
      report(r, e->u.attr.attr_loc, "kernels use x.dtype only as a dtype "
             "argument (np.zeros(n, dtype=x.dtype), y.astype(x.dtype)), "
             "not as a value: the dtype of %s is known when the kernel is "
             "compiled", tn(r, vt));
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
    asc__type *t = asc__ty_find(cell_of(r, s)->t);
    if (t != NULL && t->kind == ASC_TY_TENSOR && t->ndim == 0)
      return scalar(r, t->dtype);
    return cell_of(r, s)->t;
  }
  case ASC_SYM_LOCAL:
    return cell_of(r, s)->t;
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
            ? !literal_fits(mag, neg, p->dtype)
            : runtime_int(x, p))
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
      check_truth(r, a, e->u.unary.operand);
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
    t = binop_type(r, e->u.binary.op, a, b, e, false);
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
    if (!check_truth(r, a, e->u.boolop.lhs) ||
        !check_truth(r, b, e->u.boolop.rhs))
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
      check_truth(r, c, e->u.ifexp.cond);
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
    asc__type *tt = array_value(r, target->u.sub.value), *elem;
    if (tt == NULL || is_err(tt))
      return;
    tt = asc__ty_find(tt);
    if (tt->kind != ASC_TY_TENSOR) {
      report(r, target->loc, "cannot assign to an element of %s",
             tn(r, tt));
      return;
    }
    if (asc__infer_index_is_view(target->u.sub.index, tt->ndim) ||
        fancy_index(r, tt, target->u.sub.index) != NULL) {
      array_store(r, target, asc__infer_expr(r, target), t, value, loc);
      return;
    }
    asc__infer_check_tensor_index(r, tt, target->u.sub.index, target->loc);
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
    return cell_of(r, s)->t;
  }
  if (target->kind == ASC_EXPR_SUBSCRIPT) {
    asc__type *tt = asc__ty_find(array_value(r, target->u.sub.value));
    if (tt != NULL && tt->kind == ASC_TY_TENSOR &&
        (asc__infer_index_is_view(target->u.sub.index, tt->ndim) ||
         fancy_index(r, tt, target->u.sub.index) != NULL))
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
      asc__type *nt = widen(r, k->t, t, 0);
      if (!same(nt, k->t)) {
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

static void nested_def(run *r, asc__ast_func *fn) {
  frame *saved = r->cur;
  frame *f = asc__infer_frame_for(r, fn);
  for (int i = 0; i < fn->nparams; i++) {
    asc__ast_param *p = &fn->params[i];
    if (p->annotation != NULL) {
      cell *k = cell_of(r, p->sym);
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
      cell *k = cell_of(r, fn->params[i].sym);
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
    t = binop_type(r, s->u.aug.op, cur, v, &fake, false);
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
      cell *k = cell_of(r, tg->u.name.sym);
      if (!k->declared && !r->check) {
        k->t = at;
        k->declared = true;
        k->origin_loc = s->loc;
        r->changed = true;
      } else if (r->check && at != NULL && k->t != NULL && !same(at, k->t)) {
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
    check_truth(r, c, s->u.if_.cond);
    asc__infer_block(r, &s->u.if_.body);
    asc__infer_block(r, &s->u.if_.orelse);
    return;
  }
  case ASC_STMT_FOR:
    for_stmt(r, s);
    return;
  case ASC_STMT_WHILE: {
    asc__type *c = asc__infer_expr(r, s->u.while_.cond);
    check_truth(r, c, s->u.while_.cond);
    asc__infer_block(r, &s->u.while_.body);
    return;
  }
  case ASC_STMT_RETURN:
    return_stmt(r, s);
    return;
  case ASC_STMT_ASSERT: {
    asc__type *c = asc__infer_expr(r, s->u.assert_.test);
    check_truth(r, c, s->u.assert_.test);
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
      t = asc__ty_concrete(c, f->cells[i].t);
      if (t == NULL) {
        if (f->cells[i].has_first || s->kind == ASC_SYM_PARAM)
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
    cell *k = cell_of(r, p->sym);
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
    cell *k = cell_of(r, p->sym);
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
static asc__type *run_function(infer *in, asc__ast_func *fn, inst *self,
                               asc__type *const *args, int32_t nargs,
                               bool check) {
  run r;
  frame *f;
  int iter;
  memset(&r, 0, sizeof r);
  r.in = in;
  r.fn = fn;
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
      if (!same(it->args[i], args[i]))
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
    it->ret = run_function(in, it->pub.fn, it, args, nargs, check);
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
  in.out->ret = run_function(&in, kernel, NULL, NULL, 0, true);
  return c->nerrors > errors ? NULL : in.out;
}

asc__tinst *asc__typed_callee(const asc__typed *t, const asc__ast_expr *call) {
  for (int32_t i = 0; t != NULL && i < t->ncalls; i++)
    if (t->calls[i].call == call)
      return t->calls[i].inst;
  return NULL;
}
