/*
 * Helpers of the MPI tests (run under mpirun by ctest, cmake/mpi.cmake).
 * Plain C rather than cmocka: a failed check must end every rank at once
 * (MPI_Abort), or the other ranks would wait in a collective until the
 * test's timeout.
 */
#ifndef ASC_MPITEST_H
#define ASC_MPITEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc/asc_mpi.h"

static int test_rank;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", test_rank,      \
              __FILE__, __LINE__, #cond);                                   \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
      MPI_Abort(MPI_COMM_WORLD, 1);                                          \
    }                                                                        \
  } while (0)

#define OK(expr)                                                             \
  do {                                                                       \
    ascError_t e_ = (expr);                                                  \
    CHECK(e_ == ascSuccess, "%s -> %s: %s", #expr, ascGetErrorName(e_),      \
          ascGetLastErrorMessage());                                         \
  } while (0)

#define ERR(expr, code)                                                      \
  do {                                                                       \
    ascError_t e_ = (expr);                                                  \
    CHECK(e_ == (code), "%s -> %s, expected %s (%s)", #expr,                 \
          ascGetErrorName(e_), ascGetErrorName(code),                        \
          ascGetLastErrorMessage());                                         \
  } while (0)

static inline void test_init(int *argc, char ***argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
}

#endif
