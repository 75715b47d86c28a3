/*
 * Lowering of numpy's grids (docs/arrays.md, "Grids"), as
 * types/infer_grid.c types them: np.mgrid[...] and np.ogrid[...],
 * np.meshgrid and np.indices(..., sparse=True).  Each makes new
 * C-contiguous arrays; the tuples of arrays go to the caller's registers
 * (asc__lower_array_tuple, lower_create.c).
 */
#include <string.h>

#include "asc/kernel_abi.h"
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/types.h"

static asc__irval fop(lstate *ls, int op, asc__irval a, asc__irval b) {
  return op2(ls, op, ascFloat64, a, b);
}

static asc__irval f64(double v) { return asc__irv_float(ascFloat64, v); }

/* ------------------------------------------------- np.mgrid, np.ogrid */

/* One slice of a grid: element i of its axis is i * step + start, in
 * the grid's dtype; n elements. */
typedef struct gaxis {
  asc__irval start, step, n;
} gaxis;

static bool is_complex_part(const asc__ast_expr *p) {
  asc__type *t = p ? ty(p) : NULL;
  return t != NULL && t->kind == ASC_TY_SCALAR &&
         asc__dtype_is_complex(t->dtype);
}

/* numpy's nd_grid of slice s: a complex step counts points (step
 * (stop - start) / (points - 1) between them, 1 for one point); another
 * gives ceil((stop - start) / step) points.  Python's ZeroDivisionError
 * for a zero step; numpy's ValueError for a negative count of a grid of
 * several axes (one slice is np.arange's: no element). */
static gaxis grid_axis(lstate *ls, const asc__ast_expr *s, int dt,
                       bool multi) {
  const asc__ast_expr *lo = s->u.slice.lower, *st = s->u.slice.step;
  asc__irval start = lo ? asc__lower_expr(ls, lo) : i64(0);
  asc__irval stop = asc__lower_expr(ls, s->u.slice.upper);
  gaxis g;
  if (is_complex_part(st)) {
    asc__irval m = call1(ls, ASC_INTR_CABS, ascFloat64,
                          conv(ls, asc__lower_expr(ls, st), ascComplex128));
    asc__irval d;
    g.n = conv(ls, m, ascInt64);
    start = conv(ls, start, ascFloat64);
    d = fop(ls, ASC_IR_DIV,
            fop(ls, ASC_IR_SUB, conv(ls, stop, ascFloat64), start),
            conv(ls, op2(ls, ASC_IR_SUB, ascInt64, g.n, i64(1)), ascFloat64));
    g.step = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, g.n, i64(1)), f64(1.0), d);
    g.start = start;
    if (!multi)
      g.n = op2(ls, ASC_IR_MAX, ascInt64, g.n, i64(0));
    else
      asc__lower_raise_if(ls, op2(ls, ASC_IR_LT, ascInt64, g.n, i64(0)),
                          ASC_KEXC_VALUE_ERROR,
                          "negative dimensions are not allowed", i64(0),
                          i64(0));
    return g;
  }
  g.start = conv(ls, start, dt);
  g.step = conv(ls, st ? asc__lower_expr(ls, st) : i64(1), dt);
  asc__lower_raise_if(ls,
                      op2(ls, ASC_IR_EQ, dt, g.step,
                          dt == ascInt64 ? i64(0) : f64(0.0)),
                      ASC_KEXC_ZERO_DIVISION_ERROR,
                      dt == ascInt64 || !multi ? "division by zero"
                                               : "float division by zero",
                      i64(0), i64(0));
  {
    asc__irval q = fop(ls, ASC_IR_DIV,
                       conv(ls, op2(ls, ASC_IR_SUB, dt, conv(ls, stop, dt),
                                    g.start),
                            ascFloat64),
                       conv(ls, g.step, ascFloat64));
    asc__irval c = call1(ls, ASC_INTR_CEIL, ascFloat64, q);
    asc__lower_raise_if(ls,
                        op1(ls, ASC_IR_NOT, ascBool,
                            op2(ls, ASC_IR_LT, ascFloat64,
                                call1(ls, ASC_INTR_FABS, ascFloat64, c),
                                f64(9.2e18))),
                        ASC_KEXC_VALUE_ERROR,
                        "Maximum allowed size exceeded", i64(0), i64(0));
    g.n = conv(ls, c, ascInt64);
  }
  if (multi)
    asc__lower_raise_if(ls, op2(ls, ASC_IR_LT, ascInt64, g.n, i64(0)),
                        ASC_KEXC_VALUE_ERROR,
                        "negative dimensions are not allowed", i64(0),
                        i64(0));
  else
    g.n = op2(ls, ASC_IR_MAX, ascInt64, g.n, i64(0));
  return g;
}

/* Element i of axis g in dt. */
static asc__irval axis_value(lstate *ls, const gaxis *g, int dt,
                             asc__irval i) {
  return op2(ls, ASC_IR_ADD, dt,
             op2(ls, ASC_IR_MUL, dt, conv(ls, i, dt), conv(ls, g->step, dt)),
             conv(ls, g->start, dt));
}

/* One slice, not in a tuple: numpy's np.arange(start, stop, step) (the
 * elements after the second start + i * ((start + step) - start), as
 * numpy's fill), or the points of a complex step. */
static int32_t grid_1d(lstate *ls, const asc__ast_expr *s, int dt) {
  gaxis g = grid_axis(ls, s, dt, false);
  asc__irval idx[1], v;
  asc__irblock *save;
  int32_t r = asc__lower_alloc_array(ls, dt, 1, &g.n);
  save = asc__lower_open_nest(ls, &g.n, 1, idx);
  if (dt == ascFloat64 && !is_complex_part(s->u.slice.step)) {
    asc__irval next = fop(ls, ASC_IR_ADD, g.start, g.step);
    asc__irval delta = fop(ls, ASC_IR_SUB, next, g.start);
    v = fop(ls, ASC_IR_ADD, g.start,
            fop(ls, ASC_IR_MUL, conv(ls, idx[0], ascFloat64), delta));
    v = sel(ls, op2(ls, ASC_IR_EQ, ascInt64, idx[0], i64(1)), next, v);
  } else {
    v = axis_value(ls, &g, dt, idx[0]);
  }
  asc__lower_store_at(ls, r, idx[0], v);
  ls->cur = save;
  return r;
}

static int grid_slices(const asc__ast_expr *e, const asc__ast_expr ***elts) {
  const asc__ast_expr *ix = e->u.sub.index;
  *elts = (const asc__ast_expr **)ix->u.tuple.elts;
  return ix->u.tuple.n;
}

/* np.mgrid[...] (one array of shape (n,) + extents) or np.ogrid[...]
 * of one slice. */
int32_t asc__lower_grid(lstate *ls, const asc__ast_expr *e) {
  int dt = ty(e)->dtype, n;
  const asc__ast_expr **elts;
  gaxis g[ASC_MAX_DIMS];
  asc__irval shape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS], v;
  asc__irblock *save;
  int32_t r;
  if (e->u.sub.index->kind != ASC_EXPR_TUPLE)
    return grid_1d(ls, e->u.sub.index, dt);
  n = grid_slices(e, &elts);
  for (int k = 0; k < n; k++)
    g[k] = grid_axis(ls, elts[k], dt, true);
  shape[0] = i64(n);
  for (int k = 0; k < n; k++)
    shape[k + 1] = g[k].n;
  r = asc__lower_alloc_array(ls, dt, n + 1, shape);
  asc__lower_own_cstrides(ls, r, n + 1, cs);
  /* slab k: element [k, i0, ..., in-1] is axis k's value at ik */
  for (int k = 0; k < n; k++) {
    save = asc__lower_open_nest(ls, &shape[1], n, &idx[1]);
    idx[0] = i64(k);
    v = axis_value(ls, &g[k], dt, idx[k + 1]);
    asc__lower_store_at(ls, r, asc__lower_dot_idx(ls, idx, cs, n + 1), v);
    ls->cur = save;
  }
  return r;
}

/* A new array of nd axes, all of extent 1 but axis k of extent n, whose
 * element i along k is value(i). */
static int32_t along_axis(lstate *ls, int dt, int nd, int k, asc__irval n,
                          const gaxis *g) {
  asc__irval shape[ASC_MAX_DIMS], idx[1];
  asc__irblock *save;
  int32_t r;
  for (int j = 0; j < nd; j++)
    shape[j] = j == k ? n : i64(1);
  r = asc__lower_alloc_array(ls, dt, nd, shape);
  save = asc__lower_open_nest(ls, &n, 1, idx);
  asc__lower_store_at(ls, r, idx[0],
                      g ? axis_value(ls, g, dt, idx[0])
                        : conv(ls, idx[0], dt));
  ls->cur = save;
  return r;
}

void asc__lower_grid_tuple(lstate *ls, const asc__ast_expr *e,
                           int32_t *regs) {
  const asc__ast_expr **elts;
  int n = grid_slices(e, &elts);
  int dt = asc__ty_find(ty(e)->elems[0])->dtype;
  gaxis g[ASC_MAX_DIMS];
  for (int k = 0; k < n; k++)
    g[k] = grid_axis(ls, elts[k], dt, true);
  for (int k = 0; k < n; k++)
    regs[k] = along_axis(ls, dt, n, k, g[k].n, &g[k]);
}

/* ---------------------------------------------------------- np.meshgrid */

/* Output k of np.meshgrid of n arrays: xi[k] flattened along axis k
 * (axes 0 and 1 swapped for 'xy'), broadcast to every extent unless
 * sparse. */
void asc__lower_meshgrid(lstate *ls, const asc__ast_expr *e, int32_t *regs) {
  asc__ast_expr *const *a = e->u.call.rargs;
  asc__type *t = ty(e);
  int n = t->n;
  bool ij = e->u.call.nrargs > 8 && a[8] != NULL &&
            a[8]->kind == ASC_EXPR_STR && strcmp(a[8]->u.str.s, "ij") == 0;
  bool sparse = e->u.call.nrargs > 9 && a[9] != NULL &&
                a[9]->kind == ASC_EXPR_BOOL && a[9]->u.bval;
  asc__lview v[ASC_MAX_DIMS];
  asc__irval len[ASC_MAX_DIMS], shape[ASC_MAX_DIMS];
  int axis[ASC_MAX_DIMS];
  for (int k = 0; k < n; k++) {
    asc__lower_arg_view(ls, a[k], &v[k]);
    len[k] = asc__lower_view_size(ls, &v[k]);
    axis[k] = k;
  }
  if (!ij && n > 1) {
    axis[0] = 1;
    axis[1] = 0;
  }
  for (int k = 0; k < n; k++)
    shape[axis[k]] = len[k];
  for (int k = 0; k < n; k++) {
    int dt = asc__ty_find(t->elems[k])->dtype;
    asc__irval oshape[ASC_MAX_DIMS], cs[ASC_MAX_DIMS], idx[ASC_MAX_DIMS];
    asc__irval vcs[ASC_MAX_DIMS], vidx[ASC_MAX_DIMS], rest, x;
    asc__irblock *save;
    for (int j = 0; j < n; j++)
      oshape[j] = sparse && j != axis[k] ? i64(1) : shape[j];
    regs[k] = asc__lower_alloc_array(ls, dt, n, oshape);
    asc__lower_own_cstrides(ls, regs[k], n, cs);
    asc__lower_c_strides(ls, v[k].shape, v[k].nd, vcs);
    save = asc__lower_open_nest(ls, oshape, n, idx);
    /* element idx[axis] of xi in C order */
    rest = idx[axis[k]];
    for (int j = 0; j + 1 < v[k].nd; j++) {
      vidx[j] = op2(ls, ASC_IR_FLOORDIV, ascInt64, rest, vcs[j]);
      rest = op2(ls, ASC_IR_SUB, ascInt64, rest, mul(ls, vidx[j], vcs[j]));
    }
    if (v[k].nd > 0)
      vidx[v[k].nd - 1] = rest;
    x = asc__lower_load_at(ls, &v[k], vidx, v[k].nd);
    asc__lower_store_at(ls, regs[k], asc__lower_dot_idx(ls, idx, cs, n), x);
    ls->cur = save;
  }
}

/* ------------------------------------------------ np.indices(sparse=True) */

void asc__lower_sparse_indices(lstate *ls, const asc__ast_expr *e,
                               int32_t *regs) {
  const asc__ast_expr *dims = e->u.call.rargs[0];
  int n = ty(e)->n;
  asc__irval shape[ASC_MAX_DIMS];
  if (dims->kind == ASC_EXPR_TUPLE) {
    for (int k = 0; k < n; k++)
      shape[k] = conv(ls, asc__lower_expr(ls, dims->u.tuple.elts[k]),
                      ascInt64);
  } else {
    asc__lower_agg(ls, dims, ty(dims), shape);
    for (int k = 0; k < n; k++)
      shape[k] = conv(ls, shape[k], ascInt64);
  }
  for (int k = 0; k < n; k++)
    asc__lower_raise_if(ls, op2(ls, ASC_IR_LT, ascInt64, shape[k], i64(0)),
                        ASC_KEXC_VALUE_ERROR,
                        "negative dimensions are not allowed", i64(0),
                        i64(0));
  for (int k = 0; k < n; k++)
    regs[k] = along_axis(ls, ascInt64, n, k, shape[k], NULL);
}
