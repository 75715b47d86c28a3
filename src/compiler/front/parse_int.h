/*
 * Shared by the files of the parser (parser.c: statements and module
 * level; parse_expr.c: expressions) and by nothing else: the parser's
 * state, its token cursor and its error exit.
 */
#ifndef ASC_PARSE_INT_H
#define ASC_PARSE_INT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compiler/front/frontend.h"
#include "compiler/front/lexer.h"

/* Height limit of expression trees built by loops (a + b + c ... ,
 * f()()(), elif chains), so later recursive passes stay bounded. */
#define MAX_TREE_DEPTH 1000

typedef struct vec {
  void **v;
  int n, cap;
} vec;

typedef struct parser {
  asc__cctx *c;
  asc__token *t;
  int ntok, pos;
  size_t last_end;       /* end offset of the last consumed real token */
  int depth;             /* nesting of blocks and expressions */
  jmp_buf *recover;      /* innermost statement() */
  int err_pos;           /* token of the last syntax error */
  asc__ast_func *fn;     /* innermost function; NULL at module level */
  int loops;             /* loops around this point in fn */
  bool in_class;
  bool in_decorator;     /* [..] and {..} of strings are kernel options */
  asc__ast_module *m;
  vec imports;           /* asc__ast_import * */
} parser;

/* ------------------------------------------------------------- helpers */

static inline void vpush(parser *p, vec *v, void *x) {
  if (v->n == v->cap) {
    int ncap = v->cap ? v->cap * 2 : 8;
    void **nv = asc__arena_alloc(p->c, (size_t)ncap * sizeof *nv);
    if (v->n)
      memcpy(nv, v->v, (size_t)v->n * sizeof *nv);
    v->v = nv;
    v->cap = ncap;
  }
  v->v[v->n++] = x;
}

static inline asc__token *tok(parser *p) { return &p->t[p->pos]; }
static inline asc__token *peek_at(parser *p, int k) {
  int i = p->pos + k;
  return &p->t[i < p->ntok ? i : p->ntok - 1];
}
static inline bool at(parser *p, asc__tok_kind k) {
  return tok(p)->kind == k;
}

static inline asc__token *next(parser *p) {
  asc__token *t = tok(p);
  if (t->kind != ASC_TK_EOF) {
    if (t->kind != ASC_TK_NEWLINE && t->kind != ASC_TK_INDENT &&
        t->kind != ASC_TK_DEDENT)
      p->last_end = t->offset + t->len;
    p->pos++;
  }
  return t;
}

static inline bool accept(parser *p, asc__tok_kind k) {
  if (!at(p, k))
    return false;
  next(p);
  return true;
}

/* Reports a syntax error at the current token and abandons the statement. */
_Noreturn static inline void syntax_error_at(parser *p, asc__loc loc,
                                             const char *fmt, ...)
    ASC_PRINTF(3, 4);
_Noreturn static inline void syntax_error_at(parser *p, asc__loc loc,
                                             const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  asc__diag_error(p->c, loc, "%s", msg);
  p->err_pos = p->pos;
  if (p->recover == NULL)
    asc__cctx_throw(p->c, ASC_FAIL_ERRORS);
  longjmp(*p->recover, 1);
}

static inline const char *describe(asc__token *t) {
  return asc__tok_kind_name(t->kind);
}

/* expect ':' etc.; `ctx` (may be NULL) says what the token closes. */
static inline asc__token *expect(parser *p, asc__tok_kind k,
                                 const char *ctx, asc__loc ctx_loc) {
  if (at(p, k))
    return next(p);
  if (ctx != NULL)
    syntax_error_at(p, tok(p)->loc, "expected %s (to close %s at line %d)",
                    asc__tok_kind_name(k), ctx, (int)ctx_loc.line);
  syntax_error_at(p, tok(p)->loc, "expected %s, found %s",
                  asc__tok_kind_name(k), describe(tok(p)));
}

static inline void enter(parser *p, asc__loc loc) {
  if (++p->depth > ASC_MAX_NESTING)
    asc__diag_fatal(p->c, loc, "too deeply nested (more than %d levels)",
                    ASC_MAX_NESTING);
}
static inline void leave(parser *p) { p->depth--; }

static inline asc__ast_stmt *new_stmt(parser *p, asc__stmt_kind k,
                                      asc__loc loc) {
  asc__ast_stmt *s = asc__arena_alloc(p->c, sizeof *s);
  s->kind = k;
  s->loc = loc;
  return s;
}

static inline asc__ast_expr **vfinish(vec *v) {
  return (asc__ast_expr **)v->v;
}

/* -------------------------------------------------------- parse_expr.c */

/* test: or_test ['if' or_test 'else' test] | lambdef */
asc__ast_expr *asc__parse_test(parser *p);
/* testlist: test (',' test)* [','] -- a Tuple when there is a comma */
asc__ast_expr *asc__parse_testlist(parser *p);
/* exprlist: or_expr (',' or_expr)* [','] -- for-loop targets */
asc__ast_expr *asc__parse_exprlist(parser *p);
/* Reports e when it cannot be assigned to (tuple_ok: a tuple can). */
void asc__parse_check_target(parser *p, asc__ast_expr *e, bool tuple_ok);
/* The arguments of call, after its '(' open. */
void asc__parse_arguments(parser *p, asc__ast_expr *call, asc__token *open);
asc__ast_func *asc__parse_new_func(parser *p, asc__func_kind k,
                                   asc__loc loc, const char *name);

/* ------------------------------------------------------------ parser.c */

/* Whether k is an augmented assignment (+= ...); *op (may be NULL) its
 * operator. */
bool asc__parse_is_augassign(asc__tok_kind k, asc__binop *op);

#endif /* ASC_PARSE_INT_H */
