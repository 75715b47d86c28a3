/*
 * libFuzzer target: type inference.  The input's first line is a launch
 * signature without its name ("(f32[1], i64)"), the rest kernel source;
 * every kernel of the module is typed for that signature and dumped.  Any
 * input must end typed (every slot concrete) or with diagnostics -- never a
 * crash, a leak, an internal error or unbounded recursion.  Roughly one
 * input in eight also runs with an allocation failure injected.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/front/frontend.h"
#include "compiler/types/infer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct countdown {
  long left;
} countdown;

static bool fail_at(size_t size, void *ud) {
  countdown *c = ud;
  (void)size;
  return c->left-- == 0;
}

static void one(const char *sigtext, const char *text, size_t len,
                bool injected) {
  asc__cctx c;
  jmp_buf jb;

  asc__cctx_init(&c, "fuzz.py", text, len, 1);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__ast_module *m = asc__frontend(&c, NULL, 0);
    asc__sig *sig = asc__sig_parse(&c, sigtext);
    for (int i = 0; sig != NULL && i < m->nfuncs && i < 4; i++) {
      asc__ast_func *k = m->funcs[i];
      ascKernelParamInfo info[64];
      if (k->kind != ASC_FUNC_KERNEL)
        continue;
      if (k->nparams <= 64)
        asc__kernel_params(&c, k, info);
      asc__infer_kernel(&c, m, k, sig);
    }
  }
  /* an internal error is a bug unless an allocation failure caused it */
  if (c.fail == ASC_FAIL_INTERNAL && !injected)
    abort();
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
  one(sig, text, len, false);
  if (size > 0 && (data[0] & 7) == 0) {
    countdown cd = {(long)(data[size - 1]) * 5};
    asc__set_alloc_fail_hook(fail_at, &cd);
    one(sig, text, len, true);
    asc__set_alloc_fail_hook(NULL, NULL);
  }
  return 0;
}
