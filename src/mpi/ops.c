/*
 * The operations: argument checks on the application thread, and what
 * each asks of MPI on the progress thread.
 *
 * float16 and bfloat16 reductions: MPI has no such types, and a
 * user-defined MPI_Op would round after every pairwise step in an order
 * MPI chooses.  Instead the inputs are gathered (allreduce: allgather;
 * reduce: gather to root; reduce-scatter: all-to-all of the blocks) and
 * each receiving rank reduces them in rank order in float32, rounding
 * once: every rank gets the same bits, whatever the rank count's
 * algorithm.  It moves size times the data; docs/distributed.md.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "mpi/mpi_internal.h"

#define P2P_TAG 0x617363   /* on the library's own duplicate */

/* ------------------------------------------------------------ types */

static bool is_half(ascDataType dt) {
  return dt == ascFloat16 || dt == ascBFloat16;
}

/* The MPI type that reduces dt (halves: none). */
static MPI_Datatype reduce_type(ascDataType dt) {
  switch (dt) {
  case ascBool: return MPI_C_BOOL;
  case ascInt8: return MPI_INT8_T;
  case ascInt16: return MPI_INT16_T;
  case ascInt32: return MPI_INT32_T;
  case ascInt64: return MPI_INT64_T;
  case ascUInt8: return MPI_UINT8_T;
  case ascUInt16: return MPI_UINT16_T;
  case ascUInt32: return MPI_UINT32_T;
  case ascUInt64: return MPI_UINT64_T;
  case ascFloat32: return MPI_FLOAT;
  case ascFloat64: return MPI_DOUBLE;
  case ascComplex64: return MPI_C_FLOAT_COMPLEX;
  case ascComplex128: return MPI_C_DOUBLE_COMPLEX;
  default: return MPI_DATATYPE_NULL;
  }
}

/* The type that moves dt's bits unchanged. */
static MPI_Datatype move_type(ascDataType dt) {
  switch (ascDataTypeSize(dt)) {
  case 1: return MPI_UINT8_T;
  case 2: return MPI_UINT16_T;
  case 4: return MPI_UINT32_T;
  case 16: return MPI_C_DOUBLE_COMPLEX;
  default: return MPI_UINT64_T;
  }
}

static MPI_Op mpi_op(ascDataType dt, ascRedOp op) {
  if (dt == ascBool)   /* numpy: add/max are or, multiply/min are and */
    return op == ascRedSum || op == ascRedMax ? MPI_LOR : MPI_LAND;
  switch (op) {
  case ascRedSum: return MPI_SUM;
  case ascRedProd: return MPI_PROD;
  case ascRedMin: return MPI_MIN;
  default: return MPI_MAX;
  }
}

static float half_load(ascDataType dt, const unsigned char *p) {
  uint16_t h;
  memcpy(&h, p, 2);
  if (dt == ascFloat16) {
    _Float16 v;
    memcpy(&v, &h, 2);
    return (float)v;
  } else {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
}

static void half_store(ascDataType dt, unsigned char *p, float f) {
  uint16_t h;
  if (dt == ascFloat16) {
    _Float16 v = (_Float16)f;
    memcpy(&h, &v, 2);
  } else {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
      h = (uint16_t)((u >> 16) | 0x40);   /* quiet NaN */
    else
      h = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);   /* RNE */
  }
  memcpy(p, &h, 2);
}

/* dst[i] = op over r in rank order of the halves at src + r * stride. */
static void half_reduce(unsigned char *dst, const unsigned char *src,
                        size_t count, size_t stride, int nsrc,
                        ascDataType dt, ascRedOp op) {
  for (size_t i = 0; i < count; i++) {
    float acc = half_load(dt, src + 2 * i);
    for (int r = 1; r < nsrc; r++) {
      float v = half_load(dt, src + (size_t)r * stride + 2 * i);
      switch (op) {
      case ascRedSum: acc += v; break;
      case ascRedProd: acc *= v; break;
      case ascRedMin: acc = v < acc ? v : acc; break;
      default: acc = v > acc ? v : acc; break;
      }
    }
    half_store(dt, dst + 2 * i, acc);
  }
}

/* -------------------------------------------------- progress thread */

static bool overlap(const void *a, size_t na, const void *b, size_t nb) {
  uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
  return na > 0 && nb > 0 && pa < pb + nb && pb < pa + na;
}

/* A private copy of n bytes at src, when the MPI call cannot read them
 * where they are. */
static const void *copy_send(xop *o, const void *src, size_t n) {
  o->tmp = malloc(n ? n : 1);
  if (o->tmp != NULL)
    memcpy(o->tmp, src, n);
  return o->tmp;
}

ascError_t asc__mpi_op_start(xop *o, char *msg, size_t msgsize) {
  MPI_Comm mc = o->comm->mpi;
  int n = (int)o->count, size = o->comm->size, rank = o->comm->rank;
  size_t es = ascDataTypeSize(o->dtype), bytes = o->count * es;
  const void *send = o->sendbuf;
  int rc = MPI_SUCCESS;

  o->reqs = &o->req1;
  o->stats = &o->stat1;
  o->nreqs = 1;
  switch (o->kind) {
  case K_ALLREDUCE:
    if (is_half(o->dtype)) {
      o->tmp = malloc(bytes * (size_t)size + 1);
      if (o->tmp == NULL)
        goto oom;
      rc = MPI_Iallgather(send, n, MPI_UINT16_T, o->tmp, n, MPI_UINT16_T,
                          mc, o->reqs);
      break;
    }
    if (send == o->recvbuf)
      send = MPI_IN_PLACE;
    else if (overlap(send, bytes, o->recvbuf, bytes) &&
             (send = copy_send(o, send, bytes)) == NULL)
      goto oom;
    rc = MPI_Iallreduce(send, o->recvbuf, n, reduce_type(o->dtype),
                        mpi_op(o->dtype, o->op), mc, o->reqs);
    break;
  case K_REDUCE:
    if (is_half(o->dtype)) {
      if (rank == o->root && (o->tmp = malloc(bytes * (size_t)size + 1)) ==
                                 NULL)
        goto oom;
      rc = MPI_Igather(send, n, MPI_UINT16_T, o->tmp, n, MPI_UINT16_T,
                       o->root, mc, o->reqs);
      break;
    }
    if (rank == o->root) {
      if (send == o->recvbuf)
        send = MPI_IN_PLACE;
      else if (overlap(send, bytes, o->recvbuf, bytes) &&
               (send = copy_send(o, send, bytes)) == NULL)
        goto oom;
    }
    rc = MPI_Ireduce(send, o->recvbuf, n, reduce_type(o->dtype),
                     mpi_op(o->dtype, o->op), o->root, mc, o->reqs);
    break;
  case K_BCAST:
    if (rank == o->root && send != o->recvbuf && bytes > 0)
      memmove(o->recvbuf, send, bytes);
    rc = MPI_Ibcast(o->recvbuf, n, move_type(o->dtype), o->root, mc,
                    o->reqs);
    break;
  case K_ALLGATHER:
    if (send == (const char *)o->recvbuf + (size_t)rank * bytes)
      send = MPI_IN_PLACE;
    else if (overlap(send, bytes, o->recvbuf, bytes * (size_t)size) &&
             (send = copy_send(o, send, bytes)) == NULL)
      goto oom;
    rc = MPI_Iallgather(send, n, move_type(o->dtype), o->recvbuf, n,
                        move_type(o->dtype), mc, o->reqs);
    break;
  case K_REDSCAT:
    if (overlap(send, bytes * (size_t)size, o->recvbuf, bytes) &&
        (send = copy_send(o, send, bytes * (size_t)size)) == NULL)
      goto oom;
    if (is_half(o->dtype)) {
      void *gathered = malloc(bytes * (size_t)size + 1);
      if (gathered == NULL)
        goto oom;
      /* tmp may hold the copy of send: MPI reads it until completion,
       * so the gathered blocks go after it in one allocation. */
      if (o->tmp != NULL) {
        void *both = realloc(gathered, bytes * (size_t)size * 2 + 1);
        if (both == NULL) {
          free(gathered);
          goto oom;
        }
        memcpy(both, o->tmp, bytes * (size_t)size);
        free(o->tmp);
        o->tmp = both;
        send = both;
        gathered = (char *)both + bytes * (size_t)size;
        rc = MPI_Ialltoall(send, n, MPI_UINT16_T, gathered, n, MPI_UINT16_T,
                           mc, o->reqs);
        o->sendbuf = gathered;   /* where op_finish finds the blocks */
        break;
      }
      o->tmp = gathered;
      rc = MPI_Ialltoall(send, n, MPI_UINT16_T, gathered, n, MPI_UINT16_T,
                         mc, o->reqs);
      o->sendbuf = gathered;
      break;
    }
    rc = MPI_Ireduce_scatter_block(send, o->recvbuf, n,
                                   reduce_type(o->dtype),
                                   mpi_op(o->dtype, o->op), mc, o->reqs);
    break;
  case K_SEND:
    rc = MPI_Isend(send, n, move_type(o->dtype), o->root, P2P_TAG, mc,
                   o->reqs);
    break;
  case K_RECV:
    rc = MPI_Irecv(o->recvbuf, n, move_type(o->dtype), o->root, P2P_TAG, mc,
                   o->reqs);
    break;
  case K_GROUP:
    o->reqs = malloc(sizeof *o->reqs * (size_t)(o->nsubs ? o->nsubs : 1));
    o->stats = malloc(sizeof *o->stats * (size_t)(o->nsubs ? o->nsubs : 1));
    if (o->reqs == NULL || o->stats == NULL) {
      free(o->reqs);
      free(o->stats);
      o->reqs = &o->req1;
      o->stats = &o->stat1;
      goto oom;
    }
    o->nreqs = 0;
    for (int i = 0; i < o->nsubs && rc == MPI_SUCCESS; i++) {
      p2p *s = &o->subs[i];
      rc = s->send ? MPI_Isend(s->buf, (int)s->count, move_type(s->dtype),
                               s->peer, P2P_TAG, mc, &o->reqs[i])
                   : MPI_Irecv(s->buf, (int)s->count, move_type(s->dtype),
                               s->peer, P2P_TAG, mc, &o->reqs[i]);
      if (rc == MPI_SUCCESS)
        o->nreqs++;
    }
    if (rc != MPI_SUCCESS && o->nreqs > 0) {
      /* The posted ones must finish before their buffers go. */
      MPI_Waitall(o->nreqs, o->reqs, MPI_STATUSES_IGNORE);
    }
    break;
  default:
    o->nreqs = 0;
    break;
  }
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
      snprintf(text, sizeof text, "MPI error %d", rc);
    snprintf(msg, msgsize, "%s: MPI failed: %s", o->name, text);
    return ascErrorCommunication;
  }
  return ascSuccess;
oom:
  snprintf(msg, msgsize, "%s: out of memory for a staging buffer", o->name);
  return ascErrorOutOfMemory;
}

/* Allreduces up to comm->blocking_max bytes (all, unless
 * ASC_MPI_BLOCKING_MAX says) run as blocking MPI_Allreduce, which Open
 * MPI does in about half the time of MPI_Iallreduce + MPI_Test for 8 B
 * (its nonblocking collectives build a schedule per call) and about 10 %
 * faster for 2 MiB: bench/mpi_allreduce.  Every rank must choose the same variant
 * (blocking and nonblocking collectives do not match), so the choice
 * depends only on the count and type, which all ranks share, and on a
 * limit the ranks agree on at init. */
ascError_t asc__mpi_op_run(xop *o, char *msg, size_t msgsize) {
  MPI_Comm mc = o->comm->mpi;
  size_t bytes = o->count * o->esize;
  const void *send = o->sendbuf;
  int rc;

  /* Only K_ALLREDUCE of an MPI type is marked blocking (submit). */
  if (send == o->recvbuf)
    send = MPI_IN_PLACE;
  else if (overlap(send, bytes, o->recvbuf, bytes) &&
           (send = copy_send(o, send, bytes)) == NULL) {
    snprintf(msg, msgsize, "%s: out of memory for a staging buffer",
             o->name);
    return ascErrorOutOfMemory;
  }
  rc = MPI_Allreduce(send, o->recvbuf, (int)o->count, reduce_type(o->dtype),
                     mpi_op(o->dtype, o->op), mc);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
      snprintf(text, sizeof text, "MPI error %d", rc);
    snprintf(msg, msgsize, "%s: MPI failed: %s", o->name, text);
    return ascErrorCommunication;
  }
  return ascSuccess;
}

void asc__mpi_op_finish(xop *o) {
  size_t bytes = o->count * 2;

  if (!is_half(o->dtype))
    return;
  switch (o->kind) {
  case K_ALLREDUCE:
    half_reduce(o->recvbuf, o->tmp, o->count, bytes, o->comm->size,
                o->dtype, o->op);
    break;
  case K_REDUCE:
    if (o->comm->rank == o->root)
      half_reduce(o->recvbuf, o->tmp, o->count, bytes, o->comm->size,
                  o->dtype, o->op);
    break;
  case K_REDSCAT:
    half_reduce(o->recvbuf, o->sendbuf, o->count, bytes, o->comm->size,
                o->dtype, o->op);
    break;
  default:
    break;
  }
}

/* ------------------------------------------------ application threads */

/* The calling thread's open group, if any. */
static _Thread_local struct group {
  bool open;
  ascComm_t comm;
  ascStream_t stream;
  p2p *subs;
  int n, cap;
} tls_group;
/* Groups open on all threads: a collective reads its thread's group (a
 * thread-local, a call into the dynamic linker from a shared library)
 * only when some group is open. */
static atomic_int groups_open;

/* Checks comm, dtype and count; the buffers of the call hold up to
 * count * blocks elements, blocks = mult * the communicator's size (1 when
 * mult is 0, or when half_only is set and dtype is not a half type). */
/* Inlined: each caller's constants (mult, half_only) fold, and the
 * small-allreduce path pays no call (docs/distributed.md). */
static inline __attribute__((always_inline)) ascError_t
check_common(const char *fn, ascComm_t comm, ascDataType dtype, size_t count,
             int mult, bool half_only, size_t *esize) {
  size_t es, per_rank_blocks;

  *esize = 0;
  if (comm == NULL || atomic_load_explicit(&comm->magic,
                                           memory_order_acquire) !=
                          COMM_MAGIC)
    return asc__mpi_comm_check(comm, fn);   /* says which */
  per_rank_blocks = mult > 0 && (!half_only || is_half(dtype))
                        ? (size_t)mult * (size_t)comm->size
                        : 1;
  es = ascDataTypeSize(dtype);
  if ((unsigned)dtype >= ascDataTypeCount || es == 0)
    return asc__mpi_err(ascErrorInvalidValue, "%s: invalid dtype %d", fn,
                        (int)dtype);
  if (count > INT_MAX)
    return asc__mpi_err(ascErrorInvalidValue,
                        "%s: count %zu exceeds INT_MAX (MPI counts are int)",
                        fn, count);
  if (per_rank_blocks > 1 &&
      count * es > SIZE_MAX / per_rank_blocks)
    return asc__mpi_err(ascErrorInvalidValue,
                        "%s: count %zu times %zu ranks overflows size_t", fn,
                        count, per_rank_blocks);
  *esize = es;
  return ascSuccess;
}

static ascError_t check_op(const char *fn, ascDataType dtype, ascRedOp op) {
  if ((unsigned)op >= ascRedOpCount)
    return asc__mpi_err(ascErrorInvalidValue, "%s: invalid reduction op %d",
                        fn, (int)op);
  if ((dtype == ascComplex64 || dtype == ascComplex128) &&
      (op == ascRedMin || op == ascRedMax))
    return asc__mpi_err(ascErrorInvalidValue,
                        "%s: %s values have no order (min/max); reduce "
                        "with sum or prod",
                        fn, ascDataTypeName(dtype));
  return ascSuccess;
}

static ascError_t check_buf(const char *fn, const char *what, const void *p,
                            size_t count) {
  if (p == NULL && count > 0)
    return asc__mpi_err(ascErrorInvalidValue, "%s: %s is NULL", fn, what);
  return ascSuccess;
}

static ascError_t check_rank(const char *fn, const char *what, int r,
                             ascComm_t comm) {
  if (r < 0 || r >= comm->size)
    return asc__mpi_err(ascErrorInvalidValue,
                        "%s: %s %d is not a rank of the communicator "
                        "(size %d)", fn, what, r, comm->size);
  return ascSuccess;
}

static ascError_t not_in_group(const char *fn) {
  if (atomic_load_explicit(&groups_open, memory_order_relaxed) != 0 &&
      tls_group.open)
    return asc__mpi_err(ascErrorNotPermitted,
                        "%s: collectives cannot be queued inside "
                        "ascGroupStart/ascGroupEnd", fn);
  return ascSuccess;
}

static ascError_t submit(const char *fn, op_kind kind, const void *sendbuf,
                         void *recvbuf, size_t count, ascDataType dtype,
                         size_t es, ascRedOp op, int root, ascComm_t comm,
                         ascStream_t stream) {
  xop *o = asc__mpi_op_new(comm);

  if (o == NULL)
    return asc__mpi_err(ascErrorOutOfMemory, "%s: out of memory", fn);
  o->kind = kind;
  o->name = fn;
  o->sendbuf = sendbuf;
  o->recvbuf = recvbuf;
  o->count = count;
  o->dtype = dtype;
  o->esize = es;
  o->op = op;
  o->root = root;
  o->blocking = kind == K_ALLREDUCE && !is_half(dtype) &&
                (long long)(count * es) <= comm->blocking_max;
  return asc__mpi_enqueue(comm, o, stream);
}

ascError_t ascAllReduce(const void *sendbuf, void *recvbuf, size_t count,
                        ascDataType dtype, ascRedOp op, ascComm_t comm,
                        ascStream_t stream) {
  static const char fn[] = "ascAllReduce";
  size_t es;
  ASC_TRY(not_in_group(fn));
  ASC_TRY(check_common(fn, comm, dtype, count, 1, true, &es));
  ASC_TRY(check_op(fn, dtype, op));
  ASC_TRY(check_buf(fn, "sendbuf", sendbuf, count));
  ASC_TRY(check_buf(fn, "recvbuf", recvbuf, count));
  return submit(fn, K_ALLREDUCE, sendbuf, recvbuf, count, dtype, es, op, 0,
                comm, stream);
}

ascError_t ascReduce(const void *sendbuf, void *recvbuf, size_t count,
                     ascDataType dtype, ascRedOp op, int root, ascComm_t comm,
                     ascStream_t stream) {
  static const char fn[] = "ascReduce";
  size_t es;
  ASC_TRY(not_in_group(fn));
  ASC_TRY(check_common(fn, comm, dtype, count, 1, true, &es));
  ASC_TRY(check_op(fn, dtype, op));
  ASC_TRY(check_rank(fn, "root", root, comm));
  ASC_TRY(check_buf(fn, "sendbuf", sendbuf, count));
  if (comm->rank == root)
    ASC_TRY(check_buf(fn, "recvbuf (on root)", recvbuf, count));
  return submit(fn, K_REDUCE, sendbuf, recvbuf, count, dtype, es, op, root,
                comm, stream);
}

ascError_t ascBroadcast(const void *sendbuf, void *recvbuf, size_t count,
                        ascDataType dtype, int root, ascComm_t comm,
                        ascStream_t stream) {
  static const char fn[] = "ascBroadcast";
  size_t es;
  ASC_TRY(not_in_group(fn));
  ASC_TRY(check_common(fn, comm, dtype, count, 0, false, &es));
  ASC_TRY(check_rank(fn, "root", root, comm));
  if (comm->rank == root)
    ASC_TRY(check_buf(fn, "sendbuf (on root)", sendbuf, count));
  ASC_TRY(check_buf(fn, "recvbuf", recvbuf, count));
  return submit(fn, K_BCAST, sendbuf, recvbuf, count, dtype, es, ascRedSum,
                root, comm, stream);
}

ascError_t ascAllGather(const void *sendbuf, void *recvbuf, size_t count,
                        ascDataType dtype, ascComm_t comm,
                        ascStream_t stream) {
  static const char fn[] = "ascAllGather";
  size_t es;
  ASC_TRY(not_in_group(fn));
  ASC_TRY(check_common(fn, comm, dtype, count, 1, false, &es));
  ASC_TRY(check_buf(fn, "sendbuf", sendbuf, count));
  ASC_TRY(check_buf(fn, "recvbuf", recvbuf, count));
  return submit(fn, K_ALLGATHER, sendbuf, recvbuf, count, dtype, es,
                ascRedSum, 0, comm, stream);
}

ascError_t ascReduceScatter(const void *sendbuf, void *recvbuf, size_t count,
                            ascDataType dtype, ascRedOp op, ascComm_t comm,
                            ascStream_t stream) {
  static const char fn[] = "ascReduceScatter";
  size_t es;
  ASC_TRY(not_in_group(fn));
  ASC_TRY(check_common(fn, comm, dtype, count, 2, false, &es));
  ASC_TRY(check_op(fn, dtype, op));
  ASC_TRY(check_buf(fn, "sendbuf", sendbuf, count));
  ASC_TRY(check_buf(fn, "recvbuf", recvbuf, count));
  return submit(fn, K_REDSCAT, sendbuf, recvbuf, count, dtype, es, op, 0, comm,
                stream);
}

static ascError_t p2p_queue(const char *fn, bool send, void *buf,
                            size_t count, ascDataType dtype, int peer,
                            ascComm_t comm, ascStream_t stream) {
  struct group *g = &tls_group;
  size_t es;

  ASC_TRY(check_common(fn, comm, dtype, count, 0, false, &es));
  ASC_TRY(check_rank(fn, "peer", peer, comm));
  ASC_TRY(check_buf(fn, "buf", buf, count));
  if (!g->open)
    return submit(fn, send ? K_SEND : K_RECV, buf, buf, count, dtype, es,
                  ascRedSum, peer, comm, stream);
  if (g->n == 0) {
    g->comm = comm;
    g->stream = stream;
  } else if (g->comm != comm || g->stream != stream) {
    return asc__mpi_err(ascErrorInvalidValue,
                        "%s: every operation of a group must use the same "
                        "communicator and stream", fn);
  }
  if (g->n == g->cap) {
    int cap = g->cap ? 2 * g->cap : 8;
    p2p *s = realloc(g->subs, sizeof *s * (size_t)cap);
    if (s == NULL)
      return asc__mpi_err(ascErrorOutOfMemory, "%s: out of memory", fn);
    g->subs = s;
    g->cap = cap;
  }
  g->subs[g->n++] = (p2p){send, buf, count, dtype, peer};
  return ascSuccess;
}

ascError_t ascSend(const void *buf, size_t count, ascDataType dtype, int peer,
                   ascComm_t comm, ascStream_t stream) {
  return p2p_queue("ascSend", true, (void *)(uintptr_t)buf, count, dtype,
                   peer, comm, stream);
}

ascError_t ascRecv(void *buf, size_t count, ascDataType dtype, int peer,
                   ascComm_t comm, ascStream_t stream) {
  return p2p_queue("ascRecv", false, buf, count, dtype, peer, comm, stream);
}

ascError_t ascGroupStart(void) {
  if (tls_group.open)
    return asc__mpi_err(ascErrorNotPermitted,
                        "ascGroupStart: a group is already open on this "
                        "thread (groups do not nest)");
  tls_group.open = true;
  tls_group.n = 0;
  atomic_fetch_add_explicit(&groups_open, 1, memory_order_relaxed);
  return ascSuccess;
}

ascError_t ascGroupEnd(void) {
  struct group *g = &tls_group;
  xop *o;
  ascError_t err;

  if (!g->open)
    return asc__mpi_err(ascErrorNotPermitted,
                        "ascGroupEnd: no group is open on this thread");
  g->open = false;
  atomic_fetch_sub_explicit(&groups_open, 1, memory_order_relaxed);
  if (g->n == 0) {
    free(g->subs);
    g->subs = NULL;
    g->cap = 0;
    return ascSuccess;
  }
  err = asc__mpi_comm_check(g->comm, "ascGroupEnd");
  if (err == ascSuccess && (o = calloc(1, sizeof *o)) == NULL)
    err = asc__mpi_err(ascErrorOutOfMemory, "ascGroupEnd: out of memory");
  if (err != ascSuccess) {
    free(g->subs);
    g->subs = NULL;
    g->cap = g->n = 0;
    return err;
  }
  o->kind = K_GROUP;
  o->name = "ascGroupEnd";
  o->subs = g->subs;   /* the op owns them now */
  o->nsubs = g->n;
  g->subs = NULL;
  g->cap = g->n = 0;
  return asc__mpi_enqueue(g->comm, o, g->stream);
}
