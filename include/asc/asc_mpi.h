/*
 * libasc_mpi: stream-ordered collectives and point-to-point transfers
 * over MPI (docs/distributed.md).  An optional component: its own library
 * (libasc_mpi, CMake asc::mpi, pkg-config asc-mpi) over libasc, which
 * itself never depends on MPI.
 *
 * Each operation is queued on an ascStream_t and returns at once; it runs
 * when the stream reaches it: the communicator's progress thread starts
 * the nonblocking MPI call and polls it, and the stream's later work runs
 * once it has completed.  No worker core and no host thread waits for the
 * network meanwhile.  An MPI failure becomes the stream's error
 * (ascErrorCommunication, with MPI's error text), reported by the next
 * synchronising call like a kernel exception.
 *
 * Rules:
 *  - MPI must be initialised with MPI_THREAD_MULTIPLE (the progress
 *    thread calls MPI while the application may too); ascCommInitFromMPI
 *    refuses a lower level.  mpi4py asks for it by default.
 *  - Operations on one communicator start in the order they were queued
 *    (host order, across all streams), and every rank must queue them in
 *    the same order, as for MPI collectives themselves.
 *  - Buffers are read and written when the stream reaches the operation;
 *    they must stay valid until it completes (any host memory works:
 *    ascMalloc'd, stack, numpy).
 *  - Counts are elements; at most INT_MAX per rank (the MPI count type).
 *  - float16 and bfloat16 reductions are done by libasc (MPI has no such
 *    types): the data are gathered and every rank reduces them in rank
 *    order in float32, rounding once, so all ranks get the same bits.
 *  - bool reduces as numpy does: sum and max are "or", prod and min "and".
 *  - An operation that cannot complete (a peer that never joins, counts
 *    that disagree) is given up when its stream is cancelled
 *    (ascStreamCancel, Ctrl-C in Python, ascDeviceReset): the stream gets
 *    control back with ascErrorCancelled, and, since MPI cannot cancel a
 *    collective, the communicator is unusable from then on (its other
 *    operations fail with ascErrorCommunication).  An allreduce already
 *    inside a blocking MPI_Allreduce cannot be left before MPI returns
 *    (ASC_MPI_BLOCKING_MAX=0 posts every one).  docs/distributed.md,
 *    "Cancellation".
 *
 * Thread-safe, except that a communicator must not be destroyed while
 * another thread queues work on it.
 */
#ifndef ASC_ASC_MPI_H
#define ASC_ASC_MPI_H

#include <mpi.h>

#include "asc/asc.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ASC_BUILDING_MPI)
#define ASC_MPI_API __attribute__((visibility("default")))
#else
#define ASC_MPI_API
#endif

typedef struct ascComm_st *ascComm_t;

typedef enum ascRedOp {
  ascRedSum = 0,
  ascRedProd,
  ascRedMin,
  ascRedMax,
  ascRedOpCount
} ascRedOp;

/* Duplicates mpiComm (MPI_Comm_dup: collective over mpiComm, called by
 * every rank) and starts the communicator's progress thread.  Needs
 * MPI_THREAD_MULTIPLE (ascErrorUnsupported otherwise). */
ASC_MPI_API ascError_t ascCommInitFromMPI(ascComm_t *comm, MPI_Comm mpiComm);
/* Waits for every operation queued on comm to complete, stops its
 * progress thread and frees the duplicate (MPI_Comm_free: every rank
 * calls it).  The handle is dead afterwards: calls with it return
 * ascErrorInvalidHandle.  On a communicator made unusable by a
 * cancellation it waits for no operation that was given up and leaves
 * the duplicate to MPI (operations given up may still be posted in it). */
ASC_MPI_API ascError_t ascCommDestroy(ascComm_t comm);
ASC_MPI_API ascError_t ascCommRank(ascComm_t comm, int *rank);
ASC_MPI_API ascError_t ascCommSize(ascComm_t comm, int *size);

/* recvbuf[i] = op over ranks of sendbuf[i], on every rank.  In place when
 * sendbuf == recvbuf. */
ASC_MPI_API ascError_t ascAllReduce(const void *sendbuf, void *recvbuf,
                                    size_t count, ascDataType dtype,
                                    ascRedOp op, ascComm_t comm,
                                    ascStream_t stream);
/* As ascAllReduce, with the result on root only (recvbuf is ignored
 * elsewhere and may be NULL). */
ASC_MPI_API ascError_t ascReduce(const void *sendbuf, void *recvbuf,
                                 size_t count, ascDataType dtype,
                                 ascRedOp op, int root, ascComm_t comm,
                                 ascStream_t stream);
/* recvbuf = root's sendbuf on every rank (sendbuf is read on root only;
 * in place when sendbuf == recvbuf). */
ASC_MPI_API ascError_t ascBroadcast(const void *sendbuf, void *recvbuf,
                                    size_t count, ascDataType dtype, int root,
                                    ascComm_t comm, ascStream_t stream);
/* recvbuf[r * count ...] = rank r's sendbuf (count elements each). */
ASC_MPI_API ascError_t ascAllGather(const void *sendbuf, void *recvbuf,
                                    size_t count, ascDataType dtype,
                                    ascComm_t comm, ascStream_t stream);
/* sendbuf has size * count elements; rank r receives the reduction of
 * every rank's block r (count elements). */
ASC_MPI_API ascError_t ascReduceScatter(const void *sendbuf, void *recvbuf,
                                        size_t count, ascDataType dtype,
                                        ascRedOp op, ascComm_t comm,
                                        ascStream_t stream);
/* Point to point, matched in queue order per pair of ranks.  A send and
 * a receive queued on one stream run one after the other: two ranks
 * exchanging must put them in one group (below) or on two streams. */
ASC_MPI_API ascError_t ascSend(const void *buf, size_t count,
                               ascDataType dtype, int peer, ascComm_t comm,
                               ascStream_t stream);
ASC_MPI_API ascError_t ascRecv(void *buf, size_t count, ascDataType dtype,
                               int peer, ascComm_t comm, ascStream_t stream);

/* Between ascGroupStart and ascGroupEnd, ascSend and ascRecv calls of the
 * calling thread are collected and queued by ascGroupEnd as one operation
 * that posts them all at once and completes when all have (a halo
 * exchange).  They must use one communicator and one stream.  Groups do
 * not nest; collectives inside a group return ascErrorNotPermitted. */
ASC_MPI_API ascError_t ascGroupStart(void);
ASC_MPI_API ascError_t ascGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* ASC_ASC_MPI_H */
