/*
 * Launch latency and throughput.
 *
 *  1. Round trip: launch an empty kernel whose one block spreads an empty
 *     parallel loop over all cores, then synchronise the stream; compared
 *     with an empty OpenMP `parallel for` over as many threads, measured
 *     in the same process.
 *  2. Asynchronous launch rate: back-to-back launches of an empty
 *     one-block kernel on one stream, then one synchronisation.
 *  1b. The round trip of 1 in one call, ascLaunchKernelAndSynchronize
 *     (the caller runs the block: docs/streams.md, "A launch the caller
 *     waits for"), and through ascLaunchKernelSync (the calling thread's
 *     own stream), in the same repetitions.
 *
 *  3. Both again with tracing on (docs/tracing.md), in the same
 *     repetitions, each right after its untraced twin.
 *
 *   launch_latency [iters] [async_launches] [untraced | args]
 *
 * `untraced` measures 1 and 2 only (no tracing, no OpenMP): the timed
 * half of bench/trace_off_cost.sh, which runs it alternately in this
 * build and in one with the trace hooks compiled out.
 *
 * `args` measures what a launch costs with arguments: the asynchronous
 * rate of 2 for the empty kernel, for an empty hand-written kernel of
 * three float32 vectors and a generic scalar (the launch checks them),
 * and for a kernel from Python text with the same arguments (the checks,
 * then the signature and the lookup of its specialisation), each
 * repetition measuring the three in turn.  Its last line:
 *   args: empty_per_s=<n> so_args_per_s=<n> text_args_per_s=<n>
 *     text_over_so=<ratio of the time per launch>
 *
 * Each figure is the median over repetitions.  Lines
 *   stats <name> <median> <min> <max>
 * give the spread for bench/suite.py; then
 *   launch_roundtrip_vs_openmp=<ratio> async_launches_per_s=<n>
 *   launch_and_sync_vs_openmp=<ratio> launch_sync_vs_openmp=<ratio>
 * and last
 *   tracing_on: roundtrip_us=<t> async_launches_per_s=<n>
 *     overhead_us_per_async_launch=<median over repetitions of the traced
 *     minus the untraced time per launch>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "asc/asc.h"
#include "launch_args.h"

#ifdef ASC_HAVE_OPENMP
#include <omp.h>
#endif

#define REPS 9

static void check(ascError_t e, const char *what) {
  if (e != ascSuccess) {
    fprintf(stderr, "%s: %s: %s\n", what, ascGetErrorName(e),
            ascGetLastErrorMessage());
    exit(1);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Prints one `stats` line; v must be sorted (median() sorts it). */
static void stats(const char *name, const double *v, int n, double scale) {
  printf("stats %s %.6g %.6g %.6g\n", name, median((double *)v, n) * scale,
         v[0] * scale, v[n - 1] * scale);
}

/* Lets spinning threads of the other runtime go idle between phases. */
static void settle(void) { uv_sleep(20); }

static double asc_roundtrip_ns(ascKernel_t k, ascStream_t s, int iters) {
  uint64_t t0;
  for (int i = 0; i < 100; i++) {
    check(ascLaunchKernel(k, 1, NULL, s), "launch");
    check(ascStreamSynchronize(s), "sync");
  }
  t0 = uv_hrtime();
  for (int i = 0; i < iters; i++) {
    check(ascLaunchKernel(k, 1, NULL, s), "launch");
    check(ascStreamSynchronize(s), "sync");
  }
  return (double)(uv_hrtime() - t0) / iters;
}

/* 1b: the round trip in one call, on s or (s NULL) through
 * ascLaunchKernelSync. */
static void one_call(ascKernel_t k, ascStream_t s) {
  check(s != NULL ? ascLaunchKernelAndSynchronize(k, 1, NULL, s)
                  : ascLaunchKernelSync(k, 1, NULL, ascLaunchJoin),
        "launch and wait");
}

static double asc_one_call_ns(ascKernel_t k, ascStream_t s, int iters) {
  uint64_t t0;
  for (int i = 0; i < 100; i++)
    one_call(k, s);
  t0 = uv_hrtime();
  for (int i = 0; i < iters; i++)
    one_call(k, s);
  return (double)(uv_hrtime() - t0) / iters;
}

#ifdef ASC_HAVE_OPENMP
static volatile int omp_sink;

static double omp_roundtrip_ns(int threads, int iters) {
  uint64_t t0;
  for (int i = 0; i < 100; i++) {
#pragma omp parallel for num_threads(threads)
    for (int j = 0; j < threads; j++)
      omp_sink = 0;
  }
  t0 = uv_hrtime();
  for (int i = 0; i < iters; i++) {
#pragma omp parallel for num_threads(threads)
    for (int j = 0; j < threads; j++)
      omp_sink = 0;
  }
  return (double)(uv_hrtime() - t0) / iters;
}
#endif

static double asc_async_rate_args(ascKernel_t k, ascStream_t s, int n,
                                  void **args) {
  uint64_t t0 = uv_hrtime();
  for (int i = 0; i < n; i++)
    check(ascLaunchKernel(k, 1, args, s), "launch");
  check(ascStreamSynchronize(s), "sync");
  return n / ((double)(uv_hrtime() - t0) * 1e-9);
}

static double asc_async_rate(ascKernel_t k, ascStream_t s, int n) {
  return asc_async_rate_args(k, s, n, NULL);
}

/* The `args` mode (see the top). */
static int args_mode(ascModule_t m, ascStream_t s, int async_n) {
  bench_args ba;
  void **args = ba.args;
  ascModule_t mt;
  ascKernel_t empty, so_args, text;
  double e[REPS], so[REPS], tx[REPS], me, mso, mtx;
  int n = async_n / REPS + 1;

  bench_args_init(&ba);
  check(ascModuleGetKernel(&empty, m, "empty"), "kernel");
  check(ascModuleGetKernel(&so_args, m, "empty_args"), "kernel");
  check(ascModuleLoadPython(&mt, bench_text_kernel, NULL), "load text");
  check(ascModuleGetKernel(&text, mt, "empty_text"), "kernel");
  /* the one compile (or cache load) of its specialisation */
  check(ascLaunchKernel(text, 1, args, s), "launch");
  check(ascStreamSynchronize(s), "sync");
  for (int rep = 0; rep < REPS; rep++) {
    e[rep] = asc_async_rate(empty, s, n);
    so[rep] = asc_async_rate_args(so_args, s, n, args);
    tx[rep] = asc_async_rate_args(text, s, n, args);
    settle();
  }
  check(ascModuleUnload(mt), "unload");
  me = median(e, REPS);
  mso = median(so, REPS);
  mtx = median(tx, REPS);
  stats("empty_async_launches_per_s", e, REPS, 1);
  stats("so_args_async_launches_per_s", so, REPS, 1);
  stats("text_args_async_launches_per_s", tx, REPS, 1);
  printf("args: empty_per_s=%.0f so_args_per_s=%.0f text_args_per_s=%.0f "
         "text_over_so=%.3f\n",
         me, mso, mtx, mso / mtx);
  return 0;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  int async_n = argc > 2 ? atoi(argv[2]) : 1000000;
  int untraced = argc > 3 && strcmp(argv[3], "untraced") == 0;
  int with_args = argc > 3 && strcmp(argv[3], "args") == 0;
  ascDeviceProp prop;
  ascModule_t m;
  ascKernel_t empty, team;
  ascStream_t s;
  double asc_rt[REPS], omp_rt[REPS], rate[REPS], and_sync[REPS], lsync[REPS];
  double traced_rt[REPS], traced_rate[REPS], overhead[REPS];
  double a, o = 0, r, ratio, ta, tr, ov, as, ls;
  int traced_n = async_n / REPS + 1 < 50000 ? async_n / REPS + 1 : 50000;
  char trace_path[512];
  const char *tmp = getenv("TMPDIR");

  snprintf(trace_path, sizeof trace_path, "%s/asc-bench-trace-%d.json",
           tmp != NULL ? tmp : "/tmp", (int)uv_os_getpid());

  check(ascGetDeviceProperties(&prop, 0), "properties");
  check(ascModuleLoad(&m, ASC_BENCH_MODULE_DIR "/bench_kernels.so"), "load");
  check(ascModuleGetKernel(&empty, m, "empty"), "kernel");
  check(ascModuleGetKernel(&team, m, "empty_team"), "kernel");
  check(ascStreamCreateWithFlags(&s, ascStreamNonBlocking), "stream");
  printf("cores=%d iters=%d async_launches=%d reps=%d\n", prop.cores, iters,
         async_n, REPS);
  if (with_args) {
    int rc = args_mode(m, s, async_n);
    check(ascStreamDestroy(s), "destroy");
    check(ascModuleUnload(m), "unload");
    check(ascDeviceReset(), "reset");
    return rc;
  }

  /* Each runtime is measured alone: idle OpenMP threads keep spinning
   * long after a parallel region, and would steal the cores from the
   * libasc workers (and the reverse), so libasc runs first and its pool
   * is shut down before OpenMP starts. */
  /* Each repetition measures without tracing, then the same with
   * tracing on (docs/tracing.md: each launch records a stream span and a
   * block span), so that the overhead is a difference within one
   * repetition, taken under the same load; its median is printed.  Fewer
   * traced launches per rep: the records stay in memory until
   * ascProfilerStop writes them (not timed). */
  for (int rep = 0; rep < REPS; rep++) {
    asc_rt[rep] = asc_roundtrip_ns(team, s, iters);
    rate[rep] = asc_async_rate(empty, s, async_n / REPS + 1);
    settle();
    if (untraced)
      continue;
    and_sync[rep] = asc_one_call_ns(team, s, iters);
    lsync[rep] = asc_one_call_ns(team, NULL, iters);
    settle();
    check(ascProfilerStart(trace_path), "profiler start");
    traced_rt[rep] = asc_roundtrip_ns(team, s, iters / 4 + 1);
    traced_rate[rep] = asc_async_rate(empty, s, traced_n);
    check(ascProfilerStop(), "profiler stop");
    overhead[rep] = 1e6 / traced_rate[rep] - 1e6 / rate[rep];
    settle();
  }
  remove(trace_path);
  check(ascStreamDestroy(s), "destroy");
  check(ascModuleUnload(m), "unload");
  check(ascDeviceReset(), "reset");
  if (untraced) {
    a = median(asc_rt, REPS);
    r = median(rate, REPS);
    stats("asc_roundtrip_us", asc_rt, REPS, 1e-3);
    stats("async_launches_per_s", rate, REPS, 1);
    printf("asc_roundtrip_us=%.3f async_launches_per_s=%.0f\n", a / 1000, r);
    return 0;
  }
  for (int rep = 0; rep < REPS; rep++) {
#ifdef ASC_HAVE_OPENMP
    omp_rt[rep] = omp_roundtrip_ns(prop.cores, iters);
#else
    omp_rt[rep] = 0;
#endif
  }
  a = median(asc_rt, REPS);
  r = median(rate, REPS);
  ta = median(traced_rt, REPS);
  tr = median(traced_rate, REPS);
  ov = median(overhead, REPS);
  as = median(and_sync, REPS);
  ls = median(lsync, REPS);
#ifdef ASC_HAVE_OPENMP
  o = median(omp_rt, REPS);
#endif
  stats("asc_roundtrip_us", asc_rt, REPS, 1e-3);
  stats("async_launches_per_s", rate, REPS, 1);
  stats("traced_asc_roundtrip_us", traced_rt, REPS, 1e-3);
  stats("traced_async_launches_per_s", traced_rate, REPS, 1);
  stats("trace_overhead_us_per_async_launch", overhead, REPS, 1);
  stats("asc_launch_and_sync_us", and_sync, REPS, 1e-3);
  stats("asc_launch_sync_us", lsync, REPS, 1e-3);
#ifdef ASC_HAVE_OPENMP
  stats("openmp_roundtrip_us", omp_rt, REPS, 1e-3);
#endif
  printf("asc_roundtrip_us=%.3f\n", a / 1000);
  printf("openmp_roundtrip_us=%.3f%s\n", o / 1000,
         o > 0 ? "" : " (OpenMP not found)");
  ratio = o > 0 ? a / o : 0;
  printf("launch_roundtrip_vs_openmp=%.2f async_launches_per_s=%.0f\n", ratio,
         r);
  printf("asc_launch_and_sync_us=%.3f asc_launch_sync_us=%.3f\n", as / 1000,
         ls / 1000);
  printf("launch_and_sync_vs_openmp=%.2f launch_sync_vs_openmp=%.2f\n",
         o > 0 ? as / o : 0, o > 0 ? ls / o : 0);
  printf("tracing_on: roundtrip_us=%.3f async_launches_per_s=%.0f "
         "overhead_us_per_async_launch=%.3f\n",
         ta / 1000, tr, ov);
  return 0;
}
