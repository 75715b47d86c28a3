/*
 * Runs this test executable again in a child process with a changed
 * environment.  libasc loads the machine topology once per process, so every
 * topology or ASC_VISIBLE_CORES variant needs a fresh process.
 *
 * The child is started as `<exe> --child MODE`; the test's main() hands it
 * to its child dispatcher, which prints `key=value` lines on stdout.  The
 * parent captures them and asserts on them, so a failure prints both the
 * expected and the actual value.
 */
#ifndef ASC_TEST_SUBPROC_H
#define ASC_TEST_SUBPROC_H

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define SUBPROC_OUT_MAX 16384

/* Variables every child starts without, so the parent's environment cannot
 * leak a topology into a test that did not ask for one. */
static const char *const subproc_cleared[] = {
    "HWLOC_SYNTHETIC=", "HWLOC_XMLFILE=", "HWLOC_FSROOT=", "ASC_VISIBLE_CORES=",
    "HWLOC_THISSYSTEM=", "HWLOC_PLUGINS_PATH=", "HWLOC_PLUGINS_BLACKLIST=",
    NULL};

static inline int subproc_is_cleared(const char *entry) {
  for (int i = 0; subproc_cleared[i] != NULL; i++) {
    if (strncmp(entry, subproc_cleared[i], strlen(subproc_cleared[i])) == 0)
      return 1;
  }
  return 0;
}

/* True if entry ("NAME=value") sets a variable that one of set sets too:
 * the child gets set's value instead. */
static inline int subproc_is_replaced(const char *entry,
                                      const char *const *set) {
  for (size_t i = 0; set != NULL && set[i] != NULL; i++) {
    size_t n = strcspn(set[i], "=") + 1;
    if (strncmp(entry, set[i], n) == 0)
      return 1;
  }
  return 0;
}

/* Runs `<self> --child mode` with `set` ("NAME=value" entries, NULL ended)
 * added to a cleaned copy of the environment (replacing the variables
 * they name).  Its stdout goes to out
 * (NUL-terminated, truncated to outsz).  Returns the child's exit status,
 * or -1 if it could not run or died from a signal. */
static inline int subproc_run(const char *mode, const char *const *set, char *out,
                       size_t outsz) {
  size_t nenv = 0, nset = 0, len = 0;
  char **envp;
  char *argv[4];
  int fds[2], status, rc;
  posix_spawn_file_actions_t fa;
  pid_t pid;
  char self[PATH_MAX];
  ssize_t slen = readlink("/proc/self/exe", self, sizeof self - 1);

  if (slen <= 0)
    return -1;
  self[slen] = '\0';

  while (environ[nenv] != NULL)
    nenv++;
  while (set != NULL && set[nset] != NULL)
    nset++;
  envp = calloc(nenv + nset + 1, sizeof *envp);
  if (envp == NULL)
    return -1;
  nenv = 0;
  for (size_t i = 0; environ[i] != NULL; i++) {
    if (!subproc_is_cleared(environ[i]) &&
        !subproc_is_replaced(environ[i], set))
      envp[nenv++] = environ[i];
  }
  for (size_t i = 0; i < nset; i++)
    envp[nenv++] = (char *)set[i];
  envp[nenv] = NULL;

  argv[0] = (char *)"asc-test-child";
  argv[1] = (char *)"--child";
  argv[2] = (char *)mode;
  argv[3] = NULL;

  fflush(NULL);
  if (pipe(fds) != 0) {
    free(envp);
    return -1;
  }
  /* posix_spawn, not fork: fork runs the allocator's atfork handlers, which
   * take every jemalloc arena lock at once and overflow TSan's deadlock
   * detector (see docs/memory.md). */
  if (posix_spawn_file_actions_init(&fa) != 0) {
    close(fds[0]);
    close(fds[1]);
    free(envp);
    return -1;
  }
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  rc = posix_spawn(&pid, self, &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    close(fds[0]);
    close(fds[1]);
    free(envp);
    return -1;
  }
  close(fds[1]);
  free(envp);
  for (;;) {
    char sink[256];
    ssize_t n;
    if (len + 1 < outsz)
      n = read(fds[0], out + len, outsz - 1 - len);
    else
      n = read(fds[0], sink, sizeof sink);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    if (len + 1 < outsz)
      len += (size_t)n;
  }
  out[len] = '\0';
  close(fds[0]);
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return -1;
  }
  if (!WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

/* The value of `key=` on its own line in out, copied to buf; NULL when
 * absent. */
static inline const char *subproc_get(const char *out, const char *key, char *buf,
                               size_t bufsz) {
  size_t klen = strlen(key);
  const char *s = out;

  while (s != NULL && *s) {
    if (strncmp(s, key, klen) == 0 && s[klen] == '=') {
      const char *v = s + klen + 1;
      size_t n = strcspn(v, "\n");
      if (n >= bufsz)
        n = bufsz - 1;
      memcpy(buf, v, n);
      buf[n] = '\0';
      return buf;
    }
    s = strchr(s, '\n');
    if (s != NULL)
      s++;
  }
  return NULL;
}

/* The integer value of key; LLONG_MIN when absent. */
static inline long long subproc_get_ll(const char *out, const char *key) {
  char buf[64];
  if (subproc_get(out, key, buf, sizeof buf) == NULL)
    return LLONG_MIN;
  return strtoll(buf, NULL, 10);
}

/* subproc_run for a child that calls fork(): under TSan it runs with
 * detect_deadlocks=0, as docs/memory.md says of fork(), and
 * die_after_fork=0 (TSan cannot check threads started after a fork),
 * added to the caller's TSAN_OPTIONS. */
static inline int subproc_run_forking(const char *mode, char *out,
                                      size_t outsz) {
  static char tsan[512];
  const char *old = getenv("TSAN_OPTIONS");
  const char *env[] = {tsan, NULL};
  snprintf(tsan, sizeof tsan, "TSAN_OPTIONS=%s%sdetect_deadlocks=0 "
           "die_after_fork=0", old != NULL ? old : "",
           old != NULL ? " " : "");
  return subproc_run(mode, env, out, outsz);
}

/* In a child that forked pid itself (a fork() test): waits for pid for a
 * minute at most, killing it then, and prints `child=` its exit status
 * (1000 + the signal if a signal ended it, `hang` if it was killed). */
static inline void subproc_wait_forked(pid_t pid) {
  struct timespec pause = {0, 10000000};
  int status = 0;
  pid_t r = 0;

  for (int i = 0; i < 6000 && r == 0; i++) {
    r = waitpid(pid, &status, WNOHANG);
    if (r == 0)
      nanosleep(&pause, NULL);
  }
  if (r == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    printf("child=hang\n");
  } else {
    printf("child=%d\n", WIFEXITED(status) ? WEXITSTATUS(status)
                                           : 1000 + WTERMSIG(status));
  }
}

#endif /* ASC_TEST_SUBPROC_H */
