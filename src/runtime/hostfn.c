/*
 * The host-callback thread: a libuv loop, started by the first
 * ascLaunchHostFunc of a device, that runs host functions in stream order
 * (stream.h, docs/streams.md).
 */
#include "runtime/memory.h"
#include "runtime/extern_op.h"
#include "runtime/stream.h"
#include "runtime/stream_internal.h"
#include "runtime/pool.h"
#include "runtime/trace.h"

/* ------------------------------------------------------- host callbacks */

void asc__host_post(asc__rt *rt, asc__op *op) {
  uv_mutex_lock(&rt->host_lock);
  op->wnext = NULL;
  if (rt->host_tail != NULL)
    rt->host_tail->wnext = op;
  else
    rt->host_head = op;
  rt->host_tail = op;
  uv_mutex_unlock(&rt->host_lock);
  uv_async_send(&rt->host_async);
}

static void host_async_cb(uv_async_t *a) {
  asc__rt *rt = a->data;

  for (;;) {
    asc__op *op;
    bool stop;
    asc__tls *tls;
    uint64_t t0;

    uv_mutex_lock(&rt->host_lock);
    op = rt->host_head;
    if (op != NULL) {
      rt->host_head = op->wnext;
      if (rt->host_head == NULL)
        rt->host_tail = NULL;
    }
    stop = rt->host_stop;
    uv_mutex_unlock(&rt->host_lock);
    if (op == NULL) {
      if (stop)
        uv_close((uv_handle_t *)a, NULL);
      return;
    }
    tls = asc__tls_get();
    tls->in_host_callback = 1;
    t0 = asc__trace_clock();
    op->fn(op->ud);
    ASC_TRACE(asc__trace_hostfn(op, t0));
    tls->in_host_callback = 0;
    asc__stream_finish(op->stream, op, ascSuccess, NULL);
  }
}

static void host_main(void *arg) {
  asc__rt *rt = arg;
  asc__trace_thread_name("callback thread", -1);
  uv_run(&rt->host_loop, UV_RUN_DEFAULT);
}

atomic_bool asc__host_threads;

ascError_t asc__host_start(asc__rt *rt) {
  ascError_t err = ascSuccess;
  int rc;

  uv_mutex_lock(&rt->lock);
  if (rt->host_started)
    goto out;
  rc = uv_loop_init(&rt->host_loop);
  if (rc != 0) {
    err = asc__error(ascErrorInternal, "cannot create the callback loop: %s",
                     uv_strerror(rc));
    goto out;
  }
  rc = uv_async_init(&rt->host_loop, &rt->host_async, host_async_cb);
  if (rc != 0) {
    uv_loop_close(&rt->host_loop);
    err = asc__error(ascErrorInternal, "cannot create the callback loop: %s",
                     uv_strerror(rc));
    goto out;
  }
  rt->host_async.data = rt;
  rt->host_stop = false;
  /* Before the thread exists: it reads the flag (asc__in_callback). */
  atomic_store(&asc__host_threads, true);
  rc = uv_thread_create(&rt->host_thread, host_main, rt);
  if (rc != 0) {
    uv_close((uv_handle_t *)&rt->host_async, NULL);
    uv_run(&rt->host_loop, UV_RUN_DEFAULT);
    uv_loop_close(&rt->host_loop);
    err = asc__error(ascErrorInternal, "cannot start the callback thread: %s",
                     uv_strerror(rc));
    goto out;
  }
  rt->host_started = true;
out:
  uv_mutex_unlock(&rt->lock);
  return err;
}

/* Every host function has run (the caller waited for all streams). */
void asc__host_stop(asc__rt *rt) {
  bool started;

  uv_mutex_lock(&rt->lock);
  started = rt->host_started;
  rt->host_started = false;
  uv_mutex_unlock(&rt->lock);
  if (!started)
    return;
  uv_mutex_lock(&rt->host_lock);
  rt->host_stop = true;
  uv_mutex_unlock(&rt->host_lock);
  uv_async_send(&rt->host_async);
  uv_thread_join(&rt->host_thread);
  uv_loop_close(&rt->host_loop);
}
