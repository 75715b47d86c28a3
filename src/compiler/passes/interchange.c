/*
 * Loop interchange with scalar expansion (docs/optimizer.md): a serial
 * loop J whose body computes one value per iteration with an inner
 * reduction loop P,
 *
 *   for %j = lo, hi, 1 {
 *     <prefix: pure>   %s = mov init
 *     for %p = a, b, c { <loads, pure>  %t = add %s, %x   %s = mov %t }
 *     <post: pure, loads, stores; reads %s>
 *   }
 *
 * becomes, over tiles of the options' acc_tile_bytes (2 KiB for a 32 KiB
 * L1) of the accumulator type,
 *
 *   for %j0 = lo, hi, T {
 *     %w = min (hi - j0), T
 *     %acc = local_array [T]
 *     for %jj = 0, %w, 1 { <prefix>  store %acc, %jj, init }
 *     for %p = a, b, c {
 *       for %jj = 0, %w, 1 simd { <prefix> <P body>
 *                                 %o = load %acc, %jj  %t = add %o, %x
 *                                 store %acc, %jj, %t }
 *     }
 *     for %jj = 0, %w, 1 { <prefix>  %v = load %acc, %jj  <post, %s -> %v> }
 *   }
 *
 * so that the innermost loop walks the unit-stride axis of what P reads
 * (b[p, j] in the i-j-p matmul).  P may also be a nest of loops P0 > P1 >
 * ... (the ic-kh-kw window of a convolution): the update is in the
 * innermost one, which gets the tile loop, and the set-up between the
 * loops (row offsets) must not depend on j, so it stays where it is.  Exactness: every element's accumulator
 * starts from the same init and takes the same operations in the same p
 * order; only the interleaving between elements changes.  That is legal
 * when no store of the post part reaches a load of the prefix or of P at
 * another j (depend.c gives the distance vectors; an unknown one refuses),
 * P's bounds do not depend on j, and tensors cannot alias (may_alias
 * refuses).  The cost model: some load of P is unit-stride in j and not in
 * p, and no load unit-stride in p would lose it.
 *
 * Every decision is a note on J: `; interchange: ...`.  ASC_INTERCHANGE=0
 * leaves the pass out (part of the kernel cache key).
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/passes/depend.h"

/* jam(): iterations of the reduction loop per pass over the tile, and the
 * largest tile body (instructions) it copies */
enum { JAM = 4, JAM_BODY = 24 };

/* A rewritten nest: its tile loop, the loop Pin of P that holds the tile's
 * loop, and the block Pin is in (jam's candidates). */
typedef struct icand {
  asc__irins *J0, *Pin;
  asc__irblock *pb;
} icand;

typedef struct ictx {
  asc__cctx *c;
  asc__irfunc *f;
  asc__regtab ren;  /* clone map: 1 + the new register; 0 keeps */
  icand *cand;
  int ncand, capcand;
} ictx;

static void add_note(ictx *x, asc__irins *i, const char *text) {
  asc__nest_note(x->c, i, "interchange", text);
}

static const char *rname(ictx *x, int32_t r) {
  return x->f->regs[r].name;
}

/* The loop-exit and effect-free instructions a part may hold. */
static bool pure_ok(ictx *x, const asc__irins *i) {
  return asc__nest_pure(x->f, i);
}

static bool invariant(const asc__depnest *d, asc__irval v) {
  return v.kind == ASC_IRV_CONST ||
         (asc__dep_nin(d, v.reg) == 0 && v.reg != d->L[0]->dst);
}

/* Elements of the accumulator tile of s (docs/optimizer.md, "Tile sizes") */
static int64_t tile_elems(const ictx *x, int32_t s) {
  return (int64_t)x->c->opts.code.acc_tile_bytes /
         asc__dt_bytes(x->f->regs[s].ty.dtype);
}

static asc__irins *new_for(ictx *x, const char *hint, asc__irval lo,
                           asc__irval hi, asc__irval step, int32_t line) {
  asc__irins *L = asc__ir_ins(x->c, ASC_IR_FOR,
                              asc__ir_reg(x->c, x->f,
                                          asc__irt_scalar(ascInt64), hint),
                              3, line);
  L->args[0] = lo;
  L->args[1] = hi;
  L->args[2] = step;
  return L;
}

static void rename_args(ictx *x, asc__irins *i) {
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG &&
        asc__regtab_get(&x->ren, i->args[k].reg) > 0)
      i->args[k].reg = (int32_t)asc__regtab_get(&x->ren, i->args[k].reg) - 1;
}

/* Appends to b a copy of prefix (pure instructions) with fresh registers,
 * j mapped to jreg; skips the definitions of s unless keep_s. */
static void clone_prefix(ictx *x, asc__irblock *b, const asc__irblock *pre,
                         int32_t s, bool keep_s, int32_t *s_copy) {
  for (const asc__irins *i = pre->first; i; i = i->next) {
    asc__irins *n;
    if (i->dst == s && !keep_s)
      continue;
    n = asc__ir_clone(x->c, i);
    n->note = NULL;
    rename_args(x, n);
    n->dst = asc__ir_reg(x->c, x->f, x->f->regs[i->dst].ty,
                         x->f->regs[i->dst].name);
    asc__regtab_set(&x->ren, i->dst, n->dst + 1);
    if (i->dst == s)
      *s_copy = n->dst;
    asc__ir_append(b, n);
  }
}

/* jreg = j0 + jj appended to b; j maps to it. */
static void map_j(ictx *x, asc__irblock *b, int32_t j, int32_t j0, int32_t jj,
                  int32_t line) {
  int32_t r = asc__ir_bin(x->c, x->f, b, ASC_IR_ADD, ascInt64,
                          asc__irv_reg(j0), asc__irv_reg(jj), line);
  asc__regtab_set(&x->ren, j, r + 1);
}

/* The update of s in P's body: `%s = op %s, %x` or `%t = op %s, %x` +
 * `%s = mov %t` (%t used once).  Returns the op instruction, *mv the mov
 * (or NULL). */
static asc__irins *find_update(ictx *x, const asc__irblock *pb, int32_t s,
                               asc__irins **mv, const char **why) {
  asc__irins *op = NULL;
  int ndef = 0, nuse = 0;
  *mv = NULL;
  for (asc__irins *i = pb->first; i; i = i->next) {
    for (int32_t k = 0; k < i->nargs; k++)
      if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == s)
        nuse++;
    if (i->dst == s)
      ndef++;
  }
  if (ndef != 1 || nuse != 1) {
    *why = asc__arena_printf(x->c, "%%%s is not updated once per iteration "
                             "of the inner loop", rname(x, s));
    return NULL;
  }
  for (asc__irins *i = pb->first; i; i = i->next) {
    bool reads = false;
    for (int32_t k = 0; k < i->nargs; k++)
      if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == s)
        reads = true;
    if (!reads)
      continue;
    if (i->op != ASC_IR_ADD && i->op != ASC_IR_SUB && i->op != ASC_IR_MUL &&
        i->op != ASC_IR_MIN && i->op != ASC_IR_MAX)
      break;
    if (i->dst == s) {
      op = i;
    } else if (x->f->regs[i->dst].nuses == 1 && i->next != NULL &&
               i->next->op == ASC_IR_MOV && i->next->dst == s &&
               i->next->args[0].kind == ASC_IRV_REG &&
               i->next->args[0].reg == i->dst) {
      op = i;
      *mv = i->next;
    }
    break;
  }
  if (op == NULL)
    *why = asc__arena_printf(x->c, "%%%s is not a running add, sub, mul, "
                             "min or max", rname(x, s));
  return op;
}

/* The register carried by the nest P0 > ... > Pin: defined in Pin's body
 * and before P0 in J's. */
static int32_t carried(const asc__irins *J, const asc__irins *P0,
                       const asc__irins *Pin) {
  for (const asc__irins *i = Pin->body[0].first; i; i = i->next)
    if (i->dst >= 0)
      for (const asc__irins *q = J->body[0].first; q != P0; q = q->next)
        if (q->dst == i->dst)
          return i->dst;
  return -1;
}

/* The set-up instructions between the loops of nest Ps[0..np) (each
 * loop's body but the next loop): pure, defined once, and free of j and of
 * J's prefix, so they can stay where they are; NULL when so. */
static const char *between_ok(ictx *x, asc__irins *J, asc__irins *const *Ps,
                              int np, int32_t s) {
  for (int l = 0; l + 1 < np; l++)
    for (const asc__irins *i = Ps[l]->body[0].first; i; i = i->next) {
      if (i == Ps[l + 1])
        continue;
      if (!pure_ok(x, i))
        return asc__arena_printf(x->c, "a %s in loop %%%s",
                                 asc__irop_name(i->op), rname(x, Ps[l]->dst));
      if (x->f->regs[i->dst].ndefs != 1)
        return asc__arena_printf(x->c, "%%%s is assigned more than once",
                                 rname(x, i->dst));
      for (int32_t k = 0; k < i->nargs; k++) {
        int32_t r;
        if (i->args[k].kind != ASC_IRV_REG)
          continue;
        r = i->args[k].reg;
        if (r == J->dst || r == s)
          return asc__arena_printf(x->c, "the set-up in loop %%%s uses "
                                   "%%%s", rname(x, Ps[l]->dst), rname(x, r));
        for (const asc__irins *q = J->body[0].first; q != Ps[0]; q = q->next)
          if (q->dst == r)
            return asc__arena_printf(x->c, "the set-up in loop %%%s uses "
                                     "%%%s", rname(x, Ps[l]->dst),
                                     rname(x, r));
      }
    }
  return NULL;
}

static const char *legal(ictx *x, asc__irins *J, asc__irins *const *Ps,
                         int np, int32_t s, asc__depnest *d) {
  asc__irins *P = Ps[0], *Pin = Ps[np - 1];
  const asc__irblock *pb = &Pin->body[0];
  const char *why;
  asc__regtab inj, inp, defp;
  const int32_t *in;
  int32_t nin;
  if (x->f->may_alias)
    return "the kernel's tensors may alias";
  for (int l = 0; l < np; l++)
    for (int k = 0; k < 3; k++)
      if (!invariant(d, Ps[l]->args[k]))
        return asc__arena_printf(x->c, "the bounds of loop %%%s change with "
                                 "%%%s", rname(x, Ps[l]->dst),
                                 rname(x, J->dst));
  if ((why = between_ok(x, J, Ps, np, s)) != NULL)
    return why;
  asc__regtab_init(x->c, &inj, 0);
  asc__regtab_init(x->c, &inp, 0);
  asc__regtab_init(x->c, &defp, 0);
  asc__ir_occurrences(&J->body[0], &inj);
  asc__ir_occurrences(&P->body[0], &inp);
  asc__ir_defined_in(&P->body[0], &defp);
  for (const asc__irins *i = J->body[0].first; i != P; i = i->next) {
    if (!pure_ok(x, i))
      return asc__arena_printf(x->c, "a %s before loop %%%s",
                               asc__irop_name(i->op), rname(x, P->dst));
    if (i->dst != s && x->f->regs[i->dst].ndefs != 1)
      return asc__arena_printf(x->c, "%%%s is assigned more than once",
                               rname(x, i->dst));
  }
  for (const asc__irins *i = pb->first; i; i = i->next) {
    if (i->op == ASC_IR_LOAD || i->dst == s)
      continue;
    if (!pure_ok(x, i))
      return asc__arena_printf(x->c, "a %s in loop %%%s",
                               asc__irop_name(i->op), rname(x, Pin->dst));
    if (x->f->regs[i->dst].ndefs != 1)
      return asc__arena_printf(x->c, "%%%s is assigned more than once",
                               rname(x, i->dst));
  }
  for (const asc__irins *i = P->next; i; i = i->next) {
    if (i->op == ASC_IR_LOAD || i->op == ASC_IR_STORE)
      continue;
    if (!pure_ok(x, i))
      return asc__arena_printf(x->c, "a %s after loop %%%s",
                               asc__irop_name(i->op), rname(x, P->dst));
    if (i->dst == s || x->f->regs[i->dst].ndefs != 1)
      return asc__arena_printf(x->c, "%%%s is assigned more than once",
                               rname(x, i->dst));
  }
  /* registers of J's body live only in it (the prefix is copied into each
   * part), those of P's body only in P */
  in = asc__dep_defined(d, &nin);
  for (int32_t k = 0; k < nin; k++) {
    int32_t r = in[k];
    int32_t all = x->f->regs[r].ndefs + x->f->regs[r].nuses;
    if (r == P->dst)
      continue;
    if (asc__regtab_get(&inj, r) != all)
      return asc__arena_printf(x->c, "%%%s is used after loop %%%s",
                               rname(x, r), rname(x, J->dst));
    if (r != s && asc__regtab_get(&defp, r) &&
        asc__regtab_get(&inp, r) != all)
      return asc__arena_printf(x->c, "%%%s is used after loop %%%s",
                               rname(x, r), rname(x, P->dst));
  }
  if (x->f->regs[s].ndefs != 2)
    return asc__arena_printf(x->c, "%%%s is assigned more than once per "
                             "iteration", rname(x, s));
  /* dependences: a store after P at j against a load of P at j': the
   * load now runs before the stores of every j of its tile, so a
   * distance j' - j > 0 (or unknown) refuses */
  for (const asc__irins *st = P->next; st; st = st->next) {
    if (st->op != ASC_IR_STORE)
      continue;
    for (const asc__irins *ld = pb->first; ld; ld = ld->next) {
      asc__depvec v;
      int r;
      if (ld->op != ASC_IR_LOAD || ld->args[0].reg != st->args[0].reg)
        continue;
      r = asc__dep_test(d, st, ld, &v);
      if (r == ASC_DEP_UNKNOWN)
        return asc__arena_printf(x->c, "the store to %%%s at line %d and "
                                 "its load at line %d: dependence not "
                                 "affine", rname(x, st->args[0].reg),
                                 (int)st->line, (int)ld->line);
      if (r == ASC_DEP_DIST && (v.dir[0] == '<' || v.dir[0] == '*'))
        return asc__arena_printf(x->c, "dependence of %%%s (store at line "
                                 "%d, load at line %d), distance %s over "
                                 "(%%%s, %%%s)", rname(x, st->args[0].reg),
                                 (int)st->line, (int)ld->line,
                                 asc__dep_str(x->c, &v), rname(x, J->dst),
                                 rname(x, Pin->dst));
    }
  }
  return NULL;
}

/* The cost model: NULL when moving P out of J makes P's unit-stride loads
 * over j innermost; else why not. */
static const char *profitable(ictx *x, asc__irins *J, asc__irins *P,
                              int lp, asc__depnest *d) {
  int gain = 0;
  for (const asc__irins *i = P->body[0].first; i; i = i->next) {
    asc__affine a;
    int64_t cj, cp;
    bool kj, kp;
    if (i->op != ASC_IR_LOAD)
      continue;
    if (!asc__dep_affine(d, i->args[1], &a))
      continue;
    kj = asc__dep_coef(&a, 0, &cj);
    kp = asc__dep_coef(&a, lp, &cp);
    if (kj && cj == 1)
      gain++;
    if (kp && cp == 1 && !(kj && (cj == 0 || cj == 1)))
      return asc__arena_printf(x->c, "the load at line %d is unit-stride in "
                               "%%%s and would not be in %%%s", (int)i->line,
                               rname(x, P->dst), rname(x, J->dst));
  }
  if (gain == 0)
    return asc__arena_printf(x->c, "no load of loop %%%s is unit-stride in "
                             "%%%s", rname(x, P->dst), rname(x, J->dst));
  return NULL;
}

static asc__irins *rewrite(ictx *x, asc__irblock *b, asc__irins *J,
                           asc__irins *P0,
                    asc__irins *P, asc__irblock *pre, asc__irblock *post,
                    int32_t s, asc__irins *upd, asc__irins *mv) {
  int dt = x->f->regs[s].ty.dtype;
  int64_t T = tile_elems(x, s);
  int32_t line = J->line, j = J->dst, sinit = -1;
  asc__irval tv = asc__irv_int(ascInt64, T);
  asc__irins *J0, *Li, *Lp, *Lo, *arr, *ins;
  asc__irtype at;
  int32_t rem, w, acc, old, sv;

  J0 = new_for(x, "j0", J->args[0], J->args[1], tv, line);
  J0->note = J->note;
  rem = asc__ir_bin(x->c, x->f, &J0->body[0], ASC_IR_SUB, ascInt64,
                    J->args[1], asc__irv_reg(J0->dst), line);
  w = asc__ir_bin(x->c, x->f, &J0->body[0], ASC_IR_MIN, ascInt64,
                  asc__irv_reg(rem), tv, line);
  memset(&at, 0, sizeof at);
  at.kind = ASC_IRK_TENSOR;
  at.dtype = (uint8_t)dt;
  at.ndim = 1;
  at.flags = ASC_IRT_CONTIG;
  acc = asc__ir_reg(x->c, x->f, at, "acc");
  arr = asc__ir_ins(x->c, ASC_IR_LOCAL_ARRAY, acc, 0, line);
  arr->nimm = 1;
  arr->imm[0] = T;
  asc__ir_append(&J0->body[0], arr);

  /* the accumulators' start */
  Li = new_for(x, "jj", asc__irv_int(ascInt64, 0), asc__irv_reg(w),
               asc__irv_int(ascInt64, 1), line);
  map_j(x, &Li->body[0], j, J0->dst, Li->dst, line);
  clone_prefix(x, &Li->body[0], pre, s, true, &sinit);
  asc__regtab_set(&x->ren, s, 0);
  ins = asc__ir_ins(x->c, ASC_IR_STORE, -1, 3, line);
  ins->args[0] = asc__irv_reg(acc);
  ins->args[1] = asc__irv_reg(Li->dst);
  ins->args[2] = asc__irv_reg(sinit);
  asc__ir_append(&Li->body[0], ins);
  asc__ir_append(&J0->body[0], Li);

  /* P over the tile */
  Lp = new_for(x, "jj", asc__irv_int(ascInt64, 0), asc__irv_reg(w),
               asc__irv_int(ascInt64, 1), P->line);
  map_j(x, &Lp->body[0], j, J0->dst, Lp->dst, P->line);
  clone_prefix(x, &Lp->body[0], pre, s, false, NULL);
  if (mv != NULL)
    asc__ir_remove(&P->body[0], mv);
  while (P->body[0].first != NULL) {
    asc__irins *i = P->body[0].first;
    asc__ir_remove(&P->body[0], i);
    rename_args(x, i);
    if (i == upd) {
      int32_t res = mv != NULL ? upd->dst
                               : asc__ir_reg(x->c, x->f, x->f->regs[s].ty,
                                             x->f->regs[s].name);
      ins = asc__ir_ins(x->c, ASC_IR_LOAD, -1, 2, i->line);
      old = asc__ir_reg(x->c, x->f, x->f->regs[s].ty, x->f->regs[s].name);
      ins->dst = old;
      ins->args[0] = asc__irv_reg(acc);
      ins->args[1] = asc__irv_reg(Lp->dst);
      asc__ir_append(&Lp->body[0], ins);
      for (int32_t k = 0; k < i->nargs; k++)
        if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == s)
          i->args[k].reg = old;
      i->dst = res;
      asc__ir_append(&Lp->body[0], i);
      ins = asc__ir_ins(x->c, ASC_IR_STORE, -1, 3, i->line);
      ins->args[0] = asc__irv_reg(acc);
      ins->args[1] = asc__irv_reg(Lp->dst);
      ins->args[2] = asc__irv_reg(res);
      asc__ir_append(&Lp->body[0], ins);
      continue;
    }
    asc__ir_append(&Lp->body[0], i);
  }
  asc__ir_append(&P->body[0], Lp);
  P0->note = NULL;
  asc__ir_append(&J0->body[0], P0);

  /* the results */
  Lo = new_for(x, "jj", asc__irv_int(ascInt64, 0), asc__irv_reg(w),
               asc__irv_int(ascInt64, 1), line);
  map_j(x, &Lo->body[0], j, J0->dst, Lo->dst, line);
  clone_prefix(x, &Lo->body[0], pre, s, false, NULL);
  sv = asc__ir_reg(x->c, x->f, x->f->regs[s].ty, x->f->regs[s].name);
  ins = asc__ir_ins(x->c, ASC_IR_LOAD, sv, 2, line);
  ins->args[0] = asc__irv_reg(acc);
  ins->args[1] = asc__irv_reg(Lo->dst);
  asc__ir_append(&Lo->body[0], ins);
  asc__regtab_set(&x->ren, s, sv + 1);
  while (post->first != NULL) {
    asc__irins *i = post->first;
    asc__ir_remove(post, i);
    rename_args(x, i);
    asc__ir_append(&Lo->body[0], i);
  }
  asc__ir_append(&J0->body[0], Lo);

  asc__ir_insert_before(b, J, J0);
  asc__ir_remove(b, J);
  return J0;
}

/* The loop Pin of the rewritten nest, `for %p = A, B, 1 { for %jj = 0,
 * %w, 1 { body } }` (its body the tile loop alone, straight-line), made to
 * take JAM of its iterations in each pass over the tile:
 *
 *   %pm = A + (max(B - A, 0) & -JAM)
 *   for %p = A, %pm, JAM { for %jj { body(p)  body(p + 1) ... } }
 *   for %p' = %pm, B, 1 { for %jj' { body(p') } }
 *
 * Every element's accumulator still takes p, p + 1, ... in order (the
 * copies run in that order in one jj iteration, and the jj are distinct
 * elements), so the values are the same; the tile's accumulators are
 * read and written once per JAM iterations of p, and JAM rows of what P
 * reads stream at once.  pb is the block Pin is in. */
static bool jam(ictx *x, asc__irblock *pb, asc__irins *Pin) {
  asc__irins *Lp = Pin->body[0].first, *rem, *first, *last;
  asc__irblock set = {NULL, NULL};
  int32_t n, pm, line = Pin->line;
  if (Lp == NULL || Lp != Pin->body[0].last || Lp->op != ASC_IR_FOR ||
      !(Pin->args[2].kind == ASC_IRV_CONST && Pin->args[2].c.i == 1) ||
      Lp->body[0].first == NULL || asc__ir_size(&Lp->body[0]) > JAM_BODY)
    return false;
  for (const asc__irins *i = Lp->body[0].first; i; i = i->next)
    if (asc__ir_nregions(i) > 0)
      return false;
  n = asc__ir_bin(x->c, x->f, &set, ASC_IR_SUB, ascInt64, Pin->args[1],
                  Pin->args[0], line);
  n = asc__ir_bin(x->c, x->f, &set, ASC_IR_MAX, ascInt64, asc__irv_reg(n),
                  asc__irv_int(ascInt64, 0), line);
  n = asc__ir_bin(x->c, x->f, &set, ASC_IR_AND, ascInt64, asc__irv_reg(n),
                  asc__irv_int(ascInt64, -JAM), line);
  pm = asc__ir_bin_named(x->c, x->f, &set, ASC_IR_ADD, ascInt64,
                         Pin->args[0], asc__irv_reg(n), "pm", line);
  /* the iterations left over: a copy under fresh names */
  asc__regtab_clear(&x->ren);
  rem = asc__ir_clone_fresh(x->c, x->f, Pin, Pin, &x->ren).first;
  rem->args[0] = asc__irv_reg(pm);
  /* JAM iterations of p in each pass over the tile */
  first = Lp->body[0].first;
  last = Lp->body[0].last;
  for (int k = 1; k < JAM; k++) {
    asc__irblock copy;
    int32_t pk;
    pk = asc__ir_bin(x->c, x->f, &Lp->body[0], ASC_IR_ADD, ascInt64,
                     asc__irv_reg(Pin->dst), asc__irv_int(ascInt64, k), line);
    asc__regtab_clear(&x->ren);
    asc__regtab_set(&x->ren, Pin->dst, pk + 1);
    copy = asc__ir_clone_fresh(x->c, x->f, first, last, &x->ren);
    asc__ir_splice(&Lp->body[0], NULL, &copy);
  }
  Pin->args[1] = asc__irv_reg(pm);
  Pin->args[2] = asc__irv_int(ascInt64, JAM);
  asc__ir_splice(pb, Pin, &set);
  if (Pin->next != NULL)
    asc__ir_insert_before(pb, Pin->next, rem);
  else
    asc__ir_append(pb, rem);
  return true;
}

/* Tries J (a serial for in b); true when it was rewritten. */
static bool try_loop(ictx *x, asc__irblock *b, asc__irins *J) {
  asc__irins *P = NULL, *Pin, *upd, *mv, *J0;
  asc__irblock pre = {NULL, NULL}, post = {NULL, NULL};
  asc__irins *Ls[ASC_DEP_MAXL];
  asc__depnest d;
  const char *why = NULL;
  int32_t s;
  int nl = 1;

  asc__regtab_clear(&x->ren);
  if (J->unroll || J->args[2].kind != ASC_IRV_CONST || J->args[2].c.i != 1 ||
      x->f->regs[J->dst].ty.dtype != ascInt64)
    return false;
  for (asc__irins *i = J->body[0].first; i; i = i->next)
    if (asc__ir_nregions(i) > 0) {
      if (P != NULL || i->op != ASC_IR_FOR)
        return false;
      P = i;
    }
  if (P == NULL || P->unroll)
    return false;
  /* P, or a nest of loops P > P1 > ... each the one region of the body
   * around it; Pin the innermost, whose body has none */
  Ls[0] = J;
  Pin = P;
  for (;;) {
    asc__irins *in = NULL;
    Ls[nl++] = Pin;
    for (asc__irins *i = Pin->body[0].first; i; i = i->next)
      if (asc__ir_nregions(i) > 0) {
        if (in != NULL || i->op != ASC_IR_FOR || i->unroll)
          return false;
        in = i;
      }
    if (in == NULL)
      break;
    if (nl == ASC_DEP_MAXL)
      return false;
    Pin = in;
  }
  if (P->prev == NULL || (s = carried(J, P, Pin)) < 0)
    return false;
  /* from here on the nest has the shape: a decision, with a note */
  asc__dep_init(&d, x->c, x->f, Ls, nl);
  upd = find_update(x, &Pin->body[0], s, &mv, &why);
  if (upd != NULL)
    why = legal(x, J, Ls + 1, nl - 1, s, &d);
  if (why == NULL)
    why = profitable(x, J, Pin, nl - 1, &d);
  if (why != NULL) {
    add_note(x, J, asc__arena_printf(x->c, "loop %%%s at line %d keeps its "
                                     "order: %s", rname(x, J->dst),
                                     (int)J->line, why));
    return false;
  }
  add_note(x, J, asc__arena_printf(
                     x->c, "loop %%%s at line %d moved inside loop %%%s in "
                     "tiles of %d, %%%s expanded to an array: %%%s's loads "
                     "become unit-stride innermost; each element keeps its "
                     "order of operations",
                     rname(x, J->dst), (int)J->line, rname(x, Pin->dst),
                     (int)tile_elems(x, s),
                     rname(x, s), rname(x, Pin->dst)));
  /* detach prefix and post from J's body */
  pre.first = J->body[0].first;
  pre.last = P->prev;
  post.first = P->next;
  post.last = P->next ? J->body[0].last : NULL;
  J->body[0].first = P;
  J->body[0].last = P;
  pre.last->next = NULL;
  P->prev = NULL;
  if (post.first != NULL) {
    post.first->prev = NULL;
    P->next = NULL;
  }
  J0 = rewrite(x, b, J, P, Pin, &pre, &post, s, upd, mv);
  x->cand = asc__arena_grow(x->c, x->cand, x->ncand, &x->capcand,
                            sizeof *x->cand, 8);
  x->cand[x->ncand].J0 = J0;
  x->cand[x->ncand].Pin = Pin;
  x->cand[x->ncand].pb = nl == 2 ? &J0->body[0] : &Ls[nl - 2]->body[0];
  x->ncand++;
  return true;
}

static bool try_any(void *ctx, asc__irblock *b, asc__irins *i) {
  ictx *x = ctx;
  return i->op == ASC_IR_FOR && try_loop(x, b, i);
}

/* The loop whose body block b is (NULL: the function's body), searching
 * below owner. */
static asc__irins *owner_of(asc__irblock *in, asc__irins *owner,
                            const asc__irins *x, bool *found) {
  for (asc__irins *i = in->first; i; i = i->next) {
    if (i == x) {
      *found = true;
      return owner;
    }
    for (int k = 0; k < asc__ir_nregions(i); k++) {
      asc__irins *o = owner_of(&i->body[k], i, x, found);
      if (*found)
        return o;
    }
  }
  return NULL;
}

void asc__pass_interchange(asc__cctx *c, asc__irfunc *f) {
  ictx x;
  bool any = false;
  memset(&x, 0, sizeof x);
  x.c = c;
  x.f = f;
  asc__regtab_init(c, &x.ren, 0);
  asc__nest_walk(c, f, "interchange", try_any, &x);
  /* A tile loop that ends the body of a loop over rows is unrolljam's: it
   * takes 4 rows through the tile, each load serving them all.  The
   * others take 4 iterations of P per pass over the tile. */
  for (int k = 0; k < x.ncand; k++) {
    icand *q = &x.cand[k];
    bool found = false;
    asc__irins *o = owner_of(&f->body, NULL, q->J0, &found);
    asc__cctx_tick(c, "interchange");
    if (o != NULL && (o->op == ASC_IR_FOR || o->op == ASC_IR_PFOR) &&
        o->body[0].last == q->J0)
      continue;
    if (jam(&x, q->pb, q->Pin)) {
      add_note(&x, q->J0, asc__arena_printf(
                              c, "loop %%%s takes %d of its iterations per "
                                 "pass over the tile",
                              rname(&x, q->Pin->dst), JAM));
      any = true;
    }
  }
  if (any)
    asc__ir_count(f);
}
