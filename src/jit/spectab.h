/*
 * A module's specialisations: (kernel index, signature bytes) -> the loaded
 * kernel, found by one hash lookup at launch.  The first thread to ask for
 * a new key claims it and builds without holding the table lock; threads
 * asking for the same key meanwhile wait for that build and share its
 * result, so a signature is compiled once per process.
 *
 *   void *v; asc__spec *claim;
 *   err = asc__spectab_lookup(t, kernel, key, len, &v, &claim);
 *   if (err == ascSuccess && claim != NULL) {
 *     err = build(..., &v);                  // no lock held
 *     asc__spectab_publish(t, claim, err, v); // wakes waiters
 *   }
 *
 * A failed build whose error is ascErrorCompile or ascErrorInvalidValue
 * (the input cannot compile, retrying cannot help) is remembered: later
 * lookups return the same code and message at once.  Other failures (out of
 * memory, timeout, cache trouble) are returned to the builder and its
 * waiters and forgotten, so a later launch tries again.
 *
 * Bounded: at most max_loaded values are held (ready, or reserved by a
 * build).  A claim beyond it evicts the least recently used ready entries
 * that no caller has pinned and that busy() says no launch uses; their
 * values are dropped and a later lookup builds them again (from the disk
 * cache).  If every entry is in use the lookup fails with
 * ascErrorLaunchFailure.  A caller that keeps using a value after the
 * lookup (a launch, until it is queued and counted by busy) asks for a
 * pin and calls asc__spectab_unpin when done.
 */
#ifndef ASC_SPECTAB_H
#define ASC_SPECTAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/base.h"

typedef struct asc__spec asc__spec;

/* Failures remembered per table: launches with ever new failing
 * signatures must not grow it without bound. */
#define ASC__SPECTAB_MAX_FAILED 64

/* The memo: per kernel (slot kernel % ASC__SPECTAB_MEMO), the ready entry
 * its last slow lookup found, under the caller's own key of at most
 * ASC__SPECTAB_MEMO_KEY bytes (cheaper to make than the table's key). */
#define ASC__SPECTAB_MEMO 4
#define ASC__SPECTAB_MEMO_KEY 544

typedef struct asc__spectab_memo {
  asc__spec *spec;       /* NULL: empty; cleared when spec is unlinked */
  int32_t kernel;
  size_t len;
  unsigned char key[ASC__SPECTAB_MEMO_KEY];
} asc__spectab_memo;

typedef struct asc__spectab {
  /* lock guards every field and every entry; it is a leaf lock: nothing is
   * called with it held but memory allocation. */
  uv_mutex_t lock;
  uv_cond_t done;        /* broadcast when any build finishes */
  asc__spec **buckets;
  size_t nbuckets;       /* power of two */
  size_t count;
  void (*drop)(void *value); /* frees a ready value at destroy/eviction */
  size_t loaded;         /* ready entries + builds in progress */
  size_t max_loaded;     /* SIZE_MAX: no limit */
  uint64_t evictions;
  asc__spec *lru_head, *lru_tail;
  /* Remembered failures (a compile error answers the next identical
   * launch at once), oldest first, at most ASC__SPECTAB_MAX_FAILED. */
  asc__spec *fail_head, *fail_tail;
  size_t failed;
  /* Whether a value is used by queued launches; called with the lock
   * held, so it may only read atomics. */
  bool (*busy)(void *value);
  asc__spectab_memo memo[ASC__SPECTAB_MEMO];
} asc__spectab;

ascError_t asc__spectab_init(asc__spectab *t, void (*drop)(void *value));
/* Drops every ready value.  No lookup may be running or waiting. */
void asc__spectab_destroy(asc__spectab *t);

/* Finds (kernel, key[0..len)).  Ready: ascSuccess, *value set, *claim
 * NULL, and with pin != NULL the entry pinned in *pin.  New: ascSuccess,
 * *value NULL, *claim set; the caller must build and call
 * asc__spectab_publish exactly once.  Being built by another thread:
 * waits, then answers as for ready or failed.  Failed: that error
 * (message restored as this thread's last error). */
ascError_t asc__spectab_lookup(asc__spectab *t, int32_t kernel,
                               const void *key, size_t len, void **value,
                               asc__spec **claim, asc__spec **pin);

/* The memo's answer for (kernel, key[0..len)): true, with *value set and
 * the entry pinned in *pin, when the kernel's memo holds that key and its
 * entry is still ready; false (nothing done) otherwise, and the caller
 * looks up as usual. */
bool asc__spectab_memo_get(asc__spectab *t, int32_t kernel, const void *key,
                           size_t len, void **value, asc__spec **pin);
/* Remembers that (kernel, key[0..len)) answered with pinned entry pin;
 * nothing for a key longer than ASC__SPECTAB_MEMO_KEY. */
void asc__spectab_memo_put(asc__spectab *t, int32_t kernel, const void *key,
                           size_t len, asc__spec *pin);

/* Completes a claim: value on success (err == ascSuccess; pinned in *pin
 * if pin != NULL), else err with this thread's last error message. */
void asc__spectab_publish(asc__spectab *t, asc__spec *claim, ascError_t err,
                          void *value, asc__spec **pin);

/* Ends a pin (NULL: nothing).  Needs no lock. */
void asc__spectab_unpin(asc__spec *pin);

/* Bounds the loaded values to max_loaded (at least 1); busy as above
 * (NULL: values are in use only while pinned). */
void asc__spectab_set_limit(asc__spectab *t, size_t max_loaded,
                            bool (*busy)(void *value));

/* Values held now (ready or being built); *evictions, if not NULL, the
 * number evicted so far. */
size_t asc__spectab_loaded(asc__spectab *t, uint64_t *evictions);

/* Entries in the table: ready, being built, or remembered as failed. */
size_t asc__spectab_count(asc__spectab *t);

#endif /* ASC_SPECTAB_H */
