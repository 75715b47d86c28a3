/*
 * Internal interfaces shared by the runtime and the compiler.  Internal
 * non-static names carry the asc__ prefix; none of them is exported from
 * libasc.so (hidden visibility), tests reach them through the static
 * library.
 */
#ifndef ASC_INTERNAL_H
#define ASC_INTERNAL_H

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

/* ---------------------------------------------------------------- errors */

/* Records code and a formatted message as this thread's last error and
 * returns code, so failing paths read `return asc__error(...)`. */
ascError_t asc__error(ascError_t code, const char *fmt, ...) ASC_PRINTF(2, 3);
ascError_t asc__verror(ascError_t code, const char *fmt, va_list ap);
/* As asc__error, with a message that may be long (compile diagnostics). */
ascError_t asc__error_text(ascError_t code, const char *text);

/* -------------------------------------------------------------- tensors */

/* The bytes a tensor's elements span around its data pointer: offsets
 * [*lo, *hi) (0, 0 when some extent is 0), computed with overflow checks.
 * False, with the reason in why, when the descriptor cannot describe
 * memory: an invalid dtype, ndim outside 0..ASC_MAX_DIMS, a negative
 * extent, or a shape x stride x item size that does not fit in a ptrdiff_t
 * (no object is larger).  Every size derived from a descriptor is
 * validated through this before it is multiplied anywhere else. */
bool asc__tensor_extent(const ascTensor *t, int64_t *lo, int64_t *hi,
                        char *why, size_t whylen);

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

/* ------------------------------------------------------------- threading */

/* Per host thread state. */
typedef struct asc__tls {
  ascError_t last_error;
  char *message;            /* owned; "" when NULL */
  int device;               /* current device ordinal */
  int in_host_callback;     /* blocking calls return NotPermitted */
  /* pool.c's cache: the pool state of device pools_device (never freed
   * once created, so the pointer cannot dangle). */
  struct asc__pools *pools;
  int pools_device;
} asc__tls;

asc__tls *asc__tls_get(void);

/* ---------------------------------------------------------------- devices */

struct hwloc_topology;
typedef struct asc__device asc__device;

struct asc__device {
  int ordinal;
  struct hwloc_topology *topo;   /* owned by the runtime, loaded once */
  int ncores;                    /* usable cores = worker threads */
  int *core_pu;                  /* OS index of one PU per usable core */
  int *core_numa;                /* NUMA node (logical index) of each core */
  ascDeviceProp prop;
  struct asc__sched *sched;      /* worker pool, created on first use */
  struct asc__memory *mem;       /* device memory arenas and ownership */
  struct asc__pools *pools;      /* stream-ordered pools (pool.c) */
  void *rt_private;              /* streams, pools, modules: see their files */
};

/* Initialises the runtime once (thread-safe) and returns its status. */
ascError_t asc__init(void);
/* The calling thread's current device; initialises on first use. */
ascError_t asc__current_device(asc__device **dev);
ascError_t asc__get_device(asc__device **dev, int ordinal);

/* ------------------------------------------------------------- utilities */

/* Growable byte buffer used by the compiler and diagnostics.  A failed
 * allocation sets oom and turns further appends into no-ops. */
typedef struct asc__buf {
  char *data;
  size_t len;
  size_t cap;
  bool oom;
} asc__buf;

void asc__buf_init(asc__buf *b);
void asc__buf_free(asc__buf *b);
void asc__buf_put(asc__buf *b, const void *p, size_t n);
void asc__buf_puts(asc__buf *b, const char *s);
void asc__buf_printf(asc__buf *b, const char *fmt, ...) ASC_PRINTF(2, 3);
/* NUL-terminated contents; "" when empty. */
const char *asc__buf_str(asc__buf *b);

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

#endif /* ASC_INTERNAL_H */
