/* ---- streaming stores (docs/arrays.md, "Streaming stores") ----
 * Emitted once, before the first parallel loop body that streams its
 * stores.  Such a body computes 64 bytes of the destination at a time in
 * a 64-byte vector (GCC vector extensions, lane by lane the same IEEE or
 * wrapping operation as the scalar code) and writes it with one
 * non-temporal store: the line bypasses the caches, so it is never read
 * for ownership and evicts none of the sources.  asc_nt_fence orders the
 * streamed lines before the body returns, so that the team's join
 * publishes them like any other store. */
#ifndef ASC_NT_HELPERS
#define ASC_NT_HELPERS 1
#if defined(__AVX__) || defined(__AVX512F__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif
typedef float asc_v_f32 __attribute__((vector_size(64)));
typedef double asc_v_f64 __attribute__((vector_size(64)));
typedef int32_t asc_v_i32 __attribute__((vector_size(64)));
typedef uint32_t asc_v_u32 __attribute__((vector_size(64)));
typedef int64_t asc_v_i64 __attribute__((vector_size(64)));
typedef uint64_t asc_v_u64 __attribute__((vector_size(64)));
/* The 64 bytes at v to p, 64-byte aligned, bypassing the caches. */
static inline void asc_nt_store64(void *p, const void *v) {
#if defined(__AVX512F__)
  __m512i x;
  memcpy(&x, v, 64);
  _mm512_stream_si512((__m512i *)p, x);
#elif defined(__AVX__)
  __m256i x[2];
  memcpy(x, v, 64);
  _mm256_stream_si256((__m256i *)p, x[0]);
  _mm256_stream_si256((__m256i *)p + 1, x[1]);
#elif defined(__SSE2__)
  __m128i x[4];
  memcpy(x, v, 64);
  for (int j = 0; j < 4; j++)
    _mm_stream_si128((__m128i *)p + j, x[j]);
#else
  memcpy(p, v, 64);
#endif
}
static inline void asc_nt_fence(void) {
#if defined(__SSE2__) || defined(__AVX__) || defined(__AVX512F__)
  _mm_sfence();
#endif
}
#endif /* ASC_NT_HELPERS */
