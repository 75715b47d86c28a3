#include <math.h>
#include <sched.h>
#include <string.h>

/* ---- helpers: Python semantics the C operators do not give ---- */
/* math.lgamma: lgamma_r, as lgamma writes the global signgam */
static inline double asc_lgamma(double x) { int s; return lgamma_r(x, &s); }
static inline float asc_lgammaf(float x) { int s; return lgammaf_r(x, &s); }
/* float16 needs a C compiler with _Float16 (gcc 12, clang 15); older
 * clang rejects even an unused typedef, so a kernel without float16
 * compiles anywhere and one with it names the reason. */
#ifdef __FLT16_MAX__
typedef _Float16 asc_f16;
#else
typedef struct asc_C_compiler_has_no__Float16_for_float16 asc_f16;
#endif
typedef uint16_t asc_bf16; /* bfloat16 storage */
static inline float asc_bf2f(asc_bf16 h) {
  uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f;
}
/* float -> bfloat16, round to nearest even, NaN kept quiet. */
static inline asc_bf16 asc_f2bf(float f) {
  uint32_t u; memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (asc_bf16)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (asc_bf16)(u >> 16);
}
#define ASC_IDIV(T, S) \
  static inline T asc_floordiv_##S(T a, T b) { \
    if (b == -1) return (T)(0 - (uint64_t)a); \
    T q = (T)(a / b); \
    if (a % b != 0 && ((a < 0) != (b < 0))) q--; \
    return q; } \
  static inline T asc_mod_##S(T a, T b) { \
    if (b == -1) return 0; \
    T m = (T)(a % b); \
    if (m != 0 && ((m < 0) != (b < 0))) m = (T)(m + b); \
    return m; } \
  static inline T asc_ipow_##S(T a, T e) { \
    uint64_t r = 1, x = (uint64_t)a; \
    for (uint64_t n = (uint64_t)e; n; n >>= 1) { \
      if (n & 1) r *= x; \
      x *= x; } \
    return (T)r; }
ASC_IDIV(int8_t, i8) ASC_IDIV(int16_t, i16) ASC_IDIV(int32_t, i32)
ASC_IDIV(int64_t, i64)
#define ASC_UPOW(T, S) \
  static inline T asc_ipow_##S(T a, T e) { \
    T r = 1; for (; e; e >>= 1) { if (e & 1) r = (T)(r * a); \
    a = (T)(a * a); } return r; }
ASC_UPOW(uint8_t, u8) ASC_UPOW(uint16_t, u16) ASC_UPOW(uint32_t, u32)
ASC_UPOW(uint64_t, u64)
/* numpy's shifts, no C undefined behaviour: a count of at least the
 * width gives 0 (left) or the sign fill (right); a negative count of
 * a signed type raised ValueError before the call. */
#define ASC_SHIFT(T, W, S, FILL) \
  static inline T asc_shl_##S(T a, T n) { \
    return (uint64_t)n >= W ? (T)0 : (T)((uint64_t)a << n); } \
  static inline T asc_shr_##S(T a, T n) { \
    return (uint64_t)n >= W ? (T)(FILL) : (T)(a >> n); }
ASC_SHIFT(int8_t, 8, i8, a < 0 ? -1 : 0)
ASC_SHIFT(int16_t, 16, i16, a < 0 ? -1 : 0)
ASC_SHIFT(int32_t, 32, i32, a < 0 ? -1 : 0)
ASC_SHIFT(int64_t, 64, i64, a < 0 ? -1 : 0)
ASC_SHIFT(uint8_t, 8, u8, 0) ASC_SHIFT(uint16_t, 16, u16, 0)
ASC_SHIFT(uint32_t, 32, u32, 0) ASC_SHIFT(uint64_t, 64, u64, 0)
/* Python's float // and % (CPython float_divmod); by zero they
 * follow IEEE as numpy does (a / b, and fmod's nan), not Python's
 * ZeroDivisionError. */
static inline double asc_floordiv_f64(double a, double b) {
  if (b == 0) return a / b;
  double m = fmod(a, b), q = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) q -= 1.0;
  if (q != 0) { double f = floor(q); if (q - f > 0.5) f += 1.0; return f; }
  return copysign(0.0, a / b);
}
static inline double asc_mod_f64(double a, double b) {
  double m = fmod(a, b);
  if (m != 0) { if ((b < 0) != (m < 0)) m += b; }
  else m = copysign(0.0, b);
  return m;
}
static inline float asc_floordiv_f32(float a, float b) {
  return (float)asc_floordiv_f64(a, b);
}
static inline float asc_mod_f32(float a, float b) {
  return (float)asc_mod_f64(a, b);
}
/* Iterations of range(lo, hi, step). */
static inline int64_t asc_trip(int64_t lo, int64_t hi, int64_t st) {
  if (st > 0) return hi > lo ? (hi - lo - 1) / st + 1 : 0;
  if (st < 0) return lo > hi ? (lo - hi - 1) / (-st) + 1 : 0;
  return 0;
}
/* First iteration of part b of n iterations split in nb parts. */
static inline int64_t asc_part(int64_t n, int64_t nb, int64_t b) {
  return (n / nb) * b + (b < n % nb ? b : n % nb);
}
static inline void asc_raise(asc_kexc *e, int kind, int line,
                             const char *msg) {
  size_t n = strlen(msg);
  if (n >= ASC_KEXC_MSG_MAX) n = ASC_KEXC_MSG_MAX - 1;
  e->kind = kind; e->line = line;
  memcpy(e->msg, msg, n); e->msg[n] = 0;
}
/* asc_raise with each {} of fmt replaced by the next of n values. */
static inline void asc_raise_fmt(asc_kexc *e, int kind, int line,
                                 const char *fmt, int n, int64_t a0,
                                 int64_t a1, int64_t a2) {
  int64_t a[3] = {a0, a1, a2};
  size_t m = 0;
  int k = 0;
  for (; *fmt && m < ASC_KEXC_MSG_MAX - 1; fmt++) {
    if (fmt[0] == '{' && fmt[1] == '}' && k < n) {
      char d[24];
      int nd = 0;
      uint64_t u = a[k] < 0 ? 0 - (uint64_t)a[k] : (uint64_t)a[k];
      do { d[nd++] = (char)('0' + u % 10); u /= 10; } while (u);
      if (a[k] < 0) d[nd++] = '-';
      while (nd > 0 && m < ASC_KEXC_MSG_MAX - 1) e->msg[m++] = d[--nd];
      k++;
      fmt++;
    } else {
      e->msg[m++] = *fmt;
    }
  }
  e->msg[m] = 0; e->kind = kind; e->line = line;
}
/* A new C-order array of n extents into *t (dtype dt, item bytes each):
 * the extents checked, the bytes counted without overflow, the memory
 * from the runtime.  Nonzero after raising numpy's error at line. */
static __attribute__((unused, noinline)) int
asc_new_array(asc_kctx *ctx, asc_kexc *exc, asc_ktensor *t, int dt,
              uint64_t item, int n, int line, const int64_t *shape) {
  static const char too_big[] = "array is too big; `arr.size * "
      "arr.dtype.itemsize` is larger than the maximum possible size";
  uint64_t nb = item;
  for (int k = 0; k < n; k++) {
    t->shape[k] = shape[k];
    if (shape[k] < 0) {
      asc_raise(exc, ASC_KEXC_VALUE_ERROR, line,
                "negative dimensions are not allowed");
      return 1;
    }
    if (__builtin_mul_overflow(nb, (uint64_t)shape[k], &nb)) {
      asc_raise(exc, ASC_KEXC_VALUE_ERROR, line, too_big);
      return 1;
    }
  }
  if (nb > (uint64_t)INT64_MAX) {
    asc_raise(exc, ASC_KEXC_VALUE_ERROR, line, too_big);
    return 1;
  }
  t->data = ctx->rt->alloc(ctx, nb);
  if (t->data == NULL) {
    asc_raise_fmt(exc, ASC_KEXC_MEMORY_ERROR, line,
                  "unable to allocate {} bytes for an array", 1,
                  (int64_t)nb, 0, 0);
    return 1;
  }
  t->dtype = dt;
  t->ndim = n;
  int64_t st = 1;
  for (int k = n - 1; k >= 0; k--) {
    t->strides[k] = st;
    st *= t->shape[k];
  }
  return 0;
}
/* except clause matching, with Python's ArithmeticError family. */
static inline int asc_exc_match(int kind, uint32_t mask) {
  if (kind == ASC_KEXC_CANCELLED) return 0;
  if (mask & (1u << ASC_KEXC_EXCEPTION)) return 1;
  if ((mask & (1u << ASC_KEXC_ARITHMETIC_ERROR)) &&
      (kind == ASC_KEXC_ZERO_DIVISION_ERROR ||
       kind == ASC_KEXC_OVERFLOW_ERROR)) return 1;
  if ((mask & (1u << ASC_KEXC_VALUE_ERROR)) &&
      kind == ASC_KEXC_LINALG_ERROR) return 1;
  return (mask >> kind) & 1u;
}
/* Atomics: read-modify-write through compare-and-swap where the
 * compiler has no builtin (floats, min/max). */
#define ASC_ATOMIC_RMW(T, S, NAME, EXPR) \
  static inline T asc_atomic_##NAME##_##S(T *p, T v) { \
    T old, nw; __atomic_load(p, &old, __ATOMIC_RELAXED); \
    do { nw = (EXPR); } while (!__atomic_compare_exchange( \
        p, &old, &nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)); \
    return old; }
#define ASC_ATOMICS(T, S) \
  ASC_ATOMIC_RMW(T, S, add, (T)(old + v)) \
  ASC_ATOMIC_RMW(T, S, sub, (T)(old - v)) \
  ASC_ATOMIC_RMW(T, S, min, v < old ? v : old) \
  ASC_ATOMIC_RMW(T, S, max, v > old ? v : old) \
  static inline T asc_atomic_xchg_##S(T *p, T v) { \
    T r; __atomic_exchange(p, &v, &r, __ATOMIC_SEQ_CST); return r; } \
  static inline T asc_cas_##S(T *p, T e, T d) { \
    __atomic_compare_exchange(p, &e, &d, 0, __ATOMIC_SEQ_CST, \
                              __ATOMIC_SEQ_CST); return e; }
ASC_ATOMICS(int8_t, i8) ASC_ATOMICS(int16_t, i16)
ASC_ATOMICS(int32_t, i32) ASC_ATOMICS(int64_t, i64)
ASC_ATOMICS(uint8_t, u8) ASC_ATOMICS(uint16_t, u16)
ASC_ATOMICS(uint32_t, u32) ASC_ATOMICS(uint64_t, u64)
ASC_ATOMICS(float, f32) ASC_ATOMICS(double, f64)
/* Lock words (asc.lock / asc.unlock): 0 free, 1 held.  Test and
 * test-and-set with exponential backoff; a waiter yields the CPU once
 * the backoff is long (the holder may have been preempted). */
static inline void asc_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}
static inline void asc_lock(int32_t *p) {
  unsigned spins = 1;
  for (;;) {
    int32_t e = 0;
    if (__atomic_load_n(p, __ATOMIC_RELAXED) == 0 &&
        __atomic_compare_exchange_n(p, &e, 1, 1, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) return;
    if (spins <= 1024) {
      for (unsigned k = 0; k < spins; k++) asc_cpu_relax();
      spins *= 2;
    } else {
      sched_yield();
    }
  }
}
static inline void asc_unlock(int32_t *p) {
  __atomic_store_n(p, 0, __ATOMIC_RELEASE);
}
/* A float running sum of a serial loop (s += x[i]) adds in order
 * (IEEE; no reassociation).  gcc then still vectorises the loop as an
 * in-order reduction: one shuffle and one scalar add per element, and
 * a vector path with epilogues that short loops (a 3x3 window) pay for
 * in branches without ever using it.  The additions are one dependent
 * chain either way, which bounds both loops; this empty asm on the sum
 * (no instruction) keeps gcc from vectorising that loop.  With
 * -fassociative-math (-ffast-math in ASC_CFLAGS) the sum may be split
 * over vector lanes, which is faster: no barrier then. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__ASSOCIATIVE_MATH__)
#define ASC_SEQ_SUM(v) __asm__("" : "+x"(v))
#else
#define ASC_SEQ_SUM(v) ((void)0)
#endif
/* Cancellation polls (docs/abi.md): a relaxed load of the launch's
 * stop flag at loop back-edges; counted loops run in chunks of
 * ASC_POLL_CHUNK iterations with the poll between chunks, so the
 * inner loop stays vectorisable; and loops nested in others count their
 * work (iterations of the loops they hold) against the work left before
 * the next poll (asc_work_due), so that they poll however short each one
 * is.  -DASC_NO_POLL (in ASC_CFLAGS) is an internal switch that removes
 * them, to measure their cost. */
static const int32_t asc_never_stop = 0;
#define ASC_STOP_OF(ctx) \
  ((ctx)->stop != NULL ? (ctx)->stop : &asc_never_stop)
#define ASC_POLL_CHUNK 65536
#define ASC_POLL_OUTER 64
#define ASC_POLL_WORK 65536
/* Work, counted in loop iterations up to ASC_POLL_WORK: a loop's span,
 * and products and sums of such counts, saturating. */
static inline int64_t asc_wspan(int64_t lo, int64_t hi) {
  uint64_t span = hi > lo ? (uint64_t)hi - (uint64_t)lo
                          : (uint64_t)lo - (uint64_t)hi;
  return span < ASC_POLL_WORK ? (int64_t)span : ASC_POLL_WORK;
}
static inline int64_t asc_wmul(int64_t a, int64_t b) {
  return a * b < ASC_POLL_WORK ? a * b : ASC_POLL_WORK;
}
static inline int64_t asc_wadd(int64_t a, int64_t b) {
  return a + b < ASC_POLL_WORK ? a + b : ASC_POLL_WORK;
}
/* Loops that poll are emitted twice, as written for short runs and in
 * chunks for long ones (emit_c.c, asc__emit_for); unoptimised code (the
 * quick tier, docs/latency.md) compiles the chunked copy alone. */
#ifdef __OPTIMIZE__
#define ASC_TWO_COPIES 1
#else
#define ASC_TWO_COPIES 0
#endif
#ifdef ASC_NO_POLL
#define ASC_POLL(stop) 0
#define ASC_LONG(lo, hi, n) 0
#define ASC_CHUNK_UP(T, i, e, n) (e)
#define ASC_CHUNK_DOWN(T, i, e, n) (e)
static inline int asc_work_due(int64_t *work, int64_t w) {
  (void)work;
  (void)w;
  return 0;
}
#else
/* Work w is about to run: true when the work since the last poll reaches
 * ASC_POLL_WORK, and the count starts again. */
static inline int asc_work_due(int64_t *work, int64_t w) {
  if (__builtin_expect((*work -= w) >= 0, 1))
    return 0;
  *work = ASC_POLL_WORK;
  return 1;
}
#define ASC_POLL(stop) \
  __builtin_expect(__atomic_load_n((stop), __ATOMIC_RELAXED) != 0, 0)
#define ASC_LONG(lo, hi, n) \
  __builtin_expect((uint64_t)(hi) - (uint64_t)(lo) > (n) && (hi) > (lo), 0)
#define ASC_CHUNK_UP(T, i, e, n) \
  ((uint64_t)(e) - (uint64_t)(i) > (n) ? (T)((i) + (n)) : (e))
#define ASC_CHUNK_DOWN(T, i, e, n) \
  ((uint64_t)(i) - (uint64_t)(e) > (n) ? (T)((i) - (n)) : (e))
#endif
static inline void asc_stopped(asc_kexc *e, int line) {
  asc_raise(e, ASC_KEXC_CANCELLED, line, "launch stopped");
}

/* ---- vector math (docs/vecmath.md) ----
 * Generated code calls asc_vm_<f>[f](x) for exp, log, sin, ... outside
 * the afn mode.  With ASC_VECMATH_SLEEF (src/jit/cc.c adds it, and links
 * libsleef, when the C compiler finds SLEEF) each is SLEEF's 1-ulp (u10)
 * function, and gcc's vectoriser calls its vector variants: the simd
 * attribute declares _ZGV<isa>N<lanes>v_ variants, defined below.  Every
 * call runs SLEEF's deterministic build (finz_: FMA targets, cinz_:
 * others), whose variants of one family give the same bits at every
 * width (the plain sin, cos, tan pick a reduction for the whole vector,
 * so a lane's last bit depends on its neighbours and widths differ; the
 * default mode gives one answer per input wherever it falls).  Vector
 * calls of any width run the target's widest variant, padded; a scalar
 * call (a remainder, or clang, which does not vectorise these) the
 * scalar one of the family.  Without
 * SLEEF they are libm's functions.  The emitter instantiates the ones a
 * module calls, in the precision it calls them (ASC_VM_FN1_f(exp, ...) for
 * float only): all of them tripled gcc's time on a small kernel, and each
 * is about 25 ms of it (docs/latency.md). */
#if defined(ASC_VECMATH_SLEEF) && defined(__x86_64__)
#define ASC_VM_HID \
  __attribute__((visibility("hidden"), const, nothrow, unused))
/* The functions are hidden symbols, not static (the vector variants the
 * compiler calls are found by name): in a build in two parts (ASC_PART)
 * the entries' half defines them and the bodies' half declares them. */
#if ASC_PART == 2
#define ASC_VM_DEF(...) ;
#else
#define ASC_VM_DEF(...) __VA_ARGS__
#endif
#if defined(__GNUC__) && !defined(__clang__)
#define ASC_VM_SIMD __attribute__((simd("notinbranch"), const, nothrow))
#else
#define ASC_VM_SIMD __attribute__((const, nothrow))
#endif
typedef float asc_vf4 __attribute__((vector_size(16)));
typedef float asc_vf8 __attribute__((vector_size(32)));
typedef float asc_vf16 __attribute__((vector_size(64)));
typedef double asc_vd2 __attribute__((vector_size(16)));
typedef double asc_vd4 __attribute__((vector_size(32)));
typedef double asc_vd8 __attribute__((vector_size(64)));
/* The widest variant: W lanes of type asc_vfW / asc_vdW; and the
 * scalar one of the same family (_S). */
#if defined(__AVX512F__)
#define ASC_VM_F(F) Sleef_finz_##F##f16_u10avx512f
#define ASC_VM_D(F) Sleef_finz_##F##d8_u10avx512f
#define ASC_VM_F_S(F) Sleef_finz_##F##f1_u10purecfma
#define ASC_VM_D_S(F) Sleef_finz_##F##d1_u10purecfma
typedef asc_vf16 asc_vfw;
typedef asc_vd8 asc_vdw;
#elif defined(__AVX2__) && defined(__FMA__)
#define ASC_VM_F(F) Sleef_finz_##F##f8_u10avx2
#define ASC_VM_D(F) Sleef_finz_##F##d4_u10avx2
#define ASC_VM_F_S(F) Sleef_finz_##F##f1_u10purecfma
#define ASC_VM_D_S(F) Sleef_finz_##F##d1_u10purecfma
typedef asc_vf8 asc_vfw;
typedef asc_vd4 asc_vdw;
#elif defined(__AVX__)
#define ASC_VM_F(F) Sleef_cinz_##F##f8_u10avx
#define ASC_VM_D(F) Sleef_cinz_##F##d4_u10avx
#define ASC_VM_F_S(F) Sleef_cinz_##F##f1_u10purec
#define ASC_VM_D_S(F) Sleef_cinz_##F##d1_u10purec
typedef asc_vf8 asc_vfw;
typedef asc_vd4 asc_vdw;
#else
#define ASC_VM_F(F) Sleef_cinz_##F##f4_u10sse2
#define ASC_VM_D(F) Sleef_cinz_##F##d2_u10sse2
#define ASC_VM_F_S(F) Sleef_cinz_##F##f1_u10purec
#define ASC_VM_D_S(F) Sleef_cinz_##F##d1_u10purec
typedef asc_vf4 asc_vfw;
typedef asc_vd2 asc_vdw;
#endif
/* Variant X (ABI letter) of N lanes (vector type VT) of the one- or
 * two-argument function F (name suffix NS: f or nothing): the lanes padded
 * to the widest variant IMPL(F), of type VW. */
#define ASC_VM_VAR1(F, NS, VT, VW, IMPL, X, N) \
  ASC_VM_HID VT asc_vm##X##_##F##NS(VT a) \
      __asm__("_ZGV" #X "N" #N "v_asc_vms_" #F #NS); \
  ASC_VM_HID VT asc_vm##X##_##F##NS(VT a) ASC_VM_DEF({ \
    VW w = {0}; memcpy(&w, &a, sizeof a); w = IMPL(F)(w); \
    memcpy(&a, &w, sizeof a); return a; })
#define ASC_VM_VAR2(F, NS, VT, VW, IMPL, X, N) \
  ASC_VM_HID VT asc_vm##X##_##F##NS(VT a, VT b) \
      __asm__("_ZGV" #X "N" #N "vv_asc_vms_" #F #NS); \
  ASC_VM_HID VT asc_vm##X##_##F##NS(VT a, VT b) ASC_VM_DEF({ \
    VW w = {0}, v = {0}; memcpy(&w, &a, sizeof a); memcpy(&v, &b, sizeof b); \
    w = IMPL(F)(w, v); memcpy(&a, &w, sizeof a); return a; })
/* The variants gcc may call for the target: b (SSE), c (AVX), d (AVX2),
 * e (AVX-512); of type T (f: float, d: double), with its lane counts
 * (NF floats or ND doubles) and widest variant I. */
#define ASC_VM_ISA_f(V, F, I, X, NF, ND) V(F, f, asc_vf##NF, asc_vfw, I, X, NF)
#define ASC_VM_ISA_d(V, F, I, X, NF, ND) V(F, , asc_vd##ND, asc_vdw, I, X, ND)
#define ASC_VM_VB(V, F, T, I) ASC_VM_ISA_##T(V, F, I, b, 4, 2)
#if defined(__AVX__)
#define ASC_VM_VC(V, F, T, I) ASC_VM_ISA_##T(V, F, I, c, 8, 4)
#else
#define ASC_VM_VC(V, F, T, I)
#endif
#if defined(__AVX2__) && defined(__FMA__)
#define ASC_VM_VD(V, F, T, I) ASC_VM_ISA_##T(V, F, I, d, 8, 4)
#else
#define ASC_VM_VD(V, F, T, I)
#endif
#if defined(__AVX512F__)
#define ASC_VM_VE(V, F, T, I) ASC_VM_ISA_##T(V, F, I, e, 16, 8)
#else
#define ASC_VM_VE(V, F, T, I)
#endif
/* Unoptimised code (the quick tier) vectorises nothing: no variants. */
#ifdef __OPTIMIZE__
#define ASC_VM_VARS(V, F, T, I) \
  ASC_VM_VB(V, F, T, I) ASC_VM_VC(V, F, T, I) ASC_VM_VD(V, F, T, I) \
  ASC_VM_VE(V, F, T, I)
#else
#define ASC_VM_VARS(V, F, T, I)
#endif
/* SLEEF's widest variants of every function used. */
#define ASC_VM_PROTO1(F) \
  asc_vfw ASC_VM_F(F)(asc_vfw) __attribute__((const, nothrow)); \
  asc_vdw ASC_VM_D(F)(asc_vdw) __attribute__((const, nothrow)); \
  float ASC_VM_F_S(F)(float) __attribute__((const, nothrow)); \
  double ASC_VM_D_S(F)(double) __attribute__((const, nothrow));
#define ASC_VM_PROTO2(F) \
  asc_vfw ASC_VM_F(F)(asc_vfw, asc_vfw) __attribute__((const, nothrow)); \
  asc_vdw ASC_VM_D(F)(asc_vdw, asc_vdw) __attribute__((const, nothrow)); \
  float ASC_VM_F_S(F)(float, float) __attribute__((const, nothrow)); \
  double ASC_VM_D_S(F)(double, double) __attribute__((const, nothrow));
ASC_VM_PROTO1(sin) ASC_VM_PROTO1(cos) ASC_VM_PROTO1(tan)
ASC_VM_PROTO1(asin) ASC_VM_PROTO1(acos) ASC_VM_PROTO1(atan)
ASC_VM_PROTO1(sinh) ASC_VM_PROTO1(cosh) ASC_VM_PROTO1(tanh)
ASC_VM_PROTO1(exp) ASC_VM_PROTO1(expm1) ASC_VM_PROTO1(log)
ASC_VM_PROTO1(log2) ASC_VM_PROTO1(log10) ASC_VM_PROTO1(log1p)
ASC_VM_PROTO1(cbrt) ASC_VM_PROTO1(erf) ASC_VM_PROTO2(atan2)
ASC_VM_PROTO2(pow)
/* Where SLEEF's function misses 1 ulp or overflows early, the widest
 * variant is wrapped (asc_vmw_*, named by ASC_VM_FW / ASC_VM_DW):
 * float sinh, cosh, tanh (sinhf at 88.8 overflows; tanhf of a tiny x is
 * 1 ulp and a hair off) and log1p (log1pf(FLT_MAX) is inf) are SLEEF's
 * double function rounded once more (within 0.5 ulp and 2^-29); double
 * exp, sinh, cosh next to the overflow threshold and log1p of a huge x
 * (inf from SLEEF, finite in truth) take libm's answer in those lanes. */
#define ASC_VM_FW(F) asc_vmw_##F##f
#define ASC_VM_DW(F) asc_vmw_##F
#define ASC_VM_FW_S(F) asc_vmsw_##F##f
#define ASC_VM_DW_S(F) asc_vmsw_##F
#define ASC_VM_FVIAD(F) \
  static inline asc_vfw asc_vmw_##F##f(asc_vfw a) { \
    enum { W = sizeof(asc_vfw) / sizeof(float), H = W / 2 }; \
    float x[W]; \
    asc_vdw d; \
    memcpy(x, &a, sizeof a); \
    for (int h = 0; h < 2; h++) { \
      for (int k = 0; k < H; k++) d[k] = x[h * H + k]; \
      d = ASC_VM_D(F)(d); \
      for (int k = 0; k < H; k++) x[h * H + k] = (float)d[k]; } \
    memcpy(&a, x, sizeof a); return a; } \
  static inline float asc_vmsw_##F##f(float a) { \
    return (float)ASC_VM_D_S(F)(a); }
#define ASC_VM_DFIX(F, COND) \
  static inline asc_vdw asc_vmw_##F(asc_vdw a) { \
    enum { W = sizeof(asc_vdw) / sizeof(double) }; \
    asc_vdw r = ASC_VM_D(F)(a); \
    for (int k = 0; k < W; k++) { double x = a[k]; if (COND) r[k] = F(x); } \
    return r; } \
  static inline double asc_vmsw_##F(double x) { \
    return COND ? F(x) : ASC_VM_D_S(F)(x); }
ASC_VM_FVIAD(sinh) ASC_VM_FVIAD(cosh) ASC_VM_FVIAD(tanh) ASC_VM_FVIAD(log1p)
ASC_VM_DFIX(exp, x > 709.78) ASC_VM_DFIX(sinh, fabs(x) > 709.78)
ASC_VM_DFIX(cosh, fabs(x) > 709.78) ASC_VM_DFIX(log1p, x > 1e300)
/* asc_vm_Ff (float: ASC_VM_FN1_f, ASC_VM_FN2_f) or asc_vm_F (double:
 * ASC_VM_FN1_d, ASC_VM_FN2_d), its scalar definition asc_vms_F[f] and its
 * vector variants; I names the widest variant (ASC_VM_F / ASC_VM_D:
 * SLEEF's; ASC_VM_FW / ASC_VM_DW: the wrappers above), I##_S the scalar
 * one. */
#define ASC_VM_FN1_f(F, I) \
  ASC_VM_HID float asc_vms_##F##f(float a) \
      ASC_VM_DEF({ return I##_S(F)(a); }) \
  ASC_VM_VARS(ASC_VM_VAR1, F, f, I) \
  ASC_VM_SIMD float asc_vm_##F##f(float) __asm__("asc_vms_" #F "f");
#define ASC_VM_FN1_d(F, I) \
  ASC_VM_HID double asc_vms_##F(double a) \
      ASC_VM_DEF({ return I##_S(F)(a); }) \
  ASC_VM_VARS(ASC_VM_VAR1, F, d, I) \
  ASC_VM_SIMD double asc_vm_##F(double) __asm__("asc_vms_" #F);
#define ASC_VM_FN2_f(F, I) \
  ASC_VM_HID float asc_vms_##F##f(float a, float b) ASC_VM_DEF({ \
    return I##_S(F)(a, b); }) \
  ASC_VM_VARS(ASC_VM_VAR2, F, f, I) \
  ASC_VM_SIMD float asc_vm_##F##f(float, float) __asm__("asc_vms_" #F "f");
#define ASC_VM_FN2_d(F, I) \
  ASC_VM_HID double asc_vms_##F(double a, double b) ASC_VM_DEF({ \
    return I##_S(F)(a, b); }) \
  ASC_VM_VARS(ASC_VM_VAR2, F, d, I) \
  ASC_VM_SIMD double asc_vm_##F(double, double) __asm__("asc_vms_" #F);
#else
#define ASC_VM_FN1_f(F, I) \
  static inline float asc_vm_##F##f(float a) { return F##f(a); }
#define ASC_VM_FN1_d(F, I) \
  static inline double asc_vm_##F(double a) { return F(a); }
#define ASC_VM_FN2_f(F, I) \
  static inline float asc_vm_##F##f(float a, float b) { return F##f(a, b); }
#define ASC_VM_FN2_d(F, I) \
  static inline double asc_vm_##F(double a, double b) { return F(a, b); }
#endif
