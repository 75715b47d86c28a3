/*
 * Time tiling of iterated sweeps (docs/optimizer.md, "wavefront.c"): the
 * text of this file goes into generated modules whose kernels have a loop
 * the wavefront pass marked.  It is C11 on top of kernel_abi.h.
 *
 * The loop runs S = T * K sweeps in turn (T trips of K parallel loops over
 * the same n rows).  Sweep s computes row r by calling its loop's body for
 * the one iteration r; it reads the rows r - R .. r + R of what earlier
 * sweeps wrote, writes row r of its own array and reads nothing of that
 * array (the pass checked all of this).  Instead of one sweep over all rows
 * after another, a chunk of C sweeps goes over the rows once:
 *
 * phase 1, each team thread on its own block of rows [lo, hi): for w = lo,
 *   lo + 1, ..., sweep c computes row w - c * R (c = 0 .. C - 1), but only
 *   rows of the trapezoid [lo + c * R, hi - c * R) (no shrinking at the
 *   edges of the whole range, where no other block writes).  The C sweeps'
 *   rows then stay in cache between the sweeps.
 * phase 2, after all blocks: at each boundary p between two blocks, the
 *   triangle the trapezoids left, sweep c's rows [p - c * R, p + c * R),
 *   sweep by sweep.
 *
 * Every row of every sweep is computed exactly once, from the values the
 * plain order would give it: sweep c's row r needs its sources' rows
 * r - R .. r + R, which earlier sweeps of the chunk computed earlier in
 * both phases, and a row is overwritten (by the next sweep that writes the
 * same array) only after every sweep that reads it has read it: in phase 1
 * the later sweep reaches that row at a later w, or at the same w after the
 * reader; blocks at least 2 * C * R rows long keep the triangles and the
 * trapezoids of other blocks apart.  Each element is computed by the same
 * instructions on the same values, so results are bit-identical to the
 * plain loop.
 */
#ifdef ASC_NEED_WAVEFRONT

typedef struct asc_wf_sweep {
  asc_kbody body;
  void *env;
} asc_wf_sweep;

typedef struct asc_wf_chunk {
  const asc_wf_sweep *sw;
  int64_t K;      /* sweeps per trip */
  int64_t s0;     /* the chunk's first sweep, counting from the loop's */
  int64_t C;      /* sweeps in the chunk */
  int64_t n, R;   /* rows, radius */
  int64_t nb;     /* blocks (phase 1) */
} asc_wf_chunk;

/* The caches a thread may count on: its L2 and its share of the L3
 * (hwloc's sizes through cache_bytes; 512 KiB and none when unknown). */
static void asc_wf_caches(asc_kctx *ctx, int64_t team, int64_t *l2,
                          int64_t *l3share) {
  *l2 = *l3share = 0;
  if (ctx->rt->abi_version >= 4 && ctx->rt->cache_bytes != NULL) {
    *l2 = ctx->rt->cache_bytes(ctx, 2);
    *l3share = ctx->rt->cache_bytes(ctx, 3) / (team > 0 ? team : 1);
  }
  if (*l2 <= 0)
    *l2 = 512 << 10;
  if (*l3share < 0)
    *l3share = 0;
}

static int64_t asc_wf_abs(int64_t x) { return x < 0 ? -x : x; }

/* Do t's rows (axis 0) never share an element?  Each other axis of extent
 * > 1 ... as parallelize's test: axis 0 steps over all the others span. */
static int asc_wf_rows_apart(const asc_ktensor *t) {
  int64_t span = 1;
  if (t->ndim < 1 || t->shape[0] <= 1)
    return 1;
  for (int32_t k = 1; k < t->ndim; k++) {
    if (t->shape[k] <= 0)
      return 1;
    span += asc_wf_abs(t->strides[k]) * (t->shape[k] - 1);
  }
  return asc_wf_abs(t->strides[0]) >= span;
}

static int64_t asc_wf_row(const asc_wf_chunk *w, int64_t c, int64_t r,
                          int32_t tid, asc_kexc *exc) {
  const asc_wf_sweep *q = &w->sw[(w->s0 + c) % w->K];
  return q->body(q->env, r, r + 1, tid, exc);
}

/* Where block b starts: nb blocks of n / nb rows, the first n % nb of
 * them one row longer. */
static int64_t asc_wf_lo(const asc_wf_chunk *w, int64_t b) {
  const int64_t q = w->n / w->nb, r = w->n % w->nb;
  return b * q + (b < r ? b : r);
}

static int64_t asc_wf_phase1(void *env, int64_t lo, int64_t hi, int32_t tid,
                             asc_kexc *exc) {
  const asc_wf_chunk *w = env;
  for (int64_t b = lo; b < hi; b++) {
    const int64_t L = asc_wf_lo(w, b), H = asc_wf_lo(w, b + 1);
    const int64_t sl = b > 0 ? w->R : 0, sh = b < w->nb - 1 ? w->R : 0;
    for (int64_t x = L; x < H + (w->C - 1) * w->R; x++)
      for (int64_t c = 0; c < w->C; c++) {
        const int64_t r = x - c * w->R;
        if (r < L + c * sl)
          break; /* and so are the later sweeps' rows */
        if (r >= H - c * sh)
          continue;
        if (asc_wf_row(w, c, r, tid, exc) != 0)
          return b - lo + 1;
      }
  }
  return 0;
}

static int64_t asc_wf_phase2(void *env, int64_t lo, int64_t hi, int32_t tid,
                             asc_kexc *exc) {
  const asc_wf_chunk *w = env;
  for (int64_t q = lo; q < hi; q++) {
    const int64_t p = asc_wf_lo(w, q + 1);
    for (int64_t c = 1; c < w->C; c++)
      for (int64_t r = p - c * w->R; r < p + c * w->R; r++)
        if (asc_wf_row(w, c, r, tid, exc) != 0)
          return q - lo + 1;
  }
  return 0;
}

/* Runs the T * K sweeps of sw[0..K) (n rows each, radius R).  row_bytes:
 * the bytes of one row of every array the sweeps store.  When those
 * arrays fit in the team's caches anyway, or the rows are too few for
 * chunks of two sweeps, each sweep runs over all rows in turn, in
 * parallel (the plain order); so too when C would be under 4 (a chunk
 * that short saves little more than its triangles cost).  Else in chunks of C
 * sweeps whose rows take
 * about half of a thread's L2 and L3 share (ASC_WF_BUDGET, defined when
 * the kernel is compiled, overrides that and the test of fitting in
 * cache, for measuring and testing), over blocks of
 * rows, 4 per thread so that a slow core does not hold up the others.
 * Returns 0 when done, 1 when a row raised (*exc holds it). */
static int asc_wavefront(asc_kctx *ctx, const asc_wf_sweep *sw, int64_t K,
                         int64_t T, int64_t n, int64_t R, int64_t row_bytes,
                         asc_kexc *exc) {
  asc_wf_chunk w;
  int64_t S, C, budget, l2, l3, team = ctx->rt->team_size(ctx), nb;
  int64_t min_chunk;
  if (T <= 0 || n <= 0)
    return 0;
  S = T > INT64_MAX / K ? INT64_MAX : T * K;
  if (team < 1)
    team = 1;
  asc_wf_caches(ctx, team, &l2, &l3);
#ifdef ASC_WF_BUDGET
  budget = ASC_WF_BUDGET;
  l2 = l3 = 0; /* and no test of the arrays fitting in cache */
  min_chunk = 2;
#else
  budget = (l2 + l3) / 2;
  /* a chunk of 2 or 3 sweeps saves little more than its triangles cost */
  min_chunk = 4;
#endif
  /* rows of one chunk in cache: about (C + 3) * R + 1 of each array */
  C = row_bytes > 0 ? budget / row_bytes : S;
  C = R > 0 ? (C - 1) / R - 3 : C;
  if (C > 64)
    C = 64;
  if (C > S)
    C = S;
  /* Four blocks per thread, if they stay at least 8 C R rows long: the
   * trapezoids then do at least 7/8 of the rows (the triangles, C^2 R
   * row-sweeps a boundary, get less reuse), else fewer blocks, down to
   * one per thread; blocks must keep at least 2 C R rows: then a shorter
   * chunk. */
  nb = 4 * team;
  while (nb > team && R > 0 && n / nb < 8 * C * R)
    nb--;
  while (nb > 1 && R > 0 && n / nb < 4 * R)
    nb--;
  if (R > 0 && C > n / nb / (2 * R))
    C = n / nb / (2 * R);
  if (C < min_chunk || C < 2 ||
      (row_bytes > 0 && n <= (l2 + l3) * team / row_bytes)) {
    for (int64_t t = 0; t < T; t++)
      for (int64_t k = 0; k < K; k++)
        if (ctx->rt->parallel_for(ctx, n, 1, sw[k].body, sw[k].env, exc) != 0)
          return 1;
    return 0;
  }
#ifdef ASC_WF_TRACE /* tests: ASC_CFLAGS="-DASC_WF_TRACE -include stdio.h" */
  fprintf(stderr, "asc_wavefront: %lld sweeps of %lld rows in chunks of "
          "%lld over %lld blocks\n", (long long)S, (long long)n,
          (long long)C, (long long)nb);
#endif
  w.sw = sw;
  w.K = K;
  w.n = n;
  w.R = R;
  w.nb = nb;
  for (int64_t s0 = 0; s0 < S; s0 += C) {
    w.s0 = s0;
    w.C = S - s0 < C ? S - s0 : C;
    if (ctx->rt->parallel_for(ctx, nb, 1, asc_wf_phase1, &w, exc) != 0)
      return 1;
    if (nb > 1 && w.C > 1 && R > 0 &&
        ctx->rt->parallel_for(ctx, nb - 1, 1, asc_wf_phase2, &w, exc) != 0)
      return 1;
  }
  return 0;
}

#endif /* ASC_NEED_WAVEFRONT */
