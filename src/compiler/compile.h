/*
 * The compiler as one function: kernel text in, C text out.
 *
 *   text --lex--> tokens --parse--> AST --resolve--> resolved AST
 *        (asc__frontend: once per module; front/)
 *   resolved AST + signature --infer--> typed kernel      (types/infer.c)
 *   typed kernel --lower--> IR                            (lower.c)
 *   IR --passes--> IR     fold, dce, cse, licm, unroll,   (passes/pipeline.c)
 *                         strength, parallelize, ...
 *   IR --emit--> C text                                   (emit_c.c)
 *
 * What happens next is jit/'s: the C text goes to the system C compiler,
 * the shared object into the disk cache, and dlopen hands the runtime a
 * kernel to launch (docs/architecture.md).
 *
 * Everything is allocated in c's arena; errors are c's diagnostics, and
 * internal failures unwind to c's catch point.  c's options
 * (asc__cctx_set_opts: compiler/options.h) say which passes run, the
 * floating-point mode of kernels that do not choose one, and the sizes
 * the code is tuned for.
 */
#ifndef ASC_COMPILER_COMPILE_H
#define ASC_COMPILER_COMPILE_H

#include "compiler/ir/ir.h"
#include "compiler/passes/passes.h"
#include "compiler/types/infer.h"

/* How far asc__compile_kernel goes. */
typedef enum asc__stop {
  ASC_STOP_TYPES,   /* infer only */
  ASC_STOP_IR,      /* infer, lower, run the passes */
  ASC_STOP_C        /* ... and emit C */
} asc__stop;

typedef struct asc__compile_in {
  asc__ast_module *module;          /* from asc__frontend */
  asc__ast_func *kernel;            /* one of module's kernels */
  const asc__sig *sig;              /* the specialisation */
  /* Tensor arguments may overlap, so data pointers are not restrict. */
  bool may_alias;
  asc__stop stop;
} asc__compile_in;

typedef struct asc__compile_out {
  asc__typed *typed;                /* ASC_STOP_TYPES and later */
  asc__irmodule *ir;                /* ASC_STOP_IR and later */
  /* asc__kernel_fastmath's answer, from the options' fastmath */
  unsigned fastmath;
  /* asc__ir_work_bounded of the kernel after the passes (ASC_STOP_IR and
   * later): its arguments' sizes bound its work */
  bool work_bounded;
} asc__compile_out;

/* asc__kernel_fastmath: compiler/lower.h */

/* Runs the pipeline above for one specialisation, up to in->stop; the C
 * (ASC_STOP_C) is appended to c_out, which may be NULL otherwise.  Returns
 * false when type inference reported errors (they are in c's
 * diagnostics); other failures unwind.  The C carries c's source lines as
 * comments. */
bool asc__compile_kernel(asc__cctx *c, const asc__compile_in *in,
                         asc__compile_out *out, asc__buf *c_out);

/* One specialisation of a module built ahead of time. */
typedef struct asc__compile_spec {
  asc__ast_func *kernel;
  const asc__sig *sig;
  bool may_alias;
} asc__compile_spec;

/* The pipeline for n specialisations at once (ascc --emit=so): one C
 * module whose kernel table lists them in order, each under its kernel's
 * name.  Every specialisation is typed, so the diagnostics cover all of
 * them; returns false when any had type errors.  *fastmath (when not
 * NULL) receives the specialisations' floating-point mode; specialisations
 * whose modes differ are an error (one C unit has one mode). */
bool asc__compile_module(asc__cctx *c, asc__ast_module *m,
                         const asc__compile_spec *specs, int n,
                         asc__buf *c_out, unsigned *fastmath);

#endif /* ASC_COMPILER_COMPILE_H */
