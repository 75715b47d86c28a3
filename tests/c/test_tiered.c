/*
 * Tiered compilation (jit/tier.h) through the public API, for the
 * sanitizer builds: threads launch a kernel's quick tier while the
 * background thread builds and swaps in its -O3 code, every result the
 * same bits; a module unloaded while its -O3 build is queued or running.
 * Its own empty kernel cache, so every specialisation misses.
 */
#include <stdlib.h>
#include <unistd.h>
#include <uv.h>

#include "e2e.h"

static const char text[] =
    "import math\n"
    "import asc\n"
    "\n"
    "@asc.kernel\n"
    "def wave(x, out):\n"
    "    for i in asc.prange(x.shape[0]):\n"
    "        out[i] = math.exp(math.sin(x[i])) + math.sqrt(abs(x[i]))\n";

#define N 64
#define LAUNCHES 60

typedef struct racer {
  ascKernel_t k;
  const double *x;
  const double *want;   /* NULL: fill it from the first launch */
  int mismatches;
} racer;

static void launch_n(ascKernel_t k, ascStream_t st, const double *x,
                     double *out, int64_t n) {
  ascTensor tx = e2e_t1((void *)x, ascFloat64, n),
            to = e2e_t1(out, ascFloat64, n);
  void *args[] = {&tx, &to};
  ASSERT_OK(ascLaunchKernel(k, 1, args, st));
  ASSERT_OK(ascStreamSynchronize(st));
}

static void launch_once(ascKernel_t k, ascStream_t st, const double *x,
                        double *out) {
  launch_n(k, st, x, out, N);
}

/* Elements of a heavy launch: its arrays are over ASC_TIER_BYTES' 64 KiB
 * default, so it waits for the -O3 build.  (Not setenv: the background
 * build reads the environment for the compiler it starts.) */
#define HEAVY 16384

static void race(void *arg) {
  racer *r = arg;
  ascStream_t st;
  double out[N];

  ASSERT_OK(ascStreamCreate(&st));
  for (int i = 0; i < LAUNCHES; i++) {
    launch_once(r->k, st, r->x, out);
    r->mismatches += memcmp(out, r->want, sizeof out) != 0;
  }
  ASSERT_OK(ascStreamDestroy(st));
}

static void test_threads_across_the_swap(void **state) {
  ascModule_t m = e2e_load("tiered.py", text);
  ascKernel_t k = test_kernel(m, "wave");
  double x[N], first[N], last[N];
  racer r[2];
  uv_thread_t t[2];
  (void)state;

  for (int i = 0; i < N; i++)
    x[i] = (i - N / 2) * 0.37;
  launch_once(k, NULL, x, first);   /* quick tier */
  for (int i = 0; i < 2; i++) {
    r[i] = (racer){k, x, first, 0};
    assert_int_equal(uv_thread_create(&t[i], race, &r[i]), 0);
  }
  for (int i = 0; i < 2; i++) {
    uv_thread_join(&t[i]);
    assert_int_equal(r[i].mismatches, 0);
  }
  /* heavy: waits for the -O3 build, runs it; its first N elements are
   * x's, and their results the quick tier's bits */
  {
    double *big = malloc(sizeof *big * HEAVY), *bout = malloc(sizeof *bout * HEAVY);
    assert_non_null(big);
    assert_non_null(bout);
    for (int i = 0; i < HEAVY; i++)
      big[i] = i < N ? x[i] : i * 0.001;
    launch_n(k, NULL, big, bout, HEAVY);
    memcpy(last, bout, sizeof last);
    free(big);
    free(bout);
  }
  assert_memory_equal(first, last, sizeof last);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_unload_with_build_in_flight(void **state) {
  double x[N], out[N];
  (void)state;

  for (int i = 0; i < N; i++)
    x[i] = i * 0.5;
  for (int round = 0; round < 3; round++) {
    /* a new text each round: a miss each time */
    char t[sizeof text + 32];
    snprintf(t, sizeof t, "%s# round %d\n", text, round);
    ascModule_t m = e2e_load("tiered_unload.py", t);
    ascKernel_t k = test_kernel(m, "wave");
    launch_once(k, NULL, x, out);
    launch_once(k, NULL, x, out);   /* queues the -O3 build */
    ASSERT_OK(ascModuleUnload(m));  /* while it is queued or running */
  }
}

static char dir[] = "/tmp/asc-test-tiered-XXXXXX";

/* Registered before the runtime starts, so it runs after the tiering's
 * exit handler has stopped the background build. */
static void remove_cache(void) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_across_the_swap),
      cmocka_unit_test(test_unload_with_build_in_flight),
  };
  int rc;

  if (mkdtemp(dir) == NULL)
    return 1;
  atexit(remove_cache);
  setenv("ASC_CACHE_DIR", dir, 1);
  setenv("ASC_TIER", "1", 1);
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  return rc;
}
