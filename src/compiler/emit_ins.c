/*
 * IR -> C for one instruction at a time (emit_c.c has the module, the
 * kernels and their serial loops; emit_pfor.c the parallel loops): the
 * C expression of an operation, and the statements of each instruction
 * family with the checks Python makes (division by zero, negative shift
 * counts, float-to-int range, array sizes).
 */
#include <math.h>
#include <string.h>

#include "compiler/emit_c.h"
#include "compiler/emit_int.h"
#include "asc/kernel_abi.h"

/* ------------------------------------------------------------ values */

/* The value of x (of dtype dt) as a number C can compute with: bf16 and
 * f16 widen to float. */
static const char *widen(emitter *e, int dt, const char *x) {
  if (dt == ascBFloat16)
    return asc__arena_printf(e->c, "asc_bf2f(%s)", x);
  if (dt == ascFloat16)
    return asc__arena_printf(e->c, "(float)%s", x);
  return x;
}

/* Narrows a computed value back to dt. */
static const char *narrow(emitter *e, int dt, const char *x) {
  switch (dt) {
  case ascBFloat16:
    return asc__arena_printf(e->c, "asc_f2bf(%s)", x);
  case ascFloat16:
  case ascInt8:
  case ascInt16:
  case ascUInt8:
  case ascUInt16:
    return asc__arena_printf(e->c, "(%s)(%s)", ctype(dt), x);
  default:
    return x;
  }
}

static bool is_half(int dt) { return dt == ascFloat16 || dt == ascBFloat16; }

/* The C expression of a binary operation on C expressions a and b (both of
 * type dt).  Division checks are emitted by the caller. */
const char *asc__emit_binexpr(emitter *e, int op, int dt, const char *a,
                              const char *b) {
  const char *wa = widen(e, dt, a), *wb = widen(e, dt, b);
  const char *cop = NULL;
  bool fl = asc__dt_is_float(dt);
  const char *fs = (dt == ascFloat64) ? "" : "f";
  switch (op) {
  case ASC_IR_ADD: cop = "+"; break;
  case ASC_IR_SUB: cop = "-"; break;
  case ASC_IR_MUL:
    if (asc__dt_is_complex(dt)) /* numpy's and CPython's product */
      return asc__arena_printf(e->c, "asc_cmul%s(%s, %s)",
                               dt == ascComplex64 ? "f" : "", a, b);
    cop = "*";
    break;
  case ASC_IR_DIV:
    if (asc__dt_is_complex(dt))
      return asc__arena_printf(e->c, "asc_cdiv%s(%s, %s, 0)",
                               dt == ascComplex64 ? "f" : "", a, b);
    cop = "/";
    break;
  case ASC_IR_AND: cop = "&"; break;
  case ASC_IR_OR: cop = "|"; break;
  case ASC_IR_XOR: cop = "^"; break;
  case ASC_IR_SHL:
  case ASC_IR_SHR:
    return asc__arena_printf(e->c, "asc_%s_%s(%s, %s)",
                             op == ASC_IR_SHL ? "shl" : "shr", sfx(dt), a, b);
  case ASC_IR_EQ: return asc__arena_printf(e->c, "(%s == %s)", wa, wb);
  case ASC_IR_NE: return asc__arena_printf(e->c, "(%s != %s)", wa, wb);
  case ASC_IR_LT: return asc__arena_printf(e->c, "(%s < %s)", wa, wb);
  case ASC_IR_LE: return asc__arena_printf(e->c, "(%s <= %s)", wa, wb);
  case ASC_IR_GT: return asc__arena_printf(e->c, "(%s > %s)", wa, wb);
  case ASC_IR_GE: return asc__arena_printf(e->c, "(%s >= %s)", wa, wb);
  case ASC_IR_MIN:
    return asc__arena_printf(e->c, "(%s < %s ? %s : %s)", wb, wa, b, a);
  case ASC_IR_MAX:
    return asc__arena_printf(e->c, "(%s > %s ? %s : %s)", wb, wa, b, a);
  case ASC_IR_PMIN:
  case ASC_IR_PMAX:
    return asc__arena_printf(e->c, "(%s %s %s || %s != %s ? %s : %s)", wb,
                             op == ASC_IR_PMIN ? "<" : ">", wa, wb, wb, b, a);
  case ASC_IR_FLOORDIV:
  case ASC_IR_MOD: {
    const char *nm = op == ASC_IR_FLOORDIV ? "floordiv" : "mod";
    if (fl)
      return narrow(e, dt,
                    asc__arena_printf(e->c, "asc_%s_%s(%s, %s)", nm,
                                      dt == ascFloat64 ? "f64" : "f32", wa,
                                      wb));
    if (!asc__dt_is_signed(dt))
      return asc__arena_printf(e->c, "(%s)(%s %s %s)", ctype(dt), a,
                               op == ASC_IR_FLOORDIV ? "/" : "%", b);
    return asc__arena_printf(e->c, "asc_%s_%s(%s, %s)", nm, sfx(dt), a, b);
  }
  case ASC_IR_POW:
    if (asc__dt_is_complex(dt))
      return asc__arena_printf(e->c, "asc_cpow%s(%s, %s)",
                               dt == ascComplex64 ? "f" : "", a, b);
    if (fl)
      return narrow(e, dt, asc__arena_printf(
                               e->c, "%spow%s(%s, %s)",
                               e->f->fastmath & ASC_FASTMATH_AFN ? ""
                                                                 : "asc_vm_",
                               fs, wa, wb));
    return asc__arena_printf(e->c, "asc_ipow_%s(%s, %s)", sfx(dt), a, b);
  default:
    ASC_CHECK(e->c, !"binary operator");
  }
  if (fl && is_half(dt))
    return narrow(e, dt, asc__arena_printf(e->c, "%s %s %s", wa, cop, wb));
  if (dt == ascInt64 || dt == ascUInt64 || dt == ascInt32 ||
      dt == ascUInt32 || fl || dt == ascBool || asc__dt_is_complex(dt))
    return asc__arena_printf(e->c, "%s %s %s", a, cop, b);
  return narrow(e, dt, asc__arena_printf(e->c, "%s %s %s", a, cop, b));
}

/* ------------------------------------------------ break, continue, return */

/* Emits the cleanups (finally bodies, critical exits) of frames above
 * index `to`, innermost first, for a break/continue/return leaving them. */
static void cleanups(emitter *e, int to) {
  for (int k = e->nframes - 1; k >= to; k--) {
    frame fr = e->frames[k];
    if (fr.kind == F_CRIT) {
      LINE(e, "ctx->rt->critical_exit(ctx);");
    } else if ((fr.kind == F_TRY || fr.kind == F_EXCEPT) &&
               fr.ins->has_finally) {
      /* emit the finally body as if at frame k; frames below k keep what
       * it marks (used labels), those from k up are put back */
      int saved = e->nframes;
      size_t nsave = (size_t)(saved - k);
      frame *copy = asc__arena_alloc(e->c, sizeof *copy * nsave);
      memcpy(copy, e->frames + k, sizeof *copy * nsave);
      e->nframes = k;
      push(e, F_FINALLY, fr.label, fr.ins);
      asc__emit_block(e, &fr.ins->body[2]);
      memcpy(e->frames + k, copy, sizeof *copy * nsave);
      e->nframes = saved;
    }
  }
}

static int innermost_loop(emitter *e) {
  for (int k = e->nframes - 1; k >= 0; k--)
    if (e->frames[k].kind == F_LOOP)
      return k;
  ASC_CHECK(e->c, !"break/continue outside a loop");
  return 0;
}

/* -------------------------------------------------------- instructions */

/* True when v is certainly positive: a positive constant, or a register
 * whose only definition is max(x, c > 0), or a copy or widening cast of
 * such a value. */
bool asc__emit_known_positive(emitter *e, asc__irval v, int depth) {
  const asc__irins *d;
  if (v.kind == ASC_IRV_CONST)
    return !asc__dt_is_float(v.dtype) && v.dtype != ascBool &&
           (asc__dt_is_signed(v.dtype) ? v.c.i > 0 : v.c.i != 0);
  if (depth > 8 || e->def == NULL || (d = e->def[v.reg]) == NULL)
    return false;
  switch (d->op) {
  case ASC_IR_MOV:
    return asc__emit_known_positive(e, d->args[0], depth + 1);
  case ASC_IR_CAST: {
    int from = asc__irv_dtype(e->f, d->args[0]);
    int to = e->f->regs[d->dst].ty.dtype;
    return asc__dt_is_int(from) && asc__dt_is_int(to) &&
           asc__dt_bits(to) >= asc__dt_bits(from) &&
           asc__emit_known_positive(e, d->args[0], depth + 1);
  }
  case ASC_IR_MAX:
    return asc__emit_known_positive(e, d->args[0], depth + 1) ||
           asc__emit_known_positive(e, d->args[1], depth + 1);
  default:
    return false;
  }
}

/* A new array: asc_new_array checks the extents, counts the bytes
 * without overflow, takes the memory from the runtime and sets C-order
 * strides, or raises. */
static void emit_new_array(emitter *e, const asc__irins *i) {
  const char *d = rname(e, i->dst), *t = tname(e, i->dst);
  int dt = e->f->regs[i->dst].ty.dtype;
  int n = i->nargs;
  const char *ext = n > 0 ? asc__emit_val(e, i->args[0]) : "0";
  for (int k = 1; k < n; k++)
    ext = asc__arena_printf(e->c, "%s, %s", ext, asc__emit_val(e, i->args[k]));
  LINE(e, "if (asc_new_array(ctx, exc, &%s_s, %d, sizeof(%s), %d, %d, "
          "(const int64_t[]){%s}))",
       t, dt, ctype(dt), n, (int)i->line, ext);
  LINE(e, "  goto %s;", asc__emit_exc_target(e));
  LINE(e, "%s = (%s *)%s_s.data;", d, ctype(dt), t);
}

/* An array variable bound to a view: the view's pointer, extents and
 * strides are computed first (they may read the variable), then the
 * array the variable owned is given back unless the view is of it. */
static void emit_set_view(emitter *e, const asc__irins *i, const char *d) {
  const char *t = tname(e, i->dst);
  int32_t src = i->args[0].reg;
  int nd = e->f->regs[i->dst].ty.ndim;
  const char *ct = ctype(e->f->regs[i->dst].ty.dtype);
  LINE(e, "{");
  e->depth++;
  LINE(e, "%s *p = (%s *)%s + %s;", ct, ct, rname(e, src),
       asc__emit_val(e, i->args[1]));
  LINE(e, "int64_t sh[%d], st[%d];", nd > 0 ? nd : 1, nd > 0 ? nd : 1);
  for (int k = 0; k < nd; k++) {
    LINE(e, "sh[%d] = %s;", k, asc__emit_val(e, i->args[2 + k]));
    LINE(e, "st[%d] = %s;", k, asc__emit_val(e, i->args[2 + nd + k]));
  }
  if (src != i->dst) {
    LINE(e, "ctx->rt->release(ctx, %s_s.data);", t);
    LINE(e, "%s_s.data = NULL;", t);
  }
  LINE(e, "%s = p;", d);
  LINE(e, "%s_s.dtype = %d;", t, e->f->regs[i->dst].ty.dtype);
  LINE(e, "%s_s.ndim = %d;", t, nd);
  LINE(e, "for (int k = 0; k < %d; k++) {", nd);
  LINE(e, "  %s_s.shape[k] = sh[k];", t);
  LINE(e, "  %s_s.strides[k] = st[k];", t);
  LINE(e, "}");
  e->depth--;
  LINE(e, "}");
}

/* `return v` of a kernel: v into the caller's asc_kresult (docs/abi.md).
 * A returned array leaves the block's temporaries (keep). */
static void emit_result(emitter *e, const asc__irins *i) {
  int slot = e->f->nparams + i->aux;
  asc__irval v = i->args[0];
  int dt = asc__irv_dtype(e->f, v);
  LINE(e, "{");
  e->depth++;
  LINE(e, "asc_kresult *res = (asc_kresult *)args[%d];", slot);
  if (v.kind == ASC_IRV_REG &&
      e->f->regs[v.reg].ty.kind == ASC_IRK_TENSOR) {
    const char *t = tname(e, v.reg);
    /* the slot may hold this array already: a return that completed,
     * then a `finally` that raised into an `except` that returns again */
    LINE(e, "if ((res->kind != ASC_KRESULT_TENSOR || res->tensor.data != "
            "%s_s.data) && ctx->rt->keep(ctx, %s_s.data) == NULL) {",
         t, t);
    e->depth++;
    asc__emit_raise(e, ASC_KEXC_MEMORY_ERROR, i->line,
                    "cannot hand the returned array to the caller");
    e->depth--;
    LINE(e, "}");
    LINE(e, "res->tensor = %s_s;", t);
    LINE(e, "res->kind = ASC_KRESULT_TENSOR;");
  } else {
    const char *x = asc__emit_val(e, v);
    LINE(e, "res->scalar.dtype = %d;", dt);
    LINE(e, "res->scalar.weak = 0;");
    if (dt == ascBFloat16)
      LINE(e, "res->scalar.value.f = (double)asc_bf2f(%s);", x);
    else if (asc__dt_is_float(dt))
      LINE(e, "res->scalar.value.f = (double)%s;", x);
    else if (dt == ascUInt8 || dt == ascUInt16 || dt == ascUInt32 ||
             dt == ascUInt64)
      LINE(e, "res->scalar.value.u = (uint64_t)%s;", x);
    else
      LINE(e, "res->scalar.value.i = (int64_t)%s;", x);
    LINE(e, "res->kind = ASC_KRESULT_SCALAR;");
  }
  e->depth--;
  LINE(e, "}");
}

static void div_check(emitter *e, const asc__irins *i) {
  asc__irval b = i->args[1];
  int dt = e->f->regs[i->dst].ty.dtype;
  if (asc__dt_is_float(dt))
    return;
  if (b.kind == ASC_IRV_CONST && b.c.i != 0)
    return;
  if (asc__emit_known_positive(e, b, 0))
    return;
  LINE(e, "if (%s == 0) {", asc__emit_val(e, b));
  e->depth++;
  asc__emit_raise(e, ASC_KEXC_ZERO_DIVISION_ERROR, i->line,
                  "integer division or modulo by zero");
  e->depth--;
  LINE(e, "}");
}

static void emit_cast(emitter *e, const asc__irins *i) {
  int to = e->f->regs[i->dst].ty.dtype;
  int from = asc__irv_dtype(e->f, i->args[0]);
  const char *x = asc__emit_val(e, i->args[0]);
  const char *d = rname(e, i->dst);
  if (to == from) {
    LINE(e, "%s = %s;", d, x);
    return;
  }
  if (to == ascBool) {
    LINE(e, "%s = (%s != 0);", d, widen(e, from, x));
    return;
  }
  if (asc__dt_is_complex(to)) { /* real -> complex, or c64 <-> c128 */
    LINE(e, "%s = (%s)%s;", d, ctype(to), widen(e, from, x));
    return;
  }
  if (asc__dt_is_float(from) && !asc__dt_is_float(to)) {
    /* Python's int(x): truncate; NaN and out-of-range raise. */
    int bits = asc__dt_bits(to);
    double lo = asc__dt_is_signed(to) ? -ldexp(1.0, bits - 1) - 1.0 : -1.0;
    double hi = asc__dt_is_signed(to) ? ldexp(1.0, bits - 1) : ldexp(1.0, bits);
    const char *w = from == ascFloat64
                        ? x
                        : asc__arena_printf(e->c, "(double)%s",
                                            widen(e, from, x));
    LINE(e, "if (!(%s > %a && %s < %a)) {", w, lo, w, hi);
    e->depth++;
    LINE(e, "if (%s != %s) {", w, w);
    e->depth++;
    asc__emit_raise(e, ASC_KEXC_VALUE_ERROR, i->line,
                    "cannot convert float NaN to integer");
    e->depth--;
    LINE(e, "}");
    asc__emit_raise(e, ASC_KEXC_OVERFLOW_ERROR, i->line,
                    "float out of range for integer conversion");
    e->depth--;
    LINE(e, "}");
    LINE(e, "%s = (%s)%s;", d, ctype(to), w);
    return;
  }
  if (to == ascBFloat16) {
    if (from == ascFloat16 || asc__dt_is_int(from) || from == ascBool ||
        from == ascFloat64)
      LINE(e, "%s = asc_f2bf((float)%s);", d, x);
    else
      LINE(e, "%s = asc_f2bf(%s);", d, x);
    return;
  }
  LINE(e, "%s = (%s)%s;", d, ctype(to), widen(e, from, x));
}

/* The math functions generated code calls as asc_vm_<name> outside the
 * afn mode: SLEEF's 1-ulp functions, vectorised, where the C compiler has
 * SLEEF, else libm's (emit_helpers.h, docs/vecmath.md).  In afn, plain
 * libm calls, which gcc may vectorise with glibc's 4-ulp libmvec.  id -1:
 * float `**`. */
static const struct {
  int id;
  const char *name;
  /* emit_helpers.h's widest variant (ASC_VM_FN1/2_f/d's I): float, double */
  const char *impl[2];
  int nargs;
} vm_funcs[] = {
    {ASC_INTR_SIN, "sin", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_COS, "cos", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_TAN, "tan", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_ASIN, "asin", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_ACOS, "acos", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_ATAN, "atan", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_SINH, "sinh", {"ASC_VM_FW", "ASC_VM_DW"}, 1},
    {ASC_INTR_COSH, "cosh", {"ASC_VM_FW", "ASC_VM_DW"}, 1},
    {ASC_INTR_TANH, "tanh", {"ASC_VM_FW", "ASC_VM_D"}, 1},
    {ASC_INTR_EXP, "exp", {"ASC_VM_F", "ASC_VM_DW"}, 1},
    {ASC_INTR_EXPM1, "expm1", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_LOG, "log", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_LOG2, "log2", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_LOG10, "log10", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_LOG1P, "log1p", {"ASC_VM_FW", "ASC_VM_DW"}, 1},
    {ASC_INTR_CBRT, "cbrt", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_ERF, "erf", {"ASC_VM_F", "ASC_VM_D"}, 1},
    {ASC_INTR_ATAN2, "atan2", {"ASC_VM_F", "ASC_VM_D"}, 2},
    {-1, "pow", {"ASC_VM_F", "ASC_VM_D"}, 2},
};

/* x ** 2 of floats: x * x, exactly what numpy's power gives (its square
 * fast path) and Python's correctly rounded pow; a 1-ulp pow may differ. */
static bool is_square(const asc__irfunc *f, const asc__irins *i) {
  return i->op == ASC_IR_POW && i->dst >= 0 &&
         asc__dt_is_float(f->regs[i->dst].ty.dtype) &&
         i->args[1].kind == ASC_IRV_CONST &&
         asc__dt_is_float(i->args[1].dtype) && i->args[1].c.f == 2.0;
}

/* vm_funcs' index of the function i calls as asc_vm_*, or -1. */
static int vm_index(const asc__irfunc *f, const asc__irins *i) {
  int id;
  if ((f->fastmath & ASC_FASTMATH_AFN) || is_square(f, i))
    return -1;
  if (i->op == ASC_IR_POW && i->dst >= 0 &&
      asc__dt_is_float(f->regs[i->dst].ty.dtype))
    id = -1; /* asc__emit_binexpr's float pow */
  else if (i->op == ASC_IR_CALL)
    id = i->aux;
  else
    return -1;
  for (int k = 0; k < (int)ASC_ARRAY_SIZE(vm_funcs); k++)
    if (vm_funcs[k].id == id)
      return k;
  return -1;
}

typedef struct vm_use {
  const asc__irfunc *f;
  uint32_t used[2]; /* bit k: vm_funcs[k] in float ([0]), in double ([1]) */
} vm_use;

static void vm_mark(asc__irins *i, void *ctx) {
  vm_use *u = ctx;
  int k = vm_index(u->f, i);
  /* the dtype that picks asc_vm_F or asc_vm_Ff: the argument's in
   * emit_call, the result's in asc__emit_binexpr's pow */
  int dt = i->op == ASC_IR_CALL ? asc__irv_dtype(u->f, i->args[0])
                                : u->f->regs[i->dst].ty.dtype;
  if (k >= 0)
    u->used[dt == ascFloat64] |= 1u << k;
}

/* Instantiates the asc_vm_* functions the kernels of m call, each in the
 * precisions they call it in: every instance is the scalar function and
 * a vector variant per ISA, which gcc compiles whether it calls them or
 * not. */
void asc__emit_vecmath(emitter *e, const asc__irmodule *m) {
  vm_use u = {NULL, {0, 0}};
  for (int32_t k = 0; k < m->nfuncs; k++) {
    u.f = m->funcs[k];
    asc__ir_walk(&u.f->body, vm_mark, &u);
  }
  for (int k = 0; k < (int)ASC_ARRAY_SIZE(vm_funcs); k++)
    for (int d = 0; d < 2; d++)
      if (u.used[d] & (1u << k))
        out(e, "ASC_VM_FN%d_%c(%s, %s)\n", vm_funcs[k].nargs, "fd"[d],
            vm_funcs[k].name, vm_funcs[k].impl[d]);
}

static void emit_call(emitter *e, const asc__irins *i) {
  int dt = asc__irv_dtype(e->f, i->args[0]);
  const char *d = rname(e, i->dst);
  const char *a[3];
  const char *nm = asc__intr_name(i->aux);
  const char *fs = dt == ascFloat64 ? "" : "f";
  for (int32_t k = 0; k < i->nargs; k++)
    a[k] = widen(e, dt, asc__emit_val(e, i->args[k]));
  if (i->aux == ASC_INTR_CMPLX) {
    LINE(e, "%s = __builtin_complex(%s, %s);", d, a[0], a[1]);
    return;
  }
  if (i->aux == ASC_INTR_RECT) {
    LINE(e, "%s = asc_crect(%s, %s);", d, a[0], a[1]);
    return;
  }
  if (asc__dt_is_complex(dt)) {
    /* C99's complex functions (declared in emit_complex_decls) */
    const char *cs = dt == ascComplex64 ? "f" : "";
    switch (i->aux) {
    case ASC_INTR_CREAL: LINE(e, "%s = __real__ %s;", d, a[0]); return;
    case ASC_INTR_CIMAG: LINE(e, "%s = __imag__ %s;", d, a[0]); return;
    case ASC_INTR_CONJ: LINE(e, "%s = conj%s(%s);", d, cs, a[0]); return;
    case ASC_INTR_CABS: LINE(e, "%s = asc_cabs%s(%s);", d, cs, a[0]); return;
    case ASC_INTR_CARG: LINE(e, "%s = carg%s(%s);", d, cs, a[0]); return;
    case ASC_INTR_CDIV:
      LINE(e, "%s = asc_cdiv%s(%s, %s, 1);", d, cs, a[0], a[1]);
      return;
    case ASC_INTR_LOG10: /* CPython's cmath.log10: log(z) / ln 10 */
      LINE(e, "%s = clog%s(%s);", d, cs, a[0]);
      LINE(e, "%s = __builtin_complex(__real__ %s / %s, __imag__ %s / %s);",
           d, d, dt == ascComplex64 ? "2.302585093f" : "2.302585092994046",
           d, dt == ascComplex64 ? "2.302585093f" : "2.302585092994046");
      return;
    default:
      LINE(e, "%s = c%s%s(%s);", d, nm, cs, a[0]);
      return;
    }
  }
  switch (i->aux) {
  case ASC_INTR_ISNAN:
    LINE(e, "%s = __builtin_isnan(%s);", d, a[0]);
    return;
  case ASC_INTR_ISINF:
    LINE(e, "%s = __builtin_isinf(%s) != 0;", d, a[0]);
    return;
  case ASC_INTR_ISFINITE:
    LINE(e, "%s = __builtin_isfinite(%s);", d, a[0]);
    return;
  case ASC_INTR_ROUND:
    nm = "nearbyint"; /* Python rounds half to even */
    break;
  case ASC_INTR_LGAMMA:
    nm = "asc_lgamma"; /* lgamma_r: lgamma writes the global signgam */
    break;
  default:
    if (vm_index(e->f, i) >= 0)
      nm = asc__arena_printf(e->c, "asc_vm_%s", nm);
    break;
  }
  if (i->nargs == 1)
    LINE(e, "%s = %s;", d,
         narrow(e, dt, asc__arena_printf(e->c, "%s%s(%s)", nm, fs, a[0])));
  else if (i->nargs == 2)
    LINE(e, "%s = %s;", d,
         narrow(e, dt, asc__arena_printf(e->c, "%s%s(%s, %s)", nm, fs, a[0],
                                         a[1])));
  else
    LINE(e, "%s = %s;", d,
         narrow(e, dt, asc__arena_printf(e->c, "%s%s(%s, %s, %s)", nm, fs,
                                         a[0], a[1], a[2])));
}

/* Arithmetic, conversions and math calls: one assignment each, after
 * the checks Python makes; what no other family knows is a binary
 * operator (the default). */
static void emit_arith(emitter *e, const asc__irins *i, const char *d,
                       int dt) {
  const asc__irfunc *f = e->f;
  switch (i->op) {
  case ASC_IR_MOV:
    LINE(e, "%s = %s;", d, asc__emit_val(e, i->args[0]));
    break;
  case ASC_IR_FLOORDIV:
  case ASC_IR_MOD:
    div_check(e, i);
    LINE(e, "%s = %s;", d,
         asc__emit_binexpr(e, i->op, dt, asc__emit_val(e, i->args[0]),
                           asc__emit_val(e, i->args[1])));
    break;
  case ASC_IR_POW:
    if (!asc__dt_is_float(dt) && asc__dt_is_signed(dt) &&
        !(i->args[1].kind == ASC_IRV_CONST && i->args[1].c.i >= 0)) {
      LINE(e, "if (%s < 0) {", asc__emit_val(e, i->args[1]));
      e->depth++;
      asc__emit_raise(e, ASC_KEXC_VALUE_ERROR, i->line,
                      "integer power with a negative exponent");
      e->depth--;
      LINE(e, "}");
    }
    if (is_square(e->f, i)) {
      const char *x = widen(e, dt, asc__emit_val(e, i->args[0]));
      LINE(e, "%s = %s;", d,
           narrow(e, dt, asc__arena_printf(e->c, "(%s * %s)", x, x)));
      break;
    }
    LINE(e, "%s = %s;", d,
         asc__emit_binexpr(e, i->op, dt, asc__emit_val(e, i->args[0]),
                           asc__emit_val(e, i->args[1])));
    break;
  case ASC_IR_SHL:
  case ASC_IR_SHR: {
    asc__irval n = i->args[1];
    if (n.kind == ASC_IRV_CONST && n.c.i >= 0 && n.c.i < asc__dt_bits(dt)) {
      /* a constant count inside the width: the C shift is defined */
      if (i->op == ASC_IR_SHL)
        LINE(e, "%s = (%s)((uint64_t)%s << %d);", d, ctype(dt),
             asc__emit_val(e, i->args[0]), (int)n.c.i);
      else
        LINE(e, "%s = (%s)(%s >> %d);", d, ctype(dt),
             asc__emit_val(e, i->args[0]), (int)n.c.i);
      break;
    }
    if (asc__dt_is_signed(dt) && !(n.kind == ASC_IRV_CONST && n.c.i >= 0)) {
      LINE(e, "if (%s < 0) {", asc__emit_val(e, n));
      e->depth++;
      asc__emit_raise(e, ASC_KEXC_VALUE_ERROR, i->line, "negative shift count");
      e->depth--;
      LINE(e, "}");
    }
    LINE(e, "%s = %s;", d,
         asc__emit_binexpr(e, i->op, dt, asc__emit_val(e, i->args[0]),
                           asc__emit_val(e, n)));
    break;
  }
  case ASC_IR_NEG:
    if (dt == ascBFloat16)
      LINE(e, "%s = (asc_bf16)(%s ^ 0x8000u);", d,
           asc__emit_val(e, i->args[0]));
    else
      LINE(e, "%s = %s;", d,
           narrow(e, dt, asc__arena_printf(e->c, "-%s",
                                           asc__emit_val(e, i->args[0]))));
    break;
  case ASC_IR_ABS: {
    const char *a = asc__emit_val(e, i->args[0]);
    if (dt == ascBFloat16)
      LINE(e, "%s = (asc_bf16)(%s & 0x7fffu);", d, a);
    else if (asc__dt_is_float(dt))
      LINE(e, "%s = %s;", d,
           narrow(e, dt,
                  asc__arena_printf(e->c, "fabs%s(%s)",
                                    dt == ascFloat64 ? "" : "f",
                                    widen(e, dt, a))));
    else if (asc__dt_is_signed(dt))
      LINE(e, "%s = %s;", d,
           narrow(e, dt, asc__arena_printf(e->c, "(%s < 0 ? -%s : %s)", a, a,
                                           a)));
    else
      LINE(e, "%s = %s;", d, a);
    break;
  }
  case ASC_IR_NOT:
    if (dt == ascBool)
      LINE(e, "%s = !%s;", d, asc__emit_val(e, i->args[0]));
    else
      LINE(e, "%s = (%s)~%s;", d, ctype(dt), asc__emit_val(e, i->args[0]));
    break;
  case ASC_IR_SELECT:
    LINE(e, "%s = %s ? %s : %s;", d, asc__emit_val(e, i->args[0]),
         asc__emit_val(e, i->args[1]), asc__emit_val(e, i->args[2]));
    break;
  case ASC_IR_CAST:
    emit_cast(e, i);
    break;
  case ASC_IR_CVT: /* in range: no check (vectorises) */
    LINE(e, "%s = (%s)%s;", d, ctype(dt), asc__emit_val(e, i->args[0]));
    break;
  case ASC_IR_CALL:
    emit_call(e, i);
    break;
  default:
    LINE(e, "%s = %s;", d,
         asc__emit_binexpr(e, i->op,
                           (asc__irop_flags(i->op) & ASC_OPF_CMP)
                               ? asc__irv_dtype(f, i->args[0])
                               : dt,
                           asc__emit_val(e, i->args[0]),
                           asc__emit_val(e, i->args[1])));
    break;
  }
}

/* Tensor data, shapes, atomics and the arrays a kernel creates; false
 * when i is none of them. */
static bool emit_memory(emitter *e, const asc__irins *i, const char *d,
                        int dt) {
  const asc__irfunc *f = e->f;
  switch (i->op) {
  case ASC_IR_DIM:
  case ASC_IR_STRIDE: {
    int32_t t = i->args[0].reg;
    const asc__irreg *tr = &f->regs[t];
    if ((tr->ty.flags & ASC_IRT_LOCAL) && !e->heap[t]) {
      /* local / shared arrays: the shape is a compile-time constant */
      const asc__irins *a = asc__emit_array_def(&f->body, t);
      int64_t v = 1;
      ASC_CHECK(e->c, a != NULL && i->aux < a->nimm);
      if (i->op == ASC_IR_DIM)
        v = a->imm[i->aux];
      else
        for (int32_t k = i->aux + 1; k < a->nimm; k++)
          v *= a->imm[k];
      LINE(e, "%s = %lld;", d, (long long)v);
    } else {
      LINE(e, "%s = %s->%s[%d];", d, tname(e, t),
           i->op == ASC_IR_DIM ? "shape" : "strides", (int)i->aux);
    }
    break;
  }
  case ASC_IR_LOAD:
    LINE(e, "%s = %s[%s];", d, rname(e, i->args[0].reg),
         asc__emit_val(e, i->args[1]));
    break;
  case ASC_IR_STORE:
    LINE(e, "%s[%s] = %s;", rname(e, i->args[0].reg),
         asc__emit_val(e, i->args[1]), asc__emit_val(e, i->args[2]));
    break;
  case ASC_IR_ATOMIC:
    LINE(e, "%s = asc_atomic_%s_%s(&%s[%s], %s);", d, asc__atom_name(i->aux),
         sfx(dt), rname(e, i->args[0].reg), asc__emit_val(e, i->args[1]),
         asc__emit_val(e, i->args[2]));
    break;
  case ASC_IR_CAS:
    LINE(e, "%s = asc_cas_%s(&%s[%s], %s, %s);", d, sfx(dt),
         rname(e, i->args[0].reg), asc__emit_val(e, i->args[1]),
         asc__emit_val(e, i->args[2]), asc__emit_val(e, i->args[3]));
    break;
  case ASC_IR_LOCK:
  case ASC_IR_UNLOCK:
    LINE(e, "asc_%s(&%s[%s]);", i->op == ASC_IR_LOCK ? "lock" : "unlock",
         rname(e, i->args[0].reg), asc__emit_val(e, i->args[1]));
    break;
  case ASC_IR_LOCAL_ARRAY:
  case ASC_IR_SHARED_ARRAY:
    break; /* declared at the top of the function */
  case ASC_IR_NEW_ARRAY:
    emit_new_array(e, i);
    break;
  case ASC_IR_SET_ARRAY: {
    const char *s = rname(e, i->args[0].reg);
    if (!(e->f->regs[i->dst].ty.flags & ASC_IRT_CONTIG)) {
      /* an array variable: it owns the new array, and gives back the one
       * it owned (_s.data; NULL while it holds a view) */
      const char *t = tname(e, i->dst);
      LINE(e, "if (%s_s.data != %s) ctx->rt->release(ctx, %s_s.data);", t, s,
           t);
    } else {
      /* the name's old array is dead: every use of it goes through the
       * name's register, which now holds the new one */
      LINE(e, "if (%s != NULL && %s != %s) ctx->rt->release(ctx, %s);", d, d,
           s, d);
    }
    LINE(e, "%s = %s; %s_s = %s_s;", d, s, tname(e, i->dst),
         tname(e, i->args[0].reg));
    break;
  }
  case ASC_IR_SET_VIEW:
    emit_set_view(e, i, d);
    break;
  case ASC_IR_FREE_ARRAY:
    LINE(e, "ctx->rt->release(ctx, %s);", rname(e, i->args[0].reg));
    break;
  case ASC_IR_RESULT:
    emit_result(e, i);
    break;
  default:
    return false;
  }
  return true;
}

/* Calls into the runtime: BLAS products and the block's team; false
 * when i is none of them. */
static bool emit_runtime(emitter *e, const asc__irins *i, const char *d) {
  switch (i->op) {
  case ASC_IR_GEMM: {
    /* c = alpha * a @ b + beta * c by the runtime's BLAS; nonzero: the
     * loops after it */
    const char *v[17];
    for (int k = 0; k < 17; k++)
      v[k] = k == 0 || k == 1 || k == 5 ? rname(e, i->args[k].reg)
                                        : asc__emit_val(e, i->args[k]);
    LINE(e, "%s = ctx->rt->gemm_ab(ctx, %d, %s, %s, %s, %s, %s + %s, %s, %s, "
            "%s + %s, %s, %s, %s, %s + %s, %s, %s);",
         d, e->f->regs[i->args[0].reg].ty.dtype, v[9], v[10], v[11], v[15],
         v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[16], v[0], v[14],
         v[12], v[13]);
    break;
  }
  case ASC_IR_GEMM_EXACT: {
    /* a recognised GEMM nest (passes/gemmrec.c): the runtime's BLAS first
     * under reassoc, else (or when it did nothing) the exact product of
     * gemm_kernel.h, whose team raising is this instruction raising */
    const char *v[15];
    const char *sfx =
        e->f->regs[i->args[0].reg].ty.dtype == ascFloat32 ? "f32" : "f64";
    for (int k = 0; k < 15; k++)
      v[k] = k == 0 || k == 4 || k == 8 ? rname(e, i->args[k].reg)
                                        : asc__emit_val(e, i->args[k]);
    LINE(e, "{");
    e->depth++;
    if (i->aux & ASC_GEMM_BLAS_FIRST)
      LINE(e, "int asc_gs = ctx->rt->gemm(ctx, %d, %s, %s, %s, %s + %s, %s, "
              "%s, %s + %s, %s, %s, %s + %s, %s, %s);",
           e->f->regs[i->args[0].reg].ty.dtype, v[12], v[13], v[14], v[4],
           v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[0], v[1], v[2],
           v[3]);
    else
      LINE(e, "int asc_gs = 1;");
    LINE(e, "if (asc_gs != 0 && asc_gemm_exact_%s(ctx, exc, %d, %s, %s, %s, "
            "%s + %s, %s, %s, %s + %s, %s, %s, %s + %s, %s, %s, %d) != 0)",
         sfx, e->in_body ? 1 : 0, v[12], v[13], v[14], v[4], v[5], v[6],
         v[7], v[8], v[9], v[10], v[11], v[0], v[1], v[2], v[3],
         (i->aux & ASC_GEMM_ACCUMULATE) ? 1 : 0);
    LINE(e, "  goto %s;", asc__emit_exc_target(e));
    e->depth--;
    LINE(e, "}");
    break;
  }
  case ASC_IR_LINALG: {
    /* np.linalg on the runtime's LAPACK: the operands' element pointers
     * and strides in two arrays (kernel_abi.h, asc_krt.linalg) */
    int nops = (i->nargs - 3) / 4;
    const char *p = "", *s = "";
    for (int k = 0; k < nops; k++) {
      const asc__irval *o = &i->args[3 + 4 * k];
      p = asc__arena_printf(e->c, "%s%s%s + %s", p, k ? ", " : "",
                            rname(e, o[0].reg), asc__emit_val(e, o[1]));
      s = asc__arena_printf(e->c, "%s%s%s, %s", s, k ? ", " : "",
                            asc__emit_val(e, o[2]), asc__emit_val(e, o[3]));
    }
    LINE(e, "{");
    e->depth++;
    LINE(e, "void *const asc_lp[%d] = {%s};", nops, p);
    LINE(e, "const int64_t asc_ls[%d] = {%s};", 2 * nops, s);
    LINE(e, "%s = ctx->rt->linalg(ctx, %d, %d, %s, %s, %s, %d, asc_lp, "
            "asc_ls);",
         d, (int)i->aux, e->f->regs[i->args[3].reg].ty.dtype,
         asc__emit_val(e, i->args[0]), asc__emit_val(e, i->args[1]),
         asc__emit_val(e, i->args[2]), nops);
    e->depth--;
    LINE(e, "}");
    break;
  }
  case ASC_IR_BLOCK_IDX:
    LINE(e, "%s = (int64_t)ctx->block_idx;", d);
    break;
  case ASC_IR_BLOCK_NUM:
    LINE(e, "%s = (int64_t)ctx->block_num;", d);
    break;
  case ASC_IR_TEAM_SIZE:
    LINE(e, "%s = (int64_t)ctx->rt->team_size(ctx);", d);
    break;
  case ASC_IR_WORKER_ID:
    /* tid is the body function's parameter (0 <= tid < team size) */
    LINE(e, "%s = %s;", d, e->in_body ? "(int64_t)tid" : "0");
    break;
  case ASC_IR_BARRIER:
    e->uses_barrier = true;
    LINE(e, "if (ctx->rt->barrier(ctx) != 0) {");
    e->depth++;
    LINE(e, "asc_raise(exc, ASC_KEXC_RUNTIME_ERROR, %d, "
            "\"launch abandoned: another block raised\");",
         (int)i->line);
    LINE(e, "return 1;");
    e->depth--;
    LINE(e, "}");
    break;
  default:
    return false;
  }
  return true;
}

/* Loops, branches, break, continue and return; false when i is none of
 * them. */
static bool emit_control(emitter *e, const asc__irins *i, int dt) {
  switch (i->op) {
  case ASC_IR_PFOR:
    if (!e->in_body) {
      asc__emit_pfor_call(e, i);
      break;
    }
    /* a parallel loop nested in a parallel body runs serially */
    /* fall through */
  case ASC_IR_FOR:
    if (i->wave != 0 && i->wave != ASC_WAVE_SWEEP && !e->in_body)
      asc__emit_wavefront(e, i, ctype(dt));
    else
      asc__emit_for(e, i, rname(e, i->dst), ctype(dt));
    break;
  case ASC_IR_LOOP:
    LINE(e, "for (;;) {");
    e->depth++;
    push(e, F_LOOP, -1, i);
    if (i->nimm != 1) /* nimm 1: at most imm[0] iterations (ir.h) */
      asc__emit_poll(e, i->line);
    e->sdepth++;
    asc__emit_block(e, &i->body[0]);
    e->sdepth--;
    e->nframes--;
    e->depth--;
    LINE(e, "}");
    break;
  case ASC_IR_IF:
    LINE(e, "if (%s) {", asc__emit_val(e, i->args[0]));
    e->depth++;
    asc__emit_block(e, &i->body[0]);
    e->depth--;
    if (i->body[1].first) {
      LINE(e, "} else {");
      e->depth++;
      asc__emit_block(e, &i->body[1]);
      e->depth--;
    }
    LINE(e, "}");
    break;
  case ASC_IR_BREAK:
  case ASC_IR_CONTINUE: {
    int k = innermost_loop(e);
    cleanups(e, k + 1);
    if (i->op == ASC_IR_BREAK && e->frames[k].label >= 0) {
      /* out of the chunk loop too (emit_for_header) */
      e->frames[k].used = true;
      LINE(e, "goto L%d_brk;", e->frames[k].label);
    } else {
      LINE(e, "%s;", i->op == ASC_IR_BREAK ? "break" : "continue");
    }
    break;
  }
  case ASC_IR_RET:
    cleanups(e, 0);
    LINE(e, "return 0;");
    break;
  default:
    return false;
  }
  return true;
}

/* try / except / finally: the try body jumps to L<n>_exc on an
 * exception, a matching except clause to L<n>_pending on another; the
 * finally body runs on both the exception and the normal path. */
static void emit_try(emitter *e, const asc__irins *i) {
  int L = e->labels++;
  bool pending = false;
  LINE(e, "{ /* try */");
  e->depth++;
  push(e, F_TRY, L, i);
  asc__emit_block(e, &i->body[0]);
  e->nframes--;
  LINE(e, "goto L%d_done;", L);
  e->depth--;
  if (e->frames[e->nframes].used)
    LINE(e, "L%d_exc:;", L);
  e->depth++;
  if (i->has_except) {
    LINE(e, "if (asc_exc_match(exc->kind, 0x%xu)) {", (unsigned)i->exc_mask);
    e->depth++;
    LINE(e, "asc_kexc caught%d = *exc;", L);
    LINE(e, "(void)caught%d;", L);
    LINE(e, "exc->kind = ASC_KEXC_NONE;");
    push(e, F_EXCEPT, L, i);
    asc__emit_block(e, &i->body[1]);
    e->nframes--;
    pending = e->frames[e->nframes].used;
    LINE(e, "goto L%d_done;", L);
    e->depth--;
    LINE(e, "}");
  }
  e->depth--;
  if (pending)
    LINE(e, "L%d_pending:;", L);
  e->depth++;
  if (i->has_finally) {
    LINE(e, "{");
    e->depth++;
    LINE(e, "asc_kexc saved%d = *exc;", L);
    push(e, F_FINALLY, L, i);
    asc__emit_block(e, &i->body[2]);
    e->nframes--;
    LINE(e, "*exc = saved%d;", L);
    e->depth--;
    LINE(e, "}");
  }
  LINE(e, "goto %s;", asc__emit_exc_target(e));
  e->depth--;
  LINE(e, "L%d_done:;", L);
  e->depth++;
  if (i->has_finally) {
    push(e, F_FINALLY, L, i);
    asc__emit_block(e, &i->body[2]);
    e->nframes--;
  }
  e->depth--;
  LINE(e, "}");
}

/* The label number of the innermost except clause around the code
 * being emitted (the exception it caught is caught<n>). */
static int except_label(emitter *e) {
  int L = -1;
  for (int k = e->nframes - 1; k >= 0 && L < 0; k--)
    if (e->frames[k].kind == F_EXCEPT)
      L = e->frames[k].label;
  ASC_CHECK(e->c, L >= 0);
  return L;
}

/* Exceptions and critical sections; false when i is none of them. */
static bool emit_exceptions(emitter *e, const asc__irins *i, const char *d) {
  switch (i->op) {
  case ASC_IR_TRY:
    emit_try(e, i);
    break;
  case ASC_IR_CRITICAL: {
    int L = e->labels++;
    LINE(e, "ctx->rt->critical_enter(ctx);");
    push(e, F_CRIT, L, i);
    asc__emit_block(e, &i->body[0]);
    e->nframes--;
    LINE(e, "ctx->rt->critical_exit(ctx);");
    if (!e->frames[e->nframes].used)
      break;
    LINE(e, "goto L%d_crit_done;", L);
    LINE(e, "L%d_crit_exc:", L);
    LINE(e, "ctx->rt->critical_exit(ctx);");
    LINE(e, "goto %s;", asc__emit_exc_target(e));
    LINE(e, "L%d_crit_done:;", L);
    break;
  }
  case ASC_IR_RAISE:
    if (i->nargs > 0) {
      const char *v[ASC_IR_RAISE_MAXARGS] = {"0", "0", "0"};
      for (int k = 0; k < i->nargs && k < ASC_IR_RAISE_MAXARGS; k++)
        v[k] = asc__emit_val(e, i->args[k]);
      LINE(e, "asc_raise_fmt(exc, %d /* %s */, %d, %s, %d, %s, %s, %s);",
           i->aux, asc__exc_name(i->aux), (int)i->line,
           asc__emit_cstr(e, i->str ? i->str : ""), (int)i->nargs, v[0], v[1],
           v[2]);
      LINE(e, "goto %s;", asc__emit_exc_target(e));
    } else {
      asc__emit_raise(e, i->aux, i->line, i->str ? i->str : "");
    }
    break;
  case ASC_IR_EXCMATCH: {
    int L = except_label(e);
    LINE(e, "%s = asc_exc_match(caught%d.kind, 0x%xu);", d, L,
         (unsigned)i->exc_mask);
    break;
  }
  case ASC_IR_RERAISE: {
    int L = except_label(e);
    LINE(e, "*exc = caught%d;", L);
    LINE(e, "goto %s;", asc__emit_exc_target(e));
    break;
  }
  default:
    return false;
  }
  return true;
}

static void emit_ins(emitter *e, const asc__irins *i) {
  const asc__irfunc *f = e->f;
  int dt = i->dst >= 0 ? f->regs[i->dst].ty.dtype : -1;
  const char *d = i->dst >= 0 ? rname(e, i->dst) : NULL;

  asc__cctx_tick(e->c, "emit");
  asc__emit_line_comment(e, i->line);
  /* each family emits the instructions it knows and says so */
  if (!emit_control(e, i, dt) && !emit_exceptions(e, i, d) &&
      !emit_memory(e, i, d, dt) && !emit_runtime(e, i, d))
    emit_arith(e, i, d, dt);
}

/* 1 when b reads r before reaching stop (in text order), 2 when it
 * reaches stop first, 0 when neither is in b. */
static int read_before(const asc__irblock *b, int32_t r,
                       const asc__irins *stop) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    int k;
    if (i == stop)
      return 2;
    for (k = 0; k < i->nargs; k++)
      if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == r)
        return 1;
    for (k = 0; k < i->nred; k++)
      if (i->red[k].reg == r)
        return 1;
    for (k = 0; k < asc__ir_nregions(i); k++) {
      int found = read_before(&i->body[k], r, stop);
      if (found)
        return found;
    }
  }
  return 0;
}

/* True when i assigns an f32/f64 register that its innermost loop, a
 * counted one, carries from one iteration to the next (read in the body
 * before this assignment): the running sum ASC_SEQ_SUM is for. */
static bool carried_float(emitter *e, const asc__irins *i) {
  const asc__irfunc *f = e->f;
  const asc__irins *L;
  int dt;
  if (i->dst < 0 || i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR ||
      f->regs[i->dst].ty.kind == ASC_IRK_TENSOR || f->regs[i->dst].ndefs < 2)
    return false;
  dt = f->regs[i->dst].ty.dtype;
  if (dt != ascFloat32 && dt != ascFloat64)
    return false;
  for (int k = e->nframes - 1; k >= 0; k--) {
    if (e->frames[k].kind != F_LOOP)
      continue;
    L = e->frames[k].ins;
    if (L->op != ASC_IR_FOR && L->op != ASC_IR_PFOR)
      return false;
    return read_before(&L->body[0], i->dst, i) == 1;
  }
  return false;
}

static bool odometer_part(const emitter *e, const asc__irins *i) {
  if (e->odo.cast == NULL)
    return false;
  if (i == e->odo.cast)
    return true;
  for (int j = 0; j < e->odo.n; j++)
    if (i == e->odo.mod[j] || i == e->odo.div[j])
      return true;
  return false;
}

void asc__emit_block(emitter *e, const asc__irblock *b) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (odometer_part(e, i))
      continue;
    emit_ins(e, i);
    if (carried_float(e, i))
      LINE(e, "ASC_SEQ_SUM(%s);", rname(e, i->dst));
  }
}

/* --------------------------------------------------- register sets */
