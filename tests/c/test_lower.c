/*
 * Lowering: Python kernel text -> front end -> types -> IR -> passes -> C ->
 * cc -> run, for the seed kernels and the constructs lowering handles.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "asc/asc.h"
#include "compiler/front/frontend.h"
#include "compiler/types/infer.h"
#include "kernel_harness.h"
#include "compiler/compile.h"

typedef struct py_job {
  const char *kernel;
  const char *sig;
  asc__buf *out;
  asc__buf *ir;
  bool may_alias;
} py_job;

static void py_work(asc__cctx *c, const py_job *j) {
  asc__ast_module *m = asc__frontend(c, NULL, 0);
  asc__ast_func *k = asc__module_func(m, j->kernel);
  asc__sig *sig;
  asc__compile_opts o;
  asc__compile_out res;
  ASC_CHECK(c, k != NULL);
  sig = asc__sig_parse(c, j->sig);
  ASC_CHECK(c, sig != NULL);
  asc__compile_opts_init(&o);
  o.verify = j->ir != NULL;
  asc__cctx_set_opts(c, &o);
  asc__compile_in in = {.module = m, .kernel = k, .sig = sig,
                        .may_alias = j->may_alias, .stop = ASC_STOP_C};
  if (!asc__compile_kernel(c, &in, &res, j->out))
    asc__cctx_throw(c, ASC_FAIL_ERRORS);
  if (j->ir)
    asc__ir_print_module(j->ir, res.ir);
}

static int py_guarded(asc__cctx *c, const py_job *j) {
  jmp_buf jb;
  c->catch_point = &jb;
  if (setjmp(jb) == 0) {
    py_work(c, j);
    return 0;
  }
  return 1;
}

/* Compiles kernel `name` of Python text for signature sig and loads it.
 * On a compile error returns -1 and leaves the diagnostics in *diag (when
 * not NULL). */
static int load_py_opt(harness_mod *hm, const char *text, const char *name,
                       const char *sig, asc__buf *ir, asc__buf *diag,
                       bool may_alias) {
  asc__cctx c;
  asc__buf out;
  py_job j = {name, sig, &out, ir, may_alias};
  int rc;
  memset(hm, 0, sizeof *hm);
  asc__cctx_init(&c, "kernel.py", text, strlen(text), 1);
  asc__buf_init(&out);
  rc = py_guarded(&c, &j);
  if (rc != 0) {
    if (diag)
      asc__buf_puts(diag, asc__buf_str(&c.diag));
    else
      fprintf(stderr, "%s", asc__buf_str(&c.diag));
    asc__buf_free(&out);
    asc__cctx_free(&c);
    return -1;
  }
  rc = harness_load_c(hm, asc__buf_str(&out));
  asc__buf_free(&out);
  asc__cctx_free(&c);
  return rc;
}

static int load_py(harness_mod *hm, const char *text, const char *name,
                   const char *sig, asc__buf *ir, asc__buf *diag) {
  return load_py_opt(hm, text, name, sig, ir, diag, false);
}

static void test_seed_parallel_add(void **state) {
  char *text = asc__read_file(ASC_SOURCE_DIR "/tests/golden/front/seed_parallel_add.py", NULL);
  harness_mod hm;
  enum { N = 1001 };
  static float a[N], b[N], c[N];
  int64_t shape[1] = {N}, st[1] = {1};
  asc_ktensor ta, tb, tc;
  void *args[3] = {&ta, &tb, &tc};
  asc_kexc exc;
  (void)state;
  assert_non_null(text);
  assert_int_equal(load_py(&hm, text, "parallel_add",
                           "parallel_add(f32[1], f32[1], f32[1])", NULL,
                           NULL),
                   0);
  for (int i = 0; i < N; i++) {
    a[i] = (float)i * 0.25f;
    b[i] = (float)(N - i);
    c[i] = 0;
  }
  ta = harness_tensor(a, ascFloat32, 1, shape, st);
  tb = harness_tensor(b, ascFloat32, 1, shape, st);
  tc = harness_tensor(c, ascFloat32, 1, shape, st);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int i = 0; i < N; i++)
    assert_true(c[i] == a[i] + b[i]);
  harness_unload(&hm);
  free(text);
}

/* In-place: c is a.  With may_alias the data pointers lose restrict. */
static void test_parallel_add_aliased(void **state) {
  char *text = asc__read_file(ASC_SOURCE_DIR "/tests/golden/front/seed_parallel_add.py", NULL);
  char *csrc;
  harness_mod hm;
  enum { N = 100 };
  static float a[N], b[N];
  int64_t shape[1] = {N}, st[1] = {1};
  asc_ktensor ta, tb;
  void *args[3] = {&ta, &tb, &ta};
  asc_kexc exc;
  (void)state;
  assert_int_equal(load_py_opt(&hm, text, "parallel_add",
                               "parallel_add(f32[1], f32[1], f32[1])", NULL,
                               NULL, true),
                   0);
  csrc = asc__read_file(hm.c_path, NULL);
  assert_non_null(csrc);
  assert_null(strstr(csrc, "*restrict d"));
  free(csrc);
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 1.0f;
  }
  ta = harness_tensor(a, ascFloat32, 1, shape, st);
  tb = harness_tensor(b, ascFloat32, 1, shape, st);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int i = 0; i < N; i++)
    assert_true(a[i] == (float)i + 1.0f);
  harness_unload(&hm);
  free(text);
}

/* y[i] = x[i] + 1 with y one element after x in the same buffer: the
 * may_alias specialisation drops restrict and keeps the loop serial, so
 * each iteration reads what the previous one wrote, as Python does (run
 * on real threads, a parallel loop would not give a[k] = a[0] + k). */
static void test_overlap_stays_serial(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def shift(x, y):\n"
      "    for i in range(y.shape[0]):\n"
      "        y[i] = x[i] + 1\n";
  enum { N = 20000 };
  static int64_t a[N + 1];
  int64_t shape[1] = {N}, st[1] = {1};
  asc_ktensor tx, ty;
  void *args[2] = {&tx, &ty};
  asc_kexc exc;
  harness_mod hm;
  char *csrc;
  (void)state;
  assert_int_equal(load_py_opt(&hm, text, "shift", "shift(i64[1], i64[1])",
                               NULL, NULL, true),
                   0);
  csrc = asc__read_file(hm.c_path, NULL);
  assert_non_null(csrc);
  assert_null(strstr(csrc, "restrict"));
  assert_null(strstr(csrc, "parallel_for("));
  free(csrc);
  for (int k = 0; k <= N; k++)
    a[k] = k == 0 ? 5 : -1;
  tx = harness_tensor(a, ascInt64, 1, shape, st);
  ty = harness_tensor(a + 1, ascInt64, 1, shape, st);
  assert_int_equal(harness_call_threaded(&hm, 0, args, &exc), 0);
  for (int k = 0; k <= N; k++)
    assert_int_equal(a[k], 5 + k);
  harness_unload(&hm);
}

static void conv_ref(const float *in, const float *w, float *out, int B,
                     int IC, int H, int W, int OC, int KH, int KW) {
  int OH = H - KH + 1, OW = W - KW + 1;
  for (int b = 0; b < B; b++)
    for (int oc = 0; oc < OC; oc++)
      for (int oh = 0; oh < OH; oh++)
        for (int ow = 0; ow < OW; ow++) {
          double sum = 0.0; /* the kernel's sum is float64 (0.0 literal) */
          for (int ic = 0; ic < IC; ic++)
            for (int kh = 0; kh < KH; kh++)
              for (int kw = 0; kw < KW; kw++)
                sum += (double)(in[((b * IC + ic) * H + oh + kh) * W + ow +
                                   kw] *
                                w[((oc * IC + ic) * KH + kh) * KW + kw]);
          out[((b * OC + oc) * OH + oh) * OW + ow] = (float)sum;
        }
}

static void run_conv(const char *sig, bool strided) {
  char *text = asc__read_file(ASC_SOURCE_DIR "/tests/golden/front/seed_conv2d.py", NULL);
  harness_mod hm;
  enum { B = 2, IC = 3, H = 9, W = 11, OC = 4, KH = 3, KW = 2 };
  enum { OH = H - KH + 1, OW = W - KW + 1 };
  static float in[B * IC * H * W], w[OC * IC * KH * KW];
  static float out[B * OC * OH * OW], ref[B * OC * OH * OW];
  static float wbig[OC * IC * KH * KW * 2];
  int64_t si[4] = {B, IC, H, W}, ssi[4] = {IC * H * W, H * W, W, 1};
  int64_t sw[4] = {OC, IC, KH, KW}, ssw[4] = {IC * KH * KW, KH * KW, KW, 1};
  int64_t so[4] = {B, OC, OH, OW}, sso[4] = {OC * OH * OW, OH * OW, OW, 1};
  asc_ktensor ti, tw, to;
  void *args[3] = {&ti, &tw, &to};
  asc_kexc exc;
  assert_non_null(text);
  assert_int_equal(load_py(&hm, text, "conv2d", sig, NULL, NULL), 0);
  for (int i = 0; i < B * IC * H * W; i++)
    in[i] = (float)((i * 7) % 13) - 6.0f;
  for (int i = 0; i < OC * IC * KH * KW; i++)
    w[i] = (float)((i * 5) % 11) * 0.5f - 2.0f;
  conv_ref(in, w, ref, B, IC, H, W, OC, KH, KW);
  ti = harness_tensor(in, ascFloat32, 4, si, ssi);
  if (strided) {
    /* the weights as every other element of a bigger buffer */
    for (int i = 0; i < OC * IC * KH * KW; i++)
      wbig[2 * i] = w[i];
    for (int k = 0; k < 4; k++)
      ssw[k] *= 2;
    tw = harness_tensor(wbig, ascFloat32, 4, sw, ssw);
  } else {
    tw = harness_tensor(w, ascFloat32, 4, sw, ssw);
  }
  to = harness_tensor(out, ascFloat32, 4, so, sso);
  memset(out, 0, sizeof out);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int i = 0; i < B * OC * OH * OW; i++)
    assert_true(out[i] == ref[i]);
  harness_unload(&hm);
  free(text);
}

static void test_seed_conv2d(void **state) {
  (void)state;
  run_conv("conv2d(f32[4], f32[4], f32[4])", false);
}

static void test_seed_conv2d_strided(void **state) {
  (void)state;
  run_conv("conv2d(f32[4], f32[4:s], f32[4])", true);
}

static void test_constructs(void **state) {
  static const char text[] =
      "import asc\n"
      "TILE = 4\n"
      "\n"
      "@asc.func\n"
      "def clamp(x, lo, hi):\n"
      "    return min(max(x, lo), hi)\n"
      "\n"
      "@asc.kernel\n"
      "def k(a, o, n: asc.ConstExpr[int]):\n"
      "    s = 0\n"
      "    for i in asc.prange(a.shape[0]):\n"
      "        s += a[i] // 3\n"
      "    o[0] = s\n"
      "    j = 0\n"
      "    while j < n:\n"
      "        j += 1\n"
      "        if j == 2:\n"
      "            continue\n"
      "        o[1] += j * TILE\n"
      "    try:\n"
      "        o[2] = a[0] % a[1]\n"
      "    except ValueError:\n"
      "        o[2] = -2\n"
      "    except (IndexError, ArithmeticError) as err:\n"
      "        o[2] = -1\n"
      "    o[3] = clamp(a[2], 0, 5)\n"
      "    buf = asc.local_array((2, 3), asc.int64)\n"
      "    for q in asc.static_range(6):\n"
      "        buf[q // 3, q % 3] = q * q\n"
      "    o[4] = buf[1, 2] + buf[0, 1]\n"
      "    o[5] = 1 if 3 < a[3] <= 10 and not a[1] == 0 else 2\n"
      "    assert a[4] >= 0, 'negative'\n";
  harness_mod hm;
  int64_t a[6] = {7, 0, 9, 5, 1, 0}, o[6];
  int64_t shape_a[1] = {6}, shape_o[1] = {6}, st[1] = {1}, n = 3;
  asc_ktensor ta, to;
  void *args[3] = {&ta, &to, &n};
  asc_kexc exc;
  asc__buf ir;
  (void)state;
  asc__buf_init(&ir);
  assert_int_equal(load_py(&hm, text, "k", "k(i64[1], i64[1], int=3)", &ir,
                           NULL),
                   0);
  ta = harness_tensor(a, ascInt64, 1, shape_a, st);
  to = harness_tensor(o, ascInt64, 1, shape_o, st);
  memset(o, 0, sizeof o);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(o[0], 2 + 0 + 3 + 1 + 0 + 0);
  assert_int_equal(o[1], (1 + 3) * 4);
  assert_int_equal(o[2], -1);
  assert_int_equal(o[3], 5);
  assert_int_equal(o[4], 25 + 1);
  assert_int_equal(o[5], 2);
  a[4] = -1;
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_ASSERTION_ERROR);
  assert_int_equal(exc.line, 32);
  assert_string_equal(exc.msg, "negative");
  harness_unload(&hm);
  asc__buf_free(&ir);
}

static void test_structs_and_tuples(void **state) {
  static const char text[] =
      "import asc\n"
      "class Point:\n"
      "    x: asc.float32\n"
      "    y: asc.float32\n"
      "    tag: asc.int32 = -4\n"
      "\n"
      "@asc.func\n"
      "def norm1(p):\n"
      "    return abs(p.x) + abs(p.y)\n"
      "\n"
      "@asc.kernel\n"
      "def k(a, t):\n"
      "    p = Point(a[0], a[1])\n"
      "    q = Point(1.0, 2.0)\n"
      "    p.x += q.y\n"
      "    shp = t.shape\n"
      "    r, c = shp\n"
      "    a[2] = p.x * p.y + q.tag + norm1(q) + shp[-1] * 10 + r + len(shp)\n";
  harness_mod hm;
  float a[3] = {1.5f, -2.0f, 0};
  int32_t tbuf[6];
  int64_t sa[1] = {3}, st[1] = {1}, s2[2] = {2, 3}, st2[2] = {3, 1};
  asc_ktensor ta, tt;
  void *args[2] = {&ta, &tt};
  asc_kexc exc;
  (void)state;
  assert_int_equal(load_py(&hm, text, "k", "k(f32[1], i32[2])", NULL, NULL),
                   0);
  ta = harness_tensor(a, ascFloat32, 1, sa, st);
  tt = harness_tensor(tbuf, ascInt32, 2, s2, st2);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  /* (1.5+2)*-2 + -4 + 3 + 30 + 2 + 2 */
  assert_true(a[2] == -7.0f - 4 + 3 + 30 + 2 + 2);
  harness_unload(&hm);
}

static void test_boundscheck(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel(boundscheck=True)\n"
      "def k(a, i: asc.int64):\n"
      "    a[i] = a[-1] + 1.0\n";
  harness_mod hm;
  float a[4] = {0, 0, 0, 5};
  int64_t i, sa[1] = {4}, st[1] = {1};
  asc_ktensor ta;
  void *args[2] = {&ta, &i};
  asc_kexc exc;
  (void)state;
  assert_int_equal(load_py(&hm, text, "k", "k(f32[1], i64)", NULL, NULL), 0);
  ta = harness_tensor(a, ascFloat32, 1, sa, st);
  i = 1;
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_true(a[1] == 6.0f);
  i = 4;
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_INDEX_ERROR);
  assert_int_equal(exc.line, 4);
  i = -1; /* a run-time negative index counts from the end, as in numpy */
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_true(a[3] == 6.0f);
  i = -5; /* still out of range after wrapping */
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_INDEX_ERROR);
  assert_string_equal(exc.msg, "index -5 is out of bounds for axis 0 with size 4");
  harness_unload(&hm);
}

static void test_shared_barrier_atomics(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def k(a, f):\n"
      "    buf = asc.shared_array((2, 3), asc.int32)\n"
      "    buf[1, 2] = asc.int32(asc.get_block_idx() + 7)\n"
      "    asc.barrier()\n"
      "    a[0] = buf[1, 2]\n"
      "    for i in asc.prange(10):\n"
      "        asc.atomic_add(a, 1, 2)\n"
      "        asc.atomic_max(f, 0, asc.float32(i) * 0.5)\n"
      "    with asc.critical():\n"
      "        a[2] += 1\n";
  harness_mod hm;
  int32_t a[3] = {0, 0, 0};
  float f[1] = {-1.0f};
  int64_t sa[1] = {3}, sf[1] = {1}, st[1] = {1};
  asc_ktensor ta, tf;
  void *args[2] = {&ta, &tf};
  asc_kexc exc;
  (void)state;
  assert_int_equal(load_py(&hm, text, "k", "k(i32[1], f32[1])", NULL, NULL),
                   0);
  assert_int_equal(hm.desc->kernels[0].flags, ASC_KERNEL_USES_BARRIER);
  assert_int_equal(hm.desc->kernels[0].shared_bytes, 64);
  ta = harness_tensor(a, ascInt32, 1, sa, st);
  tf = harness_tensor(f, ascFloat32, 1, sf, st);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(a[0], 7);
  assert_int_equal(a[1], 20);
  assert_int_equal(a[2], 1);
  assert_true(f[0] == 4.5f);
  assert_int_equal(harness_crit_depth, 0);
  harness_unload(&hm);
}

/* Three parallel loops (one asked for, two found by the parallelize pass)
 * reuse the same loop and temporary variables: each gets private copies. */
static void test_loops_share_names(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def k(a, b):\n"
      "    for i in asc.prange(a.shape[0]):\n"
      "        t = a[i] * 2\n"
      "        b[i] = t\n"
      "    for i in range(a.shape[0]):\n"
      "        t = b[i] + 1\n"
      "        a[i] = t\n"
      "    for i in range(a.shape[0] - 2):\n"
      "        b[i] = b[i] + a[i]\n";
  harness_mod hm;
  asc__buf ir;
  int64_t a[5] = {1, 2, 3, 4, 5}, b[5];
  int64_t sa[1] = {5}, st[1] = {1};
  asc_ktensor ta, tb;
  void *args[2] = {&ta, &tb};
  asc_kexc exc;
  (void)state;
  asc__buf_init(&ir);
  assert_int_equal(load_py(&hm, text, "k", "k(i64[1], i64[1])", &ir, NULL),
                   0);
  /* the three loops run in parallel */
  {
    int n = 0;
    for (const char *p = asc__buf_str(&ir); (p = strstr(p, "pfor ")); p++)
      n++;
    assert_int_equal(n, 3);
  }
  ta = harness_tensor(a, ascInt64, 1, sa, st);
  tb = harness_tensor(b, ascInt64, 1, sa, st);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  for (int i = 0; i < 5; i++) {
    int64_t bi = 2 * (i + 1), ai = bi + 1;
    assert_int_equal(a[i], ai);
    assert_int_equal(b[i], i < 3 ? bi + ai : bi);
  }
  harness_unload(&hm);
  asc__buf_free(&ir);
}

/* A loop variable keeps its last value after the loop (Python scoping),
 * also when the loop is the inner of two with the same target, and a
 * temporary the body assigns is still seen after the loop. */
static void test_loop_values_after(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def k(a, out):\n"
      "    j = 0\n"
      "    t = 0\n"
      "    for j in range(a.shape[0]):\n"
      "        t = a[j] * 2\n"
      "        a[j] = t\n"
      "    out[0] = j\n"
      "    out[1] = t\n"
      "    for i in range(3):\n"
      "        for i in range(a.shape[0] - 1):\n"
      "            a[i] = a[i] + 1\n"
      "        out[2] = i\n"
      "    for j in range(2):\n"
      "        out[3] = out[3] + j\n";
  harness_mod hm;
  int64_t a[5] = {1, 2, 3, 4, 5}, out[4] = {0, 0, 0, 0};
  int64_t sa[1] = {5}, so[1] = {4}, st[1] = {1};
  asc_ktensor ta, to;
  void *args[2] = {&ta, &to};
  asc_kexc exc;
  (void)state;
  assert_int_equal(load_py(&hm, text, "k", "k(i64[1], i64[1])", NULL, NULL),
                   0);
  ta = harness_tensor(a, ascInt64, 1, sa, st);
  to = harness_tensor(out, ascInt64, 1, so, st);
  assert_int_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(out[0], 4);
  assert_int_equal(out[1], 10);
  assert_int_equal(out[2], 3);
  assert_int_equal(out[3], 1);
  for (int i = 0; i < 5; i++)
    assert_int_equal(a[i], 2 * (i + 1) + (i < 4 ? 3 : 0));
  harness_unload(&hm);
}

/* ConstExpr parameters are marked in the emitted parameter table, and the
 * runtime reports them through ascKernelGetInfo. */
static void test_constexpr_param_table(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def scale(x, y, k: asc.ConstExpr[int], s: asc.float32, n,\n"
      "          m: asc.ConstExpr):\n"
      "    for i in range(x.shape[0]):\n"
      "        y[i] = x[i] * k + s + n + m\n";
  harness_mod hm;
  const asc_kparam *p;
  ascModule_t m;
  ascKernel_t k;
  ascKernelInfo info;
  (void)state;
  assert_int_equal(load_py(&hm, text, "scale",
                           "scale(f32[1], f32[1], i64=3, f32, float, int=2)",
                           NULL, NULL),
                   0);
  p = hm.desc->kernels[0].params;
  assert_int_equal(hm.desc->kernels[0].nparams, 6);
  assert_int_equal(p[0].flags, ASC_KPARAM_TENSOR);
  assert_int_equal(p[2].flags, ASC_KPARAM_CONSTEXPR);
  assert_int_equal(p[2].dtype, ascInt64);
  assert_int_equal(p[3].flags, 0);
  assert_int_equal(p[4].flags, ASC_KPARAM_GENERIC);
  /* a bare asc.ConstExpr is passed as an asc_kscalar, as params.c says */
  assert_int_equal(p[5].flags, ASC_KPARAM_GENERIC | ASC_KPARAM_CONSTEXPR);
  assert_int_equal(ascModuleLoad(&m, hm.so_path), ascSuccess);
  assert_int_equal(ascModuleGetKernel(&k, m, "scale"), ascSuccess);
  assert_int_equal(ascKernelGetInfo(&info, k), ascSuccess);
  assert_int_equal(info.numParams, 6);
  assert_int_equal(info.params[2].isConstExpr, 1);
  assert_int_equal(info.params[2].isTensor, 0);
  assert_int_equal(info.params[2].dtype, ascInt64);
  assert_int_equal(info.params[0].isConstExpr, 0);
  assert_int_equal(info.params[3].isConstExpr, 0);
  assert_int_equal(info.params[4].isConstExpr, 0);
  assert_int_equal(info.params[5].isConstExpr, 1);
  assert_int_equal(info.params[5].generic, 1);
  assert_int_equal(ascModuleUnload(m), ascSuccess);
  harness_unload(&hm);
}

static void test_reraise(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def k(a, d: asc.int64):\n"
      "    try:\n"
      "        a[0] = a[0] // d\n"
      "    except ZeroDivisionError:\n"
      "        a[1] = 1\n"
      "        raise\n";
  harness_mod hm;
  int64_t a[2] = {10, 0}, d = 0, sa[1] = {2}, st[1] = {1};
  asc_ktensor ta;
  void *args[2] = {&ta, &d};
  asc_kexc exc;
  (void)state;
  assert_int_equal(load_py(&hm, text, "k", "k(i64[1], i64)", NULL, NULL), 0);
  ta = harness_tensor(a, ascInt64, 1, sa, st);
  assert_int_not_equal(harness_call(&hm, 0, args, &exc), 0);
  assert_int_equal(exc.kind, ASC_KEXC_ZERO_DIVISION_ERROR);
  assert_int_equal(exc.line, 5);
  assert_string_equal(exc.msg, "integer division or modulo by zero");
  assert_int_equal(a[1], 1);
  harness_unload(&hm);
}

static void test_unsupported_is_diagnosed(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def k(a):\n"
      "    s = 0.0\n"
      "    for i in asc.prange(a.shape[0]):\n"
      "        s = a[i]\n"
      "    a[0] = s\n";
  harness_mod hm;
  asc__buf diag;
  (void)state;
  asc__buf_init(&diag);
  assert_int_equal(load_py(&hm, text, "k", "k(f32[1])", NULL, &diag), -1);
  assert_non_null(strstr(asc__buf_str(&diag), "kernel.py:6:9: error:"));
  assert_non_null(strstr(asc__buf_str(&diag), "only reductions"));
  asc__buf_free(&diag);
  {
    static const char big[] =
        "import asc\n"
        "@asc.kernel\n"
        "def k(a):\n"
        "    t = asc.local_array((1024, 1024), asc.float32)\n"
        "    t[0, 0] = a[0]\n"
        "    a[1] = t[0, 0]\n";
    asc__buf_init(&diag);
    assert_int_equal(load_py(&hm, big, "k", "k(f32[1])", NULL, &diag), -1);
    assert_non_null(strstr(asc__buf_str(&diag), "kernel.py:4:9: error: "
                                                "local_array of 4194304 "
                                                "bytes is too large"));
    asc__buf_free(&diag);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seed_parallel_add),
      cmocka_unit_test(test_parallel_add_aliased),
      cmocka_unit_test(test_overlap_stays_serial),
      cmocka_unit_test(test_seed_conv2d),
      cmocka_unit_test(test_seed_conv2d_strided),
      cmocka_unit_test(test_constructs),
      cmocka_unit_test(test_structs_and_tuples),
      cmocka_unit_test(test_boundscheck),
      cmocka_unit_test(test_shared_barrier_atomics),
      cmocka_unit_test(test_loops_share_names),
      cmocka_unit_test(test_loop_values_after),
      cmocka_unit_test(test_constexpr_param_table),
      cmocka_unit_test(test_reraise),
      cmocka_unit_test(test_unsupported_is_diagnosed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
