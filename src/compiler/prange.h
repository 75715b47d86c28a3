/*
 * The AST-level analysis of prange bodies (prange.c), used by lower.c
 * and lower_stmt.c.
 */
#ifndef ASC_PRANGE_H
#define ASC_PRANGE_H

#include "compiler/cctx.h"
#include "compiler/front/ast.h"

/* Symbols assigned in b (targets of =, op=, for), with whether every
 * assignment is `sym op= ...` with one reducible op (*redop). */
typedef struct asc__prange_assigned {
  const asc__sym *sym;
  int redop;        /* ASC_IR_ADD ...; -1 when not a reduction */
  asc__loc loc;
} asc__prange_assigned;

typedef struct asc__prange_alist {
  asc__prange_assigned *v;
  int n, cap;
} asc__prange_alist;

/* Notes an assignment to tg in al (redop: the reduction op of the
 * assignment, ASC_IR_ADD ..., or -1; a tuple target notes each element
 * with -1). */
void asc__prange_note_assign(asc__cctx *c, asc__prange_alist *al,
                             const asc__ast_expr *tg, int redop);
/* Notes in al every assignment of b (nested blocks included). */
void asc__prange_collect_assigned(asc__cctx *c, const asc__ast_block *b,
                                  asc__prange_alist *al);
/* 1 when b assigns sym (a whole-variable assignment at its top level)
 * before any read of it, 2 when b may read it first, 0 when b does not
 * mention it. */
int asc__prange_first_access(const asc__ast_block *b, const asc__sym *sym);
/* Does b mention symbol sym?  skip: a statement whose subtree does not
 * count (the loop itself). */
bool asc__prange_block_mentions(const asc__ast_block *b, const asc__sym *sym,
                                const asc__ast_stmt *skip);

#endif /* ASC_PRANGE_H */
