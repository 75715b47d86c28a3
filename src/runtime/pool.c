/*
 * Stream-ordered memory pools: ascMallocAsync / ascFreeAsync and the
 * ascMemPool* API, with CUDA's cudaMemPool_t semantics.  docs/pools.md
 * describes them for users; this comment says how they are built.
 *
 * Backing memory.  Every pool owns a jemalloc arena of its own
 * (mallctl("arenas.create")), and takes blocks from it with
 * mallocx(MALLOCX_ARENA | MALLOCX_ALIGN | MALLOCX_TCACHE_NONE): no thread
 * cache sits between the pool and its arena, so what the pool gives back is
 * really back in the arena and purging the arena returns its pages to the
 * OS.  A private arena also makes NUMA binding safe: every page of the
 * arena belongs to this pool, so binding the pages that span a small block
 * never moves another pool's memory.
 *
 * Blocks.  A request is rounded up to a size class (64-byte steps up to
 * 1 KiB, then four classes per power of two); the class size is what the
 * pool takes from the arena and what the statistics count.  A freed block
 * stays with the pool, on the free list of its class, tagged with the
 * stream it was freed on and that stream's position at the free.  It is
 * handed out again only when the new allocation is ordered after every
 * operation that could still use it (same stream; or the freeing stream
 * completed that position; or the allocating stream waited on an event
 * recorded after it; or the pool inserts such a wait).
 *
 * A registry (hash table keyed by the block's address) holds every block
 * the pools of a device hold, so ascFreeAsync finds the block, its pool and
 * its size from the pointer alone and rejects a pointer that is not one.
 *
 * Thread caches.  The default pool's small blocks (up to 4 KiB) that a
 * thread frees on a stream wait in that thread's cache (tcache) for its
 * next allocation of their class on the same stream: the same stream is
 * always ordered after the free, so no order is checked, and neither the
 * pools lock nor the registry is touched.  The thread remembers the
 * blocks it handed out so that their frees are recognised without the
 * registry.  A cached block still counts as used, so every holder of the
 * pools lock first takes the blocks of every thread cache back onto the
 * pool's free lists (tc_flush_all, through pools_lock): statistics,
 * release thresholds, trimming, reset and the free-list scans then see
 * every block where it would be without the caches, and a free of a
 * pointer a thread cache knows, made by another thread, is checked as
 * any other.
 */
#include <hwloc.h>
/* libasc's private jemalloc (cmake/jemalloc.cmake): JEMALLOC_MANGLE maps
 * mallocx, mallctl, ... onto its asc_je_ names. */
#define JEMALLOC_MANGLE
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "runtime/pool.h"
#include "runtime/trace.h"

#include <pthread.h>
#include <stdatomic.h>

#define POOL_MAGIC UINT32_C(0x4c4f4f50)  /* "POOL" */
#define POOL_DEAD UINT32_C(0x44414544)   /* "DEAD" */
#define BLOCK_ALIGN ((size_t)64)
#define SMALL_MAX ((size_t)1024)
#define CLASS_SIZE_MAX ((size_t)1 << 62)
/* 16 classes of 64-byte steps, then 4 per power of two up to 2^62. */
#define NCLASSES (16 + 4 * 52)
#define ALIGN_MAX ((size_t)1 << 30)
#define TABLE_CAP_MIN ((size_t)256)
#define SCAN_MAX 64             /* cached blocks examined per allocation */

typedef struct block block;
struct block {
  void *ptr;
  size_t size;          /* class size: what reserved and used count */
  ascMemPool_t pool;
  block *hnext;         /* registry chain */
  block *prev, *next;   /* free list of its class while cached */
  void *stream;         /* cached: stream of the free */
  uint64_t pos;         /* cached: that stream's position at the free */
  int cls;
  bool live;            /* handed out and not yet freed */
  bool done;            /* cached: the free is known to have completed */
};

struct ascMemPool_st {
  uint32_t magic;
  bool is_default;
  bool destroyed;
  ascMemPool_t next;        /* in asc__pools.live or .zombies */
  unsigned arena;
  int numa;
  size_t align;             /* >= 64 */
  size_t max_size;          /* 0: unlimited */
  bool reuse_follow;
  bool reuse_opportunistic;
  bool reuse_internal;
  uint64_t threshold;
  uint64_t reserved, reserved_high;
  uint64_t used, used_high;
  size_t nblocks;           /* blocks held: live + cached */
  uint64_t bind_failures;
  block *cached[NCLASSES];  /* most recently freed first */
};

struct asc__pools {
  /* The pools lock guards everything below and every field of every pool
   * and block of this device.  It is taken after no other libasc lock.
   * While it is held the pool reads stream counters, may take one
   * stream's lock (a short spinlock section in asc__order_waited), and
   * calls jemalloc and hwloc; it never queues stream work or waits for a
   * stream (internal dependencies are queued with it dropped), and never
   * calls anything that could come back into the pool. */
  uv_mutex_t lock;
  asc__device *dev;
  size_t page;
  int nnodes;               /* NUMA nodes of the topology, >= 1 */
  ascMemPool_t default_pool;
  ascMemPool_t live;        /* created and not destroyed, default included */
  ascMemPool_t zombies;     /* destroyed, still holding blocks */
  block **table;            /* registry, chained, power-of-two capacity */
  size_t cap;
  size_t count;
  void *null_key;           /* the default stream's key; atomic, set once */
  struct tcache *tcaches;   /* the thread caches bound to this device */
};

/* ----------------------------------------------------------- thread caches */

/* The classes a thread cache serves: the sixteen 64-byte classes up to
 * SMALL_MAX, then the four of (1, 2] KiB and the four of (2, 4] KiB.  A
 * 4 KiB pair costs what a 64-byte one does on the locked way (the API
 * gate's atomics, the mutex, the free-list scan): the cache serves both;
 * at TC_DEPTH blocks a class, a cache holds at most 224 KiB. */
#define TC_CLASSES (16 + 2 * 4)
#define TC_MAX ((size_t)4096)   /* the largest request the caches serve */
#define TC_DEPTH 8      /* cached blocks per class */
#define TC_OUT 32       /* blocks handed out and remembered */

/* One thread's cache of the default pool of one device (ps), for one
 * stream (key).  lock is held by the owner for each allocation or free it
 * serves, and by a holder of the pools lock while it empties the cache
 * (lock order: the pools lock, then a tcache's lock; the owner never takes
 * the pools lock while holding its cache's).  Fields other than lock,
 * ps, key and next change only under lock; ps, key and next only under
 * both locks. */
typedef struct tcache {
  atomic_int lock;
  struct asc__pools *ps;        /* NULL: not bound yet */
  void *key;                    /* the stream of the cached frees */
  struct tcache *next;          /* in ps->tcaches */
  /* Blocks noted since the last flush (tc_note): 0 when the cache holds
   * none.  Written only under the pools lock, so a flusher reads it
   * plainly; its owner reads it to skip the cache at once. */
  atomic_size_t held;
  int n[TC_CLASSES];
  block *cached[TC_CLASSES][TC_DEPTH];  /* freed on key: counted as used */
  int nout;
  block *out[TC_OUT];           /* handed out by this thread, live */
} tcache;

static pthread_key_t tc_key;
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;
/* tc_key exists; read without pthread_once by threads that have no
 * cache yet. */
static atomic_bool tc_key_ok;

static void tc_lock(tcache *tc) {
  while (atomic_exchange_explicit(&tc->lock, 1, memory_order_acquire) != 0)
    while (atomic_load_explicit(&tc->lock, memory_order_relaxed) != 0)
      ;
}

static void tc_unlock(tcache *tc) {
  atomic_store_explicit(&tc->lock, 0, memory_order_release);
}

static void cache_push(ascMemPool_t pool, block *b);

/* Puts tc's cached blocks back on their pool's free lists (no longer
 * used) and forgets the blocks it handed out.  Pools lock and tc's lock
 * held. */
static void tc_flush(tcache *tc) {
  for (int c = 0; c < TC_CLASSES; c++) {
    for (int i = 0; i < tc->n[c]; i++) {
      block *b = tc->cached[c][i];
      b->pool->used -= b->size;
      cache_push(b->pool, b);
    }
    tc->n[c] = 0;
  }
  tc->nout = 0;
  atomic_store_explicit(&tc->held, 0, memory_order_relaxed);
}

/* Empties every thread cache of ps.  Pools lock held. */
static void tc_flush_all(struct asc__pools *ps) {
  for (tcache *tc = ps->tcaches; tc != NULL; tc = tc->next) {
    if (atomic_load_explicit(&tc->held, memory_order_relaxed) == 0)
      continue; /* it can gain blocks only under the pools lock */
    tc_lock(tc);
    tc_flush(tc);
    tc_unlock(tc);
  }
}

/* The pools lock, with every thread cache emptied. */
static void pools_lock(struct asc__pools *ps) {
  uv_mutex_lock(&ps->lock);
  tc_flush_all(ps);
}

/* At thread exit: the cache's blocks go back to the pool. */
static void tc_destroy(void *v) {
  tcache *tc = v;
  struct asc__pools *ps = tc->ps;

  if (ps != NULL) {
    uv_mutex_lock(&ps->lock);
    tc_lock(tc);
    tc_flush(tc);
    tc_unlock(tc);
    for (tcache **l = &ps->tcaches; *l != NULL; l = &(*l)->next)
      if (*l == tc) {
        *l = tc->next;
        break;
      }
    uv_mutex_unlock(&ps->lock);
  }
  asc__free(tc);
}

static void tc_key_create(void) {
  if (pthread_key_create(&tc_key, tc_destroy) == 0)
    atomic_store_explicit(&tc_key_ok, true, memory_order_release);
}

/* The calling thread's cache, made on first use; NULL without memory. */
static tcache *tc_self(void) {
  tcache *tc;

  pthread_once(&tc_once, tc_key_create);
  if (!atomic_load_explicit(&tc_key_ok, memory_order_acquire))
    return NULL;
  tc = pthread_getspecific(tc_key);
  if (tc == NULL && (tc = asc__calloc(1, sizeof *tc)) != NULL &&
      pthread_setspecific(tc_key, tc) != 0) {
    asc__free(tc);
    tc = NULL;
  }
  asc__tls_get()->pool_tc = tc;
  return tc;
}

/* The calling thread's cache when it serves the default stream of its
 * current device now (*key: that stream's key), else NULL.  Used outside
 * the API gate: the default stream lives as long as the device, the pool
 * state as long as the process, and ascDeviceReset empties the cache
 * under its lock before it frees any block, so an allocation or free
 * served by the cache either completes before the reset touches the
 * blocks or finds the cache empty and takes the gated way. */
static tcache *tc_default(asc__tls *tls, void **key) {
  tcache *tc = tls->pool_tc;

  if (tc == NULL || atomic_load_explicit(&tc->held, memory_order_relaxed) == 0 ||
      tls->pools == NULL || tls->pools_device != tls->device ||
      tc->ps != tls->pools || asc__tracing())
    return NULL;
  *key = __atomic_load_n(&tls->pools->null_key, __ATOMIC_ACQUIRE);
  return *key != NULL && tc->key == *key ? tc : NULL;
}

/* The calling thread's cache if it serves (ps, key) now, else NULL.  Not
 * while tracing: the slow path records the pool's counters. */
static tcache *tc_for(struct asc__pools *ps, void *key) {
  tcache *tc;

  if (asc__tracing() ||
      !atomic_load_explicit(&tc_key_ok, memory_order_acquire))
    return NULL;
  tc = pthread_getspecific(tc_key);
  return tc != NULL && tc->ps == ps && tc->key == key &&
                 atomic_load_explicit(&tc->held, memory_order_relaxed) != 0
             ? tc
             : NULL;
}

/* After a locked allocation of b (default pool, a small class) on key:
 * the calling thread's cache serves key from now on and remembers b, so
 * that its free and the next allocation take the fast path.  Pools lock
 * held, so the calling thread's cache is empty (pools_lock) and may
 * change streams. */
static void tc_note(struct asc__pools *ps, void *key, block *b) {
  tcache *tc;

  if (b->cls >= TC_CLASSES || asc__tracing() || (tc = tc_self()) == NULL)
    return;
  if (tc->ps != NULL && tc->ps != ps)
    return; /* bound to another device's pools for its life */
  tc_lock(tc);
  if (tc->ps == NULL) {
    tc->ps = ps;
    tc->next = ps->tcaches;
    ps->tcaches = tc;
  }
  tc->key = key;
  if (tc->nout < TC_OUT) {
    tc->out[tc->nout++] = b;
    atomic_fetch_add_explicit(&tc->held, 1, memory_order_relaxed);
  }
  tc_unlock(tc);
}

/* The fast allocation: a block of class cls this thread freed on key. */
static void *tc_alloc(tcache *tc, void *key, int cls) {
  void *p = NULL;

  tc_lock(tc);
  if (tc->key == key && tc->n[cls] > 0 && tc->nout < TC_OUT) {
    block *b = tc->cached[cls][--tc->n[cls]];
    b->live = true;
    b->stream = NULL;
    tc->out[tc->nout++] = b;
    p = b->ptr;
  }
  tc_unlock(tc);
  return p;
}

/* The fast free: ptr is a block this thread handed out, with room in its
 * class.  False: take the locked way. */
static bool tc_free(tcache *tc, void *key, void *ptr) {
  bool done = false;

  tc_lock(tc);
  for (int i = tc->nout - 1; i >= 0 && tc->key == key; i--) {
    block *b = tc->out[i];
    if (b->ptr != ptr)
      continue;
    if (tc->n[b->cls] < TC_DEPTH) {
      tc->out[i] = tc->out[--tc->nout];
      b->live = false;
      b->stream = key;
      b->pos = asc__order_now(key);
      b->done = false;
      tc->cached[b->cls][tc->n[b->cls]++] = b;
      done = true;
    }
    break;
  }
  tc_unlock(tc);
  return done;
}

/* ------------------------------------------------------------ size classes */

/* Class index of a request, its class size in *csize; -1 when the request
 * is 0 or larger than CLASS_SIZE_MAX. */
static int size_class(size_t size, size_t *csize) {
  size_t s, step, r;
  int k;

  if (size == 0 || size > CLASS_SIZE_MAX)
    return -1;
  s = (size + BLOCK_ALIGN - 1) & ~(BLOCK_ALIGN - 1);
  if (s <= SMALL_MAX) {
    *csize = s;
    return (int)(s / BLOCK_ALIGN) - 1;
  }
  /* s in (2^k, 2^(k+1)], k >= 10: four classes, step 2^(k-2). */
  k = 63 - __builtin_clzll((unsigned long long)(s - 1));
  step = (size_t)1 << (k - 2);
  r = (s + step - 1) & ~(step - 1);
  *csize = r;
  return 16 + (k - 10) * 4 + (int)(r / step) - 5;
}

size_t asc__pool_block_size(size_t size) {
  size_t c = 0;
  return size_class(size, &c) < 0 ? 0 : c;
}

/* ---------------------------------------------------------------- registry */

static size_t hash_ptr(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p >> 6;
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static block *reg_find(struct asc__pools *ps, const void *p) {
  block *b;
  for (b = ps->table[hash_ptr(p, ps->cap)]; b != NULL; b = b->hnext)
    if (b->ptr == p)
      return b;
  return NULL;
}

/* Doubles the table when it is full.  A failed growth only makes chains
 * longer, so it is not an error. */
static void reg_insert(struct asc__pools *ps, block *b) {
  size_t i;

  if (ps->count >= ps->cap) {
    block **t = asc__calloc(ps->cap * 2, sizeof *t);
    if (t != NULL) {
      for (i = 0; i < ps->cap; i++) {
        block *c = ps->table[i], *nx;
        for (; c != NULL; c = nx) {
          size_t h = hash_ptr(c->ptr, ps->cap * 2);
          nx = c->hnext;
          c->hnext = t[h];
          t[h] = c;
        }
      }
      asc__free(ps->table);
      ps->table = t;
      ps->cap *= 2;
    }
  }
  i = hash_ptr(b->ptr, ps->cap);
  b->hnext = ps->table[i];
  ps->table[i] = b;
  ps->count++;
}

static void reg_remove(struct asc__pools *ps, block *b) {
  block **l = &ps->table[hash_ptr(b->ptr, ps->cap)];
  while (*l != b)
    l = &(*l)->hnext;
  *l = b->hnext;
  ps->count--;
}

/* ------------------------------------------------------------------ arenas */

static bool arena_create(unsigned *index) {
  size_t sz = sizeof *index;
  /* Creating an arena allocates jemalloc metadata: a failure point. */
  if (asc__alloc_should_fail(sizeof(unsigned)))
    return false;
  return mallctl("arenas.create", index, &sz, NULL, 0) == 0;
}

static void arena_ctl(unsigned index, const char *op) {
  char name[64];
  snprintf(name, sizeof name, "arena.%u.%s", index, op);
  (void)mallctl(name, NULL, NULL, NULL, 0);
}

static size_t block_align(struct asc__pools *ps, ascMemPool_t pool,
                          size_t size) {
  if (size >= ASC_PAGE_ALIGN_MIN && pool->align < ps->page)
    return ps->page;
  return pool->align;
}

static void bind_block(struct asc__pools *ps, ascMemPool_t pool, void *p,
                       size_t size) {
  hwloc_topology_t topo = ps->dev->topo;
  hwloc_obj_t node =
      hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)pool->numa);
  uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(ps->page - 1);
  uintptr_t hi = ((uintptr_t)p + size + ps->page - 1) &
                 ~(uintptr_t)(ps->page - 1);

  if (node == NULL ||
      hwloc_set_area_membind(topo, (void *)lo, hi - lo, node->nodeset,
                             HWLOC_MEMBIND_BIND,
                             HWLOC_MEMBIND_BYNODESET |
                                 HWLOC_MEMBIND_MIGRATE) != 0)
    pool->bind_failures++;
}

static void *arena_alloc(struct asc__pools *ps, ascMemPool_t pool,
                         size_t size) {
  void *p;

  if (asc__alloc_should_fail(size))
    return NULL;
  p = mallocx(size, MALLOCX_ARENA(pool->arena) |
                        MALLOCX_ALIGN(block_align(ps, pool, size)) |
                        MALLOCX_TCACHE_NONE);
  if (p != NULL && pool->numa >= 0 && ps->nnodes > 1)
    bind_block(ps, pool, p, size);
  return p;
}

static void arena_free(struct asc__pools *ps, ascMemPool_t pool, void *p,
                       size_t size) {
  sdallocx(p, size,
           MALLOCX_ALIGN(block_align(ps, pool, size)) | MALLOCX_TCACHE_NONE);
}

/* ---------------------------------------------------------- pool internals */

static void note_reserved(ascMemPool_t pool) {
  if (pool->reserved > pool->reserved_high)
    pool->reserved_high = pool->reserved;
}

static void note_used(ascMemPool_t pool) {
  if (pool->used > pool->used_high)
    pool->used_high = pool->used;
}

static void cache_unlink(ascMemPool_t pool, block *b) {
  if (b->prev != NULL)
    b->prev->next = b->next;
  else
    pool->cached[b->cls] = b->next;
  if (b->next != NULL)
    b->next->prev = b->prev;
  b->prev = b->next = NULL;
}

static void cache_push(ascMemPool_t pool, block *b) {
  b->prev = NULL;
  b->next = pool->cached[b->cls];
  if (b->next != NULL)
    b->next->prev = b;
  pool->cached[b->cls] = b;
}

/* True when nothing enqueued before b's free can still touch it. */
static bool free_completed(block *b) {
  if (!b->done && asc__order_reached(b->stream, b->pos))
    b->done = true;
  return b->done;
}

static void release_block(struct asc__pools *ps, ascMemPool_t pool,
                          block *b) {
  reg_remove(ps, b);
  arena_free(ps, pool, b->ptr, b->size);
  pool->reserved -= b->size;
  pool->nblocks--;
  asc__free(b);
}

/* Gives cached blocks whose frees have completed back to the arena, largest
 * first, until the pool reserves at most `keep` bytes; then returns the
 * arena's unused pages to the OS.  Blocks still possibly in use by queued
 * work stay. */
static void release_cached(struct asc__pools *ps, ascMemPool_t pool,
                           uint64_t keep) {
  bool any = false;
  int c;

  for (c = NCLASSES - 1; c >= 0 && pool->reserved > keep; c--) {
    block *b, *nx;
    for (b = pool->cached[c]; b != NULL && pool->reserved > keep; b = nx) {
      nx = b->next;
      if (!free_completed(b))
        continue;
      cache_unlink(pool, b);
      release_block(ps, pool, b);
      any = true;
    }
  }
  if (any)
    arena_ctl(pool->arena, "purge");
}

static void pool_free_struct(ascMemPool_t pool) {
  arena_ctl(pool->arena, "destroy");
  pool->magic = POOL_DEAD;
  asc__free(pool);
}

/* A destroyed pool goes away once it holds no block. */
static void reap(struct asc__pools *ps, ascMemPool_t pool) {
  ascMemPool_t *l;

  release_cached(ps, pool, 0);
  if (pool->nblocks != 0)
    return;
  for (l = &ps->zombies; *l != pool; l = &(*l)->next)
    ;
  *l = pool->next;
  pool_free_struct(pool);
}

/* Takes a cached block of class cls that stream key may use now, or NULL.
 * *wait is set when the block may be used only after key has been made to
 * wait for the block's freeing stream (an internal dependency).
 * Looks at no more than SCAN_MAX blocks, most recently freed first, so an
 * allocation costs a bounded time however many frees are pending on other
 * streams; missing an older reusable block only costs memory, which the
 * release threshold bounds. */
static block *take_cached(ascMemPool_t pool, int cls, void *key,
                          bool *wait) {
  block *b, *cand = NULL;
  void *asked = NULL;       /* the stream last asked about, and its answer */
  uint64_t waited = 0;
  int n = 0;

  for (b = pool->cached[cls]; b != NULL && n < SCAN_MAX; b = b->next, n++) {
    if (b->stream == key)
      goto take;
    if (pool->reuse_opportunistic && free_completed(b))
      goto take;
    if (pool->reuse_follow) {
      if (b->stream != asked) {
        asked = b->stream;
        waited = asc__order_waited(key, asked);
      }
      /* The record at position `waited` was queued after the free. */
      if (waited > b->pos)
        goto take;
    }
    if (cand == NULL)
      cand = b;
  }
  /* Nothing is ordered after its free yet: the allocating stream must wait
   * for the freeing one, as CUDA's internal dependencies do. */
  if (cand != NULL && pool->reuse_internal) {
    b = cand;
    *wait = true;
    goto take;
  }
  return NULL;
take:
  cache_unlink(pool, b);
  return b;
}

static ascError_t new_block(struct asc__pools *ps, ascMemPool_t pool, int cls,
                            size_t csize, block **out) {
  block *b;

  if (pool->max_size != 0) {
    if (csize > pool->max_size)
      return asc__error(ascErrorOutOfMemory,
                        "pool allocation of %zu bytes exceeds the pool's "
                        "maxSize (%zu bytes)", csize, pool->max_size);
    if (pool->reserved + csize > pool->max_size)
      release_cached(ps, pool, pool->max_size - csize);
    if (pool->reserved + csize > pool->max_size)
      return asc__error(ascErrorOutOfMemory,
                        "pool maxSize %zu reached: %llu bytes reserved, "
                        "%zu more needed", pool->max_size,
                        (unsigned long long)pool->reserved, csize);
  }
  b = asc__calloc(1, sizeof *b);
  if (b == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate a pool block "
                      "descriptor");
  b->ptr = arena_alloc(ps, pool, csize);
  if (b->ptr == NULL) {
    /* Memory cached for other sizes may be what the arena lacks. */
    release_cached(ps, pool, 0);
    b->ptr = arena_alloc(ps, pool, csize);
  }
  if (b->ptr == NULL) {
    asc__free(b);
    return asc__error(ascErrorOutOfMemory,
                      "cannot allocate %zu bytes of device memory", csize);
  }
  b->size = csize;
  b->pool = pool;
  b->cls = cls;
  reg_insert(ps, b);
  pool->reserved += csize;
  pool->nblocks++;
  note_reserved(pool);
  *out = b;
  return ascSuccess;
}

static ascError_t pool_alloc(struct asc__pools *ps, ascMemPool_t pool,
                             size_t size, void *key, void **out) {
  size_t csize = 0;
  int cls = size_class(size, &csize);
  bool wait = false;
  block *b;
  ascError_t e;

  if (cls < 0)
    return asc__error(ascErrorOutOfMemory,
                      "cannot allocate %zu bytes from a pool", size);
  b = take_cached(pool, cls, key, &wait);
  if (b != NULL && wait) {
    /* Queuing the wait may block (a full stream queue), and a host
     * function that stream is running may call into the pool: so the
     * pools lock is dropped meanwhile, with b off every list (still
     * counted in reserved and nblocks, so the pool cannot go away). */
    void *src = b->stream;
    bool ok;
    uv_mutex_unlock(&ps->lock);
    ok = asc__order_wait(key, src);
    pools_lock(ps);
    if (!ok) {
      cache_push(pool, b);
      b = NULL;
    }
  }
  if (b == NULL) {
    e = new_block(ps, pool, cls, csize, &b);
    if (e != ascSuccess)
      return e;
  }
  b->live = true;
  b->stream = NULL;
  b->done = false;
  pool->used += b->size;
  note_used(pool);
  ASC_TRACE(asc__trace_pool("pool alloc", pool, b->size, pool->reserved,
                            pool->used));
  *out = b->ptr;
  return ascSuccess;
}

static ascError_t pool_new(struct asc__pools *ps, const ascMemPoolProps *pr,
                           bool is_default, ascMemPool_t *out) {
  ascMemPool_t p = asc__calloc(1, sizeof *p);

  if (p == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate a memory pool");
  if (!arena_create(&p->arena)) {
    asc__free(p);
    return asc__error(ascErrorOutOfMemory,
                      "cannot create a jemalloc arena for a memory pool");
  }
  p->magic = POOL_MAGIC;
  p->is_default = is_default;
  p->numa = pr->numaNode;
  p->align = pr->alignment ? pr->alignment : BLOCK_ALIGN;
  p->max_size = pr->maxSize;
  p->reuse_follow = p->reuse_opportunistic = p->reuse_internal = true;
  p->threshold = 0;
  p->next = ps->live;
  ps->live = p;
  *out = p;
  return ascSuccess;
}

/* ----------------------------------------------------- device pool state */

static void pools_free(struct asc__pools *ps) {
  if (ps == NULL)
    return;
  asc__free(ps->table);
  uv_mutex_destroy(&ps->lock);
  asc__free(ps);
}

/* The pool state of device d, created on first use. */
static ascError_t get_pools(asc__device *d, struct asc__pools **out) {
  struct asc__pools *ps = __atomic_load_n(&d->pools, __ATOMIC_ACQUIRE);
  struct asc__pools *expected = NULL;
  int n;

  if (ps != NULL) {
    *out = ps;
    return ascSuccess;
  }
  ps = asc__calloc(1, sizeof *ps);
  if (ps == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate pool state");
  if (uv_mutex_init(&ps->lock) != 0) {
    asc__free(ps);
    return asc__error(ascErrorOutOfMemory, "cannot create the pools lock");
  }
  ps->table = asc__calloc(TABLE_CAP_MIN, sizeof *ps->table);
  if (ps->table == NULL) {
    pools_free(ps);
    return asc__error(ascErrorOutOfMemory, "cannot allocate pool state");
  }
  ps->cap = TABLE_CAP_MIN;
  ps->dev = d;
  ps->page = (size_t)sysconf(_SC_PAGESIZE);
  n = hwloc_get_nbobjs_by_type(d->topo, HWLOC_OBJ_NUMANODE);
  ps->nnodes = n > 0 ? n : 1;
  if (!__atomic_compare_exchange_n(&d->pools, &expected, ps, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    pools_free(ps);
    ps = expected;
  }
  *out = ps;
  return ascSuccess;
}

static ascError_t default_pool_locked(struct asc__pools *ps,
                                      ascMemPool_t *out) {
  static const ascMemPoolProps defaults = {.numaNode = -1};
  if (ps->default_pool == NULL) {
    ascError_t e = pool_new(ps, &defaults, true, &ps->default_pool);
    if (e != ascSuccess)
      return e;
  }
  *out = ps->default_pool;
  return ascSuccess;
}

static bool pool_listed(struct asc__pools *ps, ascMemPool_t pool) {
  ascMemPool_t q;
  for (q = ps->live; q != NULL; q = q->next)
    if (q == pool)
      return true;
  return false;
}

/* Finds the device that owns pool handle h and returns with its pools
 * lock held.  Handles are checked by membership, never dereferenced before
 * they are known to be live. */
static ascError_t lock_pool(ascMemPool_t h, const char *fn,
                            struct asc__pools **out) {
  int n = 0, i;
  ascError_t e;

  if (h == NULL)
    return asc__error(ascErrorInvalidHandle, "%s: pool is NULL", fn);
  e = ascGetDeviceCount(&n);
  if (e != ascSuccess)
    return e;
  for (i = 0; i < n; i++) {
    asc__device *d;
    struct asc__pools *ps;
    if (asc__get_device(&d, i) != ascSuccess)
      continue;
    ps = __atomic_load_n(&d->pools, __ATOMIC_ACQUIRE);
    if (ps == NULL)
      continue;
    pools_lock(ps);
    if (pool_listed(ps, h)) {
      *out = ps;
      return ascSuccess;
    }
    uv_mutex_unlock(&ps->lock);
  }
  return asc__error(ascErrorInvalidHandle,
                    "%s: %p is not a live memory pool", fn, (void *)h);
}

/* The pools of the stream's device and the stream's order key, inside
 * the runtime's API gate: ascDeviceReset frees the pools' blocks, and
 * an allocation drops the pools lock while it queues a wait.  On success
 * the caller leaves with asc__order_leave(*key).  The default stream's
 * key never changes for a device (ascDeviceReset keeps the default
 * stream), so it is looked up once. */
static ascError_t stream_pools_tls(ascStream_t stream, asc__tls *tls,
                                   struct asc__pools **ps, void **key) {
  asc__device *d;
  ascError_t e;

  if (stream == NULL) {
    /* The thread's cached pool state (asc__tls.pools) skips the device
     * lookup: pool state lives as long as the process once created
     * (ascDeviceReset empties it, never frees it). */
    if (tls->pools != NULL && tls->pools_device == tls->device) {
      *ps = tls->pools;
    } else {
      e = asc__get_device(&d, tls->device);
      if (e == ascSuccess)
        e = get_pools(d, ps);
      if (e != ascSuccess)
        return e;
      tls->pools_device = tls->device;
      tls->pools = *ps;
    }
    *key = __atomic_load_n(&(*ps)->null_key, __ATOMIC_ACQUIRE);
    if (*key != NULL)
      return asc__order_enter(*key);
    e = asc__order_stream(NULL, &d, key);
    if (e == ascSuccess)
      __atomic_store_n(&(*ps)->null_key, *key, __ATOMIC_RELEASE);
    return e;
  }
  e = asc__order_stream(stream, &d, key);
  if (e != ascSuccess)
    return e;
  e = get_pools(d, ps);
  if (e != ascSuccess)
    asc__order_leave(*key);
  return e;
}

/* stream_pools_tls for a caller that has not read the thread's state. */
static ascError_t stream_pools(ascStream_t stream, struct asc__pools **ps,
                               void **key) {
  return stream_pools_tls(stream, stream == NULL ? asc__tls_get() : NULL, ps,
                          key);
}

/* --------------------------------------------------------------- public API */

ascError_t ascMemPoolCreate(ascMemPool_t *pool, const ascMemPoolProps *props) {
  struct asc__pools *ps;
  ascError_t e;

  if (pool == NULL)
    return asc__error(ascErrorInvalidValue, "ascMemPoolCreate: pool is NULL");
  *pool = NULL;
  if (props == NULL)
    return asc__error(ascErrorInvalidValue, "ascMemPoolCreate: props is NULL");
  {
    asc__device *d;
    e = asc__current_device(&d);
    if (e == ascSuccess)
      e = get_pools(d, &ps);
    if (e != ascSuccess)
      return e;
  }
  if (props->numaNode < -1 || props->numaNode >= ps->nnodes)
    return asc__error(ascErrorInvalidValue,
                      "ascMemPoolCreate: numaNode %d is not -1 or a node in "
                      "[0, %d)", props->numaNode, ps->nnodes);
  if (props->alignment != 0 &&
      (props->alignment < BLOCK_ALIGN || props->alignment > ALIGN_MAX ||
       (props->alignment & (props->alignment - 1)) != 0))
    return asc__error(ascErrorInvalidValue,
                      "ascMemPoolCreate: alignment %zu is not 0 or a power "
                      "of two in [64, 2^30]", props->alignment);
  pools_lock(ps);
  e = pool_new(ps, props, false, pool);
  uv_mutex_unlock(&ps->lock);
  return e;
}

ascError_t ascMemPoolDestroy(ascMemPool_t pool) {
  struct asc__pools *ps;
  ascMemPool_t *l;
  ascError_t e = lock_pool(pool, "ascMemPoolDestroy", &ps);

  if (e != ascSuccess)
    return e;
  if (pool->is_default) {
    uv_mutex_unlock(&ps->lock);
    return asc__error(ascErrorInvalidValue,
                      "ascMemPoolDestroy: a device's default pool cannot be "
                      "destroyed");
  }
  for (l = &ps->live; *l != pool; l = &(*l)->next)
    ;
  *l = pool->next;
  pool->destroyed = true;
  pool->magic = POOL_DEAD;
  pool->next = ps->zombies;
  ps->zombies = pool;
  reap(ps, pool);
  uv_mutex_unlock(&ps->lock);
  return ascSuccess;
}

ascError_t ascDeviceGetDefaultMemPool(ascMemPool_t *pool, int device) {
  asc__device *d;
  struct asc__pools *ps;
  ascError_t e;

  if (pool == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascDeviceGetDefaultMemPool: pool is NULL");
  e = asc__get_device(&d, device);
  if (e != ascSuccess)
    return e;
  e = get_pools(d, &ps);
  if (e != ascSuccess)
    return e;
  pools_lock(ps);
  e = default_pool_locked(ps, pool);
  uv_mutex_unlock(&ps->lock);
  return e;
}

ascError_t ascMallocFromPoolAsync(void **ptr, size_t size, ascMemPool_t pool,
                                  ascStream_t stream) {
  struct asc__pools *ps;
  void *key;
  ascError_t e;

  if (ptr == NULL)
    return asc__error(ascErrorInvalidValue,
                      "ascMallocFromPoolAsync: devPtr is NULL");
  *ptr = NULL;
  if (pool == NULL)
    return asc__error(ascErrorInvalidHandle,
                      "ascMallocFromPoolAsync: pool is NULL");
  e = stream_pools(stream, &ps, &key);
  if (e != ascSuccess)
    return e;
  pools_lock(ps);
  if (!pool_listed(ps, pool))
    e = asc__error(ascErrorInvalidHandle,
                   "ascMallocFromPoolAsync: %p is not a live memory pool of "
                   "the stream's device", (void *)pool);
  else if (size != 0)
    e = pool_alloc(ps, pool, size, key, ptr);
  uv_mutex_unlock(&ps->lock);
  asc__order_leave(key);
  return e;
}

ascError_t ascMallocAsync(void **ptr, size_t size, ascStream_t stream) {
  struct asc__pools *ps;
  ascMemPool_t pool;
  void *key = NULL;
  ascError_t e;
  /* the class of a request a thread cache serves (size_class's, without
   * its general case up to 1 KiB), else -1 */
  size_t csize;
  int cls = size - 1 < SMALL_MAX ? (int)((size - 1) >> 6)
            : size - 1 < TC_MAX  ? size_class(size, &csize)
                                 : -1;
  tcache *tc;
  asc__tls *tls = stream == NULL ? asc__tls_get() : NULL;

  if (ptr == NULL)
    return asc__error(ascErrorInvalidValue, "ascMallocAsync: devPtr is NULL");
  *ptr = NULL;
  if (tls != NULL && cls >= 0 && cls < TC_CLASSES &&
      (tc = tc_default(tls, &key)) != NULL &&
      (*ptr = tc_alloc(tc, key, cls)) != NULL)
    return ascSuccess;
  e = stream_pools_tls(stream, tls, &ps, &key);
  if (e != ascSuccess)
    return e;
  if (size != 0) {
    if (stream != NULL && cls >= 0 && cls < TC_CLASSES &&
        (tc = tc_for(ps, key)) != NULL &&
        (*ptr = tc_alloc(tc, key, cls)) != NULL) {
      asc__order_leave(key);
      return ascSuccess;
    }
    pools_lock(ps);
    e = default_pool_locked(ps, &pool);
    if (e == ascSuccess)
      e = pool_alloc(ps, pool, size, key, ptr);
    if (e == ascSuccess && cls >= 0 && cls < TC_CLASSES)
      tc_note(ps, key, reg_find(ps, *ptr));
    uv_mutex_unlock(&ps->lock);
  }
  asc__order_leave(key);
  return e;
}

static ascError_t free_async(struct asc__pools *ps, void *ptr, void *key) {
  ascMemPool_t pool;
  block *b;

  pools_lock(ps);
  b = reg_find(ps, ptr);
  if (b == NULL || !b->live) {
    uv_mutex_unlock(&ps->lock);
    return asc__error(ascErrorInvalidValue,
                      "ascFreeAsync: %p is not a live allocation from a "
                      "memory pool (foreign, interior or already freed)",
                      ptr);
  }
  pool = b->pool;
  b->live = false;
  b->stream = key;
  b->pos = asc__order_now(key);
  b->done = false;
  pool->used -= b->size;
  ASC_TRACE(asc__trace_pool("pool free", pool, b->size, pool->reserved,
                            pool->used));
  cache_push(pool, b);
  if (pool->destroyed)
    reap(ps, pool);
  uv_mutex_unlock(&ps->lock);
  return ascSuccess;
}

ascError_t ascFreeAsync(void *ptr, ascStream_t stream) {
  struct asc__pools *ps;
  void *key = NULL;
  ascError_t e;
  tcache *tc;

  asc__tls *tls = stream == NULL ? asc__tls_get() : NULL;

  if (tls != NULL && ptr != NULL && (tc = tc_default(tls, &key)) != NULL &&
      tc_free(tc, key, ptr))
    return ascSuccess;
  e = stream_pools_tls(stream, tls, &ps, &key);
  if (e != ascSuccess)
    return e;
  if (ptr != NULL && (stream == NULL || (tc = tc_for(ps, key)) == NULL ||
                      !tc_free(tc, key, ptr)))
    e = free_async(ps, ptr, key);
  asc__order_leave(key);
  return e;
}

static ascError_t set_high(uint64_t *high, uint64_t cur, const void *value,
                           const char *what) {
  if (*(const uint64_t *)value != 0)
    return asc__error(ascErrorInvalidValue,
                      "ascMemPoolSetAttribute: %s can only be reset to 0",
                      what);
  *high = cur;
  return ascSuccess;
}

ascError_t ascMemPoolSetAttribute(ascMemPool_t pool, ascMemPoolAttr attr,
                                  void *value) {
  struct asc__pools *ps;
  ascError_t e = lock_pool(pool, "ascMemPoolSetAttribute", &ps);

  if (e != ascSuccess)
    return e;
  if (value == NULL) {
    e = asc__error(ascErrorInvalidValue,
                   "ascMemPoolSetAttribute: value is NULL");
    goto out;
  }
  switch (attr) {
  case ascMemPoolReuseFollowEventDependencies:
    pool->reuse_follow = *(const int *)value != 0;
    break;
  case ascMemPoolReuseAllowOpportunistic:
    pool->reuse_opportunistic = *(const int *)value != 0;
    break;
  case ascMemPoolReuseAllowInternalDependencies:
    pool->reuse_internal = *(const int *)value != 0;
    break;
  case ascMemPoolAttrReleaseThreshold:
    pool->threshold = *(const uint64_t *)value;
    break;
  case ascMemPoolAttrReservedMemHigh:
    e = set_high(&pool->reserved_high, pool->reserved, value,
                 "ReservedMemHigh");
    break;
  case ascMemPoolAttrUsedMemHigh:
    e = set_high(&pool->used_high, pool->used, value, "UsedMemHigh");
    break;
  case ascMemPoolAttrReservedMemCurrent:
  case ascMemPoolAttrUsedMemCurrent:
    e = asc__error(ascErrorInvalidValue,
                   "ascMemPoolSetAttribute: attribute %d is read-only",
                   (int)attr);
    break;
  default:
    e = asc__error(ascErrorInvalidValue,
                   "ascMemPoolSetAttribute: unknown attribute %d", (int)attr);
    break;
  }
out:
  uv_mutex_unlock(&ps->lock);
  return e;
}

ascError_t ascMemPoolGetAttribute(ascMemPool_t pool, ascMemPoolAttr attr,
                                  void *value) {
  struct asc__pools *ps;
  ascError_t e = lock_pool(pool, "ascMemPoolGetAttribute", &ps);

  if (e != ascSuccess)
    return e;
  if (value == NULL) {
    e = asc__error(ascErrorInvalidValue,
                   "ascMemPoolGetAttribute: value is NULL");
    goto out;
  }
  switch (attr) {
  case ascMemPoolReuseFollowEventDependencies:
    *(int *)value = pool->reuse_follow;
    break;
  case ascMemPoolReuseAllowOpportunistic:
    *(int *)value = pool->reuse_opportunistic;
    break;
  case ascMemPoolReuseAllowInternalDependencies:
    *(int *)value = pool->reuse_internal;
    break;
  case ascMemPoolAttrReleaseThreshold:
    *(uint64_t *)value = pool->threshold;
    break;
  case ascMemPoolAttrReservedMemCurrent:
    *(uint64_t *)value = pool->reserved;
    break;
  case ascMemPoolAttrReservedMemHigh:
    *(uint64_t *)value = pool->reserved_high;
    break;
  case ascMemPoolAttrUsedMemCurrent:
    *(uint64_t *)value = pool->used;
    break;
  case ascMemPoolAttrUsedMemHigh:
    *(uint64_t *)value = pool->used_high;
    break;
  default:
    e = asc__error(ascErrorInvalidValue,
                   "ascMemPoolGetAttribute: unknown attribute %d", (int)attr);
    break;
  }
out:
  uv_mutex_unlock(&ps->lock);
  return e;
}

ascError_t ascMemPoolTrimTo(ascMemPool_t pool, size_t minBytesToKeep) {
  struct asc__pools *ps;
  ascError_t e = lock_pool(pool, "ascMemPoolTrimTo", &ps);

  if (e != ascSuccess)
    return e;
  release_cached(ps, pool, minBytesToKeep);
  uv_mutex_unlock(&ps->lock);
  return ascSuccess;
}

/* ------------------------------------------------------------ runtime hooks */

void asc__pool_on_sync(asc__device *d) {
  struct asc__pools *ps = __atomic_load_n(&d->pools, __ATOMIC_ACQUIRE);
  ascMemPool_t p, nx;

  if (ps == NULL)
    return;
  pools_lock(ps);
  for (p = ps->live; p != NULL; p = p->next)
    if (p->reserved > p->threshold)
      release_cached(ps, p, p->threshold);
  for (p = ps->zombies; p != NULL; p = nx) {
    nx = p->next;
    reap(ps, p);
  }
  uv_mutex_unlock(&ps->lock);
}

void asc__pool_device_reset(asc__device *d) {
  struct asc__pools *ps = __atomic_load_n(&d->pools, __ATOMIC_ACQUIRE);
  ascMemPool_t p, nx;
  size_t i;

  if (ps == NULL)
    return;
  pools_lock(ps);
  for (i = 0; i < ps->cap; i++) {
    block *b, *bn;
    for (b = ps->table[i]; b != NULL; b = bn) {
      bn = b->hnext;
      arena_free(ps, b->pool, b->ptr, b->size);
      asc__free(b);
    }
    ps->table[i] = NULL;
  }
  ps->count = 0;
  for (p = ps->live; p != NULL; p = nx) {
    nx = p->next;
    pool_free_struct(p);
  }
  for (p = ps->zombies; p != NULL; p = nx) {
    nx = p->next;
    pool_free_struct(p);
  }
  ps->live = ps->zombies = ps->default_pool = NULL;
  /* Looked up again on next use, in case the stream code recreates its
   * default stream. */
  __atomic_store_n(&ps->null_key, NULL, __ATOMIC_RELEASE);
  uv_mutex_unlock(&ps->lock);
}

void asc__pool_fork_prepare(asc__device *d) {
  struct asc__pools *ps = __atomic_load_n(&d->pools, __ATOMIC_ACQUIRE);
  if (ps == NULL)
    return;
  uv_mutex_lock(&ps->lock);
  /* No thread is inside its cache at the fork. */
  for (tcache *tc = ps->tcaches; tc != NULL; tc = tc->next)
    tc_lock(tc);
}

void asc__pool_fork_parent(asc__device *d) {
  struct asc__pools *ps = __atomic_load_n(&d->pools, __ATOMIC_ACQUIRE);
  if (ps == NULL)
    return;
  for (tcache *tc = ps->tcaches; tc != NULL; tc = tc->next)
    tc_unlock(tc);
  uv_mutex_unlock(&ps->lock);
}

void asc__pool_fork_child(asc__device *d) {
  struct asc__pools *ps = __atomic_load_n(&d->pools, __ATOMIC_ACQUIRE);
  if (ps == NULL)
    return;
  /* Taken by this thread before the fork: made new, never unlocked (the
   * owner's thread id changed).  The caches' blocks go back to the pool:
   * the threads that owned them are gone (their caches stay listed,
   * empty, unused). */
  (void)uv_mutex_init(&ps->lock);
  for (tcache *tc = ps->tcaches; tc != NULL; tc = tc->next) {
    tc_flush(tc);
    tc_unlock(tc);
  }
}

int asc__pool_thread_cached(void) {
  tcache *tc = asc__tls_get()->pool_tc;
  int n = 0;

  if (tc == NULL)
    return 0;
  tc_lock(tc);
  for (int c = 0; c < TC_CLASSES; c++)
    n += tc->n[c];
  tc_unlock(tc);
  return n;
}

uint64_t asc__pool_bind_failures(ascMemPool_t pool) {
  struct asc__pools *ps;
  uint64_t n;

  if (lock_pool(pool, "asc__pool_bind_failures", &ps) != ascSuccess)
    return 0;
  n = pool->bind_failures;
  uv_mutex_unlock(&ps->lock);
  return n;
}
