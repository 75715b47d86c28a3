/*
 * The compiler's options from the environment: the one place that reads
 * the variables which change what the compiler does (compiler/options.h;
 * the compiler itself reads none).  Each compilation reads them afresh, so
 * a program may change them between compilations; the kernel cache key
 * holds the values the code was generated with.
 */
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "compiler/passes/passes.h"
#include "jit/jit.h"

/* ASC_COMPILE_TIMEOUT_MS, read as ASC_CC_TIMEOUT_MS is: a positive
 * decimal number of milliseconds; anything else gives the default.  At
 * most a day, so the deadline cannot overflow. */
static asc__env_num timeout_env = {"ASC_COMPILE_TIMEOUT_MS",
                                   ASC_COMPILE_DEFAULT_TIMEOUT_MS, 1,
                                   86400000u, ASC__ENV_CLAMP, false};

/* ASC_COMPILE_MEMORY: bytes, with the binary suffixes (512M, 8G), from
 * 1 MiB (less fails the smallest kernels) up. */
static asc__env_num memory_env = {"ASC_COMPILE_MEMORY",
                                  ASC_COMPILE_DEFAULT_MEMORY, 1u << 20,
                                  UINT64_MAX / 2, ASC__ENV_SUFFIXES, false};

/* ASC_NTSTORE: unset, empty, 1 or not a number: the default; 0: never; a
 * larger number: that many bytes. */
static uint64_t ntstore_from_env(void) {
  const char *s = getenv("ASC_NTSTORE");
  char *end;
  unsigned long long v;

  if (s == NULL || *s == '\0')
    return ASC_NTSTORE_DEFAULT_BYTES;
  v = strtoull(s, &end, 10);
  if (*end != '\0' || s[0] == '-')
    return ASC_NTSTORE_DEFAULT_BYTES;
  return v == 1 ? ASC_NTSTORE_DEFAULT_BYTES : v;
}

void asc__jit_compile_opts(asc__compile_opts *o, unsigned fastmath,
                           uint64_t l1d_bytes) {
  const asc__pass *t;
  const char *s;
  int n;

  asc__compile_opts_init(o);
  o->code.fastmath = fastmath;
  asc__compile_opts_set_l1d(o, l1d_bytes);
  t = asc__pass_table(&n);
  for (int k = 0; k < n; k++)
    if (t[k].off_env != NULL && (s = getenv(t[k].off_env)) != NULL &&
        strcmp(s, "0") == 0)
      o->code.passes_off |= (uint64_t)1 << k;
  o->code.ntstore_min_bytes = ntstore_from_env();
  s = getenv("ASC_FUSE");
  o->code.nofuse = s != NULL && strcmp(s, "0") == 0;
  /* 1-D masks by default: their loop is chunked and vectorises; the
   * loop over a mask of more axes does not, and measured slower than
   * making the selection (docs/optimizer.md) */
  s = getenv("ASC_FUSE_SELECT");
  o->code.selfuse = s == NULL ? 1 : strcmp(s, "1") == 0 ? 2 : 0;
  s = getenv("ASC_PAIRWISE");
  o->code.corder_sums = s != NULL && strcmp(s, "0") == 0;
  o->timeout_ms = asc__env_u64(&timeout_env);
  o->memory_bytes = asc__env_u64(&memory_env);
  o->dump = getenv("ASC_DUMP");
  s = getenv("ASC_VERIFY");
  o->verify = s != NULL && strcmp(s, "1") == 0;
}
