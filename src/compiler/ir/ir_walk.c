/*
 * Walks over the IR's nested regions and small queries on it, shared by
 * the passes, the verifier and the emitter.
 */
#include "compiler/ir/ir.h"

void asc__ir_walk(const asc__irblock *b, void (*fn)(asc__irins *i, void *ctx),
                  void *ctx) {
  for (asc__irins *i = b->first; i; i = i->next) {
    fn(i, ctx);
    for (int k = 0; k < asc__ir_nregions(i); k++)
      asc__ir_walk(&i->body[k], fn, ctx);
  }
}

static void replace_block(asc__irblock *b, int32_t from, asc__irval v) {
  for (asc__irins *i = b->first; i; i = i->next) {
    for (int32_t k = 0; k < i->nargs; k++)
      if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == from)
        i->args[k] = v;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      replace_block(&i->body[k], from, v);
  }
}

void asc__ir_replace_uses(asc__irfunc *f, int32_t from, asc__irval v) {
  replace_block(&f->body, from, v);
}

bool asc__ir_may_trap(const asc__irfunc *f, const asc__irins *i) {
  int dt = i->dst >= 0 ? f->regs[i->dst].ty.dtype : -1;
  switch (i->op) {
  case ASC_IR_FLOORDIV:
  case ASC_IR_MOD:
    return !asc__dt_is_float(dt) &&
           !(i->args[1].kind == ASC_IRV_CONST && i->args[1].c.i != 0);
  case ASC_IR_POW:
  case ASC_IR_SHL: /* ValueError: negative shift count */
  case ASC_IR_SHR:
    return asc__dt_is_signed(dt) &&
           !(i->args[1].kind == ASC_IRV_CONST && i->args[1].c.i >= 0);
  case ASC_IR_CAST:
    return asc__dt_is_float(asc__irv_dtype(f, i->args[0])) &&
           !asc__dt_is_float(dt) && dt != ascBool;
  default:
    return false;
  }
}

static bool exits(const asc__irblock *b, int depth) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if ((i->op == ASC_IR_BREAK || i->op == ASC_IR_CONTINUE) && depth == 0)
      return true;
    for (int k = 0; k < asc__ir_nregions(i); k++) {
      bool loop = i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR ||
                  i->op == ASC_IR_LOOP;
      if (exits(&i->body[k], depth + (loop ? 1 : 0)))
        return true;
    }
  }
  return false;
}

bool asc__ir_has_loop_exit(const asc__irblock *b) { return exits(b, 0); }

bool asc__ir_has_loop(const asc__irblock *b) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR || i->op == ASC_IR_LOOP)
      return true;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      if (asc__ir_has_loop(&i->body[k]))
        return true;
  }
  return false;
}

static void count_ins(asc__irins *i, void *ctx) {
  ASC_UNUSED(i);
  (*(int64_t *)ctx)++;
}

int64_t asc__ir_size(const asc__irblock *b) {
  int64_t n = 0;
  asc__ir_walk(b, count_ins, &n);
  return n;
}

static void occurrences(asc__irins *i, void *ctx) {
  asc__regtab *cnt = ctx;
  if (i->dst >= 0)
    ++*asc__regtab_ref(cnt, i->dst);
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG)
      ++*asc__regtab_ref(cnt, i->args[k].reg);
  for (int32_t k = 0; k < i->nred; k++)
    *asc__regtab_ref(cnt, i->red[k].reg) += 2;
}

void asc__ir_occurrences(const asc__irblock *b, asc__regtab *cnt) {
  asc__ir_walk(b, occurrences, cnt);
}

static void defined_in(asc__irins *i, void *ctx) {
  asc__regtab *def = ctx;
  if (i->dst >= 0)
    asc__regtab_set(def, i->dst, 1);
  for (int32_t k = 0; k < i->nred; k++)
    asc__regtab_set(def, i->red[k].reg, 1);
}

void asc__ir_defined_in(const asc__irblock *b, asc__regtab *def) {
  asc__ir_walk(b, defined_in, def);
}
