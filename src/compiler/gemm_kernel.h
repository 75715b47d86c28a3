/* ---- exact matrix product of a recognised GEMM loop nest ----
 * (the gemmrec pass, docs/optimizer.md).  Emitted only into kernels that
 * use it (the emitter defines ASC_NEED_GEMM_EXACT before this text).
 *
 * c[i*sc0 + j*sc1] for 0 <= i < m, 0 <= j < n:
 *   acc = accumulate ? c[i,j] : 0 (positive zero);
 *   for p = 0 .. k-1: acc = acc + a[i*sa0 + p*sa1] * b[p*sb0 + j*sb1];
 *   c[i,j] = acc
 * rows split over the launching block's team with ctx->rt->parallel_for when
 * called outside a parallel-loop body (in_pfor == 0), serially in the
 * calling thread when in_pfor != 0.  Returns 0, or nonzero when the team
 * raised (exc set).  Strides in elements.  c must not overlap a or b.
 *
 * This version is the reference: the triple loop in exactly that order,
 * serial in the calling thread. */
#ifdef ASC_NEED_GEMM_EXACT
#define ASC_GEMM_EXACT_REF(S, T)                                           \
  static int asc_gemm_exact_##S(                                           \
      asc_kctx *ctx, asc_kexc *exc, int in_pfor, int64_t m, int64_t n,     \
      int64_t k, const T *a, int64_t sa0, int64_t sa1, const T *b,         \
      int64_t sb0, int64_t sb1, T *c, int64_t sc0, int64_t sc1,            \
      int accumulate) {                                                    \
    (void)ctx; (void)exc; (void)in_pfor;                                   \
    for (int64_t i = 0; i < m; i++)                                        \
      for (int64_t j = 0; j < n; j++) {                                    \
        T acc = accumulate ? c[i * sc0 + j * sc1] : (T)0;                  \
        for (int64_t p = 0; p < k; p++)                                    \
          acc = acc + a[i * sa0 + p * sa1] * b[p * sb0 + j * sb1];         \
        c[i * sc0 + j * sc1] = acc;                                        \
      }                                                                    \
    return 0;                                                              \
  }
ASC_GEMM_EXACT_REF(f32, float)
ASC_GEMM_EXACT_REF(f64, double)
#undef ASC_GEMM_EXACT_REF
#endif /* ASC_NEED_GEMM_EXACT */
