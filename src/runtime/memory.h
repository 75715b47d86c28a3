/*
 * Device memory: blocks carved from dedicated jemalloc arenas (one per NUMA
 * node of the device, plus one unbound arena), with a table of live blocks
 * so that a pointer libasc did not hand out is rejected instead of crashing.
 * See docs/memory.md.
 *
 * Locking: each device's memory state has one mutex, a leaf lock.  No
 * function here calls out (into jemalloc or hwloc excepted) while holding
 * it, so callers may hold their own locks (a pool's, a stream's) when they
 * call in; nothing here takes theirs.
 */
#ifndef ASC_MEMORY_H
#define ASC_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/runtime.h"

/* Largest alignment asc__dev_alloc accepts. */
#define ASC__DEV_ALIGN_MAX ((size_t)1 << 30)

/* Allocates `size` bytes on device d.  align is 0 (the default rule: 64
 * bytes, page aligned from ASC_PAGE_ALIGN_MIN up) or a power of two; the
 * block gets the larger of align and the default rule.  numa_node is -1
 * (no placement) or a NUMA node index in [0, prop.numaNodes).  size 0
 * stores NULL and succeeds.  Failures set the thread's last error:
 * ascErrorInvalidValue (bad align/node), ascErrorOutOfMemory (nothing
 * allocated, *out = NULL). */
ascError_t asc__dev_alloc(asc__device *d, size_t size, size_t align,
                          int numa_node, void **out);

/* Memory for the arrays a kernel creates (asc_krt.alloc): 64-byte
 * aligned, not zeroed, NULL when out of memory.  From libasc's private
 * jemalloc, whose freed extents stay mapped for a while (its decay) and
 * are handed out again: an array returned on every call reuses the pages
 * of the last one instead of faulting fresh ones in (libc's malloc maps
 * every block over 32 MiB anew).  Under ASan and TSan, libc's calloc
 * (ASan checks it; TSan counts jemalloc's locks at fork).  asc__array_free(NULL) does nothing. */
void *asc__array_alloc(size_t size);
void asc__array_free(void *p);

/* Records p, a block of asc__array_alloc holding size bytes (an array a
 * kernel returns), as a device block of d: ascFree frees it.  On failure p
 * is left alone. */
ascError_t asc__dev_adopt(asc__device *d, void *p, size_t size);

/* Frees a block from asc__dev_alloc.  NULL succeeds.  A pointer that is not
 * the start of a live block of d (foreign, interior, already freed) returns
 * ascErrorInvalidValue and touches nothing. */
ascError_t asc__dev_free(asc__device *d, void *p);

/* True when p is the start of a live block of d; its requested size goes to
 * *size when size is not NULL.  Never sets the last error. */
bool asc__dev_owns(asc__device *d, const void *p, size_t *size);

/* Whether [p, p + count) can be a range of memory for fn (ascMemcpy, ...):
 * count at most PTRDIFF_MAX and the range not wrapping past the end of
 * the address space, and a range that starts at a block of d inside it.
 * Else ascErrorInvalidValue with a message naming fn and what ("source",
 * "destination").  The synchronous and the stream-ordered calls share it,
 * so they accept and reject the same ranges. */
ascError_t asc__mem_range_check(asc__device *d, const char *fn,
                                const char *what, const void *p,
                                size_t count);

/* Bytes in live blocks of d (what was asked for, not what jemalloc
 * rounded to). */
size_t asc__dev_bytes_in_use(asc__device *d);

/* Extents the per-node arenas of d have taken from the system (each one
 * bound to its node); 0 when d has a single NUMA node.  For tests and
 * statistics. */
size_t asc__dev_bound_extents(asc__device *d);

/* Frees every live block of d and returns the arenas' unused pages to the
 * system; d stays usable.  Called by ascDeviceReset after everything that
 * could still use a block (streams, pools) is gone. */
void asc__memory_reset(asc__device *d);

/* As asc__memory_reset, then destroys the arenas and the state itself;
 * the next allocation creates them again. */
void asc__memory_destroy(asc__device *d);

/* fork(): prepare takes d's memory lock (a leaf lock: the last the
 * runtime takes, see fork.c), parent releases it, child makes it new. */
void asc__memory_fork_prepare(asc__device *d);
void asc__memory_fork_parent(asc__device *d);
void asc__memory_fork_child(asc__device *d);

#endif /* ASC_MEMORY_H */
