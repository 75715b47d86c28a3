/*
 * Streams: fences, the op queue and its advance, enqueueing, per-stream
 * errors and the streams of a forked child.  Host-thread waits, the
 * stream calls of the API and cancellation are in stream_api.c, events in
 * event.c, the host-callback thread in hostfn.c, the per-device state,
 * device-wide synchronisation and reset in rt.c.  stream.h explains the
 * structure; the semantics are in docs/streams.md.
 */
#include "runtime/memory.h"
#include "runtime/extern_op.h"
#include "runtime/stream.h"
#include "runtime/stream_internal.h"
#include "runtime/pool.h"
#include "runtime/trace.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many ops are queued on one stream; a host thread queuing
 * more waits for room (as CUDA's launch queue does), so op records are
 * recycled instead of allocated on the launch path. */
#define STREAM_DEPTH 1024
/* Free op records kept per stream: a full queue's worth. */
#define OP_FREE_MAX (STREAM_DEPTH + 16)

static const char *const exc_class[ASC_KEXC_COUNT] = {
    "Exception",      "Exception",         "ValueError",
    "IndexError",     "ZeroDivisionError", "AssertionError",
    "RuntimeError",   "OverflowError",     "ArithmeticError",
    "TypeError",      "MemoryError",       "LinAlgError"};

const char asc__lost_message[] =
    "kernel raised an exception (its message was lost: out of memory)";

/* ----------------------------------------------------------------- fences */

asc__fence *asc__fence_new(void) {
  asc__fence *f = asc__calloc(1, sizeof *f);
  if (f == NULL)
    return NULL;
  if (uv_mutex_init(&f->lock) != 0) {
    asc__free(f);
    return NULL;
  }
  atomic_init(&f->refs, 1);
  return f;
}

void asc__fence_ref(asc__fence *f) {
  atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
}

void asc__fence_unref(asc__fence *f) {
  if (f == NULL ||
      atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
    return;
  asc__free(f->err_msg);
  uv_mutex_destroy(&f->lock);
  asc__free(f);
}

bool asc__fence_done(const void *a, uint64_t unused) {
  const asc__fence *f = a;
  ASC_UNUSED(unused);
  return atomic_load(&f->signalled) != 0;
}

/* Fills f with st's pending error and the time, without showing it
 * signalled yet (fence_publish does).  st's lock is held. */
static void fence_fill(asc__fence *f, asc__stream *st) {
  char *msg = NULL;

  if (st->err != ascSuccess && st->err_msg != NULL)
    msg = asc__strdup(st->err_msg);
  uv_mutex_lock(&f->lock);
  f->err = st->err;
  f->err_id = st->err_id;
  f->err_msg = msg;
  f->err_stream = st;
  f->time_ns = uv_hrtime();
  f->trace_ts = asc__trace_clock();
  uv_mutex_unlock(&f->lock);
}

/* Shows f signalled.  WAIT ops parked on f are pushed on *wl for the
 * caller to finish once it has released the stream's lock. */
static void fence_publish(asc__fence *f, asc__op **wl) {
  asc__op *w;

  uv_mutex_lock(&f->lock);
  atomic_store(&f->signalled, 1);
  w = f->waiters;
  f->waiters = NULL;
  uv_mutex_unlock(&f->lock);
  while (w != NULL) {
    asc__op *next = w->wnext;
    w->wnext = *wl;
    *wl = w;
    w = next;
  }
}

/* True when f has been signalled; otherwise parks op on f. */
static bool fence_wait_or_park(asc__fence *f, asc__op *op) {
  bool done;

  if (atomic_load(&f->signalled))
    return true;
  uv_mutex_lock(&f->lock);
  done = atomic_load(&f->signalled) != 0;
  if (!done) {
    op->wnext = f->waiters;
    f->waiters = op;
  }
  uv_mutex_unlock(&f->lock);
  return done;
}

/* ------------------------------------------------------------- stream ops */

void asc__stream_set_error(asc__stream *st, ascError_t code, uint64_t id,
                           char *msg) {
  st->err = code;
  st->err_id = id;
  st->err_msg = msg;
  atomic_store(&st->err_pending, code != ascSuccess);
}

/* st's lock held: a wait on a failed record makes st fail too. */
static void stream_adopt(asc__stream *st, const asc__fence *f) {
  if (f->err != ascSuccess && st->err == ascSuccess)
    asc__stream_set_error(st, f->err, f->err_id,
                          f->err_msg != NULL ? asc__strdup(f->err_msg) : NULL);
}

/* st's lock held: a record from st's free list, NULL if it is empty. */
static asc__op *op_pop(asc__stream *st) {
  asc__op *op = st->free_ops;

  if (op != NULL) {
    st->free_ops = op->next;
    st->nfree--;
  }
  return op;
}

/* Makes op (free, or just allocated) a blank op of st. */
static void op_reset(asc__stream *st, asc__op *op) {
  op->next = NULL;
  op->wnext = NULL;
  op->stream = st;
  op->kind = 0;
  op->dispatched = false;
  op->fence = NULL;
  op->fn = NULL;
  op->ud = NULL;
  op->cb = NULL;
  op->xstart = NULL;
  op->inflight = NULL;
  op->spec_inflight = NULL;
  op->launch.heap_args = NULL;
  op->launch.start_ns = 0;
}

/* st's lock held: a blank op of st, NULL when out of memory. */
static asc__op *op_get(asc__stream *st) {
  asc__op *op = op_pop(st);

  if (op == NULL) {
    op = asc__cache_alloc(sizeof *op);
    if (op == NULL)
      return NULL;
    if (asc__launch_init(&op->launch) != 0) {
      asc__cache_free(op);
      return NULL;
    }
  }
  op_reset(st, op);
  return op;
}

/* st's lock held. */
static void op_put(asc__stream *st, asc__op *op) {
  asc__fence_unref(op->fence);
  op->fence = NULL;
  if (op->launch.heap_args != NULL) {
    asc__free(op->launch.heap_args);
    op->launch.heap_args = NULL;
  }
  /* The next enqueue takes the spare without the lock: one op at a time
   * (queue, wait, queue) then never takes the lock twice per enqueue.
   * Only a taker (atomic_exchange, without the lock) races with this
   * store, and it can only take NULL from an empty slot. */
  if (atomic_load_explicit(&st->spare, memory_order_relaxed) == NULL) {
    atomic_store_explicit(&st->spare, op, memory_order_release);
    return;
  }
  if (st->nfree < OP_FREE_MAX) {
    op->next = st->free_ops;
    st->free_ops = op;
    st->nfree++;
  } else {
    asc__launch_fini(&op->launch);
    asc__cache_free(op);
  }
}

/* st's lock held; op is st's head. */
static void head_pop(asc__stream *st, asc__op *op) {
  st->head = op->next;
  if (st->head == NULL)
    st->tail = NULL;
  /* The specialisation's count first: once the module's shows it idle,
   * an unload frees the specialisation's counters. */
  if (op->spec_inflight != NULL) {
    if (op->launch.start_ns != 0 &&
        atomic_load_explicit(&op->spec_inflight->timed, memory_order_relaxed))
      atomic_fetch_add(&op->spec_inflight->busy_ns,
                       uv_hrtime() - op->launch.start_ns);
    atomic_fetch_add(&op->spec_inflight->retired, 1);
  }
  if (op->inflight != NULL)
    atomic_fetch_add(&op->inflight->retired, 1);
  op_put(st, op);
  atomic_fetch_add(&st->completed, 1);
}

static void notify_waiters(asc__rt *rt) {
  if (atomic_load(&rt->waiters) > 0) {
    uv_mutex_lock(&rt->wait_lock);
    uv_cond_broadcast(&rt->wait_cond);
    uv_mutex_unlock(&rt->wait_lock);
  }
}

void asc__rt_notify(asc__rt *rt) { notify_waiters(rt); }

/* st's lock held.  Moves the stream forward: ops that need no worker
 * (records, satisfied waits, callbacks, skipped work) finish inline; a
 * launch or host function that must run is marked dispatched and
 * returned, and the caller starts it with op_start() once it has dropped
 * the lock (the op stays at the head, so nobody else touches it). */
static asc__op *stream_advance(asc__stream *st, asc__op **wl) {
  asc__op *op;

  while ((op = st->head) != NULL && !op->dispatched) {
    op->dispatched = true;
    switch (op->kind) {
    case OP_LAUNCH:
      if (st->err == ascSuccess) {
        asc__sched *s;
        /* for the stream's timeout, and the quick tier's run time */
        op->launch.start_ns =
            atomic_load_explicit(&st->timeout_ms, memory_order_relaxed) != 0 ||
                    (op->spec_inflight != NULL &&
                     atomic_load_explicit(&op->spec_inflight->timed,
                                          memory_order_relaxed))
                ? uv_hrtime()
                : 0;
        if (asc__sched_get(st->rt->dev, &s) == ascSuccess)
          return op;
        asc__stream_set_error(st, ascErrorLaunchFailure,
                              atomic_fetch_add(&st->rt->err_seq, 1) + 1,
                              asc__strdup("kernel launch failed: the worker "
                                          "pool could not be started"));
      }
      break;
    case OP_HOSTFN:
      if (st->err == ascSuccess)
        return op;
      break;
    case OP_RECORD: {
      /* The record is counted complete before its fence shows signalled:
       * a thread that sees the event done must find the stream idle when
       * the record was its last op (ascEventSynchronize, then
       * ascStreamQuery). */
      asc__fence *f = op->fence;
      fence_fill(f, st);
      ASC_TRACE(asc__trace_record(st, op));
      op->fence = NULL; /* its reference is now f's */
      head_pop(st, op);
      fence_publish(f, wl);
      asc__fence_unref(f);
      continue;
    }
    case OP_WAIT:
      ASC_TRACE(op->trace_ns[1] = asc__trace_now());
      if (!fence_wait_or_park(op->fence, op))
        return NULL;
      ASC_TRACE(asc__trace_wait(st, op));
      stream_adopt(st, op->fence);
      break;
    case OP_CALLBACK:
      /* Never skipped; runs once the lock is dropped. */
      op->cb_status = st->err;
      return op;
    case OP_EXTERN:
      /* Never skipped either: the component sees the pending error. */
      op->cb_status = st->err;
      return op;
    default:
      break;
    }
    head_pop(st, op);
  }
  return NULL;
}

static asc__op *stream_complete(asc__stream *st, asc__op *op, ascError_t err,
                                char *msg);

static void launch_complete(asc__launch *l);
static void launch_complete_traced(asc__launch *l);

/* The arrays the kernel handed over (asc_krt.keep) that its results do
 * not hold are freed: every one when the launch raised or stopped (it
 * returns nothing, and its results are cleared), else those a later
 * `return` replaced (`try: return t` / `finally: return u`). */
static void drop_results(asc__op *op, asc__launch *l, bool failed) {
  const asc_kernel_desc *d = l->desc;
  for (int k = 0; k < l->nkept; k++) {
    bool held = false;
    for (uint32_t i = d->nparams; i > 0 && !failed; i--) {
      const asc_kresult *r = l->args[i - 1];
      if (!(d->params[i - 1].flags & ASC_KPARAM_RESULT))
        break;
      held |= r->kind == ASC_KRESULT_TENSOR && r->tensor.data == l->kept[k];
    }
    if (!held)
      (void)asc__dev_free(op->stream->rt->dev, l->kept[k]);
  }
  l->nkept = 0;
  for (uint32_t i = d->nparams; i > 0 && failed; i--) {
    asc_kresult *r = l->args[i - 1];
    if (!(d->params[i - 1].flags & ASC_KPARAM_RESULT))
      break;
    memset(r, 0, sizeof *r);
  }
}

/* The started hook.  A launch started while tracing completes through
 * launch_complete_traced, which records its span: the untraced
 * completion tests no flag. */
static void op_trace_started(asc__op *op) {
  asc__trace_op_started(op);
  if (op->kind == OP_LAUNCH && op->launch.complete == launch_complete)
    op->launch.complete = launch_complete_traced;
}

/* Starts an op returned by stream_advance.  No lock held.  Callbacks run
 * here, one after the other (a loop, not a recursion, however many are
 * queued). */
static void op_start(asc__op *op) {
  asc__sched *s;

  while (op != NULL) {
    ASC_TRACE(op_trace_started(op));
    switch (op->kind) {
    case OP_HOSTFN:
      asc__host_post(op->stream->rt, op);
      return;
    case OP_CALLBACK:
      op->cb(op->ud, op->cb_status);
      op = stream_complete(op->stream, op, ascSuccess, NULL);
      break;
    case OP_EXTERN:
      /* Stays at the head until asc__extern_complete. */
      op->xstart(op->ud, op, op->cb_status);
      return;
    default:
      /* stream_advance made sure the pool exists; it lives until a
       * device reset, which first waits for this op. */
      if (asc__sched_get(op->stream->rt->dev, &s) == ascSuccess)
        asc__sched_submit(s, &op->launch);
      return;
    }
  }
}

/* Runs launch op, which stream_advance has just dispatched at its
 * stream's head, on the calling thread (asc__stream_launch's ran_here).
 * False, having done nothing, when op_start must start it instead: more
 * than one block, a gang, or a thread that may not run kernel code. */
static bool op_run_here(asc__op *op, asc__sched *s) {
  asc__launch *l = &op->launch;
  asc__stream *st = op->stream;

  if (l->nblocks != 1 || l->gang || !asc__sched_can_help())
    return false;
  ASC_TRACE(op_trace_started(op));
  /* A reset that closed the gate while this call was inside it has
   * stopped the streams already, perhaps before this launch was queued,
   * and waits for this call to return: stopped as it would have been. */
  if (atomic_load(&st->rt->api_gate) & 1)
    (void)asc__stop_stream(st, ASC__STOP_RESET,
                           "work cancelled by ascDeviceReset");
  asc__sched_run_here(s, l);
  return true;
}

/* st's lock held: true for the one caller that must reap st. */
bool asc__stream_check_reap(asc__stream *st) {
  if (st->destroyed && st->head == NULL && !st->reaped) {
    st->reaped = true;
    return true;
  }
  return false;
}

static bool legacy_blocking(const asc__stream *st) {
  return !st->is_default && !(st->flags & ascStreamNonBlocking);
}

void asc__stream_unlist(asc__stream *st) {
  asc__rt *rt = st->rt;

  if (legacy_blocking(st))
    atomic_fetch_sub(&rt->nblocking, 1);
  ASC__LIVE_RETIRE(rt->streams, rt->free_streams, st);
}

/* Returns a drained, destroyed stream's memory to the free list. */
void asc__stream_reap(asc__stream *st) {
  asc__rt *rt = st->rt;

  uv_mutex_lock(&rt->lock);
  asc__stream_unlist(st);
  uv_mutex_unlock(&rt->lock);
}

/* Finishes WAIT ops whose fences were signalled. */
static void process_worklist(asc__op *wl) {
  while (wl != NULL) {
    asc__op *op = wl;
    asc__stream *st = op->stream;
    bool reap;

    asc__op *start;

    wl = op->wnext;
    ASC_TRACE(asc__trace_wait(st, op));
    asc__spin_lock(&st->lock);
    stream_adopt(st, op->fence);
    head_pop(st, op);
    start = stream_advance(st, &wl);
    reap = asc__stream_check_reap(st);
    asc__spin_unlock(&st->lock);
    op_start(start);
    if (reap)
      asc__stream_reap(st);
  }
}

/* The running head op of st has finished with err and msg (owned, may
 * be NULL).  Returns the next op to op_start(). */
static asc__op *stream_complete(asc__stream *st, asc__op *op, ascError_t err,
                                char *msg) {
  asc__rt *rt = st->rt;
  asc__op *wl = NULL, *start;
  bool reap;

  asc__spin_lock(&st->lock);
  if (err != ascSuccess && st->err == ascSuccess) {
    asc__stream_set_error(st, err, atomic_fetch_add(&rt->err_seq, 1) + 1, msg);
    msg = NULL;
  }
  head_pop(st, op);
  /* The tests spare the calls (and their prologues) when the stream
   * is now idle, as after most external ops (docs/distributed.md). */
  start = st->head != NULL ? stream_advance(st, &wl) : NULL;
  reap = asc__stream_check_reap(st);
  asc__spin_unlock(&st->lock);
  if (msg != NULL)
    asc__free(msg);
  if (wl != NULL)
    process_worklist(wl);
  if (reap)
    asc__stream_reap(st);
  notify_waiters(rt);
  return start;
}

/* As stream_complete, then starts what follows (on a worker or the
 * callback thread). */
void asc__stream_finish(asc__stream *st, asc__op *op, ascError_t err,
                        char *msg) {
  op_start(stream_complete(st, op, err, msg));
}

/* The error of launch op, which a poll found stopped, and its message
 * (owned, may be NULL).  Returned by value, in registers, not through
 * pointers to launch_end's locals: those would live in memory, and the
 * untraced completion would pay a store for them (docs/tracing.md
 * "Tracing off"). */
typedef struct stopped {
  ascError_t err;
  char *msg;
} stopped;

static stopped launch_stopped_msg(asc__op *op) {
  const asc__launch *l = &op->launch;
  const char *name = l->desc->name != NULL ? l->desc->name : "?";
  asc__buf b;
  ascError_t err;
  stopped r;

  asc__buf_init(&b);
  switch (atomic_load(&l->stop)) {
  case ASC__STOP_TIMEOUT:
    err = ascErrorLaunchTimeout;
    asc__buf_printf(&b, "kernel '%s' stopped: it ran past the stream's "
                    "kernel timeout of %u ms", name,
                    atomic_load(&op->stream->timeout_ms));
    break;
  case ASC__STOP_RESET:
    err = ascErrorCancelled;
    asc__buf_printf(&b, "kernel '%s' cancelled by ascDeviceReset", name);
    break;
  default:
    err = ascErrorCancelled;
    asc__buf_printf(&b, "kernel '%s' cancelled by ascStreamCancel", name);
    break;
  }
  r.err = err;
  r.msg = b.oom ? NULL : b.data;
  if (b.oom)
    asc__buf_free(&b);
  return r;
}

/* A launch's last block is done: the launch's error, its span (traced),
 * and the stream's next op.  Two copies: launch_complete, which
 * fill_launch installs, tests no trace flag; op_start installs
 * launch_complete_traced instead in launches started while tracing
 * (docs/tracing.md "Tracing off"). */
static inline __attribute__((always_inline)) void
launch_end(asc__launch *l, bool traced) {
  asc__op *op = (asc__op *)(void *)((char *)l - offsetof(asc__op, launch));
  ascError_t err = ascSuccess;
  char *msg = NULL;

  if (atomic_load(&l->err_block) != UINT32_MAX &&
      l->exc.kind == ASC_KEXC_CANCELLED) {
    stopped r = launch_stopped_msg(op);
    err = r.err;
    msg = r.msg;
  } else if (atomic_load(&l->err_block) != UINT32_MAX) {
    const asc_kernel_desc *d = l->desc;
    asc__buf b;
    int kind = l->exc.kind > 0 && l->exc.kind < ASC_KEXC_COUNT
                   ? l->exc.kind
                   : ASC_KEXC_EXCEPTION;

    asc__buf_init(&b);
    asc__buf_printf(&b, "%s:%d: kernel '%s' raised %s: %s",
                    d->file != NULL ? d->file : "<unknown>", (int)l->exc.line,
                    d->name != NULL ? d->name : "?", exc_class[kind],
                    l->exc.msg);
    err = ascErrorKernelException;
    msg = b.oom ? NULL : b.data;
    if (b.oom)
      asc__buf_free(&b);
  }
  if (l->nkept > 0 || err != ascSuccess)
    drop_results(op, l, err != ascSuccess);
  if (traced)
    asc__trace_launch_done(op, msg);
  asc__stream_finish(op->stream, op, err, msg);
}

static void launch_complete(asc__launch *l) { launch_end(l, false); }

static void launch_complete_traced(asc__launch *l) { launch_end(l, true); }

/* st's lock held: appends op; if the stream was idle, advances it and
 * returns what the caller must op_start() after dropping the lock. */
static asc__op *stream_append(asc__stream *st, asc__op *op, asc__op **wl) {
  op->next = NULL;
  if (st->tail != NULL)
    st->tail->next = op;
  else
    st->head = op;
  st->tail = op;
  op->seq = atomic_fetch_add(&st->submitted, 1) + 1;
  op->gseq = atomic_fetch_add_explicit(&st->rt->enq_seq, 1,
                                       memory_order_relaxed) + 1;
  if (op->kind == OP_RECORD && op->fence != NULL) {
    op->fence->rec_stream = st;
    op->fence->rec_pos = op->seq;
  } else if (op->kind == OP_WAIT && op->fence != NULL) {
    asc__order_note_wait(st, op->fence);
  }
  return st->head == op ? stream_advance(st, wl) : NULL;
}

/* ------------------------------------------------------------- rt objects */

asc__stream *asc__stream_alloc(asc__rt *rt, unsigned flags, int priority,
                               bool is_default) {
  asc__stream *st;

  uv_mutex_lock(&rt->lock);
  st = rt->free_streams;
  if (st != NULL) {
    rt->free_streams = st->free_next;
  } else {
    st = asc__cache_alloc(sizeof *st);
    if (st == NULL) {
      uv_mutex_unlock(&rt->lock);
      return NULL;
    }
    st->rt = rt;
  }
  st->free_next = NULL;
  st->flags = flags;
  st->priority = priority;
  st->level = priority - ASC_STREAM_PRIO_GREATEST;
  st->is_default = is_default;
  atomic_store(&st->timeout_ms, rt->timeout_default_ms);
  asc__spin_lock(&st->lock);
  st->destroyed = false;
  st->reaped = false;
  asc__stream_set_error(st, ascSuccess, 0, NULL);
  asc__spin_unlock(&st->lock);
  ASC__LIVE_PUSH(rt->streams, st);
  if (legacy_blocking(st))
    atomic_fetch_add(&rt->nblocking, 1);
  atomic_store(&st->magic, ASC__MAGIC_STREAM);
  uv_mutex_unlock(&rt->lock);
  return st;
}

static bool valid_stream(ascStream_t h) {
  return asc__handle_magic(h) == ASC__MAGIC_STREAM;
}

ascError_t asc__stream_resolve(ascStream_t handle, asc__stream **out) {
  asc__rt *rt;
  ascError_t err;

  /* A live stream implies a started runtime: no device lookup (a
   * thread-local and the device table) on every call with a handle. */
  if (handle != NULL && valid_stream(handle)) {
    *out = (asc__stream *)(void *)handle;
    return ascSuccess;
  }
  err = asc__rt_current(&rt);
  *out = NULL;
  if (err != ascSuccess)
    return err;
  if (handle == NULL) {
    *out = rt->null_stream;
    return ascSuccess;
  }
  if (!valid_stream(handle))
    return asc__error(ascErrorInvalidHandle,
                      "stream %p is not a live stream", (void *)handle);
  *out = (asc__stream *)(void *)handle;
  return ascSuccess;
}

ascError_t asc__stream_enter(ascStream_t handle, asc__stream **out) {
  asc__rt *rt;
  ascError_t err;

  /* The gate of the stream's own runtime: a stream's memory is only ever
   * reused for a stream of the same runtime, so st->rt stays right even
   * if the handle dies meanwhile (the resolve below then refuses it). */
  *out = NULL;
  if (handle != NULL && valid_stream(handle)) {
    rt = ((asc__stream *)(void *)handle)->rt;
  } else {
    err = asc__rt_current(&rt);
    if (err != ascSuccess)
      return err;
  }
  err = asc__api_enter(rt);
  if (err != ascSuccess)
    return err;
  err = asc__stream_resolve(handle, out);
  if (err != ascSuccess)
    asc__api_leave(rt);
  return err;
}

/* ------------------------------------------------------------- enqueueing */

/* Queues a record of a new fence on t if t has work; the fence joins
 * *list. */
static ascError_t record_if_busy(asc__stream *t, asc__fence **list) {
  asc__fence *f = asc__fence_new();
  asc__op *op, *wl = NULL;

  if (f == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate a fence");
  asc__spin_lock(&t->lock);
  if (t->head == NULL) {
    asc__spin_unlock(&t->lock);
    asc__fence_unref(f);
    return ascSuccess;
  }
  op = op_get(t);
  if (op == NULL) {
    asc__spin_unlock(&t->lock);
    asc__fence_unref(f);
    return asc__error(ascErrorOutOfMemory, "cannot allocate a stream op");
  }
  op->kind = OP_RECORD;
  asc__fence_ref(f);
  op->fence = f;
  (void)stream_append(t, op, &wl);   /* t is busy: nothing starts */
  asc__spin_unlock(&t->lock);
  f->dep_next = *list;
  *list = f;
  return ascSuccess;
}

/* The legacy default stream: work on a blocking stream waits for the
 * default stream's earlier work, and work on the default stream waits
 * for every blocking stream's earlier work. */
static ascError_t legacy_deps(asc__stream *st, asc__fence **deps) {
  asc__rt *rt = st->rt;
  ascError_t err = ascSuccess;

  *deps = NULL;
  if (st->flags & ascStreamNonBlocking)
    return ascSuccess;
  if (!st->is_default)
    return asc__stream_pending(rt->null_stream)
               ? record_if_busy(rt->null_stream, deps)
               : ascSuccess;
  /* A stream created before this call is counted already (the count
   * changes under the rt lock, which its creation released). */
  if (atomic_load(&rt->nblocking) == 0)
    return ascSuccess;
  uv_mutex_lock(&rt->lock);
  for (asc__stream *t = rt->streams; t != NULL && err == ascSuccess;
       t = t->live_next)
    if (!t->is_default && !(t->flags & ascStreamNonBlocking) &&
        asc__stream_pending(t))
      err = record_if_busy(t, deps);
  uv_mutex_unlock(&rt->lock);
  return err;
}

static void drop_deps(asc__fence *f) {
  while (f != NULL) {
    asc__fence *next = f->dep_next;
    asc__fence_unref(f);
    f = next;
  }
}

static ascError_t fill_launch(asc__op *op, const asc__op_spec *sp) {
  asc__launch *l = &op->launch;
  size_t head = ((size_t)sp->nargs * sizeof(void *) + 15) & ~(size_t)15;
  size_t total = head;
  unsigned char *buf, *p;

  for (uint32_t i = 0; i < sp->nargs; i++)
    total += (sp->sizes[i] + 15) & ~(size_t)15;
  if (total <= sizeof l->argbuf) {
    buf = l->argbuf;
  } else {
    buf = l->heap_args = asc__malloc(total);
    if (buf == NULL)
      return asc__error(ascErrorOutOfMemory,
                        "cannot allocate %zu bytes of launch arguments",
                        total);
  }
  l->args = (void **)(void *)buf;
  p = buf + head;
  for (uint32_t i = 0; i < sp->nargs; i++) {
    if (sp->sizes[i] == 0) {
      /* a result (ASC_KPARAM_RESULT): the caller's, written in place */
      l->args[i] = (void *)sp->src[i];
      continue;
    }
    memcpy(p, sp->src[i], sp->sizes[i]);
    l->args[i] = p;
    p += (sp->sizes[i] + 15) & ~(size_t)15;
  }
  asc__launch_prepare(l, sp->sched, sp->desc, sp->nblocks, sp->share,
                      op->stream->level);
  l->complete = launch_complete;
  return ascSuccess;
}

/* Counts are read completed first: completed <= submitted at every
 * moment, so the difference cannot wrap. */
static bool stream_has_room(asc__stream *st) {
  /* A completion count seen before is a lower bound that lives on the
   * submitters' line; `completed` itself, written by the worker at every
   * op, is read only when the bound says the queue may be full. */
  uint64_t done = atomic_load_explicit(&st->completed_seen,
                                       memory_order_relaxed);
  if (atomic_load(&st->submitted) - done < STREAM_DEPTH)
    return true;
  done = atomic_load(&st->completed);
  atomic_store_explicit(&st->completed_seen, done, memory_order_relaxed);
  return atomic_load(&st->submitted) - done < STREAM_DEPTH;
}

/* A full queue is waited on until it is half empty, so the host queues in
 * bursts instead of trading the queue lock with the worker op by op. */
static bool stream_half_empty(const void *a, uint64_t unused) {
  const asc__stream *st = a;
  uint64_t done = atomic_load(&st->completed);
  ASC_UNUSED(unused);
  return atomic_load(&st->submitted) - done <= STREAM_DEPTH / 2;
}

ascError_t asc__stream_enqueue(asc__stream *st, asc__op_spec *sp) {
  asc__fence *deps = NULL;
  asc__op *op, *wl = NULL, *start[2] = {NULL, NULL};
  ascError_t err;

  /* Back-pressure on host threads only: a worker or the callback thread
   * waiting here could be what the stream is waiting for. */
  if (!stream_has_room(st) && !asc__on_worker() &&
      !asc__tls_get()->in_host_callback)
    asc__host_wait(st->rt, stream_half_empty, st, 0, true, NULL);

  if (sp->kind == OP_LAUNCH) {
    err = asc__sched_get(st->rt->dev, &sp->sched);
    if (err != ascSuccess)
      goto fail;
    /* A forked child starts the watchdog with its first launch, not in
     * the fork handler: a thread started there would run in every
     * child, the C compiler's included (rt.c). */
    if (__builtin_expect(atomic_load_explicit(&st->rt->wd_after_fork,
                                              memory_order_relaxed), 0) &&
        atomic_exchange(&st->rt->wd_after_fork, false))
      asc__watchdog_start(st->rt);
  }
  /* Take a record and fill it outside the queue lock, which the worker
   * completing the stream's head needs too: the spare that the previous
   * enqueue set aside, or one from the free list. */
  op = atomic_exchange_explicit(&st->spare, NULL, memory_order_acquire);
  err = ascSuccess;
  if (op != NULL) {
    op_reset(st, op);
  } else {
    asc__spin_lock(&st->lock);
    op = st->destroyed ? NULL : op_get(st);
    err = st->destroyed ? ascErrorInvalidHandle : ascSuccess;
    asc__spin_unlock(&st->lock);
  }
  if (op == NULL) {
    err = err == ascErrorInvalidHandle
              ? asc__error(err, "stream %p was destroyed", (void *)st)
              : asc__error(ascErrorOutOfMemory, "cannot allocate a stream op");
    goto fail;
  }
  op->kind = sp->kind;
  ASC_TRACE(asc__trace_op_queued(op));
  op->fn = sp->fn;
  op->ud = sp->ud;
  op->cb = sp->cb;
  op->xstart = sp->xstart;
  if (sp->kind == OP_LAUNCH) {
    err = fill_launch(op, sp);
    if (err != ascSuccess)
      goto fail_op;
  } else if (sp->kind == OP_EXTERN) {
    op->xname = sp->xname;
    op->xbytes = sp->xbytes;
    /* Set by the started hook: asc__extern_complete records the span
     * of an op started while tracing. */
    op->trace_ns[1] = 0;
  }
  err = legacy_deps(st, &deps);
  if (err != ascSuccess)
    goto fail_op;

  asc__spin_lock(&st->lock);
  if (st->destroyed) {
    asc__spin_unlock(&st->lock);
    err = asc__error(ascErrorInvalidHandle, "stream %p was destroyed",
                     (void *)st);
    goto fail_op;
  }
  while (deps != NULL) {
    asc__op *w = op_get(st);
    if (w == NULL) {
      asc__spin_unlock(&st->lock);
      err = asc__error(ascErrorOutOfMemory, "cannot allocate a stream op");
      goto fail_op;
    }
    w->kind = OP_WAIT;
    w->fence = deps;
    deps = deps->dep_next;
    if (start[0] == NULL)
      start[0] = stream_append(st, w, &wl);
    else
      (void)stream_append(st, w, &wl);   /* st is busy: nothing starts */
  }
  if (sp->kind == OP_LAUNCH) {
    op->inflight = sp->inflight;
    if (op->inflight != NULL)
      atomic_fetch_add(&op->inflight->launched, 1);
    op->spec_inflight = sp->spec_inflight;
    if (op->spec_inflight != NULL)
      atomic_fetch_add(&op->spec_inflight->launched, 1);
  }
  op->fence = sp->fence;
  sp->fence = NULL;
  start[1] = stream_append(st, op, &wl);
  if (atomic_load_explicit(&st->spare, memory_order_relaxed) == NULL &&
      st->free_ops != NULL) {
    asc__op *spare = op_pop(st), *none = NULL;
    if (!atomic_compare_exchange_strong(&st->spare, &none, spare))
      op_put(st, spare);
  }
  asc__spin_unlock(&st->lock);
  op_start(start[0]);
  if (start[1] == op && sp->kind == OP_LAUNCH && sp->ran_here != NULL &&
      op_run_here(op, sp->sched))
    *sp->ran_here = true;
  else
    op_start(start[1]);
  process_worklist(wl);
  notify_waiters(st->rt);
  return ascSuccess;

fail_op:
  asc__spin_lock(&st->lock);
  op_put(st, op);
  asc__spin_unlock(&st->lock);
fail:
  drop_deps(deps);
  asc__fence_unref(sp->fence);
  sp->fence = NULL;
  op_start(start[0]);
  process_worklist(wl);
  return err;
}

ascError_t asc__stream_launch(asc__stream *st, const asc_kernel_desc *desc,
                              uint32_t nblocks, uint32_t share, uint32_t nargs,
                              const size_t *sizes, const void *const *src,
                              asc__inflight *inflight,
                              asc__inflight *spec_inflight, bool *ran_here) {
  asc__op_spec sp;

  if (ran_here != NULL)
    *ran_here = false;
  memset(&sp, 0, sizeof sp);
  sp.kind = OP_LAUNCH;
  sp.desc = desc;
  sp.nblocks = nblocks;
  sp.share = share;
  sp.nargs = nargs;
  sp.sizes = sizes;
  sp.src = src;
  sp.inflight = inflight;
  sp.spec_inflight = spec_inflight;
  sp.ran_here = ran_here;
  return asc__stream_enqueue(st, &sp);
}

ascError_t asc__stream_enqueue_callback(asc__stream *st, asc__stream_cb fn,
                                        void *ud) {
  asc__op_spec sp;

  memset(&sp, 0, sizeof sp);
  sp.kind = OP_CALLBACK;
  sp.cb = fn;
  sp.ud = ud;
  return asc__stream_enqueue(st, &sp);
}

ascError_t asc__stream_enqueue_extern(ascStream_t stream,
                                      asc__extern_start_fn start, void *ud) {
  return asc__stream_enqueue_extern_named(stream, start, ud, NULL, 0);
}

/* asc__stream_enqueue for an external op in the common case, in about
 * a third of its instructions (a small MPI allreduce pays them before
 * its MPI call: docs/distributed.md): the spare record, no tracing, a
 * queue with room, no legacy default-stream dependency.  False, having
 * queued nothing, when the general path must do it.  Appending an op
 * completes nothing (it is dispatched, or waits behind the queue), so
 * there is no worklist and no waiter to notify. */
static bool extern_fast(asc__stream *st, asc__extern_start_fn start,
                        void *ud, const char *name, uint64_t bytes) {
  asc__op *op, *run, *wl = NULL;

  if (asc__tracing() || !stream_has_room(st) ||
      !((st->flags & ascStreamNonBlocking) ||
        (!st->is_default && !asc__stream_pending(st->rt->null_stream))))
    return false;
  op = atomic_exchange_explicit(&st->spare, NULL, memory_order_acquire);
  if (op == NULL)
    return false;
  op_reset(st, op);
  op->kind = OP_EXTERN;
  op->ud = ud;
  op->xstart = start;
  op->xname = name != NULL && name[0] != '\0' ? name : "external op";
  op->xbytes = bytes;
  op->trace_ns[1] = 0;
  asc__spin_lock(&st->lock);
  if (st->destroyed) {
    op_put(st, op);
    asc__spin_unlock(&st->lock);
    return false;   /* the general path reports it */
  }
  run = stream_append(st, op, &wl);
  asc__spin_unlock(&st->lock);
  op_start(run);
  return true;
}

ascError_t asc__stream_enqueue_extern_named(ascStream_t stream,
                                            asc__extern_start_fn start,
                                            void *ud, const char *name,
                                            uint64_t bytes) {
  asc__stream *st;
  ascError_t err;
  asc__op_spec sp;

  if (start == NULL)
    return asc__error(ascErrorInvalidValue, "external op: start is NULL");
  err = asc__stream_enter(stream, &st);
  if (err != ascSuccess)
    return err;
  if (!extern_fast(st, start, ud, name, bytes)) {
    memset(&sp, 0, sizeof sp);
    sp.kind = OP_EXTERN;
    sp.xstart = start;
    sp.ud = ud;
    sp.xname = name != NULL && name[0] != '\0' ? name : "external op";
    sp.xbytes = bytes;
    err = asc__stream_enqueue(st, &sp);
  }
  asc__api_leave(st->rt);
  return err;
}

void asc__extern_complete(asc__extern *op, ascError_t err, const char *msg) {
  char *copy = NULL;

  if (err != ascSuccess)
    copy = asc__strdup(msg != NULL ? msg : ascGetErrorString(err));
  /* Started while tracing (the started hook stamped it): its span ends
   * here, on whichever thread completes it, before the stream's next op
   * can start.  Untraced, one test and no flag read. */
  if (__builtin_expect(op->trace_ns[1] != 0, 0))
    asc__trace_extern_done(op, copy);
  asc__stream_finish(op->stream, op, err, copy);
}

ascError_t asc__extern_error(ascError_t code, const char *text) {
  return asc__error_text(code, text != NULL ? text : "");
}

/* ------------------------------------------------------------------ fork */

/* The threads that were running or about to run st's work do not exist
 * in a forked child, so that work never ends there: it is stopped as by
 * ascStreamCancel, and its records are signalled with the error, so that
 * nothing in the child waits for them.  Called for every stream before
 * any is dropped (asc__stream_fork_drop): a record signalled here may be
 * what another stream's queued wait names.  Only the calling thread
 * exists; no lock is taken. */
void asc__stream_fork_stop(asc__stream *st) {
  asc__op *wl = NULL;

  atomic_store(&st->lock.v, 0);
  if (st->head == NULL)
    return;
  if (st->err == ascSuccess)
    asc__stream_set_error(
        st, ascErrorCancelled, atomic_fetch_add(&st->rt->err_seq, 1) + 1,
        asc__strdup("work queued before fork() does not run in the child "
                    "process (it runs in the parent)"));
  for (asc__op *op = st->head; op != NULL; op = op->next)
    if (op->kind == OP_RECORD && op->fence != NULL) {
      /* Its waiters are queued waits, dropped with their streams. */
      op->fence->waiters = NULL;
      fence_fill(op->fence, st);
      fence_publish(op->fence, &wl);
    }
}

/* Drops every op of st (asc__stream_fork_stop has run for every stream):
 * st is idle afterwards, with its pending error kept.  An op that was
 * dispatched belongs to a thread of the parent (a block's team, the
 * callback thread, an external component, a fence's waiter list): its
 * record is left alone, never reused.  The launches' module counts are
 * retired, so that the child can unload the module. */
void asc__stream_fork_drop(asc__stream *st) {
  asc__op *op;

  while ((op = st->head) != NULL) {
    st->head = op->next;
    if (op->spec_inflight != NULL)
      atomic_fetch_add(&op->spec_inflight->retired, 1);
    if (op->inflight != NULL)
      atomic_fetch_add(&op->inflight->retired, 1);
    if (!op->dispatched)
      op_put(st, op);
  }
  st->tail = NULL;
  atomic_store(&st->completed, atomic_load(&st->submitted));
  atomic_store(&st->completed_seen, atomic_load(&st->submitted));
  if (asc__stream_check_reap(st))
    asc__stream_unlist(st);
}
