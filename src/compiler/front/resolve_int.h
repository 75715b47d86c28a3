/*
 * Shared by the files of name resolution (resolve.c: scopes and names;
 * constfold.c: module constants; rewrite.c: loops and numpy calls
 * rewritten into forms the later stages know) and by nothing else.
 */
#ifndef ASC_RESOLVE_INT_H
#define ASC_RESOLVE_INT_H

#include <string.h>

#include "compiler/front/frontend.h"

typedef struct vec {
  void **v;
  int n, cap;
  /* For find() on a vector of symbols: an open-addressing set of
   * index + 1 (0: free) by name, newest symbol per name, holding the first
   * `indexed` entries; built once the vector is long enough to need it. */
  int32_t *tab;
  int tabcap, indexed;
} vec;

typedef struct resolver {
  asc__cctx *c;
  asc__ast_module *m;
  vec module;             /* asc__sym *: module-level names */
  const ascGlobalValue *globals;
  int nglobals;
  asc__ast_func *fn;      /* function being resolved */
  vec *locals;            /* its symbols (asc__sym *) */
  int parallel;           /* inside a parallel-loop body */
  int handlers;           /* inside an except block */
  bool lambda_ok;         /* the next lambda is a parallel_for body */
  bool sort_stmt;         /* the next call is `a.sort()`, a statement */
  int array_loops;        /* `for x in a` loops rewritten so far */
  const asc__ast_stmt *top; /* the statement of fn's own body being
                             * resolved (not one nested in it) */
  asc__sym *np_module;    /* numpy, for names `from numpy import`ed */
  vec comp;               /* comprehension variables in scope, innermost
                           * last (asc__sym *) */
} resolver;

static inline void vpush(resolver *r, vec *v, void *x) {
  if (v->n == v->cap) {
    int ncap = v->cap ? v->cap * 2 : 8;
    void **nv = asc__arena_alloc(r->c, (size_t)ncap * sizeof *nv);
    if (v->n)
      memcpy(nv, v->v, (size_t)v->n * sizeof *nv);
    v->v = nv;
    v->cap = ncap;
  }
  v->v[v->n++] = x;
}

static inline asc__sym *new_sym(resolver *r, asc__sym_kind k, const char *name,
                         asc__loc loc) {
  asc__sym *s = asc__arena_alloc(r->c, sizeof *s);
  s->kind = k;
  s->name = name;
  s->loc = loc;
  return s;
}

static inline uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static inline int32_t *tab_slot(const vec *v, const char *name) {
  uint32_t mask = (uint32_t)v->tabcap - 1;
  for (uint32_t h = name_hash(name) & mask;; h = (h + 1) & mask) {
    int32_t *slot = &v->tab[h];
    if (*slot == 0 ||
        strcmp(((asc__sym *)v->v[*slot - 1])->name, name) == 0)
      return slot;
  }
}

/* The newest symbol called name in v.  Kernels with thousands of
 * variables look names up through the index, not a scan per use. */
static inline asc__sym *find(resolver *r, vec *v, const char *name) {
  int32_t k;
  if (v->n < 16) {
    for (int i = v->n - 1; i >= 0; i--) {
      asc__sym *s = v->v[i];
      if (strcmp(s->name, name) == 0)
        return s;
    }
    return NULL;
  }
  if (2 * v->n > v->tabcap) {
    int cap = 64;
    while (cap < 2 * v->n)
      cap *= 2;
    v->tab = asc__arena_alloc(r->c, sizeof *v->tab * (size_t)cap);
    v->tabcap = cap;
    v->indexed = 0;
  }
  for (; v->indexed < v->n; v->indexed++)
    *tab_slot(v, ((asc__sym *)v->v[v->indexed])->name) = v->indexed + 1;
  k = *tab_slot(v, name);
  return k ? v->v[k - 1] : NULL;
}

/* Whether a folded constant is a number (ascDataTypeCount: it is not). */
static inline bool is_num(const ascScalar *s) {
  return s->dtype != ascDataTypeCount;
}

/* ---------------------------------------------------------- resolve.c */

/* The symbol name denotes where r stands: locals, enclosing functions,
 * module, then Python's builtins; NULL when none. */
asc__sym *asc__resolve_lookup(resolver *r, const char *name);
bool asc__resolve_numpy_name(resolver *r, asc__ast_expr *e);
bool asc__is_op_ufunc(const char *name);
/* Resolves expression e and everything under it. */
void asc__resolve_expr(resolver *r, asc__ast_expr *e);

/* -------------------------------------------------------- constfold.c */

/* The value of e, a module constant's right-hand side, when it folds to a
 * bool, int or float (literals, earlier constants, math/asc constants,
 * arithmetic of those, Python's semantics); false otherwise. */
bool asc__fold_const(resolver *r, asc__ast_expr *e, ascScalar *out);

/* ---------------------------------------------------------- rewrite.c */

/* Rewrites the loop b->stmts[at] when it iterates over zip(),
 * enumerate() or an array into a loop over range() with the items
 * assigned first in its body.  Returns the number of statements put
 * before the loop (values evaluated once). */
int asc__rewrite_loop(resolver *r, asc__ast_block *b, int at);
/* np.add(x, y) -> x + y, ...; false when e is no such call. */
bool asc__rewrite_op_ufunc(resolver *r, asc__ast_expr *e);
/* np.add.reduce, np.add.accumulate, np.maximum.outer and the like
 * (rewrite_ufunc.c): true when e was one (rewritten and resolved). */
bool asc__rewrite_ufunc_method(resolver *r, asc__ast_expr *e);
/* np.einsum with a constant subscripts string (rewrite_einsum.c): true
 * when e was one (rewritten into products, sums and transposes). */
bool asc__rewrite_einsum(resolver *r, asc__ast_expr *e);
/* A new expression node of kind k (rewrite.c). */
asc__ast_expr *asc__rewrite_node(resolver *r, asc__expr_kind k,
                                 asc__loc loc, int32_t depth);
/* np.NAME as a callee, np the numpy module's name as written. */
asc__ast_expr *asc__rewrite_np_attr(resolver *r, const asc__ast_expr *np,
                                    const char *name, asc__loc loc);
/* The statement `np.add(x, y, out)` -> `out[...] = x + y`; false when s
 * is no such statement. */
bool asc__rewrite_op_ufunc_out(resolver *r, asc__ast_stmt *s);
/* `x.shape = v` statements of block b (of function fn, nested blocks
 * too) become x = x.reshape(v), one per target. */
void asc__rewrite_shape_sets(resolver *r, asc__ast_func *fn,
                             asc__ast_block *b);
/* Numpy functions written with others, e resolved (bind_args); true
 * when e became another expression (resolved, its reductions' axis
 * tuples split):
 * np.count_nonzero, np.isclose, np.allclose, np.ptp, np.nansum,
 * np.nanprod, np.nanmean, np.cross, np.expand_dims, and the dtype= of sum, prod and
 * mean (rewrite.c). */
bool asc__rewrite_numpy_more(resolver *r, asc__ast_expr *e);
/* The statement `a.sort(...)`, a a name, -> `a[...] = a.sort(...)` with
 * r->sort_stmt set for its call; false when s is no such statement. */
bool asc__rewrite_sort_stmt(resolver *r, asc__ast_stmt *s);
/* np.linalg.norm(x, ...) -> np.sqrt(np.sum(x * x, ...)). */
void asc__rewrite_norm(resolver *r, asc__ast_expr *e);
/* np.clip's None bounds -> NULL arguments (method: a.clip()). */
void asc__rewrite_clip_none(resolver *r, asc__ast_expr *e, bool method);
/* A reduction b over a tuple of axes -> one reduction per axis. */
void asc__rewrite_tuple_axes(resolver *r, asc__ast_expr *e,
                             const asc__builtin *b);

#endif /* ASC_RESOLVE_INT_H */
