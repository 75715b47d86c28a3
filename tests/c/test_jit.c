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
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "abi_prelude.h"
#include "compiler/compile.h"
#include "compiler/front/frontend.h"
#include "compiler/passes/passes.h"
#include "jit/cache.h"
#include "jit/cc.h"
#include "runtime/runtime.h"
#include "jit/driver.h"
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
  asc__compile_opts co;
  asc__jit_inputs in;
  char seen[64][33];
  const asc__pass *rows;
  int n = 0, i, j, nrows;
  /* CI's sanitizer stage sets ASC_CFLAGS: restored, not assumed unset */
  char *cflags = getenv("ASC_CFLAGS") ? strdup(getenv("ASC_CFLAGS")) : NULL;
  ASC_UNUSED(state);

  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  memset(&o, 0, sizeof o);
  asc__compile_opts_init(&co);
  in = inputs("answer(i32)");
  in.globals = &g;
  in.nglobals = 1;
  in.opts = &o;
  in.copts = &co;
  asc__jit_cc_opts(&o, &cco);
  asc__jit_key(&k0, cc, &cco, &in);
  strcpy(seen[n++], k0.hex);
#define VARY(stmt)                                                            \
  do {                                                                        \
    asc__jit_inputs in2 = in;                                                 \
    ascGlobalValue g2 = g;                                                    \
    ascCompileOptions o2 = o;                                                 \
    asc__compile_opts co2 = co;                                               \
    in2.globals = &g2;                                                        \
    in2.opts = &o2;                                                           \
    in2.copts = &co2;                                                         \
    stmt;                                                                     \
    asc__jit_cc_opts(&o2, &cco);                                              \
    asc__jit_key(&k, cc, &cco, &in2);                                         \
    assert_true(n < 64);                                                      \
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
  /* the compiler's options that change the code: each pass switch, the
   * module's fastmath, the streaming-store threshold, the L1 size through
   * the tile sizes it gives (docs/optimizer.md) */
  rows = asc__pass_table(&nrows);
  for (i = 0; i < nrows; i++)
    if (rows[i].off_env != NULL)
      VARY(co2.code.passes_off |= (uint64_t)1 << i);
  VARY(co2.code.fastmath = ASC_FASTMATH_REASSOC);
  VARY(co2.code.ntstore_min_bytes = 0);
  VARY(co2.code.ntstore_min_bytes = 4096);
  VARY(asc__compile_opts_set_l1d(&co2, 16384));
  VARY(asc__compile_opts_set_l1d(&co2, 131072));
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
  asc__compile_opts_set_l1d(&co, 32768);
  asc__jit_key(&k, cc, &cco, &in);
  assert_string_equal(k.hex, k0.hex);
  asc__compile_opts_set_l1d(&co, 32800);
  asc__jit_key(&k, cc, &cco, &in);
  assert_string_equal(k.hex, k0.hex);
  /* Options that change how the compiler runs, not what it makes, are
   * not in the key (docs/decisions.md, "One options struct"). */
  co.timeout_ms = 5;
  co.dump = "all";
  co.verify = true;
  co.only = "fold";
  asc__jit_key(&k, cc, &cco, &in);
  assert_string_equal(k.hex, k0.hex);
  /* No options: the defaults. */
  in.copts = NULL;
  asc__jit_key(&k, cc, &cco, &in);
  assert_string_equal(k.hex, k0.hex);
}

/* The C that text's kernel gets for signature sig under options o. */
static char *c_of(const char *text, const char *sig,
                  const asc__compile_opts *o) {
  asc__cctx c;
  jmp_buf jb;
  asc__buf out;
  char *volatile r = NULL;
  asc__cctx_init(&c, "k.py", text, strlen(text), 1);
  asc__cctx_set_opts(&c, o);
  asc__buf_init(&out);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__ast_module *m = asc__frontend(&c, NULL, 0);
    asc__sig *sg = asc__sig_parse(&c, sig);
    ASC_CHECK(&c, sg != NULL && sg->name != NULL);
    asc__compile_in in = {.module = m, .kernel = asc__module_func(m, sg->name),
                          .sig = sg, .stop = ASC_STOP_C};
    ASC_CHECK(&c, in.kernel != NULL);
    if (asc__compile_kernel(&c, &in, NULL, &out) && !out.oom)
      r = strdup(asc__buf_str(&out));
  }
  if (r == NULL)
    fail_msg("%s", asc__buf_str(&c.diag));
  asc__buf_free(&out);
  asc__cctx_free(&c);
  return r;
}

static void key_of(const asc__compile_opts *o, asc__cache_key *k) {
  const asc__cc *cc;
  asc__cc_opts cco;
  asc__jit_inputs in = inputs("t(f32[2], f32[2])");
  assert_int_equal(asc__cc_get(&cc), ascSuccess);
  asc__jit_cc_opts(NULL, &cco);
  in.copts = o;
  asc__jit_key(k, cc, &cco, &in);
}

/* Two option values that give different code give different cache keys
 * (else the disk cache would serve one's code for the other); two that
 * give the same code may share one. */
static void test_key_follows_code(void **state) {
  static const char transpose[] =
      "@asc.kernel\n"
      "def t(a, b):\n"
      "    for i in asc.prange(a.shape[0]):\n"
      "        for j in range(a.shape[1]):\n"
      "            b[j, i] = a[i, j]\n"
      "@asc.kernel\n"
      "def f(a, b, c):\n"
      "    a[:] = b * c + b\n";
  static const struct {
    const char *sig;
    const char *what;
  } cases[] = {
      {"t(f32[2], f32[2])", "tile pass off"},
      {"t(f32[2], f32[2])", "L1 16 KiB"},
      {"t(f32[2], f32[2])", "L1 128 KiB"},
      {"f(f64[1], f64[1], f64[1])", "no streaming stores"},
      {"f(f64[1], f64[1], f64[1])", "streaming from 1 MiB"},
  };
  asc__compile_opts dflt, o;
  asc__cache_key kb, ko;
  ASC_UNUSED(state);

  asc__compile_opts_init(&dflt);
  key_of(&dflt, &kb);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *cb, *co;
    o = dflt;
    switch (i) {
    case 0: o.code.passes_off |= asc__pass_bits("tile"); break;
    case 1: asc__compile_opts_set_l1d(&o, 16384); break;
    case 2: asc__compile_opts_set_l1d(&o, 131072); break;
    case 3: o.code.ntstore_min_bytes = 0; break;
    default: o.code.ntstore_min_bytes = 1 << 20; break;
    }
    cb = c_of(transpose, cases[i].sig, &dflt);
    co = c_of(transpose, cases[i].sig, &o);
    key_of(&o, &ko);
    if (strcmp(cb, co) == 0)
      fail_msg("%s: the same C", cases[i].what);
    if (strcmp(kb.hex, ko.hex) == 0)
      fail_msg("%s: different C, the same key", cases[i].what);
    free(cb);
    free(co);
  }
  /* an L1 size that gives the default's tiles: the same code, one key */
  o = dflt;
  asc__compile_opts_set_l1d(&o, 32800);
  {
    char *cb = c_of(transpose, "t(f32[2], f32[2])", &dflt);
    char *co = c_of(transpose, "t(f32[2], f32[2])", &o);
    assert_string_equal(cb, co);
    free(cb);
    free(co);
  }
  key_of(&o, &ko);
  assert_string_equal(kb.hex, ko.hex);
}

/* The jit reads the options from the environment at each compilation. */
static void test_compile_opts_from_env(void **state) {
  asc__compile_opts o;
  uint64_t tile = asc__pass_bits("tile"), hoist = asc__pass_bits("hoist");
  ASC_UNUSED(state);

  assert_true(tile != 0 && hoist != 0);
  unsetenv("ASC_TILE");
  unsetenv("ASC_HOIST");
  unsetenv("ASC_NTSTORE");
  unsetenv("ASC_DUMP");
  unsetenv("ASC_VERIFY");
  asc__jit_compile_opts(&o, 0, 0);
  assert_int_equal(o.code.passes_off, 0);
  assert_int_equal(o.code.ntstore_min_bytes, ASC_NTSTORE_DEFAULT_BYTES);
  assert_null(o.dump);
  assert_false(o.verify);
  setenv("ASC_TILE", "0", 1);
  setenv("ASC_HOIST", "1", 1);
  setenv("ASC_NTSTORE", "0", 1);
  setenv("ASC_DUMP", "fold", 1);
  setenv("ASC_VERIFY", "1", 1);
  asc__jit_compile_opts(&o, ASC_FASTMATH_NNAN, 131072);
  assert_int_equal(o.code.passes_off, tile);
  assert_int_equal(o.code.ntstore_min_bytes, 0);
  assert_int_equal(o.code.fastmath, ASC_FASTMATH_NNAN);
  assert_int_equal(o.code.tile_row_bytes, 256);
  assert_string_equal(o.dump, "fold");
  assert_true(o.verify);
  setenv("ASC_HOIST", "0", 1);
  setenv("ASC_NTSTORE", "4096", 1);
  asc__jit_compile_opts(&o, 0, 0);
  assert_int_equal(o.code.passes_off, tile | hoist);
  assert_int_equal(o.code.ntstore_min_bytes, 4096);
  /* 1, and anything but a number, is the default */
  setenv("ASC_NTSTORE", "1", 1);
  asc__jit_compile_opts(&o, 0, 0);
  assert_int_equal(o.code.ntstore_min_bytes, ASC_NTSTORE_DEFAULT_BYTES);
  setenv("ASC_NTSTORE", "-3", 1);
  asc__jit_compile_opts(&o, 0, 0);
  assert_int_equal(o.code.ntstore_min_bytes, ASC_NTSTORE_DEFAULT_BYTES);
  unsetenv("ASC_TILE");
  unsetenv("ASC_HOIST");
  unsetenv("ASC_NTSTORE");
  unsetenv("ASC_DUMP");
  unsetenv("ASC_VERIFY");
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

/* ---------------------------------------------------------------- index */

/* A cache object of its own on dir: what a new process sees (nothing of
 * the index in memory). */
static asc__cache *cache_at(const char *dir) {
  asc__cache *c;
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  return c;
}

static uint64_t index_hits(asc__cache *c) {
  asc__cache_stats st;
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  return st.index_hits;
}

/* In a fresh cache object on dir, loads in (emitting `value` on a miss):
 * whether it was built, and whether an index record led to the entry. */
static void load_at(const char *dir, const asc__jit_inputs *in, int value,
                    bool *built, bool *indexed) {
  asc__cache *c = cache_at(dir);
  emitter e = {.value = value};
  asc__jit_lib *lib;
  const asc_kernel_desc *d;

  assert_int_equal(asc__jit_load(c, in, emit_module, &e, &lib, &d),
                   ascSuccess);
  *built = e.calls == 1;
  *indexed = index_hits(c) > 0;
  /* what was loaded is what these inputs build */
  assert_int_equal(run_block(d, 0), value);
  asc__jit_unload(lib);
  asc__cache_close(c);
}

/* Runs fn on every "*.idx" record under dir. */
static void each_record(const char *dir, void (*fn)(const char *path)) {
  char cmd[4400];
  FILE *f;
  char line[4400];
  snprintf(cmd, sizeof cmd, "find '%s' -name '*.idx'", dir);
  f = popen(cmd, "r");
  assert_non_null(f);
  while (fgets(line, sizeof line, f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    fn(line);
  }
  pclose(f);
}

static void truncate_record(const char *path) {
  assert_int_equal(truncate(path, 20), 0);
}

static void flip_record(const char *path) {
  FILE *f = fopen(path, "r+b");
  int ch;
  assert_non_null(f);
  fseek(f, 34, SEEK_SET); /* inside the value */
  ch = fgetc(f);
  fseek(f, 34, SEEK_SET);
  fputc(ch ^ 1, f);
  fclose(f);
}

static void record_to_dir(const char *path) {
  assert_int_equal(unlink(path), 0);
  assert_int_equal(mkdir(path, 0700), 0);
}

static void remove_dir_record(const char *path) { rmdir(path); }

static void test_index_hit_in_a_new_process(void **state) {
  char dir[4200];
  asc__jit_inputs in = inputs("answer(i32)");
  bool built, indexed;
  ASC_UNUSED(state);

  snprintf(dir, sizeof dir, "%s/index-hit", base);
  load_at(dir, &in, 5, &built, &indexed);
  assert_true(built);
  assert_false(indexed);
  /* A new process: the record gives the entry's key, nothing is built. */
  load_at(dir, &in, 5, &built, &indexed);
  assert_false(built);
  assert_true(indexed);
  /* The same cache object: the record is in memory after the first load. */
  {
    asc__cache *c = cache_at(dir);
    emitter e = {.value = 5};
    asc__jit_lib *l1, *l2;
    const asc_kernel_desc *d;
    assert_int_equal(asc__jit_load(c, &in, emit_module, &e, &l1, &d),
                     ascSuccess);
    assert_int_equal(asc__jit_load(c, &in, emit_module, &e, &l2, &d),
                     ascSuccess);
    assert_int_equal(e.calls, 0);
    assert_int_equal(index_hits(c), 2);
    asc__jit_unload(l1);
    asc__jit_unload(l2);
    asc__cache_close(c);
  }
}

static void test_index_misses_on_any_change(void **state) {
  char dir[4200];
  static const char other_src[] = "@asc.kernel\ndef answer(out): pass\n";
  asc__jit_inputs in = inputs("answer(i32)"), in2;
  ascCompileOptions o;
  asc__compile_opts co;
  char *cflags = getenv("ASC_CFLAGS") ? strdup(getenv("ASC_CFLAGS")) : NULL;
  bool built, indexed;
  int value = 100;
  ASC_UNUSED(state);

  snprintf(dir, sizeof dir, "%s/index-change", base);
  memset(&o, 0, sizeof o);
  asc__compile_opts_init(&co);
  in.opts = &o;
  in.copts = &co;
  load_at(dir, &in, 1, &built, &indexed);
  assert_true(built);
  /* Each change: no record leads anywhere (a new build), and the build
   * is what the changed inputs make; the next process finds it. */
#define CHANGED(stmt)                                                         \
  do {                                                                        \
    ascCompileOptions o2 = o;                                                 \
    asc__compile_opts co2 = co;                                               \
    in2 = in;                                                                 \
    in2.opts = &o2;                                                           \
    in2.copts = &co2;                                                         \
    stmt;                                                                     \
    value++;                                                                  \
    load_at(dir, &in2, value, &built, &indexed);                              \
    assert_true(built);                                                       \
    assert_false(indexed);                                                    \
    load_at(dir, &in2, value, &built, &indexed);                              \
    assert_false(built);                                                      \
    assert_true(indexed);                                                     \
  } while (0)
  CHANGED(in2.source = other_src; in2.source_len = sizeof other_src - 1);
  CHANGED(in2.signature = "answer(i64)");
  CHANGED(o2.debug = 1);
  CHANGED(o2.optLevel = 2);
  CHANGED(co2.code.ntstore_min_bytes += 4096);
  CHANGED(asc__jit_set_build_identity("build-id:another-version"));
  asc__jit_set_build_identity(NULL);
  /* the compiler's flags: part of the record's key without running it */
  CHANGED(setenv("ASC_CFLAGS", "-DASC_INDEX_TEST=1", 1));
  if (cflags != NULL)
    setenv("ASC_CFLAGS", cflags, 1);
  else
    unsetenv("ASC_CFLAGS");
  free(cflags);
#undef CHANGED
  /* The original inputs still lead to their own entry. */
  load_at(dir, &in, 1, &built, &indexed);
  assert_false(built);
  assert_true(indexed);
}

static void test_index_of_another_version_rebuilt(void **state) {
  char dir[4200];
  asc__jit_inputs in = inputs("answer(i32)");
  bool built, indexed;
  ASC_UNUSED(state);

  snprintf(dir, sizeof dir, "%s/index-version", base);
  /* An entry and a record made by another build of libasc ... */
  asc__jit_set_build_identity("build-id:0ld");
  load_at(dir, &in, 11, &built, &indexed);
  assert_true(built);
  load_at(dir, &in, 11, &built, &indexed);
  assert_true(indexed);
  /* ... are not this build's: it builds its own (the kernel it loads
   * returns 12, not the old entry's 11). */
  asc__jit_set_build_identity(NULL);
  load_at(dir, &in, 12, &built, &indexed);
  assert_true(built);
  assert_false(indexed);
  load_at(dir, &in, 12, &built, &indexed);
  assert_false(built);
  assert_true(indexed);
}

static void test_bad_index_records_ignored(void **state) {
  char dir[4200];
  asc__jit_inputs in = inputs("answer(i32)");
  bool built, indexed;
  void (*const harm[])(const char *) = {truncate_record, flip_record,
                                        record_to_dir};
  ASC_UNUSED(state);

  snprintf(dir, sizeof dir, "%s/index-bad", base);
  load_at(dir, &in, 21, &built, &indexed);
  assert_true(built);
  for (size_t i = 0; i < ASC_ARRAY_SIZE(harm); i++) {
    each_record(dir, harm[i]);
    /* ignored: the entry is found the full way, nothing rebuilt ... */
    load_at(dir, &in, 21, &built, &indexed);
    assert_false(built);
    assert_false(indexed);
    /* ... and the record written again (a directory in its place stays
     * until removed: the record is a hint). */
    each_record(dir, remove_dir_record);
    load_at(dir, &in, 21, &built, &indexed);
    load_at(dir, &in, 21, &built, &indexed);
    assert_false(built);
    assert_true(indexed);
  }
  /* A record whose entry was evicted: built again, correctly. */
  {
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*.so' -delete", dir);
    assert_int_equal(system(cmd), 0);
  }
  load_at(dir, &in, 22, &built, &indexed);
  assert_true(built);
  load_at(dir, &in, 22, &built, &indexed);
  assert_false(built);
  assert_true(indexed);
}

/* A module's kernel table: the second load of the same text takes it from
 * the index (the process's cache: ctest gives the test its own), and it
 * is the front end's. */
static void test_module_table_from_index(void **state) {
  char text[512];
  asc__pymodule *m1, *m2;
  asc__cache *c;
  uint64_t before;
  ASC_UNUSED(state);

  /* a text no earlier run put in the process's cache */
  snprintf(text, sizeof text,
           "# run %ld %llu\nimport asc\n\n@asc.kernel\n"
           "def add(a, b: asc.float32, n: int):\n"
           "    for i in range(n):\n        a[i] += b[i]\n\n"
           "@asc.kernel\ndef first(x) -> float:\n    return x[0]\n",
           (long)getpid(), (unsigned long long)uv_hrtime());
  assert_int_equal(asc__cache_default(&c), ascSuccess);
  before = index_hits(c);
  assert_int_equal(asc__pymodule_create(&m1, text, strlen(text), NULL),
                   ascSuccess);
  assert_int_equal(index_hits(c), before);
  assert_int_equal(asc__pymodule_create(&m2, text, strlen(text), NULL),
                   ascSuccess);
  assert_int_equal(index_hits(c), before + 1);
  assert_int_equal(asc__pymodule_nkernels(m2), asc__pymodule_nkernels(m1));
  for (int i = 0; i < asc__pymodule_nkernels(m1); i++) {
    ascKernelInfo a, b;
    assert_int_equal(asc__pymodule_kernel_info(m1, i, &a), ascSuccess);
    assert_int_equal(asc__pymodule_kernel_info(m2, i, &b), ascSuccess);
    assert_string_equal(a.name, b.name);
    assert_int_equal(a.numParams, b.numParams);
    assert_int_equal(a.numResults, b.numResults);
    for (int j = 0; j < a.numParams; j++) {
      assert_string_equal(a.params[j].name, b.params[j].name);
      assert_int_equal(a.params[j].isTensor, b.params[j].isTensor);
      assert_int_equal(a.params[j].dtype, b.params[j].dtype);
      assert_int_equal(a.params[j].ndim, b.params[j].ndim);
      assert_int_equal(a.params[j].generic, b.params[j].generic);
      assert_int_equal(a.params[j].isConstExpr, b.params[j].isConstExpr);
      assert_int_equal(a.params[j].isWritten, b.params[j].isWritten);
      assert_int_equal(a.params[j].numberAsArray, b.params[j].numberAsArray);
      assert_int_equal(a.params[j].useLine, b.params[j].useLine);
    }
  }
  asc__pymodule_destroy(m2);
  asc__pymodule_destroy(m1);
  /* Other options: the front end runs again (no record for them). */
  {
    ascCompileOptions o;
    memset(&o, 0, sizeof o);
    o.filename = "other.py";
    before = index_hits(c);
    assert_int_equal(asc__pymodule_create(&m1, text, strlen(text), &o),
                     ascSuccess);
    assert_int_equal(index_hits(c), before);
    asc__pymodule_destroy(m1);
  }
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
      cmocka_unit_test(test_key_follows_code),
      cmocka_unit_test(test_compile_opts_from_env),
      cmocka_unit_test(test_key_build_identity),
      cmocka_unit_test(test_index_hit_in_a_new_process),
      cmocka_unit_test(test_index_misses_on_any_change),
      cmocka_unit_test(test_index_of_another_version_rebuilt),
      cmocka_unit_test(test_bad_index_records_ignored),
      cmocka_unit_test(test_module_table_from_index),
      cmocka_unit_test(test_spectab_once),
      cmocka_unit_test(test_spectab_failures_and_growth),
      cmocka_unit_test(test_spectab_failures_bounded),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
