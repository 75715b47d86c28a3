/*
 * Launch signatures: the text form ascc reads (--signature) and the driver
 * prints as its specialisation key, and the signature of a launch built
 * from ascLaunchKernel arguments (which the launch has checked).
 *
 *   sig    := [name] '(' [param {',' param} [',']] ')'
 *   param  := dtype ['[' (ndim [':' ('c'|'s')] | dims) ']'] ['=' value]
 *   dims   := dim {',' dim}      numba's array types: ':' per dimension,
 *   dim    := ':' | '::1'        '::1' on the last one for C-contiguous
 *   dtype  := f16 | bf16 | f32 | f64 | i8..i64 | u8..u64 | bool | long names
 *           | int | float                       (weak scalars)
 *   value  := ['-'] digits | float literal | True | False
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/types/types.h"

#define MAX_SIG_PARAMS 256

typedef struct sigp {
  asc__cctx *c;
  const char *text;
  const char *p;
  bool failed;
} sigp;

static void sig_error(sigp *s, const char *at, const char *msg) {
  size_t col = (size_t)(at - s->text);
  if (s->failed)
    return;
  s->failed = true;
  asc__buf_printf(&s->c->diag, "<signature>:1:%zu: error: %s\n    %s\n    ",
                  col + 1, msg, s->text);
  for (size_t i = 0; i < col; i++)
    asc__buf_puts(&s->c->diag, " ");
  asc__buf_puts(&s->c->diag, "^\n");
  s->c->nerrors++;
  if (s->c->diag.oom)
    asc__cctx_throw(s->c, ASC_FAIL_OOM);
}

static void skip_ws(sigp *s) {
  while (*s->p == ' ' || *s->p == '\t')
    s->p++;
}

static bool is_ident(int ch) { return isalnum(ch) || ch == '_'; }

static bool parse_value(sigp *s, asc__sig_param *p) {
  const char *start = s->p;
  char buf[128];
  size_t n = 0;
  char *end;

  while (s->p[n] != '\0' && s->p[n] != ',' && s->p[n] != ')' &&
         s->p[n] != ' ' && s->p[n] != '\t')
    n++;
  if (n == 0 || n >= sizeof buf) {
    sig_error(s, start, "expected a ConstExpr value");
    return false;
  }
  memcpy(buf, start, n);
  buf[n] = '\0';
  s->p += n;
  p->value.dtype = p->dtype;
  p->value.weak = p->weak;
  if (p->dtype == ascBool) {
    if (strcmp(buf, "True") == 0 || strcmp(buf, "1") == 0)
      p->value.value.i = 1;
    else if (strcmp(buf, "False") == 0 || strcmp(buf, "0") == 0)
      p->value.value.i = 0;
    else {
      sig_error(s, start, "a bool value is True or False");
      return false;
    }
    return true;
  }
  errno = 0;
  if (asc__dtype_is_float(p->dtype)) {
    double d = strtod(buf, &end);
    if (*end != '\0' || errno != 0 || isnan(d)) {
      sig_error(s, start, "expected a float value");
      return false;
    }
    p->value.value.f = d;
    return true;
  }
  if (asc__dtype_is_unsigned(p->dtype)) {
    unsigned long long u;
    int bits = asc__dtype_bits(p->dtype);
    if (buf[0] == '-') {
      sig_error(s, start, "an unsigned value cannot be negative");
      return false;
    }
    u = strtoull(buf, &end, 0);
    if (*end != '\0' || errno != 0 ||
        (bits < 64 && u >> bits != 0)) {
      sig_error(s, start, "integer value out of range for its type");
      return false;
    }
    p->value.value.u = u;
    return true;
  }
  {
    long long v = strtoll(buf, &end, 0);
    int bits = asc__dtype_bits(p->dtype);
    if (*end != '\0' || end == buf) {
      sig_error(s, start, "expected an integer value");
      return false;
    }
    if (errno != 0 ||
        (bits < 64 && (v < -(1LL << (bits - 1)) || v >= (1LL << (bits - 1))))) {
      sig_error(s, start, "integer value out of range for its type");
      return false;
    }
    p->value.value.i = v;
  }
  return true;
}

/* After '[': numba's "f32[:, :]" (any layout: strided) or "f32[:, ::1]"
 * (C-contiguous), through the closing ']'. */
static bool parse_dims(sigp *s, asc__sig_param *p) {
  int32_t n = 0;
  bool unit_last = false;

  for (;;) {
    const char *at = s->p;
    if (*s->p != ':') {
      sig_error(s, at, "expected ':' (one per dimension, as in f32[:, :])");
      return false;
    }
    s->p++;
    skip_ws(s);
    unit_last = false;
    if (*s->p == ':') {
      s->p++;
      skip_ws(s);
      if (*s->p != '1') {
        sig_error(s, s->p, "expected '1' (::1 marks the contiguous "
                           "dimension)");
        return false;
      }
      s->p++;
      skip_ws(s);
      unit_last = true;
    }
    if (++n > ASC_MAX_DIMS) {
      sig_error(s, at, "ndim must be between 0 and 8");
      return false;
    }
    if (unit_last && *s->p != ']') {
      sig_error(s, at, "only the last dimension can be ::1 (C order; "
                       "Fortran order is not supported)");
      return false;
    }
    if (*s->p == ']')
      break;
    if (*s->p != ',') {
      sig_error(s, s->p, "expected ',' or ']'");
      return false;
    }
    s->p++;
    skip_ws(s);
  }
  s->p++;
  skip_ws(s);
  p->is_tensor = true;
  p->ndim = n;
  p->contiguous = unit_last;
  return true;
}

static bool parse_param(sigp *s, asc__sig_param *p) {
  const char *start;
  size_t n = 0;

  skip_ws(s);
  start = s->p;
  while (is_ident((unsigned char)s->p[n]))
    n++;
  memset(p, 0, sizeof *p);
  if (n == 3 && memcmp(start, "int", 3) == 0) {
    p->dtype = ascInt64;
    p->weak = true;
  } else if (n == 5 && memcmp(start, "float", 5) == 0) {
    p->dtype = ascFloat64;
    p->weak = true;
  } else if (n == 0 || !asc__dtype_from_name(start, n, &p->dtype)) {
    sig_error(s, start, n == 0 ? "expected a type"
                               : "unknown type (expected f32, i64, bool, "
                                 "int, float, ...)");
    return false;
  }
  s->p += n;
  skip_ws(s);
  if (*s->p == '[') {
    const char *nd;
    long v;
    char *end;
    if (p->weak) {
      sig_error(s, s->p, "a tensor needs a dtype, not int or float");
      return false;
    }
    s->p++;
    skip_ws(s);
    nd = s->p;
    if (*nd == ':')
      return parse_dims(s, p);
    if (!isdigit((unsigned char)*nd)) {
      sig_error(s, nd, "expected the tensor's ndim");
      return false;
    }
    v = strtol(nd, &end, 10);
    if (v < 0 || v > ASC_MAX_DIMS || end - nd > 2) {
      sig_error(s, nd, "ndim must be between 0 and 8");
      return false;
    }
    s->p = end;
    p->is_tensor = true;
    p->ndim = (int32_t)v;
    p->contiguous = true;
    skip_ws(s);
    if (*s->p == ':') {
      s->p++;
      skip_ws(s);
      if (*s->p == 's')
        p->contiguous = false;
      else if (*s->p != 'c') {
        sig_error(s, s->p, "expected 'c' (contiguous) or 's' (strided)");
        return false;
      }
      s->p++;
      skip_ws(s);
    }
    if (*s->p != ']') {
      sig_error(s, s->p, "expected ']'");
      return false;
    }
    s->p++;
    skip_ws(s);
  }
  if (*s->p == '=') {
    if (p->is_tensor) {
      sig_error(s, s->p, "a tensor cannot be a ConstExpr");
      return false;
    }
    s->p++;
    skip_ws(s);
    p->is_constexpr = true;
    if (!parse_value(s, p))
      return false;
    skip_ws(s);
  }
  return true;
}

asc__sig *asc__sig_parse(asc__cctx *c, const char *text) {
  sigp s = {c, text ? text : "", text ? text : "", false};
  asc__sig_param tmp[MAX_SIG_PARAMS];
  asc__sig *sig = asc__arena_alloc(c, sizeof *sig);
  int32_t n = 0;

  skip_ws(&s);
  {
    const char *start = s.p;
    size_t len = 0;
    while (is_ident((unsigned char)s.p[len]))
      len++;
    if (len > 0 && !isdigit((unsigned char)start[0]))
      sig->name = asc__arena_strndup(c, start, len);
    else if (len > 0) {
      sig_error(&s, start, "expected the kernel name");
      return NULL;
    }
    s.p += len;
  }
  skip_ws(&s);
  if (*s.p != '(') {
    sig_error(&s, s.p, "expected '(' after the kernel name");
    return NULL;
  }
  s.p++;
  skip_ws(&s);
  while (*s.p != ')') {
    if (n == MAX_SIG_PARAMS) {
      sig_error(&s, s.p, "too many parameters");
      return NULL;
    }
    if (!parse_param(&s, &tmp[n]))
      return NULL;
    n++;
    if (*s.p == ',') {
      s.p++;
      skip_ws(&s);
    } else if (*s.p != ')') {
      sig_error(&s, s.p, "expected ',' or ')'");
      return NULL;
    }
  }
  s.p++;
  skip_ws(&s);
  if (*s.p != '\0') {
    sig_error(&s, s.p, "unexpected text after ')'");
    return NULL;
  }
  sig->nparams = n;
  sig->params = asc__arena_alloc(c, sizeof *sig->params * (size_t)(n + 1));
  memcpy(sig->params, tmp, sizeof *tmp * (size_t)n);
  return sig;
}

static void format_value(asc__buf *b, const asc__sig_param *p) {
  if (p->dtype == ascBool)
    asc__buf_puts(b, p->value.value.i ? "True" : "False");
  else if (asc__dtype_is_float(p->dtype))
    asc__buf_printf(b, "%a", p->value.value.f);
  else if (asc__dtype_is_unsigned(p->dtype))
    asc__buf_printf(b, "%llu", (unsigned long long)p->value.value.u);
  else
    asc__buf_printf(b, "%lld", (long long)p->value.value.i);
}

/* Copies s to p; returns the end. */
static char *cat(char *p, const char *s) {
  while (*s != '\0')
    *p++ = *s++;
  return p;
}

/* Called at every launch of a kernel from text (the driver's table is
 * keyed by this text): each parameter is put together on the stack and
 * appended in one piece, and only ConstExpr values go through printf. */
void asc__sig_format(asc__buf *b, const asc__sig *sig) {
  _Static_assert(ASC_MAX_DIMS < 10, "ndim is one digit");
  if (sig->name != NULL)
    asc__buf_puts(b, sig->name);
  asc__buf_put(b, "(", 1);
  for (int32_t i = 0; i < sig->nparams; i++) {
    const asc__sig_param *p = &sig->params[i];
    char part[32], *q = part;   /* ", " "bf16" "[8:s]" "=": 14 at most */
    if (i > 0)
      q = cat(q, ", ");
    if (p->weak)
      q = cat(q, asc__dtype_is_float(p->dtype) ? "float" : "int");
    else
      q = cat(q, asc__dtype_short(p->dtype));
    if (p->is_tensor) {
      *q++ = '[';
      *q++ = (char)('0' + p->ndim);
      q = cat(q, p->contiguous ? "]" : ":s]");
    }
    if (p->is_constexpr)
      *q++ = '=';
    asc__buf_put(b, part, (size_t)(q - part));
    if (p->is_constexpr)
      format_value(b, p);
  }
  asc__buf_put(b, ")", 1);
}

static bool param_equal(const asc__sig_param *a, const asc__sig_param *b) {
  if (a->is_tensor != b->is_tensor || a->dtype != b->dtype ||
      a->weak != b->weak || a->is_constexpr != b->is_constexpr)
    return false;
  if (a->is_tensor)
    return a->ndim == b->ndim && a->contiguous == b->contiguous;
  if (!a->is_constexpr)
    return true;
  if (asc__dtype_is_float(a->dtype))
    return memcmp(&a->value.value.f, &b->value.value.f, sizeof(double)) == 0;
  return a->value.value.i == b->value.value.i;
}

bool asc__sig_equal(const asc__sig *a, const asc__sig *b) {
  if (a->nparams != b->nparams)
    return false;
  if ((a->name == NULL) != (b->name == NULL) ||
      (a->name && strcmp(a->name, b->name) != 0))
    return false;
  for (int32_t i = 0; i < a->nparams; i++)
    if (!param_equal(&a->params[i], &b->params[i]))
      return false;
  return true;
}

/* Row-major dense, ignoring the strides of dimensions of extent 1. */
static bool is_contiguous(const ascTensor *t) {
  int64_t want = 1;
  for (int32_t d = 0; d < t->ndim; d++)
    if (t->shape[d] == 0)
      return true;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != want)
      return false;
    if (__builtin_mul_overflow(want, t->shape[d], &want))
      return false;
  }
  return true;
}

/* IEEE binary16 to double, exactly. */
static double half_to_double(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0)
    v = ldexp(m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp(m + 1024, e - 25);
  return sign ? -v : v;
}

static void read_scalar(asc__sig_param *p, const void *arg) {
  switch (p->dtype) {
  case ascBool: p->value.value.i = *(const uint8_t *)arg != 0; break;
  case ascInt8: p->value.value.i = *(const int8_t *)arg; break;
  case ascInt16: p->value.value.i = *(const int16_t *)arg; break;
  case ascInt32: p->value.value.i = *(const int32_t *)arg; break;
  case ascInt64: p->value.value.i = *(const int64_t *)arg; break;
  case ascUInt8: p->value.value.u = *(const uint8_t *)arg; break;
  case ascUInt16: p->value.value.u = *(const uint16_t *)arg; break;
  case ascUInt32: p->value.value.u = *(const uint32_t *)arg; break;
  case ascUInt64: p->value.value.u = *(const uint64_t *)arg; break;
  case ascFloat32: p->value.value.f = *(const float *)arg; break;
  case ascFloat64: p->value.value.f = *(const double *)arg; break;
  case ascFloat16: p->value.value.f = half_to_double(*(const uint16_t *)arg); break;
  case ascBFloat16: {
    uint32_t bits = (uint32_t)*(const uint16_t *)arg << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    p->value.value.f = f;
    break;
  }
  default: break;
  }
}

void asc__sig_of_args(asc__sig *out, asc__sig_param *out_params,
                      const char *kernel_name,
                      const ascKernelParamInfo *params, int32_t nparams,
                      void *const *args) {
  out->name = kernel_name;
  out->nparams = nparams;
  out->params = out_params;
  for (int32_t i = 0; i < nparams; i++) {
    const ascKernelParamInfo *pi = &params[i];
    asc__sig_param *p = &out_params[i];
    memset(p, 0, sizeof *p);
    if (pi->isTensor) {
      const ascTensor *t = args[i];
      p->is_tensor = true;
      p->dtype = t->dtype;
      p->ndim = t->ndim;
      p->contiguous = is_contiguous(t);
    } else if (pi->generic || !asc__dtype_valid(pi->dtype)) {
      const ascScalar *sc = args[i];
      p->dtype = sc->dtype;
      /* A weak bool is bool (docs/types.md). */
      p->weak = sc->weak != 0 && sc->dtype != ascBool;
      p->is_constexpr = pi->isConstExpr != 0;
      if (p->is_constexpr) {
        p->value = *sc;
        p->value.weak = p->weak;
        if (p->dtype == ascBool)
          p->value.value.i = sc->value.i != 0;
      }
    } else {
      p->dtype = pi->dtype;
      p->is_constexpr = pi->isConstExpr != 0;
      if (p->is_constexpr) {
        p->value.dtype = p->dtype;
        read_scalar(p, args[i]);
      }
    }
  }
}

bool asc__sig_from_annotations(asc__cctx *c, const char *name,
                                const ascKernelParamInfo *params,
                                int32_t nparams, asc__sig *out) {
  out->name = name;
  out->nparams = nparams;
  out->params = asc__arena_alloc(c, sizeof *out->params *
                                        (size_t)(nparams + 1));
  for (int32_t i = 0; i < nparams; i++) {
    const ascKernelParamInfo *pi = &params[i];
    asc__sig_param *p = &out->params[i];
    if (pi->generic || pi->isConstExpr || !asc__dtype_valid(pi->dtype))
      return false;
    p->is_tensor = pi->isTensor != 0;
    p->dtype = pi->dtype;
    p->ndim = pi->isTensor ? pi->ndim : 0;
    p->contiguous = true;
  }
  return true;
}

asc__type *asc__sig_param_type(asc__cctx *c, const asc__sig_param *p) {
  if (p->is_tensor)
    return asc__ty_tensor(c, p->dtype, p->ndim, p->contiguous);
  return p->weak ? asc__ty_weak(c, p->dtype) : asc__ty_scalar(c, p->dtype);
}
