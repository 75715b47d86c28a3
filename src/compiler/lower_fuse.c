/*
 * Fusion across statements (docs/optimizer.md, "Fusion across
 * statements").  In
 *
 *     d = x[1:] - x[:-1] ** 2
 *     e = 1 - x[:-1]
 *     return np.sum(100 * d ** 2 + e ** 2)
 *
 * neither d nor e is made: the statement that reads them computes each
 * of their elements in its own loops, where it needs it, as if their
 * expressions were written there.  One pass reads x; none writes a
 * temporary.
 *
 * A name's definition is fused into the statement that reads it when
 *   - the definition is `name = <expression>` of a local used nowhere
 *     else, whose expression is elementwise: operators, ufuncs, views of
 *     arrays, numbers (nothing that makes an array first: no @, no
 *     reduction, no gather, no creation, no helper call);
 *   - every read of the name is in one later statement of the same block,
 *     a simple statement, and only definitions of other locals by values
 *     without effects stand between, none of them a name the expression
 *     reads (so nothing it reads changes before it is computed, and no
 *     effect runs out of order);
 *   - each read is an element of an elementwise expression or of a
 *     reduction's argument over the name's own shape (not broadcast to a
 *     larger rank, where each element would be computed many times);
 *   - recomputing the expression for each read costs no more than
 *     storing it and loading it back (the cost model below).
 * A definition by a float reduction along the last axis with
 * keepdims=True (m = np.max(x, axis=-1, keepdims=True)) fuses too when
 * it is read once, by the elementwise operators of a statement stored by
 * one loop nest: that nest computes it once per row, before the row's
 * elements (lower_array.c, asc__lower_row_reduction).
 * Each element's operations run in the order they would unfused, so the
 * results are bit for bit the same; only memory traffic goes.  The
 * decision, fused or kept and why, is an IR note on the statement.
 *
 * Planning reads the syntax tree and its types only (it runs before the
 * block is lowered, when no name of the block is bound yet).
 */
#include <string.h>

#include "compiler/lower_int.h"

/* The cost of computing an element again, in simple operations, above
 * which a name read more than once is stored instead.  One store and one
 * load back per element cost about this much when the array streams from
 * memory. */
#define RECOMPUTE_MAX 4
#define COST_CALL 16 /* exp, log, sin, sqrt, pow: a vector-math call */
#define COST_DIV 4
/* Statements a definition's readers may be after it: the planning of a
 * block stays linear in its length. */
#define WINDOW 64

/* A pointer-keyed table (open addressing, never shrinks). */
typedef struct ptab {
  const void **keys;
  intptr_t *vals;
  uint32_t cap, n;
} ptab;

static uint32_t ptab_slot(const ptab *t, const void *k) {
  uint64_t h = (uint64_t)(uintptr_t)k * 0x9e3779b97f4a7c15u;
  uint32_t i = (uint32_t)(h >> 32) & (t->cap - 1);
  while (t->keys[i] != NULL && t->keys[i] != k)
    i = (i + 1) & (t->cap - 1);
  return i;
}

static intptr_t *ptab_at(asc__cctx *c, ptab *t, const void *k) {
  uint32_t i;
  if (2 * (t->n + 1) > t->cap) {
    ptab old = *t;
    t->cap = t->cap ? 2 * t->cap : 64;
    t->keys = asc__arena_alloc(c, sizeof *t->keys * t->cap);
    t->vals = asc__arena_alloc(c, sizeof *t->vals * t->cap);
    memset(t->keys, 0, sizeof *t->keys * t->cap);
    t->n = 0;
    for (uint32_t q = 0; q < old.cap; q++)
      if (old.keys[q] != NULL) {
        i = ptab_slot(t, old.keys[q]);
        t->keys[i] = old.keys[q];
        t->vals[i] = old.vals[q];
        t->n++;
      }
  }
  i = ptab_slot(t, k);
  if (t->keys[i] == NULL) {
    t->keys[i] = k;
    t->vals[i] = 0;
    t->n++;
  }
  return &t->vals[i];
}

static intptr_t ptab_get(const ptab *t, const void *k) {
  uint32_t i;
  if (t->cap == 0)
    return 0;
  i = ptab_slot(t, k);
  return t->keys[i] == k ? t->vals[i] : 0;
}

/* A fused definition, from its block's plan to the end of the block. */
typedef struct fdef {
  const asc__ast_stmt *s;
  const asc__sym *sym;
  const asc__ast_expr *value;
  bool live;              /* not made: reads compute it */
} fdef;

struct asc__fuse {
  ptab uses;              /* sym -> mentions in its owner function */
  ptab counted;           /* owner functions counted so far */
  ptab index;             /* sym -> 1 + its entry in defs */
  ptab notes;             /* statement -> the note to print on it */
  fdef *defs;
  int ndefs, capdefs;
};

/* ---------------------------------------------------------- the tree */

typedef void (*visit_fn)(void *ctx, const asc__ast_expr *name);

static void walk_block(const asc__ast_block *b, visit_fn f, void *ctx);

static void walk_expr(const asc__ast_expr *e, visit_fn f, void *ctx) {
  if (e == NULL)
    return;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    f(ctx, e);
    return;
  case ASC_EXPR_TUPLE:
    for (int k = 0; k < e->u.tuple.n; k++)
      walk_expr(e->u.tuple.elts[k], f, ctx);
    return;
  case ASC_EXPR_ATTR:
    walk_expr(e->u.attr.value, f, ctx);
    return;
  case ASC_EXPR_SUBSCRIPT:
    walk_expr(e->u.sub.value, f, ctx);
    walk_expr(e->u.sub.index, f, ctx);
    return;
  case ASC_EXPR_SLICE:
    walk_expr(e->u.slice.lower, f, ctx);
    walk_expr(e->u.slice.upper, f, ctx);
    walk_expr(e->u.slice.step, f, ctx);
    return;
  case ASC_EXPR_CALL:
    walk_expr(e->u.call.func, f, ctx);
    for (int k = 0; k < e->u.call.nargs; k++)
      walk_expr(e->u.call.args[k], f, ctx);
    for (int k = 0; k < e->u.call.nkws; k++)
      walk_expr(e->u.call.kws[k].value, f, ctx);
    return;
  case ASC_EXPR_UNARY:
    walk_expr(e->u.unary.operand, f, ctx);
    return;
  case ASC_EXPR_BINARY:
    walk_expr(e->u.binary.lhs, f, ctx);
    walk_expr(e->u.binary.rhs, f, ctx);
    return;
  case ASC_EXPR_BOOLOP:
    walk_expr(e->u.boolop.lhs, f, ctx);
    walk_expr(e->u.boolop.rhs, f, ctx);
    return;
  case ASC_EXPR_COMPARE:
    for (int k = 0; k <= e->u.cmp.n; k++)
      walk_expr(e->u.cmp.operands[k], f, ctx);
    return;
  case ASC_EXPR_IFEXP:
    walk_expr(e->u.ifexp.cond, f, ctx);
    walk_expr(e->u.ifexp.then, f, ctx);
    walk_expr(e->u.ifexp.orelse, f, ctx);
    return;
  case ASC_EXPR_LAMBDA:
    walk_block(&e->u.lambda.fn->body, f, ctx);
    return;
  default:
    return;
  }
}

static void walk_stmt(const asc__ast_stmt *s, visit_fn f, void *ctx) {
  switch (s->kind) {
  case ASC_STMT_EXPR:
    walk_expr(s->u.expr.value, f, ctx);
    return;
  case ASC_STMT_ASSIGN:
    for (int k = 0; k < s->u.assign.ntargets; k++)
      walk_expr(s->u.assign.targets[k], f, ctx);
    walk_expr(s->u.assign.value, f, ctx);
    return;
  case ASC_STMT_AUGASSIGN:
    walk_expr(s->u.aug.target, f, ctx);
    walk_expr(s->u.aug.value, f, ctx);
    return;
  case ASC_STMT_ANNASSIGN:
    walk_expr(s->u.ann.target, f, ctx);
    walk_expr(s->u.ann.value, f, ctx);
    return;
  case ASC_STMT_IF:
    walk_expr(s->u.if_.cond, f, ctx);
    walk_block(&s->u.if_.body, f, ctx);
    walk_block(&s->u.if_.orelse, f, ctx);
    return;
  case ASC_STMT_FOR:
    walk_expr(s->u.for_.target, f, ctx);
    walk_expr(s->u.for_.iter, f, ctx);
    walk_expr(s->u.for_.start, f, ctx);
    walk_expr(s->u.for_.stop, f, ctx);
    walk_expr(s->u.for_.step, f, ctx);
    walk_block(&s->u.for_.body, f, ctx);
    return;
  case ASC_STMT_WHILE:
    walk_expr(s->u.while_.cond, f, ctx);
    walk_block(&s->u.while_.body, f, ctx);
    return;
  case ASC_STMT_RETURN:
    walk_expr(s->u.ret.value, f, ctx);
    return;
  case ASC_STMT_ASSERT:
    walk_expr(s->u.assert_.test, f, ctx);
    walk_expr(s->u.assert_.msg, f, ctx);
    return;
  case ASC_STMT_RAISE:
    walk_expr(s->u.raise.exc, f, ctx);
    return;
  case ASC_STMT_TRY:
    walk_block(&s->u.try_.body, f, ctx);
    for (int k = 0; k < s->u.try_.nhandlers; k++) {
      walk_expr(s->u.try_.handlers[k].type, f, ctx);
      walk_block(&s->u.try_.handlers[k].body, f, ctx);
    }
    walk_block(&s->u.try_.orelse, f, ctx);
    walk_block(&s->u.try_.finalbody, f, ctx);
    return;
  case ASC_STMT_WITH:
    walk_expr(s->u.with.ctx, f, ctx);
    walk_block(&s->u.with.body, f, ctx);
    return;
  case ASC_STMT_FUNCDEF:
    walk_block(&s->u.funcdef.fn->body, f, ctx);
    return;
  default:
    return;
  }
}

static void walk_block(const asc__ast_block *b, visit_fn f, void *ctx) {
  for (int k = 0; k < b->n; k++)
    walk_stmt(b->stmts[k], f, ctx);
}

typedef struct counter {
  asc__cctx *c;
  ptab *uses;
} counter;

static void count_one(void *ctx, const asc__ast_expr *name) {
  counter *n = ctx;
  if (name->u.name.sym != NULL)
    ++*ptab_at(n->c, n->uses, name->u.name.sym);
}

/* Mentions of s anywhere in the function that owns it. */
static intptr_t mentions(lstate *ls, const asc__sym *s) {
  asc__fuse *fu = ls->fuse;
  intptr_t *done = ptab_at(ls->c, &fu->counted, s->owner);
  if (!*done) {
    counter n = {ls->c, &fu->uses};
    *done = 1;
    walk_block(&s->owner->body, count_one, &n);
  }
  return ptab_get(&fu->uses, s);
}

typedef struct finder {
  const asc__sym *s;
  int n;
} finder;

static void find_one(void *ctx, const asc__ast_expr *name) {
  finder *f = ctx;
  f->n += name->u.name.sym == f->s;
}

static int mentions_in_stmt(const asc__ast_stmt *st, const asc__sym *s) {
  finder f = {s, 0};
  walk_stmt(st, find_one, &f);
  return f.n;
}

static int mentions_in_expr(const asc__ast_expr *e, const asc__sym *s) {
  finder f = {s, 0};
  walk_expr(e, find_one, &f);
  return f.n;
}

/* ------------------------------------------------------ what may fuse */

static bool is_ew_call(const asc__ast_expr *e) {
  return e->kind == ASC_EXPR_CALL && e->u.call.builtin != NULL &&
         e->u.call.callee == NULL && e->u.call.cls == NULL &&
         asc__builtin_is_elementwise(e);
}

static bool is_reduction(const asc__ast_expr *e) {
  return e->kind == ASC_EXPR_CALL && e->u.call.builtin != NULL &&
         e->u.call.callee == NULL &&
         asc__builtin_is_reduction(e->u.call.builtin->id) &&
         e->u.call.builtin->id != ASC_BI_NP_DOT;
}

/* A reduction of all the elements of a selection, to a number
 * (np.sum(x[m]), x[m].mean()): one predicated loop over the mask
 * (lower_reduce.c, select_reduce). */
static bool whole_reduction(const asc__ast_expr *e) {
  return is_reduction(e) && !is_tensor(e) &&
         (e->u.call.nrargs < 2 || e->u.call.rargs[1] == NULL ||
          e->u.call.rargs[1]->kind == ASC_EXPR_NONE);
}

static int selections(const asc__ast_expr *e) {
  int n = 0;
  if (e == NULL || !is_tensor(e))
    return 0;
  switch (e->kind) {
  case ASC_EXPR_SUBSCRIPT:
    return 1;
  case ASC_EXPR_BINARY:
    return selections(e->u.binary.lhs) + selections(e->u.binary.rhs);
  case ASC_EXPR_UNARY:
    return selections(e->u.unary.operand);
  case ASC_EXPR_CALL:
    for (int k = 0; k < e->u.call.nrargs; k++)
      n += selections(e->u.call.rargs[k]);
    return n;
  default:
    return 0;
  }
}

/* How e reads s, per element of its mask, when e is a selection
 * (asc__lower_select_form): 1 when s is the mask and read nowhere else in
 * e (the mask is evaluated once per element, however many arrays it
 * selects from), -1 when e reads s otherwise; 0 when e does not mention
 * s or is not a selection. */
static int select_mask_reads(const asc__ast_expr *e, const asc__sym *s) {
  const asc__ast_expr *m;
  int n = mentions_in_expr(e, s);
  if (n == 0 || !asc__lower_select_form(e, &m))
    return 0;
  if (m->kind != ASC_EXPR_NAME || m->u.name.sym != s || n != selections(e))
    return -1;
  return 1;
}

/* A number computed without effects and without making an array (its
 * value is the same wherever the statement that reads it runs). */
static bool pure_scalar(const asc__ast_expr *e) {
  switch (e->kind) {
  case ASC_EXPR_INT:
  case ASC_EXPR_FLOAT:
  case ASC_EXPR_BOOL:
  case ASC_EXPR_NAME:
    return true;
  case ASC_EXPR_ATTR:
    return e->u.attr.builtin != NULL || pure_scalar(e->u.attr.value);
  case ASC_EXPR_SUBSCRIPT: /* a.shape[0], a[0, 1] */
    return (e->u.sub.value->kind == ASC_EXPR_NAME ||
            e->u.sub.value->kind == ASC_EXPR_ATTR) &&
           !is_tensor(e->u.sub.index) && pure_scalar(e->u.sub.index);
  case ASC_EXPR_TUPLE:
    for (int k = 0; k < e->u.tuple.n; k++)
      if (!pure_scalar(e->u.tuple.elts[k]))
        return false;
    return true;
  case ASC_EXPR_SLICE: /* of a view's index */
    return (e->u.slice.lower == NULL || pure_scalar(e->u.slice.lower)) &&
           (e->u.slice.upper == NULL || pure_scalar(e->u.slice.upper)) &&
           (e->u.slice.step == NULL || pure_scalar(e->u.slice.step));
  case ASC_EXPR_NONE:
    return true;
  case ASC_EXPR_UNARY:
    return pure_scalar(e->u.unary.operand);
  case ASC_EXPR_BINARY:
    return e->u.binary.op != ASC_BIN_MATMUL &&
           pure_scalar(e->u.binary.lhs) && pure_scalar(e->u.binary.rhs);
  case ASC_EXPR_CALL:
    if (!is_ew_call(e))
      return false;
    for (int k = 0; k < e->u.call.nrargs; k++)
      if (e->u.call.rargs[k] != NULL && !pure_scalar(e->u.call.rargs[k]))
        return false;
    return true;
  default:
    return false;
  }
}

/* An array read as it is: a name, or a view of one. */
static bool view_leaf(const asc__ast_expr *e) {
  asc__type *vt;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    return true;
  case ASC_EXPR_SUBSCRIPT:
    vt = ty(e->u.sub.value);
    return e->u.sub.value->kind == ASC_EXPR_NAME && vt != NULL &&
           vt->kind == ASC_TY_TENSOR &&
           asc__infer_index_is_view(e->u.sub.index, vt->ndim) &&
           pure_scalar(e->u.sub.index);
  case ASC_EXPR_ATTR:
    return strcmp(e->u.attr.attr, "T") == 0 &&
           e->u.attr.value->kind == ASC_EXPR_NAME;
  default:
    return false;
  }
}

static bool pure_value(const asc__ast_expr *e);

/* x ** 2, x ** 3.0: multiplications, not a pow call */
static bool small_power(const asc__ast_expr *y) {
  return (y->kind == ASC_EXPR_INT && y->u.ival <= 4) ||
         (y->kind == ASC_EXPR_FLOAT && !y->imag &&
          (y->u.fval == 2.0 || y->u.fval == 3.0 || y->u.fval == 0.5));
}

/* The cost of one element of e in simple operations, or -1 when e is not
 * an elementwise expression that may be computed elsewhere. */
static int ew_cost(const asc__ast_expr *e) {
  int a, b;
  if (!is_tensor(e))
    return pure_value(e) ? 0 : -1; /* computed once, before the loops */
  switch (e->kind) {
  case ASC_EXPR_NAME:
  case ASC_EXPR_SUBSCRIPT:
  case ASC_EXPR_ATTR:
    return view_leaf(e) ? 0 : -1;
  case ASC_EXPR_UNARY:
    a = ew_cost(e->u.unary.operand);
    return a < 0 ? -1 : a + 1;
  case ASC_EXPR_BINARY:
    if (e->u.binary.op == ASC_BIN_MATMUL)
      return -1;
    a = ew_cost(e->u.binary.lhs);
    b = ew_cost(e->u.binary.rhs);
    if (a < 0 || b < 0)
      return -1;
    switch (e->u.binary.op) {
    case ASC_BIN_POW:
      /* x ** 2 and x ** 3 are multiplications */
      return a + b + (small_power(e->u.binary.rhs) ? 2 : COST_CALL);
    case ASC_BIN_DIV:
    case ASC_BIN_FLOORDIV:
    case ASC_BIN_MOD:
      return a + b + COST_DIV;
    default:
      return a + b + 1;
    }
  case ASC_EXPR_COMPARE:
    if (e->u.cmp.n != 1)
      return -1;
    a = ew_cost(e->u.cmp.operands[0]);
    b = ew_cost(e->u.cmp.operands[1]);
    return a < 0 || b < 0 ? -1 : a + b + 1;
  case ASC_EXPR_CALL: {
    const asc__builtin *bi = e->u.call.builtin;
    int sum = 0;
    if (!is_ew_call(e))
      return -1;
    for (int k = 0; k < e->u.call.nrargs; k++) {
      if (e->u.call.rargs[k] == NULL)
        continue;
      a = ew_cost(e->u.call.rargs[k]);
      if (a < 0)
        return -1;
      sum += a;
    }
    switch (bi->id) {
    case ASC_BI_MIN:
    case ASC_BI_MAX:
    case ASC_BI_ABS:
    case ASC_BI_FABS:
    case ASC_BI_NP_WHERE:
    case ASC_BI_NP_CLIP:
    case ASC_BI_FLOOR:
    case ASC_BI_CEIL:
    case ASC_BI_TRUNC:
    case ASC_BI_COPYSIGN:
    case ASC_BI_ISNAN:
    case ASC_BI_ISINF:
    case ASC_BI_ISFINITE:
    case ASC_BI_NP_CONJ:
    case ASC_BI_NP_REAL:
    case ASC_BI_NP_IMAG:
      return sum + 1;
    default:
      return sum + (bi->kind == ASC_BK_DTYPE ? 1 : COST_CALL);
    }
  }
  default:
    return -1;
  }
}

/* The reads r of reduction e's argument, twice for var and std, which
 * read it twice: the mean, then the deviations. */
static int var_reads(const asc__ast_expr *e, int r) {
  return r > 0 && (e->u.call.builtin->id == ASC_BI_NP_VAR ||
                   e->u.call.builtin->id == ASC_BI_NP_STD)
             ? 2 * r
             : r;
}

/* How a statement's value reads s: the number of reads, each an element
 * of an elementwise expression (or of a reduction's argument) of s's own
 * rank; -1 when a read is of another kind. */
static int ew_reads(const asc__ast_expr *e, const asc__sym *s, int rank,
                    bool top) {
  int n = 0, r;
  if (e == NULL)
    return 0;
  if (e->kind == ASC_EXPR_NAME)
    return e->u.name.sym == s ? (top ? -1 : 1) : 0;
  if (mentions_in_expr(e, s) == 0)
    return 0;
  if (is_reduction(e)) {
    /* its argument's elements, over the argument's shape */
    for (int k = 1; k < e->u.call.nrargs; k++)
      if (e->u.call.rargs[k] && mentions_in_expr(e->u.call.rargs[k], s))
        return -1;
    if (whole_reduction(e) &&
        (r = select_mask_reads(e->u.call.rargs[0], s)) != 0)
      return r < 0 ? -1 : var_reads(e, r); /* the mask of a selection */
    if (!is_tensor(e->u.call.rargs[0]) ||
        ty(e->u.call.rargs[0])->ndim != rank)
      return -1;
    return var_reads(e, ew_reads(e->u.call.rargs[0], s, rank, false));
  }
  if (!is_tensor(e) && e->kind != ASC_EXPR_UNARY &&
      e->kind != ASC_EXPR_BINARY && e->kind != ASC_EXPR_COMPARE &&
      e->kind != ASC_EXPR_CALL)
    return -1;
  if (is_tensor(e) && ty(e)->ndim != rank)
    return -1; /* broadcast against more axes */
  /* a number: the reductions inside it read s */
  switch (e->kind) {
  case ASC_EXPR_UNARY:
    return ew_reads(e->u.unary.operand, s, rank, false);
  case ASC_EXPR_BINARY:
    if (e->u.binary.op == ASC_BIN_MATMUL)
      return -1;
    n = ew_reads(e->u.binary.lhs, s, rank, false);
    r = ew_reads(e->u.binary.rhs, s, rank, false);
    return n < 0 || r < 0 ? -1 : n + r;
  case ASC_EXPR_COMPARE:
    if (e->u.cmp.n != 1)
      return -1;
    n = ew_reads(e->u.cmp.operands[0], s, rank, false);
    r = ew_reads(e->u.cmp.operands[1], s, rank, false);
    return n < 0 || r < 0 ? -1 : n + r;
  case ASC_EXPR_CALL:
    if (!is_ew_call(e))
      return -1;
    for (int k = 0; k < e->u.call.nrargs; k++) {
      r = ew_reads(e->u.call.rargs[k], s, rank, false);
      if (r < 0)
        return -1;
      n += r;
    }
    return n;
  default:
    return -1;
  }
}

/* The reads of s in statement st, which runs once, or -1 (a read of
 * another kind, or st assigns s).  sel: st defines a selection that is
 * fused into a reduction, whose loop evaluates the mask element by
 * element. */
static int stmt_reads(const asc__ast_stmt *st, const asc__sym *s, int rank,
                      bool sel) {
  const asc__ast_expr *v;
  switch (st->kind) {
  case ASC_STMT_ASSIGN:
    for (int k = 0; k < st->u.assign.ntargets; k++)
      if (mentions_in_expr(st->u.assign.targets[k], s))
        return -1;
    v = st->u.assign.value;
    if (sel)
      return select_mask_reads(v, s) > 0 ? 1 : -1;
    /* out[...] = s: a store of each element */
    if (v->kind == ASC_EXPR_NAME && v->u.name.sym == s &&
        st->u.assign.ntargets == 1 &&
        st->u.assign.targets[0]->kind == ASC_EXPR_SUBSCRIPT &&
        view_leaf(st->u.assign.targets[0]) &&
        ty(st->u.assign.targets[0]) != NULL &&
        ty(st->u.assign.targets[0])->kind == ASC_TY_TENSOR &&
        ty(st->u.assign.targets[0])->ndim == rank)
      return 1;
    return ew_reads(v, s, rank, true);
  case ASC_STMT_AUGASSIGN:
    if (mentions_in_expr(st->u.aug.target, s))
      return -1;
    v = st->u.aug.value;
    if (v->kind == ASC_EXPR_NAME && v->u.name.sym == s &&
        ty(st->u.aug.target) != NULL &&
        ty(st->u.aug.target)->kind == ASC_TY_TENSOR &&
        ty(st->u.aug.target)->ndim == rank)
      return 1; /* out += s */
    return ew_reads(v, s, rank, true);
  case ASC_STMT_RETURN:
    return ew_reads(st->u.ret.value, s, rank, true);
  case ASC_STMT_EXPR:
    return ew_reads(st->u.expr.value, s, rank, true);
  default:
    return -1;
  }
}

/* A value computed without effects: builtins that read (operators,
 * ufuncs, reductions, products, new arrays), no helper, no store. */
static bool pure_value(const asc__ast_expr *e) {
  if (e == NULL)
    return true;
  switch (e->kind) {
  case ASC_EXPR_INT:
  case ASC_EXPR_FLOAT:
  case ASC_EXPR_BOOL:
  case ASC_EXPR_NONE:
  case ASC_EXPR_STR:
  case ASC_EXPR_NAME:
    return true;
  case ASC_EXPR_ATTR:
    return pure_value(e->u.attr.value);
  case ASC_EXPR_SUBSCRIPT:
    return pure_value(e->u.sub.value) && pure_value(e->u.sub.index);
  case ASC_EXPR_SLICE:
    return pure_value(e->u.slice.lower) && pure_value(e->u.slice.upper) &&
           pure_value(e->u.slice.step);
  case ASC_EXPR_TUPLE:
    for (int k = 0; k < e->u.tuple.n; k++)
      if (!pure_value(e->u.tuple.elts[k]))
        return false;
    return true;
  case ASC_EXPR_UNARY:
    return pure_value(e->u.unary.operand);
  case ASC_EXPR_BINARY:
    return pure_value(e->u.binary.lhs) && pure_value(e->u.binary.rhs);
  case ASC_EXPR_COMPARE:
    for (int k = 0; k <= e->u.cmp.n; k++)
      if (!pure_value(e->u.cmp.operands[k]))
        return false;
    return true;
  case ASC_EXPR_CALL:
    /* the builtins from min() on read their arguments only (atomics,
     * barriers, locks and scratch arrays come before), but a.fill(v) */
    if (e->u.call.builtin == NULL || e->u.call.callee != NULL ||
        e->u.call.cls != NULL || e->u.call.builtin->id < ASC_BI_MIN ||
        e->u.call.builtin->id == ASC_BI_NP_FILL)
      return false;
    for (int k = 0; k < e->u.call.nrargs; k++)
      if (!pure_value(e->u.call.rargs[k]))
        return false;
    return true;
  default:
    return false;
  }
}

/* `name = value` that only binds a local: statements like it may stand
 * between a fused definition and its reader (the reader's value must not
 * read the name). */
static bool pure_def(const asc__ast_stmt *st) {
  const asc__ast_expr *tg;
  if (st->kind != ASC_STMT_ASSIGN || st->u.assign.ntargets != 1)
    return false;
  tg = st->u.assign.targets[0];
  return tg->kind == ASC_EXPR_NAME && tg->u.name.sym != NULL &&
         tg->u.name.sym->kind == ASC_SYM_LOCAL && !tg->u.name.sym->captured &&
         pure_value(st->u.assign.value);
}

/* Does elementwise expression e hold a number that costs a pass of its
 * own (x - np.mean(x))?  Its reader computes it once, before its loops;
 * two readers would compute it twice. */
static bool scalar_work(const asc__ast_expr *e) {
  if (e == NULL)
    return false;
  if (!is_tensor(e))
    return !pure_scalar(e);
  switch (e->kind) {
  case ASC_EXPR_UNARY:
    return scalar_work(e->u.unary.operand);
  case ASC_EXPR_BINARY:
    return scalar_work(e->u.binary.lhs) || scalar_work(e->u.binary.rhs);
  case ASC_EXPR_COMPARE:
    return scalar_work(e->u.cmp.operands[0]) ||
           scalar_work(e->u.cmp.operands[1]);
  case ASC_EXPR_CALL:
    for (int k = 0; k < e->u.call.nrargs; k++)
      if (scalar_work(e->u.call.rargs[k]))
        return true;
    return false;
  default:
    return false;
  }
}

/* `name = value` binding a local array of value's dtype and number of
 * axes: its symbol, or NULL. */
static const asc__sym *array_def(const asc__ast_stmt *st) {
  const asc__ast_expr *tg, *v;
  const asc__sym *s;
  asc__type *st_ty, *vt;
  if (st->kind != ASC_STMT_ASSIGN || st->u.assign.ntargets != 1)
    return NULL;
  tg = st->u.assign.targets[0];
  v = st->u.assign.value;
  if (tg->kind != ASC_EXPR_NAME || (s = tg->u.name.sym) == NULL ||
      s->kind != ASC_SYM_LOCAL || s->captured || s->owner == NULL ||
      s->type == NULL)
    return NULL;
  st_ty = asc__ty_find(s->type);
  vt = ty(v);
  if (st_ty == NULL || vt == NULL || st_ty->kind != ASC_TY_TENSOR ||
      vt->kind != ASC_TY_TENSOR || st_ty->dtype != vt->dtype ||
      st_ty->ndim != vt->ndim || vt->ndim == 0)
    return NULL;
  return s;
}

/* `name = value` of a local array made by an elementwise expression:
 * its symbol, or NULL. */
static const asc__sym *candidate(const asc__ast_stmt *st, int *cost) {
  const asc__sym *s = array_def(st);
  const asc__ast_expr *v;
  if (s == NULL)
    return NULL;
  v = st->u.assign.value;
  /* a bare name or view is an alias, not a new array */
  if (v->kind == ASC_EXPR_NAME || view_leaf(v))
    return NULL;
  *cost = ew_cost(v);
  return *cost < 0 ? NULL : s;
}

/* `name = value` of a local array made by a reduction along the last
 * axis with keepdims=True (m = np.max(x, axis=-1, keepdims=True)): its
 * symbol, or NULL.  Read once, inside a larger expression of a statement
 * stored by one loop nest, it is computed there once per row
 * (asc__lower_row_reduction). */
static const asc__sym *row_candidate(const asc__ast_stmt *st, bool *expand) {
  const asc__sym *s = array_def(st);
  bool keep;
  if (s == NULL ||
      !asc__lower_row_axis_reduction(st->u.assign.value, &keep) ||
      !pure_value(st->u.assign.value))
    return NULL;
  /* without keepdims, read as m[:, None], m[..., None] or
   * m.reshape(-1, 1): the same values */
  *expand = !keep;
  return s;
}

/* `name = selection` of a local (s = x[m], s = x[m] * 2): its symbol, or
 * NULL.  Reduced whole once (s.sum(), np.mean(s)), it is computed there
 * as one predicated loop over the mask, never made. */
static const asc__sym *select_candidate(const lstate *ls,
                                        const asc__ast_stmt *st) {
  const asc__sym *s = array_def(st);
  const asc__ast_expr *m;
  if (s == NULL || !asc__lower_select_form(st->u.assign.value, &m) ||
      !asc__lower_select_fuses(ls, m) || !pure_value(st->u.assign.value))
    return NULL;
  return s;
}

/* Whether every read of s in e is the argument of a reduction of all its
 * elements to a number (s.sum(), np.max(s)). */
static bool select_read(const asc__ast_expr *e, const asc__sym *s) {
  if (e == NULL || mentions_in_expr(e, s) == 0)
    return true;
  switch (e->kind) {
  case ASC_EXPR_UNARY:
    return select_read(e->u.unary.operand, s);
  case ASC_EXPR_BINARY:
    return select_read(e->u.binary.lhs, s) && select_read(e->u.binary.rhs, s);
  case ASC_EXPR_COMPARE:
    return e->u.cmp.n == 1 && select_read(e->u.cmp.operands[0], s) &&
           select_read(e->u.cmp.operands[1], s);
  case ASC_EXPR_CALL:
    if (whole_reduction(e)) {
      const asc__ast_expr *a = e->u.call.rargs[0];
      /* (a method's object is both its func's and its first argument) */
      for (int k = 1; k < e->u.call.nrargs; k++)
        if (mentions_in_expr(e->u.call.rargs[k], s) > 0)
          return false;
      return a->kind == ASC_EXPR_NAME && a->u.name.sym == s;
    }
    if (!is_ew_call(e))
      return false;
    for (int k = 0; k < e->u.call.nrargs; k++)
      if (!select_read(e->u.call.rargs[k], s))
        return false;
    return true;
  default:
    return false;
  }
}

static bool select_reader(const asc__ast_stmt *st, const asc__sym *s) {
  switch (st->kind) {
  case ASC_STMT_ASSIGN:
    return st->u.assign.ntargets == 1 && select_read(st->u.assign.value, s);
  case ASC_STMT_AUGASSIGN:
    return select_read(st->u.aug.value, s);
  case ASC_STMT_RETURN:
    return select_read(st->u.ret.value, s);
  case ASC_STMT_EXPR:
    return select_read(st->u.expr.value, s);
  default:
    return false;
  }
}

/* Whether e reads s as s[:, None] (asc__lower_expand_last). */
static bool expand_of(const asc__ast_expr *e, const asc__sym *s) {
  const asc__ast_expr *r = asc__lower_expand_last(e);
  return r != NULL && r->kind == ASC_EXPR_NAME && r->u.name.sym == s;
}

/* The reads of s in e when each is an operand of e's elementwise
 * operators, outside any reduction's argument: s itself, or expanded
 * (s[:, None]) when expand; -1 when a read is of another kind (top: e is
 * the whole value). */
static int row_read(const asc__ast_expr *e, const asc__sym *s, bool top,
                    bool expand) {
  int n = 0, r;
  if (e == NULL || mentions_in_expr(e, s) == 0)
    return 0;
  if (expand_of(e, s))
    return expand && !top ? 1 : -1;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    return !top && !expand ? 1 : -1;
  case ASC_EXPR_UNARY:
    return row_read(e->u.unary.operand, s, false, expand);
  case ASC_EXPR_BINARY:
    n = row_read(e->u.binary.lhs, s, false, expand);
    r = row_read(e->u.binary.rhs, s, false, expand);
    return n < 0 || r < 0 ? -1 : n + r;
  case ASC_EXPR_COMPARE:
    if (e->u.cmp.n != 1)
      return -1;
    n = row_read(e->u.cmp.operands[0], s, false, expand);
    r = row_read(e->u.cmp.operands[1], s, false, expand);
    return n < 0 || r < 0 ? -1 : n + r;
  case ASC_EXPR_CALL:
    if (!is_ew_call(e))
      return -1;
    for (int k = 0; k < e->u.call.nrargs; k++) {
      if ((r = row_read(e->u.call.rargs[k], s, false, expand)) < 0)
        return -1;
      n += r;
    }
    return n;
  default:
    return -1;
  }
}

/* The reads of s by statement st, a whole-array statement stored by one
 * loop nest (name = ..., out[...] = ..., out op= ..., return ...), as
 * row_read counts them; -1 for a statement of another kind. */
static int row_reader(const asc__ast_stmt *st, const asc__sym *s,
                      bool expand) {
  switch (st->kind) {
  case ASC_STMT_ASSIGN:
    return st->u.assign.ntargets == 1 && is_tensor(st->u.assign.value)
               ? row_read(st->u.assign.value, s, true, expand)
               : -1;
  case ASC_STMT_AUGASSIGN:
    return is_tensor(st->u.aug.value)
               ? row_read(st->u.aug.value, s, true, expand)
               : -1;
  case ASC_STMT_RETURN:
    return st->u.ret.value != NULL && is_tensor(st->u.ret.value)
               ? row_read(st->u.ret.value, s, true, expand)
               : -1;
  default:
    return -1;
  }
}

/* Adds remark t to the note of statement st. */
static void note(lstate *ls, const asc__ast_stmt *st, const char *t) {
  intptr_t *slot = ptab_at(ls->c, &ls->fuse->notes, st);
  const char *old = (const char *)*slot;
  *slot = (intptr_t)(old ? asc__arena_printf(ls->c, "%s\n%s", old, t) : t);
}

int asc__lower_fuse_plan(lstate *ls, const asc__ast_block *b) {
  asc__fuse *fu = ls->fuse;
  int mark, n = b->n;
  int *eff;   /* per statement: the times its value is computed */
  bool *fused, *pure, *selk;
  if (fu == NULL) {
    fu = ls->fuse = asc__arena_alloc(ls->c, sizeof *fu);
    memset(fu, 0, sizeof *fu);
  }
  mark = fu->ndefs;
  if (n < 2 || ls->c->opts.code.nofuse)
    return mark;
  eff = asc__arena_alloc(ls->c, sizeof *eff * (size_t)n);
  fused = asc__arena_alloc(ls->c, sizeof *fused * (size_t)n);
  pure = asc__arena_alloc(ls->c, sizeof *pure * (size_t)n);
  selk = asc__arena_alloc(ls->c, sizeof *selk * (size_t)n);
  for (int k = 0; k < n; k++)
    pure[k] = pure_def(b->stmts[k]);
  /* backwards: whether the statements after a definition are fused is
   * known when it is decided */
  for (int k = n - 1; k >= 0; k--) {
    const asc__ast_stmt *st = b->stmts[k];
    const asc__ast_expr *v;
    const asc__sym *s;
    int cost, m, reads, rank, total, seen;
    const char *why;
    bool row = false, expand = false;
    fused[k] = false;
    selk[k] = false;
    eff[k] = 1;
    if ((s = candidate(st, &cost)) == NULL) {
      if ((s = row_candidate(st, &expand)) != NULL)
        row = true;
      else if ((s = select_candidate(ls, st)) != NULL)
        selk[k] = true;
      else
        continue;
      cost = 0;
    }
    v = st->u.assign.value;
    rank = ty(v)->ndim;
    /* the statements that read it, in order: those before the last one
     * must be definitions without effects, like those between */
    total = (int)mentions(ls, s) - 1;
    if (total <= 0)
      continue; /* never read: nothing to gain */
    seen = 0;
    why = NULL;
    eff[k] = 0;
    for (m = k + 1; m < n && seen < total; m++) {
      const asc__ast_stmt *sm = b->stmts[m];
      if (m - k > WINDOW) {
        why = asc__arena_printf(ls->c,
                                "its readers are more than %d statements "
                                "after it",
                                WINDOW);
        break;
      }
      asc__cctx_tick(ls->c, "lower");
      int c = mentions_in_stmt(sm, s);
      bool quiet = fused[m] || pure[m];
      if (c > 0) {
        reads = expand ? row_reader(sm, s, true)
                       : stmt_reads(sm, s, rank, fused[m] && selk[m]);
        if (reads <= 0) {
          why = asc__arena_printf(ls->c,
                                  "line %d reads it whole, in a loop or "
                                  "branch, or broadcast against more axes",
                                  sm->loc.line);
          break;
        }
        seen += c;
        eff[k] += reads * (fused[m] ? eff[m] : 1);
      }
      if (seen < total && !quiet) {
        why = asc__arena_printf(ls->c,
                                "the statement at line %d runs between "
                                "its definition and %s reader",
                                sm->loc.line, seen ? "a later" : "its");
        break;
      }
      if (seen < total)
        continue;
      /* what the definitions before the last reader bind, it must not
       * read */
      for (int j = k + 1; j < m && why == NULL; j++)
        if (mentions_in_expr(v, b->stmts[j]->u.assign.targets[0]
                                    ->u.name.sym) > 0)
          why = asc__arena_printf(ls->c, "line %d assigns a name it reads",
                                  b->stmts[j]->loc.line);
      break;
    }
    if (row && why == NULL && seen == total &&
        (eff[k] != 1 || fused[m] || row_reader(b->stmts[m], s, expand) != 1))
      why = eff[k] != 1
                ? "a reduction per row, read more than once: each read "
                  "would run it again"
                : asc__arena_printf(ls->c,
                                    "line %d does not read it in the "
                                    "elementwise operators of a stored "
                                    "statement, once per row",
                                    b->stmts[m]->loc.line);
    if (selk[k] && why == NULL && seen == total &&
        (eff[k] > 2 || fused[m] || !select_reader(b->stmts[m], s)))
      why = eff[k] > 2
                ? "a selection reduced more than twice: each reduction "
                  "would evaluate the mask again"
                : asc__arena_printf(ls->c,
                                    "line %d does not reduce it whole to "
                                    "a number (s.sum(), np.mean(s))",
                                    b->stmts[m]->loc.line);
    if (why == NULL && seen == total && eff[k] > 1 && scalar_work(v))
      why = "a number in it takes a pass of its own, which each read "
            "would run again";
    if (why == NULL && seen < total)
      why = "it is also read outside this block (in a loop, a branch, or "
            "after it)";
    if (why != NULL) {
      note(ls, st,
           asc__arena_printf(ls->c, "fuse: '%s' is stored: %s", s->name,
                             why));
      continue;
    }
    if (eff[k] > 1 && cost * (eff[k] - 1) > RECOMPUTE_MAX) {
      note(ls, st,
           asc__arena_printf(ls->c,
                             "fuse: '%s' is stored: computing it %d times "
                             "costs more than a store and its loads",
                             s->name, eff[k]));
      continue;
    }
    fused[k] = true;
    for (int j = k + 1; j <= m; j++)
      if (mentions_in_stmt(b->stmts[j], s) > 0)
        note(ls, b->stmts[j],
             asc__arena_printf(ls->c,
                               "fuse: '%s' (line %d) is computed in this "
                               "statement's loops%s, not stored",
                               s->name, st->loc.line,
                               row ? ", once per row before the row's "
                                     "elements"
                               : selk[k] ? " as one predicated loop over "
                                           "the mask"
                               : eff[k] > 1 ? " at each of its reads"
                                            : ""));
  }
  for (int k = 0; k < n; k++) {
    fdef *d;
    if (!fused[k])
      continue;
    fu->defs = asc__arena_grow(ls->c, fu->defs, fu->ndefs, &fu->capdefs,
                               sizeof *fu->defs, 8);
    d = &fu->defs[fu->ndefs++];
    d->s = b->stmts[k];
    d->sym = b->stmts[k]->u.assign.targets[0]->u.name.sym;
    d->value = b->stmts[k]->u.assign.value;
    d->live = true;
    *ptab_at(ls->c, &fu->index, d->sym) = fu->ndefs;
  }
  return mark;
}

static fdef *live_def(const lstate *ls, const asc__sym *s) {
  intptr_t k;
  if (ls->fuse == NULL || ls->fuse->ndefs == 0)
    return NULL;
  k = ptab_get(&ls->fuse->index, s);
  if (k <= 0 || k > ls->fuse->ndefs || !ls->fuse->defs[k - 1].live ||
      ls->fuse->defs[k - 1].sym != s)
    return NULL;
  return &ls->fuse->defs[k - 1];
}

bool asc__lower_fuse_skip(lstate *ls, const asc__ast_stmt *st) {
  const asc__ast_expr *tg;
  fdef *d;
  if (ls->fuse == NULL || ls->fuse->ndefs == 0 ||
      st->kind != ASC_STMT_ASSIGN || st->u.assign.ntargets != 1)
    return false;
  tg = st->u.assign.targets[0];
  if (tg->kind != ASC_EXPR_NAME || tg->u.name.sym == NULL)
    return false;
  d = live_def(ls, tg->u.name.sym);
  return d != NULL && d->s == st;
}

const asc__ast_expr *asc__lower_fused(lstate *ls, const asc__ast_expr *e) {
  fdef *d;
  if (e->kind != ASC_EXPR_NAME || e->u.name.sym == NULL)
    return NULL;
  d = live_def(ls, e->u.name.sym);
  return d != NULL ? d->value : NULL;
}

void asc__lower_fuse_make(lstate *ls, const asc__sym *s) {
  fdef *d = live_def(ls, s);
  int32_t line;
  if (d == NULL)
    return;
  /* read other than element by element after all: made here, where the
   * definition would have run but for the fused ones between, which
   * change nothing it reads */
  if (ls->ew != NULL)
    asc__diag_fatal(ls->c, d->s->loc,
                    "internal error: fused array '%s' read inside a loop "
                    "nest",
                    s->name);
  d->live = false;
  line = ls->line;
  ls->line = d->s->loc.line;
  asc__lower_new_array(ls, d->s->u.assign.targets[0], d->value);
  ls->line = line;
}

void asc__lower_fuse_end(lstate *ls, int mark) {
  if (ls->fuse == NULL)
    return;
  while (ls->fuse->ndefs > mark) {
    fdef *d = &ls->fuse->defs[--ls->fuse->ndefs];
    *ptab_at(ls->c, &ls->fuse->index, d->sym) = 0;
  }
}

void asc__lower_fuse_note(lstate *ls, const asc__ast_stmt *st,
                          asc__irins *first) {
  const char *t;
  if (ls->fuse == NULL || first == NULL ||
      (t = (const char *)ptab_get(&ls->fuse->notes, st)) == NULL)
    return;
  /* on the statement's first loop, which the passes keep (its shape and
   * broadcast checks before it may fold away), else its first
   * instruction */
  for (asc__irins *i = first; i != NULL; i = i->next)
    if (i->op == ASC_IR_FOR || i->op == ASC_IR_IF) {
      first = i;
      break;
    }
  first->note = first->note ? asc__arena_printf(ls->c, "%s\n%s", t,
                                                first->note)
                            : t;
}
