/*
 * Recognition of naive matrix-product loop nests (docs/optimizer.md,
 * "gemmrec").  Two shapes, over three perfectly nested loops of step 1
 * (the outermost may be a user's `pfor` without reductions):
 *
 *   the scalar sum (the reduction loop p innermost, i and j in either
 *   order):
 *     for %i { for %j { %s = mov 0.0          (or %s = load %c, <c[i, j]>)
 *                       for %p { %x = load %a, <a[i, p]>
 *                                %y = load %b, <b[p, j]>
 *                                %t = mul %x, %y   %s = add %s, %t }
 *                       store %c, <c[i, j]>, %s } }
 *
 *   the sum in memory (the three loops in any order):
 *     for .. { for .. { for .. { %x = load %a  %y = load %b
 *                                %o = load %c, <c[i, j]>  %t = mul %x, %y
 *                                %u = add %o, %t  store %c, <c[i, j]>, %u }}}
 *
 * where every offset is affine (depend.c) with a free of j, b free of i
 * and c free of p, and nothing else happens in the nest but integer
 * index arithmetic.  The nest becomes
 *
 *   if <c's elements (i, j) are distinct> {
 *     gemm_exact %c, off_c, sc0, sc1, %a, off_a, sa0, sa1,
 *                %b, off_b, sb0, sb1, m, n, k, flags
 *   } else { <the nest as it was> }
 *
 * gemm_exact (src/compiler/gemm_kernel.h) computes each element as the
 * loops did: from +0.0 (or c's element, flag 1), adding a * b for p in
 * order, each product and sum rounded on its own, so the default mode is
 * bit for bit the loops' result (the order rule).  Under fastmath
 * `reassoc` the non-accumulating product tries the runtime's BLAS first
 * (flag 2; asc_krt.gemm), which sums in its own order.
 *
 * Legality: the kernel is not may_alias (so different tensor parameters
 * never overlap: the launcher compiles overlapping arguments with
 * may_alias), c is not a or b, the loop bounds are fixed while the nest
 * runs, the registers of the nest are not used after it, and c's (i, j)
 * never meet in memory (tested at run time, the loops as fallback).
 * Each decision is a note on the `if`, or on the nest when it stays:
 * `; gemmrec: ...`.  ASC_GEMMREC=0 leaves the pass out (cache key).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/passes/depend.h"

typedef struct gctx {
  asc__cctx *c;
  asc__irfunc *f;
} gctx;

/* A matched nest. */
typedef struct gnest {
  asc__irins *L[3];
  bool mem;             /* the sum in memory (else the scalar sum) */
  asc__irins *lx, *ly;  /* the loads multiplied */
  asc__irins *mul, *add;
  asc__irins *mv;       /* scalar sum: `%s = mov %u` after the add, or NULL */
  asc__irins *init;     /* scalar sum: the definition of %s before p */
  asc__irins *lc;       /* the load of c's element (init or in memory) */
  asc__irins *st;       /* the store of c's element */
  int32_t s;            /* scalar sum: the accumulator */
  int dt;
} gnest;

static const char *rname(gctx *x, int32_t r) {
  return x->f->regs[r].name;
}

static bool is_reg(asc__irval v, int32_t r) {
  return v.kind == ASC_IRV_REG && v.reg == r;
}

static bool loop_ok(gctx *x, const asc__irins *L) {
  return (L->op == ASC_IR_FOR || (L->op == ASC_IR_PFOR && L->nred == 0)) &&
         !L->unroll && L->args[2].kind == ASC_IRV_CONST &&
         L->args[2].c.i == 1 && x->f->regs[L->dst].ty.dtype == ascInt64;
}

/* The one loop among b's instructions when it is the only region. */
static asc__irins *only_loop(const asc__irblock *b) {
  asc__irins *L = NULL;
  for (asc__irins *i = b->first; i; i = i->next)
    if (asc__ir_nregions(i) > 0) {
      if (L != NULL || i->op != ASC_IR_FOR)
        return NULL;
      L = i;
    }
  return L;
}

static bool float_dt(int dt) {
  return dt == ascFloat32 || dt == ascFloat64;
}

/* `%t = mul %x, %y` with %x, %y loads of b, and `add` using %t and
 * `other` (a register); found in b. */
static bool find_madd(gctx *x, const asc__irblock *b, int32_t other,
                      gnest *g) {
  for (asc__irins *i = b->first; i; i = i->next) {
    asc__irins *m = NULL;
    int32_t t;
    if (i->op != ASC_IR_ADD || i->dst < 0 ||
        !float_dt(x->f->regs[i->dst].ty.dtype))
      continue;
    if (is_reg(i->args[0], other) && i->args[1].kind == ASC_IRV_REG)
      t = i->args[1].reg;
    else if (is_reg(i->args[1], other) && i->args[0].kind == ASC_IRV_REG)
      t = i->args[0].reg;
    else
      continue;
    for (asc__irins *q = b->first; q != i; q = q->next)
      if (q->dst == t)
        m = q;
    if (m == NULL || m->op != ASC_IR_MUL || m->args[0].kind != ASC_IRV_REG ||
        m->args[1].kind != ASC_IRV_REG)
      continue;
    g->lx = g->ly = NULL;
    for (asc__irins *q = b->first; q != m; q = q->next) {
      if (q->op == ASC_IR_LOAD && q->dst == m->args[0].reg)
        g->lx = q;
      if (q->op == ASC_IR_LOAD && q->dst == m->args[1].reg)
        g->ly = q;
    }
    if (g->lx == NULL || g->ly == NULL)
      continue;
    g->mul = m;
    g->add = i;
    g->dt = x->f->regs[i->dst].ty.dtype;
    return true;
  }
  return false;
}

/* Matches the shape (no legality yet); false: not a product nest. */
static bool match(gctx *x, asc__irins *L0, gnest *g) {
  asc__irins *L1, *L2;
  memset(g, 0, sizeof *g);
  g->s = -1;
  if (!loop_ok(x, L0) || (L1 = only_loop(&L0->body[0])) == NULL ||
      !loop_ok(x, L1) || (L2 = only_loop(&L1->body[0])) == NULL ||
      !loop_ok(x, L2))
    return false;
  for (asc__irins *i = L2->body[0].first; i; i = i->next)
    if (asc__ir_nregions(i) > 0)
      return false;
  g->L[0] = L0;
  g->L[1] = L1;
  g->L[2] = L2;
  /* the scalar sum: a register defined before L2 in L1 and updated in L2 */
  for (asc__irins *q = L1->body[0].first; q != L2; q = q->next) {
    if (q->dst < 0 || !float_dt(x->f->regs[q->dst].ty.dtype))
      continue;
    for (asc__irins *i = L2->body[0].first; i; i = i->next)
      if (i->dst == q->dst)
        g->s = q->dst;
    if (g->s >= 0) {
      g->init = q;
      break;
    }
  }
  if (g->s >= 0) {
    if (!find_madd(x, &L2->body[0], g->s, g))
      return false;
    if (g->add->dst != g->s) {
      asc__irins *n = g->add->next;
      if (n == NULL || n->op != ASC_IR_MOV || n->dst != g->s ||
          !is_reg(n->args[0], g->add->dst))
        return false;
      g->mv = n;
    }
    for (asc__irins *q = L2->next; q; q = q->next)
      if (q->op == ASC_IR_STORE && is_reg(q->args[2], g->s))
        g->st = q;
    if (g->st == NULL)
      return false;
    if (g->init->op == ASC_IR_LOAD)
      g->lc = g->init;
    /* `s = c[i, j]`: %t = load %c, off; %s = mov %t */
    if (g->init->op == ASC_IR_MOV && g->init->args[0].kind == ASC_IRV_REG)
      for (asc__irins *q = L1->body[0].first; q != g->init; q = q->next)
        if (q->op == ASC_IR_LOAD && q->dst == g->init->args[0].reg)
          g->lc = q;
    return true;
  }
  /* the sum in memory: store %c, off, %u with %u = add %o, %t */
  g->mem = true;
  for (asc__irins *i = L2->body[0].first; i; i = i->next)
    if (i->op == ASC_IR_STORE) {
      if (g->st != NULL)
        return false;
      g->st = i;
    }
  if (g->st == NULL || g->st->args[2].kind != ASC_IRV_REG)
    return false;
  for (asc__irins *i = L2->body[0].first; i != g->st; i = i->next)
    if (i->op == ASC_IR_LOAD && i->args[0].reg == g->st->args[0].reg &&
        find_madd(x, &L2->body[0], i->dst, g) &&
        g->add->dst == g->st->args[2].reg) {
      g->lc = i;
      return true;
    }
  return false;
}

static bool aff_uses(const asc__affine *a, int l) {
  for (int k = 0; k < a->n; k++)
    if (a->t[k].iv == l)
      return true;
  return false;
}

/* The instructions of the nest that are none of the product's own. */
static bool own(const gnest *g, const asc__irins *i) {
  return i == g->L[1] || i == g->L[2] || i == g->lx || i == g->ly ||
         i == g->mul || i == g->add || i == g->mv || i == g->init ||
         i == g->lc || i == g->st;
}

static const char *check_block(gctx *x, const gnest *g,
                               const asc__irblock *b) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (own(g, i))
      continue;
    if (!asc__nest_pure(x->f, i))
      return asc__arena_printf(x->c, "the nest holds a %s at line %d",
                               asc__irop_name(i->op), (int)i->line);
    if (x->f->regs[i->dst].ty.kind != ASC_IRK_SCALAR ||
        float_dt(x->f->regs[i->dst].ty.dtype))
      return asc__arena_printf(x->c, "the nest computes more than the "
                               "product's sum (a %s at line %d)",
                               asc__irop_name(i->op), (int)i->line);
  }
  return NULL;
}

/* Roles: the levels of i, j, p and which load is a. */
typedef struct roles {
  int I, J, P;
  const asc__irins *la, *lb;
  asc__affine oa, ob, oc;
} roles;

static const char *legal(gctx *x, gnest *g, asc__depnest *d, roles *r) {
  const asc__irfunc *f = x->f;
  asc__regtab occ;
  const int32_t *in;
  int32_t nin;
  int32_t tc = g->st->args[0].reg;
  asc__affine ox, oy, olc;
  const char *why;

  if (f->may_alias)
    return "the kernel's tensors may alias";
  for (int l = 0; l < 3; l++) {
    const asc__irblock *b = &g->L[l]->body[0];
    if ((why = check_block(x, g, b)) != NULL)
      return why;
  }
  for (int l = 1; l < 3; l++)
    for (int k = 0; k < 2; k++) {
      asc__irval v = g->L[l]->args[k];
      if (v.kind == ASC_IRV_REG &&
          (asc__dep_nin(d, v.reg) > 0 || v.reg == g->L[0]->dst))
        return asc__arena_printf(x->c, "the bounds of loop %%%s change in "
                                 "the nest", rname(x, g->L[l]->dst));
    }
  /* dtypes: one float type throughout */
  if (!float_dt(g->dt) || f->regs[tc].ty.dtype != g->dt ||
      f->regs[g->lx->args[0].reg].ty.dtype != g->dt ||
      f->regs[g->ly->args[0].reg].ty.dtype != g->dt ||
      f->regs[g->mul->dst].ty.dtype != g->dt ||
      (g->s >= 0 && f->regs[g->s].ty.dtype != g->dt))
    return "the tensors and the sum are not of one float type";
  if (g->lx->args[0].reg == tc || g->ly->args[0].reg == tc)
    return asc__arena_printf(x->c, "%%%s is both stored and multiplied",
                             rname(x, tc));
  /* tensors that cannot overlap another: parameters, new arrays */
  {
    int32_t ts[3] = {tc, g->lx->args[0].reg, g->ly->args[0].reg};
    for (int k = 0; k < 3; k++) {
      const asc__irins *gd = d->f->regs[ts[k]].def;
      if (!f->regs[ts[k]].param &&
          !(f->regs[ts[k]].ndefs == 1 && gd != NULL &&
            (gd->op == ASC_IR_NEW_ARRAY || gd->op == ASC_IR_LOCAL_ARRAY)))
        return asc__arena_printf(x->c, "%%%s is not a parameter or a new "
                                 "array", rname(x, ts[k]));
    }
  }
  /* the scalar sum: +0.0 or c's element to start, read only by the
   * update and the store */
  if (!g->mem) {
    if (g->lc != NULL) {
      if (g->lc->args[0].reg != tc ||
          (g->lc != g->init && (f->regs[g->lc->dst].nuses != 1 ||
                                f->regs[g->lc->dst].ndefs != 1)))
        return asc__arena_printf(x->c, "%%%s starts at neither 0.0 nor "
                                 "the stored element", rname(x, g->s));
    } else if (g->init->op == ASC_IR_MOV) {
      asc__irval v = g->init->args[0];
      if (v.kind != ASC_IRV_CONST || v.c.f != 0.0 || signbit(v.c.f))
        return asc__arena_printf(x->c, "%%%s starts at neither 0.0 nor "
                                 "the stored element", rname(x, g->s));
    } else {
      return asc__arena_printf(x->c, "%%%s starts at neither 0.0 nor the "
                               "stored element", rname(x, g->s));
    }
    if (f->regs[g->s].ndefs != 2 || f->regs[g->s].nuses != 2)
      return asc__arena_printf(x->c, "%%%s is used besides its sum and its "
                               "store", rname(x, g->s));
  }
  /* the product's temporaries are used once */
  if (f->regs[g->lx->dst].nuses != (g->lx == g->ly ? 2 : 1) ||
      f->regs[g->ly->dst].nuses != (g->lx == g->ly ? 2 : 1) ||
      f->regs[g->lx->dst].ndefs != 1 || f->regs[g->ly->dst].ndefs != 1 ||
      f->regs[g->mul->dst].nuses != 1 || f->regs[g->mul->dst].ndefs != 1 ||
      (g->lc != NULL && g->mem &&
       (f->regs[g->lc->dst].nuses != 1 || f->regs[g->lc->dst].ndefs != 1)) ||
      (g->add->dst != g->s && (f->regs[g->add->dst].nuses != 1 ||
                               f->regs[g->add->dst].ndefs != 1)))
    return "a value of the product is used elsewhere";
  /* registers of the nest live only in it */
  asc__regtab_init(x->c, &occ, 0);
  asc__ir_occurrences(&g->L[0]->body[0], &occ);
  in = asc__dep_defined(d, &nin);
  for (int32_t k = 0; k < nin; k++) {
    int32_t q = in[k];
    if (q == g->L[1]->dst || q == g->L[2]->dst)
      continue;
    if (asc__regtab_get(&occ, q) != f->regs[q].ndefs + f->regs[q].nuses)
      return asc__arena_printf(x->c, "%%%s is used after the nest",
                               rname(x, q));
    if (q != g->s && f->regs[q].ndefs != 1)
      return asc__arena_printf(x->c, "%%%s is assigned more than once",
                               rname(x, q));
  }
  /* the accesses */
  if (!asc__dep_affine(d, g->st->args[1], &r->oc) ||
      !asc__dep_affine(d, g->lx->args[1], &ox) ||
      !asc__dep_affine(d, g->ly->args[1], &oy))
    return "an offset is not affine in the loops";
  if (g->lc != NULL && (!asc__dep_affine(d, g->lc->args[1], &olc) ||
                        !asc__dep_eq(&olc, &r->oc)))
    return asc__arena_printf(x->c, "the load of %%%s at line %d reads "
                             "another element than the store at line %d "
                             "writes", rname(x, tc), (int)g->lc->line,
                             (int)g->st->line);
  {
    const asc__affine *as[3] = {&r->oc, &ox, &oy};
    for (int q = 0; q < 3; q++)
      for (int t = 0; t < as[q]->n; t++)
        for (int u = 0; u < as[q]->t[t].ns; u++) {
          int32_t sy = as[q]->t[t].s[u];
          const asc__irins *gd = d->f->regs[sy].def;
          if (f->regs[sy].ndefs > 1 &&
              !(gd != NULL && (gd->op == ASC_IR_STRIDE || gd->op == ASC_IR_DIM)))
            return asc__arena_printf(x->c, "%%%s, in an offset, is assigned "
                                     "more than once", rname(x, sy));
        }
  }
  if (g->mem) {
    int np = 0;
    for (int l = 0; l < 3; l++)
      if (!aff_uses(&r->oc, l)) {
        r->P = l;
        np++;
      }
    if (np != 1)
      return asc__arena_printf(x->c, "the store to %%%s at line %d does not "
                               "follow exactly two of the loops",
                               rname(x, tc), (int)g->st->line);
  } else {
    r->P = 2;
  }
  {
    int u = r->P == 0 ? 1 : 0, v = r->P == 2 ? 1 : 2;
    int IJ[2][2] = {{u, v}, {v, u}};
    asc__affine ax[ASC_IR_MAXDIMS];
    /* i first: the loop of c's first axis (c[i, j]), when it says */
    if (f->regs[tc].ty.ndim == 2 && asc__dep_split(d, tc, &r->oc, ax) &&
        aff_uses(&ax[0], v) && !aff_uses(&ax[0], u)) {
      IJ[0][0] = IJ[1][1] = v;
      IJ[0][1] = IJ[1][0] = u;
    }
    const asc__irins *XY[2][2] = {{g->lx, g->ly}, {g->ly, g->lx}};
    const asc__affine *OXY[2][2] = {{&ox, &oy}, {&oy, &ox}};
    for (int s = 0; s < 2; s++)
      for (int t = 0; t < 2; t++)
        if (!aff_uses(OXY[t][0], IJ[s][1]) &&
            !aff_uses(OXY[t][1], IJ[s][0])) {
          r->I = IJ[s][0];
          r->J = IJ[s][1];
          r->la = XY[t][0];
          r->lb = XY[t][1];
          r->oa = *OXY[t][0];
          r->ob = *OXY[t][1];
          return NULL;
        }
  }
  return "the loads are not a[i, p] and b[p, j] of the stored c[i, j]";
}

/* ------------------------------------------------------------ rewrite */

typedef struct gemit {
  gctx *x;
  asc__depnest *d;
  asc__irblock *b;   /* instructions before the nest */
  int32_t line;
} gemit;

static bool is_int(asc__irval v, int64_t c) {
  return v.kind == ASC_IRV_CONST && v.c.i == c;
}

/* a op b on i64 (comparisons give bool), folded where an operand is a
 * constant that decides it: the set-up of a contiguous c stays short. */
static asc__irval bin(gemit *e, int op, asc__irval a, asc__irval b) {
  if (a.kind == ASC_IRV_CONST && b.kind == ASC_IRV_CONST) {
    int64_t x = a.c.i, y = b.c.i, r;
    bool ok = true;
    switch (op) {
    case ASC_IR_ADD: ok = !__builtin_add_overflow(x, y, &r); break;
    case ASC_IR_SUB: ok = !__builtin_sub_overflow(x, y, &r); break;
    case ASC_IR_MUL: ok = !__builtin_mul_overflow(x, y, &r); break;
    case ASC_IR_MAX: r = x > y ? x : y; break;
    case ASC_IR_GE: return asc__irv_int(ascBool, x >= y);
    case ASC_IR_LE: return asc__irv_int(ascBool, x <= y);
    default: ok = false; break;
    }
    if (ok)
      return asc__irv_int(ascInt64, r);
  }
  if ((op == ASC_IR_ADD && is_int(a, 0)) || (op == ASC_IR_MUL && is_int(a, 1)))
    return b;
  if (((op == ASC_IR_ADD || op == ASC_IR_SUB) && is_int(b, 0)) ||
      (op == ASC_IR_MUL && is_int(b, 1)))
    return a;
  return asc__irv_reg(asc__ir_bin(e->x->c, e->x->f, e->b, op, ascInt64, a,
                                  b, e->line));
}

static asc__irval absv(gemit *e, asc__irval a) {
  if (a.kind == ASC_IRV_CONST && a.c.i != INT64_MIN)
    return asc__irv_int(ascInt64, a.c.i < 0 ? -a.c.i : a.c.i);
  return asc__irv_reg(asc__ir_un(e->x->c, e->x->f, e->b, ASC_IR_ABS,
                                 ascInt64, a, e->line));
}

static asc__irval bbin(gemit *e, int op, asc__irval a, asc__irval b) {
  bool is_or = op == ASC_IR_OR;
  if (a.kind == ASC_IRV_CONST) {
    asc__irval t = a;
    a = b;
    b = t;
  }
  if (b.kind == ASC_IRV_CONST)
    return (b.c.i != 0) == is_or ? b : a;
  return asc__irv_reg(asc__ir_bin(e->x->c, e->x->f, e->b, op, ascBool, a, b,
                                  e->line));
}

/* The register a symbol of d stands for, readable before the nest: a
 * `dim` / `stride` of a parameter (which depend.c merges with other reads
 * of it, defined anywhere) is read again. */
static asc__irval symbol(gemit *e, int32_t r) {
  const asc__irins *g = e->d->f->regs[r].def;
  if (g != NULL && (g->op == ASC_IR_STRIDE || g->op == ASC_IR_DIM) &&
      g->args[0].kind == ASC_IRV_REG && e->x->f->regs[g->args[0].reg].param) {
    asc__irins *i = asc__ir_clone(e->x->c, g);
    i->note = NULL;
    i->dst = asc__ir_reg(e->x->c, e->x->f, asc__irt_scalar(ascInt64),
                         e->x->f->regs[r].name);
    asc__ir_append(e->b, i);
    return asc__irv_reg(i->dst);
  }
  return asc__irv_reg(r);
}

/* The sum of a's terms of level l (-1: the constant part). */
static asc__irval coef(gemit *e, const asc__affine *a, int l) {
  asc__irval sum = asc__irv_int(ascInt64, 0);
  bool any = false;
  for (int k = 0; k < a->n; k++) {
    asc__irval t = asc__irv_int(ascInt64, a->t[k].c);
    if (a->t[k].iv != l)
      continue;
    for (int q = 0; q < a->t[k].ns; q++)
      t = a->t[k].c == 1 && q == 0 ? symbol(e, a->t[k].s[q])
                                   : bin(e, ASC_IR_MUL, t,
                                         symbol(e, a->t[k].s[q]));
    sum = any ? bin(e, ASC_IR_ADD, sum, t) : t;
    any = true;
  }
  return sum;
}

/* a's value where the loops start. */
static asc__irval base(gemit *e, const asc__affine *a, asc__irins *const *L) {
  asc__irval v = coef(e, a, -1);
  for (int l = 0; l < 3; l++)
    if (aff_uses(a, l) && !(L[l]->args[0].kind == ASC_IRV_CONST &&
                            L[l]->args[0].c.i == 0))
      v = bin(e, ASC_IR_ADD, v,
              bin(e, ASC_IR_MUL, coef(e, a, l), L[l]->args[0]));
  return v;
}

static asc__irval trip(gemit *e, const asc__irins *L) {
  return bin(e, ASC_IR_MAX, bin(e, ASC_IR_SUB, L->args[1], L->args[0]),
             asc__irv_int(ascInt64, 0));
}

/* (i, j) -> i * s0 + j * s1 is one-to-one on m x n when the rows (or the
 * columns) are disjoint intervals. */
static asc__irval distinct_side(gemit *e, asc__irval s0, asc__irval s1,
                                asc__irval m, asc__irval n) {
  asc__irval one = asc__irv_int(ascInt64, 1);
  asc__irval a0 = absv(e, s0), a1 = absv(e, s1);
  asc__irval span = bin(e, ASC_IR_ADD,
                        bin(e, ASC_IR_MUL, a1,
                            bin(e, ASC_IR_SUB, n, one)), one);
  /* one instruction per statement: the IR's order is the text's */
  asc__irval apart = bin(e, ASC_IR_GE, a0, span);
  asc__irval one_row = bin(e, ASC_IR_LE, m, one);
  asc__irval rows = bbin(e, ASC_IR_OR, apart, one_row);
  asc__irval moves = bin(e, ASC_IR_GE, a1, one);
  asc__irval one_col = bin(e, ASC_IR_LE, n, one);
  asc__irval cols = bbin(e, ASC_IR_OR, moves, one_col);
  return bbin(e, ASC_IR_AND, rows, cols);
}

static void rewrite(gctx *x, asc__irblock *b, gnest *g, asc__depnest *d,
                    const roles *r, const char *note) {
  asc__irins *const *L = g->L;
  asc__irblock pre = {NULL, NULL};
  gemit e = {x, d, &pre, L[0]->line};
  asc__irval m, n, k, sc0, sc1, ok, by_rows, by_cols;
  asc__irins *gi, *ifi;
  int32_t tc = g->st->args[0].reg;

  m = trip(&e, L[r->I]);
  n = trip(&e, L[r->J]);
  k = trip(&e, L[r->P]);
  sc0 = coef(&e, &r->oc, r->I);
  sc1 = coef(&e, &r->oc, r->J);
  gi = asc__ir_ins(x->c, ASC_IR_GEMM_EXACT, -1, 15, L[0]->line);
  gi->args[0] = asc__irv_reg(tc);
  gi->args[1] = base(&e, &r->oc, L);
  gi->args[2] = sc0;
  gi->args[3] = sc1;
  gi->args[4] = asc__irv_reg(r->la->args[0].reg);
  gi->args[5] = base(&e, &r->oa, L);
  gi->args[6] = coef(&e, &r->oa, r->I);
  gi->args[7] = coef(&e, &r->oa, r->P);
  gi->args[8] = asc__irv_reg(r->lb->args[0].reg);
  gi->args[9] = base(&e, &r->ob, L);
  gi->args[10] = coef(&e, &r->ob, r->P);
  gi->args[11] = coef(&e, &r->ob, r->J);
  gi->args[12] = m;
  gi->args[13] = n;
  gi->args[14] = k;
  if (g->lc != NULL)
    gi->aux |= ASC_GEMM_ACCUMULATE;
  else if (x->f->fastmath & ASC_FASTMATH_REASSOC)
    gi->aux |= ASC_GEMM_BLAS_FIRST;
  by_rows = distinct_side(&e, sc0, sc1, m, n);
  by_cols = distinct_side(&e, sc1, sc0, n, m);
  ok = bbin(&e, ASC_IR_OR, by_rows, by_cols);
  ifi = asc__ir_ins(x->c, ASC_IR_IF, -1, 1, L[0]->line);
  ifi->args[0] = ok;
  ifi->note = note;
  asc__ir_append(&ifi->body[0], gi);
  asc__ir_splice(b, L[0], &pre);
  asc__ir_insert_before(b, L[0], ifi);
  asc__ir_remove(b, L[0]);
  asc__ir_append(&ifi->body[1], L[0]);
}

static void add_note(gctx *x, asc__irins *i, const char *text) {
  asc__nest_note(x->c, i, "gemmrec", text);
}

static bool try_nest(gctx *x, asc__irblock *b, asc__irins *L0) {
  gnest g;
  asc__depnest d;
  roles r;
  const char *why, *what;
  if (!match(x, L0, &g))
    return false;
  asc__dep_init(&d, x->c, x->f, g.L, 3);
  why = legal(x, &g, &d, &r);
  if (why != NULL) {
    add_note(x, L0, asc__arena_printf(
                        x->c, "the loop nest at line %d stays loops: %s",
                        (int)L0->line, why));
    return false;
  }
  what = g.lc != NULL
             ? "gemm_exact accumulating into the stored elements"
         : (x->f->fastmath & ASC_FASTMATH_REASSOC)
             ? "the runtime's BLAS under reassoc (gemm_exact when it does "
               "nothing)"
             : "gemm_exact";
  {
    const char *note = asc__arena_printf(
        x->c, "gemmrec: the loop nest at line %d (%%%s, %%%s, %%%s) is the "
              "matrix product %%%s[%%%s, %%%s] %s= sum over %%%s of "
              "%%%s[%%%s, %%%s] * %%%s[%%%s, %%%s]: %s%s; the loops run "
              "when the stored elements overlap",
        (int)L0->line, rname(x, g.L[0]->dst), rname(x, g.L[1]->dst),
        rname(x, g.L[2]->dst), rname(x, g.st->args[0].reg),
        rname(x, g.L[r.I]->dst), rname(x, g.L[r.J]->dst),
        g.lc != NULL ? "+" : "", rname(x, g.L[r.P]->dst),
        rname(x, r.la->args[0].reg), rname(x, g.L[r.I]->dst),
        rname(x, g.L[r.P]->dst), rname(x, r.lb->args[0].reg),
        rname(x, g.L[r.P]->dst), rname(x, g.L[r.J]->dst), what,
        (x->f->fastmath & ASC_FASTMATH_REASSOC) && g.lc == NULL
            ? ""
            : ", each element in the loops' order of operations");
    rewrite(x, b, &g, &d, &r, note);
  }
  return true;
}

static bool try_any(void *ctx, asc__irblock *b, asc__irins *i) {
  gctx *x = ctx;
  return (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR) && try_nest(x, b, i);
}

void asc__pass_gemmrec(asc__cctx *c, asc__irfunc *f) {
  gctx x;
  x.c = c;
  x.f = f;
  asc__nest_walk(c, f, "gemmrec", try_any, &x);
}
