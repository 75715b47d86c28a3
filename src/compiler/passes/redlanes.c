/*
 * Float max / min reductions in vector lanes, exactly (docs/optimizer.md,
 * "redlanes").  `m = max(m, x[j])` over a loop is one dependent chain in
 * the default mode: gcc vectorises a float max only when NaNs and the sign
 * of zero may be ignored (nnan, nsz).  Yet the order matters for nothing
 * but the sign of a zero.  max(m, v) is `v > m ? v : m`, so the fold keeps
 * m while m is a NaN (NaNs stay), skips each NaN v, and otherwise ends at
 * the largest value; among equal values (only +0.0 and -0.0 differ in
 * bits) it keeps the first.  W lanes, each starting at m and folding every
 * W-th element with the same select, then folded together in any order
 * and into m, end at the same value (all lanes are NaN when m starts as
 * one, none otherwise); only a zero's sign may differ.  So:
 *
 * when hi - lo >= 4W (else the loop as written):
 *   %m0 = mov %m                         the start, for the rescan
 *   lanes[0 .. W) = %m
 *   for %j0 = lo, lo + (n & -W), W {     n = hi - lo
 *     for %l = 0, W, 1 {                 an element-wise select: vectorises
 *       %j = add %j0, %l;  ...body...;  lanes[l] = max(lanes[l], %v)
 *     }
 *   }
 *   lanes[0 .. W/2) = max(lanes[0 .. W/2), lanes[W/2 .. W)), ... to 8
 *   for %l = 0, 8, 1 { %m = max %m, lanes[l] }
 *   for %j = lo + (n & -W), hi, 1 { the loop as written }    the rest
 *   if %m == 0.0 { %m = %m0; for %j = lo, hi, 1 { the loop as written } }
 *
 * The last line gives a zero its sign the loop as written gives it (a
 * rescan: a max of exactly zero is rare, and costs one pass more).
 * min is the same with `<`.  W is 256 bytes of lanes (64 float32, 32
 * float64): several independent vectors per step.
 *
 * The loop must be a serial innermost `for` of step 1 whose body is
 * straight-line pure code and loads (no store, no raise, no call that can
 * trap; it runs again in the rescan), `%t = max %m, %v` then `%m = mov %t`
 * (or `%m = max %m, %v`) with %m a float32 / float64 used nowhere else in
 * the body, and every other register it assigns a temporary of the body
 * (one definition, no use after the loop).  Each loop the pass changes
 * gets a note.  ASC_REDLANES=0 leaves the pass out (part of the kernel
 * cache key).
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/passes/depend.h"

enum {
  LANE_BYTES = 256,
  MAXLOOPS = 64    /* lane buffers in one kernel: 16 KiB of stack at most */
};

typedef struct rctx {
  asc__cctx *c;
  asc__irfunc *f;
  int nloops;         /* loops given lanes so far in this kernel */
} rctx;

static bool body_ok(const asc__irfunc *f, const asc__irins *i) {
  if (i->op == ASC_IR_LOAD)
    return i->dst >= 0;
  return asc__nest_pure(f, i);
}

/* The reduction of L's body: *red the max / min, *mv the mov after it
 * (NULL in the one-instruction form); the accumulator register, or -1. */
static int32_t find_red(rctx *x, asc__irins *L, asc__irins **red,
                        asc__irins **mv) {
  asc__irfunc *f = x->f;
  int32_t m = -1;
  asc__regtab cnt, seen, def;
  asc__regtab_init(x->c, &cnt, 0);
  asc__regtab_init(x->c, &seen, 0);
  asc__regtab_init(x->c, &def, 0);
  asc__ir_occurrences(&L->body[0], &cnt);
  asc__ir_defined_in(&L->body[0], &def);
  *red = *mv = NULL;
  for (asc__irins *i = L->body[0].first; i; i = i->next) {
    int32_t a0 = i->nargs > 0 && i->args[0].kind == ASC_IRV_REG
                     ? i->args[0].reg : -1;
    int dt = i->dst >= 0 ? f->regs[i->dst].ty.dtype : -1;
    if (!body_ok(f, i) || i->dst < 0)
      return -1;
    if ((i->op == ASC_IR_MAX || i->op == ASC_IR_MIN ||
         i->op == ASC_IR_PMAX || i->op == ASC_IR_PMIN) && *red == NULL &&
        (dt == ascFloat32 || dt == ascFloat64) && a0 >= 0 &&
        asc__regtab_get(&def, a0) && !asc__regtab_get(&seen, a0) &&
        (i->args[1].kind != ASC_IRV_REG ||
         i->args[1].reg != a0)) {
      /* reads the accumulator carried from the last iteration */
      *red = i;
      m = a0;
      if (i->dst == m) {
        asc__regtab_set(&seen, m, 1);
        continue;
      }
      if (i->next == NULL || i->next->op != ASC_IR_MOV ||
          i->next->dst != m || i->next->args[0].kind != ASC_IRV_REG ||
          i->next->args[0].reg != i->dst)
        return -1;
      if (f->regs[i->dst].nuses != 1)
        return -1; /* the running max read by more than the mov */
      *mv = i->next;
      asc__regtab_set(&seen, i->dst, 1);
      asc__regtab_set(&seen, m, 1);
      i = i->next;
      continue;
    }
    for (int32_t k = 0; k < i->nargs; k++)
      if (i->args[k].kind == ASC_IRV_REG &&
          asc__regtab_get(&def, i->args[k].reg) &&
          !asc__regtab_get(&seen, i->args[k].reg))
        return -1; /* a value carried from the last iteration */
    asc__regtab_set(&seen, i->dst, 1);
  }
  if (m < 0)
    return -1;
  /* the other registers the body assigns: temporaries of the body */
  for (asc__irins *i = L->body[0].first; i; i = i->next) {
    int32_t r = i->dst;
    if (r == m)
      continue;
    if (f->regs[r].ndefs != 1 ||
        asc__regtab_get(&cnt, r) != 1 + f->regs[r].nuses)
      return -1;
  }
  /* m's occurrences in the body: the max's operand and its definition */
  if (asc__regtab_get(&cnt, m) != 2)
    return -1;
  return m;
}

static asc__irins *ins3(rctx *x, int op, int32_t dst, asc__irval a,
                        asc__irval b, asc__irval c, int nargs, int32_t line) {
  asc__irins *i = asc__ir_ins(x->c, op, dst, nargs, line);
  i->args[0] = a;
  if (nargs > 1)
    i->args[1] = b;
  if (nargs > 2)
    i->args[2] = c;
  return i;
}

/* Renames c's operands under ren (1 + the new register; 0 keeps),
 * leaving registers from nren up alone. */
static void rename_args(asc__irins *c, const asc__regtab *ren, int32_t nren) {
  for (int32_t k = 0; k < c->nargs; k++)
    if (c->args[k].kind == ASC_IRV_REG && c->args[k].reg < nren &&
        asc__regtab_get(ren, c->args[k].reg) > 0)
      c->args[k].reg = (int32_t)asc__regtab_get(ren, c->args[k].reg) - 1;
}

/* A copy of loop L (straight-line body) with its own induction and
 * temporaries (an induction belongs to one loop); m, the accumulator,
 * stays.  ren: scratch. */
static asc__irins *clone_fresh(rctx *x, const asc__irins *L, int32_t m,
                               asc__regtab *ren) {
  asc__regtab_clear(ren);
  asc__regtab_set(ren, m, m + 1);
  return asc__ir_clone_fresh(x->c, x->f, L, L, ren).first;
}

static bool try_loop(void *ctx, asc__irblock *b, asc__irins *L) {
  rctx *x = ctx;
  asc__irfunc *f = x->f;
  asc__irins *red, *mv, *pre, *J0, *Ll, *C, *Z, *R, *G;
  asc__irblock *T;
  int32_t m, m0, lanes, ity, line = L->line, l, jn, nf, mid, z, n, big;
  int32_t nren;
  asc__regtab ren;
  int dt, W, W2;
  asc__irval lo, hi, none = {0};

  if (L->op != ASC_IR_FOR || L->wave != 0 || L->unroll ||
      L->args[2].kind != ASC_IRV_CONST || L->args[2].c.i != 1 ||
      L->body[0].first == NULL)
    return false;
  if (x->nloops == MAXLOOPS)
    return false;
  /* Under nnan and nsz the order does not matter at all, and the C
   * compiler vectorises the reduction itself, better (softmax_vecmath's
   * fastmath row: 1.09-1.16 ms without the lanes, 1.50-1.54 with them). */
  if ((f->fastmath & (ASC_FASTMATH_NNAN | ASC_FASTMATH_NSZ)) ==
      (ASC_FASTMATH_NNAN | ASC_FASTMATH_NSZ))
    return false;
  m = find_red(x, L, &red, &mv);
  if (m < 0)
    return false;
  dt = f->regs[m].ty.dtype;
  W = LANE_BYTES / asc__dt_bytes(dt);
  W2 = W;
  if (asc__nest_short(L, 4 * W - 1))
    return false;   /* short: the lanes would cost more than they gain */
  ity = f->regs[L->dst].ty.dtype;
  lo = L->args[0];
  hi = L->args[1];

  /* if hi - lo >= 4W: the lanes, else the loop as written */
  n = asc__ir_reg(x->c, f, asc__irt_scalar(ity), "n");
  asc__ir_insert_before(b, L, ins3(x, ASC_IR_SUB, n, hi, lo, none, 2, line));
  big = asc__ir_reg(x->c, f, asc__irt_scalar(ascBool), "long");
  asc__ir_insert_before(b, L, ins3(x, ASC_IR_GE, big, asc__irv_reg(n),
                                   asc__irv_int(ity, 4 * W), none, 2, line));
  G = asc__ir_ins(x->c, ASC_IR_IF, -1, 1, line);
  G->args[0] = asc__irv_reg(big);
  asc__ir_insert_before(b, L, G);
  asc__ir_remove(b, L);
  T = &G->body[0];
  nren = f->nregs;
  asc__regtab_init(x->c, &ren, 0);
  asc__ir_append(&G->body[1], clone_fresh(x, L, m, &ren));

  /* %m0 = mov %m; the lanes start at %m */
  m0 = asc__ir_reg(x->c, f, f->regs[m].ty, "m0");
  asc__ir_append(T, ins3(x, ASC_IR_MOV, m0, asc__irv_reg(m), none,
                                   none, 1, line));
  pre = asc__ir_local_array(x->c, f, dt, W, "lanes", line);
  lanes = pre->dst;
  asc__ir_append(T, pre);
  l = asc__ir_reg(x->c, f, asc__irt_scalar(ity), "l");
  pre = asc__ir_for(x->c, l, asc__irv_int(ity, 0), asc__irv_int(ity, W),
                asc__irv_int(ity, 1), line);
  asc__ir_append(&pre->body[0],
                 ins3(x, ASC_IR_STORE, -1, asc__irv_reg(lanes),
                      asc__irv_reg(l), asc__irv_reg(m), 3, line));
  asc__ir_append(T, pre);

  /* where the whole steps of W end: lo + (n & -W), n >= 4W here */
  nf = asc__ir_reg(x->c, f, asc__irt_scalar(ity), "n");
  asc__ir_append(T, ins3(x, ASC_IR_AND, nf, asc__irv_reg(n),
                         asc__irv_int(ity, -(int64_t)W), none, 2, line));
  mid = asc__ir_reg(x->c, f, asc__irt_scalar(ity), "mid");
  asc__ir_append(T, ins3(x, ASC_IR_ADD, mid, lo, asc__irv_reg(nf),
                                   none, 2, line));

  /* the steps of W: the body with fresh registers, its reduction into
   * the lanes */
  J0 = asc__ir_for(x->c, asc__ir_reg(x->c, f, asc__irt_scalar(ity), "j0"), lo,
               asc__irv_reg(mid), asc__irv_int(ity, W), line);
  Ll = asc__ir_for(x->c, asc__ir_reg(x->c, f, asc__irt_scalar(ity), "l"),
               asc__irv_int(ity, 0), asc__irv_int(ity, W),
               asc__irv_int(ity, 1), line);
  asc__regtab_clear(&ren);
  jn = asc__ir_reg(x->c, f, f->regs[L->dst].ty, f->regs[L->dst].name);
  asc__regtab_set(&ren, L->dst, jn + 1);
  asc__ir_append(&Ll->body[0],
                 ins3(x, ASC_IR_ADD, jn, asc__irv_reg(J0->dst),
                      asc__irv_reg(Ll->dst), none, 2, line));
  for (asc__irins *i = L->body[0].first; i; i = i->next) {
    asc__irins *c;
    if (i == mv)
      continue;
    c = asc__ir_clone(x->c, i);
    c->note = NULL;
    rename_args(c, &ren, nren);
    if (i == red) {
      int32_t a = asc__ir_reg(x->c, f, f->regs[m].ty, "lane");
      int32_t t = asc__ir_reg(x->c, f, f->regs[m].ty, "lane");
      asc__ir_append(&Ll->body[0],
                     ins3(x, ASC_IR_LOAD, a, asc__irv_reg(lanes),
                          asc__irv_reg(Ll->dst), none, 2, i->line));
      c->dst = t;
      c->args[0] = asc__irv_reg(a);
      asc__ir_append(&Ll->body[0], c);
      asc__ir_append(&Ll->body[0],
                     ins3(x, ASC_IR_STORE, -1, asc__irv_reg(lanes),
                          asc__irv_reg(Ll->dst), asc__irv_reg(t), 3,
                          i->line));
      continue;
    }
    c->dst = asc__ir_reg(x->c, f, f->regs[i->dst].ty, f->regs[i->dst].name);
    asc__regtab_set(&ren, i->dst, c->dst + 1);
    asc__ir_append(&Ll->body[0], c);
  }
  asc__ir_append(&J0->body[0], Ll);
  asc__ir_append(T, J0);

  /* the lanes into m: halves folded into the first half (loops that
   * vectorise) down to 8 lanes, then those into m in order */
  for (int h = W / 2; h >= 8; h /= 2) {
    int32_t a, a2, t, o;
    C = asc__ir_for(x->c, asc__ir_reg(x->c, f, asc__irt_scalar(ity), "l"),
                asc__irv_int(ity, 0), asc__irv_int(ity, h),
                asc__irv_int(ity, 1), line);
    a = asc__ir_reg(x->c, f, f->regs[m].ty, "lane");
    a2 = asc__ir_reg(x->c, f, f->regs[m].ty, "lane");
    t = asc__ir_reg(x->c, f, f->regs[m].ty, "lane");
    o = asc__ir_reg(x->c, f, asc__irt_scalar(ity), "l");
    asc__ir_append(&C->body[0], ins3(x, ASC_IR_LOAD, a, asc__irv_reg(lanes),
                                     asc__irv_reg(C->dst), none, 2, line));
    asc__ir_append(&C->body[0], ins3(x, ASC_IR_ADD, o, asc__irv_reg(C->dst),
                                     asc__irv_int(ity, h), none, 2, line));
    asc__ir_append(&C->body[0], ins3(x, ASC_IR_LOAD, a2, asc__irv_reg(lanes),
                                     asc__irv_reg(o), none, 2, line));
    asc__ir_append(&C->body[0], ins3(x, red->op, t, asc__irv_reg(a),
                                     asc__irv_reg(a2), none, 2, line));
    asc__ir_append(&C->body[0], ins3(x, ASC_IR_STORE, -1, asc__irv_reg(lanes),
                                     asc__irv_reg(C->dst), asc__irv_reg(t), 3,
                                     line));
    asc__ir_append(T, C);
    W2 = h;
  }
  C = asc__ir_for(x->c, asc__ir_reg(x->c, f, asc__irt_scalar(ity), "l"),
              asc__irv_int(ity, 0), asc__irv_int(ity, W2),
              asc__irv_int(ity, 1), line);
  {
    int32_t a = asc__ir_reg(x->c, f, f->regs[m].ty, "lane");
    int32_t t = asc__ir_reg(x->c, f, f->regs[m].ty, "lane");
    asc__ir_append(&C->body[0], ins3(x, ASC_IR_LOAD, a, asc__irv_reg(lanes),
                                     asc__irv_reg(C->dst), none, 2, line));
    asc__ir_append(&C->body[0], ins3(x, red->op, t, asc__irv_reg(m),
                                     asc__irv_reg(a), none, 2, line));
    asc__ir_append(&C->body[0], ins3(x, ASC_IR_MOV, m, asc__irv_reg(t),
                                     none, none, 1, line));
  }
  asc__ir_append(T, C);

  /* a zero: the loop as written again, from the start */
  R = clone_fresh(x, L, m, &ren);
  z = asc__ir_reg(x->c, f, asc__irt_scalar(ascBool), "zero");
  Z = asc__ir_ins(x->c, ASC_IR_IF, -1, 1, line);
  Z->args[0] = asc__irv_reg(z);
  asc__ir_append(&Z->body[0], ins3(x, ASC_IR_MOV, m, asc__irv_reg(m0), none,
                                   none, 1, line));
  asc__ir_append(&Z->body[0], R);

  /* the rest after the whole steps */
  L->args[0] = asc__irv_reg(mid);
  asc__ir_append(T, L);
  asc__ir_append(T, ins3(x, ASC_IR_EQ, z, asc__irv_reg(m),
                         asc__irv_float(dt, 0.0), none, 2, line));
  asc__ir_append(T, Z);
  asc__nest_note(x->c, J0, "redlanes",
                 asc__arena_printf(x->c,
                                   "%s of %%%s (line %d) in %d vector lanes, "
                                   "folded together after the loop; a zero "
                                   "result is scanned again for its sign",
                                   asc__irop_name(red->op),
                                   f->regs[m].name, (int)red->line, W));
  x->nloops++;
  return true;
}

void asc__pass_redlanes(asc__cctx *c, asc__irfunc *f) {
  rctx x;
  x.c = c;
  x.f = f;
  x.nloops = 0;
  asc__nest_walk(c, f, "redlanes", try_loop, &x);
}
