/*
 * Events: records of a point in a stream (a fence) that other streams and
 * host threads wait on.  stream.h explains the structure; the semantics
 * are in docs/streams.md.
 */
#include "runtime/memory.h"
#include "runtime/extern_op.h"
#include "runtime/stream.h"
#include "runtime/stream_internal.h"
#include "runtime/pool.h"
#include "runtime/trace.h"
#include <stddef.h>
#include <string.h>

/* ---------------------------------------------------------------- events */

/* Resolves event handle h inside the API gate of its runtime (stream.h):
 * on success the caller leaves with asc__api_leave((*out)->rt).  An
 * event's memory is only reused for an event of the same runtime, so
 * e->rt is right even if h dies meanwhile (the second look refuses it). */
static ascError_t event_enter(ascEvent_t h, asc__event **out) {
  asc__rt *rt;
  ascError_t err = asc__rt_current(&rt);

  *out = NULL;
  if (err != ascSuccess)
    return err;
  if (h == NULL)
    return asc__error(ascErrorInvalidHandle, "event is NULL");
  if (asc__handle_magic(h) != ASC__MAGIC_EVENT)
    return asc__error(ascErrorInvalidHandle, "event %p is not a live event",
                      (void *)h);
  rt = ((asc__event *)(void *)h)->rt;
  err = asc__api_enter(rt);
  if (err != ascSuccess)
    return err;
  if (asc__handle_magic(h) != ASC__MAGIC_EVENT) {
    asc__api_leave(rt);
    return asc__error(ascErrorInvalidHandle, "event %p is not a live event",
                      (void *)h);
  }
  *out = (asc__event *)(void *)h;
  return ascSuccess;
}

static asc__fence *event_fence(asc__event *e) {
  asc__fence *f;

  uv_mutex_lock(&e->lock);
  f = e->fence;
  if (f != NULL)
    asc__fence_ref(f);
  uv_mutex_unlock(&e->lock);
  return f;
}

ascError_t ascEventCreateWithFlags(ascEvent_t *event, unsigned int flags) {
  asc__rt *rt;
  asc__event *e;
  ascError_t err;

  if (event == NULL)
    return asc__error(ascErrorInvalidValue, "ascEventCreate: event is NULL");
  if (flags & ~(unsigned)(ascEventBlockingSync | ascEventDisableTiming))
    return asc__error(ascErrorInvalidValue,
                      "ascEventCreate: unknown flags 0x%x", flags);
  err = asc__rt_current(&rt);
  if (err == ascSuccess)
    err = asc__api_enter(rt);
  if (err != ascSuccess)
    return err;
  uv_mutex_lock(&rt->lock);
  e = rt->free_events;
  if (e != NULL) {
    rt->free_events = e->free_next;
  } else {
    e = asc__calloc(1, sizeof *e);
    if (e == NULL || uv_mutex_init(&e->lock) != 0) {
      asc__free(e);
      uv_mutex_unlock(&rt->lock);
      asc__api_leave(rt);
      return asc__error(ascErrorOutOfMemory, "cannot allocate an event");
    }
    e->rt = rt;
  }
  e->free_next = NULL;
  e->flags = flags;
  e->fence = NULL;
  ASC__LIVE_PUSH(rt->events, e);
  atomic_store(&e->magic, ASC__MAGIC_EVENT);
  uv_mutex_unlock(&rt->lock);
  asc__api_leave(rt);
  *event = (ascEvent_t)(void *)e;
  return ascSuccess;
}

ascError_t ascEventCreate(ascEvent_t *event) {
  return ascEventCreateWithFlags(event, ascEventDefault);
}

/* rt lock held. */
void asc__event_free_locked(asc__rt *rt, asc__event *e) {
  asc__fence *f;

  atomic_store(&e->magic, ASC__MAGIC_DEAD);
  uv_mutex_lock(&e->lock);
  f = e->fence;
  e->fence = NULL;
  uv_mutex_unlock(&e->lock);
  asc__fence_unref(f);
  ASC__LIVE_RETIRE(rt->events, rt->free_events, e);
}

ascError_t ascEventDestroy(ascEvent_t event) {
  asc__event *e;
  ascError_t err = event_enter(event, &e);

  if (err != ascSuccess)
    return err;
  uv_mutex_lock(&e->rt->lock);
  if (atomic_load(&e->magic) != ASC__MAGIC_EVENT) {
    err = asc__error(ascErrorInvalidHandle, "event %p was destroyed",
                     (void *)event);
  } else {
    asc__event_free_locked(e->rt, e);
  }
  uv_mutex_unlock(&e->rt->lock);
  asc__api_leave(e->rt);
  return err;
}

static ascError_t event_record(asc__event *e, ascStream_t stream) {
  asc__stream *st;
  asc__fence *f, *old;
  ascError_t err;
  asc__op_spec sp;

  err = asc__stream_enter(stream, &st);
  if (err != ascSuccess)
    return err;
  f = asc__fence_new();
  if (f == NULL) {
    asc__api_leave(st->rt);
    return asc__error(ascErrorOutOfMemory, "cannot allocate an event record");
  }
  asc__fence_ref(f);   /* one for the op, one for the event */
  memset(&sp, 0, sizeof sp);
  sp.kind = OP_RECORD;
  sp.fence = f;
  err = asc__stream_enqueue(st, &sp);
  asc__api_leave(st->rt);
  if (err != ascSuccess) {
    asc__fence_unref(f);
    return err;
  }
  uv_mutex_lock(&e->lock);
  old = e->fence;
  e->fence = f;
  uv_mutex_unlock(&e->lock);
  asc__fence_unref(old);
  return ascSuccess;
}

ascError_t ascEventRecord(ascEvent_t event, ascStream_t stream) {
  asc__event *e;
  ascError_t err = event_enter(event, &e);

  if (err != ascSuccess)
    return err;
  err = event_record(e, stream);
  asc__api_leave(e->rt);
  return err;
}

static ascError_t stream_wait_event(asc__stream *st, asc__event *e,
                                    unsigned int flags) {
  asc__fence *f;
  asc__op_spec sp;

  if (flags != 0)
    return asc__error(ascErrorInvalidValue,
                      "ascStreamWaitEvent: flags must be 0, got %u", flags);
  f = event_fence(e);
  if (f == NULL)   /* never recorded: nothing to wait for, as in CUDA */
    return ascSuccess;
  memset(&sp, 0, sizeof sp);
  sp.kind = OP_WAIT;
  sp.fence = f;
  return asc__stream_enqueue(st, &sp);
}

ascError_t ascStreamWaitEvent(ascStream_t stream, ascEvent_t event,
                              unsigned int flags) {
  asc__stream *st;
  asc__event *e;
  ascError_t err;

  err = asc__stream_enter(stream, &st);
  if (err != ascSuccess)
    return err;
  err = event_enter(event, &e);
  if (err == ascSuccess) {
    err = stream_wait_event(st, e, flags);
    asc__api_leave(e->rt);
  }
  asc__api_leave(st->rt);
  return err;
}

ascError_t ascEventQuery(ascEvent_t event) {
  asc__event *e;
  asc__fence *f;
  ascError_t err = event_enter(event, &e);
  bool done;

  if (err != ascSuccess)
    return err;
  f = event_fence(e);
  asc__api_leave(e->rt);
  if (f == NULL)
    return ascSuccess;
  done = atomic_load(&f->signalled) != 0;
  asc__fence_unref(f);
  return done ? ascSuccess : ascErrorNotReady;
}

/* Clears st's pending error if it is still error id (it was reported
 * through an event). */
static void stream_clear_error(asc__stream *st, uint64_t id) {
  asc__spin_lock(&st->lock);
  if (st->err != ascSuccess && st->err_id == id) {
    asc__free(st->err_msg);
    asc__stream_set_error(st, ascSuccess, 0, NULL);
  }
  asc__spin_unlock(&st->lock);
}

static ascError_t event_synchronize(asc__event *e) {
  asc__fence *f;
  ascError_t err;

  if (asc__in_callback())
    return asc__not_permitted("ascEventSynchronize");
  f = event_fence(e);
  if (f == NULL)
    return ascSuccess;
  {
    /* Works on the recording stream's launches queued before the record
     * while it spins. */
    asc__help_scope before = {f->rec_stream, f->rec_pos - 1};
    asc__host_wait(e->rt, asc__fence_done, f, 0,
                   !(e->flags & ascEventBlockingSync),
                   f->rec_stream != NULL ? &before : NULL);
  }
  asc__pool_on_sync(e->rt->dev);
  err = f->err;
  if (err != ascSuccess) {
    asc__error_text(err, f->err_msg != NULL ? f->err_msg : asc__lost_message);
    stream_clear_error(f->err_stream, f->err_id);
  }
  asc__fence_unref(f);
  return err;
}

ascError_t ascEventSynchronize(ascEvent_t event) {
  asc__event *e;
  ascError_t err = event_enter(event, &e);

  if (err != ascSuccess)
    return err;
  err = event_synchronize(e);
  asc__api_leave(e->rt);
  return err;
}

static ascError_t elapsed_time(float *ms, asc__event *e0, asc__event *e1) {
  asc__fence *f0 = NULL, *f1 = NULL;
  ascError_t err = ascSuccess;

  if ((e0->flags | e1->flags) & ascEventDisableTiming)
    return asc__error(ascErrorInvalidValue,
                      "ascEventElapsedTime: an event was created with "
                      "ascEventDisableTiming");
  f0 = event_fence(e0);
  f1 = event_fence(e1);
  if (f0 == NULL || f1 == NULL) {
    err = asc__error(ascErrorInvalidValue,
                     "ascEventElapsedTime: the %s event was never recorded",
                     f0 == NULL ? "start" : "end");
  } else if (!atomic_load(&f0->signalled) || !atomic_load(&f1->signalled)) {
    err = asc__error(ascErrorNotReady,
                     "ascEventElapsedTime: an event has not completed");
  } else {
    /* Microsecond resolution, as CUDA documents for its events. */
    int64_t us = ((int64_t)f1->time_ns - (int64_t)f0->time_ns) / 1000;
    *ms = (float)((double)us / 1000.0);
  }
  asc__fence_unref(f0);
  asc__fence_unref(f1);
  return err;
}

ascError_t ascEventElapsedTime(float *ms, ascEvent_t start, ascEvent_t end) {
  asc__event *e0, *e1;
  ascError_t err;

  if (ms == NULL)
    return asc__error(ascErrorInvalidValue, "ascEventElapsedTime: ms is NULL");
  err = event_enter(start, &e0);
  if (err != ascSuccess)
    return err;
  err = event_enter(end, &e1);
  if (err == ascSuccess) {
    err = elapsed_time(ms, e0, e1);
    asc__api_leave(e1->rt);
  }
  asc__api_leave(e0->rt);
  return err;
}
