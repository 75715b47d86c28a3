/*
 * Runtime-internal interfaces shared by the runtime's files: per-thread
 * runtime state and devices.  Internal non-static names carry the asc__
 * prefix; none of them is exported from libasc.so (hidden visibility),
 * tests reach them through the static library.
 */
#ifndef ASC_RUNTIME_H
#define ASC_RUNTIME_H

#include "base/base.h"

/* ------------------------------------------------------------- threading */

/* Per host thread state. */
typedef struct asc__tls {
  int device;               /* current device ordinal */
  int in_host_callback;     /* blocking calls return NotPermitted */
  /* pool.c's cache: the pool state of device pools_device (never freed
   * once created, so the pointer cannot dangle). */
  struct asc__pools *pools;
  int pools_device;
  struct tcache *pool_tc;   /* pool.c's thread cache of small blocks */
} asc__tls;

asc__tls *asc__tls_get(void);

/* ---------------------------------------------------------------- devices */

struct hwloc_topology;
typedef struct asc__device asc__device;

struct asc__device {
  int ordinal;
  struct hwloc_topology *topo;   /* owned by the runtime, loaded once */
  int ncores;                    /* usable cores = worker threads */
  int *core_pu;                  /* OS index of one PU per usable core */
  int *core_numa;                /* NUMA node (logical index) of each core */
  ascDeviceProp prop;
  struct asc__sched *sched;      /* worker pool, created on first use */
  struct asc__memory *mem;       /* device memory arenas and ownership */
  struct asc__pools *pools;      /* stream-ordered pools (pool.c) */
  void *rt_private;              /* streams, pools, modules: see their files */
};

/* Initialises the runtime once (thread-safe) and returns its status. */
ascError_t asc__init(void);
/* The calling thread's current device; initialises on first use. */
ascError_t asc__current_device(asc__device **dev);
ascError_t asc__get_device(asc__device **dev, int ordinal);
/* Once the runtime is initialised: the number of devices (0 before or
 * when initialisation failed) and device i of them; never an error. */
int asc__device_count(void);
asc__device *asc__device_at(int i);
/* fork.c: registers the fork() handlers (once, at initialisation). */
void asc__fork_init(void);

#endif /* ASC_RUNTIME_H */
