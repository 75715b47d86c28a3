/*
 * The recording cost of one traced launch, on one thread: the hooks a
 * one-block launch runs while tracing (queued, started, the block's two
 * clock reads and its record, the launch's end and record), called
 * back-to-back on a stand-in op, with no worker pool in the way.  This is
 * the part of bench/launch_latency's overhead_us_per_async_launch that
 * tracing adds by itself; the rest of that figure is how the extra work
 * shifts the host/worker hand-off.
 *
 * Each repetition starts a session, records `n` launches, stops it (the
 * flush is timed apart); the figure is the median over repetitions of ns
 * per launch.  The clock is the one docs/tracing.md describes; run with
 * ASC_TRACE_CLOCK=monotonic for the clock_gettime fallback.  Lines:
 *   stats trace_hooks_ns_per_launch <median> <min> <max>
 *   trace_clock=<tsc|monotonic> clock_read_ns=<median>
 *     flush_ns_per_launch=<median: ascProfilerStop formatting and writing>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "runtime/stream.h"
#include "runtime/trace.h"

#define REPS 15

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static asc__op op;
static asc__stream stream;
static asc_kernel_desc desc = {.name = "empty"};

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  double per[REPS], clk[REPS], flush[REPS];
  char path[512];
  const char *tmp = getenv("TMPDIR");
  volatile uint64_t sink = 0;

  snprintf(path, sizeof path, "%s/asc-bench-hooks-%d.json",
           tmp != NULL ? tmp : "/tmp", (int)uv_os_getpid());
  op.kind = OP_LAUNCH;
  op.stream = &stream;
  op.launch.desc = &desc;
  op.launch.nblocks = 1;
  op.launch.team = 1;
  for (int rep = 0; rep < REPS; rep++) {
    uint64_t t0, t1;
    if (ascProfilerStart(path) != ascSuccess) {
      fprintf(stderr, "ascProfilerStart: %s\n", ascGetLastErrorMessage());
      return 1;
    }
    t0 = uv_hrtime();
    for (int i = 0; i < n; i++) {
      uint64_t b0;
      ASC_TRACE(asc__trace_op_queued(&op));
      ASC_TRACE(asc__trace_op_started(&op));
      b0 = asc__trace_clock();
      ASC_TRACE(asc__trace_block(&op.launch, 0, b0));
      ASC_TRACE(asc__trace_launch_done(&op, NULL));
    }
    t1 = uv_hrtime();
    per[rep] = (double)(t1 - t0) / n;
    t0 = uv_hrtime();
    for (int i = 0; i < n; i++)
      sink += asc__trace_now();
    clk[rep] = (double)(uv_hrtime() - t0) / n;
    t0 = uv_hrtime();
    if (ascProfilerStop() != ascSuccess) {
      fprintf(stderr, "ascProfilerStop: %s\n", ascGetLastErrorMessage());
      return 1;
    }
    flush[rep] = (double)(uv_hrtime() - t0) / n;
  }
  remove(path);
  (void)sink;
  qsort(per, REPS, sizeof per[0], cmp_double);
  qsort(clk, REPS, sizeof clk[0], cmp_double);
  qsort(flush, REPS, sizeof flush[0], cmp_double);
  printf("stats trace_hooks_ns_per_launch %.1f %.1f %.1f\n", per[REPS / 2],
         per[0], per[REPS - 1]);
  printf("trace_clock=%s clock_read_ns=%.1f flush_ns_per_launch=%.1f\n",
         atomic_load(&asc__trace_clk) == 2 ? "tsc" : "monotonic",
         clk[REPS / 2], flush[REPS / 2]);
  return 0;
}
