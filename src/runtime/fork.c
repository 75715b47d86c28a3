/*
 * fork(): what a child process keeps of the runtime.
 *
 * fork() copies the calling thread only: the worker pool, the callback
 * thread, the watchdog and whatever they were running stay in the parent.
 * Before the fork, the handler below takes the locks that guard the
 * runtime's shared structures, so that the child inherits them
 * consistent; in the child, the work the streams had queued or running
 * is stopped (each such stream reports ascErrorCancelled once), the
 * streams are idle, and the threads start again on first use.  Handles,
 * modules, pools and memory stay valid.  docs/streams.md, "fork()".
 *
 * Lock order (as everywhere in the runtime): a device's pools lock, then
 * its rt lock, its streams' locks, then its memory lock (a leaf).  The
 * C compiler is started with fork() (uv_spawn), so these handlers run at
 * every compile too: they take few locks and do nothing slow.
 */
#include <pthread.h>

#include "runtime/memory.h"
#include "runtime/pool.h"
#include "runtime/runtime.h"
#include "runtime/scheduler.h"
#include "runtime/stream.h"

static void fork_prepare(void) {
  for (int i = 0; i < asc__device_count(); i++) {
    asc__device *d = asc__device_at(i);
    asc__pool_fork_prepare(d);
    asc__rt_fork_prepare(d);
    asc__memory_fork_prepare(d);
  }
}

static void fork_parent(void) {
  for (int i = asc__device_count() - 1; i >= 0; i--) {
    asc__device *d = asc__device_at(i);
    asc__memory_fork_parent(d);
    asc__rt_fork_parent(d);
    asc__pool_fork_parent(d);
  }
}

static void fork_child(void) {
  for (int i = 0; i < asc__device_count(); i++) {
    asc__device *d = asc__device_at(i);
    asc__memory_fork_child(d);
    asc__pool_fork_child(d);
    asc__rt_fork_child(d);
    asc__sched_forget(d);
  }
}

void asc__fork_init(void) {
  (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}
