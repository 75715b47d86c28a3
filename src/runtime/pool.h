/*
 * Stream-ordered memory pools (ascMallocAsync, ascMemPool*).  See
 * docs/pools.md for the semantics.
 *
 * This header has two halves:
 *
 *  - what the rest of the runtime calls: the synchronisation hook that
 *    applies release thresholds, and device reset;
 *
 *  - the "stream order" interface the pool needs from the stream code,
 *    implemented in pool_order.c: a stream's position is the number of
 *    operations enqueued on it so far, and the pool asks whether a position
 *    has been completed, or whether another stream's future work is ordered
 *    after it through events.
 *
 * Locking: each device's pool state has one mutex (the "pools lock").  It
 * is taken after no other libasc lock: callers must not hold a stream,
 * event or scheduler lock when calling the hooks below.  While holding it
 * the pool calls asc__order_now, asc__order_reached and asc__order_waited
 * (atomics and one stream's spinlock), jemalloc and hwloc; it calls
 * asc__order_wait, which queues stream work and may block, only with the
 * pools lock dropped.  asc__order_note_wait is called by the stream code
 * with a stream lock held and takes no lock.
 */
#ifndef ASC_POOL_H
#define ASC_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/runtime.h"

/* ---------------------------------------------------- hooks for the runtime */

/* Applies every pool's release threshold on device d: cached memory whose
 * frees have completed is returned to the arena (and its pages to the OS)
 * until each pool reserves no more than its threshold.  Called by
 * ascStreamSynchronize, ascEventSynchronize and ascDeviceSynchronize after
 * the wait succeeded, with no libasc lock held.  Never fails. */
void asc__pool_on_sync(asc__device *d);

/* Frees every pool of d, their blocks (live ones too) and arenas; the
 * default pool is created again on next use.  Called by ascDeviceReset
 * when no work is in flight. */
void asc__pool_device_reset(asc__device *d);

/* fork(): prepare takes the pools lock of d (first of the runtime's
 * locks: see fork.c), parent releases it, child makes it new. */
void asc__pool_fork_prepare(asc__device *d);
void asc__pool_fork_parent(asc__device *d);
void asc__pool_fork_child(asc__device *d);

/* Test seam: number of failed NUMA bindings in pool p (0 when bound or
 * when the machine has a single node). */
uint64_t asc__pool_bind_failures(ascMemPool_t p);

/* Test seam: the blocks the calling thread's cache holds, freed and
 * waiting for its next allocation of their class on their stream. */
int asc__pool_thread_cached(void);

/* Rounds a request up to the pool's block size (its size class).  Returns
 * 0 when size is 0 or too large. */
size_t asc__pool_block_size(size_t size);

/* ------------------------------------------------------ stream order */

/* Resolves a public stream handle of the current device (NULL is its
 * default stream) to the key the pool stores with a freed block, and the
 * stream's device.  Invalid or destroyed handles return
 * ascErrorInvalidHandle (last error set).  On success the caller is inside
 * the runtime's API gate (stream.h: ascDeviceReset, which empties the
 * pools, waits for it) and leaves with asc__order_leave(key). */
ascError_t asc__order_stream(ascStream_t s, asc__device **dev, void **key);
/* Enters the API gate as asc__order_stream does, for a key already
 * known; ascErrorNotPermitted while the device is being reset. */
ascError_t asc__order_enter(void *key);
void asc__order_leave(void *key);

/* Position of the last operation enqueued on stream key so far (0 when
 * none).  A free recorded at position n may still be touched by the
 * stream's operations 1..n. */
uint64_t asc__order_now(void *key);

/* True when stream key has completed its operations 1..pos. */
bool asc__order_reached(void *key, uint64_t pos);

/* The highest position p of stream key such that every operation enqueued
 * on stream `waiter` from now on runs after key's operations 1..p-1,
 * through events the waiter has waited on (an ascStreamWaitEvent on an
 * event recorded on key as its operation p); 0 when there is none.  A free
 * at position n is ordered before the waiter's future work when p > n. */
uint64_t asc__order_waited(void *waiter, void *key);

/* Makes stream `waiter` wait (in stream order, without blocking the host)
 * until stream key has completed everything enqueued on it so far.  Returns
 * false, without setting the thread's last error, when it cannot (the pool
 * then takes fresh memory instead). */
bool asc__order_wait(void *waiter, void *key);

/* Called by the stream code with st's lock held when it queues a wait for
 * fence f on st: remembers that st's later work runs after f's record.
 * Takes no lock. */
struct asc__stream;
struct asc__fence;
void asc__order_note_wait(struct asc__stream *st, const struct asc__fence *f);

#endif /* ASC_POOL_H */
