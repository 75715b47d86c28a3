/*
 * The driver: Python module text -> kernels -> specialisations.
 *
 *   asc__pymodule_create       copy text and options; front end once
 *   asc__pymodule_specialize   launch args (checked by the launch) ->
 *        |                       signature (sig.c) and its text ->
 *        |                       spectab lookup (hash of the text only)
 *        | miss (this thread claimed it; others wait for it)
 *        v
 *     options from the environment (asc__jit_compile_opts)
 *     jit: cache key over inputs -> cache hit? dlopen
 *                                -> miss: stages(signature, options) -> C
 *                                   -> cc -> publish
 *        -> asc_kernel_desc, kept in the spectab until destroy or until
 *           evicted (least recently used, no launch queued) to keep at
 *           most ASC_MAX_LOADED_SPECIALIZATIONS loaded
 *
 * The compilation stages (infer types for the signature, lower, passes,
 * emit C) are one function pointer, `stages`, so the table, the in-flight
 * entries, the cache and the loaded objects are exercised before and
 * independently of the front and back ends.
 *
 * Locks: the spectab lock is the only lock of a module and is never held
 * while compiling (see spectab.h).
 */
#include "jit/driver.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/cache.h"
#include "compiler/cctx.h"
#include "compiler/front/frontend.h"
#include "compiler/types/infer.h"
#include "base/base.h"
#include "jit/jit.h"
#include "compiler/compile.h"
#include "jit/spectab.h"
#include "jit/tier.h"
#include "compiler/types/types.h"
#include "base/trace.h"
#include "base/env.h"

#define PYMODULE_MAGIC 0x50594d44u /* "PYMD" */

typedef struct drv_kernel {
  ascKernelInfo info;            /* name and params point into the module */
} drv_kernel;

/* One loaded specialisation. */
typedef struct drv_spec {
  asc__jit_lib *lib;
  /* what launches run now: lib's kernel, or once the optimised build of
   * a quick tier is loaded, that build's (each launch reads it once) */
  _Atomic(const asc_kernel_desc *) desc;
  asc__inflight inflight;        /* its launches queued or running */
  /* Tiered compilation (jit/tier.h): lib is the quick tier's while
   * quick; launches counts them (the building one is the first). */
  atomic_bool quick;
  atomic_uint launches;
  /* the optimised build, once asked for (NULL while making is true: a
   * launch is emitting its C); both set under asc__tier_lock, up also
   * read by drop_spec, which no launch runs beside */
  _Atomic(asc__tier_job *) up;
  bool making;
} drv_spec;

/* Loaded specialisations per module unless ASC_MAX_LOADED_SPECIALIZATIONS
 * says otherwise.  Each costs about 21 KB and 5 memory maps; the kernel's
 * default vm.max_map_count (65530) allows about 13,000. */
#define DEFAULT_MAX_LOADED 1024

struct asc__pymodule {
  uint32_t magic;
  char *text;                    /* owned copy, NUL-terminated */
  size_t len;
  ascCompileOptions opts;        /* filename and globals point to copies */
  int nkernels;
  drv_kernel *kernels;
  asc__spectab specs;
  asc__cache *cache;             /* NULL: the process's cache */
  asc__pymodule_stages_fn stages;
  void *stages_ud;
  /* Everything below is owned storage for the fields above. */
  char *filename;
  ascGlobalValue *globals;
  char **global_names;
  ascKernelParamInfo **params;
  char **names;                  /* kernel and parameter names */
  int nnames;
};

/* --------------------------------------------------------- signatures */

/* The byte range a tensor argument spans, [*lo, *hi); false when empty
 * or without data. */
static bool tensor_span(const ascTensor *t, uintptr_t *lo, uintptr_t *hi) {
  int64_t blo, bhi;
  char why[160];

  if (t->data == NULL)
    return false;
  if (!asc__tensor_extent(t, &blo, &bhi, why, sizeof why)) {
    /* rejected before any launch; as a span, everything may overlap */
    *lo = 0;
    *hi = UINTPTR_MAX;
    return true;
  }
  if (blo == bhi)
    return false;
  *lo = (uintptr_t)t->data + (uintptr_t)blo;
  *hi = (uintptr_t)t->data + (uintptr_t)bhi;
  return true;
}

/* Generated code declares tensor data restrict; a launch whose tensors
 * overlap needs a specialisation without it, so this is part of the
 * signature. */
bool asc__args_overlap(const ascKernelInfo *k, void *const *args) {
  /* each span computed once, for the usual kernel */
  uintptr_t lo[16], hi[16];
  int n = 0;

  for (int i = 0; i < k->numParams; i++) {
    uintptr_t alo, ahi;
    if (!k->params[i].isTensor || !tensor_span(args[i], &alo, &ahi))
      continue;
    for (int j = 0; j < n; j++)
      if (alo < hi[j] && lo[j] < ahi)
        return true;
    if (n < (int)ASC_ARRAY_SIZE(lo)) {
      lo[n] = alo;
      hi[n++] = ahi;
      continue;
    }
    for (int j = i + 1; j < k->numParams; j++) {
      uintptr_t blo, bhi;
      if (k->params[j].isTensor && tensor_span(args[j], &blo, &bhi) &&
          alo < bhi && blo < ahi)
        return true;
    }
  }
  return false;
}

/* ------------------------------------------------------------- modules */

static bool valid(const asc__pymodule *m) {
  return m != NULL && m->magic == PYMODULE_MAGIC;
}

static void drop_spec(void *v) {
  drv_spec *s = v;
  asc__tier_release(atomic_load(&s->up));
  asc__jit_unload(s->lib);
  asc__free(s);
}

static bool spec_busy(void *v) {
  drv_spec *s = v;
  return !asc__inflight_idle(&s->inflight);
}

/* ASC_MAX_LOADED_SPECIALIZATIONS: a positive number (base/env.h). */
static asc__env_num max_loaded_env = {"ASC_MAX_LOADED_SPECIALIZATIONS",
                                      DEFAULT_MAX_LOADED, 1, SIZE_MAX, 0,
                                      false};

/* Copies opts (filename, globals) into m. */
static ascError_t copy_opts(asc__pymodule *m, const ascCompileOptions *opts) {
  int i;

  if (opts != NULL)
    m->opts = *opts;
  /* ASC_BOUNDSCHECK=1 turns bounds checks on for every module loaded
   * afterwards, as the compile option does; the option is part of the
   * cache key, so checked and unchecked builds never mix. */
  {
    const char *env = getenv("ASC_BOUNDSCHECK");
    if (env != NULL && env[0] != '\0' && strcmp(env, "0") != 0)
      m->opts.boundsCheck = 1;
  }
  m->filename = asc__strdup(opts && opts->filename ? opts->filename
                                                   : "<string>");
  if (m->filename == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  m->opts.filename = m->filename;
  if (m->opts.globals == NULL || m->opts.numGlobals <= 0) {
    m->opts.globals = NULL;
    m->opts.numGlobals = 0;
    return ascSuccess;
  }
  m->globals = asc__calloc((size_t)m->opts.numGlobals, sizeof *m->globals);
  m->global_names = asc__calloc((size_t)m->opts.numGlobals,
                                sizeof *m->global_names);
  if (m->globals == NULL || m->global_names == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  for (i = 0; i < m->opts.numGlobals; i++) {
    const ascGlobalValue *g = &opts->globals[i];
    if (g->name == NULL)
      return asc__error(ascErrorInvalidValue, "global %d has no name", i);
    m->global_names[i] = asc__strdup(g->name);
    if (m->global_names[i] == NULL)
      return asc__error(ascErrorOutOfMemory, "out of memory");
    m->globals[i] = *g;
    m->globals[i].name = m->global_names[i];
  }
  m->opts.globals = m->globals;
  return ascSuccess;
}

static char *own_name(asc__pymodule *m, const char *s) {
  char *d = asc__strdup(s ? s : "");
  if (d != NULL)
    m->names[m->nnames++] = d;
  return d;
}

/* Copies the kernels' parameter tables into m. */
static ascError_t copy_kernels(asc__pymodule *m, const ascKernelInfo *kernels,
                               int n) {
  int i, j, total = n;

  for (i = 0; i < n; i++) {
    if (kernels[i].numParams < 0 ||
        (kernels[i].numParams > 0 && kernels[i].params == NULL))
      return asc__error(ascErrorInvalidValue, "bad parameter table");
    total += kernels[i].numParams;
  }
  m->kernels = asc__calloc((size_t)(n ? n : 1), sizeof *m->kernels);
  m->params = asc__calloc((size_t)(n ? n : 1), sizeof *m->params);
  m->names = asc__calloc((size_t)total + 1, sizeof *m->names);
  if (m->kernels == NULL || m->params == NULL || m->names == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  m->nkernels = n;
  for (i = 0; i < n; i++) {
    int np = kernels[i].numParams;
    drv_kernel *k = &m->kernels[i];
    k->info.name = own_name(m, kernels[i].name);
    m->params[i] = asc__calloc((size_t)(np ? np : 1), sizeof **m->params);
    if (k->info.name == NULL || m->params[i] == NULL)
      return asc__error(ascErrorOutOfMemory, "out of memory");
    for (j = 0; j < np; j++) {
      m->params[i][j] = kernels[i].params[j];
      m->params[i][j].name = own_name(m, kernels[i].params[j].name);
      if (m->params[i][j].name == NULL)
        return asc__error(ascErrorOutOfMemory, "out of memory");
    }
    k->info.numParams = np;
    k->info.numResults = kernels[i].numResults;
    k->info.params = m->params[i];
  }
  return ascSuccess;
}

ascError_t asc__pymodule_create_with(asc__pymodule **out, const char *text,
                                     size_t len,
                                     const ascCompileOptions *opts,
                                     const ascKernelInfo *kernels,
                                     int nkernels,
                                     asc__pymodule_stages_fn stages,
                                     void *stages_ud, asc__cache *cache) {
  asc__pymodule *m;
  ascError_t err;

  if (out == NULL)
    return asc__error(ascErrorInvalidValue, "NULL module pointer");
  *out = NULL;
  if ((text == NULL && len > 0) || stages == NULL || nkernels < 0 ||
      (nkernels > 0 && kernels == NULL))
    return asc__error(ascErrorInvalidValue, "NULL text, kernels or stages");
  m = asc__calloc(1, sizeof *m);
  if (m == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  m->text = asc__malloc(len + 1);
  if (m->text == NULL) {
    asc__free(m);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  if (len > 0)
    memcpy(m->text, text, len);
  m->text[len] = '\0';
  m->len = len;
  m->stages = stages;
  m->stages_ud = stages_ud;
  m->cache = cache;
  err = asc__spectab_init(&m->specs, drop_spec);
  if (err != ascSuccess) {
    asc__free(m->text);
    asc__free(m);
    return err;
  }
  asc__spectab_set_limit(&m->specs, (size_t)asc__env_u64(&max_loaded_env), spec_busy);
  m->magic = PYMODULE_MAGIC;
  err = copy_opts(m, opts);
  if (err == ascSuccess)
    err = copy_kernels(m, kernels, nkernels);
  if (err != ascSuccess) {
    asc__pymodule_destroy(m);
    return err;
  }
  *out = m;
  return ascSuccess;
}

/* ------------------------------------------------------ Python stages */

static int32_t first_line(const ascCompileOptions *o) {
  return o != NULL && o->firstLine > 0 ? o->firstLine : 1;
}

/* The status of a compilation context after its catch point. */
static ascError_t cctx_status(asc__cctx *c, ascError_t err) {
  if (c->fail == ASC_FAIL_OOM)
    return asc__error(ascErrorOutOfMemory, "out of memory compiling %s",
                      c->filename);
  if (c->fail == ASC_FAIL_INTERNAL)
    return asc__error_text(ascErrorInternal, asc__buf_str(&c->diag));
  if (c->fail != ASC_FAIL_NONE || c->nerrors > 0)
    return asc__error_text(ascErrorCompile, asc__buf_str(&c->diag));
  return err;
}

/* The per-specialisation stages for modules made from Python text.  Each
 * run parses the text again into its own context: inference writes types
 * into the tree, so specialisations built at the same time (or one that
 * unwound half-way) must not share one.  Parsing costs far less than the C
 * compiler, and runs only on a disk-cache miss. */
static ascError_t py_stages(void *ud, asc__pymodule *m, int kernel,
                            const asc__spec_req *r, asc__buf *out,
                            unsigned *fastmath) {
  const ascKernelInfo *info = &m->kernels[kernel].info;
  asc__cctx c;
  jmp_buf jb;

  ASC_UNUSED(ud);
  asc__cctx_init(&c, m->opts.filename, m->text, m->len, first_line(&m->opts));
  asc__cctx_set_opts(&c, r->opts);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    uint64_t t0 = asc__trace_clock();
    asc__ast_module *am =
        asc__frontend(&c, m->opts.globals, m->opts.numGlobals);
    asc__ast_func *fn = asc__module_func(am, info->name);
    asc__compile_out co;

    ASC_TRACE(asc__trace_span("compile", "front end", info->name, 0, t0));
    ASC_CHECK(&c, fn != NULL && fn->nparams == r->sig->nparams);
    /* Module-wide options fill in what the decorator left unsaid. */
    if (m->opts.boundsCheck && fn->opts.boundscheck < 0)
      fn->opts.boundscheck = 1;
    if (m->opts.debug && fn->opts.debug < 0)
      fn->opts.debug = 1;
    /* Type errors are in c's diagnostics; cctx_status reports them. */
    t0 = asc__trace_clock();
    asc__compile_in in = {.module = am,
                          .kernel = fn,
                          .sig = r->sig,
                          .may_alias = r->may_alias,
                          .stop = ASC_STOP_C};
    if (asc__compile_kernel(&c, &in, &co, out))
      *fastmath = co.fastmath | (co.work_bounded ? 0 : ASC__STAGES_UNBOUNDED);
    ASC_TRACE(asc__trace_span("compile", "types, passes, emit C",
                              info->name, 0, t0));
  }
  {
    ascError_t err = cctx_status(&c, ascSuccess);
    asc__cctx_free(&c);
    return err;
  }
}

/* ------------------------------------------------- kernel table index
 *
 * A module's kernel table, what its front end yields, is kept in the
 * kernel cache's index (docs/cache.md, "Index") under the text, the
 * options and the versions (asc__jit_module_key), so that a process that
 * loads a module some process loaded before skips the front end.  One
 * line per kernel, "name numParams numResults", then one per parameter,
 * "name isTensor dtype ndim generic isConstExpr isWritten numberAsArray
 * useLine", fields separated by tabs. */

static void table_write(asc__buf *b, const ascKernelInfo *ki, int n) {
  asc__buf_printf(b, "%d\n", n);
  for (int i = 0; i < n; i++) {
    asc__buf_printf(b, "%s\t%d\t%d\n", ki[i].name, ki[i].numParams,
                    ki[i].numResults);
    for (int j = 0; j < ki[i].numParams; j++) {
      const ascKernelParamInfo *p = &ki[i].params[j];
      asc__buf_printf(b, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", p->name,
                      p->isTensor, (int)p->dtype, p->ndim, p->generic,
                      p->isConstExpr, p->isWritten, p->numberAsArray,
                      p->useLine);
    }
  }
}

/* The next line of *p (before end) split at tabs into at most max fields,
 * NUL-terminated in place; the number of fields, or -1. */
static int table_fields(char **p, char *end, char **f, int max) {
  char *nl = memchr(*p, '\n', (size_t)(end - *p));
  int n = 0;

  if (nl == NULL)
    return -1;
  *nl = '\0';
  for (char *q = *p; n < max;) {
    f[n++] = q;
    q = strchr(q, '\t');
    if (q == NULL)
      break;
    *q++ = '\0';
  }
  *p = nl + 1;
  return n;
}

static bool table_int(const char *s, long lo, long hi, int *out) {
  char *e;
  long v;
  errno = 0;
  v = strtol(s, &e, 10);
  if (errno != 0 || e == s || *e != '\0' || v < lo || v > hi)
    return false;
  *out = (int)v;
  return true;
}

/* Reads a table written by table_write from rec (changed in place; the
 * names point into it).  *ki and its parameter arrays are asc__calloc'd
 * (table_free).  False for anything but a whole, well-formed table. */
static bool table_read(char *rec, size_t len, ascKernelInfo **ki, int *nk) {
  char *p = rec, *end = rec + len, *f[9];
  int n, i, j;

  *ki = NULL;
  *nk = 0;
  if (table_fields(&p, end, f, 1) != 1 || !table_int(f[0], 1, 1 << 16, &n))
    return false;
  *ki = asc__calloc((size_t)n, sizeof **ki);
  if (*ki == NULL)
    return false;
  for (i = 0; i < n; i++) {
    ascKernelInfo *k = &(*ki)[i];
    ascKernelParamInfo *pi;
    if (table_fields(&p, end, f, 3) != 3 || f[0][0] == '\0' ||
        !table_int(f[1], 0, 1 << 16, &k->numParams) ||
        !table_int(f[2], 0, 1 << 16, &k->numResults))
      break;
    k->name = f[0];
    pi = asc__calloc((size_t)k->numParams + 1, sizeof *pi);
    if (pi == NULL)
      break;
    k->params = pi;
    *nk = i + 1;
    for (j = 0; j < k->numParams; j++) {
      int v[8];
      if (table_fields(&p, end, f, 9) != 9 || f[0][0] == '\0')
        break;
      for (int m = 0; m < 8; m++)
        if (!table_int(f[m + 1], -1, INT32_MAX, &v[m]))
          goto bad;
      if (v[1] < 0 || v[1] > (int)ascDataTypeCount)
        goto bad;
      pi[j].name = f[0];
      pi[j].isTensor = v[0];
      pi[j].dtype = (ascDataType)v[1];
      pi[j].ndim = v[2];
      pi[j].generic = v[3];
      pi[j].isConstExpr = v[4];
      pi[j].isWritten = v[5];
      pi[j].numberAsArray = v[6];
      pi[j].useLine = v[7];
    }
    if (j < k->numParams)
      break;
  }
bad:
  return i == n && p == end;
}

static void table_free(ascKernelInfo *ki, int nk) {
  for (int i = 0; ki != NULL && i < nk; i++)
    asc__free((void *)ki[i].params);
  asc__free(ki);
}

/* The module from the index record of its text, when there is one. */
static bool create_from_index(asc__pymodule **out, asc__cache *cache,
                              const asc__cache_key *mk, const char *text,
                              size_t len, const ascCompileOptions *opts,
                              ascError_t *err) {
  asc__buf rec;
  ascKernelInfo *ki = NULL;
  int nk = 0;
  bool found = false;
  uint64_t t0 = asc__trace_clock();

  asc__buf_init(&rec);
  if (asc__cache_index_get(cache, mk, &rec) && rec.len > 0 &&
      table_read(rec.data, rec.len, &ki, &nk)) {
    found = true;
    *err = asc__pymodule_create_with(out, text, len, opts, ki, nk, py_stages,
                                     NULL, NULL);
    ASC_TRACE(asc__trace_span("compile", "kernel table (index)",
                              opts && opts->filename ? opts->filename
                                                     : "<string>",
                              0, t0));
  }
  table_free(ki, nk);
  asc__buf_free(&rec);
  return found;
}

ascError_t asc__pymodule_create(asc__pymodule **out, const char *text,
                                size_t len, const ascCompileOptions *opts) {
  asc__compile_opts copts;
  asc__cctx c;
  jmp_buf jb;
  ascKernelInfo *volatile infos = NULL;
  volatile int nk = 0;
  ascError_t err;
  uint64_t t0;
  asc__cache *cache;
  asc__cache_key mk;

  if (out == NULL || text == NULL)
    return asc__error(ascErrorInvalidValue, "NULL module pointer or text");
  *out = NULL;
  if (opts != NULL && (opts->fastmath & ~ASC_FASTMATH_ALL) != 0)
    return asc__error(ascErrorInvalidValue,
                      "ascCompileOptions.fastmath %#x has bits that name no "
                      "ASC_FASTMATH_* flag (valid: %#x)",
                      opts->fastmath, ASC_FASTMATH_ALL);
  /* The front end's result, if a process made it before.  The cache is
   * only a hint here: when it cannot be opened the front end runs. */
  if (asc__cache_default(&cache) == ascSuccess) {
    asc__jit_module_key(&mk, text, len, opts);
    if (create_from_index(out, cache, &mk, text, len, opts, &err))
      return err;
  } else {
    cache = NULL;
  }
  asc__cctx_init(&c, opts && opts->filename ? opts->filename : "<string>",
                 text, len, first_line(opts));
  /* the front end's budget */
  asc__jit_compile_opts(&copts, 0, 0);
  asc__cctx_set_opts(&c, &copts);
  c.catch_point = &jb;
  t0 = asc__trace_clock();
  if (setjmp(jb) == 0) {
    asc__ast_module *am = asc__frontend(&c, opts ? opts->globals : NULL,
                                        opts ? opts->numGlobals : 0);
    ascKernelInfo *ki;
    int i, n = 0;

    for (i = 0; i < am->nfuncs; i++)
      n += am->funcs[i]->kind == ASC_FUNC_KERNEL;
    if (n == 0 && c.nerrors == 0) {
      asc__loc top = {c.first_line, 1};
      asc__diag_error(&c, top, "no @asc.kernel function in %s: nothing "
                      "to launch (decorate each kernel with @asc.kernel)",
                      c.filename);
    }
    ki = asc__arena_alloc(&c, sizeof *ki * (size_t)(n + 1));
    n = 0;
    for (i = 0; i < am->nfuncs; i++) {
      asc__ast_func *fn = am->funcs[i];
      ascKernelParamInfo *pi;
      asc__sig sig;
      if (fn->kind != ASC_FUNC_KERNEL)
        continue;
      pi = asc__arena_alloc(&c, sizeof *pi * (size_t)(fn->nparams + 1));
      if (!asc__kernel_params(&c, fn, pi))
        continue; /* reported; the module fails below */
      /* A kernel whose annotations fix every type is checked now, so its
       * type errors fail the load, not its first launch. */
      if (asc__sig_from_annotations(&c, fn->name, pi, fn->nparams, &sig))
        (void)asc__infer_kernel(&c, am, fn, &sig);
      ki[n].name = fn->name;
      ki[n].numParams = fn->nparams;
      ki[n].numResults = asc__kernel_nresults(&c, fn);
      if (ki[n].numResults < 0)
        ki[n].numResults = 0; /* reported; the module fails below */
      ki[n].params = pi;
      n++;
    }
    infos = ki;
    nk = n;
  }
  ASC_TRACE(asc__trace_span("compile", "front end (module)", c.filename, 0,
                            t0));
  err = cctx_status(&c, ascSuccess);
  /* The tables are copied out of the arena before it goes. */
  if (err == ascSuccess)
    err = asc__pymodule_create_with(out, text, len, opts, infos, nk,
                                    py_stages, NULL, NULL);
  if (err == ascSuccess && cache != NULL) {
    asc__buf rec;
    asc__buf_init(&rec);
    table_write(&rec, infos, nk);
    if (!rec.oom)
      asc__cache_index_put(cache, &mk, rec.data, rec.len);
    asc__buf_free(&rec);
  }
  asc__cctx_free(&c);
  return err;
}

void asc__pymodule_destroy(asc__pymodule *m) {
  int i;

  if (!valid(m))
    return;
  m->magic = 0;
  asc__spectab_destroy(&m->specs);
  for (i = 0; i < m->nnames; i++)
    asc__free(m->names[i]);
  for (i = 0; m->params != NULL && i < m->nkernels; i++)
    asc__free(m->params[i]);
  for (i = 0; m->global_names != NULL && i < m->opts.numGlobals; i++)
    asc__free(m->global_names[i]);
  asc__free(m->names);
  asc__free(m->params);
  asc__free(m->kernels);
  asc__free(m->global_names);
  asc__free(m->globals);
  asc__free(m->filename);
  asc__free(m->text);
  asc__free(m);
}

int asc__pymodule_nkernels(const asc__pymodule *m) {
  return valid(m) ? m->nkernels : 0;
}

ascError_t asc__pymodule_kernel_info(const asc__pymodule *m, int i,
                                     ascKernelInfo *info) {
  if (!valid(m))
    return asc__error(ascErrorInvalidHandle, "invalid module");
  if (info == NULL)
    return asc__error(ascErrorInvalidValue, "NULL info");
  if (i < 0 || i >= m->nkernels)
    return asc__error(ascErrorInvalidKernel, "no kernel %d", i);
  *info = m->kernels[i].info;
  return ascSuccess;
}

/* ------------------------------------------------------ specialisation */

typedef struct emit_ctx {
  asc__pymodule *m;
  int kernel;
  const asc__spec_req *req;
  unsigned fastmath;   /* the module's mode, then the kernel's */
} emit_ctx;

static ascError_t emit_stages(void *ud, asc__buf *out) {
  emit_ctx *e = ud;
  return e->m->stages(e->m->stages_ud, e->m, e->kernel, e->req, out,
                      &e->fastmath);
}

/* 0 (unset): the device's size; 1 KiB .. 1 GiB with K/M suffixes */
static asc__env_num l1_env = {"ASC_L1_CACHE", 0, 1024, (uint64_t)1 << 30,
                              ASC__ENV_SUFFIXES, false};

uint64_t asc__jit_l1d_bytes(uint64_t device_l1d) {
  uint64_t v = asc__env_u64(&l1_env);
  return v != 0 ? v : device_l1d;
}

/* The inputs of kernel i's compilation for r, r->opts and *e (in->copts
 * is copts, read from the environment now). */
static void spec_inputs(asc__pymodule *m, int i, asc__spec_req *r,
                        uint64_t l1d_bytes, asc__compile_opts *copts,
                        emit_ctx *e, asc__jit_inputs *in) {
  e->m = m;
  e->kernel = i;
  e->req = r;
  e->fastmath = m->opts.fastmath & ASC_FASTMATH_ALL;
  asc__jit_compile_opts(copts, e->fastmath, asc__jit_l1d_bytes(l1d_bytes));
  r->opts = copts;
  memset(in, 0, sizeof *in);
  in->kernel_name = m->kernels[i].info.name;
  /* The whole module text: it holds the kernel and every helper it can
   * call.  (A change to an unrelated kernel of the file recompiles this
   * one too; the front end's call graph can narrow it.) */
  in->source = m->text;
  in->source_len = m->len;
  in->signature = r->text;
  in->globals = m->opts.globals;
  in->nglobals = m->opts.numGlobals;
  in->opts = &m->opts;
  in->fastmath = &e->fastmath;
  in->copts = copts;
}

/* Compiles (or loads from the disk cache) kernel i for r (its options
 * still to fill: read here, once for the key and the compilation); the
 * quick tier when quick and the options allow it. */
static ascError_t build_spec(asc__pymodule *m, int i, asc__spec_req *r,
                             uint64_t l1d_bytes, bool quick, drv_spec **out) {
  asc__compile_opts copts;
  asc__jit_inputs in;
  emit_ctx e;
  drv_spec *s;
  const asc_kernel_desc *d = NULL;
  ascError_t err;
  uint64_t t0;
  bool got_quick = false;

  *out = NULL;
  s = asc__calloc(1, sizeof *s);
  if (s == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  spec_inputs(m, i, r, l1d_bytes, &copts, &e, &in);
  t0 = asc__trace_clock();
  if (quick)
    err = asc__jit_load_quick(m->cache, &in, emit_stages, &e, &s->lib, &d,
                              &got_quick);
  else
    err = asc__jit_load(m->cache, &in, emit_stages, &e, &s->lib, &d);
  ASC_TRACE(asc__trace_span("compile", in.kernel_name, r->text, 0, t0));
  if (err == ascSuccess)
    ASC_TRACE(asc__trace_sig(d, r->text));
  if (got_quick)
    ASC_TRACE(asc__trace_mark("compile", "quick tier", in.kernel_name));
  r->opts = NULL;
  if (err != ascSuccess) {
    asc__free(s);
    return err;
  }
  atomic_init(&s->desc, d);
  atomic_init(&s->quick, got_quick);
  /* the quick code's launches are timed (tier_launch) */
  atomic_store(&s->inflight.timed, got_quick);
  atomic_init(&s->launches, 1);
  atomic_init(&s->up, NULL);
  *out = s;
  return ascSuccess;
}

/* Whether a launch of k with args is small enough for the quick tier
 * (jit/tier.h): its arrays span at most limit bytes together, none has
 * more than limit elements (a broadcast view's span is small), and no
 * integer scalar exceeds ASC__TIER_MAX_INT in magnitude (a loop bound
 * can make a kernel's work large with tiny arrays). */
static bool launch_small(const ascKernelInfo *k, void *const *args,
                         uint64_t limit) {
  uint64_t bytes = 0;

  for (int i = 0; i < k->numParams; i++) {
    const ascKernelParamInfo *p = &k->params[i];
    ascDataType dt = p->dtype;
    const void *v = args[i];
    int64_t x;
    if (p->isTensor) {
      const ascTensor *t = args[i];
      uintptr_t lo, hi;
      uint64_t elems = 1;
      if (tensor_span(t, &lo, &hi))
        bytes += hi - lo;
      /* a broadcast view (stride 0) spans less than its loops run over
       * (numpy keeps the element count within int64) */
      for (int d = 0; d < t->ndim && d < ASC_MAX_DIMS; d++) {
        if (t->shape[d] <= 0) {
          elems = 0;
          break;
        }
        if (elems <= limit)
          elems *= (uint64_t)t->shape[d];
      }
      if (bytes > limit || elems > limit)
        return false;
      continue;
    }
    if (p->generic || !asc__dtype_valid(dt)) {
      const ascScalar *sc = args[i];
      dt = sc->dtype;
      v = &sc->value;
    }
    switch (dt) {
    case ascInt8: x = *(const int8_t *)v; break;
    case ascInt16: x = *(const int16_t *)v; break;
    case ascInt32: x = *(const int32_t *)v; break;
    case ascInt64: x = *(const int64_t *)v; break;
    case ascUInt8: x = *(const uint8_t *)v; break;
    case ascUInt16: x = *(const uint16_t *)v; break;
    case ascUInt32: x = (int64_t)*(const uint32_t *)v; break;
    case ascUInt64:
      x = *(const uint64_t *)v > ASC__TIER_MAX_INT ? INT64_MAX : 0;
      break;
    default: x = 0; break;
    }
    if (x > ASC__TIER_MAX_INT || x < -ASC__TIER_MAX_INT)
      return false;
  }
  return true;
}

/* Whether the quick code of s ran slowly: its finished launches took
 * ASC_TIER_SLOW_US or more on average, dispatch to completion. */
static bool ran_slow(drv_spec *s) {
  uint64_t done = atomic_load(&s->inflight.retired);
  uint64_t busy = atomic_load(&s->inflight.busy_ns);
  return done > 0 && busy / done >= asc__tier_slow_ns();
}

/* A launch of the quick tier s (pinned): from the second on, a heavy one
 * (not small, or one after quick launches that ran ASC_TIER_SLOW_US on
 * average: by default any that finished) waits for the optimised build,
 * or builds it now, and runs it; a light one queues the build for the
 * background thread and runs the quick code.  A failed optimised build
 * leaves the quick code in place. */
static void tier_launch(asc__pymodule *m, int i, asc__spec_req *r,
                        uint64_t l1d_bytes, drv_spec *s, bool heavy) {
  unsigned n = atomic_fetch_add(&s->launches, 1) + 1;
  asc__tier_job *j;

  if (!heavy && n < 2)
    return;
  heavy = heavy || ran_slow(s);
  asc__tier_lock();
  while (s->making)
    asc__tier_wait();
  if (atomic_load(&s->up) == NULL) {
    asc__compile_opts copts;
    asc__jit_inputs in;
    emit_ctx e;
    ascError_t err;
    s->making = true;
    asc__tier_unlock();
    spec_inputs(m, i, r, l1d_bytes, &copts, &e, &in);
    err = asc__jit_tier_job(m->cache, &in, emit_stages, &e, &j);
    r->opts = NULL;
    asc__tier_lock();
    s->making = false;
    asc__tier_broadcast();
    if (err != ascSuccess) {
      /* no optimised build: the quick code stays */
      atomic_store(&s->quick, false);
      atomic_store(&s->inflight.timed, false);
      asc__tier_unlock();
      return;
    }
    j->target = &s->desc;
    j->quick = &s->quick;
    j->timed = &s->inflight.timed;
    atomic_store(&s->up, j);
  }
  j = atomic_load(&s->up);
  asc__tier_unlock();
  if (heavy)
    asc__tier_run_now(j);
  else
    asc__tier_enqueue(j);
}

ascError_t asc__pymodule_specialize_pin(asc__pymodule *m, int i,
                                        void *const *args,
                                        uint64_t l1d_bytes,
                                        const asc_kernel_desc **desc,
                                        asc__inflight **inflight,
                                        struct asc__spec **pin) {
  /* Stack storage for the usual kernel: a launch that hits allocates
   * nothing. */
  asc__sig_param small[16], *sp = small;
  char small_text[512];
  unsigned char memo_key[ASC__SPECTAB_MEMO_KEY];
  size_t memo_len;
  const ascKernelInfo *k;
  asc__sig sig;
  asc__buf text;
  asc__spec_req r;
  asc__spec *claim, *p = NULL;
  asc__tier_mode mode = ASC__TIER_OFF;
  void *v;
  ascError_t err;
  drv_spec *s = NULL;
  bool small_launch = true;

  if (desc != NULL)
    *desc = NULL;
  if (pin != NULL)
    *pin = NULL;
  if (inflight != NULL)
    *inflight = NULL;
  if (!valid(m))
    return asc__error(ascErrorInvalidHandle, "invalid module");
  if (desc == NULL || pin == NULL || inflight == NULL)
    return asc__error(ascErrorInvalidValue, "NULL desc, inflight or pin");
  if (i < 0 || i >= m->nkernels)
    return asc__error(ascErrorInvalidKernel, "no kernel %d", i);
  k = &m->kernels[i].info;
  if (k->numParams > (int)ASC_ARRAY_SIZE(small) &&
      (sp = asc__malloc(sizeof *sp * (size_t)k->numParams)) == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  asc__sig_of_args(&sig, sp, k->name, k->params, k->numParams, args);
  r.sig = &sig;
  r.may_alias = asc__args_overlap(k, args);
  r.opts = NULL;
  /* The memo's key: the signature's own bytes (every field set, padding
   * zeroed by asc__sig_of_args), so that a launch like the kernel's last
   * one skips the text and its hash. */
  memo_len = sizeof *sp * (size_t)k->numParams + 1;
  if (memo_len <= sizeof memo_key) {
    if (k->numParams > 0)
      memcpy(memo_key, sp, memo_len - 1);
    memo_key[memo_len - 1] = (unsigned char)r.may_alias;
    if (asc__spectab_memo_get(&m->specs, i, memo_key, memo_len, &v, &p)) {
      s = v;
      if (!atomic_load(&s->quick)) {
        if (sp != small)
          asc__free(sp);
        *desc = atomic_load_explicit(&s->desc, memory_order_acquire);
        *inflight = &s->inflight;
        *pin = p;
        return ascSuccess;
      }
      /* the quick tier: the way below decides its tier-up */
      asc__spectab_unpin(p);
      p = NULL;
      s = NULL;
    }
  }
  asc__buf_init_on(&text, small_text, sizeof small_text);
  asc__sig_format(&text, &sig);
  if (r.may_alias)
    asc__buf_puts(&text, " aliased");
  r.text = text.data;
  err = text.oom ? asc__error(ascErrorOutOfMemory, "out of memory")
                 : asc__spectab_lookup(&m->specs, i, text.data, text.len, &v,
                                       &claim, &p);
  if (err == ascSuccess) {
    s = v;
    if (claim != NULL || atomic_load(&s->quick)) {
      mode = asc__tier_mode_env();
      small_launch = mode != ASC__TIER_OFF &&
                     launch_small(k, args, asc__tier_small_bytes());
    }
  }
  if (err == ascSuccess && claim != NULL) {
    err = build_spec(m, i, &r, l1d_bytes,
                     mode == ASC__TIER_FIRST ||
                         (mode == ASC__TIER_AUTO && small_launch),
                     &s);
    asc__spectab_publish(&m->specs, claim, err, s, &p);
  } else if (err == ascSuccess && atomic_load(&s->quick)) {
    tier_launch(m, i, &r, l1d_bytes, s, !small_launch);
  }
  asc__buf_free(&text);
  if (sp != small)
    asc__free(sp);
  if (err == ascSuccess && memo_len <= sizeof memo_key)
    asc__spectab_memo_put(&m->specs, i, memo_key, memo_len, p);
  if (err == ascSuccess) {
    *desc = atomic_load_explicit(&s->desc, memory_order_acquire);
    *inflight = &s->inflight;
    *pin = p;
  }
  return err;
}

ascError_t asc__pymodule_specialize(asc__pymodule *m, int i,
                                    void *const *args,
                                    const asc_kernel_desc **desc) {
  asc__inflight *inflight;
  asc__spec *pin;
  ascError_t err =
      asc__pymodule_specialize_pin(m, i, args, 0, desc, &inflight, &pin);

  asc__spectab_unpin(pin);
  return err;
}

void asc__pymodule_unpin(struct asc__spec *pin) { asc__spectab_unpin(pin); }

size_t asc__pymodule_loaded(asc__pymodule *m, uint64_t *evictions) {
  if (!valid(m)) {
    if (evictions != NULL)
      *evictions = 0;
    return 0;
  }
  return asc__spectab_loaded(&m->specs, evictions);
}
