/*
 * The compiler front end: source text -> tokens -> AST -> resolved AST.
 *
 *   asc__cctx c;  ... asc__cctx_init(&c, file, text, len, first_line) ...
 *   if (setjmp(jb) == 0) {
 *     asc__ast_module *m = asc__frontend(&c, globals, nglobals);
 *     ... types, lowering ...
 *   }
 *
 * Errors go to c's diagnostics.  asc__parse and asc__resolve report as many
 * errors as they can recover from and return; asc__frontend unwinds
 * (ASC_FAIL_ERRORS) when either reported any, so code after it sees only
 * well-formed, fully resolved trees.
 */
#ifndef ASC_FRONTEND_H
#define ASC_FRONTEND_H

#include "asc/asc.h"
#include "compiler/front/ast.h"
#include "compiler/cctx.h"

/* Nesting limit of brackets, blocks and expressions; deeper input is a
 * "too deeply nested" error, never a stack overflow. */
#define ASC_MAX_NESTING 200

/* Lexes and parses c->text.  Always returns a module (possibly partial when
 * errors were reported). */
asc__ast_module *asc__parse(asc__cctx *c);

/* Binds every name of m: parameters, locals, module constants (folded; an
 * entry of globals with the same name replaces the value, other entries
 * supply names the module does not define), imports and their aliases,
 * builtins, helpers, struct classes.  Classifies functions by decorator
 * (kernel options included), normalises call arguments, checks builtin
 * arities, rejects recursion among helpers and lambdas with an assignment
 * body outside parallel loops. */
void asc__resolve(asc__cctx *c, asc__ast_module *m,
                  const ascGlobalValue *globals, int nglobals);

/* asc__parse then asc__resolve; unwinds if either reported an error. */
asc__ast_module *asc__frontend(asc__cctx *c, const ascGlobalValue *globals,
                               int nglobals);

/* The parameter table of kernel fn (fn->nparams entries into out; names
 * point into the tree), for ascKernelGetInfo and the launch signature
 * (params.c).  An annotated parameter is what its annotation says
 * (`float`/`int` are float64/int64 values; asc.ConstExpr without a type is
 * a generic ConstExpr scalar).  An unannotated one is generic: a tensor
 * when the kernel indexes it, reads its shape/ndim/size, hands it to an
 * atomic, a lock or len, or passes it to a helper that does; a scalar
 * otherwise.  Reports bad annotations and returns false. */
bool asc__kernel_params(asc__cctx *c, const asc__ast_func *fn,
                        ascKernelParamInfo *out);

/* How many values kernel fn returns: 0 when no `return` has a value, k
 * when every `return v` returns a tuple display of k elements (k >= 2),
 * else 1.  Returns of nested bodies are not the kernel's.  Reports a
 * return whose count differs from the first (and returns -1). */
int asc__kernel_nresults(asc__cctx *c, const asc__ast_func *fn);

/* The kernel or helper called name; NULL when none. */
asc__ast_func *asc__module_func(const asc__ast_module *m, const char *name);

/* A readable, stable text form of the (resolved) tree: the golden files of
 * ascc --emit=ast. */
void asc__dump_ast(const asc__ast_module *m, asc__buf *out);

#endif /* ASC_FRONTEND_H */
