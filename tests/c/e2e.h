/*
 * Helpers for the end-to-end tests (tests/c/test_e2e_*.c): Python kernel
 * text -> ascModuleLoadPython -> ascLaunchKernel -> results compared with
 * a reference computed in C.
 */
#ifndef ASC_TEST_E2E_H
#define ASC_TEST_E2E_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The text of tests/c/e2e/<name> (malloc'd, NUL-terminated). */
static inline char *e2e_read_source(const char *name) {
  char path[1024];
  FILE *fp;
  long n;
  char *text;
  snprintf(path, sizeof path, "%s/tests/c/e2e/%s", ASC_SOURCE_DIR, name);
  fp = fopen(path, "rb");
  if (fp == NULL)
    fail_msg("cannot open %s", path);
  fseek(fp, 0, SEEK_END);
  n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  text = malloc((size_t)n + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)n, fp), (size_t)n);
  text[n] = '\0';
  fclose(fp);
  return text;
}

/* The 1-based number of the first line of text that contains needle
 * after the first occurrence of anchor (the start of text when NULL). */
static inline int e2e_line_of(const char *text, const char *anchor,
                              const char *needle) {
  const char *from = anchor ? strstr(text, anchor) : text, *p;
  int line = 1;
  if (from == NULL)
    fail_msg("'%s' not in the kernel text", anchor);
  p = strstr(from, needle);
  if (p == NULL)
    fail_msg("'%s' not in the kernel text", needle);
  for (const char *q = text; q < p; q++)
    line += *q == '\n';
  return line;
}

/* Loads Python text as a module named `file` (diagnostics and exception
 * messages use it). */
static inline ascModule_t e2e_load(const char *file, const char *text) {
  ascModule_t m = NULL;
  ascCompileOptions o;
  memset(&o, 0, sizeof o);
  o.filename = file;
  ASSERT_OK(ascModuleLoadPython(&m, text, &o));
  return m;
}

/* The group fixture of an end-to-end test file: tests/c/e2e/<name> loaded
 * as a module named <name> into *m (0), or its diagnostics printed (-1);
 * e2e_group_teardown unloads it. */
static inline int e2e_group_setup(ascModule_t *m, const char *name) {
  char *text = e2e_read_source(name);
  ascCompileOptions o;
  ascError_t err;
  memset(&o, 0, sizeof o);
  o.filename = name;
  err = ascModuleLoadPython(m, text, &o);
  free(text);
  if (err != ascSuccess)
    fprintf(stderr, "%s\n", ascGetLastErrorMessage());
  return err == ascSuccess ? 0 : -1;
}

static inline int e2e_group_teardown(ascModule_t m, void **state) {
  ascModuleUnload(m);
  return test_teardown(state);
}

static inline ascModule_t e2e_load_opts(const char *text,
                                        const ascCompileOptions *o) {
  ascModule_t m = NULL;
  ASSERT_OK(ascModuleLoadPython(&m, text, o));
  return m;
}

/* Launches one block on the default stream and synchronises, failing the
 * test with the library's message on any error. */
#define E2E_RUN(m, name, ...)                                                \
  do {                                                                       \
    void *a_[] = {__VA_ARGS__};                                              \
    ascKernel_t k_ = test_kernel((m), (name));                               \
    ASSERT_OK(ascLaunchKernel(k_, 1, a_, NULL));                             \
    ASSERT_OK(ascStreamSynchronize(NULL));                                   \
  } while (0)

/* Launches and synchronises; returns the synchronising call's result (the
 * launch itself must succeed). */
static inline ascError_t e2e_run_err(ascModule_t m, const char *name,
                                     void **args) {
  ascKernel_t k = test_kernel(m, name);
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  return ascStreamSynchronize(NULL);
}

static inline ascTensor e2e_t1(void *data, ascDataType dt, int64_t n) {
  return test_tensor1(data, dt, n);
}

/* A row-major (contiguous) 2-D tensor. */
static inline ascTensor e2e_t2(void *data, ascDataType dt, int64_t r,
                               int64_t c) {
  ascTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dt;
  t.ndim = 2;
  t.shape[0] = r;
  t.shape[1] = c;
  t.strides[0] = c;
  t.strides[1] = 1;
  return t;
}

/* A 0-d tensor (one element). */
static inline ascTensor e2e_t0(void *data, ascDataType dt) {
  ascTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dt;
  t.ndim = 0;
  return t;
}

/* Scalar descriptors for unannotated (generic) scalar parameters. */
static inline ascScalar e2e_weak_int(int64_t v) {
  ascScalar s;
  memset(&s, 0, sizeof s);
  s.dtype = ascInt64;
  s.weak = 1;
  s.value.i = v;
  return s;
}

static inline ascScalar e2e_weak_float(double v) {
  ascScalar s;
  memset(&s, 0, sizeof s);
  s.dtype = ascFloat64;
  s.weak = 1;
  s.value.f = v;
  return s;
}

static inline ascScalar e2e_strong_int(ascDataType dt, int64_t v) {
  ascScalar s;
  memset(&s, 0, sizeof s);
  s.dtype = dt;
  s.value.i = v;
  return s;
}

static inline ascScalar e2e_strong_float(ascDataType dt, double v) {
  ascScalar s;
  memset(&s, 0, sizeof s);
  s.dtype = dt;
  s.value.f = v;
  return s;
}

/* ---------------------------------------------- 16-bit float references */

static inline float e2e_bf2f(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* float -> bfloat16, round to nearest even (NaN stays NaN). */
static inline uint16_t e2e_f2bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* ---------------------------------------------------- Python semantics */

static inline int64_t e2e_floordiv(int64_t a, int64_t b) {
  int64_t q, r;
  if (b == -1)
    return (int64_t)(0 - (uint64_t)a);
  q = a / b;
  r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    q--;
  return q;
}

static inline int64_t e2e_mod(int64_t a, int64_t b) {
  int64_t r;
  if (b == -1)
    return 0;
  r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/* CPython's float_divmod. */
static inline void e2e_fdivmod(double a, double b, double *fq, double *fm) {
  double m = fmod(a, b), div = (a - m) / b, q;
  if (m != 0) {
    if ((b < 0) != (m < 0)) {
      m += b;
      div -= 1.0;
    }
  } else {
    m = copysign(0.0, b);
  }
  if (div != 0) {
    q = floor(div);
    if (div - q > 0.5)
      q += 1.0;
  } else {
    q = copysign(0.0, a / b);
  }
  *fq = q;
  *fm = m;
}

/* Distance in units in the last place between two finite doubles. */
static inline uint64_t e2e_ulp64(double a, double b) {
  int64_t ia, ib;
  if (a == b)
    return 0;
  if (isnan(a) && isnan(b))
    return 0;
  memcpy(&ia, &a, 8);
  memcpy(&ib, &b, 8);
  if (ia < 0)
    ia = INT64_MIN - ia;
  if (ib < 0)
    ib = INT64_MIN - ib;
  return ia > ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
}

static inline uint32_t e2e_ulp32(float a, float b) {
  int32_t ia, ib;
  if (a == b)
    return 0;
  if (isnan(a) && isnan(b))
    return 0;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  if (ia < 0)
    ia = INT32_MIN - ia;
  if (ib < 0)
    ib = INT32_MIN - ib;
  return ia > ib ? (uint32_t)ia - (uint32_t)ib : (uint32_t)ib - (uint32_t)ia;
}

/* Asserts out[0..n) equals ref[0..n) for int64 arrays, naming the index. */
static inline void e2e_eq_i64(const int64_t *out, const int64_t *ref, int n,
                              const char *what) {
  for (int i = 0; i < n; i++)
    if (out[i] != ref[i])
      fail_msg("%s[%d]: got %lld, expected %lld", what, i,
               (long long)out[i], (long long)ref[i]);
}

static inline void e2e_eq_f64(const double *out, const double *ref, int n,
                              const char *what) {
  for (int i = 0; i < n; i++) {
    uint64_t a, b;
    memcpy(&a, &out[i], 8);
    memcpy(&b, &ref[i], 8);
    if (a != b && !(isnan(out[i]) && isnan(ref[i])))
      fail_msg("%s[%d]: got %.17g, expected %.17g", what, i, out[i],
               ref[i]);
  }
}

#endif /* ASC_TEST_E2E_H */
