/*
 * 2-D Jacobi over MPI with libasc_mpi: each rank owns a slab of rows;
 * every iteration exchanges its edge rows with its neighbours on one
 * stream (ascGroupStart/ascSend/ascRecv/ascGroupEnd) while the interior
 * of the slab is swept on another, then sweeps its two edge rows, and
 * the largest change over the grid is found by ascAllReduce (max).
 * Nothing waits on the host inside the loop.
 *
 * The grid's bits do not depend on the number of ranks (each element is
 * computed by the same expression from the same inputs; max is exact):
 * ctest compares the printed hash over 1, 2 and 4 ranks.
 *
 *   mpirun -np 4 build/examples/jacobi2d [--no-overlap] [NX NY ITERS]
 *
 * --no-overlap runs the exchange on the compute stream first (the
 * baseline for bench/mpi_jacobi.sh).
 */
#define _GNU_SOURCE   /* sched_getaffinity */
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc/asc_mpi.h"

#ifndef ASC_SOURCE_DIR
#define ASC_SOURCE_DIR "."
#endif

#define CHECK(call)                                                          \
  do {                                                                       \
    ascError_t e_ = (call);                                                  \
    if (e_ != ascSuccess) {                                                  \
      fprintf(stderr, "%s:%d: %s failed: %s\n%s\n", __FILE__, __LINE__,     \
              #call, ascGetErrorName(e_), ascGetLastErrorMessage());         \
      MPI_Abort(MPI_COMM_WORLD, 1);                                          \
    }                                                                        \
  } while (0)

static ascTensor tensor2(double *p, int64_t rows, int64_t cols) {
  ascTensor t;
  memset(&t, 0, sizeof t);
  t.data = p;
  t.dtype = ascFloat64;
  t.ndim = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return t;
}

static ascTensor tensor1(double *p, int64_t n) {
  ascTensor t;
  memset(&t, 0, sizeof t);
  t.data = p;
  t.dtype = ascFloat64;
  t.ndim = 1;
  t.shape[0] = n;
  t.strides[0] = 1;
  return t;
}

static ascScalar int_scalar(int64_t v) {
  ascScalar s;
  memset(&s, 0, sizeof s);
  s.dtype = ascInt64;
  s.value.i = v;
  return s;
}

static uint64_t fnv1a(const void *p, size_t n, uint64_t h) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

/* Boundary: the top edge of the whole grid is hot (1), the rest 0. */
static void init_rows(double *u, int first_global_row, int nrows, int ny) {
  for (int r = 0; r < nrows; r++)
    for (int j = 0; j < ny; j++)
      u[(size_t)r * ny + j] = first_global_row + r == 0 ? 1.0 : 0.0;
}

/* User + system CPU time of this process (all its threads), in ms. */
static double cpu_ms(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0)
    return 0;
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
}

/* Ranks on one node share its cores: unless ASC_VISIBLE_CORES says
 * otherwise, local rank i of L gets the i-th L-th of the cores this
 * process may use (one core each when there are more ranks than cores),
 * so that L worker pools do not all spread over every core.  Must run
 * before the first libasc call that starts the device. */
static void split_cores(void) {
  MPI_Comm node;
  int lrank, lsize, n = 0, cpus[CPU_SETSIZE];
  cpu_set_t set;
  char list[64 * 8] = "";

  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  MPI_Comm_rank(node, &lrank);
  MPI_Comm_size(node, &lsize);
  MPI_Comm_free(&node);
  if (getenv("ASC_VISIBLE_CORES") != NULL || lsize < 2 ||
      sched_getaffinity(0, sizeof set, &set) != 0)
    return;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set))
      cpus[n++] = c;
  if (n == 0)
    return;
  int lo = lsize <= n ? lrank * n / lsize : lrank % n;
  int hi = lsize <= n ? (lrank + 1) * n / lsize : lo + 1;
  for (int i = lo; i < hi && strlen(list) + 8 < sizeof list; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d",
             i > lo ? "," : "", cpus[i]);
  setenv("ASC_VISIBLE_CORES", list, 0);
}

int main(int argc, char **argv) {
  int provided, rank, size, overlap = 1, a = 1;
  int nx = 514, ny = 512, iters = 100;
  ascComm_t comm;
  ascModule_t mod;
  ascKernel_t ksweep, kmax;
  ascStream_t comp, halo;
  ascEvent_t halo_done, swept;
  double t0, t1, c0, c1, cpu = 0;

  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (a < argc && strcmp(argv[a], "--no-overlap") == 0) {
    overlap = 0;
    a++;
  }
  if (a + 2 < argc) {
    nx = atoi(argv[a]);
    ny = atoi(argv[a + 1]);
    iters = atoi(argv[a + 2]);
  }
  split_cores();
  CHECK(ascCommInitFromMPI(&comm, MPI_COMM_WORLD));
  CHECK(ascCommRank(comm, &rank));
  CHECK(ascCommSize(comm, &size));

  /* Interior rows 1 .. nx-2 split as evenly as possible. */
  int interior = nx - 2;
  int nloc = interior / size + (rank < interior % size);
  int first = 1 + rank * (interior / size) +
              (rank < interior % size ? rank : interior % size);
  if (nloc < 1) {
    if (rank == 0)
      fprintf(stderr, "jacobi2d: %d interior rows for %d ranks\n", interior,
              size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int up = rank > 0 ? rank - 1 : -1, down = rank < size - 1 ? rank + 1 : -1;
  size_t rows = (size_t)nloc + 2, cells = rows * (size_t)ny;
  double *u = malloc(cells * sizeof *u), *v = malloc(cells * sizeof *v);
  double *rowmax = calloc(rows, sizeof *rowmax), local = 0, global = 0;
  if (u == NULL || v == NULL || rowmax == NULL)
    MPI_Abort(MPI_COMM_WORLD, 1);
  init_rows(u, first - 1, (int)rows, ny);
  init_rows(v, first - 1, (int)rows, ny);

  CHECK(ascModuleLoadPythonFile(&mod, ASC_SOURCE_DIR "/examples/mpi/jacobi2d.py",
                                NULL));
  CHECK(ascModuleGetKernel(&ksweep, mod, "sweep"));
  CHECK(ascModuleGetKernel(&kmax, mod, "maxof"));
  CHECK(ascStreamCreateWithFlags(&comp, ascStreamNonBlocking));
  CHECK(ascStreamCreateWithFlags(&halo, ascStreamNonBlocking));
  CHECK(ascEventCreateWithFlags(&halo_done, ascEventDisableTiming));
  CHECK(ascEventCreateWithFlags(&swept, ascEventDisableTiming));

  ascTensor trm = tensor1(rowmax, (int64_t)rows), tloc = tensor1(&local, 1);
  void *margs[] = {&trm, &tloc};
  MPI_Barrier(MPI_COMM_WORLD);
  c0 = cpu_ms();
  t0 = MPI_Wtime();
  for (int it = 0; it < iters; it++) {
    double *src = it % 2 ? v : u, *dst = it % 2 ? u : v;
    ascTensor ts = tensor2(src, (int64_t)rows, ny);
    ascTensor td = tensor2(dst, (int64_t)rows, ny);
    ascScalar lo_in = int_scalar(2), hi_in = int_scalar(nloc);
    ascScalar lo_top = int_scalar(1), hi_top = int_scalar(1 + (nloc > 1));
    ascScalar lo_bot = int_scalar(nloc), hi_bot = int_scalar(nloc + 1);
    void *in_args[] = {&ts, &td, &trm, &lo_in, &hi_in};
    void *top_args[] = {&ts, &td, &trm, &lo_top, &hi_top};
    void *bot_args[] = {&ts, &td, &trm, &lo_bot, &hi_bot};
    ascStream_t xs = overlap ? halo : comp;

    /* The exchange reads src's edge rows and writes its ghost rows; it
     * may start once the previous sweep (which wrote src) is done. */
    if (overlap) {
      CHECK(ascEventRecord(swept, comp));
      CHECK(ascStreamWaitEvent(halo, swept, 0));
    }
    CHECK(ascGroupStart());
    if (up >= 0) {
      CHECK(ascSend(src + ny, (size_t)ny, ascFloat64, up, comm, xs));
      CHECK(ascRecv(src, (size_t)ny, ascFloat64, up, comm, xs));
    }
    if (down >= 0) {
      CHECK(ascSend(src + (size_t)nloc * ny, (size_t)ny, ascFloat64, down,
                    comm, xs));
      CHECK(ascRecv(src + (size_t)(nloc + 1) * ny, (size_t)ny, ascFloat64,
                    down, comm, xs));
    }
    CHECK(ascGroupEnd());
    /* The interior needs no ghost row: it runs during the exchange. */
    if (nloc > 2)
      CHECK(ascLaunchKernel(ksweep, 1, in_args, comp));
    if (overlap) {
      CHECK(ascEventRecord(halo_done, halo));
      CHECK(ascStreamWaitEvent(comp, halo_done, 0));
    }
    CHECK(ascLaunchKernel(ksweep, 1, top_args, comp));
    if (nloc > 1)
      CHECK(ascLaunchKernel(ksweep, 1, bot_args, comp));
    CHECK(ascLaunchKernel(kmax, 1, margs, comp));
    CHECK(ascAllReduce(&local, &global, 1, ascFloat64, ascRedMax, comm,
                       comp));
  }
  CHECK(ascStreamSynchronize(comp));
  t1 = MPI_Wtime();
  c1 = cpu_ms() - c0;
  MPI_Reduce(&c1, &cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

  /* The whole grid on rank 0, for the hash. */
  double *fin = iters % 2 ? v : u;
  int *counts = NULL, *displs = NULL;
  double *grid = NULL;
  if (rank == 0) {
    counts = malloc(sizeof *counts * (size_t)size);
    displs = malloc(sizeof *displs * (size_t)size);
    grid = malloc(sizeof *grid * (size_t)nx * ny);
  }
  int mine = nloc * ny;
  MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    displs[0] = ny;   /* row 0 is the boundary */
    for (int r = 1; r < size; r++)
      displs[r] = displs[r - 1] + counts[r - 1];
  }
  MPI_Gatherv(fin + ny, mine, MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
  if (rank == 0) {
    init_rows(grid, 0, 1, ny);
    init_rows(grid + (size_t)(nx - 1) * ny, nx - 1, 1, ny);
    printf("jacobi2d %dx%d iters %d ranks %d: residual %a hash %016llx\n",
           nx, ny, iters, size, global,
           (unsigned long long)fnv1a(grid, sizeof *grid * (size_t)nx * ny,
                                     0xcbf29ce484222325ull));
    printf("jacobi2d time %.3f ms (%s)\n", (t1 - t0) * 1e3,
           overlap ? "overlap" : "no overlap");
    /* The CPU time all ranks' threads used meanwhile: against the wall
     * time times the cores, how busy the machine was (bench/mpi_jacobi.sh
     * reads it). */
    printf("jacobi2d cpu %.3f ms (all ranks, user + system)\n", cpu);
  }
  free(counts);
  free(displs);
  free(grid);
  CHECK(ascEventDestroy(halo_done));
  CHECK(ascEventDestroy(swept));
  CHECK(ascStreamDestroy(halo));
  CHECK(ascStreamDestroy(comp));
  CHECK(ascModuleUnload(mod));
  CHECK(ascCommDestroy(comm));
  free(u);
  free(v);
  free(rowmax);
  MPI_Finalize();
  return 0;
}
