/*
 * Walks over the IR's nested regions and small queries on it, shared by
 * the passes, the verifier and the emitter.
 */
#include "compiler/ir/ir.h"

#include <stdlib.h>
#include <string.h>

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

/* ------------------------------------------- work bounded by the arguments
 *
 * asc__ir_work_bounded: a register is bounded when every definition of it
 * is: a tensor or integer (bool, ConstExpr) parameter, a constant of at
 * most BOUNDED_CONST, an extent or stride, the induction of a loop whose
 * limits are bounded, an array made or viewed with bounded arguments, or
 * integer arithmetic, min, max, selection and conversion of bounded
 * values.  A value read from memory, returned by a call or raised to a
 * power is not, nor one defined in terms of itself (n = n * 2 in a loop).
 * The kernel's work is bounded when the limits of each loop of its own
 * statements are (the loops the lowering makes for an operation run over
 * its arrays): what the quick tier's launch-size test (jit/driver.c) can
 * then measure. */

#define BOUNDED_CONST 65536

enum { WB_UNSEEN, WB_VISITING, WB_YES, WB_NO };

typedef struct wb_def {
  int32_t reg;
  const asc__irins *ins;
} wb_def;

typedef struct wb_ctx {
  const asc__irfunc *f;
  uint8_t *state;      /* per register, WB_* */
  int32_t *first;      /* per register: its first entry in defs, or -1 */
  wb_def *defs;        /* sorted by register */
  int32_t ndefs;
  bool loops_ok;
} wb_ctx;

static void wb_collect(asc__irins *i, void *ctx) {
  wb_ctx *w = ctx;
  if (i->dst >= 0 && w->defs != NULL)
    w->defs[w->ndefs] = (wb_def){i->dst, i};
  if (i->dst >= 0)
    w->ndefs++;
  for (int32_t k = 0; k < i->nred; k++)
    w->state[i->red[k].reg] = WB_NO;   /* a reduction's running value */
}

static int wb_cmp(const void *a, const void *b) {
  int32_t x = ((const wb_def *)a)->reg, y = ((const wb_def *)b)->reg;
  return (x > y) - (x < y);
}

static bool wb_reg(wb_ctx *w, int32_t r);

static bool wb_val(wb_ctx *w, asc__irval v) {
  if (v.kind == ASC_IRV_REG)
    return wb_reg(w, v.reg);
  if (v.kind != ASC_IRV_CONST)
    return true;
  if (asc__dt_is_float(v.dtype) || asc__dt_is_complex(v.dtype))
    return false;
  return v.c.i >= -BOUNDED_CONST && v.c.i <= BOUNDED_CONST;
}

static bool wb_args(wb_ctx *w, const asc__irins *i, int32_t from) {
  for (int32_t k = from; k < i->nargs; k++)
    if (!wb_val(w, i->args[k]))
      return false;
  return true;
}

/* Whether the definition i of register r is bounded. */
static bool wb_def_ok(wb_ctx *w, const asc__irins *i, int32_t r) {
  switch (i->op) {
  case ASC_IR_FOR:
  case ASC_IR_PFOR:
    /* the induction (a PFOR also defines its reductions: marked no) */
    return i->dst == r && wb_args(w, i, 0);
  case ASC_IR_MOV: case ASC_IR_ADD: case ASC_IR_SUB: case ASC_IR_MUL:
  case ASC_IR_FLOORDIV: case ASC_IR_MOD: case ASC_IR_MIN: case ASC_IR_MAX:
  case ASC_IR_NEG: case ASC_IR_ABS: case ASC_IR_AND: case ASC_IR_OR:
  case ASC_IR_XOR: case ASC_IR_SHR: case ASC_IR_CAST: case ASC_IR_CVT:
  case ASC_IR_DIM: case ASC_IR_STRIDE:
  case ASC_IR_NEW_ARRAY: case ASC_IR_SET_ARRAY: case ASC_IR_SET_VIEW:
    return wb_args(w, i, 0);
  case ASC_IR_SELECT:
    return wb_args(w, i, 1);
  case ASC_IR_LOCAL_ARRAY: case ASC_IR_SHARED_ARRAY:
  case ASC_IR_BLOCK_IDX: case ASC_IR_BLOCK_NUM: case ASC_IR_TEAM_SIZE:
  case ASC_IR_WORKER_ID:
    return true;
  default:
    return false;
  }
}

static bool wb_reg(wb_ctx *w, int32_t r) {
  const asc__irreg *g = &w->f->regs[r];
  bool ok = true;

  if (w->state[r] != WB_UNSEEN)   /* VISITING: defined in terms of itself */
    return w->state[r] == WB_YES;
  w->state[r] = WB_VISITING;
  if (g->param)
    ok = g->ty.kind == ASC_IRK_TENSOR || g->ty.dtype == ascBool ||
         asc__dt_is_int(g->ty.dtype);
  for (int32_t k = w->first[r]; ok && k >= 0 && k < w->ndefs &&
                                w->defs[k].reg == r;
       k++)
    ok = wb_def_ok(w, w->defs[k].ins, r);
  if (!g->param && w->first[r] < 0)
    ok = false;   /* never defined */
  w->state[r] = ok ? WB_YES : WB_NO;
  return ok;
}

static void wb_loops(asc__irins *i, void *ctx) {
  wb_ctx *w = ctx;
  if (!w->loops_ok || !i->user)
    return;
  if (i->op == ASC_IR_LOOP)
    w->loops_ok = i->nimm == 1;   /* a while loop, unless marked short */
  else if (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR)
    w->loops_ok = wb_args(w, i, 0);
}

bool asc__ir_work_bounded(asc__cctx *c, const asc__irfunc *f) {
  wb_ctx w;

  memset(&w, 0, sizeof w);
  w.f = f;
  w.state = asc__arena_alloc(c, (size_t)f->nregs + 1);   /* zeroed: UNSEEN */
  w.first = asc__arena_alloc(c, ((size_t)f->nregs + 1) * sizeof *w.first);
  asc__ir_walk(&f->body, wb_collect, &w);   /* count */
  w.defs = asc__arena_alloc(c, ((size_t)w.ndefs + 1) * sizeof *w.defs);
  w.ndefs = 0;
  asc__ir_walk(&f->body, wb_collect, &w);   /* fill */
  qsort(w.defs, (size_t)w.ndefs, sizeof *w.defs, wb_cmp);
  for (int32_t r = 0; r < f->nregs; r++)
    w.first[r] = -1;
  for (int32_t k = w.ndefs - 1; k >= 0; k--)
    w.first[w.defs[k].reg] = k;
  w.loops_ok = true;
  asc__ir_walk(&f->body, wb_loops, &w);
  return w.loops_ok;
}
