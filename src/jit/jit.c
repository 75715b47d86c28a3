/*
 * Generated C -> cached shared object -> loaded kernel.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "jit/jit.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asc/version.h"
#include "base/trace.h"
#include "jit/tier.h"

void asc__jit_cc_opts(const ascCompileOptions *opts, asc__cc_opts *out) {
  out->opt_level = -1;
  out->debug = 0;
  out->march = NULL;
  out->fastmath = 0;
  if (opts == NULL)
    return;
  out->debug = opts->debug != 0;
  out->fastmath = opts->fastmath & ASC_FASTMATH_ALL;
  if (opts->optLevel >= 1 && opts->optLevel <= 3)
    out->opt_level = opts->optLevel;
}

/* ------------------------------------------------------- build identity */

typedef struct object_id {
  const void *addr;   /* an address inside the object */
  bool use_build_id;  /* false: skip the note, hash the text */
  char *out;
  bool found;
} object_id;

/* The NT_GNU_BUILD_ID note among the notes of one PT_NOTE segment, as
 * "build-id:<hex>" in out (ASC_JIT_ID_MAX bytes). */
static bool note_build_id(const unsigned char *p, size_t size, size_t align,
                          char *out) {
  static const char hexd[] = "0123456789abcdef";
  size_t off = 0, i, n;

  while (size - off >= sizeof(ElfW(Nhdr))) {
    ElfW(Nhdr) nh;
    size_t name_at, desc_at, next;
    memcpy(&nh, p + off, sizeof nh);
    name_at = off + sizeof nh;
    desc_at = name_at + ((nh.n_namesz + align - 1) & ~(align - 1));
    next = desc_at + ((nh.n_descsz + align - 1) & ~(align - 1));
    if (desc_at > size || next > size || next <= off)
      return false;
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
        memcmp(p + name_at, "GNU", 4) == 0 && nh.n_descsz > 0) {
      n = (size_t)snprintf(out, ASC_JIT_ID_MAX, "build-id:");
      for (i = 0; i < nh.n_descsz && n + 2 < ASC_JIT_ID_MAX; i++) {
        out[n++] = hexd[p[desc_at + i] >> 4];
        out[n++] = hexd[p[desc_at + i] & 15];
      }
      out[n] = '\0';
      return true;
    }
    off = next;
  }
  return false;
}

static int object_id_cb(struct dl_phdr_info *info, size_t size, void *ud) {
  object_id *o = ud;
  uintptr_t a = (uintptr_t)o->addr;
  asc__cache_key k;
  bool mine = false;
  int i;

  ASC_UNUSED(size);
  for (i = 0; i < info->dlpi_phnum && !mine; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
    mine = ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz;
  }
  if (!mine)
    return 0;
  for (i = 0; i < info->dlpi_phnum && o->use_build_id; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_NOTE &&
        note_build_id((const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
                      ph->p_memsz, ph->p_align == 8 ? 8 : 4, o->out)) {
      o->found = true;
      return 1;
    }
  }
  /* No build-id: hash the executable segments as mapped (position
   * independent code has no relocations in them). */
  asc__cache_key_init(&k);
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) != 0)
      asc__cache_key_add(&k, "text",
                         (const void *)(info->dlpi_addr + ph->p_vaddr),
                         ph->p_filesz);
  }
  asc__cache_key_final(&k);
  snprintf(o->out, ASC_JIT_ID_MAX, "text:%s", k.hex);
  o->found = true;
  return 1;
}

bool asc__jit_object_identity(const void *addr, bool use_build_id,
                              char out[ASC_JIT_ID_MAX]) {
  object_id o = {addr, use_build_id, out, false};
  out[0] = '\0';
  dl_iterate_phdr(object_id_cb, &o);
  return o.found;
}

static uv_once_t build_id_once = UV_ONCE_INIT;
static char build_id[ASC_JIT_ID_MAX];
static const char *build_id_override;

static void build_id_init(void) {
  if (!asc__jit_object_identity((const void *)asc__jit_key, true, build_id))
    snprintf(build_id, sizeof build_id, "unknown");
}

const char *asc__jit_build_identity(void) {
  if (build_id_override != NULL)
    return build_id_override;
  uv_once(&build_id_once, build_id_init);
  return build_id;
}

void asc__jit_set_build_identity(const char *id) {
  build_id_override = id;
}

/* The versions every key and index key starts with. */
static void key_versions(asc__cache_key *k) {
  asc__cache_key_add_str(k, "libasc", ASC_VERSION_STRING);
  asc__cache_key_add_u64(k, "abi", ASC_KABI_VERSION);
  asc__cache_key_add_u64(k, "codegen", ASC_CODEGEN_VERSION);
  asc__cache_key_add_str(k, "build", asc__jit_build_identity());
}

/* The frozen globals, then the debug options and what generated code
 * embeds for messages' sake, of every key and of a module's record. */
static void key_globals_opts(asc__cache_key *k, const ascGlobalValue *gs,
                             int n, const ascCompileOptions *o) {
  asc__cache_key_add_u64(k, "nglobals", (uint64_t)n);
  for (int i = 0; gs != NULL && i < n; i++) {
    const ascGlobalValue *g = &gs[i];
    asc__cache_key_add_str(k, "global", g->name);
    asc__cache_key_add_u64(k, "dtype", (uint64_t)g->value.dtype);
    asc__cache_key_add_u64(k, "weak", (uint64_t)g->value.weak);
    asc__cache_key_add_u64(k, "value", g->value.value.u);
  }
  asc__cache_key_add_u64(k, "debug", o ? (uint64_t)(o->debug != 0) : 0);
  asc__cache_key_add_u64(k, "bounds", o ? (uint64_t)(o->boundsCheck != 0) : 0);
  asc__cache_key_add_u64(k, "opt", o ? (uint64_t)(uint32_t)o->optLevel : 0);
}

static void key_inputs(asc__cache_key *k, const asc__jit_inputs *in);

void asc__jit_key(asc__cache_key *k, const asc__cc *cc,
                  const asc__cc_opts *ccopts, const asc__jit_inputs *in) {
  asc__buf flags;

  asc__cache_key_init(k);
  key_versions(k);
  asc__cache_key_add_str(k, "cc", asc__cc_identity(cc));
  asc__buf_init(&flags);
  asc__cc_flags(cc, ccopts, &flags);
  /* On allocation failure hash a marker no flag list can produce rather
   * than a partial list: the key stays distinct, the build fails later. */
  asc__cache_key_add_str(k, "flags", flags.oom ? NULL : asc__buf_str(&flags));
  asc__buf_free(&flags);
  key_inputs(k, in);
  asc__cache_key_final(k);
}

/* The key of the index record (docs/cache.md, "Index") that leads from
 * in to its entry's key: every component of asc__jit_key, with what the
 * C compiler's identity and flags are made of (asc__cc_stamp, the
 * options) in place of the identity, whose computation runs the
 * compiler.  False when the compiler is not found. */
static bool index_key(asc__cache_key *k, const asc__cc_opts *ccopts,
                      const asc__jit_inputs *in) {
  asc__buf stamp;
  bool ok;

  asc__buf_init(&stamp);
  ok = asc__cc_stamp(&stamp);
  if (ok) {
    asc__cache_key_init(k);
    asc__cache_key_add_str(k, "index", "specialisation");
    key_versions(k);
    asc__cache_key_add_str(k, "cc-stamp", asc__buf_str(&stamp));
    asc__cache_key_add_u64(k, "O", (uint64_t)(int64_t)ccopts->opt_level);
    asc__cache_key_add_u64(k, "g", (uint64_t)ccopts->debug);
    asc__cache_key_add_u64(k, "fastmath-flags", ccopts->fastmath);
    asc__cache_key_add_str(k, "march", ccopts->march);
    key_inputs(k, in);
    asc__cache_key_final(k);
  }
  asc__buf_free(&stamp);
  return ok;
}

void asc__jit_module_key(asc__cache_key *k, const char *text, size_t len,
                         const ascCompileOptions *o) {
  asc__cache_key_init(k);
  asc__cache_key_add_str(k, "index", "module");
  key_versions(k);
  asc__cache_key_add(k, "source", text, len);
  asc__cache_key_add_str(k, "file", o && o->filename ? o->filename : NULL);
  asc__cache_key_add_u64(k, "line", o ? (uint64_t)(uint32_t)o->firstLine : 0);
  key_globals_opts(k, o ? o->globals : NULL, o ? o->numGlobals : 0, o);
  asc__cache_key_add_u64(k, "fastmath", o ? o->fastmath : 0);
  asc__cache_key_final(k);
}

/* Everything of the key after the compiler: CPU, text, kernel, signature,
 * globals, options. */
static void key_inputs(asc__cache_key *k, const asc__jit_inputs *in) {
  const ascCompileOptions *o = in->opts;
  asc__compile_opts dflt;
  const asc__compile_opts *copts = in->copts;

  if (copts == NULL) {
    asc__compile_opts_init(&dflt);
    copts = &dflt;
  }
  asc__cache_key_add_str(k, "cpu", asc__cc_cpu_features());
  asc__cache_key_add(k, "source", in->source, in->source_len);
  asc__cache_key_add_str(k, "kernel", in->kernel_name);
  asc__cache_key_add_str(k, "signature", in->signature);
  key_globals_opts(k, in->globals, in->nglobals, o);
  /* The compiler's options that change the code, every one of them
   * (compiler/options.h): the module's floating-point mode (also in
   * "flags"; a decorator's fastmath= is in the source), the passes left
   * out, the streaming-store threshold, the tile sizes (two L1 sizes that
   * give the same tiles share the code). */
#define KEY_FIELD(name) asc__cache_key_add_u64(k, #name, copts->code.name);
  ASC_CODEGEN_OPTS(KEY_FIELD)
#undef KEY_FIELD
  asc__cache_key_add_str(k, "file", o && o->filename ? o->filename : NULL);
  asc__cache_key_add_u64(k, "line", o ? (uint64_t)(uint32_t)o->firstLine : 0);
}

/* ---------------------------------------------------------------- build */

typedef struct build_ctx {
  const asc__cc *cc;
  asc__cc_opts *ccopts;
  const unsigned *fastmath;     /* NULL, or set by emit: the mode to build */
  asc__jit_emit_fn emit;
  void *ud;
  bool built;   /* the cache missed and build_so ran */
  bool quick;   /* the quick tier: refused for a fastmath kernel */
} build_ctx;

/* What build_so returns, with no message, when the quick tier does not
 * apply (asc__jit_load_quick then builds the optimised code). */
#define QUICK_REFUSED ascErrorNotReady

static ascError_t jit_open_fd(int fd, const char *path, asc__jit_lib **out);

/* What the C compiler made must be a module this libasc loads before the
 * cache publishes it: with ASC_CFLAGS=-E or -c it is text or an object
 * file, which as an entry would fail every later load of the key.  Loading
 * runs nothing but libasc's own generated code (constructors, if any).
 * A bad file is removed and the build fails. */
static ascError_t check_built(const char *path) {
  asc__jit_lib *l;
  char why[512];
  int fd;
  ascError_t err = asc__jit_open_file(path, O_NOFOLLOW, &fd);

  if (err == ascSuccess)
    err = jit_open_fd(fd, path, &l);
  if (err == ascSuccess) {
    asc__jit_unload(l);
    return ascSuccess;
  }
  snprintf(why, sizeof why, "%s", ascGetLastErrorMessage());
  unlink(path);
  return asc__error(ascErrorInternal,
                    "the C compiler's output is not a kernel module this "
                    "libasc can load (%s); check ASC_CC and ASC_CFLAGS (a "
                    "flag such as -E, -S or -c changes what it makes)",
                    why);
}

/* cc on the C text, into workdir, checked to load. */
static ascError_t cc_checked(const asc__cc *cc, const asc__cc_opts *ccopts,
                             const char *workdir, asc__buf *c,
                             char **so_path) {
  uint64_t t0 = asc__trace_clock();
  ascError_t err = asc__cc_build(cc, ccopts, workdir, "kernel",
                                 asc__buf_str(c), c->len, so_path);

  ASC_TRACE(asc__trace_span("compile", "C compiler", asc__cc_path(cc),
                            c->len, t0));
  if (err == ascSuccess && (err = check_built(*so_path)) != ascSuccess) {
    asc__free(*so_path);
    *so_path = NULL;
  }
  return err;
}

static ascError_t build_so(void *ud, const char *workdir, char **so_path) {
  build_ctx *b = ud;
  asc__buf c;
  ascError_t err;

  b->built = true;
  asc__buf_init(&c);
  err = b->emit(b->ud, &c);
  if (err == ascSuccess && c.oom)
    err = asc__error(ascErrorOutOfMemory, "out of memory emitting C");
  if (b->fastmath != NULL)
    b->ccopts->fastmath = *b->fastmath & ASC_FASTMATH_ALL;
  /* -O0 and -O3 agree bit for bit only without fast-math's licences; and
   * a kernel whose loops its arguments do not bound may run long */
  if (err == ascSuccess && b->quick &&
      (b->ccopts->fastmath != 0 ||
       (b->fastmath != NULL && (*b->fastmath & ASC__STAGES_UNBOUNDED))))
    err = QUICK_REFUSED;
  if (err == ascSuccess)
    err = cc_checked(b->cc, b->ccopts, workdir, &c, so_path);
  asc__buf_free(&c);
  return err;
}

/* uv_dlopen, keeping the calling thread's floating-point mode.  gcc and
 * clang link an object built with -ffast-math (fastmath=True) with
 * crtfastmath.o, whose constructor turns on flush-to-zero and
 * denormals-are-zero in the thread that loads it: every later kernel that
 * thread ran, in any mode, would flush subnormals to zero (and differ
 * from the same kernel's iterations run by workers).  A kernel's mode is
 * its own (docs/fastmath.md), so the loader puts the thread's back. */
static int dlopen_keep_fpmode(const char *name, uv_lib_t *lib) {
  fenv_t env;
  int r, saved = fegetenv(&env) == 0;

  r = uv_dlopen(name, lib);
  if (saved)
    fesetenv(&env);
  return r;
}

/* ----------------------------------------------------------------- load */

ascError_t asc__jit_open_file(const char *path, int flags, int *fd) {
  struct stat st;
  int f;

  *fd = -1;
  /* O_NONBLOCK: opening a FIFO for reading would wait for a writer, and a
   * device could be read forever; neither is a shared object. */
  f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags);
  if (f < 0) {
    if (errno == ENOENT)
      return asc__error(ascErrorFileNotFound, "%s: no such file", path);
    if (errno == ELOOP && (flags & O_NOFOLLOW) != 0)
      return asc__error(ascErrorInvalidModule, "%s: is a symbolic link",
                        path);
    return asc__error(ascErrorInvalidModule, "%s: cannot open: %s", path,
                      strerror(errno));
  }
  if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
    ascError_t e =
        asc__error(ascErrorInvalidModule, "%s: not a regular file", path);
    close(f);
    return e;
  }
  *fd = f;
  return ascSuccess;
}

int asc__jit_dlopen_fd(uv_lib_t *lib, int fd, const char *path) {
  /* glibc returns an already loaded object whose name equals the one
   * asked for without opening anything, and descriptor numbers are
   * reused: a second "/proc/self/fd/7" could get the object loaded from
   * an earlier descriptor 7.  So each load gets a name never used before
   * in this process: "/proc/self/fd", then the bits of a counter as "/."
   * (1) or "/" (0) path components, which the kernel ignores, then
   * "/<fd>". */
  static _Atomic uint64_t generation;
  uint64_t g = atomic_fetch_add(&generation, 1) + 1;
  char name[16 + 2 * 64 + 24];
  size_t n = (size_t)snprintf(name, sizeof name, "/proc/self/fd");
  struct stat a, b;

  for (; g != 0; g >>= 1)
    n += (size_t)snprintf(name + n, sizeof name - n, "%s",
                          (g & 1) != 0 ? "/." : "/");
  snprintf(name + n, sizeof name - n, "/%d", fd);
  if (stat(name, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino)
    return dlopen_keep_fpmode(name, lib);
  /* No /proc (a chroot or container without it): load by path.  What was
   * checked on fd and what gets loaded can then differ only if the file
   * at path is replaced in between, which the cache's directory checks
   * leave to this user and root (docs/cache.md). */
  return dlopen_keep_fpmode(path, lib);
}

/* The sanitizers' symbolizers read every loaded object by the name it was
 * loaded under: a "/proc/self/fd/N" whose N has since been closed and
 * reused names another file (a TSan report then died of SIGBUS reading
 * it).  Sanitizer builds keep the descriptor open while the object is
 * loaded; others close it at once and spend no descriptor per kernel. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KEEP_LOAD_FD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KEEP_LOAD_FD 1
#endif
#endif
#ifndef KEEP_LOAD_FD
#define KEEP_LOAD_FD 0
#endif

static void lib_free(asc__jit_lib *l) {
  if (l->fd >= 0)
    close(l->fd);
  asc__free(l->path);
  asc__free(l);
}

/* Loads the object open at fd (named path in messages); takes fd. */
static ascError_t jit_open_fd(int fd, const char *path, asc__jit_lib **out) {
  asc__jit_lib *l;
  void *sym = NULL;
  uint64_t t0;
  bool loaded;

  *out = NULL;
  l = asc__calloc(1, sizeof *l);
  if (l == NULL || (l->path = asc__strdup(path)) == NULL) {
    asc__free(l);
    close(fd);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  l->fd = -1;
  t0 = asc__trace_clock();
  loaded = asc__jit_dlopen_fd(&l->lib, fd, path) == 0;
  ASC_TRACE(asc__trace_span("compile", "dlopen", NULL, 0, t0));
  if (!loaded) {
    ascError_t e = asc__error(ascErrorInvalidModule, "cannot load %s: %s",
                              path, uv_dlerror(&l->lib));
    uv_dlclose(&l->lib);
    close(fd);
    lib_free(l);
    return e;
  }
  if (KEEP_LOAD_FD)
    l->fd = fd;
  else
    close(fd);
  if (uv_dlsym(&l->lib, ASC_MODULE_SYMBOL, &sym) != 0 || sym == NULL) {
    asc__error(ascErrorInvalidModule, "%s does not export %s", path,
               ASC_MODULE_SYMBOL);
    goto fail;
  }
  l->module = sym;
  if (l->module->abi_version < ASC_KABI_MIN_VERSION ||
      l->module->abi_version > ASC_KABI_VERSION) {
    asc__error(ascErrorInvalidModule,
               "%s was built for kernel ABI %u, this libasc has %u", path,
               (unsigned)l->module->abi_version, (unsigned)ASC_KABI_VERSION);
    goto fail;
  }
  *out = l;
  return ascSuccess;
fail:
  uv_dlclose(&l->lib);
  lib_free(l);
  return ascErrorInvalidModule;
}

ascError_t asc__jit_open(const char *path, asc__jit_lib **out) {
  ascError_t err;
  int fd;

  *out = NULL;
  err = asc__jit_open_file(path, 0, &fd);
  if (err == ascErrorFileNotFound)
    return asc__error(ascErrorInvalidModule, "cannot load %s: no such file",
                      path);
  if (err != ascSuccess)
    return err;
  return jit_open_fd(fd, path, out);
}

void asc__jit_unload(asc__jit_lib *l) {
  if (l == NULL)
    return;
  uv_dlclose(&l->lib);
  lib_free(l);
}

int asc__kernel_results(const asc_kernel_desc *d) {
  int n = 0;
  for (uint32_t j = d->nparams; j > 0; j--) {
    if (!(d->params[j - 1].flags & ASC_KPARAM_RESULT))
      break;
    n++;
  }
  return n;
}

static const asc_kernel_desc *find_kernel(const asc__jit_lib *l,
                                          const char *name) {
  uint32_t i;
  for (i = 0; i < l->module->nkernels; i++)
    if (l->module->kernels[i].name != NULL &&
        strcmp(l->module->kernels[i].name, name) == 0)
      return &l->module->kernels[i];
  return NULL;
}

/* The index record of a specialisation: its entry's key, then the SLEEF
 * library the entry links, with that file's identity (nothing when it
 * links none).  Which library the compiler finds is not in the index
 * key (finding it runs the compiler), so a record whose library has
 * changed or gone since is not used. */
static void vecmath_stamp(asc__buf *b, const char *lib) {
  struct stat st;

  if (lib == NULL)
    return;
  if (stat(lib, &st) != 0) {
    asc__buf_printf(b, "%s\n(gone)\n", lib);
    return;
  }
  asc__buf_printf(b, "%s\n%llu %llu %lld %lld.%09ld\n", lib,
                  (unsigned long long)st.st_dev,
                  (unsigned long long)st.st_ino, (long long)st.st_size,
                  (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* The entry's key from the index record of ik, in *k; false when there is
 * no usable record. */
static bool index_lookup(asc__cache *cache, const asc__cache_key *ik,
                         asc__cache_key *k) {
  asc__buf rec, now;
  bool ok = false;

  asc__buf_init(&rec);
  asc__buf_init(&now);
  if (asc__cache_index_get(cache, ik, &rec) && rec.len >= 16) {
    const char *lib = rec.data + 16;
    size_t n = strcspn(lib, "\n");
    if (rec.len > 16) {
      char *path = asc__malloc(n + 1);
      if (path != NULL) {
        memcpy(path, lib, n);
        path[n] = '\0';
        vecmath_stamp(&now, path);
        asc__free(path);
      }
    }
    ok = !now.oom && now.len == rec.len - 16 &&
         memcmp(now.data ? now.data : "", lib, now.len) == 0;
    if (ok)
      asc__cache_key_set(k, (const unsigned char *)rec.data);
  }
  asc__buf_free(&rec);
  asc__buf_free(&now);
  return ok;
}

static void index_store(asc__cache *cache, const asc__cache_key *ik,
                        const asc__cache_key *k, const asc__cc *cc) {
  asc__buf rec;

  asc__buf_init(&rec);
  asc__buf_put(&rec, k->digest, 16);
  vecmath_stamp(&rec, asc__cc_vecmath_lib(cc));
  if (!rec.oom)
    asc__cache_index_put(cache, ik, rec.data, rec.len);
  asc__buf_free(&rec);
}

/* The entry for in built with ccopts (the quick tier's when quick),
 * loaded. */
static ascError_t load(asc__cache *cache, const asc__jit_inputs *in,
                       asc__jit_emit_fn emit, void *ud, asc__cc_opts *ccopts,
                       bool quick, asc__jit_lib **lib,
                       const asc_kernel_desc **desc) {
  asc__cache_key k, ik;
  build_ctx b;
  char *path = NULL;
  ascError_t err;
  uint64_t t0;
  int fd = -1;
  bool indexed;

  t0 = asc__trace_clock();
  /* A process's first lookup of a kernel another process built: the
   * index gives the entry's key without running the C compiler for its
   * identity.  A stale or missing record, or an entry evicted since,
   * takes the full way below, which writes the record again. */
  indexed = index_key(&ik, ccopts, in);
  if (indexed && index_lookup(cache, &ik, &k)) {
    uint64_t t1;
    ASC_TRACE(asc__trace_span("compile", "cache key", in->kernel_name, 0, t0));
    t1 = asc__trace_clock();
    if (asc__cache_lookup_fd(cache, &k, &path, &fd) == ascSuccess) {
      ASC_TRACE(asc__trace_span("cache", "cache hit", "index", 0, t1));
      goto load;
    }
    t0 = asc__trace_clock();
  }
  err = asc__cc_get(&b.cc);
  if (err != ascSuccess)
    return err;
  b.ccopts = ccopts;
  b.fastmath = in->fastmath;
  b.emit = emit;
  b.ud = ud;
  b.quick = quick;
  asc__jit_key(&k, b.cc, ccopts, in);
  ASC_TRACE(asc__trace_span("compile", "cache key", in->kernel_name, 0, t0));
  /* Loaded through the descriptor the cache verified: another process
   * evicting or clearing the entry meanwhile cannot make this fail. */
  t0 = asc__trace_clock();
  b.built = false;
  err = asc__cache_get_or_build_fd(cache, &k, build_so, &b, &path, &fd);
  ASC_TRACE(asc__trace_span("cache", b.built ? "cache miss" : "cache hit",
                            in->kernel_name, 0, t0));
  if (err != ascSuccess)
    return err;
  if (indexed)
    index_store(cache, &ik, &k, b.cc);
load:
  err = jit_open_fd(fd, path, lib);
  asc__free(path);
  if (err != ascSuccess)
    return err;
  *desc = find_kernel(*lib, in->kernel_name);
  if (*desc == NULL) {
    err = asc__error(ascErrorInternal, "%s has no kernel '%s'",
                     (*lib)->path, in->kernel_name);
    asc__jit_unload(*lib);
    *lib = NULL;
  }
  return err;
}

ascError_t asc__jit_load(asc__cache *cache, const asc__jit_inputs *in,
                         asc__jit_emit_fn emit, void *ud, asc__jit_lib **lib,
                         const asc_kernel_desc **desc) {
  asc__cc_opts ccopts;
  ascError_t err;

  *lib = NULL;
  *desc = NULL;
  if (cache == NULL && (err = asc__cache_default(&cache)) != ascSuccess)
    return err;
  asc__jit_cc_opts(in->opts, &ccopts);
  return load(cache, in, emit, ud, &ccopts, false, lib, desc);
}

ascError_t asc__jit_load_quick(asc__cache *cache, const asc__jit_inputs *in,
                               asc__jit_emit_fn emit, void *ud,
                               asc__jit_lib **lib,
                               const asc_kernel_desc **desc, bool *quick) {
  asc__cc_opts ccopts, qopts;
  asc__cache_key k, ik;
  char *path = NULL;
  ascError_t err;
  uint64_t t0;
  int fd = -1;

  *lib = NULL;
  *desc = NULL;
  *quick = false;
  if (cache == NULL && (err = asc__cache_default(&cache)) != ascSuccess)
    return err;
  asc__jit_cc_opts(in->opts, &ccopts);
  /* An optimisation level, debug code or fast math asked for: as asked. */
  if (ccopts.opt_level >= 0 || ccopts.debug || ccopts.fastmath != 0)
    return load(cache, in, emit, ud, &ccopts, false, lib, desc);
  /* The optimised entry when the index says the cache has it. */
  t0 = asc__trace_clock();
  if (index_key(&ik, &ccopts, in) && index_lookup(cache, &ik, &k) &&
      asc__cache_lookup_fd(cache, &k, &path, &fd) == ascSuccess) {
    ASC_TRACE(asc__trace_span("cache", "cache hit", "index", 0, t0));
    err = jit_open_fd(fd, path, lib);
    asc__free(path);
    if (err == ascSuccess && (*desc = find_kernel(*lib, in->kernel_name)) !=
                                 NULL)
      return ascSuccess;
    asc__jit_unload(*lib);
    *lib = NULL;
  }
  qopts = ccopts;
  qopts.opt_level = 0;
  err = load(cache, in, emit, ud, &qopts, true, lib, desc);
  *quick = err == ascSuccess;
  if (err == QUICK_REFUSED)
    err = load(cache, in, emit, ud, &ccopts, false, lib, desc);
  return err;
}

/* ---------------------------------------------------------- tiering */

ascError_t asc__jit_tier_job(asc__cache *cache, const asc__jit_inputs *in,
                             asc__jit_emit_fn emit, void *ud,
                             asc__tier_job **out) {
  asc__tier_job *j;
  ascError_t err;
  uint64_t t0 = asc__trace_clock();

  *out = NULL;
  if (cache == NULL && (err = asc__cache_default(&cache)) != ascSuccess)
    return err;
  j = asc__calloc(1, sizeof *j);
  if (j == NULL || (j->kernel_name = asc__strdup(in->kernel_name)) == NULL) {
    asc__free(j);
    return asc__error(ascErrorOutOfMemory, "out of memory");
  }
  j->cache = cache;
  asc__buf_init(&j->text);
  asc__jit_cc_opts(in->opts, &j->ccopts);
  /* the keys of asc__jit_load's: computed before emit sets the mode */
  err = asc__cc_get(&j->cc);
  if (err == ascSuccess) {
    asc__jit_key(&j->key, j->cc, &j->ccopts, in);
    j->indexed = index_key(&j->ikey, &j->ccopts, in);
    err = emit(ud, &j->text);
  }
  if (err == ascSuccess && j->text.oom)
    err = asc__error(ascErrorOutOfMemory, "out of memory emitting C");
  if (err != ascSuccess) {
    asc__buf_free(&j->text);
    asc__free(j->kernel_name);
    asc__free(j);
    return err;
  }
  if (in->fastmath != NULL)
    j->ccopts.fastmath = *in->fastmath & ASC_FASTMATH_ALL;
  ASC_TRACE(asc__trace_span("compile", "tier-up C", in->kernel_name, 0, t0));
  *out = j;
  return ascSuccess;
}

static ascError_t build_text(void *ud, const char *workdir, char **so_path) {
  asc__tier_job *j = ud;
  return cc_checked(j->cc, &j->ccopts, workdir, &j->text, so_path);
}

void asc__jit_tier_build(asc__tier_job *j) {
  char *path = NULL;
  int fd = -1;
  uint64_t t0 = asc__trace_clock();
  ascError_t err =
      asc__cache_get_or_build_fd(j->cache, &j->key, build_text, j, &path, &fd);

  if (err == ascSuccess && j->indexed)
    index_store(j->cache, &j->ikey, &j->key, j->cc);
  if (err == ascSuccess)
    err = jit_open_fd(fd, path, &j->lib);
  asc__free(path);
  if (err == ascSuccess &&
      (j->desc = find_kernel(j->lib, j->kernel_name)) == NULL)
    err = asc__error(ascErrorInternal, "%s has no kernel '%s'", j->lib->path,
                     j->kernel_name);
  j->err = err;
  ASC_TRACE(asc__trace_span("compile",
                            err == ascSuccess ? "tier up" : "tier up failed",
                            j->kernel_name, 0, t0));
}
