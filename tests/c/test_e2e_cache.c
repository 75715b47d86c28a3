/*
 * End to end: the kernel cache seen from outside, through processes.
 *
 * Every test uses its own cache directory and runs this executable again
 * (`--child MODE`) with ASC_CACHE_DIR pointing at it, since a process reads
 * the cache location once.  ASC_CC points at a wrapper script that logs
 * each compilation (each call with -shared) before running cc, so the
 * parent counts C compiler runs: a hit in a new process compiles nothing;
 * changing any key component compiles once; a corrupt entry is rebuilt;
 * two processes racing for one kernel compile it once; a read-only cache
 * directory falls back to a private one with a warning.
 */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jit/cache.h"
#include "jit/cc.h"
#include "e2e.h"

extern char **environ;

/* ------------------------------------------------------------- the child */

static const char base_text[] =
    "import asc\n"
    "\n"
    "SCALE = 3\n"
    "\n"
    "@asc.func\n"
    "def helper(v):\n"
    "    return v * SCALE\n"
    "\n"
    "@asc.kernel\n"
    "def k(x, y, n: asc.ConstExpr[int]):\n"
    "    for i in range(y.shape[0]):\n"
    "        y[i] = helper(y[i]) + n + x.ndim\n"
    "\n"
    "@asc.kernel\n"
    "def k2(x, y, n: asc.ConstExpr[int]):\n"
    "    for i in range(y.shape[0]):\n"
    "        y[i] = helper(y[i]) + n + x.ndim\n";

/* base_text with the first `from` replaced by `to`. */
static char *edited(const char *from, const char *to) {
  const char *p = strstr(base_text, from);
  size_t n = sizeof base_text + strlen(to);
  char *s = malloc(n);
  if (p == NULL || s == NULL)
    return NULL;
  snprintf(s, n, "%.*s%s%s", (int)(p - base_text), base_text, to,
           p + strlen(from));
  return s;
}

/* Loads the kernel text of `mode`, launches it and checks the result;
 * prints ok=1 or err=<message>. */
static int child(const char *mode) {
  char *text = NULL;
  const char *kname = "k";
  ascCompileOptions o;
  ascGlobalValue g;
  ascModule_t m;
  ascKernel_t k;
  double xd[4] = {0, 0, 0, 0}, yd[8];
  float yf[4];
  int64_t n = 2, scale = 3, stride = 1, ndim = 1;
  int use_f32 = 0;
  ascTensor tx, ty;
  void *args[3];
  ascError_t err;

  memset(&o, 0, sizeof o);
  o.filename = "cachekern.py";
  if (strcmp(mode, "text") == 0)
    text = edited("helper(y[i]) + n + x.ndim", "n + helper(y[i]) + x.ndim");
  else if (strcmp(mode, "helper") == 0)
    text = edited("return v * SCALE", "return SCALE * v");
  else if (strcmp(mode, "fastmath_text") == 0)
    text = edited("@asc.kernel\ndef k(", "@asc.kernel(fastmath={'nsz'})\ndef k(");
  else
    text = edited("", "");
  if (strcmp(mode, "name") == 0)
    kname = "k2";
  else if (strcmp(mode, "dtype") == 0)
    use_f32 = 1;
  else if (strcmp(mode, "ndim") == 0)
    ndim = 2;
  else if (strcmp(mode, "contig") == 0)
    stride = 2;
  else if (strcmp(mode, "constexpr") == 0)
    n = 5;
  else if (strcmp(mode, "global") == 0) {
    g.name = "SCALE";
    g.value = e2e_weak_int(4);
    o.globals = &g;
    o.numGlobals = 1;
    scale = 4;
  } else if (strcmp(mode, "debug") == 0)
    o.debug = 1;
  else if (strcmp(mode, "bounds") == 0)
    o.boundsCheck = 1;
  else if (strcmp(mode, "filename") == 0)
    o.filename = "other.py";
  else if (strcmp(mode, "fastmath") == 0)
    o.fastmath = ASC_FASTMATH_ALL;
  else if (strcmp(mode, "fastmath_contract") == 0)
    o.fastmath = ASC_FASTMATH_CONTRACT;

  for (int i = 0; i < 8; i++)
    yd[i] = i + 1;
  for (int i = 0; i < 4; i++)
    yf[i] = (float)(i + 1);
  tx = ndim == 2 ? e2e_t2(xd, ascFloat64, 2, 2) : e2e_t1(xd, ascFloat64, 4);
  ty = use_f32 ? e2e_t1(yf, ascFloat32, 4) : e2e_t1(yd, ascFloat64, 4);
  ty.strides[0] = stride;
  args[0] = &tx;
  args[1] = &ty;
  args[2] = &n;
  err = text == NULL ? ascErrorOutOfMemory : ascModuleLoadPython(&m, text, &o);
  if (err == ascSuccess)
    err = ascModuleGetKernel(&k, m, kname);
  if (err == ascSuccess)
    err = ascLaunchKernel(k, 1, args, NULL);
  if (err == ascSuccess)
    err = ascStreamSynchronize(NULL);
  if (err != ascSuccess) {
    printf("err=%s: %s\n", ascGetErrorName(err), ascGetLastErrorMessage());
    free(text);
    return 0;
  }
  for (int i = 0; i < 4; i++) {
    double y0 = use_f32 ? yf[i] : yd[i * stride];
    double want = (double)((i * stride + 1) * scale + n + ndim);
    if (use_f32)
      want = (double)((i + 1) * scale + n + ndim);
    if (y0 != want) {
      printf("err=y[%d] = %g, expected %g\n", i, y0, want);
      free(text);
      return 0;
    }
  }
  printf("ok=1\n");
  free(text);
  ascModuleUnload(m);
  ascDeviceReset();
  return 0;
}

/* Compiles and runs NSPEC specialisations of k (ConstExpr n = 100 * which
 * + j), each a new cache entry; with a tiny ASC_CACHE_MAX_BYTES every
 * publish (of this process or another) evicts all the others. */
#define NSPEC 4
static int child_evict(int which) {
  char *text = edited("", "");
  ascModule_t m;
  ascKernel_t k;
  ascCompileOptions o;
  ascError_t err;

  memset(&o, 0, sizeof o);
  o.filename = "cachekern.py";
  err = text == NULL ? ascErrorOutOfMemory : ascModuleLoadPython(&m, text, &o);
  if (err == ascSuccess)
    err = ascModuleGetKernel(&k, m, "k");
  for (int j = 0; j < NSPEC && err == ascSuccess; j++) {
    double xd[4] = {0, 0, 0, 0}, yd[4] = {1, 2, 3, 4};
    int64_t n = 100 * which + j;
    ascTensor tx = e2e_t1(xd, ascFloat64, 4), ty = e2e_t1(yd, ascFloat64, 4);
    void *args[3] = {&tx, &ty, &n};
    err = ascLaunchKernel(k, 1, args, NULL);
    if (err == ascSuccess)
      err = ascStreamSynchronize(NULL);
    for (int i = 0; i < 4 && err == ascSuccess; i++) {
      if (yd[i] != (double)((i + 1) * 3 + n + 1)) {
        printf("err=n=%lld: y[%d] = %g\n", (long long)n, i, yd[i]);
        free(text);
        return 0;
      }
    }
  }
  if (err != ascSuccess) {
    printf("err=%s: %s\n", ascGetErrorName(err), ascGetLastErrorMessage());
    free(text);
    return 0;
  }
  printf("ok=1\n");
  free(text);
  ascModuleUnload(m);
  return 0;
}

/* ------------------------------------------------------------ the parent */

typedef struct cachetest {
  char dir[700];    /* everything of this test */
  char cache[800];  /* ASC_CACHE_DIR */
  char log[800];    /* one line per compilation */
  char wrap[800];   /* ASC_CC */
  char wrap2[800];  /* a second compiler (other identity) */
} cachetest;

static int rm_entry(const char *p, const struct stat *sb, int flag,
                    struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  chmod(p, 0700);
  return remove(p) == 0 || errno == ENOENT ? 0 : -1;
}

static void rmtree(const char *dir) {
  chmod(dir, 0700);
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_wrapper(const char *path, const char *log) {
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  fprintf(fp,
          "#!/bin/sh\n"
          "for a in \"$@\"; do\n"
          "  if [ \"$a\" = -shared ]; then\n"
          "    echo \"$$ $*\" >> '%s'\n"
          "    if [ -n \"$ASC_E2E_CC_SLEEP\" ]; then sleep \"$ASC_E2E_CC_SLEEP\"; fi\n"
          "  fi\n"
          "done\n"
          "exec cc \"$@\"\n",
          log);
  fclose(fp);
  assert_int_equal(chmod(path, 0755), 0);
}

static void ct_init(cachetest *t, const char *name) {
  char top[512];
  snprintf(top, sizeof top, "%s/e2e-cache", ASC_BINARY_DIR);
  mkdir(top, 0700);
  snprintf(t->dir, sizeof t->dir, "%s/%s", top, name);
  rmtree(t->dir);
  assert_int_equal(mkdir(t->dir, 0700), 0);
  snprintf(t->cache, sizeof t->cache, "%s/cache", t->dir);
  snprintf(t->log, sizeof t->log, "%s/cc.log", t->dir);
  snprintf(t->wrap, sizeof t->wrap, "%s/cc-wrap.sh", t->dir);
  snprintf(t->wrap2, sizeof t->wrap2, "%s/cc-wrap2.sh", t->dir);
  write_wrapper(t->wrap, t->log);
  write_wrapper(t->wrap2, t->log);
}

static int compiles(const cachetest *t) {
  FILE *fp = fopen(t->log, "r");
  int n = 0, c;
  if (fp == NULL)
    return 0;
  while ((c = fgetc(fp)) != EOF)
    n += c == '\n';
  fclose(fp);
  return n;
}

/* The environment with each "NAME=value" of set replacing NAME. */
static char **env_with(const char *const *set) {
  size_t n = 0, k = 0, ns = 0;
  char **env;
  while (environ[n] != NULL)
    n++;
  while (set[ns] != NULL)
    ns++;
  env = calloc(n + ns + 1, sizeof *env);
  assert_non_null(env);
  for (size_t i = 0; i < n; i++) {
    int replaced = 0;
    for (size_t j = 0; j < ns; j++) {
      size_t len = strcspn(set[j], "=") + 1;
      if (strncmp(environ[i], set[j], len) == 0)
        replaced = 1;
    }
    if (!replaced)
      env[k++] = environ[i];
  }
  for (size_t j = 0; j < ns; j++)
    env[k++] = (char *)set[j];
  env[k] = NULL;
  return env;
}

/* Starts `<self> --child mode` with stdout and stderr into outfile. */
static pid_t spawn_child(const cachetest *t, const char *mode,
                         const char *const *extra, const char *outfile) {
  char cachev[900], ccv[900];
  const char *set[8];
  int ns = 0;
  char **env;
  char *argv[] = {(char *)"asc-e2e-cache-child", (char *)"--child",
                  (char *)mode, NULL};
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int rc;

  snprintf(cachev, sizeof cachev, "ASC_CACHE_DIR=%s", t->cache);
  snprintf(ccv, sizeof ccv, "ASC_CC=%s", t->wrap);
  set[ns++] = cachev;
  set[ns++] = ccv;
  for (int i = 0; extra != NULL && extra[i] != NULL && ns < 7; i++) {
    /* an extra ASC_CC replaces the wrapper */
    if (strncmp(extra[i], "ASC_CC=", 7) == 0)
      set[1] = extra[i];
    else
      set[ns++] = extra[i];
  }
  set[ns] = NULL;
  env = env_with(set);
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, outfile,
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  fflush(NULL);
  rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  assert_int_equal(rc, 0);
  return pid;
}

/* How long one child may take: seconds of a sanitizer build's compile
 * and load, far from ctest's limit, so that a child that hangs fails
 * here with what it printed (a TSan run once spent ctest's 300 s in
 * this test's first child). */
#define CHILD_LIMIT_S 120

static void wait_child(pid_t pid, const char *outfile, char *out,
                       size_t outsz) {
  int st = 0, waited = 0;
  FILE *fp;
  size_t n;
  pid_t r;
  while ((r = waitpid(pid, &st, WNOHANG)) == 0 ||
         (r < 0 && errno == EINTR)) {
    if (waited++ >= CHILD_LIMIT_S * 100) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
      r = -2;
      break;
    }
    usleep(10000);
  }
  fp = fopen(outfile, "r");
  assert_non_null(fp);
  n = fread(out, 1, outsz - 1, fp);
  out[n] = '\0';
  fclose(fp);
  if (r == -2)
    fail_msg("child still running after %d s, killed; it printed:\n%s",
             CHILD_LIMIT_S, out);
  assert_int_equal(r, pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fail_msg("child failed (status %d):\n%s", st, out);
}

/* Runs one child to completion; fails unless it printed ok=1.  Its
 * output (stdout and stderr) is left in out. */
static void run_child(const cachetest *t, const char *mode,
                      const char *const *extra, char *out, size_t outsz) {
  char outfile[900];
  snprintf(outfile, sizeof outfile, "%s/child.out", t->dir);
  wait_child(spawn_child(t, mode, extra, outfile), outfile, out, outsz);
  if (strstr(out, "ok=1\n") == NULL)
    fail_msg("child '%s' failed:\n%s", mode, out);
}

/* Runs mode and asserts the number of compilations it caused. */
static void expect_compiles(const cachetest *t, const char *mode,
                            const char *const *extra, int n) {
  char out[8192];
  int before = compiles(t), got;
  run_child(t, mode, extra, out, sizeof out);
  got = compiles(t) - before;
  if (got != n)
    fail_msg("mode '%s' (%s): %d compilations, expected %d\n%s", mode,
             extra != NULL ? extra[0] : "", got, n, out);
}

static void test_hit_in_new_process_miss_on_each_key_component(void **state) {
  static const char *const modes[] = {"text",   "helper",    "name",
                                      "dtype",  "ndim",      "contig",
                                      "constexpr", "global", "debug",
                                      "bounds", "filename", "fastmath",
                                      "fastmath_contract", "fastmath_text"};
  const char *cflags[] = {"ASC_CFLAGS=-O2", NULL};
  char cc2[900];
  const char *cc[] = {cc2, NULL};
  cachetest t;
  (void)state;
  ct_init(&t, "keys");
  snprintf(cc2, sizeof cc2, "ASC_CC=%s", t.wrap2);
  expect_compiles(&t, "base", NULL, 1);
  expect_compiles(&t, "base", NULL, 0); /* a new process hits */
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    expect_compiles(&t, modes[i], NULL, 1);
    expect_compiles(&t, modes[i], NULL, 0);
  }
  expect_compiles(&t, "base", cflags, 1);
  expect_compiles(&t, "base", cflags, 0);
  expect_compiles(&t, "base", cc, 1);
  expect_compiles(&t, "base", cc, 0);
  expect_compiles(&t, "base", NULL, 0); /* nothing evicted the first */
}

/* The cache entry of a fresh directory that holds exactly one. */
static void only_entry(const cachetest *t, char *path, size_t sz) {
  DIR *top = opendir(t->cache);
  struct dirent *d;
  int found = 0;
  assert_non_null(top);
  while ((d = readdir(top)) != NULL) {
    char sub[1024];
    DIR *dd;
    struct dirent *e;
    if (d->d_name[0] == '.' || strlen(d->d_name) != 2)
      continue;
    /* d_name is two characters here (checked above). */
    snprintf(sub, sizeof sub, "%s/%.2s", t->cache, d->d_name);
    dd = opendir(sub);
    if (dd == NULL)
      continue;
    while ((e = readdir(dd)) != NULL) {
      size_t n = strlen(e->d_name);
      if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0) {
        snprintf(path, sz, "%s/%s", sub, e->d_name);
        found++;
      }
    }
    closedir(dd);
  }
  closedir(top);
  assert_int_equal(found, 1);
}

static void test_corrupt_entry_is_rebuilt(void **state) {
  cachetest t;
  char entry[1200];
  struct stat st;
  FILE *fp;
  int c;
  (void)state;
  ct_init(&t, "corrupt");
  expect_compiles(&t, "base", NULL, 1);
  only_entry(&t, entry, sizeof entry);
  /* one flipped byte in the middle of the shared object */
  assert_int_equal(stat(entry, &st), 0);
  fp = fopen(entry, "r+b");
  assert_non_null(fp);
  fseek(fp, st.st_size / 2, SEEK_SET);
  c = fgetc(fp);
  fseek(fp, st.st_size / 2, SEEK_SET);
  fputc(c ^ 0x20, fp);
  fclose(fp);
  expect_compiles(&t, "base", NULL, 1);
  expect_compiles(&t, "base", NULL, 0);
  /* truncated */
  only_entry(&t, entry, sizeof entry);
  assert_int_equal(stat(entry, &st), 0);
  assert_int_equal(truncate(entry, st.st_size / 2), 0);
  expect_compiles(&t, "base", NULL, 1);
  /* the trailer only (the payload cut off) */
  only_entry(&t, entry, sizeof entry);
  assert_int_equal(stat(entry, &st), 0);
  {
    unsigned char trailer[64];
    fp = fopen(entry, "rb");
    assert_non_null(fp);
    fseek(fp, st.st_size - 64, SEEK_SET);
    assert_int_equal(fread(trailer, 1, 64, fp), 64);
    fclose(fp);
    fp = fopen(entry, "wb");
    assert_non_null(fp);
    fwrite(trailer, 1, 64, fp);
    fclose(fp);
  }
  expect_compiles(&t, "base", NULL, 1);
  /* empty */
  only_entry(&t, entry, sizeof entry);
  assert_int_equal(truncate(entry, 0), 0);
  expect_compiles(&t, "base", NULL, 1);
  expect_compiles(&t, "base", NULL, 0);
}

static void test_racing_processes_compile_once(void **state) {
  enum { NPROC = 3 };
  cachetest t;
  const char *slow[] = {"ASC_E2E_CC_SLEEP=1", NULL};
  char outfile[NPROC][900], out[8192];
  pid_t pid[NPROC];
  (void)state;
  ct_init(&t, "race");
  for (int i = 0; i < NPROC; i++) {
    snprintf(outfile[i], sizeof outfile[i], "%s/race%d.out", t.dir, i);
    pid[i] = spawn_child(&t, "base", slow, outfile[i]);
  }
  for (int i = 0; i < NPROC; i++) {
    wait_child(pid[i], outfile[i], out, sizeof out);
    if (strstr(out, "ok=1\n") == NULL)
      fail_msg("racing child %d failed:\n%s", i, out);
  }
  assert_int_equal(compiles(&t), 1);
}

static void test_read_only_cache_dir_falls_back(void **state) {
  cachetest t;
  char out[8192];
  int before;
  (void)state;
  ct_init(&t, "readonly");
  assert_int_equal(mkdir(t.cache, 0700), 0);
  assert_int_equal(chmod(t.cache, 0500), 0);
  before = compiles(&t);
  run_child(&t, "base", NULL, out, sizeof out);
  assert_int_equal(compiles(&t) - before, 1);
  if (strstr(out, "libasc: warning: kernel cache ") == NULL ||
      strstr(out, t.cache) == NULL || strstr(out, "unusable") == NULL)
    fail_msg("no warning naming %s:\n%s", t.cache, out);
  /* nothing was written there; the next process compiles again */
  {
    DIR *d = opendir(t.cache);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
      n += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(n, 0);
  }
  expect_compiles(&t, "base", NULL, 1);
  chmod(t.cache, 0700);
}

/* Several processes compile different kernels under a cap smaller than
 * one entry, so each publish evicts the entries the others have just
 * found or built: loading one must never fail because it was evicted. */
static void test_eviction_never_breaks_a_load(void **state) {
  enum { NPROC = 6 };
  cachetest t;
  const char *tiny[] = {"ASC_CACHE_MAX_BYTES=1", NULL};
  char outfile[NPROC][900], mode[NPROC][16], out[8192];
  pid_t pid[NPROC];
  (void)state;
  ct_init(&t, "evict");
  for (int i = 0; i < NPROC; i++) {
    snprintf(outfile[i], sizeof outfile[i], "%s/evict%d.out", t.dir, i);
    snprintf(mode[i], sizeof mode[i], "evict%d", i);
    pid[i] = spawn_child(&t, mode[i], tiny, outfile[i]);
  }
  for (int i = 0; i < NPROC; i++) {
    wait_child(pid[i], outfile[i], out, sizeof out);
    if (strstr(out, "ok=1\n") == NULL)
      fail_msg("child %d failed:\n%s", i, out);
  }
  assert_int_equal(compiles(&t), NPROC * NSPEC);
}

static ascError_t evil_build(void *ud, const char *workdir, char **so) {
  const asc__cc *cc;
  ascError_t e = asc__cc_get(&cc);
  if (e != ascSuccess)
    return e;
  return asc__cc_build(cc, NULL, workdir, "evil", ud, strlen(ud), so);
}

/* Another user's shared object at an entry's path -- with a valid trailer
 * for the key, which anyone can compute -- is never loaded, even by root:
 * its constructor does not run and the kernel is rebuilt. */
static void test_foreign_entry_never_loaded(void **state) {
  cachetest t;
  char entry[1200], marker[900], evil_src[1400], evil_dir[900];
  const char *name;
  asc__cache *c;
  asc__cache_key k;
  char *forged = NULL;
  struct stat st;
  (void)state;
  if (geteuid() != 0) {
    printf("    (skipped: needs root to give a file to a second user)\n");
    return;
  }
  ct_init(&t, "foreign");
  expect_compiles(&t, "base", NULL, 1);
  only_entry(&t, entry, sizeof entry);
  /* The key of the entry, from its name: <cache>/ab/<30 hex>.so */
  name = entry + strlen(entry) - 36;
  memset(&k, 0, sizeof k);
  snprintf(k.hex, sizeof k.hex, "%.2s%.30s", name, name + 3);
  for (int i = 0; i < 16; i++) {
    unsigned v;
    sscanf(k.hex + 2 * i, "%2x", &v);
    k.digest[i] = (unsigned char)v;
  }
  k.final = true;
  snprintf(marker, sizeof marker, "%s/constructor-ran", t.dir);
  snprintf(evil_src, sizeof evil_src,
           "#include <fcntl.h>\n#include <unistd.h>\n"
           "__attribute__((constructor)) static void evil(void) {\n"
           "  close(open(\"%s\", O_WRONLY | O_CREAT, 0644));\n}\n",
           marker);
  snprintf(evil_dir, sizeof evil_dir, "%s/evil-cache", t.dir);
  assert_int_equal(asc__cache_open(&c, evil_dir), ascSuccess);
  assert_int_equal(asc__cache_get_or_build(c, &k, evil_build, evil_src,
                                           &forged),
                   ascSuccess);
  /* Planted: the attacker's file, at the victim's entry path. */
  assert_int_equal(rename(forged, entry), 0);
  assert_int_equal(chown(entry, 65534, 65534), 0);
  asc__free(forged);
  asc__cache_close(c);
  expect_compiles(&t, "base", NULL, 1);
  if (access(marker, F_OK) == 0)
    fail_msg("the planted object's constructor ran");
  assert_int_equal(stat(entry, &st), 0);
  assert_int_equal(st.st_uid, geteuid());
  expect_compiles(&t, "base", NULL, 0);
}

static void write_file(const char *path, const char *text, mode_t mode) {
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  fputs(text, fp);
  fclose(fp);
  assert_int_equal(chmod(path, mode), 0);
}

/* Search-path variables of the C compiler (a header directory whose
 * math.h stops the build, an assembler that fails) are not seen by the
 * compiler: the kernel builds as without them, and the entry is the one a
 * clean environment hits. */
static void test_compiler_environment_cleared(void **state) {
  cachetest t;
  char inc[900], bin[900], path[1000], cpath[1000], cinc[1000], cpath2[1000],
      compiler[1000], libpath[1000];
  const char *poison[7];
  (void)state;
  ct_init(&t, "ccenv");
  snprintf(inc, sizeof inc, "%s/poison-include", t.dir);
  snprintf(bin, sizeof bin, "%s/poison-bin", t.dir);
  assert_int_equal(mkdir(inc, 0700), 0);
  assert_int_equal(mkdir(bin, 0700), 0);
  snprintf(path, sizeof path, "%s/math.h", inc);
  write_file(path, "#error poisoned header from CPATH\n", 0600);
  snprintf(path, sizeof path, "%s/string.h", inc);
  write_file(path, "#error poisoned header from CPATH\n", 0600);
  snprintf(path, sizeof path, "%s/as", bin);
  write_file(path, "#!/bin/sh\necho poisoned assembler >&2\nexit 1\n", 0755);
  snprintf(cpath, sizeof cpath, "CPATH=%s", inc);
  snprintf(cinc, sizeof cinc, "C_INCLUDE_PATH=%s", inc);
  snprintf(cpath2, sizeof cpath2, "GCC_EXEC_PREFIX=%s/", bin);
  snprintf(compiler, sizeof compiler, "COMPILER_PATH=%s", bin);
  snprintf(libpath, sizeof libpath, "LIBRARY_PATH=%s", bin);
  poison[0] = cpath;
  poison[1] = cinc;
  poison[2] = cpath2;
  poison[3] = compiler;
  poison[4] = libpath;
  poison[5] = NULL;
  expect_compiles(&t, "base", poison, 1);
  expect_compiles(&t, "base", NULL, 0);
  expect_compiles(&t, "base", poison, 0);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hit_in_new_process_miss_on_each_key_component),
      cmocka_unit_test(test_corrupt_entry_is_rebuilt),
      cmocka_unit_test(test_racing_processes_compile_once),
      cmocka_unit_test(test_read_only_cache_dir_falls_back),
      cmocka_unit_test(test_compiler_environment_cleared),
      cmocka_unit_test(test_eviction_never_breaks_a_load),
      cmocka_unit_test(test_foreign_entry_never_loaded),
  };
  if (argc == 3 && strcmp(argv[1], "--child") == 0)
    return strncmp(argv[2], "evict", 5) == 0 ? child_evict(atoi(argv[2] + 5))
                                             : child(argv[2]);
  return cmocka_run_group_tests_name("e2e_cache", tests, NULL, NULL);
}
