/*
 * Type inference: one kernel, one launch signature.
 *
 * Constraints come from every node: each local (and each helper's return
 * value) has a type variable; an assignment `x = e` says T_x >= type(e);
 * operators, builtins and calls give their result types from their operand
 * types through the promotion lattice.  The solver walks the function in
 * program order and widens the variables until nothing changes (a least
 * fixed point: the lattice is finite and a strong type, once a variable has
 * one, never changes), then a last walk checks every assignment against
 * the solution, reports conflicts naming both types and both places, and
 * writes the result into the tree.  docs/types.md gives the rules.
 *
 * The typed tree, as the back end reads it:
 *   asc__ast_expr.type   every expression, concrete (no weak types, no
 *                        variables).  A weak operand that is not a
 *                        variable (a literal, a module constant, float(x))
 *                        carries the type it is converted to, so an
 *                        integer literal's value fits its type; a Name of a
 *                        parameter or local always has its symbol's type.
 *                        Arithmetic (and min/max/abs, math functions):
 *                        convert the operands to the node's type.
 *                        Comparisons: convert both operands to
 *                        asc__ty_promote(lhs->type, rhs->type).  Not
 *                        typed (NULL): annotations, call.func, decorators;
 *                        typed None: for-loop iterables, raised exception
 *                        expressions, except-clause classes.
 *                        ConstExpr values are in sig->params[i].value.
 *   asc__sym.type        every parameter and local of the kernel, of its
 *                        nested functions and lambdas, and of each helper
 *                        instance.  EXC_VAR symbols are str.
 *   asc__ast_func.type   the kernel, nested functions, lambdas and helper
 *                        instances: a FUNC type (params) -> return.
 *   asc__ast_class.type  the STRUCT type of every class the kernel uses.
 * A helper is typed once per distinct argument-type tuple (an "instance");
 * the first instance of a helper is typed in place, each further one on a
 * private copy of the helper's tree (asc__tinst.fn), and asc__typed_callee
 * says which instance a call node targets.
 *
 * Inference writes the slots of the module's tree, so specialisations of
 * one module are typed (and lowered) one at a time; the types live in the
 * arena of the cctx given to asc__infer_kernel.
 */
#ifndef ASC_INFER_H
#define ASC_INFER_H

#include "compiler/front/ast.h"
#include "compiler/cctx.h"
#include "compiler/front/frontend.h"
#include "compiler/types/types.h"

typedef struct asc__tinst {
  asc__ast_func *fn;    /* the typed tree of this instance */
  asc__ast_func *orig;  /* the helper as the resolver left it */
  asc__type *type;      /* concrete FUNC type */
  asc__type **args;     /* the argument types it was made for (weak kept) */
  int32_t nargs;
  struct asc__tinst *next;
} asc__tinst;

typedef struct asc__callsite {
  const asc__ast_expr *call;
  asc__tinst *inst;
} asc__callsite;

typedef struct asc__typed {
  asc__ast_func *kernel;
  const asc__sig *sig;
  asc__tinst *helpers;      /* callees before their callers */
  int32_t nhelpers;
  asc__callsite *calls;     /* every typed helper call */
  int32_t ncalls;
  asc__type *ret;           /* what the kernel returns (none, or a scalar,
                               tensor or tuple of them) */
} asc__typed;

/* Types `kernel` of module m for sig (its name may be NULL; it must have as
 * many parameters as the kernel).  Returns NULL after reporting errors to
 * c's diagnostics; unwinds only when asc__diag_error reaches max_errors or
 * on OOM. */
asc__typed *asc__infer_kernel(asc__cctx *c, asc__ast_module *m,
                              asc__ast_func *kernel, const asc__sig *sig);

/* The helper instance a call node of the typed tree calls; NULL when the
 * call is not a helper call. */
asc__tinst *asc__typed_callee(const asc__typed *t, const asc__ast_expr *call);

/* A private deep copy of helper fn (its body, parameters and locals, with
 * names rebound to the copies), for a second instance. */
asc__ast_func *asc__ast_clone_func(asc__cctx *c, const asc__ast_func *fn);

/* A copy of e in which each name of symbol from[i] is a copy of to[i]
 * (a comprehension's element for one value of its variables). */
asc__ast_expr *asc__ast_clone_subst(asc__cctx *c, const asc__ast_expr *e,
                                    asc__sym *const *from,
                                    asc__ast_expr *const *to, int n);

/* Clears every type slot of fn, its nested functions and lambdas (types
 * of an earlier compilation may point into a freed arena). */
void asc__ast_clear_types(asc__ast_func *fn);

/* Does t[ix] on a tensor of ndim axes select a view (a slice, None, or
 * fewer integers than axes: numpy basic indexing) and not one element? */
bool asc__infer_index_is_view(const asc__ast_expr *ix, int32_t ndim);

/* Is the builtin call e elementwise over array arguments (a ufunc)? */
bool asc__builtin_is_elementwise(const asc__ast_expr *e);
/* The axes of a.transpose(...) / np.transpose(a, axes) of an nd-axis
 * array: perm[k] is the input axis of output axis k.  false when they
 * are not constants or not a permutation (*bad: where). */
bool asc__transpose_axes(const asc__ast_expr *call, int nd, int *perm,
                         const asc__ast_expr **bad);
/* The axes np.flip(m, axis) reverses of an nd-axis array: axes[k] true
 * when axis k is.  false when axis is not None, an integer constant or a
 * tuple of distinct ones in range (*bad: where). */
/* np.rot90(m, k, axes) of an nd-axis m: k mod 4 and the two axes, or
 * false with numpy's message in *why and the argument at fault. */
bool asc__rot90_plan(const asc__ast_expr *call, int nd, int *k, int *a0,
                     int *a1, const char **why, const asc__ast_expr **bad);
bool asc__flip_axes(const asc__ast_expr *call, int nd, bool *axes,
                    const asc__ast_expr **bad);
/* An axis argument of the numpy functions of infer_numpy.c, an integer
 * constant, normalised for an array of nd axes (false when it is none,
 * which typing reported). */
bool asc__numpy_const_axis(const asc__ast_expr *a, int nd, int *axis);
/* The axes an input array of nd axes has in the stack id (np.hstack,
 * np.vstack, np.column_stack make 0-d and 1-D arrays 1-D or 2-D first). */
int asc__numpy_stack_ndim(asc__builtin_id id, int nd);

#endif /* ASC_INFER_H */
