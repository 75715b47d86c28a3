/*
 * The benchmark kernels hand-written in C: the reference the asc kernels
 * (bench/kernels/suite.py) are measured against.  The loops are the same
 * as the Python text; bench/CMakeLists.txt builds this file twice with the
 * flags libasc gives the C compiler for kernels (src/jit/cc.c):
 * without OpenMP (bench_ref_serial.so) and with -fopenmp
 * (bench_ref_omp.so), where PARALLEL_FOR splits the outer loop like
 * asc.prange.  Called from bench/suite.py through ctypes.
 *
 * Arrays are C-contiguous float32 unless named otherwise; `restrict`
 * because generated kernels say it too.
 */
#include <math.h>
#include <stdint.h>

#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#define PARALLEL_FOR_SUM_S _Pragma("omp parallel for schedule(static) reduction(+:s)")
#define ATOMIC _Pragma("omp atomic")
#else
#define PARALLEL_FOR
#define PARALLEL_FOR_SUM_S
#define ATOMIC
#endif

#define EXPORT __attribute__((visibility("default")))

EXPORT void ref_vadd(const float *restrict a, const float *restrict b,
                     float *restrict c, int64_t n) {
  PARALLEL_FOR
  for (int64_t i = 0; i < n; i++)
    c[i] = a[i] + b[i];
}

/* STREAM's triad (a = b + s*c) on float32: the machine's sustainable
 * memory bandwidth that vector add is compared with. */
EXPORT void ref_triad(float *restrict a, const float *restrict b,
                      const float *restrict c, float s, int64_t n) {
  PARALLEL_FOR
  for (int64_t i = 0; i < n; i++)
    a[i] = b[i] + s * c[i];
}

/* alpha arrives as a double, as a Python float does; the product is
 * float32 because a weak Python scalar takes the array's type. */
EXPORT void ref_saxpy(double alpha, const float *restrict x,
                      const float *restrict y, float *restrict out,
                      int64_t n) {
  float a = (float)alpha;
  PARALLEL_FOR
  for (int64_t i = 0; i < n; i++)
    out[i] = a * x[i] + y[i];
}

/* c[n,m] = a[n,k] @ b[k,m], the textbook i-j-p loop with a scalar sum. */
EXPORT void ref_matmul(const float *restrict a, const float *restrict b,
                       float *restrict c, int64_t n, int64_t k, int64_t m) {
  PARALLEL_FOR
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; p++)
        sum += a[i * k + p] * b[p * m + j];
      c[i * m + j] = sum;
    }
}

/* The seed's conv2d (valid padding, stride 1), parallel over batch x
 * output channels. */
EXPORT void ref_conv2d(const float *restrict in, const float *restrict w,
                       float *restrict out, int64_t batch, int64_t cin,
                       int64_t h, int64_t wd, int64_t cout, int64_t kh,
                       int64_t kw) {
  int64_t oh_n = h - kh + 1, ow_n = wd - kw + 1;
  PARALLEL_FOR
  for (int64_t bo = 0; bo < batch * cout; bo++) {
    int64_t b = bo / cout, oc = bo % cout;
    for (int64_t oh = 0; oh < oh_n; oh++)
      for (int64_t ow = 0; ow < ow_n; ow++) {
        float sum = 0.0f;
        for (int64_t ic = 0; ic < cin; ic++)
          for (int64_t y = 0; y < kh; y++)
            for (int64_t x = 0; x < kw; x++)
              sum += in[((b * cin + ic) * h + oh + y) * wd + ow + x] *
                     w[((oc * cin + ic) * kh + y) * kw + x];
        out[((b * cout + oc) * oh_n + oh) * ow_n + ow] = sum;
      }
  }
}

EXPORT void ref_softmax(const float *restrict x, float *restrict out,
                        int64_t rows, int64_t cols) {
  PARALLEL_FOR
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *o = out + r * cols;
    float m = xr[0], s = 0.0f;
    for (int64_t j = 1; j < cols; j++)
      m = fmaxf(m, xr[j]);
    for (int64_t j = 0; j < cols; j++) {
      float e = expf(xr[j] - m);
      o[j] = e;
      s += e;
    }
    for (int64_t j = 0; j < cols; j++)
      o[j] = o[j] / s;
  }
}

/* 256 bins over [0, 1); one atomic increment per value in the OpenMP
 * build, as the asc kernel's asc.atomic_add. */
EXPORT void ref_histogram(const float *restrict x, int64_t *restrict hist,
                          int64_t n) {
  PARALLEL_FOR
  for (int64_t i = 0; i < n; i++) {
    int64_t bin = (int64_t)(x[i] * 256.0f);
    if (bin > 255)
      bin = 255;
    ATOMIC
    hist[bin] += 1;
  }
}

EXPORT float ref_dot(const float *restrict a, const float *restrict b,
                     int64_t n) {
  float s = 0.0f;
  PARALLEL_FOR_SUM_S
  for (int64_t i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

/* The naive transpose, b (m x n) = a (n x m)^T, the loops as written. */
EXPORT void ref_transpose(const float *restrict a, float *restrict b,
                          int64_t n, int64_t m) {
  PARALLEL_FOR
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++)
      b[j * n + i] = a[i * m + j];
}

/* Jacobi 2-D (PolyBench's jacobi-2d): T steps of two sweeps, a -> b and
 * b -> a, float64, n x n; the time loop outside, each sweep's row loop
 * split over the threads (bench/stencil.py). */
EXPORT void ref_jacobi2d(double *restrict a, double *restrict b, int64_t n,
                         int64_t T) {
  for (int64_t t = 0; t < T; t++) {
    PARALLEL_FOR
    for (int64_t i = 1; i < n - 1; i++)
      for (int64_t j = 1; j < n - 1; j++)
        b[i * n + j] = 0.2 * ((((a[i * n + j] + a[i * n + j - 1]) +
                                a[i * n + j + 1]) + a[(i + 1) * n + j]) +
                              a[(i - 1) * n + j]);
    PARALLEL_FOR
    for (int64_t i = 1; i < n - 1; i++)
      for (int64_t j = 1; j < n - 1; j++)
        a[i * n + j] = 0.2 * ((((b[i * n + j] + b[i * n + j - 1]) +
                                b[i * n + j + 1]) + b[(i + 1) * n + j]) +
                              b[(i - 1) * n + j]);
  }
}

/* Heat 3-D (PolyBench's heat-3d): T steps of two sweeps, float64,
 * n x n x n, as above. */
#define HEAT_AT(x, i, j, k) x[((i) * n + (j)) * n + (k)]
#define HEAT(x, i, j, k)                                                   \
  ((0.125 * ((HEAT_AT(x, i + 1, j, k) - 2.0 * HEAT_AT(x, i, j, k)) +       \
             HEAT_AT(x, i - 1, j, k)) +                                    \
    0.125 * ((HEAT_AT(x, i, j + 1, k) - 2.0 * HEAT_AT(x, i, j, k)) +       \
             HEAT_AT(x, i, j - 1, k))) +                                   \
   0.125 * ((HEAT_AT(x, i, j, k + 1) - 2.0 * HEAT_AT(x, i, j, k)) +        \
            HEAT_AT(x, i, j, k - 1)) +                                     \
   HEAT_AT(x, i, j, k))
EXPORT void ref_heat3d(double *restrict a, double *restrict b, int64_t n,
                       int64_t T) {
  for (int64_t t = 0; t < T; t++) {
    PARALLEL_FOR
    for (int64_t i = 1; i < n - 1; i++)
      for (int64_t j = 1; j < n - 1; j++)
        for (int64_t k = 1; k < n - 1; k++)
          HEAT_AT(b, i, j, k) = HEAT(a, i, j, k);
    PARALLEL_FOR
    for (int64_t i = 1; i < n - 1; i++)
      for (int64_t j = 1; j < n - 1; j++)
        for (int64_t k = 1; k < n - 1; k++)
          HEAT_AT(a, i, j, k) = HEAT(b, i, j, k);
  }
}
