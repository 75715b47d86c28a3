/*
 * Writing a user's file through a private temporary (file.h,
 * docs/files.md), and unique temporary names relative to a directory.
 */
#define _GNU_SOURCE /* copy_file_range */
#include "jit/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------- temporary names */

/* Fills the trailing "XXXXXX" of name and creates it (a directory when
 * fd is NULL); up to 100 names are tried.  0 or errno. */
static int make_temp(int dfd, char *name, mode_t mode, int *fd) {
  static const char chars[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static atomic_uint seq;
  size_t n = strlen(name);

  if (n < 6 || strcmp(name + n - 6, "XXXXXX") != 0)
    return EINVAL;
  for (int tries = 0; tries < 100; tries++) {
    struct timespec ts;
    uint64_t r;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
        ((uint64_t)getpid() << 32) ^
        (uint64_t)atomic_fetch_add(&seq, 1) * 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 6; i++) {
      name[n - 6 + i] = chars[r % 62];
      r /= 62;
    }
    if (fd == NULL) {
      if (mkdirat(dfd, name, 0700) == 0)
        return 0;
    } else {
      *fd = openat(dfd, name,
                   O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      if (*fd >= 0)
        return 0;
    }
    if (errno != EEXIST)
      return errno;
  }
  return EEXIST;
}

int asc__mkdtemp_at(int dfd, char *name) {
  return make_temp(dfd, name, 0700, NULL);
}

int asc__mkstemp_at(int dfd, char *name, mode_t mode, int *fd) {
  *fd = -1;
  return make_temp(dfd, name, mode, fd);
}

/* -------------------------------------------------------------- outfile */

const char *asc__outfile_strerror(int e) {
  if (e == ASC__OUTFILE_LINK)
    return "it is a symbolic link (not followed: name the file it points "
           "to)";
  if (e == ASC__OUTFILE_NOT_REGULAR)
    return "it exists and is not a regular file";
  if (e == ASC__OUTFILE_NOT_OWNER)
    return "it belongs to another user, in a sticky directory (only its "
           "owner may replace it)";
  if (e == EISDIR)
    return "it is a directory";
  return strerror(e);
}

int asc__outfile_open_at(asc__outfile *o, int dirfd, const char *name,
                         mode_t mode, unsigned flags) {
  size_t n = strlen(name);
  struct stat dir;
  int e;

  memset(o, 0, sizeof *o);
  o->dirfd = dirfd;
  o->fd = -1;
  o->flags = flags;
  o->name = name;
  if (n == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
    return EISDIR;
  if (fstatat(dirfd, name, &o->old, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(o->old.st_mode))
      return ASC__OUTFILE_LINK;
    if (S_ISDIR(o->old.st_mode))
      return EISDIR;
    if (!S_ISREG(o->old.st_mode))
      return ASC__OUTFILE_NOT_REGULAR;
    /* Said now rather than by the rename after all the work (root may
     * replace anything). */
    if (o->old.st_uid != geteuid() && geteuid() != 0 &&
        fstat(dirfd, &dir) == 0 && (dir.st_mode & S_ISVTX) != 0 &&
        dir.st_uid != geteuid())
      return ASC__OUTFILE_NOT_OWNER;
    o->exists = true;
  } else if (errno != ENOENT) {
    return errno;
  }
  /* ".NAME.XXXXXX", NAME cut to fit a file name (255 bytes). */
  snprintf(o->tmp, sizeof o->tmp, ".%.*s.XXXXXX",
           (int)(n > sizeof o->tmp - 9 ? sizeof o->tmp - 9 : n), name);
  e = asc__mkstemp_at(dirfd, o->tmp, mode, &o->fd);
  if (e != 0)
    o->tmp[0] = '\0';
  return e;
}

int asc__open_parent(const char *path, const char **name) {
  const char *slash = strrchr(path, '/');
  char dir[4096];

  *name = slash != NULL ? slash + 1 : path;
  if (slash == NULL) {
    snprintf(dir, sizeof dir, ".");
  } else if ((size_t)(slash - path) >= sizeof dir) {
    errno = ENAMETOOLONG;
    return -1;
  } else {
    /* "/x" is in "/" */
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path),
             path);
  }
  return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int asc__outfile_open(asc__outfile *o, const char *path, mode_t mode,
                      unsigned flags) {
  const char *name;
  int dfd = asc__open_parent(path, &name), e;

  if (dfd < 0) {
    e = errno;
    memset(o, 0, sizeof *o);
    o->fd = o->dirfd = -1;
    return e;
  }
  e = asc__outfile_open_at(o, dfd, name, mode, flags);
  o->own_dirfd = true;
  if (e != 0)
    asc__outfile_discard(o);
  return e;
}

int asc__write_all(int fd, const void *p, size_t n) {
  const char *s = p;

  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

int asc__outfile_write(asc__outfile *o, const void *p, size_t n) {
  return asc__write_all(o->fd, p, n);
}

int asc__outfile_copy(asc__outfile *o, int fd, size_t n) {
  char buf[65536];
  off_t in = 0;

  /* In the kernel where it can; a plain read and write where it cannot
   * (an older kernel, or two file systems it will not copy between). */
  while (n > 0) {
    ssize_t w = copy_file_range(fd, &in, o->fd, NULL, n, 0);
    if (w > 0) {
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR)
      continue;
    if (w == 0 || (errno != ENOSYS && errno != EXDEV && errno != EINVAL &&
                   errno != EOPNOTSUPP))
      return w == 0 ? EIO : errno;
    break;
  }
  while (n > 0) {
    ssize_t r = pread(fd, buf, n < sizeof buf ? n : sizeof buf, in);
    int e;
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return r == 0 ? EIO : errno;
    if ((e = asc__outfile_write(o, buf, (size_t)r)) != 0)
      return e;
    in += r;
    n -= (size_t)r;
  }
  return 0;
}

static void close_dir(asc__outfile *o) {
  if (o->own_dirfd && o->dirfd >= 0)
    close(o->dirfd);
  o->dirfd = -1;
  o->own_dirfd = false;
}

void asc__outfile_discard(asc__outfile *o) {
  if (o->fd >= 0)
    close(o->fd);
  o->fd = -1;
  if (o->tmp[0] != '\0' && o->dirfd >= 0)
    unlinkat(o->dirfd, o->tmp, 0);
  o->tmp[0] = '\0';
  close_dir(o);
}

int asc__outfile_commit(asc__outfile *o) {
  int e = 0;

  if ((o->flags & ASC__OUTFILE_KEEP_MODE) != 0 && o->exists &&
      o->old.st_uid == geteuid() && fchmod(o->fd, o->old.st_mode & 0777) != 0)
    e = errno;
  /* close reports what a network file system could not write */
  if (close(o->fd) != 0 && e == 0)
    e = errno;
  o->fd = -1;
  if (e == 0 && renameat(o->dirfd, o->tmp, o->dirfd, o->name) != 0)
    e = errno;
  if (e == 0)
    o->tmp[0] = '\0';
  asc__outfile_discard(o);
  return e;
}

int asc__outfile_detach(asc__outfile *o) {
  int fd = o->fd;

  if (unlinkat(o->dirfd, o->tmp, 0) != 0) {
    int e = errno;
    asc__outfile_discard(o);
    errno = e;
    return -1;
  }
  o->tmp[0] = '\0';
  o->fd = -1;
  close_dir(o);
  return fd;
}
