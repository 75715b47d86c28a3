/*
 * The kernel cache: a directory of shared objects named by the XXH3-128 of
 * everything that went into building them.
 *
 *   <dir>/ab/<30 hex>.so        entry: payload (the .so) + 64-byte trailer
 *   <dir>/ab/<30 hex>.lock      per-key lock file (flock)
 *   <dir>/ab/.tmp-<30 hex>-XXXXXX/   work directory of a build in progress,
 *                               or kept after a failed one
 *   <dir>/ab/<30 hex>.idx       index record: a key of the jit's that needs
 *                               no front end -> what it stands for (the
 *                               entry's key, a module's kernel table)
 *
 * Lookup never locks: entries only appear by rename(2) of a complete,
 * fsynced file, so a reader sees either nothing or a whole entry, and it
 * verifies size and hash before handing the path out.  A miss takes the
 * key's lock, looks again (another process may have just built it), builds
 * in a work directory on the same file system, appends the trailer, fsyncs
 * and renames into place.
 *
 * Lock files are removed only by a holder of their lock (eviction, clear).
 * A process that obtains a lock therefore checks that the file it locked
 * is still the one at the path, and starts over otherwise.
 *
 * The directory is opened once, checked with its ancestors (dir_check)
 * and kept open; every later operation is relative to that descriptor and
 * never follows a symbolic link, and entries are handed out as verified
 * open descriptors, so neither another user swapping a path nor another
 * process evicting an entry can change what gets loaded (docs/cache.md,
 * threat model).
 *
 * c->lock guards the directory fields only and is never held across a
 * build or a file lock wait.
 */
#define _GNU_SOURCE /* O_PATH */
#include "jit/cache.h"
#include "base/env.h"
#include "jit/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "jit/cache_int.h"

/* ------------------------------------------------------------ test seam */

typedef struct io_hook {
  asc__cache_io_fail_fn fn;
  void *ud;
} io_hook;

static _Atomic(io_hook *) io_hook_current;
static io_hook io_hook_slots[2];
static atomic_int io_hook_slot;

void asc__cache_set_io_fail_hook(asc__cache_io_fail_fn fn, void *ud) {
  io_hook *h;

  if (fn == NULL) {
    atomic_store(&io_hook_current, NULL);
    return;
  }
  h = &io_hook_slots[atomic_fetch_add(&io_hook_slot, 1) & 1];
  h->fn = fn;
  h->ud = ud;
  atomic_store(&io_hook_current, h);
}

/* 0, or the errno a test wants op on path to fail with (errno is set). */
int asc__cache_io_fail(const char *op, const char *path) {
  io_hook *h = atomic_load_explicit(&io_hook_current, memory_order_acquire);
  int e = h != NULL && path != NULL ? h->fn(op, path, h->ud) : 0;
  if (e != 0)
    errno = e;
  return e;
}

/* ------------------------------------------------------------------ keys */

void asc__cache_put_le64(unsigned char *p, uint64_t v) {
  int i;
  for (i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

void asc__cache_key_init(asc__cache_key *k) {
  memset(k, 0, sizeof *k);
  XXH3_128bits_reset(&k->state);
}

static void key_add_raw(asc__cache_key *k, const char *name, uint64_t len,
                        const void *bytes, size_t n) {
  unsigned char l[8];
  size_t nl = strlen(name);

  asc__cache_put_le64(l, nl);
  XXH3_128bits_update(&k->state, l, 8);
  XXH3_128bits_update(&k->state, name, nl);
  asc__cache_put_le64(l, len);
  XXH3_128bits_update(&k->state, l, 8);
  if (n > 0)
    XXH3_128bits_update(&k->state, bytes, n);
}

void asc__cache_key_add(asc__cache_key *k, const char *name,
                        const void *bytes, size_t len) {
  key_add_raw(k, name, len, bytes, len);
}

void asc__cache_key_add_str(asc__cache_key *k, const char *name,
                            const char *s) {
  if (s == NULL)
    key_add_raw(k, name, UINT64_MAX, NULL, 0); /* no string has this length */
  else
    key_add_raw(k, name, strlen(s), s, strlen(s));
}

void asc__cache_key_add_u64(asc__cache_key *k, const char *name, uint64_t v) {
  unsigned char b[8];
  asc__cache_put_le64(b, v);
  key_add_raw(k, name, 8, b, 8);
}

void asc__cache_key_final(asc__cache_key *k) {
  static const char hexd[] = "0123456789abcdef";
  XXH128_canonical_t c;
  int i;

  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&k->state));
  memcpy(k->digest, c.digest, 16);
  for (i = 0; i < 16; i++) {
    k->hex[2 * i] = hexd[k->digest[i] >> 4];
    k->hex[2 * i + 1] = hexd[k->digest[i] & 15];
  }
  k->hex[32] = '\0';
  k->final = true;
}

/* ------------------------------------------------------------ file utils */

static char *path_join(const char *a, const char *b, const char *c) {
  asc__buf p;
  asc__buf_init(&p);
  asc__buf_puts(&p, a);
  if (b != NULL) {
    asc__buf_puts(&p, "/");
    asc__buf_puts(&p, b);
  }
  if (c != NULL)
    asc__buf_puts(&p, c);
  if (p.oom || p.data == NULL) {
    asc__buf_free(&p);
    return NULL;
  }
  return p.data;
}

/* mkdir -p with mode 0700 for what it creates.  0 or errno. */
static int mkdir_p(const char *dir) {
  char *p = asc__strdup(dir), *s;
  int e = 0;

  if (p == NULL)
    return ENOMEM;
  for (s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char was = *s;
      *s = '\0';
      if (asc__cache_io_fail("mkdir", p) != 0 ||
          (mkdir(p, 0700) != 0 && errno != EEXIST)) {
        e = errno;
        break;
      }
      *s = was;
      if (was == '\0')
        break;
    }
  }
  asc__free(p);
  return e;
}

bool asc__cache_write_all(int fd, const void *buf, size_t n, off_t off) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = pwrite(fd, p, n, off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += w;
    off += w;
    n -= (size_t)w;
  }
  return true;
}

bool asc__cache_read_all(int fd, void *buf, size_t n, off_t off) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = pread(fd, p, n, off);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    off += r;
    n -= (size_t)r;
  }
  return true;
}

/* XXH3-128 of the first size bytes of fd (canonical form). */
static bool hash_fd(int fd, uint64_t size, unsigned char out[16]) {
  XXH3_state_t st;
  XXH128_canonical_t c;
  char buf[16384];
  uint64_t off = 0;

  XXH3_128bits_reset(&st);
  while (off < size) {
    size_t n = size - off < sizeof buf ? (size_t)(size - off) : sizeof buf;
    if (!asc__cache_read_all(fd, buf, n, (off_t)off))
      return false;
    XXH3_128bits_update(&st, buf, n);
    off += n;
  }
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
  memcpy(out, c.digest, 16);
  return true;
}

/* Opens the directory name in dfd, never through a symbolic link. */
static int open_dir_at(int dfd, const char *name) {
  return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void remove_at(int dfd, const char *name, int depth);

/* Removes what the directory open at fd holds, down to depth levels. */
static void remove_children(int fd, int depth) {
  int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
  struct dirent *e;

  if (d == NULL) {
    if (dfd >= 0)
      close(dfd);
    return;
  }
  rewinddir(d); /* the duplicate shares fd's offset */
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      remove_at(dirfd(d), e->d_name, depth - 1);
  closedir(d);
}

/* Removes name in dfd: a file, a symbolic link (not what it points to),
 * or a directory with what it holds down to depth levels. */
static void remove_at(int dfd, const char *name, int depth) {
  int fd;

  if (unlinkat(dfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM) ||
      depth <= 0)
    return;
  fd = open_dir_at(dfd, name);
  if (fd >= 0) {
    remove_children(fd, depth);
    close(fd);
  }
  unlinkat(dfd, name, AT_REMOVEDIR);
}

/* ----------------------------------------------------------------- locks */

/* Locks name in dfd (created if needed; path names it for the test hook,
 * NULL for none).  *fd receives the locked descriptor.  Returns 0;
 * EWOULDBLOCK when wait_ms is 0 and another holds it; ETIMEDOUT when
 * wait_ms passed; EINVAL when something else than a file is there; or the
 * errno of creating the file. */
static int lock_file(int dfd, const char *name, const char *path,
                     uint64_t wait_ms, int *fd) {
  uint64_t deadline = uv_hrtime() + wait_ms * 1000000u;
  unsigned delay = 1;
  int replaced = 0;
  struct stat a, b;

  *fd = -1;
  for (;;) {
    int f;
    if (asc__cache_io_fail("create", path) != 0)
      return errno;
    f = openat(dfd, name,
               O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (f >= 0 && (fstat(f, &a) != 0 || !S_ISREG(a.st_mode))) {
      close(f);
      f = -1;
      errno = EINVAL;
    }
    if (f < 0) {
      /* A link, FIFO, device or directory where the lock file belongs
       * (planted, or left by a crash) would leave every build unlocked:
       * replace it, as a bad entry is replaced, a few times at most
       * (another process may be doing the same). */
      if ((errno == ELOOP || errno == EINVAL || errno == EISDIR ||
           errno == ENXIO) && replaced++ < 3) {
        remove_at(dfd, name, 1);
        continue;
      }
      return errno == ELOOP || errno == EISDIR || errno == ENXIO ? EINVAL
                                                                 : errno;
    }
    while (flock(f, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR)
        continue;
      if (errno != EWOULDBLOCK || wait_ms == 0 || uv_hrtime() >= deadline) {
        int e = errno == EWOULDBLOCK && wait_ms > 0 ? ETIMEDOUT : errno;
        close(f);
        return e;
      }
      uv_sleep(delay);
      if (delay < 50)
        delay *= 2;
    }
    /* The file may have been unlinked by its previous holder. */
    if (fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
      *fd = f;
      return 0;
    }
    close(f);
  }
}

/* Releases a lock lock_file took.  flock belongs to the open file
 * description, which a fork() child shares: closing only our descriptor
 * would leave the lock held for as long as a child made while it was held
 * lives (and that child, building the same key, would wait for itself
 * until ASC_CACHE_LOCK_TIMEOUT_MS).  LOCK_UN releases it for all. */
static void unlock_file(int fd) {
  (void)flock(fd, LOCK_UN);
  close(fd);
}

/* ------------------------------------------------------------- entries */

typedef enum entry_state { ENTRY_MISSING, ENTRY_OK, ENTRY_BAD } entry_state;

static void make_trailer(unsigned char t[ASC_CACHE_TRAILER_SIZE],
                         uint64_t size, const unsigned char hash[16],
                         const unsigned char key[16]) {
  memset(t, 0, ASC_CACHE_TRAILER_SIZE);
  asc__cache_put_le64(t, size);
  memcpy(t + 8, hash, 16);
  memcpy(t + 24, key, 16);
  asc__cache_put_le64(t + 40, ASC_CACHE_FORMAT_VERSION |
                       ((uint64_t)ASC_CACHE_TRAILER_SIZE << 32));
  asc__cache_put_le64(t + 48, XXH3_64bits(t, 48));
  memcpy(t + 56, TRAILER_MAGIC, 8);
}

/* Checks the entry at path against k: whole trailer, size, payload hash.
 * On success the entry's times are set to now (LRU) and, when fdp is not
 * NULL, *fdp receives the open entry: loading through it cannot be
 * undone by another process evicting or replacing the path meanwhile. */
static entry_state entry_verify(int dfd, const char *name,
                                const asc__cache_key *k, int *fdp) {
  unsigned char t[ASC_CACHE_TRAILER_SIZE], want[ASC_CACHE_TRAILER_SIZE];
  unsigned char hash[16];
  struct stat st;
  uint64_t size;
  entry_state r = ENTRY_BAD;
  /* O_NONBLOCK: a FIFO planted here must not block the lookup;
   * O_NOFOLLOW: nor may a symbolic link lead elsewhere.  Both are bad
   * entries, removed and rebuilt. */
  int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    return errno == ENOENT ? ENTRY_MISSING : ENTRY_BAD;
  /* Only this user's files, which no one else may have written: the
   * trailer is no signature, anyone can compute it. */
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
      (uint64_t)st.st_size <= ASC_CACHE_TRAILER_SIZE)
    goto out;
  size = (uint64_t)st.st_size - ASC_CACHE_TRAILER_SIZE;
  if (!asc__cache_read_all(fd, t, sizeof t, (off_t)size) ||
      !hash_fd(fd, size, hash))
    goto out;
  make_trailer(want, size, hash, k->digest);
  if (memcmp(t, want, sizeof t) != 0)
    goto out;
  r = ENTRY_OK;
  futimens(fd, NULL);
  if (fdp != NULL) {
    *fdp = fd;
    return r;
  }
out:
  close(fd);
  return r;
}

/* Appends the trailer to the built file (built_name in workfd; built is
 * its path, for the test hook), syncs it and renames it to entry_name in
 * subfd (entry: its path).  0 or errno; on success *fdp is the published
 * file, open. */
static int entry_publish(int workfd, const char *built_name,
                         const char *built, int subfd,
                         const char *entry_name, const char *entry,
                         const asc__cache_key *k, int *fdp) {
  unsigned char t[ASC_CACHE_TRAILER_SIZE], hash[16];
  struct stat st;
  int fd, e = 0;

  fd = openat(workfd, built_name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    e = errno ? errno : EINVAL;
    goto out;
  }
  if (!hash_fd(fd, (uint64_t)st.st_size, hash)) {
    e = errno ? errno : EIO;
    goto out;
  }
  make_trailer(t, (uint64_t)st.st_size, hash, k->digest);
  if (asc__cache_io_fail("write", built) != 0 ||
      !asc__cache_write_all(fd, t, sizeof t, st.st_size) ||
      asc__cache_io_fail("fsync", built) != 0 || fsync(fd) != 0) {
    e = errno;
    goto out;
  }
out:
  if (e == 0 && (asc__cache_io_fail("rename", entry) != 0 ||
                 renameat(workfd, built_name, subfd, entry_name) != 0))
    e = errno;
  if (e != 0) {
    close(fd);
    return e;
  }
  fsync(subfd);
  *fdp = fd;
  return 0;
}

/* ------------------------------------------------------------ directory */

static asc__env_num max_bytes_env = {"ASC_CACHE_MAX_BYTES",
                                     ASC_CACHE_DEFAULT_MAX_BYTES, 1,
                                     UINT64_MAX, ASC__ENV_SUFFIXES, false};
static asc__env_num lock_timeout_env = {"ASC_CACHE_LOCK_TIMEOUT_MS",
                                        DEFAULT_LOCK_TIMEOUT_MS, 1,
                                        UINT64_MAX, 0, false};

/* The directory the environment names (asc__malloc), NULL if none. */
static char *dir_from_env(void) {
  const char *s = getenv("ASC_CACHE_DIR");
  struct passwd pw, *res = NULL;
  char pwbuf[4096];

  if (s != NULL && *s != '\0')
    return asc__strdup(s);
  s = getenv("XDG_CACHE_HOME");
  if (s != NULL && s[0] == '/')   /* relative values are invalid (XDG) */
    return path_join(s, "asc", NULL);
  s = getenv("HOME");
  if ((s == NULL || s[0] != '/') &&
      getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &res) == 0 &&
      res != NULL)
    s = pw.pw_dir;
  if (s == NULL || s[0] != '/')
    return NULL;
  return path_join(s, ".cache/asc", NULL);
}

/* The name of the directory `up` levels above real (an absolute path
 * without symbolic links), for messages. */
static void ancestor_name(asc__buf *out, const char *real, int up) {
  size_t n = real != NULL ? strlen(real) : 0;

  if (real == NULL) {
    asc__buf_printf(out, "%d levels up", up);
    return;
  }
  while (up-- > 0 && n > 1) {
    while (n > 1 && real[n - 1] != '/')
      n--;
    if (n > 1)
      n--; /* the slash, unless it is the root's */
  }
  asc__buf_printf(out, "%.*s", (int)n, real);
}

/* Why the directory open at fd (named dir) must not hold the cache, into
 * why; nothing when it may.  It must be a directory owned by this user,
 * not group or world writable, writable by its owner, on a writable file
 * system; and each directory above it, up to the root, owned by root or
 * by this user and not writable by group or others -- except a sticky
 * one (/tmp) when the directory just below it is this user's or root's,
 * which no one else can then rename or remove.  Otherwise whoever may
 * write an ancestor could swap the path to the cache for a directory of
 * their own (the check ssh and sudo make).  The walk goes up through
 * ".." from fd, so it checks the directories the descriptor really lies
 * in, whatever symbolic links the path went through. */
static void dir_check(int fd, const char *dir, asc__buf *why) {
  struct stat st, up;
  struct statvfs vfs;
  uid_t me = geteuid();
  char *real = NULL;
  int cur, level;

  if (fstat(fd, &st) != 0) {
    asc__buf_printf(why, "%s", strerror(errno));
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    asc__buf_puts(why, "not a directory");
    return;
  }
  if (st.st_uid != me) {
    asc__buf_printf(why, "owned by uid %ld, not by this user (uid %ld)",
                    (long)st.st_uid, (long)me);
    return;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    asc__buf_printf(why, "group or world writable (mode %04o)",
                    (unsigned)(st.st_mode & 07777));
    return;
  }
  if ((st.st_mode & S_IWUSR) == 0 || faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
    asc__buf_puts(why, "read-only");
    return;
  }
  if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0) {
    asc__buf_puts(why, "on a read-only file system");
    return;
  }
  cur = fd;
  for (level = 1;; level++) {
    /* O_PATH: an ancestor with search permission only (0711) is fine */
    int parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *bad = NULL;

    if (cur != fd)
      close(cur);
    if (parent < 0 || fstat(parent, &up) != 0) {
      asc__buf_printf(why, "cannot check the directory above it: %s",
                      strerror(errno));
      if (parent >= 0)
        close(parent);
      break;
    }
    if (up.st_dev == st.st_dev && up.st_ino == st.st_ino) {
      close(parent); /* the root: its ".." is itself */
      break;
    }
    if (up.st_uid != 0 && up.st_uid != me)
      bad = "owned by another user";
    else if ((up.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
             ((up.st_mode & S_ISVTX) == 0 ||
              (st.st_uid != me && st.st_uid != 0)))
      bad = "writable by others";
    if (bad != NULL) {
      if (real == NULL)
        real = realpath(dir, NULL);
      asc__buf_puts(why, "the directory ");
      ancestor_name(why, real, level);
      asc__buf_printf(why,
                      " above it is %s (uid %ld, mode %04o): only root or "
                      "this user (uid %ld) may control the directories "
                      "above the cache",
                      bad, (long)up.st_uid, (unsigned)(up.st_mode & 07777),
                      (long)me);
      close(parent);
      break;
    }
    st = up;
    cur = parent;
  }
  free(real);
}

/* The path the kernel gives the directory open at fd, if naming it again
 * reaches that very directory (asc__malloc'd), else NULL.  Every component
 * of it is one of the directories dir_check walked, so only the user or
 * root can change what it names: later work done by path (the C
 * compiler's files) stays inside what was checked, even when the
 * configured path went through a link another user owns. */
static char *real_path_of(int fd) {
  char lnk[64], real[4096];
  struct stat a, b;
  ssize_t n;

  snprintf(lnk, sizeof lnk, "/proc/self/fd/%d", fd);
  n = readlink(lnk, real, sizeof real - 1);
  if (n <= 0 || real[0] != '/')
    return NULL;
  real[n] = '\0';
  if (stat(real, &a) != 0 || fstat(fd, &b) != 0 || a.st_dev != b.st_dev ||
      a.st_ino != b.st_ino)
    return NULL;
  return asc__strdup(real);
}

/* Creates dir if needed (missing parents too, mode 0700), opens it without
 * following a symbolic link and checks it (dir_check).  Returns NULL, the
 * descriptor in *fd and the directory's real path in *real
 * (asc__malloc'd) when usable, else why not (asc__malloc'd; "" on OOM). */
static char *dir_open(const char *dir, int *fd, char **real) {
  asc__buf why;
  struct stat st;
  int e;

  *fd = -1;
  *real = NULL;
  asc__buf_init(&why);
  e = mkdir_p(dir);
  if (e == ENOMEM)
    return asc__strdup("");
  if (e != 0) {
    asc__buf_printf(&why, "cannot create it: %s", strerror(e));
  } else {
    int f = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    e = errno;
    if (f < 0 && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
      asc__buf_puts(&why, "a symbolic link (refused: the cache directory "
                          "must be named by its real path)");
    else if (f < 0 && e == ENOTDIR)
      asc__buf_puts(&why, "not a directory");
    else if (f < 0)
      asc__buf_printf(&why, "%s", strerror(e));
    else
      dir_check(f, dir, &why);
    if (f >= 0 && why.len == 0 && !why.oom &&
        (*real = real_path_of(f)) == NULL)
      asc__buf_puts(&why, "cannot name it by its real path (/proc/self/fd)");
    if (f >= 0 && why.len == 0 && !why.oom) {
      asc__buf_free(&why);
      *fd = f;
      return NULL;
    }
    if (f >= 0)
      close(f);
  }
  if (why.oom || why.data == NULL) {
    asc__buf_free(&why);
    return asc__strdup("");
  }
  return why.data;
}

/* Moves c to a private temporary directory because `failed` (the directory
 * in use when the trouble happened) is unusable for `why`.  Returns
 * ascSuccess when c now uses another directory (maybe switched by another
 * thread meanwhile), ascErrorCache when there is none. */
static ascError_t use_fallback(asc__cache *c, const char *failed,
                               const char *why) {
  const char *tmp = getenv("TMPDIR");
  ascError_t err = ascSuccess;
  char *templ, *real = NULL;

  if (tmp == NULL || tmp[0] != '/')
    tmp = "/tmp";
  uv_mutex_lock(&c->lock);
  if (failed != NULL && c->dir != failed)
    goto out; /* someone switched already */
  if (c->fallback) {
    err = asc__error(ascErrorCache,
                     "kernel cache: private directory %s unusable: %s",
                     c->dir ? c->dir : "(none)", why);
    goto out;
  }
  {
    char name[64];
    snprintf(name, sizeof name, "asc-cache-%ld-XXXXXX", (long)geteuid());
    templ = path_join(tmp, name, NULL);
  }
  if (templ == NULL) {
    err = asc__error(ascErrorOutOfMemory, "out of memory");
    goto out;
  }
  if (mkdtemp(templ) == NULL) {
    err = asc__error(ascErrorCache,
                     "kernel cache %s unusable (%s), and no private "
                     "directory could be made in %s: %s",
                     c->configured ? c->configured : "(unset)", why, tmp,
                     strerror(errno));
    asc__free(templ);
    goto out;
  }
  {
    char *bad = dir_open(templ, &c->fallback_fd, &real);
    if (bad != NULL) {
      err = bad[0] == '\0'
                ? asc__error(ascErrorOutOfMemory, "out of memory")
                : asc__error(ascErrorCache,
                             "kernel cache %s unusable (%s), and the private "
                             "directory %s is not safe either: %s",
                             c->configured ? c->configured : "(unset)", why,
                             templ, bad);
      asc__free(bad);
      rmdir(templ);
      asc__free(templ);
      goto out;
    }
  }
  fprintf(stderr,
          "libasc: warning: kernel cache %s unusable (%s); compiling in %s "
          "for this process\n",
          c->configured ? c->configured : "(no directory)", why, templ);
  /* mkdtemp's name is already real unless TMPDIR goes through a link;
   * the compiler works below the real one. */
  asc__free(templ);
  templ = real;
  c->fallback_dir = templ;
  c->dir = templ;
  c->dir_fd = c->fallback_fd;
  c->fallback = true;
  atomic_fetch_add(&c->fallbacks, 1);
out:
  uv_mutex_unlock(&c->lock);
  return err;
}

ascError_t asc__cache_open(asc__cache **out, const char *dir) {
  asc__cache *c;
  char *why = NULL;
  char cwd[4096];
  ascError_t err;

  *out = NULL;
  c = asc__calloc(1, sizeof *c);
  if (c == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  if (uv_mutex_init(&c->lock) != 0) {
    asc__free(c);
    return asc__error(ascErrorInternal, "cannot create a mutex");
  }
  if (uv_mutex_init(&c->mem_lock) != 0) {
    uv_mutex_destroy(&c->lock);
    asc__free(c);
    return asc__error(ascErrorInternal, "cannot create a mutex");
  }
  c->configured_fd = c->fallback_fd = c->dir_fd = -1;
  c->max_bytes = asc__env_u64(&max_bytes_env);
  c->lock_timeout_ms = asc__env_u64(&lock_timeout_env);
  c->configured = dir != NULL ? asc__strdup(dir) : dir_from_env();
  if (c->configured != NULL && c->configured[0] != '/' &&
      getcwd(cwd, sizeof cwd) != NULL) {
    /* Relative to the directory we start in, not to a later chdir. */
    char *abs = path_join(cwd, c->configured, NULL);
    asc__free(c->configured);
    c->configured = abs;
    if (abs == NULL) {
      asc__cache_close(c);
      return asc__error(ascErrorOutOfMemory, "out of memory");
    }
  }
  if (c->configured != NULL) {
    why = dir_open(c->configured, &c->configured_fd, &c->configured_real);
    if (why == NULL) {
      c->dir = c->configured_real;
      c->dir_fd = c->configured_fd;
    }
  } else if (dir != NULL || (why = asc__strdup("no home directory")) == NULL) {
    asc__cache_close(c);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  if (why != NULL && why[0] == '\0') {
    asc__free(why);
    asc__cache_close(c);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  if (why != NULL) {
    /* Not a failure of open: compilation still works, privately. */
    err = use_fallback(c, NULL, why);
    asc__free(why);
    if (err == ascErrorOutOfMemory) {
      asc__cache_close(c);
      return err;
    }
  } else if (c->dir == NULL) {
    asc__cache_close(c);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  *out = c;
  return ascSuccess;
}

/* Removes the private directory (its files through its descriptor). */
static void remove_fallback(asc__cache *c) {
  if (c->fallback_fd >= 0)
    remove_children(c->fallback_fd, 3);
  if (c->fallback_dir != NULL)
    rmdir(c->fallback_dir);
}

void asc__cache_close(asc__cache *c) {
  if (c == NULL)
    return;
  remove_fallback(c);
  if (c->fallback_fd >= 0)
    close(c->fallback_fd);
  if (c->configured_fd >= 0)
    close(c->configured_fd);
  uv_mutex_destroy(&c->lock);
  uv_mutex_destroy(&c->mem_lock);
  for (size_t i = 0; i < ASC_ARRAY_SIZE(c->mem); i++)
    asc__free(c->mem[i].val);
  asc__free(c->configured);
  asc__free(c->configured_real);
  asc__free(c->fallback_dir);
  asc__free(c);
}

static uv_once_t default_once = UV_ONCE_INIT;
static uv_mutex_t default_lock;
static asc__cache *default_cache;
static pid_t default_pid;

static void default_init(void) { uv_mutex_init(&default_lock); }

/* The process's cache is never closed, but its private directory, if it
 * had to make one, should not outlive the process.  Only the process that
 * made it removes it: a forked child that calls exit() must not. */
__attribute__((destructor)) static void default_cleanup(void) {
  if (default_cache != NULL && getpid() == default_pid) {
    uv_mutex_lock(&default_lock);
    uv_mutex_lock(&default_cache->lock);
    remove_fallback(default_cache);
    uv_mutex_unlock(&default_cache->lock);
    uv_mutex_unlock(&default_lock);
  }
}

ascError_t asc__cache_default(asc__cache **out) {
  ascError_t err = ascSuccess;

  uv_once(&default_once, default_init);
  uv_mutex_lock(&default_lock);
  if (default_cache == NULL) {
    err = asc__cache_open(&default_cache, NULL);
    default_pid = getpid();
  }
  *out = default_cache;
  uv_mutex_unlock(&default_lock);
  return err;
}

/* The directory in use now and its descriptor (valid until close), or
 * NULL and -1. */
const char *asc__cache_current_dir(asc__cache *c, int *fd) {
  const char *d;

  uv_mutex_lock(&c->lock);
  d = c->dir;
  *fd = c->dir_fd;
  uv_mutex_unlock(&c->lock);
  return d;
}

/* ---------------------------------------------------------------- scans */

typedef struct scan_entry {
  char sub[3];     /* fan-out directory */
  char name[35];   /* "<30 hex>.so", or "<30 hex>.idx" (an index record) */
  uint64_t size;
  struct timespec mtime;
} scan_entry;

typedef struct scan {
  scan_entry *v;
  size_t n, cap;
  uint64_t bytes;
  uint64_t temporaries;
  uint64_t records;  /* index records among v */
  bool oom;
} scan;

enum { SCAN_STATS, SCAN_EVICT, SCAN_CLEAR };

static bool is_hex(const char *s, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

static void scan_add(scan *s, const char *sub, const char *name,
                     const struct stat *st) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    scan_entry *v = asc__realloc(s->v, cap * sizeof *v);
    if (v == NULL) {
      s->oom = true;
      return;
    }
    s->v = v;
    s->cap = cap;
  }
  memcpy(s->v[s->n].sub, sub, 3);
  snprintf(s->v[s->n].name, sizeof s->v[s->n].name, "%s", name);
  s->v[s->n].size = (uint64_t)st->st_size;
  s->v[s->n].mtime = st->st_mtim;
  s->n++;
}

static void scan_free(scan *s) {
  asc__free(s->v);
  memset(s, 0, sizeof *s);
}

/* A temporary ".tmp-<30 hex>-XXXXXX" in subfd: removes it when its key is
 * not being built (its lock is free) and, unless clearing, it is stale. */
static void temp_maybe_remove(int subfd, const char *name,
                              const struct stat *st, int mode) {
  char lockn[36], entryn[34];
  struct stat es;
  int fd;

  if (mode == SCAN_STATS)
    return;
  if (mode == SCAN_EVICT && time(NULL) - st->st_mtime < STALE_TEMP_SECONDS)
    return;
  if (strlen(name) < 5 + 30 || !is_hex(name + 5, 30)) {
    if (mode == SCAN_CLEAR)
      remove_at(subfd, name, 1);
    return;
  }
  snprintf(lockn, sizeof lockn, "%.30s.lock", name + 5);
  snprintf(entryn, sizeof entryn, "%.30s.so", name + 5);
  if (lock_file(subfd, lockn, NULL, 0, &fd) == 0) {
    remove_at(subfd, name, 1);
    if (fstatat(subfd, entryn, &es, AT_SYMLINK_NOFOLLOW) != 0 &&
        errno == ENOENT)
      unlinkat(subfd, lockn, 0); /* held: see entry_remove */
    unlock_file(fd);
  }
}

/* A lock file "<30 hex>.lock" whose entry does not exist (its builds
 * failed): removed when clearing, or when stale, if nobody holds it. */
static void lock_maybe_remove(int subfd, const char *name,
                              const struct stat *st, int mode) {
  char entryn[34];
  struct stat es;
  int fd;

  if (mode == SCAN_STATS)
    return;
  if (mode == SCAN_EVICT && time(NULL) - st->st_mtime < STALE_TEMP_SECONDS)
    return;
  snprintf(entryn, sizeof entryn, "%.30s.so", name);
  if (fstatat(subfd, entryn, &es, AT_SYMLINK_NOFOLLOW) != 0 &&
      errno == ENOENT && lock_file(subfd, name, NULL, 0, &fd) == 0) {
    if (fstatat(subfd, entryn, &es, AT_SYMLINK_NOFOLLOW) != 0 &&
        errno == ENOENT)
      unlinkat(subfd, name, 0);
    unlock_file(fd);
  }
}

/* Walks every fan-out directory of the cache open at dfd, collecting
 * entries (and, by mode, removing temporaries).  Symbolic links are
 * neither followed nor counted. */
static void scan_dir(int dfd, scan *s, int mode) {
  int tfd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
  DIR *top = tfd >= 0 ? fdopendir(tfd) : NULL, *d;
  struct dirent *e, *f;
  struct stat st;

  if (top == NULL) {
    if (tfd >= 0)
      close(tfd);
    return;
  }
  rewinddir(top); /* the duplicate shares dfd's offset */
  while ((e = readdir(top)) != NULL) {
    char sub[3];
    int subfd;
    if (strlen(e->d_name) != 2 || !is_hex(e->d_name, 2))
      continue;
    memcpy(sub, e->d_name, 3);
    subfd = open_dir_at(dfd, sub);
    if (subfd < 0)
      continue;
    d = fdopendir(subfd);
    if (d == NULL) {
      close(subfd);
      continue;
    }
    while ((f = readdir(d)) != NULL) {
      size_t len = strlen(f->d_name);
      bool entry = len == 33 && strcmp(f->d_name + 30, ".so") == 0 &&
                   is_hex(f->d_name, 30);
      bool temp = strncmp(f->d_name, ".tmp-", 5) == 0;
      bool lock = len == 35 && strcmp(f->d_name + 30, ".lock") == 0 &&
                  is_hex(f->d_name, 30);
      bool record = len == 34 && strcmp(f->d_name + 30, ".idx") == 0 &&
                    is_hex(f->d_name, 30);
      if (!entry && !temp && !lock && !record)
        continue;
      if (fstatat(subfd, f->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;
      if ((entry || record) && S_ISREG(st.st_mode)) {
        /* Index records age out with the entries, least recently used
         * first; they are tiny. */
        scan_add(s, sub, f->d_name, &st);
        s->bytes += (uint64_t)st.st_size;
        s->records += record;
      } else if (temp) {
        s->temporaries++;
        temp_maybe_remove(subfd, f->d_name, &st, mode);
      } else if (lock && S_ISREG(st.st_mode)) {
        lock_maybe_remove(subfd, f->d_name, &st, mode);
      }
    }
    closedir(d);
  }
  closedir(top);
}

/* Removes an entry and its lock file if nobody holds its lock.  The lock
 * file goes first while we hold it, so a waiter that gets the old inode
 * notices (lock_file compares inodes) and starts over.  A process that
 * has the entry open or loaded keeps its file. */
static bool entry_remove(int dfd, const scan_entry *v) {
  char lockn[36];
  bool removed = false;
  int subfd = open_dir_at(dfd, v->sub), fd;

  if (subfd < 0)
    return false;
  if (strcmp(v->name + 30, ".idx") == 0) {
    /* Replaced only by rename, read without locks: a reader that loses
     * it misses and writes it again. */
    removed = unlinkat(subfd, v->name, 0) == 0;
    close(subfd);
    return removed;
  }
  snprintf(lockn, sizeof lockn, "%.30s.lock", v->name);
  if (lock_file(subfd, lockn, NULL, 0, &fd) == 0) {
    removed = unlinkat(subfd, v->name, 0) == 0;
    unlinkat(subfd, lockn, 0);
    unlock_file(fd);
  }
  close(subfd);
  return removed;
}

static int by_mtime(const void *a, const void *b) {
  const scan_entry *x = a, *y = b;
  int c;
  if (x->mtime.tv_sec != y->mtime.tv_sec)
    return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec)
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  c = strcmp(x->sub, y->sub);
  return c != 0 ? c : strcmp(x->name, y->name);
}

/* Evicts least recently used entries of the cache at dfd until it fits
 * the cap, never the entry of key `keep` (just published) nor an entry
 * whose key is locked. */
static void evict(asc__cache *c, int dfd, const asc__cache_key *keep) {
  scan s;
  size_t i;

  memset(&s, 0, sizeof s);
  scan_dir(dfd, &s, SCAN_EVICT);
  if (s.bytes > c->max_bytes && !s.oom) {
    qsort(s.v, s.n, sizeof *s.v, by_mtime);
    for (i = 0; i < s.n && s.bytes > c->max_bytes; i++) {
      if (memcmp(s.v[i].sub, keep->hex, 2) == 0 &&
          memcmp(s.v[i].name, keep->hex + 2, 30) == 0)
        continue;
      if (entry_remove(dfd, &s.v[i])) {
        s.bytes -= s.v[i].size;
        atomic_fetch_add(&c->evictions, 1);
      }
    }
  }
  scan_free(&s);
}

ascError_t asc__cache_get_stats(asc__cache *c, asc__cache_stats *st) {
  scan s;
  int fd;

  if (c == NULL || st == NULL)
    return asc__error(ascErrorInvalidValue, "NULL cache or stats");
  memset(st, 0, sizeof *st);
  memset(&s, 0, sizeof s);
  uv_mutex_lock(&c->lock);
  st->dir = c->dir;
  st->configured = c->configured;
  st->fallback = c->fallback;
  fd = c->dir_fd;
  uv_mutex_unlock(&c->lock);
  st->max_bytes = c->max_bytes;
  st->hits = atomic_load(&c->hits);
  st->misses = atomic_load(&c->misses);
  st->builds = atomic_load(&c->builds);
  st->corrupt = atomic_load(&c->corrupt);
  st->evictions = atomic_load(&c->evictions);
  st->fallbacks = atomic_load(&c->fallbacks);
  st->index_hits = atomic_load(&c->index_hits);
  if (fd >= 0)
    scan_dir(fd, &s, SCAN_STATS);
  st->entries = s.n - s.records;
  st->records = s.records;
  st->bytes = s.bytes;
  st->temporaries = s.temporaries;
  scan_free(&s);
  return ascSuccess;
}

ascError_t asc__cache_clear(asc__cache *c, uint64_t *removed) {
  const char *dir;
  uint64_t n = 0;
  scan s;
  size_t i;
  int fd;

  if (removed != NULL)
    *removed = 0;
  if (c == NULL)
    return asc__error(ascErrorInvalidValue, "NULL cache");
  dir = asc__cache_current_dir(c, &fd);
  if (dir == NULL)
    return asc__error(ascErrorCache, "kernel cache: no usable directory");
  memset(&s, 0, sizeof s);
  scan_dir(fd, &s, SCAN_CLEAR);
  for (i = 0; i < s.n; i++)
    if (entry_remove(fd, &s.v[i]) && strcmp(s.v[i].name + 30, ".so") == 0)
      n++;
  if (s.oom) {
    scan_free(&s);
    return asc__error(ascErrorOutOfMemory, "out of memory clearing %s", dir);
  }
  scan_free(&s);
  if (removed != NULL)
    *removed = n;
  return ascSuccess;
}

/* ------------------------------------------------------------ get/build */

typedef struct key_paths {
  char *sub, *entry, *lockp, *work;  /* for messages, hooks and the build */
} key_paths;

static void key_paths_free(key_paths *p) {
  asc__free(p->sub);
  asc__free(p->entry);
  asc__free(p->lockp);
  asc__free(p->work);
}

/* Opens (creating it if create) the fan-out directory sub of the cache at
 * dfd and checks it: a directory of this user's that no one else may
 * write.  A symbolic link or a file in its place is removed, never
 * followed.  The descriptor, or -1 with errno (EPERM: unsafe). */
int asc__cache_open_sub(int dfd, const char *sub, const char *path,
                        bool create) {
  struct stat st;
  int fd = open_dir_at(dfd, sub);

  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
    remove_at(dfd, sub, 0);
    errno = ENOENT;
  }
  if (fd < 0 && errno == ENOENT && create) {
    if (asc__cache_io_fail("mkdir", path) != 0 ||
        (mkdirat(dfd, sub, 0700) != 0 && errno != EEXIST))
      return -1;
    fd = open_dir_at(dfd, sub);
  }
  if (fd < 0)
    return -1;
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

/* One attempt in dir (open at dfd).  Trouble with the directory itself
 * (cannot create, write, rename) is described in why and ascErrorCache
 * returned, so the caller can move to the fallback directory. */
static ascError_t get_in_dir(asc__cache *c, const char *dir, int dfd,
                             const asc__cache_key *k,
                             asc__cache_build_fn build, void *ud,
                             char **so_path, int *so_fd, asc__buf *why) {
  char sub2[3] = {k->hex[0], k->hex[1], '\0'};
  char entryn[34], lockn[36], workn[48];
  key_paths p;
  entry_state es;
  char *built = NULL;
  ascError_t err = ascSuccess;
  int lfd = -1, subfd = -1, workfd = -1, e;
  size_t wl;

  snprintf(entryn, sizeof entryn, "%s.so", k->hex + 2);
  snprintf(lockn, sizeof lockn, "%s.lock", k->hex + 2);
  snprintf(workn, sizeof workn, ".tmp-%s-XXXXXX", k->hex + 2);
  memset(&p, 0, sizeof p);
  p.sub = path_join(dir, sub2, NULL);
  p.entry = p.sub ? path_join(p.sub, entryn, NULL) : NULL;
  p.lockp = p.sub ? path_join(p.sub, lockn, NULL) : NULL;
  if (p.entry == NULL || p.lockp == NULL) {
    key_paths_free(&p);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }

  subfd = asc__cache_open_sub(dfd, sub2, p.sub, false);
  if (subfd >= 0) {
    es = entry_verify(subfd, entryn, k, so_fd);
    if (es == ENTRY_OK)
      goto hit;
  }

  if (subfd < 0 && (subfd = asc__cache_open_sub(dfd, sub2, p.sub, true)) < 0) {
    asc__buf_printf(why, "cannot create %s: %s", p.sub,
                    errno == EPERM ? "it exists and is not this user's "
                                     "directory, or others may write it"
                                   : strerror(errno));
    goto trouble;
  }
  e = lock_file(subfd, lockn, p.lockp, c->lock_timeout_ms, &lfd);
  if (e == ETIMEDOUT || e == ENOLCK || e == EOPNOTSUPP || e == EINVAL) {
    /* A holder stuck for longer than any compile may take, or a file
     * system without locks: build anyway.  Publishing is atomic, so the
     * worst case is building twice. */
    lfd = -1;
  } else if (e != 0) {
    asc__buf_printf(why, "cannot lock %s: %s", p.lockp, strerror(e));
    goto trouble;
  }
  es = entry_verify(subfd, entryn, k, so_fd);
  if (es == ENTRY_OK)
    goto hit;
  if (es == ENTRY_BAD) {
    atomic_fetch_add(&c->corrupt, 1);
    remove_at(subfd, entryn, 3); /* a file, link, FIFO or directory */
  }
  atomic_fetch_add(&c->misses, 1);

  e = asc__cache_io_fail("mkdtemp", p.sub) != 0
          ? errno
          : asc__mkdtemp_at(subfd, workn);
  if (e != 0) {
    asc__buf_printf(why, "cannot create a work directory in %s: %s", p.sub,
                    strerror(e));
    goto trouble;
  }
  p.work = path_join(p.sub, workn, NULL);
  workfd = open_dir_at(subfd, workn);
  if (p.work == NULL || workfd < 0) {
    err = p.work == NULL ? asc__error(ascErrorOutOfMemory, "out of memory")
                         : asc__error(ascErrorCache, "cannot open %s/%s: %s",
                                      p.sub, workn, strerror(errno));
    remove_at(subfd, workn, 1);
    goto out;
  }
  wl = strlen(p.work);
  err = build(ud, p.work, &built);
  if (err != ascSuccess) {
    /* kept when the build left files to inspect */
    unlinkat(subfd, workn, AT_REMOVEDIR);
    asc__free(built);
    built = NULL;
    if (err == ascErrorCache) {
      asc__buf_puts(why, ascGetLastErrorMessage());
      goto trouble;
    }
    goto out;
  }
  atomic_fetch_add(&c->builds, 1);
  if (built == NULL || strncmp(built, p.work, wl) != 0 || built[wl] != '/' ||
      strchr(built + wl + 1, '/') != NULL) {
    err = asc__error(ascErrorInternal,
                     "kernel cache: build result %s is not in %s",
                     built ? built : "(null)", p.work);
    remove_at(subfd, workn, 1);
    goto out;
  }
  e = entry_publish(workfd, built + wl + 1, built, subfd, entryn, p.entry, k,
                    so_fd);
  remove_at(subfd, workn, 1);
  if (e != 0) {
    asc__buf_printf(why, "cannot write %s: %s", p.entry, strerror(e));
    goto trouble;
  }
  if (lfd >= 0) {
    unlock_file(lfd);
    lfd = -1;
  }
  evict(c, dfd, k);
  goto done;

hit:
  atomic_fetch_add(&c->hits, 1);
done:
  *so_path = p.entry;
  p.entry = NULL;
  goto out;
trouble:
  if (why->oom)
    err = asc__error(ascErrorOutOfMemory, "out of memory");
  else
    err = ascErrorCache;
out:
  if (lfd >= 0)
    unlock_file(lfd);
  if (workfd >= 0)
    close(workfd);
  if (subfd >= 0)
    close(subfd);
  asc__free(built);
  key_paths_free(&p);
  return err;
}

ascError_t asc__cache_get_or_build(asc__cache *c, const asc__cache_key *k,
                                   asc__cache_build_fn build, void *ud,
                                   char **so_path) {
  int fd = -1;
  ascError_t err = asc__cache_get_or_build_fd(c, k, build, ud, so_path, &fd);

  if (fd >= 0)
    close(fd);
  return err;
}

ascError_t asc__cache_get_or_build_fd(asc__cache *c, const asc__cache_key *k,
                                      asc__cache_build_fn build, void *ud,
                                      char **so_path, int *so_fd) {
  ascError_t err;
  int attempt;

  if (so_path != NULL)
    *so_path = NULL;
  if (so_fd != NULL)
    *so_fd = -1;
  if (c == NULL || k == NULL || build == NULL || so_path == NULL ||
      so_fd == NULL)
    return asc__error(ascErrorInvalidValue,
                      "NULL cache, key, build function or result");
  if (!k->final)
    return asc__error(ascErrorInvalidValue, "cache key not finalised");
  for (attempt = 0; attempt < 3; attempt++) {
    int dfd;
    const char *dir = asc__cache_current_dir(c, &dfd);
    asc__buf why;

    if (dir == NULL) {
      /* Not even a private directory could be made so far: try again,
       * /tmp may have room now. */
      err = use_fallback(c, NULL, "no usable directory");
      if (err != ascSuccess)
        return err;
      continue;
    }
    asc__buf_init(&why);
    err = get_in_dir(c, dir, dfd, k, build, ud, so_path, so_fd, &why);
    if (err != ascErrorCache || why.len == 0) {
      asc__buf_free(&why);
      return err;
    }
    err = use_fallback(c, dir, asc__buf_str(&why));
    asc__buf_free(&why);
    if (err != ascSuccess)
      return err;
  }
  return asc__error(ascErrorCache, "kernel cache: no usable directory");
}

/* The fan-out directory of k in the cache's directory, open (read only,
 * not created), and the name of k's file with suffix in it; -1 when there
 * is none.  *dir: the cache's directory. */
int asc__cache_key_sub(asc__cache *c, const asc__cache_key *k,
                       const char *suffix, char *name, size_t n,
                       const char **dir) {
  char sub2[3] = {k->hex[0], k->hex[1], '\0'};
  int dfd;

  *dir = asc__cache_current_dir(c, &dfd);
  if (*dir == NULL)
    return -1;
  snprintf(name, n, "%s%s", k->hex + 2, suffix);
  return asc__cache_open_sub(dfd, sub2, NULL, false);
}

ascError_t asc__cache_lookup_fd(asc__cache *c, const asc__cache_key *k,
                                char **so_path, int *so_fd) {
  char sub2[3] = {k ? k->hex[0] : 0, k ? k->hex[1] : 0, '\0'}, entryn[34];
  char *sub, *path;
  const char *dir;
  int subfd;

  *so_path = NULL;
  *so_fd = -1;
  if (c == NULL || k == NULL || !k->final)
    return asc__error(ascErrorInvalidValue, "NULL cache or unfinished key");
  subfd = asc__cache_key_sub(c, k, ".so", entryn, sizeof entryn, &dir);
  if (subfd < 0)
    return ascErrorFileNotFound;
  /* A bad entry is left to asc__cache_get_or_build, which removes and
   * rebuilds it under the key's lock. */
  if (entry_verify(subfd, entryn, k, so_fd) != ENTRY_OK) {
    close(subfd);
    return ascErrorFileNotFound;
  }
  close(subfd);
  sub = path_join(dir, sub2, NULL);
  path = sub != NULL ? path_join(sub, entryn, NULL) : NULL;
  asc__free(sub);
  if (path == NULL) {
    close(*so_fd);
    *so_fd = -1;
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  atomic_fetch_add(&c->hits, 1);
  *so_path = path;
  return ascSuccess;
}

void asc__cache_key_set(asc__cache_key *k, const unsigned char digest[16]) {
  static const char hexd[] = "0123456789abcdef";

  memset(k, 0, sizeof *k);
  memcpy(k->digest, digest, 16);
  for (int i = 0; i < 16; i++) {
    k->hex[2 * i] = hexd[digest[i] >> 4];
    k->hex[2 * i + 1] = hexd[digest[i] & 15];
  }
  k->hex[32] = '\0';
  k->final = true;
}
