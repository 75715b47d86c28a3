/*
 * Text form of the AST (ascc --emit=ast): statements one per line with
 * their location, nested blocks indented, expressions as S-expressions.
 * Resolved names show what they denote (x:param, sum:local, TILE:const=64,
 * range:builtin); calls show their target ([builtin sin], [helper f]).
 */
#include <stdio.h>
#include <string.h>

#include "compiler/front/frontend.h"
#include "compiler/front/lexer.h"

static void expr(asc__buf *o, const asc__ast_expr *e);
static void block(asc__buf *o, const asc__ast_block *b, int ind);
static void stmt_inline(asc__buf *o, const asc__ast_stmt *s);

static void indent(asc__buf *o, int n) {
  for (int i = 0; i < n; i++)
    asc__buf_puts(o, "  ");
}

static void loc(asc__buf *o, asc__loc l) {
  asc__buf_printf(o, "@%d:%d", (int)l.line, (int)l.col);
}

static void put_double(asc__buf *o, double v) { asc__buf_put_double(o, v); }

static void scalar(asc__buf *o, const ascScalar *s) {
  switch (s->dtype) {
  case ascBool: asc__buf_puts(o, s->value.i ? "True" : "False"); break;
  case ascFloat64: put_double(o, s->value.f); break;
  case ascDataTypeCount: asc__buf_puts(o, "?"); break;
  default: asc__buf_printf(o, "%lld", (long long)s->value.i); break;
  }
}

static const char *sym_kind(asc__sym_kind k) {
  switch (k) {
  case ASC_SYM_PARAM: return "param";
  case ASC_SYM_LOCAL: return "local";
  case ASC_SYM_CONST: return "const";
  case ASC_SYM_FUNC: return "func";
  case ASC_SYM_CLASS: return "class";
  case ASC_SYM_MODULE: return "module";
  case ASC_SYM_BUILTIN: return "builtin";
  case ASC_SYM_EXC_VAR: return "excvar";
  case ASC_SYM_COMP_VAR: return "compvar";
  case ASC_SYM_FOREIGN: return "foreign";
  }
  return "?";
}

static void name(asc__buf *o, const char *id, const asc__sym *s) {
  asc__buf_puts(o, id);
  if (s == NULL)
    return;
  asc__buf_printf(o, ":%s", sym_kind(s->kind));
  if (s->captured && s->kind != ASC_SYM_CONST)
    asc__buf_puts(o, "^");
  if (s->kind == ASC_SYM_CONST) {
    asc__buf_puts(o, "=");
    scalar(o, &s->u.cnst->folded);
  }
}

static void list(asc__buf *o, asc__ast_expr *const *v, int n) {
  for (int i = 0; i < n; i++) {
    asc__buf_puts(o, " ");
    expr(o, v[i]);
  }
}

static void opt(asc__buf *o, const asc__ast_expr *e) {
  if (e == NULL)
    asc__buf_puts(o, "_");
  else
    expr(o, e);
}

/* The normalised arguments are worth showing when keywords or defaults
 * moved them. */
static bool show_rargs(const asc__ast_expr *e) {
  if (e->u.call.nkws > 0)
    return true;
  for (int i = e->u.call.nargs; i < e->u.call.nrargs; i++)
    if (e->u.call.rargs[i] != NULL)
      return true;
  return false;
}

static void expr(asc__buf *o, const asc__ast_expr *e) {
  switch (e->kind) {
  case ASC_EXPR_NAME: name(o, e->u.name.id, e->u.name.sym); return;
  case ASC_EXPR_INT:
    asc__buf_printf(o, "%llu", (unsigned long long)e->u.ival);
    return;
  case ASC_EXPR_FLOAT: put_double(o, e->u.fval); return;
  case ASC_EXPR_BOOL: asc__buf_puts(o, e->u.bval ? "True" : "False"); return;
  case ASC_EXPR_NONE: asc__buf_puts(o, "None"); return;
  case ASC_EXPR_STR: asc__buf_put_quoted(o, e->u.str.s, e->u.str.len); return;
  case ASC_EXPR_TUPLE:
    asc__buf_puts(o, e->u.tuple.list ? "(list" : "(tuple");
    list(o, e->u.tuple.elts, e->u.tuple.n);
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_COMP: {
    const asc__ast_comp *c = e->comp;
    asc__buf_puts(o, c->sum ? "(sum " : c->list ? "(listcomp " : "(genexp ");
    expr(o, c->elt);
    for (int i = 0; i < c->nfors; i++) {
      asc__buf_puts(o, " (for ");
      expr(o, c->fors[i].target);
      asc__buf_puts(o, " ");
      expr(o, c->fors[i].iter);
      if (c->fors[i].cond != NULL) {
        asc__buf_puts(o, " (if ");
        expr(o, c->fors[i].cond);
        asc__buf_puts(o, ")");
      }
      asc__buf_puts(o, ")");
    }
    asc__buf_puts(o, ")");
    return;
  }
  case ASC_EXPR_ATTR:
    asc__buf_puts(o, "(. ");
    expr(o, e->u.attr.value);
    asc__buf_printf(o, " %s", e->u.attr.attr);
    if (e->u.attr.builtin != NULL)
      asc__buf_printf(o, " [builtin %s]", e->u.attr.builtin->name);
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_SUBSCRIPT:
    asc__buf_puts(o, "(index ");
    expr(o, e->u.sub.value);
    asc__buf_puts(o, " ");
    expr(o, e->u.sub.index);
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_SLICE:
    if (e->u.slice.ellipsis) {
      asc__buf_puts(o, "(ellipsis)");
      return;
    }
    asc__buf_puts(o, "(slice ");
    opt(o, e->u.slice.lower);
    asc__buf_puts(o, " ");
    opt(o, e->u.slice.upper);
    asc__buf_puts(o, " ");
    opt(o, e->u.slice.step);
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_CALL:
    asc__buf_puts(o, "(call ");
    expr(o, e->u.call.func);
    list(o, e->u.call.args, e->u.call.nargs);
    for (int i = 0; i < e->u.call.nkws; i++) {
      asc__buf_printf(o, " %s=", e->u.call.kws[i].name);
      expr(o, e->u.call.kws[i].value);
    }
    if (e->u.call.builtin != NULL && e->u.call.func->kind != ASC_EXPR_ATTR)
      asc__buf_printf(o, " [builtin %s]", e->u.call.builtin->name);
    if (e->u.call.callee != NULL)
      asc__buf_printf(o, " [helper %s]", e->u.call.callee->name);
    if (e->u.call.cls != NULL)
      asc__buf_printf(o, " [struct %s]", e->u.call.cls->name);
    if (e->u.call.rargs != NULL && show_rargs(e)) {
      asc__buf_puts(o, " [args");
      for (int i = 0; i < e->u.call.nrargs; i++) {
        asc__buf_puts(o, " ");
        opt(o, e->u.call.rargs[i]);
      }
      asc__buf_puts(o, "]");
    }
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_UNARY:
    asc__buf_printf(o, "(%s ", asc__unop_str(e->u.unary.op));
    expr(o, e->u.unary.operand);
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_BINARY:
    asc__buf_printf(o, "(%s ", asc__binop_str(e->u.binary.op));
    expr(o, e->u.binary.lhs);
    asc__buf_puts(o, " ");
    expr(o, e->u.binary.rhs);
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_BOOLOP:
    asc__buf_printf(o, "(%s ", e->u.boolop.is_and ? "and" : "or");
    expr(o, e->u.boolop.lhs);
    asc__buf_puts(o, " ");
    expr(o, e->u.boolop.rhs);
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_COMPARE:
    asc__buf_puts(o, "(cmp ");
    expr(o, e->u.cmp.operands[0]);
    for (int i = 0; i < e->u.cmp.n; i++) {
      asc__buf_printf(o, " %s ", asc__cmpop_str(e->u.cmp.ops[i]));
      expr(o, e->u.cmp.operands[i + 1]);
    }
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_IFEXP:
    asc__buf_puts(o, "(ifexp ");
    expr(o, e->u.ifexp.cond);
    asc__buf_puts(o, " ");
    expr(o, e->u.ifexp.then);
    asc__buf_puts(o, " ");
    expr(o, e->u.ifexp.orelse);
    asc__buf_puts(o, ")");
    return;
  case ASC_EXPR_LAMBDA: {
    const asc__ast_func *f = e->u.lambda.fn;
    asc__buf_puts(o, "(lambda (");
    for (int i = 0; i < f->nparams; i++)
      asc__buf_printf(o, "%s%s", i ? " " : "", f->params[i].name);
    asc__buf_puts(o, ") ");
    if (f->body.n == 1)
      stmt_inline(o, f->body.stmts[0]);
    asc__buf_puts(o, ")");
    return;
  }
  case ASC_EXPR_COUNT:
    break;
  }
  asc__buf_puts(o, "?");
}

/* The one-line part of a statement (no location, no block). */
static void stmt_inline(asc__buf *o, const asc__ast_stmt *s) {
  asc__buf_puts(o, asc__stmt_kind_name(s->kind));
  switch (s->kind) {
  case ASC_STMT_EXPR:
    asc__buf_puts(o, " ");
    expr(o, s->u.expr.value);
    break;
  case ASC_STMT_ASSIGN:
    for (int i = 0; i < s->u.assign.ntargets; i++) {
      asc__buf_puts(o, " ");
      expr(o, s->u.assign.targets[i]);
      asc__buf_puts(o, " =");
    }
    asc__buf_puts(o, " ");
    expr(o, s->u.assign.value);
    break;
  case ASC_STMT_AUGASSIGN:
    asc__buf_puts(o, " ");
    expr(o, s->u.aug.target);
    asc__buf_printf(o, " %s= ", asc__binop_str(s->u.aug.op));
    expr(o, s->u.aug.value);
    break;
  case ASC_STMT_ANNASSIGN:
    asc__buf_puts(o, " ");
    expr(o, s->u.ann.target);
    asc__buf_puts(o, " : ");
    expr(o, s->u.ann.annotation);
    if (s->u.ann.value != NULL) {
      asc__buf_puts(o, " = ");
      expr(o, s->u.ann.value);
    }
    break;
  case ASC_STMT_IF:
    asc__buf_puts(o, " ");
    expr(o, s->u.if_.cond);
    break;
  case ASC_STMT_FOR: {
    const asc__builtin *b = asc__builtin_get(s->u.for_.loop);
    asc__buf_puts(o, " ");
    expr(o, s->u.for_.target);
    asc__buf_puts(o, " in ");
    if (s->u.for_.over_array) /* for x in a: its rows (rewrite.c) */
      asc__buf_puts(o, "(rows)");
    else
      expr(o, s->u.for_.iter);
    if (b != NULL) {
      asc__buf_printf(o, " [%s ", b->name);
      opt(o, s->u.for_.start);
      asc__buf_puts(o, " ");
      opt(o, s->u.for_.stop);
      asc__buf_puts(o, " ");
      opt(o, s->u.for_.step);
      asc__buf_puts(o, "]");
    }
    break;
  }
  case ASC_STMT_WHILE:
    asc__buf_puts(o, " ");
    expr(o, s->u.while_.cond);
    break;
  case ASC_STMT_RETURN:
    if (s->u.ret.value != NULL) {
      asc__buf_puts(o, " ");
      expr(o, s->u.ret.value);
    }
    break;
  case ASC_STMT_ASSERT:
    asc__buf_puts(o, " ");
    expr(o, s->u.assert_.test);
    if (s->u.assert_.msg != NULL) {
      asc__buf_puts(o, " ");
      expr(o, s->u.assert_.msg);
    }
    break;
  case ASC_STMT_RAISE:
    if (s->u.raise.exc != NULL) {
      asc__buf_puts(o, " ");
      expr(o, s->u.raise.exc);
    }
    break;
  case ASC_STMT_WITH:
    asc__buf_puts(o, " ");
    expr(o, s->u.with.ctx);
    break;
  case ASC_STMT_FUNCDEF:
    asc__buf_printf(o, " %s", s->u.funcdef.fn->name);
    break;
  default:
    break;
  }
}

static void func(asc__buf *o, const asc__ast_func *f, int ind);

static void stmt(asc__buf *o, const asc__ast_stmt *s, int ind) {
  indent(o, ind);
  loc(o, s->loc);
  asc__buf_puts(o, " ");
  if (s->kind == ASC_STMT_FUNCDEF) {
    asc__buf_puts(o, "def\n");
    func(o, s->u.funcdef.fn, ind + 1);
    return;
  }
  stmt_inline(o, s);
  asc__buf_puts(o, "\n");
  switch (s->kind) {
  case ASC_STMT_IF:
    block(o, &s->u.if_.body, ind + 1);
    if (s->u.if_.orelse.n > 0) {
      indent(o, ind);
      asc__buf_puts(o, "else\n");
      block(o, &s->u.if_.orelse, ind + 1);
    }
    break;
  case ASC_STMT_FOR: block(o, &s->u.for_.body, ind + 1); break;
  case ASC_STMT_WHILE: block(o, &s->u.while_.body, ind + 1); break;
  case ASC_STMT_WITH: block(o, &s->u.with.body, ind + 1); break;
  case ASC_STMT_TRY:
    block(o, &s->u.try_.body, ind + 1);
    for (int i = 0; i < s->u.try_.nhandlers; i++) {
      const asc__ast_handler *h = &s->u.try_.handlers[i];
      indent(o, ind);
      asc__buf_puts(o, "except ");
      loc(o, h->loc);
      if (h->type != NULL) {
        asc__buf_puts(o, " ");
        expr(o, h->type);
      }
      if (h->name != NULL) {
        asc__buf_puts(o, " as ");
        name(o, h->name, h->name_sym);
      }
      asc__buf_puts(o, "\n");
      block(o, &h->body, ind + 1);
    }
    if (s->u.try_.orelse.n > 0) {
      indent(o, ind);
      asc__buf_puts(o, "else\n");
      block(o, &s->u.try_.orelse, ind + 1);
    }
    if (s->u.try_.finalbody.n > 0) {
      indent(o, ind);
      asc__buf_puts(o, "finally\n");
      block(o, &s->u.try_.finalbody, ind + 1);
    }
    break;
  default:
    break;
  }
}

static void block(asc__buf *o, const asc__ast_block *b, int ind) {
  for (int i = 0; i < b->n; i++)
    stmt(o, b->stmts[i], ind);
}

static const char *func_kind(asc__func_kind k) {
  switch (k) {
  case ASC_FUNC_PLAIN: return "def";
  case ASC_FUNC_KERNEL: return "kernel";
  case ASC_FUNC_HELPER: return "helper";
  case ASC_FUNC_NESTED: return "nested";
  case ASC_FUNC_LAMBDA: return "lambda";
  }
  return "?";
}

static void func(asc__buf *o, const asc__ast_func *f, int ind) {
  indent(o, ind);
  asc__buf_printf(o, "%s %s ", func_kind(f->kind), f->name);
  loc(o, f->loc);
  asc__buf_puts(o, " (");
  for (int i = 0; i < f->nparams; i++) {
    const asc__ast_param *p = &f->params[i];
    asc__buf_printf(o, "%s%s", i ? ", " : "", p->name);
    if (p->annotation != NULL) {
      asc__buf_puts(o, ": ");
      expr(o, p->annotation);
    }
    if (p->def != NULL) {
      asc__buf_puts(o, " = ");
      expr(o, p->def);
    }
  }
  asc__buf_puts(o, ")");
  if (f->returns != NULL) {
    asc__buf_puts(o, " -> ");
    expr(o, f->returns);
  }
  if (f->opts.debug >= 0)
    asc__buf_printf(o, " debug=%d", f->opts.debug);
  if (f->opts.boundscheck >= 0)
    asc__buf_printf(o, " boundscheck=%d", f->opts.boundscheck);
  if (f->opts.fastmath >= 0)
    asc__buf_printf(o, " fastmath=%#x", (unsigned)f->opts.fastmath);
  asc__buf_puts(o, "\n");
  if (f->docstring != NULL) {
    indent(o, ind + 1);
    asc__buf_puts(o, "doc ");
    asc__buf_put_quoted(o, f->docstring, strlen(f->docstring));
    asc__buf_puts(o, "\n");
  }
  if (f->nlocals > f->nparams) {
    indent(o, ind + 1);
    asc__buf_puts(o, "locals");
    for (int i = f->nparams; i < f->nlocals; i++)
      asc__buf_printf(o, " %s%s", f->locals[i]->name,
                      f->locals[i]->captured ? "^" : "");
    asc__buf_puts(o, "\n");
  }
  if (f->ncallees > 0) {
    indent(o, ind + 1);
    asc__buf_puts(o, "calls");
    for (int i = 0; i < f->ncallees; i++)
      asc__buf_printf(o, " %s", f->callees[i]->name);
    asc__buf_puts(o, "\n");
  }
  if (f->kind == ASC_FUNC_PLAIN) {
    indent(o, ind + 1);
    asc__buf_puts(o, "(host code, not compiled)\n");
    return;
  }
  block(o, &f->body, ind + 1);
}

void asc__dump_ast(const asc__ast_module *m, asc__buf *o) {
  asc__buf_puts(o, "module\n");
  if (m->docstring != NULL) {
    asc__buf_puts(o, "  doc ");
    asc__buf_put_quoted(o, m->docstring, strlen(m->docstring));
    asc__buf_puts(o, "\n");
  }
  for (int i = 0; i < m->nimports; i++) {
    const asc__ast_import *im = &m->imports[i];
    if (im->name != NULL)
      asc__buf_printf(o, "  from %s import %s", im->module, im->name);
    else
      asc__buf_printf(o, "  import %s", im->module);
    asc__buf_printf(o, " as %s ", im->asname);
    loc(o, im->loc);
    asc__buf_puts(o, "\n");
  }
  for (int i = 0; i < m->nconsts; i++) {
    const asc__ast_const *k = m->consts[i];
    asc__buf_printf(o, "  const %s ", k->name);
    loc(o, k->loc);
    if (k->value != NULL) {
      asc__buf_puts(o, " ");
      expr(o, k->value);
    }
    asc__buf_puts(o, " => ");
    scalar(o, &k->folded);
    if (k->from_caller)
      asc__buf_puts(o, " (from caller)");
    asc__buf_puts(o, "\n");
  }
  for (int i = 0; i < m->nclasses; i++) {
    const asc__ast_class *k = m->classes[i];
    asc__buf_printf(o, "  class %s ", k->name);
    loc(o, k->loc);
    if (k->unsupported != NULL)
      asc__buf_printf(o, " (not a struct: %s)", k->unsupported);
    asc__buf_puts(o, "\n");
    for (int j = 0; j < k->nfields; j++) {
      asc__buf_printf(o, "    field %s: ", k->fields[j].name);
      expr(o, k->fields[j].annotation);
      if (k->fields[j].def != NULL) {
        asc__buf_puts(o, " = ");
        expr(o, k->fields[j].def);
      }
      asc__buf_puts(o, "\n");
    }
  }
  for (int i = 0; i < m->nfuncs; i++)
    func(o, m->funcs[i], 1);
}
