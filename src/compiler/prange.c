/*
 * The AST-level analysis of parallel-loop (prange) bodies that lowering
 * needs: which symbols a body mentions and assigns, and which of those
 * assignments are reductions (`v op= ...`, `v = min(v, ...)`).  Lowering
 * uses it to find a prange's reductions and private variables;
 * docs/architecture.md explains how it differs from the IR-level
 * reduction recognition of passes/parallelize.c.
 */
#include <string.h>

#include "compiler/prange.h"
#include "compiler/ir/ir.h"

/* Does e (or s) mention symbol sym? */
/* skip: a statement whose subtree does not count (the loop itself). */
static bool expr_mentions(const asc__ast_expr *e, const asc__sym *sym);

static bool expr_mentions(const asc__ast_expr *e, const asc__sym *sym) {
  if (e == NULL)
    return false;
  switch (e->kind) {
  case ASC_EXPR_NAME: return e->u.name.sym == sym;
  case ASC_EXPR_TUPLE:
    for (int k = 0; k < e->u.tuple.n; k++)
      if (expr_mentions(e->u.tuple.elts[k], sym))
        return true;
    return false;
  case ASC_EXPR_ATTR: return expr_mentions(e->u.attr.value, sym);
  case ASC_EXPR_SUBSCRIPT:
    return expr_mentions(e->u.sub.value, sym) ||
           expr_mentions(e->u.sub.index, sym);
  case ASC_EXPR_CALL:
    for (int k = 0; k < e->u.call.nargs; k++)
      if (expr_mentions(e->u.call.args[k], sym))
        return true;
    for (int k = 0; k < e->u.call.nkws; k++)
      if (expr_mentions(e->u.call.kws[k].value, sym))
        return true;
    return false;
  case ASC_EXPR_UNARY: return expr_mentions(e->u.unary.operand, sym);
  case ASC_EXPR_BINARY:
    return expr_mentions(e->u.binary.lhs, sym) ||
           expr_mentions(e->u.binary.rhs, sym);
  case ASC_EXPR_BOOLOP:
    return expr_mentions(e->u.boolop.lhs, sym) ||
           expr_mentions(e->u.boolop.rhs, sym);
  case ASC_EXPR_COMPARE:
    for (int k = 0; k <= e->u.cmp.n; k++)
      if (expr_mentions(e->u.cmp.operands[k], sym))
        return true;
    return false;
  case ASC_EXPR_IFEXP:
    return expr_mentions(e->u.ifexp.cond, sym) ||
           expr_mentions(e->u.ifexp.then, sym) ||
           expr_mentions(e->u.ifexp.orelse, sym);
  case ASC_EXPR_LAMBDA:
    return asc__prange_block_mentions(&e->u.lambda.fn->body, sym, NULL);
  default: return false;
  }
}

static bool stmt_mentions(const asc__ast_stmt *s, const asc__sym *sym,
                          const asc__ast_stmt *skip);

/* 1 when b assigns sym (a whole-variable assignment at its top level)
 * before any read of it, 2 when b may read it first, 0 when b does not
 * mention it. */
int asc__prange_first_access(const asc__ast_block *b, const asc__sym *sym) {
  for (int k = 0; k < b->n; k++) {
    const asc__ast_stmt *s = b->stmts[k];
    if (s->kind == ASC_STMT_ASSIGN) {
      bool writes = false;
      if (expr_mentions(s->u.assign.value, sym))
        return 2;
      for (int q = 0; q < s->u.assign.ntargets; q++) {
        const asc__ast_expr *t = s->u.assign.targets[q];
        if (t->kind == ASC_EXPR_NAME && t->u.name.sym == sym)
          writes = true;
        else if (expr_mentions(t, sym))
          return 2;
      }
      if (writes)
        return 1;
      continue;
    }
    if (stmt_mentions(s, sym, NULL))
      return 2;
  }
  return 0;
}

/* Is x (a statement) s or inside s? */
static bool block_contains(const asc__ast_block *b, const asc__ast_stmt *x);

static bool stmt_contains(const asc__ast_stmt *s, const asc__ast_stmt *x) {
  if (s == x)
    return true;
  switch (s->kind) {
  case ASC_STMT_IF:
    return block_contains(&s->u.if_.body, x) ||
           block_contains(&s->u.if_.orelse, x);
  case ASC_STMT_FOR: return block_contains(&s->u.for_.body, x);
  case ASC_STMT_WHILE: return block_contains(&s->u.while_.body, x);
  case ASC_STMT_TRY:
    if (block_contains(&s->u.try_.body, x) ||
        block_contains(&s->u.try_.orelse, x) ||
        block_contains(&s->u.try_.finalbody, x))
      return true;
    for (int k = 0; k < s->u.try_.nhandlers; k++)
      if (block_contains(&s->u.try_.handlers[k].body, x))
        return true;
    return false;
  case ASC_STMT_WITH: return block_contains(&s->u.with.body, x);
  case ASC_STMT_FUNCDEF: return block_contains(&s->u.funcdef.fn->body, x);
  default: return false;
  }
}

static bool block_contains(const asc__ast_block *b, const asc__ast_stmt *x) {
  for (int k = 0; k < b->n; k++)
    if (stmt_contains(b->stmts[k], x))
      return true;
  return false;
}

static bool stmt_mentions(const asc__ast_stmt *s, const asc__sym *sym,
                          const asc__ast_stmt *skip) {
  if (s == skip)
    return false;
  /* another loop that assigns sym before any read of it (its loop
   * variable, or a temporary set first in its body) does not see a value
   * from outside; what follows it sees that loop's value (unless it runs
   * no iteration, which these kernels do not rely on).  A loop around
   * skip is not "another loop": its body after skip may read what skip
   * leaves. */
  if (s->kind == ASC_STMT_FOR && !expr_mentions(s->u.for_.iter, sym) &&
      ((s->u.for_.target->kind == ASC_EXPR_NAME &&
        s->u.for_.target->u.name.sym == sym) ||
       asc__prange_first_access(&s->u.for_.body, sym) == 1) &&
      (skip == NULL || !stmt_contains(s, skip)))
    return false;
  switch (s->kind) {
  case ASC_STMT_EXPR: return expr_mentions(s->u.expr.value, sym);
  case ASC_STMT_ASSIGN:
    for (int k = 0; k < s->u.assign.ntargets; k++)
      if (expr_mentions(s->u.assign.targets[k], sym))
        return true;
    return expr_mentions(s->u.assign.value, sym);
  case ASC_STMT_AUGASSIGN:
    return expr_mentions(s->u.aug.target, sym) ||
           expr_mentions(s->u.aug.value, sym);
  case ASC_STMT_ANNASSIGN:
    return expr_mentions(s->u.ann.target, sym) ||
           expr_mentions(s->u.ann.value, sym);
  case ASC_STMT_IF:
    return expr_mentions(s->u.if_.cond, sym) ||
           asc__prange_block_mentions(&s->u.if_.body, sym, skip) ||
           asc__prange_block_mentions(&s->u.if_.orelse, sym, skip);
  case ASC_STMT_FOR:
    return expr_mentions(s->u.for_.target, sym) ||
           expr_mentions(s->u.for_.iter, sym) ||
           asc__prange_block_mentions(&s->u.for_.body, sym, skip);
  case ASC_STMT_WHILE:
    return expr_mentions(s->u.while_.cond, sym) ||
           asc__prange_block_mentions(&s->u.while_.body, sym, skip);
  case ASC_STMT_RETURN: return expr_mentions(s->u.ret.value, sym);
  case ASC_STMT_ASSERT:
    return expr_mentions(s->u.assert_.test, sym);
  case ASC_STMT_TRY:
    if (asc__prange_block_mentions(&s->u.try_.body, sym, skip) ||
        asc__prange_block_mentions(&s->u.try_.orelse, sym, skip) ||
        asc__prange_block_mentions(&s->u.try_.finalbody, sym, skip))
      return true;
    for (int k = 0; k < s->u.try_.nhandlers; k++)
      if (asc__prange_block_mentions(&s->u.try_.handlers[k].body, sym, skip))
        return true;
    return false;
  case ASC_STMT_WITH:
    return asc__prange_block_mentions(&s->u.with.body, sym, skip);
  case ASC_STMT_FUNCDEF:
    return asc__prange_block_mentions(&s->u.funcdef.fn->body, sym, skip);
  default: return false;
  }
}

bool asc__prange_block_mentions(const asc__ast_block *b, const asc__sym *sym,
                                const asc__ast_stmt *skip) {
  for (int k = 0; k < b->n; k++)
    if (stmt_mentions(b->stmts[k], sym, skip))
      return true;
  return false;
}

void asc__prange_note_assign(asc__cctx *c, asc__prange_alist *al,
                             const asc__ast_expr *tg, int redop) {
  const asc__sym *s;
  if (tg->kind == ASC_EXPR_TUPLE) {
    for (int k = 0; k < tg->u.tuple.n; k++)
      asc__prange_note_assign(c, al, tg->u.tuple.elts[k], -1);
    return;
  }
  if (tg->kind == ASC_EXPR_ATTR && tg->u.attr.value->kind == ASC_EXPR_NAME) {
    /* p.x = ...: assigns the struct variable p */
    tg = tg->u.attr.value;
    redop = -1;
  }
  if (tg->kind != ASC_EXPR_NAME || (s = tg->u.name.sym) == NULL)
    return;
  for (int k = 0; k < al->n; k++)
    if (al->v[k].sym == s) {
      if (al->v[k].redop != redop)
        al->v[k].redop = -1;
      return;
    }
  al->v = asc__arena_grow(c, al->v, al->n, &al->cap, sizeof *al->v, 16);
  al->v[al->n].sym = s;
  al->v[al->n].redop = redop;
  al->v[al->n].loc = tg->loc;
  al->n++;
}

/* ASC_IR_MIN / ASC_IR_MAX when `tg = value` is `s = min(s, x...)` or
 * `s = max(...)` with s among the arguments once and in no other, else -1:
 * such an assignment is a min/max reduction. */
static int minmax_redop(const asc__ast_expr *tg, const asc__ast_expr *value) {
  const asc__sym *s;
  int self = 0;
  if (tg->kind != ASC_EXPR_NAME || (s = tg->u.name.sym) == NULL ||
      value->kind != ASC_EXPR_CALL || value->u.call.callee != NULL ||
      value->u.call.builtin == NULL ||
      (value->u.call.builtin->id != ASC_BI_MIN &&
       value->u.call.builtin->id != ASC_BI_MAX))
    return -1;
  for (int k = 0; k < value->u.call.nrargs; k++) {
    const asc__ast_expr *a = value->u.call.rargs[k];
    if (a->kind == ASC_EXPR_NAME && a->u.name.sym == s)
      self++;
    else if (expr_mentions(a, s))
      return -1;
  }
  if (self != 1)
    return -1;
  return value->u.call.builtin->id == ASC_BI_MIN ? ASC_IR_MIN : ASC_IR_MAX;
}

void asc__prange_collect_assigned(asc__cctx *c, const asc__ast_block *b,
                                  asc__prange_alist *al) {
  for (int k = 0; k < b->n; k++) {
    const asc__ast_stmt *s = b->stmts[k];
    switch (s->kind) {
    case ASC_STMT_ASSIGN:
      for (int q = 0; q < s->u.assign.ntargets; q++)
        asc__prange_note_assign(c, al, s->u.assign.targets[q],
                                s->u.assign.ntargets == 1
                                    ? minmax_redop(s->u.assign.targets[0],
                                                   s->u.assign.value)
                                    : -1);
      break;
    case ASC_STMT_ANNASSIGN:
      /* `x: T` alone declares x and binds nothing */
      if (s->u.ann.value != NULL)
        asc__prange_note_assign(c, al, s->u.ann.target, -1);
      break;
    case ASC_STMT_AUGASSIGN: {
      int op = -1;
      switch (s->u.aug.op) {
      case ASC_BIN_ADD: op = ASC_IR_ADD; break;
      case ASC_BIN_MUL: op = ASC_IR_MUL; break;
      case ASC_BIN_BITAND: op = ASC_IR_AND; break;
      case ASC_BIN_BITOR: op = ASC_IR_OR; break;
      case ASC_BIN_BITXOR: op = ASC_IR_XOR; break;
      default: break;
      }
      asc__prange_note_assign(c, al, s->u.aug.target, op);
      break;
    }
    case ASC_STMT_IF:
      asc__prange_collect_assigned(c, &s->u.if_.body, al);
      asc__prange_collect_assigned(c, &s->u.if_.orelse, al);
      break;
    case ASC_STMT_FOR:
      asc__prange_note_assign(c, al, s->u.for_.target, -1);
      asc__prange_collect_assigned(c, &s->u.for_.body, al);
      break;
    case ASC_STMT_WHILE:
      asc__prange_collect_assigned(c, &s->u.while_.body, al);
      break;
    case ASC_STMT_TRY:
      asc__prange_collect_assigned(c, &s->u.try_.body, al);
      asc__prange_collect_assigned(c, &s->u.try_.orelse, al);
      asc__prange_collect_assigned(c, &s->u.try_.finalbody, al);
      for (int q = 0; q < s->u.try_.nhandlers; q++)
        asc__prange_collect_assigned(c, &s->u.try_.handlers[q].body, al);
      break;
    case ASC_STMT_WITH:
      asc__prange_collect_assigned(c, &s->u.with.body, al);
      break;
    default:
      break;
    }
  }
}
