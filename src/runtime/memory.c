/*
 * Device memory.  The CPU device's memory is host memory, but it never comes
 * from the process's malloc: every block is carved from jemalloc arenas that
 * libasc creates for itself (one per NUMA node of the device, plus one with
 * no placement), with the thread cache bypassed so that a freed block goes
 * back to its arena and can never be handed out by a plain malloc().
 *
 * A table of live blocks (start pointer -> size, arena, alignment) decides
 * ownership, so freeing a pointer libasc did not allocate, an interior
 * pointer or a block twice is an ascErrorInvalidValue, not heap corruption.
 *
 * ascMemcpy and ascMemset are synchronous host operations here; they do not
 * yet wait for earlier default-stream work.
 */
#include <fcntl.h>
#include <hwloc.h>
/* libasc's private jemalloc (cmake/jemalloc.cmake): JEMALLOC_MANGLE maps
 * mallocx, mallctl, ... onto its asc_je_ names. */
#define JEMALLOC_MANGLE
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "runtime/memory.h"
#include "runtime/scheduler.h"
#include "runtime/stream.h"
#include "runtime/trace.h"

/* ASan does not see jemalloc's arenas, so under ASan the bytes between a
 * block's requested size and the end of its jemalloc region are poisoned:
 * writing past a block is reported like a heap overflow.  Everything is
 * unpoisoned again before the region goes back to jemalloc. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
static void poison_tail(void *p, size_t size) {
  size_t usable = sallocx(p, 0);
  ASAN_POISON_MEMORY_REGION((char *)p + size, usable - size);
}
static void unpoison_all(void *p) { ASAN_UNPOISON_MEMORY_REGION(p, sallocx(p, 0)); }
#else
static void poison_tail(void *p, size_t size) {
  (void)p;
  (void)size;
}
static void unpoison_all(void *p) { (void)p; }
#endif

/* Every block is at least this aligned (a cache line, and what the code
 * generator assumes for vector loads). */
#define BLOCK_ALIGN_MIN ((size_t)64)
#define TABLE_CAP_MIN ((size_t)64)

typedef struct block {
  void *p;                 /* NULL: empty slot */
  size_t size;             /* as requested */
  unsigned char lg_align;  /* log2 of the alignment asked of jemalloc, or
                            * ADOPTED */
} block;

/* lg_align of a kernel's temporary that became a device block (an array
 * the kernel returned, asc__dev_adopt): freed with asc__array_free. */
#define ADOPTED 0xff

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* ASan checks libc's blocks, not jemalloc's; under TSan an arena more
 * puts jemalloc's fork handler over the 64 locks TSan's deadlock
 * detector holds (docs/decisions.md, TSan and fork()) */
void *asc__array_alloc(size_t size) { return asc__cache_alloc(size); }
void asc__array_free(void *p) { asc__cache_free(p); }
#else
/* An arena of its own, whose freed extents wait for jemalloc's decay
 * however large they are: an arena gives a freed extent over its
 * oversize threshold (8 MiB) back to the system at once, so a kernel that
 * returns a 32 MB array on every call faulted 7,800 fresh pages in each
 * time (49 ms a call where numpy's a - b took 17-21 ms; 4-8 ms without the
 * faults). */
static unsigned array_arena;
static bool array_arena_ok;
static pthread_once_t array_once = PTHREAD_ONCE_INIT;

static void array_arena_create(void) {
  size_t sz = sizeof array_arena, never = SIZE_MAX;
  char name[64];
  if (mallctl("arenas.create", &array_arena, &sz, NULL, 0) != 0)
    return;
  snprintf(name, sizeof name, "arena.%u.oversize_threshold", array_arena);
  (void)mallctl(name, NULL, NULL, &never, sizeof never);
  array_arena_ok = true;
}

void *asc__array_alloc(size_t size) {
  int flags = MALLOCX_ALIGN(BLOCK_ALIGN_MIN) | MALLOCX_TCACHE_NONE;
  if (asc__alloc_should_fail(size))
    return NULL;
  pthread_once(&array_once, array_arena_create);
  if (array_arena_ok)
    flags |= MALLOCX_ARENA(array_arena);
  return mallocx(size ? size : 1, flags);
}

void asc__array_free(void *p) {
  if (p != NULL)
    dallocx(p, MALLOCX_TCACHE_NONE);
}
#endif

static void block_release(const block *b) {
  if (b->lg_align == ADOPTED) {
    asc__array_free(b->p);
    return;
  }
  unpoison_all(b->p);
  sdallocx(b->p, b->size, MALLOCX_LG_ALIGN(b->lg_align) | MALLOCX_TCACHE_NONE);
}

typedef struct arena {
  unsigned index;          /* jemalloc arena index */
  bool created;
} arena;

/* Extent hooks of an arena bound to one NUMA node: jemalloc's own hooks,
 * with every new extent bound to the node before jemalloc carves it up. */
typedef struct node_hooks {
  extent_hooks_t hooks;    /* first: jemalloc hands &hooks back to us */
  extent_hooks_t *dflt;    /* jemalloc's default hooks */
  hwloc_topology_t topo;
  hwloc_const_nodeset_t nodeset;
  size_t extents;          /* extents allocated through these hooks */
} node_hooks;

struct asc__memory {
  /* Guards every field below.  A leaf lock: held only around table and
   * arena bookkeeping, never while calling into other libasc code. */
  uv_mutex_t lock;
  size_t page;             /* system page size */
  int nnodes;              /* NUMA nodes of the device, >= 1 */
  arena *arenas;           /* nnodes + 1 slots; [nnodes] has no placement */
  node_hooks *hooks;       /* nnodes entries, or NULL: no binding */
  block *table;            /* open addressing, linear probing */
  size_t cap;              /* power of two, or 0 before the first block */
  size_t count;
  size_t bytes;            /* sum of the live blocks' requested sizes */
};

/* ----------------------------------------------------------- block table */

static size_t hash_ptr(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p >> 6;  /* blocks are 64-byte aligned */
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static block *table_find(struct asc__memory *m, const void *p) {
  size_t i;

  if (m->cap == 0)
    return NULL;
  for (i = hash_ptr(p, m->cap); m->table[i].p != NULL;
       i = (i + 1) & (m->cap - 1)) {
    if (m->table[i].p == p)
      return &m->table[i];
  }
  return NULL;
}

static void table_put(block *table, size_t cap, const block *b) {
  size_t i = hash_ptr(b->p, cap);
  while (table[i].p != NULL)
    i = (i + 1) & (cap - 1);
  table[i] = *b;
}

/* Makes room for one more block (load factor <= 3/4).  False when the
 * larger table cannot be allocated; the old one is then untouched. */
static bool table_reserve(struct asc__memory *m) {
  size_t ncap;
  block *nt;

  if (m->cap != 0 && (m->count + 1) * 4 <= m->cap * 3)
    return true;
  ncap = m->cap ? m->cap * 2 : TABLE_CAP_MIN;
  nt = asc__calloc(ncap, sizeof *nt);
  if (nt == NULL)
    return false;
  for (size_t i = 0; i < m->cap; i++) {
    if (m->table[i].p != NULL)
      table_put(nt, ncap, &m->table[i]);
  }
  asc__free(m->table);
  m->table = nt;
  m->cap = ncap;
  return true;
}

/* Removes the entry at slot and shifts later entries of its probe run
 * back, so that lookups never need tombstones. */
static void table_remove(struct asc__memory *m, block *slot) {
  size_t mask = m->cap - 1;
  size_t hole = (size_t)(slot - m->table);
  size_t i = hole;

  for (;;) {
    size_t home;

    i = (i + 1) & mask;
    if (m->table[i].p == NULL)
      break;
    home = hash_ptr(m->table[i].p, m->cap);
    /* Move entry i into the hole unless its home lies cyclically in
     * (hole, i], where it would no longer be found. */
    if (((i - home) & mask) >= ((i - hole) & mask)) {
      m->table[hole] = m->table[i];
      hole = i;
    }
  }
  m->table[hole].p = NULL;
  m->count--;
}

/* ---------------------------------------------------------------- arenas */

static int lg2(size_t x) {
  int n = 0;
  while (((size_t)1 << n) < x)
    n++;
  return n;
}

/* The arena slot for a NUMA node; -1 and a single-node device share the
 * unbound arena. */
static int arena_slot(const struct asc__memory *m, int numa_node) {
  return numa_node < 0 || m->nnodes == 1 ? m->nnodes : numa_node;
}

/* Binding is a placement request, like first touch: if the kernel refuses
 * it (a synthetic or XML topology, no mbind), the extent is still good and
 * its pages land where the kernel's default policy puts them. */
static void *bound_extent_alloc(extent_hooks_t *h, void *new_addr,
                                size_t size, size_t alignment, bool *zero,
                                bool *commit, unsigned arena_ind) {
  node_hooks *nh = (node_hooks *)h;
  void *p = nh->dflt->alloc(nh->dflt, new_addr, size, alignment, zero, commit,
                            arena_ind);
  if (p != NULL) {
    __atomic_fetch_add(&nh->extents, 1, __ATOMIC_RELAXED);
    (void)hwloc_set_area_membind(nh->topo, p, size, nh->nodeset,
                                 HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
  }
  return p;
}

/* Prepares per-node hooks when the device spans several NUMA nodes.  On
 * any failure the arenas are simply created unbound. */
static void hooks_init(struct asc__memory *m, asc__device *d) {
  extent_hooks_t *dflt = NULL;
  size_t sz = sizeof dflt;

  if (m->nnodes < 2 || d->topo == NULL)
    return;
  if (mallctl("arena.0.extent_hooks", &dflt, &sz, NULL, 0) != 0 ||
      dflt == NULL || dflt->alloc == NULL)
    return;
  m->hooks = asc__calloc((size_t)m->nnodes, sizeof *m->hooks);
  if (m->hooks == NULL)
    return;
  for (int i = 0; i < m->nnodes; i++) {
    hwloc_obj_t node =
        hwloc_get_obj_by_type(d->topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
    if (node == NULL || node->nodeset == NULL) {
      asc__free(m->hooks);
      m->hooks = NULL;
      return;
    }
    m->hooks[i].hooks = *dflt;
    m->hooks[i].hooks.alloc = bound_extent_alloc;
    m->hooks[i].dflt = dflt;
    m->hooks[i].topo = d->topo;
    m->hooks[i].nodeset = node->nodeset;
  }
}

/* Called with m->lock held. */
static ascError_t arena_get(struct asc__memory *m, int slot, unsigned *index) {
  arena *a = &m->arenas[slot];

  if (!a->created) {
    unsigned idx;
    size_t sz = sizeof idx;
    extent_hooks_t *h = NULL;
    int rc;

    if (m->hooks != NULL && slot < m->nnodes)
      h = &m->hooks[slot].hooks;
    rc = mallctl("arenas.create", &idx, &sz, h ? (void *)&h : NULL,
                 h ? sizeof h : 0);
    if (rc != 0)
      return asc__error(ascErrorOutOfMemory,
                        "device memory: jemalloc could not create an arena "
                        "(mallctl arenas.create: %s)", strerror(rc));
    a->index = idx;
    a->created = true;
  }
  *index = a->index;
  return ascSuccess;
}

static void arena_ctl(unsigned index, const char *op) {
  char name[64];
  snprintf(name, sizeof name, "arena.%u.%s", index, op);
  (void)mallctl(name, NULL, NULL, NULL, 0);
}

/* ---------------------------------------------------------- memory state */

static struct asc__memory *memory_peek(asc__device *d) {
  return __atomic_load_n(&d->mem, __ATOMIC_ACQUIRE);
}

static void memory_free(struct asc__memory *m) {
  uv_mutex_destroy(&m->lock);
  asc__free(m->hooks);
  asc__free(m->arenas);
  asc__free(m->table);
  asc__free(m);
}

/* The device's memory state, created on first use.  Two threads may race to
 * create it; the loser frees its copy (it has no arenas yet). */
static ascError_t memory_get(asc__device *d, struct asc__memory **out) {
  struct asc__memory *m = memory_peek(d), *expected = NULL;
  long page;

  if (m != NULL) {
    *out = m;
    return ascSuccess;
  }
  m = asc__calloc(1, sizeof *m);
  if (m == NULL)
    return asc__error(ascErrorOutOfMemory,
                      "device memory: cannot allocate the allocator state");
  m->nnodes = d->prop.numaNodes > 0 ? d->prop.numaNodes : 1;
  m->arenas = asc__calloc((size_t)m->nnodes + 1, sizeof *m->arenas);
  if (m->arenas == NULL || uv_mutex_init(&m->lock) != 0) {
    asc__free(m->arenas);
    asc__free(m);
    return asc__error(ascErrorOutOfMemory,
                      "device memory: cannot allocate the allocator state");
  }
  page = sysconf(_SC_PAGESIZE);
  m->page = page > 0 ? (size_t)page : 4096;
  hooks_init(m, d);
  if (!__atomic_compare_exchange_n(&d->mem, &expected, m, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    memory_free(m);
    m = expected;
  }
  *out = m;
  return ascSuccess;
}

/* ------------------------------------------------------- internal API */

/* Enters b in m's block table. */
static ascError_t record(struct asc__memory *m, const block *b) {
  uv_mutex_lock(&m->lock);
  if (!table_reserve(m)) {
    uv_mutex_unlock(&m->lock);
    return asc__error(ascErrorOutOfMemory,
                      "device memory: cannot grow the block table for a "
                      "%zu-byte block", b->size);
  }
  table_put(m->table, m->cap, b);
  m->count++;
  m->bytes += b->size;
  uv_mutex_unlock(&m->lock);
  return ascSuccess;
}

ascError_t asc__dev_alloc(asc__device *d, size_t size, size_t align,
                          int numa_node, void **out) {
  struct asc__memory *m = NULL;
  size_t eff;
  unsigned index;
  block b;
  void *p;
  ascError_t e;
  int flags;

  if (out == NULL)
    return asc__error(ascErrorInvalidValue, "device memory: out is NULL");
  *out = NULL;
  if (align != 0 && (align & (align - 1)) != 0)
    return asc__error(ascErrorInvalidValue,
                      "device memory: alignment %zu is not a power of two",
                      align);
  if (align > ASC__DEV_ALIGN_MAX)
    return asc__error(ascErrorInvalidValue,
                      "device memory: alignment %zu exceeds the maximum %zu",
                      align, ASC__DEV_ALIGN_MAX);
  if (numa_node < -1 || numa_node >= (d->prop.numaNodes > 0 ? d->prop.numaNodes : 1))
    return asc__error(ascErrorInvalidValue,
                      "device memory: NUMA node %d does not exist (device %d "
                      "has %d)", numa_node, d->ordinal, d->prop.numaNodes);
  if (size == 0)
    return ascSuccess;
  if (size > (size_t)PTRDIFF_MAX || asc__alloc_should_fail(size))
    return asc__error(ascErrorOutOfMemory,
                      "device memory: cannot allocate %zu bytes", size);
  e = memory_get(d, &m);
  if (e != ascSuccess)
    return e;

  eff = BLOCK_ALIGN_MIN;
  if (size >= ASC_PAGE_ALIGN_MIN && m->page > eff)
    eff = m->page;
  if (align > eff)
    eff = align;

  uv_mutex_lock(&m->lock);
  e = arena_get(m, arena_slot(m, numa_node), &index);
  uv_mutex_unlock(&m->lock);
  if (e != ascSuccess)
    return e;

  b.lg_align = (unsigned char)lg2(eff);
  b.size = size;
  flags = MALLOCX_ARENA(index) | MALLOCX_LG_ALIGN(b.lg_align) |
          MALLOCX_TCACHE_NONE;
  p = mallocx(size, flags);
  if (p == NULL)
    return asc__error(ascErrorOutOfMemory,
                      "device memory: cannot allocate %zu bytes", size);
  b.p = p;
  poison_tail(p, size);

  e = record(m, &b);
  if (e != ascSuccess) {
    unpoison_all(p);
    sdallocx(p, size, MALLOCX_LG_ALIGN(b.lg_align) | MALLOCX_TCACHE_NONE);
    return e;
  }
  *out = p;
  return ascSuccess;
}

ascError_t asc__dev_adopt(asc__device *d, void *p, size_t size) {
  struct asc__memory *m = NULL;
  block b;
  ascError_t e = memory_get(d, &m);

  if (e != ascSuccess)
    return e;
  b.p = p;
  b.size = size;
  b.lg_align = ADOPTED;
  return record(m, &b);
}

ascError_t asc__dev_free(asc__device *d, void *p) {
  struct asc__memory *m = memory_peek(d);
  block *slot, b;

  if (p == NULL)
    return ascSuccess;
  if (m != NULL) {
    uv_mutex_lock(&m->lock);
    slot = table_find(m, p);
    if (slot != NULL) {
      b = *slot;
      table_remove(m, slot);
      m->bytes -= b.size;
      uv_mutex_unlock(&m->lock);
      block_release(&b);
      return ascSuccess;
    }
    uv_mutex_unlock(&m->lock);
  }
  return asc__error(ascErrorInvalidValue,
                    "%p is not a live block of device %d: it was not "
                    "returned by ascMalloc, points inside a block, or was "
                    "already freed", p, d->ordinal);
}

bool asc__dev_owns(asc__device *d, const void *p, size_t *size) {
  struct asc__memory *m = memory_peek(d);
  block *slot;
  bool found = false;

  if (m == NULL || p == NULL)
    return false;
  uv_mutex_lock(&m->lock);
  slot = table_find(m, p);
  if (slot != NULL) {
    found = true;
    if (size != NULL)
      *size = slot->size;
  }
  uv_mutex_unlock(&m->lock);
  return found;
}

size_t asc__dev_bytes_in_use(asc__device *d) {
  struct asc__memory *m = memory_peek(d);
  size_t n;

  if (m == NULL)
    return 0;
  uv_mutex_lock(&m->lock);
  n = m->bytes;
  uv_mutex_unlock(&m->lock);
  return n;
}

size_t asc__dev_bound_extents(asc__device *d) {
  struct asc__memory *m = memory_peek(d);
  size_t n = 0;

  if (m == NULL || m->hooks == NULL)
    return 0;
  for (int i = 0; i < m->nnodes; i++)
    n += __atomic_load_n(&m->hooks[i].extents, __ATOMIC_RELAXED);
  return n;
}

void asc__memory_reset(asc__device *d) {
  struct asc__memory *m = memory_peek(d);

  if (m == NULL)
    return;
  uv_mutex_lock(&m->lock);
  for (size_t i = 0; i < m->cap; i++) {
    block *b = &m->table[i];
    if (b->p != NULL)
      block_release(b);
  }
  asc__free(m->table);
  m->table = NULL;
  m->cap = m->count = m->bytes = 0;
  for (int i = 0; i <= m->nnodes; i++) {
    if (m->arenas[i].created)
      arena_ctl(m->arenas[i].index, "purge");
  }
  uv_mutex_unlock(&m->lock);
}

void asc__memory_destroy(asc__device *d) {
  struct asc__memory *m;

  asc__memory_reset(d);
  m = __atomic_exchange_n(&d->mem, NULL, __ATOMIC_ACQ_REL);
  if (m == NULL)
    return;
  for (int i = 0; i <= m->nnodes; i++) {
    if (m->arenas[i].created)
      arena_ctl(m->arenas[i].index, "destroy");
  }
  memory_free(m);
}

void asc__memory_fork_prepare(asc__device *d) {
  struct asc__memory *m = memory_peek(d);
  if (m != NULL)
    uv_mutex_lock(&m->lock);
}

void asc__memory_fork_parent(asc__device *d) {
  struct asc__memory *m = memory_peek(d);
  if (m != NULL)
    uv_mutex_unlock(&m->lock);
}

void asc__memory_fork_child(asc__device *d) {
  struct asc__memory *m = memory_peek(d);
  /* Taken by this thread before the fork: made new, never unlocked (the
   * owner's thread id changed). */
  if (m != NULL)
    (void)uv_mutex_init(&m->lock);
}

/* ------------------------------------------------------------ public API */

ascError_t ascMalloc(void **devPtr, size_t size) {
  asc__device *d = NULL;
  ascError_t e;

  if (devPtr == NULL)
    return asc__error(ascErrorInvalidValue, "ascMalloc: devPtr is NULL");
  *devPtr = NULL;
  e = asc__current_device(&d);
  if (e != ascSuccess)
    return e;
  return asc__dev_alloc(d, size, 0, -1, devPtr);
}

ascError_t ascFree(void *devPtr) {
  asc__device *d = NULL;
  ascError_t e;

  if (devPtr == NULL)
    return ascSuccess;
  e = asc__current_device(&d);
  if (e != ascSuccess)
    return e;
  return asc__dev_free(d, devPtr);
}

/* A range that starts at a device block must stay inside it.  (A range
 * starting inside a block cannot be checked without a search, and host
 * memory is accepted everywhere: it is the same memory on this device.) */
ascError_t asc__mem_range_check(asc__device *d, const char *fn,
                                const char *what, const void *p,
                                size_t count) {
  size_t size;
  uintptr_t end;

  if (count > (size_t)PTRDIFF_MAX ||
      __builtin_add_overflow((uintptr_t)p, (uintptr_t)count, &end))
    return asc__error(ascErrorInvalidValue,
                      "%s: %zu bytes from the %s %p cannot be a range of "
                      "memory (larger than any object, or past the end of "
                      "the address space)",
                      fn, count, what, p);
  if (asc__dev_owns(d, p, &size) && count > size)
    return asc__error(ascErrorInvalidValue,
                      "%s: %zu bytes overrun the %zu-byte %s block at %p", fn,
                      count, size, what, p);
  return ascSuccess;
}

/* The current device, inside its runtime's API gate (stream.h): a
 * synchronous copy into a device block must not run while ascDeviceReset
 * frees it.  Leave with asc__api_leave(*rt) on success. */
static ascError_t sync_enter(asc__device **d, asc__rt **rt) {
  ascError_t e = asc__current_device(d);

  if (e == ascSuccess)
    e = asc__rt_get(*d, rt);
  if (e == ascSuccess)
    e = asc__api_enter(*rt);
  return e;
}

static ascError_t memcpy_sync(asc__device *d, void *dst, const void *src,
                              size_t count) {
  ascError_t e;
  uint64_t t0;

  e = asc__mem_range_check(d, "ascMemcpy", "destination", dst, count);
  if (e == ascSuccess)
    e = asc__mem_range_check(d, "ascMemcpy", "source", src, count);
  if (e != ascSuccess)
    return e;
  /* Synchronous copies are ordered after work already queued on the
   * default stream and the blocking streams, as cudaMemcpy is. */
  e = asc__default_stream_wait(d);
  if (e != ascSuccess)
    return e;
  /* Every kind is a host copy on this device; overlapping ranges are
   * allowed and copied as if through a temporary buffer. */
  t0 = asc__trace_clock();
  memmove(dst, src, count);
  ASC_TRACE(asc__trace_span("copy", "memcpy", NULL, count, t0));
  return ascSuccess;
}

ascError_t ascMemcpy(void *dst, const void *src, size_t count,
                     ascMemcpyKind kind) {
  asc__device *d = NULL;
  asc__rt *rt;
  ascError_t e;

  if ((unsigned)kind > (unsigned)ascMemcpyDefault)
    return asc__error(ascErrorInvalidValue,
                      "ascMemcpy: kind %d is not an ascMemcpyKind", (int)kind);
  if (count == 0)
    return ascSuccess;
  if (dst == NULL || src == NULL)
    return asc__error(ascErrorInvalidValue, "ascMemcpy: %s is NULL",
                      dst == NULL ? "dst" : "src");
  e = sync_enter(&d, &rt);
  if (e != ascSuccess)
    return e;
  e = memcpy_sync(d, dst, src, count);
  asc__api_leave(rt);
  return e;
}

static ascError_t memset_sync(asc__device *d, void *devPtr, int value,
                              size_t count) {
  ascError_t e;
  uint64_t t0;

  e = asc__mem_range_check(d, "ascMemset", "destination", devPtr, count);
  if (e == ascSuccess)
    e = asc__default_stream_wait(d);
  if (e != ascSuccess)
    return e;
  t0 = asc__trace_clock();
  memset(devPtr, (unsigned char)value, count);
  ASC_TRACE(asc__trace_span("copy", "memset", NULL, count, t0));
  return ascSuccess;
}

ascError_t ascMemset(void *devPtr, int value, size_t count) {
  asc__device *d = NULL;
  asc__rt *rt;
  ascError_t e;

  if (count == 0)
    return ascSuccess;
  if (devPtr == NULL)
    return asc__error(ascErrorInvalidValue, "ascMemset: devPtr is NULL");
  e = sync_enter(&d, &rt);
  if (e != ascSuccess)
    return e;
  e = memset_sync(d, devPtr, value, count);
  asc__api_leave(rt);
  return e;
}

/* MemAvailable from /proc/meminfo (what the kernel could give without
 * swapping), read without stdio so it allocates nothing; 0 if unknown. */
static size_t mem_available(void) {
  char buf[4096];
  ssize_t n;
  int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
  const char *s;
  long pages, psize;

  if (fd >= 0) {
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) {
      buf[n] = '\0';
      s = strstr(buf, "MemAvailable:");
      if (s != NULL) {
        unsigned long long kb = strtoull(s + strlen("MemAvailable:"), NULL, 10);
        return (size_t)kb * 1024;
      }
    }
  }
  pages = sysconf(_SC_AVPHYS_PAGES);
  psize = sysconf(_SC_PAGESIZE);
  return pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize : 0;
}

ascError_t ascMemGetInfo(size_t *free, size_t *total) {
  asc__device *d = NULL;
  ascError_t e;
  size_t avail;

  if (free == NULL || total == NULL)
    return asc__error(ascErrorInvalidValue, "ascMemGetInfo: %s is NULL",
                      free == NULL ? "free" : "total");
  e = asc__current_device(&d);
  if (e != ascSuccess)
    return e;
  avail = mem_available();
  *total = d->prop.totalGlobalMem;
  *free = avail < *total ? avail : *total;
  return ascSuccess;
}
