/*
 * Lowering from the typed AST to the IR.
 *
 * Every expression becomes a value (a constant or a fresh single-definition
 * register) of the type inference gave it; Python variables become
 * registers assigned with `mov`.  Tensor indexing becomes an explicit
 * element offset sum(index_k * stride_k), left for fold / cse / licm /
 * strength to simplify.  Helpers are inlined.  A loop the user asked to
 * run in parallel (asc.prange, asc.parallel_for) becomes a `pfor` whose
 * body the emitter turns into a separate function; every other `range`
 * loop is a plain `for`, and deciding which of those may run in parallel
 * is the parallelize pass's alone (passes/parallelize.c).
 */
#include <math.h>
#include <string.h>

#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/prange.h"
#include "asc/asc.h"
#include "asc/kernel_abi.h"
#include "compiler/types/types.h"

static uint32_t sym_bucket(const lstate *ls, const asc__sym *s) {
  uint64_t h = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15u;
  return (uint32_t)(h >> 32) & (ls->nheads - 1);
}

void asc__lower_bind(lstate *ls, const asc__sym *s, int32_t reg) {
  symreg *m;
  if ((uint32_t)ls->nmap >= ls->nheads) {
    /* rechain everything, oldest first, into twice the buckets */
    ls->nheads = ls->nheads ? 2 * ls->nheads : 64;
    ls->heads = asc__arena_alloc(ls->c, sizeof *ls->heads * ls->nheads);
    memset(ls->heads, 0xff, sizeof *ls->heads * ls->nheads);
    for (int k = 0; k < ls->nmap; k++) {
      m = &ls->map[k];
      m->bucket = sym_bucket(ls, m->sym);
      m->older = ls->heads[m->bucket];
      ls->heads[m->bucket] = k;
    }
  }
  ls->map = asc__arena_grow(ls->c, ls->map, ls->nmap, &ls->capmap,
                            sizeof *ls->map, 32);
  m = &ls->map[ls->nmap];
  m->sym = s;
  m->view = NULL;
  m->elems = NULL;
  m->nelems = 0;
  m->reg = reg;
  m->bucket = sym_bucket(ls, s);
  m->older = ls->heads[m->bucket];
  ls->heads[m->bucket] = ls->nmap++;
}

/* Ends the bindings made since nmap was n, newest first: each is then the
 * head of its chain. */
void asc__lower_unbind_to(lstate *ls, int n) {
  while (ls->nmap > n) {
    symreg *m = &ls->map[--ls->nmap];
    ls->heads[m->bucket] = m->older;
  }
}

/* The newest binding of s, or -1.  A name whose definition was fused is
 * made now: it is read other than element by element. */
static int32_t first_of(lstate *ls, const asc__sym *s) {
  int32_t k;
  if (ls->fuse != NULL)
    asc__lower_fuse_make(ls, s);
  k = ls->nheads ? ls->heads[sym_bucket(ls, s)] : -1;
  while (k >= 0 && ls->map[k].sym != s)
    k = ls->map[k].older;
  return k;
}

static int32_t next_of(lstate *ls, const asc__sym *s, int32_t k) {
  for (k = ls->map[k].older; k >= 0 && ls->map[k].sym != s;)
    k = ls->map[k].older;
  return k;
}

void asc__lower_bind_view(lstate *ls, const asc__sym *s,
                          const asc__lview *v) {
  asc__lview *copy = asc__arena_alloc(ls->c, sizeof *copy);
  *copy = *v;
  asc__lower_bind(ls, s, -1);
  ls->map[ls->nmap - 1].view = copy;
}

/* Is t an array the lowering made after register mark that nothing
 * holds: no name (its register, a view of it, a tuple's element) and no
 * helper's result?  (A name's array is older than mark unless a fused
 * definition was made meanwhile, which binds it; a parameter is never
 * 64-byte aligned.)  Such an array is the statement's to give back. */
bool asc__lower_is_made_temp(lstate *ls, int32_t t, int32_t mark) {
  const asc__irtype *ty;
  if (t < mark || t >= ls->f->nregs || t == ls->ret_reg)
    return false;
  ty = &ls->f->regs[t].ty;
  if (ty->kind != ASC_IRK_TENSOR || !(ty->flags & ASC_IRT_ALIGN64))
    return false;
  for (int k = 0; k < ls->nmap; k++) {
    const symreg *m = &ls->map[k];
    if (m->reg == t || (m->view != NULL && m->view->t == t))
      return false;
    for (int j = 0; j < m->nelems && m->elems != NULL; j++)
      if (m->elems[j] == t)
        return false;
  }
  for (int j = 0; ls->ret_elems != NULL && j < agg_n(ls->ret_type); j++)
    if (ls->ret_elems[j] == t)
      return false;
  return true;
}

const asc__lview *asc__lower_sym_view(lstate *ls, const asc__sym *s) {
  int32_t k = first_of(ls, s);
  return k >= 0 ? ls->map[k].view : NULL;
}

/* A ConstExpr parameter: its value, or a NONE value. */
static asc__irval const_sym(lstate *ls, const asc__sym *s) {
  asc__irval none;
  for (int32_t k = first_of(ls, s); k >= 0; k = next_of(ls, s, k))
    if (ls->map[k].reg < 0 && ls->map[k].view == NULL &&
        ls->map[k].elems == NULL)
      return ls->map[k].cval;
  memset(&none, 0, sizeof none);
  return none;
}

static int32_t lookup(lstate *ls, const asc__sym *s) {
  int32_t k = first_of(ls, s);
  return k >= 0 ? ls->map[k].reg : -1;
}

/* The register of a variable, created on first use with the symbol's
 * type. */
int32_t asc__lower_lookup(lstate *ls, const asc__sym *s) {
  return lookup(ls, s);
}

int32_t asc__lower_var_reg(lstate *ls, const asc__sym *s, asc__loc loc) {
  int32_t r = lookup(ls, s);
  asc__type *t;
  if (r >= 0)
    return r;
  t = s->type ? asc__ty_find(s->type) : NULL;
  if (t == NULL || t->kind != ASC_TY_SCALAR)
    unsupported(ls, loc, "a variable of this type");
  r = newreg(ls, t->dtype, s->name);
  asc__lower_bind(ls, s, r);
  return r;
}

/* Does anything in the function that owns local s assign it a value?  (A
 * bare annotation `s: T` does not.) */
static bool has_value(lstate *ls, const asc__sym *s) {
  asc__prange_alist al;
  if (s->owner == NULL)
    return true;
  memset(&al, 0, sizeof al);
  asc__prange_collect_assigned(ls->c, &s->owner->body, &al);
  for (int k = 0; k < al.n; k++)
    if (al.v[k].sym == s)
      return true;
  return false;
}

static asc__irval const_of(lstate *ls, int dt, ascScalar v) {
  (void)ls;
  if (asc__dt_is_float(dt)) {
    double x = asc__dtype_is_float(v.dtype)   ? v.value.f
               : asc__dtype_is_unsigned(v.dtype) ? (double)v.value.u
                                                 : (double)v.value.i;
    return asc__irv_float(dt, x);
  }
  if (asc__dtype_is_float(v.dtype))
    return asc__irv_int(dt, (int64_t)v.value.f);
  return asc__irv_int(dt, v.value.i);
}

/* ------------------------------------------------------------ tensors */

int32_t asc__lower_tensor_reg(lstate *ls, const asc__ast_expr *e) {
  int32_t r;
  if (e->kind == ASC_EXPR_NAME && e->u.name.sym) {
    r = lookup(ls, e->u.name.sym);
    if (r >= 0 && ls->f->regs[r].ty.kind == ASC_IRK_TENSOR)
      return r;
  }
  if ((r = asc__lower_materialize(ls, e)) >= 0)
    return r;
  unsupported(ls, e->loc, "this tensor expression");
}


asc__irval asc__lower_dim_of(lstate *ls, int32_t t, int k) {
  int32_t d = newreg(ls, ascInt64, NULL);
  asc__irins *i = emit(ls, ASC_IR_DIM, d, 1);
  i->args[0] = asc__irv_reg(t);
  i->aux = k;
  return asc__irv_reg(d);
}

static asc__irval stride_of(lstate *ls, int32_t t, int k) {
  int32_t d = newreg(ls, ascInt64, NULL);
  asc__irins *i = emit(ls, ASC_IR_STRIDE, d, 1);
  i->args[0] = asc__irv_reg(t);
  i->aux = k;
  return asc__irv_reg(d);
}

void asc__lower_raise_here(lstate *ls, int kind, const char *msg) {
  asc__irins *i = emit(ls, ASC_IR_RAISE, -1, 0);
  i->aux = kind;
  i->str = msg;
}

/* raise with i64 values for the {} of msg */
static void raise_values(lstate *ls, int kind, const char *msg,
                         asc__irval a, asc__irval b) {
  asc__irins *i = emit(ls, ASC_IR_RAISE, -1, 2);
  i->aux = kind;
  i->str = msg;
  i->args[0] = a;
  i->args[1] = b;
}


/* The element offset of a.flat[k]: k (from the end when negative) taken
 * apart into the indices of a's axes, last axis fastest (C order). */
static asc__irval flat_offset(lstate *ls, const asc__ast_expr *sub,
                              int32_t *treg) {
  asc__lview v;
  asc__irval k, size = i64(1), idx[ASC_MAX_DIMS], given, bad;
  asc__irins *i;
  asc__irblock *save = ls->cur;
  asc__lower_arg_view(ls, sub->u.sub.value->u.attr.value, &v);
  for (int d = 0; d < v.nd; d++)
    size = op2(ls, ASC_IR_MUL, ascInt64, size, v.shape[d]);
  k = given = conv(ls, asc__lower_expr(ls, sub->u.sub.index), ascInt64);
  k = sel(ls, op2(ls, ASC_IR_LT, ascInt64, k, i64(0)),
          op2(ls, ASC_IR_ADD, ascInt64, k, size), k);
  /* always checked: the division below must not meet an empty axis */
  bad = op2(ls, ASC_IR_OR, ascBool, op2(ls, ASC_IR_LT, ascInt64, k, i64(0)),
            op2(ls, ASC_IR_GE, ascInt64, k, size));
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = bad;
  ls->cur = &i->body[0];
  raise_values(ls, ASC_KEXC_INDEX_ERROR,
               "index {} is out of bounds for size {}", given, size);
  ls->cur = save;
  for (int d = v.nd - 1; d >= 0; d--) {
    idx[d] = d == 0 ? k : op2(ls, ASC_IR_MOD, ascInt64, k, v.shape[d]);
    if (d > 0)
      k = op2(ls, ASC_IR_FLOORDIV, ascInt64, k, v.shape[d]);
  }
  *treg = v.t;
  return asc__lower_elem_offset(ls, &v, idx, v.nd);
}

/* The element offset of t[idx...]. */
asc__irval asc__lower_element_offset(lstate *ls, const asc__ast_expr *sub,
                                     int32_t *treg) {
  const asc__ast_expr *idx = sub->u.sub.index;
  int32_t t;
  int nd;
  if (sub->u.sub.value->kind == ASC_EXPR_ATTR &&
      sub->u.sub.value->u.attr.builtin == NULL &&
      strcmp(sub->u.sub.value->u.attr.attr, "flat") == 0)
    return flat_offset(ls, sub, treg);
  if (asc__lower_is_view(ls, sub->u.sub.value)) {
    asc__lview v;
    asc__lower_view(ls, sub->u.sub.value, &v);
    *treg = v.t;
    return asc__lower_view_offset(ls, &v, sub);
  }
  t = asc__lower_tensor_reg(ls, sub->u.sub.value);
  nd = ls->f->regs[t].ty.ndim;
  const asc__ast_expr *one[1];
  const asc__ast_expr *const *ix;
  int n;
  asc__irval off = asc__irv_int(ascInt64, 0);
  if (idx->kind == ASC_EXPR_TUPLE) {
    ix = (const asc__ast_expr *const *)idx->u.tuple.elts;
    n = idx->u.tuple.n;
  } else {
    one[0] = idx;
    ix = one;
    n = 1;
  }
  if (n != nd)
    asc__diag_fatal(ls->c, sub->loc, "expected %d indices", nd);
  for (int k = 0; k < n; k++) {
    asc__irval v = conv(ls, asc__lower_expr(ls, ix[k]), ascInt64), given = v;
    int64_t lb;
    if (v.kind == ASC_IRV_CONST && v.c.i < 0) /* t[-1]: from the end */
      v = op2(ls, ASC_IR_ADD, ascInt64, asc__lower_dim_of(ls, t, k), v);
    else if (v.kind != ASC_IRV_CONST &&
             !(asc__lower_bound(ls, ix[k], &lb) && lb >= 0)) {
      /* a run-time index may be negative: from the end, as in numpy */
      asc__irval neg =
          op2(ls, ASC_IR_LT, ascInt64, v, asc__irv_int(ascInt64, 0));
      asc__irval wrapped =
          op2(ls, ASC_IR_ADD, ascInt64, v, asc__lower_dim_of(ls, t, k));
      v = sel(ls, neg, wrapped, v);
    }
    if (ls->boundscheck) {
      asc__irval size = asc__lower_dim_of(ls, t, k);
      asc__irval lo = op2(ls, ASC_IR_LT, ascInt64, v, asc__irv_int(ascInt64, 0));
      asc__irval hi = op2(ls, ASC_IR_GE, ascInt64, v, size);
      asc__irval bad = op2(ls, ASC_IR_OR, ascBool, lo, hi);
      asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
      asc__irblock *save = ls->cur;
      i->args[0] = bad;
      ls->cur = &i->body[0];
      /* numpy's wording, with the index as written */
      raise_values(ls, ASC_KEXC_INDEX_ERROR,
                   asc__arena_printf(ls->c,
                                     "index {} is out of bounds for axis %d "
                                     "with size {}",
                                     k),
                   given, size);
      ls->cur = save;
    }
    off = op2(ls, ASC_IR_ADD, ascInt64, off,
              op2(ls, ASC_IR_MUL, ascInt64, v, stride_of(ls, t, k)));
  }
  *treg = t;
  return off;
}

/* ----------------------------------------------------------- aggregates */

/* Tuples (t.shape, (a, b)) and struct objects live in one register per
 * element or field: a variable of such a type is a list of registers. */

symreg *asc__lower_agg_sym(lstate *ls, const asc__sym *s, asc__loc loc) {
  asc__type *t = s->type ? asc__ty_find(s->type) : NULL;
  symreg *m;
  for (int32_t k = first_of(ls, s); k >= 0; k = next_of(ls, s, k))
    if (ls->map[k].elems)
      return &ls->map[k];
  if (!is_agg(t))
    unsupported(ls, loc, "a variable of this type");
  asc__lower_bind(ls, s, -1);
  m = &ls->map[ls->nmap - 1];
  m->nelems = agg_n(t);
  m->elems = asc__arena_alloc(ls->c, sizeof *m->elems * ((size_t)m->nelems + 1));
  for (int k = 0; k < m->nelems; k++) {
    asc__type *et = agg_elem(t, k);
    if (et->kind == ASC_TY_TENSOR && t->kind == ASC_TY_TUPLE)
      asc__diag_fatal(ls->c, loc, "a list or tuple of arrays held in a name "
                      "('%s') is not supported in kernels yet: write it in "
                      "place where it is used (np.concatenate([a, b]), "
                      "for p in (a, b):), or as a comprehension, or "
                      "unpack it (p, q = ...)", s->name);
    if (et->kind != ASC_TY_SCALAR)
      unsupported(ls, loc, "a nested tuple or struct");
    m->elems[k] = newreg(ls, et->dtype,
                         t->kind == ASC_TY_STRUCT
                             ? asc__arena_printf(ls->c, "%s.%s", s->name,
                                                 t->fields[k].name)
                             : s->name);
  }
  return m;
}

/* A literal default of a struct field. */
static asc__irval field_default(lstate *ls, const asc__ast_expr *d, int dt) {
  bool neg = false;
  if (d && d->kind == ASC_EXPR_UNARY && d->u.unary.op == ASC_UN_NEG) {
    neg = true;
    d = d->u.unary.operand;
  }
  if (d && d->kind == ASC_EXPR_INT)
    return asc__dt_is_float(dt)
               ? asc__irv_float(dt, neg ? -(double)d->u.ival : (double)d->u.ival)
               : asc__irv_int(dt, neg ? -(int64_t)d->u.ival : (int64_t)d->u.ival);
  if (d && d->kind == ASC_EXPR_FLOAT && asc__dt_is_float(dt))
    return asc__irv_float(dt, neg ? -d->u.fval : d->u.fval);
  if (d && d->kind == ASC_EXPR_BOOL)
    return asc__irv_int(dt, d->u.bval);
  unsupported(ls, d ? d->loc : ls->t->kernel->loc, "this field default");
}

/* The element values of an aggregate expression, converted to the element
 * types of `want` (the target's type). */
void asc__lower_agg(lstate *ls, const asc__ast_expr *e, asc__type *want,
                    asc__irval *vals) {
  int n = agg_n(want);
  if (e->kind == ASC_EXPR_ATTR && strcmp(e->u.attr.attr, "shape") == 0 &&
      asc__lower_is_view(ls, e->u.attr.value)) {
    asc__lview v;
    asc__lower_view(ls, e->u.attr.value, &v);
    for (int k = 0; k < n; k++)
      vals[k] = v.shape[k];
  } else if (e->kind == ASC_EXPR_ATTR &&
             strcmp(e->u.attr.attr, "shape") == 0) {
    int32_t t = asc__lower_tensor_reg(ls, e->u.attr.value);
    for (int k = 0; k < n; k++)
      vals[k] = asc__lower_dim_of(ls, t, k);
  } else if (e->kind == ASC_EXPR_TUPLE && e->u.tuple.n == n) {
    for (int k = 0; k < n; k++)
      vals[k] = asc__lower_expr(ls, e->u.tuple.elts[k]);
  } else if (e->kind == ASC_EXPR_NAME && e->u.name.sym) {
    symreg *m = asc__lower_agg_sym(ls, e->u.name.sym, e->loc);
    if (m->nelems != n)
      unsupported(ls, e->loc, "this aggregate");
    for (int k = 0; k < n; k++)
      vals[k] = asc__irv_reg(m->elems[k]);
  } else if (e->kind == ASC_EXPR_CALL && e->u.call.cls) {
    const asc__ast_class *cls = e->u.call.cls;
    for (int k = 0; k < n; k++) {
      const asc__ast_expr *a = k < e->u.call.nrargs ? e->u.call.rargs[k]
                                                    : NULL;
      vals[k] = a ? asc__lower_expr(ls, a)
                  : field_default(ls, cls->fields[k].def,
                                  agg_elem(want, k)->dtype);
    }
  } else if (e->kind == ASC_EXPR_CALL && e->u.call.builtin &&
             e->u.call.builtin->id == ASC_BI_CM_POLAR && n == 2) {
    asc__lower_cmath_polar(ls, e, vals);
  } else if (e->kind == ASC_EXPR_CALL && e->u.call.callee &&
             is_agg(ty(e)) && agg_n(ty(e)) == n) {
    (void)asc__lower_inline_helper(ls, e, vals);
  } else {
    unsupported(ls, e->loc, "this tuple or struct value");
  }
  for (int k = 0; k < n; k++)
    vals[k] = conv(ls, vals[k], agg_elem(want, k)->dtype);
}

/* t[k] of a tuple (or list) variable whose elements have one type, k
 * known at run time: IndexError out of range as Python's, then the
 * element k picks (a chain of selects: such tuples are short). */
static int32_t runtime_elem(lstate *ls, const symreg *m, asc__irval k,
                            const asc__ast_expr *base) {
  asc__irval n = asc__irv_int(ascInt64, m->nelems), v;
  asc__irval neg = op2(ls, ASC_IR_LT, ascInt64, k, asc__irv_int(ascInt64, 0));
  asc__irval at = sel(ls, neg, op2(ls, ASC_IR_ADD, ascInt64, k, n), k);
  asc__irval out = op2(ls, ASC_IR_OR, ascBool,
                       op2(ls, ASC_IR_LT, ascInt64, at,
                           asc__irv_int(ascInt64, 0)),
                       op2(ls, ASC_IR_GE, ascInt64, at, n));
  asc__lower_raise_if(ls, out, ASC_KEXC_INDEX_ERROR,
                      asc__arena_printf(ls->c, "index {} is out of range "
                                        "for '%s' of {} elements",
                                        base->u.name.id),
                      k, n);
  v = asc__irv_reg(m->elems[m->nelems - 1]);
  for (int j = m->nelems - 2; j >= 0; j--)
    v = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, at, asc__irv_int(ascInt64, j)),
            asc__irv_reg(m->elems[j]), v);
  if (v.kind == ASC_IRV_REG)
    return v.reg;
  {
    int32_t d = newreg(ls, asc__irv_dtype(ls->f, v), NULL);
    mov(ls, d, v);
    return d;
  }
}

/* The register of p.x / shp[k] when the base is an aggregate variable;
 * -1 when it is not one. */
int32_t asc__lower_agg_member(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *base;
  asc__type *bt;
  symreg *m;
  int idx = -1;
  if (e->kind == ASC_EXPR_ATTR)
    base = e->u.attr.value;
  else if (e->kind == ASC_EXPR_SUBSCRIPT)
    base = e->u.sub.value;
  else
    return -1;
  if (base->kind != ASC_EXPR_NAME || base->u.name.sym == NULL)
    return -1;
  bt = base->u.name.sym->type ? asc__ty_find(base->u.name.sym->type) : NULL;
  if (!is_agg(bt))
    return -1;
  m = asc__lower_agg_sym(ls, base->u.name.sym, base->loc);
  if (e->kind == ASC_EXPR_ATTR) {
    if (bt->kind != ASC_TY_STRUCT)
      return -1;
    for (int k = 0; k < bt->n; k++)
      if (strcmp(bt->fields[k].name, e->u.attr.attr) == 0)
        idx = k;
  } else {
    asc__irval k = asc__lower_expr(ls, e->u.sub.index);
    if (k.kind != ASC_IRV_CONST)
      return runtime_elem(ls, m, conv(ls, k, ascInt64), base);
    idx = (int)(k.c.i < 0 ? k.c.i + m->nelems : k.c.i);
  }
  if (idx < 0 || idx >= m->nelems)
    asc__diag_fatal(ls->c, e->loc, "no such element");
  return m->elems[idx];
}

/* ---------------------------------------------------------- expressions */

int asc__lower_binop_ir(asc__binop op) {
  switch (op) {
  case ASC_BIN_ADD: return ASC_IR_ADD;
  case ASC_BIN_SUB: return ASC_IR_SUB;
  case ASC_BIN_MUL: return ASC_IR_MUL;
  case ASC_BIN_DIV: return ASC_IR_DIV;
  case ASC_BIN_FLOORDIV: return ASC_IR_FLOORDIV;
  case ASC_BIN_MOD: return ASC_IR_MOD;
  case ASC_BIN_POW: return ASC_IR_POW;
  case ASC_BIN_LSHIFT: return ASC_IR_SHL;
  case ASC_BIN_RSHIFT: return ASC_IR_SHR;
  case ASC_BIN_BITAND: return ASC_IR_AND;
  case ASC_BIN_BITOR: return ASC_IR_OR;
  default: return ASC_IR_XOR;
  }
}

static int cmpop_ir(asc__cmpop op) {
  switch (op) {
  case ASC_CMP_EQ: case ASC_CMP_IS: return ASC_IR_EQ;
  case ASC_CMP_NE: case ASC_CMP_ISNOT: return ASC_IR_NE;
  case ASC_CMP_LT: return ASC_IR_LT;
  case ASC_CMP_LE: return ASC_IR_LE;
  case ASC_CMP_GT: return ASC_IR_GT;
  default: return ASC_IR_GE;
  }
}

int asc__lower_exc_kind(const asc__builtin *b) {
  switch (b ? b->id : ASC_BI_NONE) {
  case ASC_BI_VALUE_ERROR: return ASC_KEXC_VALUE_ERROR;
  case ASC_BI_INDEX_ERROR: return ASC_KEXC_INDEX_ERROR;
  case ASC_BI_ZERO_DIVISION_ERROR: return ASC_KEXC_ZERO_DIVISION_ERROR;
  case ASC_BI_ASSERTION_ERROR: return ASC_KEXC_ASSERTION_ERROR;
  case ASC_BI_RUNTIME_ERROR: return ASC_KEXC_RUNTIME_ERROR;
  case ASC_BI_ARITHMETIC_ERROR: return ASC_KEXC_ARITHMETIC_ERROR;
  case ASC_BI_OVERFLOW_ERROR: return ASC_KEXC_OVERFLOW_ERROR;
  case ASC_BI_TYPE_ERROR: return ASC_KEXC_TYPE_ERROR;
  case ASC_BI_MEMORY_ERROR: return ASC_KEXC_MEMORY_ERROR;
  case ASC_BI_NOT_IMPLEMENTED_ERROR: return ASC_KEXC_RUNTIME_ERROR;
  default: return ASC_KEXC_EXCEPTION;
  }
}

/* After a loop inside an inlined helper: a `return` in it set ret_flag and
 * left that loop; leave the enclosing one too (in the end the helper's
 * one-trip wrapper).  Folds away when the helper has no such return. */
void asc__lower_after_helper_loop(lstate *ls) {
  asc__irins *i;
  asc__irblock *save = ls->cur;
  if (ls->inline_depth == 0 || ls->ret_flag < 0)
    return;
  /* inside one of the helper's parallel loops no `return` can have run
   * (it is an error there), and a break would leave the parallel loop */
  if (ls->pfors > ls->helper_pfors)
    return;
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = asc__irv_reg(ls->ret_flag);
  ls->cur = &i->body[0];
  emit(ls, ASC_IR_BREAK, -1, 0);
  ls->cur = save;
}

/* short-circuit and/or: the value of the deciding operand */
static asc__irval lower_boolop(lstate *ls, const asc__ast_expr *e) {
  int dt = scalar_dt(ls, e);
  int32_t r = newreg(ls, dt, NULL);
  asc__irval l = conv(ls, asc__lower_expr(ls, e->u.boolop.lhs), dt);
  asc__irins *i;
  asc__irblock *save = ls->cur;
  mov(ls, r, l);
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = truthy(ls, asc__irv_reg(r));
  /* `truthy` may have emitted into cur before the if: move the if last */
  asc__ir_remove(ls->cur, i);
  asc__ir_append(ls->cur, i);
  ls->cur = &i->body[e->u.boolop.is_and ? 0 : 1];
  mov(ls, r, conv(ls, asc__lower_expr(ls, e->u.boolop.rhs), dt));
  ls->cur = save;
  return asc__irv_reg(r);
}

/* a op b for a signed integer a and a uint64 b, exactly (numpy 2; their
 * promoted type is a float, which rounds values past 2**53). */
static asc__irval mixed_compare(lstate *ls, int op, asc__irval a,
                                asc__irval b) {
  asc__irval neg, c;
  a = conv(ls, a, ascInt64);
  neg = op2(ls, ASC_IR_LT, ascInt64, a, asc__irv_int(ascInt64, 0));
  c = op2(ls, op, ascUInt64, conv(ls, a, ascUInt64), b);
  /* a negative a is below every b */
  if (op == ASC_IR_LT || op == ASC_IR_LE || op == ASC_IR_NE)
    return op2(ls, ASC_IR_OR, ascBool, neg, c);
  return op2(ls, ASC_IR_AND, ascBool, op1(ls, ASC_IR_NOT, ascBool, neg), c);
}

/* The comparison op with its operands swapped (a < b is b > a). */
static int swapped(int op) {
  switch (op) {
  case ASC_IR_LT: return ASC_IR_GT;
  case ASC_IR_LE: return ASC_IR_GE;
  case ASC_IR_GT: return ASC_IR_LT;
  case ASC_IR_GE: return ASC_IR_LE;
  default: return op;
  }
}

static asc__irval lower_compare(lstate *ls, const asc__ast_expr *e) {
  int32_t r = newreg(ls, ascBool, NULL);
  asc__irblock *save = ls->cur;
  asc__irval lhs = asc__lower_expr(ls, e->u.cmp.operands[0]);
  for (int k = 0; k < e->u.cmp.n; k++) {
    const asc__ast_expr *re = e->u.cmp.operands[k + 1];
    asc__irval rhs = asc__lower_expr(ls, re);
    asc__type *lt = ty(e->u.cmp.operands[k]), *rtt = ty(re), *pt;
    if (lt && lt->kind == ASC_TY_TENSOR) /* one element of an array */
      lt = asc__ty_scalar(ls->c, lt->dtype);
    if (rtt && rtt->kind == ASC_TY_TENSOR)
      rtt = asc__ty_scalar(ls->c, rtt->dtype);
    pt = asc__ty_promote(ls->c, lt, rtt);
    int dt;
    asc__irins *i;
    if (pt == NULL)
      unsupported(ls, e->loc, "this comparison");
    dt = asc__ty_concrete(ls->c, pt)->dtype;
    if (asc__dt_is_signed(vdt(ls, lhs)) && vdt(ls, rhs) == ascUInt64)
      mov(ls, r, mixed_compare(ls, cmpop_ir(e->u.cmp.ops[k]), lhs, rhs));
    else if (vdt(ls, lhs) == ascUInt64 && asc__dt_is_signed(vdt(ls, rhs)))
      mov(ls, r, mixed_compare(ls, swapped(cmpop_ir(e->u.cmp.ops[k])), rhs,
                               lhs));
    else
      mov(ls, r, op2(ls, cmpop_ir(e->u.cmp.ops[k]), dt, conv(ls, lhs, dt),
                     conv(ls, rhs, dt)));
    if (k + 1 < e->u.cmp.n) {
      i = emit(ls, ASC_IR_IF, -1, 1);
      i->args[0] = asc__irv_reg(r);
      ls->cur = &i->body[0];
    }
    lhs = rhs;
  }
  ls->cur = save;
  return asc__irv_reg(r);
}

static asc__irval lower_expr(lstate *ls, const asc__ast_expr *e);

/* The smallest and largest value of integer type dt. */
static void int_range(int dt, int64_t *lo, uint64_t *hi) {
  int bits = asc__dt_bits(dt);
  if (dt == ascBool) {
    *lo = 0;
    *hi = 1;
  } else if (asc__dt_is_signed(dt)) {
    *lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    *hi = (UINT64_C(1) << (bits - 1)) - 1;
  } else {
    *lo = 0;
    *hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  }
}

asc__irval asc__lower_fit_int(lstate *ls, asc__irval v, int dt, int clamp) {
  int src = vdt(ls, v);
  int64_t slo, dlo;
  uint64_t shi, dhi;
  asc__irval below = asc__irv_int(ascBool, 0), above = below, bad;
  const char *msg;
  if (src == dt || asc__dt_is_float(src) || asc__dt_is_complex(src) ||
      asc__dt_is_float(dt) || asc__dt_is_complex(dt))
    return conv(ls, v, dt);
  int_range(src, &slo, &shi);
  int_range(dt, &dlo, &dhi);
  /* each end of dt's range is a value of src when src can pass it */
  if (slo < dlo)
    below = op2(ls, ASC_IR_LT, src, v, asc__irv_int(src, dlo));
  if (shi > dhi)
    above = op2(ls, ASC_IR_GT, src, v, asc__irv_int(src, (int64_t)dhi));
  bad = clamp < 0 ? below : clamp > 0 ? above
                  : op2(ls, ASC_IR_OR, ascBool, below, above);
  msg = asc__arena_printf(ls->c, "Python integer {} out of bounds for %s",
                          asc__dtype_long((ascDataType)dt));
  if (bad.kind != ASC_IRV_CONST || bad.c.i != 0) {
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    asc__irblock *save = ls->cur;
    i->args[0] = bad;
    ls->cur = &i->body[0];
    raise_values(ls, ASC_KEXC_OVERFLOW_ERROR, msg, conv(ls, v, ascInt64),
                 asc__irv_int(ascInt64, 0));
    ls->cur = save;
  }
  if (clamp > 0) /* a lower bound below the range bounds nothing */
    v = sel(ls, below, asc__irv_int(src, dlo), v);
  else if (clamp < 0)
    v = sel(ls, above, asc__irv_int(src, (int64_t)dhi), v);
  return conv(ls, v, dt);
}

asc__irval asc__lower_expr(lstate *ls, const asc__ast_expr *e) {
  asc__irval v = lower_expr(ls, e);
  if (e->fit != NULL)
    return asc__lower_fit_int(ls, v, asc__ty_concrete(ls->c, e->fit)->dtype,
                              0);
  return v;
}

static asc__irval lower_expr(lstate *ls, const asc__ast_expr *e) {
  if (ls->ew != NULL) {
    asc__irval v;
    if (asc__lower_ew_lookup(ls, e, &v))
      return v;
  }
  switch (e->kind) {
  case ASC_EXPR_INT:
  case ASC_EXPR_BOOL: {
    int dt = scalar_dt(ls, e);
    int64_t v = e->kind == ASC_EXPR_BOOL ? (int64_t)e->u.bval
                                         : (int64_t)e->u.ival;
    if (asc__dt_is_float(dt))
      return asc__irv_float(dt, e->kind == ASC_EXPR_INT
                                    ? (double)e->u.ival
                                    : (double)e->u.bval);
    return asc__irv_int(dt, v);
  }
  case ASC_EXPR_FLOAT:
    if (e->imag) /* 2.5j */
      return asc__lower_cmplx(ls, scalar_dt(ls, e),
                              asc__irv_float(ascFloat64, 0.0),
                              asc__irv_float(ascFloat64, e->u.fval));
    return asc__irv_float(scalar_dt(ls, e), e->u.fval);
  case ASC_EXPR_NAME: {
    const asc__sym *s = e->u.name.sym;
    const asc__ast_expr *fused;
    if (s == NULL)
      unsupported(ls, e->loc, "this name");
    if (ls->ew != NULL && (fused = asc__lower_fused(ls, e)) != NULL)
      return asc__lower_expr(ls, fused); /* an element of it, here */
    if (s->kind == ASC_SYM_CONST)
      return const_of(ls, scalar_dt(ls, e), s->u.cnst->folded);
    if (s->kind == ASC_SYM_BUILTIN && s->u.builtin->kind == ASC_BK_CONST)
      return asc__irv_float(scalar_dt(ls, e),
                            asc__builtin_value(s->u.builtin));
    if (s->kind == ASC_SYM_PARAM || s->kind == ASC_SYM_LOCAL) {
      asc__irval cv = const_sym(ls, s);
      int32_t r;
      if (cv.kind == ASC_IRV_CONST)
        return conv(ls, cv, scalar_dt(ls, e));
      if (s->kind == ASC_SYM_LOCAL && lookup(ls, s) < 0 && !has_value(ls, s))
        asc__diag_fatal(ls->c, e->loc,
                        "'%s' is read but never assigned a value (Python "
                        "would raise UnboundLocalError)",
                        s->name);
      r = asc__lower_var_reg(ls, s, e->loc);
      if (ls->f->regs[r].ty.kind == ASC_IRK_TENSOR) {
        /* a 0-d array parameter: its one element */
        int32_t d = newreg(ls, ls->f->regs[r].ty.dtype, NULL);
        asc__irins *ld = emit(ls, ASC_IR_LOAD, d, 2);
        ld->args[0] = asc__irv_reg(r);
        ld->args[1] = asc__irv_int(ascInt64, 0);
        return conv(ls, asc__irv_reg(d), scalar_dt(ls, e));
      }
      return conv(ls, asc__irv_reg(r), scalar_dt(ls, e));
    }
    unsupported(ls, e->loc, "this kind of name");
  }
  case ASC_EXPR_ATTR:
    if (asc__lower_agg_member(ls, e) >= 0)
      return conv(ls, asc__irv_reg(asc__lower_agg_member(ls, e)),
                  scalar_dt(ls, e));
    if (e->u.attr.builtin && e->u.attr.builtin->kind == ASC_BK_CONST)
      return asc__irv_float(scalar_dt(ls, e),
                            asc__builtin_value(e->u.attr.builtin));
    if ((strcmp(e->u.attr.attr, "real") == 0 ||
         strcmp(e->u.attr.attr, "imag") == 0) &&
        asc__dt_is_complex(scalar_dt(ls, e->u.attr.value)))
      return conv(ls, asc__lower_cintr(ls, e->u.attr.attr[0] == 'r'
                                               ? ASC_INTR_CREAL
                                               : ASC_INTR_CIMAG,
                                       asc__lower_expr(ls, e->u.attr.value)),
                  scalar_dt(ls, e));
    if ((strcmp(e->u.attr.attr, "real") == 0 ||
         strcmp(e->u.attr.attr, "imag") == 0) &&
        ty(e->u.attr.value) != NULL &&
        ty(e->u.attr.value)->kind == ASC_TY_SCALAR) { /* of a real number */
      asc__irval x = asc__lower_expr(ls, e->u.attr.value);
      return e->u.attr.attr[0] == 'r'
                 ? conv(ls, x, scalar_dt(ls, e))
                 : conv(ls, asc__irv_int(ascInt64, 0), scalar_dt(ls, e));
    }
    if (strcmp(e->u.attr.attr, "ndim") == 0) {
      asc__type *vt = ty(e->u.attr.value);
      if (vt && vt->kind == ASC_TY_TENSOR)
        return asc__irv_int(scalar_dt(ls, e), vt->ndim);
    }
    if (strcmp(e->u.attr.attr, "size") == 0 &&
        asc__lower_is_view(ls, e->u.attr.value)) {
      asc__lview v;
      asc__lower_view(ls, e->u.attr.value, &v);
      return conv(ls, asc__lower_view_size(ls, &v), scalar_dt(ls, e));
    }
    if (strcmp(e->u.attr.attr, "size") == 0) {
      int32_t t = asc__lower_tensor_reg(ls, e->u.attr.value);
      asc__irval n = asc__irv_int(ascInt64, 1);
      for (int k = 0; k < ls->f->regs[t].ty.ndim; k++)
        n = op2(ls, ASC_IR_MUL, ascInt64, n, asc__lower_dim_of(ls, t, k));
      return conv(ls, n, scalar_dt(ls, e));
    }
    unsupported(ls, e->loc, "this attribute");
  case ASC_EXPR_SUBSCRIPT: {
    const asc__ast_expr *v = e->u.sub.value;
    int32_t mr = asc__lower_agg_member(ls, e);
    if (mr >= 0)
      return conv(ls, asc__irv_reg(mr), scalar_dt(ls, e));
    if (v->kind == ASC_EXPR_ATTR && strcmp(v->u.attr.attr, "shape") == 0 &&
        asc__lower_is_view(ls, v->u.attr.value)) {
      asc__lview w;
      asc__irval k;
      int64_t kk;
      asc__lower_view(ls, v->u.attr.value, &w);
      k = asc__lower_expr(ls, e->u.sub.index);
      if (k.kind != ASC_IRV_CONST)
        unsupported(ls, e->loc, "t.shape[i] with a variable i");
      kk = k.c.i < 0 ? k.c.i + w.nd : k.c.i;
      if (kk < 0 || kk >= w.nd)
        asc__diag_fatal(ls->c, e->loc, "shape index out of range");
      return conv(ls, w.shape[kk], scalar_dt(ls, e));
    }
    if (v->kind == ASC_EXPR_ATTR && strcmp(v->u.attr.attr, "shape") == 0) {
      /* t.shape[k] with a constant k */
      int32_t t = asc__lower_tensor_reg(ls, v->u.attr.value);
      asc__irval k = asc__lower_expr(ls, e->u.sub.index);
      int nd = ls->f->regs[t].ty.ndim;
      int64_t kk;
      if (k.kind != ASC_IRV_CONST)
        unsupported(ls, e->loc, "t.shape[i] with a variable i");
      kk = k.c.i < 0 ? k.c.i + nd : k.c.i;
      if (kk < 0 || kk >= nd)
        asc__diag_fatal(ls->c, e->loc, "shape index out of range");
      return conv(ls, asc__lower_dim_of(ls, t, (int)kk), scalar_dt(ls, e));
    }
    {
      int32_t t;
      asc__irval off = asc__lower_element_offset(ls, e, &t);
      int32_t d = newreg(ls, ls->f->regs[t].ty.dtype, NULL);
      asc__irins *i = emit(ls, ASC_IR_LOAD, d, 2);
      i->args[0] = asc__irv_reg(t);
      i->args[1] = off;
      return conv(ls, asc__irv_reg(d), scalar_dt(ls, e));
    }
  }
  case ASC_EXPR_CALL:
    return asc__lower_call(ls, e);
  case ASC_EXPR_UNARY: {
    int dt = scalar_dt(ls, e);
    asc__irval a = asc__lower_expr(ls, e->u.unary.operand);
    switch (e->u.unary.op) {
    case ASC_UN_POS:
      return conv(ls, a, dt);
    case ASC_UN_NEG:
      return op1(ls, ASC_IR_NEG, dt, conv(ls, a, dt));
    case ASC_UN_NOT:
      return op1(ls, ASC_IR_NOT, ascBool, truthy(ls, a));
    default:
      return op1(ls, ASC_IR_NOT, dt, conv(ls, a, dt));
    }
  }
  case ASC_EXPR_BINARY: {
    int dt;
    asc__irval a;
    if (e->u.binary.op == ASC_BIN_MATMUL)
      return asc__lower_dot(ls, e);
    dt = scalar_dt(ls, e);
    a = conv(ls, asc__lower_expr(ls, e->u.binary.lhs), dt);
    {
      asc__irval b = conv(ls, asc__lower_expr(ls, e->u.binary.rhs), dt);
      if (e->u.binary.op == ASC_BIN_DIV)
        return asc__lower_div(ls, dt, a, b, ls->ew != NULL);
      return op2(ls, asc__lower_binop_ir(e->u.binary.op), dt, a, b);
    }
  }
  case ASC_EXPR_BOOLOP:
    return lower_boolop(ls, e);
  case ASC_EXPR_COMPARE:
    return lower_compare(ls, e);
  case ASC_EXPR_IFEXP: {
    int dt = scalar_dt(ls, e);
    int32_t r = newreg(ls, dt, NULL);
    asc__irval c = truthy(ls, asc__lower_expr(ls, e->u.ifexp.cond));
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    asc__irblock *save = ls->cur;
    i->args[0] = c;
    ls->cur = &i->body[0];
    mov(ls, r, conv(ls, asc__lower_expr(ls, e->u.ifexp.then), dt));
    ls->cur = &i->body[1];
    mov(ls, r, conv(ls, asc__lower_expr(ls, e->u.ifexp.orelse), dt));
    ls->cur = save;
    return asc__irv_reg(r);
  }
  default:
    unsupported(ls, e->loc, "this expression");
  }
}

/* ---------------------------------------------------------------- entry */

/* `n: asc.ConstExpr` without a type: like an unannotated parameter its
 * argument is an asc_kscalar (params.c gives it the generic flag). */
static bool bare_constexpr(const asc__ast_expr *a) {
  const asc__builtin *b = NULL;
  if (a->kind == ASC_EXPR_ATTR)
    b = a->u.attr.builtin;
  else if (a->kind == ASC_EXPR_NAME && a->u.name.sym != NULL &&
           a->u.name.sym->kind == ASC_SYM_BUILTIN)
    b = a->u.name.sym->u.builtin;
  return b != NULL && b->id == ASC_BI_CONSTEXPR;
}

unsigned asc__kernel_fastmath(const asc__typed *t, unsigned dflt) {
  unsigned m = t->kernel->opts.fastmath >= 0 ? (unsigned)t->kernel->opts.fastmath
                                             : dflt;
  for (const asc__tinst *in = t->helpers; in != NULL; in = in->next) {
    const asc__ast_func *h = in->orig != NULL ? in->orig : in->fn;
    if (h->opts.fastmath >= 0)
      m &= (unsigned)h->opts.fastmath;
  }
  return m & ASC_FASTMATH_ALL;
}

asc__irfunc *asc__lower_kernel(asc__cctx *c, const asc__typed *t) {
  lstate ls;
  asc__ast_func *k = t->kernel;
  c->phase = "lower";
  memset(&ls, 0, sizeof ls);
  ls.c = c;
  ls.t = t;
  ls.f = asc__ir_func_new(c, k->name);
  ls.f->file = c->filename;
  /* the kernel's floating-point mode: the order of its float sums
   * (lower_reduce.c) and the passes' reorderings read it */
  ls.f->fastmath = asc__kernel_fastmath(t, (unsigned)c->opts.code.fastmath);
  ls.cur = &ls.f->body;
  ls.ret_reg = -1;
  ls.ret_flag = -1;
  ls.boundscheck = k->opts.boundscheck == 1;
  ls.f->nresults = asc__kernel_nresults(c, k);
  if (ls.f->nresults < 0)
    asc__diag_fatal(c, k->loc, "kernel '%s' returns different numbers of "
                               "values", k->name);
  if (ls.f->nresults > ASC_KMAX_RESULTS)
    asc__diag_fatal(c, k->loc, "kernel '%s' returns %d values; at most %d",
                    k->name, ls.f->nresults, ASC_KMAX_RESULTS);
  for (int p = 0; p < k->nparams; p++) {
    const asc__sym *s = k->params[p].sym;
    asc__type *pt = s && s->type ? asc__ty_find(s->type) : NULL;
    const asc__sig_param *sp =
        t->sig && p < t->sig->nparams ? &t->sig->params[p] : NULL;
    asc__irtype it;
    int32_t r;
    memset(&it, 0, sizeof it);
    if (pt == NULL)
      unsupported(&ls, k->params[p].loc, "a parameter of this type");
    if (pt->kind == ASC_TY_TENSOR) {
      it.kind = ASC_IRK_TENSOR;
      it.dtype = (uint8_t)pt->dtype;
      it.ndim = (uint8_t)pt->ndim;
      if (pt->contiguous && pt->ndim > 0)
        it.flags = ASC_IRT_CONTIG;
    } else if (pt->kind == ASC_TY_SCALAR) {
      it = asc__irt_scalar(pt->dtype);
      if (k->params[p].annotation == NULL ||
          bare_constexpr(k->params[p].annotation))
        it.flags = ASC_IRT_GENERIC;
    } else {
      unsupported(&ls, k->params[p].loc, "a parameter of this type");
    }
    if (sp && sp->is_constexpr && pt->kind == ASC_TY_SCALAR)
      it.flags |= ASC_IRT_CONSTEXPR;
    r = asc__ir_param(c, ls.f, it, k->params[p].name);
    if (sp && sp->is_constexpr && pt->kind == ASC_TY_SCALAR) {
      /* a ConstExpr: uses read the constant */
      asc__lower_bind(&ls, s, -1);
      ls.map[ls.nmap - 1].cval = const_of(&ls, pt->dtype, sp->value);
    } else {
      asc__lower_bind(&ls, s, r);
    }
  }
  asc__lower_array_vars(&ls, k);
  asc__lower_block(&ls, &k->body);
  return ls.f;
}
