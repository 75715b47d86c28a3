/*
 * One compilation = one context: an arena that owns every node, type and IR
 * object of the compilation, the diagnostics collected so far, and the one
 * catch point a fatal error unwinds to (Lua's luaD_pcall).  Nothing in the
 * compiler keeps global state.
 *
 *   asc__cctx c;
 *   jmp_buf jb;
 *   asc__cctx_init(&c, filename, text, len, first_line);
 *   c.catch_point = &jb;
 *   if (setjmp(jb) == 0) { ... parse, type, lower, emit ... }
 *   status = c.fail or c.nerrors ? ascErrorCompile : ascSuccess;
 *   asc__cctx_free(&c);      // frees everything, in one place
 *
 * Locals of the function holding the setjmp that change after it must be
 * volatile (C11 7.13.2.1).
 */
#ifndef ASC_CCTX_H
#define ASC_CCTX_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "compiler/options.h"

/* A source position.  Lines are those of the real file (first_line is
 * added), columns count from 1 in bytes. */
typedef struct asc__loc {
  int32_t line;
  int32_t col;
} asc__loc;

typedef struct asc__arena_chunk asc__arena_chunk;

typedef enum asc__fail {
  ASC_FAIL_NONE = 0,
  ASC_FAIL_ERRORS,  /* user errors: diagnostics say why */
  ASC_FAIL_OOM,     /* an allocation failed */
  ASC_FAIL_INTERNAL /* a compiler bug caught by a check */
} asc__fail;

typedef struct asc__cctx {
  /* source */
  const char *filename;
  const char *text;
  size_t len;
  int32_t first_line;   /* line number of text's first line */
  /* arena */
  asc__arena_chunk *chunks;
  /* diagnostics: "file:line:col: error: msg\n  source\n  ^\n" ... */
  asc__buf diag;
  int nerrors;
  int nwarnings;
  int max_errors;       /* stop after this many (default 20) */
  /* the options (asc__cctx_set_opts; the defaults until then) */
  asc__compile_opts opts;
  /* compile budget (opts.timeout_ms): asc__cctx_budget unwinds once the
   * monotonic clock passes deadline_ns */
  uint64_t budget_ms;
  uint64_t deadline_ns;
  uint32_t ticks;
  /* memory budget (opts.memory_bytes): the bytes both arenas hold,
   * mem_used, may not pass mem_budget */
  uint64_t mem_budget;
  uint64_t mem_used;
  /* what is running, for the budgets' errors */
  const char *phase;
  /* the scratch arena: tables a pass needs only while it runs
   * (asc__scratch_alloc), released after it */
  asc__arena_chunk *scratch;
  /* unwinding */
  jmp_buf *catch_point;
  asc__fail fail;
} asc__cctx;

void asc__cctx_init(asc__cctx *c, const char *filename, const char *text,
                    size_t len, int32_t first_line);
/* Gives c the options o (copied; the strings o points to must outlive c)
 * and its budgets: o->timeout_ms from now, o->memory_bytes.  Call it right after
 * asc__cctx_init. */
void asc__cctx_set_opts(asc__cctx *c, const asc__compile_opts *o);
void asc__cctx_free(asc__cctx *c);

/* Arena allocation: zeroed, 16-byte aligned; unwinds with ASC_FAIL_OOM on
 * failure, so callers never check for NULL, and with an error once the
 * memory budget is spent. */
void *asc__arena_alloc(asc__cctx *c, size_t size);
/* The scratch arena: the same, for memory that is dead once the current
 * step ends.  A mark taken before the step and released after it frees
 * everything allocated in between, so a pass that makes tables for each
 * loop it looks at holds one loop's worth, not one per loop (the pass
 * pipeline and the emitter release after every pass). */
typedef struct asc__scratch_mark {
  asc__arena_chunk *chunk;
  size_t used;
} asc__scratch_mark;
void *asc__scratch_alloc(asc__cctx *c, size_t size);
asc__scratch_mark asc__scratch_get(const asc__cctx *c);
void asc__scratch_release(asc__cctx *c, asc__scratch_mark m);
/* Room for one more element in the arena array v holding n elements of
 * elem bytes in *cap slots: v itself while n < *cap, else a zeroed copy
 * with twice the slots (`first` when *cap is 0), *cap updated.  The old
 * array stays in the arena. */
void *asc__arena_grow(asc__cctx *c, void *v, int32_t n, int32_t *cap,
                      size_t elem, int32_t first);
char *asc__arena_strndup(asc__cctx *c, const char *s, size_t n);
char *asc__arena_printf(asc__cctx *c, const char *fmt, ...) ASC_PRINTF(2, 3);

/* Records an error with the source line and a caret under loc.col, and
 * goes on (the caller recovers).  Unwinds once max_errors is reached. */
void asc__diag_error(asc__cctx *c, asc__loc loc, const char *fmt, ...)
    ASC_PRINTF(3, 4);
/* A warning: reported, but the compilation goes on and succeeds. */
void asc__diag_warning(asc__cctx *c, asc__loc loc, const char *fmt, ...)
    ASC_PRINTF(3, 4);
/* The diagnostics so far, to take back with asc__diag_rollback: a parser
 * that tries input it may ignore (module-level host code) drops the
 * errors of a failed try. */
typedef struct asc__diag_mark {
  size_t len;
  int nerrors;
  int nwarnings;
} asc__diag_mark;
asc__diag_mark asc__diag_mark_get(const asc__cctx *c);
void asc__diag_rollback(asc__cctx *c, asc__diag_mark m);
/* A note attached to the previous error ("note: first used here"). */
void asc__diag_note(asc__cctx *c, asc__loc loc, const char *fmt, ...)
    ASC_PRINTF(3, 4);
/* Records an error and unwinds to the catch point. */
_Noreturn void asc__diag_fatal(asc__cctx *c, asc__loc loc, const char *fmt,
                               ...) ASC_PRINTF(3, 4);
/* Unwinds with the given reason (ASC_FAIL_OOM / ASC_FAIL_INTERNAL / ...). */
_Noreturn void asc__cctx_throw(asc__cctx *c, asc__fail why);
/* An internal consistency check that unwinds instead of aborting. */
#define ASC_CHECK(c, cond)                                                    \
  do {                                                                        \
    if (!(cond))                                                              \
      asc__internal_error((c), __FILE__, __LINE__, #cond);                    \
  } while (0)
_Noreturn void asc__internal_error(asc__cctx *c, const char *file, int line,
                                   const char *what);

/* Unwinds with an error naming `where` and ASC_COMPILE_TIMEOUT_MS once the
 * compilation has used up its budget.  Called between phases and passes. */
void asc__cctx_budget(asc__cctx *c, const char *where);
/* The same, looking at the clock only every 1024th call: for the long
 * loops inside phases and passes (every loop over statements, loop nests
 * or instructions calls it), so a compilation stops soon after its
 * budget, not at the end of the pass that overran it. */
static inline void asc__cctx_tick(asc__cctx *c, const char *where) {
  c->phase = where;
  if ((++c->ticks & 1023u) == 0)
    asc__cctx_budget(c, where);
}

/* The text of source line `line` (a real-file line number) without its
 * newline, and its length; NULL when out of range. */
const char *asc__source_line(const asc__cctx *c, int32_t line, size_t *len);

/* Where every line of a text starts, for lookups in O(1) by code that asks
 * for many lines (the emitter's comments); built once in O(len). */
typedef struct asc__lineidx {
  const char *text;
  size_t len;
  int32_t first_line;
  int32_t n;            /* lines */
  const char **starts;  /* n + 1 entries, the last one text + len + 1 */
} asc__lineidx;
void asc__lineidx_init(asc__cctx *c, asc__lineidx *x, const char *text,
                       size_t len, int32_t first_line);
/* As asc__source_line, for a text indexed by asc__lineidx_init. */
const char *asc__lineidx_get(const asc__lineidx *x, int32_t line, size_t *len);

#endif /* ASC_CCTX_H */
