/*
 * Name resolution: binds every name of the kernels and helpers to a symbol.
 *
 * Scoping is Python's: a name assigned anywhere in a function is local to
 * the whole function (found by a first walk over its statements, nested
 * functions excluded); other names are looked up in the enclosing functions
 * (nested defs and lambdas used as parallel-loop bodies capture them), then
 * at module level (imports, constants, classes, functions), then among the
 * Python builtins.  Module constants are folded and frozen here.  Calls
 * get their target and their arguments in parameter order.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/front/frontend.h"

typedef struct vec {
  void **v;
  int n, cap;
  /* For find() on a vector of symbols: an open-addressing set of
   * index + 1 (0: free) by name, newest symbol per name, holding the first
   * `indexed` entries; built once the vector is long enough to need it. */
  int32_t *tab;
  int tabcap, indexed;
} vec;

typedef struct resolver {
  asc__cctx *c;
  asc__ast_module *m;
  vec module;             /* asc__sym *: module-level names */
  const ascGlobalValue *globals;
  int nglobals;
  asc__ast_func *fn;      /* function being resolved */
  vec *locals;            /* its symbols (asc__sym *) */
  int parallel;           /* inside a parallel-loop body */
  int handlers;           /* inside an except block */
  bool lambda_ok;         /* the next lambda is a parallel_for body */
  int array_loops;        /* `for x in a` loops rewritten so far */
} resolver;

static void vpush(resolver *r, vec *v, void *x) {
  if (v->n == v->cap) {
    int ncap = v->cap ? v->cap * 2 : 8;
    void **nv = asc__arena_alloc(r->c, (size_t)ncap * sizeof *nv);
    if (v->n)
      memcpy(nv, v->v, (size_t)v->n * sizeof *nv);
    v->v = nv;
    v->cap = ncap;
  }
  v->v[v->n++] = x;
}

static asc__sym *new_sym(resolver *r, asc__sym_kind k, const char *name,
                         asc__loc loc) {
  asc__sym *s = asc__arena_alloc(r->c, sizeof *s);
  s->kind = k;
  s->name = name;
  s->loc = loc;
  return s;
}

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static int32_t *tab_slot(const vec *v, const char *name) {
  uint32_t mask = (uint32_t)v->tabcap - 1;
  for (uint32_t h = name_hash(name) & mask;; h = (h + 1) & mask) {
    int32_t *slot = &v->tab[h];
    if (*slot == 0 ||
        strcmp(((asc__sym *)v->v[*slot - 1])->name, name) == 0)
      return slot;
  }
}

/* The newest symbol called name in v.  Kernels with thousands of
 * variables look names up through the index, not a scan per use. */
static asc__sym *find(resolver *r, vec *v, const char *name) {
  int32_t k;
  if (v->n < 16) {
    for (int i = v->n - 1; i >= 0; i--) {
      asc__sym *s = v->v[i];
      if (strcmp(s->name, name) == 0)
        return s;
    }
    return NULL;
  }
  if (2 * v->n > v->tabcap) {
    int cap = 64;
    while (cap < 2 * v->n)
      cap *= 2;
    v->tab = asc__arena_alloc(r->c, sizeof *v->tab * (size_t)cap);
    v->tabcap = cap;
    v->indexed = 0;
  }
  for (; v->indexed < v->n; v->indexed++)
    *tab_slot(v, ((asc__sym *)v->v[v->indexed])->name) = v->indexed + 1;
  k = *tab_slot(v, name);
  return k ? v->v[k - 1] : NULL;
}

/* ---------------------------------------------------- constant folding */

static bool fold(resolver *r, asc__ast_expr *e, ascScalar *out);

static bool is_num(const ascScalar *s) { return s->dtype != ascDataTypeCount; }
static double as_f(const ascScalar *s) {
  return s->dtype == ascFloat64 ? s->value.f : (double)s->value.i;
}
static void set_i(ascScalar *o, int64_t v) {
  o->dtype = ascInt64;
  o->weak = 1;
  o->value.i = v;
}
static void set_f(ascScalar *o, double v) {
  o->dtype = ascFloat64;
  o->weak = 1;
  o->value.f = v;
}
static void set_b(ascScalar *o, bool v) {
  o->dtype = ascBool;
  o->weak = 1;
  o->value.i = v;
}

static bool fold_binary(asc__binop op, const ascScalar *a, const ascScalar *b,
                        ascScalar *o) {
  bool fl = a->dtype == ascFloat64 || b->dtype == ascFloat64;
  if (op == ASC_BIN_DIV) {
    double d = as_f(b);
    if (d == 0.0)
      return false;
    set_f(o, as_f(a) / d);
    return true;
  }
  if (fl) {
    double x = as_f(a), y = as_f(b), m;
    switch (op) {
    case ASC_BIN_ADD: set_f(o, x + y); return true;
    case ASC_BIN_SUB: set_f(o, x - y); return true;
    case ASC_BIN_MUL: set_f(o, x * y); return true;
    case ASC_BIN_POW: set_f(o, pow(x, y)); return !isnan(o->value.f) || isnan(x) || isnan(y);
    case ASC_BIN_FLOORDIV:
    case ASC_BIN_MOD:
      if (y == 0.0)
        return false;
      m = fmod(x, y);
      if (m != 0.0 && ((m < 0) != (y < 0)))
        m += y;
      if (op == ASC_BIN_MOD)
        set_f(o, m);
      else
        set_f(o, floor((x - m) / y + 0.5));
      return true;
    default:
      return false;
    }
  }
  {
    int64_t x = a->value.i, y = b->value.i, v;
    switch (op) {
    case ASC_BIN_ADD:
      if (__builtin_add_overflow(x, y, &v)) return false;
      break;
    case ASC_BIN_SUB:
      if (__builtin_sub_overflow(x, y, &v)) return false;
      break;
    case ASC_BIN_MUL:
      if (__builtin_mul_overflow(x, y, &v)) return false;
      break;
    case ASC_BIN_FLOORDIV:
    case ASC_BIN_MOD:
      if (y == 0 || (x == INT64_MIN && y == -1))
        return false;
      {
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          q--;
          m += y;
        }
        v = op == ASC_BIN_MOD ? m : q;
      }
      break;
    case ASC_BIN_POW:
      if (y < 0) {
        if (x == 0)
          return false;
        set_f(o, pow((double)x, (double)y));
        return true;
      }
      v = 1;
      for (int64_t i = 0; i < y; i++) {
        if (__builtin_mul_overflow(v, x, &v))
          return false;
        if (v == 0 || v == 1)
          break;
        if (v == -1 && i + 1 < y) {
          v = ((y - i - 1) % 2 == 0) ? -1 : 1;
          break;
        }
      }
      break;
    case ASC_BIN_LSHIFT:
      if (y < 0 || y > 62 || x < 0 || x > (INT64_MAX >> y))
        return false;
      v = x << y;
      break;
    case ASC_BIN_RSHIFT:
      if (y < 0)
        return false;
      v = y > 63 ? (x < 0 ? -1 : 0) : x >> y;
      break;
    case ASC_BIN_BITAND: v = x & y; break;
    case ASC_BIN_BITOR: v = x | y; break;
    case ASC_BIN_BITXOR: v = x ^ y; break;
    default: return false;
    }
    set_i(o, v);
    return true;
  }
}

static bool fold(resolver *r, asc__ast_expr *e, ascScalar *o) {
  ascScalar a, b;
  switch (e->kind) {
  case ASC_EXPR_INT:
    if (e->u.ival > (uint64_t)INT64_MAX)
      return false;
    set_i(o, (int64_t)e->u.ival);
    return true;
  case ASC_EXPR_FLOAT:
    if (e->imag)
      return false; /* a complex constant: not a number here */
    set_f(o, e->u.fval);
    return true;
  case ASC_EXPR_BOOL: set_b(o, e->u.bval); return true;
  case ASC_EXPR_NAME: {
    asc__sym *s = find(r, &r->module, e->u.name.id);
    if (s == NULL || s->kind != ASC_SYM_CONST ||
        !is_num(&s->u.cnst->folded))
      return false;
    e->u.name.sym = s;
    *o = s->u.cnst->folded;
    return true;
  }
  case ASC_EXPR_ATTR: {
    asc__sym *s;
    const asc__builtin *bi;
    asc__namespace ns;
    if (e->u.attr.value->kind != ASC_EXPR_NAME)
      return false;
    s = find(r, &r->module, e->u.attr.value->u.name.id);
    if (s == NULL) {
      const char *n = e->u.attr.value->u.name.id;
      if (strcmp(n, "math") == 0)
        ns = ASC_NS_MATH;
      else if (strcmp(n, "asc") == 0 || strcmp(n, "pyasc") == 0)
        ns = ASC_NS_ASC;
      else
        return false;
    } else if (s->kind == ASC_SYM_MODULE) {
      ns = s->u.module;
    } else {
      return false;
    }
    bi = asc__builtin_lookup(ns, e->u.attr.attr);
    if (bi == NULL || bi->kind != ASC_BK_CONST || bi->id == ASC_BI_CM_INFJ ||
        bi->id == ASC_BI_CM_NANJ)
      return false; /* cmath.infj: a complex constant, not a number here */
    set_f(o, asc__builtin_value(bi));
    return true;
  }
  case ASC_EXPR_UNARY:
    if (!fold(r, e->u.unary.operand, &a))
      return false;
    switch (e->u.unary.op) {
    case ASC_UN_NOT:
      set_b(o, a.dtype == ascFloat64 ? a.value.f == 0.0 : a.value.i == 0);
      return true;
    case ASC_UN_POS:
      if (a.dtype == ascBool)
        set_i(o, a.value.i);
      else
        *o = a;
      return true;
    case ASC_UN_NEG:
      if (a.dtype == ascFloat64)
        set_f(o, -a.value.f);
      else if (a.value.i == INT64_MIN)
        return false;
      else
        set_i(o, -a.value.i);
      return true;
    case ASC_UN_INVERT:
      if (a.dtype == ascFloat64)
        return false;
      set_i(o, ~a.value.i);
      return true;
    }
    return false;
  case ASC_EXPR_BINARY:
    if (!fold(r, e->u.binary.lhs, &a) || !fold(r, e->u.binary.rhs, &b))
      return false;
    return fold_binary(e->u.binary.op, &a, &b, o);
  case ASC_EXPR_BOOLOP: {
    bool t;
    if (!fold(r, e->u.boolop.lhs, &a))
      return false;
    t = a.dtype == ascFloat64 ? a.value.f != 0.0 : a.value.i != 0;
    if (e->u.boolop.is_and ? !t : t) {
      *o = a;
      return true;
    }
    return fold(r, e->u.boolop.rhs, o);
  }
  default:
    return false;
  }
}

/* ------------------------------------------------------- module scope */

static void declare_module(resolver *r, asc__sym *s) {
  asc__sym *old = find(r, &r->module, s->name);
  if (old != NULL && old->kind == ASC_SYM_FUNC && s->kind == ASC_SYM_FUNC &&
      (old->u.func->kind != ASC_FUNC_PLAIN ||
       s->u.func->kind != ASC_FUNC_PLAIN)) {
    asc__diag_error(r->c, s->loc, "redefinition of '%s'", s->name);
    asc__diag_note(r->c, old->loc, "'%s' was first defined here", s->name);
  }
  vpush(r, &r->module, s);
}

static void module_scope(resolver *r) {
  asc__ast_module *m = r->m;
  for (int i = 0; i < m->nimports; i++) {
    asc__ast_import *im = &m->imports[i];
    asc__sym *s;
    bool is_asc = strcmp(im->module, "asc") == 0 ||
                  strcmp(im->module, "pyasc") == 0;
    bool is_math = strcmp(im->module, "math") == 0;
    bool is_np = strcmp(im->module, "numpy") == 0;
    bool is_cmath = strcmp(im->module, "cmath") == 0;
    if (im->name == NULL && (is_np || is_cmath)) {
      s = new_sym(r, ASC_SYM_MODULE, im->asname, im->loc);
      s->u.module = is_np ? ASC_NS_NP : ASC_NS_CMATH;
    } else if (im->name == NULL) {
      s = new_sym(r, is_asc || is_math ? ASC_SYM_MODULE : ASC_SYM_FOREIGN,
                  im->asname, im->loc);
      s->u.module = is_asc ? ASC_NS_ASC : ASC_NS_MATH;
    } else if (is_asc || is_math) {
      const asc__builtin *b =
          asc__builtin_lookup(is_asc ? ASC_NS_ASC : ASC_NS_MATH, im->name);
      if (b == NULL) {
        asc__diag_error(r->c, im->loc, "cannot import name '%s' from '%s' "
                        "(not a kernel builtin)", im->name, im->module);
        continue;
      }
      s = new_sym(r, ASC_SYM_BUILTIN, im->asname, im->loc);
      s->u.builtin = b;
    } else {
      s = new_sym(r, ASC_SYM_FOREIGN, im->asname, im->loc);
    }
    if (s->kind == ASC_SYM_FOREIGN)
      s->u.import = im;
    vpush(r, &r->module, s);
  }
  for (int i = 0; i < m->nclasses; i++) {
    asc__sym *s = new_sym(r, ASC_SYM_CLASS, m->classes[i]->name,
                          m->classes[i]->loc);
    s->u.cls = m->classes[i];
    vpush(r, &r->module, s);
  }
  for (int i = 0; i < m->nfuncs; i++) {
    asc__sym *s = new_sym(r, ASC_SYM_FUNC, m->funcs[i]->name,
                          m->funcs[i]->loc);
    s->u.func = m->funcs[i];
    declare_module(r, s);
  }
  /* constants last, in source order, so each folds against those before */
  for (int i = 0; i < m->nconsts; i++) {
    asc__ast_const *k = m->consts[i];
    asc__sym *s = new_sym(r, ASC_SYM_CONST, k->name, k->loc);
    s->u.cnst = k;
    k->sym = s;
    k->folded.dtype = ascDataTypeCount;
    if (!fold(r, k->value, &k->folded))
      k->folded.dtype = ascDataTypeCount;
    for (int g = 0; g < r->nglobals; g++)
      if (r->globals[g].name != NULL &&
          strcmp(r->globals[g].name, k->name) == 0) {
        k->folded = r->globals[g].value;
        k->from_caller = true;
      }
    vpush(r, &r->module, s);
  }
  /* caller-supplied names the module does not define */
  for (int g = 0; g < r->nglobals; g++) {
    asc__ast_const *k;
    asc__sym *s;
    asc__loc none = {0, 0};
    if (r->globals[g].name == NULL || find(r, &r->module, r->globals[g].name))
      continue;
    k = asc__arena_alloc(r->c, sizeof *k);
    k->name = asc__arena_strndup(r->c, r->globals[g].name,
                                 strlen(r->globals[g].name));
    k->folded = r->globals[g].value;
    k->from_caller = true;
    s = new_sym(r, ASC_SYM_CONST, k->name, none);
    s->u.cnst = k;
    k->sym = s;
    vpush(r, &r->module, s);
    {
      asc__ast_const **nc = asc__arena_alloc(
          r->c, (size_t)(r->m->nconsts + 1) * sizeof *nc);
      if (r->m->nconsts)
        memcpy(nc, r->m->consts, (size_t)r->m->nconsts * sizeof *nc);
      nc[r->m->nconsts++] = k;
      r->m->consts = nc;
    }
  }
}

/* ------------------------------------------------------------- locals */

static void bind_local(resolver *r, asc__ast_func *f, vec *locals,
                       const char *name, asc__loc loc, asc__sym_kind k) {
  asc__sym *s = find(r, locals, name);
  if (s != NULL)
    return;
  s = new_sym(r, k, name, loc);
  s->owner = f;
  s->u.index = locals->n;
  vpush(r, locals, s);
}

static void bind_target(resolver *r, asc__ast_func *f, vec *locals,
                        asc__ast_expr *t) {
  if (t->kind == ASC_EXPR_NAME)
    bind_local(r, f, locals, t->u.name.id, t->loc, ASC_SYM_LOCAL);
  else if (t->kind == ASC_EXPR_TUPLE)
    for (int i = 0; i < t->u.tuple.n; i++)
      bind_target(r, f, locals, t->u.tuple.elts[i]);
}

static asc__ast_expr *synth(resolver *r, asc__expr_kind k, asc__loc loc,
                            int32_t depth) {
  asc__ast_expr *e = asc__arena_alloc(r->c, sizeof *e);
  memset(e, 0, sizeof *e);
  e->kind = k;
  e->loc = loc;
  e->depth = depth;
  return e;
}

/* `for x in a:` (a an array expression: numpy iterates its first axis)
 * becomes `for <i> in range(a.shape[0]): x = a[<i>]`, <i> a name no
 * source can write. */
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

/* The names a block binds (Python: assigned anywhere => local). */
static void collect(resolver *r, asc__ast_func *f, vec *locals,
                    asc__ast_block *b) {
  for (int i = 0; i < b->n; i++) {
    asc__ast_stmt *s = b->stmts[i];
    switch (s->kind) {
    case ASC_STMT_ASSIGN:
      for (int j = 0; j < s->u.assign.ntargets; j++)
        bind_target(r, f, locals, s->u.assign.targets[j]);
      break;
    case ASC_STMT_AUGASSIGN: bind_target(r, f, locals, s->u.aug.target); break;
    case ASC_STMT_ANNASSIGN: bind_target(r, f, locals, s->u.ann.target); break;
    case ASC_STMT_IF:
      collect(r, f, locals, &s->u.if_.body);
      collect(r, f, locals, &s->u.if_.orelse);
      break;
    case ASC_STMT_FOR:
      if (is_call_of(s->u.for_.iter, "zip") ||
          is_call_of(s->u.for_.iter, "enumerate")) {
        if (iter_loop_rewrite(r, b, i) > 0) {
          i--; /* the values put before the loop first */
          break;
        }
      }
      if (s->u.for_.iter != NULL && s->u.for_.iter->kind != ASC_EXPR_CALL &&
          s->u.for_.target->kind == ASC_EXPR_NAME)
        array_loop(r, s);
      bind_target(r, f, locals, s->u.for_.target);
      if (s->u.for_.over_array)
        bind_target(r, f, locals,
                    s->u.for_.body.stmts[0]->u.assign.targets[0]);
      collect(r, f, locals, &s->u.for_.body);
      break;
    case ASC_STMT_WHILE: collect(r, f, locals, &s->u.while_.body); break;
    case ASC_STMT_TRY:
      collect(r, f, locals, &s->u.try_.body);
      for (int j = 0; j < s->u.try_.nhandlers; j++) {
        asc__ast_handler *h = &s->u.try_.handlers[j];
        if (h->name != NULL)
          bind_local(r, f, locals, h->name, h->name_loc, ASC_SYM_EXC_VAR);
        collect(r, f, locals, &h->body);
      }
      collect(r, f, locals, &s->u.try_.orelse);
      collect(r, f, locals, &s->u.try_.finalbody);
      break;
    case ASC_STMT_WITH: collect(r, f, locals, &s->u.with.body); break;
    case ASC_STMT_FUNCDEF: {
      asc__ast_func *g = s->u.funcdef.fn;
      if (find(r, locals, g->name) == NULL) {
        asc__sym *sym = new_sym(r, ASC_SYM_FUNC, g->name, g->loc);
        sym->owner = f;
        sym->u.func = g;
        vpush(r, locals, sym);
      }
      break;
    }
    default:
      break;
    }
  }
}

/* --------------------------------------------------------- expressions */

static void expr(resolver *r, asc__ast_expr *e);
static void block(resolver *r, asc__ast_block *b);
static void function(resolver *r, asc__ast_func *f);

static asc__sym *lookup(resolver *r, const char *name) {
  asc__sym *s = find(r, r->locals, name);
  if (s != NULL)
    return s;
  for (asc__ast_func *f = r->fn ? r->fn->parent : NULL; f; f = f->parent) {
    for (int i = 0; i < f->nlocals; i++)
      if (strcmp(f->locals[i]->name, name) == 0) {
        f->locals[i]->captured = true;
        return f->locals[i];
      }
  }
  s = find(r, &r->module, name);
  if (s != NULL)
    return s;
  /* Text taken from one function (inspect.getsource) has no imports:
   * asc, pyasc and math are then bound implicitly. */
  if (strcmp(name, "asc") == 0 || strcmp(name, "pyasc") == 0 ||
      strcmp(name, "math") == 0) {
    asc__loc none = {0, 0};
    s = new_sym(r, ASC_SYM_MODULE, name, none);
    s->u.module = name[0] == 'm' ? ASC_NS_MATH : ASC_NS_ASC;
    vpush(r, &r->module, s);
    return s;
  }
  {
    const asc__builtin *b = asc__builtin_lookup(ASC_NS_PY, name);
    if (b != NULL) {
      asc__loc none = {0, 0};
      s = new_sym(r, ASC_SYM_BUILTIN, name, none);
      s->u.builtin = b;
      vpush(r, &r->module, s);
      return s;
    }
  }
  return NULL;
}

static const char *callee_name(resolver *r, asc__ast_expr *f) {
  if (f->kind == ASC_EXPR_NAME)
    return f->u.name.id;
  if (f->kind == ASC_EXPR_ATTR && f->u.attr.value->kind == ASC_EXPR_NAME)
    return asc__arena_printf(r->c, "%s.%s", f->u.attr.value->u.name.id,
                             f->u.attr.attr);
  return "function";
}

/* A name imported from numpy (import numpy as np; from numpy import x). */
static bool is_numpy(const asc__sym *s) {
  const char *m;
  if (s == NULL || s->kind != ASC_SYM_FOREIGN || s->u.import == NULL)
    return false;
  m = s->u.import->module;
  return strcmp(m, "numpy") == 0 || strncmp(m, "numpy.", 6) == 0;
}

/* numpy's `fn` used in a kernel: name the asc equivalent when there is
 * one. */
static void numpy_error(resolver *r, asc__loc loc, const char *written,
                        const char *fn) {
  const asc__builtin *b = asc__builtin_lookup(ASC_NS_ASC, fn);
  if (asc__builtin_lookup(ASC_NS_NP, fn) != NULL)
    asc__diag_error(r->c, loc, "names imported from numpy are not supported "
                    "in kernels (%s): `import numpy as np` and write np.%s",
                    written, fn);
  else if (b != NULL && b->kind != ASC_BK_DECORATOR)
    asc__diag_error(r->c, loc, "numpy is not supported in kernels yet: use "
                    "asc.%s instead of %s", fn, written);
  else
    asc__diag_error(r->c, loc, "numpy is not supported in kernels yet, and "
                    "asc has no '%s' (%s)", fn, written);
}

static void name_use(resolver *r, asc__ast_expr *e, bool as_attr_base) {
  asc__sym *s = lookup(r, e->u.name.id);
  e->u.name.sym = s;
  if (s == NULL) {
    if (strcmp(e->u.name.id, "print") == 0)
      asc__diag_error(r->c, e->loc, "printing is not supported in kernels "
                      "(write the values to a tensor, or raise an "
                      "exception with a message)");
    else
      asc__diag_error(r->c, e->loc, "name '%s' is not defined",
                      e->u.name.id);
    return;
  }
  if (is_numpy(s)) {
    /* np.sqrt: reported with its attribute (expr, ASC_EXPR_ATTR) */
    if (as_attr_base)
      return;
    if (s->u.import->name != NULL)
      numpy_error(r, e->loc, e->u.name.id, s->u.import->name);
    else
      asc__diag_error(r->c, e->loc, "numpy ('%s') is not supported in "
                      "kernels yet", e->u.name.id);
    return;
  }
  switch (s->kind) {
  case ASC_SYM_MODULE:
    if (!as_attr_base)
      asc__diag_error(r->c, e->loc, "module '%s' cannot be used as a value",
                      e->u.name.id);
    break;
  case ASC_SYM_FOREIGN:
    if (s->u.import != NULL && s->u.import->name != NULL &&
        strcmp(s->u.import->module, "cmath") == 0)
      /* a bare name has math's semantics: cmath's must be written so */
      asc__diag_error(r->c, e->loc, "'from cmath import %s' is not "
                      "supported in kernels: `import cmath` and write "
                      "cmath.%s", s->u.import->name, s->u.import->name);
    else
      asc__diag_error(r->c, e->loc, "'%s' names a Python module or object "
                      "that kernels cannot use", e->u.name.id);
    break;
  case ASC_SYM_CONST:
    if (!is_num(&s->u.cnst->folded))
      asc__diag_error(r->c, e->loc, "'%s' is not a compile-time constant "
                      "(module-level names used in kernels must be bool, "
                      "int or float constants)", e->u.name.id);
    break;
  case ASC_SYM_CLASS:
    if (s->u.cls->unsupported != NULL) {
      asc__diag_error(r->c, e->loc, "class '%s' cannot be used in a kernel",
                      e->u.name.id);
      asc__diag_note(r->c, s->u.cls->unsupported_loc, "%s",
                     s->u.cls->unsupported);
    }
    break;
  default:
    break;
  }
}

/* Maps a call's arguments to parameters: names[i] for keywords, n slots,
 * min required. */
static void bind_args(resolver *r, asc__ast_expr *call, const char *what,
                      int min, int max, const char *const *names,
                      asc__ast_expr *const *defaults) {
  int n = call->u.call.nargs;
  int slots = max < 0 ? n : max;
  asc__ast_expr **ra;
  if (max >= 0 && n > max) {
    asc__diag_error(r->c, call->u.call.args[max]->loc, "%s() takes %s%d "
                    "argument%s (%d given)", what,
                    min == max ? "" : "at most ", max, max == 1 ? "" : "s", n);
    return;
  }
  if (max < 0 && call->u.call.nkws > 0) {
    asc__diag_error(r->c, call->u.call.kws[0].loc, "%s() takes no keyword "
                    "arguments", what);
    return;
  }
  ra = asc__arena_alloc(r->c, (size_t)(slots ? slots : 1) * sizeof *ra);
  for (int i = 0; i < n; i++)
    ra[i] = call->u.call.args[i];
  for (int i = 0; i < call->u.call.nkws; i++) {
    asc__ast_keyword *k = &call->u.call.kws[i];
    int idx = -1;
    for (int j = 0; j < slots && names != NULL; j++)
      if (names[j] != NULL && strcmp(names[j], k->name) == 0)
        idx = j;
    if (idx < 0) {
      asc__diag_error(r->c, k->loc, "%s() got an unexpected keyword "
                      "argument '%s'", what, k->name);
      return;
    }
    if (ra[idx] != NULL) {
      asc__diag_error(r->c, k->loc, "%s() got multiple values for argument "
                      "'%s'", what, k->name);
      return;
    }
    ra[idx] = k->value;
  }
  for (int j = 0; j < slots; j++) {
    if (ra[j] == NULL && defaults != NULL)
      ra[j] = defaults[j];
    if (ra[j] == NULL && j < min) {
      if (names != NULL && names[j] != NULL)
        asc__diag_error(r->c, call->loc, "%s() missing required argument "
                        "'%s'", what, names[j]);
      else
        asc__diag_error(r->c, call->loc, "%s() takes %s%d argument%s (%d "
                        "given)", what, min == max ? "" : "at least ", min,
                        min == 1 ? "" : "s", n);
      return;
    }
  }
  call->u.call.rargs = ra;
  call->u.call.nrargs = slots;
}

static const char **builtin_param_names(resolver *r, const asc__builtin *b) {
  int n = b->max_args < 0 ? 0 : b->max_args;
  const char **names = asc__arena_alloc(r->c, (size_t)(n + 1) * sizeof *names);
  const char *p = b->params;
  for (int i = 0; i < n && *p; i++) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    names[i] = asc__arena_strndup(r->c, p, l);
    p = e ? e + 1 : p + l;
  }
  return names;
}

/* np.linalg.norm(x, ord=None, axis=None, keepdims=False) is
 * np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)): the 2-norm of
 * a vector, the Frobenius norm of a matrix (numpy's definition for
 * ord=None). */
static void norm_call(resolver *r, asc__ast_expr *e) {
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

static asc__ast_expr *node(resolver *r, asc__expr_kind k, asc__loc loc,
                           int32_t depth) {
  asc__ast_expr *x = asc__arena_alloc(r->c, sizeof *x);
  memset(x, 0, sizeof *x);
  x->kind = k;
  x->loc = loc;
  x->depth = depth;
  return x;
}

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
  asc__ast_expr *c = node(r, ASC_EXPR_COMPARE, x->loc, x->depth + 1);
  make_compare(r, c, ASC_CMP_NE, x, node(r, ASC_EXPR_INT, x->loc, 1));
  return c;
}

/* The entry of op_ufuncs call e names (np.add, ...), or -1. */
static int op_ufunc_of(resolver *r, const asc__ast_expr *e) {
  const asc__ast_expr *f = e->u.call.func;
  const asc__sym *s;
  int i, n = (int)(sizeof op_ufuncs / sizeof op_ufuncs[0]);
  if (f->kind != ASC_EXPR_ATTR || f->u.attr.value->kind != ASC_EXPR_NAME)
    return -1;
  for (i = 0; i < n; i++)
    if (strcmp(op_ufuncs[i].name, f->u.attr.attr) == 0)
      break;
  s = i < n ? lookup(r, f->u.attr.value->u.name.id) : NULL;
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
 * refused by op_ufunc.) */
static bool op_ufunc_out(resolver *r, asc__ast_stmt *s) {
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
  all = node(r, ASC_EXPR_SLICE, out->loc, 1);
  all->u.slice.ellipsis = true;
  t = node(r, ASC_EXPR_SUBSCRIPT, out->loc, out->depth + 1);
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
  return true;
}

/* np.add(x, y) -> x + y, ...; false when e is no such call. */
static bool op_ufunc(resolver *r, asc__ast_expr *e) {
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
    make_compare(r, e, ASC_CMP_EQ, x, node(r, ASC_EXPR_INT, x->loc, 1));
    break;
  case UF_SQUARE:
    e->kind = ASC_EXPR_BINARY;
    e->u.binary.op = ASC_BIN_POW;
    e->u.binary.lhs = x;
    e->u.binary.rhs = node(r, ASC_EXPR_INT, x->loc, 1);
    e->u.binary.rhs->u.ival = 2;
    break;
  }
  expr(r, e);
  return true;
}

static bool tuple_axes_ok(asc__builtin_id id) {
  return id == ASC_BI_NP_SUM || id == ASC_BI_NP_PROD || id == ASC_BI_NP_MEAN ||
         id == ASC_BI_NP_MIN || id == ASC_BI_NP_MAX || id == ASC_BI_NP_ANY ||
         id == ASC_BI_NP_ALL;
}

/* np.sum(a, axis=(1, 2)) (and prod, mean, min, max, any, all, as
 * functions or methods) is a reduction along each axis in turn:
 * np.sum(np.sum(a, axis=2), axis=1).  Without keepdims an axis reduced
 * first must not move the others: the largest axis goes first, or with
 * negative axes the most negative.  The axes are integer literals of one
 * sign, none twice.  A float mean is then a mean of means (rounded once
 * per axis; numpy divides the sum once). */
static void tuple_axis_call(resolver *r, asc__ast_expr *e) {
  asc__ast_expr **a = e->u.call.rargs, *t;
  int64_t ax[ASC_MAX_DIMS];
  int n;
  bool neg;
  asc__ast_expr *inner = NULL;
  if (a == NULL || e->u.call.nrargs < 2 || a[1] == NULL ||
      a[1]->kind != ASC_EXPR_TUPLE)
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

static void call_expr(resolver *r, asc__ast_expr *e) {
  asc__ast_expr *f = e->u.call.func;
  const asc__builtin *b;
  const char *what;

  if (op_ufunc(r, e))
    return;
  if (f->kind == ASC_EXPR_NAME)
    name_use(r, f, false);
  else if (f->kind == ASC_EXPR_ATTR)
    expr(r, f);
  else {
    expr(r, f);
    asc__diag_error(r->c, f->loc, "this expression is not callable in a "
                    "kernel");
    return;
  }
  what = callee_name(r, f);
  b = asc__expr_builtin(f);

  /* arguments first; a parallel_for body may be a lambda */
  for (int i = 0; i < e->u.call.nargs; i++) {
    asc__ast_expr *a = e->u.call.args[i];
    bool body = b != NULL && b->id == ASC_BI_PARALLEL_FOR && i == 1;
    r->lambda_ok = body && a->kind == ASC_EXPR_LAMBDA;
    if (body && a->kind == ASC_EXPR_NAME) {
      name_use(r, a, false);
      if (a->u.name.sym != NULL && (a->u.name.sym->kind != ASC_SYM_FUNC ||
                                    a->u.name.sym->u.func->kind !=
                                        ASC_FUNC_NESTED))
        asc__diag_error(r->c, a->loc, "the body of asc.parallel_for must be "
                        "a lambda or a function defined in the kernel");
    } else {
      expr(r, a);
    }
    r->lambda_ok = false;
  }
  for (int i = 0; i < e->u.call.nkws; i++) {
    asc__ast_keyword *k = &e->u.call.kws[i];
    r->lambda_ok = b != NULL && b->id == ASC_BI_PARALLEL_FOR &&
                   strcmp(k->name, "body") == 0 &&
                   k->value->kind == ASC_EXPR_LAMBDA;
    expr(r, k->value);
    r->lambda_ok = false;
  }

  if (b != NULL) {
    switch (b->kind) {
    case ASC_BK_FUNC:
    case ASC_BK_DTYPE:
    case ASC_BK_EXC:
      e->u.call.builtin = b;
      bind_args(r, e, what, b->min_args, b->max_args,
                builtin_param_names(r, b), NULL);
      if (b->id == ASC_BI_NP_NORM && e->u.call.rargs != NULL)
        norm_call(r, e);
      if (tuple_axes_ok(b->id))
        tuple_axis_call(r, e);
      if (b->id == ASC_BI_BARRIER && r->parallel > 0)
        asc__diag_error(r->c, e->loc, "asc.barrier() cannot be used inside "
                        "a parallel loop");
      return;
    default:
      asc__diag_error(r->c, f->loc, "'%s' is not callable", what);
      return;
    }
  }
  if (f->kind == ASC_EXPR_ATTR) {
    const asc__ast_expr *base = f->u.attr.value;
    while (base->kind == ASC_EXPR_ATTR)
      base = base->u.attr.value;
    if (base != f->u.attr.value && base->kind == ASC_EXPR_NAME &&
        base->u.name.sym != NULL && base->u.name.sym->kind == ASC_SYM_MODULE)
      return; /* np.linalg.norm: np.linalg already reported */
    if (f->u.attr.value->kind == ASC_EXPR_NAME &&
        f->u.attr.value->u.name.sym != NULL &&
        (f->u.attr.value->u.name.sym->kind == ASC_SYM_MODULE ||
         f->u.attr.value->u.name.sym->kind == ASC_SYM_FOREIGN))
      return; /* unknown module attribute: already reported */
    b = asc__builtin_method(f->u.attr.attr);
    if (b != NULL) {
      /* a.sum(axis=1) is np.sum(a, axis=1): the receiver goes first */
      asc__ast_expr **args = asc__arena_alloc(
          r->c, sizeof *args * ((size_t)e->u.call.nargs + 1));
      args[0] = f->u.attr.value;
      for (int i = 0; i < e->u.call.nargs; i++)
        args[i + 1] = e->u.call.args[i];
      e->u.call.args = args;
      e->u.call.nargs++;
      e->u.call.builtin = b;
      bind_args(r, e, what, b->min_args, b->max_args,
                builtin_param_names(r, b), NULL);
      if (tuple_axes_ok(b->id))
        tuple_axis_call(r, e);
      return;
    }
    asc__diag_error(r->c, f->u.attr.attr_loc, "method calls are not "
                    "supported in kernels ('.%s()'; array methods kernels "
                    "accept: sum, prod, min, max, mean, var, std, any, all, "
                    "argmin, argmax, dot, clip, copy, astype, fill, reshape, "
                    "transpose, ravel, flatten, cumsum)", f->u.attr.attr);
    return;
  }
  {
    asc__sym *s = f->u.name.sym;
    if (s == NULL)
      return;
    if (s->kind == ASC_SYM_FUNC) {
      asc__ast_func *g = s->u.func;
      const char **names;
      asc__ast_expr **defs;
      int min = 0;
      if (g->kind == ASC_FUNC_KERNEL) {
        asc__diag_error(r->c, f->loc, "'%s' is a kernel and cannot be called "
                        "from kernel code (make it an @asc.func helper)",
                        g->name);
        return;
      }
      if (g->kind == ASC_FUNC_PLAIN) {
        asc__diag_error(r->c, f->loc, "'%s' is a Python function; decorate "
                        "it with @asc.func to call it from a kernel",
                        g->name);
        return;
      }
      if (g->kind == ASC_FUNC_NESTED) {
        asc__diag_error(r->c, f->loc, "nested function '%s' can only be "
                        "used as the body of asc.parallel_for", g->name);
        return;
      }
      names = asc__arena_alloc(r->c, (size_t)(g->nparams + 1) * sizeof *names);
      defs = asc__arena_alloc(r->c, (size_t)(g->nparams + 1) * sizeof *defs);
      for (int i = 0; i < g->nparams; i++) {
        names[i] = g->params[i].name;
        defs[i] = g->params[i].def;
        if (g->params[i].def == NULL)
          min = i + 1;
      }
      e->u.call.callee = g;
      bind_args(r, e, g->name, min, g->nparams, names, defs);
      if (r->fn != NULL) {
        asc__ast_func *top = r->fn;
        while (top->parent != NULL)
          top = top->parent;
        for (int i = 0; i < top->ncallees; i++)
          if (top->callees[i] == g)
            return;
        {
          asc__ast_func **nc = asc__arena_alloc(
              r->c, (size_t)(top->ncallees + 1) * sizeof *nc);
          if (top->ncallees)
            memcpy(nc, top->callees, (size_t)top->ncallees * sizeof *nc);
          nc[top->ncallees++] = g;
          top->callees = nc;
        }
      }
      return;
    }
    if (s->kind == ASC_SYM_CLASS) {
      asc__ast_class *k = s->u.cls;
      const char **names;
      asc__ast_expr **defs;
      int min = 0;
      if (k->unsupported != NULL)
        return; /* reported by name_use */
      names = asc__arena_alloc(r->c, (size_t)(k->nfields + 1) * sizeof *names);
      defs = asc__arena_alloc(r->c, (size_t)(k->nfields + 1) * sizeof *defs);
      for (int i = 0; i < k->nfields; i++) {
        names[i] = k->fields[i].name;
        defs[i] = k->fields[i].def;
        if (k->fields[i].def == NULL)
          min = i + 1;
      }
      e->u.call.cls = k;
      bind_args(r, e, k->name, min, k->nfields, names, defs);
      return;
    }
    if (s->kind == ASC_SYM_MODULE || s->kind == ASC_SYM_FOREIGN ||
        (s->kind == ASC_SYM_CONST && !is_num(&s->u.cnst->folded)))
      return; /* reported by name_use */
    asc__diag_error(r->c, f->loc, "'%s' is not callable", f->u.name.id);
  }
}

static void expr(resolver *r, asc__ast_expr *e) {
  if (e == NULL)
    return;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    name_use(r, e, false);
    return;
  case ASC_EXPR_INT:
  case ASC_EXPR_FLOAT:
  case ASC_EXPR_BOOL:
  case ASC_EXPR_NONE:
  case ASC_EXPR_STR:
    return;
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      expr(r, e->u.tuple.elts[i]);
    return;
  case ASC_EXPR_ATTR: {
    asc__ast_expr *v = e->u.attr.value;
    if (v->kind == ASC_EXPR_NAME) {
      name_use(r, v, true);
      if (is_numpy(v->u.name.sym)) {
        numpy_error(r, e->loc,
                    asc__arena_printf(r->c, "%s.%s", v->u.name.id,
                                      e->u.attr.attr),
                    e->u.attr.attr);
        return;
      }
      if (v->u.name.sym != NULL && v->u.name.sym->kind == ASC_SYM_MODULE &&
          v->u.name.sym->u.module == ASC_NS_NP &&
          strcmp(e->u.attr.attr, "newaxis") == 0) {
        e->kind = ASC_EXPR_NONE; /* np.newaxis is None */
        return;
      }
      if (v->u.name.sym != NULL && v->u.name.sym->kind == ASC_SYM_MODULE) {
        asc__namespace ns = v->u.name.sym->u.module;
        const asc__builtin *b = asc__builtin_lookup(ns, e->u.attr.attr);
        if (b != NULL && (b->id == ASC_BI_CM_INFJ || b->id == ASC_BI_CM_NANJ)) {
          /* cmath.infj, cmath.nanj: the imaginary literals infj, nanj */
          bool nanj = b->id == ASC_BI_CM_NANJ;
          e->kind = ASC_EXPR_FLOAT;
          e->u.fval = nanj ? NAN : HUGE_VAL;
          e->imag = true;
          return;
        }
        if (b == NULL && ns == ASC_NS_CMATH)
          asc__diag_error(r->c, e->u.attr.attr_loc, "%s.%s is not supported "
                          "in kernels (cmath names kernels accept: %s)",
                          v->u.name.id, e->u.attr.attr, asc__cmath_names);
        else if (b == NULL && ns == ASC_NS_NP)
          asc__diag_error(r->c, e->u.attr.attr_loc, "%s.%s is not supported "
                          "in kernels yet (numpy names kernels accept: %s)",
                          v->u.name.id, e->u.attr.attr, asc__numpy_names);
        else if (b == NULL)
          asc__diag_error(r->c, e->u.attr.attr_loc, "%s.%s is not supported "
                          "in kernels (module '%s' has no kernel builtin "
                          "'%s')", v->u.name.id, e->u.attr.attr,
                          ns == ASC_NS_ASC ? "asc" : "math", e->u.attr.attr);
        else if (b->kind == ASC_BK_DECORATOR)
          asc__diag_error(r->c, e->loc, "%s.%s is a decorator, not a value",
                          v->u.name.id, e->u.attr.attr);
        e->u.attr.builtin = b;
      }
      return;
    }
    if (v->kind == ASC_EXPR_ATTR && v->u.attr.value->kind == ASC_EXPR_NAME &&
        strcmp(v->u.attr.attr, "linalg") == 0) {
      asc__ast_expr *m = v->u.attr.value;
      name_use(r, m, true);
      if (m->u.name.sym != NULL && m->u.name.sym->kind == ASC_SYM_MODULE &&
          m->u.name.sym->u.module == ASC_NS_NP) {
        if (strcmp(e->u.attr.attr, "norm") == 0)
          e->u.attr.builtin = asc__builtin_get(ASC_BI_NP_NORM);
        else
          asc__diag_error(r->c, e->u.attr.attr_loc, "%s.linalg.%s is not "
                          "supported in kernels (of np.linalg, kernels "
                          "accept norm)", m->u.name.id, e->u.attr.attr);
        return;
      }
    }
    expr(r, v);
    return;
  }
  case ASC_EXPR_SUBSCRIPT:
    expr(r, e->u.sub.value);
    expr(r, e->u.sub.index);
    return;
  case ASC_EXPR_SLICE: /* only inside a subscript: the parser sees to it */
    if (e->u.slice.lower)
      expr(r, e->u.slice.lower);
    if (e->u.slice.upper)
      expr(r, e->u.slice.upper);
    if (e->u.slice.step)
      expr(r, e->u.slice.step);
    return;
  case ASC_EXPR_CALL:
    call_expr(r, e);
    return;
  case ASC_EXPR_UNARY:
    expr(r, e->u.unary.operand);
    return;
  case ASC_EXPR_BINARY:
    expr(r, e->u.binary.lhs);
    expr(r, e->u.binary.rhs);
    return;
  case ASC_EXPR_BOOLOP:
    expr(r, e->u.boolop.lhs);
    expr(r, e->u.boolop.rhs);
    return;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      expr(r, e->u.cmp.operands[i]);
    return;
  case ASC_EXPR_IFEXP:
    expr(r, e->u.ifexp.cond);
    expr(r, e->u.ifexp.then);
    expr(r, e->u.ifexp.orelse);
    return;
  case ASC_EXPR_LAMBDA: {
    asc__ast_func *f = e->u.lambda.fn;
    bool ok = r->lambda_ok;
    r->lambda_ok = false;
    if (!ok) {
      if (f->body.n == 1 && f->body.stmts[0]->kind != ASC_STMT_RETURN)
        asc__diag_error(r->c, e->loc, "a lambda whose body is an "
                        "assignment is only allowed as the body of "
                        "asc.parallel_for");
      else
        asc__diag_error(r->c, e->loc, "lambda is only supported as the "
                        "body of asc.parallel_for");
      return;
    }
    r->parallel++;
    function(r, f);
    r->parallel--;
    return;
  }
  case ASC_EXPR_COUNT:
    break;
  }
}

/* Annotations name types: asc.float32, int, asc.Tensor[asc.float32, 2],
 * a struct class. */
static void annotation(resolver *r, asc__ast_expr *e) {
  if (e == NULL)
    return;
  if (e->kind == ASC_EXPR_STR) {
    asc__diag_error(r->c, e->loc, "string annotations are not supported in "
                    "kernels");
    return;
  }
  expr(r, e);
}

static void target(resolver *r, asc__ast_expr *t) {
  switch (t->kind) {
  case ASC_EXPR_NAME:
    t->u.name.sym = lookup(r, t->u.name.id);
    return;
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < t->u.tuple.n; i++)
      target(r, t->u.tuple.elts[i]);
    return;
  default:
    expr(r, t);
    return;
  }
}

/* ------------------------------------------------------------ statements */

static bool is_exc_class(asc__ast_expr *e) {
  const asc__builtin *b = asc__expr_builtin(e);
  return b != NULL && b->kind == ASC_BK_EXC;
}

static void for_stmt(resolver *r, asc__ast_stmt *s) {
  asc__ast_expr *it = s->u.for_.iter;
  const asc__builtin *b = NULL;
  target(r, s->u.for_.target);
  if (s->u.for_.target->kind != ASC_EXPR_NAME)
    asc__diag_error(r->c, s->u.for_.target->loc, "the target of a kernel "
                    "'for' loop must be a single name");
  if (s->u.for_.over_array) {
    s->u.for_.loop = ASC_BI_RANGE;
    expr(r, s->u.for_.stop);
    block(r, &s->u.for_.body);
    return;
  }
  expr(r, it);
  if (it->kind == ASC_EXPR_CALL)
    b = it->u.call.builtin;
  if (b == NULL || (b->id != ASC_BI_RANGE && b->id != ASC_BI_PRANGE &&
                    b->id != ASC_BI_STATIC_RANGE)) {
    asc__diag_error(r->c, it->loc, "kernel 'for' loops iterate over "
                    "range(), asc.prange(), asc.static_range(), an array, "
                    "zip() or enumerate()");
  } else if (it->u.call.rargs != NULL) {
    asc__ast_expr **a = it->u.call.rargs;
    s->u.for_.loop = b->id;
    if (a[1] == NULL) {     /* range(stop) */
      s->u.for_.stop = a[0];
    } else {
      s->u.for_.start = a[0];
      s->u.for_.stop = a[1];
      s->u.for_.step = a[2];
    }
  }
  if (b != NULL && b->id == ASC_BI_PRANGE) {
    r->parallel++;
    block(r, &s->u.for_.body);
    r->parallel--;
  } else {
    block(r, &s->u.for_.body);
  }
}

static void stmt(resolver *r, asc__ast_stmt *s) {
  asc__cctx_tick(r->c, "resolve");
  switch (s->kind) {
  case ASC_STMT_EXPR:
    if (op_ufunc_out(r, s)) {
      stmt(r, s); /* now an assignment */
      return;
    }
    expr(r, s->u.expr.value);
    return;
  case ASC_STMT_ASSIGN:
    expr(r, s->u.assign.value);
    for (int i = 0; i < s->u.assign.ntargets; i++)
      target(r, s->u.assign.targets[i]);
    return;
  case ASC_STMT_AUGASSIGN:
    expr(r, s->u.aug.value);
    target(r, s->u.aug.target);
    return;
  case ASC_STMT_ANNASSIGN:
    annotation(r, s->u.ann.annotation);
    expr(r, s->u.ann.value);
    target(r, s->u.ann.target);
    return;
  case ASC_STMT_IF:
    expr(r, s->u.if_.cond);
    block(r, &s->u.if_.body);
    block(r, &s->u.if_.orelse);
    return;
  case ASC_STMT_FOR:
    for_stmt(r, s);
    return;
  case ASC_STMT_WHILE:
    expr(r, s->u.while_.cond);
    block(r, &s->u.while_.body);
    return;
  case ASC_STMT_BREAK:
  case ASC_STMT_CONTINUE:
  case ASC_STMT_PASS:
    return;
  case ASC_STMT_RETURN:
    expr(r, s->u.ret.value);
    return;
  case ASC_STMT_ASSERT:
    expr(r, s->u.assert_.test);
    expr(r, s->u.assert_.msg);
    return;
  case ASC_STMT_RAISE: {
    asc__ast_expr *x = s->u.raise.exc;
    if (x == NULL) {
      if (r->handlers == 0)
        asc__diag_error(r->c, s->loc, "bare 'raise' is only allowed inside "
                        "an 'except' block");
      return;
    }
    expr(r, x);
    if (!(is_exc_class(x) ||
          (x->kind == ASC_EXPR_CALL && is_exc_class(x->u.call.func))))
      asc__diag_error(r->c, x->loc, "'raise' takes an exception class, "
                      "e.g. raise ValueError(\"message\")");
    return;
  }
  case ASC_STMT_TRY:
    block(r, &s->u.try_.body);
    for (int i = 0; i < s->u.try_.nhandlers; i++) {
      asc__ast_handler *h = &s->u.try_.handlers[i];
      if (h->type != NULL) {
        expr(r, h->type);
        if (h->type->kind == ASC_EXPR_TUPLE) {
          for (int j = 0; j < h->type->u.tuple.n; j++)
            if (!is_exc_class(h->type->u.tuple.elts[j]))
              asc__diag_error(r->c, h->type->u.tuple.elts[j]->loc,
                              "'except' takes exception classes");
        } else if (!is_exc_class(h->type)) {
          asc__diag_error(r->c, h->type->loc, "'except' takes exception "
                          "classes");
        }
      }
      if (h->name != NULL)
        h->name_sym = lookup(r, h->name);
      r->handlers++;
      block(r, &h->body);
      r->handlers--;
    }
    block(r, &s->u.try_.orelse);
    block(r, &s->u.try_.finalbody);
    return;
  case ASC_STMT_WITH: {
    asc__ast_expr *x = s->u.with.ctx;
    expr(r, x);
    if (x->kind != ASC_EXPR_CALL || x->u.call.builtin == NULL ||
        x->u.call.builtin->id != ASC_BI_CRITICAL)
      asc__diag_error(r->c, x->loc, "only 'with asc.critical():' is "
                      "supported in kernels");
    block(r, &s->u.with.body);
    return;
  }
  case ASC_STMT_FUNCDEF:
    r->parallel++;
    function(r, s->u.funcdef.fn);
    r->parallel--;
    return;
  case ASC_STMT_COUNT:
    return;
  }
}

static void block(resolver *r, asc__ast_block *b) {
  for (int i = 0; i < b->n; i++)
    stmt(r, b->stmts[i]);
}

static void function(resolver *r, asc__ast_func *f) {
  asc__ast_func *saved_fn = r->fn;
  vec *saved_locals = r->locals;
  int saved_handlers = r->handlers;
  vec *locals = asc__arena_alloc(r->c, sizeof *locals);

  /* defaults and annotations live in the enclosing scope */
  for (int i = 0; i < f->nparams; i++) {
    annotation(r, f->params[i].annotation);
    expr(r, f->params[i].def);
  }
  annotation(r, f->returns);

  for (int i = 0; i < f->nparams; i++) {
    asc__sym *s = new_sym(r, ASC_SYM_PARAM, f->params[i].name,
                          f->params[i].loc);
    s->owner = f;
    s->u.index = i;
    f->params[i].sym = s;
    vpush(r, locals, s);
  }
  collect(r, f, locals, &f->body);
  f->locals = (asc__sym **)locals->v;
  f->nlocals = locals->n;
  for (int i = f->nparams; i < locals->n; i++)
    if (((asc__sym *)locals->v[i])->kind == ASC_SYM_LOCAL ||
        ((asc__sym *)locals->v[i])->kind == ASC_SYM_EXC_VAR)
      ((asc__sym *)locals->v[i])->u.index = i;

  r->fn = f;
  r->locals = locals;
  r->handlers = 0;
  block(r, &f->body);
  r->fn = saved_fn;
  r->locals = saved_locals;
  r->handlers = saved_handlers;
}

/* --------------------------------------------------------- recursion */

/* Depth-first search over helper calls; colour 1 = on the stack. */
static void check_recursion(resolver *r, asc__ast_func *f, asc__ast_func **stack,
                            int depth, unsigned char *colour,
                            asc__ast_func **all, int nall) {
  int me = -1;
  for (int i = 0; i < nall; i++)
    if (all[i] == f)
      me = i;
  if (me < 0 || colour[me] == 2)
    return;
  if (colour[me] == 1) {
    int from = 0;
    asc__buf path;
    while (from < depth && stack[from] != f)
      from++;
    asc__buf_init(&path);
    for (int i = from; i < depth; i++)
      asc__buf_printf(&path, "%s -> ", stack[i]->name);
    asc__buf_puts(&path, f->name);
    if (path.oom) {
      asc__buf_free(&path);
      asc__cctx_throw(r->c, ASC_FAIL_OOM);
    }
    {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", asc__buf_str(&path));
      asc__buf_free(&path);
      asc__diag_error(r->c, f->loc, "recursion is not supported in kernels "
                      "(%s)", msg);
    }
    return;
  }
  colour[me] = 1;
  stack[depth] = f;
  for (int i = 0; i < f->ncallees; i++)
    check_recursion(r, f->callees[i], stack, depth + 1, colour, all, nall);
  colour[me] = 2;
}

/* ---------------------------------------------------------------- API */

void asc__resolve(asc__cctx *c, asc__ast_module *m,
                  const ascGlobalValue *globals, int nglobals) {
  resolver R, *r = &R;
  vec empty = {0};

  memset(r, 0, sizeof *r);
  r->c = c;
  r->m = m;
  r->globals = globals;
  r->nglobals = globals != NULL && nglobals > 0 ? nglobals : 0;
  r->locals = &empty;
  module_scope(r);

  for (int i = 0; i < m->nfuncs; i++) {
    asc__ast_func *f = m->funcs[i];
    if (f->kind != ASC_FUNC_KERNEL && f->kind != ASC_FUNC_HELPER)
      continue;
    r->parallel = 0;
    r->locals = &empty;
    function(r, f);
  }
  for (int i = 0; i < m->nclasses; i++) {
    asc__ast_class *k = m->classes[i];
    if (k->unsupported != NULL)
      continue;
    for (int j = 0; j < k->nfields; j++) {
      annotation(r, k->fields[j].annotation);
      expr(r, k->fields[j].def);
    }
  }
  {
    unsigned char *colour = asc__arena_alloc(c, (size_t)m->nfuncs + 1);
    asc__ast_func **stack =
        asc__arena_alloc(c, ((size_t)m->nfuncs + 1) * sizeof *stack);
    for (int i = 0; i < m->nfuncs; i++)
      if (m->funcs[i]->kind == ASC_FUNC_HELPER)
        check_recursion(r, m->funcs[i], stack, 0, colour, m->funcs,
                        m->nfuncs);
  }
}

asc__ast_module *asc__frontend(asc__cctx *c, const ascGlobalValue *globals,
                               int nglobals) {
  asc__ast_module *m;
  c->phase = "parse";
  m = asc__parse(c);
  if (c->nerrors > 0)
    asc__cctx_throw(c, ASC_FAIL_ERRORS);
  asc__cctx_budget(c, "parse");
  c->phase = "resolve";
  asc__resolve(c, m, globals, nglobals);
  if (c->nerrors > 0)
    asc__cctx_throw(c, ASC_FAIL_ERRORS);
  asc__cctx_budget(c, "resolve");
  return m;
}

asc__ast_func *asc__module_func(const asc__ast_module *m, const char *name) {
  for (int i = m->nfuncs - 1; i >= 0; i--)
    if (strcmp(m->funcs[i]->name, name) == 0)
      return m->funcs[i];
  return NULL;
}
