/*
 * Loading the BLAS that asc_krt.gemm calls (runtime/blas.c), at its first
 * call.  libasc links no BLAS (docs/decisions.md): without one, products
 * in kernels run the compiler's loops.
 */
#include "jit/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#ifndef ASC_MULTIARCH
#define ASC_MULTIARCH "x86_64-linux-gnu"
#endif

/* The threaded OpenBLAS first: set to one thread it runs each call in the
 * calling thread and, built with locking, takes calls from several threads
 * at once; the sequential build does not (see one_at_a_time). */
static const char *const candidates[] = {
    "/usr/lib/" ASC_MULTIARCH "/openblas-pthread/libopenblas.so.0",
    "/usr/lib/" ASC_MULTIARCH "/openblas-serial/libopenblas.so.0",
    "libopenblas.so.0",
    "/usr/lib/" ASC_MULTIARCH "/blis-serial/libblis.so.4",
    "libblis.so.4",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static asc__blas lib;
static const asc__blas *loaded;

typedef void (*fn)(void);

static fn sym(void *h, const char *name) {
  fn f;
  void *p = dlsym(h, name);
  /* POSIX: a data pointer from dlsym may be converted to a function
   * pointer; memcpy keeps -Wpedantic quiet */
  __builtin_memcpy(&f, &p, sizeof f);
  return f;
}

static int try_load(const char *name) {
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  void (*set_threads)(int);
  fn st;
  if (h == NULL)
    return 0;
  lib.sgemm = sym(h, "cblas_sgemm");
  lib.dgemm = sym(h, "cblas_dgemm");
  lib.sgemv = sym(h, "cblas_sgemv");
  lib.dgemv = sym(h, "cblas_dgemv");
  if (!lib.sgemm || !lib.dgemm || !lib.sgemv || !lib.dgemv) {
    dlclose(h);
    return 0;
  }
  /* a threaded build: one thread per call, the team gives the rest */
  st = sym(h, "openblas_set_num_threads");
  if (st == NULL)
    st = sym(h, "bli_thread_set_num_threads");
  if (st != NULL) {
    set_threads = (void (*)(int))st;
    set_threads(1);
  }
  st = sym(h, "openblas_get_parallel");
  lib.one_at_a_time = st != NULL && ((int (*)(void))st)() == 0;
  lib.name = name;
  loaded = &lib;
  return 1;   /* kept open for the life of the process */
}

static void load(void) {
  const char *env = getenv("ASC_BLAS_LIB");
  if (env != NULL && env[0] != '\0') {
    (void)try_load(env);   /* named: that library or none */
    return;
  }
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++)
    if (try_load(candidates[i]))
      return;
}

const asc__blas *asc__jit_blas(void) {
  pthread_once(&once, load);
  return loaded;
}
