/*
 * A fixed amount of launch work for instruction counting
 * (bench/trace_off_cost.sh): asynchronous launches of an empty one-block
 * kernel on one stream, tracing off, as bench/launch_latency's async
 * rate does them.  Prints nothing but the count.
 *
 *   launch_count N [async|roundtrip]
 *
 * async (default): N launches, synchronised every 1000 (the stream holds
 * 1024 ops); roundtrip: each launch followed by a stream synchronise.
 * First WARMUP launches in the same pattern fill the stream's op records,
 * the worker pool and the allocator's caches.  Then, when built with
 * valgrind's <valgrind/callgrind.h> (the last line says dump_mark=yes),
 * CALLGRIND_DUMP_STATS writes what the launching thread counted so far
 * to a part file of its own and starts its counts afresh (a no-op outside
 * valgrind), and the N launches follow: the launching thread's last part
 * holds them alone.  (The request acts on the calling thread only; the
 * workers' counts keep the warm-up.)  The script counts only the launch
 * path (callgrind --toggle-collect on ascLaunchKernel and run_block), so
 * that waiting threads, whose loops run a varying number of times, add
 * nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc/asc.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND_H 1
#endif
#endif

#define WARMUP 3000

static void check(ascError_t e, const char *what) {
  if (e != ascSuccess) {
    fprintf(stderr, "%s: %s: %s\n", what, ascGetErrorName(e),
            ascGetLastErrorMessage());
    exit(1);
  }
}

/* Where the measured part starts (see above). */
static void measure_from_here(void) {
#ifdef HAVE_CALLGRIND_H
  CALLGRIND_DUMP_STATS;
#endif
}

static void launches(ascKernel_t k, ascStream_t s, int n, int roundtrip) {
  for (int i = 0; i < n; i++) {
    check(ascLaunchKernel(k, 1, NULL, s), "launch");
    if (roundtrip || i % 1000 == 999)
      check(ascStreamSynchronize(s), "sync");
  }
  check(ascStreamSynchronize(s), "sync");
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10000;
  int roundtrip = argc > 2 && strcmp(argv[2], "roundtrip") == 0;
  ascModule_t m;
  ascKernel_t empty;
  ascStream_t s;

  if (n < 1 || (argc > 2 && !roundtrip && strcmp(argv[2], "async") != 0)) {
    fprintf(stderr, "usage: launch_count N [async|roundtrip]\n");
    return 2;
  }
  check(ascModuleLoad(&m, ASC_BENCH_MODULE_DIR "/bench_kernels.so"), "load");
  check(ascModuleGetKernel(&empty, m, "empty"), "kernel");
  check(ascStreamCreateWithFlags(&s, ascStreamNonBlocking), "stream");
  launches(empty, s, WARMUP, roundtrip);
  measure_from_here();
  launches(empty, s, n, roundtrip);
  check(ascStreamDestroy(s), "destroy");
  check(ascModuleUnload(m), "unload");
  check(ascDeviceReset(), "reset");
#ifdef HAVE_CALLGRIND_H
  printf("launches=%d mode=%s dump_mark=yes\n", n,
         roundtrip ? "roundtrip" : "async");
#else
  printf("launches=%d mode=%s dump_mark=no\n", n,
         roundtrip ? "roundtrip" : "async");
#endif
  return 0;
}
