/*
 * Constant folding of module-level constants: `N = 64`, `EPS = 1e-6`,
 * `M = N * 2`, `PI2 = math.pi * 2` are frozen at resolution into the
 * numbers kernels read.  Python's semantics: ints are exact (a result that
 * does not fit in int64 is left unfolded, as is a division by zero), `/`
 * is true division, `//` and `%` floor, `and`/`or` yield an operand.
 */
#include <math.h>
#include <string.h>

#include "compiler/front/resolve_int.h"

static bool fold(resolver *r, asc__ast_expr *e, ascScalar *out);

static double as_f(const ascScalar *s) {
  return s->dtype == ascFloat64 ? s->value.f : (double)s->value.i;
}
static void set_i(ascScalar *o, int64_t v) {
  o->dtype = ascInt64;
  o->weak = 1;
  o->value.i = v;
}
static void set_f(ascScalar *o, double v) {
  o->dtype = ascFloat64;
  o->weak = 1;
  o->value.f = v;
}
static void set_b(ascScalar *o, bool v) {
  o->dtype = ascBool;
  o->weak = 1;
  o->value.i = v;
}

static bool fold_binary(asc__binop op, const ascScalar *a, const ascScalar *b,
                        ascScalar *o) {
  bool fl = a->dtype == ascFloat64 || b->dtype == ascFloat64;
  if (op == ASC_BIN_DIV) {
    double d = as_f(b);
    if (d == 0.0)
      return false;
    set_f(o, as_f(a) / d);
    return true;
  }
  if (fl) {
    double x = as_f(a), y = as_f(b), m;
    switch (op) {
    case ASC_BIN_ADD: set_f(o, x + y); return true;
    case ASC_BIN_SUB: set_f(o, x - y); return true;
    case ASC_BIN_MUL: set_f(o, x * y); return true;
    case ASC_BIN_POW: set_f(o, pow(x, y)); return !isnan(o->value.f) || isnan(x) || isnan(y);
    case ASC_BIN_FLOORDIV:
    case ASC_BIN_MOD:
      if (y == 0.0)
        return false;
      m = fmod(x, y);
      if (m != 0.0 && ((m < 0) != (y < 0)))
        m += y;
      if (op == ASC_BIN_MOD)
        set_f(o, m);
      else
        set_f(o, floor((x - m) / y + 0.5));
      return true;
    default:
      return false;
    }
  }
  {
    int64_t x = a->value.i, y = b->value.i, v;
    switch (op) {
    case ASC_BIN_ADD:
      if (__builtin_add_overflow(x, y, &v)) return false;
      break;
    case ASC_BIN_SUB:
      if (__builtin_sub_overflow(x, y, &v)) return false;
      break;
    case ASC_BIN_MUL:
      if (__builtin_mul_overflow(x, y, &v)) return false;
      break;
    case ASC_BIN_FLOORDIV:
    case ASC_BIN_MOD:
      if (y == 0 || (x == INT64_MIN && y == -1))
        return false;
      {
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          q--;
          m += y;
        }
        v = op == ASC_BIN_MOD ? m : q;
      }
      break;
    case ASC_BIN_POW:
      if (y < 0) {
        if (x == 0)
          return false;
        set_f(o, pow((double)x, (double)y));
        return true;
      }
      v = 1;
      for (int64_t i = 0; i < y; i++) {
        if (__builtin_mul_overflow(v, x, &v))
          return false;
        if (v == 0 || v == 1)
          break;
        if (v == -1 && i + 1 < y) {
          v = ((y - i - 1) % 2 == 0) ? -1 : 1;
          break;
        }
      }
      break;
    case ASC_BIN_LSHIFT:
      if (y < 0 || y > 62 || x < 0 || x > (INT64_MAX >> y))
        return false;
      v = x << y;
      break;
    case ASC_BIN_RSHIFT:
      if (y < 0)
        return false;
      v = y > 63 ? (x < 0 ? -1 : 0) : x >> y;
      break;
    case ASC_BIN_BITAND: v = x & y; break;
    case ASC_BIN_BITOR: v = x | y; break;
    case ASC_BIN_BITXOR: v = x ^ y; break;
    default: return false;
    }
    set_i(o, v);
    return true;
  }
}

static bool fold(resolver *r, asc__ast_expr *e, ascScalar *o) {
  ascScalar a, b;
  switch (e->kind) {
  case ASC_EXPR_INT:
    if (e->u.ival > (uint64_t)INT64_MAX)
      return false;
    set_i(o, (int64_t)e->u.ival);
    return true;
  case ASC_EXPR_FLOAT:
    if (e->imag)
      return false; /* a complex constant: not a number here */
    set_f(o, e->u.fval);
    return true;
  case ASC_EXPR_BOOL: set_b(o, e->u.bval); return true;
  case ASC_EXPR_NAME: {
    asc__sym *s = find(r, &r->module, e->u.name.id);
    if (s == NULL || s->kind != ASC_SYM_CONST ||
        !is_num(&s->u.cnst->folded))
      return false;
    e->u.name.sym = s;
    *o = s->u.cnst->folded;
    return true;
  }
  case ASC_EXPR_ATTR: {
    asc__sym *s;
    const asc__builtin *bi;
    asc__namespace ns;
    if (e->u.attr.value->kind != ASC_EXPR_NAME)
      return false;
    s = find(r, &r->module, e->u.attr.value->u.name.id);
    if (s == NULL) {
      const char *n = e->u.attr.value->u.name.id;
      if (strcmp(n, "math") == 0)
        ns = ASC_NS_MATH;
      else if (strcmp(n, "asc") == 0 || strcmp(n, "pyasc") == 0)
        ns = ASC_NS_ASC;
      else
        return false;
    } else if (s->kind == ASC_SYM_MODULE) {
      ns = s->u.module;
    } else {
      return false;
    }
    bi = asc__builtin_lookup(ns, e->u.attr.attr);
    if (bi == NULL || bi->kind != ASC_BK_CONST || bi->id == ASC_BI_CM_INFJ ||
        bi->id == ASC_BI_CM_NANJ)
      return false; /* cmath.infj: a complex constant, not a number here */
    set_f(o, asc__builtin_value(bi));
    return true;
  }
  case ASC_EXPR_UNARY:
    if (!fold(r, e->u.unary.operand, &a))
      return false;
    switch (e->u.unary.op) {
    case ASC_UN_NOT:
      set_b(o, a.dtype == ascFloat64 ? a.value.f == 0.0 : a.value.i == 0);
      return true;
    case ASC_UN_POS:
      if (a.dtype == ascBool)
        set_i(o, a.value.i);
      else
        *o = a;
      return true;
    case ASC_UN_NEG:
      if (a.dtype == ascFloat64)
        set_f(o, -a.value.f);
      else if (a.value.i == INT64_MIN)
        return false;
      else
        set_i(o, -a.value.i);
      return true;
    case ASC_UN_INVERT:
      if (a.dtype == ascFloat64)
        return false;
      set_i(o, ~a.value.i);
      return true;
    }
    return false;
  case ASC_EXPR_BINARY:
    if (!fold(r, e->u.binary.lhs, &a) || !fold(r, e->u.binary.rhs, &b))
      return false;
    return fold_binary(e->u.binary.op, &a, &b, o);
  case ASC_EXPR_BOOLOP: {
    bool t;
    if (!fold(r, e->u.boolop.lhs, &a))
      return false;
    t = a.dtype == ascFloat64 ? a.value.f != 0.0 : a.value.i != 0;
    if (e->u.boolop.is_and ? !t : t) {
      *o = a;
      return true;
    }
    return fold(r, e->u.boolop.rhs, o);
  }
  default:
    return false;
  }
}

bool asc__fold_const(resolver *r, asc__ast_expr *e, ascScalar *out) {
  return fold(r, e, out);
}
