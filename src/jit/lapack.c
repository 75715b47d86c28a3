/*
 * Loading the LAPACK that asc_krt.linalg calls (runtime/lapack.c), at its
 * first call.  libasc links none (docs/decisions.md, "np.linalg on the
 * LAPACK of the BLAS"): Debian's OpenBLAS exports LAPACK's routines next
 * to the BLAS, so the library that matrix products already use serves
 * np.linalg too; without one, np.linalg in a kernel raises at run time.
 */
#include "jit/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ASC_MULTIARCH
#define ASC_MULTIARCH "x86_64-linux-gnu"
#endif

static const char *const candidates[] = {
    "/usr/lib/" ASC_MULTIARCH "/openblas-pthread/libopenblas.so.0",
    "/usr/lib/" ASC_MULTIARCH "/openblas-serial/libopenblas.so.0",
    "libopenblas.so.0",
    "/usr/lib/" ASC_MULTIARCH "/lapack/liblapack.so.3",
    "liblapack.so.3",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static asc__lapack lib;
static const asc__lapack *loaded;

typedef void (*fn)(void);

/* The four routines s<name>_, d<name>_, c<alt>_, z<alt>_ into f; false
 * when one is missing. */
static int family(void *h, fn *f, const char *name, const char *alt) {
  static const char pre[4] = {'s', 'd', 'c', 'z'};
  char buf[32];
  for (int i = 0; i < 4; i++) {
    snprintf(buf, sizeof buf, "%c%s_", pre[i], i < 2 ? name : alt);
    f[i] = asc__jit_sym(h, buf);
    if (f[i] == NULL)
      return 0;
  }
  return 1;
}

static int try_load(const char *name) {
  void *h = asc__jit_blas_open(name);
  fn st;
  if (h == NULL)
    return 0;
  if (!family(h, lib.gesv, "gesv", "gesv") ||
      !family(h, lib.getrf, "getrf", "getrf") ||
      !family(h, lib.potrf, "potrf", "potrf") ||
      !family(h, lib.syevd, "syevd", "heevd") ||
      !family(h, lib.gesdd, "gesdd", "gesdd") ||
      !family(h, lib.geqrf, "geqrf", "geqrf") ||
      !family(h, lib.orgqr, "orgqr", "ungqr") ||
      !family(h, lib.gelsd, "gelsd", "gelsd")) {
    dlclose(h);
    return 0;
  }
  /* getrs only serves the team's solve in slabs (runtime/lapack.c) */
  if (!family(h, lib.getrs, "getrs", "getrs"))
    memset(lib.getrs, 0, sizeof lib.getrs);
  /* an OpenBLAS not loaded for the BLAS yet: one thread per call, as
   * jit/blas.c sets it (the team gives the rest) */
  st = asc__jit_sym(h, "openblas_set_num_threads");
  if (st != NULL)
    ((void (*)(int))st)(1);
  st = asc__jit_sym(h, "openblas_get_parallel");
  lib.one_at_a_time = st != NULL && ((int (*)(void))st)() == 0;
  lib.name = name;
  loaded = &lib;
  return 1;   /* kept open for the life of the process */
}

static void load(void) {
  const char *env = getenv("ASC_LAPACK_LIB");
  const asc__blas *b;
  if (env != NULL && env[0] != '\0') {
    (void)try_load(env);   /* named: that library or none */
    return;
  }
  /* the BLAS's own library first (the same handle, already started) */
  b = asc__jit_blas();
  if (b != NULL && strstr(b->name, "openblas") != NULL && try_load(b->name))
    return;
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++)
    if (try_load(candidates[i]))
      return;
}

const asc__lapack *asc__jit_lapack(void) {
  /* the BLAS first, outside `once`: its load sets and clears
   * OPENBLAS_CORETYPE under its own once */
  (void)asc__jit_blas();
  pthread_once(&once, load);
  return loaded;
}
