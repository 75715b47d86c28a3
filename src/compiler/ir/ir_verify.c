/*
 * IR verifier: run between passes in debug builds and with ASC_VERIFY=1.
 * A failure is a compiler bug, reported as an internal error naming the
 * instruction and the pass that ran last.
 */
#include <string.h>

#include "compiler/ir/ir.h"
#include "asc/kernel_abi.h"

typedef struct vstate {
  asc__cctx *c;
  const asc__irfunc *f;
  const char *after;
  int loops;       /* enclosing loops in the current function body */
  int pfors;       /* enclosing pfor bodies */
  int loops_at_pfor;
  int excepts;     /* enclosing except regions in this function body */
  uint8_t *ind;    /* per register: IND_NO, or an induction out of / in scope */
} vstate;

enum { IND_NO = 0, IND_OUT, IND_IN };

static _Noreturn void fail(vstate *v, const asc__irins *i, const char *what) {
  char *m = asc__arena_printf(
      v->c, "IR verifier%s%s: %s: %s (line %d)", v->after ? " after " : "",
      v->after ? v->after : "", v->f->name, what, i ? (int)i->line : 0);
  asc__internal_error(v->c, __FILE__, __LINE__, m);
}

static int vdt(vstate *v, const asc__irins *i, int k) {
  asc__irval a = i->args[k];
  if (a.kind == ASC_IRV_REG) {
    if (a.reg < 0 || a.reg >= v->f->nregs)
      fail(v, i, "register out of range");
    if (v->f->regs[a.reg].ty.kind != ASC_IRK_SCALAR)
      fail(v, i, "tensor used as a scalar");
    return v->f->regs[a.reg].ty.dtype;
  }
  if (a.kind != ASC_IRV_CONST || a.dtype >= ascDataTypeCount)
    fail(v, i, "bad operand");
  return a.dtype;
}

static asc__irtype tensor_arg(vstate *v, const asc__irins *i, int k) {
  asc__irval a = i->args[k];
  if (a.kind != ASC_IRV_REG || a.reg < 0 || a.reg >= v->f->nregs ||
      v->f->regs[a.reg].ty.kind != ASC_IRK_TENSOR)
    fail(v, i, "expected a tensor operand");
  return v->f->regs[a.reg].ty;
}

/* An array variable (a strided type) holds any array of its dtype and
 * rank. */
static bool array_var_takes(asc__irtype var, asc__irtype t) {
  return var.kind == ASC_IRK_TENSOR && !(var.flags & ASC_IRT_CONTIG) &&
         t.kind == ASC_IRK_TENSOR && t.dtype == var.dtype &&
         t.ndim == var.ndim;
}

static int ddt(vstate *v, const asc__irins *i) {
  if (i->dst < 0 || i->dst >= v->f->nregs)
    fail(v, i, "missing destination");
  if (v->f->regs[i->dst].ty.kind != ASC_IRK_SCALAR)
    fail(v, i, "destination is not a scalar");
  return v->f->regs[i->dst].ty.dtype;
}

static void vblock(vstate *v, const asc__irblock *b);

static bool assigns(const asc__irblock *b, int32_t r) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->dst == r)
      return true;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      if (assigns(&i->body[k], r))
        return true;
  }
  return false;
}

static void check_private(vstate *v, const asc__irins *i) {
  const asc__irfunc *f = v->f;
  asc__regtab cnt;
  const int32_t *rs;
  int32_t n;
  asc__regtab_init(v->c, &cnt, 0);
  asc__ir_occurrences(&i->body[0], &cnt);
  for (int32_t k = 0; k < i->nred; k++)
    asc__regtab_set(&cnt, i->red[k].reg, 0);
  rs = asc__regtab_keys(&cnt, &n);
  for (int32_t q = 0; q < n; q++) {
    int32_t r = rs[q];
    intptr_t c = asc__regtab_get(&cnt, r);
    if (c == 0 || r == i->dst || f->regs[r].param)
      continue;
    if (f->regs[r].nuses + f->regs[r].ndefs > c &&
        assigns(&i->body[0], r))
      fail(v, i, "register assigned in a parallel body and used outside "
                 "(not a reduction)");
  }
}

static void vins(vstate *v, const asc__irins *i) {
  int op = i->op;
  unsigned fl;
  int na;

  if (op >= ASC_IR_NOPS)
    fail(v, i, "bad opcode");
  fl = asc__irop_flags(op);
  na = asc__irop_nargs(op);
  if (na >= 0 && i->nargs != na)
    fail(v, i, "wrong operand count");
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG &&
        (i->args[k].reg < 0 || i->args[k].reg >= v->f->nregs))
      fail(v, i, "register out of range");
  /* A loop induction exists only inside its loop: unrolling and the C
   * emitter (which declares it in the for statement) rely on it. */
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG && v->ind[i->args[k].reg] == IND_OUT)
      fail(v, i, "loop induction used outside its loop");
  switch (op) {
  case ASC_IR_MOV:
  case ASC_IR_NEG:
  case ASC_IR_ABS:
  case ASC_IR_NOT:
    if (vdt(v, i, 0) != ddt(v, i))
      fail(v, i, "operand type differs from result type");
    if (op == ASC_IR_NEG && ddt(v, i) == ascBool)
      fail(v, i, "neg of bool");
    break;
  case ASC_IR_SELECT:
    if (vdt(v, i, 0) != ascBool || vdt(v, i, 1) != ddt(v, i) ||
        vdt(v, i, 2) != ddt(v, i))
      fail(v, i, "select types");
    break;
  case ASC_IR_CAST:
    (void)vdt(v, i, 0);
    (void)ddt(v, i);
    break;
  case ASC_IR_CVT:
    if ((vdt(v, i, 0) != ascFloat32 && vdt(v, i, 0) != ascFloat64) ||
        !asc__dt_is_int(ddt(v, i)))
      fail(v, i, "cvt types");
    break;
  case ASC_IR_CALL:
    if (i->aux < 0 || i->aux >= ASC_INTR_COUNT ||
        i->nargs != asc__intr_nargs(i->aux))
      fail(v, i, "bad intrinsic call");
    if (i->aux == ASC_INTR_CMPLX) {
      if (!asc__dt_is_complex(ddt(v, i)) || vdt(v, i, 0) != vdt(v, i, 1) ||
          vdt(v, i, 0) != (ddt(v, i) == ascComplex64 ? ascFloat32
                                                      : ascFloat64))
        fail(v, i, "cmplx types");
      break;
    }
    if (i->aux == ASC_INTR_RECT) {
      if (ddt(v, i) != ascComplex128 || vdt(v, i, 0) != ascFloat64 ||
          vdt(v, i, 1) != ascFloat64)
        fail(v, i, "rect types");
      break;
    }
    if (i->aux == ASC_INTR_CREAL || i->aux == ASC_INTR_CIMAG ||
        i->aux == ASC_INTR_CABS || i->aux == ASC_INTR_CARG) {
      if (!asc__dt_is_complex(vdt(v, i, 0)) ||
          ddt(v, i) != (vdt(v, i, 0) == ascComplex64 ? ascFloat32
                                                      : ascFloat64))
        fail(v, i, "complex part types");
      break;
    }
    for (int32_t k = 0; k < i->nargs; k++)
      if (!asc__dt_is_float(vdt(v, i, k)) &&
          !asc__dt_is_complex(vdt(v, i, k)))
        fail(v, i, "intrinsic on a non-float");
    if (i->aux == ASC_INTR_CONJ && !asc__dt_is_complex(vdt(v, i, 0)))
      fail(v, i, "conj of a non-complex");
    if (i->aux == ASC_INTR_ISNAN || i->aux == ASC_INTR_ISINF ||
        i->aux == ASC_INTR_ISFINITE) {
      if (ddt(v, i) != ascBool)
        fail(v, i, "predicate result must be bool");
    } else if (ddt(v, i) != vdt(v, i, 0)) {
      fail(v, i, "intrinsic result type");
    }
    break;
  case ASC_IR_DIM:
  case ASC_IR_STRIDE: {
    asc__irtype t = tensor_arg(v, i, 0);
    if (i->aux < 0 || i->aux >= t.ndim)
      fail(v, i, "axis out of range");
    if (ddt(v, i) != ascInt64)
      fail(v, i, "dim/stride give i64");
    break;
  }
  case ASC_IR_LOAD:
  case ASC_IR_STORE:
  case ASC_IR_ATOMIC:
  case ASC_IR_CAS: {
    asc__irtype t = tensor_arg(v, i, 0);
    if (vdt(v, i, 1) != ascInt64)
      fail(v, i, "element offset must be i64");
    if (op == ASC_IR_LOAD && ddt(v, i) != t.dtype)
      fail(v, i, "load type differs from element type");
    if (op != ASC_IR_LOAD && vdt(v, i, 2) != t.dtype)
      fail(v, i, "stored value type differs from element type");
    if (op == ASC_IR_CAS && vdt(v, i, 3) != t.dtype)
      fail(v, i, "cas value type");
    if ((op == ASC_IR_ATOMIC || op == ASC_IR_CAS) &&
        (ddt(v, i) != t.dtype || t.dtype == ascFloat16 ||
         t.dtype == ascBFloat16 || t.dtype == ascBool))
      fail(v, i, "atomic on this element type");
    if (op == ASC_IR_ATOMIC && (i->aux < 0 || i->aux >= ASC_ATOM_COUNT))
      fail(v, i, "bad atomic operation");
    break;
  }
  case ASC_IR_LOCK:
  case ASC_IR_UNLOCK:
    if (tensor_arg(v, i, 0).dtype != ascInt32)
      fail(v, i, "lock words are i32");
    if (vdt(v, i, 1) != ascInt64)
      fail(v, i, "element offset must be i64");
    if (i->dst >= 0)
      fail(v, i, "lock/unlock give no value");
    break;
  case ASC_IR_NEW_ARRAY:
    if (i->dst < 0 || v->f->regs[i->dst].ty.kind != ASC_IRK_TENSOR ||
        v->f->regs[i->dst].param)
      fail(v, i, "new_array defines a tensor that is not a parameter");
    if (i->nargs != v->f->regs[i->dst].ty.ndim ||
        !(v->f->regs[i->dst].ty.flags & ASC_IRT_CONTIG))
      fail(v, i, "new_array takes one i64 extent per axis of a contig type");
    for (int32_t k = 0; k < i->nargs; k++)
      if (vdt(v, i, k) != ascInt64)
        fail(v, i, "array extents are i64");
    break;
  case ASC_IR_SET_ARRAY:
    if (i->dst < 0 || v->f->regs[i->dst].param ||
        !(asc__irt_eq(v->f->regs[i->dst].ty, tensor_arg(v, i, 0)) ||
          array_var_takes(v->f->regs[i->dst].ty, tensor_arg(v, i, 0))))
      fail(v, i, "set_array binds a tensor of the same type");
    break;
  case ASC_IR_SET_VIEW: {
    asc__irtype d;
    if (i->dst < 0 || v->f->regs[i->dst].param ||
        v->f->regs[i->dst].ty.kind != ASC_IRK_TENSOR)
      fail(v, i, "set_view binds an array variable");
    d = v->f->regs[i->dst].ty;
    if ((d.flags & ASC_IRT_CONTIG) ||
        tensor_arg(v, i, 0).dtype != d.dtype || i->nargs != 2 + 2 * d.ndim)
      fail(v, i, "set_view takes a tensor of the variable's dtype, an "
                 "offset and an extent and a stride per axis");
    for (int32_t k = 1; k < i->nargs; k++)
      if (vdt(v, i, k) != ascInt64)
        fail(v, i, "view offsets, extents and strides are i64");
    break;
  }
  case ASC_IR_RESULT:
    if (i->dst >= 0 || i->aux < 0 || i->aux >= v->f->nresults)
      fail(v, i, "result writes slot 0..nresults-1 and gives no value");
    if (i->args[0].kind == ASC_IRV_REG &&
        v->f->regs[i->args[0].reg].ty.kind == ASC_IRK_TENSOR &&
        v->f->regs[i->args[0].reg].param)
      fail(v, i, "a returned array is one the kernel made, not a parameter");
    break;
  case ASC_IR_GEMM: {
    int dt;
    if (i->dst < 0 || v->f->regs[i->dst].ty.kind != ASC_IRK_SCALAR ||
        v->f->regs[i->dst].ty.dtype != ascInt32)
      fail(v, i, "gemm gives an i32 status");
    dt = tensor_arg(v, i, 0).dtype;
    if ((dt != ascFloat32 && dt != ascFloat64) ||
        tensor_arg(v, i, 1).dtype != dt || tensor_arg(v, i, 5).dtype != dt)
      fail(v, i, "gemm multiplies f32 or f64 tensors of one dtype");
    for (int32_t k = 0; k < i->nargs; k++)
      if (k != 0 && k != 1 && k != 5 &&
          vdt(v, i, k) != (k >= 15 ? ascFloat64 : ascInt64))
        fail(v, i, "gemm's offsets, strides and extents are i64, its alpha "
                   "and beta f64");
    break;
  }
  case ASC_IR_LINALG:
    if (i->dst < 0 || v->f->regs[i->dst].ty.kind != ASC_IRK_SCALAR ||
        v->f->regs[i->dst].ty.dtype != ascInt32)
      fail(v, i, "linalg gives an i32 status");
    if (i->nargs < 3 + 4 * 2 || i->nargs > ASC_IR_LINALG_MAXARGS ||
        (i->nargs - 3) % 4 != 0)
      fail(v, i, "linalg takes m, n, k and two or more operands");
    if (i->aux <= 0 || i->aux >= ASC_KLINALG_COUNT)
      fail(v, i, "bad linalg op");
    for (int32_t k = 0; k < i->nargs; k++) {
      if (k >= 3 && (k - 3) % 4 == 0)
        (void)tensor_arg(v, i, k);
      else if (vdt(v, i, k) != ascInt64)
        fail(v, i, "linalg's extents, offsets and strides are i64");
    }
    break;
  case ASC_IR_GEMM_EXACT: {
    int dt = tensor_arg(v, i, 0).dtype;
    if (i->dst >= 0)
      fail(v, i, "gemm_exact gives no value");
    if ((dt != ascFloat32 && dt != ascFloat64) ||
        tensor_arg(v, i, 4).dtype != dt || tensor_arg(v, i, 8).dtype != dt)
      fail(v, i, "gemm_exact multiplies f32 or f64 tensors of one dtype");
    for (int32_t k = 0; k < i->nargs; k++)
      if (k != 0 && k != 4 && k != 8 && vdt(v, i, k) != ascInt64)
        fail(v, i, "gemm_exact's offsets, strides and extents are i64");
    if ((i->aux & ~(ASC_GEMM_ACCUMULATE | ASC_GEMM_BLAS_FIRST)) != 0)
      fail(v, i, "gemm_exact's flags are 1 (accumulate) and 2 (BLAS)");
    if ((i->aux & ASC_GEMM_ACCUMULATE) && (i->aux & ASC_GEMM_BLAS_FIRST))
      fail(v, i, "gemm_exact tries the BLAS only for a product that does "
                 "not accumulate");
    break;
  }
  case ASC_IR_FREE_ARRAY:
    (void)tensor_arg(v, i, 0);
    if (i->dst >= 0)
      fail(v, i, "free_array gives no value");
    break;
  case ASC_IR_LOCAL_ARRAY:
  case ASC_IR_SHARED_ARRAY: {
    asc__irtype t;
    int64_t total = 1;
    if (i->dst < 0 || v->f->regs[i->dst].ty.kind != ASC_IRK_TENSOR)
      fail(v, i, "array result must be a tensor");
    t = v->f->regs[i->dst].ty;
    if (t.ndim != i->nimm || !(t.flags & ASC_IRT_CONTIG))
      fail(v, i, "array type must be contig with the shape's rank");
    for (int32_t k = 0; k < i->nimm; k++) {
      if (i->imm[k] <= 0 || i->imm[k] > (1 << 24))
        fail(v, i, "bad array extent");
      total *= i->imm[k];
      if (total > (1 << 24))
        fail(v, i, "array too large");
    }
    break;
  }
  case ASC_IR_BLOCK_IDX:
  case ASC_IR_BLOCK_NUM:
  case ASC_IR_TEAM_SIZE:
  case ASC_IR_WORKER_ID:
    if (ddt(v, i) != ascInt64)
      fail(v, i, "block_idx/block_num/team_size/worker_id give i64");
    break;
  case ASC_IR_BARRIER:
    if (v->pfors)
      fail(v, i, "barrier inside a parallel body");
    break;
  case ASC_IR_FOR:
  case ASC_IR_PFOR: {
    int it = ddt(v, i);
    if (!asc__dt_is_int(it))
      fail(v, i, "induction variable must be an integer");
    for (int k = 0; k < 3; k++)
      if (vdt(v, i, k) != it)
        fail(v, i, "loop bounds must have the induction's type");
    if (v->f->regs[i->dst].ndefs != 1)
      fail(v, i, "induction variable assigned elsewhere");
    if (i->wave != 0 && i->wave != ASC_WAVE_SWEEP) {
      if (op != ASC_IR_FOR || i->wave > ASC_WAVE_MAXR + 1)
        fail(v, i, "a wavefront is a for loop of radius 0 to 8");
      for (const asc__irins *s = i->body[0].first; s; s = s->next)
        if ((s->op != ASC_IR_FOR && s->op != ASC_IR_PFOR) ||
            s->wave != ASC_WAVE_SWEEP || s->nred > 0)
          fail(v, i, "a wavefront loop holds only its sweeps (loops "
                     "marked sweep, without reductions)");
    }
    if (op == ASC_IR_PFOR) {
      int saved = v->loops_at_pfor, saved_exc = v->excepts;
      check_private(v, i);
      v->pfors++;
      v->loops_at_pfor = ++v->loops;
      v->excepts = 0; /* the body is another C function */
      v->ind[i->dst] = IND_IN;
      vblock(v, &i->body[0]);
      v->ind[i->dst] = IND_OUT;
      v->excepts = saved_exc;
      v->loops--;
      v->pfors--;
      v->loops_at_pfor = saved;
      return;
    }
    break;
  }
  case ASC_IR_IF:
    if (vdt(v, i, 0) != ascBool)
      fail(v, i, "if condition must be bool");
    break;
  case ASC_IR_BREAK:
    if (v->loops == 0)
      fail(v, i, "break outside a loop");
    if (v->pfors && v->loops == v->loops_at_pfor)
      fail(v, i, "break out of a parallel loop");
    break;
  case ASC_IR_CONTINUE:
    if (v->loops == 0)
      fail(v, i, "continue outside a loop");
    break;
  case ASC_IR_RET:
    if (v->pfors)
      fail(v, i, "return inside a parallel body");
    if (i->nargs > 0)
      fail(v, i, "kernels return nothing");
    break;
  case ASC_IR_RAISE:
    if (i->aux <= 0 || i->aux >= ASC_KEXC_COUNT)
      fail(v, i, "bad exception kind");
    if (i->nargs > ASC_IR_RAISE_MAXARGS)
      fail(v, i, "too many values for a raise message");
    for (int k = 0; k < i->nargs; k++)
      if (asc__irv_dtype(v->f, i->args[k]) != ascInt64)
        fail(v, i, "raise message values are i64");
    break;
  case ASC_IR_EXCMATCH:
    if (ddt(v, i) != ascBool || i->exc_mask == 0)
      fail(v, i, "excmatch gives bool and needs kinds");
    if (v->excepts == 0)
      fail(v, i, "excmatch outside an except region");
    break;
  case ASC_IR_RERAISE:
    if (v->excepts == 0)
      fail(v, i, "reraise outside an except region");
    break;
  case ASC_IR_TRY:
    vblock(v, &i->body[0]);
    v->excepts++;
    vblock(v, &i->body[1]);
    v->excepts--;
    vblock(v, &i->body[2]);
    return;
  case ASC_IR_LOOP:
  case ASC_IR_CRITICAL:
    break;
  default:
    if (op == ASC_IR_SHL || op == ASC_IR_SHR || op == ASC_IR_AND ||
        op == ASC_IR_OR || op == ASC_IR_XOR) {
      if (asc__dt_is_float(ddt(v, i)))
        fail(v, i, "bit operation on a float");
    }
    if (op == ASC_IR_DIV && !asc__dt_is_float(ddt(v, i)) &&
        !asc__dt_is_complex(ddt(v, i)))
      fail(v, i, "div (true division) needs floats");
    if (asc__dt_is_complex(vdt(v, i, 0)) &&
        (op == ASC_IR_FLOORDIV || op == ASC_IR_MOD || op == ASC_IR_MIN ||
         op == ASC_IR_MAX || op == ASC_IR_PMIN || op == ASC_IR_PMAX ||
         op == ASC_IR_LT || op == ASC_IR_LE ||
         op == ASC_IR_GT || op == ASC_IR_GE || op == ASC_IR_SHL ||
         op == ASC_IR_SHR || op == ASC_IR_AND || op == ASC_IR_OR ||
         op == ASC_IR_XOR))
      fail(v, i, "operation without a complex meaning");
    if (fl & ASC_OPF_CMP) {
      if (vdt(v, i, 0) != vdt(v, i, 1) || ddt(v, i) != ascBool)
        fail(v, i, "comparison types");
    } else if (vdt(v, i, 0) != ddt(v, i) || vdt(v, i, 1) != ddt(v, i)) {
      fail(v, i, "operand types differ from result type");
    }
    break;
  }
  if (i->op == ASC_IR_FOR || i->op == ASC_IR_LOOP) {
    v->loops++;
    if (i->op == ASC_IR_FOR)
      v->ind[i->dst] = IND_IN;
    vblock(v, &i->body[0]);
    if (i->op == ASC_IR_FOR)
      v->ind[i->dst] = IND_OUT;
    v->loops--;
    return;
  }
  for (int k = 0; k < asc__ir_nregions(i); k++)
    vblock(v, &i->body[k]);
}

/* Marks every loop induction of b as one (out of scope until its loop). */
static void mark_induction(asc__irins *i, void *ctx) {
  vstate *v = ctx;
  if ((i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR) && i->dst >= 0 &&
      i->dst < v->f->nregs)
    v->ind[i->dst] = IND_OUT;
}

static void vblock(vstate *v, const asc__irblock *b) {
  const asc__irins *prev = NULL;
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->prev != prev)
      fail(v, i, "broken instruction list");
    vins(v, i);
    prev = i;
  }
  if (b->last != prev)
    fail(v, NULL, "broken block end");
}

void asc__ir_verify(asc__cctx *c, const asc__irfunc *f, const char *after) {
  vstate v;
  memset(&v, 0, sizeof v);
  v.c = c;
  v.f = f;
  v.after = after;
  asc__ir_count((asc__irfunc *)f);
  for (int32_t r = 0; r < f->nregs; r++)
    if (!f->regs[r].param && f->regs[r].nuses > 0 && f->regs[r].ndefs == 0)
      fail(&v, NULL,
           asc__arena_printf(c, "register %%%s used but never defined",
                             f->regs[r].name));
  v.ind = asc__scratch_alloc(c, (size_t)(f->nregs > 0 ? f->nregs : 1));
  asc__ir_walk(&f->body, mark_induction, &v);
  vblock(&v, &f->body);
}
