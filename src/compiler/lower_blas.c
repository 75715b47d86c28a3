/*
 * Matrix products as BLAS calls (asc_krt.gemm_ab: c = alpha * a @ b +
 * beta * c), and the statements that are one such call:
 *
 *   C[:] = alpha * A @ B + beta * C     one gemm, alpha and beta its own
 *   C[:] = A @ B                        one gemm into C, no temporary
 *   y += alpha * A @ x                  one gemv with beta = 1
 *   y -= A.T @ x                        a transposed operand: a flag
 *
 * A number multiplying the left operand (`alpha * A @ B` is `(alpha * A)
 * @ B` in Python) or the product is the call's alpha, so no pass scales
 * A first.  The rounding is BLAS's (alpha times each sum, not each
 * product times alpha), which the order rule of BLAS products allows
 * (docs/arrays.md).  Every form keeps the general lowering behind the
 * call's status, which runs when the call did nothing: no BLAS, shapes
 * that broadcast, a target that shares memory with an operand (numpy's
 * result is then as if computed into a temporary), alpha 0 or a scaled
 * target with beta 0 (numpy's 0 * nan is nan; BLAS reads neither).
 */
#include <stdint.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

/* A real number that can scale an operand: a name or a literal (read
 * again by the general lowering when the call does nothing, so nothing
 * that could have an effect). */
static bool is_scale(const asc__ast_expr *e) {
  asc__type *t = ty(e);
  if (e->kind != ASC_EXPR_NAME && e->kind != ASC_EXPR_INT &&
      !(e->kind == ASC_EXPR_FLOAT && !e->imag))
    return false;
  return t != NULL && t->kind == ASC_TY_SCALAR &&
         (asc__dt_is_float(t->dtype) ||
          (asc__dt_is_int(t->dtype) && t->dtype != ascBool));
}

/* Is e an array of float dtype dt with 1 or 2 axes? */
static bool blas_operand(const asc__ast_expr *e, int dt) {
  asc__type *t = ty(e);
  return is_tensor(e) && (int)t->dtype == dt && t->ndim >= 1 && t->ndim <= 2;
}

bool asc__lower_blas_peel(const asc__ast_expr *x, int dt,
                          const asc__ast_expr **scale,
                          const asc__ast_expr **arr) {
  const asc__ast_expr *l, *r;
  if (x->kind != ASC_EXPR_BINARY || x->u.binary.op != ASC_BIN_MUL ||
      (dt != ascFloat32 && dt != ascFloat64) || !is_tensor(x) ||
      (int)ty(x)->dtype != dt)
    return false;
  l = x->u.binary.lhs;
  r = x->u.binary.rhs;
  if (is_scale(l) && blas_operand(r, dt)) {
    *scale = l;
    *arr = r;
    return true;
  }
  if (is_scale(r) && blas_operand(l, dt)) {
    *scale = r;
    *arr = l;
    return true;
  }
  return false;
}

/* A product the BLAS takes: scale * x @ y (scale NULL: 1). */
typedef struct blasprod {
  const asc__ast_expr *scale, *x, *y;
  int dt;
} blasprod;

static bool parse_product(const asc__ast_expr *e, blasprod *p) {
  asc__type *t = ty(e);
  const asc__ast_expr *s = NULL;
  if (!is_tensor(e) || (t->dtype != ascFloat32 && t->dtype != ascFloat64))
    return false;
  p->dt = t->dtype;
  if (e->kind == ASC_EXPR_BINARY && e->u.binary.op == ASC_BIN_MUL) {
    const asc__ast_expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    if (is_scale(l) && asc__lower_is_matmul(r)) {
      s = l;
      e = r;
    } else if (is_scale(r) && asc__lower_is_matmul(l)) {
      s = r;
      e = l;
    } else {
      return false;
    }
    if ((int)ty(e)->dtype != p->dt)
      return false;
  }
  if (!asc__lower_is_matmul(e))
    return false;
  if (e->kind == ASC_EXPR_BINARY) {
    p->x = e->u.binary.lhs;
    p->y = e->u.binary.rhs;
  } else {
    p->x = e->u.call.rargs[0];
    p->y = e->u.call.rargs[1];
  }
  p->scale = s;
  if (s == NULL && asc__lower_blas_peel(p->x, p->dt, &s, &p->x))
    p->scale = s;
  return blas_operand(p->x, p->dt) && blas_operand(p->y, p->dt) &&
         !(ty(p->x)->ndim == 1 && ty(p->y)->ndim == 1);
}

void asc__lower_matmul_check(lstate *ls, asc__irval ka, asc__irval kb) {
  asc__lower_raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, ka, kb),
                      ASC_KEXC_VALUE_ERROR,
                      "matmul: Input operand 1 has a mismatch in its core "
                      "dimension 0, with gufunc signature "
                      "(n?,k),(k,m?)->(n?,m?) (size {} is different from {})",
                      kb, ka);
}

asc__irins *asc__lower_gemm(lstate *ls, int32_t c, asc__irval coff,
                            asc__irval sc0, asc__irval sc1,
                            const asc__lview *a, const asc__lview *b,
                            asc__irval alpha, asc__irval beta,
                            asc__irval cond) {
  int32_t status = newreg(ls, ascInt32, "mm.blas");
  asc__irval one = i64(1);
  asc__irblock *save = ls->cur;
  asc__irins *g;
  if (!(cond.kind == ASC_IRV_CONST && cond.c.i)) {
    asc__irins *ifi;
    mov(ls, status, asc__irv_int(ascInt32, 1));
    ifi = emit(ls, ASC_IR_IF, -1, 1);
    ifi->args[0] = cond;
    ls->cur = &ifi->body[0];
  }
  g = emit(ls, ASC_IR_GEMM, status, 17);
  g->args[0] = asc__irv_reg(c);
  g->args[1] = asc__irv_reg(a->t);
  g->args[2] = a->off;
  g->args[3] = a->nd == 2 ? a->stride[0] : i64(0);
  g->args[4] = a->stride[a->nd - 1];
  g->args[5] = asc__irv_reg(b->t);
  g->args[6] = b->off;
  g->args[7] = b->stride[0];
  g->args[8] = b->nd == 2 ? b->stride[1] : one;
  g->args[9] = a->nd == 2 ? a->shape[0] : one;
  g->args[10] = b->nd == 2 ? b->shape[1] : one;
  g->args[11] = a->shape[a->nd - 1];
  g->args[12] = sc0;
  g->args[13] = sc1;
  g->args[14] = coff;
  g->args[15] = alpha;
  g->args[16] = beta;
  ls->cur = save;
  return g;
}

asc__irblock *asc__lower_when_failed(lstate *ls, const asc__irins *g) {
  asc__irval failed = op2(ls, ASC_IR_NE, ascInt32, asc__irv_reg(g->dst),
                          asc__irv_int(ascInt32, 0));
  asc__irblock *save = ls->cur;
  asc__irins *ifi = emit(ls, ASC_IR_IF, -1, 1);
  ifi->args[0] = failed;
  ls->cur = &ifi->body[0];
  return save;
}

/* Is e the whole of the array that name sym holds: `C`, `C[:]`,
 * `C[:, :]` or `C[...]`? */
static const asc__sym *whole_name(const asc__ast_expr *e) {
  const asc__ast_expr *ix;
  const asc__ast_expr *const *el;
  int n;
  if (e->kind == ASC_EXPR_NAME)
    return e->u.name.sym;
  if (e->kind != ASC_EXPR_SUBSCRIPT || e->u.sub.value->kind != ASC_EXPR_NAME)
    return NULL;
  ix = e->u.sub.index;
  el = ix->kind == ASC_EXPR_TUPLE
           ? (const asc__ast_expr *const *)ix->u.tuple.elts
           : &ix;
  n = ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.n : 1;
  for (int k = 0; k < n; k++)
    if (el[k]->kind != ASC_EXPR_SLICE ||
        (!el[k]->u.slice.ellipsis &&
         (el[k]->u.slice.lower || el[k]->u.slice.upper ||
          el[k]->u.slice.step)))
      return NULL;
  return e->u.sub.value->u.name.sym;
}

/* value's term `beta * T`, `T * beta` or `T`, T the whole of sym's array:
 * its scale in *scale (NULL: 1). */
static bool target_term(const asc__ast_expr *e, const asc__sym *sym, int dt,
                        const asc__ast_expr **scale) {
  const asc__ast_expr *arr = e;
  *scale = NULL;
  if (sym == NULL || !is_tensor(e) || (int)ty(e)->dtype != dt)
    return false;
  if (e->kind == ASC_EXPR_BINARY &&
      !asc__lower_blas_peel(e, dt, scale, &arr))
    return false;
  return whole_name(arr) == sym;
}

/* alpha or beta: scale converted to dt (as numpy's scalar * array
 * converts it), then to f64; sign -1 negates it (exactly). */
static asc__irval factor(lstate *ls, const asc__ast_expr *scale, int dt,
                         double unit) {
  asc__irval v;
  if (scale == NULL)
    return asc__irv_float(ascFloat64, unit);
  v = conv(ls, conv(ls, asc__lower_expr(ls, scale), dt), ascFloat64);
  if (unit < 0)
    v = op1(ls, ASC_IR_NEG, ascFloat64, v);
  return v;
}

static asc__irval and_(lstate *ls, asc__irval a, asc__irval b) {
  return op2(ls, ASC_IR_AND, ascBool, a, b);
}

static asc__irval nonzero(lstate *ls, asc__irval v) {
  return op2(ls, ASC_IR_NE, ascFloat64, v, asc__irv_float(ascFloat64, 0.0));
}

bool asc__lower_blas_store(lstate *ls, const asc__ast_expr *target,
                           const asc__ast_expr *value, int op) {
  blasprod p;
  const asc__ast_expr *bscale = NULL;
  bool with_target = false;
  asc__lview A, B, C;
  asc__irval m, n, alpha, beta, ok;
  asc__irins *g;
  asc__irblock *save;
  int nd;
  int32_t mark;
  if (!is_tensor(target) || asc__lower_is_fancy(target))
    return false;
  if (op < 0) {
    if (target->kind != ASC_EXPR_SUBSCRIPT ||
        !asc__infer_index_is_view(target->u.sub.index,
                                  ty(target->u.sub.value)->ndim))
      return false;
    if (!parse_product(value, &p)) {
      /* P + beta * C or beta * C + P */
      const asc__ast_expr *l, *r;
      if (value->kind != ASC_EXPR_BINARY || value->u.binary.op != ASC_BIN_ADD)
        return false;
      l = value->u.binary.lhs;
      r = value->u.binary.rhs;
      if (parse_product(l, &p) &&
          target_term(r, whole_name(target), p.dt, &bscale))
        with_target = true;
      else if (parse_product(r, &p) &&
               target_term(l, whole_name(target), p.dt, &bscale))
        with_target = true;
      else
        return false;
    }
  } else if (op == ASC_IR_ADD || op == ASC_IR_SUB) {
    if (!parse_product(value, &p))
      return false;
  } else {
    return false;
  }
  nd = (ty(p.x)->ndim == 2) + (ty(p.y)->ndim == 2);
  if ((int)ty(target)->dtype != p.dt || ty(target)->ndim != nd ||
      (int)ty(value)->dtype != p.dt)
    return false;

  mark = ls->f->nregs;
  asc__lower_view(ls, p.x, &A);
  asc__lower_view(ls, p.y, &B);
  asc__lower_view(ls, target, &C);
  asc__lower_matmul_check(ls, A.shape[A.nd - 1], B.shape[0]);
  m = A.nd == 2 ? A.shape[0] : i64(1);
  n = B.nd == 2 ? B.shape[1] : i64(1);
  /* the target has the product's shape (else numpy broadcasts: the
   * general lowering) */
  ok = op2(ls, ASC_IR_EQ, ascInt64, C.shape[0], A.nd == 2 ? m : n);
  if (nd == 2)
    ok = and_(ls, ok, op2(ls, ASC_IR_EQ, ascInt64, C.shape[1], n));
  alpha = factor(ls, p.scale, p.dt, op == ASC_IR_SUB ? -1.0 : 1.0);
  if (p.scale != NULL)
    ok = and_(ls, ok, nonzero(ls, alpha));
  if (op >= 0) {
    beta = asc__irv_float(ascFloat64, 1.0);
  } else if (with_target) {
    beta = factor(ls, bscale, p.dt, 1.0);
    if (bscale != NULL)
      ok = and_(ls, ok, nonzero(ls, beta));
  } else {
    beta = asc__irv_float(ascFloat64, 0.0);
  }
  if (nd == 2)
    g = asc__lower_gemm(ls, C.t, C.off, C.stride[0], C.stride[1], &A, &B,
                        alpha, beta, ok);
  else if (A.nd == 2)
    g = asc__lower_gemm(ls, C.t, C.off, C.stride[0], i64(1), &A, &B, alpha,
                        beta, ok); /* a column */
  else
    g = asc__lower_gemm(ls, C.t, C.off, i64(0), C.stride[0], &A, &B, alpha,
                        beta, ok); /* a row */
  g->note = asc__arena_printf(
      ls->c,
      "blas: the statement at line %d is one %s call into its target "
      "(alpha: %s, beta: %s), no temporary; the general code runs when "
      "the call does nothing",
      target->loc.line, nd == 2 ? "gemm" : "gemv",
      p.scale ? "the product's scale" : op == ASC_IR_SUB ? "-1" : "1",
      op >= 0 ? "1" : with_target ? (bscale ? "the target's scale" : "1")
                                  : "0");
  save = asc__lower_when_failed(ls, g);
  if (op < 0)
    (void)asc__lower_array_assign(ls, target, value);
  else
    (void)asc__lower_array_aug(ls, target, value, op);
  ls->cur = save;
  free_operand(ls, A.t, mark);
  if (B.t != A.t)
    free_operand(ls, B.t, mark);
  return true;
}
