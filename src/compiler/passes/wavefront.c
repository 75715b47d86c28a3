/*
 * Time tiling of iterated sweeps (docs/optimizer.md): a serial loop whose
 * body is K loops over the same rows (K sweeps: Jacobi's two, heat's two,
 * a sweep and a copy back),
 *
 *   for %t = ... {                      (%t not used)
 *     for %i = lo, hi, 1 { S0(i) }      (or pfor: asc.prange)
 *     for %i = lo, hi, 1 { S1(i) }
 *   }
 *
 * where each sweep Sk stores only into row i (axis 0 index exactly i) of
 * one tensor Wk, never loads Wk, and loads the tensors the other sweeps
 * store only at rows i - R .. i + R (constant offsets), is marked to run
 * as a wavefront: `for ... wavefront R` with its sweeps `pfor ... sweep`
 * (or `for ... sweep`).  The emitter hands the sweeps' bodies, one row at a
 * time, to asc_wavefront (src/compiler/wavefront.h), which runs chunks of
 * consecutive sweeps over each team thread's block of rows before moving
 * on, so that the rows a chunk touches stay in cache between its sweeps,
 * and computes each element with the same instructions from the same
 * values as the plain loop: results are bit-identical.
 *
 * At least two sweeps: one repeated computes the same values again.
 * The conditions make the rows of one sweep independent (other rows write
 * other rows of Wk and read nothing Sk writes), so `range` sweeps run in
 * parallel too, behind the emitter's run-time test that each Wk's rows do
 * not overlap one another (else the plain serial loop runs).  Sweep bodies
 * hold only pure instructions, loads, stores and serial loops (nothing
 * that raises, no atomics, no branches), carry no value from one row to
 * the next, and every tensor is a parameter (the kernel not may_alias):
 * two tensor registers are two arrays.
 *
 * This pass runs before parallelize, which leaves the marked loop and its
 * sweeps alone; tile and unrolljam leave sweeps alone.  Each decision is a
 * note on the loop: `; wavefront: ...`.  ASC_WAVEFRONT=0 leaves the pass
 * out (part of the kernel cache key).
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/passes/depend.h"

enum { MAX_SWEEPS = 16 };

typedef struct wctx {
  asc__cctx *c;
  asc__irfunc *f;
  /* the loop being tried */
  asc__irins *T;
  asc__irins *sw[MAX_SWEEPS];
  int K;
  int32_t W[MAX_SWEEPS];   /* the tensor sweep k stores */
  asc__regtab written;     /* per register: stored by some sweep */
  asc__regtab inT;         /* per register: defined inside T */
  int R;                   /* the widest row offset seen */
  /* per sweep, liveness: per register, its first definition's block
   * (none yet: 0) */
  asc__regtab defblk;
  const asc__irblock *stack[ASC_DEP_MAXL + 8];
  int nstack;
  asc__irins *loops[ASC_DEP_MAXL];
  int nloops;
  int k;                   /* the sweep being checked */
} wctx;

static void add_note(wctx *x, asc__irins *i, const char *text) {
  asc__nest_note(x->c, i, "wavefront", text);
}

/* "line N: " of an instruction's Python line, "" when it has none. */
static const char *at(const wctx *x, int32_t line) {
  return line > 0 ? asc__arena_printf(x->c, "line %d: ", (int)line) : "";
}

static const char *rname(const wctx *x, int32_t r) {
  return x->f->regs[r].name;
}

/* The loop's sweeps: K loops over the same rows, nothing else. */
static const char *shape(wctx *x) {
  asc__irins *first = NULL;
  int loops = 0;
  x->K = 0;
  for (asc__irins *i = x->T->body[0].first; i; i = i->next)
    loops += i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR;
  if (loops < 2)
    return NULL; /* not the shape (one sweep repeated gains nothing) */
  for (asc__irins *i = x->T->body[0].first; i; i = i->next) {
    if (i->op != ASC_IR_FOR && i->op != ASC_IR_PFOR)
      return NULL; /* set-up beside the loops: not the shape, no note */
    if (x->K == MAX_SWEEPS)
      return "more than 16 loops in its body";
    if (i->unroll || i->nred > 0 || i->wave != 0)
      return NULL;
    if (x->f->regs[i->dst].ty.dtype != ascInt64 ||
        i->args[2].kind != ASC_IRV_CONST || i->args[2].c.i != 1)
      return asc__arena_printf(x->c, "loop %%%s does not step by 1",
                               rname(x, i->dst));
    if (first == NULL)
      first = i;
    else if (!asc__irv_eq(i->args[0], first->args[0]) ||
             !asc__irv_eq(i->args[1], first->args[1]))
      return asc__arena_printf(x->c, "loops %%%s and %%%s have different "
                               "bounds", rname(x, first->dst),
                               rname(x, i->dst));
    for (int k = 0; k < 2; k++)
      if (i->args[k].kind == ASC_IRV_REG &&
          asc__regtab_get(&x->inT, i->args[k].reg))
        return asc__arena_printf(x->c, "the bounds of loop %%%s change in "
                                 "the loop", rname(x, i->dst));
    if (!asc__ir_has_loop(&i->body[0]))
      return asc__arena_printf(x->c, "loop %%%s has no inner loop (rows of "
                               "one element)", rname(x, i->dst));
    x->sw[x->K++] = i;
  }
  return x->K == 0 ? NULL : "";
}

/* The tensor of a load or store: a parameter, not redefined. */
static const char *tensor_ok(wctx *x, int32_t t) {
  if (!x->f->regs[t].param || x->f->regs[t].ndefs != 1)
    return asc__arena_printf(x->c, "%%%s is not a parameter", rname(x, t));
  return NULL;
}

/* The row offset of access a of tensor t in the current nest (loops[0] is
 * the sweep): axis 0's index is the sweep's induction plus a constant. */
static const char *row_of(wctx *x, const asc__irins *a, int32_t t,
                          int64_t *row) {
  asc__depnest d;
  asc__affine off, ax[ASC_IR_MAXDIMS];
  bool have_iv = false;
  *row = 0;
  asc__dep_init(&d, x->c, x->f, x->loops, x->nloops);
  if (!asc__dep_affine(&d, a->args[1], &off) ||
      !asc__dep_split(&d, t, &off, ax))
    return asc__arena_printf(x->c, "%sthe index of %%%s is not affine",
                             at(x, a->line), rname(x, t));
  bool other = false;
  for (int q = 0; q < ax[0].n; q++) {
    const asc__aterm *m = &ax[0].t[q];
    if (m->ns == 0 && m->iv == 0 && m->c == 1 && !have_iv)
      have_iv = true;
    else if (m->ns == 0 && m->iv == -1)
      *row += m->c;
    else
      other = true;
  }
  if (!have_iv || other)
    return asc__arena_printf(x->c, "%saxis 0 of %%%s is not indexed "
                             "by %%%s plus a constant", at(x, a->line),
                             rname(x, t), rname(x, x->loops[0]->dst));
  return NULL;
}

/* Adds each register's uses in an instruction to ctx (int32_t[]). */
static void count_uses(asc__irins *i, void *ctx) {
  asc__regtab *uses = ctx;
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG)
      ++*asc__regtab_ref(uses, i->args[k].reg);
  for (int32_t k = 0; k < i->nred; k++)
    ++*asc__regtab_ref(uses, i->red[k].reg);
}

static bool on_stack(const wctx *x, const asc__irblock *b) {
  for (int q = 0; q < x->nstack; q++)
    if (x->stack[q] == b)
      return true;
  return false;
}

/* A use of register r in a sweep: a register the sweep defines must have
 * been defined before, in this block or one around it (no value flows
 * from one row to the next). */
static const char *use_ok(wctx *x, int32_t r, int line) {
  const asc__irblock *d;
  if (!asc__regtab_get(&x->inT, r))
    return NULL;
  d = (const asc__irblock *)asc__regtab_get(&x->defblk, r);
  if (d == NULL || !on_stack(x, d))
    return asc__arena_printf(x->c, "%s%%%s may carry a value from "
                             "one row to the next", at(x, line), rname(x, r));
  return NULL;
}

static void def_at(wctx *x, int32_t r, const asc__irblock *b) {
  intptr_t *d = asc__regtab_ref(&x->defblk, r);
  if (*d == 0)
    *d = (intptr_t)b;
}

static const char *check_block(wctx *x, asc__irblock *b);

static const char *check_ins(wctx *x, asc__irblock *b, asc__irins *i) {
  const asc__irfunc *f = x->f;
  const char *why;
  int64_t row;
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG &&
        (why = use_ok(x, i->args[k].reg, (int)i->line)) != NULL)
      return why;
  switch (i->op) {
  case ASC_IR_FOR:
    if (x->nloops == ASC_DEP_MAXL || x->nstack == ASC_DEP_MAXL + 8)
      return "loops nested too deep";
    def_at(x, i->dst, &i->body[0]);
    x->loops[x->nloops++] = i;
    x->stack[x->nstack++] = &i->body[0];
    why = check_block(x, &i->body[0]);
    x->nstack--;
    x->nloops--;
    return why;
  case ASC_IR_LOAD: {
    int32_t t = i->args[0].reg;
    if ((why = tensor_ok(x, t)) != NULL)
      return why;
    def_at(x, i->dst, b);
    if (!asc__regtab_get(&x->written, t))
      return NULL;
    if (t == x->W[x->k])
      return asc__arena_printf(x->c, "%sthe loop over %%%s loads "
                               "%%%s, which it stores", at(x, i->line),
                               rname(x, x->loops[0]->dst), rname(x, t));
    if ((why = row_of(x, i, t, &row)) != NULL)
      return why;
    if (row < -ASC_WAVE_MAXR || row > ASC_WAVE_MAXR)
      return asc__arena_printf(x->c, "%sa row offset of %lld",
                               at(x, i->line), (long long)row);
    if (llabs(row) > x->R)
      x->R = (int)llabs(row);
    return NULL;
  }
  case ASC_IR_STORE: {
    int32_t t = i->args[0].reg;
    if ((why = tensor_ok(x, t)) != NULL)
      return why;
    if ((why = row_of(x, i, t, &row)) != NULL)
      return why;
    if (row != 0)
      return asc__arena_printf(x->c, "%sa store into row %%%s %+lld",
                               at(x, i->line), rname(x, x->loops[0]->dst),
                               (long long)row);
    return NULL;
  }
  default:
    if (!asc__nest_pure(f, i))
      return asc__arena_printf(x->c, "%s%s in a sweep", at(x, i->line),
                               asc__irop_name(i->op));
    def_at(x, i->dst, b);
    return NULL;
  }
}

static const char *check_block(wctx *x, asc__irblock *b) {
  const char *why;
  for (asc__irins *i = b->first; i; i = i->next)
    if ((why = check_ins(x, b, i)) != NULL)
      return why;
  return NULL;
}

/* The one tensor sweep s stores into. */
static void stored(asc__irins *i, void *ctx) {
  int32_t *w = ctx;
  if (i->op != ASC_IR_STORE && i->op != ASC_IR_ATOMIC)
    return;
  if (*w == -1)
    *w = i->args[0].reg;
  else if (*w != i->args[0].reg)
    *w = -2;
}

static const char *legal(wctx *x) {
  asc__irfunc *f = x->f;
  const char *why;
  if (f->may_alias)
    return "the kernel's tensors may alias";
  if (f->regs[x->T->dst].nuses > 0)
    return asc__arena_printf(x->c, "%%%s is used", rname(x, x->T->dst));
  asc__regtab_init(x->c, &x->written, x->K);
  for (int k = 0; k < x->K; k++) {
    x->W[k] = -1;
    asc__ir_walk(&x->sw[k]->body[0], stored, &x->W[k]);
    if (x->W[k] == -1)
      return asc__arena_printf(x->c, "loop %%%s stores nothing",
                               rname(x, x->sw[k]->dst));
    if (x->W[k] == -2)
      return asc__arena_printf(x->c, "loop %%%s stores into two tensors",
                               rname(x, x->sw[k]->dst));
    asc__regtab_set(&x->written, x->W[k], 1);
  }
  asc__regtab_init(x->c, &x->defblk, 0);
  x->R = 0;
  for (int k = 0; k < x->K; k++) {
    asc__regtab_clear(&x->defblk);
    x->k = k;
    x->nloops = 1;
    x->loops[0] = x->sw[k];
    x->nstack = 1;
    x->stack[0] = &x->sw[k]->body[0];
    def_at(x, x->sw[k]->dst, &x->sw[k]->body[0]);
    if ((why = check_block(x, &x->sw[k]->body[0])) != NULL)
      return why;
  }
  /* nothing a sweep defines is used outside it: one count of each
   * sweep's uses against the function's */
  {
    asc__regtab in, uses;
    asc__regtab_init(x->c, &in, 0);
    asc__regtab_init(x->c, &uses, 0);
    for (int k = 0; k < x->K; k++) {
      const int32_t *rs;
      int32_t nr;
      asc__regtab_clear(&in);
      asc__regtab_clear(&uses);
      asc__ir_defined_in(&x->sw[k]->body[0], &in);
      asc__regtab_set(&in, x->sw[k]->dst, 1);
      asc__ir_walk(&x->sw[k]->body[0], count_uses, &uses);
      rs = asc__regtab_keys(&in, &nr);
      for (int32_t q = 0; q < nr; q++)
        if (asc__regtab_get(&uses, rs[q]) != f->regs[rs[q]].nuses)
          return asc__arena_printf(x->c, "%%%s is used outside the loop "
                                   "over %%%s", rname(x, rs[q]),
                                   rname(x, x->sw[k]->dst));
    }
  }
  return NULL;
}

static bool try_loop(void *ctx, asc__irblock *b, asc__irins *T) {
  wctx *x = ctx;
  const char *why;
  ASC_UNUSED(b);
  if (T->op != ASC_IR_FOR || T->unroll || T->wave != 0)
    return false;
  x->T = T;
  asc__regtab_init(x->c, &x->inT, 0);
  asc__ir_defined_in(&T->body[0], &x->inT);
  asc__regtab_set(&x->inT, T->dst, 1);
  why = shape(x);
  if (why == NULL)
    return false;
  if (why[0] == '\0')
    why = legal(x);
  if (why != NULL) {
    add_note(x, T, asc__arena_printf(x->c, "not a wavefront: %s", why));
    return false;
  }
  T->wave = (uint8_t)(x->R + 1);
  for (int k = 0; k < x->K; k++)
    x->sw[k]->wave = ASC_WAVE_SWEEP;
  add_note(x, T, asc__arena_printf(
                     x->c, "its %d loops run as one wavefront over their "
                     "rows (radius %d), each row's values unchanged",
                     x->K, x->R));
  return true;
}

void asc__pass_wavefront(asc__cctx *c, asc__irfunc *f) {
  wctx x;
  memset(&x, 0, sizeof x);
  x.c = c;
  x.f = f;
  asc__ir_count(f);
  asc__nest_walk(c, f, "wavefront", try_loop, &x);
}
