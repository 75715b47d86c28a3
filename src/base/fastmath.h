/*
 * The names of the ASC_FASTMATH_* bits (asc.h), as numba spells them:
 * the decorator's fastmath={...}, ascc --fastmath=a,b and the IR text
 * share this one table.
 */
#ifndef ASC_BASE_FASTMATH_H
#define ASC_BASE_FASTMATH_H

#include <stddef.h>

#include "base/buf.h"

/* The valid names, for messages. */
#define ASC_FASTMATH_VALID "contract, reassoc, nnan, ninf, nsz, arcp, afn"

/* The bit named by the len bytes at name; 0 when no flag has that name. */
unsigned asc__fastmath_bit(const char *name, size_t len);

/* The names of mask's bits, comma-separated, in table order ("" for 0). */
void asc__fastmath_names(asc__buf *out, unsigned mask);

#endif /* ASC_BASE_FASTMATH_H */
