#define _GNU_SOURCE /* setresuid */
/* The kernel cache: keys, hits and misses, corruption, concurrency,
 * unusable directories, eviction, allocation failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "jit/cache.h"
#include "jit/cc.h"
#include "runtime/runtime.h"
#include "jit/jit.h"

static char base[4096];
static int dir_seq;

/* A fresh, not yet existing cache directory path under base. */
static void new_dir(char *out, size_t n) {
  snprintf(out, n, "%s/c%d", base, dir_seq++);
}

static int setup(void **state) {
  ASC_UNUSED(state);
  snprintf(base, sizeof base, "%s/test-tmp-cache-XXXXXX", ASC_BINARY_DIR);
  if (mkdtemp(base) == NULL)
    return -1;
  chmod(base, 0755); /* the second user's processes reach their dirs */
  unsetenv("ASC_CACHE_MAX_BYTES");
  return 0;
}

static int teardown(void **state) {
  char *argv[] = {(char *)"rm", (char *)"-rf", base, NULL};
  asc__buf out;
  int st;
  ASC_UNUSED(state);
  chmod(base, 0700);
  asc__buf_init(&out);
  asc__run_process(argv, 20000, &out, &st);
  asc__buf_free(&out);
  return 0;
}

/* ------------------------------------------------------------- builders */

typedef struct fake {
  atomic_int calls;
  atomic_int running, most;   /* builds under way now; at most at once */
  const char *content;      /* bytes written as the "shared object" */
  unsigned delay_ms;
  const char *counter;      /* file that gets one line per build */
  ascError_t fail;          /* returned instead of building */
} fake;

static ascError_t fake_build(void *ud, const char *workdir, char **so) {
  fake *f = ud;
  char path[4200];
  FILE *o;

  atomic_fetch_add(&f->calls, 1);
  {
    int now = atomic_fetch_add(&f->running, 1) + 1;
    int most = atomic_load(&f->most);
    while (now > most && !atomic_compare_exchange_weak(&f->most, &most, now))
      ;
  }
  if (f->delay_ms)
    uv_sleep(f->delay_ms);
  atomic_fetch_sub(&f->running, 1);
  if (f->counter != NULL) {
    int fd = open(f->counter, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd >= 0) {
      ssize_t w = write(fd, "x\n", 2);
      ASC_UNUSED(w);
      close(fd);
    }
  }
  snprintf(path, sizeof path, "%s/kept.c", workdir);
  if (f->fail != ascSuccess) {
    o = fopen(path, "w");
    if (o) {
      fputs("int broken(\n", o);
      fclose(o);
    }
    return asc__error(f->fail, "fake build failed");
  }
  snprintf(path, sizeof path, "%s/out.so", workdir);
  o = fopen(path, "w");
  if (o == NULL)
    return asc__error(ascErrorCache, "cannot write %s", path);
  fputs(f->content ? f->content : "payload", o);
  fclose(o);
  *so = asc__strdup(path);
  return *so ? ascSuccess : asc__error(ascErrorOutOfMemory, "oom");
}

typedef struct real {
  int value;
  int calls;
} real;

static ascError_t real_build(void *ud, const char *workdir, char **so) {
  real *r = ud;
  const asc__cc *cc;
  char src[128];
  ascError_t e;

  r->calls++;
  e = asc__cc_get(&cc);
  if (e != ascSuccess)
    return e;
  snprintf(src, sizeof src, "int answer(void) { return %d; }\n", r->value);
  return asc__cc_build(cc, NULL, workdir, "kernel", src, strlen(src), so);
}

static void key_of(asc__cache_key *k, const char *text) {
  asc__cache_key_init(k);
  asc__cache_key_add_str(k, "text", text);
  asc__cache_key_final(k);
}

static long file_size(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* asc__read_file that must succeed (free with asc__free). */
static char *read_file(const char *p, long *n) {
  size_t len = 0;
  char *b = asc__read_file(p, &len);
  assert_non_null(b);
  *n = (long)len;
  return b;
}

static void write_bytes(const char *p, const char *b, long n) {
  FILE *f = fopen(p, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, (size_t)n, f), (size_t)n);
  fclose(f);
}

/* ----------------------------------------------------------------- keys */

static void test_key_components_do_not_alias(void **state) {
  asc__cache_key a, b;
  ASC_UNUSED(state);

  asc__cache_key_init(&a);
  asc__cache_key_add_str(&a, "a", "bc");
  asc__cache_key_final(&a);
  asc__cache_key_init(&b);
  asc__cache_key_add_str(&b, "ab", "c");
  asc__cache_key_final(&b);
  assert_string_not_equal(a.hex, b.hex);
  assert_int_equal(strlen(a.hex), 32);

  asc__cache_key_init(&a);
  asc__cache_key_add_str(&a, "x", "");
  asc__cache_key_final(&a);
  asc__cache_key_init(&b);
  asc__cache_key_add_str(&b, "x", NULL);
  asc__cache_key_final(&b);
  assert_string_not_equal(a.hex, b.hex);

  asc__cache_key_init(&a);
  asc__cache_key_add_str(&a, "s", "ab");
  asc__cache_key_add_str(&a, "t", "");
  asc__cache_key_final(&a);
  asc__cache_key_init(&b);
  asc__cache_key_add_str(&b, "s", "a");
  asc__cache_key_add_str(&b, "t", "b");
  asc__cache_key_final(&b);
  assert_string_not_equal(a.hex, b.hex);

  key_of(&a, "same");
  key_of(&b, "same");
  assert_string_equal(a.hex, b.hex);
}

/* ---------------------------------------------------------- hit / miss */

static void test_miss_then_hit(void **state) {
  char dir[4200], *p1 = NULL, *p2 = NULL, want[4300];
  asc__cache *c;
  asc__cache_key k;
  asc__cache_stats st;
  fake f = {.content = "hello"};
  long n;
  char *bytes;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "kernel one");
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p1),
                   ascSuccess);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p2),
                   ascSuccess);
  assert_int_equal(atomic_load(&f.calls), 1);
  assert_string_equal(p1, p2);
  /* Fan-out layout: <dir>/ab/<30 hex>.so */
  snprintf(want, sizeof want, "%s/%.2s/%s.so", dir, k.hex, k.hex + 2);
  assert_string_equal(p1, want);
  bytes = read_file(p1, &n);
  assert_int_equal(n, 5 + ASC_CACHE_TRAILER_SIZE);
  assert_memory_equal(bytes, "hello", 5);
  asc__free(bytes);
  {
    struct stat s;
    snprintf(want, sizeof want, "%s", dir);
    assert_int_equal(stat(want, &s), 0);
    assert_int_equal(s.st_mode & 0777, 0700);
  }
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_false(st.fallback);
  assert_string_equal(st.dir, dir);
  assert_int_equal(st.entries, 1);
  assert_int_equal(st.bytes, 5 + ASC_CACHE_TRAILER_SIZE);
  assert_int_equal(st.hits, 1);
  assert_int_equal(st.misses, 1);
  assert_int_equal(st.builds, 1);
  assert_int_equal(st.temporaries, 0);
  asc__free(p1);
  asc__free(p2);
  asc__cache_close(c);

  /* Another cache object (another process) on the same directory hits. */
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p1),
                   ascSuccess);
  assert_int_equal(atomic_load(&f.calls), 1);
  asc__free(p1);
  asc__cache_close(c);
}

/* The components the driver puts in a key (DESIGN.md section 7). */
typedef struct components {
  const char *v[11];
} components;

static const char *const component_names[11] = {
    "libasc", "abi", "cc", "flags", "cpu", "source", "helpers",
    "kernel", "signature", "globals", "debug"};

static void key_of_components(asc__cache_key *k, const components *c) {
  int i;
  asc__cache_key_init(k);
  for (i = 0; i < 11; i++)
    asc__cache_key_add_str(k, component_names[i], c->v[i]);
  asc__cache_key_final(k);
}

static void test_miss_on_each_component(void **state) {
  const components base_c = {{"0.1.0", "1", "gcc 12", "-O3", "avx2",
                              "def k(a): pass", "def h(): pass", "k",
                              "f32[1]", "TILE=64", "debug=0"}};
  char dir[4200], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  fake f = {.content = "x"};
  int i;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of_components(&k, &base_c);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  asc__free(p);
  for (i = 0; i < 11; i++) {
    components m = base_c;
    char changed[64];
    snprintf(changed, sizeof changed, "%s+", base_c.v[i]);
    m.v[i] = changed;
    key_of_components(&k, &m);
    assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                     ascSuccess);
    asc__free(p);
    assert_int_equal(atomic_load(&f.calls), i + 2);
  }
  /* And the unchanged key still hits. */
  key_of_components(&k, &base_c);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  asc__free(p);
  assert_int_equal(atomic_load(&f.calls), 12);
  asc__cache_close(c);
}

/* ---------------------------------------------------------- corruption */

enum { FLIP_PAYLOAD, FLIP_TRAILER, FLIP_MAGIC, TRUNC_ONE, TRUNC_HALF,
       ZERO_LENGTH, GARBAGE, OTHER_KEY, DIRECTORY, FIFO, SYMLINK, NCORRUPT };

static void test_corrupt_entries_rebuilt(void **state) {
  char dir[4200], *p = NULL, *q = NULL;
  asc__cache *c;
  asc__cache_key k, other;
  asc__cache_stats st;
  int how;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&other, "other kernel");
  for (how = 0; how < NCORRUPT; how++) {
    fake f = {.content = "the shared object bytes"};
    char text[32];
    long n;
    char *b;

    snprintf(text, sizeof text, "corrupt %d", how);
    key_of(&k, text);
    assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                     ascSuccess);
    b = read_file(p, &n);
    switch (how) {
    case FLIP_PAYLOAD: b[3] ^= 0x10; write_bytes(p, b, n); break;
    case FLIP_TRAILER: b[n - 40] ^= 0x01; write_bytes(p, b, n); break;
    case FLIP_MAGIC: b[n - 1] ^= 0x01; write_bytes(p, b, n); break;
    case TRUNC_ONE: assert_int_equal(truncate(p, n - 1), 0); break;
    case TRUNC_HALF: assert_int_equal(truncate(p, n / 2), 0); break;
    case ZERO_LENGTH: assert_int_equal(truncate(p, 0), 0); break;
    case GARBAGE: memset(b, 0xA5, (size_t)n); write_bytes(p, b, n); break;
    case OTHER_KEY: {
      /* A valid entry of another key placed at this key's path. */
      fake g = {.content = "the shared object bytes"};
      assert_int_equal(asc__cache_get_or_build(c, &other, fake_build, &g, &q),
                       ascSuccess);
      asc__free(b);
      b = read_file(q, &n);
      write_bytes(p, b, n);
      asc__free(q);
      break;
    }
    case DIRECTORY:
      assert_int_equal(unlink(p), 0);
      assert_int_equal(mkdir(p, 0700), 0);
      break;
    case FIFO: /* must not block the lookup */
      assert_int_equal(unlink(p), 0);
      assert_int_equal(mkfifo(p, 0600), 0);
      break;
    case SYMLINK: { /* to a valid entry of this key: still not followed */
      char moved[4300];
      snprintf(moved, sizeof moved, "%s.elsewhere", p);
      assert_int_equal(rename(p, moved), 0);
      assert_int_equal(symlink(moved, p), 0);
      break;
    }
    }
    asc__free(b);
    asc__free(p);
    assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                     ascSuccess);
    assert_int_equal(atomic_load(&f.calls), 2);
    b = read_file(p, &n);
    assert_int_equal(n, 23 + ASC_CACHE_TRAILER_SIZE);
    assert_memory_equal(b, "the shared object bytes", 23);
    asc__free(b);
    asc__free(p);
    /* Repaired: now a hit. */
    assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                     ascSuccess);
    assert_int_equal(atomic_load(&f.calls), 2);
    asc__free(p);
  }
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_int_equal(st.corrupt, NCORRUPT);
  assert_false(st.fallback);
  asc__cache_close(c);
}

/* A FIFO, a symbolic link or a directory where a key's lock file goes is
 * replaced by a lock file: builds of the key stay locked against each
 * other (before, such a file made every build of the key unlocked). */
static void test_bad_lock_files_replaced(void **state) {
  enum { LOCK_FIFO, LOCK_SYMLINK, LOCK_DIR, NLOCK };
  char dir[4200], lockp[4300], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  fake f = {.content = "bytes"};
  struct stat sb;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "lock files");
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  {
    const char *slash = strrchr(p, '/') + 1;
    snprintf(lockp, sizeof lockp, "%.*s%.30s.lock", (int)(slash - p), p, slash);
  }
  for (int how = 0; how < NLOCK; how++) {
    unlink(lockp);
    rmdir(lockp);
    switch (how) {
    case LOCK_FIFO: assert_int_equal(mkfifo(lockp, 0600), 0); break;
    case LOCK_SYMLINK: assert_int_equal(symlink("/dev/null", lockp), 0); break;
    case LOCK_DIR: assert_int_equal(mkdir(lockp, 0700), 0); break;
    }
    assert_int_equal(unlink(p), 0);   /* the next lookup builds */
    asc__free(p);
    assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                     ascSuccess);
    assert_int_equal(atomic_load(&f.calls), how + 2);
    assert_int_equal(lstat(lockp, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
  }
  asc__free(p);
  asc__cache_close(c);
}

/* An entry is a loadable shared object: the trailer does not disturb
 * dlopen. */
static void test_entry_is_loadable(void **state) {
  char dir[4200], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  real r = {.value = 1234};
  void *h;
  int (*answer)(void);
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "real 1234");
  assert_int_equal(asc__cache_get_or_build(c, &k, real_build, &r, &p),
                   ascSuccess);
  h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  *(void **)&answer = dlsym(h, "answer");
  assert_non_null(answer);
  assert_int_equal(answer(), 1234);
  dlclose(h);
  asc__free(p);
  assert_int_equal(r.calls, 1);
  asc__cache_close(c);
}

/* A failed build returns its error, keeps what it left for inspection,
 * and does not poison the key. */
static void test_failed_build_kept(void **state) {
  char dir[4200], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  asc__cache_stats st;
  fake bad = {.fail = ascErrorInternal}, good = {.content = "ok"};
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "fails once");
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &bad, &p),
                   ascErrorInternal);
  assert_null(p);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_int_equal(st.entries, 0);
  assert_int_equal(st.temporaries, 1);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &good, &p),
                   ascSuccess);
  asc__free(p);
  /* clear removes entries and idle temporaries */
  {
    uint64_t removed = 0;
    assert_int_equal(asc__cache_clear(c, &removed), ascSuccess);
    assert_int_equal(removed, 1);
    assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.temporaries, 0);
    /* and leaves no lock files behind */
    {
      char lockp[4300];
      snprintf(lockp, sizeof lockp, "%s/%.2s/%s.lock", dir, k.hex, k.hex + 2);
      assert_int_equal(access(lockp, F_OK), -1);
    }
  }
  asc__cache_close(c);
}

/* --------------------------------------------------------- concurrency */

/* ---------------------------------------------------------------- index */

/* The value of k's record as a new process reads it (a fresh cache object
 * on dir, so nothing comes from memory), NUL-terminated in out; false
 * when there is no usable record. */
static bool record_get(const char *dir, const asc__cache_key *k, char *out,
                       size_t n) {
  asc__cache *c;
  asc__buf b;
  bool ok;
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  asc__buf_init(&b);
  ok = asc__cache_index_get(c, k, &b);
  if (ok) {
    assert_true(b.len < n);
    memcpy(out, b.data, b.len);
    out[b.len] = '\0';
  }
  asc__buf_free(&b);
  asc__cache_close(c);
  return ok;
}

static void record_path(const char *dir, const asc__cache_key *k, char *out,
                        size_t n) {
  snprintf(out, n, "%s/%.2s/%s.idx", dir, k->hex, k->hex + 2);
}

static void test_index_records(void **state) {
  char dir[4200], path[4400], got[256];
  asc__cache_key k, k2;
  asc__cache *c;
  asc__cache_stats st;
  long n;
  char *bytes;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  key_of(&k, "index record");
  key_of(&k2, "another record");
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  assert_false(record_get(dir, &k, got, sizeof got));
  asc__cache_index_put(c, &k, "value one", 9);
  /* in this process from memory, in another from the file */
  {
    asc__buf b;
    asc__buf_init(&b);
    assert_true(asc__cache_index_get(c, &k, &b));
    assert_int_equal(b.len, 9);
    assert_memory_equal(b.data, "value one", 9);
    asc__buf_free(&b);
  }
  assert_true(record_get(dir, &k, got, sizeof got));
  assert_string_equal(got, "value one");
  assert_false(record_get(dir, &k2, got, sizeof got));
  /* replaced by a later put; an empty value is a value */
  asc__cache_index_put(c, &k, "two", 3);
  assert_true(record_get(dir, &k, got, sizeof got));
  assert_string_equal(got, "two");
  asc__cache_index_put(c, &k2, "", 0);
  assert_true(record_get(dir, &k2, got, sizeof got));
  assert_string_equal(got, "");
  /* counted apart from entries, removed by clear */
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_int_equal(st.records, 2);
  assert_int_equal(st.entries, 0);
  assert_int_equal(st.temporaries, 0);

  /* Whatever is at the record's name, a bad record reads as none and the
   * next put replaces it. */
  record_path(dir, &k, path, sizeof path);
  asc__cache_index_put(c, &k, "good value", 10);
  bytes = read_file(path, &n);
  for (long cut = 0; cut < n; cut += 7) {        /* truncated */
    write_bytes(path, bytes, cut);
    assert_false(record_get(dir, &k, got, sizeof got));
  }
  for (long at = 0; at < n; at += 5) {           /* one bit flipped */
    bytes[at] ^= 4;
    write_bytes(path, bytes, n);
    assert_false(record_get(dir, &k, got, sizeof got));
    bytes[at] ^= 4;
  }
  write_bytes(path, "garbage garbage garbage garbage garbage garbage", 47);
  assert_false(record_get(dir, &k, got, sizeof got));
  write_bytes(path, bytes, n);                   /* whole again */
  assert_true(record_get(dir, &k, got, sizeof got));
  chmod(path, 0666);                             /* others may write it */
  assert_false(record_get(dir, &k, got, sizeof got));
  unlink(path);
  {
    char target[4500];                           /* a symbolic link */
    snprintf(target, sizeof target, "%s.elsewhere", path);
    write_bytes(target, bytes, n);
    assert_int_equal(symlink(target, path), 0);
    assert_false(record_get(dir, &k, got, sizeof got));
    asc__cache_index_put(c, &k, "after link", 10); /* replaces the link */
    assert_true(record_get(dir, &k, got, sizeof got));
    assert_string_equal(got, "after link");
    unlink(target);
  }
  unlink(path);
  assert_int_equal(mkfifo(path, 0600), 0);       /* a FIFO: never blocks */
  assert_false(record_get(dir, &k, got, sizeof got));
  unlink(path);
  asc__free(bytes);
  assert_int_equal(asc__cache_clear(c, NULL), ascSuccess);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_int_equal(st.records, 0);
  asc__cache_close(c);
}

/* Processes writing the same record while others read it: a reader gets
 * one writer's whole value or nothing, never a mix, and no temporary is
 * left behind. */
static void test_index_concurrent_writers(void **state) {
  enum { WRITERS = 3, READERS = 2, ROUNDS = 60 };
  char dir[4200];
  asc__cache_key k;
  asc__cache *c;
  asc__cache_stats st;
  pid_t pid[WRITERS + READERS];
  int i, status;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  key_of(&k, "raced record");
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  for (i = 0; i < WRITERS + READERS; i++) {
    pid[i] = fork();
    assert_true(pid[i] >= 0);
    if (pid[i] == 0) {
      int bad = 0;
      for (int r = 0; r < ROUNDS && bad == 0; r++) {
        if (i < WRITERS) {
          /* writer i: its letter, 100 * (i + 1) times */
          char v[400];
          asc__cache *w;
          memset(v, 'a' + i, sizeof v);
          if (asc__cache_open(&w, dir) != ascSuccess)
            _exit(2);
          asc__cache_index_put(w, &k, v, (size_t)(100 * (i + 1)));
          asc__cache_close(w);
        } else {
          asc__cache *rd;
          asc__buf b;
          if (asc__cache_open(&rd, dir) != ascSuccess)
            _exit(2);
          asc__buf_init(&b);
          if (asc__cache_index_get(rd, &k, &b)) {
            int w = b.len > 0 ? b.data[0] - 'a' : -1;
            if (w < 0 || w >= WRITERS || b.len != (size_t)(100 * (w + 1)))
              bad = 1;
            for (size_t j = 0; j < b.len && !bad; j++)
              bad = b.data[j] != b.data[0];
          }
          asc__buf_free(&b);
          asc__cache_close(rd);
        }
      }
      _exit(bad);
    }
  }
  for (i = 0; i < WRITERS + READERS; i++) {
    assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_int_equal(st.records, 1);
  assert_int_equal(st.temporaries, 0);
  asc__cache_close(c);
}

static void test_two_processes_same_key(void **state) {
  char dir[4200], counter[4300];
  asc__cache_key k;
  pid_t pid[2];
  int i, status;
  long n;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  snprintf(counter, sizeof counter, "%s.count", dir);
  key_of(&k, "raced kernel");
  for (i = 0; i < 2; i++) {
    pid[i] = fork();
    assert_true(pid[i] >= 0);
    if (pid[i] == 0) {
      asc__cache *c;
      fake f = {.content = "raced", .delay_ms = 400, .counter = counter};
      char *p = NULL;
      int ok = asc__cache_open(&c, dir) == ascSuccess &&
               asc__cache_get_or_build(c, &k, fake_build, &f, &p) ==
                   ascSuccess &&
               file_size(p) == 5 + ASC_CACHE_TRAILER_SIZE;
      _exit(ok ? 0 : 1);
    }
  }
  for (i = 0; i < 2; i++) {
    assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  n = file_size(counter);
  assert_int_equal(n, 2); /* exactly one build: one "x\n" */
}

typedef struct thread_arg {
  asc__cache *c;
  asc__cache_key k;
  fake *f;
  ascError_t err;
} thread_arg;

static void build_thread(void *p) {
  thread_arg *a = p;
  char *so = NULL;
  a->err = asc__cache_get_or_build(a->c, &a->k, fake_build, a->f, &so);
  asc__free(so);
}

static void test_threads_keys(void **state) {
  char dir[4200];
  asc__cache *c;
  fake f = {.content = "k", .delay_ms = 300};
  thread_arg a[4];
  uv_thread_t t[4];
  int i;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  /* Threads 0,1 want key A, threads 2,3 key B. */
  for (i = 0; i < 4; i++) {
    a[i].c = c;
    a[i].f = &f;
    key_of(&a[i].k, i < 2 ? "key A" : "key B");
  }
  for (i = 0; i < 4; i++)
    assert_int_equal(uv_thread_create(&t[i], build_thread, &a[i]), 0);
  for (i = 0; i < 4; i++) {
    uv_thread_join(&t[i]);
    assert_int_equal(a[i].err, ascSuccess);
  }
  /* Each key built once, and the two keys built at the same time (each
   * build sleeps 300 ms: a lock held across keys would run them one
   * after the other).  Counted, not timed: fsyncs on a loaded disk made
   * a bound on the wall time fragile. */
  assert_int_equal(atomic_load(&f.calls), 2);
  assert_int_equal(atomic_load(&f.most), 2);
  asc__cache_close(c);
}

/* --------------------------------------------------- unusable directories */

static void expect_fallback_why(const char *dir, const char *reason) {
  char *p = NULL, errfile[4300];
  asc__cache *c;
  asc__cache_key k;
  asc__cache_stats st;
  fake f = {.content = "fallback"};
  int saved, fd;
  long n;
  char *text;

  /* Capture stderr to see the warning. */
  snprintf(errfile, sizeof errfile, "%s/stderr.txt", base);
  fflush(stderr);
  saved = dup(2);
  fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, 2);
  close(fd);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  text = read_file(errfile, &n);
  assert_non_null(strstr(text, "warning"));
  assert_non_null(strstr(text, dir));
  if (reason != NULL && strstr(text, reason) == NULL)
    fail_msg("warning without \"%s\":\n%s", reason, text);
  asc__free(text);

  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_true(st.fallback);
  assert_string_equal(st.configured, dir);
  assert_string_not_equal(st.dir, dir);
  key_of(&k, "fallback kernel");
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  assert_int_equal(strncmp(p, st.dir, strlen(st.dir)), 0);
  assert_int_equal(file_size(p), 8 + ASC_CACHE_TRAILER_SIZE);
  asc__free(p);
  {
    char *fb = strdup(st.dir);
    asc__cache_close(c);
    /* The private directory goes away with the cache. */
    assert_int_equal(access(fb, F_OK), -1);
    free(fb);
  }
}

static void expect_fallback(const char *dir) { expect_fallback_why(dir, NULL); }

/* --------------------------------------------------- another local user */

#define ATTACKER 65534

/* Runs fn(arg) in a child process as uid/gid ATTACKER, which plays the
 * other local user.  false (with the reason printed) when this process
 * cannot change its uid, i.e. is not root. */
static bool as_attacker(void (*fn)(void *), void *arg) {
  pid_t pid;
  int status;

  if (geteuid() != 0) {
    printf("    (skipped: needs root to act as a second user)\n");
    return false;
  }
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (setgroups(0, NULL) != 0 ||
        setresgid(ATTACKER, ATTACKER, ATTACKER) != 0 ||
        setresuid(ATTACKER, ATTACKER, ATTACKER) != 0)
      _exit(2);
    fn(arg);
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  return true;
}

/* A fresh root-owned sticky world-writable directory, like /tmp. */
static void new_sticky(char *out, size_t n) {
  new_dir(out, n);
  assert_int_equal(mkdir(out, 0700), 0);
  assert_int_equal(chmod(out, 01777), 0);
}

typedef struct plant {
  const char *path;     /* what to create */
  const char *target;   /* symlink target, or NULL for a directory */
  const char *file;     /* and then this file in it ... */
  const char *bytes;    /* ... with these bytes */
  long n;
} plant;

static void plant_fn(void *arg) {
  const plant *p = arg;
  if (p->target != NULL) {
    if (symlink(p->target, p->path) != 0)
      _exit(3);
    return;
  }
  if (mkdir(p->path, 0755) != 0 && errno != EEXIST)
    _exit(4);
  if (p->file != NULL) {
    char sub[4300];
    FILE *f;
    snprintf(sub, sizeof sub, "%s", p->file);
    *strrchr(sub, '/') = '\0';
    mkdir(sub, 0755);
    f = fopen(p->file, "wb");
    if (f == NULL || fwrite(p->bytes, 1, (size_t)p->n, f) != (size_t)p->n)
      _exit(5);
    fclose(f);
  }
}

/* ASC_CACHE_DIR naming a symbolic link (here the attacker's, in a sticky
 * directory) is refused, even when it points to a directory of ours. */
static void test_symlinked_root_refused(void **state) {
  char sticky[4200], mine[4300], link[4300], theirs[4300];
  plant pl;
  ASC_UNUSED(state);
  new_sticky(sticky, sizeof sticky);
  snprintf(mine, sizeof mine, "%s/mine", sticky);
  snprintf(link, sizeof link, "%s/link", sticky);
  snprintf(theirs, sizeof theirs, "%s/theirs", sticky);
  assert_int_equal(mkdir(mine, 0700), 0);
  pl = (plant){.path = link, .target = mine};
  if (!as_attacker(plant_fn, &pl))
    return;
  expect_fallback_why(link, "symbolic link");
  pl = (plant){.path = theirs};
  assert_true(as_attacker(plant_fn, &pl));
  assert_int_equal(unlink(link), 0);
  pl = (plant){.path = link, .target = theirs};
  assert_true(as_attacker(plant_fn, &pl));
  expect_fallback_why(link, "symbolic link");
  /* A link of our own is refused too: the check is on the name given. */
  assert_int_equal(unlink(link), 0);
  assert_int_equal(symlink(mine, link), 0);
  expect_fallback_why(link, "symbolic link");
}

/* A cache below a directory that someone else controls is refused: that
 * user could swap the path.  Below a sticky directory (like /tmp) the
 * cache is fine when the directory just below it is ours. */
static void test_unsafe_ancestors_refused(void **state) {
  char sticky[4200], att[4300], dir[4400], open_dir[4200], ok[4400];
  asc__cache *c;
  asc__cache_stats st;
  plant pl;
  ASC_UNUSED(state);
  new_sticky(sticky, sizeof sticky);
  snprintf(att, sizeof att, "%s/theirs", sticky);
  pl = (plant){.path = att};
  if (!as_attacker(plant_fn, &pl))
    return;
  snprintf(dir, sizeof dir, "%s/cache", att);
  expect_fallback_why(dir, "owned by another user");
  /* two levels below theirs: still theirs to swap */
  snprintf(dir, sizeof dir, "%s/a/b/cache", att);
  expect_fallback_why(dir, "owned by another user");
  /* a world-writable directory without the sticky bit */
  new_dir(open_dir, sizeof open_dir);
  assert_int_equal(mkdir(open_dir, 0700), 0);
  assert_int_equal(chmod(open_dir, 0777), 0);
  snprintf(dir, sizeof dir, "%s/cache", open_dir);
  expect_fallback_why(dir, "writable by others");
  /* group-writable, same */
  assert_int_equal(chmod(open_dir, 0775), 0);
  expect_fallback_why(dir, "writable by others");
  /* our directory in a sticky one, and below it: accepted */
  snprintf(ok, sizeof ok, "%s/mine/cache", sticky);
  assert_int_equal(asc__cache_open(&c, ok), ascSuccess);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_false(st.fallback);
  asc__cache_close(c);
}

static void open_as_user_fn(void *arg) {
  asc__cache *c;
  asc__cache_stats st;
  if (asc__cache_open(&c, arg) != ascSuccess)
    _exit(4);
  if (asc__cache_get_stats(c, &st) != ascSuccess || st.fallback)
    _exit(5);
  asc__cache_close(c);
}

/* An ancestor that others may search but not list (mode 0711, as many
 * home directories are) does not make the cache unusable: the walk up
 * needs search permission only. */
static void test_search_only_ancestor_accepted(void **state) {
  char top[4200], home[4300], dir[4400];
  ASC_UNUSED(state);
  new_dir(top, sizeof top);
  assert_int_equal(mkdir(top, 0711), 0);
  assert_int_equal(chmod(top, 0711), 0);
  snprintf(home, sizeof home, "%s/u", top);
  assert_int_equal(mkdir(home, 0700), 0);
  assert_int_equal(chown(home, ATTACKER, ATTACKER), 0);
  snprintf(dir, sizeof dir, "%s/cache", home);
  /* the "attacker" uid is simply another user here */
  as_attacker(open_as_user_fn, dir);
}

/* A configured path that reaches our directory through another user's
 * link: the directory itself is sound (its real ancestors pass), but the
 * C compiler's work is done by path, and the link's owner could retarget
 * it mid-build.  The cache works under the real path it checked. */
static void test_path_through_foreign_link_uses_real_path(void **state) {
  char sticky[4200], mine[4300], theirs[4300], link[4400], dir[4500],
      want[4500], *rp;
  asc__cache *c;
  asc__cache_stats st;
  plant pl;
  ASC_UNUSED(state);
  new_sticky(sticky, sizeof sticky);
  snprintf(mine, sizeof mine, "%s/mine", sticky);
  snprintf(theirs, sizeof theirs, "%s/theirs", sticky);
  snprintf(link, sizeof link, "%s/link", theirs);
  assert_int_equal(mkdir(mine, 0700), 0);
  pl = (plant){.path = theirs};
  if (!as_attacker(plant_fn, &pl))
    return;
  pl = (plant){.path = link, .target = mine};
  assert_true(as_attacker(plant_fn, &pl));
  snprintf(dir, sizeof dir, "%s/cache", link);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_false(st.fallback);
  rp = realpath(mine, NULL);
  assert_non_null(rp);
  snprintf(want, sizeof want, "%s/cache", rp);
  free(rp);
  assert_string_equal(st.dir, want);
  asc__cache_close(c);
}

/* An entry that another user could have written -- owned by them, or
 * writable by group or others, or reached through a symbolic link in
 * place of a fan-out directory -- is never handed out, even with a valid
 * trailer (anyone can compute one): it is rebuilt. */
static void test_planted_entries_rebuilt(void **state) {
  char dir[4200], *p = NULL, *q = NULL, sticky[4200], evil[4300],
      evil_entry[4400], sub[4300];
  asc__cache *c;
  asc__cache_key k;
  fake f = {.content = "victim"};
  long n;
  char *bytes;
  int fd = -1;
  plant pl;
  ASC_UNUSED(state);

  if (geteuid() != 0) {
    printf("    (skipped: needs root to give files to a second user)\n");
    return;
  }
  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "planted");
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  bytes = read_file(p, &n);
  /* owned by another user */
  assert_int_equal(chown(p, ATTACKER, ATTACKER), 0);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &q),
                   ascSuccess);
  assert_int_equal(atomic_load(&f.calls), 2);
  asc__free(q);
  /* writable by the group */
  assert_int_equal(chmod(p, 0620), 0);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &q),
                   ascSuccess);
  assert_int_equal(atomic_load(&f.calls), 3);
  asc__free(q);
  /* the fan-out directory replaced by a link to the attacker's copy of
   * a valid entry */
  new_sticky(sticky, sizeof sticky);
  snprintf(evil, sizeof evil, "%s/evil", sticky);
  snprintf(evil_entry, sizeof evil_entry, "%s/%s.so", evil, k.hex + 2);
  pl = (plant){.path = evil, .file = evil_entry, .bytes = bytes, .n = n};
  assert_true(as_attacker(plant_fn, &pl));
  snprintf(sub, sizeof sub, "%s/%.2s", dir, k.hex);
  {
    char moved[4400];
    snprintf(moved, sizeof moved, "%s.moved", sub);
    assert_int_equal(rename(sub, moved), 0);
  }
  assert_int_equal(symlink(evil, sub), 0);
  assert_int_equal(
      asc__cache_get_or_build_fd(c, &k, fake_build, &f, &q, &fd), ascSuccess);
  assert_int_equal(atomic_load(&f.calls), 4);
  assert_true(fd >= 0);
  {
    struct stat a, b;
    assert_int_equal(fstat(fd, &a), 0);
    assert_int_equal(lstat(sub, &b), 0);
    assert_true(S_ISDIR(b.st_mode)); /* the link was replaced */
    assert_int_equal(a.st_uid, geteuid());
    assert_int_equal(access(evil_entry, F_OK), 0); /* theirs untouched */
  }
  close(fd);
  asc__free(q);
  asc__free(bytes);
  asc__free(p);
  asc__cache_close(c);
}

/* The cache directory is used through the descriptor opened at start: a
 * directory swapped in at its path later (with a forged entry that has a
 * valid trailer) is never read. */
static void test_swapped_root_not_followed(void **state) {
  char sticky[4200], dir[4300], old[4300], forged[4400], *p = NULL;
  asc__cache *c, *other;
  asc__cache_key k;
  fake f = {.content = "victim"}, g = {.content = "forged"};
  char otherdir[4200], buf[16];
  long n;
  char *bytes;
  int fd = -1;
  plant pl;
  ASC_UNUSED(state);

  if (geteuid() != 0) {
    printf("    (skipped: needs root to act as a second user)\n");
    return;
  }
  /* the attacker's entry for the key, with a valid trailer */
  key_of(&k, "swapped");
  new_dir(otherdir, sizeof otherdir);
  assert_int_equal(asc__cache_open(&other, otherdir), ascSuccess);
  assert_int_equal(asc__cache_get_or_build(other, &k, fake_build, &g, &p),
                   ascSuccess);
  bytes = read_file(p, &n);
  asc__free(p);
  asc__cache_close(other);

  new_sticky(sticky, sizeof sticky);
  snprintf(dir, sizeof dir, "%s/cache", sticky);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  asc__free(p);
  snprintf(old, sizeof old, "%s/cache-old", sticky);
  assert_int_equal(rename(dir, old), 0);
  snprintf(forged, sizeof forged, "%s/%.2s/%s.so", dir, k.hex, k.hex + 2);
  pl = (plant){.path = dir, .file = forged, .bytes = bytes, .n = n};
  assert_true(as_attacker(plant_fn, &pl));
  assert_int_equal(
      asc__cache_get_or_build_fd(c, &k, fake_build, &f, &p, &fd), ascSuccess);
  assert_int_equal(atomic_load(&f.calls), 1); /* our entry, a hit */
  assert_int_equal(pread(fd, buf, 6, 0), 6);
  assert_memory_equal(buf, "victim", 6);
  close(fd);
  asc__free(p);
  asc__free(bytes);
  asc__cache_close(c);
}

static void test_world_writable_dir(void **state) {
  char dir[4200];
  ASC_UNUSED(state);
  new_dir(dir, sizeof dir);
  assert_int_equal(mkdir(dir, 0700), 0);
  assert_int_equal(chmod(dir, 0777), 0);
  expect_fallback(dir);
  assert_int_equal(chmod(dir, 0770), 0);
  expect_fallback(dir);
}

static void test_foreign_owner_dir(void **state) {
  char dir[4200];
  ASC_UNUSED(state);
  new_dir(dir, sizeof dir);
  assert_int_equal(mkdir(dir, 0700), 0);
  if (chown(dir, 65534, 65534) != 0) {
    skip(); /* needs root to give a directory away */
    return;
  }
  expect_fallback(dir);
}

static void test_read_only_dir(void **state) {
  char dir[4200];
  ASC_UNUSED(state);
  new_dir(dir, sizeof dir);
  assert_int_equal(mkdir(dir, 0700), 0);
  assert_int_equal(chmod(dir, 0500), 0);
  expect_fallback(dir);
  chmod(dir, 0700);
}

static void test_not_a_directory(void **state) {
  char dir[4200];
  ASC_UNUSED(state);
  new_dir(dir, sizeof dir);
  write_bytes(dir, "file", 4);
  expect_fallback(dir);
}

/* Neither the cache directory nor a private one: an error, not a crash;
 * and once a private directory can be made, kernels build again. */
static void test_no_directory_at_all(void **state) {
  char dir[4200], *p = NULL;
  const char *old = getenv("TMPDIR");
  char *saved = old ? strdup(old) : NULL;
  asc__cache *c;
  asc__cache_key k;
  fake f = {.content = "late"};
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(mkdir(dir, 0777), 0);
  assert_int_equal(chmod(dir, 0777), 0);
  setenv("TMPDIR", "/nonexistent-tmp-for-test", 1);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "nowhere");
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascErrorCache);
  assert_null(p);
  assert_non_null(strstr(ascGetLastErrorMessage(), "nonexistent-tmp"));
  assert_int_equal(atomic_load(&f.calls), 0);
  if (saved)
    setenv("TMPDIR", saved, 1);
  else
    unsetenv("TMPDIR");
  free(saved);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  assert_int_equal(file_size(p), 4 + ASC_CACHE_TRAILER_SIZE);
  asc__free(p);
  asc__cache_close(c);
}

typedef struct io_fail_spec {
  const char *op;      /* operation to fail, NULL = all */
  const char *under;   /* only paths under this prefix */
  int err;
  int hits;
} io_fail_spec;

static int io_hook(const char *op, const char *path, void *ud) {
  io_fail_spec *s = ud;
  if (strncmp(path, s->under, strlen(s->under)) != 0)
    return 0;
  if (s->op != NULL && strcmp(op, s->op) != 0)
    return 0;
  s->hits++;
  return s->err;
}

static void test_disk_full(void **state) {
  static const char *const ops[] = {"write", "fsync", "rename", "mkdtemp",
                                    "mkdir", "create"};
  size_t i;
  ASC_UNUSED(state);

  for (i = 0; i < ASC_ARRAY_SIZE(ops); i++) {
    char dir[4200], *p = NULL;
    asc__cache *c;
    asc__cache_key k;
    asc__cache_stats st;
    fake f = {.content = "full"};
    io_fail_spec s = {ops[i], dir, ENOSPC, 0};
    ascError_t e;

    new_dir(dir, sizeof dir);
    assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
    key_of(&k, ops[i]);
    asc__cache_set_io_fail_hook(io_hook, &s);
    e = asc__cache_get_or_build(c, &k, fake_build, &f, &p);
    asc__cache_set_io_fail_hook(NULL, NULL);
    assert_int_equal(e, ascSuccess);
    assert_true(s.hits > 0);
    assert_int_equal(file_size(p), 4 + ASC_CACHE_TRAILER_SIZE);
    assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
    assert_true(st.fallback);
    assert_int_equal(strncmp(p, st.dir, strlen(st.dir)), 0);
    assert_int_equal(st.fallbacks, 1);
    asc__free(p);
    /* Nothing half-written was left in the full directory. */
    assert_int_equal(st.temporaries, 0);
    asc__cache_close(c);
  }
}

/* A build that cannot write its work directory moves the cache too. */
static void test_build_io_error_falls_back(void **state) {
  char dir[4200], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  fake f = {.fail = ascErrorCache};
  asc__cache_stats st;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "build io error");
  /* Fails in both directories: reported, not retried forever. */
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascErrorCache);
  assert_int_equal(atomic_load(&f.calls), 2);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_true(st.fallback);
  asc__cache_close(c);
}

/* The compiler itself runs out of space writing into the cache: the cache
 * moves and the kernel still builds. */
static void test_compiler_disk_full(void **state) {
  char dir[4200], script[4300], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  asc__cache_stats st;
  real r = {.value = 77};
  void *h;
  int (*answer)(void);
  FILE *f;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  snprintf(script, sizeof script, "%s/fullcc", base);
  f = fopen(script, "w");
  assert_non_null(f);
  fprintf(f,
          "#!/bin/sh\n"
          "case \"$*\" in *\"$FULL_DIR\"*)\n"
          "  echo \"ld: final link failed: No space left on device\" >&2\n"
          "  exit 1;;\n"
          "esac\n"
          "exec cc \"$@\"\n");
  fclose(f);
  assert_int_equal(chmod(script, 0755), 0);
  setenv("ASC_CC", script, 1);
  setenv("FULL_DIR", dir, 1);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "compiler runs out of space");
  assert_int_equal(asc__cache_get_or_build(c, &k, real_build, &r, &p),
                   ascSuccess);
  unsetenv("ASC_CC");
  unsetenv("FULL_DIR");
  assert_int_equal(r.calls, 2);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_true(st.fallback);
  h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  *(void **)&answer = dlsym(h, "answer");
  assert_int_equal(answer(), 77);
  dlclose(h);
  asc__free(p);
  asc__cache_close(c);
}

static void test_relative_dir_made_absolute(void **state) {
  char cwd[4096], rel[64];
  asc__cache *c;
  asc__cache_stats st;
  ASC_UNUSED(state);

  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(base), 0);
  snprintf(rel, sizeof rel, "rel%d/cache", dir_seq++);
  assert_int_equal(asc__cache_open(&c, rel), ascSuccess);
  assert_int_equal(chdir(cwd), 0);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_false(st.fallback);
  assert_true(st.dir[0] == '/');
  assert_non_null(strstr(st.dir, rel));
  assert_int_equal(access(st.dir, W_OK), 0);
  asc__cache_close(c);
}

/* ------------------------------------------------------------ eviction */

static void test_lru_eviction(void **state) {
  char dir[4200], *pa = NULL, *pb = NULL, *pc = NULL, *p = NULL;
  char payload[1001];
  asc__cache *c;
  asc__cache_key ka, kb, kc;
  asc__cache_stats st;
  fake f = {.content = payload};
  ASC_UNUSED(state);

  memset(payload, 'p', 1000);
  payload[1000] = 0;
  new_dir(dir, sizeof dir);
  /* Room for two entries of 1064 bytes, not three. */
  setenv("ASC_CACHE_MAX_BYTES", "2500", 1);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  unsetenv("ASC_CACHE_MAX_BYTES");
  key_of(&ka, "A");
  key_of(&kb, "B");
  key_of(&kc, "C");
  assert_int_equal(asc__cache_get_or_build(c, &ka, fake_build, &f, &pa),
                   ascSuccess);
  uv_sleep(30);
  assert_int_equal(asc__cache_get_or_build(c, &kb, fake_build, &f, &pb),
                   ascSuccess);
  uv_sleep(30);
  /* Using A makes B the least recently used. */
  assert_int_equal(asc__cache_get_or_build(c, &ka, fake_build, &f, &p),
                   ascSuccess);
  asc__free(p);
  uv_sleep(30);
  assert_int_equal(asc__cache_get_or_build(c, &kc, fake_build, &f, &pc),
                   ascSuccess);
  assert_int_equal(atomic_load(&f.calls), 3);
  assert_int_equal(access(pa, F_OK), 0);
  assert_int_equal(access(pb, F_OK), -1);
  assert_int_equal(access(pc, F_OK), 0);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_int_equal(st.entries, 2);
  assert_int_equal(st.evictions, 1);
  assert_int_equal(st.max_bytes, 2500);
  assert_true(st.bytes <= 2500);
  asc__free(pa);
  asc__free(pb);
  asc__free(pc);
  asc__cache_close(c);

  /* An entry larger than the cap is still returned, usable. */
  new_dir(dir, sizeof dir);
  setenv("ASC_CACHE_MAX_BYTES", "1K", 1);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  unsetenv("ASC_CACHE_MAX_BYTES");
  assert_int_equal(asc__cache_get_or_build(c, &ka, fake_build, &f, &pa),
                   ascSuccess);
  assert_int_equal(access(pa, F_OK), 0);
  asc__free(pa);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_int_equal(st.max_bytes, 1024);
  asc__cache_close(c);
}

/* The descriptor handed out stays the verified entry: clearing (or
 * evicting) the entry between lookup and load does not break the load. */
static void test_fd_survives_eviction(void **state) {
  char dir[4200], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  real r = {.value = 4321};
  uv_lib_t lib;
  int (*answer)(void) = NULL;
  uint64_t removed = 0;
  int fd = -1;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "real 4321");
  assert_int_equal(
      asc__cache_get_or_build_fd(c, &k, real_build, &r, &p, &fd), ascSuccess);
  assert_true(fd >= 0);
  assert_int_equal(asc__cache_clear(c, &removed), ascSuccess);
  assert_int_equal(removed, 1);
  assert_int_equal(access(p, F_OK), -1);
  assert_int_equal(asc__jit_dlopen_fd(&lib, fd, p), 0);
  close(fd);
  assert_int_equal(uv_dlsym(&lib, "answer", (void **)&answer), 0);
  assert_int_equal(answer(), 4321);
  uv_dlclose(&lib);
  asc__free(p);
  /* A hit hands out a descriptor too. */
  assert_int_equal(
      asc__cache_get_or_build_fd(c, &k, real_build, &r, &p, &fd), ascSuccess);
  assert_int_equal(r.calls, 2);
  close(fd);
  asc__free(p);
  assert_int_equal(
      asc__cache_get_or_build_fd(c, &k, real_build, &r, &p, &fd), ascSuccess);
  assert_int_equal(r.calls, 2);
  assert_true(fd >= 0);
  close(fd);
  asc__free(p);
  assert_int_equal(
      asc__cache_get_or_build_fd(c, &k, real_build, &r, NULL, &fd),
      ascErrorInvalidValue);
  asc__cache_close(c);
}

/* An ASC_CACHE_MAX_BYTES that is not a positive size gives the default
 * and one warning per process, however many caches are opened. */
static void test_invalid_max_bytes_warns(void **state) {
  static const char *const bad[] = {"abc", "-1", "10Q", "0", " 5", "1K5",
                                    "99999999999999999999", "17179869184T"};
  char errfile[4300];
  size_t i;
  ASC_UNUSED(state);

  snprintf(errfile, sizeof errfile, "%s/maxbytes.txt", base);
  for (i = 0; i < ASC_ARRAY_SIZE(bad); i++) {
    pid_t pid;
    int status, warnings = 0;
    long n;
    char *text, *at;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      char dir[4200];
      asc__cache *c;
      asc__cache_stats st;
      int ok = 1, fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 2);
      close(fd);
      setenv("ASC_CACHE_MAX_BYTES", bad[i], 1);
      for (int j = 0; j < 3; j++) {
        new_dir(dir, sizeof dir);
        ok &= asc__cache_open(&c, dir) == ascSuccess &&
              asc__cache_get_stats(c, &st) == ascSuccess &&
              st.max_bytes == ASC_CACHE_DEFAULT_MAX_BYTES;
        asc__cache_close(c);
      }
      fflush(stderr);
      _exit(ok ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    text = read_file(errfile, &n);
    for (at = text; (at = strstr(at, "warning")) != NULL; at++)
      warnings++;
    if (warnings != 1 || strstr(text, "ASC_CACHE_MAX_BYTES") == NULL ||
        strstr(text, bad[i]) == NULL)
      fail_msg("ASC_CACHE_MAX_BYTES=%s: %d warnings:\n%s", bad[i], warnings,
               text);
    asc__free(text);
  }
}

/* A lock holder that never lets go (a hung process) delays a build by the
 * lock timeout, not forever. */
static void test_lock_timeout(void **state) {
  char dir[4200], lockp[4300], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  fake f = {.content = "late"};
  uint64_t t0, ms;
  int fd;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  setenv("ASC_CACHE_LOCK_TIMEOUT_MS", "300", 1);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  unsetenv("ASC_CACHE_LOCK_TIMEOUT_MS");
  key_of(&k, "stuck");
  snprintf(lockp, sizeof lockp, "%s/%.2s", dir, k.hex);
  assert_int_equal(mkdir(lockp, 0700), 0);
  snprintf(lockp, sizeof lockp, "%s/%.2s/%s.lock", dir, k.hex, k.hex + 2);
  fd = open(lockp, O_RDWR | O_CREAT, 0600);
  assert_true(fd >= 0);
  assert_int_equal(flock(fd, LOCK_EX), 0); /* another open file: excludes */
  t0 = uv_hrtime();
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  ms = (uv_hrtime() - t0) / 1000000;
  assert_true(ms >= 250 && ms < 3000);
  assert_int_equal(atomic_load(&f.calls), 1);
  asc__free(p);
  close(fd);
  asc__cache_close(c);
}

/* Work directories left by a crashed process are removed once stale. */
static void test_stale_temporaries(void **state) {
  char dir[4200], tmp[4300], fresh[4300], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  asc__cache_stats st;
  struct timespec old[2] = {{time(NULL) - 3 * 86400, 0},
                            {time(NULL) - 3 * 86400, 0}};
  fake f = {.content = "x"};
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  snprintf(tmp, sizeof tmp, "%s/00", dir);
  assert_int_equal(mkdir(tmp, 0700), 0);
  snprintf(tmp, sizeof tmp, "%s/00/.tmp-0123456789abcdef0123456789abcd-AAAAAA",
           dir);
  snprintf(fresh, sizeof fresh,
           "%s/00/.tmp-0123456789abcdef0123456789abce-BBBBBB", dir);
  assert_int_equal(mkdir(tmp, 0700), 0);
  assert_int_equal(mkdir(fresh, 0700), 0);
  {
    char f2[4400];
    snprintf(f2, sizeof f2, "%s/kernel.c", tmp);
    write_bytes(f2, "int x;", 6);
  }
  assert_int_equal(utimensat(AT_FDCWD, tmp, old, 0), 0);
  key_of(&k, "triggers a scan");
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascSuccess);
  asc__free(p);
  assert_int_equal(access(tmp, F_OK), -1);
  assert_int_equal(access(fresh, F_OK), 0);
  assert_int_equal(asc__cache_get_stats(c, &st), ascSuccess);
  assert_int_equal(st.temporaries, 1);
  asc__cache_close(c);
}

/* ------------------------------------------------------- out of memory */

static bool fail_all(size_t size, void *ud) {
  ASC_UNUSED(size);
  ASC_UNUSED(ud);
  return true;
}

static bool fail_nth(size_t size, void *ud) {
  int *n = ud;
  ASC_UNUSED(size);
  return (*n)-- == 0;
}

static void test_out_of_memory(void **state) {
  char dir[4200], *p = NULL;
  asc__cache *c;
  asc__cache_key k;
  fake f = {.content = "oom"};
  int nth, ok = 0;
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  key_of(&k, "oom kernel");
  asc__set_alloc_fail_hook(fail_all, NULL);
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascErrorOutOfMemory);
  asc__set_alloc_fail_hook(NULL, NULL);
  assert_null(p);
  asc__cache_close(c);

  /* Fail each allocation in turn, open to build: never anything but a
   * clean OutOfMemory, then success once past the last allocation. */
  for (nth = 0; nth < 200 && ok < 3; nth++) {
    int countdown = nth;
    char text[32];
    ascError_t e1, e2 = ascSuccess;

    new_dir(dir, sizeof dir);
    snprintf(text, sizeof text, "oom %d", nth);
    key_of(&k, text);
    c = NULL;
    p = NULL;
    asc__set_alloc_fail_hook(fail_nth, &countdown);
    e1 = asc__cache_open(&c, dir);
    if (e1 == ascSuccess)
      e2 = asc__cache_get_or_build(c, &k, fake_build, &f, &p);
    asc__set_alloc_fail_hook(NULL, NULL);
    assert_true(e1 == ascSuccess || e1 == ascErrorOutOfMemory);
    assert_true(e2 == ascSuccess || e2 == ascErrorOutOfMemory);
    if (e1 == ascSuccess && e2 == ascSuccess) {
      assert_int_equal(file_size(p), 3 + ASC_CACHE_TRAILER_SIZE);
      ok++;
    } else {
      ok = 0;
    }
    asc__free(p);
    asc__cache_close(c);
  }
  assert_true(ok >= 3);
}

static void test_invalid_arguments(void **state) {
  char dir[4200], *p = (char *)1;
  asc__cache *c;
  asc__cache_key k;
  fake f = {.content = "x"};
  ASC_UNUSED(state);

  new_dir(dir, sizeof dir);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  asc__cache_key_init(&k);
  asc__cache_key_add_str(&k, "unfinished", "key");
  assert_int_equal(asc__cache_get_or_build(c, &k, fake_build, &f, &p),
                   ascErrorInvalidValue);
  assert_null(p);
  key_of(&k, "x");
  assert_int_equal(asc__cache_get_or_build(NULL, &k, fake_build, &f, &p),
                   ascErrorInvalidValue);
  assert_int_equal(asc__cache_get_or_build(c, &k, NULL, &f, &p),
                   ascErrorInvalidValue);
  assert_int_equal(asc__cache_get_stats(NULL, NULL), ascErrorInvalidValue);
  asc__cache_close(c);
  asc__cache_close(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_key_components_do_not_alias),
      cmocka_unit_test(test_miss_then_hit),
      cmocka_unit_test(test_miss_on_each_component),
      cmocka_unit_test(test_corrupt_entries_rebuilt),
      cmocka_unit_test(test_bad_lock_files_replaced),
      cmocka_unit_test(test_entry_is_loadable),
      cmocka_unit_test(test_failed_build_kept),
      cmocka_unit_test(test_two_processes_same_key),
      cmocka_unit_test(test_threads_keys),
      cmocka_unit_test(test_world_writable_dir),
      cmocka_unit_test(test_foreign_owner_dir),
      cmocka_unit_test(test_symlinked_root_refused),
      cmocka_unit_test(test_unsafe_ancestors_refused),
      cmocka_unit_test(test_path_through_foreign_link_uses_real_path),
      cmocka_unit_test(test_search_only_ancestor_accepted),
      cmocka_unit_test(test_planted_entries_rebuilt),
      cmocka_unit_test(test_swapped_root_not_followed),
      cmocka_unit_test(test_read_only_dir),
      cmocka_unit_test(test_not_a_directory),
      cmocka_unit_test(test_no_directory_at_all),
      cmocka_unit_test(test_disk_full),
      cmocka_unit_test(test_build_io_error_falls_back),
      cmocka_unit_test(test_compiler_disk_full),
      cmocka_unit_test(test_relative_dir_made_absolute),
      cmocka_unit_test(test_lru_eviction),
      cmocka_unit_test(test_fd_survives_eviction),
      cmocka_unit_test(test_invalid_max_bytes_warns),
      cmocka_unit_test(test_lock_timeout),
      cmocka_unit_test(test_stale_temporaries),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_invalid_arguments),
      cmocka_unit_test(test_index_records),
      cmocka_unit_test(test_index_concurrent_writers),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
