/*
 * Type inference: the seed kernels for several signatures, re-typing one
 * parsed module for another signature (as the driver does), helper
 * instances, error reporting, and a sweep over every test program with
 * many signatures that must end either typed (every slot concrete) or with
 * diagnostics -- never a crash or an internal error.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/cctx.h"
#include "compiler/front/frontend.h"
#include "compiler/types/infer.h"
#include "compiler/types/types.h"

static const char conv2d_src[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def conv2d(input, weight, output):\n"
    "    batch, in_channels, in_height, in_width = input.shape\n"
    "    out_channels, in_channels, kernel_height, kernel_width = "
    "weight.shape\n"
    "    out_height = in_height - kernel_height + 1\n"
    "    out_width = in_width - kernel_width + 1\n"
    "    for b in range(batch):\n"
    "        for oc in range(out_channels):\n"
    "            for oh in range(out_height):\n"
    "                for ow in range(out_width):\n"
    "                    sum = 0.0\n"
    "                    for ic in range(in_channels):\n"
    "                        for kh in range(kernel_height):\n"
    "                            for kw in range(kernel_width):\n"
    "                                sum += input[b, ic, oh + kh, ow + kw] * "
    "weight[oc, ic, kh, kw]\n"
    "                    output[b, oc, oh, ow] = sum\n";

static const char add_src[] =
    "import pyasc as asc\n"
    "\n"
    "@asc.kernel\n"
    "def parallel_add(a, b, c):\n"
    "    size = a.shape[0]\n"
    "    asc.parallel_for(size, lambda i: c[i] = a[i] + b[i])\n";

static const char helper_src[] =
    "import asc\n"
    "\n"
    "@asc.func\n"
    "def sq(x):\n"
    "    y = x * x\n"
    "    return y\n"
    "\n"
    "@asc.kernel\n"
    "def k(a, n):\n"
    "    a[0] = sq(a[1])\n"
    "    m = sq(n)\n"
    "    a[2] = m\n";

/* ------------------------------------------------------- checking slots */

typedef struct checker {
  int bad;
  char what[256];
} checker;

static bool concrete(asc__type *t, int depth) {
  t = asc__ty_find(t);
  if (t == NULL || depth > 16)
    return false;
  switch (t->kind) {
  case ASC_TY_VAR:
  case ASC_TY_ERROR:
    return false;
  case ASC_TY_SCALAR:
    return !t->weak;
  case ASC_TY_TUPLE:
  case ASC_TY_FUNC:
    for (int32_t i = 0; i < t->n; i++)
      if (!concrete(t->elems[i], depth + 1))
        return false;
    return t->kind == ASC_TY_TUPLE || concrete(t->ret, depth + 1);
  default:
    return true;
  }
}

static void flag(checker *k, asc__loc loc, const char *what) {
  if (k->bad++ == 0)
    snprintf(k->what, sizeof k->what, "%d:%d: %s", (int)loc.line,
             (int)loc.col, what);
}

static void check_func(checker *k, const asc__ast_func *fn, int depth);
static void check_block(checker *k, const asc__ast_block *b, int depth);

static void check_expr(checker *k, const asc__ast_expr *e, int depth) {
  if (e == NULL || depth > 400)
    return;
  if (e->kind != ASC_EXPR_SLICE && !concrete(e->type, 0))
    flag(k, e->loc, "expression without a concrete type");
  switch (e->kind) {
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      check_expr(k, e->u.tuple.elts[i], depth + 1);
    break;
  case ASC_EXPR_ATTR:
    if (e->u.attr.builtin == NULL)
      check_expr(k, e->u.attr.value, depth + 1);
    break;
  case ASC_EXPR_SUBSCRIPT:
    check_expr(k, e->u.sub.value, depth + 1);
    check_expr(k, e->u.sub.index, depth + 1);
    break;
  case ASC_EXPR_CALL:
    for (int i = 0; i < e->u.call.nrargs; i++) {
      const asc__ast_expr *a = e->u.call.rargs[i];
      if (a == NULL)
        continue;
      /* dtype arguments of scratch arrays are names, not values */
      if (e->u.call.builtin != NULL &&
          (e->u.call.builtin->id == ASC_BI_LOCAL_ARRAY ||
           e->u.call.builtin->id == ASC_BI_SHARED_ARRAY) &&
          i == 1)
        continue;
      if (a->kind == ASC_EXPR_LAMBDA)
        check_func(k, a->u.lambda.fn, depth + 1);
      else
        check_expr(k, a, depth + 1);
    }
    break;
  case ASC_EXPR_UNARY:
    check_expr(k, e->u.unary.operand, depth + 1);
    break;
  case ASC_EXPR_BINARY:
    check_expr(k, e->u.binary.lhs, depth + 1);
    check_expr(k, e->u.binary.rhs, depth + 1);
    break;
  case ASC_EXPR_BOOLOP:
    check_expr(k, e->u.boolop.lhs, depth + 1);
    check_expr(k, e->u.boolop.rhs, depth + 1);
    break;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      check_expr(k, e->u.cmp.operands[i], depth + 1);
    break;
  case ASC_EXPR_IFEXP:
    check_expr(k, e->u.ifexp.cond, depth + 1);
    check_expr(k, e->u.ifexp.then, depth + 1);
    check_expr(k, e->u.ifexp.orelse, depth + 1);
    break;
  default:
    break;
  }
}

static void check_stmt(checker *k, const asc__ast_stmt *s, int depth) {
  switch (s->kind) {
  case ASC_STMT_EXPR:
    check_expr(k, s->u.expr.value, depth + 1);
    break;
  case ASC_STMT_ASSIGN:
    for (int i = 0; i < s->u.assign.ntargets; i++)
      check_expr(k, s->u.assign.targets[i], depth + 1);
    check_expr(k, s->u.assign.value, depth + 1);
    break;
  case ASC_STMT_AUGASSIGN:
    check_expr(k, s->u.aug.target, depth + 1);
    check_expr(k, s->u.aug.value, depth + 1);
    break;
  case ASC_STMT_ANNASSIGN:
    check_expr(k, s->u.ann.target, depth + 1);
    check_expr(k, s->u.ann.value, depth + 1);
    break;
  case ASC_STMT_IF:
    check_expr(k, s->u.if_.cond, depth + 1);
    check_block(k, &s->u.if_.body, depth + 1);
    check_block(k, &s->u.if_.orelse, depth + 1);
    break;
  case ASC_STMT_FOR:
    check_expr(k, s->u.for_.target, depth + 1);
    check_expr(k, s->u.for_.start, depth + 1);
    check_expr(k, s->u.for_.stop, depth + 1);
    check_expr(k, s->u.for_.step, depth + 1);
    check_block(k, &s->u.for_.body, depth + 1);
    break;
  case ASC_STMT_WHILE:
    check_expr(k, s->u.while_.cond, depth + 1);
    check_block(k, &s->u.while_.body, depth + 1);
    break;
  case ASC_STMT_RETURN:
    check_expr(k, s->u.ret.value, depth + 1);
    break;
  case ASC_STMT_ASSERT:
    check_expr(k, s->u.assert_.test, depth + 1);
    check_expr(k, s->u.assert_.msg, depth + 1);
    break;
  case ASC_STMT_TRY:
    check_block(k, &s->u.try_.body, depth + 1);
    for (int i = 0; i < s->u.try_.nhandlers; i++)
      check_block(k, &s->u.try_.handlers[i].body, depth + 1);
    check_block(k, &s->u.try_.orelse, depth + 1);
    check_block(k, &s->u.try_.finalbody, depth + 1);
    break;
  case ASC_STMT_WITH:
    check_expr(k, s->u.with.ctx, depth + 1);
    check_block(k, &s->u.with.body, depth + 1);
    break;
  case ASC_STMT_FUNCDEF:
    check_func(k, s->u.funcdef.fn, depth + 1);
    break;
  default:
    break;
  }
}

static void check_block(checker *k, const asc__ast_block *b, int depth) {
  for (int i = 0; i < b->n; i++)
    check_stmt(k, b->stmts[i], depth + 1);
}

static void check_func(checker *k, const asc__ast_func *fn, int depth) {
  if (!concrete(fn->type, 0))
    flag(k, fn->loc, "function without a concrete type");
  for (int i = 0; i < fn->nlocals; i++) {
    const asc__sym *s = fn->locals[i];
    if (s->owner == fn && (s->kind == ASC_SYM_LOCAL ||
                           s->kind == ASC_SYM_PARAM) &&
        !concrete(s->type, 0))
      flag(k, s->loc, "local without a concrete type");
  }
  check_block(k, &fn->body, depth + 1);
}

static void check_typed(const asc__typed *t) {
  checker k;
  memset(&k, 0, sizeof k);
  check_func(&k, t->kernel, 0);
  for (const asc__tinst *h = t->helpers; h != NULL; h = h->next)
    check_func(&k, h->fn, 0);
  if (k.bad)
    fail_msg("%d slots not concrete, first at %s", k.bad, k.what);
}

/* ------------------------------------------------------------- harness */

typedef struct module {
  asc__cctx c;
  jmp_buf jb;
  asc__ast_module *m;
} module;

static module *parse(const char *name, const char *text, size_t len) {
  module *md = calloc(1, sizeof *md);
  assert_non_null(md);
  asc__cctx_init(&md->c, name, text, len, 1);
  md->c.catch_point = &md->jb;
  if (setjmp(md->jb) == 0)
    md->m = asc__frontend(&md->c, NULL, 0);
  else
    md->m = NULL;
  return md;
}

static void module_free(module *md) {
  asc__cctx_free(&md->c);
  free(md);
}

/* One specialisation in its own context, as the driver will do it.
 * Returns the diagnostics (caller frees); *ok says whether it typed. */
typedef void (*typed_fn)(const asc__typed *t, void *ud);

static char *specialise(module *md, const char *kernel, const char *sigtext,
                        bool *ok, typed_fn fn, void *ud) {
  asc__cctx c;
  jmp_buf jb;
  char *diag;
  asc__cctx_init(&c, md->c.filename, md->c.text, md->c.len, 1);
  c.catch_point = &jb;
  *ok = false;
  if (setjmp(jb) == 0) {
    asc__sig *sig = asc__sig_parse(&c, sigtext);
    asc__ast_func *k = asc__module_func(md->m, kernel);
    if (sig != NULL && k != NULL) {
      asc__typed *t = asc__infer_kernel(&c, md->m, k, sig);
      if (t != NULL) {
        *ok = true;
        if (fn != NULL)
          fn(t, ud);
      }
    }
  }
  if (c.fail == ASC_FAIL_INTERNAL || c.fail == ASC_FAIL_OOM)
    fail_msg("%s %s: %s", kernel, sigtext, asc__buf_str(&c.diag));
  diag = strdup(asc__buf_str(&c.diag));
  asc__cctx_free(&c);
  return diag;
}

static const asc__sym *local(const asc__ast_func *fn, const char *name) {
  for (int i = 0; i < fn->nlocals; i++)
    if (strcmp(fn->locals[i]->name, name) == 0)
      return fn->locals[i];
  fail_msg("no local %s", name);
  return NULL;
}

static const char *tname(asc__type *t) {
  static char buf[128];
  asc__buf b;
  asc__buf_init(&b);
  asc__ty_print(&b, t);
  snprintf(buf, sizeof buf, "%s", asc__buf_str(&b));
  asc__buf_free(&b);
  return buf;
}

/* ---------------------------------------------------------------- tests */

static void conv2d_checks(const asc__typed *t, void *ud) {
  const char *want = ud;
  check_typed(t);
  assert_string_equal(tname(local(t->kernel, "sum")->type), want);
  assert_string_equal(tname(local(t->kernel, "batch")->type), "int64");
  assert_string_equal(tname(local(t->kernel, "kw")->type), "int64");
}

static void test_conv2d(void **state) {
  module *md = parse("conv2d.py", conv2d_src, sizeof conv2d_src - 1);
  bool ok;
  char *d;
  (void)state;
  assert_non_null(md->m);
  /* the same parsed module, three specialisations one after another */
  d = specialise(md, "conv2d", "conv2d(f32[4], f32[4], f32[4])", &ok,
                 conv2d_checks, "float32");
  assert_true(ok);
  free(d);
  d = specialise(md, "conv2d", "conv2d(f64[4], f64[4], f64[4])", &ok,
                 conv2d_checks, "float64");
  assert_true(ok);
  free(d);
  d = specialise(md, "conv2d", "(bf16[4:s], bf16[4], bf16[4])", &ok,
                 conv2d_checks, "bfloat16");
  assert_true(ok);
  free(d);
  /* float32 input, float64 weight: sum is float64, stored into float32
   * with numpy's conversion on store */
  d = specialise(md, "conv2d", "conv2d(f32[4], f64[4], f32[4])", &ok, NULL,
                 NULL);
  assert_true(ok);
  free(d);
  /* wrong ndim: unpacking the shape fails */
  d = specialise(md, "conv2d", "conv2d(f32[3], f32[4], f32[4])", &ok, NULL,
                 NULL);
  assert_false(ok);
  assert_non_null(strstr(d, "cannot unpack the shape of a 3-dimensional "
                            "tensor into 4 names"));
  free(d);
  module_free(md);
}

static void add_checks(const asc__typed *t, void *ud) {
  const asc__ast_stmt *s = t->kernel->body.stmts[1];
  const asc__ast_expr *call = s->u.expr.value;
  const asc__ast_func *lam;
  check_typed(t);
  assert_int_equal(call->kind, ASC_EXPR_CALL);
  lam = call->u.call.rargs[1]->u.lambda.fn;
  assert_string_equal(tname(lam->params[0].sym->type), "int64");
  assert_string_equal(tname(lam->type), "(int64) -> None");
  assert_string_equal(tname(lam->body.stmts[0]->u.assign.value->type),
                      (const char *)ud);
}

static void test_parallel_add(void **state) {
  module *md = parse("add.py", add_src, sizeof add_src - 1);
  bool ok;
  char *d;
  (void)state;
  assert_non_null(md->m);
  d = specialise(md, "parallel_add", "parallel_add(f32[1], f32[1], f32[1])",
                 &ok, add_checks, "float32");
  assert_true(ok);
  free(d);
  d = specialise(md, "parallel_add", "parallel_add(f64[1], f64[1], f64[1])",
                 &ok, add_checks, "float64");
  assert_true(ok);
  free(d);
  d = specialise(md, "parallel_add", "parallel_add(i8[1], u8[1], i16[1])",
                 &ok, add_checks, "int16");
  assert_true(ok);
  free(d);
  d = specialise(md, "parallel_add", "parallel_add(f32[1], f32[1])", &ok,
                 NULL, NULL);
  assert_false(ok);
  assert_non_null(strstr(d, "takes 3 parameters but the signature gives 2"));
  free(d);
  d = specialise(md, "parallel_add", "other(f32[1], f32[1], f32[1])", &ok,
                 NULL, NULL);
  assert_false(ok);
  assert_non_null(strstr(d, "the signature is for 'other'"));
  free(d);
  module_free(md);
}

static void helper_checks(const asc__typed *t, void *ud) {
  int n = 0;
  (void)ud;
  check_typed(t);
  /* sq(float32) and sq(int64): two instances, the second on a copy */
  for (const asc__tinst *h = t->helpers; h != NULL; h = h->next) {
    assert_string_equal(h->orig->name, "sq");
    n++;
  }
  assert_int_equal(n, 2);
  assert_ptr_equal(t->helpers->fn, t->helpers->orig);
  assert_ptr_not_equal(t->helpers->next->fn, t->helpers->orig);
  assert_string_equal(tname(t->helpers->type), "(float32) -> float32");
  assert_string_equal(tname(t->helpers->next->type), "(int64) -> int64");
  assert_string_equal(tname(local(t->helpers->next->fn, "y")->type), "int64");
  assert_string_equal(tname(local(t->helpers->fn, "y")->type), "float32");
  assert_int_equal(t->ncalls, 2);
  for (int i = 0; i < t->ncalls; i++)
    assert_ptr_equal(asc__typed_callee(t, t->calls[i].call), t->calls[i].inst);
  assert_null(asc__typed_callee(t, NULL));
}

static void test_helpers(void **state) {
  module *md = parse("h.py", helper_src, sizeof helper_src - 1);
  bool ok;
  char *d;
  (void)state;
  assert_non_null(md->m);
  for (int round = 0; round < 2; round++) {
    d = specialise(md, "k", "k(f32[1], i64)", &ok, helper_checks, NULL);
    if (!ok)
      fail_msg("%s", d);
    free(d);
  }
  module_free(md);
}

/* Many errors: inference stops at the context's limit by unwinding, with
 * every message well formed. */
static void test_many_errors(void **state) {
  char src[8192];
  size_t n = 0;
  module *md;
  bool ok;
  char *d;
  int count = 0;
  (void)state;
  n += (size_t)snprintf(src + n, sizeof src - n,
                        "import asc\n\n@asc.kernel\ndef k(a):\n");
  for (int i = 0; i < 40; i++)
    n += (size_t)snprintf(src + n, sizeof src - n,
                          "    a[%d] = a + %d\n", i, i);
  md = parse("many.py", src, n);
  assert_non_null(md->m);
  d = specialise(md, "k", "(f32[1])", &ok, NULL, NULL);
  assert_false(ok);
  for (const char *p = d; (p = strstr(p, ": error: ")) != NULL; p++)
    count++;
  assert_int_equal(count, 20);
  assert_non_null(strstr(d, "many.py:5:12: error: cannot store an array "
                            "(Tensor[float32, 1]) into one element of "
                            "Tensor[float32, 1]"));
  free(d);
  module_free(md);
}

/* ------------------------------------------------ parameter tables */

static const char params_src[] =
    "import asc\n"
    "\n"
    "@asc.func\n"
    "def first(t):\n"
    "    return t[0]\n"
    "\n"
    "@asc.func\n"
    "def pass_on(t, s):\n"
    "    return first(t) + s\n"
    "\n"
    "@asc.kernel\n"
    "def k(a: asc.Tensor[asc.float32, 2], n: asc.ConstExpr[int], c,\n"
    "      alpha: float, x, h, g, s, lam, z: asc.ConstExpr, k8: asc.int8,\n"
    "      at):\n"
    "    a[0, 0] = pass_on(h, s) * alpha + first(g) + x[n]\n"
    "    asc.parallel_for(lam.shape[0], lambda i: a[i, 0] = c + z + k8)\n"
    "    asc.atomic_add(at, 0, 1)\n";

static void test_kernel_params(void **state) {
  module *md = parse("p.py", params_src, sizeof params_src - 1);
  ascKernelParamInfo info[12];
  asc__ast_func *k;
  (void)state;
  assert_non_null(md->m);
  k = asc__module_func(md->m, "k");
  assert_non_null(k);
  assert_int_equal(k->nparams, 12);
  assert_true(asc__kernel_params(&md->c, k, info));
  /* a: annotated tensor */
  assert_string_equal(info[0].name, "a");
  assert_true(info[0].isTensor && !info[0].generic);
  assert_int_equal(info[0].dtype, ascFloat32);
  assert_int_equal(info[0].ndim, 2);
  /* n: ConstExpr[int] */
  assert_true(!info[1].isTensor && info[1].isConstExpr && !info[1].generic);
  assert_int_equal(info[1].dtype, ascInt64);
  /* c: unannotated, used as a scalar */
  assert_true(!info[2].isTensor && info[2].generic);
  assert_int_equal(info[2].dtype, ascDataTypeCount);
  /* alpha: float */
  assert_true(!info[3].generic && !info[3].isTensor);
  assert_int_equal(info[3].dtype, ascFloat64);
  /* x: indexed; h: through two helpers; g: through one; s: scalar */
  assert_true(info[4].isTensor && info[4].generic);
  assert_int_equal(info[4].ndim, -1);
  assert_true(info[5].isTensor);
  assert_true(info[6].isTensor);
  assert_false(info[7].isTensor);
  /* lam: shape read; z: bare ConstExpr; k8; at: atomic target */
  assert_true(info[8].isTensor);
  assert_true(info[9].isConstExpr && info[9].generic && !info[9].isTensor);
  assert_int_equal(info[10].dtype, ascInt8);
  assert_true(info[11].isTensor);

  /* a launch: parameter table -> signature -> types */
  {
    float fa[4];
    float dx[8];
    int32_t ia[2];
    ascTensor ta = {fa, ascFloat32, 2, {2, 2}, {2, 1}};
    ascTensor tx = {dx, ascFloat32, 1, {8}, {1}};
    ascTensor th = {dx, ascFloat32, 1, {4}, {2}};
    ascTensor tat = {ia, ascInt32, 1, {2}, {1}};
    int64_t n = 3;
    double alpha = 0.5;
    int8_t k8 = 2;
    ascScalar c = {ascFloat32, 0, {.f = 1}};
    ascScalar s = {ascFloat64, 1, {.f = 2}};
    ascScalar z = {ascInt64, 1, {.i = 9}};
    void *args[12] = {&ta, &n, &c, &alpha, &tx, &th, &tx, &s, &tx, &z, &k8,
                      &tat};
    asc__sig sig;
    asc__sig_param sp[12];
    asc__buf b;
    bool ok;
    char *d;
    asc__sig_of_args(&sig, sp, "k", info, 12, args);
    asc__buf_init(&b);
    asc__sig_format(&b, &sig);
    assert_string_equal(asc__buf_str(&b),
                        "k(f32[2], i64=3, f32, f64, f32[1], f32[1:s], f32[1], "
                        "float, f32[1], int=9, i8, i32[1])");
    d = specialise(md, "k", asc__buf_str(&b), &ok, NULL, NULL);
    if (!ok)
      fail_msg("%s", d);
    free(d);
    asc__buf_free(&b);
  }
  module_free(md);
}

/* ---------------------------------------------------------- the sweep */

static const char *const sweep_sigs[] = {
    "()",
    "(f32[1])",
    "(f32[1], f32[1])",
    "(f32[1], f32[1], f32[1])",
    "(f64[4], f64[4], f64[4])",
    "(f32[2], f32[2], f32[2], f32[2])",
    "(i32[1], i32[1], i32[1], i32[1], i32[1])",
    "(bf16[3], u64[4:s], float, int, i64=5)",
    "(i8, bool, f16[2])",
    "(float, float, float)",
    "(u8=3, u8=4, u8=5)",
    "(f32[1], i64, i64, i64)",
    "(f32[2], f32[2], i64=4, i64=4)",
    "(bool[1], bool[2], bool[3])",
    "(f32[1], i32[1], f32[2])",
    "(f32[1], i64, bool)",
    "(f32[2], f64[1], i64=16, float, i32)",
};

static void sweep_checks(const asc__typed *t, void *ud) {
  int *typed = ud;
  check_typed(t);
  (*typed)++;
}

static int sweep_dir(const char *dir, int *typed) {
  DIR *d = opendir(dir);
  struct dirent *de;
  int programs = 0;
  if (d == NULL)
    return 0;
  while ((de = readdir(d)) != NULL) {
    char path[1024];
    size_t len, nl = strlen(de->d_name);
    char *text;
    module *md;
    if (nl < 4 || strcmp(de->d_name + nl - 3, ".py") != 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    text = asc__read_file(path, &len);
    if (text == NULL)
      continue;
    md = parse(de->d_name, text, len);
    if (md->m != NULL) {
      programs++;
      for (int i = 0; i < md->m->nfuncs; i++) {
        const asc__ast_func *fn = md->m->funcs[i];
        if (fn->kind != ASC_FUNC_KERNEL)
          continue;
        for (size_t s = 0; s < sizeof sweep_sigs / sizeof sweep_sigs[0];
             s++) {
          bool ok;
          free(specialise(md, fn->name, sweep_sigs[s], &ok, sweep_checks,
                          typed));
        }
        /* the file's own `# signature:` lines, unnamed */
        for (const char *p = strstr(text, "# signature: "); p != NULL;
             p = strstr(p + 1, "# signature: ")) {
          const char *open = strchr(p, '('), *eol = strchr(p, '\n');
          char sig[512];
          bool ok;
          if (open == NULL || eol == NULL || open > eol ||
              (size_t)(eol - open) >= sizeof sig)
            continue;
          memcpy(sig, open, (size_t)(eol - open));
          sig[eol - open] = '\0';
          free(specialise(md, fn->name, sig, &ok, sweep_checks, typed));
        }
      }
    }
    module_free(md);
    free(text);
  }
  closedir(d);
  return programs;
}

static void test_sweep(void **state) {
  int typed = 0, programs = 0;
  (void)state;
  programs += sweep_dir(ASC_SOURCE_DIR "/tests/golden/types", &typed);
  programs += sweep_dir(ASC_SOURCE_DIR "/tests/golden/front", &typed);
  programs += sweep_dir(ASC_SOURCE_DIR "/tests/diag", &typed);
  assert_true(programs >= 30);
  /* plenty of the combinations must type */
  if (typed < 40)
    fail_msg("only %d of the sweep typed (%d programs)", typed, programs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv2d),
      cmocka_unit_test(test_parallel_add),
      cmocka_unit_test(test_helpers),
      cmocka_unit_test(test_many_errors),
      cmocka_unit_test(test_kernel_params),
      cmocka_unit_test(test_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
