/*
 * Generated C -> cached shared object -> loaded kernel.
 */
#include "jit.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "asc/version.h"
#include "trace.h"

void asc__jit_cc_opts(const ascCompileOptions *opts, asc__cc_opts *out) {
  out->opt_level = -1;
  out->debug = 0;
  if (opts == NULL)
    return;
  out->debug = opts->debug != 0;
  if (opts->optLevel >= 1 && opts->optLevel <= 3)
    out->opt_level = opts->optLevel;
}

void asc__jit_key(asc__cache_key *k, const asc__cc *cc,
                  const asc__cc_opts *ccopts, const asc__jit_inputs *in) {
  const ascCompileOptions *o = in->opts;
  asc__buf flags;
  int i;

  asc__cache_key_init(k);
  asc__cache_key_add_str(k, "libasc", ASC_VERSION_STRING);
  asc__cache_key_add_u64(k, "abi", ASC_KABI_VERSION);
  asc__cache_key_add_u64(k, "codegen", ASC_CODEGEN_VERSION);
  asc__cache_key_add_str(k, "cc", asc__cc_identity(cc));
  asc__buf_init(&flags);
  asc__cc_flags(cc, ccopts, &flags);
  /* On allocation failure hash a marker no flag list can produce rather
   * than a partial list: the key stays distinct, the build fails later. */
  asc__cache_key_add_str(k, "flags", flags.oom ? NULL : asc__buf_str(&flags));
  asc__buf_free(&flags);
  asc__cache_key_add_str(k, "cpu", asc__cc_cpu_features());
  asc__cache_key_add(k, "source", in->source, in->source_len);
  asc__cache_key_add_str(k, "kernel", in->kernel_name);
  asc__cache_key_add_str(k, "signature", in->signature);
  asc__cache_key_add_u64(k, "nglobals", (uint64_t)in->nglobals);
  for (i = 0; i < in->nglobals; i++) {
    const ascGlobalValue *g = &in->globals[i];
    asc__cache_key_add_str(k, "global", g->name);
    asc__cache_key_add_u64(k, "dtype", (uint64_t)g->value.dtype);
    asc__cache_key_add_u64(k, "weak", (uint64_t)g->value.weak);
    asc__cache_key_add_u64(k, "value", g->value.value.u);
  }
  /* Debug options, and what generated code embeds for messages (the file
   * name and line numbers of kernel exceptions). */
  asc__cache_key_add_u64(k, "debug", o ? (uint64_t)(o->debug != 0) : 0);
  asc__cache_key_add_u64(k, "bounds", o ? (uint64_t)(o->boundsCheck != 0) : 0);
  asc__cache_key_add_u64(k, "opt", o ? (uint64_t)(uint32_t)o->optLevel : 0);
  asc__cache_key_add_str(k, "file", o && o->filename ? o->filename : NULL);
  asc__cache_key_add_u64(k, "line", o ? (uint64_t)(uint32_t)o->firstLine : 0);
  asc__cache_key_final(k);
}

/* ---------------------------------------------------------------- build */

typedef struct build_ctx {
  const asc__cc *cc;
  const asc__cc_opts *ccopts;
  asc__jit_emit_fn emit;
  void *ud;
  bool built;   /* the cache missed and build_so ran */
} build_ctx;

static ascError_t build_so(void *ud, const char *workdir, char **so_path) {
  build_ctx *b = ud;
  asc__buf c;
  ascError_t err;
  uint64_t t0;

  b->built = true;
  asc__buf_init(&c);
  err = b->emit(b->ud, &c);
  if (err == ascSuccess && c.oom)
    err = asc__error(ascErrorOutOfMemory, "out of memory emitting C");
  t0 = asc__trace_clock();
  if (err == ascSuccess)
    err = asc__cc_build(b->cc, b->ccopts, workdir, "kernel", asc__buf_str(&c),
                        c.len, so_path);
  ASC_TRACE(asc__trace_span("compile", "C compiler", asc__cc_path(b->cc),
                            c.len, t0));
  asc__buf_free(&c);
  return err;
}

/* ----------------------------------------------------------------- load */

ascError_t asc__jit_open(const char *path, asc__jit_lib **out) {
  asc__jit_lib *l;
  void *sym = NULL;

  *out = NULL;
  l = asc__calloc(1, sizeof *l);
  if (l == NULL || (l->path = asc__strdup(path)) == NULL) {
    asc__free(l);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  if (uv_dlopen(path, &l->lib) != 0) {
    ascError_t e = asc__error(ascErrorInvalidModule, "cannot load %s: %s",
                              path, uv_dlerror(&l->lib));
    uv_dlclose(&l->lib);
    asc__free(l->path);
    asc__free(l);
    return e;
  }
  if (uv_dlsym(&l->lib, ASC_MODULE_SYMBOL, &sym) != 0 || sym == NULL) {
    asc__error(ascErrorInvalidModule, "%s does not export %s", path,
               ASC_MODULE_SYMBOL);
    goto fail;
  }
  l->module = sym;
  if (l->module->abi_version != ASC_KABI_VERSION) {
    asc__error(ascErrorInvalidModule,
               "%s was built for kernel ABI %u, this libasc has %u", path,
               (unsigned)l->module->abi_version, (unsigned)ASC_KABI_VERSION);
    goto fail;
  }
  *out = l;
  return ascSuccess;
fail:
  uv_dlclose(&l->lib);
  asc__free(l->path);
  asc__free(l);
  return ascErrorInvalidModule;
}

void asc__jit_unload(asc__jit_lib *l) {
  if (l == NULL)
    return;
  uv_dlclose(&l->lib);
  asc__free(l->path);
  asc__free(l);
}

static const asc_kernel_desc *find_kernel(const asc__jit_lib *l,
                                          const char *name) {
  uint32_t i;
  for (i = 0; i < l->module->nkernels; i++)
    if (l->module->kernels[i].name != NULL &&
        strcmp(l->module->kernels[i].name, name) == 0)
      return &l->module->kernels[i];
  return NULL;
}

ascError_t asc__jit_load(asc__cache *cache, const asc__jit_inputs *in,
                         asc__jit_emit_fn emit, void *ud, asc__jit_lib **lib,
                         const asc_kernel_desc **desc) {
  asc__cache_key k;
  asc__cc_opts ccopts;
  build_ctx b;
  char *path = NULL;
  ascError_t err;
  int attempt;

  *lib = NULL;
  *desc = NULL;
  if (cache == NULL && (err = asc__cache_default(&cache)) != ascSuccess)
    return err;
  asc__jit_cc_opts(in->opts, &ccopts);
  err = asc__cc_get(&b.cc);
  if (err != ascSuccess)
    return err;
  b.ccopts = &ccopts;
  b.emit = emit;
  b.ud = ud;
  asc__jit_key(&k, b.cc, &ccopts, in);
  /* A verified entry can still vanish before dlopen (evicted or cleared by
   * another process); one more lookup rebuilds it. */
  for (attempt = 0; attempt < 2; attempt++) {
    uint64_t t0 = asc__trace_clock();
    b.built = false;
    err = asc__cache_get_or_build(cache, &k, build_so, &b, &path);
    ASC_TRACE(asc__trace_span("cache", b.built ? "cache miss" : "cache hit",
                              in->kernel_name, 0, t0));
    if (err != ascSuccess)
      return err;
    err = asc__jit_open(path, lib);
    if (err == ascSuccess || access(path, F_OK) == 0 || errno != ENOENT) {
      asc__free(path);
      break;
    }
    asc__free(path);
    path = NULL;
  }
  if (err != ascSuccess)
    return err;
  *desc = find_kernel(*lib, in->kernel_name);
  if (*desc == NULL) {
    err = asc__error(ascErrorInternal, "%s has no kernel '%s'",
                     (*lib)->path, in->kernel_name);
    asc__jit_unload(*lib);
    *lib = NULL;
  }
  return err;
}
