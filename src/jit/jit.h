/*
 * From generated C to a loaded kernel: cache key, kernel cache, C
 * compiler, dlopen.
 *
 * The key is computed from the *inputs* of code generation (Python source,
 * signature, frozen globals, options, compiler, flags, CPU), so a cache hit
 * skips type inference, lowering, passes and emission entirely: emit() runs
 * only on a miss, inside the cache's per-key lock.
 */
#ifndef ASC_JIT_H
#define ASC_JIT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "asc/asc.h"
#include "jit/cache.h"
#include "jit/cc.h"
#include "jit/driver.h"
#include "base/base.h"
#include "asc/kernel_abi.h"

/* Version of the generated code's conventions beyond the ABI header (the
 * shape of emitted C, runtime helpers it expects).  Part of every key: bump
 * it when emit_c changes what it produces for the same input. */
#define ASC_CODEGEN_VERSION 8

/* Everything besides compiler, flags and CPU that determines the code. */
typedef struct asc__jit_inputs {
  const char *kernel_name;
  const char *source;       /* text of the kernel and every helper it calls */
  size_t source_len;
  const char *signature;    /* canonical specialisation text */
  const ascGlobalValue *globals;
  int nglobals;
  const ascCompileOptions *opts;  /* may be NULL */
} asc__jit_inputs;

/* Produces the C translation unit (appended to out).  Runs on a miss only.
 * Compile errors return ascErrorCompile with the diagnostics set. */
typedef ascError_t (*asc__jit_emit_fn)(void *ud, asc__buf *out);

/* A loaded shared object. */
typedef struct asc__jit_lib {
  uv_lib_t lib;
  const asc_module_desc *module;
  char *path;
} asc__jit_lib;

/* The C compiler options that opts asks for. */
void asc__jit_cc_opts(const ascCompileOptions *opts, asc__cc_opts *out);

/* The cache key of in, compiled by cc with ccopts. */
void asc__jit_key(asc__cache_key *k, const asc__cc *cc,
                  const asc__cc_opts *ccopts, const asc__jit_inputs *in);

/* Finds or builds (emit + cc) the shared object of in in cache (NULL: the
 * process's cache), loads it and returns the descriptor of
 * in->kernel_name in it.  *lib receives the loaded object
 * (asc__jit_unload it after the last launch). */
ascError_t asc__jit_load(asc__cache *cache, const asc__jit_inputs *in,
                         asc__jit_emit_fn emit, void *ud, asc__jit_lib **lib,
                         const asc_kernel_desc **desc);

/* Loads the module file at path and checks its ABI version. */
ascError_t asc__jit_open(const char *path, asc__jit_lib **lib);
void asc__jit_unload(asc__jit_lib *lib);

#endif /* ASC_JIT_H */
