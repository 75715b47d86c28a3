/*
 * privatize: atomic adds into a small array inside a parallel loop
 * (histograms, bincount-style scatter) go to per-worker private copies of
 * the array, summed into it after the loop (docs/parallelize.md,
 * "Privatised reductions into arrays").
 *
 * For a `pfor` P (not inside another pfor) and a tensor %h that P's body
 * touches only with `atomic add %h, off, v` whose old value is unused,
 * or with `h[idx] += v` where idx comes from a load (a scatter; the
 * load-add-store becomes an atomic add in the fallback), and with
 * dim/stride, %h 1-D and contig, the pass writes
 *
 *   %nw = team_size;  %nb = dim %h, 0;  %tot = mul %nb, %nw
 *   %use = nb <= CAP && tot <= CAP && 2 * tot * step <= hi - lo
 *   %p = local_array [CAP]                  ; CAP elements, PRIV_BYTES
 *   if %use { for %z = 0, %tot { store %p, %z, 0 } }
 *   pfor ... { ... if %use { %w = worker_id
 *                            p[w * nb + off] += v }   ; plain load/add/store
 *                   else { atomic add %h, off, v } ... }
 *   if %use { for %b = 0, %nb { %s = 0
 *                               for %q = 0, %nw { %s = add %s, p[q*nb + b] }
 *                               atomic add %h, %b, %s } }
 *
 * (the merge adds atomically: other blocks of the launch may update %h
 * at the same time.)
 *
 * so the decision is taken at run time from the array's size, the team
 * size and the trip count (the cost model), with the atomics as the
 * fallback in the same loop.  Integer adds are exact in any order; float
 * adds are privatised only where the order rule lets the loop reorder them
 * (a pfor the user asked for, or fastmath reassoc), never in a plain range
 * loop that parallelize turned into a pfor.  Every decision is a note on
 * the pfor (`; privatize: ...`).  ASC_PRIVATIZE=0 turns the pass off
 * (pipeline.c; the setting is part of the kernel cache key).
 */
#include <string.h>

#include "compiler/passes/passes.h"

/* The private copies live in one local array (on the stack of the block's
 * entry function, as local arrays do): at most this many bytes. */
#define PRIV_BYTES (256 * 1024)
/* Steps above this are not privatised (keeps 2 * tot * step in range). */
#define MAX_STEP 4096

typedef struct pv {
  asc__cctx *c;
  asc__irfunc *f;
  int32_t h;           /* the tensor being checked */
  const char *why;     /* first reason it cannot be privatised */
  int32_t nsites;      /* atomic adds and += into h */
  asc__regtab def;        /* the one definition of each register, in the
                           * pfor body (none: 0) */
  int32_t ndef;           /* registers def covers (later ones are new) */
  asc__ircount_snap snap;
  int32_t cand[8];     /* tensors with atomic adds, in order of appearance */
  int32_t ncand;
} pv;

static const char *rn(const pv *s, int32_t r) {
  return asc__arena_printf(s->c, "%%%s", s->f->regs[r].name);
}

static bool uses_reg(const asc__irins *i, int32_t r) {
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == r)
      return true;
  return false;
}

static bool is_add_site(const asc__irfunc *f, const asc__irins *i) {
  return i->op == ASC_IR_ATOMIC && i->aux == ASC_ATOM_ADD &&
         i->args[0].kind == ASC_IRV_REG &&
         f->regs[i->args[0].reg].ty.kind == ASC_IRK_TENSOR;
}

/* True when value v is computed from a load (through at most 8 pure,
 * single-definition instructions of the body): a data-dependent index,
 * as in h[x[i]].  An affine h[i] += v is not a scatter: parallel loops
 * own such elements, and the atomics' fallback would slow them down. */
static bool from_load(const pv *s, asc__irval v, int depth) {
  const asc__irins *d;
  if (v.kind != ASC_IRV_REG || depth > 8 || v.reg >= s->ndef ||
      asc__regtab_get(&s->def, v.reg) == 0)
    return false;
  d = (const asc__irins *)asc__regtab_get(&s->def, v.reg);
  if (d->op == ASC_IR_LOAD)
    return true;
  if (!(asc__irop_flags(d->op) & ASC_OPF_PURE))
    return false;
  for (int32_t k = 0; k < d->nargs; k++)
    if (from_load(s, d->args[k], depth + 1))
      return true;
  return false;
}

/* h[idx] += v as lowering writes it: l = `%a = load %h, off`, then
 * `%b = add %a, v` (either order), then `store %h, off, %b`, %a and %b
 * used nowhere else, and off loaded from memory.  *v: the addend. */
static bool is_rmw(const pv *s, const asc__irins *l, asc__irval *v) {
  const asc__irfunc *f = s->f;
  const asc__irins *a, *st;
  int32_t x;
  if (l->op != ASC_IR_LOAD || l->args[0].kind != ASC_IRV_REG ||
      f->regs[l->args[0].reg].ty.kind != ASC_IRK_TENSOR)
    return false;
  x = l->dst;
  a = l->next;
  st = a ? a->next : NULL;
  if (st == NULL || a->op != ASC_IR_ADD || st->op != ASC_IR_STORE ||
      f->regs[x].ndefs != 1 || f->regs[x].nuses != 1 ||
      f->regs[a->dst].ndefs != 1 || f->regs[a->dst].nuses != 1)
    return false;
  if (a->args[0].kind == ASC_IRV_REG && a->args[0].reg == x)
    *v = a->args[1];
  else if (a->args[1].kind == ASC_IRV_REG && a->args[1].reg == x)
    *v = a->args[0];
  else
    return false;
  return st->args[0].kind == ASC_IRV_REG &&
         st->args[0].reg == l->args[0].reg &&
         asc__irv_eq(st->args[1], l->args[1]) &&
         st->args[2].kind == ASC_IRV_REG && st->args[2].reg == a->dst &&
         !(v->kind == ASC_IRV_REG && v->reg == l->args[0].reg) &&
         from_load(s, l->args[1], 0);
}

static void record_def(asc__irins *i, void *ctx) {
  pv *s = ctx;
  if (i->dst >= 0 && i->dst < s->ndef && s->f->regs[i->dst].ndefs == 1)
    asc__regtab_set(&s->def, i->dst, (intptr_t)i);
}

static void find_cands(asc__irins *i, void *ctx) {
  pv *s = ctx;
  int32_t h;
  asc__irval v;
  if (!is_add_site(s->f, i) && !is_rmw(s, i, &v))
    return;
  h = i->args[0].reg;
  for (int32_t k = 0; k < s->ncand; k++)
    if (s->cand[k] == h)
      return;
  if (s->ncand < (int32_t)ASC_ARRAY_SIZE(s->cand))
    s->cand[s->ncand++] = h;
}

/* Every occurrence of s->h in the body must be an add site (h only as the
 * target, old value unused), a dim or a stride. */
static void check_uses(asc__irins *i, void *ctx) {
  pv *s = ctx;
  if (!uses_reg(i, s->h) || s->why != NULL)
    return;
  if (i->op == ASC_IR_DIM || i->op == ASC_IR_STRIDE)
    return;
  {
    asc__irval v;
    if (is_rmw(s, i, &v) && i->args[0].reg == s->h) {
      s->nsites++;
      return;
    }
    /* the store of a += counted at its load */
    if (i->op == ASC_IR_STORE && i->prev && i->prev->prev &&
        is_rmw(s, i->prev->prev, &v) && i->prev->prev->next->next == i &&
        i->args[0].reg == s->h)
      return;
  }
  if (is_add_site(s->f, i) && i->args[0].reg == s->h &&
      !(i->args[1].kind == ASC_IRV_REG && i->args[1].reg == s->h) &&
      !(i->args[2].kind == ASC_IRV_REG && i->args[2].reg == s->h)) {
    if (i->dst >= 0 && s->f->regs[i->dst].nuses > 0) {
      s->why = asc__arena_printf(s->c, "the old value of the atomic add at "
                                       "line %d is used",
                                 (int)i->line);
      return;
    }
    s->nsites++;
    return;
  }
  s->why = asc__arena_printf(s->c, "%s is also accessed otherwise than by "
                                   "atomic adds (%s at line %d)",
                             rn(s, s->h), asc__irop_name(i->op), (int)i->line);
}

static const char *refuse(pv *s, const asc__irins *p, int32_t h) {
  const asc__irfunc *f = s->f;
  asc__irtype t = f->regs[h].ty;
  int dt = t.dtype;
  s->h = h;
  s->why = NULL;
  s->nsites = 0;
  if (f->may_alias)
    return "tensor arguments may overlap (may_alias specialisation)";
  if (t.ndim != 1 || !(t.flags & ASC_IRT_CONTIG) ||
      (t.flags & ASC_IRT_LOCAL))
    return asc__arena_printf(s->c, "%s is not a 1-D contiguous argument",
                             rn(s, h));
  if (!(asc__dt_is_int(dt) || dt == ascFloat32 || dt == ascFloat64))
    return asc__arena_printf(s->c, "%s holds %s (integers, f32 and f64 "
                                   "only)",
                             rn(s, h), asc__dt_name(dt));
  if (asc__dt_is_float(dt) && p->note != NULL &&
      strncmp(p->note, "parallelize:", 12) == 0 &&
      !(f->fastmath & ASC_FASTMATH_REASSOC))
    return asc__arena_printf(s->c, "%s holds %s, and a plain range loop "
                                   "does not reorder float sums without "
                                   "fastmath reassoc",
                             rn(s, h), asc__dt_name(dt));
  if (p->args[2].kind != ASC_IRV_CONST || p->args[2].c.i <= 0 ||
      p->args[2].c.i > MAX_STEP)
    return "the loop's step is not a small positive constant";
  asc__ir_walk(&p->body[0], check_uses, s);
  return s->why;
}

/* ------------------------------------------------------------- rewriting */

typedef struct site_rw {
  pv *s;
  int32_t h, p, nb, use;
} site_rw;

static int32_t reg(pv *s, int dt, const char *hint) {
  return asc__ir_reg(s->c, s->f, asc__irt_scalar(dt), hint);
}

static asc__irins *ins(pv *s, int op, int32_t dst, int nargs, int32_t line) {
  return asc__ir_ins(s->c, op, dst, nargs, line);
}

static asc__irval to_i64(pv *s, asc__irblock *b, asc__irval v, int32_t line) {
  int dt = asc__irv_dtype(s->f, v);
  if (dt == ascInt64)
    return v;
  if (v.kind == ASC_IRV_CONST)
    return asc__irv_int(ascInt64, v.c.i);
  return asc__irv_reg(asc__ir_un(s->c, s->f, b, ASC_IR_CAST, ascInt64, v,
                                 line));
}

/* Replaces the add site a (in block b) by
 * if use { p[worker * nb + off] += v } else { a } */
static void rewrite_site(site_rw *w, asc__irblock *b, asc__irins *a,
                         asc__irval addend, int nins) {
  pv *s = w->s;
  int dt = s->f->regs[w->h].ty.dtype;
  int32_t line = a->line;
  asc__irins *br = ins(s, ASC_IR_IF, -1, 1, line);
  asc__irblock *t = &br->body[0];
  int32_t wid = reg(s, ascInt64, "wid");
  int32_t base, o, x, y;
  asc__irval off;
  asc__irins *st;
  br->args[0] = asc__irv_reg(w->use);
  asc__ir_append(t, ins(s, ASC_IR_WORKER_ID, wid, 0, line));
  base = asc__ir_bin(s->c, s->f, t, ASC_IR_MUL, ascInt64, asc__irv_reg(wid),
                     asc__irv_reg(w->nb), line);
  off = to_i64(s, t, a->args[1], line);
  o = asc__ir_bin(s->c, s->f, t, ASC_IR_ADD, ascInt64, asc__irv_reg(base),
                  off, line);
  x = reg(s, dt, "priv");
  {
    asc__irins *ld = ins(s, ASC_IR_LOAD, x, 2, line);
    ld->args[0] = asc__irv_reg(w->p);
    ld->args[1] = asc__irv_reg(o);
    asc__ir_append(t, ld);
  }
  y = asc__ir_bin(s->c, s->f, t, ASC_IR_ADD, dt, asc__irv_reg(x), addend,
                  line);
  st = ins(s, ASC_IR_STORE, -1, 3, line);
  st->args[0] = asc__irv_reg(w->p);
  st->args[1] = asc__irv_reg(o);
  st->args[2] = asc__irv_reg(y);
  asc__ir_append(t, st);
  asc__ir_insert_before(b, a, br);
  if (nins == 1) {
    asc__ir_remove(b, a);
    asc__ir_append(&br->body[1], a);
    return;
  }
  /* h[idx] += v: the fallback is an atomic add (the load-add-store is a
   * race between iterations, which the user's prange did not see) */
  {
    asc__irins *at = ins(s, ASC_IR_ATOMIC, reg(s, dt, "old"), 3, line);
    at->aux = ASC_ATOM_ADD;
    at->args[0] = asc__irv_reg(w->h);
    at->args[1] = a->args[1];
    at->args[2] = addend;
    asc__ir_append(&br->body[1], at);
  }
  for (int k = 0; k < nins; k++) {
    asc__irins *nx = a->next;
    asc__ir_remove(b, a);
    a = nx;
  }
}

static void rewrite_block(site_rw *w, asc__irblock *b) {
  for (asc__irins *i = b->first, *next; i; i = next) {
    asc__irval v;
    next = i->next;
    if (is_add_site(w->s->f, i) && i->args[0].reg == w->h) {
      rewrite_site(w, b, i, i->args[2], 1);
      continue;
    }
    if (is_rmw(w->s, i, &v) && i->args[0].reg == w->h) {
      next = i->next->next->next;
      rewrite_site(w, b, i, v, 3);
      continue;
    }
    for (int k = 0; k < asc__ir_nregions(i); k++)
      rewrite_block(w, &i->body[k]);
  }
}

static void privatize(pv *s, asc__irblock *pb, asc__irins *p, int32_t h) {
  asc__irfunc *f = s->f;
  int dt = f->regs[h].ty.dtype;
  int64_t cap = PRIV_BYTES / asc__dt_bytes(dt);
  int64_t step = p->args[2].c.i;
  int32_t line = p->line;
  asc__irblock pre = {NULL, NULL}, post = {NULL, NULL};
  int32_t nw = reg(s, ascInt64, "nw"), nb = reg(s, ascInt64, "nbins");
  int32_t tot, c1, c2, c3, use, span, need, pr, a;
  asc__irval lo, hi;
  asc__irtype pt;
  asc__irins *i, *br, *fz, *fb, *fq;
  site_rw w;

  asc__ir_append(&pre, ins(s, ASC_IR_TEAM_SIZE, nw, 0, line));
  i = ins(s, ASC_IR_DIM, nb, 1, line);
  i->args[0] = asc__irv_reg(h);
  i->aux = 0;
  asc__ir_append(&pre, i);
  tot = asc__ir_bin(s->c, f, &pre, ASC_IR_MUL, ascInt64, asc__irv_reg(nb),
                    asc__irv_reg(nw), line);
  /* nb <= cap first: then tot cannot wrap, nor can need below */
  c1 = asc__ir_bin(s->c, f, &pre, ASC_IR_LE, ascInt64, asc__irv_reg(nb),
                   asc__irv_int(ascInt64, cap), line);
  c2 = asc__ir_bin(s->c, f, &pre, ASC_IR_LE, ascInt64, asc__irv_reg(tot),
                   asc__irv_int(ascInt64, cap), line);
  lo = to_i64(s, &pre, p->args[0], line);
  hi = to_i64(s, &pre, p->args[1], line);
  span = asc__ir_bin(s->c, f, &pre, ASC_IR_SUB, ascInt64, hi, lo, line);
  need = asc__ir_bin(s->c, f, &pre, ASC_IR_MUL, ascInt64, asc__irv_reg(tot),
                     asc__irv_int(ascInt64, 2 * step), line);
  c3 = asc__ir_bin(s->c, f, &pre, ASC_IR_LE, ascInt64, asc__irv_reg(need),
                   asc__irv_reg(span), line);
  a = asc__ir_bin(s->c, f, &pre, ASC_IR_AND, ascBool, asc__irv_reg(c1),
                  asc__irv_reg(c2), line);
  use = asc__ir_bin(s->c, f, &pre, ASC_IR_AND, ascBool, asc__irv_reg(a),
                    asc__irv_reg(c3), line);

  memset(&pt, 0, sizeof pt);
  pt.kind = ASC_IRK_TENSOR;
  pt.dtype = (uint8_t)dt;
  pt.ndim = 1;
  pt.flags = ASC_IRT_CONTIG;
  pr = asc__ir_reg(s->c, f, pt, "priv");
  i = ins(s, ASC_IR_LOCAL_ARRAY, pr, 0, line);
  i->nimm = 1;
  i->imm[0] = cap;
  asc__ir_append(&pre, i);

  /* zero the copies in use */
  br = ins(s, ASC_IR_IF, -1, 1, line);
  br->args[0] = asc__irv_reg(use);
  fz = ins(s, ASC_IR_FOR, reg(s, ascInt64, "z"), 3, line);
  fz->args[0] = asc__irv_int(ascInt64, 0);
  fz->args[1] = asc__irv_reg(tot);
  fz->args[2] = asc__irv_int(ascInt64, 1);
  i = ins(s, ASC_IR_STORE, -1, 3, line);
  i->args[0] = asc__irv_reg(pr);
  i->args[1] = asc__irv_reg(fz->dst);
  i->args[2] = asc__dt_is_float(dt) ? asc__irv_float(dt, 0.0)
                                    : asc__irv_int(dt, 0);
  asc__ir_append(&fz->body[0], i);
  asc__ir_append(&br->body[0], fz);
  asc__ir_append(&pre, br);

  /* the merge: h[b] += p[0][b] + p[1][b] + ... in worker order */
  br = ins(s, ASC_IR_IF, -1, 1, line);
  br->args[0] = asc__irv_reg(use);
  fb = ins(s, ASC_IR_FOR, reg(s, ascInt64, "bin"), 3, line);
  fb->args[0] = asc__irv_int(ascInt64, 0);
  fb->args[1] = asc__irv_reg(nb);
  fb->args[2] = asc__irv_int(ascInt64, 1);
  {
    int32_t sum = reg(s, dt, "sum"), q = reg(s, ascInt64, "q");
    int32_t qb, qo, x, nx;
    i = ins(s, ASC_IR_MOV, sum, 1, line);
    i->args[0] = asc__dt_is_float(dt) ? asc__irv_float(dt, 0.0)
                                      : asc__irv_int(dt, 0);
    asc__ir_append(&fb->body[0], i);
    fq = ins(s, ASC_IR_FOR, q, 3, line);
    fq->args[0] = asc__irv_int(ascInt64, 0);
    fq->args[1] = asc__irv_reg(nw);
    fq->args[2] = asc__irv_int(ascInt64, 1);
    qb = asc__ir_bin(s->c, f, &fq->body[0], ASC_IR_MUL, ascInt64,
                     asc__irv_reg(q), asc__irv_reg(nb), line);
    qo = asc__ir_bin(s->c, f, &fq->body[0], ASC_IR_ADD, ascInt64,
                     asc__irv_reg(qb), asc__irv_reg(fb->dst), line);
    x = reg(s, dt, "part");
    i = ins(s, ASC_IR_LOAD, x, 2, line);
    i->args[0] = asc__irv_reg(pr);
    i->args[1] = asc__irv_reg(qo);
    asc__ir_append(&fq->body[0], i);
    nx = asc__ir_bin(s->c, f, &fq->body[0], ASC_IR_ADD, dt,
                     asc__irv_reg(sum), asc__irv_reg(x), line);
    i = ins(s, ASC_IR_MOV, sum, 1, line);
    i->args[0] = asc__irv_reg(nx);
    asc__ir_append(&fq->body[0], i);
    asc__ir_append(&fb->body[0], fq);
    /* atomic: the other blocks of the launch may add to %h too */
    i = ins(s, ASC_IR_ATOMIC, reg(s, dt, "old"), 3, line);
    i->aux = ASC_ATOM_ADD;
    i->args[0] = asc__irv_reg(h);
    i->args[1] = asc__irv_reg(fb->dst);
    i->args[2] = asc__irv_reg(sum);
    asc__ir_append(&fb->body[0], i);
  }
  asc__ir_append(&br->body[0], fb);
  asc__ir_append(&post, br);

  w.s = s;
  w.h = h;
  w.p = pr;
  w.nb = nb;
  w.use = use;
  rewrite_block(&w, &p->body[0]);
  asc__ir_splice(pb, p, &pre);
  asc__ir_splice(pb, p->next, &post);
}

static void add_note(pv *s, asc__irins *p, const char *text) {
  const char *t = asc__arena_printf(s->c, "privatize: pfor %s at line %d %s",
                                    rn(s, p->dst), (int)p->line, text);
  p->note = p->note ? asc__arena_printf(s->c, "%s\n%s", p->note, t) : t;
}

static void visit(pv *s, asc__irblock *b) {
  for (asc__irins *i = b->first; i; i = i->next) {
    asc__cctx_tick(s->c, "privatize");
    if (i->op != ASC_IR_PFOR) {
      for (int k = 0; k < asc__ir_nregions(i); k++)
        visit(s, &i->body[k]);
      continue;
    }
    /* loops inside a pfor run serially: only this one is looked at */
    s->ncand = 0;
    s->ndef = s->f->nregs;
    asc__regtab_init(s->c, &s->def, 0);
    asc__ir_walk(&i->body[0], record_def, s);
    asc__ir_walk(&i->body[0], find_cands, s);
    for (int32_t k = 0; k < s->ncand; k++) {
      int32_t h = s->cand[k];
      const char *why = refuse(s, i, h);
      if (why != NULL) {
        add_note(s, i, asc__arena_printf(s->c, "keeps the atomic adds into "
                                               "%s: %s",
                                         rn(s, h), why));
        continue;
      }
      {
        int dt = s->f->regs[h].ty.dtype;
        int64_t cap = PRIV_BYTES / asc__dt_bytes(dt);
        add_note(s, i,
                 asc__arena_printf(
                     s->c,
                     "adds into per-worker private copies of %s (%d "
                     "update%s, %s), summed into it after the loop,\n"
                     "  when at run time dim(%s, 0) * team size <= %lld "
                     "and 2 * that * step <= the loop's span; else the "
                     "atomics",
                     rn(s, h), (int)s->nsites, s->nsites == 1 ? "" : "s",
                     asc__dt_is_float(dt) ? "float: reordered as the loop "
                                            "allows"
                                          : "exact",
                     rn(s, h), (long long)cap));
      }
      {
        asc__irins *prev = i->prev, *next = i->next;
        asc__ir_count_snap(s->c, &s->snap, i);
        privatize(s, b, i, h);
        asc__ir_count_redo(s->c, s->f, &s->snap, b, prev, next);
      }
    }
  }
}

void asc__pass_privatize(asc__cctx *c, asc__irfunc *f) {
  pv s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.f = f;
  asc__ir_count(f);
  visit(&s, &f->body);
}
