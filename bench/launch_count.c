/*
 * A fixed amount of launch work for instruction counting
 * (bench/trace_off_cost.sh): N asynchronous launches of an empty kernel
 * on one stream, synchronised every 1000, tracing off.  Prints nothing
 * but the count; the measurement is the instruction count valgrind
 * reports for the whole run, compared across builds and N.
 *
 *   launch_count N
 */
#include <stdio.h>
#include <stdlib.h>

#include "asc/asc.h"

static void check(ascError_t e, const char *what) {
  if (e != ascSuccess) {
    fprintf(stderr, "%s: %s: %s\n", what, ascGetErrorName(e),
            ascGetLastErrorMessage());
    exit(1);
  }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10000;
  ascModule_t m;
  ascKernel_t empty;
  ascStream_t s;

  check(ascModuleLoad(&m, ASC_BENCH_MODULE_DIR "/bench_kernels.so"), "load");
  check(ascModuleGetKernel(&empty, m, "empty"), "kernel");
  check(ascStreamCreateWithFlags(&s, ascStreamNonBlocking), "stream");
  for (int i = 0; i < n; i++) {
    check(ascLaunchKernel(empty, 1, NULL, s), "launch");
    if (i % 1000 == 999)
      check(ascStreamSynchronize(s), "sync");
  }
  check(ascStreamSynchronize(s), "sync");
  check(ascStreamDestroy(s), "destroy");
  check(ascModuleUnload(m), "unload");
  check(ascDeviceReset(), "reset");
  printf("launches=%d\n", n);
  return 0;
}
