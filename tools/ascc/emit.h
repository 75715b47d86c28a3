/*
 * ascc --emit=MODE: one function per mode, listed in the table in
 * emit_cmd.c.  Each stage adds its mode there (types, ir, c, so) with a
 * function in its own file.
 */
#ifndef ASCC_EMIT_H
#define ASCC_EMIT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "compiler/cctx.h"

#define ASCC_MAX_SIGNATURES 256

typedef struct ascc_emit_args {
  const char *mode;
  const char *path;        /* the source file */
  const char *text;        /* its contents */
  size_t len;
  struct stat path_st;     /* the source file, never overwritten */
  const char *signature;   /* the first --signature, NULL when absent */
  const char *signatures[ASCC_MAX_SIGNATURES]; /* every --signature */
  int nsignatures;
  const char *out;         /* -o, NULL: stdout (so: STEM.so) */
  int opt_level;           /* -O0..-O3; -1: default */
  unsigned fastmath;       /* --fastmath[=FLAGS]: ASC_FASTMATH_* bits for
                              kernels whose decorator does not say */
  int boundscheck;         /* --boundscheck */
  const char *march;       /* -march=...; NULL: the C compiler's default */
  uint64_t l1d_bytes;      /* --l1-cache: the L1 data cache the loop-nest
                              passes size tiles for; 0: their default */
} ascc_emit_args;

/* Runs a stage over c (already initialised from the file, with its catch
 * point set) and appends its text form to out; may unwind through c.
 * Returns 0, or 2 for a usage problem it has reported on stderr. */
typedef int (*ascc_emit_fn)(const ascc_emit_args *a, asc__cctx *c,
                            asc__buf *out);

int ascc_emit_tokens(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_ast(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_types(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_ir(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_c(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
/* The ahead-of-time module (emit_so.c): --emit=so compiles it to a shared
 * object itself (out stays empty), --emit=h is its C header. */
int ascc_emit_so(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
int ascc_emit_h(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);
/* --emit=c of a .py file: the C text --emit=so compiles. */
int ascc_emit_aot_c(const ascc_emit_args *a, asc__cctx *c, asc__buf *out);

/* Writes n bytes of data, or when data is NULL the n bytes of the file
 * open at fd, to path through a private temporary renamed into place
 * (docs/files.md); the file gets mode less the umask.  Refuses the
 * source file itself and anything but a regular file or a new name.
 * Returns 0, or 2 after saying why on stderr; nothing is left behind on
 * failure. */
int ascc_write_output(const ascc_emit_args *a, const char *path,
                      const void *data, int fd, size_t n, mode_t mode);

struct asc__ast_module;
struct asc__ast_func;
/* The kernel of m called name; NULL after printing, on stderr, that the
 * file has none and which kernels it has. */
struct asc__ast_func *ascc_find_kernel(const ascc_emit_args *a,
                                       const struct asc__ast_module *m,
                                       const char *name);

#endif
