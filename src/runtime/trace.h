/*
 * Tracing: a timeline of streams, launches, blocks, copies, host
 * functions, event records and waits, pool allocations and compiles,
 * written as Chrome trace-event JSON (docs/tracing.md).
 *
 * Each thread appends fixed-size records to its own chunk without a lock;
 * a full chunk is replaced by a new one, registered once in a list under
 * the list lock.  Records are published by a release store of the chunk's
 * count, so the flusher (ascProfilerStop, ascDeviceReset, process exit)
 * reads whole records only.  With tracing off every hook costs one
 * relaxed load of asc__trace_on and a predicted branch.
 *
 * Locks: hooks may be called with a stream spinlock, a pool lock or the
 * pool's ready-list lock held.  Once every CHUNK_RECS records a hook
 * allocates a chunk and takes the chunk-list lock, a leaf lock: the
 * flusher holds it while formatting and takes no other libasc lock.
 */
#ifndef ASC_TRACE_H
#define ASC_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

extern atomic_int asc__trace_on;

static inline bool asc__tracing(void) {
  return __builtin_expect(
      atomic_load_explicit(&asc__trace_on, memory_order_relaxed) != 0, 0);
}

/* Runs call only while tracing. */
#define ASC_TRACE(call)                                                      \
  do {                                                                       \
    if (asc__tracing())                                                      \
      call;                                                                  \
  } while (0)

/* uv_hrtime() while tracing, else 0: a span's start, which its end hook
 * ignores when 0. */
uint64_t asc__trace_now(void);
static inline uint64_t asc__trace_clock(void) {
  return asc__tracing() ? asc__trace_now() : 0;
}

/* Names the calling thread's track ("worker 3"); cheap, call it once at
 * thread start whether tracing or not. */
void asc__trace_thread_name(const char *prefix, int n);

/* Starts a session from $ASC_TRACE, if set (once, at runtime init). */
void asc__trace_env_start(void);
/* Writes the current session's file (ascDeviceReset); keeps tracing. */
void asc__trace_checkpoint(void);

/* A span [t0, now] on the calling thread's track, in category cat
 * ("compile", "copy", ...).  detail, if not NULL, becomes args.detail;
 * bytes, if not 0, args.bytes.  No-op when t0 == 0. */
void asc__trace_span(const char *cat, const char *name, const char *detail,
                     uint64_t bytes, uint64_t t0);
/* A zero-length mark on the calling thread's track. */
void asc__trace_mark(const char *cat, const char *name, const char *detail);
/* A pool allocation or free of `bytes` from pool, with the pool's
 * reserved and used bytes after it (a counter track per pool). */
void asc__trace_pool(const char *name, const void *pool, uint64_t bytes,
                     uint64_t reserved, uint64_t used);

/* Remembers kernel desc's specialisation signature for launch spans. */
void asc__trace_sig(const void *desc, const char *sig);

/* Stream ops (stream.c, scheduler.c); see trace.c. */
struct asc__op;
struct asc__stream;
struct asc__launch;
void asc__trace_op_queued(struct asc__op *op);
void asc__trace_op_started(struct asc__op *op);
void asc__trace_launch_done(struct asc__op *op, const char *error);
void asc__trace_block(const struct asc__launch *l, uint32_t block,
                      uint64_t t0);
void asc__trace_hostfn(struct asc__op *op, uint64_t t0);
void asc__trace_record(struct asc__stream *st, struct asc__op *op);
void asc__trace_wait(struct asc__stream *st, struct asc__op *op);

#endif /* ASC_TRACE_H */
