/*
 * libasc_mpi internals: the communicator, its progress thread and the
 * operation record shared by comm.c (threading) and ops.c (what each
 * operation asks of MPI).
 *
 * Threads: the application's threads validate arguments and queue
 * operations (ops.c); the runtime calls reached() when a stream reaches
 * one, on whatever thread advanced the stream, and that thread posts it
 * (one poster at a time, in position order); a host thread waiting in
 * libasc, or the communicator's progress thread, tests the posted ones
 * (one tester at a time) and completes them.
 */
#ifndef ASC_MPI_INTERNAL_H
#define ASC_MPI_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "asc/asc_mpi.h"
#include "runtime/extern_op.h"

enum {
  COMM_MAGIC = 0x434f4d4du,   /* "COMM" */
  COMM_DEAD = 0xdeadc0deu
};

typedef enum op_kind {
  K_HOLE = 0,   /* a queued position whose enqueue failed: start nothing */
  K_ALLREDUCE,
  K_REDUCE,
  K_BCAST,
  K_ALLGATHER,
  K_REDSCAT,
  K_SEND,
  K_RECV,
  K_GROUP
} op_kind;

/* One send or receive of a group. */
typedef struct p2p {
  bool send;
  void *buf;
  size_t count;
  ascDataType dtype;
  int peer;
} p2p;

typedef struct xop xop;
struct xop {
  xop *next;               /* reached list, then active list, or the
                              abandoned list */
  xop *cnext;              /* a list of ops being given up (comm.c) */
  struct ascComm_st *comm;
  uint64_t seq;            /* queue position on comm */
  op_kind kind;
  const char *name;        /* "ascAllReduce", for messages */
  ascStream_t stream;      /* as the application passed it */
  asc__extern *x;          /* set by reached() */
  const void *sendbuf;
  void *recvbuf;
  size_t count;
  ascDataType dtype;
  size_t esize;            /* ascDataTypeSize(dtype), 0 for K_GROUP */
  ascRedOp op;
  int root;                /* root, or peer for K_SEND / K_RECV */
  p2p *subs;               /* K_GROUP */
  bool blocking;           /* allreduce: blocking MPI on a thread that may
                              block (asc__mpi_op_run), not posted */
  int nsubs;
  /* Set by op_start on the posting thread. */
  MPI_Request *reqs;
  MPI_Status *stats;       /* one per request: MPI_ERR_IN_STATUS names it */
  int nreqs;
  MPI_Request req1;
  MPI_Status stat1;
  uint64_t posted_ns;      /* when posted, if the comm emulates latency */
  void *tmp;               /* gathered halves, or a copy of sendbuf */
  /* Set (once) by whoever completes the op on its stream while it is
   * being posted or run (comm->current): its poster, or a cancellation
   * (give_up in comm.c). */
  atomic_bool claimed;
};

struct ascComm_st {
  atomic_uint magic;
  struct ascComm_st *free_next;   /* the free list (type-stable handles) */
  /* Live communicators, for the wait hook: written under comm.c's
   * free_lock, read without it (the memory is never freed). */
  struct ascComm_st *_Atomic live_next;
  MPI_Comm mpi;
  int rank, size;
  /* Allreduces up to this many bytes run blocking (ops.c); the same on
   * every rank (ASC_MPI_BLOCKING_MAX, agreed at init). */
  long long blocking_max;
  /* Emulated network latency (ASC_MPI_DELAY_US, docs/distributed.md): a
   * posted operation completes no earlier than this many ns after it was
   * posted, as if its messages crossed a network (the copies still take
   * this machine's cores); 0: off. */
  uint64_t delay_ns;
  pthread_t thread;
  /* A spin lock (comm_lock; spins, then yields): guards everything below
   * but the atomics.  Leaf lock, held for a few instructions: never
   * while calling the runtime (asc__extern_complete may start the next
   * op of a stream, whose reached() takes this lock) or MPI, nor while
   * sleeping.  A pthread mutex cost 3 lock rounds of about 55
   * instructions each per small allreduce (docs/distributed.md). */
  atomic_int lock;
  /* The progress thread sleeps on cond under wait_lock until wake is
   * set (progress_wake).  Initialised once, never destroyed (the memory
   * is reused, never freed).  Order: lock, then wait_lock. */
  pthread_mutex_t wait_lock;
  pthread_cond_t cond;
  bool wake;               /* under wait_lock */
  _Atomic uint64_t next_seq;   /* next queue position (application
                                  threads; atomic, not under the lock) */
  uint64_t next_start;     /* next position the progress thread starts */
  uint64_t completed;      /* positions finished (holes included) */
  xop *reached;            /* reached, not yet started, any order */
  xop *active;             /* started, in position order */
  xop **active_tail;
  bool starting;           /* a thread is posting reached ops */
  bool blocked_ready;      /* the next op to start must run blocking and
                              waits for a thread that may block */
  bool polling;            /* a thread is testing the active ops (it has
                              detached them from the list meanwhile) */
  bool sleeping;           /* the progress thread waits untimed: wake it
                              when an op starts */
  bool standby;            /* the progress thread waits, timed, while a
                              waiter polls */
  bool stop;
  /* reached or active is not empty (stored at the end of each critical
   * section that changes them): a waiter's poll skips an idle
   * communicator without its lock. */
  atomic_bool busy;
  /* Counts the polls of waiting host threads (wait_poll): the progress
   * thread notes when it changes, instead of a clock read per poll. */
  _Atomic uint64_t driven;
  /* When a waiter last tested posted operations (now_ns; 0: never). */
  _Atomic uint64_t driven_ns;
  /* One freed operation record kept for the next (submit, op_free):
   * no malloc and free per operation in the common one-at-a-time use. */
  _Atomic(xop *) spare;
  /* Cancellation (docs/distributed.md, "Cancellation"), under the lock.
   * broken: an operation was given up, so this rank is out of step with
   * its peers and every later operation fails.  current: the op a thread
   * is posting or running (taken off reached, not yet on active);
   * current_progress: that thread is the progress thread.  abandoned:
   * posted ops given up, kept for MPI, which may still use their
   * requests and buffers (never freed).  cancelled: streams cancelled
   * while a poller had the active list detached; it checks them when it
   * puts the list back (cancel_every: any stream, or too many). */
  atomic_bool broken;       /* written under the lock */
  xop *current;
  bool current_progress;
  xop *abandoned;
  ascStream_t cancelled[4];
  int ncancelled;
  bool cancel_every;
};

/* comm.c */
ascError_t asc__mpi_comm_check(ascComm_t comm, const char *fn);
/* Queues o (filled, kind set) on stream in comm's order; takes o, also
 * on failure. */
ascError_t asc__mpi_enqueue(ascComm_t comm, xop *o, ascStream_t stream);
ascError_t asc__mpi_err(ascError_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A record for an operation on comm (no buffers of its own, not
 * blocking; the caller fills the rest), NULL when out of memory. */
xop *asc__mpi_op_new(ascComm_t comm);
void asc__mpi_op_free(xop *o);

/* ops.c, on a posting thread.  op_start posts o's MPI calls; on
 * failure it returns the error and fills msg.  op_finish runs once they
 * have all completed (the float16 / bfloat16 reductions). */
ascError_t asc__mpi_op_start(xop *o, char *msg, size_t msgsize);
void asc__mpi_op_finish(xop *o);
/* Runs a blocking op (o->blocking) to completion; as op_start on error.
 * Only on a thread that may block: a host thread waiting in libasc or
 * the progress thread. */
ascError_t asc__mpi_op_run(xop *o, char *msg, size_t msgsize);

#endif /* ASC_MPI_INTERNAL_H */
