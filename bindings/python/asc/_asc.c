/*
 * asc._asc — the C extension under the `asc` package: errors, devices and
 * module-level functions.  Streams and events live in _asc_stream.c,
 * pooled arrays in _asc_array.c, modules, kernels and argument marshalling
 * in _asc_kernel.c.
 */
#include "_asc.h"

#include <string.h>

PyObject *ascpy_Error;
static PyObject *error_factory; /* asc._errors.from_code, or NULL */

/* ---------------------------------------------------------------- errors */

PyObject *ascpy_error_msg(ascError_t code, const char *message) {
  PyObject *msg, *exc = NULL;
  if (message == NULL || message[0] == '\0')
    message = ascGetErrorString(code);
  msg = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
  if (msg == NULL)
    return NULL;
  if (error_factory != NULL) {
    exc = PyObject_CallFunction(error_factory, "isO", (int)code,
                                ascGetErrorName(code), msg);
    if (exc == NULL) {
      Py_DECREF(msg);
      return NULL;
    }
    if (!PyExceptionInstance_Check(exc)) {
      Py_DECREF(exc);
      Py_DECREF(msg);
      PyErr_SetString(PyExc_SystemError,
                      "asc error factory did not return an exception");
      return NULL;
    }
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  } else {
    PyErr_SetObject(ascpy_Error, msg);
  }
  Py_DECREF(msg);
  return NULL;
}

PyObject *ascpy_error(ascError_t code) {
  /* Copy: building the exception may call into libasc again. */
  const char *m = ascGetLastErrorMessage();
  char *copy = m ? PyMem_Malloc(strlen(m) + 1) : NULL;
  PyObject *r;
  if (m != NULL && copy == NULL)
    return PyErr_NoMemory();
  if (copy)
    strcpy(copy, m);
  (void)ascGetLastError(); /* reported now: clear it */
  r = ascpy_error_msg(code, copy);
  PyMem_Free(copy);
  return r;
}

static PyObject *set_error_factory(PyObject *self, PyObject *fn) {
  (void)self;
  if (fn != Py_None && !PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "error factory must be callable or None");
    return NULL;
  }
  Py_XDECREF(error_factory);
  error_factory = fn == Py_None ? NULL : Py_NewRef(fn);
  Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- dtypes */

static const char *const formats[ascDataTypeCount] = {
    "?", "b", "h", "i", "q", "B", "H", "I", "Q", "e", NULL, "f", "d", "Zf", "Zd"};
static const char *const typestrs[ascDataTypeCount] = {
    "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2",
    "<u4", "<u8", "<f2", "|V2", "<f4", "<f8", "<c8", "<c16"};

const char *ascpy_dtype_format(ascDataType t) {
  return (unsigned)t < ascDataTypeCount ? formats[t] : NULL;
}

const char *ascpy_dtype_typestr(ascDataType t) {
  return (unsigned)t < ascDataTypeCount ? typestrs[t] : NULL;
}

int ascpy_dtype_from_format(const char *f, Py_ssize_t itemsize) {
  if (f == NULL) /* PyBUF_FORMAT not honoured: unsigned bytes */
    return itemsize == 1 ? ascUInt8 : -1;
  /* numpy's bfloat16 stand-in: a struct with one uint16 field "bfloat16". */
  if (f[0] == 'T' && f[1] == '{' && itemsize == 2 &&
      strstr(f, ":bfloat16:") != NULL)
    return ascBFloat16;
  if (*f == '@' || *f == '=' || *f == '<')
    f++;
  else if (*f == '>' || *f == '!')
    return -1; /* big-endian data: not on any host we run on */
  /* complex: 'Zf' (complex64), 'Zd' (complex128) */
  if (f[0] == 'Z' && f[1] != '\0' && f[2] == '\0') {
    if (f[1] == 'f')
      return itemsize == 8 ? ascComplex64 : -1;
    if (f[1] == 'd')
      return itemsize == 16 ? ascComplex128 : -1;
    return -1;
  }
  if (f[0] == '\0' || f[1] != '\0')
    return -1;
  switch (f[0]) {
  case '?':
    return itemsize == 1 ? ascBool : -1;
  case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
    switch (itemsize) {
    case 1: return ascInt8;
    case 2: return ascInt16;
    case 4: return ascInt32;
    case 8: return ascInt64;
    default: return -1;
    }
  case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
    switch (itemsize) {
    case 1: return ascUInt8;
    case 2: return ascUInt16;
    case 4: return ascUInt32;
    case 8: return ascUInt64;
    default: return -1;
    }
  case 'e':
    return itemsize == 2 ? ascFloat16 : -1;
  case 'f':
    return itemsize == 4 ? ascFloat32 : -1;
  case 'd':
    return itemsize == 8 ? ascFloat64 : -1;
  default:
    return -1;
  }
}

static PyObject *dtype_info(PyObject *self, PyObject *arg) {
  long t = PyLong_AsLong(arg);
  (void)self;
  if (t == -1 && PyErr_Occurred())
    return NULL;
  if (t < 0 || t >= ascDataTypeCount) {
    PyErr_Format(PyExc_ValueError, "no dtype with code %ld", t);
    return NULL;
  }
  return Py_BuildValue("(snss)", ascDataTypeName((ascDataType)t),
                       (Py_ssize_t)ascDataTypeSize((ascDataType)t),
                       typestrs[t], formats[t] ? formats[t] : "T{<H:bfloat16:}");
}

/* --------------------------------------------------------------- devices */

static PyObject *version(PyObject *self, PyObject *unused) {
  int v = 0;
  ascError_t e = ascGetVersion(&v);
  (void)self;
  (void)unused;
  if (e != ascSuccess)
    return ascpy_error(e);
  return PyLong_FromLong(v);
}

static PyObject *device_count(PyObject *self, PyObject *unused) {
  int n = 0;
  ascError_t e = ascGetDeviceCount(&n);
  (void)self;
  (void)unused;
  if (e != ascSuccess)
    return ascpy_error(e);
  return PyLong_FromLong(n);
}

static PyObject *get_device(PyObject *self, PyObject *unused) {
  int d = 0;
  ascError_t e = ascGetDevice(&d);
  (void)self;
  (void)unused;
  if (e != ascSuccess)
    return ascpy_error(e);
  return PyLong_FromLong(d);
}

static PyObject *set_device(PyObject *self, PyObject *arg) {
  long d = PyLong_AsLong(arg);
  ascError_t e;
  (void)self;
  if (d == -1 && PyErr_Occurred())
    return NULL;
  if (d < INT32_MIN || d > INT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "device ordinal out of range");
    return NULL;
  }
  e = ascSetDevice((int)d);
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *device_properties(PyObject *self, PyObject *args) {
  int d = -1;
  ascDeviceProp p;
  ascError_t e;
  (void)self;
  if (!PyArg_ParseTuple(args, "|i:device_properties", &d))
    return NULL;
  if (d == -1 && (e = ascGetDevice(&d)) != ascSuccess)
    return ascpy_error(e);
  memset(&p, 0, sizeof p);
  e = ascGetDeviceProperties(&p, d);
  if (e != ascSuccess)
    return ascpy_error(e);
  p.name[sizeof p.name - 1] = '\0';
  return Py_BuildValue(
      "{s:i,s:s,s:i,s:i,s:i,s:n,s:n,s:n,s:i,s:n,s:i}", "device", d, "name",
      p.name, "cores", p.cores, "numa_nodes", p.numaNodes, "sockets",
      p.sockets, "l1_cache_size", (Py_ssize_t)p.l1CacheSize, "l2_cache_size",
      (Py_ssize_t)p.l2CacheSize, "l3_cache_size", (Py_ssize_t)p.l3CacheSize,
      "simd_width", p.simdWidth, "total_memory", (Py_ssize_t)p.totalGlobalMem,
      "first_core", p.firstCore);
}

static PyObject *mem_get_info(PyObject *self, PyObject *unused) {
  size_t fr = 0, total = 0;
  ascError_t e = ascMemGetInfo(&fr, &total);
  (void)self;
  (void)unused;
  if (e != ascSuccess)
    return ascpy_error(e);
  return Py_BuildValue("(nn)", (Py_ssize_t)fr, (Py_ssize_t)total);
}

static PyObject *stream_priority_range(PyObject *self, PyObject *unused) {
  int least = 0, greatest = 0;
  ascError_t e = ascDeviceGetStreamPriorityRange(&least, &greatest);
  (void)self;
  (void)unused;
  if (e != ascSuccess)
    return ascpy_error(e);
  return Py_BuildValue("(ii)", least, greatest);
}

static PyObject *profiler_start(PyObject *self, PyObject *path) {
  PyObject *bytes;
  ascError_t e;
  (void)self;
  if (!PyUnicode_FSConverter(path, &bytes))
    return NULL;
  e = ascProfilerStart(PyBytes_AS_STRING(bytes));
  Py_DECREF(bytes);
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *profiler_stop(PyObject *self, PyObject *unused) {
  ascError_t e;
  (void)self;
  (void)unused;
  Py_BEGIN_ALLOW_THREADS
  e = ascProfilerStop();
  Py_END_ALLOW_THREADS
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *synchronize(PyObject *self, PyObject *unused) {
  ascError_t e;
  (void)self;
  (void)unused;
  Py_BEGIN_ALLOW_THREADS
  e = ascDeviceSynchronize();
  Py_END_ALLOW_THREADS
  /* Finished or failed, nothing queued before is still running. */
  ascpy_all_streams_drained();
  if (e != ascSuccess)
    return ascpy_error(e);
  Py_RETURN_NONE;
}

static PyObject *error_name(PyObject *self, PyObject *arg) {
  long c = PyLong_AsLong(arg);
  (void)self;
  if (c == -1 && PyErr_Occurred())
    return NULL;
  return PyUnicode_FromString(ascGetErrorName((ascError_t)c));
}

static PyObject *scalar_descriptor(PyObject *self, PyObject *arg) {
  ascScalar s;
  (void)self;
  if (ascpy_scalar_from_object(arg, &s, "value") < 0)
    return NULL;
  if (s.dtype == ascFloat16 || s.dtype == ascBFloat16 ||
      s.dtype == ascFloat32 || s.dtype == ascFloat64)
    return Py_BuildValue("(sid)", ascDataTypeName(s.dtype), s.weak,
                         s.value.f);
  if (s.dtype >= ascUInt8 && s.dtype <= ascUInt64)
    return Py_BuildValue("(siK)", ascDataTypeName(s.dtype), s.weak,
                         (unsigned long long)s.value.u);
  return Py_BuildValue("(siL)", ascDataTypeName(s.dtype), s.weak,
                       (long long)s.value.i);
}

static PyMethodDef methods[] = {
    {"version", version, METH_NOARGS,
     "libasc version as major*10000 + minor*100 + patch."},
    {"device_count", device_count, METH_NOARGS, "Number of devices."},
    {"get_device", get_device, METH_NOARGS,
     "Current device of the calling thread."},
    {"set_device", set_device, METH_O, "Select the calling thread's device."},
    {"device_properties", device_properties, METH_VARARGS,
     "device_properties(device=current) -> dict"},
    {"mem_get_info", mem_get_info, METH_NOARGS, "(free, total) bytes."},
    {"stream_priority_range", stream_priority_range, METH_NOARGS,
     "(least, greatest) stream priority; lower numbers are higher."},
    {"profiler_start", profiler_start, METH_O,
     "ascProfilerStart(path): start a trace (docs/tracing.md)."},
    {"profiler_stop", profiler_stop, METH_NOARGS,
     "ascProfilerStop(): write the trace and stop."},
    {"synchronize", synchronize, METH_NOARGS,
     "Wait for all work on the current device; raises the first pending "
     "error."},
    {"error_name", error_name, METH_O, "ascGetErrorName(code)."},
    {"dtype_info", dtype_info, METH_O,
     "dtype_info(code) -> (name, itemsize, typestr, format)"},
    {"scalar_descriptor", scalar_descriptor, METH_O,
     "How a Python value is passed to a generic scalar parameter: "
     "(dtype name, weak, value)."},
    {"_set_error_factory", set_error_factory, METH_O,
     "Register f(code, name, message) -> exception instance."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "asc._asc",
    "Low-level bindings of libasc; use the `asc` package.", -1, methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__asc(void); /* the only exported symbol */

PyMODINIT_FUNC PyInit__asc(void) {
  PyObject *m = PyModule_Create(&moduledef);
  int i;
  if (m == NULL)
    return NULL;
  ascpy_Error = PyErr_NewExceptionWithDoc(
      "asc.Error", "Base class of every error reported by libasc.", NULL,
      NULL);
  if (ascpy_Error == NULL || PyModule_AddObjectRef(m, "Error", ascpy_Error) < 0)
    goto fail;
  if (PyModule_AddIntConstant(m, "MAX_DIMS", ASC_MAX_DIMS) < 0)
    goto fail;
#define ADD_ERR_(name, value, msg)                                           \
  if (PyModule_AddIntConstant(m, #name, value) < 0)                          \
    goto fail;
  ASC_ERROR_MAP(ADD_ERR_)
#undef ADD_ERR_
  for (i = 0; i < ascDataTypeCount; i++) {
    char name[32];
    snprintf(name, sizeof name, "DT_%s", ascDataTypeName((ascDataType)i));
    if (PyModule_AddIntConstant(m, name, i) < 0)
      goto fail;
  }
  if (ascpy_stream_init_types(m) < 0 || ascpy_array_init_types(m) < 0 ||
      ascpy_kernel_init_types(m) < 0)
    goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
