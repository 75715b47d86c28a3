/*
 * The trace hooks every layer may call (jit/ records its compiles, the
 * runtime its streams): a relaxed flag test, and records appended to the
 * calling thread's own buffer.  The recorder and the clock behind them are
 * base's (trace.c, trace_rec.h); the trace session that starts them and
 * turns the records into a file is the runtime's (runtime/trace.c,
 * docs/tracing.md).
 */
#ifndef ASC_BASE_TRACE_H
#define ASC_BASE_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Hidden: libasc's own, so a hook reads the flag straight from its
 * address (`mov asc__trace_on(%rip)`).  Declared with default visibility,
 * PIC code fetched the address from the GOT first (relaxed by the linker
 * to a `lea`) and, in loops, kept it in a callee-saved register: one more
 * instruction per hook, and a push and a pop even where no hook ran
 * (docs/tracing.md "Tracing off"). */
#define ASC__TRACE_HIDDEN __attribute__((visibility("hidden")))

extern ASC__TRACE_HIDDEN atomic_int asc__trace_on;

/* ASC_NO_TRACE_HOOKS (CMake -DASC_TRACE_HOOKS=OFF) compiles every hook
 * out: a build that exists only to measure what the hooks cost while
 * tracing is off (bench/trace_off_cost.sh); it records nothing. */
static inline bool asc__tracing(void) {
#ifdef ASC_NO_TRACE_HOOKS
  return false;
#else
  return __builtin_expect(
      atomic_load_explicit(&asc__trace_on, memory_order_relaxed) != 0, 0);
#endif
}

/* Runs call only while tracing. */
#define ASC_TRACE(call)                                                      \
  do {                                                                       \
    if (asc__tracing())                                                      \
      call;                                                                  \
  } while (0)

/* The trace clock, in ticks that the flush converts to nanoseconds
 * (base/trace.c, docs/tracing.md "Clock"): the TSC (`lfence; rdtsc`)
 * on x86-64 when it is invariant and the kernel's clocksource, else
 * CLOCK_MONOTONIC in ns.  asc__trace_clk: 0 not decided yet, 1 monotonic,
 * 2 TSC; decided once, before the first session, and never changed. */
extern ASC__TRACE_HIDDEN atomic_int asc__trace_clk;
uint64_t asc__trace_now_slow(void);
static inline uint64_t asc__trace_now(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_expect(atomic_load_explicit(&asc__trace_clk,
                                            memory_order_relaxed) == 2,
                       1)) {
    uint32_t lo, hi;
    /* lfence: the read waits for the instructions before it (the atomic
     * that counted a block done), as the kernel's rdtsc_ordered. */
    __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
  }
#endif
  return asc__trace_now_slow();
}

/* asc__trace_now() while tracing, else 0: a span's start, which its end
 * hook ignores when 0. */
static inline uint64_t asc__trace_clock(void) {
  return asc__tracing() ? asc__trace_now() : 0;
}

/* Names the calling thread's track ("worker 3"); cheap, call it once at
 * thread start whether tracing or not. */
void asc__trace_thread_name(const char *prefix, int n);

/* A span [t0, now] on the calling thread's track, in category cat
 * ("compile", "copy", ...).  detail, if not NULL, becomes args.detail;
 * bytes, if not 0, args.bytes.  No-op when t0 == 0. */
void asc__trace_span(const char *cat, const char *name, const char *detail,
                     uint64_t bytes, uint64_t t0);
/* A zero-length mark on the calling thread's track. */
void asc__trace_mark(const char *cat, const char *name, const char *detail);
/* A pool allocation or free of `bytes` from pool, with the pool's
 * reserved and used bytes after it (a counter track per pool). */
void asc__trace_pool(const char *name, const void *pool, uint64_t bytes,
                     uint64_t reserved, uint64_t used);

/* Remembers kernel desc's specialisation signature for launch spans. */
void asc__trace_sig(const void *desc, const char *sig);

#endif /* ASC_BASE_TRACE_H */
