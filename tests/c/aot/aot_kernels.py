# Kernels compiled ahead of time for test_aot.c (CMakeLists.txt runs ascc
# on this file).  vadd's signatures come from the lines below, axpy's from
# --signature on the command line.
import asc

# asc: signature vadd(f32[:], f32[:], f32[:])
# asc: signature vadd(f64[::1], f64[::1], f64[::1])


@asc.kernel
def vadd(x, y, out):
    for i in asc.prange(out.shape[0]):
        out[i] = x[i] + y[i]


@asc.kernel
def axpy(a, x, y):
    for i in range(y.shape[0]):
        y[i] = a * x[i] + y[i]
