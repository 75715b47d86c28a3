/*
 * Every operation x dtype x reduction op against a reference that each
 * rank computes from the same generator (the data of every rank is a
 * function of rank and index): counts 0, 1 and odd sizes, buffers at odd
 * addresses, out of place and in place.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpitest.h"

static int rank, size;

/* Element i of rank r's input for op: small integers, so that sums and
 * products are exact in every dtype and in any order. */
static double gen(ascDataType dt, ascRedOp op, int r, size_t i) {
  if (dt == ascBool)
    return (double)((r + i) % 3 != 0);
  if (op == ascRedProd)
    return (double)(1 + (r + i) % 3);
  if (dt >= ascUInt8 && dt <= ascUInt64)
    return (double)((r * 5 + i * 3) % 7);
  return (double)((int)((r * 5 + i * 3) % 7) - 3) * (dt >= ascFloat16 ? 0.5 : 1);
}

static void store(ascDataType dt, void *p, double v) {
  switch (dt) {
  case ascBool: { _Bool b = v != 0; memcpy(p, &b, 1); break; }
  case ascInt8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
  case ascInt16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
  case ascInt32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
  case ascInt64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
  case ascUInt8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
  case ascUInt16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
  case ascUInt32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
  case ascUInt64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
  case ascFloat16: { _Float16 x = (_Float16)v; memcpy(p, &x, 2); break; }
  case ascBFloat16: {
    float f = (float)v;    /* the values used are exact in bfloat16 */
    uint32_t u;
    uint16_t h;
    memcpy(&u, &f, 4);
    h = (uint16_t)(u >> 16);
    memcpy(p, &h, 2);
    break;
  }
  case ascFloat32: { float x = (float)v; memcpy(p, &x, 4); break; }
  /* complex: the value in the real part, imaginary 0 */
  case ascComplex64: { float x[2] = {(float)v, 0}; memcpy(p, x, 8); break; }
  case ascComplex128: { double x[2] = {v, 0}; memcpy(p, x, 16); break; }
  default: { double x = v; memcpy(p, &x, 8); break; }
  }
}

static double reduce_ref(ascDataType dt, ascRedOp op, size_t i, int nranks,
                         int block) {
  /* block: which block of a reduce-scatter (element offset block * n). */
  double acc = gen(dt, op, 0, i + (size_t)block);
  for (int r = 1; r < nranks; r++) {
    double v = gen(dt, op, r, i + (size_t)block);
    if (dt == ascBool)
      acc = (op == ascRedSum || op == ascRedMax) ? (acc || v) : (acc && v);
    else if (op == ascRedSum)
      acc += v;
    else if (op == ascRedProd)
      acc *= v;
    else if (op == ascRedMin)
      acc = v < acc ? v : acc;
    else
      acc = v > acc ? v : acc;
  }
  return acc;
}

/* A buffer at an odd address (one past an allocation's start). */
static unsigned char *odd_alloc(size_t bytes, unsigned char **base) {
  *base = malloc(bytes + 16);
  CHECK(*base != NULL, "out of memory");
  memset(*base, 0xa5, bytes + 16);
  return *base + 1;
}

static void expect(const unsigned char *got, ascDataType dt, size_t n,
                   double (*ref)(ascDataType, ascRedOp, size_t, void *),
                   ascRedOp op, void *arg, const char *what) {
  size_t es = ascDataTypeSize(dt);
  unsigned char want[16];
  for (size_t i = 0; i < n; i++) {
    store(dt, want, ref(dt, op, i, arg));
    CHECK(memcmp(got + i * es, want, es) == 0,
          "%s %s op %d count %zu: element %zu differs", what,
          ascDataTypeName(dt), (int)op, n, i);
  }
}

typedef struct refarg { int nranks, block, root, from; size_t n; } refarg;

static double ref_reduce(ascDataType dt, ascRedOp op, size_t i, void *a) {
  refarg *r = a;
  return reduce_ref(dt, op, i, r->nranks, r->block);
}

static double ref_gen(ascDataType dt, ascRedOp op, size_t i, void *a) {
  refarg *r = a;
  /* allgather: element i comes from rank i / n, its index i % n */
  if (r->n > 0)
    return gen(dt, op, (int)(i / r->n), i % r->n);
  return gen(dt, op, r->from, i);
}

static void fill(unsigned char *p, ascDataType dt, ascRedOp op, int r,
                 size_t n, size_t off) {
  size_t es = ascDataTypeSize(dt);
  for (size_t i = 0; i < n; i++)
    store(dt, p + i * es, gen(dt, op, r, i + off));
}

static const size_t counts[] = {0, 1, 517};

/* Complex values have no order: min/max are refused (test_complex_order). */
static bool no_order(ascDataType dt, int op) {
  return (dt == ascComplex64 || dt == ascComplex128) &&
         (op == ascRedMin || op == ascRedMax);
}

static void test_complex_order(ascComm_t comm, ascStream_t s) {
  double z[2] = {1, 2};
  CHECK(ascAllReduce(z, z, 1, ascComplex128, ascRedMax, comm, s) ==
            ascErrorInvalidValue,
        "allreduce max of complex128 was accepted");
  CHECK(strstr(ascGetLastErrorMessage(), "no order") != NULL,
        "message: %s", ascGetLastErrorMessage());
  CHECK(ascReduceScatter(z, z, 1, ascComplex64, ascRedMin, comm, s) ==
            ascErrorInvalidValue,
        "reduce-scatter min of complex64 was accepted");
}

static void test_allreduce(ascComm_t comm, ascStream_t s) {
  for (int dt = 0; dt < ascDataTypeCount; dt++) {
    size_t es = ascDataTypeSize((ascDataType)dt);
    for (int op = 0; op < ascRedOpCount; op++) {
      if (no_order((ascDataType)dt, op))
        continue;
      for (size_t c = 0; c < 3; c++) {
        size_t n = counts[c];
        unsigned char *b0, *b1, *b2;
        unsigned char *in = odd_alloc(n * es, &b0);
        unsigned char *out = odd_alloc(n * es, &b1);
        unsigned char *inplace = odd_alloc(n * es, &b2);
        refarg ra = {size, 0, 0, 0, 0};
        fill(in, dt, op, rank, n, 0);
        fill(inplace, dt, op, rank, n, 0);
        OK(ascAllReduce(in, out, n, dt, op, comm, s));
        OK(ascAllReduce(inplace, inplace, n, dt, op, comm, s));
        OK(ascStreamSynchronize(s));
        expect(out, dt, n, ref_reduce, op, &ra, "allreduce");
        expect(inplace, dt, n, ref_reduce, op, &ra, "allreduce in place");
        CHECK(out[n * es] == 0xa5, "allreduce wrote past the end");
        free(b0); free(b1); free(b2);
      }
    }
  }
}

static void test_reduce(ascComm_t comm, ascStream_t s) {
  int root = size - 1;
  for (int dt = 0; dt < ascDataTypeCount; dt++) {
    size_t es = ascDataTypeSize((ascDataType)dt);
    for (int op = 0; op < ascRedOpCount; op++) {
      if (no_order((ascDataType)dt, op))
        continue;
      for (size_t c = 0; c < 3; c++) {
        size_t n = counts[c];
        unsigned char *b0, *b1;
        unsigned char *in = odd_alloc(n * es, &b0);
        unsigned char *out = odd_alloc(n * es, &b1);
        refarg ra = {size, 0, 0, 0, 0};
        fill(in, dt, op, rank, n, 0);
        OK(ascReduce(in, rank == root ? out : NULL, n, dt, op, root, comm, s));
        OK(ascStreamSynchronize(s));
        if (rank == root)
          expect(out, dt, n, ref_reduce, op, &ra, "reduce");
        free(b0); free(b1);
      }
    }
  }
}

static void test_bcast_gather_scatter(ascComm_t comm, ascStream_t s) {
  int root = 1 % size;
  for (int dt = 0; dt < ascDataTypeCount; dt++) {
    size_t es = ascDataTypeSize((ascDataType)dt);
    for (size_t c = 0; c < 3; c++) {
      size_t n = counts[c];
      unsigned char *b0, *b1, *b2, *b3;
      unsigned char *in = odd_alloc(n * es * size, &b0);
      unsigned char *out = odd_alloc(n * es * size, &b1);
      unsigned char *inpl = odd_alloc(n * es * size, &b2);
      unsigned char *bc = odd_alloc(n * es, &b3);
      refarg from_root = {size, 0, 0, root, 0};
      refarg gathered = {size, 0, 0, 0, n};

      /* broadcast, in place */
      fill(bc, dt, ascRedSum, rank == root ? root : 99, n, 0);
      OK(ascBroadcast(bc, bc, n, dt, root, comm, s));
      /* allgather out of place, then in place */
      fill(in, dt, ascRedSum, rank, n, 0);
      fill(inpl + (size_t)rank * n * es, dt, ascRedSum, rank, n, 0);
      OK(ascAllGather(in, out, n, dt, comm, s));
      OK(ascAllGather(inpl + (size_t)rank * n * es, inpl, n, dt, comm, s));
      OK(ascStreamSynchronize(s));
      expect(bc, dt, n, ref_gen, ascRedSum, &from_root, "broadcast");
      if (n > 0) {
        expect(out, dt, n * size, ref_gen, ascRedSum, &gathered, "allgather");
        expect(inpl, dt, n * size, ref_gen, ascRedSum, &gathered,
               "allgather in place");
      }
      /* broadcast out of place: sendbuf read on root only */
      memset(out, 0, n * es);
      OK(ascBroadcast(rank == root ? bc : NULL, out, n, dt, root, comm, s));
      OK(ascStreamSynchronize(s));
      expect(out, dt, n, ref_gen, ascRedSum, &from_root, "broadcast copy");

      /* reduce-scatter: block b of every rank's input is elements
       * b*n .. b*n+n-1 of the generator */
      for (int op = 0; op < ascRedOpCount; op++) {
        if (no_order((ascDataType)dt, op))
          continue;
        refarg mine = {size, rank * (int)n, 0, 0, 0};
        fill(in, dt, op, rank, n * size, 0);
        OK(ascReduceScatter(in, out, n, dt, op, comm, s));
        OK(ascStreamSynchronize(s));
        expect(out, dt, n, ref_reduce, op, &mine, "reduce-scatter");
      }
      free(b0); free(b1); free(b2); free(b3);
    }
  }
}

/* Inexact float16 / bfloat16 sums: the result is the float32 sum over
 * ranks in rank order, rounded once, and the same bits on every rank. */
static void test_half_rounding(ascComm_t comm, ascStream_t s) {
  enum { N = 64 };
  for (int dt = ascFloat16; dt <= ascBFloat16; dt++) {
    uint16_t in[N], out[N], want[N], *all = malloc(sizeof *all * N * size);
    CHECK(all != NULL, "out of memory");
    for (int i = 0; i < N; i++) {
      float acc = 0;
      for (int r = 0; r < size; r++) {
        uint16_t h;
        float v;
        store(dt, &h, 0.1 * (r + 1) + 0.013 * i);   /* rounded input */
        if (dt == ascFloat16) {
          _Float16 x;
          memcpy(&x, &h, 2);
          v = (float)x;
        } else {
          uint32_t u = (uint32_t)h << 16;
          memcpy(&v, &u, 4);
        }
        acc = r == 0 ? v : acc + v;
        if (r == rank)
          in[i] = h;
      }
      if (dt == ascFloat16) {
        _Float16 x = (_Float16)acc;
        memcpy(&want[i], &x, 2);
      } else {
        uint32_t u;
        memcpy(&u, &acc, 4);
        want[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
      }
    }
    OK(ascAllReduce(in, out, N, dt, ascRedSum, comm, s));
    OK(ascAllGather(out, all, N, dt, comm, s));
    OK(ascStreamSynchronize(s));
    for (int i = 0; i < N; i++)
      CHECK(out[i] == want[i], "%s sum element %d: 0x%04x, want 0x%04x",
            ascDataTypeName(dt), i, out[i], want[i]);
    for (int r = 0; r < size; r++)
      CHECK(memcmp(all + (size_t)r * N, out, sizeof out) == 0,
            "%s: rank %d got other bits", ascDataTypeName(dt), r);
    free(all);
  }
}

/* A ring: every rank sends to the next and receives from the previous,
 * in one group (as a halo exchange), then with the send and the receive
 * on two streams. */
static void test_p2p(ascComm_t comm, ascStream_t s, ascStream_t s2) {
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  enum { N = 100000 };   /* large enough for the rendezvous protocol */
  double *out = malloc(N * sizeof *out), *in = malloc(N * sizeof *in);
  CHECK(out != NULL && in != NULL, "out of memory");
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < N; i++) {
      out[i] = rank * 1e6 + i + round;
      in[i] = -1;
    }
    if (round == 0) {
      OK(ascGroupStart());
      OK(ascSend(out, N, ascFloat64, next, comm, s));
      OK(ascRecv(in, N, ascFloat64, prev, comm, s));
      OK(ascGroupEnd());
    } else {
      OK(ascRecv(in, N, ascFloat64, prev, comm, s2));
      OK(ascSend(out, N, ascFloat64, next, comm, s));
    }
    OK(ascStreamSynchronize(s));
    OK(ascStreamSynchronize(s2));
    for (int i = 0; i < N; i++)
      CHECK(in[i] == prev * 1e6 + i + round, "p2p round %d element %d: %g",
            round, i, in[i]);
  }
  /* An empty group queues nothing. */
  OK(ascGroupStart());
  OK(ascGroupEnd());
  free(out);
  free(in);
}

int main(int argc, char **argv) {
  ascComm_t comm;
  ascStream_t s, s2;
  int r, n;

  test_init(&argc, &argv);
  OK(ascCommInitFromMPI(&comm, MPI_COMM_WORLD));
  OK(ascCommRank(comm, &rank));
  OK(ascCommSize(comm, &size));
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(rank == r && size == n, "rank %d/%d vs MPI %d/%d", rank, size, r, n);
  OK(ascStreamCreate(&s));
  OK(ascStreamCreate(&s2));
  test_complex_order(comm, s);
  test_allreduce(comm, s);
  test_reduce(comm, s);
  test_bcast_gather_scatter(comm, s);
  test_half_rounding(comm, s);
  test_p2p(comm, s, s2);
  OK(ascStreamDestroy(s2));
  OK(ascStreamDestroy(s));
  OK(ascCommDestroy(comm));
  if (rank == 0)
    printf("test_mpi_coll: %d ranks ok\n", size);
  MPI_Finalize();
  return 0;
}
