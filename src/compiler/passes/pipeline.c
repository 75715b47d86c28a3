/*
 * The pass pipeline.
 *
 *          lowered IR
 *              |
 *            fold  -- constants (incl. ConstExpr / frozen globals), copies,
 *              |      identities, unit stride of contiguous tensors
 *             dce
 *              |
 *           unroll -- static_range and small constant loops
 *              |
 *            fold  -- the unrolled induction values
 *              |
 *             cse
 *              |
 *            licm  -- shapes, strides, row offsets out of loop nests
 *              |
 *           gemmrec -- naive matrix-product nests -> gemm_exact (the
 *              |        loops' order, or BLAS under reassoc; off:
 *              |        ASC_GEMMREC=0)
 *         interchange -- j { s = 0; p { s += } } -> j-tiles { p { jj } },
 *              |         the accumulator expanded (off: ASC_INTERCHANGE=0)
 *          wavefront -- t { i-sweeps of rows } -> one wavefront over the
 *              |        rows (time tiling; off: ASC_WAVEFRONT=0)
 *         parallelize -- independent outer nests -> (collapsed) pfor,
 *              |         before strength turns offsets into running sums
 *             tile -- pfor i { for j { b[j,i] = a[i,j] } } -> pfor over
 *              |      T x T tiles (off: ASC_TILE=0)
 *          unrolljam -- R rows at a time through an interchanged tile loop
 *              |        (off with ASC_UNROLLJAM=0)
 *          privatize -- atomic adds into small arrays in a pfor ->
 *              |        per-worker copies (off with ASC_PRIVATIZE=0)
 *            hoist -- invariant loads no store of the loop reaches, in
 *              |      front of it behind a "the loop runs" guard (off:
 *              |      ASC_HOIST=0)
 *          redlanes -- m = max(m, x[j]) of floats in vector lanes,
 *              |        exactly (a zero rescanned; off: ASC_REDLANES=0)
 *           vmchunk -- vector math calls of a loop that raises or carries
 *              |       a float sum, computed ahead in chunks by a loop
 *              |       that vectorises (off: ASC_VMCHUNK=0)
 *          strength -- i*stride -> running offsets
 *              |
 *         fold, licm -- tidy the new inductions' set-up
 *              |
 *             dce
 *              |
 *           emit C
 *
 * The compile budget (ASC_COMPILE_TIMEOUT_MS) is checked before every
 * pass.  The verifier runs after every pass in builds without NDEBUG, and in any
 * build with ASC_VERIFY=1.  ASC_DUMP=fold,licm (or "all") prints the IR
 * after those passes, to stderr unless the caller gives a stream.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/passes/passes.h"

typedef void (*pass_fn)(asc__cctx *c, asc__irfunc *f);

static const struct {
  const char *name;
  pass_fn fn;
} pass_table[] = {
    {"fold", asc__pass_fold},       {"dce", asc__pass_dce},
    {"cse", asc__pass_cse},         {"licm", asc__pass_licm},
    {"unroll", asc__pass_unroll},   {"strength", asc__pass_strength},
    {"parallelize", asc__pass_parallelize},
    {"privatize", asc__pass_privatize},
    {"interchange", asc__pass_interchange},
    {"unrolljam", asc__pass_unrolljam},
    {"gemmrec", asc__pass_gemmrec},
    {"tile", asc__pass_tile},       {"hoist", asc__pass_hoist},
    {"wavefront", asc__pass_wavefront},
    {"vmchunk", asc__pass_vmchunk},
    {"redlanes", asc__pass_redlanes},
};

static uint64_t l1d_or_default(uint64_t l1d) {
  return l1d != 0 ? l1d : ASC_DEFAULT_L1D_BYTES;
}

int64_t asc__acc_tile_bytes(uint64_t l1d_bytes) {
  uint64_t b = l1d_or_default(l1d_bytes) / 16 / 64 * 64;
  return b < 512 ? 512 : b > 8192 ? 8192 : (int64_t)b;
}

int64_t asc__tile_row_bytes(uint64_t l1d_bytes) {
  uint64_t half = l1d_or_default(l1d_bytes) / 2, r = 64;
  while (r < 512 && (r * 2) * (r * 2) <= half)
    r *= 2;
  return (int64_t)r;
}

bool asc__privatize_enabled(void) {
  const char *s = getenv("ASC_PRIVATIZE");
  return s == NULL || strcmp(s, "0") != 0;
}

static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  if (list == NULL)
    return false;
  for (const char *p = list; *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if ((len == n && memcmp(p, name, n) == 0) ||
        (len == 3 && memcmp(p, "all", 3) == 0))
      return true;
    if (!comma)
      break;
    p = comma + 1;
  }
  return false;
}

typedef struct runner {
  asc__cctx *c;
  asc__irfunc *f;
  const char *dump;
  FILE *to;
  bool verify;
} runner;

static void run(runner *r, const char *name, pass_fn fn) {
  asc__cctx_budget(r->c, name);
  fn(r->c, r->f);
  if (r->verify)
    asc__ir_verify(r->c, r->f, name);
  if (in_list(r->dump, name)) {
    asc__buf b;
    asc__buf_init(&b);
    asc__buf_printf(&b, "; after %s\n", name);
    asc__ir_print_func(&b, r->f);
    fputs(asc__buf_str(&b), r->to);
    asc__buf_free(&b);
  }
}

static pass_fn lookup(const char *name, size_t len) {
  for (size_t k = 0; k < ASC_ARRAY_SIZE(pass_table); k++)
    if (strlen(pass_table[k].name) == len &&
        memcmp(pass_table[k].name, name, len) == 0)
      return pass_table[k].fn;
  return NULL;
}

static void pipeline(runner *r, const char *only) {
  if (only != NULL) {
    for (const char *p = only; *p;) {
      const char *comma = strchr(p, ',');
      size_t len = comma ? (size_t)(comma - p) : strlen(p);
      pass_fn fn = lookup(p, len);
      if (fn == NULL)
        asc__internal_error(r->c, __FILE__, __LINE__, "unknown pass name");
      run(r, asc__arena_strndup(r->c, p, len), fn);
      if (!comma)
        break;
      p = comma + 1;
    }
    return;
  }
  run(r, "fold", asc__pass_fold);
  run(r, "dce", asc__pass_dce);
  run(r, "unroll", asc__pass_unroll);
  run(r, "fold", asc__pass_fold);
  run(r, "cse", asc__pass_cse);
  run(r, "licm", asc__pass_licm);
  if (asc__gemmrec_enabled())
    run(r, "gemmrec", asc__pass_gemmrec);
  if (asc__interchange_enabled())
    run(r, "interchange", asc__pass_interchange);
  if (asc__wavefront_enabled())
    run(r, "wavefront", asc__pass_wavefront);
  run(r, "parallelize", asc__pass_parallelize);
  if (r->f->tile_planned)
    run(r, "tile", asc__pass_tile);
  if (asc__unrolljam_enabled())
    run(r, "unrolljam", asc__pass_unrolljam);
  if (asc__privatize_enabled())
    run(r, "privatize", asc__pass_privatize);
  if (asc__hoist_enabled())
    run(r, "hoist", asc__pass_hoist);
  if (asc__redlanes_enabled())
    run(r, "redlanes", asc__pass_redlanes);
  if (asc__vmchunk_enabled())
    run(r, "vmchunk", asc__pass_vmchunk);
  run(r, "strength", asc__pass_strength);
  run(r, "fold", asc__pass_fold);
  run(r, "licm", asc__pass_licm);
  run(r, "dce", asc__pass_dce);
}

void asc__ir_pipeline(asc__cctx *c, asc__irmodule *m,
                      const asc__pipeline_opts *opts) {
  runner r;
  const char *env = getenv("ASC_VERIFY");
  r.c = c;
  r.dump = opts && opts->dump ? opts->dump : getenv("ASC_DUMP");
  r.to = opts && opts->dump_to ? opts->dump_to : stderr;
#ifdef NDEBUG
  r.verify = (opts && opts->verify) || (env && strcmp(env, "1") == 0);
#else
  r.verify = true;
  (void)env;
#endif
  for (int32_t k = 0; k < m->nfuncs; k++) {
    r.f = m->funcs[k];
    r.f->tile_planned = opts && opts->only ? in_list(opts->only, "tile")
                                           : asc__tile_enabled();
    r.f->l1d_bytes = opts ? opts->l1d_bytes : 0;
    asc__ir_verify(c, r.f, NULL);
    pipeline(&r, opts ? opts->only : NULL);
  }
}
