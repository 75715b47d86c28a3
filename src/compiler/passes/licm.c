/*
 * Loop-invariant code motion: a pure instruction at the top level of a loop
 * body whose operands are all defined outside the loop moves in front of
 * the loop.  Inner loops go first, so an invariant climbs out of a whole
 * nest; hoisting out of a parallel loop turns the value into a capture.
 * Instructions that may raise stay (a loop that runs zero times must not
 * raise), and loads stay (a store in the loop may change them).
 *
 *   for %i = 0, %n, 1 {            %s1 = stride %a, 0
 *     %s1 = stride %a, 0     ->    for %i = 0, %n, 1 {
 *     %o = mul %i, %s1               %o = mul %i, %s1
 */
#include "compiler/passes/passes.h"

static bool is_loop(int op) {
  return op == ASC_IR_FOR || op == ASC_IR_PFOR || op == ASC_IR_LOOP;
}

static bool hoistable(const asc__irfunc *f, const asc__irins *i,
                      const asc__regtab *inside) {
  if (i->dst < 0 || !(asc__irop_flags(i->op) & ASC_OPF_PURE) ||
      asc__ir_may_trap(f, i))
    return false;
  if (f->regs[i->dst].ndefs != 1 || f->regs[i->dst].ty.kind != ASC_IRK_SCALAR)
    return false;
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG &&
        asc__regtab_get(inside, i->args[k].reg))
      return false;
  return true;
}

static void licm_block(asc__cctx *c, asc__irfunc *f, asc__irblock *b);

static void licm_loop(asc__cctx *c, asc__irfunc *f, asc__irblock *b,
                      asc__irins *loop) {
  asc__regtab inside;
  bool moved;
  licm_block(c, f, &loop->body[0]);
  asc__cctx_tick(c, "licm");
  asc__regtab_init(c, &inside, 0);
  asc__ir_defined_in(&loop->body[0], &inside);
  if (loop->dst >= 0)
    asc__regtab_set(&inside, loop->dst, 1);
  do {
    moved = false;
    for (asc__irins *i = loop->body[0].first, *next; i; i = next) {
      next = i->next;
      if (hoistable(f, i, &inside)) {
        asc__ir_remove(&loop->body[0], i);
        asc__ir_insert_before(b, loop, i);
        asc__regtab_set(&inside, i->dst, 0);
        moved = true;
      }
    }
  } while (moved);
}

static void licm_block(asc__cctx *c, asc__irfunc *f, asc__irblock *b) {
  for (asc__irins *i = b->first, *next; i; i = next) {
    next = i->next;
    if (is_loop(i->op))
      licm_loop(c, f, b, i);
    else
      for (int k = 0; k < asc__ir_nregions(i); k++)
        licm_block(c, f, &i->body[k]);
  }
}

void asc__pass_licm(asc__cctx *c, asc__irfunc *f) {
  asc__ir_count(f);
  licm_block(c, f, &f->body);
}
