/* Growable byte buffers (base/buf.c). */
#ifndef ASC_BASE_BUF_H
#define ASC_BASE_BUF_H

#include "base/base.h"

/* Growable byte buffer used by the compiler and diagnostics.  A failed
 * allocation sets oom and turns further appends into no-ops. */
typedef struct asc__buf {
  char *data;
  size_t len;
  size_t cap;
  bool oom;
} asc__buf;

void asc__buf_init(asc__buf *b);
void asc__buf_free(asc__buf *b);
void asc__buf_put(asc__buf *b, const void *p, size_t n);
void asc__buf_puts(asc__buf *b, const char *s);
void asc__buf_printf(asc__buf *b, const char *fmt, ...) ASC_PRINTF(2, 3);
/* NUL-terminated contents; "" when empty. */
const char *asc__buf_str(asc__buf *b);

/* The whole file at path, NUL-terminated, in memory from asc__malloc (free
 * with asc__free); its length in *len when len is not NULL.  NULL with
 * errno set when it cannot be opened or read, or memory runs out. */
char *asc__read_file(const char *path, size_t *len);

#endif /* ASC_BASE_BUF_H */
