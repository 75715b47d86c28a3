/*
 * Lowering: typed AST (infer.h) -> IR (ir.h).
 *
 *   asc__typed *t = asc__infer_kernel(c, m, kernel, sig);
 *   asc__irfunc *f = asc__lower_kernel(c, t);
 *   asc__irmodule *mod = asc__ir_module_new(c);
 *   asc__ir_module_add(c, mod, f);
 *   asc__ir_pipeline(c, mod, NULL);
 *   asc__emit_module(c, mod, &src, &out);
 *
 * docs/ir.md says what each construct becomes.
 */
#ifndef ASC_LOWER_H
#define ASC_LOWER_H

#include "infer.h"
#include "ir.h"

/* The IR of the typed kernel.  Constructs the back end does not support
 * yet are compile errors at their source position (reported, then
 * unwinding). */
asc__irfunc *asc__lower_kernel(asc__cctx *c, const asc__typed *t);

struct asc__pipeline_opts;

/* The whole back end for one specialisation: infer kernel k of m for sig,
 * lower, run the pass pipeline (opts may be NULL) and append the C module
 * to out.  Returns false when type inference reported errors (they are in
 * c's diagnostics); other failures unwind to c's catch point.  The C
 * carries c's source lines as comments.  may_alias: tensor arguments may
 * overlap, so the data pointers are not declared restrict. */
bool asc__codegen_kernel(asc__cctx *c, asc__ast_module *m,
                         asc__ast_func *k, const asc__sig *sig,
                         const struct asc__pipeline_opts *opts,
                         bool may_alias, asc__buf *out);

/* One specialisation of a module built ahead of time. */
typedef struct asc__codegen_spec {
  asc__ast_func *kernel;
  const asc__sig *sig;
  bool may_alias;
} asc__codegen_spec;

/* asc__codegen_kernel for n specialisations at once (ascc --emit=so): one
 * C module whose kernel table lists them in order, each under its
 * kernel's name.  Every specialisation is typed, so the diagnostics cover
 * all of them; returns false when any had type errors. */
bool asc__codegen_kernels(asc__cctx *c, asc__ast_module *m,
                          const asc__codegen_spec *specs, int n,
                          const struct asc__pipeline_opts *opts,
                          asc__buf *out);

#endif /* ASC_LOWER_H */
