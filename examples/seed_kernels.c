/*
 * The main example: compile the PyAsc article's two kernels from their
 * Python text, run them from C on every core, check them against plain C
 * loops, and time them.
 *
 *   build/examples/seed_kernels [path/to/seed.py]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asc/asc.h"

#define CHECK(call)                                                          \
  do {                                                                       \
    ascError_t e_ = (call);                                                  \
    if (e_ != ascSuccess) {                                                  \
      fprintf(stderr, "%s:%d: %s failed: %s\n%s\n", __FILE__, __LINE__,     \
              #call, ascGetErrorName(e_), ascGetLastErrorMessage());         \
      return 1;                                                              \
    }                                                                        \
  } while (0)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static ascTensor tensor(float *data, int ndim, const int64_t *shape) {
  ascTensor t;
  int64_t stride = 1;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = ascFloat32;
  t.ndim = ndim;
  for (int i = ndim - 1; i >= 0; i--) {
    t.shape[i] = shape[i];
    t.strides[i] = stride;
    stride *= shape[i];
  }
  return t;
}

/* The same loop nest, in C, with the sizes known only at run time as they
 * are to the kernel (noinline: no constant propagation from main). */
__attribute__((noinline)) static void conv2d_ref(const float *in, const float *w, float *out, int B,
                       int C, int H, int W, int O, int K) {
  int OH = H - K + 1, OW = W - K + 1;
  for (int b = 0; b < B; b++)
    for (int oc = 0; oc < O; oc++)
      for (int oh = 0; oh < OH; oh++)
        for (int ow = 0; ow < OW; ow++) {
          float s = 0.0f;
          for (int ic = 0; ic < C; ic++)
            for (int kh = 0; kh < K; kh++)
              for (int kw = 0; kw < K; kw++)
                s += in[((b * C + ic) * H + oh + kh) * W + ow + kw] *
                     w[((oc * C + ic) * K + kh) * K + kw];
          out[((b * O + oc) * OH + oh) * OW + ow] = s;
        }
}

static float max_rel_err(const float *a, const float *b, size_t n) {
  float m = 0.0f;
  for (size_t i = 0; i < n; i++) {
    float d = fabsf(a[i] - b[i]) / (fabsf(b[i]) > 1.0f ? fabsf(b[i]) : 1.0f);
    if (d > m)
      m = d;
  }
  return m;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : ASC_SOURCE_DIR "/examples/kernels/seed.py";
  enum { B = 1, C = 16, H = 64, W = 64, O = 32, K = 3 };
  enum { OH = H - K + 1, OW = W - K + 1, N = 1 << 20 };
  ascDeviceProp prop;
  ascModule_t mod;
  ascKernel_t conv, add;
  double t0, t_compile, t_conv, t_ref;
  int ok = 1;

  CHECK(ascGetDeviceProperties(&prop, 0));
  printf("device: %s, %d cores\n", prop.name, prop.cores);

  t0 = now_ms();
  CHECK(ascModuleLoadPythonFile(&mod, path, NULL));
  CHECK(ascModuleGetKernel(&conv, mod, "conv2d"));
  CHECK(ascModuleGetKernel(&add, mod, "parallel_add"));
  t_compile = now_ms() - t0;

  /* conv2d */
  {
    int64_t sin[4] = {B, C, H, W}, sw[4] = {O, C, K, K}, so[4] = {B, O, OH, OW};
    size_t nin = (size_t)B * C * H * W, nw = (size_t)O * C * K * K;
    size_t nout = (size_t)B * O * OH * OW;
    float *in = malloc(nin * sizeof *in), *w = malloc(nw * sizeof *w);
    float *out = calloc(nout, sizeof *out), *ref = calloc(nout, sizeof *ref);
    ascTensor ti, tw, to;
    void *args[3];
    float err;

    if (!in || !w || !out || !ref)
      return 1;
    srand(1);
    for (size_t i = 0; i < nin; i++)
      in[i] = (float)rand() / RAND_MAX - 0.5f;
    for (size_t i = 0; i < nw; i++)
      w[i] = (float)rand() / RAND_MAX - 0.5f;
    ti = tensor(in, 4, sin);
    tw = tensor(w, 4, sw);
    to = tensor(out, 4, so);
    args[0] = &ti;
    args[1] = &tw;
    args[2] = &to;
    CHECK(ascLaunchKernel(conv, 1, args, NULL)); /* specialise + warm up */
    CHECK(ascDeviceSynchronize());
    t0 = now_ms();
    CHECK(ascLaunchKernel(conv, 1, args, NULL));
    CHECK(ascDeviceSynchronize());
    t_conv = now_ms() - t0;
    t0 = now_ms();
    conv2d_ref(in, w, ref, B, C, H, W, O, K);
    t_ref = now_ms() - t0;
    err = max_rel_err(out, ref, nout);
    printf("conv2d %dx%dx%dx%d * %dx%dx%dx%d: max rel err %.2e %s  "
           "(libasc %.3f ms, serial C %.3f ms)\n",
           B, C, H, W, O, C, K, K, err, err < 1e-4f ? "OK" : "MISMATCH",
           t_conv, t_ref);
    ok &= err < 1e-4f;
    free(in), free(w), free(out), free(ref);
  }

  /* parallel_add */
  {
    int64_t n = N;
    float *a, *b, *c;
    ascTensor ta, tb, tc;
    void *args[3];
    size_t bad = 0;

    CHECK(ascMalloc((void **)&a, N * sizeof(float)));
    CHECK(ascMalloc((void **)&b, N * sizeof(float)));
    CHECK(ascMalloc((void **)&c, N * sizeof(float)));
    for (int i = 0; i < N; i++) {
      a[i] = (float)i;
      b[i] = 0.5f * (float)i;
    }
    ta = tensor(a, 1, &n);
    tb = tensor(b, 1, &n);
    tc = tensor(c, 1, &n);
    args[0] = &ta;
    args[1] = &tb;
    args[2] = &tc;
    CHECK(ascLaunchKernel(add, 1, args, NULL));
    CHECK(ascDeviceSynchronize());
    t0 = now_ms();
    CHECK(ascLaunchKernel(add, 1, args, NULL));
    CHECK(ascDeviceSynchronize());
    t_conv = now_ms() - t0;
    for (int i = 0; i < N; i++)
      bad += c[i] != a[i] + b[i];
    printf("parallel_add n=%d: %zu mismatches %s  (libasc %.3f ms)\n", N, bad,
           bad == 0 ? "OK" : "MISMATCH", t_conv);
    ok &= bad == 0;
    CHECK(ascFree(a));
    CHECK(ascFree(b));
    CHECK(ascFree(c));
  }

  printf("module load (compile or cache hit): %.1f ms\n", t_compile);
  CHECK(ascModuleUnload(mod));
  printf("%s\n", ok ? "result check: PASS" : "result check: FAIL");
  return ok ? 0 : 1;
}
