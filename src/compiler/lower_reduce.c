/*
 * Reductions in kernels (docs/arrays.md): np.sum(a), a.max(), np.dot(x,
 * y) of all elements, and the loops of a reduction along an axis inside
 * a whole-array statement (lower_array.c).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "asc/asc.h"
#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

/* The identities of min and max: the largest and smallest value of dt. */
static asc__irval extreme(int dt, bool largest) {
  switch (dt) {
  case ascBool: return asc__irv_int(dt, largest);
  case ascInt8: return asc__irv_int(dt, largest ? INT8_MAX : INT8_MIN);
  case ascInt16: return asc__irv_int(dt, largest ? INT16_MAX : INT16_MIN);
  case ascInt32: return asc__irv_int(dt, largest ? INT32_MAX : INT32_MIN);
  case ascInt64: return asc__irv_int(dt, largest ? INT64_MAX : INT64_MIN);
  case ascUInt8: return asc__irv_int(dt, largest ? UINT8_MAX : 0);
  case ascUInt16: return asc__irv_int(dt, largest ? UINT16_MAX : 0);
  case ascUInt32: return asc__irv_int(dt, largest ? UINT32_MAX : 0);
  case ascUInt64: return asc__irv_int(dt, largest ? -1 : 0);
  default: return asc__irv_float(dt, largest ? HUGE_VAL : -HUGE_VAL);
  }
}

/* PASS_KEEP_*: the terms of a selection's pairwise sum, stored in
 * order into the array acc at idx, idx counting them */
enum { PASS_SUM, PASS_PROD, PASS_MIN, PASS_MAX, PASS_ANY, PASS_ALL,
       PASS_ARGMIN, PASS_ARGMAX, PASS_SQDEV, PASS_CSQDEV, PASS_KEEP_SUM,
       PASS_KEEP_SQDEV };

/* The real or imaginary part of a complex128 value. */
static asc__irval cpart(lstate *ls, asc__irval z, bool imag) {
  return call1(ls, imag ? ASC_INTR_CIMAG : ASC_INTR_CREAL, ascFloat64, z);
}

/* A reduction of a selection f(a[m], ...) (asc__lower_select_form): its
 * loops run over the mask's shape and fold the elements where m is true,
 * in C order, the elements of the selection numpy would make. */
typedef struct selpred {
  const asc__ast_expr *m;
  asc__ewctx mew;  /* m's operands */
  int32_t n;       /* the count of true elements, or -1 (a second pass) */
} selpred;

/* The elements of a chunk of a 1-D selection's mask: a few KiB of the
 * operands, read again by the fold while still in the L1 cache. */
enum { SEL_CHUNK = 512 };

/* The loops of a 1-D selection, in place of `for %red = 0, n, 1` and
 * `if mask[%red]` (the loop of the old form did not vectorise: the mask,
 * its operands' loads and the fold were one loop with a branch and the
 * ordered fold's chain):
 *
 *   for %c = 0, n, CHUNK {
 *     %e = min(%c + CHUNK, n);  %k = 0
 *     for %j = %c, %e, 1 { %b = mask[%j]; buf[%j - %c] = %b; %k += %b }
 *     if %k != 0 {  (a chunk with no true element is skipped)
 *       sel.n += %k
 *       for %red = %c, %e, 1 { if buf[%red - %c] { ...fold... } } } }
 *
 * The first inner loop has no branch and no chain but the count, which
 * the C compiler vectorises; the fold sees the selected elements in C
 * order, as before.  Leaves ls->cur in the innermost if, ix[0] = %red. */
static void select_chunks(lstate *ls, selpred *sp, asc__irval n,
                          asc__irval *ix) {
  asc__irins *arr, *f, *i;
  int32_t c = newreg(ls, ascInt64, "sel.c"), j = newreg(ls, ascInt64, "sel.j");
  int32_t k = newreg(ls, ascInt64, "sel.k"), r = newreg(ls, ascInt64, "red");
  asc__irval e, b, off, at[1];
  arr = asc__ir_local_array(ls->c, ls->f, ascBool, SEL_CHUNK, "sel.buf",
                            ls->line);
  asc__ir_append(ls->cur, arr);
  f = emit(ls, ASC_IR_FOR, c, 3);
  f->args[0] = i64(0);
  f->args[1] = n;
  f->args[2] = i64(SEL_CHUNK);
  f->note = "select reduce: the mask in chunks of 512 (a loop without "
            "branches), then the true elements of each chunk folded in "
            "order; no gathered array";
  ls->cur = &f->body[0];
  e = op2(ls, ASC_IR_MIN, ascInt64, add(ls, asc__irv_reg(c), i64(SEL_CHUNK)),
          n);
  mov(ls, k, i64(0));
  f = emit(ls, ASC_IR_FOR, j, 3);
  f->args[0] = asc__irv_reg(c);
  f->args[1] = e;
  f->args[2] = i64(1);
  {
    asc__irblock *save = ls->cur;
    asc__irins *st;
    ls->cur = &f->body[0];
    at[0] = asc__irv_reg(j);
    b = asc__lower_mask_at(ls, sp->m, &sp->mew, at, 1);
    off = op2(ls, ASC_IR_SUB, ascInt64, asc__irv_reg(j), asc__irv_reg(c));
    st = emit(ls, ASC_IR_STORE, -1, 3);
    st->args[0] = asc__irv_reg(arr->dst);
    st->args[1] = off;
    st->args[2] = b;
    mov(ls, k, add(ls, asc__irv_reg(k), conv(ls, b, ascInt64)));
    ls->cur = save;
  }
  b = op2(ls, ASC_IR_NE, ascInt64, asc__irv_reg(k), i64(0));
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = b;
  ls->cur = &i->body[0];
  if (sp->n >= 0)
    mov(ls, sp->n, add(ls, asc__irv_reg(sp->n), asc__irv_reg(k)));
  f = emit(ls, ASC_IR_FOR, r, 3);
  f->args[0] = asc__irv_reg(c);
  f->args[1] = e;
  f->args[2] = i64(1);
  ls->cur = &f->body[0];
  {
    int32_t v = newreg(ls, ascBool, NULL);
    asc__irins *ld;
    off = op2(ls, ASC_IR_SUB, ascInt64, asc__irv_reg(r), asc__irv_reg(c));
    ld = emit(ls, ASC_IR_LOAD, v, 2);
    ld->args[0] = asc__irv_reg(arr->dst);
    ld->args[1] = off;
    i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = asc__irv_reg(v);
    ls->cur = &i->body[0];
  }
  ix[0] = asc__irv_reg(r);
}

/* One loop over the reduced axes (bit k of axes set for axis k; the
 * others at fixed[]), folding each element of the call's argument into
 * acc (and idx for arg*); center: PASS_SQDEV's mean; sp: only the
 * selected elements. */
/* The element of the call's argument at ix[0..nd) (of np.dot, the
 * product of its two), as the reduction's loops read it. */
static asc__irval element(lstate *ls, const asc__ast_expr *call,
                          asc__ewctx *sub, asc__irval *ix, int nd, int adt) {
  asc__ewctx *outer = ls->ew;
  asc__irval x;
  sub->idx = ix;
  sub->nd = nd;
  ls->ew = sub;
  if (call->u.call.builtin->id == ASC_BI_NP_DOT) {
    asc__irval a = conv(ls, asc__lower_expr(ls, call->u.call.rargs[0]), adt);
    asc__irval b = conv(ls, asc__lower_expr(ls, call->u.call.rargs[1]), adt);
    x = op2(ls, ASC_IR_MUL, adt, a, b);
  } else {
    x = asc__lower_expr(ls, call->u.call.rargs[0]);
  }
  ls->ew = outer;
  return x;
}

/* What PASS_SUM and PASS_SQDEV add for element x. */
static asc__irval sum_term(lstate *ls, asc__irval x, int kind, int adt,
                           asc__irval center) {
  if (kind == PASS_SQDEV) {
    asc__irval d = op2(ls, ASC_IR_SUB, adt, conv(ls, x, adt), center);
    return op2(ls, ASC_IR_MUL, adt, d, d);
  }
  return conv(ls, x, adt);
}

/* A float sum in numpy's pairwise order (lower_pairwise.c) over the
 * trailing axes lo .. nd - 1 in C order, the axes before lo at ix[]. */
typedef struct pwsum {
  const asc__ast_expr *call;
  asc__ewctx *sub;
  const asc__irval *shape;
  asc__irval ix[ASC_MAX_DIMS];
  int nd, lo, kind, adt;
  asc__irval center;
} pwsum;

/* Row row of the trailing axes: its indices along axes lo .. nd - 2 */
static asc__irval pw_term(lstate *ls, asc__irval row, asc__irval col,
                          void *arg) {
  pwsum *p = arg;
  asc__irval ix[ASC_MAX_DIMS];
  memcpy(ix, p->ix, sizeof ix);
  ix[p->nd - 1] = col;
  for (int k = p->nd - 2; k >= p->lo; k--) {
    if (k == p->lo) {
      ix[k] = row;
      break;
    }
    ix[k] = op2(ls, ASC_IR_MOD, ascInt64, row, p->shape[k]);
    row = op2(ls, ASC_IR_FLOORDIV, ascInt64, row, p->shape[k]);
  }
  return sum_term(ls, element(ls, p->call, p->sub, ix, p->nd, p->adt),
                  p->kind, p->adt, p->center);
}

/* Whether the kernel's float sums take numpy's pairwise order at all:
 * not under fastmath `reassoc` (the C order, which the compiler may
 * reorder, is faster still) nor ASC_PAIRWISE=0. */
static bool pairwise_mode(const lstate *ls) {
  return !ls->c->opts.code.corder_sums &&
         (ls->f->fastmath & ASC_FASTMATH_REASSOC) == 0;
}

/* Whether a sum's pass adds in numpy's pairwise order, and from which
 * axis on: a float64 sum (or of smaller floats, in float64) of all the
 * elements, or along the last axes (the last one, or a tuple of the last
 * few), which numpy adds pairwise as one inner loop, in pairwise_mode;
 * not np.dot (numpy's BLAS has its own order).  A selection
 * of all elements is summed pairwise too (pass: numpy sums the selected
 * elements). */
static bool pairwise(lstate *ls, const asc__ast_expr *call, int kind,
                     int adt, int nd, unsigned axes, const selpred *sp,
                     int *lo) {
  unsigned all = nd >= 1 ? (1u << nd) - 1 : 0, a = axes & all;
  if ((kind != PASS_SUM && kind != PASS_SQDEV) || adt != ascFloat64 ||
      (sp != NULL && axes != ASC_LOWER_ALL_AXES) ||
      call->u.call.builtin->id == ASC_BI_NP_DOT || !pairwise_mode(ls) ||
      nd < 1 || a == 0)
    return false;
  /* a run of axes ending with the last: all bits from the lowest set */
  *lo = __builtin_ctz(a);
  return a == (all & ~((1u << *lo) - 1));
}

/* Whether a whole-array reduction call sums in pairwise order
 * (pairwise() says the same of its passes). */
static bool sums_pairwise(lstate *ls, const asc__ast_expr *call) {
  asc__builtin_id id = call->u.call.builtin->id;
  int edt = ty(call->u.call.rargs[0])->dtype;
  return (id == ASC_BI_NP_SUM || id == ASC_BI_NP_MEAN ||
          id == ASC_BI_NP_VAR || id == ASC_BI_NP_STD) &&
         asc__dt_is_float(edt) && !asc__dt_is_complex(edt) &&
         asc__dt_is_float(ty(call)->dtype) &&
         !asc__dt_is_complex(ty(call)->dtype) && pairwise_mode(ls);
}

/* May a sum split itself over the team?  Not inside a loop: the
 * parallelize pass may run the loop's iterations in parallel, which a
 * parallel loop inside it would stop. */
static bool whole_statement(const lstate *ls) {
  return ls->loop_depth == 0 && ls->pfors == 0 && !ls->in_pbody;
}

/* The term of element f of a sum of stored terms: t[f]. */
static asc__irval stored_term(lstate *ls, asc__irval row, asc__irval f,
                              void *arg) {
  (void)row;
  return asc__lower_load_off(ls, *(const int32_t *)arg, f);
}

/* Does float v beat a, the extreme so far: strictly past it, or a NaN
 * where a is none (so the first NaN wins, and of equal extremes the
 * first) */
static asc__irval beats(lstate *ls, int adt, bool lt, asc__irval v,
                        asc__irval a) {
  /* one instruction after another, in this order whatever the C
   * compiler's order of arguments */
  asc__irval past = op2(ls, lt ? ASC_IR_LT : ASC_IR_GT, adt, v, a);
  asc__irval vnan = op2(ls, ASC_IR_NE, adt, v, v);
  asc__irval anum = op2(ls, ASC_IR_EQ, adt, a, a);
  return op2(ls, ASC_IR_OR, ascBool, past,
             op2(ls, ASC_IR_AND, ascBool, vnan, anum));
}

static void pass(lstate *ls, const asc__ast_expr *call, asc__ewctx *sub,
                 const asc__irval *shape, int nd, const asc__irval *fixed,
                 unsigned axes, int kind, int32_t acc, int32_t idx,
                 asc__irval center, selpred *sp) {
  asc__irval ix[ASC_MAX_DIMS], x;
  asc__irblock *save = ls->cur;
  int adt = ls->f->regs[acc].ty.dtype, axis;
  int32_t count = -1;
  bool chunks = sp != NULL && nd == 1 && axes == ASC_LOWER_ALL_AXES;
  if (sp != NULL && pairwise(ls, call, kind, adt, nd, axes, sp, &axis)) {
    /* numpy sums the array of the selected elements: their terms are
     * stored in order as the mask's loops find them (the one pass over
     * the mask), then summed as that array */
    asc__irval total = i64(1);
    int32_t t, n = newreg(ls, ascInt64, "sel.k");
    for (int k = 0; k < nd; k++)
      total = mul(ls, total, shape[k]);
    t = asc__lower_alloc_array(ls, adt, 1, &total);
    mov(ls, n, i64(0));
    pass(ls, call, sub, shape, nd, fixed, axes,
         kind == PASS_SUM ? PASS_KEEP_SUM : PASS_KEEP_SQDEV, t, n, center,
         sp);
    mov(ls, acc, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
                     asc__lower_pairwise(ls, adt, asc__irv_reg(n), i64(0),
                                         whole_statement(ls), stored_term,
                                         &t)));
    free_array(ls, t);
    return;
  }
  if (pairwise(ls, call, kind, adt, nd, axes, sp, &axis)) {
    pwsum p;
    bool par = fixed == NULL && whole_statement(ls);
    asc__irval n = shape[axis];
    memset(&p, 0, sizeof p);
    p.call = call;
    p.sub = sub;
    p.shape = shape;
    for (int k = 0; k < nd; k++)
      p.ix[k] = fixed != NULL && k < axis ? fixed[k] : i64(0);
    p.nd = nd;
    p.lo = axis;
    p.kind = kind;
    p.adt = adt;
    p.center = center;
    for (int k = axis + 1; k < nd; k++)
      n = mul(ls, n, shape[k]);
    mov(ls, acc, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
                     asc__lower_pairwise(ls, adt, n,
                                         axis < nd - 1 ? shape[nd - 1]
                                                       : i64(0),
                                         par, pw_term, &p)));
    return;
  }
  if (idx >= 0 && kind != PASS_KEEP_SUM && kind != PASS_KEEP_SQDEV) {
    count = newreg(ls, ascInt64, "red.i");
    mov(ls, count, i64(0));
  }
  for (int k = 0; k < nd && !chunks; k++) {
    if (!(axes >> k & 1u)) {
      ix[k] = fixed[k];
      continue;
    }
    {
      int32_t r = newreg(ls, ascInt64, "red");
      asc__irins *f = emit(ls, ASC_IR_FOR, r, 3);
      f->args[0] = i64(0);
      f->args[1] = shape[k];
      f->args[2] = i64(1);
      ls->cur = &f->body[0];
      ix[k] = asc__irv_reg(r);
    }
  }
  if (chunks) {
    select_chunks(ls, sp, shape[0], ix);
  } else if (sp != NULL) {
    asc__irval b = asc__lower_mask_at(ls, sp->m, &sp->mew, ix, nd);
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = b;
    i->note = "select reduce: one predicated loop over the mask, no "
              "gathered array";
    ls->cur = &i->body[0];
    if (sp->n >= 0)
      mov(ls, sp->n, add(ls, asc__irv_reg(sp->n), i64(1)));
  }
  x = element(ls, call, sub, ix, nd, adt);
  switch (kind) {
  case PASS_SUM:
  case PASS_SQDEV:
    mov(ls, acc, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
                     sum_term(ls, x, kind, adt, center)));
    break;
  case PASS_PROD:
    mov(ls, acc, op2(ls, ASC_IR_MUL, adt, asc__irv_reg(acc), conv(ls, x, adt)));
    break;
  case PASS_KEEP_SUM:
  case PASS_KEEP_SQDEV: /* acc[idx++] = the term */
    asc__lower_store_at(ls, acc, asc__irv_reg(idx),
                        sum_term(ls, x, kind == PASS_KEEP_SUM ? PASS_SUM
                                                              : PASS_SQDEV,
                                 adt, center));
    mov(ls, idx, add(ls, asc__irv_reg(idx), i64(1)));
    break;
  case PASS_CSQDEV: { /* |x - mean|^2 of a complex x, summed in float64 */
    asc__irval d = op2(ls, ASC_IR_SUB, ascComplex128,
                       conv(ls, x, ascComplex128), center);
    asc__irval re = cpart(ls, d, false), im = cpart(ls, d, true);
    mov(ls, acc, op2(ls, ASC_IR_ADD, adt, asc__irv_reg(acc),
                     op2(ls, ASC_IR_ADD, adt, op2(ls, ASC_IR_MUL, adt, re, re),
                         op2(ls, ASC_IR_MUL, adt, im, im))));
    break;
  }
  case PASS_ANY:
    mov(ls, acc, op2(ls, ASC_IR_OR, ascBool, asc__irv_reg(acc), truthy(ls, x)));
    break;
  case PASS_ALL:
    mov(ls, acc, op2(ls, ASC_IR_AND, ascBool, asc__irv_reg(acc), truthy(ls, x)));
    break;
  default: { /* min, max, argmin, argmax: a NaN wins, the first one */
    bool lt = kind == PASS_MIN || kind == PASS_ARGMIN;
    asc__irval a = asc__irv_reg(acc), better;
    x = conv(ls, x, adt);
    if (idx < 0 && (adt == ascFloat32 || adt == ascFloat64)) {
      /* one instruction, which redlanes can spread over vector lanes */
      mov(ls, acc, op2(ls, lt ? ASC_IR_PMIN : ASC_IR_PMAX, adt, a, x));
      break;
    }
    better = asc__dt_is_float(adt)
                 ? beats(ls, adt, lt, x, a)
                 : op2(ls, lt ? ASC_IR_LT : ASC_IR_GT, adt, x, a);
    if (idx >= 0) {
      asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
      asc__irblock *here = ls->cur;
      i->args[0] = better;
      ls->cur = &i->body[0];
      mov(ls, acc, x);
      mov(ls, idx, asc__irv_reg(count));
      ls->cur = here;
      mov(ls, count, add(ls, asc__irv_reg(count), i64(1)));
    } else {
      mov(ls, acc, sel(ls, better, x, a));
    }
    break;
  }
  }
  ls->cur = save;
}

/* min, max, argmin and argmax of n elements raise numpy's ValueError
 * when n is 0.  Along an axis, numpy raises when that axis is empty even
 * if the result has no element, so the check comes before the statement's
 * loops, not inside them. */
void asc__lower_empty_check(lstate *ls, asc__builtin_id id, asc__irval n) {
  bool arg_ = id == ASC_BI_NP_ARGMIN || id == ASC_BI_NP_ARGMAX;
  bool lt = id == ASC_BI_NP_MIN || id == ASC_BI_NP_ARGMIN;
  if (!arg_ && !lt && id != ASC_BI_NP_MAX)
    return;
  asc__lower_raise_if(ls, op2(ls, ASC_IR_EQ, ascInt64, n, i64(0)),
                      ASC_KEXC_VALUE_ERROR,
                      arg_ ? (lt ? "attempt to get argmin of an empty sequence"
                                 : "attempt to get argmax of an empty sequence")
                           : (lt ? "zero-size array to reduction operation "
                                   "minimum which has no identity"
                                 : "zero-size array to reduction operation "
                                   "maximum which has no identity"),
                      i64(0), i64(0));
}

/* argmin / argmax of floats along one axis, in one pass over it: blocks
 * of EXTREME_BLOCK elements, each block's extreme with pmin / pmax (which
 * redlanes spreads over vector lanes), and the first block whose extreme
 * beats every block before it (strictly, or a NaN where there was none)
 * holds the first extreme element; a search in that block finds it (or,
 * when the extreme is a NaN, the first NaN).  The same index as one pass
 * keeping the first extreme element, whose compare-and-select of the
 * value and the index is one chain the C compiler cannot vectorise; and
 * the array is read once (an earlier form found the extreme, then
 * searched the whole axis again from its start). */
enum { EXTREME_BLOCK = 1024, SEARCH_BLOCK = 32 };
/* a whole 1-D array from EXTREME_PAR_MIN elements: chunks of at least
 * EXTREME_CHUNK (whole blocks) on the team, at most EXTREME_CHUNKS */
enum { EXTREME_PAR_MIN = 1 << 17, EXTREME_CHUNK = 1 << 16,
       EXTREME_CHUNKS = 64 };

/* Whether the element at ix is extreme a: equal to it, or a NaN when a
 * is one (the first NaN wins) */
static asc__irval holds(lstate *ls, const asc__ast_expr *call,
                        asc__ewctx *sub, asc__irval *ix, int nd, int adt,
                        asc__irval a) {
  asc__irval x = conv(ls, element(ls, call, sub, ix, nd, adt), adt);
  return op2(ls, ASC_IR_OR, ascBool, op2(ls, ASC_IR_EQ, adt, x, a),
             op2(ls, ASC_IR_AND, ascBool, op2(ls, ASC_IR_NE, adt, a, a),
                 op2(ls, ASC_IR_NE, adt, x, x)));
}

/* The blocks of [lo, hi) along axis ax (ix[] the other indices): best
 * (an extreme, or the identity) and from (a block start) become the
 * first block's extreme that beats those before it and that block's
 * start, when one beats what they held. */
static void scan_blocks(lstate *ls, const asc__ast_expr *call,
                        asc__ewctx *sub, asc__irval *ix, int nd, int ax,
                        bool lt, int adt, asc__irval lo, asc__irval hi,
                        int32_t best, int32_t from) {
  int32_t bm = newreg(ls, adt, "red.bm");
  asc__irblock *save = ls->cur, *blk;
  asc__irins *f, *i;
  asc__irval b, w, x;
  f = open_for(ls, ASC_IR_FOR, lo, hi, i64(EXTREME_BLOCK), "red.blk");
  f->note = "reduce: each block's extreme (vector lanes), the first block "
            "that beats those before it, then the first index holding it "
            "in that block";
  b = asc__irv_reg(f->dst);
  blk = ls->cur;
  w = op2(ls, ASC_IR_MIN, ascInt64, op2(ls, ASC_IR_SUB, ascInt64, hi, b),
          i64(EXTREME_BLOCK));
  mov(ls, bm, extreme(adt, lt));
  f = open_for(ls, ASC_IR_FOR, i64(0), w, i64(1), "red.j");
  ix[ax] = add(ls, b, asc__irv_reg(f->dst));
  x = conv(ls, element(ls, call, sub, ix, nd, adt), adt);
  mov(ls, bm, op2(ls, lt ? ASC_IR_PMIN : ASC_IR_PMAX, adt,
                  asc__irv_reg(bm), x));
  ls->cur = blk;
  x = beats(ls, adt, lt, asc__irv_reg(bm), asc__irv_reg(best));
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = x;
  ls->cur = &i->body[0];
  mov(ls, best, asc__irv_reg(bm));
  mov(ls, from, b);
  ls->cur = save;
}

/* A whole 1-D array of at least EXTREME_PAR_MIN elements: chunks of it
 * on the team (at most EXTREME_CHUNKS), each chunk's best block found
 * as scan_blocks does, then the chunks' results taken in order, so that
 * the first of equal extremes still wins. */
static void scan_chunks(lstate *ls, const asc__ast_expr *call,
                        asc__ewctx *sub, asc__irval *ix, bool lt, int adt,
                        asc__irval n, int32_t acc, int32_t from) {
  asc__irins *va = asc__ir_local_array(ls->c, ls->f, adt, EXTREME_CHUNKS,
                                       "red.cv", ls->line);
  asc__irins *ba = asc__ir_local_array(ls->c, ls->f, ascInt64,
                                       EXTREME_CHUNKS, "red.cb", ls->line);
  asc__irval len, nch, c, better;
  asc__irblock *save = ls->cur;
  asc__lchunks ch;
  int32_t best = newreg(ls, adt, "red.cbest");
  int32_t bfrom = newreg(ls, ascInt64, "red.cfrom");
  int32_t v = newreg(ls, adt, "red.v");
  asc__irins *i;
  asc__ir_append(ls->cur, va);
  asc__ir_append(ls->cur, ba);
  /* chunks of at least EXTREME_CHUNK elements, whole blocks each */
  len = op2(ls, ASC_IR_FLOORDIV, ascInt64,
            add(ls, n, i64(EXTREME_CHUNKS - 1)), i64(EXTREME_CHUNKS));
  len = op2(ls, ASC_IR_MAX, ascInt64, i64(EXTREME_CHUNK),
            op2(ls, ASC_IR_AND, ascInt64,
                add(ls, len, i64(EXTREME_BLOCK - 1)), i64(-EXTREME_BLOCK)));
  nch = op2(ls, ASC_IR_FLOORDIV, ascInt64,
            op2(ls, ASC_IR_SUB, ascInt64, add(ls, n, len), i64(1)), len);
  asc__lower_chunks_open(ls, &ch, nch, len, n, "red.c");
  mov(ls, best, extreme(adt, lt));
  mov(ls, bfrom, ch.lo);
  scan_blocks(ls, call, sub, ix, 1, 0, lt, adt, ch.lo, ch.hi, best, bfrom);
  asc__lower_store_at(ls, va->dst, ch.c, asc__irv_reg(best));
  asc__lower_store_at(ls, ba->dst, ch.c, asc__irv_reg(bfrom));
  asc__lower_chunks_close(ls, &ch);
  c = asc__irv_reg(open_for(ls, ASC_IR_FOR, i64(0), nch, i64(1),
                            "red.k")->dst);
  mov(ls, v, asc__lower_load_off(ls, va->dst, c));
  better = beats(ls, adt, lt, asc__irv_reg(v), asc__irv_reg(acc));
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = better;
  ls->cur = &i->body[0];
  mov(ls, acc, asc__irv_reg(v));
  mov(ls, from, asc__lower_load_off(ls, ba->dst, c));
  ls->cur = save;
}

static asc__irval first_extreme(lstate *ls, const asc__ast_expr *call,
                                asc__ewctx *sub, const asc__irval *shape,
                                int nd, const asc__irval *fixed, int ax,
                                bool lt, int32_t acc, int rt) {
  int adt = ls->f->regs[acc].ty.dtype;
  int32_t idx = newreg(ls, ascInt64, "red.idx");
  int32_t from = newreg(ls, ascInt64, "red.from");
  int32_t any = newreg(ls, ascInt64, "red.any");
  int32_t piece = newreg(ls, ascInt64, "red.piece");
  asc__irval ix[ASC_MAX_DIMS], a = asc__irv_reg(acc), b, w;
  asc__irblock *save, *blk;
  asc__irins *f;
  mov(ls, from, i64(0));
  for (int q = 0; q < nd; q++)
    ix[q] = fixed != NULL && q != ax ? fixed[q] : i64(0);
  save = ls->cur;
  if (nd == 1 && fixed == NULL && whole_statement(ls)) {
    /* long arrays on the team, short ones here */
    asc__irval big = op2(ls, ASC_IR_GE, ascInt64, shape[0],
                         i64(EXTREME_PAR_MIN));
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = big;
    ls->cur = &i->body[0];
    scan_chunks(ls, call, sub, ix, lt, adt, shape[0], acc, from);
    ls->cur = &i->body[1];
    scan_blocks(ls, call, sub, ix, nd, ax, lt, adt, i64(0), shape[ax], acc,
                from);
    ls->cur = save;
  } else {
    scan_blocks(ls, call, sub, ix, nd, ax, lt, adt, i64(0), shape[ax], acc,
                from);
  }
  /* the block found: its pieces of SEARCH_BLOCK elements, each tested
   * whole until one holds the extreme (a count of its hits, not a bool's
   * or: gcc vectorises an integer sum), then that piece (or the block's
   * last elements) one element at a time */
  mov(ls, idx, i64(0));
  w = op2(ls, ASC_IR_AND, ascInt64,
          op2(ls, ASC_IR_MIN, ascInt64,
              op2(ls, ASC_IR_SUB, ascInt64, shape[ax], asc__irv_reg(from)),
              i64(EXTREME_BLOCK)),
          i64(-SEARCH_BLOCK));
  w = add(ls, asc__irv_reg(from), w);
  mov(ls, piece, w);
  f = open_for(ls, ASC_IR_FOR, asc__irv_reg(from), w, i64(SEARCH_BLOCK),
               "red.pc");
  b = asc__irv_reg(f->dst);
  mov(ls, any, i64(0));
  blk = ls->cur;
  f = open_for(ls, ASC_IR_FOR, i64(0), i64(SEARCH_BLOCK), i64(1), "red.q");
  ix[ax] = add(ls, b, asc__irv_reg(f->dst));
  mov(ls, any, add(ls, asc__irv_reg(any),
                   conv(ls, holds(ls, call, sub, ix, nd, adt, a), ascInt64)));
  ls->cur = blk;
  leave_if(ls, op2(ls, ASC_IR_NE, ascInt64, asc__irv_reg(any), i64(0)),
           piece, b);
  ls->cur = save;
  f = open_for(ls, ASC_IR_FOR, asc__irv_reg(piece), shape[ax], i64(1), "red");
  ix[ax] = asc__irv_reg(f->dst);
  leave_if(ls, holds(ls, call, sub, ix, nd, adt, a), idx, ix[ax]);
  ls->cur = save;
  return conv(ls, asc__irv_reg(idx), rt);
}

/* asc__lower_reduce_loops(), of the selected elements only when sp is
 * not NULL: then n is their count, known after the first pass. */
static asc__irval reduce_loops(lstate *ls, const asc__ast_expr *call,
                               asc__ewctx *sub, const asc__irval *shape,
                               int nd, const asc__irval *fixed,
                               unsigned axes, selpred *sp) {
  asc__builtin_id id = call->u.call.builtin->id;
  asc__type *ct = ty(call);
  int rt = ct->dtype, edt, adt;
  asc__irval n = i64(1);
  int32_t acc, idx = -1;
  const asc__ast_expr *arg = call->u.call.rargs[0];
  edt = ty(arg)->dtype;
  for (int k = 0; k < nd && sp == NULL; k++)
    if (axes >> k & 1u)
      n = mul(ls, n, shape[k]);
  if (sp != NULL) {
    sp->n = newreg(ls, ascInt64, "sel.n");
    mov(ls, sp->n, i64(0));
    n = asc__irv_reg(sp->n);
  }
  switch (id) {
  case ASC_BI_NP_SUM:
  case ASC_BI_NP_PROD:
  case ASC_BI_NP_MEAN:
  case ASC_BI_NP_VAR:
  case ASC_BI_NP_STD:
  case ASC_BI_NP_DOT:
    /* small floats are summed in float64 (docs/arrays.md); the mean of
     * complex values for var/std in complex128 */
    adt = (id == ASC_BI_NP_VAR || id == ASC_BI_NP_STD) &&
                  asc__dt_is_complex(edt)
              ? ascComplex128
          : is_small_float(rt) ? ascFloat64
                               : rt;
    acc = newreg(ls, adt, "red.acc");
    mov(ls, acc, id == ASC_BI_NP_PROD ? conv(ls, i64(1), adt)
                                      : conv(ls, i64(0), adt));
    pass(ls, call, sub, shape, nd, fixed, axes,
         id == ASC_BI_NP_PROD ? PASS_PROD : PASS_SUM, acc, -1, i64(0), sp);
    if (sp != NULL)
      sp->n = -1; /* counted */
    if (id == ASC_BI_NP_SUM || id == ASC_BI_NP_PROD || id == ASC_BI_NP_DOT)
      return conv(ls, asc__irv_reg(acc), rt);
    {
      asc__irval nf = conv(ls, n, adt);
      asc__irval mean = op2(ls, ASC_IR_DIV, adt, asc__irv_reg(acc), nf);
      asc__irval ddof, var;
      int32_t ss;
      if (id == ASC_BI_NP_MEAN)
        return conv(ls, mean, rt);
      if (asc__dt_is_complex(adt)) { /* var of complex values is real */
        adt = ascFloat64;
        ss = newreg(ls, adt, "red.ss");
        mov(ls, ss, conv(ls, i64(0), adt));
        pass(ls, call, sub, shape, nd, fixed, axes, PASS_CSQDEV, ss, -1,
             mean, sp);
      } else {
        ss = newreg(ls, adt, "red.ss");
        mov(ls, ss, conv(ls, i64(0), adt));
        pass(ls, call, sub, shape, nd, fixed, axes, PASS_SQDEV, ss, -1, mean,
             sp);
      }
      ddof = call->u.call.nrargs > 4 && call->u.call.rargs[4] != NULL &&
                     call->u.call.rargs[4]->kind != ASC_EXPR_NONE
                 ? conv(ls, asc__lower_expr(ls, call->u.call.rargs[4]),
                        ascInt64)
                 : i64(0);
      /* numpy divides by max(n - ddof, 0): inf (or nan) for ddof >= n */
      var = op2(ls, ASC_IR_DIV, adt, asc__irv_reg(ss),
                conv(ls, op2(ls, ASC_IR_MAX, ascInt64,
                             op2(ls, ASC_IR_SUB, ascInt64, n, ddof), i64(0)),
                     adt));
      if (id == ASC_BI_NP_STD)
        var = call1(ls, ASC_INTR_SQRT, adt, var);
      return conv(ls, var, rt);
    }
  case ASC_BI_NP_ANY:
  case ASC_BI_NP_ALL:
    acc = newreg(ls, ascBool, "red.acc");
    mov(ls, acc, asc__irv_int(ascBool, id == ASC_BI_NP_ALL));
    pass(ls, call, sub, shape, nd, fixed, axes,
         id == ASC_BI_NP_ANY ? PASS_ANY : PASS_ALL, acc, -1, i64(0), sp);
    return asc__irv_reg(acc);
  default: {
    bool arg_ = id == ASC_BI_NP_ARGMIN || id == ASC_BI_NP_ARGMAX;
    bool lt = id == ASC_BI_NP_MIN || id == ASC_BI_NP_ARGMIN;
    if (axes == ASC_LOWER_ALL_AXES && sp == NULL) /* along an axis:
                                 * checked once, before the statement */
      asc__lower_empty_check(ls, id, n);
    adt = edt;
    acc = newreg(ls, adt, "red.acc");
    mov(ls, acc, extreme(adt, lt));
    if (arg_ && sp == NULL && (adt == ascFloat32 || adt == ascFloat64) &&
        nd >= 1 &&
        __builtin_popcount(nd == 1 ? 1u : axes & ((1u << nd) - 1)) == 1)
      return first_extreme(ls, call, sub, shape, nd, fixed,
                           nd == 1 ? 0 : __builtin_ctz(axes), lt, acc, rt);
    if (arg_) {
      idx = newreg(ls, ascInt64, "red.idx");
      mov(ls, idx, i64(0));
    }
    pass(ls, call, sub, shape, nd, fixed, axes,
         id == ASC_BI_NP_MIN      ? PASS_MIN
         : id == ASC_BI_NP_MAX    ? PASS_MAX
         : id == ASC_BI_NP_ARGMIN ? PASS_ARGMIN
                                  : PASS_ARGMAX,
         acc, idx, i64(0), sp);
    if (sp != NULL) /* no effect ran: the count is known after the loop */
      asc__lower_empty_check(ls, id, n);
    return conv(ls, asc__irv_reg(arg_ ? idx : acc), rt);
  }
  }
}

asc__irval asc__lower_reduce_loops(lstate *ls, const asc__ast_expr *call,
                                   asc__ewctx *sub, const asc__irval *shape,
                                   int nd, const asc__irval *fixed,
                                   unsigned axes) {
  return reduce_loops(ls, call, sub, shape, nd, fixed, axes, NULL);
}

/* A reduction of all the elements of a selection (np.sum(x[m]),
 * x[m].mean(), s.max() with s = x[m] fused, lower_fuse.c): one loop over
 * the mask that folds the elements where it is true, in C order, and
 * counts them.  numpy makes the selection first (a pass counting the
 * mask, one filling the new array, one reducing it); the elements, their
 * order and the operations on each are the same, so the result is bit
 * for bit that of the selection made first (ASC_FUSE=0). */
static bool select_reduce(lstate *ls, const asc__ast_expr *e,
                          asc__irval *out) {
  const asc__ast_expr *a = e->u.call.rargs[0], *f, *m;
  asc__ewctx sub;
  asc__irval ms[ASC_MAX_DIMS];
  selpred sp;
  if (ls->c->opts.code.nofuse || is_tensor(e) ||
      e->u.call.builtin->id == ASC_BI_NP_DOT ||
      (e->u.call.nrargs > 1 && e->u.call.rargs[1] != NULL &&
       e->u.call.rargs[1]->kind != ASC_EXPR_NONE))
    return false;
  while ((f = asc__lower_fused(ls, a)) != NULL)
    a = f;
  if (!asc__lower_select_form(a, &m) || !asc__lower_select_fuses(ls, m))
    return false;
  memset(&sp, 0, sizeof sp);
  sp.m = m;
  asc__lower_select_operands(ls, a, m, &sub, &sp.mew, ms);
  *out = reduce_loops(ls, e, &sub, ms, ty(m)->ndim, NULL, ASC_LOWER_ALL_AXES,
                      &sp);
  return true;
}

bool asc__lower_select_fuses(const lstate *ls, const asc__ast_expr *m) {
  return ls->c->opts.code.selfuse == 2 ||
         (ls->c->opts.code.selfuse == 1 && ty(m)->ndim == 1);
}

static asc__irval reduce(lstate *ls, const asc__ast_expr *e);

/* x, or the array x is a view of, a name's (x[1:], x[::2].T[3]) */
static bool in_place_base(const asc__ast_expr *x) {
  while (x->kind == ASC_EXPR_SUBSCRIPT)
    x = x->u.sub.value;
  return x->kind == ASC_EXPR_NAME && is_tensor(x);
}

/* An operand the BLAS reads in place: a name's array or a view of one
 * (a slice, a row, x.T), not an expression to be made first. */
static bool in_place(lstate *ls, const asc__ast_expr *x) {
  if (!is_tensor(x) || ty(x)->ndim != 1 || asc__lower_is_fancy(x))
    return false;
  if (x->kind == ASC_EXPR_NAME)
    return true;
  return x->kind == ASC_EXPR_SUBSCRIPT && asc__lower_is_view(ls, x) &&
         in_place_base(x->u.sub.value);
}

/* Below this many elements a dot product of vectors is the reduction's
 * loop: a library call costs more than such a sum (docs/arrays.md). */
#define DOT_BLAS_MIN 1024

/* Is np.dot(x, y) (result e) the library's kind: float32 or float64
 * vectors of the result's dtype, read in place, outside a whole-array
 * statement's loops? */
static bool blas_pair(lstate *ls, const asc__ast_expr *e,
                      const asc__ast_expr *x, const asc__ast_expr *y) {
  int dt = scalar_dt(ls, e);
  return ls->ew == NULL && (dt == ascFloat32 || dt == ascFloat64) &&
         (int)ty(x)->dtype == dt && (int)ty(y)->dtype == dt &&
         in_place(ls, x) && in_place(ls, y);
}

/* np.dot(x, y) and x @ y of two float32 or float64 vectors, outside a
 * whole-array statement's loops: a library call, as numpy's (its order
 * is the library's; docs/optimizer.md, "The order rule"): the runtime's
 * asc_krt.gemm_ab with m = n = 1 into a one-element local array.  Short
 * vectors, and a call that does nothing (ASC_BLAS=0), run the loop of the
 * reduction (exact, in C order). */
static bool dot_blas(lstate *ls, const asc__ast_expr *e, asc__irval *out) {
  const asc__ast_expr *x = e->u.call.rargs[0], *y = e->u.call.rargs[1];
  int dt = scalar_dt(ls, e);
  asc__lview A, B;
  asc__irval loops;
  asc__irins *buf, *g, *st;
  asc__irblock *save;
  if (!blas_pair(ls, e, x, y))
    return false;
  for (int k = 0; k < ls->dots.n; k++)
    if (ls->dots.x[k] == x && ls->dots.y[k] == y) {
      /* computed with the statement's other dot products */
      *out = asc__lower_load_off(ls, ls->dots.buf, i64(k));
      return true;
    }
  asc__lower_view(ls, x, &A);
  asc__lower_view(ls, y, &B);
  asc__lower_raise_if(ls, op2(ls, ASC_IR_NE, ascInt64, A.shape[0], B.shape[0]),
                      ASC_KEXC_VALUE_ERROR,
                      "shapes ({},) and ({},) not aligned", A.shape[0],
                      B.shape[0]);
  buf = asc__ir_local_array(ls->c, ls->f, dt, 1, "dot", ls->line);
  asc__ir_append(ls->cur, buf);
  g = asc__lower_gemm(ls, buf->dst, i64(0), i64(0), i64(1), &A, &B,
                      asc__irv_float(ascFloat64, 1.0),
                      asc__irv_float(ascFloat64, 0.0),
                      op2(ls, ASC_IR_GE, ascInt64, A.shape[0],
                          i64(DOT_BLAS_MIN)));
  g->note = asc__arena_printf(ls->c,
                              "blas: the dot product at line %d is one "
                              "library call (m = n = 1) from %d elements; "
                              "the reduction's loop runs below that or "
                              "when the call does nothing",
                              e->loc.line, DOT_BLAS_MIN);
  save = asc__lower_when_failed(ls, g);
  loops = conv(ls, reduce(ls, e), dt);
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(buf->dst);
  st->args[1] = i64(0);
  st->args[2] = loops;
  ls->cur = save;
  *out = asc__lower_load_off(ls, buf->dst, i64(0));
  return true;
}

/* np.linalg.norm(x) of a float64 vector: the resolver made it
 * np.sqrt(np.sum(x * x)) with one node x on both sides (a user's x * x
 * has two).  numpy computes it as x.dot(x); so does this, through
 * dot_blas, as a call of np.dot(x, x). */
static const asc__ast_expr *norm_vector(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *m = e->u.call.rargs[0];
  for (int k = 1; k < e->u.call.nrargs; k++)
    if (e->u.call.rargs[k] != NULL && e->u.call.rargs[k]->kind != ASC_EXPR_NONE)
      return NULL;
  if (m->kind != ASC_EXPR_BINARY || m->u.binary.op != ASC_BIN_MUL ||
      m->u.binary.lhs != m->u.binary.rhs || scalar_dt(ls, e) != ascFloat64 ||
      !is_tensor(m->u.binary.lhs) || ty(m->u.binary.lhs)->dtype != ascFloat64)
    return NULL;
  return m->u.binary.lhs;
}

static const asc__ast_expr *norm_dot(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *x = norm_vector(ls, e);
  return x != NULL ? asc__lower_dot_call(ls, e, x, x) : NULL;
}

/* ------------------------------------------ a statement's dot products */

/* May e be evaluated before the rest of its statement without changing
 * what the statement computes: names, numbers, views, arithmetic and
 * calls of pure numerical builtins, nothing that writes an array or
 * runs a helper. */
static bool harmless(const asc__ast_expr *e) {
  if (e == NULL)
    return true;
  if (e->comp != NULL)
    return false;
  switch (e->kind) {
  case ASC_EXPR_NAME:
  case ASC_EXPR_INT:
  case ASC_EXPR_FLOAT:
  case ASC_EXPR_BOOL:
  case ASC_EXPR_NONE:
    return true;
  case ASC_EXPR_ATTR:
    return harmless(e->u.attr.value);
  case ASC_EXPR_SUBSCRIPT:
    return harmless(e->u.sub.value) && harmless(e->u.sub.index);
  case ASC_EXPR_SLICE:
    return harmless(e->u.slice.lower) && harmless(e->u.slice.upper) &&
           harmless(e->u.slice.step);
  case ASC_EXPR_TUPLE:
    for (int k = 0; k < e->u.tuple.n; k++)
      if (!harmless(e->u.tuple.elts[k]))
        return false;
    return true;
  case ASC_EXPR_UNARY:
    return harmless(e->u.unary.operand);
  case ASC_EXPR_BINARY:
    return harmless(e->u.binary.lhs) && harmless(e->u.binary.rhs);
  case ASC_EXPR_CALL: {
    int out = -1; /* where an `out` argument goes: a write */
    const asc__ast_expr *o;
    if (e->u.call.builtin == NULL)
      return false;
    switch (e->u.call.builtin->id) {
    case ASC_BI_NP_DOT:
      out = 2;
      break;
    case ASC_BI_NP_SUM:
      out = 3;
      break;
    case ASC_BI_SQRT:
    case ASC_BI_EXP:
    case ASC_BI_LOG:
    case ASC_BI_ABS:
    case ASC_BI_FABS:
      break;
    default:
      return false;
    }
    o = out >= 0 && out < e->u.call.nrargs ? e->u.call.rargs[out] : NULL;
    if (o != NULL && o->kind != ASC_EXPR_NONE)
      return false;
    for (int k = 0; k < e->u.call.nrargs; k++)
      if (!harmless(e->u.call.rargs[k]))
        return false;
    return true;
  }
  default:
    return false;
  }
}

bool asc__lower_harmless(const asc__ast_expr *v) { return harmless(v); }

/* The library-kind dot products of e, where e evaluates them whatever
 * the values: arithmetic, tuples and the arguments of calls (not the
 * branches of `a if c else b`, nor `and` / `or`). */
static void find_dots(lstate *ls, const asc__ast_expr *e, asc__ldots *d) {
  const asc__ast_expr *x;
  if (e == NULL || d->n < 0)
    return;
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (int k = 0; k < e->u.tuple.n; k++)
      find_dots(ls, e->u.tuple.elts[k], d);
    return;
  case ASC_EXPR_UNARY:
    find_dots(ls, e->u.unary.operand, d);
    return;
  case ASC_EXPR_BINARY:
    if (e->u.binary.op == ASC_BIN_MATMUL && !is_tensor(e) &&
        blas_pair(ls, e, e->u.binary.lhs, e->u.binary.rhs)) {
      d->x[d->n] = e->u.binary.lhs;
      d->y[d->n] = e->u.binary.rhs;
      d->at[d->n] = e;
      break;
    }
    find_dots(ls, e->u.binary.lhs, d);
    find_dots(ls, e->u.binary.rhs, d);
    return;
  case ASC_EXPR_CALL:
    if (e->u.call.builtin == NULL)
      return;
    if (e->u.call.builtin->id == ASC_BI_NP_DOT && !is_tensor(e) &&
        e->u.call.nrargs >= 2 &&
        (e->u.call.nrargs == 2 || e->u.call.rargs[2] == NULL ||
         e->u.call.rargs[2]->kind == ASC_EXPR_NONE) &&
        blas_pair(ls, e, e->u.call.rargs[0], e->u.call.rargs[1])) {
      d->x[d->n] = e->u.call.rargs[0];
      d->y[d->n] = e->u.call.rargs[1];
      d->at[d->n] = e;
      break;
    }
    if (e->u.call.builtin->id == ASC_BI_NP_SUM && !is_tensor(e) &&
        (x = norm_vector(ls, e)) != NULL && blas_pair(ls, e, x, x)) {
      d->x[d->n] = d->y[d->n] = x;
      d->at[d->n] = e;
      break;
    }
    for (int k = 0; k < e->u.call.nrargs; k++)
      find_dots(ls, e->u.call.rargs[k], d);
    return;
  default:
    return;
  }
  /* one more pair; past the call's limit, none */
  if (++d->n == (int)ASC_ARRAY_SIZE(d->x))
    d->n = -1;
}

void asc__lower_dots_begin(lstate *ls, const asc__ast_expr *v) {
  asc__ldots d;
  asc__lview ops[2 * ASC_ARRAY_SIZE(d.x) + 1];
  asc__irval n0, ok;
  asc__irins *buf, *call, *when;
  int32_t st;
  int dt;
  if (ls->ew != NULL || !harmless(v))
    return;
  d.n = 0;
  find_dots(ls, v, &d);
  if (d.n < 2)
    return;
  dt = ty(d.x[0])->dtype;
  for (int k = 1; k < d.n; k++)
    if ((int)ty(d.x[k])->dtype != dt)
      return;
  for (int k = 0; k < d.n; k++) {
    asc__lower_view(ls, d.x[k], &ops[2 * k]);
    asc__lower_view(ls, d.y[k], &ops[2 * k + 1]);
    asc__lower_raise_if(
        ls, op2(ls, ASC_IR_NE, ascInt64, ops[2 * k].shape[0],
                ops[2 * k + 1].shape[0]),
        ASC_KEXC_VALUE_ERROR, "shapes ({},) and ({},) not aligned",
        ops[2 * k].shape[0], ops[2 * k + 1].shape[0]);
  }
  buf = asc__ir_local_array(ls->c, ls->f, dt, d.n, "dots", ls->line);
  asc__ir_append(ls->cur, buf);
  asc__lower_whole_tensor(ls, buf->dst, &ops[2 * d.n]);
  /* one call when the vectors are as long as the library's dots (each
   * pair's own call, or its loop, otherwise) */
  n0 = ops[0].shape[0];
  ok = op2(ls, ASC_IR_GE, ascInt64, n0, i64(DOT_BLAS_MIN));
  for (int k = 1; k < d.n; k++)
    ok = op2(ls, ASC_IR_AND, ascBool, ok,
             op2(ls, ASC_IR_EQ, ascInt64, ops[2 * k].shape[0], n0));
  st = newreg(ls, ascInt32, "dots");
  mov(ls, st, asc__irv_int(ascInt32, 1));
  when = emit(ls, ASC_IR_IF, -1, 1);
  when->args[0] = ok;
  when->note = asc__arena_printf(
      ls->c, "blas: the %d dot products of the statement at line %d are one "
             "pass over their vectors (asc_krt.linalg dots) from %d "
             "elements; each is its own call or loop below that, or when "
             "the call does nothing", d.n, ls->line, DOT_BLAS_MIN);
  {
    asc__irblock *save = ls->cur;
    ls->cur = &when->body[0];
    call = emit(ls, ASC_IR_LINALG, st, 3 + 4 * (2 * d.n + 1));
    call->aux = ASC_KLINALG_DOTS;
    call->args[0] = i64(d.n);
    call->args[1] = n0;
    call->args[2] = i64(0);
    for (int j = 0; j < 2 * d.n + 1; j++) {
      call->args[3 + 4 * j] = asc__irv_reg(ops[j].t);
      call->args[4 + 4 * j] = ops[j].off;
      call->args[5 + 4 * j] = ops[j].stride[0];
      call->args[6 + 4 * j] = i64(0);
    }
    ls->cur = save;
  }
  /* the call did nothing: each product as the statement alone makes it */
  ok = op2(ls, ASC_IR_NE, ascInt32, asc__irv_reg(st),
           asc__irv_int(ascInt32, 0));
  when = emit(ls, ASC_IR_IF, -1, 1);
  when->args[0] = ok;
  {
    asc__irblock *save = ls->cur;
    ls->cur = &when->body[0];
    for (int k = 0; k < d.n; k++) {
      asc__irval r;
      if (!dot_blas(ls, asc__lower_dot_call(ls, d.at[k], d.x[k], d.y[k]), &r))
        ASC_CHECK(ls->c, false);
      asc__lower_store_at(ls, buf->dst, i64(k), r);
    }
    ls->cur = save;
  }
  d.buf = buf->dst;
  ls->dots = d;
}

asc__irval asc__lower_reduce(lstate *ls, const asc__ast_expr *e) {
  asc__irval v;
  const asc__ast_expr *d;
  if (e->u.call.builtin->id == ASC_BI_NP_DOT && !is_tensor(e) &&
      e->u.call.nrargs >= 2 && dot_blas(ls, e, &v))
    return v;
  if (e->u.call.builtin->id == ASC_BI_NP_SUM && !is_tensor(e) &&
      (d = norm_dot(ls, e)) != NULL && dot_blas(ls, d, &v))
    return v;
  return reduce(ls, e);
}

static asc__irval reduce(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *arg = e->u.call.rargs[0];
  asc__builtin_id id = e->u.call.builtin->id;
  asc__ewctx sub, *outer = ls->ew;
  asc__irval shape[ASC_MAX_DIMS], r;
  bool aligned = false;
  int nd;
  if (!is_tensor(arg)) { /* np.sum(3.0): of one element */
    asc__irval v = asc__lower_expr(ls, arg);
    int rt = scalar_dt(ls, e);
    switch (id) {
    case ASC_BI_NP_ANY:
    case ASC_BI_NP_ALL:
      return truthy(ls, v);
    case ASC_BI_NP_ARGMIN:
    case ASC_BI_NP_ARGMAX:
      return asc__irv_int(rt, 0);
    case ASC_BI_NP_VAR:
    case ASC_BI_NP_STD: {
      /* numpy's var of one element: (v - v)**2 / max(1 - ddof, 0): 0,
       * nan for a nan or infinite v, and nan (0/0) for ddof >= 1 */
      int adt = asc__dt_is_complex(scalar_dt(ls, arg)) ? ascComplex128
                                                        : ascFloat64;
      asc__irval x = conv(ls, v, adt), d = op2(ls, ASC_IR_SUB, adt, x, x);
      asc__irval ss, var;
      asc__irval ddof =
          e->u.call.nrargs > 4 && e->u.call.rargs[4] != NULL &&
                  e->u.call.rargs[4]->kind != ASC_EXPR_NONE
              ? conv(ls, asc__lower_expr(ls, e->u.call.rargs[4]), ascInt64)
              : i64(0);
      if (adt == ascComplex128) { /* |d|**2, real */
        asc__irval re = cpart(ls, d, false), im = cpart(ls, d, true);
        ss = op2(ls, ASC_IR_ADD, ascFloat64,
                 op2(ls, ASC_IR_MUL, ascFloat64, re, re),
                 op2(ls, ASC_IR_MUL, ascFloat64, im, im));
      } else {
        ss = op2(ls, ASC_IR_MUL, ascFloat64, d, d);
      }
      var = op2(ls, ASC_IR_DIV, ascFloat64, ss,
                conv(ls, op2(ls, ASC_IR_MAX, ascInt64,
                             op2(ls, ASC_IR_SUB, ascInt64, i64(1), ddof),
                             i64(0)),
                     ascFloat64));
      if (id == ASC_BI_NP_STD) {
        int32_t q = newreg(ls, ascFloat64, NULL);
        asc__irins *i = emit(ls, ASC_IR_CALL, q, 1);
        i->aux = ASC_INTR_SQRT;
        i->args[0] = var;
        var = asc__irv_reg(q);
      }
      return conv(ls, var, rt);
    }
    default:
      return conv(ls, v, rt);
    }
  }
  ls->ew = NULL;
  if (select_reduce(ls, e, &r)) {
    ls->ew = outer;
    return r;
  }
  memset(&sub, 0, sizeof sub);
  asc__lower_collect(ls, &sub, arg);
  nd = ty(arg)->ndim;
  if (id == ASC_BI_NP_DOT) {
    asc__lower_collect(ls, &sub, e->u.call.rargs[1]);
    aligned = sub.nops == 2 && sub.ops[0].red == NULL &&
              sub.ops[1].red == NULL && sub.ops[0].v.nd == 1 &&
              sub.ops[1].v.nd == 1;
    if (aligned)
      asc__lower_raise_if(ls,
                          op2(ls, ASC_IR_NE, ascInt64, sub.ops[0].v.shape[0],
                              sub.ops[1].v.shape[0]), ASC_KEXC_VALUE_ERROR,
                          "shapes ({},) and ({},) not aligned",
                          sub.ops[0].v.shape[0], sub.ops[1].v.shape[0]);
  }
  if (aligned) { /* numpy's dot does not broadcast: each vector keeps its
                  * own stride */
    shape[0] = sub.ops[0].v.shape[0];
  } else if (sums_pairwise(ls, e)) {
    /* twice, as a whole-array statement's nest (lower_array.c): with the
     * operands' own strides when none broadcasts (unit strides the C
     * compiler vectorises), else with stride 0 on size-1 axes */
    asc__ewctx own = sub;
    asc__irval same;
    own.ops = asc__arena_alloc(ls->c, sizeof *own.ops * (size_t)sub.nops);
    memcpy(own.ops, sub.ops, sizeof *own.ops * (size_t)sub.nops);
    asc__lower_broadcast_ops(ls, &sub, shape, nd);
    same = asc__lower_own_strides(ls, &own, shape, nd);
    if (same.kind != ASC_IRV_CONST) {
      asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
      asc__irblock *save = ls->cur;
      int32_t res;
      i->args[0] = same;
      i->note = "reduce: with the operands' own strides when none "
                "broadcasts";
      ls->cur = &i->body[0];
      r = asc__lower_reduce_loops(ls, e, &own, shape, nd, NULL,
                                  ASC_LOWER_ALL_AXES);
      res = newreg(ls, asc__irv_dtype(ls->f, r), "red.v");
      mov(ls, res, r);
      ls->cur = &i->body[1];
      mov(ls, res, asc__lower_reduce_loops(ls, e, &sub, shape, nd, NULL,
                                           ASC_LOWER_ALL_AXES));
      ls->cur = save;
      ls->ew = outer;
      return asc__irv_reg(res);
    }
  } else {
    asc__lower_broadcast_ops(ls, &sub, shape, nd);
  }
  r = asc__lower_reduce_loops(ls, e, &sub, shape, nd, NULL,
                              ASC_LOWER_ALL_AXES);
  ls->ew = outer;
  return r;
}
