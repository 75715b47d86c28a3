/*
 * Lowering of the numpy ufuncs written as selections of their operands
 * (np.sign, np.heaviside, np.fmax, np.fmin, np.logaddexp,
 * np.reciprocal), each with
 * numpy's definition of the element, NaN included.
 */
#include <math.h>

#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

static asc__irval intr1(lstate *ls, int id, int dt, asc__irval a) {
  int32_t d = newreg(ls, id == ASC_INTR_ISNAN ? ascBool : dt, NULL);
  asc__irins *i = emit(ls, ASC_IR_CALL, d, 1);
  i->aux = id;
  i->args[0] = a;
  return asc__irv_reg(d);
}

static asc__irval num(int dt, double v) {
  return asc__dt_is_float(dt) ? asc__irv_float(dt, v)
                              : asc__irv_int(dt, (int64_t)v);
}

bool asc__lower_is_ufunc_more(asc__builtin_id id) {
  return id == ASC_BI_NP_SIGN || id == ASC_BI_NP_HEAVISIDE ||
         id == ASC_BI_NP_FMAX || id == ASC_BI_NP_FMIN ||
         id == ASC_BI_NP_LOGADDEXP || id == ASC_BI_NP_RECIPROCAL;
}

asc__irval asc__lower_ufunc_more(lstate *ls, const asc__ast_expr *e) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int dt = scalar_dt(ls, e);
  bool fl = asc__dt_is_float(dt);
  asc__irval x = conv(ls, asc__lower_expr(ls, a[0]), dt), y, r;
  switch (e->u.call.builtin->id) {
  case ASC_BI_NP_SIGN:
    /* x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x (NaN stays NaN) */
    r = fl ? sel(ls, op2(ls, ASC_IR_EQ, dt, x, x), num(dt, 0), x)
           : num(dt, 0);
    r = sel(ls, op2(ls, ASC_IR_LT, dt, x, num(dt, 0)), num(dt, -1), r);
    return sel(ls, op2(ls, ASC_IR_GT, dt, x, num(dt, 0)), num(dt, 1), r);
  case ASC_BI_NP_RECIPROCAL:
    if (fl)
      return op2(ls, ASC_IR_DIV, dt, num(dt, 1), x); /* 1 / 0: inf */
    /* integers: 1 / x toward zero, so 1, -1 or 0; of 0 numpy's value
     * is its platform's cast of inf (with a warning): here 0 */
    r = asc__dt_is_signed(dt)
            ? sel(ls, op2(ls, ASC_IR_EQ, dt, x, num(dt, -1)), num(dt, -1),
                  num(dt, 0))
            : num(dt, 0);
    return sel(ls, op2(ls, ASC_IR_EQ, dt, x, num(dt, 1)), num(dt, 1), r);
  case ASC_BI_NP_HEAVISIDE:
    /* x < 0 ? 0 : x > 0 ? 1 : x == 0 ? h : x */
    y = conv(ls, asc__lower_expr(ls, a[1]), dt);
    r = sel(ls, op2(ls, ASC_IR_EQ, dt, x, num(dt, 0)), y, x);
    r = sel(ls, op2(ls, ASC_IR_GT, dt, x, num(dt, 0)), num(dt, 1), r);
    return sel(ls, op2(ls, ASC_IR_LT, dt, x, num(dt, 0)), num(dt, 0), r);
  case ASC_BI_NP_FMAX:
  case ASC_BI_NP_FMIN: {
    bool mx = e->u.call.builtin->id == ASC_BI_NP_FMAX;
    y = conv(ls, asc__lower_expr(ls, a[1]), dt);
    if (!fl)
      return op2(ls, mx ? ASC_IR_MAX : ASC_IR_MIN, dt, x, y);
    /* numpy's: x unless y wins the comparison; a NaN loses to a number */
    r = op2(ls, ASC_IR_OR, ascBool,
            op2(ls, mx ? ASC_IR_GE : ASC_IR_LE, dt, x, y),
            intr1(ls, ASC_INTR_ISNAN, dt, y));
    return sel(ls, r, x, y);
  }
  default: { /* ASC_BI_NP_LOGADDEXP */
    /* the larger plus log1p(exp(-|x - y|)); x == y (infinities too):
     * x + ln 2; NaN through the difference */
    asc__irval d, big;
    y = conv(ls, asc__lower_expr(ls, a[1]), dt);
    d = op2(ls, ASC_IR_SUB, dt, x, y);
    big = sel(ls, op2(ls, ASC_IR_GT, dt, d, num(dt, 0)), x, y);
    r = intr1(ls, ASC_INTR_LOG1P, dt,
              intr1(ls, ASC_INTR_EXP, dt,
                    op1(ls, ASC_IR_NEG, dt,
                        intr1(ls, ASC_INTR_FABS, dt, d))));
    r = op2(ls, ASC_IR_ADD, dt, big, r);
    return sel(ls, op2(ls, ASC_IR_EQ, dt, x, y),
               op2(ls, ASC_IR_ADD, dt, x, num(dt, M_LN2)), r);
  }
  }
}
