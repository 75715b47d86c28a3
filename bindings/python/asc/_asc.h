/*
 * Internal interface of the asc._asc extension: the pieces shared by its
 * source files (errors, streams, arrays, kernels).  Everything here is
 * private to the extension; the Python package wraps it thinly.
 */
#ifndef ASCPY_ASC_H
#define ASCPY_ASC_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "asc/asc.h"

/* ---------------------------------------------------------------- errors */

/* Sets the Python exception for a libasc call that returned code, using
 * this thread's ascGetLastErrorMessage() (read before any other libasc call
 * can replace it).  The instance comes from the factory registered by the
 * Python layer (asc._errors.from_code), so compile errors and kernel
 * exceptions get their Python classes; without one, _asc.Error.  Returns
 * NULL so callers can `return ascpy_error(e);`. */
PyObject *ascpy_error(ascError_t code);
/* As ascpy_error with a message of our own (bindings-side failures such as
 * a destroyed handle). */
PyObject *ascpy_error_msg(ascError_t code, const char *message);

extern PyObject *ascpy_Error; /* _asc.Error, base of every asc error */

/* ------------------------------------------------------------ streams */

/* Work queued asynchronously keeps its arguments alive (and their buffer
 * exports open) in a Pending record on the stream it was queued on, until a
 * call proves the stream drained (synchronize, a successful query, device
 * synchronize). */
typedef struct ascpy_Pending {
  PyObject_HEAD
  Py_ssize_t nbufs;
  Py_buffer *bufs; /* PyMem-owned, each released on dealloc */
  PyObject *refs;  /* tuple: kernel, arguments, DLPack capsules */
} ascpy_Pending;

typedef struct ascpy_Stream {
  PyObject_HEAD
  ascStream_t handle;        /* NULL for the default stream */
  int priority;
  unsigned int flags;
  int is_default;
  int destroyed;
  PyObject *pending;         /* list of ascpy_Pending */
  struct ascpy_Stream *prev; /* live non-default streams, for device sync */
  struct ascpy_Stream *next;
  PyObject *weakrefs;
} ascpy_Stream;

extern PyTypeObject ascpy_StreamType;
extern PyTypeObject ascpy_EventType;
extern PyTypeObject ascpy_PendingType;

/* The default stream singleton (borrowed). */
ascpy_Stream *ascpy_default_stream(void);
/* Raises asc.Error and returns -1 when s was destroyed. */
int ascpy_stream_check(ascpy_Stream *s);
/* When many records piled up on s, asks whether it drained and drops them
 * if so.  A kernel error found this way is raised (returns -1): the caller
 * is about to queue more work, and the error must not be lost. */
int ascpy_stream_reap(ascpy_Stream *s);
/* Records work that keeps rec alive until s is known to be drained. */
int ascpy_stream_add_pending(ascpy_Stream *s, PyObject *rec);
/* Waits for the work queued on h with the GIL released (as
 * ascStreamSynchronize).  On the main thread a SIGINT during the wait
 * cancels h's work (see _asc_stream.c); when a signal handler then
 * raises (KeyboardInterrupt), the cancellation is dropped and -1
 * returned with the handler's exception set.  Otherwise 0, and *e is
 * what ascStreamSynchronize returned. */
int ascpy_wait(ascStream_t h, ascError_t *e);
/* ascpy_wait's Ctrl-C handling around a call of
 * ascLaunchKernelAndSynchronize(kernel, blocks, args, h) instead of the
 * wait (one release of the GIL for both).  *e is what the call returned:
 * a failed launch's error or the wait's; s's pending records are not
 * dropped (the caller does, when it knows the stream drained). */
int ascpy_launch_wait(ascKernel_t kernel, uint32_t blocks, void **args,
                      ascStream_t h, ascError_t *e);
/* True when nothing queued on s holds Python objects (no pending record). */
int ascpy_stream_holds_nothing(ascpy_Stream *s);
/* The stream drained: drop its pending records. */
void ascpy_stream_drained(ascpy_Stream *s);
/* Every stream drained (after ascDeviceSynchronize). */
void ascpy_all_streams_drained(void);
int ascpy_stream_init_types(PyObject *m);

/* ------------------------------------------------------------- arrays */

typedef struct ascpy_Array {
  PyObject_HEAD
  void *data;           /* ascMalloc'd, freed on dealloc */
  size_t nbytes;
  ascDataType dtype;
  int ndim;
  Py_ssize_t shape[ASC_MAX_DIMS];
  Py_ssize_t strides[ASC_MAX_DIMS]; /* bytes, C order */
  PyObject *weakrefs;
} ascpy_Array;

extern PyTypeObject ascpy_ArrayType;
int ascpy_array_init_types(PyObject *m);
/* An asc.Array owning t's data (device memory, freed with ascFree when the
 * array goes): a C-contiguous array a kernel returned.  On failure t's data
 * is freed and NULL returned. */
PyObject *ascpy_array_adopt(const ascTensor *t);

/* ------------------------------------------------------------ dtypes */

/* Python struct-module format character of a dtype; NULL for bfloat16
 * (which travels as "T{<H:bfloat16:}"). */
const char *ascpy_dtype_format(ascDataType t);
/* numpy __array_interface__ typestr ("<f4"). */
const char *ascpy_dtype_typestr(ascDataType t);
/* The dtype of a buffer format / itemsize; -1 when not representable. */
int ascpy_dtype_from_format(const char *format, Py_ssize_t itemsize);

/* ------------------------------------------------------------ kernels */

/* Converts a Python value to a scalar descriptor: Python bool/int/float
 * are weak, numpy scalars (and other 0-d buffers) are typed.  Returns 0,
 * or -1 with a TypeError/OverflowError naming `what` set. */
int ascpy_scalar_from_object(PyObject *o, ascScalar *s, const char *what);

int ascpy_kernel_init_types(PyObject *m);

#endif /* ASCPY_ASC_H */
