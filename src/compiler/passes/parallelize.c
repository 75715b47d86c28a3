/*
 * Automatic parallelisation: an outermost serial `for` nest whose
 * iterations are proven independent becomes a `pfor`; a perfect nest of
 * such loops is collapsed into one `pfor` over the product of the trip
 * counts.  docs/parallelize.md explains the rules; in short, a nest
 * L1 > L2 > ... is parallel over the prefix P = L1..Lm when
 *
 *   - every element offset of a written tensor is affine in the loop
 *     indices, spelled sum(index_k * stride_k), and for each p in P one
 *     axis holds exactly `alpha*p + C` (alpha a positive constant, C free of
 *     loop indices), the same in every load and store of that tensor;
 *   - every scalar assigned in the nest is private to an iteration or a
 *     recognised integer reduction (`s = s op x`, op in + * min max & | ^);
 *     a floating-point reduction keeps the loop serial, in Python's order,
 *     unless the kernel's fastmath mode permits reordering it
 *     (float_reorder_ok);
 *   - nothing leaves the nest (break of a P loop, return) and there is no
 *     barrier, shared_array or nested pfor.
 *
 * What cannot be proven statically but is cheap to test (each p's range
 * inside its axis, the written tensor not overlapping itself) becomes a
 * launch-time test in front of the loop with the serial nest as fallback:
 *
 *   for %i = 0, %n, 1 { store %c, %i, ... }
 *     ->  %ok = ge %cdim, %n
 *         if %ok { pfor %i = 0, %n, 1 { ... } } else { for ... }
 *
 * Each decision is recorded as a note on the loop (`; parallelize: ...`
 * in the text form).  Loops inside a pfor are never looked at.
 */
#include <string.h>

#include "compiler/passes/depend.h"

#define FALLBACK_NOTE "parallelize: the serial nest, run when the test fails"

enum { MAXNEST = 8, MAXCHK = 16 };
enum { S_NONE, S_USE, S_DEF };

typedef struct access {
  asc__irins *ins;
  int32_t t;
  int kind;           /* 0 load, 1 store, 2 atomic */
  bool ok;
  asc__affine e[ASC_IR_MAXDIMS];   /* index along each axis */
} access;

/* How a parallel index reaches a written tensor: axis, alpha, C. */
typedef struct bind {
  int32_t t;
  int lvl;
  int axis;
  int64_t alpha;
  asc__affine c;
  bool set;
} bind;

typedef struct pctx {
  asc__irblock *b;
  asc__irins *owner;   /* instruction whose region b is; NULL: function */
  const struct pctx *up;
} pctx;

typedef struct pstate {
  asc__cctx *c;
  asc__irfunc *f;
  /* the nest's registers and offsets; f's counts are kept current */
  asc__depnest d;
  asc__regtab shape;        /* a shape symbol's register in the checks */
  asc__ircount_snap snap;
  access *acc;
  int nacc, capacc;
  int32_t chk[MAXCHK];      /* written tensors that are analysed */
  int nchk;
  bind binds[MAXCHK * MAXNEST];
  int nbinds;
  int32_t line;
} pstate;

static int32_t nin(const pstate *s, int32_t r) {
  return asc__dep_nin(&s->d, r);
}

static const asc__irins *din(const pstate *s, int32_t r) {
  return asc__dep_din(&s->d, r);
}

static bool isiv(const pstate *s, int32_t r) {
  return asc__dep_level(&s->d, r) >= 0;
}

/* True when a >= 0 whatever the symbols: non-negative coefficients on
 * products of extents. */
static bool nonneg(const asc__affine *a) {
  for (int k = 0; k < a->n; k++) {
    if (a->t[k].c < 0 || a->t[k].iv >= 0)
      return false;
    for (int q = 0; q < a->t[k].ns; q++) {
      int32_t t;
      int axis;
      bool stride;
      if (!asc__dep_shape_of(a->t[k].s[q], &t, &axis, &stride) || stride)
        return false;
    }
  }
  return true;
}

/* --------------------------------------------------------- nest facts */

static void add_access(pstate *s, asc__irins *i, int kind) {
  s->acc = asc__arena_grow(s->c, s->acc, s->nacc, &s->capacc, sizeof *s->acc,
                           16);
  memset(&s->acc[s->nacc], 0, sizeof s->acc[s->nacc]);
  s->acc[s->nacc].ins = i;
  s->acc[s->nacc].t = i->args[0].reg;
  s->acc[s->nacc].kind = kind;
  s->nacc++;
}

/* Collects tensor accesses; returns a reason when the nest holds
 * something that keeps it serial. */
static const char *scan_nest(pstate *s, asc__irblock *b, int depth) {
  for (asc__irins *i = b->first; i; i = i->next) {
    const char *why = NULL;
    switch (i->op) {
    case ASC_IR_RET:
      return "a return leaves the loop";
    case ASC_IR_BARRIER:
      return "barrier inside the loop";
    case ASC_IR_PFOR:
      return "it holds a parallel loop";
    case ASC_IR_SHARED_ARRAY:
      return "shared_array inside the loop";
    case ASC_IR_GEMM:
      return "a matrix product (asc_krt.gemm) inside the loop";
    case ASC_IR_GEMM_EXACT:
      return "a recognised matrix product (gemm_exact), which splits its "
             "rows over the team itself, inside the loop";
    case ASC_IR_LINALG:
      return "an np.linalg call (asc_krt.linalg) inside the loop";
    case ASC_IR_LOAD:
    case ASC_IR_STORE:
    case ASC_IR_ATOMIC:
    case ASC_IR_CAS:
    case ASC_IR_LOCK:   /* a lock word is an atomic of its own */
    case ASC_IR_UNLOCK:
      if (nin(s, i->args[0].reg) == 0)
        add_access(s, i, i->op == ASC_IR_LOAD    ? 0
                         : i->op == ASC_IR_STORE ? 1
                                                 : 2);
      break;
    default:
      break;
    }
    (void)depth;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      if ((why = scan_nest(s, &i->body[k], depth + 1)) != NULL)
        return why;
  }
  return NULL;
}

/* A break of the loop whose body b is. */
static bool has_break(const asc__irblock *b, int depth) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->op == ASC_IR_BREAK && depth == 0)
      return true;
    for (int k = 0; k < asc__ir_nregions(i); k++) {
      bool loop = i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR ||
                  i->op == ASC_IR_LOOP;
      if (has_break(&i->body[k], depth + (loop ? 1 : 0)))
        return true;
    }
  }
  return false;
}

/* ------------------------------------------------------ scalar flow */

static bool reads(const asc__irins *i, int32_t r) {
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == r)
      return true;
  return false;
}

/* Forward flow of one register r through structured code: is it read
 * before it is surely assigned?  `defd` is "assigned on every path so
 * far"; a branch that jumps away does not weaken the join.  Jumps at depth
 * 0 (break/continue of the enclosing loop, raise) taken before r is
 * assigned are remembered: the code they reach is not scanned here. */
typedef struct flow {
  int32_t r;
  bool use;          /* read while not surely assigned */
  bool jmp_undef;    /* a jump at depth 0 (or a raise) before assigning */
  bool brk_undef;    /* a break at depth 0 before assigning */
  bool raise_undef;  /* a raise before assigning */
} flow;

static bool fl_block(flow *F, const asc__irins *i, bool *defd, int depth) {
  for (; i; i = i->next) {
    switch (i->op) {
    case ASC_IR_IF: {
      bool d1 = *defd, d2 = *defd, ft1, ft2;
      if (reads(i, F->r) && !*defd)
        F->use = true;
      ft1 = fl_block(F, i->body[0].first, &d1, depth);
      ft2 = fl_block(F, i->body[1].first, &d2, depth);
      if (!ft1 && !ft2)
        return false;
      *defd = (ft1 ? d1 : true) && (ft2 ? d2 : true);
      break;
    }
    case ASC_IR_FOR:
    case ASC_IR_PFOR: {
      bool d = *defd;
      if (reads(i, F->r) && !*defd)
        F->use = true;
      for (int32_t k = 0; k < i->nred; k++)
        if (i->red[k].reg == F->r && !*defd)
          F->use = true;
      if (i->dst != F->r)
        (void)fl_block(F, i->body[0].first, &d, depth + 1);
      break;
    }
    case ASC_IR_LOOP: {
      /* the body runs at least once; the code after it is reached by
       * its breaks */
      flow g;
      bool d = *defd;
      memset(&g, 0, sizeof g);
      g.r = F->r;
      (void)fl_block(&g, i->body[0].first, &d, 0);
      F->use |= g.use;
      F->jmp_undef |= g.raise_undef;
      F->raise_undef |= g.raise_undef;
      if (!g.brk_undef)
        *defd = true;
      break;
    }
    case ASC_IR_TRY: {
      /* conservative: assignments in a try do not count after it */
      for (int k = 0; k < 3; k++) {
        bool d = *defd;
        (void)fl_block(F, i->body[k].first, &d, depth);
      }
      break;
    }
    case ASC_IR_CRITICAL: {
      bool d = *defd;
      if (!fl_block(F, i->body[0].first, &d, depth))
        return false;
      *defd = d;
      break;
    }
    case ASC_IR_BREAK:
      if (depth == 0 && !*defd) {
        F->jmp_undef = true;
        F->brk_undef = true;
      }
      return false;
    case ASC_IR_CONTINUE:
      if (depth == 0 && !*defd)
        F->jmp_undef = true;
      return false;
    case ASC_IR_RAISE:
      if (reads(i, F->r) && !*defd) /* a value in the message */
        F->use = true;
      if (!*defd)
        F->jmp_undef = F->raise_undef = true;
      return false;
    case ASC_IR_RET:
      return false;
    default:
      if (reads(i, F->r) && !*defd)
        F->use = true;
      if (i->dst == F->r)
        *defd = true;
      break;
    }
  }
  return true;
}

/* From instruction i on: is r read before it is surely assigned (USE),
 * surely assigned before anything after could read it (DEF), or neither
 * (the caller keeps looking further out)? */
static int scan_seq(const asc__irins *i, int32_t r) {
  flow F;
  bool defd = false, ft;
  memset(&F, 0, sizeof F);
  F.r = r;
  ft = fl_block(&F, i, &defd, 0);
  if (F.use)
    return S_USE;
  if ((ft ? defd : true) && !F.jmp_undef)
    return S_DEF;
  return S_NONE;
}

static bool occurs(const asc__irblock *b, int32_t r) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->dst == r || reads(i, r))
      return true;
    for (int32_t k = 0; k < i->nred; k++)
      if (i->red[k].reg == r)
        return true;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      if (occurs(&i->body[k], r))
        return true;
  }
  return false;
}

/* May the value r has after instruction n (in cx->b) be read later? */
static bool live_after(int32_t r, const asc__irins *n, const pctx *cx) {
  const asc__irins *p;
  int res = scan_seq(n->next, r);
  if (res != S_NONE)
    return res == S_USE;
  if (cx == NULL || cx->owner == NULL)
    return false;
  p = cx->owner;
  if ((p->op == ASC_IR_FOR || p->op == ASC_IR_PFOR ||
       p->op == ASC_IR_LOOP) &&
      scan_seq(cx->b->first, r) == S_USE)
    return true;
  if (p->op == ASC_IR_TRY &&
      (occurs(&p->body[1], r) || occurs(&p->body[2], r)))
    return true;
  return live_after(r, p, cx->up);
}

static void count_occ(const asc__irblock *b, int32_t r, int *n) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->dst == r)
      (*n)++;
    for (int32_t k = 0; k < i->nargs; k++)
      if (i->args[k].kind == ASC_IRV_REG && i->args[k].reg == r)
        (*n)++;
    for (int32_t k = 0; k < i->nred; k++)
      if (i->red[k].reg == r)
        (*n) += 2;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      count_occ(&i->body[k], r, n);
  }
}

/* Whether fastmath bits fm let a floating-point reduction with op run in
 * any order: + and * need reassoc (which also gives nsz: neither compiler
 * reassociates with signed zeros); min and max differ between orders only
 * for NaNs and the sign of zero, so they need nnan and nsz. */
static bool float_reorder_ok(unsigned fm, int op) {
  if (op == ASC_IR_ADD || op == ASC_IR_MUL)
    return (fm & ASC_FASTMATH_REASSOC) != 0;
  return (fm & (ASC_FASTMATH_NNAN | ASC_FASTMATH_NSZ)) ==
         (ASC_FASTMATH_NNAN | ASC_FASTMATH_NSZ);
}

static bool red_op_ok(int op, int dt) {
  switch (op) {
  case ASC_IR_ADD:
  case ASC_IR_MUL:
  case ASC_IR_MIN:
  case ASC_IR_MAX:
    return dt != ascBool;
  case ASC_IR_AND:
  case ASC_IR_OR:
  case ASC_IR_XOR:
    return !asc__dt_is_float(dt) && !asc__dt_is_complex(dt);
  default:
    return false;
  }
}

/* `r = op r, x` or `r = mov t` with `t = op r, x` (t used once): the
 * update's op, or -1. */
static int update_op(const pstate *s, const asc__irins *i, int32_t r) {
  const asc__irins *d = i;
  int op;
  if (i->op == ASC_IR_MOV) {
    int32_t t;
    if (i->args[0].kind != ASC_IRV_REG)
      return -1;
    t = i->args[0].reg;
    if (isiv(s, t) || nin(s, t) != 1 || din(s, t) == NULL ||
        s->f->regs[t].ndefs != 1 ||
        s->f->regs[t].nuses != 1)
      return -1;
    d = din(s, t);
  }
  op = d->op;
  if (d->nargs != 2 || !red_op_ok(op, s->f->regs[r].ty.dtype))
    return -1;
  if (d->args[0].kind == ASC_IRV_REG && d->args[0].reg == r &&
      !(d->args[1].kind == ASC_IRV_REG && d->args[1].reg == r))
    return op;
  if (d->args[1].kind == ASC_IRV_REG && d->args[1].reg == r &&
      !(d->args[0].kind == ASC_IRV_REG && d->args[0].reg == r))
    return op;
  return -1;
}

static int find_updates(const pstate *s, const asc__irblock *b, int32_t r,
                        int *op, int *n) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->dst == r && i->op != ASC_IR_FOR && i->op != ASC_IR_PFOR) {
      int o = update_op(s, i, r);
      if (o < 0 || (*op >= 0 && *op != o))
        return -1;
      *op = o;
      (*n)++;
    }
    for (int k = 0; k < asc__ir_nregions(i); k++)
      if (find_updates(s, &i->body[k], r, op, n) < 0)
        return -1;
  }
  return 0;
}

/* A reduction: every assignment in the nest is an update with one op, r
 * is read nowhere else in the nest, and it has a value before it. */
static int reduction_op(const pstate *s, asc__irins *nest, int32_t r) {
  int op = -1, n = 0, occ = 0;
  const asc__irreg *g = &s->f->regs[r];
  if (g->ty.kind != ASC_IRK_SCALAR || g->ndefs <= nin(s, r))
    return -1;
  if (find_updates(s, &nest->body[0], r, &op, &n) < 0 || n == 0)
    return -1;
  count_occ(&nest->body[0], r, &occ);
  return occ == 2 * n ? op : -1;
}

/* ------------------------------------------------------- dependences */

static const char *rn(pstate *s, int32_t r) {
  return asc__arena_printf(s->c, "%%%s", s->f->regs[r].name);
}

/* Is x inside block b (at any depth)? */
static bool inside(const asc__irblock *b, const asc__irins *x) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i == x)
      return true;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      if (inside(&i->body[k], x))
        return true;
  }
  return false;
}

/* Is level lq the loop over one tile of loop Lp (level lp), as the
 * interchange pass writes it:
 *
 *   for %j0 = lo, hi, S { %w = min (hi - j0), T   for %jj = 0, %w, 1 }
 *
 * with T <= S?  Then j0 + jj stays in [j0, min(j0 + S, hi)): iterations
 * of j0 touch disjoint elements through it, and within the range the
 * checks of j0 alone give. */
static bool tile_of(pstate *s, const asc__irins *Lp, int lp, int lq) {
  const int32_t *ivs;
  int32_t n, w;
  const asc__irins *Lq = NULL, *m;
  asc__affine want, hi, x, piv;
  if (Lp->args[2].kind != ASC_IRV_CONST)
    return false;
  ivs = asc__regtab_keys(&s->d.lv, &n);
  for (int32_t k = 0; k < n && Lq == NULL; k++)
    if (asc__dep_level(&s->d, ivs[k]) == lq)
      Lq = din(s, ivs[k]);
  if (Lq == NULL || Lq->op != ASC_IR_FOR || !inside(&Lp->body[0], Lq) ||
      !(Lq->args[0].kind == ASC_IRV_CONST && Lq->args[0].c.i == 0) ||
      !(Lq->args[2].kind == ASC_IRV_CONST && Lq->args[2].c.i == 1) ||
      Lq->args[1].kind != ASC_IRV_REG)
    return false;
  w = Lq->args[1].reg;
  if (nin(s, w) != 1 || (m = din(s, w)) == NULL || m->op != ASC_IR_MIN ||
      m->nargs != 2)
    return false;
  /* want = hi - j0 */
  piv.n = 1;
  piv.t[0].c = 1;
  piv.t[0].iv = (int16_t)lp;
  piv.t[0].ns = 0;
  if (!asc__dep_affine(&s->d, Lp->args[1], &hi) ||
      !asc__dep_add(&want, &hi, &piv, -1))
    return false;
  for (int k = 0; k < 2; k++) {
    asc__irval t = m->args[k], o = m->args[1 - k];
    if (t.kind == ASC_IRV_CONST && t.c.i >= 1 &&
        t.c.i <= Lp->args[2].c.i && asc__dep_affine(&s->d, o, &x) &&
        asc__dep_eq(&x, &want))
      return true;
  }
  return false;
}

/* The axis of access a that holds parallel index p: 0 ok, 1 p absent,
 * 2 mixed with other loop indices.  When p is the nest's outermost loop,
 * a tile index of p (tile_of) with p's coefficient is p's own: it is left
 * out of *c.  (Inside an outer pfor a tile loop stays serial, where
 * unrolljam takes rows through it.) */
static int axis_of(pstate *s, const access *a, int32_t p, int *axis,
                   int64_t *alpha, asc__affine *c) {
  int nd = s->f->regs[a->t].ty.ndim;
  int lp = asc__dep_level(&s->d, p);
  *axis = -1;
  for (int k = 0; k < nd; k++) {
    const asc__affine *e = &a->e[k];
    bool has = false, other = false;
    int64_t al = 0;
    asc__affine rest;
    rest.n = 0;
    for (int q = 0; q < e->n; q++) {
      const asc__aterm *t = &e->t[q];
      if (t->iv == lp) {
        if (t->ns != 0)
          return 2;
        has = true;
        al = t->c;
      }
    }
    for (int q = 0; q < e->n; q++) {
      const asc__aterm *t = &e->t[q];
      if (t->iv == lp)
        continue;
      if (t->iv >= 0) {
        if (lp == 0 && has && t->ns == 0 && t->c == al &&
            tile_of(s, din(s, p), lp, t->iv))
          continue;
        other = true;
      }
      rest.t[rest.n++] = *t;
    }
    if (!has)
      continue;
    if (*axis >= 0 || other || al <= 0)
      return 2;
    *axis = k;
    *alpha = al;
    *c = rest;
  }
  return *axis >= 0 ? 0 : 1;
}

static bind *find_bind(pstate *s, int32_t t, int lvl) {
  for (int k = 0; k < s->nbinds; k++)
    if (s->binds[k].t == t && s->binds[k].lvl == lvl)
      return &s->binds[k];
  s->binds[s->nbinds].t = t;
  s->binds[s->nbinds].lvl = lvl;
  s->binds[s->nbinds].set = false;
  return &s->binds[s->nbinds++];
}

/* Level lvl (loop L[lvl], index p) against every access of the analysed
 * tensors; NULL when each iteration of p touches its own elements. */
static const char *level_ok(pstate *s, asc__irins *const *L, int lvl) {
  int32_t p = L[lvl]->dst;
  for (int k = 0; k < s->nacc; k++) {
    access *a = &s->acc[k];
    bool checked = false;
    int axis, r;
    int64_t alpha = 0;
    asc__affine c;
    bind *b;
    const char *what = a->kind == 0 ? "load from" : a->kind == 1 ? "store to"
                                                                  : "atomic on";
    for (int q = 0; q < s->nchk; q++)
      checked |= s->chk[q] == a->t;
    if (!checked)
      continue;
    if (!a->ok)
      return asc__arena_printf(s->c, "%s %s at an offset not affine in %s",
                               what, rn(s, a->t), rn(s, p));
    r = axis_of(s, a, p, &axis, &alpha, &c);
    if (r == 1)
      return asc__arena_printf(
          s->c, "%s %s does not depend on %s (iterations share elements)",
          what, rn(s, a->t), rn(s, p));
    if (r == 2)
      return asc__arena_printf(
          s->c, "%s %s mixes %s with other loop indices on one axis", what,
          rn(s, a->t), rn(s, p));
    b = find_bind(s, a->t, lvl);
    if (!b->set) {
      b->set = true;
      b->axis = axis;
      b->alpha = alpha;
      b->c = c;
    } else if (b->axis != axis || b->alpha != alpha || !asc__dep_eq(&b->c, &c)) {
      return asc__arena_printf(
          s->c, "%s %s at another offset along %s than its other accesses "
                "(one iteration may touch what another writes)",
          what, rn(s, a->t), rn(s, p));
    }
  }
  return NULL;
}

/* ------------------------------------------------------- building IR */

static int32_t emit2(pstate *s, asc__irblock *b, int op, int dt,
                     asc__irval x, asc__irval y, const char *hint) {
  return asc__ir_bin_named(s->c, s->f, b, op, dt, x, y, hint, s->line);
}

static int32_t emit1(pstate *s, asc__irblock *b, int op, int dt,
                     asc__irval x, const char *hint) {
  return asc__ir_un_named(s->c, s->f, b, op, dt, x, hint, s->line);
}

/* The value of symbol y in the checks: a register, or for a shape a
 * `dim` / `stride` built in b once per nest. */
static asc__irval sym_val(pstate *s, asc__irblock *b, int32_t y) {
  asc__irins *i;
  int32_t t, r;
  int k;
  bool stride;
  if (!asc__dep_shape_of(y, &t, &k, &stride))
    return asc__irv_reg(y);
  if ((r = (int32_t)asc__regtab_get(&s->shape, -1 - y)) > 0)
    return asc__irv_reg(r - 1);
  r = asc__ir_reg(s->c, s->f, asc__irt_scalar(ascInt64),
                  stride ? "stride" : "dim");
  i = asc__ir_ins(s->c, stride ? ASC_IR_STRIDE : ASC_IR_DIM, r, 1, s->line);
  i->args[0] = asc__irv_reg(t);
  i->aux = k;
  asc__ir_append(b, i);
  asc__regtab_set(&s->shape, -1 - y, r + 1);
  return asc__irv_reg(r);
}

/* Sum of |c| * factors over the terms of p with the sign wanted (p has
 * no loop index: the checks run before the loops). */
static asc__irval mat_side(pstate *s, asc__irblock *b, const asc__affine *p,
                           int sign) {
  asc__irval acc;
  bool any = false;
  acc = asc__irv_int(ascInt64, 0);
  for (int k = 0; k < p->n; k++) {
    const asc__aterm *t = &p->t[k];
    asc__irval v;
    bool have = false;
    int64_t c = t->c < 0 ? -t->c : t->c;
    if ((t->c < 0) != (sign < 0))
      continue;
    ASC_CHECK(s->c, t->iv < 0);
    for (int q = 0; q < t->ns; q++) {
      asc__irval f = sym_val(s, b, t->s[q]);
      v = have ? asc__irv_reg(emit2(s, b, ASC_IR_MUL, ascInt64, v, f, "chk"))
               : f;
      have = true;
    }
    if (!have)
      v = asc__irv_int(ascInt64, c);
    else if (c != 1)
      v = asc__irv_reg(emit2(s, b, ASC_IR_MUL, ascInt64, v,
                             asc__irv_int(ascInt64, c), "chk"));
    acc = any ? asc__irv_reg(emit2(s, b, ASC_IR_ADD, ascInt64, acc, v, "chk"))
              : v;
    any = true;
  }
  return acc;
}

/* ok && (p >= 0), built in b. */
static asc__irval check_nonneg(pstate *s, asc__irblock *b,
                               const asc__affine *p, asc__irval ok) {
  asc__irval lhs = mat_side(s, b, p, 1), rhs = mat_side(s, b, p, -1);
  asc__irval g = asc__irv_reg(emit2(s, b, ASC_IR_GE, ascInt64, lhs, rhs,
                                    "ok"));
  if (ok.kind == ASC_IRV_NONE)
    return g;
  return asc__irv_reg(emit2(s, b, ASC_IR_AND, ascBool, ok, g, "ok"));
}

/* ok && "tensor t does not overlap itself": going outwards, each axis of
 * extent > 1 steps over everything the inner axes span. */
static asc__irval check_overlap(pstate *s, asc__irblock *b, int32_t t,
                                asc__irval ok) {
  const asc__irreg *g = &s->f->regs[t];
  int nd = g->ty.ndim;
  asc__irval span = asc__irv_int(ascInt64, 1);
  for (int k = nd - 1; k >= 0; k--) {
    asc__irval d = sym_val(s, b, asc__dep_shape(t, k, false));
    asc__irval st, as, good;
    if (k == nd - 1 && (g->ty.flags & ASC_IRT_CONTIG)) {
      if (k > 0)
        span = asc__irv_reg(emit2(s, b, ASC_IR_MAX, ascInt64, d,
                                  asc__irv_int(ascInt64, 1), "span"));
      continue;
    }
    st = sym_val(s, b, asc__dep_shape(t, k, true));
    as = asc__irv_reg(emit1(s, b, ASC_IR_ABS, ascInt64, st, "chk"));
    good = asc__irv_reg(emit2(
        s, b, ASC_IR_OR, ascBool,
        asc__irv_reg(emit2(s, b, ASC_IR_LE, ascInt64, d,
                           asc__irv_int(ascInt64, 1), "chk")),
        asc__irv_reg(emit2(s, b, ASC_IR_GE, ascInt64, as, span, "chk")),
        "ok"));
    ok = ok.kind == ASC_IRV_NONE
             ? good
             : asc__irv_reg(emit2(s, b, ASC_IR_AND, ascBool, ok, good, "ok"));
    if (k > 0) {
      asc__irval d1 = asc__irv_reg(
          emit2(s, b, ASC_IR_SUB, ascInt64, d, asc__irv_int(ascInt64, 1),
                "chk"));
      d1 = asc__irv_reg(emit2(s, b, ASC_IR_MAX, ascInt64, d1,
                              asc__irv_int(ascInt64, 0), "chk"));
      span = asc__irv_reg(emit2(
          s, b, ASC_IR_ADD, ascInt64, span,
          asc__irv_reg(emit2(s, b, ASC_IR_MUL, ascInt64, as, d1, "chk")),
          "span"));
    }
  }
  return ok;
}

/* asc__ir_walk over a rename map (int32_t *: -1 keeps the register). */
/* r under map (1 + its new name; 0 keeps it) */
static int32_t mapped(const asc__regtab *map, int32_t r) {
  intptr_t n = asc__regtab_get(map, r);
  return n > 0 ? (int32_t)n - 1 : r;
}

static void rename_ins(asc__irins *i, void *ctx) {
  const asc__regtab *map = ctx;
  if (i->dst >= 0)
    i->dst = mapped(map, i->dst);
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG)
      i->args[k].reg = mapped(map, i->args[k].reg);
  for (int32_t k = 0; k < i->nred; k++)
    i->red[k].reg = mapped(map, i->red[k].reg);
}

static void clear_note(asc__irins *i, void *ctx) {
  ASC_UNUSED(ctx);
  i->note = NULL;
}

/* ---------------------------------------------------------- one nest */

typedef struct nestplan {
  asc__irins *L[MAXNEST];
  int depth;            /* loops in P */
  int kept;             /* 1 when the next loop stays serial for gcc */
  const char *inner_why;
  asc__irred red[16];
  int nred;
} nestplan;

/* Replaces this pass's note on i (about loop L: i itself, or the branch
 * that guards it); a note of an earlier pass (interchange) stays above
 * it. */
static void note_on(pstate *s, asc__irins *i, const asc__irins *L,
                    const char *why) {
  const char *t = asc__arena_printf(s->c, "parallelize: loop %s at line %d %s",
                                    rn(s, L->dst), (int)L->line, why);
  if (i->note != NULL && strncmp(i->note, "parallelize:", 12) != 0 &&
      strstr(i->note, "\nparallelize:") == NULL)
    t = asc__arena_printf(s->c, "%s\n%s", i->note, t);
  i->note = t;
}

static void note(pstate *s, asc__irins *i, const char *why) {
  note_on(s, i, i, why);
}

/* Trip count of L (constant step > 0) as an i64 value built in b. */
static asc__irval trip_of(pstate *s, asc__irblock *b, const asc__irins *L) {
  int64_t st = L->args[2].c.i;
  asc__irval d = L->args[1];
  if (!(L->args[0].kind == ASC_IRV_CONST && L->args[0].c.i == 0))
    d = asc__irv_reg(emit2(s, b, ASC_IR_SUB, ascInt64, L->args[1],
                           L->args[0], "trip"));
  if (st != 1) {
    d = asc__irv_reg(emit2(s, b, ASC_IR_ADD, ascInt64, d,
                           asc__irv_int(ascInt64, st - 1), "trip"));
    d = asc__irv_reg(emit2(s, b, ASC_IR_FLOORDIV, ascInt64, d,
                           asc__irv_int(ascInt64, st), "trip"));
  }
  return asc__irv_reg(emit2(s, b, ASC_IR_MAX, ascInt64, d,
                            asc__irv_int(ascInt64, 0), "trip"));
}

/* The collapsed loop replacing L[0..m-1], built with its set-up in pre. */
static asc__irins *collapse(pstate *s, nestplan *np, int m,
                            asc__irblock *pre) {
  asc__irval trip[MAXNEST], n = asc__irv_int(ascInt64, 1);
  asc__irval tu[MAXNEST];
  asc__irins *x;
  asc__irval u;
  int32_t it;
  for (int j = 0; j < m; j++) {
    trip[j] = trip_of(s, pre, np->L[j]);
    n = j == 0 ? trip[j]
               : asc__irv_reg(emit2(s, pre, ASC_IR_MUL, ascInt64, n, trip[j],
                                    "n"));
    /* The divisors of the flat index: the loop runs only when n > 0,
     * so every trip is >= 1 there, and saying so (max 1) spares the
     * ZeroDivisionError test of each division. */
    if (j > 0)
      tu[j] = asc__irv_reg(emit1(
          s, pre, ASC_IR_CAST, ascUInt64,
          asc__irv_reg(emit2(s, pre, ASC_IR_MAX, ascInt64, trip[j],
                             asc__irv_int(ascInt64, 1), "trip")),
          "tripu"));
  }
  it = asc__ir_reg(s->c, s->f, asc__irt_scalar(ascInt64), "it");
  x = asc__ir_ins(s->c, ASC_IR_PFOR, it, 3, np->L[0]->line);
  x->args[0] = asc__irv_int(ascInt64, 0);
  x->args[1] = n;
  x->args[2] = asc__irv_int(ascInt64, 1);
  /* indices back from the flat one, innermost fastest */
  u = asc__irv_reg(emit1(s, &x->body[0], ASC_IR_CAST, ascUInt64,
                         asc__irv_reg(it), "u"));
  for (int j = m - 1; j >= 0; j--) {
    asc__irins *L = np->L[j];
    asc__irval q = u, v;
    asc__irins *d;
    if (j > 0) {
      q = asc__irv_reg(emit2(s, &x->body[0], ASC_IR_MOD, ascUInt64, u, tu[j],
                             "q"));
      u = asc__irv_reg(emit2(s, &x->body[0], ASC_IR_FLOORDIV, ascUInt64, u,
                             tu[j], "u"));
    }
    v = asc__irv_reg(emit1(s, &x->body[0], ASC_IR_CAST, ascInt64, q, "q"));
    if (L->args[2].c.i != 1)
      v = asc__irv_reg(emit2(s, &x->body[0], ASC_IR_MUL, ascInt64, v,
                             L->args[2], "q"));
    d = asc__ir_ins(s->c, ASC_IR_ADD, L->dst, 2, L->line);
    d->args[0] = L->args[0];
    d->args[1] = v;
    if (L->args[0].kind == ASC_IRV_CONST && L->args[0].c.i == 0) {
      d->op = ASC_IR_MOV;
      d->nargs = 1;
      d->args[0] = v;
    }
    asc__ir_append(&x->body[0], d);
  }
  /* the bodies: each level's set-up, then the innermost body */
  for (int j = 0; j < m; j++) {
    asc__irblock *b = &np->L[j]->body[0];
    if (j + 1 < m)
      asc__ir_remove(b, np->L[j + 1]);
    asc__ir_splice(&x->body[0], NULL, b);
  }
  return x;
}

/* seen[r]: 1 when r's first occurrence in b (in text order) is an
 * assignment by an instruction at depth 0 that does not read it, 2 when
 * it is anything else. */
static void first_seen(const asc__irblock *b, asc__regtab *seen, int depth) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    for (int32_t k = 0; k < i->nargs; k++)
      if (i->args[k].kind == ASC_IRV_REG &&
          !asc__regtab_get(seen, i->args[k].reg))
        asc__regtab_set(seen, i->args[k].reg, 2);
    for (int32_t k = 0; k < i->nred; k++)
      if (!asc__regtab_get(seen, i->red[k].reg))
        asc__regtab_set(seen, i->red[k].reg, 2);
    if (i->dst >= 0 && !asc__regtab_get(seen, i->dst))
      asc__regtab_set(seen, i->dst,
                      (depth == 0 && asc__ir_nregions(i) == 0) ? 1 : 2);
    for (int k = 0; k < asc__ir_nregions(i); k++)
      first_seen(&i->body[k], seen, depth + 1);
  }
}

/* Does level lvl walk the innermost axis of a contiguous written tensor
 * one element at a time (the loop gcc vectorises)? */
static bool unit_stride(pstate *s, int lvl) {
  for (int k = 0; k < s->nbinds; k++) {
    const bind *b = &s->binds[k];
    const asc__irtype *t = &s->f->regs[b->t].ty;
    if (b->lvl == lvl && b->set && b->alpha == 1 &&
        b->axis == t->ndim - 1 && (t->flags & ASC_IRT_CONTIG))
      return true;
  }
  return false;
}

static bool defines(const asc__irblock *b, int32_t r) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->dst == r)
      return true;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      if (defines(&i->body[k], r))
        return true;
  }
  return false;
}

/* Why inner loop L may not join the collapsed loop: a scalar it assigns,
 * other than an index or a reduction of the nest, is read in an
 * iteration of L before that iteration assigns it (`s = 0` in the outer
 * body, `s += a[i, j]` in L: a running value, which one flat parallel
 * loop would lose); NULL when none is. */
static const char *carried_in(pstate *s, const asc__irins *L,
                              const nestplan *np, const int32_t *defd,
                              int32_t ndefd) {
  for (int32_t q = 0; q < ndefd; q++) {
    int32_t r = defd[q];
    bool red = false;
    if (isiv(s, r))
      continue;
    for (int k = 0; k < np->nred; k++)
      red |= np->red[k].reg == r;
    if (red || !defines(&L->body[0], r))
      continue;
    if (scan_seq(L->body[0].first, r) == S_USE)
      return asc__arena_printf(s->c, "%s is carried from one of its "
                                     "iterations to the next", rn(s, r));
  }
  return NULL;
}

/* Tries nest L1 (a serial for in cx->b); true when it became parallel. */
static bool try_nest(pstate *s, asc__irins *L1, const pctx *cx) {
  asc__irfunc *f = s->f;
  int32_t nr;
  nestplan np;
  const char *why;
  int m;
  bool guarded = false;
  asc__irval ok;
  asc__irblock chk = {NULL, NULL};
  asc__irins *top;
  /* the run-time checks, for the note; arena text, as the pass may
   * unwind (the budgets) with it half made */
  const char *desc = "";
  asc__regtab first_top, occ_in;
  const int32_t *defd;
  int32_t ndefd, size = (int32_t)asc__ir_size(&L1->body[0]);
  asc__irins *before = L1->prev, *after = L1->next;

  /* What a nest costs is its size: the tables hold its registers only,
   * and f's counts are kept current across each rewrite. */
  asc__cctx_tick(s->c, "parallelize");
  memset(&np, 0, sizeof np);
  nr = f->nregs;
  asc__dep_init_all(&s->d, s->c, f, L1);
  asc__regtab_init(s->c, &s->shape, 0);
  s->nacc = 0;
  s->nchk = 0;
  s->nbinds = 0;
  s->line = L1->line;
  defd = asc__dep_defined(&s->d, &ndefd);

  if ((why = scan_nest(s, &L1->body[0], 0)) != NULL)
    goto serial;
  if (has_break(&L1->body[0], 0)) {
    why = "a break leaves the loop";
    goto serial;
  }
  /* scalars assigned in the nest: private, or reductions.  Two quick
   * answers keep big bodies linear: a register first met as an
   * assignment at the top of the body is assigned before any read, and
   * one that occurs nowhere else is not read after the nest. */
  asc__regtab_init(s->c, &first_top, size);
  asc__regtab_init(s->c, &occ_in, size);
  first_seen(&L1->body[0], &first_top, 0);
  asc__ir_occurrences(&L1->body[0], &occ_in);
  for (int32_t q = 0; q < ndefd; q++) {
    int32_t r = defd[q];
    int op;
    if (isiv(s, r))
      continue;
    if ((op = reduction_op(s, L1, r)) >= 0) {
      /* complex sums round like float ones */
      if ((asc__dt_is_float(f->regs[r].ty.dtype) ||
           asc__dt_is_complex(f->regs[r].ty.dtype)) &&
          !float_reorder_ok(f->fastmath, op)) {
        /* the one rule: docs/parallelize.md, "Reductions and their order" */
        why = asc__arena_printf(
            s->c, "%s is a floating-point reduction, which a plain range "
                  "loop keeps in Python's order (asc.prange or fastmath "
                  "reorders it)",
            rn(s, r));
        goto serial;
      }
      if (np.nred == (int)ASC_ARRAY_SIZE(np.red)) {
        why = "too many reductions";
        goto serial;
      }
      np.red[np.nred].reg = r;
      np.red[np.nred].op = (uint8_t)op;
      np.nred++;
      continue;
    }
    if (asc__regtab_get(&first_top, r) != 1 &&
        scan_seq(L1->body[0].first, r) == S_USE) {
      why = asc__arena_printf(
          s->c,
          f->regs[r].ndefs > nin(s, r)
              ? "%s is carried from one iteration to the next (not a "
                "recognised reduction)"
              : "%s is carried from one iteration to the next",
          rn(s, r));
      goto serial;
    }
    if (f->regs[r].ndefs + f->regs[r].nuses > asc__regtab_get(&occ_in, r) &&
        live_after(r, L1, cx)) {
      why = asc__arena_printf(s->c, "%s is assigned in the loop and used "
                                    "after it", rn(s, r));
      goto serial;
    }
  }
  /* tensors written in the nest */
  for (int k = 0; k < s->nacc; k++) {
    access *a = &s->acc[k];
    bool plain = false, known = false;
    if (a->kind == 0)
      continue;
    for (int q = 0; q < s->nacc; q++)
      if (s->acc[q].t == a->t && s->acc[q].kind != 2)
        plain = true;
    if (a->kind == 2 && !plain)
      continue; /* only atomics: any order is fine */
    for (int q = 0; q < s->nchk; q++)
      known |= s->chk[q] == a->t;
    if (known)
      continue;
    if (!asc__dep_known_tensor(f, a->t)) {
      why = asc__arena_printf(s->c, "it writes %s, an array all iterations "
                                    "share", rn(s, a->t));
      goto serial;
    }
    if (s->nchk == MAXCHK) {
      why = "it writes too many tensors";
      goto serial;
    }
    s->chk[s->nchk++] = a->t;
  }
  for (int k = 0; k < s->nacc; k++) {
    access *a = &s->acc[k];
    asc__affine off;
    bool checked = false;
    for (int q = 0; q < s->nchk; q++)
      checked |= s->chk[q] == a->t;
    if (checked)
      a->ok = f->regs[a->t].ty.ndim > 0 &&
              asc__dep_affine(&s->d, a->ins->args[1], &off) &&
              asc__dep_split(&s->d, a->t, &off, a->e);
  }
  /* the prefix of the nest that is independent */
  np.L[0] = L1;
  for (m = 0; m < MAXNEST; m++) {
    asc__irins *L = np.L[m];
    const char *w = NULL;
    if (m > 0) {
      /* perfect: the previous body is pure set-up ending in L */
      asc__irins *prev = np.L[m - 1];
      for (asc__irins *i = prev->body[0].first; i && i != L; i = i->next)
        if (i->dst < 0 || !(asc__irop_flags(i->op) & ASC_OPF_PURE) ||
            asc__ir_may_trap(f, i))
          w = "its enclosing body does more than set it up";
      if (!w && s->nchk == 0)
        w = "only loops that write tensors are collapsed";
      for (int k = 0; k < 2 && !w; k++)
        if (L->args[k].kind == ASC_IRV_REG && nin(s, L->args[k].reg) > 0)
          w = "its bounds depend on the outer loops";
      if (!w && has_break(&L->body[0], 0))
        w = "a break leaves it";
      if (!w)
        w = carried_in(s, L, &np, defd, ndefd);
    }
    if (!w && s->nchk > 0 && f->regs[L->dst].ty.dtype != ascInt64)
      w = "its index is not i64";
    if (!w && s->nchk > 0 &&
        !(L->args[2].kind == ASC_IRV_CONST && L->args[2].c.i > 0))
      w = "its step is not a positive constant";
    if (!w)
      w = level_ok(s, np.L, m);
    if (w) {
      if (m == 0) {
        why = w;
        goto serial;
      }
      np.inner_why = asc__arena_printf(s->c, "loop %s stays serial inside: %s",
                                       rn(s, L->dst), w);
      break;
    }
    /* next level */
    if (m + 1 == MAXNEST || L->body[0].last == NULL ||
        L->body[0].last->op != ASC_IR_FOR || L->body[0].last->unroll) {
      m++;
      break;
    }
    np.L[m + 1] = L->body[0].last;
  }
  if (m == 2 && !asc__ir_has_loop(&np.L[1]->body[0]) &&
      asc__tile_wants(s->c, f, np.L[0], np.L[1])) {
    /* the tile pass blocks the two loops: keep the inner one serial */
    m--;
    np.inner_why = asc__arena_printf(
        s->c, "loop %s stays serial inside: the tile pass blocks it with "
              "loop %s", rn(s, np.L[1]->dst), rn(s, np.L[0]->dst));
  } else if (m >= 2 && !asc__ir_has_loop(&np.L[m - 1]->body[0]) &&
             unit_stride(s, m - 1)) {
    /* the innermost loop is gcc's to vectorise: keep it serial */
    m--;
    np.inner_why = asc__arena_printf(
        s->c, "loop %s stays serial inside: innermost, unit stride, left "
              "for the C compiler to vectorise",
        rn(s, np.L[m]->dst));
  }
  np.depth = m;

  /* launch-time checks for what is not proven */
  ok.kind = ASC_IRV_NONE;
  for (int q = 0; q < s->nchk; q++) {
    int32_t t = s->chk[q];
    for (int j = 0; j < m; j++) {
      bind *b = find_bind(s, t, j);
      asc__irins *L = np.L[j];
      asc__affine lo, hi, lowp, highp, tmp, al, dimp, one, hm1, ahi;
      /* alpha*lo + C >= 0 and dim - (alpha*(hi-1) + C) - 1 >= 0 */
      ASC_CHECK(s->c, b->set);
      if (!asc__dep_affine(&s->d, L->args[0], &lo) ||
          !asc__dep_affine(&s->d, L->args[1], &hi)) {
        why = "its bounds are not affine";
        goto serial;
      }
      asc__dep_const(&al, b->alpha);
      asc__dep_const(&one, 1);
      asc__dep_symbol(&dimp, asc__dep_shape(t, b->axis, false));
      if (!asc__dep_mul(&tmp, &al, &lo) ||
          !asc__dep_add(&lowp, &tmp, &b->c, 1)) {
        why = "index arithmetic too large to check";
        goto serial;
      }
      if (!nonneg(&lowp)) {
        ok = check_nonneg(s, &chk, &lowp, ok);
        desc = asc__arena_printf(s->c, "%s%s%s >= 0 on axis %d of %s", desc,
                                 *desc ? ", " : "", rn(s, L->dst), b->axis,
                                 rn(s, t));
      }
      /* the upper end: proven from hi's form, else checked at launch with
       * the bound register itself, as written */
      for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && L->args[1].kind == ASC_IRV_REG)
          asc__dep_symbol(&hi, L->args[1].reg);
        if (!asc__dep_add(&hm1, &hi, &one, -1) ||
            !asc__dep_mul(&ahi, &al, &hm1) ||
            !asc__dep_add(&tmp, &ahi, &b->c, 1) ||
            !asc__dep_add(&tmp, &tmp, &one, 1) ||
            !asc__dep_add(&highp, &dimp, &tmp, -1)) {
          why = "index arithmetic too large to check";
          goto serial;
        }
        if (pass == 0) {
          if (nonneg(&highp))
            break;
          continue;
        }
        ok = check_nonneg(s, &chk, &highp, ok);
        desc = asc__arena_printf(s->c, "%s%s%s within axis %d of %s", desc,
                                 *desc ? ", " : "", rn(s, L->dst), b->axis,
                                 rn(s, t));
      }
    }
    if (m > 0 && !asc__dep_heap_array(f, t) &&
        !(f->regs[t].ty.ndim == 1 && (f->regs[t].ty.flags & ASC_IRT_CONTIG))) {
      ok = check_overlap(s, &chk, t, ok);
      desc = asc__arena_printf(s->c, "%s%s%s does not overlap itself", desc,
                               *desc ? ", " : "", rn(s, t));
    }
  }
  guarded = ok.kind != ASC_IRV_NONE;

  /* rewrite */
  {
    asc__irblock *b = cx->b;
    asc__irins *par;
    asc__irblock pre = {NULL, NULL};
    asc__irins *serial_copy = NULL;
    const char *names = "";

    asc__ir_count_snap(s->c, &s->snap, L1);
    if (guarded) {
      asc__regtab map;
      serial_copy = asc__ir_clone(s->c, L1);
      asc__ir_walk(&serial_copy->body[0], clear_note, NULL);
      asc__regtab_init(s->c, &map, ndefd);
      for (int32_t q = 0; q < ndefd; q++) {
        int32_t r = defd[q];
        bool red = false;
        for (int k = 0; k < np.nred; k++)
          red |= np.red[k].reg == r;
        if (r < nr && !red)
          asc__regtab_set(&map, r,
                          asc__ir_reg(s->c, f, f->regs[r].ty,
                                      f->regs[r].name) + 1);
      }
      {
        asc__irblock one = {NULL, NULL};
        asc__ir_append(&one, serial_copy);
        asc__ir_walk(&one, rename_ins, &map);
        asc__ir_remove(&one, serial_copy);
      }
    }
    for (int j = 0; j < m; j++)
      names = asc__arena_printf(s->c, "%s%s%s", names, j ? ", " : "",
                                rn(s, np.L[j]->dst));

    if (m == 1) {
      par = L1;
      L1->op = ASC_IR_PFOR;
    } else {
      par = collapse(s, &np, m, &pre);
      /* the nest's notes (fuse, interchange, ...) stay with it, the
       * collapsed loops' too */
      par->note = L1->note;
      for (int j = 1; j < m; j++)
        if (np.L[j]->note != NULL)
          par->note = par->note == NULL
                          ? np.L[j]->note
                          : asc__arena_printf(s->c, "%s\n%s", par->note,
                                              np.L[j]->note);
    }
    if (np.nred > 0) {
      par->nred = np.nred;
      par->red = asc__arena_alloc(s->c, sizeof *par->red * (size_t)np.nred);
      memcpy(par->red, np.red, sizeof *par->red * (size_t)np.nred);
    }
    if (guarded) {
      asc__irins *iff = asc__ir_ins(s->c, ASC_IR_IF, -1, 1, L1->line);
      iff->args[0] = ok;
      asc__ir_splice(b, L1, &chk);
      asc__ir_insert_before(b, L1, iff);
      asc__ir_remove(b, L1);
      asc__ir_splice(&iff->body[0], NULL, &pre);
      asc__ir_append(&iff->body[0], par);
      serial_copy->note = FALLBACK_NOTE;
      asc__ir_append(&iff->body[1], serial_copy);
      top = iff;
    } else {
      asc__ir_splice(b, L1, &pre);
      if (par != L1) {
        asc__ir_insert_before(b, L1, par);
        asc__ir_remove(b, L1);
      }
      top = par;
    }
    asc__ir_count_redo(s->c, f, &s->snap, b, before, after);
    /* privates that also occur outside (a reused Python variable): give
     * the parallel body its own copy */
    {
      asc__regtab cnt, map;
      bool any = false;
      asc__regtab_init(s->c, &cnt, size);
      asc__regtab_init(s->c, &map, 0);
      asc__ir_occurrences(&par->body[0], &cnt);
      for (int32_t q = 0; q < ndefd; q++) {
        int32_t r = defd[q];
        bool red = false;
        for (int k = 0; k < np.nred; k++)
          red |= np.red[k].reg == r;
        if (r >= nr || red || r == par->dst)
          continue;
        if (f->regs[r].ndefs + f->regs[r].nuses > asc__regtab_get(&cnt, r)) {
          asc__regtab_set(&map, r,
                          asc__ir_reg(s->c, f, f->regs[r].ty,
                                      f->regs[r].name) + 1);
          any = true;
        }
      }
      if (any) {
        asc__irins *tprev = top->prev, *tnext = top->next;
        asc__ir_count_snap(s->c, &s->snap, top);
        asc__ir_walk(&par->body[0], rename_ins, &map);
        asc__ir_count_redo(s->c, f, &s->snap, b, tprev, tnext);
      }
    }
    {
      const char *t =
          m == 1 ? "becomes a pfor"
                 : asc__arena_printf(s->c, "collapsed %d loops (%s) into one "
                                           "pfor", m, names);
      if (np.nred > 0) {
        t = asc__arena_printf(s->c, "%s with reduce(", t);
        for (int q = 0; q < np.nred; q++)
          t = asc__arena_printf(s->c, "%s%s%s %s", t, q ? ", " : "",
                                asc__irop_name(np.red[q].op),
                                rn(s, np.red[q].reg));
        t = asc__arena_printf(s->c, "%s)", t);
      }
      if (s->nchk > 0) {
        t = asc__arena_printf(s->c, "%s: iterations write disjoint elements "
                                    "of ", t);
        for (int q = 0; q < s->nchk; q++)
          t = asc__arena_printf(s->c, "%s%s%s", t, q ? ", " : "",
                                rn(s, s->chk[q]));
      }
      if (np.inner_why)
        t = asc__arena_printf(s->c, "%s\n  %s", t, np.inner_why);
      if (guarded)
        t = asc__arena_printf(s->c, "%s\n  runs serially unless, at run "
                                    "time: %s", t, desc);
      /* on the pfor itself, an earlier pass's notes stay above it */
      note_on(s, top, L1, t);
    }
    return true;
  }

serial:
  note(s, L1, asc__arena_printf(s->c, "stays serial: %s", why));
  return false;
}

static void walk(pstate *s, asc__irblock *b, asc__irins *owner,
                 const pctx *up) {
  pctx cx;
  cx.b = b;
  cx.owner = owner;
  cx.up = up;
  for (asc__irins *i = b->first, *next; i; i = next) {
    next = i->next;
    switch (i->op) {
    case ASC_IR_FOR:
      if (i->note != NULL && strcmp(i->note, FALLBACK_NOTE) == 0)
        break;
      if (i->wave != 0) /* a wavefront and its sweeps: wavefront.c */
        break;
      if (s->f->may_alias && !i->unroll) {
        /* the proofs assume distinct tensor arguments never share an
         * element; this specialisation was built for ones that do */
        note(s, i, "stays serial, and the loops inside it: tensor "
                   "arguments may overlap (may_alias specialisation)");
        break;
      }
      if (i->unroll || !try_nest(s, i, &cx))
        walk(s, &i->body[0], i, &cx);
      break;
    case ASC_IR_PFOR:
    case ASC_IR_CRITICAL:
      break;
    default:
      for (int k = 0; k < asc__ir_nregions(i); k++)
        walk(s, &i->body[k], i, &cx);
      break;
    }
  }
}

void asc__pass_parallelize(asc__cctx *c, asc__irfunc *f) {
  pstate s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.f = f;
  asc__ir_count(f);
  walk(&s, &f->body, NULL, NULL);
  asc__ir_count(f);
}
