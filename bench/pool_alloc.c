/*
 * Allocation throughput: alloc+free pairs per second for
 *   ascMallocAsync/ascFreeAsync on one stream (the default pool): the
 *     default stream, and a created stream,
 *   ascMalloc/ascFree (device memory, no pool),
 *   malloc/free (the process allocator, glibc's),
 *   jemalloc mallocx/sdallocx with the thread cache (its fast path),
 *   jemalloc mallocx/sdallocx on a private arena without thread cache
 *     (what a pool does when it misses),
 * for 64 B, 4 KiB and 1 MiB; median of BENCH_REPS repetitions.  Prints
 * pool/jemalloc ratios and the peak reserved memory of a churn of random
 * sizes (the workload of test_mempool's churn test).  Lines
 *   stats <target> <size> <median> <min> <max>
 * (pairs per second) give the spread for bench/suite.py.
 *
 *   build/bench/pool_alloc [pairs-per-rep]
 */
/* libasc's private jemalloc (cmake/jemalloc.cmake): JEMALLOC_MANGLE maps
 * mallocx, mallctl, ... onto its asc_je_ names. */
#define JEMALLOC_MANGLE
#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "asc/asc.h"

#define BENCH_REPS 7

typedef struct target {
  const char *name;
  void *(*alloc)(size_t size);
  void (*release)(void *p, size_t size);
} target;

static unsigned private_arena;
static ascStream_t bench_stream;
static volatile unsigned char sink;

static void *pool_alloc(size_t size) {
  void *p = NULL;
  if (ascMallocAsync(&p, size, NULL) != ascSuccess)
    return NULL;
  return p;
}
static void pool_release(void *p, size_t size) {
  (void)size;
  ascFreeAsync(p, NULL);
}
static void *pool_alloc_stream(size_t size) {
  void *p = NULL;
  if (ascMallocAsync(&p, size, bench_stream) != ascSuccess)
    return NULL;
  return p;
}
static void pool_release_stream(void *p, size_t size) {
  (void)size;
  ascFreeAsync(p, bench_stream);
}
static void *dev_alloc(size_t size) {
  void *p = NULL;
  if (ascMalloc(&p, size) != ascSuccess)
    return NULL;
  return p;
}
static void dev_release(void *p, size_t size) {
  (void)size;
  ascFree(p);
}
static void *sys_alloc(size_t size) { return malloc(size); }
static void sys_release(void *p, size_t size) {
  (void)size;
  free(p);
}
static void *je_alloc(size_t size) { return mallocx(size, MALLOCX_ALIGN(64)); }
static void je_release(void *p, size_t size) {
  sdallocx(p, size, MALLOCX_ALIGN(64));
}
static void *arena_alloc(size_t size) {
  return mallocx(size, MALLOCX_ARENA(private_arena) | MALLOCX_ALIGN(64) |
                           MALLOCX_TCACHE_NONE);
}
static void arena_release(void *p, size_t size) {
  sdallocx(p, size, MALLOCX_ALIGN(64) | MALLOCX_TCACHE_NONE);
}

static const target targets[] = {
    {"ascMallocAsync/ascFreeAsync", pool_alloc, pool_release},
    {"  same, on a created stream", pool_alloc_stream, pool_release_stream},
    {"ascMalloc/ascFree", dev_alloc, dev_release},
    {"malloc/free", sys_alloc, sys_release},
    {"mallocx/sdallocx (tcache)", je_alloc, je_release},
    {"mallocx/sdallocx (arena, no tcache)", arena_alloc, arena_release},
};
enum { NTARGETS = sizeof targets / sizeof targets[0] };

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Pairs per second of one run of n pairs. */
static double run_once(const target *t, size_t size, long n) {
  uint64_t t0 = uv_hrtime();
  for (long i = 0; i < n; i++) {
    unsigned char *p = t->alloc(size);
    if (p == NULL) {
      fprintf(stderr, "%s: allocation of %zu bytes failed\n", t->name, size);
      exit(1);
    }
    p[0] = (unsigned char)i;
    sink = p[0];
    t->release(p, size);
  }
  return (double)n * 1e9 / (double)(uv_hrtime() - t0);
}

static uint64_t rng_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

/* The churn workload of test_mempool: 10^6 random operations over 512
 * slots on 4 streams, an ascMemsetAsync every 64 operations, half of the
 * cross-stream frees ordered by an event, release threshold 16 MiB, a
 * device synchronisation every 4096 operations. */
static int churn(uint64_t *peak_reserved, uint64_t *peak_used, double *secs) {
  enum { NSLOTS = 512, NSTREAMS = 4 };
  ascMemPoolProps props = {.numaNode = -1};
  ascMemPool_t pool;
  ascStream_t st[NSTREAMS];
  ascEvent_t ev[NSTREAMS];
  void *slot[NSLOTS] = {0};
  int slot_stream[NSLOTS] = {0};
  uint64_t rng = 0x9e3779b97f4a7c15ull, threshold = (uint64_t)16 << 20;
  uint64_t t0 = uv_hrtime();

  if (ascMemPoolCreate(&pool, &props) != ascSuccess ||
      ascMemPoolSetAttribute(pool, ascMemPoolAttrReleaseThreshold,
                             &threshold) != ascSuccess)
    return -1;
  for (int i = 0; i < NSTREAMS; i++)
    if (ascStreamCreate(&st[i]) != ascSuccess ||
        ascEventCreateWithFlags(&ev[i], ascEventDisableTiming) != ascSuccess)
      return -1;
  for (long i = 0; i < 1000000; i++) {
    uint64_t r = rng_next(&rng);
    size_t k = (size_t)(r % NSLOTS);
    int si = (int)((r >> 9) % NSTREAMS);
    if (slot[k] == NULL) {
      size_t size = (r >> 20) % 8 == 0 ? 1 + (r >> 24) % (256 << 10)
                                       : 1 + (r >> 24) % 2048;
      if (ascMallocFromPoolAsync(&slot[k], size, pool, st[si]) != ascSuccess)
        return -1;
      slot_stream[k] = si;
      if (i % 64 == 0 &&
          ascMemsetAsync(slot[k], (int)(i & 0xff), size, st[si]) != ascSuccess)
        return -1;
    } else {
      int owner = slot_stream[k];
      if (si != owner && (r >> 12) % 2 == 0) {
        if (ascEventRecord(ev[owner], st[owner]) != ascSuccess ||
            ascStreamWaitEvent(st[si], ev[owner], 0) != ascSuccess)
          return -1;
      } else {
        si = owner;
      }
      if (ascFreeAsync(slot[k], st[si]) != ascSuccess)
        return -1;
      slot[k] = NULL;
    }
    if (i % 4096 == 0 && ascDeviceSynchronize() != ascSuccess)
      return -1;
  }
  for (size_t k = 0; k < NSLOTS; k++)
    if (slot[k] != NULL && ascFreeAsync(slot[k], st[slot_stream[k]]) != ascSuccess)
      return -1;
  if (ascDeviceSynchronize() != ascSuccess)
    return -1;
  *secs = (double)(uv_hrtime() - t0) / 1e9;
  ascMemPoolGetAttribute(pool, ascMemPoolAttrReservedMemHigh, peak_reserved);
  ascMemPoolGetAttribute(pool, ascMemPoolAttrUsedMemHigh, peak_used);
  for (int i = 0; i < NSTREAMS; i++) {
    ascEventDestroy(ev[i]);
    ascStreamDestroy(st[i]);
  }
  return ascMemPoolDestroy(pool) == ascSuccess ? 0 : -1;
}

int main(int argc, char **argv) {
  static const size_t sizes[] = {64, 4096, 1 << 20};
  long pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
  size_t sz = sizeof private_arena;
  uint64_t peak_reserved = 0, peak_used = 0;
  double churn_secs = 0;
  ascMemPool_t dflt;
  uint64_t keep = UINT64_MAX;

  if (pairs <= 0 || ascInit(0) != ascSuccess ||
      ascStreamCreate(&bench_stream) != ascSuccess ||
      mallctl("arenas.create", &private_arena, &sz, NULL, 0) != 0) {
    fprintf(stderr, "pool_alloc: cannot initialise\n");
    return 1;
  }
  /* Keep the default pool's blocks between pairs, as a real program with
   * a steady working set would. */
  ascDeviceGetDefaultMemPool(&dflt, 0);
  ascMemPoolSetAttribute(dflt, ascMemPoolAttrReleaseThreshold, &keep);

  printf("alloc+free pairs per second (median of %d x %ld pairs)\n",
         BENCH_REPS, pairs);
  printf("%-38s %14s %14s %14s\n", "", "64 B", "4 KiB", "1 MiB");
  /* Repetitions outside, targets inside: a noisy neighbour slows every
   * target of a repetition alike, and the medians compare fairly. */
  double runs[NTARGETS][3][BENCH_REPS], rate[NTARGETS][3];
  for (int r = 0; r < BENCH_REPS; r++)
    for (int s = 0; s < 3; s++)
      for (int t = 0; t < NTARGETS; t++)
        runs[t][s][r] = run_once(&targets[t], sizes[s],
                                 sizes[s] >= (1 << 20) ? pairs / 10 : pairs);
  for (int t = 0; t < NTARGETS; t++) {
    printf("%-38s", targets[t].name);
    for (int s = 0; s < 3; s++) {
      qsort(runs[t][s], BENCH_REPS, sizeof(double), cmp_double);
      rate[t][s] = runs[t][s][BENCH_REPS / 2];
      printf(" %14.3e", rate[t][s]);
    }
    printf("\n");
  }
  for (int t = 0; t < NTARGETS; t++)
    for (int s = 0; s < 3; s++)
      printf("stats %s %zu %.6g %.6g %.6g\n", targets[t].name, sizes[s],
             rate[t][s], runs[t][s][0], runs[t][s][BENCH_REPS - 1]);
  printf("\nratio pool / jemalloc (time per pair; goal <= 2.0)\n");
  for (int j = 4; j <= 5; j++) {
    printf("  vs %-34s", targets[j].name);
    for (int s = 0; s < 3; s++)
      printf(" %14.2f", rate[j][s] / rate[0][s]);
    printf("\n");
  }
  if (churn(&peak_reserved, &peak_used, &churn_secs) != 0) {
    fprintf(stderr, "pool_alloc: churn failed: %s\n",
            ascGetLastErrorMessage());
    return 1;
  }
  printf("\nchurn (10^6 random ops on 4 streams, threshold 16 MiB, %.2f s): "
         "peak used %.2f MiB, peak reserved %.2f MiB\n", churn_secs,
         (double)peak_used / 1048576.0, (double)peak_reserved / 1048576.0);
  return 0;
}
