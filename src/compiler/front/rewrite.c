/*
 * Rewrites during name resolution: constructs the later stages do not
 * know become ones they do, in place, before their parts are resolved.
 * Loops over an array, zip() and enumerate() become loops over range()
 * (found while collecting a function's locals, as their targets are
 * locals); numpy's operator ufuncs become the operators, np.linalg.norm
 * a square root of a sum, and a reduction over a tuple of axes one
 * reduction per axis (while resolving calls).
 */
#include <string.h>

#include "compiler/front/resolve_int.h"

asc__ast_expr *asc__rewrite_node(resolver *r, asc__expr_kind k,
                                 asc__loc loc, int32_t depth) {
  asc__ast_expr *e = asc__arena_alloc(r->c, sizeof *e);
  memset(e, 0, sizeof *e);
  e->kind = k;
  e->loc = loc;
  e->depth = depth;
  return e;
}

static asc__ast_expr *synth(resolver *r, asc__expr_kind k, asc__loc loc,
                            int32_t depth) {
  return asc__rewrite_node(r, k, loc, depth);
}

/* `for x in a:` (a an array expression: numpy iterates its first axis)
 * becomes `for <i> in range(a.shape[0]): x = a[<i>]`, <i> a name no
 * source can write; `for x in a.flat:` runs over range(a.size). */
static void array_loop(resolver *r, asc__ast_stmt *s) {
  asc__ast_expr *a = s->u.for_.iter, *x = s->u.for_.target;
  asc__loc loc = a->loc;
  int32_t d = a->depth;
  asc__ast_expr *i = synth(r, ASC_EXPR_NAME, x->loc, 1);
  asc__ast_expr *i2 = synth(r, ASC_EXPR_NAME, x->loc, 1);
  asc__ast_expr *shape = synth(r, ASC_EXPR_ATTR, loc, d + 1);
  asc__ast_expr *zero = synth(r, ASC_EXPR_INT, loc, 1);
  asc__ast_expr *stop = synth(r, ASC_EXPR_SUBSCRIPT, loc, d + 2);
  asc__ast_expr *elem = synth(r, ASC_EXPR_SUBSCRIPT, loc, d + 1);
  asc__ast_stmt *set = asc__arena_alloc(r->c, sizeof *set);
  asc__ast_stmt **stmts = asc__arena_alloc(
      r->c, sizeof *stmts * ((size_t)s->u.for_.body.n + 1));
  i->u.name.id = asc__arena_printf(r->c, "for.%d", r->array_loops++);
  i2->u.name.id = i->u.name.id;
  shape->u.attr.value = a;
  shape->u.attr.attr = "shape";
  shape->u.attr.attr_loc = loc;
  zero->u.ival = 0;
  stop->u.sub.value = shape;
  stop->u.sub.index = zero;
  if (a->kind == ASC_EXPR_ATTR && strcmp(a->u.attr.attr, "flat") == 0) {
    /* for x in a.flat: every element, range(a.size), x = a.flat[<i>] */
    shape->u.attr.value = a->u.attr.value;
    shape->u.attr.attr = "size";
    stop = shape;
  }
  elem->u.sub.value = a;
  elem->u.sub.index = i2;
  memset(set, 0, sizeof *set);
  set->kind = ASC_STMT_ASSIGN;
  set->loc = s->loc;
  set->u.assign.targets = asc__arena_alloc(r->c, sizeof *set->u.assign.targets);
  set->u.assign.targets[0] = x;
  set->u.assign.ntargets = 1;
  set->u.assign.value = elem;
  stmts[0] = set;
  for (int k = 0; k < s->u.for_.body.n; k++)
    stmts[k + 1] = s->u.for_.body.stmts[k];
  s->u.for_.body.stmts = stmts;
  s->u.for_.body.n++;
  s->u.for_.target = i;
  s->u.for_.iter = NULL;
  s->u.for_.stop = stop;
  s->u.for_.over_array = true;
}

/* ---------------------------------------- zip() and enumerate() loops */

static bool is_call_of(const asc__ast_expr *e, const char *name) {
  return e != NULL && e->kind == ASC_EXPR_CALL && e->u.call.func != NULL &&
         e->u.call.func->kind == ASC_EXPR_NAME &&
         strcmp(e->u.call.func->u.name.id, name) == 0;
}

static asc__ast_expr *syn_name(resolver *r, const char *id, asc__loc loc) {
  asc__ast_expr *e = synth(r, ASC_EXPR_NAME, loc, 1);
  e->u.name.id = id;
  return e;
}

/* ---------------------------------------------- `x.shape = v` */

static bool is_shape_target(const asc__ast_expr *t) {
  return t->kind == ASC_EXPR_ATTR && strcmp(t->u.attr.attr, "shape") == 0 &&
         t->u.attr.value->kind == ASC_EXPR_NAME;
}

/* `x = x.reshape(v)` for the target x.shape of statement s. */
static asc__ast_stmt *reshape_stmt(resolver *r, const asc__ast_stmt *s,
                                   asc__ast_expr *t, asc__ast_expr *v) {
  asc__ast_expr *x = t->u.attr.value;
  asc__ast_expr *fn = synth(r, ASC_EXPR_ATTR, t->loc, 2);
  asc__ast_expr *call = synth(r, ASC_EXPR_CALL, t->loc, v->depth + 3);
  asc__ast_stmt *set = asc__arena_alloc(r->c, sizeof *set);
  fn->u.attr.value = syn_name(r, x->u.name.id, x->loc);
  fn->u.attr.attr = "reshape";
  fn->u.attr.attr_loc = t->u.attr.attr_loc;
  call->u.call.func = fn;
  call->u.call.args = asc__arena_alloc(r->c, sizeof *call->u.call.args);
  call->u.call.args[0] = v;
  call->u.call.nargs = 1;
  call->u.call.set_shape = true;
  memset(set, 0, sizeof *set);
  set->kind = ASC_STMT_ASSIGN;
  set->loc = s->loc;
  set->u.assign.targets = asc__arena_alloc(r->c, sizeof *set->u.assign.targets);
  set->u.assign.targets[0] = syn_name(r, x->u.name.id, x->loc);
  set->u.assign.ntargets = 1;
  set->u.assign.value = call;
  return set;
}

/* `x.shape = v` sets the shape of the array x names, in place (numpy
 * makes x a view of its data under the new shape): it is `x = x.reshape(v)`,
 * so a new version of x from there on (resolve.c).  Each target of a
 * chain (Xi.shape = Yi.shape = n) is one statement, in order; v is
 * evaluated at each.  A parameter's shape is the caller's: an error. */
void asc__rewrite_shape_sets(resolver *r, asc__ast_func *fn,
                             asc__ast_block *b) {
  int n = 0;
  bool sets = false;
  asc__ast_stmt **out;
  for (int k = 0; k < b->n; k++) {
    asc__ast_stmt *s = b->stmts[k];
    bool any = false;
    switch (s->kind) {
    case ASC_STMT_IF:
      asc__rewrite_shape_sets(r, fn, &s->u.if_.body);
      asc__rewrite_shape_sets(r, fn, &s->u.if_.orelse);
      break;
    case ASC_STMT_FOR:
      asc__rewrite_shape_sets(r, fn, &s->u.for_.body);
      break;
    case ASC_STMT_WHILE:
      asc__rewrite_shape_sets(r, fn, &s->u.while_.body);
      break;
    case ASC_STMT_TRY:
      asc__rewrite_shape_sets(r, fn, &s->u.try_.body);
      for (int h = 0; h < s->u.try_.nhandlers; h++)
        asc__rewrite_shape_sets(r, fn, &s->u.try_.handlers[h].body);
      asc__rewrite_shape_sets(r, fn, &s->u.try_.orelse);
      asc__rewrite_shape_sets(r, fn, &s->u.try_.finalbody);
      break;
    case ASC_STMT_ASSIGN:
      for (int t = 0; t < s->u.assign.ntargets; t++)
        any |= is_shape_target(s->u.assign.targets[t]);
      break;
    default:
      break;
    }
    n += any ? s->u.assign.ntargets : 1;
    sets |= any;
  }
  if (!sets)
    return;
  out = asc__arena_alloc(r->c, sizeof *out * (size_t)n);
  n = 0;
  for (int k = 0; k < b->n; k++) {
    asc__ast_stmt *s = b->stmts[k];
    bool any = false;
    if (s->kind == ASC_STMT_ASSIGN)
      for (int t = 0; t < s->u.assign.ntargets; t++)
        any |= is_shape_target(s->u.assign.targets[t]);
    if (!any) {
      out[n++] = s;
      continue;
    }
    for (int t = 0; t < s->u.assign.ntargets; t++) {
      asc__ast_expr *tg = s->u.assign.targets[t];
      asc__ast_stmt *one;
      if (is_shape_target(tg)) {
        for (int p = 0; p < fn->nparams; p++)
          if (strcmp(fn->params[p].name, tg->u.attr.value->u.name.id) == 0)
            asc__diag_error(r->c, tg->loc, "cannot set the shape of "
                            "parameter '%s' in a kernel (numpy would change "
                            "the caller's array); rebind the name instead: "
                            "%s = %s.reshape(...)",
                            fn->params[p].name, fn->params[p].name,
                            fn->params[p].name);
        out[n++] = reshape_stmt(r, s, tg, s->u.assign.value);
        continue;
      }
      one = asc__arena_alloc(r->c, sizeof *one);
      *one = *s;
      one->u.assign.targets = &s->u.assign.targets[t];
      one->u.assign.ntargets = 1;
      out[n++] = one;
    }
  }
  b->stmts = out;
  b->n = n;
}

static asc__ast_expr *syn_int(resolver *r, int64_t v, asc__loc loc) {
  asc__ast_expr *e = synth(r, ASC_EXPR_INT, loc, 1);
  e->u.ival = (uint64_t)v;
  return e;
}

static asc__ast_expr *syn_bin(resolver *r, asc__binop op, asc__ast_expr *a,
                              asc__ast_expr *b) {
  asc__ast_expr *e = synth(r, ASC_EXPR_BINARY, a->loc,
                           (a->depth > b->depth ? a->depth : b->depth) + 1);
  e->u.binary.op = op;
  e->u.binary.lhs = a;
  e->u.binary.rhs = b;
  return e;
}

static asc__ast_stmt *syn_assign(resolver *r, asc__ast_expr *t,
                                 asc__ast_expr *v, asc__loc loc) {
  asc__ast_stmt *s = asc__arena_alloc(r->c, sizeof *s);
  memset(s, 0, sizeof *s);
  s->kind = ASC_STMT_ASSIGN;
  s->loc = loc;
  s->u.assign.targets = asc__arena_alloc(r->c, sizeof *s->u.assign.targets);
  s->u.assign.targets[0] = t;
  s->u.assign.ntargets = 1;
  s->u.assign.value = v;
  return s;
}

enum { ITER_MAX = 16 };

typedef struct iter_loop {
  asc__ast_expr *seq[ITER_MAX];   /* range() calls and arrays */
  int nseq;
  asc__ast_expr *name[ITER_MAX];  /* the target names ... */
  int of[ITER_MAX];               /* ... and their sequence (-1: counter) */
  int nnames;
  asc__ast_expr *count_start;     /* enumerate's start, or NULL */
} iter_loop;

/* Pairs the names of target t with the sequences of iterable it. */
static bool iter_targets(resolver *r, iter_loop *L, asc__ast_expr *t,
                         asc__ast_expr *it, bool top) {
  if (is_call_of(it, "enumerate")) {
    if (!top) {
      asc__diag_error(r->c, it->loc, "enumerate() in a kernel loop must be "
                      "the outermost iterable (for i, (x, y) in "
                      "enumerate(zip(a, b)))");
      return false;
    }
    if (it->u.call.nargs < 1 || it->u.call.nargs > 2 ||
        (it->u.call.nkws == 1 &&
         (it->u.call.nargs != 1 ||
          strcmp(it->u.call.kws[0].name, "start") != 0)) ||
        it->u.call.nkws > 1) {
      asc__diag_error(r->c, it->loc, "enumerate() takes a sequence and "
                      "an optional start: enumerate(a), enumerate(a, 1), "
                      "enumerate(a, start=1)");
      return false;
    }
    if (t->kind != ASC_EXPR_TUPLE || t->u.tuple.n != 2 ||
        t->u.tuple.elts[0]->kind != ASC_EXPR_NAME) {
      asc__diag_error(r->c, t->loc, "a kernel loop over enumerate() "
                      "unpacks each pair: for i, x in enumerate(...)");
      return false;
    }
    L->count_start = it->u.call.nargs == 2 ? it->u.call.args[1]
                     : it->u.call.nkws == 1 ? it->u.call.kws[0].value
                                            : NULL;
    L->name[L->nnames] = t->u.tuple.elts[0];
    L->of[L->nnames++] = -1;
    return iter_targets(r, L, t->u.tuple.elts[1], it->u.call.args[0], false);
  }
  if (is_call_of(it, "zip")) {
    int n = it->u.call.nargs;
    if (it->u.call.nkws > 0 || n < 1) {
      asc__diag_error(r->c, it->loc, "zip() in a kernel loop takes "
                      "sequences only (no strict=)");
      return false;
    }
    if (t->kind != ASC_EXPR_TUPLE || t->u.tuple.n != n) {
      asc__diag_error(r->c, t->loc, "a kernel loop over zip() of %d "
                      "sequences unpacks %d names: for x, y in zip(a, b)",
                      n, n);
      return false;
    }
    for (int k = 0; k < n; k++)
      if (!iter_targets(r, L, t->u.tuple.elts[k], it->u.call.args[k], false))
        return false;
    return true;
  }
  if (it->kind == ASC_EXPR_CALL && !is_call_of(it, "range")) {
    asc__diag_error(r->c, it->loc, "zip() and enumerate() in kernel loops "
                    "take range() or arrays (bind other values to a name "
                    "first; a parallel loop: for i in asc.prange(n): "
                    "x = a[i])");
    return false;
  }
  if (t->kind != ASC_EXPR_NAME) {
    asc__diag_error(r->c, t->loc, "kernels unpack zip() and enumerate() "
                    "items into names only (index the rows instead: "
                    "for i, row in enumerate(a): row[0], row[1])");
    return false;
  }
  if (L->nseq == ITER_MAX || L->nnames == ITER_MAX) {
    asc__diag_error(r->c, it->loc, "too many sequences in one loop");
    return false;
  }
  if (top) {
    asc__diag_error(r->c, it->loc, "kernel 'for' loops iterate over "
                    "range(), asc.prange(), asc.static_range(), an array, "
                    "zip() or enumerate()");
    return false;
  }
  L->seq[L->nseq] = it;
  L->name[L->nnames] = t;
  L->of[L->nnames++] = L->nseq++;
  return true;
}

/* The names of a loop target (the first ITER_MAX). */
static void target_names(asc__ast_expr *t, asc__ast_expr **out, int *n) {
  if (t->kind == ASC_EXPR_NAME && *n < ITER_MAX)
    out[(*n)++] = t;
  else if (t->kind == ASC_EXPR_TUPLE)
    for (int k = 0; k < t->u.tuple.n; k++)
      target_names(t->u.tuple.elts[k], out, n);
}

/* `for T in zip(...)` / `enumerate(...)` over range() calls and arrays
 * (their first axis) becomes `for <i> in range(<n>): names = items`,
 * <n> the shortest length; range() arguments and enumerate's start are
 * evaluated once, before the loop, into names no source can write.
 * Returns the number of statements put before the loop. */
static int iter_loop_rewrite(resolver *r, asc__ast_block *b, int at) {
  asc__ast_stmt *s = b->stmts[at];
  asc__ast_expr *it = s->u.for_.iter, *t = s->u.for_.target;
  asc__ast_stmt *pre[3 * ITER_MAX + 1];
  asc__ast_expr *len = NULL, *start[ITER_MAX], *step[ITER_MAX];
  int64_t stepv[ITER_MAX];
  int npre = 0, id = r->array_loops++;
  const char *iv = asc__arena_printf(r->c, "for.%d", id);
  iter_loop L;
  asc__ast_stmt **stmts;
  memset(&L, 0, sizeof L);
  if (!iter_targets(r, &L, t, it, true)) {
    /* a loop of no iterations, so that the body still resolves */
    asc__ast_expr *leaf[ITER_MAX];
    int nleaf = 0;
    asc__ast_stmt **body;
    target_names(t, leaf, &nleaf);
    body = asc__arena_alloc(
        r->c, sizeof *body * ((size_t)s->u.for_.body.n + (size_t)nleaf));
    for (int k = 0; k < nleaf; k++)
      body[k] = syn_assign(r, leaf[k], syn_int(r, 0, it->loc), s->loc);
    for (int k = 0; k < s->u.for_.body.n; k++)
      body[k + nleaf] = s->u.for_.body.stmts[k];
    s->u.for_.body.stmts = body;
    s->u.for_.body.n += nleaf;
    s->u.for_.target = syn_name(r, iv, t->loc);
    s->u.for_.iter = NULL;
    s->u.for_.stop = syn_int(r, 0, it->loc);
    s->u.for_.over_array = true;
    return 0;
  }
  /* once, before the loop */
#define HOIST(x)                                                              \
  do {                                                                        \
    int64_t lit_;                                                             \
    if (!asc__expr_int_literal((x), &lit_)) {                                 \
      const char *h_ = asc__arena_printf(r->c, "for.%d.%d", id, npre);       \
      pre[npre++] = syn_assign(r, syn_name(r, h_, (x)->loc), (x), s->loc);   \
      (x) = syn_name(r, h_, (x)->loc);                                        \
    }                                                                         \
  } while (0)
  if (L.count_start != NULL)
    HOIST(L.count_start);
  for (int k = 0; k < L.nseq; k++) {
    asc__ast_expr *q = L.seq[k], *n;
    if (q->kind != ASC_EXPR_CALL) { /* an array: its first axis */
      asc__ast_expr *shape = synth(r, ASC_EXPR_ATTR, q->loc, q->depth + 1);
      n = synth(r, ASC_EXPR_SUBSCRIPT, q->loc, q->depth + 2);
      shape->u.attr.value = q;
      shape->u.attr.attr = "shape";
      shape->u.attr.attr_loc = q->loc;
      n->u.sub.value = shape;
      n->u.sub.index = syn_int(r, 0, q->loc);
    } else {
      asc__ast_expr *a0, *a1, *a2;
      int na = q->u.call.nargs;
      if (q->u.call.nkws > 0 || na < 1 || na > 3) {
        asc__diag_error(r->c, q->loc, "range() takes 1 to 3 positional "
                        "arguments");
        return 0;
      }
      a0 = q->u.call.args[0];
      a1 = na > 1 ? q->u.call.args[1] : NULL;
      a2 = na > 2 ? q->u.call.args[2] : NULL;
      stepv[k] = 1;
      if (a2 != NULL &&
          (!asc__expr_int_literal(a2, &stepv[k]) || stepv[k] == 0)) {
        asc__diag_error(r->c, a2->loc, "a range() inside zip() or "
                        "enumerate() needs a nonzero integer literal step");
        return 0;
      }
      HOIST(a0);
      if (a1 == NULL) { /* range(stop) */
        start[k] = NULL;
        n = a0;
      } else {
        HOIST(a1);
        start[k] = a0;
        n = stepv[k] > 0 ? syn_bin(r, ASC_BIN_SUB, a1, a0)
                         : syn_bin(r, ASC_BIN_SUB, a0, a1);
        if (stepv[k] != 1 && stepv[k] != -1) {
          int64_t m = stepv[k] > 0 ? stepv[k] : -stepv[k];
          n = syn_bin(r, ASC_BIN_FLOORDIV,
                      syn_bin(r, ASC_BIN_ADD, n, syn_int(r, m - 1, q->loc)),
                      syn_int(r, m, q->loc));
        }
      }
      step[k] = a2;
    }
    if (len == NULL) {
      len = n;
    } else { /* the shortest: min(len, n) */
      asc__ast_expr *m = synth(r, ASC_EXPR_CALL, q->loc,
                               (len->depth > n->depth ? len->depth
                                                      : n->depth) + 1);
      asc__ast_expr **args = asc__arena_alloc(r->c, sizeof *args * 2);
      args[0] = len;
      args[1] = n;
      m->u.call.func = syn_name(r, "min", q->loc);
      m->u.call.args = args;
      m->u.call.nargs = 2;
      len = m;
    }
  }
#undef HOIST
  /* the body: names = items, then the loop's own statements */
  stmts = asc__arena_alloc(r->c, sizeof *stmts *
                                     ((size_t)s->u.for_.body.n + L.nnames));
  for (int k = 0; k < L.nnames; k++) {
    asc__ast_expr *x = L.name[k], *v, *i = syn_name(r, iv, x->loc);
    int q = L.of[k];
    if (q < 0) {
      v = L.count_start ? syn_bin(r, ASC_BIN_ADD, i, L.count_start) : i;
    } else if (L.seq[q]->kind != ASC_EXPR_CALL) {
      v = synth(r, ASC_EXPR_SUBSCRIPT, x->loc, L.seq[q]->depth + 1);
      v->u.sub.value = L.seq[q];
      v->u.sub.index = i;
    } else {
      v = i;
      if (stepv[q] != 1)
        v = syn_bin(r, ASC_BIN_MUL, v,
                    syn_int(r, stepv[q] > 0 ? stepv[q] : -stepv[q], x->loc));
      if (start[q] != NULL)
        v = syn_bin(r, stepv[q] > 0 ? ASC_BIN_ADD : ASC_BIN_SUB, start[q], v);
    }
    stmts[k] = syn_assign(r, x, v, s->loc);
  }
  (void)step;
  for (int k = 0; k < s->u.for_.body.n; k++)
    stmts[L.nnames + k] = s->u.for_.body.stmts[k];
  s->u.for_.body.stmts = stmts;
  s->u.for_.body.n += L.nnames;
  s->u.for_.target = syn_name(r, iv, t->loc);
  s->u.for_.iter = NULL;
  s->u.for_.stop = len;
  s->u.for_.over_array = true;
  if (npre > 0) { /* the hoisted values go before the loop */
    asc__ast_stmt **all = asc__arena_alloc(
        r->c, sizeof *all * ((size_t)b->n + (size_t)npre));
    memcpy(all, b->stmts, sizeof *all * (size_t)at);
    memcpy(all + at, pre, sizeof *all * (size_t)npre);
    memcpy(all + at + npre, b->stmts + at,
           sizeof *all * (size_t)(b->n - at));
    b->stmts = all;
    b->n += npre;
  }
  return npre;
}

/* ------------------------------------------------------------- loops */

int asc__rewrite_loop(resolver *r, asc__ast_block *b, int at) {
  asc__ast_stmt *s = b->stmts[at];
  if (is_call_of(s->u.for_.iter, "zip") ||
      is_call_of(s->u.for_.iter, "enumerate")) {
    int npre = iter_loop_rewrite(r, b, at);
    if (npre > 0)
      return npre;
  }
  if (s->u.for_.iter != NULL && s->u.for_.iter->kind != ASC_EXPR_CALL &&
      s->u.for_.target->kind == ASC_EXPR_NAME)
    array_loop(r, s);
  return 0;
}

/* ------------------------------------------------------- numpy calls */

/* np.linalg.norm(x, ord=None, axis=None, keepdims=False) is
 * np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)): the 2-norm of
 * a vector, the Frobenius norm of a matrix (numpy's definition for
 * ord=None). */
void asc__rewrite_norm(resolver *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs, *x = a[0];
  asc__ast_expr *np = e->u.call.func->u.attr.value->u.attr.value;
  asc__ast_expr *mul, *sum, *fsum, *fsqrt, **sargs, **qargs;
  int32_t d = x->depth + 3;
  if (a[1] != NULL && a[1]->kind != ASC_EXPR_NONE) {
    asc__diag_error(r->c, a[1]->loc, "np.linalg.norm in kernels computes "
                    "the 2-norm of vectors and the Frobenius norm of "
                    "matrices only (ord=None)");
    return;
  }
  if (a[2] != NULL && a[2]->kind == ASC_EXPR_TUPLE) {
    asc__diag_error(r->c, a[2]->loc, "np.linalg.norm in kernels takes one "
                    "axis or None (the norm of the whole array)");
    return;
  }
  mul = synth(r, ASC_EXPR_BINARY, x->loc, x->depth + 1);
  mul->u.binary.op = ASC_BIN_MUL;
  mul->u.binary.lhs = x;
  mul->u.binary.rhs = x;
  fsum = synth(r, ASC_EXPR_ATTR, e->loc, 2);
  fsum->u.attr.value = np;
  fsum->u.attr.attr = "sum";
  fsum->u.attr.attr_loc = e->loc;
  fsum->u.attr.builtin = asc__builtin_get(ASC_BI_NP_SUM);
  fsqrt = synth(r, ASC_EXPR_ATTR, e->loc, 2);
  *fsqrt = *fsum;
  fsqrt->u.attr.attr = "sqrt";
  fsqrt->u.attr.builtin = asc__builtin_get(ASC_BI_SQRT);
  sargs = asc__arena_alloc(r->c, sizeof *sargs * 5);
  sargs[0] = mul;
  sargs[1] = a[2];
  sargs[2] = NULL;
  sargs[3] = NULL;
  sargs[4] = a[3];
  sum = synth(r, ASC_EXPR_CALL, e->loc, d - 1);
  sum->u.call.func = fsum;
  sum->u.call.args = sargs;
  sum->u.call.nargs = 1;
  sum->u.call.rargs = sargs;
  sum->u.call.nrargs = 5;
  sum->u.call.builtin = fsum->u.attr.builtin;
  qargs = asc__arena_alloc(r->c, sizeof *qargs);
  qargs[0] = sum;
  e->u.call.func = fsqrt;
  e->u.call.args = qargs;
  e->u.call.nargs = 1;
  e->u.call.kws = NULL;
  e->u.call.nkws = 0;
  e->u.call.rargs = qargs;
  e->u.call.nrargs = 1;
  e->u.call.builtin = fsqrt->u.attr.builtin;
  e->depth = d;
}

/* numpy's operator ufuncs, np.add(x, y) and the like, are the operators
 * they name (numpy defines them so): the call is rewritten in place into
 * the operator's expression before anything else sees it.  The logical
 * ones compare with zero first, as numpy's truth of an element does. */
typedef enum { UF_BIN, UF_CMP, UF_UN, UF_LOGIC, UF_LNOT, UF_SQUARE } ufunc_kind;
static const struct {
  const char *name;
  ufunc_kind kind;
  int op; /* asc__binop, asc__cmpop or asc__unop */
} op_ufuncs[] = {
    {"add", UF_BIN, ASC_BIN_ADD}, {"subtract", UF_BIN, ASC_BIN_SUB},
    {"multiply", UF_BIN, ASC_BIN_MUL}, {"divide", UF_BIN, ASC_BIN_DIV},
    {"true_divide", UF_BIN, ASC_BIN_DIV},
    {"floor_divide", UF_BIN, ASC_BIN_FLOORDIV},
    {"remainder", UF_BIN, ASC_BIN_MOD}, {"mod", UF_BIN, ASC_BIN_MOD},
    {"bitwise_and", UF_BIN, ASC_BIN_BITAND},
    {"bitwise_or", UF_BIN, ASC_BIN_BITOR},
    {"bitwise_xor", UF_BIN, ASC_BIN_BITXOR},
    {"left_shift", UF_BIN, ASC_BIN_LSHIFT},
    {"right_shift", UF_BIN, ASC_BIN_RSHIFT},
    {"less", UF_CMP, ASC_CMP_LT}, {"less_equal", UF_CMP, ASC_CMP_LE},
    {"greater", UF_CMP, ASC_CMP_GT}, {"greater_equal", UF_CMP, ASC_CMP_GE},
    {"equal", UF_CMP, ASC_CMP_EQ}, {"not_equal", UF_CMP, ASC_CMP_NE},
    {"negative", UF_UN, ASC_UN_NEG}, {"positive", UF_UN, ASC_UN_POS},
    {"invert", UF_UN, ASC_UN_INVERT}, {"bitwise_not", UF_UN, ASC_UN_INVERT},
    {"logical_and", UF_LOGIC, ASC_BIN_BITAND},
    {"logical_or", UF_LOGIC, ASC_BIN_BITOR},
    {"logical_xor", UF_LOGIC, ASC_BIN_BITXOR},
    {"logical_not", UF_LNOT, ASC_CMP_EQ},
    {"square", UF_SQUARE, ASC_BIN_POW}, /* x ** 2 */
};

/* e, or a new node holding what e held, turned into `x <op> 0` */
static void make_compare(resolver *r, asc__ast_expr *into, int op,
                         asc__ast_expr *x, asc__ast_expr *y) {
  asc__cmpop *ops = asc__arena_alloc(r->c, sizeof *ops);
  asc__ast_expr **xs = asc__arena_alloc(r->c, 2 * sizeof *xs);
  ops[0] = (asc__cmpop)op;
  xs[0] = x;
  xs[1] = y;
  into->kind = ASC_EXPR_COMPARE;
  into->u.cmp.ops = ops;
  into->u.cmp.operands = xs;
  into->u.cmp.n = 1;
}

static asc__ast_expr *nonzero(resolver *r, asc__ast_expr *x) {
  asc__ast_expr *c = synth(r, ASC_EXPR_COMPARE, x->loc, x->depth + 1);
  make_compare(r, c, ASC_CMP_NE, x, synth(r, ASC_EXPR_INT, x->loc, 1));
  return c;
}

static int op_ufunc_index(const char *name) {
  int n = (int)(sizeof op_ufuncs / sizeof op_ufuncs[0]);
  for (int i = 0; i < n; i++)
    if (strcmp(op_ufuncs[i].name, name) == 0)
      return i;
  return -1;
}

bool asc__is_op_ufunc(const char *name) {
  return op_ufunc_index(name) >= 0;
}

/* The entry of op_ufuncs call e names (np.add, ...), or -1. */
static int op_ufunc_of(resolver *r, asc__ast_expr *e) {
  asc__ast_expr *f = e->u.call.func;
  const asc__sym *s;
  int i;
  if (f->kind == ASC_EXPR_NAME && asc__resolve_numpy_name(r, f))
    f = e->u.call.func;         /* `from numpy import add`: now np.add */
  if (f->kind != ASC_EXPR_ATTR || f->u.attr.value->kind != ASC_EXPR_NAME)
    return -1;
  i = op_ufunc_index(f->u.attr.attr);
  s = i < 0 ? NULL
      : f->u.attr.value->u.name.sym != NULL ? f->u.attr.value->u.name.sym
      : asc__resolve_lookup(r, f->u.attr.value->u.name.id);
  if (s == NULL || s->kind != ASC_SYM_MODULE || s->u.module != ASC_NS_NP)
    return -1;
  return i;
}

static int op_ufunc_arity(int i) {
  return op_ufuncs[i].kind == UF_UN || op_ufuncs[i].kind == UF_LNOT ||
                 op_ufuncs[i].kind == UF_SQUARE
             ? 1
             : 2;
}

/* The statement `np.add(x, y, out)` (or out=out) is `out[...] = x + y`;
 * false when s is no such statement.  (As a value, the call with out is
 * refused by asc__rewrite_op_ufunc.) */
bool asc__rewrite_op_ufunc_out(resolver *r, asc__ast_stmt *s) {
  asc__ast_expr *e = s->u.expr.value, *out, *t, *all;
  asc__ast_expr **targets;
  int i, want;
  if (e->kind != ASC_EXPR_CALL || (i = op_ufunc_of(r, e)) < 0)
    return false;
  want = op_ufunc_arity(i);
  if (e->u.call.nargs == want + 1 && e->u.call.nkws == 0)
    out = e->u.call.args[want];
  else if (e->u.call.nargs == want && e->u.call.nkws == 1 &&
           strcmp(e->u.call.kws[0].name, "out") == 0)
    out = e->u.call.kws[0].value;
  else
    return false;
  all = synth(r, ASC_EXPR_SLICE, out->loc, 1);
  all->u.slice.ellipsis = true;
  t = synth(r, ASC_EXPR_SUBSCRIPT, out->loc, out->depth + 1);
  t->u.sub.value = out;
  t->u.sub.index = all;
  targets = asc__arena_alloc(r->c, sizeof *targets);
  targets[0] = t;
  e->u.call.nargs = want;
  e->u.call.nkws = 0;
  s->kind = ASC_STMT_ASSIGN;
  s->u.assign.targets = targets;
  s->u.assign.ntargets = 1;
  s->u.assign.value = e;
  s->u.assign.ufunc = op_ufuncs[i].name;
  return true;
}

/* np.add(x, y) -> x + y, ...; false when e is no such call. */
bool asc__rewrite_op_ufunc(resolver *r, asc__ast_expr *e) {
  asc__ast_expr *f = e->u.call.func, *x, *y;
  int i = op_ufunc_of(r, e), want;
  if (i < 0)
    return false;
  want = op_ufunc_arity(i);
  if (e->u.call.nargs != want || e->u.call.nkws != 0) {
    asc__diag_error(r->c, e->loc, "%s.%s takes %d positional argument%s in "
                    "kernels (an out array only in a statement of its "
                    "own; else assign the result, e.g. out[...] = "
                    "%s.%s(...))",
                    f->u.attr.value->u.name.id, f->u.attr.attr, want,
                    want == 1 ? "" : "s", f->u.attr.value->u.name.id,
                    f->u.attr.attr);
    return true;
  }
  x = e->u.call.args[0];
  y = want == 2 ? e->u.call.args[1] : NULL;
  switch (op_ufuncs[i].kind) {
  case UF_BIN:
    e->kind = ASC_EXPR_BINARY;
    e->u.binary.op = (asc__binop)op_ufuncs[i].op;
    e->u.binary.lhs = x;
    e->u.binary.rhs = y;
    break;
  case UF_CMP:
    make_compare(r, e, op_ufuncs[i].op, x, y);
    break;
  case UF_UN:
    e->kind = ASC_EXPR_UNARY;
    e->u.unary.op = (asc__unop)op_ufuncs[i].op;
    e->u.unary.operand = x;
    break;
  case UF_LOGIC:
    e->kind = ASC_EXPR_BINARY;
    e->u.binary.op = (asc__binop)op_ufuncs[i].op;
    e->u.binary.lhs = nonzero(r, x);
    e->u.binary.rhs = nonzero(r, y);
    break;
  case UF_LNOT:
    make_compare(r, e, ASC_CMP_EQ, x, synth(r, ASC_EXPR_INT, x->loc, 1));
    break;
  case UF_SQUARE:
    e->kind = ASC_EXPR_BINARY;
    e->u.binary.op = ASC_BIN_POW;
    e->u.binary.lhs = x;
    e->u.binary.rhs = synth(r, ASC_EXPR_INT, x->loc, 1);
    e->u.binary.rhs->u.ival = 2;
    break;
  }
  asc__resolve_expr(r, e);
  return true;
}

/* np.clip(a, None, hi), a.clip(max=hi): a bound that is None or left out
 * is no bound on that side (its argument becomes NULL; with neither, a
 * copy of a, as numpy 2 gives).  The function np.clip takes its a_min and
 * a_max both or neither (min= and max= on their own), as numpy's does. */
void asc__rewrite_clip_none(resolver *r, asc__ast_expr *e, bool method) {
  asc__ast_expr **a = e->u.call.rargs;
  bool given[2];
  if (a == NULL || e->u.call.nrargs != 3)
    return;
  given[0] = e->u.call.nargs > 1;
  given[1] = e->u.call.nargs > 2;
  for (int i = 0; i < e->u.call.nkws; i++)
    for (int k = 0; k < 2; k++)
      if (strcmp(e->u.call.kws[i].name, k == 0 ? "a_min" : "a_max") == 0)
        given[k] = true;
  if (!method && given[0] != given[1]) {
    asc__diag_error(r->c, e->loc, "clip() missing 1 required positional "
                    "argument: '%s'", given[0] ? "a_max" : "a_min");
    return;
  }
  for (int k = 1; k < 3; k++)
    if (a[k] != NULL && a[k]->kind == ASC_EXPR_NONE)
      a[k] = NULL;
}

/* sum and mean keep their tuple, as var and std do: one loop nest over
 * the axes (lower_array.c, call_axes), which adds a float sum in numpy's
 * order and divides a mean once, as numpy does */
static bool tuple_axes_ok(asc__builtin_id id) {
  return id == ASC_BI_NP_PROD || id == ASC_BI_NP_MIN ||
         id == ASC_BI_NP_MAX || id == ASC_BI_NP_ANY || id == ASC_BI_NP_ALL;
}

/* np.prod(a, axis=(1, 2)) (and min, max, any, all, as functions or
 * methods) is a reduction along each axis in turn:
 * np.prod(np.prod(a, axis=2), axis=1).  Without keepdims an axis reduced
 * first must not move the others: the largest axis goes first, or with
 * negative axes the most negative.  The axes are integer literals of one
 * sign, none twice. */
void asc__rewrite_tuple_axes(resolver *r, asc__ast_expr *e,
                             const asc__builtin *b) {
  asc__ast_expr **a = e->u.call.rargs, *t;
  int64_t ax[ASC_MAX_DIMS];
  int n;
  bool neg;
  asc__ast_expr *inner = NULL;
  if (!tuple_axes_ok(b->id) || a == NULL || e->u.call.nrargs < 2 ||
      a[1] == NULL || a[1]->kind != ASC_EXPR_TUPLE)
    return;
  t = a[1];
  n = t->u.tuple.n;
  if (n < 1 || n > ASC_MAX_DIMS) {
    asc__diag_error(r->c, t->loc, "a tuple of axes names 1 to %d axes",
                    ASC_MAX_DIMS);
    return;
  }
  for (int k = 0; k < n; k++) {
    if (!asc__expr_int_literal(t->u.tuple.elts[k], &ax[k])) {
      asc__diag_error(r->c, t->u.tuple.elts[k]->loc, "the axes of a "
                      "reduction are integer constants");
      return;
    }
    if (k > 0 && (ax[k] < 0) != (ax[0] < 0)) {
      asc__diag_error(r->c, t->loc, "a tuple of axes in a kernel takes axes "
                      "of one sign (all counted from the front, or all from "
                      "the end)");
      return;
    }
  }
  neg = ax[0] < 0;
  /* the order to reduce in: descending, or ascending for negative axes */
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && (neg ? ax[k] < ax[k - 1] : ax[k] > ax[k - 1]);
         k--) {
      int64_t x = ax[k];
      ax[k] = ax[k - 1];
      ax[k - 1] = x;
    }
  for (int k = 1; k < n; k++)
    if (ax[k] == ax[k - 1]) {
      asc__diag_error(r->c, t->loc, "axis %lld is repeated",
                      (long long)ax[k]);
      return;
    }
  for (int k = 0; k < n; k++) {
    asc__ast_expr *c = k == n - 1 ? e : synth(r, ASC_EXPR_CALL, e->loc, 0);
    asc__ast_expr **ra = asc__arena_alloc(r->c, sizeof *ra *
                                                   (size_t)e->u.call.nrargs);
    asc__ast_expr *lit = synth(r, ASC_EXPR_INT, t->loc, 1);
    memcpy(ra, a, sizeof *ra * (size_t)e->u.call.nrargs);
    if (ax[k] < 0) {
      asc__ast_expr *m = synth(r, ASC_EXPR_UNARY, t->loc, 2);
      lit->u.ival = (uint64_t)-ax[k];
      m->u.unary.op = ASC_UN_NEG;
      m->u.unary.operand = lit;
      ra[1] = m;
    } else {
      lit->u.ival = (uint64_t)ax[k];
      ra[1] = lit;
    }
    if (inner != NULL)
      ra[0] = inner;
    if (c != e)
      *c = *e;
    if (c->depth <= ra[0]->depth)
      c->depth = ra[0]->depth + 1;
    c->u.call.rargs = ra;
    inner = c;
  }
}

/* ------------------------------------------- count_nonzero, isclose */

/* A resolved call of numpy builtin id with the argument slots rargs (nr
 * of them, the first nargs written), np the numpy module's resolved
 * name. */
static asc__ast_expr *np_call(resolver *r, asc__ast_expr *np,
                              asc__builtin_id id, asc__ast_expr **rargs,
                              int nr, int nargs, asc__loc loc) {
  const asc__builtin *b = asc__builtin_get(id);
  asc__ast_expr *f = synth(r, ASC_EXPR_ATTR, loc, 2), *c;
  int32_t d = 1;
  for (int i = 0; i < nr; i++)
    if (rargs[i] != NULL && rargs[i]->depth > d)
      d = rargs[i]->depth;
  f->u.attr.value = np;
  f->u.attr.attr = b->name;
  f->u.attr.attr_loc = loc;
  f->u.attr.builtin = b;
  c = synth(r, ASC_EXPR_CALL, loc, d + 1);
  c->u.call.func = f;
  c->u.call.args = rargs;
  c->u.call.nargs = nargs;
  c->u.call.rargs = rargs;
  c->u.call.nrargs = nr;
  c->u.call.builtin = b;
  return c;
}

static asc__ast_expr *np_call1(resolver *r, asc__ast_expr *np,
                               asc__builtin_id id, asc__ast_expr *x) {
  asc__ast_expr **a = asc__arena_alloc(r->c, sizeof *a);
  a[0] = x;
  return np_call(r, np, id, a, 1, 1, x->loc);
}

static asc__ast_expr *cmp(resolver *r, int op, asc__ast_expr *x,
                          asc__ast_expr *y) {
  asc__ast_expr *e = synth(r, ASC_EXPR_COMPARE, x->loc,
                           (x->depth > y->depth ? x->depth : y->depth) + 1);
  make_compare(r, e, op, x, y);
  return e;
}

static asc__ast_expr *fconst(resolver *r, double v, asc__loc loc) {
  asc__ast_expr *e = synth(r, ASC_EXPR_FLOAT, loc, 1);
  e->u.fval = v;
  return e;
}

/* True if evaluating e more than once gives the same values at the same
 * cost: no call but of numpy's and math's functions. */
static bool repeatable(const asc__ast_expr *e, int depth) {
  if (e == NULL)
    return true;
  if (depth > 64)
    return false;
  switch (e->kind) {
  case ASC_EXPR_CALL:
    if (e->u.call.builtin == NULL || e->u.call.rargs == NULL)
      return false;
    for (int i = 0; i < e->u.call.nrargs; i++)
      if (!repeatable(e->u.call.rargs[i], depth + 1))
        return false;
    return true;
  case ASC_EXPR_BINARY:
    return repeatable(e->u.binary.lhs, depth + 1) &&
           repeatable(e->u.binary.rhs, depth + 1);
  case ASC_EXPR_UNARY:
    return repeatable(e->u.unary.operand, depth + 1);
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      if (!repeatable(e->u.cmp.operands[i], depth + 1))
        return false;
    return true;
  case ASC_EXPR_ATTR:
    return repeatable(e->u.attr.value, depth + 1);
  case ASC_EXPR_SUBSCRIPT:
    return repeatable(e->u.sub.value, depth + 1) &&
           repeatable(e->u.sub.index, depth + 1);
  case ASC_EXPR_SLICE:
    return repeatable(e->u.slice.lower, depth + 1) &&
           repeatable(e->u.slice.upper, depth + 1) &&
           repeatable(e->u.slice.step, depth + 1);
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      if (!repeatable(e->u.tuple.elts[i], depth + 1))
        return false;
    return true;
  case ASC_EXPR_NAME:
  case ASC_EXPR_INT:
  case ASC_EXPR_FLOAT:
  case ASC_EXPR_BOOL:
  case ASC_EXPR_NONE:
    return true;
  default:
    return false;
  }
}

/* x * 1.0: x compared in floating point, a float keeping its dtype */
static asc__ast_expr *as_float(resolver *r, asc__ast_expr *x) {
  return syn_bin(r, ASC_BIN_MUL, x, fconst(r, 1.0, x->loc));
}

/* (x == y) | (isfinite(xf) & isfinite(yf) & within): equal values
 * (infinities included), or both finite and within the tolerance; the
 * skeleton of np.isclose and math.isclose (m: the module whose abs and
 * isfinite the rewrite calls) */
static asc__ast_expr *equal_or_within(resolver *r, asc__ast_expr *m,
                                      asc__ast_expr *x, asc__ast_expr *y,
                                      asc__ast_expr *xf, asc__ast_expr *yf,
                                      asc__ast_expr *within) {
  return syn_bin(
      r, ASC_BIN_BITOR, cmp(r, ASC_CMP_EQ, x, y),
      syn_bin(r, ASC_BIN_BITAND,
              syn_bin(r, ASC_BIN_BITAND, np_call1(r, m, ASC_BI_ISFINITE, xf),
                      np_call1(r, m, ASC_BI_ISFINITE, yf)),
              within));
}

/* np.isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) is numpy's
 * test written out, with b (and a) taken as floats as numpy does:
 *   (a == b) | (isfinite(a) & isfinite(b) & (|a - b| <= atol + rtol |b|))
 * (equal values, infinities included, or both finite and close), and
 * `| (isnan(a) & isnan(b))` with equal_nan=True; np.allclose is np.all
 * of it. */
static void closeness(resolver *r, asc__ast_expr *e, asc__ast_expr *np,
                      asc__ast_expr *x, asc__ast_expr *y) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__ast_expr *xf, *yf, *res, *tol, **sargs;

  if (a[4] != NULL && a[4]->kind != ASC_EXPR_BOOL) {
    asc__diag_error(r->c, a[4]->loc, "np.%s's equal_nan must be True or "
                    "False, written in the call", e->u.call.builtin->name);
    return;
  }
  /* numpy compares in floating point */
  xf = as_float(r, x);
  yf = as_float(r, y);
  tol = syn_bin(r, ASC_BIN_ADD, a[3] != NULL ? a[3] : fconst(r, 1e-08, e->loc),
                syn_bin(r, ASC_BIN_MUL,
                        a[2] != NULL ? a[2] : fconst(r, 1e-05, e->loc),
                        np_call1(r, np, ASC_BI_ABS, yf)));
  res = equal_or_within(
      r, np, x, y, xf, yf,
      cmp(r, ASC_CMP_LE,
          np_call1(r, np, ASC_BI_ABS, syn_bin(r, ASC_BIN_SUB, xf, yf)), tol));
  if (a[4] != NULL && a[4]->u.bval)
    res = syn_bin(r, ASC_BIN_BITOR, res,
                  syn_bin(r, ASC_BIN_BITAND, np_call1(r, np, ASC_BI_ISNAN, xf),
                          np_call1(r, np, ASC_BI_ISNAN, yf)));
  if (e->u.call.builtin->id == ASC_BI_NP_ALLCLOSE) {
    sargs = asc__arena_alloc(r->c, sizeof *sargs * 4);
    sargs[0] = res;
    sargs[1] = sargs[2] = sargs[3] = NULL;
    res = np_call(r, np, ASC_BI_NP_ALL, sargs, 4, 1, e->loc);
  }
  res->loc = e->loc;
  *e = *res;
}

/* math.isclose(a, b, rel_tol=1e-09, abs_tol=0.0), Python's rule on
 * floats: a == b, or both finite and |a - b| <= max(rel_tol * max(|a|,
 * |b|), abs_tol), written as three comparisons joined by | (multiplying
 * by rel_tol >= 0 keeps the order, so the bound is the same number).
 * A negative tolerance is not checked (Python raises ValueError). */
static void math_isclose(resolver *r, asc__ast_expr *e, asc__ast_expr *m) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__ast_expr *af, *bf, *d, *rt, *res, *within;
  for (int i = 0; i < 2; i++)
    if (!repeatable(a[i], 0)) {
      asc__diag_error(r->c, a[i]->loc, "math.isclose in kernels reads each "
                      "operand several times: give it names, numbers or "
                      "expressions of them (assign a call's value to a "
                      "name first)");
      return;
    }
  af = as_float(r, a[0]);
  bf = as_float(r, a[1]);
  d = np_call1(r, m, ASC_BI_ABS, syn_bin(r, ASC_BIN_SUB, af, bf));
  rt = a[2] != NULL ? a[2] : fconst(r, 1e-09, e->loc);
  within = syn_bin(
      r, ASC_BIN_BITOR,
      syn_bin(r, ASC_BIN_BITOR,
              cmp(r, ASC_CMP_LE, d,
                  syn_bin(r, ASC_BIN_MUL, rt, np_call1(r, m, ASC_BI_ABS, af))),
              cmp(r, ASC_CMP_LE, d,
                  syn_bin(r, ASC_BIN_MUL, rt, np_call1(r, m, ASC_BI_ABS, bf)))),
      cmp(r, ASC_CMP_LE, d, a[3] != NULL ? a[3] : fconst(r, 0.0, e->loc)));
  res = equal_or_within(r, m, a[0], a[1], af, bf, within);
  res->loc = e->loc;
  *e = *res;
}

/* x[..., k] */
static asc__ast_expr *last_axis(resolver *r, asc__ast_expr *x, int k) {
  asc__ast_expr *ix = synth(r, ASC_EXPR_TUPLE, x->loc, 2);
  asc__ast_expr *all = synth(r, ASC_EXPR_SLICE, x->loc, 1);
  asc__ast_expr *s = synth(r, ASC_EXPR_SUBSCRIPT, x->loc, x->depth + 3);
  asc__ast_expr **elts = asc__arena_alloc(r->c, 2 * sizeof *elts);
  all->u.slice.ellipsis = true;
  elts[0] = all;
  elts[1] = syn_int(r, k, x->loc);
  ix->u.tuple.elts = elts;
  ix->u.tuple.n = 2;
  s->u.sub.value = x;
  s->u.sub.index = ix;
  return s;
}

/* np.cross of 3-vectors along the last axis (numpy's default axes):
 * np.stack((a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0), axis=-1). */
static asc__ast_expr *cross(resolver *r, asc__ast_expr *np, asc__ast_expr *x,
                            asc__ast_expr *y, asc__loc loc) {
  asc__ast_expr *t = synth(r, ASC_EXPR_TUPLE, loc, 1), **c, **sargs;
  c = asc__arena_alloc(r->c, 3 * sizeof *c);
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3, k = (i + 2) % 3;
    c[i] = syn_bin(r, ASC_BIN_SUB,
                   syn_bin(r, ASC_BIN_MUL, last_axis(r, x, j),
                           last_axis(r, y, k)),
                   syn_bin(r, ASC_BIN_MUL, last_axis(r, x, k),
                           last_axis(r, y, j)));
    if (c[i]->depth + 1 > t->depth)
      t->depth = c[i]->depth + 1;
  }
  t->u.tuple.elts = c;
  t->u.tuple.n = 3;
  sargs = asc__arena_alloc(r->c, 2 * sizeof *sargs);
  sargs[0] = t;
  sargs[1] = synth(r, ASC_EXPR_UNARY, loc, 2);  /* -1, as written */
  sargs[1]->u.unary.op = ASC_UN_NEG;
  sargs[1]->u.unary.operand = syn_int(r, 1, loc);
  return np_call(r, np, ASC_BI_NP_STACK, sargs, 2, 2, loc);
}

/* np.expand_dims(a, k), k an integer written in the call: a[:, .., None,
 * ...] with k full slices before None (k >= 0), or a[..., None, :, ..]
 * with -k - 1 after it (k < 0); NULL after an error. */
static asc__ast_expr *expand_dims(resolver *r, asc__ast_expr *x,
                                  asc__ast_expr *axis) {
  asc__ast_expr *ix, *s, **elts;
  int64_t k;
  int n, at;
  if (axis->kind == ASC_EXPR_INT)
    k = (int64_t)axis->u.ival;
  else if (axis->kind == ASC_EXPR_UNARY && axis->u.unary.op == ASC_UN_NEG &&
           axis->u.unary.operand->kind == ASC_EXPR_INT)
    k = -(int64_t)axis->u.unary.operand->u.ival;
  else {
    asc__diag_error(r->c, axis->loc, "np.expand_dims in kernels takes one "
                    "axis, an integer written in the call");
    return NULL;
  }
  if (k > ASC_MAX_DIMS || k < -ASC_MAX_DIMS - 1) {
    asc__diag_error(r->c, axis->loc, "np.expand_dims: axis %lld is out of "
                    "bounds for an array of at most %d dimensions",
                    (long long)k, ASC_MAX_DIMS);
    return NULL;
  }
  n = (int)(k >= 0 ? k + 2 : -k + 1);
  at = k >= 0 ? (int)k : 1;
  elts = asc__arena_alloc(r->c, (size_t)n * sizeof *elts);
  for (int i = 0; i < n; i++) {
    elts[i] = synth(r, i == at ? ASC_EXPR_NONE : ASC_EXPR_SLICE, x->loc, 1);
    /* the Ellipsis: last for k >= 0, first for k < 0 */
    if (i != at && (k >= 0 ? i == n - 1 : i == 0))
      elts[i]->u.slice.ellipsis = true;
  }
  ix = synth(r, ASC_EXPR_TUPLE, x->loc, 2);
  ix->u.tuple.elts = elts;
  ix->u.tuple.n = n;
  s = synth(r, ASC_EXPR_SUBSCRIPT, x->loc, x->depth + 3);
  s->u.sub.value = x;
  s->u.sub.index = ix;
  return s;
}

/* np.NAME(where(isnan(a), fill, a), axis, keepdims=keepdims): nansum,
 * nanprod (a NaN counts as 0 and 1, numpy's rule). */
static asc__ast_expr *nan_reduce(resolver *r, asc__ast_expr *np,
                                 asc__ast_expr **a, asc__builtin_id id,
                                 int fill, asc__loc loc) {
  asc__ast_expr **w = asc__arena_alloc(r->c, 3 * sizeof *w), **sargs;
  w[0] = np_call1(r, np, ASC_BI_ISNAN, a[0]);
  w[1] = syn_int(r, fill, loc);
  w[2] = a[0];
  sargs = asc__arena_alloc(r->c, 5 * sizeof *sargs);
  sargs[0] = np_call(r, np, ASC_BI_NP_WHERE, w, 3, 3, loc);
  sargs[1] = a[1];
  sargs[2] = a[2];
  sargs[3] = a[3];
  sargs[4] = a[4];
  return np_call(r, np, id, sargs, 5, 1, loc);
}

/* np.nanmean(a, axis, keepdims=...) is np.nansum(a, ...) over the count
 * of a's elements that are not NaN, counted in a's dtype (np.sum of
 * where(isnan(a), zeros_like(a), ones_like(a))), as numpy divides: an
 * integer array's mean is float64, a float32 array's float32, and a
 * slice of NaNs only is 0 / 0, NaN. */
static asc__ast_expr *nanmean(resolver *r, asc__ast_expr *np,
                              asc__ast_expr **a, asc__loc loc) {
  asc__ast_expr **sargs = asc__arena_alloc(r->c, 5 * sizeof *sargs);
  asc__ast_expr **w = asc__arena_alloc(r->c, 3 * sizeof *w);
  asc__ast_expr **cargs = asc__arena_alloc(r->c, 5 * sizeof *cargs);
  asc__ast_expr *num, *den;
  sargs[0] = a[0];
  sargs[1] = a[1];
  sargs[2] = sargs[3] = NULL;
  sargs[4] = a[4];
  num = nan_reduce(r, np, sargs, ASC_BI_NP_SUM, 0, loc);
  w[0] = np_call1(r, np, ASC_BI_ISNAN, a[0]);
  w[1] = np_call1(r, np, ASC_BI_NP_ZEROS_LIKE, a[0]);
  w[2] = np_call1(r, np, ASC_BI_NP_ONES_LIKE, a[0]);
  cargs[0] = np_call(r, np, ASC_BI_NP_WHERE, w, 3, 3, loc);
  cargs[1] = a[1];
  cargs[2] = cargs[3] = NULL;
  cargs[4] = a[4];
  den = np_call(r, np, ASC_BI_NP_SUM, cargs, 5, 1, loc);
  asc__rewrite_tuple_axes(r, num, num->u.call.builtin);
  asc__rewrite_tuple_axes(r, den, den->u.call.builtin);
  return syn_bin(r, ASC_BIN_DIV, num, den);
}

/* np.flatnonzero(a) is np.arange(a.size)[np.ravel(a) != 0]: the int64
 * indices of a's nonzero elements in C order, through a mask. */
static asc__ast_expr *flatnonzero(resolver *r, asc__ast_expr *np,
                                  asc__ast_expr *x, asc__loc loc) {
  asc__ast_expr *size = synth(r, ASC_EXPR_ATTR, loc, x->depth + 1);
  asc__ast_expr **ar = asc__arena_alloc(r->c, 4 * sizeof *ar), *idx, *s;
  size->u.attr.value = x;
  size->u.attr.attr = "size";
  size->u.attr.attr_loc = loc;
  ar[0] = size;
  ar[1] = ar[2] = ar[3] = NULL;
  idx = np_call(r, np, ASC_BI_NP_ARANGE, ar, 4, 1, loc);
  s = synth(r, ASC_EXPR_SUBSCRIPT, loc, 1);
  s->u.sub.value = idx;
  s->u.sub.index = nonzero(r, np_call1(r, np, ASC_BI_NP_RAVEL, x));
  s->depth = (idx->depth > s->u.sub.index->depth ? idx->depth
                                                 : s->u.sub.index->depth) + 1;
  return s;
}

/* np.ptp(a, axis, keepdims=...) is np.max(...) - np.min(...). */
static asc__ast_expr *ptp(resolver *r, asc__ast_expr *np, asc__ast_expr **a,
                          asc__loc loc) {
  asc__ast_expr *m[2];
  for (int i = 0; i < 2; i++) {
    asc__ast_expr **sargs = asc__arena_alloc(r->c, 4 * sizeof *sargs);
    sargs[0] = a[0];
    sargs[1] = a[1];
    sargs[2] = NULL;
    sargs[3] = a[3];
    m[i] = np_call(r, np, i == 0 ? ASC_BI_NP_MAX : ASC_BI_NP_MIN, sargs, 4,
                   1, loc);
    asc__rewrite_tuple_axes(r, m[i], m[i]->u.call.builtin);
  }
  return syn_bin(r, ASC_BIN_SUB, m[0], m[1]);
}

bool asc__rewrite_numpy_more(resolver *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs;
  asc__ast_expr *np = e->u.call.func->kind == ASC_EXPR_ATTR
                          ? e->u.call.func->u.attr.value
                          : NULL, *res = NULL, **sargs;
  asc__builtin_id id = e->u.call.builtin->id;
  const char *name = e->u.call.builtin->name;
  int nread = id == ASC_BI_NP_PTP || id == ASC_BI_NP_FLATNONZERO ||
                      id == ASC_BI_NP_NANMEAN
                  ? 2
              : id == ASC_BI_NP_ISCLOSE || id == ASC_BI_NP_ALLCLOSE ||
                      id == ASC_BI_NP_CROSS
                  ? 3
                  : 1;

  if (id == ASC_BI_NP_SUM || id == ASC_BI_NP_PROD || id == ASC_BI_NP_MEAN) {
    /* dtype=: the elements converted first, numpy's rule (its sum then
     * runs in that dtype) */
    if (a[2] != NULL && a[2]->kind != ASC_EXPR_NONE) {
      sargs = asc__arena_alloc(r->c, 2 * sizeof *sargs);
      sargs[0] = a[0];
      sargs[1] = a[2];
      a[0] = np_call(r, np != NULL ? np : a[0], ASC_BI_NP_ASTYPE, sargs, 2, 2,
                     a[0]->loc);
      a[0]->u.call.func->u.attr.value = a[0]->u.call.args[0];
      a[2] = NULL;
    }
    return false;
  }
  if (id == ASC_BI_MATH_ISCLOSE && np != NULL && np->kind == ASC_EXPR_NAME) {
    math_isclose(r, e, np);
    return true;
  }
  if (id < ASC_BI_NP_COUNT_NONZERO || id > ASC_BI_NP_FLATNONZERO)
    return false;
  if (np == NULL || np->kind != ASC_EXPR_NAME)
    return false; /* not np.NAME: already reported */
  for (int i = 0; i < (nread > 1 ? 2 : 0) && i < e->u.call.nrargs; i++)
    if (a[i] != NULL && !repeatable(a[i], 0)) {
      asc__diag_error(r->c, a[i]->loc, "np.%s in kernels reads each operand "
                      "several times: give it arrays, numbers or expressions "
                      "of them (assign a call's value to a name first)",
                      name);
      return true;
    }
  if (id == ASC_BI_NP_NANMEAN && a[2] != NULL) {
    asc__diag_error(r->c, a[2]->loc, "np.nanmean(..., dtype=) is not "
                    "supported in kernels");
    return true;
  }
  if ((id == ASC_BI_NP_PTP && a[2] != NULL) ||
      ((id == ASC_BI_NP_NANSUM || id == ASC_BI_NP_NANPROD ||
        id == ASC_BI_NP_NANMEAN) && a[3] != NULL)) {
    asc__diag_error(r->c, (id == ASC_BI_NP_PTP ? a[2] : a[3])->loc,
                    "np.%s(..., out=) is not supported in kernels", name);
    return true;
  }
  switch (id) {
  case ASC_BI_NP_COUNT_NONZERO:
    /* np.sum(a != 0, axis, keepdims=...): an int64 count */
    sargs = asc__arena_alloc(r->c, sizeof *sargs * 5);
    sargs[0] = nonzero(r, a[0]);
    sargs[1] = a[1];
    sargs[2] = NULL;
    sargs[3] = NULL;
    sargs[4] = a[2];
    res = np_call(r, np, ASC_BI_NP_SUM, sargs, 5, 1, e->loc);
    break;
  case ASC_BI_NP_ISCLOSE:
  case ASC_BI_NP_ALLCLOSE:
    closeness(r, e, np, a[0], a[1]);
    return true;
  case ASC_BI_NP_PTP:
    res = ptp(r, np, a, e->loc);
    break;
  case ASC_BI_NP_NANSUM:
  case ASC_BI_NP_NANPROD:
    res = nan_reduce(r, np, a,
                     id == ASC_BI_NP_NANSUM ? ASC_BI_NP_SUM : ASC_BI_NP_PROD,
                     id == ASC_BI_NP_NANSUM ? 0 : 1, e->loc);
    /* its dtype=, as the reduction's */
    (void)asc__rewrite_numpy_more(r, res);
    break;
  case ASC_BI_NP_NANMEAN:
    res = nanmean(r, np, a, e->loc);
    break;
  case ASC_BI_NP_CROSS:
    res = cross(r, np, a[0], a[1], e->loc);
    break;
  case ASC_BI_NP_FLATNONZERO:
    res = flatnonzero(r, np, a[0], e->loc);
    break;
  case ASC_BI_NP_EXPAND_DIMS:
    res = expand_dims(r, a[0], a[1]);
    if (res == NULL)
      return true;
    break;
  default:
    return false;
  }
  res->loc = e->loc;
  *e = *res;
  if (e->kind == ASC_EXPR_CALL)
    asc__rewrite_tuple_axes(r, e, e->u.call.builtin);
  return true;
}

/* `a.sort()` (a a name; axis= and the other arguments as np.sort's)
 * sorts a in place: it becomes `a[...] = a.sort()`, whose call is
 * np.sort(a) (asc__builtin_method) and allowed only there. */
bool asc__rewrite_sort_stmt(resolver *r, asc__ast_stmt *s) {
  asc__ast_expr *e = s->u.expr.value, *f, *name, *all, *t;
  asc__ast_expr **targets;
  if (e->kind != ASC_EXPR_CALL || e->u.call.func->kind != ASC_EXPR_ATTR)
    return false;
  f = e->u.call.func;
  if (strcmp(f->u.attr.attr, "sort") != 0 ||
      f->u.attr.value->kind != ASC_EXPR_NAME)
    return false;
  name = synth(r, ASC_EXPR_NAME, f->u.attr.value->loc, 1);
  *name = *f->u.attr.value;
  all = synth(r, ASC_EXPR_SLICE, name->loc, 1);
  all->u.slice.ellipsis = true;
  t = synth(r, ASC_EXPR_SUBSCRIPT, name->loc, 2);
  t->u.sub.value = name;
  t->u.sub.index = all;
  targets = asc__arena_alloc(r->c, sizeof *targets);
  targets[0] = t;
  s->kind = ASC_STMT_ASSIGN;
  memset(&s->u.assign, 0, sizeof s->u.assign);
  s->u.assign.targets = targets;
  s->u.assign.ntargets = 1;
  s->u.assign.value = e;
  r->sort_stmt = true;
  return true;
}
