/*
 * Types: the promotion lattice (against the table in docs/types.md),
 * unification and joins, launch signatures (text and from arguments).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/cctx.h"
#include "compiler/types/types.h"

typedef struct fixture {
  asc__cctx c;
  jmp_buf jb;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (f == NULL)
    return -1;
  asc__cctx_init(&f->c, "t.py", "", 0, 1);
  f->c.catch_point = &f->jb;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  asc__cctx_free(&f->c);
  free(f);
  return 0;
}

/* ------------------------------------------------------------ lattice */

static const char *num_name(asc__num n) {
  if (n.weak)
    return asc__dtype_is_complex(n.dtype) ? "c*"
           : asc__dtype_is_float(n.dtype) ? "f*"
                                          : "i*";
  return asc__dtype_short(n.dtype);
}

static bool num_from_name(const char *s, asc__num *n) {
  n->weak = false;
  if (strcmp(s, "i*") == 0 || strcmp(s, "f*") == 0 || strcmp(s, "c*") == 0) {
    n->weak = true;
    n->dtype = s[0] == 'i' ? ascInt64 : s[0] == 'f' ? ascFloat64
                                                    : ascComplex128;
    return true;
  }
  return asc__dtype_from_name(s, strlen(s), &n->dtype);
}

static asc__num all_nums(int i) {
  asc__num n;
  if (i < (int)ascDataTypeCount) {
    n.dtype = (ascDataType)i;
    n.weak = false;
  } else {
    n.dtype = i == (int)ascDataTypeCount       ? ascInt64
              : i == (int)ascDataTypeCount + 1 ? ascFloat64
                                               : ascComplex128;
    n.weak = true;
  }
  return n;
}
#define NNUMS ((int)ascDataTypeCount + 3)

static bool num_eq(asc__num a, asc__num b) {
  return a.dtype == b.dtype && a.weak == b.weak;
}

/* Splits a markdown table row into trimmed cells. */
static int split_row(char *line, char cells[][16], int max) {
  int n = 0;
  char *p = strchr(line, '|');
  while (p != NULL && n < max) {
    char *q = strchr(p + 1, '|');
    size_t len;
    char *s;
    if (q == NULL)
      break;
    s = p + 1;
    while (*s == ' ')
      s++;
    len = (size_t)(q - s);
    while (len > 0 && s[len - 1] == ' ')
      len--;
    if (len >= 16)
      len = 15;
    memcpy(cells[n], s, len);
    cells[n][len] = '\0';
    n++;
    p = q;
  }
  return n;
}

static void test_lattice_matches_docs(void **state) {
  FILE *fp = fopen(ASC_SOURCE_DIR "/docs/types.md", "r");
  char line[1024];
  char head[32][16], cells[32][16];
  int ncols = 0, rows = 0;
  bool in_table = false;
  (void)state;
  assert_non_null(fp);
  while (fgets(line, sizeof line, fp) != NULL) {
    if (strstr(line, "promotion-table-begin")) {
      in_table = true;
      continue;
    }
    if (strstr(line, "promotion-table-end"))
      break;
    if (!in_table || line[0] != '|' || strstr(line, "|---"))
      continue;
    if (ncols == 0) {
      ncols = split_row(line, head, 32);
      continue;
    }
    {
      int n = split_row(line, cells, 32);
      asc__num a;
      assert_int_equal(n, ncols);
      assert_true(num_from_name(cells[0], &a));
      for (int j = 1; j < n; j++) {
        asc__num b, want, got;
        assert_true(num_from_name(head[j], &b));
        assert_true(num_from_name(cells[j], &want));
        got = asc__num_promote(a, b);
        if (!num_eq(got, want))
          fail_msg("promote(%s, %s): code says %s, docs/types.md says %s",
                   cells[0], head[j], num_name(got), cells[j]);
      }
      rows++;
    }
  }
  fclose(fp);
  /* every dtype, strong, plus weak int, weak float and weak complex */
  assert_int_equal(ncols - 1, NNUMS);
  assert_int_equal(rows, NNUMS);
}

static void test_lattice_laws(void **state) {
  (void)state;
  for (int i = 0; i < NNUMS; i++) {
    asc__num a = all_nums(i);
    assert_true(num_eq(asc__num_promote(a, a), a));
    for (int j = 0; j < NNUMS; j++) {
      asc__num b = all_nums(j), ab = asc__num_promote(a, b);
      assert_true(num_eq(ab, asc__num_promote(b, a)));
      /* upper bound */
      assert_true(num_eq(asc__num_promote(ab, a), ab));
      assert_true(num_eq(asc__num_promote(ab, b), ab));
      for (int k = 0; k < NNUMS; k++) {
        asc__num c = all_nums(k);
        assert_true(num_eq(asc__num_promote(ab, c),
                           asc__num_promote(a, asc__num_promote(b, c))));
      }
    }
  }
}

static asc__num N(ascDataType dt) {
  asc__num n = {dt, false};
  return n;
}
static asc__num W(ascDataType dt) {
  asc__num n = {dt, true};
  return n;
}

static void test_lattice_cases(void **state) {
  (void)state;
  assert_true(num_eq(asc__num_promote(N(ascInt32), N(ascFloat32)),
                     N(ascFloat32)));
  assert_true(num_eq(asc__num_promote(N(ascInt64), N(ascFloat16)),
                     N(ascFloat16)));
  assert_true(num_eq(asc__num_promote(N(ascBFloat16), N(ascFloat16)),
                     N(ascFloat32)));
  assert_true(num_eq(asc__num_promote(N(ascUInt8), N(ascInt8)),
                     N(ascInt16)));
  assert_true(num_eq(asc__num_promote(N(ascUInt32), N(ascInt32)),
                     N(ascInt64)));
  assert_true(num_eq(asc__num_promote(N(ascUInt64), N(ascInt64)),
                     W(ascFloat64)));
  assert_true(num_eq(asc__num_promote(W(ascInt64), N(ascUInt8)),
                     N(ascUInt8)));
  assert_true(num_eq(asc__num_promote(W(ascInt64), N(ascBool)),
                     W(ascInt64)));
  assert_true(num_eq(asc__num_promote(W(ascFloat64), N(ascInt64)),
                     W(ascFloat64)));
  assert_true(num_eq(asc__num_promote(W(ascFloat64), N(ascFloat16)),
                     N(ascFloat16)));
  assert_true(num_eq(asc__num_promote(W(ascFloat64), W(ascInt64)),
                     W(ascFloat64)));
  assert_true(num_eq(asc__num_promote(N(ascBool), N(ascBool)), N(ascBool)));
  assert_true(num_eq(asc__num_promote(N(ascFloat64), N(ascBFloat16)),
                     N(ascFloat64)));
  /* complex: numpy's results, weak Python scalars as NEP 50 */
  assert_true(num_eq(asc__num_promote(N(ascComplex64), N(ascFloat64)),
                     N(ascComplex128)));
  assert_true(num_eq(asc__num_promote(N(ascComplex64), N(ascFloat32)),
                     N(ascComplex64)));
  assert_true(num_eq(asc__num_promote(N(ascComplex64), W(ascInt64)),
                     N(ascComplex64)));
  assert_true(num_eq(asc__num_promote(N(ascComplex64), W(ascFloat64)),
                     N(ascComplex64)));
  assert_true(num_eq(asc__num_promote(W(ascComplex128), N(ascFloat32)),
                     N(ascComplex64)));
  assert_true(num_eq(asc__num_promote(W(ascComplex128), N(ascFloat64)),
                     N(ascComplex128)));
  assert_true(num_eq(asc__num_promote(W(ascComplex128), W(ascFloat64)),
                     W(ascComplex128)));
  assert_true(num_eq(asc__num_promote(N(ascComplex64), N(ascComplex128)),
                     N(ascComplex128)));
}

/* ---------------------------------------------------------------- types */

static const char *name_of(fixture *f, asc__type *t) {
  return asc__ty_name(&f->c, t);
}

static void test_type_names(void **state) {
  fixture *f = *state;
  asc__cctx *c = &f->c;
  if (setjmp(f->jb) != 0)
    fail_msg("unwound: %s", asc__buf_str(&c->diag));
  asc__type *el[2] = {asc__ty_scalar(c, ascInt64), asc__ty_weak(c, ascFloat64)};
  assert_string_equal(name_of(f, asc__ty_scalar(c, ascBFloat16)), "bfloat16");
  /* diagnostics never say "weak" (asc__ty_print, the dump, does) */
  assert_string_equal(name_of(f, asc__ty_weak(c, ascInt32)),
                      "a Python int literal");
  assert_string_equal(name_of(f, asc__ty_weak(c, ascFloat32)),
                      "a Python float literal");
  {
    asc__buf b;
    asc__buf_init(&b);
    asc__ty_print(&b, asc__ty_weak(c, ascFloat32));
    assert_string_equal(asc__buf_str(&b), "weak float");
    asc__buf_free(&b);
  }
  assert_string_equal(name_of(f, asc__ty_weak(c, ascBool)), "bool");
  assert_string_equal(name_of(f, asc__ty_tensor(c, ascFloat32, 2, true)),
                      "Tensor[float32, 2]");
  assert_string_equal(name_of(f, asc__ty_tensor(c, ascUInt8, 1, false)),
                      "Tensor[uint8, 1, strided]");
  assert_string_equal(name_of(f, asc__ty_tuple(c, 2, el)),
                      "tuple[int64, Python float]");
  assert_string_equal(name_of(f, asc__ty_shape(c, 0)), "tuple[()]");
  assert_string_equal(name_of(f, asc__ty_none(c)), "None");
  assert_string_equal(name_of(f, asc__ty_func(c, "f", 1, el, asc__ty_none(c))),
                      "(int64) -> None");
  assert_string_equal(name_of(f, asc__ty_var(c, 3)), "T3");
}

static void test_unify(void **state) {
  fixture *f = *state;
  asc__cctx *c = &f->c;
  asc__type *v, *w, *i64, *f32, *tup, *tup2, *fn1, *fn2;
  if (setjmp(f->jb) != 0)
    fail_msg("unwound: %s", asc__buf_str(&c->diag));
  v = asc__ty_var(c, 1);
  w = asc__ty_var(c, 2);
  i64 = asc__ty_scalar(c, ascInt64);
  f32 = asc__ty_scalar(c, ascFloat32);
  /* var ~ var, then ~ int64: both bound */
  assert_true(asc__ty_unify(c, v, w));
  assert_true(asc__ty_unify(c, w, i64));
  assert_ptr_equal(asc__ty_find(v), i64);
  assert_true(asc__ty_equal(v, i64));
  /* no promotion in unification */
  assert_false(asc__ty_unify(c, v, f32));
  assert_false(asc__ty_unify(c, i64, asc__ty_weak(c, ascInt64)));
  /* structural */
  {
    asc__type *x = asc__ty_var(c, 3), *y = asc__ty_var(c, 4);
    asc__type *a[2] = {x, f32}, *b[2] = {i64, y}, *cyc[1];
    tup = asc__ty_tuple(c, 2, a);
    tup2 = asc__ty_tuple(c, 2, b);
    assert_true(asc__ty_unify(c, tup, tup2));
    assert_ptr_equal(asc__ty_find(x), i64);
    assert_ptr_equal(asc__ty_find(y), f32);
    /* occurs check: T5 ~ tuple[T5] */
    {
      asc__type *z = asc__ty_var(c, 5);
      cyc[0] = z;
      assert_false(asc__ty_unify(c, z, asc__ty_tuple(c, 1, cyc)));
      assert_null(asc__ty_find(z)->link);
    }
    /* arity */
    assert_false(asc__ty_unify(c, tup, asc__ty_shape(c, 3)));
  }
  {
    asc__type *r = asc__ty_var(c, 6), *p = asc__ty_var(c, 7);
    asc__type *pa[1] = {p}, *pb[1] = {i64};
    fn1 = asc__ty_func(c, "f", 1, pa, r);
    fn2 = asc__ty_func(c, "f", 1, pb, asc__ty_none(c));
    assert_true(asc__ty_unify(c, fn1, fn2));
    assert_string_equal(name_of(f, fn1), "(int64) -> None");
  }
  /* tensors compare dtype, ndim and layout */
  assert_true(asc__ty_unify(c, asc__ty_tensor(c, ascFloat32, 2, true),
                            asc__ty_tensor(c, ascFloat32, 2, true)));
  assert_false(asc__ty_unify(c, asc__ty_tensor(c, ascFloat32, 2, true),
                             asc__ty_tensor(c, ascFloat32, 2, false)));
  assert_false(asc__ty_unify(c, asc__ty_tensor(c, ascFloat32, 2, true),
                             asc__ty_tensor(c, ascFloat32, 3, true)));
  assert_false(asc__ty_unify(c, asc__ty_tensor(c, ascFloat32, 1, true), f32));
  /* the error type unifies with everything */
  assert_true(asc__ty_unify(c, asc__ty_error(c), f32));
  assert_true(asc__ty_unify(c, asc__ty_tensor(c, ascInt8, 1, true),
                            asc__ty_error(c)));
}

static void test_join_and_concrete(void **state) {
  fixture *f = *state;
  asc__cctx *c = &f->c;
  asc__type *wi, *wf, *i32, *f32, *t;
  if (setjmp(f->jb) != 0)
    fail_msg("unwound: %s", asc__buf_str(&c->diag));
  wi = asc__ty_weak(c, ascInt64);
  wf = asc__ty_weak(c, ascFloat64);
  i32 = asc__ty_scalar(c, ascInt32);
  f32 = asc__ty_scalar(c, ascFloat32);
  assert_string_equal(name_of(f, asc__ty_join(c, wi, i32)), "int32");
  assert_string_equal(name_of(f, asc__ty_join(c, wf, i32)),
                      "a Python float literal");
  assert_string_equal(name_of(f, asc__ty_join(c, wf, f32)), "float32");
  assert_string_equal(name_of(f, asc__ty_join(c, asc__ty_var(c, 1), f32)),
                      "float32");
  {
    asc__type *a[2] = {wi, f32}, *b[2] = {i32, wf};
    t = asc__ty_join(c, asc__ty_tuple(c, 2, a), asc__ty_tuple(c, 2, b));
    assert_string_equal(name_of(f, t), "tuple[int32, float32]");
    assert_null(asc__ty_join(c, asc__ty_tuple(c, 2, a), asc__ty_shape(c, 1)));
  }
  assert_null(asc__ty_join(c, asc__ty_tensor(c, ascFloat32, 1, true), f32));
  assert_null(asc__ty_promote(c, asc__ty_tensor(c, ascFloat32, 1, true),
                              f32));
  /* defaults: weak int -> int64, weak float -> float64 */
  assert_string_equal(name_of(f, asc__ty_concrete(c, wi)), "int64");
  assert_string_equal(name_of(f, asc__ty_concrete(c, wf)), "float64");
  {
    asc__type *a[2] = {wi, wf};
    assert_string_equal(name_of(f, asc__ty_concrete(c, asc__ty_tuple(c, 2, a))),
                        "tuple[int64, float64]");
    a[1] = asc__ty_var(c, 9);
    assert_null(asc__ty_concrete(c, asc__ty_tuple(c, 2, a)));
  }
}

/* ----------------------------------------------------------- signatures */

static asc__sig *parse_ok(fixture *f, const char *text) {
  asc__sig *s;
  if (setjmp(f->jb) != 0)
    fail_msg("unwound on '%s'", text);
  s = asc__sig_parse(&f->c, text);
  if (s == NULL)
    fail_msg("'%s' did not parse: %s", text, asc__buf_str(&f->c.diag));
  return s;
}

static const char *format(fixture *f, const asc__sig *s) {
  asc__buf b;
  const char *r;
  asc__buf_init(&b);
  asc__sig_format(&b, s);
  r = asc__arena_strndup(&f->c, asc__buf_str(&b), b.len);
  asc__buf_free(&b);
  return r;
}

static void test_sig_parse_good(void **state) {
  fixture *f = *state;
  asc__sig *s = parse_ok(f, "conv2d(f32[4], f32[4], f32[4])");
  assert_string_equal(s->name, "conv2d");
  assert_int_equal(s->nparams, 3);
  for (int i = 0; i < 3; i++) {
    assert_true(s->params[i].is_tensor);
    assert_int_equal(s->params[i].dtype, ascFloat32);
    assert_int_equal(s->params[i].ndim, 4);
    assert_true(s->params[i].contiguous);
  }
  assert_string_equal(format(f, s), "conv2d(f32[4], f32[4], f32[4])");

  s = parse_ok(f, " k ( float64[2:s] , i64, float, int, u8=3, bool=True, "
                  "f64=0.5, i8=-128, u64=0xffffffffffffffff, bf16[0:c],) ");
  assert_string_equal(s->name, "k");
  assert_int_equal(s->nparams, 10);
  assert_true(s->params[0].is_tensor);
  assert_false(s->params[0].contiguous);
  assert_int_equal(s->params[0].dtype, ascFloat64);
  assert_false(s->params[1].is_tensor);
  assert_int_equal(s->params[1].dtype, ascInt64);
  assert_false(s->params[1].weak);
  assert_true(s->params[2].weak);
  assert_int_equal(s->params[2].dtype, ascFloat64);
  assert_true(s->params[3].weak);
  assert_int_equal(s->params[3].dtype, ascInt64);
  assert_true(s->params[4].is_constexpr);
  assert_int_equal(s->params[4].value.value.u, 3);
  assert_int_equal(s->params[5].value.value.i, 1);
  assert_true(s->params[6].value.value.f == 0.5);
  assert_int_equal(s->params[7].value.value.i, -128);
  assert_true(s->params[8].value.value.u == UINT64_MAX);
  assert_int_equal(s->params[9].ndim, 0);
  assert_string_equal(format(f, s),
                      "k(f64[2:s], i64, float, int, u8=3, bool=True, "
                      "f64=0x1p-1, i8=-128, u64=18446744073709551615, "
                      "bf16[0])");
  /* the canonical text reads back to an equal signature */
  assert_true(asc__sig_equal(s, parse_ok(f, format(f, s))));

  s = parse_ok(f, "(int8[1], uint16, float16=1.5, int=7)");
  assert_null(s->name);
  assert_int_equal(s->params[0].dtype, ascInt8);
  assert_int_equal(s->params[1].dtype, ascUInt16);
  assert_true(s->params[2].value.value.f == 1.5);
  assert_true(s->params[3].weak && s->params[3].is_constexpr);
  assert_string_equal(format(f, s), "(i8[1], u16, f16=0x1.8p+0, int=7)");
  s = parse_ok(f, "empty()");
  assert_int_equal(s->nparams, 0);
  assert_false(asc__sig_equal(s, parse_ok(f, "other()")));
  assert_false(asc__sig_equal(parse_ok(f, "k(f32[1])"),
                              parse_ok(f, "k(f32[1:s])")));
  assert_false(asc__sig_equal(parse_ok(f, "k(i64=1)"),
                              parse_ok(f, "k(i64=2)")));
  assert_false(asc__sig_equal(parse_ok(f, "k(int)"), parse_ok(f, "k(i64)")));
  assert_int_equal(f->c.nerrors, 0);
}

static void parse_bad(fixture *f, const char *text) {
  int before = f->c.nerrors;
  size_t len = f->c.diag.len;
  if (setjmp(f->jb) != 0)
    fail_msg("unwound on '%s'", text);
  if (asc__sig_parse(&f->c, text) != NULL)
    fail_msg("'%s' parsed", text);
  assert_int_equal(f->c.nerrors, before + 1);
  assert_non_null(strstr(asc__buf_str(&f->c.diag) + len, "<signature>:1:"));
  assert_non_null(strstr(asc__buf_str(&f->c.diag) + len, "^\n"));
}

static void test_sig_parse_bad(void **state) {
  static const char *const bad[] = {
      "",           "k",           "k(",          "k(f33)",
      "k(f32[9])",  "k(f32[)",     "k(f32[2:x])", "k(int[1])",
      "k(f32[1]=3)", "k(u8=256)",  "k(u8=-1)",    "k(i8=128)",
      "k(bool=2)",  "k(f32=abc)",  "k(f32) x",    "k(f32 f32)",
      "1k(f32)",    "k(f32,,)",    "k(i32=1.5)",  "k(f32[-1])",
      "k(f32=)",    "k(f32[100])", "k(i64=99999999999999999999)",
      "k(f64=nan)", "k(,)"};
  fixture *f = *state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    parse_bad(f, bad[i]);
  /* the caret sits under the offending text */
  {
    size_t len = f->c.diag.len;
    assert_null(asc__sig_parse(&f->c, "k(f32, f33)"));
    assert_string_equal(asc__buf_str(&f->c.diag) + len,
                        "<signature>:1:8: error: unknown type (expected f32, "
                        "i64, bool, int, float, ...)\n"
                        "    k(f32, f33)\n"
                        "           ^\n");
  }
  assert_null(asc__sig_parse(&f->c, NULL));
}

/* The signature of checked launch arguments (the checks themselves are
 * the launch's: test_launch.c). */
static void test_sig_of_args(void **state) {
  fixture *f = *state;
  ascKernelParamInfo info[6] = {
      {.name = "a", .isTensor = 1, .dtype = ascDataTypeCount, .ndim = -1, .generic = 1, .isConstExpr = 0, .isWritten = 1}, /* generic tensor */
      {.name = "b", .isTensor = 1, .dtype = ascFloat32, .ndim = 2, .generic = 0, .isConstExpr = 0, .isWritten = 1},        /* annotated tensor */
      {.name = "n", .isTensor = 0, .dtype = ascDataTypeCount, .ndim = -1, .generic = 1, .isConstExpr = 0, .isWritten = 0}, /* generic scalar */
      {.name = "k", .isTensor = 0, .dtype = ascInt32, .ndim = -1, .generic = 0, .isConstExpr = 1, .isWritten = 0},         /* ConstExpr[asc.int32] */
      {.name = "x", .isTensor = 0, .dtype = ascFloat32, .ndim = -1, .generic = 0, .isConstExpr = 0, .isWritten = 0},       /* annotated scalar */
      {.name = "h", .isTensor = 0, .dtype = ascFloat16, .ndim = -1, .generic = 0, .isConstExpr = 1, .isWritten = 0},       /* ConstExpr[asc.float16] */
  };
  float data[64];
  ascTensor a = {data, ascFloat64, 3, {2, 1, 4}, {4, 99, 1}};
  ascTensor b = {data, ascFloat32, 2, {4, 4}, {1, 4}}; /* transposed */
  ascScalar n = {ascInt64, 1, {.i = 5}};
  int32_t k = -7;
  float x = 2.0f;
  uint16_t h = 0x3e00; /* 1.5 */
  void *args[6] = {&a, &b, &n, &k, &x, &h};
  asc__sig sig;
  asc__sig_param params[6];
  (void)data;
  asc__sig_of_args(&sig, params, "kern", info, 6, args);
  assert_string_equal(format(f, &sig),
                      "kern(f64[3], f32[2:s], int, i32=-7, f32, f16=0x1.8p+0)");
  /* the text form reads back to an equal signature */
  assert_true(asc__sig_equal(&sig, parse_ok(f, format(f, &sig))));

  /* a weak bool is bool */
  {
    ascScalar wb = {ascBool, 1, {.i = 1}};
    args[2] = &wb;
    asc__sig_of_args(&sig, params, "kern", info, 6, args);
    assert_false(params[2].weak);
    assert_int_equal(params[2].dtype, ascBool);
    args[2] = &n;
  }
  /* empty and size-1 dimensions do not make a tensor strided */
  {
    ascTensor e = {NULL, ascInt8, 2, {0, 3}, {7, 7}};
    args[0] = &e;
    asc__sig_of_args(&sig, params, "kern", info, 6, args);
    assert_true(params[0].contiguous);
    args[0] = &a;
  }
  /* no parameters */
  asc__sig_of_args(&sig, params, NULL, NULL, 0, NULL);
  assert_int_equal(sig.nparams, 0);
}

static void test_sig_param_type(void **state) {
  fixture *f = *state;
  asc__sig *s = parse_ok(f, "k(f32[2:s], int, bf16, u8=1)");
  assert_string_equal(name_of(f, asc__sig_param_type(&f->c, &s->params[0])),
                      "Tensor[float32, 2, strided]");
  assert_string_equal(name_of(f, asc__sig_param_type(&f->c, &s->params[1])),
                      "a Python int literal");
  assert_string_equal(name_of(f, asc__sig_param_type(&f->c, &s->params[2])),
                      "bfloat16");
  assert_string_equal(name_of(f, asc__sig_param_type(&f->c, &s->params[3])),
                      "uint8");
}

static void test_dtype_names(void **state) {
  ascDataType dt;
  (void)state;
  for (int i = 0; i < (int)ascDataTypeCount; i++) {
    const char *s = asc__dtype_short((ascDataType)i);
    const char *l = asc__dtype_long((ascDataType)i);
    assert_true(asc__dtype_from_name(s, strlen(s), &dt));
    assert_int_equal(dt, i);
    assert_true(asc__dtype_from_name(l, strlen(l), &dt));
    assert_int_equal(dt, i);
  }
  assert_false(asc__dtype_from_name("int", 3, &dt));
  assert_false(asc__dtype_from_name("f3", 2, &dt));
  assert_string_equal(asc__dtype_short((ascDataType)42), "?");
  assert_int_equal(asc__dtype_bits(ascBool), 1);
  assert_int_equal(asc__dtype_bits(ascBFloat16), 16);
  assert_true(asc__dtype_is_float(ascBFloat16));
  assert_false(asc__dtype_is_int(ascBool));
  assert_true(asc__dtype_is_unsigned(ascUInt64));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lattice_matches_docs),
      cmocka_unit_test(test_lattice_laws),
      cmocka_unit_test(test_lattice_cases),
      cmocka_unit_test(test_dtype_names),
      cmocka_unit_test_setup_teardown(test_type_names, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unify, setup, teardown),
      cmocka_unit_test_setup_teardown(test_join_and_concrete, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sig_parse_good, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sig_parse_bad, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sig_of_args, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sig_param_type, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
