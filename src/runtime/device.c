/*
 * Devices.  The CPU device is the set of cores hwloc finds inside the
 * process's allowed cpuset (taskset, cgroups), optionally narrowed by
 * ASC_VISIBLE_CORES.  One worker thread runs per core, pinned to the core's
 * first allowed PU.
 *
 * The topology is loaded once per process; tests point hwloc at synthetic or
 * XML topologies with HWLOC_SYNTHETIC / HWLOC_XMLFILE.
 */
#include <ctype.h>
#include <hwloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "asc/version.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"

typedef struct runtime {
  ascError_t init_status;
  char init_message[512];
  hwloc_topology_t topo;
  int ndevices;
  asc__device devices[1];
} runtime;

static runtime rt;
static uv_once_t rt_once = UV_ONCE_INIT;

/* Parses a cpulist such as "0,2-5" into a bitmap of OS PU indices.
 * Returns false on a malformed list. */
static bool parse_cpulist(const char *s, hwloc_bitmap_t set) {
  hwloc_bitmap_zero(set);
  while (*s) {
    char *end;
    long lo, hi;

    while (isspace((unsigned char)*s))
      s++;
    if (!isdigit((unsigned char)*s))
      return false;
    lo = strtol(s, &end, 10);
    hi = lo;
    s = end;
    if (*s == '-') {
      s++;
      if (!isdigit((unsigned char)*s))
        return false;
      hi = strtol(s, &end, 10);
      s = end;
    }
    if (lo < 0 || hi < lo || hi > 65535)
      return false;
    hwloc_bitmap_set_range(set, (unsigned)lo, (int)hi);
    while (isspace((unsigned char)*s))
      s++;
    if (*s == ',')
      s++;
    else if (*s != '\0')
      return false;
  }
  return true;
}

static size_t cache_size(hwloc_topology_t topo, hwloc_obj_type_t type) {
  hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL);
  return o && o->attr ? (size_t)o->attr->cache.size : 0;
}

static int simd_width(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return 64;
  if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx"))
    return 32;
  return 16;
#elif defined(__aarch64__)
  return 16;
#else
  return (int)sizeof(long);
#endif
}

static void fill_props(asc__device *d, hwloc_topology_t topo) {
  ascDeviceProp *p = &d->prop;
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  const char *model = NULL;
  hwloc_obj_t pkg = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, NULL);
  int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  int npkg = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

  memset(p, 0, sizeof *p);
  if (pkg != NULL)
    model = hwloc_obj_get_info_by_name(pkg, "CPUModel");
  if (model == NULL)
    model = hwloc_obj_get_info_by_name(root, "CPUModel");
  snprintf(p->name, sizeof p->name, "%s", model ? model : "CPU");
  p->cores = d->ncores;
  p->numaNodes = nnuma > 0 ? nnuma : 1;
  p->sockets = npkg > 0 ? npkg : 1;
  p->l1CacheSize = cache_size(topo, HWLOC_OBJ_L1CACHE);
  p->l2CacheSize = cache_size(topo, HWLOC_OBJ_L2CACHE);
  p->l3CacheSize = cache_size(topo, HWLOC_OBJ_L3CACHE);
  p->simdWidth = simd_width();
  p->totalGlobalMem = (size_t)root->total_memory;
  if (p->totalGlobalMem == 0 && pages > 0 && psize > 0)
    p->totalGlobalMem = (size_t)pages * (size_t)psize;
  p->firstCore = d->ncores > 0 ? d->core_pu[0] : -1;
}

/* Picks the usable cores: allowed by the OS and by ASC_VISIBLE_CORES. */
static ascError_t discover_cores(asc__device *d, hwloc_topology_t topo) {
  hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
  hwloc_bitmap_t visible = hwloc_bitmap_alloc();
  hwloc_bitmap_t usable = hwloc_bitmap_alloc();
  const char *env = getenv("ASC_VISIBLE_CORES");
  int ncore_objs = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_obj_type_t unit = ncore_objs > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  int nunits = hwloc_get_nbobjs_by_type(topo, unit);
  ascError_t err = ascSuccess;

  if (visible == NULL || usable == NULL) {
    err = asc__error(ascErrorOutOfMemory, "cannot allocate cpusets");
    goto out;
  }
  if (env != NULL && *env != '\0') {
    if (!parse_cpulist(env, visible)) {
      err = asc__error(ascErrorInvalidValue,
                       "ASC_VISIBLE_CORES='%s' is not a cpulist such as "
                       "'0,2-5'", env);
      goto out;
    }
  } else {
    hwloc_bitmap_fill(visible);
  }
  d->core_pu = asc__calloc((size_t)(nunits > 0 ? nunits : 1), sizeof(int));
  d->core_numa = asc__calloc((size_t)(nunits > 0 ? nunits : 1), sizeof(int));
  if (d->core_pu == NULL || d->core_numa == NULL) {
    err = asc__error(ascErrorOutOfMemory, "cannot allocate the core table");
    goto out;
  }
  d->ncores = 0;
  for (int i = 0; i < nunits; i++) {
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, unit, (unsigned)i);
    hwloc_obj_t numa;
    int pu;

    hwloc_bitmap_and(usable, o->cpuset, allowed);
    hwloc_bitmap_and(usable, usable, visible);
    pu = hwloc_bitmap_first(usable);
    if (pu < 0)
      continue;
    d->core_pu[d->ncores] = pu;
    numa = o;
    while (numa != NULL && numa->memory_arity == 0)
      numa = numa->parent;
    d->core_numa[d->ncores] =
        numa && numa->memory_first_child ? (int)numa->memory_first_child->logical_index : 0;
    d->ncores++;
  }
  if (d->ncores == 0)
    err = asc__error(ascErrorNoDevice,
                     "no usable core: the allowed cpuset and "
                     "ASC_VISIBLE_CORES ('%s') do not intersect",
                     env ? env : "");
out:
  hwloc_bitmap_free(visible);
  hwloc_bitmap_free(usable);
  return err;
}

static bool has_data_cache(hwloc_topology_t t) {
  return hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L1CACHE) > 0 ||
         hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L2CACHE) > 0 ||
         hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L3CACHE) > 0;
}

/* Loads the machine's topology into *out.  hwloc's x86 backend runs CPUID
 * on every PU (a VM exit each under a hypervisor: about 1 ms of a
 * process's first call on the 2-core development VM) and adds nothing
 * when Linux's sysfs describes the caches, so it is left out unless the
 * topology comes back without any data cache. */
static int load_topology_with_plugins(hwloc_topology_t *out) {
  hwloc_topology_t t;

#if HWLOC_API_VERSION >= 0x00020100
  if (hwloc_topology_init(&t) == 0) {
    if (hwloc_topology_set_components(
            t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86") == 0 &&
        hwloc_topology_load(t) == 0 && has_data_cache(t)) {
      *out = t;
      return 0;
    }
    hwloc_topology_destroy(t);
  }
#endif
  if (hwloc_topology_init(&t) != 0)
    return -1;
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    return -1;
  }
  *out = t;
  return 0;
}

/* load_topology_with_plugins without hwloc's plugins, unless the user
 * chose them (HWLOC_PLUGINS_PATH or HWLOC_PLUGINS_BLACKLIST set).  hwloc
 * dlopens every plugin of its plugin directory when the first topology
 * is made: PCI, OpenCL, GL and libxml2 readers, with the libraries they
 * link (libX11, libpciaccess, the OpenCL loader, libxml2).  That took
 * 3 to 60 ms of a process's first call on the 2-core development VM
 * (the whole load is under 1 ms without), and libasc uses none of them:
 * I/O objects are not discovered, and hwloc reads an XML topology
 * (HWLOC_XMLFILE) with its own parser when libxml2's is not loaded.  An
 * empty plugin path is set for the load only, so the process's
 * environment is left as it was (as src/jit/blas.c does for OpenBLAS);
 * runs under runtime_init's once. */
static int load_topology(hwloc_topology_t *out) {
  bool quiet = getenv("HWLOC_PLUGINS_PATH") == NULL &&
               getenv("HWLOC_PLUGINS_BLACKLIST") == NULL &&
               setenv("HWLOC_PLUGINS_PATH", "", 0) == 0;
  int rc = load_topology_with_plugins(out);

  if (quiet)
    unsetenv("HWLOC_PLUGINS_PATH");
  return rc;
}

static void runtime_init(void) {
  asc__device *d = &rt.devices[0];

  asc__trace_env_start();
  rt.init_status = ascSuccess;
  if (load_topology(&rt.topo) != 0) {
    rt.init_status = asc__error(ascErrorNotInitialized,
                                "hwloc could not load the machine topology");
    goto fail;
  }
  d->ordinal = 0;
  d->topo = rt.topo;
  rt.init_status = discover_cores(d, rt.topo);
  if (rt.init_status != ascSuccess)
    goto fail;
  fill_props(d, rt.topo);
  rt.ndevices = 1;
  asc__fork_init();
  return;
fail:
  snprintf(rt.init_message, sizeof rt.init_message, "%s",
           ascGetLastErrorMessage());
}

/* Set once runtime_init has succeeded: every later call, most of them
 * on the launch path, skips uv_once (two calls and its own checks). */
static atomic_bool rt_ready;

ascError_t asc__init(void) {
  if (atomic_load_explicit(&rt_ready, memory_order_acquire))
    return ascSuccess;
  uv_once(&rt_once, runtime_init);
  if (rt.init_status == ascSuccess)
    atomic_store_explicit(&rt_ready, true, memory_order_release);
  if (rt.init_status != ascSuccess)
    return asc__error(rt.init_status, "%s", rt.init_message);
  return ascSuccess;
}

ascError_t ascInit(unsigned int flags) {
  if (flags != 0)
    return asc__error(ascErrorInvalidValue, "ascInit: flags must be 0, got %u",
                      flags);
  return asc__init();
}

ascError_t asc__get_device(asc__device **dev, int ordinal) {
  ascError_t e = asc__init();
  if (e != ascSuccess)
    return e;
  if (ordinal < 0 || ordinal >= rt.ndevices)
    return asc__error(ascErrorInvalidDevice,
                      "device %d does not exist (%d device%s)", ordinal,
                      rt.ndevices, rt.ndevices == 1 ? "" : "s");
  *dev = &rt.devices[ordinal];
  return ascSuccess;
}

int asc__device_count(void) { return rt.ndevices; }

asc__device *asc__device_at(int i) { return &rt.devices[i]; }

ascError_t asc__current_device(asc__device **dev) {
  return asc__get_device(dev, asc__tls_get()->device);
}

ascError_t ascGetDeviceCount(int *count) {
  ascError_t e;
  if (count == NULL)
    return asc__error(ascErrorInvalidValue, "ascGetDeviceCount: count is NULL");
  e = asc__init();
  if (e != ascSuccess)
    return e;
  *count = rt.ndevices;
  return ascSuccess;
}

ascError_t ascSetDevice(int device) {
  asc__device *d = NULL;
  ascError_t e = asc__get_device(&d, device);
  if (e != ascSuccess)
    return e;
  asc__tls_get()->device = device;
  return ascSuccess;
}

ascError_t ascGetDevice(int *device) {
  ascError_t e;
  if (device == NULL)
    return asc__error(ascErrorInvalidValue, "ascGetDevice: device is NULL");
  e = asc__init();
  if (e != ascSuccess)
    return e;
  *device = asc__tls_get()->device;
  return ascSuccess;
}

ascError_t ascGetDeviceProperties(ascDeviceProp *prop, int device) {
  asc__device *d = NULL;
  ascError_t e;
  if (prop == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascGetDeviceProperties: prop is NULL");
  e = asc__get_device(&d, device);
  if (e != ascSuccess)
    return e;
  *prop = d->prop;
  return ascSuccess;
}

static _Thread_local asc__tls tls_state;

asc__tls *asc__tls_get(void) { return &tls_state; }

ascError_t ascGetVersion(int *version) {
  if (version == NULL)
    return asc__error(ascErrorInvalidValue, "ascGetVersion: version is NULL");
  *version = ASC_VERSION_MAJOR * 10000 + ASC_VERSION_MINOR * 100 +
             ASC_VERSION_PATCH;
  return ascSuccess;
}
