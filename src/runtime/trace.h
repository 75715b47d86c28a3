/*
 * Tracing: a timeline of streams, launches, blocks, copies, host
 * functions, event records and waits, pool allocations and compiles,
 * written as Chrome trace-event JSON (docs/tracing.md).
 *
 * Each thread appends fixed-size records to its own chunk without a lock
 * (the recorder: base/trace_rec.h, which every layer's hooks write to);
 * the flusher here (ascProfilerStop, ascDeviceReset, process exit) reads
 * whole records only.  With tracing off every hook costs one
 * relaxed load of asc__trace_on and a predicted branch; a block's end
 * and a launch's completion none (scheduler.c runs blocks that start
 * while tracing through a traced copy of the block body, stream.c gives
 * launches started while tracing a traced completion), nor an external
 * op's completion (it records the span of an op the started hook
 * stamped).
 *
 * Locks: hooks may be called with a stream spinlock, a pool lock or the
 * pool's ready-list lock held.  Now and then a hook takes the recorder's
 * lock, a leaf lock: the flusher holds it, with the session it guards,
 * while formatting and takes no other libasc lock.
 */
#ifndef ASC_TRACE_H
#define ASC_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/trace.h"
#include "runtime/runtime.h"

/* Starts a session from $ASC_TRACE, if set (once, at runtime init). */
void asc__trace_env_start(void);
/* Writes the current session's file (ascDeviceReset); keeps tracing. */
void asc__trace_checkpoint(void);

/* Stream ops (stream.c, scheduler.c); see trace.c. */
struct asc__op;
struct asc__stream;
struct asc__launch;
void asc__trace_op_queued(struct asc__op *op);
void asc__trace_op_started(struct asc__op *op);
void asc__trace_launch_done(struct asc__op *op, const char *error);
void asc__trace_block(const struct asc__launch *l, uint32_t block,
                      uint64_t t0);
void asc__trace_extern_done(struct asc__op *op, const char *error);
void asc__trace_hostfn(struct asc__op *op, uint64_t t0);
void asc__trace_record(struct asc__stream *st, struct asc__op *op);
void asc__trace_wait(struct asc__stream *st, struct asc__op *op);

#endif /* ASC_TRACE_H */
