/*
 * Modules, kernels and the launch path.
 *
 * A launch turns each Python argument into what ascLaunchKernel expects
 * for that parameter:
 *
 *   tensor parameter   asc Array | buffer protocol | __array_interface__ |
 *                      __dlpack__            -> ascTensor (element strides)
 *   generic scalar     bool/int/float        -> weak ascScalar
 *                      numpy scalar, 0-d     -> typed ascScalar
 *   annotated scalar   any of those          -> the raw value of its type
 *
 * The marshalling of arguments is in _asc_args.c.
 *
 * `kern(*args)` launches one block on the default stream and waits (GIL
 * released); `kern[blocks, stream](*args)` queues and returns at once,
 * keeping the arguments alive in the stream's pending records.
 */
#include "_asc.h"
#include "_asc_kernel.h"

#include <math.h>
#include <string.h>

#ifdef ASCPY_NUMPY_CAPI
/* numpy's C API, when setup.py found numpy's headers: a returned array
 * or scalar is made directly, not through numpy.asarray (which reads the
 * buffer protocol) or a call of numpy.float64 (docs/latency.md, "Returned
 * arrays").  Loaded on the first result; without it the calls below. */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#endif

#include "structmember.h"

typedef struct {
  PyObject_HEAD
  ascModule_t handle;
  PyObject *filename;
  PyObject *weakrefs;
} ModuleObject;

/* asc.this_thread (flags 0) and asc.this_thread.hand_off: given as the
 * stream of kern[blocks, ...], the launch is ascLaunchKernelSync's, on the
 * calling thread's own stream, waited for at once. */
typedef struct {
  PyObject_HEAD
  unsigned flags;
} ThreadLaunchObject;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  KernelObject *kernel;
  ascpy_Stream *stream;          /* NULL with here */
  ThreadLaunchObject *here;
  uint32_t blocks;
} LauncherObject;

static PyTypeObject ModuleType, KernelType, LauncherType, ThreadLaunchType;
static ThreadLaunchObject this_thread[2] = {
    {PyObject_HEAD_INIT(&ThreadLaunchType) ascLaunchJoin},
    {PyObject_HEAD_INIT(&ThreadLaunchType) ascLaunchHandOff}};

/* ------------------------------------------------------------- launch */

static int kernel_ensure_bound(KernelObject *k) {
  PyObject *r;
  if (k->handle != NULL)
    return 0;
  if (k->dict == NULL || PyDict_GetItemString(k->dict, "_load") == NULL) {
    PyErr_SetString(PyExc_TypeError,
                    "this asc.Kernel is not bound to a compiled module; "
                    "use @asc.kernel or asc.compile()");
    return -1;
  }
  r = PyObject_CallMethod((PyObject *)k, "_load", NULL);
  if (r == NULL)
    return -1;
  Py_DECREF(r);
  if (k->handle == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "kernel _load() did not bind it");
    return -1;
  }
  return 0;
}

/* Moves the launch's open exports and references into a pending record on
 * s, so that they live until the queued work finished. */
static int keep_alive(KernelObject *k, Launch *L, ascpy_Stream *s) {
  ascpy_Pending *rec;
  PyObject *refs;
  int i, r;
  refs = PyTuple_New(1 + L->n + L->nholds);
  if (refs == NULL)
    return -1;
  PyTuple_SET_ITEM(refs, 0, Py_NewRef(k));
  for (i = 0; i < L->n; i++)
    PyTuple_SET_ITEM(refs, 1 + i, Py_NewRef(L->objs[i]));
  for (i = 0; i < L->nholds; i++)
    PyTuple_SET_ITEM(refs, 1 + L->n + i, L->holds[i]); /* steals */
  L->nholds = 0;
  rec = PyObject_New(ascpy_Pending, &ascpy_PendingType);
  if (rec == NULL) {
    Py_DECREF(refs);
    return -1;
  }
  rec->refs = refs;
  rec->nbufs = 0;
  rec->bufs = NULL;
  if (L->nbufs > 0) {
    rec->bufs = PyMem_Malloc((size_t)L->nbufs * sizeof(Py_buffer));
    if (rec->bufs == NULL) {
      Py_DECREF(rec);
      PyErr_NoMemory();
      return -1;
    }
    memcpy(rec->bufs, L->bufs, (size_t)L->nbufs * sizeof(Py_buffer));
    rec->nbufs = L->nbufs;
    L->nbufs = 0;
  }
  r = ascpy_stream_add_pending(s, (PyObject *)rec);
  Py_DECREF(rec);
  return r;
}

#ifdef ASCPY_NUMPY_CAPI
/* numpy's type number of an asc dtype; -1 for bfloat16 (numpy has
 * none). */
static int numpy_type(ascDataType dt) {
  switch (dt) {
  case ascBool: return NPY_BOOL;
  case ascInt8: return NPY_INT8;
  case ascInt16: return NPY_INT16;
  case ascInt32: return NPY_INT32;
  case ascInt64: return NPY_INT64;
  case ascUInt8: return NPY_UINT8;
  case ascUInt16: return NPY_UINT16;
  case ascUInt32: return NPY_UINT32;
  case ascUInt64: return NPY_UINT64;
  case ascFloat16: return NPY_HALF;
  case ascFloat32: return NPY_FLOAT32;
  case ascFloat64: return NPY_FLOAT64;
  case ascComplex64: return NPY_COMPLEX64;
  case ascComplex128: return NPY_COMPLEX128;
  default: return -1;
  }
}

/* 1 once numpy's C API is loaded, -1 when it cannot be (the calls
 * through numpy's Python functions then). */
static int numpy_api(void) {
  static int state;
  if (state == 0) {
    state = _import_array() < 0 ? -1 : 1;
    if (state < 0)
      PyErr_Clear();
  }
  return state;
}

/* A numpy array over the asc.Array a (its base), or NULL with no error
 * set when the C API does not make this one. */
static PyObject *numpy_view(PyObject *a, const ascTensor *t, int *failed) {
  npy_intp dims[ASC_MAX_DIMS];
  PyArray_Descr *d;
  PyObject *v;
  int type = numpy_type(t->dtype);
  *failed = 0;
  if (type < 0 || numpy_api() < 0)
    return NULL;
  for (int i = 0; i < t->ndim; i++)
    dims[i] = (npy_intp)t->shape[i];
  d = PyArray_DescrFromType(type);
  if (d == NULL)
    goto fail;
  v = PyArray_NewFromDescr(&PyArray_Type, d, t->ndim, dims, NULL,
                           ((ascpy_Array *)a)->data, NPY_ARRAY_CARRAY, NULL);
  if (v == NULL)
    goto fail;
  if (PyArray_SetBaseObject((PyArrayObject *)v, Py_NewRef(a)) < 0) {
    Py_DECREF(v);
    goto fail;
  }
  if (t->ndim == 0)
    return PyArray_Return((PyArrayObject *)v); /* its number, as numpy's */
  return v;
fail:
  *failed = 1;
  return NULL;
}

/* numpy's scalar of s's dtype, or NULL with no error set when the C API
 * does not make this one. */
static PyObject *numpy_scalar(const ascScalar *s, int *failed) {
  union {
    npy_bool b;
    int8_t i8; int16_t i16; int32_t i32; int64_t i64;
    uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
    float f32; double f64;
  } x;
  PyArray_Descr *d;
  PyObject *v;
  int type = numpy_type(s->dtype);
  *failed = 0;
  /* (a float16 scalar would need npymath's conversion) */
  if (type < 0 || type == NPY_HALF || type == NPY_COMPLEX64 ||
      type == NPY_COMPLEX128 || numpy_api() < 0)
    return NULL;
  switch (s->dtype) {
  case ascBool: x.b = s->value.i != 0; break;
  case ascInt8: x.i8 = (int8_t)s->value.i; break;
  case ascInt16: x.i16 = (int16_t)s->value.i; break;
  case ascInt32: x.i32 = (int32_t)s->value.i; break;
  case ascInt64: x.i64 = s->value.i; break;
  case ascUInt8: x.u8 = (uint8_t)s->value.u; break;
  case ascUInt16: x.u16 = (uint16_t)s->value.u; break;
  case ascUInt32: x.u32 = (uint32_t)s->value.u; break;
  case ascUInt64: x.u64 = s->value.u; break;
  case ascFloat32: x.f32 = (float)s->value.f; break;
  default: x.f64 = s->value.f; break;
  }
  d = PyArray_DescrFromType(type);
  v = d != NULL ? PyArray_Scalar(&x, d, NULL) : NULL;
  Py_XDECREF(d);
  *failed = v == NULL;
  return v;
}
#endif

/* One value a kernel returned: a numpy scalar, a numpy array over the
 * returned block (no copy; the asc.Array that owns it is its base), or
 * None.  A returned array is freed when the conversion fails. */
static PyObject *result_value(ascResult *r) {
  PyObject *np, *v = NULL, *a;
#ifdef ASCPY_NUMPY_CAPI
  int failed;
#endif
  if (r->kind == ascResultTensor) {
    a = ascpy_array_adopt(&r->tensor);
    r->kind = ascResultNone; /* owned by a now */
    if (a == NULL)
      return NULL;
    if (r->tensor.dtype == ascBFloat16)
      return a; /* numpy has no bfloat16: the asc.Array itself */
#ifdef ASCPY_NUMPY_CAPI
    v = numpy_view(a, &r->tensor, &failed);
    if (v != NULL || failed) {
      Py_DECREF(a);
      return v;
    }
#endif
    np = PyImport_ImportModule("numpy");
    if (np != NULL)
      v = PyObject_CallMethod(np, "asarray", "O", a);
    Py_XDECREF(np);
    Py_DECREF(a);
    if (v != NULL && r->tensor.ndim == 0) {
      /* a 0-d result (arithmetic on numbers passed as 0-d arrays): its
       * number, as numpy's arithmetic on 0-d arrays gives */
      PyObject *e = PyTuple_New(0), *x = NULL;
      if (e != NULL)
        x = PyObject_GetItem(v, e);
      Py_XDECREF(e);
      Py_SETREF(v, x);
    }
    return v;
  }
  if (r->kind == ascResultScalar) {
    const ascScalar *s = &r->scalar;
    PyObject *x;
    if (s->dtype == ascBool)
      x = PyBool_FromLong(s->value.i != 0);
    else if (s->dtype == ascFloat16 || s->dtype == ascBFloat16 ||
             s->dtype == ascFloat32 || s->dtype == ascFloat64)
      x = PyFloat_FromDouble(s->value.f);
    else if (s->dtype == ascUInt8 || s->dtype == ascUInt16 ||
             s->dtype == ascUInt32 || s->dtype == ascUInt64)
      x = PyLong_FromUnsignedLongLong(s->value.u);
    else
      x = PyLong_FromLongLong(s->value.i);
    if (x == NULL || s->dtype == ascBFloat16)
      return x;
#ifdef ASCPY_NUMPY_CAPI
    v = numpy_scalar(s, &failed);
    if (v != NULL || failed) {
      Py_DECREF(x);
      return v;
    }
#endif
    /* numpy's scalar of the kernel's dtype, as numba returns it */
    np = PyImport_ImportModule("numpy");
    if (np != NULL)
      v = PyObject_CallMethod(np, ascDataTypeName(s->dtype), "O", x);
    Py_XDECREF(np);
    Py_DECREF(x);
    return v;
  }
  Py_RETURN_NONE;
}

/* The kernel's return value from its result slots (one, or a tuple). */
static PyObject *results_value(ascResult *res, int n) {
  PyObject *out = n == 1 ? NULL : PyTuple_New(n);
  int i;
  if (n > 1 && out == NULL)
    goto fail;
  for (i = 0; i < n; i++) {
    PyObject *v = result_value(&res[i]);
    if (v == NULL)
      goto fail;
    if (n == 1)
      return v;
    PyTuple_SET_ITEM(out, i, v);
  }
  return out;
fail:
  Py_XDECREF(out);
  for (i = 0; i < n; i++)
    if (res[i].kind == ascResultTensor) {
      (void)ascFree(res[i].tensor.data);
      res[i].kind = ascResultNone;
    }
  return NULL;
}

static PyObject *launch(KernelObject *k, uint32_t blocks, ascpy_Stream *s,
                        const ThreadLaunchObject *here, int sync,
                        PyObject *const *args, size_t nargsf,
                        PyObject *kwnames);

/* The launch, by the variant of k that takes parameter i as an array
 * (k._variant(i), compiled once: docs/arrays.md, "Parameters typed by
 * what is passed"). */
static PyObject *launch_variant(KernelObject *k, int i, uint32_t blocks,
                                ascpy_Stream *s,
                                const ThreadLaunchObject *here, int sync,
                                PyObject *const *args, size_t nargsf,
                                PyObject *kwnames) {
  PyObject *v = PyObject_CallMethod((PyObject *)k, "_variant", "i", i);
  PyObject *r;
  if (v == NULL)
    return NULL;
  if (!PyObject_TypeCheck(v, Py_TYPE(k)) || v == (PyObject *)k) {
    Py_DECREF(v);
    PyErr_Format(PyExc_RuntimeError,
                 "kernel '%U': _variant(%d) did not give another kernel",
                 k->name, i);
    return NULL;
  }
  r = launch((KernelObject *)v, blocks, s, here, sync, args, nargsf,
             kwnames);
  Py_DECREF(v);
  if (r == NULL && PyErr_ExceptionMatches(PyExc_SyntaxError)) {
    /* asc.CompileError: say which argument the failed text was for */
    PyObject *t, *e, *tb, *msg, *full = NULL;
    PyErr_Fetch(&t, &e, &tb);
    PyErr_NormalizeException(&t, &e, &tb);
    msg = e != NULL ? PyObject_GetAttrString(e, "msg") : NULL;
    if (msg != NULL && PyUnicode_Check(msg))
      full = PyUnicode_FromFormat(
          "%U\nnote: kernel '%U' is compiled for the array passed for "
          "'%U' (an unannotated parameter takes the type of its "
          "argument); to require a number, annotate it (%U: float)",
          msg, k->name, PyTuple_GET_ITEM(k->param_names, i),
          PyTuple_GET_ITEM(k->param_names, i));
    if (full == NULL || PyObject_SetAttrString(e, "msg", full) < 0)
      PyErr_Clear();
    Py_XDECREF(msg);
    Py_XDECREF(full);
    PyErr_Restore(t, e, tb);
  }
  return r;
}

static PyObject *launch(KernelObject *k, uint32_t blocks, ascpy_Stream *s,
                        const ThreadLaunchObject *here, int sync,
                        PyObject *const *args, size_t nargsf,
                        PyObject *kwnames) {
  Launch L;
  ascError_t e;
  ascStream_t h = NULL;
  ascResult res[16];
  int i, waited = 0;
  if (kernel_ensure_bound(k) < 0 || (here == NULL && ascpy_stream_check(s) < 0))
    return NULL;
  if (k->nresults > 0 && !sync) {
    PyErr_Format(PyExc_TypeError,
                 "kernel '%U' returns a value: call it as %U(...), which "
                 "runs one block and waits for the value, not with "
                 "[blocks, stream]",
                 k->name, k->name);
    return NULL;
  }
  if (k->nresults > (int)(sizeof res / sizeof res[0])) {
    PyErr_Format(PyExc_TypeError, "kernel '%U' returns %d values; at most "
                 "%d", k->name, k->nresults, (int)(sizeof res / sizeof res[0]));
    return NULL;
  }
  memset(res, 0, (size_t)k->nresults * sizeof res[0]);
  if (!sync && here == NULL && ascpy_stream_reap(s) < 0)
    return NULL;
  if (ascpy_launch_init(&L, k->nparams + k->nresults) < 0)
    goto fail;
  if (ascpy_bind_args(k, &L, args, PyVectorcall_NARGS(nargsf), kwnames) < 0)
    goto fail;
  for (i = 0; i < k->nparams; i++) {
    int r = k->params[i].is_tensor
                ? ascpy_marshal_tensor(k, i, L.objs[i], &L.slots[i].t, &L)
                : ascpy_marshal_scalar(k, i, L.objs[i], &L.slots[i]);
    if (r == ASCPY_ARRAY_FOR_NUMBER) {
      ascpy_launch_release(&L);
      return launch_variant(k, i, blocks, s, here, sync, args, nargsf,
                            kwnames);
    }
    if (r < 0)
      goto fail;
    L.argv[i] = &L.slots[i];
  }
  for (i = 0; i < k->nresults; i++)
    L.argv[k->nparams + i] = &res[i];
  if (here != NULL) {
    unsigned flags = here->flags;
    Py_BEGIN_ALLOW_THREADS
    e = ascLaunchKernelSync(k->handle, blocks, L.argv, flags);
    Py_END_ALLOW_THREADS
  } else if (sync && ascpy_stream_holds_nothing(s)) {
    /* The launch and the wait in one call: on an idle stream the launch
     * runs on this thread.  No record to drop after it (with records,
     * the two steps below tell a failed launch from a failed wait). */
    if (ascpy_launch_wait(k->handle, blocks, L.argv, s->handle, &e) < 0)
      goto fail;
    waited = 1;
  } else {
    h = s->handle;
    Py_BEGIN_ALLOW_THREADS
    e = ascLaunchKernel(k->handle, blocks, L.argv, h);
    Py_END_ALLOW_THREADS
  }
  if (e == ascSuccess && sync && here == NULL && !waited) {
    /* Ctrl-C cancels the launch and raises KeyboardInterrupt. */
    int r = ascpy_wait(h, &e);
    ascpy_stream_drained(s);
    if (r < 0)
      goto fail;
  }
  if (e != ascSuccess) {
    ascpy_error(e);
    goto fail;
  }
  if (!sync && keep_alive(k, &L, s) < 0) {
    /* The work is queued: its arguments must outlive it. */
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    Py_BEGIN_ALLOW_THREADS
    (void)ascStreamSynchronize(h);
    Py_END_ALLOW_THREADS
    PyErr_Restore(t, v, tb);
    goto fail;
  }
  ascpy_launch_release(&L);
  if (k->nresults > 0)
    return results_value(res, k->nresults);
  Py_RETURN_NONE;
fail:
  ascpy_launch_release(&L);
  for (i = 0; i < k->nresults; i++) /* interrupted after it returned */
    if (res[i].kind == ascResultTensor)
      (void)ascFree(res[i].tensor.data);
  return NULL;
}

static PyObject *kernel_vectorcall(PyObject *self, PyObject *const *args,
                                   size_t nargsf, PyObject *kwnames) {
  return launch((KernelObject *)self, 1, ascpy_default_stream(), NULL, 1,
                args, nargsf, kwnames);
}

static PyObject *launcher_vectorcall(PyObject *self, PyObject *const *args,
                                     size_t nargsf, PyObject *kwnames) {
  LauncherObject *l = (LauncherObject *)self;
  return launch(l->kernel, l->blocks, l->stream, l->here, l->here != NULL,
                args, nargsf, kwnames);
}

/* -------------------------------------------------------------- modules */

static PyObject *module_new(PyTypeObject *type, PyObject *args,
                            PyObject *kw) {
  static char *kwlist[] = {"text",  "filename",    "first_line",
                           "globals", "debug",     "boundscheck",
                           "opt_level", "is_path", "compiled",
                           "fastmath", NULL};
  PyObject *text, *filename = Py_None, *globals = Py_None, *items = NULL;
  int first_line = 0, debug = 0, boundscheck = 0, opt_level = 0, is_path = 0;
  int compiled = 0;
  unsigned int fastmath = 0;
  ascCompileOptions opts;
  ascGlobalValue *gv = NULL;
  Py_ssize_t ng = 0, j;
  const char *ctext;
  Py_ssize_t clen;
  ModuleObject *mod = NULL;
  ascModule_t h = NULL;
  ascError_t e;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "U|OiOppippI:Module", kwlist,
                                   &text, &filename, &first_line, &globals,
                                   &debug, &boundscheck, &opt_level,
                                   &is_path, &compiled, &fastmath))
    return NULL;
  memset(&opts, 0, sizeof opts);
  ctext = PyUnicode_AsUTF8AndSize(text, &clen);
  if (ctext == NULL)
    return NULL;
  if (strlen(ctext) != (size_t)clen) {
    PyErr_SetString(PyExc_ValueError, "kernel text contains a NUL character");
    return NULL;
  }
  if (filename != Py_None) {
    if (!PyUnicode_Check(filename)) {
      PyErr_SetString(PyExc_TypeError, "filename must be a str or None");
      return NULL;
    }
    opts.filename = PyUnicode_AsUTF8(filename);
    if (opts.filename == NULL)
      return NULL;
  }
  if (first_line < 0) {
    PyErr_SetString(PyExc_ValueError, "first_line must be >= 1");
    return NULL;
  }
  if (opt_level < 0 || opt_level > 3) {
    PyErr_SetString(PyExc_ValueError, "opt_level must be 0..3");
    return NULL;
  }
  opts.firstLine = first_line;
  opts.debug = debug;
  opts.boundsCheck = boundscheck;
  opts.optLevel = opt_level;
  opts.fastmath = fastmath; /* libasc rejects unknown bits */
  if (globals != Py_None) {
    if (!PyDict_Check(globals)) {
      PyErr_SetString(PyExc_TypeError, "globals must be a dict or None");
      return NULL;
    }
    /* A private snapshot: the dict may change while the GIL is released. */
    items = PyDict_Items(globals);
    if (items == NULL)
      return NULL;
    ng = PyList_GET_SIZE(items);
    if (ng > INT32_MAX) {
      PyErr_SetString(PyExc_ValueError, "too many globals");
      goto out;
    }
    gv = PyMem_Calloc(ng ? (size_t)ng : 1, sizeof *gv);
    if (gv == NULL) {
      PyErr_NoMemory();
      goto out;
    }
    for (j = 0; j < ng; j++) {
      PyObject *item = PyList_GET_ITEM(items, j);
      PyObject *key = PyTuple_GET_ITEM(item, 0);
      char what[200];
      if (!PyUnicode_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "globals keys must be str");
        goto out;
      }
      gv[j].name = PyUnicode_AsUTF8(key);
      if (gv[j].name == NULL)
        goto out;
      PyOS_snprintf(what, sizeof what, "global '%s'", gv[j].name);
      if (ascpy_scalar_from_object(PyTuple_GET_ITEM(item, 1), &gv[j].value,
                                   what) < 0)
        goto out;
    }
    opts.globals = gv;
    opts.numGlobals = (int)ng;
  }
  Py_BEGIN_ALLOW_THREADS
  if (compiled)
    e = ascModuleLoad(&h, ctext);
  else if (is_path)
    e = ascModuleLoadPythonFile(&h, ctext, &opts);
  else
    e = ascModuleLoadPython(&h, ctext, &opts);
  Py_END_ALLOW_THREADS
  if (e != ascSuccess) {
    ascpy_error(e);
    goto out;
  }
  mod = (ModuleObject *)type->tp_alloc(type, 0);
  if (mod == NULL) {
    (void)ascModuleUnload(h);
    goto out;
  }
  mod->handle = h;
  mod->filename = Py_NewRef(filename != Py_None     ? filename
                            : (is_path || compiled) ? text
                                                    : Py_None);
out:
  PyMem_Free(gv);
  Py_XDECREF(items);
  return (PyObject *)mod;
}

static void module_dealloc(ModuleObject *m) {
  if (m->weakrefs)
    PyObject_ClearWeakRefs((PyObject *)m);
  if (m->handle != NULL && ascModuleUnload(m->handle) != ascSuccess)
    (void)ascGetLastError();
  Py_XDECREF(m->filename);
  Py_TYPE(m)->tp_free((PyObject *)m);
}

static int kernel_bind(KernelObject *k, ModuleObject *mod, PyObject *name);

static PyObject *module_get_kernel(ModuleObject *m, PyObject *name) {
  KernelObject *k;
  if (!PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "kernel name must be a str");
    return NULL;
  }
  k = (KernelObject *)KernelType.tp_alloc(&KernelType, 0);
  if (k == NULL)
    return NULL;
  k->vectorcall = kernel_vectorcall;
  if (kernel_bind(k, m, name) < 0) {
    Py_DECREF(k);
    return NULL;
  }
  return (PyObject *)k;
}

static PyMethodDef module_methods[] = {
    {"get_kernel", (PyCFunction)module_get_kernel, METH_O,
     "get_kernel(name) -> Kernel"},
    {NULL, NULL, 0, NULL}};

static PyMemberDef module_members[] = {
    {"filename", T_OBJECT, offsetof(ModuleObject, filename), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject ModuleType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "asc._asc.Module",
    .tp_basicsize = sizeof(ModuleObject),
    .tp_dealloc = (destructor)module_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Module(text, filename=None, first_line=1, globals=None, "
              "debug=False, boundscheck=False, opt_level=0, is_path=False, "
              "compiled=False, fastmath=0)\n\n"
              "Python kernel text (or a file of it: is_path) compiled by "
              "libasc and cached on disk, or a module compiled ahead of time "
              "(compiled: ascModuleLoad of a path).",
    .tp_weaklistoffset = offsetof(ModuleObject, weakrefs),
    .tp_methods = module_methods,
    .tp_members = module_members,
    .tp_new = module_new,
};

/* -------------------------------------------------------------- kernels */

static void free_params(ParamInfo *p, int n) {
  int i;
  for (i = 0; p != NULL && i < n; i++)
    PyMem_Free(p[i].what);
  PyMem_Free(p);
}

static int kernel_bind(KernelObject *k, ModuleObject *mod, PyObject *name) {
  ascKernel_t h;
  ascKernelInfo info;
  ascError_t e;
  const char *cname = PyUnicode_AsUTF8(name);
  ParamInfo *params = NULL;
  PyObject *names = NULL;
  char *cname_copy;
  int i;
  if (cname == NULL)
    return -1;
  if (k->handle != NULL) {
    PyErr_SetString(PyExc_RuntimeError, "kernel is already bound");
    return -1;
  }
  e = ascModuleGetKernel(&h, mod->handle, cname);
  if (e != ascSuccess) {
    ascpy_error(e);
    return -1;
  }
  memset(&info, 0, sizeof info);
  e = ascKernelGetInfo(&info, h);
  if (e != ascSuccess) {
    ascpy_error(e);
    return -1;
  }
  if (info.numParams < 0 || (info.numParams > 0 && info.params == NULL)) {
    ascpy_error_msg(ascErrorInternal, "kernel info has no parameter table");
    return -1;
  }
  params = PyMem_Calloc(info.numParams ? (size_t)info.numParams : 1,
                        sizeof *params);
  names = PyTuple_New(info.numParams);
  cname_copy = PyMem_Malloc(strlen(cname) + 1);
  if (params == NULL || names == NULL || cname_copy == NULL) {
    PyMem_Free(params);
    Py_XDECREF(names);
    PyMem_Free(cname_copy);
    PyErr_NoMemory();
    return -1;
  }
  strcpy(cname_copy, cname);
  for (i = 0; i < info.numParams; i++) {
    const ascKernelParamInfo *pi = &info.params[i];
    const char *pname = pi->name ? pi->name : "?";
    size_t wlen = strlen(cname) + strlen(pname) + 32;
    PyObject *pn = PyUnicode_FromString(pname);
    params[i].what = PyMem_Malloc(wlen);
    if (pn == NULL || params[i].what == NULL) {
      Py_XDECREF(pn);
      free_params(params, info.numParams);
      Py_DECREF(names);
      PyMem_Free(cname_copy);
      if (!PyErr_Occurred())
        PyErr_NoMemory();
      return -1;
    }
    PyOS_snprintf(params[i].what, wlen, "kernel '%s': parameter '%s'", cname,
                  pname);
    PyTuple_SET_ITEM(names, i, pn);
    params[i].is_tensor = pi->isTensor != 0;
    params[i].generic = pi->generic != 0;
    params[i].constexpr_ = pi->isConstExpr != 0;
    params[i].dtype = (unsigned)pi->dtype < ascDataTypeCount
                          ? pi->dtype
                          : ascDataTypeCount;
    params[i].ndim = pi->ndim;
    params[i].written = pi->isWritten != 0;
    params[i].number_ok = pi->numberAsArray != 0;
    params[i].use_line = pi->useLine;
    if (!params[i].is_tensor && !params[i].generic &&
        params[i].dtype == ascDataTypeCount)
      params[i].generic = 1; /* no type to convert to: send a descriptor */
  }
  k->handle = h;
  Py_XSETREF(k->module, Py_NewRef(mod));
  Py_XSETREF(k->name, Py_NewRef(name));
  PyMem_Free(k->cname);
  k->cname = cname_copy;
  free_params(k->params, k->nparams);
  k->params = params;
  k->nparams = info.numParams;
  k->nresults = info.numResults;
  Py_XSETREF(k->param_names, names);
  return 0;
}

static PyObject *kernel_new(PyTypeObject *type, PyObject *args,
                            PyObject *kw) {
  KernelObject *k;
  if (PyTuple_GET_SIZE(args) != 0 || (kw != NULL && PyDict_GET_SIZE(kw))) {
    PyErr_SetString(PyExc_TypeError, "Kernel() takes no arguments");
    return NULL;
  }
  k = (KernelObject *)type->tp_alloc(type, 0);
  if (k == NULL)
    return NULL;
  k->vectorcall = kernel_vectorcall;
  return (PyObject *)k;
}

static int kernel_traverse(KernelObject *k, visitproc visit, void *arg) {
  Py_VISIT(k->dict);
  Py_VISIT(k->module);
  return 0;
}

static int kernel_clear(KernelObject *k) {
  Py_CLEAR(k->dict);
  return 0;
}

static void kernel_dealloc(KernelObject *k) {
  PyObject_GC_UnTrack(k);
  if (k->weakrefs)
    PyObject_ClearWeakRefs((PyObject *)k);
  Py_CLEAR(k->dict);
  Py_CLEAR(k->module);
  Py_CLEAR(k->name);
  Py_CLEAR(k->param_names);
  free_params(k->params, k->nparams);
  PyMem_Free(k->cname);
  Py_TYPE(k)->tp_free((PyObject *)k);
}

static PyObject *kernel_bind_m(KernelObject *k, PyObject *args) {
  PyObject *mod, *name;
  if (!PyArg_ParseTuple(args, "O!U:_bind", &ModuleType, &mod, &name))
    return NULL;
  if (kernel_bind(k, (ModuleObject *)mod, name) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *kernel_subscript(KernelObject *k, PyObject *key) {
  PyObject *bo = key, *so = Py_None;
  LauncherObject *l;
  unsigned long long blocks;
  if (PyTuple_Check(key)) {
    Py_ssize_t n = PyTuple_GET_SIZE(key);
    if (n < 1 || n > 2) {
      PyErr_SetString(PyExc_TypeError,
                      "use kernel[blocks] or kernel[blocks, stream]");
      return NULL;
    }
    bo = PyTuple_GET_ITEM(key, 0);
    if (n == 2)
      so = PyTuple_GET_ITEM(key, 1);
  }
  if (!PyIndex_Check(bo) || PyBool_Check(bo)) {
    PyErr_Format(PyExc_TypeError, "kernel[blocks]: blocks must be an int, "
                 "got %s", Py_TYPE(bo)->tp_name);
    return NULL;
  }
  {
    PyObject *idx = PyNumber_Index(bo);
    int overflow = 0;
    long long v;
    if (idx == NULL)
      return NULL;
    v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (v == -1 && PyErr_Occurred())
      return NULL;
    if (overflow || v < 1 || v > (long long)UINT32_MAX) {
      PyErr_Format(PyExc_ValueError,
                   "kernel[blocks]: blocks must be in 1..%lu, got %R",
                   (unsigned long)UINT32_MAX, bo);
      return NULL;
    }
    blocks = (unsigned long long)v;
  }
  if (so != Py_None && !PyObject_TypeCheck(so, &ascpy_StreamType) &&
      Py_TYPE(so) != &ThreadLaunchType) {
    PyErr_Format(PyExc_TypeError,
                 "kernel[blocks, stream]: stream must be an asc.Stream, "
                 "asc.this_thread or None, got %s",
                 Py_TYPE(so)->tp_name);
    return NULL;
  }
  l = PyObject_New(LauncherObject, &LauncherType);
  if (l == NULL)
    return NULL;
  l->vectorcall = launcher_vectorcall;
  l->kernel = (KernelObject *)Py_NewRef(k);
  l->here = NULL;
  l->stream = NULL;
  if (Py_TYPE(so) == &ThreadLaunchType)
    l->here = (ThreadLaunchObject *)Py_NewRef(so);
  else
    l->stream = (ascpy_Stream *)Py_NewRef(
        so == Py_None ? (PyObject *)ascpy_default_stream() : so);
  l->blocks = (uint32_t)blocks;
  return (PyObject *)l;
}

static PyObject *kernel_repr(KernelObject *k) {
  if (k->name == NULL) {
    PyObject *n = k->dict ? PyDict_GetItemString(k->dict, "__name__") : NULL;
    if (n)
      return PyUnicode_FromFormat("<asc.kernel %R (not compiled yet)>", n);
    return PyUnicode_FromString("<asc.kernel (not compiled yet)>");
  }
  return PyUnicode_FromFormat("<asc.kernel '%U'>", k->name);
}

static PyObject *kernel_get_params(KernelObject *k, void *c) {
  PyObject *t;
  int i;
  (void)c;
  if (kernel_ensure_bound(k) < 0)
    return NULL;
  t = PyTuple_New(k->nparams);
  if (t == NULL)
    return NULL;
  for (i = 0; i < k->nparams; i++) {
    const ParamInfo *p = &k->params[i];
    PyObject *d = Py_BuildValue(
        "{s:O,s:s,s:s,s:i,s:O,s:O,s:O}", "name",
        PyTuple_GET_ITEM(k->param_names, i), "kind",
        p->is_tensor ? "tensor" : "scalar", "dtype",
        p->dtype == ascDataTypeCount ? "generic" : ascDataTypeName(p->dtype),
        "ndim", p->ndim, "generic", p->generic ? Py_True : Py_False,
        "constexpr", p->constexpr_ ? Py_True : Py_False, "written",
        p->is_tensor && p->written ? Py_True : Py_False);
    if (d == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, d);
  }
  return t;
}

/* The ascKernel_t as an int, for plugins that launch from C
 * (asc.jax's XLA handler); valid while the kernel object lives. */
static PyObject *kernel_get_handle(KernelObject *k, void *c) {
  (void)c;
  if (kernel_ensure_bound(k) < 0)
    return NULL;
  return PyLong_FromVoidPtr(k->handle);
}

static PyObject *kernel_get_bound(KernelObject *k, void *c) {
  (void)c;
  return PyBool_FromLong(k->handle != NULL);
}

static PyObject *kernel_get_module(KernelObject *k, void *c) {
  (void)c;
  return Py_NewRef(k->module ? k->module : Py_None);
}

static PyObject *kernel_get_name(KernelObject *k, void *c) {
  (void)c;
  return Py_NewRef(k->name ? k->name : Py_None);
}

static PyMethodDef kernel_methods[] = {
    {"_bind", (PyCFunction)kernel_bind_m, METH_VARARGS,
     "_bind(module, name): attach the kernel `name` of a loaded module."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef kernel_getset[] = {
    {"params", (getter)kernel_get_params, NULL,
     "Parameter table (compiles the module on first use).", NULL},
    {"_bound", (getter)kernel_get_bound, NULL, NULL, NULL},
    {"_handle", (getter)kernel_get_handle, NULL,
     "The ascKernel_t (compiles the module on first use).", NULL},
    {"_module", (getter)kernel_get_module, NULL, NULL, NULL},
    {"kernel_name", (getter)kernel_get_name, NULL,
     "Name of the kernel in its module (None until compiled).", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL,
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMappingMethods kernel_as_mapping = {
    NULL, (binaryfunc)kernel_subscript, NULL};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "asc.Kernel",
    .tp_basicsize = sizeof(KernelObject),
    .tp_dealloc = (destructor)kernel_dealloc,
    .tp_vectorcall_offset = offsetof(KernelObject, vectorcall),
    .tp_repr = (reprfunc)kernel_repr,
    .tp_as_mapping = &kernel_as_mapping,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A compiled kernel.  kern(*args) runs one block on the default "
              "stream and waits; kern[blocks, stream](*args) queues the "
              "launch and returns at once.",
    .tp_traverse = (traverseproc)kernel_traverse,
    .tp_clear = (inquiry)kernel_clear,
    .tp_weaklistoffset = offsetof(KernelObject, weakrefs),
    .tp_methods = kernel_methods,
    .tp_getset = kernel_getset,
    .tp_dictoffset = offsetof(KernelObject, dict),
    .tp_new = kernel_new,
};

/* ------------------------------------------------------------ launchers */

static void launcher_dealloc(LauncherObject *l) {
  Py_XDECREF(l->kernel);
  Py_XDECREF(l->stream);
  Py_XDECREF(l->here);
  PyObject_Free(l);
}

static PyObject *launcher_repr(LauncherObject *l) {
  return PyUnicode_FromFormat("<asc launcher %R blocks=%lu stream=%R>",
                              (PyObject *)l->kernel,
                              (unsigned long)l->blocks,
                              l->here != NULL ? (PyObject *)l->here
                                              : (PyObject *)l->stream);
}

/* ------------------------------------------------------ this_thread */

static PyObject *thread_launch_repr(ThreadLaunchObject *t) {
  return PyUnicode_FromString(t->flags & ascLaunchHandOff
                                  ? "asc.this_thread.hand_off"
                                  : "asc.this_thread");
}

static PyObject *thread_launch_hand_off(ThreadLaunchObject *t, void *c) {
  (void)t; (void)c;
  return Py_NewRef((PyObject *)&this_thread[1]);
}

static PyGetSetDef thread_launch_getset[] = {
    {"hand_off", (getter)thread_launch_hand_off, NULL,
     "The same, the calling thread sleeping while the workers run it "
     "(ascLaunchHandOff).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject ThreadLaunchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "asc._asc.ThreadLaunch",
    .tp_basicsize = sizeof(ThreadLaunchObject),
    .tp_repr = (reprfunc)thread_launch_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_getset = thread_launch_getset,
    .tp_doc = "kern[blocks, asc.this_thread](*args): run the launch now, on "
              "the calling thread's own stream, the thread taking part "
              "(ascLaunchKernelSync; docs/plugins.md).",
};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "asc._asc.Launcher",
    .tp_basicsize = sizeof(LauncherObject),
    .tp_dealloc = (destructor)launcher_dealloc,
    .tp_vectorcall_offset = offsetof(LauncherObject, vectorcall),
    .tp_repr = (reprfunc)launcher_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "kern[blocks, stream]: call it to queue the launch.",
};

int ascpy_kernel_init_types(PyObject *m) {
  if (PyType_Ready(&ModuleType) < 0 || PyType_Ready(&KernelType) < 0 ||
      PyType_Ready(&LauncherType) < 0 || PyType_Ready(&ThreadLaunchType) < 0)
    return -1;
  if (PyModule_AddObjectRef(m, "Module", (PyObject *)&ModuleType) < 0 ||
      PyModule_AddObjectRef(m, "Kernel", (PyObject *)&KernelType) < 0 ||
      PyModule_AddObjectRef(m, "this_thread", (PyObject *)&this_thread[0]) < 0)
    return -1;
  return 0;
}
