/*
 * The one host allocation seam.  Every libasc allocation asks
 * asc__alloc_should_fail() first, so tests can inject exhaustion anywhere.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

typedef struct fail_hook {
  asc__alloc_fail_fn fn;
  void *ud;
} fail_hook;

/* Swapped as one pointer so a reader never sees fn from one hook and ud
 * from another. */
static _Atomic(fail_hook *) hook_current;
static fail_hook hook_slots[2];
static atomic_int hook_slot;

void asc__set_alloc_fail_hook(asc__alloc_fail_fn fn, void *ud) {
  fail_hook *h;

  if (fn == NULL) {
    atomic_store(&hook_current, NULL);
    return;
  }
  h = &hook_slots[atomic_fetch_add(&hook_slot, 1) & 1];
  h->fn = fn;
  h->ud = ud;
  atomic_store(&hook_current, h);
}

bool asc__alloc_should_fail(size_t size) {
  fail_hook *h = atomic_load_explicit(&hook_current, memory_order_acquire);
  return h != NULL && h->fn(size, h->ud);
}

void *asc__malloc(size_t size) {
  if (asc__alloc_should_fail(size))
    return NULL;
  return malloc(size ? size : 1);
}

void *asc__calloc(size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size)
    return NULL;
  if (asc__alloc_should_fail(n * size))
    return NULL;
  return calloc(n ? n : 1, size ? size : 1);
}

void *asc__realloc(void *p, size_t size) {
  if (asc__alloc_should_fail(size))
    return NULL;
  return realloc(p, size ? size : 1);
}

void asc__free(void *p) { free(p); }

char *asc__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = asc__malloc(n);
  if (d != NULL)
    memcpy(d, s, n);
  return d;
}
