/*
 * ascProfilerStart / ascProfilerStop: argument checks, sessions, and a
 * traced run from several host threads and streams (run under TSan too).
 * The span-by-span checks of a scripted run are in
 * tests/scripts/trace_check.py (ctest trace_streams).
 */
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "base/buf.h"
#include "jit/cc.h"
#include "runtime/extern_op.h"
#include "subproc.h"
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

/* A session of n one-block launches of k: the file it wrote. */
static char *traced_launches(const char *path, ascKernel_t k, long n) {
  ASSERT_OK(ascProfilerStart(path));
  for (long i = 0; i < n; i++)
    ASSERT_OK(ascLaunchKernel(k, 1, NULL, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascProfilerStop());
  return slurp(path);
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
  s = traced_launches(path, k, 7);
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

/* ------------------------------------------------------- the trace file */

/* A fresh directory under the build tree. */
static void new_dir(char *buf, size_t cap, const char *name) {
  const char *clk = getenv("ASC_TRACE_CLOCK");
  snprintf(buf, cap, "%s/test-trace-%s%s-XXXXXX", ASC_BINARY_DIR, name,
           clk != NULL ? "-mono" : "");
  assert_non_null(mkdtemp(buf));
}

/* The names in dir, "." and ".." aside. */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  assert_non_null(d);
  while ((e = readdir(d)) != NULL)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

static void rm_rf(const char *dir) {
  char *argv[] = {(char *)"rm", (char *)"-rf", (char *)dir, NULL};
  asc__buf out;
  int st;
  asc__buf_init(&out);
  asc__run_process(argv, 20000, &out, &st);
  asc__buf_free(&out);
}

/* The file is created 0600 (a trace tells what ran, with kernel names and
 * signatures), whatever the umask; an existing file of this user keeps
 * its mode; while the session runs nothing new is visible in the
 * directory, and after it only the file. */
static void test_file_mode(void **state) {
  char dir[512], path[600];
  struct stat st;
  mode_t old = umask(022);
  int during;
  (void)state;
  new_dir(dir, sizeof dir, "mode");
  snprintf(path, sizeof path, "%s/t.json", dir);
  ASSERT_OK(ascProfilerStart(path));
  during = entries(dir);
  ASSERT_OK(ascProfilerStop());
  assert_int_equal(during, 0);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0600);
  assert_int_equal(entries(dir), 1);
  assert_int_equal(chmod(path, 0644), 0);
  ASSERT_OK(ascProfilerStart(path));
  ASSERT_OK(ascProfilerStop());
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0644);
  umask(old);
  /* A directory where the file should be is refused at the start. */
  ASSERT_ERR(ascProfilerStart(dir), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "directory"));
  rm_rf(dir);
}

/* Runs argv as uid/gid 65534 through setpriv (root only).  false, with
 * the reason printed, when this process cannot act as another user. */
static bool as_other_user(const char *const *cmd) {
  char *argv[16] = {(char *)"setpriv", (char *)"--reuid=65534",
                    (char *)"--regid=65534", (char *)"--clear-groups"};
  asc__buf out;
  int st = -1, n = 4;
  if (geteuid() != 0) {
    printf("    (skipped: needs root to act as a second user)\n");
    return false;
  }
  while (*cmd != NULL && n < 15)
    argv[n++] = (char *)*cmd++;
  argv[n] = NULL;
  asc__buf_init(&out);
  ASSERT_OK(asc__run_process(argv, 20000, &out, &st));
  if (st != 0)
    fail_msg("%s as uid 65534: status %d: %s", argv[4], st,
             asc__buf_str(&out));
  asc__buf_free(&out);
  return true;
}

/* Another user's symbolic link at the trace path, in a sticky directory
 * such as /tmp, must not make this process (root here) overwrite the
 * file it points to: not when it is there at the start, nor when it
 * appears while the session runs. */
static void test_other_users_link(void **state) {
  char dir[512], sticky[600], victim[600], link[700], late[700];
  char *s;
  ascError_t e;
  (void)state;
  new_dir(dir, sizeof dir, "link");
  assert_int_equal(chmod(dir, 0755), 0);
  snprintf(sticky, sizeof sticky, "%s/tmp", dir);
  snprintf(victim, sizeof victim, "%s/victim", dir);
  snprintf(link, sizeof link, "%s/trace.json", sticky);
  snprintf(late, sizeof late, "%s/late.json", sticky);
  assert_int_equal(mkdir(sticky, 0700), 0);
  assert_int_equal(chmod(sticky, 01777), 0);
  {
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("victim", f);
    fclose(f);
  }
  {
    const char *ln[] = {"ln", "-s", victim, link, NULL};
    if (!as_other_user(ln)) {
      rm_rf(dir);
      return;
    }
  }
  e = ascProfilerStart(link);
  if (e == ascSuccess)
    (void)ascProfilerStop();   /* no later test inherits the session */
  s = slurp(victim);
  assert_string_equal(s, "victim");
  asc__free(s);
  assert_int_equal(e, ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "symbolic link"));
  ASSERT_OK(ascProfilerStart(late));
  {
    const char *ln[] = {"ln", "-s", victim, late, NULL};
    assert_true(as_other_user(ln));
  }
  e = ascProfilerStop();
  s = slurp(victim);
  assert_string_equal(s, "victim");
  asc__free(s);
  assert_int_equal(e, ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "symbolic link"));
  rm_rf(dir);
}

/* A FIFO at $ASC_TRACE's path, or at ascProfilerStart's, is refused
 * without opening it (opening it for writing waits for a reader: the
 * program would hang at start-up).  The child's alarm is the hang guard. */
static void test_fifo_refused(void **state) {
  char dir[512], fifo[600], env[700], env2[700], out[SUBPROC_OUT_MAX];
  const char *set[] = {env, env2, NULL};
  (void)state;
  new_dir(dir, sizeof dir, "fifo");
  snprintf(fifo, sizeof fifo, "%s/trace.json", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  snprintf(env, sizeof env, "ASC_TRACE=%s", fifo);
  snprintf(env2, sizeof env2, "TEST_TRACE_FILE=%s", fifo);
  assert_int_equal(subproc_run("fifo", set, out, sizeof out), 0);
  assert_non_null(strstr(out, "libasc: ASC_TRACE: ascProfilerStart: cannot "
                              "write"));
  assert_non_null(strstr(out, "not a regular file"));
  assert_non_null(strstr(out, "start=ascErrorInvalidValue\n"));
  rm_rf(dir);
}

/* A trace that cannot be written at exit (here a directory took its
 * place) is told on stderr; the exit status stays the program's. */
static void test_unwritable_at_exit(void **state) {
  char dir[512], path[600], env[700], out[SUBPROC_OUT_MAX];
  const char *set[] = {env, NULL};
  (void)state;
  new_dir(dir, sizeof dir, "exit");
  snprintf(path, sizeof path, "%s/trace.json", dir);
  snprintf(env, sizeof env, "ASC_TRACE=%s", path);
  assert_int_equal(subproc_run("exit_unwritable", set, out, sizeof out), 0);
  assert_non_null(strstr(out, "launched\n"));
  assert_non_null(strstr(out, "libasc: trace at exit: cannot write trace "
                              "file"));
  assert_non_null(strstr(out, "it is a directory"));
  rm_rf(dir);
}

/* Records waiting to be written are bounded by ASC_TRACE_MAX_BYTES: past
 * it they are dropped, counted, and the count is in the file.  Every
 * record is either in the file or counted. */
static void test_records_bounded(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t k = test_kernel(m, "empty");
  ascDeviceProp p;
  char dir[512], path[600];
  char *s, *ev;
  long slots, n, kept;
  unsigned long long nd;
  (void)state;
  ASSERT_OK(ascGetDeviceProperties(&p, 0));
  /* 64K is less than one chunk of 512 records, so one chunk may be
   * taken; each thread (workers, this one, the callback thread) may also
   * still have room in the chunk it had.  Twice as many records as all
   * that could hold are made. */
  slots = (long)(p.cores + 4) * 512;
  n = slots;
  new_dir(dir, sizeof dir, "bounded");
  snprintf(path, sizeof path, "%s/t.json", dir);
  setenv("ASC_TRACE_MAX_BYTES", "64K", 1);
  s = traced_launches(path, k, n);
  unsetenv("ASC_TRACE_MAX_BYTES");
  kept = count(s, "\"cat\":\"launch\"") + count(s, "\"cat\":\"block\"");
  ev = strstr(s, "\"name\":\"records dropped\"");
  assert_non_null(ev);
  ev = strstr(ev, "\"dropped\":");
  assert_non_null(ev);
  nd = strtoull(ev + 10, NULL, 10);
  assert_int_equal(nd + (unsigned long long)kept, 2ull * (unsigned long)n);
  assert_in_range(kept, 0, slots);
  assert_non_null(strstr(s, "\"ASC_TRACE_MAX_BYTES\":65536"));
  asc__free(s);
  /* The default limit holds all of a short session, and nothing is
   * dropped once a flush has made room. */
  s = traced_launches(path, k, 7);
  assert_int_equal(count(s, "\"cat\":\"launch\""), 7);
  assert_null(strstr(s, "records dropped"));
  asc__free(s);
  ASSERT_OK(ascModuleUnload(m));
  rm_rf(dir);
}

/* The children of the tests above: stderr joins the captured stdout. */
static int child(const char *mode) {
  dup2(STDOUT_FILENO, STDERR_FILENO);
  alarm(60);
  if (strcmp(mode, "fifo") == 0) {
    int n;
    ascError_t e = ascGetDeviceCount(&n);   /* reads $ASC_TRACE */
    printf("init=%s\n", ascGetErrorName(e));
    e = ascProfilerStart(getenv("TEST_TRACE_FILE"));
    printf("start=%s\n", ascGetErrorName(e));
    fflush(stdout);
    return 0;
  }
  if (strcmp(mode, "exit_unwritable") == 0) {
    ascModule_t m;
    ascKernel_t k;
    if (ascModuleLoad(&m, TEST_MODULE("testkernels")) != ascSuccess ||
        ascModuleGetKernel(&k, m, "empty") != ascSuccess ||
        ascLaunchKernel(k, 1, NULL, NULL) != ascSuccess ||
        ascDeviceSynchronize() != ascSuccess)
      return 3;
    printf("launched\n");
    fflush(stdout);
    (void)unlink(getenv("ASC_TRACE"));
    return mkdir(getenv("ASC_TRACE"), 0700) == 0 ? 0 : 4;
  }
  return 2;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_one_session_at_a_time),
      cmocka_unit_test(test_sessions_and_chunks),
      cmocka_unit_test(test_reset_checkpoint),
      cmocka_unit_test(test_launch_across_sessions),
      cmocka_unit_test(test_threads_and_streams),
      cmocka_unit_test(test_clock_in_ns),
      cmocka_unit_test(test_extern_spans),
      cmocka_unit_test(test_file_mode),
      cmocka_unit_test(test_other_users_link),
      cmocka_unit_test(test_fifo_refused),
      cmocka_unit_test(test_unwritable_at_exit),
      cmocka_unit_test(test_records_bounded),
  };
  if (argc == 3 && strcmp(argv[1], "--child") == 0)
    return child(argv[2]);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
