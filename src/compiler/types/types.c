/*
 * Types, unification and the promotion lattice (docs/types.md).
 */
#include <string.h>

#include "compiler/types/types.h"

/* ------------------------------------------------------------- dtypes */

bool asc__dtype_valid(ascDataType dt) {
  return (unsigned)dt < (unsigned)ascDataTypeCount;
}

bool asc__dtype_is_float(ascDataType dt) {
  return dt == ascFloat16 || dt == ascBFloat16 || dt == ascFloat32 ||
         dt == ascFloat64;
}

bool asc__dtype_is_complex(ascDataType dt) {
  return dt == ascComplex64 || dt == ascComplex128;
}

bool asc__dtype_is_signed(ascDataType dt) {
  return dt >= ascInt8 && dt <= ascInt64;
}

bool asc__dtype_is_unsigned(ascDataType dt) {
  return dt >= ascUInt8 && dt <= ascUInt64;
}

bool asc__dtype_is_int(ascDataType dt) {
  return asc__dtype_is_signed(dt) || asc__dtype_is_unsigned(dt);
}

int asc__dtype_bits(ascDataType dt) {
  return dt == ascBool ? 1 : (int)(ascDataTypeSize(dt) * 8);
}

const char *asc__dtype_long(ascDataType dt) {
  const char *s = ascDataTypeName(dt);
  return s ? s : "?";
}

bool asc__dtype_from_name(const char *s, size_t n, ascDataType *dt) {
  for (int i = 0; i < (int)ascDataTypeCount; i++) {
    const char *a = asc__dtype_short((ascDataType)i);
    const char *b = ascDataTypeName((ascDataType)i);
    if ((strlen(a) == n && memcmp(a, s, n) == 0) ||
        (strlen(b) == n && memcmp(b, s, n) == 0)) {
      *dt = (ascDataType)i;
      return true;
    }
  }
  return false;
}

/* ---------------------------------------------------------- the lattice */

/* Nodes of JAX's type promotion lattice (jax._src.dtypes), complex and
 * float8 types left out.  An edge a -> b means a promotes to b.  L_CW is
 * the weak complex (a Python complex such as `1j`). */
enum {
  L_B1, L_U8, L_U16, L_U32, L_U64, L_IW, L_I8, L_I16, L_I32, L_I64,
  L_FW, L_BF16, L_F16, L_F32, L_F64, L_CW, L_C64, L_C128, L_COUNT
};

static const uint32_t lattice_edges[L_COUNT] = {
    [L_B1] = 1u << L_IW,
    [L_U8] = 1u << L_I16 | 1u << L_U16,
    [L_U16] = 1u << L_I32 | 1u << L_U32,
    [L_U32] = 1u << L_I64 | 1u << L_U64,
    [L_U64] = 1u << L_FW,
    [L_IW] = 1u << L_U8 | 1u << L_I8,
    [L_I8] = 1u << L_I16,
    [L_I16] = 1u << L_I32,
    [L_I32] = 1u << L_I64,
    [L_I64] = 1u << L_FW,
    [L_FW] = 1u << L_BF16 | 1u << L_F16 | 1u << L_CW,
    [L_BF16] = 1u << L_F32,
    [L_F16] = 1u << L_F32,
    [L_F32] = 1u << L_F64 | 1u << L_C64,
    [L_F64] = 1u << L_C128,
    [L_CW] = 1u << L_C64,
    [L_C64] = 1u << L_C128,
    [L_C128] = 0,
};

static int num_node(asc__num a) {
  static const signed char node[ascDataTypeCount] = {
      L_B1, L_I8, L_I16, L_I32, L_I64, L_U8, L_U16,
      L_U32, L_U64, L_F16, L_BF16, L_F32, L_F64, L_C64, L_C128};
  if (a.weak)
    return asc__dtype_is_complex(a.dtype) ? L_CW
           : asc__dtype_is_float(a.dtype) ? L_FW
           : a.dtype == ascBool         ? L_B1
                                        : L_IW;
  return asc__dtype_valid(a.dtype) ? node[a.dtype] : L_C128;
}

static asc__num node_num(int n) {
  static const ascDataType dt[L_COUNT] = {
      ascBool,  ascUInt8, ascUInt16, ascUInt32,   ascUInt64,
      ascInt64, ascInt8,  ascInt16,  ascInt32,    ascInt64,
      ascFloat64, ascBFloat16, ascFloat16, ascFloat32, ascFloat64,
      ascComplex128, ascComplex64, ascComplex128};
  asc__num r = {dt[n], n == L_IW || n == L_FW || n == L_CW};
  return r;
}

/* Every node at or above n (reflexive, transitive). */
static uint32_t upset(int n) {
  uint32_t set = 1u << n, prev = 0;
  while (set != prev) {
    prev = set;
    for (int i = 0; i < L_COUNT; i++)
      if (set & (1u << i))
        set |= lattice_edges[i];
  }
  return set;
}

asc__num asc__num_promote(asc__num a, asc__num b) {
  uint32_t common = upset(num_node(a)) & upset(num_node(b));
  /* The least upper bound is the common node whose own up-set is all of
   * the common nodes; the lattice guarantees one exists (C128 tops it). */
  for (int i = 0; i < L_COUNT; i++)
    if ((common & (1u << i)) && upset(i) == common)
      return node_num(i);
  return node_num(L_C128);
}

/* ---------------------------------------------------------------- types */

static asc__type *mk(asc__cctx *c, asc__tkind k) {
  asc__type *t = asc__arena_alloc(c, sizeof *t);
  t->kind = k;
  t->dtype = ascDataTypeCount;
  return t;
}

asc__type *asc__ty_var(asc__cctx *c, int32_t id) {
  asc__type *t = mk(c, ASC_TY_VAR);
  t->id = id;
  return t;
}

asc__type *asc__ty_error(asc__cctx *c) { return mk(c, ASC_TY_ERROR); }
asc__type *asc__ty_none(asc__cctx *c) { return mk(c, ASC_TY_NONE); }
asc__type *asc__ty_str(asc__cctx *c) { return mk(c, ASC_TY_STR); }

asc__type *asc__ty_dtype(asc__cctx *c, ascDataType dt) {
  asc__type *t = mk(c, ASC_TY_DTYPE);
  t->dtype = dt;
  return t;
}

asc__type *asc__ty_scalar(asc__cctx *c, ascDataType dt) {
  asc__type *t = mk(c, ASC_TY_SCALAR);
  ASC_CHECK(c, asc__dtype_valid(dt));
  t->dtype = dt;
  return t;
}

asc__type *asc__ty_weak(asc__cctx *c, ascDataType dt) {
  asc__type *t = asc__ty_scalar(c, dt);
  if (dt == ascBool)
    return t;
  t->dtype = asc__dtype_is_complex(dt) ? ascComplex128
             : asc__dtype_is_float(dt)   ? ascFloat64
                                         : ascInt64;
  t->weak = true;
  return t;
}

asc__type *asc__ty_tensor(asc__cctx *c, ascDataType dt, int32_t ndim,
                          bool contiguous) {
  asc__type *t = mk(c, ASC_TY_TENSOR);
  ASC_CHECK(c, asc__dtype_valid(dt) && ndim >= 0 && ndim <= ASC_MAX_DIMS);
  t->dtype = dt;
  t->ndim = ndim;
  t->contiguous = contiguous;
  return t;
}

asc__type *asc__ty_tuple(asc__cctx *c, int32_t n, asc__type *const *elems) {
  asc__type *t = mk(c, ASC_TY_TUPLE);
  t->n = n;
  t->elems = asc__arena_alloc(c, sizeof *t->elems * (size_t)(n > 0 ? n : 1));
  for (int32_t i = 0; i < n; i++)
    t->elems[i] = elems[i];
  return t;
}

asc__type *asc__ty_shape(asc__cctx *c, int32_t n) {
  asc__type *t = mk(c, ASC_TY_TUPLE);
  t->n = n;
  t->elems = asc__arena_alloc(c, sizeof *t->elems * (size_t)(n > 0 ? n : 1));
  for (int32_t i = 0; i < n; i++)
    t->elems[i] = asc__ty_scalar(c, ascInt64);
  return t;
}

asc__type *asc__ty_struct(asc__cctx *c, const char *name, int32_t n,
                          const asc__field *fields) {
  asc__type *t = mk(c, ASC_TY_STRUCT);
  t->name = name;
  t->n = n;
  t->fields = asc__arena_alloc(c, sizeof *t->fields * (size_t)(n > 0 ? n : 1));
  for (int32_t i = 0; i < n; i++)
    t->fields[i] = fields[i];
  return t;
}

asc__type *asc__ty_func(asc__cctx *c, const char *name, int32_t n,
                        asc__type *const *params, asc__type *ret) {
  asc__type *t = mk(c, ASC_TY_FUNC);
  t->name = name;
  t->n = n;
  t->elems = asc__arena_alloc(c, sizeof *t->elems * (size_t)(n > 0 ? n : 1));
  for (int32_t i = 0; i < n; i++)
    t->elems[i] = params[i];
  t->ret = ret;
  return t;
}

asc__type *asc__ty_find(asc__type *t) {
  asc__type *r = t;
  if (t == NULL)
    return NULL;
  while (r->kind == ASC_TY_VAR && r->link != NULL)
    r = r->link;
  while (t->kind == ASC_TY_VAR && t->link != NULL) {
    asc__type *next = t->link;
    t->link = r;
    t = next;
  }
  return r;
}

bool asc__ty_is_numeric(const asc__type *t) {
  return t != NULL && t->kind == ASC_TY_SCALAR;
}

bool asc__ty_is_intlike(const asc__type *t) {
  return asc__ty_is_numeric(t) && !asc__dtype_is_float(t->dtype) &&
         !asc__dtype_is_complex(t->dtype);
}

bool asc__ty_is_floatlike(const asc__type *t) {
  return asc__ty_is_numeric(t) && asc__dtype_is_float(t->dtype);
}

/* Types nest only through tuples, structs and functions, which the
 * compiler builds with a depth bounded by the source; this bound turns a
 * cyclic type (a compiler bug) into an internal error instead of a stack
 * overflow. */
#define MAX_TYPE_DEPTH 64

static bool equal_rec(asc__type *a, asc__type *b, int depth) {
  a = asc__ty_find(a);
  b = asc__ty_find(b);
  if (a == b)
    return true;
  if (a == NULL || b == NULL || depth > MAX_TYPE_DEPTH)
    return false;
  if (a->kind == ASC_TY_ERROR || b->kind == ASC_TY_ERROR)
    return true;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case ASC_TY_VAR:
    return false;
  case ASC_TY_NONE:
  case ASC_TY_STR:
  case ASC_TY_ERROR:
    return true;
  case ASC_TY_SCALAR:
    return a->dtype == b->dtype && a->weak == b->weak;
  case ASC_TY_DTYPE:
    return a->dtype == b->dtype;
  case ASC_TY_TENSOR:
    return a->dtype == b->dtype && a->ndim == b->ndim &&
           a->contiguous == b->contiguous;
  case ASC_TY_STRUCT:
    return a->name == b->name ||
           (a->name && b->name && strcmp(a->name, b->name) == 0);
  case ASC_TY_TUPLE:
  case ASC_TY_FUNC:
    if (a->n != b->n)
      return false;
    for (int32_t i = 0; i < a->n; i++)
      if (!equal_rec(a->elems[i], b->elems[i], depth + 1))
        return false;
    return a->kind == ASC_TY_TUPLE || equal_rec(a->ret, b->ret, depth + 1);
  }
  return false;
}

bool asc__ty_equal(asc__type *a, asc__type *b) { return equal_rec(a, b, 0); }

static bool occurs(asc__type *v, asc__type *t, int depth) {
  t = asc__ty_find(t);
  if (t == v)
    return true;
  if (t == NULL || depth > MAX_TYPE_DEPTH)
    return true;
  if (t->kind == ASC_TY_TUPLE || t->kind == ASC_TY_FUNC) {
    for (int32_t i = 0; i < t->n; i++)
      if (occurs(v, t->elems[i], depth + 1))
        return true;
    if (t->kind == ASC_TY_FUNC && occurs(v, t->ret, depth + 1))
      return true;
  }
  return false;
}

static bool unify_rec(asc__cctx *c, asc__type *a, asc__type *b, int depth) {
  a = asc__ty_find(a);
  b = asc__ty_find(b);
  if (a == b)
    return true;
  ASC_CHECK(c, a != NULL && b != NULL && depth <= MAX_TYPE_DEPTH);
  if (a->kind == ASC_TY_VAR) {
    if (occurs(a, b, 0))
      return false;
    a->link = b;
    return true;
  }
  if (b->kind == ASC_TY_VAR)
    return unify_rec(c, b, a, depth);
  if (a->kind == ASC_TY_ERROR || b->kind == ASC_TY_ERROR)
    return true;
  if (a->kind != b->kind)
    return false;
  if (a->kind == ASC_TY_TUPLE || a->kind == ASC_TY_FUNC) {
    if (a->n != b->n)
      return false;
    for (int32_t i = 0; i < a->n; i++)
      if (!unify_rec(c, a->elems[i], b->elems[i], depth + 1))
        return false;
    if (a->kind == ASC_TY_FUNC)
      return unify_rec(c, a->ret, b->ret, depth + 1);
    return true;
  }
  return asc__ty_equal(a, b);
}

bool asc__ty_unify(asc__cctx *c, asc__type *a, asc__type *b) {
  return unify_rec(c, a, b, 0);
}

asc__type *asc__ty_promote(asc__cctx *c, asc__type *a, asc__type *b) {
  asc__num x, y, r;
  a = asc__ty_find(a);
  b = asc__ty_find(b);
  if (!asc__ty_is_numeric(a) || !asc__ty_is_numeric(b))
    return NULL;
  x.dtype = a->dtype;
  x.weak = a->weak;
  y.dtype = b->dtype;
  y.weak = b->weak;
  r = asc__num_promote(x, y);
  if (r.dtype == a->dtype && r.weak == a->weak)
    return a;
  if (r.dtype == b->dtype && r.weak == b->weak)
    return b;
  return r.weak ? asc__ty_weak(c, r.dtype) : asc__ty_scalar(c, r.dtype);
}

static asc__type *join_rec(asc__cctx *c, asc__type *a, asc__type *b,
                           int depth) {
  a = asc__ty_find(a);
  b = asc__ty_find(b);
  ASC_CHECK(c, depth <= MAX_TYPE_DEPTH);
  if (a == NULL || a->kind == ASC_TY_VAR)
    return b;
  if (b == NULL || b->kind == ASC_TY_VAR)
    return a;
  if (a->kind == ASC_TY_ERROR)
    return a;
  if (b->kind == ASC_TY_ERROR)
    return b;
  if (a->kind == ASC_TY_SCALAR && b->kind == ASC_TY_SCALAR)
    return asc__ty_promote(c, a, b);
  if (a->kind == ASC_TY_TUPLE && b->kind == ASC_TY_TUPLE) {
    asc__type *t;
    if (a->n != b->n)
      return NULL;
    t = asc__ty_tuple(c, a->n, a->elems);
    for (int32_t i = 0; i < a->n; i++) {
      t->elems[i] = join_rec(c, a->elems[i], b->elems[i], depth + 1);
      if (t->elems[i] == NULL)
        return NULL;
    }
    return asc__ty_equal(t, a) ? a : t;
  }
  return asc__ty_equal(a, b) ? a : NULL;
}

asc__type *asc__ty_join(asc__cctx *c, asc__type *a, asc__type *b) {
  return join_rec(c, a, b, 0);
}

static asc__type *concrete_rec(asc__cctx *c, asc__type *t, int depth) {
  t = asc__ty_find(t);
  ASC_CHECK(c, depth <= MAX_TYPE_DEPTH);
  if (t == NULL || t->kind == ASC_TY_VAR)
    return NULL;
  switch (t->kind) {
  case ASC_TY_SCALAR:
    return t->weak ? asc__ty_scalar(c, t->dtype) : t;
  case ASC_TY_TUPLE:
  case ASC_TY_FUNC: {
    asc__type *r = mk(c, t->kind);
    *r = *t;
    r->elems = asc__arena_alloc(c, sizeof *r->elems *
                                       (size_t)(t->n > 0 ? t->n : 1));
    for (int32_t i = 0; i < t->n; i++)
      if ((r->elems[i] = concrete_rec(c, t->elems[i], depth + 1)) == NULL)
        return NULL;
    if (t->kind == ASC_TY_FUNC &&
        (r->ret = concrete_rec(c, t->ret, depth + 1)) == NULL)
      return NULL;
    return r;
  }
  default:
    return t;
  }
}

asc__type *asc__ty_concrete(asc__cctx *c, asc__type *t) {
  return concrete_rec(c, t, 0);
}

/* user: the text of a diagnostic, where weak scalars read as what they
 * come from ("a Python float literal"), not as the type system's name
 * (the --emit=types dump and docs/types.md say "weak float"). */
static void print_rec(asc__buf *b, asc__type *t, int depth, bool user) {
  t = asc__ty_find(t);
  if (t == NULL) {
    asc__buf_puts(b, "<null>");
    return;
  }
  if (depth > MAX_TYPE_DEPTH) {
    asc__buf_puts(b, "...");
    return;
  }
  switch (t->kind) {
  case ASC_TY_VAR:
    asc__buf_printf(b, "T%d", (int)t->id);
    return;
  case ASC_TY_ERROR:
    asc__buf_puts(b, "<error>");
    return;
  case ASC_TY_NONE:
    asc__buf_puts(b, "None");
    return;
  case ASC_TY_STR:
    asc__buf_puts(b, "str");
    return;
  case ASC_TY_DTYPE:
    asc__buf_printf(b, "type[numpy.%s]", asc__dtype_long(t->dtype));
    return;
  case ASC_TY_SCALAR:
    if (t->weak && user)
      asc__buf_printf(b, "%sPython %s%s", depth == 0 ? "a " : "",
                      asc__dtype_is_complex(t->dtype) ? "complex"
                      : asc__dtype_is_float(t->dtype) ? "float"
                                                      : "int",
                      depth == 0 ? " literal" : "");
    else if (t->weak)
      asc__buf_puts(b, asc__dtype_is_complex(t->dtype) ? "weak complex"
                       : asc__dtype_is_float(t->dtype) ? "weak float"
                                                       : "weak int");
    else
      asc__buf_puts(b, asc__dtype_long(t->dtype));
    return;
  case ASC_TY_TENSOR:
    asc__buf_printf(b, "Tensor[%s, %d%s]", asc__dtype_long(t->dtype),
                    (int)t->ndim, t->contiguous ? "" : ", strided");
    return;
  case ASC_TY_STRUCT:
    asc__buf_puts(b, t->name ? t->name : "<struct>");
    return;
  case ASC_TY_TUPLE:
  case ASC_TY_FUNC:
    asc__buf_puts(b, t->kind == ASC_TY_TUPLE ? "tuple[" : "(");
    for (int32_t i = 0; i < t->n; i++) {
      if (i > 0)
        asc__buf_puts(b, ", ");
      print_rec(b, t->elems[i], depth + 1, user);
    }
    if (t->kind == ASC_TY_TUPLE) {
      asc__buf_puts(b, t->n == 0 ? "()]" : "]");
    } else {
      asc__buf_puts(b, ") -> ");
      print_rec(b, t->ret, depth + 1, user);
    }
    return;
  }
}

void asc__ty_print(asc__buf *b, asc__type *t) { print_rec(b, t, 0, false); }

const char *asc__ty_name(asc__cctx *c, asc__type *t) {
  asc__buf b;
  const char *s;
  asc__buf_init(&b);
  print_rec(&b, t, 0, true);
  if (b.oom) {
    asc__buf_free(&b);
    asc__cctx_throw(c, ASC_FAIL_OOM);
  }
  s = asc__arena_strndup(c, asc__buf_str(&b), b.len);
  asc__buf_free(&b);
  return s;
}
