/*
 * Shared by _asc_kernel.c (modules, kernels, launches) and _asc_args.c
 * (argument marshalling) and by nothing else.
 */
#ifndef ASCPY_KERNEL_H
#define ASCPY_KERNEL_H

#include "_asc.h"

/* Kernels with at most this many parameters marshal on the stack. */
#define STACK_PARAMS 16

typedef struct {
  int is_tensor;
  int generic;
  int constexpr_;
  ascDataType dtype; /* ascDataTypeCount when generic */
  int ndim;          /* -1 when generic */
  int written;       /* the kernel may store through it: needs writable memory */
  int number_ok;     /* a number may be passed: as a 0-d array */
  int use_line;      /* unannotated scalars: where the kernel uses it */
  char *what;        /* "kernel 'k': parameter 'x'", for messages */
} ParamInfo;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  ascKernel_t handle;   /* NULL until bound */
  PyObject *module;     /* ModuleObject */
  PyObject *name;       /* str */
  char *cname;          /* UTF-8 name for messages */
  int nparams;
  int nresults;          /* values the kernel returns */
  ParamInfo *params;    /* PyMem */
  PyObject *param_names; /* tuple of str */
  PyObject *dict;
  PyObject *weakrefs;
} KernelObject;

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

/* Sets up L for n parameters (on the stack when n <= STACK_PARAMS);
 * -1 with MemoryError set. */
int ascpy_launch_init(Launch *L, int n);
/* Releases the buffers and references L holds, and its storage. */
void ascpy_launch_release(Launch *L);
/* Puts each argument (positional, then by keyword) under its parameter. */
int ascpy_bind_args(KernelObject *k, Launch *L, PyObject *const *args,
                    Py_ssize_t nargs, PyObject *kwnames);
/* Argument o of parameter i as a tensor (t) or a scalar (slot); buffers
 * and references it needs stay in L until ascpy_launch_release.  -1 with
 * a Python exception set. */
int ascpy_marshal_tensor(KernelObject *k, int i, PyObject *o, ascTensor *t,
                         Launch *L);
/* ascpy_marshal_scalar's answer, with no exception set, when o is an array
 * for an unannotated parameter of a decorated kernel: the call goes to the
 * kernel's variant that takes that parameter as an array (_variant). */
#define ASCPY_ARRAY_FOR_NUMBER (-2)
int ascpy_marshal_scalar(KernelObject *k, int i, PyObject *o,
                         union slot *slot);

#endif /* ASCPY_KERNEL_H */
