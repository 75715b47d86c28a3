/*
 * The compiler as the runtime sees it.  A module loaded from Python text
 * (ascModuleLoadPython) owns one asc__pymodule: the parsed and resolved
 * source, the kernels' parameter tables, and the specialisations compiled so
 * far (signature -> loaded shared object), looked up by hash at launch.
 *
 * Pipeline per specialisation (driver.c):
 *   text -> lex/parse/resolve (once per module) -> infer types for the
 *   signature -> lower to IR -> passes -> emit C -> cache lookup / cc ->
 *   dlopen -> asc_kernel_desc
 */
#ifndef ASC_DRIVER_H
#define ASC_DRIVER_H

#include <uv.h>

#include "asc/asc.h"
#include "base/base.h"
#include "asc/kernel_abi.h"

typedef struct asc__pymodule asc__pymodule;
struct asc__cache;

/* Parses and resolves text.  Compile errors return ascErrorCompile with the
 * diagnostics as the thread's last error message. */
ascError_t asc__pymodule_create(asc__pymodule **out, const char *text,
                                size_t len, const ascCompileOptions *opts);
/* Unloads every specialisation.  The caller guarantees no launch of the
 * module is still running. */
void asc__pymodule_destroy(asc__pymodule *m);

int asc__pymodule_nkernels(const asc__pymodule *m);
/* Kernel i's name and parameter table (owned by m). */
ascError_t asc__pymodule_kernel_info(const asc__pymodule *m, int i,
                                     ascKernelInfo *info);

/* The entry of kernel i specialised for these launch arguments (args as
 * in ascLaunchKernel, which has checked them: runtime/module.c is the one
 * place that does), compiled on first use, then found by a hash lookup
 * that does not touch the source.  Thread-safe; two threads asking for
 * the same new signature compile it once. */
ascError_t asc__pymodule_specialize(asc__pymodule *m, int i,
                                    void *const *args,
                                    const asc_kernel_desc **desc);

/* As asc__pymodule_specialize, for a launch on a device whose L1 data
 * cache is l1d_bytes (ascDeviceProp.l1CacheSize; 0: unknown): the
 * loop-nest passes size their tiles for it (asc__jit_l1d_bytes; the tile
 * sizes are part of the kernel cache key).  It counts when a
 * specialisation compiles: the table keeps one per signature, as every
 * device of a process has the one topology.  asc__pymodule_specialize
 * compiles for an unknown L1.  The specialisation is also pinned (*pin)
 * so that it cannot be evicted before the launch is queued; the launch
 * counts itself in *inflight (asc__stream_launch), which keeps the code
 * loaded until it has run; then asc__pymodule_unpin(*pin).
 * asc__pymodule_specialize pins and unpins at once: its *desc stays valid
 * only while at most ASC_MAX_LOADED_SPECIALIZATIONS are in use. */
struct asc__spec;
ascError_t asc__pymodule_specialize_pin(asc__pymodule *m, int i,
                                        void *const *args,
                                        uint64_t l1d_bytes,
                                        const asc_kernel_desc **desc,
                                        asc__inflight **inflight,
                                        struct asc__spec **pin);
void asc__pymodule_unpin(struct asc__spec *pin);

/* Specialisations loaded now (or being built), at most the limit
 * ASC_MAX_LOADED_SPECIALIZATIONS (read when the module is created, default
 * 1024); *evictions, if not NULL, how many were unloaded to stay under it. */
size_t asc__pymodule_loaded(asc__pymodule *m, uint64_t *evictions);

/* The L1 data cache size kernels are compiled for: ASC_L1_CACHE=BYTES
 * when set (tests and measurements; 1K .. 1G, suffixes as base/env.h
 * reads them, anything else warns once and is ignored), else device_l1d
 * (0: unknown, the passes' default, docs/optimizer.md "Tile sizes"). */
uint64_t asc__jit_l1d_bytes(uint64_t device_l1d);

/* What one specialisation is compiled for, worked out once per launch
 * (asc__pymodule_specialize_pin) and handed down to the compilation. */
struct asc__sig;
struct asc__compile_opts;
typedef struct asc__spec_req {
  /* the launch's signature (asc__sig_of_args, compiler/types/types.h),
   * and its canonical text, " aliased" added when may_alias: the key of
   * the module's table and of the kernel cache ("k(f32[2], i64=3)") */
  const struct asc__sig *sig;
  const char *text;
  /* tensor arguments overlap (asc__args_overlap): no restrict */
  bool may_alias;
  /* the compiler's options (asc__jit_compile_opts), in the cache key */
  const struct asc__compile_opts *opts;
} asc__spec_req;

/* The per-specialisation stages after the front end: infer types of kernel
 * `kernel` for r's signature, lower, run the passes and append the C
 * translation unit to out.  Runs only when neither this process nor the
 * disk cache has the specialisation.  User errors return ascErrorCompile
 * with diagnostics.  *fastmath receives the ASC_FASTMATH_* bits the C is
 * compiled with (asc__kernel_fastmath, from r->opts), and
 * ASC__STAGES_UNBOUNDED (jit.h) when the kernel's arguments do not bound
 * its work. */
typedef ascError_t (*asc__pymodule_stages_fn)(void *ud, asc__pymodule *m,
                                              int kernel,
                                              const asc__spec_req *r,
                                              asc__buf *out,
                                              unsigned *fastmath);

/* A module over text whose kernels (names, parameter tables; copied) are
 * already known, compiled by stages.  asc__pymodule_create builds one from
 * the front end's results; tests use it directly.  cache NULL means the
 * process's kernel cache. */
ascError_t asc__pymodule_create_with(asc__pymodule **out, const char *text,
                                     size_t len,
                                     const ascCompileOptions *opts,
                                     const ascKernelInfo *kernels,
                                     int nkernels,
                                     asc__pymodule_stages_fn stages,
                                     void *stages_ud,
                                     struct asc__cache *cache);

/* Whether two tensor arguments of a launch of k share memory (the data
 * they span overlaps). */
bool asc__args_overlap(const ascKernelInfo *k, void *const *args);

/* Module files (jit.c): how the runtime opens what ascModuleLoad loads. */

/* Opens path to be loaded (O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags, e.g.
 * O_NOFOLLOW): without blocking on a FIFO or reading a device, and only a
 * regular file.  *fd receives the descriptor.  ascErrorFileNotFound when
 * path does not exist, ascErrorInvalidModule for anything else, with a
 * message naming path. */
ascError_t asc__jit_open_file(const char *path, int flags, int *fd);

/* uv_dlopen of the file open at fd, through /proc/self/fd so that the
 * file checked on fd is the file loaded; by path where /proc is missing.
 * Returns uv_dlopen's result. */
int asc__jit_dlopen_fd(uv_lib_t *lib, int fd, const char *path);

/* How many of d's parameters are results (ASC_KPARAM_RESULT, last). */
int asc__kernel_results(const asc_kernel_desc *d);

/* ------------------------------------------------ ahead-of-time modules (aot.c)
 * Modules compiled ahead of time (`ascc --emit=so`): one shared object
 * holding several specialisations of each kernel, described by the optional
 * asc_specs_v1 table (kernel_abi.h).  The runtime shows one kernel per name
 * and, at launch, picks the entry whose signature the arguments fit.
 * Nothing here compiles: a launch no entry fits is an error that lists the
 * signatures the module has.
 */

typedef struct asc__aot asc__aot;

/* Groups the entries of md by kernel name and reads their signatures from
 * sd.  A table that does not describe md returns ascErrorInvalidModule
 * naming path. */
ascError_t asc__aot_create(asc__aot **out, const char *path,
                           const asc_module_desc *md,
                           const asc_kspecs_desc *sd);
void asc__aot_destroy(asc__aot *a);

int asc__aot_nkernels(const asc__aot *a);
/* Kernel i's name and parameter table (owned by a): tensors are generic
 * (their dtype and ndim select the entry), scalars as the source says. */
void asc__aot_kernel_info(const asc__aot *a, int i, ascKernelInfo *info);

/* The entry of kernel i the launch arguments fit (args as in
 * ascLaunchKernel, which has checked them): dtypes, ndims, layouts (a
 * contiguous entry needs contiguous tensors; a strided one takes any),
 * weak scalars, ConstExpr values, and overlapping tensors only for entries
 * compiled for them.  Several fits: the most specialised.  None:
 * ascErrorInvalidValue with the launch's signature and the module's. */
ascError_t asc__aot_select(const asc__aot *a, int i, void *const *args,
                           const asc_kernel_desc **desc);

/* ------------------------------------------------ the BLAS (blas.c)
 * The library asc_krt.gemm (runtime/blas.c) calls: dlopen()ed at the first
 * call, never linked (docs/decisions.md).  ASC_BLAS_LIB names it (that
 * library or none); else Debian's serial OpenBLAS, any libopenblas.so.0,
 * then BLIS.  A threaded build is set to one thread.  Functions are the
 * CBLAS ones, cast by the caller. */
typedef struct asc__blas {
  const char *name;             /* the path or soname loaded */
  void (*sgemm)(void);
  void (*dgemm)(void);
  void (*sgemv)(void);
  void (*dgemv)(void);
  /* cblas_ssyrk/dsyrk (a @ a.T, half the work); NULL when missing */
  void (*ssyrk)(void);
  void (*dsyrk)(void);
  /* a sequential OpenBLAS (openblas_get_parallel() == 0): Debian builds
   * it without USE_LOCKING, and calls from two threads at once can give
   * wrong results, so the caller makes one call at a time */
  int one_at_a_time;
} asc__blas;

/* The library, loaded on the first call (thread-safe); NULL when none
 * loads or lacks one of the four functions. */
const asc__blas *asc__jit_blas(void);
/* dlsym(h, name) as a function pointer (NULL when missing). */
void (*asc__jit_sym(void *h, const char *name))(void);
/* dlopen(name) as the BLAS is opened (an OpenBLAS told the kernels of this
 * CPU); NULL when it does not load. */
void *asc__jit_blas_open(const char *name);

/* ---------------------------------------------- LAPACK (lapack.c)
 * The library asc_krt.linalg (runtime/lapack.c) calls: dlopen()ed at its
 * first call, never linked (docs/decisions.md, "np.linalg on the LAPACK
 * of the BLAS").  ASC_LAPACK_LIB names it (that library or none); else
 * the OpenBLAS that asc__jit_blas loaded, Debian's OpenBLAS builds, then
 * Debian's reference liblapack.so.3.  Fortran routines of 32-bit
 * integers, one per dtype (s, d, c, z), cast by the caller. */
typedef struct asc__lapack {
  const char *name;
  void (*gesv[4])(void);
  void (*getrf[4])(void);
  void (*getrs[4])(void);   /* NULL where the library lacks them */
  void (*potrf[4])(void);
  void (*syevd[4])(void);   /* ssyevd, dsyevd, cheevd, zheevd */
  void (*gesdd[4])(void);
  void (*geqrf[4])(void);
  void (*orgqr[4])(void);   /* sorgqr, dorgqr, cungqr, zungqr */
  void (*gelsd[4])(void);
  /* a sequential OpenBLAS: one call at a time (asc__blas's rule) */
  int one_at_a_time;
} asc__lapack;

/* The library, loaded on the first call (thread-safe); NULL when none
 * loads or lacks one of the routines. */
const asc__lapack *asc__jit_lapack(void);

#endif /* ASC_DRIVER_H */
