/*
 * The worker pool: one pinned thread per usable core, owned by the device
 * (asc__device.sched).  It runs launches: a launch hands out blocks in
 * increasing index order; the worker that takes a block leads that block's
 * team, and idle workers join the team's parallel loops as helpers.
 *
 * The pool knows nothing about streams.  Whoever submits a launch fills in
 * launch->complete, which the worker that finishes the last block calls
 * (without any pool lock held).
 */
#ifndef ASC_SCHEDULER_H
#define ASC_SCHEDULER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "runtime/runtime.h"
#include "asc/kernel_abi.h"

#define ASC_CACHE_LINE 64

/* Number of priority levels; level 0 is served first.  Stream priorities
 * 0 (least) .. -(ASC_PRIO_LEVELS-1) (greatest) map to levels
 * ASC_PRIO_LEVELS-1 .. 0. */
#define ASC_PRIO_LEVELS 3

typedef struct asc__sched asc__sched;

static inline void asc__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* A lock for short critical sections on the launch path (the pool's
 * ready lists, a stream's queue): spins, then yields the CPU, never
 * sleeps in the kernel.  Holders never block while holding it. */
typedef struct asc__spinlock {
  atomic_int v;
} asc__spinlock;

void asc__spin_lock_slow(asc__spinlock *l);

static inline void asc__spin_lock(asc__spinlock *l) {
  if (!atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
    return;
  asc__spin_lock_slow(l);
}

static inline void asc__spin_unlock(asc__spinlock *l) {
  atomic_store_explicit(&l->v, 0, memory_order_release);
}

/* An entry of the pool's ready lists: either a launch with blocks left to
 * hand out, or a block's parallel loop with helper slots left. */
typedef struct asc__job {
  struct asc__job *next, *prev;
  int kind;         /* ASC__JOB_BLOCKS or ASC__JOB_LOOP */
  int level;        /* priority level, 0 = highest */
  bool queued;      /* on a ready list (under the pool lock) */
} asc__job;

enum { ASC__JOB_BLOCKS = 1, ASC__JOB_LOOP = 2 };

/* Bytes of argument storage inside a pooled launch record; launches whose
 * copied arguments need more allocate once. */
#define ASC_LAUNCH_INLINE_ARGS 1024

typedef struct asc__launch asc__launch;
typedef void (*asc__launch_done_fn)(asc__launch *l);

#define ASC__KEPT_MAX 32

struct asc__launch {
  asc__job job;
  const asc_kernel_desc *desc;
  uint32_t nblocks;
  int32_t team;             /* threads per block */
  uint32_t next_block;      /* under the pool lock */
  bool gang;                /* uses barriers: all blocks resident */
  asc__launch_done_fn complete;
  void **args;              /* args[i] points into argbuf or heap_args */
  /* Arrays the launch's kernel handed over (asc_krt.keep): at completion
   * those no result holds any more (a return replaced by a later one)
   * are freed.  Returning kernels run as one block: one writer. */
  void *kept[ASC__KEPT_MAX];
  int nkept;
  void *heap_args;          /* asc__malloc'd when inline space is short */
  uint64_t trace_id;        /* set when started while tracing (trace.c) */

  _Alignas(ASC_CACHE_LINE) atomic_uint done;     /* blocks finished */
  atomic_uint err_block;    /* lowest raising block; UINT32_MAX if none */
  atomic_int cancelled;     /* some block raised */
  /* Why the launch was stopped from outside (ASC__STOP_*), 0 if not: set
   * by the stream under its lock, read by generated polls through
   * asc_kctx.stop. */
  atomic_int stop;
  uint64_t start_ns;        /* when dispatched (timeout, quick tier), or 0 */
  atomic_flag exc_lock;     /* guards exc; leaf lock, spun on briefly */
  asc_kexc exc;

  /* Barrier across the blocks.  bar_lock is a leaf lock: nothing else is
   * taken while holding it. */
  _Alignas(ASC_CACHE_LINE) atomic_uint bar_count;
  atomic_uint bar_gen;
  uv_mutex_t bar_lock;
  uv_cond_t bar_cond;

  /* `with asc.critical():`; a leaf lock held only by kernel code. */
  uv_mutex_t crit;

  _Alignas(16) unsigned char argbuf[ASC_LAUNCH_INLINE_ARGS];
};

enum { ASC__STOP_CANCEL = 1, ASC__STOP_TIMEOUT = 2, ASC__STOP_RESET = 3 };

/* A parallel loop hands out chunks of at most this many iterations (or
 * min_chunk, if larger), and checks the launch's stop flag between
 * them: the bound on a loop's cancellation latency. */
#define ASC_LOOP_CHUNK_MAX 65536

/* Fills *exc with the exception a stopped launch unwinds with. */
static inline void asc__kexc_cancelled(asc_kexc *exc, int32_t line) {
  static const char msg[] = "launch stopped";
  exc->kind = ASC_KEXC_CANCELLED;
  exc->line = line;
  for (size_t i = 0; i < sizeof msg; i++)
    exc->msg[i] = msg[i];
}

/* Cache-line aligned host allocations (asc__malloc underneath) for
 * structures with _Alignas(ASC_CACHE_LINE) members.  Zeroed. */
void *asc__cache_alloc(size_t size);
void asc__cache_free(void *p);

/* Once per pooled record: creates the record's locks. */
int asc__launch_init(asc__launch *l);
void asc__launch_fini(asc__launch *l);
/* Before each use: the fields above for a launch of desc over nblocks
 * blocks at priority level `level`, whose blocks together get the workers
 * that `share` blocks would have had (asc__stream_launch).  Argument
 * storage is set up by the caller (args / heap_args). */
void asc__launch_prepare(asc__launch *l, asc__sched *s,
                         const asc_kernel_desc *desc, uint32_t nblocks,
                         uint32_t share, int level);

/* The pool of dev, created on first use (thread-safe).  Returns
 * ascErrorOutOfMemory or ascErrorInternal if threads cannot start. */
ascError_t asc__sched_get(asc__device *dev, asc__sched **out);
/* The pool of dev if it has been created, else NULL. */
asc__sched *asc__sched_peek(asc__device *dev);
/* Stops and joins the workers after they have drained every queued
 * launch, and frees the pool.  No submission may race with it. */
void asc__sched_destroy(asc__device *dev);
/* In a forked child, where the pool's threads do not exist: forgets the
 * pool, without freeing it (its locks and conditions may be in any
 * state), so that the next launch starts a new one. */
void asc__sched_forget(asc__device *dev);
int asc__sched_nworkers(const asc__sched *s);

/* A snapshot of the pool's thread accounting, for tests. */
typedef struct asc__sched_counts {
  int nworkers;
  int navail;       /* workers neither running a job nor parked */
  int nsleeping;    /* parked workers */
  int nguests;      /* host threads waiting with asc__sched_help */
  int nyielded;     /* workers parked to leave a core to a guest */
  uint64_t parked;  /* bit i: worker i (of the first 64) is parked */
  uint64_t yielded; /* bit i: ... is parked for a guest */
  uint64_t guests;  /* bit i: a guest sits on worker i's core */
  unsigned pushes;  /* jobs ever put on the ready lists (wrapping) */
} asc__sched_counts;
void asc__sched_get_counts(asc__sched *s, asc__sched_counts *out);
/* Spin window in nanoseconds before a waiting thread parks: ASC_SPIN_US
 * microseconds (default 200, at most 1 s). */
uint64_t asc__spin_ns_env(void);

/* Queues l; workers start taking its blocks at once.  Never blocks for
 * long: takes the pool lock only.  Callers may hold a stream lock (lock
 * order: stream lock, then pool lock). */
void asc__sched_submit(asc__sched *s, asc__launch *l);

/* Accepts the launches a helping host thread may work on. */
typedef bool (*asc__help_fn)(const asc__launch *l, const void *arg);

/* Lends the calling host thread to the pool while it waits: runs blocks
 * and joins parallel loops of queued launches that mine(l, arg) accepts,
 * in priority order, until none is left to take.  Returns true if it ran
 * anything.  Does nothing on a worker thread.  *seen (UINT64_MAX at
 * first) remembers the last fruitless scan, so that repeated calls do
 * not take the pool lock again until a job has been pushed. */
bool asc__sched_help(asc__sched *s, asc__help_fn mine, const void *arg,
                     uint64_t *seen);

/* True if the calling thread may run kernel code as a guest: a host
 * thread on its own stack with enough of it free (see scheduler.c). */
bool asc__sched_can_help(void);

/* Runs the one block of l (not submitted; not a gang launch) on the
 * calling thread, as a guest of s, with l's team: the thread leads the
 * block and the pool's workers join its parallel loops.  l completes
 * (l->complete) before this returns.  Only where asc__sched_can_help. */
void asc__sched_run_here(asc__sched *s, asc__launch *l);

/* A host thread starts (+1) or stops (-1) waiting with asc__sched_help:
 * while it does, the idle worker pinned to its core parks instead of
 * spinning and leaves loops' helper slots to workers of other cores, so
 * that the pool and its guests together spin on no more threads than it
 * has cores, never two on one core while another idles. */
void asc__sched_guest(asc__sched *s, int delta);

/* The services table handed to kernels. */
extern const asc_krt asc__krt;

/* True on the pool's worker threads. */
bool asc__on_worker(void);

#endif /* ASC_SCHEDULER_H */
