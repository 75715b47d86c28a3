/*
 * ascc --emit=types: the types inference gives one kernel for one
 * signature, as a stable text (the golden files of tests/golden/types).
 *
 *   kernel conv2d(f32[4], f32[4], f32[4])
 *     param input: Tensor[float32, 4]
 *     local sum: float32
 *     3:5 input.shape: tuple[int64, int64, int64, int64]
 *     ...
 *   helper sq instance (float32) -> float32
 *     ...
 * Functions are listed kernel first, then the nested functions and
 * lambdas inside it, then each helper instance.  Expressions are listed in
 * source order, parents before their operands.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "compiler/front/frontend.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

#define MAX_PRINT_DEPTH 12

static void put_expr(asc__buf *b, const asc__ast_expr *e, int depth);

static void put_list(asc__buf *b, asc__ast_expr *const *v, int n, int depth) {
  for (int i = 0; i < n; i++) {
    if (i > 0)
      asc__buf_puts(b, ", ");
    put_expr(b, v[i], depth + 1);
  }
}

/* Python-like text of an expression, abbreviated below a depth. */
static void put_expr(asc__buf *b, const asc__ast_expr *e, int depth) {
  if (e == NULL) {
    asc__buf_puts(b, "_");
    return;
  }
  if (depth > MAX_PRINT_DEPTH) {
    asc__buf_puts(b, "...");
    return;
  }
  switch (e->kind) {
  case ASC_EXPR_NAME:
    asc__buf_puts(b, e->u.name.id);
    break;
  case ASC_EXPR_INT:
    asc__buf_printf(b, "%llu", (unsigned long long)e->u.ival);
    break;
  case ASC_EXPR_FLOAT: {
    char num[40];
    snprintf(num, sizeof num, "%.17g", e->u.fval);
    asc__buf_puts(b, num);
    if (strpbrk(num, ".eni") == NULL) /* 0.0 reads as a float */
      asc__buf_puts(b, ".0");
    break;
  }
  case ASC_EXPR_BOOL:
    asc__buf_puts(b, e->u.bval ? "True" : "False");
    break;
  case ASC_EXPR_NONE:
    asc__buf_puts(b, "None");
    break;
  case ASC_EXPR_STR:
    asc__buf_puts(b, "'...'");
    break;
  case ASC_EXPR_TUPLE:
    asc__buf_puts(b, "(");
    put_list(b, e->u.tuple.elts, e->u.tuple.n, depth);
    asc__buf_puts(b, e->u.tuple.n == 1 ? ",)" : ")");
    break;
  case ASC_EXPR_ATTR:
    put_expr(b, e->u.attr.value, depth + 1);
    asc__buf_printf(b, ".%s", e->u.attr.attr);
    break;
  case ASC_EXPR_SUBSCRIPT:
    put_expr(b, e->u.sub.value, depth + 1);
    asc__buf_puts(b, "[");
    if (e->u.sub.index != NULL && e->u.sub.index->kind == ASC_EXPR_TUPLE)
      put_list(b, e->u.sub.index->u.tuple.elts, e->u.sub.index->u.tuple.n,
               depth);
    else
      put_expr(b, e->u.sub.index, depth + 1);
    asc__buf_puts(b, "]");
    break;
  case ASC_EXPR_SLICE:
    asc__buf_puts(b, ":");
    break;
  case ASC_EXPR_CALL:
    put_expr(b, e->u.call.func, depth + 1);
    asc__buf_puts(b, "(");
    put_list(b, e->u.call.args, e->u.call.nargs, depth);
    for (int i = 0; i < e->u.call.nkws; i++) {
      if (i > 0 || e->u.call.nargs > 0)
        asc__buf_puts(b, ", ");
      asc__buf_printf(b, "%s=", e->u.call.kws[i].name);
      put_expr(b, e->u.call.kws[i].value, depth + 1);
    }
    asc__buf_puts(b, ")");
    break;
  case ASC_EXPR_UNARY:
    asc__buf_puts(b, asc__unop_str(e->u.unary.op));
    if (e->u.unary.op == ASC_UN_NOT)
      asc__buf_puts(b, " ");
    put_expr(b, e->u.unary.operand, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    asc__buf_puts(b, "(");
    put_expr(b, e->u.binary.lhs, depth + 1);
    asc__buf_printf(b, " %s ", asc__binop_str(e->u.binary.op));
    put_expr(b, e->u.binary.rhs, depth + 1);
    asc__buf_puts(b, ")");
    break;
  case ASC_EXPR_BOOLOP:
    asc__buf_puts(b, "(");
    put_expr(b, e->u.boolop.lhs, depth + 1);
    asc__buf_puts(b, e->u.boolop.is_and ? " and " : " or ");
    put_expr(b, e->u.boolop.rhs, depth + 1);
    asc__buf_puts(b, ")");
    break;
  case ASC_EXPR_COMPARE:
    put_expr(b, e->u.cmp.operands[0], depth + 1);
    for (int i = 0; i < e->u.cmp.n; i++) {
      asc__buf_printf(b, " %s ", asc__cmpop_str(e->u.cmp.ops[i]));
      put_expr(b, e->u.cmp.operands[i + 1], depth + 1);
    }
    break;
  case ASC_EXPR_IFEXP:
    asc__buf_puts(b, "(");
    put_expr(b, e->u.ifexp.then, depth + 1);
    asc__buf_puts(b, " if ");
    put_expr(b, e->u.ifexp.cond, depth + 1);
    asc__buf_puts(b, " else ");
    put_expr(b, e->u.ifexp.orelse, depth + 1);
    asc__buf_puts(b, ")");
    break;
  case ASC_EXPR_LAMBDA:
    asc__buf_puts(b, "lambda");
    break;
  default:
    asc__buf_puts(b, "?");
    break;
  }
}

typedef struct dumper {
  asc__buf *out;
  /* nested functions met while walking, dumped after their parent */
  const asc__ast_func *nested[64];
  int nnested;
} dumper;

static void dump_block(dumper *d, const asc__ast_block *b, int depth);

static void dump_expr(dumper *d, const asc__ast_expr *e, int depth) {
  if (e == NULL || depth > 4 * ASC_MAX_NESTING)
    return;
  asc__buf_printf(d->out, "  %d:%d ", (int)e->loc.line, (int)e->loc.col);
  put_expr(d->out, e, 0);
  asc__buf_puts(d->out, ": ");
  if (e->type != NULL)
    asc__ty_print(d->out, e->type);
  else
    asc__buf_puts(d->out, "-");
  if (e->fit != NULL) { /* a Python int converted with a range test */
    asc__buf_puts(d->out, " -> ");
    asc__ty_print(d->out, e->fit);
    asc__buf_puts(d->out, " checked");
  }
  asc__buf_puts(d->out, "\n");
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      dump_expr(d, e->u.tuple.elts[i], depth + 1);
    break;
  case ASC_EXPR_ATTR:
    if (e->u.attr.builtin == NULL)
      dump_expr(d, e->u.attr.value, depth + 1);
    break;
  case ASC_EXPR_SUBSCRIPT:
    dump_expr(d, e->u.sub.value, depth + 1);
    dump_expr(d, e->u.sub.index, depth + 1);
    break;
  case ASC_EXPR_CALL:
    for (int i = 0; i < e->u.call.nrargs; i++)
      if (e->u.call.rargs[i] != NULL &&
          e->u.call.rargs[i]->kind == ASC_EXPR_LAMBDA) {
        if (d->nnested < 64)
          d->nested[d->nnested++] = e->u.call.rargs[i]->u.lambda.fn;
      } else {
        dump_expr(d, e->u.call.rargs[i], depth + 1);
      }
    break;
  case ASC_EXPR_UNARY:
    dump_expr(d, e->u.unary.operand, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    dump_expr(d, e->u.binary.lhs, depth + 1);
    dump_expr(d, e->u.binary.rhs, depth + 1);
    break;
  case ASC_EXPR_BOOLOP:
    dump_expr(d, e->u.boolop.lhs, depth + 1);
    dump_expr(d, e->u.boolop.rhs, depth + 1);
    break;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      dump_expr(d, e->u.cmp.operands[i], depth + 1);
    break;
  case ASC_EXPR_IFEXP:
    dump_expr(d, e->u.ifexp.cond, depth + 1);
    dump_expr(d, e->u.ifexp.then, depth + 1);
    dump_expr(d, e->u.ifexp.orelse, depth + 1);
    break;
  default:
    break;
  }
}

static void dump_stmt(dumper *d, const asc__ast_stmt *s, int depth) {
  switch (s->kind) {
  case ASC_STMT_EXPR:
    if (s->u.expr.value->kind != ASC_EXPR_STR) /* docstrings */
      dump_expr(d, s->u.expr.value, depth);
    break;
  case ASC_STMT_ASSIGN:
    for (int i = 0; i < s->u.assign.ntargets; i++)
      dump_expr(d, s->u.assign.targets[i], depth);
    dump_expr(d, s->u.assign.value, depth);
    break;
  case ASC_STMT_AUGASSIGN:
    dump_expr(d, s->u.aug.target, depth);
    dump_expr(d, s->u.aug.value, depth);
    break;
  case ASC_STMT_ANNASSIGN:
    dump_expr(d, s->u.ann.target, depth);
    dump_expr(d, s->u.ann.value, depth);
    break;
  case ASC_STMT_IF:
    dump_expr(d, s->u.if_.cond, depth);
    dump_block(d, &s->u.if_.body, depth + 1);
    dump_block(d, &s->u.if_.orelse, depth + 1);
    break;
  case ASC_STMT_FOR:
    dump_expr(d, s->u.for_.target, depth);
    dump_expr(d, s->u.for_.start, depth);
    dump_expr(d, s->u.for_.stop, depth);
    dump_expr(d, s->u.for_.step, depth);
    dump_block(d, &s->u.for_.body, depth + 1);
    break;
  case ASC_STMT_WHILE:
    dump_expr(d, s->u.while_.cond, depth);
    dump_block(d, &s->u.while_.body, depth + 1);
    break;
  case ASC_STMT_RETURN:
    dump_expr(d, s->u.ret.value, depth);
    break;
  case ASC_STMT_ASSERT:
    dump_expr(d, s->u.assert_.test, depth);
    break;
  case ASC_STMT_RAISE:
    if (s->u.raise.exc != NULL && s->u.raise.exc->kind == ASC_EXPR_CALL)
      for (int i = 0; i < s->u.raise.exc->u.call.nrargs; i++)
        dump_expr(d, s->u.raise.exc->u.call.rargs[i], depth);
    break;
  case ASC_STMT_TRY:
    dump_block(d, &s->u.try_.body, depth + 1);
    for (int i = 0; i < s->u.try_.nhandlers; i++)
      dump_block(d, &s->u.try_.handlers[i].body, depth + 1);
    dump_block(d, &s->u.try_.orelse, depth + 1);
    dump_block(d, &s->u.try_.finalbody, depth + 1);
    break;
  case ASC_STMT_WITH:
    dump_block(d, &s->u.with.body, depth + 1);
    break;
  case ASC_STMT_FUNCDEF:
    if (d->nnested < 64)
      d->nested[d->nnested++] = s->u.funcdef.fn;
    break;
  default:
    break;
  }
}

static void dump_block(dumper *d, const asc__ast_block *b, int depth) {
  if (depth > ASC_MAX_NESTING)
    return;
  for (int i = 0; i < b->n; i++)
    dump_stmt(d, b->stmts[i], depth);
}

static void dump_func(asc__buf *out, const char *what,
                      const asc__ast_func *fn, const asc__tinst *inst,
                      int depth) {
  dumper d;
  memset(&d, 0, sizeof d);
  d.out = out;
  asc__buf_printf(out, "%s %s", what, fn->name);
  if (inst != NULL) {
    /* the argument types the instance was made for */
    asc__buf_puts(out, "(");
    for (int32_t i = 0; i < inst->nargs; i++) {
      if (i > 0)
        asc__buf_puts(out, ", ");
      asc__ty_print(out, inst->args[i]);
    }
    asc__buf_puts(out, ")");
  }
  asc__buf_puts(out, ": ");
  asc__ty_print(out, fn->type);
  asc__buf_puts(out, "\n");
  for (int i = 0; i < fn->nlocals; i++) {
    const asc__sym *s = fn->locals[i];
    if (s->owner != fn || (s->kind != ASC_SYM_PARAM &&
                           s->kind != ASC_SYM_LOCAL &&
                           s->kind != ASC_SYM_EXC_VAR))
      continue;
    if (s->prev != NULL && !s->split)
      continue; /* a version of the variable above, of its type */
    asc__buf_printf(out, "  %s %s: ",
                    s->kind == ASC_SYM_PARAM ? "param" : "local", s->name);
    asc__ty_print(out, s->type);
    asc__buf_puts(out, "\n");
  }
  dump_block(&d, &fn->body, 0);
  if (depth < 8)
    for (int i = 0; i < d.nnested; i++)
      dump_func(out, d.nested[i]->kind == ASC_FUNC_LAMBDA ? "lambda"
                                                          : "nested",
                d.nested[i], NULL, depth + 1);
}

static void dump_types(const asc__typed *t, asc__buf *out) {
  asc__sig_format(out, t->sig);
  asc__buf_puts(out, "\n");
  dump_func(out, "kernel", t->kernel, NULL, 0);
  for (const asc__tinst *h = t->helpers; h != NULL; h = h->next)
    dump_func(out, "helper", h->fn, h, 0);
}

int ascc_emit_types(const ascc_emit_args *a, asc__cctx *c, asc__buf *out) {
  asc__ast_module *m;
  asc__sig *sig;
  asc__ast_func *k = NULL;
  asc__typed *t;

  if (a->signature == NULL) {
    fprintf(stderr, "ascc: --emit=types needs --signature 'name(...)'\n");
    return 2;
  }
  m = asc__frontend(c, NULL, 0);
  sig = asc__sig_parse(c, a->signature);
  if (sig == NULL)
    return 0; /* the diagnostics say why */
  if (sig->name != NULL) {
    k = ascc_find_kernel(a, m, sig->name);
    if (k == NULL)
      return 2;
  } else {
    for (int i = 0; i < m->nfuncs && k == NULL; i++)
      if (m->funcs[i]->kind == ASC_FUNC_KERNEL)
        k = m->funcs[i];
    if (k == NULL) {
      fprintf(stderr, "ascc: %s: no kernel\n", a->path);
      return 2;
    }
  }
  t = asc__infer_kernel(c, m, k, sig);
  if (t != NULL)
    dump_types(t, out);
  return 0;
}
