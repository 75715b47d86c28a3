/*
 * Lowering of calls: builtins and intrinsics (with the math errors Python
 * raises), and helper calls, inlined.  lower.c lowers everything else;
 * lower_int.h is what the two share.
 */
#include <math.h>
#include <string.h>

#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "asc/kernel_abi.h"
#include "compiler/types/types.h"

static int intrinsic_of(asc__builtin_id id) {
  switch (id) {
  case ASC_BI_SIN: return ASC_INTR_SIN;
  case ASC_BI_COS: return ASC_INTR_COS;
  case ASC_BI_TAN: return ASC_INTR_TAN;
  case ASC_BI_ASIN: return ASC_INTR_ASIN;
  case ASC_BI_ACOS: return ASC_INTR_ACOS;
  case ASC_BI_ATAN: return ASC_INTR_ATAN;
  case ASC_BI_ATAN2: return ASC_INTR_ATAN2;
  case ASC_BI_SINH: return ASC_INTR_SINH;
  case ASC_BI_COSH: return ASC_INTR_COSH;
  case ASC_BI_TANH: return ASC_INTR_TANH;
  case ASC_BI_EXP: return ASC_INTR_EXP;
  case ASC_BI_EXP2: return ASC_INTR_EXP2;
  case ASC_BI_EXPM1: return ASC_INTR_EXPM1;
  case ASC_BI_LOG: return ASC_INTR_LOG;
  case ASC_BI_LOG2: return ASC_INTR_LOG2;
  case ASC_BI_LOG10: return ASC_INTR_LOG10;
  case ASC_BI_LOG1P: return ASC_INTR_LOG1P;
  case ASC_BI_SQRT: return ASC_INTR_SQRT;
  case ASC_BI_NP_CBRT: return ASC_INTR_CBRT;
  case ASC_BI_ASINH: return ASC_INTR_ASINH; /* np.arcsinh of reals */
  case ASC_BI_ACOSH: return ASC_INTR_ACOSH;
  case ASC_BI_ATANH: return ASC_INTR_ATANH;
  case ASC_BI_FLOOR: return ASC_INTR_FLOOR;
  case ASC_BI_CEIL: return ASC_INTR_CEIL;
  case ASC_BI_TRUNC: return ASC_INTR_TRUNC;
  case ASC_BI_FABS: return ASC_INTR_FABS;
  case ASC_BI_ERF: return ASC_INTR_ERF;
  case ASC_BI_ERFC: return ASC_INTR_ERFC;
  case ASC_BI_GAMMA: return ASC_INTR_TGAMMA;
  case ASC_BI_LGAMMA: return ASC_INTR_LGAMMA;
  case ASC_BI_HYPOT: return ASC_INTR_HYPOT;
  case ASC_BI_FMOD: return ASC_INTR_FMOD;
  case ASC_BI_COPYSIGN: return ASC_INTR_COPYSIGN;
  case ASC_BI_ISNAN: return ASC_INTR_ISNAN;
  case ASC_BI_ISINF: return ASC_INTR_ISINF;
  case ASC_BI_ISFINITE: return ASC_INTR_ISFINITE;
  default: return -1;
  }
}


static asc__irval fpclass(lstate *ls, int id, asc__irval a) {
  return call1(ls, id, ascBool, a);
}

static void raise_if(lstate *ls, asc__irval cond, int kind, const char *msg) {
  asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
  asc__irblock *save = ls->cur;
  i->args[0] = cond;
  ls->cur = &i->body[0];
  asc__lower_raise_here(ls, kind, msg);
  ls->cur = save;
}

/* How a math.X function reports errors (CPython's Modules/mathmodule.c):
 * a NaN from non-NaN arguments is a ValueError; an infinity from finite
 * arguments is an OverflowError for functions that can overflow, a
 * ValueError for the others (log(0)), and no error for hypot and atan2;
 * gamma and lgamma overflow too, but at a pole (0 and the negative
 * integers) raise a ValueError (MATH_POLE). */
enum { MATH_NAN_ONLY, MATH_INF_DOMAIN, MATH_INF_OVERFLOW, MATH_POLE, MATH_NONE };

static int math_error_kind(int intr) {
  switch (intr) {
  case ASC_INTR_EXP:
  case ASC_INTR_EXP2:
  case ASC_INTR_EXPM1:
  case ASC_INTR_SINH:
  case ASC_INTR_COSH:
    return MATH_INF_OVERFLOW;
  case ASC_INTR_TGAMMA:
  case ASC_INTR_LGAMMA:
    return MATH_POLE;
  case ASC_INTR_SIN:
  case ASC_INTR_COS:
  case ASC_INTR_TAN:
  case ASC_INTR_ASIN:
  case ASC_INTR_ACOS:
  case ASC_INTR_LOG:
  case ASC_INTR_LOG2:
  case ASC_INTR_LOG10:
  case ASC_INTR_LOG1P:
  case ASC_INTR_SQRT:
  case ASC_INTR_FMOD:
  case ASC_INTR_ATANH:
    return MATH_INF_DOMAIN;
  case ASC_INTR_ATAN:
  case ASC_INTR_ATAN2:
  case ASC_INTR_TANH:
  case ASC_INTR_HYPOT:
  case ASC_INTR_ERF:
  case ASC_INTR_ERFC:
  case ASC_INTR_ASINH:
  case ASC_INTR_ACOSH:
    return MATH_NAN_ONLY;
  default:
    return MATH_NONE;
  }
}

/* The checks after r = math.f(args...) (floats only).  pow_zero: math.pow,
 * where 0 ** negative is a ValueError and other infinities overflow. */
static void math_errors(lstate *ls, int kind, bool pow_zero, int dt,
                        const asc__irval *args, int n, asc__irval r) {
  asc__irval anynan = fpclass(ls, ASC_INTR_ISNAN, args[0]);
  asc__irval allfin = fpclass(ls, ASC_INTR_ISFINITE, args[0]);
  asc__irval inf;
  if (kind == MATH_NONE || !asc__dt_is_float(dt))
    return;
  for (int k = 1; k < n; k++) {
    anynan = op2(ls, ASC_IR_OR, ascBool, anynan,
                 fpclass(ls, ASC_INTR_ISNAN, args[k]));
    allfin = op2(ls, ASC_IR_AND, ascBool, allfin,
                 fpclass(ls, ASC_INTR_ISFINITE, args[k]));
  }
  raise_if(ls,
           op2(ls, ASC_IR_AND, ascBool, fpclass(ls, ASC_INTR_ISNAN, r),
               op1(ls, ASC_IR_NOT, ascBool, anynan)),
           ASC_KEXC_VALUE_ERROR, "math domain error");
  if (kind == MATH_NAN_ONLY)
    return;
  inf = op2(ls, ASC_IR_AND, ascBool, fpclass(ls, ASC_INTR_ISINF, r), allfin);
  if (pow_zero)
    raise_if(ls,
             op2(ls, ASC_IR_AND, ascBool, inf,
                 op2(ls, ASC_IR_EQ, dt, args[0], asc__irv_float(dt, 0.0))),
             ASC_KEXC_VALUE_ERROR, "math domain error");
  if (kind == MATH_POLE)
    raise_if(ls,
             op2(ls, ASC_IR_AND, ascBool, inf,
                 op2(ls, ASC_IR_AND, ascBool,
                     op2(ls, ASC_IR_LE, dt, args[0], asc__irv_float(dt, 0.0)),
                     op2(ls, ASC_IR_EQ, dt,
                         call1(ls, ASC_INTR_FLOOR, dt, args[0]), args[0]))),
             ASC_KEXC_VALUE_ERROR, "math domain error");
  if (kind == MATH_INF_OVERFLOW || kind == MATH_POLE)
    raise_if(ls, inf, ASC_KEXC_OVERFLOW_ERROR, "math range error");
  else
    raise_if(ls, inf, ASC_KEXC_VALUE_ERROR, "math domain error");
}

/* ------------------------------------------------------------- cmath */

/* The parts of a complex128 value. */
static void cparts(lstate *ls, asc__irval z, asc__irval *re, asc__irval *im) {
  *re = call1(ls, ASC_INTR_CREAL, ascFloat64, z);
  *im = call1(ls, ASC_INTR_CIMAG, ascFloat64, z);
}

/* Is either part of z NaN (ISNAN), infinite (ISINF), or are both finite
 * (ISFINITE)?  cmath.isnan & co. */
static asc__irval cclass(lstate *ls, int id, asc__irval z) {
  asc__irval re, im;
  cparts(ls, z, &re, &im);
  return op2(ls, id == ASC_INTR_ISFINITE ? ASC_IR_AND : ASC_IR_OR, ascBool,
             fpclass(ls, id, re), fpclass(ls, id, im));
}

/* How a cmath function reports errors (CPython's Modules/cmathmodule.c):
 * a NaN part from an argument without one is a ValueError; an infinite
 * part from a finite argument an OverflowError (CM_RANGE: exp, sinh ...)
 * or a ValueError (CM_DOMAIN: log(0), atanh(1)); sqrt, asin, acos, asinh
 * and acosh raise nothing (CM_NONE). */
enum { CM_NONE, CM_DOMAIN, CM_RANGE };

static int cmath_error_kind(int intr) {
  switch (intr) {
  case ASC_INTR_EXP:
  case ASC_INTR_SIN:
  case ASC_INTR_COS:
  case ASC_INTR_TAN:
  case ASC_INTR_SINH:
  case ASC_INTR_COSH:
  case ASC_INTR_TANH:
    return CM_RANGE;
  case ASC_INTR_LOG:
  case ASC_INTR_LOG10:
  case ASC_INTR_ATAN:
  case ASC_INTR_ATANH:
    return CM_DOMAIN;
  default:
    return CM_NONE;
  }
}

static void cmath_errors(lstate *ls, int kind, asc__irval z, asc__irval w) {
  if (kind == CM_NONE)
    return;
  raise_if(ls,
           op2(ls, ASC_IR_AND, ascBool, cclass(ls, ASC_INTR_ISNAN, w),
               op1(ls, ASC_IR_NOT, ascBool, cclass(ls, ASC_INTR_ISNAN, z))),
           ASC_KEXC_VALUE_ERROR, "math domain error");
  raise_if(ls,
           op2(ls, ASC_IR_AND, ascBool, cclass(ls, ASC_INTR_ISINF, w),
               cclass(ls, ASC_INTR_ISFINITE, z)),
           kind == CM_RANGE ? ASC_KEXC_OVERFLOW_ERROR : ASC_KEXC_VALUE_ERROR,
           kind == CM_RANGE ? "math range error" : "math domain error");
}

void asc__lower_cmath_polar(lstate *ls, const asc__ast_expr *e,
                            asc__irval *vals) {
  asc__irval z = conv(ls, asc__lower_expr(ls, e->u.call.rargs[0]),
                      ascComplex128);
  asc__irval r = call1(ls, ASC_INTR_CABS, ascFloat64, z);
  /* CPython: an infinite modulus of a finite z overflows */
  raise_if(ls,
           op2(ls, ASC_IR_AND, ascBool, fpclass(ls, ASC_INTR_ISINF, r),
               cclass(ls, ASC_INTR_ISFINITE, z)),
           ASC_KEXC_OVERFLOW_ERROR, "math range error");
  vals[0] = r;
  vals[1] = call1(ls, ASC_INTR_CARG, ascFloat64, z);
}

/* cmath.X(...): computed in complex128 (float64 for phase) whatever the
 * argument's type, as CPython converts to a C double complex. */
static asc__irval lower_cmath(lstate *ls, const asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  asc__ast_expr *const *a = e->u.call.rargs;
  int rt = scalar_dt(ls, e);
  asc__irval z, w;
  int id;
  if (b->id == ASC_BI_CM_RECT) {
    asc__irval r = conv(ls, asc__lower_expr(ls, a[0]), ascFloat64);
    asc__irval phi = conv(ls, asc__lower_expr(ls, a[1]), ascFloat64);
    int32_t d = newreg(ls, ascComplex128, NULL);
    asc__irins *i;
    /* CPython: a nonzero, non-NaN modulus with an infinite angle */
    raise_if(ls,
             op2(ls, ASC_IR_AND, ascBool,
                 op2(ls, ASC_IR_AND, ascBool,
                     op2(ls, ASC_IR_NE, ascFloat64, r,
                         asc__irv_float(ascFloat64, 0.0)),
                     op1(ls, ASC_IR_NOT, ascBool,
                         fpclass(ls, ASC_INTR_ISNAN, r))),
                 fpclass(ls, ASC_INTR_ISINF, phi)),
             ASC_KEXC_VALUE_ERROR, "math domain error");
    i = emit(ls, ASC_IR_CALL, d, 2);
    i->aux = ASC_INTR_RECT;
    i->args[0] = r;
    i->args[1] = phi;
    return conv(ls, asc__irv_reg(d), rt);
  }
  z = conv(ls, asc__lower_expr(ls, a[0]), ascComplex128);
  switch (b->id) {
  case ASC_BI_ISNAN:
    return cclass(ls, ASC_INTR_ISNAN, z);
  case ASC_BI_ISINF:
    return cclass(ls, ASC_INTR_ISINF, z);
  case ASC_BI_ISFINITE:
    return cclass(ls, ASC_INTR_ISFINITE, z);
  case ASC_BI_CM_PHASE:
    return conv(ls, call1(ls, ASC_INTR_CARG, ascFloat64, z), rt);
  case ASC_BI_ASINH: id = ASC_INTR_ASINH; break;
  case ASC_BI_ACOSH: id = ASC_INTR_ACOSH; break;
  case ASC_BI_ATANH: id = ASC_INTR_ATANH; break;
  default:
    id = intrinsic_of(b->id);
    if (id < 0)
      unsupported(ls, e->loc, "this use of a cmath function");
    break;
  }
  w = call1(ls, id, ascComplex128, z);
  cmath_errors(ls, cmath_error_kind(id), z, w);
  return conv(ls, w, rt);
}

/* A helper call, inlined: parameters become registers, `return v` stores
 * into the result register (the element registers of a tuple or struct
 * result, copied to agg) and leaves a one-trip loop. */
asc__irval asc__lower_inline_helper(lstate *ls, const asc__ast_expr *e,
                                    asc__irval *agg) {
  asc__tinst *inst = asc__typed_callee(ls->t, e);
  asc__ast_func *fn;
  asc__irins *wrap;
  asc__irblock *save = ls->cur;
  int32_t saved_ret = ls->ret_reg, saved_flag = ls->ret_flag;
  int32_t *saved_elems = ls->ret_elems, *elems = NULL;
  asc__type *saved_rtype = ls->ret_type;
  int saved_loops = ls->loops, saved_hpfors = ls->helper_pfors;
  asc__type *rt;
  int32_t r = -1;
  if (inst == NULL || ls->inline_depth > 32)
    unsupported(ls, e->loc, "this call");
  fn = inst->fn;
  rt = inst->type && inst->type->ret ? asc__ty_find(inst->type->ret) : NULL;
  if (rt && rt->kind == ASC_TY_SCALAR)
    r = newreg(ls, rt->dtype, fn->name);
  if (rt && rt->kind == ASC_TY_TENSOR)
    r = asc__lower_array_reg(ls, rt->dtype, rt->ndim, fn->name);
  if (is_agg(rt)) {
    if (agg == NULL)
      unsupported(ls, e->loc, "this use of a tuple or struct result");
    elems = asc__arena_alloc(ls->c, sizeof *elems * ((size_t)agg_n(rt) + 1));
    for (int k = 0; k < agg_n(rt); k++) {
      asc__type *et = agg_elem(rt, k);
      if (et->kind == ASC_TY_TENSOR && asc__lower_is_array_tuple(e)) {
        /* a tuple of arrays: each element register holds a copy */
        elems[k] = asc__lower_array_reg(ls, et->dtype, et->ndim, fn->name);
        continue;
      }
      if (et->kind != ASC_TY_SCALAR)
        unsupported(ls, e->loc, "a nested tuple or struct");
      elems[k] = newreg(ls, et->dtype, fn->name);
    }
  }
  for (int k = 0; k < fn->nparams && k < e->u.call.nrargs; k++) {
    const asc__sym *ps = fn->params[k].sym;
    asc__type *pt = ps && ps->type ? asc__ty_find(ps->type) : NULL;
    const asc__ast_expr *a = e->u.call.rargs[k];
    if (pt && pt->kind == ASC_TY_DTYPE)
      continue; /* a dtype: the instance was typed for it */
    if (pt && pt->kind == ASC_TY_TENSOR && asc__lower_is_view(ls, a)) {
      asc__lview v; /* h(a[i]), h(x[1:]): the helper sees the view */
      asc__lower_view(ls, a, &v);
      asc__lower_bind_view(ls, ps, &v);
    } else if (pt && pt->kind == ASC_TY_TENSOR) {
      asc__lower_bind(ls, ps, asc__lower_tensor_reg(ls, a));
    } else if (is_agg(pt)) {
      symreg *m = asc__lower_agg_sym(ls, ps, a->loc);
      asc__irval *vals =
          asc__arena_alloc(ls->c, sizeof *vals * ((size_t)m->nelems + 1));
      int32_t *dst = m->elems;
      asc__lower_agg(ls, a, pt, vals);
      for (int q = 0; q < agg_n(pt); q++)
        mov(ls, dst[q], vals[q]);
    } else if (pt && pt->kind == ASC_TY_SCALAR) {
      int32_t pr = newreg(ls, pt->dtype, fn->params[k].name);
      mov(ls, pr, conv(ls, asc__lower_expr(ls, a), pt->dtype));
      asc__lower_bind(ls, ps, pr);
    } else {
      unsupported(ls, a->loc, "this helper argument");
    }
  }
  ls->ret_flag = newreg(ls, ascBool, "returned");
  mov(ls, ls->ret_flag, asc__irv_int(ascBool, 0));
  wrap = emit(ls, ASC_IR_LOOP, -1, 0);
  ls->cur = &wrap->body[0];
  ls->ret_reg = r;
  ls->ret_elems = elems;
  ls->ret_type = elems ? rt : NULL;
  ls->loops = 0;
  ls->helper_pfors = ls->pfors;
  ls->inline_depth++;
  asc__lower_block(ls, &fn->body);
  emit(ls, ASC_IR_BREAK, -1, 0);
  ls->inline_depth--;
  ls->loops = saved_loops;
  ls->helper_pfors = saved_hpfors;
  ls->ret_reg = saved_ret;
  ls->ret_flag = saved_flag;
  ls->ret_elems = saved_elems;
  ls->ret_type = saved_rtype;
  ls->cur = save;
  if (elems != NULL) {
    for (int k = 0; k < agg_n(rt); k++)
      agg[k] = asc__irv_reg(elems[k]);
    return asc__irv_int(ascBool, 0);
  }
  if (r < 0)
    return asc__irv_int(ascBool, 0);
  if (rt->kind == ASC_TY_TENSOR)
    return asc__irv_reg(r);
  return conv(ls, asc__irv_reg(r), scalar_dt(ls, e));
}

asc__irval asc__lower_cintr(lstate *ls, int intr, asc__irval v) {
  int cdt = vdt(ls, v);
  int rdt = intr == ASC_INTR_CONJ ? cdt
            : cdt == ascComplex64 ? ascFloat32
                                  : ascFloat64;
  return call1(ls, intr, rdt, v);
}

asc__irval asc__lower_div(lstate *ls, int dt, asc__irval a, asc__irval b,
                          bool arrays) {
  int32_t d;
  asc__irins *i;
  if (!asc__dt_is_complex(dt) || !arrays)
    return op2(ls, ASC_IR_DIV, dt, a, b);
  d = newreg(ls, dt, NULL);
  i = emit(ls, ASC_IR_CALL, d, 2);
  i->aux = ASC_INTR_CDIV;
  i->args[0] = a;
  i->args[1] = b;
  return asc__irv_reg(d);
}

asc__irval asc__lower_cmplx(lstate *ls, int dt, asc__irval re, asc__irval im) {
  int fdt = dt == ascComplex64 ? ascFloat32 : ascFloat64;
  int32_t d = newreg(ls, dt, NULL);
  asc__irval a = conv(ls, re, fdt), b = conv(ls, im, fdt);
  asc__irins *i = emit(ls, ASC_IR_CALL, d, 2);
  i->aux = ASC_INTR_CMPLX;
  i->args[0] = a;
  i->args[1] = b;
  return asc__irv_reg(d);
}

/* numpy's maximum(x, y) (minimum when min): NaN when either is NaN. */
static asc__irval clip_max(lstate *ls, int dt, asc__irval x, asc__irval y,
                           bool min) {
  asc__irval keep = op2(ls, min ? ASC_IR_LE : ASC_IR_GE, dt, x, y);
  if (asc__dt_is_float(dt))
    keep = op2(ls, ASC_IR_OR, ascBool, keep, op2(ls, ASC_IR_NE, dt, x, x));
  return sel(ls, keep, x, y);
}

/* numpy's fmod of integers: C's remainder, with the dividend's sign; 0
 * for a zero divisor (numpy warns), and no C overflow for MIN % -1.
 * Python's % (which raises for 0 and handles -1) gives it after a sign
 * fix. */
static asc__irval int_fmod(lstate *ls, int dt, asc__irval a, asc__irval b) {
  asc__irval zero = asc__irv_int(dt, 0);
  asc__irval bz = op2(ls, ASC_IR_EQ, dt, b, zero);
  asc__irval d = sel(ls, bz, asc__irv_int(dt, 1), b);
  asc__irval m = op2(ls, ASC_IR_MOD, dt, a, d);
  if (asc__dt_is_signed(dt)) {
    asc__irval fix = op2(ls, ASC_IR_AND, ascBool,
                         op2(ls, ASC_IR_NE, dt, m, zero),
                         op2(ls, ASC_IR_NE, ascBool,
                             op2(ls, ASC_IR_LT, dt, a, zero),
                             op2(ls, ASC_IR_LT, dt, d, zero)));
    m = sel(ls, fix, op2(ls, ASC_IR_SUB, dt, m, d), m);
  }
  return sel(ls, bz, zero, m);
}

asc__irval asc__lower_call(lstate *ls, const asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  asc__ast_expr *const *a = e->u.call.rargs;
  int n = e->u.call.nrargs;
  if (e->u.call.callee)
    return asc__lower_inline_helper(ls, e, NULL);
  if (b == NULL)
    unsupported(ls, e->loc, "this call");
  if (b->kind == ASC_BK_DTYPE)
    return conv(ls, asc__lower_expr(ls, a[0]), scalar_dt(ls, e));
  if (asc__expr_via_cmath(e->u.call.func))
    return lower_cmath(ls, e);
  if (asc__builtin_is_reduction(b->id) || b->id == ASC_BI_NP_DOT)
    return asc__lower_reduce(ls, e);
  if (asc__builtin_is_numpy_func(b->id))
    return asc__lower_numpy_value(ls, e);
  switch (b->id) {
  case ASC_BI_INT:
  case ASC_BI_FLOAT:
  case ASC_BI_BOOL: {
    int dt = scalar_dt(ls, e);
    asc__irval v = asc__lower_expr(ls, a[0]);
    if (b->id == ASC_BI_BOOL)
      return truthy(ls, v);
    return conv(ls, v, dt);
  }
  case ASC_BI_MIN:
  case ASC_BI_MAX: {
    int dt = scalar_dt(ls, e);
    asc__irval r = conv(ls, asc__lower_expr(ls, a[0]), dt);
    for (int k = 1; k < n; k++)
      r = op2(ls, b->id == ASC_BI_MIN ? ASC_IR_MIN : ASC_IR_MAX, dt, r,
              conv(ls, asc__lower_expr(ls, a[k]), dt));
    return r;
  }
  case ASC_BI_ABS: {
    int dt = scalar_dt(ls, e);
    if (asc__dt_is_complex(scalar_dt(ls, a[0])))
      return conv(ls, asc__lower_cintr(ls, ASC_INTR_CABS,
                                       asc__lower_expr(ls, a[0])),
                  dt);
    if (dt == ascBool) /* np.abs of a bool array */
      return conv(ls, asc__lower_expr(ls, a[0]), dt);
    return op1(ls, ASC_IR_ABS, dt, conv(ls, asc__lower_expr(ls, a[0]), dt));
  }
  case ASC_BI_COMPLEX: {
    int dt = scalar_dt(ls, e);
    asc__irval re = asc__lower_expr(ls, a[0]);
    asc__irval im = n > 1 ? asc__lower_expr(ls, a[1]) : asc__irv_float(ascFloat64, 0.0);
    return asc__lower_cmplx(ls, dt, re, im);
  }
  case ASC_BI_NP_CONJ:
  case ASC_BI_NP_REAL:
  case ASC_BI_NP_IMAG:
  case ASC_BI_NP_ANGLE: {
    int dt = scalar_dt(ls, e), adt = scalar_dt(ls, a[0]);
    asc__irval x = asc__lower_expr(ls, a[0]);
    if (b->id == ASC_BI_NP_ANGLE && n > 1 && a[1] != NULL &&
        a[1]->kind == ASC_EXPR_BOOL && a[1]->u.bval) {
      /* deg=True: numpy's radians times 180 / pi, a Python float */
      asc__ast_expr rad = *e;
      rad.u.call.nrargs = 1;
      return op2(ls, ASC_IR_MUL, dt, asc__lower_call(ls, &rad),
                 asc__irv_float(dt, 180.0 / 3.141592653589793));
    }
    if (asc__dt_is_complex(adt))
      return conv(ls, asc__lower_cintr(ls, b->id == ASC_BI_NP_CONJ ? ASC_INTR_CONJ
                                           : b->id == ASC_BI_NP_REAL ? ASC_INTR_CREAL
                                           : b->id == ASC_BI_NP_IMAG ? ASC_INTR_CIMAG
                                                                     : ASC_INTR_CARG,
                                       x),
                  dt);
    if (b->id == ASC_BI_NP_IMAG)
      return conv(ls, asc__irv_int(ascInt64, 0), dt);
    if (b->id == ASC_BI_NP_ANGLE) {
      /* the angle of a real number: 0, or pi when negative; x converted
       * before the call is placed (an integer's conversion is an
       * instruction of its own, which must come first) */
      asc__irval xf = conv(ls, x, dt);
      int32_t d = newreg(ls, dt, NULL);
      asc__irins *i = emit(ls, ASC_IR_CALL, d, 2);
      i->aux = ASC_INTR_ATAN2;
      i->args[0] = asc__irv_float(dt, 0.0);
      i->args[1] = xf;
      return asc__irv_reg(d);
    }
    return conv(ls, x, dt);
  }
  case ASC_BI_NP_WHERE:
  case ASC_BI_NP_CLIP: {
    /* both sides are evaluated, as numpy evaluates both arrays; a NaN
     * passes through clip */
    int dt = scalar_dt(ls, e);
    bool clip = b->id == ASC_BI_NP_CLIP;
    asc__irval x = asc__lower_expr(ls, a[0]);
    /* a Python int bound of np.clip that dt cannot hold (typed so) */
    /* a clip bound left out (None) is no bound */
    asc__irval y = a[1] == NULL ? x
                   : asc__lower_fit_int(ls, asc__lower_expr(ls, a[1]), dt,
                                        clip ? 1 : 0);
    asc__irval z = a[2] == NULL ? x
                   : asc__lower_fit_int(ls, asc__lower_expr(ls, a[2]), dt,
                                        clip ? -1 : 0);
    asc__irval r;
    if (!clip)
      return sel(ls, truthy(ls, x), y, z);
    /* numpy's minimum(maximum(x, lo), hi): hi wins when lo > hi, and a
     * NaN anywhere gives NaN */
    r = conv(ls, x, dt);
    if (a[1] != NULL)
      r = clip_max(ls, dt, r, y, false);
    return a[2] == NULL ? r : clip_max(ls, dt, r, z, true);
  }
  case ASC_BI_POW: {
    int dt = scalar_dt(ls, e);
    asc__irval pa[2], r;
    pa[0] = conv(ls, asc__lower_expr(ls, a[0]), dt);
    pa[1] = conv(ls, asc__lower_expr(ls, a[1]), dt);
    r = op2(ls, ASC_IR_POW, dt, pa[0], pa[1]);
    if (e->u.call.func->kind == ASC_EXPR_ATTR && !asc__expr_via_asc(e->u.call.func))
      math_errors(ls, MATH_INF_OVERFLOW, true, dt, pa, 2, r); /* math.pow */
    return r;
  }
  case ASC_BI_GET_BLOCK_IDX:
  case ASC_BI_GET_BLOCK_NUM: {
    int32_t d = newreg(ls, ascInt64, NULL);
    ls->f->reads_block = true;
    emit(ls, b->id == ASC_BI_GET_BLOCK_IDX ? ASC_IR_BLOCK_IDX
                                           : ASC_IR_BLOCK_NUM,
         d, 0);
    return conv(ls, asc__irv_reg(d), scalar_dt(ls, e));
  }
  case ASC_BI_ATOMIC_ADD:
  case ASC_BI_ATOMIC_SUB:
  case ASC_BI_ATOMIC_MIN:
  case ASC_BI_ATOMIC_MAX:
  case ASC_BI_ATOMIC_EXCHANGE:
  case ASC_BI_ATOMIC_CAS: {
    asc__ast_expr sub;
    int32_t t, d;
    asc__irval off;
    asc__irins *i;
    int edt;
    memset(&sub, 0, sizeof sub);
    sub.kind = ASC_EXPR_SUBSCRIPT;
    sub.loc = e->loc;
    sub.u.sub.value = a[0];
    sub.u.sub.index = a[1];
    off = asc__lower_element_offset(ls, &sub, &t);
    edt = ls->f->regs[t].ty.dtype;
    d = newreg(ls, edt, NULL);
    if (b->id == ASC_BI_ATOMIC_CAS) {
      i = emit(ls, ASC_IR_CAS, d, 4);
      i->args[2] = conv(ls, asc__lower_expr(ls, a[2]), edt);
      i->args[3] = conv(ls, asc__lower_expr(ls, a[3]), edt);
    } else {
      i = emit(ls, ASC_IR_ATOMIC, d, 3);
      i->aux = b->id == ASC_BI_ATOMIC_ADD   ? ASC_ATOM_ADD
               : b->id == ASC_BI_ATOMIC_SUB ? ASC_ATOM_SUB
               : b->id == ASC_BI_ATOMIC_MIN ? ASC_ATOM_MIN
               : b->id == ASC_BI_ATOMIC_MAX ? ASC_ATOM_MAX
                                            : ASC_ATOM_XCHG;
      i->args[2] = conv(ls, asc__lower_expr(ls, a[2]), edt);
    }
    i->args[0] = asc__irv_reg(t);
    i->args[1] = off;
    /* the value operands were lowered after the instruction was placed:
     * move it after them */
    asc__ir_remove(ls->cur, i);
    asc__ir_append(ls->cur, i);
    return conv(ls, asc__irv_reg(d), scalar_dt(ls, e));
  }
  case ASC_BI_LEN: {
    /* len(t) = t.shape[0]; len(t.shape) = ndim */
    const asc__ast_expr *x = a[0];
    if (x->kind == ASC_EXPR_ATTR && strcmp(x->u.attr.attr, "shape") == 0)
      return asc__irv_int(scalar_dt(ls, e), ty(x->u.attr.value)->ndim);
    if (is_agg(ty(x)))
      return asc__irv_int(scalar_dt(ls, e), agg_n(ty(x)));
    if (asc__lower_is_view(ls, x)) { /* len(a[i]), len(row) */
      asc__lview v;
      asc__lower_view(ls, x, &v);
      return conv(ls, v.shape[0], scalar_dt(ls, e));
    }
    return conv(ls, asc__lower_dim_of(ls, asc__lower_tensor_reg(ls, x), 0),
                scalar_dt(ls, e));
  }
  case ASC_BI_BARRIER:
    emit(ls, ASC_IR_BARRIER, -1, 0);
    return asc__irv_int(ascBool, 0);
  case ASC_BI_NP_FILL:
    asc__lower_fill(ls, e);
    return asc__irv_int(ascBool, 0);
  case ASC_BI_LOCK:
  case ASC_BI_UNLOCK: {
    asc__ast_expr sub;
    int32_t t;
    asc__irval off;
    asc__irins *i;
    memset(&sub, 0, sizeof sub);
    sub.kind = ASC_EXPR_SUBSCRIPT;
    sub.loc = e->loc;
    sub.u.sub.value = a[0];
    sub.u.sub.index = a[1];
    off = asc__lower_element_offset(ls, &sub, &t);
    if (ls->f->regs[t].ty.dtype != ascInt32)
      asc__diag_fatal(ls->c, a[0]->loc,
                      "%s() needs an int32 lock array (0 = free), not %s "
                      "elements",
                      b->name,
                      asc__dtype_long((ascDataType)ls->f->regs[t].ty.dtype));
    i = emit(ls, b->id == ASC_BI_LOCK ? ASC_IR_LOCK : ASC_IR_UNLOCK, -1, 2);
    i->args[0] = asc__irv_reg(t);
    i->args[1] = off;
    return asc__irv_int(ascBool, 0);
  }
  default: {
    int id = intrinsic_of(b->id);
    if (asc__lower_is_ufunc_more(b->id))
      return asc__lower_ufunc_more(ls, e);
    int dt = scalar_dt(ls, e);
    int adt;
    int32_t d;
    asc__irins *i;
    asc__irval args[3];
    if (id < 0)
      unsupported(ls, e->loc, "this builtin");
    if (id == ASC_INTR_FLOOR || id == ASC_INTR_CEIL || id == ASC_INTR_TRUNC) {
      /* math.floor gives an int, asc.floor the argument's type */
      adt = scalar_dt(ls, a[0]);
      if (!asc__dt_is_float(adt))
        return conv(ls, asc__lower_expr(ls, a[0]), dt);
    } else if (id == ASC_INTR_ISNAN || id == ASC_INTR_ISINF ||
               id == ASC_INTR_ISFINITE) {
      adt = scalar_dt(ls, a[0]);
      if (asc__dt_is_complex(adt)) /* np.isnan(z): of either part */
        return cclass(ls, id, conv(ls, asc__lower_expr(ls, a[0]),
                                   ascComplex128));
      if (!asc__dt_is_float(adt))
        return asc__irv_int(ascBool, id == ASC_INTR_ISFINITE);
    } else if (id == ASC_INTR_FMOD && !asc__dt_is_float(dt)) {
      /* np.fmod of integers (math.fmod is typed a float) */
      return int_fmod(ls, dt, conv(ls, asc__lower_expr(ls, a[0]), dt),
                      conv(ls, asc__lower_expr(ls, a[1]), dt));
    } else {
      adt = dt;
    }
    for (int k = 0; k < n && k < 3; k++)
      args[k] = conv(ls, asc__lower_expr(ls, a[k]), adt);
    d = newreg(ls, id == ASC_INTR_ISNAN || id == ASC_INTR_ISINF ||
                           id == ASC_INTR_ISFINITE
                       ? ascBool
                       : adt,
               NULL);
    i = emit(ls, ASC_IR_CALL, d, n);
    i->aux = id;
    for (int k = 0; k < n; k++)
      i->args[k] = args[k];
    if (!asc__expr_via_asc(e->u.call.func) && n <= 3 &&
        !asc__dt_is_complex(adt))
      math_errors(ls, math_error_kind(id), false, adt, args, n,
                  asc__irv_reg(d));
    return conv(ls, asc__irv_reg(d), dt);
  }
  }
}
