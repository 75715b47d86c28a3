/*
 * A fixed amount of launch work for instruction counting
 * (bench/trace_off_cost.sh): asynchronous launches of an empty one-block
 * kernel on one stream, tracing off, as bench/launch_latency's async
 * rate does them.  Prints nothing but the count.
 *
 *   launch_count N [async|roundtrip] [empty|args|text]
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
#include "launch_args.h"

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

static void launches(ascKernel_t k, ascStream_t s, int n, int roundtrip,
                     void **args) {
  for (int i = 0; i < n; i++) {
    check(ascLaunchKernel(k, 1, args, s), "launch");
    if (roundtrip || i % 1000 == 999)
      check(ascStreamSynchronize(s), "sync");
  }
  check(ascStreamSynchronize(s), "sync");
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10000;
  int roundtrip = argc > 2 && strcmp(argv[2], "roundtrip") == 0;
  const char *kind = argc > 3 ? argv[3] : "empty";
  bench_args ba;
  void **a = NULL;
  ascModule_t m, mt = NULL;
  ascKernel_t k;
  ascStream_t s;

  if (n < 1 || (argc > 2 && !roundtrip && strcmp(argv[2], "async") != 0) ||
      (strcmp(kind, "empty") != 0 && strcmp(kind, "args") != 0 &&
       strcmp(kind, "text") != 0)) {
    fprintf(stderr, "usage: launch_count N [async|roundtrip] "
                    "[empty|args|text]\n");
    return 2;
  }
  bench_args_init(&ba);
  check(ascModuleLoad(&m, ASC_BENCH_MODULE_DIR "/bench_kernels.so"), "load");
  if (strcmp(kind, "text") == 0) {
    check(ascModuleLoadPython(&mt, bench_text_kernel, NULL), "load text");
    check(ascModuleGetKernel(&k, mt, "empty_text"), "kernel");
    a = ba.args;
  } else {
    check(ascModuleGetKernel(&k, m,
                             strcmp(kind, "args") == 0 ? "empty_args"
                                                       : "empty"),
          "kernel");
    a = strcmp(kind, "args") == 0 ? ba.args : NULL;
  }
  check(ascStreamCreateWithFlags(&s, ascStreamNonBlocking), "stream");
  launches(k, s, WARMUP, roundtrip, a);
  measure_from_here();
  launches(k, s, n, roundtrip, a);
  check(ascStreamDestroy(s), "destroy");
  if (mt != NULL)
    check(ascModuleUnload(mt), "unload");
  check(ascModuleUnload(m), "unload");
  check(ascDeviceReset(), "reset");
#ifdef HAVE_CALLGRIND_H
  printf("launches=%d mode=%s kernel=%s dump_mark=yes\n", n,
         roundtrip ? "roundtrip" : "async", kind);
#else
  printf("launches=%d mode=%s kernel=%s dump_mark=no\n", n,
         roundtrip ? "roundtrip" : "async", kind);
#endif
  return 0;
}
