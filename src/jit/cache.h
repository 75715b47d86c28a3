/*
 * The on-disk kernel cache (DESIGN.md section 7, docs/cache.md).
 *
 *   asc__cache_key k;
 *   asc__cache_key_init(&k);
 *   asc__cache_key_add_str(&k, "cc", asc__cc_identity(cc));
 *   ...                                      // every input of the build
 *   asc__cache_key_final(&k);
 *   err = asc__cache_get_or_build_fd(cache, &k, build, ud, &so_path, &fd);
 *   ... asc__jit_dlopen_fd(&lib, fd, so_path) ...; close(fd);
 *   asc__free(so_path);
 *
 * An entry is the compiler's shared object with a 64-byte trailer appended
 * (ELF loaders ignore bytes past the last segment), so one atomic rename
 * publishes it and dlopen loads the very file that was verified.
 */
#ifndef ASC_CACHE_H
#define ASC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "base/base.h"

/* ------------------------------------------------------------------ keys */

/* XXH3-128 over named components.  Each component is hashed as
 * (name length, name, value length, value) with fixed-width little-endian
 * lengths, so no two different lists of components hash the same bytes. */
typedef struct asc__cache_key {
  XXH3_state_t state;
  unsigned char digest[16];  /* canonical (big-endian) form, after final */
  char hex[33];              /* digest in lowercase hex, after final */
  bool final;
} asc__cache_key;

void asc__cache_key_init(asc__cache_key *k);
void asc__cache_key_add(asc__cache_key *k, const char *name,
                        const void *bytes, size_t len);
/* s may be NULL, which hashes differently from "". */
void asc__cache_key_add_str(asc__cache_key *k, const char *name,
                            const char *s);
void asc__cache_key_add_u64(asc__cache_key *k, const char *name, uint64_t v);
void asc__cache_key_final(asc__cache_key *k);
/* k as the finished key whose digest is given (one read from an index
 * record). */
void asc__cache_key_set(asc__cache_key *k, const unsigned char digest[16]);

/* ----------------------------------------------------------------- cache */

typedef struct asc__cache asc__cache;

#define ASC_CACHE_DEFAULT_MAX_BYTES ((uint64_t)1 << 30)
#define ASC_CACHE_FORMAT_VERSION 1
#define ASC_CACHE_TRAILER_SIZE 64

/* Opens the cache at dir, or, when dir is NULL, at $ASC_CACHE_DIR, else
 * $XDG_CACHE_HOME/asc, else ~/.cache/asc (created 0700).  A directory that
 * is a symbolic link, is not owned by the user, is group or world
 * writable, is read-only, or lies below a directory that another user
 * controls is not used: a warning goes to stderr once and the cache lives
 * in a private temporary directory, removed by asc__cache_close.  The size cap is
 * $ASC_CACHE_MAX_BYTES (suffixes K, M, G), default 1 GiB.  Fails only for
 * lack of memory. */
ascError_t asc__cache_open(asc__cache **out, const char *dir);
void asc__cache_close(asc__cache *c);

/* The process's cache, opened from the environment on first use and kept
 * until exit (thread-safe). */
ascError_t asc__cache_default(asc__cache **out);

/* Produces the shared object for the key being built: compiles into
 * workdir (a fresh private directory beside the entry, so the result can be
 * renamed into place) and returns the file's path in *so_path (asc__malloc;
 * it must lie in workdir).  Return ascErrorCache for a failure to write in
 * workdir (the cache then retries in its fallback directory); any other
 * error is returned to the caller as is.  Files the build leaves in workdir
 * after failing (the generated C) are kept for inspection. */
typedef ascError_t (*asc__cache_build_fn)(void *ud, const char *workdir,
                                          char **so_path);

/* The path (asc__malloc'd) of a verified entry for k, ready for dlopen:
 * found, or built once by build() under the key's cross-process lock while
 * others wanting the same key wait, then published atomically.  A corrupt
 * entry is rebuilt.  Cache-directory trouble (full disk, read-only) moves
 * the cache to its fallback directory instead of failing.  Thread-safe; no
 * lock but the key's is held while building.  When build fails its error
 * is returned and build is not retried. */
ascError_t asc__cache_get_or_build(asc__cache *c, const asc__cache_key *k,
                                   asc__cache_build_fn build, void *ud,
                                   char **so_path);

/* As asc__cache_get_or_build, and *so_fd receives the verified entry,
 * open (the caller closes it).  Load through the descriptor
 * (asc__jit_dlopen_fd): the path may be evicted, cleared or replaced by
 * another process at any moment, the open file stays what was checked. */
ascError_t asc__cache_get_or_build_fd(asc__cache *c, const asc__cache_key *k,
                                      asc__cache_build_fn build, void *ud,
                                      char **so_path, int *so_fd);

/* The verified entry for k if the cache holds one now, as
 * asc__cache_get_or_build_fd finds it, but never builds, waits or
 * removes anything: ascErrorFileNotFound (no message) when the entry is
 * missing or bad. */
ascError_t asc__cache_lookup_fd(asc__cache *c, const asc__cache_key *k,
                                char **so_path, int *so_fd);

/* The index: small records, each named by a key of its own, beside the
 * entries (docs/cache.md, "Index").  The jit keys them with what it can
 * hash before running the front end, and stores what the front end or
 * the C compiler's identity would otherwise give (an entry's key, a
 * module's kernel table).  get appends the value of k's record to out:
 * false when there is none, or it is truncated, corrupt or not this
 * user's (such a record is never trusted, and the next put replaces
 * it).  put writes it atomically (rename) and keeps a copy in memory for
 * later gets of this process; failures are ignored.  Values are at most
 * ASC_CACHE_INDEX_MAX bytes. */
#define ASC_CACHE_INDEX_MAX ((size_t)1 << 20)
bool asc__cache_index_get(asc__cache *c, const asc__cache_key *k,
                          asc__buf *out);
void asc__cache_index_put(asc__cache *c, const asc__cache_key *k,
                          const void *v, size_t n);

typedef struct asc__cache_stats {
  const char *dir;         /* directory in use (owned by the cache) */
  const char *configured;  /* directory asked for (owned by the cache) */
  bool fallback;           /* configured was unusable; dir is private */
  uint64_t entries;        /* on disk now */
  uint64_t bytes;          /* sum of entry sizes */
  uint64_t max_bytes;      /* the cap */
  uint64_t temporaries;    /* work directories and temp files (in-progress
                              builds, or kept after a failed compile) */
  uint64_t records;        /* index records on disk now (in bytes too) */
  /* counters of this cache object */
  uint64_t hits, misses, builds, corrupt, evictions, fallbacks;
  uint64_t index_hits;     /* index records found (asc__cache_index_get) */
} asc__cache_stats;

ascError_t asc__cache_get_stats(asc__cache *c, asc__cache_stats *st);

/* Removes every entry not being built right now and every stale temporary.
 * *removed (may be NULL) receives the number of entries removed. */
ascError_t asc__cache_clear(asc__cache *c, uint64_t *removed);

/* ---------------------------------------------------------- test seams */

/* Called before each write-side file operation in a cache directory
 * ("mkdir", "create", "write", "fsync", "rename", "mkdtemp") with the path;
 * a nonzero return is taken as that operation's errno.  Process-wide, like
 * asc__set_alloc_fail_hook. */
typedef int (*asc__cache_io_fail_fn)(const char *op, const char *path,
                                     void *ud);
void asc__cache_set_io_fail_hook(asc__cache_io_fail_fn fn, void *ud);

#endif /* ASC_CACHE_H */
