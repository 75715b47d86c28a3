/*
 * The driver: Python module text -> kernels -> specialisations.
 *
 *   asc__pymodule_create       copy text and options; front end once
 *   asc__pymodule_specialize   launch args -> signature text
 *        |                       -> spectab lookup (hash of the text only)
 *        | miss (this thread claimed it; others wait for it)
 *        v
 *     jit: cache key over inputs -> cache hit? dlopen
 *                                -> miss: stages() -> C -> cc -> publish
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

#include <inttypes.h>
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
  const asc_kernel_desc *desc;
  asc__inflight inflight;        /* its launches queued or running */
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

static const char *const dtype_short[ascDataTypeCount] = {
    "bool", "i8",  "i16", "i32", "i64", "u8",  "u16",
    "u32",  "u64", "f16", "bf16", "f32", "f64", "c64", "c128"};

static bool dtype_ok(ascDataType d) {
  return (int)d >= 0 && d < ascDataTypeCount;
}

/* Text built on the stack for the usual short signature, on the heap for
 * long ones, so a launch that hits allocates nothing. */
typedef struct sigtext {
  char *p;
  size_t len, cap;
  bool heap, oom;
  char small[512];
} sigtext;

static void st_init(sigtext *s) {
  s->p = s->small;
  s->len = 0;
  s->cap = sizeof s->small;
  s->heap = false;
  s->oom = false;
  s->small[0] = '\0';
}

static void st_free(sigtext *s) {
  if (s->heap)
    asc__free(s->p);
}

/* Makes room for n more characters and the terminator. */
static bool st_reserve(sigtext *s, size_t n) {
  size_t cap;
  char *p;

  if (s->oom)
    return false;
  if (n < s->cap - s->len)
    return true;
  cap = (s->len + n + 1) * 2;
  p = s->heap ? asc__realloc(s->p, cap) : asc__malloc(cap);
  if (p == NULL) {
    s->oom = true;
    return false;
  }
  if (!s->heap)
    memcpy(p, s->p, s->len + 1);
  s->p = p;
  s->cap = cap;
  s->heap = true;
  return true;
}

static void st_printf(sigtext *s, const char *fmt, ...) ASC_PRINTF(2, 3);
static void st_printf(sigtext *s, const char *fmt, ...) {
  va_list ap;
  int n;

  if (s->oom)
    return;
  va_start(ap, fmt);
  n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
  va_end(ap);
  if (n < 0) {
    s->oom = true;
    return;
  }
  if ((size_t)n >= s->cap - s->len) {
    if (!st_reserve(s, (size_t)n))
      return;
    va_start(ap, fmt);
    vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
    va_end(ap);
  }
  s->len += (size_t)n;
}

/* st_printf(s, "%s", str) without the formatter: signatures are built
 * at every launch of a Python kernel. */
static void st_puts(sigtext *s, const char *str) {
  size_t n = strlen(str);

  if (!st_reserve(s, n))
    return;
  memcpy(s->p + s->len, str, n + 1);
  s->len += n;
}

/* Row-major contiguity; size-1 dimensions and empty tensors do not
 * constrain strides. */
static bool contiguous(const ascTensor *t) {
  int64_t expect = 1;
  int d;

  for (d = 0; d < t->ndim; d++)
    if (t->shape[d] == 0)
      return true;
  for (d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != expect)
      return false;
    if (__builtin_mul_overflow(expect, t->shape[d], &expect))
      return false; /* no strides can match: the launch checks reject it */
  }
  return true;
}

static void scalar_value(sigtext *s, ascDataType dt, const void *p) {
  switch (dt) {
  case ascBool: st_printf(s, "=%s", *(const uint8_t *)p ? "True" : "False");
    break;
  case ascInt8: st_printf(s, "=%d", *(const int8_t *)p); break;
  case ascInt16: st_printf(s, "=%d", *(const int16_t *)p); break;
  case ascInt32: st_printf(s, "=%" PRId32, *(const int32_t *)p); break;
  case ascInt64: st_printf(s, "=%" PRId64, *(const int64_t *)p); break;
  case ascUInt8: st_printf(s, "=%u", *(const uint8_t *)p); break;
  case ascUInt16: st_printf(s, "=%u", *(const uint16_t *)p); break;
  case ascUInt32: st_printf(s, "=%" PRIu32, *(const uint32_t *)p); break;
  case ascUInt64: st_printf(s, "=%" PRIu64, *(const uint64_t *)p); break;
  case ascFloat32: st_printf(s, "=%a", (double)*(const float *)p); break;
  case ascFloat64: st_printf(s, "=%a", *(const double *)p); break;
  default: /* 16-bit floats: the bits */
    st_printf(s, "=0x%04x", *(const uint16_t *)p);
    break;
  }
}

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
  int i, j;

  for (i = 0; i < k->numParams; i++) {
    uintptr_t alo, ahi, blo, bhi;
    if (!k->params[i].isTensor || !tensor_span(args[i], &alo, &ahi))
      continue;
    for (j = i + 1; j < k->numParams; j++)
      if (k->params[j].isTensor && tensor_span(args[j], &blo, &bhi) &&
          alo < bhi && blo < ahi)
        return true;
  }
  return false;
}

/* An ascScalar's value: value.i for bool and signed, value.u for
 * unsigned, value.f for floating types (asc.h). */
static void descriptor_value(sigtext *s, const ascScalar *v) {
  switch (v->dtype) {
  case ascUInt8:
  case ascUInt16:
  case ascUInt32:
  case ascUInt64:
    st_printf(s, "=%" PRIu64, v->value.u);
    break;
  case ascFloat16:
  case ascBFloat16:
  case ascFloat32:
  case ascFloat64:
    st_printf(s, "=%a", v->value.f);
    break;
  default:
    st_printf(s, "=%" PRId64, v->value.i);
    break;
  }
}

/* The canonical signature text of a launch, "k(f32[2], f32[1:s], int,
 * i64=3)"; ascErrorInvalidValue naming the parameter when an argument does
 * not fit. */
static ascError_t signature_of(const drv_kernel *k, void *const *args,
                               sigtext *s) {
  int i;

  st_puts(s, k->info.name);
  st_puts(s, "(");
  for (i = 0; i < k->info.numParams; i++) {
    const ascKernelParamInfo *p = &k->info.params[i];
    const void *a = args[i];

    if (i > 0)
      st_puts(s, ", ");
    if (a == NULL)
      return asc__error(ascErrorInvalidValue,
                        "%s: argument %d ('%s') is NULL", k->info.name, i,
                        p->name);
    if (p->isTensor) {
      const ascTensor *t = a;
      if (!dtype_ok(t->dtype) || t->ndim < 0 || t->ndim > ASC_MAX_DIMS)
        return asc__error(ascErrorInvalidValue,
                          "%s: argument '%s' is not a valid tensor "
                          "(dtype %d, ndim %d)",
                          k->info.name, p->name, (int)t->dtype, (int)t->ndim);
      if (!p->generic && (t->dtype != p->dtype ||
                          (p->ndim >= 0 && t->ndim != p->ndim)))
        return asc__error(ascErrorInvalidValue,
                          "%s: argument '%s' must be a %s tensor of ndim "
                          "%d, got %s of ndim %d",
                          k->info.name, p->name, ascDataTypeName(p->dtype),
                          p->ndim, ascDataTypeName(t->dtype), (int)t->ndim);
      {
        /* "<dtype>[<ndim>]", ":s" inside the brackets when strided */
        const char nd[] = {'[', (char)('0' + t->ndim), '\0'};
        _Static_assert(ASC_MAX_DIMS < 10, "ndim is one digit");
        st_puts(s, dtype_short[t->dtype]);
        st_puts(s, nd);
        st_puts(s, contiguous(t) ? "]" : ":s]");
      }
    } else if (p->generic) {
      const ascScalar *v = a;
      if (!dtype_ok(v->dtype))
        return asc__error(ascErrorInvalidValue,
                          "%s: argument '%s' has invalid dtype %d",
                          k->info.name, p->name, (int)v->dtype);
      if (v->weak)
        st_puts(s, v->dtype == ascBool      ? "bool"
                   : v->dtype == ascFloat64 ? "float"
                                            : "int");
      else
        st_puts(s, dtype_short[v->dtype]);
      if (p->isConstExpr)
        descriptor_value(s, v);
    } else {
      st_puts(s, dtype_short[p->dtype]);
      if (p->isConstExpr)
        scalar_value(s, p->dtype, a);
    }
  }
  st_puts(s, ")");
  if (asc__args_overlap(&k->info, args))
    st_puts(s, " aliased");
  if (s->oom)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  return ascSuccess;
}

/* ------------------------------------------------------------- modules */

static bool valid(const asc__pymodule *m) {
  return m != NULL && m->magic == PYMODULE_MAGIC;
}

static void drop_spec(void *v) {
  drv_spec *s = v;
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
                            const char *signature, void *const *args,
                            const asc__compile_opts *opts, asc__buf *out,
                            unsigned *fastmath) {
  const ascKernelInfo *info = &m->kernels[kernel].info;
  asc__cctx c;
  jmp_buf jb;
  volatile ascError_t err = ascSuccess;

  ASC_UNUSED(ud);
  ASC_UNUSED(signature);
  asc__cctx_init(&c, m->opts.filename, m->text, m->len, first_line(&m->opts));
  asc__cctx_set_opts(&c, opts);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    uint64_t t0 = asc__trace_clock();
    asc__ast_module *am =
        asc__frontend(&c, m->opts.globals, m->opts.numGlobals);
    asc__ast_func *fn = asc__module_func(am, info->name);
    asc__sig_param *sp;
    asc__sig sig;

    ASC_TRACE(asc__trace_span("compile", "front end", info->name, 0, t0));
    ASC_CHECK(&c, fn != NULL && fn->nparams == info->numParams);
    sp = asc__arena_alloc(&c, sizeof *sp * (size_t)(fn->nparams + 1));
    err = asc__sig_from_args(&sig, sp, info->name, info->params,
                             info->numParams, args);
    if (err == ascSuccess) {
      /* Module-wide options fill in what the decorator left unsaid. */
      if (m->opts.boundsCheck && fn->opts.boundscheck < 0)
        fn->opts.boundscheck = 1;
      if (m->opts.debug && fn->opts.debug < 0)
        fn->opts.debug = 1;
      /* Type errors are in c's diagnostics; cctx_status reports them. */
      t0 = asc__trace_clock();
      asc__compile_in in = {.module = am,
                            .kernel = fn,
                            .sig = &sig,
                            .may_alias =
                                asc__args_overlap(&m->kernels[kernel].info, args),
                            .stop = ASC_STOP_C};
      asc__compile_out co;
      if (asc__compile_kernel(&c, &in, &co, out))
        *fastmath = co.fastmath;
      ASC_TRACE(asc__trace_span("compile", "types, passes, emit C",
                                info->name, 0, t0));
    }
  }
  err = cctx_status(&c, err);
  asc__cctx_free(&c);
  return err;
}

ascError_t asc__pymodule_create(asc__pymodule **out, const char *text,
                                size_t len, const ascCompileOptions *opts) {
  asc__compile_opts copts;
  asc__cctx c;
  jmp_buf jb;
  ascKernelInfo *volatile infos = NULL;
  volatile int nk = 0;
  ascError_t err;

  if (out == NULL || text == NULL)
    return asc__error(ascErrorInvalidValue, "NULL module pointer or text");
  *out = NULL;
  if (opts != NULL && (opts->fastmath & ~ASC_FASTMATH_ALL) != 0)
    return asc__error(ascErrorInvalidValue,
                      "ascCompileOptions.fastmath %#x has bits that name no "
                      "ASC_FASTMATH_* flag (valid: %#x)",
                      opts->fastmath, ASC_FASTMATH_ALL);
  asc__cctx_init(&c, opts && opts->filename ? opts->filename : "<string>",
                 text, len, first_line(opts));
  /* the front end's budget */
  asc__jit_compile_opts(&copts, 0, 0);
  asc__cctx_set_opts(&c, &copts);
  c.catch_point = &jb;
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
  err = cctx_status(&c, ascSuccess);
  /* The tables are copied out of the arena before it goes. */
  if (err == ascSuccess)
    err = asc__pymodule_create_with(out, text, len, opts, infos, nk,
                                    py_stages, NULL, NULL);
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
  const char *signature;
  void *const *args;
  unsigned fastmath;   /* the module's mode, then the kernel's */
  const asc__compile_opts *opts;  /* in the key too */
} emit_ctx;

static ascError_t emit_stages(void *ud, asc__buf *out) {
  emit_ctx *e = ud;
  return e->m->stages(e->m->stages_ud, e->m, e->kernel, e->signature,
                      e->args, e->opts, out, &e->fastmath);
}

/* 0 (unset): the device's size; 1 KiB .. 1 GiB with K/M suffixes */
static asc__env_num l1_env = {"ASC_L1_CACHE", 0, 1024, (uint64_t)1 << 30,
                              ASC__ENV_SUFFIXES, false};

uint64_t asc__jit_l1d_bytes(uint64_t device_l1d) {
  uint64_t v = asc__env_u64(&l1_env);
  return v != 0 ? v : device_l1d;
}

/* Compiles (or loads from the disk cache) kernel i for signature sig,
 * with the compiler's options read now, once for the key and the
 * compilation. */
static ascError_t build_spec(asc__pymodule *m, int i, const char *sig,
                             void *const *args, uint64_t l1d_bytes,
                             drv_spec **out) {
  asc__compile_opts copts;
  asc__jit_inputs in;
  emit_ctx e = {m, i, sig, args, m->opts.fastmath & ASC_FASTMATH_ALL,
                &copts};
  drv_spec *s;
  ascError_t err;
  uint64_t t0;

  *out = NULL;
  s = asc__calloc(1, sizeof *s);
  if (s == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  asc__jit_compile_opts(&copts, e.fastmath, asc__jit_l1d_bytes(l1d_bytes));
  memset(&in, 0, sizeof in);
  in.kernel_name = m->kernels[i].info.name;
  /* The whole module text: it holds the kernel and every helper it can
   * call.  (A change to an unrelated kernel of the file recompiles this
   * one too; the front end's call graph can narrow it.) */
  in.source = m->text;
  in.source_len = m->len;
  in.signature = sig;
  in.globals = m->opts.globals;
  in.nglobals = m->opts.numGlobals;
  in.opts = &m->opts;
  in.fastmath = &e.fastmath;
  in.copts = &copts;
  t0 = asc__trace_clock();
  err = asc__jit_load(m->cache, &in, emit_stages, &e, &s->lib, &s->desc);
  ASC_TRACE(asc__trace_span("compile", in.kernel_name, sig, 0, t0));
  if (err == ascSuccess)
    ASC_TRACE(asc__trace_sig(s->desc, sig));
  if (err != ascSuccess) {
    asc__free(s);
    return err;
  }
  *out = s;
  return ascSuccess;
}

/* The type system's checks of launch arguments (asc__sig_from_args):
 * dtypes, ranks, extents, data pointers, each error naming the parameter.
 * Parameter storage is on the stack for the usual kernel. */
static ascError_t check_args(const drv_kernel *k, void *const *args) {
  asc__sig_param small[16], *sp = small;
  asc__sig sig;
  ascError_t err;
  int n = k->info.numParams;

  if (n > (int)ASC_ARRAY_SIZE(small)) {
    sp = asc__malloc(sizeof *sp * (size_t)n);
    if (sp == NULL)
      return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  err = asc__sig_from_args(&sig, sp, k->info.name, k->info.params, n, args);
  if (sp != small)
    asc__free(sp);
  return err;
}

ascError_t asc__pymodule_specialize_pin(asc__pymodule *m, int i,
                                        void *const *args,
                                        uint64_t l1d_bytes,
                                        const asc_kernel_desc **desc,
                                        asc__inflight **inflight,
                                        struct asc__spec **pin) {
  sigtext sig;
  asc__spec *claim, *p = NULL;
  void *v;
  ascError_t err;

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
  if (args == NULL && m->kernels[i].info.numParams > 0)
    return asc__error(ascErrorInvalidValue, "%s: NULL args",
                      m->kernels[i].info.name);
  err = check_args(&m->kernels[i], args);
  if (err != ascSuccess)
    return err;
  st_init(&sig);
  err = signature_of(&m->kernels[i], args, &sig);
  if (err == ascSuccess)
    err = asc__spectab_lookup(&m->specs, i, sig.p, sig.len, &v, &claim,
                              &p);
  if (err == ascSuccess && claim != NULL) {
    drv_spec *s = NULL;
    err = build_spec(m, i, sig.p, args, l1d_bytes, &s);
    asc__spectab_publish(&m->specs, claim, err, s, &p);
    v = s;
  }
  st_free(&sig);
  if (err == ascSuccess) {
    *desc = ((drv_spec *)v)->desc;
    *inflight = &((drv_spec *)v)->inflight;
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
