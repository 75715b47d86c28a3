/*
 * Cache tiling of a 2-deep perfect nest whose accesses cross (docs/optimizer.md):
 * a pfor I (asc.prange, or a loop the parallelize pass proved independent)
 * whose body is pure row set-up and one serial loop J of straight-line
 * loads, stores and pure instructions,
 *
 *   pfor %i = lo, hi, 1 { <pure set-up>  for %j = jlo, jhi, 1 { S(i, j) } }
 *
 * where one access walks j with unit stride and another walks i with unit
 * stride and j with a stride (b[j, i] = a[i, j]), becomes, for tiles of
 * T x T iterations,
 *
 *   pfor %ib = 0, ceil((hi - lo) / T), 1 {
 *     %i0 = lo + ib * T   %i1 = i0 + min(hi - i0, T)
 *     for %j0 = jlo, jhi, T {
 *       %j1 = j0 + min(jhi - j0, T)
 *       for %i = i0, i1, 1 { <set-up>  for %j = j0, j1, 1 { S(i, j) } }
 *     }
 *   }
 *
 * so that the T rows of the unit-stride-in-i access and the T rows of the
 * other stay in L1 while a tile is done.  Only the interleaving of
 * different i changes: each iteration (i, j) runs the same instructions on
 * the same elements, iterations of one i keep their j order (and those of
 * one j their i order), so results are bit-identical.  Legal when the
 * nest's iterations are independent: I is a pfor (the user's prange, or
 * parallelize's, behind its run-time test that no written tensor overlaps
 * itself), every dependence between the accesses of J's body has distance
 * (0, 0) (depend.c; unknown refuses), nothing may raise, tensors cannot
 * alias.  The pass runs after parallelize, which leaves J serial (does not
 * collapse it into I) when asc__tile_wants says the nest will be tiled.
 *
 * Each decision is a note on I: `; tile: ...`.  ASC_TILE=0 leaves the pass
 * out (part of the kernel cache key).
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/passes/depend.h"

/* A tile row is asc__tile_row_bytes of the widest element the nest
 * touches (two cache lines for a 32 KiB L1), 8 to 64 elements
 * (docs/optimizer.md, "Tile sizes"). */
enum { MIN_TILE = 8, MAX_TILE = 64 };

typedef struct tctx {
  asc__cctx *c;
  asc__irfunc *f;
} tctx;

bool asc__tile_enabled(void) {
  const char *s = getenv("ASC_TILE");
  return s == NULL || strcmp(s, "0") != 0;
}

static void add_note(tctx *x, asc__irins *i, const char *text) {
  asc__nest_note(x->c, i, "tile", text);
}

static const char *rname(tctx *x, int32_t r) {
  return x->f->regs[r].name;
}

static bool pure_ok(tctx *x, const asc__irins *i) {
  return asc__nest_pure(x->f, i);
}

static bool step1(tctx *x, const asc__irins *L) {
  return !L->unroll && L->args[2].kind == ASC_IRV_CONST &&
         L->args[2].c.i == 1 && x->f->regs[L->dst].ty.dtype == ascInt64;
}

/* The nest's shape: I (for / pfor without reductions) = set-up + J, J a
 * plain for of straight-line instructions.  Returns J or NULL. */
static asc__irins *shape(tctx *x, asc__irins *I) {
  asc__irins *J = I->body[0].last;
  if ((I->op != ASC_IR_FOR && I->op != ASC_IR_PFOR) || I->nred > 0 ||
      !step1(x, I) || J == NULL || J->op != ASC_IR_FOR || !step1(x, J))
    return NULL;
  for (const asc__irins *i = I->body[0].first; i != J; i = i->next)
    if (asc__ir_nregions(i) > 0)
      return NULL;
  for (const asc__irins *i = J->body[0].first; i; i = i->next)
    if (asc__ir_nregions(i) > 0)
      return NULL;
  return J;
}

/* The transpose pattern: some access of J's body is unit-stride in j, and
 * another is unit-stride in i and strided (a constant other than 0 and 1,
 * or a run-time stride) in j.  *esize: the widest element touched. */
static bool crossing(tctx *x, const asc__depnest *d, const asc__irins *J,
                     int *esize) {
  bool inner = false, outer = false;
  *esize = 1;
  for (const asc__irins *i = J->body[0].first; i; i = i->next) {
    asc__affine a;
    int64_t ci, cj;
    bool ki, kj;
    int es;
    if (i->op != ASC_IR_LOAD && i->op != ASC_IR_STORE)
      continue;
    es = asc__dt_bytes(x->f->regs[i->args[0].reg].ty.dtype);
    if (es > *esize)
      *esize = es;
    if (!asc__dep_affine(d, i->args[1], &a))
      continue;
    ki = asc__dep_coef(&a, 0, &ci);
    kj = asc__dep_coef(&a, 1, &cj);
    if (kj && cj == 1)
      inner = true;
    if (ki && ci == 1 && !(kj && (cj == 0 || cj == 1)))
      outer = true;
  }
  return inner && outer;
}

static int64_t tile_size(const tctx *x, int esize) {
  int64_t t = asc__tile_row_bytes(x->f->l1d_bytes) / (esize > 0 ? esize : 1);
  return t < MIN_TILE ? MIN_TILE : t > MAX_TILE ? MAX_TILE : t;
}

static bool invariant(const asc__depnest *d, asc__irval v) {
  return v.kind == ASC_IRV_CONST ||
         (v.kind == ASC_IRV_REG && d->nin[v.reg] == 0 &&
          v.reg != d->L[0]->dst);
}

/* NULL when the nest I > J may be tiled in tiles of *T, else why not;
 * *quiet when it is not a candidate at all (no note). */
static const char *decide(tctx *x, asc__irins *I, asc__irins *J,
                          asc__depnest *d, int64_t *T, bool *quiet) {
  int32_t nr = x->f->nregs;
  int32_t *occ;
  int esize;
  *quiet = false;
  if (!crossing(x, d, J, &esize)) {
    *quiet = true;
    return "no access crosses the nest";
  }
  *T = tile_size(x, esize);
  if (x->f->may_alias)
    return "the kernel's tensors may alias";
  for (int k = 0; k < 2; k++)
    if (!invariant(d, J->args[k]))
      return asc__arena_printf(x->c, "the bounds of loop %%%s change with "
                               "%%%s", rname(x, J->dst), rname(x, I->dst));
  for (const asc__irins *i = I->body[0].first; i != J; i = i->next)
    if (!pure_ok(x, i) || x->f->regs[i->dst].ndefs != 1)
      return asc__arena_printf(x->c, "a %s before loop %%%s",
                               asc__irop_name(i->op), rname(x, J->dst));
  for (const asc__irins *i = J->body[0].first; i; i = i->next) {
    if (i->op == ASC_IR_LOAD || i->op == ASC_IR_STORE) {
      if (i->op == ASC_IR_LOAD && x->f->regs[i->dst].ndefs != 1)
        return asc__arena_printf(x->c, "%%%s is assigned more than once",
                                 rname(x, i->dst));
      continue;
    }
    if (!pure_ok(x, i))
      return asc__arena_printf(x->c, "a %s in loop %%%s (it may raise or "
                               "has an effect)", asc__irop_name(i->op),
                               rname(x, J->dst));
    if (x->f->regs[i->dst].ndefs != 1)
      return asc__arena_printf(x->c, "%%%s is assigned more than once",
                               rname(x, i->dst));
  }
  /* registers of I's body live only in it */
  occ = asc__arena_alloc(x->c, sizeof *occ * (size_t)nr);
  memset(occ, 0, sizeof *occ * (size_t)nr);
  asc__ir_occurrences(&I->body[0], occ);
  for (int32_t r = 0; r < nr; r++)
    if (d->nin[r] > 0 && r != J->dst &&
        occ[r] != x->f->regs[r].ndefs + x->f->regs[r].nuses)
      return asc__arena_printf(x->c, "%%%s is used after loop %%%s",
                               rname(x, r), rname(x, I->dst));
  /* dependences: every pair of accesses of a stored tensor (a store with
   * itself included) meets only in the same iteration */
  for (const asc__irins *st = J->body[0].first; st; st = st->next) {
    if (st->op != ASC_IR_STORE)
      continue;
    for (const asc__irins *y = J->body[0].first; y; y = y->next) {
      asc__depvec v;
      int r;
      if ((y->op != ASC_IR_LOAD && y->op != ASC_IR_STORE) ||
          y->args[0].reg != st->args[0].reg)
        continue;
      r = asc__dep_test(d, st, y, &v);
      if (r == ASC_DEP_UNKNOWN)
        return asc__arena_printf(x->c, "the store to %%%s at line %d and "
                                 "the %s at line %d: dependence not affine",
                                 rname(x, st->args[0].reg), (int)st->line,
                                 asc__irop_name(y->op), (int)y->line);
      if (r == ASC_DEP_DIST && (v.dir[0] != '=' || v.dir[1] != '='))
        return asc__arena_printf(x->c, "dependence of %%%s (store at line "
                                 "%d, %s at line %d), distance %s over "
                                 "(%%%s, %%%s)", rname(x, st->args[0].reg),
                                 (int)st->line, asc__irop_name(y->op),
                                 (int)y->line, asc__dep_str(x->c, &v),
                                 rname(x, I->dst), rname(x, J->dst));
    }
  }
  if (asc__nest_short(I, *T) || asc__nest_short(J, *T))
    return asc__arena_printf(x->c, "a trip count of at most %lld",
                             (long long)*T);
  return NULL;
}

bool asc__tile_wants(asc__cctx *c, asc__irfunc *f, asc__irins *I,
                     asc__irins *J) {
  tctx x;
  asc__depnest d;
  asc__irins *Ls[2];
  int64_t T;
  bool quiet;
  x.c = c;
  x.f = f;
  if (!f->tile_planned || shape(&x, I) != J)
    return false;
  Ls[0] = I;
  Ls[1] = J;
  asc__dep_init(&d, c, f, Ls, 2);
  return decide(&x, I, J, &d, &T, &quiet) == NULL;
}

static int32_t bin(tctx *x, asc__irblock *b, int op, asc__irval p,
                   asc__irval q, int32_t line) {
  return asc__ir_bin(x->c, x->f, b, op, ascInt64, p, q, line);
}

static void rewrite(tctx *x, asc__irblock *b, asc__irins *I, asc__irins *J,
                    int64_t T) {
  asc__irblock pre = {NULL, NULL};
  asc__irval tv = asc__irv_int(ascInt64, T);
  int32_t line = I->line, span, nb, i0, w, i1, j1;
  asc__irins *nI, *J0;

  span = bin(x, &pre, ASC_IR_SUB, I->args[1], I->args[0], line);
  span = bin(x, &pre, ASC_IR_MAX, asc__irv_reg(span),
             asc__irv_int(ascInt64, 0), line);
  nb = bin(x, &pre, ASC_IR_ADD, asc__irv_reg(span),
           asc__irv_int(ascInt64, T - 1), line);
  nb = bin(x, &pre, ASC_IR_FLOORDIV, asc__irv_reg(nb), tv, line);
  nI = asc__ir_ins(x->c, I->op,
                   asc__ir_reg(x->c, x->f, asc__irt_scalar(ascInt64), "ib"),
                   3, line);
  nI->note = I->note;
  nI->args[0] = asc__irv_int(ascInt64, 0);
  nI->args[1] = asc__irv_reg(nb);
  nI->args[2] = asc__irv_int(ascInt64, 1);
  i0 = bin(x, &nI->body[0], ASC_IR_MUL, asc__irv_reg(nI->dst), tv, line);
  i0 = bin(x, &nI->body[0], ASC_IR_ADD, I->args[0], asc__irv_reg(i0), line);
  w = bin(x, &nI->body[0], ASC_IR_SUB, I->args[1], asc__irv_reg(i0), line);
  w = bin(x, &nI->body[0], ASC_IR_MIN, asc__irv_reg(w), tv, line);
  i1 = bin(x, &nI->body[0], ASC_IR_ADD, asc__irv_reg(i0), asc__irv_reg(w),
           line);
  J0 = asc__ir_ins(x->c, ASC_IR_FOR,
                   asc__ir_reg(x->c, x->f, asc__irt_scalar(ascInt64), "j0"),
                   3, J->line);
  J0->args[0] = J->args[0];
  J0->args[1] = J->args[1];
  J0->args[2] = tv;
  w = bin(x, &J0->body[0], ASC_IR_SUB, J->args[1], asc__irv_reg(J0->dst),
          J->line);
  w = bin(x, &J0->body[0], ASC_IR_MIN, asc__irv_reg(w), tv, J->line);
  j1 = bin(x, &J0->body[0], ASC_IR_ADD, asc__irv_reg(J0->dst),
           asc__irv_reg(w), J->line);
  J->args[0] = asc__irv_reg(J0->dst);
  J->args[1] = asc__irv_reg(j1);

  asc__ir_splice(b, I, &pre);
  asc__ir_insert_before(b, I, nI);
  asc__ir_remove(b, I);
  /* I becomes the serial row loop of one tile */
  I->op = ASC_IR_FOR;
  I->note = NULL;
  I->args[0] = asc__irv_reg(i0);
  I->args[1] = asc__irv_reg(i1);
  asc__ir_append(&J0->body[0], I);
  asc__ir_append(&nI->body[0], J0);
}

/* Tries I (in b); true when it was rewritten. */
static bool try_loop(tctx *x, asc__irblock *b, asc__irins *I) {
  asc__irins *J = shape(x, I), *Ls[2];
  asc__depnest d;
  const char *why;
  int64_t T = 0;
  bool quiet;
  if (J == NULL || I->wave != 0)
    return false;
  Ls[0] = I;
  Ls[1] = J;
  asc__dep_init(&d, x->c, x->f, Ls, 2);
  why = decide(x, I, J, &d, &T, &quiet);
  if (why == NULL && I->op != ASC_IR_PFOR)
    why = "a serial loop (only a pfor, whose iterations are known "
          "independent and whose written tensors do not overlap "
          "themselves, is tiled)";
  if (quiet)
    return false;
  if (why != NULL) {
    add_note(x, I, asc__arena_printf(x->c, "loop %%%s at line %d keeps its "
                                     "order: %s", rname(x, I->dst),
                                     (int)I->line, why));
    return false;
  }
  add_note(x, I, asc__arena_printf(
                     x->c, "loops %%%s, %%%s at lines %d, %d run in tiles of "
                     "%lld x %lld (one access is unit-stride in %%%s, another "
                     "in %%%s); each element keeps its operations",
                     rname(x, I->dst), rname(x, J->dst), (int)I->line,
                     (int)J->line, (long long)T, (long long)T,
                     rname(x, J->dst), rname(x, I->dst)));
  rewrite(x, b, I, J, T);
  return true;
}

static bool try_any(void *ctx, asc__irblock *b, asc__irins *i) {
  tctx *x = ctx;
  return try_loop(x, b, i);
}

void asc__pass_tile(asc__cctx *c, asc__irfunc *f) {
  tctx x;
  x.c = c;
  x.f = f;
  asc__nest_walk(f, try_any, &x);
}
