/*
 * Per-register hash tables (regtab.h): open addressing, linear probing.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/ir/regtab.h"

static uint32_t hash(int32_t r) { return (uint32_t)r * 2654435761u; }

static asc__regent *slot(const asc__regtab *t, int32_t r) {
  uint32_t mask = (uint32_t)t->cap - 1;
  for (uint32_t h = hash(r) & mask;; h = (h + 1) & mask)
    if (t->e[h].reg == r || t->e[h].reg < 0)
      return &t->e[h];
}

static void make(asc__regtab *t, int32_t cap) {
  t->e = asc__scratch_alloc(t->c, sizeof *t->e * (size_t)cap);
  for (int32_t k = 0; k < cap; k++)
    t->e[k].reg = -1;
  t->cap = cap;
  t->n = 0;
  t->keys = NULL;
}

void asc__regtab_init(asc__cctx *c, asc__regtab *t, int32_t n) {
  int32_t cap = 16;
  memset(t, 0, sizeof *t);
  t->c = c;
  while (cap < 2 * n && cap < (1 << 30))
    cap *= 2;
  make(t, cap);
}

void asc__regtab_clear(asc__regtab *t) {
  for (int32_t k = 0; k < t->cap; k++)
    t->e[k].reg = -1;
  t->n = 0;
  t->keys = NULL;
}

intptr_t *asc__regtab_ref(asc__regtab *t, int32_t r) {
  asc__regent *s = slot(t, r);
  if (s->reg < 0) {
    if (2 * (t->n + 1) > t->cap) {
      asc__regent *old = t->e;
      int32_t oldcap = t->cap;
      make(t, 2 * oldcap);
      for (int32_t k = 0; k < oldcap; k++)
        if (old[k].reg >= 0) {
          *slot(t, old[k].reg) = old[k];
          t->n++;
        }
      s = slot(t, r);
    }
    s->reg = r;
    s->val = 0;
    t->n++;
    t->keys = NULL;
  }
  return &s->val;
}

intptr_t asc__regtab_get(const asc__regtab *t, int32_t r) {
  const asc__regent *s = slot(t, r);
  return s->reg < 0 ? 0 : s->val;
}

static int cmp_reg(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

const int32_t *asc__regtab_keys(asc__regtab *t, int32_t *n) {
  if (t->keys == NULL) {
    int32_t m = 0;
    t->keys = asc__scratch_alloc(t->c, sizeof *t->keys * (size_t)(t->n + 1));
    for (int32_t k = 0; k < t->cap; k++)
      if (t->e[k].reg >= 0)
        t->keys[m++] = t->e[k].reg;
    qsort(t->keys, (size_t)m, sizeof *t->keys, cmp_reg);
  }
  *n = t->n;
  return t->keys;
}
