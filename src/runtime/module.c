/*
 * Modules, kernels and ascLaunchKernel.
 *
 * A module is either a shared object exporting ASC_MODULE_SYMBOL (loaded
 * with uv_dlopen) or Python kernel text handed to the compiler driver
 * (driver.h), which specialises kernels at launch.  Module and kernel
 * handles live in type-stable memory like streams (stream.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "driver.h"
#include "stream.h"

_Static_assert(sizeof(ascTensor) == sizeof(asc_ktensor) &&
                   offsetof(ascTensor, data) == offsetof(asc_ktensor, data) &&
                   offsetof(ascTensor, dtype) == offsetof(asc_ktensor, dtype) &&
                   offsetof(ascTensor, ndim) == offsetof(asc_ktensor, ndim) &&
                   offsetof(ascTensor, shape) == offsetof(asc_ktensor, shape) &&
                   offsetof(ascTensor, strides) ==
                       offsetof(asc_ktensor, strides),
               "ascTensor and asc_ktensor must share one layout");
_Static_assert(sizeof(ascScalar) == sizeof(asc_kscalar) &&
                   offsetof(ascScalar, value) == offsetof(asc_kscalar, value),
               "ascScalar and asc_kscalar must share one layout");
_Static_assert(ASC_MAX_DIMS == ASC_KMAX_DIMS, "dimension limits differ");

typedef struct asc__module asc__module;

typedef struct asc__kernel {
  atomic_uint magic;
  asc__module *module;
  int index;
  const asc_kernel_desc *desc;      /* shared-object modules */
  ascKernelInfo info;
  struct asc__kernel *free_next;
} asc__kernel;

struct asc__module {
  atomic_uint magic;
  asc__module *live_prev, *live_next, *free_next;
  bool has_lib;
  uv_lib_t lib;
  asc__pymodule *py;
  int nkernels;
  asc__kernel **kernels;
  ascKernelParamInfo *params;       /* shared-object modules */
  asc__inflight inflight;           /* launches queued or running */
};

/* Guarded by the rt lock. */
typedef struct asc__modreg {
  asc__module *live;
  asc__module *free_modules;
  asc__kernel *free_kernels;
} asc__modreg;

static ascError_t modreg_get(asc__rt *rt, asc__modreg **out) {
  uv_mutex_lock(&rt->lock);
  if (rt->modreg == NULL)
    rt->modreg = asc__calloc(1, sizeof *rt->modreg);
  *out = rt->modreg;
  uv_mutex_unlock(&rt->lock);
  if (*out == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate module registry");
  return ascSuccess;
}

static ascError_t current_rt(asc__rt **rt) {
  asc__device *dev;
  ascError_t err = asc__current_device(&dev);
  if (err != ascSuccess)
    return err;
  return asc__rt_get(dev, rt);
}

/* Frees what a module owns (not its handle memory). */
static void module_release(asc__module *m) {
  if (m->py != NULL)
    asc__pymodule_destroy(m->py);
  if (m->has_lib)
    uv_dlclose(&m->lib);
  m->py = NULL;
  m->has_lib = false;
  asc__free(m->kernels);
  asc__free(m->params);
  m->kernels = NULL;
  m->params = NULL;
  m->nkernels = 0;
}

/* rt lock held: handle memory back to the free lists. */
static void module_retire_locked(asc__modreg *reg, asc__module *m) {
  atomic_store(&m->magic, ASC__MAGIC_DEAD);
  for (int i = 0; i < m->nkernels; i++) {
    asc__kernel *k = m->kernels[i];
    if (k == NULL)
      continue;
    atomic_store(&k->magic, ASC__MAGIC_DEAD);
    k->free_next = reg->free_kernels;
    reg->free_kernels = k;
  }
  ASC__LIVE_RETIRE(reg->live, reg->free_modules, m);
}

/* Builds the handle objects of a module whose kernels/params are set, and
 * publishes it. */
static ascError_t module_publish(asc__rt *rt, asc__module *proto,
                                 ascModule_t *out) {
  asc__modreg *reg;
  asc__module *m;
  ascError_t err = modreg_get(rt, &reg);

  if (err != ascSuccess)
    return err;
  uv_mutex_lock(&rt->lock);
  m = reg->free_modules;
  if (m != NULL)
    reg->free_modules = m->free_next;
  else
    m = asc__calloc(1, sizeof *m);
  if (m == NULL) {
    uv_mutex_unlock(&rt->lock);
    return asc__error(ascErrorOutOfMemory, "cannot allocate a module");
  }
  m->has_lib = proto->has_lib;
  m->lib = proto->lib;
  m->py = proto->py;
  m->nkernels = proto->nkernels;
  m->kernels = proto->kernels;
  m->params = proto->params;
  atomic_store(&m->inflight.launched, 0);
  atomic_store(&m->inflight.retired, 0);
  for (int i = 0; i < m->nkernels; i++) {
    asc__kernel *k = m->kernels[i];
    k->module = m;
    atomic_store(&k->magic, ASC__MAGIC_KERNEL);
  }
  m->free_next = NULL;
  ASC__LIVE_PUSH(reg->live, m);
  atomic_store(&m->magic, ASC__MAGIC_MODULE);
  uv_mutex_unlock(&rt->lock);
  *out = (ascModule_t)(void *)m;
  return ascSuccess;
}

/* Allocates n kernel objects (type-stable, from the free list first). */
static ascError_t kernels_alloc(asc__rt *rt, asc__module *proto, int n) {
  asc__modreg *reg;
  ascError_t err = modreg_get(rt, &reg);

  if (err != ascSuccess)
    return err;
  proto->kernels = asc__calloc((size_t)(n > 0 ? n : 1), sizeof(asc__kernel *));
  if (proto->kernels == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate kernel table");
  uv_mutex_lock(&rt->lock);
  for (int i = 0; i < n; i++) {
    asc__kernel *k = reg->free_kernels;
    if (k != NULL)
      reg->free_kernels = k->free_next;
    else
      k = asc__calloc(1, sizeof *k);
    if (k == NULL) {
      for (int j = 0; j < i; j++) {
        proto->kernels[j]->free_next = reg->free_kernels;
        reg->free_kernels = proto->kernels[j];
      }
      uv_mutex_unlock(&rt->lock);
      asc__free(proto->kernels);
      proto->kernels = NULL;
      return asc__error(ascErrorOutOfMemory, "cannot allocate a kernel");
    }
    k->index = i;
    k->desc = NULL;
    k->free_next = NULL;
    proto->kernels[i] = k;
  }
  proto->nkernels = n;
  uv_mutex_unlock(&rt->lock);
  return ascSuccess;
}

static void kernels_free(asc__rt *rt, asc__module *proto) {
  asc__modreg *reg = rt->modreg;

  uv_mutex_lock(&rt->lock);
  for (int i = 0; i < proto->nkernels; i++) {
    proto->kernels[i]->free_next = reg->free_kernels;
    reg->free_kernels = proto->kernels[i];
  }
  uv_mutex_unlock(&rt->lock);
  proto->nkernels = 0;
}

static ascError_t check_module_desc(const char *path,
                                    const asc_module_desc *md) {
  if (md->abi_version != ASC_KABI_VERSION)
    return asc__error(ascErrorInvalidModule,
                      "%s: module ABI version %u, this libasc needs %u", path,
                      md->abi_version, ASC_KABI_VERSION);
  if (md->nkernels > 0 && md->kernels == NULL)
    return asc__error(ascErrorInvalidModule, "%s: kernel table is NULL",
                      path);
  for (uint32_t i = 0; i < md->nkernels; i++) {
    const asc_kernel_desc *d = &md->kernels[i];
    if (d->name == NULL || d->entry == NULL)
      return asc__error(ascErrorInvalidModule,
                        "%s: kernel %u has no name or no entry", path, i);
    if (d->nparams > 0 && d->params == NULL)
      return asc__error(ascErrorInvalidModule,
                        "%s: kernel '%s' has no parameter table", path,
                        d->name);
    for (uint32_t j = 0; j < d->nparams; j++) {
      const asc_kparam *p = &d->params[j];
      bool generic = (p->flags & ASC_KPARAM_GENERIC) != 0;
      bool tensor = (p->flags & ASC_KPARAM_TENSOR) != 0;
      if (p->name == NULL ||
          (!generic && ascDataTypeSize((ascDataType)p->dtype) == 0) ||
          (tensor && !generic && (p->ndim < 0 || p->ndim > ASC_KMAX_DIMS)))
        return asc__error(ascErrorInvalidModule,
                          "%s: kernel '%s' parameter %u is malformed", path,
                          d->name, j);
    }
  }
  return ascSuccess;
}

ascError_t ascModuleLoad(ascModule_t *module, const char *path) {
  asc__rt *rt;
  asc__module proto;
  const asc_module_desc *md;
  void *sym = NULL;
  size_t np = 0, at = 0;
  ascError_t err;

  if (module == NULL || path == NULL)
    return asc__error(ascErrorInvalidValue, "ascModuleLoad: %s is NULL",
                      module == NULL ? "module" : "path");
  err = current_rt(&rt);
  if (err != ascSuccess)
    return err;
  memset(&proto, 0, sizeof proto);
  if (uv_dlopen(path, &proto.lib) != 0) {
    FILE *f = fopen(path, "rb");
    if (f == NULL && errno == ENOENT)
      err = asc__error(ascErrorFileNotFound, "%s: no such file", path);
    else
      err = asc__error(ascErrorInvalidModule, "%s: cannot load: %s", path,
                       uv_dlerror(&proto.lib));
    if (f != NULL)
      fclose(f);
    uv_dlclose(&proto.lib);
    return err;
  }
  proto.has_lib = true;
  if (uv_dlsym(&proto.lib, ASC_MODULE_SYMBOL, &sym) != 0 || sym == NULL) {
    err = asc__error(ascErrorInvalidModule,
                     "%s: not a libasc module (no symbol %s)", path,
                     ASC_MODULE_SYMBOL);
    goto fail;
  }
  md = sym;
  err = check_module_desc(path, md);
  if (err != ascSuccess)
    goto fail;
  for (uint32_t i = 0; i < md->nkernels; i++)
    np += md->kernels[i].nparams;
  proto.params = asc__calloc(np > 0 ? np : 1, sizeof *proto.params);
  if (proto.params == NULL) {
    err = asc__error(ascErrorOutOfMemory, "cannot allocate parameter tables");
    goto fail;
  }
  err = kernels_alloc(rt, &proto, (int)md->nkernels);
  if (err != ascSuccess)
    goto fail;
  for (uint32_t i = 0; i < md->nkernels; i++) {
    const asc_kernel_desc *d = &md->kernels[i];
    asc__kernel *k = proto.kernels[i];
    k->desc = d;
    k->info.name = d->name;
    k->info.numParams = (int)d->nparams;
    k->info.params = &proto.params[at];
    for (uint32_t j = 0; j < d->nparams; j++, at++) {
      const asc_kparam *p = &d->params[j];
      ascKernelParamInfo *q = &proto.params[at];
      q->name = p->name;
      q->isTensor = (p->flags & ASC_KPARAM_TENSOR) != 0;
      q->generic = (p->flags & ASC_KPARAM_GENERIC) != 0;
      q->isConstExpr = (p->flags & ASC_KPARAM_CONSTEXPR) != 0;
      q->dtype = q->generic ? ascDataTypeCount : (ascDataType)p->dtype;
      q->ndim = q->isTensor ? (q->generic ? -1 : p->ndim) : 0;
      q->isWritten = q->isTensor; /* the ABI does not say: assume stores */
    }
  }
  err = module_publish(rt, &proto, module);
  if (err != ascSuccess) {
    kernels_free(rt, &proto);
    goto fail;
  }
  return ascSuccess;
fail:
  module_release(&proto);
  return err;
}

ascError_t ascModuleLoadPython(ascModule_t *module, const char *text,
                               const ascCompileOptions *opts) {
  asc__rt *rt;
  asc__module proto;
  ascError_t err;
  int n;

  if (module == NULL || text == NULL)
    return asc__error(ascErrorInvalidValue, "ascModuleLoadPython: %s is NULL",
                      module == NULL ? "module" : "text");
  err = current_rt(&rt);
  if (err != ascSuccess)
    return err;
  memset(&proto, 0, sizeof proto);
  err = asc__pymodule_create(&proto.py, text, strlen(text), opts);
  if (err != ascSuccess)
    return err;
  n = asc__pymodule_nkernels(proto.py);
  err = kernels_alloc(rt, &proto, n);
  if (err != ascSuccess)
    goto fail;
  for (int i = 0; i < n; i++) {
    err = asc__pymodule_kernel_info(proto.py, i, &proto.kernels[i]->info);
    if (err != ascSuccess) {
      kernels_free(rt, &proto);
      goto fail;
    }
  }
  err = module_publish(rt, &proto, module);
  if (err != ascSuccess) {
    kernels_free(rt, &proto);
    goto fail;
  }
  return ascSuccess;
fail:
  module_release(&proto);
  return err;
}

ascError_t ascModuleLoadPythonFile(ascModule_t *module, const char *path,
                                   const ascCompileOptions *opts) {
  ascCompileOptions o;
  asc__buf b;
  char chunk[4096];
  size_t n;
  FILE *f;
  ascError_t err;

  if (module == NULL || path == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascModuleLoadPythonFile: %s is NULL",
                      module == NULL ? "module" : "path");
  f = fopen(path, "rb");
  if (f == NULL)
    return asc__error(errno == ENOENT ? ascErrorFileNotFound
                                      : ascErrorInvalidValue,
                      "%s: cannot open: %s", path, strerror(errno));
  asc__buf_init(&b);
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    asc__buf_put(&b, chunk, n);
  if (ferror(f)) {
    fclose(f);
    asc__buf_free(&b);
    return asc__error(ascErrorInvalidValue, "%s: read error", path);
  }
  fclose(f);
  if (b.oom) {
    asc__buf_free(&b);
    return asc__error(ascErrorOutOfMemory, "%s: cannot hold the file", path);
  }
  if (opts != NULL)
    o = *opts;
  else
    memset(&o, 0, sizeof o);
  if (o.filename == NULL)
    o.filename = path;
  err = ascModuleLoadPython(module, asc__buf_str(&b), &o);
  asc__buf_free(&b);
  return err;
}

static ascError_t module_resolve(ascModule_t h, asc__module **out) {
  asc__rt *rt;
  ascError_t err = current_rt(&rt);

  *out = NULL;
  if (err != ascSuccess)
    return err;
  if (h == NULL ||
      asc__handle_magic(h) != ASC__MAGIC_MODULE)
    return asc__error(ascErrorInvalidHandle, "module %p is not loaded",
                      (void *)h);
  *out = (asc__module *)(void *)h;
  return ascSuccess;
}

static ascError_t kernel_resolve(ascKernel_t h, asc__kernel **out) {
  asc__rt *rt;
  ascError_t err = current_rt(&rt);

  *out = NULL;
  if (err != ascSuccess)
    return err;
  if (h == NULL ||
      asc__handle_magic(h) != ASC__MAGIC_KERNEL)
    return asc__error(ascErrorInvalidHandle,
                      "kernel %p is not a kernel of a loaded module",
                      (void *)h);
  *out = (asc__kernel *)(void *)h;
  return ascSuccess;
}

static bool no_inflight(const void *a, uint64_t unused) {
  const asc__module *m = a;
  ASC_UNUSED(unused);
  return asc__inflight_idle((asc__inflight *)(uintptr_t)&m->inflight);
}

ascError_t ascModuleUnload(ascModule_t module) {
  asc__module *m;
  asc__rt *rt;
  ascError_t err = module_resolve(module, &m);

  if (err != ascSuccess)
    return err;
  err = current_rt(&rt);
  if (err != ascSuccess)
    return err;
  /* Launches already queued keep running; the code stays mapped until they
   * have finished. */
  if (!asc__inflight_idle(&m->inflight)) {
    if (asc__tls_get()->in_host_callback)
      return asc__error(ascErrorNotPermitted,
                        "ascModuleUnload: launches of this module are still "
                        "queued; unloading from a host function would wait "
                        "for them");
    asc__rt_wait(rt, no_inflight, m, 0);
  }
  uv_mutex_lock(&rt->lock);
  if (atomic_load(&m->magic) != ASC__MAGIC_MODULE) {
    uv_mutex_unlock(&rt->lock);
    return asc__error(ascErrorInvalidHandle, "module %p is not loaded",
                      (void *)module);
  }
  module_retire_locked(rt->modreg, m);
  uv_mutex_unlock(&rt->lock);
  module_release(m);
  return ascSuccess;
}

void asc__modules_reset(asc__device *dev) {
  asc__rt *rt;
  asc__module *dead = NULL;

  if (asc__rt_get(dev, &rt) != ascSuccess)
    return;
  uv_mutex_lock(&rt->lock);
  if (rt->modreg != NULL) {
    while (rt->modreg->live != NULL) {
      asc__module *m = rt->modreg->live;
      module_retire_locked(rt->modreg, m);
      /* module_retire_locked pushed m on the free list; release its
       * contents after dropping the lock. */
      m->live_next = dead;
      dead = m;
    }
  }
  uv_mutex_unlock(&rt->lock);
  while (dead != NULL) {
    asc__module *next = dead->live_next;
    dead->live_next = NULL;
    module_release(dead);
    dead = next;
  }
}

ascError_t ascModuleGetKernel(ascKernel_t *kernel, ascModule_t module,
                              const char *name) {
  asc__module *m;
  ascError_t err;

  if (kernel == NULL || name == NULL)
    return asc__error(ascErrorInvalidValue, "ascModuleGetKernel: %s is NULL",
                      kernel == NULL ? "kernel" : "name");
  err = module_resolve(module, &m);
  if (err != ascSuccess)
    return err;
  for (int i = 0; i < m->nkernels; i++) {
    if (strcmp(m->kernels[i]->info.name, name) == 0) {
      *kernel = (ascKernel_t)(void *)m->kernels[i];
      return ascSuccess;
    }
  }
  return asc__error(ascErrorInvalidKernel, "module has no kernel '%s'", name);
}

ascError_t ascKernelGetInfo(ascKernelInfo *info, ascKernel_t kernel) {
  asc__kernel *k;
  ascError_t err;

  if (info == NULL)
    return asc__error(ascErrorInvalidValue, "ascKernelGetInfo: info is NULL");
  err = kernel_resolve(kernel, &k);
  if (err != ascSuccess)
    return err;
  *info = k->info;
  return ascSuccess;
}

/* ---------------------------------------------------------------- launch */

static ascError_t bad_arg(const ascKernelInfo *ki, int i, const char *what) {
  return asc__error(ascErrorInvalidValue,
                    "ascLaunchKernel: kernel '%s', parameter '%s' (#%d): %s",
                    ki->name, ki->params[i].name, i, what);
}

static ascError_t check_args(const ascKernelInfo *ki, void **args) {
  char why[160];

  if (ki->numParams > 0 && args == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascLaunchKernel: kernel '%s' takes %d parameter%s but "
                      "args is NULL",
                      ki->name, ki->numParams, ki->numParams == 1 ? "" : "s");
  for (int i = 0; i < ki->numParams; i++) {
    const ascKernelParamInfo *p = &ki->params[i];

    if (args[i] == NULL)
      return bad_arg(ki, i, "argument pointer is NULL");
    if (p->isTensor) {
      const ascTensor *t = args[i];
      int64_t count = 1;

      if (ascDataTypeSize(t->dtype) == 0) {
        snprintf(why, sizeof why, "tensor has invalid dtype %d",
                 (int)t->dtype);
        return bad_arg(ki, i, why);
      }
      if (t->ndim < 0 || t->ndim > ASC_MAX_DIMS) {
        snprintf(why, sizeof why, "tensor has invalid ndim %d (0..%d)",
                 (int)t->ndim, ASC_MAX_DIMS);
        return bad_arg(ki, i, why);
      }
      if (p->dtype != ascDataTypeCount && t->dtype != p->dtype) {
        snprintf(why, sizeof why, "expected a %s tensor, got %s",
                 ascDataTypeName(p->dtype), ascDataTypeName(t->dtype));
        return bad_arg(ki, i, why);
      }
      if (p->ndim >= 0 && t->ndim != p->ndim) {
        snprintf(why, sizeof why, "expected a %d-d tensor, got %d-d",
                 p->ndim, (int)t->ndim);
        return bad_arg(ki, i, why);
      }
      for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0) {
          snprintf(why, sizeof why, "shape[%d] is negative (%lld)", d,
                   (long long)t->shape[d]);
          return bad_arg(ki, i, why);
        }
        count *= t->shape[d];
      }
      if (t->data == NULL && count != 0)
        return bad_arg(ki, i, "tensor data is NULL but its size is not 0");
    } else if (p->generic || p->dtype == ascDataTypeCount) {
      const ascScalar *s = args[i];
      if (ascDataTypeSize(s->dtype) == 0) {
        snprintf(why, sizeof why, "scalar descriptor has invalid dtype %d",
                 (int)s->dtype);
        return bad_arg(ki, i, why);
      }
    }
  }
  return ascSuccess;
}

#define STACK_PARAMS 32

ascError_t ascLaunchKernel(ascKernel_t kernel, uint32_t blockDim, void **args,
                           ascStream_t stream) {
  asc__kernel *k;
  asc__module *m;
  asc__stream *st;
  asc__device *dev;
  const asc_kernel_desc *desc;
  size_t stack_sizes[STACK_PARAMS], *sizes = stack_sizes;
  int np;
  ascError_t err;

  err = kernel_resolve(kernel, &k);
  if (err != ascSuccess)
    return err;
  m = k->module;
  if (blockDim == 0)
    return asc__error(ascErrorInvalidValue,
                      "ascLaunchKernel: kernel '%s': blockDim must be >= 1",
                      k->info.name);
  err = asc__stream_resolve(stream, &st);
  if (err != ascSuccess)
    return err;
  err = check_args(&k->info, args);
  if (err != ascSuccess)
    return err;
  if (m->py != NULL) {
    err = asc__pymodule_specialize(m->py, k->index, (void *const *)args,
                                   &desc);
    if (err != ascSuccess)
      return err;
  } else {
    desc = k->desc;
  }
  dev = st->rt->dev;
  if ((desc->flags & ASC_KERNEL_USES_BARRIER) &&
      blockDim > (uint32_t)dev->ncores)
    return asc__error(ascErrorLaunchFailure,
                      "ascLaunchKernel: kernel '%s' uses asc.barrier(), so "
                      "all %u blocks must run at once, but the device has "
                      "%d cores",
                      k->info.name, blockDim, dev->ncores);
  np = k->info.numParams;
  if (np > STACK_PARAMS) {
    sizes = asc__malloc((size_t)np * sizeof *sizes);
    if (sizes == NULL)
      return asc__error(ascErrorOutOfMemory, "cannot copy launch arguments");
  }
  for (int i = 0; i < np; i++) {
    const ascKernelParamInfo *p = &k->info.params[i];
    if (p->isTensor)
      sizes[i] = sizeof(ascTensor);
    else if (p->generic || p->dtype == ascDataTypeCount)
      sizes[i] = sizeof(ascScalar);
    else
      sizes[i] = ascDataTypeSize(p->dtype);
  }
  err = asc__stream_launch(st, desc, blockDim, (uint32_t)np, sizes,
                           (const void *const *)args, &m->inflight);
  if (sizes != stack_sizes)
    asc__free(sizes);
  return err;
}
