/*
 * Common-subexpression elimination over the structured IR.  An expression
 * computed earlier in the same block or in an enclosing one dominates the
 * current point, so a scoped list of available expressions is enough: a
 * region's entries are dropped when it ends.  Only pure instructions whose
 * operands cannot change in between take part (constants, parameters,
 * registers with one definition).
 *
 *   %a:i64 = mul %i, %s0
 *   %b:i64 = mul %s0, %i    ->  (uses of %b read %a)
 */
#include <string.h>

#include "compiler/passes/passes.h"

/* The available expressions form a stack (a region pops what it pushed)
 * and a chained hash table over it: buckets[h] is the newest entry with
 * hash h, next[] the older ones, so a lookup visits newest first and a
 * region's entries leave their chains, as heads, in reverse order.
 * Replaced registers go into subst[] and are rewritten in the operands of
 * each later instruction when it is reached, and everywhere by one final
 * walk -- instead of a walk over the whole function per hit. */
typedef struct cstate {
  asc__cctx *c;
  asc__irfunc *f;
  asc__irins **avail;
  uint32_t *hash;  /* of avail[k] */
  int32_t *next;   /* older entry in the same bucket, or -1 */
  int32_t *buckets; /* newest entry per bucket, or -1 */
  uint32_t mask;
  int navail, cap;
  asc__irval *subst; /* per register: its replacement, or ASC_IRV_NONE */
  bool any_subst;
} cstate;

static bool stable(const asc__irfunc *f, asc__irval v) {
  if (v.kind != ASC_IRV_REG)
    return true;
  return f->regs[v.reg].param || f->regs[v.reg].ndefs == 1;
}

static bool candidate(const asc__irfunc *f, const asc__irins *i) {
  if (i->dst < 0 || !(asc__irop_flags(i->op) & ASC_OPF_PURE) ||
      i->op == ASC_IR_MOV)
    return false;
  if (f->regs[i->dst].ndefs != 1 || f->regs[i->dst].param ||
      f->regs[i->dst].ty.kind != ASC_IRK_SCALAR)
    return false;
  for (int32_t k = 0; k < i->nargs; k++)
    if (!stable(f, i->args[k]))
      return false;
  return true;
}

static bool same(const asc__irfunc *f, const asc__irins *a,
                 const asc__irins *b) {
  if (a->op != b->op || a->aux != b->aux || a->nargs != b->nargs ||
      f->regs[a->dst].ty.dtype != f->regs[b->dst].ty.dtype)
    return false;
  if ((a->op == ASC_IR_CAST || a->op == ASC_IR_CVT) &&
      asc__irv_dtype(f, a->args[0]) != asc__irv_dtype(f, b->args[0]))
    return false;
  {
    bool eq = true;
    for (int32_t k = 0; k < a->nargs; k++)
      eq &= asc__irv_eq(a->args[k], b->args[k]);
    if (eq)
      return true;
  }
  if ((asc__irop_flags(a->op) & ASC_OPF_COMM) && a->nargs == 2)
    return asc__irv_eq(a->args[0], b->args[1]) &&
           asc__irv_eq(a->args[1], b->args[0]);
  return false;
}

static uint32_t mix(uint32_t h, uint64_t v) {
  h ^= (uint32_t)(v ^ (v >> 32));
  h *= 0x9e3779b1u;
  return h ^ (h >> 15);
}

static uint64_t val_key(asc__irval v) {
  if (v.kind == ASC_IRV_REG)
    return (uint64_t)v.reg * 4 + 1;
  if (v.kind == ASC_IRV_CONST) {
    uint64_t bits = (uint64_t)v.c.i;
    if (asc__dt_is_float(v.dtype)) {
      double d = v.c.f;
      memcpy(&bits, &d, sizeof bits);
    }
    return bits * 31 + (uint64_t)v.dtype * 4 + 2;
  }
  return (uint64_t)v.kind * 4 + 3;
}

/* A hash that agrees with same(): equal expressions hash alike, including
 * commuted operands of a commutative binary op. */
static uint32_t hash_ins(const asc__irfunc *f, const asc__irins *i) {
  uint32_t h = mix(mix(mix(0, (uint64_t)i->op), (uint64_t)i->aux),
                   (uint64_t)f->regs[i->dst].ty.dtype);
  h = mix(h, (uint64_t)i->nargs);
  if ((asc__irop_flags(i->op) & ASC_OPF_COMM) && i->nargs == 2) {
    uint64_t a = val_key(i->args[0]), b = val_key(i->args[1]);
    return mix(mix(h, a < b ? a : b), a < b ? b : a);
  }
  for (int32_t k = 0; k < i->nargs; k++)
    h = mix(h, val_key(i->args[k]));
  return h;
}

static void add(cstate *s, asc__irins *i, uint32_t h) {
  int cap = s->cap;
  s->avail = asc__arena_grow(s->c, s->avail, s->navail, &s->cap,
                             sizeof *s->avail, 64);
  if (s->cap != cap) {
    int32_t c2 = cap;
    s->hash = asc__arena_grow(s->c, s->hash, s->navail, &c2, sizeof *s->hash,
                              64);
    c2 = cap;
    s->next = asc__arena_grow(s->c, s->next, s->navail, &c2, sizeof *s->next,
                              64);
  }
  s->avail[s->navail] = i;
  s->hash[s->navail] = h;
  s->next[s->navail] = s->buckets[h & s->mask];
  s->buckets[h & s->mask] = s->navail++;
}

/* Drops the entries above mark, newest first: each is its bucket's head. */
static void pop_to(cstate *s, int mark) {
  while (s->navail > mark) {
    int k = --s->navail;
    s->buckets[s->hash[k] & s->mask] = s->next[k];
  }
}

static void rewrite_args(cstate *s, asc__irins *i) {
  for (int32_t k = 0; k < i->nargs; k++) {
    asc__irval *v = &i->args[k];
    while (v->kind == ASC_IRV_REG && s->subst[v->reg].kind != ASC_IRV_NONE)
      *v = s->subst[v->reg];
  }
}

static void cse_block(cstate *s, asc__irblock *b) {
  int mark = s->navail;
  asc__irins *i = b->first;
  while (i != NULL) {
    asc__irins *next = i->next;
    asc__cctx_tick(s->c, "cse");
    if (s->any_subst)
      rewrite_args(s, i);
    if (candidate(s->f, i)) {
      uint32_t h = hash_ins(s->f, i);
      asc__irins *hit = NULL;
      for (int32_t k = s->buckets[h & s->mask]; k >= 0 && !hit;
           k = s->next[k])
        if (s->hash[k] == h && same(s->f, s->avail[k], i))
          hit = s->avail[k];
      if (hit) {
        s->subst[i->dst] = asc__irv_reg(hit->dst);
        s->any_subst = true;
        asc__ir_remove(b, i);
      } else {
        add(s, i, h);
      }
    }
    for (int k = 0; k < asc__ir_nregions(i); k++)
      cse_block(s, &i->body[k]);
    i = next;
  }
  pop_to(s, mark);
}

/* Uses that come before their replaced definition in program order (none
 * in lowered code, but the IR text form allows them). */
static void rewrite_all(cstate *s, asc__irblock *b) {
  for (asc__irins *i = b->first; i; i = i->next) {
    rewrite_args(s, i);
    for (int k = 0; k < asc__ir_nregions(i); k++)
      rewrite_all(s, &i->body[k]);
  }
}

void asc__pass_cse(asc__cctx *c, asc__irfunc *f) {
  cstate s;
  memset(&s, 0, sizeof s);
  uint32_t nb = 64;
  int32_t n = (int32_t)asc__ir_size(&f->body);
  s.c = c;
  s.f = f;
  while (nb < (uint32_t)n && nb < (1u << 30))
    nb *= 2;
  s.mask = nb - 1;
  s.buckets = asc__scratch_alloc(c, sizeof *s.buckets * nb);
  memset(s.buckets, 0xff, sizeof *s.buckets * nb);
  s.subst = asc__scratch_alloc(c, sizeof *s.subst * (size_t)(f->nregs + 1));
  asc__ir_count(f);
  cse_block(&s, &f->body);
  if (s.any_subst)
    rewrite_all(&s, &f->body);
  asc__ir_count(f);
}
