/*
 * The worker pool and the kernel services (asc_krt).
 *
 *   submit ──> ready lists (one per priority level, pool lock)
 *                 │  BLOCKS job: launch with blocks left to hand out
 *                 │  LOOP job:   a block's parallel loop with helper slots
 *                 v
 *   worker: take the first job of the highest level ─┬─ block: lead it
 *                                                    └─ loop: help it
 *
 * Each block's team is its leader (the worker that took the block) plus up
 * to team-1 helpers that join its parallel loops while they are open.  A
 * parallel loop never waits for helpers to arrive, only for those that
 * joined to finish their chunk, so a loop finishes even when every other
 * worker is busy: nothing in the pool can deadlock on team size.
 *
 * A host thread waiting for a stream (asc__sched_help) takes that
 * stream's jobs the same way, as a guest with a worker record on its own
 * stack.
 *
 * Idle workers spin on the job count for ASC_SPIN_US microseconds, then
 * park, each on its own condition variable, so that a wakeup goes to the
 * worker chosen for it.  A guest sits on some core, where a worker is
 * pinned: that worker parks at once when idle, takes no helper slot of a
 * loop while the guest is there, and is woken for a block only when no
 * other worker is parked, so that the guest and a worker never share a
 * core while another is idle.
 */
#define _GNU_SOURCE    /* pthread_getattr_np */
#include "runtime/scheduler.h"
#include "runtime/memory.h"
#include "runtime/blas.h"
#include "runtime/lapack.h"
#include "runtime/trace.h"
#include "base/env.h"

#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_SPIN_US 200
#define WORKER_STACK_SIZE ((size_t)8 << 20)
/* A host thread runs kernel blocks only with this much stack free below
 * it: kernels may use as much (local arrays live on the stack). */
#define GUEST_STACK_MIN (WORKER_STACK_SIZE - ((size_t)1 << 20))

/* One block's team; embedded in the worker that leads the block. */
typedef struct team {
  asc__job job;                 /* LOOP job while a loop is open */
  int32_t size;
  int nhelpers;                 /* slots handed out; under the pool lock */
  asc__launch *launch;
  int64_t n;
  int64_t min_chunk;
  asc_kbody body;
  void *env;
  _Alignas(ASC_CACHE_LINE) _Atomic int64_t next;  /* next iteration */
  _Atomic int64_t lowest;       /* lowest raising iteration, n if none */
  _Alignas(ASC_CACHE_LINE) atomic_int nactive;    /* helpers inside */
  atomic_flag exc_lock;         /* leaf lock guarding exc */
  asc_kexc exc;
  /* Temporaries of the blocks this team leads (asc_krt.alloc): a leaf
   * lock, since the team's threads allocate inside parallel loops; kept
   * across blocks, all free again when a block ends (tmp_block_end). */
  asc__spinlock tmp_lock;
  struct tmpbuf *tmp;
  int ntmp, tmp_cap;
  int tmp_idle;     /* entries not busy: none, and alloc skips the scan */
  size_t tmp_bytes;
} team;

typedef struct tmpbuf {
  void *p;          /* from asc__array_alloc: 64-byte aligned */
  size_t cap;
  bool busy;
} tmpbuf;

/* Bytes of free temporaries a team keeps after a block for the next ones;
 * beyond this they are freed when the block ends. */
#define TMP_KEEP ((size_t)64 << 20)

typedef struct worker {
  _Alignas(ASC_CACHE_LINE) team team;
  asc__sched *sched;
  int index;
  uv_thread_t thread;
  /* Guests whose core (when last looked at) is this worker's. */
  atomic_int guests;
  /* Under the pool's park_lock: parked on cond; woken for work; parked
   * to leave its core to a guest (counted in nyielded). */
  bool parked, kicked, yielded;
  uv_cond_t cond;
  void *scratch;                /* shared_bytes of the led block */
  size_t scratch_cap;
  asc__launch *next;            /* a one-block launch to run next */
} worker;

struct asc__sched {
  asc__device *dev;
  int nworkers;
  uint64_t spin_ns;
  worker *workers;

  /* The pool lock (a spinlock) guards the ready lists, the gang state
   * and stop.  A thread may hold one stream lock when it takes the pool
   * lock (submission happens while a stream is being advanced); while
   * holding the pool lock it takes no other lock. */
  _Alignas(ASC_CACHE_LINE) asc__spinlock lock;
  asc__job *head[ASC_PRIO_LEVELS];
  asc__job *tail[ASC_PRIO_LEVELS];
  bool stop;
  /* Parked workers wait on their cond under park_lock, a leaf lock taken
   * with no other lock held. */
  uv_mutex_t park_lock;
  atomic_int nsleeping;
  /* The worker pinned to each OS cpu's core (-1: none), ncpus entries. */
  int *cpu_worker;
  int ncpus;
  /* Launches that use barriers run one at a time so that two of them can
   * never each hold half of the workers at a barrier. */
  asc__launch *gang_active;
  asc__launch *gang_head, *gang_tail;   /* linked through job.next */

  /* Polled by spinning workers without the lock. */
  _Alignas(ASC_CACHE_LINE) atomic_int njobs;
  atomic_int nblocks;           /* of which launches' blocks */
  atomic_uint pushes;           /* jobs ever pushed, wrapping */
  /* Workers neither running a job nor parked: counted from the moment a
   * worker has finished its part of a job (before it signals that), so
   * that a submitter reacting to that signal sees it available. */
  atomic_int navail;
  /* Host threads lent to the pool while they wait (asc__sched_guest),
   * and idle workers that parked early to give them a core. */
  atomic_int nguests;
  /* Guests running a job (leading a block or helping a loop): they take
   * no other slot until it ends.  Raised under the pool lock. */
  atomic_int nguests_busy;
  atomic_int nyielded;
  atomic_int stop_flag;
  atomic_int bind_warned;
};

static _Thread_local worker *tls_worker;
static _Thread_local int32_t tls_tid;
static _Thread_local bool tls_in_loop;
/* While the thread is a guest (a waiting host thread): the pool it is a
 * guest of (NULL otherwise), and its mark there, the worker of the core
 * it was on when last looked at (-1: none). */
static _Thread_local asc__sched *tls_guest_sched;
static _Thread_local int tls_guest_core = -1;
/* The calling thread's stack: lowest address (0 until looked up, 1 when
 * it cannot be found) and end. */
static _Thread_local uintptr_t tls_stack_low, tls_stack_high;

bool asc__on_worker(void) { return tls_worker != NULL; }

#define cpu_relax asc__cpu_relax

/* ------------------------------------------------------- aligned memory */

void *asc__cache_alloc(size_t size) {
  unsigned char *raw, *p;

  if (size > SIZE_MAX - 2 * ASC_CACHE_LINE)
    return NULL;
  raw = asc__calloc(1, size + 2 * ASC_CACHE_LINE);
  if (raw == NULL)
    return NULL;
  p = (unsigned char *)(((uintptr_t)raw + 2 * ASC_CACHE_LINE - 1) &
                        ~(uintptr_t)(ASC_CACHE_LINE - 1));
  memcpy(p - sizeof raw, &raw, sizeof raw);
  return p;
}

void asc__cache_free(void *p) {
  unsigned char *raw;

  if (p == NULL)
    return;
  memcpy(&raw, (unsigned char *)p - sizeof raw, sizeof raw);
  asc__free(raw);
}

/* ------------------------------------------------------------ ready lists */

void asc__spin_lock_slow(asc__spinlock *l) {
  for (unsigned n = 0;; n++) {
    if (!atomic_load_explicit(&l->v, memory_order_relaxed) &&
        !atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
      return;
    if (n < 100)
      asc__cpu_relax();
    else
      sched_yield();
  }
}

/* The worker pinned to the core the calling thread runs on, or -1. */
static int core_worker(const asc__sched *s) {
  int cpu = sched_getcpu();
  return cpu >= 0 && cpu < s->ncpus ? s->cpu_worker[cpu] : -1;
}

/* Moves the calling guest's mark in s to worker `to` (-1: none).
 * Nothing if the thread is not a guest of s (a guest of one device's
 * pool may wake another's). */
static void guest_move(asc__sched *s, int to) {
  if (s != tls_guest_sched || to == tls_guest_core)
    return;
  if (to >= 0)
    atomic_fetch_add(&s->workers[to].guests, 1);
  if (tls_guest_core >= 0)
    atomic_fetch_sub(&s->workers[tls_guest_core].guests, 1);
  tls_guest_core = to;
}

/* Wakes up to n parked workers.  No lock held.  First those on cores
 * where no guest sits, other than the calling host thread's core: a
 * worker woken there would share the core with that thread (a parallel
 * loop then ran at one core's speed: 15-20 ms instead of 10.4 for the
 * suite's histogram after 20 ms of idle, and heat 3-D 80 ms instead of
 * 55, docs/decisions.md).  Then, unless the work is a loop's helper
 * slots (which no loop waits for), the rest. */
static void wake(asc__sched *s, int n, bool loop) {
  int here = -1, i, pass;

  if (n <= 0 || atomic_load(&s->nsleeping) == 0)
    return;
  if (tls_worker == NULL || tls_worker->index < 0) {
    here = core_worker(s);
    guest_move(s, here);    /* a guest: the OS may have moved it */
  }
  uv_mutex_lock(&s->park_lock);
  for (pass = 0; pass < (loop ? 1 : 2) && n > 0; pass++)
    for (i = 0; i < s->nworkers && n > 0; i++) {
      worker *w = &s->workers[i];
      if (!w->parked || w->kicked ||
          (pass == 0 &&
           (i == here || atomic_load_explicit(&w->guests,
                                              memory_order_relaxed) > 0)))
        continue;
      w->kicked = true;
      uv_cond_signal(&w->cond);
      n--;
    }
  uv_mutex_unlock(&s->park_lock);
}

/* Pool lock held.  Returns how many parked workers the caller should wake
 * once it has dropped the lock. */
static int job_push(asc__sched *s, asc__job *j, int nclaims) {
  int lv = j->level;

  if (j->kind == ASC__JOB_LOOP) {     /* running blocks finish first */
    j->prev = NULL;
    j->next = s->head[lv];
    if (s->head[lv] != NULL)
      s->head[lv]->prev = j;
    else
      s->tail[lv] = j;
    s->head[lv] = j;
  } else {
    j->next = NULL;
    j->prev = s->tail[lv];
    if (s->tail[lv] != NULL)
      s->tail[lv]->next = j;
    else
      s->head[lv] = j;
    s->tail[lv] = j;
  }
  j->queued = true;
  atomic_fetch_add_explicit(&s->pushes, 1, memory_order_relaxed);
  if (j->kind == ASC__JOB_BLOCKS)
    atomic_fetch_add_explicit(&s->nblocks, 1, memory_order_seq_cst);
  atomic_fetch_add_explicit(&s->njobs, 1, memory_order_seq_cst);
  /* Available workers (a worker submitting from its completion path is
   * one of them) will see the job without a wakeup.  A loop never waits
   * for helpers to arrive, so it wakes nobody for slots that host threads
   * waiting in the pool (guests) may take; but a guest running a job
   * takes none (one leading a block takes none of its own loops': when
   * that loop's helper had parked, the guest ran the rest of the block
   * alone, docs/decisions.md). */
  nclaims -= atomic_load_explicit(&s->navail, memory_order_seq_cst);
  if (j->kind == ASC__JOB_LOOP)
    nclaims -= atomic_load_explicit(&s->nguests, memory_order_seq_cst) -
               atomic_load_explicit(&s->nguests_busy, memory_order_seq_cst);
  return nclaims;
}

/* Pool lock held. */
static void job_unlink(asc__sched *s, asc__job *j) {
  int lv = j->level;

  if (j->prev != NULL)
    j->prev->next = j->next;
  else
    s->head[lv] = j->next;
  if (j->next != NULL)
    j->next->prev = j->prev;
  else
    s->tail[lv] = j->prev;
  j->next = j->prev = NULL;
  j->queued = false;
  if (j->kind == ASC__JOB_BLOCKS)
    atomic_fetch_sub_explicit(&s->nblocks, 1, memory_order_seq_cst);
  atomic_fetch_sub_explicit(&s->njobs, 1, memory_order_seq_cst);
}

static asc__job *job_first(asc__sched *s) {
  for (int lv = 0; lv < ASC_PRIO_LEVELS; lv++)
    if (s->head[lv] != NULL)
      return s->head[lv];
  return NULL;
}

/* True while a guest sits on w's core: w then takes blocks only. */
static bool guest_here(const worker *w) {
  return w->index >= 0 &&
         atomic_load_explicit(&w->guests, memory_order_relaxed) > 0;
}

/* Pool lock held: the first queued job w may take. */
static asc__job *job_first_for(asc__sched *s, const worker *w) {
  if (!guest_here(w))
    return job_first(s);
  for (int lv = 0; lv < ASC_PRIO_LEVELS; lv++)
    for (asc__job *j = s->head[lv]; j != NULL; j = j->next)
      if (j->kind == ASC__JOB_BLOCKS)
        return j;
  return NULL;
}

/* Without the lock: is a job w may take queued?  One load each way, so
 * that the park handshake (njobs or nblocks against nsleeping) holds. */
static bool takeable(asc__sched *s, const worker *w) {
  return atomic_load_explicit(guest_here(w) ? &s->nblocks : &s->njobs,
                              memory_order_seq_cst) > 0;
}

static void avail(asc__sched *s, int delta) {
  atomic_fetch_add_explicit(&s->navail, delta, memory_order_seq_cst);
}

/* ---------------------------------------------------------------- launches */

int asc__launch_init(asc__launch *l) {
  memset(l, 0, offsetof(asc__launch, argbuf));
  if (uv_mutex_init(&l->bar_lock) != 0)
    return -1;
  if (uv_cond_init(&l->bar_cond) != 0) {
    uv_mutex_destroy(&l->bar_lock);
    return -1;
  }
  if (uv_mutex_init(&l->crit) != 0) {
    uv_cond_destroy(&l->bar_cond);
    uv_mutex_destroy(&l->bar_lock);
    return -1;
  }
  return 0;
}

void asc__launch_fini(asc__launch *l) {
  uv_mutex_destroy(&l->crit);
  uv_cond_destroy(&l->bar_cond);
  uv_mutex_destroy(&l->bar_lock);
}

/* Blocks of a launch of n blocks that run at once (at least one). */
static uint32_t resident_blocks(const asc__sched *s, uint32_t n) {
  uint32_t r = n < (uint32_t)s->nworkers ? n : (uint32_t)s->nworkers;
  return r > 0 ? r : 1;
}

void asc__launch_prepare(asc__launch *l, asc__sched *s,
                         const asc_kernel_desc *desc, uint32_t nblocks,
                         uint32_t share, int level) {
  /* The workers are divided among the blocks that can run at once: share
   * blocks would have had `threads` of them in all. */
  uint32_t each = resident_blocks(s, share);
  uint32_t threads = each * ((uint32_t)s->nworkers / each);

  l->job.kind = ASC__JOB_BLOCKS;
  l->job.level = level;
  l->job.queued = false;
  l->desc = desc;
  l->nblocks = nblocks;
  l->nkept = 0;
  l->team = (int32_t)(threads / resident_blocks(s, nblocks));
  if (l->team < 1)
    l->team = 1;
  l->next_block = 0;
  l->gang = (desc->flags & ASC_KERNEL_USES_BARRIER) != 0 && nblocks > 1;
  atomic_store_explicit(&l->done, 0, memory_order_relaxed);
  atomic_store_explicit(&l->err_block, UINT32_MAX, memory_order_relaxed);
  atomic_store_explicit(&l->cancelled, 0, memory_order_relaxed);
  atomic_store_explicit(&l->stop, 0, memory_order_relaxed);
  /* Plain stores: a locked clear here was a full fence on a line the
   * previous launch's worker still holds. */
  atomic_flag_clear_explicit(&l->exc_lock, memory_order_relaxed);
  /* exc is read only after launch_raise has written it whole. */
  l->exc.kind = ASC_KEXC_NONE;
  l->exc.line = 0;
  l->exc.msg[0] = '\0';
  atomic_store_explicit(&l->bar_count, 0, memory_order_relaxed);
  atomic_store_explicit(&l->bar_gen, 0, memory_order_relaxed);
}

/* Pool lock held; returns the number of workers to wake. */
static int launch_queue(asc__sched *s, asc__launch *l) {
  return job_push(s, &l->job, (int)(l->nblocks < (uint32_t)s->nworkers
                                        ? l->nblocks
                                        : (uint32_t)s->nworkers));
}

void asc__sched_submit(asc__sched *s, asc__launch *l) {
  worker *w = tls_worker;
  int n = 0;

  /* A worker that finished a stream's launch and starts the stream's
   * next one-block launch runs it itself when nothing else is queued:
   * the launch never goes through the ready lists (its parallel loops
   * still do).  The worker stops counting as available before it looks
   * at njobs, and a pusher raises njobs before it reads navail (all
   * sequentially consistent): either this sees the pushed job and queues
   * l instead, or the pusher does not count this worker and wakes one. */
  if (w != NULL && w->index >= 0 && w->sched == s && w->next == NULL &&
      l->nblocks == 1 && !l->gang) {
    avail(s, -1);
    if (atomic_load_explicit(&s->njobs, memory_order_seq_cst) == 0) {
      l->next_block = 1;
      w->next = l;
      return;
    }
    avail(s, 1);
  }
  asc__spin_lock(&s->lock);
  if (l->gang && s->gang_active != NULL) {
    l->job.next = NULL;
    if (s->gang_tail != NULL)
      s->gang_tail->job.next = &l->job;
    else
      s->gang_head = l;
    s->gang_tail = l;
  } else {
    if (l->gang)
      s->gang_active = l;
    n = launch_queue(s, l);
  }
  asc__spin_unlock(&s->lock);
  wake(s, n, false);
}

static void spin_lock(atomic_flag *f) {
  while (atomic_flag_test_and_set_explicit(f, memory_order_acquire))
    cpu_relax();
}

static void spin_unlock(atomic_flag *f) {
  atomic_flag_clear_explicit(f, memory_order_release);
}

static void launch_raise(asc__launch *l, uint32_t b, const asc_kexc *exc) {
  spin_lock(&l->exc_lock);
  if (b < atomic_load_explicit(&l->err_block, memory_order_relaxed)) {
    l->exc = *exc;
    if ((l->exc.kind <= ASC_KEXC_NONE || l->exc.kind >= ASC_KEXC_COUNT) &&
        l->exc.kind != ASC_KEXC_CANCELLED) {
      l->exc.kind = ASC_KEXC_EXCEPTION;
      if (l->exc.msg[0] == '\0')
        snprintf(l->exc.msg, sizeof l->exc.msg,
                 "kernel entry failed without an exception");
    }
    l->exc.msg[ASC_KEXC_MSG_MAX - 1] = '\0';
    atomic_store_explicit(&l->err_block, b, memory_order_release);
  }
  spin_unlock(&l->exc_lock);
  atomic_store_explicit(&l->cancelled, 1, memory_order_release);
  /* Blocks waiting at a barrier must not wait for this one. */
  uv_mutex_lock(&l->bar_lock);
  uv_cond_broadcast(&l->bar_cond);
  uv_mutex_unlock(&l->bar_lock);
}

static void launch_block_done(asc__sched *s, asc__launch *l) {
  /* Read before counting: once the last block is counted, the record may
   * be completed and reused for another launch. */
  uint32_t nblocks = l->nblocks;

  if (atomic_fetch_add_explicit(&l->done, 1, memory_order_acq_rel) + 1 !=
      nblocks)
    return;
  if (l->gang) {
    int n = 0;
    asc__spin_lock(&s->lock);
    s->gang_active = s->gang_head;
    if (s->gang_head != NULL) {
      s->gang_head = (asc__launch *)(void *)s->gang_head->job.next;
      if (s->gang_head == NULL)
        s->gang_tail = NULL;
      n = launch_queue(s, s->gang_active);
    }
    asc__spin_unlock(&s->lock);
    wake(s, n, false);
  }
  l->complete(l);
}

static void *scratch_get(worker *w, uint64_t bytes) {
  if (bytes == 0)
    return NULL;
  if (bytes > SIZE_MAX - ASC_CACHE_LINE)
    return NULL;
  if (w->scratch_cap < bytes) {
    void *p = asc__malloc((size_t)bytes + ASC_CACHE_LINE);
    if (p == NULL)
      return NULL;
    asc__free(w->scratch);
    w->scratch = p;
    w->scratch_cap = (size_t)bytes;
  }
  return (void *)(((uintptr_t)w->scratch + ASC_CACHE_LINE - 1) &
                  ~(uintptr_t)(ASC_CACHE_LINE - 1));
}

/* ------------------------------------------------- kernel temporaries */

static void *krt_alloc(asc_kctx *ctx, uint64_t bytes) {
  team *t = ctx->team;
  tmpbuf *best = NULL;
  void *p = NULL;

  if (t == NULL || bytes > SIZE_MAX / 2)
    return NULL;
  if (bytes == 0)
    bytes = 1;
  asc__spin_lock(&t->tmp_lock);
  for (int i = 0; i < t->ntmp && t->tmp_idle > 0; i++) {
    tmpbuf *x = &t->tmp[i];
    if (!x->busy && x->cap >= bytes && (best == NULL || x->cap < best->cap))
      best = x;
  }
  if (best != NULL) {
    best->busy = true;
    t->tmp_idle--;
    p = best->p;
  }
  asc__spin_unlock(&t->tmp_lock);
  if (p != NULL)
    return p;
  /* Round up, so that a loop whose arrays grow a little reuses them. */
  if (bytes < SIZE_MAX / 4)
    bytes += bytes / 8;
  p = asc__array_alloc((size_t)bytes);
  if (p == NULL)
    return NULL;
  asc__spin_lock(&t->tmp_lock);
  if (t->ntmp == t->tmp_cap) {
    int cap = t->tmp_cap ? 2 * t->tmp_cap : 8;
    /* a short realloc under a leaf lock; failure loses nothing */
    tmpbuf *nt = asc__realloc(t->tmp, sizeof *nt * (size_t)cap);
    if (nt == NULL) {
      asc__spin_unlock(&t->tmp_lock);
      asc__array_free(p);
      return NULL;
    }
    t->tmp = nt;
    t->tmp_cap = cap;
  }
  t->tmp[t->ntmp].p = p;
  t->tmp[t->ntmp].cap = (size_t)bytes;
  t->tmp[t->ntmp].busy = true;
  t->ntmp++;
  t->tmp_bytes += (size_t)bytes;
  asc__spin_unlock(&t->tmp_lock);
  return p;
}

static void krt_release(asc_kctx *ctx, void *p) {
  team *t = ctx->team;

  if (t == NULL || p == NULL)
    return;
  /* from the newest: temporaries mostly go in the reverse order of
   * their making */
  asc__spin_lock(&t->tmp_lock);
  for (int i = t->ntmp - 1; i >= 0; i--)
    if (t->tmp[i].p == p) {
      if (t->tmp[i].busy)
        t->tmp_idle++;
      t->tmp[i].busy = false;
      break;
    }
  asc__spin_unlock(&t->tmp_lock);
}

/* A temporary of the block becomes the caller's device memory (a
 * returned array): it leaves t's list, so the block's end does not take
 * it back. */
static void *krt_keep(asc_kctx *ctx, void *p) {
  team *t = ctx->team;
  asc__launch *l = ctx->launch;
  worker *w;
  size_t cap = 0;
  int i;

  if (t == NULL || p == NULL || l == NULL)
    return NULL;
  w = (worker *)(void *)((char *)t - offsetof(worker, team));
  asc__spin_lock(&t->tmp_lock);
  for (i = 0; i < t->ntmp; i++)
    if (t->tmp[i].p == p && t->tmp[i].busy)
      break;
  if (i < t->ntmp) {
    cap = t->tmp[i].cap;
    t->tmp[i] = t->tmp[--t->ntmp];
    t->tmp_bytes -= cap;
  }
  asc__spin_unlock(&t->tmp_lock);
  if (cap == 0)
    return NULL;
  if (l->nkept == ASC__KEPT_MAX ||
      asc__dev_adopt(w->sched->dev, p, cap) != ascSuccess) {
    /* back on the list, free again when the block ends */
    asc__spin_lock(&t->tmp_lock);
    if (t->ntmp < t->tmp_cap) {
      t->tmp[t->ntmp].p = p;
      t->tmp[t->ntmp].cap = cap;
      t->tmp[t->ntmp].busy = true;
      t->ntmp++;
      t->tmp_bytes += cap;
      p = NULL;
    }
    asc__spin_unlock(&t->tmp_lock);
    if (p != NULL)
      asc__array_free(p);
    return NULL;
  }
  l->kept[l->nkept++] = p;
  return p;
}

/* Frees every temporary of t (a guest's team, or a worker that stops). */
static void tmp_free_all(team *t) {
  for (int i = 0; i < t->ntmp; i++)
    asc__array_free(t->tmp[i].p);
  asc__free(t->tmp);
  t->tmp = NULL;
  t->ntmp = t->tmp_cap = t->tmp_idle = 0;
  t->tmp_bytes = 0;
}

/* The block t led has ended, however it ended: its temporaries are free
 * again.  Its parallel loops have joined, so no other thread touches t. */
static void tmp_block_end(team *t) {
  if (t->ntmp == 0)
    return;
  if (t->tmp_bytes > TMP_KEEP) {
    tmp_free_all(t);
    return;
  }
  for (int i = 0; i < t->ntmp; i++)
    t->tmp[i].busy = false;
  t->tmp_idle = t->ntmp;
}

/* Runs block b of l on w's team.  Two copies: run_block's untraced one
 * and block_traced, which reads the trace clock around the block and
 * records its span, so an untraced block costs one flag test and keeps
 * no start time (docs/tracing.md "Tracing off"). */
static inline __attribute__((always_inline)) void
block_body(worker *w, asc__launch *l, uint32_t b, void *shared,
           bool traced) {
  asc_kctx ctx;
  asc_kexc exc;
  team *t = &w->team;
  uint64_t t0 = 0;

  t->size = l->team;
  t->launch = l;
  t->job.kind = ASC__JOB_LOOP;
  t->job.level = l->job.level;
  ctx.block_idx = b;
  ctx.block_num = l->nblocks;
  ctx.rt = &asc__krt;
  ctx.team = t;
  ctx.launch = l;
  ctx.shared = shared;
  exc.kind = ASC_KEXC_NONE;
  exc.line = 0;
  exc.msg[0] = '\0';
  ctx.stop = (const int32_t *)(const void *)&l->stop;
  tls_tid = 0;
  if (traced)
    t0 = asc__trace_now();
  if (atomic_load_explicit(&l->stop, memory_order_relaxed) != 0) {
    asc__kexc_cancelled(&exc, 0);
    launch_raise(l, b, &exc);
  } else if (l->desc->shared_bytes != 0 && ctx.shared == NULL) {
    exc.kind = ASC_KEXC_RUNTIME_ERROR;
    snprintf(exc.msg, sizeof exc.msg,
             "cannot allocate %llu bytes of shared scratch",
             (unsigned long long)l->desc->shared_bytes);
    launch_raise(l, b, &exc);
  } else if (l->desc->entry(&ctx, (void *const *)l->args, &exc) != 0) {
    launch_raise(l, b, &exc);
  }
  /* A block that started while tracing records its span even if the
   * session stopped meanwhile: into no session, as a hook racing a stop
   * does. */
  if (traced)
    asc__trace_block(l, b, t0);
  tmp_block_end(t);
}

static __attribute__((noinline)) void
block_traced(worker *w, asc__launch *l, uint32_t b, void *shared) {
  block_body(w, l, b, shared, true);
}

static void run_block(worker *w, asc__launch *l, uint32_t b) {
  asc__sched *s = w->sched;

  /* Blocks are handed out in increasing order; one above a block that
   * already raised cannot change which exception is reported. */
  if (b <= atomic_load_explicit(&l->err_block, memory_order_acquire)) {
    /* Outside block_body: one call site, so it stays inlined. */
    void *shared = scratch_get(w, l->desc->shared_bytes);
    if (asc__tracing())
      block_traced(w, l, b, shared);
    else
      block_body(w, l, b, shared, false);
  }
  if (w->index >= 0)
    avail(s, 1);
  launch_block_done(s, l);
}

/* ----------------------------------------------------------- parallel loops */

static void loop_work(team *t, int32_t tid) {
  asc_kexc exc;
  int64_t n = t->n;
  int64_t div = 2 * (int64_t)t->size;

  tls_in_loop = true;
  tls_tid = tid;
  for (;;) {
    int64_t cur = atomic_load_explicit(&t->next, memory_order_relaxed);
    int64_t chunk, r;

    do {
      int64_t rem;
      if (cur >= n ||
          cur >= atomic_load_explicit(&t->lowest, memory_order_acquire))
        goto out;
      rem = n - cur;
      chunk = rem / div;
      if (chunk > ASC_LOOP_CHUNK_MAX)
        chunk = ASC_LOOP_CHUNK_MAX;
      if (chunk < t->min_chunk)
        chunk = t->min_chunk;
      if (chunk > rem)
        chunk = rem;
    } while (!atomic_compare_exchange_weak_explicit(
        &t->next, &cur, cur + chunk, memory_order_relaxed,
        memory_order_relaxed));
    exc.kind = ASC_KEXC_NONE;
    if (atomic_load_explicit(&t->launch->stop, memory_order_relaxed) != 0) {
      /* Stopped from outside: as if iteration cur raised. */
      asc__kexc_cancelled(&exc, 0);
      r = cur + 1;
    } else {
      r = t->body(t->env, cur, cur + chunk, tid, &exc);
    }
    if (r != 0) {
      int64_t idx = r - 1;
      spin_lock(&t->exc_lock);
      if (idx < atomic_load_explicit(&t->lowest, memory_order_relaxed)) {
        t->exc = exc;
        atomic_store_explicit(&t->lowest, idx, memory_order_release);
      }
      spin_unlock(&t->exc_lock);
    }
  }
out:
  tls_in_loop = false;
}

static int krt_parallel_for(asc_kctx *ctx, int64_t n, int64_t min_chunk,
                            asc_kbody body, void *env, asc_kexc *exc) {
  team *t = ctx->team;
  asc__sched *s;
  uint64_t t0 = 0;
  unsigned spins = 0;
  int nwake;

  if (n <= 0)
    return 0;
  if (min_chunk < 1)
    min_chunk = 1;
  if (t == NULL || t->size <= 1 || tls_in_loop || n <= min_chunk) {
    /* In chunks too, checking the stop flag between them. */
    const asc__launch *l = ctx->launch;
    int64_t step = min_chunk > ASC_LOOP_CHUNK_MAX ? min_chunk
                                                  : ASC_LOOP_CHUNK_MAX;
    bool outer = tls_in_loop;
    int64_t r = 0;
    tls_in_loop = true;
    for (int64_t lo = 0; lo < n && r == 0; lo += step) {
      if (l != NULL &&
          atomic_load_explicit(&l->stop, memory_order_relaxed) != 0) {
        asc__kexc_cancelled(exc, 0);
        r = lo + 1;
        break;
      }
      r = body(env, lo, n - lo > step ? lo + step : n, tls_tid, exc);
    }
    tls_in_loop = outer;
    return r != 0;
  }

  s = tls_worker->sched;
  t->n = n;
  t->min_chunk = min_chunk;
  t->body = body;
  t->env = env;
  t->nhelpers = 0;
  atomic_store_explicit(&t->next, 0, memory_order_relaxed);
  atomic_store_explicit(&t->lowest, n, memory_order_relaxed);
  atomic_store_explicit(&t->nactive, 0, memory_order_relaxed);
  atomic_flag_clear(&t->exc_lock);

  asc__spin_lock(&s->lock);
  nwake = job_push(s, &t->job, t->size - 1);
  asc__spin_unlock(&s->lock);
  wake(s, nwake, true);

  loop_work(t, 0);

  asc__spin_lock(&s->lock);
  if (t->job.queued)
    job_unlink(s, &t->job);
  asc__spin_unlock(&s->lock);
  /* Helpers that joined are inside a chunk; wait for them. */
  while (atomic_load_explicit(&t->nactive, memory_order_acquire) != 0) {
    if (++spins < 64) {
      cpu_relax();
      continue;
    }
    spins = 0;
    if (t0 == 0)
      t0 = uv_hrtime();
    else if (uv_hrtime() - t0 > s->spin_ns)
      sched_yield();
  }
  tls_tid = 0;
  if (atomic_load_explicit(&t->lowest, memory_order_acquire) < n) {
    *exc = t->exc;
    return 1;
  }
  return 0;
}

static int32_t krt_team_size(asc_kctx *ctx) {
  team *t = ctx->team;
  return t != NULL && t->size > 0 ? t->size : 1;
}

static int krt_barrier(asc_kctx *ctx) {
  asc__launch *l = ctx->launch;
  asc__sched *s = tls_worker != NULL ? tls_worker->sched : NULL;
  unsigned gen;
  uint64_t t0;

  if (atomic_load_explicit(&l->cancelled, memory_order_acquire))
    return 1;
  if (tls_in_loop || !(l->desc->flags & ASC_KERNEL_USES_BARRIER)) {
    /* Inside a loop body (a compile error in the language) the team's
     * threads would be counted as blocks; in a kernel not flagged
     * ASC_KERNEL_USES_BARRIER the blocks need not be resident.  Either
     * could hang, so the launch fails instead. */
    asc_kexc exc;
    exc.kind = ASC_KEXC_RUNTIME_ERROR;
    exc.line = 0;
    snprintf(exc.msg, sizeof exc.msg, "%s",
             tls_in_loop ? "asc.barrier() called inside a parallel loop"
                         : "asc.barrier() called by a kernel not flagged "
                           "ASC_KERNEL_USES_BARRIER");
    launch_raise(l, ctx->block_idx, &exc);
    return 1;
  }
  if (l->nblocks <= 1)
    return 0;
  gen = atomic_load_explicit(&l->bar_gen, memory_order_acquire);
  if (atomic_fetch_add_explicit(&l->bar_count, 1, memory_order_acq_rel) + 1 ==
      l->nblocks) {
    atomic_store_explicit(&l->bar_count, 0, memory_order_relaxed);
    uv_mutex_lock(&l->bar_lock);
    atomic_store_explicit(&l->bar_gen, gen + 1, memory_order_release);
    uv_cond_broadcast(&l->bar_cond);
    uv_mutex_unlock(&l->bar_lock);
    return atomic_load_explicit(&l->cancelled, memory_order_acquire) != 0;
  }
  t0 = uv_hrtime();
  while (atomic_load_explicit(&l->bar_gen, memory_order_acquire) == gen &&
         !atomic_load_explicit(&l->cancelled, memory_order_acquire)) {
    for (int i = 0; i < 64; i++)
      cpu_relax();
    if (s == NULL || uv_hrtime() - t0 > s->spin_ns) {
      uv_mutex_lock(&l->bar_lock);
      while (atomic_load_explicit(&l->bar_gen, memory_order_acquire) == gen &&
             !atomic_load_explicit(&l->cancelled, memory_order_acquire))
        uv_cond_wait(&l->bar_cond, &l->bar_lock);
      uv_mutex_unlock(&l->bar_lock);
      break;
    }
  }
  return atomic_load_explicit(&l->cancelled, memory_order_acquire) != 0;
}

static void krt_critical_enter(asc_kctx *ctx) {
  asc__launch *l = ctx->launch;
  uv_mutex_lock(&l->crit);
}

static void krt_critical_exit(asc_kctx *ctx) {
  asc__launch *l = ctx->launch;
  uv_mutex_unlock(&l->crit);
}

static int krt_cancelled(asc_kctx *ctx) {
  asc__launch *l = ctx->launch;
  return atomic_load_explicit(&l->cancelled, memory_order_acquire);
}

static int64_t krt_cache_bytes(asc_kctx *ctx, int32_t level) {
  const asc__sched *s = tls_worker != NULL ? tls_worker->sched : NULL;
  ASC_UNUSED(ctx);
  if (s == NULL || s->dev == NULL)
    return 0;
  switch (level) {
  case 1:
    return (int64_t)s->dev->prop.l1CacheSize;
  case 2:
    return (int64_t)s->dev->prop.l2CacheSize;
  case 3:
    return (int64_t)s->dev->prop.l3CacheSize;
  default:
    return 0;
  }
}

const asc_krt asc__krt = {
    .abi_version = ASC_KABI_VERSION,
    .parallel_for = krt_parallel_for,
    .team_size = krt_team_size,
    .barrier = krt_barrier,
    .critical_enter = krt_critical_enter,
    .critical_exit = krt_critical_exit,
    .cancelled = krt_cancelled,
    .alloc = krt_alloc,
    .release = krt_release,
    .keep = krt_keep,
    .gemm = asc__krt_gemm,
    .cache_bytes = krt_cache_bytes,
    .gemm_ab = asc__krt_gemm_ab,
    .linalg = asc__krt_linalg,
};

/* ----------------------------------------------------------------- workers */

static void bind_worker(worker *w) {
  asc__sched *s = w->sched;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  int rc = -1;

  if (set != NULL) {
    hwloc_bitmap_only(set, (unsigned)s->dev->core_pu[w->index]);
    rc = hwloc_set_cpubind(s->dev->topo, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
  }
  if (rc != 0 && atomic_exchange(&s->bind_warned, 1) == 0)
    fprintf(stderr,
            "libasc: warning: cannot pin worker threads to their cores "
            "(PU %d); running unpinned\n",
            s->dev->core_pu[w->index]);
}

/* Pool lock held: 0 if nothing is queued, 1 if a block is, else 2 (only
 * loops' helper slots). */
static int more_kind(asc__sched *s) {
  if (atomic_load_explicit(&s->nblocks, memory_order_relaxed) > 0)
    return 1;
  return job_first(s) != NULL ? 2 : 0;
}

/* Pool lock held; j is queued.  Claims one unit of j for w (a block to
 * lead or a helper slot of a loop), drops the lock and runs it.  A pool
 * worker stops counting as available while it runs the job. */
static void job_run_unlock(asc__sched *s, worker *w, asc__job *j) {
  bool guest = w->index < 0;
  int more;       /* what is queued after the claim: see more_kind() */

  if (!guest)
    avail(s, -1);
  else
    atomic_fetch_add_explicit(&s->nguests_busy, 1, memory_order_seq_cst);
  if (j->kind == ASC__JOB_BLOCKS) {
    asc__launch *l = (asc__launch *)(void *)j;
    uint32_t b = l->next_block++;
    if (l->next_block == l->nblocks)
      job_unlink(s, j);
    more = more_kind(s);
    asc__spin_unlock(&s->lock);
    /* Submitters do not wake a worker for a job an available worker will
     * take; that worker may take another job instead, so whoever claims
     * work while more is queued passes a wakeup on. */
    if (more != 0)
      wake(s, 1, more == 2);
    run_block(w, l, b);
    /* Launches handed on by run_block's completion (asc__sched_submit,
     * which already took the worker out of navail). */
    while ((l = w->next) != NULL) {
      w->next = NULL;
      run_block(w, l, 0);
    }
    if (guest)
      atomic_fetch_sub_explicit(&s->nguests_busy, 1, memory_order_seq_cst);
  } else {
    team *t = (team *)(void *)j;
    int32_t tid = ++t->nhelpers;
    atomic_fetch_add_explicit(&t->nactive, 1, memory_order_relaxed);
    if (t->nhelpers >= t->size - 1)
      job_unlink(s, j);
    more = more_kind(s);
    asc__spin_unlock(&s->lock);
    if (more != 0)
      wake(s, 1, more == 2);
    loop_work(t, tid);
    if (!guest)
      avail(s, 1);
    else
      atomic_fetch_sub_explicit(&s->nguests_busy, 1, memory_order_seq_cst);
    atomic_fetch_sub_explicit(&t->nactive, 1, memory_order_release);
  }
}

/* True if idle worker w should park now so that a host thread lent to
 * the pool (asc__sched_guest) has a core.  The worker on a guest's core
 * parks at once.  So does, after spinning `late`, some other worker for
 * each guest not yet matched (one on a busy worker's core: the OS can
 * then move it to the parked worker's), while one worker stays.  Claims
 * the place; the caller gives it back (nyielded) when it wakes. */
static bool yield_to_guest(asc__sched *s, const worker *w, bool late) {
  int y = atomic_load_explicit(&s->nyielded, memory_order_relaxed);

  if (guest_here(w)) {
    atomic_fetch_add(&s->nyielded, 1);
    return true;
  }
  return late &&
         y < atomic_load_explicit(&s->nguests, memory_order_relaxed) &&
         y < s->nworkers - 1 &&
         atomic_compare_exchange_strong(&s->nyielded, &y, y + 1);
}

/* Spins until a job appears, stop is requested or the window closes.
 * The window restarts whenever a job was pushed meanwhile, seen queued or
 * not: a job that a guest or another worker claims at once still shows
 * the pool is busy, and a parked worker costs the next submitter a
 * wakeup.  Returns true if it saw something to do; *yielded is set when
 * it gave its core to a guest instead. */
static bool spin_for_work(asc__sched *s, const worker *w, bool *yielded) {
  uint64_t start = uv_hrtime(), t0 = start;
  uint64_t late_ns = s->spin_ns / 4;
  unsigned seen = atomic_load_explicit(&s->pushes, memory_order_relaxed);
  bool late = false;

  for (;;) {
    unsigned now;
    for (int i = 0; i < 128; i++) {
      if (takeable(s, w) ||
          atomic_load_explicit(&s->stop_flag, memory_order_relaxed))
        return true;
      if ((i & 15) == 0 && yield_to_guest(s, w, late)) {
        *yielded = true;
        return false;
      }
      cpu_relax();
    }
    now = atomic_load_explicit(&s->pushes, memory_order_relaxed);
    late = uv_hrtime() - start >= late_ns;
    if (now != seen) {
      seen = now;
      t0 = uv_hrtime();
    } else if (uv_hrtime() - t0 >= s->spin_ns) {
      return false;
    }
  }
}

static void worker_main(void *arg) {
  worker *w = arg;
  asc__sched *s = w->sched;

  tls_worker = w;
  asc__trace_thread_name("worker", w->index);
  bind_worker(w);
  avail(s, 1);
  for (;;) {
    asc__job *j;
    bool stop, yielded = false;

    asc__spin_lock(&s->lock);
    j = job_first_for(s, w);
    if (j != NULL) {
      job_run_unlock(s, w, j);
      continue;
    }
    stop = s->stop;
    asc__spin_unlock(&s->lock);
    if (stop)
      break;
    if (spin_for_work(s, w, &yielded))
      continue;
    /* Park.  A submitter raises njobs before it reads nsleeping, and this
     * thread raises nsleeping before it reads njobs (all sequentially
     * consistent), so one of the two always sees the other: a block
     * queued meanwhile is found here, or its submitter wakes a worker.
     * A loop's helper slots may wait for one (kicked is set only by
     * wake()), and a worker with a guest on its core leaves them. */
    avail(s, -1);
    uv_mutex_lock(&s->park_lock);
    w->parked = true;
    w->kicked = false;
    w->yielded = yielded;
    atomic_fetch_add(&s->nsleeping, 1);
    while (!w->kicked && !takeable(s, w) && !atomic_load(&s->stop_flag))
      uv_cond_wait(&w->cond, &s->park_lock);
    atomic_fetch_sub(&s->nsleeping, 1);
    w->parked = w->yielded = false;
    uv_mutex_unlock(&s->park_lock);
    avail(s, 1);
    if (yielded)
      atomic_fetch_sub(&s->nyielded, 1);
  }
  asc__free(w->scratch);
  w->scratch = NULL;
  tmp_free_all(&w->team);
  tls_worker = NULL;
}

/* Pool lock held: the first queued job, in priority order, that belongs
 * to a launch `mine` accepts. */
static asc__job *job_find(asc__sched *s, asc__help_fn mine, const void *arg) {
  for (int lv = 0; lv < ASC_PRIO_LEVELS; lv++)
    for (asc__job *j = s->head[lv]; j != NULL; j = j->next) {
      const asc__launch *l =
          j->kind == ASC__JOB_BLOCKS ? (const asc__launch *)(const void *)j
                                     : ((const team *)(const void *)j)->launch;
      if (mine(l, arg))
        return j;
    }
  return NULL;
}

#ifdef __GLIBC__
extern void *__libc_stack_end; /* the main thread's stack pointer at exec */
#endif

/* The main thread's stack, without glibc's pthread_getattr_np, which
 * reads all of /proc/self/maps to find it (0.3 ms in a Python process
 * with numpy loaded: a sixth of a cached kernel's first call).  It
 * starts just below __libc_stack_end and may grow down by RLIMIT_STACK;
 * Linux keeps mappings at least 128 MiB below the stack's start, so
 * WORKER_STACK_SIZE of it, or the limit if lower, is there.  False on
 * another thread, on a stack elsewhere (the child of a fork() on another
 * thread runs on that thread's stack) or another libc. */
static bool main_thread_stack(uintptr_t here, uintptr_t *low,
                              uintptr_t *high) {
#ifdef __GLIBC__
  struct rlimit rl;
  uintptr_t top = (uintptr_t)__libc_stack_end;
  size_t size = WORKER_STACK_SIZE;

  if (top == 0 || (long)getpid() != syscall(SYS_gettid) ||
      getrlimit(RLIMIT_STACK, &rl) != 0)
    return false;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size)
    size = (size_t)rl.rlim_cur;
  if (here >= top || here <= top - size)
    return false;
  *high = top;
  *low = top - size;
  return true;
#else
  ASC_UNUSED(here);
  ASC_UNUSED(low);
  ASC_UNUSED(high);
  return false;
#endif
}

/* True if the calling thread runs on its own stack (not a fiber's or a
 * signal stack) with GUEST_STACK_MIN of it left. */
static bool stack_roomy(void) {
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);

  if (tls_stack_low == 0) {
    pthread_attr_t a;
    void *addr;
    size_t size;

    tls_stack_low = 1;
    if (!main_thread_stack(here, &tls_stack_low, &tls_stack_high) &&
        pthread_getattr_np(pthread_self(), &a) == 0) {
      if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr != NULL) {
        tls_stack_low = (uintptr_t)addr;
        tls_stack_high = (uintptr_t)addr + size;
      }
      pthread_attr_destroy(&a);
    }
  }
  return tls_stack_low > 1 && here > tls_stack_low &&
         here < tls_stack_high && here - tls_stack_low >= GUEST_STACK_MIN;
}

bool asc__sched_can_help(void) {
  return tls_worker == NULL && stack_roomy();
}

void asc__sched_run_here(asc__sched *s, asc__launch *l) {
  worker guest, *g = &guest;

  memset(g, 0, sizeof *g);
  g->sched = s;
  g->index = -1;
  /* A guest like a waiting thread's: the worker of this core parks
   * while the block runs, and the block's loops count no helper slot
   * for this thread, which leads them. */
  asc__sched_guest(s, 1);
  atomic_fetch_add_explicit(&s->nguests_busy, 1, memory_order_seq_cst);
  tls_worker = g;
  /* Never queued: no other thread can claim the block. */
  l->next_block = 1;
  run_block(g, l, 0);
  tls_worker = NULL;
  atomic_fetch_sub_explicit(&s->nguests_busy, 1, memory_order_seq_cst);
  asc__sched_guest(s, -1);
  asc__free(g->scratch);
  tmp_free_all(&g->team);
}

bool asc__sched_help(asc__sched *s, asc__help_fn mine, const void *arg,
                     uint64_t *seen) {
  worker guest, *g = &guest;
  bool ran = false;
  unsigned pushes = atomic_load_explicit(&s->pushes, memory_order_acquire);

  /* The OS may have moved a waiting thread: its mark follows it. */
  if (s == tls_guest_sched)
    guest_move(s, core_worker(s));

  /* Jobs of the caller's launches appear only by being pushed: nothing
   * new to find since the last scan that found nothing. */
  if (tls_worker != NULL || pushes == *seen ||
      atomic_load_explicit(&s->njobs, memory_order_acquire) == 0 ||
      !stack_roomy())
    return false;
  /* The guest lives for this call only: a block it leads and the loops
   * that block opens end before it returns. */
  memset(g, 0, sizeof *g);
  g->sched = s;
  g->index = -1;
  tls_worker = g;
  for (;;) {
    asc__job *j;

    pushes = atomic_load_explicit(&s->pushes, memory_order_acquire);
    asc__spin_lock(&s->lock);
    j = s->stop ? NULL : job_find(s, mine, arg);
    if (j == NULL) {
      asc__spin_unlock(&s->lock);
      *seen = pushes;
      break;
    }
    job_run_unlock(s, g, j);
    ran = true;
  }
  tls_worker = NULL;
  asc__free(g->scratch);
  tmp_free_all(&g->team);
  return ran;
}

void asc__sched_guest(asc__sched *s, int delta) {
  if (delta > 0) {
    tls_guest_sched = s;
    guest_move(s, core_worker(s));
  } else {
    guest_move(s, -1);
    tls_guest_sched = NULL;
  }
  atomic_fetch_add_explicit(&s->nguests, delta, memory_order_seq_cst);
  /* A leaving guest hands its core back: helper slots that loops left
   * open for guests, or anything else still queued, get a parked worker
   * (wake() does nothing when none is parked).  (A loop pushed meanwhile saw the guest gone and woke
   * one itself: njobs and nguests are both sequentially consistent.) */
  if (delta < 0 && atomic_load_explicit(&s->njobs, memory_order_seq_cst) > 0)
    wake(s, 1, false);
}

static asc__env_num spin_env = {"ASC_SPIN_US", DEFAULT_SPIN_US, 0, 1000000,
                                ASC__ENV_CLAMP, false};

uint64_t asc__spin_ns_env(void) { return asc__env_u64(&spin_env) * 1000; }

static void sched_free(asc__sched *s, int started) {
  asc__spin_lock(&s->lock);
  s->stop = true;
  asc__spin_unlock(&s->lock);
  uv_mutex_lock(&s->park_lock);
  atomic_store(&s->stop_flag, 1);
  for (int i = 0; i < started; i++)
    uv_cond_signal(&s->workers[i].cond);
  uv_mutex_unlock(&s->park_lock);
  for (int i = 0; i < started; i++)
    uv_thread_join(&s->workers[i].thread);
  for (int i = 0; i < s->nworkers; i++)
    uv_cond_destroy(&s->workers[i].cond);
  uv_mutex_destroy(&s->park_lock);
  asc__free(s->cpu_worker);
  asc__cache_free(s->workers);
  asc__cache_free(s);
}

/* s->cpu_worker: each OS cpu of a worker's core names that worker. */
static ascError_t map_cpus(asc__sched *s) {
  hwloc_topology_t topo = s->dev->topo;
  hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
  int last = hwloc_bitmap_last(all);

  s->ncpus = last >= 0 ? last + 1 : 0;
  s->cpu_worker = asc__malloc((size_t)(s->ncpus > 0 ? s->ncpus : 1) *
                              sizeof(int));
  if (s->cpu_worker == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate the worker pool");
  for (int c = 0; c < s->ncpus; c++)
    s->cpu_worker[c] = -1;
  for (int i = 0; i < s->nworkers; i++) {
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(
        topo, (unsigned)s->dev->core_pu[i]);
    hwloc_obj_t core =
        pu != NULL ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu)
                   : NULL;
    hwloc_const_cpuset_t set =
        core != NULL ? core->cpuset : pu != NULL ? pu->cpuset : NULL;
    int c;
    if (set == NULL)
      continue;
    hwloc_bitmap_foreach_begin(c, set) {
      if (c < s->ncpus)
        s->cpu_worker[c] = i;
    }
    hwloc_bitmap_foreach_end();
  }
  return ascSuccess;
}

static ascError_t sched_create(asc__device *dev, asc__sched **out) {
  asc__sched *s = asc__cache_alloc(sizeof *s);
  uv_thread_options_t opts;
  ascError_t err;
  int i;

  if (s == NULL)
    return asc__error(ascErrorOutOfMemory, "cannot allocate the worker pool");
  s->dev = dev;
  s->nworkers = dev->ncores;
  s->spin_ns = asc__spin_ns_env();
  s->workers = asc__cache_alloc((size_t)s->nworkers * sizeof *s->workers);
  if (s->workers == NULL) {
    asc__cache_free(s);
    return asc__error(ascErrorOutOfMemory, "cannot allocate the worker pool");
  }
  if (uv_mutex_init(&s->park_lock) != 0) {
    asc__cache_free(s->workers);
    asc__cache_free(s);
    return asc__error(ascErrorInternal, "cannot create the pool lock");
  }
  for (i = 0; i < s->nworkers; i++)
    if (uv_cond_init(&s->workers[i].cond) != 0)
      break;
  if (i < s->nworkers) {
    while (i-- > 0)
      uv_cond_destroy(&s->workers[i].cond);
    uv_mutex_destroy(&s->park_lock);
    asc__cache_free(s->workers);
    asc__cache_free(s);
    return asc__error(ascErrorInternal, "cannot create the pool condition");
  }
  if ((err = map_cpus(s)) != ascSuccess) {
    sched_free(s, 0);
    return err;
  }
  opts.flags = UV_THREAD_HAS_STACK_SIZE;
  opts.stack_size = WORKER_STACK_SIZE;
  for (i = 0; i < s->nworkers; i++) {
    worker *w = &s->workers[i];
    int rc;
    w->sched = s;
    w->index = i;
    rc = uv_thread_create_ex(&w->thread, &opts, worker_main, w);
    if (rc != 0) {
      sched_free(s, i);
      return asc__error(ascErrorInternal, "cannot start worker thread %d: %s",
                        i, uv_strerror(rc));
    }
  }
  *out = s;
  return ascSuccess;
}

/* dev->sched is NULL (no pool), CREATING (one thread is building it) or
 * the pool. */
#define CREATING ((asc__sched *)(uintptr_t)1)

ascError_t asc__sched_get(asc__device *dev, asc__sched **out) {
  asc__sched *s = __atomic_load_n(&dev->sched, __ATOMIC_ACQUIRE);
  ascError_t err;

  while (s == NULL || s == CREATING) {
    asc__sched *expect = NULL;
    if (s == NULL &&
        __atomic_compare_exchange_n(&dev->sched, &expect, CREATING, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      err = sched_create(dev, &s);
      __atomic_store_n(&dev->sched, err == ascSuccess ? s : NULL,
                       __ATOMIC_RELEASE);
      if (err != ascSuccess)
        return err;
      break;
    }
    sched_yield();
    s = __atomic_load_n(&dev->sched, __ATOMIC_ACQUIRE);
  }
  *out = s;
  return ascSuccess;
}

asc__sched *asc__sched_peek(asc__device *dev) {
  asc__sched *s = __atomic_load_n(&dev->sched, __ATOMIC_ACQUIRE);
  return s == CREATING ? NULL : s;
}

void asc__sched_destroy(asc__device *dev) {
  asc__sched *s = __atomic_exchange_n(&dev->sched, NULL, __ATOMIC_ACQ_REL);
  if (s != NULL && s != CREATING)
    sched_free(s, s->nworkers);
}

void asc__sched_forget(asc__device *dev) {
  __atomic_store_n(&dev->sched, NULL, __ATOMIC_RELEASE);
}

int asc__sched_nworkers(const asc__sched *s) { return s->nworkers; }

void asc__sched_get_counts(asc__sched *s, asc__sched_counts *out) {
  out->nworkers = s->nworkers;
  out->navail = atomic_load(&s->navail);
  out->nsleeping = atomic_load(&s->nsleeping);
  out->nguests = atomic_load(&s->nguests);
  out->nyielded = atomic_load(&s->nyielded);
  out->pushes = atomic_load(&s->pushes);
  out->parked = out->yielded = out->guests = 0;
  uv_mutex_lock(&s->park_lock);
  for (int i = 0; i < s->nworkers && i < 64; i++) {
    if (s->workers[i].parked)
      out->parked |= (uint64_t)1 << i;
    if (s->workers[i].yielded)
      out->yielded |= (uint64_t)1 << i;
    if (atomic_load(&s->workers[i].guests) > 0)
      out->guests |= (uint64_t)1 << i;
  }
  uv_mutex_unlock(&s->park_lock);
}
