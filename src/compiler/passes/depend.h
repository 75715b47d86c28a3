/*
 * Dependence analysis on affine tensor accesses, shared by the loop-nest
 * passes and parallelize (docs/optimizer.md).  A nest is a list of loops
 * L[0] > L[1] > ... (outermost first); registers defined outside L[0] are
 * fixed while it runs (symbols).  An element offset is affine when it is
 * a sum of terms c * [iv] * sym * sym, built from add / sub / mul / neg /
 * mov of constants, the loops' inductions and symbols.  Two accesses of
 * one tensor are split per axis (a `stride %t, k` factor names axis k; the
 * rest of a contiguous tensor's offset is its innermost axis) and compared
 * axis by axis, which gives the distance vector between the iterations
 * that touch the same element.
 *
 * A whole nest (asc__dep_init_all, parallelize's view) goes further: every
 * loop inside L[0] has a level, and `dim` / `stride` of a parameter or of
 * an array the kernel made are symbols of their own, named by tensor and
 * axis (the extent of a made array: the value it was made with; the
 * innermost stride of a contiguous tensor: 1), so that offsets and launch
 * tests can be compared and built from them.
 */
#ifndef ASC_DEPEND_H
#define ASC_DEPEND_H

#include "compiler/passes/passes.h"

enum { ASC_DEP_MAXL = 8, ASC_DEP_MAXT = 16 };

/* A symbol is a register, or in a whole nest the extent or stride of one
 * axis of a tensor (asc__dep_shape: negative, so these sort first). */
typedef struct asc__aterm {
  int64_t c;
  int16_t iv;        /* loop level, -1 when none */
  int8_t ns;         /* symbols in s[] (sorted) */
  int32_t s[2];
} asc__aterm;

typedef struct asc__affine {
  int n;
  asc__aterm t[ASC_DEP_MAXT];
} asc__affine;

typedef struct asc__depnest {
  asc__cctx *c;
  const asc__irfunc *f;
  int nl;
  const asc__irins *L[ASC_DEP_MAXL];
  /* per register defined inside L[0]: the number of its definitions
   * there, and the last one.  Tables of the nest's registers only, so
   * setting up a nest costs its size; definitions anywhere are f's
   * (asc__irreg.def: the counts must be current) */
  asc__regtab nin, din;
  /* a whole nest (asc__dep_init_all): every loop inside L[0] has a level
   * (lv: its induction register -> level + 1; nlv levels) */
  bool all;
  asc__regtab lv;
  int32_t nlv;
} asc__depnest;

/* The result of comparing two accesses x, y of one tensor. */
enum { ASC_DEP_NONE, ASC_DEP_DIST, ASC_DEP_UNKNOWN };

typedef struct asc__depvec {
  int n;
  /* dir[l]: '=' '<' '>' (dist[l] = y's iteration - x's at level l, when
   * known) or '*' (any) */
  char dir[ASC_DEP_MAXL];
  int64_t dist[ASC_DEP_MAXL];
} asc__depvec;

/* Sets up d for the nest L[0..nl) of f (scratch memory: d lives until the
 * pass ends).  f's counts must be current. */
void asc__dep_init(asc__depnest *d, asc__cctx *c, const asc__irfunc *f,
                   asc__irins *const *L, int nl);
/* Sets up d for the whole nest L (its own induction counts as defined
 * inside it): every loop inside L gets a level, L's is 0, and `dim` /
 * `stride` of a known tensor (asc__dep_known_tensor) read as shape
 * symbols. */
void asc__dep_init_all(asc__depnest *d, asc__cctx *c, const asc__irfunc *f,
                       asc__irins *L);
/* The level of the loop whose induction r is, or -1. */
int asc__dep_level(const asc__depnest *d, int32_t r);
/* Definitions of r inside L[0]: their number, and the last one. */
static inline int32_t asc__dep_nin(const asc__depnest *d, int32_t r) {
  return (int32_t)asc__regtab_get(&d->nin, r);
}
static inline const asc__irins *asc__dep_din(const asc__depnest *d,
                                             int32_t r) {
  return (const asc__irins *)asc__regtab_get(&d->din, r);
}
/* The registers defined inside L[0], in increasing order (*n of them). */
static inline const int32_t *asc__dep_defined(asc__depnest *d, int32_t *n) {
  return asc__regtab_keys(&d->nin, n);
}
/* An array the kernel made (new_array, or a name's set_array): C-order,
 * contiguous, overlapping no other tensor. */
bool asc__dep_heap_array(const asc__irfunc *f, int32_t t);
/* A tensor whose shape and strides a whole nest reads as symbols: a
 * parameter or an array the kernel made. */
static inline bool asc__dep_known_tensor(const asc__irfunc *f, int32_t t) {
  return f->regs[t].param || asc__dep_heap_array(f, t);
}
/* The symbol for the extent (stride false) or stride of axis k of t. */
static inline int32_t asc__dep_shape(int32_t t, int k, bool stride) {
  return -1 - ((t * ASC_IR_MAXDIMS + k) * 2 + (stride ? 1 : 0));
}
/* Is symbol s a shape (then *t, *k and *stride say which)? */
bool asc__dep_shape_of(int32_t s, int32_t *t, int *k, bool *stride);

/* Affine arithmetic: false when a coefficient overflows or a result has
 * too many terms or factors.  out may be one of the operands. */
void asc__dep_const(asc__affine *a, int64_t c);
void asc__dep_symbol(asc__affine *a, int32_t s);
bool asc__dep_add(asc__affine *out, const asc__affine *a,
                  const asc__affine *b, int64_t sgn);
bool asc__dep_mul(asc__affine *out, const asc__affine *a,
                  const asc__affine *b);
bool asc__dep_eq(const asc__affine *a, const asc__affine *b);

/* The affine form of v; false when v is not affine in the nest. */
bool asc__dep_affine(const asc__depnest *d, asc__irval v, asc__affine *out);
/* The constant coefficient of level l in a's terms free of symbols: *unit
 * is set when it is 1 and no term of l has symbols; returns false when a
 * term of l has symbols (a run-time stride). */
bool asc__dep_coef(const asc__affine *a, int l, int64_t *coef);
/* Splits offset off of tensor t into per-axis indices ax[0..ndim). */
bool asc__dep_split(const asc__depnest *d, int32_t t, const asc__affine *off,
                    asc__affine *ax);
/* Compares accesses x and y (load / store instructions on one tensor):
 * ASC_DEP_NONE (never the same element), ASC_DEP_DIST (*v holds the
 * direction / distance vector) or ASC_DEP_UNKNOWN (not affine, or not
 * decidable here). */
int asc__dep_test(const asc__depnest *d, const asc__irins *x,
                  const asc__irins *y, asc__depvec *v);
/* "(1, *, =)" */
const char *asc__dep_str(asc__cctx *c, const asc__depvec *v);

/* Appends "pass: text" to i's note, on a line of its own (the notes
 * the loop-nest passes leave on the loops they decide about). */
void asc__nest_note(asc__cctx *c, asc__irins *i, const char *pass,
                    const char *text);
/* The memory tensor register r stands for: r itself for a parameter
 * (ASC_ROOT_PARAMS for every parameter of a may_alias kernel) and for a
 * local, shared or new array, following `mov`s; ASC_ROOT_ANY when unknown.
 * gdef[r] is r's (last) definition for r < nregs0.  Two different roots
 * other than these two never share memory. */
enum { ASC_ROOT_ANY = -1, ASC_ROOT_PARAMS = -2 };
int32_t asc__tensor_root(const asc__irfunc *f, const asc__irins **gdef,
                         int32_t nregs0, int32_t r);
/* Does loop L have constant bounds spanning at most t (hi - lo <= t,
 * without overflow; an empty range counts)? */
bool asc__nest_short(const asc__irins *L, int64_t t);
/* Does i only compute a value: pure, cannot trap, no regions? */
bool asc__nest_pure(const asc__irfunc *f, const asc__irins *i);

/* The walk of the loop-nest passes: calls try(ctx, b, i) for every
 * instruction i of f's body and of the blocks below it, outermost first.
 * When try rewrote i (it returns true) the walk does not enter what
 * replaced it, and f's counts are brought up to date for what replaced it,
 * which must lie between i's neighbours in b.  The walk checks the compile
 * budget, naming pass. */
typedef bool (*asc__nest_try)(void *ctx, asc__irblock *b, asc__irins *i);
void asc__nest_walk(asc__cctx *c, asc__irfunc *f, const char *pass,
                    asc__nest_try try_fn, void *ctx);

#endif /* ASC_DEPEND_H */
