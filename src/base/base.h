/*
 * What every layer shares: the helper macros, the one allocation seam,
 * growable buffers and the per-thread last error.  Nothing here knows about
 * devices, compilations or files; base/ includes nothing above it.
 */
#ifndef ASC_BASE_H
#define ASC_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asc/asc.h"

#if defined(__GNUC__)
#define ASC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ASC_PRINTF(f, a)
#endif

#define ASC_UNUSED(x) ((void)(x))

/* Handle objects (streams, events, modules) sit on their owner's live
 * list (links live_prev, live_next) and, once dead, on a free list (link
 * free_next) for reuse by an object of the same kind.  The caller holds
 * the lock that guards both lists. */
#define ASC__LIVE_PUSH(head, o)                                              \
  do {                                                                       \
    (o)->live_prev = NULL;                                                   \
    (o)->live_next = (head);                                                 \
    if ((head) != NULL)                                                      \
      (head)->live_prev = (o);                                               \
    (head) = (o);                                                            \
  } while (0)

/* Moves o from the live list `live` to the free list `free`. */
#define ASC__LIVE_RETIRE(live, free, o)                                      \
  do {                                                                       \
    if ((o)->live_prev != NULL)                                              \
      (o)->live_prev->live_next = (o)->live_next;                            \
    else                                                                     \
      (live) = (o)->live_next;                                               \
    if ((o)->live_next != NULL)                                              \
      (o)->live_next->live_prev = (o)->live_prev;                            \
    (o)->live_prev = (o)->live_next = NULL;                                  \
    (o)->free_next = (free);                                                 \
    (free) = (o);                                                            \
  } while (0)
#define ASC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))


#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/inflight.h"
#include "base/tensor.h"

#endif /* ASC_BASE_H */
