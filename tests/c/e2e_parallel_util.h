/*
 * Helpers of the end-to-end parallelism tests (tests/c/test_e2e_parallel*.c):
 * Python kernel text through ascModuleLoadPython and ascLaunchKernel,
 * tensor descriptors of any rank, source lines of markers in the text, and
 * the exact kernel-exception message of docs/abi.md.
 */
#ifndef ASC_E2E_PARALLEL_UTIL_H
#define ASC_E2E_PARALLEL_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static inline int e2p_cores(void) {
  ascDeviceProp p;
  ASSERT_OK(ascGetDeviceProperties(&p, 0));
  return p.cores;
}

/* Compiles text as file `file` (first line 1). */
static inline ascModule_t e2p_load(const char *text, const char *file,
                                   int boundsCheck) {
  ascCompileOptions o;
  ascModule_t m = NULL;
  memset(&o, 0, sizeof o);
  o.filename = file;
  o.firstLine = 1;
  o.boundsCheck = boundsCheck;
  ASSERT_OK(ascModuleLoadPython(&m, text, &o));
  return m;
}

static inline ascKernel_t e2p_kernel(ascModule_t m, const char *name) {
  ascKernel_t k = NULL;
  ASSERT_OK(ascModuleGetKernel(&k, m, name));
  return k;
}

/* A contiguous row-major tensor of ndim extents (the varargs, int64_t). */
static inline ascTensor e2p_tensor(void *data, ascDataType dt, int ndim, ...) {
  ascTensor t;
  va_list ap;
  int64_t stride = 1;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dt;
  t.ndim = ndim;
  va_start(ap, ndim);
  for (int k = 0; k < ndim; k++)
    t.shape[k] = va_arg(ap, int64_t);
  va_end(ap);
  for (int k = ndim - 1; k >= 0; k--) {
    t.strides[k] = stride;
    stride *= t.shape[k];
  }
  return t;
}

static inline ascTensor e2p_t1(void *data, ascDataType dt, int64_t n) {
  return e2p_tensor(data, dt, 1, n);
}

/* 1-based line of the first line of text that contains needle. */
static inline int e2p_line(const char *text, const char *needle) {
  const char *p = strstr(text, needle);
  int line = 1;
  if (p == NULL)
    fail_msg("marker '%s' not in the kernel text", needle);
  for (const char *q = text; q < p; q++)
    line += *q == '\n';
  return line;
}

/* The stream's next synchronisation reports exactly
 * "<file>:<line>: kernel '<name>' raised <cls>: <msg>". */
static inline void e2p_expect_exc(ascStream_t s, const char *file, int line,
                                  const char *kernel, const char *cls,
                                  const char *msg) {
  char want[512];
  snprintf(want, sizeof want, "%s:%d: kernel '%s' raised %s: %s", file, line,
           kernel, cls, msg);
  ASSERT_ERR(ascStreamSynchronize(s), ascErrorKernelException);
  assert_string_equal(ascGetLastErrorMessage(), want);
}

static inline void *e2p_alloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  assert_non_null(p);
  return p;
}

#endif /* ASC_E2E_PARALLEL_UTIL_H */
