/*
 * Types of the np.linalg functions of ASC_NUMPY_FUNCS (front/builtins.h),
 * lowered in lower_linalg.c onto asc_krt.linalg (LAPACK).  numpy's rules:
 * the matrices are the last two axes of an array of two or more (the
 * others a stack of them), computed in float32, float64, complex64 or
 * complex128 (_commonType: integers and bools as float64, single
 * precision only when every operand is), float16 refused.  What numpy
 * raises from the values (a matrix that is not square, singular, not
 * positive definite) is raised at run time by the lowering.
 */
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

static const char *np_name(run *r, const asc__ast_expr *e) {
  return asc__arena_printf(r->in->c, "np.%s", e->u.call.builtin->name);
}

static bool given(const asc__ast_expr *call, int i) {
  return i < call->u.call.nrargs && call->u.call.rargs[i] != NULL &&
         call->u.call.rargs[i]->kind != ASC_EXPR_NONE;
}

/* Argument i, an array of at least min axes whose dtype linalg takes:
 * its type, NULL (unknown yet) or an error. */
static asc__type *matrix_arg(run *r, asc__ast_expr *e, int i, int min) {
  asc__ast_expr *a = e->u.call.rargs[i];
  asc__type *t = asc__infer_numpy_array_arg(r, e, i);
  PROPAGATE(t);
  if (t->ndim < min) {
    /* numpy's LinAlgError, known when compiling */
    report(r, a->loc, "%d-dimensional array given. Array must be at least "
           "two-dimensional", (int)t->ndim);
    return err(r);
  }
  if (t->dtype == ascFloat16 || t->dtype == ascBFloat16) {
    report(r, a->loc, "array type %s is unsupported in linalg",
           asc__dtype_long((ascDataType)t->dtype));
    return err(r);
  }
  return t;
}

/* numpy's _commonType of dtypes a and b (b < 0: a alone). */
static ascDataType common(int a, int b) {
  bool cplx = asc__dtype_is_complex((ascDataType)a) ||
              (b >= 0 && asc__dtype_is_complex((ascDataType)b));
  bool single = (a == ascFloat32 || a == ascComplex64) &&
                (b < 0 || b == ascFloat32 || b == ascComplex64);
  if (cplx)
    return single ? ascComplex64 : ascComplex128;
  return single ? ascFloat32 : ascFloat64;
}

/* The real dtype of dt's numbers (eigenvalues, log|det|). */
static ascDataType real_of(ascDataType dt) {
  return dt == ascFloat32 || dt == ascComplex64 ? ascFloat32 : ascFloat64;
}

static asc__type *tensor(run *r, ascDataType dt, int nd) {
  return asc__ty_tensor(r->in->c, dt, nd, false);
}

/* UPLO, when given: the string constant 'L'. */
static bool uplo(run *r, asc__ast_expr *e) {
  asc__ast_expr *u;
  if (!given(e, 1))
    return true;
  u = e->u.call.rargs[1];
  if (u->kind != ASC_EXPR_STR ||
      u->u.str.len != 1 || u->u.str.s[0] != 'L') {
    report(r, u->loc, "%s's UPLO is 'L' in kernels (the lower triangle)",
           np_name(r, e));
    return false;
  }
  asc__infer_expr(r, u);
  return true;
}

/* np.linalg.solve(a, b): b a vector when it has one axis (numpy 2's
 * rule), else a stack of matrices with a's stack axes. */
static asc__type *solve(run *r, asc__ast_expr *e) {
  asc__type *a = matrix_arg(r, e, 0, 2), *b;
  PROPAGATE(a);
  b = matrix_arg(r, e, 1, 1);
  PROPAGATE(b);
  if (b->ndim != 1 && b->ndim != a->ndim) {
    report(r, e->u.call.rargs[1]->loc, "np.linalg.solve in kernels takes "
           "a b of one axis or of as many as a (%d), not %d",
           (int)a->ndim, (int)b->ndim);
    return err(r);
  }
  return tensor(r, common(a->dtype, b->dtype),
                b->ndim == 1 ? a->ndim - 1 : a->ndim);
}

/* Argument i, when given: True or False written as such; *v its value
 * (dflt when not given). */
static bool const_bool(run *r, asc__ast_expr *e, int i, const char *what,
                       bool dflt, bool *v) {
  asc__ast_expr *b;
  *v = dflt;
  if (!given(e, i))
    return true;
  b = e->u.call.rargs[i];
  if (b->kind != ASC_EXPR_BOOL) {
    report(r, b->loc, "%s's %s is True or False in kernels", np_name(r, e),
           what);
    return false;
  }
  asc__infer_expr(r, b);
  *v = b->u.bval;
  return true;
}

/* np.linalg.svd(a, full_matrices=True, compute_uv=True): (u, s, vh) or
 * s; np.linalg.qr(a, mode='reduced'): (q, r).  One matrix. */
static asc__type *svd_qr(run *r, asc__ast_expr *e, asc__type *a,
                         ascDataType dt) {
  asc__type *elts[3];
  bool full, uv, herm;
  if (a->ndim != 2) {
    report(r, e->loc, "%s of a stack of matrices is not supported in "
           "kernels yet (one matrix is)", np_name(r, e));
    return err(r);
  }
  if (e->u.call.builtin->id == ASC_BI_NP_LINALG_QR) {
    asc__ast_expr *m = given(e, 1) ? e->u.call.rargs[1] : NULL;
    if (m != NULL && (m->kind != ASC_EXPR_STR ||
                      strcmp(m->u.str.s, "reduced") != 0)) {
      report(r, m->loc, "np.linalg.qr's mode is 'reduced' in kernels");
      return err(r);
    }
    if (m != NULL)
      asc__infer_expr(r, m);
    elts[0] = elts[1] = tensor(r, dt, 2);
    return asc__ty_tuple(r->in->c, 2, elts);
  }
  if (!const_bool(r, e, 1, "full_matrices", true, &full) ||
      !const_bool(r, e, 2, "compute_uv", true, &uv) ||
      !const_bool(r, e, 3, "hermitian", false, &herm))
    return err(r);
  if (herm) {
    report(r, e->u.call.rargs[3]->loc, "np.linalg.svd's hermitian is False "
           "in kernels");
    return err(r);
  }
  (void)full;
  if (!uv)
    return tensor(r, real_of(dt), 1);
  elts[0] = elts[2] = tensor(r, dt, 2);
  elts[1] = tensor(r, real_of(dt), 1);
  return asc__ty_tuple(r->in->c, 3, elts);
}

/* np.linalg.lstsq(a, b, rcond=None): (x, residuals, rank, s) of one
 * matrix a and a b of one or two axes. */
static asc__type *lstsq(run *r, asc__ast_expr *e) {
  asc__type *a = matrix_arg(r, e, 0, 2), *b, *elts[4];
  ascDataType dt;
  PROPAGATE(a);
  b = matrix_arg(r, e, 1, 1);
  PROPAGATE(b);
  if (a->ndim != 2 || b->ndim > 2) {
    report(r, e->loc, "np.linalg.lstsq in kernels takes one matrix a and "
           "a b of one or two axes");
    return err(r);
  }
  if (given(e, 2) && e->u.call.rargs[2]->kind != ASC_EXPR_NONE) {
    report(r, e->u.call.rargs[2]->loc, "np.linalg.lstsq's rcond is None "
           "in kernels (eps * max(M, N))");
    return err(r);
  }
  dt = common(a->dtype, b->dtype);
  elts[0] = tensor(r, dt, b->ndim);
  elts[1] = tensor(r, real_of(dt), 1);
  elts[2] = scalar(r, ascInt32);
  elts[3] = tensor(r, real_of(dt), 1);
  return asc__ty_tuple(r->in->c, 4, elts);
}

asc__type *asc__infer_linalg(run *r, asc__ast_expr *e) {
  asc__builtin_id id = e->u.call.builtin->id;
  asc__type *a, *one, *two;
  ascDataType dt;
  if (id == ASC_BI_NP_LINALG_SOLVE)
    return solve(r, e);
  if (id == ASC_BI_NP_LINALG_LSTSQ)
    return lstsq(r, e);
  a = matrix_arg(r, e, 0, 2);
  PROPAGATE(a);
  dt = common(a->dtype, -1);
  switch (id) {
  case ASC_BI_NP_LINALG_INV:
    return tensor(r, dt, a->ndim);
  case ASC_BI_NP_LINALG_CHOLESKY:
    if (given(e, 1) && (e->u.call.rargs[1]->kind != ASC_EXPR_BOOL ||
                        e->u.call.rargs[1]->u.bval)) {
      report(r, e->u.call.rargs[1]->loc, "np.linalg.cholesky's upper is "
             "False in kernels (the lower factor)");
      return err(r);
    }
    if (given(e, 1))
      asc__infer_expr(r, e->u.call.rargs[1]);
    return tensor(r, dt, a->ndim);
  case ASC_BI_NP_LINALG_DET:
    return a->ndim == 2 ? scalar(r, dt) : tensor(r, dt, a->ndim - 2);
  case ASC_BI_NP_LINALG_SVD:
  case ASC_BI_NP_LINALG_QR:
    return svd_qr(r, e, a, dt);
  case ASC_BI_NP_LINALG_EIGVALSH:
    if (!uplo(r, e))
      return err(r);
    return tensor(r, real_of(dt), a->ndim - 1);
  case ASC_BI_NP_LINALG_EIGH:
  case ASC_BI_NP_LINALG_SLOGDET: {
    asc__type *elts[2];
    bool eigh = id == ASC_BI_NP_LINALG_EIGH;
    if (eigh && !uplo(r, e))
      return err(r);
    if (a->ndim != 2) {
      report(r, e->loc, "%s of a stack of matrices is not supported in "
             "kernels yet (one matrix is)", np_name(r, e));
      return err(r);
    }
    one = eigh ? tensor(r, real_of(dt), 1) : scalar(r, dt);
    two = eigh ? tensor(r, dt, 2) : scalar(r, real_of(dt));
    elts[0] = one;
    elts[1] = two;
    return asc__ty_tuple(r->in->c, 2, elts);
  }
  default:
    report(r, e->loc, "%s is not supported in kernels yet", np_name(r, e));
    return err(r);
  }
}
