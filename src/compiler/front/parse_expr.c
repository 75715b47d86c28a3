/*
 * The parser's expressions: one function per grammar rule, from atoms up
 * through the operators by precedence to conditional expressions and
 * lambdas (parser.c parses statements and the module).
 */
#include <string.h>

#include "compiler/front/parse_int.h"

/* ---------------------------------------------------------------- nodes */

static asc__ast_expr *new_expr(parser *p, asc__expr_kind k, asc__loc loc) {
  asc__ast_expr *e = asc__arena_alloc(p->c, sizeof *e);
  e->kind = k;
  e->loc = loc;
  e->depth = 1;
  return e;
}

static int32_t dmax(int32_t a, asc__ast_expr *e) {
  return e != NULL && e->depth > a ? e->depth : a;
}

/* Sets e->depth from its children and enforces the height limit. */
static asc__ast_expr *finish(parser *p, asc__ast_expr *e) {
  int32_t d = 0;
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      d = dmax(d, e->u.tuple.elts[i]);
    break;
  case ASC_EXPR_COMP:
    d = dmax(d, e->comp->elt);
    for (int i = 0; i < e->comp->nfors; i++)
      d = dmax(dmax(d, e->comp->fors[i].target),
               e->comp->fors[i].iter);
    for (int i = 0; i < e->comp->nfors; i++)
      if (e->comp->fors[i].cond != NULL)
        d = dmax(d, e->comp->fors[i].cond);
    break;
  case ASC_EXPR_ATTR: d = dmax(d, e->u.attr.value); break;
  case ASC_EXPR_SUBSCRIPT:
    d = dmax(dmax(d, e->u.sub.value), e->u.sub.index);
    break;
  case ASC_EXPR_SLICE:
    d = dmax(dmax(dmax(d, e->u.slice.lower), e->u.slice.upper),
             e->u.slice.step);
    break;
  case ASC_EXPR_CALL:
    d = dmax(d, e->u.call.func);
    for (int i = 0; i < e->u.call.nargs; i++)
      d = dmax(d, e->u.call.args[i]);
    for (int i = 0; i < e->u.call.nkws; i++)
      d = dmax(d, e->u.call.kws[i].value);
    break;
  case ASC_EXPR_UNARY: d = dmax(d, e->u.unary.operand); break;
  case ASC_EXPR_BINARY:
    d = dmax(dmax(d, e->u.binary.lhs), e->u.binary.rhs);
    break;
  case ASC_EXPR_BOOLOP:
    d = dmax(dmax(d, e->u.boolop.lhs), e->u.boolop.rhs);
    break;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      d = dmax(d, e->u.cmp.operands[i]);
    break;
  case ASC_EXPR_IFEXP:
    d = dmax(dmax(dmax(d, e->u.ifexp.cond), e->u.ifexp.then),
             e->u.ifexp.orelse);
    break;
  case ASC_EXPR_LAMBDA: {
    /* the body counts, so lambdas nested in deep trees stay bounded */
    asc__ast_stmt *s = e->u.lambda.fn->body.stmts[0];
    if (s->kind == ASC_STMT_RETURN)
      d = dmax(d, s->u.ret.value);
    else if (s->kind == ASC_STMT_ASSIGN)
      d = dmax(dmax(d, s->u.assign.targets[0]), s->u.assign.value);
    else
      d = dmax(dmax(d, s->u.aug.target), s->u.aug.value);
    break;
  }
  default:
    break;
  }
  e->depth = d + 1;
  if (e->depth > MAX_TREE_DEPTH)
    asc__diag_fatal(p->c, e->loc, "expression too complex (nested more "
                    "than %d deep)", MAX_TREE_DEPTH);
  return e;
}

/* ------------------------------------------------------------ expressions */

static asc__ast_expr *or_expr(parser *p);
static asc__ast_expr *or_test(parser *p);

static const char *expr_desc(const asc__ast_expr *e) {
  switch (e->kind) {
  case ASC_EXPR_INT:
  case ASC_EXPR_FLOAT:
  case ASC_EXPR_STR: return "literal";
  case ASC_EXPR_BOOL: return e->u.bval ? "True" : "False";
  case ASC_EXPR_NONE: return "None";
  case ASC_EXPR_CALL: return "function call";
  case ASC_EXPR_COMPARE: return "comparison";
  case ASC_EXPR_IFEXP: return "conditional expression";
  case ASC_EXPR_LAMBDA: return "lambda";
  case ASC_EXPR_BOOLOP:
  case ASC_EXPR_BINARY:
  case ASC_EXPR_UNARY: return "expression";
  case ASC_EXPR_SLICE: return "slice";
  default: return "expression";
  }
}

/* Names, attributes and subscripts may be assigned to; tuples of them
 * when `tuple_ok`. */
void asc__parse_check_target(parser *p, asc__ast_expr *e, bool tuple_ok) {
  switch (e->kind) {
  case ASC_EXPR_NAME:
  case ASC_EXPR_ATTR:
  case ASC_EXPR_SUBSCRIPT:
    return;
  case ASC_EXPR_TUPLE:
    if (tuple_ok) {
      if (e->u.tuple.n == 0)
        asc__diag_error(p->c, e->loc, "cannot assign to ()");
      for (int i = 0; i < e->u.tuple.n; i++)
        asc__parse_check_target(p, e->u.tuple.elts[i], true);
      return;
    }
    asc__diag_error(p->c, e->loc, "'tuple' is an illegal expression for "
                    "augmented assignment");
    return;
  default:
    asc__diag_error(p->c, e->loc, "cannot assign to %s%s", expr_desc(e),
                    e->kind == ASC_EXPR_COMPARE || e->kind == ASC_EXPR_CALL
                        ? " here. Maybe you meant '==' instead of '='?"
                        : "");
  }
}

/* comp_for: ('for' exprlist 'in' or_test ('if' or_test)*)+ after the
 * element `elt`; the caller has seen 'for'.  Kernels unroll a
 * comprehension at compile time: inference evaluates each condition for
 * each element (it must be a compile-time constant there). */
static asc__ast_expr *comprehension(parser *p, asc__ast_expr *elt, bool list,
                                    asc__loc loc) {
  asc__ast_expr *e = new_expr(p, ASC_EXPR_COMP, loc);
  asc__ast_comp *c = asc__arena_alloc(p->c, sizeof *c);
  vec v = {0};
  c->elt = elt;
  while (at(p, ASC_TK_KW_FOR) || at(p, ASC_TK_KW_ASYNC)) {
    asc__token *kw = next(p);
    asc__ast_compfor *f = asc__arena_alloc(p->c, sizeof *f);
    if (kw->kind == ASC_TK_KW_ASYNC)
      syntax_error_at(p, kw->loc, "asynchronous comprehensions are not "
                      "supported in kernels");
    f->target = asc__parse_exprlist(p);
    asc__parse_check_target(p, f->target, true);
    if (!accept(p, ASC_TK_KW_IN))
      syntax_error_at(p, tok(p)->loc, "expected 'in' after the 'for' "
                      "target of a comprehension");
    f->iter = or_test(p);
    vpush(p, &v, f);
    while (accept(p, ASC_TK_KW_IF)) {
      asc__ast_expr *cond = or_test(p);
      if (f->cond != NULL) {
        asc__ast_expr *both = new_expr(p, ASC_EXPR_BOOLOP, f->cond->loc);
        both->u.boolop.is_and = true;
        both->u.boolop.lhs = f->cond;
        both->u.boolop.rhs = cond;
        cond = finish(p, both);
      }
      f->cond = cond;
    }
  }
  c->nfors = v.n;
  c->fors = asc__arena_alloc(p->c, sizeof *c->fors * (size_t)v.n);
  for (int i = 0; i < v.n; i++)
    c->fors[i] = *(asc__ast_compfor *)v.v[i];
  e->comp = c;
  c->list = list;
  return finish(p, e);
}

/* strings: STRING+ (adjacent literals concatenate) */
static asc__ast_expr *strings(parser *p) {
  asc__token *first = tok(p);
  asc__ast_expr *e = new_expr(p, ASC_EXPR_STR, first->loc);
  size_t len = 0;
  int i0 = p->pos;
  while (at(p, ASC_TK_STR)) {
    asc__token *t = next(p);
    if (t->flags & ASC_TOKF_FSTRING)
      syntax_error_at(p, t->loc, "f-strings are not supported in kernels");
    if (t->flags & ASC_TOKF_BYTES)
      syntax_error_at(p, t->loc, "bytes literals are not supported in "
                      "kernels");
    len += t->v.str.len;
  }
  {
    char *s = asc__arena_alloc(p->c, len + 1);
    size_t k = 0;
    for (int i = i0; i < p->pos; i++) {
      memcpy(s + k, p->t[i].v.str.s, p->t[i].v.str.len);
      k += p->t[i].v.str.len;
    }
    e->u.str.s = s;
    e->u.str.len = len;
  }
  return e;
}

/* testlist_inner: test (',' test)* [','] -- inside '(' ... ')' */
static asc__ast_expr *paren(parser *p) {
  asc__token *open = next(p);
  asc__ast_expr *e;
  vec v = {0};
  if (accept(p, ASC_TK_RPAR)) {
    e = new_expr(p, ASC_EXPR_TUPLE, open->loc);
    return e;
  }
  if (at(p, ASC_TK_KW_YIELD))
    syntax_error_at(p, tok(p)->loc, "'yield' is not supported in kernels "
                    "(generators are not supported)");
  e = asc__parse_test(p);
  if (at(p, ASC_TK_KW_FOR) || at(p, ASC_TK_KW_ASYNC)) {
    e = comprehension(p, e, false, open->loc);
    expect(p, ASC_TK_RPAR, "'('", open->loc);
    return e;
  }
  if (at(p, ASC_TK_COLONEQUAL))
    syntax_error_at(p, tok(p)->loc, "assignment expressions (:=) are not "
                    "supported in kernels");
  if (!at(p, ASC_TK_COMMA)) {
    expect(p, ASC_TK_RPAR, "'('", open->loc);
    return e;
  }
  vpush(p, &v, e);
  while (accept(p, ASC_TK_COMMA)) {
    if (at(p, ASC_TK_RPAR))
      break;
    vpush(p, &v, asc__parse_test(p));
  }
  expect(p, ASC_TK_RPAR, "'('", open->loc);
  e = new_expr(p, ASC_EXPR_TUPLE, open->loc);
  e->u.tuple.elts = vfinish(&v);
  e->u.tuple.n = v.n;
  return finish(p, e);
}

/* option_display: ('[' | '{') [test (',' test)* [',']] (']' | '}')
 * Only in a decorator, as in fastmath={"contract", "reassoc"}; read as a
 * tuple (kernel_options checks what the elements are). */
static asc__ast_expr *option_display(parser *p) {
  asc__token *open = next(p);
  asc__tok_kind close = open->kind == ASC_TK_LSQB ? ASC_TK_RSQB
                                                  : ASC_TK_RBRACE;
  asc__ast_expr *e;
  vec v = {0};
  while (!at(p, close)) {
    enter(p, open->loc);
    vpush(p, &v, asc__parse_test(p));
    leave(p);
    if (!accept(p, ASC_TK_COMMA))
      break;
  }
  expect(p, close, open->kind == ASC_TK_LSQB ? "'['" : "'{'", open->loc);
  e = new_expr(p, ASC_EXPR_TUPLE, open->loc);
  e->u.tuple.elts = vfinish(&v);
  e->u.tuple.n = v.n;
  return finish(p, e);
}

/* list_display: '[' [test (comp_for | (',' test)* [','])] ']'
 * A tuple of fixed length marked as a list (numpy code writes shapes,
 * axes and arrays to stack as lists). */
static asc__ast_expr *list_display(parser *p) {
  asc__token *open = next(p);
  asc__ast_expr *e;
  vec v = {0};
  while (!at(p, ASC_TK_RSQB)) {
    enter(p, open->loc);
    e = asc__parse_test(p);
    leave(p);
    if (v.n == 0 && (at(p, ASC_TK_KW_FOR) || at(p, ASC_TK_KW_ASYNC))) {
      e = comprehension(p, e, true, open->loc);
      expect(p, ASC_TK_RSQB, "'['", open->loc);
      return e;
    }
    vpush(p, &v, e);
    if (!accept(p, ASC_TK_COMMA))
      break;
  }
  expect(p, ASC_TK_RSQB, "'['", open->loc);
  e = new_expr(p, ASC_EXPR_TUPLE, open->loc);
  e->u.tuple.elts = vfinish(&v);
  e->u.tuple.n = v.n;
  e->u.tuple.list = true;
  return finish(p, e);
}

/* atom: NAME | NUMBER | STRING+ | 'True' | 'False' | 'None'
 *     | '(' [testlist_inner] ')' | list_display */
static asc__ast_expr *atom(parser *p) {
  asc__token *t = tok(p);
  asc__ast_expr *e;
  switch (t->kind) {
  case ASC_TK_NAME:
    next(p);
    e = new_expr(p, ASC_EXPR_NAME, t->loc);
    e->u.name.id = t->v.name;
    return e;
  case ASC_TK_INT:
    next(p);
    if (t->flags & ASC_TOKF_IMAG)
      syntax_error_at(p, t->loc, "complex literals are not supported in "
                      "kernels");
    e = new_expr(p, ASC_EXPR_INT, t->loc);
    e->u.ival = t->v.ival;
    return e;
  case ASC_TK_FLOAT:
    next(p);
    e = new_expr(p, ASC_EXPR_FLOAT, t->loc);
    e->u.fval = t->v.fval;
    e->imag = (t->flags & ASC_TOKF_IMAG) != 0; /* 2.5j */
    return e;
  case ASC_TK_STR:
    return strings(p);
  case ASC_TK_KW_TRUE:
  case ASC_TK_KW_FALSE:
    next(p);
    e = new_expr(p, ASC_EXPR_BOOL, t->loc);
    e->u.bval = t->kind == ASC_TK_KW_TRUE;
    return e;
  case ASC_TK_KW_NONE:
    next(p);
    return new_expr(p, ASC_EXPR_NONE, t->loc);
  case ASC_TK_LPAR:
    return paren(p);
  case ASC_TK_LSQB:
  case ASC_TK_LBRACE:
    if (p->in_decorator)
      return option_display(p);
    if (t->kind == ASC_TK_LSQB)
      return list_display(p);
    next(p);
    if (!at(p, ASC_TK_RBRACE)) {
      enter(p, t->loc);
      (void)asc__parse_test(p);
      leave(p);
      if (at(p, ASC_TK_KW_FOR) || at(p, ASC_TK_KW_ASYNC))
        syntax_error_at(p, t->loc, "dict and set comprehensions are not "
                        "supported in kernels");
    }
    syntax_error_at(p, t->loc, "dict and set displays are not supported in "
                    "kernels");
  case ASC_TK_ELLIPSIS:
    syntax_error_at(p, t->loc, "'...' (Ellipsis) is not supported in "
                    "kernels");
  case ASC_TK_KW_YIELD:
    syntax_error_at(p, t->loc, "'yield' is not supported in kernels "
                    "(generators are not supported)");
  case ASC_TK_KW_AWAIT:
    syntax_error_at(p, t->loc, "'await' is not supported in kernels");
  case ASC_TK_STAR:
    syntax_error_at(p, t->loc, "starred expressions are not supported in "
                    "kernels");
  default:
    if (t->kind >= ASC_TK_KW_FALSE)
      syntax_error_at(p, t->loc, "invalid syntax: unexpected keyword '%s'",
                      asc__tok_spelling(t->kind));
    if (t->kind == ASC_TK_NEWLINE || t->kind == ASC_TK_EOF ||
        t->kind == ASC_TK_DEDENT || t->kind == ASC_TK_INDENT)
      syntax_error_at(p, t->loc, "expected an expression, found %s",
                      describe(t));
    syntax_error_at(p, t->loc, "expected an expression, found %s",
                    describe(t));
  }
}

/* arguments: argument (',' argument)* [',']
 * argument: NAME '=' test | test */
void asc__parse_arguments(parser *p, asc__ast_expr *call, asc__token *open) {
  vec args = {0};
  asc__ast_keyword *kws = NULL;
  int nkws = 0, capkws = 0;
  while (!at(p, ASC_TK_RPAR)) {
    asc__token *t = tok(p);
    if (t->kind == ASC_TK_STAR || t->kind == ASC_TK_DSTAR)
      syntax_error_at(p, t->loc, "%s arguments are not supported in "
                      "kernels", t->kind == ASC_TK_STAR ? "*args"
                                                        : "**kwargs");
    if (t->kind == ASC_TK_NAME && peek_at(p, 1)->kind == ASC_TK_EQUAL) {
      if (nkws == capkws) {
        int nc = capkws ? capkws * 2 : 4;
        asc__ast_keyword *nk = asc__arena_alloc(p->c, (size_t)nc * sizeof *nk);
        if (nkws)
          memcpy(nk, kws, (size_t)nkws * sizeof *nk);
        kws = nk;
        capkws = nc;
      }
      for (int i = 0; i < nkws; i++)
        if (strcmp(kws[i].name, t->v.name) == 0)
          asc__diag_error(p->c, t->loc, "keyword argument repeated: %s",
                          t->v.name);
      next(p);
      next(p);
      kws[nkws].loc = t->loc;
      kws[nkws].name = t->v.name;
      kws[nkws].value = asc__parse_test(p);
      nkws++;
    } else {
      asc__ast_expr *a = asc__parse_test(p);
      /* f(x for x in it): a generator expression, the call's only
       * argument as in Python */
      if (at(p, ASC_TK_KW_FOR) || at(p, ASC_TK_KW_ASYNC)) {
        a = comprehension(p, a, false, a->loc);
        if (args.n > 0 || nkws > 0 || !at(p, ASC_TK_RPAR))
          syntax_error_at(p, a->loc, "Generator expression must be "
                          "parenthesized");
      }
      if (at(p, ASC_TK_COLONEQUAL))
        syntax_error_at(p, tok(p)->loc, "assignment expressions (:=) are "
                        "not supported in kernels");
      if (nkws > 0)
        asc__diag_error(p->c, a->loc, "positional argument follows keyword "
                        "argument");
      vpush(p, &args, a);
    }
    if (!accept(p, ASC_TK_COMMA))
      break;
  }
  expect(p, ASC_TK_RPAR, "'('", open->loc);
  call->u.call.args = vfinish(&args);
  call->u.call.nargs = args.n;
  call->u.call.kws = kws;
  call->u.call.nkws = nkws;
}

/* subscript: test | [test] ':' [test] [':' [test]] */
static asc__ast_expr *subscript(parser *p) {
  asc__ast_expr *lo = NULL, *e;
  asc__loc loc = tok(p)->loc;
  if (at(p, ASC_TK_ELLIPSIS) &&
      (peek_at(p, 1)->kind == ASC_TK_COMMA ||
       peek_at(p, 1)->kind == ASC_TK_RSQB)) {
    next(p); /* a[..., 0]: a slice of the axes not named */
    e = new_expr(p, ASC_EXPR_SLICE, loc);
    e->u.slice.ellipsis = true;
    return finish(p, e);
  }
  if (!at(p, ASC_TK_COLON)) {
    lo = asc__parse_test(p);
    if (!at(p, ASC_TK_COLON))
      return lo;
  }
  next(p);
  e = new_expr(p, ASC_EXPR_SLICE, loc);
  e->u.slice.lower = lo;
  if (!at(p, ASC_TK_COLON) && !at(p, ASC_TK_COMMA) && !at(p, ASC_TK_RSQB))
    e->u.slice.upper = asc__parse_test(p);
  if (accept(p, ASC_TK_COLON))
    if (!at(p, ASC_TK_COMMA) && !at(p, ASC_TK_RSQB))
      e->u.slice.step = asc__parse_test(p);
  return finish(p, e);
}

/* subscriptlist: subscript (',' subscript)* [','] */
static asc__ast_expr *subscriptlist(parser *p, asc__token *open) {
  vec v = {0};
  asc__ast_expr *e = subscript(p);
  if (!at(p, ASC_TK_COMMA)) {
    expect(p, ASC_TK_RSQB, "'['", open->loc);
    return e;
  }
  vpush(p, &v, e);
  while (accept(p, ASC_TK_COMMA)) {
    if (at(p, ASC_TK_RSQB))
      break;
    vpush(p, &v, subscript(p));
  }
  expect(p, ASC_TK_RSQB, "'['", open->loc);
  e = new_expr(p, ASC_EXPR_TUPLE, ((asc__ast_expr *)v.v[0])->loc);
  e->u.tuple.elts = vfinish(&v);
  e->u.tuple.n = v.n;
  return finish(p, e);
}

/* primary: atom trailer*
 * trailer: '(' [arguments] ')' | '[' subscriptlist ']' | '.' NAME */
static asc__ast_expr *primary(parser *p) {
  asc__ast_expr *e = atom(p);
  for (;;) {
    asc__token *t = tok(p);
    asc__ast_expr *n;
    if (t->kind == ASC_TK_LPAR) {
      next(p);
      n = new_expr(p, ASC_EXPR_CALL, e->loc);
      n->u.call.func = e;
      asc__parse_arguments(p, n, t);
    } else if (t->kind == ASC_TK_LSQB) {
      next(p);
      n = new_expr(p, ASC_EXPR_SUBSCRIPT, e->loc);
      n->u.sub.value = e;
      if (at(p, ASC_TK_RSQB))
        syntax_error_at(p, tok(p)->loc, "expected an index inside '[]'");
      n->u.sub.index = subscriptlist(p, t);
    } else if (t->kind == ASC_TK_DOT) {
      asc__token *name;
      next(p);
      name = tok(p);
      if (name->kind != ASC_TK_NAME)
        syntax_error_at(p, name->loc, "expected an attribute name after "
                        "'.'");
      next(p);
      n = new_expr(p, ASC_EXPR_ATTR, e->loc);
      n->u.attr.value = e;
      n->u.attr.attr = name->v.name;
      n->u.attr.attr_loc = name->loc;
    } else {
      return e;
    }
    e = finish(p, n);
  }
}

static asc__ast_expr *factor(parser *p);

/* power: primary ['**' factor] */
static asc__ast_expr *power(parser *p) {
  asc__ast_expr *e;
  if (at(p, ASC_TK_KW_AWAIT))
    syntax_error_at(p, tok(p)->loc, "'await' is not supported in kernels");
  e = primary(p);
  if (at(p, ASC_TK_DSTAR)) {
    asc__token *op = next(p);
    asc__ast_expr *n = new_expr(p, ASC_EXPR_BINARY, e->loc);
    enter(p, op->loc);
    n->u.binary.op = ASC_BIN_POW;
    n->u.binary.lhs = e;
    n->u.binary.rhs = factor(p);
    leave(p);
    e = finish(p, n);
  }
  return e;
}

/* factor: ('+' | '-' | '~') factor | power */
static asc__ast_expr *factor(parser *p) {
  asc__token *t = tok(p);
  asc__unop op;
  asc__ast_expr *e;
  if (t->kind == ASC_TK_MINUS)
    op = ASC_UN_NEG;
  else if (t->kind == ASC_TK_PLUS)
    op = ASC_UN_POS;
  else if (t->kind == ASC_TK_TILDE)
    op = ASC_UN_INVERT;
  else
    return power(p);
  next(p);
  enter(p, t->loc);
  e = new_expr(p, ASC_EXPR_UNARY, t->loc);
  e->u.unary.op = op;
  e->u.unary.operand = factor(p);
  leave(p);
  return finish(p, e);
}

static asc__ast_expr *binary(parser *p, asc__binop op, asc__ast_expr *l,
                             asc__ast_expr *r) {
  asc__ast_expr *e = new_expr(p, ASC_EXPR_BINARY, l->loc);
  e->u.binary.op = op;
  e->u.binary.lhs = l;
  e->u.binary.rhs = r;
  return finish(p, e);
}

/* term: factor (('*' | '/' | '//' | '%') factor)* */
static asc__ast_expr *term(parser *p) {
  asc__ast_expr *e = factor(p);
  for (;;) {
    asc__binop op;
    switch (tok(p)->kind) {
    case ASC_TK_STAR: op = ASC_BIN_MUL; break;
    case ASC_TK_SLASH: op = ASC_BIN_DIV; break;
    case ASC_TK_DSLASH: op = ASC_BIN_FLOORDIV; break;
    case ASC_TK_PERCENT: op = ASC_BIN_MOD; break;
    case ASC_TK_AT: op = ASC_BIN_MATMUL; break; /* rejected by types */
    default: return e;
    }
    next(p);
    e = binary(p, op, e, factor(p));
  }
}

/* arith: term (('+' | '-') term)* */
static asc__ast_expr *arith(parser *p) {
  asc__ast_expr *e = term(p);
  for (;;) {
    asc__binop op;
    if (at(p, ASC_TK_PLUS))
      op = ASC_BIN_ADD;
    else if (at(p, ASC_TK_MINUS))
      op = ASC_BIN_SUB;
    else
      return e;
    next(p);
    e = binary(p, op, e, term(p));
  }
}

/* shift: arith (('<<' | '>>') arith)* */
static asc__ast_expr *shift(parser *p) {
  asc__ast_expr *e = arith(p);
  for (;;) {
    asc__binop op;
    if (at(p, ASC_TK_LSHIFT))
      op = ASC_BIN_LSHIFT;
    else if (at(p, ASC_TK_RSHIFT))
      op = ASC_BIN_RSHIFT;
    else
      return e;
    next(p);
    e = binary(p, op, e, arith(p));
  }
}

/* and_expr: shift ('&' shift)* */
static asc__ast_expr *and_expr(parser *p) {
  asc__ast_expr *e = shift(p);
  while (accept(p, ASC_TK_AMPER))
    e = binary(p, ASC_BIN_BITAND, e, shift(p));
  return e;
}

/* xor_expr: and_expr ('^' and_expr)* */
static asc__ast_expr *xor_expr(parser *p) {
  asc__ast_expr *e = and_expr(p);
  while (accept(p, ASC_TK_CIRCUMFLEX))
    e = binary(p, ASC_BIN_BITXOR, e, and_expr(p));
  return e;
}

/* or_expr: xor_expr ('|' xor_expr)* */
static asc__ast_expr *or_expr(parser *p) {
  asc__ast_expr *e = xor_expr(p);
  while (accept(p, ASC_TK_VBAR))
    e = binary(p, ASC_BIN_BITOR, e, xor_expr(p));
  return e;
}

/* comparison: or_expr (comp_op or_expr)*
 * comp_op: '<' | '>' | '==' | '>=' | '<=' | '!=' | 'is' ['not'] */
static asc__ast_expr *comparison(parser *p) {
  asc__ast_expr *e = or_expr(p);
  asc__ast_expr *n;
  vec ops = {0}, operands = {0};
  for (;;) {
    asc__token *t = tok(p);
    asc__cmpop op;
    switch (t->kind) {
    case ASC_TK_EQEQUAL: op = ASC_CMP_EQ; break;
    case ASC_TK_NOTEQUAL: op = ASC_CMP_NE; break;
    case ASC_TK_LESS: op = ASC_CMP_LT; break;
    case ASC_TK_LESSEQUAL: op = ASC_CMP_LE; break;
    case ASC_TK_GREATER: op = ASC_CMP_GT; break;
    case ASC_TK_GREATEREQUAL: op = ASC_CMP_GE; break;
    case ASC_TK_KW_IS: op = ASC_CMP_IS; break;
    case ASC_TK_KW_IN:
      syntax_error_at(p, t->loc, "the 'in' operator is not supported in "
                      "kernels");
    case ASC_TK_KW_NOT:
      if (peek_at(p, 1)->kind == ASC_TK_KW_IN)
        syntax_error_at(p, t->loc, "the 'not in' operator is not supported "
                        "in kernels");
      goto done;
    default:
      goto done;
    }
    next(p);
    if (op == ASC_CMP_IS && accept(p, ASC_TK_KW_NOT))
      op = ASC_CMP_ISNOT;
    if (operands.n == 0)
      vpush(p, &operands, e);
    {
      asc__cmpop *slot = asc__arena_alloc(p->c, sizeof *slot);
      *slot = op;
      vpush(p, &ops, slot);
    }
    vpush(p, &operands, or_expr(p));
  }
done:
  if (ops.n == 0)
    return e;
  n = new_expr(p, ASC_EXPR_COMPARE, e->loc);
  n->u.cmp.n = ops.n;
  n->u.cmp.ops = asc__arena_alloc(p->c, (size_t)ops.n * sizeof(asc__cmpop));
  for (int i = 0; i < ops.n; i++)
    n->u.cmp.ops[i] = *(asc__cmpop *)ops.v[i];
  n->u.cmp.operands = vfinish(&operands);
  return finish(p, n);
}

/* not_test: 'not' not_test | comparison */
static asc__ast_expr *not_test(parser *p) {
  asc__token *t = tok(p);
  asc__ast_expr *e;
  if (t->kind != ASC_TK_KW_NOT)
    return comparison(p);
  next(p);
  enter(p, t->loc);
  e = new_expr(p, ASC_EXPR_UNARY, t->loc);
  e->u.unary.op = ASC_UN_NOT;
  e->u.unary.operand = not_test(p);
  leave(p);
  return finish(p, e);
}

static asc__ast_expr *boolop(parser *p, bool is_and, asc__ast_expr *l,
                             asc__ast_expr *r) {
  asc__ast_expr *e = new_expr(p, ASC_EXPR_BOOLOP, l->loc);
  e->u.boolop.is_and = is_and;
  e->u.boolop.lhs = l;
  e->u.boolop.rhs = r;
  return finish(p, e);
}

/* and_test: not_test ('and' not_test)* */
static asc__ast_expr *and_test(parser *p) {
  asc__ast_expr *e = not_test(p);
  while (accept(p, ASC_TK_KW_AND))
    e = boolop(p, true, e, not_test(p));
  return e;
}

/* or_test: and_test ('or' and_test)* */
static asc__ast_expr *or_test(parser *p) {
  asc__ast_expr *e = and_test(p);
  while (accept(p, ASC_TK_KW_OR))
    e = boolop(p, false, e, and_test(p));
  return e;
}

asc__ast_func *asc__parse_new_func(parser *p, asc__func_kind k,
                                   asc__loc loc, const char *name) {
  asc__ast_func *f = asc__arena_alloc(p->c, sizeof *f);
  f->kind = k;
  f->loc = loc;
  f->name = name;
  f->opts.debug = -1;
  f->opts.boundscheck = -1;
  f->opts.fastmath = -1;
  f->parent = p->fn;
  if (p->fn != NULL)
    p->fn->has_nested = true;
  return f;
}

/* lambdef: 'lambda' [NAME (',' NAME)*] ':' lambda_body
 * lambda_body: test | target ('=' | augassign) test
 * (the assignment form is the seed's parallel_for body) */
static asc__ast_expr *lambdef(parser *p) {
  asc__token *kw = next(p);
  asc__ast_func *f =
      asc__parse_new_func(p, ASC_FUNC_LAMBDA, kw->loc, "<lambda>");
  asc__ast_func *saved_fn = p->fn;
  int saved_loops = p->loops;
  asc__ast_expr *e = new_expr(p, ASC_EXPR_LAMBDA, kw->loc), *body;
  asc__ast_stmt *s;
  vec params = {0};
  asc__binop op;

  while (!at(p, ASC_TK_COLON)) {
    asc__token *t = tok(p);
    asc__ast_param *prm;
    if (t->kind == ASC_TK_STAR || t->kind == ASC_TK_DSTAR)
      syntax_error_at(p, t->loc, "%s parameters are not supported in "
                      "kernels", t->kind == ASC_TK_STAR ? "*args"
                                                        : "**kwargs");
    if (t->kind != ASC_TK_NAME)
      syntax_error_at(p, t->loc, "expected a parameter name, found %s",
                      describe(t));
    next(p);
    for (int i = 0; i < params.n; i++)
      if (strcmp(((asc__ast_param *)params.v[i])->name, t->v.name) == 0)
        asc__diag_error(p->c, t->loc, "duplicate argument '%s' in lambda",
                        t->v.name);
    prm = asc__arena_alloc(p->c, sizeof *prm);
    prm->loc = t->loc;
    prm->name = t->v.name;
    if (at(p, ASC_TK_EQUAL))
      syntax_error_at(p, tok(p)->loc, "default values of lambda parameters "
                      "are not supported in kernels");
    vpush(p, &params, prm);
    if (!accept(p, ASC_TK_COMMA))
      break;
  }
  expect(p, ASC_TK_COLON, "'lambda'", kw->loc);
  f->nparams = params.n;
  f->params = asc__arena_alloc(p->c, (size_t)params.n * sizeof *f->params);
  for (int i = 0; i < params.n; i++)
    f->params[i] = *(asc__ast_param *)params.v[i];

  p->fn = f;
  p->loops = 0;
  body = asc__parse_test(p);
  if (at(p, ASC_TK_EQUAL)) {
    asc__ast_expr **targets;
    next(p);
    asc__parse_check_target(p, body, true);
    s = new_stmt(p, ASC_STMT_ASSIGN, body->loc);
    targets = asc__arena_alloc(p->c, sizeof *targets);
    targets[0] = body;
    s->u.assign.targets = targets;
    s->u.assign.ntargets = 1;
    s->u.assign.value = asc__parse_test(p);
  } else if (asc__parse_is_augassign(tok(p)->kind, &op)) {
    next(p);
    asc__parse_check_target(p, body, false);
    s = new_stmt(p, ASC_STMT_AUGASSIGN, body->loc);
    s->u.aug.op = op;
    s->u.aug.target = body;
    s->u.aug.value = asc__parse_test(p);
  } else {
    s = new_stmt(p, ASC_STMT_RETURN, body->loc);
    s->u.ret.value = body;
  }
  p->fn = saved_fn;
  p->loops = saved_loops;
  f->body.stmts = asc__arena_alloc(p->c, sizeof(asc__ast_stmt *));
  f->body.stmts[0] = s;
  f->body.n = 1;
  e->u.lambda.fn = f;
  return finish(p, e);
}

/* test: or_test ['if' or_test 'else' test] | lambdef */
asc__ast_expr *asc__parse_test(parser *p) {
  asc__token *t = tok(p);
  asc__ast_expr *e;
  enter(p, t->loc);
  if (t->kind == ASC_TK_KW_LAMBDA) {
    e = lambdef(p);
    leave(p);
    return e;
  }
  e = or_test(p);
  if (at(p, ASC_TK_KW_IF)) {
    asc__token *kw = next(p);
    asc__ast_expr *n = new_expr(p, ASC_EXPR_IFEXP, e->loc);
    n->u.ifexp.then = e;
    n->u.ifexp.cond = or_test(p);
    if (!accept(p, ASC_TK_KW_ELSE))
      syntax_error_at(p, tok(p)->loc, "expected 'else' after 'if' "
                      "expression (to complete the conditional expression "
                      "at line %d)", (int)kw->loc.line);
    n->u.ifexp.orelse = asc__parse_test(p);
    e = finish(p, n);
  }
  leave(p);
  return e;
}

/* testlist: test (',' test)* [','] -- a Tuple when there is a comma */
asc__ast_expr *asc__parse_testlist(parser *p) {
  asc__ast_expr *e = asc__parse_test(p);
  asc__ast_expr *n;
  vec v = {0};
  if (!at(p, ASC_TK_COMMA))
    return e;
  vpush(p, &v, e);
  while (accept(p, ASC_TK_COMMA)) {
    asc__tok_kind k = tok(p)->kind;
    if (k == ASC_TK_NEWLINE || k == ASC_TK_EQUAL || k == ASC_TK_SEMI ||
        k == ASC_TK_COLON || k == ASC_TK_EOF ||
        asc__parse_is_augassign(k, NULL))
      break;
    vpush(p, &v, asc__parse_test(p));
  }
  n = new_expr(p, ASC_EXPR_TUPLE, e->loc);
  n->u.tuple.elts = vfinish(&v);
  n->u.tuple.n = v.n;
  return finish(p, n);
}

/* exprlist: or_expr (',' or_expr)* [','] -- for-loop targets */
asc__ast_expr *asc__parse_exprlist(parser *p) {
  asc__ast_expr *e = or_expr(p);
  asc__ast_expr *n;
  vec v = {0};
  if (!at(p, ASC_TK_COMMA))
    return e;
  vpush(p, &v, e);
  while (accept(p, ASC_TK_COMMA)) {
    if (at(p, ASC_TK_KW_IN))
      break;
    vpush(p, &v, or_expr(p));
  }
  n = new_expr(p, ASC_EXPR_TUPLE, e->loc);
  n->u.tuple.elts = vfinish(&v);
  n->u.tuple.n = v.n;
  return finish(p, n);
}
