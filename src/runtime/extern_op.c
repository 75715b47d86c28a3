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
 * and leaves the rest to the component's thread.  A waiter that may
 * block (it waits for one stream, without a deadline) whose stream has
 * work in flight in the component (ASC__EXTERN_BUSY_STREAM) goes on
 * driving up to OWN_NS without a completion, as MPI_Wait would: a
 * transfer longer than DRIVE_NS (a 2 MiB allreduce takes 1-2 ms here)
 * then completes on the waiting thread instead of being handed to the
 * component's thread and back (0.3-0.5 ms more, bench/mpi_allreduce).
 * No sched_yield between polls: on a loaded machine each one gave the
 * core away for a time slice, and 2 MiB took 4-7 ms. */
#define DRIVE_NS 1000000u
#define OWN_NS 20000000u

static _Atomic(asc__extern_poll_fn) poll_hook;
static _Atomic(asc__extern_cancel_fn) cancel_hook;

void asc__extern_set_poll(asc__extern_poll_fn fn) {
  atomic_store_explicit(&poll_hook, fn, memory_order_release);
}

void asc__extern_set_cancel(asc__extern_cancel_fn fn) {
  atomic_store_explicit(&cancel_hook, fn, memory_order_release);
}

void asc__extern_cancel(ascStream_t stream, bool every) {
  asc__extern_cancel_fn fn =
      atomic_load_explicit(&cancel_hook, memory_order_acquire);
  if (fn != NULL)
    fn(stream, every);
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
  /* The clock is read only while nothing completes (t0 == 0: since the
   * last completion, not read yet): the common small op completes on the
   * first call. */
  t0 = 0;
  for (;;) {
    int r;
    if (done(a, b))
      return true;
    r = fn(may_block, handle);
    if (r == ASC__EXTERN_IDLE)
      return false;
    if (r == ASC__EXTERN_PROGRESS) {
      t0 = 0;
      continue;
    }
    now = uv_hrtime();
    if (t0 == 0)
      t0 = now;
    if (now >= deadline ||
        now - t0 >= (may_block && r == ASC__EXTERN_BUSY_STREAM ? OWN_NS
                                                                : DRIVE_NS))
      return done(a, b);
  }
}
