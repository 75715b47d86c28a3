/*
 * Which loop nests the tile pass tiles, and in tiles of what size
 * (docs/optimizer.md): the analysis behind tile.c, which parallelize also
 * asks before it decides how to run a nest (a nest that will be tiled
 * keeps its inner loop serial).
 *
 * A candidate is a 2-deep nest I > J, I a for or pfor without reductions
 * whose body is pure row set-up and one serial loop J of straight-line
 * loads, stores and pure instructions, where one access walks j with unit
 * stride and another walks i with unit stride and j with a stride.  It
 * may be tiled when every dependence between the accesses of J's body has
 * distance (0, 0), nothing may raise, the tensors cannot alias and both
 * loops run more than one tile.
 */
#include <string.h>

#include "compiler/passes/depend.h"

/* A tile row is the options' tile_row_bytes of the widest element the
 * nest touches (two cache lines for a 32 KiB L1), 8 to 64 elements
 * (docs/optimizer.md, "Tile sizes"). */
enum { MIN_TILE = 8, MAX_TILE = 64 };

typedef struct tctx {
  asc__cctx *c;
  asc__irfunc *f;
} tctx;

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

asc__irins *asc__tile_shape(asc__cctx *c, asc__irfunc *f, asc__irins *I) {
  tctx x = {c, f};
  asc__irins *J = I->body[0].last;
  if ((I->op != ASC_IR_FOR && I->op != ASC_IR_PFOR) || I->nred > 0 ||
      !step1(&x, I) || J == NULL || J->op != ASC_IR_FOR || !step1(&x, J))
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
  int64_t t = (int64_t)x->c->opts.code.tile_row_bytes /
              (esize > 0 ? esize : 1);
  return t < MIN_TILE ? MIN_TILE : t > MAX_TILE ? MAX_TILE : t;
}

static bool invariant(const asc__depnest *d, asc__irval v) {
  return v.kind == ASC_IRV_CONST ||
         (v.kind == ASC_IRV_REG && asc__dep_nin(d, v.reg) == 0 &&
          v.reg != d->L[0]->dst);
}

static const char *decide(tctx *x, asc__irins *I, asc__irins *J,
                          asc__depnest *d, int64_t *T, bool *quiet) {
  asc__regtab occ;
  const int32_t *in;
  int32_t nin;
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
  asc__regtab_init(x->c, &occ, 0);
  asc__ir_occurrences(&I->body[0], &occ);
  in = asc__dep_defined(d, &nin);
  for (int32_t k = 0; k < nin; k++) {
    int32_t r = in[k];
    if (r != J->dst &&
        asc__regtab_get(&occ, r) != x->f->regs[r].ndefs + x->f->regs[r].nuses)
      return asc__arena_printf(x->c, "%%%s is used after loop %%%s",
                               rname(x, r), rname(x, I->dst));
  }
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

const char *asc__tile_decide(asc__cctx *c, asc__irfunc *f, asc__irins *I,
                             asc__irins *J, int64_t *T, bool *quiet) {
  tctx x = {c, f};
  asc__depnest d;
  asc__irins *Ls[2] = {I, J};
  asc__dep_init(&d, c, f, Ls, 2);
  return decide(&x, I, J, &d, T, quiet);
}

bool asc__tile_wants(asc__cctx *c, asc__irfunc *f, asc__irins *I,
                     asc__irins *J) {
  int64_t T;
  bool quiet;
  if (!asc__pass_planned(c, "tile") || asc__tile_shape(c, f, I) != J)
    return false;
  return asc__tile_decide(c, f, I, J, &T, &quiet) == NULL;
}
