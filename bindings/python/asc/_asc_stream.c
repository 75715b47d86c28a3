/*
 * Streams, events, and the records that keep the arguments of queued work
 * alive.
 *
 * A Python object passed to an asynchronous launch must outlive the work
 * that reads it.  The launch moves its open buffer exports and references
 * into an ascpy_Pending record on the stream; the record is dropped only
 * when the stream is known to be drained (Stream.synchronize, a query that
 * reports completion, asc.synchronize).  A stream that is destroyed or
 * garbage-collected synchronises first for the same reason.
 */
#include "_asc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "structmember.h"

/* Drained streams are checked with a query once this many records pile up,
 * so a loop of asynchronous launches without synchronisation stays
 * bounded when the work keeps up. */
#define PENDING_QUERY_AT 256

/* Events are defined below; streams wait on them. */
typedef struct {
  PyObject_HEAD
  ascEvent_t handle;
  unsigned int flags;
  int destroyed;
  int recorded;
} EventObject;

/* ------------------------------------------------------------- pending */

static void pending_dealloc(ascpy_Pending *p) {
  Py_ssize_t i;
  for (i = 0; i < p->nbufs; i++)
    PyBuffer_Release(&p->bufs[i]);
  PyMem_Free(p->bufs);
  Py_XDECREF(p->refs);
  Py_TYPE(p)->tp_free((PyObject *)p);
}

PyTypeObject ascpy_PendingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "asc._asc._Pending",
    .tp_basicsize = sizeof(ascpy_Pending),
    .tp_dealloc = (destructor)pending_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Arguments of queued work, kept alive until it finishes.",
};

/* -------------------------------------------------------------- streams */

static ascpy_Stream *default_stream;
static ascpy_Stream live_head = {.prev = &live_head, .next = &live_head};

ascpy_Stream *ascpy_default_stream(void) { return default_stream; }

int ascpy_stream_check(ascpy_Stream *s) {
  if (s->destroyed) {
    ascpy_error_msg(ascErrorInvalidHandle, "the stream was destroyed");
    return -1;
  }
  return 0;
}

int ascpy_stream_holds_nothing(ascpy_Stream *s) {
  return s->pending == NULL || PyList_GET_SIZE(s->pending) == 0;
}

void ascpy_stream_drained(ascpy_Stream *s) {
  if (s->pending != NULL && PyList_GET_SIZE(s->pending) > 0)
    (void)PyList_SetSlice(s->pending, 0, PyList_GET_SIZE(s->pending), NULL);
}

void ascpy_all_streams_drained(void) {
  ascpy_Stream *s;
  if (default_stream)
    ascpy_stream_drained(default_stream);
  for (s = live_head.next; s != &live_head; s = s->next)
    ascpy_stream_drained(s);
}

int ascpy_stream_reap(ascpy_Stream *s) {
  ascError_t e;
  if (PyList_GET_SIZE(s->pending) < PENDING_QUERY_AT)
    return 0;
  e = ascStreamQuery(s->handle);
  if (e == ascErrorNotReady) {
    (void)ascGetLastError();
    return 0;
  }
  /* Finished, or failed: a failure is reported now, by this call. */
  ascpy_stream_drained(s);
  if (e != ascSuccess) {
    ascpy_error(e);
    return -1;
  }
  return 0;
}

int ascpy_stream_add_pending(ascpy_Stream *s, PyObject *rec) {
  return PyList_Append(s->pending, rec);
}

/* Waits for s with the GIL released; drops its records either way. */
static ascError_t stream_sync(ascpy_Stream *s) {
  ascError_t e;
  ascStream_t h = s->handle;
  Py_BEGIN_ALLOW_THREADS
  e = ascStreamSynchronize(h);
  Py_END_ALLOW_THREADS
  ascpy_stream_drained(s);
  return e;
}

/* Ctrl-C during a wait.  The waiting thread lends itself to the pool
 * (it may run the kernel it waits for, which keeps launches fast), so it
 * cannot look at signals until the kernel ends.  Instead, while the main
 * thread waits, a SIGINT handler chained in front of Python's writes a
 * byte to a pipe (async-signal-safe); a watcher thread reading the pipe
 * cancels the stream being waited for; the kernel stops at its next poll,
 * the wait returns, and the main thread then runs Python's handler
 * (KeyboardInterrupt).  Other threads wait plainly: Python runs signal
 * handlers on the main thread only. */
static int sig_pipe[2] = {-1, -1};
static int watcher_started;              /* under the GIL */
static struct sigaction sig_prev;        /* Python's handler, chained */
static _Atomic(ascStream_t) sig_stream;  /* the stream being waited for */
static atomic_int sig_waiting;
static atomic_int sig_gen;               /* which wait: one per arming */

static void on_sigint(int sig, siginfo_t *info, void *uctx) {
  int saved = errno;
  char c = 1;
  if (atomic_load(&sig_waiting))
    (void)!write(sig_pipe[1], &c, 1);
  errno = saved;
  if (sig_prev.sa_flags & SA_SIGINFO) {
    if (sig_prev.sa_sigaction != NULL)
      sig_prev.sa_sigaction(sig, info, uctx);
  } else if (sig_prev.sa_handler != SIG_DFL &&
             sig_prev.sa_handler != SIG_IGN) {
    sig_prev.sa_handler(sig);
  }
}

static void *watcher_main(void *arg) {
  char c;
  (void)arg;
  for (;;) {
    ssize_t n = read(sig_pipe[0], &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return NULL;
    if (atomic_load(&sig_waiting)) {
      /* The launch may not be on the stream yet (its kernel compiling,
       * or about to run on the waiting thread itself): cancel again
       * every 2 ms until this wait ends, so that it stops at its first
       * poll instead of running to its end (a cancel of an idle stream
       * does nothing). */
      int gen = atomic_load(&sig_gen);
      while (atomic_load(&sig_waiting) && atomic_load(&sig_gen) == gen) {
        (void)ascStreamCancel(atomic_load(&sig_stream));
        (void)usleep(2000);
      }
    }
  }
}

/* In a forked child: no watcher thread, and a pipe of its own (the
 * parent's watcher must not read the child's signals). */
static void watcher_after_fork(void) {
  watcher_started = 0;
  if (sig_pipe[0] >= 0) {
    close(sig_pipe[0]);
    close(sig_pipe[1]);
    sig_pipe[0] = sig_pipe[1] = -1;
  }
}

/* GIL held.  0 when the watcher runs. */
static int watcher_start(void) {
  pthread_t t;
  pthread_attr_t attr;
  int rc;
  if (watcher_started)
    return 0;
  static int atfork_done;
  if (!atfork_done) {
    (void)pthread_atfork(NULL, NULL, watcher_after_fork);
    atfork_done = 1;
  }
  if (sig_pipe[0] < 0) {
    if (pipe(sig_pipe) != 0)
      return -1;
    (void)fcntl(sig_pipe[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(sig_pipe[1], F_SETFD, FD_CLOEXEC);
    (void)fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
  }
  if (pthread_attr_init(&attr) != 0)
    return -1;
  (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  rc = pthread_create(&t, &attr, watcher_main, NULL);
  pthread_attr_destroy(&attr);
  if (rc != 0)
    return -1;
  watcher_started = 1;
  return 0;
}

/* How long sigint_arm trusts what it last found: a sigaction call is a
 * system call (about 0.8 us on the development VM, as much as the rest
 * of a small synchronous launch), so waits in a tight loop share one. */
#define SIGINT_RECHECK_NS 10000000

/* GIL held, main thread: makes on_sigint the process's SIGINT handler,
 * chained in front of the current one, unless it is already.  It stays
 * installed after the wait; Python replacing it (signal.signal) is
 * noticed at the first wait SIGINT_RECHECK_NS or more after the last
 * look (until then a Ctrl-C during a wait is handled when the kernel
 * returns, instead of stopping it).  0 when installed. */
static int sigint_arm(void) {
  static int64_t checked_ns = -1;
  static int last = -1;
  struct sigaction cur, mine;
  struct timespec now;
  int64_t ns;

  (void)clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
  if (checked_ns >= 0 && ns - checked_ns < SIGINT_RECHECK_NS)
    return last;
  checked_ns = ns;
  last = -1;
  if (sigaction(SIGINT, NULL, &cur) != 0)
    return -1;
  if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigint)
    return last = 0;
  if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler == SIG_DFL ||
      cur.sa_handler == SIG_IGN)
    return -1;   /* not Python's handler: leave it alone */
  memset(&mine, 0, sizeof mine);
  mine.sa_sigaction = on_sigint;
  mine.sa_flags = SA_SIGINFO | SA_ONSTACK | (cur.sa_flags & SA_RESTART);
  sigemptyset(&mine.sa_mask);
  sig_prev = cur;
  last = sigaction(SIGINT, &mine, NULL) == 0 ? 0 : -1;
  return last;
}

/* What a wait runs with the GIL released: a stream's synchronisation, or
 * a launch and the synchronisation (ascpy_launch_wait). */
typedef struct {
  ascKernel_t kernel;   /* NULL: the synchronisation alone */
  uint32_t blocks;
  void **args;
  ascStream_t h;
} wait_call;

static int wait_armed(const wait_call *c, ascError_t *e) {
  int armed = 0;
  ascError_t r;

  if (_PyOS_IsMainThread() && watcher_start() == 0 && sigint_arm() == 0) {
    /* Only this thread (the main one) writes these: plain stores, which
     * the release of sig_waiting publishes to the watcher, and no locked
     * instruction on every launch. */
    atomic_store_explicit(&sig_stream, c->h, memory_order_relaxed);
    atomic_store_explicit(
        &sig_gen, atomic_load_explicit(&sig_gen, memory_order_relaxed) + 1,
        memory_order_relaxed);
    atomic_store_explicit(&sig_waiting, 1, memory_order_release);
    armed = 1;
  }
  Py_BEGIN_ALLOW_THREADS
  r = c->kernel != NULL
          ? ascLaunchKernelAndSynchronize(c->kernel, c->blocks, c->args, c->h)
          : ascStreamSynchronize(c->h);
  Py_END_ALLOW_THREADS
  if (armed)
    atomic_store_explicit(&sig_waiting, 0, memory_order_release);
  if (PyErr_CheckSignals() < 0) {
    /* The watcher cancelled the stream; the cancellation is reported
     * as the handler's exception. */
    if (r != ascSuccess)
      (void)ascGetLastError();
    return -1;
  }
  *e = r;
  return 0;
}

int ascpy_wait(ascStream_t h, ascError_t *e) {
  wait_call c = {NULL, 0, NULL, h};
  return wait_armed(&c, e);
}

int ascpy_launch_wait(ascKernel_t kernel, uint32_t blocks, void **args,
                      ascStream_t h, ascError_t *e) {
  wait_call c = {kernel, blocks, args, h};
  return wait_armed(&c, e);
}

static ascError_t stream_destroy(ascpy_Stream *s) {
  ascError_t e, e2;
  if (s->is_default || s->destroyed)
    return ascSuccess;
  e = stream_sync(s);
  if (e != ascSuccess) {
    /* Reported by the caller; the stream is still destroyed. */
    PyObject *t, *v, *tb;
    ascpy_error(e);
    PyErr_Fetch(&t, &v, &tb);
    e2 = ascStreamDestroy(s->handle);
    (void)e2;
    PyErr_Restore(t, v, tb);
  } else {
    e = ascStreamDestroy(s->handle);
    if (e != ascSuccess)
      ascpy_error(e);
  }
  s->destroyed = 1;
  s->handle = NULL;
  s->prev->next = s->next;
  s->next->prev = s->prev;
  s->prev = s->next = s;
  return e;
}

static PyObject *stream_new(PyTypeObject *type, PyObject *args,
                            PyObject *kw) {
  static char *kwlist[] = {"priority", "non_blocking", NULL};
  int priority = 0, non_blocking = 0;
  ascpy_Stream *s;
  ascError_t e;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|ip:Stream", kwlist, &priority,
                                   &non_blocking))
    return NULL;
  s = (ascpy_Stream *)type->tp_alloc(type, 0);
  if (s == NULL)
    return NULL;
  s->prev = s->next = s;
  s->pending = PyList_New(0);
  if (s->pending == NULL) {
    Py_DECREF(s);
    return NULL;
  }
  s->flags = non_blocking ? ascStreamNonBlocking : ascStreamDefault;
  s->priority = priority;
  e = ascStreamCreateWithPriority(&s->handle, s->flags, priority);
  if (e != ascSuccess) {
    s->destroyed = 1;
    Py_DECREF(s);
    return ascpy_error(e);
  }
  s->next = live_head.next;
  s->prev = &live_head;
  live_head.next->prev = s;
  live_head.next = s;
  return (PyObject *)s;
}

static void stream_dealloc(ascpy_Stream *s) {
  if (s->weakrefs)
    PyObject_ClearWeakRefs((PyObject *)s);
  if (!s->is_default && !s->destroyed && s->pending != NULL) {
    if (stream_destroy(s) != ascSuccess)
      PyErr_WriteUnraisable((PyObject *)s);
  }
  Py_CLEAR(s->pending);
  Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *stream_synchronize(ascpy_Stream *s, PyObject *unused) {
  ascError_t e;
  int r;
  (void)unused;
  if (ascpy_stream_check(s) < 0)
    return NULL;
  r = ascpy_wait(s->handle, &e);
  ascpy_stream_drained(s);
  if (r < 0)
    return NULL;
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *stream_cancel(ascpy_Stream *s, PyObject *unused) {
  ascError_t e;
  (void)unused;
  if (ascpy_stream_check(s) < 0)
    return NULL;
  e = ascStreamCancel(s->handle);
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *stream_query(ascpy_Stream *s, PyObject *unused) {
  ascError_t e;
  (void)unused;
  if (ascpy_stream_check(s) < 0)
    return NULL;
  e = ascStreamQuery(s->handle);
  if (e == ascSuccess) {
    ascpy_stream_drained(s);
    Py_RETURN_TRUE;
  }
  if (e == ascErrorNotReady) {
    (void)ascGetLastError();
    Py_RETURN_FALSE;
  }
  ascpy_stream_drained(s); /* a reported kernel error ends the work */
  return ascpy_error(e);
}

static PyObject *stream_wait_event(ascpy_Stream *s, PyObject *arg) {
  ascError_t e;
  PyObject *ev = arg;
  if (ascpy_stream_check(s) < 0)
    return NULL;
  if (!PyObject_TypeCheck(ev, &ascpy_EventType)) {
    PyErr_Format(PyExc_TypeError, "wait_event() expects an asc.Event, got %s",
                 Py_TYPE(ev)->tp_name);
    return NULL;
  }
  if (((EventObject *)ev)->destroyed)
    return ascpy_error_msg(ascErrorInvalidHandle, "the event was destroyed");
  e = ascStreamWaitEvent(s->handle, ((EventObject *)ev)->handle, 0);
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *stream_destroy_m(ascpy_Stream *s, PyObject *unused) {
  (void)unused;
  if (s->is_default) {
    PyErr_SetString(PyExc_ValueError, "the default stream cannot be destroyed");
    return NULL;
  }
  if (ascpy_stream_check(s) < 0)
    return NULL;
  if (stream_destroy(s) != ascSuccess)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *stream_repr(ascpy_Stream *s) {
  if (s->is_default)
    return PyUnicode_FromString("<asc.Stream default>");
  if (s->destroyed)
    return PyUnicode_FromFormat("<asc.Stream destroyed>");
  return PyUnicode_FromFormat("<asc.Stream %p priority=%d>", (void *)s->handle,
                              s->priority);
}

static PyObject *stream_get_handle(ascpy_Stream *s, void *c) {
  (void)c;
  return PyLong_FromVoidPtr(s->handle);
}

static PyObject *stream_get_pending(ascpy_Stream *s, void *c) {
  (void)c;
  return PyLong_FromSsize_t(s->pending ? PyList_GET_SIZE(s->pending) : 0);
}

static PyMethodDef stream_methods[] = {
    {"synchronize", (PyCFunction)stream_synchronize, METH_NOARGS,
     "Wait until all work queued on the stream finished; raises a kernel's "
     "exception."},
    {"query", (PyCFunction)stream_query, METH_NOARGS,
     "True when all queued work finished, False while some runs."},
    {"cancel", (PyCFunction)stream_cancel, METH_NOARGS,
     "Stop the running kernel at its next poll and skip the queued work; "
     "the next synchronize raises asc.CancelledError.  Does not wait."},
    {"wait_event", (PyCFunction)stream_wait_event, METH_O,
     "Make later work on this stream wait for the event."},
    {"destroy", (PyCFunction)stream_destroy_m, METH_NOARGS,
     "Synchronize, then destroy the stream; later use raises asc.Error."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef stream_members[] = {
    {"priority", T_INT, offsetof(ascpy_Stream, priority), READONLY,
     "Priority given at creation (lower numbers run first)."},
    {"is_default", T_BOOL, offsetof(ascpy_Stream, is_default), READONLY,
     "True for the default stream."},
    {"destroyed", T_BOOL, offsetof(ascpy_Stream, destroyed), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef stream_getset[] = {
    {"handle", (getter)stream_get_handle, NULL,
     "The ascStream_t as an integer (0: default).", NULL},
    {"_pending", (getter)stream_get_pending, NULL,
     "Number of queued launches whose arguments are kept alive.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject ascpy_StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "asc.Stream",
    .tp_basicsize = sizeof(ascpy_Stream),
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_repr = (reprfunc)stream_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Stream(priority=0, non_blocking=False)\n\n"
              "An in-order queue of work.  Different streams run "
              "concurrently; lower priority numbers are served first.",
    .tp_weaklistoffset = offsetof(ascpy_Stream, weakrefs),
    .tp_methods = stream_methods,
    .tp_members = stream_members,
    .tp_getset = stream_getset,
    .tp_new = stream_new,
};

/* --------------------------------------------------------------- events */

static int event_check(EventObject *ev) {
  if (ev->destroyed) {
    ascpy_error_msg(ascErrorInvalidHandle, "the event was destroyed");
    return -1;
  }
  return 0;
}

static PyObject *event_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"timing", "blocking", NULL};
  int timing = 1, blocking = 0;
  EventObject *ev;
  ascError_t e;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|pp:Event", kwlist, &timing,
                                   &blocking))
    return NULL;
  ev = (EventObject *)type->tp_alloc(type, 0);
  if (ev == NULL)
    return NULL;
  ev->flags = (timing ? 0u : (unsigned)ascEventDisableTiming) |
              (blocking ? (unsigned)ascEventBlockingSync : 0u);
  e = ascEventCreateWithFlags(&ev->handle, ev->flags);
  if (e != ascSuccess) {
    ev->destroyed = 1;
    Py_DECREF(ev);
    return ascpy_error(e);
  }
  return (PyObject *)ev;
}

static void event_dealloc(EventObject *ev) {
  if (!ev->destroyed && ascEventDestroy(ev->handle) != ascSuccess)
    (void)ascGetLastError();
  Py_TYPE(ev)->tp_free((PyObject *)ev);
}

static PyObject *event_record(EventObject *ev, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"stream", NULL};
  PyObject *so = Py_None;
  ascpy_Stream *s;
  ascError_t e;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:record", kwlist, &so))
    return NULL;
  if (event_check(ev) < 0)
    return NULL;
  if (so == Py_None) {
    s = ascpy_default_stream();
  } else if (PyObject_TypeCheck(so, &ascpy_StreamType)) {
    s = (ascpy_Stream *)so;
  } else {
    PyErr_Format(PyExc_TypeError,
                 "record() expects an asc.Stream or None, got %s",
                 Py_TYPE(so)->tp_name);
    return NULL;
  }
  if (ascpy_stream_check(s) < 0)
    return NULL;
  e = ascEventRecord(ev->handle, s->handle);
  if (e != ascSuccess)
    return ascpy_error(e);
  ev->recorded = 1;
  Py_INCREF(ev);
  return (PyObject *)ev;
}

static PyObject *event_synchronize(EventObject *ev, PyObject *unused) {
  ascError_t e;
  ascEvent_t h = ev->handle;
  (void)unused;
  if (event_check(ev) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  e = ascEventSynchronize(h);
  Py_END_ALLOW_THREADS
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *event_query(EventObject *ev, PyObject *unused) {
  ascError_t e;
  (void)unused;
  if (event_check(ev) < 0)
    return NULL;
  e = ascEventQuery(ev->handle);
  if (e == ascSuccess)
    Py_RETURN_TRUE;
  if (e == ascErrorNotReady) {
    (void)ascGetLastError();
    Py_RETURN_FALSE;
  }
  return ascpy_error(e);
}

static PyObject *event_elapsed_time(EventObject *ev, PyObject *arg) {
  EventObject *end;
  float ms = 0.0f;
  ascError_t e;
  if (event_check(ev) < 0)
    return NULL;
  if (!PyObject_TypeCheck(arg, &ascpy_EventType)) {
    PyErr_Format(PyExc_TypeError,
                 "elapsed_time() expects the end asc.Event, got %s",
                 Py_TYPE(arg)->tp_name);
    return NULL;
  }
  end = (EventObject *)arg;
  if (event_check(end) < 0)
    return NULL;
  e = ascEventElapsedTime(&ms, ev->handle, end->handle);
  if (e != ascSuccess)
    return ascpy_error(e);
  return PyFloat_FromDouble((double)ms);
}

static PyObject *event_destroy_m(EventObject *ev, PyObject *unused) {
  ascError_t e;
  (void)unused;
  if (event_check(ev) < 0)
    return NULL;
  e = ascEventDestroy(ev->handle);
  ev->destroyed = 1;
  ev->handle = NULL;
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *event_repr(EventObject *ev) {
  if (ev->destroyed)
    return PyUnicode_FromString("<asc.Event destroyed>");
  return PyUnicode_FromFormat("<asc.Event %p%s>", (void *)ev->handle,
                              ev->flags & ascEventDisableTiming ? " no-timing"
                                                                : "");
}

static PyObject *event_get_handle(EventObject *ev, void *c) {
  (void)c;
  return PyLong_FromVoidPtr(ev->handle);
}

static PyMethodDef event_methods[] = {
    {"record", (PyCFunction)(void (*)(void))event_record,
     METH_VARARGS | METH_KEYWORDS,
     "record(stream=None) -> self: capture the work queued so far on the "
     "stream (default stream when None)."},
    {"synchronize", (PyCFunction)event_synchronize, METH_NOARGS,
     "Wait until the captured work finished."},
    {"query", (PyCFunction)event_query, METH_NOARGS,
     "True when the captured work finished."},
    {"elapsed_time", (PyCFunction)event_elapsed_time, METH_O,
     "start.elapsed_time(end) -> milliseconds between the two events."},
    {"destroy", (PyCFunction)event_destroy_m, METH_NOARGS,
     "Destroy the event; later use raises asc.Error."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef event_members[] = {
    {"destroyed", T_BOOL, offsetof(EventObject, destroyed), READONLY, NULL},
    {"recorded", T_BOOL, offsetof(EventObject, recorded), READONLY,
     "True once record() was called."},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef event_getset[] = {
    {"handle", (getter)event_get_handle, NULL,
     "The ascEvent_t as an integer.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject ascpy_EventType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "asc.Event",
    .tp_basicsize = sizeof(EventObject),
    .tp_dealloc = (destructor)event_dealloc,
    .tp_repr = (reprfunc)event_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Event(timing=True, blocking=False)\n\n"
              "A marker in a stream: order work across streams and time it.",
    .tp_methods = event_methods,
    .tp_members = event_members,
    .tp_getset = event_getset,
    .tp_new = event_new,
};

int ascpy_stream_init_types(PyObject *m) {
  if (PyType_Ready(&ascpy_PendingType) < 0 ||
      PyType_Ready(&ascpy_StreamType) < 0 ||
      PyType_Ready(&ascpy_EventType) < 0)
    return -1;
  default_stream = PyObject_New(ascpy_Stream, &ascpy_StreamType);
  if (default_stream == NULL)
    return -1;
  default_stream->handle = NULL;
  default_stream->priority = 0;
  default_stream->flags = 0;
  default_stream->is_default = 1;
  default_stream->destroyed = 0;
  default_stream->prev = default_stream->next = default_stream;
  default_stream->weakrefs = NULL;
  default_stream->pending = PyList_New(0);
  if (default_stream->pending == NULL)
    return -1;
  if (PyModule_AddObjectRef(m, "Stream", (PyObject *)&ascpy_StreamType) < 0 ||
      PyModule_AddObjectRef(m, "Event", (PyObject *)&ascpy_EventType) < 0 ||
      PyModule_AddObjectRef(m, "default_stream", (PyObject *)default_stream) <
          0)
    return -1;
  return 0;
}
