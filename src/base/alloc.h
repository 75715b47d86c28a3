/* The one host allocation seam (base/alloc.c). */
#ifndef ASC_BASE_ALLOC_H
#define ASC_BASE_ALLOC_H

#include "base/base.h"

/* ------------------------------------------------------- host allocations */

/* Every host allocation of libasc (runtime and compiler) and every device
 * allocation passes through here, so a test can make any of them fail.
 * The hook returns true to make an allocation of `size` bytes fail.  It is
 * process-wide on purpose: it is a test seam, not runtime state. */
typedef bool (*asc__alloc_fail_fn)(size_t size, void *ud);
void asc__set_alloc_fail_hook(asc__alloc_fail_fn fn, void *ud);
bool asc__alloc_should_fail(size_t size);

void *asc__malloc(size_t size);
void *asc__calloc(size_t n, size_t size);
void *asc__realloc(void *p, size_t size);
void asc__free(void *p);
char *asc__strdup(const char *s);

#endif /* ASC_BASE_ALLOC_H */
