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
 * `kern(*args)` launches one block on the default stream and waits (GIL
 * released); `kern[blocks, stream](*args)` queues and returns at once,
 * keeping the arguments alive in the stream's pending records.
 */
#include "_asc.h"

#include <math.h>
#include <string.h>

#include "structmember.h"

/* Kernels with at most this many parameters marshal on the stack. */
#define STACK_PARAMS 16

typedef struct {
  int is_tensor;
  int generic;
  int constexpr_;
  ascDataType dtype; /* ascDataTypeCount when generic */
  int ndim;          /* -1 when generic */
  int written;       /* the kernel may store through it: needs writable memory */
  char *what;        /* "kernel 'k': parameter 'x'", for messages */
} ParamInfo;

typedef struct {
  PyObject_HEAD
  ascModule_t handle;
  PyObject *filename;
  PyObject *weakrefs;
} ModuleObject;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  ascKernel_t handle;   /* NULL until bound */
  PyObject *module;     /* ModuleObject */
  PyObject *name;       /* str */
  char *cname;          /* UTF-8 name for messages */
  int nparams;
  ParamInfo *params;    /* PyMem */
  PyObject *param_names; /* tuple of str */
  PyObject *dict;
  PyObject *weakrefs;
} KernelObject;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  KernelObject *kernel;
  ascpy_Stream *stream;
  uint32_t blocks;
} LauncherObject;

static PyTypeObject ModuleType, KernelType, LauncherType;

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

/* DLPack's ABI (dlpack.h, v0.x "dltensor" capsules), declared here because
 * no header ships with the system. */
typedef struct {
  int32_t device_type;
  int32_t device_id;
} DLDevice_;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType_;
typedef struct {
  void *data;
  DLDevice_ device;
  int32_t ndim;
  DLDataType_ dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor_;
typedef struct DLManagedTensor_ {
  DLTensor_ dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor_ *);
} DLManagedTensor_;
enum { kDLCPU_ = 1, kDLInt_ = 0, kDLUInt_ = 1, kDLFloat_ = 2,
       kDLBfloat_ = 4, kDLBool_ = 6 };

/* What one launch owns until it is queued or finished. */
typedef struct {
  int n;
  PyObject **objs;   /* borrowed: the argument of each parameter */
  void **argv;
  union slot {
    ascTensor t;
    ascScalar s;
    int64_t raw[2];
  } *slots;
  Py_buffer *bufs;   /* open exports, nbufs of them */
  int nbufs;
  PyObject **holds;  /* new references (DLPack capsules), nholds */
  int nholds;
  /* storage for small kernels */
  PyObject *objs_s[STACK_PARAMS];
  void *argv_s[STACK_PARAMS];
  union slot slots_s[STACK_PARAMS];
  Py_buffer bufs_s[STACK_PARAMS];
  PyObject *holds_s[STACK_PARAMS];
} Launch;

static int launch_init(Launch *L, int n) {
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

static void launch_release(Launch *L) {
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

static int dlpack_dtype(const DLDataType_ *d) {
  if (d->lanes != 1)
    return -1;
  switch (d->code) {
  case kDLInt_:
    return d->bits == 8 ? ascInt8 : d->bits == 16 ? ascInt16
           : d->bits == 32 ? ascInt32 : d->bits == 64 ? ascInt64 : -1;
  case kDLUInt_:
    return d->bits == 8 ? ascUInt8 : d->bits == 16 ? ascUInt16
           : d->bits == 32 ? ascUInt32 : d->bits == 64 ? ascUInt64 : -1;
  case kDLFloat_:
    return d->bits == 16 ? ascFloat16 : d->bits == 32 ? ascFloat32
           : d->bits == 64 ? ascFloat64 : -1;
  case kDLBfloat_:
    return d->bits == 16 ? ascBFloat16 : -1;
  case kDLBool_:
    return d->bits == 8 ? ascBool : -1;
  default:
    return -1;
  }
}

static int tensor_from_dlpack(KernelObject *k, int i, PyObject *o,
                              ascTensor *t, Launch *L) {
  PyObject *fn = PyObject_GetAttrString(o, "__dlpack__");
  PyObject *cap;
  DLManagedTensor_ *m;
  DLTensor_ *d;
  Py_ssize_t sh[ASC_MAX_DIMS], st[ASC_MAX_DIMS];
  int dt, j, itemsize;
  if (fn == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
      return -1;
    PyErr_Clear();
    return 0;
  }
  cap = PyObject_CallNoArgs(fn);
  Py_DECREF(fn);
  if (cap == NULL)
    return -1;
  /* Not consumed (the name stays "dltensor"), so the capsule's own
   * destructor frees the tensor once the launch lets go of it. */
  L->holds[L->nholds++] = cap;
  if (!PyCapsule_IsValid(cap, "dltensor"))
    return param_error(k, i, PyExc_TypeError,
                       "got %s whose __dlpack__() is not a DLPack capsule",
                       Py_TYPE(o)->tp_name);
  m = PyCapsule_GetPointer(cap, "dltensor");
  if (m == NULL)
    return -1;
  d = &m->dl_tensor;
  if (d->device.device_type != kDLCPU_)
    return param_error(k, i, PyExc_ValueError,
                       "lives on DLPack device type %d; libasc needs CPU "
                       "memory",
                       (int)d->device.device_type);
  dt = dlpack_dtype(&d->dtype);
  if (dt < 0)
    return param_error(k, i, PyExc_TypeError,
                       "has DLPack dtype (code %u, %u bits, %u lanes), "
                       "which is not a libasc dtype",
                       d->dtype.code, d->dtype.bits, d->dtype.lanes);
  if (d->ndim < 0 || d->ndim > ASC_MAX_DIMS)
    return param_error(k, i, PyExc_ValueError,
                       "has %d dimensions; at most %d are supported",
                       (int)d->ndim, ASC_MAX_DIMS);
  itemsize = (int)ascDataTypeSize((ascDataType)dt);
  for (j = 0; j < d->ndim; j++) {
    sh[j] = (Py_ssize_t)d->shape[j];
    if (d->strides && __builtin_mul_overflow(d->strides[j],
                                             (Py_ssize_t)itemsize, &st[j]))
      return param_error(k, i, PyExc_ValueError,
                         "has a DLPack stride (%lld elements) whose size in "
                         "bytes overflows", (long long)d->strides[j]);
  }
  t->data = (char *)d->data + d->byte_offset;
  t->dtype = (ascDataType)dt;
  if (fill_shape(k, i, t, d->ndim, sh, d->strides ? st : NULL, itemsize) < 0)
    return -1;
  return 1;
}

static int marshal_tensor(KernelObject *k, int i, PyObject *o, ascTensor *t,
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

static int marshal_scalar(KernelObject *k, int i, PyObject *o,
                          union slot *slot) {
  const ParamInfo *p = &k->params[i];
  ascScalar s;
  if (ascpy_scalar_from_object(o, &s, p->what) < 0)
    return -1;
  if (p->generic) {
    slot->s = s;
    return 0;
  }
  return scalar_to_raw(&s, p->dtype, slot->raw, p->what);
}

/* Puts each argument (positional, then by keyword) under its parameter. */
static int bind_args(KernelObject *k, Launch *L, PyObject *const *args,
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
    if (L->objs[i] == NULL) {
      PyErr_Format(PyExc_TypeError,
                   "kernel '%s' missing argument for parameter '%U'",
                   k->cname, PyTuple_GET_ITEM(k->param_names, i));
      return -1;
    }
  }
  return 0;
}

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

static PyObject *launch(KernelObject *k, uint32_t blocks, ascpy_Stream *s,
                        int sync, PyObject *const *args, size_t nargsf,
                        PyObject *kwnames) {
  Launch L;
  ascError_t e;
  ascStream_t h;
  int i;
  if (kernel_ensure_bound(k) < 0 || ascpy_stream_check(s) < 0)
    return NULL;
  if (!sync && ascpy_stream_reap(s) < 0)
    return NULL;
  if (launch_init(&L, k->nparams) < 0)
    goto fail;
  if (bind_args(k, &L, args, PyVectorcall_NARGS(nargsf), kwnames) < 0)
    goto fail;
  for (i = 0; i < k->nparams; i++) {
    int r = k->params[i].is_tensor
                ? marshal_tensor(k, i, L.objs[i], &L.slots[i].t, &L)
                : marshal_scalar(k, i, L.objs[i], &L.slots[i]);
    if (r < 0)
      goto fail;
    L.argv[i] = &L.slots[i];
  }
  h = s->handle;
  Py_BEGIN_ALLOW_THREADS
  e = ascLaunchKernel(k->handle, blocks, L.argv, h);
  Py_END_ALLOW_THREADS
  if (e == ascSuccess && sync) {
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
  launch_release(&L);
  Py_RETURN_NONE;
fail:
  launch_release(&L);
  return NULL;
}

static PyObject *kernel_vectorcall(PyObject *self, PyObject *const *args,
                                   size_t nargsf, PyObject *kwnames) {
  return launch((KernelObject *)self, 1, ascpy_default_stream(), 1, args,
                nargsf, kwnames);
}

static PyObject *launcher_vectorcall(PyObject *self, PyObject *const *args,
                                     size_t nargsf, PyObject *kwnames) {
  LauncherObject *l = (LauncherObject *)self;
  return launch(l->kernel, l->blocks, l->stream, 0, args, nargsf, kwnames);
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
  if (so != Py_None && !PyObject_TypeCheck(so, &ascpy_StreamType)) {
    PyErr_Format(PyExc_TypeError,
                 "kernel[blocks, stream]: stream must be an asc.Stream or "
                 "None, got %s",
                 Py_TYPE(so)->tp_name);
    return NULL;
  }
  l = PyObject_New(LauncherObject, &LauncherType);
  if (l == NULL)
    return NULL;
  l->vectorcall = launcher_vectorcall;
  l->kernel = (KernelObject *)Py_NewRef(k);
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
        "{s:O,s:s,s:s,s:i,s:O,s:O}", "name",
        PyTuple_GET_ITEM(k->param_names, i), "kind",
        p->is_tensor ? "tensor" : "scalar", "dtype",
        p->dtype == ascDataTypeCount ? "generic" : ascDataTypeName(p->dtype),
        "ndim", p->ndim, "generic", p->generic ? Py_True : Py_False,
        "constexpr", p->constexpr_ ? Py_True : Py_False);
    if (d == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, d);
  }
  return t;
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
  PyObject_Free(l);
}

static PyObject *launcher_repr(LauncherObject *l) {
  return PyUnicode_FromFormat("<asc launcher %R blocks=%lu stream=%R>",
                              (PyObject *)l->kernel,
                              (unsigned long)l->blocks,
                              (PyObject *)l->stream);
}

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
      PyType_Ready(&LauncherType) < 0)
    return -1;
  if (PyModule_AddObjectRef(m, "Module", (PyObject *)&ModuleType) < 0 ||
      PyModule_AddObjectRef(m, "Kernel", (PyObject *)&KernelType) < 0)
    return -1;
  return 0;
}
