/*
 * Unroll-and-jam (register blocking) of the loop around an interchanged
 * nest (docs/optimizer.md): a `for` or `pfor` I over rows whose body is
 * pure row set-up followed by the tile loop X that the interchange pass
 * made,
 *
 *   for %i = lo, hi, 1 { <pure, per row>  for %j0 ... { <per tile>
 *                                             for ... { for ... { S(i) } } } }
 *
 * becomes, for R rows at a time,
 *
 *   for %ib = 0, ceil((hi - lo) / R), 1 {
 *     %i0 = lo + ib * R
 *     if i0 + R <= hi {
 *       <set-up for i0, i0+1, ...>
 *       for %j0 ... { for ... { for ... { S(i0) S(i0+1) ... S(i0+R-1) } } }
 *     } else {
 *       for %i = i0, hi, 1 { the original body }
 *     }
 *   }
 *
 * so that each value the innermost loop loads for one row (b[p, j] of the
 * matmul) serves R rows.  Every statement of X's loops is copied once per
 * row, with the row's own registers and its own local arrays; each row's
 * statements keep their order, so every element keeps its order of
 * operations.  Legal when rows do not meet in memory: each store's index on
 * some axis is `c * i + (symbols)` (c != 0, nothing else of the nest), so
 * two rows never store the same element, and no tensor stored in I is
 * loaded in I.  X's own set-up must not depend on the row, nor the bounds
 * of any loop in it.  This pass runs after parallelize, so the row loop may
 * already be a pfor (without reductions): its iterations become blocks of R
 * rows.
 *
 * Each decision is a note on I: `; unrolljam: ...`.  ASC_UNROLLJAM=0
 * leaves the pass out (part of the kernel cache key).
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/passes/depend.h"

enum { ROWS = 4 };

typedef struct jctx {
  asc__cctx *c;
  asc__irfunc *f;
  int32_t nregs0;
  asc__regtab *ren;  /* the row map: 1 + the row's register; 0 keeps */
} jctx;

static void add_note(jctx *x, asc__irins *i, const char *text) {
  asc__nest_note(x->c, i, "unrolljam", text);
}

static bool pure_ok(jctx *x, const asc__irins *i) {
  return asc__nest_pure(x->f, i);
}

static bool uses_any(const asc__irins *i, const asc__regtab *row) {
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG &&
        asc__regtab_get(row, i->args[k].reg))
      return true;
  return false;
}

/* Checks a loop of X (and its one nested loop); marks its definitions. */
static const char *check_loop(jctx *x, const asc__irins *L,
                              const asc__regtab *row, int depth) {
  if (L->op != ASC_IR_FOR || L->unroll)
    return "a loop in the tile is not a plain for";
  if (uses_any(L, row))
    return "the bounds of a loop in the tile depend on the row";
  for (const asc__irins *i = L->body[0].first; i; i = i->next) {
    if (i->op == ASC_IR_FOR && depth == 0) {
      const char *why = check_loop(x, i, row, 1);
      if (why != NULL)
        return why;
      continue;
    }
    if (asc__ir_nregions(i) > 0)
      return "a region in the tile";
    if (i->op != ASC_IR_LOAD && i->op != ASC_IR_STORE && !pure_ok(x, i))
      return asc__arena_printf(x->c, "a %s in the tile",
                               asc__irop_name(i->op));
    if (i->dst >= 0 && x->f->regs[i->dst].ndefs != 1)
      return asc__arena_printf(x->c, "%%%s is assigned more than once",
                               x->f->regs[i->dst].name);
  }
  return NULL;
}

typedef struct access_scan {
  asc__regtab stored;   /* per register: stored to in I */
  asc__regtab loaded;
} access_scan;

static void scan_acc(asc__irins *i, void *ctx) {
  access_scan *a = ctx;
  if (i->op == ASC_IR_STORE)
    ++*asc__regtab_ref(&a->stored, i->args[0].reg);
  if (i->op == ASC_IR_LOAD)
    ++*asc__regtab_ref(&a->loaded, i->args[0].reg);
}

/* Rows never meet in memory (see the top). */
static const char *rows_apart(jctx *x, asc__irins *I, asc__irins *X) {
  access_scan a;
  asc__depnest d;
  asc__irins *Ls[1];
  const int32_t *ts;
  int32_t nt;
  asc__regtab_init(x->c, &a.stored, 0);
  asc__regtab_init(x->c, &a.loaded, 0);
  asc__ir_walk(&I->body[0], scan_acc, &a);
  Ls[0] = I;
  asc__dep_init(&d, x->c, x->f, Ls, 1);
  ts = asc__regtab_keys(&a.stored, &nt);
  for (int32_t k = 0; k < nt; k++)
    if (asc__regtab_get(&a.loaded, ts[k]) > 0 && x->f->regs[ts[k]].param)
      return asc__arena_printf(x->c, "%%%s is stored and loaded in the loop",
                               x->f->regs[ts[k]].name);
  (void)X;
  return NULL;
}

typedef struct store_check {
  jctx *x;
  asc__depnest *d;
  const char *why;
} store_check;

/* A store's offset has an axis `c * i + symbols` (the row's own axis).
 * Registers of the inner loops are not expanded by d (their inductions are
 * not levels of it), so only axes free of them qualify. */
static void check_store(asc__irins *i, void *ctx) {
  store_check *s = ctx;
  asc__affine off, ax[ASC_IR_MAXDIMS];
  int32_t t;
  bool ok = false;
  if (i->op != ASC_IR_STORE || s->why != NULL)
    return;
  t = i->args[0].reg;
  if (!s->x->f->regs[t].param)
    return;   /* a local array of the tile: per row after the jam */
  s->why = asc__arena_printf(s->x->c, "the store to %%%s at line %d may "
                             "reach another row's elements",
                             s->x->f->regs[t].name, (int)i->line);
  if (!asc__dep_affine(s->d, i->args[1], &off) ||
      !asc__dep_split(s->d, t, &off, ax))
    return;
  for (int k = 0; k < s->x->f->regs[t].ty.ndim && !ok; k++) {
    bool has_i = false, other = false;
    for (int q = 0; q < ax[k].n; q++) {
      if (ax[k].t[q].iv == 0 && ax[k].t[q].ns == 0)
        has_i = true;
      else if (ax[k].t[q].iv >= 0)
        other = true;
    }
    ok = has_i && !other;
  }
  if (ok)
    s->why = NULL;
}

/* Copies of b's instructions appended to out under the row map; loops are
 * copied with their bodies (their inductions kept), definitions renamed. */
static void copy_row(jctx *x, asc__irblock *out, const asc__irblock *b) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    asc__irins *n = asc__ir_clone(x->c, i);
    n->note = NULL;
    for (int32_t k = 0; k < n->nargs; k++)
      if (n->args[k].kind == ASC_IRV_REG && n->args[k].reg < x->nregs0 &&
          asc__regtab_get(x->ren, n->args[k].reg) > 0)
        n->args[k].reg = (int32_t)asc__regtab_get(x->ren, n->args[k].reg) - 1;
    if (n->dst >= 0 && i->op != ASC_IR_FOR) {
      n->dst = asc__ir_reg(x->c, x->f, x->f->regs[i->dst].ty,
                           x->f->regs[i->dst].name);
      asc__regtab_set(x->ren, i->dst, n->dst + 1);
    }
    asc__ir_append(out, n);
  }
}

/* The jammed body of a loop of X: rows r = 0..R-1 of its statements. */
static void jam_loop(jctx *x, asc__irins *L, asc__regtab *maps) {
  asc__irblock body = {NULL, NULL};
  asc__irins *inner = NULL;
  for (asc__irins *i = L->body[0].first; i; i = i->next)
    if (i->op == ASC_IR_FOR)
      inner = i;
  if (inner != NULL) {
    /* straight-line parts around the inner loop are per row too */
    asc__irblock pre = {NULL, NULL}, post = {NULL, NULL};
    asc__irins *k = L->body[0].first;
    for (int r = 0; r < ROWS; r++) {
      asc__irblock part = {NULL, NULL};
      x->ren = &maps[r];
      for (asc__irins *i = k; i != inner; i = i->next) {
        asc__irblock one = {i, i};
        asc__irins *save = i->next;
        i->next = NULL;
        copy_row(x, &part, &one);
        i->next = save;
      }
      asc__ir_splice(&pre, NULL, &part);
    }
    jam_loop(x, inner, maps);
    for (int r = 0; r < ROWS; r++) {
      asc__irblock part = {NULL, NULL};
      x->ren = &maps[r];
      for (asc__irins *i = inner->next; i; i = i->next) {
        asc__irblock one = {i, i};
        asc__irins *save = i->next;
        i->next = NULL;
        copy_row(x, &part, &one);
        i->next = save;
      }
      asc__ir_splice(&post, NULL, &part);
    }
    asc__ir_remove(&L->body[0], inner);
    asc__ir_splice(&body, NULL, &pre);
    asc__ir_append(&body, inner);
    asc__ir_splice(&body, NULL, &post);
    L->body[0] = body;
    return;
  }
  for (int r = 0; r < ROWS; r++) {
    x->ren = &maps[r];
    copy_row(x, &body, &L->body[0]);
  }
  L->body[0] = body;
}

static void collect_loops(asc__irins *L, asc__irins **Ls, int *n) {
  if (*n < ASC_DEP_MAXL)
    Ls[(*n)++] = L;
  for (asc__irins *i = L->body[0].first; i; i = i->next)
    if (i->op == ASC_IR_FOR)
      collect_loops(i, Ls, n);
}

static int32_t bin(jctx *x, asc__irblock *b, int op, asc__irval p,
                   asc__irval q, int32_t line) {
  return asc__ir_bin(x->c, x->f, b, op, ascInt64, p, q, line);
}

static bool try_loop(jctx *x, asc__irblock *b, asc__irins *I) {
  asc__irins *X = I->body[0].last, *nI, *br, *rest;
  asc__regtab row, maps[ROWS];
  const char *why = NULL;
  int32_t nr = x->f->nregs, i = I->dst;
  int32_t span, nb, i0, end, full, line = I->line;
  asc__irval R = asc__irv_int(ascInt64, ROWS);
  asc__irblock jam = {NULL, NULL};
  asc__depnest d;
  asc__irins *Ls[ASC_DEP_MAXL];
  int nls = 1;
  store_check sc;

  if ((I->op != ASC_IR_FOR && I->op != ASC_IR_PFOR) || I->unroll ||
      I->wave != 0 ||
      I->nred > 0 || X == NULL || X->op != ASC_IR_FOR || X->note == NULL ||
      strstr(X->note, "interchange: loop") == NULL ||
      strstr(X->note, "moved inside") == NULL)
    return false;
  if (I->args[2].kind != ASC_IRV_CONST || I->args[2].c.i != 1 ||
      x->f->regs[i].ty.dtype != ascInt64)
    why = "the row loop's step is not 1";
  asc__regtab_init(x->c, &row, 0);
  asc__regtab_set(&row, i, 1);
  for (asc__irins *q = I->body[0].first; q != X && why == NULL; q = q->next) {
    if (!pure_ok(x, q) || x->f->regs[q->dst].ndefs != 1)
      why = asc__arena_printf(x->c, "a %s before the tile loop",
                              asc__irop_name(q->op));
    else
      asc__regtab_set(&row, q->dst, 1);
  }
  if (why == NULL && (uses_any(X, &row) || x->f->may_alias))
    why = x->f->may_alias ? "the kernel's tensors may alias"
                          : "the tile loop's bounds depend on the row";
  for (asc__irins *q = X->body[0].first; q && why == NULL; q = q->next) {
    if (q->op == ASC_IR_FOR) {
      why = check_loop(x, q, &row, 0);
    } else if (q->op == ASC_IR_LOCAL_ARRAY) {
      continue;
    } else if (!pure_ok(x, q) || uses_any(q, &row) ||
               x->f->regs[q->dst].ndefs != 1) {
      why = "the tile's set-up depends on the row";
    }
  }
  if (why == NULL)
    why = rows_apart(x, I, X);
  if (why == NULL) {
    Ls[0] = I;
    collect_loops(X, Ls, &nls);
    if (nls == ASC_DEP_MAXL)
      why = "the tile holds too many loops";
    asc__dep_init(&d, x->c, x->f, Ls, nls);
    sc.x = x;
    sc.d = &d;
    sc.why = NULL;
    if (why == NULL) {
      asc__ir_walk(&X->body[0], check_store, &sc);
      why = sc.why;
    }
  }
  if (why != NULL) {
    add_note(x, I, asc__arena_printf(x->c, "loop %%%s keeps one row at a "
                                     "time: %s", x->f->regs[i].name, why));
    return false;
  }
  add_note(x, I, asc__arena_printf(
                     x->c, "loop %%%s runs %d rows at a time through the tile "
                     "loop %%%s (each load of the innermost loop serves %d "
                     "rows); each row keeps its order of operations",
                     x->f->regs[i].name, ROWS, x->f->regs[X->dst].name, ROWS));

  /* row maps: i -> i0 + r, the set-up and X's registers -> per-row copies */
  nI = asc__ir_ins(x->c, I->op, asc__ir_reg(x->c, x->f, asc__irt_scalar(ascInt64),
                                            "ib"), 3, line);
  nI->note = I->note;
  span = bin(x, &jam, ASC_IR_SUB, I->args[1], I->args[0], line);
  span = bin(x, &jam, ASC_IR_MAX, asc__irv_reg(span), asc__irv_int(ascInt64, 0),
             line);
  nb = bin(x, &jam, ASC_IR_ADD, asc__irv_reg(span),
           asc__irv_int(ascInt64, ROWS - 1), line);
  nb = bin(x, &jam, ASC_IR_FLOORDIV, asc__irv_reg(nb), R, line);
  nI->args[0] = asc__irv_int(ascInt64, 0);
  nI->args[1] = asc__irv_reg(nb);
  nI->args[2] = asc__irv_int(ascInt64, 1);
  i0 = bin(x, &nI->body[0], ASC_IR_MUL, asc__irv_reg(nI->dst), R, line);
  i0 = bin(x, &nI->body[0], ASC_IR_ADD, I->args[0], asc__irv_reg(i0), line);
  end = bin(x, &nI->body[0], ASC_IR_ADD, asc__irv_reg(i0), R, line);
  full = asc__ir_bin(x->c, x->f, &nI->body[0], ASC_IR_LE, ascBool,
                     asc__irv_reg(end), I->args[1], line);
  br = asc__ir_ins(x->c, ASC_IR_IF, -1, 1, line);
  br->args[0] = asc__irv_reg(full);

  x->nregs0 = nr;
  for (int r = 0; r < ROWS; r++) {
    asc__regtab_init(x->c, &maps[r], 0);
    asc__regtab_set(&maps[r], i,
                    bin(x, &br->body[0], ASC_IR_ADD, asc__irv_reg(i0),
                        asc__irv_int(ascInt64, r), line) + 1);
    x->ren = &maps[r];
    for (asc__irins *q = I->body[0].first; q != X; q = q->next) {
      asc__irblock one = {q, q};
      asc__irins *save = q->next;
      q->next = NULL;
      copy_row(x, &br->body[0], &one);
      q->next = save;
    }
  }
  /* the remainder rows run a copy of the original body */
  rest = asc__ir_ins(x->c, ASC_IR_FOR, i, 3, line);
  rest->args[0] = asc__irv_reg(i0);
  rest->args[1] = I->args[1];
  rest->args[2] = asc__irv_int(ascInt64, 1);
  {
    asc__regtab fm;
    asc__irblock copy, top = {NULL, NULL};
    asc__regtab_init(x->c, &fm, 0);
    copy = asc__ir_clone_fresh(x->c, x->f, I->body[0].first, NULL, &fm);
    asc__ir_splice(&rest->body[0], NULL, &copy);
    /* X's straight-line set-up stays once; local arrays once per row */
    asc__ir_remove(&I->body[0], X);
    while (X->body[0].first != NULL) {
      asc__irins *q = X->body[0].first;
      asc__ir_remove(&X->body[0], q);
      if (q->op == ASC_IR_LOCAL_ARRAY) {
        for (int r = 0; r < ROWS; r++) {
          asc__irins *n = asc__ir_clone(x->c, q);
          n->dst = asc__ir_reg(x->c, x->f, x->f->regs[q->dst].ty,
                               x->f->regs[q->dst].name);
          asc__regtab_set(&maps[r], q->dst, n->dst + 1);
          asc__ir_append(&top, n);
        }
      } else if (q->op == ASC_IR_FOR) {
        jam_loop(x, q, maps);
        asc__ir_append(&top, q);
      } else {
        asc__ir_append(&top, q);
      }
    }
    X->body[0] = top;
    asc__ir_append(&br->body[0], X);
  }
  asc__ir_append(&br->body[1], rest);
  asc__ir_append(&nI->body[0], br);
  asc__ir_splice(b, I, &jam);
  asc__ir_insert_before(b, I, nI);
  asc__ir_remove(b, I);
  return true;
}

static bool try_any(void *ctx, asc__irblock *b, asc__irins *i) {
  jctx *x = ctx;
  return try_loop(x, b, i);
}

void asc__pass_unrolljam(asc__cctx *c, asc__irfunc *f) {
  jctx x;
  x.c = c;
  x.f = f;
  x.nregs0 = f->nregs;
  x.ren = NULL;
  asc__nest_walk(c, f, "unrolljam", try_any, &x);
}
