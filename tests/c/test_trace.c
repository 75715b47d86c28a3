/*
 * ascProfilerStart / ascProfilerStop: argument checks, sessions, and a
 * traced run from several host threads and streams (run under TSan too).
 * The span-by-span checks of a scripted run are in
 * tests/scripts/trace_check.py (ctest trace_streams).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <uv.h>

#include "base/buf.h"
#include "runtime/extern_op.h"
#include "testutil.h"

/* The whole file; the test fails if it cannot be read. */
static char *slurp(const char *path) {
  char *s = asc__read_file(path, NULL);
  assert_non_null(s);
  return s;
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
    n++;
  return n;
}

/* Per clock: ctest runs this binary once more with
 * ASC_TRACE_CLOCK=monotonic (test_trace_monotonic), maybe at once. */
static void trace_path(char *buf, size_t cap, const char *name) {
  const char *clk = getenv("ASC_TRACE_CLOCK");
  snprintf(buf, cap, "%s/trace-%s%s%s.json", ASC_BINARY_DIR, name,
           clk != NULL ? "-" : "", clk != NULL ? clk : "");
}

static void test_bad_arguments(void **state) {
  (void)state;
  ASSERT_ERR(ascProfilerStart(NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascProfilerStart(""), ascErrorInvalidValue);
  ASSERT_ERR(ascProfilerStart("/nonexistent-dir/x/trace.json"),
             ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "cannot write"));
  ASSERT_ERR(ascProfilerStop(), ascErrorNotPermitted);
}

static void test_one_session_at_a_time(void **state) {
  char p1[512], p2[512];
  char *s;
  (void)state;
  trace_path(p1, sizeof p1, "one");
  trace_path(p2, sizeof p2, "two");
  ASSERT_OK(ascProfilerStart(p1));
  ASSERT_ERR(ascProfilerStart(p2), ascErrorNotPermitted);
  ASSERT_OK(ascProfilerStop());
  ASSERT_ERR(ascProfilerStop(), ascErrorNotPermitted);
  s = slurp(p1);
  assert_non_null(strstr(s, "\"traceEvents\":["));
  assert_int_equal(count(s, "\"cat\":\"launch\""), 0);
  asc__free(s);
}

/* Work done while no trace runs never shows up in a later one; a session
 * longer than a thread's chunk keeps every record. */
static void test_sessions_and_chunks(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "empty");
  char path[512];
  char *s;
  int n = TEST_SANITIZED ? 300 : 1500;
  (void)state;
  trace_path(path, sizeof path, "chunks");
  for (int i = 0; i < 50; i++)
    ASSERT_OK(ascLaunchKernel(k, 1, NULL, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascProfilerStart(path));
  for (int i = 0; i < n; i++)
    ASSERT_OK(ascLaunchKernel(k, 2, NULL, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascProfilerStop());
  s = slurp(path);
  assert_int_equal(count(s, "\"cat\":\"launch\""), n);
  assert_int_equal(count(s, "\"cat\":\"block\""), 2 * n);
  asc__free(s);
  /* Again: the second session holds only its own launches. */
  ASSERT_OK(ascProfilerStart(path));
  for (int i = 0; i < 7; i++)
    ASSERT_OK(ascLaunchKernel(k, 1, NULL, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascProfilerStop());
  s = slurp(path);
  assert_int_equal(count(s, "\"cat\":\"launch\""), 7);
  asc__free(s);
  ASSERT_OK(ascModuleUnload(m));
}

/* ascDeviceReset writes the file so far and tracing goes on. */
static void test_reset_checkpoint(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "empty");
  char path[512];
  char *s;
  (void)state;
  trace_path(path, sizeof path, "reset");
  ASSERT_OK(ascProfilerStart(path));
  for (int i = 0; i < 3; i++)
    ASSERT_OK(ascLaunchKernel(k, 1, NULL, NULL));
  ASSERT_OK(ascModuleUnload(m));
  ASSERT_OK(ascDeviceReset());
  s = slurp(path);
  assert_int_equal(count(s, "\"cat\":\"launch\""), 3);
  asc__free(s);
  m = test_load_kernels();
  k = test_kernel(m, "empty");
  ASSERT_OK(ascLaunchKernel(k, 1, NULL, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascProfilerStop());
  s = slurp(path);
  assert_int_equal(count(s, "\"cat\":\"launch\""), 4);
  asc__free(s);
  ASSERT_OK(ascModuleUnload(m));
}

/* A launch started in one session and finished after its stop, here
 * while the next session runs, is in neither file: launches started while
 * tracing finish through the traced completion (stream.c), which records
 * the span even after the stop, and the flush drops what began before its
 * session's start.  (Its blocks may start after that start, and are then
 * in the second file.)  The 8 empties that follow are all there. */
static void test_launch_across_sessions(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy"), ke = test_kernel(m, "empty");
  int32_t us = TEST_SANITIZED ? 400000 : 200000;
  void *args[] = {&us};
  ascStream_t st;
  char p1[512], p2[512];
  char *s;
  (void)state;
  trace_path(p1, sizeof p1, "across1");
  trace_path(p2, sizeof p2, "across2");
  ASSERT_OK(ascStreamCreateWithFlags(&st, ascStreamNonBlocking));
  ASSERT_OK(ascProfilerStart(p1));
  ASSERT_OK(ascLaunchKernel(ks, 2, args, st));
  ASSERT_OK(ascProfilerStop());
  ASSERT_OK(ascProfilerStart(p2));
  for (int i = 0; i < 8; i++)
    ASSERT_OK(ascLaunchKernel(ke, 1, NULL, st));
  ASSERT_OK(ascStreamSynchronize(st));
  ASSERT_OK(ascProfilerStop());
  s = slurp(p2);
  assert_int_equal(count(s, "\"cat\":\"launch\""), 8);
  assert_int_equal(count(s, "\"cat\":\"launch\",\"name\":\"empty\""), 8);
  assert_int_equal(count(s, "\"cat\":\"block\",\"name\":\"empty\""), 8);
  asc__free(s);
  /* And a session after both is empty of launches. */
  ASSERT_OK(ascProfilerStart(p2));
  ASSERT_OK(ascProfilerStop());
  s = slurp(p2);
  assert_int_equal(count(s, "\"cat\":\"launch\""), 0);
  asc__free(s);
  ASSERT_OK(ascStreamDestroy(st));
  ASSERT_OK(ascModuleUnload(m));
}

typedef struct host_arg {
  ascKernel_t k;
  int launches;
  atomic_int *hostfns;
  ascError_t err;
} host_arg;

static void bump(void *ud) { atomic_fetch_add((atomic_int *)ud, 1); }

static void host_thread(void *p) {
  host_arg *a = p;
  ascStream_t s1 = NULL, s2 = NULL;
  ascEvent_t ev = NULL;
  ascError_t e = ascStreamCreate(&s1);

  if (e == ascSuccess)
    e = ascStreamCreateWithFlags(&s2, ascStreamNonBlocking);
  if (e == ascSuccess)
    e = ascEventCreate(&ev);
  for (int i = 0; e == ascSuccess && i < a->launches; i++) {
    e = ascLaunchKernel(a->k, 3, NULL, s1);
    if (e == ascSuccess)
      e = ascEventRecord(ev, s1);
    if (e == ascSuccess)
      e = ascStreamWaitEvent(s2, ev, 0);
    if (e == ascSuccess)
      e = ascLaunchKernel(a->k, 2, NULL, s2);
    if (e == ascSuccess && i % 8 == 0)
      e = ascLaunchHostFunc(s2, bump, a->hostfns);
  }
  if (e == ascSuccess)
    e = ascStreamSynchronize(s2);
  if (e == ascSuccess)
    e = ascStreamSynchronize(s1);
  if (ev != NULL)
    (void)ascEventDestroy(ev);
  if (s1 != NULL)
    (void)ascStreamDestroy(s1);
  if (s2 != NULL)
    (void)ascStreamDestroy(s2);
  a->err = e;
}

/* Three host threads, each with two streams tied by events, all traced:
 * every launch, block, record, wait and host function is in the file. */
static void test_threads_and_streams(void **state) {
  ascModule_t m = test_load_kernels();
  atomic_int hostfns = 0;
  host_arg a[3];
  uv_thread_t t[3];
  char path[512];
  char *s;
  int per = TEST_SANITIZED ? 40 : 200;
  (void)state;
  trace_path(path, sizeof path, "threads");
  ASSERT_OK(ascProfilerStart(path));
  for (int i = 0; i < 3; i++) {
    a[i].k = test_kernel(m, "empty");
    a[i].launches = per;
    a[i].hostfns = &hostfns;
    a[i].err = ascErrorInternal;
    assert_int_equal(uv_thread_create(&t[i], host_thread, &a[i]), 0);
  }
  for (int i = 0; i < 3; i++) {
    assert_int_equal(uv_thread_join(&t[i]), 0);
    ASSERT_OK(a[i].err);
  }
  ASSERT_OK(ascProfilerStop());
  s = slurp(path);
  assert_int_equal(count(s, "\"cat\":\"launch\""), 3 * 2 * per);
  assert_int_equal(count(s, "\"cat\":\"block\""), 3 * 5 * per);
  assert_int_equal(count(s, "\"name\":\"event record\""), 3 * per);
  assert_int_equal(count(s, "\"name\":\"event wait\""), 3 * per);
  assert_int_equal(count(s, "\"ph\":\"s\""), count(s, "\"ph\":\"f\""));
  assert_int_equal(count(s, "\"cat\":\"hostfn\",\"name\":\"host function\","
                            "\"pid\":1"),
                   atomic_load(&hostfns));
  assert_non_null(strstr(s, "\"name\":\"worker 0\""));
  asc__free(s);
  ASSERT_OK(ascModuleUnload(m));
}

static void sleep_ms(void *ud) { uv_sleep((unsigned)(uintptr_t)ud); }

/* The value after `key` in the first event that contains `event`. */
static double event_field(const char *s, const char *event, const char *key) {
  const char *e = strstr(s, event);
  const char *v;

  assert_non_null(e);
  v = strstr(e, key);
  assert_non_null(v);
  assert_true(strchr(e, '}') == NULL || v < strchr(e, '}'));
  return strtod(v + strlen(key), NULL);
}

/* The trace clock's ticks become nanoseconds (docs/tracing.md "Clock"):
 * a host function that sleeps 30 ms spans at least that, and no more
 * than the caller's own uv_hrtime() saw around it; the file names the
 * clock it used. */
static void test_clock_in_ns(void **state) {
  ascStream_t st;
  char path[512];
  char *s;
  uint64_t t0, wall;
  double dur, ts;
  const char *clk = getenv("ASC_TRACE_CLOCK");
  (void)state;
  trace_path(path, sizeof path, "clock");
  ASSERT_OK(ascStreamCreate(&st));
  ASSERT_OK(ascProfilerStart(path));
  t0 = uv_hrtime();
  ASSERT_OK(ascLaunchHostFunc(st, sleep_ms, (void *)(uintptr_t)30));
  ASSERT_OK(ascStreamSynchronize(st));
  wall = uv_hrtime() - t0;
  ASSERT_OK(ascProfilerStop());
  ASSERT_OK(ascStreamDestroy(st));
  s = slurp(path);
  dur = event_field(s, "\"cat\":\"hostfn\",\"name\":\"host function\","
                       "\"pid\":2",
                    "\"dur\":");
  ts = event_field(s, "\"cat\":\"hostfn\",\"name\":\"host function\","
                      "\"pid\":2",
                   "\"ts\":");
  /* The rate is measured to well under 0.1 %. */
  assert_true(dur >= 30000.0 * 0.999);
  assert_true(dur <= (double)wall / 1e3 * 1.001);
  /* It started after the session did, and ended before the stop (the
   * start came less than a millisecond before t0). */
  assert_true(ts >= 0 && ts + dur <= (double)wall / 1e3 * 1.001 + 1000.0);
  if (clk != NULL && strcmp(clk, "monotonic") == 0)
    assert_non_null(strstr(s, "\"clock\":\"monotonic\""));
  else
    assert_true(strstr(s, "\"clock\":\"tsc\"") != NULL ||
                strstr(s, "\"clock\":\"monotonic\"") != NULL);
  asc__free(s);
}

/* An external op (runtime/extern_op.h) that the test completes from
 * another thread, 20 ms after it started, with err. */
typedef struct xspan {
  atomic_int started;
  asc__extern *op;
  ascError_t err;
} xspan;

static void xspan_start(void *ud, asc__extern *op, ascError_t status) {
  xspan *x = ud;
  (void)status;
  x->op = op;
  atomic_store(&x->started, 1);
}

static void xspan_complete_later(void *arg) {
  xspan *x = arg;
  struct timespec ms = {0, 1000000};
  while (!atomic_load(&x->started))
    nanosleep(&ms, NULL);
  uv_sleep(20);
  asc__extern_complete(x->op, x->err, x->err ? "peer said no" : NULL);
}

static void xspan_complete_now(void *ud, asc__extern *op, ascError_t status) {
  (void)ud;
  (void)status;
  asc__extern_complete(op, ascSuccess, NULL);
}

typedef struct span {
  double tid, ts, dur;
} span;

/* The spans whose text starts with `head` ("\"cat\":..,\"name\":..");
 * returns how many (at most cap are kept). */
static int spans(const char *s, const char *head, span *out, int cap) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, head)) != NULL; p += strlen(head)) {
    const char *end = strchr(p, '}');
    const char *tid = strstr(p, "\"tid\":"), *ts = strstr(p, "\"ts\":");
    const char *dur = strstr(p, "\"dur\":");
    assert_non_null(end);
    assert_true(tid != NULL && tid < end && ts != NULL && ts < end &&
                dur != NULL && dur < end);
    assert_non_null(strstr(p, "\"pid\":1,"));
    if (n < cap) {
      out[n].tid = strtod(tid + 6, NULL);
      out[n].ts = strtod(ts + 5, NULL);
      out[n].dur = strtod(dur + 6, NULL);
    }
    n++;
  }
  return n;
}

/* External ops are spans on their stream's track, named by the component
 * (asc__stream_enqueue_extern_named) with its bytes, from reaching the
 * head of the stream to their completion on another thread, between the
 * launches before and after them; one that completes with an error
 * carries it; one that ran before the session is not there. */
static void test_extern_spans(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy"), ke = test_kernel(m, "empty");
  int32_t us = 2000;
  void *args[] = {&us};
  ascStream_t st, other;
  xspan x = {0}, xe = {0};
  uv_thread_t th, th2;
  span sleepy[2], ext[2], empty[4], err[2];
  const char *e;
  char path[512];
  char *s;
  int ne, mine = -1;
  (void)state;
  trace_path(path, sizeof path, "extern");
  ASSERT_OK(ascStreamCreateWithFlags(&st, ascStreamNonBlocking));
  ASSERT_OK(ascStreamCreateWithFlags(&other, ascStreamNonBlocking));
  /* Untraced: not in the file, and nothing is recorded for it. */
  ASSERT_OK(asc__stream_enqueue_extern_named(st, xspan_complete_now, NULL,
                                             "before", 8));
  ASSERT_OK(ascStreamSynchronize(st));

  ASSERT_OK(ascProfilerStart(path));
  ASSERT_OK(ascLaunchKernel(ke, 1, NULL, other));
  ASSERT_OK(ascLaunchKernel(ks, 1, args, st));
  ASSERT_OK(asc__stream_enqueue_extern_named(st, xspan_start, &x,
                                             "allreduce", 4096));
  ASSERT_OK(ascLaunchKernel(ke, 1, NULL, st));
  xe.err = ascErrorInvalidValue;
  ASSERT_OK(asc__stream_enqueue_extern(st, xspan_start, &xe));
  assert_int_equal(uv_thread_create(&th, xspan_complete_later, &x), 0);
  assert_int_equal(uv_thread_create(&th2, xspan_complete_later, &xe), 0);
  ASSERT_ERR(ascStreamSynchronize(st), ascErrorInvalidValue);
  ASSERT_OK(ascStreamSynchronize(other));
  assert_int_equal(uv_thread_join(&th), 0);
  assert_int_equal(uv_thread_join(&th2), 0);
  ASSERT_OK(ascProfilerStop());

  s = slurp(path);
  assert_null(strstr(s, "\"name\":\"before\""));
  assert_int_equal(spans(s, "\"cat\":\"launch\",\"name\":\"sleepy\"", sleepy,
                         2), 1);
  assert_int_equal(spans(s, "\"cat\":\"extern\",\"name\":\"allreduce\"", ext,
                         2), 1);
  assert_int_equal(spans(s, "\"cat\":\"extern\",\"name\":\"external op\"",
                         err, 2), 1);
  ne = spans(s, "\"cat\":\"launch\",\"name\":\"empty\"", empty, 4);
  assert_int_equal(ne, 2);
  /* On the sleepy launch's track; the empty launch of the other stream
   * is on another one. */
  assert_true(ext[0].tid == sleepy[0].tid && err[0].tid == sleepy[0].tid);
  for (int i = 0; i < ne; i++)
    if (empty[i].tid == sleepy[0].tid)
      mine = i;
  assert_true(mine >= 0);
  assert_true(empty[1 - mine].tid != sleepy[0].tid);
  /* In stream order, each after the previous one ended (1 ns for the
   * printed decimals), and the op lasted its 20 ms. */
  assert_true(sleepy[0].ts >= 0);
  assert_true(sleepy[0].ts + sleepy[0].dur <= ext[0].ts + 0.001);
  assert_true(ext[0].dur >= 20000.0 * 0.999);
  assert_true(ext[0].ts + ext[0].dur <= empty[mine].ts + 0.001);
  assert_true(empty[mine].ts + empty[mine].dur <= err[0].ts + 0.001);
  assert_true(err[0].dur >= 20000.0 * 0.999);
  /* Its args: the bytes, the time it queued; the error of the other. */
  e = strstr(s, "\"cat\":\"extern\",\"name\":\"allreduce\"");
  assert_non_null(strstr(e, "\"args\":{\"bytes\":4096,\"queued_us\":"));
  assert_true(strstr(e, "\"args\":{\"bytes\":4096,\"queued_us\":") <
              strchr(e, '}'));
  e = strstr(s, "\"cat\":\"extern\",\"name\":\"external op\"");
  assert_non_null(strstr(e, "\"error\":\"peer said no\"}}"));
  assert_true(strstr(e, "\"error\":\"peer said no\"}}") < strchr(e, '}'));
  asc__free(s);
  ASSERT_OK(ascStreamDestroy(other));
  ASSERT_OK(ascStreamDestroy(st));
  ASSERT_OK(ascModuleUnload(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_one_session_at_a_time),
      cmocka_unit_test(test_sessions_and_chunks),
      cmocka_unit_test(test_reset_checkpoint),
      cmocka_unit_test(test_launch_across_sessions),
      cmocka_unit_test(test_threads_and_streams),
      cmocka_unit_test(test_clock_in_ns),
      cmocka_unit_test(test_extern_spans),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
