/*
 * The trace recorder (trace_rec.h) behind the hooks of trace.h: the clock,
 * each thread's chunks of records, the signatures of kernels compiled
 * while tracing.  What the records become, and when, is the reader's
 * (runtime/trace.c, docs/tracing.md).
 *
 * Locks: hooks may be called with a stream spinlock, a pool lock or the
 * pool's ready-list lock held.  Once every CHUNK_RECS records a hook
 * allocates a chunk and takes the chunk-list lock, a leaf lock: the
 * reader holds it while formatting and takes no other libasc lock.
 */
#include "base/trace_rec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "base/base.h"

#define CHUNK_RECS 512
/* Chunks that a drain read to the end are kept for reuse, up to this
 * many (4 MiB): their pages are already mapped. */
#define SPARE_MAX 64

typedef struct chunk {
  struct chunk *next;          /* under list_lock */
  int tid;                     /* the owning thread's track */
  char tname[32];
  size_t read;                 /* under list_lock: records drained */
  atomic_int full;             /* the owner moved to a new chunk */
  _Atomic size_t n;            /* published records */
  asc__trace_rec recs[CHUNK_RECS];
} chunk;

atomic_int asc__trace_on;
atomic_int asc__trace_clk;

/* The calling thread's recording state: one TLS block, so a hook looks
 * its thread up once. */
static _Thread_local struct {
  chunk *chunk;
  int tid;                     /* track, assigned at the first record */
  char name[32];
} tl;

static uv_once_t once = UV_ONCE_INIT;
/* Guards the chunk list, the signatures, and the reader's session.  A
 * leaf lock except that the reader allocates while holding it. */
static uv_mutex_t list_lock;
static chunk *chunks;
static atomic_int next_tid;
static chunk *spare;           /* under list_lock: chunks to reuse */
static int nspare;
/* Chunks on the list (written to under list_lock), and how many may be:
 * a record that would need one more is dropped. */
static atomic_size_t nheld;
static atomic_size_t max_held = SIZE_MAX;
/* Records dropped since the limit was set, and the trace-clock time of
 * the first. */
static _Atomic uint64_t dropped;
static _Atomic uint64_t first_drop;
/* Under list_lock: specialisation signatures of kernels compiled while
 * tracing. */
static const void *sig_desc[256];
static char *sig_text[256];
static int nsigs;

static void init_once(void) { uv_mutex_init(&list_lock); }

void asc__trace_lock(void) {
  uv_once(&once, init_once);
  uv_mutex_lock(&list_lock);
}

void asc__trace_unlock(void) { uv_mutex_unlock(&list_lock); }

/* ---------------------------------------------------------------- clock */

/* The TSC is used when all of these hold (else CLOCK_MONOTONIC):
 * x86-64; /proc/cpuinfo lists constant_tsc (a fixed rate whatever the
 * core's frequency) and nonstop_tsc (it runs in deep C-states); the
 * kernel's current clocksource is "tsc" (the kernel checked that the
 * cores' counters agree, and switches away from it when they do not);
 * and $ASC_TRACE_CLOCK is not "monotonic".  Ticks become nanoseconds at
 * the flush, by the rate measured against CLOCK_MONOTONIC from the first
 * session's start to the flush: one linear map for every thread, so the
 * order of timestamps is kept exactly and durations are off by the rate's
 * error (well under 0.01 %: the flush measures over at least 10 ms). */
static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uv_once_t clk_once = UV_ONCE_INIT;
static uint64_t cal_tick, cal_ns;    /* the anchor, set once in clk_init */

static bool file_has(const char *path, const char *word, bool whole_line) {
  FILE *f = fopen(path, "r");
  char line[4096];
  bool found = false;
  size_t n = strlen(word);

  if (f == NULL)
    return false;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    if (whole_line) {
      found = strncmp(line, word, n) == 0 &&
              (line[n] == '\n' || line[n] == '\0');
      continue;
    }
    for (char *p = strstr(line, word); p != NULL && !found;
         p = strstr(p + 1, word))
      found = (p == line || p[-1] == ' ') &&
              (p[n] == ' ' || p[n] == '\n' || p[n] == '\0');
    if (strncmp(line, "flags", 5) == 0)
      break;    /* the first core's flags are enough */
  }
  fclose(f);
  return found;
}

/* A (tick, ns) pair read as close together as three tries allow. */
static void clock_pair(uint64_t *tick, uint64_t *ns) {
  uint64_t best = UINT64_MAX;

  for (int i = 0; i < 3; i++) {
    uint64_t a = mono_ns(), t = asc__trace_now(), b = mono_ns();
    if (b - a < best) {
      best = b - a;
      *tick = t;
      *ns = a + (b - a) / 2;
    }
  }
}

static void clk_init(void) {
  int kind = 1;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const char *env = getenv("ASC_TRACE_CLOCK");

  if ((env == NULL || strcmp(env, "monotonic") != 0) &&
      file_has("/proc/cpuinfo", "constant_tsc", false) &&
      file_has("/proc/cpuinfo", "nonstop_tsc", false) &&
      file_has("/sys/devices/system/clocksource/clocksource0/"
               "current_clocksource",
               "tsc", true))
    kind = 2;
#endif
  atomic_store(&asc__trace_clk, kind);
  clock_pair(&cal_tick, &cal_ns);
}

uint64_t asc__trace_now_slow(void) {
  int k = atomic_load_explicit(&asc__trace_clk, memory_order_acquire);

  if (k == 0) {
    uv_once(&clk_once, clk_init);
    k = atomic_load(&asc__trace_clk);
  }
  return k == 2 ? asc__trace_now() : mono_ns();
}

void asc__trace_clock_init(void) { uv_once(&clk_once, clk_init); }

double asc__trace_ns_per_tick(void) {
  uint64_t tick = 0, ns;

  asc__trace_clock_init();
  if (atomic_load(&asc__trace_clk) != 2)
    return 1;
  /* Short first sessions wait for a measurable interval. */
  ns = mono_ns();
  if (ns - cal_ns < 10000000u)
    uv_sleep((unsigned)((10000000u - (ns - cal_ns)) / 1000000u) + 1);
  clock_pair(&tick, &ns);
  return tick > cal_tick ? (double)(ns - cal_ns) / (double)(tick - cal_tick)
                         : 1;
}

void asc__trace_thread_name(const char *prefix, int n) {
  if (n >= 0)
    snprintf(tl.name, sizeof tl.name, "%s %d", prefix, n);
  else
    snprintf(tl.name, sizeof tl.name, "%s", prefix);
}

/* ---------------------------------------------------------- recording */

int asc__trace_tid(void) {
  if (tl.tid == 0)
    tl.tid = atomic_fetch_add(&next_tid, 1) + 1;
  return tl.tid;
}

/* A chunk for this thread: a spare one (its pages mapped already), else
 * a new one whose pages are mapped here in one call rather than by a
 * page fault each in the records that follow. */
static chunk *chunk_new(void) {
  chunk *c;

  uv_once(&once, init_once);
  uv_mutex_lock(&list_lock);
  c = spare;
  if (c != NULL) {
    spare = c->next;
    nspare--;
  }
  uv_mutex_unlock(&list_lock);
  if (c == NULL) {
    c = asc__malloc(sizeof *c);
    if (c == NULL)
      return NULL;
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    {
      uintptr_t a = ((uintptr_t)c + 4095) & ~(uintptr_t)4095;
      uintptr_t e = ((uintptr_t)c + sizeof *c) & ~(uintptr_t)4095;
      if (e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
    }
#endif
  }
  c->tid = asc__trace_tid();
  if (tl.name[0] != '\0')
    snprintf(c->tname, sizeof c->tname, "%s", tl.name);
  else
    snprintf(c->tname, sizeof c->tname, "host thread %d", c->tid);
  c->read = 0;
  atomic_init(&c->full, 0);
  atomic_init(&c->n, 0);
  uv_mutex_lock(&list_lock);
  c->next = chunks;
  chunks = c;
  atomic_fetch_add_explicit(&nheld, 1, memory_order_relaxed);
  uv_mutex_unlock(&list_lock);
  return c;
}

static void drop(void) {
  if (atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed) == 0)
    atomic_store_explicit(&first_drop, asc__trace_now(),
                          memory_order_relaxed);
}

/* The next free record of this thread, or NULL (out of memory). */
static asc__trace_rec *rec_get(void) {
  chunk *c = tl.chunk;
  size_t n;

  if (c == NULL || atomic_load_explicit(&c->n, memory_order_relaxed) ==
                       CHUNK_RECS) {
    /* Past the limit the thread keeps its full chunk (not marked full,
     * so no drain recycles it under the thread) and drops the record. */
    chunk *nc = atomic_load_explicit(&nheld, memory_order_relaxed) <
                        atomic_load_explicit(&max_held, memory_order_relaxed)
                    ? chunk_new()
                    : NULL;
    if (nc == NULL) {
      drop();
      return NULL;
    }
    tl.chunk = nc;
    if (c != NULL)
      atomic_store_explicit(&c->full, 1, memory_order_release);
    c = nc;
  }
  n = atomic_load_explicit(&c->n, memory_order_relaxed);
  return &c->recs[n];
}

void asc__trace_rec_put(void) {
  chunk *c = tl.chunk;
  atomic_store_explicit(&c->n,
                        atomic_load_explicit(&c->n, memory_order_relaxed) + 1,
                        memory_order_release);
}

static void copy_str(char *dst, size_t cap, const char *s) {
  size_t n = s != NULL ? strlen(s) : 0;

  if (n >= cap)
    n = cap - 1;
  if (n != 0)
    memcpy(dst, s, n);
  dst[n] = '\0';
}

asc__trace_rec *asc__trace_rec_begin(int type, const char *cat,
                                     const char *name, const char *detail,
                                     uint64_t t0, uint64_t t1) {
  asc__trace_rec *r = rec_get();

  if (r == NULL)
    return NULL;
  r->type = (uint8_t)type;
  r->cat = cat;
  r->ts = t0;
  r->end = t1;
  r->id = r->a0 = r->a1 = r->a2 = 0;
  r->track = r->track2 = NULL;
  r->flag = 0;
  copy_str(r->name, sizeof r->name, name);
  r->detail = detail != NULL && detail[0] != '\0' ? asc__strdup(detail)
                                                   : NULL;
  return r;
}

void asc__trace_span(const char *cat, const char *name, const char *detail,
                     uint64_t bytes, uint64_t t0) {
  asc__trace_rec *r;

  if (t0 == 0 ||
      (r = asc__trace_rec_begin(ASC__TR_SPAN, cat, name, detail, t0,
                                asc__trace_now())) == NULL)
    return;
  r->a0 = bytes;
  asc__trace_rec_put();
}

void asc__trace_mark(const char *cat, const char *name, const char *detail) {
  uint64_t t = asc__trace_now();

  if (asc__trace_rec_begin(ASC__TR_MARK, cat, name, detail, t, t) != NULL)
    asc__trace_rec_put();
}

void asc__trace_pool(const char *name, const void *pool, uint64_t bytes,
                     uint64_t reserved, uint64_t used) {
  uint64_t t = asc__trace_now();
  asc__trace_rec *r =
      asc__trace_rec_begin(ASC__TR_POOL, "memory", name, NULL, t, t);

  if (r == NULL)
    return;
  r->track = pool;
  r->a0 = bytes;
  r->a1 = reserved;
  r->a2 = used;
  asc__trace_rec_put();
}


/* ------------------------------------------------------------- reading */

void asc__trace_drain(asc__trace_visit_fn fn, void *ud) {
  for (chunk *c = chunks; c != NULL; c = c->next) {
    size_t n = atomic_load_explicit(&c->n, memory_order_acquire);
    if (n > c->read)
      fn(ud, c->tid, c->tname, c->recs + c->read, n - c->read);
    for (size_t i = c->read; i < n; i++)
      asc__free(c->recs[i].detail);
    c->read = n;
  }
  /* Chunks whose owner moved on and which are read to the end will never
   * change again. */
  for (chunk **pc = &chunks; *pc != NULL;) {
    chunk *c = *pc;
    if (atomic_load_explicit(&c->full, memory_order_acquire) &&
        c->read == CHUNK_RECS) {
      *pc = c->next;
      atomic_fetch_sub_explicit(&nheld, 1, memory_order_relaxed);
      if (nspare < SPARE_MAX) {
        c->next = spare;
        spare = c;
        nspare++;
      } else {
        asc__free(c);
      }
    } else {
      pc = &c->next;
    }
  }
}

void asc__trace_limit(uint64_t max_bytes) {
  uint64_t n = max_bytes / sizeof(chunk);
  atomic_store(&max_held, n == 0 ? 1 : n > SIZE_MAX ? SIZE_MAX : (size_t)n);
  atomic_store(&dropped, 0);
  atomic_store(&first_drop, 0);
}

uint64_t asc__trace_dropped(uint64_t *first) {
  if (first != NULL)
    *first = atomic_load(&first_drop);
  return atomic_load(&dropped);
}

void asc__trace_discard(void) {
  for (chunk *c = chunks; c != NULL; c = c->next) {
    size_t n = atomic_load_explicit(&c->n, memory_order_acquire);
    for (size_t i = c->read; i < n; i++)
      asc__free(c->recs[i].detail);
    c->read = n;
  }
}

const char *asc__trace_sig_of(const void *desc) {
  for (int i = 0; i < nsigs; i++)
    if (sig_desc[i] == desc)
      return sig_text[i];
  return NULL;
}

void asc__trace_sig_clear(void) {
  for (int i = 0; i < nsigs; i++)
    asc__free(sig_text[i]);
  nsigs = 0;
}

void asc__trace_sig(const void *desc, const char *sig) {
  asc__trace_lock();
  if (atomic_load(&asc__trace_on) && asc__trace_sig_of(desc) == NULL &&
      nsigs < (int)ASC_ARRAY_SIZE(sig_desc)) {
    char *s = asc__strdup(sig);
    if (s != NULL) {
      sig_desc[nsigs] = desc;
      sig_text[nsigs++] = s;
    }
  }
  asc__trace_unlock();
}
