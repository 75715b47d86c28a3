/*
 * ascc [--emit=MODE] [--signature SIG]... [-o OUT] [options] FILE.py
 *
 * Reads the file, runs the stages up to MODE inside one compilation context
 * and prints that stage's text form (--emit=so writes a shared object).
 * Diagnostics go to stderr; exit status 0 on success, 1 on compile errors,
 * 2 on usage or I/O errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascc.h"
#include "emit.h"
#include "jit/file.h"
#include "compiler/front/frontend.h"
#include "compiler/front/lexer.h"
#include "base/fastmath.h"
#include "compiler/options.h"
#include "jit/jit.h"
#include "asc/asc.h"

/* Stages register here.  writes_file: the stage writes its own output
 * (a binary), nothing goes to -o or stdout. */
static const struct {
  const char *mode;
  ascc_emit_fn fn;
  bool writes_file;
} modes[] = {
    {"tokens", ascc_emit_tokens, false},
    {"ast", ascc_emit_ast, false},
    {"types", ascc_emit_types, false},
    {"ir", ascc_emit_ir, false},
    {"c", ascc_emit_c, false},
    {"so", ascc_emit_so, true},
    {"h", ascc_emit_h, false},
};

int ascc_emit_tokens(const ascc_emit_args *a, asc__cctx *c, asc__buf *out) {
  int n;
  asc__token *t = asc__lex(c, &n);
  (void)a;
  asc__dump_tokens(t, n, out);
  return 0;
}

int ascc_emit_ast(const ascc_emit_args *a, asc__cctx *c, asc__buf *out) {
  asc__ast_module *m = asc__frontend(c, NULL, 0);
  (void)a;
  asc__dump_ast(m, out);
  return 0;
}

static int usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "ascc: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
  fprintf(stderr, "usage: ascc [--emit=so|h|c|ir|types|ast|tokens] "
                  "[--signature SIG]... [-o OUT] [-O0..-O3] "
                  "[--fastmath[=FLAGS]] [--boundscheck] [-march=CPU] "
                  "[--l1-cache=BYTES|host] FILE.py\n"
                  "(ascc --help explains each)\n");
  return 2;
}

/* Runs fn inside a compilation context; separate so that the locals of
 * the function holding setjmp are few and volatile where needed. */
static int run(const ascc_emit_args *a, ascc_emit_fn fn, bool writes_file) {
  asc__compile_opts o;
  asc__cctx c;
  jmp_buf jb;
  asc__buf out;
  volatile int rc = 0;

  asc__cctx_init(&c, a->path, a->text, a->len, 1);
  /* the switches and ASC_NTSTORE as the JIT reads them, the fastmath and
   * L1 size of the command line */
  asc__jit_compile_opts(&o, a->fastmath, a->l1d_bytes);
  asc__cctx_set_opts(&c, &o);
  asc__buf_init(&out);
  c.catch_point = &jb;
  if (setjmp(jb) == 0)
    rc = fn(a, &c, &out);
  if (c.fail == ASC_FAIL_OOM)
    asc__buf_puts(&c.diag, "ascc: out of memory\n");
  fputs(asc__buf_str(&c.diag), stderr);
  if (rc == 0 && (c.fail != ASC_FAIL_NONE || c.nerrors > 0))
    rc = 1;
  if (rc == 0 && !writes_file && a->out != NULL) {
    rc = ascc_write_output(a, a->out, out.data ? out.data : "", -1, out.len,
                           0666);
  } else if (rc == 0 && !writes_file) {
    /* A full disk or a closed pipe must not look like an empty output. */
    if (fwrite(out.data ? out.data : "", 1, out.len, stdout) != out.len ||
        fflush(stdout) != 0) {
      fprintf(stderr, "ascc: cannot write the output to standard output: "
                      "%s\n", strerror(errno));
      rc = 2;
    }
  }
  asc__buf_free(&out);
  asc__cctx_free(&c);
  return rc;
}

int ascc_write_output(const ascc_emit_args *a, const char *path,
                      const void *data, int fd, size_t n, mode_t mode) {
  asc__outfile o;
  int e = asc__outfile_open(&o, path, mode, 0);

  if (e == 0 && o.exists && o.old.st_dev == a->path_st.st_dev &&
      o.old.st_ino == a->path_st.st_ino) {
    asc__outfile_discard(&o);
    fprintf(stderr, "ascc: cannot write %s: it is the input file %s\n", path,
            a->path);
    return 2;
  }
  if (e == 0)
    e = data != NULL ? asc__outfile_write(&o, data, n)
                     : asc__outfile_copy(&o, fd, n);
  if (e == 0)
    e = asc__outfile_commit(&o);
  else
    asc__outfile_discard(&o);
  if (e != 0) {
    fprintf(stderr, "ascc: cannot write %s: %s\n", path,
            asc__outfile_strerror(e));
    return 2;
  }
  return 0;
}

/* -march values are passed to the C compiler as one argument: keep them
 * to the characters CPU names use. */
static bool march_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 100)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || strchr("-_.+", s[i]) != NULL))
      return false;
  return true;
}

/* --l1-cache=BYTES (a K or M suffix counts 1024s) or host: the L1 data
 * cache of this machine's device, as the JIT would use it. */
static bool parse_l1(const char *s, uint64_t *out) {
  char *end;
  unsigned long long v;
  if (strcmp(s, "host") == 0) {
    ascDeviceProp p;
    if (ascGetDeviceProperties(&p, 0) != ascSuccess || p.l1CacheSize == 0) {
      fprintf(stderr, "ascc: warning: --l1-cache=host: this machine's L1 "
                      "data cache size is unknown; the passes use their "
                      "default (%d bytes)\n", ASC_DEFAULT_L1D_BYTES);
      *out = 0;
    } else {
      *out = (uint64_t)p.l1CacheSize;
    }
    return true;
  }
  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0)
    return false;
  if (*end == 'K' || *end == 'k')
    v <<= 10, end++;
  else if (*end == 'M' || *end == 'm')
    v <<= 20, end++;
  if (*end != '\0' || v < 1024 || v > (1ull << 30))
    return false;
  *out = (uint64_t)v;
  return true;
}

/* --fastmath=FLAGS: names separated by commas, as numba spells them. */
static bool parse_fastmath(const char *s, unsigned *mask) {
  *mask = 0;
  for (;;) {
    size_t n = strcspn(s, ",");
    unsigned bit = asc__fastmath_bit(s, n);
    if (bit == 0) {
      fprintf(stderr, "ascc: unknown fastmath flag '%.*s' (valid: "
              ASC_FASTMATH_VALID "; --fastmath alone allows them all)\n",
              (int)n, s);
      return false;
    }
    *mask |= bit;
    if (s[n] == '\0')
      return true;
    s += n + 1;
  }
}

int ascc_emit_main(int argc, char **argv) {
  ascc_emit_args a;
  ascc_emit_fn fn = NULL;
  bool known = false, writes_file = false;
  int rc;
  char *text;

  memset(&a, 0, sizeof a);
  a.mode = "so";
  a.opt_level = -1;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    const char *sig = NULL;
    if (strncmp(s, "--emit=", 7) == 0) {
      a.mode = s + 7;
    } else if (strcmp(s, "--signature") == 0 || strcmp(s, "-o") == 0) {
      if (i + 1 >= argc)
        return usage_error("missing value after", s);
      if (s[1] == 'o')
        a.out = argv[++i];
      else
        sig = argv[++i];
    } else if (strncmp(s, "--signature=", 12) == 0) {
      sig = s + 12;
    } else if (strlen(s) == 3 && s[0] == '-' && s[1] == 'O' &&
               s[2] >= '0' && s[2] <= '3') {
      a.opt_level = s[2] - '0';
    } else if (strcmp(s, "--fastmath") == 0) {
      a.fastmath = ASC_FASTMATH_ALL;
    } else if (strncmp(s, "--fastmath=", 11) == 0) {
      if (!parse_fastmath(s + 11, &a.fastmath))
        return 2;
    } else if (strcmp(s, "--boundscheck") == 0) {
      a.boundscheck = 1;
    } else if (strncmp(s, "-march=", 7) == 0) {
      if (!march_ok(s + 7))
        return usage_error("bad -march value", s + 7);
      a.march = s + 7;
    } else if (strncmp(s, "--l1-cache=", 11) == 0) {
      if (!parse_l1(s + 11, &a.l1d_bytes))
        return usage_error("bad --l1-cache value (BYTES from 1024 to 1G, "
                           "a K or M suffix, or host)", s + 11);
    } else if (s[0] == '-' && s[1] != '\0') {
      return usage_error("unknown option", s);
    } else if (a.path != NULL) {
      return usage_error("more than one input file", s);
    } else {
      a.path = s;
    }
    if (sig != NULL) {
      if (a.nsignatures == ASCC_MAX_SIGNATURES)
        return usage_error("too many --signature options", sig);
      a.signatures[a.nsignatures++] = sig;
      if (a.signature == NULL)
        a.signature = sig;
    }
  }
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    if (strcmp(modes[i].mode, a.mode) == 0) {
      known = true;
      fn = modes[i].fn;
      writes_file = modes[i].writes_file;
    }
  if (!known)
    return usage_error("unknown --emit mode", a.mode);
  if (a.path == NULL)
    return usage_error("no input file", NULL);
  /* Regular files only, of a sane size: a FIFO would block, /dev/zero
   * fill the memory. */
  text = asc__read_file(a.path, &a.len);
  if (text == NULL || stat(a.path, &a.path_st) != 0) {
    fprintf(stderr, "ascc: cannot read %s: %s\n", a.path,
            asc__read_file_strerror(errno));
    asc__free(text);
    return 2;
  }
  a.text = text;
  rc = run(&a, fn, writes_file);
  asc__free(text);
  return rc;
}
