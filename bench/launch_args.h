/*
 * The launch with arguments that bench/launch_latency (`args`) and
 * bench/launch_count (`args`, `text`) measure: three float32 vectors of
 * one element and a weak int64 scalar, for the hand-written empty_args of
 * bench_kernels.so or for this kernel from Python text, which does nothing
 * for them either.
 */
#ifndef ASC_BENCH_LAUNCH_ARGS_H
#define ASC_BENCH_LAUNCH_ARGS_H

#include "asc/asc.h"

static const char bench_text_kernel[] =
    "import asc\n"
    "@asc.kernel\n"
    "def empty_text(a, b, c, s):\n"
    "    if s < 0:\n"
    "        c[0] = a[0] + b[0]\n";

typedef struct bench_args {
  float va[1], vb[1], vc[1];
  ascTensor ta, tb, tc;
  ascScalar sc;
  void *args[4];
} bench_args;

static inline void bench_args_init(bench_args *b) {
  ascTensor t = {NULL, ascFloat32, 1, {1}, {1}};
  ascScalar s = {ascInt64, 1, {.i = 1}};
  b->va[0] = 1;
  b->vb[0] = 2;
  b->vc[0] = 0;
  b->ta = b->tb = b->tc = t;
  b->ta.data = b->va;
  b->tb.data = b->vb;
  b->tc.data = b->vc;
  b->sc = s;
  b->args[0] = &b->ta;
  b->args[1] = &b->tb;
  b->args[2] = &b->tc;
  b->args[3] = &b->sc;
}

#endif /* ASC_BENCH_LAUNCH_ARGS_H */
