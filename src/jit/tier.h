/*
 * Tiered compilation (docs/latency.md, "Tiered compilation").  On a
 * kernel-cache miss a small launch gets a quick build of its
 * specialisation (the same C at -O0, cached under its own key); when the
 * specialisation is launched again its optimised build (the usual -O3
 * entry) is made, published to the cache as any entry, and that launch
 * and the later ones run it: by the launch itself (the default, every
 * later launch being heavy), or by one background thread while the
 * quick code keeps running (ASC_TIER_SLOW_US).  A launch the policy
 * calls heavy never runs the quick code: it waits for the optimised
 * build, or makes it itself.
 *
 *   ASC_TIER        0: no quick tier (every miss builds -O3);
 *                   auto (unset): the policy below; 1: the quick tier
 *                   for every first launch, whatever its size
 *   ASC_TIER_BYTES  a launch is small when its arrays span at most this
 *                   many bytes together (default 64K; suffixes K, M, G),
 *                   none has more elements, and none of its integer
 *                   scalars exceeds ASC__TIER_MAX_INT in magnitude; its
 *                   kernel must also be one whose loops its arguments
 *                   bound (asc__ir_work_bounded), else it builds -O3
 *   ASC_TIER_SLOW_US a quick specialisation whose launches ran this long
 *                   on average (default 0: any) is heavy from its second
 *                   launch on; a faster one leaves its -O3 build to the
 *                   background thread
 *
 * The optimised build of a specialisation is one asc__tier_job, made by
 * the launch that asks for it (the C text, the key) and run by the
 * background thread or by a heavy launch, whichever comes first.  Each
 * job's state is guarded by one process-wide lock (a leaf: the builds
 * run without it).
 */
#ifndef ASC_TIER_H
#define ASC_TIER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "asc/kernel_abi.h"
#include "base/base.h"
#include "jit/cache.h"
#include "jit/cc.h"

typedef enum asc__tier_mode {
  ASC__TIER_OFF,    /* ASC_TIER=0 */
  ASC__TIER_AUTO,   /* unset or "auto" */
  ASC__TIER_FIRST   /* ASC_TIER=1 */
} asc__tier_mode;

/* Integer scalars larger than this may be loop bounds: such a launch is
 * not small. */
#define ASC__TIER_MAX_INT 256

/* ASC_TIER now; anything but 0, 1 and auto warns once and is auto. */
asc__tier_mode asc__tier_mode_env(void);
/* ASC_TIER_BYTES now. */
uint64_t asc__tier_small_bytes(void);
/* ASC_TIER_SLOW_US now, in nanoseconds: a quick specialisation whose
 * launches ran this long on average is heavy from then on. */
uint64_t asc__tier_slow_ns(void);

struct asc__jit_lib;

typedef enum asc__tier_state {
  ASC__TIER_IDLE,     /* made, not queued (or dropped from the queue) */
  ASC__TIER_QUEUED,   /* waiting for the background thread */
  ASC__TIER_RUNNING,  /* being built (by the thread or a launch) */
  ASC__TIER_DONE      /* built and loaded, or failed (err) */
} asc__tier_state;

/* One optimised build. */
typedef struct asc__tier_job {
  /* what to build, set by asc__jit_tier_job */
  asc__cache *cache;
  const asc__cc *cc;
  asc__cc_opts ccopts;
  asc__cache_key key, ikey;  /* the entry's key, its index record's */
  bool indexed;              /* ikey is usable */
  asc__buf text;             /* the C translation unit */
  char *kernel_name;
  /* the result (state DONE) */
  ascError_t err;
  struct asc__jit_lib *lib;
  const asc_kernel_desc *desc;
  /* tier.c's, under its lock */
  asc__tier_state state;
  bool orphan;               /* its specialisation is gone: free when done */
  /* where a successful build is published: the specialisation's
   * descriptor pointer, which launches read once each */
  _Atomic(const asc_kernel_desc *) *target;
  atomic_bool *quick;        /* the specialisation's flag, cleared when done */
  atomic_bool *timed;        /* its launches' timing (inflight.h), the same */
  struct asc__tier_job *next;
} asc__tier_job;

/* Builds j now on the calling thread (asc__jit_tier_build) unless the
 * background thread has it, then waits until it is DONE.  The job's
 * descriptor is published to its target on success. */
void asc__tier_run_now(asc__tier_job *j);
/* Queues j for the background thread (started on first use) unless it
 * is queued, running or done already, or the process is exiting. */
void asc__tier_enqueue(asc__tier_job *j);
/* The specialisation holding j is being unloaded (no launch runs its
 * code): j is freed now, or by the builder when it finishes. */
void asc__tier_release(asc__tier_job *j);

/* The lock guarding every job's state and the specialisations' tier
 * fields (driver.c), and the condition broadcast when any job or
 * specialisation changes. */
void asc__tier_lock(void);
void asc__tier_unlock(void);
void asc__tier_wait(void);
void asc__tier_broadcast(void);

#endif /* ASC_TIER_H */
