/*
 * Recursive-descent parser: tokens -> AST.  One function per grammar rule,
 * the rule in the comment above it (Python's grammar, cut to the kernel
 * subset; constructs outside it are parsed far enough to name them in the
 * error).
 *
 * Error recovery: a syntax error inside a statement reports and longjmps to
 * the innermost statement() call, which skips to the next logical line (and
 * over the indented block a broken header leaves behind), so one compile
 * reports several errors.  Module-level host code (undecorated functions,
 * host classes, scripts) is parsed tentatively: if it is not kernel code,
 * its errors are taken back and it is ignored with a warning.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "compiler/front/parse_int.h"
#include "base/fastmath.h"

/* ------------------------------------------------------------- statements */

static asc__ast_block block(parser *p, const char *what, asc__loc loc);
static void statement(parser *p, vec *out);

bool asc__parse_is_augassign(asc__tok_kind k, asc__binop *op) {
  asc__binop o;
  switch (k) {
  case ASC_TK_PLUSEQUAL: o = ASC_BIN_ADD; break;
  case ASC_TK_MINEQUAL: o = ASC_BIN_SUB; break;
  case ASC_TK_STAREQUAL: o = ASC_BIN_MUL; break;
  case ASC_TK_ATEQUAL: o = ASC_BIN_MATMUL; break;
  case ASC_TK_SLASHEQUAL: o = ASC_BIN_DIV; break;
  case ASC_TK_DSLASHEQUAL: o = ASC_BIN_FLOORDIV; break;
  case ASC_TK_PERCENTEQUAL: o = ASC_BIN_MOD; break;
  case ASC_TK_DSTAREQUAL: o = ASC_BIN_POW; break;
  case ASC_TK_LSHIFTEQUAL: o = ASC_BIN_LSHIFT; break;
  case ASC_TK_RSHIFTEQUAL: o = ASC_BIN_RSHIFT; break;
  case ASC_TK_AMPEREQUAL: o = ASC_BIN_BITAND; break;
  case ASC_TK_VBAREQUAL: o = ASC_BIN_BITOR; break;
  case ASC_TK_CIRCUMFLEXEQUAL: o = ASC_BIN_BITXOR; break;
  default: return false;
  }
  if (op != NULL)
    *op = o;
  return true;
}

/* expr_stmt: testlist (augassign testlist | ':' test ['=' testlist]
 *                      | ('=' testlist)*) */
static asc__ast_stmt *expr_stmt(parser *p) {
  asc__token *t0 = tok(p);
  asc__ast_expr *e = asc__parse_testlist(p);
  asc__ast_stmt *s;
  asc__binop op;

  if (at(p, ASC_TK_COLONEQUAL))
    syntax_error_at(p, tok(p)->loc, "assignment expressions (:=) are not "
                    "supported in kernels");
  if (asc__parse_is_augassign(tok(p)->kind, &op)) {
    next(p);
    asc__parse_check_target(p, e, false);
    s = new_stmt(p, ASC_STMT_AUGASSIGN, t0->loc);
    s->u.aug.op = op;
    s->u.aug.target = e;
    s->u.aug.value = asc__parse_testlist(p);
    return s;
  }
  if (at(p, ASC_TK_COLON)) {
    next(p);
    if (e->kind == ASC_EXPR_TUPLE)
      asc__diag_error(p->c, e->loc, "only single target (not tuple) can be "
                      "annotated");
    else
      asc__parse_check_target(p, e, false);
    s = new_stmt(p, ASC_STMT_ANNASSIGN, t0->loc);
    s->u.ann.target = e;
    s->u.ann.annotation = asc__parse_test(p);
    if (accept(p, ASC_TK_EQUAL))
      s->u.ann.value = asc__parse_testlist(p);
    return s;
  }
  if (at(p, ASC_TK_EQUAL)) {
    vec targets = {0};
    asc__ast_expr *value = e;
    while (accept(p, ASC_TK_EQUAL)) {
      asc__parse_check_target(p, value, true);
      vpush(p, &targets, value);
      if (at(p, ASC_TK_KW_YIELD))
        syntax_error_at(p, tok(p)->loc, "'yield' is not supported in "
                        "kernels (generators are not supported)");
      value = asc__parse_testlist(p);
    }
    if (p->fn != NULL && targets.n == 1 && value->kind == ASC_EXPR_LAMBDA &&
        ((asc__ast_expr *)targets.v[0])->kind == ASC_EXPR_NAME) {
      /* f = lambda x: ... is def f(x): return ... (a helper, or a
       * parallel_for body) */
      asc__ast_func *f = value->u.lambda.fn;
      f->kind = ASC_FUNC_NESTED;
      f->name = ((asc__ast_expr *)targets.v[0])->u.name.id;
      s = new_stmt(p, ASC_STMT_FUNCDEF, t0->loc);
      s->u.funcdef.fn = f;
      return s;
    }
    s = new_stmt(p, ASC_STMT_ASSIGN, t0->loc);
    s->u.assign.targets = vfinish(&targets);
    s->u.assign.ntargets = targets.n;
    s->u.assign.value = value;
    return s;
  }
  s = new_stmt(p, ASC_STMT_EXPR, t0->loc);
  s->u.expr.value = e;
  return s;
}

/* small_stmt: expr_stmt | 'pass' | 'break' | 'continue'
 *           | 'return' [testlist] | 'raise' [test] | 'assert' test [',' test]
 *           | import_one
 * (global, nonlocal, del, yield: named and rejected) */
static void import_one(parser *p);

static asc__ast_stmt *small_stmt(parser *p) {
  asc__token *t = tok(p);
  asc__ast_stmt *s;
  switch (t->kind) {
  case ASC_TK_KW_PASS:
    next(p);
    return new_stmt(p, ASC_STMT_PASS, t->loc);
  case ASC_TK_KW_BREAK:
  case ASC_TK_KW_CONTINUE:
    next(p);
    if (p->loops == 0)
      asc__diag_error(p->c, t->loc, "'%s' outside loop",
                      asc__tok_spelling(t->kind));
    return new_stmt(p, t->kind == ASC_TK_KW_BREAK ? ASC_STMT_BREAK
                                                   : ASC_STMT_CONTINUE,
                    t->loc);
  case ASC_TK_KW_RETURN:
    next(p);
    if (p->fn == NULL)
      asc__diag_error(p->c, t->loc, "'return' outside function");
    s = new_stmt(p, ASC_STMT_RETURN, t->loc);
    if (!at(p, ASC_TK_NEWLINE) && !at(p, ASC_TK_SEMI) && !at(p, ASC_TK_EOF))
      s->u.ret.value = asc__parse_testlist(p);
    return s;
  case ASC_TK_KW_RAISE:
    next(p);
    s = new_stmt(p, ASC_STMT_RAISE, t->loc);
    if (!at(p, ASC_TK_NEWLINE) && !at(p, ASC_TK_SEMI) && !at(p, ASC_TK_EOF))
      s->u.raise.exc = asc__parse_test(p);
    if (at(p, ASC_TK_KW_FROM))
      syntax_error_at(p, tok(p)->loc, "'raise ... from' is not supported in "
                      "kernels");
    return s;
  case ASC_TK_KW_ASSERT:
    next(p);
    s = new_stmt(p, ASC_STMT_ASSERT, t->loc);
    s->u.assert_.test = asc__parse_test(p);
    if (accept(p, ASC_TK_COMMA))
      s->u.assert_.msg = asc__parse_test(p);
    return s;
  case ASC_TK_KW_IMPORT:
  case ASC_TK_KW_FROM:
    /* `import numpy as np` in a body binds as it would at module level:
     * kernel text names one module by one name throughout, so the
     * narrower Python scope changes nothing a kernel can observe. */
    if (p->fn == NULL)
      syntax_error_at(p, t->loc, "import is only supported at module level");
    import_one(p);
    return new_stmt(p, ASC_STMT_PASS, t->loc);
  case ASC_TK_KW_GLOBAL:
  case ASC_TK_KW_NONLOCAL:
  case ASC_TK_KW_DEL:
    syntax_error_at(p, t->loc, "'%s' statements are not supported in "
                    "kernels", asc__tok_spelling(t->kind));
  case ASC_TK_KW_YIELD:
    syntax_error_at(p, t->loc, "'yield' is not supported in kernels "
                    "(generators are not supported)");
  default:
    return expr_stmt(p);
  }
}

/* simple_stmts: small_stmt (';' small_stmt)* [';'] NEWLINE */
static void simple_stmts(parser *p, vec *out) {
  for (;;) {
    vpush(p, out, small_stmt(p));
    if (!accept(p, ASC_TK_SEMI))
      break;
    if (at(p, ASC_TK_NEWLINE) || at(p, ASC_TK_EOF))
      break;
  }
  if (!accept(p, ASC_TK_NEWLINE) && !at(p, ASC_TK_EOF)) {
    asc__token *t = tok(p);
    if (t->kind == ASC_TK_EQUAL)
      syntax_error_at(p, t->loc, "invalid syntax: unexpected '='");
    syntax_error_at(p, t->loc, "expected newline, found %s", describe(t));
  }
}

/* block: simple_stmts | NEWLINE INDENT statement+ DEDENT */
static asc__ast_block block(parser *p, const char *what, asc__loc loc) {
  asc__ast_block b = {0};
  vec v = {0};
  enter(p, loc);
  if (!at(p, ASC_TK_NEWLINE)) {
    simple_stmts(p, &v);
  } else {
    next(p);
    if (!at(p, ASC_TK_INDENT))
      syntax_error_at(p, tok(p)->loc, "expected an indented block after %s "
                      "on line %d", what, (int)loc.line);
    next(p);
    while (!at(p, ASC_TK_DEDENT) && !at(p, ASC_TK_EOF))
      statement(p, &v);
    accept(p, ASC_TK_DEDENT);
  }
  leave(p);
  b.stmts = (asc__ast_stmt **)v.v;
  b.n = v.n;
  return b;
}

static const char *docstring_of(asc__ast_block *b) {
  if (b->n > 0 && b->stmts[0]->kind == ASC_STMT_EXPR &&
      b->stmts[0]->u.expr.value->kind == ASC_EXPR_STR) {
    const char *d = b->stmts[0]->u.expr.value->u.str.s;
    b->stmts++;
    b->n--;
    return d;
  }
  return NULL;
}

/* if_stmt: 'if' test ':' block ('elif' test ':' block)* ['else' ':' block] */
static asc__ast_stmt *if_stmt(parser *p) {
  asc__token *kw = next(p);
  asc__ast_stmt *s = new_stmt(p, ASC_STMT_IF, kw->loc), *cur = s;
  int chain = 0;
  s->u.if_.cond = asc__parse_test(p);
  expect(p, ASC_TK_COLON, "'if'", kw->loc);
  s->u.if_.body = block(p, "'if' statement", kw->loc);
  for (;;) {
    asc__token *k = tok(p);
    if (k->kind == ASC_TK_KW_ELIF) {
      asc__ast_stmt *e;
      next(p);
      if (++chain > MAX_TREE_DEPTH)
        asc__diag_fatal(p->c, k->loc, "too many 'elif' branches (more "
                        "than %d)", MAX_TREE_DEPTH);
      e = new_stmt(p, ASC_STMT_IF, k->loc);
      e->u.if_.cond = asc__parse_test(p);
      expect(p, ASC_TK_COLON, "'elif'", k->loc);
      e->u.if_.body = block(p, "'elif' statement", k->loc);
      cur->u.if_.orelse.stmts = asc__arena_alloc(p->c, sizeof(asc__ast_stmt *));
      cur->u.if_.orelse.stmts[0] = e;
      cur->u.if_.orelse.n = 1;
      cur = e;
    } else if (k->kind == ASC_TK_KW_ELSE) {
      next(p);
      expect(p, ASC_TK_COLON, "'else'", k->loc);
      cur->u.if_.orelse = block(p, "'else' statement", k->loc);
      return s;
    } else {
      return s;
    }
  }
}

static void reject_loop_else(parser *p, const char *loop) {
  if (at(p, ASC_TK_KW_ELSE))
    syntax_error_at(p, tok(p)->loc, "'else' after a '%s' loop is not "
                    "supported in kernels", loop);
}

/* for_stmt: 'for' exprlist 'in' testlist ':' block */
static asc__ast_stmt *for_stmt(parser *p) {
  asc__token *kw = next(p);
  asc__ast_stmt *s = new_stmt(p, ASC_STMT_FOR, kw->loc);
  s->u.for_.target = asc__parse_exprlist(p);
  asc__parse_check_target(p, s->u.for_.target, true);
  if (!at(p, ASC_TK_KW_IN))
    syntax_error_at(p, tok(p)->loc, "expected 'in' after the 'for' target "
                    "(to complete 'for' at line %d)", (int)kw->loc.line);
  next(p);
  s->u.for_.iter = asc__parse_testlist(p);
  expect(p, ASC_TK_COLON, "'for'", kw->loc);
  p->loops++;
  s->u.for_.body = block(p, "'for' statement", kw->loc);
  p->loops--;
  reject_loop_else(p, "for");
  return s;
}

/* while_stmt: 'while' test ':' block */
static asc__ast_stmt *while_stmt(parser *p) {
  asc__token *kw = next(p);
  asc__ast_stmt *s = new_stmt(p, ASC_STMT_WHILE, kw->loc);
  s->u.while_.cond = asc__parse_test(p);
  expect(p, ASC_TK_COLON, "'while'", kw->loc);
  p->loops++;
  s->u.while_.body = block(p, "'while' statement", kw->loc);
  p->loops--;
  reject_loop_else(p, "while");
  return s;
}

/* try_stmt: 'try' ':' block except_clause+ ['else' ':' block]
 *                 ['finally' ':' block]
 *         | 'try' ':' block 'finally' ':' block
 * except_clause: 'except' [test ['as' NAME]] ':' block */
static asc__ast_stmt *try_stmt(parser *p) {
  asc__token *kw = next(p);
  asc__ast_stmt *s = new_stmt(p, ASC_STMT_TRY, kw->loc);
  vec hs = {0};
  bool bare_seen = false;

  expect(p, ASC_TK_COLON, "'try'", kw->loc);
  s->u.try_.body = block(p, "'try' statement", kw->loc);
  while (at(p, ASC_TK_KW_EXCEPT)) {
    asc__token *ek = next(p);
    asc__ast_handler *h = asc__arena_alloc(p->c, sizeof *h);
    h->loc = ek->loc;
    if (bare_seen)
      asc__diag_error(p->c, ek->loc, "default 'except:' must be last");
    if (at(p, ASC_TK_STAR))
      syntax_error_at(p, tok(p)->loc, "'except*' is not supported in "
                      "kernels");
    if (!at(p, ASC_TK_COLON)) {
      h->type = asc__parse_test(p);
      if (at(p, ASC_TK_COMMA))
        syntax_error_at(p, tok(p)->loc, "multiple exception types must be "
                        "parenthesized");
      if (accept(p, ASC_TK_KW_AS)) {
        asc__token *n = tok(p);
        if (n->kind != ASC_TK_NAME)
          syntax_error_at(p, n->loc, "expected a name after 'as'");
        next(p);
        h->name = n->v.name;
        h->name_loc = n->loc;
      }
    } else {
      bare_seen = true;
    }
    expect(p, ASC_TK_COLON, "'except'", ek->loc);
    h->body = block(p, "'except' statement", ek->loc);
    vpush(p, &hs, h);
  }
  s->u.try_.nhandlers = hs.n;
  s->u.try_.handlers = asc__arena_alloc(p->c, (size_t)hs.n * sizeof(asc__ast_handler));
  for (int i = 0; i < hs.n; i++)
    s->u.try_.handlers[i] = *(asc__ast_handler *)hs.v[i];
  if (at(p, ASC_TK_KW_ELSE)) {
    asc__token *k = next(p);
    if (hs.n == 0)
      syntax_error_at(p, k->loc, "'else' after 'try' needs an 'except' "
                      "clause");
    expect(p, ASC_TK_COLON, "'else'", k->loc);
    s->u.try_.orelse = block(p, "'else' statement", k->loc);
  }
  if (at(p, ASC_TK_KW_FINALLY)) {
    asc__token *k = next(p);
    expect(p, ASC_TK_COLON, "'finally'", k->loc);
    s->u.try_.finalbody = block(p, "'finally' statement", k->loc);
  } else if (hs.n == 0) {
    syntax_error_at(p, tok(p)->loc, "expected 'except' or 'finally' block "
                    "(to complete 'try' at line %d)", (int)kw->loc.line);
  }
  return s;
}

/* with_stmt: 'with' test ':' block */
static asc__ast_stmt *with_stmt(parser *p) {
  asc__token *kw = next(p);
  asc__ast_stmt *s = new_stmt(p, ASC_STMT_WITH, kw->loc);
  s->u.with.ctx = asc__parse_test(p);
  if (at(p, ASC_TK_KW_AS))
    syntax_error_at(p, tok(p)->loc, "'with ... as' is not supported in "
                    "kernels");
  if (at(p, ASC_TK_COMMA))
    syntax_error_at(p, tok(p)->loc, "'with' takes a single context manager "
                    "in kernels");
  expect(p, ASC_TK_COLON, "'with'", kw->loc);
  s->u.with.body = block(p, "'with' statement", kw->loc);
  return s;
}

/* parameters: param (',' param)* [',']
 * param: NAME [':' test] ['=' test] */
static void parameters(parser *p, asc__ast_func *f, asc__token *open) {
  vec v = {0};
  bool defaults = false;
  while (!at(p, ASC_TK_RPAR)) {
    asc__token *t = tok(p);
    asc__ast_param *prm;
    if (t->kind == ASC_TK_STAR || t->kind == ASC_TK_DSTAR)
      syntax_error_at(p, t->loc, "%s parameters are not supported in "
                      "kernels", t->kind == ASC_TK_STAR ? "*args"
                                                        : "**kwargs");
    if (t->kind == ASC_TK_SLASH)
      syntax_error_at(p, t->loc, "positional-only parameters ('/') are not "
                      "supported in kernels");
    if (t->kind != ASC_TK_NAME)
      syntax_error_at(p, t->loc, "expected a parameter name, found %s",
                      describe(t));
    next(p);
    for (int i = 0; i < v.n; i++)
      if (strcmp(((asc__ast_param *)v.v[i])->name, t->v.name) == 0)
        asc__diag_error(p->c, t->loc, "duplicate argument '%s' in function "
                        "definition", t->v.name);
    prm = asc__arena_alloc(p->c, sizeof *prm);
    prm->loc = t->loc;
    prm->name = t->v.name;
    if (accept(p, ASC_TK_COLON))
      prm->annotation = asc__parse_test(p);
    if (accept(p, ASC_TK_EQUAL)) {
      prm->def = asc__parse_test(p);
      defaults = true;
    } else if (defaults) {
      asc__diag_error(p->c, t->loc, "parameter without a default follows "
                      "parameter with a default");
    }
    vpush(p, &v, prm);
    if (!accept(p, ASC_TK_COMMA))
      break;
  }
  expect(p, ASC_TK_RPAR, "'('", open->loc);
  f->nparams = v.n;
  f->params = asc__arena_alloc(p->c, (size_t)v.n * sizeof *f->params);
  for (int i = 0; i < v.n; i++)
    f->params[i] = *(asc__ast_param *)v.v[i];
}

/* funcdef: 'def' NAME '(' [parameters] ')' ['->' test] ':' block */
static asc__ast_func *funcdef(parser *p, asc__func_kind kind) {
  asc__token *kw = next(p), *name = tok(p), *open;
  asc__ast_func *f;
  asc__ast_func *saved_fn = p->fn;
  int saved_loops = p->loops;
  bool saved_class = p->in_class;

  if (name->kind != ASC_TK_NAME)
    syntax_error_at(p, name->loc, "expected a function name after 'def'");
  next(p);
  f = asc__parse_new_func(p, kind, kw->loc, name->v.name);
  f->text_begin = kw->offset;
  open = tok(p);
  expect(p, ASC_TK_LPAR, NULL, kw->loc);
  parameters(p, f, open);
  if (accept(p, ASC_TK_RARROW))
    f->returns = asc__parse_test(p);
  expect(p, ASC_TK_COLON, "'def'", kw->loc);
  p->fn = f;
  p->loops = 0;
  p->in_class = false;
  f->body = block(p, "function definition", kw->loc);
  p->fn = saved_fn;
  p->loops = saved_loops;
  p->in_class = saved_class;
  f->docstring = docstring_of(&f->body);
  f->text_end = p->last_end;
  return f;
}

/* decorators: ('@' test NEWLINE)+ */
static void decorators(parser *p, vec *out) {
  while (at(p, ASC_TK_AT)) {
    next(p);
    p->in_decorator = true;
    vpush(p, out, asc__parse_test(p));
    p->in_decorator = false;
    if (!accept(p, ASC_TK_NEWLINE))
      syntax_error_at(p, tok(p)->loc, "expected newline after decorator, "
                      "found %s", describe(tok(p)));
  }
}

/* compound_stmt: if_stmt | while_stmt | for_stmt | try_stmt | with_stmt
 *              | funcdef (nested)
 * stmt: compound_stmt | simple_stmts */
static void stmt(parser *p, vec *out) {
  asc__token *t = tok(p);
  switch (t->kind) {
  case ASC_TK_KW_IF: vpush(p, out, if_stmt(p)); return;
  case ASC_TK_KW_WHILE: vpush(p, out, while_stmt(p)); return;
  case ASC_TK_KW_FOR: vpush(p, out, for_stmt(p)); return;
  case ASC_TK_KW_TRY: vpush(p, out, try_stmt(p)); return;
  case ASC_TK_KW_WITH: vpush(p, out, with_stmt(p)); return;
  case ASC_TK_AT:
    if (p->fn != NULL)
      syntax_error_at(p, t->loc, "decorators are not supported on nested "
                      "functions");
    {
      vec d = {0};
      decorators(p, &d);
      if (!at(p, ASC_TK_KW_DEF))
        syntax_error_at(p, tok(p)->loc, "expected 'def' after decorator");
    }
    /* fall through */
  case ASC_TK_KW_DEF: {
    asc__ast_stmt *s = new_stmt(p, ASC_STMT_FUNCDEF, tok(p)->loc);
    s->u.funcdef.fn = funcdef(p, p->fn ? ASC_FUNC_NESTED : ASC_FUNC_PLAIN);
    vpush(p, out, s);
    return;
  }
  case ASC_TK_KW_CLASS:
    syntax_error_at(p, t->loc, "class definitions are only supported at "
                    "module level");
  case ASC_TK_KW_ASYNC:
    syntax_error_at(p, t->loc, "'async' is not supported in kernels");
  case ASC_TK_INDENT:
    syntax_error_at(p, t->loc, "unexpected indent");
  case ASC_TK_NAME:
    if (strcmp(t->v.name, "match") == 0) {
      asc__tok_kind k = peek_at(p, 1)->kind;
      if (k == ASC_TK_NAME || k == ASC_TK_INT || k == ASC_TK_STR ||
          k == ASC_TK_FLOAT) {
        int i = p->pos;
        while (i < p->ntok && p->t[i].kind != ASC_TK_NEWLINE)
          i++;
        if (i > 0 && p->t[i - 1].kind == ASC_TK_COLON)
          syntax_error_at(p, t->loc, "'match' statements are not supported "
                          "in kernels");
      }
    }
    simple_stmts(p, out);
    return;
  default:
    simple_stmts(p, out);
    return;
  }
}

/* Skips the indented block that starts at the current INDENT. */
static void skip_block(parser *p) {
  int level = 0;
  do {
    asc__tok_kind k = tok(p)->kind;
    if (k == ASC_TK_EOF)
      return;
    if (k == ASC_TK_INDENT)
      level++;
    else if (k == ASC_TK_DEDENT)
      level--;
    next(p);
  } while (level > 0);
}

/* After a syntax error: resume at the next logical line, and skip a block
 * the broken statement would have owned. */
static void synchronize(parser *p, int start) {
  int e = p->err_pos;
  if (e > start && e <= p->ntok && p->t[e - 1].kind == ASC_TK_NEWLINE &&
      p->t[e].kind != ASC_TK_INDENT) {
    p->pos = e;                   /* the error is at the next line's start */
    return;
  }
  if (p->pos < e)
    p->pos = e;
  while (!at(p, ASC_TK_NEWLINE) && !at(p, ASC_TK_EOF))
    next(p);
  accept(p, ASC_TK_NEWLINE);
  if (at(p, ASC_TK_INDENT))
    skip_block(p);
}

/* statement: stmt, recovering from syntax errors */
static void statement(parser *p, vec *out) {
  jmp_buf jb;
  jmp_buf *volatile saved = p->recover;
  volatile int start = p->pos;
  volatile int depth = p->depth, loops = p->loops;
  asc__ast_func *volatile fn = p->fn;
  volatile bool in_class = p->in_class;

  p->recover = &jb;
  if (setjmp(jb) != 0) {
    p->recover = saved;
    p->depth = depth;
    p->loops = loops;
    p->fn = fn;
    p->in_class = in_class;
    synchronize(p, start);
    return;
  }
  if (at(p, ASC_TK_DEDENT) || at(p, ASC_TK_INDENT)) {
    asc__token *t = next(p);
    p->recover = saved;
    if (t->kind == ASC_TK_INDENT) {
      asc__diag_error(p->c, t->loc, "unexpected indent");
      p->pos--;
      skip_block(p);
    }
    return;
  }
  stmt(p, out);
  p->recover = saved;
}

/* ----------------------------------------------------------- module level */

static bool is_asc_module(const char *m) {
  return strcmp(m, "asc") == 0 || strcmp(m, "pyasc") == 0;
}

/* The decorator builtin (kernel, jit, func) named by e, seen through the
 * imports so far; ASC_BI_NONE if e is something else. */
static asc__builtin_id decorator_id(parser *p, asc__ast_expr *e) {
  const char *attr = NULL, *base = NULL;
  if (e->kind == ASC_EXPR_CALL)
    e = e->u.call.func;
  if (e->kind == ASC_EXPR_ATTR && e->u.attr.value->kind == ASC_EXPR_NAME) {
    base = e->u.attr.value->u.name.id;
    attr = e->u.attr.attr;
  } else if (e->kind == ASC_EXPR_NAME) {
    attr = e->u.name.id;
  } else {
    return ASC_BI_NONE;
  }
  /* the latest import binding the name decides */
  for (int i = p->imports.n - 1; i >= 0; i--) {
    asc__ast_import *im = p->imports.v[i];
    const char *bound = base != NULL ? base : attr;
    if (strcmp(im->asname, bound) != 0)
      continue;
    if (!is_asc_module(im->module))
      return ASC_BI_NONE;
    if (base != NULL && im->name != NULL)
      return ASC_BI_NONE;                  /* from asc import X; X.kernel */
    if (base == NULL && im->name == NULL)
      return ASC_BI_NONE;                  /* import asc; @asc */
    {
      const char *fname = base != NULL ? attr : im->name;
      const asc__builtin *b = asc__builtin_lookup(ASC_NS_ASC, fname);
      if (b != NULL && b->kind == ASC_BK_DECORATOR)
        return b->id;
      return ASC_BI_NONE;
    }
  }
  /* Text taken from one function (inspect.getsource) has no imports:
   * asc and pyasc then name the kernel module. */
  if (base != NULL && is_asc_module(base)) {
    const asc__builtin *b = asc__builtin_lookup(ASC_NS_ASC, attr);
    if (b != NULL && b->kind == ASC_BK_DECORATOR)
      return b->id;
  }
  return ASC_BI_NONE;
}

/* fastmath=True | False | a string | a tuple, list or set of strings:
 * the ASC_FASTMATH_* bits, or -1 after reporting an error. */
static int fastmath_option(parser *p, asc__ast_expr *v) {
  asc__ast_expr *one = v;
  int n = 1, mask = 0;

  if (v->kind == ASC_EXPR_BOOL)
    return v->u.bval ? (int)ASC_FASTMATH_ALL : 0;
  if (v->kind == ASC_EXPR_TUPLE)
    n = v->u.tuple.n;
  for (int i = 0; i < n; i++) {
    unsigned bit;
    if (v->kind == ASC_EXPR_TUPLE)
      one = v->u.tuple.elts[i];
    if (one->kind != ASC_EXPR_STR) {
      asc__diag_error(p->c, one->loc, "fastmath must be True, False or a "
                      "set of flag names (" ASC_FASTMATH_VALID ")");
      return -1;
    }
    bit = asc__fastmath_bit(one->u.str.s, one->u.str.len);
    if (bit == 0) {
      asc__diag_error(p->c, one->loc, "unknown fastmath flag '%s' (valid: "
                      ASC_FASTMATH_VALID ")", one->u.str.s);
      return -1;
    }
    mask |= (int)bit;
  }
  return mask;
}

static void kernel_options(parser *p, asc__ast_func *f, asc__ast_expr *d,
                           asc__builtin_id id) {
  bool helper = id == ASC_BI_FUNC;
  if (d->kind != ASC_EXPR_CALL)
    return;
  if (d->u.call.nargs > 0)
    asc__diag_error(p->c, d->u.call.args[0]->loc, "%s options are "
                    "keyword arguments (%s)", helper ? "@asc.func" : "kernel",
                    helper ? "fastmath=" : "debug=, boundscheck=, fastmath=");
  for (int i = 0; i < d->u.call.nkws; i++) {
    asc__ast_keyword *k = &d->u.call.kws[i];
    int v;
    if (strcmp(k->name, "fastmath") == 0) {
      if ((v = fastmath_option(p, k->value)) >= 0)
        f->opts.fastmath = v;
      continue;
    }
    if (helper) {
      asc__diag_error(p->c, k->loc, "unknown @asc.func option '%s' "
                      "(expected fastmath)", k->name);
      continue;
    }
    if (k->value->kind == ASC_EXPR_BOOL)
      v = k->value->u.bval;
    else if (k->value->kind == ASC_EXPR_INT && k->value->u.ival <= 1)
      v = (int)k->value->u.ival;
    else {
      asc__diag_error(p->c, k->value->loc, "kernel option '%s' must be True "
                      "or False", k->name);
      continue;
    }
    if (strcmp(k->name, "debug") == 0)
      f->opts.debug = v;
    else if (strcmp(k->name, "boundscheck") == 0)
      f->opts.boundscheck = v;
    else
      asc__diag_error(p->c, k->loc, "unknown kernel option '%s' (expected "
                      "debug, boundscheck or fastmath)", k->name);
  }
}

/* dotted_name: NAME ('.' NAME)* */
static const char *dotted_name(parser *p, const char **first) {
  asc__token *t = tok(p);
  size_t b, e;
  if (t->kind != ASC_TK_NAME)
    syntax_error_at(p, t->loc, "expected a module name, found %s",
                    describe(t));
  next(p);
  b = t->offset;
  e = t->offset + t->len;
  if (first)
    *first = t->v.name;
  while (at(p, ASC_TK_DOT) && peek_at(p, 1)->kind == ASC_TK_NAME) {
    next(p);
    e = next(p)->offset + p->t[p->pos - 1].len;
  }
  return asc__arena_strndup(p->c, p->c->text + b, e - b);
}

static void add_import(parser *p, asc__loc loc, const char *module,
                       const char *name, const char *asname) {
  asc__ast_import *im = asc__arena_alloc(p->c, sizeof *im);
  im->loc = loc;
  im->module = module;
  im->name = name;
  im->asname = asname;
  vpush(p, &p->imports, im);
}

/* import_stmt: import_one (';' import_one)* [';'] NEWLINE
 * import_one: 'import' dotted_name ['as' NAME] (',' ...)*
 *           | 'from' ('.'* dotted_name | '.'+) 'import'
 *                 ('*' | NAME ['as' NAME] (',' ...)* | '(' ... ')') */
static void import_one(parser *p) {
  asc__token *kw = next(p);
  if (kw->kind == ASC_TK_KW_IMPORT) {
    do {
      asc__token *t = tok(p);
      const char *first;
      const char *mod = dotted_name(p, &first);
      const char *as = first;
      if (accept(p, ASC_TK_KW_AS)) {
        asc__token *n = tok(p);
        if (n->kind != ASC_TK_NAME)
          syntax_error_at(p, n->loc, "expected a name after 'as'");
        next(p);
        as = n->v.name;
      } else if (strchr(mod, '.') != NULL) {
        mod = first;          /* import a.b binds a */
      }
      add_import(p, t->loc, mod, NULL, as);
    } while (accept(p, ASC_TK_COMMA));
  } else {
    const char *mod;
    bool relative = false, paren;
    asc__token *open;
    while (accept(p, ASC_TK_DOT) || accept(p, ASC_TK_ELLIPSIS))
      relative = true;
    mod = at(p, ASC_TK_NAME) ? dotted_name(p, NULL) : "";
    if (relative)
      mod = asc__arena_printf(p->c, ".%s", mod);
    if (!at(p, ASC_TK_KW_IMPORT))
      syntax_error_at(p, tok(p)->loc, "expected 'import' after 'from %s'",
                      mod);
    next(p);
    if (at(p, ASC_TK_STAR)) {
      asc__token *st = next(p);
      if (is_asc_module(mod))
        asc__diag_error(p->c, st->loc, "'from %s import *' is not "
                        "supported; import the names you use", mod);
    } else {
      open = tok(p);
      paren = accept(p, ASC_TK_LPAR);
      do {
        asc__token *n = tok(p);
        const char *as;
        if (paren && at(p, ASC_TK_RPAR))
          break;
        if (n->kind != ASC_TK_NAME)
          syntax_error_at(p, n->loc, "expected a name to import, found %s",
                          describe(n));
        next(p);
        as = n->v.name;
        if (accept(p, ASC_TK_KW_AS)) {
          asc__token *a = tok(p);
          if (a->kind != ASC_TK_NAME)
            syntax_error_at(p, a->loc, "expected a name after 'as'");
          next(p);
          as = a->v.name;
        }
        add_import(p, n->loc, mod, n->v.name, as);
      } while (accept(p, ASC_TK_COMMA));
      if (paren)
        expect(p, ASC_TK_RPAR, "'('", open->loc);
    }
  }
}

static void import_stmt(parser *p) {
  import_one(p);
  while (accept(p, ASC_TK_SEMI) &&
         (at(p, ASC_TK_KW_IMPORT) || at(p, ASC_TK_KW_FROM)))
    import_one(p);
  if (!accept(p, ASC_TK_NEWLINE) && !at(p, ASC_TK_EOF))
    syntax_error_at(p, tok(p)->loc, "expected newline, found %s",
                    describe(tok(p)));
}

/* classdef: 'class' NAME ['(' [arguments] ')'] ':' block
 * A struct class holds annotated fields (NAME ':' test ['=' test]), an
 * optional docstring and 'pass'. */
static asc__ast_class *classdef(parser *p) {
  asc__token *kw = next(p), *name = tok(p);
  asc__ast_class *k;
  asc__ast_block body;
  vec fields = {0};
  bool saved = p->in_class;

  if (name->kind != ASC_TK_NAME)
    syntax_error_at(p, name->loc, "expected a class name after 'class'");
  next(p);
  k = asc__arena_alloc(p->c, sizeof *k);
  k->loc = kw->loc;
  k->name = name->v.name;
  if (at(p, ASC_TK_LPAR)) {
    asc__token *open = next(p);
    asc__ast_expr tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.kind = ASC_EXPR_CALL;
    asc__parse_arguments(p, &tmp, open);
    for (int i = 0; i < tmp.u.call.nargs && k->unsupported == NULL; i++) {
      asc__ast_expr *b = tmp.u.call.args[i];
      if (b->kind == ASC_EXPR_NAME && strcmp(b->u.name.id, "object") == 0)
        continue;
      k->unsupported = "class inheritance is not supported in kernels";
      k->unsupported_loc = b->loc;
    }
    if (tmp.u.call.nkws > 0 && k->unsupported == NULL) {
      k->unsupported = "class keywords (metaclass=...) are not supported in "
                       "kernels";
      k->unsupported_loc = tmp.u.call.kws[0].loc;
    }
  }
  expect(p, ASC_TK_COLON, "'class'", kw->loc);
  p->in_class = true;
  body = block(p, "class definition", kw->loc);
  p->in_class = saved;
  k->docstring = docstring_of(&body);
  for (int i = 0; i < body.n; i++) {
    asc__ast_stmt *s = body.stmts[i];
    if (s->kind == ASC_STMT_PASS)
      continue;
    if (s->kind == ASC_STMT_ANNASSIGN &&
        s->u.ann.target->kind == ASC_EXPR_NAME) {
      asc__ast_field *f = asc__arena_alloc(p->c, sizeof *f);
      f->loc = s->u.ann.target->loc;
      f->name = s->u.ann.target->u.name.id;
      f->annotation = s->u.ann.annotation;
      f->def = s->u.ann.value;
      for (int j = 0; j < fields.n; j++)
        if (strcmp(((asc__ast_field *)fields.v[j])->name, f->name) == 0 &&
            k->unsupported == NULL) {
          k->unsupported = "a struct field is declared twice";
          k->unsupported_loc = f->loc;
        }
      vpush(p, &fields, f);
      continue;
    }
    if (k->unsupported == NULL) {
      k->unsupported = s->kind == ASC_STMT_FUNCDEF
                           ? "methods are not supported in struct classes"
                           : "struct classes may only declare annotated "
                             "fields (name: type)";
      k->unsupported_loc = s->loc;
    }
  }
  k->nfields = fields.n;
  k->fields = asc__arena_alloc(p->c, (size_t)fields.n * sizeof *k->fields);
  for (int i = 0; i < fields.n; i++)
    k->fields[i] = *(asc__ast_field *)fields.v[i];
  return k;
}

typedef struct module_lists {
  vec consts, classes, funcs;
} module_lists;

/* A module-level item: import, def, class, constant or host code. */
static void module_item(parser *p, module_lists *ml, bool strict,
                        int first_deco, vec *decos) {
  asc__token *t = tok(p);
  if (t->kind == ASC_TK_KW_IMPORT || t->kind == ASC_TK_KW_FROM) {
    import_stmt(p);
    return;
  }
  if (t->kind == ASC_TK_KW_DEF) {
    asc__builtin_id id = ASC_BI_NONE;
    asc__ast_func *f;
    asc__ast_expr *deco = NULL;
    for (int i = 0; i < decos->n; i++) {
      asc__builtin_id d = decorator_id(p, decos->v[i]);
      if (d != ASC_BI_NONE) {
        if (id != ASC_BI_NONE)
          asc__diag_error(p->c, ((asc__ast_expr *)decos->v[i])->loc,
                          "a function takes one kernel decorator");
        id = d;
        deco = decos->v[i];
      }
    }
    f = funcdef(p, id == ASC_BI_FUNC ? ASC_FUNC_HELPER
                   : id == ASC_BI_NONE ? ASC_FUNC_PLAIN
                                       : ASC_FUNC_KERNEL);
    if (first_deco >= 0)
      f->text_begin = p->t[first_deco].offset;
    f->ndecorators = decos->n;
    f->decorators = vfinish(decos);
    if (deco != NULL) {
      for (int i = 0; i < decos->n; i++)
        if (decos->v[i] != deco)
          asc__diag_error(p->c, ((asc__ast_expr *)decos->v[i])->loc,
                          "unsupported decorator on a kernel function");
      kernel_options(p, f, deco, id);
    }
    vpush(p, &ml->funcs, f);
    return;
  }
  if (t->kind == ASC_TK_KW_CLASS) {
    for (int i = 0; i < decos->n; i++)
      if (decorator_id(p, decos->v[i]) != ASC_BI_NONE)
        asc__diag_error(p->c, ((asc__ast_expr *)decos->v[i])->loc,
                        "kernel decorators apply to functions, not classes");
    vpush(p, &ml->classes, classdef(p));
    return;
  }
  {
    vec out = {0};
    ASC_UNUSED(strict);
    stmt(p, &out);
    for (int i = 0; i < out.n; i++) {
      asc__ast_stmt *s = out.v[i];
      asc__ast_expr *target = NULL, *value = NULL, *ann = NULL;
      if (s->kind == ASC_STMT_ASSIGN && s->u.assign.ntargets == 1) {
        target = s->u.assign.targets[0];
        value = s->u.assign.value;
      } else if (s->kind == ASC_STMT_ANNASSIGN && s->u.ann.value != NULL) {
        target = s->u.ann.target;
        value = s->u.ann.value;
        ann = s->u.ann.annotation;
      }
      if (target != NULL && target->kind == ASC_EXPR_NAME) {
        asc__ast_const *k = asc__arena_alloc(p->c, sizeof *k);
        k->loc = target->loc;
        k->name = target->u.name.id;
        k->annotation = ann;
        k->value = value;
        vpush(p, &ml->consts, k);
      }
    }
  }
}

/* Parses one module-level item; kernel code strictly, host code
 * tentatively (its errors become one warning and the item is dropped). */
static void module_statement(parser *p, module_lists *ml) {
  jmp_buf jb;
  jmp_buf *volatile saved = p->recover;
  volatile int start = p->pos;
  volatile int first_deco = -1;
  volatile bool strict = true;
  volatile asc__diag_mark mark = asc__diag_mark_get(p->c);
  volatile int saved_max = p->c->max_errors;
  vec decos = {0};
  vec *volatile dp = &decos;
  int n_funcs = ml->funcs.n, n_classes = ml->classes.n, n_consts = ml->consts.n;

  p->recover = &jb;
  if (setjmp(jb) != 0) {
    p->recover = saved;
    p->depth = 0;
    p->loops = 0;
    p->fn = NULL;
    p->in_class = false;
    synchronize(p, start);
    goto check;
  }
  if (at(p, ASC_TK_AT)) {
    first_deco = p->pos;
    decorators(p, dp);
  }
  /* Host code: anything but imports and kernel-decorated defs. */
  {
    asc__tok_kind k = tok(p)->kind;
    bool kernel = false;
    for (int i = 0; i < dp->n; i++)
      if (decorator_id(p, dp->v[i]) != ASC_BI_NONE)
        kernel = true;
    if (k == ASC_TK_KW_IMPORT || k == ASC_TK_KW_FROM || kernel)
      strict = true;
    else
      strict = false;
    if (dp->n > 0 && k == ASC_TK_KW_ASYNC)
      syntax_error_at(p, tok(p)->loc, "'async' functions are not supported "
                      "in kernels");
    if (dp->n > 0 && k != ASC_TK_KW_DEF && k != ASC_TK_KW_CLASS)
      syntax_error_at(p, tok(p)->loc, "expected 'def' or 'class' after "
                      "decorator");
  }
  if (!strict)
    p->c->max_errors = INT_MAX;
  module_item(p, ml, strict, first_deco, dp);
  p->recover = saved;
check:
  p->c->max_errors = saved_max;
  if (!strict && p->c->nerrors > mark.nerrors) {
    asc__diag_mark m = mark;
    /* the warning quotes the first withdrawn error: "... error: WHY\n" */
    char why[160] = "";
    const char *d = p->c->diag.data ? p->c->diag.data + m.len : NULL;
    const char *e = d ? strstr(d, ": error: ") : NULL;
    if (e != NULL) {
      size_t n = strcspn(e + 9, "\n");
      snprintf(why, sizeof why, ": %.*s", (int)(n < 150 ? n : 150), e + 9);
    }
    asc__diag_rollback(p->c, m);
    ml->funcs.n = n_funcs;
    ml->classes.n = n_classes;
    ml->consts.n = n_consts;
    asc__diag_warning(p->c, p->t[start].loc, "module-level code that is not "
                      "kernel code is ignored%s", why);
  }
  if (p->c->nerrors >= p->c->max_errors)
    asc__cctx_throw(p->c, ASC_FAIL_ERRORS);
}

/* file: (NEWLINE | module_statement)* EOF */
asc__ast_module *asc__parse(asc__cctx *c) {
  parser P, *p = &P;
  module_lists ml;
  asc__ast_module *m;

  memset(p, 0, sizeof *p);
  memset(&ml, 0, sizeof ml);
  p->c = c;
  p->t = asc__lex(c, &p->ntok);
  m = asc__arena_alloc(c, sizeof *m);
  p->m = m;

  /* module docstring */
  if (at(p, ASC_TK_STR) && (peek_at(p, 1)->kind == ASC_TK_NEWLINE ||
                            peek_at(p, 1)->kind == ASC_TK_EOF) &&
      !(tok(p)->flags & (ASC_TOKF_FSTRING | ASC_TOKF_BYTES))) {
    m->docstring = tok(p)->v.str.s;
    next(p);
    accept(p, ASC_TK_NEWLINE);
  }
  while (!at(p, ASC_TK_EOF)) {
    if (accept(p, ASC_TK_NEWLINE))
      continue;
    if (at(p, ASC_TK_INDENT) || at(p, ASC_TK_DEDENT)) {
      asc__token *t = next(p);
      if (t->kind == ASC_TK_INDENT) {
        asc__diag_error(c, t->loc, "unexpected indent");
        p->pos--;
        skip_block(p);
      }
      continue;
    }
    module_statement(p, &ml);
  }
  m->imports = asc__arena_alloc(c, (size_t)p->imports.n * sizeof *m->imports);
  for (int i = 0; i < p->imports.n; i++)
    m->imports[i] = *(asc__ast_import *)p->imports.v[i];
  m->nimports = p->imports.n;
  m->consts = (asc__ast_const **)ml.consts.v;
  m->nconsts = ml.consts.n;
  m->classes = (asc__ast_class **)ml.classes.v;
  m->nclasses = ml.classes.n;
  m->funcs = (asc__ast_func **)ml.funcs.v;
  m->nfuncs = ml.funcs.n;
  return m;
}
