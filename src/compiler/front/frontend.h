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

/* The kernel or helper called name; NULL when none. */
asc__ast_func *asc__module_func(const asc__ast_module *m, const char *name);

/* A readable, stable text form of the (resolved) tree: the golden files of
 * ascc --emit=ast. */
void asc__dump_ast(const asc__ast_module *m, asc__buf *out);

#endif /* ASC_FRONTEND_H */
