/*
 * The one host allocation seam.  Every libasc allocation asks
 * asc__alloc_should_fail() first, so tests can inject exhaustion anywhere.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

/* ------------------------------------------------------------ asc__buf */

void asc__buf_init(asc__buf *b) { memset(b, 0, sizeof *b); }

void asc__buf_free(asc__buf *b) {
  asc__free(b->data);
  asc__buf_init(b);
}

static bool buf_reserve(asc__buf *b, size_t extra) {
  size_t need, cap;
  char *d;

  if (b->oom)
    return false;
  if (extra > SIZE_MAX - b->len - 1) {
    b->oom = true;
    return false;
  }
  need = b->len + extra + 1;
  if (need <= b->cap)
    return true;
  cap = b->cap ? b->cap : 256;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  d = asc__realloc(b->data, cap);
  if (d == NULL) {
    b->oom = true;
    return false;
  }
  b->data = d;
  b->cap = cap;
  return true;
}

void asc__buf_put(asc__buf *b, const void *p, size_t n) {
  if (!buf_reserve(b, n))
    return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void asc__buf_puts(asc__buf *b, const char *s) { asc__buf_put(b, s, strlen(s)); }

void asc__buf_printf(asc__buf *b, const char *fmt, ...) {
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !buf_reserve(b, (size_t)n))
    return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

const char *asc__buf_str(asc__buf *b) { return b->data ? b->data : ""; }
