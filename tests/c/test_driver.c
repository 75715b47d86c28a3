/* The driver's specialisation machinery: signatures from launch
 * arguments, one compile per signature, disk-cache reuse across modules,
 * argument errors naming the parameter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "abi_prelude.h"
#include "jit/cache.h"
#include "jit/cc.h"
#include "jit/driver.h"
#include "runtime/runtime.h"

#define JIT_FIXTURE_NAME "driver"
#include "jit_fixture.h"

static const char text[] =
    "@asc.kernel\n"
    "def scale(out, x, n: asc.ConstExpr[int]):\n"
    "    out[0] = x * n\n";

static const ascKernelParamInfo scale_params[] = {
    {.name = "out", .isTensor = 1, .dtype = ascDataTypeCount, .ndim = -1, .generic = 1, .isConstExpr = 0, .isWritten = 1},
    {.name = "x", .isTensor = 0, .dtype = ascDataTypeCount, .ndim = -1, .generic = 1, .isConstExpr = 0, .isWritten = 0},
    {.name = "n", .isTensor = 0, .dtype = ascInt64, .ndim = -1, .generic = 0, .isConstExpr = 1, .isWritten = 0},
};
static const ascKernelInfo kernels[] = {{.name = "scale", .numParams = 3, .params = scale_params}};

typedef struct stages_state {
  atomic_int calls;
  ascError_t fail;
  unsigned delay_ms;
  char last_sig[256];
} stages_state;

/* Emits a kernel that stores into out[0] (as int64) the number of the
 * compile that produced it, so tests can tell specialisations apart. */
static ascError_t stages(void *ud, asc__pymodule *m, int kernel,
                         const asc__spec_req *r, asc__buf *out,
                         unsigned *fastmath) {
  stages_state *s = ud;
  ascKernelInfo info;
  int n = atomic_fetch_add(&s->calls, 1) + 1;

  ASC_UNUSED(fastmath);
  snprintf(s->last_sig, sizeof s->last_sig, "%s", r->text);
  if (s->delay_ms)
    uv_sleep(s->delay_ms);
  if (s->fail != ascSuccess)
    return asc__error(s->fail, "k.py:2:5: error: cannot multiply");
  assert_int_equal(asc__pymodule_kernel_info(m, kernel, &info), ascSuccess);
  asc__buf_puts(out, asc__abi_prelude);
  asc__buf_printf(
      out,
      "static int entry(asc_kctx *ctx, void *const *args, asc_kexc *e) {\n"
      "  (void)ctx; (void)e;\n"
      "  *(int64_t *)((asc_ktensor *)args[0])->data = %d;\n"
      "  return 0;\n"
      "}\n"
      "static const asc_kparam params[] = {{\"out\", 3, 0, -1},\n"
      "  {\"x\", 2, 0, -1}, {\"n\", 4, 4, -1}};\n"
      "static const asc_kernel_desc kernels[] = {\n"
      "  {\"%s\", entry, 3, params, 0, 0, \"k.py\"}};\n"
      "const asc_module_desc asc_module_v1 = {ASC_KABI_VERSION, 1, "
      "kernels};\n",
      n, info.name);
  return ascSuccess;
}

typedef struct launch {
  ascTensor out;
  int64_t result;
  ascScalar x;
  int64_t n;
  void *args[3];
} launch;

static void launch_init(launch *l, ascDataType dt, int64_t n) {
  memset(l, 0, sizeof *l);
  l->out.data = &l->result;
  l->out.dtype = dt;
  l->out.ndim = 1;
  l->out.shape[0] = 1;
  l->out.strides[0] = 1;
  l->x.dtype = ascInt64;
  l->x.weak = 1;
  l->x.value.i = 2;
  l->n = n;
  l->args[0] = &l->out;
  l->args[1] = &l->x;
  l->args[2] = &l->n;
}

static int64_t run(const asc_kernel_desc *d, launch *l) {
  asc_kctx ctx;
  asc_kexc exc;
  memset(&ctx, 0, sizeof ctx);
  l->result = -1;
  assert_int_equal(d->entry(&ctx, l->args, &exc), 0);
  return l->result;
}

static void test_specialize_once_per_signature(void **state) {
  asc__cache *c = new_cache();
  stages_state s = {0};
  asc__pymodule *m;
  const asc_kernel_desc *d;
  launch l;
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             kernels, 1, stages, &s, c),
                   ascSuccess);
  assert_int_equal(asc__pymodule_nkernels(m), 1);
  launch_init(&l, ascInt64, 3);
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[1], int, i64=3)");
  assert_int_equal(run(d, &l), 1);
  /* Same signature, other values and pointers: no compile. */
  launch_init(&l, ascInt64, 3);
  l.x.value.i = 100;
  l.out.shape[0] = 1;
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d), ascSuccess);
  assert_int_equal(atomic_load(&s.calls), 1);
  /* Each part of the signature makes a new one. */
  launch_init(&l, ascFloat64, 3);
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d), ascSuccess);
  assert_int_equal(atomic_load(&s.calls), 2);
  launch_init(&l, ascInt64, 4);
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[1], int, i64=4)");
  assert_int_equal(atomic_load(&s.calls), 3);
  launch_init(&l, ascInt64, 3);
  l.x.weak = 0;
  l.x.dtype = ascInt32;
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[1], i32, i64=3)");
  launch_init(&l, ascInt64, 3);
  l.out.ndim = 2;
  l.out.shape[0] = 2;
  l.out.shape[1] = 2;
  l.out.strides[0] = 1;
  l.out.strides[1] = 2;
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[2:s], int, i64=3)");
  assert_int_equal(atomic_load(&s.calls), 5);
  asc__pymodule_destroy(m);

  /* A new module (a new process, as far as the table knows) finds every
   * specialisation in the disk cache. */
  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             kernels, 1, stages, &s, c),
                   ascSuccess);
  launch_init(&l, ascInt64, 4);
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d), ascSuccess);
  assert_int_equal(run(d, &l), 3);
  assert_int_equal(atomic_load(&s.calls), 5);
  asc__pymodule_destroy(m);
  asc__cache_close(c);
}

/* A generic ConstExpr's value is part of the signature, read from the
 * descriptor by its dtype (a float32 constant is stored in value.f). */
static void test_generic_constexpr_values(void **state) {
  static const ascKernelParamInfo ps[] = {
      {.name = "out", .isTensor = 1, .dtype = ascDataTypeCount, .ndim = -1, .generic = 1, .isConstExpr = 0, .isWritten = 1},
      {.name = "c", .isTensor = 0, .dtype = ascDataTypeCount, .ndim = -1, .generic = 1, .isConstExpr = 1, .isWritten = 0}};
  static const ascKernelInfo ks[] = {{.name = "scale", .numParams = 2, .params = ps}};
  asc__cache *c = new_cache();
  stages_state s = {0};
  asc__pymodule *m;
  const asc_kernel_desc *d;
  int64_t r = 0;
  ascTensor out;
  ascScalar v;
  void *args[2] = {&out, &v};
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             ks, 1, stages, &s, c),
                   ascSuccess);
  memset(&out, 0, sizeof out);
  out.data = &r;
  out.dtype = ascInt64;
  out.ndim = 1;
  out.shape[0] = 1;
  out.strides[0] = 1;
  memset(&v, 0, sizeof v);
  v.dtype = ascFloat32;
  v.value.f = 1.5;
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[1], f32=0x1.8p+0)");
  v.value.f = 2.5;
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d), ascSuccess);
  v.value.f = 1.5;
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d), ascSuccess);
  v.dtype = ascUInt8;
  v.value.u = 200;
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[1], u8=200)");
  v.dtype = ascInt8;
  v.value.i = -3;
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[1], i8=-3)");
  assert_int_equal(atomic_load(&s.calls), 4);
  asc__pymodule_destroy(m);
  asc__cache_close(c);
}

/* Tensor arguments that share memory get their own specialisation. */
static void test_aliased_tensors(void **state) {
  static const ascKernelParamInfo ps[] = {
      {.name = "a", .isTensor = 1, .dtype = ascDataTypeCount, .ndim = -1, .generic = 1, .isConstExpr = 0, .isWritten = 1},
      {.name = "b", .isTensor = 1, .dtype = ascDataTypeCount, .ndim = -1, .generic = 1, .isConstExpr = 0, .isWritten = 1}};
  static const ascKernelInfo ks[] = {{.name = "scale", .numParams = 2, .params = ps}};
  asc__cache *c = new_cache();
  stages_state s = {0};
  asc__pymodule *m;
  const asc_kernel_desc *d;
  int64_t buf[8] = {0};
  ascTensor a, b;
  void *args[2] = {&a, &b};
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             ks, 1, stages, &s, c),
                   ascSuccess);
  memset(&a, 0, sizeof a);
  a.data = buf;
  a.dtype = ascInt64;
  a.ndim = 1;
  a.shape[0] = 4;
  a.strides[0] = 1;
  b = a;
  b.data = buf + 4;  /* disjoint halves */
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[1], i64[1])");
  b.data = buf + 3;  /* one element shared */
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d), ascSuccess);
  assert_string_equal(s.last_sig, "scale(i64[1], i64[1]) aliased");
  b.data = buf + 6;  /* reversed view ending inside a */
  b.strides[0] = -1;
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d), ascSuccess);
  assert_int_equal(atomic_load(&s.calls), 3);
  asc__pymodule_destroy(m);
  asc__cache_close(c);
}

static void test_argument_errors(void **state) {
  asc__cache *c = new_cache();
  stages_state s = {0};
  asc__pymodule *m;
  const asc_kernel_desc *d = (const asc_kernel_desc *)1;
  launch l;
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             kernels, 1, stages, &s, c),
                   ascSuccess);
  /* The arguments themselves are the launch's to check (test_launch.c);
   * the driver checks its own handles. */
  launch_init(&l, ascInt64, 3);
  assert_int_equal(asc__pymodule_specialize(m, 1, l.args, &d),
                   ascErrorInvalidKernel);
  assert_null(d);
  assert_int_equal(asc__pymodule_specialize(NULL, 0, l.args, &d),
                   ascErrorInvalidHandle);
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, NULL),
                   ascErrorInvalidValue);
  assert_int_equal(atomic_load(&s.calls), 0);
  asc__pymodule_destroy(m);
  asc__pymodule_destroy(NULL);
  asc__cache_close(c);
}

static void test_compile_error_remembered(void **state) {
  asc__cache *c = new_cache();
  stages_state s = {.fail = ascErrorCompile};
  asc__pymodule *m;
  const asc_kernel_desc *d;
  launch l;
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             kernels, 1, stages, &s, c),
                   ascSuccess);
  launch_init(&l, ascInt64, 3);
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d),
                   ascErrorCompile);
  assert_non_null(strstr(ascGetLastErrorMessage(), "cannot multiply"));
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d),
                   ascErrorCompile);
  assert_non_null(strstr(ascGetLastErrorMessage(), "cannot multiply"));
  assert_int_equal(atomic_load(&s.calls), 1);
  asc__pymodule_destroy(m);
  asc__cache_close(c);
}

typedef struct thread_arg {
  asc__pymodule *m;
  ascError_t err;
  int64_t result;
} thread_arg;

static void spec_thread(void *p) {
  thread_arg *a = p;
  const asc_kernel_desc *d;
  launch l;
  launch_init(&l, ascInt32, 7);
  a->err = asc__pymodule_specialize(a->m, 0, l.args, &d);
  if (a->err == ascSuccess)
    a->result = run(d, &l);
}

static void test_threads_compile_once(void **state) {
  asc__cache *c = new_cache();
  stages_state s = {.delay_ms = 100};
  asc__pymodule *m;
  thread_arg a[6];
  uv_thread_t t[6];
  int i;
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             kernels, 1, stages, &s, c),
                   ascSuccess);
  for (i = 0; i < 6; i++) {
    a[i].m = m;
    assert_int_equal(uv_thread_create(&t[i], spec_thread, &a[i]), 0);
  }
  for (i = 0; i < 6; i++) {
    uv_thread_join(&t[i]);
    assert_int_equal(a[i].err, ascSuccess);
    assert_int_equal(a[i].result, 1);
  }
  assert_int_equal(atomic_load(&s.calls), 1);
  asc__pymodule_destroy(m);
  asc__cache_close(c);
}

static bool fail_all(size_t size, void *ud) {
  ASC_UNUSED(size);
  ASC_UNUSED(ud);
  return true;
}

static void test_out_of_memory(void **state) {
  asc__cache *c = new_cache();
  stages_state s = {0};
  asc__pymodule *m = NULL;
  const asc_kernel_desc *d;
  launch l;
  ascError_t e;
  ASC_UNUSED(state);

  asc__set_alloc_fail_hook(fail_all, NULL);
  e = asc__pymodule_create_with(&m, text, sizeof text - 1, NULL, kernels, 1,
                                stages, &s, c);
  asc__set_alloc_fail_hook(NULL, NULL);
  assert_int_equal(e, ascErrorOutOfMemory);
  assert_null(m);
  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             kernels, 1, stages, &s, c),
                   ascSuccess);
  launch_init(&l, ascInt64, 3);
  asc__set_alloc_fail_hook(fail_all, NULL);
  e = asc__pymodule_specialize(m, 0, l.args, &d);
  asc__set_alloc_fail_hook(NULL, NULL);
  assert_int_equal(e, ascErrorOutOfMemory);
  /* Not remembered: the next launch compiles. */
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d), ascSuccess);
  assert_int_equal(run(d, &l), 1);
  asc__pymodule_destroy(m);
  asc__cache_close(c);
}

static const ascKernelParamInfo *param(const asc__pymodule *m, int k,
                                       int i) {
  ascKernelInfo info;
  assert_int_equal(asc__pymodule_kernel_info(m, k, &info), ascSuccess);
  assert_true(i < info.numParams);
  return &info.params[i];
}

/* The kernel table comes from the source: annotations, and for
 * unannotated parameters how the kernel uses them. */
static void test_create_from_source(void **state) {
  static const char src[] =
      "import asc\n"
      "\n"
      "@asc.func\n"
      "def first(t):\n"
      "    return t[0]\n"
      "\n"
      "@asc.kernel\n"
      "def k(a, b, c, d, e, s, f: asc.float32, g: int,\n"
      "      n: asc.ConstExpr[int], h: asc.ConstExpr,\n"
      "      t: asc.Tensor[asc.float64, 2]):\n"
      "    x = first(a)\n"
      "    m = b.shape[0]\n"
      "    asc.parallel_for(m, lambda i: c[i] = x)\n"
      "    def body(i):\n"
      "        d[i] = s\n"
      "    asc.parallel_for(e.ndim, body)\n"
      "\n"
      "@asc.kernel\n"
      "def second(hist, v, w):\n"
      "    asc.atomic_add(hist, v, 1)\n"
      "    n = len(w)\n";
  asc__pymodule *m;
  ascKernelInfo info;
  const ascKernelParamInfo *p;
  int i;
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create(&m, src, sizeof src - 1, NULL),
                   ascSuccess);
  assert_int_equal(asc__pymodule_nkernels(m), 2);
  assert_int_equal(asc__pymodule_kernel_info(m, 0, &info), ascSuccess);
  assert_string_equal(info.name, "k");
  assert_int_equal(info.numParams, 11);
  for (i = 0; i < 5; i++) { /* a..e: tensors, each used another way */
    p = param(m, 0, i);
    assert_int_equal(p->isTensor, 1);
    assert_int_equal(p->generic, 1);
  }
  p = param(m, 0, 5); /* s: a scalar */
  assert_string_equal(p->name, "s");
  assert_int_equal(p->isTensor, 0);
  assert_int_equal(p->generic, 1);
  p = param(m, 0, 6);
  assert_int_equal(p->isTensor, 0);
  assert_int_equal(p->generic, 0);
  assert_int_equal(p->dtype, ascFloat32);
  p = param(m, 0, 7);
  assert_int_equal(p->dtype, ascInt64);
  assert_int_equal(p->generic, 0);
  p = param(m, 0, 8);
  assert_int_equal(p->isConstExpr, 1);
  assert_int_equal(p->dtype, ascInt64);
  assert_int_equal(p->generic, 0);
  p = param(m, 0, 9);
  assert_int_equal(p->isConstExpr, 1);
  assert_int_equal(p->generic, 1);
  p = param(m, 0, 10);
  assert_int_equal(p->isTensor, 1);
  assert_int_equal(p->generic, 0);
  assert_int_equal(p->dtype, ascFloat64);
  assert_int_equal(p->ndim, 2);
  assert_int_equal(asc__pymodule_kernel_info(m, 1, &info), ascSuccess);
  assert_string_equal(info.name, "second");
  assert_int_equal(info.numParams, 3);
  assert_int_equal(param(m, 1, 0)->isTensor, 1); /* atomic's array */
  assert_int_equal(param(m, 1, 1)->isTensor, 0); /* index */
  assert_int_equal(param(m, 1, 2)->isTensor, 1); /* len() */
  asc__pymodule_destroy(m);
}

static void test_create_reports_compile_errors(void **state) {
  static const char bad[] = "import asc\n\n@asc.kernel\ndef k(a):\n"
                            "    a[0] = = 1\n";
  ascCompileOptions o;
  asc__pymodule *m = (asc__pymodule *)1;
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create(&m, bad, sizeof bad - 1, NULL),
                   ascErrorCompile);
  assert_null(m);
  assert_non_null(strstr(ascGetLastErrorMessage(), "<string>:5:"));
  memset(&o, 0, sizeof o);
  o.filename = "kern.py";
  o.firstLine = 100;
  assert_int_equal(asc__pymodule_create(&m, bad, sizeof bad - 1, &o),
                   ascErrorCompile);
  assert_non_null(strstr(ascGetLastErrorMessage(), "kern.py:104:"));
  assert_int_equal(asc__pymodule_create(NULL, bad, 1, NULL),
                   ascErrorInvalidValue);
  /* A parameter annotation the language does not know. */
  {
    static const char ann[] = "import asc\n@asc.kernel\n"
                              "def k(a: asc.Tensor[asc.float32]):\n"
                              "    a[0] = 1.0\n";
    assert_int_equal(asc__pymodule_create(&m, ann, sizeof ann - 1, NULL),
                     ascErrorCompile);
    assert_non_null(strstr(ascGetLastErrorMessage(), "<string>:3:"));
  }
}

/* Launch arguments are type-checked per signature; type errors are
 * compile errors with the source position; a well-typed one compiles. */
static void test_specialize_types(void **state) {
  static const char src[] = "import asc\n\n\n@asc.kernel\ndef k(a):\n"
                            "    n = a.shape[0]\n    x = a[0]\n"
                            "    n = x\n";
  asc__pymodule *m;
  const asc_kernel_desc *d;
  ascTensor t;
  int64_t i64 = 0;
  float f32 = 0;
  void *args[1] = {&t};
  ascError_t e;
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create(&m, src, sizeof src - 1, NULL),
                   ascSuccess);
  memset(&t, 0, sizeof t);
  t.data = &f32;
  t.dtype = ascFloat32;
  t.ndim = 1;
  t.shape[0] = 1;
  t.strides[0] = 1;
  assert_int_equal(asc__pymodule_specialize(m, 0, args, &d),
                   ascErrorCompile);
  assert_non_null(strstr(ascGetLastErrorMessage(),
                         "8:9: error: cannot assign float32 to 'n'"));
  /* int64 elements make it well typed. */
  t.data = &i64;
  t.dtype = ascInt64;
  e = asc__pymodule_specialize(m, 0, args, &d);
  assert_int_equal(e, ascSuccess);
  assert_string_equal(d->name, "k");
  asc__pymodule_destroy(m);
}

typedef struct type_thread {
  asc__pymodule *m;
  ascDataType dt;
  ascError_t err;
} type_thread;

static void typing_thread(void *p) {
  type_thread *a = p;
  const asc_kernel_desc *d;
  double buf[4] = {0};
  ascTensor t;
  void *args[2] = {&t, &t};
  memset(&t, 0, sizeof t);
  t.data = buf;
  t.dtype = a->dt;
  t.ndim = 1;
  t.shape[0] = 1;
  t.strides[0] = 1;
  a->err = asc__pymodule_specialize(a->m, 0, args, &d);
}

/* Different signatures of one module are compiled at the same time, each
 * in its own context (run under TSan to see that nothing is shared). */
static void test_concurrent_typing(void **state) {
  static const char src[] = "import asc\n@asc.kernel\ndef k(a, b):\n"
                            "    for i in asc.prange(a.shape[0]):\n"
                            "        a[i] = a[i] + b[i]\n";
  static const ascDataType dts[] = {ascFloat32, ascFloat64, ascInt32,
                                    ascInt64,   ascInt16,   ascUInt8};
  asc__pymodule *m;
  type_thread a[6];
  uv_thread_t t[6];
  int i;
  ASC_UNUSED(state);

  assert_int_equal(asc__pymodule_create(&m, src, sizeof src - 1, NULL),
                   ascSuccess);
  for (i = 0; i < 6; i++) {
    a[i].m = m;
    a[i].dt = dts[i];
    assert_int_equal(uv_thread_create(&t[i], typing_thread, &a[i]), 0);
  }
  for (i = 0; i < 6; i++) {
    uv_thread_join(&t[i]);
    assert_int_equal(a[i].err, ascSuccess);
  }
  asc__pymodule_destroy(m);
}

/* Maps of this process whose path contains dir. */
static int maps_under(const char *dir) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[8192];
  int n = 0;
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (strstr(line, dir) != NULL)
      n++;
  fclose(f);
  return n;
}

/* Far more specialisations than ASC_MAX_LOADED_SPECIALIZATIONS: at most
 * the limit stay loaded (counted by the table and in /proc/self/maps),
 * every result stays right, an evicted one comes back from the disk cache
 * without a compile, and when everything loaded is pinned or has launches
 * queued a new one fails with a clear error instead of unloading them. */
static void test_loaded_specialisations_bounded(void **state) {
  enum { LIMIT = 8, N = 40 };
  asc__cache *c = new_cache();
  asc__cache_stats cs;
  stages_state s = {0};
  asc__pymodule *m;
  const asc_kernel_desc *d, *held[LIMIT];
  asc__inflight *inf, *held_inf[LIMIT];
  struct asc__spec *pin, *pins[LIMIT];
  int64_t first[N], held_value[LIMIT];
  uint64_t evictions, builds, hits;
  launch l;
  int i, maps;
  ASC_UNUSED(state);

  setenv("ASC_MAX_LOADED_SPECIALIZATIONS", "8", 1);
  assert_int_equal(asc__pymodule_create_with(&m, text, sizeof text - 1, NULL,
                                             kernels, 1, stages, &s, c),
                   ascSuccess);
  unsetenv("ASC_MAX_LOADED_SPECIALIZATIONS");
  for (i = 0; i < N; i++) {
    launch_init(&l, ascInt64, i);
    assert_int_equal(
        asc__pymodule_specialize_pin(m, 0, l.args, 0, &d, &inf, &pin),
        ascSuccess);
    first[i] = run(d, &l);
    assert_int_equal(first[i], i + 1);
    asc__pymodule_unpin(pin);
    assert_in_range(asc__pymodule_loaded(m, NULL), 1, LIMIT);
  }
  assert_int_equal(asc__pymodule_loaded(m, &evictions), LIMIT);
  assert_int_equal(evictions, N - LIMIT);
  assert_int_equal(atomic_load(&s.calls), N);
  assert_int_equal(asc__cache_get_stats(c, &cs), ascSuccess);
  maps = maps_under(cs.dir);
  print_message("%d specialisations, %zu loaded, %d maps under the cache\n",
                N, asc__pymodule_loaded(m, NULL), maps);
  assert_in_range(maps, 1, LIMIT * 6);
  builds = cs.builds;
  hits = cs.hits;

  /* Each one again, oldest first: every one was evicted by then, and
   * comes back from disk with its first code. */
  for (i = 0; i < N; i++) {
    launch_init(&l, ascInt64, i);
    assert_int_equal(
        asc__pymodule_specialize_pin(m, 0, l.args, 0, &d, &inf, &pin),
        ascSuccess);
    assert_int_equal(run(d, &l), first[i]);
    asc__pymodule_unpin(pin);
  }
  assert_int_equal(atomic_load(&s.calls), N);
  assert_int_equal(asc__cache_get_stats(c, &cs), ascSuccess);
  assert_int_equal(cs.builds, builds);
  assert_int_equal(cs.hits, hits + N);
  assert_int_equal(asc__pymodule_loaded(m, NULL), LIMIT);

  /* Everything in use: LIMIT pinned, then one more is refused. */
  for (i = 0; i < LIMIT; i++) {
    launch_init(&l, ascInt64, 100 + i);
    assert_int_equal(asc__pymodule_specialize_pin(m, 0, l.args, 0, &held[i],
                                                  &held_inf[i], &pins[i]),
                     ascSuccess);
    held_value[i] = run(held[i], &l);
  }
  launch_init(&l, ascInt64, 200);
  assert_int_equal(
      asc__pymodule_specialize_pin(m, 0, l.args, 0, &d, &inf, &pin),
      ascErrorLaunchFailure);
  assert_non_null(
      strstr(ascGetLastErrorMessage(), "ASC_MAX_LOADED_SPECIALIZATIONS"));
  /* A queued launch (counted as stream.c does) keeps one loaded after its
   * pin has gone. */
  atomic_fetch_add(&held_inf[0]->launched, 1);
  asc__pymodule_unpin(pins[0]);
  assert_int_equal(
      asc__pymodule_specialize_pin(m, 0, l.args, 0, &d, &inf, &pin),
      ascErrorLaunchFailure);
  for (i = 0; i < LIMIT; i++) {
    launch_init(&l, ascInt64, 100 + i);
    assert_int_equal(run(held[i], &l), held_value[i]);
  }
  /* The launch has run: now the new one takes its place. */
  atomic_fetch_add(&held_inf[0]->retired, 1);
  launch_init(&l, ascInt64, 200);
  assert_int_equal(
      asc__pymodule_specialize_pin(m, 0, l.args, 0, &d, &inf, &pin),
      ascSuccess);
  assert_int_equal(run(d, &l), N + LIMIT + 1);
  asc__pymodule_unpin(pin);
  for (i = 1; i < LIMIT; i++)
    asc__pymodule_unpin(pins[i]);
  asc__pymodule_destroy(m);
  assert_int_equal(maps_under(cs.dir), 0);
  asc__cache_close(c);
}

int main(void) {
  /* The stages' call counts below are the specialisation table's: with
   * tiered compilation (jit/tier.h) a second launch of a quick tier would
   * emit its C again for the optimised build.  test_tiered.py covers
   * tiering. */
  setenv("ASC_TIER", "0", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_specialize_once_per_signature),
      cmocka_unit_test(test_generic_constexpr_values),
      cmocka_unit_test(test_aliased_tensors),
      cmocka_unit_test(test_argument_errors),
      cmocka_unit_test(test_compile_error_remembered),
      cmocka_unit_test(test_threads_compile_once),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_create_from_source),
      cmocka_unit_test(test_create_reports_compile_errors),
      cmocka_unit_test(test_specialize_types),
      cmocka_unit_test(test_concurrent_typing),
      cmocka_unit_test(test_loaded_specialisations_bounded),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
