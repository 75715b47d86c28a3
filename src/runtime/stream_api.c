/*
 * What host threads call on streams: waits (a stream's, every stream's,
 * the legacy default stream's ordering wait), the stream calls of the API
 * (create, destroy, synchronize, query, host functions) and cancellation
 * with its timeouts.  The queue these wait on is in stream.c; stream.h
 * explains the structure, docs/streams.md the semantics.
 */
#include "runtime/memory.h"
#include "runtime/extern_op.h"
#include "runtime/stream.h"
#include "runtime/stream_internal.h"
#include "runtime/pool.h"

#include <stddef.h>
#include <string.h>

/* ---------------------------------------------------------------- waiting */

static bool stream_reached(const void *a, uint64_t target) {
  const asc__stream *st = a;
  return atomic_load(&st->completed) >= target;
}

/* asc__help_fn over an asc__help_scope: work queued after the wait began is
 * never taken, so a waiting thread cannot be held up by it. */
static bool in_scope(const asc__launch *l, const void *arg) {
  const asc__help_scope *h = arg;
  const asc__op *op = (const asc__op *)(const void *)((const char *)l -
                                                      offsetof(asc__op, launch));
  if (h->st != NULL)
    return op->stream == h->st && op->seq <= h->upto;
  return op->gseq <= h->upto;
}

/* Spins until done(a, b) or the spin window closes; true if done.  With
 * a pool s, the thread works meanwhile: runs the blocks and joins the
 * parallel loops of the launches in scope. */
static bool host_spin(asc__rt *rt, bool (*done)(const void *, uint64_t),
                      const void *a, uint64_t b, asc__sched *s,
                      const asc__help_scope *scope) {
  uint64_t t0 = uv_hrtime(), seen = UINT64_MAX;

  for (;;) {
    if (s != NULL && asc__sched_help(s, in_scope, scope, &seen))
      t0 = uv_hrtime();
    for (int i = 0; i < 64; i++) {
      if (done(a, b))
        return true;
      asc__cpu_relax();
    }
    if (uv_hrtime() - t0 >= rt->spin_ns)
      return done(a, b);
  }
}

/* Blocks the calling host thread until done(a, b): spins for the spin
 * window (unless spin is false), then parks on the rt's condition.  With
 * a scope, the spinning thread is lent to the pool: it works on the
 * launches in scope (host_spin) and an idle worker parks to leave it a
 * core (docs/streams.md). */
static bool host_wait_until(asc__rt *rt,
                            bool (*done)(const void *, uint64_t),
                            const void *a, uint64_t b, bool spin,
                            const asc__help_scope *scope, uint64_t deadline);

void asc__host_wait(asc__rt *rt, bool (*done)(const void *, uint64_t),
                    const void *a, uint64_t b, bool spin,
                    const asc__help_scope *scope) {
  (void)host_wait_until(rt, done, a, b, spin, scope, UINT64_MAX);
}

/* asc__host_wait, giving up at uv_hrtime() >= deadline (UINT64_MAX: never);
 * true if done(a, b). */
static bool host_wait_until(asc__rt *rt,
                            bool (*done)(const void *, uint64_t),
                            const void *a, uint64_t b, bool spin,
                            const asc__help_scope *scope, uint64_t deadline) {
  asc__sched *s;
  bool ok;

  if (done(a, b))
    return true;
  if (asc__extern_drive(done, a, b, deadline,   /* extern_op.h */
                        done == stream_reached ? a : NULL))
    return true;
  /* Only now: a wait that the drive ends (an MPI op) skips this. */
  s = scope != NULL && asc__sched_can_help() ? asc__sched_peek(rt->dev)
                                             : NULL;
  if (spin) {
    if (s != NULL)
      asc__sched_guest(s, 1);
    ok = host_spin(rt, done, a, b, s, scope);
    if (s != NULL)
      asc__sched_guest(s, -1);
    if (ok)
      return true;
  }
  uv_mutex_lock(&rt->wait_lock);
  atomic_fetch_add(&rt->waiters, 1);
  while (!(ok = done(a, b))) {
    uint64_t now;
    if (deadline == UINT64_MAX) {
      uv_cond_wait(&rt->wait_cond, &rt->wait_lock);
      continue;
    }
    now = uv_hrtime();
    if (now >= deadline)
      break;
    (void)uv_cond_timedwait(&rt->wait_cond, &rt->wait_lock, deadline - now);
  }
  atomic_fetch_sub(&rt->waiters, 1);
  uv_mutex_unlock(&rt->wait_lock);
  return ok;
}

void asc__rt_wait(asc__rt *rt, bool (*done)(const void *a, uint64_t b),
                  const void *a, uint64_t b) {
  asc__host_wait(rt, done, a, b, true, NULL);
}

ascError_t asc__not_permitted(const char *what) {
  return asc__error(ascErrorNotPermitted,
                    "%s cannot be called from a host function (it would "
                    "wait for the stream that runs the host function)",
                    what);
}

bool asc__in_callback(void) {
  return atomic_load_explicit(&asc__host_threads, memory_order_relaxed) &&
         asc__tls_get()->in_host_callback != 0;
}

/* Reports and clears st's pending error. */
static ascError_t stream_take_error(asc__stream *st) {
  ascError_t code;
  char *msg;

  /* Without the lock when no error is pending: the line read here is the
   * one the synchronising caller has just read `completed` from. */
  if (!atomic_load(&st->err_pending))
    return ascSuccess;
  asc__spin_lock(&st->lock);
  code = st->err;
  msg = st->err_msg;
  asc__stream_set_error(st, ascSuccess, 0, NULL);
  asc__spin_unlock(&st->lock);
  if (code == ascSuccess)
    return ascSuccess;
  asc__error_text(code, msg != NULL ? msg : asc__lost_message);
  asc__free(msg);
  return code;
}

/* rt lock held: the first stream from t on in the live list that has work
 * pending and that a wait of this kind covers (all streams, or the default
 * stream and blocking streams); NULL if none. */
static asc__stream *next_pending(asc__stream *t, bool blocking_only) {
  for (; t != NULL; t = t->live_next)
    if (!(blocking_only && (t->flags & ascStreamNonBlocking)) &&
        asc__stream_pending(t))
      return t;
  return NULL;
}

/* asc__wait_streams without memory: until every matching stream is idle. */
void asc__wait_streams_unbounded(asc__rt *rt, bool blocking_only) {
  for (;;) {
    asc__stream *pick;
    uint64_t target = 0;

    uv_mutex_lock(&rt->lock);
    pick = next_pending(rt->streams, blocking_only);
    if (pick != NULL)
      target = atomic_load(&pick->submitted);
    uv_mutex_unlock(&rt->lock);
    if (pick == NULL)
      return;
    asc__host_wait(rt, stream_reached, pick, target, true, NULL);
  }
}

/* Waits for the work queued so far on every stream of rt (all, or the
 * default stream and blocking streams): each stream up to its count of
 * ops at the call, so that work queued meanwhile by other threads cannot
 * keep the caller waiting.  Streams are never freed, so pointers taken
 * under the rt lock stay readable after it is dropped.  The waiting thread
 * works on that same work: any stream's ops queued before the call, or,
 * for the default stream's ordering wait, the stream it is waiting on. */
void asc__wait_streams(asc__rt *rt, bool blocking_only) {
  struct mark {
    asc__stream *st;
    uint64_t target;
  } *marks = NULL;
  size_t n = 0, cap = 0;
  asc__help_scope all = {NULL, atomic_load(&rt->enq_seq)};

  uv_mutex_lock(&rt->lock);
  for (asc__stream *t = rt->streams; t != NULL; t = t->live_next)
    cap++;
  marks = asc__malloc((cap ? cap : 1) * sizeof *marks);
  for (asc__stream *t = next_pending(rt->streams, blocking_only);
       marks != NULL && t != NULL;
       t = next_pending(t->live_next, blocking_only)) {
    marks[n].st = t;
    marks[n].target = atomic_load(&t->submitted);
    n++;
  }
  uv_mutex_unlock(&rt->lock);
  if (marks == NULL) {
    /* Out of memory: wait for streams one by one until all are idle. */
    asc__wait_streams_unbounded(rt, blocking_only);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    asc__help_scope one = {marks[i].st, marks[i].target};
    asc__host_wait(rt, stream_reached, marks[i].st, marks[i].target, true,
                   blocking_only ? &one : &all);
  }
  asc__free(marks);
}

ascError_t asc__default_stream_wait(asc__device *dev) {
  asc__rt *rt;
  ascError_t err;

  if (asc__in_callback())
    return asc__not_permitted("a synchronous copy");
  /* No stream runtime yet means no queued work: do not start one. */
  if (__atomic_load_n(&dev->rt_private, __ATOMIC_ACQUIRE) == NULL)
    return ascSuccess;
  err = asc__rt_get(dev, &rt);
  if (err != ascSuccess)
    return err;
  asc__wait_streams(rt, true);
  return ascSuccess;
}

/* --------------------------------------------------------------- streams */

ascError_t ascStreamCreateWithPriority(ascStream_t *stream, unsigned int flags,
                                       int priority) {
  asc__rt *rt;
  asc__stream *st;
  ascError_t err;

  if (stream == NULL)
    return asc__error(ascErrorInvalidValue, "ascStreamCreate: stream is NULL");
  if (flags & ~(unsigned)ascStreamNonBlocking)
    return asc__error(ascErrorInvalidValue,
                      "ascStreamCreate: unknown flags 0x%x", flags);
  err = asc__rt_current(&rt);
  if (err == ascSuccess)
    err = asc__api_enter(rt);
  if (err != ascSuccess)
    return err;
  /* Out-of-range priorities are clamped, as in CUDA. */
  if (priority > ASC_STREAM_PRIO_LEAST)
    priority = ASC_STREAM_PRIO_LEAST;
  if (priority < ASC_STREAM_PRIO_GREATEST)
    priority = ASC_STREAM_PRIO_GREATEST;
  st = asc__stream_alloc(rt, flags, priority, false);
  asc__api_leave(rt);
  if (st == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate a stream");
  *stream = (ascStream_t)(void *)st;
  return ascSuccess;
}

ascError_t ascStreamCreateWithFlags(ascStream_t *stream, unsigned int flags) {
  return ascStreamCreateWithPriority(stream, flags, ASC_STREAM_PRIO_LEAST);
}

ascError_t ascStreamCreate(ascStream_t *stream) {
  return ascStreamCreateWithPriority(stream, ascStreamDefault,
                                     ASC_STREAM_PRIO_LEAST);
}

ascError_t ascDeviceGetStreamPriorityRange(int *leastPriority,
                                           int *greatestPriority) {
  ascError_t err = asc__init();
  if (err != ascSuccess)
    return err;
  if (leastPriority != NULL)
    *leastPriority = ASC_STREAM_PRIO_LEAST;
  if (greatestPriority != NULL)
    *greatestPriority = ASC_STREAM_PRIO_GREATEST;
  return ascSuccess;
}

ascError_t ascStreamDestroy(ascStream_t stream) {
  asc__stream *st;
  ascError_t err;
  bool reap;

  if (stream == NULL)
    return asc__error(ascErrorInvalidHandle,
                      "ascStreamDestroy: the default stream cannot be "
                      "destroyed");
  err = asc__stream_enter(stream, &st);
  if (err != ascSuccess)
    return err;
  asc__spin_lock(&st->lock);
  if (st->destroyed) {
    asc__spin_unlock(&st->lock);
    asc__api_leave(st->rt);
    return asc__error(ascErrorInvalidHandle, "stream %p was destroyed",
                      (void *)stream);
  }
  atomic_store(&st->magic, ASC__MAGIC_DEAD);
  st->destroyed = true;
  asc__free(st->err_msg);
  asc__stream_set_error(st, ascSuccess, 0, NULL);
  reap = asc__stream_check_reap(st);
  asc__spin_unlock(&st->lock);
  if (reap)
    asc__stream_reap(st);
  asc__api_leave(st->rt);
  return ascSuccess;
}

ascError_t asc__stream_synchronize(asc__stream *st) {
  if (asc__in_callback())
    return asc__not_permitted("ascStreamSynchronize");
  {
    asc__help_scope mine = {st, atomic_load(&st->submitted)};
    asc__host_wait(st->rt, stream_reached, st, mine.upto, true, &mine);
  }
  asc__pool_on_sync(st->rt->dev);
  return stream_take_error(st);
}

ascError_t ascStreamSynchronize(ascStream_t stream) {
  asc__stream *st;
  ascError_t err = asc__stream_enter(stream, &st);

  if (err != ascSuccess)
    return err;
  err = asc__stream_synchronize(st);
  asc__api_leave(st->rt);
  return err;
}

ascError_t ascStreamQuery(ascStream_t stream) {
  asc__stream *st;
  ascError_t err = asc__stream_enter(stream, &st);

  if (err != ascSuccess)
    return err;
  err = asc__stream_pending(st) ? ascErrorNotReady : ascSuccess;
  asc__api_leave(st->rt);
  return err;
}

ascError_t ascLaunchHostFunc(ascStream_t stream, ascHostFn_t fn,
                             void *userData) {
  asc__stream *st;
  ascError_t err;
  asc__op_spec sp;

  if (fn == NULL)
    return asc__error(ascErrorInvalidValue, "ascLaunchHostFunc: fn is NULL");
  err = asc__stream_enter(stream, &st);
  if (err != ascSuccess)
    return err;
  err = asc__host_start(st->rt);
  if (err == ascSuccess) {
    memset(&sp, 0, sizeof sp);
    sp.kind = OP_HOSTFN;
    sp.fn = fn;
    sp.ud = userData;
    err = asc__stream_enqueue(st, &sp);
  }
  asc__api_leave(st->rt);
  return err;
}

/* ------------------------------------------------------------ cancellation */

/* Stops st's work: the running launch at its next poll (why is an
 * ASC__STOP_* reason), and, through the pending error (msg, unless an
 * error is already pending), whatever is queued behind it.  Takes st's
 * lock; the rt lock may be held. */
bool asc__stop_stream(asc__stream *st, int why, const char *msg) {
  bool xop = false;

  asc__spin_lock(&st->lock);
  if (st->head != NULL) {
    asc__op *op = st->head;
    if (st->err == ascSuccess)
      asc__stream_set_error(st, ascErrorCancelled,
                            atomic_fetch_add(&st->rt->err_seq, 1) + 1,
                            asc__strdup(msg));
    /* A dispatched launch at the head is running (or about to be
     * submitted; its blocks then see the flag before they start). */
    if (op->kind == OP_LAUNCH && op->dispatched)
      atomic_store(&op->launch.stop, why);
    xop = op->kind == OP_EXTERN && op->dispatched;
  }
  asc__spin_unlock(&st->lock);
  return xop;
}

ascError_t ascStreamCancel(ascStream_t stream) {
  asc__stream *st;
  ascError_t err = asc__stream_enter(stream, &st);

  if (err != ascSuccess)
    return err;
  /* An external op (an MPI collective) is stopped by its component. */
  if (asc__stop_stream(st, ASC__STOP_CANCEL,
                       "work cancelled by ascStreamCancel"))
    asc__extern_cancel(stream, false);
  asc__api_leave(st->rt);
  return ascSuccess;
}

ascError_t ascStreamSetKernelTimeout(ascStream_t stream,
                                     unsigned int timeoutMs) {
  asc__stream *st;
  ascError_t err = asc__stream_enter(stream, &st);

  if (err != ascSuccess)
    return err;
  atomic_store(&st->timeout_ms, timeoutMs);
  if (timeoutMs != 0)
    asc__watchdog_start(st->rt);
  asc__api_leave(st->rt);
  return ascSuccess;
}

ascError_t ascStreamGetKernelTimeout(unsigned int *timeoutMs,
                                     ascStream_t stream) {
  asc__stream *st;
  ascError_t err;

  if (timeoutMs == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascStreamGetKernelTimeout: timeoutMs is NULL");
  err = asc__stream_enter(stream, &st);
  if (err != ascSuccess)
    return err;
  *timeoutMs = atomic_load(&st->timeout_ms);
  asc__api_leave(st->rt);
  return ascSuccess;
}

static ascError_t stream_synchronize_timeout(asc__stream *st,
                                             unsigned int timeoutMs) {
  uint64_t target, deadline;

  if (asc__in_callback())
    return asc__not_permitted("ascStreamSynchronizeTimeout");
  target = atomic_load(&st->submitted);
  deadline = uv_hrtime() + (uint64_t)timeoutMs * 1000000u;
  /* Without a help scope: the caller must get control back at the
   * deadline, so it never runs kernel code itself. */
  if (!host_wait_until(st->rt, stream_reached, st, target, true, NULL,
                       deadline))
    return ascErrorNotReady;
  asc__pool_on_sync(st->rt->dev);
  return stream_take_error(st);
}

ascError_t ascStreamSynchronizeTimeout(ascStream_t stream,
                                       unsigned int timeoutMs) {
  asc__stream *st;
  ascError_t err = asc__stream_enter(stream, &st);

  if (err != ascSuccess)
    return err;
  err = stream_synchronize_timeout(st, timeoutMs);
  asc__api_leave(st->rt);
  return err;
}
