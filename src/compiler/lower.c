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
#include "asc/kernel_abi.h"
#include "compiler/types/types.h"

/* Bytes of one local_array: it is a stack array of the running thread. */
#define LOCAL_ARRAY_MAX (256u * 1024u)
/* Bytes of all the local arrays of a kernel together (helpers inlined,
 * parallel-loop bodies included: a thread may run a body chunk while the
 * kernel's own frame is below it).  A block may use 7 MiB of stack
 * (docs/abi.md); 3 MiB of that is left for frames and libm. */
#define LOCAL_TOTAL_MAX (4u * 1024u * 1024u)

/* Bytes of any local, shared or lock array: 1 TiB, far above what a
 * block can be given, and small enough that sums of them cannot overflow. */
#define SCRATCH_ARRAY_MAX (UINT64_C(1) << 40)

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
static void unbind_to(lstate *ls, int n) {
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

static int32_t var_reg(lstate *ls, const asc__sym *s, asc__loc loc) {
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

static int32_t agg_member(lstate *ls, const asc__ast_expr *e);

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


/* The element offset of t[idx...]. */
asc__irval asc__lower_element_offset(lstate *ls, const asc__ast_expr *sub,
                                     int32_t *treg) {
  const asc__ast_expr *idx = sub->u.sub.index;
  int32_t t;
  int nd;
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

/* The register of p.x / shp[k] when the base is an aggregate variable;
 * -1 when it is not one. */
static int32_t agg_member(lstate *ls, const asc__ast_expr *e) {
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
      unsupported(ls, e->loc, "indexing a tuple with a variable");
    idx = (int)(k.c.i < 0 ? k.c.i + m->nelems : k.c.i);
  }
  if (idx < 0 || idx >= m->nelems)
    asc__diag_fatal(ls->c, e->loc, "no such element");
  return m->elems[idx];
}

/* ---------------------------------------------------------- expressions */

static int binop_ir(asc__binop op) {
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

static int exc_kind(const asc__builtin *b) {
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
static void after_helper_loop(lstate *ls) {
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
      r = var_reg(ls, s, e->loc);
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
    if (agg_member(ls, e) >= 0)
      return conv(ls, asc__irv_reg(agg_member(ls, e)), scalar_dt(ls, e));
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
    int32_t mr = agg_member(ls, e);
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
      return op2(ls, binop_ir(e->u.binary.op), dt, a, b);
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

/* ---------------------------------------------------------- statements */

static void assign_to(lstate *ls, const asc__ast_expr *target,
                      asc__irval v, const asc__ast_expr *value);

/* n unlocked locks of a lock array a, by the thread running this code. */
static void unlock_all(lstate *ls, int32_t a, int64_t n) {
  asc__irblock *save = ls->cur;
  int32_t k = newreg(ls, ascInt64, "lock.k");
  asc__irins *f = emit(ls, ASC_IR_FOR, k, 3), *st;
  f->args[0] = asc__irv_int(ascInt64, 0);
  f->args[1] = asc__irv_int(ascInt64, n);
  f->args[2] = asc__irv_int(ascInt64, 1);
  ls->cur = &f->body[0];
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(a);
  st->args[1] = asc__irv_reg(k);
  st->args[2] = asc__irv_int(ascInt32, 0);
  ls->cur = save;
}

/* local_array / shared_array / lock_array: a buffer register bound to the
 * name.  A lock array is a block's shared int32 buffer whose words are
 * set to 0 (unlocked) where it is created. */
static bool lower_array_def(lstate *ls, const asc__ast_expr *target,
                            const asc__ast_expr *value) {
  const asc__builtin *b;
  asc__irins *i;
  asc__type *t;
  const asc__ast_expr *shape;
  asc__irtype it;
  int32_t r;
  if (value->kind != ASC_EXPR_CALL || (b = value->u.call.builtin) == NULL ||
      (b->id != ASC_BI_LOCAL_ARRAY && b->id != ASC_BI_SHARED_ARRAY &&
       b->id != ASC_BI_LOCK_ARRAY))
    return false;
  if (target->kind != ASC_EXPR_NAME || !target->u.name.sym)
    unsupported(ls, target->loc, "this array target");
  if (b->id == ASC_BI_LOCK_ARRAY && ls->pfors > 0)
    asc__diag_fatal(ls->c, value->loc,
                    "asc.lock_array() must be called outside parallel "
                    "loops: its locks are shared by the block's threads");
  t = ty(value);
  memset(&it, 0, sizeof it);
  it.kind = ASC_IRK_TENSOR;
  it.dtype = (uint8_t)t->dtype;
  it.ndim = (uint8_t)t->ndim;
  it.flags = ASC_IRT_CONTIG;
  r = asc__ir_reg(ls->c, ls->f, it, target->u.name.sym->name);
  i = emit(ls, b->id == ASC_BI_LOCAL_ARRAY ? ASC_IR_LOCAL_ARRAY
                                           : ASC_IR_SHARED_ARRAY,
           r, 0);
  shape = value->u.call.rargs[0];
  {
    const asc__ast_expr *const *el = (const asc__ast_expr *const *)&shape;
    int n = 1;
    if (shape->kind == ASC_EXPR_TUPLE) {
      el = (const asc__ast_expr *const *)shape->u.tuple.elts;
      n = shape->u.tuple.n;
    }
    if (n > ASC_IR_MAXDIMS || n != t->ndim)
      asc__diag_fatal(ls->c, shape->loc, "bad array shape");
    for (int k = 0; k < n; k++) {
      asc__irval d = asc__lower_expr(ls, el[k]);
      if (d.kind != ASC_IRV_CONST || asc__dt_is_float(d.dtype) || d.c.i <= 0)
        asc__diag_fatal(ls->c, el[k]->loc,
                        "array extents must be positive constants");
      i->imm[i->nimm++] = d.c.i;
    }
  }
  {
    /* local arrays live on the stack of a worker thread; every scratch
     * array's size is checked here, with overflow checks, so that emit
     * and the launch can multiply extents freely */
    uint64_t bytes = ascDataTypeSize((ascDataType)t->dtype);
    for (int k = 0; k < i->nimm; k++)
      if (__builtin_mul_overflow(bytes, (uint64_t)i->imm[k], &bytes) ||
          bytes > SCRATCH_ARRAY_MAX)
        asc__diag_fatal(ls->c, value->loc,
                        "array of more than %llu bytes is too large",
                        (unsigned long long)SCRATCH_ARRAY_MAX);
    if (b->id == ASC_BI_LOCAL_ARRAY && bytes > LOCAL_ARRAY_MAX)
      asc__diag_fatal(ls->c, value->loc,
                      "local_array of %llu bytes is too large for the "
                      "stack (at most %u)",
                      (unsigned long long)bytes, (unsigned)LOCAL_ARRAY_MAX);
    if (b->id == ASC_BI_LOCAL_ARRAY) {
      ls->local_bytes += bytes;
      if (ls->local_bytes > LOCAL_TOTAL_MAX)
        asc__diag_fatal(ls->c, value->loc,
                        "the kernel's local arrays take %llu bytes with this "
                        "one, more than the %u bytes they may use of a "
                        "thread's stack (docs/abi.md); use fewer or smaller "
                        "local arrays, or pass a tensor",
                        (unsigned long long)ls->local_bytes,
                        (unsigned)LOCAL_TOTAL_MAX);
    }
  }
  if (b->id == ASC_BI_LOCK_ARRAY)
    unlock_all(ls, r, i->imm[0]);
  asc__lower_bind(ls, target->u.name.sym, r);
  return true;
}

static void assign_to(lstate *ls, const asc__ast_expr *target,
                      asc__irval v, const asc__ast_expr *value) {
  int32_t mr = agg_member(ls, target);
  if (mr >= 0) {
    mov(ls, mr, conv(ls, v, ls->f->regs[mr].ty.dtype));
    return;
  }
  switch (target->kind) {
  case ASC_EXPR_NAME: {
    const asc__sym *s = target->u.name.sym;
    int32_t r;
    asc__type *st;
    if (s == NULL)
      unsupported(ls, target->loc, "this assignment target");
    st = s->type ? asc__ty_find(s->type) : NULL;
    if (st && st->kind == ASC_TY_TENSOR) {
      /* t2 = t: an alias of the same tensor; row = a[i]: a view */
      if (value == NULL)
        unsupported(ls, target->loc, "this tensor assignment");
      if (asc__lower_new_array(ls, target, value))
        return;
      if (asc__lower_is_view(ls, value)) {
        asc__lview view;
        asc__lower_view(ls, value, &view);
        asc__lower_bind_view(ls, s, &view);
        return;
      }
      asc__lower_bind(ls, s, asc__lower_tensor_reg(ls, value));
      return;
    }
    r = var_reg(ls, s, target->loc);
    mov(ls, r, conv(ls, v, ls->f->regs[r].ty.dtype));
    return;
  }
  case ASC_EXPR_SUBSCRIPT: {
    int32_t t;
    asc__irval off = asc__lower_element_offset(ls, target, &t);
    asc__irins *i;
    asc__irval cv = conv(ls, v, ls->f->regs[t].ty.dtype);
    i = emit(ls, ASC_IR_STORE, -1, 3);
    i->args[0] = asc__irv_reg(t);
    i->args[1] = off;
    i->args[2] = cv;
    return;
  }
  default:
    unsupported(ls, target->loc, "this assignment target");
  }
}

static void lower_assign(lstate *ls, const asc__ast_stmt *s) {
  const asc__ast_expr *value = s->u.assign.value;
  for (int k = 0; k < s->u.assign.ntargets; k++) {
    const asc__ast_expr *tg = s->u.assign.targets[k];
    asc__type *vt = ty(value);
    if (lower_array_def(ls, tg, value))
      continue;
    if (asc__lower_array_assign(ls, tg, value))
      continue;
    if (tg->kind == ASC_EXPR_TUPLE) {
      int n = tg->u.tuple.n;
      asc__irval *vals = asc__arena_alloc(ls->c, sizeof *vals * (size_t)n + 1);
      if (!is_agg(vt) || agg_n(vt) != n)
        unsupported(ls, value->loc, "unpacking this value");
      asc__lower_agg(ls, value, vt, vals);
      for (int q = 0; q < n; q++)
        assign_to(ls, tg->u.tuple.elts[q], vals[q], NULL);
      continue;
    }
    if (is_agg(vt) && tg->kind == ASC_EXPR_NAME && tg->u.name.sym) {
      /* the whole tuple / struct: one register per element */
      symreg *m = asc__lower_agg_sym(ls, tg->u.name.sym, tg->loc);
      asc__type *want = asc__ty_find(tg->u.name.sym->type);
      asc__irval *vals =
          asc__arena_alloc(ls->c, sizeof *vals * ((size_t)m->nelems + 1));
      int32_t *dst = m->elems;
      asc__lower_agg(ls, value, want, vals);
      for (int q = 0; q < agg_n(want); q++)
        mov(ls, dst[q], vals[q]);
      continue;
    }
    if (vt && vt->kind == ASC_TY_TENSOR) {
      assign_to(ls, tg, asc__irv_int(ascBool, 0), value);
      continue;
    }
    assign_to(ls, tg, asc__lower_expr(ls, value), value);
  }
}

static void lower_aug(lstate *ls, const asc__ast_stmt *s) {
  const asc__ast_expr *tg = s->u.aug.target;
  asc__irval rhs;
  int op = binop_ir(s->u.aug.op);
  if (asc__lower_array_aug(ls, tg, s->u.aug.value, op))
    return;
  rhs = asc__lower_expr(ls, s->u.aug.value);
  if (tg->kind == ASC_EXPR_NAME || agg_member(ls, tg) >= 0) {
    int32_t r = tg->kind == ASC_EXPR_NAME
                    ? var_reg(ls, tg->u.name.sym, tg->loc)
                    : agg_member(ls, tg);
    int dt = ls->f->regs[r].ty.dtype;
    asc__type *pt = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, dt),
                                    ty(s->u.aug.value));
    int odt = pt ? (int)asc__ty_concrete(ls->c, pt)->dtype : dt;
    if (s->u.aug.op == ASC_BIN_DIV && !asc__dt_is_float(odt) &&
        !asc__dt_is_complex(odt))
      odt = ascFloat64;
    mov(ls, r, conv(ls, op2(ls, op, odt, conv(ls, asc__irv_reg(r), odt),
                            conv(ls, rhs, odt)),
                    dt));
    return;
  }
  if (tg->kind == ASC_EXPR_SUBSCRIPT) {
    int32_t t, d;
    asc__irval off = asc__lower_element_offset(ls, tg, &t);
    int dt = ls->f->regs[t].ty.dtype;
    asc__irins *i;
    asc__type *pt = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, dt),
                                    ty(s->u.aug.value));
    int odt = pt ? (int)asc__ty_concrete(ls->c, pt)->dtype : dt;
    if (s->u.aug.op == ASC_BIN_DIV && !asc__dt_is_float(odt) &&
        !asc__dt_is_complex(odt))
      odt = ascFloat64; /* as `a[i] = a[i] / v`: true division, stored back */
    d = newreg(ls, dt, NULL);
    i = emit(ls, ASC_IR_LOAD, d, 2);
    i->args[0] = asc__irv_reg(t);
    i->args[1] = off;
    {
      asc__irval nv = conv(ls, op2(ls, op, odt, conv(ls, asc__irv_reg(d), odt),
                                   conv(ls, rhs, odt)),
                           dt);
      i = emit(ls, ASC_IR_STORE, -1, 3);
      i->args[0] = asc__irv_reg(t);
      i->args[1] = off;
      i->args[2] = nv;
    }
    return;
  }
  unsupported(ls, tg->loc, "this augmented assignment");
}

static const char *message_of(lstate *ls, const asc__ast_expr *msg) {
  if (msg == NULL)
    return "";
  if (msg->kind != ASC_EXPR_STR)
    unsupported(ls, msg->loc, "a message that is not a string literal");
  if (memchr(msg->u.str.s, '\0', msg->u.str.len) != NULL) {
    /* Messages travel as C strings: an embedded NUL is written as Python's
     * repr writes it, "\x00", instead of ending the text there. */
    size_t n = 0;
    char *t = asc__arena_alloc(ls->c, msg->u.str.len * 4 + 1);
    for (size_t k = 0; k < msg->u.str.len; k++) {
      if (msg->u.str.s[k] == '\0') {
        memcpy(t + n, "\\x00", 4);
        n += 4;
      } else {
        t[n++] = msg->u.str.s[k];
      }
    }
    t[n] = '\0';
    return t;
  }
  return msg->u.str.s;
}

static void lower_raise(lstate *ls, const asc__ast_stmt *s) {
  const asc__ast_expr *x = s->u.raise.exc;
  const asc__builtin *b = NULL;
  const char *msg = "";
  if (x == NULL) {
    if (ls->excepts == 0)
      unsupported(ls, s->loc, "a bare 'raise' outside an except clause");
    emit(ls, ASC_IR_RERAISE, -1, 0);
    return;
  }
  if (x->kind == ASC_EXPR_CALL) {
    b = x->u.call.builtin;
    if (x->u.call.nrargs > 0)
      msg = message_of(ls, x->u.call.rargs[0]);
  } else if (x->kind == ASC_EXPR_NAME && x->u.name.sym &&
             x->u.name.sym->kind == ASC_SYM_BUILTIN) {
    b = x->u.name.sym->u.builtin;
  }
  if (b == NULL || b->kind != ASC_BK_EXC)
    unsupported(ls, x->loc, "raising this");
  asc__lower_raise_here(ls, exc_kind(b), msg);
}

/* The range(...) bounds of a for statement, as int64 values. */
static void range_bounds(lstate *ls, const asc__ast_stmt *s, asc__irval *lo,
                         asc__irval *hi, asc__irval *st) {
  *lo = s->u.for_.start
            ? conv(ls, asc__lower_expr(ls, s->u.for_.start), ascInt64)
            : asc__irv_int(ascInt64, 0);
  *hi = conv(ls, asc__lower_expr(ls, s->u.for_.stop), ascInt64);
  *st = s->u.for_.step
            ? conv(ls, asc__lower_expr(ls, s->u.for_.step), ascInt64)
            : asc__irv_int(ascInt64, 1);
  if (st->kind == ASC_IRV_CONST && st->c.i == 0)
    asc__diag_fatal(ls->c, s->u.for_.step->loc,
                    "range() step must not be zero");
  if (st->kind != ASC_IRV_CONST) {
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    asc__irblock *save = ls->cur;
    i->args[0] = op2(ls, ASC_IR_EQ, ascInt64, *st, asc__irv_int(ascInt64, 0));
    asc__ir_remove(ls->cur, i);
    asc__ir_append(ls->cur, i);
    ls->cur = &i->body[0];
    asc__lower_raise_here(ls, ASC_KEXC_VALUE_ERROR,
                          "range() arg 3 must not be zero");
    ls->cur = save;
  }
}

/* A parallel loop: reductions are the variables of the enclosing code that
 * the body only updates with one `v op= ...`; other variables assigned in
 * the body must not be used outside it. */
static void setup_reductions(lstate *ls, asc__irins *loop,
                             const asc__ast_block *body,
                             const asc__ast_block *kernel_body,
                             const asc__ast_stmt *self) {
  asc__prange_alist al;
  memset(&al, 0, sizeof al);
  asc__prange_collect_assigned(ls->c, body, &al);
  loop->red = asc__arena_alloc(ls->c, sizeof *loop->red * ((size_t)al.n + 1));
  for (int k = 0; k < al.n; k++) {
    const asc__sym *sym = al.v[k].sym;
    /* mentioned anywhere in the kernel outside this loop? */
    bool outside = asc__prange_block_mentions(kernel_body, sym, self);
    if (lookup(ls, sym) >= 0)
      outside = true;
    if (!outside)
      continue;
    if (al.v[k].redop < 0)
      asc__diag_fatal(ls->c, al.v[k].loc,
                      "'%s' is assigned in a parallel loop and used outside "
                      "it; only reductions ('%s += ...') may be",
                      sym->name, sym->name);
    loop->red[loop->nred].reg = var_reg(ls, sym, al.v[k].loc);
    loop->red[loop->nred].op = (uint8_t)al.v[k].redop;
    loop->nred++;
  }
}

static void lower_stmt(lstate *ls, const asc__ast_stmt *s);

static const asc__ast_block *kernel_body_of(lstate *ls) {
  return &ls->t->kernel->body;
}

/* Gives the variables a parallel body assigns (and the loop target) fresh
 * registers for the body, except its reductions: every parallel loop has
 * its own private copies.  Returns the map size to restore afterwards. */
static int privatize(lstate *ls, const asc__ast_block *body,
                     const asc__ast_expr *target, const asc__irins *loop) {
  int saved = ls->nmap;
  asc__prange_alist al;
  memset(&al, 0, sizeof al);
  if (target)
    asc__prange_note_assign(ls->c, &al, target, -1);
  asc__prange_collect_assigned(ls->c, body, &al);
  for (int k = 0; k < al.n; k++) {
    const asc__sym *sym = al.v[k].sym;
    asc__type *t = sym->type ? asc__ty_find(sym->type) : NULL;
    int32_t cur = lookup(ls, sym);
    bool red = false;
    for (int32_t q = 0; loop && q < loop->nred; q++)
      red |= cur >= 0 && loop->red[q].reg == cur;
    if (red || t == NULL || t->kind != ASC_TY_SCALAR)
      continue;
    asc__lower_bind(ls, sym, newreg(ls, t->dtype, sym->name));
  }
  return saved;
}

/* Gives the variables local to a serial loop s fresh registers for its
 * body: its target and the variables its body assigns before reading
 * them, when nothing else in the kernel mentions them.  Python keeps one
 * variable for the whole function, but a loop-local one never carries a
 * value into or out of the loop, so each loop (`for j` used by three
 * loops in a row) gets a register assigned once per iteration: that is
 * what lets fold propagate `j` into index arithmetic and lets the
 * parallelize pass see offsets affine in the loop index.  The bindings
 * are appended to the map; returns how many. */
static int localize(lstate *ls, const asc__ast_stmt *s) {
  int n = 0;
  const asc__sym *target = s->u.for_.target->u.name.sym;
  asc__prange_alist al;
  if (ls->inline_depth > 0)
    return 0; /* a helper's variables live in the helper's body */
  memset(&al, 0, sizeof al);
  asc__prange_note_assign(ls->c, &al, s->u.for_.target, -1);
  asc__prange_collect_assigned(ls->c, &s->u.for_.body, &al);
  for (int k = 0; k < al.n; k++) {
    const asc__sym *sym = al.v[k].sym;
    asc__type *t = sym->type ? asc__ty_find(sym->type) : NULL;
    if (sym->kind != ASC_SYM_LOCAL || t == NULL || t->kind != ASC_TY_SCALAR)
      continue;
    if (sym != target && asc__prange_first_access(&s->u.for_.body, sym) != 1)
      continue;
    if (asc__prange_block_mentions(kernel_body_of(ls), sym, s))
      continue;
    asc__lower_bind(ls, sym, newreg(ls, t->dtype, sym->name));
    n++;
  }
  return n;
}

/* Does block b assign sym anywhere? */
static bool assigns_sym(lstate *ls, const asc__ast_block *b,
                        const asc__sym *sym) {
  asc__prange_alist al;
  memset(&al, 0, sizeof al);
  asc__prange_collect_assigned(ls->c, b, &al);
  for (int k = 0; k < al.n; k++)
    if (al.v[k].sym == sym)
      return true;
  return false;
}

/* A bound as a register of its own: a reduction in the loop's body may
 * update the variable the bound was read from. */
static asc__irval snapshot(lstate *ls, asc__irval v) {
  int32_t r;
  if (v.kind == ASC_IRV_CONST)
    return v;
  r = newreg(ls, vdt(ls, v), NULL);
  mov(ls, r, v);
  return asc__irv_reg(r);
}

/* After `for v in prange(lo, hi, st)`: v holds the last iteration's value
 * when the loop ran, as after a range loop (Python's semantics), and keeps
 * the value it had otherwise.  The iterations ran in parallel, so the
 * value is computed: the trip count n = (hi - lo + st -/+ 1) // st, and
 * v = lo + (n - 1) * st when n > 0.  (A body that assigns v is refused by
 * setup_reductions when v is used outside.) */
static void pfor_last_value(lstate *ls, const asc__sym *vs, asc__loc loc,
                            asc__irval lo, asc__irval hi, asc__irval st) {
  asc__irval zero = asc__irv_int(ascInt64, 0), one = asc__irv_int(ascInt64, 1);
  asc__irval adj, n, ran, last;
  asc__irins *i;
  asc__irblock *save = ls->cur;
  int32_t vr = var_reg(ls, vs, loc);
  adj = sel(ls, op2(ls, ASC_IR_GT, ascInt64, st, zero),
            op2(ls, ASC_IR_SUB, ascInt64, st, one),
            op2(ls, ASC_IR_ADD, ascInt64, st, one));
  n = op2(ls, ASC_IR_FLOORDIV, ascInt64,
          op2(ls, ASC_IR_ADD, ascInt64, op2(ls, ASC_IR_SUB, ascInt64, hi, lo),
              adj),
          st);
  ran = op2(ls, ASC_IR_GT, ascInt64, n, zero);
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = ran;
  ls->cur = &i->body[0];
  last = op2(ls, ASC_IR_ADD, ascInt64, lo,
             op2(ls, ASC_IR_MUL, ascInt64,
                 op2(ls, ASC_IR_SUB, ascInt64, n, one), st));
  mov(ls, vr, conv(ls, last, ls->f->regs[vr].ty.dtype));
  ls->cur = save;
}

static void lower_for(lstate *ls, const asc__ast_stmt *s) {
  asc__irval lo, hi, st;
  asc__irins *i;
  asc__irblock *save = ls->cur;
  int saved_map = ls->nmap, saved_excepts = ls->excepts;
  int loc_from = 0, nloc = 0;
  int32_t iv;
  lfor fr;
  bool par = s->u.for_.loop == ASC_BI_PRANGE, last;
  const asc__sym *vs = s->u.for_.target->kind == ASC_EXPR_NAME
                           ? s->u.for_.target->u.name.sym
                           : NULL;
  if (vs == NULL)
    unsupported(ls, s->u.for_.target->loc, "this loop target");
  range_bounds(ls, s, &lo, &hi, &st);
  /* Does code outside a parallel loop read its variable after it? */
  last = par && ls->pfors == 0 &&
         (lookup(ls, vs) >= 0 ||
          asc__prange_block_mentions(kernel_body_of(ls), vs, s));
  if (last) {
    lo = snapshot(ls, lo);
    hi = snapshot(ls, hi);
    st = snapshot(ls, st);
  }
  iv = newreg(ls, ascInt64, asc__arena_printf(ls->c, "%s.it", vs->name));
  i = emit(ls, par && ls->pfors == 0 ? ASC_IR_PFOR : ASC_IR_FOR, iv, 3);
  i->args[0] = lo;
  i->args[1] = hi;
  i->args[2] = st;
  i->unroll = s->u.for_.loop == ASC_BI_STATIC_RANGE;
  ls->cur = &i->body[0];
  fr.s = s;
  fr.pvar = NULL;
  fr.target_kept = !assigns_sym(ls, &s->u.for_.body, vs);
  fr.up = ls->fors;
  ls->fors = &fr;
  if (i->op == ASC_IR_PFOR) {
    setup_reductions(ls, i, &s->u.for_.body, kernel_body_of(ls), s);
    saved_map = privatize(ls, &s->u.for_.body, s->u.for_.target, i);
  } else {
    loc_from = ls->nmap;
    nloc = localize(ls, s);
  }
  {
    int32_t vr = var_reg(ls, vs, s->u.for_.target->loc);
    mov(ls, vr, conv(ls, asc__irv_reg(iv), ls->f->regs[vr].ty.dtype));
  }
  ls->loops++;
  if (i->op == ASC_IR_PFOR) {
    ls->pfors++;
    ls->excepts = 0; /* the body is another function */
  }
  asc__lower_block(ls, &s->u.for_.body);
  if (i->op == ASC_IR_PFOR) {
    ls->pfors--;
    unbind_to(ls, saved_map);
    ls->excepts = saved_excepts;
  }
  /* the loop's own variables go out of scope; variables first bound in
   * its body stay (Python sees them after the loop) */
  for (int k = loc_from; k < loc_from + nloc; k++)
    ls->map[k].sym = NULL;
  ls->loops--;
  ls->fors = fr.up;
  ls->cur = save;
  if (i->op == ASC_IR_FOR)
    after_helper_loop(ls);
  else if (last) {
    ls->line = s->loc.line;
    pfor_last_value(ls, vs, s->u.for_.target->loc, lo, hi, st);
  }
}

/* asc.parallel_for(n, body): body is a lambda or a nested def of one
 * parameter, which becomes the induction variable. */
static void lower_parallel_for(lstate *ls, const asc__ast_expr *call) {
  const asc__ast_expr *fe = call->u.call.rargs[1];
  const asc__ast_func *fn = NULL;
  asc__irins *i;
  asc__irblock *save = ls->cur;
  bool saved_pb = ls->in_pbody;
  int saved_map = ls->nmap, saved_excepts = ls->excepts;
  int32_t iv;
  lfor fr;
  if (fe->kind == ASC_EXPR_LAMBDA)
    fn = fe->u.lambda.fn;
  else if (fe->kind == ASC_EXPR_NAME && fe->u.name.sym &&
           fe->u.name.sym->kind == ASC_SYM_FUNC)
    fn = fe->u.name.sym->u.func;
  if (fn == NULL || fn->nparams != 1)
    unsupported(ls, fe->loc, "this parallel_for body");
  iv = newreg(ls, ascInt64, fn->params[0].name);
  i = emit(ls, ls->pfors == 0 ? ASC_IR_PFOR : ASC_IR_FOR, iv, 3);
  i->args[0] = asc__irv_int(ascInt64, 0);
  i->args[1] = conv(ls, asc__lower_expr(ls, call->u.call.rargs[0]), ascInt64);
  i->args[2] = asc__irv_int(ascInt64, 1);
  asc__ir_remove(ls->cur, i);
  asc__ir_append(ls->cur, i);
  ls->cur = &i->body[0];
  {
    const asc__sym *ps = fn->params[0].sym;
    asc__type *pt = ps && ps->type ? asc__ty_find(ps->type) : NULL;
    int32_t pr = newreg(ls, pt && pt->kind == ASC_TY_SCALAR ? pt->dtype
                                                           : ascInt64,
                        fn->params[0].name);
    mov(ls, pr, conv(ls, asc__irv_reg(iv), ls->f->regs[pr].ty.dtype));
    asc__lower_bind(ls, ps, pr);
    fr.s = NULL;
    fr.pvar = ps;
    fr.target_kept = !assigns_sym(ls, &fn->body, ps);
    fr.up = ls->fors;
    ls->fors = &fr;
  }
  ls->loops++;
  ls->pfors++;
  ls->in_pbody = true;
  ls->excepts = 0;
  if (fn->kind == ASC_FUNC_LAMBDA && fn->body.n == 1 &&
      fn->body.stmts[0]->kind == ASC_STMT_RETURN) {
    const asc__ast_expr *v = fn->body.stmts[0]->u.ret.value;
    if (v)
      (void)asc__lower_expr(ls, v);
  } else {
    asc__lower_block(ls, &fn->body);
  }
  ls->in_pbody = saved_pb;
  ls->excepts = saved_excepts;
  ls->pfors--;
  ls->loops--;
  ls->fors = fr.up;
  unbind_to(ls, saved_map);
  ls->cur = save;
}

static uint32_t handler_mask(lstate *ls, const asc__ast_handler *h) {
  uint32_t m = 0;
  const asc__ast_expr *t = h->type;
  if (t == NULL)
    return 1u << ASC_KEXC_EXCEPTION;
  if (t->kind == ASC_EXPR_TUPLE) {
    for (int k = 0; k < t->u.tuple.n; k++) {
      const asc__ast_expr *x = t->u.tuple.elts[k];
      if (x->kind != ASC_EXPR_NAME || !x->u.name.sym ||
          x->u.name.sym->kind != ASC_SYM_BUILTIN)
        unsupported(ls, x->loc, "this exception type");
      m |= 1u << exc_kind(x->u.name.sym->u.builtin);
    }
    return m;
  }
  if (t->kind != ASC_EXPR_NAME || !t->u.name.sym ||
      t->u.name.sym->kind != ASC_SYM_BUILTIN)
    unsupported(ls, t->loc, "this exception type");
  return 1u << exc_kind(t->u.name.sym->u.builtin);
}

static void lower_try(lstate *ls, const asc__ast_stmt *s) {
  asc__irblock *save = ls->cur;
  asc__irins *outer = NULL, *inner;
  int32_t ok = -1;
  for (int h = 0; h < s->u.try_.nhandlers; h++)
    if (s->u.try_.handlers[h].name &&
        asc__prange_block_mentions(&s->u.try_.handlers[h].body,
                                   s->u.try_.handlers[h].name_sym, NULL))
      unsupported(ls, s->u.try_.handlers[h].loc,
                  "using the exception object of 'except ... as name'");
  if (s->u.try_.finalbody.n > 0) {
    outer = emit(ls, ASC_IR_TRY, -1, 0);
    outer->has_finally = true;
    ls->cur = &outer->body[0];
  }
  if (s->u.try_.orelse.n > 0) {
    ok = newreg(ls, ascBool, "try_ok");
    mov(ls, ok, asc__irv_int(ascBool, 1));
  }
  inner = emit(ls, ASC_IR_TRY, -1, 0);
  {
    asc__irblock *mid = ls->cur;
    ls->cur = &inner->body[0];
    asc__lower_block(ls, &s->u.try_.body);
    if (s->u.try_.nhandlers > 0) {
      /* one except region catching the union; the clauses are tried in
       * order with excmatch, as Python does */
      int nh = s->u.try_.nhandlers;
      inner->has_except = true;
      for (int h = 0; h < nh; h++)
        inner->exc_mask |= handler_mask(ls, &s->u.try_.handlers[h]);
      ls->cur = &inner->body[1];
      if (ok >= 0)
        mov(ls, ok, asc__irv_int(ascBool, 0));
      ls->excepts++;
      for (int h = 0; h < nh; h++) {
        const asc__ast_handler *hd = &s->u.try_.handlers[h];
        if (h + 1 < nh) {
          int32_t m = newreg(ls, ascBool, NULL);
          asc__irins *x = emit(ls, ASC_IR_EXCMATCH, m, 0), *br;
          x->exc_mask = handler_mask(ls, hd);
          br = emit(ls, ASC_IR_IF, -1, 1);
          br->args[0] = asc__irv_reg(m);
          ls->cur = &br->body[0];
          asc__lower_block(ls, &hd->body);
          ls->cur = &br->body[1];
        } else {
          asc__lower_block(ls, &hd->body);
        }
      }
      ls->excepts--;
    }
    ls->cur = mid;
  }
  if (ok >= 0) {
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    asc__irblock *mid = ls->cur;
    i->args[0] = asc__irv_reg(ok);
    ls->cur = &i->body[0];
    asc__lower_block(ls, &s->u.try_.orelse);
    ls->cur = mid;
  }
  if (outer) {
    ls->cur = &outer->body[2];
    asc__lower_block(ls, &s->u.try_.finalbody);
  }
  ls->cur = save;
}

/* One value a kernel returns: an array register (in *reg, else -1) or a
 * number of the kernel's dtype of it.  Nothing is written yet. */
static asc__irval result_value(lstate *ls, const asc__ast_expr *v,
                               asc__type *t, const int32_t *taken,
                               int ntaken, int32_t *reg) {
  t = asc__ty_find(t);
  *reg = -1;
  if (t != NULL && t->kind == ASC_TY_TENSOR) {
    *reg = asc__lower_result_array(ls, v, taken, ntaken);
    return asc__irv_reg(*reg);
  }
  if (t != NULL && t->kind == ASC_TY_SCALAR &&
      asc__dtype_is_complex(t->dtype)) {
    /* a 0-d array, which the caller reads back as a number */
    *reg = asc__lower_scalar_array(ls, t->dtype, asc__lower_expr(ls, v));
    return asc__irv_reg(*reg);
  }
  if (t != NULL && t->kind == ASC_TY_SCALAR)
    return conv(ls, asc__lower_expr(ls, v), t->dtype);
  asc__diag_fatal(ls->c, v->loc,
                  "a kernel returns numbers and arrays, or a tuple of "
                  "them written out (return a, b), not %s",
                  t == NULL ? "this" : asc__ty_name(ls->c, t));
}

/* `return v` of the kernel: v into the launch's result slots.  Every
 * value of a tuple is computed before the first slot is written, so that
 * a value that raises (caught by the kernel's own `except`, which may
 * return again) leaves no array half handed over. */
static void lower_result(lstate *ls, const asc__ast_expr *v) {
  asc__type *t = asc__ty_find(ls->t->ret);
  int n = ls->f->nresults;
  int32_t taken[ASC_KMAX_RESULTS];
  asc__irval x[ASC_KMAX_RESULTS];
  if (n > 1) {
    if (v->kind != ASC_EXPR_TUPLE || v->u.tuple.n != n || t == NULL ||
        t->kind != ASC_TY_TUPLE || t->n != n)
      asc__diag_fatal(ls->c, v->loc, "the kernel returns %d values", n);
    for (int k = 0; k < n; k++)
      x[k] = result_value(ls, v->u.tuple.elts[k], t->elems[k], taken, k,
                          &taken[k]);
  } else {
    n = 1;
    x[0] = result_value(ls, v, t, taken, 0, &taken[0]);
  }
  for (int k = 0; k < n; k++) {
    asc__irins *i = emit(ls, ASC_IR_RESULT, -1, 1);
    i->aux = k;
    i->args[0] = x[k];
  }
}

static void lower_stmt(lstate *ls, const asc__ast_stmt *s) {
  asc__irblock *save = ls->cur;
  ls->line = s->loc.line;
  asc__cctx_tick(ls->c, "lower");
  switch (s->kind) {
  case ASC_STMT_EXPR: {
    const asc__ast_expr *e = s->u.expr.value;
    if (e->kind == ASC_EXPR_STR)
      return; /* docstring */
    if (e->kind == ASC_EXPR_CALL && e->u.call.builtin &&
        e->u.call.builtin->id == ASC_BI_PARALLEL_FOR) {
      lower_parallel_for(ls, e);
      return;
    }
    (void)asc__lower_expr(ls, e);
    return;
  }
  case ASC_STMT_ASSIGN:
    lower_assign(ls, s);
    return;
  case ASC_STMT_ANNASSIGN:
    if (s->u.ann.value) {
      asc__ast_stmt tmp;
      asc__ast_expr *tg[1];
      memset(&tmp, 0, sizeof tmp);
      tmp.kind = ASC_STMT_ASSIGN;
      tmp.loc = s->loc;
      tg[0] = s->u.ann.target;
      tmp.u.assign.targets = tg;
      tmp.u.assign.ntargets = 1;
      tmp.u.assign.value = s->u.ann.value;
      lower_assign(ls, &tmp);
    }
    return;
  case ASC_STMT_AUGASSIGN:
    lower_aug(ls, s);
    return;
  case ASC_STMT_IF: {
    asc__irval c = truthy(ls, asc__lower_expr(ls, s->u.if_.cond));
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = c;
    ls->cur = &i->body[0];
    asc__lower_block(ls, &s->u.if_.body);
    ls->cur = &i->body[1];
    asc__lower_block(ls, &s->u.if_.orelse);
    ls->cur = save;
    return;
  }
  case ASC_STMT_FOR:
    lower_for(ls, s);
    return;
  case ASC_STMT_WHILE: {
    asc__irins *l = emit(ls, ASC_IR_LOOP, -1, 0), *i;
    asc__irval c;
    ls->cur = &l->body[0];
    c = truthy(ls, asc__lower_expr(ls, s->u.while_.cond));
    i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = c;
    ls->cur = &i->body[1];
    emit(ls, ASC_IR_BREAK, -1, 0);
    ls->cur = &l->body[0];
    ls->loops++;
    asc__lower_block(ls, &s->u.while_.body);
    ls->loops--;
    ls->cur = save;
    after_helper_loop(ls);
    return;
  }
  case ASC_STMT_BREAK:
    emit(ls, ASC_IR_BREAK, -1, 0);
    return;
  case ASC_STMT_CONTINUE:
    emit(ls, ASC_IR_CONTINUE, -1, 0);
    return;
  case ASC_STMT_RETURN:
    if (ls->inline_depth > 0 && ls->pfors > ls->helper_pfors)
      asc__diag_fatal(ls->c, s->loc, "'return' inside a parallel loop");
    if (ls->inline_depth > 0) {
      if (s->u.ret.value && ls->ret_reg >= 0)
        mov(ls, ls->ret_reg,
            conv(ls, asc__lower_expr(ls, s->u.ret.value),
                 ls->f->regs[ls->ret_reg].ty.dtype));
      if (s->u.ret.value && ls->ret_elems != NULL) {
        int n = agg_n(ls->ret_type);
        asc__irval *vals =
            asc__arena_alloc(ls->c, sizeof *vals * ((size_t)n + 1));
        asc__lower_agg(ls, s->u.ret.value, ls->ret_type, vals);
        for (int k = 0; k < n; k++)
          mov(ls, ls->ret_elems[k], vals[k]);
      }
      /* inside loops: leave them one by one (after_helper_loop) */
      if (ls->loops > 0)
        mov(ls, ls->ret_flag, asc__irv_int(ascBool, 1));
      emit(ls, ASC_IR_BREAK, -1, 0);
      return;
    }
    if (ls->in_pbody) {
      emit(ls, ASC_IR_CONTINUE, -1, 0);
      return;
    }
    if (ls->pfors > 0)
      asc__diag_fatal(ls->c, s->loc, "'return' inside a parallel loop");
    if (s->u.ret.value != NULL)
      lower_result(ls, s->u.ret.value);
    emit(ls, ASC_IR_RET, -1, 0);
    return;
  case ASC_STMT_PASS:
  case ASC_STMT_FUNCDEF:
    return;
  case ASC_STMT_ASSERT: {
    asc__irval c = truthy(ls, asc__lower_expr(ls, s->u.assert_.test));
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = c;
    ls->cur = &i->body[1];
    asc__lower_raise_here(ls, ASC_KEXC_ASSERTION_ERROR,
                          message_of(ls, s->u.assert_.msg));
    ls->cur = save;
    return;
  }
  case ASC_STMT_RAISE:
    lower_raise(ls, s);
    return;
  case ASC_STMT_TRY:
    lower_try(ls, s);
    return;
  case ASC_STMT_WITH: {
    asc__irins *i = emit(ls, ASC_IR_CRITICAL, -1, 0);
    ls->cur = &i->body[0];
    asc__lower_block(ls, &s->u.with.body);
    ls->cur = save;
    return;
  }
  default:
    unsupported(ls, s->loc, "this statement");
  }
}

void asc__lower_block(lstate *ls, const asc__ast_block *b) {
  int mark = asc__lower_fuse_plan(ls, b);
  for (int k = 0; k < b->n; k++) {
    asc__irblock *cur = ls->cur;
    asc__irins *last = cur->last;
    if (asc__lower_fuse_skip(ls, b->stmts[k]))
      continue;
    lower_stmt(ls, b->stmts[k]);
    asc__lower_fuse_note(ls, b->stmts[k], last ? last->next : cur->first);
  }
  asc__lower_fuse_end(ls, mark);
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

asc__irfunc *asc__lower_kernel(asc__cctx *c, const asc__typed *t) {
  lstate ls;
  asc__ast_func *k = t->kernel;
  c->phase = "lower";
  memset(&ls, 0, sizeof ls);
  ls.c = c;
  ls.t = t;
  ls.f = asc__ir_func_new(c, k->name);
  ls.f->file = c->filename;
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
  asc__lower_block(&ls, &k->body);
  return ls.f;
}
