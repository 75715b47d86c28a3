/*
 * A launch its caller waits for, run on the caller (docs/streams.md, "A
 * launch the caller waits for"): ascLaunchKernelAndSynchronize, and
 * ascLaunchKernelSync joining, run a one-block launch on an idle stream
 * on the calling thread, never through the pool's ready lists (the
 * pool's count of pushed jobs shows it).  Not for many blocks, a busy
 * stream, a default stream that must wait for a blocking stream, or a
 * hand-off.  Errors, cancellation, timeouts, ascDeviceReset (also one
 * that closed the API gate before the launch was queued), tracing and
 * fork() treat such a launch as any running launch.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include "base/buf.h"
#include "testutil.h"
#include "runtime/stream.h"
#include "subproc.h"

static int64_t self_tid(void) { return (int64_t)syscall(SYS_gettid); }

static int teardown(void **state) {
  (void)state;
  (void)ascDeviceReset();
  return 0;
}

/* Jobs pushed on the pool's ready lists so far (the pool is started). */
static unsigned pushes(void) {
  asc__device *dev;
  asc__sched *s;
  asc__sched_counts c;
  ASSERT_OK(asc__current_device(&dev));
  ASSERT_OK(asc__sched_get(dev, &s));
  asc__sched_get_counts(s, &c);
  return c.pushes;
}

/* One block on an idle stream runs on the caller, every time, and never
 * reaches the ready lists: through ascLaunchKernelSync, and through
 * ascLaunchKernelAndSynchronize on a created and on the default stream.
 * A kernel that never reads its block index runs once (NOT_SPMD) with
 * the whole pool as its team, whatever blockDim says. */
static void test_one_block_runs_on_caller(void **state) {
  ascModule_t plug, tk;
  ascKernel_t tids, once;
  int64_t out[4], me = self_tid();
  ascTensor t = test_tensor1(out, ascInt64, 4);
  void *args[] = {&t};
  ascStream_t s;
  unsigned before;
  int rounds = TEST_SCALE(100);
  (void)state;

  ASSERT_OK(ascModuleLoad(&plug, TEST_MODULE("plugkernels")));
  tk = test_load_kernels();
  tids = test_kernel(plug, "tids");
  once = test_kernel(tk, "once");
  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  ASSERT_OK(ascLaunchKernelSync(tids, 1, args, ascLaunchJoin));
  before = pushes();
  for (int i = 0; i < rounds; i++) {
    out[0] = 0;
    ASSERT_OK(ascLaunchKernelSync(tids, 1, args, ascLaunchJoin));
    assert_int_equal(out[0], me);
    out[0] = 0;
    ASSERT_OK(ascLaunchKernelAndSynchronize(tids, 1, args, s));
    assert_int_equal(out[0], me);
    out[0] = 0;
    ASSERT_OK(ascLaunchKernelAndSynchronize(tids, 1, args, NULL));
    assert_int_equal(out[0], me);
  }
  memset(out, 0, sizeof out);
  for (int i = 0; i < rounds; i++)
    ASSERT_OK(ascLaunchKernelSync(once, 8, args, ascLaunchJoin));
  assert_int_equal(out[0], rounds);   /* once per launch, not 8 times */
  assert_int_equal(out[1], 0);
  assert_int_equal(out[2], 1);
  {
    asc__device *dev;
    ASSERT_OK(asc__current_device(&dev));
    assert_int_equal(out[3], asc__sched_nworkers(asc__sched_peek(dev)));
  }
  assert_int_equal(pushes(), before);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(tk));
  ASSERT_OK(ascModuleUnload(plug));
}

typedef struct appender {
  ascKernel_t append;
  void **args;
  ascStream_t stream;
  ascError_t err;
} appender;

static void append_thread(void *p) {
  appender *a = p;
  a->err = ascLaunchKernelAndSynchronize(a->append, 1, a->args, a->stream);
}

/* The launch waits behind work of its own stream, and on the default
 * stream behind a blocking stream's work (legacy semantics): queued, not
 * run at once, and the call returns once both have run. */
static void behind_gate(ascStream_t gated, ascStream_t target) {
  ascModule_t tk = test_load_kernels();
  int32_t flag[1] = {0}, log[4] = {0, 0, 0, 0}, v = 7;
  ascTensor tf = test_tensor1(flag, ascInt32, 1);
  ascTensor tl = test_tensor1(log, ascInt32, 4);
  void *gargs[] = {&tf}, *aargs[] = {&tl, &v};
  appender a = {test_kernel(tk, "append"), aargs, target, ascErrorNotReady};
  uv_thread_t th;
  unsigned before = pushes();

  ASSERT_OK(ascLaunchKernel(test_kernel(tk, "gate"), 1, gargs, gated));
  assert_int_equal(uv_thread_create(&th, append_thread, &a), 0);
  uv_sleep(50);
  assert_int_equal(__atomic_load_n(&log[0], __ATOMIC_ACQUIRE), 0);
  __atomic_store_n(&flag[0], 1, __ATOMIC_RELEASE);
  assert_int_equal(uv_thread_join(&th), 0);
  ASSERT_OK(a.err);
  assert_int_equal(log[0], 1);
  assert_int_equal(log[1], 7);
  assert_true(pushes() != before);
  ASSERT_OK(ascDeviceSynchronize());
  ASSERT_OK(ascModuleUnload(tk));
}

static void test_busy_stream_queues(void **state) {
  ascStream_t s, b;
  (void)state;
  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  behind_gate(s, s);
  ASSERT_OK(ascStreamCreate(&b));
  behind_gate(b, NULL);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascStreamDestroy(b));
}

/* Many blocks, and a hand-off, go through the pool. */
static void test_many_blocks_and_hand_off_use_the_pool(void **state) {
  ascModule_t plug;
  ascKernel_t tids;
  enum { N = 16 };
  int64_t out[N];
  ascTensor t = test_tensor1(out, ascInt64, N);
  void *args[] = {&t};
  unsigned before;
  (void)state;

  ASSERT_OK(ascModuleLoad(&plug, TEST_MODULE("plugkernels")));
  tids = test_kernel(plug, "tids");
  ASSERT_OK(ascLaunchKernelSync(tids, 1, args, ascLaunchJoin));
  before = pushes();
  memset(out, 0, sizeof out);
  ASSERT_OK(ascLaunchKernelSync(tids, N, args, ascLaunchJoin));
  for (int i = 0; i < N; i++)
    assert_true(out[i] != 0);
  assert_true(pushes() != before);
  before = pushes();
  ASSERT_OK(ascLaunchKernelSync(tids, 1, args, ascLaunchHandOff));
  assert_true(out[0] != self_tid());
  assert_true(pushes() != before);
  ASSERT_OK(ascModuleUnload(plug));
}

/* A kernel's exception is the call's error, with its message; the
 * stream is usable after it.  A launch refused for its arguments leaves
 * the stream idle. */
static void test_errors(void **state) {
  ascModule_t tk = test_load_kernels();
  ascKernel_t raise_at = test_kernel(tk, "raise_at");
  int32_t x[32];
  int64_t at = 5, never = 1000;
  ascTensor t = test_tensor1(x, ascInt32, 32);
  void *bad[] = {&t, &at}, *good[] = {&t, &never};
  ascStream_t s;
  (void)state;

  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  ASSERT_ERR(ascLaunchKernelAndSynchronize(raise_at, 1, bad, s),
             ascErrorKernelException);
  assert_non_null(strstr(ascGetLastErrorMessage(), "bad value at 5"));
  ASSERT_OK(ascStreamQuery(s));
  ASSERT_OK(ascLaunchKernelAndSynchronize(raise_at, 1, good, s));
  for (int i = 0; i < 32; i++)
    assert_int_equal(x[i], 1);
  ASSERT_ERR(ascLaunchKernelAndSynchronize(raise_at, 1, NULL, s),
             ascErrorInvalidValue);
  ASSERT_ERR(ascLaunchKernelAndSynchronize(raise_at, 0, good, s),
             ascErrorInvalidValue);
  ASSERT_ERR(ascLaunchKernelAndSynchronize(NULL, 1, good, s),
             ascErrorInvalidHandle);
  ASSERT_OK(ascStreamQuery(s));
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascLaunchKernelAndSynchronize(raise_at, 1, good, s),
             ascErrorInvalidHandle);
  ASSERT_OK(ascModuleUnload(tk));
}

typedef struct spinner {
  ascKernel_t spin;
  ascStream_t stream;   /* ascLaunchKernelSync when `sync` */
  int sync;
  int64_t flag[1];
  ascError_t err;
  char msg[256];
} spinner;

static void spin_thread(void *p) {
  spinner *sp = p;
  ascTensor t = test_tensor1(sp->flag, ascInt64, 1);
  void *args[] = {&t};
  sp->err = sp->sync ? ascLaunchKernelSync(sp->spin, 1, args, ascLaunchJoin)
                     : ascLaunchKernelAndSynchronize(sp->spin, 1, args,
                                                     sp->stream);
  snprintf(sp->msg, sizeof sp->msg, "%s", ascGetLastErrorMessage());
}

/* The stream works after a stop: set_flag runs on it. */
static void expect_usable(ascKernel_t set_flag, ascStream_t s) {
  int32_t flag[1] = {0};
  ascTensor t = test_tensor1(flag, ascInt32, 1);
  void *args[] = {&t};
  if (s != NULL)
    ASSERT_OK(ascLaunchKernelAndSynchronize(set_flag, 1, args, s));
  else
    ASSERT_OK(ascLaunchKernelSync(set_flag, 1, args, ascLaunchJoin));
  assert_int_equal(flag[0], 1);
}

/* An endless kernel that its caller runs is stopped by ascStreamCancel
 * and by the stream's kernel timeout, as one a worker runs; the stream
 * then works again. */
static void test_cancel_and_timeout(void **state) {
  ascModule_t plug;
  spinner sp;
  uv_thread_t th;
  ascStream_t s;
  ascKernel_t set_flag;
  unsigned before;
  (void)state;

  ASSERT_OK(ascModuleLoad(&plug, TEST_MODULE("plugkernels")));
  set_flag = test_kernel(plug, "set_flag");
  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  expect_usable(set_flag, s);
  memset(&sp, 0, sizeof sp);
  sp.spin = test_kernel(plug, "spin");
  sp.stream = s;
  before = pushes();
  assert_int_equal(uv_thread_create(&th, spin_thread, &sp), 0);
  test_wait_count(sp.flag, 1, -1);
  ASSERT_OK(ascStreamCancel(s));
  assert_int_equal(uv_thread_join(&th), 0);
  assert_int_equal(sp.err, ascErrorCancelled);
  assert_non_null(strstr(sp.msg, "ascStreamCancel"));
  assert_int_equal(pushes(), before);
  expect_usable(set_flag, s);

  ASSERT_OK(ascStreamSetKernelTimeout(s, 100));
  sp.flag[0] = 0;
  spin_thread(&sp);
  assert_int_equal(sp.err, ascErrorLaunchTimeout);
  assert_int_equal(sp.flag[0], 1);
  assert_non_null(strstr(sp.msg, "timeout"));
  expect_usable(set_flag, s);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(plug));
}

/* ascDeviceReset stops an endless kernel that a thread runs in its
 * ascLaunchKernelSync; the thread's next call makes a new stream. */
static void test_reset_stops_caller(void **state) {
  ascModule_t plug;
  spinner sp;
  uv_thread_t th;
  (void)state;

  ASSERT_OK(ascModuleLoad(&plug, TEST_MODULE("plugkernels")));
  memset(&sp, 0, sizeof sp);
  sp.spin = test_kernel(plug, "spin");
  sp.sync = 1;
  assert_int_equal(uv_thread_create(&th, spin_thread, &sp), 0);
  test_wait_count(sp.flag, 1, -1);
  ASSERT_OK(ascDeviceReset());
  assert_int_equal(uv_thread_join(&th), 0);
  assert_int_equal(sp.err, ascErrorCancelled);
  assert_non_null(strstr(sp.msg, "ascDeviceReset"));
  ASSERT_OK(ascModuleLoad(&plug, TEST_MODULE("plugkernels")));
  expect_usable(test_kernel(plug, "set_flag"), NULL);
  ASSERT_OK(ascModuleUnload(plug));
}

/* A reset closes the API gate, stops every stream, and waits for the
 * calls inside the gate to leave.  A call that was inside all along and
 * queues its launch only now (after compiling it, say) must not run it:
 * the reset would wait for all of it.  Here the test is that call: it
 * enters the gate, closes it as a reset does, and queues `held` (which
 * would wait 20 s for a release) to run here; its block is stopped
 * before it starts. */
static void test_gate_closed_stops_launch(void **state) {
  ascModule_t plug;
  const asc_module_desc *md;
  const asc_kernel_desc *held = NULL;
  void *so;
  asc__stream *st;
  asc__rt *rt;
  int64_t hs[2] = {0, 1};
  ascTensor t = test_tensor1(hs, ascInt64, 2);
  size_t size = sizeof t;
  const void *src = &t;
  bool ran = false;
  ascStream_t s;
  ascError_t err;
  int64_t started;
  char msg[256];
  (void)state;

  /* the pool and the device's runtime exist; the descriptor is the
   * module's own */
  ASSERT_OK(ascModuleLoad(&plug, TEST_MODULE("plugkernels")));
  ASSERT_OK(ascStreamCreateWithFlags(&s, ascStreamNonBlocking));
  ASSERT_OK(ascLaunchKernelAndSynchronize(test_kernel(plug, "held"), 1,
                                          (void *[]){&t}, s));
  hs[0] = hs[1] = 0;
  so = dlopen(TEST_MODULE("plugkernels"), RTLD_NOW | RTLD_LOCAL);
  assert_non_null(so);
  md = dlsym(so, "asc_module_v1");
  assert_non_null(md);
  for (uint32_t i = 0; i < md->nkernels; i++)
    if (strcmp(md->kernels[i].name, "held") == 0)
      held = &md->kernels[i];
  assert_non_null(held);

  ASSERT_OK(asc__stream_resolve(s, &st));
  rt = st->rt;
  ASSERT_OK(asc__api_enter(rt));
  atomic_fetch_or(&rt->api_gate, 1);
  err = asc__stream_launch(st, held, 1, 1, 1, &size, &src, NULL, NULL, &ran);
  started = hs[0];
  if (err == ascSuccess)
    err = asc__stream_synchronize(st);
  snprintf(msg, sizeof msg, "%s", ascGetLastErrorMessage());
  /* open again before any assertion, for the tests that follow */
  atomic_fetch_and(&rt->api_gate, ~(uint64_t)1);
  asc__api_leave(rt);
  assert_true(ran);
  assert_int_equal(started, 0);
  assert_int_equal(err, ascErrorCancelled);
  assert_non_null(strstr(msg, "ascDeviceReset"));

  hs[1] = 1;
  ASSERT_OK(ascLaunchKernelAndSynchronize(test_kernel(plug, "held"), 1,
                                          (void *[]){&t}, s));
  assert_int_equal(hs[0], 1);
  dlclose(so);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(plug));
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
    n++;
  return n;
}

/* While tracing, each launch its caller runs records its launch and its
 * block. */
static void test_traced(void **state) {
  ascModule_t tk = test_load_kernels();
  ascKernel_t empty = test_kernel(tk, "empty");
  char path[512];
  char *text;
  (void)state;

  snprintf(path, sizeof path, "%s/trace-launch-here-%d.json", ASC_BINARY_DIR,
           (int)getpid());
  ASSERT_OK(ascLaunchKernelSync(empty, 1, NULL, ascLaunchJoin));
  ASSERT_OK(ascProfilerStart(path));
  for (int i = 0; i < 5; i++) {
    ASSERT_OK(ascLaunchKernelSync(empty, 1, NULL, ascLaunchJoin));
    ASSERT_OK(ascLaunchKernelAndSynchronize(empty, 1, NULL, NULL));
  }
  ASSERT_OK(ascProfilerStop());
  text = asc__read_file(path, NULL);
  assert_non_null(text);
  assert_int_equal(count(text, "\"cat\":\"launch\""), 10);
  assert_int_equal(count(text, "\"cat\":\"block\""), 10);
  asc__free(text);
  remove(path);
  ASSERT_OK(ascModuleUnload(tk));
}

typedef struct holder {
  ascKernel_t hold;
  int64_t *state;
  ascError_t err;
} holder;

static void hold_thread(void *p) {
  holder *h = p;
  ascTensor t = test_tensor1(h->state, ascInt64, 2);
  void *args[] = {&t};
  h->err = ascLaunchKernelSync(h->hold, 1, args, ascLaunchJoin);
}

/* fork() while a thread runs its launch itself (run in a child process
 * of the test, which forks: see test_fork_while_caller_runs). */
static int child_fork(void) {
  ascModule_t tk = NULL, plug = NULL;
  static int64_t state[2], out[4];
  holder h = {NULL, state, ascErrorNotReady};
  uv_thread_t th;
  pid_t pid;

  if (ascModuleLoad(&tk, TEST_MODULE("testkernels")) != ascSuccess ||
      ascModuleLoad(&plug, TEST_MODULE("plugkernels")) != ascSuccess ||
      ascModuleGetKernel(&h.hold, plug, "held") != ascSuccess ||
      uv_thread_create(&th, hold_thread, &h) != 0)
    return 2;
  /* held counts itself in state[0] when it starts */
  while (__atomic_load_n(&state[0], __ATOMIC_ACQUIRE) == 0)
    uv_sleep(1);
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    /* The holding thread does not exist here: its stream reports the
     * stopped launch once; launches of this thread work. */
    ascTensor t = test_tensor1(out, ascInt64, 4);
    void *args[] = {&t};
    ascKernel_t once = NULL;
    printf("c_get=%s\n",
           ascGetErrorName(ascModuleGetKernel(&once, tk, "once")));
    printf("c_sync=%s\n",
           ascGetErrorName(ascLaunchKernelSync(once, 4, args, 0)));
    printf("c_and_sync=%s\n", ascGetErrorName(
                                  ascLaunchKernelAndSynchronize(once, 1, args,
                                                                NULL)));
    printf("c_runs=%lld\n", (long long)out[0]);
    printf("c_device_sync=%s\n", ascGetErrorName(ascDeviceSynchronize()));
    printf("c_device_resync=%s\n", ascGetErrorName(ascDeviceSynchronize()));
    fflush(stdout);
    _exit(0);
  }
  if (pid < 0)
    return 3;
  subproc_wait_forked(pid);
  __atomic_store_n(&state[1], 1, __ATOMIC_RELEASE);
  uv_thread_join(&th);
  printf("parent_hold=%s\n", ascGetErrorName(h.err));
  printf("parent_unload=%s\n", ascGetErrorName(ascModuleUnload(tk)));
  (void)ascModuleUnload(plug);
  return 0;
}

/* In a child: whether a one-block launch of the main thread runs on it,
 * with RLIMIT_STACK lowered to `limit` bytes first (0: as it is). */
static int child_main_stack(rlim_t limit) {
  ascModule_t plug = NULL;
  ascKernel_t tids = NULL;
  int64_t out[4] = {0};
  ascTensor t = test_tensor1(out, ascInt64, 4);
  void *args[] = {&t};
  struct rlimit rl;

  if (limit != 0 && (getrlimit(RLIMIT_STACK, &rl) != 0 ||
                     (rl.rlim_cur = limit, setrlimit(RLIMIT_STACK, &rl)) != 0))
    return 2;
  if (ascModuleLoad(&plug, TEST_MODULE("plugkernels")) != ascSuccess ||
      ascModuleGetKernel(&tids, plug, "tids") != ascSuccess)
    return 2;
  printf("launch=%s\n", ascGetErrorName(ascLaunchKernelAndSynchronize(
                             tids, 1, args, NULL)));
  printf("here=%d\n", out[0] == self_tid());
  return 0;
}

/* The main thread runs a launch it waits for as any thread does when its
 * stack has room for a kernel's (7 MiB of the 8 a worker has), and leaves
 * it to the workers when RLIMIT_STACK allows less. */
static void test_main_thread_stack_room(void **state) {
  static const char *const modes[] = {"mainstack", "smallstack"};
  char out[SUBPROC_OUT_MAX], buf[64];
  (void)state;
  for (int i = 0; i < 2; i++) {
    assert_int_equal(subproc_run(modes[i], NULL, out, sizeof out), 0);
    assert_string_equal(subproc_get(out, "launch", buf, sizeof buf),
                        "ascSuccess");
    assert_int_equal(subproc_get_ll(out, "here"), i == 0);
  }
}

/* The child of a fork() made while a thread ran its own launch gets a
 * working runtime; the parent's launch finishes. */
static void test_fork_while_caller_runs(void **state) {
  char out[SUBPROC_OUT_MAX], buf[64];
  (void)state;
  assert_int_equal(subproc_run_forking("fork", out, sizeof out), 0);
  print_message("%s", out);
  assert_string_equal(subproc_get(out, "child", buf, sizeof buf), "0");
  assert_string_equal(subproc_get(out, "c_get", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "c_sync", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "c_and_sync", buf, sizeof buf),
                      "ascSuccess");
  assert_int_equal(subproc_get_ll(out, "c_runs"), 2);
  assert_string_equal(subproc_get(out, "c_device_sync", buf, sizeof buf),
                      "ascErrorCancelled");
  assert_string_equal(subproc_get(out, "c_device_resync", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "parent_hold", buf, sizeof buf),
                      "ascSuccess");
  assert_string_equal(subproc_get(out, "parent_unload", buf, sizeof buf),
                      "ascSuccess");
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_one_block_runs_on_caller, teardown),
      cmocka_unit_test_teardown(test_busy_stream_queues, teardown),
      cmocka_unit_test_teardown(test_many_blocks_and_hand_off_use_the_pool,
                                teardown),
      cmocka_unit_test_teardown(test_errors, teardown),
      cmocka_unit_test_teardown(test_cancel_and_timeout, teardown),
      cmocka_unit_test_teardown(test_reset_stops_caller, teardown),
      cmocka_unit_test_teardown(test_gate_closed_stops_launch, teardown),
      cmocka_unit_test_teardown(test_traced, teardown),
      cmocka_unit_test_teardown(test_fork_while_caller_runs, teardown),
      cmocka_unit_test_teardown(test_main_thread_stack_room, teardown),
  };
  if (argc >= 3 && strcmp(argv[1], "--child") == 0)
    return strcmp(argv[2], "fork") == 0         ? child_fork()
           : strcmp(argv[2], "mainstack") == 0  ? child_main_stack(0)
           : strcmp(argv[2], "smallstack") == 0 ? child_main_stack(4 << 20)
                                                 : 2;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
