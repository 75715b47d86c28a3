/*
 * The worker pool under unusual machines, each in a child process (the
 * topology is loaded once per process): an odd cpuset (ASC_VISIBLE_CORES=1,
 * one worker on PU 1, where priorities are observable), a synthetic
 * 6-core topology (pinning fails and is only logged), and no spinning
 * (ASC_SPIN_US=0: every wait parks).
 */
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

extern char **environ;

static int run_child(const char *mode, const char *var) {
  char *argv[] = {(char *)"test_pool", (char *)mode, NULL};
  size_t n = 0;
  char **envp;
  pid_t pid;
  int status;

  size_t k = 0;

  while (environ[n] != NULL)
    n++;
  envp = calloc(n + 2, sizeof *envp);
  /* The child sees only the machine shape it is given. */
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "ASC_VISIBLE_CORES=", 18) != 0 &&
        strncmp(environ[i], "HWLOC_", 6) != 0 &&
        strncmp(environ[i], "ASC_SPIN_US=", 12) != 0)
      envp[k++] = environ[i];
  envp[k] = (char *)var;
  if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, envp) != 0) {
    free(envp);
    return -1;
  }
  free(envp);
  if (waitpid(pid, &status, 0) != pid)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_odd_cpuset(void **state) {
  (void)state;
  assert_int_equal(run_child("odd", "ASC_VISIBLE_CORES=1"), 0);
}

static void test_synthetic(void **state) {
  (void)state;
  assert_int_equal(run_child("synthetic", "HWLOC_SYNTHETIC=pack:2 core:3 pu:1"),
                   0);
}

static void test_nospin(void **state) {
  (void)state;
  assert_int_equal(run_child("nospin", "ASC_SPIN_US=0"), 0);
}

/* ------------------------------------------------------------ children */

#define CHECK(c)                                                             \
  do {                                                                       \
    if (!(c)) {                                                              \
      fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__,  \
              #c, ascGetLastErrorMessage());                                 \
      return 1;                                                              \
    }                                                                        \
  } while (0)

static int team_of(ascKernel_t who, uint32_t blocks, int32_t *team) {
  int32_t out[4 * 64];
  ascTensor t = test_tensor1(out, ascInt32, 4 * 64);
  void *args[] = {&t};
  memset(out, 0, sizeof out);
  if (ascLaunchKernel(who, blocks, args, NULL) != ascSuccess ||
      ascStreamSynchronize(NULL) != ascSuccess)
    return 1;
  for (uint32_t b = 0; b < blocks; b++)
    if (out[4 * b + 0] != out[0] || out[4 * b + 3] != 1 ||
        out[4 * b + 1] < 1 || out[4 * b + 1] > out[0])
      return 1;
  *team = out[0];
  return 0;
}

static int child_odd(void) {
  ascDeviceProp p;
  ascModule_t m;
  ascKernel_t who, ks, ka;
  ascStream_t lo, hi, busy;
  int32_t team, us = 100000, log[4] = {0}, v1 = 1, v2 = 2;
  ascTensor t = test_tensor1(log, ascInt32, 4);
  void *sargs[] = {&us}, *a1[] = {&t, &v1}, *a2[] = {&t, &v2};

  CHECK(ascGetDeviceProperties(&p, 0) == ascSuccess);
  CHECK(p.cores == 1);
  CHECK(p.firstCore == 1);
  CHECK(ascModuleLoad(&m, TEST_MODULE("testkernels")) == ascSuccess);
  CHECK(ascModuleGetKernel(&who, m, "whoami") == ascSuccess);
  CHECK(ascModuleGetKernel(&ks, m, "sleepy") == ascSuccess);
  CHECK(ascModuleGetKernel(&ka, m, "append") == ascSuccess);
  CHECK(team_of(who, 1, &team) == 0 && team == 1);
  CHECK(team_of(who, 17, &team) == 0 && team == 1);
  /* One worker: a ready high-priority launch is served before an older
   * low-priority one. */
  CHECK(ascStreamCreateWithPriority(&busy, ascStreamNonBlocking, 0) ==
        ascSuccess);
  CHECK(ascStreamCreateWithPriority(&lo, ascStreamNonBlocking, 0) ==
        ascSuccess);
  CHECK(ascStreamCreateWithPriority(&hi, ascStreamNonBlocking, -2) ==
        ascSuccess);
  CHECK(ascLaunchKernel(ks, 1, sargs, busy) == ascSuccess);
  CHECK(ascLaunchKernel(ka, 1, a1, lo) == ascSuccess);
  CHECK(ascLaunchKernel(ka, 1, a2, hi) == ascSuccess);
  CHECK(ascDeviceSynchronize() == ascSuccess);
  CHECK(log[0] == 2 && log[1] == 2 && log[2] == 1);
  CHECK(ascDeviceReset() == ascSuccess);
  return 0;
}

static int child_synthetic(void) {
  ascDeviceProp p;
  ascModule_t m;
  ascKernel_t who, pre;
  int32_t team;
  int64_t x[8], y[8];
  ascTensor tx = test_tensor1(x, ascInt64, 8), ty = test_tensor1(y, ascInt64, 8);
  void *args[] = {&tx, &ty};

  CHECK(ascGetDeviceProperties(&p, 0) == ascSuccess);
  CHECK(p.cores == 6);
  CHECK(ascModuleLoad(&m, TEST_MODULE("testkernels")) == ascSuccess);
  CHECK(ascModuleGetKernel(&who, m, "whoami") == ascSuccess);
  CHECK(ascModuleGetKernel(&pre, m, "prefix") == ascSuccess);
  CHECK(team_of(who, 1, &team) == 0 && team == 6);
  CHECK(team_of(who, 2, &team) == 0 && team == 3);
  CHECK(team_of(who, 3, &team) == 0 && team == 2);
  CHECK(team_of(who, 4, &team) == 0 && team == 1);
  CHECK(team_of(who, 50, &team) == 0 && team == 1);
  for (int rep = 0; rep < 10; rep++) {
    memset(y, 0, sizeof y);
    CHECK(ascLaunchKernel(pre, 6, args, NULL) == ascSuccess);
    CHECK(ascStreamSynchronize(NULL) == ascSuccess);
    for (int b = 0; b < 6; b++)
      CHECK(y[b] == (int64_t)(b + 1) * (b + 2) / 2);
  }
  CHECK(ascLaunchKernel(pre, 7, args, NULL) == ascErrorLaunchFailure);
  CHECK(ascDeviceReset() == ascSuccess);
  return 0;
}

static int child_nospin(void) {
  ascModule_t m;
  ascKernel_t k;
  ascStream_t s[3];
  ascEvent_t e;
  int64_t x[3][16];
  int64_t mul = 1, add = 1;

  memset(x, 0, sizeof x);
  CHECK(ascModuleLoad(&m, TEST_MODULE("testkernels")) == ascSuccess);
  CHECK(ascModuleGetKernel(&k, m, "affine") == ascSuccess);
  CHECK(ascEventCreate(&e) == ascSuccess);
  for (int i = 0; i < 3; i++)
    CHECK(ascStreamCreate(&s[i]) == ascSuccess);
  for (int j = 0; j < 2000; j++) {
    int i = j % 3;
    ascTensor t = test_tensor1(x[i], ascInt64, 16);
    void *args[] = {&t, &mul, &add};
    CHECK(ascLaunchKernel(k, 1 + (uint32_t)(j % 4), args, s[i]) ==
          ascSuccess);
    if (j % 50 == 0) {
      CHECK(ascEventRecord(e, s[i]) == ascSuccess);
      CHECK(ascEventSynchronize(e) == ascSuccess);
    }
    if (j % 97 == 0)
      CHECK(ascStreamSynchronize(s[i]) == ascSuccess);
  }
  CHECK(ascDeviceSynchronize() == ascSuccess);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 16; j++)
      CHECK(x[i][j] == 2000 / 3 + (i < 2000 % 3));
  CHECK(ascDeviceReset() == ascSuccess);
  return 0;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_odd_cpuset),
      cmocka_unit_test(test_synthetic),
      cmocka_unit_test(test_nospin),
  };
  if (argc > 1) {
    if (strcmp(argv[1], "odd") == 0)
      return child_odd();
    if (strcmp(argv[1], "synthetic") == 0)
      return child_synthetic();
    if (strcmp(argv[1], "nospin") == 0)
      return child_nospin();
    return 2;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
