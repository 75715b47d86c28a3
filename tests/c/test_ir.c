/*
 * IR: text form round trips, the parser and verifier never crash on bad
 * input, constant evaluation follows Python / IEEE rules, the builder API.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/cctx.h"
#include "compiler/emit_c.h"
#include "compiler/ir/ir.h"
#include "compiler/passes/passes.h"

typedef struct rt_job {
  const char *text;
  size_t len;
  asc__buf *out;
  bool verify;
  bool compile;   /* also run the pipeline and emit C */
} rt_job;

static int parse_print(asc__cctx *c, const rt_job *j) {
  jmp_buf jb;
  c->catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__irmodule *m = asc__ir_parse(c, j->text, j->len);
    if (j->verify || j->compile)
      for (int32_t k = 0; k < m->nfuncs; k++)
        asc__ir_verify(c, m->funcs[k], NULL);
    asc__ir_print_module(j->out, m);
    if (j->compile) {
      asc__buf cbuf;
      asc__compile_opts o;
      asc__compile_opts_init(&o);
      o.verify = true;
      asc__cctx_set_opts(c, &o);
      asc__ir_pipeline(c, m);
      asc__buf_init(&cbuf);
      asc__emit_module(c, m, NULL, &cbuf);
      asc__buf_free(&cbuf);
    }
    return 0;
  }
  return 1;
}

/* Parses text and prints it; 0 on success. */
static int roundtrip(const char *text, size_t len, asc__buf *out,
                     bool verify) {
  asc__cctx c;
  rt_job j = {text, len, out, verify, !verify};
  int rc;
  asc__cctx_init(&c, "t.ir", text, len, 1);
  rc = parse_print(&c, &j);
  if (rc == 0)
    assert_true(c.fail == ASC_FAIL_NONE);
  else
    assert_true(c.fail != ASC_FAIL_NONE && c.diag.len > 0);
  asc__cctx_free(&c);
  return rc;
}

static const char *const samples[] = {
    "fold/arith.ir", "fold/branches.ir", "dce/dead.ir", "cse/common.ir",
    "licm/nest.ir", "unroll/static.ir", "strength/index.ir",
    "pipeline/conv_inner.ir", "pipeline/try_finally.ir",
    "pipeline/except_clauses.ir"};

/* print(parse(x)) is a fixed point after one step. */
static void test_text_roundtrip(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof samples / sizeof *samples; k++) {
    char path[600];
    size_t len;
    char *text;
    asc__buf a, b;
    snprintf(path, sizeof path, "%s/tests/golden/passes/%s", ASC_SOURCE_DIR, samples[k]);
    text = asc__read_file(path, &len);
    assert_non_null(text);
    asc__buf_init(&a);
    asc__buf_init(&b);
    assert_int_equal(roundtrip(text, len, &a, true), 0);
    assert_int_equal(roundtrip(a.data, a.len, &b, true), 0);
    assert_string_equal(asc__buf_str(&a), asc__buf_str(&b));
    asc__buf_free(&a);
    asc__buf_free(&b);
    free(text);
  }
}

/* Every prefix and many single-byte corruptions of valid IR either parse
 * or fail with a diagnostic: never a crash. */
static void test_parser_robust(void **state) {
  char path[600];
  size_t len;
  char *text;
  unsigned seed = 12345;
  static const char junk[] = "%@{}(),:=<>\"\\-.0x9zq\n;";
  (void)state;
  snprintf(path, sizeof path, "%s/tests/golden/passes/pipeline/conv_inner.ir",
           ASC_SOURCE_DIR);
  text = asc__read_file(path, &len);
  assert_non_null(text);
  for (size_t n = 0; n <= len; n += 3) {
    /* an exact-size copy with no NUL after it: the parser must not read
     * past len (ASan builds catch it) */
    char *cut = malloc(n ? n : 1);
    asc__buf o;
    memcpy(cut, text, n);
    asc__buf_init(&o);
    roundtrip(cut, n, &o, false);
    asc__buf_free(&o);
    free(cut);
  }
  for (int it = 0; it < 2000; it++) {
    char *mut = malloc(len + 1);
    asc__buf o;
    memcpy(mut, text, len + 1);
    seed = seed * 1103515245u + 12345u;
    mut[(seed >> 8) % len] = junk[(seed >> 20) % (sizeof junk - 1)];
    asc__buf_init(&o);
    roundtrip(mut, len, &o, false);
    asc__buf_free(&o);
    free(mut);
  }
  free(text);
}

static asc__irval ev(int op, int dt, asc__irval a, asc__irval b, bool *ok) {
  asc__irval args[2] = {a, b}, r;
  memset(&r, 0, sizeof r);
  *ok = asc__ir_eval(op, 0, dt, a.dtype, args, 2, &r);
  return r;
}

static void test_eval(void **state) {
  bool ok;
  asc__irval r;
  (void)state;
  r = ev(ASC_IR_FLOORDIV, ascInt64, asc__irv_int(ascInt64, -7),
         asc__irv_int(ascInt64, 2), &ok);
  assert_true(ok);
  assert_int_equal(r.c.i, -4);
  r = ev(ASC_IR_MOD, ascInt64, asc__irv_int(ascInt64, 7),
         asc__irv_int(ascInt64, -2), &ok);
  assert_int_equal(r.c.i, -1);
  ev(ASC_IR_MOD, ascInt64, asc__irv_int(ascInt64, 7),
     asc__irv_int(ascInt64, 0), &ok);
  assert_false(ok); /* raises at run time */
  r = ev(ASC_IR_ADD, ascInt8, asc__irv_int(ascInt8, 127),
         asc__irv_int(ascInt8, 1), &ok);
  assert_int_equal(r.c.i, -128);
  r = ev(ASC_IR_ADD, ascUInt8, asc__irv_int(ascUInt8, 255),
         asc__irv_int(ascUInt8, 1), &ok);
  assert_int_equal(r.c.i, 0);
  r = ev(ASC_IR_LT, ascBool, asc__irv_int(ascUInt64, -1),
         asc__irv_int(ascUInt64, 1), &ok);
  assert_int_equal(r.c.i, 0); /* unsigned compare */
  /* f16 / bf16 constants round to nearest even */
  assert_true(asc__irv_float(ascFloat16, 1.0 + ldexp(1, -11)).c.f == 1.0);
  assert_true(asc__irv_float(ascFloat16, 1.0 + 3 * ldexp(1, -11)).c.f ==
              1.0 + ldexp(1, -9));
  assert_true(isinf(asc__irv_float(ascFloat16, 65520.0).c.f));
  assert_true(asc__irv_float(ascFloat16, 65519.0).c.f == 65504.0);
  assert_true(asc__irv_float(ascBFloat16, 1.0 + ldexp(1, -8)).c.f == 1.0);
  assert_true(asc__irv_float(ascFloat16, ldexp(1, -25)).c.f == 0.0);
  assert_true(asc__irv_float(ascFloat16, ldexp(3, -26)).c.f == ldexp(1, -24));
  r = ev(ASC_IR_FLOORDIV, ascFloat64, asc__irv_float(ascFloat64, -7.5),
         asc__irv_float(ascFloat64, 2.0), &ok);
  assert_true(r.c.f == -4.0);
  r = ev(ASC_IR_MOD, ascFloat64, asc__irv_float(ascFloat64, -6.0),
         asc__irv_float(ascFloat64, -3.0), &ok);
  assert_true(r.c.f == 0.0 && signbit(r.c.f));
}

typedef struct build_job {
  asc__buf *out;
} build_job;

static void build_vadd(asc__cctx *c, asc__buf *out) {
  asc__irfunc *f = asc__ir_func_new(c, "vadd");
  asc__irtype t = {ASC_IRK_TENSOR, ascFloat32, 1, ASC_IRT_CONTIG};
  int32_t a = asc__ir_param(c, f, t, "a");
  int32_t b = asc__ir_param(c, f, t, "b");
  int32_t o = asc__ir_param(c, f, t, "out");
  int32_t n = asc__ir_reg(c, f, asc__irt_scalar(ascInt64), "n");
  int32_t i = asc__ir_reg(c, f, asc__irt_scalar(ascInt64), "i");
  int32_t x = asc__ir_reg(c, f, asc__irt_scalar(ascFloat32), "x");
  int32_t y = asc__ir_reg(c, f, asc__irt_scalar(ascFloat32), "x");
  asc__irins *in, *loop;
  asc__irmodule *m = asc__ir_module_new(c);
  in = asc__ir_ins(c, ASC_IR_DIM, n, 1, 2);
  in->args[0] = asc__irv_reg(a);
  asc__ir_append(&f->body, in);
  loop = asc__ir_ins(c, ASC_IR_PFOR, i, 3, 3);
  loop->args[0] = asc__irv_int(ascInt64, 0);
  loop->args[1] = asc__irv_reg(n);
  loop->args[2] = asc__irv_int(ascInt64, 1);
  asc__ir_append(&f->body, loop);
  in = asc__ir_ins(c, ASC_IR_LOAD, x, 2, 4);
  in->args[0] = asc__irv_reg(a);
  in->args[1] = asc__irv_reg(i);
  asc__ir_append(&loop->body[0], in);
  in = asc__ir_ins(c, ASC_IR_LOAD, y, 2, 4);
  in->args[0] = asc__irv_reg(b);
  in->args[1] = asc__irv_reg(i);
  asc__ir_append(&loop->body[0], in);
  {
    int32_t s = asc__ir_bin(c, f, &loop->body[0], ASC_IR_ADD, ascFloat32,
                            asc__irv_reg(x), asc__irv_reg(y), 4);
    in = asc__ir_ins(c, ASC_IR_STORE, -1, 3, 4);
    in->args[0] = asc__irv_reg(o);
    in->args[1] = asc__irv_reg(i);
    in->args[2] = asc__irv_reg(s);
    asc__ir_append(&loop->body[0], in);
  }
  asc__ir_verify(c, f, NULL);
  asc__ir_module_add(c, m, f);
  asc__ir_print_module(out, m);
}

static int guarded_build(asc__cctx *c, asc__buf *out) {
  jmp_buf jb;
  c->catch_point = &jb;
  if (setjmp(jb) == 0) {
    build_vadd(c, out);
    return 0;
  }
  return 1;
}

static void test_builder(void **state) {
  asc__cctx c;
  asc__buf out;
  (void)state;
  asc__cctx_init(&c, "b", "", 0, 1);
  asc__buf_init(&out);
  assert_int_equal(guarded_build(&c, &out), 0);
  assert_string_equal(
      asc__buf_str(&out),
      "kernel @vadd(%a: tensor<f32,1,contig>, %b: tensor<f32,1,contig>, "
      "%out: tensor<f32,1,contig>) {\n"
      "  %n:i64 = dim %a, 0 @2\n"
      "  pfor %i:i64 = 0, %n, 1 @3 {\n"
      "    %x:f32 = load %a, %i @4\n"
      "    %x.0:f32 = load %b, %i @4\n"
      "    %t1:f32 = add %x, %x.0 @4\n"
      "    store %out, %i, %t1 @4\n"
      "  }\n"
      "}\n");
  asc__buf_free(&out);
  asc__cctx_free(&c);
}

/* ASC_DUMP-style dumps go to the given stream after the named passes. */
static int dump_guarded(asc__cctx *c, const char *text, FILE *to) {
  jmp_buf jb;
  c->catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__irmodule *m = asc__ir_parse(c, text, strlen(text));
    asc__compile_opts o;
    asc__compile_opts_init(&o);
    o.dump = "fold,licm";
    o.dump_to = to;
    asc__cctx_set_opts(c, &o);
    asc__ir_pipeline(c, m);
    return 0;
  }
  return 1;
}

static void test_dump(void **state) {
  static const char text[] = "kernel @k(%a: tensor<i64,1,contig>) {\n"
                             "  %x:i64 = add 1, 2\n"
                             "  store %a, 0, %x\n"
                             "}\n";
  asc__cctx c;
  FILE *fp = tmpfile();
  char buf[4096];
  size_t n;
  (void)state;
  assert_non_null(fp);
  asc__cctx_init(&c, "d.ir", text, strlen(text), 1);
  assert_int_equal(dump_guarded(&c, text, fp), 0);
  asc__cctx_free(&c);
  rewind(fp);
  n = fread(buf, 1, sizeof buf - 1, fp);
  buf[n] = 0;
  fclose(fp);
  /* fold runs twice in the pipeline, licm twice */
  assert_non_null(strstr(buf, "; after fold\nkernel @k"));
  assert_non_null(strstr(buf, "; after licm\n"));
  assert_null(strstr(buf, "; after dce"));
  assert_non_null(strstr(buf, "store %a, 0, 3"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text_roundtrip),
      cmocka_unit_test(test_parser_robust),
      cmocka_unit_test(test_eval),
      cmocka_unit_test(test_builder),
      cmocka_unit_test(test_dump),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
