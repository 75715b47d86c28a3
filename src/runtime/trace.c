/*
 * Tracing (see trace.h and docs/tracing.md).
 *
 * Record flow: a hook checks asc__trace_on (relaxed), fills the next
 * record of the calling thread's chunk and publishes it with a release
 * store of the chunk's count.  The flusher takes the list lock, reads each
 * chunk's count with acquire, formats the records it has not read yet and
 * appends the text to the session's spool (an unnamed file in the trace
 * file's directory), then writes the file from the spool through a
 * private temporary renamed into place (jit/file.h, docs/files.md).  A
 * record that a thread finishes after the session stopped lands in its
 * chunk and is dropped by the next session, which keeps only records
 * stamped after its start.
 *
 * Memory: chunks waiting for a flush are counted; past
 * $ASC_TRACE_MAX_BYTES of them a record is dropped and counted instead,
 * and the file and stderr say how many (docs/tracing.md, "Cost").
 *
 * Tracks: pid 1 holds one track per stream (tid = order of first
 * appearance) and the pool counters; pid 2 one track per thread that
 * recorded something (workers, host threads, the callback thread).
 */
#include "runtime/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "base/env.h"
#include "jit/file.h"
#include "runtime/stream.h"

enum {
  TR_SPAN = 1,    /* X on the thread's track */
  TR_MARK,        /* X, zero length, on the thread's track */
  TR_LAUNCH,      /* X on a stream track */
  TR_BLOCK,       /* X on the thread's track */
  TR_HOSTFN,      /* X on a stream track and on the thread's track */
  TR_RECORD,      /* X, zero length, on a stream track */
  TR_WAIT,        /* X on a stream track + flow from the record */
  TR_POOL,        /* X mark on the thread + C on the pool's counter */
  TR_EXTERN       /* X on a stream track */
};

#define NAME_MAX_ 46

/* 128 bytes: a launch writes two, and fresh chunk pages cost page
 * faults, so records stay small; the rare long text (an exception, a
 * signature, a compile's detail) is allocated. */
typedef struct rec {
  uint64_t ts, end;
  uint64_t id;            /* launch id; flow: record's time */
  uint64_t a0, a1, a2;
  const void *track;      /* stream (or pool) for stream records */
  const void *track2;     /* WAIT: the recording stream */
  const char *cat;        /* static string */
  char *detail;           /* owned; freed by the flush */
  uint8_t type;
  uint8_t flag;           /* stream is the default stream */
  char name[NAME_MAX_];
} rec;

#define CHUNK_RECS 512
/* Chunks that a flush read to the end are kept for reuse, up to this
 * many (4 MiB): their pages are already mapped. */
#define SPARE_MAX 64

typedef struct chunk {
  struct chunk *next;          /* under list_lock */
  int tid;                     /* the owning thread's track */
  char tname[32];
  size_t read;                 /* under list_lock: records flushed */
  atomic_int full;             /* the owner moved to a new chunk */
  _Atomic size_t n;            /* published records */
  rec recs[CHUNK_RECS];
} chunk;

atomic_int asc__trace_on;
atomic_int asc__trace_clk;

/* The calling thread's recording state: one TLS block, so a hook looks
 * its thread up once. */
static _Thread_local struct {
  chunk *chunk;
  int tid;                     /* track, assigned at the first record */
  uint32_t launches;           /* launch ids handed out by this thread */
  uint64_t block_launch;       /* trace id of the last block recorded */
  uint64_t block_end;          /* and when it ended */
  char name[32];
} tl;

static uv_once_t once = UV_ONCE_INIT;
/* Guards the chunk list and the session below.  A leaf lock except that
 * the flusher allocates while holding it. */
static uv_mutex_t list_lock;
static chunk *chunks;
static atomic_int next_tid;
static _Atomic uint64_t next_flow_id;
static chunk *spare;           /* under list_lock: chunks to reuse */
static int nspare;
/* Chunks on the list (written to under list_lock), and how many may be:
 * a record that would need one more is dropped. */
static atomic_size_t nheld;
static atomic_size_t max_held = SIZE_MAX;
/* Records the session dropped, and the trace-clock time of the first. */
static _Atomic uint64_t dropped;
static _Atomic uint64_t first_drop;

/* Formatted text is written to the spool in pieces of this size. */
#define SPOOL_PIECE ((size_t)1 << 20)

static asc__env_num max_bytes_env = {"ASC_TRACE_MAX_BYTES",
                                     (uint64_t)256 << 20, 1, UINT64_MAX,
                                     ASC__ENV_SUFFIXES, false};

/* The session: under list_lock. */
static struct {
  bool active;
  bool from_env;
  char *path;
  int dirfd;                   /* the file's directory */
  const char *name;            /* the file's name in it (in path) */
  int spool;                   /* unnamed file: the events formatted so far */
  uint64_t spool_len;
  int spool_err;               /* errno of a failed spool write, or 0 */
  uint64_t max_bytes;          /* ASC_TRACE_MAX_BYTES */
  uint64_t t0;                 /* trace clock at the start */
  double ns_per_tick;          /* fixed at the session's first flush */
  asc__buf events;             /* formatted events not yet in the spool,
                                  each starting with ",\n" */
  const void *streams[256];    /* stream track tid = index + 1 */
  bool stream_default[256];
  int nstreams;
  const void *pools[64];
  int npools;
  int tids[1024];              /* thread tracks named so far */
  char tnames[1024][32];
  int ntids;
  /* Specialisation signatures of kernels compiled while tracing. */
  const void *sig_desc[256];
  char *sig_text[256];
  int nsigs;
} S;

static bool atexit_done;

static void init_once(void) { uv_mutex_init(&list_lock); }

/* ---------------------------------------------------------------- clock */

/* The TSC is used when all of these hold (else CLOCK_MONOTONIC):
 * x86-64; /proc/cpuinfo lists constant_tsc (a fixed rate whatever the
 * core's frequency) and nonstop_tsc (it runs in deep C-states); the
 * kernel's current clocksource is "tsc" (the kernel checked that the
 * cores' counters agree, and switches away from it when they do not);
 * and $ASC_TRACE_CLOCK is not "monotonic".  Ticks become nanoseconds at
 * the flush, by the rate measured against CLOCK_MONOTONIC from the first
 * session's start to the flush: one linear map for every thread, so the
 * order of timestamps is kept exactly and durations are off by the rate's
 * error (well under 0.01 %: the flush measures over at least 10 ms). */
static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uv_once_t clk_once = UV_ONCE_INIT;
static uint64_t cal_tick, cal_ns;    /* the anchor, set once in clk_init */

static bool file_has(const char *path, const char *word, bool whole_line) {
  FILE *f = fopen(path, "r");
  char line[4096];
  bool found = false;
  size_t n = strlen(word);

  if (f == NULL)
    return false;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    if (whole_line) {
      found = strncmp(line, word, n) == 0 &&
              (line[n] == '\n' || line[n] == '\0');
      continue;
    }
    for (char *p = strstr(line, word); p != NULL && !found;
         p = strstr(p + 1, word))
      found = (p == line || p[-1] == ' ') &&
              (p[n] == ' ' || p[n] == '\n' || p[n] == '\0');
    if (strncmp(line, "flags", 5) == 0)
      break;    /* the first core's flags are enough */
  }
  fclose(f);
  return found;
}

/* A (tick, ns) pair read as close together as three tries allow. */
static void clock_pair(uint64_t *tick, uint64_t *ns) {
  uint64_t best = UINT64_MAX;

  for (int i = 0; i < 3; i++) {
    uint64_t a = mono_ns(), t = asc__trace_now(), b = mono_ns();
    if (b - a < best) {
      best = b - a;
      *tick = t;
      *ns = a + (b - a) / 2;
    }
  }
}

static void clk_init(void) {
  int kind = 1;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const char *env = getenv("ASC_TRACE_CLOCK");

  if ((env == NULL || strcmp(env, "monotonic") != 0) &&
      file_has("/proc/cpuinfo", "constant_tsc", false) &&
      file_has("/proc/cpuinfo", "nonstop_tsc", false) &&
      file_has("/sys/devices/system/clocksource/clocksource0/"
               "current_clocksource",
               "tsc", true))
    kind = 2;
#endif
  atomic_store(&asc__trace_clk, kind);
  clock_pair(&cal_tick, &cal_ns);
}

uint64_t asc__trace_now_slow(void) {
  int k = atomic_load_explicit(&asc__trace_clk, memory_order_acquire);

  if (k == 0) {
    uv_once(&clk_once, clk_init);
    k = atomic_load(&asc__trace_clk);
  }
  return k == 2 ? asc__trace_now() : mono_ns();
}

/* list_lock held: the session's rate, measured at its first flush. */
static void fix_rate(void) {
  uint64_t tick = 0, ns;

  if (S.ns_per_tick != 0)
    return;
  if (atomic_load(&asc__trace_clk) != 2) {
    S.ns_per_tick = 1;
    return;
  }
  /* Short first sessions wait for a measurable interval. */
  ns = mono_ns();
  if (ns - cal_ns < 10000000u)
    uv_sleep((unsigned)((10000000u - (ns - cal_ns)) / 1000000u) + 1);
  clock_pair(&tick, &ns);
  S.ns_per_tick = tick > cal_tick ? (double)(ns - cal_ns) /
                                        (double)(tick - cal_tick)
                                  : 1;
}

void asc__trace_thread_name(const char *prefix, int n) {
  if (n >= 0)
    snprintf(tl.name, sizeof tl.name, "%s %d", prefix, n);
  else
    snprintf(tl.name, sizeof tl.name, "%s", prefix);
}

/* ---------------------------------------------------------- recording */

static int my_tid(void) {
  if (tl.tid == 0)
    tl.tid = atomic_fetch_add(&next_tid, 1) + 1;
  return tl.tid;
}

/* A chunk for this thread: a spare one (its pages mapped already), else
 * a new one whose pages are mapped here in one call rather than by a
 * page fault each in the records that follow. */
static chunk *chunk_new(void) {
  chunk *c;

  uv_once(&once, init_once);
  uv_mutex_lock(&list_lock);
  c = spare;
  if (c != NULL) {
    spare = c->next;
    nspare--;
  }
  uv_mutex_unlock(&list_lock);
  if (c == NULL) {
    c = asc__malloc(sizeof *c);
    if (c == NULL)
      return NULL;
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    {
      uintptr_t a = ((uintptr_t)c + 4095) & ~(uintptr_t)4095;
      uintptr_t e = ((uintptr_t)c + sizeof *c) & ~(uintptr_t)4095;
      if (e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
    }
#endif
  }
  c->tid = my_tid();
  if (tl.name[0] != '\0')
    snprintf(c->tname, sizeof c->tname, "%s", tl.name);
  else
    snprintf(c->tname, sizeof c->tname, "host thread %d", c->tid);
  c->read = 0;
  atomic_init(&c->full, 0);
  atomic_init(&c->n, 0);
  uv_mutex_lock(&list_lock);
  c->next = chunks;
  chunks = c;
  atomic_fetch_add_explicit(&nheld, 1, memory_order_relaxed);
  uv_mutex_unlock(&list_lock);
  return c;
}

static void drop(void) {
  if (atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed) == 0)
    atomic_store_explicit(&first_drop, asc__trace_now(),
                          memory_order_relaxed);
}

/* The next free record of this thread, or NULL (out of memory). */
static rec *rec_get(void) {
  chunk *c = tl.chunk;
  size_t n;

  if (c == NULL || atomic_load_explicit(&c->n, memory_order_relaxed) ==
                       CHUNK_RECS) {
    /* Past the limit the thread keeps its full chunk (not marked full,
     * so no flush recycles it under the thread) and drops the record. */
    chunk *nc = atomic_load_explicit(&nheld, memory_order_relaxed) <
                        atomic_load_explicit(&max_held, memory_order_relaxed)
                    ? chunk_new()
                    : NULL;
    if (nc == NULL) {
      drop();
      return NULL;
    }
    tl.chunk = nc;
    if (c != NULL)
      atomic_store_explicit(&c->full, 1, memory_order_release);
    c = nc;
  }
  n = atomic_load_explicit(&c->n, memory_order_relaxed);
  return &c->recs[n];
}

static void rec_put(void) {
  chunk *c = tl.chunk;
  atomic_store_explicit(&c->n,
                        atomic_load_explicit(&c->n, memory_order_relaxed) + 1,
                        memory_order_release);
}

static void copy_str(char *dst, size_t cap, const char *s) {
  size_t n = s != NULL ? strlen(s) : 0;

  if (n >= cap)
    n = cap - 1;
  if (n != 0)
    memcpy(dst, s, n);
  dst[n] = '\0';
}

static rec *rec_begin(int type, const char *cat, const char *name,
                      const char *detail, uint64_t t0, uint64_t t1) {
  rec *r = rec_get();

  if (r == NULL)
    return NULL;
  r->type = (uint8_t)type;
  r->cat = cat;
  r->ts = t0;
  r->end = t1;
  r->id = r->a0 = r->a1 = r->a2 = 0;
  r->track = r->track2 = NULL;
  r->flag = 0;
  copy_str(r->name, sizeof r->name, name);
  r->detail = detail != NULL && detail[0] != '\0' ? asc__strdup(detail)
                                                   : NULL;
  return r;
}

void asc__trace_span(const char *cat, const char *name, const char *detail,
                     uint64_t bytes, uint64_t t0) {
  rec *r;

  if (t0 == 0 || (r = rec_begin(TR_SPAN, cat, name, detail, t0,
                                asc__trace_now())) == NULL)
    return;
  r->a0 = bytes;
  rec_put();
}

void asc__trace_mark(const char *cat, const char *name, const char *detail) {
  uint64_t t = asc__trace_now();

  if (rec_begin(TR_MARK, cat, name, detail, t, t) != NULL)
    rec_put();
}

void asc__trace_pool(const char *name, const void *pool, uint64_t bytes,
                     uint64_t reserved, uint64_t used) {
  uint64_t t = asc__trace_now();
  rec *r = rec_begin(TR_POOL, "memory", name, NULL, t, t);

  if (r == NULL)
    return;
  r->track = pool;
  r->a0 = bytes;
  r->a1 = reserved;
  r->a2 = used;
  rec_put();
}

void asc__trace_op_queued(asc__op *op) {
  op->trace_ns[0] = asc__trace_now();
}

/* Launch ids come from the starting thread's own counter (no shared
 * cache line): its track number in the high 32 bits. */
void asc__trace_op_started(asc__op *op) {
  op->trace_ns[1] = asc__trace_now();
  if (op->kind == OP_LAUNCH)
    op->launch.trace_id = ((uint64_t)(uint32_t)my_tid() << 32) |
                          ++tl.launches;
}

static rec *stream_rec(int type, const char *name, asc__stream *st,
                       const asc__op *op, uint64_t t1) {
  rec *r = rec_begin(type, "stream", name, NULL, op->trace_ns[1], t1);

  if (r == NULL)
    return NULL;
  r->track = st;
  r->flag = st->is_default;
  r->a2 = op->trace_ns[0];    /* queued at */
  return r;
}

void asc__trace_launch_done(asc__op *op, const char *error) {
  const asc__launch *l = &op->launch;
  rec *r;
  uint64_t t1;

  if (op->trace_ns[1] == 0)
    return;
  /* A one-block launch ends with its block, which this thread ran and
   * recorded just before counting it done: reuse that time.  Otherwise
   * read now, after every block has counted itself done: the end of the
   * thread's own last block could be earlier than another thread's block
   * of this launch (each takes its end time before it counts itself). */
  if (l->nblocks == 1 && l->trace_id != 0 && tl.block_launch == l->trace_id)
    t1 = tl.block_end;
  else
    t1 = asc__trace_now();
  r = stream_rec(TR_LAUNCH, l->desc->name, op->stream, op, t1);
  if (r == NULL)
    return;
  r->cat = "launch";
  r->id = l->trace_id;
  r->a0 = l->nblocks;
  r->a1 = (uint64_t)l->team;
  r->track2 = l->desc;
  if (error != NULL && error[0] != '\0')
    r->detail = asc__strdup(error);
  rec_put();
}

/* An external op's span: from the started hook to its completion, on
 * the completing thread (any thread). */
void asc__trace_extern_done(asc__op *op, const char *error) {
  rec *r = stream_rec(TR_EXTERN, op->xname, op->stream, op,
                      asc__trace_now());

  if (r == NULL)
    return;
  r->cat = "extern";
  r->a0 = op->xbytes;
  if (error != NULL && error[0] != '\0')
    r->detail = asc__strdup(error);
  rec_put();
}

void asc__trace_block(const asc__launch *l, uint32_t block, uint64_t t0) {
  rec *r;

  uint64_t t1;

  if (t0 == 0)
    return;
  t1 = asc__trace_now();
  tl.block_launch = l->trace_id;
  tl.block_end = t1;
  if ((r = rec_begin(TR_BLOCK, "block", l->desc->name, NULL, t0, t1)) == NULL)
    return;
  r->id = l->trace_id;
  r->a0 = block;
  r->a1 = l->nblocks;
  rec_put();
}

void asc__trace_hostfn(asc__op *op, uint64_t t0) {
  rec *r;

  if (t0 == 0 || op->trace_ns[1] == 0 ||
      (r = stream_rec(TR_HOSTFN, "host function", op->stream, op,
                      asc__trace_now())) == NULL)
    return;
  r->a0 = t0;    /* when it started running on this thread */
  rec_put();
}

void asc__trace_record(asc__stream *st, asc__op *op) {
  rec *r;
  /* Read when the fence was signalled (0: tracing started since). */
  uint64_t t = op->fence->trace_ts != 0 ? op->fence->trace_ts
                                        : asc__trace_now();

  op->trace_ns[1] = t;
  if ((r = stream_rec(TR_RECORD, "event record", st, op, t)) == NULL)
    return;
  r->cat = "event";
  rec_put();
}

void asc__trace_wait(asc__stream *st, asc__op *op) {
  uint64_t t1 = asc__trace_now();
  rec *r;

  if (op->trace_ns[1] == 0)
    op->trace_ns[1] = t1;
  if ((r = stream_rec(TR_WAIT, "event wait", st, op, t1)) == NULL)
    return;
  r->cat = "event";
  r->id = atomic_fetch_add(&next_flow_id, 1) + 1;
  r->a0 = op->fence->trace_ts;
  r->track2 = op->fence->err_stream;
  rec_put();
}

/* -------------------------------------------------------------- output */

static int stream_tid(const void *st, bool is_default) {
  for (int i = 0; i < S.nstreams; i++)
    if (S.streams[i] == st)
      return i + 1;
  if (S.nstreams == (int)ASC_ARRAY_SIZE(S.streams))
    return (int)ASC_ARRAY_SIZE(S.streams);
  S.streams[S.nstreams] = st;
  S.stream_default[S.nstreams] = is_default;
  return ++S.nstreams;
}

static int pool_index(const void *p) {
  for (int i = 0; i < S.npools; i++)
    if (S.pools[i] == p)
      return i;
  if (S.npools == (int)ASC_ARRAY_SIZE(S.pools))
    return S.npools - 1;
  S.pools[S.npools] = p;
  return S.npools++;
}

static void note_thread(const chunk *c) {
  for (int i = 0; i < S.ntids; i++)
    if (S.tids[i] == c->tid)
      return;
  if (S.ntids == (int)ASC_ARRAY_SIZE(S.tids))
    return;
  S.tids[S.ntids] = c->tid;
  snprintf(S.tnames[S.ntids], sizeof S.tnames[0], "%s", c->tname);
  S.ntids++;
}

static const char *sig_of(const void *desc) {
  for (int i = 0; i < S.nsigs; i++)
    if (S.sig_desc[i] == desc)
      return S.sig_text[i];
  return NULL;
}

/* JSON string contents: plain runs in one copy each. */
static void put_json(asc__buf *b, const char *s) {
  while (*s != '\0') {
    size_t n = 0;
    unsigned char ch;
    while ((ch = (unsigned char)s[n]) != '\0' && ch != '"' && ch != '\\' &&
           ch >= 0x20)
      n++;
    if (n != 0)
      asc__buf_put(b, s, n);
    s += n;
    if (ch == '\0')
      break;
    if (ch == '"' || ch == '\\')
      asc__buf_printf(b, "\\%c", ch);
    else
      asc__buf_printf(b, "\\u%04x", ch);
    s++;
  }
}

/* The flush formats several numbers per record: decimal digits by hand,
 * not through printf. */
static void put_u(asc__buf *b, uint64_t v) {
  char d[20];
  int i = (int)sizeof d;

  do {
    d[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  asc__buf_put(b, d + i, sizeof d - (size_t)i);
}

/* s, then v. */
static void put_su(asc__buf *b, const char *s, uint64_t v) {
  asc__buf_puts(b, s);
  put_u(b, v);
}

/* Nanoseconds since the session's start of trace-clock time t >= S.t0. */
static uint64_t ns_of(uint64_t t) {
  return t <= S.t0 ? 0 : (uint64_t)((double)(t - S.t0) * S.ns_per_tick + 0.5);
}

/* pre, then ns as microseconds with three decimals (integers: no
 * floating-point formatting in the flush). */
static void put_us(asc__buf *b, const char *pre, uint64_t ns) {
  unsigned f = (unsigned)(ns % 1000);
  char frac[4] = {'.', (char)('0' + f / 100), (char)('0' + f / 10 % 10),
                  (char)('0' + f % 10)};

  put_su(b, pre, ns / 1000);
  asc__buf_put(b, frac, sizeof frac);
}

/* A duration: the difference of the converted ends, so ts + dur is the
 * end exactly. */
static uint64_t dur_ns(uint64_t t0, uint64_t t1) {
  return t1 > t0 ? ns_of(t1) - ns_of(t0) : 0;
}

static void ev_begin(asc__buf *b, char ph, const char *cat, const char *name,
                     int pid, int tid, uint64_t ts) {
  char head[11] = {',', '\n', '{', '"', 'p', 'h', '"', ':', '"', ph, '"'};

  asc__buf_put(b, head, sizeof head);
  asc__buf_puts(b, ",\"cat\":\"");
  asc__buf_puts(b, cat);
  asc__buf_puts(b, "\",\"name\":\"");
  put_json(b, name);
  put_su(b, "\",\"pid\":", (uint64_t)pid);
  put_su(b, ",\"tid\":", (uint64_t)tid);
  put_us(b, ",\"ts\":", ns_of(ts));
}

static void ev_dur(asc__buf *b, uint64_t t0, uint64_t t1) {
  put_us(b, ",\"dur\":", dur_ns(t0, t1));
}

static void format(asc__buf *b, const chunk *c, const rec *r) {
  int tid;

  if (r->ts < S.t0)
    return;
  switch (r->type) {
  case TR_SPAN:
  case TR_MARK:
    ev_begin(b, 'X', r->cat, r->name, 2, c->tid, r->ts);
    ev_dur(b, r->ts, r->end);
    asc__buf_puts(b, ",\"args\":{");
    if (r->detail != NULL) {
      asc__buf_puts(b, "\"detail\":\"");
      put_json(b, r->detail);
      asc__buf_puts(b, r->a0 != 0 ? "\"," : "\"");
    }
    if (r->a0 != 0)
      asc__buf_printf(b, "\"bytes\":%" PRIu64, r->a0);
    asc__buf_puts(b, "}}");
    break;
  case TR_BLOCK:
    ev_begin(b, 'X', r->cat, r->name, 2, c->tid, r->ts);
    ev_dur(b, r->ts, r->end);
    put_su(b, ",\"args\":{\"launch\":", r->id);
    put_su(b, ",\"block\":", r->a0);
    put_su(b, ",\"blocks\":", r->a1);
    asc__buf_puts(b, "}}");
    break;
  case TR_LAUNCH: {
    const char *sig = sig_of(r->track2);
    tid = stream_tid(r->track, r->flag);
    ev_begin(b, 'X', r->cat, r->name, 1, tid, r->ts);
    ev_dur(b, r->ts, r->end);
    put_su(b, ",\"args\":{\"launch\":", r->id);
    put_su(b, ",\"blocks\":", r->a0);
    put_su(b, ",\"team\":", r->a1);
    if (r->a2 >= S.t0 && r->a2 <= r->ts)
      put_us(b, ",\"queued_us\":", dur_ns(r->a2, r->ts));
    if (sig != NULL) {
      asc__buf_puts(b, ",\"signature\":\"");
      put_json(b, sig);
      asc__buf_puts(b, "\"");
    }
    if (r->detail != NULL) {
      asc__buf_puts(b, ",\"error\":\"");
      put_json(b, r->detail);
      asc__buf_puts(b, "\"");
    }
    asc__buf_puts(b, "}}");
    break;
  }
  case TR_HOSTFN:
    tid = stream_tid(r->track, r->flag);
    ev_begin(b, 'X', "hostfn", r->name, 1, tid, r->ts);
    ev_dur(b, r->ts, r->end);
    if (r->a2 >= S.t0 && r->a2 <= r->ts) {
      put_us(b, ",\"args\":{\"queued_us\":", dur_ns(r->a2, r->ts));
      asc__buf_puts(b, "}}");
    } else
      asc__buf_puts(b, ",\"args\":{}}");
    if (r->a0 >= S.t0) {
      ev_begin(b, 'X', "hostfn", r->name, 2, c->tid, r->a0);
      ev_dur(b, r->a0, r->end);
      asc__buf_puts(b, ",\"args\":{}}");
    }
    break;
  case TR_EXTERN: {
    const char *sep = "";
    tid = stream_tid(r->track, r->flag);
    ev_begin(b, 'X', r->cat, r->name, 1, tid, r->ts);
    ev_dur(b, r->ts, r->end);
    asc__buf_puts(b, ",\"args\":{");
    if (r->a0 != 0) {
      put_su(b, "\"bytes\":", r->a0);
      sep = ",";
    }
    if (r->a2 >= S.t0 && r->a2 <= r->ts) {
      asc__buf_puts(b, sep);
      put_us(b, "\"queued_us\":", dur_ns(r->a2, r->ts));
      sep = ",";
    }
    if (r->detail != NULL) {
      asc__buf_puts(b, sep);
      asc__buf_puts(b, "\"error\":\"");
      put_json(b, r->detail);
      asc__buf_puts(b, "\"");
    }
    asc__buf_puts(b, "}}");
    break;
  }
  case TR_RECORD:
    tid = stream_tid(r->track, r->flag);
    ev_begin(b, 'X', r->cat, r->name, 1, tid, r->ts);
    ev_dur(b, r->ts, r->end);
    asc__buf_puts(b, ",\"args\":{}}");
    break;
  case TR_WAIT:
    tid = stream_tid(r->track, r->flag);
    ev_begin(b, 'X', r->cat, r->name, 1, tid, r->ts);
    ev_dur(b, r->ts, r->end);
    asc__buf_printf(b, ",\"args\":{\"flow\":%" PRIu64 "}}", r->id);
    /* The arrow from the record's slice to the end of this wait; a
     * record from before the session has no slice to start from. */
    if (r->track2 != NULL && r->a0 >= S.t0 && r->a0 <= r->end) {
      int rtid = stream_tid(r->track2, false);
      ev_begin(b, 's', "flow", "event", 1, rtid, r->a0);
      asc__buf_printf(b, ",\"id\":%" PRIu64 "}", r->id);
      ev_begin(b, 'f', "flow", "event", 1, tid, r->end);
      asc__buf_printf(b, ",\"id\":%" PRIu64 ",\"bp\":\"e\"}", r->id);
    }
    break;
  case TR_POOL: {
    int p = pool_index(r->track);
    ev_begin(b, 'X', r->cat, r->name, 2, c->tid, r->ts);
    asc__buf_printf(b, ",\"dur\":0,\"args\":{\"bytes\":%" PRIu64 "}}", r->a0);
    asc__buf_printf(b,
                    ",\n{\"ph\":\"C\",\"cat\":\"memory\",\"name\":\"pool %d\","
                    "\"pid\":1,\"tid\":0",
                    p);
    put_us(b, ",\"ts\":", ns_of(r->ts));
    asc__buf_printf(b,
                    ",\"args\":{\"reserved\":%" PRIu64 ",\"used\":%" PRIu64
                    "}}",
                    r->a1, r->a2);
    break;
  }
  default:
    break;
  }
}

/* list_lock held: appends S.events to the spool and empties it.  The
 * first failure is kept for the next file write to report. */
static void spool_flush(void) {
  if (S.events.oom && S.spool_err == 0)
    S.spool_err = ENOMEM;
  if (S.spool_err == 0 && S.events.len != 0) {
    S.spool_err = asc__write_all(S.spool, S.events.data, S.events.len);
    if (S.spool_err == 0)
      S.spool_len += S.events.len;
  }
  if (S.events.oom)
    asc__buf_free(&S.events);
  S.events.len = 0;
}

/* list_lock held: moves every published record into the spool. */
static void drain(void) {
  fix_rate();
  for (chunk *c = chunks; c != NULL; c = c->next) {
    size_t n = atomic_load_explicit(&c->n, memory_order_acquire);
    bool any = false;
    for (size_t i = c->read; i < n; i++) {
      if (c->recs[i].ts >= S.t0)
        any = true;
      format(&S.events, c, &c->recs[i]);
      asc__free(c->recs[i].detail);
      if (S.events.len >= SPOOL_PIECE)
        spool_flush();
    }
    c->read = n;
    if (any)
      note_thread(c);
  }
  /* Chunks whose owner moved on and which are read to the end will never
   * change again. */
  for (chunk **pc = &chunks; *pc != NULL;) {
    chunk *c = *pc;
    if (atomic_load_explicit(&c->full, memory_order_acquire) &&
        c->read == CHUNK_RECS) {
      *pc = c->next;
      atomic_fetch_sub_explicit(&nheld, 1, memory_order_relaxed);
      if (nspare < SPARE_MAX) {
        c->next = spare;
        spare = c;
        nspare++;
      } else {
        asc__free(c);
      }
    } else {
      pc = &c->next;
    }
  }
  spool_flush();
}

static void meta(asc__buf *b, int pid, int tid, const char *what,
                 const char *name) {
  asc__buf_printf(b,
                  ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
                  "\"args\":{\"name\":\"",
                  what, pid, tid);
  put_json(b, name);
  asc__buf_puts(b, "\"}}");
}

static void sort_index(asc__buf *b, int pid, int tid, int idx) {
  asc__buf_printf(b,
                  ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,"
                  "\"tid\":%d,\"args\":{\"sort_index\":%d}}",
                  pid, tid, idx);
}

/* list_lock held, after a drain: writes the file, replacing S.path.
 * 0, or an error with its message in why. */
static ascError_t write_file(asc__buf *why) {
  asc__buf m;
  asc__outfile o;
  char name[48];
  uint64_t nd = atomic_load(&dropped);
  int e;

  asc__buf_init(&m);
  asc__buf_printf(&m,
                  "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":"
                  "\"libasc\",\"clock\":\"%s\"},\n\"traceEvents\":[\n",
                  atomic_load(&asc__trace_clk) == 2 ? "tsc" : "monotonic");
  asc__buf_puts(&m, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,"
                    "\"tid\":0,\"args\":{\"name\":\"libasc streams\"}}");
  meta(&m, 2, 0, "process_name", "libasc threads");
  for (int i = 0; i < S.nstreams; i++) {
    snprintf(name, sizeof name, "stream %d%s", i + 1,
             S.stream_default[i] ? " (default)" : "");
    meta(&m, 1, i + 1, "thread_name", name);
    sort_index(&m, 1, i + 1, i + 1);
  }
  for (int i = 0; i < S.ntids; i++) {
    meta(&m, 2, S.tids[i], "thread_name", S.tnames[i]);
    sort_index(&m, 2, S.tids[i], S.tids[i]);
  }
  if (m.oom) {
    asc__buf_free(&m);
    asc__buf_puts(why, "out of memory writing a trace");
    return ascErrorOutOfMemory;
  }
  if (S.spool_err != 0) {
    asc__buf_free(&m);
    asc__buf_printf(why, "cannot write trace file %s: writing its events "
                         "to a temporary file in its directory: %s",
                    S.path, strerror(S.spool_err));
    return S.spool_err == ENOMEM ? ascErrorOutOfMemory
                                 : ascErrorInvalidValue;
  }
  e = asc__outfile_open_at(&o, S.dirfd, S.name, 0600,
                           ASC__OUTFILE_KEEP_MODE);
  if (e == 0)
    e = asc__outfile_write(&o, m.data, m.len);
  if (e == 0)
    e = asc__outfile_copy(&o, S.spool, (size_t)S.spool_len);
  m.len = 0;
  /* Where the first record was dropped, and how many were. */
  if (nd != 0) {
    ev_begin(&m, 'i', "trace", "records dropped", 1, 0,
             atomic_load(&first_drop));
    asc__buf_printf(&m,
                    ",\"s\":\"g\",\"args\":{\"dropped\":%" PRIu64
                    ",\"ASC_TRACE_MAX_BYTES\":%" PRIu64 "}}",
                    nd, S.max_bytes);
  }
  asc__buf_puts(&m, "\n]}\n");
  if (e == 0)
    e = m.oom ? ENOMEM : asc__outfile_write(&o, m.data, m.len);
  if (e == 0)
    e = asc__outfile_commit(&o);
  else
    asc__outfile_discard(&o);
  asc__buf_free(&m);
  if (e != 0) {
    asc__buf_printf(why, "cannot write trace file %s: %s", S.path,
                    asc__outfile_strerror(e));
    return e == ENOMEM ? ascErrorOutOfMemory : ascErrorInvalidValue;
  }
  return ascSuccess;
}

/* list_lock held: the session's last file.  Its failure and any dropped
 * records are told on stderr too when no caller gets an error back
 * (process exit). */
static ascError_t final_write(asc__buf *why) {
  ascError_t e;
  uint64_t nd;

  atomic_store(&asc__trace_on, 0);
  drain();
  e = write_file(why);
  nd = atomic_load(&dropped);
  if (nd != 0)
    fprintf(stderr,
            "libasc: trace %s: %" PRIu64 " records dropped: the records "
            "waiting to be written reached ASC_TRACE_MAX_BYTES (%" PRIu64
            " bytes); the file's \"records dropped\" event marks the first "
            "(docs/tracing.md)\n",
            S.path, nd, S.max_bytes);
  return e;
}

static void session_end(void) {
  asc__free(S.path);
  S.path = NULL;
  S.name = NULL;
  if (S.spool >= 0)
    close(S.spool);
  if (S.dirfd >= 0)
    close(S.dirfd);
  S.spool = S.dirfd = -1;
  asc__buf_free(&S.events);
  for (int i = 0; i < S.nsigs; i++)
    asc__free(S.sig_text[i]);
  S.nsigs = S.nstreams = S.npools = S.ntids = 0;
  S.active = false;
  S.from_env = false;
}

/* A library must not change the process's exit status, so a file that
 * cannot be written at exit is told on stderr. */
static void trace_atexit(void) {
  uv_mutex_lock(&list_lock);
  if (S.active) {
    asc__buf why;
    asc__buf_init(&why);
    if (final_write(&why) != ascSuccess)
      fprintf(stderr, "libasc: trace at exit: %s\n", asc__buf_str(&why));
    asc__buf_free(&why);
    session_end();
  }
  uv_mutex_unlock(&list_lock);
}

/* list_lock held: S.path's directory and the spool; a destination that
 * is a link, a FIFO, a device or a directory is refused now, before the
 * run (jit/file.h). */
static ascError_t open_files(const char *path) {
  asc__outfile o;
  int e;

  S.path = asc__strdup(path);
  if (S.path == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  S.dirfd = asc__open_parent(S.path, &S.name);
  if (S.dirfd < 0)
    e = errno;
  else
    e = asc__outfile_open_at(&o, S.dirfd, S.name, 0600, 0);
  if (e == 0 && (S.spool = asc__outfile_detach(&o)) < 0)
    e = errno;
  if (e != 0)
    return asc__error(ascErrorInvalidValue,
                      "ascProfilerStart: cannot write %s: %s", path,
                      asc__outfile_strerror(e));
  return ascSuccess;
}

static ascError_t start(const char *path, bool from_env) {
  ascError_t err;
  uint64_t chunks_max;

  uv_once(&clk_once, clk_init);
  uv_once(&once, init_once);
  uv_mutex_lock(&list_lock);
  if (S.active) {
    uv_mutex_unlock(&list_lock);
    return asc__error(ascErrorNotPermitted,
                      "ascProfilerStart: a trace to %s is already running",
                      S.path);
  }
  /* Fail now, not at the end of the run. */
  S.spool = S.dirfd = -1;
  S.spool_len = 0;
  S.spool_err = 0;
  err = open_files(path);
  if (err != ascSuccess) {
    session_end();
    uv_mutex_unlock(&list_lock);
    return err;
  }
  asc__buf_init(&S.events);
  S.from_env = from_env;
  S.active = true;
  S.max_bytes = asc__env_u64(&max_bytes_env);
  chunks_max = S.max_bytes / sizeof(chunk);
  atomic_store(&max_held, chunks_max == 0 ? 1 : (size_t)chunks_max);
  atomic_store(&dropped, 0);
  atomic_store(&first_drop, 0);
  /* Records already in the chunks belong to no session. */
  for (chunk *c = chunks; c != NULL; c = c->next) {
    size_t n = atomic_load_explicit(&c->n, memory_order_acquire);
    for (size_t i = c->read; i < n; i++)
      asc__free(c->recs[i].detail);
    c->read = n;
  }
  S.ns_per_tick = 0;
  S.t0 = asc__trace_now();
  if (!atexit_done && atexit(trace_atexit) == 0)
    atexit_done = true;
  atomic_store(&asc__trace_on, 1);
  uv_mutex_unlock(&list_lock);
  return ascSuccess;
}

void asc__trace_env_start(void) {
  const char *p = getenv("ASC_TRACE");

  if (p != NULL && p[0] != '\0' && start(p, true) != ascSuccess) {
    fprintf(stderr, "libasc: ASC_TRACE: %s\n", ascGetLastErrorMessage());
    (void)ascGetLastError();   /* not the error of the caller's call */
  }
}

/* ascDeviceReset succeeds whatever the trace does: a file that cannot be
 * written is told on stderr, and tracing goes on. */
void asc__trace_checkpoint(void) {
  uv_once(&once, init_once);
  uv_mutex_lock(&list_lock);
  if (S.active) {
    asc__buf why;
    asc__buf_init(&why);
    drain();
    if (write_file(&why) != ascSuccess)
      fprintf(stderr, "libasc: trace at ascDeviceReset: %s\n",
              asc__buf_str(&why));
    asc__buf_free(&why);
  }
  uv_mutex_unlock(&list_lock);
}

void asc__trace_sig(const void *desc, const char *sig) {
  uv_once(&once, init_once);
  uv_mutex_lock(&list_lock);
  if (S.active && sig_of(desc) == NULL &&
      S.nsigs < (int)ASC_ARRAY_SIZE(S.sig_desc)) {
    char *s = asc__strdup(sig);
    if (s != NULL) {
      S.sig_desc[S.nsigs] = desc;
      S.sig_text[S.nsigs++] = s;
    }
  }
  uv_mutex_unlock(&list_lock);
}

ascError_t ascProfilerStart(const char *path) {
  if (path == NULL || path[0] == '\0')
    return asc__error(ascErrorInvalidValue,
                      "ascProfilerStart: path is %s",
                      path == NULL ? "NULL" : "empty");
  return start(path, false);
}

ascError_t ascProfilerStop(void) {
  ascError_t e;
  asc__buf why;

  uv_once(&once, init_once);
  uv_mutex_lock(&list_lock);
  if (!S.active) {
    uv_mutex_unlock(&list_lock);
    return asc__error(ascErrorNotPermitted,
                      "ascProfilerStop: no trace is running");
  }
  asc__buf_init(&why);
  e = final_write(&why);
  session_end();
  uv_mutex_unlock(&list_lock);
  if (e != ascSuccess)
    asc__error(e, "ascProfilerStop: %s", asc__buf_str(&why));
  asc__buf_free(&why);
  return e;
}
