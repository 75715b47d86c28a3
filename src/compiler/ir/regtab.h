/*
 * Per-register tables for the passes that look at one loop, nest or
 * parallel body at a time.  A plain array sized to the function's
 * registers costs O(registers) to make and clear for every loop: O(loops
 * x registers) in all, which a kernel of a few thousand whole-array
 * statements turns into gigabytes and minutes.  An asc__regtab is a hash
 * table holding only the registers put in it, so making, filling and
 * reading one for a loop costs the size of the loop.  Its memory comes
 * from the scratch arena (cctx.h) and lives until the pass ends.
 *
 *   asc__regtab in;
 *   asc__regtab_init(c, &in, 0);
 *   asc__ir_defined_in(&L->body[0], &in);
 *   if (asc__regtab_get(&in, r)) ...
 */
#ifndef ASC_IR_REGTAB_H
#define ASC_IR_REGTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/cctx.h"

typedef struct asc__regent {
  int32_t reg;        /* -1: a free slot */
  intptr_t val;
} asc__regent;

typedef struct asc__regtab {
  asc__cctx *c;
  asc__regent *e;     /* cap slots, a power of two, at most half full */
  int32_t n, cap;
  int32_t *keys;      /* asc__regtab_keys' answer */
} asc__regtab;

/* An empty table with room for about n registers (it grows). */
void asc__regtab_init(asc__cctx *c, asc__regtab *t, int32_t n);
/* Every register back to 0. */
void asc__regtab_clear(asc__regtab *t);
/* The slot of register r (0 when r is not in the table), putting r in. */
intptr_t *asc__regtab_ref(asc__regtab *t, int32_t r);
/* r's value; 0 when r is not in the table. */
intptr_t asc__regtab_get(const asc__regtab *t, int32_t r);
/* The registers in the table, in increasing order, and their number in
 * *n: for loops that used to visit every register of the function. */
const int32_t *asc__regtab_keys(asc__regtab *t, int32_t *n);

static inline void asc__regtab_set(asc__regtab *t, int32_t r, intptr_t v) {
  *asc__regtab_ref(t, r) = v;
}

#endif /* ASC_IR_REGTAB_H */
