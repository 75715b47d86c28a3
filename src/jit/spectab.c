/*
 * The specialisation table: chained hashing on XXH3-64 of the key bytes,
 * entries reference-counted so that a waiter can read the result of a
 * build whose entry has already been unlinked (a forgotten failure).
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

static void unlink_spec(asc__spectab *t, asc__spec *s) {
  asc__spec **p = &t->buckets[s->hash & (t->nbuckets - 1)];
  while (*p != s)
    p = &(*p)->next;
  *p = s->next;
  s->linked = false;
  t->count--;
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

/* The answer of a finished entry; t->lock held. */
static ascError_t answer(asc__spec *s, void **value) {
  if (s->state == SPEC_READY) {
    *value = s->value;
    return ascSuccess;
  }
  if (s->msg != NULL)
    asc__error_text(s->err, s->msg);
  else
    asc__error(s->err, "%s", ascGetErrorString(s->err));
  return s->err;
}

ascError_t asc__spectab_lookup(asc__spectab *t, int32_t kernel,
                               const void *key, size_t len, void **value,
                               asc__spec **claim) {
  uint64_t h = spec_hash(kernel, key, len);
  asc__spec *s;
  ascError_t err;

  *value = NULL;
  *claim = NULL;
  uv_mutex_lock(&t->lock);
  for (s = t->buckets[h & (t->nbuckets - 1)]; s != NULL; s = s->next)
    if (s->hash == h && s->kernel == kernel && s->len == len &&
        memcmp(s->key, key, len) == 0)
      break;
  if (s == NULL) {
    s = asc__malloc(sizeof *s + len);
    if (s == NULL) {
      uv_mutex_unlock(&t->lock);
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
    uv_mutex_unlock(&t->lock);
    *claim = s;
    return ascSuccess;
  }
  if (s->state == SPEC_BUILDING) {
    s->refs++;
    while (s->state == SPEC_BUILDING)
      uv_cond_wait(&t->done, &t->lock);
    err = answer(s, value);
    if (--s->refs == 0 && !s->linked)
      spec_free(s);
  } else {
    err = answer(s, value);
  }
  uv_mutex_unlock(&t->lock);
  return err;
}

void asc__spectab_publish(asc__spectab *t, asc__spec *s, ascError_t err,
                          void *value) {
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
  uv_mutex_lock(&t->lock);
  if (err == ascSuccess) {
    s->state = SPEC_READY;
    s->value = value;
  } else {
    s->state = SPEC_FAILED;
    s->err = err;
    s->msg = msg;
    msg = NULL;
    if (err != ascErrorCompile && err != ascErrorInvalidValue)
      unlink_spec(t, s);
  }
  if (--s->refs == 0 && !s->linked)
    spec_free(s);
  uv_cond_broadcast(&t->done);
  uv_mutex_unlock(&t->lock);
  asc__free(msg);
}

size_t asc__spectab_count(asc__spectab *t) {
  size_t n;
  uv_mutex_lock(&t->lock);
  n = t->count;
  uv_mutex_unlock(&t->lock);
  return n;
}
