/*
 * Vector math a chunk at a time (docs/optimizer.md, "vmchunk").  A serial
 * innermost loop that cannot be vectorised as a whole -- it raises (the
 * OverflowError check of math.exp), or it carries a float from iteration
 * to iteration (a running sum, which adds in order) -- still has work that
 * can: the calls of the vector math functions (exp, log, sin, ..., float
 * `**`) whose arguments depend on nothing the loop writes.  Those are
 * computed first, CHUNK iterations at a time, into a local buffer by a
 * loop of their own that gcc vectorises (docs/vecmath.md); the loop then
 * reads the buffer:
 *
 *   for %j = lo, hi, 1 {              for %j0 = lo, hi, 256 {
 *     %a = load %x, %j                  %w = min (sub hi, %j0), 256
 *     %e = call exp(%a)                 %je = add %j0, %w
 *     if (isinf %e) { raise }   ->      for %jp = %j0, %je, 1 {
 *     %s = add %s, %e                     %a' = load %x, %jp
 *   }                                     store %buf, (sub %jp, %j0), (call exp(%a'))
 *                                       }
 *                                       for %j = %j0, %je, 1 {
 *                                         %a = load %x, %j
 *                                         %e = load %buf, (sub %j, %j0)
 *                                         ... as before
 *                                       }
 *                                     }
 *
 * Each element gets the bits it got before: the vector variants return
 * the scalar one's bits (docs/vecmath.md, "One answer per element"), and
 * everything else runs as written, in order.
 *
 * What a call's argument may depend on (its slice): the induction,
 * registers the loop does not assign, and instructions at the top level of
 * the body, before the call, each the only definition of its register:
 * pure values that cannot trap, and loads of tensors no store of the loop
 * can reach (distinct parameters of a kernel that is not may_alias do not
 * overlap; hoist.c says more).  The call itself is at the top level too, so
 * every iteration that runs computes it.
 *
 * The chunk computes the calls of iterations the loop may not reach: when
 * an earlier iteration raises.  The calls are pure, so only the loads
 * matter: a load the loop would not have made.  So the only raises the loop
 * may hold are the checks of math functions and of arithmetic
 * (OverflowError "math range error", ValueError "math domain error", and
 * instructions that trap: integer division by zero, float-to-int); never a
 * bounds check or a raise of the user's, which may be what keeps a later
 * index in bounds.  With those, every load of the chunk is one the loop
 * would make for an iteration of its own range.
 *
 * The same machinery takes Python's int() of a float (a CAST that checks
 * its operand, cast_trap): its test runs ahead, or-ed into the chunk's
 * flag, and a chunk where no test fails runs a copy of the loop in which
 * the conversion is a CVT (no check).  The index of a store or atomic add
 * computed with such a conversion (a histogram's bin) also runs ahead,
 * into a buffer the copy reads (conv_ahead converts it there, 0 where the
 * test fails); so the scatter's loop is a load, an add and a store per
 * element.  With neither calls nor indices, the tests alone run ahead
 * when the copy can vectorise (no carried float, atomic or scatter).
 *
 * A parallel loop (pfor, without reductions) is taken the same way: it
 * becomes a pfor over chunks, each running its calls ahead and then its
 * iterations in order, so an error is still the lowest iteration's.
 *
 * The loop must have no break or continue, no inner loop, no
 * compare-and-swap, locks, barrier or critical section, and a step of 1.
 * Each decision is a note on the loop (`; vmchunk: ...`).  The pass runs
 * after the loop-nest passes and hoist, before strength.  ASC_VMCHUNK=0
 * leaves it out (part of the kernel cache key).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/passes/depend.h"

enum {
  CHUNK = 256,     /* iterations per chunk: 1 KiB of float32 per call */
  MAXCALLS = 4,    /* calls (and indices) one loop computes ahead */
  MAXSLICE = 64,   /* instructions of their slices, together */
  MAXTOP = 512,    /* top-level instructions of a body looked at */
  MAXBUFS = 32     /* buffers in one kernel: 64 KiB of stack at most */
};

typedef struct vctx {
  asc__cctx *c;
  asc__irfunc *f;
  const asc__irins **gdef;
  int32_t nregs0;
  asc__regtab indef;  /* registers the loop being looked at assigns */
  int nbufs;          /* buffers made so far in this kernel */
  int ntop;           /* top-level instructions of the loop looked at */
} vctx;

/* what the body of a candidate loop holds */
typedef struct scan {
  vctx *x;
  const char *bad;    /* something the pass leaves alone: why */
  bool raises;        /* a raise or a trapping instruction */
  int ntraps;         /* trapping instructions, at any depth */
  bool atomics;       /* an atomic update */
  int nraise;         /* raises */
  int32_t stores[64]; /* tensor roots stored to */
  int nstores;
  /* each store's tensor and offset (stores of atomics: -1), for loads of
   * the element an iteration stores (own_element) */
  int32_t st_t[64];
  asc__irval st_off[64];
} scan;

static void note_def(asc__irins *i, void *ctx) {
  vctx *x = ctx;
  if (i->dst >= 0 && i->dst < x->nregs0)
    x->gdef[i->dst] = i;
}

/* A call that runs as vector code in a loop gcc vectorises: the functions
 * of emit_ins.c's vm_funcs on float32 / float64, and float `**` other than
 * x ** 2.0 (a multiplication). */
static bool vm_call(const asc__irfunc *f, const asc__irins *i) {
  int dt;
  if (i->dst < 0)
    return false;
  dt = f->regs[i->dst].ty.dtype;
  if (dt != ascFloat32 && dt != ascFloat64)
    return false;
  if (i->op == ASC_IR_POW)
    return !(i->args[1].kind == ASC_IRV_CONST &&
             asc__dt_is_float(i->args[1].dtype) && i->args[1].c.f == 2.0);
  if (i->op != ASC_IR_CALL)
    return false;
  switch (i->aux) {
  case ASC_INTR_SIN: case ASC_INTR_COS: case ASC_INTR_TAN:
  case ASC_INTR_ASIN: case ASC_INTR_ACOS: case ASC_INTR_ATAN:
  case ASC_INTR_ATAN2: case ASC_INTR_SINH: case ASC_INTR_COSH:
  case ASC_INTR_TANH: case ASC_INTR_EXP: case ASC_INTR_EXPM1:
  case ASC_INTR_LOG: case ASC_INTR_LOG2: case ASC_INTR_LOG10:
  case ASC_INTR_LOG1P: case ASC_INTR_CBRT: case ASC_INTR_ERF:
    return true;
  default:
    return false;
  }
}

/* The raises generated for math functions' errors (lower_call.c). */
static bool math_raise(const asc__irins *i) {
  return i->str != NULL && i->nargs == 0 &&
         ((i->aux == ASC_KEXC_OVERFLOW_ERROR &&
           strcmp(i->str, "math range error") == 0) ||
          (i->aux == ASC_KEXC_VALUE_ERROR &&
           strcmp(i->str, "math domain error") == 0));
}

static void add_store(scan *s, int32_t t, asc__irval off, bool atomic) {
  if (s->nstores == (int)ASC_ARRAY_SIZE(s->stores)) {
    s->bad = "the loop stores to too many tensors";
    return;
  }
  s->st_t[s->nstores] = atomic ? -1 : t;
  s->st_off[s->nstores] = off;
  s->stores[s->nstores++] =
      asc__tensor_root(s->x->f, s->x->gdef, s->x->nregs0, t);
}

static void scan_ins(asc__irins *i, void *ctx) {
  scan *s = ctx;
  switch (i->op) {
  case ASC_IR_STORE:
    add_store(s, i->args[0].reg, i->args[1], false);
    break;
  case ASC_IR_RAISE:
    s->nraise++;
    if (math_raise(i))
      s->raises = true;
    else if (s->bad == NULL)
      s->bad = asc__arena_printf(s->x->c,
                                 "the loop raises %s, which may be what "
                                 "keeps a later index in range",
                                 asc__exc_name(i->aux));
    break;
  case ASC_IR_ATOMIC:
    s->atomics = true;
    add_store(s, i->args[0].reg, i->args[1], true);
    break;
  case ASC_IR_CAS: case ASC_IR_LOCK: case ASC_IR_UNLOCK:
  case ASC_IR_BARRIER: case ASC_IR_CRITICAL:
  case ASC_IR_GEMM: case ASC_IR_GEMM_EXACT: case ASC_IR_LINALG:
  case ASC_IR_NEW_ARRAY: case ASC_IR_SET_ARRAY: case ASC_IR_SET_VIEW:
  case ASC_IR_FREE_ARRAY: case ASC_IR_RESULT:
  case ASC_IR_RET: case ASC_IR_TRY: case ASC_IR_EXCMATCH:
  case ASC_IR_RERAISE: case ASC_IR_LOCAL_ARRAY: case ASC_IR_SHARED_ARRAY:
    if (s->bad == NULL)
      s->bad = asc__arena_printf(s->x->c, "the loop holds a %s",
                                 asc__irop_name(i->op));
    break;
  default:
    if (asc__ir_may_trap(s->x->f, i)) {
      s->raises = true;
      s->ntraps++;
    }
    break;
  }
}

/* Python's int() of a float32 / float64: a conversion that checks its
 * operand.  Its test can run ahead with the calls, and a chunk where no
 * test fails converts without it (cvt). */
static bool cast_trap(const asc__irfunc *f, const asc__irins *i) {
  int from;
  if (i->op != ASC_IR_CAST || i->dst < 0 || !asc__ir_may_trap(f, i))
    return false;
  from = asc__irv_dtype(f, i->args[0]);
  return (from == ascFloat32 || from == ascFloat64) &&
         asc__dt_is_int(f->regs[i->dst].ty.dtype);
}

/* Can a store of the loop write what a load of tensor t reads? */
static bool stored(const scan *s, int32_t t) {
  const vctx *x = s->x;
  int32_t rt = asc__tensor_root(x->f, x->gdef, x->nregs0, t);
  if (rt == ASC_ROOT_ANY)
    return s->nstores > 0;
  for (int k = 0; k < s->nstores; k++) {
    int32_t w = s->stores[k];
    if (w == ASC_ROOT_ANY || w == rt ||
        (rt == ASC_ROOT_PARAMS && w == ASC_ROOT_PARAMS))
      return true;
  }
  return false;
}

/* Whether offsets a and b of the loop L's body always have the same
 * value: the same register or constant, or made by the same pure
 * instruction (add, mul, a tensor's stride or extent) of such
 * operands.  A register the body assigns counts only as its own
 * instruction, or as L's induction. */
static bool same_value(const vctx *x, const asc__irins *L, asc__irval a,
                       asc__irval b, int depth) {
  const asc__irins *da, *db;
  if (asc__irv_eq(a, b))
    return a.kind == ASC_IRV_CONST || a.reg == L->dst ||
           !asc__regtab_get(&x->indef, a.reg) ||
           (depth < 8 && a.reg < x->nregs0 &&
            x->f->regs[a.reg].ndefs == 1 && x->gdef[a.reg] != NULL &&
            (x->gdef[a.reg]->op == ASC_IR_ADD ||
             x->gdef[a.reg]->op == ASC_IR_MUL) &&
            same_value(x, L, x->gdef[a.reg]->args[0],
                       x->gdef[a.reg]->args[0], depth + 1) &&
            same_value(x, L, x->gdef[a.reg]->args[1],
                       x->gdef[a.reg]->args[1], depth + 1));
  if (depth >= 8 || a.kind != ASC_IRV_REG || b.kind != ASC_IRV_REG ||
      a.reg >= x->nregs0 || b.reg >= x->nregs0 ||
      x->f->regs[a.reg].ndefs != 1 || x->f->regs[b.reg].ndefs != 1 ||
      (da = x->gdef[a.reg]) == NULL || (db = x->gdef[b.reg]) == NULL ||
      da->op != db->op || da->aux != db->aux || da->nargs != db->nargs)
    return false;
  switch (da->op) {
  case ASC_IR_ADD:
  case ASC_IR_MUL:
    return same_value(x, L, da->args[0], db->args[0], depth + 1) &&
           same_value(x, L, da->args[1], db->args[1], depth + 1);
  case ASC_IR_STRIDE:
  case ASC_IR_DIM:
    return asc__irv_eq(da->args[0], db->args[0]) &&
           !asc__regtab_get(&x->indef, da->args[0].reg);
  default:
    return false;
  }
}

/* Whether load d reads the one element its iteration stores, so that
 * reading it ahead for later iterations is reading what they would: every
 * store of the loop is to d's tensor, at d's offset, an offset that grows
 * with the loop's induction (the induction, or it plus a value from
 * before the loop), so no iteration stores an element another reads. */
static bool own_element(const vctx *x, const scan *s, const asc__irins *L,
                        asc__irins **top, int ntop, const asc__irins *d) {
  asc__irval off = d->args[1];
  int k;
  if (s->nstores == 0 || d->args[0].kind != ASC_IRV_REG ||
      off.kind != ASC_IRV_REG)
    return false;
  for (k = 0; k < s->nstores; k++)
    if (s->st_t[k] != d->args[0].reg ||
        !same_value(x, L, s->st_off[k], off, 0))
      return false;
  if (off.reg == L->dst)
    return true;
  for (k = 0; k < ntop && top[k]->dst != off.reg; k++)
    ;
  if (k == ntop || top[k]->op != ASC_IR_ADD || top[k]->nargs != 2)
    return false;
  for (int a = 0; a < 2; a++) {
    asc__irval iv = top[k]->args[a], inv = top[k]->args[1 - a];
    if (iv.kind == ASC_IRV_REG && iv.reg == L->dst &&
        (inv.kind == ASC_IRV_CONST ||
         (inv.kind == ASC_IRV_REG && !asc__regtab_get(&x->indef, inv.reg))))
      return true;
  }
  return false;
}

/* A float register the body reads before it assigns it (at the top
 * level): carried from the previous iteration. */
typedef struct carry {
  const asc__irfunc *f;
  const asc__regtab *indef;
  asc__regtab seen;
  int32_t reg;        /* the first carried float found, or -1 */
} carry;

static void carry_use(asc__irins *i, void *ctx) {
  carry *k = ctx;
  for (int32_t a = 0; a < i->nargs && k->reg < 0; a++) {
    int32_t r = i->args[a].kind == ASC_IRV_REG ? i->args[a].reg : -1;
    if (r >= 0 && asc__regtab_get(k->indef, r) &&
        !asc__regtab_get(&k->seen, r) &&
        asc__dt_is_float(k->f->regs[r].ty.dtype) &&
        k->f->regs[r].ty.kind == ASC_IRK_SCALAR)
      k->reg = r;
  }
}

static int32_t carried_float(vctx *x, const asc__irblock *b) {
  carry k;
  k.f = x->f;
  k.indef = &x->indef;
  k.reg = -1;
  asc__regtab_init(x->c, &k.seen, 0);
  for (asc__irins *i = b->first; i && k.reg < 0; i = i->next) {
    carry_use(i, &k);
    for (int r = 0; r < asc__ir_nregions(i); r++)
      asc__ir_walk(&i->body[r], carry_use, &k);
    if (i->dst >= 0)
      asc__regtab_set(&k.seen, i->dst, 1);
  }
  return k.reg;
}

/* The index of instruction i among the top-level ones, or -1. */
static int top_index(asc__irins **top, int ntop, const asc__irins *i) {
  for (int k = 0; k < ntop; k++)
    if (top[k] == i)
      return k;
  return -1;
}

typedef struct defsin {
  int32_t reg;
  bool found;
} defsin;

static void def_in(asc__irins *i, void *ctx) {
  defsin *d = ctx;
  if (i->dst == d->reg)
    d->found = true;
}

/* The top-level instruction before position u that gives register r the
 * value u reads: the last one assigning r before u, none of them inside
 * a region in between.  -1 when there is none (r is carried from the
 * previous iteration, or assigned in an if). */
static int value_at(asc__irins **top, int u, int32_t r) {
  for (int k = u - 1; k >= 0; k--) {
    if (asc__ir_nregions(top[k]) > 0) {
      defsin d = {r, top[k]->dst == r};
      for (int q = 0; q < asc__ir_nregions(top[k]); q++)
        asc__ir_walk(&top[k]->body[q], def_in, &d);
      if (d.found)
        return -1;
      continue;
    }
    if (top[k]->dst == r)
      return k;
  }
  return -1;
}

/* Marks in slice[] the top-level instructions call's value needs; false
 * when one may not run ahead (why: a note's reason).  A register may be
 * assigned more than once (b = int(v); b = min(b, 255)): each read takes
 * the assignment before it, and the clones run in order.  casts:
 * conversions may be among them (their tests run ahead too). */
static bool slice_from(vctx *x, const scan *s, const asc__irins *L,
                       asc__irins **top, int at, const int32_t *regs,
                       int nregs, uint8_t *slice, int *nslice,
                       const char **why, bool casts) {
  struct {
    int32_t reg;
    int use;          /* the position of the instruction reading it */
  } work[MAXSLICE * 4];
  int nw = 0;
  for (int a = 0; a < nregs; a++) {
    work[nw].reg = regs[a];
    work[nw++].use = at;
  }
  while (nw > 0) {
    int32_t r = work[--nw].reg;
    int k = value_at(top, work[nw].use, r);
    const asc__irins *d;
    if (r == L->dst || !asc__regtab_get(&x->indef, r))
      continue;
    if (k < 0) {
      *why = asc__arena_printf(x->c, "%%%s is assigned in the loop",
                               x->f->regs[r].name);
      return false;
    }
    d = top[k];
    if (slice[k])
      continue;
    if (d->op == ASC_IR_LOAD) {
      if (d->args[0].kind != ASC_IRV_REG ||
          (stored(s, d->args[0].reg) &&
           !own_element(x, s, L, top, x->ntop, d))) {
        *why = asc__arena_printf(x->c, "the loop stores to what %%%s reads",
                                 x->f->regs[r].name);
        return false;
      }
    } else if (!asc__nest_pure(x->f, d) && !(casts && cast_trap(x->f, d))) {
      *why = asc__arena_printf(x->c, "%%%s is not a pure value",
                               x->f->regs[r].name);
      return false;
    }
    if (++*nslice > MAXSLICE || nw + d->nargs > (int)ASC_ARRAY_SIZE(work)) {
      *why = "its argument takes too many instructions";
      return false;
    }
    slice[k] = 1;
    for (int32_t a = 0; a < d->nargs; a++)
      if (d->args[a].kind == ASC_IRV_REG) {
        work[nw].reg = d->args[a].reg;
        work[nw++].use = k;
      }
  }
  return true;
}

/* The slice of top[at]'s arguments (a call's, or an index's). */
static bool take_slice(vctx *x, const scan *s, const asc__irins *L,
                       asc__irins **top, int at, uint8_t *slice, int *nslice,
                       const char **why, bool casts) {
  int32_t regs[4];
  int n = 0;
  for (int32_t a = 0; a < top[at]->nargs && n < 4; a++)
    if (top[at]->args[a].kind == ASC_IRV_REG)
      regs[n++] = top[at]->args[a].reg;
  return slice_from(x, s, L, top, at, regs, n, slice, nslice, why, casts);
}

/* The slice of register r, read by top[at] (conversions allowed: in a
 * chunk whose checks run ahead). */
static bool take_reg_slice(vctx *x, const scan *s, const asc__irins *L,
                           asc__irins **top, int at, int32_t r,
                           uint8_t *slice, int *nslice, const char **why) {
  return slice_from(x, s, L, top, at, &r, 1, slice, nslice, why, true);
}

/* Does a load of the slice read at an index computed from a conversion?
 * Ahead, a conversion that fails gives 0, so such a load could read where
 * the loop never does. */
static bool load_after_cast(vctx *x, asc__irins **top, int ntop,
                            const uint8_t *slice) {
  asc__regtab t;
  asc__regtab_init(x->c, &t, ntop);
  for (int k = 0; k < ntop; k++) {
    bool in = false;
    if (!slice[k])
      continue;
    for (int32_t a = 0; a < top[k]->nargs; a++)
      if (top[k]->args[a].kind == ASC_IRV_REG &&
          asc__regtab_get(&t, top[k]->args[a].reg))
        in = true;
    if (in && top[k]->op == ASC_IR_LOAD)
      return true;
    if ((in || cast_trap(x->f, top[k])) && top[k]->dst >= 0)
      asc__regtab_set(&t, top[k]->dst, 1);
  }
  return false;
}

/* The registers stores and atomics of the loop write at (indices). */
typedef struct offs {
  int32_t r[16];
  int n;
} offs;

static void find_off(asc__irins *i, void *ctx) {
  offs *o = ctx;
  if ((i->op != ASC_IR_STORE && i->op != ASC_IR_ATOMIC) ||
      i->args[1].kind != ASC_IRV_REG)
    return;
  for (int k = 0; k < o->n; k++)
    if (o->r[k] == i->args[1].reg)
      return;
  if (o->n < (int)ASC_ARRAY_SIZE(o->r))
    o->r[o->n++] = i->args[1].reg;
}

static int32_t fresh(vctx *x, int32_t r) {
  return asc__ir_reg(x->c, x->f, x->f->regs[r].ty, x->f->regs[r].name);
}

/* Appends flag = flag | (fdt)c, c a bool: a failed test into the chunk's
 * flag. */
static void or_into(vctx *x, asc__irblock *b, int32_t flag, int fdt,
                    int32_t c, int32_t line) {
  int32_t t = asc__ir_reg(x->c, x->f, asc__irt_scalar(fdt), "failed");
  int32_t w = asc__ir_reg(x->c, x->f, asc__irt_scalar(fdt), "failed");
  asc__irins *ins = asc__ir_ins(x->c, ASC_IR_CAST, w, 1, line);
  ins->args[0] = asc__irv_reg(c);
  asc__ir_append(b, ins);
  ins = asc__ir_ins(x->c, ASC_IR_OR, t, 2, line);
  ins->args[0] = asc__irv_reg(flag);
  ins->args[1] = asc__irv_reg(w);
  asc__ir_append(b, ins);
  ins = asc__ir_ins(x->c, ASC_IR_MOV, flag, 1, line);
  ins->args[0] = asc__irv_reg(t);
  asc__ir_append(b, ins);
}

/* Appends buf[o] = v. */
static void store_into(vctx *x, asc__irblock *b, int32_t buf, int32_t o,
                       int32_t v, int32_t line) {
  asc__irins *st = asc__ir_ins(x->c, ASC_IR_STORE, -1, 3, line);
  st->args[0] = asc__irv_reg(buf);
  st->args[1] = asc__irv_reg(o);
  st->args[2] = asc__irv_reg(v);
  asc__ir_append(b, st);
}

/* Ahead, conversion cv of v: its test or-ed into flag, and the value
 * converted without a check (0 where the test fails).  The test is the
 * check's or stricter (v > -2^(b-1) where the check has v > -2^(b-1) - 1):
 * a chunk whose tests all pass converts nothing the check rejects. */
static int32_t conv_ahead(vctx *x, asc__irblock *b, const asc__irins *cv,
                          asc__irval v, int32_t flag, int fdt) {
  asc__irfunc *f = x->f;
  int from = asc__irv_dtype(f, cv->args[0]);
  int to = f->regs[cv->dst].ty.dtype;
  int bits = asc__dt_bits(to);
  int32_t line = cv->line, ok, sv, d;
  bool sg = asc__dt_is_signed(to);
  asc__irins *ins;
  ok = asc__ir_bin(x->c, f, b, ASC_IR_AND, ascBool,
                   asc__irv_reg(asc__ir_bin(
                       x->c, f, b, ASC_IR_GT, ascBool, v,
                       asc__irv_float(from, sg ? -ldexp(1.0, bits - 1) : -1.0),
                       line)),
                   asc__irv_reg(asc__ir_bin(
                       x->c, f, b, ASC_IR_LT, ascBool, v,
                       asc__irv_float(from, ldexp(1.0, sg ? bits - 1 : bits)),
                       line)),
                   line);
  sv = asc__ir_reg(x->c, f, asc__irt_scalar(from), "inrange");
  ins = asc__ir_ins(x->c, ASC_IR_SELECT, sv, 3, line);
  ins->args[0] = asc__irv_reg(ok);
  ins->args[1] = v;
  ins->args[2] = asc__irv_float(from, 0.0);
  asc__ir_append(b, ins);
  d = fresh(x, cv->dst);
  ins = asc__ir_ins(x->c, ASC_IR_CVT, d, 1, line);
  ins->args[0] = asc__irv_reg(sv);
  asc__ir_append(b, ins);
  or_into(x, b, flag, fdt,
          asc__ir_un(x->c, f, b, ASC_IR_NOT, ascBool, asc__irv_reg(ok), line),
          line);
  return d;
}

/* The copy map of a chunk's slices: r's copy, or -1. */
static int32_t ren_get(const asc__regtab *ren, int32_t r) {
  return (int32_t)asc__regtab_get(ren, r) - 1;
}

static void ren_set(asc__regtab *ren, int32_t r, int32_t to) {
  asc__regtab_set(ren, r, to + 1);
}

/* r's copy ahead, or r itself where it has none (defined before L) */
static int32_t renamed(const asc__regtab *ren, int32_t r) {
  int32_t t = ren_get(ren, r);
  return t >= 0 ? t : r;
}

static void rename_args(asc__irins *i, const asc__regtab *ren) {
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG)
      i->args[k].reg = renamed(ren, i->args[k].reg);
}

static const char *call_name(const asc__irins *i) {
  return i->op == ASC_IR_POW ? "**" : asc__intr_name(i->aux);
}

/* `if %c { raise <a math error> }` with nothing else: a check whose test
 * can run ahead with the calls. */
static bool check_if(const asc__irins *i) {
  const asc__irins *r = i->body[0].first;
  return i->op == ASC_IR_IF && i->args[0].kind == ASC_IRV_REG &&
         r != NULL && r->next == NULL && r->op == ASC_IR_RAISE &&
         math_raise(r) && i->body[1].first == NULL;
}

/* A copy of L with its own induction, without its check ifs, its
 * conversions unchecked, and the indices noff[0..noff) read from obufs[]
 * at (j - j0) (register ol): the loop of a chunk in which no check
 * fails. */
static asc__irins *unchecked_copy(vctx *x, const asc__irins *L,
                                  const int32_t *offr, const int32_t *obufs,
                                  int noff, int32_t ol) {
  asc__irins *C = asc__ir_clone_loop(x->c, x->f, L), *nx;
  for (asc__irins *i = C->body[0].first; i; i = nx) {
    nx = i->next;
    if (check_if(i)) {
      asc__ir_remove(&C->body[0], i);
      continue;
    }
    if (cast_trap(x->f, i))
      i->op = ASC_IR_CVT;
    for (int q = 0; q < noff; q++)
      if (i->dst == offr[q]) {
        asc__irins *ld = asc__ir_ins(x->c, ASC_IR_LOAD, i->dst, 2, i->line);
        ld->args[0] = asc__irv_reg(obufs[q]);
        ld->args[1] = asc__irv_reg(ol);
        asc__ir_insert_before(&C->body[0], i, ld);
        asc__ir_remove(&C->body[0], i);
        break;
      }
  }
  return C;
}

/* Does a store of the loop write at an index (of o, find_off's) computed
 * from a load or a conversion (or one not seen through)? */
static bool scatters(vctx *x, const scan *s, const asc__irins *L,
                     asc__irins **top, int ntop, const offs *o) {
  for (int q = 0; q < o->n; q++) {
    int32_t r = o->r[q];
    uint8_t one[MAXTOP];
    int n1 = 0;
    const char *no = NULL;
    if (r == L->dst || !asc__regtab_get(&x->indef, r))
      continue;
    memset(one, 0, (size_t)ntop);
    if (!take_reg_slice(x, s, L, top, ntop, r, one, &n1, &no))
      return true;
    for (int k = 0; k < ntop; k++)
      if (one[k] && (top[k]->op == ASC_IR_LOAD || cast_trap(x->f, top[k])))
        return true;
  }
  return o->n == (int)ASC_ARRAY_SIZE(o->r);
}

/* Whether an instruction in the branch of one of the loop's top-level
 * ifs reads a math call made at the top level (a masked store of a power
 * computed at every element, lower_mask.c): gcc moves such a call into
 * the branch, and a call in a branch does not vectorise. */
typedef struct branch_use {
  const asc__irfunc *f;
  asc__irins **top;
  int ntop;
  bool found;
} branch_use;

static void reads_call(asc__irins *i, void *ctx) {
  branch_use *u = ctx;
  for (int32_t a = 0; a < i->nargs && !u->found; a++)
    for (int k = 0; k < u->ntop && i->args[a].kind == ASC_IRV_REG; k++)
      if (u->top[k]->dst == i->args[a].reg && vm_call(u->f, u->top[k])) {
        u->found = true;
        break;
      }
}

static bool call_used_in_branch(const asc__irfunc *f, asc__irins **top,
                                int ntop) {
  branch_use u = {f, top, ntop, false};
  for (int k = 0; k < ntop && !u.found; k++)
    if (top[k]->op == ASC_IR_IF)
      for (int r = 0; r < 2; r++)
        asc__ir_walk(&top[k]->body[r], reads_call, &u);
  return u.found;
}

static bool try_loop(void *ctx, asc__irblock *b, asc__irins *L) {
  vctx *x = ctx;
  asc__irfunc *f = x->f;
  asc__irins *top[MAXTOP], *calls[MAXCALLS];
  uint8_t slice[MAXTOP], keep0[MAXTOP];
  offs o;               /* the indices the loop stores at */
  int ntop = 0, ncalls = 0, nslice = 0, noff = 0, keepn0;
  int offk[MAXCALLS];
  int32_t offr[MAXCALLS], obufs[MAXCALLS];
  int32_t carried, ity, line = L->line;
  bool branch;
  scan s;
  asc__irins *J0, *P, *ins, *anchor;
  bool fast;
  int32_t flag = -1;
  int fdt;
  int32_t j0, w, je, rem, jp, op, ol, bufs[MAXCALLS];
  asc__regtab ren;
  asc__irval chunk;
  /* what is computed ahead, for the note: arena text, as the pass may
   * unwind (the budgets) with it half made */
  const char *why = "";
  const char *reason;

  if ((L->op != ASC_IR_FOR && (L->op != ASC_IR_PFOR || L->nred > 0)) ||
      L->wave != 0 || L->unroll ||
      L->args[2].kind != ASC_IRV_CONST || L->args[2].c.i != 1 ||
      asc__ir_has_loop(&L->body[0]) || asc__ir_has_loop_exit(&L->body[0]))
    return false;
  if (asc__nest_short(L, 31))
    return false;   /* a short loop: the chunk would cost more than it gains */
  for (asc__irins *i = L->body[0].first; i; i = i->next) {
    if (ntop == MAXTOP)
      return false;
    top[ntop++] = i;
  }
  x->ntop = ntop;
  memset(&s, 0, sizeof s);
  s.x = x;
  asc__ir_walk(&L->body[0], scan_ins, &s);
  if (s.bad != NULL) {
    for (int k = 0; k < ntop; k++)
      if (vm_call(f, top[k]))
        asc__nest_note(x->c, L, "vmchunk",
                       asc__arena_printf(x->c, "%s (line %d) stays: %s",
                                         call_name(top[k]),
                                         (int)top[k]->line, s.bad));
    return false;
  }
  asc__regtab_init(x->c, &x->indef, ntop);
  asc__ir_defined_in(&L->body[0], &x->indef);
  carried = carried_float(x, &L->body[0]);
  branch = call_used_in_branch(f, top, ntop);
  if (!s.raises && carried < 0 && !branch)
    return false;   /* gcc vectorises the loop as it is */

  memset(slice, 0, sizeof slice);
  for (int k = 0; k < ntop; k++) {
    const char *no = NULL;
    uint8_t keep[MAXTOP];
    int keepn = nslice;
    if (!vm_call(f, top[k]))
      continue;
    memcpy(keep, slice, (size_t)ntop);
    if (ncalls == MAXCALLS)
      no = "the loop has enough calls computed ahead";
    else if (x->nbufs + ncalls == MAXBUFS)
      no = "the kernel has enough buffers for calls computed ahead";
    else if (take_slice(x, &s, L, top, k, slice, &nslice, &no, false))
      calls[ncalls++] = top[k];
    if (no != NULL) {
      memcpy(slice, keep, (size_t)ntop);
      nslice = keepn;
      asc__nest_note(x->c, L, "vmchunk",
                     asc__arena_printf(x->c, "%s (line %d) stays: %s",
                                       call_name(top[k]), (int)top[k]->line,
                                       no));
    }
  }
  /* The indices of stores and atomics computed with conversions (a
   * histogram's bin, int(x[i] * 256.0)): ahead too, into buffers read by
   * the copy of a chunk in which no check fails. */
  memcpy(keep0, slice, (size_t)ntop);
  keepn0 = nslice;
  o.n = 0;
  asc__ir_walk(&L->body[0], find_off, &o);
  for (int q = 0; q < o.n; q++) {
    int32_t r = o.r[q];
    const asc__irins *d = r < x->nregs0 ? x->gdef[r] : NULL;
    int k = d != NULL ? top_index(top, ntop, d) : -1, n1 = 0;
    uint8_t one[MAXTOP];
    const char *no = NULL;
    bool conv = false;
    if (k < 0 || f->regs[r].ndefs != 1 || vm_call(f, d) ||
        !asc__dt_is_int(f->regs[r].ty.dtype) ||
        (!asc__nest_pure(f, d) && !cast_trap(f, d)))
      continue;
    memset(one, 0, (size_t)ntop);
    one[k] = 1;
    if (!take_slice(x, &s, L, top, k, one, &n1, &no, true))
      continue;
    for (int i = 0; i < ntop; i++)
      conv |= one[i] && cast_trap(f, top[i]);
    if (!conv)
      continue;   /* gains little: no check to take out */
    if (load_after_cast(x, top, ntop, one))
      no = "a load of it reads at a converted index";
    else if (ncalls + noff == MAXCALLS)
      no = "the loop has enough values computed ahead";
    else if (x->nbufs + ncalls + noff == MAXBUFS)
      no = "the kernel has enough buffers for values computed ahead";
    if (no != NULL) {
      asc__nest_note(x->c, L, "vmchunk",
                     asc__arena_printf(x->c,
                                       "the index %%%s (line %d) stays: %s",
                                       f->regs[r].name, (int)d->line, no));
      continue;
    }
    for (int i = 0; i < ntop; i++)
      if (one[i] && !slice[i]) {
        slice[i] = 1;
        nslice++;
      }
    offk[noff] = k;
    offr[noff++] = r;
  }
  /* With neither calls nor indices, the tests of int() alone are worth
   * running ahead when the copy without them can vectorise: the loop
   * carries no float and updates nothing at an index computed from data
   * (a scatter or an atomic). */
  if (ncalls == 0 && noff == 0) {
    bool conv = false;
    for (int k = 0; k < ntop; k++)
      conv |= cast_trap(f, top[k]);
    if (!conv || carried >= 0 || s.atomics ||
        scatters(x, &s, L, top, ntop, &o)) {
      return false;
    }
  }
  /* The checks ahead too, when every raise of the loop is a check if at
   * its top level whose test can be computed with the calls: a chunk in
   * which none fails then runs a copy of the loop without them (which gcc
   * vectorises unless it carries a float), else the loop as it is. */
  {
    uint8_t keep[MAXTOP];
    int keepn = nslice, nif = 0;
    memcpy(keep, slice, (size_t)ntop);
    int ncast = 0;
    for (int k = 0; k < ncalls; k++)
      slice[top_index(top, ntop, calls[k])] = 1;
    fast = s.raises;
    for (int k = 0; k < ntop && fast; k++) {
      const char *no = NULL;
      if (check_if(top[k])) {
        nif++;
        if (!take_reg_slice(x, &s, L, top, k, top[k]->args[0].reg, slice,
                            &nslice, &no))
          fast = false;
      } else if (cast_trap(f, top[k])) {
        /* int(): its test ahead, the copy converts without it */
        ncast++;
        if (top[k]->args[0].kind == ASC_IRV_REG &&
            !take_reg_slice(x, &s, L, top, k, top[k]->args[0].reg, slice,
                            &nslice, &no))
          fast = false;
        if (!slice[k]) {
          slice[k] = 1;
          nslice++;
        }
      }
    }
    if (nif != s.nraise || ncast != s.ntraps ||
        (fast && load_after_cast(x, top, ntop, slice)))
      fast = false;
    if (!fast) {
      memcpy(slice, keep, (size_t)ntop);
      nslice = keepn;
    }
  }
  if (!fast && noff > 0) {
    /* the loop keeps a check it cannot take out: its indices stay */
    for (int q = 0; q < noff; q++)
      asc__nest_note(x->c, L, "vmchunk",
                     asc__arena_printf(x->c,
                                       "the index %%%s (line %d) stays: the "
                                       "loop has checks that cannot run ahead",
                                       f->regs[offr[q]].name,
                                       (int)top[offk[q]]->line));
    memcpy(slice, keep0, (size_t)ntop);
    nslice = keepn0;
    noff = 0;
    if (ncalls == 0) {
      return false;
    }
  }
  if (!fast && ncalls == 0) {
    return false;
  }
  x->nbufs += ncalls + noff;

  /* the chunk loop, in L's place */
  ity = f->regs[L->dst].ty.dtype;
  chunk = asc__irv_int(ity, CHUNK);
  j0 = asc__ir_reg(x->c, f, asc__irt_scalar(ity), "j0");
  J0 = asc__ir_for(x->c, j0, L->args[0], L->args[1], chunk, line);
  if (L->op == ASC_IR_PFOR) {
    /* a parallel loop runs its chunks in parallel, each in order */
    J0->op = ASC_IR_PFOR;
    L->op = ASC_IR_FOR;
    J0->note = L->note;
    L->note = NULL;
  }
  asc__ir_insert_before(b, L, J0);
  asc__ir_remove(b, L);
  rem = asc__ir_bin(x->c, f, &J0->body[0], ASC_IR_SUB, ity, L->args[1],
                    asc__irv_reg(j0), line);
  w = asc__ir_bin(x->c, f, &J0->body[0], ASC_IR_MIN, ity, asc__irv_reg(rem),
                  chunk, line);
  je = asc__ir_bin(x->c, f, &J0->body[0], ASC_IR_ADD, ity, asc__irv_reg(j0),
                   asc__irv_reg(w), line);
  anchor = J0->body[0].first;

  /* the calls ahead: their slices with fresh registers, the induction
   * renamed */
  jp = asc__ir_reg(x->c, f, asc__irt_scalar(ity), f->regs[L->dst].name);
  P = asc__ir_for(x->c, jp, asc__irv_reg(j0), asc__irv_reg(je),
              asc__irv_int(ity, 1), line);
  asc__regtab_init(x->c, &ren, ntop);
  ren_set(&ren, L->dst, jp);
  op = asc__ir_reg(x->c, f, asc__irt_scalar(ity), "o");
  ins = asc__ir_ins(x->c, ASC_IR_SUB, op, 2, line);
  ins->args[0] = asc__irv_reg(jp);
  ins->args[1] = asc__irv_reg(j0);
  asc__ir_append(&P->body[0], ins);
  for (int k = 0; k < ncalls; k++) {
    asc__irins *arr = asc__ir_local_array(
        x->c, f, f->regs[calls[k]->dst].ty.dtype, CHUNK, "vm", line);
    bufs[k] = arr->dst;
    asc__ir_insert_before(&J0->body[0], anchor, arr);
  }
  for (int q = 0; q < noff; q++) {
    asc__irins *arr = asc__ir_local_array(
        x->c, f, f->regs[offr[q]].ty.dtype, CHUNK, "idx", line);
    obufs[q] = arr->dst;
    asc__ir_insert_before(&J0->body[0], anchor, arr);
  }
  /* the flag: an integer as wide as the calls' floats, or the converted
   * ones' (gcc does not vectorise an or of _Bool next to float lanes) */
  fdt = ascInt32;
  if (ncalls > 0)
    fdt = f->regs[calls[0]->dst].ty.dtype == ascFloat64 ? ascInt64 : ascInt32;
  else
    for (int k = ntop - 1; k >= 0; k--)
      if (slice[k] && cast_trap(f, top[k]))
        fdt = asc__irv_dtype(f, top[k]->args[0]) == ascFloat64 ? ascInt64
                                                                : ascInt32;
  if (fast) {
    flag = asc__ir_reg(x->c, f, asc__irt_scalar(fdt), "failed");
    ins = asc__ir_ins(x->c, ASC_IR_MOV, flag, 1, line);
    ins->args[0] = asc__irv_int(fdt, 0);
    asc__ir_insert_before(&J0->body[0], anchor, ins);
  }
  /* the slices in order, each call followed by the store of its value */
  for (int k = 0; k < ntop; k++) {
    int q = 0;
    bool is_call = false;
    for (; q < ncalls; q++)
      if (calls[q] == top[k]) {
        is_call = true;
        break;
      }
    if (!slice[k] && !is_call)
      continue;
    if (cast_trap(f, top[k])) {
      /* only in a fast chunk's slices: the flag is there */
      asc__irval v = top[k]->args[0];
      if (v.kind == ASC_IRV_REG)
        v.reg = renamed(&ren, v.reg);
      ren_set(&ren, top[k]->dst,
              conv_ahead(x, &P->body[0], top[k], v, flag, fdt));
    } else {
      ins = asc__ir_clone(x->c, top[k]);
      rename_args(ins, &ren);
      ins->dst = fresh(x, top[k]->dst);
      ren_set(&ren, top[k]->dst, ins->dst);
      ins->note = NULL;
      asc__ir_append(&P->body[0], ins);
    }
    for (int qo = 0; qo < noff; qo++)
      if (offk[qo] == k)
        store_into(x, &P->body[0], obufs[qo], op, ren_get(&ren, top[k]->dst),
                   top[k]->line);
    if (is_call)
      store_into(x, &P->body[0], bufs[q], op, ren_get(&ren, top[k]->dst),
                 top[k]->line);
  }
  /* the checks' tests, or-ed into the flag; a test computed before the
   * loop (licm hoists one of a call of constants) is read as it is */
  for (int k = 0; k < ntop && fast; k++)
    if (check_if(top[k]))
      or_into(x, &P->body[0], flag, fdt, renamed(&ren, top[k]->args[0].reg),
              top[k]->line);
  /* L now runs one chunk, and reads the buffers */
  L->args[0] = asc__irv_reg(j0);
  L->args[1] = asc__irv_reg(je);
  ol = asc__ir_reg(x->c, f, asc__irt_scalar(ity), "o");
  ins = asc__ir_ins(x->c, ASC_IR_SUB, ol, 2, line);
  ins->args[0] = asc__irv_reg(L->dst);
  ins->args[1] = asc__irv_reg(j0);
  asc__ir_insert_before(&L->body[0], L->body[0].first, ins);
  for (int k = 0; k < ncalls; k++) {
    asc__irins *c = calls[k], *ld;
    /* in L: the call becomes buf[j - j0] */
    ld = asc__ir_ins(x->c, ASC_IR_LOAD, c->dst, 2, c->line);
    ld->args[0] = asc__irv_reg(bufs[k]);
    ld->args[1] = asc__irv_reg(ol);
    ld->note = c->note;
    asc__ir_insert_before(&L->body[0], c, ld);
    asc__ir_remove(&L->body[0], c);
    why = asc__arena_printf(x->c, "%s%s%s (line %d)", why, k ? ", " : "",
                            call_name(c), (int)c->line);
  }
  for (int q = 0; q < noff; q++)
    why = asc__arena_printf(x->c, "%s%sthe index %%%s (line %d)", why,
                            ncalls + q ? ", " : "", f->regs[offr[q]].name,
                            (int)top[offk[q]]->line);
  if (fast) {
    asc__irins *G = asc__ir_ins(x->c, ASC_IR_IF, -1, 1, line);
    int32_t any = asc__ir_reg(x->c, f, asc__irt_scalar(ascBool), "failed");
    ins = asc__ir_ins(x->c, ASC_IR_NE, any, 2, line);
    ins->args[0] = asc__irv_reg(flag);
    ins->args[1] = asc__irv_int(fdt, 0);
    asc__ir_append(&J0->body[0], P);
    asc__ir_append(&J0->body[0], ins);
    G->args[0] = asc__irv_reg(any);
    asc__ir_append(&G->body[0], L);
    asc__ir_append(&G->body[1], unchecked_copy(x, L, offr, obufs, noff, ol));
    asc__ir_append(&J0->body[0], G);
  } else {
    asc__ir_append(&J0->body[0], P);
    asc__ir_append(&J0->body[0], L);
  }
  if (s.raises && carried >= 0)
    reason = asc__arena_printf(x->c, "the loop raises and carries %%%s",
                               f->regs[carried].name);
  else if (s.raises)
    reason = "the loop raises";
  else if (carried >= 0)
    reason = asc__arena_printf(x->c, "the loop carries %%%s",
                               f->regs[carried].name);
  else
    reason = "a branch reads the value: the C compiler would move the call "
             "into it";
  if (ncalls == 0 && noff == 0) {
    why = "the range tests of int()";
    for (int k = 0, n = 0; k < ntop; k++)
      if (cast_trap(f, top[k]))
        why = asc__arena_printf(x->c, "%s%s%d", why, n++ ? ", " : " (line ",
                                (int)top[k]->line);
    why = asc__arena_printf(x->c, "%s)", why);
  }
  asc__nest_note(x->c, J0, "vmchunk",
                 asc__arena_printf(x->c,
                                   "%s computed ahead, %d iterations at a "
                                   "time, in a loop that vectorises (%s)%s",
                                   why, CHUNK, reason,
                                   fast ? "; its checks too: a chunk where "
                                          "none fails runs without them"
                                        : ""));
  return true;
}

void asc__pass_vmchunk(asc__cctx *c, asc__irfunc *f) {
  vctx x;
  size_t n = (size_t)f->nregs;
  x.c = c;
  x.f = f;
  x.nregs0 = f->nregs;
  x.gdef = asc__scratch_alloc(c, sizeof *x.gdef * (n ? n : 1));
  memset(&x.indef, 0, sizeof x.indef);
  x.nbufs = 0;
  asc__ir_walk(&f->body, note_def, &x);
  asc__ir_count(f); /* ndefs, for same_value */
  asc__nest_walk(c, f, "vmchunk", try_loop, &x);
}
