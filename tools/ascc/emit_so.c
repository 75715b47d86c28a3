/*
 * ascc --emit=so and --emit=h: a module compiled ahead of time.
 *
 *   ascc --signature 'vadd(f32[:], f32[:], f32[:])' \
 *        --signature 'vadd(f64[::1], f64[::1], f64[::1])' -o vadd.so vadd.py
 *   ascc --emit=h -o vadd.h vadd.py
 *
 * Every kernel of the file is specialised for each signature naming it
 * (--signature, and `# asc: signature ...` lines in the file), all in one
 * C module built by the JIT's own code generator (asc__compile_module) and
 * compiled once by the same C-compiler driver.  The module exports, beside
 * asc_module_v1, the asc_specs_v1 table that tells ascModuleLoad which
 * signature each entry was compiled for (kernel_abi.h), so a launch picks
 * its entry without a compiler.  The header has a typed launch wrapper per
 * specialisation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit/cc.h"
#include "emit.h"
#include "compiler/front/frontend.h"
#include "compiler/types/infer.h"
#include "compiler/compile.h"
#include "compiler/types/types.h"

typedef struct aot_spec {
  asc__compile_spec cg;
  const char *text;              /* canonical signature, with the name */
  bool *generic;                 /* per parameter: unannotated */
} aot_spec;

typedef struct aot_specs {
  aot_spec *v;
  int n, cap;
} aot_specs;

/* ------------------------------------------------------------- kernels */

asc__ast_func *ascc_find_kernel(const ascc_emit_args *a,
                                const asc__ast_module *m, const char *name) {
  asc__ast_func *k = asc__module_func(m, name);
  int n = 0;

  if (k != NULL && k->kind == ASC_FUNC_KERNEL)
    return k;
  fprintf(stderr, "ascc: %s: no kernel named '%s'", a->path, name);
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i]->kind == ASC_FUNC_KERNEL)
      fprintf(stderr, "%s'%s'", n++ == 0 ? "; its kernels: " : ", ",
              m->funcs[i]->name);
  if (n == 0)
    fprintf(stderr, "; it has no @asc.kernel function");
  else if (k != NULL)
    fprintf(stderr, " ('%s' is not decorated with @asc.kernel)", name);
  fprintf(stderr, "\n");
  return NULL;
}

/* The first kernel defined after text offset `at`. */
static asc__ast_func *kernel_after(const asc__ast_module *m, size_t at) {
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i]->kind == ASC_FUNC_KERNEL && m->funcs[i]->text_begin >= at)
      return m->funcs[i];
  return NULL;
}

static int count_kernels(const asc__ast_module *m) {
  int n = 0;
  for (int i = 0; i < m->nfuncs; i++)
    n += m->funcs[i]->kind == ASC_FUNC_KERNEL;
  return n;
}

/* ---------------------------------------------------------- signatures */

/* Adds the specialisation of sig (parsed from text; " aliased" at the end
 * asks for one that accepts overlapping tensors).  `at`: the offset of the
 * `# asc: signature` line, or (size_t)-1 for --signature.  Returns 0, 1 on
 * a compile error, 2 on a usage error (reported). */
static int add_signature(const ascc_emit_args *a, asc__cctx *c,
                         asc__ast_module *m, aot_specs *out, const char *text,
                         size_t at) {
  const char *suffix = " aliased";
  size_t len = strlen(text), sl = strlen(suffix);
  bool alias = false;
  asc__sig *sig;
  asc__ast_func *k;
  asc__buf b;
  char *canon;

  while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' ||
                     text[len - 1] == '\r'))
    len--;
  if (len > sl && memcmp(text + len - sl, suffix, sl) == 0) {
    alias = true;
    len -= sl;
  }
  sig = asc__sig_parse(c, asc__arena_strndup(c, text, len));
  if (sig == NULL)
    return 1;
  if (sig->name != NULL) {
    k = ascc_find_kernel(a, m, sig->name);
    if (k == NULL)
      return 2;
  } else if (at != (size_t)-1) {
    k = kernel_after(m, at);
    if (k == NULL) {
      fprintf(stderr, "ascc: %s: a '# asc: signature' line without a kernel "
                      "name must come before the kernel it is for\n",
              a->path);
      return 2;
    }
  } else if (count_kernels(m) == 1) {
    k = kernel_after(m, 0);
  } else {
    fprintf(stderr, "ascc: %s has %d kernels: name the kernel in "
                    "--signature '%s'\n",
            a->path, count_kernels(m), text);
    return 2;
  }
  if (k->nparams != sig->nparams) {
    fprintf(stderr, "ascc: %s: kernel '%s' takes %d parameter%s, the "
                    "signature '%s' gives %d\n",
            a->path, k->name, k->nparams, k->nparams == 1 ? "" : "s", text,
            (int)sig->nparams);
    return 2;
  }
  sig->name = k->name;
  asc__buf_init(&b);
  asc__sig_format(&b, sig);
  if (b.oom)
    asc__cctx_throw(c, ASC_FAIL_OOM);
  canon = asc__arena_strndup(c, b.data, b.len);
  asc__buf_free(&b);
  for (int i = 0; i < out->n; i++)
    if (out->v[i].cg.may_alias == alias && strcmp(out->v[i].text, canon) == 0)
      return 0; /* given twice */
  out->v = asc__arena_grow(c, out->v, out->n, &out->cap, sizeof *out->v, 8);
  out->v[out->n].cg.kernel = k;
  out->v[out->n].cg.sig = sig;
  out->v[out->n].cg.may_alias = alias;
  out->v[out->n].text = canon;
  {
    ascKernelParamInfo *pi =
        asc__arena_alloc(c, sizeof *pi * (size_t)(k->nparams + 1));
    bool *g = asc__arena_alloc(c, sizeof *g * (size_t)(k->nparams + 1));
    if (!asc__kernel_params(c, k, pi))
      return 1;
    for (int i = 0; i < k->nparams; i++)
      g[i] = pi[i].generic != 0;
    out->v[out->n].generic = g;
  }
  out->n++;
  return 0;
}

/* "# asc: signature TEXT" lines: blanks allowed around '#' and ':'. */
static const char *comment_signature(const char *line, const char *end,
                                     size_t *len) {
  const char *p = line;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (p == end || *p++ != '#')
    return NULL;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (end - p < 4 || memcmp(p, "asc", 3) != 0)
    return NULL;
  p += 3;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (p == end || *p++ != ':')
    return NULL;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (end - p < 9 || memcmp(p, "signature", 9) != 0 ||
      (end - p > 9 && p[9] != ' ' && p[9] != '\t'))
    return NULL;
  p += 9;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  *len = (size_t)(end - p);
  return p;
}

/* The parameter types of a kernel whose parameters are all annotated:
 * it needs no signature.  NULL when some parameter is generic. */
static const char *annotated_signature(asc__cctx *c, asc__ast_func *k) {
  ascKernelParamInfo *pi =
      asc__arena_alloc(c, sizeof *pi * (size_t)(k->nparams + 1));
  asc__sig sig;
  asc__buf b;
  const char *text;

  if (!asc__kernel_params(c, k, pi) ||
      !asc__sig_from_annotations(c, k->name, pi, k->nparams, &sig))
    return NULL;
  asc__buf_init(&b);
  asc__sig_format(&b, &sig);
  if (b.oom)
    asc__cctx_throw(c, ASC_FAIL_OOM);
  text = asc__arena_strndup(c, b.data, b.len);
  asc__buf_free(&b);
  return text;
}

/* Every specialisation asked for, in order: --signature first, then the
 * file's `# asc: signature` lines, then fully annotated kernels nobody
 * gave a signature.  Returns as add_signature. */
static int collect(const ascc_emit_args *a, asc__cctx *c, asc__ast_module *m,
                   aot_specs *out) {
  int rc = 0;

  for (int i = 0; i < a->nsignatures && rc == 0; i++)
    rc = add_signature(a, c, m, out, a->signatures[i], (size_t)-1);
  for (const char *p = a->text; rc == 0 && p < a->text + a->len;) {
    const char *end = memchr(p, '\n', (size_t)(a->text + a->len - p));
    const char *s;
    size_t n;
    if (end == NULL)
      end = a->text + a->len;
    s = comment_signature(p, end, &n);
    if (s != NULL)
      rc = add_signature(a, c, m, out, asc__arena_strndup(c, s, n),
                         (size_t)(p - a->text));
    p = end + 1;
  }
  for (int i = 0; i < m->nfuncs && rc == 0; i++) {
    asc__ast_func *k = m->funcs[i];
    bool given = false;
    const char *text;
    if (k->kind != ASC_FUNC_KERNEL)
      continue;
    for (int j = 0; j < out->n; j++)
      given |= out->v[j].cg.kernel == k;
    if (given)
      continue;
    text = annotated_signature(c, k);
    if (text != NULL)
      rc = add_signature(a, c, m, out, text, (size_t)-1);
    else
      fprintf(stderr, "ascc: %s: warning: kernel '%s' has no signature and "
                      "is left out (give --signature '%s(...)' or a "
                      "'# asc: signature %s(...)' line)\n",
              a->path, k->name, k->name, k->name);
  }
  if (rc == 0 && out->n == 0 && c->nerrors == 0) {
    fprintf(stderr, "ascc: %s: nothing to compile: no kernel has a "
                    "signature\n",
            a->path);
    rc = 2;
  }
  return rc;
}

/* ------------------------------------------------------------- C text */

static void put_cstring(asc__buf *b, const char *s) {
  asc__buf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      asc__buf_printf(b, "\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f || *p == '?')
      asc__buf_printf(b, "\\%03o", *p);
    else
      asc__buf_printf(b, "%c", *p);
  }
  asc__buf_puts(b, "\"");
}

/* The module's C text: the kernels, then asc_specs_v1. */
static int build_c(const ascc_emit_args *a, asc__cctx *c, aot_specs *specs,
                   asc__buf *out, unsigned *fastmath) {
  asc__ast_module *m = asc__frontend(c, NULL, 0);
  asc__compile_spec *cg;
  int rc = collect(a, c, m, specs);

  if (rc != 0 || c->nerrors > 0)
    return rc;
  cg = asc__arena_alloc(c, sizeof *cg * (size_t)specs->n);
  for (int i = 0; i < specs->n; i++) {
    cg[i] = specs->v[i].cg;
    if (a->boundscheck && cg[i].kernel->opts.boundscheck < 0)
      cg[i].kernel->opts.boundscheck = 1;
  }
  if (!asc__compile_module(c, m, cg, specs->n, out, fastmath))
    return 0; /* type errors, in c's diagnostics */
  asc__buf_puts(out, "\n/* The signature of each entry of asc_module_v1 "
                     "(ascc --emit=so). */\n"
                     "#if ASC_PART != 2\n"
                     "static const asc_kspec asc_spec_list[] = {\n");
  for (int i = 0; i < specs->n; i++) {
    asc__buf_puts(out, "  {");
    put_cstring(out, specs->v[i].text);
    asc__buf_printf(out, ", %s},\n",
                    specs->v[i].cg.may_alias ? "ASC_KSPEC_MAY_ALIAS" : "0");
  }
  asc__buf_printf(out, "};\n\n__attribute__((visibility(\"default\")))\n"
                       "const asc_kspecs_desc asc_specs_v1 = "
                       "{ASC_KABI_VERSION, %d, asc_spec_list};\n#endif\n",
                  specs->n);
  if (out->oom)
    asc__cctx_throw(c, ASC_FAIL_OOM);
  return 0;
}

/* --emit=c of a .py file: the C --emit=so compiles. */
int ascc_emit_aot_c(const ascc_emit_args *a, asc__cctx *c, asc__buf *out) {
  aot_specs specs = {NULL, 0, 0};
  return build_c(a, c, &specs, out, NULL);
}

/* -------------------------------------------------------------- --emit=so */

/* The built shared object (path) to dst. */
static int publish(const ascc_emit_args *a, const char *path,
                   const char *dst) {
  struct stat st;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc;

  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "ascc: cannot read the built %s: %s\n", path,
            fd < 0 ? strerror(errno) : "not a regular file");
    if (fd >= 0)
      close(fd);
    return 2;
  }
  rc = ascc_write_output(a, dst, NULL, fd, (size_t)st.st_size, 0777);
  close(fd);
  return rc;
}

/* FILE.py -> STEM.so in the working directory. */
static char *default_output(const char *path, const char *ext) {
  const char *base = strrchr(path, '/');
  size_t n;
  char *out;

  base = base ? base + 1 : path;
  n = strlen(base);
  if (n > 3 && strcmp(base + n - 3, ".py") == 0)
    n -= 3;
  out = malloc(n + strlen(ext) + 1);
  if (out != NULL) {
    memcpy(out, base, n);
    strcpy(out + n, ext);
  }
  return out;
}

int ascc_emit_so(const ascc_emit_args *a, asc__cctx *c, asc__buf *out) {
  aot_specs specs = {NULL, 0, 0};
  asc__buf text;
  const asc__cc *cc;
  asc__cc_opts o;
  char dir[] = "/tmp/ascc-XXXXXX", *so = NULL, *dst;
  const char *tmp = getenv("TMPDIR");
  char dirbuf[4096];
  unsigned fastmath = 0;
  ascError_t err = ascSuccess;
  int rc;

  (void)out;
  asc__buf_init(&text);
  rc = build_c(a, c, &specs, &text, &fastmath);
  if (rc != 0 || c->nerrors > 0 || c->fail != ASC_FAIL_NONE) {
    asc__buf_free(&text);
    return rc;
  }
  if (asc__cc_get(&cc) != ascSuccess) {
    fprintf(stderr, "ascc: %s\n", ascGetLastErrorMessage());
    asc__buf_free(&text);
    return 2;
  }
  memset(&o, 0, sizeof o);
  o.opt_level = a->opt_level;
  o.fastmath = fastmath;
  o.march = a->march != NULL ? a->march : "";
  if (tmp != NULL && tmp[0] != '\0' &&
      snprintf(dirbuf, sizeof dirbuf, "%s/ascc-XXXXXX", tmp) <
          (int)sizeof dirbuf) {
    if (mkdtemp(dirbuf) == NULL) {
      fprintf(stderr, "ascc: cannot create a directory in %s: %s\n", tmp,
              strerror(errno));
      asc__buf_free(&text);
      return 2;
    }
  } else if (mkdtemp(dir) == NULL) {
    fprintf(stderr, "ascc: cannot create %s: %s\n", dir, strerror(errno));
    asc__buf_free(&text);
    return 2;
  } else {
    strcpy(dirbuf, dir);
  }
  dst = a->out ? strdup(a->out) : default_output(a->path, ".so");
  if (dst == NULL) {
    fprintf(stderr, "ascc: out of memory\n");
    rc = 2;
  } else if ((err = asc__cc_build(cc, &o, dirbuf, "module",
                                  asc__buf_str(&text), text.len, &so)) !=
             ascSuccess) {
    fprintf(stderr, "ascc: %s\n", ascGetLastErrorMessage());
    rc = 2;
  } else {
    rc = publish(a, so, dst);
    unlink(so);
  }
  /* A failed compile keeps the generated C, which its message names;
   * nothing else stays. */
  if (err != ascErrorInternal && err != ascErrorTimeout)
    rmdir(dirbuf);
  asc__free(so);
  free(dst);
  asc__buf_free(&text);
  return rc;
}

/* --------------------------------------------------------------- --emit=h */

static bool c_keyword(const char *s) {
  static const char *const kw[] = {
      "auto", "bool", "break", "case", "char", "const", "continue",
      "default", "do", "double", "else", "enum", "extern", "float", "for",
      "goto", "if", "inline", "int", "long", "register", "restrict",
      "return", "short", "signed", "sizeof", "static", "struct", "switch",
      "typedef", "union", "unsigned", "void", "volatile", "while", "true",
      "false", "stream", "blocks", "asm", "main"};
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
    if (strcmp(s, kw[i]) == 0)
      return true;
  return strncmp(s, "asc", 3) == 0 || s[0] == '_';
}

/* A C identifier for a Python name: ASCII letters, digits and '_' kept,
 * other bytes as _xHH. */
static void put_ident(asc__buf *b, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
        (*p >= '0' && *p <= '9') || *p == '_')
      asc__buf_printf(b, "%c", *p);
    else
      asc__buf_printf(b, "_x%02X", *p);
  }
}

static void put_param(asc__buf *b, const char *name) {
  put_ident(b, name);
  if (c_keyword(name))
    asc__buf_puts(b, "_");
}

static const char *c_type(const asc__sig_param *p) {
  if (p->weak)
    return p->dtype == ascFloat64 ? "double" : "int64_t";
  switch (p->dtype) {
  case ascBool: return "bool";
  case ascInt8: return "int8_t";
  case ascInt16: return "int16_t";
  case ascInt32: return "int32_t";
  case ascInt64: return "int64_t";
  case ascUInt8: return "uint8_t";
  case ascUInt16: return "uint16_t";
  case ascUInt32: return "uint32_t";
  case ascUInt64: return "uint64_t";
  case ascFloat32: return "float";
  case ascFloat64: return "double";
  default: return "uint16_t"; /* float16, bfloat16: the bits */
  }
}

static const char *const dtype_enum[] = {
    "ascBool",    "ascInt8",   "ascInt16",    "ascInt32",  "ascInt64",
    "ascUInt8",   "ascUInt16", "ascUInt32",   "ascUInt64", "ascFloat16",
    "ascBFloat16", "ascFloat32", "ascFloat64"};

#if !defined(__FLT16_MAX__)
/* IEEE binary16 bits of v, rounded to nearest even, for C compilers
 * without _Float16 (clang 14 on x86-64). */
static uint16_t f16_bits_portable(double v) {
  uint64_t u, sign, mant;
  int exp;
  memcpy(&u, &v, sizeof u);
  sign = (u >> 48) & 0x8000u;
  exp = (int)((u >> 52) & 0x7ff);
  mant = u & 0xfffffffffffffull;
  if (exp == 0x7ff) /* inf or nan */
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  exp -= 1023 - 15;
  if (exp >= 31)
    return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) { /* subnormal or zero in half */
    int shift;
    if (exp < -10)
      return (uint16_t)sign;
    mant |= 1ull << 52;
    shift = 42 + 1 - exp;
    {
      uint64_t half = mant >> shift, rem = mant & ((1ull << shift) - 1),
               mid = 1ull << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1)))
        half++;
      return (uint16_t)(sign | half);
    }
  }
  {
    uint64_t half = mant >> 42, rem = mant & ((1ull << 42) - 1),
             mid = 1ull << 41, bits;
    if (rem > mid || (rem == mid && (half & 1)))
      half++;
    bits = ((uint64_t)exp << 10) + half; /* a carry moves into exp */
    if (bits >= 0x7c00u)
      return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | bits);
  }
}
#endif

/* The storage bits of a float16 / bfloat16 value (round to nearest even),
 * for annotated ConstExpr parameters, which are passed as raw bits. */
static uint16_t half_bits(ascDataType dt, double v) {
  uint16_t h;
  if (dt == ascFloat16) {
#if defined(__FLT16_MAX__)
    _Float16 f = (_Float16)v;
    memcpy(&h, &f, sizeof h);
#else
    h = f16_bits_portable(v);
#endif
  } else {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
      return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    h = (uint16_t)(u >> 16);
  }
  return h;
}

/* A ConstExpr value as a C expression. */
static void put_value(asc__buf *b, const asc__sig_param *p, bool generic) {
  if (!generic && (p->dtype == ascFloat16 || p->dtype == ascBFloat16))
    asc__buf_printf(b, "0x%04x", half_bits(p->dtype, p->value.value.f));
  else if (asc__dtype_is_float(p->dtype))
    asc__buf_printf(b, "%a", p->value.value.f);
  else if (asc__dtype_is_unsigned(p->dtype))
    asc__buf_printf(b, "%lluULL", (unsigned long long)p->value.value.u);
  else if (p->value.value.i == INT64_MIN)
    asc__buf_puts(b, "INT64_MIN");
  else
    asc__buf_printf(b, "%lldLL", (long long)p->value.value.i);
}

/* The wrapper's name: asc_launch_KERNEL_ plus the distinct dtypes of its
 * tensors (of its scalars when it has no tensor), in order. */
static void wrapper_name(asc__buf *b, const aot_spec *s) {
  const asc__sig *sig = s->cg.sig;
  bool tensors = false;
  uint32_t seen = 0;

  asc__buf_puts(b, "asc_launch_");
  put_ident(b, s->cg.kernel->name);
  for (int32_t i = 0; i < sig->nparams; i++)
    tensors |= sig->params[i].is_tensor;
  for (int32_t i = 0; i < sig->nparams; i++) {
    const asc__sig_param *p = &sig->params[i];
    if (p->is_tensor != tensors || (seen >> p->dtype & 1u))
      continue;
    seen |= 1u << p->dtype;
    asc__buf_printf(b, "_%s", p->weak ? (p->dtype == ascFloat64 ? "float"
                                                                 : "int")
                                       : asc__dtype_short(p->dtype));
  }
}

static void put_wrapper(asc__buf *o, const aot_spec *s, const char *name,
                        const char *module) {
  const asc__sig *sig = s->cg.sig;
  const asc__ast_func *k = s->cg.kernel;
  int n = sig->nparams;

  asc__buf_printf(o, "/* %s%s */\nstatic inline ascError_t %s(\n"
                     "    ascStream_t stream, unsigned blocks",
                  s->text, s->cg.may_alias ? " aliased" : "", name);
  for (int i = 0; i < n; i++) {
    const asc__sig_param *p = &sig->params[i];
    if (p->is_constexpr)
      continue; /* compiled in */
    asc__buf_puts(o, ",\n    ");
    if (p->is_tensor)
      asc__buf_puts(o, "const ascTensor *");
    else if (s->generic[i] && (p->dtype == ascFloat16 ||
                               p->dtype == ascBFloat16))
      asc__buf_puts(o, "double "); /* an ascScalar holds it as value.f */
    else
      asc__buf_printf(o, "%s ", c_type(p));
    put_param(o, k->params[i].name);
  }
  asc__buf_puts(o, ") {\n  ascKernel_t asc_k;\n");
  if (n > 0)
    asc__buf_printf(o, "  void *asc_args[%d];\n", n);
  for (int i = 0; i < n; i++) {
    const asc__sig_param *p = &sig->params[i];
    if (p->is_tensor) {
      asc__buf_printf(o, "  asc_args[%d] = (void *)", i);
      put_param(o, k->params[i].name);
      asc__buf_puts(o, ";\n");
      continue;
    }
    /* generic scalars take an ascScalar, annotated ones the value */
    if (s->generic[i]) {
      asc__buf_printf(o, "  ascScalar asc_s%d = {%s, %d, {0}};\n", i,
                      dtype_enum[p->dtype], p->weak ? 1 : 0);
      asc__buf_printf(o, "  asc_s%d.value.%s = ", i,
                      asc__dtype_is_float(p->dtype)      ? "f"
                      : asc__dtype_is_unsigned(p->dtype) ? "u"
                                                         : "i");
      if (p->is_constexpr)
        put_value(o, p, true);
      else
        put_param(o, k->params[i].name);
      asc__buf_printf(o, ";\n  asc_args[%d] = &asc_s%d;\n", i, i);
    } else if (p->is_constexpr) {
      asc__buf_printf(o, "  %s asc_v%d = ", c_type(p), i);
      put_value(o, p, false);
      asc__buf_printf(o, ";\n  asc_args[%d] = &asc_v%d;\n", i, i);
    } else {
      asc__buf_printf(o, "  asc_args[%d] = &", i);
      put_param(o, k->params[i].name);
      asc__buf_puts(o, ";\n");
    }
  }
  asc__buf_printf(o, "  ascError_t asc_e = ascModuleGetKernel(&asc_k, "
                     "%s_module, ",
                  module);
  put_cstring(o, k->name);
  asc__buf_printf(o, ");\n  if (asc_e != ascSuccess)\n    return asc_e;\n"
                     "  return ascLaunchKernel(asc_k, blocks, %s, stream);\n"
                     "}\n\n",
                  n > 0 ? "asc_args" : "NULL");
}

/* An identifier for the module from the source file name. */
static char *module_prefix(const char *path) {
  char *stem = default_output(path, "");
  asc__buf b;

  if (stem == NULL)
    return NULL;
  asc__buf_init(&b);
  asc__buf_puts(&b, "asc_");
  put_ident(&b, stem);
  free(stem);
  return b.data;
}

int ascc_emit_h(const ascc_emit_args *a, asc__cctx *c, asc__buf *o) {
  aot_specs specs = {NULL, 0, 0};
  asc__buf scratch, name;
  char *mod;
  const char **names;
  int rc;

  asc__buf_init(&scratch);
  rc = build_c(a, c, &specs, &scratch, NULL); /* type-checks them all */
  asc__buf_free(&scratch);
  if (rc != 0 || c->nerrors > 0)
    return rc;
  mod = module_prefix(a->path);
  /* the path goes into a comment */
  for (const char *p = a->path; *p; p++)
    if ((unsigned char)*p < 0x20 || (p[0] == '*' && p[1] == '/')) {
      fprintf(stderr, "ascc: %s: the file name cannot go into a C comment\n",
              a->path);
      free(mod);
      return 2;
    }
  if (mod == NULL)
    asc__cctx_throw(c, ASC_FAIL_OOM);
  names = asc__arena_alloc(c, sizeof *names * (size_t)specs.n);
  asc__buf_init(&name);
  for (int i = 0; i < specs.n; i++) {
    bool clash = false;
    name.len = 0;
    wrapper_name(&name, &specs.v[i]);
    for (int j = 0; j < specs.n; j++) {
      asc__buf other;
      if (j == i)
        continue;
      asc__buf_init(&other);
      wrapper_name(&other, &specs.v[j]);
      clash |= other.len == name.len &&
               memcmp(other.data, name.data, name.len) == 0;
      asc__buf_free(&other);
    }
    if (clash) /* told apart by position among the same-named */
      asc__buf_printf(&name, "_%d", i + 1);
    if (name.oom)
      asc__cctx_throw(c, ASC_FAIL_OOM);
    names[i] = asc__arena_strndup(c, name.data, name.len);
  }
  asc__buf_free(&name);
  asc__buf_printf(o,
                  "/* Generated by ascc from %s: do not edit.\n"
                  " *\n"
                  " * Launch wrappers for the module `ascc --emit=so` builds "
                  "from the same\n"
                  " * file and signatures.  Call %s_load(\"path/to/module.so\")"
                  " once, then\n"
                  " * the asc_launch_* functions; each returns what "
                  "ascLaunchKernel returns.\n"
                  " * The module handle is static: load it in each "
                  "translation unit that\n"
                  " * launches, or wrap these in functions of your own. */\n",
                  a->path, mod);
  asc__buf_printf(o, "#ifndef %s_H\n#define %s_H\n\n", mod, mod);
  asc__buf_puts(o, "#include <stdbool.h>\n#include <stdint.h>\n\n"
                   "#include <asc/asc.h>\n\n");
  asc__buf_printf(o, "static ascModule_t %s_module;\n\n", mod);
  asc__buf_printf(o,
                  "static inline ascError_t %s_load(const char *path) {\n"
                  "  return ascModuleLoad(&%s_module, path);\n}\n\n",
                  mod, mod);
  asc__buf_printf(o,
                  "static inline ascError_t %s_unload(void) {\n"
                  "  ascError_t e = ascModuleUnload(%s_module);\n"
                  "  %s_module = NULL;\n  return e;\n}\n\n",
                  mod, mod, mod);
  for (int i = 0; i < specs.n; i++)
    put_wrapper(o, &specs.v[i], names[i], mod);
  asc__buf_printf(o, "#endif /* %s_H */\n", mod);
  free(mod);
  if (o->oom)
    asc__cctx_throw(c, ASC_FAIL_OOM);
  return 0;
}
