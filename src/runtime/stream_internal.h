/*
 * Shared by the files of the stream runtime (stream.c, stream_api.c,
 * event.c, hostfn.c, rt.c) and by nothing else: the other layers use
 * stream.h.
 */
#ifndef ASC_STREAM_INTERNAL_H
#define ASC_STREAM_INTERNAL_H

#include "runtime/extern_op.h"
#include "runtime/stream.h"

/* An op to queue (asc__stream_enqueue): its kind and what that kind
 * needs. */
typedef struct asc__op_spec {
  int kind;
  asc__fence *fence;        /* RECORD, WAIT: a reference handed over */
  ascHostFn_t fn;
  void *ud;
  asc__stream_cb cb;
  asc__extern_start_fn xstart;
  /* One kind's fields share memory: a launch's spec, which is zeroed
   * whole, stays as small as before EXTERN had any. */
  union {
    struct {                /* LAUNCH */
      const asc_kernel_desc *desc;
      uint32_t nblocks;
      uint32_t share;       /* asc__stream_launch */
      uint32_t nargs;
      const size_t *sizes;
      const void *const *src;
      bool *ran_here;       /* asc__stream_launch */
    };
    struct {                /* EXTERN: its name and bytes in traces */
      const char *xname;
      uint64_t xbytes;
    };
  };
  asc__inflight *inflight;
  asc__inflight *spec_inflight;
  asc__sched *sched;
} asc__op_spec;

/* The launches a waiting host thread may work on: those queued before
 * its wait began, of one stream (st: positions up to `upto`) or of the
 * whole device (st NULL: device-wide positions up to `upto`). */
typedef struct asc__help_scope {
  const asc__stream *st;
  uint64_t upto;
} asc__help_scope;

/* The message of a kernel error whose text was lost to out-of-memory. */
extern const char asc__lost_message[];

/* ------------------------------------------------------------- stream.c */

/* Fences: the reference-counted point an event record signals.
 * asc__fence_new returns one reference (NULL when out of memory);
 * asc__fence_unref accepts NULL.  asc__fence_done is a wait condition
 * (asc__host_wait) over a fence. */
asc__fence *asc__fence_new(void);
void asc__fence_ref(asc__fence *f);
void asc__fence_unref(asc__fence *f);
bool asc__fence_done(const void *a, uint64_t unused);

/* st's lock held: sets st's pending error (msg owned, may be NULL). */
void asc__stream_set_error(asc__stream *st, ascError_t code, uint64_t id,
                           char *msg);
/* The running head op of st has finished with err and msg (owned, may be
 * NULL): completes it and starts what follows. */
void asc__stream_finish(asc__stream *st, asc__op *op, ascError_t err,
                        char *msg);
/* A new stream of rt (rt lock not held); NULL when out of memory. */
asc__stream *asc__stream_alloc(asc__rt *rt, unsigned flags, int priority,
                               bool is_default);
/* Queues the op sp describes on st, after the legacy default stream's
 * dependencies; takes over sp->fence. */
ascError_t asc__stream_enqueue(asc__stream *st, asc__op_spec *sp);
/* True when st has queued work that has not completed. */
static inline bool asc__stream_pending(asc__stream *st) {
  return atomic_load(&st->submitted) != atomic_load(&st->completed);
}
/* st's lock held: true for the one caller that must reap st (a destroyed
 * stream whose queue has drained); that caller then calls
 * asc__stream_reap, which returns st's memory to the free list. */
bool asc__stream_check_reap(asc__stream *st);
void asc__stream_reap(asc__stream *st);
/* rt lock held: moves st from rt's live list to its free list. */
void asc__stream_unlist(asc__stream *st);

/* In a forked child, for every stream of rt: first asc__stream_fork_stop
 * (stops st's work and signals its records), then asc__stream_fork_drop
 * (drops its ops: st is idle, its error kept; a destroyed stream is
 * retired).  Only the calling thread exists; the rt lock is not taken. */
void asc__stream_fork_stop(asc__stream *st);
void asc__stream_fork_drop(asc__stream *st);

/* --------------------------------------------------------- stream_api.c */

/* Stops st's running launch (why: an ASC__STOP_* reason) and skips its
 * queued work.  True when st's head is an external op, which only its
 * component can stop: the caller then calls asc__extern_cancel once it
 * holds no lock. */
bool asc__stop_stream(asc__stream *st, int why, const char *msg);
/* Blocks the calling host thread until done(a, b) (stream_api.c explains
 * spin and scope). */
void asc__host_wait(asc__rt *rt, bool (*done)(const void *, uint64_t),
                    const void *a, uint64_t b, bool spin,
                    const asc__help_scope *scope);
/* Waits for the work queued so far on every stream of rt (all, or the
 * default stream and blocking streams); the unbounded form waits until
 * every matching stream is idle. */
void asc__wait_streams(asc__rt *rt, bool blocking_only);
void asc__wait_streams_unbounded(asc__rt *rt, bool blocking_only);
/* True on the host-callback thread inside a host function; the error
 * synchronising calls return there. */
bool asc__in_callback(void);
ascError_t asc__not_permitted(const char *what);
/* Set once a host-callback thread has been started (hostfn.c), never
 * cleared: until then no thread can be inside a host function, and
 * asc__in_callback reads no thread-local (a call and __tls_get_addr
 * on every synchronisation). */
extern atomic_bool asc__host_threads;

/* ------------------------------------------------------------- hostfn.c */

/* Starts rt's callback thread if it is not running. */
ascError_t asc__host_start(asc__rt *rt);
/* Hands host-function op to the callback thread. */
void asc__host_post(asc__rt *rt, asc__op *op);
/* Stops the callback thread; every host function has run. */
void asc__host_stop(asc__rt *rt);

/* -------------------------------------------------------------- event.c */

/* rt lock held: destroys event e. */
void asc__event_free_locked(asc__rt *rt, asc__event *e);

/* ----------------------------------------------------------------- rt.c */

/* Starts the timeout watchdog, or wakes it: some stream now has a
 * timeout. */
void asc__watchdog_start(asc__rt *rt);

#endif /* ASC_STREAM_INTERNAL_H */
