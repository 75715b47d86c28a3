/*
 * libFuzzer target: the back end.  Input as for fuzz_types (first line a
 * signature without its name, then kernel source); every kernel that types
 * cleanly is lowered, optimised (with the verifier after each pass) and
 * emitted as C.  Once inference has succeeded nothing may fail internally:
 * lowering reports unsupported constructs as diagnostics, and the passes
 * and the emitter must accept whatever lowering builds.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/front/frontend.h"
#include "compiler/types/infer.h"
#include "compiler/compile.h"
#include "compiler/passes/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *sigtext, const char *text, size_t len) {
  asc__cctx c;
  jmp_buf jb;
  asc__buf out;
  volatile int typed_ok = 0;

  asc__cctx_init(&c, "fuzz.py", text, len, 1);
  asc__buf_init(&out);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__ast_module *m = asc__frontend(&c, NULL, 0);
    asc__sig *sig = asc__sig_parse(&c, sigtext);
    asc__compile_opts o;
    asc__compile_opts_init(&o);
    o.verify = true;
    asc__cctx_set_opts(&c, &o);
    for (int i = 0; sig != NULL && i < m->nfuncs && i < 4; i++) {
      asc__ast_func *k = m->funcs[i];
      if (k->kind != ASC_FUNC_KERNEL)
        continue;
      typed_ok = 1;
      asc__compile_in in = {.module = m, .kernel = k, .sig = sig,
                            .stop = ASC_STOP_C};
      if (!asc__compile_kernel(&c, &in, NULL, &out))
        typed_ok = 0;
    }
  }
  if (c.fail == ASC_FAIL_INTERNAL && typed_ok)
    abort();
  asc__buf_free(&out);
  asc__cctx_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nl = memchr(data, '\n', size);
  size_t siglen = nl ? (size_t)(nl - data) : 0;
  char sig[256];
  const char *text = nl ? (const char *)nl + 1 : (const char *)data;
  size_t len = nl ? size - siglen - 1 : size;

  if (siglen >= sizeof sig)
    siglen = sizeof sig - 1;
  memcpy(sig, data, siglen);
  sig[siglen] = '\0';
  if (memchr(sig, '\0', siglen) != NULL)
    return 0;
  one(sig, text, len);
  return 0;
}
