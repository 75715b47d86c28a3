/*
 * Tiered compilation's background builder (tier.h): one thread at a
 * lowered priority, started on the first queued job, building the
 * optimised code of the specialisations launched a second time.
 *
 * At process exit (atexit) the queue is dropped, the compiler the thread
 * is running is killed (asc__run_cancel: the cache then publishes
 * nothing and keeps no file) and the handler waits a moment for the
 * thread to let go of the job, so that exit neither hangs on a compile
 * nor tears the library down under one.  In a fork child the thread is
 * gone: its job and the queued ones become IDLE again, to be queued or
 * built by the child's own launches.
 */
#include "jit/tier.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/env.h"
#include "base/trace.h"
#include "jit/jit.h"

/* How long exit waits for the thread to drop a cancelled build. */
#define EXIT_WAIT_NS ((uint64_t)2000 * 1000 * 1000)

/* The background thread's nice increment: it competes with the
 * program's own work, which comes first. */
#define BUILDER_NICE 10

static asc__env_num bytes_env = {"ASC_TIER_BYTES", (uint64_t)64 << 10, 0,
                                 (uint64_t)1 << 50, ASC__ENV_SUFFIXES, false};
static atomic_bool mode_warned;

asc__tier_mode asc__tier_mode_env(void) {
  const char *s = getenv("ASC_TIER");

  /* On unless turned off (docs/decisions.md, "Tiered compilation is
   * on"): the policy keeps -O0 code to launches whose arguments bound
   * their work, and to their first launch when it ran long. */
  if (s == NULL || *s == '\0' || strcmp(s, "auto") == 0)
    return ASC__TIER_AUTO;
  if (strcmp(s, "0") == 0)
    return ASC__TIER_OFF;
  if (strcmp(s, "1") == 0)
    return ASC__TIER_FIRST;
  if (!atomic_exchange(&mode_warned, true))
    fprintf(stderr, "asc: ASC_TIER=%s is not 0, 1 or auto; using auto\n", s);
  return ASC__TIER_AUTO;
}

uint64_t asc__tier_small_bytes(void) { return asc__env_u64(&bytes_env); }

static asc__env_num slow_env = {"ASC_TIER_SLOW_US", 0, 0,
                                (uint64_t)1 << 40, ASC__ENV_CLAMP, false};

uint64_t asc__tier_slow_ns(void) { return asc__env_u64(&slow_env) * 1000; }

static uv_once_t init_once = UV_ONCE_INIT;
static uv_mutex_t lock;
static uv_cond_t changed;
static asc__tier_job *queue_head, *queue_tail;
static asc__tier_job *building;   /* the thread's job, or NULL */
static bool thread_started, exiting;
static asc__run_canceller canceller;

static void tier_init(void);

void asc__tier_lock(void) {
  uv_once(&init_once, tier_init);
  uv_mutex_lock(&lock);
}
void asc__tier_unlock(void) { uv_mutex_unlock(&lock); }
void asc__tier_wait(void) { uv_cond_wait(&changed, &lock); }
void asc__tier_broadcast(void) { uv_cond_broadcast(&changed); }

static void job_free(asc__tier_job *j) {
  if (j == NULL)
    return;
  asc__jit_unload(j->lib);
  asc__buf_free(&j->text);
  asc__free(j->kernel_name);
  asc__free(j);
}

/* Under the lock: the job's build is over.  Returns the job when it is
 * to be freed (its specialisation went meanwhile), after unlocking. */
static asc__tier_job *job_finish(asc__tier_job *j) {
  j->state = ASC__TIER_DONE;
  uv_cond_broadcast(&changed);
  if (j->orphan)
    return j;
  if (j->err == ascSuccess) {
    atomic_store_explicit(j->target, j->desc, memory_order_release);
    /* later launches run the optimised code */
    ASC_TRACE(asc__trace_mark("compile", "tier swap", j->kernel_name));
  }
  /* failed: the quick code stays, and no launch asks again */
  atomic_store(j->quick, false);
  if (j->timed != NULL)
    atomic_store(j->timed, false);
  return NULL;
}

static void queue_remove(asc__tier_job *j) {
  asc__tier_job **p = &queue_head, *prev = NULL;

  for (; *p != NULL; prev = *p, p = &(*p)->next)
    if (*p == j) {
      *p = j->next;
      if (queue_tail == j)
        queue_tail = prev;
      j->next = NULL;
      return;
    }
}

/* Every queued job back to idle, the queue empty (lock held). */
static void drop_queue(void) {
  while (queue_head != NULL) {
    asc__tier_job *j = queue_head;
    queue_head = j->next;
    j->next = NULL;
    j->state = ASC__TIER_IDLE;
  }
  queue_tail = NULL;
}

static void on_exit_stop(void) {
  uint64_t deadline;

  uv_mutex_lock(&lock);
  exiting = true;
  drop_queue();
  uv_cond_broadcast(&changed);
  if (building != NULL)
    asc__run_cancel(&canceller);
  deadline = uv_hrtime() + EXIT_WAIT_NS;
  while (building != NULL) {
    uint64_t now = uv_hrtime();
    if (now >= deadline ||
        uv_cond_timedwait(&changed, &lock, deadline - now) != 0)
      break;
  }
  uv_mutex_unlock(&lock);
}

static void fork_prepare(void) { uv_mutex_lock(&lock); }
static void fork_parent(void) { uv_mutex_unlock(&lock); }

/* The child has the calling thread only: no builder, and the locks'
 * memory is the parent's (held, by this thread). */
static void fork_child(void) {
  uv_mutex_init(&lock);
  uv_cond_init(&changed);
  asc__run_canceller_init(&canceller);
  if (building != NULL)
    building->state = ASC__TIER_IDLE;
  building = NULL;
  drop_queue();
  thread_started = false;
}

static void tier_init(void) {
  uv_mutex_init(&lock);
  uv_cond_init(&changed);
  asc__run_canceller_init(&canceller);
  (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void *builder(void *arg) {
  int prio;

  ASC_UNUSED(arg);
  /* Linux: the calling thread's nice value; the compilers it starts
   * inherit it. */
  prio = getpriority(PRIO_PROCESS, 0);
  (void)setpriority(PRIO_PROCESS, 0, prio + BUILDER_NICE);
  asc__run_use_canceller(&canceller);
  uv_mutex_lock(&lock);
  for (;;) {
    asc__tier_job *j, *dead;
    while (queue_head == NULL && !exiting)
      uv_cond_wait(&changed, &lock);
    if (exiting)
      break;
    j = queue_head;
    queue_head = j->next;
    if (queue_head == NULL)
      queue_tail = NULL;
    j->next = NULL;
    j->state = ASC__TIER_RUNNING;
    building = j;
    uv_mutex_unlock(&lock);
    asc__jit_tier_build(j);
    uv_mutex_lock(&lock);
    building = NULL;
    dead = job_finish(j);
    if (dead != NULL) {
      uv_mutex_unlock(&lock);
      job_free(dead);
      uv_mutex_lock(&lock);
    }
  }
  thread_started = false;
  uv_mutex_unlock(&lock);
  return NULL;
}

void asc__tier_enqueue(asc__tier_job *j) {
  uv_once(&init_once, tier_init);
  uv_mutex_lock(&lock);
  if (j->state == ASC__TIER_IDLE && !exiting) {
    if (!thread_started) {
      pthread_t t;
      pthread_attr_t a;
      bool ok = pthread_attr_init(&a) == 0;
      ok = ok && pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0;
      ok = ok && pthread_create(&t, &a, builder, NULL) == 0;
      pthread_attr_destroy(&a);
      if (ok) {
        static atomic_bool at_exit;
        thread_started = true;
        if (!atomic_exchange(&at_exit, true))
          (void)atexit(on_exit_stop);
      }
    }
    /* Without a thread the job stays IDLE: a heavy launch builds it. */
    if (thread_started) {
      j->state = ASC__TIER_QUEUED;
      if (queue_tail != NULL)
        queue_tail->next = j;
      else
        queue_head = j;
      queue_tail = j;
      uv_cond_broadcast(&changed);
    }
  }
  uv_mutex_unlock(&lock);
}

void asc__tier_run_now(asc__tier_job *j) {
  asc__tier_job *dead = NULL;

  uv_once(&init_once, tier_init);
  uv_mutex_lock(&lock);
  if (j->state == ASC__TIER_QUEUED)
    queue_remove(j);
  if (j->state == ASC__TIER_IDLE || j->state == ASC__TIER_QUEUED) {
    j->state = ASC__TIER_RUNNING;
    uv_mutex_unlock(&lock);
    asc__jit_tier_build(j);
    uv_mutex_lock(&lock);
    dead = job_finish(j);
  }
  while (j->state == ASC__TIER_RUNNING)
    uv_cond_wait(&changed, &lock);
  uv_mutex_unlock(&lock);
  job_free(dead);
}

void asc__tier_release(asc__tier_job *j) {
  bool now;

  if (j == NULL)
    return;
  uv_once(&init_once, tier_init);
  uv_mutex_lock(&lock);
  if (j->state == ASC__TIER_QUEUED) {
    queue_remove(j);
    j->state = ASC__TIER_IDLE;
  }
  now = j->state != ASC__TIER_RUNNING;
  j->orphan = true;
  uv_mutex_unlock(&lock);
  if (now)
    job_free(j);
}
