/*
 * Lowering of the numpy ufuncs written as selections of their operands
 * (np.sign, np.heaviside, np.fmax, np.fmin, np.logaddexp,
 * np.reciprocal) and of np.round, each with
 * numpy's definition of the element, NaN included.
 */
#include <math.h>

#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

static asc__irval intr1(lstate *ls, int id, int dt, asc__irval a) {
  bool test = id == ASC_INTR_ISNAN || id == ASC_INTR_ISINF;
  return call1(ls, id, test ? ascBool : dt, a);
}

static asc__irval intr2(lstate *ls, int id, int dt, asc__irval a,
                        asc__irval b) {
  int32_t d = newreg(ls, dt, NULL);
  asc__irins *i = emit(ls, ASC_IR_CALL, d, 2);
  i->aux = id;
  i->args[0] = a;
  i->args[1] = b;
  return asc__irv_reg(d);
}

static asc__irval num(int dt, double v) {
  return asc__dt_is_float(dt) ? asc__irv_float(dt, v)
                              : asc__irv_int(dt, (int64_t)v);
}

bool asc__lower_is_ufunc_more(asc__builtin_id id) {
  return id == ASC_BI_NP_SIGN || id == ASC_BI_NP_HEAVISIDE ||
         id == ASC_BI_NP_FMAX || id == ASC_BI_NP_FMIN ||
         id == ASC_BI_NP_LOGADDEXP || id == ASC_BI_NP_RECIPROCAL ||
         id == ASC_BI_NP_ROUND;
}

/* numpy's power of ten for rounding: exact up to 1e8, beyond that 1e9
 * times ten n - 9 times (its rounding, not pow's). */
static double power_of_ten(int64_t n) {
  static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4,
                               1e5, 1e6, 1e7, 1e8};
  double r = 1e9;
  if (n < 9)
    return p10[n];
  while (n-- > 9)
    r *= 10.;
  return r;
}

/* x of float dtype dt rounded to d decimals as numpy rounds: half to
 * even of x * 10**d, divided back (x / 10**-d and multiplied back for a
 * negative d), the power in dt as numpy's Python float operand is. */
static asc__irval round_float(lstate *ls, int dt, asc__irval x, int64_t d) {
  asc__irval f = asc__irv_float(dt, power_of_ten(d < 0 ? -d : d));
  if (d == 0)
    return intr1(ls, ASC_INTR_ROUND, dt, x);
  x = op2(ls, d > 0 ? ASC_IR_MUL : ASC_IR_DIV, dt, x, f);
  x = intr1(ls, ASC_INTR_ROUND, dt, x);
  return op2(ls, d > 0 ? ASC_IR_DIV : ASC_IR_MUL, dt, x, f);
}

/* np.round(x, decimals): floats as round_float, complex numbers each
 * part so; integers unchanged for decimals >= 0, else rounded in
 * float64 and cast back, as numpy does. */
static asc__irval round_elem(lstate *ls, const asc__ast_expr *e, int dt,
                             asc__irval x) {
  int64_t d = 0;
  if (e->u.call.nrargs > 1 && e->u.call.rargs[1] != NULL)
    asc__expr_int_literal(e->u.call.rargs[1], &d);
  if (asc__dt_is_complex(dt)) {
    int pdt = dt == ascComplex64 ? ascFloat32 : ascFloat64;
    asc__irval re = conv(ls, asc__lower_cintr(ls, ASC_INTR_CREAL, x), pdt);
    asc__irval im = conv(ls, asc__lower_cintr(ls, ASC_INTR_CIMAG, x), pdt);
    return asc__lower_cmplx(ls, dt, round_float(ls, pdt, re, d),
                            round_float(ls, pdt, im, d));
  }
  if (asc__dt_is_float(dt))
    return round_float(ls, dt, x, d);
  if (d >= 0)
    return x;
  return conv(ls, round_float(ls, ascFloat64, conv(ls, x, ascFloat64), d),
              dt);
}

/* numpy 2's sign of a complex z: z / |z|; 0 for 0; of an infinite z the
 * unit along its infinite part (NaN when both are); NaN when |z| is. */
static asc__irval csign(lstate *ls, int dt, asc__irval z) {
  int pdt = dt == ascComplex64 ? ascFloat32 : ascFloat64;
  asc__irval re = conv(ls, asc__lower_cintr(ls, ASC_INTR_CREAL, z), pdt);
  asc__irval im = conv(ls, asc__lower_cintr(ls, ASC_INTR_CIMAG, z), pdt);
  asc__irval zero = num(pdt, 0), nan = num(pdt, NAN), m, ir, ii, both;
  asc__irval sr, si, is0;
  m = intr2(ls, ASC_INTR_HYPOT, pdt, re, im);
  ir = intr1(ls, ASC_INTR_ISINF, pdt, re);
  ii = intr1(ls, ASC_INTR_ISINF, pdt, im);
  both = op2(ls, ASC_IR_AND, ascBool, ir, ii);
  is0 = op2(ls, ASC_IR_EQ, pdt, m, zero);
  sr = sel(ls, is0, zero, op2(ls, ASC_IR_DIV, pdt, re, m));
  si = sel(ls, is0, zero, op2(ls, ASC_IR_DIV, pdt, im, m));
  sr = sel(ls, ii, zero, sr);
  si = sel(ls, ir, zero, si);
  sr = sel(ls, ir, intr2(ls, ASC_INTR_COPYSIGN, pdt, num(pdt, 1), re), sr);
  si = sel(ls, ii, intr2(ls, ASC_INTR_COPYSIGN, pdt, num(pdt, 1), im), si);
  sr = sel(ls, both, nan, sr);
  si = sel(ls, both, nan, si);
  return asc__lower_cmplx(ls, dt, sr, si);
}

asc__irval asc__lower_ufunc_more(lstate *ls, const asc__ast_expr *e) {
  asc__ast_expr *const *a = e->u.call.rargs;
  int dt = scalar_dt(ls, e);
  bool fl = asc__dt_is_float(dt);
  asc__irval x = conv(ls, asc__lower_expr(ls, a[0]), dt), y, r;
  switch (e->u.call.builtin->id) {
  case ASC_BI_NP_ROUND:
    return round_elem(ls, e, dt, x);
  case ASC_BI_NP_SIGN:
    if (asc__dt_is_complex(dt))
      return csign(ls, dt, x);
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
