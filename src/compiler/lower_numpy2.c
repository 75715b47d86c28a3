/*
 * Lowering of the diagonal functions of ASC_NUMPY_FUNCS (docs/arrays.md,
 * "Diagonals and flips"), as types/infer_numpy2.c types them: np.trace
 * (a number) and np.diag (a new array).  A diagonal k of an (n0, n1)
 * array starts at row max(0, -k) and column max(0, k) and has
 * max(0, min(n0 - row, n1 - column)) elements, none when k is past
 * either side.
 */
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

static asc__irval iop(lstate *ls, int op, asc__irval a, asc__irval b) {
  return op2(ls, op, ascInt64, a, b);
}

/* Offset argument i of call e, 0 when not given. */
static asc__irval offset_arg(lstate *ls, const asc__ast_expr *e, int i) {
  const asc__ast_expr *a =
      i < e->u.call.nrargs ? e->u.call.rargs[i] : NULL;
  if (a == NULL || a->kind == ASC_EXPR_NONE)
    return i64(0);
  return conv(ls, asc__lower_expr(ls, a), ascInt64);
}

/* The first row and column of diagonal k. */
static void diag_start(lstate *ls, asc__irval k, asc__irval *row,
                       asc__irval *col) {
  *row = iop(ls, ASC_IR_MAX, iop(ls, ASC_IR_SUB, i64(0), k), i64(0));
  *col = iop(ls, ASC_IR_MAX, k, i64(0));
}

/* The first row and column of diagonal k of the 2-D view v, and its
 * length. */
static asc__irval diagonal(lstate *ls, const asc__lview *v, asc__irval k,
                           asc__irval *row, asc__irval *col) {
  asc__irval n;
  diag_start(ls, k, row, col);
  n = iop(ls, ASC_IR_MIN, iop(ls, ASC_IR_SUB, v->shape[0], *row),
          iop(ls, ASC_IR_SUB, v->shape[1], *col));
  return iop(ls, ASC_IR_MAX, n, i64(0));
}

static asc__irval zero_of(lstate *ls, int dt) {
  if (asc__dt_is_complex(dt))
    return asc__lower_cmplx(ls, dt, asc__irv_float(ascFloat64, 0.0),
                            asc__irv_float(ascFloat64, 0.0));
  return conv(ls, i64(0), dt);
}

/* The diagonal's elements added in order in the result's dtype (numpy
 * adds 8 or more floats pairwise: the last bits can differ there). */
asc__irval asc__lower_trace(lstate *ls, const asc__ast_expr *e) {
  int rdt = ty(e)->dtype;
  asc__lview in;
  asc__irval k = offset_arg(ls, e, 1), row, col, n, i, at[2];
  asc__irblock *save;
  int32_t s = newreg(ls, rdt, "trace");
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  n = diagonal(ls, &in, k, &row, &col);
  mov(ls, s, zero_of(ls, rdt));
  save = asc__lower_open_nest(ls, &n, 1, &i);
  at[0] = iop(ls, ASC_IR_ADD, i, row);
  at[1] = iop(ls, ASC_IR_ADD, i, col);
  mov(ls, s, op2(ls, ASC_IR_ADD, rdt, asc__irv_reg(s),
                 conv(ls, asc__lower_load_at(ls, &in, at, 2), rdt)));
  ls->cur = save;
  return asc__irv_reg(s);
}

/* Of a 1-D v of n elements: an (n + |k|, n + |k|) array of zeros, then v
 * stored along diagonal k.  Of a 2-D v: diagonal k copied. */
int32_t asc__lower_diag(lstate *ls, const asc__ast_expr *e) {
  int dt = ty(e)->dtype;
  asc__lview in;
  asc__irval k = offset_arg(ls, e, 1), row, col, n, i, at[2], shape[2];
  asc__irval cs[2], idx[2];
  asc__irblock *save;
  int32_t r;
  asc__lower_arg_view(ls, e->u.call.rargs[0], &in);
  if (in.nd == 2) {
    n = diagonal(ls, &in, k, &row, &col);
    r = asc__lower_alloc_array(ls, dt, 1, &n);
    save = asc__lower_open_nest(ls, &n, 1, &i);
    at[0] = iop(ls, ASC_IR_ADD, i, row);
    at[1] = iop(ls, ASC_IR_ADD, i, col);
    asc__lower_store_at(ls, r, i, asc__lower_load_at(ls, &in, at, 2));
    ls->cur = save;
    return r;
  }
  shape[0] = iop(ls, ASC_IR_ADD, in.shape[0],
                 iop(ls, ASC_IR_MAX, k, iop(ls, ASC_IR_SUB, i64(0), k)));
  shape[1] = shape[0];
  r = asc__lower_alloc_array(ls, dt, 2, shape);
  asc__lower_own_cstrides(ls, r, 2, cs);
  save = asc__lower_open_nest(ls, shape, 2, idx);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, 2),
                      zero_of(ls, dt));
  ls->cur = save;
  diag_start(ls, k, &row, &col);
  save = asc__lower_open_nest(ls, &in.shape[0], 1, &i);
  idx[0] = iop(ls, ASC_IR_ADD, i, row);
  idx[1] = iop(ls, ASC_IR_ADD, i, col);
  asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, 2),
                      asc__lower_load_at(ls, &in, &i, 1));
  ls->cur = save;
  return r;
}
