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

#include "compiler/types/infer.h"
#include "compiler/ir/ir.h"

/* The IR of the typed kernel.  Constructs the back end does not support
 * yet are compile errors at their source position (reported, then
 * unwinding). */
asc__irfunc *asc__lower_kernel(asc__cctx *c, const asc__typed *t);

/* The floating-point mode a typed kernel is compiled in: its decorator's
 * fastmath= (else dflt), less every bit that a helper it calls leaves out
 * of its own fastmath= (helpers that do not say inherit the kernel's).
 * One mode per kernel: helpers are compiled into the kernel's C, and
 * neither compiler offers each flag per function (docs/fastmath.md). */
unsigned asc__kernel_fastmath(const asc__typed *t, unsigned dflt);

#endif /* ASC_LOWER_H */
