/*
 * The system C compiler, run as a child process: uv_spawn on a private
 * uv_loop with an argv (never a shell), stdin on /dev/null, stdout and
 * stderr captured together, and a timeout after which the compiler's whole
 * process group is killed.
 *
 * Configuration comes from the environment, read at each call:
 *   ASC_CC             compiler command (first word resolved on PATH; more
 *                      words are leading arguments, as in "ccache gcc");
 *                      default ASC_DEFAULT_CC (the compiler libasc was built
 *                      with), else "cc"
 *   ASC_CFLAGS         extra flags, split on whitespace (no quoting), placed
 *                      after the default flags so they win
 *   ASC_CC_TIMEOUT_MS  per-compilation limit, default 60000
 *
 * The identity of a compiler (resolved path + `--version` output) is
 * computed once per process per distinct ASC_CC value and kept until exit.
 */
#ifndef ASC_CC_H
#define ASC_CC_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/base.h"

typedef struct asc__cc asc__cc;

#define ASC_CC_DEFAULT_TIMEOUT_MS 300000

/* The compiler ASC_CC names now, resolved and identified (thread-safe; the
 * object lives until process exit and is shared).  A compiler that cannot
 * be found or run returns ascErrorInternal naming it. */
ascError_t asc__cc_get(const asc__cc **out);

/* Absolute path of the compiler program. */
const char *asc__cc_path(const asc__cc *cc);

/* What the C compiler's identity and flags are made of, without running
 * it (the kernel cache's index keys, docs/cache.md "Index"): ASC_CC, the
 * path, real path and file identity (device, inode, size, modification
 * and change times) of each program it names, ASC_CFLAGS and
 * ASC_VECMATH, appended to out.  False when the compiler is not found. */
bool asc__cc_stamp(asc__buf *out);
/* SLEEF's library as kernels link it now (NULL: none; docs/vecmath.md). */
const char *asc__cc_vecmath_lib(const asc__cc *cc);
/* "path\nrealpath\n<output of --version>", the cache-key component. */
const char *asc__cc_identity(const asc__cc *cc);

/* Per-compilation options chosen by the caller (kernel debug options). */
typedef struct asc__cc_opts {
  int opt_level;    /* 0..3; -1 = default (-O3) */
  int debug;        /* adds -g; with opt_level -1 uses -O1 */
  unsigned fastmath; /* ASC_FASTMATH_* bits: the flags that grant them */
  /* Ahead-of-time builds (ascc) only; the JIT leaves it NULL. */
  const char *march; /* -march=VALUE instead of -march=native; "" drops
                        -march altogether (the compiler's default target) */
} asc__cc_opts;

/* The flags a compilation by cc with opts uses now (defaults, opts,
 * ASC_CFLAGS), each followed by '\n', appended to out: the cache-key
 * component. */
void asc__cc_flags(const asc__cc *cc, const asc__cc_opts *opts,
                   asc__buf *out);

/* The target CPU (machine name and feature flags), computed once: a
 * cache-key component, since default flags include -march=native. */
const char *asc__cc_cpu_features(void);

/* Writes text to dir/name.c and compiles it into the shared object
 * dir/name.so.  On success the .c file is removed.  On failure the .c file
 * is kept and the error message names it: ascErrorInternal with the
 * compiler's diagnostics, ascErrorTimeout after the time limit (the
 * compiler is killed), ascErrorOutOfMemory.  When dir cannot be written
 * (writing the .c fails, or the compiler reports a full disk, exceeded
 * quota or read-only file system) it returns ascErrorCache and keeps
 * nothing, so the kernel cache can move to another directory.  opts may be NULL.  *so_path,
 * when so_path is not NULL, receives the output path (asc__free it). */
ascError_t asc__cc_build(const asc__cc *cc, const asc__cc_opts *opts,
                         const char *dir, const char *name, const char *text,
                         size_t len, char **so_path);

/* Compiles the existing file c_path into the shared object so_path;
 * diagnostics (stdout and stderr) are appended to diag.  Errors as
 * asc__cc_build, but the message does not repeat the diagnostics. */
ascError_t asc__cc_compile(const asc__cc *cc, const asc__cc_opts *opts,
                           const char *c_path, const char *so_path,
                           asc__buf *diag);

/* Runs argv[0] (a path, or a name looked up on PATH) with argv, output
 * captured into out (at most ASC_CC_MAX_OUTPUT bytes kept), a time limit
 * in milliseconds.  *status receives the exit status, or 128 + signal.
 * Returns ascErrorTimeout when killed at the limit, ascErrorInternal when
 * it could not be started (errno text in the message). */
#define ASC_CC_MAX_OUTPUT ((size_t)1 << 20)
ascError_t asc__run_process(char *const *argv, uint64_t timeout_ms,
                            asc__buf *out, int *status);

/* A way for another thread to stop the child processes one thread runs
 * (the kernel cache's background builds, stopped at process exit).
 * After asc__run_use_canceller(c) on a thread, its asc__run_process
 * calls register with c; asc__run_cancel(c) kills the process group of
 * the run in progress (from its own loop, so never a reaped process's
 * reused id) and makes every later run on that thread return
 * ascErrorCancelled at once; asc__cc_build then keeps no file.
 * asc__run_canceller_init makes c usable (again: in a fork child). */
typedef struct asc__run_canceller {
  uv_mutex_t lock;
  void *run;        /* the registered run in progress, or NULL */
  bool cancelled;
} asc__run_canceller;
void asc__run_canceller_init(asc__run_canceller *c);
void asc__run_use_canceller(asc__run_canceller *c);
void asc__run_cancel(asc__run_canceller *c);

#endif /* ASC_CC_H */
