/*
 * Common-subexpression elimination over the structured IR.  An expression
 * computed earlier in the same block or in an enclosing one dominates the
 * current point, so a scoped list of available expressions is enough: a
 * region's entries are dropped when it ends.  Only pure instructions whose
 * operands cannot change in between take part (constants, parameters,
 * registers with one definition).
 *
 *   %a:i64 = mul %i, %s0
 *   %b:i64 = mul %s0, %i    ->  (uses of %b read %a)
 */
#include <string.h>

#include "compiler/passes/passes.h"

typedef struct cstate {
  asc__cctx *c;
  asc__irfunc *f;
  asc__irins **avail;
  int navail, cap;
} cstate;

static bool stable(const asc__irfunc *f, asc__irval v) {
  if (v.kind != ASC_IRV_REG)
    return true;
  return f->regs[v.reg].param || f->regs[v.reg].ndefs == 1;
}

static bool candidate(const asc__irfunc *f, const asc__irins *i) {
  if (i->dst < 0 || !(asc__irop_flags(i->op) & ASC_OPF_PURE) ||
      i->op == ASC_IR_MOV)
    return false;
  if (f->regs[i->dst].ndefs != 1 || f->regs[i->dst].param ||
      f->regs[i->dst].ty.kind != ASC_IRK_SCALAR)
    return false;
  for (int32_t k = 0; k < i->nargs; k++)
    if (!stable(f, i->args[k]))
      return false;
  return true;
}

static bool same(const asc__irfunc *f, const asc__irins *a,
                 const asc__irins *b) {
  if (a->op != b->op || a->aux != b->aux || a->nargs != b->nargs ||
      f->regs[a->dst].ty.dtype != f->regs[b->dst].ty.dtype)
    return false;
  if (a->op == ASC_IR_CAST &&
      asc__irv_dtype(f, a->args[0]) != asc__irv_dtype(f, b->args[0]))
    return false;
  {
    bool eq = true;
    for (int32_t k = 0; k < a->nargs; k++)
      eq &= asc__irv_eq(a->args[k], b->args[k]);
    if (eq)
      return true;
  }
  if ((asc__irop_flags(a->op) & ASC_OPF_COMM) && a->nargs == 2)
    return asc__irv_eq(a->args[0], b->args[1]) &&
           asc__irv_eq(a->args[1], b->args[0]);
  return false;
}

static void add(cstate *s, asc__irins *i) {
  s->avail = asc__arena_grow(s->c, s->avail, s->navail, &s->cap,
                             sizeof *s->avail, 64);
  s->avail[s->navail++] = i;
}

static void cse_block(cstate *s, asc__irblock *b) {
  int mark = s->navail;
  asc__irins *i = b->first;
  while (i != NULL) {
    asc__irins *next = i->next;
    if (candidate(s->f, i)) {
      asc__irins *hit = NULL;
      for (int k = s->navail - 1; k >= 0 && !hit; k--)
        if (same(s->f, s->avail[k], i))
          hit = s->avail[k];
      if (hit) {
        asc__ir_replace_uses(s->f, i->dst, asc__irv_reg(hit->dst));
        asc__ir_remove(b, i);
      } else {
        add(s, i);
      }
    }
    for (int k = 0; k < asc__ir_nregions(i); k++)
      cse_block(s, &i->body[k]);
    i = next;
  }
  s->navail = mark;
}

void asc__pass_cse(asc__cctx *c, asc__irfunc *f) {
  cstate s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.f = f;
  asc__ir_count(f);
  cse_block(&s, &f->body);
  asc__ir_count(f);
}
