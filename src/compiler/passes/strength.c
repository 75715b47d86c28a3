/*
 * Strength reduction of index arithmetic.  In a serial counted loop,
 * `%t = mul %i, %s` with %i the induction variable and %s invariant becomes
 * an induction of its own, advanced by step*s at the end of each iteration:
 *
 *   for %i = lo, hi, st {          %t.iv = mul lo, %s
 *     %t = mul %i, %s        ->    %t.inc = mul st, %s
 *     ...                          for %i = lo, hi, st {
 *   }                                %t = mov %t.iv
 *                                    ...
 *                                    %t.iv = add %t.iv, %t.inc
 *
 * Loops with a `continue` of their own keep the multiply (the increment
 * would be skipped).  gcc's own induction-variable pass would find the same
 * thing; doing it here keeps the IR honest about the cost and shows the
 * transformation in the pass tests.
 */
#include "compiler/passes/passes.h"

static bool is_iv_mul(const asc__irfunc *f, const asc__irins *i, int32_t iv,
                      const asc__regtab *inside, asc__irval *inv) {
  if (i->op != ASC_IR_MUL || i->dst < 0 || f->regs[i->dst].ndefs != 1 ||
      f->regs[i->dst].ty.dtype != f->regs[iv].ty.dtype)
    return false;
  for (int k = 0; k < 2; k++) {
    asc__irval a = i->args[k], b = i->args[1 - k];
    if (a.kind == ASC_IRV_REG && a.reg == iv &&
        (b.kind == ASC_IRV_CONST || !asc__regtab_get(inside, b.reg))) {
      *inv = b;
      return true;
    }
  }
  return false;
}

static void strength_block(asc__cctx *c, asc__irfunc *f, asc__irblock *b);

static void strength_loop(asc__cctx *c, asc__irfunc *f, asc__irblock *b,
                          asc__irins *loop) {
  asc__regtab inside;
  int32_t iv = loop->dst;
  int dt = f->regs[iv].ty.dtype;
  strength_block(c, f, &loop->body[0]);
  asc__cctx_tick(c, "strength");
  if (loop->wave == ASC_WAVE_SWEEP) /* runs one row at a time */
    return;
  if (asc__ir_has_loop_exit(&loop->body[0]))
    return;
  if (loop->args[2].kind == ASC_IRV_REG)
    return;
  asc__regtab_init(c, &inside, 0);
  asc__ir_defined_in(&loop->body[0], &inside);
  asc__regtab_set(&inside, iv, 1);
  for (asc__irins *i = loop->body[0].first; i; i = i->next) {
    asc__irval inv;
    int32_t acc, inc;
    asc__irins *x;
    const char *nm;
    if (!is_iv_mul(f, i, iv, &inside, &inv))
      continue;
    nm = f->regs[i->dst].name;
    /* before the loop: the first value and the increment */
    acc = asc__ir_reg(c, f, asc__irt_scalar(dt),
                      asc__arena_printf(c, "%s.iv", nm));
    inc = asc__ir_reg(c, f, asc__irt_scalar(dt),
                      asc__arena_printf(c, "%s.inc", nm));
    x = asc__ir_ins(c, ASC_IR_MUL, acc, 2, i->line);
    x->args[0] = loop->args[0];
    x->args[1] = inv;
    asc__ir_insert_before(b, loop, x);
    x = asc__ir_ins(c, ASC_IR_MUL, inc, 2, i->line);
    x->args[0] = loop->args[2];
    x->args[1] = inv;
    asc__ir_insert_before(b, loop, x);
    /* in the loop: read it, advance it at the end */
    i->op = ASC_IR_MOV;
    i->nargs = 1;
    i->args[0] = asc__irv_reg(acc);
    x = asc__ir_ins(c, ASC_IR_ADD, acc, 2, i->line);
    x->args[0] = asc__irv_reg(acc);
    x->args[1] = asc__irv_reg(inc);
    asc__ir_append(&loop->body[0], x);
  }
}

static void strength_block(asc__cctx *c, asc__irfunc *f, asc__irblock *b) {
  for (asc__irins *i = b->first, *next; i; i = next) {
    next = i->next;
    if (i->op == ASC_IR_FOR)
      strength_loop(c, f, b, i);
    else
      for (int k = 0; k < asc__ir_nregions(i); k++)
        strength_block(c, f, &i->body[k]);
  }
}

void asc__pass_strength(asc__cctx *c, asc__irfunc *f) {
  asc__ir_count(f);
  strength_block(c, f, &f->body);
  asc__ir_count(f);
}
