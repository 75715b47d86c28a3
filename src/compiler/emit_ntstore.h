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
typedef float asc_v_f32 __attribute__((vector_size(64)));
typedef double asc_v_f64 __attribute__((vector_size(64)));
typedef int32_t asc_v_i32 __attribute__((vector_size(64)));
typedef uint32_t asc_v_u32 __attribute__((vector_size(64)));
typedef int64_t asc_v_i64 __attribute__((vector_size(64)));
typedef uint64_t asc_v_u64 __attribute__((vector_size(64)));
/* The compilers' builtins, not <immintrin.h>: with -march=native that
 * header is half a million lines, which cost an unoptimised build (the
 * quick tier) 0.35 s of parsing (docs/latency.md). */
typedef long long asc_nt_q8 __attribute__((vector_size(64)));
typedef long long asc_nt_q4 __attribute__((vector_size(32)));
typedef long long asc_nt_q2 __attribute__((vector_size(16)));
/* The 64 bytes at v to p, 64-byte aligned, bypassing the caches. */
static inline void asc_nt_store64(void *p, const void *v) {
#if defined(__clang__) && defined(__AVX512F__)
  /* clang splits a 64-byte __builtin_nontemporal_store in two on a
   * target that prefers 256-bit vectors */
  asc_nt_q8 x;
  memcpy(&x, v, 64);
  __asm__ volatile("vmovntdq %1, %0" : "=m"(*(asc_nt_q8 *)p) : "v"(x));
#elif defined(__clang__) && defined(__SSE2__)
  asc_nt_q8 x;
  memcpy(&x, v, 64);
  __builtin_nontemporal_store(x, (asc_nt_q8 *)p);
#elif defined(__AVX512F__)
  asc_nt_q8 x;
  memcpy(&x, v, 64);
  __builtin_ia32_movntdq512((asc_nt_q8 *)p, x);
#elif defined(__AVX__)
  asc_nt_q4 x[2];
  memcpy(x, v, 64);
  __builtin_ia32_movntdq256((asc_nt_q4 *)p, x[0]);
  __builtin_ia32_movntdq256((asc_nt_q4 *)p + 1, x[1]);
#elif defined(__SSE2__)
  asc_nt_q2 x[4];
  memcpy(x, v, 64);
  for (int j = 0; j < 4; j++)
    __builtin_ia32_movntdq((asc_nt_q2 *)p + j, x[j]);
#else
  memcpy(p, v, 64);
#endif
}
static inline void asc_nt_fence(void) {
#if defined(__SSE2__)
  __builtin_ia32_sfence();
#endif
}
#endif /* ASC_NT_HELPERS */
