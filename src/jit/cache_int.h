/*
 * Shared by the files of the kernel cache (cache.c: keys, entries, the
 * directory, scans and eviction, get/build; cache_index.c: the index
 * records) and by nothing else.
 */
#ifndef ASC_CACHE_INT_H
#define ASC_CACHE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "jit/cache.h"

#define TRAILER_MAGIC "ASCKCACH"
#define STALE_TEMP_SECONDS (24 * 3600)
#define DEFAULT_LOCK_TIMEOUT_MS 180000

struct asc__cache {
  uv_mutex_t lock;
  char *configured;       /* NULL when no directory could be named */
  char *fallback_dir;     /* our mkdtemp, removed at close; or NULL */
  /* The real path of configured (what dir_open checked), or NULL. */
  char *configured_real;
  /* configured or fallback_dir, or NULL when neither is usable.  It
   * changes at most once (to fallback_dir) and both strings live until
   * close, so a reader may keep the pointer it read under the lock. */
  const char *dir;
  /* Descriptors of configured and fallback_dir (-1 when not open), and of
   * dir.  Every operation in the cache is relative to dir_fd, so the
   * directory that was checked is the one used, whatever later happens
   * to the path (docs/cache.md, threat model). */
  int configured_fd, fallback_fd, dir_fd;
  bool fallback;
  uint64_t max_bytes;
  uint64_t lock_timeout_ms;
  _Atomic uint64_t hits, misses, builds, corrupt, evictions, fallbacks;
  _Atomic uint64_t index_hits;
  /* The index records this process read or wrote, by the first byte of
   * their key (a later one takes the slot): a second lookup of a record
   * reads no file.  Guarded by mem_lock. */
  uv_mutex_t mem_lock;
  struct mem_rec {
    unsigned char key[16];
    char *val;               /* NULL: empty slot */
    size_t len;
  } mem[64];
};

int asc__cache_io_fail(const char *op, const char *path);
bool asc__cache_write_all(int fd, const void *buf, size_t n, off_t off);
bool asc__cache_read_all(int fd, void *buf, size_t n, off_t off);
void asc__cache_put_le64(unsigned char *p, uint64_t v);
int asc__cache_open_sub(int dfd, const char *sub, const char *path,
                        bool create);
int asc__cache_key_sub(asc__cache *c, const asc__cache_key *k,
                       const char *suffix, char *name, size_t n,
                       const char **dir);
const char *asc__cache_current_dir(asc__cache *c, int *fd);

#endif /* ASC_CACHE_INT_H */
