/*
 * Builders the passes make IR with (ir.h): arithmetic appended to a block,
 * loops, local arrays and copies of loops.  Each returns what it made; the
 * caller puts it in place and keeps the counts current.
 */
#include <string.h>

#include "compiler/ir/ir.h"

int32_t asc__ir_bin_named(asc__cctx *c, asc__irfunc *f, asc__irblock *b,
                          int op, int dtype, asc__irval x, asc__irval y,
                          const char *hint, int32_t line) {
  int rdt = (asc__irop_flags(op) & ASC_OPF_CMP) ? ascBool : dtype;
  int32_t d = asc__ir_reg(c, f, asc__irt_scalar(rdt), hint);
  asc__irins *i = asc__ir_ins(c, op, d, 2, line);
  i->args[0] = x;
  i->args[1] = y;
  asc__ir_append(b, i);
  return d;
}

int32_t asc__ir_un_named(asc__cctx *c, asc__irfunc *f, asc__irblock *b,
                         int op, int dtype, asc__irval x, const char *hint,
                         int32_t line) {
  int32_t d = asc__ir_reg(c, f, asc__irt_scalar(dtype), hint);
  asc__irins *i = asc__ir_ins(c, op, d, 1, line);
  i->args[0] = x;
  asc__ir_append(b, i);
  return d;
}

int32_t asc__ir_bin(asc__cctx *c, asc__irfunc *f, asc__irblock *b, int op,
                    int dtype, asc__irval x, asc__irval y, int32_t line) {
  return asc__ir_bin_named(c, f, b, op, dtype, x, y, NULL, line);
}

int32_t asc__ir_un(asc__cctx *c, asc__irfunc *f, asc__irblock *b, int op,
                   int dtype, asc__irval x, int32_t line) {
  return asc__ir_un_named(c, f, b, op, dtype, x, NULL, line);
}

asc__irins *asc__ir_for(asc__cctx *c, int32_t iv, asc__irval lo,
                        asc__irval hi, asc__irval step, int32_t line) {
  asc__irins *L = asc__ir_ins(c, ASC_IR_FOR, iv, 3, line);
  L->args[0] = lo;
  L->args[1] = hi;
  L->args[2] = step;
  return L;
}

asc__irins *asc__ir_local_array(asc__cctx *c, asc__irfunc *f, int dt,
                                int64_t n, const char *hint, int32_t line) {
  asc__irtype at;
  asc__irins *a;
  memset(&at, 0, sizeof at);
  at.kind = ASC_IRK_TENSOR;
  at.dtype = (uint8_t)dt;
  at.ndim = 1;
  at.flags = ASC_IRT_CONTIG;
  a = asc__ir_ins(c, ASC_IR_LOCAL_ARRAY, asc__ir_reg(c, f, at, hint), 0, line);
  a->nimm = 1;
  a->imm[0] = n;
  return a;
}

typedef struct reg_swap {
  int32_t from, to;
} reg_swap;

static void swap_uses(asc__irins *i, void *ctx) {
  const reg_swap *w = ctx;
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == w->from)
      i->args[k].reg = w->to;
}

typedef struct fresh {
  asc__cctx *c;
  asc__irfunc *f;
  asc__regtab *map;
} fresh;

static void fresh_def(asc__irins *i, void *ctx) {
  fresh *F = ctx;
  if (i->dst >= 0 && asc__regtab_get(F->map, i->dst) == 0)
    asc__regtab_set(F->map, i->dst,
                    asc__ir_reg(F->c, F->f, F->f->regs[i->dst].ty,
                                F->f->regs[i->dst].name) + 1);
}

static int32_t fresh_name(const fresh *F, int32_t r) {
  intptr_t n = asc__regtab_get(F->map, r);
  return n > 0 ? (int32_t)n - 1 : r;
}

static void fresh_use(asc__irins *i, void *ctx) {
  const fresh *F = ctx;
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG)
      i->args[k].reg = fresh_name(F, i->args[k].reg);
  for (int32_t k = 0; k < i->nred; k++)
    i->red[k].reg = fresh_name(F, i->red[k].reg);
  if (i->dst >= 0)
    i->dst = fresh_name(F, i->dst);
}

asc__irblock asc__ir_clone_fresh(asc__cctx *c, asc__irfunc *f,
                                 const asc__irins *first,
                                 const asc__irins *last, asc__regtab *map) {
  asc__irblock out = {NULL, NULL};
  fresh F;
  F.c = c;
  F.f = f;
  F.map = map;
  for (const asc__irins *i = first; i != NULL; i = i->next) {
    asc__irins *n = asc__ir_clone(c, i);
    n->note = NULL;
    asc__ir_append(&out, n);
    if (i == last)
      break;
  }
  asc__ir_walk(&out, fresh_def, &F);
  asc__ir_walk(&out, fresh_use, &F);
  return out;
}

asc__irins *asc__ir_clone_loop(asc__cctx *c, asc__irfunc *f,
                               const asc__irins *L) {
  asc__irins *C = asc__ir_clone(c, L);
  reg_swap w;
  w.from = L->dst;
  w.to = asc__ir_reg(c, f, f->regs[L->dst].ty, f->regs[L->dst].name);
  C->dst = w.to;
  C->note = NULL;
  asc__ir_walk(&C->body[0], swap_uses, &w);
  return C;
}
