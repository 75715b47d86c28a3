/*
 * ascMemcpyAsync / ascMemsetAsync: stream-ordered copies run by the worker
 * pool as internal launches, one block per slice so large copies use
 * several cores.
 */
#include <string.h>

#include "runtime/stream.h"
#include "runtime/memory.h"

/* Copies below this size run as one block: splitting costs more than it
 * saves. */
#define SPLIT_MIN ((size_t)1 << 20)
#define SLICE_MIN ((size_t)256 << 10)

typedef struct mem_args {
  void *dst;
  const void *src;
  int value;
  size_t count;
  size_t slice;
} mem_args;

static void slice_of(const asc_kctx *ctx, const mem_args *a, size_t *lo,
                     size_t *n) {
  *lo = (size_t)ctx->block_idx * a->slice;
  *n = *lo >= a->count ? 0 : a->count - *lo;
  if (*n > a->slice)
    *n = a->slice;
}

static int copy_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const mem_args *a = args[0];
  size_t lo, n;

  ASC_UNUSED(exc);
  slice_of(ctx, a, &lo, &n);
  if (n > 0)
    memmove((char *)a->dst + lo, (const char *)a->src + lo, n);
  return 0;
}

static int set_entry(asc_kctx *ctx, void *const *args, asc_kexc *exc) {
  const mem_args *a = args[0];
  size_t lo, n;

  ASC_UNUSED(exc);
  slice_of(ctx, a, &lo, &n);
  if (n > 0)
    memset((char *)a->dst + lo, a->value, n);
  return 0;
}

static const asc_kernel_desc copy_desc = {
    .name = "memcpy", .entry = copy_entry, .file = "<libasc>"};
static const asc_kernel_desc set_desc = {
    .name = "memset", .entry = set_entry, .file = "<libasc>"};

static ascError_t mem_launch(asc__stream *st, const asc_kernel_desc *desc,
                             mem_args *a) {
  int cores = st->rt->dev->ncores;
  uint32_t blocks = 1;
  size_t size = sizeof *a;
  const void *src = a;

  if (a->count >= SPLIT_MIN && cores > 1) {
    size_t want = a->count / SLICE_MIN;
    blocks = want < (size_t)cores ? (uint32_t)want : (uint32_t)cores;
    if (blocks < 1)
      blocks = 1;
  }
  a->slice = (a->count + blocks - 1) / blocks;
  a->slice = (a->slice + 63) & ~(size_t)63;
  return asc__stream_launch(st, desc, blocks, blocks, 1, &size, &src, NULL,
                            NULL, NULL);
}

static ascError_t memcpy_async(asc__stream *st, void *dst, const void *src,
                               size_t count) {
  mem_args a;
  ascError_t err;

  err = asc__mem_range_check(st->rt->dev, "ascMemcpyAsync", "destination",
                             dst, count);
  if (err == ascSuccess)
    err = asc__mem_range_check(st->rt->dev, "ascMemcpyAsync", "source", src,
                               count);
  if (err != ascSuccess)
    return err;
  memset(&a, 0, sizeof a);
  a.dst = dst;
  a.src = src;
  a.count = count;
  return mem_launch(st, &copy_desc, &a);
}

ascError_t ascMemcpyAsync(void *dst, const void *src, size_t count,
                          ascMemcpyKind kind, ascStream_t stream) {
  asc__stream *st;
  ascError_t err;

  if ((unsigned)kind > ascMemcpyDefault)
    return asc__error(ascErrorInvalidValue,
                      "ascMemcpyAsync: invalid kind %d", (int)kind);
  if (count > 0 && (dst == NULL || src == NULL))
    return asc__error(ascErrorInvalidValue, "ascMemcpyAsync: %s is NULL",
                      dst == NULL ? "dst" : "src");
  err = asc__stream_enter(stream, &st);
  if (err != ascSuccess)
    return err;
  if (count > 0)
    err = memcpy_async(st, dst, src, count);
  asc__api_leave(st->rt);
  return err;
}

static ascError_t memset_async(asc__stream *st, void *devPtr, int value,
                               size_t count) {
  mem_args a;
  ascError_t err;

  err = asc__mem_range_check(st->rt->dev, "ascMemsetAsync", "destination",
                             devPtr, count);
  if (err != ascSuccess)
    return err;
  memset(&a, 0, sizeof a);
  a.dst = devPtr;
  a.value = value;
  a.count = count;
  return mem_launch(st, &set_desc, &a);
}

ascError_t ascMemsetAsync(void *devPtr, int value, size_t count,
                          ascStream_t stream) {
  asc__stream *st;
  ascError_t err;

  if (count > 0 && devPtr == NULL)
    return asc__error(ascErrorInvalidValue, "ascMemsetAsync: devPtr is NULL");
  err = asc__stream_enter(stream, &st);
  if (err != ascSuccess)
    return err;
  if (count > 0)
    err = memset_async(st, devPtr, value, count);
  asc__api_leave(st->rt);
  return err;
}
