/*
 * Deep copies of helper trees, so that each typed instance of a helper has
 * its own type slots.  Symbols owned by the copied function (and by the
 * functions nested in it) are copied and every name is rebound to the
 * copies; module-level symbols are shared.
 */
#include <string.h>

#include "compiler/types/infer.h"

typedef struct pair {
  const void *from;
  void *to;
} pair;

typedef struct cloner {
  asc__cctx *c;
  pair *syms;
  int nsyms, capsyms;
  pair *fns;
  int nfns, capfns;
  /* names of these symbols become copies of these expressions */
  asc__sym *const *sfrom;
  asc__ast_expr *const *sto;
  int nsubst;
} cloner;

static void put(cloner *k, pair **v, int *n, int *cap, const void *from,
                void *to) {
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 32;
    pair *nv = asc__arena_alloc(k->c, sizeof *nv * (size_t)nc);
    if (*n > 0)
      memcpy(nv, *v, sizeof *nv * (size_t)*n);
    *v = nv;
    *cap = nc;
  }
  (*v)[*n].from = from;
  (*v)[*n].to = to;
  (*n)++;
}

static void *get(pair *v, int n, const void *from) {
  for (int i = 0; i < n; i++)
    if (v[i].from == from)
      return v[i].to;
  return NULL;
}

static asc__sym *map_sym(cloner *k, asc__sym *s) {
  asc__sym *m = s ? get(k->syms, k->nsyms, s) : NULL;
  return m ? m : s;
}

static void *dup(cloner *k, const void *p, size_t size) {
  void *d;
  if (p == NULL)
    return NULL;
  d = asc__arena_alloc(k->c, size);
  memcpy(d, p, size);
  return d;
}

static asc__ast_func *clone_fn(cloner *k, const asc__ast_func *fn,
                               asc__ast_func *parent, int depth);
static asc__ast_expr *clone_expr(cloner *k, const asc__ast_expr *e,
                                 int depth);
static void clone_block(cloner *k, asc__ast_block *b, int depth);

static asc__ast_expr **clone_exprs(cloner *k, asc__ast_expr *const *v, int n,
                                   int depth) {
  asc__ast_expr **d;
  if (v == NULL)
    return NULL;
  d = asc__arena_alloc(k->c, sizeof *d * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++)
    d[i] = clone_expr(k, v[i], depth + 1);
  return d;
}

static asc__ast_expr *clone_expr(cloner *k, const asc__ast_expr *e,
                                 int depth) {
  asc__ast_expr *d;
  if (e == NULL)
    return NULL;
  ASC_CHECK(k->c, depth <= 4 * ASC_MAX_NESTING);
  if (e->kind == ASC_EXPR_NAME)
    for (int i = 0; i < k->nsubst; i++)
      if (e->u.name.sym == k->sfrom[i])
        return clone_expr(k, k->sto[i], depth + 1);
  d = dup(k, e, sizeof *e);
  d->type = NULL;
  if (e->comp != NULL) {
    /* a comprehension, unrolled or not: the copy unrolls it again */
    asc__ast_comp *c = dup(k, e->comp, sizeof *e->comp);
    c->elt = clone_expr(k, c->elt, depth + 1);
    c->fors = dup(k, c->fors, sizeof *c->fors * (size_t)c->nfors);
    for (int i = 0; i < c->nfors; i++) {
      c->fors[i].target = clone_expr(k, c->fors[i].target, depth + 1);
      c->fors[i].iter = clone_expr(k, c->fors[i].iter, depth + 1);
      c->fors[i].cond = clone_expr(k, c->fors[i].cond, depth + 1);
    }
    d->kind = ASC_EXPR_COMP;
    d->comp = c;
    return d;
  }
  switch (e->kind) {
  case ASC_EXPR_NAME:
    d->u.name.sym = map_sym(k, e->u.name.sym);
    break;
  case ASC_EXPR_TUPLE:
    d->u.tuple.elts = clone_exprs(k, e->u.tuple.elts, e->u.tuple.n, depth);
    break;
  case ASC_EXPR_ATTR:
    d->u.attr.value = clone_expr(k, e->u.attr.value, depth + 1);
    break;
  case ASC_EXPR_SUBSCRIPT:
    d->u.sub.value = clone_expr(k, e->u.sub.value, depth + 1);
    d->u.sub.index = clone_expr(k, e->u.sub.index, depth + 1);
    break;
  case ASC_EXPR_SLICE:
    d->u.slice.ellipsis = e->u.slice.ellipsis;
    d->u.slice.lower = clone_expr(k, e->u.slice.lower, depth + 1);
    d->u.slice.upper = clone_expr(k, e->u.slice.upper, depth + 1);
    d->u.slice.step = clone_expr(k, e->u.slice.step, depth + 1);
    break;
  case ASC_EXPR_CALL: {
    /* rargs share nodes with args and keyword values: map them. */
    pair *m = NULL;
    int nm = 0, capm = 0;
    d->u.call.func = clone_expr(k, e->u.call.func, depth + 1);
    d->u.call.args = asc__arena_alloc(
        k->c, sizeof *d->u.call.args * (size_t)(e->u.call.nargs + 1));
    for (int i = 0; i < e->u.call.nargs; i++) {
      d->u.call.args[i] = clone_expr(k, e->u.call.args[i], depth + 1);
      put(k, &m, &nm, &capm, e->u.call.args[i], d->u.call.args[i]);
    }
    d->u.call.kws = asc__arena_alloc(
        k->c, sizeof *d->u.call.kws * (size_t)(e->u.call.nkws + 1));
    for (int i = 0; i < e->u.call.nkws; i++) {
      d->u.call.kws[i] = e->u.call.kws[i];
      d->u.call.kws[i].value =
          clone_expr(k, e->u.call.kws[i].value, depth + 1);
      put(k, &m, &nm, &capm, e->u.call.kws[i].value, d->u.call.kws[i].value);
    }
    if (e->u.call.rargs != NULL) {
      d->u.call.rargs = asc__arena_alloc(
          k->c, sizeof *d->u.call.rargs * (size_t)(e->u.call.nrargs + 1));
      for (int i = 0; i < e->u.call.nrargs; i++) {
        asc__ast_expr *a = e->u.call.rargs[i];
        asc__ast_expr *ma = a ? get(m, nm, a) : NULL;
        /* a default value filled in by the resolver: copy it */
        d->u.call.rargs[i] = ma ? ma : clone_expr(k, a, depth + 1);
      }
    }
    break;
  }
  case ASC_EXPR_UNARY:
    d->u.unary.operand = clone_expr(k, e->u.unary.operand, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    d->u.binary.lhs = clone_expr(k, e->u.binary.lhs, depth + 1);
    d->u.binary.rhs = clone_expr(k, e->u.binary.rhs, depth + 1);
    break;
  case ASC_EXPR_BOOLOP:
    d->u.boolop.lhs = clone_expr(k, e->u.boolop.lhs, depth + 1);
    d->u.boolop.rhs = clone_expr(k, e->u.boolop.rhs, depth + 1);
    break;
  case ASC_EXPR_COMPARE:
    d->u.cmp.ops = dup(k, e->u.cmp.ops,
                       sizeof *e->u.cmp.ops * (size_t)(e->u.cmp.n + 1));
    d->u.cmp.operands =
        clone_exprs(k, e->u.cmp.operands, e->u.cmp.n + 1, depth);
    break;
  case ASC_EXPR_IFEXP:
    d->u.ifexp.cond = clone_expr(k, e->u.ifexp.cond, depth + 1);
    d->u.ifexp.then = clone_expr(k, e->u.ifexp.then, depth + 1);
    d->u.ifexp.orelse = clone_expr(k, e->u.ifexp.orelse, depth + 1);
    break;
  case ASC_EXPR_LAMBDA: {
    asc__ast_func *parent = NULL;
    if (e->u.lambda.fn->parent != NULL)
      parent = get(k->fns, k->nfns, e->u.lambda.fn->parent);
    d->u.lambda.fn = clone_fn(k, e->u.lambda.fn, parent, depth + 1);
    break;
  }
  default:
    break;
  }
  return d;
}

static asc__ast_stmt *clone_stmt(cloner *k, const asc__ast_stmt *s,
                                 int depth) {
  asc__ast_stmt *d = dup(k, s, sizeof *s);
  switch (s->kind) {
  case ASC_STMT_EXPR:
    d->u.expr.value = clone_expr(k, s->u.expr.value, depth + 1);
    break;
  case ASC_STMT_ASSIGN:
    d->u.assign.targets = clone_exprs(k, s->u.assign.targets,
                                      s->u.assign.ntargets, depth);
    d->u.assign.value = clone_expr(k, s->u.assign.value, depth + 1);
    break;
  case ASC_STMT_AUGASSIGN:
    d->u.aug.target = clone_expr(k, s->u.aug.target, depth + 1);
    d->u.aug.value = clone_expr(k, s->u.aug.value, depth + 1);
    break;
  case ASC_STMT_ANNASSIGN:
    d->u.ann.target = clone_expr(k, s->u.ann.target, depth + 1);
    d->u.ann.annotation = clone_expr(k, s->u.ann.annotation, depth + 1);
    d->u.ann.value = clone_expr(k, s->u.ann.value, depth + 1);
    break;
  case ASC_STMT_IF:
    d->u.if_.cond = clone_expr(k, s->u.if_.cond, depth + 1);
    clone_block(k, &d->u.if_.body, depth + 1);
    clone_block(k, &d->u.if_.orelse, depth + 1);
    break;
  case ASC_STMT_FOR: {
    /* start/stop/step point into iter's arguments */
    asc__ast_expr *it = clone_expr(k, s->u.for_.iter, depth + 1);
    asc__ast_expr **b[3] = {&d->u.for_.start, &d->u.for_.stop,
                            &d->u.for_.step};
    d->u.for_.target = clone_expr(k, s->u.for_.target, depth + 1);
    for (int j = 0; j < 3; j++) {
      asc__ast_expr *orig = *b[j];
      asc__ast_expr *found = NULL;
      if (orig == NULL)
        continue;
      if (s->u.for_.iter != NULL && s->u.for_.iter->kind == ASC_EXPR_CALL)
        for (int i = 0; i < s->u.for_.iter->u.call.nargs; i++)
          if (s->u.for_.iter->u.call.args[i] == orig)
            found = it->u.call.args[i];
      *b[j] = found ? found : clone_expr(k, orig, depth + 1);
    }
    d->u.for_.iter = it;
    clone_block(k, &d->u.for_.body, depth + 1);
    break;
  }
  case ASC_STMT_WHILE:
    d->u.while_.cond = clone_expr(k, s->u.while_.cond, depth + 1);
    clone_block(k, &d->u.while_.body, depth + 1);
    break;
  case ASC_STMT_RETURN:
    d->u.ret.value = clone_expr(k, s->u.ret.value, depth + 1);
    break;
  case ASC_STMT_ASSERT:
    d->u.assert_.test = clone_expr(k, s->u.assert_.test, depth + 1);
    d->u.assert_.msg = clone_expr(k, s->u.assert_.msg, depth + 1);
    break;
  case ASC_STMT_RAISE:
    d->u.raise.exc = clone_expr(k, s->u.raise.exc, depth + 1);
    break;
  case ASC_STMT_TRY:
    clone_block(k, &d->u.try_.body, depth + 1);
    d->u.try_.handlers = dup(
        k, s->u.try_.handlers,
        sizeof *s->u.try_.handlers * (size_t)(s->u.try_.nhandlers + 1));
    for (int i = 0; i < s->u.try_.nhandlers; i++) {
      asc__ast_handler *h = &d->u.try_.handlers[i];
      h->type = clone_expr(k, h->type, depth + 1);
      h->name_sym = map_sym(k, h->name_sym);
      clone_block(k, &h->body, depth + 1);
    }
    clone_block(k, &d->u.try_.orelse, depth + 1);
    clone_block(k, &d->u.try_.finalbody, depth + 1);
    break;
  case ASC_STMT_WITH:
    d->u.with.ctx = clone_expr(k, s->u.with.ctx, depth + 1);
    clone_block(k, &d->u.with.body, depth + 1);
    break;
  case ASC_STMT_FUNCDEF: {
    asc__ast_func *parent = s->u.funcdef.fn->parent
                                ? get(k->fns, k->nfns, s->u.funcdef.fn->parent)
                                : NULL;
    d->u.funcdef.fn = clone_fn(k, s->u.funcdef.fn, parent, depth + 1);
    break;
  }
  default:
    break;
  }
  return d;
}

static void clone_block(cloner *k, asc__ast_block *b, int depth) {
  asc__ast_stmt **v;
  ASC_CHECK(k->c, depth <= 4 * ASC_MAX_NESTING);
  if (b->stmts == NULL)
    return;
  v = asc__arena_alloc(k->c, sizeof *v * (size_t)(b->n > 0 ? b->n : 1));
  for (int i = 0; i < b->n; i++)
    v[i] = clone_stmt(k, b->stmts[i], depth + 1);
  b->stmts = v;
}

static asc__ast_func *clone_fn(cloner *k, const asc__ast_func *fn,
                               asc__ast_func *parent, int depth) {
  asc__ast_func *d = dup(k, fn, sizeof *fn);
  d->type = NULL;
  d->parent = parent ? parent : fn->parent;
  put(k, &k->fns, &k->nfns, &k->capfns, fn, d);
  /* this function's own symbols first, so the body rebinds to them */
  d->locals = asc__arena_alloc(k->c, sizeof *d->locals *
                                         (size_t)(fn->nlocals + 1));
  for (int i = 0; i < fn->nlocals; i++) {
    asc__sym *s = fn->locals[i];
    if (s != NULL && s->owner == fn) {
      asc__sym *ns = dup(k, s, sizeof *s);
      ns->owner = d;
      ns->type = NULL;
      ns->prev = map_sym(k, s->prev); /* an earlier local: copied */
      put(k, &k->syms, &k->nsyms, &k->capsyms, s, ns);
      d->locals[i] = ns;
    } else {
      d->locals[i] = map_sym(k, s);
    }
  }
  d->params = dup(k, fn->params,
                  sizeof *fn->params * (size_t)(fn->nparams + 1));
  for (int i = 0; i < fn->nparams; i++) {
    d->params[i].sym = map_sym(k, fn->params[i].sym);
    d->params[i].annotation = clone_expr(k, fn->params[i].annotation,
                                         depth + 1);
    d->params[i].def = clone_expr(k, fn->params[i].def, depth + 1);
  }
  d->returns = clone_expr(k, fn->returns, depth + 1);
  clone_block(k, &d->body, depth + 1);
  return d;
}

asc__ast_expr *asc__ast_clone_subst(asc__cctx *c, const asc__ast_expr *e,
                                    asc__sym *const *from,
                                    asc__ast_expr *const *to, int n) {
  cloner k;
  memset(&k, 0, sizeof k);
  k.c = c;
  k.sfrom = from;
  k.sto = to;
  k.nsubst = n;
  return clone_expr(&k, e, 0);
}

asc__ast_func *asc__ast_clone_func(asc__cctx *c, const asc__ast_func *fn) {
  cloner k;
  asc__ast_func *d;
  memset(&k, 0, sizeof k);
  k.c = c;
  d = clone_fn(&k, fn, NULL, 0);
  /* nested-def symbols name the copied functions */
  for (int i = 0; i < k.nsyms; i++) {
    asc__sym *s = k.syms[i].to;
    if (s->kind == ASC_SYM_FUNC && s->u.func != NULL) {
      asc__ast_func *m = get(k.fns, k.nfns, s->u.func);
      if (m != NULL)
        s->u.func = m;
    }
  }
  return d;
}

/* ------------------------------------------------------ clearing slots */

static void clear_block(asc__ast_block *b, int depth);

static void clear_expr(asc__ast_expr *e, int depth) {
  if (e == NULL || depth > 4 * ASC_MAX_NESTING)
    return;
  e->type = NULL;
  if (e->comp != NULL) {
    /* unrolled for an earlier signature (its elements may live in a
     * freed arena): a comprehension again */
    e->kind = ASC_EXPR_COMP;
    clear_expr(e->comp->elt, depth + 1);
    for (int i = 0; i < e->comp->nfors; i++) {
      clear_expr(e->comp->fors[i].iter, depth + 1);
      clear_expr(e->comp->fors[i].cond, depth + 1);
    }
    return;
  }
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      clear_expr(e->u.tuple.elts[i], depth + 1);
    break;
  case ASC_EXPR_ATTR:
    clear_expr(e->u.attr.value, depth + 1);
    break;
  case ASC_EXPR_SUBSCRIPT:
    clear_expr(e->u.sub.value, depth + 1);
    clear_expr(e->u.sub.index, depth + 1);
    break;
  case ASC_EXPR_SLICE:
    clear_expr(e->u.slice.lower, depth + 1);
    clear_expr(e->u.slice.upper, depth + 1);
    clear_expr(e->u.slice.step, depth + 1);
    break;
  case ASC_EXPR_CALL:
    clear_expr(e->u.call.func, depth + 1);
    for (int i = 0; i < e->u.call.nargs; i++)
      clear_expr(e->u.call.args[i], depth + 1);
    for (int i = 0; i < e->u.call.nkws; i++)
      clear_expr(e->u.call.kws[i].value, depth + 1);
    for (int i = 0; i < e->u.call.nrargs; i++)
      clear_expr(e->u.call.rargs[i], depth + 1);
    break;
  case ASC_EXPR_UNARY:
    clear_expr(e->u.unary.operand, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    clear_expr(e->u.binary.lhs, depth + 1);
    clear_expr(e->u.binary.rhs, depth + 1);
    break;
  case ASC_EXPR_BOOLOP:
    clear_expr(e->u.boolop.lhs, depth + 1);
    clear_expr(e->u.boolop.rhs, depth + 1);
    break;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      clear_expr(e->u.cmp.operands[i], depth + 1);
    break;
  case ASC_EXPR_IFEXP:
    clear_expr(e->u.ifexp.cond, depth + 1);
    clear_expr(e->u.ifexp.then, depth + 1);
    clear_expr(e->u.ifexp.orelse, depth + 1);
    break;
  case ASC_EXPR_LAMBDA:
    asc__ast_clear_types(e->u.lambda.fn);
    break;
  default:
    break;
  }
}

static void clear_stmt(asc__ast_stmt *s, int depth) {
  switch (s->kind) {
  case ASC_STMT_EXPR:
    clear_expr(s->u.expr.value, depth + 1);
    break;
  case ASC_STMT_ASSIGN:
    for (int i = 0; i < s->u.assign.ntargets; i++)
      clear_expr(s->u.assign.targets[i], depth + 1);
    clear_expr(s->u.assign.value, depth + 1);
    break;
  case ASC_STMT_AUGASSIGN:
    clear_expr(s->u.aug.target, depth + 1);
    clear_expr(s->u.aug.value, depth + 1);
    break;
  case ASC_STMT_ANNASSIGN:
    clear_expr(s->u.ann.target, depth + 1);
    clear_expr(s->u.ann.annotation, depth + 1);
    clear_expr(s->u.ann.value, depth + 1);
    break;
  case ASC_STMT_IF:
    clear_expr(s->u.if_.cond, depth + 1);
    clear_block(&s->u.if_.body, depth + 1);
    clear_block(&s->u.if_.orelse, depth + 1);
    break;
  case ASC_STMT_FOR:
    clear_expr(s->u.for_.target, depth + 1);
    clear_expr(s->u.for_.iter, depth + 1);
    clear_expr(s->u.for_.start, depth + 1);
    clear_expr(s->u.for_.stop, depth + 1);
    clear_expr(s->u.for_.step, depth + 1);
    clear_block(&s->u.for_.body, depth + 1);
    break;
  case ASC_STMT_WHILE:
    clear_expr(s->u.while_.cond, depth + 1);
    clear_block(&s->u.while_.body, depth + 1);
    break;
  case ASC_STMT_RETURN:
    clear_expr(s->u.ret.value, depth + 1);
    break;
  case ASC_STMT_ASSERT:
    clear_expr(s->u.assert_.test, depth + 1);
    clear_expr(s->u.assert_.msg, depth + 1);
    break;
  case ASC_STMT_RAISE:
    clear_expr(s->u.raise.exc, depth + 1);
    break;
  case ASC_STMT_TRY:
    clear_block(&s->u.try_.body, depth + 1);
    for (int i = 0; i < s->u.try_.nhandlers; i++) {
      clear_expr(s->u.try_.handlers[i].type, depth + 1);
      if (s->u.try_.handlers[i].name_sym != NULL)
        s->u.try_.handlers[i].name_sym->type = NULL;
      clear_block(&s->u.try_.handlers[i].body, depth + 1);
    }
    clear_block(&s->u.try_.orelse, depth + 1);
    clear_block(&s->u.try_.finalbody, depth + 1);
    break;
  case ASC_STMT_WITH:
    clear_expr(s->u.with.ctx, depth + 1);
    clear_block(&s->u.with.body, depth + 1);
    break;
  case ASC_STMT_FUNCDEF:
    asc__ast_clear_types(s->u.funcdef.fn);
    break;
  default:
    break;
  }
}

static void clear_block(asc__ast_block *b, int depth) {
  if (depth > 4 * ASC_MAX_NESTING)
    return;
  for (int i = 0; i < b->n; i++)
    clear_stmt(b->stmts[i], depth + 1);
}

void asc__ast_clear_types(asc__ast_func *fn) {
  if (fn == NULL)
    return;
  fn->type = NULL;
  for (int i = 0; i < fn->nlocals; i++)
    if (fn->locals[i] != NULL && fn->locals[i]->owner == fn) {
      fn->locals[i]->type = NULL;
      fn->locals[i]->split = false;
    }
  for (int i = 0; i < fn->nparams; i++) {
    clear_expr(fn->params[i].annotation, 0);
    clear_expr(fn->params[i].def, 0);
  }
  clear_expr(fn->returns, 0);
  clear_block(&fn->body, 0);
}
