/*
 * Float sums in numpy's pairwise order (docs/arrays.md, "The order of a
 * float sum").  numpy adds the n elements of a reduction's inner loop as
 *
 *   sum(a, n) = n <= 128 ? leaf(a, n)
 *             : sum(a, n2) + sum(a + n2, n - n2),  n2 = n / 2 rounded
 *                                                  down to a multiple of 8
 *   leaf(a, n): eight running sums r[j] += a[i + j] over the first
 *               n - n % 8 elements, ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
 *               (r6 + r7)), then the last n % 8 elements one by one
 *
 * and so does a kernel: the same additions in the same order, so a sum is
 * bit for bit numpy's where numpy sums the same elements in one inner loop
 * (a contiguous array, any expression numpy makes a temporary for).  The
 * eight running sums are one vector in the generated C, which the
 * C-order loop was not (its adds form one chain), and the tree's top
 * levels are independent: a long sum is split over the team there, each
 * thread summing whole subtrees, and the subtrees' sums are added as the
 * tree adds them.  The result is the same on any number of threads.
 *
 * The recursion is a loop with an explicit stack:
 *
 *   depth = 0; pos = 0; len = n
 *   loop {
 *     loop { if len <= 128 break;        (down the left children)
 *            n2 = (len >> 1) & -8; stk_n[depth++] = len - n2; len = n2 }
 *     s = leaf(pos, len); pos += len
 *     loop { if depth == 0 break;        (up from finished right children)
 *            if stk_n[depth - 1] != 0 break; depth--; s = stk_s[depth] + s }
 *     if depth == 0 { res = s; break }
 *     stk_s[depth - 1] = s               (a left child's sum waits)
 *     len = stk_n[depth - 1]; stk_n[depth - 1] = 0   (its right sibling)
 *   }
 *
 * A right child is never empty (n2 < len), so 0 marks the one in progress.
 */
#include <stdint.h>

#include "compiler/lower.h"
#include "compiler/lower_int.h"

enum {
  PW_LEAF = 128,          /* numpy's PW_BLOCKSIZE */
  PW_LANES = 8,           /* its running sums */
  PW_STACK = 64,          /* depth of the tree of n < 2^63 elements */
  PW_SPLIT = 6,           /* a parallel sum: 2^6 subtrees */
  PW_PAR_MIN = 1 << 15    /* the fewest elements a sum is split for */
};

_Static_assert(PW_LEAF <= ASC_IR_SHORT_SPAN, "a leaf's loops are short");

static int32_t local(lstate *ls, int dt, int64_t n, const char *name) {
  asc__irins *a = asc__ir_local_array(ls->c, ls->f, dt, n, name, ls->line);
  asc__ir_append(ls->cur, a);
  return a->dst;
}

/* for %r = lo, hi, step { ... }: leaves ls->cur in the body */
static asc__irval loop_for(lstate *ls, int op, asc__irval lo, asc__irval hi,
                           int64_t step, const char *hint) {
  return asc__irv_reg(open_for(ls, op, lo, hi, i64(step), hint)->dst);
}

/* The same, of a loop inside a leaf: it spans at most PW_LEAF, which
 * spares it the polls of a loop of unknown length (ir.h) */
static asc__irval leaf_for(lstate *ls, asc__irval lo, asc__irval hi,
                           int64_t step, const char *hint) {
  asc__irblock *b = ls->cur;
  asc__irval r = loop_for(ls, ASC_IR_FOR, lo, hi, step, hint);
  b->last->nimm = 1;
  b->last->imm[0] = PW_LEAF;
  return r;
}

/* A loop the lowering knows runs at most max times (a walk of the tree,
 * the rows of a leaf): no poll (ir.h) */
static asc__irblock *loop_bounded(lstate *ls, int64_t max) {
  asc__irblock *save = open_loop(ls);
  save->last->nimm = 1;
  save->last->imm[0] = max;
  return save;
}

static asc__irval cmp(lstate *ls, int op, asc__irval a, asc__irval b) {
  return op2(ls, op, ascInt64, a, b);
}

static asc__irval sub(lstate *ls, asc__irval a, asc__irval b) {
  return op2(ls, ASC_IR_SUB, ascInt64, a, b);
}

/* The left child's length: len / 2 rounded down to a multiple of 8 */
static asc__irval half(lstate *ls, asc__irval len) {
  return op2(ls, ASC_IR_AND, ascInt64,
             op2(ls, ASC_IR_SHR, ascInt64, len, i64(1)), i64(-PW_LANES));
}

static asc__irval fadd(lstate *ls, int dt, asc__irval a, asc__irval b) {
  return op2(ls, ASC_IR_ADD, dt, a, b);
}

/* What a sum adds: term(row, col) of float dtype dt; element f is column
 * f % rowlen of row f / rowlen, or column f of row 0 when rowlen is 0 */
typedef struct pw {
  int dt;
  asc__irval rowlen;
  asc__pw_term term;
  void *arg;
} pw;

static bool one_row(const pw *p) {
  return p->rowlen.kind == ASC_IRV_CONST && p->rowlen.c.i == 0;
}

/* t[0 .. len) = the terms of elements pos .. pos + len - 1: one loop, or
 * with rows, a loop over each row's part (its row and first column found
 * once, by a division) */
static void terms(lstate *ls, const pw *p, int32_t t, asc__irval pos,
                  asc__irval len) {
  asc__irblock *save = ls->cur, *in;
  int32_t i, f;
  asc__irval c, row, col, cnt;
  if (one_row(p)) {
    c = leaf_for(ls, i64(0), len, 1, "pw.i");
    asc__lower_store_at(ls, t, c,
                        p->term(ls, i64(0), add(ls, pos, c), p->arg));
    ls->cur = save;
    return;
  }
  i = newreg(ls, ascInt64, "pw.at");
  f = newreg(ls, ascInt64, "pw.f");
  mov(ls, i, i64(0));
  mov(ls, f, pos);
  in = loop_bounded(ls, PW_LEAF);
  break_if(ls, cmp(ls, ASC_IR_GE, asc__irv_reg(i), len));
  row = op2(ls, ASC_IR_FLOORDIV, ascInt64, asc__irv_reg(f), p->rowlen);
  col = sub(ls, asc__irv_reg(f), mul(ls, row, p->rowlen));
  cnt = op2(ls, ASC_IR_MIN, ascInt64, sub(ls, len, asc__irv_reg(i)),
            sub(ls, p->rowlen, col));
  {
    asc__irblock *here = ls->cur;
    c = leaf_for(ls, i64(0), cnt, 1, "pw.c");
    asc__lower_store_at(ls, t, add(ls, asc__irv_reg(i), c),
          p->term(ls, row, add(ls, col, c), p->arg));
    ls->cur = here;
  }
  mov(ls, i, add(ls, asc__irv_reg(i), cnt));
  mov(ls, f, add(ls, asc__irv_reg(f), cnt));
  ls->cur = in;
}

/* leaf(pos, len), len <= 128: the terms first, into a local array (a
 * loop the C compiler vectorises like any elementwise one, whatever the
 * operands' strides), then the eight running sums over it, which it
 * vectorises as one vector of sums; summing the terms as they are made
 * measured 3-4 times slower (gcc 12 turns the eight sums into eight
 * ordered reductions). */
static asc__irval leaf(lstate *ls, const pw *p, asc__irval pos,
                       asc__irval len) {
  asc__irblock *save = ls->cur;
  int dt = p->dt;
  int32_t t = local(ls, dt, PW_LEAF, "pw.t");
  int32_t r = local(ls, dt, PW_LANES, "pw.r"), s = newreg(ls, dt, "pw.s");
  asc__irval m, i, j, x[PW_LANES];
  terms(ls, p, t, pos, len);
  j = loop_for(ls, ASC_IR_FOR, i64(0), i64(PW_LANES), 1, "pw.j");
  asc__lower_store_at(ls, r, j, conv(ls, i64(0), dt));
  ls->cur = save;
  m = op2(ls, ASC_IR_AND, ascInt64, len, i64(-PW_LANES));
  i = leaf_for(ls, i64(0), m, PW_LANES, "pw.i");
  j = loop_for(ls, ASC_IR_FOR, i64(0), i64(PW_LANES), 1, "pw.j");
  asc__lower_store_at(ls, r, j,
                      fadd(ls, dt, asc__lower_load_off(ls, r, j),
                           asc__lower_load_off(ls, t, add(ls, i, j))));
  ls->cur = save;
  for (int k = 0; k < PW_LANES; k++)
    x[k] = asc__lower_load_off(ls, r, i64(k));
  mov(ls, s, fadd(ls, dt, fadd(ls, dt, fadd(ls, dt, x[0], x[1]),
                               fadd(ls, dt, x[2], x[3])),
                  fadd(ls, dt, fadd(ls, dt, x[4], x[5]),
                       fadd(ls, dt, x[6], x[7]))));
  i = leaf_for(ls, m, len, 1, "pw.i");
  mov(ls, s, fadd(ls, dt, asc__irv_reg(s), asc__lower_load_off(ls, t, i)));
  ls->cur = save;
  return asc__irv_reg(s);
}

/* The pairwise sum of term(f), f in [pos0, pos0 + len0), one thread. */
static asc__irval serial(lstate *ls, const pw *p, asc__irval pos0,
                         asc__irval len0) {
  int dt = p->dt;
  int32_t stk_s = local(ls, dt, PW_STACK, "pw.stk_s");
  int32_t stk_n = local(ls, ascInt64, PW_STACK, "pw.stk_n");
  int32_t depth = newreg(ls, ascInt64, "pw.depth");
  int32_t pos = newreg(ls, ascInt64, "pw.pos");
  int32_t len = newreg(ls, ascInt64, "pw.len");
  int32_t s = newreg(ls, dt, "pw.s"), res = newreg(ls, dt, "pw.res");
  asc__irblock *outer, *in;
  asc__irval d1, n2;
  mov(ls, depth, i64(0));
  mov(ls, pos, pos0);
  mov(ls, len, len0);
  mov(ls, res, conv(ls, i64(0), dt));
  outer = open_loop(ls);
  /* down the left children */
  in = loop_bounded(ls, PW_STACK);
  break_if(ls, cmp(ls, ASC_IR_LE, asc__irv_reg(len), i64(PW_LEAF)));
  n2 = half(ls, asc__irv_reg(len));
  asc__lower_store_at(ls, stk_n, asc__irv_reg(depth),
                      sub(ls, asc__irv_reg(len), n2));
  mov(ls, depth, add(ls, asc__irv_reg(depth), i64(1)));
  mov(ls, len, n2);
  ls->cur = in;
  mov(ls, s, leaf(ls, p, asc__irv_reg(pos), asc__irv_reg(len)));
  mov(ls, pos, add(ls, asc__irv_reg(pos), asc__irv_reg(len)));
  /* up from the finished right children */
  in = loop_bounded(ls, PW_STACK);
  break_if(ls, cmp(ls, ASC_IR_EQ, asc__irv_reg(depth), i64(0)));
  d1 = sub(ls, asc__irv_reg(depth), i64(1));
  break_if(ls,
           cmp(ls, ASC_IR_NE, asc__lower_load_off(ls, stk_n, d1), i64(0)));
  mov(ls, depth, d1);
  mov(ls, s,
      fadd(ls, dt, asc__lower_load_off(ls, stk_s, d1), asc__irv_reg(s)));
  ls->cur = in;
  leave_if(ls, cmp(ls, ASC_IR_EQ, asc__irv_reg(depth), i64(0)), res,
           asc__irv_reg(s));
  d1 = sub(ls, asc__irv_reg(depth), i64(1));
  asc__lower_store_at(ls, stk_s, d1, asc__irv_reg(s));
  mov(ls, len, asc__lower_load_off(ls, stk_n, d1));
  asc__lower_store_at(ls, stk_n, d1, i64(0));
  ls->cur = outer;
  return asc__irv_reg(res);
}

/* The children of a node (len): the left one's length, n2 = len when the
 * node is a leaf (its right child is then empty). */
static asc__irval left_len(lstate *ls, asc__irval len) {
  return sel(ls, cmp(ls, ASC_IR_GT, len, i64(PW_LEAF)), half(ls, len), len);
}

/* The sum split over the team: subtree k of the 2^PW_SPLIT at depth
 * PW_SPLIT (a leaf above that depth is its subtree's leftmost, with empty
 * siblings) is iteration k of a pfor, which stores its sum as node
 * K + k of a heap-ordered tree (node h's children 2h and 2h + 1); the
 * nodes above are then added bottom up as numpy's tree adds them, an
 * empty right child adding nothing. */
static asc__irval parallel(lstate *ls, const pw *p, asc__irval n) {
  enum { K = 1 << PW_SPLIT };
  int dt = p->dt;
  asc__irblock *save = ls->cur;
  int32_t lens = local(ls, ascInt64, 2 * K, "pw.lens");
  int32_t sums = local(ls, dt, 2 * K, "pw.sums");
  int32_t res = newreg(ls, dt, "pw.res");
  asc__irval h, L, n2, k;
  /* the nodes' lengths, node h's children 2h and 2h + 1 */
  asc__lower_store_at(ls, lens, i64(1), n);
  h = loop_for(ls, ASC_IR_FOR, i64(1), i64(K), 1, "pw.h");
  L = asc__lower_load_off(ls, lens, h);
  n2 = left_len(ls, L);
  h = mul(ls, h, i64(2));
  asc__lower_store_at(ls, lens, h, n2);
  asc__lower_store_at(ls, lens, add(ls, h, i64(1)), sub(ls, L, n2));
  ls->cur = save;
  {
    int saved_excepts = ls->excepts;
    int32_t pos = newreg(ls, ascInt64, "pw.pos");
    int32_t len = newreg(ls, ascInt64, "pw.len");
    asc__irblock *body;
    asc__irval lvl, bit;
    k = loop_for(ls, ASC_IR_PFOR, i64(0), i64(K), 1, "pw.k");
    ls->pfors++;
    ls->excepts = 0; /* the body is another function */
    mov(ls, pos, i64(0));
    mov(ls, len, n);
    body = ls->cur;
    lvl = loop_for(ls, ASC_IR_FOR, i64(0), i64(PW_SPLIT), 1, "pw.l");
    bit = op2(ls, ASC_IR_AND, ascInt64,
              op2(ls, ASC_IR_SHR, ascInt64, k,
                  sub(ls, i64(PW_SPLIT - 1), lvl)), i64(1));
    bit = cmp(ls, ASC_IR_NE, bit, i64(0));
    n2 = left_len(ls, asc__irv_reg(len));
    mov(ls, pos, sel(ls, bit, add(ls, asc__irv_reg(pos), n2),
                     asc__irv_reg(pos)));
    mov(ls, len, sel(ls, bit, sub(ls, asc__irv_reg(len), n2), n2));
    ls->cur = body;
    asc__lower_store_at(ls, sums, add(ls, k, i64(K)),
                        serial(ls, p, asc__irv_reg(pos), asc__irv_reg(len)));
    ls->pfors--;
    ls->excepts = saved_excepts;
    ls->cur = save;
  }
  /* bottom up: node h = K - 1 - t */
  h = loop_for(ls, ASC_IR_FOR, i64(0), i64(K - 1), 1, "pw.t");
  h = sub(ls, i64(K - 1), h);
  {
    asc__irval l2 = mul(ls, h, i64(2)), r2 = add(ls, l2, i64(1));
    asc__irval a = asc__lower_load_off(ls, sums, l2);
    asc__irval empty = cmp(ls, ASC_IR_EQ, asc__lower_load_off(ls, lens, r2),
                           i64(0));
    asc__lower_store_at(ls, sums, h,
                        sel(ls, empty, a,
                            fadd(ls, dt, a,
                                 asc__lower_load_off(ls, sums, r2))));
  }
  ls->cur = save;
  mov(ls, res, asc__lower_load_off(ls, sums, i64(1)));
  return asc__irv_reg(res);
}

asc__irval asc__lower_pairwise(lstate *ls, int dt, asc__irval n,
                               asc__irval rowlen, bool par,
                               asc__pw_term term, void *arg) {
  int32_t res;
  asc__irins *i;
  asc__irblock *save = ls->cur;
  asc__irval big;
  pw p;
  p.dt = dt;
  p.rowlen = rowlen;
  p.term = term;
  p.arg = arg;
  if (!par)
    return serial(ls, &p, i64(0), n);
  res = newreg(ls, dt, "pw.sum");
  big = cmp(ls, ASC_IR_GE, n, i64(PW_PAR_MIN));
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = big;
  i->note = "pairwise sum: split over the team at depth 6 of numpy's "
            "tree from 32768 elements, the same sum on any team";
  ls->cur = &i->body[0];
  mov(ls, res, parallel(ls, &p, n));
  ls->cur = &i->body[1];
  mov(ls, res, serial(ls, &p, i64(0), n));
  ls->cur = save;
  return asc__irv_reg(res);
}
