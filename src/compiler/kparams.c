/*
 * Kernel parameter tables from the resolved tree (kparams.h).
 *
 * Whether an unannotated parameter is a tensor is decided from its uses:
 * a walk over the kernel's body, its nested functions and lambdas, and,
 * through calls, the helpers it is passed to.  The walk is bounded (the
 * parser bounds nesting; helper recursion is rejected by the resolver, and
 * a depth limit guards the helper chain anyway).
 */
#include "kparams.h"

#include <string.h>

#include "builtins.h"
#include "frontend.h"

#define MAX_HELPER_DEPTH 32

static const asc__builtin *named_builtin(const asc__ast_expr *e) {
  if (e == NULL)
    return NULL;
  if (e->kind == ASC_EXPR_ATTR)
    return e->u.attr.builtin;
  if (e->kind == ASC_EXPR_NAME && e->u.name.sym != NULL &&
      e->u.name.sym->kind == ASC_SYM_BUILTIN)
    return e->u.name.sym->u.builtin;
  return NULL;
}

static ascDataType dtype_of(const asc__builtin *b) {
  return b != NULL ? asc__builtin_dtype(b) : ascDataTypeCount;
}

static bool is_sym(const asc__ast_expr *e, const asc__sym *s) {
  return e != NULL && e->kind == ASC_EXPR_NAME && e->u.name.sym == s;
}

static bool func_uses_as_tensor(const asc__ast_func *fn, const asc__sym *s,
                                int depth);
static bool block_uses(const asc__ast_block *b, const asc__sym *s, int depth);

/* Whether expression e uses s as a tensor. */
static bool expr_uses(const asc__ast_expr *e, const asc__sym *s, int depth) {
  int i;

  if (e == NULL)
    return false;
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (i = 0; i < e->u.tuple.n; i++)
      if (expr_uses(e->u.tuple.elts[i], s, depth))
        return true;
    return false;
  case ASC_EXPR_ATTR:
    if (is_sym(e->u.attr.value, s) && e->u.attr.builtin == NULL &&
        (strcmp(e->u.attr.attr, "shape") == 0 ||
         strcmp(e->u.attr.attr, "ndim") == 0 ||
         strcmp(e->u.attr.attr, "strides") == 0 ||
         strcmp(e->u.attr.attr, "size") == 0 ||
         strcmp(e->u.attr.attr, "dtype") == 0))
      return true;
    return expr_uses(e->u.attr.value, s, depth);
  case ASC_EXPR_SUBSCRIPT:
    return is_sym(e->u.sub.value, s) || expr_uses(e->u.sub.value, s, depth) ||
           expr_uses(e->u.sub.index, s, depth);
  case ASC_EXPR_SLICE:
    return expr_uses(e->u.slice.lower, s, depth) ||
           expr_uses(e->u.slice.upper, s, depth) ||
           expr_uses(e->u.slice.step, s, depth);
  case ASC_EXPR_CALL: {
    const asc__ast_func *callee = e->u.call.callee;
    if (expr_uses(e->u.call.func, s, depth))
      return true;
    for (i = 0; i < e->u.call.nargs; i++)
      if (expr_uses(e->u.call.args[i], s, depth))
        return true;
    for (i = 0; i < e->u.call.nkws; i++)
      if (expr_uses(e->u.call.kws[i].value, s, depth))
        return true;
    /* The array argument of atomics and len() is a tensor. */
    if (e->u.call.builtin != NULL) {
      const asc__ast_expr *a0 =
          e->u.call.rargs != NULL && e->u.call.nrargs > 0 ? e->u.call.rargs[0]
          : e->u.call.nargs > 0                          ? e->u.call.args[0]
                                                         : NULL;
      switch (e->u.call.builtin->id) {
      case ASC_BI_ATOMIC_ADD:
      case ASC_BI_ATOMIC_SUB:
      case ASC_BI_ATOMIC_MIN:
      case ASC_BI_ATOMIC_MAX:
      case ASC_BI_ATOMIC_CAS:
      case ASC_BI_ATOMIC_EXCHANGE:
      case ASC_BI_LEN:
        if (is_sym(a0, s))
          return true;
        break;
      default:
        break;
      }
    }
    /* Passed to a helper: a tensor if the helper uses its parameter as
     * one. */
    if (callee != NULL && e->u.call.rargs != NULL && depth < MAX_HELPER_DEPTH)
      for (i = 0; i < e->u.call.nrargs && i < callee->nparams; i++)
        if (is_sym(e->u.call.rargs[i], s) && callee->params[i].sym != NULL &&
            func_uses_as_tensor(callee, callee->params[i].sym, depth + 1))
          return true;
    return false;
  }
  case ASC_EXPR_UNARY:
    return expr_uses(e->u.unary.operand, s, depth);
  case ASC_EXPR_BINARY:
    return expr_uses(e->u.binary.lhs, s, depth) ||
           expr_uses(e->u.binary.rhs, s, depth);
  case ASC_EXPR_BOOLOP:
    return expr_uses(e->u.boolop.lhs, s, depth) ||
           expr_uses(e->u.boolop.rhs, s, depth);
  case ASC_EXPR_COMPARE:
    for (i = 0; i <= e->u.cmp.n; i++)
      if (expr_uses(e->u.cmp.operands[i], s, depth))
        return true;
    return false;
  case ASC_EXPR_IFEXP:
    return expr_uses(e->u.ifexp.cond, s, depth) ||
           expr_uses(e->u.ifexp.then, s, depth) ||
           expr_uses(e->u.ifexp.orelse, s, depth);
  case ASC_EXPR_LAMBDA:
    return func_uses_as_tensor(e->u.lambda.fn, s, depth);
  default:
    return false;
  }
}

static bool stmt_uses(const asc__ast_stmt *st, const asc__sym *s, int depth) {
  int i;

  switch (st->kind) {
  case ASC_STMT_EXPR:
    return expr_uses(st->u.expr.value, s, depth);
  case ASC_STMT_ASSIGN:
    for (i = 0; i < st->u.assign.ntargets; i++)
      if (expr_uses(st->u.assign.targets[i], s, depth))
        return true;
    return expr_uses(st->u.assign.value, s, depth);
  case ASC_STMT_AUGASSIGN:
    return expr_uses(st->u.aug.target, s, depth) ||
           expr_uses(st->u.aug.value, s, depth);
  case ASC_STMT_ANNASSIGN:
    return expr_uses(st->u.ann.target, s, depth) ||
           expr_uses(st->u.ann.value, s, depth);
  case ASC_STMT_IF:
    return expr_uses(st->u.if_.cond, s, depth) ||
           block_uses(&st->u.if_.body, s, depth) ||
           block_uses(&st->u.if_.orelse, s, depth);
  case ASC_STMT_FOR:
    return expr_uses(st->u.for_.iter, s, depth) ||
           block_uses(&st->u.for_.body, s, depth);
  case ASC_STMT_WHILE:
    return expr_uses(st->u.while_.cond, s, depth) ||
           block_uses(&st->u.while_.body, s, depth);
  case ASC_STMT_RETURN:
    return expr_uses(st->u.ret.value, s, depth);
  case ASC_STMT_ASSERT:
    return expr_uses(st->u.assert_.test, s, depth) ||
           expr_uses(st->u.assert_.msg, s, depth);
  case ASC_STMT_RAISE:
    return expr_uses(st->u.raise.exc, s, depth);
  case ASC_STMT_TRY:
    if (block_uses(&st->u.try_.body, s, depth) ||
        block_uses(&st->u.try_.orelse, s, depth) ||
        block_uses(&st->u.try_.finalbody, s, depth))
      return true;
    for (i = 0; i < st->u.try_.nhandlers; i++)
      if (block_uses(&st->u.try_.handlers[i].body, s, depth))
        return true;
    return false;
  case ASC_STMT_WITH:
    return expr_uses(st->u.with.ctx, s, depth) ||
           block_uses(&st->u.with.body, s, depth);
  case ASC_STMT_FUNCDEF:
    return func_uses_as_tensor(st->u.funcdef.fn, s, depth);
  default:
    return false;
  }
}

static bool block_uses(const asc__ast_block *b, const asc__sym *s, int depth) {
  int i;
  for (i = 0; i < b->n; i++)
    if (stmt_uses(b->stmts[i], s, depth))
      return true;
  return false;
}

static bool func_uses_as_tensor(const asc__ast_func *fn, const asc__sym *s,
                                int depth) {
  return fn != NULL && block_uses(&fn->body, s, depth);
}

/* Classifies one annotated parameter; false when the annotation is not
 * one of the forms kparams.h lists. */
static bool from_annotation(const asc__ast_expr *a, ascKernelParamInfo *pi) {
  const asc__builtin *b = named_builtin(a);

  if (b != NULL) {
    ascDataType dt = dtype_of(b);
    if (dt != ascDataTypeCount) {
      pi->dtype = dt;
      return true;
    }
    switch (b->id) {
    case ASC_BI_INT: pi->dtype = ascInt64; return true;
    case ASC_BI_FLOAT: pi->dtype = ascFloat64; return true;
    case ASC_BI_BOOL: pi->dtype = ascBool; return true;
    case ASC_BI_CONSTEXPR:
      pi->isConstExpr = 1;
      pi->generic = 1;
      return true;
    default: return false;
    }
  }
  if (a->kind != ASC_EXPR_SUBSCRIPT)
    return false;
  b = named_builtin(a->u.sub.value);
  if (b != NULL && b->id == ASC_BI_CONSTEXPR) {
    ascKernelParamInfo inner = *pi;
    if (!from_annotation(a->u.sub.index, &inner) || inner.isTensor ||
        inner.isConstExpr)
      return false;
    *pi = inner;
    pi->isConstExpr = 1;
    return true;
  }
  if (b != NULL && b->id == ASC_BI_TENSOR) {
    const asc__ast_expr *ix = a->u.sub.index, *nd;
    ascDataType dt;
    if (ix == NULL || ix->kind != ASC_EXPR_TUPLE || ix->u.tuple.n != 2)
      return false;
    dt = dtype_of(named_builtin(ix->u.tuple.elts[0]));
    nd = ix->u.tuple.elts[1];
    if (dt == ascDataTypeCount || nd->kind != ASC_EXPR_INT ||
        nd->u.ival > ASC_MAX_DIMS)
      return false;
    pi->isTensor = 1;
    pi->dtype = dt;
    pi->ndim = (int)nd->u.ival;
    return true;
  }
  return false;
}

void asc__kernel_params(asc__cctx *c, const asc__ast_func *fn,
                        ascKernelParamInfo *out) {
  int i;

  ASC_UNUSED(c);
  for (i = 0; i < fn->nparams; i++) {
    const asc__ast_param *p = &fn->params[i];
    ascKernelParamInfo *pi = &out[i];

    memset(pi, 0, sizeof *pi);
    pi->name = p->name;
    pi->dtype = ascDataTypeCount;
    pi->ndim = -1;
    if (p->annotation != NULL && from_annotation(p->annotation, pi))
      continue;
    memset(pi, 0, sizeof *pi);
    pi->name = p->name;
    pi->dtype = ascDataTypeCount;
    pi->ndim = -1;
    pi->generic = 1;
    pi->isTensor = p->sym != NULL && func_uses_as_tensor(fn, p->sym, 0);
  }
}
