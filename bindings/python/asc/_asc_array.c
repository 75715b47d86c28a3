/*
 * Pooled arrays: C-contiguous blocks from ascMalloc that numpy (or any
 * consumer of the buffer protocol / __array_interface__) views without a
 * copy.  A view holds a reference to the array, so the block is freed only
 * when the last view is gone; queued kernels hold one through their
 * stream's pending records.
 */
#include "_asc.h"

#include <string.h>

#define BF16_FORMAT "T{<H:bfloat16:}"

static int shape_from_object(PyObject *o, int *ndim, Py_ssize_t *shape) {
  PyObject *seq;
  Py_ssize_t n, i;
  if (PyIndex_Check(o)) {
    shape[0] = PyNumber_AsSsize_t(o, PyExc_OverflowError);
    if (shape[0] == -1 && PyErr_Occurred())
      return -1;
    *ndim = 1;
  } else {
    seq = PySequence_Fast(o, "shape must be an int or a sequence of ints");
    if (seq == NULL)
      return -1;
    n = PySequence_Fast_GET_SIZE(seq);
    if (n > ASC_MAX_DIMS) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_ValueError, "at most %d dimensions, got %zd",
                   ASC_MAX_DIMS, n);
      return -1;
    }
    for (i = 0; i < n; i++) {
      PyObject *d = PySequence_Fast_GET_ITEM(seq, i);
      if (!PyIndex_Check(d)) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_TypeError, "shape entries must be ints, got %s",
                     Py_TYPE(d)->tp_name);
        return -1;
      }
      shape[i] = PyNumber_AsSsize_t(d, PyExc_OverflowError);
      if (shape[i] == -1 && PyErr_Occurred()) {
        Py_DECREF(seq);
        return -1;
      }
    }
    *ndim = (int)n;
    Py_DECREF(seq);
  }
  for (i = 0; i < *ndim; i++) {
    if (shape[i] < 0) {
      PyErr_Format(PyExc_ValueError, "negative dimension %zd in shape",
                   shape[i]);
      return -1;
    }
  }
  return 0;
}

static PyObject *array_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"shape", "dtype", "zero", NULL};
  PyObject *shape_o;
  int dtype, zero = 0, i;
  ascpy_Array *a;
  size_t n = 1, item;
  ascError_t e;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "Oi|p:Array", kwlist, &shape_o,
                                   &dtype, &zero))
    return NULL;
  if (dtype < 0 || dtype >= ascDataTypeCount) {
    PyErr_Format(PyExc_ValueError, "no dtype with code %d", dtype);
    return NULL;
  }
  a = (ascpy_Array *)type->tp_alloc(type, 0);
  if (a == NULL)
    return NULL;
  a->dtype = (ascDataType)dtype;
  if (shape_from_object(shape_o, &a->ndim, a->shape) < 0) {
    Py_DECREF(a);
    return NULL;
  }
  item = ascDataTypeSize(a->dtype);
  for (i = a->ndim - 1; i >= 0; i--) {
    a->strides[i] = (Py_ssize_t)(n * item);
    if (a->shape[i] != 0 && n > (size_t)PY_SSIZE_T_MAX / item /
                                    (size_t)a->shape[i]) {
      Py_DECREF(a);
      PyErr_SetString(PyExc_ValueError, "array is too large");
      return NULL;
    }
    n *= (size_t)a->shape[i];
  }
  a->nbytes = n * item;
  /* Never a NULL pointer, even for empty arrays: consumers dislike it. */
  e = ascMalloc(&a->data, a->nbytes ? a->nbytes : 1);
  if (e != ascSuccess) {
    a->data = NULL;
    Py_DECREF(a);
    return ascpy_error(e);
  }
  if (zero && a->nbytes) {
    e = ascMemset(a->data, 0, a->nbytes);
    if (e != ascSuccess) {
      Py_DECREF(a);
      return ascpy_error(e);
    }
  }
  return (PyObject *)a;
}

PyObject *ascpy_array_adopt(const ascTensor *t) {
  ascpy_Array *a =
      (ascpy_Array *)ascpy_ArrayType.tp_alloc(&ascpy_ArrayType, 0);
  size_t item = ascDataTypeSize(t->dtype), n = 1;
  if (a == NULL) {
    (void)ascFree(t->data);
    return NULL;
  }
  a->data = t->data;
  a->dtype = t->dtype;
  a->ndim = t->ndim;
  for (int i = t->ndim - 1; i >= 0; i--) {
    a->shape[i] = (Py_ssize_t)t->shape[i];
    a->strides[i] = (Py_ssize_t)(n * item);
    n *= (size_t)t->shape[i];
  }
  a->nbytes = n * item;
  return (PyObject *)a;
}

static void array_dealloc(ascpy_Array *a) {
  if (a->weakrefs)
    PyObject_ClearWeakRefs((PyObject *)a);
  if (a->data != NULL && ascFree(a->data) != ascSuccess) {
    ascpy_error(ascPeekAtLastError());
    PyErr_WriteUnraisable((PyObject *)a);
  }
  Py_TYPE(a)->tp_free((PyObject *)a);
}

static int array_getbuffer(ascpy_Array *a, Py_buffer *view, int flags) {
  const char *fmt = ascpy_dtype_format(a->dtype);
  view->obj = Py_NewRef(a);
  view->buf = a->data;
  view->len = (Py_ssize_t)a->nbytes;
  view->readonly = 0;
  view->itemsize = (Py_ssize_t)ascDataTypeSize(a->dtype);
  view->format = (flags & PyBUF_FORMAT)
                     ? (char *)(fmt ? fmt : BF16_FORMAT)
                     : NULL;
  view->ndim = a->ndim;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? a->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? a->strides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  if (view->shape == NULL) /* a flat byte view of a contiguous block */
    view->ndim = 1;
  if (view->format == NULL && !(flags & PyBUF_FORMAT))
    view->itemsize = 1;
  return 0;
}

static PyBufferProcs array_as_buffer = {
    (getbufferproc)array_getbuffer, NULL};

static PyObject *shape_tuple(const Py_ssize_t *v, int n) {
  PyObject *t = PyTuple_New(n);
  int i;
  if (t == NULL)
    return NULL;
  for (i = 0; i < n; i++) {
    PyObject *x = PyLong_FromSsize_t(v[i]);
    if (x == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

static PyObject *array_get_shape(ascpy_Array *a, void *c) {
  (void)c;
  return shape_tuple(a->shape, a->ndim);
}

static PyObject *array_get_strides(ascpy_Array *a, void *c) {
  (void)c;
  return shape_tuple(a->strides, a->ndim);
}

static PyObject *array_get_ndim(ascpy_Array *a, void *c) {
  (void)c;
  return PyLong_FromLong(a->ndim);
}

static PyObject *array_get_size(ascpy_Array *a, void *c) {
  (void)c;
  return PyLong_FromSize_t(a->nbytes / ascDataTypeSize(a->dtype));
}

static PyObject *array_get_nbytes(ascpy_Array *a, void *c) {
  (void)c;
  return PyLong_FromSize_t(a->nbytes);
}

static PyObject *array_get_itemsize(ascpy_Array *a, void *c) {
  (void)c;
  return PyLong_FromSize_t(ascDataTypeSize(a->dtype));
}

static PyObject *array_get_dtype_code(ascpy_Array *a, void *c) {
  (void)c;
  return PyLong_FromLong(a->dtype);
}

static PyObject *array_get_ptr(ascpy_Array *a, void *c) {
  (void)c;
  return PyLong_FromVoidPtr(a->data);
}

static PyObject *array_get_interface(ascpy_Array *a, void *c) {
  PyObject *shape, *d;
  (void)c;
  shape = shape_tuple(a->shape, a->ndim);
  if (shape == NULL)
    return NULL;
  if (a->dtype == ascBFloat16)
    d = Py_BuildValue("{s:i,s:N,s:s,s:(NO),s:O,s:[(ss)]}", "version", 3,
                      "shape", shape, "typestr", "|V2", "data",
                      PyLong_FromVoidPtr(a->data), Py_False, "strides",
                      Py_None, "descr", "bfloat16", "<u2");
  else
    d = Py_BuildValue("{s:i,s:N,s:s,s:(NO),s:O}", "version", 3, "shape",
                      shape, "typestr", ascpy_dtype_typestr(a->dtype), "data",
                      PyLong_FromVoidPtr(a->data), Py_False, "strides",
                      Py_None);
  return d;
}

static PyGetSetDef array_getset[] = {
    {"shape", (getter)array_get_shape, NULL, "Tuple of dimensions.", NULL},
    {"strides", (getter)array_get_strides, NULL,
     "Strides in bytes (C order).", NULL},
    {"ndim", (getter)array_get_ndim, NULL, "Number of dimensions.", NULL},
    {"size", (getter)array_get_size, NULL, "Number of elements.", NULL},
    {"nbytes", (getter)array_get_nbytes, NULL, "Size in bytes.", NULL},
    {"itemsize", (getter)array_get_itemsize, NULL, "Bytes per element.",
     NULL},
    {"_dtype_code", (getter)array_get_dtype_code, NULL, "ascDataType.", NULL},
    {"ptr", (getter)array_get_ptr, NULL, "Address of the first element.",
     NULL},
    {"__array_interface__", (getter)array_get_interface, NULL,
     "numpy array interface (version 3).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject ascpy_ArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "asc._asc.Array",
    .tp_basicsize = sizeof(ascpy_Array),
    .tp_dealloc = (destructor)array_dealloc,
    .tp_as_buffer = &array_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Array(shape, dtype_code, zero=False)\n\n"
              "A C-contiguous block of device memory (ascMalloc).",
    .tp_weaklistoffset = offsetof(ascpy_Array, weakrefs),
    .tp_getset = array_getset,
    .tp_new = array_new,
};

int ascpy_array_init_types(PyObject *m) {
  if (PyType_Ready(&ascpy_ArrayType) < 0)
    return -1;
  return PyModule_AddObjectRef(m, "Array", (PyObject *)&ascpy_ArrayType);
}
