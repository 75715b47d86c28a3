/*
 * Automatic parallelisation end to end: the same IR compiled serially (no
 * passes) and through the standard pipeline (which parallelises it), run
 * with a runtime whose parallel_for cuts the iterations into several
 * chunks and runs them in a shuffled order; the results must agree.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kernel_harness.h"

#define SHUF_TEAM 4

/* ----------------------------------------------- shuffling runtime */

static int shuf_calls;        /* parallel_for calls since the last reset */
static uint64_t shuf_seed = 1;

static uint64_t next_rand(void) {
  shuf_seed = shuf_seed * 6364136223846793005ull + 1442695040888963407ull;
  return shuf_seed >> 33;
}

static int shuf_parallel_for(asc_kctx *ctx, int64_t n, int64_t min_chunk,
                             asc_kbody body, void *env, asc_kexc *exc) {
  int64_t lo[64], hi[64];
  int nc = 0;
  int64_t chunk = n / 5 > 0 ? n / 5 : 1;
  (void)ctx;
  (void)min_chunk;
  shuf_calls++;
  for (int64_t k = 0; k < n; k += chunk) {
    if (nc == 64) {
      hi[nc - 1] = n;
      break;
    }
    lo[nc] = k;
    hi[nc] = k + chunk < n ? k + chunk : n;
    nc++;
  }
  for (int k = nc - 1; k > 0; k--) {
    int j = (int)(next_rand() % (uint64_t)(k + 1));
    int64_t a = lo[k], b = hi[k];
    lo[k] = lo[j];
    hi[k] = hi[j];
    lo[j] = a;
    hi[j] = b;
  }
  for (int k = 0; k < nc; k++)
    if (body(env, lo[k], hi[k], (int32_t)(k % SHUF_TEAM), exc) != 0)
      return 1;
  return 0;
}

static int32_t shuf_team_size(asc_kctx *ctx) {
  (void)ctx;
  return SHUF_TEAM;
}

static const asc_krt shuf_rt = {
    ASC_KABI_VERSION, shuf_parallel_for, shuf_team_size,
    harness_barrier,  harness_crit_enter, harness_crit_exit,
    harness_cancelled, harness_alloc,     harness_release,
    harness_keep, harness_gemm, NULL, harness_gemm_ab, NULL};

static int shuf_call(const harness_mod *hm, void *const *args) {
  asc_kctx ctx;
  asc_kexc exc;
  static _Alignas(64) unsigned char shared[1 << 12];
  memset(&ctx, 0, sizeof ctx);
  memset(&exc, 0, sizeof exc);
  ctx.block_num = 1;
  ctx.rt = &shuf_rt;
  ctx.shared = shared;
  {
    int rc = hm->desc->kernels[0].entry(&ctx, args, &exc);
    harness_tmp_end();
    return rc;
  }
}

/* The IR after the standard pipeline less the rows of passes_off, to look
 * for the decision. */
static char *pipeline_ir_off(const char *ir, uint64_t passes_off) {
  asc__cctx c;
  asc__buf out;
  jmp_buf jb;
  char *volatile r = NULL;
  asc__cctx_init(&c, "test.ir", ir, strlen(ir), 1);
  asc__buf_init(&out);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__irmodule *m = asc__ir_parse(&c, ir, strlen(ir));
    asc__compile_opts o;
    asc__compile_opts_init(&o);
    o.verify = true;
    o.code.passes_off = passes_off;
    asc__cctx_set_opts(&c, &o);
    asc__ir_pipeline(&c, m);
    asc__ir_print_module(&out, m);
    r = strdup(asc__buf_str(&out));
  } else {
    fprintf(stderr, "%s", asc__buf_str(&c.diag));
  }
  asc__buf_free(&out);
  asc__cctx_free(&c);
  return r;
}

static void expect_in_ir_off(const char *ir, const char *what,
                             uint64_t passes_off) {
  char *got = pipeline_ir_off(ir, passes_off);
  assert_non_null(got);
  if (strstr(got, what) == NULL)
    fprintf(stderr, "expected '%s' in:\n%s", what, got);
  assert_non_null(strstr(got, what));
  free(got);
}

static void expect_in_ir(const char *ir, const char *what) {
  expect_in_ir_off(ir, what, 0);
}

/* --------------------------------------------------------- conv2d */

static const char conv_ir[] =
    "kernel @conv2d(%input: tensor<f32,4,contig>, "
    "%weight: tensor<f32,4,contig>, %output: tensor<f32,4>) {\n"
    "  %batch:i64 = dim %input, 0\n"
    "  %in_c:i64 = dim %input, 1\n"
    "  %in_h:i64 = dim %input, 2\n"
    "  %in_w:i64 = dim %input, 3\n"
    "  %out_c:i64 = dim %weight, 0\n"
    "  %k_h:i64 = dim %weight, 2\n"
    "  %k_w:i64 = dim %weight, 3\n"
    "  %t8:i64 = sub %in_h, %k_h\n"
    "  %out_h:i64 = add %t8, 1\n"
    "  %t10:i64 = sub %in_w, %k_w\n"
    "  %out_w:i64 = add %t10, 1\n"
    "  for %b.it:i64 = 0, %batch, 1 @9 {\n"
    "    %b:i64 = mov %b.it\n"
    "    for %oc.it:i64 = 0, %out_c, 1 {\n"
    "      %oc:i64 = mov %oc.it\n"
    "      for %oh.it:i64 = 0, %out_h, 1 {\n"
    "        %oh:i64 = mov %oh.it\n"
    "        for %ow.it:i64 = 0, %out_w, 1 {\n"
    "          %ow:i64 = mov %ow.it\n"
    "          %sum:f32 = mov 0.0\n"
    "          for %ic:i64 = 0, %in_c, 1 {\n"
    "            for %kh:i64 = 0, %k_h, 1 {\n"
    "              for %kw:i64 = 0, %k_w, 1 {\n"
    "                %y:i64 = add %oh, %kh\n"
    "                %x:i64 = add %ow, %kw\n"
    "                %si0:i64 = stride %input, 0\n"
    "                %si1:i64 = stride %input, 1\n"
    "                %si2:i64 = stride %input, 2\n"
    "                %a0:i64 = mul %b, %si0\n"
    "                %a1:i64 = mul %ic, %si1\n"
    "                %a2:i64 = mul %y, %si2\n"
    "                %a01:i64 = add %a0, %a1\n"
    "                %a012:i64 = add %a01, %a2\n"
    "                %ai:i64 = add %a012, %x\n"
    "                %v:f32 = load %input, %ai\n"
    "                %sw0:i64 = stride %weight, 0\n"
    "                %sw1:i64 = stride %weight, 1\n"
    "                %sw2:i64 = stride %weight, 2\n"
    "                %b0:i64 = mul %oc, %sw0\n"
    "                %b1:i64 = mul %ic, %sw1\n"
    "                %b2:i64 = mul %kh, %sw2\n"
    "                %b01:i64 = add %b0, %b1\n"
    "                %b012:i64 = add %b01, %b2\n"
    "                %bi:i64 = add %b012, %kw\n"
    "                %u:f32 = load %weight, %bi\n"
    "                %p:f32 = mul %v, %u\n"
    "                %t74:f32 = add %sum, %p\n"
    "                %sum:f32 = mov %t74\n"
    "              }\n"
    "            }\n"
    "          }\n"
    "          %so0:i64 = stride %output, 0\n"
    "          %so1:i64 = stride %output, 1\n"
    "          %so2:i64 = stride %output, 2\n"
    "          %so3:i64 = stride %output, 3\n"
    "          %c0:i64 = mul %b, %so0\n"
    "          %c1:i64 = mul %oc, %so1\n"
    "          %c2:i64 = mul %oh, %so2\n"
    "          %c3:i64 = mul %ow, %so3\n"
    "          %c01:i64 = add %c0, %c1\n"
    "          %c012:i64 = add %c01, %c2\n"
    "          %ci:i64 = add %c012, %c3\n"
    "          store %output, %ci, %sum\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

enum { CB = 1, CIC = 3, CH = 9, CW = 8, COC = 4, KH = 3, KW = 2 };
enum { OH = CH - KH + 1, OW = CW - KW + 1 };

static void conv_run(const harness_mod *hm, float *in, float *w, float *out,
                     const int64_t *ost) {
  int64_t ish[4] = {CB, CIC, CH, CW}, ist[4] = {CIC * CH * CW, CH * CW, CW, 1};
  int64_t wsh[4] = {COC, CIC, KH, KW}, wst[4] = {CIC * KH * KW, KH * KW, KW, 1};
  int64_t osh[4] = {CB, COC, OH, OW};
  asc_ktensor ti = harness_tensor(in, ascFloat32, 4, ish, ist);
  asc_ktensor tw = harness_tensor(w, ascFloat32, 4, wsh, wst);
  asc_ktensor to = harness_tensor(out, ascFloat32, 4, osh, ost);
  void *args[3] = {&ti, &tw, &to};
  assert_int_equal(shuf_call(hm, args), 0);
}

static void test_conv2d_batch1(void **state) {
  static float in[CB * CIC * CH * CW], w[COC * CIC * KH * KW];
  static float ser[CB * COC * OH * OW], par[CB * COC * OH * OW];
  int64_t ost[4] = {COC * OH * OW, OH * OW, OW, 1};
  harness_mod hs, hp;
  (void)state;
  for (size_t k = 0; k < ASC_ARRAY_SIZE(in); k++)
    in[k] = (float)((k * 7) % 11) - 5.0f;
  for (size_t k = 0; k < ASC_ARRAY_SIZE(w); k++)
    w[k] = (float)((k * 5) % 7) * 0.25f - 0.5f;
  /* the parallelizer's decision on the whole nest: without the
   * interchange, which would move the ow loop into the window first */
  expect_in_ir_off(conv_ir, "collapsed 4 loops",
                   asc__pass_bits("interchange"));
  assert_int_equal(harness_load(&hs, conv_ir, ""), 0);
  assert_int_equal(harness_load_off(&hp, conv_ir, NULL,
                                    asc__pass_bits("interchange")),
                   0);
  /* the body recovers the collapsed indices once per chunk and counts
   * them up; the divisors are known positive, so nothing can raise */
  {
    FILE *fp = fopen(hp.c_path, "r");
    static char text[1 << 16];
    size_t len;
    assert_non_null(fp);
    len = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[len] = '\0';
    assert_non_null(strstr(text, "indices of the collapsed loops, counted up"));
    assert_null(strstr(text, "integer division or modulo by zero"));
  }
  memset(ser, 0, sizeof ser);
  memset(par, 0, sizeof par);
  shuf_calls = 0;
  conv_run(&hs, in, w, ser, ost);
  assert_int_equal(shuf_calls, 0);
  conv_run(&hp, in, w, par, ost);
  /* batch 1 still fans out: one parallel loop over 4*7*7 outputs */
  assert_int_equal(shuf_calls, 1);
  assert_memory_equal(ser, par, sizeof ser);

  /* an output whose rows overlap (stride 0 on axis 2): the launch test
   * fails, the serial nest runs, the last row written wins */
  {
    int64_t bad[4] = {COC * OH * OW, OH * OW, 0, 1};
    memset(ser, 0, sizeof ser);
    memset(par, 0, sizeof par);
    conv_run(&hs, in, w, ser, bad);
    shuf_calls = 0;
    conv_run(&hp, in, w, par, bad);
    assert_int_equal(shuf_calls, 0);
    assert_memory_equal(ser, par, sizeof ser);
  }
  harness_unload(&hs);
  harness_unload(&hp);
}

/* ------------------------------------------------------ reductions */

static const char dot_ir[] =
    "kernel @dot(%a: tensor<f64,1,contig>, %b: tensor<f64,1,contig>, "
    "%out: tensor<f64,1,contig>) {\n"
    "  %n:i64 = dim %a, 0\n"
    "  %s:f64 = mov 0.5\n"
    "  for %i:i64 = 0, %n, 1 {\n"
    "    %x:f64 = load %a, %i\n"
    "    %y:f64 = load %b, %i\n"
    "    %p:f64 = mul %x, %y\n"
    "    %s:f64 = add %s, %p\n"
    "  }\n"
    "  store %out, 0, %s\n"
    "}\n";

/* The same sum as asc.prange writes it: the reduction order is the
 * parts' (docs/parallelize.md, "Reductions and their order"). */
static const char dot_pfor_ir[] =
    "kernel @dot(%a: tensor<f64,1,contig>, %b: tensor<f64,1,contig>, "
    "%out: tensor<f64,1,contig>) {\n"
    "  %n:i64 = dim %a, 0\n"
    "  %s:f64 = mov 0.5\n"
    "  pfor %i:i64 = 0, %n, 1 reduce(add %s) {\n"
    "    %x:f64 = load %a, %i\n"
    "    %y:f64 = load %b, %i\n"
    "    %p:f64 = mul %x, %y\n"
    "    %s:f64 = add %s, %p\n"
    "  }\n"
    "  store %out, 0, %s\n"
    "}\n";

/* A plain loop's float sum stays serial, in Python's order; the pfor of
 * asc.prange combines fixed parts in part order, the same bits on every
 * schedule. */
static void test_dot_deterministic(void **state) {
  enum { N = 1003 };
  static double a[N], b[N];
  double out[1], first, serial, want = 0.5;
  int64_t sh[1] = {N}, st[1] = {1}, one[1] = {1};
  asc_ktensor ta, tb, to;
  void *args[3];
  harness_mod hs, hp;
  (void)state;
  for (int k = 0; k < N; k++) {
    a[k] = 1.0 / (k + 1);
    b[k] = (k % 3) - 1.0 + 1e-3 * k;
  }
  ta = harness_tensor(a, ascFloat64, 1, sh, st);
  tb = harness_tensor(b, ascFloat64, 1, sh, st);
  to = harness_tensor(out, ascFloat64, 1, one, st);
  args[0] = &ta;
  args[1] = &tb;
  args[2] = &to;
  expect_in_ir(dot_ir, "stays serial: %s is a floating-point reduction");
  expect_in_ir(dot_pfor_ir, "reduce(add %s)");
  assert_int_equal(harness_load(&hs, dot_ir, NULL), 0);
  assert_int_equal(harness_load(&hp, dot_pfor_ir, NULL), 0);
  shuf_calls = 0;
  assert_int_equal(shuf_call(&hs, args), 0);
  assert_int_equal(shuf_calls, 0);
  serial = out[0];
  shuf_calls = 0;
  assert_int_equal(shuf_call(&hp, args), 0);
  assert_int_equal(shuf_calls, 1);
  first = out[0];
  /* the partials of SHUF_TEAM fixed parts, combined in part order */
  for (int part = 0; part < SHUF_TEAM; part++) {
    int64_t k0 = (N / SHUF_TEAM) * part +
                 (part < N % SHUF_TEAM ? part : N % SHUF_TEAM);
    int64_t k1 = (N / SHUF_TEAM) * (part + 1) +
                 (part + 1 < N % SHUF_TEAM ? part + 1 : N % SHUF_TEAM);
    double s = 0;
    for (int64_t k = k0; k < k1; k++)
      s += a[k] * b[k];
    want += s;
  }
  assert_true(first == want);
  assert_true(fabs(first - serial) < 1e-12);
  /* another shuffle, the same bits */
  for (int rep = 0; rep < 5; rep++) {
    assert_int_equal(shuf_call(&hp, args), 0);
    assert_true(out[0] == first);
  }
  harness_unload(&hs);
  harness_unload(&hp);
}

static const char minmax_ir[] =
    "kernel @minmax(%a: tensor<i32,1,contig>, %out: tensor<i32,1,contig>) {\n"
    "  %n:i64 = dim %a, 0\n"
    "  %hi:i32 = load %a, 0\n"
    "  %lo:i32 = load %a, 0\n"
    "  %cnt:i64 = mov 0\n"
    "  for %i:i64 = 1, %n, 1 {\n"
    "    %x:i32 = load %a, %i\n"
    "    %t1:i32 = max %hi, %x\n"
    "    %hi:i32 = mov %t1\n"
    "    %lo:i32 = min %lo, %x\n"
    "    %pos:bool = gt %x, 0\n"
    "    if %pos {\n"
    "      %cnt:i64 = add %cnt, 1\n"
    "    }\n"
    "  }\n"
    "  store %out, 0, %hi\n"
    "  store %out, 1, %lo\n"
    "  %c32:i32 = cast %cnt\n"
    "  store %out, 2, %c32\n"
    "}\n";

static void test_minmax_count(void **state) {
  enum { N = 517 };
  static int32_t a[N];
  int32_t ser[3], par[3];
  int64_t sh[1] = {N}, st[1] = {1}, three[1] = {3};
  asc_ktensor ta, to;
  void *args[2];
  harness_mod hs, hp;
  (void)state;
  for (int k = 0; k < N; k++)
    a[k] = (int32_t)((k * 7919) % 1001) - 500;
  ta = harness_tensor(a, ascInt32, 1, sh, st);
  args[0] = &ta;
  args[1] = &to;
  expect_in_ir(minmax_ir, "reduce(max %hi, min %lo, add %cnt)");
  assert_int_equal(harness_load(&hs, minmax_ir, ""), 0);
  assert_int_equal(harness_load(&hp, minmax_ir, NULL), 0);
  to = harness_tensor(ser, ascInt32, 1, three, st);
  assert_int_equal(shuf_call(&hs, args), 0);
  to = harness_tensor(par, ascInt32, 1, three, st);
  shuf_calls = 0;
  assert_int_equal(shuf_call(&hp, args), 0);
  assert_int_equal(shuf_calls, 1);
  assert_memory_equal(ser, par, sizeof ser);
  harness_unload(&hs);
  harness_unload(&hp);
}

/* ------------------------------------------- recurrence along rows */

static const char rows_ir[] =
    "kernel @scan_rows(%a: tensor<f32,2>, %c: tensor<f32,2>, %h: i64) {\n"
    "  %w:i64 = dim %c, 1\n"
    "  for %i:i64 = 0, %h, 1 {\n"
    "    for %j:i64 = 1, %w, 1 {\n"
    "      %sa0:i64 = stride %a, 0\n"
    "      %sa1:i64 = stride %a, 1\n"
    "      %ra:i64 = mul %i, %sa0\n"
    "      %ca:i64 = mul %j, %sa1\n"
    "      %oa:i64 = add %ra, %ca\n"
    "      %x:f32 = load %a, %oa\n"
    "      %sc0:i64 = stride %c, 0\n"
    "      %sc1:i64 = stride %c, 1\n"
    "      %rc:i64 = mul %i, %sc0\n"
    "      %j1:i64 = sub %j, 1\n"
    "      %cc1:i64 = mul %j1, %sc1\n"
    "      %oc1:i64 = add %rc, %cc1\n"
    "      %y:f32 = load %c, %oc1\n"
    "      %z:f32 = add %x, %y\n"
    "      %cc:i64 = mul %j, %sc1\n"
    "      %oc:i64 = add %rc, %cc\n"
    "      store %c, %oc, %z\n"
    "    }\n"
    "  }\n"
    "}\n";

static void test_rows_recurrence(void **state) {
  enum { H = 23, W = 9 };
  static float a[H * W], ser[H * W], par[H * W];
  int64_t sh[2] = {H, W}, st[2] = {W, 1};
  int64_t h;
  asc_ktensor ta, tc;
  void *args[3];
  harness_mod hs, hp;
  (void)state;
  for (int k = 0; k < H * W; k++) {
    a[k] = (float)(k % 13);
    ser[k] = par[k] = (float)(k % 5);
  }
  ta = harness_tensor(a, ascFloat32, 2, sh, st);
  args[0] = &ta;
  args[1] = &tc;
  args[2] = &h;
  expect_in_ir(rows_ir, "loop %j stays serial inside");
  assert_int_equal(harness_load(&hs, rows_ir, ""), 0);
  assert_int_equal(harness_load(&hp, rows_ir, NULL), 0);
  h = H - 3; /* rows 0..H-4: the bound is tested at run time */
  tc = harness_tensor(ser, ascFloat32, 2, sh, st);
  assert_int_equal(shuf_call(&hs, args), 0);
  tc = harness_tensor(par, ascFloat32, 2, sh, st);
  shuf_calls = 0;
  assert_int_equal(shuf_call(&hp, args), 0);
  assert_int_equal(shuf_calls, 1);
  assert_memory_equal(ser, par, sizeof ser);
  harness_unload(&hs);
  harness_unload(&hp);
}

/* ------------------------------------------ collapsed transpose */

static const char transpose_ir[] =
    "kernel @transpose(%a: tensor<i32,2,contig>, %c: tensor<i32,2,contig>) "
    "{\n"
    "  %h:i64 = dim %a, 0\n"
    "  %w:i64 = dim %a, 1\n"
    "  for %i:i64 = 0, %h, 1 {\n"
    "    for %j:i64 = 0, %w, 1 {\n"
    "      %sa:i64 = stride %a, 0\n"
    "      %ra:i64 = mul %i, %sa\n"
    "      %oa:i64 = add %ra, %j\n"
    "      %x:i32 = load %a, %oa\n"
    "      %sc:i64 = stride %c, 0\n"
    "      %rc:i64 = mul %j, %sc\n"
    "      %oc:i64 = add %rc, %i\n"
    "      store %c, %oc, %x\n"
    "    }\n"
    "  }\n"
    "}\n";

static void test_transpose_collapsed(void **state) {
  enum { H = 7, W = 13 };
  static int32_t a[H * W], ser[W * H], par[W * H];
  int64_t sha[2] = {H, W}, sta[2] = {W, 1};
  int64_t shc[2] = {W, H}, stc[2] = {H, 1};
  asc_ktensor ta, tc;
  void *args[2];
  harness_mod hs, hp;
  (void)state;
  for (int k = 0; k < H * W; k++)
    a[k] = k * 3 + 1;
  memset(ser, 0, sizeof ser);
  memset(par, 0, sizeof par);
  ta = harness_tensor(a, ascInt32, 2, sha, sta);
  args[0] = &ta;
  args[1] = &tc;
  /* without the tile pass the nest is collapsed; with it (the default) the
   * row loop alone becomes the pfor, which the tile pass blocks */
  expect_in_ir_off(transpose_ir, "collapsed 2 loops (%i, %j)",
                   asc__pass_bits("tile"));
  expect_in_ir(transpose_ir, "loop %j stays serial inside: the tile pass "
                             "blocks it with loop %i");
  expect_in_ir(transpose_ir, "; tile: loops %i, %j");
  assert_int_equal(harness_load(&hs, transpose_ir, ""), 0);
  assert_int_equal(harness_load(&hp, transpose_ir, NULL), 0);
  tc = harness_tensor(ser, ascInt32, 2, shc, stc);
  assert_int_equal(shuf_call(&hs, args), 0);
  tc = harness_tensor(par, ascInt32, 2, shc, stc);
  shuf_calls = 0;
  assert_int_equal(shuf_call(&hp, args), 0);
  assert_int_equal(shuf_calls, 1);
  assert_memory_equal(ser, par, sizeof ser);
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++)
      assert_int_equal(par[j * H + i], a[i * W + j]);
  harness_unload(&hs);
  harness_unload(&hp);
}

/* ------------------------------------------------ random nests */

/* Random two-level nests over a square tensor that store
 * c[idx0, idx1] = c[ldx0, ldx1] + a[i, j] with each index one of the loop
 * variables plus a small offset (all in range): whatever the pass decides,
 * the parallel build under shuffled chunks must give the serial result. */
static const char *rand_index(char *buf, size_t n, int var, int delta) {
  snprintf(buf, n, "add %%%s, %d", var ? "j" : "i", delta);
  return buf;
}

static void test_random_nests(void **state) {
  enum { N = 9, D = N + 4, KERNELS = 40 };
  static int64_t a[D * D], c0[D * D], ser[D * D], par[D * D];
  int64_t sh[2] = {D, D}, st[2] = {D, 1};
  asc_ktensor ta, tc;
  void *args[2];
  int parallel = 0;
  uint64_t seed = 12345;
  (void)state;
  for (int k = 0; k < D * D; k++) {
    a[k] = (k * 37) % 101;
    c0[k] = (k * 11) % 17;
  }
  ta = harness_tensor(a, ascInt64, 2, sh, st);
  args[0] = &ta;
  args[1] = &tc;
  for (int n = 0; n < KERNELS; n++) {
    char ir[2048], b[6][32];
    int v[4], d[4], load_c;
    harness_mod hs, hp;
    for (int k = 0; k < 4; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      v[k] = (int)((seed >> 40) & 1);
      d[k] = (int)((seed >> 41) % 5) - 2;
    }
    load_c = (int)((seed >> 50) % 3) != 0;
    if ((seed >> 53) & 1) { /* the common case: c[i, j] */
      v[0] = 0;
      v[1] = 1;
      d[0] = d[1] = 0;
    }
    snprintf(ir, sizeof ir,
             "kernel @r(%%a: tensor<i64,2,contig>, "
             "%%c: tensor<i64,2,contig>) {\n"
             "  %%s0:i64 = stride %%c, 0\n"
             "  %%t0:i64 = stride %%a, 0\n"
             "  for %%i:i64 = 2, %d, 1 {\n"
             "    for %%j:i64 = 2, %d, 1 {\n"
             "      %%p0:i64 = %s\n"
             "      %%p1:i64 = %s\n"
             "      %%q0:i64 = %s\n"
             "      %%q1:i64 = %s\n"
             "      %%ro:i64 = mul %%p0, %%s0\n"
             "      %%o:i64 = add %%ro, %%p1\n"
             "      %%rl:i64 = mul %%q0, %%s0\n"
             "      %%l:i64 = add %%rl, %%q1\n"
             "      %%ra:i64 = mul %%i, %%t0\n"
             "      %%oa:i64 = add %%ra, %%j\n"
             "      %%x:i64 = load %%a, %%oa\n"
             "      %%y:i64 = %s\n"
             "      %%z:i64 = add %%x, %%y\n"
             "      store %%c, %%o, %%z\n"
             "    }\n"
             "  }\n"
             "}\n",
             N + 2, N + 2, rand_index(b[0], 32, v[0], d[0]),
             rand_index(b[1], 32, v[1], d[1]), rand_index(b[2], 32, v[2], d[2]),
             rand_index(b[3], 32, v[3], d[3]),
             load_c ? "load %c, %l" : "mul %x, 2");
    assert_int_equal(harness_load(&hs, ir, ""), 0);
    assert_int_equal(harness_load(&hp, ir, NULL), 0);
    memcpy(ser, c0, sizeof ser);
    memcpy(par, c0, sizeof par);
    tc = harness_tensor(ser, ascInt64, 2, sh, st);
    assert_int_equal(shuf_call(&hs, args), 0);
    tc = harness_tensor(par, ascInt64, 2, sh, st);
    shuf_calls = 0;
    assert_int_equal(shuf_call(&hp, args), 0);
    parallel += shuf_calls > 0;
    if (memcmp(ser, par, sizeof ser) != 0)
      fprintf(stderr, "differs:\n%s", ir);
    assert_memory_equal(ser, par, sizeof ser);
    harness_unload(&hs);
    harness_unload(&hp);
  }
  /* some of them were parallel, some not */
  assert_true(parallel > 0 && parallel < KERNELS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv2d_batch1),
      cmocka_unit_test(test_dot_deterministic),
      cmocka_unit_test(test_minmax_count),
      cmocka_unit_test(test_rows_recurrence),
      cmocka_unit_test(test_transpose_collapsed),
      cmocka_unit_test(test_random_nests),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
