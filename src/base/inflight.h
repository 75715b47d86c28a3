/*
 * In-flight counts: work of an object (a module, a specialisation) queued
 * or running, as launched - retired.  The runtime counts; the runtime and
 * jit/ (which must not unload code a launch still uses) read.
 */
#ifndef ASC_BASE_INFLIGHT_H
#define ASC_BASE_INFLIGHT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef ASC_CACHE_LINE
#define ASC_CACHE_LINE 64
#endif

/* The two counters are a cache line apart, so the host thread that counts
 * launches and the worker that counts completions do not trade a line per
 * launch. */
typedef struct asc__inflight {
  _Atomic uint64_t launched;
  /* Set by jit/ while a specialisation runs its quick tier (tier.h): the
   * runtime then adds each launch's time, from its dispatch to its
   * completion, to busy_ns (read with the submitter's line). */
  atomic_bool timed;
  char pad[ASC_CACHE_LINE - sizeof(uint64_t) - sizeof(atomic_bool)];
  _Atomic uint64_t retired;
  _Atomic uint64_t busy_ns;
} asc__inflight;

/* True if, at some moment during the call, nothing was in flight. */
static inline bool asc__inflight_idle(asc__inflight *c) {
  uint64_t r = atomic_load(&c->retired);   /* first: see stream.c */
  return atomic_load(&c->launched) == r;
}

#endif /* ASC_BASE_INFLIGHT_H */
