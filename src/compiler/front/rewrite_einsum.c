/*
 * np.einsum(subscripts, a[, b]) with a constant subscripts string,
 * rewritten during name resolution into what kernels compile
 * (docs/arrays.md "np.einsum"):
 *
 *   'ij,jk->ik', 'ij,j->i', 'bij,bjk->bik', 'ji,jk->ik'   a @ b, each
 *       operand transposed when its contracted letter comes first, the
 *       result transposed when the output lists the letters the other
 *       way ('ij,jk->ki'): BLAS calls for float32/float64
 *   'i,i->'                       a @ b of vectors (their dot)
 *   'ij,ij->ij', 'ij,ji->ij'      a * b (b transposed to a's order)
 *   'i,j->ij'                     np.multiply.outer(a, b)
 *   'ii->i', 'ii->'               the diagonal (a view), its sum
 *   'ij->ji', 'ij->', 'ijk->ki'   a transpose, np.sum over the letters the
 *                                 output leaves out
 *
 * Each operand is wrapped in a check of its number of axes (numpy's
 * error at compile time).  Other forms are a compile error naming these.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/front/resolve_int.h"

#define MAXL ASC_MAX_DIMS

typedef struct term {
  char s[MAXL + 1];
  int n;
} term;

static asc__ast_expr *int_lit(resolver *r, int64_t v, asc__loc loc) {
  asc__ast_expr *e = asc__rewrite_node(r, ASC_EXPR_INT, loc, 1);
  e->u.ival = (uint64_t)v;
  return e;
}

static int depth_of(const asc__ast_expr *a, const asc__ast_expr *b) {
  int d = a->depth;
  if (b != NULL && b->depth > d)
    d = b->depth;
  return d + 1;
}

/* A call of a builtin the rewrite makes, already bound (its operand
 * resolved by asc__rewrite_ufunc_method, once). */
static asc__ast_expr *made(resolver *r, const asc__ast_expr *np,
                           asc__builtin_id id, asc__ast_expr *a, int64_t x,
                           int64_t y) {
  asc__ast_expr *c = asc__rewrite_node(r, ASC_EXPR_CALL, a->loc,
                                       a->depth + 1);
  asc__ast_expr **ra = asc__arena_alloc(r->c, 3 * sizeof *ra);
  ra[0] = a;
  ra[1] = int_lit(r, x, a->loc);
  ra[2] = int_lit(r, y, a->loc);
  c->u.call.func = asc__rewrite_np_attr(r, np, "einsum", a->loc);
  c->u.call.args = ra;
  c->u.call.nargs = 3;
  c->u.call.rargs = ra;
  c->u.call.nrargs = 3;
  c->u.call.builtin = asc__builtin_get(id);
  return c;
}

/* np.NAME(x, <args>) with the given extra positional arguments. */
static asc__ast_expr *np_call(resolver *r, const asc__ast_expr *np,
                              const char *name, asc__ast_expr *x,
                              asc__ast_expr *y) {
  asc__ast_expr *c = asc__rewrite_node(r, ASC_EXPR_CALL, x->loc,
                                       depth_of(x, y));
  asc__ast_expr **args = asc__arena_alloc(r->c, 2 * sizeof *args);
  args[0] = x;
  args[1] = y;
  c->u.call.func = asc__rewrite_np_attr(r, np, name, x->loc);
  c->u.call.args = args;
  c->u.call.nargs = y != NULL ? 2 : 1;
  return c;
}

static asc__ast_expr *binary(resolver *r, asc__binop op, asc__ast_expr *x,
                             asc__ast_expr *y) {
  asc__ast_expr *e = asc__rewrite_node(r, ASC_EXPR_BINARY, x->loc,
                                       depth_of(x, y));
  e->u.binary.op = op;
  e->u.binary.lhs = x;
  e->u.binary.rhs = y;
  return e;
}

static asc__ast_expr *int_tuple(resolver *r, const int *v, int n,
                                asc__loc loc) {
  asc__ast_expr *t = asc__rewrite_node(r, ASC_EXPR_TUPLE, loc, 2);
  t->u.tuple.elts = asc__arena_alloc(r->c, sizeof *t->u.tuple.elts *
                                               (size_t)(n ? n : 1));
  t->u.tuple.n = n;
  for (int k = 0; k < n; k++)
    t->u.tuple.elts[k] = int_lit(r, v[k], loc);
  return t;
}

/* x, whose axes carry the letters of *t, with its axes put in the order
 * of letters want (each a letter of t): np.transpose when they differ. */
static asc__ast_expr *reorder(resolver *r, const asc__ast_expr *np,
                              asc__ast_expr *x, term *t, const char *want) {
  int perm[MAXL], n = (int)strlen(want);
  bool same = true;
  for (int k = 0; k < n; k++) {
    perm[k] = (int)(strchr(t->s, want[k]) - t->s);
    same = same && perm[k] == k;
  }
  if (same)
    return x;
  memcpy(t->s, want, (size_t)n + 1);
  return np_call(r, np, "transpose", x, int_tuple(r, perm, n, x->loc));
}

/* x with letters *t summed where out lacks them, then in out's order. */
static asc__ast_expr *finish(resolver *r, const asc__ast_expr *np,
                             asc__ast_expr *x, term *t, const char *out) {
  int axes[MAXL], n = 0;
  char rest[MAXL + 1];
  int m = 0;
  if (t->n == 0)
    return x; /* 'i,i->': already a number */
  if (out[0] == '\0')
    return np_call(r, np, "sum", x, NULL); /* every axis: a number */
  for (int k = 0; k < t->n; k++) {
    if (strchr(out, t->s[k]) == NULL)
      axes[n++] = k;
    else
      rest[m++] = t->s[k];
  }
  rest[m] = '\0';
  if (n > 0) {
    x = np_call(r, np, "sum", x,
                n == 1 ? int_lit(r, axes[0], x->loc)
                       : int_tuple(r, axes, n, x->loc));
    memcpy(t->s, rest, (size_t)m + 1);
    t->n = m;
  }
  return reorder(r, np, x, t, out);
}

static bool repeats(const term *t) {
  for (int i = 0; i < t->n; i++)
    if (strchr(t->s + i + 1, t->s[i]) != NULL)
      return true;
  return false;
}

static bool has(const term *t, char c) { return strchr(t->s, c) != NULL; }

/* a @ b for the contraction of one letter, a batch letter first in
 * both (and the output) or none: the product and its letters, or NULL. */
static asc__ast_expr *product(resolver *r, const asc__ast_expr *np,
                              asc__ast_expr *x, asc__ast_expr *y,
                              const term *a, const term *b, const char *out,
                              term *t) {
  char k = 0, batch = 0, fa = 0, fb = 0;
  int nk = 0;
  for (int i = 0; i < a->n; i++)
    if (has(b, a->s[i]) && strchr(out, a->s[i]) == NULL) {
      k = a->s[i];
      nk++;
    }
  if (nk != 1)
    return NULL;
  if (a->n == 3 || b->n == 3) {
    batch = a->s[0];
    if (a->n != 3 || b->n != 3 || b->s[0] != batch || out[0] != batch ||
        batch == k)
      return NULL;
  }
  for (int i = batch ? 1 : 0; i < a->n; i++)
    if (a->s[i] != k && !has(b, a->s[i]))
      fa = a->s[i];
  for (int i = batch ? 1 : 0; i < b->n; i++)
    if (b->s[i] != k && !has(a, b->s[i]))
      fb = b->s[i];
  if ((int)strlen(out) != (batch != 0) + (fa != 0) + (fb != 0) ||
      (fa && strchr(out, fa) == NULL) || (fb && strchr(out, fb) == NULL) ||
      a->n != (batch != 0) + (fa != 0) + 1 ||
      b->n != (batch != 0) + (fb != 0) + 1)
    return NULL;
  {
    term ta = *a, tb = *b;
    char wa[4] = {0}, wb[4] = {0};
    int q = 0;
    if (batch) {
      wa[q] = wb[q] = batch;
      q++;
    }
    wa[q] = fa ? fa : k;
    wa[q + 1] = fa ? k : 0;
    wb[q] = k;
    wb[q + 1] = fb;
    x = reorder(r, np, x, &ta, wa);
    y = reorder(r, np, y, &tb, wb);
  }
  t->n = 0;
  if (batch)
    t->s[t->n++] = batch;
  if (fa)
    t->s[t->n++] = fa;
  if (fb)
    t->s[t->n++] = fb;
  t->s[t->n] = '\0';
  return binary(r, ASC_BIN_MATMUL, x, y);
}

static const char *FORMS =
    "kernels take one or two operands: products of one contracted letter "
    "('ij,jk->ik', 'ij,j->i', 'bij,bjk->bik', transposed operands), "
    "elementwise products and outer products ('ij,ij->ij', 'i,j->ij'), "
    "'ii->', 'ii->i', transposes and sums ('ij->ji', 'ij->')";

/* Parses the subscripts into terms and the output; false after an
 * error (numpy's wording). */
static bool parse(resolver *r, const asc__ast_expr *e, const char *s,
                  int nops, term *in, char *out) {
  const char *arrow = strstr(s, "->"), *p = s;
  int nt = 0, count[128] = {0};
  if (strstr(s, ".") != NULL) {
    asc__diag_error(r->c, e->loc, "np.einsum's ellipsis ('...') is not "
                    "supported in kernels");
    return false;
  }
  for (;;) {
    term t = {{0}, 0};
    while (*p && *p != ',' && (arrow == NULL || p < arrow)) {
      if (*p != ' ') {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
          asc__diag_error(r->c, e->loc, "invalid subscript '%c' in einstein "
                          "sum subscripts string, subscripts must be letters",
                          *p);
          return false;
        }
        if (t.n == MAXL) {
          asc__diag_error(r->c, e->loc, "np.einsum in kernels takes at most "
                          "%d subscripts per operand", MAXL);
          return false;
        }
        t.s[t.n++] = *p;
        count[(int)*p]++;
      }
      p++;
    }
    if (nt < 2)
      in[nt] = t;
    nt++;
    if (*p != ',')
      break;
    p++;
  }
  if (nt != nops) {
    asc__diag_error(r->c, e->loc, "%s operands provided to einstein sum "
                    "function than specified in the subscripts string",
                    nt > nops ? "fewer" : "more");
    return false;
  }
  if (arrow == NULL) {
    /* implicit: the letters seen once, in alphabetical order */
    int n = 0;
    for (int c = 'A'; c <= 'z'; c++)
      if (count[c] == 1 && n < MAXL)
        out[n++] = (char)c;
    out[n] = '\0';
    return true;
  }
  {
    int n = 0;
    for (p = arrow + 2; *p; p++) {
      if (*p == ' ')
        continue;
      if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
        asc__diag_error(r->c, e->loc, "invalid subscript '%c' in einstein "
                        "sum subscripts string, subscripts must be letters",
                        *p);
        return false;
      }
      if (count[(int)*p] == 0) {
        asc__diag_error(r->c, e->loc, "einstein sum subscripts string "
                        "included output subscript '%c' which never "
                        "appeared in an input", *p);
        return false;
      }
      if (memchr(out, *p, (size_t)n) != NULL) {
        asc__diag_error(r->c, e->loc, "einstein sum subscripts string "
                        "includes output subscript '%c' multiple times", *p);
        return false;
      }
      if (n == MAXL)
        break;
      out[n++] = *p;
    }
    out[n] = '\0';
  }
  return true;
}

bool asc__rewrite_einsum(resolver *r, asc__ast_expr *e) {
  const asc__ast_expr *f = e->u.call.func, *sub;
  const asc__ast_expr *np;
  const asc__sym *s;
  asc__ast_expr *x, *y = NULL, *res = NULL;
  term in[2], t;
  char out[MAXL + 1];
  int nops;
  if (f->kind != ASC_EXPR_ATTR || f->u.attr.value->kind != ASC_EXPR_NAME ||
      strcmp(f->u.attr.attr, "einsum") != 0)
    return false;
  np = f->u.attr.value;
  s = asc__resolve_lookup(r, np->u.name.id);
  if (s == NULL || s->kind != ASC_SYM_MODULE || s->u.module != ASC_NS_NP)
    return false;
  sub = e->u.call.nargs > 0 ? e->u.call.args[0] : NULL;
  if (sub == NULL || sub->kind != ASC_EXPR_STR || e->u.call.nkws != 0) {
    asc__diag_error(r->c, e->loc, "np.einsum in kernels takes a constant "
                    "subscripts string and the operands, no keywords");
    return true;
  }
  nops = e->u.call.nargs - 1;
  if (nops < 1 || nops > 2) {
    asc__diag_error(r->c, e->loc, "np.einsum of %d operands is not "
                    "supported: %s", nops, FORMS);
    return true;
  }
  if (!parse(r, e, sub->u.str.s, nops, in, out))
    return true;
  x = made(r, np, ASC_BI_NP_EINSUM_OPERAND, e->u.call.args[1], in[0].n, 0);
  if (nops == 2)
    y = made(r, np, ASC_BI_NP_EINSUM_OPERAND, e->u.call.args[2], in[1].n, 1);
  t = in[0];
  if (nops == 1 && t.n == 2 && t.s[0] == t.s[1]) {
    /* 'ii': the diagonal */
    res = made(r, np, ASC_BI_NP_EINSUM_DIAG, x, 0, t.s[0]);
    t.s[1] = '\0';
    t.n = 1;
  } else if (nops == 1 && !repeats(&t)) {
    res = x;
  } else if (nops == 2 && !repeats(&in[0]) && !repeats(&in[1])) {
    term tb = in[1];
    bool same_letters = in[0].n == in[1].n;
    bool disjoint = true;
    for (int k = 0; k < in[0].n; k++) {
      same_letters = same_letters && has(&in[1], in[0].s[k]);
      disjoint = disjoint && !has(&in[1], in[0].s[k]);
    }
    if (same_letters) {
      res = binary(r, ASC_BIN_MUL, x, reorder(r, np, y, &tb, in[0].s));
    } else if (disjoint && in[0].n + in[1].n <= MAXL) {
      asc__ast_expr *o = asc__rewrite_node(r, ASC_EXPR_ATTR, e->loc, 2);
      asc__ast_expr *c;
      o->u.attr.value = asc__rewrite_np_attr(r, np, "multiply", e->loc);
      o->u.attr.attr = "outer";
      o->u.attr.attr_loc = e->loc;
      c = np_call(r, np, "outer", x, y);
      c->u.call.func = o;
      res = c;
      memcpy(t.s + t.n, in[1].s, (size_t)in[1].n + 1);
      t.n += in[1].n;
    } else {
      res = product(r, np, x, y, &in[0], &in[1], out, &t);
    }
  }
  if (res == NULL) {
    asc__diag_error(r->c, e->loc, "np.einsum('%s') is not supported in "
                    "kernels: %s", sub->u.str.s, FORMS);
    return true;
  }
  res = finish(r, np, res, &t, out);
  {
    asc__loc loc = e->loc;
    *e = *res;
    e->loc = loc;
  }
  asc__resolve_expr(r, e);
  return true;
}
