/*
 * Tracing (see trace.h and docs/tracing.md): the session and the stream
 * hooks; the recorder and the clock are base's (base/trace_rec.h).
 *
 * Record flow: a hook checks asc__trace_on (relaxed), fills the next
 * record of the calling thread's chunk and publishes it with a release
 * store of the chunk's count.  The flusher takes the recorder's lock,
 * drains the records it has not read yet, formats them and appends the
 * text to the session's spool (an unnamed file in the trace
 * file's directory), then writes the file from the spool through a
 * private temporary renamed into place (jit/file.h, docs/files.md).  A
 * record that a thread finishes after the session stopped lands in its
 * chunk and is dropped by the next session, which keeps only records
 * stamped after its start.
 *
 * Memory: the recorder counts the chunks waiting for a flush; past
 * $ASC_TRACE_MAX_BYTES of them a record is dropped and counted instead
 * (asc__trace_limit), and the file and stderr say how many
 * (docs/tracing.md, "Cost").
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
#include <unistd.h>

#include "base/env.h"
#include "base/trace_rec.h"
#include "jit/file.h"
#include "runtime/stream.h"

/* The runtime's record types (trace_rec.h has the recorder's own). */
enum {
  TR_LAUNCH = ASC__TR_USER, /* X on a stream track */
  TR_BLOCK,       /* X on the thread's track */
  TR_HOSTFN,      /* X on a stream track and on the thread's track */
  TR_RECORD,      /* X, zero length, on a stream track */
  TR_WAIT,        /* X on a stream track + flow from the record */
  TR_EXTERN       /* X on a stream track */
};

typedef asc__trace_rec rec;

/* The calling thread's launch ids and last block. */
static _Thread_local struct {
  uint32_t launches;           /* launch ids handed out by this thread */
  uint64_t block_launch;       /* trace id of the last block recorded */
  uint64_t block_end;          /* and when it ended */
} tl;

static _Atomic uint64_t next_flow_id;

/* Formatted text is written to the spool in pieces of this size. */
#define SPOOL_PIECE ((size_t)1 << 20)

static asc__env_num max_bytes_env = {"ASC_TRACE_MAX_BYTES",
                                     (uint64_t)256 << 20, 1, UINT64_MAX,
                                     ASC__ENV_SUFFIXES, false};

/* The session: under the recorder's lock (asc__trace_lock). */
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
} S;

static bool atexit_done;

void asc__trace_op_queued(asc__op *op) {
  op->trace_ns[0] = asc__trace_now();
}

/* Launch ids come from the starting thread's own counter (no shared
 * cache line): its track number in the high 32 bits. */
void asc__trace_op_started(asc__op *op) {
  op->trace_ns[1] = asc__trace_now();
  if (op->kind == OP_LAUNCH)
    op->launch.trace_id = ((uint64_t)(uint32_t)asc__trace_tid() << 32) |
                          ++tl.launches;
}

static rec *stream_rec(int type, const char *name, asc__stream *st,
                       const asc__op *op, uint64_t t1) {
  rec *r = asc__trace_rec_begin(type, "stream", name, NULL, op->trace_ns[1],
                                t1);

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
  asc__trace_rec_put();
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
  asc__trace_rec_put();
}

void asc__trace_block(const asc__launch *l, uint32_t block, uint64_t t0) {
  rec *r;

  uint64_t t1;

  if (t0 == 0)
    return;
  t1 = asc__trace_now();
  tl.block_launch = l->trace_id;
  tl.block_end = t1;
  if ((r = asc__trace_rec_begin(TR_BLOCK, "block", l->desc->name, NULL, t0,
                                t1)) == NULL)
    return;
  r->id = l->trace_id;
  r->a0 = block;
  r->a1 = l->nblocks;
  asc__trace_rec_put();
}

void asc__trace_hostfn(asc__op *op, uint64_t t0) {
  rec *r;

  if (t0 == 0 || op->trace_ns[1] == 0 ||
      (r = stream_rec(TR_HOSTFN, "host function", op->stream, op,
                      asc__trace_now())) == NULL)
    return;
  r->a0 = t0;    /* when it started running on this thread */
  asc__trace_rec_put();
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
  asc__trace_rec_put();
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
  asc__trace_rec_put();
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

static void note_thread(int tid, const char *tname) {
  for (int i = 0; i < S.ntids; i++)
    if (S.tids[i] == tid)
      return;
  if (S.ntids == (int)ASC_ARRAY_SIZE(S.tids))
    return;
  S.tids[S.ntids] = tid;
  snprintf(S.tnames[S.ntids], sizeof S.tnames[0], "%s", tname);
  S.ntids++;
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

static void format(asc__buf *b, int thread, const rec *r) {
  int tid;

  if (r->ts < S.t0)
    return;
  switch (r->type) {
  case ASC__TR_SPAN:
  case ASC__TR_MARK:
    ev_begin(b, 'X', r->cat, r->name, 2, thread, r->ts);
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
    ev_begin(b, 'X', r->cat, r->name, 2, thread, r->ts);
    ev_dur(b, r->ts, r->end);
    put_su(b, ",\"args\":{\"launch\":", r->id);
    put_su(b, ",\"block\":", r->a0);
    put_su(b, ",\"blocks\":", r->a1);
    asc__buf_puts(b, "}}");
    break;
  case TR_LAUNCH: {
    const char *sig = asc__trace_sig_of(r->track2);
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
      ev_begin(b, 'X', "hostfn", r->name, 2, thread, r->a0);
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
  case ASC__TR_POOL: {
    int p = pool_index(r->track);
    ev_begin(b, 'X', r->cat, r->name, 2, thread, r->ts);
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

/* Lock held: appends S.events to the spool and empties it.  The
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

static void visit(void *ud, int tid, const char *tname, const rec *recs,
                  size_t n) {
  bool any = false;

  ASC_UNUSED(ud);
  for (size_t i = 0; i < n; i++) {
    if (recs[i].ts >= S.t0)
      any = true;
    format(&S.events, tid, &recs[i]);
    if (S.events.len >= SPOOL_PIECE)
      spool_flush();
  }
  if (any)
    note_thread(tid, tname);
}

/* Lock held: moves every published record into the spool. */
static void drain(void) {
  if (S.ns_per_tick == 0)
    S.ns_per_tick = asc__trace_ns_per_tick();
  asc__trace_drain(visit, NULL);
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

/* Lock held, after a drain: writes the file, replacing S.path.
 * 0, or an error with its message in why. */
static ascError_t write_file(asc__buf *why) {
  asc__buf m;
  asc__outfile o;
  char name[48];
  uint64_t first = 0, nd = asc__trace_dropped(&first);
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
    ev_begin(&m, 'i', "trace", "records dropped", 1, 0, first);
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

/* Lock held: the session's last file.  Its failure and any dropped
 * records are told on stderr too when no caller gets an error back
 * (process exit). */
static ascError_t final_write(asc__buf *why) {
  ascError_t e;
  uint64_t nd;

  atomic_store(&asc__trace_on, 0);
  drain();
  e = write_file(why);
  nd = asc__trace_dropped(NULL);
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
  asc__trace_sig_clear();
  S.nstreams = S.npools = S.ntids = 0;
  S.active = false;
  S.from_env = false;
}

/* A library must not change the process's exit status, so a file that
 * cannot be written at exit is told on stderr. */
static void trace_atexit(void) {
  asc__trace_lock();
  if (S.active) {
    asc__buf why;
    asc__buf_init(&why);
    if (final_write(&why) != ascSuccess)
      fprintf(stderr, "libasc: trace at exit: %s\n", asc__buf_str(&why));
    asc__buf_free(&why);
    session_end();
  }
  asc__trace_unlock();
}

/* Lock held: S.path's directory and the spool; a destination that
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

  asc__trace_clock_init();
  asc__trace_lock();
  if (S.active) {
    asc__trace_unlock();
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
    asc__trace_unlock();
    return err;
  }
  asc__buf_init(&S.events);
  S.from_env = from_env;
  S.active = true;
  S.max_bytes = asc__env_u64(&max_bytes_env);
  asc__trace_limit(S.max_bytes);
  /* Records already in the chunks belong to no session. */
  asc__trace_discard();
  S.ns_per_tick = 0;
  S.t0 = asc__trace_now();
  if (!atexit_done && atexit(trace_atexit) == 0)
    atexit_done = true;
  atomic_store(&asc__trace_on, 1);
  asc__trace_unlock();
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
  asc__trace_lock();
  if (S.active) {
    asc__buf why;
    asc__buf_init(&why);
    drain();
    if (write_file(&why) != ascSuccess)
      fprintf(stderr, "libasc: trace at ascDeviceReset: %s\n",
              asc__buf_str(&why));
    asc__buf_free(&why);
  }
  asc__trace_unlock();
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

  asc__trace_lock();
  if (!S.active) {
    asc__trace_unlock();
    return asc__error(ascErrorNotPermitted,
                      "ascProfilerStop: no trace is running");
  }
  asc__buf_init(&why);
  e = final_write(&why);
  session_end();
  asc__trace_unlock();
  if (e != ascSuccess)
    asc__error(e, "ascProfilerStop: %s", asc__buf_str(&why));
  asc__buf_free(&why);
  return e;
}
