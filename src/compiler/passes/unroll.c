/*
 * Full unrolling of counted loops with constant bounds: always for
 * `for ... unroll` (asc.static_range), automatically when the loop is small
 * (trip count <= AUTO_TRIP and at most AUTO_SIZE instructions in all).
 * Each copy sees the induction variable as a constant, and registers local
 * to the body get fresh names per copy, so they keep a single definition
 * and fold / cse / licm still apply.  Loops with a break or continue of
 * their own stay.
 *
 *   for %k:i64 = 0, 2, 1 { %x = mul %k, 3 }  ->  %x = mul 0, 3
 *                                                %x.1 = mul 1, 3
 */
#include <string.h>

#include "compiler/passes/passes.h"

enum { AUTO_TRIP = 4, AUTO_SIZE = 64, MAX_TRIP = 1024, MAX_TOTAL = 16384 };

static int64_t trip(int64_t lo, int64_t hi, int64_t st) {
  if (st > 0)
    return hi > lo ? (int64_t)(((uint64_t)hi - (uint64_t)lo - 1) /
                               (uint64_t)st) + 1
                   : 0;
  if (st < 0)
    return lo > hi ? (int64_t)(((uint64_t)lo - (uint64_t)hi - 1) /
                               (uint64_t)(-st)) + 1
                   : 0;
  return -1;
}

/* r's name in the copy (ren: 1 + the new register; 0 keeps). */
static int32_t renamed(const asc__regtab *ren, int32_t r) {
  intptr_t n = asc__regtab_get(ren, r);
  return n > 0 ? (int32_t)n - 1 : r;
}

static void rename_block(asc__irblock *b, const asc__regtab *ren, int32_t iv,
                         asc__irval ivv) {
  for (asc__irins *i = b->first; i; i = i->next) {
    if (i->dst >= 0)
      i->dst = renamed(ren, i->dst);
    for (int32_t k = 0; k < i->nargs; k++) {
      asc__irval *v = &i->args[k];
      if (v->kind != ASC_IRV_REG)
        continue;
      if (v->reg == iv)
        *v = ivv;
      else
        v->reg = renamed(ren, v->reg);
    }
    for (int32_t k = 0; k < i->nred; k++)
      i->red[k].reg = renamed(ren, i->red[k].reg);
    for (int k = 0; k < asc__ir_nregions(i); k++)
      rename_block(&i->body[k], ren, iv, ivv);
  }
}

static bool unroll_loop(asc__cctx *c, asc__irfunc *f, asc__irblock *b,
                        asc__irins *loop) {
  int64_t n, lo, st, sz;
  asc__regtab cnt, ren;
  const int32_t *occ;
  int32_t nocc;
  asc__irins *prev = loop->prev, *next = loop->next;
  asc__ircount_snap snap;
  asc__irblock out = {NULL, NULL};

  for (int k = 0; k < 3; k++)
    if (loop->args[k].kind != ASC_IRV_CONST)
      return false;
  lo = loop->args[0].c.i;
  st = loop->args[2].c.i;
  n = trip(lo, loop->args[1].c.i, st);
  if (n < 0 || n > MAX_TRIP || asc__ir_has_loop_exit(&loop->body[0]))
    return false;
  sz = asc__ir_size(&loop->body[0]);
  if (!loop->unroll && (n > AUTO_TRIP || sz * n > AUTO_SIZE))
    return false;
  if (sz * n > MAX_TOTAL)
    return false;

  /* registers whose every occurrence is inside the body are private to
   * one iteration (those with one definition get a new name per copy) */
  asc__regtab_init(c, &cnt, (int32_t)sz);
  asc__regtab_init(c, &ren, (int32_t)sz);
  asc__ir_occurrences(&loop->body[0], &cnt);
  occ = asc__regtab_keys(&cnt, &nocc);
  for (int64_t k = 0; k < n; k++) {
    asc__irval ivv = asc__irv_int(f->regs[loop->dst].ty.dtype, lo + k * st);
    asc__regtab_clear(&ren);
    for (int32_t q = 0; q < nocc && k > 0; q++) {
      int32_t r = occ[q];
      const asc__irreg *g = &f->regs[r];
      if (!g->param && g->ndefs == 1 &&
          asc__regtab_get(&cnt, r) == g->ndefs + g->nuses)
        asc__regtab_set(&ren, r, asc__ir_reg(c, f, g->ty, g->name) + 1);
    }
    for (const asc__irins *i = loop->body[0].first; i; i = i->next) {
      asc__irblock one = {NULL, NULL};
      asc__ir_append(&one, asc__ir_clone(c, i));
      rename_block(&one, &ren, loop->dst, ivv);
      asc__ir_splice(&out, NULL, &one);
    }
  }
  memset(&snap, 0, sizeof snap);
  asc__ir_count_snap(c, &snap, loop);
  asc__ir_splice(b, loop, &out);
  asc__ir_remove(b, loop);
  asc__ir_count_redo(c, f, &snap, b, prev, next);
  return true;
}

static void unroll_block(asc__cctx *c, asc__irfunc *f, asc__irblock *b) {
  for (asc__irins *i = b->first, *next; i; i = next) {
    next = i->next;
    asc__cctx_tick(c, "unroll");
    for (int k = 0; k < asc__ir_nregions(i); k++)
      unroll_block(c, f, &i->body[k]);
    if (i->op == ASC_IR_FOR)
      unroll_loop(c, f, b, i);
  }
}

void asc__pass_unroll(asc__cctx *c, asc__irfunc *f) {
  asc__ir_count(f);
  unroll_block(c, f, &f->body);
  asc__ir_count(f);
}
