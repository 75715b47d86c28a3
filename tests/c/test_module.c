/*
 * Modules and kernels: loading shared-object modules (good, wrong ABI, no
 * symbol, missing file), kernel lookup and parameter info, unloading with
 * launches queued, Python entry points' argument checks, and stale
 * handles.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <uv.h>

#include "testutil.h"

static void test_load_errors(void **state) {
  ascModule_t m;
  (void)state;
  ASSERT_ERR(ascModuleLoad(NULL, TEST_MODULE("testkernels")),
             ascErrorInvalidValue);
  ASSERT_ERR(ascModuleLoad(&m, NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascModuleLoad(&m, ASC_TEST_MODULE_DIR "/no_such_module.so"),
             ascErrorFileNotFound);
  ASSERT_ERR(ascModuleLoad(&m, TEST_MODULE("badabi")), ascErrorInvalidModule);
  assert_non_null(strstr(ascGetLastErrorMessage(), "ABI version"));
  ASSERT_ERR(ascModuleLoad(&m, TEST_MODULE("nosymbol")),
             ascErrorInvalidModule);
  ASSERT_ERR(ascModuleLoad(&m, ASC_SOURCE_DIR "/CMakeLists.txt"),
             ascErrorInvalidModule);
  ASSERT_ERR(ascModuleLoadPython(NULL, "x", NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascModuleLoadPython(&m, NULL, NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascModuleLoadPythonFile(&m, NULL, NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascModuleLoadPythonFile(&m, "/nonexistent/k.py", NULL),
             ascErrorFileNotFound);
}

/* A new sparse file of n bytes at path.  0 or -1. */
static int truncate_new(const char *path, off_t n) {
  FILE *f = fopen(path, "w");
  int r = f != NULL && ftruncate(fileno(f), n) == 0 ? 0 : -1;
  if (f != NULL)
    fclose(f);
  return r;
}

/* Files that are not shared objects and cannot be read to their end
 * fail at once, without blocking or reading forever. */
static void test_load_non_regular_files(void **state) {
  char dir[512], fifo[600], big[600];
  ascModule_t m;
  uint64_t t0 = uv_hrtime();
  (void)state;
  snprintf(dir, sizeof dir, "%s/test-module-XXXXXX", ASC_BINARY_DIR);
  assert_non_null(mkdtemp(dir));
  snprintf(fifo, sizeof fifo, "%s/fifo.so", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  ASSERT_ERR(ascModuleLoad(&m, "/dev/zero"), ascErrorInvalidModule);
  assert_non_null(strstr(ascGetLastErrorMessage(), "not a regular file"));
  ASSERT_ERR(ascModuleLoad(&m, fifo), ascErrorInvalidModule);
  assert_non_null(strstr(ascGetLastErrorMessage(), "not a regular file"));
  ASSERT_ERR(ascModuleLoad(&m, dir), ascErrorInvalidModule);
  /* Kernel text is read whole: a FIFO would block, a device be read
   * forever, a huge file fill the memory. */
  ASSERT_ERR(ascModuleLoadPythonFile(&m, fifo, NULL), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "not a regular file"));
  ASSERT_ERR(ascModuleLoadPythonFile(&m, "/dev/zero", NULL),
             ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "not a regular file"));
  ASSERT_ERR(ascModuleLoadPythonFile(&m, dir, NULL), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "directory"));
  snprintf(big, sizeof big, "%s/big.py", dir);
  assert_int_equal(truncate_new(big, (off_t)257 << 20), 0);
  ASSERT_ERR(ascModuleLoadPythonFile(&m, big, NULL), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "larger than 256 MiB"));
  assert_true((uv_hrtime() - t0) / 1000000 < 5000);
  unlink(big);
  unlink(fifo);
  rmdir(dir);
}

static void test_kernels_and_info(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t k;
  ascKernelInfo info;
  (void)state;
  ASSERT_ERR(ascModuleGetKernel(&k, m, "no_such_kernel"),
             ascErrorInvalidKernel);
  assert_non_null(strstr(ascGetLastErrorMessage(), "no_such_kernel"));
  ASSERT_ERR(ascModuleGetKernel(NULL, m, "vadd"), ascErrorInvalidValue);
  ASSERT_ERR(ascModuleGetKernel(&k, m, NULL), ascErrorInvalidValue);
  ASSERT_ERR(ascModuleGetKernel(&k, NULL, "vadd"), ascErrorInvalidHandle);
  ASSERT_OK(ascModuleGetKernel(&k, m, "vadd"));
  ASSERT_ERR(ascKernelGetInfo(NULL, k), ascErrorInvalidValue);
  ASSERT_ERR(ascKernelGetInfo(&info, NULL), ascErrorInvalidHandle);
  ASSERT_OK(ascKernelGetInfo(&info, k));
  assert_string_equal(info.name, "vadd");
  assert_int_equal(info.numParams, 3);
  assert_string_equal(info.params[2].name, "c");
  assert_int_equal(info.params[0].isTensor, 1);
  assert_int_equal(info.params[0].dtype, ascFloat32);
  assert_int_equal(info.params[0].ndim, 1);
  assert_int_equal(info.params[0].generic, 0);
  ASSERT_OK(ascModuleGetKernel(&k, m, "generic"));
  ASSERT_OK(ascKernelGetInfo(&info, k));
  assert_int_equal(info.params[0].generic, 1);
  assert_int_equal(info.params[0].dtype, ascDataTypeCount);
  assert_int_equal(info.params[0].ndim, -1);
  assert_int_equal(info.params[1].isTensor, 0);
  assert_int_equal(info.params[1].generic, 1);
  ASSERT_OK(ascModuleGetKernel(&k, m, "affine"));
  ASSERT_OK(ascKernelGetInfo(&info, k));
  assert_int_equal(info.params[1].dtype, ascInt64);
  assert_int_equal(info.params[1].isTensor, 0);
  ASSERT_OK(ascModuleUnload(m));
  ASSERT_ERR(ascModuleUnload(m), ascErrorInvalidHandle);
  ASSERT_ERR(ascModuleUnload(NULL), ascErrorInvalidHandle);
  ASSERT_ERR(ascModuleGetKernel(&k, m, "vadd"), ascErrorInvalidHandle);
  ASSERT_ERR(ascKernelGetInfo(&info, k), ascErrorInvalidHandle);
}

static void test_unload_with_queued_launches(void **state) {
  ascModule_t m = test_load_kernels(), m2 = test_load_kernels();
  ascKernel_t ks = test_kernel(m, "sleepy"), ka = test_kernel(m2, "append");
  int32_t us = 20000, log[4] = {0}, v = 9;
  ascTensor t = test_tensor1(log, ascInt32, 4);
  void *sargs[] = {&us}, *aargs[] = {&t, &v};
  ascStream_t s;
  (void)state;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascLaunchKernel(ks, 2, sargs, s));
  ASSERT_OK(ascLaunchKernel(ka, 1, aargs, s));
  ASSERT_OK(ascModuleUnload(m));   /* waits for its launch */
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(log[0], 1);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m2));
}

static void test_many_loads(void **state) {
  (void)state;
  for (int i = 0; i < 50; i++) {
    ascModule_t m = test_load_kernels();
    ascKernel_t k = test_kernel(m, "empty");
    ASSERT_OK(ascLaunchKernel(k, 2, NULL, NULL));
    ASSERT_OK(ascModuleUnload(m));
  }
  ASSERT_OK(ascDeviceSynchronize());
}

/* The same buffer passed as x and y of a Python kernel, y one element
 * ahead: the launch must give Python's serial result (each iteration reads
 * what the previous one wrote), not a restrict or parallel build's. */
static void test_python_overlapping_args(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def shift(x, y):\n"
      "    for i in range(y.shape[0]):\n"
      "        y[i] = x[i] + 1\n";
  enum { N = 100000 };
  int64_t *a = malloc(sizeof *a * (N + 1));
  ascModule_t m;
  ascKernel_t k;
  ascTensor x, y;
  void *args[2] = {&x, &y};
  (void)state;
  assert_non_null(a);
  ASSERT_OK(ascModuleLoadPython(&m, text, NULL));
  ASSERT_OK(ascModuleGetKernel(&k, m, "shift"));
  for (int i = 0; i <= N; i++)
    a[i] = i == 0 ? 7 : -1;
  x = test_tensor1(a, ascInt64, N);
  y = test_tensor1(a + 1, ascInt64, N);
  ASSERT_OK(ascLaunchKernel(k, 1, args, NULL));
  ASSERT_OK(ascDeviceSynchronize());
  for (int i = 0; i <= N; i++)
    assert_int_equal(a[i], 7 + i);
  ASSERT_OK(ascModuleUnload(m));
  free(a);
}

enum { NRACERS = 3 };

/* Starts the racer threads on *shared; also_refused is one more error
 * counted as a refusal (ascSuccess: none). */
static void racers_start(test_racer *r, uv_thread_t *th,
                         _Atomic(ascModule_t) *shared, atomic_int *stop,
                         ascError_t also_refused) {
  memset(r, 0, sizeof *r * NRACERS);
  for (int i = 0; i < NRACERS; i++) {
    r[i].module = shared;
    r[i].stop = stop;
    r[i].also_refused = also_refused;
    assert_int_equal(uv_thread_create(&th[i], test_racer_run, &r[i]), 0);
  }
}

/* Stops and joins them; fails on any unexpected error; adds up. */
static void racers_join(test_racer *r, uv_thread_t *th, atomic_int *stop,
                        int *ok, int *refused) {
  atomic_store(stop, 1);
  for (int i = 0; i < NRACERS; i++) {
    uv_thread_join(&th[i]);
    if (r[i].bad > 0)
      fail_msg("thread %d: %d unexpected errors, first %s", i, r[i].bad,
               r[i].why);
    *ok += r[i].ok;
    *refused += r[i].refused;
  }
}

/* Unload races launches that resolve the module's kernel, specialise it
 * (compile or load from the disk cache) and queue it: every launch
 * succeeds or reports ascErrorInvalidHandle; none touches freed memory
 * (run under ASan and TSan). */
static void test_unload_races_launch(void **state) {
  _Atomic(ascModule_t) shared = NULL;
  atomic_int stop = 0;
  test_racer r[NRACERS];
  uv_thread_t th[NRACERS];
  uint64_t t0 = uv_hrtime();
  int rounds = 0, ok = 0, refused = 0;
  (void)state;
  racers_start(r, th, &shared, &stop, ascSuccess);
  /* Bounded: a few seconds whatever the machine. */
  while (rounds < 200 && uv_hrtime() - t0 < 3000000000u) {
    ascModule_t m;
    struct timespec pause = {0, 200000L * (rounds % 8)};
    ASSERT_OK(ascModuleLoadPython(&m, TEST_RACE_TEXT, NULL));
    atomic_store(&shared, m);
    nanosleep(&pause, NULL);
    ASSERT_OK(ascModuleUnload(m));
    rounds++;
  }
  racers_join(r, th, &stop, &ok, &refused);
  ASSERT_OK(ascDeviceSynchronize());
  print_message("%d rounds, %d launches queued, %d refused\n", rounds, ok,
                refused);
  assert_true(ok > 0);
  assert_true(refused > 0);
}

/* The same race with the specialisation table at two entries (six
 * dtypes, so launches evict each other's code) and device resets from the
 * unloading thread: launches succeed or are refused, nothing crashes or
 * touches freed memory (ASan, TSan).  A review's stress program that
 * crashed here wrote through a launcher's stack buffer after the thread
 * had returned (an asynchronous launch of stack memory, a user error);
 * the racers' buffers live as long as the test. */
static void test_unload_reset_evict_race(void **state) {
  _Atomic(ascModule_t) shared = NULL;
  atomic_int stop = 0;
  test_racer r[NRACERS];
  uv_thread_t th[NRACERS];
  uint64_t t0 = uv_hrtime();
  int rounds = 0, resets = 0, ok = 0, refused = 0;
  (void)state;
  setenv("ASC_MAX_LOADED_SPECIALIZATIONS", "2", 1);
  /* Every loaded specialisation busy with queued launches: refused. */
  racers_start(r, th, &shared, &stop, ascErrorLaunchFailure);
  while (rounds < 300 && uv_hrtime() - t0 < 3000000000u) {
    ascModule_t m;
    struct timespec pause = {0, 100000L * (rounds % 8)};
    ASSERT_OK(ascModuleLoadPython(&m, TEST_RACE_TEXT, NULL));
    atomic_store(&shared, m);
    nanosleep(&pause, NULL);
    if (rounds % 10 == 9) {
      /* Reset retires every module: m's handle dies with it. */
      ascError_t e = ascDeviceReset();
      if (e == ascSuccess)
        resets++;
      else
        assert_int_equal(e, ascErrorNotPermitted);
      e = ascModuleUnload(m);
      assert_true(e == ascSuccess || e == ascErrorInvalidHandle);
    } else {
      ASSERT_OK(ascModuleUnload(m));
    }
    rounds++;
  }
  racers_join(r, th, &stop, &ok, &refused);
  unsetenv("ASC_MAX_LOADED_SPECIALIZATIONS");
  ASSERT_OK(ascDeviceSynchronize());
  print_message("%d rounds, %d resets, %d launches queued\n", rounds, resets,
                ok);
  assert_true(ok > 0);
  assert_true(resets > 0);
}

/* Maps of this process whose path contains dir. */
static int maps_under(const char *dir) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[8192];
  int n = 0;
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (strstr(line, dir) != NULL)
      n++;
  fclose(f);
  return n;
}

/* With ASC_MAX_LOADED_SPECIALIZATIONS=4, launches of 24 specialisations
 * (queued four at a time, then run) keep at most 4 loaded (their maps
 * under the cache directory), and every result, relaunches of evicted
 * ones included, is right. */
static void test_python_specialisations_bounded(void **state) {
  static const char text[] =
      "import asc\n"
      "@asc.kernel\n"
      "def put(a, n: asc.ConstExpr[int]):\n"
      "    a[0] = n * 3\n";
  enum { LIMIT = 4, N = 24 };
  const char *dir = getenv("ASC_CACHE_DIR");
  int64_t out[N];
  ascTensor t[N];
  int64_t n[N];
  ascModule_t m;
  ascKernel_t k;
  ascStream_t s;
  int base;
  (void)state;
  assert_non_null(dir);
  /* Maps an earlier test of this process left under the directory (a
   * rare one after the reset races, seen once under TSan; not yet
   * explained) are not this test's. */
  base = maps_under(dir);
  setenv("ASC_MAX_LOADED_SPECIALIZATIONS", "4", 1);
  ASSERT_OK(ascModuleLoadPython(&m, text, NULL));
  unsetenv("ASC_MAX_LOADED_SPECIALIZATIONS");
  ASSERT_OK(ascModuleGetKernel(&k, m, "put"));
  ASSERT_OK(ascStreamCreate(&s));
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < N; i++) {
      void *args[2] = {&t[i], &n[i]};
      out[i] = -1;
      n[i] = i;
      t[i] = test_tensor1(&out[i], ascInt64, 1);
      ASSERT_OK(ascLaunchKernel(k, 1, args, s));
      if (i % LIMIT == LIMIT - 1) {
        ASSERT_OK(ascStreamSynchronize(s));
        assert_in_range(maps_under(dir), base + 1, base + LIMIT * 6);
      }
    }
    ASSERT_OK(ascStreamSynchronize(s));
    for (int i = 0; i < N; i++)
      assert_int_equal(out[i], i * 3);
  }
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_OK(ascModuleUnload(m));
  assert_int_equal(maps_under(dir), base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_load_errors, test_teardown),
      cmocka_unit_test_teardown(test_load_non_regular_files, test_teardown),
      cmocka_unit_test_teardown(test_kernels_and_info, test_teardown),
      cmocka_unit_test_teardown(test_unload_with_queued_launches,
                                test_teardown),
      cmocka_unit_test_teardown(test_many_loads, test_teardown),
      cmocka_unit_test_teardown(test_python_overlapping_args, test_teardown),
      cmocka_unit_test_teardown(test_unload_races_launch, test_teardown),
      cmocka_unit_test_teardown(test_unload_reset_evict_race, test_teardown),
      cmocka_unit_test_teardown(test_python_specialisations_bounded,
                                test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
