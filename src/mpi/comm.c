/*
 * Communicators and their progress threads.
 *
 * An operation goes through three hands: the application thread queues
 * it on a stream as an external op (asc__mpi_enqueue, taking the next
 * position on the communicator); when the stream reaches it, reached()
 * hands it to the progress thread; the progress thread starts reached
 * operations strictly in position order (so that every rank calls MPI in
 * the order its application queued, whatever order its streams get
 * there), polls them with MPI_Testall, and completes each on its stream.
 */
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi/mpi_internal.h"

/* Polling: while operations are in flight, poll (yielding between polls:
 * MPI moves a large message one segment per poll) for POLL_NS after the
 * last completion, then nap between polls, so that a transfer waiting
 * on a slow peer does not take a core from the kernels it overlaps.  An
 * idle progress thread looks for new work for SPIN_NS before it sleeps
 * on the condition variable. */
#define POLL_NS 5000000
#define SPIN_NS 200000
#define NAP_NS 50000

/* Destroyed communicators keep their memory here, for reuse by the next
 * ascCommInitFromMPI: a stale handle always reads a dead magic. */
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ascComm_st *free_comms;

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

void asc__mpi_op_free(xop *o) {
  if (o == NULL)
    return;
  free(o->subs);
  free(o->tmp);
  if (o->reqs != &o->req1)
    free(o->reqs);
  if (o->stats != &o->stat1)
    free(o->stats);
  free(o);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
  pthread_mutex_lock(&c->lock);
  o->next = c->reached;
  c->reached = o;
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

/* c's lock held: unlinks and returns the reached op at position
 * next_start, NULL if it has not been reached yet. */
static xop *take_next(struct ascComm_st *c) {
  for (xop **p = &c->reached; *p != NULL; p = &(*p)->next) {
    if ((*p)->seq == c->next_start) {
      xop *o = *p;
      *p = o->next;
      o->next = NULL;
      c->next_start++;
      return o;
    }
  }
  return NULL;
}

static void count_done(struct ascComm_st *c) {
  pthread_mutex_lock(&c->lock);
  c->completed++;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

static void finish(xop *o, ascError_t err, const char *msg) {
  struct ascComm_st *c = o->comm;

  if (err == ascSuccess)
    asc__mpi_op_finish(o);
  asc__extern_complete(o->x, err, msg);
  asc__mpi_op_free(o);
  count_done(c);
}

static void mpi_failure(xop *o, int rc, char *msg, size_t size) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;

  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "MPI error %d", rc);
  snprintf(msg, size, "%s: MPI failed: %s", o->name, text);
}

static void *progress_main(void *arg) {
  struct ascComm_st *c = arg;
  xop *active = NULL, **tailp;
  uint64_t last = now_ns();
  char msg[MPI_MAX_ERROR_STRING + 128];

  for (;;) {
    xop *start = NULL, **sp = &start, *o;

    pthread_mutex_lock(&c->lock);
    for (;;) {
      while ((o = take_next(c)) != NULL) {
        *sp = o;
        sp = &o->next;
      }
      if (start != NULL || active != NULL)
        break;
      if (c->stop && c->completed == c->next_seq)
        break;
      if (now_ns() - last < SPIN_NS) {
        /* Work often comes back to back (a loop of collectives): look
         * again for a while before paying for a wake-up. */
        pthread_mutex_unlock(&c->lock);
        sched_yield();
        pthread_mutex_lock(&c->lock);
        continue;
      }
      pthread_cond_wait(&c->cond, &c->lock);
    }
    if (start == NULL && active == NULL) {
      pthread_mutex_unlock(&c->lock);
      return NULL;   /* stopped, everything completed */
    }
    pthread_mutex_unlock(&c->lock);

    /* Start in position order; active keeps that order too. */
    for (tailp = &active; *tailp != NULL; tailp = &(*tailp)->next)
      ;
    while (start != NULL) {
      ascError_t err;
      o = start;
      start = o->next;
      o->next = NULL;
      if (o->kind == K_HOLE) {
        asc__mpi_op_free(o);
        count_done(c);
        continue;
      }
      err = asc__mpi_op_start(o, msg, sizeof msg);
      if (err != ascSuccess) {
        finish(o, err, msg);
        continue;
      }
      *tailp = o;
      tailp = &o->next;
    }

    /* Poll. */
    {
      bool progress = false;
      for (xop **p = &active; *p != NULL;) {
        int flag = 0, rc;
        o = *p;
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
        if (rc != MPI_SUCCESS || flag) {
          *p = o->next;
          progress = true;
          if (rc != MPI_SUCCESS) {
            mpi_failure(o, rc, msg, sizeof msg);
            finish(o, ascErrorCommunication, msg);
          } else {
            finish(o, ascSuccess, NULL);
          }
          continue;
        }
        p = &o->next;
      }
      if (progress) {
        last = now_ns();
      } else if (active != NULL) {
        if (now_ns() - last < POLL_NS) {
          sched_yield();
        } else {
          struct timespec nap = {0, NAP_NS};
          nanosleep(&nap, NULL);
        }
      }
    }
  }
}

ascError_t asc__mpi_enqueue(ascComm_t comm, xop *o, ascStream_t stream) {
  ascError_t err;

  pthread_mutex_lock(&comm->lock);
  o->comm = comm;
  o->seq = comm->next_seq++;
  pthread_mutex_unlock(&comm->lock);
  err = asc__stream_enqueue_extern(stream, reached, o);
  if (err != ascSuccess) {
    /* The position is taken: fill it, so later ones still start. */
    o->kind = K_HOLE;
    pthread_mutex_lock(&comm->lock);
    o->next = comm->reached;
    comm->reached = o;
    pthread_cond_signal(&comm->cond);
    pthread_mutex_unlock(&comm->lock);
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
    c = calloc(1, sizeof *c);
    if (c == NULL)
      return asc__mpi_err(ascErrorOutOfMemory,
                          "ascCommInitFromMPI: out of memory");
  }
  c->free_next = NULL;
  c->next_seq = c->next_start = c->completed = 0;
  c->reached = NULL;
  c->stop = false;
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
  if (pthread_mutex_init(&c->lock, NULL) != 0 ||
      pthread_cond_init(&c->cond, NULL) != 0 ||
      pthread_create(&c->thread, NULL, progress_main, c) != 0) {
    MPI_Comm_free(&c->mpi);
    pthread_mutex_lock(&free_lock);
    c->free_next = free_comms;
    free_comms = c;
    pthread_mutex_unlock(&free_lock);
    return asc__mpi_err(ascErrorInternal,
                        "ascCommInitFromMPI: cannot start the progress "
                        "thread");
  }
  atomic_store(&c->magic, COMM_MAGIC);
  *comm = c;
  return ascSuccess;
}

ascError_t ascCommDestroy(ascComm_t comm) {
  unsigned alive = COMM_MAGIC;
  ascError_t err = asc__mpi_comm_check(comm, "ascCommDestroy");

  if (err != ascSuccess)
    return err;
  if (!atomic_compare_exchange_strong(&comm->magic, &alive, COMM_DEAD))
    return asc__mpi_err(ascErrorInvalidHandle,
                        "ascCommDestroy: comm %p was destroyed",
                        (void *)comm);
  pthread_mutex_lock(&comm->lock);
  comm->stop = true;
  pthread_cond_broadcast(&comm->cond);
  pthread_mutex_unlock(&comm->lock);
  /* The thread returns once every queued operation has completed. */
  pthread_join(comm->thread, NULL);
  pthread_cond_destroy(&comm->cond);
  pthread_mutex_destroy(&comm->lock);
  MPI_Comm_free(&comm->mpi);
  pthread_mutex_lock(&free_lock);
  comm->free_next = free_comms;
  free_comms = comm;
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
