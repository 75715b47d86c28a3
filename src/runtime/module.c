/*
 * Modules, kernels and ascLaunchKernel.
 *
 * A module is either a shared object exporting ASC_MODULE_SYMBOL (loaded
 * with uv_dlopen) or Python kernel text handed to the compiler driver
 * (driver.h), which specialises kernels at launch.  Module and kernel
 * handles live in type-stable memory like streams (stream.h).
 *
 * Lifetime: every call that uses a module (get kernel, kernel info,
 * launch, with the compile a launch may do) holds a use of it from the
 * handle check to its return, and every launch it queued is counted in
 * `inflight` until it has run.  ascModuleUnload marks the module and its
 * kernels dead first, so later calls get ascErrorInvalidHandle, then waits
 * until no use and no launch is left before it unmaps the code and frees
 * the tables.  ascDeviceReset is kept out by the API gate (stream.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "jit/driver.h"
#include "runtime/launch_sync.h"
#include "runtime/stream.h"

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
_Static_assert(sizeof(ascResult) == sizeof(asc_kresult) &&
                   offsetof(ascResult, scalar) ==
                       offsetof(asc_kresult, scalar) &&
                   offsetof(ascResult, tensor) ==
                       offsetof(asc_kresult, tensor) &&
                   (int)ascResultTensor == (int)ASC_KRESULT_TENSOR,
               "ascResult and asc_kresult must share one layout");

typedef struct asc__module asc__module;

typedef struct asc__kernel {
  atomic_uint magic;
  /* Atomic: a stale handle may read it while a load reuses the memory. */
  _Atomic(asc__module *) module;
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
  /* The descriptor lib was loaded through ("/proc/self/fd/N"), open while
   * lib is (with has_lib): debuggers and the sanitizers' symbolizers read
   * a loaded object by its name, and N must not name another file. */
  int lib_fd;
  asc__pymodule *py;
  asc__aot *aot;                    /* shared objects written by ascc */
  /* The ABI version the kernels were built for: flags a later version
   * defines mean nothing in an older module. */
  uint32_t abi_version;
  int nkernels;
  asc__kernel **kernels;
  ascKernelParamInfo *params;       /* shared-object modules */
  asc__inflight inflight;           /* launches queued or running */
  /* The lock orders the magic's change to dead against new uses: users
   * grows only under it while the magic says loaded.  A leaf lock. */
  asc__spinlock lock;
  atomic_int users;                 /* calls using the module now */
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

/* Frees what a module owns (not its handle memory): m is a copy made by
 * module_retire_locked, or a module that was never published. */
static void module_release(asc__module *m) {
  if (m->py != NULL)
    asc__pymodule_destroy(m->py);
  asc__aot_destroy(m->aot);
  if (m->has_lib) {
    uv_dlclose(&m->lib);
    close(m->lib_fd);
  }
  m->py = NULL;
  m->aot = NULL;
  m->has_lib = false;
  asc__free(m->kernels);
  asc__free(m->params);
  m->kernels = NULL;
  m->params = NULL;
  m->nkernels = 0;
}

/* Moves what from owns (the library, the module from text, the AOT table,
 * the kernels and their parameters) to to, which owns none of it. */
static void module_move(asc__module *to, asc__module *from) {
  to->has_lib = from->has_lib;
  to->lib = from->lib;
  to->lib_fd = from->lib_fd;
  to->py = from->py;
  to->aot = from->aot;
  to->abi_version = from->abi_version;
  to->nkernels = from->nkernels;
  to->kernels = from->kernels;
  to->params = from->params;
  from->has_lib = false;
  from->py = NULL;
  from->aot = NULL;
  from->nkernels = 0;
  from->kernels = NULL;
  from->params = NULL;
}

/* rt lock held: moves what m owns to *own (for module_release once the
 * lock is dropped) and m's handle memory back to the free lists, where a
 * load may reuse it at once. */
static void module_retire_locked(asc__modreg *reg, asc__module *m,
                                 asc__module *own) {
  atomic_store(&m->magic, ASC__MAGIC_DEAD);
  for (int i = 0; i < m->nkernels; i++) {
    asc__kernel *k = m->kernels[i];
    if (k == NULL)
      continue;
    atomic_store(&k->magic, ASC__MAGIC_DEAD);
    k->free_next = reg->free_kernels;
    reg->free_kernels = k;
  }
  memset(own, 0, sizeof *own);
  module_move(own, m);
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
  module_move(m, proto);
  atomic_store(&m->inflight.launched, 0);
  atomic_store(&m->inflight.retired, 0);
  for (int i = 0; i < m->nkernels; i++) {
    asc__kernel *k = m->kernels[i];
    atomic_store(&k->module, m);
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

/* The tail of every load: publishes proto (its kernels allocated) as
 * *module, or, when that fails, frees what proto holds. */
static ascError_t module_finish(asc__rt *rt, asc__module *proto,
                                ascModule_t *module) {
  ascError_t err = module_publish(rt, proto, module);

  if (err != ascSuccess) {
    kernels_free(rt, proto);
    module_release(proto);
  }
  return err;
}

static ascError_t check_module_desc(const char *path,
                                    const asc_module_desc *md) {
  if (md->abi_version < ASC_KABI_MIN_VERSION ||
      md->abi_version > ASC_KABI_VERSION)
    return asc__error(ascErrorInvalidModule,
                      "%s: module ABI version %u, this libasc loads %u to %u",
                      path, md->abi_version, ASC_KABI_MIN_VERSION,
                      ASC_KABI_VERSION);
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
      if (p->flags & ASC_KPARAM_RESULT) {
        /* results: version 3, after every argument */
        if (p->name == NULL || md->abi_version < 3 ||
            (j + 1 < d->nparams &&
             !(d->params[j + 1].flags & ASC_KPARAM_RESULT)))
          return asc__error(ascErrorInvalidModule,
                            "%s: kernel '%s' parameter %u is malformed (a "
                            "result parameter must follow the arguments)",
                            path, d->name, j);
        continue;
      }
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

/* One kernel per entry of md (hand-written and JIT-built modules). */
static ascError_t load_kernels(asc__rt *rt, asc__module *proto,
                               const asc_module_desc *md) {
  size_t np = 0, at = 0;
  ascError_t err;

  for (uint32_t i = 0; i < md->nkernels; i++)
    np += md->kernels[i].nparams;
  proto->params = asc__calloc(np > 0 ? np : 1, sizeof *proto->params);
  if (proto->params == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate parameter tables");
  err = kernels_alloc(rt, proto, (int)md->nkernels);
  if (err != ascSuccess)
    return err;
  for (uint32_t i = 0; i < md->nkernels; i++) {
    const asc_kernel_desc *d = &md->kernels[i];
    asc__kernel *k = proto->kernels[i];
    k->desc = d;
    k->info.name = d->name;
    k->info.numParams = (int)d->nparams;
    k->info.numResults = asc__kernel_results(d);
    k->info.numParams -= k->info.numResults;
    k->info.params = &proto->params[at];
    for (uint32_t j = 0; j < (uint32_t)k->info.numParams; j++, at++) {
      const asc_kparam *p = &d->params[j];
      ascKernelParamInfo *q = &proto->params[at];
      q->name = p->name;
      q->isTensor = (p->flags & ASC_KPARAM_TENSOR) != 0;
      q->generic = (p->flags & ASC_KPARAM_GENERIC) != 0;
      q->isConstExpr = (p->flags & ASC_KPARAM_CONSTEXPR) != 0;
      q->dtype = q->generic ? ascDataTypeCount : (ascDataType)p->dtype;
      q->ndim = q->isTensor ? (q->generic ? -1 : p->ndim) : 0;
      q->isWritten = q->isTensor; /* the ABI does not say: assume stores */
    }
  }
  return ascSuccess;
}

static ascError_t module_load(asc__rt *rt, ascModule_t *module,
                              const char *path) {
  asc__module proto;
  const asc_module_desc *md;
  void *sym = NULL;
  ascError_t err;
  int fd, rc;

  if (module == NULL || path == NULL)
    return asc__error(ascErrorInvalidValue, "ascModuleLoad: %s is NULL",
                      module == NULL ? "module" : "path");
  memset(&proto, 0, sizeof proto);
  /* Opened first, without blocking, and loaded through the descriptor:
   * a FIFO, a device (/dev/zero) or a directory is refused at once. */
  err = asc__jit_open_file(path, 0, &fd);
  if (err != ascSuccess)
    return err;
  rc = asc__jit_dlopen_fd(&proto.lib, fd, path);
  if (rc != 0) {
    err = asc__error(ascErrorInvalidModule, "%s: cannot load: %s", path,
                     uv_dlerror(&proto.lib));
    uv_dlclose(&proto.lib);
    close(fd);
    return err;
  }
  proto.has_lib = true;
  proto.lib_fd = fd;
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
  proto.abi_version = md->abi_version;
  sym = NULL;
  if (uv_dlsym(&proto.lib, ASC_SPECS_SYMBOL, &sym) == 0 && sym != NULL) {
    /* Written by ascc: one kernel per name over its specialisations. */
    err = asc__aot_create(&proto.aot, path, md, sym);
    if (err == ascSuccess)
      err = kernels_alloc(rt, &proto, asc__aot_nkernels(proto.aot));
    if (err != ascSuccess)
      goto fail;
    for (int i = 0; i < proto.nkernels; i++)
      asc__aot_kernel_info(proto.aot, i, &proto.kernels[i]->info);
  } else {
    err = load_kernels(rt, &proto, md);
    if (err != ascSuccess)
      goto fail;
  }
  return module_finish(rt, &proto, module);
fail:
  module_release(&proto);
  return err;
}

static ascError_t module_load_python(asc__rt *rt, ascModule_t *module,
                                     const char *text,
                                     const ascCompileOptions *opts) {
  asc__module proto;
  ascError_t err;
  int n;

  if (module == NULL || text == NULL)
    return asc__error(ascErrorInvalidValue, "ascModuleLoadPython: %s is NULL",
                      module == NULL ? "module" : "text");
  memset(&proto, 0, sizeof proto);
  proto.abi_version = ASC_KABI_VERSION;
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
  return module_finish(rt, &proto, module);
fail:
  module_release(&proto);
  return err;
}

/* asc__rt_current, then asc__api_enter: a module or launch call's way in
 * (leave with asc__api_leave when this succeeds). */
static ascError_t api_enter_current(asc__rt **rt) {
  ascError_t err = asc__rt_current(rt);

  if (err == ascSuccess)
    err = asc__api_enter(*rt);
  return err;
}

ascError_t ascModuleLoad(ascModule_t *module, const char *path) {
  asc__rt *rt;
  ascError_t err = api_enter_current(&rt);

  if (err != ascSuccess)
    return err;
  err = module_load(rt, module, path);
  asc__api_leave(rt);
  return err;
}

ascError_t ascModuleLoadPython(ascModule_t *module, const char *text,
                               const ascCompileOptions *opts) {
  asc__rt *rt;
  ascError_t err = api_enter_current(&rt);

  if (err != ascSuccess)
    return err;
  err = module_load_python(rt, module, text, opts);
  asc__api_leave(rt);
  return err;
}

ascError_t ascModuleLoadPythonFile(ascModule_t *module, const char *path,
                                   const ascCompileOptions *opts) {
  ascCompileOptions o;
  char *text;
  ascError_t err;

  if (module == NULL || path == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascModuleLoadPythonFile: %s is NULL",
                      module == NULL ? "module" : "path");
  /* asc__read_file: EIO a read error, ENOMEM out of memory, EINVAL,
   * EISDIR and EFBIG files it refuses, anything else from opening. */
  text = asc__read_file(path, NULL);
  if (text == NULL && errno == EIO)
    return asc__error(ascErrorInvalidValue, "%s: read error", path);
  if (text == NULL && errno == ENOMEM)
    return asc__error(ascErrorOutOfMemory, "%s: cannot hold the file", path);
  if (text == NULL)
    return asc__error(errno == ENOENT ? ascErrorFileNotFound
                                      : ascErrorInvalidValue,
                      "%s: cannot open: %s", path,
                      asc__read_file_strerror(errno));
  if (opts != NULL)
    o = *opts;
  else
    memset(&o, 0, sizeof o);
  if (o.filename == NULL)
    o.filename = path;
  err = ascModuleLoadPython(module, text, &o);
  asc__free(text);
  return err;
}

/* Takes a use of module h (rt is the current device's). */
static ascError_t module_acquire(ascModule_t h, asc__module **out) {
  asc__module *m = (asc__module *)(void *)h;
  bool ok;

  *out = NULL;
  if (h == NULL || asc__handle_magic(h) != ASC__MAGIC_MODULE)
    return asc__error(ascErrorInvalidHandle, "module %p is not loaded",
                      (void *)h);
  asc__spin_lock(&m->lock);
  ok = atomic_load(&m->magic) == ASC__MAGIC_MODULE;
  if (ok)
    atomic_fetch_add(&m->users, 1);
  asc__spin_unlock(&m->lock);
  if (!ok)
    return asc__error(ascErrorInvalidHandle, "module %p is not loaded",
                      (void *)h);
  *out = m;
  return ascSuccess;
}

/* Takes a use of the module of kernel h. */
static ascError_t kernel_acquire(ascKernel_t h, asc__kernel **kout,
                                 asc__module **mout) {
  asc__kernel *k = (asc__kernel *)(void *)h;
  asc__module *m;
  bool ok = false;

  *kout = NULL;
  *mout = NULL;
  if (h != NULL && asc__handle_magic(h) == ASC__MAGIC_KERNEL &&
      (m = atomic_load(&k->module)) != NULL) {
    /* The kernel's memory returns to the free list only after its module
     * has no use left, so once the module is held, a kernel that still
     * names it and is alive stays so until module_put. */
    asc__spin_lock(&m->lock);
    ok = atomic_load(&m->magic) == ASC__MAGIC_MODULE &&
         atomic_load(&k->magic) == ASC__MAGIC_KERNEL &&
         atomic_load(&k->module) == m;
    if (ok)
      atomic_fetch_add(&m->users, 1);
    asc__spin_unlock(&m->lock);
  }
  if (!ok)
    return asc__error(ascErrorInvalidHandle,
                      "kernel %p is not a kernel of a loaded module",
                      (void *)h);
  *kout = k;
  *mout = m;
  return ascSuccess;
}

static void module_put(asc__rt *rt, asc__module *m) {
  /* An unload waiting for the last use re-checks on notify. */
  if (atomic_fetch_sub(&m->users, 1) == 1 &&
      atomic_load(&m->magic) != ASC__MAGIC_MODULE)
    asc__rt_notify(rt);
}

static bool module_idle(const void *a, uint64_t unused) {
  asc__module *m = (asc__module *)(uintptr_t)a;
  ASC_UNUSED(unused);
  return atomic_load(&m->users) == 0 && asc__inflight_idle(&m->inflight);
}

static ascError_t module_unload(asc__rt *rt, ascModule_t module) {
  asc__module *m = (asc__module *)(void *)module, own;
  bool in_cb = asc__tls_get()->in_host_callback != 0;
  ascError_t err = ascSuccess;

  if (module == NULL || asc__handle_magic(module) != ASC__MAGIC_MODULE)
    return asc__error(ascErrorInvalidHandle, "module %p is not loaded",
                      (void *)module);
  asc__spin_lock(&m->lock);
  if (atomic_load(&m->magic) != ASC__MAGIC_MODULE) {
    err = asc__error(ascErrorInvalidHandle, "module %p is not loaded",
                     (void *)module);
  } else if (in_cb && !module_idle(m, 0)) {
    err = asc__error(ascErrorNotPermitted,
                     "ascModuleUnload: launches of this module are still "
                     "queued or being made; unloading from a host function "
                     "would wait for them");
  } else {
    atomic_store(&m->magic, ASC__MAGIC_DEAD);
    for (int i = 0; i < m->nkernels; i++)
      atomic_store(&m->kernels[i]->magic, ASC__MAGIC_DEAD);
  }
  asc__spin_unlock(&m->lock);
  if (err != ascSuccess)
    return err;
  /* Calls already using the module finish (a compile, a launch being
   * queued); launches already queued keep running and the code stays
   * mapped until they have finished. */
  asc__rt_wait(rt, module_idle, m, 0);
  uv_mutex_lock(&rt->lock);
  module_retire_locked(rt->modreg, m, &own);
  uv_mutex_unlock(&rt->lock);
  module_release(&own);
  return ascSuccess;
}

ascError_t ascModuleUnload(ascModule_t module) {
  asc__rt *rt;
  ascError_t err = api_enter_current(&rt);

  if (err != ascSuccess)
    return err;
  err = module_unload(rt, module);
  asc__api_leave(rt);
  return err;
}

void asc__modules_reset(asc__device *dev) {
  asc__rt *rt;
  asc__module own;

  if (asc__rt_get(dev, &rt) != ascSuccess)
    return;
  /* The API gate is closed and every stream has drained: no module has a
   * use or a launch left. */
  uv_mutex_lock(&rt->lock);
  while (rt->modreg != NULL && rt->modreg->live != NULL) {
    module_retire_locked(rt->modreg, rt->modreg->live, &own);
    uv_mutex_unlock(&rt->lock);
    module_release(&own);
    uv_mutex_lock(&rt->lock);
  }
  uv_mutex_unlock(&rt->lock);
}

/* The kernel of m called name; the error lists the kernels m has. */
static ascError_t find_kernel(const asc__module *m, const char *name,
                              ascKernel_t *kernel) {
  asc__buf b;
  ascError_t err;

  for (int i = 0; i < m->nkernels; i++) {
    if (strcmp(m->kernels[i]->info.name, name) == 0) {
      *kernel = (ascKernel_t)(void *)m->kernels[i];
      return ascSuccess;
    }
  }
  asc__buf_init(&b);
  asc__buf_printf(&b, "module has no kernel '%s'", name);
  for (int i = 0; i < m->nkernels; i++)
    asc__buf_printf(&b, "%s'%s'", i == 0 ? "; its kernels: " : ", ",
                    m->kernels[i]->info.name);
  if (m->nkernels == 0)
    asc__buf_puts(&b, "; it has none");
  err = b.oom ? asc__error(ascErrorInvalidKernel,
                           "module has no kernel '%s'", name)
              : asc__error_text(ascErrorInvalidKernel, asc__buf_str(&b));
  asc__buf_free(&b);
  return err;
}

ascError_t ascModuleGetKernel(ascKernel_t *kernel, ascModule_t module,
                              const char *name) {
  asc__module *m;
  asc__rt *rt;
  ascError_t err;

  if (kernel == NULL || name == NULL)
    return asc__error(ascErrorInvalidValue, "ascModuleGetKernel: %s is NULL",
                      kernel == NULL ? "kernel" : "name");
  err = api_enter_current(&rt);
  if (err != ascSuccess)
    return err;
  err = module_acquire(module, &m);
  if (err == ascSuccess) {
    err = find_kernel(m, name, kernel);
    module_put(rt, m);
  }
  asc__api_leave(rt);
  return err;
}

ascError_t ascKernelGetInfo(ascKernelInfo *info, ascKernel_t kernel) {
  asc__kernel *k;
  asc__module *m;
  asc__rt *rt;
  ascError_t err;

  if (info == NULL)
    return asc__error(ascErrorInvalidValue, "ascKernelGetInfo: info is NULL");
  err = api_enter_current(&rt);
  if (err != ascSuccess)
    return err;
  err = kernel_acquire(kernel, &k, &m);
  if (err == ascSuccess) {
    *info = k->info;
    module_put(rt, m);
  }
  asc__api_leave(rt);
  return err;
}

/* ---------------------------------------------------------------- launch */

static ascError_t bad_arg(const ascKernelInfo *ki, int i, const char *what) {
  return asc__error(ascErrorInvalidValue,
                    "ascLaunchKernel: kernel '%s', parameter '%s' (#%d): %s",
                    ki->name, ki->params[i].name, i, what);
}

/* The checks of a launch's arguments against the kernel's parameters,
 * the only ones (as Lua's lapi.c checks at the API): what passes here is
 * what every layer below may rely on, for every kind of module, and each
 * fault has one message.  Tensors: dtype, ndim and extents that describe
 * memory, the annotated dtype and ndim, data for a non-empty tensor.
 * Descriptors of generic scalars: a dtype an ascScalar can hold, weak
 * only for bool, int64 and float64 (asc.h). */
static ascError_t check_args(const ascKernelInfo *ki, void **args) {
  char why[200];

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
      int64_t lo, hi;

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
      /* negative extents, and sizes that overflow before any kernel
       * multiplies them */
      if (!asc__tensor_extent(t, &lo, &hi, why, sizeof why))
        return bad_arg(ki, i, why);
      if (t->data == NULL && hi != lo)
        return bad_arg(ki, i, "tensor data is NULL but its size is not 0");
    } else if (p->generic || p->dtype == ascDataTypeCount) {
      const ascScalar *s = args[i];
      if (ascDataTypeSize(s->dtype) == 0) {
        snprintf(why, sizeof why, "scalar descriptor has invalid dtype %d",
                 (int)s->dtype);
        return bad_arg(ki, i, why);
      }
      if (s->dtype == ascComplex64 || s->dtype == ascComplex128) {
        snprintf(why, sizeof why,
                 "scalar descriptor has dtype %s: an ascScalar cannot hold "
                 "a complex value; pass it as a 0-d %s tensor",
                 ascDataTypeName(s->dtype), ascDataTypeName(s->dtype));
        return bad_arg(ki, i, why);
      }
      if (s->weak && s->dtype != ascBool && s->dtype != ascInt64 &&
          s->dtype != ascFloat64) {
        snprintf(why, sizeof why,
                 "weak scalar descriptor has dtype %s (a weak scalar is "
                 "ascBool, ascInt64 or ascFloat64)",
                 ascDataTypeName(s->dtype));
        return bad_arg(ki, i, why);
      }
    }
  }
  for (int i = 0; i < ki->numResults; i++)
    if (args[ki->numParams + i] == NULL)
      return asc__error(ascErrorInvalidValue,
                        "ascLaunchKernel: kernel '%s' returns %d value%s: "
                        "args[%d] must point to an ascResult",
                        ki->name, ki->numResults,
                        ki->numResults == 1 ? "" : "s", ki->numParams + i);
  return ascSuccess;
}

#define STACK_PARAMS 32

/* Queues desc, the code of k for these args (of a specialisation counted
 * in spec_inflight, or NULL); ran_here as asc__stream_launch's. */
static ascError_t queue_launch(asc__kernel *k, asc__module *m,
                               asc__stream *st, const asc_kernel_desc *desc,
                               uint32_t blockDim, void **args,
                               asc__inflight *spec_inflight, bool *ran_here) {
  asc__device *dev = st->rt->dev;
  size_t stack_sizes[STACK_PARAMS], *sizes = stack_sizes;
  /* A kernel that never reads its block index or count would do the same
   * work in every block (an accumulation would count it blockDim times):
   * it runs once, with the threads its blocks would have had. */
  bool as_one = (desc->flags & ASC_KERNEL_NOT_SPMD) && m->abi_version >= 5;
  uint32_t blocks = as_one ? 1 : blockDim;
  int np;
  ascError_t err;

  if ((desc->flags & ASC_KERNEL_USES_BARRIER) &&
      blocks > (uint32_t)dev->ncores)
    return asc__error(ascErrorLaunchFailure,
                      "ascLaunchKernel: kernel '%s' uses asc.barrier(), so "
                      "all %u blocks must run at once, but the device has "
                      "%d cores",
                      k->info.name, blockDim, dev->ncores);
  np = k->info.numParams + k->info.numResults;
  if (k->info.numResults > 0 && blocks != 1)
    return asc__error(ascErrorInvalidValue,
                      "ascLaunchKernel: kernel '%s' returns a value, so it "
                      "runs as one block (blockDim %u given)",
                      k->info.name, blockDim);
  if (np > STACK_PARAMS) {
    sizes = asc__malloc((size_t)np * sizeof *sizes);
    if (sizes == NULL)
      return asc__error(ascErrorOutOfMemory, "cannot copy launch arguments");
  }
  for (int i = 0; i < np; i++) {
    const ascKernelParamInfo *p;
    if (i >= k->info.numParams) {
      /* a result: the kernel writes the caller's ascResult */
      memset(args[i], 0, sizeof(ascResult));
      sizes[i] = 0;
      continue;
    }
    p = &k->info.params[i];
    if (p->isTensor)
      sizes[i] = sizeof(ascTensor);
    else if (p->generic || p->dtype == ascDataTypeCount)
      sizes[i] = sizeof(ascScalar);
    else
      sizes[i] = ascDataTypeSize(p->dtype);
  }
  err = asc__stream_launch(st, desc, blocks, blockDim, (uint32_t)np,
                           np > 0 ? sizes : NULL, (const void *const *)args,
                           &m->inflight, spec_inflight, ran_here);
  if (sizes != stack_sizes)
    asc__free(sizes);
  return err;
}

/* k and its module m are held by the caller; ran_here as
 * asc__stream_launch's. */
static ascError_t launch_kernel(asc__kernel *k, asc__module *m,
                                uint32_t blockDim, void **args,
                                ascStream_t stream, bool *ran_here) {
  asc__stream *st;
  const asc_kernel_desc *desc;
  asc__inflight *spec_inflight;
  struct asc__spec *pin;
  ascError_t err;

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
  if (m->aot != NULL) {
    /* Ahead-of-time code: pick the specialisation, never compile. */
    err = asc__aot_select(m->aot, k->index, (void *const *)args, &desc);
    if (err != ascSuccess)
      return err;
    return queue_launch(k, m, st, desc, blockDim, args, NULL, ran_here);
  }
  if (m->py == NULL)
    return queue_launch(k, m, st, k->desc, blockDim, args, NULL, ran_here);
  /* The pin keeps the specialisation loaded until the launch is queued
   * and counted in spec_inflight. */
  err = asc__pymodule_specialize_pin(m->py, k->index, (void *const *)args,
                                     st->rt->dev->prop.l1CacheSize,
                                     &desc, &spec_inflight, &pin);
  if (err != ascSuccess)
    return err;
  err = queue_launch(k, m, st, desc, blockDim, args, spec_inflight,
                     ran_here);
  asc__pymodule_unpin(pin);
  return err;
}

/* ascLaunchKernel, and with ran_here asc__launch_kernel_here. */
static ascError_t launch_gated(ascKernel_t kernel, uint32_t blockDim,
                               void **args, ascStream_t stream,
                               bool *ran_here) {
  asc__kernel *k;
  asc__module *m;
  asc__rt *rt;
  ascError_t err = api_enter_current(&rt);

  if (err != ascSuccess)
    return err;
  err = kernel_acquire(kernel, &k, &m);
  if (err == ascSuccess) {
    err = launch_kernel(k, m, blockDim, args, stream, ran_here);
    module_put(rt, m);
  }
  /* It ran: the stream is idle, and this reports its outcome without
   * leaving the gate (a reset meanwhile would destroy the stream). */
  if (err == ascSuccess && ran_here != NULL && *ran_here) {
    asc__stream *st;
    err = asc__stream_resolve(stream, &st);
    if (err == ascSuccess)
      err = asc__stream_synchronize(st);
  }
  asc__api_leave(rt);
  return err;
}

ascError_t ascLaunchKernel(ascKernel_t kernel, uint32_t blockDim, void **args,
                           ascStream_t stream) {
  return launch_gated(kernel, blockDim, args, stream, NULL);
}

ascError_t asc__launch_kernel_here(ascKernel_t kernel, uint32_t blockDim,
                                   void **args, ascStream_t stream,
                                   bool *done) {
  *done = false;
  return launch_gated(kernel, blockDim, args, stream, done);
}
