/*
 * Communicators and their progress threads.
 *
 * The application thread queues an operation on a stream as an external
 * op (asc__mpi_enqueue, taking the next position on the communicator).
 * When the stream reaches it, reached() starts it at once on the thread
 * that got there (the application thread itself when the stream was
 * idle), strictly in position order (so that every rank calls MPI in the
 * order its application queued, whatever order its streams get there):
 * one thread at a time posts, and a thread finding another posting
 * leaves its operation to it.  Started operations are tested with
 * MPI_Testall by a host thread waiting in libasc (the wait hook) or, when
 * nobody waits, by the communicator's progress thread; whoever sees one
 * finish completes it on its stream.  docs/distributed.md has the
 * measurements behind this.
 */
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi/mpi_internal.h"

/* Polling.  A host thread waiting in libasc polls the active operations
 * itself (wait_poll, the runtime's wait hook), as MPI_Wait would; the
 * progress thread leaves them to it while it does (a waiter tested
 * them in the last DRIVEN_NS: driven_ns) and polls when nobody waits;
 * with nothing active it stands by while waiters' polls go on (the
 * count in driven moved within DRIVEN_NS of its last look, so it goes
 * to sleep 2-4 ms after the last poll).  Polling: yielding between
 * polls (MPI moves a large message one segment per poll) for POLL_NS
 * after the last completion, then napping NAP_NS between polls, so that
 * a transfer waiting on a slow peer does not take a core from the
 * kernels it overlaps; the nap grows with the time since the last
 * completion (a hundredth of it, at most NAP_MAX_NS: 1 ms after 100 ms),
 * so that an operation that never completes (a peer that never joins)
 * costs next to no CPU. */
#define POLL_NS 5000000
#define NAP_NS 50000
#define NAP_MAX_NS 1000000
/* Each end of a stand-by wait wakes the progress thread on a core that
 * a rank is using: 0.5 ms made a 2 MiB allreduce (0.5 ms here) 1.09-1.12x
 * MPI_Allreduce's time and 8 B 1.74-1.86x, 2 ms 0.98-1.09x and
 * 1.56-1.73x (bench/mpi_allreduce, alternated).  The price: when the
 * last waiter stops polling, the progress thread takes over up to this
 * much later (a waiter of another stream that finds a blocking op it may
 * not run wakes it at once: take_next). */
#define DRIVEN_NS 2000000
/* An allreduce of an MPI type runs blocking (ops.c): on a host thread
 * that waits in libasc if one comes within GRACE_NS
 * (ascStreamSynchronize right after the call, the common case), else on
 * the progress thread.  Whatever its size by default: MPI_Iallreduce
 * costs twice MPI_Allreduce for 8 B and about 1.1 times for 2 MiB here,
 * below the 0.9x bandwidth goal (docs/distributed.md). */
#define GRACE_NS 50000
#define BLOCKING_MAX LLONG_MAX   /* bytes, unless ASC_MPI_BLOCKING_MAX says */

/* Destroyed communicators keep their memory here, for reuse by the next
 * ascCommInitFromMPI: a stale handle always reads a dead magic, and a
 * waiter's poll that races with ascCommDestroy finds a valid lock and an
 * empty active list.  Live ones are on live_comms, for the wait hook. */
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ascComm_st *free_comms;
/* Written under free_lock, read without it (wait_poll). */
static struct ascComm_st *_Atomic live_comms;

ascError_t asc__mpi_err(ascError_t code, const char *fmt, ...) {
  char text[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return asc__extern_error(code, text);
}

ascError_t asc__mpi_comm_check(ascComm_t comm, const char *fn) {
  if (comm == NULL)
    return asc__mpi_err(ascErrorInvalidHandle, "%s: comm is NULL", fn);
  if (atomic_load(&comm->magic) != COMM_MAGIC)
    return asc__mpi_err(ascErrorInvalidHandle,
                        "%s: comm %p is not a live communicator (destroyed?)",
                        fn, (void *)comm);
  return ascSuccess;
}

xop *asc__mpi_op_new(ascComm_t comm) {
  xop *o = atomic_exchange(&comm->spare, NULL);

  /* malloc and an initialiser, not calloc (nor malloc + memset, which
   * the compiler turns into calloc): glibc's calloc bypasses its
   * per-thread cache. */
  if (o == NULL && (o = malloc(sizeof *o)) == NULL)
    return NULL;
  /* What op_free and the callers read before they set it; a whole
   * compound literal cost 28 stores. */
  o->next = NULL;
  o->comm = comm;
  o->subs = NULL;
  o->nsubs = 0;
  o->reqs = NULL;
  o->stats = NULL;
  o->nreqs = 0;
  o->tmp = NULL;
  o->blocking = false;
  atomic_store_explicit(&o->claimed, false, memory_order_relaxed);
  return o;
}

void asc__mpi_op_free(xop *o) {
  xop *none = NULL;

  if (o == NULL)
    return;
  /* Tested first: free(NULL) is a call into libc each. */
  if (o->subs != NULL)
    free(o->subs);
  if (o->tmp != NULL)
    free(o->tmp);
  if (o->reqs != &o->req1 && o->reqs != NULL)
    free(o->reqs);
  if (o->stats != &o->stat1 && o->stats != NULL)
    free(o->stats);
  /* Kept for the next operation if the slot is free.  ascCommDestroy
   * frees it: every op is freed before it counts as completed, and the
   * progress thread, which ascCommDestroy joins, ends after the last. */
  if (o->comm == NULL ||
      !atomic_compare_exchange_strong(&o->comm->spare, &none, o))
    free(o);
}

/* c's spin lock (mpi_internal.h). */
static void comm_lock(struct ascComm_st *c) {
  if (!atomic_exchange_explicit(&c->lock, 1, memory_order_acquire))
    return;
  for (unsigned n = 0;; n++) {
    if (!atomic_load_explicit(&c->lock, memory_order_relaxed) &&
        !atomic_exchange_explicit(&c->lock, 1, memory_order_acquire))
      return;
    if (n < 100) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      sched_yield();   /* the holder may have lost its core */
    }
  }
}

static void comm_unlock(struct ascComm_st *c) {
  atomic_store_explicit(&c->lock, 0, memory_order_release);
}

/* comm_unlock after a change of reached or active. */
static void comm_unlock_busy(struct ascComm_st *c) {
  atomic_store_explicit(&c->busy, c->reached != NULL || c->active != NULL,
                        memory_order_relaxed);
  comm_unlock(c);
}

/* Wakes the progress thread (from progress_sleep, or makes its next
 * one return at once).  c's lock may be held. */
static void progress_wake(struct ascComm_st *c) {
  pthread_mutex_lock(&c->wait_lock);
  c->wake = true;
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->wait_lock);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Who may run a blocking op (o->blocking): nobody (a thread that
 * reached it), a host thread waiting for the op's stream, anybody (the
 * progress thread). */
enum { BLOCK_NONE, BLOCK_STREAM, BLOCK_ANY };

/* c's lock held: unlinks and returns the reached op at position
 * next_start, NULL if it has not been reached yet, or if it must run
 * blocking (o->blocking) and the caller may not (block, stream): it then
 * sets blocked_ready and wakes the progress thread. */
static xop *take_next(struct ascComm_st *c, int block, ascStream_t stream) {
  /* A broken communicator fails its ops without MPI: in any order (the
   * positions of those given up never come), on any thread. */
  if (atomic_load_explicit(&c->broken, memory_order_relaxed) &&
      c->reached != NULL) {
    xop *o = c->reached;
    c->reached = o->next;
    o->next = NULL;
    return o;
  }
  for (xop **p = &c->reached; *p != NULL; p = &(*p)->next) {
    if ((*p)->seq == c->next_start) {
      xop *o = *p;
      if (o->blocking &&
          !(block == BLOCK_ANY ||
            (block == BLOCK_STREAM && o->stream == stream))) {
        c->blocked_ready = true;
        /* Not in stand-by for the thread that reached it (a waiter of
         * its stream usually comes at once), but for a waiter of
         * another stream, which never runs it. */
        if (c->sleeping || (c->standby && block == BLOCK_STREAM))
          progress_wake(c);
        return NULL;
      }
      c->blocked_ready = false;
      *p = o->next;
      o->next = NULL;
      c->next_start++;
      return o;
    }
  }
  return NULL;
}

/* c's lock held: n more positions have finished. */
static void count_done(struct ascComm_st *c, uint64_t n) {
  c->completed += n;
  if (c->stop && n > 0)   /* the progress thread's exit waits for the last */
    progress_wake(c);
}

/* Completes o on its stream; no lock held. */
static void complete(xop *o, ascError_t err, const char *msg) {
  if (err == ascSuccess &&
      (o->dtype == ascFloat16 || o->dtype == ascBFloat16))
    asc__mpi_op_finish(o);   /* reduces gathered halves */
  asc__extern_complete(o->x, err, msg);
}

/* Completes o on its stream and frees it; no lock held.  The caller
 * counts it (count_done) when it next holds c's lock: one lock round per
 * operation fewer on the blocking path. */
static void finish(xop *o, ascError_t err, const char *msg) {
  complete(o, err, msg);
  asc__mpi_op_free(o);
}

/* ---------------------------------------------------------- giving up
 *
 * MPI cannot cancel a collective (MPI_Cancel is for receives and sends),
 * so an operation that cannot complete (a peer that never joins, counts
 * that disagree) can only be given up: its stream is told at once, and
 * the communicator is broken, since this rank is no longer in step with
 * the others.  Every operation of a broken communicator that has not
 * completed fails with ascErrorCommunication, later ones at once; posted
 * ones stay posted, their memory kept for MPI (c->abandoned), and are
 * never polled again; one a thread is running inside a blocking MPI call
 * goes on there until MPI returns, if ever. */

/* What giving up takes out of a communicator under its lock, to be
 * completed once it is dropped (give_up_finish). */
typedef struct given_up {
  xop *unstarted;          /* from reached, linked through next: freed */
  xop *posted;             /* from active, now also on c->abandoned */
  asc__extern *current;    /* the current op's, if this claimed it */
  const char *current_name;
} given_up;

/* c's lock held: breaks c (if it is not yet) and takes out every
 * operation that has not completed.  Idempotent: ops reached or posted
 * after an earlier call are taken out too. */
static void give_up_locked(struct ascComm_st *c, given_up *g) {
  uint64_t n = 0;
  xop *o;

  atomic_store_explicit(&c->broken, true, memory_order_relaxed);
  c->blocked_ready = false;   /* nothing is waiting to run blocking */
  while ((o = c->reached) != NULL) {
    c->reached = o->next;
    o->next = g->unstarted;
    g->unstarted = o;
    n++;
  }
  while ((o = c->active) != NULL) {
    c->active = o->next;
    o->next = c->abandoned;
    c->abandoned = o;
    o->cnext = g->posted;
    g->posted = o;
    n++;
  }
  c->active_tail = &c->active;
  /* A hole has no stream op; a claimed op is its poster's, or was given
   * up before. */
  o = c->current;
  if (o != NULL && o->kind != K_HOLE &&
      !atomic_exchange(&o->claimed, true)) {
    g->current = o->x;
    g->current_name = o->name;
    n++;
  }
  count_done(c, n);
}

static void give_up_one(asc__extern *x, const char *name) {
  char msg[160];
  snprintf(msg, sizeof msg,
           "%s: given up by a cancellation; the communicator is unusable "
           "now (MPI cannot cancel a collective)", name);
  asc__extern_complete(x, ascErrorCommunication, msg);
}

/* No lock held: completes what give_up_locked took out. */
static void give_up_finish(given_up *g) {
  xop *o;

  while ((o = g->unstarted) != NULL) {
    g->unstarted = o->next;
    if (o->kind != K_HOLE)
      give_up_one(o->x, o->name);
    asc__mpi_op_free(o);
  }
  /* Kept on c->abandoned, where nothing frees them. */
  for (o = g->posted; o != NULL; o = o->cnext)
    give_up_one(o->x, o->name);
  if (g->current != NULL)
    give_up_one(g->current, g->current_name);
}

static void mpi_failure(xop *o, int rc, char *msg, size_t size) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;

  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "MPI error %d", rc);
  snprintf(msg, size, "%s: MPI failed: %s", o->name, text);
}

/* Posts c's reached operations in position order, on the calling
 * thread; a thread that finds another posting leaves its operation to
 * that one, which looks for more under the lock before it stops.  add,
 * if not NULL, is first put on the reached list (in the same critical
 * section).  No lock held.  A failed post completes its op here.  It
 * also runs the operations that use blocking MPI (o->blocking) and
 * completes them when block and stream allow (take_next); otherwise it
 * stops before one.  Returns true if it completed any. */
static bool start_ready(struct ascComm_st *c, int block, ascStream_t stream,
                        xop *add) {
  char msg[MPI_MAX_ERROR_STRING + 128];
  bool ran = false;
  xop *o, *done = NULL;

  comm_lock(c);
  if (add != NULL) {
    add->next = c->reached;
    c->reached = add;
  }
  if (c->starting) {
    comm_unlock_busy(c);
    return false;
  }
  c->starting = true;
  while ((o = take_next(c, block, stream)) != NULL) {
    ascError_t err = ascSuccess;
    bool posted = false, mine;
    bool broken = atomic_load_explicit(&c->broken, memory_order_relaxed);

    /* Until it is posted (or has run), a cancellation may give it up
     * (give_up_locked): whoever claims it completes it. */
    c->current = o;
    c->current_progress = block == BLOCK_ANY;
    comm_unlock_busy(c);
    if (done != NULL) {   /* the previous one, no longer current */
      asc__mpi_op_free(done);
      done = NULL;
    }
    if (o->kind == K_HOLE) {
    } else if (broken) {
      err = ascErrorCommunication;
      snprintf(msg, sizeof msg, "%s: the communicator is unusable: an "
               "earlier operation on it was given up by a cancellation",
               o->name);
    } else if (o->blocking) {
      /* Its completion may reach the stream's next op: that one's
       * reached() finds starting set and leaves it to this loop. */
      err = asc__mpi_op_run(o, msg, sizeof msg);
      ran = true;
    } else if ((err = asc__mpi_op_start(o, msg, sizeof msg)) != ascSuccess) {
      ran = true;
    } else {
      posted = true;
      if (c->delay_ns != 0)
        o->posted_ns = now_ns();
    }
    mine = !posted && (o->kind == K_HOLE ||
                       !atomic_exchange(&o->claimed, true));
    if (mine && o->kind != K_HOLE)
      complete(o, err, err != ascSuccess ? msg : NULL);
    comm_lock(c);
    c->current = NULL;
    if (posted && atomic_load(&o->claimed)) {
      o->next = c->abandoned;   /* given up while it was being posted */
      c->abandoned = o;
    } else if (posted) {
      *c->active_tail = o;
      c->active_tail = &o->next;
      if (c->sleeping)
        progress_wake(c);
    } else {
      /* Freed once it is no longer current (a cancellation looks at
       * c->current under the lock): at the next unlock. */
      if (mine)
        count_done(c, 1);
      done = o;
    }
  }
  c->starting = false;
  comm_unlock_busy(c);
  if (done != NULL)
    asc__mpi_op_free(done);
  return ran;
}

/* asc__extern_start_fn: the stream has reached o. */
static void reached(void *ud, asc__extern *x, ascError_t status) {
  xop *o = ud;
  struct ascComm_st *c = o->comm;

  /* status (an earlier failure on the stream) does not skip o: peers
   * would wait for this rank forever.  It runs, and the stream keeps
   * reporting the earlier error. */
  (void)status;
  o->x = x;
  start_ready(c, BLOCK_NONE, NULL, o);
}

/* c's lock held: a stream in c->cancelled (or any, with cancel_every)
 * has one of the ops of list (linked through next). */
static bool cancelled_any(const struct ascComm_st *c, const xop *list) {
  for (const xop *o = list; o != NULL; o = o->next) {
    if (c->cancel_every)
      return true;
    for (int i = 0; i < c->ncancelled; i++)
      if (c->cancelled[i] == o->stream)
        return true;
  }
  return false;
}

/* Tests c's active operations once (one thread at a time) and completes
 * the finished ones, on the calling thread.  Any thread, no lock held.
 * Returns ASC__EXTERN_IDLE (none active), _BUSY, _BUSY_STREAM (one
 * still active was queued on *mine; mine NULL: never) or _PROGRESS. */
static int poll_comm(struct ascComm_st *c, const ascStream_t *mine) {
  char msg[MPI_MAX_ERROR_STRING + 128];
  xop *list, *keep = NULL, **kt = &keep;
  uint64_t ndone = 0;
  bool busy_mine = false, give;
  given_up g = {NULL, NULL, NULL, NULL};

  comm_lock(c);
  if (c->polling || c->active == NULL) {
    int r = c->active != NULL ? ASC__EXTERN_BUSY : ASC__EXTERN_IDLE;
    comm_unlock(c);
    return r;
  }
  c->polling = true;
  list = c->active;
  c->active = NULL;
  c->active_tail = &c->active;
  comm_unlock(c);   /* busy stays set: the list is being polled */

  while (list != NULL) {
    xop *o = list;
    int flag = 0, rc;

    list = o->next;
    o->next = NULL;
    rc = o->nreqs > 0 ? MPI_Testall(o->nreqs, o->reqs, &flag, o->stats)
                      : (flag = 1, MPI_SUCCESS);
    if (rc == MPI_ERR_IN_STATUS) {
      /* The failed request's own code says what went wrong. */
      for (int i = 0; i < o->nreqs; i++) {
        int e = o->stats[i].MPI_ERROR;
        if (e != MPI_SUCCESS && e != MPI_ERR_PENDING) {
          rc = e;
          break;
        }
      }
    }
    /* emulated latency: done in MPI, not yet on the wire's clock */
    if (rc == MPI_SUCCESS && flag && c->delay_ns != 0 &&
        now_ns() - o->posted_ns < c->delay_ns)
      flag = 0;
    if (rc == MPI_SUCCESS && !flag) {
      busy_mine |= mine != NULL && o->stream == *mine;
      *kt = o;
      kt = &o->next;
      continue;
    }
    ndone++;
    /* Completing may start the stream's next op here (start_ready
     * appends it to c->active, detached meanwhile). */
    if (rc != MPI_SUCCESS) {
      mpi_failure(o, rc, msg, sizeof msg);
      finish(o, ascErrorCommunication, msg);
    } else {
      finish(o, ascSuccess, NULL);
    }
  }

  comm_lock(c);
  /* A cancellation while the list was detached (note_cancel) gives up
   * now if one of the ops still running was queued on its stream. */
  give = atomic_load_explicit(&c->broken, memory_order_relaxed) ||
         cancelled_any(c, keep);
  c->ncancelled = 0;
  c->cancel_every = false;
  if (keep != NULL) {   /* the oldest first, then those started meanwhile */
    *kt = c->active;
    if (c->active == NULL)
      c->active_tail = kt;
    c->active = keep;
    /* The progress thread may have found the list detached, hence
     * empty, and gone to sleep. */
    if (c->sleeping)
      progress_wake(c);
  }
  count_done(c, ndone);
  c->polling = false;
  if (give)
    give_up_locked(c, &g);
  comm_unlock_busy(c);
  give_up_finish(&g);
  return ndone > 0 ? ASC__EXTERN_PROGRESS
         : busy_mine ? ASC__EXTERN_BUSY_STREAM
                     : ASC__EXTERN_BUSY;
}

/* asc__extern_poll_fn: a host thread waiting in libasc polls every live
 * communicator's active operations (the first WAIT_POLL_MAX of them;
 * the progress threads look after any others). */
#define WAIT_POLL_MAX 8
static int wait_poll(bool may_block, ascStream_t stream) {
  /* What the answer over all communicators is: progress anywhere, else
   * work of the caller's stream in flight, else any work in flight. */
  static const int weight[] = {
      [ASC__EXTERN_IDLE] = 0, [ASC__EXTERN_BUSY] = 1,
      [ASC__EXTERN_BUSY_STREAM] = 2, [ASC__EXTERN_PROGRESS] = 3};
  struct ascComm_st *cs[WAIT_POLL_MAX];
  int n = 0, r = ASC__EXTERN_IDLE;

  /* Without free_lock: a communicator destroyed (or even reused)
   * meanwhile is still memory with a valid lock (see free_comms), and
   * polling one twice, or one with nothing active, does no harm.  Idle
   * ones (nothing reached or active) are skipped. */
  for (struct ascComm_st *c =
           atomic_load_explicit(&live_comms, memory_order_acquire);
       c != NULL && n < WAIT_POLL_MAX;
       c = atomic_load_explicit(&c->live_next, memory_order_acquire))
    if (atomic_load_explicit(&c->busy, memory_order_relaxed))
      cs[n++] = c;
  for (int i = 0; i < n; i++) {
    int ri;
    /* A count, not a clock read (20-30 ns a poll): the progress thread
     * notes when it changes, and stands by.  Not a read-modify-write:
     * concurrent waiters may lose an increment, and any change will
     * do. */
    atomic_store_explicit(
        &cs[i]->driven,
        atomic_load_explicit(&cs[i]->driven, memory_order_relaxed) + 1,
        memory_order_relaxed);
    if (start_ready(cs[i], may_block ? BLOCK_STREAM : BLOCK_NONE, stream,
                    NULL)) {
      ri = ASC__EXTERN_PROGRESS;   /* ran one: the small allreduce path */
    } else {
      ri = poll_comm(cs[i], may_block ? &stream : NULL);
      /* Tested posted operations: when, exactly, for the progress
       * thread, which takes them over DRIVEN_NS after the last such
       * poll. */
      atomic_store_explicit(&cs[i]->driven_ns, now_ns(),
                            memory_order_relaxed);
    }
    if (weight[ri] > weight[r])
      r = ri;
  }
  return r;
}

/* c's lock held: c has an op of stream (any, with every) that has not
 * completed and that this thread can see: waiting to be posted, posted,
 * or being posted or run. */
static bool has_stream_locked(const struct ascComm_st *c, ascStream_t stream,
                              bool every) {
  const xop *lists[2] = {c->reached, c->active};

  if (c->current != NULL && c->current->kind != K_HOLE &&
      (every || c->current->stream == stream))
    return true;
  for (int i = 0; i < 2; i++)
    for (const xop *o = lists[i]; o != NULL; o = o->next)
      if (o->kind != K_HOLE && (every || o->stream == stream))
        return true;
  return false;
}

/* asc__extern_cancel_fn: stream was stopped (every: all streams, by
 * ascDeviceReset) with one of our ops at its head.  Every communicator
 * with an op of that stream in flight is given up; one whose active list
 * a poller has detached is told, and the poller decides when it puts the
 * list back (poll_comm). */
static void cancel_hook(ascStream_t stream, bool every) {
  /* Without free_lock, as wait_poll. */
  for (struct ascComm_st *c =
           atomic_load_explicit(&live_comms, memory_order_acquire);
       c != NULL;
       c = atomic_load_explicit(&c->live_next, memory_order_acquire)) {
    given_up g = {NULL, NULL, NULL, NULL};
    comm_lock(c);
    if (has_stream_locked(c, stream, every)) {
      give_up_locked(c, &g);
    } else if (c->polling) {
      if (every || c->ncancelled == (int)(sizeof c->cancelled /
                                          sizeof c->cancelled[0]))
        c->cancel_every = true;
      else
        c->cancelled[c->ncancelled++] = stream;
    }
    comm_unlock_busy(c);
    give_up_finish(&g);
  }
}

/* The progress thread: c's lock held, waits until progress_wake, at
 * most ns (0: no limit); returns with c's lock held again.  The caller
 * has set what tells others to wake it (sleeping, standby,
 * blocked_ready) under the lock: one who saw it sets wake, which this
 * reads under wait_lock, so no wake-up is lost in between. */
static void progress_sleep(struct ascComm_st *c, uint64_t ns) {
  comm_unlock(c);
  pthread_mutex_lock(&c->wait_lock);
  if (!c->wake) {
    if (ns == 0) {
      pthread_cond_wait(&c->cond, &c->wait_lock);
    } else {
      struct timespec ts;
      uint64_t t;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      t = (uint64_t)ts.tv_nsec + ns;
      ts.tv_sec += (time_t)(t / 1000000000u);
      ts.tv_nsec = (long)(t % 1000000000u);
      (void)pthread_cond_timedwait(&c->cond, &c->wait_lock, &ts);
    }
  }
  c->wake = false;
  pthread_mutex_unlock(&c->wait_lock);
  comm_lock(c);
}

static void *progress_main(void *arg) {
  struct ascComm_st *c = arg;
  uint64_t last = now_ns();
  /* The waiters' poll count as last seen, and when this thread saw it
   * change (0: never). */
  uint64_t seen = atomic_load(&c->driven), seen_ns = 0;

  for (;;) {
    bool waited = false, graced = false;
    int r;

    comm_lock(c);
    for (;;) {
      uint64_t now, since, d;
      if (c->stop && c->completed == atomic_load(&c->next_seq)) {
        comm_unlock(c);
        return NULL;   /* stopped, everything completed */
      }
      now = now_ns();
      d = atomic_load_explicit(&c->driven, memory_order_relaxed);
      if (d != seen) {
        seen = d;
        seen_ns = now;
      }
      /* Active operations: since a waiter last tested them; none: since
       * this thread saw that a waiter had polled. */
      since = c->active != NULL
                  ? now - atomic_load_explicit(&c->driven_ns,
                                               memory_order_relaxed)
                  : now - seen_ns;
      if (c->blocked_ready && graced)
        break;   /* no waiter of its stream came: this thread runs it */
      if (since >= DRIVEN_NS && c->active != NULL)
        break;   /* nobody else polls: this thread does */
      if (c->blocked_ready) {
        /* Even while a waiter polls: it may wait for another stream,
         * and then never runs this op. */
        graced = true;
        progress_sleep(c, GRACE_NS);
      } else if (since >= DRIVEN_NS) {
        /* Idle, and no waiter around: sleep until an op is started. */
        c->sleeping = true;
        progress_sleep(c, 0);
        c->sleeping = false;
        graced = false;
      } else {
        /* A waiter polls (or did a moment ago, and may again for the
         * next op): stand by, without being woken for each op. */
        c->standby = true;
        progress_sleep(c, DRIVEN_NS - since);
        c->standby = false;
      }
      waited = true;
    }
    comm_unlock(c);
    if (waited)
      last = now_ns();

    r = start_ready(c, BLOCK_ANY, NULL, NULL) ? ASC__EXTERN_PROGRESS
                                              : poll_comm(c, NULL);
    if (r == ASC__EXTERN_PROGRESS) {
      last = now_ns();
    } else if (r == ASC__EXTERN_BUSY) {
      uint64_t since = now_ns() - last;
      if (since < POLL_NS) {
        sched_yield();
      } else {
        uint64_t ns = since / 100;
        struct timespec nap = {
            0, (long)(ns < NAP_NS ? NAP_NS : ns > NAP_MAX_NS ? NAP_MAX_NS
                                                              : ns)};
        nanosleep(&nap, NULL);
      }
    }
  }
}

/* o's span in traces (docs/tracing.md): its name, and the bytes of the
 * count it was given (a group: of all its sends and receives).  Kinds
 * without a short name here go by the function's ("ascAllToAll"). */
static const char *trace_name(const xop *o) {
  switch (o->kind) {
  case K_ALLREDUCE: return "allreduce";
  case K_REDUCE: return "reduce";
  case K_BCAST: return "broadcast";
  case K_ALLGATHER: return "allgather";
  case K_REDSCAT: return "reducescatter";
  case K_SEND: return "send";
  case K_RECV: return "recv";
  case K_GROUP: return "group";
  default: return o->name;
  }
}

static uint64_t trace_bytes(const xop *o) {
  uint64_t n = 0;

  if (o->kind != K_GROUP)
    return (uint64_t)o->count * o->esize;
  for (int i = 0; i < o->nsubs; i++)
    n += (uint64_t)o->subs[i].count * ascDataTypeSize(o->subs[i].dtype);
  return n;
}

ascError_t asc__mpi_enqueue(ascComm_t comm, xop *o, ascStream_t stream) {
  ascError_t err;

  o->comm = comm;
  o->stream = stream;
  /* A broken communicator (give_up_locked) fails at once; one that
   * breaks after this test fails the op when the stream reaches it. */
  if (atomic_load_explicit(&comm->broken, memory_order_relaxed)) {
    err = asc__mpi_err(ascErrorCommunication,
                       "%s: the communicator is unusable: an earlier "
                       "operation on it was given up by a cancellation",
                       o->name);
    asc__mpi_op_free(o);
    return err;
  }
  o->seq = atomic_fetch_add_explicit(&comm->next_seq, 1,
                                     memory_order_relaxed);
  err = asc__stream_enqueue_extern_named(stream, reached, o, trace_name(o),
                                         trace_bytes(o));
  if (err != ascSuccess) {
    /* The position is taken: fill it, so later ones still start. */
    o->kind = K_HOLE;
    start_ready(comm, BLOCK_NONE, NULL, o);
  }
  return err;
}

ascError_t ascCommInitFromMPI(ascComm_t *comm, MPI_Comm mpiComm) {
  struct ascComm_st *c;
  int inited = 0, finalized = 0, level = 0, rc;
  char text[MPI_MAX_ERROR_STRING];
  int len;

  if (comm == NULL)
    return asc__mpi_err(ascErrorInvalidValue,
                        "ascCommInitFromMPI: comm is NULL");
  *comm = NULL;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized)
    return asc__mpi_err(ascErrorNotInitialized,
                        "ascCommInitFromMPI: MPI is %s",
                        finalized ? "finalized" : "not initialized");
  if (mpiComm == MPI_COMM_NULL)
    return asc__mpi_err(ascErrorInvalidValue,
                        "ascCommInitFromMPI: mpiComm is MPI_COMM_NULL");
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE)
    return asc__mpi_err(ascErrorUnsupported,
                        "ascCommInitFromMPI: MPI was initialised without "
                        "MPI_THREAD_MULTIPLE (call MPI_Init_thread with "
                        "it): the progress thread calls MPI while the "
                        "application may too");

  pthread_mutex_lock(&free_lock);
  c = free_comms;
  if (c != NULL)
    free_comms = c->free_next;
  pthread_mutex_unlock(&free_lock);
  if (c == NULL) {
    pthread_condattr_t ca;
    c = calloc(1, sizeof *c);
    if (c == NULL)
      return asc__mpi_err(ascErrorOutOfMemory,
                          "ascCommInitFromMPI: out of memory");
    /* Once: the memory and its lock outlive the communicator (the free
     * list), so a waiter's poll may race with ascCommDestroy. */
    if (pthread_condattr_init(&ca) != 0 ||
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_mutex_init(&c->wait_lock, NULL) != 0 ||
        pthread_cond_init(&c->cond, &ca) != 0) {
      free(c);
      return asc__mpi_err(ascErrorInternal,
                          "ascCommInitFromMPI: cannot create a lock");
    }
    pthread_condattr_destroy(&ca);
  }
  c->free_next = NULL;
  /* Under the lock: a waiter's poll may still hold this memory from an
   * earlier life. */
  comm_lock(c);
  atomic_store(&c->next_seq, 0);
  c->next_start = c->completed = 0;
  c->reached = NULL;
  c->active = NULL;
  c->active_tail = &c->active;
  c->starting = c->polling = c->sleeping = c->blocked_ready = false;
  c->standby = false;
  atomic_store(&c->broken, false);
  c->current = NULL;
  c->current_progress = false;
  c->abandoned = NULL;
  c->ncancelled = 0;
  c->cancel_every = false;
  atomic_store(&c->busy, false);
  atomic_store(&c->driven, 0);
  atomic_store(&c->driven_ns, 0);
  c->stop = false;
  comm_unlock(c);
  pthread_mutex_lock(&c->wait_lock);
  c->wake = false;
  pthread_mutex_unlock(&c->wait_lock);
  rc = MPI_Comm_dup(mpiComm, &c->mpi);
  if (rc != MPI_SUCCESS) {
    MPI_Error_string(rc, text, &len);
    pthread_mutex_lock(&free_lock);
    c->free_next = free_comms;
    free_comms = c;
    pthread_mutex_unlock(&free_lock);
    return asc__mpi_err(ascErrorCommunication,
                        "ascCommInitFromMPI: MPI_Comm_dup failed: %s", text);
  }
  /* Errors come back as codes, for the stream, instead of aborting. */
  MPI_Comm_set_errhandler(c->mpi, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c->mpi, &c->rank);
  MPI_Comm_size(c->mpi, &c->size);
  {
    /* The blocking limit must be the same on every rank: the smallest
     * asked for wins (ASC_MPI_BLOCKING_MAX, bytes; 0 or less: never). */
    const char *e = getenv("ASC_MPI_BLOCKING_MAX");
    long long lim = e != NULL && *e != '\0' ? strtoll(e, NULL, 10)
                                           : BLOCKING_MAX;
    if (MPI_Allreduce(MPI_IN_PLACE, &lim, 1, MPI_LONG_LONG, MPI_MIN,
                      c->mpi) != MPI_SUCCESS)
      lim = 0;
    c->blocking_max = lim > 0 ? lim : -1;
  }
  {
    /* Emulated latency, microseconds, at most 10 s (per rank: it only
     * delays this rank's completions). */
    const char *e = getenv("ASC_MPI_DELAY_US");
    long long us = e != NULL && *e != '\0' ? strtoll(e, NULL, 10) : 0;
    if (us < 0)
      us = 0;
    if (us > 10000000)
      us = 10000000;
    c->delay_ns = (uint64_t)us * 1000u;
  }
  if (pthread_create(&c->thread, NULL, progress_main, c) != 0) {
    MPI_Comm_free(&c->mpi);
    pthread_mutex_lock(&free_lock);
    c->free_next = free_comms;
    free_comms = c;
    pthread_mutex_unlock(&free_lock);
    return asc__mpi_err(ascErrorInternal,
                        "ascCommInitFromMPI: cannot start the progress "
                        "thread");
  }
  pthread_mutex_lock(&free_lock);
  atomic_store_explicit(&c->live_next, atomic_load(&live_comms),
                        memory_order_relaxed);
  atomic_store_explicit(&live_comms, c, memory_order_release);
  asc__extern_set_poll(wait_poll);
  asc__extern_set_cancel(cancel_hook);
  pthread_mutex_unlock(&free_lock);
  atomic_store(&c->magic, COMM_MAGIC);
  *comm = c;
  return ascSuccess;
}

ascError_t ascCommDestroy(ascComm_t comm) {
  unsigned alive = COMM_MAGIC;
  ascError_t err = asc__mpi_comm_check(comm, "ascCommDestroy");
  bool broken, stuck, stuck_progress;

  if (err != ascSuccess)
    return err;
  if (!atomic_compare_exchange_strong(&comm->magic, &alive, COMM_DEAD))
    return asc__mpi_err(ascErrorInvalidHandle,
                        "ascCommDestroy: comm %p was destroyed",
                        (void *)comm);
  comm_lock(comm);
  comm->stop = true;
  progress_wake(comm);
  /* Given up while a thread ran it inside a blocking MPI call: that
   * thread may never come back (give_up_locked). */
  broken = atomic_load(&comm->broken);
  stuck = broken && comm->current != NULL;
  stuck_progress = stuck && comm->current_progress;
  comm_unlock(comm);
  /* The thread returns once every queued operation has completed (given
   * up ones count), unless it is the one stuck in MPI. */
  if (stuck_progress)
    pthread_detach(comm->thread);
  else
    pthread_join(comm->thread, NULL);
  if (!stuck)
    free(atomic_exchange(&comm->spare, NULL));
  /* A broken communicator's duplicate may still have operations posted
   * (comm->abandoned) or running: MPI keeps it. */
  if (!broken)
    MPI_Comm_free(&comm->mpi);
  pthread_mutex_lock(&free_lock);
  for (struct ascComm_st *_Atomic *p = &live_comms; atomic_load(p) != NULL;
       p = &atomic_load(p)->live_next)
    if (atomic_load(p) == comm) {
      atomic_store(p, atomic_load(&comm->live_next));
      break;
    }
  /* No hook into this library once nothing uses it (it may be
   * unloaded). */
  if (atomic_load(&live_comms) == NULL) {
    asc__extern_set_poll(NULL);
    asc__extern_set_cancel(NULL);
  }
  /* The stuck thread still uses the memory when (if) MPI returns. */
  if (!stuck) {
    comm->free_next = free_comms;
    free_comms = comm;
  }
  pthread_mutex_unlock(&free_lock);
  return ascSuccess;
}

ascError_t ascCommRank(ascComm_t comm, int *rank) {
  ascError_t err = asc__mpi_comm_check(comm, "ascCommRank");
  if (err != ascSuccess)
    return err;
  if (rank == NULL)
    return asc__mpi_err(ascErrorInvalidValue, "ascCommRank: rank is NULL");
  *rank = comm->rank;
  return ascSuccess;
}

ascError_t ascCommSize(ascComm_t comm, int *size) {
  ascError_t err = asc__mpi_comm_check(comm, "ascCommSize");
  if (err != ascSuccess)
    return err;
  if (size == NULL)
    return asc__mpi_err(ascErrorInvalidValue, "ascCommSize: size is NULL");
  *size = comm->size;
  return ascSuccess;
}
