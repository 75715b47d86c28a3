/*
 * Running the system C compiler.
 *
 * Each run owns a private uv_loop: one pipe carries the child's stdout and
 * stderr (both ends of the child share it, so diagnostics keep their
 * order), one timer bounds the run, one process handle reaps the child.
 * The child is a process-group leader (UV_PROCESS_DETACHED calls setsid),
 * so a timeout kills the compiler driver and everything it started (cc1,
 * as, ld) with one signal.
 *
 * Known compilers live in a process-wide list, because their identity is a
 * property of the process's environment, not of any libasc object.  The
 * list lock is held only to find or insert an entry; `--version` runs under
 * the entry's own lock, so a slow compiler never blocks another one.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "jit/cc.h"
#include "base/env.h"
#include "jit/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <uv.h>

/* SLEEF's ABI version 3 (3.0 to 3.6) has every name emit_helpers.h
 * declares. */
#define ASC_SLEEF_SONAME "libsleef.so.3"

#ifndef ASC_DEFAULT_CC
#define ASC_DEFAULT_CC "cc"
#endif

extern char **environ;

/* Flags every kernel is compiled with.  No -ffast-math: Python float
 * semantics are IEEE (NaN compares, signed zeros, no reassociation).
 * -fno-math-errno only stops libm calls from setting errno, which generated
 * code never reads, and lets sqrt become one instruction.  -ffp-contract=off:
 * a * x + y rounds twice in Python, so it must not become one fma (gcc's
 * GNU-mode default contracts, and -march=native has fma).  -fwrapv:
 * integer arithmetic of every width wraps (numpy, and the fold pass);
 * without it gcc may assume int32/int64 never overflow and fold x + 1 > x
 * to true. */
static const char *const default_flags[] = {
    "-std=gnu11",      "-fPIC",             "-shared", "-march=native",
    "-fno-math-errno", "-ffp-contract=off", "-fwrapv", "-pipe",
};
/* gcc only: with -std=gnu11 gcc keeps _Float16 intermediates in float
 * ("fast" excess precision); generated code relies on every float16
 * operation and cast rounding, as ISO C says.  clang rounds already (and
 * older clang rejects the option). */
static const char *const gcc_flags[] = {"-fexcess-precision=standard"};

/* The lean link: the libraries a kernel's object links, after libm, under
 * -nostdlib (build_flags).  The driver's default link reads the C
 * library's link script and archives, the start files and libgcc_s: 16 of
 * the 27 ms a softmax's link took (gcc 12, docs/latency.md), on every
 * cold compile.  A kernel needs none of them: it has no constructors of
 * its own, it reaches libasc through its ABI table, and its few C library
 * calls (memcpy, memset) bind at load time to the libc every process has
 * (the default version of each symbol).  libgcc's archive stays: the
 * compiler's helpers (complex multiply, 128-bit division) are linked in. */
#define LEAN_LIBS "-lgcc"

/* How long a run may still hold its output pipe open after the child
 * exited (a grandchild that escaped the process group). */
#define AFTER_EXIT_GRACE_MS 2000

struct asc__cc {
  struct asc__cc *next;
  char *spec;           /* the ASC_CC value this entry answers */
  char **prefix;        /* argv words of spec; prefix[0] resolved */
  int nprefix;
  char *path;           /* == prefix[0] */
  char *identity;       /* NULL until computed */
  bool is_clang;        /* from --version */
  char *sleef;          /* SLEEF's shared library as cc finds it, or NULL */
  uv_mutex_t lock;      /* serialises computing identity */
};

static uv_once_t registry_once = UV_ONCE_INIT;
static uv_mutex_t registry_lock;
static asc__cc *registry;
static int registry_ok;

static void registry_init(void) {
  registry_ok = uv_mutex_init(&registry_lock) == 0;
}

/* ------------------------------------------------------------ utilities */

/* Splits s on whitespace into a NULL-terminated vector held in one
 * allocation (pointers followed by the copied words). */
static char **split_words(const char *s, int *count) {
  size_t len = strlen(s), nwords = 0, i;
  bool in = false;
  char **v, *text;
  int n = 0;

  for (i = 0; i < len; i++) {
    bool sp = s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r';
    if (!sp && !in)
      nwords++;
    in = !sp;
  }
  v = asc__malloc((nwords + 1) * sizeof *v + len + 1);
  if (v == NULL)
    return NULL;
  text = (char *)(v + nwords + 1);
  memcpy(text, s, len + 1);
  in = false;
  for (i = 0; i < len; i++) {
    bool sp = text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
              text[i] == '\r';
    if (sp)
      text[i] = '\0';
    else if (!in)
      v[n++] = text + i;
    in = !sp;
  }
  v[n] = NULL;
  *count = n;
  return v;
}

static bool is_executable_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
         access(path, X_OK) == 0;
}

/* path made absolute against the working directory, symlinks kept (a
 * wrapper such as ccache decides what to do from argv[0]). */
static char *absolute(const char *path) {
  char cwd[4096];
  asc__buf b;

  if (path[0] == '/') {
    char *d = asc__strdup(path);
    if (d == NULL)
      errno = ENOMEM;
    return d;
  }
  if (getcwd(cwd, sizeof cwd) == NULL)
    return NULL;
  asc__buf_init(&b);
  asc__buf_printf(&b, "%s/%s", cwd, path);
  if (b.oom) {
    asc__buf_free(&b);
    errno = ENOMEM;
    return NULL;
  }
  return b.data;
}

/* name looked up on PATH as execvp would (used as is when it has a '/');
 * an absolute path, or NULL with errno set. */
static char *resolve_on_path(const char *name) {
  const char *p = getenv("PATH"), *end;
  asc__buf b;

  if (strchr(name, '/') != NULL) {
    if (!is_executable_file(name)) {
      errno = ENOENT;
      return NULL;
    }
    return absolute(name);
  }
  if (p == NULL || *p == '\0')
    p = "/usr/local/bin:/usr/bin:/bin";
  asc__buf_init(&b);
  for (;; p = end + 1) {
    end = strchr(p, ':');
    if (end == NULL)
      end = p + strlen(p);
    b.len = 0;
    if (end == p)
      asc__buf_puts(&b, ".");
    else
      asc__buf_put(&b, p, (size_t)(end - p));
    asc__buf_printf(&b, "/%s", name);
    if (b.oom) {
      asc__buf_free(&b);
      errno = ENOMEM;
      return NULL;
    }
    if (is_executable_file(b.data)) {
      char *r = absolute(b.data);
      asc__buf_free(&b);
      return r;
    }
    if (*end == '\0')
      break;
  }
  asc__buf_free(&b);
  errno = ENOENT;
  return NULL;
}

static asc__env_num cc_timeout_env = {"ASC_CC_TIMEOUT_MS",
                                      ASC_CC_DEFAULT_TIMEOUT_MS, 1,
                                      UINT64_MAX, 0, false};

static uint64_t timeout_ms_from_env(void) {
  return asc__env_u64(&cc_timeout_env);
}

static const char *cc_spec_from_env(void) {
  const char *s = getenv("ASC_CC");
  if (s != NULL && strspn(s, " \t\r\n") != strlen(s))
    return s;
  s = ASC_DEFAULT_CC;
  return *s ? s : "cc";
}

/* ------------------------------------------------------- child processes */

typedef struct run_state {
  uv_loop_t loop;
  uv_process_t proc;
  uv_pipe_t out;
  uv_timer_t timer;
  uv_async_t cancel;             /* asc__run_cancel's wake-up */
  asc__run_canceller *canceller; /* NULL: not registered */
  asc__buf *buf;
  bool pipe_open, proc_open, timer_open, cancel_open;
  bool exited, timed_out, truncated, cancelled;
  int status;
  char rbuf[16384];
} run_state;

static void on_close(uv_handle_t *h) { ASC_UNUSED(h); }

/* The calling thread's canceller (asc__run_use_canceller). */
static _Thread_local asc__run_canceller *thread_canceller;

static void finish_if_done(run_state *r) {
  if (r->exited && !r->pipe_open && r->timer_open) {
    uv_close((uv_handle_t *)&r->timer, on_close);
    r->timer_open = false;
  }
  if (r->exited && r->cancel_open) {
    /* unregistered first: asc__run_cancel never wakes a closed handle */
    uv_mutex_lock(&r->canceller->lock);
    r->canceller->run = NULL;
    uv_mutex_unlock(&r->canceller->lock);
    uv_close((uv_handle_t *)&r->cancel, on_close);
    r->cancel_open = false;
  }
}

static void close_pipe(run_state *r) {
  if (r->pipe_open) {
    uv_close((uv_handle_t *)&r->out, on_close);
    r->pipe_open = false;
  }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  run_state *r = h->data;
  ASC_UNUSED(suggested);
  *buf = uv_buf_init(r->rbuf, sizeof r->rbuf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  run_state *r = s->data;

  if (n > 0) {
    size_t keep = (size_t)n;
    if (r->buf->len >= ASC_CC_MAX_OUTPUT) {
      keep = 0;
    } else if (keep > ASC_CC_MAX_OUTPUT - r->buf->len) {
      keep = ASC_CC_MAX_OUTPUT - r->buf->len;
    }
    if (keep < (size_t)n)
      r->truncated = true;
    asc__buf_put(r->buf, buf->base, keep);
  } else if (n < 0) {
    close_pipe(r);
    finish_if_done(r);
  }
}

static void on_timer(uv_timer_t *t);

static void on_exit_cb(uv_process_t *p, int64_t exit_status, int term_signal) {
  run_state *r = p->data;

  r->exited = true;
  r->status = term_signal ? 128 + term_signal : (int)exit_status;
  uv_close((uv_handle_t *)p, on_close);
  r->proc_open = false;
  if (r->pipe_open && r->timer_open) {
    /* Normally EOF is already queued; give escaped grandchildren a moment,
     * then stop listening. */
    uv_timer_stop(&r->timer);
    uv_timer_start(&r->timer, on_timer, AFTER_EXIT_GRACE_MS, 0);
  }
  finish_if_done(r);
}

static void on_cancel(uv_async_t *a) {
  run_state *r = a->data;

  if (!r->exited) {
    r->cancelled = true;
    uv_kill(-r->proc.pid, SIGKILL);
    uv_process_kill(&r->proc, SIGKILL);
  }
}

void asc__run_canceller_init(asc__run_canceller *c) {
  uv_mutex_init(&c->lock);
  c->run = NULL;
  c->cancelled = false;
}

void asc__run_use_canceller(asc__run_canceller *c) { thread_canceller = c; }

void asc__run_cancel(asc__run_canceller *c) {
  uv_mutex_lock(&c->lock);
  c->cancelled = true;
  if (c->run != NULL)
    uv_async_send(&((run_state *)c->run)->cancel);
  uv_mutex_unlock(&c->lock);
}

static void on_timer(uv_timer_t *t) {
  run_state *r = t->data;

  if (!r->exited) {
    r->timed_out = true;
    /* The whole group: the driver and the programs it started. */
    uv_kill(-r->proc.pid, SIGKILL);
    uv_process_kill(&r->proc, SIGKILL);
    uv_timer_start(t, on_timer, AFTER_EXIT_GRACE_MS, 0);
    return;
  }
  close_pipe(r);
  finish_if_done(r);
}

/* Variables the compiler driver, the preprocessor or the linker read that
 * change what is built (search paths, extra options, the linker's
 * emulation and rpath) or make it write elsewhere.  The cache key does not
 * hash the environment, so the child must not see them: one process's
 * CPATH would otherwise poison the entry every later process loads
 * (docs/cache.md).  An entry ending in '_' is a prefix: gcc's GCC_* and
 * clang's CCC_*, CC_PRINT_*, CC_LOG_* families. */
static const char *const cleared_env[] = {
    "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
    "OBJCPLUS_INCLUDE_PATH", "COMPILER_PATH", "LIBRARY_PATH",
    "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "LD_RUN_PATH",
    "LDEMULATION", "COLLECT_GCC", "COLLECT_GCC_OPTIONS", "COLLECT_LTO_WRAPPER",
    "QA_OVERRIDE_GCC3_OPTIONS", "SDKROOT", "MACOSX_DEPLOYMENT_TARGET",
    "IPHONEOS_DEPLOYMENT_TARGET", "LC_ALL",
    "GCC_", "CCC_", "CC_PRINT_", "CC_LOG_", "CLANG_", NULL};

static bool env_cleared(const char *entry) {
  size_t len = strcspn(entry, "=");
  int i;

  for (i = 0; cleared_env[i] != NULL; i++) {
    size_t n = strlen(cleared_env[i]);
    if (cleared_env[i][n - 1] == '_' ? strncmp(entry, cleared_env[i], n) == 0
                                     : n == len &&
                                           memcmp(entry, cleared_env[i], n) == 0)
      return true;
  }
  return false;
}

/* Builds the child's environment: ours without cleared_env, with LC_ALL=C
 * so that diagnostics and `--version` do not depend on the caller's
 * locale. */
static char **child_env(void) {
  size_t n = 0, i, j = 0;
  char **env;

  while (environ != NULL && environ[n] != NULL)
    n++;
  env = asc__malloc((n + 2) * sizeof *env);
  if (env == NULL)
    return NULL;
  for (i = 0; i < n; i++)
    if (!env_cleared(environ[i]))
      env[j++] = environ[i];
  env[j++] = (char *)"LC_ALL=C";
  env[j] = NULL;
  return env;
}

ascError_t asc__run_process(char *const *argv, uint64_t timeout_ms,
                            asc__buf *out, int *status) {
  run_state *r;
  uv_process_options_t o;
  uv_stdio_container_t stdio[3];
  uv_file fds[2] = {-1, -1};
  char **env;
  ascError_t err = ascSuccess;
  int rc;

  *status = -1;
  if (thread_canceller != NULL) {
    bool cancelled;
    uv_mutex_lock(&thread_canceller->lock);
    cancelled = thread_canceller->cancelled;
    uv_mutex_unlock(&thread_canceller->lock);
    if (cancelled)
      return asc__error(ascErrorCancelled, "'%s' not run: cancelled",
                        argv[0]);
  }
  r = asc__calloc(1, sizeof *r);
  env = child_env();
  if (r == NULL || env == NULL) {
    asc__free(r);
    asc__free(env);
    return asc__error(ascErrorOutOfMemory, "out of memory running %s",
                      argv[0]);
  }
  r->buf = out;
  rc = uv_loop_init(&r->loop);
  if (rc != 0) {
    asc__free(r);
    asc__free(env);
    return asc__error(ascErrorInternal, "cannot run %s: uv_loop_init: %s",
                      argv[0], uv_strerror(rc));
  }
  rc = uv_pipe(fds, 0, 0);
  if (rc == 0)
    rc = uv_pipe_init(&r->loop, &r->out, 0);
  if (rc == 0) {
    r->out.data = r;
    rc = uv_pipe_open(&r->out, fds[0]);
    r->pipe_open = true;
    if (rc != 0)
      close(fds[0]);
    fds[0] = -1;
  }
  if (rc == 0) {
    memset(&o, 0, sizeof o);
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = fds[1];
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = fds[1];
    o.file = argv[0];
    o.args = (char **)argv;
    o.env = env;
    o.stdio = stdio;
    o.stdio_count = 3;
    o.exit_cb = on_exit_cb;
    o.flags = UV_PROCESS_DETACHED;
    r->proc.data = r;
    rc = uv_spawn(&r->loop, &r->proc, &o);
    if (rc == 0)
      r->proc_open = true;
    else
      uv_close((uv_handle_t *)&r->proc, on_close);
  }
  if (fds[1] >= 0)
    close(fds[1]);
  if (fds[0] >= 0)
    close(fds[0]);
  if (rc != 0) {
    err = asc__error(ascErrorInternal, "cannot run '%s': %s", argv[0],
                     uv_strerror(rc));
    close_pipe(r);
  } else {
    uv_timer_init(&r->loop, &r->timer);
    r->timer.data = r;
    r->timer_open = true;
    uv_timer_start(&r->timer, on_timer, timeout_ms, 0);
    uv_read_start((uv_stream_t *)&r->out, on_alloc, on_read);
    if (thread_canceller != NULL &&
        uv_async_init(&r->loop, &r->cancel, on_cancel) == 0) {
      bool now;
      r->cancel.data = r;
      r->cancel_open = true;
      r->canceller = thread_canceller;
      uv_mutex_lock(&r->canceller->lock);
      r->canceller->run = r;
      now = r->canceller->cancelled;
      uv_mutex_unlock(&r->canceller->lock);
      if (now)
        on_cancel(&r->cancel);
    }
  }
  uv_run(&r->loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&r->loop) != 0 && err == ascSuccess)
    err = asc__error(ascErrorInternal, "running %s left handles open",
                     argv[0]);
  if (err == ascSuccess) {
    *status = r->status;
    if (r->truncated)
      asc__buf_puts(out, "\n[... output truncated]\n");
    if (out->oom)
      err = asc__error(ascErrorOutOfMemory,
                       "out of memory capturing the output of %s", argv[0]);
    else if (r->cancelled)
      err = asc__error(ascErrorCancelled, "'%s' cancelled", argv[0]);
    else if (r->timed_out)
      err = asc__error(ascErrorTimeout, "'%s' timed out after %llu ms",
                       argv[0], (unsigned long long)timeout_ms);
  }
  asc__free(env);
  asc__free(r);
  return err;
}

/* ------------------------------------------------------------- compilers */

static void cc_free(asc__cc *cc) {
  if (cc == NULL)
    return;
  asc__free(cc->spec);
  asc__free(cc->prefix);
  asc__free(cc->path);
  asc__free(cc->identity);
  asc__free(cc->sleef);
  asc__free(cc);
}

/* A new, unidentified entry for spec. */
static ascError_t cc_new(asc__cc **out, const char *spec) {
  asc__cc *cc = asc__calloc(1, sizeof *cc);

  *out = NULL;
  if (cc == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  cc->spec = asc__strdup(spec);
  cc->prefix = cc->spec ? split_words(spec, &cc->nprefix) : NULL;
  if (cc->prefix == NULL) {
    cc_free(cc);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  if (uv_mutex_init(&cc->lock) != 0) {
    cc_free(cc);
    return asc__error(ascErrorInternal, "cannot create a mutex");
  }
  *out = cc;
  return ascSuccess;
}

/* Where cc finds SLEEF's shared library (`-print-file-name`, which
 * answers the bare name when it finds nothing), or NULL.  Only the
 * runtime library is needed: generated code declares the few SLEEF
 * functions it calls itself (emit_helpers.h), so no header is read. */
static char *find_sleef(const asc__cc *cc) {
#if defined(__x86_64__)
  char **argv;
  asc__buf out;
  char *r = NULL;
  int status, i;

  argv = asc__malloc(((size_t)cc->nprefix + 2) * sizeof *argv);
  if (argv == NULL)
    return NULL;
  argv[0] = cc->path;
  for (i = 1; i < cc->nprefix; i++)
    argv[i] = cc->prefix[i];
  argv[i++] = (char *)"-print-file-name=" ASC_SLEEF_SONAME;
  argv[i] = NULL;
  asc__buf_init(&out);
  if (asc__run_process(argv, timeout_ms_from_env(), &out, &status) ==
          ascSuccess &&
      status == 0 && out.data != NULL) {
    out.data[strcspn(out.data, "\r\n")] = '\0';
    if (out.data[0] == '/' && access(out.data, R_OK) == 0)
      r = realpath(out.data, NULL);
  }
  asc__buf_free(&out);
  asc__free(argv);
  if (r != NULL) {
    char *d = asc__strdup(r);
    free(r);
    r = d;
  }
  return r;
#else
  ASC_UNUSED(cc);
  return NULL; /* emit_helpers.h declares SLEEF's x86 variants only */
#endif
}

/* SLEEF's library if kernels use it now: found by cc, and not turned off
 * with ASC_VECMATH=libm (docs/vecmath.md). */
static const char *vecmath_lib(const asc__cc *cc) {
  const char *v = getenv("ASC_VECMATH");
  if (v != NULL && strcmp(v, "libm") == 0)
    return NULL;
  return cc->sleef;
}

/* Resolves the program and runs `--version`.  Called with cc->lock held. */
static ascError_t cc_identify(asc__cc *cc) {
  char **argv;
  char *real;
  asc__buf out, id;
  ascError_t err;
  int status, i;

  if (cc->path == NULL) {
    cc->path = resolve_on_path(cc->prefix[0]);
    if (cc->path == NULL) {
      if (errno == ENOMEM)
        return asc__error(ascErrorOutOfMemory, "out of memory");
      return asc__error(ascErrorInternal,
                        "C compiler '%s' not found (set ASC_CC to a C "
                        "compiler)",
                        cc->prefix[0]);
    }
  }
  argv = asc__malloc(((size_t)cc->nprefix + 2) * sizeof *argv);
  if (argv == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  argv[0] = cc->path;
  for (i = 1; i < cc->nprefix; i++)
    argv[i] = cc->prefix[i];
  argv[i++] = (char *)"--version";
  argv[i] = NULL;
  asc__buf_init(&out);
  err = asc__run_process(argv, timeout_ms_from_env(), &out, &status);
  asc__free(argv);
  if (err == ascSuccess && status != 0)
    err = asc__error(ascErrorInternal,
                     "C compiler '%s' failed to report its version (exit "
                     "status %d):\n%s",
                     cc->path, status, asc__buf_str(&out));
  if (err != ascSuccess) {
    asc__buf_free(&out);
    return err;
  }
  asc__buf_init(&id);
  real = realpath(cc->path, NULL);
  asc__buf_printf(&id, "%s\n%s\n", cc->spec, real ? real : cc->path);
  free(real);
  asc__buf_put(&id, out.data ? out.data : "", out.len);
  cc->is_clang = out.data != NULL && strstr(out.data, "clang") != NULL;
  asc__buf_free(&out);
  if (id.oom) {
    asc__buf_free(&id);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  cc->sleef = find_sleef(cc);
  cc->identity = id.data ? id.data : asc__strdup("");
  if (cc->identity == NULL)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  return ascSuccess;
}

ascError_t asc__cc_get(const asc__cc **out) {
  const char *spec = cc_spec_from_env();
  asc__cc *cc, *fresh = NULL;
  ascError_t err;

  *out = NULL;
  uv_once(&registry_once, registry_init);
  if (!registry_ok)
    return asc__error(ascErrorInternal, "cannot create a mutex");
  uv_mutex_lock(&registry_lock);
  for (cc = registry; cc != NULL; cc = cc->next)
    if (strcmp(cc->spec, spec) == 0)
      break;
  uv_mutex_unlock(&registry_lock);
  if (cc == NULL) {
    err = cc_new(&fresh, spec);
    if (err != ascSuccess)
      return err;
    uv_mutex_lock(&registry_lock);
    for (cc = registry; cc != NULL; cc = cc->next)
      if (strcmp(cc->spec, spec) == 0)
        break;
    if (cc == NULL) {
      fresh->next = registry;
      registry = fresh;
      cc = fresh;
      fresh = NULL;
    }
    uv_mutex_unlock(&registry_lock);
    if (fresh != NULL) {
      uv_mutex_destroy(&fresh->lock);
      cc_free(fresh);
    }
  }
  /* A failed identification is not remembered: the next call retries (the
   * user may install the compiler or fix PATH meanwhile). */
  uv_mutex_lock(&cc->lock);
  err = cc->identity != NULL ? ascSuccess : cc_identify(cc);
  uv_mutex_unlock(&cc->lock);
  if (err == ascSuccess)
    *out = cc;
  return err;
}

bool asc__cc_stamp(asc__buf *out) {
  const char *spec = cc_spec_from_env();
  const char *cflags = getenv("ASC_CFLAGS"), *vm = getenv("ASC_VECMATH");
  char **words;
  int n, i;
  bool ok = true;

  words = split_words(spec, &n);
  if (words == NULL || n == 0) {
    asc__free(words);
    return false;
  }
  asc__buf_printf(out, "%s\n", spec);
  /* Every word that names a program: "ccache gcc" runs gcc too.  A
   * reinstalled or upgraded program is a new file (inode, change time). */
  for (i = 0; i < n && ok; i++) {
    char *path = words[i][0] != '-' ? resolve_on_path(words[i]) : NULL;
    char *real = path != NULL ? realpath(path, NULL) : NULL;
    struct stat st;
    if (real != NULL && stat(real, &st) == 0)
      asc__buf_printf(out, "%s\n%s\n%llu %llu %lld %lld.%09ld %lld.%09ld\n",
                      path, real, (unsigned long long)st.st_dev,
                      (unsigned long long)st.st_ino, (long long)st.st_size,
                      (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                      (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
    else if (i == 0)
      ok = false; /* no compiler: the full path reports it */
    else
      asc__buf_printf(out, "%s\n", words[i]);
    free(real);
    asc__free(path);
  }
  asc__free(words);
  /* What the flags are made of besides the options and the compiler's
   * kind (asc__cc_flags); unset and empty differ. */
  asc__buf_printf(out, "%c%s\n%c%s\n", cflags ? '=' : '-',
                  cflags ? cflags : "", vm ? '=' : '-', vm ? vm : "");
  return ok && !out->oom;
}

const char *asc__cc_vecmath_lib(const asc__cc *cc) { return vecmath_lib(cc); }

const char *asc__cc_path(const asc__cc *cc) { return cc->path; }

const char *asc__cc_identity(const asc__cc *cc) { return cc->identity; }

/* -------------------------------------------------------------- flags */

#define ASC_CC_MARCH_MAX 128

/* The flags that grant the ASC_FASTMATH_* bits of mask (docs/fastmath.md),
 * appended to argv at n (argv NULL: count only); returns the new count.
 * They follow the defaults, so -ffp-contract=fast overrides =off.  Each
 * bit gets what both compilers honour, never more than it permits: gcc
 * has no separate switch for nnan, ninf or afn, so there nnan and ninf
 * only take effect together (-ffinite-math-only), and afn only with
 * reassoc, nsz and arcp (-funsafe-math-optimizations implies those). */
static int fastmath_flags(const asc__cc *cc, unsigned mask, const char **argv,
                          int n) {
  const char *f[12];
  int k = 0;
  const unsigned finite = ASC_FASTMATH_NNAN | ASC_FASTMATH_NINF;
  const unsigned unsafe = ASC_FASTMATH_REASSOC | ASC_FASTMATH_NSZ |
                          ASC_FASTMATH_ARCP | ASC_FASTMATH_AFN;

  if (mask == ASC_FASTMATH_ALL) {
    f[k++] = "-ffast-math";
    f[k++] = "-ffp-contract=fast";
  } else if (mask != 0) {
    if (mask & ASC_FASTMATH_CONTRACT)
      f[k++] = "-ffp-contract=fast";
    if (mask & ASC_FASTMATH_REASSOC) {
      /* Both compilers reassociate only without signed zeros and traps. */
      f[k++] = "-fassociative-math";
      f[k++] = "-fno-trapping-math";
    }
    if (mask & (ASC_FASTMATH_REASSOC | ASC_FASTMATH_NSZ))
      f[k++] = "-fno-signed-zeros";
    if (mask & ASC_FASTMATH_ARCP)
      f[k++] = "-freciprocal-math";
    if ((mask & finite) == finite) {
      f[k++] = "-ffinite-math-only";
    } else if (cc->is_clang) {
      if (mask & ASC_FASTMATH_NNAN)
        f[k++] = "-fno-honor-nans";
      if (mask & ASC_FASTMATH_NINF)
        f[k++] = "-fno-honor-infinities";
    }
    if (cc->is_clang && (mask & ASC_FASTMATH_AFN))
      f[k++] = "-fapprox-func";
    else if ((mask & unsafe) == unsafe)
      f[k++] = "-funsafe-math-optimizations";
  }
  /* glibc's math.h declares the vector variants of expf, sinf, ... (libmvec,
   * within 4 ulp) only under __FAST_MATH__, which gcc defines with
   * -ffast-math only when excess precision is "fast"; generated code needs
   * -fexcess-precision=standard (float16), so afn says it outright. */
  if (!cc->is_clang && (mask & ASC_FASTMATH_AFN))
    f[k++] = "-D__FAST_MATH__=1";
  for (int i = 0; i < k; i++) {
    if (argv)
      argv[n] = f[i];
    n++;
  }
  return n;
}

/* Appends the flags of a compilation with opts to argv (NULL: count only)
 * and returns how many there are.  words holds ASC_CFLAGS, vm what
 * vecmath_lib said (read once per compilation: the environment may
 * change between the count and the fill). */
static int build_flags(const asc__cc *cc, const asc__cc_opts *opts,
                       char **words, const char *vm, const char **argv,
                       char *olevel, char *march) {
  int n = 0, level = -1;
  size_t i;

  if (opts != NULL)
    level = opts->opt_level;
  if (level < 0 || level > 3)
    level = opts != NULL && opts->debug ? 1 : 3;
  snprintf(olevel, 4, "-O%d", level);
  if (argv)
    argv[n] = olevel;
  n++;
  if (opts != NULL && opts->debug) {
    if (argv)
      argv[n] = "-g";
    n++;
  }
  for (i = 0; i < ASC_ARRAY_SIZE(default_flags); i++) {
    const char *f = default_flags[i];
    if (strcmp(f, "-march=native") == 0 && opts != NULL &&
        opts->march != NULL) {
      if (opts->march[0] == '\0')
        continue;
      snprintf(march, ASC_CC_MARCH_MAX, "-march=%s", opts->march);
      f = march;
    }
    if (argv)
      argv[n] = f;
    n++;
  }
  if (opts != NULL)
    n = fastmath_flags(cc, opts->fastmath & ASC_FASTMATH_ALL, argv, n);
  for (i = 0; !cc->is_clang && i < ASC_ARRAY_SIZE(gcc_flags); i++) {
    if (argv)
      argv[n] = gcc_flags[i];
    n++;
  }
  if (vm != NULL) {
    if (argv)
      argv[n] = "-DASC_VECMATH_SLEEF=1";
    n++;
  }
  for (i = 0; words != NULL && words[i] != NULL; i++) {
    if (argv)
      argv[n] = words[i];
    n++;
  }
  /* The lean link (see LEAN_LIBS): without ASC_CFLAGS only, whose flags
   * may need the driver's own libraries (a sanitizer's runtime). */
  if (words == NULL) {
    if (argv)
      argv[n] = "-nostdlib";
    n++;
  }
  return n;
}

static char **cflags_from_env(bool *oom) {
  const char *s = getenv("ASC_CFLAGS");
  char **w;
  int n;

  *oom = false;
  if (s == NULL)
    return NULL;
  w = split_words(s, &n);
  if (w == NULL)
    *oom = true;
  return w;
}

void asc__cc_flags(const asc__cc *cc, const asc__cc_opts *opts,
                   asc__buf *out) {
  bool oom;
  char **words = cflags_from_env(&oom);
  const char **argv;
  char olevel[4], march[ASC_CC_MARCH_MAX];
  const char *vm = vecmath_lib(cc);
  int n, i;

  if (oom) {
    out->oom = true;
    return;
  }
  n = build_flags(cc, opts, words, vm, NULL, olevel, march);
  argv = asc__malloc((size_t)n * sizeof *argv);
  if (argv == NULL) {
    out->oom = true;
  } else {
    build_flags(cc, opts, words, vm, argv, olevel, march);
    for (i = 0; i < n; i++) {
      asc__buf_puts(out, argv[i]);
      asc__buf_puts(out, "\n");
    }
    /* The library linked after the source (asc__cc_compile): which one
     * is part of the cache key. */
    if (vm != NULL)
      asc__buf_printf(out, "%s\n", vm);
  }
  asc__free(argv);
  asc__free(words);
}

/* ----------------------------------------------------------- target CPU */

static uv_once_t cpu_once = UV_ONCE_INIT;
static char cpu_features[8192];

/* The machine name and the kernel's feature line for the first CPU
 * ("flags" on x86, "Features" on Arm, "isa" on RISC-V and POWER).  Read
 * with plain stdio into a fixed buffer: it runs once and must not fail. */
static void cpu_features_init(void) {
  struct utsname u;
  size_t n = 0;
  FILE *f;
  char line[4096];

  if (uname(&u) == 0)
    n = (size_t)snprintf(cpu_features, sizeof cpu_features, "%s\n",
                         u.machine);
  f = fopen("/proc/cpuinfo", "re");
  if (f == NULL)
    return;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0 ||
        strncmp(line, "isa", 3) == 0 || strncmp(line, "cpu\t", 4) == 0 ||
        strncmp(line, "cpu ", 4) == 0) {
      if (n < sizeof cpu_features)
        n += (size_t)snprintf(cpu_features + n, sizeof cpu_features - n,
                              "%s", line);
    }
    if (line[0] == '\n')
      break;  /* first processor only */
  }
  fclose(f);
}

const char *asc__cc_cpu_features(void) {
  uv_once(&cpu_once, cpu_features_init);
  return cpu_features;
}

/* ------------------------------------------------------------ compiling */

/* A build in two parts: the shell runs the compiler twice at once on
 * the same file, -DASC_PART=1 (the kernels' entries and tables) and
 * -DASC_PART=2 (their parallel bodies, hidden symbols the entries call
 * through), then links the two objects.  One process group, so the run's
 * time limit and cancellation reach every compiler it started.  Its
 * arguments: the C file, the two objects, the shared object, three
 * libraries (an empty one is none), then the compiler and its flags. */
static const char split_script[] =
    "c=$1 a=$2 b=$3 so=$4 l1=$5 l2=$6 l3=$7; shift 7\n"
    "\"$@\" -DASC_PART=1 -c -o \"$a\" \"$c\" & p=$!\n"
    "\"$@\" -DASC_PART=2 -c -o \"$b\" \"$c\"; s=$?\n"
    "wait $p || exit 1\n"
    "[ $s -eq 0 ] || exit $s\n"
    "exec \"$@\" -o \"$so\" \"$a\" \"$b\" ${l1:+\"$l1\"} ${l2:+\"$l2\"} "
    "${l3:+\"$l3\"}\n";

/* asc__cc_compile, in two parts when o1 and o2 (the objects' paths) are
 * not NULL. */
static ascError_t cc_compile(const asc__cc *cc, const asc__cc_opts *opts,
                             const char *c_path, const char *so_path,
                             const char *o1, const char *o2,
                             asc__buf *diag) {
  bool oom;
  char **words = cflags_from_env(&oom);
  const char **argv;
  char olevel[4], march[ASC_CC_MARCH_MAX];
  const char *vm = vecmath_lib(cc);
  int nflags, n, i, status;
  ascError_t err;

  if (oom)
    return asc__error(ascErrorOutOfMemory, "out of memory");
  nflags = build_flags(cc, opts, words, vm, NULL, olevel, march);
  argv = asc__malloc(((size_t)cc->nprefix + (size_t)nflags + 16) *
                     sizeof *argv);
  if (argv == NULL) {
    asc__free(words);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  n = 0;
  if (o1 != NULL) {
    argv[n++] = "/bin/sh";
    argv[n++] = "-c";
    argv[n++] = split_script;
    argv[n++] = "asc-cc";
    argv[n++] = c_path;
    argv[n++] = o1;
    argv[n++] = o2;
    argv[n++] = so_path;
    argv[n++] = vm != NULL ? vm : "";
    argv[n++] = "-lm";
    argv[n++] = words == NULL ? LEAN_LIBS : "";
  }
  argv[n++] = cc->path;
  for (i = 1; i < cc->nprefix; i++)
    argv[n++] = cc->prefix[i];
  n += build_flags(cc, opts, words, vm, argv + n, olevel, march);
  if (o1 == NULL) {
    argv[n++] = "-o";
    argv[n++] = so_path;
    argv[n++] = c_path;
    if (vm != NULL)
      argv[n++] = vm;
    argv[n++] = "-lm";
    if (words == NULL)
      argv[n++] = LEAN_LIBS;
  }
  argv[n] = NULL;
  err = asc__run_process((char *const *)argv, timeout_ms_from_env(), diag,
                         &status);
  if (err == ascErrorTimeout)
    err = asc__error(ascErrorTimeout,
                     "C compiler '%s' timed out after %llu ms compiling %s "
                     "(ASC_CC_TIMEOUT_MS)",
                     cc->path, (unsigned long long)timeout_ms_from_env(),
                     c_path);
  else if (err == ascSuccess && status != 0)
    err = asc__error(ascErrorInternal,
                     "C compiler '%s' failed (exit status %d) on %s",
                     cc->path, status, c_path);
  asc__free(argv);
  asc__free(words);
  return err;
}

ascError_t asc__cc_compile(const asc__cc *cc, const asc__cc_opts *opts,
                           const char *c_path, const char *so_path,
                           asc__buf *diag) {
  return cc_compile(cc, opts, c_path, so_path, NULL, NULL, diag);
}

/* Below this much C a module builds in one compilation: the second
 * process, the helpers' text read twice and the link cost more than half
 * the kernels' own code saves (docs/latency.md, "A build in two parts"). */
#define SPLIT_MIN_BYTES ((size_t)96 << 10)

/* Whether text builds in two parts: generated with parallel bodies, large
 * enough, ASC_CFLAGS unset (its flags may make anything but a shared
 * object), two usable CPUs, and ASC_CC_JOBS not 1.  The second half
 * costs CPU time of its own (the helpers parsed again, the link: about a
 * sixth more for the 30-line kernel), which an idle CPU repays in wall
 * time; a machine whose CPUs are all busy would rather have one
 * compilation, and ASC_CC_JOBS=1 says so.  (Neither the load average,
 * which lags a minute behind, nor the count of threads ready to run,
 * which kernel threads make flicker between 1 and 2 on an idle machine,
 * tells an idle machine from a busy one well enough: docs/latency.md.) */
static bool build_split(const char *text, size_t len) {
  static asc__env_num jobs_env = {"ASC_CC_JOBS", 2, 1, 2, 0, false};
  cpu_set_t set;
  if (len < SPLIT_MIN_BYTES || getenv("ASC_CFLAGS") != NULL ||
      asc__env_u64(&jobs_env) < 2 ||
      strstr(text, "\n#if ASC_PART != 1\n") == NULL ||
      access("/bin/sh", X_OK) != 0)
    return false;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1;
}

/* Whether compiler output says it could not write its files (the child
 * runs with LC_ALL=C, so these are the C library's English messages). */
static bool out_of_space(const char *diag) {
  return strstr(diag, "No space left on device") != NULL ||
         strstr(diag, "Disk quota exceeded") != NULL ||
         strstr(diag, "Read-only file system") != NULL;
}

ascError_t asc__cc_build(const asc__cc *cc, const asc__cc_opts *opts,
                         const char *dir, const char *name, const char *text,
                         size_t len, char **so_path) {
  asc__buf c_path, o_path, p1, p2, diag;
  ascError_t err = ascSuccess;
  bool split = build_split(text, len);
  int fd, e;

  if (so_path != NULL)
    *so_path = NULL;
  asc__buf_init(&c_path);
  asc__buf_init(&o_path);
  asc__buf_init(&p1);
  asc__buf_init(&p2);
  asc__buf_init(&diag);
  asc__buf_printf(&c_path, "%s/%s.c", dir, name);
  asc__buf_printf(&o_path, "%s/%s.so", dir, name);
  asc__buf_printf(&p1, "%s/%s.1.o", dir, name);
  asc__buf_printf(&p2, "%s/%s.2.o", dir, name);
  if (c_path.oom || o_path.oom || p1.oom || p2.oom) {
    err = asc__error(ascErrorOutOfMemory, "out of memory");
    goto done;
  }
  fd = open(c_path.data,
            O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    e = errno;
  else if ((e = asc__write_all(fd, text, len)) != 0)
    close(fd);
  else if (close(fd) != 0)
    e = errno;
  if (e != 0) {
    unlink(c_path.data);
    err = asc__error(ascErrorCache, "cannot write %s: %s", c_path.data,
                     strerror(e));
    goto done;
  }
  err = cc_compile(cc, opts, c_path.data, o_path.data,
                   split ? p1.data : NULL, split ? p2.data : NULL, &diag);
  if (split) {
    unlink(p1.data);
    unlink(p2.data);
  }
  if (err == ascErrorInternal && out_of_space(asc__buf_str(&diag))) {
    /* Not the generated code's fault: let the cache move elsewhere. */
    err = asc__error(ascErrorCache, "C compiler could not write in %s:\n%s",
                     dir, asc__buf_str(&diag));
    unlink(c_path.data);
    unlink(o_path.data);
    goto done;
  }
  if (err == ascErrorInternal || err == ascErrorTimeout) {
    /* Keep the generated file; the message leads with what happened. */
    asc__buf msg;
    asc__buf_init(&msg);
    asc__buf_printf(&msg, "%s\ngenerated C kept at %s\n",
                    ascGetLastErrorMessage(), c_path.data);
    asc__buf_put(&msg, diag.data ? diag.data : "", diag.len);
    if (msg.oom)
      err = asc__error(ascErrorOutOfMemory, "out of memory");
    else
      asc__error_text(err, msg.data);
    asc__buf_free(&msg);
    unlink(o_path.data);
    goto done;
  }
  if (err != ascSuccess) {
    /* a cancelled build (process exit) leaves nothing to inspect */
    if (err == ascErrorCancelled)
      unlink(c_path.data);
    unlink(o_path.data);
    goto done;
  }
  unlink(c_path.data);
  if (so_path != NULL) {
    *so_path = o_path.data;
    o_path.data = NULL;
  }
done:
  asc__buf_free(&c_path);
  asc__buf_free(&o_path);
  asc__buf_free(&p1);
  asc__buf_free(&p2);
  asc__buf_free(&diag);
  return err;
}
