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
 * The rows and their switches are ASC_PASSES (passes.h); a switch set to 0
 * (ASC_TILE=0) leaves its row out, through asc__compile_opts, which the
 * jit fills and the kernel cache key holds.  The compile budget is checked
 * before every pass and inside each (its loops over loop nests and
 * instructions call asc__cctx_tick); the scratch arena is released after
 * every pass.  The verifier runs after every pass in builds without
 * NDEBUG, and in any build when the options say so (ASC_VERIFY=1).  The
 * options' dump list (ASC_DUMP=fold,licm, or "all") prints the IR after
 * those passes, to stderr unless they give a stream.
 */
#include <string.h>

#include "compiler/passes/passes.h"
#include "base/trace.h"

static const asc__pass table[] = {
#define ROW(name, sw) {#name, asc__pass_##name, sw},
    ASC_PASSES(ROW)
#undef ROW
};

_Static_assert(ASC_ARRAY_SIZE(table) <= 64, "passes_off has 64 bits");

const asc__pass *asc__pass_table(int *n) {
  *n = (int)ASC_ARRAY_SIZE(table);
  return table;
}

/* The bits of the rows named by the len bytes at name. */
static uint64_t bits_of(const char *name, size_t len) {
  uint64_t b = 0;
  for (size_t k = 0; k < ASC_ARRAY_SIZE(table); k++)
    if (strlen(table[k].name) == len && memcmp(table[k].name, name, len) == 0)
      b |= (uint64_t)1 << k;
  return b;
}

/* The next name of the comma-separated list at *p (in [*name, *name +
 * *len)), *p moved past it; false at the end. */
static bool next_name(const char **p, const char **name, size_t *len) {
  const char *comma;
  if (*p == NULL || **p == '\0')
    return false;
  comma = strchr(*p, ',');
  *name = *p;
  *len = comma ? (size_t)(comma - *p) : strlen(*p);
  *p = comma ? comma + 1 : *p + *len;
  return true;
}

static bool in_list(const char *list, const char *name) {
  const char *item;
  size_t len;
  while (next_name(&list, &item, &len))
    if ((len == strlen(name) && memcmp(item, name, len) == 0) ||
        (len == 3 && memcmp(item, "all", 3) == 0))
      return true;
  return false;
}

typedef struct runner {
  asc__cctx *c;
  asc__irfunc *f;
  const char *dump;
  FILE *to;
  bool verify;
} runner;

static void run(runner *r, const asc__pass *p) {
  asc__scratch_mark sm = asc__scratch_get(r->c);
  uint64_t t0;
  asc__cctx_budget(r->c, p->name);
  r->c->phase = p->name;
  t0 = asc__trace_clock();
  p->run(r->c, r->f);
  ASC_TRACE(asc__trace_span("pass", p->name, NULL, 0, t0));
  if (r->verify)
    asc__ir_verify(r->c, r->f, p->name);
  asc__scratch_release(r->c, sm);
  if (in_list(r->dump, p->name)) {
    asc__buf b;
    asc__buf_init(&b);
    asc__buf_printf(&b, "; after %s\n", p->name);
    asc__ir_print_func(&b, r->f);
    fputs(asc__buf_str(&b), r->to);
    asc__buf_free(&b);
  }
}

/* The rows of the only list, in its order. */
static void run_only(runner *r, const char *only) {
  const char *item;
  size_t len;
  while (next_name(&only, &item, &len)) {
    uint64_t b = bits_of(item, len);
    if (b == 0)
      asc__internal_error(r->c, __FILE__, __LINE__, "unknown pass name");
    run(r, &table[__builtin_ctzll(b)]);
  }
}

void asc__ir_pipeline(asc__cctx *c, asc__irmodule *m) {
  const asc__compile_opts *o = &c->opts;
  uint64_t saved_off = o->code.passes_off;
  runner r;
  r.c = c;
  r.dump = o->dump;
  r.to = o->dump_to ? o->dump_to : stderr;
#ifdef NDEBUG
  r.verify = o->verify;
#else
  r.verify = true;
#endif
  /* An only list plans exactly its passes: what asc__pass_planned tells
   * the passes while it runs. */
  if (o->only != NULL) {
    const char *list = o->only, *item;
    size_t len;
    uint64_t planned = 0;
    while (next_name(&list, &item, &len))
      planned |= bits_of(item, len);
    c->opts.code.passes_off = ~planned;
  }
  for (int32_t k = 0; k < m->nfuncs; k++) {
    r.f = m->funcs[k];
    asc__ir_verify(c, r.f, NULL);
    if (o->only != NULL) {
      run_only(&r, o->only);
      continue;
    }
    for (size_t i = 0; i < ASC_ARRAY_SIZE(table); i++)
      if (!(o->code.passes_off & ((uint64_t)1 << i)))
        run(&r, &table[i]);
  }
  c->opts.code.passes_off = saved_off;
}
