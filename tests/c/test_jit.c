/* From generated C to a loaded kernel (jit.c) and the per-module
 * specialisation table (spectab.c). */
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
#include "runtime/runtime.h"
#include "jit/jit.h"
#include "jit/spectab.h"

#define JIT_FIXTURE_NAME "jit"
#include "jit_fixture.h"

/* ------------------------------------------------------------------ jit */

typedef struct emitter {
  int calls;
  int value;
  ascError_t fail;
} emitter;

/* A module as emit_c would write one: the ABI prelude, then the kernel. */
static ascError_t emit_module(void *ud, asc__buf *out) {
  emitter *e = ud;
  e->calls++;
  if (e->fail != ascSuccess)
    return asc__error(e->fail, "k.py:1:1: error: made-up type error");
  asc__buf_puts(out, asc__abi_prelude);
  asc__buf_printf(
      out,
      "static int answer_entry(asc_kctx *ctx, void *const *args,\n"
      "                        asc_kexc *exc) {\n"
      "  (void)exc;\n"
      "  *(int32_t *)args[0] = %d + (int32_t)ctx->block_idx;\n"
      "  return 0;\n"
      "}\n"
      "static const asc_kparam answer_params[] = {{\"out\", 0, 3, -1}};\n"
      "static const asc_kernel_desc kernels[] = {\n"
      "  {\"answer\", answer_entry, 1, answer_params, 0, 0, \"k.py\"}};\n"
      "const asc_module_desc asc_module_v1 = {ASC_KABI_VERSION, 1, "
      "kernels};\n",
      e->value);
  return ascSuccess;
}

static int32_t run_block(const asc_kernel_desc *d, uint32_t block) {
  asc_kctx ctx;
  asc_kexc exc;
  int32_t out = -1;
  void *args[1] = {&out};
  memset(&ctx, 0, sizeof ctx);
  ctx.block_idx = block;
  ctx.block_num = block + 1;
  assert_int_equal(d->entry(&ctx, args, &exc), 0);
  return out;
}

static asc__jit_inputs inputs(const char *sig) {
  static const char src[] = "@asc.kernel\ndef answer(out): ...\n";
  asc__jit_inputs in;
  memset(&in, 0, sizeof in);
  in.kernel_name = "answer";
  in.source = src;
  in.source_len = sizeof src - 1;
  in.signature = sig;
  return in;
}

static void test_load_then_hit(void **state) {
  asc__cache *c = new_cache();
  asc__jit_inputs in = inputs("answer(i32)");
  emitter e = {.value = 42};
  asc__jit_lib *lib, *lib2;
  const asc_kernel_desc *d, *d2;
  ASC_UNUSED(state);

  assert_int_equal(asc__jit_load(c, &in, emit_module, &e, &lib, &d),
                   ascSuccess);
  assert_int_equal(e.calls, 1);
  assert_string_equal(d->name, "answer");
  assert_int_equal(d->nparams, 1);
  assert_int_equal(run_block(d, 0), 42);
  assert_int_equal(run_block(d, 3), 45);
  /* Same inputs: from the cache, no emission. */
  assert_int_equal(asc__jit_load(c, &in, emit_module, &e, &lib2, &d2),
                   ascSuccess);
  assert_int_equal(e.calls, 1);
  assert_int_equal(run_block(d2, 1), 43);
  asc__jit_unload(lib2);
  asc__jit_unload(lib);
  /* Another signature: another build. */
  in = inputs("answer(i64)");
  e.value = 7;
  assert_int_equal(asc__jit_load(c, &in, emit_module, &e, &lib, &d),
                   ascSuccess);
  assert_int_equal(e.calls, 2);
  assert_int_equal(run_block(d, 0), 7);
  asc__jit_unload(lib);
  asc__cache_close(c);
}

static void test_errors(void **state) {
  asc__cache *c = new_cache();
  asc__jit_inputs in = inputs("answer(f32)");
  emitter e = {.fail = ascErrorCompile};
  asc__jit_lib *lib = (asc__jit_lib *)1;
  const asc_kernel_desc *d = (const asc_kernel_desc *)1;
  ASC_UNUSED(state);

  assert_int_equal(asc__jit_load(c, &in, emit_module, &e, &lib, &d),
                   ascErrorCompile);
  assert_null(lib);
  assert_null(d);
  assert_non_null(strstr(ascGetLastErrorMessage(), "made-up type error"));
  e.fail = ascSuccess;
  in.kernel_name = "not_in_module";
  assert_int_equal(asc__jit_load(c, &in, emit_module, &e, &lib, &d),
                   ascErrorInternal);
  assert_null(lib);
  assert_int_equal(asc__jit_open("/nonexistent/x.so", &lib),
                   ascErrorInvalidModule);
  asc__cache_close(c);
}

/* What the C compiler makes under flags that change its output (-E: C
 * text, -c: an object file) is not published: the call fails saying so,
 * the cache holds no entry, and the next call builds again rather than
 * loading a bad entry. */
static void test_bad_build_not_published(void **state) {
  static const char *const flags[] = {"-E", "-c"};
  /* CI's sanitizer stage sets ASC_CFLAGS: kept, and restored */
  const char *old = getenv("ASC_CFLAGS");
  char *saved = old != NULL ? strdup(old) : NULL;
  char cflags[512];
  ASC_UNUSED(state);

  for (size_t i = 0; i < ASC_ARRAY_SIZE(flags); i++) {
    asc__cache *c = new_cache();
    asc__cache_stats st;
    asc__jit_inputs in = inputs("answer(i32)");
    emitter e = {.value = 1};
    asc__jit_lib *lib;
    const asc_kernel_desc *d;

    snprintf(cflags, sizeof cflags, "%s %s", saved ? saved : "", flags[i]);
    setenv("ASC_CFLAGS", cflags, 1);
    for (int round = 1; round <= 2; round++) {
      assert_int_equal(asc__jit_load(c, &in, emit_module, &e, &lib, &d),
                       ascErrorInternal);
      assert_null(lib);
      assert_non_null(strstr(ascGetLastErrorMessage(),
                             "is not a kernel module this libasc can load"));
      assert_non_null(strstr(ascGetLastErrorMessage(), "ASC_CFLAGS"));
      assert_int_equal(e.calls, round);
      assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
      assert_int_equal(st.entries, 0);
      assert_int_equal(st.temporaries, 0);
    }
    asc__cache_close(c);
  }
  if (saved != NULL)
    setenv("ASC_CFLAGS", saved, 1);
  else
    unsetenv("ASC_CFLAGS");
  free(saved);
}

static void test_key_inputs(void **state) {
  const asc__cc *cc;
  asc__cc_opts cco;
  asc__cache_key k0, k;
  ascGlobalValue g = {"TILE", {ascInt64, 1, {.i = 64}}};
  ascCompileOptions o;
  asc__jit_inputs in;
  char seen[16][33];
  int n = 0, i, j;
  /* CI's sanitizer stage sets ASC_CFLAGS: restored, not assumed unset */
  char *cflags = getenv("ASC_CFLAGS") ? strdup(getenv("ASC_CFLAGS")) : NULL;
  ASC_UNUSED(state);

  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  memset(&o, 0, sizeof o);
  in = inputs("answer(i32)");
  in.globals = &g;
  in.nglobals = 1;
  in.opts = &o;
  asc__jit_cc_opts(&o, &cco);
  asc__jit_key(&k0, cc, &cco, &in);
  strcpy(seen[n++], k0.hex);
#define VARY(stmt)                                                            \
  do {                                                                        \
    asc__jit_inputs in2 = in;                                                 \
    ascGlobalValue g2 = g;                                                    \
    ascCompileOptions o2 = o;                                                 \
    in2.globals = &g2;                                                        \
    in2.opts = &o2;                                                           \
    stmt;                                                                     \
    asc__jit_cc_opts(&o2, &cco);                                              \
    asc__jit_key(&k, cc, &cco, &in2);                                         \
    strcpy(seen[n++], k.hex);                                                 \
  } while (0)
  VARY(in2.kernel_name = "answer2");
  VARY(in2.source_len--);
  VARY(in2.signature = "answer(i64)");
  VARY(g2.value.value.i = 32);
  VARY(g2.name = "TILE2");
  VARY(in2.nglobals = 0);
  VARY(o2.debug = 1);
  VARY(o2.boundsCheck = 1);
  VARY(o2.optLevel = 2);
  VARY(o2.filename = "other.py");
  VARY(o2.firstLine = 10);
  /* the L1 size, through the tile sizes it gives (docs/optimizer.md) */
  VARY(in2.l1d_bytes = 16384);
  VARY(in2.l1d_bytes = 131072);
  setenv("ASC_CFLAGS", "-DX=1", 1);
  VARY((void)0);
  if (cflags != NULL)
    setenv("ASC_CFLAGS", cflags, 1);
  else
    unsetenv("ASC_CFLAGS");
  free(cflags);
#undef VARY
  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      assert_string_not_equal(seen[i], seen[j]);
  /* Stable: the same inputs give the same key. */
  asc__jit_cc_opts(&o, &cco);
  asc__jit_key(&k, cc, &cco, &in);
  assert_string_equal(k.hex, k0.hex);
  /* An L1 size that gives the default's tiles (unknown: 32 KiB) shares
   * its key. */
  in.l1d_bytes = 32768;
  asc__jit_key(&k, cc, &cco, &in);
  assert_string_equal(k.hex, k0.hex);
  in.l1d_bytes = 32800;
  asc__jit_key(&k, cc, &cco, &in);
  assert_string_equal(k.hex, k0.hex);
}

/* A rebuilt libasc (another compiler, another emitter) must not be served
 * kernels that the old one generated: the key covers the identity of the
 * binary that holds libasc's code. */
static void test_key_build_identity(void **state) {
  const asc__cc *cc;
  asc__cc_opts cco;
  asc__cache_key k0, ka, kb, ka2;
  asc__jit_inputs in = inputs("answer(i32)");
  char real[ASC_JIT_ID_MAX], text[ASC_JIT_ID_MAX], text2[ASC_JIT_ID_MAX];
  ASC_UNUSED(state);

  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  asc__jit_cc_opts(NULL, &cco);
  /* The real identity: non-empty, the same on every call, a build-id (the
   * build links with -Wl,--build-id) of the object holding asc__jit_key. */
  snprintf(real, sizeof real, "%s", asc__jit_build_identity());
  assert_true(strncmp(real, "build-id:", 9) == 0);
  assert_true(strlen(real) > 9 + 8);
  assert_string_equal(asc__jit_build_identity(), real);
  assert_true(asc__jit_object_identity((const void *)asc__jit_key, true,
                                       text));
  assert_string_equal(text, real);
  /* The fallback: a hash of the mapped text, also stable. */
  assert_true(asc__jit_object_identity((const void *)asc__jit_key, false,
                                       text));
  assert_true(asc__jit_object_identity((const void *)asc__cc_get, false,
                                       text2));
  assert_true(strncmp(text, "text:", 5) == 0 && strlen(text) == 5 + 32);
  assert_string_equal(text, text2);
  assert_false(asc__jit_object_identity(NULL, true, text));

  asc__jit_key(&k0, cc, &cco, &in);
  asc__jit_set_build_identity("build-id:aaaa");
  asc__jit_key(&ka, cc, &cco, &in);
  asc__jit_set_build_identity("build-id:bbbb");
  asc__jit_key(&kb, cc, &cco, &in);
  asc__jit_set_build_identity("build-id:aaaa");
  asc__jit_key(&ka2, cc, &cco, &in);
  asc__jit_set_build_identity(NULL);
  assert_string_not_equal(ka.hex, kb.hex);
  assert_string_not_equal(ka.hex, k0.hex);
  assert_string_not_equal(kb.hex, k0.hex);
  assert_string_equal(ka.hex, ka2.hex);
  asc__jit_key(&ka2, cc, &cco, &in);
  assert_string_equal(ka2.hex, k0.hex);
}

/* ------------------------------------------------------------ spectab */

typedef struct tab_thread {
  asc__spectab *t;
  atomic_int *builds;
  void *value;
  ascError_t err;
} tab_thread;

static int the_value = 99;

static void lookup_thread(void *p) {
  tab_thread *a = p;
  asc__spec *claim;
  a->err = asc__spectab_lookup(a->t, 0, "sig", 3, &a->value, &claim, NULL);
  if (a->err == ascSuccess && claim != NULL) {
    atomic_fetch_add(a->builds, 1);
    uv_sleep(100);
    a->value = &the_value;
    asc__spectab_publish(a->t, claim, ascSuccess, a->value, NULL);
  }
}

static void test_spectab_once(void **state) {
  asc__spectab t;
  atomic_int builds = 0;
  tab_thread a[8];
  uv_thread_t th[8];
  int i;
  ASC_UNUSED(state);

  assert_int_equal(asc__spectab_init(&t, NULL), ascSuccess);
  for (i = 0; i < 8; i++) {
    a[i].t = &t;
    a[i].builds = &builds;
    assert_int_equal(uv_thread_create(&th[i], lookup_thread, &a[i]), 0);
  }
  for (i = 0; i < 8; i++) {
    uv_thread_join(&th[i]);
    assert_int_equal(a[i].err, ascSuccess);
    assert_ptr_equal(a[i].value, &the_value);
  }
  assert_int_equal(atomic_load(&builds), 1);
  assert_int_equal(asc__spectab_count(&t), 1);
  asc__spectab_destroy(&t);
}

static int dropped;
static void drop(void *v) {
  ASC_UNUSED(v);
  dropped++;
}

static void test_spectab_failures_and_growth(void **state) {
  asc__spectab t;
  asc__spec *claim;
  void *v;
  int i;
  ASC_UNUSED(state);

  assert_int_equal(asc__spectab_init(&t, drop), ascSuccess);
  /* A compile error is remembered, with its message. */
  assert_int_equal(asc__spectab_lookup(&t, 0, "bad", 3, &v, &claim, NULL),
                   ascSuccess);
  assert_non_null(claim);
  asc__spectab_publish(&t, claim,
                       asc__error(ascErrorCompile, "k.py:3:1: error: no"),
                       NULL, NULL);
  asc__error(ascErrorInvalidValue, "something else");
  assert_int_equal(asc__spectab_lookup(&t, 0, "bad", 3, &v, &claim, NULL),
                   ascErrorCompile);
  assert_null(claim);
  assert_string_equal(ascGetLastErrorMessage(), "k.py:3:1: error: no");
  /* A transient failure is not: the next lookup claims again. */
  assert_int_equal(asc__spectab_lookup(&t, 1, "oom", 3, &v, &claim, NULL),
                   ascSuccess);
  asc__spectab_publish(&t, claim, asc__error(ascErrorOutOfMemory, "oom"),
                       NULL, NULL);
  assert_int_equal(asc__spectab_lookup(&t, 1, "oom", 3, &v, &claim, NULL),
                   ascSuccess);
  assert_non_null(claim);
  asc__spectab_publish(&t, claim, ascSuccess, &the_value, NULL);
  /* Same bytes, other kernel: another entry. */
  assert_int_equal(asc__spectab_lookup(&t, 2, "oom", 3, &v, &claim, NULL),
                   ascSuccess);
  assert_non_null(claim);
  asc__spectab_publish(&t, claim, ascSuccess, &the_value, NULL);
  /* Many keys: the table grows and still finds each one. */
  for (i = 0; i < 500; i++) {
    assert_int_equal(
        asc__spectab_lookup(&t, 3, &i, sizeof i, &v, &claim, NULL),
        ascSuccess);
    assert_non_null(claim);
    asc__spectab_publish(&t, claim, ascSuccess, &the_value, NULL);
  }
  for (i = 0; i < 500; i++) {
    assert_int_equal(
        asc__spectab_lookup(&t, 3, &i, sizeof i, &v, &claim, NULL),
        ascSuccess);
    assert_null(claim);
    assert_ptr_equal(v, &the_value);
  }
  assert_int_equal(asc__spectab_count(&t), 503);
  dropped = 0;
  asc__spectab_destroy(&t);
  assert_int_equal(dropped, 502);
}

/* Remembered compile failures are bounded: after more distinct failing
 * keys than ASC__SPECTAB_MAX_FAILED, the oldest is forgotten (its next
 * lookup builds again) and the newest still answers with its error. */
static void test_spectab_failures_bounded(void **state) {
  enum { N = ASC__SPECTAB_MAX_FAILED + 40 };
  asc__spectab t;
  asc__spec *claim;
  void *v;
  int i;
  (void)state;
  assert_int_equal(asc__spectab_init(&t, NULL), ascSuccess);
  for (i = 0; i < N; i++) {
    assert_int_equal(asc__spectab_lookup(&t, 0, &i, sizeof i, &v, &claim,
                                         NULL),
                     ascSuccess);
    assert_non_null(claim);
    asc__spectab_publish(&t, claim, asc__error(ascErrorCompile, "bad %d", i),
                         NULL, NULL);
  }
  assert_int_equal(asc__spectab_count(&t), ASC__SPECTAB_MAX_FAILED);
  i = N - 1;
  assert_int_equal(asc__spectab_lookup(&t, 0, &i, sizeof i, &v, &claim, NULL),
                   ascErrorCompile);
  assert_null(claim);
  i = 0;
  assert_int_equal(asc__spectab_lookup(&t, 0, &i, sizeof i, &v, &claim, NULL),
                   ascSuccess);
  assert_non_null(claim);
  asc__spectab_publish(&t, claim, asc__error(ascErrorCompile, "again"), NULL,
                       NULL);
  assert_int_equal(asc__spectab_count(&t), ASC__SPECTAB_MAX_FAILED);
  asc__spectab_destroy(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_then_hit),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_bad_build_not_published),
      cmocka_unit_test(test_key_inputs),
      cmocka_unit_test(test_key_build_identity),
      cmocka_unit_test(test_spectab_once),
      cmocka_unit_test(test_spectab_failures_and_growth),
      cmocka_unit_test(test_spectab_failures_bounded),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
