/*
 * ascc --emit=MODE: one function per mode, listed in the table in
 * emit_cmd.c.  Each stage adds its mode there (types, ir, c, so) with a
 * function in its own file.
 */
#ifndef ASCC_EMIT_H
#define ASCC_EMIT_H

#include <stdio.h>

#include "compiler/cctx.h"

typedef struct ascc_emit_args {
  const char *mode;
  const char *path;        /* the source file */
  const char *text;        /* its contents */
  size_t len;
  const char *signature;   /* --signature, NULL when absent */
  const char *out;         /* -o, NULL: stdout */
} ascc_emit_args;

/* Runs a stage over c (already initialised from the file, with its catch
 * point set) and appends its text form to out; may unwind through c.
 * Returns 0, or 2 for a usage problem it has reported on stderr. */
typedef int (*ascc_emit_fn)(const ascc_emit_args *a, asc__cctx *c,
                            asc__buf *out);

int ascc_emit_tokens(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_ast(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_types(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_ir(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_c(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);

#endif
