/*
 * Front end through its C API: locations with a first-line offset, the
 * resolved shapes later stages rely on, caller-supplied globals, recovery
 * from every allocation failure, and nesting limits that end in an error
 * instead of a stack overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/front/frontend.h"
#include "compiler/front/lexer.h"

/* One compilation of text; fills *m (NULL on failure) and returns the
 * failure kind.  The context stays alive for inspection until done(). */
typedef struct compile {
  asc__cctx c;
  jmp_buf jb;
  asc__ast_module *m;
} compile;

static asc__fail run_frontend(compile *k, const char *text, int32_t first,
                              const ascGlobalValue *g, int ng) {
  asc__cctx_init(&k->c, "t.py", text, strlen(text), first);
  k->c.catch_point = &k->jb;
  k->m = NULL;
  if (setjmp(k->jb) == 0)
    k->m = asc__frontend(&k->c, g, ng);
  else
    k->m = NULL;
  return k->c.fail;
}

static void done(compile *k) { asc__cctx_free(&k->c); }

static const char *diag(compile *k) { return asc__buf_str(&k->c.diag); }

static void assert_diag_contains(compile *k, const char *want) {
  if (strstr(diag(k), want) == NULL)
    fail_msg("diagnostics lack \"%s\"; got:\n%s", want, diag(k));
}

static const char seed_add[] =
    "import pyasc as asc\n"
    "\n"
    "@asc.kernel\n"
    "def parallel_add(a, b, c):\n"
    "    size = a.shape[0]\n"
    "    asc.parallel_for(size, lambda i: c[i] = a[i] + b[i])\n";

/* ------------------------------------------------------------- shapes */

static void test_seed_parallel_add_shape(void **state) {
  compile k;
  asc__ast_func *f;
  asc__ast_stmt *s;
  asc__ast_expr *call, *lam;
  (void)state;

  assert_int_equal(run_frontend(&k, seed_add, 1, NULL, 0), ASC_FAIL_NONE);
  assert_non_null(k.m);
  f = asc__module_func(k.m, "parallel_add");
  assert_non_null(f);
  assert_int_equal(f->kind, ASC_FUNC_KERNEL);
  assert_int_equal(f->nparams, 3);
  assert_int_equal(f->params[0].sym->kind, ASC_SYM_PARAM);
  assert_int_equal(f->body.n, 2);

  s = f->body.stmts[1];
  assert_int_equal(s->kind, ASC_STMT_EXPR);
  call = s->u.expr.value;
  assert_int_equal(call->kind, ASC_EXPR_CALL);
  assert_non_null(call->u.call.builtin);
  assert_int_equal(call->u.call.builtin->id, ASC_BI_PARALLEL_FOR);
  assert_int_equal(call->u.call.nrargs, 2);
  lam = call->u.call.rargs[1];
  assert_int_equal(lam->kind, ASC_EXPR_LAMBDA);
  assert_int_equal(lam->u.lambda.fn->kind, ASC_FUNC_LAMBDA);
  assert_ptr_equal(lam->u.lambda.fn->parent, f);
  assert_int_equal(lam->u.lambda.fn->body.stmts[0]->kind, ASC_STMT_ASSIGN);
  /* c inside the lambda is the kernel's parameter, captured */
  {
    asc__ast_expr *t = lam->u.lambda.fn->body.stmts[0]->u.assign.targets[0];
    assert_int_equal(t->kind, ASC_EXPR_SUBSCRIPT);
    assert_ptr_equal(t->u.sub.value->u.name.sym, f->params[2].sym);
    assert_true(f->params[2].sym->captured);
  }
  /* the kernel's text range covers decorator to last line */
  assert_int_equal(f->text_begin, strlen("import pyasc as asc\n\n"));
  assert_int_equal(f->text_end, strlen(seed_add) - 1);
  done(&k);
}

static void test_first_line_offset(void **state) {
  compile k;
  asc__ast_func *f;
  (void)state;

  assert_int_equal(run_frontend(&k, seed_add, 100, NULL, 0), ASC_FAIL_NONE);
  f = asc__module_func(k.m, "parallel_add");
  assert_int_equal(f->loc.line, 103);
  assert_int_equal(f->body.stmts[1]->loc.line, 105);
  assert_int_equal(f->body.stmts[1]->loc.col, 5);
  done(&k);

  assert_int_equal(run_frontend(&k, "import asc\n@asc.kernel\ndef k(x):\n"
                                    "    if x\n        pass\n", 41, NULL, 0),
                   ASC_FAIL_ERRORS);
  assert_diag_contains(&k, "t.py:44:9: error: expected ':' (to close 'if' "
                           "at line 44)");
  /* the source line and the caret follow */
  assert_diag_contains(&k, "        if x\n            ^\n");
  done(&k);
}

static void test_for_loop_and_call_normalisation(void **state) {
  static const char src[] =
      "import asc\n"
      "@asc.func\n"
      "def h(a, b=2):\n"
      "    return a * b\n"
      "@asc.kernel\n"
      "def k(x, n):\n"
      "    for i in asc.prange(1, n, 2):\n"
      "        x[i] = h(b=3, a=i)\n"
      "    for j in range(n):\n"
      "        x[j] = h(j)\n";
  compile k;
  asc__ast_func *f;
  asc__ast_stmt *loop;
  asc__ast_expr *call;
  (void)state;

  assert_int_equal(run_frontend(&k, src, 1, NULL, 0), ASC_FAIL_NONE);
  f = asc__module_func(k.m, "k");
  loop = f->body.stmts[0];
  assert_int_equal(loop->u.for_.loop, ASC_BI_PRANGE);
  assert_int_equal(loop->u.for_.start->u.ival, 1);
  assert_int_equal(loop->u.for_.stop->kind, ASC_EXPR_NAME);
  assert_int_equal(loop->u.for_.step->u.ival, 2);
  call = loop->u.for_.body.stmts[0]->u.assign.value;
  assert_ptr_equal(call->u.call.callee, asc__module_func(k.m, "h"));
  assert_int_equal(call->u.call.nrargs, 2);
  assert_int_equal(call->u.call.rargs[0]->kind, ASC_EXPR_NAME);  /* a=i */
  assert_int_equal(call->u.call.rargs[1]->u.ival, 3);            /* b=3 */
  loop = f->body.stmts[1];
  assert_int_equal(loop->u.for_.loop, ASC_BI_RANGE);
  assert_null(loop->u.for_.start);
  call = loop->u.for_.body.stmts[0]->u.assign.value;
  assert_int_equal(call->u.call.rargs[1]->u.ival, 2);  /* default */
  assert_int_equal(f->ncallees, 1);
  done(&k);
}

static void test_globals_override_and_supply(void **state) {
  static const char src[] =
      "import asc\n"
      "TILE = 64\n"
      "HALF = TILE // 2\n"
      "@asc.kernel\n"
      "def k(x):\n"
      "    x[0] = TILE + HALF + EXTRA\n";
  ascGlobalValue g[2];
  compile k;
  (void)state;

  memset(g, 0, sizeof g);
  g[0].name = "TILE";
  g[0].value.dtype = ascInt64;
  g[0].value.value.i = 128;
  g[1].name = "EXTRA";
  g[1].value.dtype = ascFloat64;
  g[1].value.value.f = 0.5;

  /* without EXTRA, the name is undefined */
  assert_int_equal(run_frontend(&k, src, 1, NULL, 0), ASC_FAIL_ERRORS);
  assert_diag_contains(&k, "t.py:6:26: error: name 'EXTRA' is not defined");
  done(&k);

  assert_int_equal(run_frontend(&k, src, 1, g, 2), ASC_FAIL_NONE);
  assert_int_equal(k.m->nconsts, 3);
  assert_string_equal(k.m->consts[0]->name, "TILE");
  assert_true(k.m->consts[0]->from_caller);
  assert_int_equal(k.m->consts[0]->folded.value.i, 128);
  /* later constants fold against the caller's value */
  assert_int_equal(k.m->consts[1]->folded.value.i, 64);
  assert_int_equal(k.m->consts[2]->folded.dtype, ascFloat64);
  done(&k);
}

static void test_warning_does_not_fail(void **state) {
  compile k;
  (void)state;
  assert_int_equal(run_frontend(&k,
                                "import asc\n"
                                "X = {i for i in range(3)}\n"
                                "@asc.kernel\n"
                                "def k(x):\n"
                                "    x[0] = 1\n",
                                1, NULL, 0),
                   ASC_FAIL_NONE);
  assert_int_equal(k.c.nerrors, 0);
  assert_int_equal(k.c.nwarnings, 1);
  assert_diag_contains(&k, "t.py:2:1: warning: module-level code that is not "
                           "kernel code is ignored: dict and set "
                           "comprehensions are not supported in kernels");
  done(&k);
}

static void test_several_errors_reported(void **state) {
  compile k;
  (void)state;
  assert_int_equal(run_frontend(&k,
                                "import asc\n"
                                "@asc.kernel\n"
                                "def k(x):\n"
                                "    if x\n"
                                "        pass\n"
                                "    y = 1 +\n"
                                "    while x\n"
                                "        pass\n",
                                1, NULL, 0),
                   ASC_FAIL_ERRORS);
  assert_int_equal(k.c.nerrors, 3);
  assert_diag_contains(&k, "t.py:4:9: error");
  assert_diag_contains(&k, "t.py:6:12: error");
  assert_diag_contains(&k, "t.py:7:12: error");
  done(&k);
}

static void test_max_errors_stops(void **state) {
  char *src = malloc(64 * 1000);
  size_t n = 0;
  compile k;
  (void)state;
  n += (size_t)sprintf(src + n, "import asc\n@asc.kernel\ndef k(x):\n");
  for (int i = 0; i < 500; i++)
    n += (size_t)sprintf(src + n, "    y = )\n");
  assert_int_equal(run_frontend(&k, src, 1, NULL, 0), ASC_FAIL_ERRORS);
  assert_int_equal(k.c.nerrors, k.c.max_errors);
  done(&k);
  free(src);
}

/* ---------------------------------------------------- nesting limits */

static char *repeat3(const char *head, const char *unit, int n,
                     const char *mid, const char *unit2, int n2,
                     const char *tail) {
  size_t len = strlen(head) + strlen(unit) * (size_t)n + strlen(mid) +
               strlen(unit2) * (size_t)n2 + strlen(tail) + 1;
  char *s = malloc(len), *p = s;
  p += sprintf(p, "%s", head);
  for (int i = 0; i < n; i++)
    p += sprintf(p, "%s", unit);
  p += sprintf(p, "%s", mid);
  for (int i = 0; i < n2; i++)
    p += sprintf(p, "%s", unit2);
  sprintf(p, "%s", tail);
  return s;
}

static void expect_error(const char *src, const char *want) {
  compile k;
  assert_int_equal(run_frontend(&k, src, 1, NULL, 0), ASC_FAIL_ERRORS);
  assert_diag_contains(&k, want);
  done(&k);
}

static void expect_ok(const char *src) {
  compile k;
  asc__fail f = run_frontend(&k, src, 1, NULL, 0);
  if (f != ASC_FAIL_NONE)
    fail_msg("unexpected failure:\n%s", diag(&k));
  done(&k);
}

#define KHEAD "import asc\n@asc.kernel\ndef k(x, n):\n    x[0] = "

static void test_deep_nesting_is_an_error(void **state) {
  char *s;
  (void)state;

  s = repeat3(KHEAD, "(", 100, "n", ")", 100, "\n");
  expect_ok(s);
  free(s);
  s = repeat3(KHEAD, "abs(", 150, "n", ")", 150, "\n");
  expect_ok(s);
  free(s);
  s = repeat3(KHEAD, "(", 100000, "n", ")", 100000, "\n");
  expect_error(s, "too deeply nested");
  free(s);
  s = repeat3(KHEAD, "-", 100000, "n", "", 0, "\n");
  expect_error(s, "too deeply nested");
  free(s);
  s = repeat3(KHEAD, "not ", 100000, "n", "", 0, "\n");
  expect_error(s, "too deeply nested");
  free(s);
  s = repeat3(KHEAD, "n ** ", 100000, "n", "", 0, "\n");
  expect_error(s, "too deeply nested");
  free(s);
  s = repeat3(KHEAD, "n if n else ", 100000, "n", "", 0, "\n");
  expect_error(s, "too deeply nested");
  free(s);
  s = repeat3(KHEAD, "lambda: ", 100000, "n", "", 0, "\n");
  expect_error(s, "too deeply nested");
  free(s);
  s = repeat3(KHEAD, "x[", 100000, "n", "]", 100000, "\n");
  expect_error(s, "too deeply nested");
  free(s);
  /* left-associative chains build deep trees without recursion */
  s = repeat3(KHEAD, "n + ", 100000, "n", "", 0, "\n");
  expect_error(s, "expression too complex");
  free(s);
  s = repeat3(KHEAD, "n", 1, "", "()", 100000, "\n");
  expect_error(s, "expression too complex");
  free(s);
  s = repeat3(KHEAD, "n", 1, "", ".a", 100000, "\n");
  expect_error(s, "expression too complex");
  free(s);
  /* lambdas nested at the bottom of long chains */
  s = repeat3(KHEAD, "(lambda: ", 60, "n", " + n)", 60, "\n");
  expect_error(s, "lambda is only supported as the body of asc.parallel_for");
  free(s);
  {
    size_t cap = 200 * 4000;
    char *b = malloc(cap), *q = b;
    q += sprintf(q, KHEAD);
    for (int i = 0; i < 60; i++)
      q += sprintf(q, "(lambda: ");
    q += sprintf(q, "n");
    for (int i = 0; i < 60; i++) {
      q += sprintf(q, ")");
      for (int j = 0; j < 500; j++)
        q += sprintf(q, " + n");
    }
    sprintf(q, "\n");
    expect_error(b, "expression too complex");
    free(b);
  }
  s = repeat3(KHEAD, "n", 1, "", " and n", 100000, "\n");
  expect_error(s, "expression too complex");
  free(s);
  s = repeat3("import asc\n@asc.kernel\ndef k(x, n):\n    if n:\n"
              "        pass\n",
              "    elif n:\n        pass\n", 5000, "", "", 0, "");
  expect_error(s, "too many 'elif' branches");
  free(s);
  {
    /* 1000 nested blocks */
    size_t cap = 1100 * 1100;
    char *b = malloc(cap), *p = b;
    p += sprintf(p, "import asc\n@asc.kernel\ndef k(x, n):\n");
    for (int i = 1; i <= 1000; i++)
      p += sprintf(p, "%*sif n:\n", i, "");
    sprintf(p, "%*spass\n", 1001, "");
    expect_error(b, "too deeply nested");
    free(b);
  }
}

/* -------------------------------------------------- allocation failure */

typedef struct oom_state {
  long countdown;   /* fail the allocation when it reaches 0 */
  bool fired;
} oom_state;

static bool fail_nth(size_t size, void *ud) {
  oom_state *st = ud;
  (void)size;
  if (st->countdown-- == 0) {
    st->fired = true;
    return true;
  }
  return false;
}

static void oom_sweep(const char *src) {
  long n;
  for (n = 0; n < 100000; n++) {
    oom_state st = {n, false};
    compile k;
    asc__fail f;
    asc__set_alloc_fail_hook(fail_nth, &st);
    f = run_frontend(&k, src, 1, NULL, 0);
    asc__set_alloc_fail_hook(NULL, NULL);
    if (!st.fired) {
      /* the whole compile fit below n allocations: the sweep is over */
      assert_int_equal(f, ASC_FAIL_NONE);
      done(&k);
      break;
    }
    if (f != ASC_FAIL_OOM)
      fail_msg("allocation %ld failed but the compile reported %d:\n%s", n,
               (int)f, diag(&k));
    assert_null(k.m);
    done(&k);
  }
  assert_true(n > 0);
}

static void test_oom_at_every_allocation(void **state) {
  (void)state;
  oom_sweep(seed_add);
  /* a program large enough to span several arena chunks */
  {
    char *s = repeat3("import asc\n@asc.kernel\ndef k(x, n):\n",
                      "    x[n] = x[n - 1] + (n * 2 if n else 3)\n", 3000,
                      "", "", 0, "");
    oom_sweep(s);
    free(s);
  }
}

static void test_oom_while_reporting_errors(void **state) {
  (void)state;
  /* failing allocations of the diagnostics buffer unwind too */
  for (long n = 0; n < 50; n++) {
    oom_state st = {n, false};
    compile k;
    asc__fail f;
    asc__set_alloc_fail_hook(fail_nth, &st);
    f = run_frontend(&k, "import asc\n@asc.kernel\ndef k(x):\n  y = )\n", 1,
                     NULL, 0);
    asc__set_alloc_fail_hook(NULL, NULL);
    assert_true(f == ASC_FAIL_OOM || f == ASC_FAIL_ERRORS);
    done(&k);
    if (!st.fired)
      break;
  }
}

/* ------------------------------------------------------------ lexer */

static void test_tokens_and_dump(void **state) {
  asc__cctx c;
  jmp_buf jb;
  asc__token *t = NULL;
  int n = 0;
  asc__buf out;
  (void)state;

  asc__cctx_init(&c, "t.py", "x = 0x1F + .5e1 # c\nif x:\n\ty = 'a\\n'\n",
                 37, 10);
  c.catch_point = &jb;
  asc__buf_init(&out);
  if (setjmp(jb) == 0) {
    t = asc__lex(&c, &n);
    asc__dump_tokens(t, n, &out);
  }
  assert_int_equal(c.nerrors, 0);
  assert_string_equal(asc__buf_str(&out),
                      "10:1 NAME x\n"
                      "10:3 OP =\n"
                      "10:5 INT 31\n"
                      "10:10 OP +\n"
                      "10:12 FLOAT 5.0\n"
                      "10:20 NEWLINE\n"
                      "11:1 KEYWORD if\n"
                      "11:4 NAME x\n"
                      "11:5 OP :\n"
                      "11:6 NEWLINE\n"
                      "12:2 INDENT\n"
                      "12:2 NAME y\n"
                      "12:4 OP =\n"
                      "12:6 STR \"a\\n\"\n"
                      "12:11 NEWLINE\n"
                      "13:1 DEDENT\n"
                      "13:1 EOF\n");
  asc__buf_free(&out);
  asc__cctx_free(&c);
}

static void test_builtins_table(void **state) {
  const asc__builtin *b;
  (void)state;
  b = asc__builtin_lookup(ASC_NS_MATH, "sqrt");
  assert_non_null(b);
  assert_ptr_equal(b, asc__builtin_lookup(ASC_NS_ASC, "sqrt"));
  assert_null(asc__builtin_lookup(ASC_NS_PY, "sqrt"));
  assert_null(asc__builtin_lookup(ASC_NS_MATH, "prange"));
  b = asc__builtin_lookup(ASC_NS_ASC, "float16");
  assert_int_equal(asc__builtin_dtype(b), ascFloat16);
  assert_ptr_equal(asc__builtin_lookup(ASC_NS_ASC, "bool"),
                   asc__builtin_get(ASC_BI_DT_BOOL));
  b = asc__builtin_get(ASC_BI_ATOMIC_CAS);
  assert_int_equal(b->min_args, 4);
  assert_int_equal(asc__builtin_param_index(b, "desired"), 3);
  assert_int_equal(asc__builtin_param_index(b, "nope"), -1);
  for (int id = ASC_BI_NONE + 1; id < ASC_BI_COUNT; id++)
    assert_int_equal(asc__builtin_get((asc__builtin_id)id)->id, id);
  assert_null(asc__builtin_get(ASC_BI_COUNT));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seed_parallel_add_shape),
      cmocka_unit_test(test_first_line_offset),
      cmocka_unit_test(test_for_loop_and_call_normalisation),
      cmocka_unit_test(test_globals_override_and_supply),
      cmocka_unit_test(test_warning_does_not_fail),
      cmocka_unit_test(test_several_errors_reported),
      cmocka_unit_test(test_max_errors_stops),
      cmocka_unit_test(test_deep_nesting_is_an_error),
      cmocka_unit_test(test_oom_at_every_allocation),
      cmocka_unit_test(test_oom_while_reporting_errors),
      cmocka_unit_test(test_tokens_and_dump),
      cmocka_unit_test(test_builtins_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
