/*
 * External ops: stream-ordered work that a component outside the runtime
 * (libasc_mpi) starts when the stream reaches it and completes later,
 * from any thread, without a worker core or the host-callback thread
 * waiting for it meanwhile.
 *
 * Not a public API: no stability promise, not in docs/api.md.  The
 * functions below are exported from libasc.so (asc__ prefix, default
 * visibility) only so that libasc_mpi.so, built in the same tree against
 * the same version, can reach the one runtime the program uses
 * (docs/decisions.md, "External ops").  This header includes only the
 * public header, so a component sees no runtime internals.
 */
#ifndef ASC_RUNTIME_EXTERN_OP_H
#define ASC_RUNTIME_EXTERN_OP_H

#include <stdbool.h>
#include <stdint.h>

#include "asc/asc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct asc__op asc__extern;

/* Called exactly once, when every earlier op of the stream has finished,
 * on whichever thread advanced the stream (a worker, the callback thread,
 * a host thread inside a libasc call or a thread that completed another
 * external op), with no libasc lock held.  status is the stream's pending
 * error (ascSuccess or the error an earlier op left); the op is never
 * skipped, so a component can keep peers in step after a local failure.
 * start must not block: it hands the work to its own thread. */
typedef void (*asc__extern_start_fn)(void *ud, asc__extern *op,
                                     ascError_t status);

/* Queues an external op on stream (NULL: the default stream).  Later
 * work on the stream waits until asc__extern_complete(op).  On failure
 * start never runs. */
ASC_API ascError_t asc__stream_enqueue_extern(ascStream_t stream,
                                              asc__extern_start_fn start,
                                              void *ud);

/* As asc__stream_enqueue_extern, and names the op in traces: an op
 * started while tracing is a span on its stream's track (cat "extern",
 * from reaching the head of the stream to asc__extern_complete, with
 * args bytes, queued_us and error; docs/tracing.md).  name (NULL or
 * empty: "external op") must stay valid until the op completes: a
 * literal.  bytes (0: none) is what the op moves. */
ASC_API ascError_t asc__stream_enqueue_extern_named(
    ascStream_t stream, asc__extern_start_fn start, void *ud,
    const char *name, uint64_t bytes);

/* Completes op, exactly once, from any thread (start itself included).
 * err != ascSuccess becomes the stream's pending error unless one is
 * already pending, reported by the next synchronising call and carried
 * by later event records like a kernel error; msg (copied; NULL for the
 * error's generic text) is its message.  Later work of the stream may
 * start on the calling thread before this returns, so the caller must
 * hold no lock that such work (another external op's start) takes. */
ASC_API void asc__extern_complete(asc__extern *op, ascError_t err,
                                  const char *msg);

/* Records code and text (copied) as the calling thread's last error, as
 * libasc's own calls do, and returns code: a component's failing calls
 * read like libasc's (ascGetLastErrorMessage). */
ASC_API ascError_t asc__extern_error(ascError_t code, const char *text);

/* Progress in the waiter.  A host thread about to wait in libasc
 * (ascStreamSynchronize, ascEventSynchronize, ascDeviceSynchronize, a
 * full queue) first calls the hook again and again while what it waits
 * for is not done: the hook polls the component's in-flight work once,
 * completing what has finished (asc__extern_complete, on the waiting
 * thread), and returns ASC__EXTERN_IDLE when it has nothing in flight
 * (the thread then waits the ordinary way), ASC__EXTERN_BUSY when work
 * is in flight but nothing completed (ASC__EXTERN_BUSY_STREAM when some
 * of it was queued on stream: the thread then polls longer),
 * ASC__EXTERN_PROGRESS when something did.  After a while without
 * progress the thread stops calling it and waits the ordinary way, so
 * the component's own thread must still complete everything.  With may_block the thread waits,
 * without a deadline, for stream (NULL: the default stream) to pass
 * what was queued on it: the hook may then block in a call that waits
 * for peers, for work queued on that stream only (blocking for another
 * stream could hold the waiter, and whatever it does next, on a peer
 * that needs it first).  The hook runs with no libasc lock held, on any
 * host thread, possibly on several at once.  One hook per
 * process; NULL removes it. */
enum {
  ASC__EXTERN_IDLE = 0,
  ASC__EXTERN_BUSY = 1,
  ASC__EXTERN_PROGRESS = 2,
  ASC__EXTERN_BUSY_STREAM = 3
};
typedef int (*asc__extern_poll_fn)(bool may_block, ascStream_t stream);
ASC_API void asc__extern_set_poll(asc__extern_poll_fn fn);

/* Cancellation.  When a stream whose head is an external op is stopped
 * (ascStreamCancel), the runtime calls the hook with the stream (NULL:
 * the default stream), after the stream's pending error is set; when
 * ascDeviceReset stops every stream, with every set.  On the stopping
 * thread, with no libasc lock held.  The component completes what it can
 * give up of its work queued on that stream, or on any (every)
 * (asc__extern_complete, exactly once as always, at once or later), and
 * leaves the rest running.  Any thread, possibly several at once,
 * possibly for a stream with nothing of the component's.  One hook per
 * process; NULL removes it. */
typedef void (*asc__extern_cancel_fn)(ascStream_t stream, bool every);
ASC_API void asc__extern_set_cancel(asc__extern_cancel_fn fn);

#ifdef ASC_BUILDING_LIBRARY
/* Runtime side (host_wait_until): drives the hook until done(a, b)
 * (true), or until it is idle, the drive window passes without progress
 * or uv_hrtime() reaches deadline (UINT64_MAX: none); then false unless
 * done.  stream: the asc__stream the wait is for, NULL if not a stream
 * wait. */
bool asc__extern_drive(bool (*done)(const void *, uint64_t), const void *a,
                       uint64_t b, uint64_t deadline, const void *stream);
/* Runtime side of cancellation: calls the cancel hook, if one is set,
 * for the stream handle (NULL: the default stream) or every stream. */
void asc__extern_cancel(ascStream_t stream, bool every);
#endif

#ifdef __cplusplus
}
#endif

#endif /* ASC_RUNTIME_EXTERN_OP_H */
