/*
 * Types of the numpy ufuncs lower_ufunc_more.c writes as selections of
 * their operands that take one array (np.sign, np.reciprocal, np.round)
 * and of np.angle's deg.  infer_call.c hands them here with the first
 * argument's type.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/types/infer.h"
#include "compiler/types/infer_int.h"

static bool given(const asc__ast_expr *call, int i) {
  return i < call->u.call.nrargs && call->u.call.rargs[i] != NULL &&
         call->u.call.rargs[i]->kind != ASC_EXPR_NONE;
}

asc__type *asc__infer_ufunc_more(run *r, asc__ast_expr *e, asc__type *t) {
  const asc__builtin *b = e->u.call.builtin;
  ascDataType dt = (ascDataType)asc__ty_find(t)->dtype;
  int64_t d;
  if (b->id == ASC_BI_NP_ROUND) {
    /* numpy rounds bools in float16, which kernels do not compute in */
    if (dt == ascBool) {
      report(r, e->loc, "np.round of bool is not supported in kernels "
             "(numpy's result is float16)");
      return err(r);
    }
    if (given(e, 1) &&
        !asc__expr_int_literal(e->u.call.rargs[1], &d)) {
      report(r, e->u.call.rargs[1]->loc, "np.round's decimals is an "
             "integer written in place in kernels");
      return err(r);
    }
    if (given(e, 1)) {
      asc__infer_expr(r, e->u.call.rargs[1]);
      asc__infer_coerce(r, e->u.call.rargs[1], scalar(r, ascInt64), 0);
    }
    return t; /* integers stay integers, as in numpy */
  }
  /* np.sign: z / |z| of complex numbers (numpy 2) */
  if (dt == ascBool ||
      (asc__dtype_is_complex(dt) && b->id == ASC_BI_NP_RECIPROCAL)) {
    report(r, e->loc, "np.%s of %s is not supported in kernels", b->name,
           tn(r, t));
    return err(r);
  }
  return t; /* integers keep their dtype */
}

bool asc__infer_angle_deg(run *r, asc__ast_expr *e) {
  asc__ast_expr *a = given(e, 1) ? e->u.call.rargs[1] : NULL;
  if (a == NULL)
    return true;
  if (a->kind != ASC_EXPR_BOOL) {
    report(r, a->loc, "np.angle's deg is True or False written in place "
           "in kernels");
    return false;
  }
  asc__infer_expr(r, a);
  return true;
}
