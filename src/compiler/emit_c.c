/*
 * IR -> C.  The output is one translation unit:
 *
 *   kernel_abi.h (pasted)          the ABI, self-contained
 *   runtime helpers                Python //, %, **, bf16, atomics, raise
 *                                  (emit_helpers.h, embedded at build
 *                                  time as asc__emit_helpers: static
 *                                  inline, so unused helpers cost nothing)
 *   per kernel K:
 *     kK_envJ, kK_bodyJ()          one env struct + body function per pfor
 *     kK_<name>()                  the entry (asc_kentry)
 *   asc_module_v1                  the module table
 *
 * Registers become C locals named v<id>_<name> (scalars) or d<id>_<name> /
 * t<id>_<name> (tensor data / descriptor): the id keeps them unique and away
 * from C keywords, the name (already restricted to [A-Za-z0-9_.]) keeps them
 * readable.  User text (kernel names, messages, source lines) only appears
 * inside escaped string literals and comments.
 *
 * This file writes the module, the kernels and their serial loops;
 * emit_ins.c the instructions, emit_pfor.c the parallel loops.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_prelude.h"
#include "emit_helpers_text.h"
#include "gemm_kernel_text.h"
#include "wavefront_text.h"
#include "compiler/emit_c.h"
#include "compiler/emit_int.h"
#include "asc/kernel_abi.h"

/* ------------------------------------------------------------ emitter */

/* Escaped C string literal of user bytes: printable ASCII but '"', '\\'
 * and '?' (trigraphs) as is, everything else as a 3-digit octal escape. */
const char *asc__emit_cstr(emitter *e, const char *s) {
  asc__buf b;
  const char *r;
  asc__buf_init(&b);
  asc__buf_puts(&b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' && *p != '?') {
      asc__buf_put(&b, p, 1);
    } else {
      char oct[8];
      snprintf(oct, sizeof oct, "\\%03o", *p);
      asc__buf_puts(&b, oct);
    }
  }
  asc__buf_puts(&b, "\"");
  if (b.oom) {
    asc__buf_free(&b);
    asc__cctx_throw(e->c, ASC_FAIL_OOM);
  }
  r = asc__arena_strndup(e->c, asc__buf_str(&b), b.len);
  asc__buf_free(&b);
  return r;
}

/* The comment for a Python source line: control characters and non-ASCII
 * become '?', and no "*" "/" pair survives. */
void asc__emit_line_comment(emitter *e, int32_t line) {
  size_t len = 0;
  const char *s = NULL;
  char prev = 0;
  if (line <= 0 || line == e->last_line)
    return;
  e->last_line = line;
  if (e->src && e->src->text && line >= e->src->first_line) {
    if (e->lines.starts == NULL)
      asc__lineidx_init(e->c, &e->lines, e->src->text, e->src->len,
                        e->src->first_line);
    s = asc__lineidx_get(&e->lines, line, &len);
  }
  ind(e);
  out(e, "/* line %d", (int)line);
  if (s != NULL) {
    while (len > 0 && (*s == ' ' || *s == '\t')) {
      s++;
      len--;
    }
    asc__buf_puts(e->o, ": ");
    for (size_t k = 0; k < len && k < 160; k++) {
      char ch = s[k];
      if ((unsigned char)ch < 0x20 || (unsigned char)ch >= 0x7f)
        ch = '?';
      if (ch == '/' && prev == '*')
        asc__buf_puts(e->o, " ");
      asc__buf_put(e->o, &ch, 1);
      prev = ch;
    }
  }
  asc__buf_puts(e->o, " */\n");
}

/* ------------------------------------------------------------ values */

static const char *fconst(emitter *e, double x, bool single) {
  char s[64];
  if (isnan(x))
    return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  if (isinf(x))
    return x < 0 ? (single ? "(-__builtin_inff())" : "(-__builtin_inf())")
                 : (single ? "__builtin_inff()" : "__builtin_inf()");
  for (int p = 1; p <= 17; p++) {
    snprintf(s, sizeof s, "%.*g", p, x);
    if (single ? (float)strtod(s, NULL) == (float)x : strtod(s, NULL) == x)
      break;
  }
  if (strpbrk(s, ".e") == NULL)
    strcat(s, ".0");
  return asc__arena_printf(e->c, "%s%s%s", x < 0 ? "(" : "", s,
                           single ? (x < 0 ? "f)" : "f") : (x < 0 ? ")" : ""));
}

static const char *val(emitter *e, asc__irval v) {
  if (v.kind == ASC_IRV_REG)
    return rname(e, v.reg);
  ASC_CHECK(e->c, v.kind == ASC_IRV_CONST);
  switch (v.dtype) {
  case ascBool:
    return v.c.i ? "1" : "0";
  case ascInt64:
    if (v.c.i == INT64_MIN)
      return "INT64_MIN";
    if (v.c.i >= INT32_MIN && v.c.i <= INT32_MAX)
      return asc__arena_printf(e->c, v.c.i < 0 ? "(%lld)" : "%lld",
                               (long long)v.c.i);
    return asc__arena_printf(e->c, "INT64_C(%lld)", (long long)v.c.i);
  case ascUInt64:
    return asc__arena_printf(e->c, "UINT64_C(%llu)",
                             (unsigned long long)v.c.i);
  case ascFloat64:
    return fconst(e, v.c.f, false);
  case ascFloat32:
    return fconst(e, v.c.f, true);
  case ascComplex64:
  case ascComplex128: /* a real constant (truthiness, reductions) */
    return asc__arena_printf(e->c, "((%s)%s)", ctype(v.dtype),
                             fconst(e, v.c.f, false));
  case ascFloat16:
    return asc__arena_printf(e->c, "((asc_f16)%s)", fconst(e, v.c.f, true));
  case ascBFloat16: {
    float f = (float)v.c.f;
    uint32_t u;
    memcpy(&u, &f, 4);
    return asc__arena_printf(e->c, "((asc_bf16)0x%04x)",
                             (unsigned)(u >> 16));
  }
  default:
    return asc__arena_printf(e->c, "((%s)%lld)", ctype(v.dtype),
                             (long long)v.c.i);
  }
}

/* val, for emit_ins.c and emit_pfor.c. */
const char *asc__emit_val(emitter *e, asc__irval v) { return val(e, v); }

/* ---------------------------------------------------- exception paths */

const char *asc__emit_exc_target(emitter *e) {
  for (int k = e->nframes - 1; k >= 0; k--) {
    frame *fr = &e->frames[k];
    if (fr->kind == F_TRY || fr->kind == F_EXCEPT || fr->kind == F_CRIT)
      fr->used = true;
    if (fr->kind == F_TRY)
      return asc__arena_printf(e->c, "L%d_exc", fr->label);
    if (fr->kind == F_EXCEPT)
      return asc__arena_printf(e->c, "L%d_pending", fr->label);
    if (fr->kind == F_CRIT)
      return asc__arena_printf(e->c, "L%d_crit_exc", fr->label);
  }
  e->raise_used = true;
  return "L_raise";
}

void asc__emit_raise(emitter *e, int kind, int32_t line, const char *msg) {
  LINE(e, "asc_raise(exc, %d /* %s */, %d, %s);", kind, asc__exc_name(kind),
       (int)line, asc__emit_cstr(e, msg));
  LINE(e, "goto %s;", asc__emit_exc_target(e));
}


/* A cancellation poll: a stopped launch unwinds like an exception that
 * no except clause matches. */
void asc__emit_poll(emitter *e, int32_t line) {
  LINE(e, "if (ASC_POLL(asc_stop)) {");
  e->depth++;
  LINE(e, "asc_stopped(exc, %d);", (int)line);
  LINE(e, "goto %s;", asc__emit_exc_target(e));
  e->depth--;
  LINE(e, "}");
}

static void collect_heap(asc__irins *i, void *ctx) {
  emitter *e = ctx;
  if (i->op == ASC_IR_NEW_ARRAY)
    e->heap[i->dst] = 1;
  else if (i->op == ASC_IR_SET_VIEW ||
           (i->op == ASC_IR_SET_ARRAY &&
            !(e->f->regs[i->dst].ty.flags & ASC_IRT_CONTIG)))
    e->heap[i->dst] = 3; /* an array variable: it owns its _s.data */
  else if (i->op == ASC_IR_SET_ARRAY && e->heap[i->dst] != 3)
    e->heap[i->dst] = 2;
}

void asc__emit_release_arrays(emitter *e, asc__regtab *mark) {
  int32_t n;
  const int32_t *rs = asc__regtab_keys(mark, &n);
  for (int32_t k = 0; k < n; k++)
    if ((asc__regtab_get(mark, rs[k]) & 2) && e->heap[rs[k]] == 2)
      LINE(e, "ctx->rt->release(ctx, %s);", rname(e, rs[k]));
    else if ((asc__regtab_get(mark, rs[k]) & 2) && e->heap[rs[k]] == 3)
      LINE(e, "ctx->rt->release(ctx, %s_s.data);", tname(e, rs[k]));
}

static void collect_def(asc__irins *i, void *ctx) {
  emitter *e = ctx;
  if (i->dst >= 0 && e->f->regs[i->dst].ndefs == 1 &&
      i->op != ASC_IR_FOR && i->op != ASC_IR_PFOR)
    e->def[i->dst] = i;
}

/* C99's complex functions, declared (not <complex.h>, whose macros `I`
 * and `complex` would clash with register names) when a kernel of m has a
 * complex register. */
static void emit_complex_decls(emitter *e, const asc__irmodule *m) {
  static const char *const fns[] = {"sin",  "cos",   "tan",   "sinh",
                                    "cosh", "tanh",  "exp",   "log",
                                    "sqrt", "asin",  "acos",  "atan",
                                    "asinh", "acosh", "atanh"};
  bool any = false;
  for (int32_t k = 0; k < m->nfuncs && !any; k++)
    for (int32_t r = 0; r < m->funcs[k]->nregs && !any; r++)
      any = asc__dt_is_complex(m->funcs[k]->regs[r].ty.dtype);
  if (!any)
    return;
  for (int t = 0; t < 2; t++) {
    const char *ty = t ? "float _Complex" : "double _Complex";
    const char *fs = t ? "f" : "";
    const char *re = t ? "float" : "double";
    for (size_t k = 0; k < ASC_ARRAY_SIZE(fns); k++)
      out(e, "%s c%s%s(%s);\n", ty, fns[k], fs, ty);
    out(e, "%s cpow%s(%s, %s);\n", ty, fs, ty, ty);
    out(e, "%s conj%s(%s);\n", ty, fs, ty);
    out(e, "%s cabs%s(%s);\n%s carg%s(%s);\n", re, fs, ty, re, fs, ty);
    /* The textbook product, as CPython computes it (and numpy where its
     * loops do not fuse a multiply and an add): C's `*` recovers
     * infinities from a nan result (Annex G) through a library call that
     * keeps loops of complex products from vectorising.  ar * br + ai *
     * -bi is ar * br - ai * bi for every number; written as a sum, gcc
     * 12's vectoriser does not turn it into vfmaddsub (one rounding for a
     * product and the subtraction, despite -ffp-contract=off).  Only when
     * optimising: gcc then folds the sum back into the difference, whose
     * nan keeps the operand's sign, as CPython's does; unoptimised code
     * (the quick tier) computed -bi and gave a nan bi's sign flipped
     * ((0+infj) * (0+nanj), test_mask_gather.py). */
    out(e, "static inline %s asc_cmul%s(%s a, %s b) {\n"
           "  %s ar = __real__ a, ai = __imag__ a, br = __real__ b,\n"
           "    bi = __imag__ b;\n"
           "#ifdef __OPTIMIZE__\n"
           "  return __builtin_complex(ar * br + ai * -bi, ar * bi + ai * br);\n"
           "#else\n"
           "  return __builtin_complex(ar * br - ai * bi, ar * bi + ai * br);\n"
           "#endif\n"
           "}\n",
        ty, fs, ty, ty, re);
    /* |z| as sqrt(re * re + im * im), scaled by a power of two where the
     * squares would overflow or lose bits: no library call, so loops of
     * abs(z) vectorise; within 1.2 ulp of the exact result (libm's hypot
     * is within 1), hypot's special values (inf with a nan is inf).
     * complex64 computes in double, then rounds. */
    if (t)
      out(e, "static inline float asc_cabsf(float _Complex z) {\n"
             "  double x = __builtin_fabs(__real__ z), "
             "y = __builtin_fabs(__imag__ z);\n"
             "  return x == __builtin_inf() || y == __builtin_inf() ? "
             "__builtin_inff() : (float)__builtin_sqrt(x * x + y * y);\n}\n");
    else
      out(e, "static inline double asc_cabs(double _Complex z) {\n"
             "  double x = __builtin_fabs(__real__ z), "
             "y = __builtin_fabs(__imag__ z);\n"
             "  double m = x > y ? x : y;\n"
             "  double s = m > 0x1p500 ? 0x1p-600 : m < 0x1p-500 ? 0x1p600 : 1.0;"
             "\n"
             "  double u = m > 0x1p500 ? 0x1p600 : m < 0x1p-500 ? 0x1p-600 : 1.0;"
             "\n"
             "  double xs = x * s, ys = y * s;\n"
             "  double r = __builtin_sqrt(xs * xs + ys * ys) * u;\n"
             "  return x == __builtin_inf() || y == __builtin_inf() ? "
             "__builtin_inf() : r;\n}\n");
    /* z ** n for small integral n: products, from the lowest set bit of
     * n up (z * z for z ** 2, numpy's square, z * (z * z) for z ** 3) */
    out(e, "static inline %s asc_cpow%s(%s a, %s b) {\n"
           "  if (__imag__ b == 0 && __real__ b == (int)__real__ b &&\n"
           "      __real__ b >= 0 && __real__ b <= 100) {\n"
           "    %s r = a;\n"
           "    int n = (int)__real__ b;\n"
           "    if (n == 0)\n"
           "      return 1;\n"
           "    for (; !(n & 1); n >>= 1)\n"
           "      r = asc_cmul%s(r, r);\n"
           "    for (%s x = r; n >>= 1;) {\n"
           "      x = asc_cmul%s(x, x);\n"
           "      if (n & 1)\n"
           "        r = asc_cmul%s(r, x);\n"
           "    }\n"
           "    return r;\n"
           "  }\n"
           "  return cpow%s(a, b);\n}\n",
        ty, fs, ty, ty, ty, fs, ty, fs, fs, fs);
    /* Smith's division, without C99's recovery of infinities, so that
     * (1+1j) / complex(inf, inf) is nan+nanj as in CPython and numpy.
     * asc_cdiv divides by the denominator, as CPython does (a kernel's
     * complex scalars keep Python's bits); asc_cdiv_np multiplies by its
     * reciprocal, as numpy's arrays do.  A zero divisor gives numpy's
     * (a.real / 0, a.imag / 0) where Python raises. */
    out(e, "static inline %s asc_cdiv%s(%s a, %s b, int np) {\n"
           "  %s ar = __real__ a, ai = __imag__ a, br = __real__ b,\n"
           "    bi = __imag__ b, abr = __builtin_fabs%s(br),\n"
           "    abi = __builtin_fabs%s(bi), t, d, re, im;\n"
           "  if (abr >= abi) {\n"
           "    if (abr == 0)\n"
           "      return __builtin_complex(ar / abr, ai / abr);\n"
           "    t = bi / br;\n"
           "    d = br + bi * t;\n"
           "    re = ar + ai * t;\n"
           "    im = ai - ar * t;\n"
           "  } else if (abi >= abr || np) {\n"
           "    t = br / bi;\n"
           "    d = br * t + bi;\n"
           "    re = ar * t + ai;\n"
           "    im = ai * t - ar;\n"
           "  } else {\n"
           "    return __builtin_complex((%s)NAN, (%s)NAN);\n"
           "  }\n"
           "  if (np) {\n"
           "    d = 1 / d;\n"
           "    return __builtin_complex(re * d, im * d);\n"
           "  }\n"
           "  return __builtin_complex(re / d, im / d);\n}\n",
        ty, fs, ty, ty, re, fs, fs, re, re);
  }
  /* CPython's cmath.rect(r, phi), its special values included */
  out(e, "static inline double _Complex asc_crect(double r, double phi) {\n"
         "  double re, im;\n"
         "  if (__builtin_isnan(r)) {\n"
         "    re = r;\n"
         "    im = phi == 0 ? 0.0 : r;\n"
         "  } else if (r == 0 && !__builtin_isfinite(phi)) {\n"
         "    re = 0.0;\n"
         "    im = 0.0;\n"
         "  } else if (__builtin_isinf(r) && __builtin_isnan(phi)) {\n"
         "    re = __builtin_inf();\n"
         "    im = phi;\n"
         "  } else if (phi == 0) {\n"
         "    re = r;\n"
         "    im = __builtin_isinf(r) ? (r > 0 ? phi : -phi) : r * phi;\n"
         "  } else {\n"
         "    re = r * __builtin_cos(phi);\n"
         "    im = r * __builtin_sin(phi);\n"
         "  }\n"
         "  return __builtin_complex(re, im);\n}\n");
}

static void mark_stored(asc__irins *i, void *ctx) {
  if (i->op == ASC_IR_STORE && i->args[0].kind == ASC_IRV_REG)
    asc__regtab_set(ctx, i->args[0].reg, 1);
}

/* A loop the wavefront pass marked (passes/wavefront.c): when every
 * tensor its sweeps store has rows apart from one another, asc_wavefront
 * (wavefront.h) runs the sweeps' bodies a row at a time, in parallel; else
 * the plain loop, serially where the user wrote `range`. */
void asc__emit_wavefront(emitter *e, const asc__irins *T, const char *ity) {
  const asc__irfunc *f = e->f;
  const char *K = asc__emit_kname(e);
  int L = e->labels++, ns = 0;
  int J[32];
  asc__regtab stored;
  const int32_t *ts;
  int32_t nts;
  asc__regtab_init(e->c, &stored, 0);
  for (const asc__irins *s = T->body[0].first; s; s = s->next) {
    if (ns == 32 || (s->op != ASC_IR_FOR && s->op != ASC_IR_PFOR) ||
        s->wave != ASC_WAVE_SWEEP) {
      asc__emit_for(e, T, rname(e, T->dst), ity);
      return;
    }
    ns++;
    asc__ir_walk(&s->body[0], mark_stored, &stored);
  }
  LINE(e, "{ /* wavefront: the loop at line %d, its sweeps a row at a "
          "time */", (int)T->line);
  e->depth++;
  LINE(e, "int wf%d_ok = 1;", L);
  ts = asc__regtab_keys(&stored, &nts);
  for (int32_t k = 0; k < nts; k++)
    LINE(e, "wf%d_ok &= asc_wf_rows_apart(%s);", L, tname(e, ts[k]));
  LINE(e, "if (wf%d_ok) {", L);
  e->depth++;
  ns = 0;
  for (const asc__irins *s = T->body[0].first; s; s = s->next)
    J[ns++] = asc__emit_pfor_env(e, s, "wenv");
  LINE(e, "const asc_wf_sweep wf%d_sw[%d] = {", L, ns);
  for (int k = 0; k < ns; k++)
    LINE(e, "  {%s_body%d, &wenv%d},", K, J[k], J[k]);
  LINE(e, "};");
  LINE(e, "int64_t wf%d_row = 0;", L);
  for (int32_t k = 0; k < nts; k++)
    LINE(e, "wf%d_row += (int64_t)sizeof(%s) * "
            "asc_wf_abs(%s->strides[0]);",
         L, ctype(f->regs[ts[k]].ty.dtype), tname(e, ts[k]));
  LINE(e, "if (asc_wavefront(ctx, wf%d_sw, %d, asc_trip(%s, %s, %s), "
          "wenv%d.n, %d, wf%d_row, exc) != 0)",
       L, ns, val(e, T->args[0]), val(e, T->args[1]), val(e, T->args[2]),
       J[0], (int)T->wave - 1, L);
  LINE(e, "  goto %s;", asc__emit_exc_target(e));
  e->depth--;
  LINE(e, "} else {");
  e->depth++;
  asc__emit_for(e, T, rname(e, T->dst), ity);
  e->depth--;
  LINE(e, "}");
  e->depth--;
  LINE(e, "}");
}

static void wave_mark(asc__irins *i, void *ctx) {
  bool *any = ctx;
  if (i->op == ASC_IR_FOR && i->wave != 0 && i->wave != ASC_WAVE_SWEEP)
    *any = true;
}

/* wavefront.h's text, only in a module with a wavefront loop. */
static void emit_wavefront_text(emitter *e, const asc__irmodule *m) {
  bool any = false;
  for (int32_t k = 0; k < m->nfuncs && !any; k++)
    asc__ir_walk(&m->funcs[k]->body, wave_mark, &any);
  if (!any)
    return;
  out(e, "#define ASC_NEED_WAVEFRONT 1\n");
  asc__buf_puts(e->o, asc__wavefront);
}

/* Does instruction i call asc_gemm_exact_f32/f64 (gemm_kernel.h): the op
 * of a recognised naive matrix product (passes/gemmrec.c)? */
static bool is_gemm_exact(const asc__irins *i) {
  return i->op == ASC_IR_GEMM_EXACT;
}

static void gemm_mark(asc__irins *i, void *ctx) {
  bool *any = ctx;
  if (is_gemm_exact(i))
    *any = true;
}

/* gemm_kernel.h's text (the exact register-blocked product,
 * docs/optimizer.md, "Exact GEMM micro-kernel"), only in a module whose
 * functions call it: a few hundred lines each kernel would otherwise
 * compile for nothing.  The text is guarded by ASC_NEED_GEMM_EXACT. */
static void emit_gemm_exact(emitter *e, const asc__irmodule *m) {
  bool any = false;
  for (int32_t k = 0; k < m->nfuncs && !any; k++)
    asc__ir_walk(&m->funcs[k]->body, gemm_mark, &any);
  if (!any)
    return;
  out(e, "#define ASC_NEED_GEMM_EXACT 1\n");
  asc__buf_puts(e->o, asc__gemm_kernel);
}

const char *asc__emit_ident_of(emitter *e, int op, int dt) {
  bool fl = asc__dt_is_float(dt);
  asc__irval v;
  switch (op) {
  case ASC_IR_MUL:
    v = fl ? asc__irv_float(dt, 1.0) : asc__irv_int(dt, 1);
    break;
  case ASC_IR_MIN:
    if (fl)
      v = asc__irv_float(dt, INFINITY);
    else
      v = asc__irv_int(dt, asc__dt_is_signed(dt)
                               ? (int64_t)((UINT64_C(1) << (asc__dt_bits(dt) - 1)) - 1)
                               : -1);
    break;
  case ASC_IR_MAX:
    if (fl)
      v = asc__irv_float(dt, -INFINITY);
    else
      v = asc__irv_int(dt, asc__dt_is_signed(dt)
                               ? -(int64_t)((UINT64_C(1) << (asc__dt_bits(dt) - 1)) - 1) - 1
                               : 0);
    break;
  case ASC_IR_AND:
    v = asc__irv_int(dt, -1);
    break;
  default:
    v = fl ? asc__irv_float(dt, 0.0) : asc__irv_int(dt, 0);
    break;
  }
  return val(e, v);
}

/* True when the counted loop i certainly spans at most limit (constant
 * bounds), or the lowering marked it short: it needs no poll of its
 * own. */
static bool short_loop(const asc__irins *i, uint64_t limit) {
  const asc__irval *a = i->args;
  uint64_t span;
  if (i->op == ASC_IR_FOR && i->nimm == 1 && i->imm[0] >= 0 &&
      i->imm[0] <= ASC_IR_SHORT_SPAN)
    return true; /* marked short by the lowering */
  if (a[0].kind != ASC_IRV_CONST || a[1].kind != ASC_IRV_CONST ||
      a[2].kind != ASC_IRV_CONST || a[2].c.i == 0)
    return false;
  span = a[2].c.i > 0 ? (uint64_t)a[1].c.i - (uint64_t)a[0].c.i
                      : (uint64_t)a[0].c.i - (uint64_t)a[1].c.i;
  /* a negative span (empty loop) reads as huge: chunked, still right */
  return span <= limit;
}


/* Opens a serial counted loop plainly, with a poll at the top of every
 * iteration if `poll`.  Where polls go is explained at emit_for. */
static void emit_for_header(emitter *e, const asc__irins *i, const char *iv,
                            const char *ity, bool poll) {
  asc__irval step = i->args[2];
  int L = e->labels++;
  const char *hi = asc__arena_printf(e->c, "e%d", L);
  const char *lo = val(e, i->args[0]), *up = val(e, i->args[1]);

  if (step.kind == ASC_IRV_CONST && step.c.i > 0)
    LINE(e, "for (%s %s = %s, %s = %s; %s < %s; %s += %s) {", ity, iv, lo,
         hi, up, iv, hi, iv, val(e, step));
  else if (step.kind == ASC_IRV_CONST)
    LINE(e, "for (%s %s = %s, %s = %s; %s > %s; %s += %s) {", ity, iv, lo,
         hi, up, iv, hi, iv, val(e, step));
  else
    LINE(e, "for (%s %s = %s, %s = %s, s%d = %s; s%d > 0 ? %s < %s : %s > "
            "%s; %s += s%d) {",
         ity, iv, lo, hi, up, L, val(e, step), L, iv, hi, iv, hi, iv, L);
  if (poll) {
    e->depth++;
    asc__emit_poll(e, i->line);
    e->depth--;
  }
}

/* Opens the chunked copy of an innermost loop (label L): an outer loop
 * over chunks of ASC_POLL_CHUNK iterations around the user's loop, which
 * stays vectorisable.  close_chunks closes it. */
static void emit_chunk_header(emitter *e, const asc__irins *i, int L,
                              const char *iv, const char *ity,
                              const char *n) {
  asc__irval step = i->args[2];
  const char *lo = val(e, i->args[0]), *up = val(e, i->args[1]);

  if (step.kind == ASC_IRV_CONST && step.c.i > 0) {
    LINE(e, "for (%s %s = %s, e%d = %s; %s < e%d;) {", ity, iv, lo, L, up,
         iv, L);
    e->depth++;
    LINE(e, "const %s c%d = ASC_CHUNK_UP(%s, %s, e%d, %s);", ity, L, ity, iv,
         L, n);
    LINE(e, "for (; %s < c%d; %s += %s) {", iv, L, iv, val(e, step));
  } else if (step.kind == ASC_IRV_CONST) {
    LINE(e, "for (%s %s = %s, e%d = %s; %s > e%d;) {", ity, iv, lo, L, up,
         iv, L);
    e->depth++;
    LINE(e, "const %s c%d = ASC_CHUNK_DOWN(%s, %s, e%d, %s);", ity, L, ity,
         iv, L, n);
    LINE(e, "for (; %s > c%d; %s += %s) {", iv, L, iv, val(e, step));
  } else {
    LINE(e, "for (%s %s = %s, e%d = %s, s%d = %s; s%d > 0 ? %s < e%d : %s > "
            "e%d;) {",
         ity, iv, lo, L, up, L, val(e, step), L, iv, L, iv, L);
    e->depth++;
    LINE(e, "const %s c%d = s%d > 0 ? ASC_CHUNK_UP(%s, %s, e%d, %s) : "
            "ASC_CHUNK_DOWN(%s, %s, e%d, %s);",
         ity, L, L, ity, iv, L, n, ity, iv, L, n);
    LINE(e, "for (; s%d > 0 ? %s < c%d : %s > c%d; %s += s%d) {", L, iv, L,
         iv, L, iv, L);
  }
}

/* After the user's loop of a chunked copy: the poll between chunks, when
 * the chunk was cut short, and the end of the chunk loop. */
static void close_chunks(emitter *e, const asc__irins *i, int L) {
  LINE(e, "if (c%d != e%d && ASC_POLL(asc_stop)) {", L, L);
  e->depth++;
  LINE(e, "asc_stopped(exc, %d);", (int)i->line);
  LINE(e, "goto %s;", asc__emit_exc_target(e));
  e->depth--;
  LINE(e, "}");
  e->depth--;
  LINE(e, "}");
}

/* The condition under which loop i spans more than n. */
static const char *long_cond(emitter *e, const asc__irins *i,
                             const char *n) {
  asc__irval step = i->args[2];
  const char *lo = val(e, i->args[0]), *up = val(e, i->args[1]);
  const char *upc = asc__arena_printf(e->c, "ASC_LONG(%s, %s, %s)", lo, up, n);
  const char *dnc = asc__arena_printf(e->c, "ASC_LONG(%s, %s, %s)", up, lo, n);
  if (step.kind == ASC_IRV_CONST)
    return step.c.i > 0 ? upc : dnc;
  return asc__arena_printf(e->c, "(%s > 0 ? %s : %s)", val(e, step), upc,
                           dnc);
}

/* Emits `if (asc_work_due(&asc_work, w) && poll) { stop }`. */
static void emit_work_due(emitter *e, const char *w, int32_t line) {
  LINE(e, "if (asc_work_due(&asc_work, %s) && ASC_POLL(asc_stop)) {", w);
  e->depth++;
  LINE(e, "asc_stopped(exc, %d);", (int)line);
  LINE(e, "goto %s;", asc__emit_exc_target(e));
  e->depth--;
  LINE(e, "}");
}

/* Are loop l's bounds free of the registers in defs? */
static bool bounds_outside(const asc__irins *l, const asc__regtab *defs) {
  for (int k = 0; k < 2; k++)
    if (l->args[k].kind == ASC_IRV_REG &&
        asc__regtab_get(defs, l->args[k].reg))
      return false;
  return true;
}

static const char *span_of(emitter *e, const asc__irins *l) {
  return asc__arena_printf(e->c, "asc_wspan((int64_t)%s, (int64_t)%s)",
                           val(e, l->args[0]), val(e, l->args[1]));
}

/* The work of one pass through b, as a C expression: 1, plus the
 * iterations of the counted loops in it (those whose bounds defs does not
 * hold: the loop that counts them assigns nothing they read), each times
 * the work of its body.  While loops and other loops count themselves. */
static const char *block_work(emitter *e, const asc__irblock *b,
                              const asc__regtab *defs) {
  const char *w = "1";
  for (const asc__irins *i = b->first; i; i = i->next) {
    bool loop = i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR;
    if (i->op == ASC_IR_LOOP || (loop && !bounds_outside(i, defs)))
      continue;
    if (loop)
      w = asc__arena_printf(e->c, "asc_wadd(%s, asc_wmul(%s, %s))", w,
                            span_of(e, i), block_work(e, &i->body[0], defs));
    else
      for (int k = 0; k < asc__ir_nregions(i); k++)
        w = asc__arena_printf(e->c, "asc_wadd(%s, %s)", w,
                              block_work(e, &i->body[k], defs));
  }
  return w;
}

/* How loop i counts its work towards the next poll when it is nested in
 * another serial loop of the C function being emitted:
 *  - a loop whose bounds the counting loop around it (e->work_loop) does
 *    not assign is counted by that loop (block_work): nothing;
 *  - a loop that holds loops computes, on entry, the work of one
 *    iteration (w<k>: 1 + the iterations of the loops it holds) and of
 *    all of them (q<k>), counts q<k>, and counts the loops it holds;
 *    emit_for runs it in chunks of ASC_POLL_WORK work;
 *  - an innermost loop two or more loops deep counts its iterations on
 *    entry (shallower ones run in chunks when long, emit_for).
 * Loops with constant bounds spanning at most 64 count nothing, so a
 * nest of short loops (a 3x3 window) pays nothing per inner iteration.
 * Returns k for a loop that holds loops, else -1; *defs then holds the
 * registers its body assigns. */
static int emit_work(emitter *e, const asc__irins *i, asc__regtab *defs) {
  int k;
  if (e->sdepth == 0 || short_loop(i, 64) ||
      (e->work_loop != NULL && bounds_outside(i, e->work_defs)))
    return -1;
  if (!asc__ir_has_loop(&i->body[0])) {
    if (e->sdepth >= 2)
      emit_work_due(e, asc__arena_printf(e->c, "%s + 1", span_of(e, i)),
                    i->line);
    return -1;
  }
  asc__regtab_init(e->c, defs, 0);
  asc__ir_defined_in(&i->body[0], defs);
  asc__regtab_set(defs, i->dst, 1);
  k = e->labels++;
  LINE(e, "const int64_t w%d = %s;", k, block_work(e, &i->body[0], defs));
  LINE(e, "const int64_t q%d = asc_wmul(%s, w%d);", k, span_of(e, i), k);
  emit_work_due(e, asc__arena_printf(e->c, "q%d", k), i->line);
  return k;
}

/* The body of loop i; when i counts work (emit_work), the loops in it are
 * counted by i. */
static void emit_for_body(emitter *e, const asc__irins *i, bool counts,
                          asc__regtab *defs) {
  const asc__irins *wl = e->work_loop;
  asc__regtab *wd = e->work_defs;
  if (counts) {
    e->work_loop = i;
    e->work_defs = defs;
  }
  e->sdepth++;
  asc__emit_block(e, &i->body[0]);
  e->sdepth--;
  e->work_loop = wl;
  e->work_defs = wd;
}

/* Loop i as an outer loop over chunks of n iterations (label L) around
 * the loop itself, with a poll between chunks; true when a break leaves
 * it. */
static bool emit_chunked(emitter *e, const asc__irins *i, int L,
                         const char *iv, const char *ity, const char *n,
                         bool counts, asc__regtab *defs) {
  bool brk;
  emit_chunk_header(e, i, L, iv, ity, n);
  e->depth++;
  push(e, F_LOOP, L, i);
  emit_for_body(e, i, counts, defs);
  brk = e->frames[--e->nframes].used;
  e->depth--;
  LINE(e, "}");
  close_chunks(e, i, L);
  return brk;
}

/* A loop that counts work (emit_work: k), in chunks of ASC_POLL_WORK work
 * with a poll between them, or in one chunk when it does less.  Emitted
 * once: it holds loops, so the chunk loop around it costs a compare per
 * entry, and a second, plain copy would only double the code of every
 * nest three or more loops deep. */
static void emit_for_work(emitter *e, const asc__irins *i, const char *iv,
                          const char *ity, int k, asc__regtab *defs) {
  int L = e->labels++;
  bool brk;
  const char *n = asc__arena_printf(e->c, "n%d", L);
  LINE(e, "{ /* in chunks of ASC_POLL_WORK work, polling between them */");
  e->depth++;
  LINE(e, "const uint64_t %s = __builtin_expect(q%d >= ASC_POLL_WORK, 0) "
          "? (uint64_t)(ASC_POLL_WORK / w%d) : UINT64_MAX;", n, k, k);
  brk = emit_chunked(e, i, L, iv, ity, n, true, defs);
  e->depth--;
  LINE(e, "}");
  if (brk)
    LINE(e, "L%d_brk:;", L);
}

/* A serial counted loop.  Where polls go (docs/abi.md), counting depth
 * in the serial loops of the C function being emitted (a kernel entry or
 * a parallel-loop body):
 *  - an outermost loop (depth 0) whose body holds a loop, and an
 *    innermost loop at depth 0 or 1, are emitted twice: as written, taken
 *    when the loop spans at most n iterations (no poll: a short loop pays
 *    one compare at entry), and in chunks of n iterations with a poll
 *    between them, taken when it is longer; n is ASC_POLL_OUTER (64) for
 *    the outer loop, ASC_POLL_CHUNK (65536) for the innermost one, whose
 *    chunks stay vectorisable.  A loop with constant bounds spanning at
 *    most n is emitted once.  The plain copy is in `#if ASC_TWO_COPIES`
 *    (emit_helpers.h): an unoptimised build (the quick tier's -O0) has
 *    the chunked copy alone, which is right for any span, and half the
 *    text to compile;
 *  - the loops nested in others count their work towards the next poll
 *    on entry (emit_work), and those of them that hold loops run in
 *    chunks of ASC_POLL_WORK work (emit_for_work), so that a loop running
 *    a million short nests (np.cumsum of each row, called in a loop)
 *    polls as often as one long loop, for a few operations per nest. */
void asc__emit_for(emitter *e, const asc__irins *i, const char *iv,
                   const char *ity) {
  bool outer = asc__ir_has_loop(&i->body[0]);
  const char *n = outer ? "ASC_POLL_OUTER" : "ASC_POLL_CHUNK";
  int L = -1;
  bool brk = false;
  asc__regtab defs;
  int k = emit_work(e, i, &defs);

  if (k >= 0) {
    emit_for_work(e, i, iv, ity, k, &defs);
    return;
  }
  if (outer ? e->sdepth == 0 && !short_loop(i, 64)
            : e->sdepth <= 1 && !short_loop(i, 65536)) {
    L = e->labels++;
    LINE(e, "#if ASC_TWO_COPIES");
    LINE(e, "if (%s) { /* long: in chunks, polling between them */",
         long_cond(e, i, n));
    LINE(e, "#else");
    LINE(e, "{");
    LINE(e, "#endif");
    e->depth++;
    brk = emit_chunked(e, i, L, iv, ity, n, false, &defs);
    e->depth--;
    LINE(e, "#if ASC_TWO_COPIES");
    LINE(e, "} else {");
    e->depth++;
  }
  emit_for_header(e, i, iv, ity, false);
  e->depth++;
  push(e, F_LOOP, L, i);
  emit_for_body(e, i, false, &defs);
  brk |= e->frames[--e->nframes].used;
  e->depth--;
  LINE(e, "}");
  if (L >= 0) {
    e->depth--;
    LINE(e, "}");
    LINE(e, "#else");
    LINE(e, "}");
    LINE(e, "#endif");
    if (brk)
      LINE(e, "L%d_brk:;", L);
  }
}


void asc__emit_scan(const asc__irblock *b, asc__regtab *mark,
                    asc__regtab *isiv, bool pfor_bodies) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->dst >= 0)
      *asc__regtab_ref(mark, i->dst) |= 3;
    if (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR)
      asc__regtab_set(isiv, i->dst, 1);
    for (int32_t k = 0; k < i->nargs; k++)
      if (i->args[k].kind == ASC_IRV_REG)
        *asc__regtab_ref(mark, i->args[k].reg) |= 1;
    for (int32_t k = 0; k < i->nred; k++)
      *asc__regtab_ref(mark, i->red[k].reg) |= 3;
    if (i->op == ASC_IR_PFOR && !pfor_bodies)
      continue;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      asc__emit_scan(&i->body[k], mark, isiv, pfor_bodies);
  }
}

const asc__irins *asc__emit_array_def(const asc__irblock *b, int32_t r) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if ((i->op == ASC_IR_LOCAL_ARRAY || i->op == ASC_IR_SHARED_ARRAY) &&
        i->dst == r)
      return i;
    for (int k = 0; k < asc__ir_nregions(i); k++) {
      const asc__irins *x = asc__emit_array_def(&i->body[k], r);
      if (x)
        return x;
    }
  }
  return NULL;
}

/* Declares a local array or shared buffer and its shape/strides arrays. */
static void declare_array(emitter *e, int32_t r) {
  const asc__irins *a;
  const asc__irreg *g = &e->f->regs[r];
  int64_t total = 1;
  if (e->heap[r]) {
    /* an array the kernel creates: its data and its descriptor */
    LINE(e, "%s *%s = NULL;", ctype(g->ty.dtype), rname(e, r));
    /* zeroed: a name read before any array was bound to it reads an
     * empty array (docs/arrays.md) */
    LINE(e, "asc_ktensor %s_s = {0};", tname(e, r));
    LINE(e, "const asc_ktensor *%s = &%s_s; (void)%s;", tname(e, r),
         tname(e, r), tname(e, r));
    return;
  }
  a = asc__emit_array_def(&e->f->body, r);
  ASC_CHECK(e->c, a != NULL);
  for (int32_t k = 0; k < a->nimm; k++)
    total *= a->imm[k];
  if (a->op == ASC_IR_LOCAL_ARRAY)
    LINE(e, "_Alignas(64) %s %s[%lld]%s;", ctype(g->ty.dtype), rname(e, r),
         (long long)total,
         g->nuses <= 1 ? " __attribute__((unused))" : "");
  else
    LINE(e, "%s *restrict %s = (%s *)__builtin_assume_aligned("
            "(char *)ctx->shared + %lld, 64);",
         ctype(g->ty.dtype), rname(e, r), ctype(g->ty.dtype),
         (long long)e->shared_off[r]);
}

static void assign_shared(asc__irins *i, void *ctx) {
  emitter *e = ctx;
  if (i->op == ASC_IR_SHARED_ARRAY) {
    int64_t total = (int64_t)ascDataTypeSize(e->f->regs[i->dst].ty.dtype);
    for (int32_t k = 0; k < i->nimm; k++)
      total *= i->imm[k];
    e->shared_off[i->dst] = (int64_t)e->shared_bytes;
    e->shared_bytes += ((uint64_t)total + 63u) & ~(uint64_t)63u;
  }
}

void asc__emit_declare_scalars(emitter *e, asc__regtab *mark,
                               const asc__regtab *isiv,
                               const asc__irins *skip_red) {
  const asc__irfunc *f = e->f;
  int32_t n;
  const int32_t *rs = asc__regtab_keys(mark, &n);
  for (int32_t q = 0; q < n; q++) {
    int32_t r = rs[q];
    bool red = false;
    if (!(asc__regtab_get(mark, r) & 2) || asc__regtab_get(isiv, r) ||
        f->regs[r].param)
      continue;
    if (skip_red)
      for (int32_t k = 0; k < skip_red->nred; k++)
        if (skip_red->red[k].reg == r)
          red = true;
    if (red)
      continue;
    if (f->regs[r].ty.kind == ASC_IRK_TENSOR)
      declare_array(e, r);
    else
      LINE(e, "%s %s%s;", ctype(f->regs[r].ty.dtype), rname(e, r),
           /* written, never read: an atomic's unused old value */
           f->regs[r].nuses == 0 ? " __attribute__((unused))" : "");
  }
}

const char *asc__emit_kname(emitter *e) {
  char buf[48];
  size_t n = 0;
  for (const char *p = e->f->name; *p && n < 32; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
        (*p >= '0' && *p <= '9') || *p == '_')
      buf[n++] = *p;
  buf[n] = 0;
  return asc__arena_printf(e->c, "k%d_%s", e->kidx, buf);
}

/* written[r]: bit 0 when tensor r is stored to (its pointer stays
 * non-const), bit 1 when its data is read or written at all. */
static void mark_readonly(asc__irfunc *f, const asc__irblock *b,
                          uint8_t *written) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->op == ASC_IR_STORE || i->op == ASC_IR_ATOMIC ||
        i->op == ASC_IR_CAS || i->op == ASC_IR_LOCK ||
        i->op == ASC_IR_UNLOCK)
      written[i->args[0].reg] = 3;
    else if (i->op == ASC_IR_GEMM) {
      written[i->args[0].reg] = 3;
      written[i->args[1].reg] |= 2;
      written[i->args[5].reg] |= 2;
    }
    else if (i->op == ASC_IR_LINALG) {
      for (int32_t k = 3; k < i->nargs; k += 4)
        written[i->args[k].reg] = k == 3 ? written[i->args[k].reg] | 2 : 3;
    }
    else if (i->op == ASC_IR_GEMM_EXACT) {
      written[i->args[0].reg] = 3;
      written[i->args[4].reg] |= 2;
      written[i->args[8].reg] |= 2;
    }
    else if (i->op == ASC_IR_LOAD)
      written[i->args[0].reg] |= 2;
    else if (i->op == ASC_IR_SET_VIEW)
      written[i->args[0].reg] |= 2;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      mark_readonly(f, &i->body[k], written);
  }
}

/* An array variable's stores write the arrays it views: their data is
 * not const either. */
static bool view_writes(const asc__irblock *b, uint8_t *written) {
  bool more = false;
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->op == ASC_IR_SET_VIEW && (written[i->dst] & 1) &&
        !(written[i->args[0].reg] & 1)) {
      written[i->args[0].reg] = 3;
      more = true;
    }
    for (int k = 0; k < asc__ir_nregions(i); k++)
      more |= view_writes(&i->body[k], written);
  }
  return more;
}

static void emit_kernel(emitter *e) {
  asc__irfunc *f = (asc__irfunc *)e->f;
  const char *K;
  asc__regtab mark, isiv;
  uint8_t *written;
  int32_t n = f->nregs;

  asc__ir_verify(e->c, f, "emit");
  K = asc__emit_kname(e);
  written = asc__arena_alloc(e->c, (size_t)n + 1);
  mark_readonly(f, &f->body, written);
  while (view_writes(&f->body, written))
    ;
  for (int32_t r = 0; r < n; r++) {
    if (f->regs[r].ty.kind == ASC_IRK_TENSOR && !(written[r] & 1))
      f->regs[r].ty.flags |= ASC_IRT_READONLY;
    else
      f->regs[r].ty.flags &= (uint8_t)~ASC_IRT_READONLY;
  }
  e->heap = asc__arena_alloc(e->c, (size_t)n + 1);
  asc__ir_walk(&f->body, collect_heap, e);
  for (int32_t r = 0; r < n; r++)
    if (!f->regs[r].param && f->regs[r].ty.kind == ASC_IRK_TENSOR &&
        !e->heap[r])
      f->regs[r].ty.flags |= ASC_IRT_LOCAL;
  e->def = asc__arena_alloc(e->c, sizeof *e->def * ((size_t)n + 1));
  asc__ir_walk(&f->body, collect_def, e);
  e->shared_off = asc__arena_alloc(e->c, sizeof(int64_t) * ((size_t)n + 1));
  e->shared_bytes = 0;
  e->uses_barrier = false;
  asc__ir_walk(&f->body, assign_shared, e);

  out(e, "/* ---------------- kernel %d */\n\n", e->kidx);
  e->npfor = 0;
  e->capfors = 0;
  e->pfors = NULL;
  asc__regtab_init(e->c, &e->pfor_num, 0);
  asc__emit_collect_bodies(e, &f->body);

  e->labels = 0;
  e->nframes = 0;
  e->sdepth = 0;
  e->last_line = 0;
  /* the entries' half of a build in two parts (ASC_PART, jit/cc.c) */
  out(e, "#if ASC_PART != 2\n");
  out(e, "static int %s(asc_kctx *ctx, void *const *args, asc_kexc *exc) {\n",
      K);
  e->depth = 1;
  for (int32_t p = 0; p < f->nparams; p++) {
    int32_t r = f->params[p];
    const asc__irreg *g = &f->regs[r];
    if (g->ty.kind == ASC_IRK_TENSOR) {
      bool ro = (g->ty.flags & ASC_IRT_READONLY) != 0;
      LINE(e, "const asc_ktensor *%s = (const asc_ktensor *)args[%d];",
           tname(e, r), (int)p);
      if (g->ty.flags & ASC_IRT_ALIGN64)
        LINE(e, "%s%s *%s%s = (%s *)__builtin_assume_aligned(%s->data, "
                "64);",
             ro ? "const " : "", ctype(g->ty.dtype), restrict_kw(e),
             rname(e, r), ctype(g->ty.dtype), tname(e, r));
      else
        LINE(e, "%s%s *%s%s = (%s *)%s->data;", ro ? "const " : "",
             ctype(g->ty.dtype), restrict_kw(e), rname(e, r),
             ctype(g->ty.dtype), tname(e, r));
      if (!(written[r] & 2))
        LINE(e, "(void)%s; /* only its shape is used */", rname(e, r));
    } else if (g->ty.flags & ASC_IRT_GENERIC) {
      const char *fld = asc__dt_is_float(g->ty.dtype) ? "f" : "i";
      if (g->ty.dtype == ascBFloat16)
        LINE(e, "%s %s = asc_f2bf((float)((const asc_kscalar *)args[%d])->"
                "value.f);",
             ctype(g->ty.dtype), rname(e, r), (int)p);
      else
        LINE(e, "%s %s = (%s)((const asc_kscalar *)args[%d])->value.%s;",
             ctype(g->ty.dtype), rname(e, r), ctype(g->ty.dtype), (int)p, fld);
    } else {
      LINE(e, "%s %s = *(const %s *)args[%d];", ctype(g->ty.dtype),
           rname(e, r), ctype(g->ty.dtype), (int)p);
    }
    if (g->ty.kind != ASC_IRK_TENSOR)
      LINE(e, "(void)%s;", rname(e, r));
  }
  asc__regtab_init(e->c, &mark, n);
  asc__regtab_init(e->c, &isiv, 0);
  /* the registers the entry defines outside parallel bodies */
  asc__emit_scan(&f->body, &mark, &isiv, false);
  asc__emit_declare_scalars(e, &mark, &isiv, NULL);
  LINE(e, "(void)ctx; (void)exc;");
  LINE(e, "const int32_t *asc_stop = ASC_STOP_OF(ctx); (void)asc_stop;");
  LINE(e, "int64_t asc_work = ASC_POLL_WORK; (void)asc_work;");
  e->raise_used = false;
  asc__emit_block(e, &f->body);
  LINE(e, "return 0;");
  if (e->raise_used) {
    out(e, "L_raise:\n");
    LINE(e, "return 1;");
  }
  out(e, "}\n\n");
  e->depth = 0;

  if (f->nparams + f->nresults > 0) {
    out(e, "static const asc_kparam %s_params[] = {\n", K);
    for (int32_t p = 0; p < f->nparams; p++) {
      const asc__irreg *g = &f->regs[f->params[p]];
      bool ten = g->ty.kind == ASC_IRK_TENSOR;
      bool gen = !ten && (g->ty.flags & ASC_IRT_GENERIC);
      bool cx = !ten && (g->ty.flags & ASC_IRT_CONSTEXPR);
      out(e, "  {%s, %s%s%s, %d, %d},\n", asc__emit_cstr(e, g->name),
          ten ? "ASC_KPARAM_TENSOR" : gen ? "ASC_KPARAM_GENERIC" : "",
          gen && cx ? " | " : "",
          cx ? "ASC_KPARAM_CONSTEXPR" : (ten || gen) ? "" : "0",
          (int)g->ty.dtype, ten ? (int)g->ty.ndim : 0);
    }
    for (int32_t k = 0; k < f->nresults; k++)
      if (f->nresults > 1)
        out(e, "  {\"return.%d\", ASC_KPARAM_RESULT, 0, 0},\n", (int)k);
      else
        out(e, "  {\"return\", ASC_KPARAM_RESULT, 0, 0},\n");
    out(e, "};\n\n");
  }
  out(e, "#endif\n\n");
}

/* gcc 12's basic-block vectoriser turns a complex multiply-add into
 * vfmaddsub (its VEC_FMADDSUB pattern), one rounding for a multiply and
 * an add, although -ffp-contract=off forbids contracting: c + a * b on
 * complex128 then differs from Python's in a quarter of the elements.
 * Modules with complex values turn that vectoriser off (their loops
 * still vectorise: asc_cmul's form is one the loop vectoriser does not
 * fuse); clang keeps the order. */
static void emit_complex_exactness(emitter *e, const asc__irmodule *m) {
  bool any = false;
  for (int32_t k = 0; k < m->nfuncs && !any; k++)
    for (int32_t r = 0; r < m->funcs[k]->nregs && !any; r++)
      any = asc__dt_is_complex(m->funcs[k]->regs[r].ty.dtype);
  if (any)
    out(e, "#if defined(__GNUC__) && !defined(__clang__)\n"
           "#pragma GCC optimize(\"no-tree-slp-vectorize\")\n"
           "#endif\n");
}

/* The asc_kernel_desc flags of a kernel. */
static const char *kernel_flags(bool barrier, bool reads_block) {
  if (reads_block)
    return barrier ? "ASC_KERNEL_USES_BARRIER" : "0";
  return barrier ? "ASC_KERNEL_USES_BARRIER | ASC_KERNEL_NOT_SPMD"
                 : "ASC_KERNEL_NOT_SPMD";
}

/* The bytes of text[from, to) that an unoptimised build compiles: not
 * the first branches of `#if ASC_TWO_COPIES` (the quick tier is the
 * build whose time is waited for; -O3 compiles both copies). */
static size_t compiled_bytes(const char *text, size_t from, size_t to) {
  uint32_t skip = 0; /* bit d: in the first branch of an #if level d of
                       ASC_TWO_COPIES */
  int depth = 0;
  size_t n = 0;
  while (from < to) {
    const char *l = text + from, *nl = memchr(l, '\n', to - from);
    size_t len = nl != NULL ? (size_t)(nl - l) + 1 : to - from;
    const char *w = l;
    while (w < l + len && *w == ' ')
      w++;
    if (strncmp(w, "#if", 3) == 0 && depth < 31) {
      depth++;
      if (strncmp(w, "#if ASC_TWO_COPIES", 18) == 0)
        skip |= 1u << depth;
    } else if (strncmp(w, "#else", 5) == 0 && depth > 0) {
      skip &= ~(1u << depth);
    } else if (strncmp(w, "#endif", 6) == 0 && depth > 0) {
      skip &= ~(1u << depth);
      depth--;
    } else if (skip == 0) {
      n += len;
    }
    from += len;
  }
  return n;
}

/* The halves of a build in two parts (ASC_PART; jit/cc.c) as even as
 * the text an unoptimised build compiles makes them: part 1 has the
 * entries and tables (from `start` on, less the bodies), and each body,
 * heaviest first, goes to the lighter half (its guard's digit:
 * `#if ASC_PART != 1` is part 2's, `!= 2` part 1's). */
static void balance_parts(emitter *e, size_t start) {
  struct asc__emit_part *p = e->parts;
  size_t one = compiled_bytes(e->o->data, start, e->o->len), two = 0;
  for (int32_t k = 0; k < e->nparts; k++) {
    size_t w = compiled_bytes(e->o->data, p[k].digit, p[k].digit + p[k].len);
    one -= w < one ? w : one;
    p[k].len = w; /* from here on, the weight */
  }
  /* longest first (an insertion sort: a module has tens of bodies) */
  for (int32_t k = 1; k < e->nparts; k++)
    for (int32_t j = k; j > 0 && p[j].len > p[j - 1].len; j--) {
      struct asc__emit_part t = p[j];
      p[j] = p[j - 1];
      p[j - 1] = t;
    }
  for (int32_t k = 0; k < e->nparts; k++) {
    if (one < two) {
      e->o->data[p[k].digit] = '2';
      one += p[k].len;
    } else {
      two += p[k].len;
    }
  }
}

void asc__emit_module(asc__cctx *c, const asc__irmodule *m,
                      const asc__emit_src *src, asc__buf *o) {
  size_t start;
  emitter e;
  uint64_t *shared;
  bool *barrier;
  c->phase = "emit";
  shared = asc__arena_alloc(c, sizeof *shared * ((size_t)m->nfuncs + 1));
  barrier = asc__arena_alloc(c, sizeof *barrier * ((size_t)m->nfuncs + 1));
  memset(&e, 0, sizeof e);
  e.c = c;
  e.o = o;
  e.src = src;
  out(&e, "/* Generated by libasc from Python kernels: do not edit. */\n");
  /* A large module builds in two compilations at once (jit/cc.c):
   * ASC_PART 1 the kernels' entries and tables, 2 their parallel
   * bodies, each half linking to the other's; 0, one compilation. */
  out(&e, "#ifndef ASC_PART\n#define ASC_PART 0\n#endif\n"
          "#if ASC_PART\n#define ASC_BODY __attribute__((visibility("
          "\"hidden\")))\n#else\n#define ASC_BODY static\n#endif\n");
  emit_complex_exactness(&e, m);
  asc__buf_puts(o, asc__abi_prelude);
  asc__buf_puts(o, "\n");
  asc__buf_puts(o, asc__emit_helpers);
  asc__emit_vecmath(&e, m);
  emit_complex_decls(&e, m);
  emit_gemm_exact(&e, m);
  emit_wavefront_text(&e, m);
  start = o->len;
  for (int32_t k = 0; k < m->nfuncs; k++) {
    e.f = m->funcs[k];
    e.kidx = (int)k;
    {
      /* the emitter's per-register tables live while one kernel is
       * emitted */
      asc__scratch_mark sm = asc__scratch_get(c);
      emit_kernel(&e);
      asc__scratch_release(c, sm);
    }
    shared[k] = e.shared_bytes;
    barrier[k] = e.uses_barrier;
  }
  out(&e, "#if ASC_PART != 2\n");
  if (m->nfuncs == 0) {
    out(&e, "__attribute__((visibility(\"default\")))\n"
            "const asc_module_desc asc_module_v1 = {ASC_KABI_VERSION, 0, "
            "NULL};\n#endif\n");
    return;
  }
  out(&e, "static const asc_kernel_desc asc_kernels[] = {\n");
  for (int32_t k = 0; k < m->nfuncs; k++) {
    const asc__irfunc *f = m->funcs[k];
    e.f = f;
    e.kidx = (int)k;
    out(&e, "  {%s, %s, %d, %s, %s, %llu, %s},\n",
        asc__emit_cstr(&e, f->name),
        asc__emit_kname(&e), (int)(f->nparams + f->nresults),
        f->nparams + f->nresults
            ? asc__arena_printf(c, "%s_params", asc__emit_kname(&e))
            : "NULL",
        kernel_flags(barrier[k], f->reads_block),
        (unsigned long long)shared[k],
        asc__emit_cstr(&e, f->file ? f->file : ""));
  }
  out(&e, "};\n\n");
  out(&e, "__attribute__((visibility(\"default\")))\n"
          "const asc_module_desc asc_module_v1 = {ASC_KABI_VERSION, %d, "
          "asc_kernels};\n#endif\n",
      (int)m->nfuncs);
  if (o->oom)
    asc__cctx_throw(c, ASC_FAIL_OOM);
  balance_parts(&e, start);
}
