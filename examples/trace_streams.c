/*
 * A traced run over two streams (docs/tracing.md): kernels on both
 * streams, an event that makes stream 2 wait for stream 1, a host
 * function, a pool allocation, copies, a compile that misses the disk
 * cache and one that hits it, and a kernel that raises.
 *
 *   build/examples/trace_streams out.json      (ascProfilerStart/Stop)
 *   ASC_TRACE=out.json build/examples/trace_streams   (written at exit)
 *
 * Then: tools/trace_summary.py out.json, tools/trace_plot.py out.json.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc/asc.h"

#define CHECK(call)                                                          \
  do {                                                                       \
    ascError_t e_ = (call);                                                  \
    if (e_ != ascSuccess) {                                                  \
      fprintf(stderr, "%s:%d: %s failed: %s\n%s\n", __FILE__, __LINE__,     \
              #call, ascGetErrorName(e_), ascGetLastErrorMessage());         \
      return 1;                                                              \
    }                                                                        \
  } while (0)

static const char kernels[] =
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def smooth(x, y, reps: asc.int64):\n"
    "    n = x.shape[0]\n"
    "    b = asc.get_block_idx()\n"
    "    nb = asc.get_block_num()\n"
    "    lo = b * n // nb\n"
    "    hi = (b + 1) * n // nb\n"
    "    for r in range(reps):\n"
    "        for i in range(lo, hi):\n"
    "            y[i] = y[i] * 0.5 + x[i]\n"
    "\n"
    "@asc.kernel\n"
    "def check(x, limit: asc.float64):\n"
    "    if x[0] > limit:\n"
    "        raise ValueError(\"value above limit\")\n";

#define N (1 << 16)

static ascTensor vec(double *p) {
  ascTensor t;
  memset(&t, 0, sizeof t);
  t.data = p;
  t.dtype = ascFloat64;
  t.ndim = 1;
  t.shape[0] = N;
  t.strides[0] = 1;
  return t;
}

static void host_note(void *ud) {
  int *calls = ud;
  (*calls)++;
}

int main(int argc, char **argv) {
  ascModule_t m1, m2;
  ascKernel_t smooth1, smooth2, check;
  ascStream_t s1, s2;
  ascEvent_t ev;
  ascMemPool_t pool;
  double *a, *b, *c, *d, *scratch;
  int64_t reps = 200;
  double limit = 0.5;
  int calls = 0;
  ascError_t e;
  ascTensor ta, tb, tc, td;
  void *args1[3], *args2[3], *args3[2];

  if (argc > 1)
    CHECK(ascProfilerStart(argv[1]));
  CHECK(ascMalloc((void **)&a, N * sizeof(double)));
  CHECK(ascMalloc((void **)&b, N * sizeof(double)));
  CHECK(ascMalloc((void **)&c, N * sizeof(double)));
  CHECK(ascMalloc((void **)&d, N * sizeof(double)));
  for (int i = 0; i < N; i++)
    a[i] = 1.0 + i % 7;
  CHECK(ascMemcpy(c, a, N * sizeof(double), ascMemcpyDefault));
  CHECK(ascMemset(b, 0, N * sizeof(double)));
  CHECK(ascMemset(d, 0, N * sizeof(double)));
  ta = vec(a);
  tb = vec(b);
  tc = vec(c);
  td = vec(d);

  /* The same text twice: the first launch of m1 compiles (a disk-cache
   * miss in a fresh ASC_CACHE_DIR), the first launch of m2 finds it. */
  CHECK(ascModuleLoadPython(&m1, kernels, NULL));
  CHECK(ascModuleLoadPython(&m2, kernels, NULL));
  CHECK(ascModuleGetKernel(&smooth1, m1, "smooth"));
  CHECK(ascModuleGetKernel(&smooth2, m2, "smooth"));
  CHECK(ascModuleGetKernel(&check, m1, "check"));
  CHECK(ascStreamCreateWithFlags(&s1, ascStreamNonBlocking));
  CHECK(ascStreamCreateWithFlags(&s2, ascStreamNonBlocking));
  CHECK(ascEventCreate(&ev));
  CHECK(ascDeviceGetDefaultMemPool(&pool, 0));

  args1[0] = &ta;
  args1[1] = &tb;
  args1[2] = &reps;
  args2[0] = &tc;
  args2[1] = &td;
  args2[2] = &reps;
  /* Stream 1: two launches, the event, a host function. */
  CHECK(ascLaunchKernel(smooth1, 4, args1, s1));
  CHECK(ascLaunchKernel(smooth1, 2, args1, s1));
  CHECK(ascEventRecord(ev, s1));
  CHECK(ascLaunchHostFunc(s1, host_note, &calls));
  /* Stream 2: a launch that overlaps stream 1, a pool allocation, then a
   * launch that waits for stream 1's event. */
  CHECK(ascLaunchKernel(smooth2, 2, args2, s2));
  CHECK(ascMallocFromPoolAsync((void **)&scratch, N * sizeof(double), pool,
                               s2));
  CHECK(ascMemsetAsync(scratch, 0, N * sizeof(double), s2));
  CHECK(ascStreamWaitEvent(s2, ev, 0));
  CHECK(ascMemcpyAsync(scratch, b, N * sizeof(double), ascMemcpyDefault,
                       s2));
  CHECK(ascLaunchKernel(smooth2, 4, args2, s2));
  CHECK(ascFreeAsync(scratch, s2));
  CHECK(ascStreamSynchronize(s2));
  CHECK(ascStreamSynchronize(s1));

  /* A kernel that raises: its stream reports it at the next sync. */
  args3[0] = &ta;
  args3[1] = &limit;
  CHECK(ascLaunchKernel(check, 1, args3, s1));
  e = ascStreamSynchronize(s1);
  if (e != ascErrorKernelException) {
    fprintf(stderr, "expected a kernel exception, got %s\n",
            ascGetErrorName(e));
    return 1;
  }
  printf("check raised as expected: %s\n", ascGetLastErrorMessage());

  CHECK(ascMemcpy(a, b, N * sizeof(double), ascMemcpyDefault));
  CHECK(ascEventDestroy(ev));
  CHECK(ascStreamDestroy(s1));
  CHECK(ascStreamDestroy(s2));
  CHECK(ascFree(a));
  CHECK(ascFree(b));
  CHECK(ascFree(c));
  CHECK(ascFree(d));
  if (argc > 1)
    CHECK(ascProfilerStop());
  CHECK(ascModuleUnload(m1));
  CHECK(ascModuleUnload(m2));
  printf("host function ran %d time(s); trace written to %s\n", calls,
         argc > 1 ? argv[1] : "$ASC_TRACE (at exit)");
  return calls == 1 ? 0 : 1;
}
