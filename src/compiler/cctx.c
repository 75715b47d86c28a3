/*
 * Compilation context: arena, diagnostics, the catch point.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/cctx.h"

struct asc__arena_chunk {
  asc__arena_chunk *next;
  size_t used;
  size_t size;
  _Alignas(16) unsigned char data[];
};

#define CHUNK_MIN (64u * 1024u)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void asc__cctx_init(asc__cctx *c, const char *filename, const char *text,
                    size_t len, int32_t first_line) {
  memset(c, 0, sizeof *c);
  c->filename = filename ? filename : "<string>";
  c->text = text ? text : "";
  c->len = text ? len : 0;
  c->first_line = first_line > 0 ? first_line : 1;
  c->max_errors = 20;
  asc__buf_init(&c->diag);
  asc__compile_opts_init(&c->opts);
  c->budget_ms = c->opts.timeout_ms;
  c->deadline_ns = now_ns() + c->budget_ms * 1000000u;
  c->mem_budget = c->opts.memory_bytes;
  c->phase = "the front end";
}

void asc__cctx_set_opts(asc__cctx *c, const asc__compile_opts *o) {
  c->opts = *o;
  /* at most a day, so the deadline cannot overflow */
  c->budget_ms = o->timeout_ms < 86400000u ? o->timeout_ms : 86400000u;
  c->deadline_ns = now_ns() + c->budget_ms * 1000000u;
  c->mem_budget = o->memory_bytes;
}

void asc__cctx_budget(asc__cctx *c, const char *where) {
  if (now_ns() <= c->deadline_ns)
    return;
  asc__buf_printf(&c->diag,
                  "%s: error: compiling took longer than its budget of %llu "
                  "ms (ASC_COMPILE_TIMEOUT_MS); stopped in %s\n",
                  c->filename, (unsigned long long)c->budget_ms, where);
  c->nerrors++;
  asc__cctx_throw(c, c->diag.oom ? ASC_FAIL_OOM : ASC_FAIL_ERRORS);
}

_Noreturn static void memory_spent(asc__cctx *c) {
  asc__buf_printf(&c->diag,
                  "%s: error: compiling needed more than its memory budget "
                  "of %llu MiB (ASC_COMPILE_MEMORY); stopped in %s\n",
                  c->filename, (unsigned long long)(c->mem_budget >> 20),
                  c->phase);
  c->nerrors++;
  asc__cctx_throw(c, c->diag.oom ? ASC_FAIL_OOM : ASC_FAIL_ERRORS);
}

static void free_chunks(asc__arena_chunk *k) {
  while (k != NULL) {
    asc__arena_chunk *next = k->next;
    asc__free(k);
    k = next;
  }
}

void asc__cctx_free(asc__cctx *c) {
  free_chunks(c->chunks);
  free_chunks(c->scratch);
  c->chunks = NULL;
  c->scratch = NULL;
  c->mem_used = 0;
  asc__buf_free(&c->diag);
}

_Noreturn void asc__cctx_throw(asc__cctx *c, asc__fail why) {
  if (c->fail == ASC_FAIL_NONE || why == ASC_FAIL_OOM)
    c->fail = why;
  longjmp(*c->catch_point, 1);
}

/* size bytes from the chunk list *list, a new chunk in front when the
 * first one lacks room; every chunk counts against the memory budget.
 * The clock is not looked at here: an allocation unwinds only when memory
 * runs out, so code that holds a heap buffer across arena allocations
 * leaks it only then (the time budget is checked where passes loop,
 * asc__cctx_tick). */
static void *chunk_alloc(asc__cctx *c, asc__arena_chunk **list, size_t size) {
  asc__arena_chunk *k = *list;
  void *p;

  if (size > SIZE_MAX - 15 - sizeof *k)
    memory_spent(c);
  size = (size + 15) & ~(size_t)15;
  if (size == 0)
    size = 16;
  if (k == NULL || k->size - k->used < size) {
    size_t want = size > CHUNK_MIN ? size : CHUNK_MIN;
    if (c->mem_used + want > c->mem_budget)
      memory_spent(c);
    k = asc__malloc(sizeof *k + want);
    if (k == NULL)
      asc__cctx_throw(c, ASC_FAIL_OOM);
    c->mem_used += want;
    k->size = want;
    k->used = 0;
    k->next = *list;
    *list = k;
  }
  p = k->data + k->used;
  k->used += size;
  memset(p, 0, size);
  return p;
}

void *asc__arena_alloc(asc__cctx *c, size_t size) {
  return chunk_alloc(c, &c->chunks, size);
}

void *asc__scratch_alloc(asc__cctx *c, size_t size) {
  return chunk_alloc(c, &c->scratch, size);
}

asc__scratch_mark asc__scratch_get(const asc__cctx *c) {
  asc__scratch_mark m;
  m.chunk = c->scratch;
  m.used = c->scratch != NULL ? c->scratch->used : 0;
  return m;
}

void asc__scratch_release(asc__cctx *c, asc__scratch_mark m) {
  while (c->scratch != NULL && c->scratch != m.chunk) {
    asc__arena_chunk *next = c->scratch->next;
    c->mem_used -= c->scratch->size;
    asc__free(c->scratch);
    c->scratch = next;
  }
  if (c->scratch != NULL)
    c->scratch->used = m.used;
}

void *asc__arena_grow(asc__cctx *c, void *v, int32_t n, int32_t *cap,
                      size_t elem, int32_t first) {
  void *grown;

  if (n < *cap)
    return v;
  *cap = *cap ? *cap * 2 : first;
  grown = asc__arena_alloc(c, elem * (size_t)*cap);
  if (n > 0)
    memcpy(grown, v, elem * (size_t)n);
  return grown;
}

char *asc__arena_strndup(asc__cctx *c, const char *s, size_t n) {
  char *d = asc__arena_alloc(c, n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *asc__arena_printf(asc__cctx *c, const char *fmt, ...) {
  va_list ap;
  int n;
  char *d;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    asc__internal_error(c, __FILE__, __LINE__, "vsnprintf failed");
  d = asc__arena_alloc(c, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(d, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return d;
}

const char *asc__source_line(const asc__cctx *c, int32_t line, size_t *len) {
  const char *p = c->text, *end = c->text + c->len;
  int32_t n = line - c->first_line;

  if (n < 0)
    return NULL;
  while (n > 0) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (nl == NULL)
      return NULL;
    p = nl + 1;
    n--;
  }
  if (p > end)
    return NULL;
  {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (l > 0 && p[l - 1] == '\r')
      l--;
    *len = l;
  }
  return p;
}

void asc__lineidx_init(asc__cctx *c, asc__lineidx *x, const char *text,
                       size_t len, int32_t first_line) {
  const char *p = text, *end = text + len, *nl;
  int32_t n = 1;
  for (p = text; (nl = memchr(p, '\n', (size_t)(end - p))) != NULL; p = nl + 1)
    n++;
  x->text = text;
  x->len = len;
  x->first_line = first_line;
  x->n = n;
  x->starts = asc__arena_alloc(c, sizeof *x->starts * ((size_t)n + 1));
  x->starts[0] = text;
  n = 1;
  for (p = text; (nl = memchr(p, '\n', (size_t)(end - p))) != NULL; p = nl + 1)
    x->starts[n++] = nl + 1;
  x->starts[n] = end + 1;
}

const char *asc__lineidx_get(const asc__lineidx *x, int32_t line, size_t *len) {
  int64_t n = (int64_t)line - x->first_line;
  size_t l;
  if (x->starts == NULL || n < 0 || n >= x->n)
    return NULL;
  l = (size_t)(x->starts[n + 1] - x->starts[n]) - 1;
  if (l > 0 && x->starts[n][l - 1] == '\r')
    l--;
  *len = l;
  return x->starts[n];
}

static void vdiag(asc__cctx *c, const char *kind, asc__loc loc,
                  const char *fmt, va_list ap) {
  char msg[1024];
  size_t len;
  const char *src;

  vsnprintf(msg, sizeof msg, fmt, ap);
  asc__buf_printf(&c->diag, "%s:%d:%d: %s: %s\n", c->filename, (int)loc.line,
                  (int)loc.col, kind, msg);
  src = asc__source_line(c, loc.line, &len);
  if (src != NULL) {
    asc__buf_puts(&c->diag, "    ");
    /* The source line is printed as is, tabs included, so the caret line
     * copies its tabs to stay aligned. */
    asc__buf_put(&c->diag, src, len);
    asc__buf_puts(&c->diag, "\n    ");
    for (int32_t i = 1; i < loc.col && (size_t)(i - 1) < len; i++)
      asc__buf_put(&c->diag, src[i - 1] == '\t' ? "\t" : " ", 1);
    asc__buf_puts(&c->diag, "^\n");
  }
  if (c->diag.oom)
    asc__cctx_throw(c, ASC_FAIL_OOM);
}

void asc__diag_error(asc__cctx *c, asc__loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag(c, "error", loc, fmt, ap);
  va_end(ap);
  if (++c->nerrors >= c->max_errors)
    asc__cctx_throw(c, ASC_FAIL_ERRORS);
}

void asc__diag_warning(asc__cctx *c, asc__loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag(c, "warning", loc, fmt, ap);
  va_end(ap);
  c->nwarnings++;
}

asc__diag_mark asc__diag_mark_get(const asc__cctx *c) {
  asc__diag_mark m;
  m.len = c->diag.len;
  m.nerrors = c->nerrors;
  m.nwarnings = c->nwarnings;
  return m;
}

void asc__diag_rollback(asc__cctx *c, asc__diag_mark m) {
  if (m.len <= c->diag.len) {
    c->diag.len = m.len;
    if (c->diag.data != NULL)
      c->diag.data[m.len] = '\0';
  }
  c->nerrors = m.nerrors;
  c->nwarnings = m.nwarnings;
}

void asc__diag_note(asc__cctx *c, asc__loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag(c, "note", loc, fmt, ap);
  va_end(ap);
}

_Noreturn void asc__diag_fatal(asc__cctx *c, asc__loc loc, const char *fmt,
                               ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag(c, "error", loc, fmt, ap);
  va_end(ap);
  c->nerrors++;
  asc__cctx_throw(c, ASC_FAIL_ERRORS);
}

_Noreturn void asc__internal_error(asc__cctx *c, const char *file, int line,
                                   const char *what) {
  asc__buf_printf(&c->diag, "%s: internal compiler error: %s (%s:%d)\n",
                  c->filename, what, file, line);
  asc__cctx_throw(c, ASC_FAIL_INTERNAL);
}
