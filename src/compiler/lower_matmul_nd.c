/*
 * Matrix products of arrays of more than two axes (numpy's matmul): each
 * operand is a stack of matrices (a 1-D operand one vector), the stacks'
 * leading axes broadcast, and the result is a new C-order array of the
 * broadcast leading axes followed by the product's.
 *
 *   (..., n, k) @ (k, m), the left operand's rows evenly spaced (a
 *   C-contiguous array, a reshape of one)   one gemm over all the rows
 *   otherwise                               one gemm per matrix of the
 *                                           stack
 *
 * Each call keeps loops behind its status (no BLAS, ASC_BLAS=0, an
 * integer or mixed dtype: loops only), as the 2-D products do
 * (lower_blas.c, docs/arrays.md "N-D matrix products").
 */
#include <stdint.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

/* The leading axes of a product: their broadcast sizes, and each
 * operand's stride along them (0 where it has size 1 or lacks the
 * axis). */
typedef struct stack {
  int nb;
  asc__irval size[ASC_MAX_DIMS];
  asc__irval sa[ASC_MAX_DIMS], sb[ASC_MAX_DIMS];
} stack;

/* The number of leading axes of an operand of nd axes. */
static int lead(int nd) { return nd > 2 ? nd - 2 : 0; }

static void broadcast_stacks(lstate *ls, const asc__lview *A,
                             const asc__lview *B, stack *s) {
  int na = lead(A->nd), nb = lead(B->nd);
  s->nb = na > nb ? na : nb;
  for (int j = 0; j < s->nb; j++) {
    int ia = j - (s->nb - na), ib = j - (s->nb - nb);
    asc__irval za = ia >= 0 ? A->shape[ia] : i64(1);
    asc__irval zb = ib >= 0 ? B->shape[ib] : i64(1);
    asc__irval one_a = op2(ls, ASC_IR_EQ, ascInt64, za, i64(1));
    asc__irval one_b = op2(ls, ASC_IR_EQ, ascInt64, zb, i64(1));
    asc__irval bad = op2(
        ls, ASC_IR_AND, ascBool, op2(ls, ASC_IR_NE, ascInt64, za, zb),
        op2(ls, ASC_IR_AND, ascBool, op1(ls, ASC_IR_NOT, ascBool, one_a),
            op1(ls, ASC_IR_NOT, ascBool, one_b)));
    asc__lower_raise_if(ls, bad, ASC_KEXC_VALUE_ERROR,
                        asc__arena_printf(ls->c,
                                          "matmul: operands could not be "
                                          "broadcast together: size {} "
                                          "against size {} on axis %d",
                                          j),
                        za, zb);
    s->size[j] = sel(ls, one_a, zb, za);
    s->sa[j] = ia >= 0 ? sel(ls, one_a, i64(0), A->stride[ia]) : i64(0);
    s->sb[j] = ib >= 0 ? sel(ls, one_b, i64(0), B->stride[ib]) : i64(0);
  }
}

/* The matrix (or vector) of operand v at stack offset off: its last one
 * or two axes. */
static void core(const asc__lview *v, asc__irval off, asc__lview *c) {
  int n = v->nd >= 2 ? 2 : 1;
  memset(c, 0, sizeof *c);
  c->t = v->t;
  c->nd = n;
  c->off = off;
  for (int k = 0; k < n; k++) {
    c->shape[k] = v->shape[v->nd - n + k];
    c->stride[k] = v->stride[v->nd - n + k];
    c->src[k] = -1;
  }
}

/* r[roff + ...] = A @ B for the matrices (or a matrix and a vector) A and
 * B: each element a sum over the shared axis in C order, small floats
 * summed in float64 as the 2-D products are; cs: r's strides along the
 * product's ncore axes. */
static void product_loops(lstate *ls, int32_t r, asc__irval roff,
                          const asc__irval *cs, const asc__lview *A,
                          const asc__lview *B, int dt) {
  asc__irval shape[2], idx[2], pidx[1], ia[2], ib[2], off = roff;
  int adt = is_small_float(dt) ? ascFloat64 : dt, nc = 0;
  asc__irblock *save, *psave;
  int32_t acc;
  if (A->nd == 2)
    shape[nc++] = A->shape[0];
  if (B->nd == 2)
    shape[nc++] = B->shape[1];
  save = asc__lower_open_nest(ls, shape, nc, idx);
  acc = newreg(ls, adt, "mm.acc");
  mov(ls, acc, conv(ls, i64(0), adt));
  psave = asc__lower_open_nest(ls, &A->shape[A->nd - 1], 1, pidx);
  ia[0] = A->nd == 2 ? idx[0] : pidx[0];
  ia[1] = pidx[0];
  ib[0] = pidx[0];
  ib[1] = idx[nc - 1];
  mov(ls, acc,
      op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
          op2(ls, ASC_IR_MUL, adt,
              conv(ls, asc__lower_load_at(ls, A, ia, A->nd), adt),
              conv(ls, asc__lower_load_at(ls, B, ib, B->nd), adt))));
  ls->cur = psave;
  for (int k = 0; k < nc; k++)
    off = add(ls, off, mul(ls, idx[k], cs[k]));
  asc__lower_store_at(ls, r, off, conv(ls, asc__irv_reg(acc), dt));
  ls->cur = save;
}

/* Are A's leading axes and rows one run of evenly spaced rows (stride
 * A.stride[nd - 2])?  Axes of size 1 do not count. */
static asc__irval rows_collapse(lstate *ls, const asc__lview *A) {
  asc__irval want = A->stride[A->nd - 2], ok = asc__irv_int(ascBool, 1);
  for (int i = A->nd - 3; i >= 0; i--) {
    want = mul(ls, want, A->shape[i + 1]);
    ok = op2(ls, ASC_IR_AND, ascBool, ok,
             op2(ls, ASC_IR_OR, ascBool,
                 op2(ls, ASC_IR_EQ, ascInt64, A->shape[i], i64(1)),
                 op2(ls, ASC_IR_EQ, ascInt64, A->stride[i], want)));
  }
  return ok;
}

int32_t asc__lower_matmul_nd(lstate *ls, const asc__ast_expr *e,
                             const asc__ast_expr *x,
                             const asc__ast_expr *y) {
  asc__lview A, B, A2, B2;
  asc__irval shape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], bidx[ASC_MAX_DIMS];
  asc__irval aoff, boff, roff = i64(0), f64_0, f64_1;
  asc__irblock *outer, *save;
  stack s;
  int dt = ty(e)->dtype, nd = ty(e)->ndim;
  bool blas;
  int32_t r, mark = ls->f->nregs;
  asc__lower_view(ls, x, &A);
  asc__lower_view(ls, y, &B);
  asc__lower_matmul_check(ls, A.shape[A.nd - 1],
                          B.shape[B.nd >= 2 ? B.nd - 2 : 0]);
  broadcast_stacks(ls, &A, &B, &s);
  for (int j = 0; j < s.nb; j++)
    shape[j] = s.size[j];
  if (A.nd >= 2)
    shape[s.nb] = A.shape[A.nd - 2];
  if (B.nd >= 2)
    shape[nd - 1] = B.shape[B.nd - 1];
  r = asc__lower_alloc_array(ls, dt, nd, shape);
  asc__lower_own_cstrides(ls, r, nd, cs);
  outer = ls->cur;
  blas = (dt == ascFloat32 || dt == ascFloat64) &&
         ls->f->regs[A.t].ty.dtype == dt && ls->f->regs[B.t].ty.dtype == dt;
  f64_0 = asc__irv_float(ascFloat64, 0.0);
  f64_1 = asc__irv_float(ascFloat64, 1.0);
  if (blas && A.nd > 2 && B.nd <= 2) {
    /* the stack's rows are one matrix: one call */
    asc__irval rows = A.shape[A.nd - 2];
    asc__irins *g;
    for (int i = 0; i < A.nd - 2; i++)
      rows = mul(ls, rows, A.shape[i]);
    memset(&A2, 0, sizeof A2);
    A2.t = A.t;
    A2.nd = 2;
    A2.off = A.off;
    A2.shape[0] = rows;
    A2.shape[1] = A.shape[A.nd - 1];
    A2.stride[0] = A.stride[A.nd - 2];
    A2.stride[1] = A.stride[A.nd - 1];
    A2.src[0] = A2.src[1] = -1;
    g = asc__lower_gemm(ls, r, i64(0), B.nd == 2 ? B.shape[1] : i64(1),
                        i64(1), &A2, &B, f64_1, f64_0,
                        rows_collapse(ls, &A));
    g->note = asc__arena_printf(ls->c,
                                "blas: the product at line %d is one %s "
                                "call over the rows of its left operand's "
                                "stack; one call per matrix when they are "
                                "not evenly spaced",
                                e->loc.line, B.nd == 2 ? "gemm" : "gemv");
    (void)asc__lower_when_failed(ls, g);
  }
  /* one product per matrix of the stack */
  save = asc__lower_open_nest(ls, s.size, s.nb, bidx);
  aoff = A.off;
  boff = B.off;
  for (int j = 0; j < s.nb; j++) {
    aoff = add(ls, aoff, mul(ls, bidx[j], s.sa[j]));
    boff = add(ls, boff, mul(ls, bidx[j], s.sb[j]));
    roff = add(ls, roff, mul(ls, bidx[j], cs[j]));
  }
  core(&A, aoff, &A2);
  core(&B, boff, &B2);
  if (blas) {
    asc__irins *g;
    if (A2.nd == 2)
      g = asc__lower_gemm(ls, r, roff, B2.nd == 2 ? cs[nd - 2] : cs[nd - 1],
                          i64(1), &A2, &B2, f64_1, f64_0,
                          asc__irv_int(ascBool, 1));
    else
      g = asc__lower_gemm(ls, r, roff, i64(0), cs[nd - 1], &A2, &B2, f64_1,
                          f64_0, asc__irv_int(ascBool, 1)); /* a row */
    (void)asc__lower_when_failed(ls, g);
  }
  product_loops(ls, r, roff, &cs[s.nb], &A2, &B2, dt);
  ls->cur = save;
  ls->cur = outer;
  free_operand(ls, A.t, mark);
  if (B.t != A.t)
    free_operand(ls, B.t, mark);
  return r;
}
