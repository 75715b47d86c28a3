/*
 * Specialisations compiled ahead of time: kernel name -> entries, each
 * with the signature it was compiled for, matched against launch
 * arguments.  The signatures are parsed once, at load, with the same
 * parser ascc read them with (sig.c).
 */

#include <setjmp.h>
#include <string.h>

#include "compiler/cctx.h"
#include "jit/driver.h"
#include "compiler/types/types.h"

typedef struct aot_spec {
  const asc_kernel_desc *desc;
  const char *signature;       /* in the shared object */
  bool may_alias;
  asc__sig_param *params;      /* owned */
} aot_spec;

typedef struct aot_kernel {
  ascKernelInfo info;
  ascKernelParamInfo *params;  /* owned; names point into the object */
  int nspecs;
  aot_spec *specs;             /* owned */
} aot_kernel;

struct asc__aot {
  char *path;
  int nkernels;
  aot_kernel *kernels;
};

void asc__aot_destroy(asc__aot *a) {
  if (a == NULL)
    return;
  for (int i = 0; i < a->nkernels; i++) {
    aot_kernel *k = &a->kernels[i];
    for (int j = 0; j < k->nspecs; j++)
      asc__free(k->specs[j].params);
    asc__free(k->specs);
    asc__free(k->params);
  }
  asc__free(a->kernels);
  asc__free(a->path);
  asc__free(a);
}

static aot_kernel *find(asc__aot *a, const char *name) {
  for (int i = 0; i < a->nkernels; i++)
    if (strcmp(a->kernels[i].info.name, name) == 0)
      return &a->kernels[i];
  return NULL;
}

/* The parameter table a kernel shows: from its first entry, tensors made
 * generic. */
static ascError_t kernel_init(aot_kernel *k, const asc_kernel_desc *d) {
  uint32_t n = d->nparams - (uint32_t)asc__kernel_results(d);

  k->info.name = d->name;
  k->info.numParams = (int)n;
  k->info.numResults = (int)(d->nparams - n);
  k->params = asc__calloc(n > 0 ? n : 1, sizeof *k->params);
  if (k->params == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  for (uint32_t j = 0; j < n; j++) {
    const asc_kparam *p = &d->params[j];
    ascKernelParamInfo *q = &k->params[j];
    q->name = p->name;
    q->isTensor = (p->flags & ASC_KPARAM_TENSOR) != 0;
    q->generic = q->isTensor || (p->flags & ASC_KPARAM_GENERIC) != 0;
    q->isConstExpr = (p->flags & ASC_KPARAM_CONSTEXPR) != 0;
    q->dtype = q->generic ? ascDataTypeCount : (ascDataType)p->dtype;
    q->ndim = q->isTensor ? -1 : 0;
    q->isWritten = q->isTensor; /* the ABI does not say: assume stores */
  }
  k->info.params = k->params;
  return ascSuccess;
}

/* Parses one entry's signature and checks it against the entry's
 * parameter table and its kernel's. */
static ascError_t spec_init(const char *path, aot_kernel *k,
                            const asc_kernel_desc *d, const asc_kspec *ks,
                            aot_spec *s) {
  asc__cctx c;
  jmp_buf jb;
  asc__sig *volatile sig = NULL;
  ascError_t err = ascSuccess;

  s->desc = d;
  s->signature = ks->signature;
  s->may_alias = (ks->flags & ASC_KSPEC_MAY_ALIAS) != 0;
  if (ks->signature == NULL)
    return asc__error(ascErrorInvalidModule,
                      "%s: kernel '%s' has no signature text", path, d->name);
  asc__cctx_init(&c, path, ks->signature, strlen(ks->signature), 1);
  c.catch_point = &jb;
  if (setjmp(jb) == 0)
    sig = asc__sig_parse(&c, ks->signature);
  if (c.fail == ASC_FAIL_OOM)
    err = asc__error(ascErrorOutOfMemory, "out of memory");
  else if (sig == NULL || sig->name == NULL ||
           strcmp(sig->name, d->name) != 0 ||
           sig->nparams != k->info.numParams ||
           (int)d->nparams != k->info.numParams + k->info.numResults ||
           asc__kernel_results(d) != k->info.numResults)
    err = asc__error(ascErrorInvalidModule,
                     "%s: kernel '%s' has a malformed signature '%s'", path,
                     d->name, ks->signature);
  for (int j = 0; err == ascSuccess && j < k->info.numParams; j++) {
    const asc_kparam *p = &d->params[j];
    const ascKernelParamInfo *q = &k->params[j];
    const asc__sig_param *sp = &sig->params[j];
    bool tensor = (p->flags & ASC_KPARAM_TENSOR) != 0;
    if (tensor != (q->isTensor != 0) || tensor != sp->is_tensor ||
        (!q->generic && q->dtype != sp->dtype) ||
        ((p->flags & ASC_KPARAM_GENERIC) != 0) != (q->generic && !tensor) ||
        sp->is_constexpr != (q->isConstExpr != 0) ||
        (tensor && (p->dtype != (int32_t)sp->dtype || p->ndim != sp->ndim)))
      err = asc__error(ascErrorInvalidModule,
                       "%s: kernel '%s': signature '%s' does not match its "
                       "parameter '%s'",
                       path, d->name, ks->signature, p->name);
  }
  if (err == ascSuccess) {
    size_t n = k->info.numParams > 0 ? (size_t)k->info.numParams : 1;
    s->params = asc__calloc(n, sizeof *s->params);
    if (s->params == NULL)
      err = asc__error(ascErrorOutOfMemory, "out of memory");
    else if (k->info.numParams > 0)
      memcpy(s->params, sig->params,
             sizeof *s->params * (size_t)k->info.numParams);
  }
  asc__cctx_free(&c);
  return err;
}

ascError_t asc__aot_create(asc__aot **out, const char *path,
                           const asc_module_desc *md,
                           const asc_kspecs_desc *sd) {
  asc__aot *a;
  ascError_t err = ascSuccess;

  *out = NULL;
  if (sd->abi_version < ASC_KABI_MIN_VERSION ||
      sd->abi_version > ASC_KABI_VERSION || sd->nkernels != md->nkernels ||
      (sd->nkernels > 0 && sd->specs == NULL))
    return asc__error(ascErrorInvalidModule,
                      "%s: its %s table does not describe its %u kernels",
                      path, ASC_SPECS_SYMBOL, (unsigned)md->nkernels);
  a = asc__calloc(1, sizeof *a);
  if (a == NULL || (a->path = asc__strdup(path)) == NULL ||
      (a->kernels = asc__calloc(md->nkernels > 0 ? md->nkernels : 1,
                                sizeof *a->kernels)) == NULL) {
    asc__aot_destroy(a);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  for (uint32_t i = 0; i < md->nkernels && err == ascSuccess; i++) {
    const asc_kernel_desc *d = &md->kernels[i];
    aot_kernel *k = find(a, d->name);
    aot_spec *grown;
    if (k == NULL) {
      k = &a->kernels[a->nkernels++];
      err = kernel_init(k, d);
      if (err != ascSuccess)
        break;
    }
    grown = asc__realloc(k->specs, sizeof *k->specs * (size_t)(k->nspecs + 1));
    if (grown == NULL) {
      err = asc__error(ascErrorOutOfMemory, "out of memory");
      break;
    }
    k->specs = grown;
    memset(&k->specs[k->nspecs], 0, sizeof *k->specs);
    err = spec_init(path, k, d, &sd->specs[i], &k->specs[k->nspecs]);
    k->nspecs++;
  }
  if (err != ascSuccess) {
    asc__aot_destroy(a);
    return err;
  }
  *out = a;
  return ascSuccess;
}

int asc__aot_nkernels(const asc__aot *a) { return a->nkernels; }

void asc__aot_kernel_info(const asc__aot *a, int i, ascKernelInfo *info) {
  *info = a->kernels[i].info;
}

static bool same_value(const asc__sig_param *a, const asc__sig_param *b) {
  if (asc__dtype_is_float(a->dtype))
    return a->value.value.f == b->value.value.f;
  if (a->dtype == ascBool)
    return (a->value.value.i != 0) == (b->value.value.i != 0);
  return a->value.value.i == b->value.value.i;
}

/* How well entry s fits the launch (sig, overlap): -1 when it does not;
 * else higher for more specialised code (contiguous layouts, restrict). */
static int fit(const aot_spec *s, const asc__sig *sig, bool overlap) {
  int score = 0;

  if (overlap && !s->may_alias)
    return -1;
  if (!s->may_alias)
    score++;
  for (int32_t j = 0; j < sig->nparams; j++) {
    const asc__sig_param *want = &s->params[j], *got = &sig->params[j];
    if (want->is_tensor != got->is_tensor || want->dtype != got->dtype)
      return -1;
    if (want->is_tensor) {
      if (want->ndim != got->ndim || (want->contiguous && !got->contiguous))
        return -1;
      score += want->contiguous;
    } else if (want->weak != got->weak ||
               (want->is_constexpr && !same_value(want, got))) {
      return -1;
    }
  }
  return score;
}

static ascError_t no_fit(const asc__aot *a, const aot_kernel *k,
                         const asc__sig *sig, bool overlap) {
  asc__buf b;
  ascError_t err;

  asc__buf_init(&b);
  asc__buf_printf(&b,
                  "ascLaunchKernel: kernel '%s' of %s (compiled ahead of "
                  "time) has no specialisation for ",
                  k->info.name, a->path);
  asc__sig_format(&b, sig);
  if (overlap)
    asc__buf_puts(&b, " with overlapping tensors");
  asc__buf_printf(&b, "; it has %d:\n", k->nspecs);
  for (int j = 0; j < k->nspecs; j++)
    asc__buf_printf(&b, "  %s%s\n", k->specs[j].signature,
                    k->specs[j].may_alias ? " aliased" : "");
  asc__buf_puts(&b, "add the signature with ascc --signature (or a "
                    "'# asc: signature' line) and rebuild the module");
  err = b.oom ? asc__error(ascErrorOutOfMemory, "out of memory")
              : asc__error_text(ascErrorInvalidValue, asc__buf_str(&b));
  asc__buf_free(&b);
  return err;
}

ascError_t asc__aot_select(const asc__aot *a, int i, void *const *args,
                           const asc_kernel_desc **desc) {
  const aot_kernel *k = &a->kernels[i];
  asc__sig_param small[16], *sp = small;
  asc__sig sig;
  const aot_spec *best = NULL;
  int best_score = -1, n = k->info.numParams;
  bool overlap;
  ascError_t err;

  *desc = NULL;
  if (n > (int)ASC_ARRAY_SIZE(small)) {
    sp = asc__malloc(sizeof *sp * (size_t)n);
    if (sp == NULL)
      return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  asc__sig_of_args(&sig, sp, k->info.name, k->info.params, n, args);
  overlap = asc__args_overlap(&k->info, args);
  for (int j = 0; j < k->nspecs; j++) {
    int score = fit(&k->specs[j], &sig, overlap);
    if (score > best_score) {
      best_score = score;
      best = &k->specs[j];
    }
  }
  err = best != NULL ? ascSuccess : no_fit(a, k, &sig, overlap);
  if (best != NULL)
    *desc = best->desc;
  if (sp != small)
    asc__free(sp);
  return err;
}
