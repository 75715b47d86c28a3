/*
 * Lowering of the np.linalg functions of ASC_NUMPY_FUNCS
 * (front/builtins.h), typed in types/infer_linalg.c: each matrix is one
 * `linalg` instruction, a call of asc_krt.linalg, which runs numpy's
 * LAPACK routine on it (runtime/lapack.c).  The input is read where it
 * is (a view: the runtime copies it into LAPACK's order anyway), or
 * first converted into a new array when its dtype is not the one
 * computed in (integers as float64).  The results are new C-order
 * arrays.  A stack of matrices (more than two axes) is a loop over the
 * stack, one call per matrix.  numpy's exceptions follow each call from
 * its status: LinAlgError "Singular matrix" and "Matrix is not positive
 * definite", and, before it, "Last 2 dimensions of the array must be
 * square" and solve's ValueError for b's extent; a process without a
 * LAPACK raises RuntimeError saying so.
 */
#include <math.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

static asc__irval iop(lstate *ls, int op, asc__irval a, asc__irval b) {
  return op2(ls, op, ascInt64, a, b);
}

/* The dtype a call computes in: its result's, or for eigh, eigvalsh and
 * slogdet that of the matrix (the result's dtype may be real). */
static int work_dtype(const asc__ast_expr *e) {
  asc__type *t = ty(e->u.call.rargs[0]), *r = ty(e);
  bool single = t->dtype == ascFloat32 || t->dtype == ascComplex64;
  bool cplx = asc__dt_is_complex(t->dtype);
  if (e->u.call.builtin->id == ASC_BI_NP_LINALG_SOLVE)
    return r->dtype;
  if (e->u.call.builtin->id == ASC_BI_NP_LINALG_LSTSQ)
    return agg_elem(r, 0)->dtype;
  if (cplx)
    return single ? ascComplex64 : ascComplex128;
  return single ? ascFloat32 : ascFloat64;
}

/* The view of array argument e in dtype dt: where it is, or a new
 * C-order array of dt (*tmp, to free; -1 when none) holding it. */
static void arg_in(lstate *ls, const asc__ast_expr *e, int dt,
                   asc__lview *v, int32_t *tmp) {
  int32_t t = asc__lower_materialize(ls, e);
  asc__irval cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
  asc__irblock *save;
  *tmp = -1;
  if (t >= 0) {
    asc__lower_whole_tensor(ls, t, v);
    *tmp = t;
  } else {
    asc__lower_view(ls, e, v);
  }
  if ((int)ls->f->regs[v->t].ty.dtype == dt)
    return;
  t = asc__lower_alloc_array(ls, dt, v->nd, v->shape);
  asc__lower_own_cstrides(ls, t, v->nd, cs);
  save = asc__lower_open_nest(ls, v->shape, v->nd, idx);
  asc__lower_store_at(ls, t, asc__lower_dot_idx(ls, idx, cs, v->nd),
                      conv(ls, asc__lower_load_at(ls, v, idx, v->nd), dt));
  ls->cur = save;
  if (*tmp >= 0) {
    asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
    fr->args[0] = asc__irv_reg(*tmp);
  }
  *tmp = t;
  asc__lower_whole_tensor(ls, t, v);
}

static void free_tmp(lstate *ls, int32_t t) {
  asc__irins *fr;
  if (t < 0)
    return;
  fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
  fr->args[0] = asc__irv_reg(t);
}

/* numpy's LinAlgError for a stack of matrices that are not square. */
static void square_check(lstate *ls, const asc__lview *a) {
  asc__lower_raise_if(ls,
                      iop(ls, ASC_IR_NE, a->shape[a->nd - 2],
                          a->shape[a->nd - 1]),
                      ASC_KEXC_LINALG_ERROR,
                      "Last 2 dimensions of the array must be square",
                      i64(0), i64(0));
}

/* v with its first nb axes fixed at idx: the matrix (or vector) left. */
static asc__lview at_batch(lstate *ls, const asc__lview *v, int nb,
                           const asc__irval *idx) {
  asc__lview m = *v;
  for (int k = 0; k < nb; k++)
    m.off = iop(ls, ASC_IR_ADD, m.off, iop(ls, ASC_IR_MUL, idx[k],
                                           v->stride[k]));
  m.nd = v->nd - nb;
  for (int k = 0; k < m.nd; k++) {
    m.shape[k] = v->shape[nb + k];
    m.stride[k] = v->stride[nb + k];
    m.src[k] = -1;
  }
  return m;
}

/* status = asc_krt.linalg(op, m, n, k, ops[0..nops)), then numpy's
 * exceptions from the status. */
static void call(lstate *ls, const asc__ast_expr *e, int op, asc__irval m,
                 asc__irval n, asc__irval k, const asc__lview *ops,
                 int nops) {
  int32_t st = newreg(ls, ascInt32, "linalg");
  asc__irins *i = emit(ls, ASC_IR_LINALG, st, 3 + 4 * nops);
  asc__irval s = asc__irv_reg(st);
  const char *name = e->u.call.builtin->name;
  i->aux = op;
  i->args[0] = m;
  i->args[1] = n;
  i->args[2] = k;
  for (int j = 0; j < nops; j++) {
    const asc__lview *v = &ops[j];
    i->args[3 + 4 * j] = asc__irv_reg(v->t);
    i->args[4 + 4 * j] = v->off;
    i->args[5 + 4 * j] = v->nd >= 1 ? v->stride[0] : i64(0);
    i->args[6 + 4 * j] = v->nd >= 2 ? v->stride[1] : i64(0);
  }
#define STATUS(code) op2(ls, ASC_IR_EQ, ascInt32, s, asc__irv_int(ascInt32, code))
  asc__lower_raise_if(ls, STATUS(ASC_KLINALG_SINGULAR), ASC_KEXC_LINALG_ERROR,
                      "Singular matrix", i64(0), i64(0));
  asc__lower_raise_if(ls, STATUS(ASC_KLINALG_NOT_PD), ASC_KEXC_LINALG_ERROR,
                      "Matrix is not positive definite", i64(0), i64(0));
  asc__lower_raise_if(ls, STATUS(ASC_KLINALG_NO_CONVERGE),
                      ASC_KEXC_LINALG_ERROR,
                      op == ASC_KLINALG_SVD ? "SVD did not converge"
                                            : "Eigenvalues did not converge",
                      i64(0), i64(0));
  asc__lower_raise_if(ls, STATUS(ASC_KLINALG_NO_MEMORY),
                      ASC_KEXC_MEMORY_ERROR,
                      asc__arena_printf(ls->c, "np.%s: out of memory for "
                                        "LAPACK's work arrays", name),
                      i64(0), i64(0));
  asc__lower_raise_if(ls, STATUS(ASC_KLINALG_NO_LAPACK),
                      ASC_KEXC_RUNTIME_ERROR,
                      asc__arena_printf(ls->c, "np.%s in a kernel needs "
                                        "LAPACK, and none could be loaded "
                                        "(Debian's libopenblas0 or "
                                        "liblapack3; ASC_LAPACK_LIB names "
                                        "one)", name),
                      i64(0), i64(0));
#undef STATUS
  asc__lower_raise_if(ls, op2(ls, ASC_IR_NE, ascInt32, s,
                              asc__irv_int(ascInt32, ASC_KLINALG_OK)),
                      ASC_KEXC_RUNTIME_ERROR,
                      asc__arena_printf(ls->c, "np.%s: LAPACK does not take "
                                        "this matrix (an extent past 2**31 "
                                        "- 1?)", name),
                      i64(0), i64(0));
}

/* ------------------------------------- inv, cholesky, det, eigvalsh */

/* One result per matrix of a's stack: a new array of dtype rdt whose
 * shape is a's stack then `core` of a's last axis (0: none, 1: n, 2: n,
 * n), filled by op; 0-d results are read back as a number into *val. */
static int32_t per_matrix(lstate *ls, const asc__ast_expr *e, int op,
                          int rdt, int core, asc__irval *val) {
  int dt = work_dtype(e), nb;
  asc__lview a, r, ops[2];
  asc__irval shape[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], n;
  asc__irblock *save;
  int32_t tmp, res;
  arg_in(ls, e->u.call.rargs[0], dt, &a, &tmp);
  square_check(ls, &a);
  nb = a.nd - 2;
  n = a.shape[a.nd - 1];
  for (int k = 0; k < nb; k++)
    shape[k] = a.shape[k];
  for (int k = 0; k < core; k++)
    shape[nb + k] = n;
  res = asc__lower_alloc_array(ls, rdt, nb + core, shape);
  asc__lower_whole_tensor(ls, res, &r);
  save = asc__lower_open_nest(ls, a.shape, nb, idx);
  ops[0] = at_batch(ls, &a, nb, idx);
  ops[1] = at_batch(ls, &r, nb, idx);
  call(ls, e, op, n, n, i64(0), ops, 2);
  ls->cur = save;
  free_tmp(ls, tmp);
  if (val != NULL) {
    *val = asc__lower_load_at(ls, &r, idx, 0);
    free_tmp(ls, res);
  }
  return res;
}

/* ------------------------------------------------------------- solve */

/* x = solve(a, b): b one vector for every matrix of a's stack, or a
 * stack of matrices of the same stack extents as a's. */
static int32_t solve(lstate *ls, const asc__ast_expr *e) {
  int dt = work_dtype(e), nb;
  asc__lview a, b, x, ops[3];
  asc__irval shape[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], n, k;
  asc__irblock *save;
  int32_t ta, tb, r;
  bool vec;
  arg_in(ls, e->u.call.rargs[0], dt, &a, &ta);
  arg_in(ls, e->u.call.rargs[1], dt, &b, &tb);
  square_check(ls, &a);
  nb = a.nd - 2;
  n = a.shape[a.nd - 1];
  vec = b.nd == 1;
  asc__lower_raise_if(
      ls, iop(ls, ASC_IR_NE, b.shape[vec ? 0 : b.nd - 2], n),
      ASC_KEXC_VALUE_ERROR,
      vec ? "solve1: Input operand 1 has a mismatch in its core dimension "
            "0, with gufunc signature (m,m),(m)->(m) (size {} is different "
            "from {})"
          : "solve: Input operand 1 has a mismatch in its core dimension "
            "0, with gufunc signature (m,m),(m,n)->(m,n) (size {} is "
            "different from {})",
      b.shape[vec ? 0 : b.nd - 2], n);
  for (int j = 0; !vec && j < nb; j++)
    asc__lower_raise_if(ls, iop(ls, ASC_IR_NE, b.shape[j], a.shape[j]),
                        ASC_KEXC_VALUE_ERROR,
                        "np.linalg.solve in kernels takes a b whose stack "
                        "extents are a's (numpy broadcasts them): {} and {}",
                        b.shape[j], a.shape[j]);
  k = vec ? i64(1) : b.shape[b.nd - 1];
  for (int j = 0; j < nb + 1; j++)
    shape[j] = a.shape[j];
  if (!vec)
    shape[nb + 1] = k;
  r = asc__lower_alloc_array(ls, dt, vec ? nb + 1 : nb + 2, shape);
  asc__lower_whole_tensor(ls, r, &x);
  save = asc__lower_open_nest(ls, a.shape, nb, idx);
  ops[0] = at_batch(ls, &a, nb, idx);
  ops[1] = vec ? b : at_batch(ls, &b, nb, idx);
  ops[2] = at_batch(ls, &x, nb, idx);
  call(ls, e, ASC_KLINALG_SOLVE, n, n, k, ops, 3);
  ls->cur = save;
  free_tmp(ls, tb);
  free_tmp(ls, ta);
  return r;
}

/* ---------------------------------------------------------- svd, qr */

static bool bool_arg(const asc__ast_expr *e, int i, bool dflt) {
  const asc__ast_expr *b = i < e->u.call.nrargs ? e->u.call.rargs[i] : NULL;
  return b != NULL && b->kind == ASC_EXPR_BOOL ? b->u.bval : dflt;
}

/* (u, s, vh), s alone (compute_uv False) or (q, r) of one m x n matrix:
 * the registers of the new arrays in r[], how many returned. */
static int svd_qr(lstate *ls, const asc__ast_expr *e, int32_t *r) {
  bool qr = e->u.call.builtin->id == ASC_BI_NP_LINALG_QR;
  bool full = !qr && bool_arg(e, 1, true), uv = qr || bool_arg(e, 2, true);
  int dt = work_dtype(e), rdt = dt == ascComplex64    ? ascFloat32
                                : dt == ascComplex128 ? ascFloat64
                                                      : dt;
  asc__lview a, ops[4];
  asc__irval m, n, mn, sh[2];
  int32_t tmp;
  int nr = 0;
  arg_in(ls, e->u.call.rargs[0], dt, &a, &tmp);
  m = a.shape[0];
  n = a.shape[1];
  mn = iop(ls, ASC_IR_MIN, m, n);
  ops[0] = a;
  if (qr) {
    sh[0] = m, sh[1] = mn;
    r[nr++] = asc__lower_alloc_array(ls, dt, 2, sh);
    sh[0] = mn, sh[1] = n;
    r[nr++] = asc__lower_alloc_array(ls, dt, 2, sh);
  } else {
    if (uv) {
      sh[0] = m, sh[1] = full ? m : mn;
      r[nr++] = asc__lower_alloc_array(ls, dt, 2, sh);
    }
    r[nr++] = asc__lower_alloc_array(ls, rdt, 1, &mn);
    if (uv) {
      sh[0] = full ? n : mn, sh[1] = n;
      r[nr++] = asc__lower_alloc_array(ls, dt, 2, sh);
    }
  }
  /* the runtime's order: svd's s first, then u and vh */
  for (int j = 0; j < nr; j++)
    asc__lower_whole_tensor(ls, r[j], &ops[1 + j]);
  if (!qr && uv) {
    asc__lview u = ops[1];
    ops[1] = ops[2];
    ops[2] = u;
  }
  call(ls, e, qr ? ASC_KLINALG_QR : ASC_KLINALG_SVD, m, n,
       i64(full ? 1 : 0), ops, nr + 1);
  free_tmp(ls, tmp);
  return nr;
}

/* ------------------------------------------------------------- lstsq */

/* (x, residuals, rank, s): residuals has b's columns only when the rank
 * is n and m > n, else none (numpy's rule), so it is copied out of the
 * call's k of them. */
static void lstsq(lstate *ls, const asc__ast_expr *e, asc__irval *vals) {
  int dt = work_dtype(e), rdt = dt == ascComplex64    ? ascFloat32
                                : dt == ascComplex128 ? ascFloat64
                                                      : dt;
  asc__lview a, b, ops[6], rt;
  asc__irval m, n, k, mn, sh[2], rank, keep, ext, idx[1];
  asc__irblock *save;
  int32_t ta, tb, x, rtmp, rk, s, res;
  bool vec;
  arg_in(ls, e->u.call.rargs[0], dt, &a, &ta);
  arg_in(ls, e->u.call.rargs[1], dt, &b, &tb);
  m = a.shape[0];
  n = a.shape[1];
  vec = b.nd == 1;
  asc__lower_raise_if(ls, iop(ls, ASC_IR_NE, b.shape[0], m),
                      ASC_KEXC_LINALG_ERROR, "Incompatible dimensions",
                      i64(0), i64(0));
  k = vec ? i64(1) : b.shape[1];
  mn = iop(ls, ASC_IR_MIN, m, n);
  sh[0] = n, sh[1] = k;
  x = asc__lower_alloc_array(ls, dt, vec ? 1 : 2, sh);
  rtmp = asc__lower_alloc_array(ls, rdt, 1, &k);
  rk = asc__lower_alloc_array(ls, ascInt64, 0, sh);
  s = asc__lower_alloc_array(ls, rdt, 1, &mn);
  ops[0] = a;
  ops[1] = b;
  asc__lower_whole_tensor(ls, x, &ops[2]);
  asc__lower_whole_tensor(ls, rtmp, &ops[3]);
  asc__lower_whole_tensor(ls, rk, &ops[4]);
  asc__lower_whole_tensor(ls, s, &ops[5]);
  call(ls, e, ASC_KLINALG_LSTSQ, m, n, k, ops, 6);
  rank = asc__lower_load_at(ls, &ops[4], idx, 0);
  keep = op2(ls, ASC_IR_AND, ascBool, iop(ls, ASC_IR_EQ, rank, n),
             iop(ls, ASC_IR_GT, m, n));
  ext = sel(ls, keep, k, i64(0));
  res = asc__lower_alloc_array(ls, rdt, 1, &ext);
  rt = ops[3];
  save = asc__lower_open_nest(ls, &ext, 1, idx);
  asc__lower_store_at(ls, res, idx[0], asc__lower_load_at(ls, &rt, idx, 1));
  ls->cur = save;
  free_tmp(ls, rtmp);
  free_tmp(ls, rk);
  free_tmp(ls, tb);
  free_tmp(ls, ta);
  vals[0] = asc__irv_reg(x);
  vals[1] = asc__irv_reg(res);
  vals[2] = conv(ls, rank, ascInt32);
  vals[3] = asc__irv_reg(s);
}

/* ------------------------------------------------------------ tuples */

void asc__lower_linalg_tuple(lstate *ls, const asc__ast_expr *e,
                             asc__irval *vals) {
  int dt = work_dtype(e), rdt = asc__dt_is_complex(dt)
                                    ? (dt == ascComplex64 ? ascFloat32
                                                          : ascFloat64)
                                    : dt;
  asc__lview a, ops[3];
  asc__irval n, shape[2];
  int32_t tmp, r0, r1;
  bool eigh = e->u.call.builtin->id == ASC_BI_NP_LINALG_EIGH;
  if (e->u.call.builtin->id == ASC_BI_NP_LINALG_LSTSQ) {
    lstsq(ls, e, vals);
    return;
  }
  if (e->u.call.builtin->id == ASC_BI_NP_LINALG_SVD ||
      e->u.call.builtin->id == ASC_BI_NP_LINALG_QR) {
    int32_t r[3];
    int nr = svd_qr(ls, e, r);
    for (int j = 0; j < nr; j++)
      vals[j] = asc__irv_reg(r[j]);
    return;
  }
  arg_in(ls, e->u.call.rargs[0], dt, &a, &tmp);
  square_check(ls, &a);
  n = a.shape[1];
  shape[0] = shape[1] = n;
  r0 = asc__lower_alloc_array(ls, eigh ? rdt : dt, eigh ? 1 : 0, shape);
  r1 = asc__lower_alloc_array(ls, eigh ? dt : rdt, eigh ? 2 : 0, shape);
  ops[0] = a;
  asc__lower_whole_tensor(ls, r0, &ops[1]);
  asc__lower_whole_tensor(ls, r1, &ops[2]);
  call(ls, e, eigh ? ASC_KLINALG_EIGH : ASC_KLINALG_SLOGDET, n, n, i64(0),
       ops, 3);
  free_tmp(ls, tmp);
  if (eigh) {
    vals[0] = asc__irv_reg(r0);
    vals[1] = asc__irv_reg(r1);
    return;
  }
  vals[0] = asc__lower_load_at(ls, &ops[1], shape, 0);
  vals[1] = asc__lower_load_at(ls, &ops[2], shape, 0);
  free_tmp(ls, r0);
  free_tmp(ls, r1);
}

/* ---------------------------------------------------------- dispatch */

int32_t asc__lower_linalg(lstate *ls, const asc__ast_expr *e) {
  int dt = ty(e)->dtype;
  switch (e->u.call.builtin->id) {
  case ASC_BI_NP_LINALG_INV:
    return per_matrix(ls, e, ASC_KLINALG_INV, dt, 2, NULL);
  case ASC_BI_NP_LINALG_SOLVE:
    return solve(ls, e);
  case ASC_BI_NP_LINALG_CHOLESKY:
    return per_matrix(ls, e, ASC_KLINALG_CHOLESKY, dt, 2, NULL);
  case ASC_BI_NP_LINALG_DET:
    return per_matrix(ls, e, ASC_KLINALG_DET, dt, 0, NULL);
  case ASC_BI_NP_LINALG_EIGVALSH:
    return per_matrix(ls, e, ASC_KLINALG_EIGH, dt, 1, NULL);
  case ASC_BI_NP_LINALG_SVD: {
    int32_t r[3];
    (void)svd_qr(ls, e, r);   /* compute_uv=False: s alone */
    return r[0];
  }
  default:
    unsupported(ls, e->loc, "this np.linalg function here");
  }
}

asc__irval asc__lower_linalg_value(lstate *ls, const asc__ast_expr *e) {
  asc__irval v = i64(0);
  if (e->u.call.builtin->id != ASC_BI_NP_LINALG_DET)
    unsupported(ls, e->loc, "this np.linalg function as a number");
  per_matrix(ls, e, ASC_KLINALG_DET, ty(e)->dtype, 0, &v);
  return v;
}
