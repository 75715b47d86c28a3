/*
 * External ops, the waiting side: a component whose ops complete only
 * when someone polls (libasc_mpi: MPI progresses inside MPI_Test) lets a
 * host thread that waits in libasc poll them itself, instead of sleeping
 * until the component's own thread completes them and wakes it (two
 * thread hand-offs per operation).  extern_op.h has the contract.
 */
#include "runtime/extern_op.h"
#include "runtime/stream.h"

#include <stdatomic.h>
#include <uv.h>

/* A waiter drives the component's progress until this long passes
 * without a completion, then waits the ordinary way (spin, then park)
 * and leaves the rest to the component's thread. */
#define DRIVE_NS 1000000u

static _Atomic(asc__extern_poll_fn) poll_hook;

void asc__extern_set_poll(asc__extern_poll_fn fn) {
  atomic_store_explicit(&poll_hook, fn, memory_order_release);
}

bool asc__extern_drive(bool (*done)(const void *, uint64_t), const void *a,
                       uint64_t b, uint64_t deadline, const void *stream) {
  asc__extern_poll_fn fn =
      atomic_load_explicit(&poll_hook, memory_order_acquire);
  const asc__stream *st = stream;
  bool may_block = st != NULL && deadline == UINT64_MAX;
  ascStream_t handle = NULL;
  uint64_t t0, now;

  if (fn == NULL)
    return false;
  /* The handle the application passed: the stream itself, or NULL for
   * the default stream. */
  if (st != NULL && st != st->rt->null_stream)
    handle = (ascStream_t)(void *)(uintptr_t)st;
  t0 = uv_hrtime();
  for (;;) {
    int r;
    if (done(a, b))
      return true;
    r = fn(may_block, handle);
    if (r == ASC__EXTERN_IDLE)
      return false;
    now = uv_hrtime();
    if (r == ASC__EXTERN_PROGRESS)
      t0 = now;
    else if (now - t0 >= DRIVE_NS || now >= deadline)
      return done(a, b);
  }
}
