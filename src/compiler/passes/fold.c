/*
 * Constant folding and propagation, and the algebraic identities that
 * index arithmetic meets after specialisation (x*1, x+0, the unit stride
 * of a contiguous tensor).  ConstExpr parameters and frozen module globals
 * reach the IR as constants, so they fold here too.
 *
 *   %a:i64 = mov 3            ; single definition
 *   %b:i64 = mul %a, 4   ->   %b:i64 = mov 12
 *   if true { X } else { Y }  ->  X
 */
#include <string.h>

#include "compiler/passes/passes.h"

typedef struct fstate {
  asc__cctx *c;
  asc__irfunc *f;
  asc__irval *known;   /* per register: its constant or copy, kind NONE */
  const asc__irins **arr;  /* per register: its local/shared array def, or
                              the new_array it is (a name bound once) */
  uint8_t *iv;         /* loop induction registers (scoped to the loop):
                          1 = an induction, 2 = inside its loop now */
  bool changed;
} fstate;

static bool single(const asc__irfunc *f, int32_t r) {
  return f->regs[r].ndefs == 1 && !f->regs[r].param;
}

static void mark_iv(asc__irins *i, void *ctx) {
  fstate *s = ctx;
  if (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR)
    s->iv[i->dst] = 1;
}

static void collect(asc__irins *i, void *ctx) {
  fstate *s = ctx;
  if (i->op == ASC_IR_MOV && single(s->f, i->dst)) {
    asc__irval a = i->args[0];
    if (a.kind == ASC_IRV_CONST ||
        (a.kind == ASC_IRV_REG && a.reg != i->dst &&
         (single(s->f, a.reg) || s->f->regs[a.reg].param) &&
         s->f->regs[a.reg].ty.kind == ASC_IRK_SCALAR))
      s->known[i->dst] = a;
  }
  if (i->op == ASC_IR_LOCAL_ARRAY || i->op == ASC_IR_SHARED_ARRAY)
    s->arr[i->dst] = i;
  /* an array the kernel creates, and a name bound to it once: its
   * constant extents are known (m = x.max(axis=1, keepdims=True) has 1
   * columns, so x - m reads m with stride 0, not a stride chosen at run
   * time, and the loop vectorises) */
  if (i->op == ASC_IR_NEW_ARRAY && single(s->f, i->dst))
    s->arr[i->dst] = i;
  if (i->op == ASC_IR_SET_ARRAY && single(s->f, i->dst) &&
      i->args[0].kind == ASC_IRV_REG && s->arr[i->args[0].reg] != NULL &&
      s->arr[i->args[0].reg]->op == ASC_IR_NEW_ARRAY)
    s->arr[i->dst] = s->arr[i->args[0].reg];
}

static void to_mov(fstate *s, asc__irins *i, asc__irval v) {
  i->op = ASC_IR_MOV;
  i->nargs = 1;
  i->args[0] = v;
  i->aux = 0;
  s->changed = true;
}

static bool is_const(asc__irval v, double x) {
  if (v.kind != ASC_IRV_CONST)
    return false;
  if (asc__dt_is_float(v.dtype))
    return v.c.f == x;
  return (double)v.c.i == x;
}

/* x op identity -> x, and friends.  Float identities only where exact
 * (x*1, x/1; not x+0: -0.0 + 0 is +0.0). */
static void identities(fstate *s, asc__irins *i) {
  int dt = i->dst >= 0 ? s->f->regs[i->dst].ty.dtype : -1;
  bool fl = asc__dt_is_float(dt);
  asc__irval a, b;
  if (i->nargs != 2 || i->op == ASC_IR_STORE || i->op == ASC_IR_LOAD ||
      i->op == ASC_IR_DIM || i->op == ASC_IR_STRIDE)
    return;
  a = i->args[0];
  b = i->args[1];
  /* x cmp x of integers (the launch test of a parallel loop over an
   * array the kernel created: `dim %new, 0 >= n` with %new made n long;
   * its serial fallback goes with it).  Not of floats: NaN. */
  if ((asc__irop_flags(i->op) & ASC_OPF_CMP) && a.kind == ASC_IRV_REG &&
      asc__irv_eq(a, b)) {
    int st = asc__irv_dtype(s->f, a);
    if (!asc__dt_is_float(st) && !asc__dt_is_complex(st)) {
      bool t = i->op == ASC_IR_EQ || i->op == ASC_IR_LE || i->op == ASC_IR_GE;
      to_mov(s, i, asc__irv_int(ascBool, t));
      return;
    }
  }
  switch (i->op) {
  case ASC_IR_ADD:
    if (!fl && is_const(b, 0))
      to_mov(s, i, a);
    else if (!fl && is_const(a, 0))
      to_mov(s, i, b);
    break;
  case ASC_IR_SUB:
    if (!fl && is_const(b, 0))
      to_mov(s, i, a);
    break;
  case ASC_IR_MUL:
    if (is_const(b, 1))
      to_mov(s, i, a);
    else if (is_const(a, 1))
      to_mov(s, i, b);
    else if (!fl && (is_const(a, 0) || is_const(b, 0)))
      to_mov(s, i, asc__irv_int(dt, 0));
    break;
  case ASC_IR_DIV:
    if (is_const(b, 1))
      to_mov(s, i, a);
    break;
  case ASC_IR_FLOORDIV:
    if (!fl && is_const(b, 1))
      to_mov(s, i, a);
    break;
  case ASC_IR_SHL:
  case ASC_IR_SHR:
    if (is_const(b, 0))
      to_mov(s, i, a);
    break;
  case ASC_IR_OR:
  case ASC_IR_AND:
    /* x with itself is x; of bools (a broadcast check with one side
     * known: `eq | 1`), true absorbs or and false absorbs and, the other
     * constant is the identity */
    if (a.kind == ASC_IRV_REG && asc__irv_eq(a, b)) {
      to_mov(s, i, a); /* x & x, x | x */
    } else if (dt == ascBool &&
               (a.kind == ASC_IRV_CONST) != (b.kind == ASC_IRV_CONST)) {
      asc__irval k = a.kind == ASC_IRV_CONST ? a : b;
      asc__irval x = a.kind == ASC_IRV_CONST ? b : a;
      if (asc__irv_dtype(s->f, x) == ascBool)
        to_mov(s, i, (k.c.i != 0) == (i->op == ASC_IR_OR) ? k : x);
    }
    break;
  default:
    break;
  }
}

static void fold_block(fstate *s, asc__irblock *b);

static void fold_ins(fstate *s, asc__irblock *b, asc__irins *i) {
  asc__irfunc *f = s->f;
  /* propagate constants and copies into the operands */
  for (int32_t k = 0; k < i->nargs; k++) {
    asc__irval *v = &i->args[k];
    if (v->kind == ASC_IRV_REG && s->known[v->reg].kind != ASC_IRV_NONE) {
      asc__irval kv = s->known[v->reg];
      /* a copy of an induction variable only inside its loop */
      if (kv.kind == ASC_IRV_REG && s->iv[kv.reg] == 1)
        continue;
      *v = kv;
      s->changed = true;
    }
  }
  switch (i->op) {
  case ASC_IR_IF:
    if (i->args[0].kind == ASC_IRV_CONST) {
      asc__irblock *keep = &i->body[i->args[0].c.i ? 0 : 1];
      /* the branch's notes (parallelize's run-time test, a fusion
       * decision of the statement) stay, on what takes its place, saying
       * what became of the test */
      asc__irins *to = keep->first != NULL ? keep->first : i->next;
      if (i->note != NULL && to != NULL) {
        const char *t = asc__arena_printf(
            s->c, "%s\nfold: the branch's test is always %s", i->note,
            i->args[0].c.i ? "true" : "false");
        if (to->note != NULL)
          t = asc__arena_printf(s->c, "%s\n%s", t, to->note);
        to->note = t;
      }
      asc__ir_splice(b, i, keep);
      asc__ir_remove(b, i);
      s->changed = true;
      return;
    }
    break; /* fold inside both branches */
  case ASC_IR_STRIDE:
  case ASC_IR_DIM: {
    int32_t t = i->args[0].reg;
    const asc__irins *a = s->arr[t];
    if (a != NULL && a->op == ASC_IR_NEW_ARRAY) {
      asc__irval e;
      if (i->op == ASC_IR_STRIDE) {
        if (i->aux == a->nargs - 1)
          to_mov(s, i, asc__irv_int(ascInt64, 1));
      } else if (i->aux < a->nargs && (e = a->args[i->aux]).kind == ASC_IRV_CONST) {
        to_mov(s, i, asc__irv_int(ascInt64, e.c.i));
      } else if (i->aux < a->nargs && e.kind == ASC_IRV_REG &&
                 (single(f, e.reg) || f->regs[e.reg].param) &&
                 asc__irv_dtype(f, e) == ascInt64) {
        /* an extent in a register bound once (or a parameter) still has
         * the value it had when the array was made */
        to_mov(s, i, e);
      }
    } else if (a != NULL && i->aux < a->nimm) {
      int64_t v = 1;
      if (i->op == ASC_IR_DIM)
        v = a->imm[i->aux];
      else
        for (int32_t k = i->aux + 1; k < a->nimm; k++)
          v *= a->imm[k];
      to_mov(s, i, asc__irv_int(ascInt64, v));
    } else if (i->op == ASC_IR_STRIDE &&
               (f->regs[t].ty.flags & ASC_IRT_CONTIG) &&
               i->aux == f->regs[t].ty.ndim - 1) {
      to_mov(s, i, asc__irv_int(ascInt64, 1));
    }
    return;
  }
  case ASC_IR_FOR:
    if (i->args[0].kind == ASC_IRV_CONST && i->args[1].kind == ASC_IRV_CONST &&
        i->args[2].kind == ASC_IRV_CONST) {
      int64_t lo = i->args[0].c.i, hi = i->args[1].c.i, st = i->args[2].c.i;
      bool empty = st > 0 ? lo >= hi : st < 0 ? lo <= hi : false;
      if (empty) {
        asc__ir_remove(b, i);
        s->changed = true;
        return;
      }
    }
    break;
  case ASC_IR_SELECT:
    if (i->args[0].kind == ASC_IRV_CONST) {
      to_mov(s, i, i->args[0].c.i ? i->args[1] : i->args[2]);
      return;
    }
    if (asc__irv_eq(i->args[1], i->args[2])) {
      to_mov(s, i, i->args[1]);
      return;
    }
    break;
  case ASC_IR_CAST:
    if (asc__irv_dtype(f, i->args[0]) == f->regs[i->dst].ty.dtype) {
      to_mov(s, i, i->args[0]);
      return;
    }
    break;
  default:
    break;
  }
  if (i->dst >= 0 && i->op != ASC_IR_MOV && i->op != ASC_IR_FOR &&
      i->op != ASC_IR_PFOR && (asc__irop_flags(i->op) & ASC_OPF_PURE) &&
      i->op != ASC_IR_CALL && i->op != ASC_IR_DIM && i->op != ASC_IR_STRIDE &&
      f->regs[i->dst].ty.kind == ASC_IRK_SCALAR) {
    asc__irval r;
    int src = i->nargs > 0 ? asc__irv_dtype(f, i->args[0]) : -1;
    if (asc__ir_eval(i->op, i->aux, f->regs[i->dst].ty.dtype, src, i->args,
                     i->nargs, &r)) {
      to_mov(s, i, r);
      return;
    }
    identities(s, i);
  }
  if (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR)
    s->iv[i->dst] = 2;
  for (int k = 0; k < asc__ir_nregions(i); k++)
    fold_block(s, &i->body[k]);
  if (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR)
    s->iv[i->dst] = 1;
}

static void fold_block(fstate *s, asc__irblock *b) {
  asc__irins *i = b->first;
  while (i != NULL) {
    asc__irins *next = i->next;
    fold_ins(s, b, i);
    i = next;
  }
}

void asc__pass_fold(asc__cctx *c, asc__irfunc *f) {
  fstate s;
  int rounds = 0;
  size_t nalloc = 0;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.f = f;
  do {
    size_t n = (size_t)f->nregs + 1;
    s.changed = false;
    asc__cctx_budget(c, "fold");
    asc__ir_count(f);
    /* One set of tables while the register count holds: a round per
     * fresh copy would keep 16 of them in the arena. */
    if (s.known == NULL || n != nalloc) {
      s.known = asc__scratch_alloc(c, sizeof *s.known * n);
      s.arr = asc__scratch_alloc(c, sizeof *s.arr * n);
      s.iv = asc__scratch_alloc(c, n);
      nalloc = n;
    } else {
      memset(s.known, 0, sizeof *s.known * n);
      memset(s.arr, 0, sizeof *s.arr * n);
      memset(s.iv, 0, n);
    }
    asc__ir_walk(&f->body, mark_iv, &s);
    asc__ir_walk(&f->body, collect, &s);
    fold_block(&s, &f->body);
  } while (s.changed && ++rounds < 16);
}
