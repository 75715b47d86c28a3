/*
 * Files libasc writes for its user (trace files, ascc's outputs), written
 * as docs/files.md says: the bytes go to a private temporary created in
 * the destination's directory (exclusively, never through a symbolic
 * link), which is renamed over the destination once complete.  A link at
 * the destination is refused, never followed; a FIFO, device, socket or
 * directory there is refused before anything is written; a failed write
 * leaves the destination as it was and no temporary behind.
 */
#ifndef ASC_JIT_FILE_H
#define ASC_JIT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

enum {
  /* An existing destination owned by the effective user keeps its
   * permission bits; otherwise the file gets the mode given to open. */
  ASC__OUTFILE_KEEP_MODE = 1u << 0
};

/* Refusals of asc__outfile_open, beside errno values. */
#define ASC__OUTFILE_LINK (-1)        /* the destination is a symbolic link */
#define ASC__OUTFILE_NOT_REGULAR (-2) /* a FIFO, device or socket */
/* another user's file in a sticky directory, which the rename could not
 * replace */
#define ASC__OUTFILE_NOT_OWNER (-3)

typedef struct asc__outfile {
  int dirfd;          /* the destination's directory */
  int fd;             /* the temporary, open read-write; -1 when done */
  bool own_dirfd;     /* closed with the file */
  unsigned flags;     /* ASC__OUTFILE_* */
  const char *name;   /* the destination's name in dirfd (borrowed) */
  char tmp[256];      /* the temporary's name in dirfd */
  bool exists;        /* the destination existed at open ... */
  struct stat old;    /* ... and was this regular file */
} asc__outfile;

/* Writes n bytes at p to fd, whatever number each write takes.  0 or
 * errno. */
int asc__write_all(int fd, const void *p, size_t n);

/* The directory of path, opened (O_DIRECTORY, following links on the
 * way); *name points to path's last component.  -1 with errno. */
int asc__open_parent(const char *path, const char **name);

/* Starts writing path (which must outlive o).  mode: the new file's
 * permission bits (the umask applies, as to any file created).  Returns
 * 0, an errno value, or one of the refusals above; asc__outfile_strerror
 * says which in words. */
int asc__outfile_open(asc__outfile *o, const char *path, mode_t mode,
                      unsigned flags);
/* The same for the file name in the directory open at dirfd, which stays
 * the caller's. */
int asc__outfile_open_at(asc__outfile *o, int dirfd, const char *name,
                         mode_t mode, unsigned flags);
/* Appends n bytes.  0 or errno. */
int asc__outfile_write(asc__outfile *o, const void *p, size_t n);
/* Appends bytes [0, n) of the file open at fd.  0 or errno. */
int asc__outfile_copy(asc__outfile *o, int fd, size_t n);
/* Puts the file in place of the destination and closes it; on failure
 * removes the temporary.  0 or errno. */
int asc__outfile_commit(asc__outfile *o);
/* Removes the temporary and closes everything (any state; idempotent). */
void asc__outfile_discard(asc__outfile *o);
/* The temporary as an anonymous file: its name is removed and its
 * descriptor returned (the caller's to close); o is closed.  -1 with
 * errno on failure (o is then discarded). */
int asc__outfile_detach(asc__outfile *o);
/* The reason for a value returned above, for "cannot write PATH: %s". */
const char *asc__outfile_strerror(int e);

/* Creates the new directory (dir) or file (mode bits mode, opened
 * O_RDWR | O_EXCL | O_NOFOLLOW | O_CLOEXEC, descriptor in *fd) at name in
 * dfd, whose last six characters ("XXXXXX") are replaced by random ones.
 * 0 or errno. */
int asc__mkdtemp_at(int dfd, char *name);
int asc__mkstemp_at(int dfd, char *name, mode_t mode, int *fd);

#endif /* ASC_JIT_FILE_H */
