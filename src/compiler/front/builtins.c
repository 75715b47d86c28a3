/*
 * The builtins table (see builtins.h).
 */
#include <math.h>
#include <string.h>

#include "compiler/front/builtins.h"

static const asc__builtin entries[] = {
#define X(id, name, ns, kind, mn, mx, params)                                  \
  {ASC_BI_##id, name, ns, kind, mn, mx, params},
    ASC_BUILTINS(X)
#undef X
};

const asc__builtin *asc__builtin_get(asc__builtin_id id) {
  if (id <= ASC_BI_NONE || id >= ASC_BI_COUNT)
    return NULL;
  return &entries[id - 1];
}

/* numpy name -> the builtin with numpy's semantics (that of asc.X) */
static const struct {
  const char *np;
  asc__builtin_id id;
} numpy_alias[] = {
    {"sin", ASC_BI_SIN}, {"cos", ASC_BI_COS}, {"tan", ASC_BI_TAN},
    {"arcsin", ASC_BI_ASIN}, {"arccos", ASC_BI_ACOS},
    {"arctan", ASC_BI_ATAN}, {"arctan2", ASC_BI_ATAN2},
    {"sinh", ASC_BI_SINH}, {"cosh", ASC_BI_COSH}, {"tanh", ASC_BI_TANH},
    {"arcsinh", ASC_BI_ASINH}, {"arccosh", ASC_BI_ACOSH},
    {"arctanh", ASC_BI_ATANH}, {"cbrt", ASC_BI_NP_CBRT},
    {"sign", ASC_BI_NP_SIGN}, {"heaviside", ASC_BI_NP_HEAVISIDE},
    {"fmax", ASC_BI_NP_FMAX}, {"fmin", ASC_BI_NP_FMIN},
    {"logaddexp", ASC_BI_NP_LOGADDEXP}, {"reciprocal", ASC_BI_NP_RECIPROCAL},
    {"round", ASC_BI_NP_ROUND}, {"around", ASC_BI_NP_ROUND},
    {"exp", ASC_BI_EXP}, {"exp2", ASC_BI_EXP2}, {"expm1", ASC_BI_EXPM1},
    {"log", ASC_BI_LOG}, {"log2", ASC_BI_LOG2}, {"log10", ASC_BI_LOG10},
    {"log1p", ASC_BI_LOG1P}, {"sqrt", ASC_BI_SQRT}, {"power", ASC_BI_POW},
    {"floor", ASC_BI_FLOOR}, {"ceil", ASC_BI_CEIL}, {"trunc", ASC_BI_TRUNC},
    {"fabs", ASC_BI_FABS}, {"abs", ASC_BI_ABS}, {"absolute", ASC_BI_ABS},
    {"hypot", ASC_BI_HYPOT}, {"fmod", ASC_BI_FMOD},
    {"copysign", ASC_BI_COPYSIGN}, {"isnan", ASC_BI_ISNAN},
    {"isinf", ASC_BI_ISINF}, {"isfinite", ASC_BI_ISFINITE},
    {"minimum", ASC_BI_MIN}, {"maximum", ASC_BI_MAX},
    {"pi", ASC_BI_PI}, {"e", ASC_BI_E}, {"inf", ASC_BI_INF},
    {"nan", ASC_BI_NAN}, {"bool_", ASC_BI_DT_BOOL},
    {"int8", ASC_BI_DT_INT8}, {"int16", ASC_BI_DT_INT16},
    {"int32", ASC_BI_DT_INT32}, {"int64", ASC_BI_DT_INT64},
    {"intp", ASC_BI_DT_INT64}, {"uint8", ASC_BI_DT_UINT8},
    {"uint16", ASC_BI_DT_UINT16}, {"uint32", ASC_BI_DT_UINT32},
    {"uint64", ASC_BI_DT_UINT64}, {"float16", ASC_BI_DT_FLOAT16},
    {"half", ASC_BI_DT_FLOAT16}, {"float32", ASC_BI_DT_FLOAT32},
    {"single", ASC_BI_DT_FLOAT32}, {"float64", ASC_BI_DT_FLOAT64},
    {"double", ASC_BI_DT_FLOAT64}, {"float_", ASC_BI_DT_FLOAT64},
    {"sum", ASC_BI_NP_SUM}, {"prod", ASC_BI_NP_PROD}, {"min", ASC_BI_NP_MIN},
    {"amin", ASC_BI_NP_MIN}, {"max", ASC_BI_NP_MAX}, {"amax", ASC_BI_NP_MAX},
    {"mean", ASC_BI_NP_MEAN}, {"var", ASC_BI_NP_VAR}, {"std", ASC_BI_NP_STD},
    {"any", ASC_BI_NP_ANY}, {"all", ASC_BI_NP_ALL},
    {"argmin", ASC_BI_NP_ARGMIN}, {"argmax", ASC_BI_NP_ARGMAX},
    {"dot", ASC_BI_NP_DOT}, {"matmul", ASC_BI_NP_DOT},
    {"where", ASC_BI_NP_WHERE},
    {"clip", ASC_BI_NP_CLIP}, {"copy", ASC_BI_NP_COPY},
    {"empty", ASC_BI_NP_EMPTY}, {"ndarray", ASC_BI_NP_EMPTY},
    {"zeros", ASC_BI_NP_ZEROS},
    {"ones", ASC_BI_NP_ONES}, {"full", ASC_BI_NP_FULL},
    {"empty_like", ASC_BI_NP_EMPTY_LIKE},
    {"zeros_like", ASC_BI_NP_ZEROS_LIKE},
    {"ones_like", ASC_BI_NP_ONES_LIKE}, {"full_like", ASC_BI_NP_FULL_LIKE},
    {"arange", ASC_BI_NP_ARANGE}, {"linspace", ASC_BI_NP_LINSPACE},
    {"eye", ASC_BI_NP_EYE}, {"identity", ASC_BI_NP_IDENTITY},
    {"reshape", ASC_BI_NP_RESHAPE}, {"transpose", ASC_BI_NP_TRANSPOSE},
    {"swapaxes", ASC_BI_NP_SWAPAXES}, {"moveaxis", ASC_BI_NP_MOVEAXIS},
    {"ravel", ASC_BI_NP_RAVEL}, {"cumsum", ASC_BI_NP_CUMSUM},
    {"cumprod", ASC_BI_NP_CUMPROD},
    {"outer", ASC_BI_NP_OUTER}, {"flip", ASC_BI_NP_FLIP},
    {"flipud", ASC_BI_NP_FLIPUD}, {"fliplr", ASC_BI_NP_FLIPLR},
    {"rot90", ASC_BI_NP_ROT90},
    {"complex64", ASC_BI_DT_COMPLEX64}, {"csingle", ASC_BI_DT_COMPLEX64},
    {"complex128", ASC_BI_DT_COMPLEX128}, {"cdouble", ASC_BI_DT_COMPLEX128},
    {"complex_", ASC_BI_DT_COMPLEX128}, {"conj", ASC_BI_NP_CONJ},
    {"conjugate", ASC_BI_NP_CONJ}, {"angle", ASC_BI_NP_ANGLE},
    {"real", ASC_BI_NP_REAL}, {"imag", ASC_BI_NP_IMAG},
};

/* cmath name -> builtin (cmath's semantics are chosen by the call's
 * namespace: asc__expr_via_cmath) */
static const struct {
  const char *name;
  asc__builtin_id id;
} cmath_alias[] = {
    {"exp", ASC_BI_EXP}, {"log", ASC_BI_LOG}, {"log10", ASC_BI_LOG10},
    {"sqrt", ASC_BI_SQRT}, {"sin", ASC_BI_SIN}, {"cos", ASC_BI_COS},
    {"tan", ASC_BI_TAN}, {"asin", ASC_BI_ASIN}, {"acos", ASC_BI_ACOS},
    {"atan", ASC_BI_ATAN}, {"sinh", ASC_BI_SINH}, {"cosh", ASC_BI_COSH},
    {"tanh", ASC_BI_TANH}, {"asinh", ASC_BI_ASINH}, {"acosh", ASC_BI_ACOSH},
    {"atanh", ASC_BI_ATANH}, {"phase", ASC_BI_CM_PHASE},
    {"polar", ASC_BI_CM_POLAR}, {"rect", ASC_BI_CM_RECT},
    {"isnan", ASC_BI_ISNAN}, {"isinf", ASC_BI_ISINF},
    {"isfinite", ASC_BI_ISFINITE}, {"pi", ASC_BI_PI}, {"e", ASC_BI_E},
    {"inf", ASC_BI_INF}, {"nan", ASC_BI_NAN}, {"infj", ASC_BI_CM_INFJ},
    {"nanj", ASC_BI_CM_NANJ},
};

const char asc__cmath_names[] =
    "exp, log, log10, sqrt, sin, cos, tan, asin, acos, atan, sinh, cosh, "
    "tanh, asinh, acosh, atanh, phase, polar, rect, isnan, isinf, "
    "isfinite, pi, e, inf, nan, infj, nanj";

const asc__builtin *asc__builtin_method(const char *name) {
  for (int id = ASC_BI_NP_SUM; id <= ASC_BI_NP_RESHAPE; id++)
    if (id != ASC_BI_NP_WHERE)
    if (strcmp(entries[id - 1].name, name) == 0)
      return &entries[id - 1];
  for (int id = ASC_BI_NP_TRANSPOSE; id <= ASC_BI_NP_CUMSUM; id++)
    if (strcmp(entries[id - 1].name, name) == 0)
      return &entries[id - 1];
  /* z.conj(), z.conjugate() */
  if (strcmp(name, "conj") == 0 || strcmp(name, "conjugate") == 0)
    return &entries[ASC_BI_NP_CONJ - 1];
  if (strcmp(name, "round") == 0)
    return &entries[ASC_BI_NP_ROUND - 1];
  if (strcmp(name, "argsort") == 0)
    return &entries[ASC_BI_NP_ARGSORT - 1];
  /* a.sort(): a statement of its own only (asc__rewrite_sort_stmt) */
  if (strcmp(name, "sort") == 0)
    return &entries[ASC_BI_NP_SORT - 1];
  if (strcmp(name, "repeat") == 0)
    return &entries[ASC_BI_NP_REPEAT - 1];
  return NULL;
}

const char asc__numpy_names[] =
    "sin, cos, tan, arcsin, arccos, arctan, arctan2, sinh, cosh, tanh, "
    "arcsinh, arccosh, arctanh, exp, exp2, expm1, log, log2, log10, log1p, "
    "sqrt, cbrt, power, floor, ceil, trunc, "
    "fabs, abs, absolute, hypot, fmod, copysign, isnan, isinf, isfinite, "
    "minimum, maximum, fmax, fmin, sign, heaviside, logaddexp, "
    "reciprocal, round, around, pi, e, inf, nan, the reductions sum, "
    "prod, min, "
    "max, amin, amax, mean, var, std, any, all, argmin, argmax, "
    "count_nonzero, isclose, allclose, ptp, nansum, nanprod, nanmean, "
    "cross, "
    "expand_dims, flatnonzero, dot (of "
    "1-D arrays), where, clip, copy, empty, ndarray, zeros, ones, full, "
    "empty_like, zeros_like, ones_like, full_like, arange, linspace, eye, "
    "identity, "
    "reshape, transpose, swapaxes, moveaxis, ravel, flip, flipud, "
    "fliplr, rot90, cumsum, "
    "cumprod, outer, linalg.norm, "
    "linalg.inv, linalg.solve, linalg.cholesky, linalg.det, "
    "linalg.slogdet, linalg.eigh, linalg.eigvalsh, linalg.svd, linalg.qr, "
    "linalg.lstsq, "
    "roll, tile, repeat, concatenate, stack, hstack, vstack, "
    "column_stack, triu, tril, add.outer, subtract.outer, "
    "multiply.outer, average, bincount, searchsorted, digitize, cov, "
    "corrcoef, indices, sort, argsort, median, diff, array, asarray, "
    "einsum, "
    "meshgrid, histogram, histogram_bin_edges, unique, mgrid[...], "
    "ogrid[...], the ufunc methods reduce, accumulate and outer, the "
    "operator ufuncs add, subtract, multiply, divide, less, logical_and, "
    "... and "
    "the dtypes bool_, int8..int64, "
    "uint8..uint64, "
    "float16, float32, float64, complex64, complex128 (and conj, "
    "conjugate, angle, real, imag)";

const asc__builtin *asc__builtin_numpy_sub(const char *sub, const char *name) {
  size_t n = sub != NULL ? strlen(sub) : 0;
  for (int id = ASC_BI_NP_ROLL; id < ASC_NUMPY_FUNCS_END; id++) {
    const char *e = entries[id - 1].name, *dot = strchr(e, '.');
    if (sub == NULL ? dot == NULL && strcmp(e, name) == 0
                    : dot != NULL && (size_t)(dot - e) == n &&
                          memcmp(e, sub, n) == 0 && strcmp(dot + 1, name) == 0)
      return &entries[id - 1];
  }
  if (sub != NULL && strcmp(sub, "linalg") == 0 && strcmp(name, "norm") == 0)
    return &entries[ASC_BI_NP_NORM - 1];
  return NULL;
}

bool asc__builtin_is_numpy_sub(const char *sub) {
  size_t n = strlen(sub);
  if (strcmp(sub, "linalg") == 0)
    return true;
  for (int id = ASC_BI_NP_ROLL; id < ASC_NUMPY_FUNCS_END; id++) {
    const char *e = entries[id - 1].name, *dot = strchr(e, '.');
    if (dot != NULL && (size_t)(dot - e) == n && memcmp(e, sub, n) == 0)
      return true;
  }
  return false;
}

const asc__builtin *asc__builtin_lookup(asc__namespace ns, const char *name) {
  if (ns == ASC_NS_NP) {
    for (size_t i = 0; i < sizeof numpy_alias / sizeof numpy_alias[0]; i++)
      if (strcmp(numpy_alias[i].np, name) == 0)
        return asc__builtin_get(numpy_alias[i].id);
    return asc__builtin_numpy_sub(NULL, name);
  }
  if (ns == ASC_NS_CMATH) {
    for (size_t i = 0; i < sizeof cmath_alias / sizeof cmath_alias[0]; i++)
      if (strcmp(cmath_alias[i].name, name) == 0)
        return asc__builtin_get(cmath_alias[i].id);
    return NULL;
  }
  if (ns == ASC_NS_ASC && strcmp(name, "bool") == 0)
    return asc__builtin_get(ASC_BI_DT_BOOL);
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if ((entries[i].ns & (unsigned)ns) != 0 &&
        strcmp(entries[i].name, name) == 0)
      return &entries[i];
  return NULL;
}

ascDataType asc__builtin_dtype(const asc__builtin *b) {
  switch (b->id) {
  case ASC_BI_DT_BOOL: return ascBool;
  case ASC_BI_DT_INT8: return ascInt8;
  case ASC_BI_DT_INT16: return ascInt16;
  case ASC_BI_DT_INT32: return ascInt32;
  case ASC_BI_DT_INT64: return ascInt64;
  case ASC_BI_DT_UINT8: return ascUInt8;
  case ASC_BI_DT_UINT16: return ascUInt16;
  case ASC_BI_DT_UINT32: return ascUInt32;
  case ASC_BI_DT_UINT64: return ascUInt64;
  case ASC_BI_DT_FLOAT16: return ascFloat16;
  case ASC_BI_DT_BFLOAT16: return ascBFloat16;
  case ASC_BI_DT_FLOAT32: return ascFloat32;
  case ASC_BI_DT_FLOAT64: return ascFloat64;
  case ASC_BI_DT_COMPLEX64: return ascComplex64;
  case ASC_BI_DT_COMPLEX128: return ascComplex128;
  default: return ascDataTypeCount;
  }
}

double asc__builtin_value(const asc__builtin *b) {
  switch (b->id) {
  case ASC_BI_PI: return 3.141592653589793;
  case ASC_BI_E: return 2.718281828459045;
  case ASC_BI_INF: return HUGE_VAL;
  case ASC_BI_NAN: return NAN;
  default: return 0.0;
  }
}

int asc__builtin_param_index(const asc__builtin *b, const char *name) {
  const char *p = b->params;
  size_t n = strlen(name);
  int i = 0;

  while (*p != '\0') {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == n && memcmp(p, name, n) == 0)
      return i;
    if (e == NULL)
      break;
    p = e + 1;
    i++;
  }
  return -1;
}
