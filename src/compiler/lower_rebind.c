/*
 * Array variables (docs/arrays.md, "Locals rebound to another array"):
 * a name that a loop or a branch binds to a view at one assignment and
 * to a new array at another (datacol = dcol[:, :, k] in one loop,
 * datacol = dcol[:, :, k] - c * d in the next; x = a[::2] or x =
 * b.copy(); a parameter Z then Z = Z[I]; x = x[1:] in a loop) cannot
 * be a view fixed at compile time nor one array the name owns.  It is one strided tensor
 * register, set at run time: set_view points it at a view (of any array
 * of its dtype and rank), set_array hands it a new array, which it owns
 * until it is rebound.  Names bound only to new arrays, or once, keep
 * their cheaper bindings (lower_create.c, lower_view.c).
 */
#include <string.h>

#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

typedef struct {
  const asc__sym *sym;
  int binds;     /* assignments of an array to the name (a parameter: 1) */
  bool view;     /* one of them is a view or another name's array */
  bool fresh;    /* one of them is a new array */
  bool refused;  /* one is neither (a local_array...), or in a prange */
  bool written;  /* its elements are stored into (x[i] = v, x += v, a
                  * helper given it) */
  bool stored;   /* x[i] = v or x += v in the function itself */
  const asc__ast_expr *hview; /* a helper call returning a view of its
                               * argument that the name is bound to */
  const asc__ast_expr *store_at; /* the first such store */
} avcount;

/* x = y of two array names (x bound to the array y holds). */
typedef struct {
  const asc__sym *x, *y;
  const asc__ast_expr *value;
} avalias;

typedef struct {
  lstate *ls;
  const asc__ast_func *fn;
  avcount *v;
  int n, cap;
  avalias *al;
  int nal, capal;
  int pfors;
} avscan;

static avcount *count_of(avscan *x, const asc__sym *s) {
  for (int k = 0; k < x->n; k++)
    if (x->v[k].sym == s)
      return &x->v[k];
  x->v = asc__arena_grow(x->ls->c, x->v, x->n, &x->cap, sizeof *x->v, 8);
  memset(&x->v[x->n], 0, sizeof x->v[x->n]);
  x->v[x->n].sym = s;
  return &x->v[x->n++];
}

static const asc__ast_expr *helper_view(lstate *ls, const asc__ast_expr *e);
static void stored_view(lstate *ls, const asc__ast_expr *call,
                        const asc__ast_expr *at, const char *name);

static bool is_array_sym(const asc__ast_func *fn, const asc__sym *s) {
  asc__type *t = s && s->type ? asc__ty_find(s->type) : NULL;
  return t != NULL && t->kind == ASC_TY_TENSOR && t->ndim > 0 &&
         s->owner == fn &&
         (s->kind == ASC_SYM_LOCAL || s->kind == ASC_SYM_PARAM);
}

static void count_bind(avscan *x, const asc__ast_expr *t,
                       const asc__ast_expr *value) {
  avcount *c;
  if (t->kind == ASC_EXPR_TUPLE) {
    bool display = value != NULL && value->kind == ASC_EXPR_TUPLE &&
                   value->u.tuple.n == t->u.tuple.n;
    for (int k = 0; k < t->u.tuple.n; k++)
      count_bind(x, t->u.tuple.elts[k],
                 display ? value->u.tuple.elts[k] : NULL);
    return;
  }
  if (t->kind != ASC_EXPR_NAME || !is_array_sym(x->fn, t->u.name.sym))
    return;
  c = count_of(x, t->u.name.sym);
  c->binds++;
  if (value != NULL && helper_view(x->ls, value) != NULL)
    c->hview = value;
  if (value != NULL && value->kind == ASC_EXPR_NAME &&
      value->u.name.sym != t->u.name.sym &&
      is_array_sym(x->fn, value->u.name.sym)) {
    x->al = asc__arena_grow(x->ls->c, x->al, x->nal, &x->capal,
                            sizeof *x->al, 4);
    x->al[x->nal].x = t->u.name.sym;
    x->al[x->nal].y = value->u.name.sym;
    x->al[x->nal++].value = value;
  }
  if (value == NULL || x->pfors > 0 || !is_tensor(value))
    c->refused = true;
  else if (asc__lower_is_new_array(x->ls, value))
    c->fresh = true;
  else if (value->kind == ASC_EXPR_NAME || asc__lower_is_view(x->ls, value))
    c->view = true;
  else
    c->refused = true;
}

/* The array name whose elements target e stores into (x[i], x[i][j],
 * x += v), if any; store: by the function itself, not a helper. */
static void mark_written(avscan *x, const asc__ast_expr *e, bool whole,
                         bool store) {
  const asc__ast_expr *t = e;
  while (e->kind == ASC_EXPR_SUBSCRIPT) {
    e = e->u.sub.value;
    whole = true;
  }
  if (whole && store && helper_view(x->ls, e) != NULL)
    stored_view(x->ls, e, t, NULL);
  if (whole && e->kind == ASC_EXPR_NAME && is_array_sym(x->fn, e->u.name.sym)) {
    avcount *c = count_of(x, e->u.name.sym);
    c->written = true;
    if (store && c->stored == false) {
      c->stored = true;
      c->store_at = t;
    }
  }
}

static void scan_block(avscan *x, const asc__ast_block *b);

static void scan_stmt(avscan *x, const asc__ast_stmt *s) {
  switch (s->kind) {
  case ASC_STMT_ASSIGN:
    for (int k = 0; k < s->u.assign.ntargets; k++) {
      mark_written(x, s->u.assign.targets[k], false, true);
      count_bind(x, s->u.assign.targets[k], s->u.assign.value);
    }
    break;
  case ASC_STMT_AUGASSIGN:
    mark_written(x, s->u.aug.target, true, true);
    break;
  case ASC_STMT_EXPR: {
    /* a helper may store into the arrays it is given */
    const asc__ast_expr *e = s->u.expr.value;
    if (e != NULL && e->kind == ASC_EXPR_CALL && e->u.call.callee != NULL)
      for (int k = 0; k < e->u.call.nargs; k++)
        mark_written(x, e->u.call.args[k], true, false);
    break;
  }
  case ASC_STMT_ANNASSIGN:
    if (s->u.ann.value != NULL)
      count_bind(x, s->u.ann.target, s->u.ann.value);
    break;
  case ASC_STMT_IF:
    scan_block(x, &s->u.if_.body);
    scan_block(x, &s->u.if_.orelse);
    break;
  case ASC_STMT_FOR: {
    bool par = s->u.for_.loop == ASC_BI_PRANGE;
    x->pfors += par;
    if (s->u.for_.target->kind == ASC_EXPR_NAME &&
        is_array_sym(x->fn, s->u.for_.target->u.name.sym))
      count_of(x, s->u.for_.target->u.name.sym)->refused = true;
    scan_block(x, &s->u.for_.body);
    x->pfors -= par;
    break;
  }
  case ASC_STMT_WHILE:
    scan_block(x, &s->u.while_.body);
    break;
  case ASC_STMT_TRY:
    scan_block(x, &s->u.try_.body);
    for (int k = 0; k < s->u.try_.nhandlers; k++)
      scan_block(x, &s->u.try_.handlers[k].body);
    scan_block(x, &s->u.try_.orelse);
    scan_block(x, &s->u.try_.finalbody);
    break;
  case ASC_STMT_WITH:
    x->pfors++; /* asc.critical(): its body stays as it is */
    scan_block(x, &s->u.with.body);
    x->pfors--;
    break;
  default:
    break;
  }
}

static void scan_block(avscan *x, const asc__ast_block *b) {
  for (int k = 0; k < b->n; k++)
    scan_stmt(x, b->stmts[k]);
}

/* Helpers returning a view of their argument.  numpy's `def first_row(a):
 * return a[0]` hands back a view of the caller's array; the inlined helper
 * hands back a copy (asc__lower_inline_helper), so a store through the
 * result would not reach the argument.  Such a store is a compile error
 * rather than a silently different result. */

typedef void (*stmt_fn)(const asc__ast_stmt *s, void *arg);

/* f on every statement of b and of the blocks inside it (not nested
 * defs). */
static void each_stmt(const asc__ast_block *b, stmt_fn f, void *arg) {
  for (int k = 0; k < b->n; k++) {
    const asc__ast_stmt *s = b->stmts[k];
    f(s, arg);
    switch (s->kind) {
    case ASC_STMT_IF:
      each_stmt(&s->u.if_.body, f, arg);
      each_stmt(&s->u.if_.orelse, f, arg);
      break;
    case ASC_STMT_FOR:
      each_stmt(&s->u.for_.body, f, arg);
      break;
    case ASC_STMT_WHILE:
      each_stmt(&s->u.while_.body, f, arg);
      break;
    case ASC_STMT_TRY:
      each_stmt(&s->u.try_.body, f, arg);
      for (int h = 0; h < s->u.try_.nhandlers; h++)
        each_stmt(&s->u.try_.handlers[h].body, f, arg);
      each_stmt(&s->u.try_.orelse, f, arg);
      each_stmt(&s->u.try_.finalbody, f, arg);
      break;
    case ASC_STMT_WITH:
      each_stmt(&s->u.with.body, f, arg);
      break;
    default:
      break;
    }
  }
}

typedef struct {
  lstate *ls;
  const asc__ast_func *fn;
  const asc__sym *param; /* a parameter some return hands out a view of */
  const char *name;      /* rebound: a name the helper assigns */
  bool rebound;
} hvscan;

/* The parameter whose array e views (a, a[0], a[1:, ::2], a.T), or NULL. */
static const asc__sym *viewed_param(lstate *ls, const asc__ast_func *fn,
                                    const asc__ast_expr *e) {
  while (e->kind == ASC_EXPR_SUBSCRIPT || e->kind == ASC_EXPR_ATTR) {
    if (e->kind == ASC_EXPR_ATTR && strcmp(e->u.attr.attr, "T") != 0)
      return NULL;
    if (e->kind == ASC_EXPR_SUBSCRIPT && !asc__lower_is_view(ls, e))
      return NULL;
    e = e->kind == ASC_EXPR_ATTR ? e->u.attr.value : e->u.sub.value;
  }
  if (e->kind != ASC_EXPR_NAME || e->u.name.sym == NULL ||
      e->u.name.sym->kind != ASC_SYM_PARAM || e->u.name.sym->owner != fn ||
      !is_tensor(e))
    return NULL;
  return e->u.name.sym;
}

static void find_return(const asc__ast_stmt *s, void *arg) {
  hvscan *h = arg;
  if (s->kind == ASC_STMT_RETURN && s->u.ret.value != NULL &&
      h->param == NULL)
    h->param = viewed_param(h->ls, h->fn, s->u.ret.value);
}

static void name_bound(hvscan *h, const asc__ast_expr *t) {
  if (t->kind == ASC_EXPR_TUPLE)
    for (int k = 0; k < t->u.tuple.n; k++)
      name_bound(h, t->u.tuple.elts[k]);
  else if (t->kind == ASC_EXPR_NAME && strcmp(t->u.name.id, h->name) == 0)
    h->rebound = true;
}

static void find_rebind(const asc__ast_stmt *s, void *arg) {
  hvscan *h = arg;
  if (s->kind == ASC_STMT_ASSIGN)
    for (int k = 0; k < s->u.assign.ntargets; k++)
      name_bound(h, s->u.assign.targets[k]);
  else if (s->kind == ASC_STMT_ANNASSIGN)
    name_bound(h, s->u.ann.target);
  else if (s->kind == ASC_STMT_FOR)
    name_bound(h, s->u.for_.target);
}

/* The parameter of the helper that call e returns a view of, when the
 * argument given for it is an array the caller holds (a name or a view
 * of one); NULL otherwise. */
static const asc__sym *returned_view(lstate *ls, const asc__ast_expr *e) {
  asc__tinst *inst;
  hvscan h;
  if (e->kind != ASC_EXPR_CALL || e->u.call.callee == NULL || !is_tensor(e))
    return NULL;
  inst = asc__typed_callee(ls->t, e);
  if (inst == NULL)
    return NULL;
  memset(&h, 0, sizeof h);
  h.ls = ls;
  h.fn = inst->fn;
  each_stmt(&inst->fn->body, find_return, &h);
  if (h.param == NULL)
    return NULL;
  h.name = h.param->name;
  each_stmt(&inst->fn->body, find_rebind, &h);
  if (h.rebound)
    return NULL;
  for (int k = 0; k < inst->fn->nparams && k < e->u.call.nrargs; k++) {
    const asc__ast_expr *a = e->u.call.rargs[k];
    if (inst->fn->params[k].sym == h.param)
      return a->kind == ASC_EXPR_NAME || asc__lower_is_view(ls, a) ? h.param
                                                                   : NULL;
  }
  return NULL;
}

static const asc__ast_expr *helper_view(lstate *ls, const asc__ast_expr *e) {
  return returned_view(ls, e) != NULL ? e : NULL;
}

/* A store at `at` into the result of call (through the name `name`, or
 * NULL: into the call's result itself). */
static void stored_view(lstate *ls, const asc__ast_expr *call,
                        const asc__ast_expr *at, const char *name) {
  const asc__tinst *inst = asc__typed_callee(ls->t, call);
  const asc__sym *p = returned_view(ls, call);
  if (name != NULL)
    asc__diag_fatal(ls->c, at->loc,
                    "'%s' holds a copy of the view of '%s' that '%s' "
                    "returns, not the view numpy gives, so this store "
                    "would not reach the argument; write into the "
                    "argument directly",
                    name, p->name, inst->fn->name);
  asc__diag_fatal(ls->c, at->loc,
                  "'%s' returns a copy of the view of '%s', not the view "
                  "numpy gives, so this store would not reach the "
                  "argument; write into the argument directly",
                  inst->fn->name, p->name);
}

/* The strided register of array variable s. */
static int32_t var_reg(lstate *ls, const asc__sym *s) {
  asc__type *t = asc__ty_find(s->type);
  asc__irtype it;
  int32_t r;
  memset(&it, 0, sizeof it);
  it.kind = ASC_IRK_TENSOR;
  it.dtype = (uint8_t)t->dtype;
  it.ndim = (uint8_t)t->ndim;
  r = asc__ir_reg(ls->c, ls->f, it, s->name);
  ls->avars = asc__arena_grow(ls->c, ls->avars, ls->navars, &ls->capavars,
                              sizeof *ls->avars, 8);
  ls->avars[ls->navars++] = r;
  return r;
}

/* dst = the view v. */
static void set_view(lstate *ls, int32_t dst, const asc__lview *v) {
  asc__irval off = conv(ls, v->off, ascInt64);
  asc__irval shape[ASC_MAX_DIMS], stride[ASC_MAX_DIMS];
  asc__irins *i;
  for (int k = 0; k < v->nd; k++) {
    shape[k] = conv(ls, v->shape[k], ascInt64);
    stride[k] = conv(ls, v->stride[k], ascInt64);
  }
  i = emit(ls, ASC_IR_SET_VIEW, dst, 2 + 2 * v->nd);
  i->args[0] = asc__irv_reg(v->t);
  i->args[1] = off;
  for (int k = 0; k < v->nd; k++) {
    i->args[2 + k] = shape[k];
    i->args[2 + v->nd + k] = stride[k];
  }
}

static bool is_array_var(lstate *ls, int32_t r);

/* x = y where y is rebound in a loop or a branch (old = cur, then cur =
 * f(cur)): numpy's x keeps the array y held, but y's register takes the
 * next one.  When neither name's elements are ever stored into, a copy
 * is the same value (asc__lower_alias_copy makes it); otherwise a
 * compile error asks for the copy rather than reading the wrong array. */
static void aliases(avscan *x) {
  lstate *ls = x->ls;
  for (int k = 0; k < x->nal; k++) {
    const avalias *a = &x->al[k];
    avcount *cy = count_of(x, a->y), *cx = count_of(x, a->x);
    if (cy->binds < 2)
      continue;
    if (cx->written || cy->written)
      asc__diag_fatal(ls->c, a->value->loc,
                      "'%s = %s' would keep the array '%s' holds, but '%s' "
                      "is bound to another array in a loop or a branch and "
                      "the arrays are written into; kernels do not keep an "
                      "array a name held before: bind a copy (%s = "
                      "%s.copy())",
                      a->x->name, a->y->name, a->y->name, a->y->name,
                      a->x->name, a->y->name);
    ls->alias_copies =
        asc__arena_grow(ls->c, ls->alias_copies, ls->nalias_copies,
                        &ls->capalias_copies, sizeof *ls->alias_copies, 4);
    ls->alias_copies[ls->nalias_copies++] = a->value;
  }
}

bool asc__lower_alias_copy(lstate *ls, const asc__ast_expr *target,
                           const asc__ast_expr *value) {
  asc__lview v;
  int32_t tmp, r;
  int k;
  for (k = 0; k < ls->nalias_copies; k++)
    if (ls->alias_copies[k] == value)
      break;
  if (k == ls->nalias_copies)
    return false;
  asc__lower_view(ls, value, &v);
  tmp = asc__lower_c_copy(ls, &v);
  r = asc__lower_lookup(ls, target->u.name.sym);
  if (is_array_var(ls, r)) {
    asc__irins *i = emit(ls, ASC_IR_SET_ARRAY, r, 1);
    i->args[0] = asc__irv_reg(tmp);
  } else {
    asc__lower_name_array(ls, target, tmp);
  }
  return true;
}

void asc__lower_array_vars(lstate *ls, const asc__ast_func *fn) {
  avscan x;
  memset(&x, 0, sizeof x);
  x.ls = ls;
  x.fn = fn;
  for (int p = 0; p < fn->nparams; p++) {
    const asc__sym *s = fn->params[p].sym;
    if (is_array_sym(fn, s) && asc__lower_lookup(ls, s) >= 0) {
      avcount *c = count_of(&x, s);
      c->binds = 1;
      c->view = true;
    }
  }
  scan_block(&x, &fn->body);
  for (int k = 0; k < x.n; k++)
    if (x.v[k].hview != NULL && x.v[k].stored)
      stored_view(ls, x.v[k].hview, x.v[k].store_at, x.v[k].sym->name);
  for (int k = 0; k < x.nal; k++) {
    avcount *cy = count_of(&x, x.al[k].y), *cx = count_of(&x, x.al[k].x);
    if (cy->hview != NULL && cx->stored)
      stored_view(ls, cy->hview, cx->store_at, cx->sym->name);
  }
  aliases(&x);
  for (int k = 0; k < x.n; k++) {
    const avcount *c = &x.v[k];
    int32_t r, p;
    asc__lview w;
    if (c->refused || c->binds < 2 || !c->view)
      continue;
    p = asc__lower_lookup(ls, c->sym); /* a parameter's array, or -1 */
    r = var_reg(ls, c->sym);
    if (p >= 0 && ls->f->regs[p].ty.kind == ASC_IRK_TENSOR) {
      asc__lower_whole_tensor(ls, p, &w);
      set_view(ls, r, &w);
    }
    asc__lower_bind(ls, c->sym, r);
  }
}

static bool is_array_var(lstate *ls, int32_t r) {
  for (int k = 0; r >= 0 && k < ls->navars; k++)
    if (ls->avars[k] == r)
      return true;
  return false;
}

bool asc__lower_array_var_assign(lstate *ls, const asc__ast_expr *target,
                                 const asc__ast_expr *value) {
  int32_t r, tmp;
  asc__lview v;
  asc__irins *i;
  if (target->kind != ASC_EXPR_NAME || target->u.name.sym == NULL ||
      value == NULL)
    return false;
  r = asc__lower_lookup(ls, target->u.name.sym);
  if (!is_array_var(ls, r))
    return false;
  if (asc__lower_is_new_array(ls, value)) {
    tmp = asc__lower_make_array(ls, value);
    i = emit(ls, ASC_IR_SET_ARRAY, r, 1);
    i->args[0] = asc__irv_reg(tmp);
    return true;
  }
  asc__lower_view(ls, value, &v);
  if (v.t != r && is_array_var(ls, v.t))
    asc__diag_fatal(ls->c, value->loc,
                    "'%s' would view an array that another name rebound in "
                    "a loop or a branch holds; bind it to a copy "
                    "(%s = ....copy())",
                    target->u.name.sym->name, target->u.name.sym->name);
  set_view(ls, r, &v);
  return true;
}

static void set_value(lstate *ls, const asc__ast_expr *target, int32_t tmp,
                      const asc__lview *v, const asc__ast_expr *value) {
  int32_t r = asc__lower_lookup(ls, target->u.name.sym);
  asc__irins *i;
  if (is_array_var(ls, r) && tmp >= 0) {
    i = emit(ls, ASC_IR_SET_ARRAY, r, 1);
    i->args[0] = asc__irv_reg(tmp);
  } else if (is_array_var(ls, r)) {
    set_view(ls, r, v);
  } else if (tmp >= 0) {
    asc__lower_bind_new_array(ls, target, ty(value), tmp);
  } else {
    asc__lower_bind_view(ls, target->u.name.sym, v);
  }
}

bool asc__lower_array_tuple_assign(lstate *ls, const asc__ast_expr *target,
                                   const asc__ast_expr *value) {
  int n;
  int32_t *tmp;
  asc__lview *v;
  if (target->kind != ASC_EXPR_TUPLE || value->kind != ASC_EXPR_TUPLE ||
      value->u.tuple.n != target->u.tuple.n)
    return false;
  n = target->u.tuple.n;
  for (int q = 0; q < n; q++) {
    const asc__ast_expr *t = target->u.tuple.elts[q];
    if (!is_tensor(value->u.tuple.elts[q]) || t->kind != ASC_EXPR_NAME ||
        t->u.name.sym == NULL)
      return false;
  }
  tmp = asc__arena_alloc(ls->c, sizeof *tmp * (size_t)n);
  v = asc__arena_alloc(ls->c, sizeof *v * (size_t)n);
  for (int q = 0; q < n; q++) {
    const asc__ast_expr *x = value->u.tuple.elts[q];
    tmp[q] = asc__lower_is_new_array(ls, x) ? asc__lower_make_array(ls, x)
                                            : -1;
    if (tmp[q] < 0)
      asc__lower_view(ls, x, &v[q]);
  }
  for (int q = 0; q < n; q++)
    set_value(ls, target->u.tuple.elts[q], tmp[q], &v[q],
              value->u.tuple.elts[q]);
  return true;
}
