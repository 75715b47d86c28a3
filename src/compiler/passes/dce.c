/*
 * Dead-code elimination: instructions after a break / continue / return /
 * raise in the same block, pure instructions whose result nobody reads
 * (never one that may raise: `x = a // 0` still raises in Python), loops and
 * branches left empty.  Iterates until nothing changes.
 */
#include "compiler/passes/passes.h"

static bool removable(const asc__irfunc *f, const asc__irins *i) {
  if (i->dst < 0 || i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR)
    return false;
  if (f->regs[i->dst].param || f->regs[i->dst].nuses > 0)
    return false;
  if (!(asc__irop_flags(i->op) & ASC_OPF_PURE) && i->op != ASC_IR_LOAD &&
      i->op != ASC_IR_LOCAL_ARRAY && i->op != ASC_IR_SHARED_ARRAY)
    return false;
  return !asc__ir_may_trap(f, i);
}

static bool is_exit(int op) {
  return op == ASC_IR_BREAK || op == ASC_IR_CONTINUE || op == ASC_IR_RET ||
         op == ASC_IR_RAISE || op == ASC_IR_RERAISE;
}

/* Removes i from b; its note (a pass's decision about the statement it
 * began: a fusion, a branch folded) stays, on the instruction after it,
 * or the one before at a block's end. */
static void drop(asc__cctx *c, asc__irblock *b, asc__irins *i) {
  asc__irins *to = i->next != NULL ? i->next : i->prev;
  if (i->note != NULL && to != NULL)
    to->note = to->note == NULL ? i->note
               : to == i->next  ? asc__arena_printf(c, "%s\n%s", i->note,
                                                    to->note)
                                : asc__arena_printf(c, "%s\n%s", to->note,
                                                    i->note);
  asc__ir_remove(b, i);
}

static bool dce_block(asc__cctx *c, asc__irfunc *f, asc__irblock *b) {
  bool changed = false;
  asc__irins *i = b->first;
  while (i != NULL) {
    asc__irins *next = i->next;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      changed |= dce_block(c, f, &i->body[k]);
    if (is_exit(i->op) && i->next != NULL) {
      /* unreachable tail */
      while (i->next != NULL)
        asc__ir_remove(b, i->next);
      next = NULL;
      changed = true;
    }
    if (removable(f, i)) {
      drop(c, b, i);
      changed = true;
    } else if ((i->op == ASC_IR_FOR ||
                (i->op == ASC_IR_PFOR && i->nred == 0)) &&
               i->body[0].first == NULL) {
      drop(c, b, i);
      changed = true;
    } else if ((i->op == ASC_IR_IF && i->body[0].first == NULL &&
                i->body[1].first == NULL) ||
               (i->op == ASC_IR_CRITICAL && i->body[0].first == NULL)) {
      drop(c, b, i);
      changed = true;
    } else if (i->op == ASC_IR_TRY && i->body[0].first == NULL) {
      /* nothing can raise: only the finally part runs */
      asc__ir_splice(b, i, &i->body[2]);
      drop(c, b, i);
      changed = true;
    }
    i = next;
  }
  return changed;
}

void asc__pass_dce(asc__cctx *c, asc__irfunc *f) {
  bool changed;
  int rounds = 0;
  do {
    asc__cctx_budget(c, "dce");
    asc__ir_count(f);
    changed = dce_block(c, f, &f->body);
  } while (changed && ++rounds < 64);
  asc__ir_count(f);
}
