/*
 * Growable byte buffers: a failed allocation sets oom and turns further
 * appends into no-ops, so builders check once at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

void asc__buf_init(asc__buf *b) { memset(b, 0, sizeof *b); }

void asc__buf_init_on(asc__buf *b, char *storage, size_t cap) {
  memset(b, 0, sizeof *b);
  if (cap == 0)
    return;
  b->data = storage;
  b->data[0] = '\0';
  b->cap = cap;
  b->borrowed = true;
}

void asc__buf_free(asc__buf *b) {
  if (!b->borrowed)
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
  d = b->borrowed ? asc__malloc(cap) : asc__realloc(b->data, cap);
  if (d == NULL) {
    b->oom = true;
    return false;
  }
  if (b->borrowed)
    memcpy(d, b->data, b->len + 1);
  b->borrowed = false;
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

const char *asc__read_file_strerror(int e) {
  if (e == EINVAL)
    return "not a regular file";
  if (e == EFBIG)
    return "larger than " ASC__READ_FILE_MAX_TEXT;
  return strerror(e);
}

char *asc__read_file(const char *path, size_t *len) {
  asc__buf b;
  char chunk[65536];
  struct stat st;
  ssize_t n;
  int saved = 0;
  /* O_NONBLOCK: opening a FIFO would wait for a writer */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

  if (fd < 0)
    return NULL;
  if (fstat(fd, &st) != 0)
    saved = errno;
  else if (S_ISDIR(st.st_mode))
    saved = EISDIR;
  else if (!S_ISREG(st.st_mode))
    saved = EINVAL;
  else if ((uint64_t)st.st_size > ASC__READ_FILE_MAX)
    saved = EFBIG;
  if (saved != 0) {
    close(fd);
    errno = saved;
    return NULL;
  }
  asc__buf_init(&b);
  asc__buf_put(&b, "", 0);
  /* The size may have changed since fstat: the cap holds for what is
   * read. */
  while (!b.oom && b.len <= ASC__READ_FILE_MAX &&
         (n = read(fd, chunk, sizeof chunk)) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      saved = EIO;
      break;
    }
    asc__buf_put(&b, chunk, (size_t)n);
  }
  if (saved == 0)
    saved = b.oom ? ENOMEM : b.len > ASC__READ_FILE_MAX ? EFBIG : 0;
  close(fd);
  if (saved != 0 || b.data == NULL) {
    asc__buf_free(&b);
    errno = saved != 0 ? saved : ENOMEM;
    return NULL;
  }
  if (len != NULL)
    *len = b.len;
  return b.data;  /* NUL-terminated: buf_reserve keeps room for it */
}
