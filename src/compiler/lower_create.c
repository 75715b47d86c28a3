/*
 * Arrays a kernel creates (docs/arrays.md): np.zeros, np.full, np.eye,
 * np.arange, np.linspace, copies, matrix products, np.cumsum, np.outer,
 * and the new array an array expression makes when a name is bound to
 * it or a kernel returns it.
 */
#include <stdint.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

/* A new array register (contiguous, 64-byte aligned). */
static int32_t heap_reg(lstate *ls, int dt, int nd, const char *hint) {
  asc__irtype it;
  memset(&it, 0, sizeof it);
  it.kind = ASC_IRK_TENSOR;
  it.dtype = (uint8_t)dt;
  it.ndim = (uint8_t)nd;
  it.flags = ASC_IRT_CONTIG | ASC_IRT_ALIGN64;
  return asc__ir_reg(ls->c, ls->f, it, hint);
}

int32_t asc__lower_alloc_array(lstate *ls, int dt, int nd,
                               const asc__irval *shape) {
  int32_t t = heap_reg(ls, dt, nd, "new");
  asc__irval ext[ASC_MAX_DIMS];
  asc__irins *i;
  for (int k = 0; k < nd; k++) /* before the instruction: conv may emit */
    ext[k] = conv(ls, shape[k], ascInt64);
  i = emit(ls, ASC_IR_NEW_ARRAY, t, nd);
  for (int k = 0; k < nd; k++)
    i->args[k] = ext[k];
  return t;
}

int32_t asc__lower_scalar_array(lstate *ls, int dt, asc__irval v) {
  int32_t t = asc__lower_alloc_array(ls, dt, 0, NULL);
  asc__irins *st;
  v = conv(ls, v, dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = i64(0);
  st->args[2] = v;
  return t;
}

/* t[...] = v */
static void fill(lstate *ls, int32_t t, asc__irval v) {
  asc__lview w;
  asc__irval idx[ASC_MAX_DIMS], off;
  asc__irblock *save;
  asc__irins *st;
  int dt = ls->f->regs[t].ty.dtype;
  v = conv(ls, v, dt);
  asc__lower_whole_tensor(ls, t, &w);
  save = asc__lower_open_nest(ls, w.shape, w.nd, idx);
  off = asc__lower_elem_offset(ls, &w, idx, w.nd);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = off;
  st->args[2] = v;
  ls->cur = save;
}

/* np.eye: element [i, j] of 2-D t is 1 where j - i == k, else 0, in one
 * pass (no separate diagonal loop over a zeroed array). */
static void eye_fill(lstate *ls, int32_t t, asc__irval k) {
  asc__lview w;
  asc__irval idx[2], off, v;
  asc__irblock *save;
  asc__irins *st;
  int dt = ls->f->regs[t].ty.dtype;
  asc__lower_whole_tensor(ls, t, &w);
  save = asc__lower_open_nest(ls, w.shape, 2, idx);
  off = asc__lower_elem_offset(ls, &w, idx, 2);
  v = conv(ls,
           op2(ls, ASC_IR_EQ, ascInt64,
               op2(ls, ASC_IR_SUB, ascInt64, idx[1], idx[0]), k),
           dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = off;
  st->args[2] = v;
  ls->cur = save;
}

/* The extents of a shape argument: n, (n, m) or a.shape. */
static void shape_vals(lstate *ls, const asc__ast_expr *s, int nd,
                       asc__irval *shape) {
  asc__type *t = ty(s);
  if (t != NULL && t->kind == ASC_TY_TUPLE) {
    asc__lower_agg(ls, s, t, shape);
    for (int k = 0; k < nd; k++)
      shape[k] = conv(ls, shape[k], ascInt64);
  } else {
    shape[0] = conv(ls, asc__lower_expr(ls, s), ascInt64);
  }
}

static asc__irval flt(lstate *ls, const asc__ast_expr *e) {
  return conv(ls, asc__lower_expr(ls, e), ascFloat64);
}

/* np.arange(start, stop, step): numpy's length, ceil((stop - start) /
 * step), and start + i * step. */
static int32_t arange(lstate *ls, const asc__ast_expr *e, int dt) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int na = e->u.call.nrargs;
  bool one = na < 2 || a[1] == NULL;
  bool fl = asc__dt_is_float(dt);
  int wt = fl ? ascFloat64 : ascInt64;
  asc__irval start = one ? asc__irv_int(ascInt64, 0) : asc__lower_expr(ls, a[0]);
  asc__irval stop = asc__lower_expr(ls, one ? a[0] : a[1]);
  asc__irval step = na > 2 && a[2] ? asc__lower_expr(ls, a[2])
                                   : asc__irv_int(ascInt64, 1);
  asc__irval n, idx[1], v;
  asc__irblock *save;
  asc__irins *st;
  int32_t r;
  start = conv(ls, start, wt);
  stop = conv(ls, stop, wt);
  step = conv(ls, step, wt);
  asc__lower_raise_if(ls,
                      op2(ls, ASC_IR_EQ, wt, step,
                          fl ? asc__irv_float(ascFloat64, 0.0) : i64(0)),
                      ASC_KEXC_ZERO_DIVISION_ERROR, "arange: the step is zero",
                      i64(0), i64(0));
  if (fl) {
    asc__irval q = op2(ls, ASC_IR_DIV, ascFloat64,
                       op2(ls, ASC_IR_SUB, ascFloat64, stop, start), step);
    int32_t c = newreg(ls, ascFloat64, NULL);
    asc__irins *ci = emit(ls, ASC_IR_CALL, c, 1);
    ci->aux = ASC_INTR_CEIL;
    ci->args[0] = q;
    asc__lower_raise_if(ls,
                        op1(ls, ASC_IR_NOT, ascBool,
                            op2(ls, ASC_IR_LT, ascFloat64, asc__irv_reg(c),
                                asc__irv_float(ascFloat64, 9.2e18))),
                        ASC_KEXC_VALUE_ERROR,
                        "arange: the length is not finite", i64(0), i64(0));
    n = conv(ls, asc__irv_reg(c), ascInt64);
  } else {
    /* ceil(d / s) == -((-d) // s) with Python's floor division */
    asc__irval d = op2(ls, ASC_IR_SUB, ascInt64, stop, start);
    n = op1(ls, ASC_IR_NEG, ascInt64,
            op2(ls, ASC_IR_FLOORDIV, ascInt64,
                op1(ls, ASC_IR_NEG, ascInt64, d), step));
  }
  n = op2(ls, ASC_IR_MAX, ascInt64, n, i64(0));
  r = asc__lower_alloc_array(ls, dt, 1, &n);
  save = asc__lower_open_nest(ls, &n, 1, idx);
  v = op2(ls, ASC_IR_ADD, wt, start,
          op2(ls, ASC_IR_MUL, wt, conv(ls, idx[0], wt), step));
  v = conv(ls, v, dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(r);
  st->args[1] = idx[0];
  st->args[2] = v;
  ls->cur = save;
  return r;
}

/* np.linspace(start, stop, num=50, endpoint=True): start + i * step,
 * and stop itself last when endpoint (numpy's). */
static int32_t linspace(lstate *ls, const asc__ast_expr *e, int dt) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int na = e->u.call.nrargs;
  asc__irval start = flt(ls, a[0]), stop = flt(ls, a[1]);
  asc__irval num = na > 2 && a[2] ? conv(ls, asc__lower_expr(ls, a[2]),
                                         ascInt64)
                                  : i64(50);
  asc__irval endp = na > 3 && a[3] ? truthy(ls, asc__lower_expr(ls, a[3]))
                                   : asc__irv_int(ascBool, 1);
  asc__irval div, step, idx[1], v, last;
  asc__irblock *save;
  asc__irins *st, *ifi;
  int32_t r;
  asc__lower_raise_if(ls, op2(ls, ASC_IR_LT, ascInt64, num, i64(0)),
                      ASC_KEXC_VALUE_ERROR,
                      "Number of samples, {}, must be non-negative.", num,
                      i64(0));
  div = sel(ls, endp, op2(ls, ASC_IR_SUB, ascInt64, num, i64(1)), num);
  step = op2(ls, ASC_IR_DIV, ascFloat64,
             op2(ls, ASC_IR_SUB, ascFloat64, stop, start),
             conv(ls, op2(ls, ASC_IR_MAX, ascInt64, div, i64(1)),
                  ascFloat64));
  r = asc__lower_alloc_array(ls, dt, 1, &num);
  save = asc__lower_open_nest(ls, &num, 1, idx);
  v = op2(ls, ASC_IR_ADD, ascFloat64, start,
          op2(ls, ASC_IR_MUL, ascFloat64, conv(ls, idx[0], ascFloat64),
              step));
  v = conv(ls, v, dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(r);
  st->args[1] = idx[0];
  st->args[2] = v;
  ls->cur = save;
  last = op2(ls, ASC_IR_AND, ascBool, endp,
             op2(ls, ASC_IR_GT, ascInt64, num, i64(1)));
  ifi = emit(ls, ASC_IR_IF, -1, 1);
  ifi->args[0] = last;
  save = ls->cur;
  ls->cur = &ifi->body[0];
  v = conv(ls, stop, dt);
  last = op2(ls, ASC_IR_SUB, ascInt64, num, i64(1));
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(r);
  st->args[1] = last;
  st->args[2] = v;
  ls->cur = save;
  return r;
}

/* The operands of a matrix product. */
static void product_operands(const asc__ast_expr *e, const asc__ast_expr **x,
                             const asc__ast_expr **y) {
  if (e->kind == ASC_EXPR_BINARY) {
    *x = e->u.binary.lhs;
    *y = e->u.binary.rhs;
  } else {
    *x = e->u.call.rargs[0];
    *y = e->u.call.rargs[1];
  }
}

/* x @ y with x and y 1-D or 2-D, not both 1-D: a new array, each element
 * a sum over the shared axis in C order (small floats summed in float64,
 * as the reductions are; docs/arrays.md).  x = s * a (a number times an
 * array of the product's float dtype) is a BLAS call's alpha: a is not
 * scaled first; the loops scale each element of a as numpy's s * a. */
static int32_t matmul_into(lstate *ls, const asc__ast_expr *e, int32_t into);

static int32_t matmul(lstate *ls, const asc__ast_expr *e) {
  for (int k = 0; k < ls->dots.nmat; k++)
    if (ls->dots.mat[k] == e)
      return ls->dots.mat_r[k]; /* made with the statement's other product */
  return matmul_into(ls, e, -1);
}

/* matmul, into the new array `into` of the product's shape when it is
 * not -1. */
static int32_t matmul_into(lstate *ls, const asc__ast_expr *e, int32_t into) {
  const asc__ast_expr *x, *y, *scale = NULL;
  asc__lview A, B;
  asc__irval shape[2], idx[2], pidx[1], ia[2], ib[2], k, kb, v, sv = i64(0);
  asc__irval xa;
  asc__irblock *psave, *outer;
  asc__irins *st;
  int dt = ty(e)->dtype, nd = ty(e)->ndim;
  int adt = is_small_float(dt) ? ascFloat64 : dt;
  int32_t r, acc, la, lb, mark;
  product_operands(e, &x, &y);
  if (ty(x)->ndim > 2 || ty(y)->ndim > 2)
    return asc__lower_matmul_nd(ls, e, x, y);
  if ((int)ty(y)->dtype == dt && asc__lower_blas_peel(x, dt, &scale, &x))
    sv = conv(ls, asc__lower_expr(ls, scale), dt);
  mark = ls->f->nregs;
  asc__lower_view(ls, x, &A);
  asc__lower_view(ls, y, &B);
  k = A.shape[A.nd - 1];
  kb = B.shape[0];
  asc__lower_matmul_check(ls, k, kb);
  nd = 0;
  if (A.nd == 2)
    shape[nd++] = A.shape[0];
  if (B.nd == 2)
    shape[nd++] = B.shape[1];
  r = into >= 0 ? into : asc__lower_alloc_array(ls, dt, nd, shape);
  outer = ls->cur;
  if ((dt == ascFloat32 || dt == ascFloat64) &&
      ls->f->regs[A.t].ty.dtype == dt && ls->f->regs[B.t].ty.dtype == dt) {
    /* the runtime's BLAS first (asc_krt.gemm_ab); the loops below only
     * when it did nothing (docs/arrays.md); alpha 0 is the loops' too
     * (BLAS would not read a and b: numpy's 0 * nan is nan) */
    asc__irval alpha = asc__irv_float(ascFloat64, 1.0), go;
    asc__irins *g;
    go = asc__irv_int(ascBool, 1);
    if (scale != NULL) {
      alpha = conv(ls, sv, ascFloat64);
      go = op2(ls, ASC_IR_NE, ascFloat64, alpha,
               asc__irv_float(ascFloat64, 0.0));
    }
    g = asc__lower_gemm(ls, r, i64(0), B.nd == 2 ? B.shape[1] : i64(1),
                        i64(1), &A, &B, alpha, asc__irv_float(ascFloat64, 0.0),
                        go);
    if (scale != NULL)
      g->note = asc__arena_printf(ls->c,
                                  "blas: the product at line %d takes its "
                                  "left operand's scale as alpha (no pass "
                                  "scales the operand)",
                                  e->loc.line);
    (void)asc__lower_when_failed(ls, g);
  }
  (void)asc__lower_open_nest(ls, shape, nd, idx);
  acc = newreg(ls, adt, "mm.acc");
  mov(ls, acc, conv(ls, i64(0), adt));
  psave = asc__lower_open_nest(ls, &k, 1, pidx);
  if (A.nd == 2) {
    ia[0] = idx[0];
    ia[1] = pidx[0];
  } else {
    ia[0] = pidx[0];
  }
  ib[0] = pidx[0];
  if (B.nd == 2)
    ib[1] = idx[nd - 1];
  {
    asc__irval oa = asc__lower_elem_offset(ls, &A, ia, A.nd);
    asc__irval ob = asc__lower_elem_offset(ls, &B, ib, B.nd);
    asc__irins *l;
    la = newreg(ls, ls->f->regs[A.t].ty.dtype, NULL);
    l = emit(ls, ASC_IR_LOAD, la, 2);
    l->args[0] = asc__irv_reg(A.t);
    l->args[1] = oa;
    lb = newreg(ls, ls->f->regs[B.t].ty.dtype, NULL);
    l = emit(ls, ASC_IR_LOAD, lb, 2);
    l->args[0] = asc__irv_reg(B.t);
    l->args[1] = ob;
    xa = asc__irv_reg(la);
    if (scale != NULL) /* s * a's element, as numpy's s * a stores it */
      xa = op2(ls, ASC_IR_MUL, dt, sv, conv(ls, xa, dt));
  }
  mov(ls, acc,
      op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
          op2(ls, ASC_IR_MUL, adt, conv(ls, xa, adt),
              conv(ls, asc__irv_reg(lb), adt))));
  ls->cur = psave;
  v = conv(ls, asc__irv_reg(acc), dt);
  {
    asc__lview w;
    asc__irval off;
    asc__lower_whole_tensor(ls, r, &w);
    off = asc__lower_elem_offset(ls, &w, idx, nd);
    st = emit(ls, ASC_IR_STORE, -1, 3);
    st->args[0] = asc__irv_reg(r);
    st->args[1] = off;
    st->args[2] = v;
  }
  ls->cur = outer;
  free_operand(ls, A.t, mark);
  if (B.t != A.t)
    free_operand(ls, B.t, mark);
  return r;
}

/* ------------------------------- a @ p and r @ a: one pass over a */

/* Is e `a @ v` (side 0) or `v @ a` (side 1) of a float matrix name a and
 * a vector name v of its dtype?  *a is the matrix's node. */
static bool mv_product(const asc__ast_expr *e, int *side,
                       const asc__ast_expr **a) {
  const asc__ast_expr *l, *r;
  int dt;
  if (e->kind != ASC_EXPR_BINARY || e->u.binary.op != ASC_BIN_MATMUL ||
      !is_tensor(e) || ty(e)->ndim != 1)
    return false;
  l = e->u.binary.lhs;
  r = e->u.binary.rhs;
  dt = ty(e)->dtype;
  if ((dt != ascFloat32 && dt != ascFloat64) || l->kind != ASC_EXPR_NAME ||
      r->kind != ASC_EXPR_NAME || !is_tensor(l) || !is_tensor(r) ||
      (int)ty(l)->dtype != dt || (int)ty(r)->dtype != dt)
    return false;
  if (ty(l)->ndim == 2 && ty(r)->ndim == 1) {
    *side = 0;
    *a = l;
  } else if (ty(l)->ndim == 1 && ty(r)->ndim == 2) {
    *side = 1;
    *a = r;
  } else {
    return false;
  }
  return true;
}

/* The products of e that e evaluates whatever the values (as
 * lower_reduce.c's find_dots): the first of each side, prod[side]. */
static void find_mv(const asc__ast_expr *e, const asc__ast_expr **prod,
                    const asc__ast_expr **mat) {
  const asc__ast_expr *a;
  int side;
  if (e == NULL)
    return;
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (int k = 0; k < e->u.tuple.n; k++)
      find_mv(e->u.tuple.elts[k], prod, mat);
    return;
  case ASC_EXPR_UNARY:
    find_mv(e->u.unary.operand, prod, mat);
    return;
  case ASC_EXPR_BINARY:
    if (mv_product(e, &side, &a)) {
      if (prod[side] == NULL) {
        prod[side] = e;
        mat[side] = a;
      }
      return;
    }
    find_mv(e->u.binary.lhs, prod, mat);
    find_mv(e->u.binary.rhs, prod, mat);
    return;
  case ASC_EXPR_CALL:
    for (int k = 0; k < e->u.call.nrargs; k++)
      find_mv(e->u.call.rargs[k], prod, mat);
    return;
  default:
    return;
  }
}

/* Under ok, status = asc_krt.linalg gemv2 (flags) of ops: a, p, r, q, s,
 * the IF carrying note; returns the IF run when the call did nothing,
 * whose body the caller fills. */
static asc__irins *gemv2_call(lstate *ls, const asc__lview *ops,
                              asc__irval ok, int64_t flags,
                              const char *note) {
  asc__irins *call, *when;
  asc__irblock *save = ls->cur;
  int32_t st = newreg(ls, ascInt32, "gemv2");
  mov(ls, st, asc__irv_int(ascInt32, 1));
  when = emit(ls, ASC_IR_IF, -1, 1);
  when->args[0] = ok;
  when->note = note;
  ls->cur = &when->body[0];
  call = emit(ls, ASC_IR_LINALG, st, 3 + 4 * 5);
  call->aux = ASC_KLINALG_GEMV2;
  call->args[0] = ops[0].shape[0];
  call->args[1] = ops[0].shape[1];
  call->args[2] = i64(flags);
  for (int j = 0; j < 5; j++) {
    call->args[3 + 4 * j] = asc__irv_reg(ops[j].t);
    call->args[4 + 4 * j] = ops[j].off;
    call->args[5 + 4 * j] = ops[j].stride[0];
    call->args[6 + 4 * j] = j == 0 ? ops[0].stride[1] : i64(0);
  }
  ls->cur = save;
  ok = op2(ls, ASC_IR_NE, ascInt32, asc__irv_reg(st),
           asc__irv_int(ascInt32, 0));
  when = emit(ls, ASC_IR_IF, -1, 1);
  when->args[0] = ok;
  return when;
}

/* Is e `a.T` of the matrix name of m (a side-0 product `a @ p`)? */
static bool transpose_of(const asc__ast_expr *e, const asc__ast_expr *m) {
  const asc__ast_expr *a = m->u.binary.lhs;
  return e->kind == ASC_EXPR_ATTR && strcmp(e->u.attr.attr, "T") == 0 &&
         e->u.attr.value->kind == ASC_EXPR_NAME &&
         e->u.attr.value->u.name.sym == a->u.name.sym &&
         a->u.name.sym != NULL;
}

/* The first `(a @ p) @ a` or `a.T @ (a @ p)` of e that e evaluates
 * whatever the values (as find_mv), a and p float names; *inner is its
 * `a @ p`. */
static const asc__ast_expr *find_chain(const asc__ast_expr *e,
                                       const asc__ast_expr **inner) {
  const asc__ast_expr *a, *found = NULL;
  int side;
  if (e == NULL)
    return NULL;
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (int k = 0; k < e->u.tuple.n && found == NULL; k++)
      found = find_chain(e->u.tuple.elts[k], inner);
    return found;
  case ASC_EXPR_UNARY:
    return find_chain(e->u.unary.operand, inner);
  case ASC_EXPR_BINARY: {
    const asc__ast_expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    if (e->u.binary.op == ASC_BIN_MATMUL && is_tensor(e) &&
        ty(e)->ndim == 1) {
      if (mv_product(l, &side, &a) && side == 0 &&
          r->kind == ASC_EXPR_NAME && r->u.name.sym == a->u.name.sym &&
          a->u.name.sym != NULL && ty(r)->dtype == ty(e)->dtype) {
        *inner = l;
        return e;
      }
      if (mv_product(r, &side, &a) && side == 0 && transpose_of(l, r) &&
          ty(l)->dtype == ty(e)->dtype) {
        *inner = r;
        return e;
      }
    }
    found = find_chain(l, inner);
    return found != NULL ? found : find_chain(r, inner);
  }
  case ASC_EXPR_CALL:
    for (int k = 0; k < e->u.call.nrargs && found == NULL; k++)
      found = find_chain(e->u.call.rargs[k], inner);
    return found;
  default:
    return NULL;
  }
}

/* `(a @ p) @ a` (atax) as one pass over a: gemv2 chained, q = a @ p a
 * new array the call writes and s the product's result. */
static void mv_chain_begin(lstate *ls, const asc__ast_expr *v) {
  const asc__ast_expr *inner = NULL, *e = find_chain(v, &inner);
  asc__lview ops[5];
  asc__irins *when;
  asc__irblock *save;
  int32_t q, s;
  int dt;
  if (e == NULL)
    return;
  dt = ty(e)->dtype;
  asc__lower_view(ls, inner->u.binary.lhs, &ops[0]);
  asc__lower_view(ls, inner->u.binary.rhs, &ops[1]);
  asc__lower_matmul_check(ls, ops[0].shape[1], ops[1].shape[0]);
  q = asc__lower_alloc_array(ls, dt, 1, &ops[0].shape[0]);
  s = asc__lower_alloc_array(ls, dt, 1, &ops[0].shape[1]);
  asc__lower_whole_tensor(ls, q, &ops[3]);
  asc__lower_whole_tensor(ls, s, &ops[4]);
  ops[2] = ops[3]; /* not read */
  when = gemv2_call(
      ls, ops, op2(ls, ASC_IR_EQ, ascInt64, ops[0].stride[1], i64(1)),
      ASC_KGEMV2_CHAIN,
      asc__arena_printf(ls->c,
                        "blas: the product of a product at line %d ((a @ "
                        "p) @ a) is one pass over the matrix (asc_krt."
                        "linalg gemv2, chained); two products when the "
                        "call does nothing",
                        ls->line));
  save = ls->cur;
  ls->cur = &when->body[0];
  (void)matmul_into(ls, e, s);
  ls->cur = save;
  ls->dots.mat[0] = e;
  ls->dots.mat_r[0] = s;
  ls->dots.nmat = 1;
}

void asc__lower_mv_pair_begin(lstate *ls, const asc__ast_expr *v) {
  const asc__ast_expr *prod[2] = {NULL, NULL}, *mat[2] = {NULL, NULL};
  asc__lview ops[5];
  asc__irins *when;
  asc__irblock *save;
  int32_t out[2];
  int dt, first;
  if (ls->ew != NULL || !asc__lower_harmless(v))
    return;
  find_mv(v, prod, mat);
  if (prod[0] != NULL && prod[1] == NULL) {
    mv_chain_begin(ls, v);
    return;
  }
  if (prod[0] == NULL || prod[1] == NULL ||
      mat[0]->u.name.sym != mat[1]->u.name.sym || mat[0]->u.name.sym == NULL ||
      ty(prod[0])->dtype != ty(prod[1])->dtype)
    return;
  dt = ty(prod[0])->dtype;
  /* operands: a, p (of a @ p), r (of r @ a); checked in the source's
   * order, as each product alone checks them */
  first = prod[0]->loc.line < prod[1]->loc.line ||
                  (prod[0]->loc.line == prod[1]->loc.line &&
                   prod[0]->loc.col <= prod[1]->loc.col)
              ? 0
              : 1;
  for (int j = 0; j < 2; j++) {
    int side = j == 0 ? first : 1 - first;
    const asc__ast_expr *e = prod[side];
    if (side == 0) {
      asc__lower_view(ls, e->u.binary.lhs, &ops[0]);
      asc__lower_view(ls, e->u.binary.rhs, &ops[1]);
      asc__lower_matmul_check(ls, ops[0].shape[1], ops[1].shape[0]);
    } else {
      asc__lview a2;
      asc__lower_view(ls, e->u.binary.lhs, &ops[2]);
      asc__lower_view(ls, e->u.binary.rhs, &a2);
      asc__lower_matmul_check(ls, ops[2].shape[0], a2.shape[0]);
    }
  }
  out[0] = asc__lower_alloc_array(ls, dt, 1, &ops[0].shape[0]);
  out[1] = asc__lower_alloc_array(ls, dt, 1, &ops[0].shape[1]);
  asc__lower_whole_tensor(ls, out[0], &ops[3]);
  asc__lower_whole_tensor(ls, out[1], &ops[4]);
  /* a's rows contiguous: the call's layout (else each product's own) */
  when = gemv2_call(
      ls, ops, op2(ls, ASC_IR_EQ, ascInt64, ops[0].stride[1], i64(1)), 0,
      asc__arena_printf(ls->c,
                        "blas: the products at line %d of one matrix and "
                        "two vectors (a @ p, r @ a) are one pass over the "
                        "matrix (asc_krt.linalg gemv2); each is its own "
                        "call when the call does nothing",
                        ls->line));
  save = ls->cur;
  ls->cur = &when->body[0];
  (void)matmul_into(ls, prod[first], out[first]);
  (void)matmul_into(ls, prod[1 - first], out[1 - first]);
  ls->cur = save;
  ls->dots.mat[0] = prod[0];
  ls->dots.mat[1] = prod[1];
  ls->dots.mat_r[0] = out[0];
  ls->dots.mat_r[1] = out[1];
  ls->dots.nmat = 2;
}

/* `x += a @ v` or `x += v @ a`: its product (side, matrix node) when x is
 * a 1-D name of the product's dtype. */
static bool mv_update(const asc__ast_stmt *s, int *side,
                      const asc__ast_expr **a) {
  const asc__ast_expr *x;
  if (s->kind != ASC_STMT_AUGASSIGN || s->u.aug.op != ASC_BIN_ADD)
    return false;
  x = s->u.aug.target;
  return x->kind == ASC_EXPR_NAME && is_tensor(x) && ty(x)->ndim == 1 &&
         mv_product(s->u.aug.value, side, a) &&
         ty(x)->dtype == ty(s->u.aug.value)->dtype;
}

asc__irins *asc__lower_mv_stmts(lstate *ls, const asc__ast_stmt *s,
                                const asc__ast_stmt *t) {
  const asc__ast_stmt *st2[2] = {s, t};
  const asc__ast_expr *mat[2];
  int side[2];
  asc__lview ops[5], x[2];
  asc__irval ok;
  if (ls->ew != NULL || !mv_update(s, &side[0], &mat[0]) ||
      !mv_update(t, &side[1], &mat[1]) || side[0] == side[1] ||
      mat[0]->u.name.sym == NULL ||
      mat[0]->u.name.sym != mat[1]->u.name.sym ||
      ty(s->u.aug.value)->dtype != ty(t->u.aug.value)->dtype)
    return NULL;
  ls->line = s->loc.line;
  /* ops: a, p, r, q (the target of a @ p), s (of r @ a) */
  for (int j = 0; j < 2; j++) {
    const asc__ast_expr *e = st2[j]->u.aug.value;
    asc__lower_view(ls, st2[j]->u.aug.target, &x[side[j]]);
    if (side[j] == 0) {
      asc__lower_view(ls, e->u.binary.lhs, &ops[0]);
      asc__lower_view(ls, e->u.binary.rhs, &ops[1]);
    } else {
      asc__lower_view(ls, e->u.binary.lhs, &ops[2]);
    }
  }
  ops[3] = x[0];
  ops[4] = x[1];
  /* the call takes the shapes that need no broadcasting and rows that are
   * contiguous; the statements check and broadcast the others */
  ok = op2(ls, ASC_IR_EQ, ascInt64, ops[0].stride[1], i64(1));
  ok = op2(ls, ASC_IR_AND, ascBool, ok,
           op2(ls, ASC_IR_EQ, ascInt64, ops[1].shape[0], ops[0].shape[1]));
  ok = op2(ls, ASC_IR_AND, ascBool, ok,
           op2(ls, ASC_IR_EQ, ascInt64, ops[2].shape[0], ops[0].shape[0]));
  ok = op2(ls, ASC_IR_AND, ascBool, ok,
           op2(ls, ASC_IR_EQ, ascInt64, ops[3].shape[0], ops[0].shape[0]));
  ok = op2(ls, ASC_IR_AND, ascBool, ok,
           op2(ls, ASC_IR_EQ, ascInt64, ops[4].shape[0], ops[0].shape[1]));
  return gemv2_call(
      ls, ops, ok, ASC_KGEMV2_ADD_Q | ASC_KGEMV2_ADD_S,
      asc__arena_printf(ls->c,
                        "blas: the statements at lines %d and %d (x += a @ "
                        "p, y += r @ a of one matrix) are one pass over the "
                        "matrix (asc_krt.linalg gemv2, accumulating); the "
                        "statements run when the call does nothing",
                        s->loc.line, t->loc.line));
}

const asc__ast_expr *asc__lower_dot_call(lstate *ls, const asc__ast_expr *at,
                                         const asc__ast_expr *x,
                                         const asc__ast_expr *y) {
  asc__ast_expr *call = asc__arena_alloc(ls->c, sizeof *call);
  asc__ast_expr **args = asc__arena_alloc(ls->c, sizeof *args * 2);
  *call = *at;
  call->kind = ASC_EXPR_CALL;
  memset(&call->u, 0, sizeof call->u);
  args[0] = (asc__ast_expr *)x;
  args[1] = (asc__ast_expr *)y;
  call->u.call.args = args;
  call->u.call.nargs = 2;
  call->u.call.rargs = args;
  call->u.call.nrargs = 2;
  call->u.call.builtin = asc__builtin_get(ASC_BI_NP_DOT);
  return call;
}

asc__irval asc__lower_dot(lstate *ls, const asc__ast_expr *e) {
  /* np.dot(x, y) of two vectors, as the reduction lowers it */
  if (is_tensor(e))
    return asc__irv_reg(matmul(ls, e));
  return asc__lower_reduce(
      ls, asc__lower_dot_call(ls, e, e->u.binary.lhs, e->u.binary.rhs));
}

/* The C-order offsets of an array of shape[0..nd). */
void asc__lower_c_strides(lstate *ls, const asc__irval *shape, int nd,
                          asc__irval *cs) {
  asc__irval run = i64(1);
  for (int k = nd - 1; k >= 0; k--) {
    cs[k] = run;
    run = mul(ls, run, shape[k]);
  }
}

/* The strides of the C-order array t that the lowering just made, read
 * from it (`stride %t, k`, the last 1): the same offsets as
 * asc__lower_c_strides, in the form the dependence test splits into axes,
 * so that a nest storing into t can run in parallel. */
void asc__lower_own_cstrides(lstate *ls, int32_t t, int nd, asc__irval *cs) {
  for (int k = 0; k < nd; k++) {
    int32_t d;
    asc__irins *i;
    if (k == nd - 1) {
      cs[k] = i64(1);
      break;
    }
    d = newreg(ls, ascInt64, NULL);
    i = emit(ls, ASC_IR_STRIDE, d, 1);
    i->args[0] = asc__irv_reg(t);
    i->aux = k;
    cs[k] = asc__irv_reg(d);
  }
}

asc__irval asc__lower_load_at(lstate *ls, const asc__lview *v,
                              const asc__irval *idx, int nd) {
  asc__irval off = asc__lower_elem_offset(ls, v, idx, nd);
  int32_t d = newreg(ls, ls->f->regs[v->t].ty.dtype, NULL);
  asc__irins *l = emit(ls, ASC_IR_LOAD, d, 2);
  l->args[0] = asc__irv_reg(v->t);
  l->args[1] = off;
  return asc__irv_reg(d);
}

void asc__lower_store_at(lstate *ls, int32_t t, asc__irval off, asc__irval v) {
  asc__irins *st;
  v = conv(ls, v, ls->f->regs[t].ty.dtype); /* before the store */
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(t);
  st->args[1] = off;
  st->args[2] = v;
}

asc__irval asc__lower_load_off(lstate *ls, int32_t t, asc__irval off) {
  int32_t d = newreg(ls, ls->f->regs[t].ty.dtype, NULL);
  asc__irins *ld = emit(ls, ASC_IR_LOAD, d, 2);
  ld->args[0] = asc__irv_reg(t);
  ld->args[1] = off;
  return asc__irv_reg(d);
}

asc__irval asc__lower_dot_idx(lstate *ls, const asc__irval *idx,
                              const asc__irval *cs, int nd) {
  asc__irval off = i64(0);
  for (int k = 0; k < nd; k++)
    off = add(ls, off, mul(ls, idx[k], cs[k]));
  return off;
}

/* The start of np.cumsum's running sum in dt: -0.0 for floating point,
 * the identity of IEEE addition (-0.0 + x is x for every x, where 0.0 +
 * -0.0 is 0.0), so the first sum is the first element exactly, as numpy
 * stores it; a complex start is -0.0 in both parts. */
static asc__irval cumsum_start(lstate *ls, int dt) {
  if (asc__dt_is_complex(dt))
    return asc__lower_cmplx(ls, dt, asc__irv_float(ascFloat64, -0.0),
                            asc__irv_float(ascFloat64, -0.0));
  if (asc__dt_is_float(dt))
    return asc__irv_float(dt, -0.0);
  return conv(ls, i64(0), dt);
}

/* acc = acc op x, the next running sum (op ADD), product (MUL) or
 * maximum (PMAX: NaN wins, as numpy's maximum; PMIN); other than a
 * sum's, the first element, where pos is 0, is x itself (numpy's
 * accumulate: (1+0j) * z is not z when a part of z is infinite). */
static void running(lstate *ls, int32_t acc, int op, int dt, asc__irval x,
                    asc__irval pos) {
  asc__irval v = op2(ls, op, dt, asc__irv_reg(acc), x);
  if (op != ASC_IR_ADD)
    v = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, pos, i64(0)), x, v);
  mov(ls, acc, v);
}

/* A new 1-D array of dt holding the elements of view in in C order
 * (ravel's copy, flatten); with running sums, products, maxima or
 * minima when op is ASC_IR_ADD, MUL, PMAX or PMIN (np.cumsum, np.cumprod,
 * np.maximum.accumulate ...), else op is -1. */
static int32_t flat_copy(lstate *ls, const asc__lview *in, int dt, int op) {
  asc__irval n = asc__lower_view_size(ls, in), idx[ASC_MAX_DIMS];
  asc__irval cs[ASC_MAX_DIMS], x;
  asc__irblock *save;
  int32_t r = asc__lower_alloc_array(ls, dt, 1, &n), acc = -1;
  asc__lower_c_strides(ls, in->shape, in->nd, cs);
  if (op >= 0) {
    acc = newreg(ls, dt, "cumsum");
    mov(ls, acc, cumsum_start(ls, dt));
  }
  save = asc__lower_open_nest(ls, in->shape, in->nd, idx);
  x = conv(ls, asc__lower_load_at(ls, in, idx, in->nd), dt);
  if (op >= 0) {
    running(ls, acc, op, dt, x,
            op != ASC_IR_ADD ? asc__lower_dot_idx(ls, idx, cs, in->nd)
                             : i64(0));
    x = asc__irv_reg(acc);
  }
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, in->nd), x);
  ls->cur = save;
  return r;
}

/* np.cumsum(a, axis=None) / a.cumsum(axis=k): running sums in the
 * result's dtype, in order along the axis (numpy's order: exact for
 * integers, the same rounding for floats); np.cumprod: running
 * products; np.maximum.accumulate, np.minimum.accumulate (axis 0 when
 * not given, as numpy's): running maxima and minima. */
static int32_t cumsum(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *ax = e->u.call.nrargs > 1 ? e->u.call.rargs[1] : NULL;
  int dt = ty(e)->dtype, axis, id = e->u.call.builtin->id;
  int op = id == ASC_BI_NP_CUMPROD               ? ASC_IR_MUL
           : id == ASC_BI_NP_MAXIMUM_ACCUMULATE ? ASC_IR_PMAX
           : id == ASC_BI_NP_MINIMUM_ACCUMULATE ? ASC_IR_PMIN
                                                 : ASC_IR_ADD;
  asc__lview in;
  asc__irval oshape[ASC_MAX_DIMS], oidx[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irval cs[ASC_MAX_DIMS], iidx[1], x;
  asc__irblock *save;
  int32_t r, acc;
  int64_t k;
  memset(oshape, 0, sizeof oshape); /* gcc -O3 cannot see it filled */
  asc__lower_view(ls, e->u.call.rargs[0], &in);
  if (in.nd == 1 || (op != ASC_IR_PMAX && op != ASC_IR_PMIN &&
                      (ax == NULL || ax->kind == ASC_EXPR_NONE)))
    return flat_copy(ls, &in, dt, op);
  k = ax == NULL ? 0
      : ax->kind == ASC_EXPR_INT ? (int64_t)ax->u.ival
                                 : -(int64_t)ax->u.unary.operand->u.ival;
  axis = (int)(k < 0 ? k + in.nd : k);
  r = asc__lower_alloc_array(ls, dt, in.nd, in.shape);
  asc__lower_own_cstrides(ls, r, in.nd, cs);
  for (int j = 0, q = 0; j < in.nd; j++)
    if (j != axis)
      oshape[q++] = in.shape[j];
  save = asc__lower_open_nest(ls, oshape, in.nd - 1, oidx);
  acc = newreg(ls, dt, "cumsum");
  mov(ls, acc, cumsum_start(ls, dt));
  asc__lower_open_nest(ls, &in.shape[axis], 1, iidx);
  for (int j = 0, q = 0; j < in.nd; j++)
    idx[j] = j == axis ? iidx[0] : oidx[q++];
  x = conv(ls, asc__lower_load_at(ls, &in, idx, in.nd), dt);
  running(ls, acc, op, dt, x, iidx[0]);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, in.nd),
                      asc__irv_reg(acc));
  ls->cur = save;
  return r;
}

/* np.outer(a, b) of 1-D arrays: out[i, j] = a[i] * b[j] in the
 * promoted dtype. */
static int32_t outer(lstate *ls, const asc__ast_expr *e) {
  asc__lview A, B;
  asc__irval shape[2], idx[2], cs[2], x, y;
  asc__irblock *save;
  int dt = ty(e)->dtype;
  int32_t r;
  asc__lower_view(ls, e->u.call.rargs[0], &A);
  asc__lower_view(ls, e->u.call.rargs[1], &B);
  shape[0] = A.shape[0];
  shape[1] = B.shape[0];
  r = asc__lower_alloc_array(ls, dt, 2, shape);
  asc__lower_own_cstrides(ls, r, 2, cs);
  save = asc__lower_open_nest(ls, shape, 2, idx);
  x = conv(ls, asc__lower_load_at(ls, &A, idx, 1), dt);
  y = conv(ls, asc__lower_load_at(ls, &B, idx + 1, 1), dt);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, 2),
                      op2(ls, ASC_IR_MUL, dt, x, y));
  ls->cur = save;
  return r;
}

static int32_t tuple_pick(lstate *ls, const asc__ast_expr *e);

/* A new array holding e: a creation call or an array expression. */
int32_t asc__lower_make_array(lstate *ls, const asc__ast_expr *e) {
  asc__type *t = ty(e);
  const asc__builtin *b =
      e->kind == ASC_EXPR_CALL ? e->u.call.builtin : NULL;
  asc__ast_expr *const *a = b ? e->u.call.rargs : NULL;
  asc__irval shape[ASC_MAX_DIMS], v = i64(0);
  asc__lview src;
  asc__ewctx ew;
  int32_t r;
  int dt = t->dtype, nd = t->ndim;
  if (asc__lower_is_matmul(e))
    return matmul(ls, e);
  if (asc__lower_is_fancy(e))
    return asc__lower_gather(ls, e);
  if (asc__lower_is_grid(e))
    return asc__lower_grid(ls, e);
  if (asc__lower_is_made_subscript(e))
    return tuple_pick(ls, e);
  if (b != NULL && e->u.call.callee == NULL) {
    switch (b->id) {
    case ASC_BI_NP_RAVEL:
    case ASC_BI_NP_FLATTEN:
      asc__lower_view(ls, a[0], &src);
      return flat_copy(ls, &src, dt, -1);
    case ASC_BI_NP_CUMSUM:
    case ASC_BI_NP_CUMPROD:
    case ASC_BI_NP_MAXIMUM_ACCUMULATE:
    case ASC_BI_NP_MINIMUM_ACCUMULATE:
      return cumsum(ls, e);
    case ASC_BI_NP_OUTER:
      return outer(ls, e);
    default:
      if (asc__builtin_is_numpy_func(b->id))
        return asc__lower_numpy(ls, e);
      break;
    }
  }
  if (b == NULL || !asc__builtin_is_creation(b->id)) {
    memset(&ew, 0, sizeof ew);
    ew.rows = true; /* stored by one loop nest */
    asc__lower_collect(ls, &ew, e);
    return asc__lower_materialize_ew(ls, e, &ew);
  }
  switch (b->id) {
  case ASC_BI_NP_ARANGE:
    return arange(ls, e, dt);
  case ASC_BI_NP_LINSPACE:
    return linspace(ls, e, dt);
  case ASC_BI_NP_EMPTY:
  case ASC_BI_NP_ZEROS:
  case ASC_BI_NP_ONES:
  case ASC_BI_NP_FULL:
    shape_vals(ls, a[0], nd, shape);
    if (b->id == ASC_BI_NP_FULL)
      v = asc__lower_expr(ls, a[1]);
    break;
  case ASC_BI_NP_EYE:
  case ASC_BI_NP_IDENTITY:
    shape[0] = conv(ls, asc__lower_expr(ls, a[0]), ascInt64);
    shape[1] = b->id == ASC_BI_NP_EYE && a[1] != NULL &&
                       a[1]->kind != ASC_EXPR_NONE
                   ? conv(ls, asc__lower_expr(ls, a[1]), ascInt64)
                   : shape[0];
    if (b->id == ASC_BI_NP_EYE && a[2] != NULL)
      v = conv(ls, asc__lower_expr(ls, a[2]), ascInt64);
    break;
  default: /* *_like, copy, astype: the shape of an array */
    asc__lower_view(ls, a[0], &src);
    for (int k = 0; k < nd; k++)
      shape[k] = src.shape[k];
    if (b->id == ASC_BI_NP_FULL_LIKE)
      v = asc__lower_expr(ls, a[1]);
    break;
  }
  r = asc__lower_alloc_array(ls, dt, nd, shape);
  switch (b->id) {
  case ASC_BI_NP_ZEROS:
  case ASC_BI_NP_ZEROS_LIKE:
    fill(ls, r, i64(0));
    break;
  case ASC_BI_NP_ONES:
  case ASC_BI_NP_ONES_LIKE:
    fill(ls, r, i64(1));
    break;
  case ASC_BI_NP_FULL:
  case ASC_BI_NP_FULL_LIKE:
    fill(ls, r, v);
    break;
  case ASC_BI_NP_EYE:
  case ASC_BI_NP_IDENTITY:
    eye_fill(ls, r, v);
    break;
  case ASC_BI_NP_COPY:
  case ASC_BI_NP_ASTYPE: {
    asc__lview w;
    asc__lower_whole_tensor(ls, r, &w);
    asc__lower_store_nest(ls, NULL, &w, a[0], -1);
    break;
  }
  default: /* empty: as it comes */
    break;
  }
  return r;
}

bool asc__lower_is_new_array(lstate *ls, const asc__ast_expr *e) {
  const asc__builtin *b;
  if (!is_tensor(e))
    return false;
  switch (e->kind) {
  case ASC_EXPR_BINARY:
  case ASC_EXPR_UNARY:
  case ASC_EXPR_COMPARE:
    return true;
  case ASC_EXPR_SUBSCRIPT:
    return asc__lower_is_fancy(e) || asc__lower_is_made_subscript(e);
  case ASC_EXPR_CALL:
    b = e->u.call.builtin;
    if (b == NULL && e->u.call.callee != NULL)
      return true; /* a helper's array, copied out of it */
    return b != NULL && e->u.call.callee == NULL &&
           (asc__builtin_is_creation(b->id) ||
            asc__builtin_is_reduction(b->id) || b->id == ASC_BI_NP_DOT ||
            (asc__lower_makes_array(b->id) && !asc__lower_is_view(ls, e)) ||
            asc__builtin_is_elementwise(e));
  default:
    return false;
  }
}

/* The register of the name target binds to arrays the kernel creates:
 * one per name, so that every use of the name, in loops too, reads the
 * array it holds now. */
static int32_t name_reg(lstate *ls, const asc__ast_expr *target,
                        const asc__type *t) {
  const asc__sym *s = target->u.name.sym;
  int32_t r = asc__lower_lookup(ls, s);
  if (r >= 0) {
    for (int k = 0; k < ls->narr; k++)
      if (ls->arr_regs[k] == r) {
        if (ls->arr_pfors[k] != ls->pfors)
          asc__diag_fatal(ls->c, target->loc,
                          "'%s' holds an array made outside this parallel "
                          "loop; an array made in each iteration needs a "
                          "name of its own",
                          s->name);
        return r;
      }
    asc__diag_fatal(ls->c, target->loc,
                    "'%s' names %s here; a name that holds a new array "
                    "the kernel makes cannot also name another array (use "
                    "another name, or write into it: %s[...] = ...)",
                    s->name,
                    ls->f->regs[r].param ? "a parameter's array"
                                         : "another array",
                    s->name);
  }
  if (asc__lower_sym_view(ls, s) != NULL)
    asc__diag_fatal(ls->c, target->loc,
                    "'%s' names a view here; a name that holds a new "
                    "array the kernel makes cannot also name a view (use "
                    "another name)",
                    s->name);
  r = asc__lower_array_reg(ls, t->dtype, t->ndim, s->name);
  asc__lower_bind(ls, s, r);
  return r;
}

int32_t asc__lower_array_reg(lstate *ls, int dt, int nd, const char *hint) {
  int32_t r = heap_reg(ls, dt, nd, hint);
  ls->arr_regs = asc__arena_grow(ls->c, ls->arr_regs, ls->narr, &ls->caparr,
                                 sizeof *ls->arr_regs, 8);
  ls->arr_pfors = asc__arena_grow(ls->c, ls->arr_pfors, ls->narr,
                                  &ls->caparr2, sizeof *ls->arr_pfors, 8);
  ls->arr_regs[ls->narr] = r;
  ls->arr_pfors[ls->narr] = ls->pfors;
  ls->narr++;
  return r;
}

int32_t asc__lower_result_array(lstate *ls, const asc__ast_expr *e,
                                const int32_t *taken, int ntaken) {
  if (e->kind == ASC_EXPR_NAME && e->u.name.sym != NULL) {
    int32_t r = asc__lower_lookup(ls, e->u.name.sym);
    bool dup = false;
    for (int k = 0; k < ntaken; k++)
      dup |= taken[k] == r;
    for (int k = 0; k < ls->narr && r >= 0 && !dup; k++)
      if (ls->arr_regs[k] == r)
        return r; /* the array the name holds now, handed over */
  }
  return asc__lower_make_array(ls, e);
}

int32_t asc__lower_materialize(lstate *ls, const asc__ast_expr *e) {
  return asc__lower_is_new_array(ls, e) ? asc__lower_make_array(ls, e) : -1;
}

bool asc__lower_new_array(lstate *ls, const asc__ast_expr *target,
                          const asc__ast_expr *value) {
  int32_t tmp;
  if (value == NULL || !asc__lower_is_new_array(ls, value))
    return false;
  tmp = asc__lower_make_array(ls, value);
  asc__lower_bind_new_array(ls, target, ty(value), tmp);
  return true;
}

void asc__lower_bind_new_array(lstate *ls, const asc__ast_expr *target,
                               asc__type *t, int32_t tmp) {
  int32_t r;
  asc__irins *i;
  if (target->kind != ASC_EXPR_NAME || target->u.name.sym == NULL)
    unsupported(ls, target->loc, "this target of an array");
  r = name_reg(ls, target, t);
  if (!asc__irt_eq(ls->f->regs[r].ty, ls->f->regs[tmp].ty))
    asc__diag_fatal(ls->c, target->loc,
                    "this array's type differs from the one '%s' held "
                    "before",
                    target->u.name.sym->name);
  i = emit(ls, ASC_IR_SET_ARRAY, r, 1);
  i->args[0] = asc__irv_reg(tmp);
}

void asc__lower_name_array(lstate *ls, const asc__ast_expr *target,
                           int32_t tmp) {
  const asc__irtype *tt = &ls->f->regs[tmp].ty;
  asc__type t;
  memset(&t, 0, sizeof t);
  t.kind = ASC_TY_TENSOR;
  t.dtype = (ascDataType)tt->dtype;
  t.ndim = tt->ndim;
  asc__lower_bind_new_array(ls, target, &t, tmp);
}

/* ---------------------------------------------------- tuples of arrays */

bool asc__lower_is_array_tuple(const asc__ast_expr *e) {
  asc__type *t = ty(e);
  if (t == NULL || t->kind != ASC_TY_TUPLE || t->n == 0)
    return false;
  for (int k = 0; k < t->n; k++)
    if (asc__ty_find(t->elems[k])->kind != ASC_TY_TENSOR)
      return false;
  return true;
}

bool asc__lower_is_grid(const asc__ast_expr *e) {
  const asc__ast_expr *v;
  if (e->kind != ASC_EXPR_SUBSCRIPT)
    return false;
  v = e->u.sub.value;
  return v->kind == ASC_EXPR_ATTR && v->u.attr.builtin != NULL &&
         (v->u.attr.builtin->id == ASC_BI_NP_MGRID ||
          v->u.attr.builtin->id == ASC_BI_NP_OGRID);
}

bool asc__lower_is_made_subscript(const asc__ast_expr *e) {
  return e->kind == ASC_EXPR_SUBSCRIPT &&
         (asc__lower_is_grid(e) || asc__lower_is_array_tuple(e->u.sub.value));
}

void asc__lower_array_tuple(lstate *ls, const asc__ast_expr *e,
                            int32_t *regs) {
  if (asc__lower_is_grid(e)) {
    asc__lower_grid_tuple(ls, e, regs);
    return;
  }
  if (e->kind == ASC_EXPR_CALL && e->u.call.builtin != NULL &&
      e->u.call.callee == NULL &&
      asc__builtin_is_numpy_func(e->u.call.builtin->id)) {
    int n = ty(e)->n;
    asc__irval *vals = asc__arena_alloc(ls->c, sizeof *vals * (size_t)n);
    asc__lower_numpy_tuple(ls, e, vals);
    for (int k = 0; k < n; k++)
      regs[k] = vals[k].reg;
    return;
  }
  if (e->kind == ASC_EXPR_CALL && e->u.call.callee != NULL) {
    /* a helper's arrays: copies, which the caller owns (the helper's
     * registers keep theirs) */
    int n = ty(e)->n;
    asc__irval *vals = asc__arena_alloc(ls->c, sizeof *vals * (size_t)n);
    (void)asc__lower_inline_helper(ls, e, vals);
    for (int k = 0; k < n; k++) {
      asc__lview v;
      asc__lower_whole_tensor(ls, vals[k].reg, &v);
      regs[k] = asc__lower_c_copy(ls, &v);
    }
    return;
  }
  unsupported(ls, e->loc, "this tuple of arrays (a numpy function's "
              "result is)");
}

/* Element k of a tuple of arrays (np.histogram(a)[0]): the others are
 * freed. */
static int32_t tuple_pick(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *ix = e->u.sub.index;
  int n = ty(e->u.sub.value)->n;
  int32_t *regs = asc__arena_alloc(ls->c, sizeof *regs * (size_t)n);
  int k;
  if (!asc__numpy_const_axis(ix, n, &k))
    unsupported(ls, ix->loc, "indexing a tuple of arrays with anything but "
                "an integer constant");
  asc__lower_array_tuple(ls, e->u.sub.value, regs);
  for (int q = 0; q < n; q++)
    if (q != k) {
      asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
      fr->args[0] = asc__irv_reg(regs[q]);
    }
  return regs[k];
}

void asc__lower_fill(lstate *ls, const asc__ast_expr *call) {
  asc__lview dst;
  asc__lower_view(ls, call->u.call.rargs[0], &dst);
  asc__lower_store_nest(ls, call->u.call.rargs[0], &dst, call->u.call.rargs[1],
                        -1);
}
