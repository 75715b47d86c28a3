/*
 * Argument marshalling: what ascLaunchKernel expects for each parameter,
 * from each Python argument of a launch (_asc_kernel.c):
 *
 *   tensor parameter   asc Array | buffer protocol | __array_interface__ |
 *                      __dlpack__            -> ascTensor (element strides)
 *   generic scalar     bool/int/float        -> weak ascScalar
 *                      numpy scalar, 0-d     -> typed ascScalar
 *   annotated scalar   any of those          -> the raw value of its type
 */
#include "_asc.h"
#include "_asc_kernel.h"

#include "asc/dlpack.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------- scalars */

static int read_scalar_buffer(const Py_buffer *b, int dt, ascScalar *s) {
  const unsigned char *p = b->buf;
  s->dtype = (ascDataType)dt;
  s->weak = 0;
  switch (dt) {
  case ascBool: s->value.i = p[0] != 0; break;
  case ascInt8: { int8_t v; memcpy(&v, p, 1); s->value.i = v; break; }
  case ascInt16: { int16_t v; memcpy(&v, p, 2); s->value.i = v; break; }
  case ascInt32: { int32_t v; memcpy(&v, p, 4); s->value.i = v; break; }
  case ascInt64: { int64_t v; memcpy(&v, p, 8); s->value.i = v; break; }
  case ascUInt8: s->value.u = p[0]; break;
  case ascUInt16: { uint16_t v; memcpy(&v, p, 2); s->value.u = v; break; }
  case ascUInt32: { uint32_t v; memcpy(&v, p, 4); s->value.u = v; break; }
  case ascUInt64: { uint64_t v; memcpy(&v, p, 8); s->value.u = v; break; }
  case ascFloat16:
    s->value.f = PyFloat_Unpack2((const char *)p, 1);
    if (s->value.f == -1.0 && PyErr_Occurred())
      return -1;
    break;
  case ascBFloat16: {
    uint16_t h;
    uint32_t bits;
    float f;
    memcpy(&h, p, 2);
    bits = (uint32_t)h << 16;
    memcpy(&f, &bits, 4);
    s->value.f = f;
    break;
  }
  case ascFloat32: { float v; memcpy(&v, p, 4); s->value.f = v; break; }
  case ascFloat64: { double v; memcpy(&v, p, 8); s->value.f = v; break; }
  default: return -1;
  }
  return 0;
}

/* The dtype named by o.dtype.name (ml_dtypes' bfloat16 scalars have no
 * buffer export); -1 when there is none. */
static int dtype_by_name_attr(PyObject *o) {
  PyObject *dt, *name;
  int r = -1, i;
  dt = PyObject_GetAttrString(o, "dtype");
  if (dt == NULL) {
    PyErr_Clear();
    return -1;
  }
  name = PyObject_GetAttrString(dt, "name");
  Py_DECREF(dt);
  if (name == NULL) {
    PyErr_Clear();
    return -1;
  }
  if (PyUnicode_Check(name)) {
    const char *n = PyUnicode_AsUTF8(name);
    if (n == NULL)
      PyErr_Clear();
    for (i = 0; n != NULL && i < ascDataTypeCount; i++)
      if (strcmp(n, ascDataTypeName((ascDataType)i)) == 0)
        r = i;
  }
  Py_DECREF(name);
  return r;
}

static int weak_int(PyObject *o, ascScalar *s, const char *what) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred())
    return -1;
  if (overflow) {
    PyErr_Format(PyExc_OverflowError,
                 "%s: Python int %R does not fit in int64", what, o);
    return -1;
  }
  s->dtype = ascInt64;
  s->weak = 1;
  s->value.i = v;
  return 0;
}

int ascpy_scalar_from_object(PyObject *o, ascScalar *s, const char *what) {
  memset(s, 0, sizeof *s);
  if (PyBool_Check(o)) {
    s->dtype = ascBool;
    s->weak = 1;
    s->value.i = o == Py_True;
    return 0;
  }
  if (PyFloat_CheckExact(o)) {
    s->dtype = ascFloat64;
    s->weak = 1;
    s->value.f = PyFloat_AS_DOUBLE(o);
    return 0;
  }
  if (PyLong_CheckExact(o))
    return weak_int(o, s, what);
  if (PyObject_CheckBuffer(o)) {
    /* numpy scalars and 0-d arrays carry their dtype. */
    Py_buffer b;
    if (PyObject_GetBuffer(o, &b, PyBUF_RECORDS_RO) == 0) {
      int dt = ascpy_dtype_from_format(b.format, b.itemsize);
      int nd = b.ndim;
      int r = -1;
      if (nd != 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected a scalar, got a %d-dimensional %s", what,
                     nd, Py_TYPE(o)->tp_name);
      } else if (dt < 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s: unsupported scalar type %s (format '%s')", what,
                     Py_TYPE(o)->tp_name, b.format ? b.format : "B");
      } else if (dt == ascComplex64 || dt == ascComplex128) {
        PyErr_Format(PyExc_TypeError,
                     "%s: a complex scalar (%s) is passed as a 0-d array: "
                     "np.asarray(z)",
                     what, ascDataTypeName((ascDataType)dt));
      } else {
        r = read_scalar_buffer(&b, dt, s);
      }
      PyBuffer_Release(&b);
      return r;
    }
    PyErr_Clear();
  }
  if (PyFloat_Check(o)) { /* float subclasses other than numpy's */
    s->dtype = ascFloat64;
    s->weak = 1;
    s->value.f = PyFloat_AS_DOUBLE(o);
    return 0;
  }
  if (PyLong_Check(o))
    return weak_int(o, s, what);
  if (!PyComplex_Check(o)) {
    int dt = dtype_by_name_attr(o);
    if (dt == ascBFloat16 || dt == ascFloat16) {
      double f = PyFloat_AsDouble(o);
      if (f == -1.0 && PyErr_Occurred())
        return -1;
      s->dtype = (ascDataType)dt;
      s->weak = 0;
      s->value.f = f;
      return 0;
    }
    if (PyIndex_Check(o)) {
      PyObject *i = PyNumber_Index(o);
      int r;
      if (i == NULL)
        return -1;
      r = weak_int(i, s, what);
      Py_DECREF(i);
      return r;
    }
  }
  if (PyComplex_Check(o)) {
    PyErr_Format(PyExc_TypeError,
                 "%s: a complex scalar is passed as a 0-d array: "
                 "np.asarray(z)",
                 what);
    return -1;
  }
  PyErr_Format(PyExc_TypeError,
               "%s: expected a bool, int or float scalar, got %s", what,
               Py_TYPE(o)->tp_name);
  return -1;
}

static int is_float_dtype(ascDataType t) {
  return t == ascFloat16 || t == ascBFloat16 || t == ascFloat32 ||
         t == ascFloat64;
}

static int is_unsigned_dtype(ascDataType t) {
  return t >= ascUInt8 && t <= ascUInt64;
}

static uint16_t float_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if (isnan(f))
    return 0x7fc0;
  bits += 0x7fffu + ((bits >> 16) & 1u); /* round to nearest even */
  return (uint16_t)(bits >> 16);
}

/* Writes the value of s as an object of type t into out, the storage of
 * annotated parameter `what`. */
static int scalar_to_raw(const ascScalar *s, ascDataType t, void *out,
                         const char *what) {
  if (is_float_dtype(t)) {
    double x;
    if (is_float_dtype(s->dtype))
      x = s->value.f;
    else if (is_unsigned_dtype(s->dtype))
      x = (double)s->value.u;
    else
      x = (double)s->value.i;
    switch (t) {
    case ascFloat16:
      if (PyFloat_Pack2(x, out, 1) < 0) {
        /* Beyond float16's range: infinity, as a C or numpy cast gives. */
        uint16_t inf = x < 0 ? 0xfc00 : 0x7c00;
        PyErr_Clear();
        memcpy(out, &inf, 2);
      }
      return 0;
    case ascBFloat16: {
      uint16_t h = float_to_bf16((float)x);
      memcpy(out, &h, 2);
      return 0;
    }
    case ascFloat32: {
      float f = (float)x;
      memcpy(out, &f, 4);
      return 0;
    }
    default:
      memcpy(out, &x, 8);
      return 0;
    }
  }
  if (is_float_dtype(s->dtype)) {
    PyErr_Format(PyExc_TypeError, "%s is %s; got a float value", what,
                 ascDataTypeName(t));
    return -1;
  }
  if (t == ascBool) {
    unsigned char b = is_unsigned_dtype(s->dtype) ? s->value.u != 0
                                                  : s->value.i != 0;
    memcpy(out, &b, 1);
    return 0;
  }
  {
    /* Integer to integer, range checked. */
    int neg = !is_unsigned_dtype(s->dtype) && s->value.i < 0;
    uint64_t mag = is_unsigned_dtype(s->dtype) ? s->value.u
                   : neg ? 0u - (uint64_t)s->value.i
                         : (uint64_t)s->value.i;
    size_t size = ascDataTypeSize(t);
    uint64_t max;
    if (is_unsigned_dtype(t)) {
      max = size == 8 ? UINT64_MAX : ((uint64_t)1 << (size * 8)) - 1;
      if (neg || mag > max)
        goto range;
      switch (size) {
      case 1: { uint8_t v = (uint8_t)mag; memcpy(out, &v, 1); break; }
      case 2: { uint16_t v = (uint16_t)mag; memcpy(out, &v, 2); break; }
      case 4: { uint32_t v = (uint32_t)mag; memcpy(out, &v, 4); break; }
      default: memcpy(out, &mag, 8); break;
      }
    } else {
      int64_t v;
      max = ((uint64_t)1 << (size * 8 - 1)) - 1;
      if ((!neg && mag > max) || (neg && mag > max + 1))
        goto range;
      v = neg ? (int64_t)(0u - mag) : (int64_t)mag;
      switch (size) {
      case 1: { int8_t w = (int8_t)v; memcpy(out, &w, 1); break; }
      case 2: { int16_t w = (int16_t)v; memcpy(out, &w, 2); break; }
      case 4: { int32_t w = (int32_t)v; memcpy(out, &w, 4); break; }
      default: memcpy(out, &v, 8); break;
      }
    }
    return 0;
  range:
    if (neg)
      PyErr_Format(PyExc_OverflowError, "%s is %s; -%llu is out of range",
                   what, ascDataTypeName(t), (unsigned long long)mag);
    else
      PyErr_Format(PyExc_OverflowError, "%s is %s; %llu is out of range",
                   what, ascDataTypeName(t), (unsigned long long)mag);
    return -1;
  }
}

/* ------------------------------------------------------------- tensors */

int ascpy_launch_init(Launch *L, int n) {
  L->n = n;
  L->nbufs = L->nholds = 0;
  if (n <= STACK_PARAMS) {
    L->objs = L->objs_s;
    L->argv = L->argv_s;
    L->slots = L->slots_s;
    L->bufs = L->bufs_s;
    L->holds = L->holds_s;
  } else {
    L->objs = PyMem_Calloc((size_t)n, sizeof *L->objs);
    L->argv = PyMem_Calloc((size_t)n, sizeof *L->argv);
    L->slots = PyMem_Calloc((size_t)n, sizeof *L->slots);
    L->bufs = PyMem_Calloc((size_t)n, sizeof *L->bufs);
    L->holds = PyMem_Calloc((size_t)n, sizeof *L->holds);
    if (!L->objs || !L->argv || !L->slots || !L->bufs || !L->holds) {
      PyErr_NoMemory();
      return -1;
    }
  }
  memset(L->objs, 0, (size_t)n * sizeof *L->objs);
  return 0;
}

void ascpy_launch_release(Launch *L) {
  int i;
  for (i = 0; i < L->nbufs; i++)
    PyBuffer_Release(&L->bufs[i]);
  for (i = 0; i < L->nholds; i++)
    Py_DECREF(L->holds[i]);
  L->nbufs = L->nholds = 0;
  if (L->objs != L->objs_s) {
    PyMem_Free(L->objs);
    PyMem_Free(L->argv);
    PyMem_Free(L->slots);
    PyMem_Free(L->bufs);
    PyMem_Free(L->holds);
  }
}

static int param_error(KernelObject *k, int i, PyObject *exc, const char *fmt,
                       ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  PyOS_vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  PyErr_Format(exc, "kernel '%s': parameter '%U' %s", k->cname,
               PyTuple_GET_ITEM(k->param_names, i), detail);
  return -1;
}

static int fill_shape(KernelObject *k, int i, ascTensor *t, int ndim,
                      const Py_ssize_t *shape, const Py_ssize_t *bstrides,
                      Py_ssize_t itemsize) {
  int d;
  int64_t acc = 1;
  if (ndim < 0 || ndim > ASC_MAX_DIMS)
    return param_error(k, i, PyExc_ValueError,
                       "has %d dimensions; at most %d are supported", ndim,
                       ASC_MAX_DIMS);
  t->ndim = ndim;
  for (d = ndim - 1; d >= 0; d--) {
    if (shape[d] < 0)
      return param_error(k, i, PyExc_ValueError,
                         "has a negative dimension (%zd)", shape[d]);
    t->shape[d] = shape[d];
    if (bstrides == NULL) {
      t->strides[d] = acc;
      /* the launch checks the whole byte size; here only no overflow */
      if (__builtin_mul_overflow(acc, shape[d] ? (int64_t)shape[d] : 1,
                                 &acc))
        return param_error(k, i, PyExc_ValueError,
                           "has %d dimensions of more elements in all than "
                           "an array can hold", ndim);
    } else {
      if (bstrides[d] % itemsize != 0)
        return param_error(k, i, PyExc_ValueError,
                           "has a stride of %zd bytes, not a multiple of "
                           "its %zd-byte elements",
                           bstrides[d], itemsize);
      t->strides[d] = bstrides[d] / itemsize;
    }
  }
  for (d = ndim; d < ASC_MAX_DIMS; d++)
    t->shape[d] = t->strides[d] = 0;
  if (t->data == NULL) {
    for (d = 0; d < ndim && t->shape[d] != 0; d++)
      ;
    if (d == ndim)
      return param_error(k, i, PyExc_ValueError,
                         "has a NULL data pointer and elements");
  }
  return 0;
}

static int tensor_from_array(KernelObject *k, int i, ascpy_Array *a,
                             ascTensor *t) {
  t->data = a->data;
  t->dtype = a->dtype;
  return fill_shape(k, i, t, a->ndim, a->shape, a->strides,
                    (Py_ssize_t)ascDataTypeSize(a->dtype));
}

/* 1: filled; 0: o has no usable buffer (no error set); -1: error. */
static int tensor_from_buffer(KernelObject *k, int i, PyObject *o,
                              ascTensor *t, Launch *L) {
  Py_buffer *b = &L->bufs[L->nbufs];
  int dt;
  if (PyObject_GetBuffer(o, b, PyBUF_RECORDS_RO) < 0) {
    PyErr_Clear(); /* e.g. numpy with ml_dtypes' bfloat16 */
    return 0;
  }
  L->nbufs++;
  if (b->readonly && k->params[i].written) {
    param_error(k, i, PyExc_ValueError,
                "is written by the kernel, but got a read-only %s "
                "(pass a writable array, e.g. a copy)",
                Py_TYPE(o)->tp_name);
    return -1;
  }
  dt = ascpy_dtype_from_format(b->format, b->itemsize);
  if (dt < 0) {
    param_error(k, i, PyExc_TypeError,
                "got %s with element format '%s', which is not a "
                "libasc dtype",
                Py_TYPE(o)->tp_name, b->format ? b->format : "B");
    return -1;
  }
  t->data = b->buf;
  t->dtype = (ascDataType)dt;
  if (fill_shape(k, i, t, b->ndim, b->shape, b->strides, b->itemsize) < 0)
    return -1;
  return 1;
}

static int interface_dtype(KernelObject *k, int i, PyObject *o,
                           PyObject *iface, const char *ts) {
  char kind;
  long size;
  char *end;
  if (ts[0] == '>')
    return param_error(k, i, PyExc_TypeError, "is big-endian ('%s')", ts);
  if (ts[0] == '\0' || ts[1] == '\0')
    goto bad;
  kind = ts[1];
  size = strtol(ts + 2, &end, 10);
  if (*end != '\0')
    goto bad;
  switch (kind) {
  case 'b':
    if (size == 1) return ascBool;
    break;
  case 'i':
    if (size == 1) return ascInt8;
    if (size == 2) return ascInt16;
    if (size == 4) return ascInt32;
    if (size == 8) return ascInt64;
    break;
  case 'u':
    if (size == 1) return ascUInt8;
    if (size == 2) return ascUInt16;
    if (size == 4) return ascUInt32;
    if (size == 8) return ascUInt64;
    break;
  case 'f':
    if (size == 2) return ascFloat16;
    if (size == 4) return ascFloat32;
    if (size == 8) return ascFloat64;
    break;
  case 'c':
    if (size == 8) return ascComplex64;
    if (size == 16) return ascComplex128;
    break;
  case 'V':
    if (size == 2) {
      PyObject *descr = PyDict_GetItemString(iface, "descr");
      if (descr && PyList_Check(descr) && PyList_GET_SIZE(descr) == 1) {
        PyObject *f = PyList_GET_ITEM(descr, 0);
        if (PyTuple_Check(f) && PyTuple_GET_SIZE(f) >= 1 &&
            PyUnicode_Check(PyTuple_GET_ITEM(f, 0)) &&
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(f, 0),
                                             "bfloat16") == 0)
          return ascBFloat16;
      }
      if (dtype_by_name_attr(o) == ascBFloat16)
        return ascBFloat16;
    }
    break;
  default:
    break;
  }
bad:
  return param_error(k, i, PyExc_TypeError,
                     "got %s with element type '%s', which is not a libasc "
                     "dtype",
                     Py_TYPE(o)->tp_name, ts);
}

static int int_tuple(PyObject *tup, Py_ssize_t *out, int n) {
  int d;
  for (d = 0; d < n; d++) {
    out[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(tup, d));
    if (out[d] == -1 && PyErr_Occurred())
      return -1;
  }
  return 0;
}

static int tensor_from_interface(KernelObject *k, int i, PyObject *o,
                                 ascTensor *t) {
  PyObject *iface = PyObject_GetAttrString(o, "__array_interface__");
  PyObject *shape, *strides, *data, *typestr;
  Py_ssize_t sh[ASC_MAX_DIMS], st[ASC_MAX_DIMS];
  int ndim, dt, r = -1;
  if (iface == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
      return -1;
    PyErr_Clear();
    return 0;
  }
  if (!PyDict_Check(iface)) {
    param_error(k, i, PyExc_TypeError,
                "got %s whose __array_interface__ is not a dict",
                Py_TYPE(o)->tp_name);
    goto out;
  }
  shape = PyDict_GetItemString(iface, "shape");
  strides = PyDict_GetItemString(iface, "strides");
  data = PyDict_GetItemString(iface, "data");
  typestr = PyDict_GetItemString(iface, "typestr");
  if (!shape || !PyTuple_Check(shape) || !typestr ||
      !PyUnicode_Check(typestr) || !data || !PyTuple_Check(data) ||
      PyTuple_GET_SIZE(data) < 1 ||
      (strides && strides != Py_None && (!PyTuple_Check(strides) ||
       PyTuple_GET_SIZE(strides) != PyTuple_GET_SIZE(shape)))) {
    param_error(k, i, PyExc_TypeError,
                "got %s with an __array_interface__ libasc cannot use "
                "(needs shape, typestr and a data pointer)",
                Py_TYPE(o)->tp_name);
    goto out;
  }
  if (PyTuple_GET_SIZE(shape) > ASC_MAX_DIMS) {
    param_error(k, i, PyExc_ValueError,
                "has %zd dimensions; at most %d are supported",
                PyTuple_GET_SIZE(shape), ASC_MAX_DIMS);
    goto out;
  }
  ndim = (int)PyTuple_GET_SIZE(shape);
  if (k->params[i].written && PyTuple_GET_SIZE(data) >= 2 &&
      PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1) {
    param_error(k, i, PyExc_ValueError,
                "is written by the kernel, but got a read-only %s "
                "(its __array_interface__ says so; pass a writable array)",
                Py_TYPE(o)->tp_name);
    goto out;
  }
  {
    const char *ts = PyUnicode_AsUTF8(typestr);
    if (ts == NULL)
      goto out;
    dt = interface_dtype(k, i, o, iface, ts);
    if (dt < 0)
      goto out;
  }
  if (int_tuple(shape, sh, ndim) < 0 ||
      (strides && strides != Py_None && int_tuple(strides, st, ndim) < 0) ||
      ((t->data = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0))) == NULL &&
       PyErr_Occurred())) {
    PyErr_Clear();
    param_error(k, i, PyExc_TypeError,
                "got %s whose __array_interface__ has a shape, strides or "
                "data pointer that is not an integer in range",
                Py_TYPE(o)->tp_name);
    goto out;
  }
  t->dtype = (ascDataType)dt;
  r = fill_shape(k, i, t, ndim, sh,
                 strides && strides != Py_None ? st : NULL,
                 (Py_ssize_t)ascDataTypeSize((ascDataType)dt));
  if (r == 0)
    r = 1;
out:
  Py_DECREF(iface);
  return r;
}

/* o.__dlpack__(), asking for a versioned capsule (DLPack 1.x, which can
 * say read-only); producers older than the max_version keyword give an
 * unversioned one. */
static PyObject *dlpack_capsule(PyObject *fn) {
  static PyObject *kw;
  PyObject *cap;
  if (kw == NULL) {
    kw = Py_BuildValue("{s:(ii)}", "max_version", 1, 0);
    if (kw == NULL)
      return NULL;
  }
  {
    PyObject *noargs = PyTuple_New(0);
    if (noargs == NULL)
      return NULL;
    cap = PyObject_Call(fn, noargs, kw);
    Py_DECREF(noargs);
  }
  if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    cap = PyObject_CallNoArgs(fn);
  }
  return cap;
}

/* libasc's conversion (asc/dlpack.h) of a capsule the launch holds: the
 * capsule is not consumed (its name stays), so its own destructor calls
 * the deleter once the launch lets go of it. */
static int tensor_from_dlpack(KernelObject *k, int i, PyObject *o,
                              ascTensor *t, Launch *L) {
  PyObject *fn = PyObject_GetAttrString(o, "__dlpack__");
  PyObject *cap;
  ascError_t e;
  int ro = 0;
  if (fn == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
      return -1;
    PyErr_Clear();
    return 0;
  }
  cap = dlpack_capsule(fn);
  Py_DECREF(fn);
  if (cap == NULL)
    return -1;
  L->holds[L->nholds++] = cap;
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    e = ascTensorFromDLManagedTensorVersioned(
        t, &ro, PyCapsule_GetPointer(cap, "dltensor_versioned"));
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    e = ascTensorFromDLManagedTensor(t, PyCapsule_GetPointer(cap, "dltensor"));
  } else {
    return param_error(k, i, PyExc_TypeError,
                       "got %s whose __dlpack__() is not a DLPack capsule",
                       Py_TYPE(o)->tp_name);
  }
  if (e != ascSuccess) {
    int r = param_error(k, i,
                        e == ascErrorUnsupported ? PyExc_TypeError
                                                 : PyExc_ValueError,
                        "(%s): %s", Py_TYPE(o)->tp_name,
                        ascGetLastErrorMessage());
    (void)ascGetLastError();
    return r;
  }
  if (ro && k->params[i].written)
    return param_error(k, i, PyExc_ValueError,
                       "is written by the kernel, but got a read-only %s "
                       "(its DLPack capsule says so; pass a writable array)",
                       Py_TYPE(o)->tp_name);
  return 1;
}

/* A Python complex: a 0-d complex128 array of it (np.asarray(z)), whose
 * bytes the launch holds.  memoryview has no complex format to cast to. */
static int tensor_from_complex(KernelObject *k, int i, PyObject *o,
                               ascTensor *t, Launch *L) {
  double z[2];
  PyObject *bytes;
  if (k->params[i].written)
    return param_error(k, i, PyExc_ValueError,
                       "is written by the kernel, but got a complex number "
                       "(pass an array)");
  z[0] = PyComplex_RealAsDouble(o);
  z[1] = PyComplex_ImagAsDouble(o);
  if (PyErr_Occurred())
    return -1;
  bytes = PyBytes_FromStringAndSize((const char *)z, sizeof z);
  if (bytes == NULL)
    return -1;
  L->holds[L->nholds++] = bytes;
  t->data = PyBytes_AS_STRING(bytes);
  t->dtype = ascComplex128;
  if (fill_shape(k, i, t, 0, NULL, NULL, (Py_ssize_t)sizeof z) < 0)
    return -1;
  return 1;
}

/* A Python number given for an array parameter: a 0-d array of it, as
 * numpy's np.asarray(x) (int64, float64 or bool), read-only.  The launch
 * holds the buffer, so the value outlives an asynchronous launch.
 * 1: filled; 0: o is not a number (no error set); -1: error. */
static int tensor_from_number(KernelObject *k, int i, PyObject *o,
                              ascTensor *t, Launch *L) {
  union {
    int64_t i;
    double f;
    uint8_t b;
  } v;
  const char *fmt;
  Py_ssize_t size;
  PyObject *bytes, *view, *zero_d;
  int r;
  if (PyBool_Check(o)) {
    v.b = o == Py_True;
    fmt = "?";
    size = 1;
  } else if (PyLong_Check(o)) {
    v.i = PyLong_AsLongLong(o);
    if (v.i == -1 && PyErr_Occurred())
      return -1;
    fmt = "q";
    size = 8;
  } else if (PyFloat_Check(o)) {
    v.f = PyFloat_AS_DOUBLE(o);
    fmt = "d";
    size = 8;
  } else if (PyComplex_Check(o)) {
    return tensor_from_complex(k, i, o, t, L);
  } else {
    return 0;
  }
  bytes = PyBytes_FromStringAndSize((const char *)&v, size);
  if (bytes == NULL)
    return -1;
  view = PyMemoryView_FromObject(bytes);
  Py_DECREF(bytes);
  if (view == NULL)
    return -1;
  zero_d = PyObject_CallMethod(view, "cast", "s()", fmt);
  Py_DECREF(view);
  if (zero_d == NULL)
    return -1;
  r = tensor_from_buffer(k, i, zero_d, t, L);
  Py_DECREF(zero_d); /* the launch's Py_buffer keeps it */
  return r;
}

int ascpy_marshal_tensor(KernelObject *k, int i, PyObject *o, ascTensor *t,
                         Launch *L) {
  const ParamInfo *p = &k->params[i];
  int r;
  if (PyObject_TypeCheck(o, &ascpy_ArrayType)) {
    if (tensor_from_array(k, i, (ascpy_Array *)o, t) < 0)
      return -1;
  } else {
    r = PyObject_CheckBuffer(o) ? tensor_from_buffer(k, i, o, t, L) : 0;
    if (r == 0)
      r = tensor_from_interface(k, i, o, t);
    if (r == 0)
      r = tensor_from_dlpack(k, i, o, t, L);
    if (r == 0 && p->number_ok)
      r = tensor_from_number(k, i, o, t, L);
    else if (r == 0 && p->generic && PyComplex_Check(o))
      r = tensor_from_complex(k, i, o, t, L); /* the complex variant */
    if (r < 0)
      return -1;
    if (r == 0)
      return param_error(k, i, PyExc_TypeError,
                         "expects an array (buffer protocol, "
                         "__array_interface__ or __dlpack__), got %s",
                         Py_TYPE(o)->tp_name);
  }
  if (!p->generic && p->dtype != ascDataTypeCount && t->dtype != p->dtype)
    return param_error(k, i, PyExc_TypeError,
                       "is Tensor[%s, ...]; got a %s array",
                       ascDataTypeName(p->dtype), ascDataTypeName(t->dtype));
  if (!p->generic && p->ndim >= 0 && t->ndim != p->ndim)
    return param_error(k, i, PyExc_TypeError,
                       "has %d dimension%s; got an array with %d",
                       p->ndim, p->ndim == 1 ? "" : "s", t->ndim);
  return 0;
}

int ascpy_marshal_scalar(KernelObject *k, int i, PyObject *o,
                         union slot *slot) {
  const ParamInfo *p = &k->params[i];
  ascScalar s;
  if (ascpy_scalar_from_object(o, &s, p->what) < 0) {
    PyObject *t, *v, *tb;
    int arr;
    if (p->generic && p->use_line < 0 &&
        PyErr_ExceptionMatches(PyExc_TypeError)) {
      /* the kernel never reads it: any object goes, as in numba (a
       * number keeps its type above, so an ahead-of-time signature
       * still matches) */
      PyErr_Clear();
      memset(&slot->s, 0, sizeof slot->s);
      slot->s.dtype = ascInt64;
      slot->s.weak = 1;
      return 0;
    }
    if (!p->generic || p->use_line <= 0 ||
        !PyErr_ExceptionMatches(PyExc_TypeError))
      return -1;
    /* an array for a parameter the kernel reads as a number: say where
     * (the error is set aside: looking up an attribute may clear it) */
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    arr = 0;
    if (v != NULL) {
      PyObject *msg = PyObject_Str(v);
      const char *m = msg != NULL ? PyUnicode_AsUTF8(msg) : NULL;
      /* a complex number too: kernels take one as a 0-d array */
      arr = m != NULL && (strstr(m, ": expected a scalar, got a ") != NULL ||
                          strstr(m, ": a complex scalar") != NULL);
      Py_XDECREF(msg);
      PyErr_Clear();
    }
    if (!arr) {
      PyErr_Restore(t, v, tb);
      return -1;
    }
    if (p->generic && !p->constexpr_ && k->dict != NULL &&
        PyDict_GetItemString(k->dict, "_variant") != NULL) {
      /* the argument's type wins: a variant compiled for an array */
      Py_XDECREF(t);
      Py_XDECREF(v);
      Py_XDECREF(tb);
      return ASCPY_ARRAY_FOR_NUMBER;
    }
    PyErr_Format(PyExc_TypeError,
                 "%S (line %d uses it as a number, and no line indexes "
                 "it or uses it as an array; to pass an array, index it "
                 "or annotate it, e.g. asc.Tensor[asc.float64, 2])",
                 v, p->use_line);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    return -1;
  }
  if (p->generic) {
    slot->s = s;
    return 0;
  }
  return scalar_to_raw(&s, p->dtype, slot->raw, p->what);
}

/* Puts each argument (positional, then by keyword) under its parameter. */
int ascpy_bind_args(KernelObject *k, Launch *L, PyObject *const *args,
                    Py_ssize_t nargs, PyObject *kwnames) {
  Py_ssize_t j, nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  int i;
  if (nargs > k->nparams) {
    PyErr_Format(PyExc_TypeError,
                 "kernel '%s' takes %d argument%s but %zd were given",
                 k->cname, k->nparams, k->nparams == 1 ? "" : "s", nargs);
    return -1;
  }
  for (j = 0; j < nargs; j++)
    L->objs[j] = args[j];
  for (j = 0; j < nkw; j++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, j);
    for (i = 0; i < k->nparams; i++)
      if (PyUnicode_Compare(key, PyTuple_GET_ITEM(k->param_names, i)) == 0)
        break;
    if (i == k->nparams) {
      PyErr_Format(PyExc_TypeError,
                   "kernel '%s' got an unexpected keyword argument '%U'",
                   k->cname, key);
      return -1;
    }
    if (L->objs[i] != NULL) {
      PyErr_Format(PyExc_TypeError,
                   "kernel '%s' got multiple values for argument '%U'",
                   k->cname, key);
      return -1;
    }
    L->objs[i] = args[nargs + j];
  }
  for (i = 0; i < k->nparams; i++) {
    if (L->objs[i] == NULL && k->dict != NULL) {
      /* the Python default of the parameter (kernel._defaults, filled by
       * the Python layer, or a function that makes them): passed like an
       * argument, so it specialises the same way; the dict keeps it alive
       * during the launch */
      PyObject *defs = PyDict_GetItemString(k->dict, "_defaults");
      if (defs != NULL && !PyDict_Check(defs) && PyCallable_Check(defs)) {
        /* made on first need: reading them parses the kernel text */
        PyObject *made;
        int rc;
        Py_INCREF(defs);
        made = PyObject_CallNoArgs(defs);
        Py_DECREF(defs);
        rc = made != NULL && PyDict_Check(made)
                     ? PyDict_SetItemString(k->dict, "_defaults", made)
                     : -1;
        Py_XDECREF(made);
        if (rc != 0) {
          if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "kernel '%s': its defaults are not a dict",
                         k->cname);
          return -1;
        }
        defs = PyDict_GetItemString(k->dict, "_defaults");
      }
      if (defs != NULL && PyDict_Check(defs))
        L->objs[i] =
            PyDict_GetItem(defs, PyTuple_GET_ITEM(k->param_names, i));
    }
    if (L->objs[i] == NULL) {
      PyErr_Format(PyExc_TypeError,
                   "kernel '%s' missing argument for parameter '%U'",
                   k->cname, PyTuple_GET_ITEM(k->param_names, i));
      return -1;
    }
  }
  return 0;
}
