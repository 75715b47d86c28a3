/*
 * The stream-order interface of pool.h over the streams of stream.c.
 *
 * A stream's position is its `submitted` counter: a free recorded at
 * position n may still be touched by the stream's operations 1..n, and it
 * is complete once `completed` >= n.  Both counters are monotonic over the
 * life of the stream's memory, which is type-stable (a destroyed stream's
 * memory is only reused for another stream, once drained), so a key kept
 * by the pool after its stream is destroyed still answers correctly.
 *
 * Event dependencies: an event record remembers its stream and position
 * (asc__fence.rec_stream / rec_pos); when a stream queues a wait for it,
 * asc__order_note_wait keeps the highest such position per source stream in
 * the waiting stream's `waited` table.
 */
#include "runtime/pool.h"
#include "runtime/stream.h"

ascError_t asc__order_stream(ascStream_t s, asc__device **dev, void **key) {
  asc__stream *st;
  ascError_t e = asc__stream_enter(s, &st);

  if (e != ascSuccess)
    return e;
  *dev = st->rt->dev;
  *key = st;
  return ascSuccess;
}

ascError_t asc__order_enter(void *key) {
  return asc__api_enter(((asc__stream *)key)->rt);
}

void asc__order_leave(void *key) {
  asc__api_leave(((asc__stream *)key)->rt);
}

uint64_t asc__order_now(void *key) {
  return atomic_load(&((asc__stream *)key)->submitted);
}

bool asc__order_reached(void *key, uint64_t pos) {
  return atomic_load(&((asc__stream *)key)->completed) >= pos;
}

void asc__order_note_wait(asc__stream *st, const asc__fence *f) {
  struct asc__waited *w = st->waited, *slot = &w[0];
  asc__stream *src = f->rec_stream;
  int i;

  if (src == NULL || src == st)
    return;
  for (i = 0; i < ASC__WAITED_MAX; i++) {
    if (w[i].src == src) {
      if (w[i].pos < f->rec_pos)
        w[i].pos = f->rec_pos;
      return;
    }
  }
  /* A free entry, else the one with the smallest position (an arbitrary
   * but cheap choice: dropping any entry is safe). */
  for (i = 0; i < ASC__WAITED_MAX; i++) {
    if (w[i].src == NULL) {
      slot = &w[i];
      break;
    }
    if (w[i].pos < slot->pos)
      slot = &w[i];
  }
  slot->src = src;
  slot->pos = f->rec_pos;
}

uint64_t asc__order_waited(void *waiter, void *key) {
  asc__stream *t = waiter;
  uint64_t pos = 0;

  asc__spin_lock(&t->lock);
  for (int i = 0; i < ASC__WAITED_MAX; i++) {
    if (t->waited[i].src == key) {
      pos = t->waited[i].pos;
      break;
    }
  }
  asc__spin_unlock(&t->lock);
  return pos;
}

/* The public handle of stream st (NULL for the default stream). */
static ascStream_t handle_of(asc__stream *st) {
  return st->is_default ? NULL : (ascStream_t)(void *)st;
}

bool asc__order_wait(void *waiter, void *key) {
  ascError_t saved = ascPeekAtLastError();
  ascEvent_t ev;
  bool ok = false;

  /* An internal event: failures here are not the caller's, so the
   * thread's last error is left as it was. */
  if (ascEventCreateWithFlags(&ev, ascEventDisableTiming) == ascSuccess) {
    ok = ascEventRecord(ev, handle_of(key)) == ascSuccess &&
         ascStreamWaitEvent(handle_of(waiter), ev, 0) == ascSuccess;
    (void)ascEventDestroy(ev);
  }
  asc__error_restore(saved);
  return ok;
}
