/*
 * Streams, events and the per-device runtime state (asc__device.rt_private).
 *
 * A stream is an in-order queue of operations (ops).  The op at the head is
 * the only one in flight; when it completes, the thread that completed it
 * advances the stream: ops that need no worker (event records, waits on
 * completed events, callbacks, skipped work) finish inline, the next launch
 * goes to the pool, the next host function to the callback thread.
 *
 * Handles (streams, events, modules, kernels) live in type-stable memory:
 * a destroyed object keeps its memory (and its lock) in a per-device free
 * list and is reused only for an object of the same kind, so a stale handle
 * is always safe to read: its magic says it is dead.
 *
 * See docs/streams.md for the semantics offered to users.
 */
#ifndef ASC_STREAM_H
#define ASC_STREAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "runtime/runtime.h"
#include "asc/kernel_abi.h"
#include "runtime/scheduler.h"

enum {
  ASC__MAGIC_STREAM = 0x5354524du,   /* "STRM" */
  ASC__MAGIC_EVENT = 0x4556454eu,    /* "EVEN" */
  ASC__MAGIC_MODULE = 0x4d4f4455u,   /* "MODU" */
  ASC__MAGIC_KERNEL = 0x4b45524eu,   /* "KERN" */
  ASC__MAGIC_DEAD = 0xdeadbeefu
};

/* Every handle object starts with its atomic magic word.  Reads it
 * without assuming which kind of object h is. */
static inline unsigned asc__handle_magic(const void *h) {
  return atomic_load((atomic_uint *)(uintptr_t)h);
}

/* Stream priorities: lower numbers are higher priorities, as in CUDA. */
#define ASC_STREAM_PRIO_LEAST 0
#define ASC_STREAM_PRIO_GREATEST (-(ASC_PRIO_LEVELS - 1))

typedef struct asc__stream asc__stream;

/* Entries of a stream's table of waited-on records (see waited below). */
#define ASC__WAITED_MAX 8
typedef struct asc__op asc__op;
typedef struct asc__rt asc__rt;

/* A completion point that other streams and host threads can wait on: an
 * event record, or an implicit dependency of the default stream.
 * Reference counted; the fence lock is a leaf lock (a stream lock may be
 * held when it is taken, nothing is taken while it is held). */
typedef struct asc__fence {
  atomic_int refs;
  atomic_int signalled;
  uint64_t time_ns;        /* uv_hrtime() when signalled */
  uint64_t trace_ts;       /* trace clock then, while tracing, else 0 */
  /* The recording stream's pending error when the record was reached. */
  ascError_t err;
  uint64_t err_id;
  char *err_msg;
  asc__stream *err_stream;
  uv_mutex_t lock;
  asc__op *waiters;        /* WAIT ops parked on it */
  struct asc__fence *dep_next;  /* private list while being queued */
  /* Where the record was queued: the recording stream and the record's
   * position in it (set once, under that stream's lock, before the fence
   * is published).  pool_order.c follows event dependencies through it. */
  asc__stream *rec_stream;
  uint64_t rec_pos;
} asc__fence;

typedef void (*asc__stream_cb)(void *ud, ascError_t status);

enum { OP_LAUNCH = 1, OP_RECORD, OP_WAIT, OP_HOSTFN, OP_CALLBACK, OP_EXTERN };

struct asc__op {
  asc__op *next;           /* in the stream queue or free list */
  asc__op *wnext;          /* in a fence's waiters, a worklist, host queue */
  asc__stream *stream;
  int kind;
  bool dispatched;
  asc__fence *fence;       /* RECORD, WAIT: one reference */
  ascHostFn_t fn;          /* HOSTFN */
  void *ud;
  asc__stream_cb cb;       /* CALLBACK */
  ascError_t cb_status;    /* CALLBACK, EXTERN */
  /* EXTERN (runtime/extern_op.h): started, completed from outside. */
  void (*xstart)(void *ud, asc__op *op, ascError_t status);
  asc__inflight *inflight; /* LAUNCH: the module's launches in flight */
  asc__inflight *spec_inflight; /* LAUNCH: the specialisation's */
  uint64_t seq;            /* position in the stream (its `submitted`) */
  uint64_t gseq;           /* position among all ops of the device */
  uint64_t trace_ns[2];    /* queued, started: written while tracing */
  asc__launch launch;      /* LAUNCH */
  /* EXTERN: its span's name and bytes (traces).  After launch: before
   * it, they would move launch (cache-line aligned) a line further. */
  const char *xname;
  uint64_t xbytes;
};

struct asc__stream {
  atomic_uint magic;
  asc__rt *rt;
  asc__stream *live_prev, *live_next;   /* rt->streams; under the rt lock */
  asc__stream *free_next;               /* rt->free_streams */
  unsigned flags;
  int priority;
  int level;
  bool is_default;

  /* The stream lock (a spinlock: held only for short, non-blocking
   * sections) guards everything below except the atomics.  Lock order:
   * the rt lock may be held when a stream lock is taken; while holding a
   * stream lock a thread may take the pool lock, a fence lock or the
   * host-queue lock, but never the rt lock, an event's lock or a second
   * stream lock. */
  asc__spinlock lock;
  bool destroyed;
  bool reaped;
  asc__op *head, *tail;
  asc__op *free_ops;
  int nfree;
  ascError_t err;          /* pending error, reported by the next sync */
  uint64_t err_id;
  char *err_msg;
  /* Records of other streams this stream has queued waits for: work
   * queued here from now on runs after op `pos` of `src`.  Kept by
   * asc__order_note_wait (pool_order.c, with this stream's lock held); a
   * full table drops an entry, which only makes the pool more
   * conservative. */
  struct asc__waited {
    asc__stream *src;
    uint64_t pos;
  } waited[ASC__WAITED_MAX];

  /* Monotonic over the life of the memory (never reset on reuse), so a
   * waiter holding a stale target can never wait forever. */
  _Alignas(ASC_CACHE_LINE) _Atomic uint64_t submitted;
  /* A free op set aside, under the lock, for the next enqueue to take
   * without it; on the submitters' line, which workers do not write.
   * Stays with the stream's memory like free_ops. */
  _Atomic(asc__op *) spare;
  /* Some earlier value of `completed`, for stream_has_room. */
  _Atomic uint64_t completed_seen;
  _Alignas(ASC_CACHE_LINE) _Atomic uint64_t completed;
  atomic_int err_pending;  /* err != ascSuccess; written with err */
  /* ascStreamSetKernelTimeout; 0 = none.  Read by the watchdog. */
  atomic_uint timeout_ms;
};

typedef struct asc__event {
  atomic_uint magic;
  asc__rt *rt;
  struct asc__event *live_prev, *live_next;
  struct asc__event *free_next;
  unsigned flags;
  uv_mutex_t lock;         /* guards fence; leaf lock */
  asc__fence *fence;       /* NULL until recorded */
} asc__event;

struct asc__modreg;

struct asc__rt {
  asc__device *dev;
  /* The rt lock guards the live lists and free lists of streams, events
   * and modules, and the host callback thread's start and stop.  It is
   * taken first: a thread holding it may take stream locks, never the
   * reverse. */
  uv_mutex_t lock;
  asc__stream *streams;
  asc__stream *free_streams;
  asc__event *events;
  asc__event *free_events;
  asc__stream *null_stream;
  /* Live streams that are neither the default stream nor non-blocking:
   * while there are none, work on the default stream has no earlier
   * work of theirs to wait for, and its launches skip the rt lock.
   * Changed under the rt lock. */
  atomic_int nblocking;
  struct asc__modreg *modreg;   /* module.c */
  _Atomic uint64_t err_seq;
  uint64_t spin_ns;             /* host waits spin this long, then park */
  /* Ops ever appended to any stream (asc__op.gseq), apart from the
   * fields around it that other threads read. */
  char pad0[ASC_CACHE_LINE];
  _Atomic uint64_t enq_seq;
  char pad1[ASC_CACHE_LINE];
  /* The API gate (asc__api_enter): twice the number of threads inside a
   * gated call, plus 1 while ascDeviceReset runs. */
  _Atomic uint64_t api_gate;
  char pad2[ASC_CACHE_LINE];

  /* Host threads blocked in a synchronising call park here.  Completion
   * paths broadcast only when waiters > 0.  Leaf lock. */
  uv_mutex_t wait_lock;
  uv_cond_t wait_cond;
  atomic_int waiters;

  /* The host callback thread: a libuv loop woken by an async handle.
   * host_lock is a leaf lock guarding the queue and host_stop. */
  bool host_started;
  uv_thread_t host_thread;
  uv_loop_t host_loop;
  uv_async_t host_async;
  uv_mutex_t host_lock;
  asc__op *host_head, *host_tail;
  bool host_stop;

  /* The timeout watchdog (rt.c), started when a stream first gets a
   * kernel timeout.  wd_lock is a leaf lock guarding wd_started and
   * wd_quit; the watchdog takes the rt lock and stream locks only
   * without it. */
  unsigned timeout_default_ms;  /* $ASC_KERNEL_TIMEOUT_MS */
  uv_mutex_t wd_lock;
  uv_cond_t wd_cond;
  bool wd_started;
  uv_thread_t wd_thread;
  /* Set in a forked child whose streams have timeouts: the next launch
   * starts the watchdog (asc__rt_fork_child). */
  atomic_bool wd_after_fork;
};

/* The runtime state of dev, created on first use (thread-safe). */
ascError_t asc__rt_get(asc__device *dev, asc__rt **out);
/* asc__rt_get for the calling thread's current device. */
ascError_t asc__rt_current(asc__rt **out);

/* Resolves a stream handle of the current device; NULL is the default
 * stream.  ascErrorInvalidHandle for destroyed or foreign handles. */
ascError_t asc__stream_resolve(ascStream_t handle, asc__stream **out);
/* asc__stream_resolve inside the API gate (asc__api_enter) of the
 * stream's runtime; on success the caller leaves with
 * asc__api_leave((*out)->rt). */
ascError_t asc__stream_enter(ascStream_t handle, asc__stream **out);

/* Queues a launch of desc over nblocks blocks, which together get the
 * worker threads that `share` blocks would have had (nblocks, except for
 * a kernel run once for a launch of `share` blocks: ASC_KERNEL_NOT_SPMD).
 * Argument i (sizes[i]
 * bytes at src[i]) is copied into launch-owned storage before the call
 * returns; the kernel sees args[i] pointing at the copy, 16-byte aligned.
 * inflight and spec_inflight (the module's and the specialisation's), if
 * not NULL, count the launch now and its retirement when the launch has
 * finished or was skipped.
 *
 * ran_here, if not NULL, says the caller waits for the launch at once
 * (ascLaunchKernelSync): a launch of one block that starts at once (st
 * was idle) then runs on the calling thread before this returns, never
 * through the pool's ready lists, and *ran_here tells whether it did.
 * It is the stream's head op meanwhile, so cancellation, timeouts,
 * ascDeviceReset, tracing and errors treat it as any running launch. */
ascError_t asc__stream_launch(asc__stream *st, const asc_kernel_desc *desc,
                              uint32_t nblocks, uint32_t share, uint32_t nargs,
                              const size_t *sizes, const void *const *src,
                              asc__inflight *inflight,
                              asc__inflight *spec_inflight, bool *ran_here);

/* ascStreamSynchronize's wait and report, for a caller that is inside
 * the API gate of st's runtime already. */
ascError_t asc__stream_synchronize(asc__stream *st);

/* Queues fn(ud, status) in stream order.  It runs, never skipped, once all
 * earlier work of the stream has finished, inline on whichever thread
 * advanced the stream (a worker, the callback thread or a host thread
 * inside a libasc call), with no libasc lock held, and status the
 * stream's pending error (ascSuccess or ascErrorKernelException).  Later
 * work on the stream waits for fn to return, so fn must be short and must
 * not wait for stream progress (no synchronising calls); it may take its
 * own locks and queue work.  Stream-ordered frees (ascFreeAsync) hook in
 * here. */
ascError_t asc__stream_enqueue_callback(asc__stream *st, asc__stream_cb fn,
                                        void *ud);

/* Waits, on the calling host thread, for all work already queued on the
 * default stream and on every blocking stream of dev, as the legacy
 * default stream orders a synchronous ascMemcpy/ascMemset.  Does not
 * report or clear kernel errors (they stay with their streams).  Returns
 * ascErrorNotPermitted inside a host callback. */
ascError_t asc__default_stream_wait(asc__device *dev);

/* Blocks the calling host thread until done(a, b) holds, re-checking it
 * whenever a stream makes progress (spins for the spin window, then
 * parks).  Not for use inside host functions. */
void asc__rt_wait(asc__rt *rt, bool (*done)(const void *a, uint64_t b),
                  const void *a, uint64_t b);

/* Every public call that takes a module, kernel, stream, event or
 * stream-ordered pool allocation, or waits for or touches device memory,
 * runs between asc__api_enter and asc__api_leave: ascDeviceReset frees
 * the worker pool, the pools' blocks and device memory, and such a call
 * must not be using them then.  ascDeviceReset closes the gate, waits
 * for the threads inside to leave, and opens it again when done;
 * asc__api_enter fails with ascErrorNotPermitted while it is closed
 * (never waits: a host function calling in must not block the reset that
 * drains its stream).  Calls nest (a pool allocation records an event). */
ascError_t asc__api_enter(asc__rt *rt);
void asc__api_leave(asc__rt *rt);

/* Wakes host threads blocked in asc__rt_wait so they re-check their
 * condition (for conditions that are not stream progress). */
void asc__rt_notify(asc__rt *rt);

/* module.c: drops every module of dev (no launch is in flight). */
void asc__modules_reset(asc__device *dev);

/* fork() (rt.c, registered by fork.c): prepare takes the rt lock and the
 * streams' locks; parent releases them; in the child,
 * child makes every stream idle (the work it had is stopped, as by
 * ascStreamCancel) and forgets the callback thread and the watchdog. */
void asc__rt_fork_prepare(asc__device *dev);
void asc__rt_fork_parent(asc__device *dev);
void asc__rt_fork_child(asc__device *dev);

#endif /* ASC_STREAM_H */
