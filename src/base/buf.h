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
  bool borrowed;   /* data is the caller's storage (asc__buf_init_on) */
} asc__buf;

void asc__buf_init(asc__buf *b);
/* An empty buffer in the caller's storage of cap bytes (cap > 0), moved
 * to the heap when it outgrows it: text built on every call of a hot path
 * allocates nothing when it is short. */
void asc__buf_init_on(asc__buf *b, char *storage, size_t cap);
void asc__buf_free(asc__buf *b);
void asc__buf_put(asc__buf *b, const void *p, size_t n);
void asc__buf_puts(asc__buf *b, const char *s);
void asc__buf_printf(asc__buf *b, const char *fmt, ...) ASC_PRINTF(2, 3);
/* NUL-terminated contents; "" when empty. */
const char *asc__buf_str(asc__buf *b);

/* Files larger than this are not read: kernel sources are far smaller,
 * and the cap keeps a huge or growing file from filling the memory. */
#define ASC__READ_FILE_MAX ((uint64_t)256 << 20)
#define ASC__READ_FILE_MAX_TEXT "256 MiB"

/* The whole regular file at path, NUL-terminated, in memory from
 * asc__malloc (free with asc__free); its length in *len when len is not
 * NULL.  NULL with errno set when it cannot be opened or read (EIO), is a
 * directory (EISDIR) or anything else but a regular file (EINVAL: a FIFO
 * would block, a device be read forever), holds more than
 * ASC__READ_FILE_MAX bytes (EFBIG), or memory runs out (ENOMEM). */
char *asc__read_file(const char *path, size_t *len);
/* The reason for asc__read_file's errno e, for "cannot read PATH: %s". */
const char *asc__read_file_strerror(int e);

#endif /* ASC_BASE_BUF_H */
