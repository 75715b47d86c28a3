/*
 * The recorder behind the hooks of base/trace.h, for the code that reads
 * what it records: the runtime's trace session and its stream hooks
 * (runtime/trace.c, docs/tracing.md).
 *
 * Each thread appends fixed-size records to its own chunk without a lock;
 * a full chunk is replaced by a new one, registered once in a list under
 * the recorder's lock.  Records are published by a release store of the
 * chunk's count, so a drain reads whole records only.
 */
#ifndef ASC_BASE_TRACE_REC_H
#define ASC_BASE_TRACE_REC_H

#include <stddef.h>
#include <stdint.h>

#include "base/trace.h"

/* Record types the recorder writes itself; a reader's own start at
 * ASC__TR_USER. */
enum {
  ASC__TR_SPAN = 1,    /* X on the thread's track */
  ASC__TR_MARK,        /* X, zero length, on the thread's track */
  ASC__TR_POOL,        /* X mark on the thread + C on the pool's counter */
  ASC__TR_USER
};

#define ASC__TRACE_NAME_MAX 46

/* 128 bytes: a launch writes two, and fresh chunk pages cost page
 * faults, so records stay small; the rare long text (an exception, a
 * signature, a compile's detail) is allocated. */
typedef struct asc__trace_rec {
  uint64_t ts, end;
  uint64_t id;            /* launch id; flow: record's time */
  uint64_t a0, a1, a2;
  const void *track;      /* stream (or pool) for stream records */
  const void *track2;     /* a second object the record names */
  const char *cat;        /* static string */
  char *detail;           /* owned; freed by the drain */
  uint8_t type;
  uint8_t flag;
  char name[ASC__TRACE_NAME_MAX];
} asc__trace_rec;

/* The calling thread's next record, with these fields set and the others
 * zero (detail copied), or NULL when it is dropped (memory ran out, or
 * the chunks waiting for a drain reached the limit).  asc__trace_rec_put
 * publishes it. */
asc__trace_rec *asc__trace_rec_begin(int type, const char *cat,
                                     const char *name, const char *detail,
                                     uint64_t t0, uint64_t t1);
void asc__trace_rec_put(void);
/* The calling thread's track, from 1, given at its first record. */
int asc__trace_tid(void);

/* The recorder's lock.  It guards the chunk list and, by the reader's
 * choice, the reader's session; a leaf lock except that a drain's visitor
 * allocates while holding it. */
void asc__trace_lock(void);
void asc__trace_unlock(void);

/* Lock held: calls fn with the records of each chunk published since the
 * last drain (n of them at recs), and the track and name of the thread
 * that wrote them; then frees their details and keeps or frees the chunks
 * that will not change again. */
typedef void (*asc__trace_visit_fn)(void *ud, int tid, const char *tname,
                                    const asc__trace_rec *recs, size_t n);
void asc__trace_drain(asc__trace_visit_fn fn, void *ud);
/* Lock held: drops, unread, every record published so far. */
void asc__trace_discard(void);
/* Records may wait for a drain in at most about max_bytes of chunks (at
 * least one), past which they are dropped and counted; the count starts
 * again from 0. */
void asc__trace_limit(uint64_t max_bytes);
/* Records dropped since asc__trace_limit, and in *first (when not NULL)
 * the trace-clock time of the first of them. */
uint64_t asc__trace_dropped(uint64_t *first);

/* Decides the clock (asc__trace_clk), once. */
void asc__trace_clock_init(void);
/* The clock's rate in nanoseconds per tick (1 for CLOCK_MONOTONIC),
 * measured against CLOCK_MONOTONIC since the clock was decided; waits
 * until at least 10 ms have passed. */
double asc__trace_ns_per_tick(void);

/* Lock held: the signature asc__trace_sig remembered for desc, or NULL;
 * asc__trace_sig_clear forgets them all. */
const char *asc__trace_sig_of(const void *desc);
void asc__trace_sig_clear(void);

#endif /* ASC_BASE_TRACE_REC_H */
