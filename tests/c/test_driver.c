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
#include "cache.h"
#include "cc.h"
#include "driver.h"
#include "internal.h"

static char base[4096];
static int dir_seq;

static int setup(void **state) {
  ASC_UNUSED(state);
  snprintf(base, sizeof base, "%s/test-tmp-driver-XXXXXX", ASC_BINARY_DIR);
  return mkdtemp(base) == NULL ? -1 : 0;
}

static int teardown(void **state) {
  char *argv[] = {(char *)"rm", (char *)"-rf", base, NULL};
  asc__buf out;
  int st;
  ASC_UNUSED(state);
  asc__buf_init(&out);
  asc__run_process(argv, 20000, &out, &st);
  asc__buf_free(&out);
  return 0;
}

static asc__cache *new_cache(void) {
  char dir[4200];
  asc__cache *c;
  snprintf(dir, sizeof dir, "%s/c%d", base, dir_seq++);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  return c;
}

static const char text[] =
    "@asc.kernel\n"
    "def scale(out, x, n: asc.ConstExpr[int]):\n"
    "    out[0] = x * n\n";

static const ascKernelParamInfo scale_params[] = {
    {"out", 1, ascDataTypeCount, -1, 1, 0},
    {"x", 0, ascDataTypeCount, -1, 1, 0},
    {"n", 0, ascInt64, -1, 0, 1},
};
static const ascKernelInfo kernels[] = {{"scale", 3, scale_params}};

typedef struct stages_state {
  atomic_int calls;
  ascError_t fail;
  unsigned delay_ms;
  char last_sig[256];
} stages_state;

/* Emits a kernel that stores into out[0] (as int64) the number of the
 * compile that produced it, so tests can tell specialisations apart. */
static ascError_t stages(void *ud, asc__pymodule *m, int kernel,
                         const char *signature, void *const *args,
                         asc__buf *out) {
  stages_state *s = ud;
  ascKernelInfo info;
  int n = atomic_fetch_add(&s->calls, 1) + 1;

  ASC_UNUSED(args);
  snprintf(s->last_sig, sizeof s->last_sig, "%s", signature);
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
  launch_init(&l, ascInt64, 3);
  l.args[1] = NULL;
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d),
                   ascErrorInvalidValue);
  assert_null(d);
  assert_non_null(strstr(ascGetLastErrorMessage(), "'x'"));
  launch_init(&l, ascInt64, 3);
  l.out.dtype = (ascDataType)99;
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d),
                   ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "'out'"));
  launch_init(&l, ascInt64, 3);
  l.out.ndim = 9;
  assert_int_equal(asc__pymodule_specialize(m, 0, l.args, &d),
                   ascErrorInvalidValue);
  assert_int_equal(asc__pymodule_specialize(m, 1, l.args, &d),
                   ascErrorInvalidKernel);
  assert_int_equal(asc__pymodule_specialize(NULL, 0, l.args, &d),
                   ascErrorInvalidHandle);
  assert_int_equal(asc__pymodule_specialize(m, 0, NULL, &d),
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

static void test_create_placeholder(void **state) {
  asc__pymodule *m = (asc__pymodule *)1;
  ASC_UNUSED(state);
  /* Until the front end is built in. */
  assert_int_equal(asc__pymodule_create(&m, text, sizeof text - 1, NULL),
                   ascErrorUnsupported);
  assert_null(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_specialize_once_per_signature),
      cmocka_unit_test(test_argument_errors),
      cmocka_unit_test(test_compile_error_remembered),
      cmocka_unit_test(test_threads_compile_once),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_create_placeholder),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
