/*
 * Test driver for IR-in/IR-out pass tests (tests/scripts/ir_passes.sh):
 *
 *   ir_pass_driver [--passes=fold,dce | --pipeline] [--emit=ir|c] FILE.ir
 *
 * Parses FILE.ir, runs the named passes in order (none by default, the
 * standard pipeline with --pipeline), and prints the IR or the generated C
 * on stdout.  Errors go to stderr with exit status 1.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cctx.h"
#include "compiler/emit_c.h"
#include "compiler/ir/ir.h"
#include "compiler/passes/passes.h"

typedef struct job {
  const char *passes, *emit, *text;
  size_t len;
  bool full;
  asc__buf *out;
} job;

static void work(asc__cctx *c, const job *j) {
  asc__irmodule *m = asc__ir_parse(c, j->text, j->len);
  if (j->passes != NULL || j->full) {
    asc__compile_opts o;
    asc__compile_opts_init(&o);
    o.only = j->full ? NULL : j->passes;
    o.verify = true;
    asc__cctx_set_opts(c, &o);
    asc__ir_pipeline(c, m);
  } else {
    for (int32_t k = 0; k < m->nfuncs; k++)
      asc__ir_verify(c, m->funcs[k], NULL);
  }
  if (strcmp(j->emit, "c") == 0)
    asc__emit_module(c, m, NULL, j->out);
  else
    asc__ir_print_module(j->out, m);
}

/* The catch point: 0, or 1 after a diagnosed failure. */
static int guarded(asc__cctx *c, const job *j) {
  jmp_buf jb;
  c->catch_point = &jb;
  if (setjmp(jb) == 0) {
    work(c, j);
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  job j;
  const char *file = NULL;
  char *text;
  size_t len = 0;
  asc__cctx c;
  asc__buf out;
  int rc;

  memset(&j, 0, sizeof j);
  j.emit = "ir";
  for (int k = 1; k < argc; k++) {
    if (strncmp(argv[k], "--passes=", 9) == 0)
      j.passes = argv[k] + 9;
    else if (strcmp(argv[k], "--pipeline") == 0)
      j.full = true;
    else if (strncmp(argv[k], "--emit=", 7) == 0)
      j.emit = argv[k] + 7;
    else
      file = argv[k];
  }
  if (file == NULL) {
    fprintf(stderr, "usage: ir_pass_driver [--passes=LIST|--pipeline] "
                    "[--emit=ir|c] FILE.ir\n");
    return 2;
  }
  text = asc__read_file(file, &len);
  if (text == NULL) {
    fprintf(stderr, "ir_pass_driver: cannot read %s\n", file);
    return 2;
  }
  asc__cctx_init(&c, file, text, len, 1);
  asc__buf_init(&out);
  j.text = text;
  j.len = len;
  j.out = &out;
  rc = guarded(&c, &j);
  if (rc == 0)
    fputs(asc__buf_str(&out), stdout);
  else
    fputs(asc__buf_str(&c.diag), stderr);
  asc__buf_free(&out);
  asc__cctx_free(&c);
  free(text);
  return rc;
}
