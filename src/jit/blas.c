/*
 * Loading the BLAS that asc_krt.gemm calls (runtime/blas.c), at its first
 * call.  libasc links no BLAS (docs/decisions.md): without one, products
 * in kernels run the compiler's loops.
 */
#include "jit/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

fn asc__jit_sym(void *h, const char *name) {
  fn f;
  void *p = dlsym(h, name);
  /* POSIX: a data pointer from dlsym may be converted to a function
   * pointer; memcpy keeps -Wpedantic quiet */
  __builtin_memcpy(&f, &p, sizeof f);
  return f;
}

/* The OpenBLAS kernels for this CPU, named from its features.  Debian
 * 12's OpenBLAS (0.3.21) picks its kernels from a table of CPU models and
 * falls back to its oldest x86-64 ones (Prescott, SSE3) on a model it does
 * not know, such as the generic "Intel Xeon Processor" many virtual
 * machines report: its dgemm then runs 3-4x slower than the AVX-512 one
 * (1500^3 on one core: 1.2 s against 0.38 s).  NULL: let it choose. */
static const char *openblas_coretype(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  if (__builtin_cpu_supports("avx"))
    return "SandyBridge";
#endif
  return NULL;
}

/* dlopen(name), an OpenBLAS told its kernels (OPENBLAS_CORETYPE, read once
 * when the library starts) unless the user set them: set for the load
 * only, so that the process's environment is left as it was.  Runs under
 * `once` (here, or lapack.c's after this file's). */
void *asc__jit_blas_open(const char *name) {
  const char *core = NULL;
  void *h;
  if (strstr(name, "openblas") != NULL && getenv("OPENBLAS_CORETYPE") == NULL)
    core = openblas_coretype();
  if (core != NULL && setenv("OPENBLAS_CORETYPE", core, 0) != 0)
    core = NULL;
  h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (core != NULL)
    unsetenv("OPENBLAS_CORETYPE");
  return h;
}

static int try_load(const char *name) {
  void *h = asc__jit_blas_open(name);
  void (*set_threads)(int);
  fn st;
  if (h == NULL)
    return 0;
  lib.sgemm = asc__jit_sym(h, "cblas_sgemm");
  lib.dgemm = asc__jit_sym(h, "cblas_dgemm");
  lib.sgemv = asc__jit_sym(h, "cblas_sgemv");
  lib.dgemv = asc__jit_sym(h, "cblas_dgemv");
  if (!lib.sgemm || !lib.dgemm || !lib.sgemv || !lib.dgemv) {
    dlclose(h);
    return 0;
  }
  lib.ssyrk = asc__jit_sym(h, "cblas_ssyrk");
  lib.dsyrk = asc__jit_sym(h, "cblas_dsyrk");
  if (!lib.ssyrk || !lib.dsyrk)
    lib.ssyrk = lib.dsyrk = NULL;
  /* a threaded build: one thread per call, the team gives the rest */
  st = asc__jit_sym(h, "openblas_set_num_threads");
  if (st == NULL)
    st = asc__jit_sym(h, "bli_thread_set_num_threads");
  if (st != NULL) {
    set_threads = (void (*)(int))st;
    set_threads(1);
  }
  st = asc__jit_sym(h, "openblas_get_parallel");
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
