/*
 * np.array and np.asarray (docs/arrays.md, "Lists and comprehensions"):
 * a copy of an array, a 0-d array of a number, or the array a list
 * written in place describes (numbers, lists of numbers, or arrays,
 * stacked).
 */
#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

int32_t asc__lower_np_array(lstate *ls, const asc__ast_expr *e) {
  const asc__ast_expr *a = e->u.call.rargs[0];
  asc__type *at = asc__ty_find(a->type);
  int dt = ty(e)->dtype, nd = ty(e)->ndim, n, m;
  asc__irval shape[2];
  int32_t r;
  if (at->kind == ASC_TY_SCALAR)
    return asc__lower_scalar_array(ls, dt, asc__lower_expr(ls, a));
  if (at->kind == ASC_TY_TENSOR) {
    /* a copy, as numpy's np.array; np.asarray's too (a kernel's writes
     * to it do not reach the argument: docs/arrays.md) */
    asc__lview src, w;
    asc__lower_view(ls, a, &src);
    r = asc__lower_alloc_array(ls, dt, nd, src.shape);
    asc__lower_whole_tensor(ls, r, &w);
    asc__lower_store_nest(ls, NULL, &w, a, -1);
    return r;
  }
  n = a->u.tuple.n;
  if (n > 0 && asc__ty_find(a->u.tuple.elts[0]->type)->kind ==
                   ASC_TY_TENSOR)
    return asc__lower_stack(ls, e);
  m = nd == 2 ? (n > 0 ? a->u.tuple.elts[0]->u.tuple.n : 0) : 1;
  shape[0] = i64(n);
  shape[1] = i64(m);
  r = asc__lower_alloc_array(ls, dt, nd, shape);
  for (int k = 0; k < n; k++)
    for (int j = 0; j < m; j++) {
      const asc__ast_expr *x =
          nd == 2 ? a->u.tuple.elts[k]->u.tuple.elts[j] : a->u.tuple.elts[k];
      asc__lower_store_at(ls, r, i64((int64_t)k * m + j),
                          asc__lower_expr(ls, x));
    }
  return r;
}
