/*
 * The per-device stream runtime (asc__rt: asc__device.rt_private): its
 * creation, device-wide synchronisation and reset, the API gate and the
 * kernel-timeout watchdog.  stream.h explains the structure; the semantics
 * are in docs/streams.md.
 */
#include "base/env.h"
#include "runtime/memory.h"
#include "runtime/extern_op.h"
#include "runtime/launch_sync.h"
#include "runtime/stream.h"
#include "runtime/stream_internal.h"
#include "runtime/pool.h"
#include "runtime/trace.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* $ASC_KERNEL_TIMEOUT_MS: the kernel timeout of new streams; 0 (none)
 * when unset or invalid (with a warning). */
static asc__env_num kernel_timeout_env = {"ASC_KERNEL_TIMEOUT_MS", 0, 0,
                                          UINT32_MAX, 0, false};

static unsigned timeout_env(void) {
  return (unsigned)asc__env_u64(&kernel_timeout_env);
}

static ascError_t rt_create(asc__device *dev, asc__rt **out) {
  asc__rt *rt = asc__calloc(1, sizeof *rt);

  if (rt == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate runtime state");
  rt->dev = dev;
  rt->spin_ns = asc__spin_ns_env();
  rt->timeout_default_ms = timeout_env();
  if (uv_mutex_init(&rt->lock) != 0 || uv_mutex_init(&rt->wait_lock) != 0 ||
      uv_cond_init(&rt->wait_cond) != 0 || uv_mutex_init(&rt->host_lock) != 0 ||
      uv_mutex_init(&rt->wd_lock) != 0 || uv_cond_init(&rt->wd_cond) != 0)
    return asc__error(ascErrorInternal, "cannot create runtime locks");
  rt->null_stream = asc__stream_alloc(rt, ascStreamDefault,
                                      ASC_STREAM_PRIO_LEAST, true);
  if (rt->null_stream == NULL) {
    uv_cond_destroy(&rt->wd_cond);
    uv_mutex_destroy(&rt->wd_lock);
    uv_mutex_destroy(&rt->host_lock);
    uv_cond_destroy(&rt->wait_cond);
    uv_mutex_destroy(&rt->wait_lock);
    uv_mutex_destroy(&rt->lock);
    asc__free(rt);
    return asc__error(ascErrorOutOfMemory,
                      "cannot allocate the default stream");
  }
  if (rt->timeout_default_ms != 0)
    asc__watchdog_start(rt);
  *out = rt;
  return ascSuccess;
}

#define RT_CREATING ((void *)(uintptr_t)1)

/* The state is never freed: handles stay readable for the life of the
 * process (type-stable memory). */
ascError_t asc__rt_get(asc__device *dev, asc__rt **out) {
  void *p = __atomic_load_n(&dev->rt_private, __ATOMIC_ACQUIRE);

  while (p == NULL || p == RT_CREATING) {
    void *expect = NULL;
    if (p == NULL &&
        __atomic_compare_exchange_n(&dev->rt_private, &expect, RT_CREATING,
                                    false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      asc__rt *rt = NULL;
      ascError_t err = rt_create(dev, &rt);
      __atomic_store_n(&dev->rt_private, err == ascSuccess ? rt : NULL,
                       __ATOMIC_RELEASE);
      if (err != ascSuccess)
        return err;
      p = rt;
      break;
    }
    sched_yield();
    p = __atomic_load_n(&dev->rt_private, __ATOMIC_ACQUIRE);
  }
  *out = p;
  return ascSuccess;
}

ascError_t asc__rt_current(asc__rt **rt) {
  asc__device *dev;
  ascError_t err = asc__current_device(&dev);
  if (err != ascSuccess)
    return err;
  return asc__rt_get(dev, rt);
}


/* ---------------------------------------------------------------- device */

static ascError_t device_synchronize(asc__rt *rt) {
  ascError_t code = ascSuccess;
  uint64_t best = 0;
  char *msg = NULL;

  if (asc__in_callback())
    return asc__not_permitted("ascDeviceSynchronize");
  asc__wait_streams(rt, false);
  asc__pool_on_sync(rt->dev);
  /* Report the earliest pending error; every pending error counts as
   * reported. */
  uv_mutex_lock(&rt->lock);
  for (asc__stream *t = rt->streams; t != NULL; t = t->live_next) {
    asc__spin_lock(&t->lock);
    if (t->err != ascSuccess) {
      if (code == ascSuccess || t->err_id < best) {
        asc__free(msg);
        code = t->err;
        best = t->err_id;
        msg = t->err_msg;
      } else {
        asc__free(t->err_msg);
      }
      asc__stream_set_error(t, ascSuccess, 0, NULL);
    }
    asc__spin_unlock(&t->lock);
  }
  uv_mutex_unlock(&rt->lock);
  if (code == ascSuccess)
    return ascSuccess;
  asc__error_text(code, msg != NULL ? msg : asc__lost_message);
  asc__free(msg);
  return code;
}

ascError_t ascDeviceSynchronize(void) {
  asc__rt *rt;
  ascError_t err = asc__rt_current(&rt);

  if (err == ascSuccess)
    err = asc__api_enter(rt);
  if (err != ascSuccess)
    return err;
  err = device_synchronize(rt);
  asc__api_leave(rt);
  return err;
}

ascError_t asc__api_enter(asc__rt *rt) {
  if (atomic_fetch_add(&rt->api_gate, 2) & 1) {
    asc__api_leave(rt);
    return asc__error(ascErrorNotPermitted,
                      "the device is being reset by another thread");
  }
  return ascSuccess;
}

void asc__api_leave(asc__rt *rt) {
  /* The last thread out of a closed gate wakes the reset. */
  if (atomic_fetch_sub(&rt->api_gate, 2) == 3)
    asc__rt_notify(rt);
}

static bool api_drained(const void *a, uint64_t unused) {
  const asc__rt *rt = a;
  ASC_UNUSED(unused);
  return atomic_load(&((asc__rt *)(uintptr_t)rt)->api_gate) == 1;
}

/* Stops every stream's running kernel and skips its queued work
 * (ascDeviceReset); external ops are stopped by their component. */
static void stop_all(asc__rt *rt) {
  asc__stream *st;
  bool xop = false;
  uv_mutex_lock(&rt->lock);
  for (st = rt->streams; st != NULL; st = st->live_next)
    xop |= asc__stop_stream(st, ASC__STOP_RESET,
                            "work cancelled by ascDeviceReset");
  uv_mutex_unlock(&rt->lock);
  if (xop)
    asc__extern_cancel(NULL, true);
}

ascError_t ascDeviceReset(void) {
  asc__device *dev;
  asc__rt *rt;
  asc__stream *st, *next;
  ascError_t err;

  if (asc__in_callback())
    return asc__not_permitted("ascDeviceReset");
  err = asc__current_device(&dev);
  if (err != ascSuccess)
    return err;
  err = asc__rt_get(dev, &rt);
  if (err != ascSuccess)
    return err;
  /* Close the gate, so that no new module or launch call starts.  Then
   * stop running kernels at their next poll and skip queued work, so that
   * an endless kernel cannot hold the reset, and wait for the module and
   * launch calls other threads are inside (a launch compiling a
   * specialisation, an unload waiting for its launches): they end without
   * waiting for this reset.  What they queued meanwhile is stopped too. */
  if (atomic_fetch_or(&rt->api_gate, 1) & 1)
    return asc__error(ascErrorNotPermitted,
                      "ascDeviceReset: another thread is resetting the "
                      "device");
  stop_all(rt);
  asc__host_wait(rt, api_drained, rt, 0, true, NULL);
  stop_all(rt);
  /* Everything, including work other threads queue meanwhile: the pool
   * and the streams' records go away below. */
  asc__wait_streams_unbounded(rt, false);
  asc__trace_checkpoint();

  uv_mutex_lock(&rt->lock);
  for (st = rt->streams; st != NULL; st = next) {
    bool mine = false;
    next = st->live_next;
    asc__spin_lock(&st->lock);
    asc__free(st->err_msg);
    asc__stream_set_error(st, ascSuccess, 0, NULL);
    if (!st->is_default && !st->reaped) {
      atomic_store(&st->magic, ASC__MAGIC_DEAD);
      st->destroyed = true;
      st->reaped = true;
      mine = true;
    }
    asc__spin_unlock(&st->lock);
    if (!mine)
      continue;
    asc__stream_unlist(st);
  }
  while (rt->events != NULL)
    asc__event_free_locked(rt, rt->events);
  uv_mutex_unlock(&rt->lock);

  asc__launch_sync_forget();
  asc__modules_reset(dev);
  asc__host_stop(rt);
  asc__sched_destroy(dev);
  asc__pool_device_reset(dev);
  /* After every stream has drained: nothing can touch device memory. */
  asc__memory_reset(dev);
  atomic_fetch_and(&rt->api_gate, ~(uint64_t)1);
  return ascSuccess;
}

/* The watchdog: every WATCHDOG_TICK_NS it stops the launches that have
 * run past their stream's timeout.  It lives as long as the process (the
 * rt is never freed) and only sleeps when no stream has a timeout. */
#define WATCHDOG_TICK_NS 2000000u

/* Stops the launches past their stream's timeout; true if some stream
 * has a timeout. */
static bool watchdog_scan(asc__rt *rt) {
  uint64_t now = uv_hrtime();
  bool any = false;

  uv_mutex_lock(&rt->lock);
  for (asc__stream *t = rt->streams; t != NULL; t = t->live_next) {
    unsigned ms = atomic_load(&t->timeout_ms);
    asc__op *op;
    if (ms == 0)
      continue;
    any = true;
    asc__spin_lock(&t->lock);
    op = t->head;
    if (op != NULL && op->kind == OP_LAUNCH && op->dispatched &&
        op->launch.start_ns != 0 &&
        now - op->launch.start_ns >= (uint64_t)ms * 1000000u &&
        atomic_load(&op->launch.stop) == 0) {
      /* The launch reports the timeout; the queued work is skipped as
       * after an exception. */
      atomic_store(&op->launch.stop, ASC__STOP_TIMEOUT);
    }
    asc__spin_unlock(&t->lock);
  }
  uv_mutex_unlock(&rt->lock);
  return any;
}

static void watchdog_main(void *arg) {
  asc__rt *rt = arg;
  bool any = true;

  uv_mutex_lock(&rt->wd_lock);
  for (;;) {
    /* With no timeout anywhere, sleep until asc__watchdog_start wakes us. */
    if (any)
      (void)uv_cond_timedwait(&rt->wd_cond, &rt->wd_lock, WATCHDOG_TICK_NS);
    else
      uv_cond_wait(&rt->wd_cond, &rt->wd_lock);
    uv_mutex_unlock(&rt->wd_lock);
    any = watchdog_scan(rt);
    uv_mutex_lock(&rt->wd_lock);
  }
}

/* Starts the watchdog, or wakes it: some stream now has a timeout. */
void asc__watchdog_start(asc__rt *rt) {
  uv_mutex_lock(&rt->wd_lock);
  if (rt->wd_started)
    uv_cond_signal(&rt->wd_cond);
  else if (uv_thread_create(&rt->wd_thread, watchdog_main, rt) == 0)
    rt->wd_started = true;
  uv_mutex_unlock(&rt->wd_lock);
}

/* ------------------------------------------------------------------ fork */

/* fork() copies the calling thread only.  Before it, the locks that guard
 * the live lists and the streams' queues are taken (the rt lock, then
 * every stream's lock), so that the child inherits them consistent; the
 * child then makes the streams idle (asc__stream_fork_stop/drop) and
 * forgets the threads it has not got: the worker pool, the callback
 * thread and the watchdog start again on first use.  The events' locks
 * are not taken (a process with many events would hold more locks than
 * TSan's deadlock detector can count, at every compile: the C compiler
 * is started with fork): each guards a pointer swap and a reference
 * taken, so the child at worst keeps a fence one reference too many.
 * docs/streams.md, "fork()". */
void asc__rt_fork_prepare(asc__device *dev) {
  asc__rt *rt = __atomic_load_n(&dev->rt_private, __ATOMIC_ACQUIRE);

  if (rt == NULL || rt == RT_CREATING)
    return;
  uv_mutex_lock(&rt->lock);
  for (asc__stream *t = rt->streams; t != NULL; t = t->live_next)
    asc__spin_lock(&t->lock);
}

void asc__rt_fork_parent(asc__device *dev) {
  asc__rt *rt = __atomic_load_n(&dev->rt_private, __ATOMIC_ACQUIRE);

  if (rt == NULL || rt == RT_CREATING)
    return;
  for (asc__stream *t = rt->streams; t != NULL; t = t->live_next)
    asc__spin_unlock(&t->lock);
  uv_mutex_unlock(&rt->lock);
}

void asc__rt_fork_child(asc__device *dev) {
  asc__rt *rt = __atomic_load_n(&dev->rt_private, __ATOMIC_ACQUIRE);
  asc__stream *t, *next;
  bool timeouts = false;

  if (rt == RT_CREATING) {
    /* The creating thread is not in the child: create it again. */
    __atomic_store_n(&dev->rt_private, NULL, __ATOMIC_RELEASE);
    return;
  }
  if (rt == NULL)
    return;
  /* The locks were taken by this thread before the fork, or may be held
   * by threads the child has not got: made new, never unlocked (the
   * owner's thread id changed). */
  (void)uv_mutex_init(&rt->lock);
  (void)uv_mutex_init(&rt->wait_lock);
  (void)uv_cond_init(&rt->wait_cond);
  (void)uv_mutex_init(&rt->host_lock);
  (void)uv_mutex_init(&rt->wd_lock);
  (void)uv_cond_init(&rt->wd_cond);
  for (asc__event *e = rt->events; e != NULL; e = e->live_next)
    (void)uv_mutex_init(&e->lock);
  atomic_store(&rt->waiters, 0);
  /* Threads inside gated calls (and a reset) are the parent's. */
  atomic_store(&rt->api_gate, 0);
  rt->host_started = false;
  rt->host_head = rt->host_tail = NULL;
  rt->host_stop = false;
  rt->wd_started = false;
  for (t = rt->streams; t != NULL; t = t->live_next)
    asc__stream_fork_stop(t);
  for (t = rt->streams; t != NULL; t = next) {
    next = t->live_next;
    timeouts |= atomic_load(&t->timeout_ms) != 0;
    asc__stream_fork_drop(t);
  }
  atomic_store(&rt->wd_after_fork, timeouts);
}
