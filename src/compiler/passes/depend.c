/*
 * Dependence analysis on affine tensor accesses (depend.h).
 *
 *   store %c, off1, v     off1 = i*s0 + j        (i a symbol, j level 0)
 *   load  %c, off2        off2 = i*s0 + j - 1
 *
 * Axis 1 of c (contiguous: the terms without a stride factor) holds j in
 * off1 and j - 1 in off2, axis 0 holds i in both: the load at iteration
 * j' reads what the store wrote at j = j' - 1, distance (1).
 */
#include <string.h>

#include "compiler/passes/depend.h"

static bool term_mul(asc__aterm *out, const asc__aterm *a,
                     const asc__aterm *b) {
  int64_t c;
  if (a->iv >= 0 && b->iv >= 0)
    return false;
  if (a->ns + b->ns > 2)
    return false;
  if (__builtin_mul_overflow(a->c, b->c, &c))
    return false;
  out->c = c;
  out->iv = a->iv >= 0 ? a->iv : b->iv;
  out->ns = 0;
  for (int k = 0; k < a->ns; k++)
    out->s[out->ns++] = a->s[k];
  for (int k = 0; k < b->ns; k++)
    out->s[out->ns++] = b->s[k];
  if (out->ns == 2 && out->s[0] > out->s[1]) {
    int32_t t = out->s[0];
    out->s[0] = out->s[1];
    out->s[1] = t;
  }
  return true;
}

static bool same_factors(const asc__aterm *a, const asc__aterm *b) {
  if (a->iv != b->iv || a->ns != b->ns)
    return false;
  for (int k = 0; k < a->ns; k++)
    if (a->s[k] != b->s[k])
      return false;
  return true;
}

/* Adds sgn * t to a, merging like terms and dropping zeros. */
static bool add_term(asc__affine *a, asc__aterm t, int64_t sgn) {
  if (sgn < 0 && __builtin_mul_overflow(t.c, (int64_t)-1, &t.c))
    return false;
  for (int k = 0; k < a->n; k++)
    if (same_factors(&a->t[k], &t)) {
      if (__builtin_add_overflow(a->t[k].c, t.c, &a->t[k].c))
        return false;
      if (a->t[k].c == 0)
        a->t[k] = a->t[--a->n];
      return true;
    }
  if (t.c == 0)
    return true;
  if (a->n == ASC_DEP_MAXT)
    return false;
  a->t[a->n++] = t;
  return true;
}

void asc__dep_const(asc__affine *a, int64_t c) {
  a->n = 0;
  if (c != 0) {
    a->t[0].c = c;
    a->t[0].iv = -1;
    a->t[0].ns = 0;
    a->n = 1;
  }
}

void asc__dep_symbol(asc__affine *a, int32_t s) {
  a->n = 1;
  a->t[0].c = 1;
  a->t[0].iv = -1;
  a->t[0].ns = 1;
  a->t[0].s[0] = s;
}

bool asc__dep_add(asc__affine *out, const asc__affine *a,
                  const asc__affine *b, int64_t sgn) {
  asc__affine r = *a;
  for (int k = 0; k < b->n; k++)
    if (!add_term(&r, b->t[k], sgn))
      return false;
  *out = r;
  return true;
}

bool asc__dep_mul(asc__affine *out, const asc__affine *a,
                  const asc__affine *b) {
  asc__affine r;
  r.n = 0;
  for (int x = 0; x < a->n; x++)
    for (int y = 0; y < b->n; y++) {
      asc__aterm t;
      if (!term_mul(&t, &a->t[x], &b->t[y]) || !add_term(&r, t, 1))
        return false;
    }
  *out = r;
  return true;
}

bool asc__dep_eq(const asc__affine *a, const asc__affine *b) {
  asc__affine d;
  return asc__dep_add(&d, a, b, -1) && d.n == 0;
}

bool asc__dep_heap_array(const asc__irfunc *f, int32_t t) {
  const asc__irins *d = f->regs[t].def;
  /* an array variable (strided) may hold a view of any other array */
  return !f->regs[t].param && d != NULL &&
         (f->regs[t].ty.flags & ASC_IRT_CONTIG) &&
         (d->op == ASC_IR_NEW_ARRAY || d->op == ASC_IR_SET_ARRAY);
}

bool asc__dep_shape_of(int32_t s, int32_t *t, int *k, bool *stride) {
  int32_t x = -1 - s;
  if (s >= 0)
    return false;
  *stride = (x & 1) != 0;
  *k = (int)((x >> 1) % ASC_IR_MAXDIMS);
  *t = (x >> 1) / ASC_IR_MAXDIMS;
  return true;
}

int asc__dep_level(const asc__depnest *d, int32_t r) {
  if (d->all)
    return (int)asc__regtab_get(&d->lv, r) - 1;
  for (int l = 0; l < d->nl; l++)
    if (d->L[l]->dst == r)
      return l;
  return -1;
}

/* inv: expanding a register defined before the nest, which must not read
 * anything the nest assigns (it saw the value from before the nest).
 * *unstable is set when the form reads a symbol assigned more than once:
 * an expansion that does may have seen another value of it than the nest
 * sees, and is not used. */
static bool affine(const asc__depnest *d, asc__irval v, asc__affine *out,
                   int depth, bool inv, bool *unstable);

/* `dim` or `stride` of tensor t in a whole nest. */
static bool shape_def(const asc__depnest *d, const asc__irins *i,
                      asc__affine *out, bool inv, bool *unstable) {
  const asc__irfunc *f = d->f;
  const asc__irins *g;
  int32_t t;
  if (i->args[0].kind != ASC_IRV_REG)
    return false;
  t = i->args[0].reg;
  g = f->regs[t].def;
  if (!asc__dep_known_tensor(f, t) || f->regs[t].ty.kind != ASC_IRK_TENSOR)
    return false;
  if (i->op == ASC_IR_DIM && !f->regs[t].param && f->regs[t].ndefs == 1 &&
      g != NULL && g->op == ASC_IR_NEW_ARRAY && i->aux < g->nargs)
    /* an array the kernel made: its extent is the value it was made with */
    return affine(d, g->args[i->aux], out, 1, inv, unstable);
  if (i->op == ASC_IR_STRIDE && (f->regs[t].ty.flags & ASC_IRT_CONTIG) &&
      i->aux == f->regs[t].ty.ndim - 1) {
    asc__dep_const(out, 1);
    return true;
  }
  asc__dep_symbol(out, asc__dep_shape(t, i->aux, i->op == ASC_IR_STRIDE));
  return true;
}

static bool affine_def(const asc__depnest *d, const asc__irins *i,
                       asc__affine *out, int depth, bool inv, bool *unstable) {
  asc__affine a, b;
  switch (i->op) {
  case ASC_IR_MOV:
    return affine(d, i->args[0], out, depth + 1, inv, unstable);
  case ASC_IR_ADD:
  case ASC_IR_SUB:
    return affine(d, i->args[0], &a, depth + 1, inv, unstable) &&
           affine(d, i->args[1], &b, depth + 1, inv, unstable) &&
           asc__dep_add(out, &a, &b, i->op == ASC_IR_ADD ? 1 : -1);
  case ASC_IR_NEG:
    asc__dep_const(&b, 0);
    return affine(d, i->args[0], &a, depth + 1, inv, unstable) &&
           asc__dep_add(out, &b, &a, -1);
  case ASC_IR_MUL:
    return affine(d, i->args[0], &a, depth + 1, inv, unstable) &&
           affine(d, i->args[1], &b, depth + 1, inv, unstable) &&
           asc__dep_mul(out, &a, &b);
  case ASC_IR_DIM:
  case ASC_IR_STRIDE:
    return d->all && shape_def(d, i, out, inv, unstable);
  default:
    return false;
  }
}

static bool affine(const asc__depnest *d, asc__irval v, asc__affine *out,
                   int depth, bool inv, bool *unstable) {
  const asc__irins *g;
  const asc__irreg *rg;
  int32_t r, nin;
  int l;
  if (depth > 32)
    return false;
  if (v.kind == ASC_IRV_CONST) {
    if (v.dtype != ascInt64)
      return false;
    asc__dep_const(out, v.c.i);
    return true;
  }
  if (v.kind != ASC_IRV_REG)
    return false;
  r = v.reg;
  rg = &d->f->regs[r];
  if (rg->ty.kind != ASC_IRK_SCALAR || rg->ty.dtype != ascInt64)
    return false;
  if ((l = asc__dep_level(d, r)) >= 0) {
    if (inv || l > INT16_MAX)
      return false;
    out->n = 1;
    out->t[0].c = 1;
    out->t[0].iv = (int16_t)l;
    out->t[0].ns = 0;
    return true;
  }
  nin = asc__dep_nin(d, r);
  if (nin > 1 || (inv && nin > 0))
    return false;
  if (nin == 1)
    return affine_def(d, asc__dep_din(d, r), out, depth, false, unstable);
  /* fixed while the nest runs: expanded through its one definition when
   * that reads only registers fixed for the whole kernel, else a symbol */
  g = rg->def;
  if (g != NULL && rg->ndefs == 1 && !rg->param) {
    bool u = false;
    if (affine_def(d, g, out, depth, true, &u) && !u)
      return true;
  }
  if (rg->ndefs != 1)
    *unstable = true;
  asc__dep_symbol(out, asc__ir_canon(d->f, r));
  return true;
}

bool asc__dep_affine(const asc__depnest *d, asc__irval v, asc__affine *out) {
  bool unstable = false;
  return affine(d, v, out, 0, false, &unstable);
}

bool asc__dep_coef(const asc__affine *a, int l, int64_t *coef) {
  *coef = 0;
  for (int k = 0; k < a->n; k++)
    if (a->t[k].iv == l) {
      if (a->t[k].ns > 0)
        return false;
      *coef = a->t[k].c;
    }
  return true;
}

static void note_def(asc__irins *i, void *ctx) {
  asc__depnest *d = ctx;
  if (i->dst < 0)
    return;
  ++*asc__regtab_ref(&d->nin, i->dst);
  asc__regtab_set(&d->din, i->dst, (intptr_t)i);
  if (d->all && (i->op == ASC_IR_FOR || i->op == ASC_IR_PFOR) &&
      asc__regtab_get(&d->lv, i->dst) == 0)
    asc__regtab_set(&d->lv, i->dst, ++d->nlv);
}

void asc__dep_init(asc__depnest *d, asc__cctx *c, const asc__irfunc *f,
                   asc__irins *const *L, int nl) {
  int32_t n;
  memset(d, 0, sizeof *d);
  d->c = c;
  d->f = f;
  d->nl = nl < ASC_DEP_MAXL ? nl : ASC_DEP_MAXL;
  for (int l = 0; l < d->nl; l++)
    d->L[l] = L[l];
  n = (int32_t)asc__ir_size(&L[0]->body[0]);
  asc__regtab_init(c, &d->nin, n);
  asc__regtab_init(c, &d->din, n);
  asc__regtab_init(c, &d->lv, 0);
  asc__ir_walk(&L[0]->body[0], note_def, d);
}

void asc__dep_init_all(asc__depnest *d, asc__cctx *c, const asc__irfunc *f,
                       asc__irins *L) {
  int32_t n = (int32_t)asc__ir_size(&L->body[0]);
  memset(d, 0, sizeof *d);
  d->c = c;
  d->f = f;
  d->nl = 1;
  d->L[0] = L;
  d->all = true;
  asc__regtab_init(c, &d->nin, n);
  asc__regtab_init(c, &d->din, n);
  asc__regtab_init(c, &d->lv, 0);
  note_def(L, d);
  asc__ir_walk(&L->body[0], note_def, d);
}

/* The axis of t whose stride symbol y is, or -1.  In a whole nest y is a
 * shape symbol, else a register holding `stride %t, k`. */
static int stride_axis(const asc__depnest *d, int32_t t, int32_t y) {
  const asc__irins *g;
  int32_t st;
  int k;
  bool stride;
  if (d->all)
    return asc__dep_shape_of(y, &st, &k, &stride) && stride && st == t ? k
                                                                        : -1;
  g = d->f->regs[y].def;
  return g != NULL && g->op == ASC_IR_STRIDE &&
                 g->args[0].kind == ASC_IRV_REG && g->args[0].reg == t &&
                 d->f->regs[y].ndefs <= 1
             ? g->aux
             : -1;
}

/* The axis of tensor t that term x belongs to (the stride factor removed
 * from *x), or -1.  In a whole nest a term of a tensor that is not
 * contiguous must have a stride factor. */
static int axis_of(const asc__depnest *d, int32_t t, asc__aterm *x) {
  const asc__irtype ty = d->f->regs[t].ty;
  int axis = -1, at = -1;
  for (int k = 0; k < x->ns; k++) {
    int a = stride_axis(d, t, x->s[k]);
    if (a < 0)
      continue;
    if (axis >= 0)
      return -1;   /* two strides of t: not an index */
    axis = a;
    at = k;
  }
  if (axis >= 0) {
    for (int q = at; q + 1 < x->ns; q++)
      x->s[q] = x->s[q + 1];
    x->ns--;
    return axis;
  }
  if (ty.flags & ASC_IRT_CONTIG)
    return ty.ndim - 1;
  return ty.ndim == 1 && !d->all ? 0 : -1;
}

bool asc__dep_split(const asc__depnest *d, int32_t t, const asc__affine *off,
                   asc__affine *ax) {
  int nd = d->f->regs[t].ty.ndim;
  for (int k = 0; k < nd; k++)
    ax[k].n = 0;
  for (int k = 0; k < off->n; k++) {
    asc__aterm x = off->t[k];
    int a = axis_of(d, t, &x);
    if (a < 0 || a >= nd || !add_term(&ax[a], x, 1))
      return false;
  }
  return true;
}

int asc__dep_test(const asc__depnest *d, const asc__irins *x,
                  const asc__irins *y, asc__depvec *v) {
  int32_t t = x->args[0].reg;
  int nd = d->f->regs[t].ty.ndim;
  asc__affine ox, oy, ax[ASC_IR_MAXDIMS], ay[ASC_IR_MAXDIMS];
  bool fixed[ASC_DEP_MAXL];

  v->n = d->nl;
  for (int l = 0; l < d->nl; l++) {
    v->dir[l] = '*';
    v->dist[l] = 0;
    fixed[l] = false;
  }
  if (!asc__dep_affine(d, x->args[1], &ox) ||
      !asc__dep_affine(d, y->args[1], &oy) || !asc__dep_split(d, t, &ox, ax) ||
      !asc__dep_split(d, t, &oy, ay))
    return ASC_DEP_UNKNOWN;
  for (int k = 0; k < nd; k++) {
    /* ax[k](I) = ay[k](I'):  sum a_l (I'_l - I_l) = cx - cy, when both
     * have the same level terms and the same symbol terms */
    asc__affine diff = ax[k];
    int64_t cst = 0, coef = 0;
    int level = -1;
    for (int q = 0; q < ay[k].n; q++)
      if (!add_term(&diff, ay[k].t[q], -1))
        return ASC_DEP_UNKNOWN;
    for (int q = 0; q < diff.n; q++) {
      if (diff.t[q].iv >= 0 || diff.t[q].ns > 0)
        return ASC_DEP_UNKNOWN;   /* different coefficients or symbols */
      cst = diff.t[q].c;
    }
    for (int q = 0; q < ax[k].n; q++) {
      if (ax[k].t[q].iv < 0)
        continue;
      if (ax[k].t[q].ns > 0 || level >= 0)
        return ASC_DEP_UNKNOWN;   /* run-time coefficient, or two levels */
      level = ax[k].t[q].iv;
      coef = ax[k].t[q].c;
    }
    if (level >= d->nl)
      return ASC_DEP_UNKNOWN;   /* a loop inside the compared ones */
    if (level < 0) {
      if (cst != 0)
        return ASC_DEP_NONE;
      continue;
    }
    if (cst % coef != 0)
      return ASC_DEP_NONE;
    if (fixed[level] && v->dist[level] != cst / coef)
      return ASC_DEP_NONE;
    fixed[level] = true;
    v->dist[level] = cst / coef;
    v->dir[level] = v->dist[level] == 0 ? '=' : v->dist[level] > 0 ? '<' : '>';
  }
  return ASC_DEP_DIST;
}

const char *asc__dep_str(asc__cctx *c, const asc__depvec *v) {
  asc__buf b;
  const char *s;
  asc__buf_init(&b);
  asc__buf_puts(&b, "(");
  for (int l = 0; l < v->n; l++) {
    if (l)
      asc__buf_puts(&b, ", ");
    if (v->dir[l] == '*')
      asc__buf_puts(&b, "*");
    else
      asc__buf_printf(&b, "%lld", (long long)v->dist[l]);
  }
  asc__buf_puts(&b, ")");
  s = asc__arena_printf(c, "%s", asc__buf_str(&b));
  asc__buf_free(&b);
  return s;
}

typedef struct nwalk {
  asc__cctx *c;
  asc__irfunc *f;
  asc__nest_try try_fn;
  void *ctx;
  const char *pass;
  asc__ircount_snap snap;
} nwalk;

static void nest_walk(nwalk *w, asc__irblock *b) {
  for (asc__irins *i = b->first; i;) {
    asc__irins *prev = i->prev, *next = i->next;
    asc__cctx_tick(w->c, w->pass);
    asc__ir_count_snap(w->c, &w->snap, i);
    if (w->try_fn(w->ctx, b, i)) {
      /* what replaced i lies between prev and next */
      asc__ir_count_redo(w->c, w->f, &w->snap, b, prev, next);
      i = next;
      continue;
    }
    for (int k = 0; k < asc__ir_nregions(i); k++)
      nest_walk(w, &i->body[k]);
    i = next;
  }
}

void asc__nest_walk(asc__cctx *c, asc__irfunc *f, const char *pass,
                    asc__nest_try try_fn, void *ctx) {
  nwalk w;
  memset(&w, 0, sizeof w);
  w.c = c;
  w.f = f;
  w.try_fn = try_fn;
  w.ctx = ctx;
  w.pass = pass;
  asc__ir_count(f);
  nest_walk(&w, &f->body);
  asc__ir_count(f);
}

void asc__nest_note(asc__cctx *c, asc__irins *i, const char *pass,
                    const char *text) {
  const char *t = asc__arena_printf(c, "%s: %s", pass, text);
  i->note = i->note ? asc__arena_printf(c, "%s\n%s", i->note, t) : t;
}

bool asc__nest_pure(const asc__irfunc *f, const asc__irins *i) {
  return (asc__irop_flags(i->op) & ASC_OPF_PURE) && i->dst >= 0 &&
         !asc__ir_may_trap(f, i) && asc__ir_nregions(i) == 0;
}

int32_t asc__tensor_root(const asc__irfunc *f, const asc__irins **gdef,
                         int32_t nregs0, int32_t r) {
  for (int depth = 0; depth < 16; depth++) {
    const asc__irreg *g = &f->regs[r];
    const asc__irins *d = r < nregs0 ? gdef[r] : NULL;
    if (g->param)
      return f->may_alias ? ASC_ROOT_PARAMS : r;
    if (g->ndefs != 1 || d == NULL)
      return ASC_ROOT_ANY;
    if (d->op == ASC_IR_LOCAL_ARRAY || d->op == ASC_IR_SHARED_ARRAY ||
        d->op == ASC_IR_NEW_ARRAY)
      return r;
    if (d->op != ASC_IR_MOV || d->args[0].kind != ASC_IRV_REG)
      return ASC_ROOT_ANY;
    r = d->args[0].reg;
  }
  return ASC_ROOT_ANY;
}

bool asc__nest_short(const asc__irins *L, int64_t t) {
  int64_t lo, hi;
  if (L->args[0].kind != ASC_IRV_CONST || L->args[1].kind != ASC_IRV_CONST)
    return false;
  lo = L->args[0].c.i;
  hi = L->args[1].c.i;
  return hi <= lo || (t >= 0 && (uint64_t)hi - (uint64_t)lo <= (uint64_t)t);
}
