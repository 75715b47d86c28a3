/*
 * Boolean masks and integer-array indices in kernels (docs/arrays.md):
 * x[m] reads a new array (a gather), x[m] = v and x[m] op= v write
 * through the index (a masked store or a scatter).
 */
#include <stdint.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

/* x[m] with m a bool or integer array (not a view: a gather, or the
 * target of a masked store or a scatter). */
bool asc__lower_is_fancy(const asc__ast_expr *e) {
  const asc__ast_expr *ix;
  asc__type *t;
  if (e->kind != ASC_EXPR_SUBSCRIPT || !is_tensor(e->u.sub.value))
    return false;
  ix = e->u.sub.index;
  if (ix->kind == ASC_EXPR_SLICE || ix->kind == ASC_EXPR_NONE)
    return false;
  /* a tuple of index arrays is typed an int64 array (infer_expr.c) */
  t = ty(ix);
  return t != NULL && t->kind == ASC_TY_TENSOR;
}

/* The index arrays of x[m]: m itself, or the elements of x[i, j, ...]. */
static int index_count(const asc__ast_expr *m) {
  return m->kind == ASC_EXPR_TUPLE ? m->u.tuple.n : 1;
}

static const asc__ast_expr *index_at(const asc__ast_expr *m, int q) {
  return m->kind == ASC_EXPR_TUPLE ? m->u.tuple.elts[q] : m;
}

static bool is_mask(const asc__ast_expr *e) {
  return ty(e->u.sub.index)->dtype == ascBool;
}

/* Index arrays a and b of x[i, j] must broadcast: numpy's IndexError. */
static void index_shapes_check(lstate *ls, const asc__lview *a,
                               const asc__lview *b) {
  for (int k = 1; k <= a->nd && k <= b->nd; k++) {
    asc__irval sa = a->shape[a->nd - k], sb = b->shape[b->nd - k];
    asc__irval bad = op2(
        ls, ASC_IR_AND, ascBool, op2(ls, ASC_IR_NE, ascInt64, sa, sb),
        op2(ls, ASC_IR_AND, ascBool, op2(ls, ASC_IR_NE, ascInt64, sa, i64(1)),
            op2(ls, ASC_IR_NE, ascInt64, sb, i64(1))));
    asc__lower_raise_if(ls, bad, ASC_KEXC_INDEX_ERROR,
                        a->nd == 1 && b->nd == 1
                            ? "shape mismatch: indexing arrays could not be "
                              "broadcast together with shapes ({},) ({},) "
                            : "shape mismatch: indexing arrays could not be "
                              "broadcast together (sizes {} and {} on one "
                              "axis)",
                        sa, sb);
  }
}

/* The index array of x[m] as operands in ew, broadcast into shape[0..nd)
 * (its own shape, computed here).  A new array first when it reads the
 * array the statement writes (x, NULL for none) other than element by
 * element. */
static void index_operands(lstate *ls, const asc__ast_expr *m,
                           const asc__lview *x, asc__ewctx *ew,
                           asc__irval *shape) {
  int nd = ty(m)->ndim, n = index_count(m);
  bool ov = false;
  asc__ewctx one;
  memset(ew, 0, sizeof *ew);
  for (int q = 0; q < n; q++) {
    const asc__ast_expr *mq = index_at(m, q);
    memset(&one, 0, sizeof one);
    asc__lower_collect(ls, &one, mq);
    for (int k = 0; x != NULL && k < one.nops; k++) {
      if (one.ops[k].v.t == x->t && !asc__lower_same_view(&one.ops[k].v, x))
        ov = true;
      if (asc__lower_op_reads_within(&one.ops[k], x->t))
        ov = true;
    }
    if (ov) {
      int32_t tmp = asc__lower_materialize_ew(ls, mq, &one);
      memset(&one, 0, sizeof one);
      asc__lower_whole_tensor(ls, tmp, &asc__lower_push_op(ls, &one, mq)->v);
      ov = false;
    }
    if (n == 1) {
      *ew = one;
      break;
    }
    /* several index arrays: one table, broadcast together (numpy) */
    if (one.nops > 0 && ew->nops > 0)
      index_shapes_check(ls, &ew->ops[0].v, &one.ops[0].v);
    for (int k = 0; k < one.nops; k++)
      *asc__lower_push_op(ls, ew, one.ops[k].e) = one.ops[k];
    for (int k = 0; k < one.nscalars; k++) {
      ew->scalars = asc__arena_grow(ls->c, ew->scalars, ew->nscalars,
                                    &ew->capscalars, sizeof *ew->scalars, 8);
      ew->scalars[ew->nscalars++] = one.scalars[k];
    }
  }
  asc__lower_broadcast_ops(ls, ew, shape, nd);
}

/* The element offset in x of x[m] at the index arrays' position idx[0..ni)
 * and x's remaining axes at idx[ni..): each index wrapped from the end,
 * and checked when check (else known to be in range). */
static asc__irval fancy_offset(lstate *ls, const asc__lview *x,
                               const asc__ast_expr *m, asc__ewctx *ew,
                               const asc__irval *idx, int ni, bool check);


/* m's value at idx[0..nd) */
static asc__irval index_value(lstate *ls, const asc__ast_expr *m,
                              asc__ewctx *ew, asc__irval *idx, int nd) {
  asc__ewctx *outer = ls->ew;
  asc__irval v;
  ew->nd = nd;
  ew->idx = idx;
  ls->ew = ew;
  v = asc__lower_expr(ls, m);
  ls->ew = outer;
  return v;
}

/* A mask's shape must be the array's (numpy's IndexError). */
static void mask_shape_check(lstate *ls, const asc__lview *x,
                             const asc__irval *ms) {
  for (int k = 0; k < x->nd; k++)
    if (!same_val(ms[k], x->shape[k]))
      asc__lower_raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, ms[k], x->shape[k]),
                          ASC_KEXC_INDEX_ERROR,
                          asc__arena_printf(ls->c,
                                            "boolean index did not match "
                                            "indexed array along axis %d; "
                                            "size of axis is {} but size of "
                                            "corresponding boolean axis is {}",
                                            k), x->shape[k], ms[k]);
}

/* The number of true elements of mask m over x's shape. */
static asc__irval mask_count(lstate *ls, const asc__ast_expr *m,
                             asc__ewctx *ew, const asc__lview *x) {
  asc__irval idx[ASC_MAX_DIMS], b;
  asc__irblock *save;
  int32_t n = newreg(ls, ascInt64, "mask.n");
  mov(ls, n, i64(0));
  save = asc__lower_open_nest(ls, x->shape, x->nd, idx);
  b = truthy(ls, index_value(ls, m, ew, idx, x->nd));
  mov(ls, n, add(ls, asc__irv_reg(n), conv(ls, b, ascInt64)));
  ls->cur = save;
  return asc__irv_reg(n);
}

/* Opens `if (cond)`; returns the block to restore. */
static asc__irblock *open_if(lstate *ls, asc__irval cond) {
  asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
  asc__irblock *save = ls->cur;
  i->args[0] = cond;
  ls->cur = &i->body[0];
  return save;
}

/* An integer index k into an axis of size n, numpy's: negative from the
 * end; outside [-n, n) an IndexError, always (numpy raises for integer
 * array indices whatever the settings). */
static asc__irval wrap_checked_axis(lstate *ls, asc__irval k, asc__irval n,
                                    int axis) {
  asc__irval w;
  k = conv(ls, k, ascInt64);
  w = sel(ls, op2(ls, ASC_IR_LT, ascInt64, k, i64(0)), add(ls, k, n), k);
  asc__lower_raise_if(ls,
                      op2(ls, ASC_IR_OR, ascBool,
                          op2(ls, ASC_IR_LT, ascInt64, w, i64(0)),
                          op2(ls, ASC_IR_GE, ascInt64, w, n)),
                      ASC_KEXC_INDEX_ERROR,
                      asc__arena_printf(ls->c, "index {} is out of bounds "
                                        "for axis %d with size {}", axis),
                      k, n);
  return w;
}

static asc__irval wrap_checked(lstate *ls, asc__irval k, asc__irval n) {
  return wrap_checked_axis(ls, k, n, 0);
}

static asc__irval fancy_offset(lstate *ls, const asc__lview *x,
                               const asc__ast_expr *m, asc__ewctx *ew,
                               const asc__irval *idx, int ni, bool check) {
  int n = index_count(m);
  asc__irval off = x->off, at[ASC_MAX_DIMS];
  for (int q = 0; q < ni; q++)
    at[q] = idx[q];
  for (int q = 0; q < n; q++) {
    asc__irval k = conv(ls, index_value(ls, index_at(m, q), ew, at, ni),
                        ascInt64);
    k = check ? wrap_checked_axis(ls, k, x->shape[q], q)
              : sel(ls, op2(ls, ASC_IR_LT, ascInt64, k, i64(0)),
                    add(ls, k, x->shape[q]), k);
    off = add(ls, off, mul(ls, k, x->stride[q]));
  }
  for (int q = n; q < x->nd; q++)
    off = add(ls, off, mul(ls, idx[ni + q - n], x->stride[q]));
  return off;
}

/* numpy checks every index of x[i, j, ...] before it reads or writes,
 * one index array after the other: a pass per array. */
static void check_all(lstate *ls, const asc__lview *x, const asc__ast_expr *m,
                      asc__ewctx *ew, asc__irval *ms, int ni) {
  asc__irval idx[ASC_MAX_DIMS];
  for (int q = 0; q < index_count(m); q++) {
    asc__irblock *save = asc__lower_open_nest(ls, ms, ni, idx);
    wrap_checked_axis(ls, index_value(ls, index_at(m, q), ew, idx, ni),
                      x->shape[q], q);
    ls->cur = save;
  }
}

/* x[m] of a 1-D x from 32,768 elements (outside a parallel loop's
 * body): the selection split over the team.  The index range is cut into
 * nch chunks of len elements (4,096 at least, 64 chunks at most); a pfor
 * counts each chunk's true elements into a local array, a short serial
 * pass turns the counts into each chunk's first output position (their
 * sum is the result's size), and a second pfor copies each chunk's
 * selected elements from there, so the result has numpy's order.  Below
 * that size, one serial count and one serial copy: a team's start costs
 * more than such a copy. */
enum { SEL_PAR_MIN = 1 << 15, SEL_CHUNK = 4096, SEL_CHUNKS = 64 };

typedef struct selpar {
  int32_t cnt;        /* local array: counts, then first positions */
  asc__irval len, nch;
} selpar;

void asc__lower_chunks_open(lstate *ls, asc__lchunks *k, asc__irval nch,
                            asc__irval len, asc__irval n, const char *hint) {
  k->save = ls->cur;
  k->excepts = ls->excepts;
  k->c = asc__irv_reg(open_for(ls, ASC_IR_PFOR, i64(0), nch, i64(1),
                               hint)->dst);
  ls->pfors++;
  ls->excepts = 0; /* the body is another function */
  k->lo = mul(ls, k->c, len);
  k->hi = op2(ls, ASC_IR_MIN, ascInt64, add(ls, k->lo, len), n);
}

void asc__lower_chunks_close(lstate *ls, const asc__lchunks *k) {
  ls->pfors--;
  ls->excepts = k->excepts;
  ls->cur = k->save;
}

/* Each chunk's count, then the first positions; total = their sum. */
static void select_count_par(lstate *ls, selpar *sp, const asc__lview *x,
                             const asc__ast_expr *m, asc__ewctx *ew,
                             int32_t total) {
  asc__irval n = x->shape[0], c, idx[1], b;
  asc__irblock *save = ls->cur, *body;
  asc__irins *a = asc__ir_local_array(ls->c, ls->f, ascInt64, SEL_CHUNKS,
                                      "sel.cnt", ls->line);
  asc__lchunks ch;
  int32_t k, t;
  asc__ir_append(ls->cur, a);
  sp->cnt = a->dst;
  sp->len = op2(ls, ASC_IR_MAX, ascInt64, i64(SEL_CHUNK),
                op2(ls, ASC_IR_SHR, ascInt64,
                    add(ls, n, i64(SEL_CHUNKS - 1)), i64(6)));
  sp->nch = op2(ls, ASC_IR_MIN, ascInt64, i64(SEL_CHUNKS),
                op2(ls, ASC_IR_SHR, ascInt64,
                    add(ls, n, i64(SEL_CHUNK - 1)), i64(12)));
  asc__lower_chunks_open(ls, &ch, sp->nch, sp->len, n, "sel.c");
  k = newreg(ls, ascInt64, "sel.n");
  mov(ls, k, i64(0));
  body = ls->cur;
  idx[0] = asc__irv_reg(open_for(ls, ASC_IR_FOR, ch.lo, ch.hi, i64(1),
                                 "sel.i")->dst);
  b = truthy(ls, index_value(ls, m, ew, idx, 1));
  mov(ls, k, add(ls, asc__irv_reg(k), conv(ls, b, ascInt64)));
  ls->cur = body;
  asc__lower_store_at(ls, sp->cnt, ch.c, asc__irv_reg(k));
  asc__lower_chunks_close(ls, &ch);
  mov(ls, total, i64(0));
  c = asc__irv_reg(open_for(ls, ASC_IR_FOR, i64(0), sp->nch, i64(1),
                            "sel.s")->dst);
  t = newreg(ls, ascInt64, "sel.k");
  mov(ls, t, asc__lower_load_off(ls, sp->cnt, c));
  asc__lower_store_at(ls, sp->cnt, c, asc__irv_reg(total));
  mov(ls, total, add(ls, asc__irv_reg(total), asc__irv_reg(t)));
  ls->cur = save;
}

/* Each chunk's selected elements of x into r from its first position. */
static void select_copy_par(lstate *ls, const selpar *sp,
                            const asc__lview *x, const asc__ast_expr *m,
                            asc__ewctx *ew, int32_t r) {
  asc__irval idx[1], b;
  asc__irblock *isave;
  asc__lchunks ch;
  int32_t pos;
  asc__lower_chunks_open(ls, &ch, sp->nch, sp->len, x->shape[0], "sel.c");
  pos = newreg(ls, ascInt64, "sel.pos");
  mov(ls, pos, asc__lower_load_off(ls, sp->cnt, ch.c));
  idx[0] = asc__irv_reg(open_for(ls, ASC_IR_FOR, ch.lo, ch.hi, i64(1),
                                 "sel.i")->dst);
  b = truthy(ls, index_value(ls, m, ew, idx, 1));
  isave = open_if(ls, b);
  asc__lower_store_at(ls, r, asc__irv_reg(pos),
                      asc__lower_load_at(ls, x, idx, 1));
  mov(ls, pos, add(ls, asc__irv_reg(pos), i64(1)));
  ls->cur = isave;
  asc__lower_chunks_close(ls, &ch);
}

/* x[m]: a new array.  A mask gives the elements where it is true, in C
 * order (1-D); an integer array i gives x[i[p], ...] for each p, of
 * shape i.shape + x.shape[1:]. */
int32_t asc__lower_gather(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *m = e->u.sub.index;
  asc__lview x;
  asc__ewctx ew;
  asc__irval ms[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], cs[ASC_MAX_DIMS];
  asc__irblock *save;
  int dt = ty(e)->dtype, nd = ty(e)->ndim;
  int32_t r;
  asc__lower_view(ls, e->u.sub.value, &x);
  index_operands(ls, m, NULL, &ew, ms);
  if (is_mask(e)) {
    asc__irval n, b;
    asc__irblock *isave;
    int32_t pos;
    asc__irval big = i64(0);
    asc__irblock *outer = ls->cur;
    asc__irins *par = NULL;
    selpar sp;
    mask_shape_check(ls, &x, ms);
    if (x.nd == 1 && ls->pfors == 0) {
      int32_t total = newreg(ls, ascInt64, "sel.total");
      big = asc__irv_reg(newreg(ls, ascBool, "sel.big"));
      mov(ls, big.reg, op2(ls, ASC_IR_GE, ascInt64, x.shape[0],
                           i64(SEL_PAR_MIN)));
      par = emit(ls, ASC_IR_IF, -1, 1);
      par->args[0] = big;
      par->note = "boolean selection: counted, then copied, in chunks "
                  "split over the team from 32768 elements";
      ls->cur = &par->body[0];
      select_count_par(ls, &sp, &x, m, &ew, total);
      ls->cur = &par->body[1];
      mov(ls, total, mask_count(ls, m, &ew, &x));
      ls->cur = outer;
      n = asc__irv_reg(total);
    } else {
      n = mask_count(ls, m, &ew, &x);
    }
    r = asc__lower_alloc_array(ls, dt, 1, &n);
    if (par != NULL) {
      asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
      i->args[0] = big;
      ls->cur = &i->body[0];
      select_copy_par(ls, &sp, &x, m, &ew, r);
      ls->cur = &i->body[1];
    }
    pos = newreg(ls, ascInt64, "mask.i");
    mov(ls, pos, i64(0));
    save = asc__lower_open_nest(ls, x.shape, x.nd, idx);
    b = truthy(ls, index_value(ls, m, &ew, idx, x.nd));
    isave = open_if(ls, b);
    asc__lower_store_at(ls, r, asc__irv_reg(pos),
                        asc__lower_load_at(ls, &x, idx, x.nd));
    mov(ls, pos, add(ls, asc__irv_reg(pos), i64(1)));
    ls->cur = isave;
    ls->cur = save;
    ls->cur = outer;
    return r;
  } else {
    int ni = ty(m)->ndim, n = index_count(m);
    asc__irval shape[ASC_MAX_DIMS], off;
    for (int q = 0; q < ni; q++)
      shape[q] = ms[q];
    for (int q = n; q < x.nd; q++)
      shape[ni + q - n] = x.shape[q];
    if (n > 1)
      check_all(ls, &x, m, &ew, ms, ni);
    r = asc__lower_alloc_array(ls, dt, nd, shape);
    asc__lower_own_cstrides(ls, r, nd, cs);
    save = asc__lower_open_nest(ls, shape, nd, idx);
    off = fancy_offset(ls, &x, m, &ew, idx, ni, n == 1);
    {
      int32_t d = newreg(ls, ls->f->regs[x.t].ty.dtype, NULL);
      asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
      l->args[0] = asc__irv_reg(x.t);
      l->args[1] = off;
      asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, nd),
                          asc__irv_reg(d));
    }
    ls->cur = save;
    return r;
  }
}

/* A gather x[i] read in place by a whole-array statement (x[idx] * w,
 * vals @ x[cols]): each element loads x at i's value, where the new array
 * of asc__lower_gather() would cost a pass writing it and one reading it
 * (and, for short rows, an allocation per statement). */
struct asc__ewgat {
  const asc__ast_expr *m; /* the index array */
  asc__lview x;           /* the array gathered from */
  asc__ewctx sub;         /* m's operands, broadcast into m's shape */
  int ni;                 /* m's dimensions */
};

void asc__lower_collect_gather(lstate *ls, asc__ewctx *ew,
                               const asc__ast_expr *e) {
  struct asc__ewgat *g = asc__arena_alloc(ls->c, sizeof *g);
  asc__irval ms[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], k, n, out;
  asc__irblock *save, *isave;
  asc__ewop *op;
  int32_t bad;
  memset(g, 0, sizeof *g);
  g->m = e->u.sub.index;
  g->ni = ty(g->m)->ndim;
  asc__lower_view(ls, e->u.sub.value, &g->x);
  index_operands(ls, g->m, NULL, &g->sub, ms);
  /* Every index is checked before the statement's loops, as numpy makes
   * the gathered array before it writes anything: one pass over i that
   * vectorises, then, only when one is out of range, the pass that
   * raises numpy's IndexError for the first of them. */
  if (index_count(g->m) > 1) {
    check_all(ls, &g->x, g->m, &g->sub, ms, g->ni);
    goto operand;
  }
  n = g->x.shape[0];
  bad = newreg(ls, ascBool, "gat.bad");
  mov(ls, bad, asc__irv_int(ascBool, 0));
  save = asc__lower_open_nest(ls, ms, g->ni, idx);
  k = conv(ls, index_value(ls, g->m, &g->sub, idx, g->ni), ascInt64);
  out = op2(ls, ASC_IR_OR, ascBool,
            op2(ls, ASC_IR_LT, ascInt64, k,
                op2(ls, ASC_IR_SUB, ascInt64, i64(0), n)),
            op2(ls, ASC_IR_GE, ascInt64, k, n));
  mov(ls, bad, op2(ls, ASC_IR_OR, ascBool, asc__irv_reg(bad), out));
  ls->cur = save;
  isave = open_if(ls, asc__irv_reg(bad));
  isave->last->note = "gather read in place (indices checked first)";
  save = asc__lower_open_nest(ls, ms, g->ni, idx);
  wrap_checked(ls, index_value(ls, g->m, &g->sub, idx, g->ni), n);
  ls->cur = save;
  ls->cur = isave;
operand:
  /* the operand: shape m.shape + x.shape[k:] (k index arrays), strides
   * as a reduction's */
  op = asc__lower_push_op(ls, ew, e);
  op->gat = g;
  op->v.t = -1;
  op->v.off = i64(0);
  op->v.nd = g->ni + g->x.nd - index_count(g->m);
  for (int q = 0; q < op->v.nd; q++) {
    op->v.shape[q] =
        q < g->ni ? ms[q] : g->x.shape[q - g->ni + index_count(g->m)];
    op->v.stride[q] = i64(1);
    op->v.src[q] = -1;
  }
}

asc__irval asc__lower_gather_elem(lstate *ls, const asc__ewop *op,
                                  const asc__irval *idx, int nd) {
  struct asc__ewgat *g = op->gat;
  const asc__lview *v = &op->v;
  asc__irval pos[ASC_MAX_DIMS], off;
  int32_t d;
  asc__irins *l;
  for (int r = 0; r < v->nd; r++)
    pos[r] = mul(ls, idx[nd - v->nd + r], v->stride[r]);
  /* in range (checked before the loops): only negative ones wrap */
  off = fancy_offset(ls, &g->x, g->m, &g->sub, pos, g->ni, false);
  d = newreg(ls, ls->f->regs[g->x.t].ty.dtype, NULL);
  l = emit(ls, ASC_IR_LOAD, d, 2);
  l->args[0] = asc__irv_reg(g->x.t);
  l->args[1] = off;
  return asc__irv_reg(d);
}

bool asc__lower_op_reads_within(const asc__ewop *op, int32_t t) {
  const asc__ewctx *sub = op->red != NULL   ? &op->red->sub
                          : op->gat != NULL ? &op->gat->sub
                                            : NULL;
  if (op->gat != NULL && op->gat->x.t == t)
    return true;
  for (int q = 0; sub != NULL && q < sub->nops; q++)
    if (sub->ops[q].v.t == t || asc__lower_op_reads_within(&sub->ops[q], t))
      return true;
  return false;
}

/* The value of x[...] op= v for old element value old. */
static asc__irval combine(lstate *ls, int dt, asc__irval old, asc__irval v,
                          int op) {
  asc__type *pt;
  int odt;
  if (op < 0)
    return v;
  pt = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, dt),
                       asc__ty_scalar(ls->c, vdt(ls, v)));
  odt = asc__ty_concrete(ls->c, pt)->dtype;
  if (op == ASC_IR_DIV && !asc__dt_is_float(odt) &&
      !asc__dt_is_complex(odt))
    odt = ascFloat64;
  if (op == ASC_IR_DIV) /* numpy's complex division */
    return asc__lower_div(ls, odt, conv(ls, old, odt), conv(ls, v, odt),
                          true);
  return op2(ls, op, odt, conv(ls, old, odt), conv(ls, v, odt));
}

/* Is e elementwise in masked reads a[m] of arrays of nd dimensions, m
 * written as the mask of the store (scalar parts aside)?  Then its
 * element at a true element of m is computed from a's elements there. */
static bool masked_ew(const asc__ast_expr *e, const asc__ast_expr *m, int nd) {
  const asc__ast_expr *a;
  if (!is_tensor(e))
    return true;
  switch (e->kind) {
  case ASC_EXPR_SUBSCRIPT:
    a = e->u.sub.value;
    return asc__lower_is_fancy(e) && is_mask(e) &&
           asc__lower_same_expr(e->u.sub.index, m) && ty(a)->ndim == nd &&
           (a->kind == ASC_EXPR_NAME ||
            (a->kind == ASC_EXPR_SUBSCRIPT && !asc__lower_is_fancy(a)));
  case ASC_EXPR_BINARY:
    return e->u.binary.op != ASC_BIN_MATMUL &&
           masked_ew(e->u.binary.lhs, m, nd) &&
           masked_ew(e->u.binary.rhs, m, nd);
  case ASC_EXPR_UNARY:
    return masked_ew(e->u.unary.operand, m, nd);
  case ASC_EXPR_CALL:
    if (e->u.call.builtin == NULL || e->u.call.callee != NULL ||
        !asc__builtin_is_elementwise(e))
      return false;
    for (int k = 0; k < e->u.call.nrargs; k++)
      if (e->u.call.rargs[k] && !masked_ew(e->u.call.rargs[k], m, nd))
        return false;
    return true;
  default:
    return false;
  }
}

/* The operands of masked_ew() expression e: a[m] stands for a. */
static void collect_masked(lstate *ls, asc__ewctx *ew, const asc__ast_expr *e) {
  if (!is_tensor(e)) {
    asc__lower_collect(ls, ew, e);
    return;
  }
  switch (e->kind) {
  case ASC_EXPR_SUBSCRIPT:
    asc__lower_view(ls, e->u.sub.value, &asc__lower_push_op(ls, ew, e)->v);
    return;
  case ASC_EXPR_BINARY:
    collect_masked(ls, ew, e->u.binary.lhs);
    collect_masked(ls, ew, e->u.binary.rhs);
    return;
  case ASC_EXPR_UNARY:
    collect_masked(ls, ew, e->u.unary.operand);
    return;
  default:
    for (int k = 0; k < e->u.call.nrargs; k++)
      if (e->u.call.rargs[k])
        collect_masked(ls, ew, e->u.call.rargs[k]);
    return;
  }
}

/* The mask of the first selection a[m] in elementwise expression e, or
 * NULL. */
static const asc__ast_expr *first_mask(const asc__ast_expr *e) {
  const asc__ast_expr *m = NULL;
  if (!is_tensor(e))
    return NULL;
  switch (e->kind) {
  case ASC_EXPR_SUBSCRIPT:
    return asc__lower_is_fancy(e) && is_mask(e) ? e->u.sub.index : NULL;
  case ASC_EXPR_BINARY:
    m = first_mask(e->u.binary.lhs);
    return m != NULL ? m : first_mask(e->u.binary.rhs);
  case ASC_EXPR_UNARY:
    return first_mask(e->u.unary.operand);
  case ASC_EXPR_CALL:
    for (int k = 0; k < e->u.call.nrargs && m == NULL; k++)
      if (e->u.call.rargs[k] != NULL)
        m = first_mask(e->u.call.rargs[k]);
    return m;
  default:
    return NULL;
  }
}

bool asc__lower_select_form(const asc__ast_expr *e,
                            const asc__ast_expr **mask) {
  const asc__ast_expr *m = first_mask(e);
  const asc__type *mt;
  if (m == NULL || (mt = ty(m)) == NULL || mt->kind != ASC_TY_TENSOR ||
      mt->ndim < 1 || !masked_ew(e, m, mt->ndim))
    return false;
  *mask = m;
  return true;
}

void asc__lower_select_operands(lstate *ls, const asc__ast_expr *e,
                                const asc__ast_expr *m, asc__ewctx *sub,
                                asc__ewctx *mew, asc__irval *ms) {
  memset(sub, 0, sizeof *sub);
  index_operands(ls, m, NULL, mew, ms);
  collect_masked(ls, sub, e);
  /* numpy's IndexError for a selected array of another shape than the
   * mask, before anything is read */
  for (int k = 0; k < sub->nops; k++)
    mask_shape_check(ls, &sub->ops[k].v, ms);
}

asc__irval asc__lower_mask_at(lstate *ls, const asc__ast_expr *m,
                              asc__ewctx *mew, asc__irval *idx, int nd) {
  return truthy(ls, index_value(ls, m, mew, idx, nd));
}

/* Whether e may be computed at every element of a masked store, the
 * mask's false ones too: float or complex arithmetic (+ - * / ** and
 * signs) of the selected operands, names and constants.  In numpy's
 * elementwise rules such arithmetic neither raises nor has an effect (a
 * division by zero is an infinity, a negative base's fractional power a
 * NaN), and the selected operands are read within their extents (the
 * mask's shape) at every element. */
static bool speculable(const asc__ast_expr *e, int depth) {
  const asc__type *t = ty(e);
  bool fl = t != NULL && (asc__dt_is_float(t->dtype) ||
                          asc__dt_is_complex(t->dtype));
  if (depth > 32)
    return false;
  switch (e->kind) {
  case ASC_EXPR_INT:
  case ASC_EXPR_FLOAT:
  case ASC_EXPR_BOOL:
  case ASC_EXPR_NAME:
    return true;
  case ASC_EXPR_SUBSCRIPT:
    return asc__lower_is_fancy(e) && is_mask(e);
  case ASC_EXPR_UNARY:
    return fl &&
           (e->u.unary.op == ASC_UN_NEG || e->u.unary.op == ASC_UN_POS) &&
           speculable(e->u.unary.operand, depth + 1);
  case ASC_EXPR_BINARY:
    switch (e->u.binary.op) {
    case ASC_BIN_ADD:
    case ASC_BIN_SUB:
    case ASC_BIN_MUL:
    case ASC_BIN_DIV:
    case ASC_BIN_POW:
      return fl && speculable(e->u.binary.lhs, depth + 1) &&
             speculable(e->u.binary.rhs, depth + 1);
    default:
      return false;
    }
  default:
    return false;
  }
}

/* Whether e raises a float to a power that is not 2 (a call of the
 * vector math, not a multiplication). */
static bool has_power(const asc__ast_expr *e) {
  const asc__ast_expr *r;
  switch (e->kind) {
  case ASC_EXPR_UNARY:
    return has_power(e->u.unary.operand);
  case ASC_EXPR_BINARY:
    r = e->u.binary.rhs;
    if (e->u.binary.op == ASC_BIN_POW && asc__dt_is_float(ty(e)->dtype) &&
        !(r->kind == ASC_EXPR_FLOAT && r->u.fval == 2.0) &&
        !(r->kind == ASC_EXPR_INT && r->u.ival == 2))
      return true;
    return has_power(e->u.binary.lhs) || has_power(r);
  default:
    return false;
  }
}

/* x[m] = f(a[m], b[m], ...) (or op=) as one predicated loop over x: at
 * each true element of m, f of a's, b's, ... elements there, without the
 * gathered arrays, the value array and the count of m numpy makes.  The
 * same elements in the same order get the same operations.  False, with
 * nothing stored, when an a is x's tensor other than x itself (numpy's
 * copy on overlap: the value array first). */
static bool store_masked_ew(lstate *ls, const asc__lview *x,
                            const asc__ast_expr *m, asc__ewctx *mew,
                            const asc__irval *ms, const asc__ast_expr *value,
                            int op) {
  asc__ewctx vew, *outer;
  asc__irval idx[ASC_MAX_DIMS], b, v = i64(0), off, old = i64(0);
  asc__irblock *save, *isave;
  int dt = ls->f->regs[x->t].ty.dtype;
  bool spec;
  memset(&vew, 0, sizeof vew);
  collect_masked(ls, &vew, value);
  for (int k = 0; k < vew.nops; k++)
    if (vew.ops[k].v.t == x->t && !asc__lower_same_view(&vew.ops[k].v, x))
      return false;
  mask_shape_check(ls, x, ms);
  for (int k = 0; k < vew.nops; k++)
    if (!asc__lower_same_view(&vew.ops[k].v, x))
      mask_shape_check(ls, &vew.ops[k].v, ms);
  save = asc__lower_open_nest(ls, x->shape, x->nd, idx);
  /* a power computed at every element, before the test: vmchunk then
   * computes it ahead in a loop that vectorises (the store stays in the
   * branch, so no element the mask leaves is written) */
  spec = has_power(value) && speculable(value, 0);
  vew.nd = x->nd;
  vew.idx = idx;
  outer = ls->ew;
  if (spec) {
    ls->ew = &vew;
    v = asc__lower_expr(ls, value);
    ls->ew = outer;
  }
  b = truthy(ls, index_value(ls, m, mew, idx, x->nd));
  isave = open_if(ls, b);
  isave->last->note =
      spec ? "masked store: one predicated loop, no gathered arrays; the "
             "value computed at every element, stored where the mask is "
             "true"
           : "masked store: one predicated loop, no gathered arrays";
  if (!spec) {
    ls->ew = &vew;
    v = asc__lower_expr(ls, value);
    ls->ew = outer;
  }
  off = asc__lower_elem_offset(ls, x, idx, x->nd);
  if (op >= 0) { /* loaded after the value's operands, which may be x */
    int32_t d = newreg(ls, dt, NULL);
    asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
    l->args[0] = asc__irv_reg(x->t);
    l->args[1] = off;
    old = asc__irv_reg(d);
  }
  asc__lower_store_at(ls, x->t, off, combine(ls, dt, old, v, op));
  ls->cur = isave;
  ls->cur = save;
  return true;
}

/* The mask m of x[a[m], b[m], ...] (one index array per axis of x, each
 * a[m] a selection from a 1-D array by the same 1-D mask m), or NULL. */
static const asc__ast_expr *masked_indices(const asc__ast_expr *target,
                                           int xnd) {
  const asc__ast_expr *idx = target->u.sub.index, *m = NULL;
  if (is_mask(target) || index_count(idx) != xnd)
    return NULL;
  for (int q = 0; q < index_count(idx); q++) {
    const asc__ast_expr *s = index_at(idx, q), *a;
    if (s->kind != ASC_EXPR_SUBSCRIPT || !asc__lower_is_fancy(s) ||
        !is_mask(s) || ty(s->u.sub.index)->ndim != 1)
      return NULL;
    a = s->u.sub.value;
    if (ty(a)->ndim != 1 ||
        (a->kind != ASC_EXPR_NAME &&
         (a->kind != ASC_EXPR_SUBSCRIPT || asc__lower_is_fancy(a))))
      return NULL;
    if (m == NULL)
      m = s->u.sub.index;
    else if (!asc__lower_same_expr(m, s->u.sub.index))
      return NULL;
  }
  return m;
}

/* x[a[m], b[m], ...] = value, value a number or elementwise in selections
 * c[m] by the same mask: one predicated loop over m that stores at
 * (a[k], b[k], ...) each true k, without the selected index arrays, the
 * value array and the counts of m numpy makes.  Every index is checked
 * first (numpy's IndexError before anything is written), and the stores
 * come in numpy's order, so a repeated position keeps the last.  False,
 * with nothing stored, when an index array or the value reads x's
 * tensor (numpy's copies first). */
static bool store_masked_scatter(lstate *ls, const asc__lview *x,
                                 const asc__ast_expr *target,
                                 const asc__ast_expr *m,
                                 const asc__ast_expr *value) {
  const asc__ast_expr *ix = target->u.sub.index;
  int n = index_count(ix);
  asc__lview av[ASC_MAX_DIMS];
  asc__ewctx mew, vew, *outer;
  asc__irval ms[ASC_MAX_DIMS], idx[1], off, v = i64(0), k[ASC_MAX_DIMS], b;
  asc__irblock *save, *isave, *bsave;
  int32_t bad;
  memset(&vew, 0, sizeof vew);
  for (int q = 0; q < n; q++) {
    asc__lower_view(ls, index_at(ix, q)->u.sub.value, &av[q]);
    if (av[q].t == x->t)
      return false;
  }
  if (is_tensor(value)) {
    collect_masked(ls, &vew, value);
    for (int q = 0; q < vew.nops; q++)
      if (vew.ops[q].v.t == x->t)
        return false;
  }
  /* numpy's IndexError of the value's selections first: Python
   * evaluates the value before the target */
  index_operands(ls, m, NULL, &mew, ms);
  for (int q = 0; q < vew.nops; q++)
    mask_shape_check(ls, &vew.ops[q].v, ms);
  for (int q = 0; q < n; q++)
    mask_shape_check(ls, &av[q], ms);
  if (!is_tensor(value))
    v = asc__lower_expr(ls, value);
  /* one pass without branches over every index, then, only when one is
   * out of range, the passes that raise numpy's IndexError for the first
   * of them */
  bad = newreg(ls, ascBool, "scat.bad");
  mov(ls, bad, asc__irv_int(ascBool, 0));
  save = asc__lower_open_nest(ls, ms, 1, idx);
  b = asc__lower_mask_at(ls, m, &mew, idx, 1);
  for (int q = 0; q < n; q++) {
    asc__irval kq = conv(ls, asc__lower_load_at(ls, &av[q], idx, 1), ascInt64);
    asc__irval out = op2(
        ls, ASC_IR_OR, ascBool,
        op2(ls, ASC_IR_LT, ascInt64, kq,
            op2(ls, ASC_IR_SUB, ascInt64, i64(0), x->shape[q])),
        op2(ls, ASC_IR_GE, ascInt64, kq, x->shape[q]));
    mov(ls, bad, op2(ls, ASC_IR_OR, ascBool, asc__irv_reg(bad),
                     op2(ls, ASC_IR_AND, ascBool, b, out)));
  }
  ls->cur = save;
  bsave = open_if(ls, asc__irv_reg(bad));
  bsave->last->note = "masked scatter (indices checked first)";
  for (int q = 0; q < n; q++) {
    save = asc__lower_open_nest(ls, ms, 1, idx);
    isave = open_if(ls, asc__lower_mask_at(ls, m, &mew, idx, 1));
    wrap_checked_axis(ls, asc__lower_load_at(ls, &av[q], idx, 1),
                      x->shape[q], q);
    ls->cur = isave;
    ls->cur = save;
  }
  ls->cur = bsave;
  save = asc__lower_open_nest(ls, ms, 1, idx);
  isave = open_if(ls, asc__lower_mask_at(ls, m, &mew, idx, 1));
  isave->last->note =
      "masked scatter: one predicated loop, no selected index arrays";
  if (is_tensor(value)) {
    vew.nd = 1;
    vew.idx = idx;
    outer = ls->ew;
    ls->ew = &vew;
    v = asc__lower_expr(ls, value);
    ls->ew = outer;
  }
  off = x->off;
  for (int q = 0; q < n; q++) {
    k[q] = conv(ls, asc__lower_load_at(ls, &av[q], idx, 1), ascInt64);
    k[q] = sel(ls, op2(ls, ASC_IR_LT, ascInt64, k[q], i64(0)),
               add(ls, k[q], x->shape[q]), k[q]);
    off = add(ls, off, mul(ls, k[q], x->stride[q]));
  }
  asc__lower_store_at(ls, x->t, off, v);
  ls->cur = isave;
  ls->cur = save;
  return true;
}

/* x[m] = value or x[m] op= value (op >= 0), m a mask or an integer
 * array: numpy's masked store and scatter. */
void asc__lower_fancy_store(lstate *ls, const asc__ast_expr *target,
                            const asc__ast_expr *value, int op) {
  const asc__ast_expr *m = target->u.sub.index, *mm;
  asc__lview x, v;
  asc__ewctx ew;
  asc__irval ms[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], sv = i64(0);
  asc__irblock *save;
  int dt;
  int32_t tmp = -1;
  bool arr = is_tensor(value);
  asc__lower_view(ls, target->u.sub.value, &x);
  dt = ls->f->regs[x.t].ty.dtype;
  if (op < 0 && (mm = masked_indices(target, x.nd)) != NULL &&
      (!arr || masked_ew(value, mm, 1)) &&
      store_masked_scatter(ls, &x, target, mm, value))
    return;
  index_operands(ls, m, &x, &ew, ms);
  if (arr && is_mask(target) && ty(m)->ndim == x.nd &&
      masked_ew(value, m, x.nd) &&
      store_masked_ew(ls, &x, m, &ew, ms, value, op))
    return;
  if (arr) {
    /* the values first, in a new array when they read x */
    asc__ewctx vew;
    memset(&vew, 0, sizeof vew);
    asc__lower_collect(ls, &vew, value);
    if (vew.nops == 1 && vew.ops[0].red == NULL && vew.ops[0].gat == NULL &&
        vew.ops[0].e == value &&
        vew.ops[0].v.t != x.t) {
      v = vew.ops[0].v;
    } else {
      tmp = asc__lower_materialize_ew(ls, value, &vew);
      asc__lower_whole_tensor(ls, tmp, &v);
    }
    if (v.nd == 0) { /* a 0-d array: its one element */
      sv = asc__lower_load_at(ls, &v, idx, 0);
      arr = false;
    }
  } else {
    sv = asc__lower_expr(ls, value);
  }
  if (is_mask(target)) {
    asc__irval b, n, cur;
    asc__irblock *isave;
    int32_t pos = -1;
    mask_shape_check(ls, &x, ms);
    if (arr) {
      /* numpy: as many values as true elements, or one */
      asc__irval one;
      n = mask_count(ls, m, &ew, &x);
      one = op2(ls, ASC_IR_EQ, ascInt64, v.shape[0], i64(1));
      asc__lower_raise_if(ls,
                          op2(ls, ASC_IR_AND, ascBool,
                              op1(ls, ASC_IR_NOT, ascBool, one),
                              op2(ls, ASC_IR_NE, ascInt64, v.shape[0], n)),
                          ASC_KEXC_VALUE_ERROR,
                          "NumPy boolean array indexing assignment cannot "
                          "assign {} input values to the {} output values "
                          "where the mask is true", v.shape[0], n);
      v.stride[0] = sel(ls, one, i64(0), v.stride[0]);
      pos = newreg(ls, ascInt64, "mask.i");
      mov(ls, pos, i64(0));
    }
    save = asc__lower_open_nest(ls, x.shape, x.nd, idx);
    b = truthy(ls, index_value(ls, m, &ew, idx, x.nd));
    isave = open_if(ls, b);
    if (arr) {
      asc__irval p = asc__irv_reg(pos);
      cur = asc__lower_load_at(ls, &v, &p, 1);
      mov(ls, pos, add(ls, asc__irv_reg(pos), i64(1)));
    } else {
      cur = sv;
    }
    {
      asc__irval off = asc__lower_elem_offset(ls, &x, idx, x.nd), old = i64(0);
      if (op >= 0) {
        int32_t d = newreg(ls, dt, NULL);
        asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
        l->args[0] = asc__irv_reg(x.t);
        l->args[1] = off;
        old = asc__irv_reg(d);
      }
      asc__lower_store_at(ls, x.t, off, combine(ls, dt, old, cur, op));
    }
    ls->cur = isave;
    ls->cur = save;
  } else {
    /* x[i[p], ...] = value[p, ...] over i.shape + x.shape[1:]; with op,
     * numpy's x[i] = x[i] op value: every new value first, then the
     * stores (a repeated index takes the last) */
    int ni = ty(m)->ndim, n = index_count(m), nd = ni + x.nd - n;
    asc__irval shape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS];
    int32_t vals = -1;
    int passes = op >= 0 ? 2 : 1;
    for (int q = 0; q < ni; q++)
      shape[q] = ms[q];
    for (int q = n; q < x.nd; q++)
      shape[ni + q - n] = x.shape[q];
    if (n > 1) /* every index checked before anything is written */
      check_all(ls, &x, m, &ew, ms, ni);
    if (arr) {
      if (v.nd > nd)
        asc__diag_fatal(ls->c, value->loc,
                        "cannot broadcast a %d-dimensional array into a "
                        "%d-dimensional one", v.nd, nd);
      asc__lower_broadcast(ls, &v, shape, nd, false);
    }
    if (op >= 0) {
      vals = asc__lower_alloc_array(ls, dt, nd, shape);
      asc__lower_own_cstrides(ls, vals, nd, cs);
    }
    for (int pass = 0; pass < passes; pass++) {
      asc__irval off, cur;
      save = asc__lower_open_nest(ls, shape, nd, idx);
      off = fancy_offset(ls, &x, m, &ew, idx, ni, n == 1);
      if (op >= 0 && pass == 1) {
        /* the offset's arithmetic is placed before the load that reads it */
        asc__irval at = asc__lower_dot_idx(ls, idx, cs, nd);
        int32_t d = newreg(ls, dt, NULL);
        asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
        l->args[0] = asc__irv_reg(vals);
        l->args[1] = at;
        asc__lower_store_at(ls, x.t, off, asc__irv_reg(d));
        ls->cur = save;
        continue;
      }
      cur = arr ? asc__lower_load_at(ls, &v, idx, nd) : sv;
      if (op >= 0) {
        int32_t d = newreg(ls, dt, NULL);
        asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
        l->args[0] = asc__irv_reg(x.t);
        l->args[1] = off;
        asc__lower_store_at(ls, vals, asc__lower_dot_idx(ls, idx, cs, nd),
                            combine(ls, dt, asc__irv_reg(d), cur, op));
      } else {
        asc__lower_store_at(ls, x.t, off, cur);
      }
      ls->cur = save;
    }
    if (vals >= 0) {
      asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
      fr->args[0] = asc__irv_reg(vals);
    }
  }
  if (tmp >= 0) {
    asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
    fr->args[0] = asc__irv_reg(tmp);
  }
}
