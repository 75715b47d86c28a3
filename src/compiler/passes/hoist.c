/*
 * Hoisting of invariant loads (docs/optimizer.md): a load at the top level
 * of a `for` / `pfor` body whose tensor and offset are defined outside the
 * loop moves in front of it when nothing in the loop can write the element
 * it reads:
 *
 *   for %j = lo, hi, 1 {              %runs = lt lo, hi
 *     %x = load %a, %t6               if %runs {
 *     %w = load %w, %t9       ->        %w = load %w, %t9
 *     ...                               for %j = lo, hi, 1 { %x = ... }
 *   }                                 }
 *
 * The guard keeps a loop that runs zero times from reading memory the
 * original never read (an index past the end of an empty array); a loop of
 * constant bounds that runs gets none.  The load must also be reached on
 * the loop's first iteration: nothing before it in the body may raise or
 * leave the iteration (a bounds check's `raise`, a `break`), so whenever
 * the hoisted load runs the original read the same element.
 *
 * What may write the element:
 *  - a store to the same tensor register whose element depend.c proves
 *    distinct from the load's (no dependence for any iterations);
 *  - distinct tensors never overlap unless the kernel is `may_alias`: the
 *    launcher compiles overlapping arguments as that specialisation
 *    (asc__args_overlap), local, shared and new arrays are fresh memory.
 *    A tensor register reached through anything but `mov`s of one of
 *    those is unknown and conflicts with every store;
 *  - gemm, gemm_exact, free_array and set_array write (or give back) a
 *    whole tensor;
 *  - a loop with atomics, locks, a barrier or a critical section keeps its
 *    loads (what another thread wrote may become visible there).
 *
 * Pure, non-raising instructions that read a hoisted load follow it into
 * the guard, and loads whose offsets they compute may follow in turn.  A
 * bounds check of an invariant index, `if %bad { raise ... }` with %bad
 * and the raise's values defined outside the loop, in front of a load
 * that leaves goes with it, first, when nothing before the check in the
 * body has an effect (only pure values and loads): the first iteration
 * would have raised there having changed nothing.
 * Inner loops go first, so a load climbs out of one loop per guard.  The
 * pass runs after the loop-nest passes (the guard would hide the perfect
 * nests they match) and before strength (offsets still `i * stride`, which
 * depend.c reads).  Each decision about an invariant load is a note on the
 * loop: `; hoist: ...`.  ASC_HOIST=0 leaves the pass out (part of the
 * kernel cache key).
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/passes/depend.h"

typedef struct writer {
  const asc__irins *i;
  int32_t root;
  bool whole;                        /* writes elements depend.c cannot see */
  asc__irins *chain[ASC_DEP_MAXL];   /* the loops from the hoisting loop down */
  int nl;                            /* 0: nested too deep */
  asc__depnest *d;                   /* set up for chain at the first test */
} writer;

typedef struct hctx {
  asc__cctx *c;
  asc__irfunc *f;
  const asc__irins **gdef;           /* the definition of each register */
  int32_t nregs0;
  uint8_t *noted;                    /* loads already given a note */
  /* the loop being looked at */
  writer *w;
  int nw, capw;
  const asc__irins *sync;
} hctx;

static const char *rname(const hctx *x, int32_t r) {
  return x->f->regs[r].name;
}

static bool is_loop(int op) {
  return op == ASC_IR_FOR || op == ASC_IR_PFOR || op == ASC_IR_LOOP;
}

static void note_def(asc__irins *i, void *ctx) {
  hctx *x = ctx;
  if (i->dst >= 0 && i->dst < x->nregs0)
    x->gdef[i->dst] = i;
}

static int32_t root_of(const hctx *x, int32_t r) {
  return asc__tensor_root(x->f, x->gdef, x->nregs0, r);
}

static void add_writer(hctx *x, const asc__irins *i, int32_t t, bool whole,
                       asc__irins **chain, int nl) {
  writer *w;
  if (x->nw == x->capw) {
    int cap = x->capw ? 2 * x->capw : 16;
    writer *n = asc__arena_alloc(x->c, sizeof *n * (size_t)cap);
    if (x->nw)
      memcpy(n, x->w, sizeof *n * (size_t)x->nw);
    x->w = n;
    x->capw = cap;
  }
  w = &x->w[x->nw++];
  w->i = i;
  w->root = root_of(x, t);
  w->whole = whole;
  w->d = NULL;
  w->nl = nl <= ASC_DEP_MAXL ? nl : 0;
  for (int l = 0; l < w->nl; l++)
    w->chain[l] = chain[l];
}

/* Collects what the loop's body writes; chain[0..nl) are the loops around
 * b, the hoisting loop first. */
static void collect(hctx *x, const asc__irblock *b, asc__irins **chain,
                    int nl) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    switch (i->op) {
    case ASC_IR_STORE:
      add_writer(x, i, i->args[0].reg, false, chain, nl);
      break;
    case ASC_IR_GEMM:
    case ASC_IR_GEMM_EXACT:
    case ASC_IR_FREE_ARRAY:
      add_writer(x, i, i->args[0].reg, true, chain, nl);
      break;
    case ASC_IR_LINALG:
      for (int32_t k = 7; k < i->nargs; k += 4)
        add_writer(x, i, i->args[k].reg, true, chain, nl);
      break;
    case ASC_IR_SET_ARRAY:
    case ASC_IR_SET_VIEW:
      add_writer(x, i, i->dst, true, chain, nl);
      add_writer(x, i, i->args[0].reg, true, chain, nl);
      break;
    case ASC_IR_ATOMIC:
    case ASC_IR_CAS:
    case ASC_IR_LOCK:
    case ASC_IR_UNLOCK:
    case ASC_IR_BARRIER:
    case ASC_IR_CRITICAL:
      if (x->sync == NULL)
        x->sync = i;
      break;
    default:
      break;
    }
    for (int k = 0; k < asc__ir_nregions(i); k++) {
      bool loop = is_loop(i->op);
      if (loop && nl < ASC_DEP_MAXL + 1)
        chain[nl] = (asc__irins *)i;
      collect(x, &i->body[k], chain, loop ? nl + 1 : nl);
    }
  }
}

/* v > 0 for certain: a positive constant, or `max x, c` with c > 0, seen
 * through widening integer casts (the collapsed pfor's `%tripu = cast (max
 * %trip, 1)`, the divisor of its index chain). */
static bool positive(const hctx *x, asc__irval v, int depth) {
  const asc__irins *d;
  if (v.kind == ASC_IRV_CONST)
    return !asc__dt_is_float(v.dtype) && v.c.i > 0;
  if (v.kind != ASC_IRV_REG || depth > 4 || v.reg >= x->nregs0 ||
      x->f->regs[v.reg].ndefs != 1 || (d = x->gdef[v.reg]) == NULL)
    return false;
  if (d->op == ASC_IR_MAX)
    return positive(x, d->args[0], depth + 1) ||
           positive(x, d->args[1], depth + 1);
  if (d->op == ASC_IR_CAST) {
    int from = asc__irv_dtype(x->f, d->args[0]);
    int to = x->f->regs[v.reg].ty.dtype;
    return !asc__dt_is_float(from) && !asc__dt_is_float(to) &&
           from != ascBool &&
           ascDataTypeSize((ascDataType)to) >=
               ascDataTypeSize((ascDataType)from) &&
           positive(x, d->args[0], depth + 1);
  }
  return false;
}

static bool may_raise(const hctx *x, const asc__irins *i) {
  if ((i->op == ASC_IR_FLOORDIV || i->op == ASC_IR_MOD) &&
      positive(x, i->args[1], 0))
    return false;
  return asc__ir_may_trap(x->f, i);
}

/* The first instruction of b before stop that may raise, leave the
 * iteration or not return (NULL when none); depth counts the loops entered
 * below the body. */
static const asc__irins *leaves(const hctx *x, const asc__irblock *b,
                                const asc__irins *stop, int depth) {
  for (const asc__irins *i = b->first; i && i != stop; i = i->next) {
    const asc__irins *r;
    switch (i->op) {
    case ASC_IR_BREAK:
    case ASC_IR_CONTINUE:
      if (depth == 0)
        return i;
      break;
    case ASC_IR_IF:
      for (int k = 0; k < 2; k++)
        if ((r = leaves(x, &i->body[k], NULL, depth)) != NULL)
          return r;
      break;
    case ASC_IR_FOR:
    case ASC_IR_PFOR:
      if ((r = leaves(x, &i->body[0], NULL, depth + 1)) != NULL)
        return r;
      break;
    case ASC_IR_LOAD:
    case ASC_IR_STORE:
    case ASC_IR_ATOMIC:
    case ASC_IR_CAS:
    case ASC_IR_UNLOCK:
    case ASC_IR_LOCAL_ARRAY:
    case ASC_IR_SHARED_ARRAY:
    case ASC_IR_FREE_ARRAY:
    case ASC_IR_RESULT:
    case ASC_IR_GEMM:
    case ASC_IR_WORKER_ID:
      break;
    default:
      if (!(asc__irop_flags(i->op) & ASC_OPF_PURE) || may_raise(x, i) ||
          asc__ir_nregions(i) > 0)
        return i;
      break;
    }
  }
  return NULL;
}

/* Why a store w may write the element load ld reads; NULL when it cannot. */
static const char *conflict(hctx *x, const asc__irins *ld, writer *w) {
  int32_t t = ld->args[0].reg, rt = root_of(x, t);
  asc__depvec v;
  if (rt != ASC_ROOT_ANY && w->root != ASC_ROOT_ANY && rt != w->root)
    return NULL;
  if (rt == ASC_ROOT_ANY)
    return asc__arena_printf(x->c, "may write it (where %%%s points is not "
                                   "known)", rname(x, t));
  if (w->root == ASC_ROOT_ANY)
    return "may write it (where it writes is not known)";
  if (rt == ASC_ROOT_PARAMS && (w->whole || w->i->args[0].reg != t))
    return "may write it (the kernel's tensors may alias)";
  if (w->whole || w->i->args[0].reg != t || w->nl == 0)
    return "may write the element it reads";
  /* Set up once per store, at its first test: a register moved out of
   * the loop after that still counts as assigned in the nest, which can
   * only make an offset that reads it not affine (refused). */
  if (w->d == NULL) {
    w->d = asc__arena_alloc(x->c, sizeof *w->d);
    asc__dep_init(w->d, x->c, x->f, w->chain, w->nl);
  }
  switch (asc__dep_test(w->d, ld, w->i, &v)) {
  case ASC_DEP_NONE:
    return NULL;
  case ASC_DEP_DIST:
    return "writes the element it reads";
  default:
    return "may write the element it reads";
  }
}

static void note(hctx *x, asc__irins *loop, const asc__irins *ld,
                 const char *text) {
  if (ld->dst < x->nregs0) {
    if (x->noted[ld->dst])
      return;
    x->noted[ld->dst] = 1;
  }
  asc__nest_note(x->c, loop, "hoist",
                 asc__arena_printf(x->c, "load of %%%s at line %d %s",
                                   rname(x, ld->args[0].reg), (int)ld->line,
                                   text));
}

static bool invariant(const asc__irins *i, const asc__regtab *inside) {
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG &&
        asc__regtab_get(inside, i->args[k].reg))
      return false;
  return true;
}

/* `if %c { raise ... }` with %c and the raise's values defined outside
 * the loop (a bounds check of an invariant index). */
static bool invariant_check(const asc__irins *i, const asc__regtab *inside) {
  const asc__irins *r = i->body[0].first;
  return i->op == ASC_IR_IF && i->body[1].first == NULL && r != NULL &&
         r == i->body[0].last && r->op == ASC_IR_RAISE &&
         invariant(i, inside) && invariant(r, inside);
}

enum { MAXCHECKS = 8 };

/* The invariant checks before ld at the top of the body, when they are
 * the only instructions before it that may raise or leave an iteration
 * and only pure values and loads (no effect) come before the last of
 * them: their number, stored in chk[]; -1 otherwise. */
static int checks_before(const hctx *x, const asc__irblock *body,
                         const asc__irins *ld, const asc__regtab *inside,
                         asc__irins **chk) {
  int n = 0;
  bool effect = false;
  for (asc__irins *i = body->first; i && i != ld; i = i->next) {
    asc__irblock one = {i, i};
    if (invariant_check(i, inside)) {
      if (effect || n == MAXCHECKS)
        return -1;
      chk[n++] = i;
      continue;
    }
    if (leaves(x, &one, i->next, 0) != NULL)
      return -1;
    if (i->op != ASC_IR_LOAD &&
        (!(asc__irop_flags(i->op) & ASC_OPF_PURE) || i->dst < 0 ||
         asc__ir_nregions(i) > 0))
      effect = true;
  }
  return n;
}

/* Does the load get to run before the loop?  With say, a note says why
 * not. */
static bool may_hoist(hctx *x, asc__irins *loop, const asc__irins *ld,
                      bool guardable, bool say, const asc__regtab *inside,
                      asc__irins **chk, int *nchk) {
  const asc__irins *why = NULL;
  *nchk = checks_before(x, &loop->body[0], ld, inside, chk);
  if (*nchk < 0)
    why = leaves(x, &loop->body[0], ld, 0);
  if (!say) {
    if (why != NULL || x->sync != NULL || !guardable)
      return false;
    for (int k = 0; k < x->nw; k++)
      if (conflict(x, ld, &x->w[k]) != NULL)
        return false;
    return true;
  }
  if (why != NULL) {
    note(x, loop, ld,
         asc__arena_printf(
             x->c, "stays in the loop: the %s at line %d may end an "
                   "iteration before it",
             asc__irop_name(why->op), (int)why->line));
    return false;
  }
  if (x->sync != NULL) {
    note(x, loop, ld,
         asc__arena_printf(x->c,
                           "stays in the loop: the loop synchronises (%s at "
                           "line %d)",
                           asc__irop_name(x->sync->op), (int)x->sync->line));
    return false;
  }
  for (int k = 0; k < x->nw; k++) {
    const char *c = conflict(x, ld, &x->w[k]);
    if (c != NULL) {
      const asc__irins *s = x->w[k].i;
      int32_t t = s->op == ASC_IR_SET_ARRAY || s->op == ASC_IR_SET_VIEW
                      ? s->dst
                      : s->args[0].reg;
      note(x, loop, ld,
           asc__arena_printf(x->c, "stays in the loop: the %s to %%%s at "
                                   "line %d %s",
                             asc__irop_name(s->op), rname(x, t),
                             (int)s->line, c));
      return false;
    }
  }
  if (!guardable) {
    note(x, loop, ld, "stays in the loop: the loop's step is not a constant");
    return false;
  }
  return true;
}

/* The loop runs at least once: 1 when its bounds say so, 0 when they say it
 * never runs, -1 when only known at run time. */
static int runs(const asc__irins *loop) {
  const asc__irval *a = loop->args;
  if (a[0].kind != ASC_IRV_CONST || a[1].kind != ASC_IRV_CONST ||
      a[2].kind != ASC_IRV_CONST)
    return -1;
  if (a[2].c.i > 0)
    return a[0].c.i < a[1].c.i;
  return a[0].c.i > a[1].c.i;
}

static void hoist_block(hctx *x, asc__irblock *b);

static void hoist_loop(hctx *x, asc__irblock *b, asc__irins *loop) {
  asc__irins *chain[ASC_DEP_MAXL + 1];
  asc__irblock out = {NULL, NULL};
  asc__regtab inside, moved;
  bool again, guardable;
  int run;

  hoist_block(x, &loop->body[0]);
  asc__cctx_tick(x->c, "hoist");
  /* a wavefront's sweep runs a row at a time (wavefront.c): what left it
   * would sit beside the sweeps, which must be all the wavefront holds */
  if (loop->op == ASC_IR_LOOP || loop->wave == ASC_WAVE_SWEEP)
    return;
  run = runs(loop);
  if (run == 0)
    return;
  guardable = loop->args[2].kind == ASC_IRV_CONST && loop->args[2].c.i != 0;
  asc__regtab_init(x->c, &inside, 0);
  asc__regtab_init(x->c, &moved, 0);
  asc__ir_defined_in(&loop->body[0], &inside);
  if (loop->dst >= 0)
    asc__regtab_set(&inside, loop->dst, 1);
  x->nw = 0;
  x->sync = NULL;
  chain[0] = loop;
  collect(x, &loop->body[0], chain, 1);

  do {
    again = false;
    for (asc__irins *i = loop->body[0].first, *next; i; i = next) {
      next = i->next;
      if (i->dst < 0 || x->f->regs[i->dst].ndefs != 1 ||
          x->f->regs[i->dst].ty.kind != ASC_IRK_SCALAR ||
          !invariant(i, &inside))
        continue;
      if (i->op == ASC_IR_LOAD) {
        asc__irins *chk[MAXCHECKS];
        int nchk;
        if (!may_hoist(x, loop, i, guardable, false, &inside, chk, &nchk))
          continue;
        /* the checks in front of it go first: the first iteration would
         * have raised there having changed nothing */
        for (int k = 0; k < nchk; k++) {
          asc__nest_note(x->c, loop, "hoist",
                         asc__arena_printf(x->c,
                                           "the raise at line %d and its "
                                           "invariant test moved out of the "
                                           "loop with the load",
                                           (int)chk[k]->body[0].first->line));
          asc__ir_remove(&loop->body[0], chk[k]);
          asc__ir_append(&out, chk[k]);
        }
        note(x, loop, i, "moved out of the loop");
      } else {
        /* a pure value of what was hoisted follows it */
        bool reads = false;
        if (!asc__nest_pure(x->f, i))
          continue;
        for (int32_t k = 0; k < i->nargs; k++)
          if (i->args[k].kind == ASC_IRV_REG &&
              asc__regtab_get(&moved, i->args[k].reg))
            reads = true;
        if (!reads)
          continue;
      }
      asc__ir_remove(&loop->body[0], i);
      asc__ir_append(&out, i);
      asc__regtab_set(&inside, i->dst, 0);
      asc__regtab_set(&moved, i->dst, 1);
      again = true;
    }
  } while (again);
  /* what stays, and why */
  for (asc__irins *i = loop->body[0].first; i; i = i->next)
    if (i->op == ASC_IR_LOAD && x->f->regs[i->dst].ndefs == 1 &&
        invariant(i, &inside)) {
      asc__irins *chk[MAXCHECKS];
      int nchk;
      may_hoist(x, loop, i, guardable, true, &inside, chk, &nchk);
    }
  if (out.first == NULL)
    return;

  if (run > 0) {
    asc__ir_splice(b, loop, &out);
  } else {
    asc__irins *cmp, *ifi;
    int32_t r = asc__ir_reg(x->c, x->f, asc__irt_scalar(ascBool), "runs");
    cmp = asc__ir_ins(x->c, loop->args[2].c.i > 0 ? ASC_IR_LT : ASC_IR_GT, r,
                      2, loop->line);
    cmp->args[0] = loop->args[0];
    cmp->args[1] = loop->args[1];
    ifi = asc__ir_ins(x->c, ASC_IR_IF, -1, 1, loop->line);
    ifi->args[0] = asc__irv_reg(r);
    asc__ir_insert_before(b, loop, cmp);
    asc__ir_insert_before(b, loop, ifi);
    asc__ir_remove(b, loop);
    asc__ir_splice(&ifi->body[0], NULL, &out);
    asc__ir_append(&ifi->body[0], loop);
  }
}

static void hoist_block(hctx *x, asc__irblock *b) {
  for (asc__irins *i = b->first, *next; i; i = next) {
    next = i->next;
    if (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR || i->op == ASC_IR_LOOP)
      hoist_loop(x, b, i);
    else
      for (int k = 0; k < asc__ir_nregions(i); k++)
        hoist_block(x, &i->body[k]);
  }
}

void asc__pass_hoist(asc__cctx *c, asc__irfunc *f) {
  hctx x;
  size_t n = (size_t)(f->nregs > 0 ? f->nregs : 1);
  memset(&x, 0, sizeof x);
  x.c = c;
  x.f = f;
  x.nregs0 = f->nregs;
  asc__ir_count(f);
  x.gdef = asc__scratch_alloc(c, sizeof *x.gdef * n);
  x.noted = asc__scratch_alloc(c, n);
  asc__ir_walk(&f->body, note_def, &x);
  hoist_block(&x, &f->body);
  asc__ir_count(f);
}
