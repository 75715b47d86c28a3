/*
 * C emission: an IR module -> one C translation unit that exports
 * asc_module_v1 (kernel_abi.h).  docs/ir.md ("Generated C") describes the
 * shape of the output.
 */
#ifndef ASC_EMIT_C_H
#define ASC_EMIT_C_H

#include <stdbool.h>

#include "compiler/ir/ir.h"

/* The Python source the IR came from, for the per-line comments (text may
 * be NULL: comments then say only the line number), and code options. */
typedef struct asc__emit_src {
  const char *text;
  size_t len;
  int32_t first_line;   /* line number of text's first line */
  /* Tensor arguments may overlap (the same array passed twice, one of them
   * written): drop `restrict` from the data pointers.  The launcher decides
   * (it sees the pointers) and keys the specialisation with it. */
  bool may_alias;
} asc__emit_src;

/* Appends the C of every function of m to out.  Internal errors unwind to
 * c's catch point. */
void asc__emit_module(asc__cctx *c, const asc__irmodule *m,
                      const asc__emit_src *src, asc__buf *out);

#endif /* ASC_EMIT_C_H */
