/*
 * Kernel parameter tables (ascKernelParamInfo) from the resolved AST: what
 * ascKernelGetInfo reports and what the launch checks arguments against
 * and reads its signature with (asc__sig_of_args).
 *
 * An annotated parameter is what its annotation says.  An unannotated one
 * is generic; it is a tensor when the kernel uses it as one -- indexes it,
 * takes its shape, ndim or size, hands it to an atomic, a lock or len, or
 * passes it to a helper that does -- and a scalar otherwise.
 *
 * A parameter is written (isWritten) when the kernel may store through it:
 * a subscript of it (or of a local bound to it or to a view of it) is an
 * assignment target, it is the first argument of an atomic or a lock, or
 * it goes to a helper parameter that is written.  Callers must then pass
 * writable memory.
 */
#include <string.h>

#include "compiler/front/frontend.h"

#define MAX_HELPER_DEPTH 16

/* Answers already found for (helper, parameter), so that helpers that
 * call each other many times are walked once each. */
typedef struct memo {
  struct {
    const asc__ast_func *fn;
    int param;
    int tensor;
  } e[128];
  int n;
} memo;

typedef struct usage {
  const asc__sym *sym;
  bool tensor;
  int nall;     /* times the name appears */
  int narray;   /* of those, as an operand of a whole-array statement,
                 * of '@', of a numpy function kernels do not have, of a
                 * kernel's return value, or the target of an augmented
                 * assignment */
  bool kernel;  /* walking the kernel itself, not a helper */
  const asc__ast_expr *counted[64]; /* the appearances in narray, once
                                     * each (a[:] = x @ y walks x twice) */
  int ncounted;
  /* parameters already found to be arrays: `out *= v` with out one of
   * them is a whole-array statement too */
  const asc__sym *const *arrays;
  int narrays;
  /* locals bound to new arrays so far (c = np.zeros(n), c = a + b with a
   * an array): the operands of such a value are array operands */
  const asc__sym *locals[32];
  int nlocals;
  const asc__ast_func *fn; /* the kernel (for locals' uses) */
  int local_depth;         /* local_is_array walks around this one */
  int helpers;  /* helper calls followed to get here */
  memo *memo;
  int first_line; /* of the name's first appearance in the kernel */
} usage;

static bool names(const asc__ast_expr *e, const asc__sym *s) {
  return e != NULL && e->kind == ASC_EXPR_NAME && e->u.name.sym == s;
}

static void use_func(usage *u, const asc__ast_func *fn, int depth);
static void use_block(usage *u, const asc__ast_block *b, int depth);

/* How helper fn uses its parameter i: 1 as a tensor, 2 only as an
 * operand of whole-array statements (an array, or a number there), else
 * 0. */
static int helper_param_is_tensor(const asc__ast_func *fn, int i,
                                  int helpers, memo *m) {
  usage v;
  if (i < 0 || i >= fn->nparams || helpers > MAX_HELPER_DEPTH)
    return 0;
  for (int k = 0; k < m->n; k++)
    if (m->e[k].fn == fn && m->e[k].param == i)
      return m->e[k].tensor;
  if (fn->params[i].annotation != NULL) {
    const asc__ast_expr *a = fn->params[i].annotation;
    const asc__builtin *b = asc__expr_builtin(a);
    if (b != NULL && b->id == ASC_BI_TENSOR)
      return 1;
    return a->kind == ASC_EXPR_SUBSCRIPT &&
           a->u.sub.value->kind == ASC_EXPR_ATTR &&
           a->u.sub.value->u.attr.builtin != NULL &&
           a->u.sub.value->u.attr.builtin->id == ASC_BI_TENSOR;
  }
  memset(&v, 0, sizeof v);
  v.sym = fn->params[i].sym;
  v.helpers = helpers;
  v.memo = m;
  use_func(&v, fn, 0);
  {
    int how = v.tensor                                  ? 1
              : v.narray > 0 && v.narray == v.nall ? 2
                                                   : 0;
    if (m->n < (int)(sizeof m->e / sizeof m->e[0])) {
      m->e[m->n].fn = fn;
      m->e[m->n].param = i;
      m->e[m->n].tensor = how;
      m->n++;
    }
    return how;
  }
}

static void use_array_operand(usage *u, const asc__ast_expr *e, int depth);
static bool mentions_array(const usage *u, const asc__ast_expr *e,
                           int depth);
static bool arith(const asc__ast_expr *e);

/* np.X(...) or np.linalg.X(...): a call of a numpy function. */
static bool numpy_call(const asc__ast_expr *e) {
  const asc__ast_expr *f = e->u.call.func;
  while (f != NULL && f->kind == ASC_EXPR_ATTR)
    f = f->u.attr.value;
  return f != NULL && f != e->u.call.func && f->kind == ASC_EXPR_NAME &&
         f->u.name.sym != NULL &&
         ((f->u.name.sym->kind == ASC_SYM_MODULE &&
           f->u.name.sym->u.module == ASC_NS_NP) ||
          (f->u.name.sym->kind == ASC_SYM_FOREIGN &&
           f->u.name.sym->u.import != NULL &&
           strcmp(f->u.name.sym->u.import->module, "numpy") == 0));
}

/* Is e a boolean mask by its form (a comparison, or & | ^ ~ of them)? */
static bool mask_syntax(const asc__ast_expr *e, int depth) {
  if (e == NULL || depth > 64)
    return false;
  switch (e->kind) {
  case ASC_EXPR_COMPARE:
    return true;
  case ASC_EXPR_BINARY:
    return (e->u.binary.op == ASC_BIN_BITAND ||
            e->u.binary.op == ASC_BIN_BITOR ||
            e->u.binary.op == ASC_BIN_BITXOR) &&
           (mask_syntax(e->u.binary.lhs, depth + 1) ||
            mask_syntax(e->u.binary.rhs, depth + 1));
  case ASC_EXPR_UNARY:
    return e->u.unary.op == ASC_UN_INVERT &&
           mask_syntax(e->u.unary.operand, depth + 1);
  default:
    return false;
  }
}

/* An ASC_NUMPY_FUNCS call: its first argument takes an array, or a
 * tuple of them (np.hstack((a, b))), and so do the second of the ufuncs'
 * outer, np.bincount's weights, np.cov's y, np.average's weights and
 * the b of np.linalg.solve and np.linalg.lstsq;
 * np.digitize takes a number or an array first and its bins second,
 * np.indices a shape. */
static bool numpy_func_array(const usage *u, const asc__ast_expr *e) {
  const asc__builtin *b = e->u.call.builtin;
  if (b == NULL || !asc__builtin_is_numpy_func(b->id))
    return false;
  for (int i = 0; i < e->u.call.nrargs && i < 8; i++) {
    const asc__ast_expr *a = e->u.call.rargs[i];
    bool arr = (i == 0 && b->id != ASC_BI_NP_DIGITIZE &&
                b->id != ASC_BI_NP_INDICES) ||
               b->id == ASC_BI_NP_MESHGRID ||
               (i == 4 && b->id == ASC_BI_NP_HISTOGRAM) ||
               (i == 3 && b->id == ASC_BI_NP_HISTOGRAM_BIN_EDGES) ||
               (i == 1 && (b->id == ASC_BI_NP_ADD_OUTER ||
                           b->id == ASC_BI_NP_SUBTRACT_OUTER ||
                           b->id == ASC_BI_NP_MULTIPLY_OUTER ||
                           b->id == ASC_BI_NP_BINCOUNT ||
                           b->id == ASC_BI_NP_COV ||
                           b->id == ASC_BI_NP_CORRCOEF ||
                           b->id == ASC_BI_NP_DIGITIZE ||
                           b->id == ASC_BI_NP_LINALG_SOLVE ||
                           b->id == ASC_BI_NP_LINALG_LSTSQ)) ||
               (i == 2 && b->id == ASC_BI_NP_AVERAGE);
    if (!arr || a == NULL)
      continue;
    if (names(a, u->sym))
      return true;
    for (int k = 0; a->kind == ASC_EXPR_TUPLE && k < a->u.tuple.n; k++)
      if (names(a->u.tuple.elts[k], u->sym))
        return true;
  }
  return false;
}

static void use_expr(usage *u, const asc__ast_expr *e, int depth) {
  if (e == NULL || u->tensor || depth > 4 * ASC_MAX_NESTING)
    return;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    if (names(e, u->sym)) {
      u->nall++;
      if (u->kernel && u->first_line == 0)
        u->first_line = e->loc.line;
    }
    break;
  case ASC_EXPR_SLICE:
    use_expr(u, e->u.slice.lower, depth + 1);
    use_expr(u, e->u.slice.upper, depth + 1);
    use_expr(u, e->u.slice.step, depth + 1);
    break;
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      use_expr(u, e->u.tuple.elts[i], depth + 1);
    break;
  case ASC_EXPR_ATTR:
    if (names(e->u.attr.value, u->sym) &&
        (strcmp(e->u.attr.attr, "shape") == 0 ||
         strcmp(e->u.attr.attr, "ndim") == 0 ||
         strcmp(e->u.attr.attr, "size") == 0 ||
         strcmp(e->u.attr.attr, "T") == 0 ||
         strcmp(e->u.attr.attr, "dtype") == 0))
      u->tensor = true;
    use_expr(u, e->u.attr.value, depth + 1);
    break;
  case ASC_EXPR_SUBSCRIPT:
    if (names(e->u.sub.value, u->sym))
      u->tensor = true;
    if (mask_syntax(e->u.sub.index, 0)) /* a[b > 0]: b is an array */
      use_array_operand(u, e->u.sub.index, depth + 1);
    use_expr(u, e->u.sub.value, depth + 1);
    use_expr(u, e->u.sub.index, depth + 1);
    break;
  case ASC_EXPR_CALL: {
    const asc__builtin *b = e->u.call.builtin;
    if (b != NULL && e->u.call.nrargs > 0 &&
        names(e->u.call.rargs[0], u->sym) &&
        (b->id == ASC_BI_ATOMIC_ADD || b->id == ASC_BI_ATOMIC_SUB ||
         b->id == ASC_BI_ATOMIC_MIN || b->id == ASC_BI_ATOMIC_MAX ||
         b->id == ASC_BI_ATOMIC_CAS || b->id == ASC_BI_ATOMIC_EXCHANGE ||
         b->id == ASC_BI_LOCK || b->id == ASC_BI_UNLOCK ||
         b->id == ASC_BI_LEN || asc__builtin_is_reduction(b->id) ||
         b->id == ASC_BI_NP_DOT || b->id == ASC_BI_NP_FILL ||
         b->id == ASC_BI_NP_COPY || b->id == ASC_BI_NP_ASTYPE ||
         b->id == ASC_BI_NP_EMPTY_LIKE || b->id == ASC_BI_NP_ZEROS_LIKE ||
         b->id == ASC_BI_NP_ONES_LIKE || b->id == ASC_BI_NP_FULL_LIKE ||
         b->id == ASC_BI_NP_RESHAPE || b->id == ASC_BI_NP_TRANSPOSE ||
         b->id == ASC_BI_NP_SWAPAXES || b->id == ASC_BI_NP_MOVEAXIS ||
         b->id == ASC_BI_NP_RAVEL || b->id == ASC_BI_NP_FLATTEN ||
         b->id == ASC_BI_NP_CUMSUM || b->id == ASC_BI_NP_CUMPROD ||
         b->id == ASC_BI_NP_OUTER ||
         b->id == ASC_BI_NP_NORM || b->id == ASC_BI_NP_FLIP ||
         b->id == ASC_BI_NP_FLIPUD || b->id == ASC_BI_NP_FLIPLR ||
         b->id == ASC_BI_NP_ROT90 ||
         b->id == ASC_BI_NP_OUTER_LEFT || b->id == ASC_BI_NP_EINSUM_OPERAND))
      u->tensor = true;
    if (numpy_func_array(u, e))
      u->tensor = true;
    if (b != NULL && (b->id == ASC_BI_NP_HISTOGRAM ||
                      b->id == ASC_BI_NP_HISTOGRAM_BIN_EDGES) &&
        e->u.call.nrargs > 1 && e->u.call.rargs[1] != NULL)
      use_array_operand(u, e->u.call.rargs[1], depth + 1); /* bins */
    if (b != NULL &&
        (b->id == ASC_BI_NP_OUTER || b->id == ASC_BI_NP_OUTER_LEFT) &&
        e->u.call.nrargs > 1 &&
        names(e->u.call.rargs[1], u->sym))
      u->tensor = true;
    if (b != NULL && b->id == ASC_BI_NP_DOT && e->u.call.nrargs > 1 &&
        names(e->u.call.rargs[1], u->sym))
      u->tensor = true;
    if (b != NULL &&
        (asc__builtin_is_reduction(b->id) || b->id == ASC_BI_NP_DOT))
      for (int i = 0; i < e->u.call.nrargs && i < 2; i++)
        use_array_operand(u, e->u.call.rargs[i], depth + 1);
    if (b == NULL && numpy_call(e)) /* np.outer(u, v): reported later */
      for (int i = 0; i < e->u.call.nargs; i++)
        use_array_operand(u, e->u.call.args[i], depth + 1);
    for (int i = 0; i < e->u.call.nrargs; i++) {
      const asc__ast_expr *a = e->u.call.rargs[i];
      if (a == NULL)
        continue;
      if (e->u.call.callee != NULL && u->kernel && arith(a) &&
          mentions_array(u, a, 0)) /* f(a + b) with a an array */
        use_array_operand(u, a, depth + 1);
      if (e->u.call.callee != NULL && names(a, u->sym)) {
        int how = helper_param_is_tensor(e->u.call.callee, i,
                                         u->helpers + 1, u->memo);
        if (how == 1)
          u->tensor = true;
        else if (how == 2) /* an operand there: an array or a number */
          use_array_operand(u, a, depth + 1);
      }
      if (a->kind == ASC_EXPR_LAMBDA)
        use_func(u, a->u.lambda.fn, depth + 1);
      else
        use_expr(u, a, depth + 1);
    }
    break;
  }
  case ASC_EXPR_UNARY:
    use_expr(u, e->u.unary.operand, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    if (e->u.binary.op == ASC_BIN_MATMUL) {
      use_array_operand(u, e->u.binary.lhs, depth + 1);
      use_array_operand(u, e->u.binary.rhs, depth + 1);
    }
    use_expr(u, e->u.binary.lhs, depth + 1);
    use_expr(u, e->u.binary.rhs, depth + 1);
    break;
  case ASC_EXPR_BOOLOP:
    use_expr(u, e->u.boolop.lhs, depth + 1);
    use_expr(u, e->u.boolop.rhs, depth + 1);
    break;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      use_expr(u, e->u.cmp.operands[i], depth + 1);
    break;
  case ASC_EXPR_IFEXP:
    use_expr(u, e->u.ifexp.cond, depth + 1);
    use_expr(u, e->u.ifexp.then, depth + 1);
    use_expr(u, e->u.ifexp.orelse, depth + 1);
    break;
  case ASC_EXPR_LAMBDA:
    use_func(u, e->u.lambda.fn, depth + 1);
    break;
  case ASC_EXPR_COMP:
    use_expr(u, e->comp->elt, depth + 1);
    for (int i = 0; i < e->comp->nfors; i++) {
      use_expr(u, e->comp->fors[i].iter, depth + 1);
      use_expr(u, e->comp->fors[i].cond, depth + 1);
    }
    break;
  default:
    break;
  }
}

/* Does subscript e select a view, as written (a slice or None in its
 * index)? */
static bool slices(const asc__ast_expr *e) {
  const asc__ast_expr *ix;
  int n;
  if (e == NULL || e->kind != ASC_EXPR_SUBSCRIPT)
    return false;
  ix = e->u.sub.index;
  n = ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.n : 1;
  for (int i = 0; i < n; i++) {
    const asc__ast_expr *x =
        ix->kind == ASC_EXPR_TUPLE ? ix->u.tuple.elts[i] : ix;
    if (x->kind == ASC_EXPR_SLICE || x->kind == ASC_EXPR_NONE)
      return true;
  }
  return false;
}

/* The value of a whole-array statement (out[1:] = v, out[:] += v): counts
 * the parameter's appearances as an operand of its elementwise
 * arithmetic.  A parameter that appears only there (and as the target of
 * augmented assignments, b *= 2) is an array, or a number passed as a
 * 0-d array (docs/arrays.md). */
static void use_array_operand(usage *u, const asc__ast_expr *e, int depth) {
  if (e == NULL || u->tensor || depth > 4 * ASC_MAX_NESTING)
    return;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    if (names(e, u->sym)) {
      for (int i = 0; i < u->ncounted; i++)
        if (u->counted[i] == e)
          return;
      if (u->ncounted < (int)(sizeof u->counted / sizeof u->counted[0]))
        u->counted[u->ncounted++] = e;
      else
        u->narray = -1000000; /* too many to tell: not an array use */
      u->narray++;
    }
    break;
  case ASC_EXPR_UNARY:
    use_array_operand(u, e->u.unary.operand, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    use_array_operand(u, e->u.binary.lhs, depth + 1);
    use_array_operand(u, e->u.binary.rhs, depth + 1);
    break;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      use_array_operand(u, e->u.cmp.operands[i], depth + 1);
    break;
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      use_array_operand(u, e->u.tuple.elts[i], depth + 1);
    break;
  case ASC_EXPR_CALL: {
    const asc__builtin *b = e->u.call.builtin;
    if (b == NULL || e->u.call.callee != NULL)
      break;
    if (asc__builtin_is_creation(b->id) || b->id == ASC_BI_NP_RESHAPE) {
      /* np.zeros((n, m)): a shape, not operands; a.copy(): a is one */
      if (b->id == ASC_BI_NP_COPY || b->id == ASC_BI_NP_ASTYPE ||
          b->id == ASC_BI_NP_EMPTY_LIKE || b->id == ASC_BI_NP_ZEROS_LIKE ||
          b->id == ASC_BI_NP_ONES_LIKE || b->id == ASC_BI_NP_FULL_LIKE ||
          b->id == ASC_BI_NP_RESHAPE)
        use_array_operand(u, e->u.call.rargs[0], depth + 1);
      break;
    }
    for (int i = 0; i < e->u.call.nrargs; i++)
      use_array_operand(u, e->u.call.rargs[i], depth + 1);
    break;
  }
  default:
    break;
  }
}

/* Does e mention an array already known: a parameter found to be one, a
 * local bound to a new array, or a call that makes one (np.zeros)? */
static bool mentions_array(const usage *u, const asc__ast_expr *e,
                           int depth) {
  if (e == NULL || depth > 4 * ASC_MAX_NESTING)
    return false;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    for (int i = 0; i < u->narrays; i++)
      if (names(e, u->arrays[i]))
        return true;
    for (int i = 0; i < u->nlocals; i++)
      if (names(e, u->locals[i]))
        return true;
    return false;
  case ASC_EXPR_UNARY:
    return mentions_array(u, e->u.unary.operand, depth + 1);
  case ASC_EXPR_BINARY:
    return mentions_array(u, e->u.binary.lhs, depth + 1) ||
           mentions_array(u, e->u.binary.rhs, depth + 1);
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      if (mentions_array(u, e->u.cmp.operands[i], depth + 1))
        return true;
    return false;
  case ASC_EXPR_CALL:
    if (e->u.call.callee != NULL) {
      /* a helper given an array may return one: counting a number as an
       * array operand only passes it as a 0-d array, which a kernel reads
       * as the number */
      for (int i = 0; i < e->u.call.nrargs; i++)
        if (mentions_array(u, e->u.call.rargs[i], depth + 1))
          return true;
      return false;
    }
    if (e->u.call.builtin == NULL)
      return false;
    if (asc__builtin_is_creation(e->u.call.builtin->id))
      return true;
    for (int i = 0; i < e->u.call.nrargs; i++)
      if (mentions_array(u, e->u.call.rargs[i], depth + 1))
        return true;
    return false;
  default:
    return false;
  }
}

/* Is local s used as an array later (indexed, its shape taken, an
 * operand of whole-array statements only)?  Then an arithmetic value
 * bound to it is a new array. */
static bool local_is_array(const usage *u, const asc__sym *s) {
  usage v;
  if (u->fn == NULL || u->local_depth >= 3)
    return false;
  memset(&v, 0, sizeof v);
  v.sym = s;
  v.memo = u->memo;
  v.kernel = true;
  v.arrays = u->arrays;
  v.narrays = u->narrays;
  v.helpers = u->helpers;
  v.fn = u->fn;
  v.local_depth = u->local_depth + 1;
  use_func(&v, u->fn, 0);
  return v.tensor || (v.narray > 0 && v.narray == v.nall);
}

static bool arith(const asc__ast_expr *e) {
  return e != NULL &&
         (e->kind == ASC_EXPR_BINARY || e->kind == ASC_EXPR_UNARY ||
          e->kind == ASC_EXPR_COMPARE ||
          (e->kind == ASC_EXPR_CALL && e->u.call.builtin != NULL &&
           e->u.call.callee == NULL));
}

static void use_stmt(usage *u, const asc__ast_stmt *s, int depth) {
  switch (s->kind) {
  case ASC_STMT_EXPR:
    use_expr(u, s->u.expr.value, depth + 1);
    break;
  case ASC_STMT_ASSIGN:
    for (int i = 0; i < s->u.assign.ntargets; i++) {
      const asc__ast_expr *t = s->u.assign.targets[i];
      if (!(u->local_depth > 0 && names(t, u->sym))) /* a binding, not a use */
        use_expr(u, t, depth + 1);
      if (slices(t)) {
        use_array_operand(u, s->u.assign.value, depth + 1);
      } else if (t->kind == ASC_EXPR_NAME && t->u.name.sym != NULL &&
                 u->kernel && t->u.name.sym->kind == ASC_SYM_LOCAL &&
                 ((arith(s->u.assign.value) &&
                   (mentions_array(u, s->u.assign.value, 0) ||
                    local_is_array(u, t->u.name.sym))) ||
                  (names(s->u.assign.value, u->sym) &&
                   local_is_array(u, t->u.name.sym)))) {
        /* c = a + b with a an array: a new array, b an operand of it */
        use_array_operand(u, s->u.assign.value, depth + 1);
        if (u->nlocals < (int)(sizeof u->locals / sizeof u->locals[0]))
          u->locals[u->nlocals++] = t->u.name.sym;
      }
    }
    use_expr(u, s->u.assign.value, depth + 1);
    break;
  case ASC_STMT_AUGASSIGN: {
    bool whole = false;
    if (names(s->u.aug.target, u->sym))
      u->narray++;
    for (int i = 0; i < u->narrays; i++)
      if (names(s->u.aug.target, u->arrays[i]))
        whole = true;
    /* U += 0.15 * ru with U = np.zeros(...): a whole-array statement */
    for (int i = 0; i < u->nlocals; i++)
      if (names(s->u.aug.target, u->locals[i]))
        whole = true;
    use_expr(u, s->u.aug.target, depth + 1);
    if (whole || slices(s->u.aug.target))
      use_array_operand(u, s->u.aug.value, depth + 1);
    use_expr(u, s->u.aug.value, depth + 1);
    break;
  }
  case ASC_STMT_ANNASSIGN:
    use_expr(u, s->u.ann.target, depth + 1);
    use_expr(u, s->u.ann.value, depth + 1);
    break;
  case ASC_STMT_IF:
    use_expr(u, s->u.if_.cond, depth + 1);
    use_block(u, &s->u.if_.body, depth + 1);
    use_block(u, &s->u.if_.orelse, depth + 1);
    break;
  case ASC_STMT_FOR:
    use_expr(u, s->u.for_.iter, depth + 1);
    use_block(u, &s->u.for_.body, depth + 1);
    break;
  case ASC_STMT_WHILE:
    use_expr(u, s->u.while_.cond, depth + 1);
    use_block(u, &s->u.while_.body, depth + 1);
    break;
  case ASC_STMT_RETURN:
    /* numba kernels return arrays: the operands of a returned value may
     * be arrays, and a number passed for one is a 0-d array (whose
     * result the binding hands back as a number, as numpy does) */
    if (u->kernel)
      use_array_operand(u, s->u.ret.value, depth + 1);
    use_expr(u, s->u.ret.value, depth + 1);
    break;
  case ASC_STMT_ASSERT:
    use_expr(u, s->u.assert_.test, depth + 1);
    break;
  case ASC_STMT_TRY:
    use_block(u, &s->u.try_.body, depth + 1);
    for (int i = 0; i < s->u.try_.nhandlers; i++)
      use_block(u, &s->u.try_.handlers[i].body, depth + 1);
    use_block(u, &s->u.try_.orelse, depth + 1);
    use_block(u, &s->u.try_.finalbody, depth + 1);
    break;
  case ASC_STMT_WITH:
    use_block(u, &s->u.with.body, depth + 1);
    break;
  case ASC_STMT_FUNCDEF:
    use_func(u, s->u.funcdef.fn, depth + 1);
    break;
  default:
    break;
  }
}

static void use_block(usage *u, const asc__ast_block *b, int depth) {
  if (depth > 4 * ASC_MAX_NESTING)
    return;
  for (int i = 0; i < b->n && !u->tensor; i++)
    use_stmt(u, b->stmts[i], depth + 1);
}

static void use_func(usage *u, const asc__ast_func *fn, int depth) {
  use_block(u, &fn->body, depth + 1);
}

/* ------------------------------------------------------------ writes */

#define MAX_ALIASES 32

typedef struct wmemo {
  struct {
    const asc__ast_func *fn;
    int param;
    bool written;
  } e[128];
  int n;
} wmemo;

typedef struct writes {
  const asc__sym *syms[MAX_ALIASES]; /* the parameter and its aliases */
  int nsyms;
  bool written;
  int helpers;
  wmemo *memo;
} writes;

static void wr_func(writes *w, const asc__ast_func *fn, int depth);

/* Whether e is the parameter, an alias of it, or a subscript/slice chain
 * of one of those. */
static bool wr_based(const writes *w, const asc__ast_expr *e) {
  while (e != NULL && e->kind == ASC_EXPR_SUBSCRIPT)
    e = e->u.sub.value;
  if (e == NULL || e->kind != ASC_EXPR_NAME)
    return false;
  for (int i = 0; i < w->nsyms; i++)
    if (e->u.name.sym == w->syms[i])
      return true;
  return false;
}

static void wr_alias(writes *w, const asc__ast_expr *target) {
  if (target == NULL || target->kind != ASC_EXPR_NAME ||
      target->u.name.sym == NULL || wr_based(w, target))
    return;
  if (w->nsyms < MAX_ALIASES)
    w->syms[w->nsyms++] = target->u.name.sym;
  else
    w->written = true; /* too many aliases to follow: assume a store */
}

static bool helper_param_is_written(const asc__ast_func *fn, int i,
                                    int helpers, wmemo *m) {
  writes v;
  if (i < 0 || i >= fn->nparams)
    return false;
  if (helpers > MAX_HELPER_DEPTH)
    return true;
  for (int k = 0; k < m->n; k++)
    if (m->e[k].fn == fn && m->e[k].param == i)
      return m->e[k].written;
  v.syms[0] = fn->params[i].sym;
  v.nsyms = 1;
  v.written = false;
  v.helpers = helpers;
  v.memo = m;
  wr_func(&v, fn, 0);
  if (m->n < (int)(sizeof m->e / sizeof m->e[0])) {
    m->e[m->n].fn = fn;
    m->e[m->n].param = i;
    m->e[m->n].written = v.written;
    m->n++;
  }
  return v.written;
}

static void wr_expr(writes *w, const asc__ast_expr *e, int depth) {
  if (e == NULL || w->written || depth > 4 * ASC_MAX_NESTING)
    return;
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      wr_expr(w, e->u.tuple.elts[i], depth + 1);
    break;
  case ASC_EXPR_ATTR:
    wr_expr(w, e->u.attr.value, depth + 1);
    break;
  case ASC_EXPR_SUBSCRIPT:
    wr_expr(w, e->u.sub.value, depth + 1);
    wr_expr(w, e->u.sub.index, depth + 1);
    break;
  case ASC_EXPR_CALL: {
    const asc__builtin *b = e->u.call.builtin;
    if (b != NULL && e->u.call.nrargs > 0 &&
        wr_based(w, e->u.call.rargs[0]) &&
        (b->id == ASC_BI_ATOMIC_ADD || b->id == ASC_BI_ATOMIC_SUB ||
         b->id == ASC_BI_ATOMIC_MIN || b->id == ASC_BI_ATOMIC_MAX ||
         b->id == ASC_BI_ATOMIC_CAS || b->id == ASC_BI_ATOMIC_EXCHANGE ||
         b->id == ASC_BI_LOCK || b->id == ASC_BI_UNLOCK ||
         b->id == ASC_BI_NP_FILL))
      w->written = true;
    for (int i = 0; i < e->u.call.nrargs; i++) {
      const asc__ast_expr *a = e->u.call.rargs[i];
      if (a == NULL)
        continue;
      if (e->u.call.callee != NULL && wr_based(w, a) &&
          helper_param_is_written(e->u.call.callee, i, w->helpers + 1,
                                  w->memo))
        w->written = true;
      if (a->kind == ASC_EXPR_LAMBDA)
        wr_func(w, a->u.lambda.fn, depth + 1);
      else
        wr_expr(w, a, depth + 1);
    }
    break;
  }
  case ASC_EXPR_UNARY:
    wr_expr(w, e->u.unary.operand, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    wr_expr(w, e->u.binary.lhs, depth + 1);
    wr_expr(w, e->u.binary.rhs, depth + 1);
    break;
  case ASC_EXPR_BOOLOP:
    wr_expr(w, e->u.boolop.lhs, depth + 1);
    wr_expr(w, e->u.boolop.rhs, depth + 1);
    break;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      wr_expr(w, e->u.cmp.operands[i], depth + 1);
    break;
  case ASC_EXPR_IFEXP:
    wr_expr(w, e->u.ifexp.cond, depth + 1);
    wr_expr(w, e->u.ifexp.then, depth + 1);
    wr_expr(w, e->u.ifexp.orelse, depth + 1);
    break;
  case ASC_EXPR_LAMBDA:
    wr_func(w, e->u.lambda.fn, depth + 1);
    break;
  default:
    break;
  }
}

/* A store to target: a subscript of the parameter writes it; a name bound
 * to the parameter (or a view of it) becomes an alias. */
static void wr_target(writes *w, const asc__ast_expr *target,
                      const asc__ast_expr *value, int depth) {
  if (target == NULL)
    return;
  if (target->kind == ASC_EXPR_TUPLE) {
    for (int i = 0; i < target->u.tuple.n; i++)
      wr_target(w, target->u.tuple.elts[i], NULL, depth + 1);
    return;
  }
  if (target->kind == ASC_EXPR_SUBSCRIPT && wr_based(w, target))
    w->written = true;
  if (value != NULL && wr_based(w, value))
    wr_alias(w, target);
  wr_expr(w, target, depth + 1);
}

static void wr_block(writes *w, const asc__ast_block *b, int depth);

static void wr_stmt(writes *w, const asc__ast_stmt *s, int depth) {
  switch (s->kind) {
  case ASC_STMT_EXPR:
    wr_expr(w, s->u.expr.value, depth + 1);
    break;
  case ASC_STMT_ASSIGN:
    for (int i = 0; i < s->u.assign.ntargets; i++)
      wr_target(w, s->u.assign.targets[i], s->u.assign.value, depth + 1);
    wr_expr(w, s->u.assign.value, depth + 1);
    break;
  case ASC_STMT_AUGASSIGN:
    wr_target(w, s->u.aug.target, NULL, depth + 1);
    wr_expr(w, s->u.aug.value, depth + 1);
    break;
  case ASC_STMT_ANNASSIGN:
    wr_target(w, s->u.ann.target, s->u.ann.value, depth + 1);
    wr_expr(w, s->u.ann.value, depth + 1);
    break;
  case ASC_STMT_IF:
    wr_expr(w, s->u.if_.cond, depth + 1);
    wr_block(w, &s->u.if_.body, depth + 1);
    wr_block(w, &s->u.if_.orelse, depth + 1);
    break;
  case ASC_STMT_FOR:
    wr_expr(w, s->u.for_.iter, depth + 1);
    wr_block(w, &s->u.for_.body, depth + 1);
    break;
  case ASC_STMT_WHILE:
    wr_expr(w, s->u.while_.cond, depth + 1);
    wr_block(w, &s->u.while_.body, depth + 1);
    break;
  case ASC_STMT_RETURN:
    wr_expr(w, s->u.ret.value, depth + 1);
    break;
  case ASC_STMT_ASSERT:
    wr_expr(w, s->u.assert_.test, depth + 1);
    break;
  case ASC_STMT_TRY:
    wr_block(w, &s->u.try_.body, depth + 1);
    for (int i = 0; i < s->u.try_.nhandlers; i++)
      wr_block(w, &s->u.try_.handlers[i].body, depth + 1);
    wr_block(w, &s->u.try_.orelse, depth + 1);
    wr_block(w, &s->u.try_.finalbody, depth + 1);
    break;
  case ASC_STMT_WITH:
    wr_block(w, &s->u.with.body, depth + 1);
    break;
  case ASC_STMT_FUNCDEF:
    wr_func(w, s->u.funcdef.fn, depth + 1);
    break;
  default:
    break;
  }
}

static void wr_block(writes *w, const asc__ast_block *b, int depth) {
  if (depth > 4 * ASC_MAX_NESTING)
    return;
  for (int i = 0; i < b->n && !w->written; i++)
    wr_stmt(w, b->stmts[i], depth + 1);
}

/* Walks fn until no new alias appears (an alias bound after its store in
 * a loop body is seen on the next round). */
static void wr_func(writes *w, const asc__ast_func *fn, int depth) {
  int before;
  do {
    before = w->nsyms;
    wr_block(w, &fn->body, depth + 1);
  } while (!w->written && w->nsyms != before);
}

static ascDataType dtype_of_builtin(const asc__builtin *b) {
  static const struct {
    asc__builtin_id id;
    ascDataType dt;
  } map[] = {
      {ASC_BI_DT_BOOL, ascBool},         {ASC_BI_DT_INT8, ascInt8},
      {ASC_BI_DT_INT16, ascInt16},       {ASC_BI_DT_INT32, ascInt32},
      {ASC_BI_DT_INT64, ascInt64},       {ASC_BI_DT_UINT8, ascUInt8},
      {ASC_BI_DT_UINT16, ascUInt16},     {ASC_BI_DT_UINT32, ascUInt32},
      {ASC_BI_DT_UINT64, ascUInt64},     {ASC_BI_DT_FLOAT16, ascFloat16},
      {ASC_BI_DT_BFLOAT16, ascBFloat16}, {ASC_BI_DT_FLOAT32, ascFloat32},
      {ASC_BI_DT_FLOAT64, ascFloat64},   {ASC_BI_FLOAT, ascFloat64},
      {ASC_BI_INT, ascInt64},            {ASC_BI_BOOL, ascBool},
      {ASC_BI_DT_COMPLEX64, ascComplex64},
      {ASC_BI_DT_COMPLEX128, ascComplex128},
  };
  for (size_t i = 0; b != NULL && i < sizeof map / sizeof map[0]; i++)
    if (map[i].id == b->id)
      return map[i].dt;
  return ascDataTypeCount;
}

/* Fills p from annotation a; false when a is not a parameter type. */
static bool from_annotation(ascKernelParamInfo *p, const asc__ast_expr *a,
                            int depth) {
  const asc__builtin *b = asc__expr_builtin(a);
  ascDataType dt = dtype_of_builtin(b);
  if (dt != ascDataTypeCount) {
    p->dtype = dt;
    return true;
  }
  if (b != NULL && b->id == ASC_BI_CONSTEXPR) {
    p->isConstExpr = 1;
    p->generic = 1;
    return true;
  }
  if (b != NULL && b->id == ASC_BI_TENSOR) { /* any dtype and rank */
    p->isTensor = 1;
    p->generic = 1;
    return true;
  }
  if (a->kind != ASC_EXPR_SUBSCRIPT || depth > 2)
    return false;
  b = asc__expr_builtin(a->u.sub.value);
  if (b != NULL && b->id == ASC_BI_CONSTEXPR) {
    p->isConstExpr = 1;
    return from_annotation(p, a->u.sub.index, depth + 1) && !p->isTensor;
  }
  if (b != NULL && b->id == ASC_BI_TENSOR) {
    const asc__ast_expr *ix = a->u.sub.index;
    if (ix->kind != ASC_EXPR_TUPLE || ix->u.tuple.n != 2 ||
        ix->u.tuple.elts[1]->kind != ASC_EXPR_INT ||
        ix->u.tuple.elts[1]->u.ival > ASC_MAX_DIMS)
      return false;
    p->dtype = dtype_of_builtin(asc__expr_builtin(ix->u.tuple.elts[0]));
    if (p->dtype == ascDataTypeCount)
      return false;
    p->isTensor = 1;
    p->ndim = (int)ix->u.tuple.elts[1]->u.ival;
    return true;
  }
  return false;
}

/* How an unannotated parameter is used (the rules at the top), given the
 * parameters already known to be arrays. */
static void classify(const asc__ast_func *fn, const asc__sym *sym, memo *m,
                     const asc__sym *const *arrays, int narrays,
                     ascKernelParamInfo *p) {
  usage u;
  memset(&u, 0, sizeof u);
  u.sym = sym;
  u.memo = m;
  u.kernel = true;
  u.arrays = arrays;
  u.narrays = narrays;
  u.fn = fn;
  use_func(&u, fn, 0);
  p->numberAsArray = !u.tensor && u.narray > 0 && u.narray == u.nall;
  p->isTensor = u.tensor || p->numberAsArray;
  if (!p->isTensor && p->useLine == 0)
    p->useLine = u.first_line;
}

bool asc__kernel_params(asc__cctx *c, const asc__ast_func *fn,
                        ascKernelParamInfo *out) {
  bool ok = true;
  memo m;
  wmemo wm;
  const asc__sym **arrays;
  int narrays = 0;
  m.n = 0;
  wm.n = 0;
  for (int i = 0; i < fn->nparams; i++) {
    const asc__ast_param *pa = &fn->params[i];
    ascKernelParamInfo *p = &out[i];
    memset(p, 0, sizeof *p);
    p->name = pa->name;
    p->dtype = ascDataTypeCount;
    p->ndim = -1;
    if (pa->def != NULL && asc__expr_builtin(pa->def) != NULL &&
        asc__expr_builtin(pa->def)->kind == ASC_BK_DTYPE) {
      /* a launch passes arrays and numbers: a dtype is no argument */
      asc__diag_error(c, pa->def->loc, "parameter '%s': a kernel's "
                      "parameters take arrays and numbers, not a dtype "
                      "(its default is one); give the dtype in the body "
                      "(np.zeros(n, dtype=np.float64), x.astype(...)) or "
                      "to an @asc.func helper's parameter, which may take "
                      "one", pa->name);
      ok = false;
    }
    if (pa->annotation != NULL) {
      if (!from_annotation(p, pa->annotation, 0)) {
        asc__diag_error(c, pa->annotation->loc,
                        "parameter '%s': not a parameter type (a dtype such "
                        "as asc.float32, int, float, "
                        "asc.Tensor[dtype, ndim], asc.Tensor or "
                        "asc.ConstExpr[...])",
                        pa->name);
        ok = false;
      }
      if (p->generic)
        p->dtype = ascDataTypeCount;
    } else {
      classify(fn, pa->sym, &m, NULL, 0, p);
      p->generic = 1;
      /* never read: whatever is passed is ignored (useLine -1) */
      if (!p->isTensor && pa->sym != NULL && !pa->sym->read)
        p->useLine = -1;
    }
  }
  /* second look: operands of `out op= v` where out is an array */
  arrays = asc__arena_alloc(c, sizeof *arrays * ((size_t)fn->nparams + 1));
  for (int i = 0; i < fn->nparams; i++)
    if (out[i].isTensor)
      arrays[narrays++] = fn->params[i].sym;
  for (int i = 0; i < fn->nparams && narrays > 0; i++)
    if (fn->params[i].annotation == NULL && !out[i].isTensor)
      classify(fn, fn->params[i].sym, &m, arrays, narrays, &out[i]);
  for (int i = 0; i < fn->nparams; i++) {
    const asc__ast_param *pa = &fn->params[i];
    ascKernelParamInfo *p = &out[i];
    if (p->isTensor) {
      writes w;
      w.syms[0] = pa->sym;
      w.nsyms = 1;
      w.written = false;
      w.helpers = 0;
      w.memo = &wm;
      wr_func(&w, fn, 0);
      p->isWritten = w.written;
    }
  }
  return ok;
}

/* ------------------------------------------------------------ results */

typedef struct results {
  asc__cctx *c;
  int n;               /* -1 until the first `return v` */
  asc__loc first;
  bool bad;
} results;

static void res_block(results *r, const asc__ast_block *b, int depth);

/* How many values `return v` gives: those of a tuple written out, or of
 * a numpy call or grid whose result is a tuple of arrays of a length its
 * text tells (np.histogram, np.meshgrid, np.ogrid[...], sparse
 * np.indices); 1 otherwise. */
static int returned_count(const asc__ast_expr *v) {
  const asc__builtin *b;
  if (v->kind == ASC_EXPR_TUPLE)
    return v->u.tuple.n >= 2 ? v->u.tuple.n : 1;
  if (v->kind == ASC_EXPR_SUBSCRIPT &&
      v->u.sub.value->kind == ASC_EXPR_ATTR &&
      v->u.sub.value->u.attr.builtin != NULL &&
      v->u.sub.value->u.attr.builtin->id == ASC_BI_NP_OGRID &&
      v->u.sub.index->kind == ASC_EXPR_TUPLE && v->u.sub.index->u.tuple.n >= 2)
    return v->u.sub.index->u.tuple.n;
  if (v->kind != ASC_EXPR_CALL || v->u.call.callee != NULL ||
      (b = v->u.call.builtin) == NULL || v->u.call.rargs == NULL)
    return 1;
  if (b->id == ASC_BI_NP_HISTOGRAM)
    return 2;
  if (b->id == ASC_BI_NP_UNIQUE && v->u.call.nrargs > 3 &&
      v->u.call.rargs[3] != NULL && v->u.call.rargs[3]->kind == ASC_EXPR_BOOL &&
      v->u.call.rargs[3]->u.bval)
    return 2;
  if (b->id == ASC_BI_NP_MESHGRID) {
    int n = 0;
    for (int k = 0; k < 8 && k < v->u.call.nrargs; k++)
      if (v->u.call.rargs[k] != NULL &&
          v->u.call.rargs[k]->kind != ASC_EXPR_NONE)
        n = k + 1;
    return n >= 2 ? n : 1;
  }
  if (b->id == ASC_BI_NP_INDICES && v->u.call.nrargs > 2 &&
      v->u.call.rargs[2] != NULL && v->u.call.rargs[2]->kind == ASC_EXPR_BOOL &&
      v->u.call.rargs[2]->u.bval && v->u.call.rargs[0]->kind == ASC_EXPR_TUPLE &&
      v->u.call.rargs[0]->u.tuple.n >= 2)
    return v->u.call.rargs[0]->u.tuple.n;
  return 1;
}

static void res_stmt(results *r, const asc__ast_stmt *s, int depth) {
  switch (s->kind) {
  case ASC_STMT_RETURN: {
    const asc__ast_expr *v = s->u.ret.value;
    int k;
    if (v == NULL)
      return;
    k = returned_count(v);
    if (r->n < 0) {
      r->n = k;
      r->first = v->loc;
    } else if (k != r->n && !r->bad) {
      r->bad = true;
      asc__diag_error(r->c, v->loc,
                      "the kernel returns %d value%s here but %d elsewhere "
                      "(every `return` of a kernel returns as many values)",
                      k, k == 1 ? "" : "s", r->n);
      asc__diag_note(r->c, r->first, "returns %d value%s here", r->n,
                     r->n == 1 ? "" : "s");
    }
    return;
  }
  case ASC_STMT_IF:
    res_block(r, &s->u.if_.body, depth + 1);
    res_block(r, &s->u.if_.orelse, depth + 1);
    return;
  case ASC_STMT_FOR:
    res_block(r, &s->u.for_.body, depth + 1);
    return;
  case ASC_STMT_WHILE:
    res_block(r, &s->u.while_.body, depth + 1);
    return;
  case ASC_STMT_TRY:
    res_block(r, &s->u.try_.body, depth + 1);
    for (int i = 0; i < s->u.try_.nhandlers; i++)
      res_block(r, &s->u.try_.handlers[i].body, depth + 1);
    res_block(r, &s->u.try_.orelse, depth + 1);
    res_block(r, &s->u.try_.finalbody, depth + 1);
    return;
  case ASC_STMT_WITH:
    res_block(r, &s->u.with.body, depth + 1);
    return;
  default: /* nested defs return for themselves */
    return;
  }
}

static void res_block(results *r, const asc__ast_block *b, int depth) {
  if (depth > 4 * ASC_MAX_NESTING)
    return;
  for (int i = 0; i < b->n; i++)
    res_stmt(r, b->stmts[i], depth + 1);
}

int asc__kernel_nresults(asc__cctx *c, const asc__ast_func *fn) {
  results r = {c, -1, {0, 0}, false};
  res_block(&r, &fn->body, 0);
  if (r.bad)
    return -1;
  return r.n < 0 ? 0 : r.n;
}
