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
 * alias.  Which nests qualify, and the tile size, is tiling.c's analysis:
 * parallelize, before this pass, asks it too, and leaves J serial (does
 * not collapse it into I) when asc__tile_wants says the nest will be
 * tiled.
 *
 * Each decision is a note on I: `; tile: ...`.  ASC_TILE=0 leaves the pass
 * out (part of the kernel cache key).
 */
#include "compiler/passes/depend.h"

typedef struct tctx {
  asc__cctx *c;
  asc__irfunc *f;
} tctx;

static void add_note(tctx *x, asc__irins *i, const char *text) {
  asc__nest_note(x->c, i, "tile", text);
}

static const char *rname(tctx *x, int32_t r) {
  return x->f->regs[r].name;
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
  asc__irins *J = asc__tile_shape(x->c, x->f, I);
  const char *why;
  int64_t T = 0;
  bool quiet;
  if (J == NULL || I->wave != 0)
    return false;
  why = asc__tile_decide(x->c, x->f, I, J, &T, &quiet);
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
  asc__nest_walk(c, f, "tile", try_any, &x);
}
