/*
 * libFuzzer target: lexer, parser, resolver and both dumps over arbitrary
 * bytes.  Any input must end in success or diagnostics -- never a crash, a
 * leak, or unbounded recursion.  Roughly one input in eight also runs with
 * an allocation failure injected at a point derived from the input.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler/front/frontend.h"
#include "compiler/front/lexer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct countdown {
  long left;
} countdown;

static bool fail_at(size_t size, void *ud) {
  countdown *c = ud;
  (void)size;
  return c->left-- == 0;
}

static void one(const char *text, size_t len) {
  asc__cctx c;
  jmp_buf jb;
  asc__buf out;
  ascGlobalValue g[1];

  memset(g, 0, sizeof g);
  g[0].name = "N";
  g[0].value.dtype = ascInt64;
  g[0].value.value.i = 4;

  asc__cctx_init(&c, "fuzz.py", text, len, 1);
  asc__buf_init(&out);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    int n;
    asc__token *t = asc__lex(&c, &n);
    asc__dump_tokens(t, n, &out);
  }
  asc__cctx_free(&c);

  asc__cctx_init(&c, "fuzz.py", text, len, 1);
  c.catch_point = &jb;
  if (setjmp(jb) == 0) {
    asc__ast_module *m = asc__frontend(&c, g, 1);
    asc__dump_ast(m, &out);
  }
  asc__cctx_free(&c);
  asc__buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  one((const char *)data, size);
  if (size > 0 && (data[0] & 7) == 0) {
    countdown cd = {(long)(data[size - 1]) * 3};
    asc__set_alloc_fail_hook(fail_at, &cd);
    one((const char *)data, size);
    asc__set_alloc_fail_hook(NULL, NULL);
  }
  return 0;
}
