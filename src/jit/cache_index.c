/*
 * The kernel cache's index (docs/cache.md, "Index"): records that map a
 * key of the jit's, computed without the front end, to what it stands for
 * (an entry's key, a module's kernel table), kept in memory too.
 */
#define _GNU_SOURCE
#include "jit/cache_int.h"
#include "jit/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ----------------------------------------------------------------- index
 *
 * A record, <30 hex>.idx in the fan-out directory of its key:
 *
 *   0     8  magic "ASCINDX1"
 *   8    16  the record's key
 *   24    8  value length n (little-endian)
 *   32    n  value
 *   32+n  8  XXH3-64 of bytes [0, 32 + n)
 *
 * Records are hints: a missing, truncated or corrupt one, or one that is
 * not a regular file of this user's that only they may write, reads as
 * absent, and the next put replaces it (by rename, so readers never see
 * half of one).  What a record names is checked as if it had been
 * computed: an entry is verified like any other. */

#define INDEX_MAGIC "ASCINDX1"
#define INDEX_HEAD 32

static struct mem_rec *mem_slot(asc__cache *c, const asc__cache_key *k) {
  return &c->mem[k->digest[0] % ASC_ARRAY_SIZE(c->mem)];
}

static void mem_put(asc__cache *c, const asc__cache_key *k, const void *v,
                    size_t n) {
  char *copy = asc__malloc(n + 1);
  struct mem_rec *r;

  if (copy == NULL)
    return;
  memcpy(copy, v, n);
  copy[n] = '\0';
  uv_mutex_lock(&c->mem_lock);
  r = mem_slot(c, k);
  asc__free(r->val);
  memcpy(r->key, k->digest, 16);
  r->val = copy;
  r->len = n;
  uv_mutex_unlock(&c->mem_lock);
}

/* The record's bytes in buf, whole and checked; false otherwise. */
static bool record_check(const unsigned char *buf, size_t size,
                         const asc__cache_key *k) {
  uint64_t n = 0;

  if (size < INDEX_HEAD + 8 || memcmp(buf, INDEX_MAGIC, 8) != 0 ||
      memcmp(buf + 8, k->digest, 16) != 0)
    return false;
  for (int i = 7; i >= 0; i--)
    n = n << 8 | buf[24 + i];
  if (n != size - INDEX_HEAD - 8)
    return false;
  uint64_t h = XXH3_64bits(buf, INDEX_HEAD + (size_t)n), want = 0;
  for (int i = 7; i >= 0; i--)
    want = want << 8 | buf[INDEX_HEAD + n + (uint64_t)i];
  return h == want;
}

bool asc__cache_index_get(asc__cache *c, const asc__cache_key *k,
                          asc__buf *out) {
  char name[35];
  const char *dir;
  unsigned char *buf = NULL;
  struct stat st;
  struct mem_rec *r;
  bool ok = false;
  int subfd, fd = -1;

  if (c == NULL || k == NULL || !k->final)
    return false;
  uv_mutex_lock(&c->mem_lock);
  r = mem_slot(c, k);
  if (r->val != NULL && memcmp(r->key, k->digest, 16) == 0) {
    asc__buf_put(out, r->val, r->len);
    uv_mutex_unlock(&c->mem_lock);
    atomic_fetch_add(&c->index_hits, 1);
    return !out->oom;
  }
  uv_mutex_unlock(&c->mem_lock);
  subfd = asc__cache_key_sub(c, k, ".idx", name, sizeof name, &dir);
  if (subfd < 0)
    return false;
  fd = openat(subfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  close(subfd);
  if (fd < 0)
    return false;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
      st.st_size < INDEX_HEAD + 8 ||
      (uint64_t)st.st_size > INDEX_HEAD + 8 + ASC_CACHE_INDEX_MAX)
    goto out;
  buf = asc__malloc((size_t)st.st_size);
  if (buf == NULL || !asc__cache_read_all(fd, buf, (size_t)st.st_size, 0) ||
      !record_check(buf, (size_t)st.st_size, k))
    goto out;
  ok = true;
  atomic_fetch_add(&c->index_hits, 1);
  futimens(fd, NULL); /* recently used: evicted last */
  asc__buf_put(out, buf + INDEX_HEAD, (size_t)st.st_size - INDEX_HEAD - 8);
  mem_put(c, k, buf + INDEX_HEAD, (size_t)st.st_size - INDEX_HEAD - 8);
out:
  asc__free(buf);
  close(fd);
  return ok && !out->oom;
}

void asc__cache_index_put(asc__cache *c, const asc__cache_key *k,
                          const void *v, size_t n) {
  char sub2[3], name[35], tmp[48];
  unsigned char head[INDEX_HEAD], tail[8];
  XXH3_state_t h;
  uint64_t sum;
  int dfd, subfd, fd = -1;
  bool ok;

  if (c == NULL || k == NULL || !k->final || n > ASC_CACHE_INDEX_MAX)
    return;
  mem_put(c, k, v, n);
  if (asc__cache_current_dir(c, &dfd) == NULL)
    return;
  memcpy(sub2, k->hex, 2);
  sub2[2] = '\0';
  snprintf(name, sizeof name, "%s.idx", k->hex + 2);
  snprintf(tmp, sizeof tmp, ".tmp-%s-XXXXXX", k->hex + 2);
  /* Best effort: a record that cannot be written costs the next process
   * the front end, nothing else, so trouble here moves nothing to the
   * fallback directory. */
  subfd = asc__cache_open_sub(dfd, sub2, NULL, false);
  if (subfd < 0 && (asc__cache_io_fail("mkdir", name) != 0 ||
                    (subfd = asc__cache_open_sub(dfd, sub2, NULL, true)) < 0))
    return;
  if (asc__cache_io_fail("create", name) != 0 ||
      asc__mkstemp_at(subfd, tmp, 0600, &fd) != 0) {
    close(subfd);
    return;
  }
  memcpy(head, INDEX_MAGIC, 8);
  memcpy(head + 8, k->digest, 16);
  asc__cache_put_le64(head + 24, (uint64_t)n);
  XXH3_64bits_reset(&h);
  XXH3_64bits_update(&h, head, sizeof head);
  XXH3_64bits_update(&h, v, n);
  sum = XXH3_64bits_digest(&h);
  asc__cache_put_le64(tail, sum);
  ok = asc__cache_io_fail("write", name) == 0 &&
       asc__cache_write_all(fd, head, sizeof head, 0) &&
       asc__cache_write_all(fd, v, n, INDEX_HEAD) &&
       asc__cache_write_all(fd, tail, sizeof tail, (off_t)(INDEX_HEAD + n));
  close(fd);
  if (!ok || asc__cache_io_fail("rename", name) != 0 ||
      renameat(subfd, tmp, subfd, name) != 0)
    unlinkat(subfd, tmp, 0);
  close(subfd);
}
