/*
 * Stream-ordered memory pools: statistics, thresholds, trim, reuse across
 * streams, placement, failure injection and handle validation.
 *
 * ASC_POOL_CHURN_OPS sets the number of operations of the churn test
 * (default 10^6, 2*10^5 in sanitizer builds).
 */
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "runtime/runtime.h"
#include "runtime/pool.h"
#include "subproc.h"

#define MiB ((uint64_t)1 << 20)

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHURN_OPS_DEFAULT 200000
#else
#define CHURN_OPS_DEFAULT 1000000
#endif

static long env_long(const char *name, long dflt) {
  const char *v = getenv(name);
  return v != NULL && *v != '\0' ? strtol(v, NULL, 10) : dflt;
}

static uint64_t attr64(ascMemPool_t p, ascMemPoolAttr a) {
  uint64_t v = UINT64_MAX;
  assert_int_equal(ascMemPoolGetAttribute(p, a, &v), ascSuccess);
  return v;
}

static void set64(ascMemPool_t p, ascMemPoolAttr a, uint64_t v) {
  assert_int_equal(ascMemPoolSetAttribute(p, a, &v), ascSuccess);
}

static void set_int(ascMemPool_t p, ascMemPoolAttr a, int v) {
  assert_int_equal(ascMemPoolSetAttribute(p, a, &v), ascSuccess);
}

static void expect_stats(ascMemPool_t p, uint64_t reserved, uint64_t used) {
  assert_int_equal(attr64(p, ascMemPoolAttrReservedMemCurrent), reserved);
  assert_int_equal(attr64(p, ascMemPoolAttrUsedMemCurrent), used);
}

/* Applies release thresholds, as every synchronising call does. */
static void sync_all(void) {
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
}

static ascMemPool_t new_pool(int numa, size_t align, size_t max) {
  ascMemPoolProps pr = {.numaNode = numa, .alignment = align, .maxSize = max};
  ascMemPool_t p = NULL;
  assert_int_equal(ascMemPoolCreate(&p, &pr), ascSuccess);
  assert_non_null(p);
  return p;
}

/* ------------------------------------------------------------------ tests */

static void test_size_classes(void **state) {
  (void)state;
  assert_int_equal(asc__pool_block_size(0), 0);
  assert_int_equal(asc__pool_block_size(1), 64);
  assert_int_equal(asc__pool_block_size(64), 64);
  assert_int_equal(asc__pool_block_size(65), 128);
  assert_int_equal(asc__pool_block_size(1000), 1024);
  assert_int_equal(asc__pool_block_size(1024), 1024);
  assert_int_equal(asc__pool_block_size(1025), 1280);
  assert_int_equal(asc__pool_block_size(2049), 2560);
  assert_int_equal(asc__pool_block_size(4096), 4096);
  assert_int_equal(asc__pool_block_size(100000), 114688);
  assert_int_equal(asc__pool_block_size(64 * MiB), 64 * MiB);
  assert_int_equal(asc__pool_block_size(64 * MiB + 1), 80 * MiB);
  assert_int_equal(asc__pool_block_size(SIZE_MAX), 0);
  for (size_t s = 1; s < (1u << 22); s = s * 3 / 2 + 1) {
    size_t c = asc__pool_block_size(s);
    assert_true(c >= s);
    assert_true(c - s < s / 4 + 64);
    assert_int_equal(c % 64, 0);
  }
}

static void test_default_pool(void **state) {
  ascMemPool_t p = NULL, q = NULL;
  void *a = NULL, *b = NULL;
  int v = -1;
  (void)state;

  assert_int_equal(ascDeviceGetDefaultMemPool(&p, 0), ascSuccess);
  assert_int_equal(ascDeviceGetDefaultMemPool(&q, 0), ascSuccess);
  assert_ptr_equal(p, q);
  assert_int_equal(attr64(p, ascMemPoolAttrReleaseThreshold), 0);
  assert_int_equal(ascMemPoolGetAttribute(
                       p, ascMemPoolReuseFollowEventDependencies, &v),
                   ascSuccess);
  assert_int_equal(v, 1);
  assert_int_equal(
      ascMemPoolGetAttribute(p, ascMemPoolReuseAllowOpportunistic, &v),
      ascSuccess);
  assert_int_equal(v, 1);
  assert_int_equal(
      ascMemPoolGetAttribute(p, ascMemPoolReuseAllowInternalDependencies, &v),
      ascSuccess);
  assert_int_equal(v, 1);
  expect_stats(p, 0, 0);
  /* Attributes round-trip; any non-zero int reads back as 1. */
  set_int(p, ascMemPoolReuseAllowOpportunistic, 0);
  assert_int_equal(
      ascMemPoolGetAttribute(p, ascMemPoolReuseAllowOpportunistic, &v),
      ascSuccess);
  assert_int_equal(v, 0);
  set_int(p, ascMemPoolReuseAllowOpportunistic, 7);
  assert_int_equal(
      ascMemPoolGetAttribute(p, ascMemPoolReuseAllowOpportunistic, &v),
      ascSuccess);
  assert_int_equal(v, 1);

  assert_int_equal(ascMallocAsync(&a, 100, NULL), ascSuccess);
  assert_non_null(a);
  assert_int_equal((uintptr_t)a % 64, 0);
  memset(a, 0xab, 100);
  expect_stats(p, 128, 128);
  assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  expect_stats(p, 128, 0);
  /* Same stream: the block comes back at once. */
  assert_int_equal(ascMallocAsync(&b, 70, NULL), ascSuccess);
  assert_ptr_equal(a, b);
  expect_stats(p, 128, 128);
  assert_int_equal(ascFreeAsync(b, NULL), ascSuccess);
  /* Threshold 0: released at the next synchronisation. */
  sync_all();
  expect_stats(p, 0, 0);
  assert_int_equal(attr64(p, ascMemPoolAttrReservedMemHigh), 128);
  assert_int_equal(attr64(p, ascMemPoolAttrUsedMemHigh), 128);
  set64(p, ascMemPoolAttrReservedMemHigh, 0);
  set64(p, ascMemPoolAttrUsedMemHigh, 0);
  assert_int_equal(attr64(p, ascMemPoolAttrReservedMemHigh), 0);
  assert_int_equal(attr64(p, ascMemPoolAttrUsedMemHigh), 0);

  /* Size 0 stores NULL; freeing NULL succeeds. */
  a = &v;
  assert_int_equal(ascMallocAsync(&a, 0, NULL), ascSuccess);
  assert_null(a);
  assert_int_equal(ascFreeAsync(NULL, NULL), ascSuccess);
}

static void test_alignment(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0), q = new_pool(-1, 4096, 0);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  static const size_t sizes[] = {1, 63, 64, 65, 1000, 4096, 65535,
                                 ASC_PAGE_ALIGN_MIN, 300000, 5 * MiB};
  void *ptrs[ASC_ARRAY_SIZE(sizes)];
  (void)state;

  for (size_t i = 0; i < ASC_ARRAY_SIZE(sizes); i++) {
    void *x = NULL;
    assert_int_equal(ascMallocFromPoolAsync(&ptrs[i], sizes[i], p, NULL),
                     ascSuccess);
    assert_int_equal((uintptr_t)ptrs[i] % 64, 0);
    if (sizes[i] >= ASC_PAGE_ALIGN_MIN)
      assert_int_equal((uintptr_t)ptrs[i] % page, 0);
    memset(ptrs[i], 1, sizes[i]);
    assert_int_equal(ascMallocFromPoolAsync(&x, sizes[i], q, NULL),
                     ascSuccess);
    assert_int_equal((uintptr_t)x % 4096, 0);
    assert_int_equal(ascFreeAsync(x, NULL), ascSuccess);
  }
  for (size_t i = 0; i < ASC_ARRAY_SIZE(sizes); i++)
    assert_int_equal(ascFreeAsync(ptrs[i], NULL), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(q), ascSuccess);
}

/* Exact statistics after every step of a mixed sequence. */
static void test_statistics_exact(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  void *a, *b, *c;
  uint64_t ca = asc__pool_block_size(3000), cb = asc__pool_block_size(1 * MiB),
           cc = asc__pool_block_size(40);
  (void)state;

  set64(p, ascMemPoolAttrReleaseThreshold, UINT64_MAX);
  expect_stats(p, 0, 0);
  assert_int_equal(ascMallocFromPoolAsync(&a, 3000, p, NULL), ascSuccess);
  expect_stats(p, ca, ca);
  assert_int_equal(ascMallocFromPoolAsync(&b, 1 * MiB, p, NULL), ascSuccess);
  expect_stats(p, ca + cb, ca + cb);
  assert_int_equal(ascMallocFromPoolAsync(&c, 40, p, NULL), ascSuccess);
  expect_stats(p, ca + cb + cc, ca + cb + cc);
  assert_int_equal(ascFreeAsync(b, NULL), ascSuccess);
  expect_stats(p, ca + cb + cc, ca + cc);
  sync_all();  /* threshold UINT64_MAX keeps everything */
  expect_stats(p, ca + cb + cc, ca + cc);
  assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  expect_stats(p, ca + cb + cc, cc);
  assert_int_equal(attr64(p, ascMemPoolAttrUsedMemHigh), ca + cb + cc);
  set64(p, ascMemPoolAttrUsedMemHigh, 0);
  assert_int_equal(attr64(p, ascMemPoolAttrUsedMemHigh), cc);
  /* A different class does not reuse the cached blocks. */
  assert_int_equal(ascMallocFromPoolAsync(&a, 200, p, NULL), ascSuccess);
  expect_stats(p, ca + cb + cc + 256, cc + 256);
  assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
  expect_stats(p, cc + 256, cc + 256);
  assert_int_equal(attr64(p, ascMemPoolAttrReservedMemHigh),
                   ca + cb + cc + 256);
  set64(p, ascMemPoolAttrReservedMemHigh, 0);
  assert_int_equal(attr64(p, ascMemPoolAttrReservedMemHigh), cc + 256);
  assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(c, NULL), ascSuccess);
  expect_stats(p, cc + 256, 0);
  assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

static void alloc3_free3(ascMemPool_t p) {
  void *x[3];
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ascMallocFromPoolAsync(&x[i], 64 * MiB, p, NULL),
                     ascSuccess);
    memset(x[i], i, 4096);
  }
  assert_int_equal(attr64(p, ascMemPoolAttrUsedMemCurrent), 192 * MiB);
  assert_int_equal(attr64(p, ascMemPoolAttrReservedMemCurrent), 192 * MiB);
  for (int i = 0; i < 3; i++)
    assert_int_equal(ascFreeAsync(x[i], NULL), ascSuccess);
  assert_int_equal(attr64(p, ascMemPoolAttrUsedMemCurrent), 0);
}

static void test_threshold_and_trim(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  (void)state;

  /* Threshold 0 (the default): everything goes back at synchronisation. */
  alloc3_free3(p);
  expect_stats(p, 192 * MiB, 0);
  sync_all();
  expect_stats(p, 0, 0);

  /* 64 MiB: one block stays. */
  set64(p, ascMemPoolAttrReleaseThreshold, 64 * MiB);
  alloc3_free3(p);
  sync_all();
  expect_stats(p, 64 * MiB, 0);

  /* UINT64_MAX: everything stays. */
  set64(p, ascMemPoolAttrReleaseThreshold, UINT64_MAX);
  alloc3_free3(p);
  sync_all();
  expect_stats(p, 192 * MiB, 0);
  assert_int_equal(attr64(p, ascMemPoolAttrReservedMemHigh), 192 * MiB);

  /* TrimTo keeps at most minBytesToKeep (whole blocks). */
  assert_int_equal(ascMemPoolTrimTo(p, 100 * MiB), ascSuccess);
  expect_stats(p, 64 * MiB, 0);
  assert_int_equal(ascMemPoolTrimTo(p, 64 * MiB), ascSuccess);
  expect_stats(p, 64 * MiB, 0);
  assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
  expect_stats(p, 0, 0);

  /* Live memory is never trimmed. */
  {
    void *x;
    assert_int_equal(ascMallocFromPoolAsync(&x, 64 * MiB, p, NULL),
                     ascSuccess);
    assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
    expect_stats(p, 64 * MiB, 64 * MiB);
    assert_int_equal(ascFreeAsync(x, NULL), ascSuccess);
  }
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

static void test_max_size(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 4 * MiB);
  void *a, *b, *c;
  (void)state;

  set64(p, ascMemPoolAttrReleaseThreshold, UINT64_MAX);
  assert_int_equal(ascMallocFromPoolAsync(&a, 2 * MiB, p, NULL), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&b, 2 * MiB, p, NULL), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&c, 64, p, NULL),
                   ascErrorOutOfMemory);
  assert_null(c);
  assert_int_equal(ascMallocFromPoolAsync(&c, 5 * MiB, p, NULL),
                   ascErrorOutOfMemory);
  expect_stats(p, 4 * MiB, 4 * MiB);
  /* Cached blocks of another size are released to make room. */
  assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&c, 1 * MiB, p, NULL), ascSuccess);
  expect_stats(p, 3 * MiB, 3 * MiB);
  assert_int_equal(ascFreeAsync(b, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(c, NULL), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

static void test_destroy_with_live_blocks(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  void *live, *a;
  uint64_t v;
  (void)state;

  assert_int_equal(ascMallocFromPoolAsync(&live, 1000, p, NULL), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
  assert_int_equal(ascMemPoolGetAttribute(
                       p, ascMemPoolAttrReservedMemCurrent, &v),
                   ascErrorInvalidHandle);
  assert_int_equal(ascMallocFromPoolAsync(&a, 8, p, NULL),
                   ascErrorInvalidHandle);
  assert_null(a);
  assert_int_equal(ascMemPoolDestroy(p), ascErrorInvalidHandle);
  /* The pointer from the destroyed pool is still usable and freed
   * normally; the pool goes away with its last block. */
  memset(live, 3, 1000);
  assert_int_equal(ascFreeAsync(live, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(live, NULL), ascErrorInvalidValue);
}

static void test_invalid_handles(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0), dead = new_pool(-1, 0, 0), dflt;
  struct { uint64_t junk[64]; } fake;
  ascMemPool_t bogus = (ascMemPool_t)(void *)&fake;
  ascMemPool_t bad[] = {NULL, dead, bogus};
  ascMemPoolProps pr = {.numaNode = -1};
  uint64_t v = 0;
  int local;
  void *x;
  (void)state;

  memset(&fake, 0x4c, sizeof fake);
  assert_int_equal(ascMemPoolDestroy(dead), ascSuccess);
  for (size_t i = 0; i < ASC_ARRAY_SIZE(bad); i++) {
    x = &local;
    assert_int_equal(ascMallocFromPoolAsync(&x, 64, bad[i], NULL),
                     ascErrorInvalidHandle);
    assert_null(x);
    assert_int_equal(ascMemPoolDestroy(bad[i]), ascErrorInvalidHandle);
    assert_int_equal(ascMemPoolSetAttribute(
                         bad[i], ascMemPoolAttrReleaseThreshold, &v),
                     ascErrorInvalidHandle);
    assert_int_equal(ascMemPoolGetAttribute(
                         bad[i], ascMemPoolAttrReleaseThreshold, &v),
                     ascErrorInvalidHandle);
    assert_int_equal(ascMemPoolTrimTo(bad[i], 0), ascErrorInvalidHandle);
    assert_int_equal(asc__pool_bind_failures(bad[i]), 0);
  }
  assert_int_equal(ascPeekAtLastError(), ascErrorInvalidHandle);
  assert_true(strstr(ascGetLastErrorMessage(), "pool") != NULL);

  /* NULL out-parameters and values. */
  assert_int_equal(ascMallocAsync(NULL, 64, NULL), ascErrorInvalidValue);
  assert_int_equal(ascMallocFromPoolAsync(NULL, 64, p, NULL),
                   ascErrorInvalidValue);
  assert_int_equal(ascMemPoolCreate(NULL, &pr), ascErrorInvalidValue);
  /* props is required, as in CUDA (asc.h, docs/pools.md). */
  dflt = p;
  assert_int_equal(ascMemPoolCreate(&dflt, NULL), ascErrorInvalidValue);
  assert_null(dflt);
  assert_non_null(strstr(ascGetLastErrorMessage(), "props"));
  assert_int_equal(ascDeviceGetDefaultMemPool(NULL, 0), ascErrorInvalidValue);
  assert_int_equal(ascDeviceGetDefaultMemPool(&dflt, 7),
                   ascErrorInvalidDevice);
  assert_int_equal(ascDeviceGetDefaultMemPool(&dflt, -1),
                   ascErrorInvalidDevice);
  assert_int_equal(
      ascMemPoolSetAttribute(p, ascMemPoolAttrReleaseThreshold, NULL),
      ascErrorInvalidValue);
  assert_int_equal(
      ascMemPoolGetAttribute(p, ascMemPoolAttrReleaseThreshold, NULL),
      ascErrorInvalidValue);

  /* Bad properties. */
  pr.numaNode = 4096;
  assert_int_equal(ascMemPoolCreate(&dflt, &pr), ascErrorInvalidValue);
  pr.numaNode = -2;
  assert_int_equal(ascMemPoolCreate(&dflt, &pr), ascErrorInvalidValue);
  pr.numaNode = -1;
  pr.alignment = 32;
  assert_int_equal(ascMemPoolCreate(&dflt, &pr), ascErrorInvalidValue);
  pr.alignment = 96;
  assert_int_equal(ascMemPoolCreate(&dflt, &pr), ascErrorInvalidValue);

  /* Attributes: read-only, resets only to 0, unknown. */
  v = 5;
  assert_int_equal(
      ascMemPoolSetAttribute(p, ascMemPoolAttrReservedMemCurrent, &v),
      ascErrorInvalidValue);
  assert_int_equal(ascMemPoolSetAttribute(p, ascMemPoolAttrUsedMemCurrent, &v),
                   ascErrorInvalidValue);
  assert_int_equal(ascMemPoolSetAttribute(p, ascMemPoolAttrUsedMemHigh, &v),
                   ascErrorInvalidValue);
  assert_int_equal(
      ascMemPoolSetAttribute(p, ascMemPoolAttrReservedMemHigh, &v),
      ascErrorInvalidValue);
  assert_int_equal(ascMemPoolSetAttribute(p, (ascMemPoolAttr)99, &v),
                   ascErrorInvalidValue);
  assert_int_equal(ascMemPoolGetAttribute(p, (ascMemPoolAttr)0, &v),
                   ascErrorInvalidValue);

  /* The default pool cannot be destroyed. */
  assert_int_equal(ascDeviceGetDefaultMemPool(&dflt, 0), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(dflt), ascErrorInvalidValue);

  /* Pointers that are not live pool allocations. */
  assert_int_equal(ascFreeAsync(&local, NULL), ascErrorInvalidValue);
  assert_int_equal(ascMallocFromPoolAsync(&x, 256, p, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync((char *)x + 64, NULL), ascErrorInvalidValue);
  assert_int_equal(ascFreeAsync(x, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(x, NULL), ascErrorInvalidValue);
  x = malloc(64);
  assert_int_equal(ascFreeAsync(x, NULL), ascErrorInvalidValue);
  free(x);
  /* Device memory that is not from a pool, and the other way round. */
  assert_int_equal(ascMalloc(&x, 256), ascSuccess);
  assert_int_equal(ascFreeAsync(x, NULL), ascErrorInvalidValue);
  assert_int_equal(ascFree(x), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&x, 256, p, NULL), ascSuccess);
  assert_int_equal(ascFree(x), ascErrorInvalidValue);
  assert_int_equal(ascFreeAsync(x, NULL), ascSuccess);

  /* Too large for any pool. */
  assert_int_equal(ascMallocAsync(&x, SIZE_MAX, NULL), ascErrorOutOfMemory);
  assert_null(x);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* ---------------------------------------------------- failure injection */

typedef struct fail_ctx {
  long n;       /* fail the n-th allocation (0-based) */
  long calls;
  bool fired;
} fail_ctx;

static bool fail_nth(size_t size, void *ud) {
  fail_ctx *f = ud;
  (void)size;
  if (f->calls++ == f->n) {
    f->fired = true;
    return true;
  }
  return false;
}

/* Runs a pool scenario where any allocation may fail; every failure must
 * be a clean ascErrorOutOfMemory with statistics that still add up. */
static void fail_scenario(ascStream_t sa, ascStream_t sf, bool internal) {
  static const size_t sizes[] = {64, 200, 4096, 70000, 1 * MiB, 64, 3000};
  void *ptrs[ASC_ARRAY_SIZE(sizes) * 2];
  uint64_t csize[ASC_ARRAY_SIZE(sizes) * 2];
  uint64_t used = 0;
  size_t n = 0;
  ascMemPool_t p = NULL;
  ascMemPoolProps pr = {.numaNode = -1};
  ascError_t e = ascMemPoolCreate(&p, &pr);

  if (e != ascSuccess) {
    assert_int_equal(e, ascErrorOutOfMemory);
    assert_null(p);
    return;
  }
  if (internal) {
    /* Reuse across streams only through internal dependencies, whose
     * event allocations may fail too. */
    int off = 0, on = 1;
    assert_int_equal(ascMemPoolSetAttribute(
                         p, ascMemPoolReuseFollowEventDependencies, &off),
                     ascSuccess);
    assert_int_equal(ascMemPoolSetAttribute(
                         p, ascMemPoolReuseAllowOpportunistic, &off),
                     ascSuccess);
    assert_int_equal(ascMemPoolSetAttribute(
                         p, ascMemPoolReuseAllowInternalDependencies, &on),
                     ascSuccess);
  }
  for (int round = 0; round < 2; round++) {
    for (size_t i = 0; i < ASC_ARRAY_SIZE(sizes); i++) {
      void *x = &used;
      e = ascMallocFromPoolAsync(&x, sizes[i], p, sa);
      if (e == ascSuccess) {
        csize[n] = asc__pool_block_size(sizes[i]);
        ptrs[n++] = x;
        used += csize[n - 1];
      } else {
        assert_int_equal(e, ascErrorOutOfMemory);
        assert_null(x);
      }
      assert_int_equal(attr64(p, ascMemPoolAttrUsedMemCurrent), used);
      assert_true(attr64(p, ascMemPoolAttrReservedMemCurrent) >= used);
    }
    /* Free half, so the second round reuses some blocks. */
    while (n > 0 && (round == 1 || n % 2 == 1)) {
      n--;
      assert_int_equal(ascFreeAsync(ptrs[n], sf), ascSuccess);
      used -= csize[n];
      assert_int_equal(attr64(p, ascMemPoolAttrUsedMemCurrent), used);
    }
  }
  while (n > 0)
    assert_int_equal(ascFreeAsync(ptrs[--n], sf), ascSuccess);
  expect_stats(p, attr64(p, ascMemPoolAttrReservedMemCurrent), 0);
  if (sf != NULL)
    assert_int_equal(ascStreamSynchronize(sf), ascSuccess);
  assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* The pointer registry's growth may fail: lookups only get slower. */
static bool fail_table_growth(size_t size, void *ud) {
  bool growth =
      size >= 512 * sizeof(void *) && size % (512 * sizeof(void *)) == 0;
  if (growth)
    ++*(int *)ud;
  return growth;
}

static void test_registry_growth_failure(void **state) {
  enum { N = 3000 };
  ascMemPool_t p = new_pool(-1, 0, 0);
  static void *ptrs[N];
  int refused = 0;
  (void)state;

  asc__set_alloc_fail_hook(fail_table_growth, &refused);
  for (int i = 0; i < N; i++)
    assert_int_equal(ascMallocFromPoolAsync(&ptrs[i], 64, p, NULL),
                     ascSuccess);
  asc__set_alloc_fail_hook(NULL, NULL);
  assert_true(refused > 0);
  expect_stats(p, N * 64, N * 64);
  for (int i = 0; i < N; i++)
    assert_int_equal(ascFreeAsync(ptrs[i], NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(ptrs[0], NULL), ascErrorInvalidValue);
  expect_stats(p, N * 64, 0);
  assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

static void fail_every_site(ascStream_t sa, ascStream_t sf, bool internal) {
  for (long n = 0; n < 1000; n++) {
    fail_ctx f = {n, 0, false};
    asc__set_alloc_fail_hook(fail_nth, &f);
    fail_scenario(sa, sf, internal);
    asc__set_alloc_fail_hook(NULL, NULL);
    if (!f.fired)
      return;  /* every allocation site has failed once */
  }
  fail();
}

static void test_failure_injection(void **state) {
  ascStream_t s1, s2;
  (void)state;
  /* Make sure the device, stream and pool state exist: those are one-time
   * allocations with their own tests elsewhere. */
  {
    ascMemPool_t d;
    assert_int_equal(ascDeviceGetDefaultMemPool(&d, 0), ascSuccess);
    assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  }
  fail_every_site(NULL, NULL, false);
  assert_int_equal(ascStreamCreate(&s1), ascSuccess);
  assert_int_equal(ascStreamCreate(&s2), ascSuccess);
  fail_every_site(s1, s1, false);
  fail_every_site(s2, s1, true);
  assert_int_equal(ascStreamDestroy(s1), ascSuccess);
  assert_int_equal(ascStreamDestroy(s2), ascSuccess);
}

/* The one-time allocations (device, stream runtime, pool state, default
 * pool) can only fail in a fresh process: a child per N fails the N-th
 * allocation of its life, then uses the default pool; every call must
 * succeed or say ascErrorOutOfMemory, and once the hook is gone the pool
 * must work with exact statistics. */
static int child_failinit(void) {
  fail_ctx f = {env_long("ASC_TEST_FAIL_N", -1), 0, false};
  ascMemPool_t d = NULL;
  void *p = NULL;
  ascError_t e[4], after[3];
  uint64_t reserved = 1, used = 1;

  asc__set_alloc_fail_hook(fail_nth, &f);
  e[0] = ascDeviceGetDefaultMemPool(&d, 0);
  e[1] = ascMallocAsync(&p, 100, NULL);
  e[2] = p != NULL ? ascFreeAsync(p, NULL) : ascSuccess;
  e[3] = ascDeviceSynchronize();
  asc__set_alloc_fail_hook(NULL, NULL);
  printf("fired=%d\n", f.fired ? 1 : 0);
  for (int i = 0; i < 4; i++)
    printf("e%d=%s\n", i,
           e[i] == ascSuccess || e[i] == ascErrorOutOfMemory
               ? "ok" : ascGetErrorName(e[i]));
  after[0] = ascMallocAsync(&p, 100, NULL);
  after[1] = after[0] == ascSuccess ? ascFreeAsync(p, NULL) : after[0];
  after[2] = ascDeviceSynchronize();
  if (after[0] == ascSuccess &&
      ascDeviceGetDefaultMemPool(&d, 0) == ascSuccess) {
    ascMemPoolGetAttribute(d, ascMemPoolAttrReservedMemCurrent, &reserved);
    ascMemPoolGetAttribute(d, ascMemPoolAttrUsedMemCurrent, &used);
  }
  printf("after=%s,%s,%s\nreserved=%llu\nused=%llu\n",
         ascGetErrorName(after[0]), ascGetErrorName(after[1]),
         ascGetErrorName(after[2]), (unsigned long long)reserved,
         (unsigned long long)used);
  return 0;
}

static void test_failure_injection_first_use(void **state) {
  char out[SUBPROC_OUT_MAX], buf[128], env[64];
  (void)state;

  for (long n = 0; n < 200; n++) {
    const char *set[] = {env, NULL};
    snprintf(env, sizeof env, "ASC_TEST_FAIL_N=%ld", n);
    if (subproc_run("failinit", set, out, sizeof out) != 0)
      fail_msg("N=%ld: child failed:\n%s", n, out);
    for (int i = 0; i < 4; i++) {
      char key[8];
      snprintf(key, sizeof key, "e%d", i);
      assert_string_equal(subproc_get(out, key, buf, sizeof buf), "ok");
    }
    /* A failed device initialisation stays failed for the process (as
     * ascInit documents); everything else must recover. */
    subproc_get(out, "after", buf, sizeof buf);
    if (strncmp(buf, "ascErrorOutOfMemory", 19) != 0) {
      assert_string_equal(buf, "ascSuccess,ascSuccess,ascSuccess");
      assert_int_equal(subproc_get_ll(out, "reserved"), 0);
      assert_int_equal(subproc_get_ll(out, "used"), 0);
    }
    if (subproc_get_ll(out, "fired") == 0)
      return;
  }
  fail();
}

/* ------------------------------------------------------------ NUMA child */

/* In a child process with a synthetic 2-node topology (the topology is
 * loaded once per process): pools on each node work, a third node is
 * rejected.  hwloc does not bind for a synthetic topology that is not this
 * system, so binding may be a no-op or fail; allocation must not care. */
static int child_numa(void) {
  ascDeviceProp prop;
  ascMemPool_t p = NULL, bad = NULL;
  ascMemPoolProps pr = {.numaNode = 2};
  ascError_t e;

  e = ascGetDeviceProperties(&prop, 0);
  printf("init=%s\nnuma=%d\n", ascGetErrorName(e), prop.numaNodes);
  printf("node2=%s\n", ascGetErrorName(ascMemPoolCreate(&bad, &pr)));
  for (int node = 0; node < 2; node++) {
    void *small = NULL, *big = NULL;
    bool ok;
    pr.numaNode = node;
    e = ascMemPoolCreate(&p, &pr);
    printf("create%d=%s\n", node, ascGetErrorName(e));
    if (e != ascSuccess)
      continue;
    ok = ascMallocFromPoolAsync(&small, 64, p, NULL) == ascSuccess &&
         ascMallocFromPoolAsync(&big, 2 * MiB, p, NULL) == ascSuccess;
    ok = ok && (uintptr_t)small % 64 == 0 &&
         (uintptr_t)big % (uintptr_t)sysconf(_SC_PAGESIZE) == 0;
    if (ok) {
      memset(small, 1, 64);
      memset(big, 2, 2 * MiB);
    }
    ok = ok && ascFreeAsync(small, NULL) == ascSuccess &&
         ascFreeAsync(big, NULL) == ascSuccess;
    printf("alloc%d=%d\nbind_failures%d=%llu\n", node, ok ? 1 : 0, node,
           (unsigned long long)asc__pool_bind_failures(p));
    printf("destroy%d=%s\n", node, ascGetErrorName(ascMemPoolDestroy(p)));
  }
  return 0;
}

static void test_numa_synthetic(void **state) {
  static const char *const env[] = {
      "HWLOC_SYNTHETIC=pack:2 numa:1 core:2 pu:1", NULL};
  char out[SUBPROC_OUT_MAX], buf[64];
  int rc;
  (void)state;

  rc = subproc_run("numa", env, out, sizeof out);
  if (rc != 0)
    print_error("child output:\n%s\n", out);
  assert_int_equal(rc, 0);
  assert_string_equal(subproc_get(out, "init", buf, sizeof buf), "ascSuccess");
  assert_int_equal(subproc_get_ll(out, "numa"), 2);
  assert_string_equal(subproc_get(out, "node2", buf, sizeof buf),
                      "ascErrorInvalidValue");
  for (int node = 0; node < 2; node++) {
    char key[32];
    snprintf(key, sizeof key, "create%d", node);
    assert_string_equal(subproc_get(out, key, buf, sizeof buf), "ascSuccess");
    snprintf(key, sizeof key, "alloc%d", node);
    assert_int_equal(subproc_get_ll(out, key), 1);
    snprintf(key, sizeof key, "destroy%d", node);
    assert_string_equal(subproc_get(out, key, buf, sizeof buf), "ascSuccess");
  }
}

/* ------------------------------------------------------------ streams */

/* A host function that holds its stream (and the callback thread) until
 * the test opens the gate. */
static atomic_int gate_open;

static void gate_fn(void *ud) {
  (void)ud;
  while (!atomic_load(&gate_open))
    usleep(200);
}

static void close_gate(ascStream_t s) {
  atomic_store(&gate_open, 0);
  assert_int_equal(ascLaunchHostFunc(s, gate_fn, NULL), ascSuccess);
}

static void open_gate(void) { atomic_store(&gate_open, 1); }

static void set_policies(ascMemPool_t p, int follow, int opportunistic,
                         int internal) {
  set_int(p, ascMemPoolReuseFollowEventDependencies, follow);
  set_int(p, ascMemPoolReuseAllowOpportunistic, opportunistic);
  set_int(p, ascMemPoolReuseAllowInternalDependencies, internal);
}

static bool all_bytes(const void *p, int v, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != (unsigned char)v)
      return false;
  return true;
}

/* Same stream: a block comes back at once, even while the stream is still
 * busy with work queued before the free. */
static void test_reuse_same_stream(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s;
  void *a, *b;
  (void)state;

  set_policies(p, 0, 0, 0);
  assert_int_equal(ascStreamCreate(&s), ascSuccess);
  close_gate(s);
  assert_int_equal(ascMallocFromPoolAsync(&a, 4096, p, s), ascSuccess);
  assert_int_equal(ascMemsetAsync(a, 0xaa, 4096, s), ascSuccess);
  assert_int_equal(ascFreeAsync(a, s), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&b, 4000, p, s), ascSuccess);
  assert_ptr_equal(a, b);
  assert_int_equal(ascMemsetAsync(b, 0xbb, 4000, s), ascSuccess);
  expect_stats(p, 4096, 4096);
  open_gate();
  assert_int_equal(ascStreamSynchronize(s), ascSuccess);
  assert_true(all_bytes(b, 0xbb, 4000));
  assert_int_equal(ascFreeAsync(b, s), ascSuccess);
  assert_int_equal(ascStreamSynchronize(s), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascStreamDestroy(s), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* Another stream without any dependency: not while the free may be
 * pending; opportunistically once the freeing stream has completed. */
static void test_reuse_other_stream_without_event(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s1, s2;
  void *a, *b, *c;
  (void)state;

  set64(p, ascMemPoolAttrReleaseThreshold, UINT64_MAX);
  set_policies(p, 1, 1, 0);
  assert_int_equal(ascStreamCreate(&s1), ascSuccess);
  assert_int_equal(ascStreamCreate(&s2), ascSuccess);
  close_gate(s1);
  assert_int_equal(ascMallocFromPoolAsync(&a, 1000, p, s1), ascSuccess);
  assert_int_equal(ascMemsetAsync(a, 0xaa, 1000, s1), ascSuccess);
  assert_int_equal(ascFreeAsync(a, s1), ascSuccess);
  /* s1 is held: even opportunistic reuse must not take a. */
  assert_int_equal(ascMallocFromPoolAsync(&b, 1000, p, s2), ascSuccess);
  assert_ptr_not_equal(a, b);
  assert_int_equal(ascMemsetAsync(b, 0xbb, 1000, s2), ascSuccess);
  expect_stats(p, 2048, 1024);
  open_gate();
  assert_int_equal(ascStreamSynchronize(s1), ascSuccess);
  /* Completed: opportunistic reuse takes it ... */
  assert_int_equal(ascMallocFromPoolAsync(&c, 1000, p, s2), ascSuccess);
  assert_ptr_equal(a, c);
  assert_int_equal(ascFreeAsync(c, s2), ascSuccess);
  /* ... unless the policy is off (s2 is idle, so the only same-stream
   * block is c, just freed on s2 itself: use a third stream). */
  set_policies(p, 1, 0, 0);
  {
    ascStream_t s3;
    void *d;
    assert_int_equal(ascStreamCreate(&s3), ascSuccess);
    assert_int_equal(ascMallocFromPoolAsync(&d, 1000, p, s3), ascSuccess);
    assert_ptr_not_equal(d, a);
    assert_int_equal(ascFreeAsync(d, s3), ascSuccess);
    assert_int_equal(ascStreamDestroy(s3), ascSuccess);
  }
  assert_int_equal(ascFreeAsync(b, s2), ascSuccess);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascStreamDestroy(s1), ascSuccess);
  assert_int_equal(ascStreamDestroy(s2), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* Another stream that waited on an event recorded after the free reuses
 * the block while the freeing stream is still held; its writes land after
 * the old owner's. */
static void test_reuse_other_stream_with_event(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s1, s2;
  ascEvent_t ev, early;
  void *a, *b;
  (void)state;

  set64(p, ascMemPoolAttrReleaseThreshold, UINT64_MAX);
  assert_int_equal(ascStreamCreate(&s1), ascSuccess);
  assert_int_equal(ascStreamCreate(&s2), ascSuccess);
  assert_int_equal(ascEventCreate(&ev), ascSuccess);
  assert_int_equal(ascEventCreate(&early), ascSuccess);

  /* An event recorded before the free does not order anything after it. */
  set_policies(p, 1, 0, 0);
  close_gate(s1);
  assert_int_equal(ascMallocFromPoolAsync(&a, 8192, p, s1), ascSuccess);
  assert_int_equal(ascEventRecord(early, s1), ascSuccess);
  assert_int_equal(ascMemsetAsync(a, 0xaa, 8192, s1), ascSuccess);
  assert_int_equal(ascFreeAsync(a, s1), ascSuccess);
  assert_int_equal(ascStreamWaitEvent(s2, early, 0), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&b, 8192, p, s2), ascSuccess);
  assert_ptr_not_equal(a, b);
  assert_int_equal(ascFreeAsync(b, s2), ascSuccess);

  /* Following event dependencies off: the event does not help. */
  assert_int_equal(ascEventRecord(ev, s1), ascSuccess);
  assert_int_equal(ascStreamWaitEvent(s2, ev, 0), ascSuccess);
  set_policies(p, 0, 0, 0);
  assert_int_equal(ascMallocFromPoolAsync(&b, 8192, p, s2), ascSuccess);
  assert_ptr_not_equal(a, b);
  /* On: it does, while s1 is still held. */
  set_policies(p, 1, 0, 0);
  {
    void *c;
    assert_int_equal(ascMallocFromPoolAsync(&c, 8192, p, s2), ascSuccess);
    assert_ptr_equal(a, c);
    assert_int_equal(ascMemsetAsync(c, 0xcc, 8192, s2), ascSuccess);
    assert_int_equal(ascStreamQuery(s1), ascErrorNotReady);
    open_gate();
    assert_int_equal(ascDeviceSynchronize(), ascSuccess);
    assert_true(all_bytes(c, 0xcc, 8192));
    assert_int_equal(ascFreeAsync(c, s2), ascSuccess);
  }
  assert_int_equal(ascFreeAsync(b, s2), ascSuccess);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascEventDestroy(ev), ascSuccess);
  assert_int_equal(ascEventDestroy(early), ascSuccess);
  assert_int_equal(ascStreamDestroy(s1), ascSuccess);
  assert_int_equal(ascStreamDestroy(s2), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* Internal dependencies: the pool makes the allocating stream wait. */
static void test_reuse_internal_dependency(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s1, s2;
  void *a, *b;
  (void)state;

  set_policies(p, 0, 0, 1);
  assert_int_equal(ascStreamCreate(&s1), ascSuccess);
  assert_int_equal(ascStreamCreate(&s2), ascSuccess);
  close_gate(s1);
  assert_int_equal(ascMallocFromPoolAsync(&a, 100000, p, s1), ascSuccess);
  assert_int_equal(ascMemsetAsync(a, 0xaa, 100000, s1), ascSuccess);
  assert_int_equal(ascFreeAsync(a, s1), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&b, 100000, p, s2), ascSuccess);
  assert_ptr_equal(a, b);
  assert_int_equal(ascMemsetAsync(b, 0xbb, 100000, s2), ascSuccess);
  /* s2 now waits for s1. */
  usleep(20000);
  assert_int_equal(ascStreamQuery(s2), ascErrorNotReady);
  open_gate();
  assert_int_equal(ascStreamSynchronize(s2), ascSuccess);
  assert_true(all_bytes(b, 0xbb, 100000));
  assert_int_equal(ascFreeAsync(b, s2), ascSuccess);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascStreamDestroy(s1), ascSuccess);
  assert_int_equal(ascStreamDestroy(s2), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* Work queued before a free (a slow "kernel": a held host function, then
 * an ascMemsetAsync) never corrupts a newer allocation on another stream,
 * whatever the policies. */
static void test_pending_work_never_corrupts(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s1, s2;
  (void)state;

  assert_int_equal(ascStreamCreate(&s1), ascSuccess);
  assert_int_equal(ascStreamCreate(&s2), ascSuccess);
  for (int policy = 0; policy < 8; policy++) {
    void *a, *b;
    set_policies(p, policy & 1, (policy >> 1) & 1, (policy >> 2) & 1);
    close_gate(s1);
    assert_int_equal(ascMallocFromPoolAsync(&a, 256 << 10, p, s1),
                     ascSuccess);
    assert_int_equal(ascMemsetAsync(a, 0xaa, 256 << 10, s1), ascSuccess);
    assert_int_equal(ascFreeAsync(a, s1), ascSuccess);
    assert_int_equal(ascMallocFromPoolAsync(&b, 256 << 10, p, s2),
                     ascSuccess);
    assert_int_equal(ascMemsetAsync(b, 0xbb, 256 << 10, s2), ascSuccess);
    /* Let s2 run ahead if it is allowed to. */
    usleep(5000);
    open_gate();
    assert_int_equal(ascDeviceSynchronize(), ascSuccess);
    assert_true(all_bytes(b, 0xbb, 256 << 10));
    assert_int_equal(ascFreeAsync(b, s2), ascSuccess);
  }
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascStreamDestroy(s1), ascSuccess);
  assert_int_equal(ascStreamDestroy(s2), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* The same with real kernels from tests/c/modules/testkernels.c: on s1 a
 * sleeping kernel, then affine(a, 1, 1000) on a block freed right after;
 * on s2 the new owner fills its block with 0 and runs affine(b, 0, 7).
 * Whatever block s2 gets and whatever the policies, b ends all 7. */
static void test_kernel_before_free_never_corrupts(void **state) {
  enum { N = 64 * 1024 };
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascModule_t m = NULL;
  ascKernel_t sleepy, affine;
  ascStream_t s1, s2;
  (void)state;

  assert_int_equal(ascModuleLoad(&m, ASC_TEST_MODULE_DIR "/testkernels.so"),
                   ascSuccess);
  assert_int_equal(ascModuleGetKernel(&sleepy, m, "sleepy"), ascSuccess);
  assert_int_equal(ascModuleGetKernel(&affine, m, "affine"), ascSuccess);
  assert_int_equal(ascStreamCreate(&s1), ascSuccess);
  assert_int_equal(ascStreamCreate(&s2), ascSuccess);
  for (int policy = 0; policy < 8; policy++) {
    int32_t us = 20000;
    int64_t one = 1, big = 1000, zero = 0, seven = 7;
    void *a, *b;
    ascTensor ta, tb;
    void *sleep_args[] = {&us};
    void *old_args[] = {&ta, &one, &big};
    void *new_args[] = {&tb, &zero, &seven};

    set_policies(p, policy & 1, (policy >> 1) & 1, (policy >> 2) & 1);
    assert_int_equal(ascMallocFromPoolAsync(&a, N * sizeof(int64_t), p, s1),
                     ascSuccess);
    ta = (ascTensor){.data = a, .dtype = ascInt64, .ndim = 1};
    ta.shape[0] = N;
    ta.strides[0] = 1;
    assert_int_equal(ascLaunchKernel(sleepy, 1, sleep_args, s1), ascSuccess);
    assert_int_equal(ascLaunchKernel(affine, 1, old_args, s1), ascSuccess);
    assert_int_equal(ascFreeAsync(a, s1), ascSuccess);

    assert_int_equal(ascMallocFromPoolAsync(&b, N * sizeof(int64_t), p, s2),
                     ascSuccess);
    tb = ta;
    tb.data = b;
    assert_int_equal(ascMemsetAsync(b, 0, N * sizeof(int64_t), s2),
                     ascSuccess);
    assert_int_equal(ascLaunchKernel(affine, 1, new_args, s2), ascSuccess);
    assert_int_equal(ascDeviceSynchronize(), ascSuccess);
    for (int i = 0; i < N; i++)
      if (((int64_t *)b)[i] != 7)
        fail_msg("policy %d: b[%d] = %lld, expected 7", policy, i,
                 (long long)((int64_t *)b)[i]);
    assert_int_equal(ascFreeAsync(b, s2), ascSuccess);
  }
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascStreamDestroy(s1), ascSuccess);
  assert_int_equal(ascStreamDestroy(s2), ascSuccess);
  assert_int_equal(ascModuleUnload(m), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* An internal dependency that has to wait for room on a full stream must
 * not hold the pools lock meanwhile: the host function that stream is
 * stuck behind allocates from the same pool. */
typedef struct gate_alloc {
  ascMemPool_t pool;
  ascError_t err;
} gate_alloc;

static void gate_then_alloc_fn(void *ud) {
  gate_alloc *g = ud;
  void *x = NULL;
  while (!atomic_load(&gate_open))
    usleep(200);
  g->err = ascMallocFromPoolAsync(&x, 100, g->pool, NULL);
  if (g->err == ascSuccess)
    g->err = ascFreeAsync(x, NULL);
}

static void open_gate_later(void *ud) {
  (void)ud;
  usleep(100000);
  open_gate();
}

static void test_internal_dependency_on_full_stream(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s1, s2;
  gate_alloc g = {p, ascErrorInternal};
  uv_thread_t opener;
  void *a, *b, *scratch;
  (void)state;

  set_policies(p, 0, 0, 1);
  assert_int_equal(ascStreamCreate(&s1), ascSuccess);
  assert_int_equal(ascStreamCreate(&s2), ascSuccess);
  assert_int_equal(ascMalloc(&scratch, 64), ascSuccess);
  atomic_store(&gate_open, 0);
  /* s1 holds the host-callback thread; s2's host function queues behind
   * it, then enough work to fill s2's queue. */
  assert_int_equal(ascLaunchHostFunc(s1, gate_then_alloc_fn, &g), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&a, 8192, p, s1), ascSuccess);
  assert_int_equal(ascFreeAsync(a, s1), ascSuccess);
  assert_int_equal(ascLaunchHostFunc(s2, gate_fn, NULL), ascSuccess);
  assert_int_equal(uv_thread_create(&opener, open_gate_later, NULL), 0);
  /* The stream code queues at most 1024 operations per stream (then the
   * host waits for room): this fills s2's queue. */
  for (int i = 0; i < 1023; i++)
    assert_int_equal(ascMemsetAsync(scratch, i, 64, s2), ascSuccess);
  assert_int_equal(ascStreamQuery(s1), ascErrorNotReady);
  /* Reuses a through an internal dependency: s2 must wait for s1, and
   * queuing that wait waits for room on s2. */
  assert_int_equal(ascMallocFromPoolAsync(&b, 8192, p, s2), ascSuccess);
  assert_ptr_equal(a, b);
  assert_int_equal(uv_thread_join(&opener), 0);
  assert_int_equal(ascFreeAsync(b, s2), ascSuccess);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  assert_int_equal(g.err, ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascFree(scratch), ascSuccess);
  assert_int_equal(ascStreamDestroy(s1), ascSuccess);
  assert_int_equal(ascStreamDestroy(s2), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* The threshold only releases frees that have completed. */
static void test_threshold_waits_for_pending_frees(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s1, s2;
  void *a;
  (void)state;

  assert_int_equal(ascStreamCreate(&s1), ascSuccess);
  assert_int_equal(ascStreamCreate(&s2), ascSuccess);
  close_gate(s1);
  assert_int_equal(ascMallocFromPoolAsync(&a, 1 * MiB, p, s1), ascSuccess);
  assert_int_equal(ascMemsetAsync(a, 1, 1 * MiB, s1), ascSuccess);
  assert_int_equal(ascFreeAsync(a, s1), ascSuccess);
  assert_int_equal(ascStreamSynchronize(s2), ascSuccess);
  assert_int_equal(ascMemPoolTrimTo(p, 0), ascSuccess);
  expect_stats(p, 1 * MiB, 0);
  open_gate();
  assert_int_equal(ascStreamSynchronize(s1), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascStreamDestroy(s1), ascSuccess);
  assert_int_equal(ascStreamDestroy(s2), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* Stream and event synchronisation apply thresholds too. */
static void test_sync_calls_apply_threshold(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s;
  ascEvent_t ev;
  void *a;
  (void)state;

  assert_int_equal(ascStreamCreate(&s), ascSuccess);
  assert_int_equal(ascEventCreate(&ev), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&a, 5000, p, s), ascSuccess);
  assert_int_equal(ascFreeAsync(a, s), ascSuccess);
  expect_stats(p, asc__pool_block_size(5000), 0);
  assert_int_equal(ascStreamSynchronize(s), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascMallocFromPoolAsync(&a, 5000, p, s), ascSuccess);
  assert_int_equal(ascFreeAsync(a, s), ascSuccess);
  assert_int_equal(ascEventRecord(ev, s), ascSuccess);
  assert_int_equal(ascEventSynchronize(ev), ascSuccess);
  expect_stats(p, 0, 0);
  assert_int_equal(ascEventDestroy(ev), ascSuccess);
  assert_int_equal(ascStreamDestroy(s), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

static void test_invalid_streams(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t s;
  void *a = NULL, *x = &a;
  (void)state;

  assert_int_equal(ascStreamCreate(&s), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&a, 64, p, s), ascSuccess);
  assert_int_equal(ascStreamDestroy(s), ascSuccess);
  assert_int_equal(ascMallocAsync(&x, 64, s), ascErrorInvalidHandle);
  assert_null(x);
  x = &a;
  assert_int_equal(ascMallocFromPoolAsync(&x, 64, p, s),
                   ascErrorInvalidHandle);
  assert_null(x);
  assert_int_equal(ascFreeAsync(a, s), ascErrorInvalidHandle);
  assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* ----------------------------------------------------------------- churn */

static uint64_t rng_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}


static uint64_t churn_peak;

/* 10^6 random-size allocations and frees on 4 streams (sizes mostly
 * small, one in eight up to 256 KiB), with real work on the blocks
 * (ascMemsetAsync every 64 operations), frees on another stream ordered by
 * an event half of the time, and a synchronisation every 4096 operations.
 * Statistics stay exact and reserved memory stays bounded. */
static void test_churn(void **state) {
  enum { NSLOTS = 512, NSTREAMS = 4 };
  long ops = env_long("ASC_POOL_CHURN_OPS", CHURN_OPS_DEFAULT);
  ascMemPool_t p = new_pool(-1, 0, 0);
  ascStream_t st[NSTREAMS];
  ascEvent_t ev[NSTREAMS];
  void *slot[NSLOTS] = {0};
  uint64_t slot_size[NSLOTS] = {0};
  int slot_stream[NSLOTS] = {0};
  uint64_t rng = 0x9e3779b97f4a7c15ull, live = 0, live_peak = 0;
  uint64_t t0 = uv_hrtime();
  (void)state;

  for (int i = 0; i < NSTREAMS; i++) {
    assert_int_equal(ascStreamCreate(&st[i]), ascSuccess);
    assert_int_equal(ascEventCreateWithFlags(&ev[i], ascEventDisableTiming),
                     ascSuccess);
  }
  set64(p, ascMemPoolAttrReleaseThreshold, 16 * MiB);
  for (long i = 0; i < ops; i++) {
    uint64_t r = rng_next(&rng);
    size_t k = (size_t)(r % NSLOTS);
    int si = (int)((r >> 9) % NSTREAMS);
    if (slot[k] == NULL) {
      size_t size = (r >> 20) % 8 == 0 ? 1 + (r >> 24) % (256 << 10)
                                       : 1 + (r >> 24) % 2048;
      assert_int_equal(ascMallocFromPoolAsync(&slot[k], size, p, st[si]),
                       ascSuccess);
      slot_size[k] = asc__pool_block_size(size);
      slot_stream[k] = si;
      if (i % 64 == 0)
        assert_int_equal(ascMemsetAsync(slot[k], (int)(i & 0xff), size,
                                        st[si]),
                         ascSuccess);
      live += slot_size[k];
      if (live > live_peak)
        live_peak = live;
    } else {
      int owner = slot_stream[k];
      if (si != owner && (r >> 12) % 2 == 0) {
        assert_int_equal(ascEventRecord(ev[owner], st[owner]), ascSuccess);
        assert_int_equal(ascStreamWaitEvent(st[si], ev[owner], 0),
                         ascSuccess);
      } else {
        si = owner;
      }
      assert_int_equal(ascFreeAsync(slot[k], st[si]), ascSuccess);
      live -= slot_size[k];
      slot[k] = NULL;
    }
    if (i % 4096 == 0) {
      assert_int_equal(ascDeviceSynchronize(), ascSuccess);
      assert_int_equal(attr64(p, ascMemPoolAttrUsedMemCurrent), live);
    }
  }
  churn_peak = attr64(p, ascMemPoolAttrReservedMemHigh);
  assert_int_equal(attr64(p, ascMemPoolAttrUsedMemHigh), live_peak);
  /* Bounded: the peak of live memory, plus one threshold's worth, plus
   * what accumulates between two synchronisations. */
  assert_true(churn_peak <= live_peak + 16 * MiB + 32 * MiB);
  for (size_t k = 0; k < NSLOTS; k++)
    if (slot[k] != NULL)
      assert_int_equal(ascFreeAsync(slot[k], st[slot_stream[k]]),
                       ascSuccess);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(p, attr64(p, ascMemPoolAttrReservedMemCurrent), 0);
  assert_true(attr64(p, ascMemPoolAttrReservedMemCurrent) <= 16 * MiB);
  print_message("churn: %ld ops on %d streams in %.2f s, peak live %llu B, "
                "peak reserved %llu B\n",
                ops, NSTREAMS, (double)(uv_hrtime() - t0) / 1e9,
                (unsigned long long)live_peak,
                (unsigned long long)churn_peak);
  for (int i = 0; i < NSTREAMS; i++) {
    assert_int_equal(ascEventDestroy(ev[i]), ascSuccess);
    assert_int_equal(ascStreamDestroy(st[i]), ascSuccess);
  }
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* Host threads allocating and freeing on their own streams from one pool
 * while another thread reads statistics, trims and synchronises (for
 * TSan). */
typedef struct thread_arg {
  ascMemPool_t pool;
  ascStream_t stream;
  uint64_t seed;
  int iters;
  int failures;
} thread_arg;

static void thread_body(void *ud) {
  thread_arg *a = ud;
  void *held[16] = {0};
  for (int i = 0; i < a->iters; i++) {
    uint64_t r = rng_next(&a->seed);
    int k = (int)(r % 16);
    if (held[k] != NULL) {
      if (ascFreeAsync(held[k], a->stream) != ascSuccess)
        a->failures++;
      held[k] = NULL;
    } else if (ascMallocFromPoolAsync(&held[k], 1 + (r >> 8) % 20000,
                                      a->pool, a->stream) != ascSuccess) {
      a->failures++;
    } else if (i % 32 == 0 &&
               ascMemsetAsync(held[k], 1, 64, a->stream) != ascSuccess) {
      a->failures++;
    }
  }
  for (int k = 0; k < 16; k++)
    if (held[k] != NULL && ascFreeAsync(held[k], a->stream) != ascSuccess)
      a->failures++;
}

static void test_threads(void **state) {
  enum { NTHREADS = 4 };
  ascMemPool_t p = new_pool(-1, 0, 0);
  thread_arg args[NTHREADS];
  uv_thread_t th[NTHREADS];
  (void)state;

  for (int i = 0; i < NTHREADS; i++) {
    args[i].pool = p;
    assert_int_equal(ascStreamCreate(&args[i].stream), ascSuccess);
    args[i].seed = 0x1234567ull * (uint64_t)(i + 1);
    args[i].iters = 20000;
    args[i].failures = 0;
    assert_int_equal(uv_thread_create(&th[i], thread_body, &args[i]), 0);
  }
  for (int i = 0; i < 200; i++) {
    (void)attr64(p, ascMemPoolAttrReservedMemCurrent);
    assert_int_equal(ascMemPoolTrimTo(p, 1 * MiB), ascSuccess);
    assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  }
  for (int i = 0; i < NTHREADS; i++) {
    assert_int_equal(uv_thread_join(&th[i]), 0);
    assert_int_equal(args[i].failures, 0);
  }
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(p, 0, 0);
  for (int i = 0; i < NTHREADS; i++)
    assert_int_equal(ascStreamDestroy(args[i].stream), ascSuccess);
  assert_int_equal(ascMemPoolDestroy(p), ascSuccess);
}

/* ---------------------------------------------------- thread caches
 * The default pool keeps a thread's small frees on the default stream in
 * a cache of that thread (pool.c): reused by its next allocation on the
 * same stream only; every other path sees them as the pool's. */

static ascMemPool_t default_pool(void) {
  ascMemPool_t d = NULL;
  assert_int_equal(ascDeviceGetDefaultMemPool(&d, 0), ascSuccess);
  return d;
}

/* A block freed on the busy default stream comes back to that stream at
 * once, and never to another stream that is not ordered after the free. */
static void test_thread_cache_same_stream_only(void **state) {
  ascMemPool_t d = default_pool();
  ascStream_t s;
  void *a, *b, *c;
  (void)state;

  set64(d, ascMemPoolAttrReleaseThreshold, UINT64_MAX);
  set_policies(d, 0, 0, 0);
  assert_int_equal(ascStreamCreateWithFlags(&s, ascStreamNonBlocking),
                   ascSuccess);
  close_gate(NULL);
  assert_int_equal(ascMallocAsync(&a, 64, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  assert_int_equal(ascMallocAsync(&c, 64, NULL), ascSuccess);
  assert_ptr_equal(a, c);                       /* same stream: at once */
  assert_int_equal(ascFreeAsync(c, NULL), ascSuccess);
  assert_int_equal(ascMallocAsync(&b, 64, s), ascSuccess);
  assert_ptr_not_equal(a, b);                   /* the free is pending */
  assert_int_equal(ascMallocAsync(&c, 64, NULL), ascSuccess);
  assert_ptr_equal(a, c);
  expect_stats(d, 128, 128);
  assert_int_equal(ascFreeAsync(b, s), ascSuccess);
  assert_int_equal(ascFreeAsync(c, NULL), ascSuccess);
  expect_stats(d, 128, 0);
  open_gate();
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  set_policies(d, 1, 1, 1);
  set64(d, ascMemPoolAttrReleaseThreshold, 0);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(d, 0, 0);
  assert_int_equal(ascStreamDestroy(s), ascSuccess);
}

/* The statistics count a cached block as freed, and the high-water marks
 * stay exact however many allocations the cache serves. */
static void test_thread_cache_statistics(void **state) {
  ascMemPool_t d = default_pool();
  void *a, *b;
  (void)state;

  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(d, 0, 0);
  set64(d, ascMemPoolAttrUsedMemHigh, 0);
  set64(d, ascMemPoolAttrReservedMemHigh, 0);
  for (int i = 0; i < 100; i++) {
    assert_int_equal(ascMallocAsync(&a, 64, NULL), ascSuccess);
    assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  }
  expect_stats(d, 64, 0);
  assert_int_equal(attr64(d, ascMemPoolAttrUsedMemHigh), 64);
  assert_int_equal(ascMallocAsync(&a, 64, NULL), ascSuccess);
  expect_stats(d, 64, 64);
  assert_int_equal(ascMallocAsync(&b, 1000, NULL), ascSuccess);
  expect_stats(d, 64 + 1024, 64 + 1024);
  assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(b, NULL), ascSuccess);
  expect_stats(d, 64 + 1024, 0);
  assert_int_equal(attr64(d, ascMemPoolAttrUsedMemHigh), 64 + 1024);
  assert_int_equal(attr64(d, ascMemPoolAttrReservedMemHigh), 64 + 1024);
  /* threshold 0: a synchronisation releases what the cache held */
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(d, 0, 0);
  assert_int_equal(ascMemPoolTrimTo(d, 0), ascSuccess);
}

/* A block up to 4 KiB freed on the default stream waits in the thread's
 * cache and serves its next allocation of the class there; a larger one
 * goes back to the pool.  The statistics count as before. */
static void test_thread_cache_classes_to_4k(void **state) {
  static const size_t sizes[] = {64, 1000, 1025, 2048, 3000, 4096};
  static const uint64_t csizes[] = {64, 1024, 1280, 2048, 3072, 4096};
  ascMemPool_t d = default_pool();
  void *p, *q;
  (void)state;

  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(d, 0, 0);
  for (int i = 0; i < 6; i++) {
    assert_int_equal(ascMallocAsync(&p, sizes[i], NULL), ascSuccess);
    assert_int_equal(ascFreeAsync(p, NULL), ascSuccess);
    assert_int_equal(asc__pool_thread_cached(), 1);
    assert_int_equal(ascMallocAsync(&q, sizes[i], NULL), ascSuccess);
    assert_ptr_equal(q, p);
    assert_int_equal(asc__pool_thread_cached(), 0);
    assert_int_equal(ascFreeAsync(q, NULL), ascSuccess);
    assert_int_equal(asc__pool_thread_cached(), 1);
    /* reading the statistics empties the cache first (a cached block
     * reads as freed) */
    expect_stats(d, csizes[i], 0);
    assert_int_equal(asc__pool_thread_cached(), 0);
    assert_int_equal(ascDeviceSynchronize(), ascSuccess);
    expect_stats(d, 0, 0);
  }
  assert_int_equal(ascMallocAsync(&p, 4097, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(p, NULL), ascSuccess);
  assert_int_equal(asc__pool_thread_cached(), 0);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(d, 0, 0);
}

typedef struct owner_arg {
  void *p;
  atomic_int phase;   /* 1: allocated; 2: freed by another thread */
  ascError_t second_free;
} owner_arg;

static void owner_body(void *ud) {
  owner_arg *o = ud;
  void *q;
  /* through the cache: allocate, free, allocate again */
  assert_int_equal(ascMallocAsync(&q, 64, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(q, NULL), ascSuccess);
  assert_int_equal(ascMallocAsync(&o->p, 64, NULL), ascSuccess);
  atomic_store(&o->phase, 1);
  while (atomic_load(&o->phase) != 2)
    usleep(100);
  /* freed by the main thread meanwhile: this free is a double free */
  o->second_free = ascFreeAsync(o->p, NULL);
}

/* A block its thread's cache remembers, freed by another thread, is freed
 * once: the owner's free of it afterwards is refused, not cached. */
static void test_thread_cache_free_from_another_thread(void **state) {
  owner_arg o;
  uv_thread_t t;
  (void)state;

  o.p = NULL;
  atomic_store(&o.phase, 0);
  o.second_free = ascSuccess;
  assert_int_equal(uv_thread_create(&t, owner_body, &o), 0);
  while (atomic_load(&o.phase) != 1)
    usleep(100);
  assert_int_equal(ascFreeAsync(o.p, NULL), ascSuccess);
  atomic_store(&o.phase, 2);
  assert_int_equal(uv_thread_join(&t), 0);
  assert_int_equal(o.second_free, ascErrorInvalidValue);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(default_pool(), 0, 0);
}

static void cache_and_exit(void *ud) {
  void **p = ud;
  assert_int_equal(ascMallocAsync(p, 64, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(*p, NULL), ascSuccess);
  assert_int_equal(ascMallocAsync(p, 64, NULL), ascSuccess);
  assert_int_equal(ascFreeAsync(*p, NULL), ascSuccess);
}

/* A thread that ends leaves its cached blocks to the pool. */
static void test_thread_cache_thread_exit(void **state) {
  ascMemPool_t d = default_pool();
  uv_thread_t t;
  void *p = NULL, *q;
  (void)state;

  set64(d, ascMemPoolAttrReleaseThreshold, UINT64_MAX);
  assert_int_equal(uv_thread_create(&t, cache_and_exit, &p), 0);
  assert_int_equal(uv_thread_join(&t), 0);
  expect_stats(d, 64, 0);
  /* the default stream may take it back (same stream) */
  assert_int_equal(ascMallocAsync(&q, 64, NULL), ascSuccess);
  assert_ptr_equal(q, p);
  assert_int_equal(ascFreeAsync(q, NULL), ascSuccess);
  set64(d, ascMemPoolAttrReleaseThreshold, 0);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(d, 0, 0);
}

typedef struct small_arg {
  uint64_t seed;
  int iters;
  int tag;
  int failures;
} small_arg;

/* Small blocks on the default stream from several threads at once: every
 * block handed out is this thread's alone until it frees it (its bytes
 * keep the thread's pattern), while the main thread reads statistics,
 * trims and synchronises (each empties every cache). */
static void small_body(void *ud) {
  small_arg *a = ud;
  unsigned char *held[8] = {0};
  size_t len[8] = {0};
  for (int i = 0; i < a->iters; i++) {
    uint64_t r = rng_next(&a->seed);
    int k = (int)(r % 8);
    if (held[k] != NULL) {
      unsigned char want = (unsigned char)(a->tag * 16 + k);
      for (size_t j = 0; j < len[k]; j++)
        if (held[k][j] != want) {
          a->failures++;
          break;
        }
      if (ascFreeAsync(held[k], NULL) != ascSuccess)
        a->failures++;
      held[k] = NULL;
    } else {
      len[k] = 1 + (r >> 8) % 1024;
      if (ascMallocAsync((void **)&held[k], len[k], NULL) != ascSuccess) {
        a->failures++;
        held[k] = NULL;
      } else {
        memset(held[k], a->tag * 16 + k, len[k]);
      }
    }
  }
  for (int k = 0; k < 8; k++)
    if (held[k] != NULL && ascFreeAsync(held[k], NULL) != ascSuccess)
      a->failures++;
}

static void test_thread_cache_threads(void **state) {
  enum { NTHREADS = 4 };
  small_arg args[NTHREADS];
  uv_thread_t th[NTHREADS];
  ascMemPool_t d = default_pool();
  (void)state;

  for (int i = 0; i < NTHREADS; i++) {
    args[i].seed = 0x9e3779b9ull * (uint64_t)(i + 3);
    args[i].iters = 20000;
    args[i].tag = i + 1;
    args[i].failures = 0;
    assert_int_equal(uv_thread_create(&th[i], small_body, &args[i]), 0);
  }
  for (int i = 0; i < 100; i++) {
    (void)attr64(d, ascMemPoolAttrUsedMemCurrent);
    assert_int_equal(ascMemPoolTrimTo(d, 4096), ascSuccess);
    assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  }
  for (int i = 0; i < NTHREADS; i++) {
    assert_int_equal(uv_thread_join(&th[i]), 0);
    assert_int_equal(args[i].failures, 0);
  }
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(d, 0, 0);
}

/* ascDeviceReset frees every pool and block; the default pool comes back
 * empty, created pools' handles are invalid.  Runs last. */
static void test_device_reset(void **state) {
  ascMemPool_t p = new_pool(-1, 0, 0), d1 = NULL, d2 = NULL;
  void *a, *b;
  uint64_t v;
  (void)state;

  assert_int_equal(ascDeviceGetDefaultMemPool(&d1, 0), ascSuccess);
  set64(d1, ascMemPoolAttrReleaseThreshold, UINT64_MAX);
  assert_int_equal(ascMallocAsync(&a, 1000, NULL), ascSuccess);
  assert_int_equal(ascMallocFromPoolAsync(&b, 1000, p, NULL), ascSuccess);
  assert_int_equal(ascDeviceReset(), ascSuccess);
  assert_int_equal(
      ascMemPoolGetAttribute(p, ascMemPoolAttrReservedMemCurrent, &v),
      ascErrorInvalidHandle);
  assert_int_equal(ascFreeAsync(b, NULL), ascErrorInvalidValue);
  assert_int_equal(ascFreeAsync(a, NULL), ascErrorInvalidValue);
  assert_int_equal(ascDeviceGetDefaultMemPool(&d2, 0), ascSuccess);
  expect_stats(d2, 0, 0);
  assert_int_equal(attr64(d2, ascMemPoolAttrReleaseThreshold), 0);
  assert_int_equal(ascMallocAsync(&a, 1000, NULL), ascSuccess);
  expect_stats(d2, 1024, 1024);
  assert_int_equal(ascFreeAsync(a, NULL), ascSuccess);
  assert_int_equal(ascDeviceSynchronize(), ascSuccess);
  expect_stats(d2, 0, 0);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_size_classes),
      cmocka_unit_test(test_default_pool),
      cmocka_unit_test(test_alignment),
      cmocka_unit_test(test_statistics_exact),
      cmocka_unit_test(test_threshold_and_trim),
      cmocka_unit_test(test_max_size),
      cmocka_unit_test(test_destroy_with_live_blocks),
      cmocka_unit_test(test_invalid_handles),
      cmocka_unit_test(test_failure_injection),
      cmocka_unit_test(test_failure_injection_first_use),
      cmocka_unit_test(test_registry_growth_failure),
      cmocka_unit_test(test_numa_synthetic),
      cmocka_unit_test(test_reuse_same_stream),
      cmocka_unit_test(test_reuse_other_stream_without_event),
      cmocka_unit_test(test_reuse_other_stream_with_event),
      cmocka_unit_test(test_reuse_internal_dependency),
      cmocka_unit_test(test_pending_work_never_corrupts),
      cmocka_unit_test(test_kernel_before_free_never_corrupts),
      cmocka_unit_test(test_internal_dependency_on_full_stream),
      cmocka_unit_test(test_threshold_waits_for_pending_frees),
      cmocka_unit_test(test_thread_cache_same_stream_only),
      cmocka_unit_test(test_thread_cache_statistics),
      cmocka_unit_test(test_thread_cache_classes_to_4k),
      cmocka_unit_test(test_thread_cache_free_from_another_thread),
      cmocka_unit_test(test_thread_cache_thread_exit),
      cmocka_unit_test(test_thread_cache_threads),
      cmocka_unit_test(test_sync_calls_apply_threshold),
      cmocka_unit_test(test_invalid_streams),
      cmocka_unit_test(test_churn),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_device_reset),
  };

  if (argc >= 3 && strcmp(argv[1], "--child") == 0) {
    if (strcmp(argv[2], "numa") == 0)
      return child_numa();
    if (strcmp(argv[2], "failinit") == 0)
      return child_failinit();
    return 2;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
