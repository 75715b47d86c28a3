/*
 * The specialisation table: chained hashing on XXH3-64 of the key bytes,
 * entries reference-counted so that a waiter can read the result of a
 * build whose entry has already been unlinked (a forgotten failure).
 * Ready entries are also on a list in order of last use, oldest first,
 * from which claims beyond the limit evict.
 */
#include "jit/spectab.h"

#include <string.h>

#include <xxhash.h>

typedef enum spec_state { SPEC_BUILDING, SPEC_READY, SPEC_FAILED } spec_state;

struct asc__spec {
  asc__spec *next;
  uint64_t hash;
  int32_t kernel;
  spec_state state;
  bool linked;            /* still in a bucket */
  int refs;               /* waiters + the claim, while building */
  /* Callers using the value now; grows only under the table lock. */
  atomic_int pins;
  asc__spec *lru_prev, *lru_next;  /* ready entries, oldest first */
  void *value;
  ascError_t err;
  char *msg;              /* failure message */
  size_t len;
  unsigned char key[];    /* len bytes */
};

static uint64_t spec_hash(int32_t kernel, const void *key, size_t len) {
  return XXH3_64bits_withSeed(key, len, (uint64_t)(uint32_t)kernel);
}

ascError_t asc__spectab_init(asc__spectab *t, void (*drop)(void *value)) {
  memset(t, 0, sizeof *t);
  t->max_loaded = SIZE_MAX;
  t->nbuckets = 16;
  t->buckets = asc__calloc(t->nbuckets, sizeof *t->buckets);
  t->drop = drop;
  if (t->buckets == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  if (uv_mutex_init(&t->lock) != 0) {
    asc__free(t->buckets);
    return asc__error(ascErrorInternal, "cannot create a mutex");
  }
  if (uv_cond_init(&t->done) != 0) {
    uv_mutex_destroy(&t->lock);
    asc__free(t->buckets);
    return asc__error(ascErrorInternal, "cannot create a condition");
  }
  return ascSuccess;
}

static void spec_free(asc__spec *s) {
  asc__free(s->msg);
  asc__free(s);
}

void asc__spectab_destroy(asc__spectab *t) {
  size_t i;

  if (t->buckets == NULL)
    return;
  for (i = 0; i < t->nbuckets; i++) {
    asc__spec *s = t->buckets[i], *n;
    for (; s != NULL; s = n) {
      n = s->next;
      if (s->state == SPEC_READY && t->drop != NULL)
        t->drop(s->value);
      spec_free(s);
    }
  }
  asc__free(t->buckets);
  t->buckets = NULL;
  uv_cond_destroy(&t->done);
  uv_mutex_destroy(&t->lock);
}

/* The lists of entries (ready ones in order of use, remembered failures
 * in order of failure) link through lru_prev/lru_next: an entry is on one
 * at most. */
static void list_remove(asc__spec **head, asc__spec **tail, asc__spec *s) {
  if (s->lru_prev != NULL)
    s->lru_prev->lru_next = s->lru_next;
  else
    *head = s->lru_next;
  if (s->lru_next != NULL)
    s->lru_next->lru_prev = s->lru_prev;
  else
    *tail = s->lru_prev;
  s->lru_prev = s->lru_next = NULL;
}

static void list_append(asc__spec **head, asc__spec **tail, asc__spec *s) {
  s->lru_prev = *tail;
  s->lru_next = NULL;
  if (*tail != NULL)
    (*tail)->lru_next = s;
  else
    *head = s;
  *tail = s;
}

static void lru_remove(asc__spectab *t, asc__spec *s) {
  list_remove(&t->lru_head, &t->lru_tail, s);
}

static void lru_append(asc__spectab *t, asc__spec *s) {
  list_append(&t->lru_head, &t->lru_tail, s);
}

static void unlink_spec(asc__spectab *t, asc__spec *s) {
  asc__spec **p = &t->buckets[s->hash & (t->nbuckets - 1)];
  while (*p != s)
    p = &(*p)->next;
  *p = s->next;
  s->linked = false;
  t->count--;
  /* an unlinked entry may be freed: the memo forgets it */
  for (int i = 0; i < ASC__SPECTAB_MEMO; i++)
    if (t->memo[i].spec == s)
      t->memo[i].spec = NULL;
}

/* Doubles the bucket array when the load passes 1; on allocation failure
 * the table just stays denser. */
static void grow(asc__spectab *t) {
  size_t n = t->nbuckets * 2, i;
  asc__spec **b;

  if (t->count < t->nbuckets || n < t->nbuckets)
    return;
  b = asc__calloc(n, sizeof *b);
  if (b == NULL)
    return;
  for (i = 0; i < t->nbuckets; i++) {
    asc__spec *s = t->buckets[i], *next;
    for (; s != NULL; s = next) {
      next = s->next;
      s->next = b[s->hash & (n - 1)];
      b[s->hash & (n - 1)] = s;
    }
  }
  asc__free(t->buckets);
  t->buckets = b;
  t->nbuckets = n;
}

/* The answer of a finished entry; t->lock held.  A ready entry is pinned
 * for the caller (if pin) and becomes the most recently used. */
static ascError_t answer(asc__spectab *t, asc__spec *s, void **value,
                         asc__spec **pin) {
  if (s->state == SPEC_READY) {
    *value = s->value;
    if (pin != NULL) {
      atomic_fetch_add(&s->pins, 1);
      *pin = s;
    }
    if (s->linked && t->lru_tail != s) {
      lru_remove(t, s);
      lru_append(t, s);
    }
    return ascSuccess;
  }
  if (s->msg != NULL)
    asc__error_text(s->err, s->msg);
  else
    asc__error(s->err, "%s", ascGetErrorString(s->err));
  return s->err;
}

/* t->lock held: unlinks least recently used entries that nobody uses
 * (no pin, no waiter, not busy) until a new entry fits under the limit,
 * and returns them on a list (through next) for evicted_drop once the
 * lock is dropped.  False if everything loaded is in use. */
static bool make_room(asc__spectab *t, asc__spec **evicted) {
  asc__spec *s = t->lru_head, *next;

  for (; t->loaded >= t->max_loaded && s != NULL; s = next) {
    next = s->lru_next;
    if (atomic_load(&s->pins) != 0 || s->refs != 0 ||
        (t->busy != NULL && t->busy(s->value)))
      continue;
    lru_remove(t, s);
    unlink_spec(t, s);
    t->loaded--;
    t->evictions++;
    s->next = *evicted;
    *evicted = s;
  }
  return t->loaded < t->max_loaded;
}

static void evicted_drop(asc__spectab *t, asc__spec *s) {
  while (s != NULL) {
    asc__spec *next = s->next;
    if (t->drop != NULL)
      t->drop(s->value);
    spec_free(s);
    s = next;
  }
}

ascError_t asc__spectab_lookup(asc__spectab *t, int32_t kernel,
                               const void *key, size_t len, void **value,
                               asc__spec **claim, asc__spec **pin) {
  uint64_t h = spec_hash(kernel, key, len);
  asc__spec *s, *evicted = NULL;
  ascError_t err;

  *value = NULL;
  *claim = NULL;
  if (pin != NULL)
    *pin = NULL;
  uv_mutex_lock(&t->lock);
  for (s = t->buckets[h & (t->nbuckets - 1)]; s != NULL; s = s->next)
    if (s->hash == h && s->kernel == kernel && s->len == len &&
        memcmp(s->key, key, len) == 0)
      break;
  if (s == NULL) {
    if (!make_room(t, &evicted)) {
      size_t n = t->loaded;
      uv_mutex_unlock(&t->lock);
      evicted_drop(t, evicted);
      return asc__error(ascErrorLaunchFailure,
                        "all %zu loaded specialisations of this module are "
                        "in use by queued or running launches, the limit "
                        "(ASC_MAX_LOADED_SPECIALIZATIONS); synchronise "
                        "first or raise the limit",
                        n);
    }
    s = asc__malloc(sizeof *s + len);
    if (s == NULL) {
      uv_mutex_unlock(&t->lock);
      evicted_drop(t, evicted);
      return asc__error(ascErrorOutOfMemory, "out of memory");
    }
    memset(s, 0, sizeof *s);
    s->hash = h;
    s->kernel = kernel;
    s->state = SPEC_BUILDING;
    s->refs = 1;
    s->len = len;
    memcpy(s->key, key, len);
    grow(t);
    s->next = t->buckets[h & (t->nbuckets - 1)];
    t->buckets[h & (t->nbuckets - 1)] = s;
    s->linked = true;
    t->count++;
    t->loaded++;              /* reserved while building */
    uv_mutex_unlock(&t->lock);
    evicted_drop(t, evicted);
    *claim = s;
    return ascSuccess;
  }
  if (s->state == SPEC_BUILDING) {
    s->refs++;
    while (s->state == SPEC_BUILDING)
      uv_cond_wait(&t->done, &t->lock);
    err = answer(t, s, value, pin);
    if (--s->refs == 0 && !s->linked)
      spec_free(s);
  } else {
    err = answer(t, s, value, pin);
  }
  uv_mutex_unlock(&t->lock);
  return err;
}

static asc__spectab_memo *memo_slot(asc__spectab *t, int32_t kernel) {
  return &t->memo[(uint32_t)kernel % ASC__SPECTAB_MEMO];
}

bool asc__spectab_memo_get(asc__spectab *t, int32_t kernel, const void *key,
                           size_t len, void **value, asc__spec **pin) {
  asc__spectab_memo *m = memo_slot(t, kernel);
  bool hit;

  uv_mutex_lock(&t->lock);
  hit = m->spec != NULL && m->kernel == kernel && m->len == len &&
        memcmp(m->key, key, len) == 0 && m->spec->state == SPEC_READY;
  if (hit)
    (void)answer(t, m->spec, value, pin);
  uv_mutex_unlock(&t->lock);
  return hit;
}

void asc__spectab_memo_put(asc__spectab *t, int32_t kernel, const void *key,
                           size_t len, asc__spec *pin) {
  asc__spectab_memo *m = memo_slot(t, kernel);

  if (pin == NULL || len > sizeof m->key)
    return;
  uv_mutex_lock(&t->lock);
  /* pinned, so not evicted since the lookup; still linked unless a
   * failure replaced it (never for a ready entry) */
  if (pin->linked && pin->state == SPEC_READY) {
    m->spec = pin;
    m->kernel = kernel;
    m->len = len;
    memcpy(m->key, key, len);
  }
  uv_mutex_unlock(&t->lock);
}

void asc__spectab_publish(asc__spectab *t, asc__spec *s, ascError_t err,
                          void *value, asc__spec **pin) {
  /* Copy the message before taking the lock: libc allocation, as the
   * error model does, so recording an out-of-memory failure works. */
  const char *m = err != ascSuccess ? ascGetLastErrorMessage() : NULL;
  char *msg = NULL;

  if (m != NULL && *m != '\0') {
    size_t n = strlen(m) + 1;
    msg = asc__malloc(n);
    if (msg != NULL)
      memcpy(msg, m, n);
  }
  if (pin != NULL)
    *pin = NULL;
  uv_mutex_lock(&t->lock);
  if (err == ascSuccess) {
    s->state = SPEC_READY;
    s->value = value;
    if (pin != NULL) {
      atomic_fetch_add(&s->pins, 1);
      *pin = s;
    }
    lru_append(t, s);
  } else {
    t->loaded--;
    s->state = SPEC_FAILED;
    s->err = err;
    s->msg = msg;
    msg = NULL;
    if (err != ascErrorCompile && err != ascErrorInvalidValue) {
      unlink_spec(t, s);
    } else {
      list_append(&t->fail_head, &t->fail_tail, s);
      if (++t->failed > ASC__SPECTAB_MAX_FAILED) {
        /* Forget the oldest failure; a waiter still reading it frees it. */
        asc__spec *old = t->fail_head;
        list_remove(&t->fail_head, &t->fail_tail, old);
        t->failed--;
        unlink_spec(t, old);
        if (old->refs == 0)
          spec_free(old);
      }
    }
  }
  if (--s->refs == 0 && !s->linked)
    spec_free(s);
  uv_cond_broadcast(&t->done);
  uv_mutex_unlock(&t->lock);
  asc__free(msg);
}

void asc__spectab_unpin(asc__spec *pin) {
  if (pin != NULL)
    atomic_fetch_sub(&pin->pins, 1);
}

void asc__spectab_set_limit(asc__spectab *t, size_t max_loaded,
                            bool (*busy)(void *value)) {
  uv_mutex_lock(&t->lock);
  t->max_loaded = max_loaded > 0 ? max_loaded : 1;
  t->busy = busy;
  uv_mutex_unlock(&t->lock);
}

size_t asc__spectab_loaded(asc__spectab *t, uint64_t *evictions) {
  size_t n;
  uv_mutex_lock(&t->lock);
  n = t->loaded;
  if (evictions != NULL)
    *evictions = t->evictions;
  uv_mutex_unlock(&t->lock);
  return n;
}

size_t asc__spectab_count(asc__spectab *t) {
  size_t n;
  uv_mutex_lock(&t->lock);
  n = t->count;
  uv_mutex_unlock(&t->lock);
  return n;
}
