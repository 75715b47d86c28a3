/*
 * Lower bounds of integer index expressions, proved from the source: a
 * run-time index that is provably non-negative needs no wrap-around
 * (docs/arrays.md, "Negative indices").  Used by lower.c's element
 * offsets; lower_int.h is what the lowering files share.
 */
#include <string.h>

#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

#define LB_MAX ((int64_t)1 << 40) /* bounds kept far from overflow */

/* A loop variable of an enclosing range loop that its body never
 * assigns: its lower bound is the start's when the step is positive, the
 * stop's plus one when it is negative. */
static bool loop_var_bound(lstate *ls, const asc__sym *sym, int64_t *lb) {
  for (const lfor *f = ls->fors; f; f = f->up) {
    const asc__ast_stmt *s = f->s;
    const asc__ast_expr *st;
    int64_t a;
    if (s == NULL) {
      if (f->pvar != sym)
        continue;
      *lb = 0;
      return f->target_kept;
    }
    st = s->u.for_.step;
    if (s->u.for_.target->kind != ASC_EXPR_NAME ||
        s->u.for_.target->u.name.sym != sym)
      continue;
    if (!f->target_kept)
      return false;
    if (st == NULL || (st->kind == ASC_EXPR_INT && st->u.ival > 0)) {
      if (s->u.for_.start == NULL) {
        *lb = 0;
        return true;
      }
      return asc__lower_bound(ls, s->u.for_.start, lb);
    }
    if (st->kind == ASC_EXPR_UNARY && st->u.unary.op == ASC_UN_NEG &&
        st->u.unary.operand->kind == ASC_EXPR_INT &&
        asc__lower_bound(ls, s->u.for_.stop, &a)) {
      *lb = a + 1; /* range(hi, stop, -k) stays above stop */
      return true;
    }
    return false;
  }
  return false;
}

/* Counts the assignments of sym in b (2 for any but `sym = v`) and keeps
 * the value of the last plain one. */
static void count_assigns(const asc__ast_block *b, const asc__sym *sym,
                          int *n, const asc__ast_expr **value) {
  for (int k = 0; k < b->n && *n < 2; k++) {
    const asc__ast_stmt *s = b->stmts[k];
    switch (s->kind) {
    case ASC_STMT_ASSIGN:
      for (int q = 0; q < s->u.assign.ntargets; q++) {
        const asc__ast_expr *tg = s->u.assign.targets[q];
        if (tg->kind == ASC_EXPR_NAME && tg->u.name.sym == sym) {
          (*n)++;
          *value = s->u.assign.value;
        } else if (tg->kind == ASC_EXPR_TUPLE) {
          for (int z = 0; z < tg->u.tuple.n; z++)
            if (tg->u.tuple.elts[z]->kind == ASC_EXPR_NAME &&
                tg->u.tuple.elts[z]->u.name.sym == sym)
              *n += 2;
        }
      }
      break;
    case ASC_STMT_ANNASSIGN:
      if (s->u.ann.target->kind == ASC_EXPR_NAME &&
          s->u.ann.target->u.name.sym == sym)
        *n += 2;
      break;
    case ASC_STMT_AUGASSIGN:
      if (s->u.aug.target->kind == ASC_EXPR_NAME &&
          s->u.aug.target->u.name.sym == sym)
        *n += 2;
      break;
    case ASC_STMT_IF:
      count_assigns(&s->u.if_.body, sym, n, value);
      count_assigns(&s->u.if_.orelse, sym, n, value);
      break;
    case ASC_STMT_FOR:
      if (s->u.for_.target->kind != ASC_EXPR_NAME ||
          s->u.for_.target->u.name.sym == sym)
        *n += 2;
      count_assigns(&s->u.for_.body, sym, n, value);
      break;
    case ASC_STMT_WHILE:
      count_assigns(&s->u.while_.body, sym, n, value);
      break;
    case ASC_STMT_WITH:
      count_assigns(&s->u.with.body, sym, n, value);
      break;
    case ASC_STMT_TRY:
      count_assigns(&s->u.try_.body, sym, n, value);
      count_assigns(&s->u.try_.orelse, sym, n, value);
      count_assigns(&s->u.try_.finalbody, sym, n, value);
      for (int q = 0; q < s->u.try_.nhandlers; q++)
        count_assigns(&s->u.try_.handlers[q].body, sym, n, value);
      break;
    default:
      break;
    }
  }
}

/* A local assigned once, by `sym = v` with v provably at least lb
 * wherever it runs (so proved without any loop variable). */
static bool single_assign_bound(lstate *ls, const asc__sym *sym, int64_t *lb) {
  int n = 0;
  const asc__ast_expr *v = NULL;
  lfor *saved = ls->fors;
  bool ok;
  if (sym->captured || sym->owner == NULL || ls->lb_depth > 8)
    return false;
  count_assigns(&sym->owner->body, sym, &n, &v);
  if (n != 1 || v == NULL)
    return false;
  ls->fors = NULL;
  ls->lb_depth++;
  ok = asc__lower_bound(ls, v, lb);
  ls->lb_depth--;
  ls->fors = saved;
  return ok;
}

/* A lower bound of the integer expression e, when one can be proved from
 * the source (constants, unsigned values, sizes, range loop variables and
 * sums, products, floor quotients and remainders of those).  Used only to
 * leave out the wrap of negative indices, so false is always safe. */
bool asc__lower_bound(lstate *ls, const asc__ast_expr *e, int64_t *lb) {
  asc__type *t = ty(e);
  int64_t a, b;
  if (t && t->kind == ASC_TY_SCALAR &&
      (t->dtype == ascBool || t->dtype == ascUInt8 || t->dtype == ascUInt16 ||
       t->dtype == ascUInt32 || t->dtype == ascUInt64)) {
    *lb = 0;
    return true;
  }
  switch (e->kind) {
  case ASC_EXPR_INT:
    if (e->u.ival >= (uint64_t)LB_MAX)
      return false;
    *lb = (int64_t)e->u.ival;
    return true;
  case ASC_EXPR_BOOL:
    *lb = 0;
    return true;
  case ASC_EXPR_UNARY:
    if (e->u.unary.op == ASC_UN_NEG &&
        e->u.unary.operand->kind == ASC_EXPR_INT &&
        e->u.unary.operand->u.ival < (uint64_t)LB_MAX) {
      *lb = -(int64_t)e->u.unary.operand->u.ival;
      return true;
    }
    if (e->u.unary.op == ASC_UN_POS)
      return asc__lower_bound(ls, e->u.unary.operand, lb);
    return false;
  case ASC_EXPR_NAME:
    if (e->u.name.sym == NULL)
      return false;
    if ((e->u.name.sym->kind == ASC_SYM_LOCAL ||
         e->u.name.sym->kind == ASC_SYM_PARAM) &&
        loop_var_bound(ls, e->u.name.sym, lb))
      return true;
    return e->u.name.sym->kind == ASC_SYM_LOCAL &&
           single_assign_bound(ls, e->u.name.sym, lb);
  case ASC_EXPR_ATTR: /* t.size, t.ndim */
    *lb = 0;
    return e->u.attr.builtin == NULL && is_tensor(e->u.attr.value) &&
           (strcmp(e->u.attr.attr, "size") == 0 ||
            strcmp(e->u.attr.attr, "ndim") == 0);
  case ASC_EXPR_SUBSCRIPT: /* t.shape[k] */
    *lb = 0;
    return e->u.sub.value->kind == ASC_EXPR_ATTR &&
           e->u.sub.value->u.attr.builtin == NULL &&
           is_tensor(e->u.sub.value->u.attr.value) &&
           strcmp(e->u.sub.value->u.attr.attr, "shape") == 0;
  case ASC_EXPR_CALL: {
    const asc__builtin *bi = e->u.call.builtin;
    *lb = 0;
    if (bi == NULL)
      return false;
    if (bi->id == ASC_BI_LEN || bi->id == ASC_BI_GET_BLOCK_IDX ||
        bi->id == ASC_BI_GET_BLOCK_NUM)
      return true;
    if (bi->id == ASC_BI_MIN || bi->id == ASC_BI_MAX) {
      bool any = false, all = true;
      int64_t lo = LB_MAX, hi = -LB_MAX;
      for (int k = 0; k < e->u.call.nrargs; k++) {
        if (e->u.call.rargs[k] && asc__lower_bound(ls, e->u.call.rargs[k], &a)) {
          any = true;
          lo = a < lo ? a : lo;
          hi = a > hi ? a : hi;
        } else {
          all = false;
        }
      }
      *lb = bi->id == ASC_BI_MIN ? lo : hi;
      return bi->id == ASC_BI_MIN ? all && any : any;
    }
    return false;
  }
  case ASC_EXPR_BINARY: {
    const asc__ast_expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    switch (e->u.binary.op) {
    case ASC_BIN_ADD:
      if (!asc__lower_bound(ls, l, &a) || !asc__lower_bound(ls, r, &b))
        return false;
      *lb = a + b;
      return *lb > -LB_MAX && *lb < LB_MAX;
    case ASC_BIN_SUB: /* x - c */
      if (r->kind != ASC_EXPR_INT || r->u.ival >= (uint64_t)LB_MAX ||
          !asc__lower_bound(ls, l, &a))
        return false;
      *lb = a - (int64_t)r->u.ival;
      return true;
    case ASC_BIN_MUL:
      if (!asc__lower_bound(ls, l, &a) || !asc__lower_bound(ls, r, &b) || a < 0 ||
          b < 0 || a > ((int64_t)1 << 20) || b > ((int64_t)1 << 20))
        return false;
      *lb = a * b;
      return true;
    case ASC_BIN_FLOORDIV: /* nonneg // positive constant */
    case ASC_BIN_RSHIFT:
      if (!asc__lower_bound(ls, l, &a) || a < 0 || !asc__lower_bound(ls, r, &b) ||
          b < (e->u.binary.op == ASC_BIN_RSHIFT ? 0 : 1))
        return false;
      *lb = 0;
      return true;
    case ASC_BIN_MOD: /* Python: the divisor's sign (0 raises) */
      *lb = 0;
      return asc__lower_bound(ls, r, &b) && b >= 0;
    case ASC_BIN_BITAND:
      *lb = 0;
      return (asc__lower_bound(ls, l, &a) && a >= 0) ||
             (asc__lower_bound(ls, r, &b) && b >= 0);
    default:
      return false;
    }
  }
  case ASC_EXPR_IFEXP:
    if (!asc__lower_bound(ls, e->u.ifexp.then, &a) ||
        !asc__lower_bound(ls, e->u.ifexp.orelse, &b))
      return false;
    *lb = a < b ? a : b;
    return true;
  default:
    return false;
  }
}
