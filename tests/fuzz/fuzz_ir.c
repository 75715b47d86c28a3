/*
 * libFuzzer target: IR text.  The parser diagnoses bad text and the
 * verifier rejects ill-formed IR (an internal error, by design: IR is
 * compiler-made); IR that verifies must then go through every pass and the
 * emitter without any failure.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cctx.h"
#include "compiler/emit_c.h"
#include "compiler/ir/ir.h"
#include "compiler/passes/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  asc__cctx c;
  jmp_buf jb;
  asc__buf out;
  asc__irmodule *volatile m = NULL;
  volatile int stage = 0;

  asc__cctx_init(&c, "fuzz.ir", (const char *)data, size, 1);
  asc__buf_init(&out);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    m = asc__ir_parse(&c, (const char *)data, size);
    for (int32_t k = 0; k < m->nfuncs; k++)
      asc__ir_verify(&c, m->funcs[k], NULL);
    stage = 1;
    {
      asc__compile_opts o;
      asc__compile_opts_init(&o);
      o.verify = true;
      asc__cctx_set_opts(&c, &o);
      asc__ir_pipeline(&c, m);
      asc__emit_module(&c, m, NULL, &out);
    }
  }
  if (stage == 1 && c.fail == ASC_FAIL_INTERNAL)
    abort();
  asc__buf_free(&out);
  asc__cctx_free(&c);
  return 0;
}
